//! The contract between the test tools and a database engine: run a batch of statements,
//! run one query and collect its typed rows, run a script statement by statement.
//!
//! Engines report errors as SQLite words them; the tools never inspect the message beyond
//! printing it, only whether and when (prepare or step) an error happened.

use crate::value::Value;
use std::fmt;

/// An engine's error: SQLite's primary result code and its message.
#[derive(Clone, Debug, PartialEq)]
pub struct EngineError {
    pub code: i32,
    pub message: String,
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for EngineError {}

/// The rows a query produced. A query that fails while stepping keeps the rows it returned
/// before the failure (the sqllogictest harness compares those) and records the error.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueryRows {
    pub column_count: usize,
    pub rows: Vec<Vec<Value>>,
    pub step_error: Option<EngineError>,
}

pub trait Engine {
    /// The engine's name as `--engine` spells it.
    fn name(&self) -> &'static str;

    /// Runs every statement of `sql` in order, discarding rows, stopping at the first error
    /// (`sqlite3_exec` without a callback).
    fn execute_batch(&mut self, sql: &str) -> Result<(), EngineError>;

    /// Prepares the first statement of `sql` (the rest is ignored, as `sqlite3_prepare_v2`
    /// ignores its tail) and steps it to the end. `Err` only when preparing fails.
    fn query(&mut self, sql: &str) -> Result<QueryRows, EngineError>;

    /// Runs every statement of `sql` in order, handing each row to `on_row` as it is
    /// stepped, stopping at the first error (`sqlite3_exec` with a callback). Rows handed out
    /// before an error stay handed out.
    fn run_script(
        &mut self,
        sql: &str,
        on_row: &mut dyn FnMut(&[Value]),
    ) -> Result<(), EngineError>;
}
