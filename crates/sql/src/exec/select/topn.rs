//! The bounded sorter for `ORDER BY ... LIMIT n [OFFSET m]`: keeps only the first
//! `n + m` rows in ORDER BY order as the scan produces them, as SQLite's sorter does when a
//! LIMIT is known (select.c `pushOntoSorter` with `iLimit`), instead of collecting every
//! row and selecting afterwards.
//!
//! Invariants:
//! - The rows kept are exactly the first `cap` rows a stable sort of all rows would give:
//!   rows equal on every sort key keep their arrival (scan) order, which is the order
//!   SQLite's sorter gives them (checked per shape in `tests/topn_sort.rs`). Each row
//!   carries its arrival number, and a row that ties with the worst kept row loses to it.
//! - At most `cap` rows are held; a row that cannot enter is rejected with one comparison
//!   against the heap's top (the worst kept row), and its buffer is reused for the next.
//! - `cap` is at least 1: LIMIT 0 never scans (`run_select_capped`).

use super::sort_cmp;
use crate::exec::store::Row;
use crate::plan::SortKey;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// A kept row and its arrival number; ordered worst-last so the max-heap's top is the row
/// the next better one evicts.
struct Entry<'k> {
    row: Row,
    seq: u64,
    keys: &'k [SortKey],
}

impl Ord for Entry<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        sort_cmp(&self.row, &other.row, self.keys).then_with(|| self.seq.cmp(&other.seq))
    }
}

impl PartialOrd for Entry<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Entry<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Entry<'_> {}

/// The first `cap` rows in ORDER BY order of the rows offered so far.
pub(super) struct TopN<'k> {
    heap: BinaryHeap<Entry<'k>>,
    cap: usize,
    keys: &'k [SortKey],
    seq: u64,
    /// A row buffer to fill with the next row's values: the last rejected or evicted row.
    spare: Row,
}

impl<'k> TopN<'k> {
    pub(super) fn new(cap: usize, keys: &'k [SortKey]) -> Self {
        TopN {
            // The heap grows to `cap` rows at most; 64 bounds what an unreached cap holds.
            heap: BinaryHeap::with_capacity(cap.min(64)),
            cap,
            keys,
            seq: 0,
            spare: Vec::new(),
        }
    }

    /// An empty row buffer for the next offered row (a recycled allocation when one exists).
    pub(super) fn take_buffer(&mut self, width: usize) -> Row {
        let mut r = std::mem::take(&mut self.spare);
        r.clear();
        r.reserve(width);
        r
    }

    /// Offers a row; it is kept when it is among the first `cap` so far.
    pub(super) fn offer(&mut self, row: Row) {
        let seq = self.seq;
        self.seq += 1;
        if self.cap == 0 {
            self.spare = row;
            return;
        }
        if self.heap.len() < self.cap {
            self.heap.push(Entry {
                row,
                seq,
                keys: self.keys,
            });
            return;
        }
        // A later row that ties with the worst kept row sorts after it: rejected.
        let enters = match self.heap.peek() {
            Some(top) => sort_cmp(&row, &top.row, self.keys) == Ordering::Less,
            None => false,
        };
        if !enters {
            self.spare = row;
            return;
        }
        if let Some(mut top) = self.heap.peek_mut() {
            // Replacing the top in place sifts it down once (no pop + push).
            self.spare = std::mem::replace(&mut top.row, row);
            top.seq = seq;
        }
    }

    /// The kept rows in ORDER BY order (ties in arrival order).
    pub(super) fn into_sorted(self) -> Vec<Row> {
        self.heap
            .into_sorted_vec()
            .into_iter()
            .map(|e| e.row)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collation::Collation;
    use crate::value::Value;

    fn key(desc: bool) -> Vec<SortKey> {
        vec![SortKey {
            idx: 0,
            desc,
            nulls_first: !desc,
            coll: Collation::Binary,
        }]
    }

    /// The bounded heap gives a stable sort's first `cap` rows for every cap.
    #[test]
    fn matches_stable_sort_prefix() {
        let rows: Vec<Row> = (0..200i64)
            .map(|i| vec![Value::Integer((i * 7919) % 13), Value::Integer(i)])
            .collect();
        for desc in [false, true] {
            let keys = key(desc);
            let mut full = rows.clone();
            full.sort_by(|a, b| sort_cmp(a, b, &keys));
            for cap in [1usize, 2, 5, 13, 50, 199, 200, 500] {
                let mut t = TopN::new(cap, &keys);
                for r in &rows {
                    let mut b = t.take_buffer(2);
                    b.extend_from_slice(r);
                    t.offer(b);
                }
                let got = t.into_sorted();
                assert_eq!(
                    got,
                    full[..cap.min(full.len())].to_vec(),
                    "cap {cap} desc {desc}"
                );
            }
        }
    }
}
