//! `Store` over a storage transaction: values encoded as SQLite records, rows in table
//! B-trees keyed by rowid, index keys in index B-trees ordered by `RecordCompare`.
//!
//! Invariants:
//! - The comparator given to storage for an index is built from the same `KeyOrder` the
//!   executor uses to test range bounds, so both agree on key order (SQLite's order, the
//!   index columns' collations and directions, rowid last).
//! - Iterators own a storage `Cursor` (which holds a transaction clone); they stop at the
//!   first key outside the requested bounds.
//! - A pooled cursor is readied for the store's own transaction when taken
//!   (`Cursor::rebind_to`), so cursors a connection keeps between statements
//!   (`IdleCursors`, parked: no frames) never read another transaction's pages.

use super::store::{
    key_in_bounds, IndexLookup, IndexProbe, KeyIter, KeyOrder, KeyRecords, RecordPre, Row, RowIter,
    RowScan, Store, UniqueReplace,
};
use super::without_rowid::WrLayout;
use crate::collation::Collation;
use crate::value::{self, Result, Value};
use parlite_storage::btree::insert::UniqueWrite;
use parlite_storage::record::{self, FirstFieldOrder, RecordCompare, ValueRef};
use parlite_storage::{BtreeKind, Cursor, HeaderField, KeyCompare, PageNo, SeekOp, Txn};
use std::cell::{OnceCell, RefCell};
use std::cmp::Ordering;
use std::ops::Bound;
use std::rc::Rc;
use std::sync::Arc;

pub struct TxnStore {
    pub txn: Txn,
    /// Cursors of finished lookups and index walks, reused by the next ones on the same
    /// tree (a store lives for one statement). Made on first use: most statements leave
    /// the TEMP store untouched.
    pool: OnceCell<Rc<CursorPool>>,
}

/// Idle cursors by tree. A join level or a correlated subquery looks up one tree once per
/// outer row; opening a cursor for each lookup cost its allocations and a descent from
/// the root, where a kept cursor's frames are reused down to the leaf while the tree is
/// unchanged (`Cursor::rebind`; speedtest1 test 310, BENCHMARKS.md "join").
#[derive(Default)]
struct CursorPool {
    idle: RefCell<Vec<PooledCursor>>,
    /// Key buffers of finished index walks (`IndexIter`'s encoded bounds) and records
    /// written (`table_insert`), cleared: a join starts an inner walk per outer row, and
    /// two fresh `Vec`s a walk were two mallocs and frees (speedtest1 test 310).
    bufs: RefCell<Vec<Vec<u8>>>,
    /// The large BLOB of the last row read for a rewrite (`decode_for_write`), whose buffer
    /// the next such row's BLOB of the same length reuses once nothing else holds it.
    spare_blob: RefCell<Option<Arc<[u8]>>>,
}

/// A BLOB of a row read for a rewrite is kept for reuse from this length on: glibc serves
/// smaller blocks from its per-thread cache, cheaply (up to 1,032 bytes).
const SPARE_BLOB_BYTES_MIN: usize = 1024;

/// At most this many idle key buffers are kept per store.
const POOL_BUFS_MAX: usize = 16;

/// A buffer grown past this by a large record or key is freed rather than kept idle.
const POOL_BUF_BYTES_MAX: usize = 64 * 1024;

struct PooledCursor {
    root: u32,
    /// The comparator's address (0 for a table tree): a cursor is reused only with the
    /// comparator it was opened with. The cursor holds that `Arc`, so the address cannot
    /// be reused by another comparator meanwhile.
    cmp_addr: usize,
    cur: Cursor,
}

/// The cursor pool a connection keeps between statements on its main database
/// (`TxnStore::with_idle`, `into_idle`): its idle cursors parked (no frames), rebound to
/// the next statement's transaction when taken; its key buffers, so that a reused point
/// SELECT encodes its key into a buffer that already has room (two fresh buffers a
/// statement were two mallocs, five regrowths and their frees, ~1k instructions of
/// kv_profile's select; BENCHMARKS.md "kvsel"); and its spare BLOB (at most
/// `POOL_BUF_BYTES_MAX` bytes). The pool itself is kept, not its contents moved into a
/// new one per statement: the `Rc`'s allocation, its free and the moves were ~0.2k
/// instructions of a reused point SELECT (BENCHMARKS.md "pointsel").
#[derive(Default)]
pub struct IdleCursors(Option<Rc<CursorPool>>);

// SAFETY: `Rc<CursorPool>` is !Send only because of its count. `into_idle` keeps a pool
// only when `Rc::get_mut` finds its `Rc` unique (no walk or cursor guard of the finished
// statement still holds a clone, no weak reference), and nothing clones it while it is
// idle: `with_idle` hands it to one store, which clones it only while running its
// statement. Moving an `IdleCursors` (with the connection) to another thread therefore
// moves the only owner of the count, as moving a `Box` would. What the pool holds is
// `Send` (cursors, byte buffers, an `Arc<[u8]>`).
unsafe impl Send for IdleCursors {}

/// A key buffer bigger than this is not kept between statements (one probe with a large
/// BLOB key would otherwise hold its memory for the connection's life).
const IDLE_BUF_BYTES_MAX: usize = 4096;

/// At most this many idle cursors are kept per store.
const POOL_CURSORS_MAX: usize = 16;

impl CursorPool {
    fn take(&self, root: u32, cmp_addr: usize) -> Option<Cursor> {
        let mut idle = self.idle.borrow_mut();
        let i = idle
            .iter()
            .position(|p| p.root == root && p.cmp_addr == cmp_addr)?;
        Some(idle.swap_remove(i).cur)
    }

    /// An empty key buffer: a finished walk's when there is one.
    fn take_buf(&self) -> Vec<u8> {
        self.bufs.borrow_mut().pop().unwrap_or_default()
    }

    fn put_buf(&self, mut buf: Vec<u8>) {
        let mut bufs = self.bufs.borrow_mut();
        if bufs.len() < POOL_BUFS_MAX && (1..=POOL_BUF_BYTES_MAX).contains(&buf.capacity()) {
            buf.clear();
            bufs.push(buf);
        }
    }

    fn put(&self, root: u32, cmp_addr: usize, cur: Cursor) {
        let mut idle = self.idle.borrow_mut();
        if idle.len() < POOL_CURSORS_MAX {
            idle.push(PooledCursor {
                root,
                cmp_addr,
                cur,
            });
        }
    }
}

fn cmp_addr(cmp: &Arc<RecordCompare>) -> usize {
    Arc::as_ptr(cmp) as usize
}

struct CollationAdapter(Collation);

impl parlite_storage::Collation for CollationAdapter {
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        self.0.compare_bytes(a, b)
    }
}

thread_local! {
    /// Comparators already built, by key order. A comparator is a pure function of its
    /// `KeyOrder`; building one (three allocations) for every index insert, delete and
    /// probe showed up as a few percent of an indexed INSERT ... SELECT.
    static COMPARATORS: RefCell<Vec<(KeyOrder, Arc<RecordCompare>)>> =
        const { RefCell::new(Vec::new()) };
}

/// The storage comparator for `order` (cached per thread; at most 32 kept).
fn comparator(order: &KeyOrder) -> Arc<RecordCompare> {
    COMPARATORS.with(|cache| {
        let mut cache = cache.borrow_mut();
        if let Some((_, c)) = cache.iter().find(|(o, _)| o == order) {
            return c.clone();
        }
        let c = build_comparator(order);
        if cache.len() >= 32 {
            cache.clear();
        }
        cache.push((order.clone(), c.clone()));
        c
    })
}

fn build_comparator(order: &KeyOrder) -> Arc<RecordCompare> {
    let desc = order.columns.iter().map(|c| c.1).collect();
    let colls = order
        .columns
        .iter()
        .map(|c| match c.0 {
            Collation::Binary => None,
            other => Some(Arc::new(CollationAdapter(other)) as Arc<dyn parlite_storage::Collation>),
        })
        .collect();
    Arc::new(RecordCompare::new(desc, colls))
}

fn to_ref(v: &Value) -> ValueRef<'_> {
    match v {
        Value::Null => ValueRef::Null,
        Value::Integer(i) => ValueRef::Integer(*i),
        Value::Real(r) => ValueRef::Real(*r),
        Value::Text(s) => ValueRef::Text(s.as_bytes()),
        Value::Blob(b) => ValueRef::Blob(b),
    }
}

/// Records of many rows or keys, encoded one after another into one arena: (rowid or 0,
/// start, end) per entry.
fn encode_all<'a>(
    entries: impl Iterator<Item = (i64, &'a [Value])>,
) -> (Vec<(i64, usize, usize)>, Vec<u8>) {
    let mut spans = Vec::with_capacity(entries.size_hint().0);
    let mut arena = Vec::new();
    let mut refs: Vec<ValueRef> = Vec::new();
    for (rowid, vals) in entries {
        refs.clear();
        refs.extend(vals.iter().map(to_ref));
        let start = arena.len();
        record::encode_into(&refs, &mut arena);
        spans.push((rowid, start, arena.len()));
    }
    (spans, arena)
}

/// Runs `f` on `vals` viewed as `ValueRef`s: up to 16 from the stack, more from a `Vec`
/// (a `Vec` per table or index write was an allocation; callgrind, speedtest1 test 290).
fn with_refs<R>(vals: &[Value], f: impl FnOnce(&[ValueRef]) -> R) -> R {
    let mut small = [ValueRef::Null; 16];
    if let Some(refs) = small.get_mut(..vals.len()) {
        for (r, v) in refs.iter_mut().zip(vals) {
            *r = to_ref(v);
        }
        return f(refs);
    }
    let refs: Vec<ValueRef> = vals.iter().map(to_ref).collect();
    f(&refs)
}

