//! Inserting into table trees (upsert by rowid) and index trees.
//!
//! Fast path: the new cell is written into its leaf in place (page.rs keeps free space
//! accounting exact). Only when the leaf has no room does balance.rs restructure; an
//! append past the last rowid of a right-most leaf takes SQLite's quick balance, so
//! ascending inserts leave full pages behind them.
//!
//! Every new entry goes into a leaf. In an index tree the lower-bound descent ends at a leaf
//! position that is directly before the first entry >= the new key in key order, even when
//! that entry sits in an interior page, so inserting there keeps the order.

use super::balance::{balance, is_underfull, node_read, quick_balance};
use super::cell::{build_index_leaf, build_table_leaf, cell_size_fn, local_len, table_cell_key};
use super::cursor::TreeCursor;
use super::overflow::{free_chain, write_chain};
use super::page::{drop_cell, free_space, insert_cell, PageHeader, INDEX_LEAF, TABLE_LEAF};
use crate::error::{PageNo, Result, StorageError};
use crate::pages::PageWrite;
use crate::record::KeyCompare;

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
    let mut node = node_read(v, pgno, pos.kind == TABLE_LEAF)?;
    if idx > node.len() {
        return Err(StorageError::corrupt(pgno, "insert position past the end"));
    }
    node.insert(idx, cell);
    balance(v, &mut pos.path, node)?;
    Ok(true)
}

/// Inserts or replaces the row `rowid` of the table rooted at the cursor's root.
///
/// `append_hint` is the path returned by the previous call for the same tree when nothing
/// else changed since (the caller checks that): the root-to-leaf path of the right-most
/// leaf. A rowid past that leaf's last key then goes straight to its end without a descent
/// — SQLite's BTREE_APPEND, which ascending inserts (the common INSERT) hit every time.
/// Returns the hint for the next call: the path, when this insert appended at the right
/// edge without restructuring the tree.
pub fn table_insert<V: PageWrite + ?Sized>(
    v: &mut V,
    tc: &mut TreeCursor,
    rowid: i64,
    record: &[u8],
    cell: &mut Vec<u8>,
    append_hint: Option<Vec<(PageNo, usize)>>,
) -> Result<Option<Vec<(PageNo, usize)>>> {
    let usable = v.usable_size();
    if let Some(path) = append_hint {
        if let Some(mut pos) = append_position(v, path, rowid)? {
            make_cell(v, Some(rowid), record, cell)?;
            let balanced = place_in_leaf(v, &mut pos, cell, true)?;
            return Ok((!balanced).then_some(pos.path));
        }
    }
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
    let right_edge = tc.stack.iter().all(|f| f.idx == f.hdr.ncells);
    let mut pos = Pos::take(tc)?;
    make_cell(v, Some(rowid), record, cell)?;
    let Some((old, pc)) = old else {
        let balanced = place_in_leaf(v, &mut pos, cell, true)?;
        return Ok((right_edge && !balanced).then_some(pos.path));
    };
    // Replace: free the old payload's overflow, then overwrite in place when the cell
    // size is unchanged (the common UPDATE), else remove and insert.
    let (pgno, idx) = pos.leaf();
    free_chain(v, pgno, &old)?;
    if old.size() == cell.len() {
        v.page_mut(pgno)?[pc..pc + cell.len()].copy_from_slice(cell);
        return Ok(None);
    }
    drop_cell(v.page_mut(pgno)?, pgno, usable, idx, old.size())?;
    if place_in_leaf(v, &mut pos, cell, false)? || cell.len() >= old.size() {
        return Ok(None);
    }
    rebalance_if_underfull(v, &mut pos.path)?;
    Ok(None)
}

