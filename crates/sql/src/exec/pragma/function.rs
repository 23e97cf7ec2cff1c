//! `pragma_x(arg, schema)` for the pragmas that read the database or the connection
//! (`user_version`, `page_count`, `foreign_keys`, `foreign_key_check`, ...): SQLite's pragma
//! virtual table (lang_pragma.html "PRAGMA functions"), run when the statement runs.
//!
//! Invariants:
//! - It runs the pragma itself (`Engine::pragma`) on a copy of the statement's schema, at
//!   run time on every execution, never folded into constant rows by the binder: the
//!   answer may change between executions of one prepared statement.
//! - The arguments fill the HIDDEN columns in their declared order (`arg` then `schema`,
//!   or `schema` alone: `function_hidden_columns`). A NULL or absent `arg` is the pragma's
//!   query form; a given one is `PRAGMA x = 'arg'`, its text quoted as SQLite's xFilter
//!   writes it. A NULL schema is the pragma without a schema prefix; an unknown schema is
//!   SQLite's "unknown database 'x'" (quoted, unlike the pragma statement's message).
//! - Each row is the pragma's own columns followed by the HIDDEN columns, holding the
//!   arguments' text (NULL when absent), slot by slot as SQLite's xColumn reads them
//!   (`push_hidden`).
//! - `cache_size`, `cache_spill`, `data_version` and an attached database's `synchronous`
//!   are run by the connection layer, which this one cannot call: their functions fail
//!   with an error naming the PRAGMA to use instead.

use super::function_hidden_columns;
use crate::exec::eval::Exec;
use crate::exec::store::Row;
use crate::exec::Engine;
use crate::parse::ast::{Expr, Literal, PragmaValue, QualifiedName};
use crate::value::{Result, SqlError, Value};

impl Exec<'_> {
    /// The rows of `pragma_<pragma>(args...)` (no more arguments than hidden columns: the
    /// binder rejects more).
    pub(crate) fn pragma_function_rows(&self, pragma: &str, args: &[Value]) -> Result<Vec<Row>> {
        let hidden = function_hidden_columns(pragma);
        let (arg, db) = match hidden.first() {
            Some(&"arg") => (text_arg(args.first()), text_arg(args.get(1))),
            _ => (Value::Null, text_arg(args.first())),
        };
        if matches!(pragma, "cache_size" | "cache_spill" | "data_version")
            || (pragma == "synchronous"
                && !db.to_text_or_empty().eq_ignore_ascii_case("main")
                && db != Value::Null)
        {
            // The connection layer runs these (pragma.rs's module comment), out of the
            // SQL layer's reach: refused rather than answered wrongly.
            return Err(SqlError::msg(format!(
                "pragma_{pragma} is not available as a table-valued function in parlite: \
                 use PRAGMA {pragma}"
            )));
        }
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
            v => Some(PragmaValue::Assign(Expr::Literal(Literal::String(
                v.to_text_or_empty().into_owned(),
            )))),
        };
        let name = QualifiedName {
            schema: schema_name,
            name: pragma.to_string(),
        };
        let mut schema = self.schema.clone();
        let mut engine = Engine::new(self.store, &mut schema, self.params, self.state);
        engine.exec_id = self.exec_id;
        let mut rows = engine.pragma(&name, value.as_ref())?;
        push_hidden(&mut rows, hidden.len(), &arg, &db);
        Ok(rows)
    }
}

/// An argument as the pragma virtual table keeps it: its text, NULL when absent or NULL.
pub(super) fn text_arg(v: Option<&Value>) -> Value {
    match v {
        None | Some(Value::Null) => Value::Null,
        Some(v) => Value::text(v.to_text_or_empty().as_ref()),
    }
}

/// Appends the `n` HIDDEN columns to each row as SQLite's pragma vtab reads them
/// (pragmaVtabColumn): the k-th is argument slot k, slot 0 the `arg` (NULL for a pragma
/// without one, so a schema-only table's `schema` column reads NULL, as in SQLite) and
/// slot 1 the schema.
pub(super) fn push_hidden(rows: &mut [Row], n: usize, arg: &Value, db: &Value) {
    for r in rows {
        for slot in [arg, db].into_iter().take(n) {
            r.push(slot.clone());
        }
    }
}
