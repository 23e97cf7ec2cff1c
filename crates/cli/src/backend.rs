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
    /// The primary result code (1 for a plain SQLITE_ERROR): sqlite3 adds ` (N)` to the
    /// message of any other.
    pub code: i32,
}

/// What running SQL reports, in order: for each statement `Columns`, then its rows, then
/// `Done` (also after a step error, so buffered output can flush what it has). Under
/// `.eqp`, a statement's plan comes first, as a result set opened by `PlanColumns`
/// (EXPLAIN QUERY PLAN's rows) and, for `.eqp full`, one opened by `ListingColumns`
/// (EXPLAIN's rows), each closed by its `Done`: the shell draws those whatever the mode.
pub enum Event<'a> {
    Columns(&'a [String]),
    PlanColumns(&'a [String]),
    ListingColumns(&'a [String]),
    Row(&'a [Cell]),
    Done,
}

/// `.eqp`: what the shell shows before each statement that is not itself an EXPLAIN.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AutoPlan {
    #[default]
    Off,
    /// The query plan (EXPLAIN QUERY PLAN).
    On,
    /// The query plan and then EXPLAIN's listing.
    Full,
}

/// How the shell runs the user's SQL (`Backend::execute_user`).
#[derive(Clone, Copy, Debug, Default)]
pub struct UserRun<'a> {
    /// `.parameter`'s bindings by parameter name (`?N` for a nameless one). When there
    /// are any, every parameter of every statement is bound: its value, or NULL.
    pub params: &'a [(String, Cell)],
    pub plan: AutoPlan,
}

pub trait Backend {
    /// Runs every statement of `sql` in order, reporting to `sink`, stopping at the first
    /// error (`sqlite3_exec` with a callback).
    fn execute(&mut self, sql: &str, sink: &mut dyn FnMut(Event<'_>)) -> Result<(), ExecError>;

    /// `execute` for the SQL the user typed: statements' parameters bound from
    /// `run.params`, each statement's plan reported first as `run.plan` asks. A backend
    /// that can do neither runs plain SQL and refuses the rest.
    fn execute_user(
        &mut self,
        sql: &str,
        run: &UserRun<'_>,
        sink: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), ExecError> {
        if !run.params.is_empty() || run.plan != AutoPlan::Off {
            return Err(ExecError {
                phase: Phase::Prepare,
                message: "this backend cannot bind .parameter values or show plans".into(),
                code: 1,
            });
        }
        self.execute(sql, sink)
    }

    /// `.open`: closes the database and opens `path` instead (":memory:" or "" for a new
    /// private in-memory one), read-only when asked.
    fn open(&mut self, path: &str, read_only: bool) -> Result<(), String> {
        let _ = (path, read_only);
        Err("this backend cannot open another database".into())
    }

    /// `.backup`: database `db` copied over the database file `file` (created if
    /// missing) by the online backup, its commit fsynced unless `no_sync`. Errors are the
    /// shell's whole message ("Error: ...").
    fn backup(&mut self, db: &str, file: &str, no_sync: bool) -> Result<(), String> {
        let _ = (db, file, no_sync);
        Err("Error: this backend cannot back up a database".into())
    }

    /// `.restore`: the database file `file` copied over database `db` by the online
    /// backup. Errors are the shell's whole message.
    fn restore(&mut self, db: &str, file: &str) -> Result<(), String> {
        let _ = (db, file);
        Err("Error: this backend cannot restore a database".into())
    }
}
