//! A read view's memo of its snapshot's page images (`FileReadView`): 64 slots,
//! direct-mapped by page number, a mask of the filled ones, and the slot tables recycled
//! per thread.
//!
//! Why: a read view lives for one statement in autocommit mode, and a point SELECT touches
//! three or four pages. Allocating and clearing a 64-slot table, then visiting all 64 slots
//! to release them, was ~1.3k instructions per statement, more than the lookups it saves
//! (speedtest1 test 510 through the shell, callgrind: `begin_read` 1.17k and the read
//! view's drop 1.21k of a 52k statement; BENCHMARKS.md "stmtrun"). Now the end of a view
//! visits only the filled slots and hands the emptied table to the thread's next view.
//!
//! Invariants:
//! - R1. Bit i of `filled` is set iff slot i holds an image. Which image a slot holds is
//!   the memo.rs M1 rule: one view, one snapshot, so a memoized image is what a fetch
//!   would return.
//! - R2. A table on a thread's spare list has `SLOTS` slots, all empty: a new view starts
//!   with an empty memo, whichever view (of whichever database) used the table before.
//! - R3. A thread keeps at most `SPARE_TABLES_MAX` tables (1 KiB each).

use super::buffers;
use crate::pages::PageRef;
use std::cell::RefCell;

/// Slots per view (at most 64: `filled` is a `u64`).
const SLOTS: usize = 64;
const _: () = assert!(SLOTS <= 64);

/// Tables kept per thread (R3): one per read view a thread has open at a time (a
/// connection's main database and its attached ones).
const SPARE_TABLES_MAX: usize = 4;

type Slot = Option<(u32, PageRef)>;

thread_local! {
    static SPARE_TABLES: RefCell<Vec<Vec<Slot>>> = const { RefCell::new(Vec::new()) };
}

pub(super) struct ReadMemo {
    slots: Vec<Slot>,
    /// R1.
    filled: u64,
}

impl ReadMemo {
    /// An empty memo, on a table this thread's previous views emptied when there is one
    /// (R2).
    pub(super) fn new() -> ReadMemo {
        let spare = SPARE_TABLES
            .try_with(|s| s.try_borrow_mut().ok()?.pop())
            .ok()
            .flatten();
        ReadMemo {
            slots: spare.unwrap_or_else(|| vec![None; SLOTS]),
            filled: 0,
        }
    }

    /// The memoized image of page `pgno`, if any.
    pub(super) fn get(&self, pgno: u32) -> Option<PageRef> {
        match &self.slots[pgno as usize % SLOTS] {
            Some((no, img)) if *no == pgno => Some(img.clone()),
            _ => None,
        }
    }

    /// Memoizes `img` as page `pgno`, in place of whatever its slot held.
    pub(super) fn put(&mut self, pgno: u32, img: PageRef) {
        let i = pgno as usize % SLOTS;
        self.slots[i] = Some((pgno, img));
        self.filled |= 1 << i;
    }
}

impl Drop for ReadMemo {
    /// Releases the filled slots only (R1); the memo may hold the last reference of
    /// versions pruned meanwhile (buffers.rs). The emptied table goes to the thread's
    /// spare list (R2, R3), else to the allocator.
    fn drop(&mut self) {
        let mut bits = self.filled;
        while bits != 0 {
            let i = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            if let Some((_, img)) = self.slots[i].take() {
                buffers::recycle(img);
            }
        }
        self.filled = 0;
        debug_assert!(self.slots.iter().all(Option::is_none));
        let slots = std::mem::take(&mut self.slots);
        let _ = SPARE_TABLES.try_with(move |s| {
            if let Ok(mut s) = s.try_borrow_mut() {
                if s.len() < SPARE_TABLES_MAX {
                    s.push(slots);
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn img(b: u8) -> PageRef {
        PageRef::from(vec![b; 16])
    }

    #[test]
    fn a_table_comes_back_empty_and_slots_are_replaced() {
        SPARE_TABLES.with(|s| s.borrow_mut().clear());
        let mut m = ReadMemo::new();
        m.put(3, img(3));
        m.put(3 + SLOTS as u32, img(7));
        let held = img(5);
        m.put(5, held.clone());
        // Same slot: the later page replaced the earlier one.
        assert!(m.get(3).is_none());
        assert_eq!(m.get(3 + SLOTS as u32).as_deref().map(|v| v[0]), Some(7));
        assert_eq!(m.get(5).as_deref().map(|v| v[0]), Some(5));
        assert!(m.get(6).is_none());
        drop(m);
        // The view's references are released.
        assert_eq!(Arc::strong_count(&held), 1);
        assert_eq!(SPARE_TABLES.with(|s| s.borrow().len()), 1);
        // R2: the next view reuses the table and sees none of the previous view's pages.
        let m = ReadMemo::new();
        assert_eq!(SPARE_TABLES.with(|s| s.borrow().len()), 0);
        for pgno in [3, 5, 3 + SLOTS as u32] {
            assert!(m.get(pgno).is_none());
        }
        assert!(m.slots.iter().all(Option::is_none));
        assert_eq!(m.slots.len(), SLOTS);
    }

    #[test]
    fn a_thread_keeps_at_most_spare_tables_max() {
        SPARE_TABLES.with(|s| s.borrow_mut().clear());
        let memos: Vec<ReadMemo> = (0..SPARE_TABLES_MAX + 2).map(|_| ReadMemo::new()).collect();
        drop(memos);
        assert_eq!(SPARE_TABLES.with(|s| s.borrow().len()), SPARE_TABLES_MAX);
    }
}
