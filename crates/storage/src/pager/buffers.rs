//! Page buffers recycled per thread: a page image whose last reference a thread drops on
//! the hot paths (a version pruned from the cache, a read view's memo at its end) goes to
//! that thread's short list instead of to the allocator, and the next copy-on-write of a
//! page in that thread (`FileWriteView::page_mut`) takes it instead of allocating.
//!
//! Why: glibc's per-thread cache (tcache) stops at ~1 KiB, so a 4 KiB image is allocated
//! from and freed into an arena under the arena's lock. With two concurrent writers, the
//! version a commit prunes was allocated by the other thread, so each free locks the other
//! thread's arena while it allocates: contention, futex wake-ups and cache lines moving
//! between the cores. Measured (bdb_update --threads 2 --begin concurrent, sync=off,
//! perf, before): malloc and free were ~12% of the writers' CPU, glibc's arena-lock
//! wake-ups another ~2%. A thread's list keeps memory another thread allocated; in steady
//! state each thread's list refills from the versions it prunes.
//!
//! Invariants:
//! - U1. A buffer enters a list only when its `Arc` was unique (`Arc::try_unwrap`): no
//!   one can still read it, so handing it out for writing breaks no snapshot (cache C2).
//! - U2. A list holds at most `SPARE_MAX` buffers (bounded memory per thread), of any
//!   page size; a take checks the capacity and never hands out a buffer of another size.
//! - U3. A buffer taken is fully overwritten before anyone reads it (`copy_of` copies a
//!   whole page into it).

use crate::pages::PageRef;
use std::cell::RefCell;
use std::sync::Arc;

/// Buffers kept per thread (U2): a commit copies a few pages (page 1, the leaf, parents),
/// and prunes about as many; a few more absorb bursts.
const SPARE_MAX: usize = 16;

thread_local! {
    static SPARE: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
}

/// A private copy of `src` in a recycled buffer of its size if this thread has one (U2,
/// U3), else a fresh allocation.
pub(super) fn copy_of(src: &[u8]) -> Vec<u8> {
    let reused = SPARE
        .try_with(|s| {
            let mut s = s.try_borrow_mut().ok()?;
            match s.last() {
                Some(b) if b.capacity() == src.len() => s.pop(),
                _ => None,
            }
        })
        .ok()
        .flatten();
    match reused {
        Some(mut b) => {
            b.clear();
            b.extend_from_slice(src);
            b
        }
        None => src.to_vec(),
    }
}

/// Drops `img`; if this was its last reference, keeps its buffer for this thread's next
/// `copy_of` (U1, U2).
pub(super) fn recycle(img: PageRef) {
    let Ok(buf) = Arc::try_unwrap(img) else {
        return;
    };
    if buf.capacity() != buf.len() || buf.is_empty() {
        return;
    }
    // A full list, or a thread being torn down: the buffer is freed as before.
    let _ = SPARE.try_with(|s| {
        if let Ok(mut s) = s.try_borrow_mut() {
            if s.len() < SPARE_MAX {
                s.push(buf);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_unique_buffers_of_the_right_size_are_reused() {
        // Drain whatever this test thread's list holds.
        SPARE.with(|s| s.borrow_mut().clear());
        let shared: PageRef = Arc::new(vec![1u8; 512]);
        let reader = Arc::clone(&shared);
        recycle(shared);
        // U1: a reader still holds it, so it was not kept.
        assert_eq!(SPARE.with(|s| s.borrow().len()), 0);
        assert_eq!(reader[0], 1);
        recycle(reader);
        assert_eq!(SPARE.with(|s| s.borrow().len()), 1);
        // U2: another page size allocates afresh and leaves the buffer listed.
        let other = copy_of(&[9u8; 1024]);
        assert_eq!(other, vec![9u8; 1024]);
        assert_eq!(SPARE.with(|s| s.borrow().len()), 1);
        // U3: the reused buffer holds exactly the copied page.
        let copy = copy_of(&[5u8; 512]);
        assert_eq!(copy, vec![5u8; 512]);
        assert_eq!(SPARE.with(|s| s.borrow().len()), 0);
        for _ in 0..SPARE_MAX + 5 {
            recycle(Arc::new(vec![0u8; 512]));
        }
        assert_eq!(SPARE.with(|s| s.borrow().len()), SPARE_MAX);
    }
}
