//! One B-tree page in SQLite's layout (fileformat2 §1.6): header, cell pointer array, cell
//! content area, freeblocks and fragments. Pure byte manipulation: no I/O, no tree logic.
//!
//! Page header (at offset 100 on page 1, 0 elsewhere):
//!
//! | offset | size | field                                                     |
//! |-------:|-----:|-----------------------------------------------------------|
//! |      0 |    1 | page type: 0x02 index interior, 0x05 table interior,      |
//! |        |      | 0x0A index leaf, 0x0D table leaf                          |
//! |      1 |    2 | first freeblock (0: none)                                 |
//! |      3 |    2 | number of cells                                           |
//! |      5 |    2 | start of the cell content area (0 means 65536)            |
//! |      7 |    1 | fragmented free bytes in the content area                 |
//! |      8 |    4 | right-most child (interior pages only)                    |
//!
//! Invariants kept by every function that writes a page (they are what SQLite's
//! `PRAGMA integrity_check` verifies):
//! - cells never overlap, and lie between the end of the pointer array and the usable end;
//! - freeblocks are at least 4 bytes, in ascending order, do not touch each other or the
//!   content-area start (adjacent free space is always coalesced);
//! - every byte of the content area is in exactly one cell, one freeblock, or is counted in
//!   the fragment byte (gaps of 1–3 bytes), so `cells + freeblocks + frag == area size`;
//! - every cell occupies at least 4 bytes (SQLite's minimum; shorter cells are padded).
//!
//! Reads validate the header ([`PageHeader::parse`]) and each cell pointer before use, since
//! page bytes are untrusted.

use super::balance::is_underfull;
use crate::error::{PageNo, Result, StorageError};
use crate::header::get_u32;

pub const INDEX_INTERIOR: u8 = 0x02;
pub const TABLE_INTERIOR: u8 = 0x05;
pub const INDEX_LEAF: u8 = 0x0A;
pub const TABLE_LEAF: u8 = 0x0D;

/// SQLite refuses pages with more fragmented bytes than this (it defragments first).
const MAX_FRAG: usize = 60;

#[inline]
pub fn get_u16(buf: &[u8], off: usize) -> usize {
    u16::from_be_bytes([buf[off], buf[off + 1]]) as usize
}

#[inline]
pub fn put_u16(buf: &mut [u8], off: usize, v: usize) {
    buf[off..off + 2].copy_from_slice(&(v as u16).to_be_bytes());
}

/// Where the page header starts: page 1 carries the 100-byte database header first.
#[inline]
pub fn header_offset(pgno: PageNo) -> usize {
    if pgno.0 == 1 {
        100
    } else {
        0
    }
}

#[inline]
pub fn is_leaf_kind(kind: u8) -> bool {
    kind == TABLE_LEAF || kind == INDEX_LEAF
}

#[inline]
pub fn is_table_kind(kind: u8) -> bool {
    kind == TABLE_LEAF || kind == TABLE_INTERIOR
}

#[inline]
pub fn header_len_of(kind: u8) -> usize {
    if is_leaf_kind(kind) {
        8
    } else {
        12
    }
}

/// The interior page type of the same tree family as `kind`.
#[inline]
pub fn interior_of(kind: u8) -> u8 {
    if is_table_kind(kind) {
        TABLE_INTERIOR
    } else {
        INDEX_INTERIOR
    }
}

/// The leaf page type of the same tree family as `kind`.
#[inline]
pub fn leaf_of(kind: u8) -> u8 {
    if is_table_kind(kind) {
        TABLE_LEAF
    } else {
        INDEX_LEAF
    }
}

/// A validated page header.
#[derive(Debug, Clone, Copy)]
pub struct PageHeader {
    pub hdr_off: usize,
    pub kind: u8,
    pub first_free: usize,
    pub ncells: usize,
    pub content_start: usize,
    pub frag: usize,
    pub right_child: u32,
}

impl PageHeader {
    /// Parses and validates the header of page `pgno` (`data` is the whole page). Always
    /// inlined, its errors out of line: every page a descent loads is parsed, and out of
    /// line (`#[inline]` alone left it there) the call and the header's move out of its
    /// `Result` into the cursor's frame made a page load ~207 instructions, ~182 inlined
    /// (`TreeCursor::push`; callgrind, hc_mixed scan).
    #[inline(always)]
    pub fn parse(data: &[u8], pgno: PageNo, usable: usize) -> Result<PageHeader> {
        let hdr_off = header_offset(pgno);
        let h = match data.get(hdr_off..).and_then(|d| d.first_chunk::<12>()) {
            Some(h) if data.len() >= usable && usable >= hdr_off + 12 => h,
            _ => return Err(bad_header(pgno, "page shorter than its usable size")),
        };
        let kind = h[0];
        if !matches!(
            kind,
            INDEX_INTERIOR | TABLE_INTERIOR | INDEX_LEAF | TABLE_LEAF
        ) {
            return Err(bad_header(pgno, "not a b-tree page (bad page type)"));
        }
        let ncells = get_u16(h, 3);
        let mut content_start = get_u16(h, 5);
        if content_start == 0 {
            content_start = 65536;
        }
        let hdr = PageHeader {
            hdr_off,
            kind,
            first_free: get_u16(h, 1),
            ncells,
            content_start,
            frag: h[7] as usize,
            right_child: if is_leaf_kind(kind) { 0 } else { get_u32(h, 8) },
        };
        if hdr.ptr_array_end() > usable {
            return Err(bad_header(pgno, "too many cells for the page"));
        }
        // Even an empty page must not claim a content area inside its own header and
        // pointer array (free-space arithmetic relies on it; SQLite rejects it too).
        if content_start > usable || content_start < hdr.ptr_array_end() {
            return Err(bad_header(pgno, "cell content area out of range"));
        }
        if hdr.first_free != 0
            && (hdr.first_free < hdr.ptr_array_end() || hdr.first_free + 4 > usable)
        {
            return Err(bad_header(pgno, "first freeblock out of range"));
        }
        Ok(hdr)
    }