/// `vals` encoded as a record into `out` (cleared first).
pub fn encode_to(vals: &[Value], out: &mut Vec<u8>) {
    out.clear();
    with_refs(vals, |refs| record::encode_into(refs, out));
}

pub fn encode(vals: &[Value]) -> Vec<u8> {
    with_refs(vals, record::encode)
}

/// A stored field as an owned value.
#[inline(always)]
fn owned(r: ValueRef<'_>) -> Value {
    match r {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Integer(i),
        ValueRef::Real(x) => Value::real(x),
        ValueRef::Text(b) => Value::text_from_bytes(b),
        // One allocation straight into the `Arc`: `b.to_vec()` first was a second
        // allocation, copy and free per BLOB (callgrind, hc_mixed scan).
        ValueRef::Blob(b) => Value::Blob(Arc::from(b)),
    }
}

/// Decodes one field into a scan's slot, which holds the previous row's value: a TEXT or
/// BLOB of the same length whose buffer nobody else holds is overwritten in place (no free
/// and allocation per row when the consumer already dropped or copied it: a statement's
/// recycled result rows copy, `Exec::result_row`).
#[inline]
fn owned_into(r: ValueRef<'_>, slot: &mut Value) {
    let done = match (&r, &mut *slot) {
        (ValueRef::Blob(b), Value::Blob(old)) => value::refill_blob(old, b),
        // Validated only for a buffer it can go into: `owned` validates it otherwise.
        (ValueRef::Text(b), Value::Text(old)) if value::refillable(old, b.len()) => {
            value::utf8(b).is_some_and(|s| value::refill_text(old, s))
        }
        _ => false,
    };
    if !done {
        *slot = owned(r);
    }
}

pub fn decode(rec: &[u8]) -> Result<Row> {
    // Straight from the field iterator into the row: no intermediate `Vec<ValueRef>`.
    // With the reused record buffer in `TableIter` this cut `TableIter::next` from 4.42G
    // to 3.49G instructions on a speedtest1 excerpt (tests 100/110/320/230/250, callgrind).
    let mut it = record::FieldIter::new(rec)?;
    let mut row = Vec::with_capacity(8);
    while let Some(r) = it.next_field() {
        row.push(owned(r?));
    }
    Ok(row)
}

/// Decodes the columns flagged in `needed` and stops after the last of them; the columns
/// skipped before it read as NULL (no TEXT/BLOB allocation for them).
pub fn decode_cols(rec: &[u8], needed: &[bool]) -> Result<Row> {
    let Some(last) = needed.iter().rposition(|b| *b) else {
        return Ok(Vec::new());
    };
    let mut it = record::FieldIter::new(rec)?;
    // Room for the unneeded tail and the rowid the executor appends (no regrowth).
    let mut row = Vec::with_capacity(needed.len() + 1);
    for want in &needed[..=last] {
        let Some(r) = it.next_field() else {
            break;
        };
        let r = r?;
        row.push(if !*want { Value::Null } else { owned(r) });
    }
    Ok(row)
}

/// Scans decode each row's record where it lies (`Cursor::with_entry`): borrowed from the
/// page, or assembled in the cursor's scratch buffer when it overflows.
struct TableIter {
    cur: Cursor,
    started: bool,
    lo: Bound<i64>,
    hi: Bound<i64>,
    reverse: bool,
    done: bool,
    /// Columns to decode (`decode_cols`); `None`: all.
    needed: Option<Arc<[bool]>>,
}

impl TableIter {
    /// Moves to the next entry; false (and done) past the end of the tree.
    fn advance(&mut self) -> Result<bool> {
        if self.done {
            return Ok(false);
        }
        let ok = if !self.started {
            self.started = true;
            if self.reverse {
                match self.hi {
                    Bound::Unbounded => self.cur.last()?,
                    Bound::Included(h) => self.cur.seek_rowid(h, SeekOp::Le)?,
                    Bound::Excluded(h) => self.cur.seek_rowid(h, SeekOp::Lt)?,
                }
            } else {
                match self.lo {
                    Bound::Unbounded => self.cur.first()?,
                    Bound::Included(l) => self.cur.seek_rowid(l, SeekOp::Ge)?,
                    Bound::Excluded(l) => self.cur.seek_rowid(l, SeekOp::Gt)?,
                }
            }
        } else if self.reverse {
            self.cur.prev()?
        } else {
            self.cur.next()?
        };
        if !ok || !self.cur.valid() {
            self.done = true;
            return Ok(false);
        }
        Ok(true)
    }

    fn step(&mut self) -> Result<Option<(i64, Row)>> {
        if !self.advance()? {
            return Ok(None);
        }
        let (range, needed) = (self.range(), &self.needed);
        let r = self
            .cur
            .with_entry(|rowid, rec| -> Result<Option<(i64, Row)>> {
                if !range.contains(rowid) {
                    return Ok(None);
                }
                let row = match needed {
                    Some(n) => decode_cols(rec, n)?,
                    None => decode(rec)?,
                };
                Ok(Some((rowid, row)))
            })??;
        if r.is_none() {
            self.done = true;
        }
        Ok(r)
    }

    fn range(&self) -> RangeEnd {
        RangeEnd {
            reverse: self.reverse,
            lo: self.lo,
            hi: self.hi,
        }
    }
}

/// The end test of a `TableIter`, copied out so it can run inside `Cursor::with_entry`.
#[derive(Clone, Copy)]
struct RangeEnd {
    reverse: bool,
    lo: Bound<i64>,
    hi: Bound<i64>,
}

impl RangeEnd {
    fn contains(&self, rowid: i64) -> bool {
        if self.reverse {
            match self.lo {
                Bound::Unbounded => true,
                Bound::Included(l) => rowid >= l,
                Bound::Excluded(l) => rowid > l,
            }
        } else {
            match self.hi {
                Bound::Unbounded => true,
                Bound::Included(h) => rowid <= h,
                Bound::Excluded(h) => rowid < h,
            }
        }
    }
}

/// Decodes a record's leading fields into `cols` (see `RowScan::next_into`): all of them
/// up to `cols.len()`, or with a mask only the flagged ones (the others NULL), stopping
/// after the last flagged one. Returns how many fields were written.
fn decode_into(rec: &[u8], needed: Option<&[bool]>, cols: &mut [Value]) -> Result<usize> {
    let limit = match needed {
        Some(n) => n.iter().rposition(|b| *b).map_or(0, |l| l + 1),
        None => usize::MAX,
    }
    .min(cols.len());
    if limit == 0 {
        return Ok(0);
    }
    let mut it = record::FieldIter::new(rec)?;
    let mut k = 0;
    while k < limit {
        let Some(r) = it.next_field() else {
            break;
        };
        let r = r?;
        if needed.is_some_and(|n| !n[k]) {
            cols[k] = Value::Null;
        } else {
            owned_into(r, &mut cols[k]);
        }
        k += 1;
    }
    Ok(k)
}

/// The scan path: one lock per row for the rowid and the record, decoded from the page
/// into the caller's slots (no record copy, no `Row` allocation).
impl RowScan for TableIter {
    fn next_match(
        &mut self,
        row: &mut [Value],
        start: usize,
        ncols: usize,
        early: &[bool],
        pre: Option<&mut RecordPre<'_>>,
        keep: &mut dyn FnMut(&mut [Value], i64, usize) -> Result<bool>,
    ) -> Result<Option<(i64, usize)>> {
        self.next_match_impl(row, start, ncols, early, pre, keep)
    }

    fn next_into(&mut self, cols: &mut [Value]) -> Result<Option<(i64, usize)>> {
        if self.started && !self.done {
            let (range, needed) = (self.range(), self.needed.as_deref());
            let r = self
                .cur
                .step_entry(!self.reverse, |rowid, rec| -> Result<_> {
                    if !range.contains(rowid) {
                        return Ok(None);
                    }
                    Ok(Some((rowid, decode_into(rec, needed, cols)?)))
                })?;
            let r = r.unwrap_or(Ok(None))?;
            if r.is_none() {
                self.done = true;
            }
            return Ok(r);
        }
        if !self.advance()? {
            return Ok(None);
        }
        let (range, needed) = (self.range(), self.needed.as_deref());
        let r = self
            .cur
            .with_entry(|rowid, rec| -> Result<Option<(i64, usize)>> {
                if !range.contains(rowid) {
                    return Ok(None);
                }
                Ok(Some((rowid, decode_into(rec, needed, cols)?)))
            })??;
        if r.is_none() {
            self.done = true;
        }
        Ok(r)
    }
}

/// Where `RowScan::next_match` decodes one row: the record's fields are read once, in
/// order, the early ones (up to the last the filter reads) before the filter runs and the
/// rest after it accepted the row.
struct MatchLayout<'m> {
    /// Fields the scan decodes (`None`: all).
    needed: Option<&'m [bool]>,
    /// Fields the filter reads.
    early: &'m [bool],
    /// One past the last early field, and one past the last needed one.
    early_end: usize,
    needed_end: usize,
    /// One past the last needed field (not counting the early ones).
    decode_end: usize,
}

impl<'m> MatchLayout<'m> {
    fn new(needed: Option<&'m [bool]>, early: &'m [bool], ncols: usize) -> Self {
        let end = |m: &[bool]| m.iter().rposition(|b| *b).map_or(0, |l| l + 1);
        let early_end = end(early).min(ncols);
        MatchLayout {
            needed,
            early,
            early_end,
            needed_end: needed.map_or(ncols, end).clamp(early_end, ncols),
            decode_end: needed.map_or(ncols, end).min(ncols),
        }
    }

