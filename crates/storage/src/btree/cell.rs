//! Cells: the entries of B-tree pages, and how a payload splits between the page and its
//! overflow chain (fileformat2 §1.6).
//!
//! | page type      | cell layout                                                      |
//! |----------------|------------------------------------------------------------------|
//! | table leaf     | varint payload size P, varint rowid, local payload, [overflow pg]|
//! | table interior | 4-byte left child, varint rowid                                  |
//! | index leaf     | varint payload size P, local payload, [overflow page]            |
//! | index interior | 4-byte left child, varint P, local payload, [overflow page]      |
//!
//! With U the usable page size: X = U-35 for table leaves, ((U-12)*64/255)-23 for index
//! pages; M = ((U-12)*32/255)-23; if P <= X the payload is all local, otherwise
//! K = M + ((P-M) % (U-4)) bytes stay local if K <= X, else M bytes; the rest goes to
//! overflow pages of U-4 payload bytes each behind a 4-byte next-page number.
//!
//! Invariant: index leaf and index interior pages use the same X, so an index cell moves
//! between leaf and interior pages by adding or removing the 4-byte child pointer, with
//! its overflow chain unchanged. Parsing never reads outside the page: a cell that would
//! is `None`, turned into `Corrupt` by callers.

use super::page::{
    is_leaf_kind, is_table_kind, INDEX_INTERIOR, INDEX_LEAF, TABLE_INTERIOR, TABLE_LEAF,
};
use crate::header::get_u32;
use crate::varint::{get_varint, push_varint, put_varint, varint_len};

/// Largest local payload on a page of this family (X above).
#[inline]
pub fn max_local(usable: usize, table_leaf: bool) -> usize {
    if table_leaf {
        usable - 35
    } else {
        ((usable - 12) * 64 / 255) - 23
    }
}

/// Smallest local payload once a payload spills (M above).
#[inline]
pub fn min_local(usable: usize) -> usize {
    ((usable - 12) * 32 / 255) - 23
}

/// Bytes of a `payload_size`-byte payload kept on the page.
#[inline]
pub fn local_len(payload_size: u64, usable: usize, table_leaf: bool) -> usize {
    let x = max_local(usable, table_leaf);
    if payload_size <= x as u64 {
        return payload_size as usize;
    }
    let m = min_local(usable) as u64;
    let k = m + (payload_size - m) % (usable as u64 - 4);
    if k <= x as u64 {
        k as usize
    } else {
        m as usize
    }
}

/// Number of overflow pages for a payload.
#[inline]
pub fn overflow_pages(payload_size: u64, local: usize, usable: usize) -> u64 {
    let rest = payload_size - local as u64;
    rest.div_ceil(usable as u64 - 4)
}

/// A parsed cell. Offsets are within the page.
#[derive(Debug, Clone, Copy, Default)]
pub struct CellInfo {
    /// Left child (interior pages), else 0.
    pub left_child: u32,
    /// Rowid for table cells, 0 for index cells.
    pub key: i64,
    /// Payload size in bytes (0 for table interior cells).
    pub payload_size: u64,
    /// Where the local payload starts.
    pub local_start: usize,
    pub local_len: usize,
    /// First overflow page, 0 if none.
    pub overflow: u32,
    /// Bytes the cell's content actually spans.
    pub real_len: usize,
}

impl CellInfo {
    /// Bytes the cell occupies on the page (SQLite's minimum is 4).
    #[inline]
    pub fn size(&self) -> usize {
        self.real_len.max(4)
    }
}

