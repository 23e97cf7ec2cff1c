//! Balancing: keeping every page within its size after inserts and deletes.
//!
//! The unit of work is a [`Node`], a page's contents held in memory (cells in one arena).
//! [`balance`] takes the new contents of the page at the end of a root-to-page path and
//! writes them back, restructuring as needed:
//! - fits and is not underfull (free space <= 2/3 of the page, SQLite's threshold):
//!   written in place;
//! - otherwise a non-root page is redistributed together with up to two siblings and the
//!   dividers between them (a simplified SQLite balance_nonroot): all their cells are packed
//!   greedily left to right into as few pages as needed (one more when that would leave
//!   them over 85% full), then cells are shifted right so the last page is not nearly
//!   empty. This splits overfull pages and merges underfull ones.
//!   The parent's dividers are replaced in place when they fit; a parent that overflows
//!   or becomes underfull is then balanced in turn (one level up);
//! - an overfull root moves its contents to a new child and becomes an interior page with
//!   no cells, so the root page number never changes (SQLite's balance_deeper);
//! - an interior root left with no cells absorbs its only child when it fits.
//!
//! Dividers: in table trees the divider after a leaf is that leaf's largest rowid, which
//! keeps SQLite's rule "left subtree <= divider < right subtree". In index trees (true
//! B-trees) dividers are real entries: pulled down into the cell sequence when pages are
//! redistributed, and the cell after each new page's last cell pushed back up. Cells keep
//! their overflow chains throughout (see cell.rs on why index cells can move freely).
//!
//! [`quick_balance`] is SQLite's balance_quick for appends at the right edge of a table:
//! the new cell goes alone into a new right sibling, so ascending inserts fill pages fully.

use super::cell::{
    build_table_interior, cell_size_fn, convert_cell, parse_cell, table_cell_key, CellSizer,
};
use super::cursor::load_page;
use super::freelist;
use super::page::{
    drop_cell, free_space, header_len_of, header_offset, insert_cell, interior_of, is_leaf_kind,
    is_table_kind, put_u16, write_page, PageHeader, INDEX_LEAF, TABLE_INTERIOR, TABLE_LEAF,
};
use crate::error::{PageNo, Result, StorageError};
use crate::header::get_u32;
use crate::pages::{PageRead, PageWrite};

/// A page's contents in memory. Cells live in one arena buffer (`spans` index it), so
/// reading a page costs two allocations however many cells it has — balancing runs on
/// every page split, and per-cell vectors made random inserts 3-4x slower than SQLite.
#[derive(Debug, Clone)]
pub struct Node {
    pub kind: u8,
    /// Right-most child (interior pages).
    pub right: u32,
    buf: Vec<u8>,
    spans: Vec<(usize, usize)>,
}

