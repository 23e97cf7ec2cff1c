//! Inserting into table trees (upsert by rowid) and index trees.
//!
//! Fast path: the new cell is written into its leaf in place (page.rs keeps free space
//! accounting exact). Only when the leaf has no room does balance.rs restructure; an
//! append past the last rowid of a right-most leaf takes SQLite's quick balance, so
//! ascending inserts leave full pages behind them.
//!
//! A table insert hands back a [`LeafHint`] (the leaf it wrote and its rowid range) for the
//! next insert into the same table; the caller (txn.rs) keeps it only while nothing else
//! changed that tree. Invariant: a hint is used only after the rowid is checked against the
//! leaf's own cells (found there, between two of its rowids, or past the last on the
//! right-most leaf), so a stale hint can cost a descent but never place a row wrongly.
//!
//! Every new entry goes into a leaf. In an index tree the lower-bound descent ends at a leaf
//! position that is directly before the first entry >= the new key in key order, even when
//! that entry sits in an interior page, so inserting there keeps the order.

use super::balance::{balance, is_underfull, node_read, quick_balance};
use super::cell::{
    build_index_leaf, build_table_leaf, cell_size_fn, local_len, parse_cell, put_table_leaf_local,
    table_cell_key, table_leaf_local_size, CellInfo,
};
use super::cursor::{load_page, payload_of, Frame, TreeCursor};
use super::overflow::{free_chain, write_chain};
use super::page::{drop_cell, insert_cell, PageHeader, INDEX_LEAF, TABLE_LEAF};
use crate::error::{PageNo, Result, StorageError};
use crate::pages::{PageRead, PageWrite};
use crate::record::{encode_into, encode_to_slice, encoded_len, KeyCompare, ValueRef};
use std::cmp::Ordering;

/// A row's record as [`table_insert`] takes it.
#[derive(Clone, Copy)]
pub enum Payload<'a> {
    /// Already encoded.
    Record(&'a [u8]),
    /// The column values, encoded (record.rs) straight into the row's cell when it is
    /// rewritten in place — the common UPDATE, which keeps the cell's size — and otherwise
    /// into the caller's buffer first. Encoding into a buffer and copying that into the page
    /// touched a second row-sized buffer per UPDATE, and with many writers taking turns the
    /// buffer had left the core's cache since the thread's previous transaction
    /// (BENCHMARKS.md, hold branch).
    Values(&'a [ValueRef<'a>]),
}

/// Where a descent ended, without the page references a cursor holds: a held reference
/// would make the first `page_mut` of each page copy it (copy-on-write), which cost a 4 KiB
/// copy per insert before this existed.
pub(crate) struct Pos {
    /// (page, child index or cell index) from the root down to the leaf.
    pub path: Vec<(PageNo, usize)>,
    pub kind: u8,
    pub ncells: usize,
    /// Whether the leaf is its parent's right-most child.
    pub rightmost: bool,
}

impl Pos {
    /// Takes the descent's position out of `tc` and drops its page references.
    pub(crate) fn take(tc: &mut TreeCursor) -> Result<Pos> {
        let top = tc
            .stack
            .last()
            .ok_or_else(|| StorageError::misuse("no leaf"))?;
        let n = tc.stack.len();
        let pos = Pos {
            path: tc.stack.iter().map(|f| (f.pgno, f.idx)).collect(),
            kind: top.hdr.kind,
            ncells: top.hdr.ncells,
            rightmost: n >= 2 && tc.stack[n - 2].idx == tc.stack[n - 2].hdr.ncells,
        };
        tc.invalidate();
        Ok(pos)
    }

    pub(crate) fn leaf(&self) -> (PageNo, usize) {
        self.path.last().copied().unwrap_or((PageNo(0), 0))
    }
}

/// Builds the cell for a payload, writing its overflow chain first when it spills.
/// The cell is padded to SQLite's 4-byte minimum.
fn make_cell<V: PageWrite + ?Sized>(
    v: &mut V,
    rowid: Option<i64>,
    payload: &[u8],
    out: &mut Vec<u8>,
) -> Result<()> {
    let usable = v.usable_size();
    if payload.len() as u64 > i32::MAX as u64 {
        return Err(StorageError::TooBig {
            reason: format!("payload of {} bytes", payload.len()),
        });
    }
    let local = local_len(payload.len() as u64, usable, rowid.is_some());
    let overflow = if local < payload.len() {
        write_chain(v, &payload[local..])?
    } else {
        0
    };
    match rowid {
        Some(r) => build_table_leaf(out, r, payload.len() as u64, &payload[..local], overflow),
        None => build_index_leaf(out, payload.len() as u64, &payload[..local], overflow),
    }
    while out.len() < 4 {
        out.push(0);
    }
    Ok(())
}

