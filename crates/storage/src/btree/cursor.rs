//! Tree navigation: descending from a root, stepping between entries in key order, and
//! seeking. [`TreeCursor`] knows pages, not transactions; `txn::Cursor` wraps it with
//! position saving across modifications.
//!
//! Position model. `stack` holds one [`Frame`] per level, root first. For an interior
//! frame, `idx` is the child the cursor went down into (0..=ncells; ncells = the
//! right-most child). For the top frame of a valid cursor:
//! - a leaf frame: `idx` is the cell the cursor is on (< ncells);
//! - an interior frame (index trees only — their interior cells are entries too): the
//!   cursor is on interior cell `idx`, which in key order comes right after every entry of
//!   child `idx` and before every entry of child `idx + 1`.
//!
//! Invariants: descents are bounded by [`MAX_DEPTH`] (a page cycle is `Corrupt`); every
//! page read is checked to belong to the tree's family (table or index); cell pointers are
//! validated before use. Seeks allocate nothing on the table path; index seeks reuse a
//! scratch buffer for keys that spill onto overflow pages.

use super::cell::{max_local, parse_cell, table_cell_key, CellInfo};
use super::overflow::read_payload;
use super::page::{PageHeader, INDEX_INTERIOR, INDEX_LEAF, TABLE_LEAF};
use crate::error::{PageNo, Result, StorageError};
use crate::header::get_u32;
use crate::pages::{PageRead, PageRef};
use crate::record::{
    compare_first_field, decode, decode_into_slice, FirstFieldOrder, FirstProbe, KeyCompare,
    ValueRef,
};
use crate::varint::get_varint;
use std::cmp::Ordering;

/// Deepest tree accepted. SQLite uses the same bound (BTCURSOR_MAX_DEPTH); with at least
/// four cells per interior page it allows more entries than any file can hold.
pub const MAX_DEPTH: usize = 20;

#[derive(Clone)]
pub struct Frame {
    pub pgno: PageNo,
    pub page: PageRef,
    pub hdr: PageHeader,
    pub idx: usize,
}

impl Frame {
    /// Offset of cell `i`, validated to lie inside the cell content region.
    #[inline]
    pub fn cell_off(&self, i: usize, usable: usize) -> Result<usize> {
        if i >= self.hdr.ncells {
            return Err(StorageError::corrupt(self.pgno, "cell index past the end"));
        }
        let pc = self.hdr.cell_ptr(&self.page, i);
        if pc < self.hdr.ptr_array_end() || pc + 4 > usable {
            return Err(StorageError::corrupt(
                self.pgno,
                format!("cell {i} pointer {pc} out of range"),
            ));
        }
        Ok(pc)
    }

    /// Parses cell `i`.
    #[inline]
    pub fn cell(&self, i: usize, usable: usize) -> Result<CellInfo> {
        let pc = self.cell_off(i, usable)?;
        parse_cell(&self.page, pc, self.hdr.kind, usable).ok_or_else(|| {
            StorageError::corrupt(self.pgno, format!("cell {i} extends past the page"))
        })
    }

    /// The key of index cell `i` when its payload is all on the page ([`local_payload`]),
    /// read in place without building a `CellInfo` (`cell` cost ~130 instructions per step
    /// of an index walk; callgrind, speedtest1 test 290). `None` hands anything else,
    /// well-formed or not, to [`cell`](Self::cell), whose checks this one implies. One
    /// cell is read without [`IndexCells`]' per-page setup, which cost a step of an index
    /// walk ~9 instructions more (callgrind, speedtest1 fp test 130).
    #[inline]
    pub fn local_index_key(&self, i: usize, usable: usize) -> Option<&[u8]> {
        local_index_key_of(&self.page, &self.hdr, i, usable)
    }

    /// The rowid and payload of table-leaf cell `i` when the payload is all on the page:
    /// the usual row, read without building a `CellInfo` (`cell` + `payload_of` were ~220
    /// instructions a rowid lookup of hc_mixed's scan, ~190 of them in `cell`). `None` hands
    /// anything else, well-formed or not, to [`cell`](Self::cell), whose checks this one
    /// implies.
    #[inline]
    pub fn local_table_row(&self, i: usize, usable: usize) -> Option<(i64, &[u8])> {
        if self.hdr.kind != TABLE_LEAF || i >= self.hdr.ncells {
            return None;
        }
        let page = self.page.get(..usable)?;
        let ptr = self.hdr.ptr_array_start() + 2 * i;
        let pc = u16::from_be_bytes([*page.get(ptr)?, *page.get(ptr + 1)?]) as usize;
        if pc < self.hdr.ptr_array_end() || pc + 4 > usable {
            return None;
        }
        let (size, n) = get_varint(page.get(pc..)?)?;
        let (rowid, m) = get_varint(page.get(pc + n..)?)?;
        if size > max_local(usable, true) as u64 {
            return None;
        }
        let start = pc + n + m;
        Some((rowid as i64, page.get(start..start + size as usize)?))
    }

    /// The child page to the left of cell `i` (or the right-most child for i == ncells).
    #[inline]
    pub fn child(&self, i: usize, usable: usize) -> Result<u32> {
        if i >= self.hdr.ncells {
            Ok(self.hdr.right_child)
        } else {
            let pc = self.cell_off(i, usable)?;
            Ok(get_u32(&self.page, pc))
        }
    }

    /// Rowid of table cell `i` (leaf or interior). Always inlined: called out of line it
    /// was ~95 instructions, twice per rowid lookup in `seek_in_leaf`'s range test and once
    /// after each descent (callgrind, hc_mixed scans).
    #[inline(always)]
    fn table_key(&self, i: usize, usable: usize) -> Result<i64> {
        TableCells::of(self, usable).key(i)
    }

    /// The error for a table cell whose rowid [`TableCells::rowid`] could not read: the
    /// same checks, made again with their messages (off the hot path).
    #[cold]
    #[inline(never)]
    fn table_key_error(&self, i: usize, usable: usize) -> StorageError {
        let pc = match self.cell_off(i, usable) {
            Ok(pc) => pc,
            Err(e) => return e,
        };
        let page = self.page.get(..usable).unwrap_or(&self.page[..]);
        match table_cell_key(page, pc, self.hdr.kind) {
            Some(_) => StorageError::corrupt(self.pgno, format!("cell {i} is malformed")),
            None => StorageError::corrupt(self.pgno, format!("cell {i} extends past the page")),
        }
    }

