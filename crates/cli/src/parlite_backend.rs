//! The shell's `Backend` over the `parlite` crate's API (docs/parlite-api.md): the only code
//! in the shell that calls parlite. Built with the `parlite-api` feature (on by default).

use crate::backend::{AutoPlan, Backend, Cell, Event, ExecError, Phase, UserRun};
use parlite::{Backup, BackupStep, Connection, Value};

pub struct ParliteBackend {
    conn: Connection,
    /// The current statement's column names and row, kept between statements so that a
    /// script of one-row statements does not allocate them afresh each time.
    names: Vec<String>,
    row: Vec<Cell>,
}

impl ParliteBackend {
    /// Opens `path` (`:memory:` for a private in-memory database).
    pub fn open(path: &str) -> Result<ParliteBackend, String> {
        let conn = Connection::open(path).map_err(|e| e.message)?;
        Ok(ParliteBackend {
            conn,
            names: Vec::new(),
            row: Vec::new(),
        })
    }

    /// Runs the statements of `sql`; `user` binds parameters and reports plans as
    /// `execute_user` says.
    fn run(
        &mut self,
        sql: &str,
        user: Option<&UserRun<'_>>,
        sink: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), ExecError> {
        let mut rest = sql;
        loop {
            let (mut stmt, tail) = match self.conn.prepare(rest) {
                Ok(Some(prepared)) => prepared,
                Ok(None) => return Ok(()),
                Err(e) => {
                    return Err(ExecError {
                        phase: Phase::Prepare,
                        code: e.code,
                        message: e.message,
                    })
                }
            };
            if let Some(user) = user {
                let text = rest[..rest.len() - tail.len()].trim_start();
                if user.plan != AutoPlan::Off && !is_explain(text) {
                    self.report_plan(text, user.plan, sink);
                }
                if !user.params.is_empty() {
                    bind_parameters(&mut stmt, user.params).map_err(|e| ExecError {
                        phase: Phase::Prepare,
                        code: e.code,
                        message: e.message,
                    })?;
                }
            }
            self.step_all(&mut stmt, sink, Opened::Result)?;
            rest = tail;
        }
    }

