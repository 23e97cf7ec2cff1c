//! The structural integrity check (what `PRAGMA integrity_check` verifies about B-trees).
//!
//! For each tree: every page is a B-tree page of the tree's family and is referenced once;
//! all leaves are at the same depth; cells lie inside the content area and, together with
//! the freeblocks, never overlap; the bytes not covered equal the fragment count; table
//! rowids increase within pages and respect the parents' dividers (left subtree <= divider
//! < right subtree); overflow chains have exactly the length their payload needs. With a
//! comparator, index entries must strictly increase in key order. For the whole file:
//! the freelist is well-formed and its size matches header offset 36, and every page is
//! used by exactly one tree, chain or the freelist (F1 in freelist.rs).
//!
//! Messages follow SQLite's wording ("Tree 2 page 5 cell 3: Rowid 9 out of order",
//! "Page 7 is never used", "2nd reference to page 4"). The check reads only, is bounded in
//! depth and never follows a page twice, so it terminates on any input.

use super::cell::{overflow_pages, parse_cell, CellInfo};
use super::cursor::{payload_of, TreeCursor, MAX_DEPTH};
use super::page::{get_u16, PageHeader};
use crate::error::{PageNo, Result};
use crate::header::{get_u32, OFFSET_FREELIST_COUNT, OFFSET_FREELIST_TRUNK};
use crate::pages::PageRead;
use crate::record::KeyCompare;
use std::cmp::Ordering;

/// One tree to check: its root, whether it is a table, and optionally the index order.
pub struct TreeSpec<'a> {
    pub root: PageNo,
    pub table: bool,
    pub cmp: Option<&'a dyn KeyCompare>,
}

struct Checker<'v, V: PageRead + ?Sized> {
    v: &'v V,
    usable: usize,
    page_count: u32,
    used: Vec<bool>,
    errors: Vec<String>,
    max_errors: usize,
}

impl<'v, V: PageRead + ?Sized> Checker<'v, V> {
    fn full(&self) -> bool {
        self.errors.len() >= self.max_errors
    }

    fn error(&mut self, msg: String) {
        if !self.full() {
            self.errors.push(msg);
        }
    }

    /// Marks `pgno` used; false (with a message) if out of range or already used.
    fn mark(&mut self, pgno: u32, ctx: &str) -> bool {
        if pgno == 0 || pgno > self.page_count {
            self.error(format!("{ctx}invalid page number {pgno}"));
            return false;
        }
        if self.used[pgno as usize] {
            self.error(format!("{ctx}2nd reference to page {pgno}"));
            return false;
        }
        self.used[pgno as usize] = true;
        true
    }

    fn check_overflow(&mut self, ctx: &str, info: &CellInfo) {
        let expected = overflow_pages(info.payload_size, info.local_len, self.usable);
        let mut next = info.overflow;
        let mut n = 0u64;
        while next != 0 && n < expected {
            if !self.mark(next, ctx) {
                return;
            }
            n += 1;
            match self.v.page(PageNo(next)) {
                Ok(p) => next = get_u32(&p, 0),
                Err(e) => {
                    self.error(format!("{ctx}failed to read page {next}: {e}"));
                    return;
                }
            }
        }
        if n != expected || next != 0 {
            let found = if next != 0 { n + 1 } else { n };
            self.error(format!(
                "{ctx}overflow list length is {found} but should be {expected}"
            ));
        }
    }

