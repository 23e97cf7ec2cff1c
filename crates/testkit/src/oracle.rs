//! Differential testing against SQLite: run the same SQL on a reference engine (SQLite) and
//! a candidate (parlite), statement by statement, and list where they disagree: different
//! rows (values and their runtime types), or a different error class (primary result code).
//! Error messages are not compared; SQLite's wording is matched by other tests.

use crate::engine::{Engine, QueryRows};
use crate::value::Value;
use parlite_cli::complete::is_complete;

/// What one statement did, in the terms compared.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Rows returned; `step_error` is the primary code of an error after those rows.
    Rows {
        rows: Vec<Vec<Value>>,
        step_error: Option<i32>,
    },
    /// Preparing failed with this primary code.
    PrepareError(i32),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    pub sql: String,
    pub reference: Outcome,
    pub candidate: Outcome,
}

/// Splits SQL text into single statements at each `;` that completes one
/// (`sqlite3_complete`), so `;` inside strings, comments and trigger bodies stays put.
/// Text after the last complete statement is returned as a last statement if not blank.
pub fn split_statements(sql: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, _) in sql.match_indices(';') {
        let candidate = &sql[start..=i];
        if is_complete(candidate) {
            if !candidate.trim().trim_end_matches(';').trim().is_empty() {
                out.push(candidate.trim().to_string());
            }
            start = i + 1;
        }
    }
    let rest = sql[start..].trim();
    if !rest.is_empty() {
        out.push(rest.to_string());
    }
    out
}

fn outcome(engine: &mut dyn Engine, sql: &str) -> Outcome {
    match engine.query(sql) {
        Ok(QueryRows {
            rows, step_error, ..
        }) => Outcome::Rows {
            rows,
            step_error: step_error.map(|e| e.code),
        },
        Err(e) => Outcome::PrepareError(e.code),
    }
}

/// Runs every statement of `sql` on both engines (which should start in the same state)
/// and returns the statements whose outcomes differ.
pub fn compare(
    reference: &mut dyn Engine,
    candidate: &mut dyn Engine,
    sql: &str,
) -> Vec<Difference> {
    let mut out = Vec::new();
    for stmt in split_statements(sql) {
        let r = outcome(reference, &stmt);
        let c = outcome(candidate, &stmt);
        if r != c {
            out.push(Difference {
                sql: stmt,
                reference: r,
                candidate: c,
            });
        }
    }
    out
}