/// Parses the cell at `off` on a page of type `kind`. `None` if it runs past `usable`.
#[inline]
pub fn parse_cell(data: &[u8], off: usize, kind: u8, usable: usize) -> Option<CellInfo> {
    // Bounded by the usable size, or by `data` when it is a lone cell rather than a page.
    let page = &data[..usable.min(data.len())];
    let mut info = CellInfo::default();
    let mut p = off;
    if !is_leaf_kind(kind) {
        info.left_child = get_u32(page.get(p..p + 4)?, 0);
        p += 4;
        if kind == TABLE_INTERIOR {
            let (k, n) = get_varint(page.get(p..)?)?;
            info.key = k as i64;
            info.local_start = p + n;
            info.real_len = p + n - off;
            return Some(info);
        }
    }
    let (size, n) = get_varint(page.get(p..)?)?;
    p += n;
    info.payload_size = size;
    if kind == TABLE_LEAF {
        let (k, n) = get_varint(page.get(p..)?)?;
        info.key = k as i64;
        p += n;
    }
    let local = local_len(size, usable, kind == TABLE_LEAF);
    info.local_start = p;
    info.local_len = local;
    p = p.checked_add(local)?;
    if (local as u64) < size {
        info.overflow = get_u32(page.get(p..p + 4)?, 0);
        p += 4;
    } else if p > page.len() {
        return None;
    }
    info.real_len = p - off;
    Some(info)
}

/// Sizes of the cells of one page type, for walks over every cell of a page (balancing
/// reads two or three whole pages per split). The common cell, a one-byte payload size and
/// an all-local payload, is sized from its first bytes without building a [`CellInfo`]:
/// speedtest1 test 120 spent ~140 instructions a cell in `parse_cell` and its checks.
#[derive(Debug, Clone, Copy)]
pub struct CellSizer {
    kind: u8,
    usable: usize,
    max_local: usize,
}

impl CellSizer {
    pub fn new(kind: u8, usable: usize) -> CellSizer {
        CellSizer {
            kind,
            usable,
            max_local: max_local(usable, kind == TABLE_LEAF),
        }
    }

    /// Bytes the cell at `off` occupies (at least 4), as `parse_cell(..).size()`; `None`
    /// when it runs past the usable size.
    #[inline]
    pub fn size(&self, data: &[u8], off: usize) -> Option<usize> {
        let page = &data[..self.usable.min(data.len())];
        let fast = match self.kind {
            INDEX_LEAF | INDEX_INTERIOR => {
                let p = if self.kind == INDEX_LEAF {
                    off
                } else {
                    off + 4
                };
                match page.get(p) {
                    Some(&b) if b < 0x80 && (b as usize) <= self.max_local => {
                        Some(p + 1 + b as usize)
                    }
                    _ => None,
                }
            }
            TABLE_LEAF => match page.get(off) {
                Some(&b) if b < 0x80 && (b as usize) <= self.max_local => {
                    skip_varint(page, off + 1).map(|p| p + b as usize)
                }
                _ => None,
            },
            _ => skip_varint(page, off + 4),
        };
        match fast {
            Some(end) if end <= page.len() => Some((end - off).max(4)),
            _ => parse_cell(page, off, self.kind, self.usable).map(|c| c.size()),
        }
    }
}

/// The offset just past the varint at `p`, or `None` when it runs past `page`.
#[inline]
fn skip_varint(page: &[u8], p: usize) -> Option<usize> {
    for i in 0..9 {
        if *page.get(p + i)? < 0x80 {
            return Some(p + i + 1);
        }
    }
    Some(p + 9)
}

/// Size in bytes a cell occupies on a page of type `kind` (for defragmentation).
pub fn cell_size_fn(kind: u8, usable: usize) -> impl Fn(&[u8], usize) -> Option<usize> {
    move |data: &[u8], off: usize| parse_cell(data, off, kind, usable).map(|c| c.size())
}

/// Reads just the rowid of a table cell (leaf or interior) — the hot path of rowid seeks.
#[inline]
pub fn table_cell_key(data: &[u8], off: usize, kind: u8) -> Option<i64> {
    let p = if kind == TABLE_LEAF {
        let (_, n) = get_varint(data.get(off..)?)?;
        off + n
    } else {
        off + 4
    };
    get_varint(data.get(p..)?).map(|(k, _)| k as i64)
}