/// Puts `cell` at the leaf position `pos`, balancing when it does not fit. `append` allows
/// the quick balance. Returns true when it balanced.
fn place_in_leaf<V: PageWrite + ?Sized>(
    v: &mut V,
    pos: &mut Pos,
    cell: &[u8],
    append: bool,
) -> Result<bool> {
    let usable = v.usable_size();
    let (pgno, idx) = pos.leaf();
    if insert_cell(
        v.page_mut(pgno)?,
        pgno,
        usable,
        idx,
        cell,
        cell_size_fn(pos.kind, usable),
    )? {
        return Ok(false);
    }
    if append && pos.kind == TABLE_LEAF && pos.path.len() >= 2 && idx == pos.ncells && pos.rightmost
    {
        quick_balance(v, &mut pos.path, cell)?;
        return Ok(true);
    }
    overfull_leaf(v, pos, cell)?;
    Ok(true)
}

/// Balances the leaf at `pos`, which lacks room for `cell` at its position.
fn overfull_leaf<V: PageWrite + ?Sized>(v: &mut V, pos: &mut Pos, cell: &[u8]) -> Result<()> {
    let (pgno, idx) = pos.leaf();
    let mut node = node_read(v, pgno, pos.kind == TABLE_LEAF)?;
    if idx > node.len() {
        return Err(StorageError::corrupt(pgno, "insert position past the end"));
    }
    node.insert(idx, cell);
    balance(v, &mut pos.path, node)
}

/// The leaf the previous insert into a table ended on, handed to the next insert into the
/// same table when nothing restructured the tree since (the caller checks that): its
/// root-to-leaf path, and whether it is the table's right-most leaf.
#[derive(Debug, Clone)]
pub struct LeafHint {
    pub(crate) path: Vec<(PageNo, usize)>,
    pub(crate) right_edge: bool,
    /// The leaf's first and last rowids as last seen. Only a filter that turns rowids
    /// away before the leaf is read (a random single-row UPDATE, speedtest1 test 240,
    /// missed the hint at ~500 instructions a row): a rowid inside it is still checked
    /// against the leaf itself, so a stale range costs a descent, never a wrong write.
    pub(crate) keys: (i64, i64),
}

impl LeafHint {
    /// The table leaf `tc` was positioned on by a descent under the transaction's current
    /// change counter, as a hint for the next write to that table (None when the cursor
    /// is not on a table leaf).
    pub fn at_cursor(tc: &TreeCursor, usable: usize) -> Option<LeafHint> {
        let (right_edge, keys) = leaf_edge_and_keys(tc, usable)?;
        Some(LeafHint {
            path: tc.stack.iter().map(|f| (f.pgno, f.idx)).collect(),
            right_edge,
            keys,
        })
    }
}

/// For a cursor on a table leaf: whether that leaf is the table's right-most, and its
/// first and last rowids (`LeafHint`'s fields besides the path, which a write takes from
/// the cursor with `Pos::take`).
pub(crate) fn leaf_edge_and_keys(tc: &TreeCursor, usable: usize) -> Option<(bool, (i64, i64))> {
    let (top, parents) = tc.stack.split_last()?;
    if top.hdr.kind != TABLE_LEAF {
        return None;
    }
    Some((
        parents.iter().all(|f| f.idx == f.hdr.ncells),
        leaf_keys(&top.page, &top.hdr, usable),
    ))
}