    fn wanted(&self, k: usize) -> bool {
        self.needed.is_none_or(|n| n.get(k) == Some(&true)) || self.early.get(k) == Some(&true)
    }

    /// One row: the early fields, `keep`, then the rest of the needed ones; `None` when
    /// `keep` rejects the row. The field count handed on is `ncols` unless the record ends
    /// before the last field wanted (a row written before ADD COLUMN): the slots from there
    /// on need the column defaults, and no others do.
    #[allow(clippy::too_many_arguments)]
    fn visit(
        &self,
        rowid: i64,
        rec: &[u8],
        row: &mut [Value],
        start: usize,
        ncols: usize,
        pre: &mut Option<&mut RecordPre<'_>>,
        keep: &mut dyn FnMut(&mut [Value], i64, usize) -> Result<bool>,
    ) -> Result<Option<usize>> {
        if let Some(pre) = pre {
            match pre(rowid, rec) {
                Some(false) => return Ok(None),
                Some(true) => {
                    // Accepted on its bytes: only what the consumer reads is decoded.
                    let limit = self.decode_end;
                    let k = decode_into(rec, self.needed, &mut row[start..start + ncols])?;
                    return Ok(Some(if k < limit { k } else { ncols }));
                }
                None => {}
            }
        }
        let mut it = record::FieldIter::new(rec)?;
        let mut k = 0;
        let mut short = false;
        {
            let cols = &mut row[start..start + ncols];
            while k < self.early_end {
                let Some(r) = it.next_field() else {
                    short = true;
                    break;
                };
                let r = r?;
                if self.wanted(k) {
                    cols[k] = owned(r);
                }
                k += 1;
            }
        }
        if !keep(row, rowid, if short { k } else { ncols })? {
            return Ok(None);
        }
        if !short {
            let cols = &mut row[start..start + ncols];
            while k < self.needed_end {
                let Some(r) = it.next_field() else {
                    return Ok(Some(k));
                };
                let r = r?;
                if self.wanted(k) {
                    cols[k] = owned(r);
                }
                k += 1;
            }
        }
        Ok(Some(if short { k } else { ncols }))
    }
}

/// A filtered scan: the rows the filter rejects are stepped over under one lock
/// (`Cursor::step_until`), and only their filter columns are decoded (SQLite's lazy
/// column decoding has the same effect: a rejected row's TEXT columns are never read).
impl TableIter {
    fn next_match_impl(
        &mut self,
        row: &mut [Value],
        start: usize,
        ncols: usize,
        early: &[bool],
        mut pre: Option<&mut RecordPre<'_>>,
        keep: &mut dyn FnMut(&mut [Value], i64, usize) -> Result<bool>,
    ) -> Result<Option<(i64, usize)>> {
        let (range, needed) = (self.range(), self.needed.clone());
        let layout = MatchLayout::new(needed.as_deref(), early, ncols);
        if !self.started || self.done {
            if !self.advance()? {
                return Ok(None);
            }
            let r = self.cur.with_entry(|rowid, rec| -> Result<_> {
                if !range.contains(rowid) {
                    return Ok(None);
                }
                let k = layout.visit(rowid, rec, row, start, ncols, &mut pre, keep)?;
                Ok(Some(k.map(|k| (rowid, k))))
            })??;
            match r {
                None => {
                    self.done = true;
                    return Ok(None);
                }
                Some(Some(found)) => return Ok(Some(found)),
                Some(None) => {}
            }
        }
        let r = self.cur.step_until(!self.reverse, |rowid, rec| {
            if !range.contains(rowid) {
                return Some(Ok(None));
            }
            match layout.visit(rowid, rec, row, start, ncols, &mut pre, keep) {
                Err(e) => Some(Err(e)),
                Ok(Some(k)) => Some(Ok(Some((rowid, k)))),
                Ok(None) => None,
            }
        })?;
        let r = r.unwrap_or(Ok(None))?;
        if r.is_none() {
            self.done = true;
        }
        Ok(r)
    }
}