/// Builds a table leaf cell: payload size, rowid, the local part, and `overflow` if any.
pub fn build_table_leaf(
    out: &mut Vec<u8>,
    rowid: i64,
    payload_size: u64,
    local: &[u8],
    overflow: u32,
) {
    out.clear();
    push_varint(out, payload_size);
    push_varint(out, rowid as u64);
    out.extend_from_slice(local);
    if overflow != 0 {
        out.extend_from_slice(&overflow.to_be_bytes());
    }
}

/// Size of the table leaf cell of a payload of `payload_len` bytes that stays all on the
/// page (P <= X), padded to the 4-byte minimum as `insert::make_cell` pads; None when the
/// payload spills.
#[inline]
pub fn table_leaf_local_size(rowid: i64, payload_len: usize, usable: usize) -> Option<usize> {
    let n = payload_len;
    (n <= max_local(usable, true))
        .then(|| (varint_len(n as u64) + varint_len(rowid as u64) + n).max(4))
}

/// Writes the cell `build_table_leaf` builds for an all-local payload of `payload_len` bytes
/// straight into `out`, whose length is [`table_leaf_local_size`] (padding zeroed);
/// `write_payload` fills the payload's slice. An UPDATE that keeps a row's cell size
/// overwrites the old cell this way, without building it in a buffer first (one copy of
/// the row fewer; BENCHMARKS.md, rowcopy branch), and may encode the record right there
/// (`insert::Payload::Values`, hold branch).
pub fn put_table_leaf_local(
    out: &mut [u8],
    rowid: i64,
    payload_len: usize,
    write_payload: impl FnOnce(&mut [u8]),
) {
    let mut at = put_varint(out, payload_len as u64);
    at += put_varint(&mut out[at..], rowid as u64);
    write_payload(&mut out[at..at + payload_len]);
    out[at + payload_len..].fill(0);
}

/// Builds an index leaf cell.
pub fn build_index_leaf(out: &mut Vec<u8>, payload_size: u64, local: &[u8], overflow: u32) {
    out.clear();
    push_varint(out, payload_size);
    out.extend_from_slice(local);
    if overflow != 0 {
        out.extend_from_slice(&overflow.to_be_bytes());
    }
}

/// Builds a table interior cell.
pub fn build_table_interior(child: u32, rowid: i64) -> Vec<u8> {
    let mut out = Vec::with_capacity(13);
    out.extend_from_slice(&child.to_be_bytes());
    push_varint(&mut out, rowid as u64);
    out
}

