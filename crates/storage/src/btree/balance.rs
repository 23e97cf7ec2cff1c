//! Balancing: keeping every page within its size after inserts and deletes.
//!
//! The unit of work is a [`Node`], a page's contents held in memory (cells as byte
//! vectors). [`balance`] takes the new contents of the page at the end of a root-to-page
//! path and writes them back, restructuring as needed:
//! - fits and is not underfull (free space <= 2/3 of the page, SQLite's threshold):
//!   written in place;
//! - otherwise a non-root page is redistributed together with up to two siblings and the
//!   dividers between them (a simplified SQLite balance_nonroot): all their cells are packed
//!   greedily left to right into as few pages as needed, then cells are shifted right so the
//!   last page is not nearly empty. This splits overfull pages and merges underfull ones.
//!   The parent, with its dividers replaced, is then balanced in turn (one level up);
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

use super::cell::{build_table_interior, cell_size_fn, convert_cell, parse_cell, table_cell_key};
use super::cursor::load_page;
use super::freelist;
use super::page::{
    header_len_of, header_offset, insert_cell, interior_of, is_leaf_kind, is_table_kind,
    write_page, PageHeader, INDEX_LEAF, TABLE_INTERIOR, TABLE_LEAF,
};
use crate::error::{PageNo, Result, StorageError};
use crate::header::get_u32;
use crate::pages::{PageRead, PageWrite};

/// A page's contents in memory.
#[derive(Debug, Clone)]
pub struct Node {
    pub kind: u8,
    /// Cells as stored (possibly padded to 4 bytes).
    pub cells: Vec<Vec<u8>>,
    /// Right-most child (interior pages).
    pub right: u32,
}

impl Node {
    /// Bytes the node needs on a page: header, pointers and cells.
    pub fn size(&self) -> usize {
        header_len_of(self.kind) + self.cells.iter().map(|c| c.len().max(4) + 2).sum::<usize>()
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
    let mut cells = Vec::with_capacity(hdr.ncells);
    for i in 0..hdr.ncells {
        let pc = hdr.cell_ptr(&page, i);
        if pc < hdr.ptr_array_end() || pc + 4 > usable {
            return Err(StorageError::corrupt(
                pgno,
                format!("cell {i} pointer out of range"),
            ));
        }
        let info = parse_cell(&page, pc, hdr.kind, usable).ok_or_else(|| {
            StorageError::corrupt(pgno, format!("cell {i} extends past the page"))
        })?;
        let end = pc + info.size();
        if end > usable {
            return Err(StorageError::corrupt(
                pgno,
                format!("cell {i} extends past the page"),
            ));
        }
        cells.push(page[pc..end].to_vec());
    }
    Ok(Node {
        kind: hdr.kind,
        cells,
        right: hdr.right_child,
    })
}

fn node_write<V: PageWrite + ?Sized>(
    v: &mut V,
    pgno: PageNo,
    kind: u8,
    cells: &[Vec<u8>],
    right: u32,
) -> Result<()> {
    let usable = v.usable_size();
    write_page(v.page_mut(pgno)?, pgno, kind, usable, cells, right)
}

fn left_child(cell: &[u8]) -> u32 {
    get_u32(cell, 0)
}

fn set_left_child(cell: &mut [u8], child: u32) {
    cell[0..4].copy_from_slice(&child.to_be_bytes());
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
                if !is_leaf_kind(node.kind) && node.cells.is_empty() {
                    return collapse_root(v, pgno, node, table);
                }
                return node_write(v, pgno, node.kind, &node.cells, node.right);
            }
            // Root overflow: move the contents into a new child; the root keeps its number.
            let child = freelist::allocate(v)?;
            node_write(v, pgno, interior_of(node.kind), &[] as &[Vec<u8>], child.0)?;
            path[0].1 = 0;
            path.push((child, 0));
            continue;
        }
        if size <= cap && !is_underfull(cap - size, usable) {
            return node_write(v, pgno, node.kind, &node.cells, node.right);
        }
        let (ppgno, ci) = path[path.len() - 2];
        let parent = node_read(v, ppgno, table)?;
        let new_parent = balance_siblings(v, parent, ci, pgno, node)?;
        path.pop();
        node = new_parent;
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
        node_write(
            v,
            root,
            child_node.kind,
            &child_node.cells,
            child_node.right,
        )?;
        freelist::free(v, child)
    } else {
        node_write(v, root, node.kind, &node.cells, node.right)
    }
}

