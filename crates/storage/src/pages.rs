//! The contract between the B-tree layer and whatever keeps pages (the pager for files,
//! the in-memory backend for `:memory:` and tests).
//!
//! A *view* is a transaction's window on the pages:
//! - a [`ReadView`] sees one committed snapshot, unchanged by later commits, until dropped;
//! - a [`WriteView`] sees its snapshot plus its own private, copy-on-write changes; nothing
//!   it changes is visible to anyone else until `commit` returns.
//!
//! Invariants every backend keeps:
//! - P1. `page(n)` for `1 <= n <= page_count()` returns the page image of the view's
//!   snapshot (or the view's own latest write of it); any other `n` is `Corrupt`.
//! - P2. `page_mut(n)` makes a private copy on first use in the view; the committed image is
//!   never modified in place.
//! - P3. `commit` is atomic: after a crash, either every page it changed is in its committed
//!   state or none is. The backend owns page 1's change counter (offset 24), page count
//!   (28), version-valid-for (92), SQLite version (96) and format versions (18, 19): a
//!   commit sets the page count when the count changes and leaves page 1 alone otherwise;
//!   the file backend stamps the others into the database file's page 1 at each checkpoint
//!   that writes pages (a new change counter each time, header.rs), so committed images and
//!   the file's page 1 may differ in those fields, and only in those.
//! - P4. `rollback_to(sp)` restores every page to its image at `savepoint()` time, and the page
//!   count too.
//! - P5. A *detached* write view (`begin_detached`) holds no lock; its `commit` is `Misuse`
//!   until `attach_writer` has taken the writer lock and found its snapshot still the
//!   latest (then it commits like any writer). Dropping or rolling it back releases
//!   whatever it holds.
//! - P6. `rebase_pages` of a detached view returns a detached view on the latest snapshot
//!   holding the view's private pages unchanged only if no commit since the view's snapshot
//!   changed a page the view read or wrote (page 1: outside offsets 24 and 92) and the
//!   page count is the same: then applying the view's writes to the latest snapshot reads
//!   the same bytes at every step, so it would produce exactly those pages (the replay of
//!   concurrent.rs C5, without running it).
//!
//! The B-tree layer owns the *content* of pages (cells, freelist, header fields other than
//! those in P3); the backend never interprets page bytes except page 1's header in P3.

use crate::error::{PageNo, Result};
use std::sync::Arc;
use std::time::Duration;

/// An immutable page image, shared between the cache and readers. The bytes live in the
/// `Arc`'s own allocation, right after its reference counts, so a fetch's count update and
/// its first read of the page (the B-tree header) mostly fall on one cache line; an
/// `Arc<Vec<u8>>` keeps the count in a block of its own, one more dependent miss per fetch
/// of a page not in the caches (hc_mixed's 10-row scan, BENCHMARKS.md "hc_mixed's 10-row
/// scan, part 5": read-only CPU per transaction −6%). An image is written only while its
/// `Arc` is unique (`Arc::get_mut`, `Arc::make_mut`: P2).
pub type PageRef = Arc<[u8]>;

/// A zero-filled page image of `len` bytes, in one allocation.
pub fn zeroed_page(len: usize) -> PageRef {
    std::iter::repeat_n(0u8, len).collect()
}

pub trait PageRead {
    /// Bytes per page (512..=65536, a power of two).
    fn page_size(&self) -> usize;
    /// Page size minus the reserved bytes at the end of each page (header offset 20).
    fn usable_size(&self) -> usize;
    /// Pages in the database as this view sees it.
    fn page_count(&self) -> u32;
    fn page(&self, pgno: PageNo) -> Result<PageRef>;
}

pub trait PageWrite: PageRead {
    /// A mutable private copy of page `pgno` (P2).
    fn page_mut(&mut self, pgno: PageNo) -> Result<&mut [u8]>;
    /// Page `pgno` becomes `image`, which the view may keep shared instead of copying it
    /// (P2 holds: a later `page_mut` copies a shared image first). `pgno` may be one past
    /// the last page: the view then grows by that page. Used by whole-page copies (the
    /// online backup, txn/copy.rs).
    fn put_page(&mut self, pgno: PageNo, image: PageRef) -> Result<()> {
        if image.len() != self.page_size() {
            return Err(crate::error::StorageError::misuse(
                "page image of another size",
            ));
        }
        if pgno.0 == self.page_count().saturating_add(1) {
            self.append_page()?;
        }
        self.page_mut(pgno)?.copy_from_slice(&image);
        Ok(())
    }
    /// Adds a zero-filled page at the end of the file and returns its number
    /// (`page_count()` grows by one). Used by the freelist when it has nothing to reuse.
    fn append_page(&mut self) -> Result<PageNo>;
    /// Shrinks the view to `n` pages (used by VACUUM / free-page trimming).
    fn truncate(&mut self, n: u32) -> Result<()>;
    /// Marks a statement or SAVEPOINT boundary; returns its id (ids nest: a later
    /// savepoint's id is larger).
    fn savepoint(&mut self) -> u32;
    /// Restores all pages and the page count to their state at `savepoint` (P4). The
    /// savepoint stays open (SQL's `ROLLBACK TO` semantics); later savepoints are discarded.
    fn rollback_to(&mut self, savepoint: u32) -> Result<()>;
    /// Forgets `savepoint` and every later one, keeping their changes.
    fn release(&mut self, savepoint: u32);
}

