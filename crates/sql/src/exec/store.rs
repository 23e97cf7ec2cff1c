//! The executor's view of storage: tables of rows keyed by rowid and indexes of keys, in
//! terms of `Value`s rather than record bytes.
//!
//! Invariants:
//! - An index key is the indexed column values followed by the rowid; keys are ordered by
//!   `KeyOrder` (per-column collation and direction, rowid last, ascending, BINARY).
//! - Range bounds on an index are key *prefixes*: a bound with k fields compares only the
//!   first k fields of each stored key (storage-api.md's seek semantics), so `Included(p)`
//!   on both ends selects every key that starts with `p`.
//! - Iterators returned here own what they need (a transaction handle or a copy), so the
//!   executor can hold several at once; callers never modify a tree while iterating it
//!   (DML collects rowids first).

use super::without_rowid::WrLayout;
use crate::collation::Collation;
use crate::value::{Result, Value};
use std::cmp::Ordering;
use std::ops::Bound;
use std::sync::Arc;

pub type Row = Vec<Value>;

/// Counters from a database file's header (fileformat2.html, "The Database Header").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileHeader {
    pub page_count: u32,
    pub freelist_count: u32,
    pub application_id: u32,
    pub page_size: u32,
}

/// How an index orders its keys: one entry per indexed column (the rowid follows, BINARY
/// ascending).
#[derive(Debug, Clone, PartialEq)]
pub struct KeyOrder {
    pub columns: Vec<(Collation, bool)>,
}

impl KeyOrder {
    /// Compares two keys over the shorter one's fields (prefix semantics).
    pub fn compare(&self, a: &[Value], b: &[Value]) -> Ordering {
        for (i, (x, y)) in a.iter().zip(b.iter()).enumerate() {
            let (coll, desc) = self
                .columns
                .get(i)
                .copied()
                .unwrap_or((Collation::Binary, false));
            let o = x.compare(y, coll);
            if o != Ordering::Equal {
                return if desc { o.reverse() } else { o };
            }
        }
        Ordering::Equal
    }

    /// Sorts index keys by this order. Each key is tagged with a sort prefix of its first
    /// field (storage class, then eight bytes of the value where the order of those bytes
    /// is the field's order), so most comparisons never reach `compare`: comparing the
    /// `Value`s of every pair cost ~250 instructions a comparison (callgrind, speedtest1
    /// test 300's bulk INSERT; test 150's CREATE INDEX sorted so too, 1,374M -> 1,279M with
    /// the column mask of `populate_index`). Prefixes never contradict `compare`; equal
    /// ones fall back to it.
    pub fn sort(&self, keys: &mut Vec<Row>) {
        let (coll, desc) = self
            .columns
            .first()
            .copied()
            .unwrap_or((Collation::Binary, false));
        // An integer's exact bits would misorder it against a real: with any real in the
        // first field, every number gets the same prefix.
        let any_real = keys
            .iter()
            .any(|k| matches!(k.first(), Some(Value::Real(_))));
        let mut tagged: Vec<(u8, u64, Vec<Value>)> = std::mem::take(keys)
            .into_iter()
            .map(|k| {
                let (class, bits) = match k.first() {
                    None | Some(Value::Null) => (0u8, 0u64),
                    Some(Value::Integer(i)) if !any_real => (1, (*i as u64) ^ (1 << 63)),
                    Some(Value::Integer(_) | Value::Real(_)) => (1, 0),
                    Some(Value::Text(s)) if coll == Collation::Binary => {
                        (2, leading_bytes(s.as_bytes()))
                    }
                    Some(Value::Text(_)) => (2, 0),
                    Some(Value::Blob(b)) => (3, leading_bytes(b)),
                };
                match desc {
                    true => (3 - class, !bits, k),
                    false => (class, bits, k),
                }
            })
            .collect();
        tagged.sort_unstable_by(|a, b| {
            (a.0, a.1)
                .cmp(&(b.0, b.1))
                .then_with(|| self.compare(&a.2, &b.2))
        });
        keys.extend(tagged.into_iter().map(|(_, _, k)| k));
    }
}

/// The first eight bytes of `b` as a big-endian number, zero-padded: a shorter string
/// that is a prefix of a longer one never gets the larger number.
fn leading_bytes(b: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    let n = b.len().min(8);
    w[..n].copy_from_slice(&b[..n]);
    u64::from_be_bytes(w)
}

/// Records (index keys as stored) held in one arena: a `Vec` per record was an
/// allocation each.
#[derive(Default)]
pub struct KeyRecords {
    /// Where each record ends in `arena`; it starts where the previous one ends.
    ends: Vec<usize>,
    arena: Vec<u8>,
}

impl KeyRecords {
    pub fn clear(&mut self) {
        self.ends.clear();
        self.arena.clear();
    }
    pub fn push(&mut self, rec: &[u8]) {
        self.arena.extend_from_slice(rec);
        self.ends.push(self.arena.len());
    }
    pub fn len(&self) -> usize {
        self.ends.len()
    }
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }
    /// The `i`th record.
    pub fn get(&self, i: usize) -> Option<&[u8]> {
        let end = *self.ends.get(i)?;
        let start = match i {
            0 => 0,
            _ => self.ends[i - 1],
        };
        self.arena.get(start..end)
    }
}

pub type RowIter = Box<dyn Iterator<Item = Result<(i64, Row)>>>;
pub type KeyIter = Box<dyn Iterator<Item = Result<Row>>>;

/// A test of a row on its record bytes (see `RowScan::next_match`).
pub type RecordPre<'a> = dyn FnMut(i64, &[u8]) -> Option<bool> + 'a;

/// A table scan that writes each row's stored fields straight into the caller's slots (a
/// part of the executor's combined row) instead of allocating a `Row` per step.
pub trait RowScan {
    /// Moves to the next row in the range: writes the record's leading fields into `cols`
    /// (at most `cols.len()`; as with `table_range_cols`, fields not flagged in the scan's
    /// `needed` mask may read NULL and the fields after the last needed one may be left
    /// unwritten) and returns the rowid and how many fields it wrote. None past the end.
    fn next_into(&mut self, cols: &mut [Value]) -> Result<Option<(i64, usize)>>;

