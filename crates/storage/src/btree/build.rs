//! Bottom-up builds: filling an empty tree from entries already in key order, page by
//! page, without a descent or a key compare per entry (what SQLite's VACUUM, its
//! INSERT ... SELECT transfer optimization and CREATE INDEX's sorter achieve).
//!
//! Shape of the result (a valid SQLite B-tree, fileformat2.html §1.6):
//! - Leaves are packed full left to right; the last leaf holds what is left (at least one
//!   entry). Interior levels are packed the same way from the (child, divider) sequence of
//!   the level below, until one page is left: it is written into the given root page, so
//!   the root page number never changes.
//! - Table trees: the divider after a child is the largest rowid in that child's subtree.
//! - Index trees: dividers are real entries, taken out of the entry sequence: the entry
//!   that does not fit a full leaf goes up as the divider after it. Because a leaf is
//!   written only once its successor has an entry (`held`), no leaf and no interior page
//!   is ever left without cells.
//!
//! Invariants:
//! - B1. The caller gives entries in strictly ascending key order (`Txn::build_btree`
//!   checks it); the builder itself never compares keys.
//! - B2. The root is an existing, empty tree of the right family; until `finish` the pages
//!   written so far are reachable from nothing (a failed statement's savepoint rollback
//!   takes them back with everything else).
//! - B3. Cells are stored unpadded except for SQLite's 4-byte minimum, and every page's
//!   fragmented-byte count is 0, as `write_page` writes it (integrity_check compares them).

use super::balance::{capacity, Node};
use super::cell::{build_index_leaf, build_table_leaf, local_len};
use super::freelist;
use super::overflow::write_chain;
use super::page::{
    header_len_of, write_page, PageHeader, INDEX_INTERIOR, INDEX_LEAF, TABLE_INTERIOR, TABLE_LEAF,
};
use crate::error::{PageNo, Result, StorageError};
use crate::pages::PageWrite;
use crate::varint::push_varint;

/// A build in progress: the leaf being filled and the (child, divider) list for level 1.
pub struct Builder {
    root: PageNo,
    table: bool,
    usable: usize,
    leaf: Node,
    /// Bytes `leaf` needs on a page (`Node::size`, kept as cells are added: recomputing it
    /// per entry made a VACUUM's builds quadratic in the cells per page).
    leaf_used: usize,
    /// Index trees: a full leaf and the entry that did not fit it, waiting for the next
    /// entry (which proves the entry can go up as a divider with a leaf after it).
    held: Option<(Node, Vec<u8>)>,
    /// Written leaves with the divider after each (table: rowid varint; index: leaf cell).
    children: Vec<(u32, Vec<u8>)>,
    last_rowid: i64,
    cell: Vec<u8>,
}

/// Bytes a cell takes on a page, its pointer included.
fn cost(cell_len: usize) -> usize {
    cell_len.max(4) + 2
}

impl Builder {
    /// Starts a build into the empty tree at `root` (B2).
    pub fn new<V: PageWrite + ?Sized>(v: &V, root: PageNo, table: bool) -> Result<Builder> {
        let usable = v.usable_size();
        if root.0 <= 1 {
            return Err(StorageError::misuse("bulk build into page 1"));
        }
        let page = v.page(root)?;
        let hdr = PageHeader::parse(&page, root, usable)?;
        let want = if table { TABLE_LEAF } else { INDEX_LEAF };
        if hdr.kind != want || hdr.ncells != 0 {
            return Err(StorageError::misuse(
                "bulk build into a tree that is not empty",
            ));
        }
        Ok(Builder {
            root,
            table,
            usable,
            leaf: Node::new(want, 0),
            leaf_used: header_len_of(want),
            held: None,
            children: Vec::new(),
            last_rowid: 0,
            cell: Vec::new(),
        })
    }

    /// Adds the next entry: a table row (`rowid`, record) or an index key (`rowid` unused).
    pub fn push<V: PageWrite + ?Sized>(
        &mut self,
        v: &mut V,
        rowid: i64,
        payload: &[u8],
    ) -> Result<()> {
        if payload.len() as u64 > i32::MAX as u64 {
            return Err(StorageError::TooBig {
                reason: format!("payload of {} bytes", payload.len()),
            });
        }
        let local = local_len(payload.len() as u64, self.usable, self.table);
        let overflow = if local < payload.len() {
            write_chain(v, &payload[local..])?
        } else {
            0
        };
        let mut cell = std::mem::take(&mut self.cell);
        if self.table {
            build_table_leaf(
                &mut cell,
                rowid,
                payload.len() as u64,
                &payload[..local],
                overflow,
            );
        } else {
            build_index_leaf(&mut cell, payload.len() as u64, &payload[..local], overflow);
        }
        let r = self.push_cell(v, rowid, &cell);
        self.cell = cell;
        r
    }

