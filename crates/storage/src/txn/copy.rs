//! Whole pages copied between databases: the online backup (SQLite's backup.html) reads
//! each page image of a source snapshot and writes it, unchanged, over the same page of
//! a destination write transaction.
//!
//! Invariants:
//! - B1. A copy goes through a lock-holding write transaction only: a concurrent one could
//!   not replay it (concurrent.rs C5), so `Misuse`.
//! - B2. Once a page was copied in, the transaction records no write set: its commit
//!   leaves an opaque history entry (concurrent.rs C3), so every concurrent transaction
//!   of the destination that began before it fails validation instead of committing
//!   over a database that was replaced under it.
//! - B3. Every copy or page-count change moves the change counter (T1) and drops the
//!   transaction's leaf and rowid hints: they name pages whose bytes were replaced.
//! - B4. Nothing here interprets the bytes: the caller copies every page of one snapshot
//!   and sets the page count, so the result is that snapshot's database (the backend
//!   still owns page 1's fields in pages.rs P3 and stamps them at its checkpoint).

use super::*;
use crate::pages::PageRef;

impl Txn {
    /// The image of page `pgno` as this transaction sees it (its own writes included).
    pub fn page_image(&self, pgno: PageNo) -> Result<PageRef> {
        let g = self.lock();
        if g.conc.is_some() {
            return Err(StorageError::misuse(
                "a page copy reads through a read or lock-holding transaction",
            ));
        }
        with_view!(g, v => v.page(pgno))
    }

    /// Bytes of each page that B-trees use (the page size less the reserved bytes).
    pub fn usable_size(&self) -> Result<usize> {
        let g = self.lock();
        with_view!(g, v => Ok(v.usable_size()))
    }

    /// Writes `image` over page `pgno`, adding zero-filled pages first if the database is
    /// shorter (B1-B3). `image` must be exactly one page; the view may keep it shared.
    pub fn copy_page_in(&self, pgno: PageNo, image: &PageRef) -> Result<()> {
        let mut g = self.lock();
        let w = g.copy_target()?;
        if image.len() != w.page_size() || pgno.0 == 0 {
            return Err(StorageError::misuse(format!(
                "page copy of {} bytes to page {} of a database of {}-byte pages",
                image.len(),
                pgno.0,
                w.page_size()
            )));
        }
        while w.page_count() < pgno.0 - 1 {
            w.append_page()?;
        }
        w.put_page(pgno, image.clone())?;
        g.after_copy();
        Ok(())
    }

    /// Sets the page count: pages past `pages` are dropped, missing ones are added
    /// zero-filled (B1-B3).
    pub fn set_page_count(&self, pages: u32) -> Result<()> {
        let mut g = self.lock();
        let w = g.copy_target()?;
        if pages == 0 {
            return Err(StorageError::misuse("a database keeps at least page 1"));
        }
        if w.page_count() > pages {
            w.truncate(pages)?;
        }
        while w.page_count() < pages {
            w.append_page()?;
        }
        g.after_copy();
        Ok(())
    }
}

impl TxnInner {
    /// The write view a page copy writes to (B1); from now on no write set is kept (B2).
    fn copy_target(&mut self) -> Result<&mut dyn WriteView> {
        if self.conc.is_some() {
            return Err(StorageError::misuse(
                "a page copy needs the writer lock, not a concurrent transaction",
            ));
        }
        self.locked_writes = None;
        self.writer()
    }

    /// B3.
    fn after_copy(&mut self) {
        self.changes += 1;
        self.tc.invalidate();
        self.append_hint = None;
        self.index_hints.clear();
        self.max_rowids.clear();
    }
}
