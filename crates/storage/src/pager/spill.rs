//! A write transaction's spill file: where a lock-holding write view moves its private
//! pages when it holds more than its bound (`PRAGMA cache_spill`, SQLite's pagerStress),
//! so that a transaction of any size runs in memory bounded by the page cache.
//!
//! The file is anonymous (`tempfile::tempfile`: created unlinked, gone with the view or the
//! process) and holds nothing durable: a crash or a rollback simply loses it. The view
//! keeps in memory only the index, 4 bytes a page, and a checksum and a reference count a
//! slot, 8 bytes.
//!
//! Invariants (cited by pager/mod.rs and the tests):
//! - S1. A page of the view is resident (`FileWriteView::private`) or spilled (`pages`
//!   here), never both; its image is the same whichever holds it.
//! - S2. A slot's bytes never change while anything refers to it: the index (one
//!   reference) and each savepoint that saved the page's image in it (one each,
//!   `SavedImage::Spilled`). A page written again gets a new slot; a slot is reused only
//!   once its count is back to zero, so a savepoint's image survives later spills.
//! - S3. Every slot is read back through its checksum (crc32 of the image, kept in
//!   memory): a damaged or short read gives `Corrupt`, never a wrong page or a panic.
//! - S4. Page 1 and the pages the view used last (`Recent`) are never chosen for a spill:
//!   page 1 because the commit stamps its page count in place, the recent ones because a
//!   B-tree operation goes back to the pages of its descent.

use crate::error::{PageNo, Result, StorageError};
use crate::pages::PageRef;
use std::cell::Cell;
use std::collections::BTreeMap;
use std::fs::File;
use std::os::unix::fs::FileExt;

/// Pages a view used last that a spill leaves resident (S4): a descent of a few trees
/// (a table and its indexes) at once.
pub(super) const RECENT_PAGES: usize = 16;

/// The fewest private pages a view keeps before it spills, whatever the cache's bound:
/// at least the recent pages plus room for a batch.
pub(super) const SPILL_PAGES_MIN: usize = 2 * RECENT_PAGES;

/// A savepoint's copy of a page's private state when it was taken (pages.rs P4).
pub(super) enum SavedImage {
    /// The page was not private: a rollback makes it the snapshot's again.
    Absent,
    /// It was resident with this image.
    Mem(PageRef),
    /// It was spilled in this slot (S2: the savepoint holds a reference).
    Spilled(u32),
}

/// The page numbers a view used last (S4), a ring written on every page access.
pub(super) struct Recent {
    ring: [Cell<u32>; RECENT_PAGES],
    next: Cell<usize>,
}

impl Default for Recent {
    fn default() -> Self {
        Recent {
            ring: std::array::from_fn(|_| Cell::new(0)),
            next: Cell::new(0),
        }
    }
}

impl Recent {
    #[inline]
    pub(super) fn note(&self, pgno: u32) {
        let i = self.next.get();
        self.ring[i].set(pgno);
        self.next.set((i + 1) % RECENT_PAGES);
    }

    pub(super) fn contains(&self, pgno: u32) -> bool {
        self.ring.iter().any(|c| c.get() == pgno)
    }
}

/// The anonymous file and its slots.
struct SpillFile {
    file: File,
    page_size: usize,
    /// Per slot: crc32 of the image written there (S3).
    crcs: Vec<u32>,
    /// Per slot: references (S2); 0: free.
    refs: Vec<u32>,
    /// Free slots, reused before the file grows.
    free: Vec<u32>,
}

fn spill_error(op: &'static str, e: std::io::Error) -> StorageError {
    StorageError::Io {
        op,
        path: "<spill file>".into(),
        message: e.to_string(),
    }
}

impl SpillFile {
    fn create(page_size: usize) -> Result<SpillFile> {
        let file = tempfile::tempfile().map_err(|e| spill_error("create", e))?;
        Ok(SpillFile {
            file,
            page_size,
            crcs: Vec::new(),
            refs: Vec::new(),
            free: Vec::new(),
        })
    }

    fn offset(&self, slot: u32) -> u64 {
        slot as u64 * self.page_size as u64
    }

