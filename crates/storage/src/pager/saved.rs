//! A write view's memo of the pages `page_mut` already made private and saved for the
//! innermost savepoint, so that writing such a page again is one lookup (the private map)
//! instead of three (the savepoint's saved-image map, a `contains_key`, then the write).
//!
//! Why: `page_mut` on a page the transaction had already copied cost ~650 instructions,
//! 99M of 934M in speedtest1 test 270's excerpt (BENCHMARKS.md, btree branch): a B-tree
//! write touches the same leaf, its parents and page 1 several times per row.
//!
//! Invariants:
//! - W1. A page number in the memo is in the view's private map, and the innermost open
//!   savepoint (if any) holds its saved image (P4). So `page_mut` may skip `remember` and
//!   the base fetch for it; it still copies the image when a reader holds it (P2).
//! - W2. Whatever could break W1 clears the memo: opening a savepoint (its saved map starts
//!   empty), `rollback_to` (it removes or replaces private pages), `release`, `truncate`.
//!   Only `page_mut` and `append_page` fill it, after doing what W1 says.

/// Slots, direct-mapped by page number: a row write touches page 1, a root, one or two
/// interior pages, a leaf and its overflow or sibling pages.
const SLOTS: usize = 16;

#[derive(Default)]
pub(super) struct SavedMemo {
    /// Page number per slot; 0 (never a page) is empty.
    slots: [u32; SLOTS],
}

impl SavedMemo {
    /// Whether `pgno` is known private and saved for the innermost savepoint (W1).
    #[inline]
    pub(super) fn contains(&self, pgno: u32) -> bool {
        self.slots[pgno as usize % SLOTS] == pgno
    }

    /// Records that `pgno` is now private and saved for the innermost savepoint.
    #[inline]
    pub(super) fn note(&mut self, pgno: u32) {
        self.slots[pgno as usize % SLOTS] = pgno;
    }

    /// Forgets every page (W2).
    #[inline]
    pub(super) fn clear(&mut self) {
        self.slots = [0; SLOTS];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_and_clears() {
        let mut m = SavedMemo::default();
        assert!(!m.contains(5));
        m.note(5);
        assert!(m.contains(5));
        m.note(5 + SLOTS as u32);
        assert!(!m.contains(5), "a slot holds one page");
        assert!(m.contains(5 + SLOTS as u32));
        m.clear();
        assert!(!m.contains(5 + SLOTS as u32));
    }
}