    /// A rowid lookup in this leaf starting from cell `near` (the cursor's last
    /// position): `(idx, found)` as a binary search ([`TableCells::search`]) and an equality
    /// test give, or `None` when the rowid is outside the leaf's keys (below the first,
    /// above the last, or the last itself when `strict`), as
    /// [`TreeCursor::seek_in_leaf`] needs. The key at `near` says on which side the
    /// answer lies and the neighbour on that side is tried next: lookups of ascending (or
    /// descending, or the same) rowids in one leaf, as an index walk whose keys follow
    /// rowid order makes them, cost three probes instead of a range test (two) and a
    /// binary search (~7 in a 75-cell leaf; speedtest1 test 160, ~12 lookups a
    /// statement: -4.6k instructions a statement, callgrind); SQLite's
    /// `sqlite3BtreeTableMoveto` tries the next cell the same way.
    #[inline]
    fn leaf_search_near(
        &self,
        rowid: i64,
        strict: bool,
        usable: usize,
        near: usize,
    ) -> Result<Option<(usize, bool)>> {
        let n = self.hdr.ncells;
        let cells = TableCells::of(self, usable);
        // Keys ascend, so `before` holds for a prefix of the cells.
        let before = |k: i64| k < rowid || (strict && k == rowid);
        let found =
            |i: usize| -> Result<Option<(usize, bool)>> { Ok(Some((i, cells.key(i)? == rowid))) };
        if near >= n {
            let (first, last) = (cells.key(0)?, cells.key(n - 1)?);
            if first > rowid || before(last) {
                return Ok(None);
            }
            return found(cells.search(rowid, strict, 0, n)?);
        }
        // Each side first tests the leaf's bound there, so a rowid in another leaf costs
        // two probes, as a plain range test does.
        let k = cells.key(near)?;
        if before(k) {
            // The answer is past `near`, and the rowid at or past the first key.
            if near + 1 == n || before(cells.key(n - 1)?) {
                return Ok(None);
            }
            let next = near + 1;
            let k_next = cells.key(next)?;
            if !before(k_next) {
                return Ok(Some((next, k_next == rowid)));
            }
            return found(cells.search(rowid, strict, next + 1, n)?);
        }
        // The answer is at or before `near`, and the rowid at or before the last key.
        if near == 0 {
            return Ok((k <= rowid).then_some((0, k == rowid)));
        }
        if cells.key(0)? > rowid {
            return Ok(None);
        }
        if before(cells.key(near - 1)?) {
            return Ok(Some((near, k == rowid)));
        }
        found(cells.search(rowid, strict, 0, near - 1)?)
    }
}

/// A page's cell pointer array as a search reads it in place: the page cut at the usable
/// size, its cell pointers and where they end, worked out once per page of a search
/// rather than once per probe (shared by [`TableCells`] and [`IndexCells`]).
struct PageCells<'a> {
    /// The page, for the errors and the checked reads (`Frame::cell`, `Frame::child`,
    /// `Frame::table_key_error`).
    frame: &'a Frame,
    usable: usize,
    page: &'a [u8],
    /// The cell pointers, big-endian; empty when the header's array does not fit the page
    /// (which `PageHeader::parse` rejects) or the page is not of the kind searched, so
    /// that every probe fails (or falls back to the checked reads).
    ptrs: &'a [[u8; 2]],
    ptr_end: usize,
    right_child: u32,
}

impl<'a> PageCells<'a> {
    /// `kind_ok`: the page is of the kind the search reads (else no pointers).
    #[inline(always)]
    fn of(frame: &'a Frame, usable: usize, kind_ok: bool) -> PageCells<'a> {
        let page = frame.page.get(..usable).unwrap_or(&frame.page[..]);
        let hdr = &frame.hdr;
        let ptrs = match kind_ok {
            true => page
                .get(hdr.ptr_array_start()..hdr.ptr_array_end())
                .unwrap_or(&[]),
            false => &[],
        };
        PageCells {
            frame,
            usable,
            page,
            ptrs: ptrs.as_chunks::<2>().0,
            ptr_end: hdr.ptr_array_end(),
            right_child: hdr.right_child,
        }
    }

    /// Offset of cell `i`, checked as [`Frame::cell_off`] checks it.
    #[inline(always)]
    fn cell_off(&self, i: usize) -> Option<usize> {
        let pc = u16::from_be_bytes(*self.ptrs.get(i)?) as usize;
        (pc >= self.ptr_end && pc + 4 <= self.page.len()).then_some(pc)
    }

    /// The child page to the left of cell `i` of an interior page (the right-most child
    /// for `i == ncells`), as [`Frame::child`] reads it (which gives the error), without
    /// validating the pointer a second time after the search (~45 instructions a level).
    #[inline(always)]
    fn child(&self, i: usize, ncells: usize) -> Result<u32> {
        if i == ncells {
            return Ok(self.right_child);
        }
        match self
            .cell_off(i)
            .and_then(|pc| self.page.get(pc..)?.first_chunk::<4>())
        {
            Some(b) => Ok(u32::from_be_bytes(*b)),
            None => self.frame.child(i, self.usable),
        }
    }
}

/// The rowids around a table page search's answer: `below`, the key of the cell before
/// it, and `upto`, the key of the cell at it; where the answer is at an end of the page
/// (no such cell), the bound its parent's cells put on that side (`None`: none, on the
/// root and along the tree's left or right edge). A table interior cell holds the largest
/// rowid of its left subtree, so the keys of the child a descent goes down into lie above
/// `below` and at or below `upto`: the child's search starts from this bracket.
#[derive(Clone, Copy)]
struct Bracket {
    below: Option<i64>,
    upto: Option<i64>,
}

impl Bracket {
    const UNBOUNDED: Bracket = Bracket {
        below: None,
        upto: None,
    };