    /// Writes `img` into a free slot, which then has one reference.
    fn write(&mut self, img: &[u8]) -> Result<u32> {
        if img.len() != self.page_size {
            return Err(StorageError::misuse("spilled page of another size"));
        }
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                let s = u32::try_from(self.refs.len()).map_err(|_| StorageError::Full)?;
                self.crcs.push(0);
                self.refs.push(0);
                s
            }
        };
        if let Err(e) = self.file.write_all_at(img, self.offset(slot)) {
            self.free.push(slot);
            return Err(spill_error("write", e));
        }
        self.crcs[slot as usize] = crc32fast::hash(img);
        self.refs[slot as usize] = 1;
        Ok(slot)
    }

    /// The image in `slot`, checked against its checksum (S3); `pgno` names it in errors.
    fn read(&self, slot: u32, pgno: u32) -> Result<PageRef> {
        let bad = |reason: String| StorageError::Corrupt {
            page_no: Some(PageNo(pgno)),
            reason: format!("spill file slot {slot}: {reason}"),
        };
        let Some(&crc) = self.crcs.get(slot as usize) else {
            return Err(bad("no such slot".into()));
        };
        let mut buf = vec![0u8; self.page_size];
        self.file
            .read_exact_at(&mut buf, self.offset(slot))
            .map_err(|e| bad(format!("read failed: {e}")))?;
        if crc32fast::hash(&buf) != crc {
            return Err(bad("checksum mismatch".into()));
        }
        Ok(PageRef::from(buf))
    }

    fn retain(&mut self, slot: u32) {
        if let Some(r) = self.refs.get_mut(slot as usize) {
            *r += 1;
        }
    }

    fn release(&mut self, slot: u32) {
        if let Some(r) = self.refs.get_mut(slot as usize) {
            debug_assert!(*r > 0, "spill slot {slot} released once too often");
            *r = r.saturating_sub(1);
            if *r == 0 {
                self.free.push(slot);
            }
        }
    }
}

/// A write view's spilled pages and its bound.
#[derive(Default)]
pub(super) struct Spill {
    /// Most resident private pages before a spill; `None`: the view never spills (detached
    /// views, `PRAGMA cache_spill=OFF`).
    pages_max: Option<usize>,
    /// Created at the first spill.
    file: Option<SpillFile>,
    /// Spilled pages: page number → slot (S1).
    pages: BTreeMap<u32, u32>,
    /// The pages used last (S4).
    pub(super) recent: Recent,
}

impl Spill {
    pub(super) fn new(pages_max: Option<usize>) -> Spill {
        Spill {
            pages_max: pages_max.map(|n| n.max(SPILL_PAGES_MIN)),
            ..Spill::default()
        }
    }

    pub(super) fn set_pages_max(&mut self, pages_max: Option<usize>) {
        self.pages_max = pages_max.map(|n| n.max(SPILL_PAGES_MIN));
    }

    /// Whether a view holding `resident` private pages must spill before it adds one.
    #[inline]
    pub(super) fn is_full(&self, resident: usize) -> bool {
        self.pages_max.is_some_and(|max| resident >= max)
    }

