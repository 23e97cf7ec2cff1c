//! The sqllogictest file format: records separated by blank lines (see
//! shared/corpus/sqllogictest/README.md and upstream's about.wiki).
//!
//! ```text
//! skipif mysql            conditions, any number, before a record
//! statement ok|error      then the SQL (any number of lines, maybe several statements)
//! query <types> [nosort|rowsort|valuesort] [label]
//! <SQL lines>
//! ----                    optional; without it the results are not checked
//! <one value per line>    or the single line `N values hashing to <md5>`
//! hash-threshold N
//! halt
//! ```
//!
//! Lines starting with `#` between records are comments. Parsing never fails as a whole: a
//! record it cannot read becomes `Record::Invalid`, which the runner counts as a failure, so
//! a malformed file can never pass silently.

/// `skipif`/`onlyif` before a record.
#[derive(Clone, Debug, PartialEq)]
pub enum Condition {
    SkipIf(String),
    OnlyIf(String),
}

/// How a query's rendered values are ordered before comparison.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SortMode {
    NoSort,
    /// Rows ordered by their values compared one by one with `strcmp`.
    RowSort,
    /// Every value ordered on its own with `strcmp`.
    ValueSort,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    Statement {
        expect_ok: bool,
        sql: String,
    },
    Query {
        types: String,
        sort: SortMode,
        label: Option<String>,
        sql: String,
        /// `None` when the record has no `----` section.
        expected: Option<Vec<String>>,
    },
    HashThreshold(usize),
    Halt,
    Invalid(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// 1-based line of the record's command (after its conditions).
    pub line: usize,
    pub conditions: Vec<Condition>,
    pub command: Command,
}

impl Record {
    /// Whether an engine answering to `engine_name` runs this record.
    pub fn applies_to(&self, engine_name: &str) -> bool {
        self.conditions.iter().all(|c| match c {
            Condition::SkipIf(e) => e != engine_name,
            Condition::OnlyIf(e) => e == engine_name,
        })
    }

    /// Whether the record is a test that counts as passed, failed or skipped.
    pub fn is_test(&self) -> bool {
        matches!(
            self.command,
            Command::Statement { .. } | Command::Query { .. } | Command::Invalid(_)
        )
    }
}

/// Splits a file into records.
pub fn parse(text: &str) -> Vec<Record> {
    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let mut records = Vec::new();
    let mut i = 0;
    let mut conditions = Vec::new();
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            i += 1;
            continue;
        }
        let words: Vec<&str> = trimmed.split_whitespace().collect();
        let line_no = i + 1;
        i += 1;
        let command = match words[0] {
            "skipif" | "onlyif" => {
                let engine = words.get(1).copied().unwrap_or("").to_string();
                conditions.push(if words[0] == "skipif" {
                    Condition::SkipIf(engine)
                } else {
                    Condition::OnlyIf(engine)
                });
                continue;
            }
            "statement" => {
                let sql = take_until(&lines, &mut i, |l| l.trim().is_empty());
                match words.get(1).copied() {
                    Some("ok") => Command::Statement {
                        expect_ok: true,
                        sql: sql.join("\n"),
                    },
                    Some("error") => Command::Statement {
                        expect_ok: false,
                        sql: sql.join("\n"),
                    },
                    other => Command::Invalid(format!(
                        "statement must be `ok` or `error`, not {:?}",
                        other.unwrap_or("")
                    )),
                }
            }
            "query" => {
                let sql = take_until(&lines, &mut i, |l| l.trim().is_empty() || l == "----");
                let expected = if i < lines.len() && lines[i] == "----" {
                    i += 1;
                    let values = take_until(&lines, &mut i, |l| l.trim().is_empty());
                    Some(values.into_iter().map(str::to_string).collect())
                } else {
                    None
                };
                query_command(&words, sql.join("\n"), expected)
            }
            "hash-threshold" => match words.get(1).and_then(|w| w.parse().ok()) {
                Some(n) => Command::HashThreshold(n),
                None => Command::Invalid("hash-threshold needs a number".to_string()),
            },
            "halt" => Command::Halt,
            other => {
                // Skip the rest of the unknown record so its lines are not read as records.
                take_until(&lines, &mut i, |l| l.trim().is_empty());
                Command::Invalid(format!("unknown record type {other:?}"))
            }
        };
        records.push(Record {
            line: line_no,
            conditions: std::mem::take(&mut conditions),
            command,
        });
    }
    records
}

/// Lines from `*i` up to (not including) the first that `stop` accepts; `*i` ends on it.
fn take_until<'a>(lines: &[&'a str], i: &mut usize, stop: impl Fn(&str) -> bool) -> Vec<&'a str> {
    let start = *i;
    while *i < lines.len() && !stop(lines[*i]) {
        *i += 1;
    }
    lines[start..*i].to_vec()
}

fn query_command(words: &[&str], sql: String, expected: Option<Vec<String>>) -> Command {
    let Some(types) = words.get(1) else {
        return Command::Invalid("query needs its column types".to_string());
    };
    let (sort, label_at) = match words.get(2).copied() {
        Some("nosort") => (SortMode::NoSort, 3),
        Some("rowsort") => (SortMode::RowSort, 3),
        Some("valuesort") => (SortMode::ValueSort, 3),
        _ => (SortMode::NoSort, 2),
    };
    Command::Query {
        types: types.to_string(),
        sort,
        label: words.get(label_at).map(|s| s.to_string()),
        sql,
        expected,
    }
}