/// Redistributes the cells of child `ci` of `parent` (whose new contents are `node`) and up
/// to two siblings. Returns the parent's new contents (not yet written).
fn balance_siblings<V: PageWrite + ?Sized>(
    v: &mut V,
    mut parent: Node,
    ci: usize,
    pgno: PageNo,
    node: Node,
) -> Result<Node> {
    let usable = v.usable_size();
    let table = is_table_kind(node.kind);
    let leaf = is_leaf_kind(node.kind);
    let kind = node.kind;
    let n = parent.cells.len();
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
    let child_of = |parent: &Node, j: usize| {
        if j < parent.cells.len() {
            left_child(&parent.cells[j])
        } else {
            parent.right
        }
    };

    // Gather every cell of the siblings, with the dividers between them where they are
    // entries (index trees) or carry a child pointer (interior pages).
    let mut cells: Vec<Vec<u8>> = Vec::new();
    let mut old_pages: Vec<PageNo> = Vec::with_capacity(3);
    let mut last_right = 0u32;
    let mut node = Some(node);
    for j in lo..=hi {
        let pg = PageNo(child_of(&parent, j));
        if old_pages.contains(&pg) || pg.0 < 2 {
            return Err(StorageError::corrupt(
                pg,
                "sibling pages repeat or include page 1",
            ));
        }
        old_pages.push(pg);
        let content = if j == ci {
            if pg != pgno {
                return Err(StorageError::corrupt(
                    pgno,
                    "parent does not point to the page being balanced",
                ));
            }
            node.take()
                .ok_or_else(|| StorageError::misuse("node used twice"))?
        } else {
            node_read(v, pg, table)?
        };
        if content.kind != kind {
            return Err(StorageError::corrupt(
                pg,
                "sibling pages of different types",
            ));
        }
        cells.extend(content.cells);
        if j < hi {
            let div = &parent.cells[j];
            match (table, leaf) {
                (true, true) => {}
                (_, false) => {
                    let mut c = div.clone();
                    set_left_child(&mut c, content.right);
                    cells.push(c);
                }
                (false, true) => {
                    let c = convert_cell(div, interior_of(kind), INDEX_LEAF, 0, usable)
                        .ok_or_else(|| StorageError::corrupt(pg, "malformed divider cell"))?;
                    cells.push(c);
                }
            }
        } else {
            last_right = content.right;
        }
    }

    // Pack into pages. `ranges[p]` are the cells of new page p; with dividers, the cell
    // between two ranges goes up to the parent.
    let with_dividers = !(table && leaf);
    let cap = usable - header_len_of(kind);
    let sizes: Vec<usize> = cells.iter().map(|c| c.len().max(4) + 2).collect();
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    loop {
        let start = i;
        let mut used = 0;
        while i < cells.len() && used + sizes[i] <= cap {
            used += sizes[i];
            i += 1;
        }
        if i == start && i < cells.len() {
            return Err(StorageError::corrupt(pgno, "cell larger than a page"));
        }
        ranges.push((start, i));
        if i >= cells.len() {
            break;
        }
        if with_dividers {
            i += 1;
            if i >= cells.len() {
                ranges.push((i, i));
                break;
            }
        }
    }
    // Shift cells right so later pages are not nearly empty (the greedy pass leaves the
    // slack at the end).
    for p in (1..ranges.len()).rev() {
        let (ls, mut le) = ranges[p - 1];
        let (mut rs, re) = ranges[p];
        let mut fill_l: usize = sizes[ls..le].iter().sum();
        let mut fill_r: usize = sizes[rs..re].iter().sum();
        while le - ls >= 2 {
            let (grow, shrink) = if with_dividers {
                (sizes[le], sizes[le - 1])
            } else {
                (sizes[le - 1], sizes[le - 1])
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

    let mut dividers: Vec<Vec<u8>> = Vec::with_capacity(k.saturating_sub(1));
    for (p, &(s, e)) in ranges.iter().enumerate() {
        let right = if leaf {
            0
        } else if p + 1 < k {
            left_child(&cells[e])
        } else {
            last_right
        };
        node_write(v, new_pages[p], kind, &cells[s..e], right)?;
        if p + 1 < k {
            let div = if with_dividers {
                convert_cell(&cells[e], kind, interior_of(kind), new_pages[p].0, usable)
                    .ok_or_else(|| StorageError::corrupt(pgno, "malformed cell"))?
            } else {
                let last = cells
                    .get(e.wrapping_sub(1))
                    .filter(|_| e > s)
                    .ok_or_else(|| StorageError::corrupt(pgno, "empty leaf"))?;
                let key = table_cell_key(last, 0, TABLE_LEAF)
                    .ok_or_else(|| StorageError::corrupt(pgno, "malformed cell"))?;
                build_table_interior(new_pages[p].0, key)
            };
            dividers.push(div);
        }
    }
    let last_page = new_pages[k - 1].0;
    let tail = parent.cells.split_off(hi.min(n));
    parent.cells.truncate(lo);
    parent.cells.extend(dividers);
    let after = parent.cells.len();
    parent.cells.extend(tail);
    if hi < n {
        set_left_child(&mut parent.cells[after], last_page);
    } else {
        parent.right = last_page;
    }
    Ok(parent)
}

/// SQLite's balance_quick: the table leaf at the end of `path` is full and `cell` belongs
/// after its last cell, and the leaf is its parent's right-most child. Puts `cell` alone on
/// a new page to the right and balances the parent with the new divider.
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
        &[cell],
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
    if parent.right != leaf.0 {
        return Err(StorageError::corrupt(
            ppgno,
            "leaf is not the right-most child",
        ));
    }
    parent.cells.push(build_table_interior(leaf.0, last));
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
