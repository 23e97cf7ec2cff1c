//! A new row written by REPLACE when every UNIQUE index of its table resolves conflicts by
//! REPLACE (`INSERT OR REPLACE`, `REPLACE INTO`, or every UNIQUE constraint declared so):
//! each UNIQUE index is probed and written in one descent (`Store::index_insert_unique`),
//! and only a clash costs a second look, to find and delete the clashing rows.
//!
//! Invariants (why this writes the same trees as `write_row_over`'s check-then-write):
//! - It runs only after the row passed NOT NULL and CHECK and its rowid is known to be
//!   free (fresh, or probed absent): nothing after the first write can fail a constraint,
//!   since every UNIQUE clash resolves by deleting rows, never by an error or IGNORE.
//! - A clashing row is deleted whole (all its index entries, `delete_row`) before the new
//!   key goes in, so no later index still sees it; the new row's own entries, written
//!   before, carry its rowid and are never among those deleted.
//! - REPLACE's deletes fire no trigger and count no change here, as in `write_row_over`:
//!   this path is never taken when they must (`TableWriter::replace_hooks`,
//!   dml/replace_delete.rs).
//!
//! - A clash found on a leaf cell is resolved where the descent stopped
//!   (`Store::index_replace_unique`): the clashing entry is overwritten by the new key
//!   (same prefix, so the same place in key order) and the clashing row is then deleted
//!   with every other entry (`delete_row_of` skipping this index). A clash anywhere else
//!   (an interior cell; a store without the shortcut) takes the general path: find the
//!   clashing rows, delete them whole, insert again.
//!
//! Measured on speedtest1 test 290 (`REPLACE INTO z2(a,b,c) SELECT a,b,c FROM z1` and the
//! same into t3, 100,000 rows, 3 and 2 indexes): probing each UNIQUE index through
//! `index_prefix_rowids` and then inserting cost a separate descent (~6.4k instructions)
//! per UNIQUE index per row.

use super::super::eval::Frame;
use super::super::store::UniqueReplace;
use super::super::Engine;
use super::{TableWriter, Written};
use crate::parse::ast::ConflictAction;
use crate::value::{Result, Value};
use parlite_storage::StorageError;

impl Engine<'_> {
    /// True when every UNIQUE index of `w` (there is at least one) resolves a conflict of
    /// this statement (`conflict`: its OR clause) by REPLACE, with no partial-index
    /// predicate or upsert to consult: the case `insert_replacing` serves.
    pub(super) fn replaces_every_unique(
        &self,
        w: &TableWriter,
        conflict: Option<ConflictAction>,
    ) -> bool {
        !w.upsert
            && w.indexes.iter().any(|(ix, ..)| ix.unique)
            && w.indexes.iter().all(|(ix, _, pred, _)| {
                !ix.unique
                    || (pred.is_none()
                        && conflict.or(ix.on_conflict).unwrap_or(ConflictAction::Abort)
                            == ConflictAction::Replace)
            })
    }

    /// Writes a checked row at the free `rowid` (`record`: the table record), then its
    /// index entries, deleting the rows any UNIQUE index entry clashes with.
    pub(super) fn insert_replacing(
        &self,
        w: &TableWriter,
        vals: &[Value],
        record: &[Value],
        rowid: i64,
    ) -> Result<Written> {
        let t = &w.t;
        let exec = self.exec();
        self.store.table_insert(t.root, rowid, record)?;
        let mut clash = Vec::new();
        for (i, (ix, order, pred, exprs)) in w.indexes.iter().enumerate() {
            if let Some(p) = pred {
                let row = Self::with_rowid(vals, rowid);
                if !exec.is_true(p, &Frame::new(&row, None))? {
                    continue;
                }
            }
            let key = Self::index_key(&exec, ix, exprs, vals, rowid)?;
            let n = ix.columns.len();
            if !ix.unique || key[..n].iter().any(|v| v.is_null()) {
                self.store.index_insert(ix.root, &key, order)?;
                continue;
            }
            match self.store.index_replace_unique(ix.root, &key, n, order)? {
                UniqueReplace::Inserted => continue,
                UniqueReplace::Replaced(r) => {
                    // The clashing row's entry here is the new row's now; the rest of
                    // the row goes as in the general path below.
                    if r == rowid || !self.delete_row_of(w, r, None, Some(i))? {
                        return Err(StorageError::corrupt(
                            None,
                            format!("index {} names a row the table lacks", ix.name),
                        )
                        .into());
                    }
                    continue;
                }
                UniqueReplace::Clash => {}
            }
            clash.clear();
            self.store
                .index_prefix_rowids(ix.root, order, &key[..n], &mut clash)?;
            clash.retain(|r| *r != rowid);
            if clash.is_empty() {
                return Err(StorageError::corrupt(
                    None,
                    format!("index {} refused a key no row holds", ix.name),
                )
                .into());
            }
            for r in &clash {
                self.delete_row(w, *r)?;
            }
            if !self.store.index_insert_unique(ix.root, &key, n, order)? {
                return Err(StorageError::corrupt(
                    None,
                    format!("index {} keeps a deleted row's key", ix.name),
                )
                .into());
            }
        }
        if t.autoincrement {
            self.bump_sequence(t, rowid)?;
        }
        Ok(Written::Row(rowid))
    }
}
