//! Runs parsed sqllogictest records against an engine and scores them, with the reference
//! harness's rules (src/sqllogictest.c and slt_sqlite.c upstream; the corpus README):
//!
//! - values are rendered by the declared type letter, not the runtime type: `I` through
//!   `sqlite3_column_int`, `R` as SQLite's `%.3f`, `T` as the text with `(empty)` for `''`
//!   and `@` for each byte outside 0x20..=0x7E; NULL is `NULL` whatever the letter;
//! - sorting (`rowsort`, `valuesort`) compares rendered strings bytewise;
//! - more than `hash-threshold` values (default 8; 0 disables) compare as the one line
//!   `N values hashing to MD5`, MD5 over each sorted value followed by `\n`;
//! - a query whose labels match must produce the same hash as the first one with that label;
//! - a failed step keeps the rows before it; only a prepare error fails a query.

use super::parse::{Command, Record, SortMode};
use crate::engine::{Engine, EngineError};
use crate::value::Value;
use md5::{Digest, Md5};
use parlite_cli::numfmt;
use std::collections::HashMap;

/// The engine name `skipif`/`onlyif` test. Every engine answers as `sqlite`: the corpus is
/// SQLite's, and an engine that claims to be SQLite must pass what SQLite passes.
pub const CONDITION_ENGINE_NAME: &str = "sqlite";

/// The C harness's `DEFAULT_HASH_THRESHOLD`.
pub const DEFAULT_HASH_THRESHOLD: usize = 8;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub passed: usize,
    pub failed: usize,
    pub skipped: usize,
}

impl Tally {
    pub fn add(&mut self, other: Tally) {
        self.passed += other.passed;
        self.failed += other.failed;
        self.skipped += other.skipped;
    }
}

impl std::fmt::Display for Tally {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} passed, {} failed, {} skipped",
            self.passed, self.failed, self.skipped
        )
    }
}

/// One failed record, with what it expected and what the engine gave.
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    pub line: usize,
    pub sql: String,
    pub expected: Vec<String>,
    pub got: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct FileOutcome {
    pub tally: Tally,
    pub failures: Vec<Failure>,
}

/// Runs one engine call, turning a panic into an error so that one crashing record fails
/// alone instead of ending the whole corpus run (an engine under development panics).
fn guarded<T>(f: impl FnOnce() -> Result<T, EngineError>) -> Result<T, EngineError> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a non-string payload".to_string());
            Err(EngineError {
                code: 1,
                message: format!("engine panicked: {what}"),
            })
        }
    }
}

/// Renders one value as the harness prints it for `type_letter`.
pub fn render(value: &Value, type_letter: u8) -> String {
    match (value, type_letter) {
        (Value::Null, _) => "NULL".to_string(),
        (v, b'I') => v.as_i32().to_string(),
        (v, b'R') => numfmt::format_fixed(v.as_f64(), 3),
        (v, _) => {
            let text = v.to_text();
            if text.is_empty() {
                "(empty)".to_string()
            } else {
                text.iter()
                    .map(|&b| {
                        if (0x20..=0x7e).contains(&b) {
                            b as char
                        } else {
                            '@'
                        }
                    })
                    .collect()
            }
        }
    }
}

/// MD5 over each value followed by `\n`, in lowercase hex.
pub fn hash_values(values: &[String]) -> String {
    let mut md5 = Md5::new();
    for v in values {
        md5.update(v.as_bytes());
        md5.update(b"\n");
    }
    md5.finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<String>()
}

/// Orders rendered row-major `values` of `column_count` columns as `sort` asks.
pub fn sort_values(values: &mut Vec<String>, column_count: usize, sort: SortMode) {
    match sort {
        SortMode::NoSort => {}
        SortMode::ValueSort => values.sort_unstable(),
        SortMode::RowSort => {
            if column_count == 0 {
                return;
            }
            // Vec<String>'s order is the element-by-element strcmp the harness uses.
            let mut rows: Vec<Vec<String>> = values
                .chunks(column_count)
                .map(<[String]>::to_vec)
                .collect();
            rows.sort();
            *values = rows.concat();
        }
    }
}

