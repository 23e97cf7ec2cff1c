//! Deleting entries from table and index trees.
//!
//! A leaf entry is removed in place (its overflow chain freed) and the leaf merged with
//! siblings when it falls below a third full. An index entry in an interior page is
//! replaced by its in-order predecessor (the last entry of the subtree to its left, always
//! in a leaf), in three steps that each leave a valid tree:
//! 1. copy the predecessor's cell into the interior slot (balancing that level if the new
//!    cell is larger) — the predecessor is now present twice, adjacent in key order;
//! 2. seek the predecessor again: a lower-bound seek finds its first occurrence in key
//!    order, which is the leaf copy;
//! 3. remove the leaf copy without freeing its overflow chain (the interior copy owns it),
//!    then merge the leaf if underfull.

use super::balance::{balance, node_read};
use super::cell::CellInfo;
use super::cell::{cell_size_fn, convert_cell};
use super::cursor::{payload_of, TreeCursor};
use super::insert::{
    hinted_position, leaf_edge_and_keys, rebalance_leaf, resume_at, IndexHint, LeafHint, Pos,
};
use super::overflow::{free_chain, read_payload};
use super::page::{drop_cell, insert_cell, is_table_kind, INDEX_INTERIOR, INDEX_LEAF};
use crate::error::{PageNo, Result, StorageError};
use crate::pages::PageWrite;
use crate::record::KeyCompare;
use std::cmp::Ordering;

/// Removes the cell the cursor's top (leaf) frame is on; frees its overflow chain when
/// `free_overflow`. Returns the hint for the next write to an index tree (none when the
/// leaf was merged); `before` is as for [`IndexHint::after`].
fn remove_leaf_cell<V: PageWrite + ?Sized>(
    v: &mut V,
    tc: &mut TreeCursor,
    free_overflow: bool,
    before: Option<PageNo>,
) -> Result<Option<IndexHint>> {
    let usable = v.usable_size();
    let top = tc
        .stack
        .last()
        .ok_or_else(|| StorageError::misuse("no leaf"))?;
    let info = top.cell(top.idx, usable)?;
    let mut pos = Pos::take(tc)?;
    let balanced = remove_at(v, &mut pos, &info, free_overflow)?;
    Ok(IndexHint::after(pos, balanced, before))
}

/// Removes the cell `info` at the leaf position `pos`, freeing its overflow chain when
/// `free_overflow`, and merges the leaf when that left it underfull. Returns true when it
/// balanced (the path no longer describes the tree).
fn remove_at<V: PageWrite + ?Sized>(
    v: &mut V,
    pos: &mut Pos,
    info: &CellInfo,
    free_overflow: bool,
) -> Result<bool> {
    let usable = v.usable_size();
    let (pgno, idx) = pos.leaf();
    if free_overflow {
        free_chain(v, pgno, info)?;
    }
    let free = drop_cell(v.page_mut(pgno)?, pgno, usable, idx, info.size())?;
    rebalance_leaf(v, &mut pos.path, free, is_table_kind(pos.kind))
}

/// Deletes row `rowid`; false if it was not there.
///
/// `hint` is as for [`table_insert`](super::insert::table_insert): the leaf of the previous
/// write to this table, or of the read that found the row, when nothing changed the tree
/// since (the caller checks that). A row found in that leaf is removed there without a
/// descent: a DELETE visits its rows in rowid order, often several in one leaf, and a
/// single-row DELETE has just read its row (speedtest1 tests 270 and 280). Anything else
/// descends. Returns the hint for the next write: the leaf, when the delete left the
/// tree's shape alone (no merge).
pub fn table_delete<V: PageWrite + ?Sized>(
    v: &mut V,
    tc: &mut TreeCursor,
    rowid: i64,
    hint: Option<LeafHint>,
) -> Result<(bool, Option<LeafHint>)> {
    let usable = v.usable_size();
    let mut filter = None;
    let hinted = match hint {
        Some(h) => {
            filter = Some((h.right_edge, h.keys));
            hinted_position(v, h, rowid)?
        }
        None => None,
    };
    let (mut pos, info, (right_edge, keys)) = match (hinted, filter) {
        (Some((pos, Some((info, _)))), Some(f)) => (pos, info, f),
        _ => {
            if !tc.descend_table(v, rowid, false)? {
                return Ok((false, None));
            }
            let top = tc
                .stack
                .last()
                .ok_or_else(|| StorageError::misuse("no leaf"))?;
            let info = top.cell(top.idx, usable)?;
            let Some(filter) = leaf_edge_and_keys(tc, usable) else {
                return Err(StorageError::corrupt(
                    top.pgno,
                    "table descent did not end on a leaf",
                ));
            };
            (Pos::take(tc)?, info, filter)
        }
    };
    if remove_at(v, &mut pos, &info, true)? {
        return Ok((true, None));
    }
    // The rowid range stays a filter only: rows removed from the leaf's ends leave it
    // wider than the leaf, which costs a read of the leaf, never a wrong position.
    Ok((
        true,
        Some(LeafHint {
            path: pos.path,
            right_edge,
            keys,
        }),
    ))
}