    #[inline]
    pub fn is_leaf(&self) -> bool {
        is_leaf_kind(self.kind)
    }

    #[inline]
    pub fn is_table(&self) -> bool {
        is_table_kind(self.kind)
    }

    #[inline]
    pub fn header_len(&self) -> usize {
        header_len_of(self.kind)
    }

    #[inline]
    pub fn ptr_array_start(&self) -> usize {
        self.hdr_off + self.header_len()
    }

    #[inline]
    pub fn ptr_array_end(&self) -> usize {
        self.ptr_array_start() + 2 * self.ncells
    }

    /// The raw cell pointer `i` (the caller checks `i < ncells` and validates the offset).
    #[inline]
    pub fn cell_ptr(&self, data: &[u8], i: usize) -> usize {
        get_u16(data, self.ptr_array_start() + 2 * i)
    }
}

/// The error of [`PageHeader::parse`], out of its inlined body.
#[cold]
#[inline(never)]
fn bad_header(pgno: PageNo, why: &'static str) -> StorageError {
    StorageError::corrupt(pgno, why.to_string())
}

/// Writes an empty page of type `kind` (page 1's database header is left untouched).
pub fn init_page(data: &mut [u8], pgno: PageNo, kind: u8, usable: usize) {
    let off = header_offset(pgno);
    let hl = header_len_of(kind);
    data[off..off + hl].fill(0);
    data[off] = kind;
    put_u16(data, off + 5, usable & 0xffff);
}

/// Total free bytes on the page: the gap between pointer array and content area, every
/// freeblock, and the fragments. Walks the freeblock chain, bounded by the page size.
pub fn free_space(data: &[u8], hdr: &PageHeader, usable: usize, pgno: PageNo) -> Result<usize> {
    let mut total = hdr.content_start - hdr.ptr_array_end() + hdr.frag;
    let mut pc = hdr.first_free;
    let mut prev_end = 0usize;
    while pc != 0 {
        if pc < prev_end || pc < hdr.content_start || pc + 4 > usable {
            return Err(StorageError::corrupt(
                pgno,
                "freeblock chain out of order or out of range",
            ));
        }
        let size = get_u16(data, pc + 2);
        if size < 4 || pc + size > usable {
            return Err(StorageError::corrupt(pgno, "freeblock size out of range"));
        }
        total += size;
        prev_end = pc + size;
        pc = get_u16(data, pc);
    }
    Ok(total)
}

/// Finds a freeblock of at least `need` bytes (first fit), unlinks or shrinks it and
/// returns the offset of the allocated space. `None` when no block fits (or the remainder
/// would push the fragment count past SQLite's limit). The blocks walked are checked as
/// `free_space` checks them (`insert_cell` may skip that walk), so a corrupt chain is
/// `Corrupt`, never a cell written outside the content area.
fn take_from_freeblocks(
    data: &mut [u8],
    hdr: &PageHeader,
    pgno: PageNo,
    need: usize,
    usable: usize,
) -> Result<Option<usize>> {
    let hdr_off = hdr.hdr_off;
    let mut prev_link = hdr_off + 1;
    let mut pc = get_u16(data, prev_link);
    let mut prev_end = 0usize;
    while pc != 0 {
        if pc < prev_end || pc < hdr.content_start || pc + 4 > usable {
            return Err(StorageError::corrupt(
                pgno,
                "freeblock chain out of order or out of range",
            ));
        }
        let size = get_u16(data, pc + 2);
        if size < 4 || pc + size > usable {
            return Err(StorageError::corrupt(pgno, "freeblock size out of range"));
        }
        prev_end = pc + size;
        if size >= need {
            let rest = size - need;
            if rest < 4 {
                let frag = data[hdr_off + 7] as usize;
                if frag + rest > MAX_FRAG {
                    return Ok(None);
                }
                // Unlink the whole block; the leftover bytes become fragments.
                let next = get_u16(data, pc);
                put_u16(data, prev_link, next);
                data[hdr_off + 7] = (frag + rest) as u8;
                return Ok(Some(pc));
            }
            // Keep the front of the block free, hand out its tail.
            put_u16(data, pc + 2, rest);
            return Ok(Some(pc + rest));
        }
        prev_link = pc;
        pc = get_u16(data, pc);
    }
    Ok(None)
}

