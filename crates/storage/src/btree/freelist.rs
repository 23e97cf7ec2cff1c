//! SQLite's freelist (fileformat2 §1.5): pages no B-tree uses, kept for reuse.
//!
//! Header offset 32 holds the first trunk page, offset 36 the total number of free pages
//! (trunks and leaves). A trunk page holds: next trunk (4 bytes, 0 = last), leaf count L
//! (4 bytes), then L leaf page numbers. Leaf pages' contents are meaningless.
//!
//! Invariants:
//! - F1. Every page of the file is in exactly one B-tree, one overflow chain, or the
//!   freelist (checked by check.rs; SQLite reports "never used" / "used twice" otherwise).
//! - F2. A trunk holds at most U/4 - 8 leaves — SQLite's own limit when it writes, kept
//!   so files stay readable by old SQLite versions (which accept up to U/4 - 2).
//! - F3. Allocation reuses a free page before growing the file.
//! - F4. The lock-byte page (`header::lock_byte_page`, the page at 1 GiB) is never
//!   allocated: growing the file onto it takes the page after it, as SQLite's
//!   allocateBtreePage does, so stock SQLite finds nothing of ours there. It is counted in
//!   the file's pages but belongs to nothing (check.rs skips it; it is never freed).

use crate::error::{PageNo, Result, StorageError};
use crate::header::{
    get_u32, lock_byte_page, put_u32, OFFSET_FREELIST_COUNT, OFFSET_FREELIST_TRUNK,
};
use crate::pages::PageWrite;

fn check_page<V: PageWrite + ?Sized>(v: &V, pgno: u32, what: &str) -> Result<PageNo> {
    if pgno < 2 || pgno > v.page_count() || pgno == lock_byte_page(v.page_size()) {
        return Err(StorageError::corrupt(
            PageNo(1),
            format!("freelist {what} page {pgno} out of range"),
        ));
    }
    Ok(PageNo(pgno))
}

/// Takes a page for new use: the last leaf of the first trunk, or the trunk itself when it
/// has no leaves, or a new page at the end of the file (F3). The page is zero-filled.
pub fn allocate<V: PageWrite + ?Sized>(v: &mut V) -> Result<PageNo> {
    let p1 = v.page(PageNo(1))?;
    let trunk = get_u32(&p1, OFFSET_FREELIST_TRUNK);
    let count = get_u32(&p1, OFFSET_FREELIST_COUNT);
    drop(p1);
    if trunk == 0 {
        let p = v.append_page()?;
        if p.0 == lock_byte_page(v.page_size()) {
            // F4: the lock-byte page stays in the file, unused.
            return v.append_page();
        }
        return Ok(p);
    }
    let trunk_no = check_page(v, trunk, "trunk")?;
    let t = v.page(trunk_no)?;
    let next = get_u32(&t, 0);
    let leaves = get_u32(&t, 4) as usize;
    let usable = v.usable_size();
    if leaves > usable / 4 - 2 {
        return Err(StorageError::corrupt(
            trunk_no,
            "freelist trunk holds too many leaves",
        ));
    }
    let count = count.checked_sub(1).ok_or_else(|| {
        StorageError::corrupt(PageNo(1), "freelist count is zero but a trunk exists")
    })?;
    let taken = if leaves > 0 {
        let leaf = get_u32(&t, 8 + 4 * (leaves - 1));
        drop(t);
        let leaf_no = check_page(v, leaf, "leaf")?;
        put_u32(v.page_mut(trunk_no)?, 4, (leaves - 1) as u32);
        leaf_no
    } else {
        drop(t);
        if next != 0 {
            check_page(v, next, "trunk")?;
        }
        put_u32(v.page_mut(PageNo(1))?, OFFSET_FREELIST_TRUNK, next);
        trunk_no
    };
    put_u32(v.page_mut(PageNo(1))?, OFFSET_FREELIST_COUNT, count);
    v.page_mut(taken)?.fill(0);
    Ok(taken)
}