impl Node {
    pub fn new(kind: u8, right: u32) -> Node {
        Node {
            kind,
            right,
            buf: Vec::new(),
            spans: Vec::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// Cell `i` as stored (possibly padded to 4 bytes).
    pub fn cell(&self, i: usize) -> &[u8] {
        let (s, l) = self.spans[i];
        &self.buf[s..s + l]
    }

    /// Appends every cell of a page (`data`, its header `hdr`), copying each run of cells
    /// that lie next to each other on the page with one copy: pages written by
    /// [`Node::write_range`] hold their cells in order and adjacent, so a page read back
    /// for the next split is usually one copy, not one per cell.
    fn push_page(
        &mut self,
        data: &[u8],
        hdr: &PageHeader,
        pgno: PageNo,
        usable: usize,
    ) -> Result<()> {
        let sizer = CellSizer::new(hdr.kind, usable);
        self.spans.reserve(hdr.ncells);
        self.buf.reserve(usable.saturating_sub(hdr.content_start));
        let ptr_end = hdr.ptr_array_end();
        // The pending run of adjacent cells: page[run.0..run.1], not yet copied.
        let mut run = (0usize, 0usize);
        for i in 0..hdr.ncells {
            let pc = hdr.cell_ptr(data, i);
            if pc < ptr_end || pc + 4 > usable {
                return Err(StorageError::corrupt(
                    pgno,
                    format!("cell {i} pointer out of range"),
                ));
            }
            let size = sizer.size(data, pc).ok_or_else(|| {
                StorageError::corrupt(pgno, format!("cell {i} extends past the page"))
            })?;
            let end = pc + size;
            if end > usable {
                return Err(StorageError::corrupt(
                    pgno,
                    format!("cell {i} extends past the page"),
                ));
            }
            if pc != run.1 || run.0 == run.1 {
                self.buf.extend_from_slice(&data[run.0..run.1]);
                run = (pc, pc);
            }
            self.spans.push((self.buf.len() + (pc - run.0), size));
            run.1 = end;
        }
        self.buf.extend_from_slice(&data[run.0..run.1]);
        Ok(())
    }

    /// Appends every cell of `other`.
    fn append(&mut self, other: &Node) {
        let base = self.buf.len();
        self.buf.extend_from_slice(&other.buf);
        self.spans
            .extend(other.spans.iter().map(|&(s, l)| (s + base, l)));
    }

    /// Writes cells `from..to` as the whole contents of page `pgno` (type `kind`, right-most
    /// child `right` for interior pages), laid out in cell order upwards from the start of
    /// the content area, so cells adjacent in the arena are copied as one run (one copy per
    /// source page instead of one per cell; see `push_page`). Cells are padded to 4 bytes.
    #[allow(clippy::too_many_arguments)]
    fn write_range(
        &self,
        data: &mut [u8],
        pgno: PageNo,
        kind: u8,
        usable: usize,
        from: usize,
        to: usize,
        right: u32,
    ) -> Result<()> {
        let off = header_offset(pgno);
        let hl = header_len_of(kind);
        let ptr_start = off + hl;
        let ptr_end = ptr_start + 2 * (to - from);
        let total: usize = self.spans[from..to].iter().map(|&(_, l)| l.max(4)).sum();
        if ptr_end + total > usable || data.len() < usable {
            return Err(StorageError::corrupt(
                pgno,
                "cells do not fit the page (internal error)",
            ));
        }
        let top = usable - total;
        let mut at = top;
        // The pending run: arena bytes run.0..run.1 go to the page at run.2.
        let mut run = (0usize, 0usize, top);
        for (i, &(s, l)) in self.spans[from..to].iter().enumerate() {
            put_u16(data, ptr_start + 2 * i, at);
            if l >= 4 && s == run.1 && run.0 != run.1 {
                run.1 += l;
                at += l;
                continue;
            }
            data[run.2..run.2 + (run.1 - run.0)].copy_from_slice(&self.buf[run.0..run.1]);
            if l >= 4 {
                run = (s, s + l, at);
                at += l;
            } else {
                data[at..at + l].copy_from_slice(&self.buf[s..s + l]);
                data[at + l..at + 4].fill(0);
                at += 4;
                run = (0, 0, at);
            }
        }
        data[run.2..run.2 + (run.1 - run.0)].copy_from_slice(&self.buf[run.0..run.1]);
        data[off] = kind;
        put_u16(data, off + 1, 0);
        put_u16(data, off + 3, to - from);
        put_u16(data, off + 5, top & 0xffff);
        data[off + 7] = 0;
        if hl == 12 {
            data[off + 8..off + 12].copy_from_slice(&right.to_be_bytes());
        }
        // Zero the unused gap so stale bytes from earlier contents never reach the file.
        data[ptr_end..top].fill(0);
        Ok(())
    }

    pub fn push(&mut self, cell: &[u8]) {
        self.spans.push((self.buf.len(), cell.len()));
        self.buf.extend_from_slice(cell);
    }

    /// Inserts `cell` as cell `i` (`i <= len`).
    pub fn insert(&mut self, i: usize, cell: &[u8]) {
        self.spans.insert(i, (self.buf.len(), cell.len()));
        self.buf.extend_from_slice(cell);
    }

    fn left_child(&self, i: usize) -> u32 {
        get_u32(self.cell(i), 0)
    }

    fn set_left_child(&mut self, i: usize, child: u32) {
        let (s, _) = self.spans[i];
        self.buf[s..s + 4].copy_from_slice(&child.to_be_bytes());
    }

    /// Bytes cell `i` needs on a page, pointer included.
    fn cell_cost(&self, i: usize) -> usize {
        self.spans[i].1.max(4) + 2
    }

    /// Bytes the node needs on a page: header, pointers and cells.
    pub fn size(&self) -> usize {
        header_len_of(self.kind) + (0..self.len()).map(|i| self.cell_cost(i)).sum::<usize>()
    }
}

/// Bytes available to the page header, pointers and cells of page `pgno`.
#[inline]
pub fn capacity(pgno: PageNo, usable: usize) -> usize {
    usable - header_offset(pgno)
}

/// True when a page with `free` bytes free should be merged with its siblings.
#[inline]
pub fn is_underfull(free: usize, usable: usize) -> bool {
    free * 3 > usable * 2
}

/// Reads page `pgno` into a [`Node`].
pub fn node_read<V: PageRead + ?Sized>(v: &V, pgno: PageNo, table: bool) -> Result<Node> {
    let usable = v.usable_size();
    let (page, hdr) = load_page(v, pgno.0, table)?;
    let mut node = Node::new(hdr.kind, hdr.right_child);
    node.push_page(&page, &hdr, pgno, usable)?;
    Ok(node)
}

fn node_write<V: PageWrite + ?Sized>(v: &mut V, pgno: PageNo, node: &Node) -> Result<()> {
    let usable = v.usable_size();
    node.write_range(
        v.page_mut(pgno)?,
        pgno,
        node.kind,
        usable,
        0,
        node.len(),
        node.right,
    )
}

/// Writes `node` as the new contents of the page at the end of `path` (pairs of page and
/// the child index taken in it), restructuring the tree as described in the module doc.
pub fn balance<V: PageWrite + ?Sized>(
    v: &mut V,
    path: &mut Vec<(PageNo, usize)>,
    node: Node,
) -> Result<()> {
    let usable = v.usable_size();
    let table = is_table_kind(node.kind);
    let mut node = node;
    // Each round either finishes or moves one level up (or, once, one level down at the
    // root), so the loop is bounded by twice the tree depth plus one.
    for _ in 0..(4 * super::cursor::MAX_DEPTH) {
        let (pgno, _) = *path
            .last()
            .ok_or_else(|| StorageError::misuse("balance with an empty path"))?;
        let cap = capacity(pgno, usable);
        let size = node.size();
        if path.len() == 1 {
            if size <= cap {
                if !is_leaf_kind(node.kind) && node.is_empty() {
                    return collapse_root(v, pgno, node, table);
                }
                return node_write(v, pgno, &node);
            }
            // Root overflow: move the contents into a new child; the root keeps its number.
            let child = freelist::allocate(v)?;
            node_write(v, pgno, &Node::new(interior_of(node.kind), child.0))?;
            path[0].1 = 0;
            path.push((child, 0));
            continue;
        }
        if size <= cap && !is_underfull(cap - size, usable) {
            return node_write(v, pgno, &node);
        }
        let (ppgno, ci) = path[path.len() - 2];
        path.pop();
        if let Some(parent) = balance_siblings(v, ppgno, ci, pgno, node)? {
            // The new dividers did not fit in the parent: it is the next node to place.
            node = parent;
            continue;
        }
        // The parent was updated in place; it may now be underfull, or an empty root.
        let page = v.page(ppgno)?;
        let hdr = PageHeader::parse(&page, ppgno, usable)?;
        if path.len() == 1 {
            if hdr.is_leaf() || hdr.ncells > 0 {
                return Ok(());
            }
        } else if !is_underfull(free_space(&page, &hdr, usable, ppgno)?, usable) {
            return Ok(());
        }
        drop(page);
        node = node_read(v, ppgno, table)?;
    }
    Err(StorageError::corrupt(None, "balance did not converge"))
}

/// An interior root with no cells: pull its only child up when the child's contents fit.
fn collapse_root<V: PageWrite + ?Sized>(
    v: &mut V,
    root: PageNo,
    node: Node,
    table: bool,
) -> Result<()> {
    let usable = v.usable_size();
    let child = PageNo(node.right);
    let child_node = node_read(v, child, table)?;
    if child_node.size() <= capacity(root, usable) {
        node_write(v, root, &child_node)?;
        freelist::free(v, child)
    } else {
        node_write(v, root, &node)
    }
}

/// A page's cells read in place (the parent during a balance).
struct PageCells {
    pgno: PageNo,
    page: crate::pages::PageRef,
    hdr: PageHeader,
    usable: usize,
}

impl PageCells {
    fn cell(&self, i: usize) -> Result<&[u8]> {
        if i >= self.hdr.ncells {
            return Err(StorageError::corrupt(
                self.pgno,
                format!("cell {i} past the end"),
            ));
        }
        let pc = self.hdr.cell_ptr(&self.page, i);
        if pc < self.hdr.ptr_array_end() || pc + 4 > self.usable {
            return Err(StorageError::corrupt(
                self.pgno,
                format!("cell {i} pointer out of range"),
            ));
        }
        let info = parse_cell(&self.page, pc, self.hdr.kind, self.usable).ok_or_else(|| {
            StorageError::corrupt(self.pgno, format!("cell {i} extends past the page"))
        })?;
        Ok(&self.page[pc..pc + info.size()])
    }

    fn child(&self, i: usize) -> Result<u32> {
        if i == self.hdr.ncells {
            Ok(self.hdr.right_child)
        } else {
            Ok(get_u32(self.cell(i)?, 0))
        }
    }
}

/// Appends the cells of page `pgno` to `all`; returns the page's type and right child.
fn gather_page<V: PageRead + ?Sized>(
    v: &V,
    pgno: PageNo,
    table: bool,
    all: &mut Node,
) -> Result<(u8, u32)> {
    let usable = v.usable_size();
    let (page, hdr) = load_page(v, pgno.0, table)?;
    all.push_page(&page, &hdr, pgno, usable)?;
    Ok((hdr.kind, hdr.right_child))
}

/// Redistributes the cells of child `ci` of page `ppgno` (the child's new contents are
/// `node`) and up to two siblings, then replaces the dividers in the parent. The parent is
/// updated in place when the new dividers fit (`None`); otherwise its new contents are
/// returned, not yet written.
fn balance_siblings<V: PageWrite + ?Sized>(
    v: &mut V,
    ppgno: PageNo,
    ci: usize,
    pgno: PageNo,
    node: Node,
) -> Result<Option<Node>> {
    let usable = v.usable_size();
    let table = is_table_kind(node.kind);
    let leaf = is_leaf_kind(node.kind);
    let kind = node.kind;
    let (ppage, phdr) = load_page(v, ppgno.0, table)?;
    if phdr.is_leaf() {
        return Err(StorageError::corrupt(ppgno, "parent page is a leaf"));
    }
    let parent = PageCells {
        pgno: ppgno,
        page: ppage,
        hdr: phdr,
        usable,
    };
    let n = phdr.ncells;
    if ci > n {
        return Err(StorageError::corrupt(
            pgno,
            "child index past the parent's cells",
        ));
    }
    let (lo, hi) = if n == 0 {
        (0, 0)
    } else if ci == 0 {
        (0, 2.min(n))
    } else if ci >= n {
        (n.saturating_sub(2), n)
    } else {
        (ci - 1, ci + 1)
    };

    // Gather every cell of the siblings, with the dividers between them where they are
    // entries (index trees) or carry a child pointer (interior pages).
    let mut all = Node::new(kind, 0);
    all.buf.reserve(3 * usable);
    all.spans.reserve(3 * (usable / 8));
    let mut old_pages: Vec<PageNo> = Vec::with_capacity(3);
    let mut last_right = 0u32;
    let mut node = Some(node);
    for j in lo..=hi {
        let pg = PageNo(parent.child(j)?);
        if old_pages.contains(&pg) || pg.0 < 2 {
            return Err(StorageError::corrupt(
                pg,
                "sibling pages repeat or include page 1",
            ));
        }
        old_pages.push(pg);
        let (pkind, right) = if j == ci {
            if pg != pgno {
                return Err(StorageError::corrupt(
                    pgno,
                    "parent does not point to the page being balanced",
                ));
            }
            let content = node
                .take()
                .ok_or_else(|| StorageError::misuse("node used twice"))?;
            all.append(&content);
            (content.kind, content.right)
        } else {
            gather_page(v, pg, table, &mut all)?
        };
        if pkind != kind {
            return Err(StorageError::corrupt(
                pg,
                "sibling pages of different types",
            ));
        }
        if j < hi {
            let div = parent.cell(j)?;
            match (table, leaf) {
                (true, true) => {}
                (_, false) => {
                    all.push(div);
                    let last = all.len() - 1;
                    all.set_left_child(last, right);
                }
                (false, true) => {
                    let c = convert_cell(div, interior_of(kind), INDEX_LEAF, 0, usable)
                        .ok_or_else(|| StorageError::corrupt(pg, "malformed divider cell"))?;
                    all.push(&c);
                }
            }
        } else {
            last_right = right;
        }
    }
    drop(parent);

    // Pack into pages. `ranges[p]` are the cells of new page p; with dividers, the cell
    // between two ranges goes up to the parent.
    let with_dividers = !(table && leaf);
    let cap = usable - header_len_of(kind);
    let count = all.len();
    let cost = |i: usize| all.cell_cost(i);
    let pack = |budget: usize| -> Result<Vec<(usize, usize)>> {
        let mut ranges: Vec<(usize, usize)> = Vec::new();
        let mut i = 0;
        loop {
            let start = i;
            let mut used = 0;
            while i < count && used + cost(i) <= budget {
                used += cost(i);
                i += 1;
            }
            if i == start && i < count {
                return Err(StorageError::corrupt(pgno, "cell larger than a page"));
            }
            ranges.push((start, i));
            if i >= count {
                return Ok(ranges);
            }
            if with_dividers {
                i += 1;
                if i >= count {
                    ranges.push((i, i));
                    return Ok(ranges);
                }
            }
        }
    };
    let mut ranges = pack(cap)?;
    // Pages packed nearly full would overflow again after a few more inserts, and each
    // overflow rebalances three pages: measured on 200k random-rowid inserts, packing to
    // the minimum page count meant a balance every 11 inserts. When the minimum count would
    // leave pages over 85% full, spread the cells over one more page instead.
    let total: usize = (0..count).map(cost).sum();
    if total * 100 > ranges.len() * cap * 85 {
        let widest = (0..count).map(cost).max().unwrap_or(0);
        let budget = (total / (ranges.len() + 1) + widest).min(cap);
        ranges = pack(budget)?;
    }
    // Shift cells right so later pages are not nearly empty (the greedy pass leaves the
    // slack at the end).
    for p in (1..ranges.len()).rev() {
        let (ls, mut le) = ranges[p - 1];
        let (mut rs, re) = ranges[p];
        let mut fill_l: usize = (ls..le).map(cost).sum();
        let mut fill_r: usize = (rs..re).map(cost).sum();
        while le - ls >= 2 {
            let (grow, shrink) = if with_dividers {
                (cost(le), cost(le - 1))
            } else {
                (cost(le - 1), cost(le - 1))
            };
            let right_empty = rs == re;
            let new_r = fill_r + grow;
            let new_l = fill_l - shrink;
            if !(right_empty || (new_r <= cap && new_r <= new_l)) {
                break;
            }
            fill_r = new_r;
            fill_l = new_l;
            le -= 1;
            rs -= 1;
        }
        ranges[p - 1].1 = le;
        ranges[p].0 = rs;
    }
    let k = ranges.len();

    // Page numbers: reuse the old siblings, allocate more or free the extras.
    let mut new_pages: Vec<PageNo> = old_pages.iter().copied().take(k).collect();
    while new_pages.len() < k {
        new_pages.push(freelist::allocate(v)?);
    }
    for &pg in old_pages.iter().skip(k) {
        freelist::free(v, pg)?;
    }

    let mut dividers: Vec<Vec<u8>> = Vec::with_capacity(k - 1);
    for (p, &(s, e)) in ranges.iter().enumerate() {
        let right = if leaf {
            0
        } else if p + 1 < k {
            all.left_child(e)
        } else {
            last_right
        };
        all.write_range(
            v.page_mut(new_pages[p])?,
            new_pages[p],
            kind,
            usable,
            s,
            e,
            right,
        )?;
        if p + 1 < k {
            let mut div = if with_dividers {
                convert_cell(all.cell(e), kind, interior_of(kind), new_pages[p].0, usable)
                    .ok_or_else(|| StorageError::corrupt(pgno, "malformed cell"))?
            } else {
                if e == s {
                    return Err(StorageError::corrupt(pgno, "empty leaf"));
                }
                let key = table_cell_key(all.cell(e - 1), 0, TABLE_LEAF)
                    .ok_or_else(|| StorageError::corrupt(pgno, "malformed cell"))?;
                build_table_interior(new_pages[p].0, key)
            };
            while div.len() < 4 {
                div.push(0);
            }
            dividers.push(div);
        }
    }
    let last_page = new_pages[k - 1].0;

    // The parent: drop the old dividers, insert the new ones, repoint the child after them.
    let pkind = interior_of(kind);
    let size_of = cell_size_fn(pkind, usable);
    let pdata = v.page_mut(ppgno)?;
    for _ in lo..hi {
        let hdr = PageHeader::parse(pdata, ppgno, usable)?;
        let pc = hdr.cell_ptr(pdata, lo);
        if pc < hdr.ptr_array_end() || pc + 4 > usable {
            return Err(StorageError::corrupt(ppgno, "cell pointer out of range"));
        }
        let size =
            size_of(pdata, pc).ok_or_else(|| StorageError::corrupt(ppgno, "malformed cell"))?;
        drop_cell(pdata, ppgno, usable, lo, size)?;
    }
    let mut placed = 0;
    for d in &dividers {
        if !insert_cell(pdata, ppgno, usable, lo + placed, d, &size_of)? {
            break;
        }
        placed += 1;
    }
    let after = lo + k - 1;
    if placed == dividers.len() {
        let hdr = PageHeader::parse(pdata, ppgno, usable)?;
        let off = if hi < n {
            let pc = hdr.cell_ptr(pdata, after);
            if pc < hdr.ptr_array_end() || pc + 4 > usable {
                return Err(StorageError::corrupt(ppgno, "cell pointer out of range"));
            }
            pc
        } else {
            hdr.hdr_off + 8
        };
        pdata[off..off + 4].copy_from_slice(&last_page.to_be_bytes());
        return Ok(None);
    }
    let mut np = node_read(v, ppgno, table)?;
    for (j, d) in dividers.iter().enumerate().skip(placed) {
        np.insert(lo + j, d);
    }
    if hi < n {
        np.set_left_child(after, last_page);
    } else {
        np.right = last_page;
    }
    Ok(Some(np))
}

/// SQLite's balance_quick: the table leaf at the end of `path` is full and `cell` belongs
/// after its last cell, and the leaf is its parent's right-most child. Puts `cell` alone on
/// a new page to the right and adds the new divider to the parent.
pub fn quick_balance<V: PageWrite + ?Sized>(
    v: &mut V,
    path: &mut Vec<(PageNo, usize)>,
    cell: &[u8],
) -> Result<()> {
    let usable = v.usable_size();
    let (leaf, _) = *path
        .last()
        .ok_or_else(|| StorageError::misuse("empty path"))?;
    let (page, hdr) = load_page(v, leaf.0, true)?;
    if hdr.ncells == 0 || hdr.kind != TABLE_LEAF {
        return Err(StorageError::corrupt(
            leaf,
            "quick balance on an empty or non-leaf page",
        ));
    }
    let last = last_key(&page, &hdr, leaf, usable)?;
    drop(page);
    let new_page = freelist::allocate(v)?;
    write_page(
        v.page_mut(new_page)?,
        new_page,
        TABLE_LEAF,
        usable,
        std::iter::once(cell),
        0,
    )?;
    path.pop();
    let (ppgno, _) = *path
        .last()
        .ok_or_else(|| StorageError::misuse("quick balance at the root"))?;
    // Usually the divider fits in the parent: add it in place, no restructuring.
    let (ppage, phdr) = load_page(v, ppgno.0, true)?;
    drop(ppage);
    if phdr.is_leaf() || phdr.right_child != leaf.0 {
        return Err(StorageError::corrupt(
            ppgno,
            "leaf is not the right-most child",
        ));
    }
    let div = build_table_interior(leaf.0, last);
    let pdata = v.page_mut(ppgno)?;
    if insert_cell(
        pdata,
        ppgno,
        usable,
        phdr.ncells,
        &div,
        cell_size_fn(TABLE_INTERIOR, usable),
    )? {
        let off = header_offset(ppgno) + 8;
        pdata[off..off + 4].copy_from_slice(&new_page.0.to_be_bytes());
        return Ok(());
    }
    let mut parent = node_read(v, ppgno, true)?;
    parent.push(&div);
    parent.right = new_page.0;
    balance(v, path, parent)
}

fn last_key(page: &[u8], hdr: &PageHeader, pgno: PageNo, usable: usize) -> Result<i64> {
    let pc = hdr.cell_ptr(page, hdr.ncells - 1);
    if pc < hdr.ptr_array_end() || pc + 4 > usable {
        return Err(StorageError::corrupt(pgno, "cell pointer out of range"));
    }
    table_cell_key(&page[..usable], pc, hdr.kind)
        .ok_or_else(|| StorageError::corrupt(pgno, "malformed cell"))
}
