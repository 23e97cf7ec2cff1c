//! Rebasing a detached write view by its pages (pages.rs P6): a concurrent transaction
//! whose snapshot went stale keeps its private pages when no commit since touched a page
//! it used, instead of replaying its writes on a fresh view (concurrent.rs C7).
//!
//! Why: with two concurrent writers on two cores, most commits find their snapshot stale
//! (the other thread committed meanwhile), so most replayed their writes — a second
//! B-tree descent and page copy, and a second diff of the page against its base. Measured
//! (bdb_update --threads 2 --begin concurrent, sync=off, perf): rebases were 11% of the
//! writers' CPU, 78% of commits rebased.
//!
//! Invariants:
//! - R1. A detached view records its *footprint*: every page number it read (`page`),
//!   copied for writing (`page_mut`) or appended, up to `FOOTPRINT_PAGES_MAX` (past that,
//!   or after a `truncate`, it is marked overflowed and never rebased by pages).
//! - R2. `rebased` returns a view on the latest snapshot `t` only if `t`'s page count
//!   equals the view's snapshot's, page 1 at `t` equals page 1 at the view's snapshot `s`
//!   outside the change counter (offset 24) and version-valid-for (92) that every commit
//!   stamps (P3), and no other footprint page's write mark is above `s` (cache C15: `t`
//!   is registered before the marks are read, so they cover every commit up to `t`; a
//!   mark shared with another page only costs a replay). (The shard lookups of each
//!   footprint page's newest version were ~1% of the 2-thread samples, perf.) Then every
//!   page the transaction's B-tree operations read has the same bytes at `t` as at `s`,
//!   so replaying them at `t` would read what they read and write what they wrote: the
//!   private pages, which the new view takes as they are (shared `Arc`s, copied on write).
//! - R3. The new view has no savepoints and no prepared frame (its bases changed: page 1's
//!   stamp); it inherits the footprint, so it can be rebased again by the same rule, and
//!   the snapshot images the old view memoized of pages other than page 1, moved over
//!   (memo.rs M1: by R2 they are the images at `t`).
//!   The caller still validates keys against the commits in `(s, t]` (C3): R2 is about
//!   the pages being right, not about the reads being serializable.

use super::{FileWriteView, InProgress};
use crate::error::{PageNo, Result};
use crate::header::{OFFSET_CHANGE_COUNTER, OFFSET_VERSION_VALID_FOR};
use crate::pages::WriteView;
use std::cell::RefCell;
use std::collections::BTreeMap;

/// Pages a footprint records before it gives up (R1): a transaction that touched more is
/// large enough that a replay is not what dominates its cost.
const FOOTPRINT_PAGES_MAX: usize = 256;

/// R1. The page numbers are kept sorted in a vector, not a hash map: a transaction
/// touches a handful of pages, and a map's first insert, growth and drop were ~1k of a
/// bdb_update CONCURRENT commit's ~28k instructions (callgrind), on every commit; a binary
/// search in at most `FOOTPRINT_PAGES_MAX` numbers is cheaper than a hash at these sizes.
#[derive(Clone, Default)]
pub(super) struct Footprint {
    pages: Vec<u32>,
    overflowed: bool,
}

impl Footprint {
    pub(super) fn note(&mut self, pgno: u32) {
        if self.overflowed {
            return;
        }
        let Err(at) = self.pages.binary_search(&pgno) else {
            return;
        };
        if self.pages.len() >= FOOTPRINT_PAGES_MAX {
            self.give_up();
            return;
        }
        self.pages.insert(at, pgno);
    }

    pub(super) fn give_up(&mut self) {
        self.overflowed = true;
        self.pages = Vec::new();
    }
}

/// Page 1 images equal outside the fields every commit stamps (R2).
fn same_outside_stamp(a: &[u8], b: &[u8]) -> bool {
    let (c, v) = (OFFSET_CHANGE_COUNTER, OFFSET_VERSION_VALID_FOR);
    a.len() == b.len()
        && a.len() >= v + 4
        && a[..c] == b[..c]
        && a[c + 4..v] == b[c + 4..v]
        && a[v + 4..] == b[v + 4..]
}

impl FileWriteView {
    /// R2, R3: this view's pages on the latest snapshot, or `None`.
    pub(super) fn rebased(&self) -> Result<Option<Box<dyn WriteView>>> {
        let Some(footprint) = self.footprint.as_ref().map(RefCell::borrow) else {
            return Ok(None);
        };
        if footprint.overflowed {
            return Ok(None);
        }
        let inner = self.inner();
        inner.check_writable()?;
        let (s, count) = (self.snap.seq, self.snap.page_count);
        let snap = inner.register_snapshot();
        if snap.seq == s || snap.page_count != count {
            return Ok(None);
        }
        for &pgno in &footprint.pages {
            if pgno == 1 {
                let old = self.base_page(PageNo(1))?;
                let new = inner.read_page(snap.seq, count, PageNo(1))?;
                if !same_outside_stamp(&old, &new) {
                    return Ok(None);
                }
            } else if inner.cache.written_after(PageNo(pgno), s) {
                return Ok(None);
            }
        }
        let private: BTreeMap<u32, _> = self.private.clone();
        Ok(Some(Box::new(FileWriteView {
            in_progress: InProgress::new(inner),
            snap,
            writer: None,
            page_count: self.page_count,
            private,
            savepoints: Vec::new(),
            next_savepoint: 0,
            synchronous: self.synchronous,
            prepared: None,
            footprint: Some(RefCell::new(footprint.clone())),
            base: self.base.carried(),
            saved: super::saved::SavedMemo::default(),
            spill: super::spill::Spill::new(None),
            direct_above: None,
        })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamp_fields_are_ignored_and_nothing_else() {
        let a = vec![7u8; 512];
        let mut b = a.clone();
        b[OFFSET_CHANGE_COUNTER + 3] = 1;
        b[OFFSET_VERSION_VALID_FOR] = 9;
        assert!(same_outside_stamp(&a, &b));
        for off in [0, OFFSET_CHANGE_COUNTER + 4, 28, 40, 100, 511] {
            let mut c = b.clone();
            c[off] ^= 1;
            assert!(!same_outside_stamp(&a, &c), "offset {off}");
        }
    }

    #[test]
    fn footprint_gives_up_past_its_bound() {
        let mut f = Footprint::default();
        for p in 0..FOOTPRINT_PAGES_MAX as u32 {
            f.note(p + 1);
            f.note(1);
        }
        assert!(!f.overflowed);
        f.note(1);
        assert!(!f.overflowed);
        f.note(100_000);
        assert!(f.overflowed && f.pages.is_empty());
    }
}
