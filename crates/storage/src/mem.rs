//! The in-memory page backend: `:memory:` databases and tests.
//!
//! Committed state is an immutable [`Image`] behind an `Arc`: a table of chunks, each an
//! `Arc` of up to [`CHUNK_PAGES`] page `Arc`s. Readers hold the `Arc<Image>` of their
//! snapshot, which no commit ever changes (pages.rs P1). A writer keeps its snapshot and,
//! beside it, only the pages it changed:
//! - M1. `dirty` maps each page the view changed or appended to its private copy: the
//!   first `page_mut` of a page copies it out of the snapshot (P2), later ones write in
//!   place; `page` looks there first, then in the snapshot.
//! - M2. A savepoint is the page count and the undo log's length. While one is open, the
//!   first change of a page since the innermost open savepoint pushes the page's previous
//!   `dirty` entry (or "not dirty") to the undo log; `rollback_to` pops the log back to the
//!   savepoint's length, newest first, so each page ends at its image at savepoint time
//!   (P4). Savepoints cost O(1) and a statement's undo O(pages it changed) — a per-statement
//!   savepoint used to cost a copy of the chunk table and of a 256-entry chunk.
//! - M3. Commit publishes under the `committed` mutex: when no reader or other view holds
//!   the committed image (the writer drops its own snapshot first), the dirty pages are
//!   moved into it and page 1's header, if the commit changed page 1 or the page count, is
//!   stamped (P3) in place — no one can observe the
//!   change but the next `current()`, which happens after it; otherwise the chunk table,
//!   the touched chunks and page 1 are copied into a new image. kv_ops' single-row
//!   autocommit writes spent ~5k instructions each on those copies and the old image's
//!   release.
//!
//! Nothing is durable.
//!
//! One writer at a time: a mutex-guarded flag plus a condvar, waited on up to the busy
//! timeout. The writer view releases the lock on commit, rollback or drop. A detached view
//! (`begin_detached`, pages.rs P5) starts unlocked and may commit only after
//! `attach_writer` took the lock on a still-latest snapshot.

// `x % n == 0` rather than `is_multiple_of`: the workspace's MSRV (1.80) predates it.
#![allow(clippy::manual_is_multiple_of)]

use crate::error::{PageNo, Result, StorageError};
use crate::header::{
    get_u32, put_u32, DbHeader, OFFSET_CHANGE_COUNTER, OFFSET_PAGE_COUNT, OFFSET_VERSION_VALID_FOR,
    OFFSET_WRITER_VERSION, WRITER_VERSION,
};
use crate::pages::{zeroed_page, Backend, PageRead, PageRef, PageWrite, ReadView, WriteView};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Pages per chunk: copying a chunk's table of 256 `Arc`s on first write is cheap, and the
/// chunk table stays small (4 096 entries for a 4 GiB database of 4 KiB pages).
const CHUNK_PAGES: usize = 256;

type Chunk = Arc<Vec<PageRef>>;

#[derive(Clone)]
struct Pages {
    chunks: Arc<Vec<Chunk>>,
    count: u32,
}

impl Pages {
    fn get(&self, pgno: PageNo) -> Result<PageRef> {
        if pgno.0 == 0 || pgno.0 > self.count {
            return Err(StorageError::corrupt(
                pgno,
                format!(
                    "page {} out of range (database has {} pages)",
                    pgno.0, self.count
                ),
            ));
        }
        let i = (pgno.0 - 1) as usize;
        Ok(self.chunks[i / CHUNK_PAGES][i % CHUNK_PAGES].clone())
    }

    /// Replaces page `pgno` (1..=count), copying the chunk table and the chunk only where
    /// another image shares them.
    fn set(&mut self, pgno: u32, page: PageRef) {
        let i = (pgno as usize).saturating_sub(1);
        let chunks = Arc::make_mut(&mut self.chunks);
        if let Some(chunk) = chunks.get_mut(i / CHUNK_PAGES) {
            if let Some(slot) = Arc::make_mut(chunk).get_mut(i % CHUNK_PAGES) {
                *slot = page;
            }
        }
    }

