//! A write view's memo of its snapshot's page images: the pages a transaction reads again
//! and again (page 1, the root and interior pages of every descent, each changed page's
//! base in `prepare`) are fetched from the shared cache once per view.
//!
//! Why: every cache fetch takes the page's shard mutex and bumps the image's `Arc` count,
//! and page 1 and the roots are fetched by every transaction of every thread, so with two
//! writers those cache lines move between the cores on each fetch. Measured
//! (bdb_update --threads 2 --begin concurrent, sync=off, perf, before): `Cache::lookup`
//! was 5–7% of the writers' CPU; a concurrent commit fetched its pages ~10 times (the
//! replayed descent, page 1 for its stamp, each base again for the diff, the rebase
//! check).
//!
//! Invariants:
//! - M1. A memo belongs to one view and its one snapshot `s`; for a fixed `s` a page's
//!   image never changes (cache C2), so a memoized image is what a fetch would return.
//!   A view's snapshot never changes (a rebase makes a new view, rebase.rs R3); a view
//!   rebased by its pages onto `t` starts with the old memo's images of the pages other
//!   than page 1 (`carried`): R2 found that no commit in `(s, t]` wrote those pages, so
//!   their images at `t` are the ones at `s`.
//! - M2. The memo holds only snapshot images, never the view's private copies, so a
//!   private page's base stays the snapshot's image (the diff of `prepare`, P2).

use super::buffers;
use crate::error::Result;
use crate::pages::PageRef;
use std::cell::RefCell;

/// Slots, direct-mapped by page number: a one-row write touches page 1, a root, one or two
/// interior pages and a leaf.
const SLOTS: usize = 8;

pub(super) struct SnapshotMemo {
    slots: RefCell<[Option<(u32, PageRef)>; SLOTS]>,
}

impl Default for SnapshotMemo {
    fn default() -> Self {
        SnapshotMemo {
            slots: RefCell::new(std::array::from_fn(|_| None)),
        }
    }
}

impl SnapshotMemo {
    /// Page `pgno` of the view's snapshot: memoized, else `fetch`ed and memoized (M1).
    pub(super) fn get_or_fetch(
        &self,
        pgno: u32,
        fetch: impl FnOnce() -> Result<PageRef>,
    ) -> Result<PageRef> {
        let slot = pgno as usize % SLOTS;
        if let Ok(slots) = self.slots.try_borrow() {
            if let Some((no, img)) = &slots[slot] {
                if *no == pgno {
                    return Ok(img.clone());
                }
            }
        }
        let img = fetch()?;
        if let Ok(mut slots) = self.slots.try_borrow_mut() {
            if let Some((_, old)) = slots[slot].replace((pgno, img.clone())) {
                buffers::recycle(old);
            }
        }
        Ok(img)
    }
}

impl SnapshotMemo {
    /// The memo of a view rebased by its pages (M1): this one's images of pages other than
    /// page 1, whose stamp fields commits change (pages P3), moved out (a memo is only a
    /// cache: the old view fetches them again if it is used again, after a `Busy`; a
    /// clone was two reference-count writes per image). Without them the rebased view's
    /// `prepare` fetched each changed page's base from the shared cache again.
    pub(super) fn carried(&self) -> SnapshotMemo {
        let carried = SnapshotMemo::default();
        if let (Ok(mut from), Ok(mut to)) =
            (self.slots.try_borrow_mut(), carried.slots.try_borrow_mut())
        {
            for (to, from) in to.iter_mut().zip(from.iter_mut()) {
                if from.as_ref().is_some_and(|(pgno, _)| *pgno != 1) {
                    *to = from.take();
                }
            }
        }
        carried
    }
}

impl Drop for SnapshotMemo {
    /// The memo may hold the last reference of versions pruned meanwhile (buffers.rs).
    fn drop(&mut self) {
        for (_, img) in self.slots.get_mut().iter_mut().filter_map(Option::take) {
            buffers::recycle(img);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn fetches_once_per_page_and_refetches_after_a_collision() {
        let memo = SnapshotMemo::default();
        let fetches = Cell::new(0);
        let fetch = |b: u8| {
            fetches.set(fetches.get() + 1);
            Ok(PageRef::from(vec![b; 16]))
        };
        assert_eq!(memo.get_or_fetch(1, || fetch(1)).unwrap()[0], 1);
        assert_eq!(memo.get_or_fetch(1, || fetch(9)).unwrap()[0], 1);
        assert_eq!(fetches.get(), 1);
        // Page 1 + SLOTS shares page 1's slot: it replaces it, and page 1 is fetched again.
        let other = 1 + SLOTS as u32;
        assert_eq!(memo.get_or_fetch(other, || fetch(2)).unwrap()[0], 2);
        assert_eq!(memo.get_or_fetch(1, || fetch(1)).unwrap()[0], 1);
        assert_eq!(fetches.get(), 3);
    }

    #[test]
    fn a_carried_memo_takes_every_image_but_page_1s() {
        let memo = SnapshotMemo::default();
        let fetches = Cell::new(0);
        let fetch = |b: u8| {
            fetches.set(fetches.get() + 1);
            Ok(PageRef::from(vec![b; 16]))
        };
        for p in 1..=3u32 {
            memo.get_or_fetch(p, || fetch(p as u8)).unwrap();
        }
        let carried = memo.carried();
        for p in 2..=3u32 {
            assert_eq!(carried.get_or_fetch(p, || fetch(0)).unwrap()[0], p as u8);
        }
        assert_eq!(fetches.get(), 3, "pages 2 and 3 carried");
        assert_eq!(carried.get_or_fetch(1, || fetch(9)).unwrap()[0], 9);
        assert_eq!(memo.get_or_fetch(1, || fetch(0)).unwrap()[0], 1);
        assert_eq!(memo.get_or_fetch(2, || fetch(8)).unwrap()[0], 8);
        assert_eq!(
            fetches.get(),
            5,
            "page 1 not carried; page 2 fetched again by the old memo"
        );
    }
}