    /// Checks the subtree at `pgno`; rowids must lie in (lower, upper]. Returns the depth
    /// of its leaves (None when the page is unusable).
    fn check_page(
        &mut self,
        root: PageNo,
        table: bool,
        pgno: u32,
        depth: usize,
        lower: Option<i64>,
        upper: Option<i64>,
    ) -> Option<usize> {
        let tctx = format!("Tree {} page {}: ", root.0, pgno);
        if depth >= MAX_DEPTH {
            self.error(format!("{tctx}b-tree too deep"));
            return None;
        }
        if self.full() || !self.mark(pgno, &tctx) {
            return None;
        }
        let page = match self.v.page(PageNo(pgno)) {
            Ok(p) => p,
            Err(e) => {
                self.error(format!("{tctx}{e}"));
                return None;
            }
        };
        let hdr = match PageHeader::parse(&page, PageNo(pgno), self.usable) {
            Ok(h) if h.is_table() == table => h,
            _ => {
                self.error(format!(
                    "Page {pgno}: btreeInitPage() returns error code 11"
                ));
                return None;
            }
        };
        let usable = self.usable;
        let errors_before = self.errors.len();
        // Byte ranges of the content area: cells and freeblocks.
        let mut ranges: Vec<(usize, usize)> = Vec::with_capacity(hdr.ncells + 4);
        let mut prev_key: Option<i64> = None;
        let mut child_depth: Option<usize> = None;
        let mut lower_i = lower;
        for i in 0..hdr.ncells {
            let ctx = format!("Tree {} page {} cell {}: ", root.0, pgno, i);
            let pc = hdr.cell_ptr(&page, i);
            if pc < hdr.ptr_array_end() || pc + 4 > usable || pc < hdr.content_start {
                self.error(format!(
                    "{ctx}Offset {pc} out of range {}..{}",
                    hdr.content_start, usable
                ));
                continue;
            }
            let Some(info) = parse_cell(&page, pc, hdr.kind, usable) else {
                self.error(format!("{ctx}Extends off end of page"));
                continue;
            };
            ranges.push((pc, pc + info.size()));
            if table {
                let k = info.key;
                let in_order = match (prev_key, hdr.is_leaf()) {
                    (Some(p), true) => k > p,
                    (Some(p), false) => k >= p,
                    (None, _) => true,
                };
                if !in_order || lower.is_some_and(|l| k <= l) || upper.is_some_and(|u| k > u) {
                    self.error(format!("{ctx}Rowid {k} out of order"));
                }
                prev_key = Some(k);
            }
            if info.overflow != 0 || info.payload_size > info.local_len as u64 {
                self.check_overflow(&ctx, &info);
            }
            if !hdr.is_leaf() {
                let (lo, hi) = if table {
                    (lower_i, Some(info.key))
                } else {
                    (None, None)
                };
                let d = self.check_page(root, table, info.left_child, depth + 1, lo, hi);
                self.merge_depth(&mut child_depth, d, &ctx);
                if table {
                    lower_i = Some(info.key);
                }
            }
        }
        if !hdr.is_leaf() {
            let ctx = format!("Tree {} page {} right child: ", root.0, pgno);
            let d = self.check_page(root, table, hdr.right_child, depth + 1, lower_i, upper);
            self.merge_depth(&mut child_depth, d, &ctx);
        }
        // Freeblocks: ascending, inside the content area, at least 4 bytes.
        let mut fb = hdr.first_free;
        let mut steps = 0;
        while fb != 0 {
            steps += 1;
            if steps > usable / 4 || fb + 4 > usable || fb < hdr.content_start {
                self.error(format!(
                    "Tree {} page {}: freeblock chain corrupt at offset {fb}",
                    root.0, pgno
                ));
                break;
            }
            let size = get_u16(&page, fb + 2);
            let next = get_u16(&page, fb);
            if size < 4 || fb + size > usable || (next != 0 && next <= fb + size) {
                self.error(format!(
                    "Tree {} page {}: freeblock at offset {fb} malformed",
                    root.0, pgno
                ));
                break;
            }
            ranges.push((fb, fb + size));
            fb = next;
        }
        ranges.sort_unstable();
        let mut covered_to = hdr.content_start;
        let mut gaps = 0usize;
        for &(s, e) in &ranges {
            if s < covered_to {
                self.error(format!(
                    "Multiple uses for byte {covered_to} of page {pgno}"
                ));
                break;
            }
            gaps += s - covered_to;
            covered_to = e;
        }
        if covered_to <= usable {
            gaps += usable - covered_to;
        }
        // Only meaningful when the page's cells parsed cleanly.
        if gaps != hdr.frag && self.errors.len() == errors_before {
            self.error(format!(
                "Fragmentation of {gaps} bytes reported as {} on page {pgno}",
                hdr.frag
            ));
        }
        Some(child_depth.map_or(0, |d| d + 1))
    }

    fn merge_depth(&mut self, acc: &mut Option<usize>, d: Option<usize>, ctx: &str) {
        if let Some(d) = d {
            match acc {
                None => *acc = Some(d),
                Some(a) if *a != d => self.error(format!("{ctx}Child page depth differs")),
                _ => {}
            }
        }
    }