/// Inserts or replaces the row `rowid` of the table rooted at the cursor's root.
///
/// `hint` is the value returned by the previous call for the same tree when nothing else
/// changed the tree since (the caller checks that). When `rowid` lies within that leaf —
/// present in it, strictly between its first and last rowids, or past its last rowid on
/// the right-most leaf — the row is written there without a descent: SQLite's
/// BTREE_APPEND for ascending inserts (the common INSERT), and its write at the cursor
/// for an UPDATE walking the table (speedtest1 test 250: the descent was a quarter of the
/// statement). Returns the hint for the next call: the leaf written, when the tree kept
/// its shape (no balance).
/// `record` is the record's buffer for a `Payload::Values` that is not written in place.
pub fn table_insert<V: PageWrite + ?Sized>(
    v: &mut V,
    tc: &mut TreeCursor,
    rowid: i64,
    payload: Payload<'_>,
    record: &mut Vec<u8>,
    cell: &mut Vec<u8>,
    hint: Option<LeafHint>,
) -> Result<Option<LeafHint>> {
    let usable = v.usable_size();
    let mut keys = (rowid, rowid);
    let hinted = match hint {
        Some(h) => {
            keys = (h.keys.0.min(rowid), h.keys.1.max(rowid));
            hinted_position(v, h, rowid)?
        }
        None => None,
    };
    let (mut pos, old, right_edge) = match hinted {
        Some((pos, old)) => {
            let right_edge = pos.rightmost;
            (pos, old, right_edge)
        }
        None => {
            let found = tc.descend_table(v, rowid, false)?;
            let old = if found {
                let top = tc
                    .stack
                    .last()
                    .ok_or_else(|| StorageError::misuse("no leaf"))?;
                Some((top.cell(top.idx, usable)?, top.cell_off(top.idx, usable)?))
            } else {
                None
            };
            let (right_edge, (first, last)) =
                leaf_edge_and_keys(tc, usable).unwrap_or((false, (rowid, rowid)));
            keys = (first.min(rowid), last.max(rowid));
            (Pos::take(tc)?, old, right_edge)
        }
    };
    // Replace, cell size unchanged and the new payload all local (the common UPDATE): the
    // cell is written over the old one in the page directly. Building it in `cell` first
    // was a second copy of the row (~430 instructions per bdb_update commit of its 3.9 kB
    // rows, callgrind).
    if let Some((old, pc)) = &old {
        // Measured only for a replace: an INSERT's values are encoded once, below.
        let payload_len = match payload {
            Payload::Record(r) => r.len(),
            Payload::Values(vals) => encoded_len(vals),
        };
        if table_leaf_local_size(rowid, payload_len, usable) == Some(old.size()) {
            let (pgno, _) = pos.leaf();
            free_chain(v, pgno, old)?;
            let out = &mut v.page_mut(pgno)?[*pc..*pc + old.size()];
            put_table_leaf_local(out, rowid, payload_len, |dst| match payload {
                Payload::Record(r) => dst.copy_from_slice(r),
                Payload::Values(vals) => encode_to_slice(vals, dst),
            });
            return Ok(Some(LeafHint {
                path: pos.path,
                right_edge,
                keys,
            }));
        }
    }
    let record = match payload {
        Payload::Record(r) => r,
        Payload::Values(vals) => {
            record.clear();
            encode_into(vals, record);
            &record[..]
        }
    };
    make_cell(v, Some(rowid), record, cell)?;
    let Some((old, pc)) = old else {
        let balanced = place_in_leaf(v, &mut pos, cell, true)?;
        return Ok((!balanced).then_some(LeafHint {
            path: pos.path,
            right_edge,
            keys,
        }));
    };
    // Replace: free the old payload's overflow, then overwrite in place when the cell
    // size is unchanged (the common UPDATE), else remove and insert.
    let (pgno, idx) = pos.leaf();
    free_chain(v, pgno, &old)?;
    if old.size() == cell.len() {
        v.page_mut(pgno)?[pc..pc + cell.len()].copy_from_slice(cell);
    } else {
        // One `page_mut` for both halves (each was ~600 instructions, a tenth of a
        // rewrite; callgrind, speedtest1 test 230).
        let data = v.page_mut(pgno)?;
        let free = drop_cell(data, pgno, usable, idx, old.size())?;
        if !insert_cell(
            data,
            pgno,
            usable,
            idx,
            cell,
            cell_size_fn(TABLE_LEAF, usable),
        )? {
            overfull_leaf(v, &mut pos, cell)?;
            return Ok(None);
        }
        let free = free.saturating_sub(cell.len() + 2);
        if cell.len() < old.size() && rebalance_leaf(v, &mut pos.path, free, true)? {
            return Ok(None);
        }
    }
    Ok(Some(LeafHint {
        path: pos.path,
        right_edge,
        keys,
    }))
}