/// Returns `pgno` to the freelist: as a leaf of the first trunk when it has room (F2),
/// otherwise as the new first trunk.
pub fn free<V: PageWrite + ?Sized>(v: &mut V, pgno: PageNo) -> Result<()> {
    check_page(v, pgno.0, "freed")?;
    let p1 = v.page(PageNo(1))?;
    let trunk = get_u32(&p1, OFFSET_FREELIST_TRUNK);
    let count = get_u32(&p1, OFFSET_FREELIST_COUNT);
    drop(p1);
    let max_leaves = v.usable_size() / 4 - 8;
    if trunk != 0 {
        let trunk_no = check_page(v, trunk, "trunk")?;
        let leaves = get_u32(&v.page(trunk_no)?, 4) as usize;
        if leaves < max_leaves {
            let t = v.page_mut(trunk_no)?;
            put_u32(t, 8 + 4 * leaves, pgno.0);
            put_u32(t, 4, (leaves + 1) as u32);
            put_u32(v.page_mut(PageNo(1))?, OFFSET_FREELIST_COUNT, count + 1);
            return Ok(());
        }
    }
    let t = v.page_mut(pgno)?;
    t.fill(0);
    put_u32(t, 0, trunk);
    let p1 = v.page_mut(PageNo(1))?;
    put_u32(p1, OFFSET_FREELIST_TRUNK, pgno.0);
    put_u32(p1, OFFSET_FREELIST_COUNT, count + 1);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::header::init_header;
    use crate::pages::PageRead;

    /// A view of `count` pages that stores only the pages written (page 1 and appended
    /// ones), so a file past 1 GiB costs nothing.
    struct Sparse {
        count: u32,
        pages: std::collections::HashMap<u32, Vec<u8>>,
    }

    impl crate::pages::PageRead for Sparse {
        fn page_size(&self) -> usize {
            4096
        }
        fn usable_size(&self) -> usize {
            4096
        }
        fn page_count(&self) -> u32 {
            self.count
        }
        fn page(&self, pgno: PageNo) -> Result<crate::pages::PageRef> {
            Ok(self
                .pages
                .get(&pgno.0)
                .cloned()
                .unwrap_or(vec![0; 4096])
                .into())
        }
    }

    impl PageWrite for Sparse {
        fn page_mut(&mut self, pgno: PageNo) -> Result<&mut [u8]> {
            Ok(self.pages.entry(pgno.0).or_insert_with(|| vec![0; 4096]))
        }
        fn append_page(&mut self) -> Result<PageNo> {
            self.count += 1;
            self.pages.insert(self.count, vec![0; 4096]);
            Ok(PageNo(self.count))
        }
        fn truncate(&mut self, n: u32) -> Result<()> {
            self.count = n;
            Ok(())
        }
        fn savepoint(&mut self) -> u32 {
            0
        }
        fn rollback_to(&mut self, _: u32) -> Result<()> {
            Ok(())
        }
        fn release(&mut self, _: u32) {}
    }

    #[test]
    fn growing_the_file_skips_the_lock_byte_page() {
        let lock = lock_byte_page(4096);
        assert_eq!(lock, 262_145, "SQLite's PENDING_BYTE_PAGE for 4 KiB pages");
        let mut v = Sparse {
            count: lock - 2,
            pages: Default::default(),
        };
        init_header(v.page_mut(PageNo(1)).unwrap(), 4096);
        assert_eq!(allocate(&mut v).unwrap(), PageNo(lock - 1));
        assert_eq!(allocate(&mut v).unwrap(), PageNo(lock + 1));
        assert_eq!(v.page_count(), lock + 1, "the lock page is counted, unused");
        assert_eq!(allocate(&mut v).unwrap(), PageNo(lock + 2));
        // Never freed either: a freelist naming it is corrupt.
        assert!(free(&mut v, PageNo(lock)).is_err());
    }
}
