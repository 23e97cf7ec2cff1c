//! What the shell needs from a database, as one small trait: run SQL text statement by
//! statement and report columns, rows and errors. The real implementation is over the
//! `parlite` API (`parlite_backend`); keeping the shell behind this trait keeps the code that
//! touches the API small and lets the shell's behaviour be tested over any engine.

/// One column value of a result row, typed as the engine returned it.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Null,
    Integer(i64),
    Real(f64),
    /// Bytes: SQLite text may hold invalid UTF-8, and the shell prints it as it is.
    Text(Vec<u8>),
    Blob(Vec<u8>),
}

impl Cell {
    /// The text `sqlite3_column_text` gives, as the shell prints it; `None` for NULL. The
    /// shell handles it as a C string, so text or a blob stops at its first NUL byte.
    pub fn text(&self) -> Option<Vec<u8>> {
        match self {
            Cell::Null => None,
            Cell::Integer(i) => Some(i.to_string().into_bytes()),
            Cell::Real(r) => Some(crate::numfmt::format_real(*r).into_bytes()),
            Cell::Text(b) | Cell::Blob(b) => {
                let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
                Some(b[..end].to_vec())
            }
        }
    }
}

/// Where a statement failed: the shell words the two differently
/// (`Parse error` / `Runtime error`, `in prepare` / `stepping`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Prepare,
    Step,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ExecError {
    pub phase: Phase,
    pub message: String,
}

/// What running SQL reports, in order: for each statement `Columns`, then its rows, then
/// `Done` (also after a step error, so buffered output can flush what it has).
pub enum Event<'a> {
    Columns(&'a [String]),
    Row(&'a [Cell]),
    Done,
}

pub trait Backend {
    /// Runs every statement of `sql` in order, reporting to `sink`, stopping at the first
    /// error (`sqlite3_exec` with a callback).
    fn execute(&mut self, sql: &str, sink: &mut dyn FnMut(Event<'_>)) -> Result<(), ExecError>;
}