    /// Like `next_into` into `row[start..start + ncols]`, but steps past the rows `keep`
    /// rejects. Each row is decoded in two passes: first the fields flagged in `early` (the
    /// ones `keep` reads; the other slots may hold stale values when `keep` runs), then,
    /// once `keep` took the row, the rest of the scan's `needed` ones. `keep` gets the
    /// whole `row`, the rowid and how many fields the first pass covered; it must not use
    /// the store, because a scan may call it under its transaction's lock. Returns the
    /// rowid and how many fields the row's slots now cover, as `next_into`.
    ///
    /// `pre`, when given, sees each row's record bytes before anything is decoded (with
    /// the rowid): `Some(false)` rejects the row, `Some(true)` accepts it without
    /// `keep` (only the `needed` fields are then decoded), `None` goes on as above. A scan
    /// that has no record bytes at hand may ignore it.
    fn next_match(
        &mut self,
        row: &mut [Value],
        start: usize,
        ncols: usize,
        early: &[bool],
        pre: Option<&mut RecordPre<'_>>,
        keep: &mut dyn FnMut(&mut [Value], i64, usize) -> Result<bool>,
    ) -> Result<Option<(i64, usize)>> {
        let _ = (early, pre);
        loop {
            let Some((rowid, k)) = self.next_into(&mut row[start..start + ncols])? else {
                return Ok(None);
            };
            if keep(row, rowid, k)? {
                return Ok(Some((rowid, k)));
            }
        }
    }

    /// Starts the walk again over new bounds on the same trees (an index walk of
    /// `Store::index_lookup_scan` or `index_covering_scan` that a join level keeps across
    /// its outer rows): its cursors stay, so a seek near the previous one can stay in the
    /// same leaf. The bounds are taken (left `Unbounded`) only when it restarts; false
    /// when the scan cannot, and the caller then builds a new one with them.
    fn restart(&mut self, lo: &mut Bound<Row>, hi: &mut Bound<Row>, one_key: bool) -> Result<bool> {
        let _ = (lo, hi, one_key);
        Ok(false)
    }

    /// The rows of the scan's bounds, emptied, for the caller to build the next
    /// `restart`'s bounds in (their allocations reused); empty rows when it has none.
    fn take_bound_rows(&mut self) -> (Row, Row) {
        Default::default()
    }

    /// Lets go of the store that made the scan, so that the walk can be kept between
    /// executions of its statement (a kept walk of the top-level SELECT, `CachedPlan`):
    /// its cursors parked (no page images of the finished transaction), nothing it shares
    /// with the store left (the `Send` argument of `CachedPlan` rests on this). false when
    /// the scan cannot be kept; the caller drops it.
    fn detach(&mut self) -> bool {
        false
    }

    /// Readies a detached scan (`detach`) for `store`'s transaction (the store the walk's
    /// trees are on, `Store::attach_scan`); a `restart` follows before any step. false
    /// when `store` is not the kind of store that made the scan.
    fn attach(&mut self, store: &dyn std::any::Any) -> Result<bool> {
        let _ = store;
        Ok(false)
    }
}

/// What `Store::index_lookup_scan` walks: the keys of one index between two bounds (as
/// `index_range`), and for each the row of the rowid table it points at. The order is
/// borrowed from the plan: a join builds one of these per outer row, and a `KeyOrder` clone
/// was an allocation each (speedtest1 test 310).
pub struct IndexLookup<'o> {
    pub index_root: u32,
    pub order: &'o KeyOrder,
    pub lo: Bound<Row>,
    pub hi: Bound<Row>,
    pub reverse: bool,
    pub table_root: u32,
    /// How many indexed columns precede the rowid in each key.
    pub key_cols: usize,
    /// Stop after the first key (every column of a UNIQUE index fixed by `=`).
    pub one_key: bool,
    /// Table columns to decode (as `table_get_cols`); `None`: all.
    pub needed: Option<Arc<[bool]>>,
}

/// Membership tests against one index through one cursor reused across probes
/// (integrity_check probes every index once per table row, as SQLite's OP_Found does).
pub trait IndexProbe {
    /// Whether the index holds an entry equal to the whole of `key` (its columns then the
    /// rowid) under the index's order.
    fn contains(&mut self, key: &[Value]) -> Result<bool>;
}

/// `IndexProbe` as a closure, for stores without a probe of their own.
struct FnProbe<F>(F);

impl<F: FnMut(&[Value]) -> Result<bool>> IndexProbe for FnProbe<F> {
    fn contains(&mut self, key: &[Value]) -> Result<bool> {
        (self.0)(key)
    }
}

/// `RowScan` over a `RowIter`, for stores without a scan of their own.
struct IterScan(RowIter);

impl RowScan for IterScan {
    fn next_into(&mut self, cols: &mut [Value]) -> Result<Option<(i64, usize)>> {
        let Some(r) = self.0.next() else {
            return Ok(None);
        };
        let (rowid, vals) = r?;
        let mut k = 0;
        for (slot, v) in cols.iter_mut().zip(vals) {
            *slot = v;
            k += 1;
        }
        Ok(Some((rowid, k)))
    }
}

/// What `Store::index_replace_unique` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UniqueReplace {
    Inserted,
    /// The entry of the row with this rowid was overwritten by the new key.
    Replaced(i64),
    /// An entry starts with the prefix; nothing was written.
    Clash,
}

/// One database's B-trees as the executor uses them, inside one transaction.
pub trait Store {
    fn create_table_btree(&self) -> Result<u32>;
    fn create_index_btree(&self) -> Result<u32>;
    fn drop_btree(&self, root: u32) -> Result<()>;
    fn clear_btree(&self, root: u32) -> Result<()>;
    /// `clear_btree` that also says how many entries the tree held (DELETE without WHERE
    /// reports them as changes, as SQLite's truncate optimization does).
    fn clear_counting(&self, root: u32, table: bool) -> Result<u64> {
        let n = if table {
            self.table_range(root, Bound::Unbounded, Bound::Unbounded, false)?
                .count() as u64
        } else {
            let any = KeyOrder {
                columns: Vec::new(),
            };
            self.index_range(root, &any, Bound::Unbounded, Bound::Unbounded, false)?
                .count() as u64
        };
        self.clear_btree(root)?;
        Ok(n)
    }