    /// Whether a descent for `rowid` goes down to the page with this bracket: true
    /// unless `rowid` is at or below `below` or above `upto`.
    #[inline(always)]
    fn routes(self, rowid: i64) -> bool {
        self.below.is_none_or(|a| a < rowid) && self.upto.is_none_or(|b| rowid <= b)
    }

    /// The answer in `lo..=hi` if the keys of cells `lo..hi` were spread evenly over the
    /// bracket (a leaf's cells share it, an interior page's children one more than its
    /// cells: the right-most child); `None` without both ends, or when the rowid sought
    /// lies outside them.
    #[inline(always)]
    fn guess(self, rowid: i64, strict: bool, lo: usize, hi: usize, leaf: bool) -> Option<usize> {
        let (Some(a), Some(b)) = (self.below, self.upto) else {
            return None;
        };
        // The least key at or past the answer.
        let t = if strict { rowid.checked_add(1)? } else { rowid };
        if t <= a || t > b {
            return None;
        }
        // a < t <= b: both differences fit a u64. Cut to 32 significant bits, they times
        // the slots (below 2^16) fit too, and the span stays >= 1.
        let (mut d, mut span) = (t.wrapping_sub(a) as u64, b.wrapping_sub(a) as u64);
        let shift = (64 - span.leading_zeros()).saturating_sub(32);
        (d, span) = (d >> shift, span >> shift);
        let slots = (hi - lo + usize::from(!leaf)) as u64;
        let off = (d * slots).saturating_sub(1) / span;
        Some(lo + (off as usize).min(hi - lo))
    }
}

/// A table page's cells as rowid probes read them in place ([`PageCells`]), the leaf or
/// interior test made once per search rather than once per probe as a per-cell function
/// did (the pointer array's start from the page type, three bounds checks on the pointer,
/// the leaf/interior test: ~55 instructions a probe of an interior page, ~9 probes a rowid
/// lookup; callgrind, hc_mixed scan).
struct TableCells<'a> {
    cells: PageCells<'a>,
    leaf: bool,
}

impl<'a> TableCells<'a> {
    #[inline(always)]
    fn of(frame: &'a Frame, usable: usize) -> TableCells<'a> {
        TableCells {
            cells: PageCells::of(frame, usable, true),
            leaf: frame.hdr.kind == TABLE_LEAF,
        }
    }

    /// Rowid of cell `i`: the leaf's payload-size varint skipped, the rowid varint decoded
    /// with up to three bytes inline (rowids below 2,097,152). `None` when `i` is past the
    /// last cell or any check fails. A per-cell function of this took a probe from ~140
    /// instructions (`cell_off` + `table_cell_key` + `get_varint_slow`, each a call) to
    /// ~25 (callgrind, hc_mixed scan).
    #[inline(always)]
    fn rowid(&self, i: usize) -> Option<i64> {
        if self.leaf {
            self.rowid_in::<true>(i)
        } else {
            self.rowid_in::<false>(i)
        }
    }

    /// [`rowid`](Self::rowid), or the error for the cell (`Frame::table_key_error`).
    #[inline(always)]
    fn key(&self, i: usize) -> Result<i64> {
        match self.rowid(i) {
            Some(k) => Ok(k),
            None => Err(self.cells.frame.table_key_error(i, self.cells.usable)),
        }
    }

    /// [`rowid`](Self::rowid) on a leaf (`LEAF`) or an interior page, so that a search
    /// loop tests the page type once.
    #[inline(always)]
    fn rowid_in<const LEAF: bool>(&self, i: usize) -> Option<i64> {
        let pc = self.cells.cell_off(i)?;
        let page = self.cells.page;
        let q = if LEAF {
            // Skip the payload size (a varint of at most nine bytes).
            let mut q = pc;
            loop {
                let b = *page.get(q)?;
                q += 1;
                if b < 0x80 || q - pc == 9 {
                    break q;
                }
            }
        } else {
            pc + 4
        };
        let rest = page.get(q..)?;
        let v = match rest {
            [a, ..] if *a < 0x80 => *a as u64,
            [a, b, ..] if *b < 0x80 => ((*a as u64 & 0x7f) << 7) | *b as u64,
            [a, b, c, ..] if *c < 0x80 => {
                ((*a as u64 & 0x7f) << 14) | ((*b as u64 & 0x7f) << 7) | *c as u64
            }
            _ => crate::varint::get_varint(rest)?.0,
        };
        Some(v as i64)
    }

    /// The first cell in `lo..hi` whose rowid is >= `rowid` (> when `strict`), `hi` when
    /// none is (the cells before `lo` are below the rowid, those from `hi` on not): a
    /// binary search.
    #[inline(always)]
    fn search(&self, rowid: i64, strict: bool, lo: usize, hi: usize) -> Result<usize> {
        Ok(self
            .search_bracketed(rowid, strict, lo, hi, Bracket::UNBOUNDED)?
            .0)
    }

    /// [`search`](Self::search) of a page whose keys lie in `bracket` (the one its parent's
    /// search returned for it), returning the answer's bracket on this page too.
    #[inline(always)]
    fn search_bracketed(
        &self,
        rowid: i64,
        strict: bool,
        lo: usize,
        hi: usize,
        bracket: Bracket,
    ) -> Result<(usize, Bracket)> {
        let found = if self.leaf {
            self.search_in::<true>(rowid, strict, lo, hi, bracket)
        } else {
            self.search_in::<false>(rowid, strict, lo, hi, bracket)
        };
        found.map_err(|i| self.cells.frame.table_key_error(i, self.cells.usable))
    }

    /// [`search_bracketed`](Self::search_bracketed) on a leaf (`LEAF`) or an interior page;
    /// `Err` names a cell whose rowid could not be read.
    ///
    /// With both ends of the bracket known, the first probe is the cell the rowid would
    /// be at if the page's keys were spread evenly over the bracket ([`Bracket::guess`]),
    /// the next ones gallop away from it on the answer's side (1, 2, 4, ... cells on) until
    /// they pass the answer, and a binary search closes what is left. Rowids are mostly
    /// assigned in ascending order, so the guess is usually the answer or its neighbour:
    /// 2 probes in a 400-cell interior page instead of ~9, and in a leaf of consecutive
    /// rowids the one probe that finds the row (hc_mixed's rowid lookups, 200,000 rows in a
    /// three-level tree: ~19 probes a descent -> ~9, `descend_table` 974 -> 780
    /// instructions; callgrind). Keys spread unevenly cost at most about twice the binary
    /// search's probes; the answer is the one the binary search gives whatever the keys,
    /// since only the probes decide it.
    #[inline(always)]
    fn search_in<const LEAF: bool>(
        &self,
        rowid: i64,
        strict: bool,
        mut lo: usize,
        mut hi: usize,
        mut br: Bracket,
    ) -> std::result::Result<(usize, Bracket), usize> {
        // Keys ascend, so `before` holds for a prefix of the cells. Every move of `lo` or
        // `hi` records the key it passed, which keeps `br` the answer's bracket.
        let before = |k: i64| k < rowid || (strict && k == rowid);
        let key = |i: usize| self.rowid_in::<LEAF>(i).ok_or(i);
        if let Some(g) = br.guess(rowid, strict, lo, hi, LEAF) {
            let mut upward = false;
            if g < hi {
                let k = key(g)?;
                if before(k) {
                    (lo, br.below, upward) = (g + 1, Some(k), true);
                } else {
                    (hi, br.upto) = (g, Some(k));
                    if LEAF && k == rowid {
                        // The row itself (rowids are unique): no cell before it is at
                        // or past it.
                        return Ok((g, br));
                    }
                }
            }
            let mut step = 1;
            while step <= hi - lo {
                if upward {
                    let m = lo + step - 1;
                    let k = key(m)?;
                    if !before(k) {
                        (hi, br.upto) = (m, Some(k));
                        break;
                    }
                    (lo, br.below) = (m + 1, Some(k));
                } else {
                    let m = hi - step;
                    let k = key(m)?;
                    if before(k) {
                        (lo, br.below) = (m + 1, Some(k));
                        break;
                    }
                    (hi, br.upto) = (m, Some(k));
                }
                step *= 2;
            }
        }
        while lo < hi {
            let mid = (lo + hi) / 2;
            let k = key(mid)?;
            if before(k) {
                (lo, br.below) = (mid + 1, Some(k));
            } else {
                (hi, br.upto) = (mid, Some(k));
            }
        }
        Ok((lo, br))
    }

    /// [`PageCells::child`].
    #[inline(always)]
    fn child(&self, i: usize) -> Result<u32> {
        self.cells.child(i, self.cells.ptrs.len())
    }
}

/// An index page's cells as a descent's comparisons read them in place ([`PageCells`]; the
/// index counterpart of [`TableCells`]): where a cell's payload starts (after the child
/// pointer on an interior page) and the most payload a cell keeps on the page, worked out
/// once per page of a search rather than once per comparison as a per-cell function did
/// (the array's start from the page type, the type test, the pointer's checks: ~86 -> ~72
/// instructions a comparison; callgrind, hc_mixed scan, BENCHMARKS.md idxseek).
struct IndexCells<'a> {
    cells: PageCells<'a>,
    leaf: bool,
    /// Bytes before a cell's payload size: the child page number on an interior page.
    payload_skip: usize,
    max_local: usize,
}