/// Runs the records of one file on `engine` (which should start empty).
pub fn run_records(engine: &mut dyn Engine, records: &[Record]) -> FileOutcome {
    let mut out = FileOutcome::default();
    run_records_observed(engine, records, &mut |verdict| match verdict {
        Verdict::Passed => out.tally.passed += 1,
        Verdict::Skipped => out.tally.skipped += 1,
        Verdict::Failed(f) => {
            out.tally.failed += 1;
            out.failures.push(f);
        }
    });
    out
}

/// The result of one test record.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    Passed,
    Failed(Failure),
    Skipped,
}

/// Runs the records of one file, reporting each test record's verdict as soon as it is
/// known, in file order (a supervising process uses this to see how far a run got).
pub fn run_records_observed(
    engine: &mut dyn Engine,
    records: &[Record],
    observe: &mut dyn FnMut(Verdict),
) {
    let mut hash_threshold = DEFAULT_HASH_THRESHOLD;
    let mut labels: HashMap<String, String> = HashMap::new();
    for record in records {
        if !record.applies_to(CONDITION_ENGINE_NAME) {
            if record.is_test() {
                observe(Verdict::Skipped);
            }
            continue;
        }
        let failure = match &record.command {
            Command::HashThreshold(n) => {
                hash_threshold = *n;
                continue;
            }
            Command::Halt => break,
            Command::Invalid(message) => Some(Failure {
                line: record.line,
                sql: String::new(),
                expected: vec!["a valid record".to_string()],
                got: vec![message.clone()],
            }),
            Command::Statement { expect_ok, sql } => {
                let result = guarded(|| engine.execute_batch(sql));
                if result.is_ok() == *expect_ok {
                    None
                } else {
                    Some(Failure {
                        line: record.line,
                        sql: sql.clone(),
                        expected: vec![if *expect_ok { "ok" } else { "error" }.to_string()],
                        got: vec![match result {
                            Ok(()) => "ok".to_string(),
                            Err(e) => format!("error: {e}"),
                        }],
                    })
                }
            }
            Command::Query {
                types,
                sort,
                label,
                sql,
                expected,
            } => run_query(
                engine,
                record.line,
                QuerySpec {
                    types,
                    sort: *sort,
                    label: label.as_deref(),
                    sql,
                    expected: expected.as_deref(),
                },
                hash_threshold,
                &mut labels,
            ),
        };
        observe(match failure {
            None => Verdict::Passed,
            Some(f) => Verdict::Failed(f),
        });
    }
}

struct QuerySpec<'a> {
    types: &'a str,
    sort: SortMode,
    label: Option<&'a str>,
    sql: &'a str,
    expected: Option<&'a [String]>,
}

fn run_query(
    engine: &mut dyn Engine,
    line: usize,
    q: QuerySpec<'_>,
    hash_threshold: usize,
    labels: &mut HashMap<String, String>,
) -> Option<Failure> {
    let fail = |expected: Vec<String>, got: Vec<String>| {
        Some(Failure {
            line,
            sql: q.sql.to_string(),
            expected,
            got,
        })
    };
    let result = match guarded(|| engine.query(q.sql)) {
        Ok(r) => r,
        Err(e) => {
            let expected = q.expected.map(<[String]>::to_vec).unwrap_or_default();
            return fail(expected, vec![format!("prepare error: {e}")]);
        }
    };
    let types = q.types.as_bytes();
    if result.column_count != types.len() && !result.rows.is_empty() {
        return fail(
            vec![format!("{} columns", types.len())],
            vec![format!("{} columns", result.column_count)],
        );
    }
    let mut values: Vec<String> = result
        .rows
        .iter()
        .flat_map(|row| {
            row.iter()
                .enumerate()
                .map(|(i, v)| render(v, types.get(i).copied().unwrap_or(b'T')))
        })
        .collect();
    sort_values(&mut values, result.column_count, q.sort);
    let hashed = || {
        format!(
            "{} values hashing to {}",
            values.len(),
            hash_values(&values)
        )
    };
    if let Some(label) = q.label {
        let summary = hashed();
        match labels.get(label) {
            Some(first) if *first != summary => {
                return fail(vec![first.clone()], vec![summary]);
            }
            Some(_) => {}
            None => {
                labels.insert(label.to_string(), summary);
            }
        }
    }
    // Without a `----` section only preparing and stepping are checked.
    let expected = q.expected?;
    let got = if hash_threshold > 0 && values.len() > hash_threshold {
        vec![hashed()]
    } else {
        values
    };
    if got.as_slice() == expected {
        None
    } else {
        fail(expected.to_vec(), got)
    }
}