    /// Rows with rowid in `lo..hi`, ascending (descending when `reverse`).
    fn table_range(
        &self,
        root: u32,
        lo: Bound<i64>,
        hi: Bound<i64>,
        reverse: bool,
    ) -> Result<RowIter>;
    fn table_get(&self, root: u32, rowid: i64) -> Result<Option<Row>>;
    /// Like `table_range`, but only the columns flagged in `needed` must hold their stored
    /// values: the others may read as NULL, and a row may end after its last needed column
    /// (callers pad short rows). Columns past the end of `needed` are not needed.
    fn table_range_cols(
        &self,
        root: u32,
        lo: Bound<i64>,
        hi: Bound<i64>,
        reverse: bool,
        needed: Arc<[bool]>,
    ) -> Result<RowIter> {
        let _ = needed;
        self.table_range(root, lo, hi, reverse)
    }
    /// `table_get` of the row an UPDATE or DELETE is about to write: a store may keep the
    /// row's position so that the statement's `table_insert` or `table_delete` of this
    /// rowid, when nothing else was written in between, starts there.
    fn table_get_for_write(&self, root: u32, rowid: i64) -> Result<Option<Row>> {
        self.table_get(root, rowid)
    }
    /// Like `table_get`, decoding only the `needed` columns (as `table_range_cols`).
    fn table_get_cols(&self, root: u32, rowid: i64, needed: &[bool]) -> Result<Option<Row>> {
        let _ = needed;
        self.table_get(root, rowid)
    }
    /// `table_range_cols` (or `table_range` without a mask) as a [`RowScan`].
    fn table_scan(
        &self,
        root: u32,
        lo: Bound<i64>,
        hi: Bound<i64>,
        reverse: bool,
        needed: Option<Arc<[bool]>>,
    ) -> Result<Box<dyn RowScan>> {
        let it = match needed {
            Some(n) => self.table_range_cols(root, lo, hi, reverse, n)?,
            None => self.table_range(root, lo, hi, reverse)?,
        };
        Ok(Box::new(IterScan(it)))
    }
    /// The row with `rowid` as a [`RowScan`] of at most one row (`table_scan` of the
    /// one-rowid range).
    fn table_lookup_scan(
        &self,
        root: u32,
        rowid: i64,
        needed: Option<Arc<[bool]>>,
    ) -> Result<Box<dyn RowScan>> {
        let one = Bound::Included(rowid);
        self.table_scan(root, one, one, false, needed)
    }
    fn table_max_rowid(&self, root: u32) -> Result<Option<i64>>;
    /// Inserts or replaces the row with this rowid.
    fn table_insert(&self, root: u32, rowid: i64, row: &[Value]) -> Result<()>;
    fn table_delete(&self, root: u32, rowid: i64) -> Result<bool>;
    /// Deletes the row and hands back its stored values; None, deleting nothing, when
    /// there is no such row. Stores over B-trees read and delete in one descent.
    fn table_take(&self, root: u32, rowid: i64) -> Result<Option<Row>> {
        let row = self.table_get(root, rowid)?;
        if row.is_some() {
            self.table_delete(root, rowid)?;
        }
        Ok(row)
    }

