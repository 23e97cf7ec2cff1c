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
    /// Parses and validates the header of page `pgno` (`data` is the whole page).
    pub fn parse(data: &[u8], pgno: PageNo, usable: usize) -> Result<PageHeader> {
        let hdr_off = header_offset(pgno);
        let bad = |why: &str| StorageError::corrupt(pgno, why.to_string());
        if data.len() < usable || usable < hdr_off + 12 {
            return Err(bad("page shorter than its usable size"));
        }
        let kind = data[hdr_off];
        if !matches!(
            kind,
            INDEX_INTERIOR | TABLE_INTERIOR | INDEX_LEAF | TABLE_LEAF
        ) {
            return Err(bad("not a b-tree page (bad page type)"));
        }
        let ncells = get_u16(data, hdr_off + 3);
        let mut content_start = get_u16(data, hdr_off + 5);
        if content_start == 0 {
            content_start = 65536;
        }
        let hdr = PageHeader {
            hdr_off,
            kind,
            first_free: get_u16(data, hdr_off + 1),
            ncells,
            content_start,
            frag: data[hdr_off + 7] as usize,
            right_child: if is_leaf_kind(kind) {
                0
            } else {
                get_u32(data, hdr_off + 8)
            },
        };
        if hdr.ptr_array_end() > usable {
            return Err(bad("too many cells for the page"));
        }
        // Even an empty page must not claim a content area inside its own header and
        // pointer array (free-space arithmetic relies on it; SQLite rejects it too).
        if content_start > usable || content_start < hdr.ptr_array_end() {
            return Err(bad("cell content area out of range"));
        }
        if hdr.first_free != 0
            && (hdr.first_free < hdr.ptr_array_end() || hdr.first_free + 4 > usable)
        {
            return Err(bad("first freeblock out of range"));
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
/// contiguous gap and no freeblocks or fragments.
pub fn defragment(
    data: &mut [u8],
    pgno: PageNo,
    usable: usize,
    kind_cell_size: impl Fn(&[u8], usize) -> Option<usize>,
) -> Result<()> {
    let hdr = PageHeader::parse(data, pgno, usable)?;
    let copy = data[..usable].to_vec();
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
    Ok(())
}

/// Inserts `cell` (already padded to at least 4 bytes) as cell number `idx`. Returns false,
/// changing nothing, when the page lacks room (the caller then balances).
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
    let mut gap = hdr.content_start - hdr.ptr_array_end();
    // The page's total free space (a walk of its freeblock chain) matters only when the
    // gap above the pointer array cannot take the cell: on pages with freed cells the
    // walk was a third of `insert_cell` (~960 -> ~600 instructions a call; callgrind,
    // speedtest1 test 290). Either way the cell fits exactly when `free_space` says so.
    if gap < need + 2 && free_space(data, &hdr, usable, pgno)? < need + 2 {
        return Ok(false);
    }
    if gap < 2 {
        defragment(data, pgno, usable, &cell_size)?;
        gap = content_start(data, hdr.hdr_off) - hdr.ptr_array_end();
    }
    let mut off = if hdr.first_free != 0 && gap >= 2 {
        take_from_freeblocks(data, &hdr, pgno, need, usable)?
    } else {
        None
    };
    if off.is_none() {
        if gap < need + 2 {
            defragment(data, pgno, usable, &cell_size)?;
        }
        let top = content_start(data, hdr.hdr_off);
        if top < hdr.ptr_array_end() + need + 2 {
            return Err(StorageError::corrupt(
                pgno,
                "free space accounting is inconsistent",
            ));
        }
        let new_top = top - need;
        put_u16(data, hdr.hdr_off + 5, new_top & 0xffff);
        off = Some(new_top);
    }
    let off = off.unwrap_or(0);
    data[off..off + need].copy_from_slice(cell);
    let start = hdr.ptr_array_start() + 2 * idx;
    let end = hdr.ptr_array_end();
    data.copy_within(start..end, start + 2);
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
/// of the content area just moves that start.
pub fn drop_cell(
    data: &mut [u8],
    pgno: PageNo,
    usable: usize,
    idx: usize,
    size: usize,
) -> Result<()> {
    let hdr = PageHeader::parse(data, pgno, usable)?;
    if idx >= hdr.ncells {
        return Err(StorageError::corrupt(pgno, "cell index past the end"));
    }
    let pc = hdr.cell_ptr(data, idx);
    if pc < hdr.ptr_array_end() || pc + size > usable {
        return Err(StorageError::corrupt(pgno, "cell pointer out of range"));
    }
    free_range(data, &hdr, pgno, usable, pc, size)?;
    let start = hdr.ptr_array_start() + 2 * idx;
    data.copy_within(start + 2..hdr.ptr_array_end(), start);
    put_u16(data, hdr.hdr_off + 3, hdr.ncells - 1);
    Ok(())
}

fn free_range(
    data: &mut [u8],
    hdr: &PageHeader,
    pgno: PageNo,
    usable: usize,
    start: usize,
    size: usize,
) -> Result<()> {
    let bad = |why: &str| StorageError::corrupt(pgno, why.to_string());
    let hdr_off = hdr.hdr_off;
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
        prev = next;
        prev_link = link;
        link = next;
        next = after;
    }
    if next != 0 && (next < start + size || next + 4 > usable) {
        return Err(bad("freed cell overlaps a freeblock"));
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
    Ok(())
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
    /// defragmentation: cells + freeblocks + fragments + gap always equal the page.
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
        for step in 0..5000 {
            let hdr = PageHeader::parse(&page, pgno, 512).unwrap();
            let free = free_space(&page, &hdr, 512, pgno).unwrap();
            let used: usize = sizes.iter().map(|s| s + 2).sum();
            assert_eq!(free + used + 8, 512, "step {step}");
            if sizes.is_empty() || rnd(3) > 0 {
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
                drop_cell(&mut page, pgno, 512, idx, sizes[idx]).unwrap();
                sizes.remove(idx);
            }
        }
    }
}