    fn push_cell<V: PageWrite + ?Sized>(
        &mut self,
        v: &mut V,
        rowid: i64,
        cell: &[u8],
    ) -> Result<()> {
        let room = capacity(self.root, self.usable);
        if let Some((full, divider)) = self.held.take() {
            // Index: the held entry goes up between the full leaf and a leaf starting here.
            let pg = self.write_new(v, &full)?;
            self.children.push((pg, divider));
        }
        if self.leaf_used + cost(cell.len()) <= room {
            self.leaf.push(cell);
            self.leaf_used += cost(cell.len());
            self.last_rowid = rowid;
            return Ok(());
        }
        let kind = self.leaf.kind;
        let full = std::mem::replace(&mut self.leaf, Node::new(kind, 0));
        self.leaf_used = header_len_of(kind);
        if self.table {
            let pg = self.write_new(v, &full)?;
            let mut key = Vec::with_capacity(9);
            push_varint(&mut key, self.last_rowid as u64);
            self.children.push((pg, key));
            self.leaf.push(cell);
            self.leaf_used += cost(cell.len());
            self.last_rowid = rowid;
        } else {
            self.held = Some((full, cell.to_vec()));
        }
        Ok(())
    }

    /// Writes `node` to a newly allocated page.
    fn write_new<V: PageWrite + ?Sized>(&self, v: &mut V, node: &Node) -> Result<u32> {
        let pg = freelist::allocate(v)?;
        write_page(
            v.page_mut(pg)?,
            pg,
            node.kind,
            self.usable,
            (0..node.len()).map(|i| node.cell(i)),
            node.right,
        )?;
        Ok(pg.0)
    }

    /// Writes what is left and the interior levels; the root page ends up the top page.
    pub fn finish<V: PageWrite + ?Sized>(mut self, v: &mut V) -> Result<()> {
        if let Some((mut full, divider)) = self.held.take() {
            // The entry that did not fit the last full leaf was the last entry: the full
            // leaf's own last entry goes up instead, and the held one starts the last leaf.
            let n = full.len();
            if n < 2 {
                return Err(StorageError::misuse("index entry larger than a page"));
            }
            let up = full.cell(n - 1).to_vec();
            let mut rest = Node::new(full.kind, 0);
            for i in 0..n - 1 {
                rest.push(full.cell(i));
            }
            full = rest;
            let pg = self.write_new(v, &full)?;
            self.children.push((pg, up));
            self.leaf.push(&divider);
        }
        if self.children.is_empty() {
            return self.write_root(v, &self.leaf);
        }
        let last = self.write_new(v, &self.leaf)?;
        let kind = if self.table {
            TABLE_INTERIOR
        } else {
            INDEX_INTERIOR
        };
        let mut level = std::mem::take(&mut self.children);
        let mut right = last;
        loop {
            let (pages, up) = self.pack_level(kind, level, right)?;
            if pages.len() == 1 {
                return self.write_root(v, &pages[0]);
            }
            let mut next = Vec::with_capacity(up.len());
            let mut written = Vec::with_capacity(pages.len());
            for p in &pages {
                written.push(self.write_new(v, p)?);
            }
            let top = written.len() - 1;
            for (i, d) in up.into_iter().enumerate() {
                next.push((written[i], d));
            }
            level = next;
            right = written[top];
        }
    }

    /// Packs one interior level from `(child, divider)` pairs and the right-most child.
    /// Returns the pages and the dividers that go up between them (one fewer).
    fn pack_level(
        &self,
        kind: u8,
        level: Vec<(u32, Vec<u8>)>,
        right: u32,
    ) -> Result<(Vec<Node>, Vec<Vec<u8>>)> {
        let room = capacity(self.root, self.usable);
        let n = level.len();
        let mut pages = Vec::new();
        let mut up = Vec::new();
        let mut cur = Node::new(kind, 0);
        let mut used = header_len_of(kind);
        let mut cell = Vec::new();
        let mut j = 0;
        while j < n {
            let (child, div) = &level[j];
            cell.clear();
            cell.extend_from_slice(&child.to_be_bytes());
            cell.extend_from_slice(div);
            if used + cost(cell.len()) <= room {
                cur.push(&cell);
                used += cost(cell.len());
                j += 1;
                continue;
            }
            if cur.is_empty() {
                return Err(StorageError::misuse("divider larger than a page"));
            }
            // Page full: child j closes it and divider j goes up — unless j is the last
            // pair, which would leave the next page with no cell: then the page's own last
            // pair goes up and pair j starts the next page.
            if j + 1 < n || cur.len() < 2 {
                cur.right = *child;
                up.push(div.clone());
                pages.push(std::mem::replace(&mut cur, Node::new(kind, 0)));
                used = header_len_of(kind);
                j += 1;
            } else {
                let k = cur.len() - 1;
                let last = cur.cell(k).to_vec();
                let mut rest = Node::new(kind, 0);
                for i in 0..k {
                    rest.push(cur.cell(i));
                }
                rest.right = u32::from_be_bytes([last[0], last[1], last[2], last[3]]);
                up.push(last[4..].to_vec());
                pages.push(rest);
                cur = Node::new(kind, 0);
                used = header_len_of(kind);
            }
        }
        if cur.is_empty() && !pages.is_empty() {
            // Only reachable with a page that holds a single interior cell, which the
            // payload limits (at least four cells per page) rule out.
            return Err(StorageError::misuse(
                "bulk build left an empty interior page",
            ));
        }
        cur.right = right;
        pages.push(cur);
        debug_assert_eq!(up.len() + 1, pages.len());
        Ok((pages, up))
    }

    fn write_root<V: PageWrite + ?Sized>(&self, v: &mut V, node: &Node) -> Result<()> {
        write_page(
            v.page_mut(self.root)?,
            self.root,
            node.kind,
            self.usable,
            (0..node.len()).map(|i| node.cell(i)),
            node.right,
        )
    }
}