impl<'a> IndexCells<'a> {
    #[inline(always)]
    fn of(frame: &'a Frame, usable: usize) -> IndexCells<'a> {
        let kind = frame.hdr.kind;
        let leaf = kind == INDEX_LEAF;
        IndexCells {
            cells: PageCells::of(frame, usable, matches!(kind, INDEX_LEAF | INDEX_INTERIOR)),
            leaf,
            payload_skip: if leaf { 0 } else { 4 },
            max_local: max_local(usable, false),
        }
    }

    /// The key of cell `i` when its payload is all on the page ([`local_payload`]).
    /// `None` when `i` is past the last cell, the key spills onto overflow pages, or any
    /// check fails.
    #[inline(always)]
    fn local_key(&self, i: usize) -> Option<&'a [u8]> {
        local_payload(
            self.cells.page,
            self.cells.cell_off(i)? + self.payload_skip,
            self.max_local,
        )
    }

    /// [`PageCells::child`].
    #[inline(always)]
    fn child(&self, i: usize) -> Result<u32> {
        self.cells.child(i, self.cells.frame.hdr.ncells)
    }
}

/// [`Frame::local_index_key`] of the page `page` with header `hdr`: a free function so that
/// a step can read the key while it moves the frame's `idx` ([`TreeCursor::step_in_leaf`]).
#[inline(always)]
fn local_index_key_of<'a>(
    page: &'a [u8],
    hdr: &PageHeader,
    i: usize,
    usable: usize,
) -> Option<&'a [u8]> {
    if i >= hdr.ncells {
        return None;
    }
    let page = page.get(..usable)?;
    let ptr = hdr.ptr_array_start() + 2 * i;
    let pc = u16::from_be_bytes([*page.get(ptr)?, *page.get(ptr + 1)?]) as usize;
    if pc < hdr.ptr_array_end() || pc + 4 > usable {
        return None;
    }
    let p = match hdr.kind {
        INDEX_LEAF => pc,
        INDEX_INTERIOR => pc + 4,
        _ => return None,
    };
    local_payload(page, p, max_local(usable, false))
}

/// The payload of the index cell whose size varint is at `p` of `page` (cut at the usable
/// size), borrowed from the page when it is all there: at most `max_local` bytes, as
/// `parse_cell` decides it. The size varint is read inline when it is one byte (keys under
/// 128 bytes). `None` for a payload that spills onto overflow pages or any failed check.
#[inline(always)]
fn local_payload(page: &[u8], p: usize, max_local: usize) -> Option<&[u8]> {
    let (size, n) = match *page.get(p)? {
        b if b < 0x80 => (b as usize, 1),
        _ => {
            let (size, n) = get_varint(page.get(p..)?)?;
            (usize::try_from(size).ok()?, n)
        }
    };
    if size > max_local {
        return None;
    }
    page.get(p + n..)?.get(..size)
}

