//! The shell's `Backend` over the `parlite` crate's API (docs/parlite-api.md): the only code
//! in the shell that calls parlite. Built with the `parlite-api` feature (on by default).

use crate::backend::{Backend, Cell, Event, ExecError, Phase};
use parlite::{Connection, Value};

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
        let mut rest = sql;
        loop {
            let (mut stmt, tail) = match self.conn.prepare(rest) {
                Ok(Some(prepared)) => prepared,
                Ok(None) => return Ok(()),
                Err(e) => {
                    return Err(ExecError {
                        phase: Phase::Prepare,
                        message: e.message,
                    })
                }
            };
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
            sink(Event::Columns(&self.names));
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
                            message: e.message,
                        });
                    }
                }
            }
            sink(Event::Done);
            rest = tail;
        }
    }
}