    /// In-order scan: index keys must strictly increase under `cmp`.
    fn check_index_order(&mut self, root: PageNo, cmp: &dyn KeyCompare) -> Result<()> {
        let mut tc = TreeCursor::new(root, false);
        let mut prev: Vec<u8> = Vec::new();
        let mut cur: Vec<u8> = Vec::new();
        let mut scratch = Vec::new();
        let mut ok = tc.first(self.v)?;
        let mut first = true;
        let mut n = 0u64;
        while ok && !self.full() {
            {
                let (frame, info) = tc.current(self.usable)?;
                cur.clear();
                let p = payload_of(self.v, frame, &info, &mut scratch)?;
                cur.extend_from_slice(p);
                if !first && cmp.compare(&prev, &cur)? != Ordering::Less {
                    self.error(format!(
                        "Tree {} page {} cell {}: Key out of order (entry {n})",
                        root.0, frame.pgno, frame.idx
                    ));
                }
            }
            first = false;
            std::mem::swap(&mut prev, &mut cur);
            n += 1;
            ok = tc.next(self.v)?;
        }
        Ok(())
    }

    fn check_freelist(&mut self) {
        let Ok(p1) = self.v.page(PageNo(1)) else {
            self.error("Page 1: cannot be read".to_string());
            return;
        };
        let mut trunk = get_u32(&p1, OFFSET_FREELIST_TRUNK);
        let expected = get_u32(&p1, OFFSET_FREELIST_COUNT) as u64;
        let mut found = 0u64;
        while trunk != 0 && !self.full() {
            if !self.mark(trunk, "Freelist: ") {
                break;
            }
            found += 1;
            let Ok(t) = self.v.page(PageNo(trunk)) else {
                break;
            };
            let leaves = get_u32(&t, 4) as usize;
            if leaves > self.usable / 4 - 2 {
                self.error(format!("freelist leaf count too big on page {trunk}"));
                break;
            }
            for i in 0..leaves {
                let leaf = get_u32(&t, 8 + 4 * i);
                if self.mark(leaf, "Freelist: ") {
                    found += 1;
                }
            }
            trunk = get_u32(&t, 0);
        }
        if found != expected {
            self.error(format!(
                "Freelist: size is {found} but should be {expected}"
            ));
        }
    }
}

/// Checks the given trees; with `whole_file`, also the freelist and that every page is
/// used (then `trees` must list every tree in the file). Returns at most `max_errors`
/// messages; empty means ok.
pub fn check<V: PageRead + ?Sized>(
    v: &V,
    trees: &[TreeSpec],
    whole_file: bool,
    max_errors: usize,
) -> Result<Vec<String>> {
    let page_count = v.page_count();
    let mut c = Checker {
        v,
        usable: v.usable_size(),
        page_count,
        used: vec![false; page_count as usize + 1],
        errors: Vec::new(),
        max_errors: max_errors.max(1),
    };
    if whole_file {
        c.check_freelist();
    }
    for t in trees {
        if c.full() {
            break;
        }
        let before = c.errors.len();
        c.check_page(t.root, t.table, t.root.0, 0, None, None);
        if let (Some(cmp), true) = (t.cmp, c.errors.len() == before) {
            if let Err(e) = c.check_index_order(t.root, cmp) {
                c.error(format!("Tree {}: {e}", t.root.0));
            }
        }
    }
    if whole_file && c.errors.is_empty() {
        // The lock-byte page belongs to nothing (freelist.rs F4).
        let lock = crate::header::lock_byte_page(v.page_size());
        for pg in 1..=page_count {
            if !c.used[pg as usize] && pg != lock {
                c.error(format!("Page {pg} is never used"));
            }
        }
    }
    if c.errors.len() > max_errors {
        c.errors.truncate(max_errors);
    }
    Ok(c.errors)
}

#[cfg(test)]
mod tests {
    use crate::header::{put_u32, OFFSET_FREELIST_COUNT};
    use crate::pages::{Backend, PageWrite};
    use crate::{BtreeKind, Database, MemBackend, PageNo};
    use std::sync::Arc;
    use std::time::Duration;

