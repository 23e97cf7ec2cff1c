//! The `Engine` contract over parlite itself, through the `parlite` crate's API
//! (docs/parlite-api.md). Built with the `parlite-engine` feature (on by default).

use crate::engine::{Engine, EngineError, QueryRows};
use crate::value::Value;
use parlite::Connection;

pub struct ParliteEngine {
    conn: Connection,
}

impl ParliteEngine {
    /// Opens `path` (`:memory:` for a private in-memory database).
    pub fn open(path: &str) -> Result<ParliteEngine, EngineError> {
        let conn = Connection::open(path).map_err(to_engine_error)?;
        Ok(ParliteEngine { conn })
    }
}

fn to_engine_error(e: parlite::Error) -> EngineError {
    EngineError {
        code: e.code,
        message: e.message,
    }
}

fn to_value(v: parlite::Value) -> Value {
    match v {
        parlite::Value::Null => Value::Null,
        parlite::Value::Integer(i) => Value::Integer(i),
        parlite::Value::Real(r) => Value::Real(r),
        parlite::Value::Text(t) => Value::Text(t.into_bytes()),
        parlite::Value::Blob(b) => Value::Blob(b),
    }
}

/// Steps `stmt` to the end, handing each row to `on_row`.
fn step_all(
    stmt: &mut parlite::Statement,
    on_row: &mut dyn FnMut(Vec<Value>),
) -> Result<(), EngineError> {
    let n = stmt.column_count();
    while stmt.step().map_err(to_engine_error)? {
        on_row((0..n).map(|i| to_value(stmt.column(i))).collect());
    }
    Ok(())
}

impl Engine for ParliteEngine {
    fn name(&self) -> &'static str {
        "parlite"
    }

    fn execute_batch(&mut self, sql: &str) -> Result<(), EngineError> {
        self.conn.execute_batch(sql).map_err(to_engine_error)
    }

    fn query(&mut self, sql: &str) -> Result<QueryRows, EngineError> {
        let mut out = QueryRows::default();
        let Some((mut stmt, _tail)) = self.conn.prepare(sql).map_err(to_engine_error)? else {
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
        let mut rest = sql;
        while let Some((mut stmt, tail)) = self.conn.prepare(rest).map_err(to_engine_error)? {
            step_all(&mut stmt, &mut |r| on_row(&r))?;
            rest = tail;
        }
        Ok(())
    }
}