/// The leaf position for appending `rowid` along a right-edge `path` from the previous
/// insert, or None when `rowid` is not past that leaf's last key.
fn append_position<V: PageWrite + ?Sized>(
    v: &V,
    mut path: Vec<(PageNo, usize)>,
    rowid: i64,
) -> Result<Option<Pos>> {
    let usable = v.usable_size();
    let Some(&(leaf, _)) = path.last() else {
        return Ok(None);
    };
    let page = v.page(leaf)?;
    let hdr = PageHeader::parse(&page, leaf, usable)?;
    if hdr.kind != TABLE_LEAF || hdr.ncells == 0 {
        return Ok(None);
    }
    let pc = hdr.cell_ptr(&page, hdr.ncells - 1);
    if pc < hdr.ptr_array_end() || pc + 4 > usable {
        return Err(StorageError::corrupt(leaf, "cell pointer out of range"));
    }
    let last = table_cell_key(&page[..usable], pc, TABLE_LEAF)
        .ok_or_else(|| StorageError::corrupt(leaf, "malformed cell"))?;
    if rowid <= last {
        return Ok(None);
    }
    if let Some(l) = path.last_mut() {
        l.1 = hdr.ncells;
    }
    Ok(Some(Pos {
        path,
        kind: TABLE_LEAF,
        ncells: hdr.ncells,
        rightmost: true,
    }))
}

/// After a cell in the leaf at the end of `path` shrank or vanished, merges the leaf with
/// its siblings when it is underfull.
pub(crate) fn rebalance_if_underfull<V: PageWrite + ?Sized>(
    v: &mut V,
    path: &mut Vec<(PageNo, usize)>,
) -> Result<()> {
    let usable = v.usable_size();
    if path.len() < 2 {
        return Ok(());
    }
    let (pgno, _) = path[path.len() - 1];
    let page = v.page(pgno)?;
    let hdr = PageHeader::parse(&page, pgno, usable)?;
    let free = free_space(&page, &hdr, usable, pgno)?;
    drop(page);
    if !is_underfull(free, usable) {
        return Ok(());
    }
    let node = node_read(v, pgno, hdr.is_table())?;
    balance(v, path, node)
}

/// Inserts `key` into the index rooted at the cursor's root. An entry comparing equal is
/// replaced.
pub fn index_insert<V: PageWrite + ?Sized>(
    v: &mut V,
    tc: &mut TreeCursor,
    key: &[u8],
    cmp: &dyn KeyCompare,
    scratch: &mut Vec<u8>,
    cell: &mut Vec<u8>,
) -> Result<()> {
    let seen_equal = tc.descend_index(v, key, false, cmp, scratch)?;
    if seen_equal {
        super::delete::index_delete(v, tc, key, cmp, scratch)?;
        tc.descend_index(v, key, false, cmp, scratch)?;
    }
    let mut pos = Pos::take(tc)?;
    if pos.kind != INDEX_LEAF {
        return Err(StorageError::corrupt(
            pos.leaf().0,
            "index descent did not end on a leaf",
        ));
    }
    make_cell(v, None, key, cell)?;
    place_in_leaf(v, &mut pos, cell, false)?;
    Ok(())
}

/// Inserts `key` into a UNIQUE index unless an entry equal to `prefix` (the key without its
/// row-naming suffix, compared over the prefix's fields) exists: then nothing is written
/// and the result is false. One descent serves both the check and the insert (SQLite's
/// OPFLAG_USESEEKRESULT): with no entry equal to the prefix, the first entry >= the prefix
/// is also the first entry >= the key, so the descent already ends where the key goes.
/// Every entry equal to the prefix would be met on the way (see `descend_index`), so its
/// "seen equal" answers the check. The caller guarantees the prefix holds no NULL.
pub fn index_insert_unique<V: PageWrite + ?Sized>(
    v: &mut V,
    tc: &mut TreeCursor,
    key: &[u8],
    prefix: &[u8],
    cmp: &dyn KeyCompare,
    scratch: &mut Vec<u8>,
    cell: &mut Vec<u8>,
) -> Result<bool> {
    if tc.descend_index(v, prefix, false, cmp, scratch)? {
        tc.invalidate();
        return Ok(false);
    }
    let mut pos = Pos::take(tc)?;
    if pos.kind != INDEX_LEAF {
        return Err(StorageError::corrupt(
            pos.leaf().0,
            "index descent did not end on a leaf",
        ));
    }
    make_cell(v, None, key, cell)?;
    place_in_leaf(v, &mut pos, cell, false)?;
    Ok(true)
}