    /// Steps `stmt` to its end, reporting its columns (as `open` makes the event), rows and
    /// `Done`.
    fn step_all(
        &mut self,
        stmt: &mut parlite::Statement,
        sink: &mut dyn FnMut(Event<'_>),
        open: Opened,
    ) -> Result<(), ExecError> {
        let n = stmt.column_count();
        self.names.truncate(n);
        for i in 0..n {
            let name = stmt.column_name(i);
            match self.names.get_mut(i) {
                Some(s) => {
                    s.clear();
                    s.push_str(name);
                }
                None => self.names.push(name.to_string()),
            }
        }
        sink(match open {
            Opened::Result => Event::Columns(&self.names),
            Opened::Plan => Event::PlanColumns(&self.names),
            Opened::Listing => Event::ListingColumns(&self.names),
        });
        loop {
            match stmt.step() {
                Ok(true) => {
                    self.row.clear();
                    self.row.extend((0..n).map(|i| to_cell(stmt.column(i))));
                    sink(Event::Row(&self.row));
                }
                Ok(false) => break,
                Err(e) => {
                    sink(Event::Done);
                    return Err(ExecError {
                        phase: Phase::Step,
                        code: e.code,
                        message: e.message,
                    });
                }
            }
        }
        sink(Event::Done);
        Ok(())
    }

    /// `.eqp`: EXPLAIN QUERY PLAN of the statement `text` (and, for `full`, its EXPLAIN),
    /// as shell.c runs them; a statement they cannot explain shows nothing.
    fn report_plan(&mut self, text: &str, plan: AutoPlan, sink: &mut dyn FnMut(Event<'_>)) {
        let mut runs = vec![(format!("EXPLAIN QUERY PLAN {text}"), Opened::Plan)];
        if plan == AutoPlan::Full {
            runs.push((format!("EXPLAIN {text}"), Opened::Listing));
        }
        for (sql, open) in runs {
            if let Ok(Some((mut st, _))) = self.conn.prepare(&sql) {
                let _ = self.step_all(&mut st, sink, open);
            }
        }
    }
}

/// Which event opens a result set (`step_all`).
#[derive(Clone, Copy)]
enum Opened {
    Result,
    Plan,
    Listing,
}

/// Whether statement text starts with the EXPLAIN keyword (sqlite3_stmt_isexplain).
fn is_explain(text: &str) -> bool {
    let word: String = text
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect();
    word.eq_ignore_ascii_case("explain")
}

/// Binds every parameter of `stmt` from `params` by name (`?N` for a nameless one), NULL
/// where there is none: shell.c `bind_prepared_stmt`.
fn bind_parameters(
    stmt: &mut parlite::Statement,
    params: &[(String, Cell)],
) -> parlite::Result<()> {
    for i in 1..=stmt.parameter_count() {
        let name = match stmt.parameter_name(i) {
            Some(n) => n.to_string(),
            None => format!("?{i}"),
        };
        let value = params
            .iter()
            .find(|(k, _)| *k == name)
            .map_or(Value::Null, |(_, c)| to_value(c));
        stmt.bind(i, value)?;
    }
    Ok(())
}

fn to_value(c: &Cell) -> Value {
    match c {
        Cell::Null => Value::Null,
        Cell::Integer(i) => Value::Integer(*i),
        Cell::Real(r) => Value::Real(*r),
        Cell::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
        Cell::Blob(b) => Value::Blob(b.clone()),
    }
}

fn to_cell(v: Value) -> Cell {
    match v {
        Value::Null => Cell::Null,
        Value::Integer(i) => Cell::Integer(i),
        Value::Real(r) => Cell::Real(r),
        Value::Text(t) => Cell::Text(t.into_bytes()),
        Value::Blob(b) => Cell::Blob(b),
    }
}

impl Backend for ParliteBackend {
    fn execute(&mut self, sql: &str, sink: &mut dyn FnMut(Event<'_>)) -> Result<(), ExecError> {
        self.run(sql, None, sink)
    }

    fn execute_user(
        &mut self,
        sql: &str,
        run: &UserRun<'_>,
        sink: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), ExecError> {
        self.run(sql, Some(run), sink)
    }

    fn open(&mut self, path: &str, read_only: bool) -> Result<(), String> {
        // The database now open closes first, so that a file being opened again (or
        // removed by `.open --new`) is not held by this process.
        self.conn = Connection::open(":memory:").map_err(|e| e.message)?;
        let db = parlite::Database::open_with(path, true, read_only).map_err(|e| e.message)?;
        self.conn = db.connect().map_err(|e| e.message)?;
        Ok(())
    }

    /// sqlite3's `.backup`: `sqlite3_backup_step(100)` until done; an error reports the
    /// destination's, as `sqlite3_errmsg(pDest)` after the finish.
    fn backup(&mut self, db: &str, file: &str, no_sync: bool) -> Result<(), String> {
        let dest = Connection::open(file).map_err(|_| format!("Error: cannot open \"{file}\""))?;
        if no_sync {
            dest.execute_batch("PRAGMA synchronous = OFF")
                .map_err(|e| format!("Error: {}", e.message))?;
        }
        let mut copy = Backup::new(&dest, "main", &self.conn, db)
            .map_err(|e| format!("Error: {}", e.message))?;
        let r = loop {
            match copy.step(100) {
                Ok(BackupStep::More) => continue,
                Ok(BackupStep::Done) => break Ok(()),
                Err(e) => break Err(e),
            }
        };
        let finished = copy.finish();
        r.and(finished)
            .map_err(|e| format!("Error: {}", shell_message(&e)))
    }

    /// sqlite3's `.restore`: steps of 100 pages, a busy destination retried 3 times 100 ms
    /// apart, then "source database is busy".
    fn restore(&mut self, db: &str, file: &str) -> Result<(), String> {
        let source =
            Connection::open(file).map_err(|_| format!("Error: cannot open \"{file}\""))?;
        let mut copy = Backup::new(&self.conn, db, &source, "main")
            .map_err(|e| format!("Error: {}", e.message))?;
        let mut busy = 0;
        let r = loop {
            match copy.step(100) {
                Ok(BackupStep::More) => continue,
                Ok(BackupStep::Done) => break Ok(()),
                Err(e) if e.code == BUSY && busy < 3 => {
                    busy += 1;
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
                Err(e) => break Err(e),
            }
        };
        let finished = copy.finish();
        match r.and(finished) {
            Ok(()) => Ok(()),
            Err(e) if e.code == BUSY => Err("Error: source database is busy".to_string()),
            Err(e) => Err(format!("Error: {}", shell_message(&e))),
        }
    }
}

/// SQLITE_BUSY (sqlite3.h).
const BUSY: i32 = 5;

/// The message sqlite3 prints for a failed backup: `sqlite3_errmsg` after
/// `sqlite3_backup_finish`, which holds only the result code, so SQLite's text for it
/// (parlite adds why a database is locked in parentheses).
fn shell_message(e: &parlite::Error) -> String {
    if e.code == BUSY {
        return "database is locked".to_string();
    }
    e.message.clone()
}
