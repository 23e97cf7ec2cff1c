//! A thread's memo of the page images every one of its descents reads — page 1 and the
//! interior pages of B-trees — kept across its views and transactions, each image checked
//! still current by the cache's write marks (cache C15) instead of fetched from the shared
//! cache again.
//!
//! Why: a view's own memo (memo.rs, read_memo.rs) fetches these pages once per view, and a
//! fetch takes the page's shard mutex, sets the entry's reference bit and bumps the image's
//! `Arc` count: three writes to cache lines the other threads' fetches of the same pages
//! write too. Measured (bdb_update --threads 1 → 2 --begin concurrent, sync=off, perf,
//! samples per 1,000 commits): `Cache::lookup_or_spare` 1.95 → 4.24, 8% of the 2-thread
//! profile, for four fetches per transaction of which three (page 1, the root, an interior
//! page) are the same pages in every transaction of both threads. So once an image is
//! reused here it is replaced by this thread's own copy: from then on its hits write only
//! this thread's cache lines.
//!
//! Invariants:
//! - H1. A slot holds (cache id, page number, `seq`, image): the image snapshot `seq` of
//!   that cache sees (read through `Inner::read_page`, or a copy of it). Cache ids are never
//!   reused (cache `NEXT_CACHE_ID`), so a slot serves only the cache it came from.
//! - H2. `get` hands the image out to a view of snapshot `s` only if `seq <= s` and no
//!   commit after `seq` wrote the page (`Cache::written_after`, C15): then the page's image
//!   at `s` is its image at `seq`. A page written meanwhile, or a view on an older snapshot,
//!   misses and fetches as before.
//! - H3. Copies are made only of images a later `get` reused (a page that changes between
//!   fetches is never copied), into this thread's recycled buffers (buffers.rs), and only
//!   the copy is handed out from then on. A slot's image is never written: a view that
//!   writes the page copies it first (pager P2: the slot holds a reference, so the
//!   view's is never unique).
//! - H4. Only page 1 and interior pages are kept (`worth_keeping`): a leaf is rarely read
//!   by two transactions in a row, and keeping leaves would evict the pages that are. A
//!   slot whose page was hit since its last collision and is still current keeps it once
//!   against a new page (second chance); a stale one is replaced at once.
//! - H5. A thread holds at most `SLOTS` images (shared with the cache until copied).

use super::buffers;
use super::cache::Cache;
use crate::error::PageNo;
use crate::pages::PageRef;
use std::cell::RefCell;
use std::sync::Arc;

/// Slots, direct-mapped by page number: bdb_update's 10,000-row table has a root and ~25
/// interior pages, which 128 slots hold with few collisions.
const SLOTS: usize = 128;

struct Slot {
    cache_id: u64,
    pgno: u32,
    /// The snapshot the image was read for (H1, H2).
    seq: u64,
    img: PageRef,
    /// `img` is this thread's copy (H3).
    own: bool,
    /// Hit since the last collision (H4).
    referenced: bool,
}

thread_local! {
    static MEMO: RefCell<Vec<Option<Slot>>> = const { RefCell::new(Vec::new()) };
}

/// H4: page 1, and the pages whose B-tree header (at offset 100 on page 1, else 0) marks
/// an interior page (index 0x02, table 0x05).
fn worth_keeping(pgno: u32, img: &[u8]) -> bool {
    pgno == 1 || matches!(img.first(), Some(0x02 | 0x05))
}

/// Page `pgno` of `cache` as snapshot `seq` sees it, if this thread kept it and no commit
/// since changed it (H2).
pub(super) fn get(cache: &Cache, pgno: u32, seq: u64) -> Option<PageRef> {
    MEMO.try_with(|m| {
        let mut m = m.try_borrow_mut().ok()?;
        let slot = m.get_mut(pgno as usize % SLOTS)?.as_mut()?;
        if slot.cache_id != cache.id()
            || slot.pgno != pgno
            || slot.seq > seq
            || cache.written_after(PageNo(pgno), slot.seq)
        {
            return None;
        }
        slot.referenced = true;
        if !slot.own {
            // H3: reused, so worth a copy of this thread's own.
            let copy = buffers::copy_of(&slot.img);
            buffers::recycle(std::mem::replace(&mut slot.img, copy));
            slot.own = true;
        }
        Some(Arc::clone(&slot.img))
    })
    .ok()
    .flatten()
}