    /// Page `pgno` to write, copying the chunk table, its chunk and the page only where
    /// another image or holder shares them.
    fn page_mut(&mut self, pgno: PageNo) -> Result<&mut [u8]> {
        if pgno.0 == 0 || pgno.0 > self.count {
            return Err(StorageError::corrupt(
                pgno,
                format!(
                    "page {} out of range (database has {} pages)",
                    pgno.0, self.count
                ),
            ));
        }
        let i = (pgno.0 - 1) as usize;
        let chunks = Arc::make_mut(&mut self.chunks);
        let slot = chunks
            .get_mut(i / CHUNK_PAGES)
            .and_then(|c| Arc::make_mut(c).get_mut(i % CHUNK_PAGES))
            .ok_or_else(|| StorageError::corrupt(pgno, "page missing from its chunk"))?;
        Ok(Arc::make_mut(slot))
    }

    fn push(&mut self, page: PageRef) {
        let i = self.count as usize;
        let chunks = Arc::make_mut(&mut self.chunks);
        if i % CHUNK_PAGES == 0 {
            chunks.push(Arc::new(Vec::with_capacity(CHUNK_PAGES)));
        }
        if let Some(last) = chunks.last_mut() {
            Arc::make_mut(last).push(page);
        }
        self.count += 1;
    }

    fn truncate(&mut self, n: u32) {
        if n >= self.count {
            return;
        }
        let n_us = n as usize;
        let chunks = Arc::make_mut(&mut self.chunks);
        chunks.truncate(n_us.div_ceil(CHUNK_PAGES));
        if n_us % CHUNK_PAGES != 0 {
            if let Some(last) = chunks.last_mut() {
                Arc::make_mut(last).truncate(n_us % CHUNK_PAGES);
            }
        }
        self.count = n;
    }
}

struct Image {
    seq: u64,
    pages: Pages,
}

struct Shared {
    page_size: usize,
    usable: usize,
    committed: Mutex<Arc<Image>>,
    writer_busy: Mutex<bool>,
    writer_cv: Condvar,
    history: Arc<crate::concurrent::SharedHistory>,
}