/// Copies a cell into a cell for another page type of the same family: adds or strips the
/// 4-byte left child (index leaf <-> interior) and trims padding, using `child` as the new
/// left child where one is needed.
pub fn convert_cell(cell: &[u8], from: u8, to: u8, child: u32, usable: usize) -> Option<Vec<u8>> {
    debug_assert_eq!(is_table_kind(from), is_table_kind(to));
    let info = parse_cell(cell, 0, from, usable)?;
    let body_start = if is_leaf_kind(from) { 0 } else { 4 };
    let body = cell.get(body_start..info.real_len)?;
    let mut out = Vec::with_capacity(body.len() + 4);
    match to {
        INDEX_INTERIOR | TABLE_INTERIOR => {
            out.extend_from_slice(&child.to_be_bytes());
            out.extend_from_slice(body);
        }
        INDEX_LEAF | TABLE_LEAF => out.extend_from_slice(body),
        _ => return None,
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overflow_math_matches_fileformat_examples() {
        // U = 4096: X(table leaf) = 4061, X(index) = 1002, M = 489.
        assert_eq!(max_local(4096, true), 4061);
        assert_eq!(max_local(4096, false), 1002);
        assert_eq!(min_local(4096), 489);
        assert_eq!(local_len(4061, 4096, true), 4061);
        // P = 4062: K = 489 + (4062-489) % 4092 = 4062 > X, so M = 489 local.
        assert_eq!(local_len(4062, 4096, true), 489);
        // P = 5000: K = 489 + 4511 % 4092 = 908 <= X.
        assert_eq!(local_len(5000, 4096, true), 908);
        assert_eq!(overflow_pages(5000, 908, 4096), 1);
        assert_eq!(local_len(1002, 4096, false), 1002);
        // P = 1003: K = 489 + 514 = 1003 > X, so M.
        assert_eq!(local_len(1003, 4096, false), 489);
        // U = 512 (the smallest page): X(index) = 102, M = 39.
        assert_eq!(max_local(512, false), 102);
        assert_eq!(min_local(512), 39);
    }

    #[test]
    fn cells_round_trip() {
        let mut page = vec![0u8; 512];
        let mut cell = Vec::new();
        build_table_leaf(&mut cell, -5, 3, b"abc", 0);
        page[100..100 + cell.len()].copy_from_slice(&cell);
        let info = parse_cell(&page, 100, TABLE_LEAF, 512).unwrap();
        assert_eq!(
            (info.key, info.payload_size, info.local_len, info.overflow),
            (-5, 3, 3, 0)
        );
        assert_eq!(info.real_len, cell.len());
        assert_eq!(table_cell_key(&page, 100, TABLE_LEAF), Some(-5));
        let leaf = vec![2u8, 1, 9];
        let interior = convert_cell(&leaf, INDEX_LEAF, INDEX_INTERIOR, 77, 512).unwrap();
        assert_eq!(interior, vec![0, 0, 0, 77, 2, 1, 9]);
        assert_eq!(
            convert_cell(&interior, INDEX_INTERIOR, INDEX_LEAF, 0, 512).unwrap(),
            leaf
        );
        // A cell running off the page is rejected.
        let mut page = vec![0u8; 512];
        page[510] = 0x7f;
        assert!(parse_cell(&page, 510, INDEX_LEAF, 512).is_none());
    }

    /// `CellSizer` (balancing's fast sizing) agrees with `parse_cell` on every cell shape:
    /// one- and multi-byte payload sizes, local and spilled payloads, all four page types.
    #[test]
    fn cell_sizer_agrees_with_parse_cell() {
        for usable in [512usize, 4096, 65536] {
            for payload in [0usize, 1, 3, 100, 127, 128, 500, 1002, 1003, 5000, 70000] {
                for rowid in [0i64, -1, 300, i64::MAX] {
                    let body = vec![7u8; payload];
                    let mut leaf = Vec::new();
                    build_table_leaf(
                        &mut leaf,
                        rowid,
                        payload as u64,
                        &body[..local_len(payload as u64, usable, true)],
                        9,
                    );
                    let mut ileaf = Vec::new();
                    build_index_leaf(
                        &mut ileaf,
                        payload as u64,
                        &body[..local_len(payload as u64, usable, false)],
                        9,
                    );
                    let iint = convert_cell(&ileaf, INDEX_LEAF, INDEX_INTERIOR, 5, usable).unwrap();
                    let tint = build_table_interior(5, rowid);
                    for (kind, cell) in [
                        (TABLE_LEAF, leaf),
                        (INDEX_LEAF, ileaf),
                        (INDEX_INTERIOR, iint),
                        (TABLE_INTERIOR, tint),
                    ] {
                        if cell.len() + 8 > usable {
                            continue;
                        }
                        let mut page = vec![0u8; usable];
                        page[8..8 + cell.len()].copy_from_slice(&cell);
                        let want = parse_cell(&page, 8, kind, usable).map(|c| c.size());
                        assert_eq!(
                            CellSizer::new(kind, usable).size(&page, 8),
                            want,
                            "kind {kind} payload {payload} usable {usable}"
                        );
                        // Cut off by the end of the page: both say None.
                        let cut = usable - cell.len() / 2;
                        if cell.len() >= 2 {
                            let mut page = vec![0u8; usable];
                            page[cut..].copy_from_slice(&cell[..usable - cut]);
                            assert_eq!(
                                CellSizer::new(kind, usable).size(&page, cut),
                                parse_cell(&page, cut, kind, usable).map(|c| c.size())
                            );
                        }
                    }
                }
            }
        }
    }
}