pub trait ReadView: PageRead + Send {
    /// The commit sequence number this snapshot was taken at.
    fn snapshot_seq(&self) -> u64;
}

pub trait WriteView: PageWrite + Send {
    fn snapshot_seq(&self) -> u64;
    /// Makes the view's changes durable (per the synchronous setting) and visible (P3).
    fn commit(self: Box<Self>) -> Result<()>;
    /// Discards every change.
    fn rollback(self: Box<Self>);
    /// The sequence number `commit` would publish now (the snapshot's + 1, the writer lock
    /// being held at commit), or None when the view changed nothing and so publishes
    /// nothing (`Txn::committed_seq`, parlite's `PRAGMA data_version`).
    fn commit_seq(&self) -> Option<u64>;
    /// How durable this view's commit must be before `commit` returns, overriding the
    /// backend's `set_synchronous` for this commit only (per-connection `PRAGMA
    /// synchronous`). Backends without a disk ignore it.
    fn set_synchronous(&mut self, _mode: crate::options::Synchronous) {}
    /// When the view moves its private pages out of memory (`PRAGMA cache_spill`): past
    /// `pages` of them; `None`: never. A file backend's lock-holding view spills past the
    /// page cache's bound unless told otherwise (pager/spill.rs); other views ignore it.
    fn set_spill_pages(&mut self, _pages: Option<usize>) {}
    /// Detached views (P5): takes the writer lock, waiting up to `busy_timeout` (then
    /// `Busy`). Returns true, keeping the lock, if the view's snapshot is still the latest
    /// committed state (the view may now `commit`); false, releasing the lock, if a commit
    /// happened since. Views that already hold the lock return true.
    fn attach_writer(&mut self, _busy_timeout: Duration) -> Result<bool> {
        Ok(true)
    }
    /// Detached views (P6): the view's pages carried to the latest snapshot, if no commit
    /// since touched a page it used; `None` (also the default, and when nothing committed
    /// since): the caller replays the transaction's writes instead. `self` is unchanged.
    fn rebase_pages(&self) -> Result<Option<Box<dyn WriteView>>> {
        Ok(None)
    }
}

/// A store of pages: the pager over a file, or memory. Shared by all transactions.
pub trait Backend: Send + Sync {
    fn begin_read(&self) -> Result<Box<dyn ReadView>>;
    /// Takes the single writer lock, waiting up to `busy_timeout` (then `Busy`).
    fn begin_write(&self, busy_timeout: Duration) -> Result<Box<dyn WriteView>>;
    /// Turns a read snapshot into a writer. `BusySnapshot` if a commit happened after the
    /// snapshot was taken (SQLite WAL semantics for a deferred transaction that writes late).
    fn upgrade(
        &self,
        read: Box<dyn ReadView>,
        busy_timeout: Duration,
    ) -> Result<Box<dyn WriteView>>;
    /// A write view on the latest snapshot that holds no lock (P5): private copy-on-write
    /// pages for an optimistic concurrent transaction.
    fn begin_detached(&self) -> Result<Box<dyn WriteView>> {
        Err(crate::error::StorageError::misuse(
            "this backend has no detached write views",
        ))
    }
    /// The commit history of this database file, one per backend however many
    /// `Database`s are opened over it (concurrent.rs `SharedHistory`).
    fn history(&self) -> Arc<crate::concurrent::SharedHistory>;
    /// Folds committed changes into the database file. No-op for memory.
    fn checkpoint(&self) -> Result<()>;
    /// `PRAGMA wal_checkpoint(mode)`, waiting up to `busy_timeout` for the writer lock
    /// where the mode needs it. Backends without a log answer SQLite's `0|-1|-1`.
    fn checkpoint_mode(
        &self,
        _mode: crate::pager::CheckpointMode,
        _busy_timeout: Duration,
    ) -> Result<crate::pager::CheckpointOutcome> {
        self.checkpoint()?;
        Ok(crate::pager::CheckpointOutcome::NO_LOG)
    }
    /// How durable later commits must be before they return (`PRAGMA synchronous`).
    /// Backends without a disk ignore it.
    fn set_synchronous(&self, _mode: crate::options::Synchronous) {}
    /// Most pages the page cache keeps (`PRAGMA cache_size`). Backends without a cache
    /// (memory: every page is held) ignore it.
    fn set_cache_pages_max(&self, _pages: usize) {}
    /// Another handle of this process shares the backend (a file opened twice, lockfile L3).
    fn is_shared(&self) -> bool {
        false
    }
    /// Commit, fsync and checkpoint counters (all zero for backends without a disk).
    fn stats(&self) -> crate::pager::PagerStats {
        crate::pager::PagerStats::default()
    }
}
