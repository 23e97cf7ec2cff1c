//! Whole-tree operations: create, drop, clear, count.
//!
//! Walks are iterative, depth-bounded and remember visited pages, so a corrupt file with a
//! page cycle or a page shared by two parents yields `Corrupt` rather than a hang or a page
//! freed twice.

use super::cursor::{load_page, Frame, MAX_DEPTH};
use super::freelist;
use super::overflow::free_chain;
use super::page::{is_table_kind, leaf_of, write_page, PageHeader, INDEX_LEAF, TABLE_LEAF};
use crate::error::{PageNo, Result, StorageError};
use crate::pages::{PageRead, PageWrite};
use std::collections::HashSet;

/// Allocates and initialises the root page of a new, empty tree.
pub fn create<V: PageWrite + ?Sized>(v: &mut V, table: bool) -> Result<PageNo> {
    let pg = freelist::allocate(v)?;
    let usable = v.usable_size();
    write_page(
        v.page_mut(pg)?,
        pg,
        if table { TABLE_LEAF } else { INDEX_LEAF },
        usable,
        std::iter::empty(),
        0,
    )?;
    Ok(pg)
}

/// Whether the tree rooted at `root` is a table tree (from the root page's type).
pub fn root_is_table<V: PageRead + ?Sized>(v: &V, root: PageNo) -> Result<bool> {
    if root.0 == 0 || root.0 > v.page_count() {
        return Err(StorageError::corrupt(root, "root page out of range"));
    }
    let page = v.page(root)?;
    Ok(PageHeader::parse(&page, root, v.usable_size())?.is_table())
}

/// Visits every page of the tree, children before nothing in particular (pre-order),
/// calling `f` with each page's frame. Returns the number of entries (leaf cells, plus
/// interior cells of index trees).
fn walk<V: PageRead + ?Sized>(
    v: &V,
    root: PageNo,
    mut f: impl FnMut(&Frame) -> Result<()>,
) -> Result<u64> {
    let usable = v.usable_size();
    let table = root_is_table(v, root)?;
    let mut todo = vec![(root.0, 0usize)];
    let mut seen = HashSet::new();
    let mut entries = 0u64;
    while let Some((pg, depth)) = todo.pop() {
        if depth >= MAX_DEPTH {
            return Err(StorageError::corrupt(
                PageNo(pg),
                "b-tree too deep (page cycle?)",
            ));
        }
        if !seen.insert(pg) || (pg == 1 && depth > 0) {
            return Err(StorageError::corrupt(PageNo(pg), "page referenced twice"));
        }
        let (page, hdr) = load_page(v, pg, table)?;
        let frame = Frame {
            pgno: PageNo(pg),
            page,
            hdr,
            idx: 0,
        };
        if hdr.is_leaf() || !table {
            entries += hdr.ncells as u64;
        }
        if !hdr.is_leaf() {
            for i in 0..=hdr.ncells {
                todo.push((frame.child(i, usable)?, depth + 1));
            }
        }
        f(&frame)?;
    }
    Ok(entries)
}

/// Number of entries in the tree.
pub fn count<V: PageRead + ?Sized>(v: &V, root: PageNo) -> Result<u64> {
    walk(v, root, |_| Ok(()))
}

/// Frees every page of the tree and its overflow chains; with `keep_root` the root stays,
/// emptied (a leaf of the same family). Returns the number of entries removed.
pub fn destroy<V: PageWrite + ?Sized>(v: &mut V, root: PageNo, keep_root: bool) -> Result<u64> {
    if root.0 == 1 && !keep_root {
        return Err(StorageError::misuse("page 1 cannot be dropped"));
    }
    let usable = v.usable_size();
    let root_kind = {
        let page = v.page(root)?;
        PageHeader::parse(&page, root, usable)?.kind
    };
    // Collect first (the walk needs a shared borrow), then free.
    let mut pages = Vec::new();
    let mut chains = Vec::new();
    let entries = walk(&*v, root, |frame| {
        pages.push(frame.pgno);
        if frame.hdr.is_leaf() || !is_table_kind(frame.hdr.kind) {
            for i in 0..frame.hdr.ncells {
                let info = frame.cell(i, usable)?;
                if info.overflow != 0 {
                    chains.push((frame.pgno, info));
                }
            }
        }
        Ok(())
    })?;
    for (pg, info) in chains {
        free_chain(v, pg, &info)?;
    }
    for pg in pages {
        if pg != root {
            freelist::free(v, pg)?;
        }
    }
    if keep_root {
        write_page(
            v.page_mut(root)?,
            root,
            leaf_of(root_kind),
            usable,
            std::iter::empty(),
            0,
        )?;
    } else {
        freelist::free(v, root)?;
    }
    Ok(entries)
}