/// A probe key as an index descent compares it with cells, decoded once per descent.
/// `F` orders a stored key against the probe by its first field when that decides it
/// ([`FirstFieldOrder::decide`], or a specialisation of it the descent picks once:
/// [`TreeCursor::descend_index`]); `None` leaves the comparison to the comparator.
struct IndexProbe<'p, F> {
    probe: &'p [u8],
    /// The probe's fields; `None` when it does not decode, so that it is compared
    /// undecoded and its error (if a comparison reaches the bad field) is the comparator's.
    fields: Option<&'p [ValueRef<'p>]>,
    first: F,
    cmp: &'p dyn KeyCompare,
}

impl<'p, F: Fn(&[u8]) -> Option<Ordering>> IndexProbe<'p, F> {
    /// Where cell `i` of `cells`' page lies relative to the probe. The first-field order
    /// is inlined into the search loops and the rest kept out of line
    /// ([`compare_slow`]): one closure for both was not inlined, and its call and spills
    /// were ~25 of the ~70 instructions a comparison (callgrind, hc_mixed scan).
    #[inline(always)]
    fn compare<V: PageRead + ?Sized>(
        &self,
        v: &V,
        cells: &IndexCells<'_>,
        i: usize,
        scratch: &mut Vec<u8>,
    ) -> Result<Ordering> {
        if let Some(o) = cells.local_key(i).and_then(&self.first) {
            return Ok(o);
        }
        compare_slow(self.probe, self.fields, self.cmp, v, cells, i, scratch)
    }
}

/// [`IndexProbe::compare`] by the comparator: a key all on the page is compared where it
/// lies, one that spills is assembled in `scratch` first.
#[inline(never)]
fn compare_slow<V: PageRead + ?Sized>(
    probe: &[u8],
    fields: Option<&[ValueRef<'_>]>,
    cmp: &dyn KeyCompare,
    v: &V,
    cells: &IndexCells<'_>,
    i: usize,
    scratch: &mut Vec<u8>,
) -> Result<Ordering> {
    let key = match cells.local_key(i) {
        Some(key) => key,
        None => {
            let info = cells.cells.frame.cell(i, cells.cells.usable)?;
            payload_of(v, cells.cells.frame, &info, scratch)?
        }
    };
    match fields {
        Some(fields) => cmp.compare_decoded(key, probe, fields),
        None => cmp.compare(key, probe),
    }
}

/// Reads page `pgno` as a page of a table (or index) tree, checking its type.
pub fn load_page<V: PageRead + ?Sized>(
    v: &V,
    pgno: u32,
    table: bool,
) -> Result<(PageRef, PageHeader)> {
    if pgno == 0 || pgno > v.page_count() {
        return Err(StorageError::corrupt(
            None,
            format!(
                "b-tree page {pgno} out of range (database has {} pages)",
                v.page_count()
            ),
        ));
    }
    let page = v.page(PageNo(pgno))?;
    let hdr = PageHeader::parse(&page, PageNo(pgno), v.usable_size())?;
    if hdr.is_table() != table {
        return Err(StorageError::corrupt(
            PageNo(pgno),
            "page type does not match its b-tree",
        ));
    }
    Ok((page, hdr))
}

/// The full payload of the cell `info` on `frame`'s page: borrowed from the page when it is
/// all local, assembled into `scratch` otherwise.
pub fn payload_of<'a, V: PageRead + ?Sized>(
    v: &V,
    frame: &'a Frame,
    info: &CellInfo,
    scratch: &'a mut Vec<u8>,
) -> Result<&'a [u8]> {
    if info.payload_size == info.local_len as u64 {
        return Ok(&frame.page[info.local_start..info.local_start + info.local_len]);
    }
    scratch.clear();
    read_payload(v, frame.pgno, &frame.page, info, scratch)?;
    Ok(&scratch[..])
}

pub struct TreeCursor {
    pub root: PageNo,
    pub table: bool,
    pub stack: Vec<Frame>,
    pub valid: bool,
    /// Set by the owner when no page has changed since the stack was built; the next
    /// descent may then reuse its frames (consumed by that descent).
    pub frames_current: bool,
    /// The leaf the last `descend_table` ended in and its bracket: the rowids its
    /// ancestors route to it, valid while its tree is unchanged (as the frames are).
    /// Cleared with the frames.
    leaf_bracket: Option<(PageNo, Bracket)>,
}

impl TreeCursor {
    pub fn new(root: PageNo, table: bool) -> TreeCursor {
        TreeCursor {
            root,
            table,
            stack: Vec::with_capacity(8),
            valid: false,
            frames_current: false,
            leaf_bracket: None,
        }
    }

    pub fn invalidate(&mut self) {
        self.stack.clear();
        self.valid = false;
        self.frames_current = false;
        self.leaf_bracket = None;
    }

