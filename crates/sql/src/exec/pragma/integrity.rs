//! `PRAGMA integrity_check`'s cross-check of a rowid table against its indexes, by merging
//! instead of seeking: each index is walked once in key order (checking that its entries
//! strictly increase), its entries are found by rowid (`RowidSlots`), and one scan of the table in rowid
//! order pairs each row with the entry of its rowid in every index.
//!
//! Invariants:
//! - This path only ever answers "consistent" (`Some`, with the table's NOT NULL findings)
//!   or "don't know" (`None`); any difference (a count, a rowid, a key, an out-of-order or
//!   duplicate entry, a table too large to hold its index entries in memory) sends the
//!   caller to the per-row probes, which word the findings as SQLite does. So a corrupt
//!   file reports exactly what it reported before this path existed.
//! - Equality is the index's own (its collations, via `KeyOrder::compare`), as a probe's:
//!   an entry whose bytes are the row's key encoded is equal; any other is decoded and
//!   compared. Entries are held as stored records (`Store::index_records`), not decoded:
//!   decoding every entry into a `Row` was ~40% of speedtest1 test 980 (callgrind).
//!
//! Why: a probe is a root-to-leaf seek with a record comparison per cell visited, about
//! 10,500 instructions per index entry; speedtest1 test 980 probed 500,000 entries
//! (callgrind: 6,173M instructions in all, SQLite 1,234M).

use super::super::dml::{index_key, IndexExprs};
use super::super::eval::Exec;
use super::super::store::KeyRecords;
use super::super::txnstore::{decode, encode_to};
use super::super::Engine;
use crate::schema::{Index, Table};
use crate::value::{Result, Value};
use parlite_storage::record::{self, ValueRef};
use std::cmp::Ordering;
use std::collections::HashMap;
use std::ops::Bound;
use std::sync::Arc;

/// Index entries a table's merge may hold in memory (all its indexes together); past this
/// the per-row probes run instead.
const MERGE_ENTRIES_MAX: usize = 2_000_000;

impl Engine<'_> {
    /// The NOT NULL findings of rowid table `t` when every (non-partial) index of it holds
    /// exactly the entries its rows call for; None when that is not shown.
    pub(super) fn merged_index_check(
        &self,
        t: &Table,
        ixs: &[Arc<Index>],
        ix_exprs: &HashMap<String, IndexExprs>,
        defaults: &[Value],
    ) -> Result<Option<Vec<String>>> {
        let exec = self.exec();
        let mut held = 0usize;
        // Per checked index: its order, its key expressions, its entries by rowid.
        let mut checked = Vec::new();
        for ix in ixs.iter().filter(|ix| ix.partial.is_none()) {
            let order = Exec::key_order(ix);
            let Some(exprs) = ix_exprs.get(&ix.name) else {
                return Ok(None);
            };
            let mut entries = KeyRecords::default();
            let max = MERGE_ENTRIES_MAX.saturating_sub(held);
            if !self
                .store
                .index_records(ix.root, &order, max, &mut entries)?
            {
                return Ok(None);
            }
            held += entries.len();
            let mut rowids = Vec::with_capacity(entries.len());
            for i in 0..entries.len() {
                let rec = entries.get(i).unwrap_or_default();
                let Some(ValueRef::Integer(rowid)) = record::last_field(rec) else {
                    return Ok(None);
                };
                rowids.push(rowid);
            }
            let Some(by_rowid) = RowidSlots::of(&rowids) else {
                return Ok(None);
            };
            checked.push((ix, order, exprs, entries, by_rowid));
        }
        let mut problems = Vec::new();
        let mut nrows = 0usize;
        let mut key = Vec::new();
        for r in self
            .store
            .table_range(t.root, Bound::Unbounded, Bound::Unbounded, false)?
        {
            let (rowid, vals) = r?;
            let full = exec.table_row(t, rowid, vals, defaults)?;
            for (i, c) in t.columns.iter().enumerate() {
                if c.not_null.is_some() && full[i].is_null() && Some(i) != t.rowid_alias {
                    problems.push(format!("NULL value in {}.{}", t.name, c.name));
                }
            }
            for (ix, order, exprs, entries, by_rowid) in &checked {
                let Some(entry) = by_rowid.get(rowid).and_then(|i| entries.get(i)) else {
                    return Ok(None);
                };
                let k = index_key(&exec, ix, exprs, &full[..t.columns.len()], rowid)?;
                // The entry's bytes equal to the key's encoding are the common case; others
                // (e.g. 'A' found for 'a' under NOCASE) are decoded and compared as values.
                encode_to(&k, &mut key);
                if key != entry {
                    let entry = decode(entry)?;
                    if k.len() != entry.len() || order.compare(&k, &entry) != Ordering::Equal {
                        return Ok(None);
                    }
                }
            }
            nrows += 1;
        }
        // Every row found its own entry (rowids are distinct, and `RowidSlots` refused
        // duplicate ones), so equal counts leave no entry without a row.
        if checked
            .iter()
            .any(|(_, _, _, entries, _)| entries.len() != nrows)
        {
            return Ok(None);
        }
        Ok(Some(problems))
    }
}

/// Where each rowid's entry is in an index's entry list: a direct table over the rowid
/// range when it is dense (the usual case, O(1) per row; sorting 500,000 entries by rowid
/// was 372M instructions of test 980), else the positions sorted by rowid and searched.
enum RowidSlots {
    Dense { min: i64, slots: Vec<u32> },
    Sorted(Vec<(i64, u32)>),
}

impl RowidSlots {
    /// None when two entries share a rowid (or there are too many to number); `rowids`
    /// in entry order.
    fn of(rowids: &[i64]) -> Option<RowidSlots> {
        let n = u32::try_from(rowids.len()).ok()?;
        let (Some(&min), Some(&max)) = (rowids.iter().min(), rowids.iter().max()) else {
            return Some(RowidSlots::Sorted(Vec::new()));
        };
        let span = (max as i128 - min as i128 + 1) as u128;
        if span <= 4 * u128::from(n) + 1024 {
            let mut slots = vec![u32::MAX; span as usize];
            for (i, rowid) in rowids.iter().enumerate() {
                let slot = &mut slots[(*rowid - min) as usize];
                if *slot != u32::MAX {
                    return None;
                }
                *slot = i as u32;
            }
            return Some(RowidSlots::Dense { min, slots });
        }
        let mut sorted: Vec<(i64, u32)> = rowids
            .iter()
            .enumerate()
            .map(|(i, rowid)| (*rowid, i as u32))
            .collect();
        sorted.sort_unstable();
        if sorted.windows(2).any(|w| w[0].0 == w[1].0) {
            return None;
        }
        Some(RowidSlots::Sorted(sorted))
    }

    /// The position of `rowid`'s entry.
    fn get(&self, rowid: i64) -> Option<usize> {
        match self {
            RowidSlots::Dense { min, slots } => {
                let off = usize::try_from(rowid.checked_sub(*min)?).ok()?;
                slots
                    .get(off)
                    .filter(|&&i| i != u32::MAX)
                    .map(|&i| i as usize)
            }
            RowidSlots::Sorted(sorted) => sorted
                .binary_search_by_key(&rowid, |(r, _)| *r)
                .ok()
                .map(|k| sorted[k].1 as usize),
        }
    }
}
