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
//! - U1. A buffer enters a list only when its `Arc` was unique (`Arc::get_mut`): no one
//!   can still read it, and no one can clone it (the list owns the only `Arc`), so handing
//!   it out for writing breaks no snapshot (cache C2).
//! - U2. A list holds at most `SPARE_MAX` buffers (bounded memory per thread), of any
//!   page size; a take checks the length and never hands out a buffer of another size.
//! - U3. A buffer taken is fully overwritten before anyone reads it (`copy_of` copies a
//!   whole page into it).
//! - U4. A commit's frame buffer is kept for the thread's next commit only after the frame
//!   was written to the log (`append_unsealed` copies it to the OS) or was dropped unwritten
//!   (`Prepared`'s drop: no one reads it), one buffer per thread
//!   of at most `FRAME_KEEP_MAX_BYTES`, and `FrameBuilder::new` empties it before building.
//!   (Measured: allocating it was ~500 of the ~36k instructions of a bdb_update CONCURRENT
//!   commit, callgrind, plus its free.)
//! - U5. Threads balance through one shared list (`SHARED`, at most `SHARED_MAX` buffers):
//!   a recycle that finds its thread's list full moves half of it there, and a take that
//!   finds no buffer of its size in its thread's list first moves up to half a list of
//!   buffers of that size from there. Both only `try_lock` it (no thread waits for another's transfer) and move a
//!   batch per lock, so the shared mutex's cache line moves once per `SPARE_MAX / 2`
//!   buffers. U1–U3 hold for what moves: only buffers no one can read enter, each of
//!   them whole, and a take still checks the size.
//!   Why: with two concurrent writers, one thread prunes most of the old versions (the
//!   releases that sweep, cache C12, fall to it) while the other copies as many pages:
//!   one list overflowed into `free` while the other was empty and called `malloc`, the
//!   4 KiB buffers crossing glibc's arenas (bdb_update --threads 2 --begin concurrent,
//!   sync=off, perf: `copy_of`'s malloc and the prunes' frees ~3.5% of the samples).

use crate::pages::PageRef;
use std::cell::RefCell;
use std::sync::{Arc, Mutex};

/// Buffers kept per thread (U2): a commit copies a few pages (page 1, the leaf, parents),
/// and prunes about as many; a few more absorb bursts.
const SPARE_MAX: usize = 16;

/// Buffers moved between threads (U5).
const SHARED_MAX: usize = 64;

static SHARED: Mutex<Vec<PageRef>> = Mutex::new(Vec::new());