    fn index_insert(&self, root: u32, key: &[Value], order: &KeyOrder) -> Result<()>;
    fn index_delete(&self, root: u32, key: &[Value], order: &KeyOrder) -> Result<bool>;
    /// Replaces the index entry equal to `old` by `new`; false, writing nothing, when
    /// there is none. Stores over B-trees write `new` over `old` in one descent when it
    /// sorts where `old` lies (a key that differs only in its rowid, mostly).
    fn index_rekey(
        &self,
        root: u32,
        old: &[Value],
        new: &[Value],
        order: &KeyOrder,
    ) -> Result<bool> {
        if !self.index_delete(root, old, order)? {
            return Ok(false);
        }
        self.index_insert(root, new, order)?;
        Ok(true)
    }
    /// Writes `key`, replacing the entry that starts with its first `prefix_len` values
    /// (none NULL; at most one entry does) if there is one: a WITHOUT ROWID table's row
    /// written by REPLACE by its PRIMARY KEY. Stores over B-trees overwrite the entry
    /// where it lies, in one descent.
    fn index_put(
        &self,
        root: u32,
        key: &[Value],
        prefix_len: usize,
        order: &KeyOrder,
    ) -> Result<()> {
        self.index_delete(root, &key[..prefix_len.min(key.len())], order)?;
        self.index_insert(root, key, order)
    }
    /// Inserts `key` into a UNIQUE index unless an entry starts with its first `prefix_len`
    /// values (none of them NULL); false, writing nothing, when one does. Stores over
    /// B-trees check and insert in one descent.
    fn index_insert_unique(
        &self,
        root: u32,
        key: &[Value],
        prefix_len: usize,
        order: &KeyOrder,
    ) -> Result<bool> {
        let p = key[..prefix_len.min(key.len())].to_vec();
        if self
            .index_range(
                root,
                order,
                Bound::Included(p.clone()),
                Bound::Included(p),
                false,
            )?
            .next()
            .transpose()?
            .is_some()
        {
            return Ok(false);
        }
        self.index_insert(root, key, order)?;
        Ok(true)
    }
    /// REPLACE's write of `key` into a UNIQUE index of a rowid table: inserted when no
    /// entry starts with its first `prefix_len` values (none NULL); else, where the store
    /// can, the clashing entry is overwritten by `key` in place and its rowid returned
    /// (the caller deletes that row but not this entry); else `Clash`, nothing written.
    fn index_replace_unique(
        &self,
        root: u32,
        key: &[Value],
        prefix_len: usize,
        order: &KeyOrder,
    ) -> Result<UniqueReplace> {
        Ok(if self.index_insert_unique(root, key, prefix_len, order)? {
            UniqueReplace::Inserted
        } else {
            UniqueReplace::Clash
        })
    }
    /// Appends to `out` the rowid (last field) of each entry that starts with `prefix` (no
    /// NULL in it): a UNIQUE index's conflict probe. Stores over B-trees answer in one
    /// descent without building an iterator.
    fn index_prefix_rowids(
        &self,
        root: u32,
        order: &KeyOrder,
        prefix: &[Value],
        out: &mut Vec<i64>,
    ) -> Result<()> {
        let p = prefix.to_vec();
        for e in self.index_range(
            root,
            order,
            Bound::Included(p.clone()),
            Bound::Included(p),
            false,
        )? {
            if let Some(Value::Integer(r)) = e?.last() {
                out.push(*r);
            }
        }
        Ok(())
    }
    /// The first entry (in key order) that starts with `prefix`: a WITHOUT ROWID table's
    /// row found by its PRIMARY KEY. Stores over B-trees answer in one descent without
    /// building an iterator.
    fn index_first_with_prefix(
        &self,
        root: u32,
        order: &KeyOrder,
        prefix: &[Value],
    ) -> Result<Option<Row>> {
        let p = prefix.to_vec();
        self.index_range(
            root,
            order,
            Bound::Included(p.clone()),
            Bound::Included(p),
            false,
        )?
        .next()
        .transpose()
    }
    /// Keys between the prefix bounds, ascending (descending when `reverse`).
    fn index_range(
        &self,
        root: u32,
        order: &KeyOrder,
        lo: Bound<Row>,
        hi: Bound<Row>,
        reverse: bool,
    ) -> Result<KeyIter>;
    /// The rows an index walk finds (`IndexLookup`), each written into the caller's slots
    /// as `RowScan` does, without a `Row` per key or per row; a key whose row is missing is
    /// skipped. `None` when the store has no such path: the caller then walks
    /// `index_range` and looks each row up.
    fn index_lookup_scan(&self, _walk: IndexLookup<'_>) -> Result<Option<Box<dyn RowScan>>> {
        Ok(None)
    }
    /// The rows of a covering index walk (`plan::covering`; `walk.table_root` and
    /// `walk.needed` unused): each entry's fields written into the caller's slots
    /// `columns[i]` (the table column of key field `i`; `None` for an expression), every
    /// other slot NULL, the rowid read from the entry, no table lookup; each row covers
    /// all the slots. `None` when the store has no such path (the caller walks
    /// `index_range`).
    fn index_covering_scan(
        &self,
        _walk: IndexLookup<'_>,
        _columns: Vec<Option<usize>>,
    ) -> Result<Option<Box<dyn RowScan>>> {
        Ok(None)
    }
    /// The rows of a walk of a WITHOUT ROWID table's own tree (`walk.index_root` is the
    /// table's root; `walk.table_root` and `walk.key_cols` unused): each record's fields
    /// written into the slots of their columns (`layout.record`), the `walk.needed` ones
    /// at least, every other slot NULL, as `RowScan` does with rowid 0 and the count of
    /// record fields read. `None` when the store has no such path (the caller walks
    /// `index_range`).
    fn without_rowid_scan(
        &self,
        _walk: IndexLookup<'_>,
        _layout: Arc<WrLayout>,
    ) -> Result<Option<Box<dyn RowScan>>> {
        Ok(None)
    }
    /// `RowScan::attach` of a detached walk whose index (or WITHOUT ROWID table) is at
    /// `root`, to the store that holds that tree; false when it cannot be (the caller
    /// drops the walk and builds a new one when it needs it).
    fn attach_scan(&self, root: u32, scan: &mut dyn RowScan) -> Result<bool> {
        let _ = (root, scan);
        Ok(false)
    }
    /// How many entries the index at `root` holds.
    fn index_entry_count(&self, root: u32, order: &KeyOrder) -> Result<usize> {
        Ok(self
            .index_range(root, order, Bound::Unbounded, Bound::Unbounded, false)?
            .count())
    }
    /// ANALYZE's figures for the index at `root`: how many entries it holds and, for each
    /// k in 1..=`ncols`, how many distinct values the first k fields take, comparing each
    /// field under `order`'s collation, NULLs equal (SQLite's analyze.c, OP_Ne with
    /// SQLITE_NULLEQ). Entries come in index order, so a prefix is new exactly when it
    /// differs from the previous entry's.
    fn index_prefix_counts(
        &self,
        root: u32,
        order: &KeyOrder,
        ncols: usize,
    ) -> Result<(u64, Vec<u64>)> {
        let mut distinct = vec![0u64; ncols];
        let mut prev: Option<Row> = None;
        let mut nkeys = 0u64;
        for k in self.index_range(root, order, Bound::Unbounded, Bound::Unbounded, false)? {
            let k = k?;
            nkeys += 1;
            let same = match &prev {
                None => 0,
                Some(p) => (0..ncols)
                    .find(|&i| {
                        let coll = order.columns.get(i).map_or(Collation::Binary, |c| c.0);
                        match (p.get(i), k.get(i)) {
                            (Some(x), Some(y)) => x.compare(y, coll) != Ordering::Equal,
                            _ => true,
                        }
                    })
                    .unwrap_or(ncols),
            };
            for d in distinct.iter_mut().skip(same) {
                *d += 1;
            }
            prev = Some(k);
        }
        Ok((nkeys, distinct))
    }
    /// The entries of the index at `root` as stored records, in index order, into `out`
    /// (cleared first): true when they strictly increase under `order` and number at most
    /// `max`, false (`out` then incomplete) otherwise. `PRAGMA integrity_check` holds
    /// each index so (pragma/integrity.rs).
    fn index_records(
        &self,
        root: u32,
        order: &KeyOrder,
        max: usize,
        out: &mut KeyRecords,
    ) -> Result<bool> {
        out.clear();
        let mut prev: Option<Row> = None;
        for k in self.index_range(root, order, Bound::Unbounded, Bound::Unbounded, false)? {
            let k = k?;
            if out.len() == max || prev.is_some_and(|p| order.compare(&p, &k) != Ordering::Less) {
                return Ok(false);
            }
            out.push(&super::txnstore::encode(&k));
            prev = Some(k);
        }
        Ok(true)
    }
    /// How many rows the rowid table at `root` holds.
    fn table_row_count(&self, root: u32) -> Result<u64> {
        // No field is decoded (an empty column mask).
        let none: Arc<[bool]> = Arc::new([]);
        let mut n = 0;
        for r in self.table_range_cols(root, Bound::Unbounded, Bound::Unbounded, false, none)? {
            r?;
            n += 1;
        }
        Ok(n)
    }
    /// An [`IndexProbe`] on the index at `root`.
    fn index_probe(&self, root: u32, order: &KeyOrder) -> Result<Box<dyn IndexProbe + '_>> {
        let order = order.clone();
        Ok(Box::new(FnProbe(move |key: &[Value]| {
            let k = key.to_vec();
            Ok(self
                .index_range(
                    root,
                    &order,
                    Bound::Included(k.clone()),
                    Bound::Included(k),
                    false,
                )?
                .next()
                .transpose()?
                .is_some())
        })))
    }

    /// Copies every row of table `src` into the empty table `dst` of the same database,
    /// records as stored (VACUUM); returns the number of rows. Stores over B-trees build
    /// `dst` bottom up from the raw records (no decode, no descent per row).
    fn table_copy(&self, src: u32, dst: u32) -> Result<u64> {
        let mut n = 0;
        for r in self.table_range(src, Bound::Unbounded, Bound::Unbounded, false)? {
            let (rowid, row) = r?;
            self.table_insert(dst, rowid, &row)?;
            n += 1;
        }
        Ok(n)
    }

    /// Copies every entry of index `src` into the empty index `dst` of the same database
    /// (same `order`), as `table_copy` does for tables.
    fn index_copy(&self, src: u32, dst: u32, order: &KeyOrder) -> Result<u64> {
        let mut n = 0;
        for k in self.index_range(src, order, Bound::Unbounded, Bound::Unbounded, false)? {
            self.index_insert(dst, &k?, order)?;
            n += 1;
        }
        Ok(n)
    }

    /// VACUUM that leaves no free page (lang_vacuum.html): reads every tree in `trees`
    /// (root, key order; `None` for a rowid table) and the schema tree on page 1, empties
    /// the database down to page 1, puts the schema rows back as they were and rebuilds
    /// each tree, in order, on fresh pages; returns the new roots in the same order (the
    /// caller rewrites the schema rows' root numbers). `trees` must name every tree of the
    /// database but page 1: the others' pages are gone afterwards. `None`: this store
    /// cannot, and VACUUM copies tree by tree instead (the file keeps its size).
    fn vacuum_compact(&self, trees: &[(u32, Option<KeyOrder>)]) -> Result<Option<Vec<u32>>> {
        let _ = trees;
        Ok(None)
    }

    /// Fills the empty index `root` with `keys`, which are distinct and sorted by `order`
    /// (CREATE INDEX after its sort). Stores over B-trees build the tree bottom up.
    fn index_fill(&self, root: u32, order: &KeyOrder, keys: Vec<Row>) -> Result<()> {
        for k in keys {
            self.index_insert(root, &k, order)?;
        }
        Ok(())
    }

    /// Adds `keys` (distinct, sorted by `order`) to the index at `root`, which may hold
    /// entries (a bulk INSERT into a non-empty table, dml/bulk_insert.rs). With `unique`
    /// = Some(n), a key whose first n fields are all non-NULL and equal a stored entry's
    /// (under `order`) makes it write nothing and answer false. Stores over B-trees
    /// rebuild the tree bottom up from the stored entries merged with the keys; this
    /// default checks every key first, then inserts them one by one.
    fn index_merge(
        &self,
        root: u32,
        order: &KeyOrder,
        keys: Vec<Row>,
        unique: Option<usize>,
    ) -> Result<bool> {
        if let Some(n) = unique {
            let mut clash = Vec::new();
            for k in &keys {
                let prefix = &k[..n.min(k.len())];
                if prefix.iter().any(Value::is_null) {
                    continue;
                }
                self.index_prefix_rowids(root, order, prefix, &mut clash)?;
                if !clash.is_empty() {
                    return Ok(false);
                }
            }
        }
        for k in keys {
            self.index_insert(root, &k, order)?;
        }
        Ok(true)
    }

    /// Fills the empty table `root` with `rows` (rowid, record values), in strictly
    /// ascending rowid order (a bulk INSERT into an empty table, dml/bulk_insert.rs).
    /// Stores over B-trees build the tree bottom up.
    fn table_fill(&self, root: u32, rows: &[(i64, Row)]) -> Result<()> {
        for (rowid, rec) in rows {
            self.table_insert(root, *rowid, rec)?;
        }
        Ok(())
    }

    /// The file header's counters of the database whose root bits are `db` (`PRAGMA
    /// page_count`, `freelist_count`, `application_id`, `page_size`). Stores without a file
    /// say so rather than invent figures.
    fn file_header_in(&self, db: u32) -> Result<FileHeader> {
        let _ = db;
        Err(crate::value::SqlError::msg(
            "this store has no database file header",
        ))
    }
    /// Sets the header's application id (offset 68) of the database `db`.
    fn set_application_id_in(&self, db: u32, v: u32) -> Result<()> {
        let _ = (db, v);
        Err(crate::value::SqlError::msg(
            "this store has no database file header",
        ))
    }

    fn schema_cookie(&self) -> Result<u32>;
    fn set_schema_cookie(&self, v: u32) -> Result<()>;
    fn user_version(&self) -> Result<u32>;
    fn set_user_version(&self, v: u32) -> Result<()>;

    fn savepoint(&self) -> Result<u32>;
    fn rollback_to(&self, sp: u32) -> Result<()>;
    fn release(&self, sp: u32) -> Result<()>;

    /// Whether TEMP objects can be created (a connection-private temp database is attached).
    fn has_temp(&self) -> bool {
        false
    }
    /// B-trees in the temp database; their roots carry `TEMP_ROOT_BIT`.
    fn create_temp_table_btree(&self) -> Result<u32> {
        Err(crate::value::SqlError::msg(
            "TEMP objects are not available on this connection",
        ))
    }
    fn create_temp_index_btree(&self) -> Result<u32> {
        Err(crate::value::SqlError::msg(
            "TEMP objects are not available on this connection",
        ))
    }

    /// A new B-tree in the database whose root bits are `db` (`db_bits`): 0 is main, an
    /// attached database's bits route to it. The returned root carries `db`.
    fn create_btree_in(&self, db: u32, index: bool) -> Result<u32> {
        match (db, index) {
            (0, false) => self.create_table_btree(),
            (0, true) => self.create_index_btree(),
            _ => Err(no_database(db)),
        }
    }
    /// The schema cookie of the database whose root bits are `db`.
    fn schema_cookie_in(&self, db: u32) -> Result<u32> {
        if db == 0 {
            self.schema_cookie()
        } else {
            Err(no_database(db))
        }
    }
    fn set_schema_cookie_in(&self, db: u32, v: u32) -> Result<()> {
        if db == 0 {
            self.set_schema_cookie(v)
        } else {
            Err(no_database(db))
        }
    }
    fn user_version_in(&self, db: u32) -> Result<u32> {
        if db == 0 {
            self.user_version()
        } else {
            Err(no_database(db))
        }
    }
    fn set_user_version_in(&self, db: u32, v: u32) -> Result<()> {
        if db == 0 {
            self.set_user_version(v)
        } else {
            Err(no_database(db))
        }
    }
}

