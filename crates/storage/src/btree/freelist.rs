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

use crate::error::{PageNo, Result, StorageError};
use crate::header::{get_u32, put_u32, OFFSET_FREELIST_COUNT, OFFSET_FREELIST_TRUNK};
use crate::pages::PageWrite;

fn check_page<V: PageWrite + ?Sized>(v: &V, pgno: u32, what: &str) -> Result<PageNo> {
    if pgno < 2 || pgno > v.page_count() {
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
        return v.append_page();
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