    fn push<V: PageRead + ?Sized>(&mut self, v: &V, pgno: u32) -> Result<()> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(StorageError::corrupt(
                PageNo(pgno),
                "b-tree deeper than the maximum (page cycle?)",
            ));
        }
        let (page, hdr) = load_page(v, pgno, self.table)?;
        if pgno == 1 && !self.stack.is_empty() {
            return Err(StorageError::corrupt(
                PageNo(pgno),
                "page 1 used as a child page",
            ));
        }
        self.stack.push(Frame {
            pgno: PageNo(pgno),
            page,
            hdr,
            idx: 0,
        });
        Ok(())
    }

    fn top(&self) -> Result<&Frame> {
        self.stack
            .last()
            .ok_or_else(|| StorageError::misuse("cursor is not positioned"))
    }

    /// Goes down from page `pgno` always taking the first child, to a leaf at cell 0.
    fn descend_leftmost<V: PageRead + ?Sized>(&mut self, v: &V, pgno: u32) -> Result<()> {
        let usable = v.usable_size();
        let mut pgno = pgno;
        loop {
            self.push(v, pgno)?;
            let top = self.top()?;
            if top.hdr.is_leaf() {
                return Ok(());
            }
            pgno = top.child(0, usable)?;
        }
    }

    /// Goes down from page `pgno` always taking the right-most child; the leaf frame ends
    /// with `idx == ncells` (one past its last cell).
    fn descend_rightmost<V: PageRead + ?Sized>(&mut self, v: &V, pgno: u32) -> Result<()> {
        let mut pgno = pgno;
        loop {
            self.push(v, pgno)?;
            let n = self.stack.len();
            let top = &mut self.stack[n - 1];
            top.idx = top.hdr.ncells;
            if top.hdr.is_leaf() {
                return Ok(());
            }
            pgno = top.hdr.right_child;
        }
    }

    /// From a leaf frame whose `idx` may be past its last cell, moves to the next entry in
    /// key order (or invalidates the cursor past the end).
    fn settle_forward<V: PageRead + ?Sized>(&mut self, v: &V) -> Result<bool> {
        let usable = v.usable_size();
        loop {
            let top = self.top()?;
            if top.idx < top.hdr.ncells && top.hdr.is_leaf() {
                self.valid = true;
                return Ok(true);
            }
            // The leaf is exhausted: climb to the first ancestor with something to the right.
            self.stack.pop();
            loop {
                let Some(p) = self.stack.last_mut() else {
                    self.valid = false;
                    return Ok(false);
                };
                if p.idx < p.hdr.ncells {
                    if !self.table {
                        // Index trees: the interior cell after child idx is the next entry.
                        self.valid = true;
                        return Ok(true);
                    }
                    p.idx += 1;
                    let child = p.child(p.idx, usable)?;
                    self.descend_leftmost(v, child)?;
                    break;
                }
                self.stack.pop();
            }
        }
    }

    /// From a leaf frame, moves to the entry before cell `idx` in key order (or invalidates
    /// the cursor before the start).
    fn settle_backward<V: PageRead + ?Sized>(&mut self, v: &V) -> Result<bool> {
        let usable = v.usable_size();
        loop {
            let top = self
                .stack
                .last_mut()
                .ok_or_else(|| StorageError::misuse("cursor is not positioned"))?;
            if top.hdr.is_leaf() && top.idx > 0 && top.hdr.ncells > 0 {
                top.idx = (top.idx - 1).min(top.hdr.ncells - 1);
                self.valid = true;
                return Ok(true);
            }
            self.stack.pop();
            loop {
                let Some(p) = self.stack.last_mut() else {
                    self.valid = false;
                    return Ok(false);
                };
                if p.idx > 0 {
                    p.idx -= 1;
                    if !self.table {
                        // Index trees: the interior cell before child idx is the previous entry.
                        self.valid = true;
                        return Ok(true);
                    }
                    let child = p.child(p.idx, usable)?;
                    self.descend_rightmost(v, child)?;
                    break;
                }
                self.stack.pop();
            }
        }
    }

    pub fn first<V: PageRead + ?Sized>(&mut self, v: &V) -> Result<bool> {
        self.invalidate();
        self.descend_leftmost(v, self.root.0)?;
        self.settle_forward(v)
    }

    pub fn last<V: PageRead + ?Sized>(&mut self, v: &V) -> Result<bool> {
        self.invalidate();
        self.descend_rightmost(v, self.root.0)?;
        self.settle_backward(v)
    }

    pub fn next<V: PageRead + ?Sized>(&mut self, v: &V) -> Result<bool> {
        if !self.valid {
            return Ok(false);
        }
        let usable = v.usable_size();
        let n = self.stack.len();
        let top = &mut self.stack[n - 1];
        if top.hdr.is_leaf() {
            top.idx += 1;
        } else {
            top.idx += 1;
            let child = top.child(top.idx, usable)?;
            self.descend_leftmost(v, child)?;
        }
        self.settle_forward(v)
    }

    pub fn prev<V: PageRead + ?Sized>(&mut self, v: &V) -> Result<bool> {
        if !self.valid {
            return Ok(false);
        }
        let usable = v.usable_size();
        let top = self.top()?;
        if !top.hdr.is_leaf() {
            let child = top.child(top.idx, usable)?;
            self.descend_rightmost(v, child)?;
        }
        self.settle_backward(v)
    }

    /// SQLite-style shortcut for nearby seeks: when the cursor's stack is still current
    /// (the caller knows no page changed since it was built) and the leaf it ends in covers
    /// `rowid`, searches only that leaf. Leaves hold disjoint, ordered key ranges, so if
    /// first <= rowid <= last (< last when `strict`) the lower bound is inside this leaf and
    /// the parents' child indexes stay right. Returns None when the shortcut does not apply.
    ///
    /// The leaf's keys all lie inside the bracket the last descent gave it, so a rowid
    /// outside is in another leaf (or none): rejected without a probe, where the leaf's
    /// own bounds cost two and a call (~60 instructions a lookup of random rowids, which
    /// nearly always miss the leaf; hc_mixed's scan, callgrind). A file whose keys break
    /// their brackets only loses the shortcut: the full descent decides.
    pub fn seek_in_leaf<V: PageRead + ?Sized>(
        &mut self,
        v: &V,
        rowid: i64,
        strict: bool,
    ) -> Result<Option<bool>> {
        let usable = v.usable_size();
        let Some(top) = self.stack.last_mut() else {
            return Ok(None);
        };
        if top.hdr.kind != TABLE_LEAF || top.hdr.ncells == 0 {
            return Ok(None);
        }
        if let Some((leaf, bracket)) = self.leaf_bracket {
            if leaf == top.pgno && !bracket.routes(rowid) {
                return Ok(None);
            }
        }
        let Some((idx, found)) = top.leaf_search_near(rowid, strict, usable, top.idx)? else {
            return Ok(None);
        };
        top.idx = idx;
        self.valid = true;
        Ok(Some(found))
    }

    /// Descends to the leaf where `rowid` is or would be inserted: the leaf frame's `idx` is
    /// the first cell with key >= rowid (> rowid when `strict`), possibly ncells. Returns
    /// whether a cell with exactly `rowid` is at that position (never, when `strict`).
    pub fn descend_table<V: PageRead + ?Sized>(
        &mut self,
        v: &V,
        rowid: i64,
        strict: bool,
    ) -> Result<bool> {
        // With `frames_current`, frames already on the stack for the same pages are reused:
        // random lookups then reload only the pages that differ from the previous descent
        // (usually just the leaf).
        let reuse = std::mem::take(&mut self.frames_current);
        if !reuse {
            self.stack.clear();
        }
        self.valid = false;
        let usable = v.usable_size();
        let mut pgno = self.root.0;
        let mut depth = 0;
        let mut bracket = Bracket::UNBOUNDED;
        loop {
            if depth < self.stack.len() && self.stack[depth].pgno.0 == pgno {
                self.stack.truncate(depth + 1);
            } else {
                self.stack.truncate(depth);
                self.push(v, pgno)?;
            }
            depth += 1;
            let n = self.stack.len();
            let top = &mut self.stack[n - 1];
            let cells = TableCells::of(top, usable);
            let (lo, at) = cells.search_bracketed(rowid, strict, 0, top.hdr.ncells, bracket)?;
            if cells.leaf {
                // When `lo` is a cell the search's upper end moved onto it: `at.upto` is
                // its key.
                let found = lo < top.hdr.ncells && at.upto == Some(rowid);
                top.idx = lo;
                self.leaf_bracket = Some((top.pgno, bracket));
                return Ok(found);
            }
            bracket = at;
            pgno = cells.child(lo)?;
            top.idx = lo;
        }
    }

    /// Positions on the first entry with rowid >= `rowid` (> when `strict`).
    pub fn seek_table<V: PageRead + ?Sized>(
        &mut self,
        v: &V,
        rowid: i64,
        strict: bool,
    ) -> Result<bool> {
        self.descend_table(v, rowid, strict)?;
        self.settle_forward(v)
    }

    /// Index analogue of [`descend_table`](Self::descend_table): in every page, the first
    /// cell whose key compares >= `probe` (> when `strict`). Returns whether any cell met on
    /// the way compares equal to the probe.
    pub fn descend_index<V: PageRead + ?Sized>(
        &mut self,
        v: &V,
        probe: &[u8],
        strict: bool,
        cmp: &dyn KeyCompare,
        scratch: &mut Vec<u8>,
    ) -> Result<bool> {
        // The probe is decoded once for the whole descent (~14 comparisons per insert into
        // a 40,000-entry index; re-parsing it each time was ~40% of a comparison).
        // Up to eight fields are decoded onto the stack, not into a `Vec` (~390 -> ~300
        // instructions a descent; callgrind, speedtest1 test 290).
        let mut small = [ValueRef::Null; 8];
        let heap;
        let fields: Option<&[ValueRef<'_>]> = match decode_into_slice(probe, &mut small) {
            Some(n) => Some(&small[..n]),
            None => {
                heap = decode(probe).ok();
                heap.as_deref()
            }
        };
        let first = match fields {
            Some([f0, rest @ ..]) => FirstFieldOrder::new(f0, rest.is_empty(), cmp),
            _ => None,
        };
        // The first-field order is picked here, once, and the search compiled for it: an
        // ascending TEXT column under BINARY (hc_mixed's expression index, any TEXT key)
        // is ordered without the probe's type, the column's direction and the probe's
        // field count tested again at every comparison (a seek of hc_mixed's scan, 17.7
        // comparisons: ~2,195 -> ~1,946 instructions; callgrind).
        match first {
            Some(f) => match f.ascending_text() {
                Some((y, single)) => {
                    let text = move |k: &[u8]| match compare_first_field(k, FirstProbe::Text(y))? {
                        Ordering::Equal if !single => None,
                        o => Some(o),
                    };
                    self.descend_index_by(
                        v,
                        strict,
                        scratch,
                        IndexProbe {
                            probe,
                            fields,
                            first: text,
                            cmp,
                        },
                    )
                }
                None => {
                    let first = move |k: &[u8]| f.decide(k);
                    self.descend_index_by(
                        v,
                        strict,
                        scratch,
                        IndexProbe {
                            probe,
                            fields,
                            first,
                            cmp,
                        },
                    )
                }
            },
            None => {
                let first = |_: &[u8]| None;
                self.descend_index_by(
                    v,
                    strict,
                    scratch,
                    IndexProbe {
                        probe,
                        fields,
                        first,
                        cmp,
                    },
                )
            }
        }
    }

    /// [`descend_index`](Self::descend_index) with the probe decoded and its first-field
    /// order chosen.
    #[inline(always)]
    fn descend_index_by<V: PageRead + ?Sized, F: Fn(&[u8]) -> Option<Ordering>>(
        &mut self,
        v: &V,
        strict: bool,
        scratch: &mut Vec<u8>,
        probe: IndexProbe<'_, F>,
    ) -> Result<bool> {
        // Frame reuse as in `descend_table`.
        let reuse = std::mem::take(&mut self.frames_current);
        if !reuse {
            self.stack.clear();
        }
        self.valid = false;
        let usable = v.usable_size();
        let mut pgno = self.root.0;
        let mut seen_equal = false;
        let mut depth = 0;
        // A cell "goes left" when the sought position is after it.
        let left = |o: Ordering| o == Ordering::Less || (strict && o == Ordering::Equal);
        // Same-leaf shortcut (SQLite's `sqlite3BtreeIndexMoveto` does the same): with
        // current frames ending in a leaf whose first cell goes left and whose last cell
        // does not, the sought position is inside this leaf. Keys compare monotonically
        // in tree order, so every entry before the first cell goes left too and the
        // parents' child indexes stay right. The cells compared include the one at the
        // position found (non-strict) or the one before it (strict), so `seen_equal`
        // means what the full descent's does. Measured: see BENCHMARKS.md, leafseek.
        // When the last cell goes left too and the leaf is the tree's right-most (every
        // parent frame on its right-most child), every entry goes left: the position is
        // past the leaf's last cell, where ascending index inserts go (speedtest1 test
        // 110; the descent's last comparison is with that cell too).
        if reuse {
            if let Some((top, parents)) = self.stack.split_last() {
                let n = top.hdr.ncells;
                if top.hdr.kind == INDEX_LEAF && n >= 2 {
                    let cells = IndexCells::of(top, usable);
                    let o_first = probe.compare(v, &cells, 0, scratch)?;
                    if left(o_first) {
                        let o_last = probe.compare(v, &cells, n - 1, scratch)?;
                        if left(o_last) && parents.iter().all(|f| f.idx == f.hdr.ncells) {
                            let depth = self.stack.len();
                            self.stack[depth - 1].idx = n;
                            return Ok(o_last == Ordering::Equal);
                        }
                        if !left(o_last) {
                            let mut seen_equal =
                                o_first == Ordering::Equal || o_last == Ordering::Equal;
                            let (mut lo, mut hi) = (1usize, n - 1);
                            while lo < hi {
                                let mid = (lo + hi) / 2;
                                let o = probe.compare(v, &cells, mid, scratch)?;
                                if o == Ordering::Equal {
                                    seen_equal = true;
                                }
                                if left(o) {
                                    lo = mid + 1;
                                } else {
                                    hi = mid;
                                }
                            }
                            let depth = self.stack.len();
                            self.stack[depth - 1].idx = lo;
                            return Ok(seen_equal);
                        }
                    }
                }
            }
        }
        loop {
            if depth < self.stack.len() && self.stack[depth].pgno.0 == pgno {
                self.stack.truncate(depth + 1);
            } else {
                self.stack.truncate(depth);
                self.push(v, pgno)?;
            }
            depth += 1;
            let n = self.stack.len();
            let top = &self.stack[n - 1];
            let cells = IndexCells::of(top, usable);
            let (mut lo, mut hi) = (0usize, top.hdr.ncells);
            while lo < hi {
                let mid = (lo + hi) / 2;
                let o = probe.compare(v, &cells, mid, scratch)?;
                if o == Ordering::Equal {
                    seen_equal = true;
                }
                if left(o) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            // The child is read from the pointer the search checked.
            let leaf = cells.leaf;
            let child = if leaf { 0 } else { cells.child(lo)? };
            self.stack[n - 1].idx = lo;
            if leaf {
                return Ok(seen_equal);
            }
            pgno = child;
        }
    }

    /// Positions on the first entry comparing >= `probe` (> when `strict`).
    pub fn seek_index<V: PageRead + ?Sized>(
        &mut self,
        v: &V,
        probe: &[u8],
        strict: bool,
        cmp: &dyn KeyCompare,
        scratch: &mut Vec<u8>,
    ) -> Result<bool> {
        self.descend_index(v, probe, strict, cmp, scratch)?;
        self.settle_forward(v)
    }

    /// The frame and cell the cursor is on.
    #[inline]
    pub fn current(&self, usable: usize) -> Result<(&Frame, CellInfo)> {
        if !self.valid {
            return Err(StorageError::misuse("cursor is not on an entry"));
        }
        let top = self.top()?;
        Ok((top, top.cell(top.idx, usable)?))
    }

    /// The current row of a table tree: its rowid and its payload, borrowed from the page
    /// when it is all local (read in place, [`Frame::local_table_row`]), assembled in
    /// `scratch` when it overflows.
    #[inline]
    pub fn current_row<'a, V: PageRead + ?Sized>(
        &'a self,
        v: &V,
        scratch: &'a mut Vec<u8>,
    ) -> Result<(i64, &'a [u8])> {
        let usable = v.usable_size();
        if self.valid {
            if let Some(top) = self.stack.last() {
                if let Some(row) = top.local_table_row(top.idx, usable) {
                    return Ok(row);
                }
            }
        }
        let (frame, info) = self.current(usable)?;
        Ok((info.key, payload_of(v, frame, &info, scratch)?))
    }

    /// The current entry's key when it is an index key all on its page (as
    /// [`Frame::local_index_key`] reads one); `None` for anything else, which
    /// [`current`](Self::current) and [`payload_of`] then read the checked way.
    #[inline]
    pub fn current_local_index_key(&self, usable: usize) -> Option<&[u8]> {
        if !self.valid {
            return None;
        }
        let top = self.stack.last()?;
        top.local_index_key(top.idx, usable)
    }

    /// An index walk's usual step: onto the next cell (the previous when `!forward`) of the
    /// leaf the cursor is on, returning its key when the move stays in the leaf and the
    /// key is all on the page ([`Frame::local_index_key`]). `None` moves nothing: the
    /// cursor is not on an index leaf's cell, the step would leave the leaf, or the key
    /// spills; [`next`](Self::next) / [`prev`](Self::prev) then take the step. The caller
    /// vouches that the frames are current (T2 in txn.rs). A step of hc_mixed's scan
    /// through `restore`, `next` (`settle_forward`, `top`) and `current_local_index_key`
    /// was ~242 instructions, ~169 this way (`txn::Cursor::step_entry`; callgrind).
    #[inline]
    pub fn step_in_leaf(&mut self, forward: bool, usable: usize) -> Option<&[u8]> {
        if !self.valid {
            return None;
        }
        let top = self.stack.last_mut()?;
        if top.hdr.kind != INDEX_LEAF {
            return None;
        }
        let idx = match forward {
            true => top.idx.checked_add(1)?,
            false => top.idx.checked_sub(1)?,
        };
        // None for `idx` past the last cell, as for a key that spills.
        let key = local_index_key_of(&top.page, &top.hdr, idx, usable)?;
        top.idx = idx;
        Some(key)
    }

    /// Rowid of the current entry (table trees).
    pub fn rowid(&self, usable: usize) -> Result<i64> {
        if !self.valid {
            return Err(StorageError::misuse("cursor is not on an entry"));
        }
        let top = self.top()?;
        top.table_key(top.idx, usable)
    }

    /// Appends the current entry's whole payload (record or index key) to `out`.
    pub fn payload<V: PageRead + ?Sized>(&self, v: &V, out: &mut Vec<u8>) -> Result<()> {
        let (frame, info) = self.current(v.usable_size())?;
        read_payload(v, frame.pgno, &frame.page, &info, out)
    }
}
