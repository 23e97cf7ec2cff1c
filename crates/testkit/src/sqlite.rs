//! The SQLite oracle: the `Engine` contract over stock SQLite (rusqlite, bundled build).
//!
//! It is the reference every parlite result is compared with, so it adds nothing of its own:
//! values come back with SQLite's runtime types and errors with SQLite's messages.

use crate::engine::{Engine, EngineError, QueryRows};
use crate::value::Value;
use rusqlite::fallible_iterator::FallibleIterator;
use rusqlite::types::ValueRef;
use rusqlite::{Batch, Connection};

pub struct SqliteEngine {
    conn: Connection,
}

impl SqliteEngine {
    /// Opens `path` (`:memory:` for a private in-memory database).
    pub fn open(path: &str) -> Result<SqliteEngine, EngineError> {
        let conn = Connection::open(path).map_err(to_engine_error)?;
        Ok(SqliteEngine { conn })
    }

    /// A fresh in-memory database.
    pub fn memory() -> Result<SqliteEngine, EngineError> {
        SqliteEngine::open(":memory:")
    }
}

fn to_engine_error(e: rusqlite::Error) -> EngineError {
    let code = match &e {
        rusqlite::Error::SqliteFailure(f, _) => f.extended_code & 0xff,
        rusqlite::Error::SqlInputError { error, .. } => error.extended_code & 0xff,
        _ => 1,
    };
    let message = match e {
        rusqlite::Error::SqliteFailure(_, Some(msg)) => msg,
        rusqlite::Error::SqlInputError { msg, .. } => msg,
        other => other.to_string(),
    };
    EngineError { code, message }
}

fn to_value(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Integer(i),
        ValueRef::Real(r) => Value::Real(r),
        ValueRef::Text(t) => Value::Text(t.to_vec()),
        ValueRef::Blob(b) => Value::Blob(b.to_vec()),
    }
}

/// Steps `stmt` to the end, handing each row to `on_row`.
fn step_all(
    stmt: &mut rusqlite::Statement<'_>,
    on_row: &mut dyn FnMut(Vec<Value>),
) -> Result<(), EngineError> {
    let column_count = stmt.column_count();
    let mut rows = stmt.raw_query();
    while let Some(row) = rows.next().map_err(to_engine_error)? {
        let mut values = Vec::with_capacity(column_count);
        for i in 0..column_count {
            values.push(to_value(row.get_ref(i).map_err(to_engine_error)?));
        }
        on_row(values);
    }
    Ok(())
}

impl Engine for SqliteEngine {
    fn name(&self) -> &'static str {
        "sqlite"
    }

    fn execute_batch(&mut self, sql: &str) -> Result<(), EngineError> {
        self.conn.execute_batch(sql).map_err(to_engine_error)
    }

    fn query(&mut self, sql: &str) -> Result<QueryRows, EngineError> {
        let mut batch = Batch::new(&self.conn, sql);
        let mut out = QueryRows::default();
        let Some(mut stmt) = batch.next().map_err(to_engine_error)? else {
            return Ok(out);
        };
        out.column_count = stmt.column_count();
        let mut rows = Vec::new();
        out.step_error = step_all(&mut stmt, &mut |r| rows.push(r)).err();
        out.rows = rows;
        Ok(out)
    }

    fn run_script(
        &mut self,
        sql: &str,
        on_row: &mut dyn FnMut(&[Value]),
    ) -> Result<(), EngineError> {
        let mut batch = Batch::new(&self.conn, sql);
        while let Some(mut stmt) = batch.next().map_err(to_engine_error)? {
            step_all(&mut stmt, &mut |r| on_row(&r))?;
        }
        Ok(())
    }
}
