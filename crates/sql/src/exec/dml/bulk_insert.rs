//! INSERT of many rows into a rowid table with indexes (`INSERT INTO t SELECT ...`): every
//! row is checked and its index keys computed first, then the trees are written in bulk
//! instead of one descent per row and per index entry:
//! - into an empty table (after `DELETE FROM t`), the table tree is built bottom up from
//!   the rows in rowid order (`Store::table_fill`) and each index is sorted and built
//!   bottom up (`Store::index_fill`), as CREATE INDEX builds one;
//! - into a table holding at most `MERGE_EXISTING_PER_NEW` times as many rows as the
//!   INSERT adds, whose new rowids all lie above its largest, the rows are appended to the
//!   table tree one by one (each lands on its rightmost leaf) and each index is rebuilt
//!   bottom up from its existing entries merged with the sorted new ones.
//!
//! Invariants (why the trees and every observable effect are those of the row-by-row
//! path in `Engine::insert`):
//! - Taken only when nothing can observe the rows one by one or resolve a conflict other
//!   than by failing the statement: no trigger, RETURNING, upsert or foreign-key checking;
//!   the rowid and every UNIQUE index resolve by ABORT; not AUTOINCREMENT, not WITHOUT
//!   ROWID. Either the table is empty, so its indexes are too and no existing row can
//!   clash, or every new rowid is above the table's largest (no rowid clash) and each
//!   UNIQUE index is checked over its existing and new entries together, merged in index
//!   order, so a new key equal to an existing one is found as two neighbours.
//! - Nothing is written until every row passed `check_row` and no rowid or UNIQUE key
//!   repeats. On any error or clash the rows go back to the row-by-row path untouched,
//!   which then reports the first failure in row order exactly as SQLite does (the
//!   attempt wrote nothing and evaluated only column defaults, which no one saw).
//! - Rowids are those the row-by-row path allocates: an explicit rowid as given, else one
//!   above the largest so far, the table's existing rows and negative rowids included (an
//!   empty table starts at 1). A row `check_row` ignores (a NOT NULL ... ON CONFLICT
//!   IGNORE) is skipped and allocates nothing.
//! - The trees are cleared before they are built (`Store::table_fill`, `index_fill`): an
//!   emptied tree may keep an interior root, and the bottom-up builder needs an empty
//!   leaf. A rebuilt index holds exactly the entries it held plus the new rows' entries.
//!
//! Measured on speedtest1 test 190 (`INSERT INTO z2 SELECT * FROM z1`, 50,000 rows into
//! the emptied z2 with two UNIQUE indexes and one plain index): see BENCHMARKS.md "bulk
//! branch, 2026-11-23 (2)"; the merge into a half-filled table on test 300: "dmlrange
//! branch, 2026-11-23 (3)".

use super::super::store;
use super::super::{Engine, Target};
use super::TableWriter;
use crate::parse::ast::ConflictAction;
use crate::value::{Affinity, Result, Value};
use std::cmp::Ordering;

/// Fewer rows than this take the row-by-row path: the sorts and the empty-table probe
/// only pay for themselves over many rows.
const BULK_ROWS_MIN: usize = 32;

/// A non-empty table takes the merge path only while it holds at most this many rows per
/// new row. Per index, the merge reads and re-writes every existing entry (a raw copy, a
/// comparison and the bottom-up build), where the row-by-row path pays one descent and
/// insert per new entry (~9k instructions in speedtest1 test 300's second INSERT, 25,000
/// rows into the half-filled z2, callgrind); the ratio is not tuned beyond that test.
const MERGE_EXISTING_PER_NEW: usize = 3;

/// One row of an INSERT source mapped onto the table: `targets[i]` is where source value
/// `i` goes.
pub(super) struct SourceMap<'a> {
    pub targets: &'a [Target],
    pub is_default: bool,
}