    /// A table of 300 rows (several leaves) plus a dropped table (free pages).
    fn sample() -> (MemBackend, PageNo) {
        let mem = MemBackend::new(1024).unwrap();
        let db = Database::with_backend(Arc::new(mem.clone())).unwrap();
        let t = db.begin_write(Duration::ZERO).unwrap();
        let root = t.create_btree(BtreeKind::Table).unwrap();
        let other = t.create_btree(BtreeKind::Table).unwrap();
        for i in 0..300 {
            t.table_insert(root, i, &[3, 1, 1, (i % 100) as u8])
                .unwrap();
            t.table_insert(other, i, &[2, 9]).unwrap();
        }
        t.drop_btree(other).unwrap();
        t.commit().unwrap();
        (mem, root)
    }

    fn check_after(
        mem: &MemBackend,
        root: PageNo,
        damage: impl FnOnce(&mut dyn PageWrite),
    ) -> Vec<String> {
        let mut w = mem.begin_write(Duration::ZERO).unwrap();
        damage(&mut *w);
        w.commit().unwrap();
        let db = Database::with_backend(Arc::new(mem.clone())).unwrap();
        let r = db.begin_read().unwrap();
        r.integrity_check(&[(root, BtreeKind::Table)], 10).unwrap()
    }

    /// The first leaf of the tree rooted at `root` (root is interior here).
    fn first_leaf(mem: &MemBackend, root: PageNo) -> PageNo {
        let r = mem.begin_read().unwrap();
        let page = r.page(root).unwrap();
        let pc = u16::from_be_bytes([page[12], page[13]]) as usize;
        PageNo(u32::from_be_bytes([
            page[pc],
            page[pc + 1],
            page[pc + 2],
            page[pc + 3],
        ]))
    }

    #[test]
    fn clean_file_passes() {
        let (mem, root) = sample();
        assert_eq!(check_after(&mem, root, |_| {}), Vec::<String>::new());
    }

    #[test]
    fn reports_rowid_order_fragmentation_freelist_and_unused_pages() {
        let (mem, root) = sample();
        let leaf = first_leaf(&mem, root);
        // Swap the first two cell pointers: rowids out of order.
        let errs = check_after(&mem, root, |w| {
            let p = w.page_mut(leaf).unwrap();
            let (a, b) = ([p[8], p[9]], [p[10], p[11]]);
            p[8..10].copy_from_slice(&b);
            p[10..12].copy_from_slice(&a);
        });
        assert!(
            errs.iter().any(|e| e
                .starts_with(&format!("Tree {} page {} cell 1: Rowid", root.0, leaf.0))
                && e.ends_with("out of order")),
            "{errs:?}"
        );

        let (mem, root) = sample();
        let leaf = first_leaf(&mem, root);
        let errs = check_after(&mem, root, |w| w.page_mut(leaf).unwrap()[7] = 3);
        assert!(errs.iter().any(|e| e == &format!("Fragmentation of 0 bytes reported as 3 on page {}", leaf.0)), "{errs:?}");

        let (mem, root) = sample();
        let errs = check_after(&mem, root, |w| {
            let p = w.page_mut(PageNo(1)).unwrap();
            let n = u32::from_be_bytes([p[36], p[37], p[38], p[39]]);
            put_u32(p, OFFSET_FREELIST_COUNT, n + 1);
        });
        assert!(
            errs.iter().any(|e| e.starts_with("Freelist: size is")),
            "{errs:?}"
        );

        // A tree left out of the list: its pages are "never used".
        let (mem, root) = sample();
        let db = Database::with_backend(Arc::new(mem.clone())).unwrap();
        let r = db.begin_read().unwrap();
        let errs = r.integrity_check(&[], 10).unwrap();
        assert!(
            errs.iter()
                .any(|e| e == &format!("Page {} is never used", root.0)),
            "{errs:?}"
        );

        // A page referenced twice: point the second child at the first.
        let (mem, root) = sample();
        let leaf = first_leaf(&mem, root);
        let errs = check_after(&mem, root, |w| {
            let p = w.page_mut(root).unwrap();
            let pc = u16::from_be_bytes([p[14], p[15]]) as usize;
            p[pc..pc + 4].copy_from_slice(&leaf.0.to_be_bytes());
        });
        assert!(
            errs.iter()
                .any(|e| e.ends_with(&format!("2nd reference to page {}", leaf.0))),
            "{errs:?}"
        );
    }
}