pub(crate) fn no_database(db: u32) -> crate::value::SqlError {
    crate::value::SqlError::msg(format!(
        "internal error: no attached database for root bits {db:#x}"
    ))
}

/// Marks a root page as belonging to the temp database. SQLite page numbers stay far below
/// 2^31 for any database this engine can address, so the bit is free.
pub const TEMP_ROOT_BIT: u32 = 0x8000_0000;

/// Marks a root page as belonging to an attached database (lang_attach.html): bits 27..30
/// hold the database's attach slot plus one (1..=10), so at most `ATTACHED_MAX` databases
/// are attached and an attached database's own root pages must stay below 2^27
/// (`ATTACHED_ROOT_MAX`; 512 GiB at 4 KiB pages). Slots follow attach order and are
/// renumbered on DETACH, which reloads the schema and so drops every plan holding roots.
pub const ATTACHED_SHIFT: u32 = 27;
pub const ATTACHED_MASK: u32 = 0x7800_0000;
pub const ATTACHED_MAX: usize = 10;
pub const ATTACHED_ROOT_MAX: u32 = 1 << ATTACHED_SHIFT;

/// The root bits of attach slot `slot` (0-based, attach order).
pub fn attached_bits(slot: usize) -> u32 {
    ((slot as u32 + 1) << ATTACHED_SHIFT) & ATTACHED_MASK
}

