//! `pragma_foreign_key_check(table, schema)`: `PRAGMA foreign_key_check` as a table-valued
//! function (lang_pragma.html "PRAGMA functions").
//!
//! Invariants:
//! - It runs the pragma itself (`Engine::pragma`, hence `Engine::foreign_key_check`) on a
//!   copy of the statement's schema, at run time on every execution (it reads table data,
//!   so the binder never folds it into constant rows).
//! - A NULL table argument checks every table, as the pragma without argument; a NULL
//!   schema is the pragma without a schema prefix; an unknown schema is SQLite's
//!   "unknown database 'x'" (quoted, unlike the pragma statement's message).
//! - Each row is the pragma's (table, rowid, parent, fkid) followed by the HIDDEN columns
//!   `arg` and `schema`, the arguments as given (NULL when absent).

use crate::exec::eval::Exec;
use crate::exec::store::Row;
use crate::exec::Engine;
use crate::parse::ast::{Expr, Literal, PragmaValue, QualifiedName};
use crate::value::{Result, SqlError, Value};

impl Exec<'_> {
    /// The rows of `pragma_foreign_key_check(args...)` (at most two arguments: the binder
    /// rejects more).
    pub(crate) fn foreign_key_check_function(&self, args: &[Value]) -> Result<Vec<Row>> {
        let arg = args.first().cloned().unwrap_or(Value::Null);
        let db = args.get(1).cloned().unwrap_or(Value::Null);
        let schema_name = match &db {
            Value::Null => None,
            v => {
                let name = v.to_text_or_empty().into_owned();
                if !name.eq_ignore_ascii_case("main")
                    && !name.eq_ignore_ascii_case("temp")
                    && self.schema.attached_db(&name).is_none()
                {
                    return Err(SqlError::msg(format!("unknown database '{name}'")));
                }
                Some(name)
            }
        };
        let value = match &arg {
            Value::Null => None,
            v => Some(PragmaValue::Call(Expr::Literal(Literal::String(
                v.to_text_or_empty().into_owned(),
            )))),
        };
        let name = QualifiedName {
            schema: schema_name,
            name: "foreign_key_check".to_string(),
        };
        let mut schema = self.schema.clone();
        let mut engine = Engine::new(self.store, &mut schema, self.params, self.state);
        engine.exec_id = self.exec_id;
        let mut rows = engine.pragma(&name, value.as_ref())?;
        for r in &mut rows {
            r.push(arg.clone());
            r.push(db.clone());
        }
        Ok(rows)
    }
}