    /// Whether any page is spilled.
    #[inline]
    pub(super) fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }

    /// Slots of the spill file, in use or free.
    #[cfg(test)]
    pub(super) fn file_pages(&self) -> usize {
        self.file.as_ref().map_or(0, |f| f.refs.len())
    }

    /// Whether `pgno` is spilled.
    #[cfg(test)]
    pub(super) fn contains(&self, pgno: u32) -> bool {
        self.pages.contains_key(&pgno)
    }

    /// The spilled pages numbered in `range`, with their slots, in order.
    pub(super) fn range(
        &self,
        range: std::ops::RangeInclusive<u32>,
    ) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.pages.range(range).map(|(&p, &s)| (p, s))
    }

    /// The image of spilled page `pgno`, if it is spilled (S3).
    #[inline]
    pub(super) fn read(&self, pgno: u32) -> Result<Option<PageRef>> {
        if self.pages.is_empty() {
            return Ok(None);
        }
        match self.pages.get(&pgno) {
            Some(&slot) => self.read_slot(slot, pgno).map(Some),
            None => Ok(None),
        }
    }

    pub(super) fn read_slot(&self, slot: u32, pgno: u32) -> Result<PageRef> {
        match &self.file {
            Some(f) => f.read(slot, pgno),
            None => Err(StorageError::misuse("spill slot without a spill file")),
        }
    }

    /// Writes resident page `pgno`'s image into the file; the caller then drops it from
    /// memory (S1). On an error nothing changed: the page is still resident only.
    pub(super) fn put(&mut self, pgno: u32, img: &[u8], page_size: usize) -> Result<()> {
        if self.file.is_none() {
            self.file = Some(SpillFile::create(page_size)?);
        }
        let Some(f) = self.file.as_mut() else {
            return Err(StorageError::misuse("spill file vanished"));
        };
        let slot = f.write(img)?;
        if let Some(old) = self.pages.insert(pgno, slot) {
            f.release(old);
        }
        Ok(())
    }

    /// Takes `pgno` out of the file, returning its image to become resident again (S1).
    /// On an error (S3) the page stays spilled.
    pub(super) fn take(&mut self, pgno: u32) -> Result<Option<PageRef>> {
        let Some(&slot) = self.pages.get(&pgno) else {
            return Ok(None);
        };
        let img = self.read_slot(slot, pgno)?;
        self.pages.remove(&pgno);
        self.release(slot);
        Ok(Some(img))
    }

    /// Forgets spilled page `pgno` (its image is replaced or rolled back).
    pub(super) fn discard(&mut self, pgno: u32) {
        if let Some(slot) = self.pages.remove(&pgno) {
            self.release(slot);
        }
    }

    /// The savepoint image of `pgno` if it is spilled: a new reference to its slot (S2).
    pub(super) fn save(&mut self, pgno: u32) -> Option<SavedImage> {
        let &slot = self.pages.get(&pgno)?;
        if let Some(f) = self.file.as_mut() {
            f.retain(slot);
        }
        Some(SavedImage::Spilled(slot))
    }

    /// Makes `slot`, a savepoint's reference, the spilled image of `pgno` again.
    pub(super) fn restore(&mut self, pgno: u32, slot: u32) {
        if let Some(old) = self.pages.insert(pgno, slot) {
            self.release(old);
        }
    }

    /// Drops one reference to `slot` (a savepoint's image no longer needed).
    pub(super) fn release(&mut self, slot: u32) {
        if let Some(f) = self.file.as_mut() {
            f.release(slot);
        }
    }

    /// Damages `slot`'s bytes on disk (tests of S3).
    #[cfg(test)]
    pub(super) fn damage(&self, pgno: u32) {
        if let (Some(f), Some(&slot)) = (&self.file, self.pages.get(&pgno)) {
            let _ = f.file.write_all_at(b"damage", f.offset(slot) + 100);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(b: u8) -> PageRef {
        PageRef::from(vec![b; 512])
    }

    #[test]
    fn pages_come_back_as_written_and_slots_are_reused_only_when_free() {
        let mut s = Spill::new(Some(0));
        s.put(2, &page(2), 512).unwrap();
        s.put(3, &page(3), 512).unwrap();
        assert_eq!(&*s.read(2).unwrap().unwrap(), &*page(2));
        // A savepoint holds page 2's slot: writing page 2 again takes a new one (S2).
        let Some(SavedImage::Spilled(saved)) = s.save(2) else {
            panic!("page 2 is spilled");
        };
        assert_eq!(&*s.take(2).unwrap().unwrap(), &*page(2));
        s.put(2, &page(9), 512).unwrap();
        assert_eq!(&*s.read(2).unwrap().unwrap(), &*page(9));
        assert_eq!(&*s.read_slot(saved, 2).unwrap(), &*page(2));
        assert_eq!(s.file_pages(), 3);
        // Rolled back: the saved slot is page 2's again, the newer one free for reuse.
        s.restore(2, saved);
        assert_eq!(&*s.read(2).unwrap().unwrap(), &*page(2));
        s.put(4, &page(4), 512).unwrap();
        assert_eq!(s.file_pages(), 3, "the freed slot was reused");
        assert_eq!(&*s.read(4).unwrap().unwrap(), &*page(4));
    }

    #[test]
    fn a_damaged_slot_is_an_error_not_a_wrong_page() {
        let mut s = Spill::new(Some(0));
        s.put(7, &page(7), 512).unwrap();
        s.damage(7);
        match s.read(7) {
            Err(StorageError::Corrupt { page_no, reason }) => {
                assert_eq!(page_no, Some(PageNo(7)));
                assert!(reason.contains("checksum"), "{reason}");
            }
            other => panic!("expected Corrupt, got {other:?}"),
        }
        assert!(s.take(7).is_err());
        assert!(s.contains(7), "a failed read leaves the page spilled");
    }
}
