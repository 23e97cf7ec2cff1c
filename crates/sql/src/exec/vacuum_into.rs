//! `VACUUM INTO 'file'` (lang_vacuum.html §"VACUUM INTO"): a compacted copy of the main
//! database written to another database, which the caller (the API layer, which opens
//! files) supplies as an empty store in a write transaction.
//!
//! Invariants:
//! - The source is only read: its pages, schema and header stay as they were.
//! - The copy holds every sqlite_schema row (same rowids, same SQL) and every tree, entry
//!   for entry (rowids kept; index and WITHOUT ROWID keys rebuilt bottom up in key order),
//!   on fresh pages with no free page; user_version, application_id and a schema cookie
//!   one past the source's go with it, as SQLite's copy of the meta values does.

use super::store::{Row, Store};
use super::Engine;
use crate::value::{Result, SqlError, Value};
use std::ops::Bound;

impl Engine<'_> {
    /// Copies the main database into `out` (empty, in a write transaction).
    pub fn vacuum_into(&mut self, out: &dyn Store) -> Result<()> {
        let (trees, blocked) = self.vacuum_trees(0);
        if blocked {
            return Err(SqlError::msg(
                "VACUUM INTO of a database with a write-blocked schema is not supported",
            ));
        }
        for (rowid, mut row) in self.schema_rows()? {
            let old = row.get(3).map(|v| v.to_i64()).unwrap_or(0);
            if old != 0 {
                let Some((root, order)) = trees.iter().find(|(r, _)| i64::from(*r) == old) else {
                    return Err(SqlError::msg(format!(
                        "VACUUM INTO: no tree known for root page {old}"
                    )));
                };
                let new_root = match order {
                    None => {
                        let r = out.create_table_btree()?;
                        for entry in self.store.table_range(
                            *root,
                            Bound::Unbounded,
                            Bound::Unbounded,
                            false,
                        )? {
                            let (id, values) = entry?;
                            out.table_insert(r, id, &values)?;
                        }
                        r
                    }
                    Some(order) => {
                        let r = out.create_index_btree()?;
                        let keys: Vec<Row> = self
                            .store
                            .index_range(*root, order, Bound::Unbounded, Bound::Unbounded, false)?
                            .collect::<Result<_>>()?;
                        out.index_fill(r, order, keys)?;
                        r
                    }
                };
                row[3] = Value::Integer(i64::from(new_root));
            }
            out.table_insert(1, rowid, &row)?;
        }
        out.set_user_version(self.store.user_version()?)?;
        out.set_schema_cookie(self.store.schema_cookie()?.wrapping_add(1))?;
        let app_id = self.store.file_header_in(0)?.application_id;
        if app_id != 0 {
            out.set_application_id_in(0, app_id)?;
        }
        Ok(())
    }
}
