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
use super::cell::{build_index_leaf, build_table_leaf, cell_size_fn, local_len};
use super::cursor::TreeCursor;
use super::overflow::{free_chain, write_chain};
use super::page::{free_space, insert_cell, PageHeader, INDEX_LEAF, TABLE_LEAF};
use crate::error::{PageNo, Result, StorageError};
use crate::pages::PageWrite;
use crate::record::KeyCompare;

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

fn path_of(tc: &TreeCursor) -> Vec<(PageNo, usize)> {
    tc.stack.iter().map(|f| (f.pgno, f.idx)).collect()
}

/// Puts `cell` at position `idx` of the leaf at the end of the cursor's stack, balancing
/// when it does not fit. `append` allows the quick balance. Returns true when it balanced
/// (the cursor's path is then stale).
fn place_in_leaf<V: PageWrite + ?Sized>(
    v: &mut V,
    tc: &TreeCursor,
    cell: &[u8],
    append: bool,
) -> Result<bool> {
    let usable = v.usable_size();
    let top = tc
        .stack
        .last()
        .ok_or_else(|| StorageError::misuse("no leaf to insert into"))?;
    let (pgno, idx, kind) = (top.pgno, top.idx, top.hdr.kind);
    if insert_cell(
        v.page_mut(pgno)?,
        pgno,
        usable,
        idx,
        cell,
        cell_size_fn(kind, usable),
    )? {
        return Ok(false);
    }
    let mut path = path_of(tc);
    let n = tc.stack.len();
    if append
        && kind == TABLE_LEAF
        && n >= 2
        && idx == top.hdr.ncells
        && tc.stack[n - 2].idx == tc.stack[n - 2].hdr.ncells
    {
        quick_balance(v, &mut path, cell)?;
        return Ok(true);
    }
    let mut node = node_read(v, pgno, kind == TABLE_LEAF)?;
    if idx > node.cells.len() {
        return Err(StorageError::corrupt(pgno, "insert position past the end"));
    }
    node.cells.insert(idx, cell.to_vec());
    balance(v, &mut path, node)?;
    Ok(true)
}

/// Inserts or replaces the row `rowid` of the table rooted at `root`.
pub fn table_insert<V: PageWrite + ?Sized>(
    v: &mut V,
    tc: &mut TreeCursor,
    rowid: i64,
    record: &[u8],
    cell: &mut Vec<u8>,
) -> Result<()> {
    let usable = v.usable_size();
    let found = tc.descend_table(v, rowid, false)?;
    make_cell(v, Some(rowid), record, cell)?;
    if !found {
        place_in_leaf(v, tc, cell, true)?;
        return Ok(());
    }
    // Replace: free the old payload's overflow, then overwrite in place when the cell
    // size is unchanged (the common UPDATE), else remove and insert.
    let top = tc
        .stack
        .last()
        .ok_or_else(|| StorageError::misuse("no leaf"))?;
    let (pgno, idx) = (top.pgno, top.idx);
    let old = top.cell(idx, usable)?;
    let pc = top.cell_off(idx, usable)?;
    free_chain(v, pgno, &old)?;
    if old.size() == cell.len() {
        v.page_mut(pgno)?[pc..pc + cell.len()].copy_from_slice(cell);
        return Ok(());
    }
    super::page::drop_cell(v.page_mut(pgno)?, pgno, usable, idx, old.size())?;
    if place_in_leaf(v, tc, cell, false)? || cell.len() >= old.size() {
        return Ok(());
    }
    rebalance_if_underfull(v, tc, pgno)
}

/// After a cell in the leaf `pgno` (the cursor's top frame) shrank or vanished, merges the
/// leaf with its siblings when it is underfull.
pub(crate) fn rebalance_if_underfull<V: PageWrite + ?Sized>(
    v: &mut V,
    tc: &TreeCursor,
    pgno: PageNo,
) -> Result<()> {
    let usable = v.usable_size();
    if tc.stack.len() < 2 {
        return Ok(());
    }
    let page = v.page(pgno)?;
    let hdr = PageHeader::parse(&page, pgno, usable)?;
    let free = free_space(&page, &hdr, usable, pgno)?;
    drop(page);
    if !is_underfull(free, usable) {
        return Ok(());
    }
    let node = node_read(v, pgno, hdr.is_table())?;
    let mut path = path_of(tc);
    if path.last().map(|p| p.0) != Some(pgno) {
        return Err(StorageError::misuse("cursor is not on the rebalanced page"));
    }
    balance(v, &mut path, node)
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
    make_cell(v, None, key, cell)?;
    let top = tc
        .stack
        .last()
        .ok_or_else(|| StorageError::misuse("no leaf"))?;
    if top.hdr.kind != INDEX_LEAF {
        return Err(StorageError::corrupt(
            top.pgno,
            "index descent did not end on a leaf",
        ));
    }
    place_in_leaf(v, tc, cell, false)?;
    Ok(())
}