/// `table_delete` that first copies the row's record (overflow included) into `out`: a
/// REPLACE deleting the row it clashed with needs the row's values to find its index
/// entries, and one descent then serves the read and the delete (speedtest1 test 290:
/// `table_get` and `table_delete` each cost a descent of the table tree per clashing row).
pub fn table_take<V: PageWrite + ?Sized>(
    v: &mut V,
    tc: &mut TreeCursor,
    rowid: i64,
    out: &mut Vec<u8>,
) -> Result<bool> {
    if !tc.descend_table(v, rowid, false)? {
        return Ok(false);
    }
    let top = tc
        .stack
        .last()
        .ok_or_else(|| StorageError::misuse("no leaf"))?;
    let info = top.cell(top.idx, v.usable_size())?;
    out.clear();
    read_payload(v, top.pgno, &top.page, &info, out)?;
    remove_leaf_cell(v, tc, true, None)?;
    Ok(true)
}

/// Deletes the index entry comparing equal to `key`; false if there is none. `hint` is
/// the one the previous write to this index returned, when nothing changed the tree
/// since (insert.rs, [`IndexHint`]); returns the hint for the next write: the leaf, when
/// the entry was a leaf cell and the leaf was not merged.
pub fn index_delete<V: PageWrite + ?Sized>(
    v: &mut V,
    tc: &mut TreeCursor,
    key: &[u8],
    cmp: &dyn KeyCompare,
    scratch: &mut Vec<u8>,
    hint: Option<IndexHint>,
) -> Result<(bool, Option<IndexHint>)> {
    let usable = v.usable_size();
    let before = resume_at(v, tc, hint)?;
    if !tc.seek_index(v, key, false, cmp, scratch)? {
        return Ok((false, None));
    }
    {
        let (frame, info) = tc.current(usable)?;
        let stored = payload_of(v, frame, &info, scratch)?;
        if cmp.compare(stored, key)? != Ordering::Equal {
            return Ok((false, None));
        }
    }
    let depth = tc.stack.len() - 1;
    let top = &tc.stack[depth];
    if top.hdr.is_leaf() {
        return Ok((true, remove_leaf_cell(v, tc, true, before)?));
    }
    // Interior entry: find the predecessor (right-most entry of the left subtree).
    let (ipgno, c) = (top.pgno, top.idx);
    let old = top.cell(c, usable)?;
    let left = top.child(c, usable)?;
    let mut path: Vec<(PageNo, usize)> = Pos::take(tc)?.path;
    let mut pred_tc = TreeCursor::new(PageNo(left), false);
    if !pred_tc.last(v)? {
        return Err(StorageError::corrupt(
            PageNo(left),
            "empty subtree under an index entry",
        ));
    }
    let (pframe, pinfo) = pred_tc.current(usable)?;
    if !pframe.hdr.is_leaf() {
        return Err(StorageError::corrupt(
            pframe.pgno,
            "predecessor is not in a leaf",
        ));
    }
    let poff = pframe.cell_off(pframe.idx, usable)?;
    let pred_cell = pframe.page[poff..poff + pinfo.size()].to_vec();
    let mut pred_key = Vec::new();
    pred_tc.payload(v, &mut pred_key)?;
    drop(pred_tc);

    // Step 1: the predecessor replaces the entry in the interior page.
    free_chain(v, ipgno, &old)?;
    let mut new_cell = convert_cell(&pred_cell, INDEX_LEAF, INDEX_INTERIOR, left, usable)
        .ok_or_else(|| StorageError::corrupt(ipgno, "malformed predecessor cell"))?;
    while new_cell.len() < 4 {
        new_cell.push(0);
    }
    drop_cell(v.page_mut(ipgno)?, ipgno, usable, c, old.size())?;
    if !insert_cell(
        v.page_mut(ipgno)?,
        ipgno,
        usable,
        c,
        &new_cell,
        cell_size_fn(INDEX_INTERIOR, usable),
    )? {
        let mut node = node_read(v, ipgno, false)?;
        if c > node.len() {
            return Err(StorageError::corrupt(ipgno, "cell index past the end"));
        }
        node.insert(c, &new_cell);
        path.truncate(depth + 1);
        balance(v, &mut path, node)?;
    }
    // Steps 2 and 3: remove the leaf copy.
    tc.descend_index(v, &pred_key, false, cmp, scratch)?;
    let top = tc
        .stack
        .last()
        .ok_or_else(|| StorageError::misuse("no leaf"))?;
    if top.idx >= top.hdr.ncells {
        return Err(StorageError::corrupt(
            top.pgno,
            "predecessor copy not found in its leaf",
        ));
    }
    // The cell found must be the copy itself (byte for byte), or the comparator is not a
    // consistent order and removing anything would lose an entry.
    let info = top.cell(top.idx, usable)?;
    if payload_of(v, top, &info, scratch)? != pred_key.as_slice() {
        return Err(StorageError::corrupt(
            top.pgno,
            "index order inconsistent with its comparator",
        ));
    }
    remove_leaf_cell(v, tc, false, None)?;
    Ok((true, None))
}