impl Shared {
    fn current(&self) -> Arc<Image> {
        match self.committed.lock() {
            Ok(g) => g.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    fn lock_writer(&self, timeout: Duration) -> Result<()> {
        let deadline = Instant::now() + timeout;
        let mut busy = self.writer_busy.lock().unwrap_or_else(|p| p.into_inner());
        while *busy {
            let now = Instant::now();
            if now >= deadline {
                return Err(StorageError::Busy {
                    reason: "another write transaction is active".into(),
                });
            }
            busy = match self.writer_cv.wait_timeout(busy, deadline - now) {
                Ok((g, _)) => g,
                Err(p) => p.into_inner().0,
            };
        }
        *busy = true;
        Ok(())
    }

    fn unlock_writer(&self) {
        let mut busy = self.writer_busy.lock().unwrap_or_else(|p| p.into_inner());
        *busy = false;
        self.writer_cv.notify_one();
    }
}

/// An in-memory database. Clone it to share (all clones see the same database).
#[derive(Clone)]
pub struct MemBackend {
    shared: Arc<Shared>,
}

impl MemBackend {
    /// An empty database (0 pages) of `page_size` bytes per page; `Database::with_backend`
    /// writes page 1.
    pub fn new(page_size: u32) -> Result<MemBackend> {
        let raw = if page_size == 65536 {
            1
        } else {
            page_size as u16
        };
        if crate::header::decode_page_size(raw).is_none() || page_size > 65536 {
            return Err(StorageError::misuse(format!(
                "page size {page_size} is not a power of two in 512..=65536"
            )));
        }
        Ok(Self::build(
            page_size as usize,
            page_size as usize,
            Pages {
                chunks: Arc::new(Vec::new()),
                count: 0,
            },
        ))
    }

    fn build(page_size: usize, usable: usize, pages: Pages) -> MemBackend {
        MemBackend {
            shared: Arc::new(Shared {
                page_size,
                usable,
                committed: Mutex::new(Arc::new(Image { seq: 1, pages })),
                writer_busy: Mutex::new(false),
                writer_cv: Condvar::new(),
                history: Arc::default(),
            }),
        }
    }

    /// A database from a whole file image (as stock SQLite writes it). Validates the header
    /// and that the length is a whole number of pages.
    pub fn from_bytes(bytes: Vec<u8>) -> Result<MemBackend> {
        let h = DbHeader::parse(&bytes)?;
        let page_size = h.page_size as usize;
        if bytes.len() % page_size != 0 {
            return Err(StorageError::NotADatabase {
                reason: format!(
                    "file size {} is not a multiple of the page size {page_size}",
                    bytes.len()
                ),
            });
        }
        let file_pages =
            u32::try_from(bytes.len() / page_size).map_err(|_| StorageError::NotADatabase {
                reason: "file too large".into(),
            })?;
        let count = h.effective_page_count(file_pages);
        if count > file_pages {
            return Err(StorageError::corrupt(
                None,
                format!("header says {count} pages but the file holds {file_pages}"),
            ));
        }
        let mut pages = Pages {
            chunks: Arc::new(Vec::new()),
            count: 0,
        };
        for chunk in bytes.chunks(page_size).take(count as usize) {
            pages.push(PageRef::from(chunk));
        }
        Ok(Self::build(page_size, h.usable_size(), pages))
    }

    /// The committed database as a file image.
    pub fn to_bytes(&self) -> Vec<u8> {
        let img = self.shared.current();
        let mut out = Vec::with_capacity(img.pages.count as usize * self.shared.page_size);
        for chunk in img.pages.chunks.iter() {
            for p in chunk.iter() {
                out.extend_from_slice(p);
            }
        }
        out
    }
}

struct MemRead {
    shared: Arc<Shared>,
    image: Arc<Image>,
}

impl PageRead for MemRead {
    fn page_size(&self) -> usize {
        self.shared.page_size
    }
    fn usable_size(&self) -> usize {
        self.shared.usable
    }
    fn page_count(&self) -> u32 {
        self.image.pages.count
    }
    fn page(&self, pgno: PageNo) -> Result<PageRef> {
        self.image.pages.get(pgno)
    }
}

impl ReadView for MemRead {
    fn snapshot_seq(&self) -> u64 {
        self.image.seq
    }
}

/// A page the writer changed or appended, and the id of the innermost savepoint whose
/// before-image of it is already in the undo log (0: none; M2).
struct Dirty {
    page: PageRef,
    saved_for: u32,
}

/// `HashMap<u32, _>` hasher for page numbers: one multiply (SipHash was ~40% of a cached
/// page lookup in the writer's `page`).
#[derive(Default)]
struct PgnoHasher(u64);

impl std::hash::Hasher for PgnoHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.0 = u64::from(n).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

type DirtyMap = HashMap<u32, Dirty, BuildHasherDefault<PgnoHasher>>;

/// An open savepoint: the page count and undo-log length when it was taken (M2).
struct Savepoint {
    id: u32,
    count: u32,
    undo_len: usize,
}

struct MemWrite {
    shared: Arc<Shared>,
    base_seq: u64,
    /// The snapshot this view started from; `None` only while `commit` publishes (M3).
    base: Option<Arc<Image>>,
    /// Pages in this view.
    count: u32,
    /// Pages changed or appended by this view (M1).
    dirty: DirtyMap,
    /// Anything changed (a commit without changes publishes nothing).
    changed: bool,
    /// Open savepoints, oldest first.
    savepoints: Vec<Savepoint>,
    /// Before-images since the oldest open savepoint: (page, its previous `dirty` entry;
    /// `None`: the page was not dirty, its image is the base's or it did not exist) (M2).
    undo: Vec<(u32, Option<PageRef>)>,
    next_savepoint: u32,
    locked: bool,
}

impl MemWrite {
    fn new(shared: Arc<Shared>, image: Arc<Image>, locked: bool) -> MemWrite {
        MemWrite {
            shared,
            base_seq: image.seq,
            count: image.pages.count,
            base: Some(image),
            dirty: DirtyMap::default(),
            changed: false,
            savepoints: Vec::new(),
            undo: Vec::new(),
            next_savepoint: 0,
            locked,
        }
    }

    fn release_lock(&mut self) {
        if self.locked {
            self.locked = false;
            self.shared.unlock_writer();
        }
    }

    fn check_range(&self, pgno: PageNo) -> Result<()> {
        if pgno.0 == 0 || pgno.0 > self.count {
            return Err(StorageError::corrupt(
                pgno,
                format!(
                    "page {} out of range (database has {} pages)",
                    pgno.0, self.count
                ),
            ));
        }
        Ok(())
    }

    fn base_page(&self, pgno: PageNo) -> Result<PageRef> {
        match &self.base {
            Some(b) => b.pages.get(pgno),
            None => Err(StorageError::misuse("write view has been committed")),
        }
    }

    /// Publishes this view's pages as the new committed image (M3).
    fn publish(&mut self) -> Result<()> {
        let dirty = std::mem::take(&mut self.dirty);
        let count = self.count;
        let mut g = self
            .shared
            .committed
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        // Ours is the only other reference a locked writer's base can share with the slot.
        self.base = None;
        let seq = g.seq + 1;
        let page_size = self.shared.page_size;
        // P3: only a commit that changes page 1 or the page count stamps it.
        let stamp = dirty.contains_key(&1) || count != g.pages.count;
        match Arc::get_mut(&mut *g) {
            Some(image) => {
                apply(&mut image.pages, count, dirty, page_size);
                if stamp {
                    stamp_header(&mut image.pages)?;
                }
                image.seq = seq;
            }
            None => {
                let mut pages = g.pages.clone();
                apply(&mut pages, count, dirty, page_size);
                if stamp {
                    stamp_header(&mut pages)?;
                }
                *g = Arc::new(Image { seq, pages });
            }
        }
        Ok(())
    }
}

/// P3: page 1's change counter, version-valid-for, writer version and page count, stamped
/// by a commit that changes page 1 or the page count (so the counter counts those commits:
/// nothing outside this process can cache an in-memory database, and `to_bytes` needs only
/// the count right and the counter equal to version-valid-for). A commit that leaves page 1
/// alone leaves it shared: in the in-place case of M3 it was written where it lies unless
/// someone held it, a copy of 4 KiB then, ~1k instructions of kv_ops' single-row writes.
fn stamp_header(pages: &mut Pages) -> Result<()> {
    let count = pages.count;
    let p1 = pages.page_mut(PageNo(1))?;
    let counter = get_u32(p1, OFFSET_CHANGE_COUNTER).wrapping_add(1);
    put_u32(p1, OFFSET_CHANGE_COUNTER, counter);
    put_u32(p1, OFFSET_VERSION_VALID_FOR, counter);
    put_u32(p1, OFFSET_WRITER_VERSION, WRITER_VERSION);
    put_u32(p1, OFFSET_PAGE_COUNT, count);
    Ok(())
}

/// Makes `pages` hold `count` pages: its own up to `count`, with `dirty`'s in their place
/// (a page past the old count is always in `dirty`: only `append_page` extends a view).
fn apply(pages: &mut Pages, count: u32, mut dirty: DirtyMap, page_size: usize) {
    pages.truncate(count);
    for (&pgno, d) in dirty.iter() {
        if pgno <= pages.count {
            pages.set(pgno, d.page.clone());
        }
    }
    for pgno in pages.count + 1..=count {
        let page = match dirty.remove(&pgno) {
            Some(d) => d.page,
            None => zeroed_page(page_size),
        };
        pages.push(page);
    }
}

impl Drop for MemWrite {
    fn drop(&mut self) {
        self.release_lock();
    }
}

impl PageRead for MemWrite {
    fn page_size(&self) -> usize {
        self.shared.page_size
    }
    fn usable_size(&self) -> usize {
        self.shared.usable
    }
    fn page_count(&self) -> u32 {
        self.count
    }
    fn page(&self, pgno: PageNo) -> Result<PageRef> {
        self.check_range(pgno)?;
        if !self.dirty.is_empty() {
            if let Some(d) = self.dirty.get(&pgno.0) {
                return Ok(d.page.clone());
            }
        }
        self.base_page(pgno)
    }
}

impl PageWrite for MemWrite {
    fn page_mut(&mut self, pgno: PageNo) -> Result<&mut [u8]> {
        self.check_range(pgno)?;
        self.changed = true;
        let top = self.savepoints.last().map_or(0, |s| s.id);
        if !self.dirty.contains_key(&pgno.0) {
            // M1: the first change copies the snapshot's page (P2).
            let page = PageRef::from(&*self.base_page(pgno)?);
            if top > 0 {
                self.undo.push((pgno.0, None));
            }
            self.dirty.insert(
                pgno.0,
                Dirty {
                    page,
                    saved_for: top,
                },
            );
        }
        let Some(d) = self.dirty.get_mut(&pgno.0) else {
            return Err(StorageError::misuse("dirty page vanished"));
        };
        if d.saved_for < top {
            // M2: the before-image goes to the undo log; `make_mut` below then copies.
            self.undo.push((pgno.0, Some(d.page.clone())));
            d.saved_for = top;
        }
        Ok(Arc::make_mut(&mut d.page))
    }
    fn append_page(&mut self) -> Result<PageNo> {
        if self.count == u32::MAX - 1 {
            return Err(StorageError::Full);
        }
        self.changed = true;
        self.count += 1;
        let pgno = self.count;
        let top = self.savepoints.last().map_or(0, |s| s.id);
        let prev = self.dirty.insert(
            pgno,
            Dirty {
                page: zeroed_page(self.shared.page_size),
                saved_for: top,
            },
        );
        if top > 0 {
            self.undo.push((pgno, prev.map(|d| d.page)));
        }
        Ok(PageNo(pgno))
    }
    fn truncate(&mut self, n: u32) -> Result<()> {
        // Dirty pages past `n` stay (unreachable); `append_page` replaces them and
        // `rollback_to` may make them reachable again.
        self.changed = true;
        self.count = self.count.min(n);
        Ok(())
    }
    fn savepoint(&mut self) -> u32 {
        self.next_savepoint += 1;
        self.savepoints.push(Savepoint {
            id: self.next_savepoint,
            count: self.count,
            undo_len: self.undo.len(),
        });
        self.next_savepoint
    }
    fn rollback_to(&mut self, savepoint: u32) -> Result<()> {
        let pos = self
            .savepoints
            .iter()
            .position(|s| s.id == savepoint)
            .ok_or_else(|| StorageError::misuse(format!("no savepoint {savepoint}")))?;
        self.savepoints.truncate(pos + 1);
        let (count, undo_len) = (self.savepoints[pos].count, self.savepoints[pos].undo_len);
        // Newest first, so each page ends at its oldest before-image: its state at the
        // savepoint (M2).
        while self.undo.len() > undo_len {
            let Some((pgno, prev)) = self.undo.pop() else {
                break;
            };
            match prev {
                Some(page) => {
                    self.dirty.insert(pgno, Dirty { page, saved_for: 0 });
                }
                None => {
                    self.dirty.remove(&pgno);
                }
            }
        }
        self.count = count;
        Ok(())
    }
    fn release(&mut self, savepoint: u32) {
        if let Some(pos) = self.savepoints.iter().position(|s| s.id == savepoint) {
            self.savepoints.truncate(pos);
            if pos == 0 {
                self.undo.clear();
            }
        }
    }
}

impl WriteView for MemWrite {
    fn snapshot_seq(&self) -> u64 {
        self.base_seq
    }
    fn commit(mut self: Box<Self>) -> Result<()> {
        if !self.locked {
            // P5: a detached view never publishes without the writer lock.
            return Err(StorageError::misuse(
                "a detached write view cannot commit without the writer lock",
            ));
        }
        if self.changed && self.count > 0 {
            self.savepoints.clear();
            self.undo.clear();
            self.publish()?;
        }
        self.release_lock();
        Ok(())
    }
    fn rollback(mut self: Box<Self>) {
        self.release_lock();
    }
    fn commit_seq(&self) -> Option<u64> {
        // As `commit`, which publishes only then.
        (self.changed && self.count > 0).then_some(self.base_seq + 1)
    }
    fn attach_writer(&mut self, busy_timeout: Duration) -> Result<bool> {
        if self.locked {
            return Ok(true);
        }
        self.shared.lock_writer(busy_timeout)?;
        if self.shared.current().seq != self.base_seq {
            self.shared.unlock_writer();
            return Ok(false);
        }
        self.locked = true;
        Ok(true)
    }
}

impl Backend for MemBackend {
    fn history(&self) -> Arc<crate::concurrent::SharedHistory> {
        Arc::clone(&self.shared.history)
    }
    fn begin_read(&self) -> Result<Box<dyn ReadView>> {
        Ok(Box::new(MemRead {
            shared: self.shared.clone(),
            image: self.shared.current(),
        }))
    }

    fn begin_write(&self, busy_timeout: Duration) -> Result<Box<dyn WriteView>> {
        self.shared.lock_writer(busy_timeout)?;
        Ok(Box::new(MemWrite::new(
            self.shared.clone(),
            self.shared.current(),
            true,
        )))
    }

    fn begin_detached(&self) -> Result<Box<dyn WriteView>> {
        Ok(Box::new(MemWrite::new(
            self.shared.clone(),
            self.shared.current(),
            false,
        )))
    }

    fn upgrade(
        &self,
        read: Box<dyn ReadView>,
        busy_timeout: Duration,
    ) -> Result<Box<dyn WriteView>> {
        let seq = read.snapshot_seq();
        drop(read);
        let w = self.begin_write(busy_timeout)?;
        if w.snapshot_seq() != seq {
            w.rollback();
            return Err(StorageError::BusySnapshot {
                reason: "a commit happened after this transaction's snapshot".into(),
            });
        }
        Ok(w)
    }

    fn checkpoint(&self) -> Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshots_are_isolated_and_savepoints_restore() {
        let mem = MemBackend::new(512).unwrap();
        let mut w = mem.begin_write(Duration::ZERO).unwrap();
        let p = w.append_page().unwrap();
        crate::header::init_header(w.page_mut(p).unwrap(), 512);
        w.commit().unwrap();
        let r1 = mem.begin_read().unwrap();
        let mut w = mem.begin_write(Duration::ZERO).unwrap();
        assert!(matches!(
            mem.begin_write(Duration::from_millis(10)),
            Err(StorageError::Busy { .. })
        ));
        w.page_mut(PageNo(1)).unwrap()[200] = 7;
        let sp = w.savepoint();
        w.page_mut(PageNo(1)).unwrap()[201] = 8;
        w.append_page().unwrap();
        w.rollback_to(sp).unwrap();
        assert_eq!(w.page_count(), 1);
        assert_eq!(w.page(PageNo(1)).unwrap()[201], 0);
        assert_eq!(w.page(PageNo(1)).unwrap()[200], 7);
        assert_eq!(r1.page(PageNo(1)).unwrap()[200], 0);
        w.commit().unwrap();
        assert_eq!(r1.page(PageNo(1)).unwrap()[200], 0);
        let r2 = mem.begin_read().unwrap();
        assert_eq!(r2.page(PageNo(1)).unwrap()[200], 7);
        assert!(matches!(
            mem.upgrade(r1, Duration::ZERO),
            Err(StorageError::BusySnapshot { .. })
        ));
        let w = mem.upgrade(r2, Duration::ZERO).unwrap();
        w.rollback();
        let img = mem.to_bytes();
        assert_eq!(img.len(), 512);
        assert_eq!(get_u32(&img, OFFSET_CHANGE_COUNTER), 3);
        let again = MemBackend::from_bytes(img.clone()).unwrap();
        assert_eq!(again.to_bytes(), img);
        assert!(MemBackend::from_bytes(img[..300].to_vec()).is_err());
    }

    /// M1–M3 against a model (a `Vec` of pages and a stack of whole copies per savepoint):
    /// random page writes, appends, truncations, nested savepoints, rollbacks, releases and
    /// commits, with and without a reader holding the previous snapshot (copy vs in place).
    #[test]
    fn write_view_matches_a_model_of_whole_copies() {
        const PS: usize = 512;
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let mem = MemBackend::new(PS as u32).unwrap();
        let mut w = mem.begin_write(Duration::ZERO).unwrap();
        let p = w.append_page().unwrap();
        crate::header::init_header(w.page_mut(p).unwrap(), PS as u32);
        w.commit().unwrap();
        let snapshot = |mem: &MemBackend| -> Vec<Vec<u8>> {
            let r = mem.begin_read().unwrap();
            (1..=r.page_count())
                .map(|n| r.page(PageNo(n)).unwrap().to_vec())
                .collect()
        };
        // Page 1's header is the backend's at commit; the model compares bytes past it.
        let body = |pages: &[Vec<u8>]| -> Vec<Vec<u8>> {
            pages.iter().map(|p| p[100..].to_vec()).collect()
        };
        let mut committed = snapshot(&mem);
        for round in 0..60 {
            let reader = (round % 3 == 0).then(|| mem.begin_read().unwrap());
            let before = reader.as_ref().map(|_| snapshot(&mem));
            let mut w = mem.begin_write(Duration::ZERO).unwrap();
            let mut model = committed.clone();
            let mut sps: Vec<(u32, Vec<Vec<u8>>)> = Vec::new();
            for _ in 0..40 {
                match rnd(10) {
                    0..=3 => {
                        let n = 1 + rnd(model.len() as u64) as usize;
                        let (at, b) = (100 + rnd((PS - 100) as u64) as usize, rnd(256) as u8);
                        w.page_mut(PageNo(n as u32)).unwrap()[at] = b;
                        model[n - 1][at] = b;
                    }
                    4 => {
                        let n = w.append_page().unwrap();
                        model.push(vec![0u8; PS]);
                        assert_eq!(n.0 as usize, model.len());
                    }
                    5 if model.len() > 1 => {
                        let n = 1 + rnd(model.len() as u64) as u32;
                        w.truncate(n).unwrap();
                        model.truncate(n as usize);
                    }
                    6 => sps.push((w.savepoint(), model.clone())),
                    7 if !sps.is_empty() => {
                        let i = rnd(sps.len() as u64) as usize;
                        w.rollback_to(sps[i].0).unwrap();
                        sps.truncate(i + 1);
                        model = sps[i].1.clone();
                    }
                    8 if !sps.is_empty() => {
                        let i = rnd(sps.len() as u64) as usize;
                        w.release(sps[i].0);
                        sps.truncate(i);
                    }
                    _ => {}
                }
                assert_eq!(w.page_count() as usize, model.len());
                for (i, page) in model.iter().enumerate() {
                    let got = w.page(PageNo(i as u32 + 1)).unwrap();
                    assert_eq!(&got[100..], &page[100..], "round {round} page {}", i + 1);
                }
            }
            if rnd(4) == 0 {
                w.rollback();
            } else {
                w.commit().unwrap();
                committed = model;
            }
            assert_eq!(body(&snapshot(&mem)), body(&committed), "round {round}");
            if let (Some(r), Some(before)) = (reader, before) {
                let seen: Vec<Vec<u8>> = (1..=r.page_count())
                    .map(|n| r.page(PageNo(n)).unwrap().to_vec())
                    .collect();
                assert_eq!(seen, before, "P1: a reader's snapshot never changes");
            }
        }
    }
}