/// Rewrites the content area so every cell is packed at the end of the page, leaving one
/// contiguous gap and no freeblocks (fragments too, unless the cheap path below applies
/// with `max_frag` > 0). SQLite's defragmentPage: a page with one or two freeblocks and at
/// most `max_frag` fragmented bytes is closed up with two `copy_within`s and a pass over
/// the pointer array, reading no cell (its fragments move along with the cells and stay
/// counted); any other page is rebuilt cell by cell. The gap is zeroed either way, as
/// SQLite does, so stale bytes never reach the file. Callgrind, speedtest1 test 230 (every
/// UPDATE grows its row by a column, so each rewrite of a packed page defragments it):
/// the rebuild-only version cost ~1,000 instructions a call plus a page-sized allocation.
pub fn defragment(
    data: &mut [u8],
    pgno: PageNo,
    usable: usize,
    kind_cell_size: impl Fn(&[u8], usize) -> Option<usize>,
) -> Result<()> {
    let hdr = PageHeader::parse(data, pgno, usable)?;
    defragment_page(data, &hdr, pgno, usable, 0, &kind_cell_size)
}

/// `defragment` on a page whose header was parsed as `hdr` (its freeblock pointer and
/// fragment count are read from `data`, which may have moved on since).
fn defragment_page(
    data: &mut [u8],
    hdr: &PageHeader,
    pgno: PageNo,
    usable: usize,
    max_frag: usize,
    kind_cell_size: &dyn Fn(&[u8], usize) -> Option<usize>,
) -> Result<()> {
    let ptr_end = hdr.ptr_array_end();
    let top = if defragment_two_blocks(data, hdr, pgno, usable, max_frag)? {
        content_start(data, hdr.hdr_off)
    } else {
        rebuild_content(data, hdr, pgno, usable, kind_cell_size)?
    };
    if top < ptr_end {
        return Err(StorageError::corrupt(pgno, "cells overflow the page"));
    }
    data[ptr_end..top].fill(0);
    Ok(())
}

/// SQLite's defragmentPage fast path: with one or two freeblocks (the second the last)
/// and at most `max_frag` fragmented bytes, the cells below each block slide up over it.
/// Returns false, changing nothing, when the page does not qualify.
fn defragment_two_blocks(
    data: &mut [u8],
    hdr: &PageHeader,
    pgno: PageNo,
    usable: usize,
    max_frag: usize,
) -> Result<bool> {
    let bad = |why: &str| StorageError::corrupt(pgno, why.to_string());
    let hdr_off = hdr.hdr_off;
    let free1 = get_u16(data, hdr_off + 1);
    if free1 == 0 || data[hdr_off + 7] as usize > max_frag {
        return Ok(false);
    }
    if free1 + 4 > usable {
        return Err(bad("first freeblock out of range"));
    }
    let free2 = get_u16(data, free1);
    if free2 != 0 {
        if free2 + 4 > usable {
            return Err(bad("freeblock out of range"));
        }
        if get_u16(data, free2) != 0 {
            return Ok(false);
        }
    }
    let top = content_start(data, hdr_off);
    if top >= free1 || top < hdr.ptr_array_end() {
        return Err(bad("freeblock before the content area"));
    }
    let mut size = get_u16(data, free1 + 2);
    let mut size2 = 0usize;
    if free2 != 0 {
        if free1 + size > free2 {
            return Err(bad("freeblocks overlap"));
        }
        size2 = get_u16(data, free2 + 2);
        if free2 + size2 > usable {
            return Err(bad("freeblock size out of range"));
        }
        data.copy_within(free1 + size..free2, free1 + size + size2);
        size += size2;
    } else if free1 + size > usable {
        return Err(bad("freeblock size out of range"));
    }
    let new_top = top + size;
    data.copy_within(top..free1, new_top);
    let start = hdr.ptr_array_start();
    for p in (start..hdr.ptr_array_end()).step_by(2) {
        let pc = get_u16(data, p);
        if pc < free1 {
            if pc < top {
                return Err(bad("cell pointer out of range"));
            }
            put_u16(data, p, pc + size);
        } else if pc < free2 {
            put_u16(data, p, pc + size2);
        }
    }
    put_u16(data, hdr_off + 1, 0);
    put_u16(data, hdr_off + 5, new_top & 0xffff);
    Ok(true)
}