thread_local! {
    static SPARE: RefCell<Vec<PageRef>> = const { RefCell::new(Vec::new()) };
    /// The last commit's frame buffer (U4).
    static FRAME: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// A frame buffer kept past this capacity would hold a large commit's memory for good.
const FRAME_KEEP_MAX_BYTES: usize = 64 << 10;

/// A private copy of `src` (its `Arc` unique) in a recycled buffer of its size if this
/// thread has one (U2, U3), else a fresh allocation.
pub(super) fn copy_of(src: &[u8]) -> PageRef {
    let reused = SPARE
        .try_with(|s| {
            let mut s = s.try_borrow_mut().ok()?;
            if s.last().is_none_or(|b| b.len() != src.len()) {
                // U5: a batch of buffers of this size from the shared list.
                let Ok(mut shared) = SHARED.try_lock() else {
                    return None;
                };
                let want = (SPARE_MAX / 2).min(SPARE_MAX - s.len());
                let mut i = shared.len();
                let mut moved = 0;
                while i > 0 && moved < want {
                    i -= 1;
                    if shared[i].len() == src.len() {
                        s.push(shared.swap_remove(i));
                        moved += 1;
                    }
                }
            }
            match s.last() {
                Some(b) if b.len() == src.len() => s.pop(),
                _ => None,
            }
        })
        .ok()
        .flatten();
    let Some(mut img) = reused else {
        return PageRef::from(src);
    };
    match Arc::get_mut(&mut img) {
        Some(buf) => buf.copy_from_slice(src),
        // U1: a listed buffer is unique; were one not, a fresh copy is still correct.
        None => return PageRef::from(src),
    }
    img
}

/// Drops `img`; if this was its last reference, keeps its buffer for this thread's next
/// `copy_of` (U1, U2).
pub(super) fn recycle(mut buf: PageRef) {
    if Arc::get_mut(&mut buf).is_none() || buf.is_empty() {
        return;
    }
    // A thread being torn down, or both lists full: the buffer is freed as before.
    let _ = SPARE.try_with(|s| {
        let Ok(mut s) = s.try_borrow_mut() else {
            return;
        };
        if s.len() >= SPARE_MAX {
            // U5: half of the list to the shared one, as room allows.
            let Ok(mut shared) = SHARED.try_lock() else {
                return;
            };
            let n = (SHARED_MAX - shared.len()).min(SPARE_MAX / 2);
            let from = s.len() - n;
            shared.extend(s.drain(from..));
        }
        if s.len() < SPARE_MAX {
            s.push(buf);
        }
    });
}

/// This thread's recycled frame buffer, empty if it has none (U4): a commit builds its
/// frame into it (`FrameBuilder::new`) instead of allocating one.
pub(super) fn take_frame() -> Vec<u8> {
    FRAME
        .try_with(|f| f.try_borrow_mut().map(|mut f| std::mem::take(&mut *f)))
        .ok()
        .and_then(|r| r.ok())
        .unwrap_or_default()
}

/// Keeps `frame`, written to the log and no longer read, for this thread's next commit
/// (U4); one past `FRAME_KEEP_MAX_BYTES` is freed.
pub(super) fn recycle_frame(frame: Vec<u8>) {
    if frame.capacity() > FRAME_KEEP_MAX_BYTES {
        return;
    }
    let _ = FRAME.try_with(|f| {
        if let Ok(mut f) = f.try_borrow_mut() {
            *f = frame;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    // Sizes no page has, so that buffers other tests leave in the shared list (U5) never
    // match the ones these tests take.
    const SIZE: usize = 520;
    const OTHER_SIZE: usize = 1000;

    fn listed(size: usize) -> usize {
        SPARE.with(|s| s.borrow().iter().filter(|b| b.len() == size).count())
    }

    #[test]
    fn only_unique_buffers_of_the_right_size_are_reused() {
        // Drain whatever this test thread's list holds.
        SPARE.with(|s| s.borrow_mut().clear());
        let shared = PageRef::from(vec![1u8; SIZE]);
        let reader = Arc::clone(&shared);
        recycle(shared);
        // U1: a reader still holds it, so it was not kept.
        assert_eq!(listed(SIZE), 0);
        assert_eq!(reader[0], 1);
        recycle(reader);
        assert_eq!(listed(SIZE), 1);
        // U2: another page size allocates afresh and leaves the buffer listed.
        let other = copy_of(&[9u8; OTHER_SIZE]);
        assert_eq!(other[..], [9u8; OTHER_SIZE]);
        assert_eq!(listed(SIZE), 1);
        // U3: the reused buffer holds exactly the copied page.
        let copy = copy_of(&[5u8; SIZE]);
        assert_eq!(copy[..], [5u8; SIZE]);
        assert_eq!(listed(SIZE), 0);
        for _ in 0..SPARE_MAX + 5 {
            recycle(PageRef::from(vec![0u8; SIZE]));
            assert!(SPARE.with(|s| s.borrow().len()) <= SPARE_MAX);
        }
        SPARE.with(|s| s.borrow_mut().clear());
    }

    #[test]
    fn a_full_list_hands_a_batch_to_a_thread_without_buffers() {
        const BATCH_SIZE: usize = 1048;
        // U5: room in the shared list, whatever other tests left there (a cache of
        // buffers: dropping them changes nothing but allocations).
        SHARED.lock().unwrap().clear();
        let given: Vec<usize> = std::thread::spawn(|| {
            (0..=SPARE_MAX)
                .map(|_| {
                    let b = PageRef::from(vec![7u8; BATCH_SIZE]);
                    let at = b.as_ptr() as usize;
                    recycle(b);
                    at
                })
                .collect()
        })
        .join()
        .unwrap();
        let moved = SHARED
            .lock()
            .unwrap()
            .iter()
            .filter(|b| b.len() == BATCH_SIZE)
            .count();
        assert_eq!(moved, SPARE_MAX / 2, "half a list moved at the overflow");
        // A thread with none takes the batch: its copy is in one of them.
        let (at, copy, kept) = std::thread::spawn(|| {
            let copy = copy_of(&[3u8; BATCH_SIZE]);
            (copy.as_ptr() as usize, copy, listed(BATCH_SIZE))
        })
        .join()
        .unwrap();
        assert!(
            given.contains(&at),
            "a fresh allocation, not a moved buffer"
        );
        assert_eq!(copy[..], [3u8; BATCH_SIZE]);
        assert_eq!(kept, SPARE_MAX / 2 - 1);
    }

    #[test]
    fn a_frame_buffer_is_reused_once_and_only_up_to_its_bound() {
        let _ = take_frame();
        let mut f = Vec::with_capacity(1000);
        f.extend_from_slice(&[3u8; 600]);
        let at = f.as_ptr();
        recycle_frame(f);
        // U4: the same allocation comes back once, then the thread has none.
        let back = take_frame();
        assert_eq!(back.as_ptr(), at);
        assert!(take_frame().capacity() == 0);
        recycle_frame(Vec::with_capacity(FRAME_KEEP_MAX_BYTES + 1));
        assert_eq!(take_frame().capacity(), 0);
    }
}