/// Keeps `img`, page `pgno` of `cache` at snapshot `seq`, if it is worth keeping (H4).
pub(super) fn put(cache: &Cache, pgno: u32, seq: u64, img: &PageRef) {
    if !worth_keeping(pgno, img) {
        return;
    }
    let _ = MEMO.try_with(|m| {
        let Ok(mut m) = m.try_borrow_mut() else {
            return;
        };
        if m.is_empty() {
            m.resize_with(SLOTS, || None);
        }
        let slot = &mut m[pgno as usize % SLOTS];
        if let Some(old) = slot.as_mut() {
            // H4. Another cache's page goes at once: a thread that moved on to another
            // database does not keep a closed one's pages.
            let keeps = old.cache_id == cache.id()
                && old.pgno != pgno
                && old.referenced
                && !cache.written_after(PageNo(old.pgno), old.seq);
            if keeps {
                old.referenced = false;
                return;
            }
        }
        let new = Slot {
            cache_id: cache.id(),
            pgno,
            seq,
            img: Arc::clone(img),
            own: false,
            referenced: false,
        };
        if let Some(old) = slot.replace(new) {
            buffers::recycle(old.img);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(kind: u8, b: u8) -> PageRef {
        let mut v = vec![b; 64];
        v[0] = kind;
        PageRef::from(v)
    }

    fn interior(b: u8) -> PageRef {
        page(0x05, b)
    }

    fn publish(c: &Cache, seq: u64, pgno: u32) {
        c.publish(
            seq,
            1000,
            vec![(PageNo(pgno), None, interior(seq as u8))],
            None,
        );
    }

    #[test]
    fn a_reused_page_is_copied_once_and_served_until_written() {
        MEMO.with(|m| m.borrow_mut().clear());
        let c = Cache::new(0, 1000, 64);
        let img = interior(7);
        put(&c, 2, 0, &img);
        // H3: the first reuse makes this thread's copy; later hits hand out that copy.
        let first = get(&c, 2, 0).unwrap();
        assert_eq!(*first, *img);
        assert!(!Arc::ptr_eq(&first, &img));
        assert!(Arc::ptr_eq(&get(&c, 2, 3).unwrap(), &first));
        // H2: a commit writing page 2 ends it; one writing another page does not.
        publish(&c, 1, 3);
        assert!(get(&c, 2, 1).is_some());
        publish(&c, 2, 2);
        assert!(get(&c, 2, 2).is_none());
        // H2: an older snapshot than the image's misses.
        put(&c, 4, 2, &interior(4));
        assert!(get(&c, 4, 1).is_none());
        assert!(get(&c, 4, 2).is_some());
        // H1: another cache's slot serves nothing.
        let other = Cache::new(0, 1000, 64);
        assert!(get(&other, 4, 2).is_none());
        // H4: leaves are not kept; page 1 is, whatever its first byte.
        put(&c, 5, 2, &page(0x0d, 5));
        assert!(get(&c, 5, 2).is_none());
        put(&c, 1, 2, &page(0x53, 1));
        assert!(get(&c, 1, 2).is_some());
    }

    #[test]
    fn a_hit_page_keeps_its_slot_once_and_a_written_one_not_at_all() {
        MEMO.with(|m| m.borrow_mut().clear());
        let c = Cache::new(0, 1000, 64);
        let (a, b) = (6, 6 + SLOTS as u32);
        put(&c, a, 0, &interior(1));
        assert!(get(&c, a, 0).is_some());
        // H4: hit since it came, so `b` is turned away once.
        put(&c, b, 0, &interior(2));
        assert!(get(&c, b, 0).is_none());
        put(&c, b, 0, &interior(2));
        assert!(get(&c, a, 0).is_none());
        assert_eq!(get(&c, b, 0).unwrap()[1], 2);
        // `b` was hit, but written since: `a` takes the slot at once.
        publish(&c, 1, b);
        put(&c, a, 1, &interior(3));
        assert_eq!(get(&c, a, 1).unwrap()[1], 3);
    }
}
