//! The in-memory page backend: `:memory:` databases and tests.
//!
//! Committed state is an immutable [`Image`] behind an `Arc`: a table of chunks, each an
//! `Arc` of up to [`CHUNK_PAGES`] page `Arc`s. Readers hold the `Arc<Image>` of their
//! snapshot, which no commit ever changes (pages.rs P1). A writer starts from the same
//! chunk table and copies on write at three levels — the table, a chunk, a page — with
//! `Arc::make_mut`, so a write costs one page copy plus, the first time per transaction or
//! savepoint, a chunk-table and chunk copy (P2). Savepoints are just retained chunk
//! tables, so `rollback_to` is a pointer swap (P4). Commit swaps the writer's table in as
//! the new image after stamping page 1's header (P3); nothing is durable.
//!
//! One writer at a time: a mutex-guarded flag plus a condvar, waited on up to the busy
//! timeout. The writer view releases the lock on commit, rollback or drop.

// `x % n == 0` rather than `is_multiple_of`: the workspace's MSRV (1.80) predates it.
#![allow(clippy::manual_is_multiple_of)]

use crate::error::{PageNo, Result, StorageError};
use crate::header::{
    get_u32, put_u32, DbHeader, OFFSET_CHANGE_COUNTER, OFFSET_PAGE_COUNT, OFFSET_VERSION_VALID_FOR,
    OFFSET_WRITER_VERSION, WRITER_VERSION,
};
use crate::pages::{Backend, PageRead, PageRef, PageWrite, ReadView, WriteView};
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

    fn get_mut(&mut self, pgno: PageNo) -> Result<&mut [u8]> {
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
        let chunk = Arc::make_mut(&mut chunks[i / CHUNK_PAGES]);
        Ok(Arc::make_mut(&mut chunk[i % CHUNK_PAGES]).as_mut_slice())
    }

    fn push(&mut self, page: Vec<u8>) {
        let i = self.count as usize;
        let chunks = Arc::make_mut(&mut self.chunks);
        if i % CHUNK_PAGES == 0 {
            chunks.push(Arc::new(Vec::with_capacity(CHUNK_PAGES)));
        }
        if let Some(last) = chunks.last_mut() {
            Arc::make_mut(last).push(Arc::new(page));
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
            pages.push(chunk.to_vec());
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

struct MemWrite {
    shared: Arc<Shared>,
    base_seq: u64,
    pages: Pages,
    dirty: bool,
    savepoints: Vec<(u32, Pages)>,
    next_savepoint: u32,
    locked: bool,
}

impl MemWrite {
    fn release_lock(&mut self) {
        if self.locked {
            self.locked = false;
            self.shared.unlock_writer();
        }
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
        self.pages.count
    }
    fn page(&self, pgno: PageNo) -> Result<PageRef> {
        self.pages.get(pgno)
    }
}

impl PageWrite for MemWrite {
    fn page_mut(&mut self, pgno: PageNo) -> Result<&mut [u8]> {
        self.dirty = true;
        self.pages.get_mut(pgno)
    }
    fn append_page(&mut self) -> Result<PageNo> {
        if self.pages.count == u32::MAX - 1 {
            return Err(StorageError::Full);
        }
        self.dirty = true;
        self.pages.push(vec![0u8; self.shared.page_size]);
        Ok(PageNo(self.pages.count))
    }
    fn truncate(&mut self, n: u32) -> Result<()> {
        self.dirty = true;
        self.pages.truncate(n);
        Ok(())
    }
    fn savepoint(&mut self) -> u32 {
        self.next_savepoint += 1;
        self.savepoints
            .push((self.next_savepoint, self.pages.clone()));
        self.next_savepoint
    }
    fn rollback_to(&mut self, savepoint: u32) -> Result<()> {
        let pos = self
            .savepoints
            .iter()
            .position(|(id, _)| *id == savepoint)
            .ok_or_else(|| StorageError::misuse(format!("no savepoint {savepoint}")))?;
        self.savepoints.truncate(pos + 1);
        self.pages = self.savepoints[pos].1.clone();
        Ok(())
    }
    fn release(&mut self, savepoint: u32) {
        if let Some(pos) = self.savepoints.iter().position(|(id, _)| *id == savepoint) {
            self.savepoints.truncate(pos);
        }
    }
}

impl WriteView for MemWrite {
    fn snapshot_seq(&self) -> u64 {
        self.base_seq
    }
    fn commit(mut self: Box<Self>) -> Result<()> {
        if self.dirty && self.pages.count > 0 {
            let p1 = self.pages.get_mut(PageNo(1))?;
            let counter = get_u32(p1, OFFSET_CHANGE_COUNTER).wrapping_add(1);
            put_u32(p1, OFFSET_CHANGE_COUNTER, counter);
            put_u32(p1, OFFSET_VERSION_VALID_FOR, counter);
            put_u32(p1, OFFSET_WRITER_VERSION, WRITER_VERSION);
            let count = self.pages.count;
            put_u32(self.pages.get_mut(PageNo(1))?, OFFSET_PAGE_COUNT, count);
            self.savepoints.clear();
            let mut g = self
                .shared
                .committed
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            let seq = g.seq + 1;
            *g = Arc::new(Image {
                seq,
                pages: self.pages.clone(),
            });
        }
        self.release_lock();
        Ok(())
    }
    fn rollback(mut self: Box<Self>) {
        self.release_lock();
    }
}

impl Backend for MemBackend {
    fn begin_read(&self) -> Result<Box<dyn ReadView>> {
        Ok(Box::new(MemRead {
            shared: self.shared.clone(),
            image: self.shared.current(),
        }))
    }

    fn begin_write(&self, busy_timeout: Duration) -> Result<Box<dyn WriteView>> {
        self.shared.lock_writer(busy_timeout)?;
        let image = self.shared.current();
        Ok(Box::new(MemWrite {
            shared: self.shared.clone(),
            base_seq: image.seq,
            pages: image.pages.clone(),
            dirty: false,
            savepoints: Vec::new(),
            next_savepoint: 0,
            locked: true,
        }))
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
}