thread_local! {
    /// The page copy `rebuild_content` reads from, kept per thread: a page-sized
    /// allocation per defragmentation was a tenth of its cost.
    static DEFRAG_COPY: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Packs every cell at the end of the page in pointer order, from a copy of the page;
/// clears freeblocks and fragments. Returns the new start of the content area.
fn rebuild_content(
    data: &mut [u8],
    hdr: &PageHeader,
    pgno: PageNo,
    usable: usize,
    kind_cell_size: &dyn Fn(&[u8], usize) -> Option<usize>,
) -> Result<usize> {
    DEFRAG_COPY.with(|copy| {
        let mut copy = copy.borrow_mut();
        copy.clear();
        copy.extend_from_slice(&data[..usable]);
        let mut top = usable;
        for i in 0..hdr.ncells {
            let pc = hdr.cell_ptr(&copy, i);
            if pc < hdr.ptr_array_end() || pc + 4 > usable {
                return Err(StorageError::corrupt(pgno, "cell pointer out of range"));
            }
            let size = kind_cell_size(&copy, pc)
                .ok_or_else(|| StorageError::corrupt(pgno, "cell extends past the page"))?;
            if size > top - hdr.ptr_array_end() {
                return Err(StorageError::corrupt(pgno, "cells overflow the page"));
            }
            top -= size;
            data[top..top + size].copy_from_slice(&copy[pc..pc + size]);
            put_u16(data, hdr.ptr_array_start() + 2 * i, top);
        }
        put_u16(data, hdr.hdr_off + 1, 0);
        put_u16(data, hdr.hdr_off + 5, top & 0xffff);
        data[hdr.hdr_off + 7] = 0;
        Ok(top)
    })
}

/// Inserts `cell` (already padded to at least 4 bytes) as cell number `idx`. Returns false,
/// changing nothing, when the page lacks room (the caller then balances).
///
/// Space is found as SQLite's allocateSpace finds it: first a freeblock big enough (when
/// the gap still holds the new cell pointer), else the gap between the pointer array and
/// the content area; only when the gap cannot hold the cell is the page defragmented, and
/// then by the cheap path when it qualifies (`defragment_page`).
pub fn insert_cell(
    data: &mut [u8],
    pgno: PageNo,
    usable: usize,
    idx: usize,
    cell: &[u8],
    cell_size: impl Fn(&[u8], usize) -> Option<usize>,
) -> Result<bool> {
    let hdr = PageHeader::parse(data, pgno, usable)?;
    let need = cell.len();
    debug_assert!(need >= 4);
    if idx > hdr.ncells {
        return Err(StorageError::corrupt(pgno, "cell index past the end"));
    }
    let ptr_end = hdr.ptr_array_end();
    let gap = hdr.content_start - ptr_end;
    // The page's total free space (a walk of its freeblock chain) matters only when the
    // gap above the pointer array cannot take the cell: on pages with freed cells the
    // walk was a third of `insert_cell` (~960 -> ~600 instructions a call; callgrind,
    // speedtest1 test 290). Either way the cell fits exactly when `free_space` says so.
    let mut total_free = None;
    if gap < need + 2 {
        let free = free_space(data, &hdr, usable, pgno)?;
        if free < need + 2 {
            return Ok(false);
        }
        total_free = Some(free);
    }
    let from_block = if hdr.first_free != 0 && gap >= 2 {
        take_from_freeblocks(data, &hdr, pgno, need, usable)?
    } else {
        None
    };
    let off = match (from_block, total_free) {
        (Some(off), _) => off,
        (None, None) => {
            let top = hdr.content_start - need;
            put_u16(data, hdr.hdr_off + 5, top & 0xffff);
            top
        }
        (None, Some(free)) => {
            // Fragments left behind must not eat into the room the cell needs.
            let max_frag = (free - (need + 2)).min(4);
            defragment_page(data, &hdr, pgno, usable, max_frag, &cell_size)?;
            let top = content_start(data, hdr.hdr_off);
            if top < ptr_end + need + 2 {
                return Err(StorageError::corrupt(
                    pgno,
                    "free space accounting is inconsistent",
                ));
            }
            put_u16(data, hdr.hdr_off + 5, (top - need) & 0xffff);
            top - need
        }
    };
    data[off..off + need].copy_from_slice(cell);
    let start = hdr.ptr_array_start() + 2 * idx;
    data.copy_within(start..ptr_end, start + 2);
    put_u16(data, start, off);
    put_u16(data, hdr.hdr_off + 3, hdr.ncells + 1);
    Ok(true)
}

#[inline]
fn content_start(data: &[u8], hdr_off: usize) -> usize {
    match get_u16(data, hdr_off + 5) {
        0 => 65536,
        v => v,
    }
}

/// Removes cell `idx` (occupying `size` bytes) and returns its space to the page, exactly
/// as SQLite's freeSpace(): the block joins the sorted freeblock list, coalescing with
/// neighbours (absorbing fragments of under 4 bytes between them), and a block at the start
/// of the content area just moves that start. Returns the page's free space afterwards
/// (`free_space`), counted on the way: the caller's underfull check then needs no second
/// walk of the chain, which after many deletes is long (callgrind, speedtest1 test 270:
/// that walk was ~700 instructions of every index entry deleted).
///
/// The count is exact whenever the page is underfull ([`is_underfull`]); otherwise it may
/// be an upper bound that is not underfull either. The walk past the freed cell only sums
/// the blocks, which lie in `[pc, usable)` beyond block `pc`: once even all of that could
/// not make the page underfull, it stops (SQLite keeps the count, `nFree`, in its page
/// object; parlite keeps no page object). So `is_underfull` of the result, and of the
/// result less any bytes the caller then fills, answers as the exact count would.
pub fn drop_cell(
    data: &mut [u8],
    pgno: PageNo,
    usable: usize,
    idx: usize,
    size: usize,
) -> Result<usize> {
    let hdr = PageHeader::parse(data, pgno, usable)?;
    if idx >= hdr.ncells {
        return Err(StorageError::corrupt(pgno, "cell index past the end"));
    }
    let pc = hdr.cell_ptr(data, idx);
    if pc < hdr.ptr_array_end() || pc + size > usable {
        return Err(StorageError::corrupt(pgno, "cell pointer out of range"));
    }
    let free_after = free_range(data, &hdr, pgno, usable, pc, size)?;
    let start = hdr.ptr_array_start() + 2 * idx;
    data.copy_within(start + 2..hdr.ptr_array_end(), start);
    put_u16(data, hdr.hdr_off + 3, hdr.ncells - 1);
    Ok(free_after)
}

/// Returns the block `[start, start + size)` and its cell pointer's 2 bytes to the page's
/// free space; the result is `drop_cell`'s (exact when underfull, else maybe a bound).
fn free_range(
    data: &mut [u8],
    hdr: &PageHeader,
    pgno: PageNo,
    usable: usize,
    start: usize,
    size: usize,
) -> Result<usize> {
    let bad = |why: &str| StorageError::corrupt(pgno, why.to_string());
    let hdr_off = hdr.hdr_off;
    // The free space before this call: gap, fragments, and every freeblock (summed on the
    // walk below and then over the rest of the chain, as far as the underfull test needs).
    let mut free_before = hdr.content_start - hdr.ptr_array_end() + hdr.frag;
    let mut start = start;
    let mut size = size;
    let mut frag = hdr.frag;
    // Walk to the freeblocks around `start`; `link` is the 2-byte field pointing at `next`,
    // `prev_link` the field pointing at `prev`.
    let mut prev = 0usize;
    let mut prev_link = 0usize;
    let mut link = hdr_off + 1;
    let mut next = hdr.first_free;
    let mut steps = 0;
    while next != 0 && next < start {
        steps += 1;
        if steps > usable / 4 || next + 4 > usable {
            return Err(bad("freeblock chain loops or leaves the page"));
        }
        let after = get_u16(data, next);
        if after != 0 && after <= next {
            return Err(bad("freeblocks out of order"));
        }
        free_before += get_u16(data, next + 2);
        prev = next;
        prev_link = link;
        link = next;
        next = after;
    }
    if next != 0 && (next < start + size || next + 4 > usable) {
        return Err(bad("freed cell overlaps a freeblock"));
    }
    let freed = size + 2;
    let mut pc = next;
    let mut prev_end = 0usize;
    while pc != 0 {
        let most = free_before + freed + (usable - pc.min(usable));
        if !is_underfull(most, usable) {
            free_before = most - freed;
            break;
        }
        steps += 1;
        if steps > usable / 4 || pc < prev_end || pc + 4 > usable {
            return Err(bad("freeblock chain out of order or out of range"));
        }
        let block = get_u16(data, pc + 2);
        if block < 4 || pc + block > usable {
            return Err(bad("freeblock size out of range"));
        }
        free_before += block;
        prev_end = pc + block;
        pc = get_u16(data, pc);
    }
    // Coalesce with the following block when at most 3 bytes (a fragment) separate them.
    if next != 0 && next - (start + size) <= 3 {
        let gap = next - (start + size);
        if gap > frag {
            return Err(bad("fragment count too small"));
        }
        frag -= gap;
        let next_size = get_u16(data, next + 2);
        size = next + next_size - start;
        next = get_u16(data, next);
    }
    // Coalesce with the preceding block likewise; the merged block takes prev's place.
    if prev != 0 {
        let prev_end = prev + get_u16(data, prev + 2);
        if prev_end > start {
            return Err(bad("freed cell overlaps a freeblock"));
        }
        if start - prev_end <= 3 {
            let gap = start - prev_end;
            if gap > frag {
                return Err(bad("fragment count too small"));
            }
            frag -= gap;
            size = start + size - prev;
            start = prev;
            link = prev_link;
        }
    }
    data[hdr_off + 7] = frag as u8;
    if start == content_start(data, hdr_off) {
        // The block is the front of the content area: grow the gap instead.
        if link != hdr_off + 1 {
            return Err(bad("freeblock before the content area"));
        }
        put_u16(data, hdr_off + 1, next);
        put_u16(data, hdr_off + 5, (start + size) & 0xffff);
    } else {
        put_u16(data, start, next);
        put_u16(data, start + 2, size);
        put_u16(data, link, start);
    }
    Ok(free_before + freed)
}

/// Writes a whole page from a list of cells (each unpadded; padded here to 4 bytes), packed
/// at the end of the page. `right` is the right-most child for interior pages.
pub fn write_page<'a>(
    data: &mut [u8],
    pgno: PageNo,
    kind: u8,
    usable: usize,
    cells: impl ExactSizeIterator<Item = &'a [u8]>,
    right: u32,
) -> Result<()> {
    let off = header_offset(pgno);
    let hl = header_len_of(kind);
    let mut top = usable;
    let ptr_start = off + hl;
    let ncells = cells.len();
    let ptr_end = ptr_start + 2 * ncells;
    for (i, c) in cells.enumerate() {
        let size = c.len().max(4);
        if top < ptr_end + size {
            return Err(StorageError::corrupt(
                pgno,
                "cells do not fit the page (internal error)",
            ));
        }
        top -= size;
        data[top..top + c.len()].copy_from_slice(c);
        data[top + c.len()..top + size].fill(0);
        put_u16(data, ptr_start + 2 * i, top);
    }
    data[off] = kind;
    put_u16(data, off + 1, 0);
    put_u16(data, off + 3, ncells);
    put_u16(data, off + 5, top & 0xffff);
    data[off + 7] = 0;
    if hl == 12 {
        data[off + 8..off + 12].copy_from_slice(&right.to_be_bytes());
    }
    // Zero the unused gap so stale bytes from earlier contents never reach the file.
    data[ptr_end..top].fill(0);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell_size(data: &[u8], off: usize) -> Option<usize> {
        crate::btree::cell::parse_cell(data, off, INDEX_LEAF, 512).map(|c| c.size())
    }

    #[test]
    fn rejects_bad_headers() {
        let mut page = vec![0u8; 512];
        init_page(&mut page, PageNo(2), INDEX_LEAF, 512);
        assert!(PageHeader::parse(&page, PageNo(2), 512).is_ok());
        let mut bad = page.clone();
        bad[0] = 7;
        assert!(PageHeader::parse(&bad, PageNo(2), 512).is_err());
        let mut bad = page.clone();
        put_u16(&mut bad, 5, 4); // content area inside the header, no cells
        assert!(PageHeader::parse(&bad, PageNo(2), 512).is_err());
        let mut bad = page.clone();
        put_u16(&mut bad, 3, 300); // more cell pointers than fit
        assert!(PageHeader::parse(&bad, PageNo(2), 512).is_err());
    }

    /// `insert_cell` skips the freeblock walk when the gap takes the cell, so the blocks
    /// it allocates from are checked where it walks: a block reaching past the page, or a
    /// chain out of order, is `Corrupt` (a fuzzed file made it panic, PARLITE_SEED=24301).
    #[test]
    fn insert_cell_rejects_corrupt_freeblocks() {
        let pgno = PageNo(2);
        let mut page = vec![0u8; 512];
        init_page(&mut page, pgno, INDEX_LEAF, 512);
        for _ in 0..3 {
            let cell = [20u8; 21];
            assert!(insert_cell(&mut page, pgno, 512, 0, &cell, cell_size).unwrap());
        }
        drop_cell(&mut page, pgno, 512, 1, 21).unwrap();
        let hdr = PageHeader::parse(&page, pgno, 512).unwrap();
        let block = hdr.first_free;
        assert_ne!(block, 0);
        let cell = [8u8; 9];
        let mut bad = page.clone();
        put_u16(&mut bad, block + 2, 400); // the block reaches past the page
        assert!(insert_cell(&mut bad, pgno, 512, 0, &cell, cell_size).is_err());
        let mut bad = page.clone();
        put_u16(&mut bad, block, block); // the chain loops onto itself
        put_u16(&mut bad, block + 2, 4);
        assert!(insert_cell(&mut bad, pgno, 512, 0, &cell, cell_size).is_err());
        assert!(insert_cell(&mut page, pgno, 512, 0, &cell, cell_size).unwrap());
    }

    /// Free space is accounted exactly through inserts, deletes (coalescing, fragments) and
    /// defragmentation: cells + freeblocks + fragments + gap always equal the page. The
    /// page is filled and emptied in turns, so `drop_cell`'s count is checked both where
    /// its walk may stop early (a full page: a bound, never underfull) and where the page
    /// is underfull (exact).
    #[test]
    fn free_space_accounting_survives_churn() {
        let mut page = vec![0u8; 512];
        let pgno = PageNo(2);
        init_page(&mut page, pgno, INDEX_LEAF, 512);
        let mut sizes: Vec<usize> = Vec::new();
        let mut seed = 12345u64;
        let mut rnd = |n: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize % n
        };
        let (mut bounded, mut underfull) = (0, 0);
        for step in 0..5000 {
            let hdr = PageHeader::parse(&page, pgno, 512).unwrap();
            let free = free_space(&page, &hdr, 512, pgno).unwrap();
            let used: usize = sizes.iter().map(|s| s + 2).sum();
            assert_eq!(free + used + 8, 512, "step {step}");
            let filling = step / 250 % 2 == 0;
            if sizes.is_empty() || rnd(4) < if filling { 3 } else { 1 } {
                // An index leaf cell: payload-size varint, then that many bytes (1..=60).
                let len = 1 + rnd(60);
                let mut cell = vec![len as u8];
                cell.extend(std::iter::repeat(0xab).take(len));
                while cell.len() < 4 {
                    cell.push(0);
                }
                let idx = rnd(sizes.len() + 1);
                if insert_cell(&mut page, pgno, 512, idx, &cell, cell_size).unwrap() {
                    sizes.insert(idx, cell.len());
                }
            } else {
                let idx = rnd(sizes.len());
                let free = drop_cell(&mut page, pgno, 512, idx, sizes[idx]).unwrap();
                sizes.remove(idx);
                let hdr = PageHeader::parse(&page, pgno, 512).unwrap();
                let exact = free_space(&page, &hdr, 512, pgno).unwrap();
                if is_underfull(exact, 512) {
                    assert_eq!(free, exact, "step {step}");
                    underfull += 1;
                } else {
                    assert!(free >= exact && !is_underfull(free, 512), "step {step}");
                    bounded += usize::from(free > exact);
                }
            }
        }
        assert!(bounded > 100 && underfull > 100, "{bounded} {underfull}");
    }

    /// An index leaf cell of exactly `len` bytes (4..=128): a one-byte payload size, then
    /// the payload, every byte `fill`.
    fn filled_cell(len: usize, fill: u8) -> Vec<u8> {
        let mut c = vec![fill; len];
        c[0] = (len - 1) as u8;
        c
    }

    fn sizer(usable: usize) -> impl Fn(&[u8], usize) -> Option<usize> {
        move |data: &[u8], off: usize| {
            crate::btree::cell::parse_cell(data, off, INDEX_LEAF, usable).map(|c| c.size())
        }
    }

    /// The freeblock chain as (offset, size) pairs.
    fn blocks(page: &[u8]) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut pc = get_u16(page, 1);
        while pc != 0 {
            out.push((pc, get_u16(page, pc + 2)));
            pc = get_u16(page, pc);
        }
        out
    }

    /// Checks the page the way SQLite's integrity check does: cells and freeblocks inside
    /// the content area, never overlapping, freeblocks sorted and apart, and the bytes
    /// covered by neither exactly the fragment count. Returns the cells' contents in order.
    fn sound(page: &[u8], usable: usize) -> Vec<Vec<u8>> {
        let pgno = PageNo(2);
        let hdr = PageHeader::parse(page, pgno, usable).unwrap();
        let size_of = sizer(usable);
        let mut spans = Vec::new();
        let mut cells = Vec::new();
        for i in 0..hdr.ncells {
            let pc = hdr.cell_ptr(page, i);
            let n = size_of(page, pc).unwrap();
            spans.push((pc, n));
            cells.push(page[pc..pc + n].to_vec());
        }
        let chain = blocks(page);
        for w in chain.windows(2) {
            assert!(
                w[0].0 + w[0].1 + 4 <= w[1].0,
                "freeblocks unsorted or touching"
            );
        }
        spans.extend(chain.iter().copied());
        spans.sort();
        let mut at = hdr.content_start;
        let mut loose = 0;
        for (off, n) in spans {
            assert!(off >= at, "overlap at {off}");
            loose += off - at;
            at = off + n;
        }
        assert!(at <= usable);
        loose += usable - at;
        assert_eq!(loose, hdr.frag, "fragment count");
        assert!(hdr.frag <= MAX_FRAG);
        cells
    }

    /// Freed cells join the freeblock list in order and merge with free neighbours on
    /// both sides; a block reaching the content area's start moves that start instead.
    #[test]
    fn freed_cells_coalesce_with_neighbours() {
        let (pgno, usable) = (PageNo(2), 1024);
        let mut page = vec![0u8; usable];
        init_page(&mut page, pgno, INDEX_LEAF, usable);
        for i in 0..5 {
            let c = filled_cell(20, i as u8 + 1);
            assert!(insert_cell(&mut page, pgno, usable, i, &c, sizer(usable)).unwrap());
        }
        // Cells were placed downwards from the end: cell i at 1004 - 20 * i.
        assert_eq!(content_start(&page, 0), 924);
        drop_cell(&mut page, pgno, usable, 1, 20).unwrap(); // 984
        drop_cell(&mut page, pgno, usable, 2, 20).unwrap(); // cell 3, at 944
        assert_eq!(blocks(&page), vec![(944, 20), (984, 20)]);
        drop_cell(&mut page, pgno, usable, 1, 20).unwrap(); // cell 2, at 964: joins both
        assert_eq!(blocks(&page), vec![(944, 60)]);
        sound(&page, usable);
        drop_cell(&mut page, pgno, usable, 1, 20).unwrap(); // cell 4, the area's start
        assert_eq!(blocks(&page), vec![]);
        assert_eq!(content_start(&page, 0), 1004);
        assert_eq!(sound(&page, usable), vec![filled_cell(20, 1)]);
    }

    /// A freeblock 1-3 bytes larger than the cell is taken whole, the rest counted as
    /// fragments, until the count would pass 60: then the block is refused and, the gap
    /// being too small, the page is defragmented (which clears the fragments).
    #[test]
    fn fragments_past_sixty_force_defragmentation() {
        let (pgno, usable) = (PageNo(2), 1024);
        let mut page = vec![0u8; usable];
        init_page(&mut page, pgno, INDEX_LEAF, usable);
        for i in 0..43 {
            let c = filled_cell(8, 100 + i as u8);
            assert!(insert_cell(&mut page, pgno, usable, i, &c, sizer(usable)).unwrap());
        }
        // Fill the gap down to 4 bytes.
        for n in [128, 128, 128, 128, 60] {
            let at = get_u16(&page, 3);
            assert!(insert_cell(
                &mut page,
                pgno,
                usable,
                at,
                &filled_cell(n, 7),
                sizer(usable)
            )
            .unwrap());
        }
        let gap = |p: &[u8]| {
            let h = PageHeader::parse(p, pgno, usable).unwrap();
            h.content_start - h.ptr_array_end()
        };
        assert_eq!(gap(&page), 4);
        for i in (1..43).step_by(2).rev() {
            drop_cell(&mut page, pgno, usable, i, 8).unwrap();
        }
        assert_eq!(blocks(&page).len(), 21);
        for k in 0..20 {
            let c = filled_cell(5, 200 + k);
            assert!(insert_cell(&mut page, pgno, usable, 1, &c, sizer(usable)).unwrap());
            assert_eq!(page[7] as usize, 3 * (k as usize + 1));
        }
        assert_eq!(page[7], 60);
        assert_eq!(blocks(&page).len(), 1);
        assert_eq!(gap(&page), 6);
        let before = sound(&page, usable);
        assert!(insert_cell(
            &mut page,
            pgno,
            usable,
            0,
            &filled_cell(5, 250),
            sizer(usable)
        )
        .unwrap());
        assert_eq!(page[7], 0, "defragmented");
        assert_eq!(blocks(&page), vec![]);
        let after = sound(&page, usable);
        assert_eq!(after[0], filled_cell(5, 250));
        assert_eq!(after[1..], before[..]);
    }

    /// A cell larger than every freeblock but not than the free space in all: the cheap
    /// defragmentation (two freeblocks) closes them up and the cell goes into the gap,
    /// leaving every other cell's bytes as they were.
    #[test]
    fn cell_larger_than_each_freeblock_fits_after_closing_them() {
        let (pgno, usable) = (PageNo(2), 1024);
        let mut page = vec![0u8; usable];
        init_page(&mut page, pgno, INDEX_LEAF, usable);
        let mut n = 0;
        while gap_of(&page, pgno, usable) >= 22 + 2 + 4 {
            let c = filled_cell(22, n as u8 + 1);
            assert!(insert_cell(&mut page, pgno, usable, n, &c, sizer(usable)).unwrap());
            n += 1;
        }
        drop_cell(&mut page, pgno, usable, 3, 22).unwrap();
        drop_cell(&mut page, pgno, usable, 9, 22).unwrap();
        assert_eq!(blocks(&page).len(), 2);
        let gap = gap_of(&page, pgno, usable);
        let before = sound(&page, usable);
        let big = filled_cell(40, 99);
        assert!(gap < 42);
        assert!(insert_cell(&mut page, pgno, usable, 5, &big, sizer(usable)).unwrap());
        assert_eq!(blocks(&page), vec![]);
        let after = sound(&page, usable);
        assert_eq!(after[5], big);
        assert_eq!([&after[..5], &after[6..]].concat(), before);
        // Too big for the page's free space in all: refused, nothing changed.
        let snapshot = page.clone();
        let huge = filled_cell(128, 1);
        if gap_of(&page, pgno, usable) < 130 {
            assert!(!insert_cell(&mut page, pgno, usable, 0, &huge, sizer(usable)).unwrap());
            assert_eq!(page, snapshot);
        }
    }

    fn gap_of(page: &[u8], pgno: PageNo, usable: usize) -> usize {
        let h = PageHeader::parse(page, pgno, usable).unwrap();
        h.content_start - h.ptr_array_end()
    }

    /// The cheap defragmentation and the full rebuild leave the same cells in the same
    /// order, the same free space and a zeroed gap, on pages with one or two freeblocks.
    #[test]
    fn cheap_and_full_defragmentation_agree() {
        let (pgno, usable) = (PageNo(2), 1024);
        let mut seed = 99u64;
        let mut rnd = |n: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize % n
        };
        for _ in 0..200 {
            let mut page = vec![0u8; usable];
            init_page(&mut page, pgno, INDEX_LEAF, usable);
            let mut sizes = Vec::new();
            loop {
                let len = 4 + rnd(60);
                let c = filled_cell(len, 1 + rnd(250) as u8);
                let at = rnd(sizes.len() + 1);
                if !insert_cell(&mut page, pgno, usable, at, &c, sizer(usable)).unwrap() {
                    break;
                }
                sizes.insert(at, len);
            }
            for _ in 0..1 + rnd(2) {
                let i = rnd(sizes.len());
                drop_cell(&mut page, pgno, usable, i, sizes.remove(i)).unwrap();
            }
            let hdr = PageHeader::parse(&page, pgno, usable).unwrap();
            let free = free_space(&page, &hdr, usable, pgno).unwrap();
            let cells = sound(&page, usable);
            let mut cheap = page.clone();
            let took = defragment_two_blocks(&mut cheap, &hdr, pgno, usable, 60).unwrap();
            assert_eq!(took, !blocks(&page).is_empty());
            let mut full = page.clone();
            defragment(&mut full, pgno, usable, sizer(usable)).unwrap();
            for p in [&cheap, &full] {
                assert_eq!(sound(p, usable), cells);
                let h = PageHeader::parse(p, pgno, usable).unwrap();
                assert_eq!(free_space(p, &h, usable, pgno).unwrap(), free);
            }
            assert_eq!(full[7], 0);
            let h = PageHeader::parse(&full, pgno, usable).unwrap();
            assert!(full[h.ptr_array_end()..h.content_start]
                .iter()
                .all(|&b| b == 0));
        }
    }
}