/// The first and last rowids of a table leaf, or an empty range (first > last) when it
/// has no cells or they cannot be read (the range is only a filter; see `LeafHint`).
fn leaf_keys(page: &[u8], hdr: &PageHeader, usable: usize) -> (i64, i64) {
    let key = |i: usize| {
        let pc = hdr.cell_ptr(page, i);
        if pc < hdr.ptr_array_end() || pc + 4 > usable || hdr.kind != TABLE_LEAF {
            return None;
        }
        table_cell_key(page.get(..usable)?, pc, TABLE_LEAF)
    };
    match hdr.ncells.checked_sub(1).map(|last| (key(0), key(last))) {
        Some((Some(first), Some(last))) => (first, last),
        _ => (i64::MAX, i64::MIN),
    }
}

fn path_leaf_idx(path: &[(PageNo, usize)]) -> usize {
    path.last().map_or(0, |l| l.1)
}

/// The leaf position for `rowid` in the leaf of `hint`, with the cell already holding
/// `rowid` (and its offset) if any, or None when `rowid` may belong to another leaf: before
/// the leaf's first rowid, or past its last one on a leaf that is not the right-most.
/// Rowids are unique in a table tree and each leaf holds a contiguous range of them, so a
/// rowid found in the leaf, or falling between two of its rowids, belongs there.
// Inlined into both callers (`table_insert`, `delete::table_delete`): as a call it cost
// ~35 instructions per row of `UPDATE z2 SET d=b*4` (speedtest1 test 250, callgrind).
#[allow(clippy::type_complexity)]
#[inline(always)]
pub(crate) fn hinted_position<V: PageWrite + ?Sized>(
    v: &V,
    hint: LeafHint,
    rowid: i64,
) -> Result<Option<(Pos, Option<(CellInfo, usize)>)>> {
    let usable = v.usable_size();
    let Some(&(leaf, _)) = hint.path.last() else {
        return Ok(None);
    };
    if rowid < hint.keys.0 || (!hint.right_edge && rowid > hint.keys.1) {
        return Ok(None);
    }
    let page = v.page(leaf)?;
    let data = &page[..usable.min(page.len())];
    let hdr = PageHeader::parse(data, leaf, usable)?;
    if hdr.kind != TABLE_LEAF || hdr.ncells == 0 {
        return Ok(None);
    }
    let offset_of = |i: usize| -> Result<usize> {
        let pc = hdr.cell_ptr(data, i);
        if pc < hdr.ptr_array_end() || pc + 4 > usable {
            return Err(StorageError::corrupt(leaf, "cell pointer out of range"));
        }
        Ok(pc)
    };
    let key_of = |i: usize| -> Result<i64> {
        table_cell_key(data, offset_of(i)?, TABLE_LEAF)
            .ok_or_else(|| StorageError::corrupt(leaf, "malformed cell"))
    };
    let n = hdr.ncells;
    // Probe the previous write's position and the one after it first: a statement
    // walking the table in rowid order (UPDATE without an index) writes there next.
    let guess = path_leaf_idx(&hint.path).min(n - 1);
    let at_guess = key_of(guess)?;
    let (mut lo, mut hi) = (0, n);
    if at_guess == rowid {
        (lo, hi) = (guess, guess);
    } else if at_guess > rowid {
        hi = guess;
    } else if guess + 1 < n && key_of(guess + 1)? >= rowid {
        (lo, hi) = (guess + 1, guess + 1);
    } else {
        lo = guess + 1;
    }
    // The first cell in lo..hi whose rowid is >= `rowid` (hi when none is).
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if key_of(mid)? < rowid {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    let (idx, found) = if lo == n {
        if !hint.right_edge {
            return Ok(None);
        }
        (n, false)
    } else {
        let found = key_of(lo)? == rowid;
        if lo == 0 && !found {
            return Ok(None);
        }
        (lo, found)
    };
    let old = if found {
        let pc = offset_of(idx)?;
        let info = parse_cell(data, pc, TABLE_LEAF, usable)
            .ok_or_else(|| StorageError::corrupt(leaf, "cell extends past the page"))?;
        Some((info, pc))
    } else {
        None
    };
    let ncells = hdr.ncells;
    drop(page);
    let mut path = hint.path;
    if let Some(l) = path.last_mut() {
        l.1 = idx;
    }
    Ok(Some((
        Pos {
            path,
            kind: TABLE_LEAF,
            ncells,
            rightmost: hint.right_edge,
        },
        old,
    )))
}

/// After a cell in the leaf at the end of `path` shrank or vanished, leaving `free` bytes
/// free on it (`drop_cell` counts them), merges the leaf with its siblings when it is
/// underfull. Returns true when it balanced.
pub(crate) fn rebalance_leaf<V: PageWrite + ?Sized>(
    v: &mut V,
    path: &mut Vec<(PageNo, usize)>,
    free: usize,
    table: bool,
) -> Result<bool> {
    if path.len() < 2 || !is_underfull(free, v.usable_size()) {
        return Ok(false);
    }
    let (pgno, _) = path[path.len() - 1];
    let node = node_read(v, pgno, table)?;
    balance(v, path, node)?;
    Ok(true)
}

/// The leaf an index write ended on (its root-to-leaf path), handed to the next write to
/// the same index when nothing else changed that tree since (the caller checks that, as
/// for [`LeafHint`]): a statement's entries of one index are often adjacent (a DELETE
/// of an index range, speedtest1 test 270; ascending keys appended, test 110), and each
/// write descended from the root (~5.3k instructions, ~15 key comparisons). The next
/// write reads the path's pages afresh ([`resume_at`]) and `descend_index` keeps the leaf
/// only when the key falls inside it (its first cell before the key and its last cell
/// not) or past the end of the tree's right-most leaf; anything else descends, reusing
/// the frames it meets again. A leaf the key is not inside is thus never written.
///
/// A hint is tried only when its write was in the same leaf as the write before it
/// (`repeat`): a missed try costs the leaf's load and two comparisons (~600
/// instructions), and a row's entries in its other indexes are usually random (270:
/// the `a` and `c` entries of each row deleted; tried every time, the misses cost what
/// the hits saved).
#[derive(Debug)]
pub struct IndexHint {
    pub(crate) path: Vec<(PageNo, usize)>,
    repeat: bool,
}

impl IndexHint {
    /// The hint for the leaf at the end of `pos`, unless the write there balanced (the
    /// path no longer describes the tree). `before` is the leaf of the hint the write
    /// was given ([`resume_at`]).
    pub(crate) fn after(pos: Pos, balanced: bool, before: Option<PageNo>) -> Option<IndexHint> {
        let repeat = before == Some(pos.leaf().0);
        (!balanced).then_some(IndexHint {
            path: pos.path,
            repeat,
        })
    }
}

/// Loads the frames along `hint`'s path into `tc`, marked current, so that the next
/// `descend_index` tries the hinted leaf first (when the hint is a `repeat`). Returns the
/// hinted leaf, for the next hint's `repeat`.
/// The caller guarantees the tree is unchanged since the hint was made (see [`IndexHint`]).
pub(crate) fn resume_at<V: PageRead + ?Sized>(
    v: &V,
    tc: &mut TreeCursor,
    hint: Option<IndexHint>,
) -> Result<Option<PageNo>> {
    let Some(hint) = hint else {
        return Ok(None);
    };
    let leaf = hint.path.last().map(|&(pgno, _)| pgno);
    if hint.repeat {
        tc.invalidate();
        for &(pgno, idx) in &hint.path {
            let (page, hdr) = load_page(v, pgno.0, false)?;
            tc.stack.push(Frame {
                pgno,
                page,
                hdr,
                idx,
            });
        }
        tc.frames_current = true;
    }
    Ok(leaf)
}

/// Places index entry `key` where the cursor's last descent ended (the leaf position of
/// the first entry after `key`). Returns the hint for the next write to this index;
/// `before` is as for [`IndexHint::after`].
fn insert_at_descent<V: PageWrite + ?Sized>(
    v: &mut V,
    tc: &mut TreeCursor,
    key: &[u8],
    cell: &mut Vec<u8>,
    before: Option<PageNo>,
) -> Result<Option<IndexHint>> {
    let mut pos = Pos::take(tc)?;
    if pos.kind != INDEX_LEAF {
        return Err(StorageError::corrupt(
            pos.leaf().0,
            "index descent did not end on a leaf",
        ));
    }
    make_cell(v, None, key, cell)?;
    let balanced = place_in_leaf(v, &mut pos, cell, false)?;
    Ok(IndexHint::after(pos, balanced, before))
}

/// Inserts `key` into the index rooted at the cursor's root. An entry comparing equal is
/// replaced. `hint` is the one the previous write to this index returned, when nothing
/// changed the tree since (see [`IndexHint`]); returns the hint for the next write.
pub fn index_insert<V: PageWrite + ?Sized>(
    v: &mut V,
    tc: &mut TreeCursor,
    key: &[u8],
    cmp: &dyn KeyCompare,
    scratch: &mut Vec<u8>,
    cell: &mut Vec<u8>,
    hint: Option<IndexHint>,
) -> Result<Option<IndexHint>> {
    let before = resume_at(v, tc, hint)?;
    let seen_equal = tc.descend_index(v, key, false, cmp, scratch)?;
    if seen_equal {
        super::delete::index_delete(v, tc, key, cmp, scratch, None)?;
        tc.descend_index(v, key, false, cmp, scratch)?;
    }
    insert_at_descent(v, tc, key, cell, before)
}

/// What [`index_replace_unique`] did.
#[derive(Debug, PartialEq, Eq)]
pub enum UniqueWrite {
    /// No entry was equal to the prefix: the key was inserted.
    Inserted,
    /// The one entry equal to the prefix sat in a leaf and was overwritten by the key;
    /// this is the old entry's key.
    Replaced(Vec<u8>),
    /// An entry equal to the prefix exists outside a leaf: nothing was written.
    Clash,
}

/// REPLACE's write of `key` into a UNIQUE index: as [`index_insert_unique`], and when an
/// entry equal to `prefix` is the leaf cell the descent ended on, that entry is overwritten
/// by `key` where it lies (one descent instead of a probe for the clashing row, a delete
/// and a second insert; speedtest1 test 290). Order holds because no other entry shares
/// the prefix, so the new key sorts exactly where the old one did. An equal entry in an
/// interior page is left for the caller's general path (`Clash`).
pub fn index_replace_unique<V: PageWrite + ?Sized>(
    v: &mut V,
    tc: &mut TreeCursor,
    key: &[u8],
    prefix: &[u8],
    cmp: &dyn KeyCompare,
    scratch: &mut Vec<u8>,
    cell: &mut Vec<u8>,
) -> Result<UniqueWrite> {
    let usable = v.usable_size();
    if !tc.descend_index(v, prefix, false, cmp, scratch)? {
        insert_at_descent(v, tc, key, cell, None)?;
        return Ok(UniqueWrite::Inserted);
    }
    let found = match tc.stack.last() {
        Some(top) if top.hdr.kind == INDEX_LEAF && top.idx < top.hdr.ncells => {
            let info = top.cell(top.idx, usable)?;
            let pc = top.cell_off(top.idx, usable)?;
            let old = payload_of(v, top, &info, scratch)?;
            (cmp.compare(old, prefix)? == Ordering::Equal).then(|| (info, pc, old.to_vec()))
        }
        _ => None,
    };
    let Some((info, pc, old_key)) = found else {
        tc.invalidate();
        return Ok(UniqueWrite::Clash);
    };
    let mut pos = Pos::take(tc)?;
    make_cell(v, None, key, cell)?;
    overwrite_leaf_cell(v, &mut pos, &info, pc, cell)?;
    Ok(UniqueWrite::Replaced(old_key))
}

/// Writes the index leaf `cell` over the leaf cell at `pos` (`info`, at offset `pc`); the
/// caller guarantees the new key sorts exactly where the old one did. A cell of the same
/// size (the usual case: same value, a rowid of as many bytes) is copied over in place
/// (~3.3k instructions of drop + insert saved; speedtest1 test 290); else the old cell is
/// dropped and the new one inserted at the same index, the leaf rebalanced as after any
/// insert or shrink.
fn overwrite_leaf_cell<V: PageWrite + ?Sized>(
    v: &mut V,
    pos: &mut Pos,
    info: &CellInfo,
    pc: usize,
    cell: &[u8],
) -> Result<()> {
    let usable = v.usable_size();
    let (pgno, idx) = pos.leaf();
    free_chain(v, pgno, info)?;
    let data = v.page_mut(pgno)?;
    if info.size() == cell.len() {
        data[pc..pc + cell.len()].copy_from_slice(cell);
        return Ok(());
    }
    let free = drop_cell(data, pgno, usable, idx, info.size())?;
    if !insert_cell(
        data,
        pgno,
        usable,
        idx,
        cell,
        cell_size_fn(INDEX_LEAF, usable),
    )? {
        return overfull_leaf(v, pos, cell);
    }
    let free = free.saturating_sub(cell.len() + 2);
    if cell.len() < info.size() {
        rebalance_leaf(v, &mut pos.path, free, false)?;
    }
    Ok(())
}

/// Replaces the index entry comparing equal to `old` by `new`; false, writing nothing,
/// when there is no such entry. When `old` is a leaf cell with neighbours in the same
/// leaf on both sides and `new` sorts strictly between them, `new` takes the old cell's
/// place (one descent); else the entry is deleted and `new` inserted (three). REPLACE
/// moves a deleted row's entry to the new row this way when only the rowid differs
/// (speedtest1 test 290: `t3bc` entries `(b, c, old rowid)` -> `(b, c, new rowid)`).
/// Neighbours in the leaf bound the new key exactly: the leaf's keys are contiguous in
/// key order, so nothing else lies between two of them. At a leaf's edge the bound is a
/// separator in an ancestor, which the descent does not keep: that case (one entry of a
/// leaf's ~50) takes the general path.
pub fn index_rekey<V: PageWrite + ?Sized>(
    v: &mut V,
    tc: &mut TreeCursor,
    old: &[u8],
    new: &[u8],
    cmp: &dyn KeyCompare,
    scratch: &mut Vec<u8>,
    cell: &mut Vec<u8>,
) -> Result<bool> {
    let usable = v.usable_size();
    tc.descend_index(v, old, false, cmp, scratch)?;
    let mut in_place = None;
    if let Some(top) = tc.stack.last() {
        let i = top.idx;
        if top.hdr.kind == INDEX_LEAF && i > 0 && i + 1 < top.hdr.ncells {
            let info = top.cell(i, usable)?;
            let here = payload_of(v, top, &info, scratch)?;
            if cmp.compare(here, old)? == Ordering::Equal {
                let prev = top.cell(i - 1, usable)?;
                let below = cmp.compare(payload_of(v, top, &prev, scratch)?, new)?;
                let next = top.cell(i + 1, usable)?;
                let above = cmp.compare(new, payload_of(v, top, &next, scratch)?)?;
                if below == Ordering::Less && above == Ordering::Less {
                    in_place = Some((info, top.cell_off(i, usable)?));
                }
            }
        }
    }
    let Some((info, pc)) = in_place else {
        tc.invalidate();
        if !super::delete::index_delete(v, tc, old, cmp, scratch, None)?.0 {
            return Ok(false);
        }
        index_insert(v, tc, new, cmp, scratch, cell, None)?;
        return Ok(true);
    };
    let mut pos = Pos::take(tc)?;
    make_cell(v, None, new, cell)?;
    overwrite_leaf_cell(v, &mut pos, &info, pc, cell)?;
    Ok(true)
}

/// Inserts `key` into a UNIQUE index unless an entry equal to `prefix` (the key without its
/// row-naming suffix, compared over the prefix's fields) exists: then nothing is written
/// and the result is false. One descent serves both the check and the insert (SQLite's
/// OPFLAG_USESEEKRESULT): with no entry equal to the prefix, the first entry >= the prefix
/// is also the first entry >= the key, so the descent already ends where the key goes.
/// Every entry equal to the prefix would be met on the way (see `descend_index`), so its
/// "seen equal" answers the check. The caller guarantees the prefix holds no NULL.
/// `hint` and the hint returned are as for [`index_insert`] (none when nothing was
/// written).
#[allow(clippy::too_many_arguments)]
pub fn index_insert_unique<V: PageWrite + ?Sized>(
    v: &mut V,
    tc: &mut TreeCursor,
    key: &[u8],
    prefix: &[u8],
    cmp: &dyn KeyCompare,
    scratch: &mut Vec<u8>,
    cell: &mut Vec<u8>,
    hint: Option<IndexHint>,
) -> Result<(bool, Option<IndexHint>)> {
    let before = resume_at(v, tc, hint)?;
    if tc.descend_index(v, prefix, false, cmp, scratch)? {
        tc.invalidate();
        return Ok((false, None));
    }
    Ok((true, insert_at_descent(v, tc, key, cell, before)?))
}
