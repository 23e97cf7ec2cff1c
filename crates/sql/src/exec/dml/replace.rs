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
//! - UNIQUE indexes are written before the others (the keys of all are computed first,
//!   in the writer's order, so an expression's error is still the first one SQLite
//!   would meet). While a clashing row is deleted, its entry in an index the new row has
//!   not written yet is moved to the new row when the new row's key columns there are the
//!   same (a REPLACE that rewrites a row with its own values: only the rowid differs),
//!   through `Store::index_rekey` (in place when the new key sorts where the old one
//!   lies), instead of being deleted and inserted again; that index is then done. The
//!   trees end as the delete and the insert leave them: the old entry gone, the new one
//!   present. For a UNIQUE index the moved entry is the only one with its key columns
//!   (the deleted row held them), so the new row clashes with no other row there.
//!
//! Measured on speedtest1 test 290 (`REPLACE INTO z2(a,b,c) SELECT a,b,c FROM z1` and the
//! same into t3, 100,000 rows, 3 and 2 indexes): probing each UNIQUE index through
//! `index_prefix_rowids` and then inserting cost a separate descent (~6.4k instructions)
//! per UNIQUE index per row.

use super::super::eval::Frame;
use super::super::store::UniqueReplace;
use super::super::Engine;
use super::{index_key_into, same_values, TableWriter, Written};
use crate::parse::ast::ConflictAction;
use crate::value::{Result, Value};
use parlite_storage::StorageError;

/// A row deleted by REPLACE for a new row whose entry in `w.indexes[index]`
/// already became the new row's: `delete_row_of` leaves that entry alone and moves the
/// entries of indexes not yet `written` for the new row whose key columns its key there
/// (`keys`; None: a partial index it is not in) shares (module docs), marking each written.
pub(super) struct Replacing<'a> {
    pub index: usize,
    pub keys: &'a [Option<Vec<Value>>],
    pub written: &'a mut [bool],
}

/// `insert_replacing`'s buffers, kept in the statement's `TableWriter` from row to row:
/// a vector of keys, one per index, and the flags, allocated for every row, with each
/// key's own vector, were ~5 mallocs and frees a row (speedtest1 test 290).
#[derive(Default)]
pub(super) struct ReplaceScratch {
    keys: Vec<Option<Vec<Value>>>,
    written: Vec<bool>,
}

impl Engine<'_> {
    /// Moves the entry `old_key` of the deleted row in `w.indexes[i]` to the new row of
    /// `rp` when that index is not written for the new row yet and the new row's key
    /// there has the same key columns; false, writing nothing, otherwise (the caller then
    /// deletes the entry).
    pub(super) fn move_entry(
        &self,
        w: &TableWriter,
        i: usize,
        old_key: &[Value],
        rp: &mut Replacing<'_>,
    ) -> Result<bool> {
        let (ix, order, ..) = &w.indexes[i];
        let n = ix.columns.len();
        let Some(key) = rp.keys[i].as_ref().filter(|_| !rp.written[i]) else {
            return Ok(false);
        };
        if !same_values(&key[..n], &old_key[..n]) {
            return Ok(false);
        }
        if !self.store.index_rekey(ix.root, old_key, key, order)? {
            return Err(StorageError::corrupt(
                None,
                format!("index {} lacks an entry of a row it indexes", ix.name),
            )
            .into());
        }
        rp.written[i] = true;
        Ok(true)
    }

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
        // Taken, not borrowed: a nested use (none is known) would start empty.
        let mut scratch = w.replace_scratch.take();
        let r = self.insert_replacing_with(w, vals, record, rowid, &mut scratch);
        w.replace_scratch.set(scratch);
        r
    }

    fn insert_replacing_with(
        &self,
        w: &TableWriter,
        vals: &[Value],
        record: &[Value],
        rowid: i64,
        scratch: &mut ReplaceScratch,
    ) -> Result<Written> {
        let t = &w.t;
        let exec = self.exec();
        self.store.table_insert(t.root, rowid, record)?;
        let ReplaceScratch { keys, written } = scratch;
        keys.resize_with(w.indexes.len(), || None);
        for ((ix, _, pred, exprs), slot) in w.indexes.iter().zip(keys.iter_mut()) {
            if let Some(p) = pred {
                let row = Self::with_rowid(vals, rowid);
                if !exec.index_where_is_true(p, &Frame::new(&row, None))? {
                    *slot = None;
                    continue;
                }
            }
            let key = slot.get_or_insert_with(Vec::new);
            index_key_into(&exec, ix, exprs, vals, rowid, key)?;
        }
        written.clear();
        written.extend(keys.iter().map(Option::is_none));
        let (keys, written) = (&keys[..], &mut written[..]);
        let mut clash = Vec::new();
        let unique_first = (0..w.indexes.len())
            .filter(|&i| w.indexes[i].0.unique)
            .chain((0..w.indexes.len()).filter(|&i| !w.indexes[i].0.unique));
        for i in unique_first {
            if written[i] {
                continue;
            }
            written[i] = true;
            let (ix, order, ..) = &w.indexes[i];
            let Some(key) = &keys[i] else {
                continue;
            };
            let n = ix.columns.len();
            if !ix.unique || key[..n].iter().any(|v| v.is_null()) {
                self.store.index_insert(ix.root, key, order)?;
                continue;
            }
            match self.store.index_replace_unique(ix.root, key, n, order)? {
                UniqueReplace::Inserted => continue,
                UniqueReplace::Replaced(r) => {
                    // The clashing row's entry here is the new row's now; the rest of
                    // the row goes as in the general path below, but for the entries
                    // it can hand over.
                    let replacing = Replacing {
                        index: i,
                        keys,
                        written: &mut *written,
                    };
                    if r == rowid || !self.delete_row_of(w, r, None, Some(replacing))? {
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
            if !self.store.index_insert_unique(ix.root, key, n, order)? {
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