impl Iterator for TableIter {
    type Item = Result<(i64, Row)>;
    fn next(&mut self) -> Option<Self::Item> {
        match self.step() {
            Ok(Some(r)) => Some(Ok(r)),
            Ok(None) => None,
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

struct IndexIter {
    /// Always `Some` until dropped, when it goes back to the pool.
    cur: Option<Cursor>,
    /// The store's pool; `None` while the walk is detached (`RowScan::detach`).
    pool: Option<Rc<CursorPool>>,
    root: u32,
    cmp_addr: usize,
    /// The key order `step` checks the far bound with; `None` for a walk that only
    /// `step_rowid`s, which checks it with `cmp`.
    order: Option<KeyOrder>,
    started: bool,
    lo: Bound<Row>,
    hi: Bound<Row>,
    reverse: bool,
    done: bool,
    /// The index's comparator (the cursor's): `step_rowid` checks the far bound with it.
    cmp: Arc<RecordCompare>,
    /// The far bound (`hi` forward, `lo` in reverse) encoded as a probe record, made by the
    /// first `step_rowid` that needs it (in a pooled buffer).
    far_key: Option<Vec<u8>>,
    /// The near bound's encoding for the first seek (a pooled buffer, kept for reuse).
    near_key: Vec<u8>,
    /// The far bound equals the near one (a point lookup: `key = ?` on every column of
    /// the walk), so `near_key` serves as the far probe too: one encoding a walk instead
    /// of two (~400 instructions of a kv point select).
    far_is_near: bool,
}

impl Drop for IndexIter {
    fn drop(&mut self) {
        // Detached, its cursor and buffers are freed with it.
        let Some(pool) = &self.pool else {
            return;
        };
        if let Some(cur) = self.cur.take() {
            pool.put(self.root, self.cmp_addr, cur);
        }
        pool.put_buf(std::mem::take(&mut self.near_key));
        if let Some(far) = self.far_key.take() {
            pool.put_buf(far);
        }
    }
}

impl IndexIter {
    /// Starts the walk again between `lo` and `hi` on the same cursor, readied as the pool
    /// readies a taken one (`Cursor::rebind`): the first `advance` seeks the near bound,
    /// which stays in the cursor's leaf when its frames are still current (T2). A join
    /// level that kept its walk saves the per-row setup of a new one (see
    /// `Exec::kept_walks`).
    fn restart(&mut self, lo: &mut Bound<Row>, hi: &mut Bound<Row>) -> Result<()> {
        if let Some(cur) = self.cur.as_mut() {
            cur.rebind()?;
        }
        self.put_far_key();
        // The far probe is chosen anew for the new bounds (`far_is_near` described the old
        // ones: kept, it made a restarted join walk stop at the previous row's key).
        self.far_is_near = false;
        self.lo = std::mem::replace(lo, Bound::Unbounded);
        self.hi = std::mem::replace(hi, Bound::Unbounded);
        self.started = false;
        self.done = false;
        Ok(())
    }

    /// `RowScan::take_bound_rows` of the walk (left unbounded until its `restart`).
    fn take_bound_rows(&mut self) -> (Row, Row) {
        let take = |b: &mut Bound<Row>| match std::mem::replace(b, Bound::Unbounded) {
            Bound::Included(mut r) | Bound::Excluded(mut r) => {
                r.clear();
                r
            }
            Bound::Unbounded => Vec::new(),
        };
        (take(&mut self.lo), take(&mut self.hi))
    }

    /// Gives the far bound's buffer back to the pool (freed when detached).
    fn put_far_key(&mut self) {
        if let (Some(far), Some(pool)) = (self.far_key.take(), &self.pool) {
            pool.put_buf(far);
        }
    }

    /// `RowScan::detach` of the walk: the cursor parked, the far bound's buffer and the
    /// pool given back. The near bound's buffer stays: the next execution's key is
    /// encoded into it.
    fn detach(&mut self) {
        if let Some(cur) = self.cur.as_mut() {
            cur.park();
        }
        self.put_far_key();
        self.pool = None;
    }

    /// [`IndexIter::attach`] for a walk whose only cursor is this one, as `RowScan::attach`
    /// asks: false (nothing attached) when `store` is not a `TxnStore`.
    fn attach_any(&mut self, store: &dyn std::any::Any) -> Result<bool> {
        let Some(store) = store.downcast_ref::<TxnStore>() else {
            return Ok(false);
        };
        self.attach(store)?;
        Ok(true)
    }

    /// `RowScan::attach`: the cursor readied for `store`'s transaction (`Cursor::rebind_to`,
    /// as the pool readies a taken one), the walk on `store`'s pool again.
    fn attach(&mut self, store: &TxnStore) -> Result<()> {
        if let Some(cur) = self.cur.as_mut() {
            cur.rebind_to(&store.txn)?;
        }
        self.pool = Some(store.pool().clone());
        Ok(())
    }

    /// Moves onto the walk's next entry (the first: the seek to the near bound); false past
    /// the end of the tree. The far bound is the caller's to check.
    fn advance(&mut self) -> Result<bool> {
        let Some(cur) = self.cur.as_mut() else {
            return Ok(false);
        };
        let ok = if !self.started {
            self.started = true;
            let key = &mut self.near_key;
            if self.reverse {
                match &self.hi {
                    Bound::Unbounded => cur.last()?,
                    Bound::Included(h) | Bound::Excluded(h) => {
                        encode_to(h, key);
                        let op = if matches!(self.hi, Bound::Included(_)) {
                            SeekOp::Le
                        } else {
                            SeekOp::Lt
                        };
                        cur.seek_key(key, op)?
                    }
                }
            } else {
                match &self.lo {
                    Bound::Unbounded => cur.first()?,
                    Bound::Included(l) | Bound::Excluded(l) => {
                        encode_to(l, key);
                        let op = if matches!(self.lo, Bound::Included(_)) {
                            SeekOp::Ge
                        } else {
                            SeekOp::Gt
                        };
                        cur.seek_key(key, op)?
                    }
                }
            }
        } else if self.reverse {
            cur.prev()?
        } else {
            cur.next()?
        };
        Ok(ok && cur.valid())
    }

    fn step(&mut self) -> Result<Option<Row>> {
        if self.done {
            return Ok(None);
        }
        if !self.advance()? {
            self.done = true;
            return Ok(None);
        }
        let Some(cur) = self.cur.as_mut() else {
            return Ok(None);
        };
        let key = cur.with_entry(|_, rec| decode(rec))??;
        let (lo, hi) = if self.reverse {
            (&self.lo, &Bound::Unbounded)
        } else {
            (&Bound::Unbounded, &self.hi)
        };
        let Some(order) = &self.order else {
            return Err(crate::value::SqlError::msg(
                "index walk without a key order",
            ));
        };
        if !key_in_bounds(order, &key, lo, hi) {
            self.done = true;
            return Ok(None);
        }
        Ok(Some(key))
    }
}

impl IndexIter {
    /// As [`step`](Self::step) for a walk that needs only each entry's rowid (its field
    /// `rowid_field`): the entry is not decoded. The far bound is checked on the encoded
    /// entry by the index's comparator, the order of the tree itself (so the check agrees
    /// with the seek that found the near bound). Decoding each key into a `Row` (a `Vec`
    /// and a TEXT allocation for a text key) was ~1,000 instructions an entry of an
    /// expression-index walk (callgrind, hc_mixed scans).
    fn step_rowid(&mut self, rowid_field: usize) -> Result<Option<i64>> {
        let far_unbounded = matches!(
            if self.reverse { &self.lo } else { &self.hi },
            Bound::Unbounded
        );
        if self.started && !self.done && far_unbounded {
            if let Some(cur) = self.cur.as_mut() {
                // A walk without a far bound (`>= ? ORDER BY … LIMIT n`, hc_mixed's scan)
                // steps with a closure that only reads the rowid (`record::int_field`):
                // `step_with`'s far-bound checks and its `Result` layers around each entry
                // were ~22 instructions a step (callgrind, hc_mixed scan: 47.28M -> 46.88M
                // for 2,010 scans). An entry it cannot read is read again the checked way.
                return match cur
                    .step_entry(!self.reverse, |_, rec| record::int_field(rec, rowid_field))?
                {
                    None => {
                        self.done = true;
                        Ok(None)
                    }
                    Some(Some(rowid)) => Ok(Some(rowid)),
                    Some(None) => cur
                        .with_entry(|_, rec| rowid_of(rec, rowid_field))?
                        .map(Some),
                };
            }
        }
        let r = self.step_with(|rec| rowid_of(rec, rowid_field).map(Some))?;
        Ok(r.flatten())
    }

    /// Moves onto the walk's next entry and hands its encoded key to `f` (under the
    /// transaction's lock: `f` must not use the store); None past the far bound, which is
    /// checked on the encoded entry by the index's comparator, the order of the tree itself
    /// (so the check agrees with the seek that found the near bound).
    fn step_with<R>(&mut self, f: impl FnOnce(&[u8]) -> Result<R>) -> Result<Option<R>> {
        if self.done {
            return Ok(None);
        }
        // The first entry is the seek's; later ones are steps that hand over their entry
        // under the same lock (`Cursor::step_entry`), not `advance` and `with_entry`.
        let started = self.started;
        if !started && !self.advance()? {
            self.done = true;
            return Ok(None);
        }
        // The far bound: whether an entry comparing equal to it is still inside.
        let reverse = self.reverse;
        let far = if reverse { &self.lo } else { &self.hi };
        let inclusive = match far {
            Bound::Unbounded => None,
            Bound::Included(b) | Bound::Excluded(b) => {
                if self.far_key.is_none() && !self.far_is_near {
                    // `advance` encoded the near bound into `near_key` at the first step.
                    let near = if reverse { &self.hi } else { &self.lo };
                    match near {
                        Bound::Included(n) | Bound::Excluded(n) if n == b => {
                            self.far_is_near = true;
                        }
                        _ => {
                            let mut buf =
                                self.pool.as_ref().map(|p| p.take_buf()).unwrap_or_default();
                            encode_to(b, &mut buf);
                            self.far_key = Some(buf);
                        }
                    }
                }
                Some(matches!(far, Bound::Included(_)))
            }
        };
        let (Some(cur), cmp) = (self.cur.as_mut(), &self.cmp) else {
            return Ok(None);
        };
        let far_key = if self.far_is_near {
            Some(self.near_key.as_slice())
        } else {
            self.far_key.as_deref()
        };
        // Most entries are ordered against the far bound by their first field read in
        // place, the comparator reading both records only on a tie or a key the shortcut
        // does not read: fp speedtest1 test 130's walks over a REAL column spent ~198
        // instructions an entry in `RecordCompare::compare`.
        let far_first = match far {
            Bound::Included(b) | Bound::Excluded(b) => match b.as_slice() {
                [f0, rest @ ..] => FirstFieldOrder::new(&to_ref(f0), rest.is_empty(), &**cmp),
                [] => None,
            },
            Bound::Unbounded => None,
        };
        let entry = |_, rec: &[u8]| -> Result<Option<R>> {
            if let (Some(inclusive), Some(probe)) = (inclusive, far_key) {
                let o = match far_first.and_then(|f| f.decide(rec)) {
                    Some(o) => o,
                    None => cmp.compare(rec, probe)?,
                };
                let beyond = if reverse {
                    o == Ordering::Less
                } else {
                    o == Ordering::Greater
                };
                if beyond || (o == Ordering::Equal && !inclusive) {
                    return Ok(None);
                }
            }
            f(rec).map(Some)
        };
        let r = if started {
            cur.step_entry(!reverse, entry)?.transpose()?.flatten()
        } else {
            cur.with_entry(entry)??
        };
        if r.is_none() {
            self.done = true;
        }
        Ok(r)
    }
}

/// The rowid of the index entry `rec` (its field `rowid_field`): read by its width
/// (`record::int_field`), else by `record::field` in place (~50 instructions an entry where
/// `record::column`'s checked iterator took ~200; callgrind, hc_mixed scans); a key neither
/// can read goes the checked way, which names the corruption. An entry whose field is not
/// an integer is malformed.
fn rowid_of(rec: &[u8], rowid_field: usize) -> Result<i64> {
    if let Some(rowid) = record::int_field(rec, rowid_field) {
        return Ok(rowid);
    }
    let rowid = match record::field(rec, rowid_field) {
        Some(v) => v,
        None => record::column(rec, rowid_field)?,
    };
    match rowid {
        ValueRef::Integer(rowid) => Ok(rowid),
        _ => Err(malformed()),
    }
}

/// The error for an index entry that does not end with an integer rowid.
fn malformed() -> crate::value::SqlError {
    crate::value::SqlError::Code {
        code: crate::value::codes::SQLITE_CORRUPT,
        extended_code: crate::value::codes::SQLITE_CORRUPT,
        message: "database disk image is malformed".into(),
    }
}

impl Iterator for IndexIter {
    type Item = Result<Row>;
    fn next(&mut self) -> Option<Self::Item> {
        match self.step() {
            Ok(Some(r)) => Some(Ok(r)),
            Ok(None) => None,
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

/// `Store::index_lookup_scan` over a transaction: an index walk and a table cursor, both
/// from the store's pool and given back to it, each row decoded from its page into the
/// caller's slots. Per row this saves the `Row` of the generic path's table lookup and its
/// copy into the combined row, and a cursor per lookup (speedtest1 tests 160/310,
/// BENCHMARKS.md "join").
struct IndexLookupScan {
    keys: IndexIter,
    table: LentCursor,
    key_cols: usize,
    one_key: bool,
    needed: Option<Arc<[bool]>>,
}

/// A table cursor taken from the store's pool (`TxnStore::pooled_table_cursor`) and given
/// back to it when dropped.
struct LentCursor {
    /// Always `Some` until dropped.
    cur: Option<Cursor>,
    /// The store's pool; `None` while detached (as `IndexIter::pool`).
    pool: Option<Rc<CursorPool>>,
    root: u32,
}

impl LentCursor {
    fn get(&mut self) -> Option<&mut Cursor> {
        self.cur.as_mut()
    }

    /// As `IndexIter::detach`.
    fn detach(&mut self) {
        if let Some(cur) = self.cur.as_mut() {
            cur.park();
        }
        self.pool = None;
    }

    /// As `IndexIter::attach`.
    fn attach(&mut self, store: &TxnStore) -> Result<()> {
        if let Some(cur) = self.cur.as_mut() {
            cur.rebind_to(&store.txn)?;
        }
        self.pool = Some(store.pool().clone());
        Ok(())
    }
}

impl Drop for LentCursor {
    fn drop(&mut self) {
        if let (Some(cur), Some(pool)) = (self.cur.take(), &self.pool) {
            pool.put(self.root, 0, cur);
        }
    }
}

impl RowScan for IndexLookupScan {
    fn next_into(&mut self, cols: &mut [Value]) -> Result<Option<(i64, usize)>> {
        loop {
            if self.one_key && self.keys.started {
                return Ok(None);
            }
            let Some(rowid) = self.keys.step_rowid(self.key_cols)? else {
                return Ok(None);
            };
            let Some(cur) = self.table.get() else {
                return Ok(None);
            };
            // One lock for the seek and the decode; a key whose row is gone is skipped, as
            // the generic path does.
            let needed = self.needed.as_deref();
            match cur.seek_rowid_entry(rowid, |_, rec| decode_into(rec, needed, cols))? {
                Some(k) => return Ok(Some((rowid, k?))),
                None => continue,
            }
        }
    }

    fn restart(&mut self, lo: &mut Bound<Row>, hi: &mut Bound<Row>, one_key: bool) -> Result<bool> {
        self.keys.restart(lo, hi)?;
        if let Some(cur) = self.table.get() {
            cur.rebind()?;
        }
        self.one_key = one_key;
        Ok(true)
    }

    fn take_bound_rows(&mut self) -> (Row, Row) {
        self.keys.take_bound_rows()
    }

    fn detach(&mut self) -> bool {
        self.keys.detach();
        self.table.detach();
        true
    }

    fn attach(&mut self, store: &dyn std::any::Any) -> Result<bool> {
        let Some(store) = store.downcast_ref::<TxnStore>() else {
            return Ok(false);
        };
        self.keys.attach(store)?;
        self.table.attach(store)?;
        Ok(true)
    }
}

/// `Store::index_covering_scan` over a transaction: an index walk whose entries hold every
/// column the query reads (`plan::covering`), each decoded from its page into the slots of
/// the table columns it indexes, with no `Row` per key (the generic path decoded each key
/// into a `Row`, rebuilt the table row from it and moved that into the combined row:
/// speedtest1 test 310's inner walk of `t1c`).
struct IndexCoveringScan {
    keys: IndexIter,
    /// The table column of each key field before the rowid (`None`: an expression, which
    /// no query reads from a covering walk).
    columns: Vec<Option<usize>>,
    one_key: bool,
}

impl RowScan for IndexCoveringScan {
    fn next_into(&mut self, cols: &mut [Value]) -> Result<Option<(i64, usize)>> {
        if self.one_key && self.keys.started {
            return Ok(None);
        }
        let columns = &self.columns;
        let r = self.keys.step_with(|rec| {
            // Columns the index lacks read NULL, as `covering::row_of_entry` leaves them.
            for c in cols.iter_mut() {
                *c = Value::Null;
            }
            let mut it = record::FieldIter::new(rec)?;
            for col in columns {
                let Some(field) = it.next_field() else {
                    return Ok(None);
                };
                let field = field?;
                if let Some(slot) = col.and_then(|c| cols.get_mut(c)) {
                    owned_into(field, slot);
                }
            }
            Ok(match it.next_field() {
                Some(field) => match field? {
                    ValueRef::Integer(rowid) => Some(rowid),
                    _ => None,
                },
                None => None,
            })
        })?;
        match r {
            None => Ok(None),
            Some(Some(rowid)) => Ok(Some((rowid, cols.len()))),
            Some(None) => Err(malformed()),
        }
    }

    fn restart(&mut self, lo: &mut Bound<Row>, hi: &mut Bound<Row>, one_key: bool) -> Result<bool> {
        self.keys.restart(lo, hi)?;
        self.one_key = one_key;
        Ok(true)
    }

    fn take_bound_rows(&mut self) -> (Row, Row) {
        self.keys.take_bound_rows()
    }

    fn detach(&mut self) -> bool {
        self.keys.detach();
        true
    }

    fn attach(&mut self, store: &dyn std::any::Any) -> Result<bool> {
        self.keys.attach_any(store)
    }
}

/// `Store::table_lookup_scan` over a transaction: one seek on a pooled cursor, the row
/// decoded from its page into the caller's slots. The generic path (`Exec::candidates`
/// for `rowid = ?`) built a `Row` through `table_get`, the combined row from it and a
/// vector of both behind a boxed iterator: ~1k of the ~10.7k instructions of a speedtest1
/// test 410 point SELECT (BENCHMARKS.md "selstep").
struct RowidScan {
    cur: LentCursor,
    /// The rowid still to read; `None` once read.
    rowid: Option<i64>,
    needed: Option<Arc<[bool]>>,
}

impl RowScan for RowidScan {
    fn next_into(&mut self, cols: &mut [Value]) -> Result<Option<(i64, usize)>> {
        let (Some(rowid), Some(cur)) = (self.rowid.take(), self.cur.get()) else {
            return Ok(None);
        };
        let needed = self.needed.as_deref();
        match cur.seek_rowid_entry(rowid, |_, rec| decode_into(rec, needed, cols))? {
            Some(k) => Ok(Some((rowid, k?))),
            None => Ok(None),
        }
    }
}

/// `Store::without_rowid_scan` over a transaction: a walk of a WITHOUT ROWID table's own
/// tree (its PRIMARY KEY order), each record's fields decoded from its page into the slots
/// of their columns (`WrLayout::record`), with no `Row` per entry. The generic path decoded
/// each record into a `Row`, rebuilt the table row from it (`WrLayout::row_of_record`) and
/// moved that into the combined row, behind two boxed iterators: with the step past a
/// unique key that `one_key` saves, ~2.4k of the ~18.5k instructions of a speedtest1 test
/// 510 point SELECT (BENCHMARKS.md "selstep").
struct WrTableScan {
    keys: IndexIter,
    layout: Arc<WrLayout>,
    one_key: bool,
    needed: Option<Arc<[bool]>>,
}

impl RowScan for WrTableScan {
    /// The rowid returned is 0 (the table has none); the count is of the record's fields,
    /// in record order, so the caller fills `layout.record[k..]` with their defaults (a
    /// record written before ADD COLUMN).
    fn next_into(&mut self, cols: &mut [Value]) -> Result<Option<(i64, usize)>> {
        if self.one_key && self.keys.started {
            return Ok(None);
        }
        let (record, needed) = (&self.layout.record, self.needed.as_deref());
        let r = self.keys.step_with(|rec| {
            for c in cols.iter_mut() {
                *c = Value::Null;
            }
            let mut it = record::FieldIter::new(rec)?;
            let mut k = 0;
            for &col in record {
                let Some(field) = it.next_field() else {
                    break;
                };
                let field = field?;
                k += 1;
                if needed.is_some_and(|n| !n.get(col).copied().unwrap_or(true)) {
                    continue;
                }
                if let Some(slot) = cols.get_mut(col) {
                    owned_into(field, slot);
                }
            }
            Ok(k)
        })?;
        Ok(r.map(|k| (0, k)))
    }

    fn restart(&mut self, lo: &mut Bound<Row>, hi: &mut Bound<Row>, one_key: bool) -> Result<bool> {
        self.keys.restart(lo, hi)?;
        self.one_key = one_key;
        Ok(true)
    }

    fn take_bound_rows(&mut self) -> (Row, Row) {
        self.keys.take_bound_rows()
    }

    fn detach(&mut self) -> bool {
        self.keys.detach();
        true
    }

    fn attach(&mut self, store: &dyn std::any::Any) -> Result<bool> {
        self.keys.attach_any(store)
    }
}

/// An index probe: one cursor, one key buffer, an `Eq` seek per probe (which reuses the
/// cursor's frames while the tree is unchanged).
struct CursorProbe {
    cur: Cursor,
    buf: Vec<u8>,
}

impl IndexProbe for CursorProbe {
    fn contains(&mut self, key: &[Value]) -> Result<bool> {
        let refs: Vec<ValueRef> = key.iter().map(to_ref).collect();
        self.buf.clear();
        record::encode_into(&refs, &mut self.buf);
        Ok(self.cur.seek_key(&self.buf, SeekOp::Eq)? && self.cur.valid())
    }
}

impl TxnStore {
    pub fn new(txn: Txn) -> TxnStore {
        TxnStore {
            txn,
            pool: OnceCell::new(),
        }
    }

    /// A store whose pool starts with `idle`, cursors an earlier store on the same
    /// database gave back (`into_idle`).
    pub fn with_idle(txn: Txn, idle: IdleCursors) -> TxnStore {
        let pool = OnceCell::new();
        if let Some(p) = idle.0 {
            let _ = pool.set(p);
        }
        TxnStore { txn, pool }
    }

    /// The store's pool with its idle cursors parked, for a later store on the same
    /// database. Empty when something of the statement still shares the pool (none does
    /// once its `Exec` values are gone; the `Send` argument of `IdleCursors` needs the
    /// `Rc` unique).
    pub fn into_idle(self) -> IdleCursors {
        let Some(mut pool) = self.pool.into_inner() else {
            return IdleCursors::default();
        };
        let Some(p) = Rc::get_mut(&mut pool) else {
            return IdleCursors::default();
        };
        for c in p.idle.get_mut() {
            c.cur.park();
        }
        p.bufs
            .get_mut()
            .retain(|b| b.capacity() <= IDLE_BUF_BYTES_MAX);
        IdleCursors(Some(pool))
    }

    fn pool(&self) -> &Rc<CursorPool> {
        self.pool.get_or_init(Rc::default)
    }

    /// Runs `f` on `vals` encoded as a record in a pooled buffer: a fresh `Vec` per key
    /// was a malloc, a regrowth and a free per index write (431,000 in speedtest1 test
    /// 290, ~300 instructions each).
    fn with_record<R>(&self, vals: &[Value], f: impl FnOnce(&[u8]) -> R) -> R {
        let mut buf = self.pool().take_buf();
        encode_to(vals, &mut buf);
        let r = f(&buf);
        self.pool().put_buf(buf);
        r
    }

    /// `with_record` of an index key and of its first `prefix_len` fields.
    fn with_key_and_prefix<R>(
        &self,
        key: &[Value],
        prefix_len: usize,
        f: impl FnOnce(&[u8], &[u8]) -> R,
    ) -> R {
        let prefix = &key[..prefix_len.min(key.len())];
        self.with_record(key, |k| self.with_record(prefix, |p| f(k, p)))
    }

    /// A cursor on the tree at `root` (an index tree when `cmp` is given): an idle one
    /// from the pool when there is one, else a new one. Give it back with `pool.put`.
    /// The index walk of a lookup, covering or WITHOUT ROWID scan (its bounds taken).
    fn walk_keys(&self, walk: &mut IndexLookup<'_>) -> Result<IndexIter> {
        self.index_iter(
            walk.index_root,
            walk.order,
            false,
            std::mem::replace(&mut walk.lo, Bound::Unbounded),
            std::mem::replace(&mut walk.hi, Bound::Unbounded),
            walk.reverse,
        )
    }

    /// `pooled_cursor` on a table, given back to the pool when the guard is dropped.
    fn pooled_table_cursor(&self, root: u32) -> Result<LentCursor> {
        Ok(LentCursor {
            cur: Some(self.pooled_cursor(root, None)?),
            pool: Some(self.pool().clone()),
            root,
        })
    }

    fn pooled_cursor(&self, root: u32, cmp: Option<Arc<RecordCompare>>) -> Result<Cursor> {
        let addr = cmp.as_ref().map_or(0, cmp_addr);
        if let Some(mut cur) = self.pool().take(root, addr) {
            cur.rebind_to(&self.txn)?;
            return Ok(cur);
        }
        Ok(match cmp {
            Some(c) => self.txn.cursor(
                PageNo(root),
                BtreeKind::Index,
                Some(c as Arc<dyn KeyCompare>),
            )?,
            None => self.txn.cursor(PageNo(root), BtreeKind::Table, None)?,
        })
    }

    /// A walk of the index at `root` on a pooled cursor.
    /// `order` is kept for `IndexIter::step` when `step_keys`; a walk that only
    /// `step_rowid`s leaves it (one allocation less a walk).
    fn index_iter(
        &self,
        root: u32,
        order: &KeyOrder,
        step_keys: bool,
        lo: Bound<Row>,
        hi: Bound<Row>,
        reverse: bool,
    ) -> Result<IndexIter> {
        let cmp = comparator(order);
        let cmp_addr = cmp_addr(&cmp);
        let cur = self.pooled_cursor(root, Some(cmp.clone()))?;
        let pool = self.pool().clone();
        let near_key = pool.take_buf();
        Ok(IndexIter {
            cur: Some(cur),
            pool: Some(pool),
            root,
            cmp_addr,
            order: step_keys.then(|| order.clone()),
            started: false,
            lo,
            hi,
            reverse,
            done: false,
            cmp,
            far_key: None,
            near_key,
            far_is_near: false,
        })
    }

    /// The row with `rowid` in the table at `root`, decoded by `f` straight from its page
    /// (no record copy), through a pooled cursor; `for_write`: a row found is offered as
    /// the next write's position (`Cursor::hint_write`).
    #[inline]
    fn lookup_rowid(
        &self,
        root: u32,
        rowid: i64,
        for_write: bool,
        f: impl FnOnce(&[u8]) -> Result<Row>,
    ) -> Result<Option<Row>> {
        let mut cur = self.pooled_cursor(root, None)?;
        let r = cur.seek_rowid_entry(rowid, |_, rec| f(rec));
        let hinted = match &r {
            Ok(Some(_)) if for_write => cur.hint_write(),
            _ => Ok(()),
        };
        self.pool().put(root, 0, cur);
        hinted?;
        r?.transpose()
    }

    /// `decode` of a row about to be rewritten (`table_get_for_write`), whose first BLOB of
    /// `SPARE_BLOB_BYTES_MIN` to `POOL_BUF_BYTES_MAX` bytes goes into the pool's spare BLOB
    /// (`refill`) and becomes the new spare: the statement that rewrote the previous row has
    /// dropped its references by now, so a row rewritten by key whose BLOB keeps its length
    /// allocates and frees no buffer for it. bdb_update's 3.9 kB `pad`: a 4 KiB malloc and
    /// free outside glibc's per-thread cache, ~800 instructions per commit (callgrind;
    /// BENCHMARKS.md, rowcopy branch).
    fn decode_for_write(&self, rec: &[u8]) -> Result<Row> {
        let mut it = record::FieldIter::new(rec)?;
        let mut row = Vec::with_capacity(8);
        let mut spare = self.pool().spare_blob.borrow_mut();
        let mut kept = false;
        while let Some(r) = it.next_field() {
            row.push(match r? {
                ValueRef::Blob(b)
                    if !kept && (SPARE_BLOB_BYTES_MIN..=POOL_BUF_BYTES_MAX).contains(&b.len()) =>
                {
                    kept = true;
                    let blob = match spare.take() {
                        Some(mut s) => match value::refill_blob(&mut s, b) {
                            true => s,
                            false => Arc::from(b),
                        },
                        None => Arc::from(b),
                    };
                    *spare = Some(blob.clone());
                    Value::Blob(blob)
                }
                r => owned(r),
            });
        }
        Ok(row)
    }

    /// Every entry of the tree at `root` as stored: (rowid, start, end) into one arena of
    /// bytes, for a table (rowid, record) and for an index (0, key; `cmp` given). One
    /// arena instead of a vector per entry: a VACUUM copies every row.
    fn raw_entries(
        &self,
        root: u32,
        cmp: Option<Arc<RecordCompare>>,
    ) -> Result<(Vec<(i64, usize, usize)>, Vec<u8>)> {
        Ok(self.txn.entries(PageNo(root), cmp.is_none())?)
    }
}

impl Store for TxnStore {
    /// Counts cells page by page (`Txn::count`), decoding no key.
    fn index_entry_count(&self, root: u32, _order: &KeyOrder) -> Result<usize> {
        Ok(usize::try_from(self.txn.count(PageNo(root))?).unwrap_or(usize::MAX))
    }
    /// Walks the entries as stored (`Txn::visit_entries`) and compares each with the
    /// previous one field by field in place (`RecordCompare::common_prefix`). Decoding
    /// every key into a `Row` through a cursor was 60% of speedtest1 test 990's
    /// instructions, ~1,000 an entry (callgrind; the test went from 989M to 489M).
    fn index_prefix_counts(
        &self,
        root: u32,
        order: &KeyOrder,
        ncols: usize,
    ) -> Result<(u64, Vec<u64>)> {
        let cmp = comparator(order);
        let mut distinct = vec![0u64; ncols];
        let mut prev = Vec::new();
        let mut nkeys = 0u64;
        self.txn.visit_entries(PageNo(root), false, &mut |_, key| {
            let same = if nkeys == 0 {
                0
            } else {
                cmp.common_prefix(&prev, key, ncols)?
            };
            for d in &mut distinct[same..] {
                *d += 1;
            }
            nkeys += 1;
            prev.clear();
            prev.extend_from_slice(key);
            Ok(true)
        })?;
        Ok((nkeys, distinct))
    }
    /// Copies the entries as stored (`Txn::visit_entries`), each ordered against the
    /// previous one by the index's comparator, without decoding them.
    fn index_records(
        &self,
        root: u32,
        order: &KeyOrder,
        max: usize,
        out: &mut KeyRecords,
    ) -> Result<bool> {
        let cmp = comparator(order);
        out.clear();
        let mut ok = true;
        self.txn.visit_entries(PageNo(root), false, &mut |_, key| {
            let n = out.len();
            ok = n < max
                && match n.checked_sub(1).and_then(|p| out.get(p)) {
                    Some(prev) => cmp.compare(prev, key)? == Ordering::Less,
                    None => true,
                };
            if ok {
                out.push(key);
            }
            Ok(ok)
        })?;
        Ok(ok)
    }
    /// Counts cells page by page (`Txn::count`), decoding no record.
    fn table_row_count(&self, root: u32) -> Result<u64> {
        Ok(self.txn.count(PageNo(root))?)
    }
    fn index_probe(&self, root: u32, order: &KeyOrder) -> Result<Box<dyn IndexProbe + '_>> {
        let cmp: Arc<dyn KeyCompare> = comparator(order);
        let cur = self.txn.cursor(PageNo(root), BtreeKind::Index, Some(cmp))?;
        Ok(Box::new(CursorProbe {
            cur,
            buf: Vec::new(),
        }))
    }
    fn create_table_btree(&self) -> Result<u32> {
        Ok(self.txn.create_btree(BtreeKind::Table)?.0)
    }
    fn create_index_btree(&self) -> Result<u32> {
        Ok(self.txn.create_btree(BtreeKind::Index)?.0)
    }
    fn drop_btree(&self, root: u32) -> Result<()> {
        Ok(self.txn.drop_btree(PageNo(root))?)
    }
    fn clear_btree(&self, root: u32) -> Result<()> {
        self.txn.clear_btree(PageNo(root))?;
        Ok(())
    }
    fn clear_counting(&self, root: u32, _table: bool) -> Result<u64> {
        Ok(self.txn.clear_btree(PageNo(root))?)
    }
    fn table_range(
        &self,
        root: u32,
        lo: Bound<i64>,
        hi: Bound<i64>,
        reverse: bool,
    ) -> Result<RowIter> {
        let cur = self.txn.cursor(PageNo(root), BtreeKind::Table, None)?;
        Ok(Box::new(TableIter {
            cur,
            started: false,
            lo,
            hi,
            reverse,
            done: false,
            needed: None,
        }))
    }
    fn table_get(&self, root: u32, rowid: i64) -> Result<Option<Row>> {
        self.lookup_rowid(root, rowid, false, decode)
    }
    /// The lookup leaves its leaf as the transaction's next write position
    /// (`Cursor::hint_write`).
    fn table_get_for_write(&self, root: u32, rowid: i64) -> Result<Option<Row>> {
        self.lookup_rowid(root, rowid, true, |rec| self.decode_for_write(rec))
    }
    fn table_range_cols(
        &self,
        root: u32,
        lo: Bound<i64>,
        hi: Bound<i64>,
        reverse: bool,
        needed: Arc<[bool]>,
    ) -> Result<RowIter> {
        let cur = self.txn.cursor(PageNo(root), BtreeKind::Table, None)?;
        Ok(Box::new(TableIter {
            cur,
            started: false,
            lo,
            hi,
            reverse,
            done: false,
            needed: Some(needed),
        }))
    }
    fn table_scan(
        &self,
        root: u32,
        lo: Bound<i64>,
        hi: Bound<i64>,
        reverse: bool,
        needed: Option<Arc<[bool]>>,
    ) -> Result<Box<dyn RowScan>> {
        let cur = self.txn.cursor(PageNo(root), BtreeKind::Table, None)?;
        Ok(Box::new(TableIter {
            cur,
            started: false,
            lo,
            hi,
            reverse,
            done: false,
            needed,
        }))
    }
    fn table_lookup_scan(
        &self,
        root: u32,
        rowid: i64,
        needed: Option<Arc<[bool]>>,
    ) -> Result<Box<dyn RowScan>> {
        Ok(Box::new(RowidScan {
            cur: self.pooled_table_cursor(root)?,
            rowid: Some(rowid),
            needed,
        }))
    }
    fn table_get_cols(&self, root: u32, rowid: i64, needed: &[bool]) -> Result<Option<Row>> {
        self.lookup_rowid(root, rowid, false, |rec| decode_cols(rec, needed))
    }
    fn table_max_rowid(&self, root: u32) -> Result<Option<i64>> {
        Ok(self.txn.table_max_rowid(PageNo(root))?)
    }
    /// The record is written from the values (`Txn::table_insert_values`: straight into
    /// the row's cell when it is rewritten in place); a concurrent transaction builds it in
    /// a pooled buffer, which it keeps for its operation log: a fresh `Vec` per row was an
    /// allocation and free per UPDATE or INSERT.
    fn table_insert(&self, root: u32, rowid: i64, row: &[Value]) -> Result<()> {
        let buf = self.pool().take_buf();
        let back = with_refs(row, |refs| {
            self.txn.table_insert_values(PageNo(root), rowid, refs, buf)
        })?;
        if let Some(buf) = back {
            self.pool().put_buf(buf);
        }
        Ok(())
    }
    fn table_delete(&self, root: u32, rowid: i64) -> Result<bool> {
        Ok(self.txn.table_delete(PageNo(root), rowid)?)
    }
    fn table_take(&self, root: u32, rowid: i64) -> Result<Option<Row>> {
        match self.txn.table_take(PageNo(root), rowid)? {
            Some(rec) => Ok(Some(decode(&rec)?)),
            None => Ok(None),
        }
    }
    fn index_insert(&self, root: u32, key: &[Value], order: &KeyOrder) -> Result<()> {
        let cmp = comparator(order);
        Ok(self.with_record(key, |k| {
            self.txn
                .index_insert(PageNo(root), k, cmp.as_ref() as &dyn KeyCompare)
        })?)
    }
    fn index_rekey(
        &self,
        root: u32,
        old: &[Value],
        new: &[Value],
        order: &KeyOrder,
    ) -> Result<bool> {
        let cmp = comparator(order);
        Ok(self.with_record(old, |o| {
            self.with_record(new, |n| {
                self.txn
                    .index_rekey(PageNo(root), o, n, cmp.as_ref() as &dyn KeyCompare)
            })
        })?)
    }
    /// Through `Txn::index_replace_unique`: the entry holding the prefix is overwritten
    /// where the descent found it; only one in an interior page is deleted and the key
    /// inserted after it.
    fn index_put(
        &self,
        root: u32,
        key: &[Value],
        prefix_len: usize,
        order: &KeyOrder,
    ) -> Result<()> {
        let cmp = comparator(order);
        let cmp = cmp.as_ref() as &dyn KeyCompare;
        self.with_key_and_prefix(key, prefix_len, |key, prefix| {
            let done = self
                .txn
                .index_replace_unique(PageNo(root), key, prefix, cmp)?;
            if done == UniqueWrite::Clash {
                self.txn.index_delete(PageNo(root), prefix, cmp)?;
                self.txn.index_insert(PageNo(root), key, cmp)?;
            }
            Ok(())
        })
    }
    fn index_insert_unique(
        &self,
        root: u32,
        key: &[Value],
        prefix_len: usize,
        order: &KeyOrder,
    ) -> Result<bool> {
        let cmp = comparator(order);
        Ok(self.with_key_and_prefix(key, prefix_len, |key, prefix| {
            self.txn
                .index_insert_unique(PageNo(root), key, prefix, cmp.as_ref() as &dyn KeyCompare)
        })?)
    }
    fn index_replace_unique(
        &self,
        root: u32,
        key: &[Value],
        prefix_len: usize,
        order: &KeyOrder,
    ) -> Result<UniqueReplace> {
        let cmp = comparator(order);
        let done = self.with_key_and_prefix(key, prefix_len, |key, prefix| {
            self.txn.index_replace_unique(
                PageNo(root),
                key,
                prefix,
                cmp.as_ref() as &dyn KeyCompare,
            )
        })?;
        Ok(match done {
            UniqueWrite::Inserted => UniqueReplace::Inserted,
            UniqueWrite::Clash => UniqueReplace::Clash,
            UniqueWrite::Replaced(old) => {
                let mut last = None;
                for f in record::FieldIter::new(&old)? {
                    last = Some(f?);
                }
                match last {
                    Some(ValueRef::Integer(r)) => UniqueReplace::Replaced(r),
                    _ => {
                        return Err(parlite_storage::StorageError::corrupt(
                            Some(PageNo(root)),
                            "index entry without a rowid",
                        )
                        .into())
                    }
                }
            }
        })
    }
    fn index_prefix_rowids(
        &self,
        root: u32,
        order: &KeyOrder,
        prefix: &[Value],
        out: &mut Vec<i64>,
    ) -> Result<()> {
        let cmp = comparator(order);
        self.txn.index_find_prefix(
            PageNo(root),
            &encode(prefix),
            cmp.as_ref() as &dyn KeyCompare,
            &mut |key| {
                let mut last = None;
                for f in record::FieldIter::new(key)? {
                    last = Some(f?);
                }
                if let Some(ValueRef::Integer(r)) = last {
                    out.push(r);
                }
                Ok(())
            },
        )?;
        Ok(())
    }
    fn index_first_with_prefix(
        &self,
        root: u32,
        order: &KeyOrder,
        prefix: &[Value],
    ) -> Result<Option<Row>> {
        // Through `index_find_prefix` rather than an `IndexIter`: the iterator cost ~5,700
        // instructions per lookup of a WITHOUT ROWID row (callgrind, speedtest1 test 500).
        let cmp = comparator(order);
        let mut row = None;
        self.txn.index_find_prefix(
            PageNo(root),
            &encode(prefix),
            cmp.as_ref() as &dyn KeyCompare,
            &mut |key| {
                if row.is_none() {
                    let mut it = record::FieldIter::new(key)?;
                    let mut r = Vec::with_capacity(8);
                    while let Some(f) = it.next_field() {
                        r.push(owned(f?));
                    }
                    row = Some(r);
                }
                Ok(())
            },
        )?;
        Ok(row)
    }
    /// The key is encoded into a pooled buffer: a DELETE removes one entry per index and
    /// row, and a fresh `Vec` each was a malloc and free (speedtest1 test 270).
    fn index_delete(&self, root: u32, key: &[Value], order: &KeyOrder) -> Result<bool> {
        let cmp = comparator(order);
        Ok(self.with_record(key, |k| {
            self.txn
                .index_delete(PageNo(root), k, cmp.as_ref() as &dyn KeyCompare)
        })?)
    }
    fn index_range(
        &self,
        root: u32,
        order: &KeyOrder,
        lo: Bound<Row>,
        hi: Bound<Row>,
        reverse: bool,
    ) -> Result<KeyIter> {
        Ok(Box::new(
            self.index_iter(root, order, true, lo, hi, reverse)?,
        ))
    }
    fn index_lookup_scan(&self, mut walk: IndexLookup) -> Result<Option<Box<dyn RowScan>>> {
        let keys = self.walk_keys(&mut walk)?;
        let table = self.pooled_table_cursor(walk.table_root)?;
        Ok(Some(Box::new(IndexLookupScan {
            keys,
            table,
            key_cols: walk.key_cols,
            one_key: walk.one_key,
            needed: walk.needed,
        })))
    }
    fn index_covering_scan(
        &self,
        mut walk: IndexLookup<'_>,
        columns: Vec<Option<usize>>,
    ) -> Result<Option<Box<dyn RowScan>>> {
        let keys = self.walk_keys(&mut walk)?;
        Ok(Some(Box::new(IndexCoveringScan {
            keys,
            columns,
            one_key: walk.one_key,
        })))
    }
    fn without_rowid_scan(
        &self,
        mut walk: IndexLookup<'_>,
        layout: Arc<WrLayout>,
    ) -> Result<Option<Box<dyn RowScan>>> {
        let keys = self.walk_keys(&mut walk)?;
        Ok(Some(Box::new(WrTableScan {
            keys,
            layout,
            one_key: walk.one_key,
            needed: walk.needed,
        })))
    }
    fn attach_scan(&self, _root: u32, scan: &mut dyn RowScan) -> Result<bool> {
        scan.attach(self)
    }
    fn table_copy(&self, src: u32, dst: u32) -> Result<u64> {
        // The source is read whole first: the build holds the transaction for its length,
        // and a cursor step needs it too. Memory: the table's records, once.
        let (rows, arena) = self.raw_entries(src, None)?;
        Ok(self.txn.build_btree(
            PageNo(dst),
            None,
            &mut rows.iter().map(|&(r, a, b)| (r, &arena[a..b])),
        )?)
    }
    fn index_copy(&self, src: u32, dst: u32, order: &KeyOrder) -> Result<u64> {
        let cmp = comparator(order);
        let (keys, arena) = self.raw_entries(src, Some(cmp.clone()))?;
        Ok(self.txn.build_btree(
            PageNo(dst),
            Some(cmp.as_ref() as &dyn KeyCompare),
            &mut keys.iter().map(|&(r, a, b)| (r, &arena[a..b])),
        )?)
    }
    fn vacuum_compact(&self, trees: &[(u32, Option<KeyOrder>)]) -> Result<Option<Vec<u32>>> {
        // Everything is read before the reset frees it. Memory: the whole database once
        // (SQLite builds the copy in a temporary file instead).
        let (schema_rows, schema_arena) = self.raw_entries(1, None)?;
        let mut read = Vec::with_capacity(trees.len());
        for (root, order) in trees {
            let cmp = order.as_ref().map(comparator);
            read.push((self.raw_entries(*root, cmp.clone())?, cmp));
        }
        self.txn.reset_to_empty_schema()?;
        for &(rowid, a, b) in &schema_rows {
            self.txn
                .table_insert(PageNo(1), rowid, &schema_arena[a..b])?;
        }
        let mut roots = Vec::with_capacity(read.len());
        for ((entries, arena), cmp) in read {
            let kind = if cmp.is_some() {
                BtreeKind::Index
            } else {
                BtreeKind::Table
            };
            let root = self.txn.create_btree(kind)?;
            self.txn.build_btree(
                root,
                cmp.as_deref().map(|c| c as &dyn KeyCompare),
                &mut entries.iter().map(|&(r, a, b)| (r, &arena[a..b])),
            )?;
            roots.push(root.0);
        }
        Ok(Some(roots))
    }
    fn index_fill(&self, root: u32, order: &KeyOrder, keys: Vec<Row>) -> Result<()> {
        let cmp = comparator(order);
        // Every key encoded into one arena: a `Vec` per key was a malloc and a free per
        // entry (callgrind, speedtest1 test 190's bulk INSERT).
        let (mut spans, arena) = encode_all(keys.iter().map(|k| (0, k.as_slice())));
        drop(keys);
        let key = |&(_, a, b): &(i64, usize, usize)| &arena[a..b];
        // The caller sorted by `order`, which this comparator mirrors (module invariant);
        // should a pair disagree anyway, the storage order wins rather than an error.
        let mut sorted = true;
        for w in spans.windows(2) {
            if cmp.compare(key(&w[0]), key(&w[1]))? != Ordering::Less {
                sorted = false;
                break;
            }
        }
        if !sorted {
            spans.sort_by(|a, b| cmp.compare(key(a), key(b)).unwrap_or(Ordering::Equal));
            spans.dedup_by(|a, b| cmp.compare(key(a), key(b)).ok() == Some(Ordering::Equal));
        }
        self.txn.build_btree(
            PageNo(root),
            Some(cmp.as_ref() as &dyn KeyCompare),
            &mut spans.iter().map(|s| (0, key(s))),
        )?;
        Ok(())
    }
    /// The stored entries are read as raw records (`Txn::entries`), never decoded, and
    /// merged with the encoded keys by the index's comparator; each UNIQUE key is
    /// compared, as a record of its first n fields, with the stored entries on either side
    /// of its place (the only ones that can equal it there: the index held no two equal
    /// non-NULL prefixes). Decoding the stored keys into `Value`s and encoding them again
    /// cost ~1.7k instructions an entry (callgrind, speedtest1 test 300).
    fn index_merge(
        &self,
        root: u32,
        order: &KeyOrder,
        keys: Vec<Row>,
        unique: Option<usize>,
    ) -> Result<bool> {
        let cmp = comparator(order);
        let (stored, old) = self.raw_entries(root, Some(cmp.clone()))?;
        let (new_spans, new) = encode_all(keys.iter().map(|k| (0, k.as_slice())));
        // Per key, the record of its UNIQUE prefix when that holds no NULL.
        let mut probes: Vec<Option<(usize, usize)>> = Vec::new();
        let mut probe_arena = Vec::new();
        if let Some(n) = unique {
            let mut refs: Vec<ValueRef> = Vec::with_capacity(n);
            for k in &keys {
                let prefix = &k[..n.min(k.len())];
                if prefix.iter().any(Value::is_null) {
                    probes.push(None);
                    continue;
                }
                refs.clear();
                refs.extend(prefix.iter().map(to_ref));
                let start = probe_arena.len();
                record::encode_into(&refs, &mut probe_arena);
                probes.push(Some((start, probe_arena.len())));
            }
        }
        drop(keys);
        let old_key = |i: usize| &old[stored[i].1..stored[i].2];
        let new_key = |i: usize| &new[new_spans[i].1..new_spans[i].2];
        // The caller sorted the keys by `order`, which this comparator mirrors (module
        // invariant); should a pair disagree anyway, the storage order wins.
        let mut by_cmp: Vec<usize> = (0..new_spans.len()).collect();
        let mut sorted = true;
        for w in by_cmp.windows(2) {
            if cmp.compare(new_key(w[0]), new_key(w[1]))? != Ordering::Less {
                sorted = false;
                break;
            }
        }
        if !sorted {
            by_cmp.sort_by(|&a, &b| {
                cmp.compare(new_key(a), new_key(b))
                    .unwrap_or(Ordering::Equal)
            });
            by_cmp.dedup_by(|a, b| {
                cmp.compare(new_key(*a), new_key(*b)).ok() == Some(Ordering::Equal)
            });
        }
        // The merged order: (true, i) is new key i, (false, i) stored entry i.
        let mut merged: Vec<(bool, usize)> = Vec::with_capacity(stored.len() + by_cmp.len());
        let mut next_old = 0;
        for &k in &by_cmp {
            while next_old < stored.len()
                && cmp.compare(old_key(next_old), new_key(k))? != Ordering::Greater
            {
                merged.push((false, next_old));
                next_old += 1;
            }
            if let Some(&Some((a, b))) = probes.get(k) {
                let probe = &probe_arena[a..b];
                let around = [next_old.checked_sub(1), Some(next_old)];
                for s in around.into_iter().flatten().filter(|&s| s < stored.len()) {
                    if cmp.compare(old_key(s), probe)? == Ordering::Equal {
                        return Ok(false);
                    }
                }
            }
            merged.push((true, k));
        }
        merged.extend((next_old..stored.len()).map(|i| (false, i)));
        self.txn.clear_btree(PageNo(root))?;
        self.txn.build_btree(
            PageNo(root),
            Some(cmp.as_ref() as &dyn KeyCompare),
            &mut merged.iter().map(|&(is_new, i)| match is_new {
                true => (0, new_key(i)),
                false => (0, old_key(i)),
            }),
        )?;
        Ok(true)
    }
    fn table_fill(&self, root: u32, rows: &[(i64, Row)]) -> Result<()> {
        let (spans, arena) = encode_all(rows.iter().map(|(r, rec)| (*r, rec.as_slice())));
        self.txn.build_btree(
            PageNo(root),
            None,
            &mut spans.iter().map(|&(r, a, b)| (r, &arena[a..b])),
        )?;
        Ok(())
    }
    fn schema_cookie(&self) -> Result<u32> {
        Ok(self.txn.schema_cookie()?)
    }
    fn set_schema_cookie(&self, v: u32) -> Result<()> {
        Ok(self.txn.set_header_field(HeaderField::SchemaCookie, v)?)
    }
    fn user_version(&self) -> Result<u32> {
        Ok(self.txn.header()?.user_version)
    }
    fn file_header_in(&self, db: u32) -> Result<super::store::FileHeader> {
        if db != 0 {
            return Err(super::store::no_database(db));
        }
        let h = self.txn.header()?;
        Ok(super::store::FileHeader {
            page_count: h.page_count,
            freelist_count: h.freelist_count,
            application_id: h.application_id,
            page_size: h.page_size,
        })
    }
    fn set_application_id_in(&self, db: u32, v: u32) -> Result<()> {
        if db != 0 {
            return Err(super::store::no_database(db));
        }
        Ok(self.txn.set_header_field(HeaderField::ApplicationId, v)?)
    }
    fn set_user_version(&self, v: u32) -> Result<()> {
        Ok(self.txn.set_header_field(HeaderField::UserVersion, v)?)
    }
    fn savepoint(&self) -> Result<u32> {
        Ok(self.txn.savepoint()?)
    }
    fn rollback_to(&self, sp: u32) -> Result<()> {
        Ok(self.txn.rollback_to(sp)?)
    }
    fn release(&self, sp: u32) -> Result<()> {
        Ok(self.txn.release(sp)?)
    }
}