impl Engine<'_> {
    /// Inserts `rows` by the bulk path when it applies (module invariants) and returns
    /// None; otherwise returns the rows untouched for the row-by-row path. The caller
    /// already knows there is no trigger, RETURNING clause or upsert.
    pub(super) fn insert_in_bulk(
        &self,
        w: &TableWriter,
        rows: Vec<Vec<Value>>,
        map: &SourceMap<'_>,
        conflict: Option<ConflictAction>,
    ) -> Result<Option<Vec<Vec<Value>>>> {
        let t = &w.t;
        let abort = |declared: Option<ConflictAction>| {
            conflict.or(declared).unwrap_or(ConflictAction::Abort) == ConflictAction::Abort
        };
        let eligible = rows.len() >= BULK_ROWS_MIN
            && !map.is_default
            && !w.indexes.is_empty()
            && w.wr.is_none()
            && !w.upsert
            && !w.replace_hooks
            // The update hook is told of each row as it is written.
            && !self.state.update_hook.is_set()
            && !t.without_rowid
            && !t.autoincrement
            && !self.state.foreign_keys.get()
            && abort(t.pk_conflict)
            && w.indexes
                .iter()
                .all(|(ix, ..)| !ix.unique || abort(ix.on_conflict));
        if !eligible {
            return Ok(Some(rows));
        }
        // The table's largest rowid: None for an empty table.
        let existing_max = self.store.table_max_rowid(t.root)?;
        if existing_max.is_some() {
            // A clash found while merging is undone through a savepoint, which covers the
            // main database only (`RoutedStore::savepoint`).
            if store::db_bits(t.root) != 0 {
                return Ok(Some(rows));
            }
            // The table's size, from its first full index (every row has an entry there).
            let Some((ix, order, ..)) = w.indexes.iter().find(|(_, _, pred, _)| pred.is_none())
            else {
                return Ok(Some(rows));
            };
            let existing = self.store.index_entry_count(ix.root, order)?;
            if existing > rows.len().saturating_mul(MERGE_EXISTING_PER_NEW) {
                return Ok(Some(rows));
            }
        }
        let Some(built) = self.bulk_rows(w, &rows, map, conflict, existing_max)? else {
            return Ok(Some(rows));
        };
        let BulkRows {
            table_rows,
            mut keys,
            last_rowid,
        } = built;
        for (i, (ix, order, ..)) in w.indexes.iter().enumerate() {
            let ks = &mut keys[i];
            order.sort(ks);
            if ix.unique {
                let n = ix.columns.len();
                let clash = ks.windows(2).any(|p| {
                    let (a, b) = (&p[0][..n.min(p[0].len())], &p[1][..n.min(p[1].len())]);
                    !a.iter().any(|v| v.is_null()) && order.compare(a, b) == Ordering::Equal
                });
                if clash {
                    return Ok(Some(rows));
                }
            }
        }
        let n = table_rows.len();
        if existing_max.is_some() {
            if !self.merge_rows(w, &table_rows, keys)? {
                return Ok(Some(rows));
            }
        } else {
            // Checked: from here on the statement writes (an I/O error is the statement's).
            drop(rows);
            self.store.clear_btree(t.root)?;
            self.store.table_fill(t.root, &table_rows)?;
            drop(table_rows);
            for ((ix, order, ..), ks) in w.indexes.iter().zip(keys) {
                self.store.clear_btree(ix.root)?;
                self.store.index_fill(ix.root, order, ks)?;
            }
        }
        if let Some(r) = last_rowid {
            self.state.last_insert_rowid.set(r);
        }
        for _ in 0..n {
            self.count_change();
        }
        Ok(None)
    }

    /// Appends the checked rows (rowids above the table's largest) to a non-empty table
    /// and merges their keys (each list sorted) into its indexes, UNIQUE ones first: a new
    /// key equal to a stored one is found only there (`Store::index_merge`), and then
    /// everything written is undone and the answer is false.
    fn merge_rows(
        &self,
        w: &TableWriter,
        table_rows: &[(i64, Vec<Value>)],
        keys: Vec<Vec<Vec<Value>>>,
    ) -> Result<bool> {
        let mut by_index: Vec<_> = w.indexes.iter().zip(keys).collect();
        // Stable: the UNIQUE indexes keep the writer's checking order.
        by_index.sort_by_key(|((ix, ..), _)| !ix.unique);
        let sp = match w.indexes.iter().any(|(ix, ..)| ix.unique) {
            true => Some(self.store.savepoint()?),
            false => None,
        };
        let merged = (|| -> Result<bool> {
            for ((ix, order, ..), ks) in by_index {
                let unique = ix.unique.then_some(ix.columns.len());
                if !self.store.index_merge(ix.root, order, ks, unique)? {
                    return Ok(false);
                }
            }
            // Every rowid is above the table's largest: each row goes to the rightmost leaf.
            for (rowid, record) in table_rows {
                self.store.table_insert(w.t.root, *rowid, record)?;
            }
            Ok(true)
        })();
        if let Some(sp) = sp {
            if !matches!(merged, Ok(true)) {
                self.store.rollback_to(sp)?;
            }
            self.store.release(sp)?;
        }
        merged
    }

    /// Every row checked, with its record and index keys (module invariants); None when
    /// a row fails a check, two rows share a rowid or, in a table whose largest rowid is
    /// `existing_max`, a given rowid is not above it.
    fn bulk_rows(
        &self,
        w: &TableWriter,
        rows: &[Vec<Value>],
        map: &SourceMap<'_>,
        conflict: Option<ConflictAction>,
        existing_max: Option<i64>,
    ) -> Result<Option<BulkRows>> {
        let t = &w.t;
        let exec = self.exec();
        let ncols = t.columns.len();
        let mut table_rows: Vec<(i64, Vec<Value>)> = Vec::with_capacity(rows.len());
        let mut keys: Vec<Vec<Vec<Value>>> = w
            .indexes
            .iter()
            .map(|_| Vec::with_capacity(rows.len()))
            .collect();
        // The largest rowid so far (the next allocated one is above it); None while the
        // table holds no row.
        let mut max_rowid = existing_max;
        let mut ascending = true;
        let mut last_rowid = None;
        for src in rows {
            let mut vals = vec![Value::Null; ncols];
            let mut given = vec![false; ncols];
            let mut rowid_in = None;
            for (i, tgt) in map.targets.iter().enumerate() {
                let v = src.get(i).cloned().unwrap_or(Value::Null);
                match tgt {
                    Target::Column(c) => {
                        vals[*c] = v;
                        given[*c] = true;
                    }
                    Target::Rowid => rowid_in = Some(v),
                    Target::Repeat => {}
                }
            }
            for c in 0..ncols {
                if !given[c] {
                    if let Some(v) = w.default_value(&exec, c)? {
                        vals[c] = v;
                    }
                }
            }
            for (i, c) in t.columns.iter().enumerate() {
                let v = std::mem::take(&mut vals[i]);
                vals[i] = v.apply_affinity(c.affinity);
            }
            let given_rowid = match t.rowid_alias {
                Some(a) if !vals[a].is_null() => Some(vals[a].clone()),
                _ => rowid_in.filter(|v| !v.is_null()),
            };
            let rowid = match given_rowid.map(|v| v.apply_affinity(Affinity::Integer)) {
                // At or below an existing row's rowid it may clash: row by row.
                Some(Value::Integer(r)) if existing_max.is_some_and(|m| r <= m) => return Ok(None),
                Some(Value::Integer(r)) => r,
                // Not an integer: the row-by-row path reports the mismatch.
                Some(_) => return Ok(None),
                None => match max_rowid {
                    // SQLite then tries random rowids: row by row.
                    Some(i64::MAX) => return Ok(None),
                    Some(m) => m + 1,
                    None => 1,
                },
            };
            if let Some(a) = t.rowid_alias {
                vals[a] = Value::Integer(rowid);
            }
            match self.check_row(w, &exec, &mut vals, Value::Integer(rowid), conflict) {
                Ok(true) => {}
                Ok(false) => continue,
                Err(_) => return Ok(None),
            }
            if let Some(&(prev, _)) = table_rows.last() {
                ascending &= prev < rowid;
            }
            max_rowid = Some(max_rowid.map_or(rowid, |m| m.max(rowid)));
            for (i, (ix, _, pred, exprs)) in w.indexes.iter().enumerate() {
                if let Some(p) = pred {
                    let row = Self::with_rowid(&vals, rowid);
                    if !exec.index_where_is_true(p, &super::Frame::new(&row, None))? {
                        continue;
                    }
                }
                keys[i].push(Self::index_key(&exec, ix, exprs, &vals, rowid)?);
            }
            table_rows.push((rowid, Self::record_of(t, &vals).into_owned()));
            last_rowid = Some(rowid);
        }
        if !ascending {
            table_rows.sort_by_key(|(r, _)| *r);
            if table_rows.windows(2).any(|p| p[0].0 == p[1].0) {
                return Ok(None);
            }
        }
        Ok(Some(BulkRows {
            table_rows,
            keys,
            last_rowid,
        }))
    }
}

/// The checked rows of a bulk INSERT.
struct BulkRows {
    /// (rowid, table record), ascending by rowid.
    table_rows: Vec<(i64, Vec<Value>)>,
    /// Per index of the writer, its entries in row order.
    keys: Vec<Vec<Vec<Value>>>,
    /// The rowid of the last row in statement order (`last_insert_rowid()`).
    last_rowid: Option<i64>,
}