/// The attach slot of a root, None for main and temp roots.
pub fn attached_slot(root: u32) -> Option<usize> {
    if root & TEMP_ROOT_BIT != 0 {
        return None;
    }
    match (root & ATTACHED_MASK) >> ATTACHED_SHIFT {
        0 => None,
        n => Some(n as usize - 1),
    }
}

/// The database bits of a root: 0 (main), `TEMP_ROOT_BIT` or an attached slot's bits.
pub fn db_bits(root: u32) -> u32 {
    if root & TEMP_ROOT_BIT != 0 {
        TEMP_ROOT_BIT
    } else {
        root & ATTACHED_MASK
    }
}

/// Routes each tree operation to the main, the temp or an attached database by the root's
/// database bits; header fields and savepoints are the main database's (the connection
/// coordinates the temp and attached databases' own savepoints).
pub struct RoutedStore<'a> {
    pub main: &'a dyn Store,
    pub temp: Option<&'a dyn Store>,
    /// Attached databases in attach order (slot i has `attached_bits(i)`).
    pub attached: Vec<&'a dyn Store>,
}

impl RoutedStore<'_> {
    fn attached_store(&self, db: u32) -> Result<&dyn Store> {
        attached_slot(db)
            .and_then(|i| self.attached.get(i).copied())
            .ok_or_else(|| no_database(db))
    }

    fn pick(&self, root: u32) -> Result<(&dyn Store, u32)> {
        if root & TEMP_ROOT_BIT == 0 && root & ATTACHED_MASK != 0 {
            return Ok((self.attached_store(root)?, root & !ATTACHED_MASK));
        }
        if root & TEMP_ROOT_BIT != 0 {
            match self.temp {
                Some(t) => Ok((t, root & !TEMP_ROOT_BIT)),
                None => Err(crate::value::SqlError::msg(
                    "TEMP objects are not available on this connection",
                )),
            }
        } else {
            Ok((self.main, root))
        }
    }
}

