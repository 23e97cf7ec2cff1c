//! DELETE: the rows matching WHERE (honouring ORDER BY/LIMIT) deleted with their index
//! entries, triggers, RETURNING and foreign-key actions — or, with no WHERE and nothing that
//! needs the rows one by one, every tree of the table cleared page by page (SQLite's
//! truncate optimization), changes() still counting the rows.
//!
//! Invariants: the rows are collected before any is deleted (as for UPDATE, dml.rs), and
//! the truncate path is taken only when no trigger, RETURNING clause, ORDER BY/LIMIT or
//! foreign-key constraint on the table (as child or parent, with checking on) could observe
//! the rows. It plans no scan, but still resolves `INDEXED BY` as SQLite does: a name that
//! is not an index of the table is "no such index: X"; a partial index is accepted there
//! (no WHERE to imply its own), while the row-by-row path reports "no query solution".

use super::super::{BoundDml, ConnState, Engine, RowChange};
use super::main_table_without_triggers;
use super::target::TargetClause;
use crate::parse::ast::{self, TriggerEvent, TriggerTime};
use crate::schema::Schema;
use crate::value::{Result, SqlError, Value};

/// Whether DELETE `d`, run now, can fail after its first write only with an error that
/// ends the transaction (I/O, a full disk, a corrupt page): SQLite's DELETE without a
/// statement journal (`sqlite3BeginWriteOperation` with no trigger and no foreign key
/// required). It then needs no statement savepoint, whose first write of each page in
/// every statement copied the page for the undo image (~35k instructions of a DELETE of
/// ~9 rows with three indexes, speedtest1 test 270; BENCHMARKS.md, delupd branch). As for
/// `single_write`, the connection ends the transaction if such a statement fails after
/// writing (`Txn::change_count`), so a wrong `true` would cost the transaction, never
/// leave half a statement behind.
///
/// Why it holds: the rows are all collected, WHERE evaluated, before the first delete
/// (dml.rs invariants); deleting a row checks nothing, and its index keys (expressions
/// and partial-index predicates included) were computed without error when the row was
/// written. Kept: triggers (any), foreign keys on (actions and counters between rows),
/// RETURNING (evaluated between deletes, it may fail), tables outside main.
pub(crate) fn delete_writes_unchecked(schema: &Schema, state: &ConnState, d: &ast::Delete) -> bool {
    d.returning.is_empty()
        && !state.foreign_keys.get()
        && main_table_without_triggers(schema, &d.table).is_some()
}

impl Engine<'_> {
    pub fn delete(&mut self, d: &ast::Delete) -> Result<Vec<Vec<Value>>> {
        // A reused prepared DELETE keeps its table and triggers (exec::BoundDml).
        let keep = self.take_dml();
        let caching = keep.is_some();
        let bound = match keep {
            Some(Some(b)) => b,
            _ => {
                if let Some(v) = self.instead_of_target(&d.table, &TriggerEvent::Delete)? {
                    return self.view_update_or_delete(
                        v,
                        &d.alias,
                        &d.where_,
                        None,
                        &TriggerEvent::Delete,
                        &d.returning,
                    );
                }
                let t = self.table_for_write(&d.table)?;
                let before = self.table_triggers(&t, TriggerTime::Before, &TriggerEvent::Delete);
                let after = self.table_triggers(&t, TriggerTime::After, &TriggerEvent::Delete);
                Box::new(BoundDml {
                    table: t,
                    event: TriggerEvent::Delete,
                    sets: Vec::new(),
                    targets: Vec::new(),
                    before,
                    after,
                })
            }
        };
        let r = self.delete_rows(d, &bound);
        if caching {
            self.keep_dml(bound);
        }
        r
    }

    /// Deletes the rows of DELETE `d` from its resolved table.
    pub(crate) fn delete_rows(
        &mut self,
        d: &ast::Delete,
        bound: &BoundDml,
    ) -> Result<Vec<Vec<Value>>> {
        let t = &bound.table;
        self.fk_check_statement(t, crate::exec::fkey::FkWrite::Delete)?;
        let w = self.writer(t)?;
        let ncols = t.columns.len();
        let returning = self.returning_exprs(&t, &d.returning)?;
        let mut out_rows = Vec::new();
        let (before, after) = (&bound.before, &bound.after);
        // SQLite's truncate optimization: with no WHERE, nothing that needs the rows one by
        // one (triggers, RETURNING, foreign keys, ORDER BY/LIMIT), every tree of the table is
        // cleared page by page; changes() still counts the rows. Deleting row by row with
        // its index entries cost ~10x SQLite (speedtest1 tests 190 and 300).
        if d.where_.is_none()
            && d.order_by.is_empty()
            && d.limit.is_none()
            && returning.is_empty()
            && before.is_empty()
            && after.is_empty()
            && !self.fk_required_for_delete(&t)
        {
            if let Some(ast::Indexed::By(name)) = &d.indexed {
                let known = self
                    .schema
                    .table_indexes(&t)
                    .iter()
                    .any(|ix| ix.name.eq_ignore_ascii_case(name));
                if !known {
                    return Err(SqlError::msg(format!("no such index: {name}")));
                }
            }
            let n = self.store.clear_counting(t.root, !t.without_rowid)?;
            for (ix, ..) in &w.indexes {
                if ix.root != t.root && ix.root != 0 {
                    self.store.clear_btree(ix.root)?;
                }
            }
            for _ in 0..n {
                self.count_change();
            }
            return Ok(out_rows);
        }
        let rows = self.targeted_rows(
            &w,
            &TargetClause {
                with: &d.with,
                table: &d.table,
                alias: &d.alias,
                indexed: &d.indexed,
                where_: &d.where_,
                order_by: &d.order_by,
                limit: &d.limit,
            },
        )?;
        // Without triggers or foreign-key actions only this loop deletes, so each matched
        // row is still stored as scanned: its index keys come from the scanned values.
        // (Not for a table with generated columns: see UPDATE.)
        let scanned_is_stored = !t.has_generated()
            && before.is_empty()
            && after.is_empty()
            && !self.state.foreign_keys.get();
        // With triggers or foreign-key actions each row is read again at its turn (`row_now`).
        let reread = (!before.is_empty() || !after.is_empty() || self.state.foreign_keys.get())
            .then(|| self.exec().column_defaults(t));
        for old in rows {
            let rowid = match old.get(ncols) {
                Some(Value::Integer(r)) => Some(*r),
                _ if w.wr.is_some() => None,
                _ => continue,
            };
            let old = match &reread {
                Some(defaults) => match self.row_now(&w, &old, rowid, defaults)? {
                    Some(now) => now,
                    None => continue,
                },
                None => old,
            };
            if !before.is_empty() && !self.fire(&before, Some(&old), None)? {
                continue;
            }
            if !returning.is_empty() {
                self.push_returning_row(&old, &returning, &mut out_rows)?;
            }
            let stored = scanned_is_stored.then(|| &old[..ncols]);
            let deleted = match rowid {
                Some(r) => {
                    let deleted = self.delete_row_of(&w, r, stored, None)?;
                    if deleted {
                        self.row_changed(RowChange::Delete, &t, r);
                    }
                    deleted
                }
                None => self.delete_row_wr(&w, &old[..ncols])?,
            };
            if deleted {
                self.fk_parent_changed(&t, &old, None)?;
                self.count_change();
                if !after.is_empty() {
                    self.fire(&after, Some(&old), None)?;
                }
            }
        }
        Ok(out_rows)
    }
}