impl Store for RoutedStore<'_> {
    fn create_table_btree(&self) -> Result<u32> {
        self.main.create_table_btree()
    }
    fn create_index_btree(&self) -> Result<u32> {
        self.main.create_index_btree()
    }
    fn drop_btree(&self, root: u32) -> Result<()> {
        let (s, r) = self.pick(root)?;
        s.drop_btree(r)
    }
    fn clear_btree(&self, root: u32) -> Result<()> {
        let (s, r) = self.pick(root)?;
        s.clear_btree(r)
    }
    fn clear_counting(&self, root: u32, table: bool) -> Result<u64> {
        let (s, r) = self.pick(root)?;
        s.clear_counting(r, table)
    }
    fn table_range(
        &self,
        root: u32,
        lo: Bound<i64>,
        hi: Bound<i64>,
        reverse: bool,
    ) -> Result<RowIter> {
        let (s, r) = self.pick(root)?;
        s.table_range(r, lo, hi, reverse)
    }
    fn table_get(&self, root: u32, rowid: i64) -> Result<Option<Row>> {
        let (s, r) = self.pick(root)?;
        s.table_get(r, rowid)
    }
    fn table_get_for_write(&self, root: u32, rowid: i64) -> Result<Option<Row>> {
        let (s, r) = self.pick(root)?;
        s.table_get_for_write(r, rowid)
    }
    fn table_range_cols(
        &self,
        root: u32,
        lo: Bound<i64>,
        hi: Bound<i64>,
        reverse: bool,
        needed: Arc<[bool]>,
    ) -> Result<RowIter> {
        let (s, r) = self.pick(root)?;
        s.table_range_cols(r, lo, hi, reverse, needed)
    }
    fn table_get_cols(&self, root: u32, rowid: i64, needed: &[bool]) -> Result<Option<Row>> {
        let (s, r) = self.pick(root)?;
        s.table_get_cols(r, rowid, needed)
    }
    fn table_scan(
        &self,
        root: u32,
        lo: Bound<i64>,
        hi: Bound<i64>,
        reverse: bool,
        needed: Option<Arc<[bool]>>,
    ) -> Result<Box<dyn RowScan>> {
        let (s, r) = self.pick(root)?;
        s.table_scan(r, lo, hi, reverse, needed)
    }
    fn table_lookup_scan(
        &self,
        root: u32,
        rowid: i64,
        needed: Option<Arc<[bool]>>,
    ) -> Result<Box<dyn RowScan>> {
        let (s, r) = self.pick(root)?;
        s.table_lookup_scan(r, rowid, needed)
    }
    fn table_max_rowid(&self, root: u32) -> Result<Option<i64>> {
        let (s, r) = self.pick(root)?;
        s.table_max_rowid(r)
    }
    fn table_insert(&self, root: u32, rowid: i64, row: &[Value]) -> Result<()> {
        let (s, r) = self.pick(root)?;
        s.table_insert(r, rowid, row)
    }
    fn table_delete(&self, root: u32, rowid: i64) -> Result<bool> {
        let (s, r) = self.pick(root)?;
        s.table_delete(r, rowid)
    }
    fn table_take(&self, root: u32, rowid: i64) -> Result<Option<Row>> {
        let (s, r) = self.pick(root)?;
        s.table_take(r, rowid)
    }
    fn index_insert(&self, root: u32, key: &[Value], order: &KeyOrder) -> Result<()> {
        let (s, r) = self.pick(root)?;
        s.index_insert(r, key, order)
    }
    fn index_rekey(
        &self,
        root: u32,
        old: &[Value],
        new: &[Value],
        order: &KeyOrder,
    ) -> Result<bool> {
        let (s, r) = self.pick(root)?;
        s.index_rekey(r, old, new, order)
    }
    fn index_put(
        &self,
        root: u32,
        key: &[Value],
        prefix_len: usize,
        order: &KeyOrder,
    ) -> Result<()> {
        let (s, r) = self.pick(root)?;
        s.index_put(r, key, prefix_len, order)
    }
    fn index_delete(&self, root: u32, key: &[Value], order: &KeyOrder) -> Result<bool> {
        let (s, r) = self.pick(root)?;
        s.index_delete(r, key, order)
    }
    fn index_insert_unique(
        &self,
        root: u32,
        key: &[Value],
        prefix_len: usize,
        order: &KeyOrder,
    ) -> Result<bool> {
        let (s, r) = self.pick(root)?;
        s.index_insert_unique(r, key, prefix_len, order)
    }
    fn index_replace_unique(
        &self,
        root: u32,
        key: &[Value],
        prefix_len: usize,
        order: &KeyOrder,
    ) -> Result<UniqueReplace> {
        let (s, r) = self.pick(root)?;
        s.index_replace_unique(r, key, prefix_len, order)
    }
    fn index_prefix_rowids(
        &self,
        root: u32,
        order: &KeyOrder,
        prefix: &[Value],
        out: &mut Vec<i64>,
    ) -> Result<()> {
        let (s, r) = self.pick(root)?;
        s.index_prefix_rowids(r, order, prefix, out)
    }
    fn index_first_with_prefix(
        &self,
        root: u32,
        order: &KeyOrder,
        prefix: &[Value],
    ) -> Result<Option<Row>> {
        let (s, r) = self.pick(root)?;
        s.index_first_with_prefix(r, order, prefix)
    }
    fn index_range(
        &self,
        root: u32,
        order: &KeyOrder,
        lo: Bound<Row>,
        hi: Bound<Row>,
        reverse: bool,
    ) -> Result<KeyIter> {
        let (s, r) = self.pick(root)?;
        s.index_range(r, order, lo, hi, reverse)
    }
    fn index_probe(&self, root: u32, order: &KeyOrder) -> Result<Box<dyn IndexProbe + '_>> {
        let (s, r) = self.pick(root)?;
        s.index_probe(r, order)
    }
    fn index_lookup_scan(&self, mut walk: IndexLookup<'_>) -> Result<Option<Box<dyn RowScan>>> {
        if db_bits(walk.index_root) != db_bits(walk.table_root) {
            return Ok(None);
        }
        let (s, r) = self.pick(walk.index_root)?;
        let (_, t) = self.pick(walk.table_root)?;
        walk.index_root = r;
        walk.table_root = t;
        s.index_lookup_scan(walk)
    }
    fn without_rowid_scan(
        &self,
        mut walk: IndexLookup<'_>,
        layout: Arc<WrLayout>,
    ) -> Result<Option<Box<dyn RowScan>>> {
        let (s, r) = self.pick(walk.index_root)?;
        walk.index_root = r;
        s.without_rowid_scan(walk, layout)
    }
    fn index_covering_scan(
        &self,
        mut walk: IndexLookup<'_>,
        columns: Vec<Option<usize>>,
    ) -> Result<Option<Box<dyn RowScan>>> {
        let (s, r) = self.pick(walk.index_root)?;
        walk.index_root = r;
        s.index_covering_scan(walk, columns)
    }
    fn attach_scan(&self, root: u32, scan: &mut dyn RowScan) -> Result<bool> {
        let (s, r) = self.pick(root)?;
        s.attach_scan(r, scan)
    }
    fn index_entry_count(&self, root: u32, order: &KeyOrder) -> Result<usize> {
        let (s, r) = self.pick(root)?;
        s.index_entry_count(r, order)
    }
    fn index_prefix_counts(
        &self,
        root: u32,
        order: &KeyOrder,
        ncols: usize,
    ) -> Result<(u64, Vec<u64>)> {
        let (s, r) = self.pick(root)?;
        s.index_prefix_counts(r, order, ncols)
    }
    fn index_records(
        &self,
        root: u32,
        order: &KeyOrder,
        max: usize,
        out: &mut KeyRecords,
    ) -> Result<bool> {
        let (s, r) = self.pick(root)?;
        s.index_records(r, order, max, out)
    }
    fn table_row_count(&self, root: u32) -> Result<u64> {
        let (s, r) = self.pick(root)?;
        s.table_row_count(r)
    }
    fn table_copy(&self, src: u32, dst: u32) -> Result<u64> {
        let (s, r) = self.pick(src)?;
        let (_, d) = self.pick(dst)?;
        if db_bits(src) != db_bits(dst) {
            return Err(crate::value::SqlError::msg("table copy across databases"));
        }
        s.table_copy(r, d)
    }
    fn index_copy(&self, src: u32, dst: u32, order: &KeyOrder) -> Result<u64> {
        let (s, r) = self.pick(src)?;
        let (_, d) = self.pick(dst)?;
        if db_bits(src) != db_bits(dst) {
            return Err(crate::value::SqlError::msg("index copy across databases"));
        }
        s.index_copy(r, d, order)
    }
    fn vacuum_compact(&self, trees: &[(u32, Option<KeyOrder>)]) -> Result<Option<Vec<u32>>> {
        // One database's trees: main's, or one attached database's (roots carry its bits,
        // which its own store does not know). TEMP is not compacted.
        let bits = trees.first().map_or(0, |(r, _)| db_bits(*r));
        if bits == TEMP_ROOT_BIT || trees.iter().any(|(r, _)| db_bits(*r) != bits) {
            return Ok(None);
        }
        if bits == 0 {
            return self.main.vacuum_compact(trees);
        }
        let plain: Vec<(u32, Option<KeyOrder>)> = trees
            .iter()
            .map(|(r, o)| (*r & !ATTACHED_MASK, o.clone()))
            .collect();
        Ok(self
            .attached_store(bits)?
            .vacuum_compact(&plain)?
            .map(|roots| roots.into_iter().map(|r| r | bits).collect()))
    }
    fn index_fill(&self, root: u32, order: &KeyOrder, keys: Vec<Row>) -> Result<()> {
        let (s, r) = self.pick(root)?;
        s.index_fill(r, order, keys)
    }
    fn index_merge(
        &self,
        root: u32,
        order: &KeyOrder,
        keys: Vec<Row>,
        unique: Option<usize>,
    ) -> Result<bool> {
        let (s, r) = self.pick(root)?;
        s.index_merge(r, order, keys, unique)
    }
    fn table_fill(&self, root: u32, rows: &[(i64, Row)]) -> Result<()> {
        let (s, r) = self.pick(root)?;
        s.table_fill(r, rows)
    }
    fn schema_cookie(&self) -> Result<u32> {
        self.main.schema_cookie()
    }
    fn set_schema_cookie(&self, v: u32) -> Result<()> {
        self.main.set_schema_cookie(v)
    }
    fn user_version(&self) -> Result<u32> {
        self.main.user_version()
    }
    fn set_user_version(&self, v: u32) -> Result<()> {
        self.main.set_user_version(v)
    }
    fn savepoint(&self) -> Result<u32> {
        self.main.savepoint()
    }
    fn rollback_to(&self, sp: u32) -> Result<()> {
        self.main.rollback_to(sp)
    }
    fn release(&self, sp: u32) -> Result<()> {
        self.main.release(sp)
    }
    fn has_temp(&self) -> bool {
        self.temp.is_some()
    }
    fn create_temp_table_btree(&self) -> Result<u32> {
        match self.temp {
            Some(t) => Ok(t.create_table_btree()? | TEMP_ROOT_BIT),
            None => Err(crate::value::SqlError::msg(
                "TEMP objects are not available on this connection",
            )),
        }
    }
    fn create_temp_index_btree(&self) -> Result<u32> {
        match self.temp {
            Some(t) => Ok(t.create_index_btree()? | TEMP_ROOT_BIT),
            None => Err(crate::value::SqlError::msg(
                "TEMP objects are not available on this connection",
            )),
        }
    }
    fn create_btree_in(&self, db: u32, index: bool) -> Result<u32> {
        if db == 0 {
            return if index {
                self.main.create_index_btree()
            } else {
                self.main.create_table_btree()
            };
        }
        let s = self.attached_store(db)?;
        let root = if index {
            s.create_index_btree()?
        } else {
            s.create_table_btree()?
        };
        if root >= ATTACHED_ROOT_MAX {
            return Err(crate::value::SqlError::msg(
                "attached database too large: parlite addresses root pages below 2^27",
            ));
        }
        Ok(root | db)
    }
    fn schema_cookie_in(&self, db: u32) -> Result<u32> {
        if db == 0 {
            return self.main.schema_cookie();
        }
        self.attached_store(db)?.schema_cookie()
    }
    fn set_schema_cookie_in(&self, db: u32, v: u32) -> Result<()> {
        if db == 0 {
            return self.main.set_schema_cookie(v);
        }
        self.attached_store(db)?.set_schema_cookie(v)
    }
    fn file_header_in(&self, db: u32) -> Result<FileHeader> {
        if db == 0 {
            return self.main.file_header_in(0);
        }
        self.attached_store(db)?.file_header_in(0)
    }
    fn set_application_id_in(&self, db: u32, v: u32) -> Result<()> {
        if db == 0 {
            return self.main.set_application_id_in(0, v);
        }
        self.attached_store(db)?.set_application_id_in(0, v)
    }
    fn user_version_in(&self, db: u32) -> Result<u32> {
        if db == 0 {
            return self.main.user_version();
        }
        self.attached_store(db)?.user_version()
    }
    fn set_user_version_in(&self, db: u32, v: u32) -> Result<()> {
        if db == 0 {
            return self.main.set_user_version(v);
        }
        self.attached_store(db)?.set_user_version(v)
    }
}

/// True when `key` lies within the prefix bounds.
pub fn key_in_bounds(order: &KeyOrder, key: &[Value], lo: &Bound<Row>, hi: &Bound<Row>) -> bool {
    let lo_ok = match lo {
        Bound::Unbounded => true,
        Bound::Included(p) => order.compare(key, p) != Ordering::Less,
        Bound::Excluded(p) => order.compare(key, p) == Ordering::Greater,
    };
    let hi_ok = match hi {
        Bound::Unbounded => true,
        Bound::Included(p) => order.compare(key, p) != Ordering::Greater,
        Bound::Excluded(p) => order.compare(key, p) == Ordering::Less,
    };
    lo_ok && hi_ok
}
