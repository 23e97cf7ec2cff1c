//! `Database`, `Txn` and `Cursor`: the API the SQL layer codes against
//! (docs/storage-api.md).
//!
//! A [`Txn`] owns one page view from the backend — a read snapshot or the single writer's
//! private copy — behind an `Arc<Mutex<..>>`, so it is cheap to clone and every [`Cursor`]
//! holds a clone. Invariants:
//! - T1. Every modification through a `Txn` (insert, delete, create/drop/clear, header
//!   change, savepoint rollback) increments its change counter before returning, also when
//!   it fails part-way (a UNIQUE insert that finds a clash, and so writes nothing, leaves it).
//! - T2. A cursor remembers the counter value at which it was positioned together with its
//!   key (rowid, or the whole index key). When the counter has moved, the cursor re-seeks
//!   its key before doing anything else (SQLite's saveCursorPosition/restoreCursorPosition).
//!   If its entry was deleted, it lands on the successor: `next` returns that successor and
//!   `prev` the predecessor, as if the entry were still there.
//! - T3. After `commit` or `rollback` the transaction is finished: every further call is
//!   `Misuse`. A failed `upgrade` (`Busy`, `BusySnapshot`) leaves it a usable reader; a
//!   concurrent transaction's commit that fails with `Busy` leaves it open (commit again or
//!   roll back); any other commit failure (`Conflict` included) finishes it.
//! - T4. A concurrent transaction (`begin_concurrent`) records every cursor positioning as a
//!   read interval and every write as a key and a logical operation before returning
//!   (concurrent.rs); a lock-holding writer records its written keys. Both hand their write
//!   set to the history before their commit is published (concurrent.rs C1).
//! - T5. A concurrent transaction stays registered in the history (at or below its
//!   snapshot) from `begin_concurrent` until it commits, rolls back or is dropped
//!   (concurrent.rs C2).
//! - T6. `renew_read`, `renew_write` and `renew_concurrent` are the one way out of T3's
//!   finished state: the transaction begins again, as `Database::begin_read`,
//!   `begin_write` or `begin_concurrent` would begin a new one, on a snapshot taken then
//!   (never the old one), and its change counter moves as for a modification (T1), so a
//!   cursor still holding frames of the old snapshot re-seeks its key (T2) instead of
//!   reading them; nothing of the previous transaction carries over but allocations. Only
//!   the owner of every clone may renew (a connection's statement or explicit transaction,
//!   whose clones are its parked cursors): a holder that expects `Misuse` after T3 must
//!   not share the object.

use crate::btree::check::{check, TreeSpec};
use crate::btree::cursor::{payload_of, TreeCursor};
use crate::btree::page::{write_page, TABLE_LEAF};
use crate::btree::{build, delete, insert, tree};
use crate::concurrent::{
    ConcCommit, ConcTxn, ConcurrencyStats, Isolation, Key, Op, SharedHistory, WriteSet,
};
use crate::error::{PageNo, Result, StorageError};
use crate::header::{get_u32, init_header, put_u32, DbHeader, HeaderField};
use crate::mem::MemBackend;
use crate::options::{OpenOptions, Synchronous};
use crate::pages::{Backend, PageRead, ReadView, WriteView};
use crate::record::{KeyCompare, ValueRef};
use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering as AtomicOrdering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// Which kind of B-tree a root page holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BtreeKind {
    /// Keyed by rowid, rows in the leaves (SQLite "intkey" trees).
    Table,
    /// Keyed by a record, entries in every page.
    Index,
}

/// How a seek chooses its entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeekOp {
    Eq,
    Ge,
    Gt,
    Le,
    Lt,
}

/// A tree for [`Txn::integrity_check_with`]: root, kind, and the comparator whose order
/// the index entries must follow (None: structure only).
pub type CheckRoot = (PageNo, BtreeKind, Option<Arc<dyn KeyCompare>>);

/// The database header fields the SQL layer reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderInfo {
    pub schema_cookie: u32,
    pub user_version: u32,
    pub application_id: u32,
    pub page_size: u32,
    pub page_count: u32,
    pub freelist_count: u32,
    pub text_encoding: u32,
    pub default_cache_size: u32,
}

struct DbInner {
    backend: Arc<dyn Backend>,
    synchronous: Mutex<Synchronous>,
    read_only: bool,
    /// Write sets of recent commits and live concurrent snapshots (concurrent.rs C1, C2):
    /// the backend's, shared with every other `Database` over it (`SharedHistory`).
    history: Arc<SharedHistory>,
    /// Isolation of concurrent transactions begun from now on (`isolation_to_u8`).
    /// These two settings are read by every concurrent transaction and almost never
    /// written: as mutexes, each read wrote their cache line, which the writers' cores
    /// then passed around (`SharedHistory`'s measurement).
    isolation: AtomicU8,
    /// How long a concurrent transaction's commit waits for the writer lock, in ns.
    concurrent_busy_timeout_ns: AtomicU64,
    /// The page-cache bound each open connection asked for (`CacheAsk`), by ticket.
    cache_asks: Mutex<(u64, BTreeMap<u64, usize>)>,
}

/// Default wait for the writer lock at a concurrent transaction's commit.
const CONCURRENT_BUSY_TIMEOUT: Duration = Duration::from_secs(5);

fn isolation_to_u8(i: Isolation) -> u8 {
    match i {
        Isolation::Serializable => 0,
        Isolation::Snapshot => 1,
    }
}

fn u8_to_isolation(v: u8) -> Isolation {
    match v {
        0 => Isolation::Serializable,
        _ => Isolation::Snapshot,
    }
}

/// A wait in ns, saturated at `u64::MAX` (584 years).
fn duration_to_ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl DbInner {
    fn new(backend: Arc<dyn Backend>, synchronous: Synchronous, read_only: bool) -> DbInner {
        DbInner {
            history: backend.history(),
            backend,
            synchronous: Mutex::new(synchronous),
            read_only,
            isolation: AtomicU8::new(isolation_to_u8(Isolation::default())),
            concurrent_busy_timeout_ns: AtomicU64::new(duration_to_ns(CONCURRENT_BUSY_TIMEOUT)),
            cache_asks: Mutex::new((0, BTreeMap::new())),
        }
    }
}

/// A database: shared by all connections and threads. Cheap to clone.
#[derive(Clone)]
pub struct Database {
    inner: Arc<DbInner>,
}

/// How long `with_backend` waits for the writer lock to create page 1.
const INIT_TIMEOUT: Duration = Duration::from_secs(5);

impl Database {
    /// Wraps a backend. A backend with no pages gets page 1: the database header (page
    /// size from the backend) and the empty table leaf rooting `sqlite_schema`.
    pub fn with_backend(backend: Arc<dyn Backend>) -> Result<Database> {
        let r = backend.begin_read()?;
        if r.page_count() == 0 {
            drop(r);
            let mut w = backend.begin_write(INIT_TIMEOUT)?;
            if w.page_count() == 0 {
                let p = w.append_page()?;
                if p.0 != 1 {
                    return Err(StorageError::misuse("backend's first page is not page 1"));
                }
                let (page_size, usable) = (w.page_size(), w.usable_size());
                let page = w.page_mut(p)?;
                init_header(page, page_size as u32);
                write_page(page, p, TABLE_LEAF, usable, std::iter::empty(), 0)?;
                w.commit()?;
            } else {
                w.rollback();
            }
        } else {
            let p1 = r.page(PageNo(1))?;
            let h = DbHeader::parse(&p1)?;
            if h.page_size as usize != r.page_size() {
                return Err(StorageError::NotADatabase {
                    reason: "header page size differs from the backend's".into(),
                });
            }
        }
        Ok(Database {
            inner: Arc::new(DbInner::new(backend, Synchronous::Full, false)),
        })
    }

    /// Like [`with_backend`](Self::with_backend), keeping the options' `synchronous` and
    /// `read_only` (the file backend's `Database::open` uses this).
    pub fn with_backend_opts(backend: Arc<dyn Backend>, opts: &OpenOptions) -> Result<Database> {
        let db = Database::with_backend(backend)?;
        let inner = DbInner::new(db.inner.backend.clone(), opts.synchronous, opts.read_only);
        Ok(Database {
            inner: Arc::new(inner),
        })
    }

    /// A fresh in-memory database (":memory:").
    pub fn open_in_memory(opts: OpenOptions) -> Result<Database> {
        Database::with_backend_opts(Arc::new(MemBackend::new(opts.page_size)?), &opts)
    }

    /// True when `handles` values (this one among them) are all that hold this database,
    /// and no other `Database` shares its backend (lockfile L3): closing them closes the
    /// file (parlite's `PRAGMA page_size` re-creates a blank database only then).
    pub fn held_only_by(&self, handles: usize) -> bool {
        Arc::strong_count(&self.inner) == handles
            && Arc::strong_count(&self.inner.backend) == 1
            && !self.inner.backend.is_shared()
    }

    /// The backend this database runs on.
    pub fn backend(&self) -> &Arc<dyn Backend> {
        &self.inner.backend
    }

    /// Starts a read transaction on the latest committed snapshot.
    pub fn begin_read(&self) -> Result<Txn> {
        let view = self.inner.backend.begin_read()?;
        Ok(Txn::new(self.clone(), View::Read(view)))
    }

    /// Starts the (single) write transaction, waiting up to `busy_timeout` for the lock.
    pub fn begin_write(&self, busy_timeout: Duration) -> Result<Txn> {
        let txn = Txn::new(self.clone(), self.write_view(busy_timeout)?);
        txn.lock().start_recording_writes();
        Ok(txn)
    }

    /// The view of a write transaction (`begin_write`, `Txn::renew_write`).
    fn write_view(&self, busy_timeout: Duration) -> Result<View> {
        if self.inner.read_only {
            return Err(StorageError::ReadOnly {
                reason: "database opened read-only".into(),
            });
        }
        Ok(View::Write(self.inner.backend.begin_write(busy_timeout)?))
    }

    /// Starts an optimistic concurrent write transaction (docs/concurrency.md): it runs on
    /// its snapshot without the writer lock, beside other concurrent transactions and the
    /// lock-holding writer; its commit validates it against the commits made since its
    /// snapshot and fails with `Conflict` (rolled back) if it read or wrote what they wrote.
    pub fn begin_concurrent(&self) -> Result<Txn> {
        let (view, conc) = self.concurrent_view()?;
        let txn = Txn::new(self.clone(), view);
        txn.lock().conc = Some(conc);
        Ok(txn)
    }

    /// The view and the recorder of a concurrent transaction (`begin_concurrent`,
    /// `Txn::renew_concurrent`), its snapshot registered in the history (T5).
    fn concurrent_view(&self) -> Result<(View, Box<ConcTxn>)> {
        if self.inner.read_only {
            return Err(StorageError::ReadOnly {
                reason: "database opened read-only".into(),
            });
        }
        let isolation = self.concurrent_isolation();
        // C2: registered first, then the snapshot taken outside the history's mutex (held
        // across the backend's snapshot registration, it was the mutex both writers of
        // bdb_update --threads 2 --begin concurrent waited for most, perf).
        let registered = {
            let mut h = self.inner.history.lock();
            let registered = h.newest_seq().saturating_sub(1);
            h.register(registered);
            registered
        };
        let view = match self.inner.backend.begin_detached() {
            Ok(view) => view,
            Err(e) => {
                self.inner.history.lock().unregister(registered);
                return Err(e);
            }
        };
        let seq = view.snapshot_seq();
        debug_assert!(registered <= seq);
        let conc = ConcTxn::new(seq, registered, isolation);
        Ok((View::Write(view), Box::new(conc)))
    }

    /// Isolation of concurrent transactions begun from now on (default Serializable).
    pub fn set_concurrent_isolation(&self, isolation: Isolation) {
        self.inner
            .isolation
            .store(isolation_to_u8(isolation), AtomicOrdering::Relaxed);
    }

    pub fn concurrent_isolation(&self) -> Isolation {
        u8_to_isolation(self.inner.isolation.load(AtomicOrdering::Relaxed))
    }

    /// How long a concurrent transaction's commit waits for the writer lock (default 5 s).
    pub fn set_concurrent_busy_timeout(&self, busy_timeout: Duration) {
        self.inner
            .concurrent_busy_timeout_ns
            .store(duration_to_ns(busy_timeout), AtomicOrdering::Relaxed);
    }

    /// How long a concurrent commit waits for the writer lock to validate and apply.
    pub fn concurrent_busy_timeout(&self) -> Duration {
        Duration::from_nanos(
            self.inner
                .concurrent_busy_timeout_ns
                .load(AtomicOrdering::Relaxed),
        )
    }

    /// Commits of each kind and conflicts by root.
    pub fn concurrency_stats(&self) -> ConcurrencyStats {
        self.inner.history.lock().stats.clone()
    }

    /// Number of commit write sets the history keeps (its memory bound, concurrent.rs C2).
    pub fn concurrent_history_len(&self) -> usize {
        self.inner.history.lock().len()
    }

    pub fn checkpoint(&self) -> Result<()> {
        self.inner.backend.checkpoint()
    }

    /// `PRAGMA wal_checkpoint(mode)` (pager/checkpoint.rs): `busy|log|checkpointed`.
    pub fn checkpoint_mode(
        &self,
        mode: crate::pager::CheckpointMode,
        busy_timeout: Duration,
    ) -> Result<crate::pager::CheckpointOutcome> {
        self.inner.backend.checkpoint_mode(mode, busy_timeout)
    }

    /// Commit, fsync and checkpoint counters of the backend.
    pub fn stats(&self) -> crate::pager::PagerStats {
        self.inner.backend.stats()
    }

    pub fn set_synchronous(&self, s: Synchronous) {
        self.inner.backend.set_synchronous(s);
        *self
            .inner
            .synchronous
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = s;
    }

    pub fn synchronous(&self) -> Synchronous {
        *self
            .inner
            .synchronous
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// Registers a connection's `PRAGMA cache_size` (SQLite's units: pages, or KiB when
    /// negative). The connections of a database share one page cache, so its bound is the
    /// largest that an open connection asked for: each gets at least the cache it asked
    /// for. The ask ends when the returned `CacheAsk` is dropped.
    pub fn ask_cache_size(&self, cache_size: i64) -> Result<CacheAsk> {
        let pages = self.cache_pages(cache_size)?;
        let ticket = {
            let mut asks = lock(&self.inner.cache_asks);
            asks.0 += 1;
            let ticket = asks.0;
            asks.1.insert(ticket, pages);
            ticket
        };
        self.inner.apply_cache_asks();
        Ok(CacheAsk {
            db: self.clone(),
            ticket,
        })
    }

    /// `cache_size` in pages of this database, as SQLite counts them (KiB rounded down).
    fn cache_pages(&self, cache_size: i64) -> Result<usize> {
        if cache_size >= 0 {
            return Ok(usize::try_from(cache_size).unwrap_or(usize::MAX));
        }
        let page_size = self.inner.backend.begin_read()?.page_size() as u64;
        let bytes = cache_size.unsigned_abs().saturating_mul(1024);
        Ok(usize::try_from(bytes / page_size).unwrap_or(usize::MAX))
    }
}

impl DbInner {
    /// Gives the backend the largest open ask (none open: the bound stays).
    fn apply_cache_asks(&self) {
        let asks = lock(&self.cache_asks);
        if let Some(&pages) = asks.1.values().max() {
            // Under the asks' mutex, so that two connections' changes reach the backend in
            // the order they were made.
            self.backend.set_cache_pages_max(pages);
        }
    }
}

/// One connection's `PRAGMA cache_size` on a database, held while the connection is open
/// (`Database::ask_cache_size`).
pub struct CacheAsk {
    db: Database,
    ticket: u64,
}

impl CacheAsk {
    /// Changes this connection's ask (SQLite's units, as `ask_cache_size`).
    pub fn set(&self, cache_size: i64) -> Result<()> {
        let pages = self.db.cache_pages(cache_size)?;
        let inner = &self.db.inner;
        lock(&inner.cache_asks).1.insert(self.ticket, pages);
        inner.apply_cache_asks();
        Ok(())
    }
}

impl Drop for CacheAsk {
    fn drop(&mut self) {
        let inner = &self.db.inner;
        lock(&inner.cache_asks).1.remove(&self.ticket);
        inner.apply_cache_asks();
    }
}

enum View {
    Read(Box<dyn ReadView>),
    Write(Box<dyn WriteView>),
    Done,
}

impl View {
    /// The write view a modification goes through; misuse in a read or ended transaction.
    fn write(&mut self) -> Result<&mut dyn WriteView> {
        match self {
            View::Write(w) => Ok(&mut **w),
            View::Read(_) => Err(StorageError::misuse("write in a read transaction")),
            View::Done => Err(StorageError::misuse("transaction has ended")),
        }
    }
}

/// Index hints kept per transaction (`TxnInner::index_hints`): one per index of a table
/// with up to eight, so a row's writes to every index each find their own.
const INDEX_HINTS_MAX: usize = 8;

struct TxnInner {
    db: Database,
    view: View,
    /// T1: bumped by every modification.
    changes: u64,
    /// Reused buffers and descent stack for modifications.
    tc: TreeCursor,
    /// The leaf of the last table insert or delete, or of a row read for an UPDATE or
    /// DELETE (`Cursor::hint_write`): (root, change counter after it, leaf). Valid only
    /// while the counter has not moved since (insert.rs, `table_insert`), except that key
    /// writes to other trees carry it along (`keep_hint_past`).
    append_hint: Option<(PageNo, u64, insert::LeafHint)>,
    /// The leaf of the last write to each of a few index trees (insert.rs `IndexHint`):
    /// (root, change counter after it, leaf), valid as `append_hint` is, and carried past
    /// key writes to other trees the same way. At most `INDEX_HINTS_MAX`: a row's write
    /// touches each of its table's indexes in turn.
    index_hints: Vec<(PageNo, u64, insert::IndexHint)>,
    /// The largest rowid of each table `table_max_rowid` descended to in this transaction
    /// (None: the table is empty), so that a row-by-row INSERT descends once, not once a
    /// row. Invariant: an entry equals what a descent would return now. Only this
    /// transaction's writes can change its view (a concurrent one reads its snapshot), so
    /// `table_insert` advances the entry, a `table_delete` at or above it drops it, and
    /// every other tree-changing call (create, drop, clear, build, VACUUM's reset,
    /// ROLLBACK TO, which statement rollback also uses) drops them all.
    max_rowids: Vec<(PageNo, Option<i64>)>,
    /// Reusable buffers, taken from this thread's spare ones and given back at the end.
    bufs: TxnBuffers,
    /// A concurrent transaction's reads, writes and operations (T4).
    conc: Option<Box<ConcTxn>>,
    /// A lock-holding writer's written keys; `None`: not recorded (the history had not been
    /// enabled when it began), which leaves an opaque entry (concurrent.rs C3).
    locked_writes: Option<WriteSet>,
    /// This transaction's commit durability (`Txn::set_synchronous`); `None`: the database's.
    synchronous: Option<Synchronous>,
    /// The sequence number its commit published (`Txn::committed_seq`).
    committed_seq: Option<u64>,
}

impl Drop for TxnInner {
    fn drop(&mut self) {
        // T5.
        if let Some(c) = self.conc.take() {
            self.db.inner.history.lock().unregister(c.registered);
        }
        put_spare_buffers(std::mem::take(&mut self.bufs));
    }
}

/// A write transaction's reusable buffers, handed from one transaction to the next on the
/// same thread (`SPARE_BUFFERS`).
#[derive(Default)]
struct TxnBuffers {
    scratch: Vec<u8>,
    /// Where a row's cell is built (`insert::table_insert`).
    cell: Vec<u8>,
    /// A record buffer of a finished concurrent transaction's operation log, handed to the
    /// next one's first `table_insert_values` in exchange for the record it logs: the log
    /// keeps every record it is given (concurrent.rs C5), so without this each logged row
    /// was a fresh allocation and free (a 4 KiB malloc/free outside glibc's tcache per
    /// bdb_update CONCURRENT commit; BENCHMARKS.md, rowcopy branch).
    record: Vec<u8>,
}

thread_local! {
    /// The cell and scratch buffers of this thread's last finished transaction, for its
    /// next one: a transaction that writes a row builds its cell in `cell`, which grew from
    /// empty in every transaction (bdb_update CONCURRENT, callgrind: the growth and its free
    /// were ~600 of a commit's ~36k instructions, for a 4 KiB row).
    static SPARE_BUFFERS: std::cell::RefCell<TxnBuffers> =
        const {
            std::cell::RefCell::new(TxnBuffers {
                scratch: Vec::new(),
                cell: Vec::new(),
                record: Vec::new(),
            })
        };
}

impl TxnBuffers {
    /// Whether none holds memory (a reader's).
    fn is_unused(&self) -> bool {
        self.scratch.capacity() == 0 && self.cell.capacity() == 0 && self.record.capacity() == 0
    }
}

/// A buffer kept past this capacity would hold a large row's memory for good.
const SPARE_BUFFER_MAX_BYTES: usize = 64 << 10;

/// This thread's spare buffers, empty if it has none (taken by the transaction that runs
/// on them: two open at once on one thread share nothing).
fn take_spare_buffers() -> TxnBuffers {
    SPARE_BUFFERS
        .try_with(|b| b.try_borrow_mut().map(|mut b| std::mem::take(&mut *b)))
        .ok()
        .and_then(|r| r.ok())
        .unwrap_or_default()
}

/// Keeps a finished transaction's buffers for this thread's next write transaction; a
/// transaction that had none (a reader) leaves the spare ones as they are.
fn put_spare_buffers(bufs: TxnBuffers) {
    if bufs.is_unused() {
        return;
    }
    let TxnBuffers {
        scratch,
        cell,
        record,
    } = bufs;
    let keep = |b: Vec<u8>| {
        if b.capacity() > SPARE_BUFFER_MAX_BYTES {
            Vec::new()
        } else {
            b
        }
    };
    let _ = SPARE_BUFFERS.try_with(|b| {
        if let Ok(mut b) = b.try_borrow_mut() {
            *b = TxnBuffers {
                scratch: keep(scratch),
                cell: keep(cell),
                record: keep(record),
            };
        }
    });
}

/// Runs `$body` with `$v` bound to the transaction's view as a `PageRead` (either kind).
macro_rules! with_view {
    ($inner:expr, $v:ident => $body:expr) => {
        match &$inner.view {
            View::Read(r) => {
                let $v: &dyn ReadView = &**r;
                $body
            }
            View::Write(w) => {
                let $v: &dyn WriteView = &**w;
                $body
            }
            View::Done => Err(StorageError::misuse("transaction has ended")),
        }
    };
}

// After `with_view!`, which the cursor's methods use.
mod bulk;
mod copy;
mod cursor;
pub use cursor::Cursor;

impl TxnInner {
    fn start_recording_writes(&mut self) {
        if self.db.inner.history.lock().enabled {
            self.locked_writes = Some(WriteSet::default());
        }
    }

    /// The write set this transaction records into, if any (T4).
    fn write_set(&mut self) -> Option<&mut WriteSet> {
        match self.conc.as_mut() {
            Some(c) => Some(&mut c.writes),
            None => self.locked_writes.as_mut(),
        }
    }

    fn note_key(&mut self, root: PageNo, k: Key) {
        if let Some(ws) = self.write_set() {
            ws.key(root, k);
        }
    }

    /// `note_key` of an index entry, copied only when a write set records it: the copy
    /// made for nothing was an allocation and free per index write of every transaction
    /// (speedtest1 test 290: 315,000).
    fn note_index_key(&mut self, root: PageNo, key: &[u8]) {
        if let Some(ws) = self.write_set() {
            ws.key(root, Key::Idx(key.to_vec()));
        }
    }

    /// After a key write (insert or delete of one entry) to the tree at `root`, which
    /// touched only that tree's pages and free pages, an append hint for another tree is
    /// still that tree's right edge. Keeping it lets a table with indexes append each row
    /// of an INSERT ... SELECT without a descent (its index inserts moved the counter
    /// between the table's inserts, so the hint never held). Only a hint still valid
    /// before this write is carried (the caller bumped the counter once for it): one made
    /// stale by a write to its own tree must stay stale (a table delete followed by an
    /// index write revived a path to a freed page; bulk_build's small-page test).
    fn keep_hint_past(&mut self, root: PageNo) {
        let changes = self.changes;
        if let Some(h) = self.append_hint.as_mut() {
            if h.0 != root && h.1 + 1 == changes {
                h.1 = changes;
            }
        }
        for h in &mut self.index_hints {
            if h.0 != root && h.1 + 1 == changes {
                h.1 = changes;
            }
        }
    }

    /// The hint of the index at `root` for the write about to be made there, if still
    /// valid (taken: that write either hands back a new one or leaves none).
    fn take_index_hint(&mut self, root: PageNo) -> Option<insert::IndexHint> {
        let i = self.index_hints.iter().position(|h| h.0 == root)?;
        let (_, changes, hint) = self.index_hints.swap_remove(i);
        (changes == self.changes).then_some(hint)
    }

    /// Keeps `hint`, made by a write to the index at `root` under the current change
    /// counter, for the next write there.
    fn put_index_hint(&mut self, root: PageNo, hint: Option<insert::IndexHint>) {
        let Some(hint) = hint else {
            return;
        };
        if self.index_hints.len() >= INDEX_HINTS_MAX {
            self.index_hints.remove(0);
        }
        self.index_hints.push((root, self.changes, hint));
    }

    fn note_schema(&mut self, root: PageNo) {
        if let Some(ws) = self.write_set() {
            ws.schema.insert(root);
        }
    }

    fn note_op(&mut self, op: Op) {
        if let Some(c) = self.conc.as_mut() {
            c.ops.push(op);
        }
    }

    /// T6: begins this finished transaction again on `view`.
    fn renew(&mut self, view: View) {
        // A writer renewed from a reader builds its rows in this thread's spare buffers,
        // as a new one does (`Txn::new`).
        if matches!(view, View::Write(_)) && self.bufs.is_unused() {
            self.bufs = take_spare_buffers();
        }
        self.view = view;
        // Positions taken on the old snapshot are stale, as after a modification.
        self.changes += 1;
        self.tc.invalidate();
        self.append_hint = None;
        self.index_hints.clear();
        self.max_rowids.clear();
        // `commit` and `rollback` took it (T5), so no snapshot stays registered.
        debug_assert!(self.conc.is_none());
        self.locked_writes = None;
        self.synchronous = None;
        self.committed_seq = None;
    }

    fn writer(&mut self) -> Result<&mut dyn WriteView> {
        match &mut self.view {
            View::Write(w) => Ok(&mut **w),
            View::Read(_) => Err(StorageError::misuse("write in a read transaction")),
            View::Done => Err(StorageError::misuse("transaction has ended")),
        }
    }
}

/// A transaction: a read snapshot or the writer. Cheap to clone (cursors hold clones).
#[derive(Clone)]
pub struct Txn {
    inner: Arc<Mutex<TxnInner>>,
}

impl Txn {
    fn new(db: Database, view: View) -> Txn {
        let bufs = match view {
            View::Write(_) => take_spare_buffers(),
            View::Read(_) | View::Done => TxnBuffers::default(),
        };
        Txn {
            inner: Arc::new(Mutex::new(TxnInner {
                db,
                view,
                changes: 0,
                tc: TreeCursor::new(PageNo(1), true),
                append_hint: None,
                index_hints: Vec::new(),
                max_rowids: Vec::new(),
                bufs,
                conc: None,
                locked_writes: None,
                synchronous: None,
                committed_seq: None,
            })),
        }
    }

    /// Begins this finished transaction again as a read transaction on a fresh snapshot
    /// (T6), keeping its allocations: a connection that reads in autocommit mode renews one
    /// `Txn` per statement instead of allocating and freeing four blocks (~0.5k
    /// instructions of a reused point SELECT; BENCHMARKS.md "stmtrun"). `Misuse` while it
    /// has not ended; on a backend error it stays finished.
    pub fn renew_read(&self) -> Result<()> {
        let mut g = self.finished()?;
        let view = g.db.inner.backend.begin_read()?;
        g.renew(View::Read(view));
        Ok(())
    }

    /// `renew_read` as the writer (`Database::begin_write`), waiting up to `busy_timeout`
    /// for the writer lock: a connection's explicit transactions reuse one `Txn` (T6),
    /// instead of allocating one and freeing the last (~0.7k instructions of a bdb_update
    /// commit, callgrind: two allocations and frees, the last one's teardown).
    pub fn renew_write(&self, busy_timeout: Duration) -> Result<()> {
        let mut g = self.finished()?;
        let view = g.db.write_view(busy_timeout)?;
        g.renew(view);
        g.start_recording_writes();
        Ok(())
    }

    /// `renew_write` as a concurrent transaction (`Database::begin_concurrent`).
    pub fn renew_concurrent(&self) -> Result<()> {
        let mut g = self.finished()?;
        let (view, conc) = g.db.concurrent_view()?;
        g.renew(view);
        g.conc = Some(conc);
        Ok(())
    }

    /// The state of a finished transaction (T3), for a renewal (T6); `Misuse` otherwise.
    fn finished(&self) -> Result<MutexGuard<'_, TxnInner>> {
        let g = self.lock();
        if !matches!(g.view, View::Done) {
            return Err(StorageError::misuse("transaction has not ended"));
        }
        Ok(g)
    }

    /// How durable this transaction's commit must be before `commit` returns, whatever the
    /// database's `set_synchronous` says (per-connection `PRAGMA synchronous`; the log is a
    /// chain, so a `Full` commit also makes every earlier commit durable).
    pub fn set_synchronous(&self, mode: Synchronous) {
        self.lock().synchronous = Some(mode);
    }

    /// When this write transaction moves its changed pages out of memory (`PRAGMA
    /// cache_spill`, `WriteView::set_spill_pages`): past `pages` of them; `None`: never.
    /// For the transaction's current view; a read transaction ignores it.
    pub fn set_spill_pages(&self, pages: Option<usize>) {
        if let View::Write(w) = &mut self.lock().view {
            w.set_spill_pages(pages);
        }
    }

    fn lock(&self) -> MutexGuard<'_, TxnInner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The commit sequence number of the snapshot this transaction reads (None once ended).
    pub fn snapshot_seq(&self) -> Option<u64> {
        match &self.lock().view {
            View::Read(r) => Some(r.snapshot_seq()),
            View::Write(w) => Some(w.snapshot_seq()),
            View::Done => None,
        }
    }

    /// The sequence number this transaction's `commit` published: None before it committed,
    /// and for a commit that changed nothing (a read, or a writer with nothing to publish).
    /// Sequence numbers grow by one per published commit, so a connection that knows its
    /// own can tell whether anyone else committed between two snapshots.
    pub fn committed_seq(&self) -> Option<u64> {
        self.lock().committed_seq
    }

    pub fn is_write(&self) -> bool {
        matches!(self.lock().view, View::Write(_))
    }

    /// The change counter (T1): equal before and after a call only when the call changed
    /// nothing, failed calls included. A statement run without a savepoint compares it to
    /// tell a failure that wrote nothing from one that must end the transaction.
    pub fn change_count(&self) -> u64 {
        self.lock().changes
    }

    /// Read → write (SQLite WAL DEFERRED semantics): `Busy` after the timeout,
    /// `BusySnapshot` if a commit happened since this snapshot; either way the transaction
    /// stays a usable read transaction.
    pub fn upgrade(&self, busy_timeout: Duration) -> Result<()> {
        let mut g = self.lock();
        match std::mem::replace(&mut g.view, View::Done) {
            View::Write(w) => {
                g.view = View::Write(w);
                Ok(())
            }
            View::Done => Err(StorageError::misuse("transaction has ended")),
            View::Read(r) => {
                if g.db.inner.read_only {
                    g.view = View::Read(r);
                    return Err(StorageError::ReadOnly {
                        reason: "database opened read-only".into(),
                    });
                }
                // Take the writer lock first and compare snapshots, rather than handing the
                // read view to `Backend::upgrade` (which consumes it): this way a `Busy` or
                // `BusySnapshot` leaves the read transaction intact, as in SQLite. A writer
                // whose snapshot has the reader's sequence number sees the same pages.
                let w = match g.db.inner.backend.begin_write(busy_timeout) {
                    Ok(w) => w,
                    Err(e) => {
                        g.view = View::Read(r);
                        return Err(e);
                    }
                };
                if w.snapshot_seq() != r.snapshot_seq() {
                    w.rollback();
                    g.view = View::Read(r);
                    return Err(StorageError::BusySnapshot {
                        reason: "a commit happened after this transaction's snapshot".into(),
                    });
                }
                drop(r);
                g.view = View::Write(w);
                g.start_recording_writes();
                Ok(())
            }
        }
    }

    /// Sets the isolation of this concurrent transaction (`Misuse` for other kinds).
    pub fn set_isolation(&self, isolation: Isolation) -> Result<()> {
        match self.lock().conc.as_mut() {
            Some(c) => {
                c.isolation = isolation;
                Ok(())
            }
            None => Err(StorageError::misuse(
                "isolation applies to concurrent transactions only",
            )),
        }
    }

    /// Whether this is a concurrent transaction (`begin_concurrent`).
    pub fn is_concurrent(&self) -> bool {
        self.lock().conc.is_some()
    }

    /// The schema cookie (4 bytes at offset 40 of page 1), read without decoding the rest
    /// of the header: every statement compares it with its connection's cached schema, and
    /// `header` cost ~0.2k instructions a statement (BENCHMARKS.md, stmtstore branch). Like
    /// `header`, it is a read of the header for a concurrent transaction's conflict check.
    pub fn schema_cookie(&self) -> Result<u32> {
        let mut g = self.lock();
        if let Some(c) = g.conc.as_mut() {
            c.header_read = true;
        }
        with_view!(g, v => {
            let p1 = v.page(PageNo(1))?;
            Ok(get_u32(&p1, HeaderField::SchemaCookie.offset()))
        })
    }

    /// Pages in the database as this transaction sees it, its own growth included. Not a
    /// read of the header: a concurrent transaction does not conflict over it.
    pub fn page_count(&self) -> Result<u32> {
        let g = self.lock();
        with_view!(g, v => Ok(v.page_count()))
    }

    pub fn header(&self) -> Result<HeaderInfo> {
        let mut g = self.lock();
        if let Some(c) = g.conc.as_mut() {
            c.header_read = true;
        }
        with_view!(g, v => {
            let p1 = v.page(PageNo(1))?;
            Ok(HeaderInfo {
                schema_cookie: get_u32(&p1, HeaderField::SchemaCookie.offset()),
                user_version: get_u32(&p1, HeaderField::UserVersion.offset()),
                application_id: get_u32(&p1, HeaderField::ApplicationId.offset()),
                page_size: v.page_size() as u32,
                page_count: v.page_count(),
                freelist_count: get_u32(&p1, crate::header::OFFSET_FREELIST_COUNT),
                text_encoding: get_u32(&p1, crate::header::OFFSET_TEXT_ENCODING),
                default_cache_size: get_u32(&p1, HeaderField::DefaultCacheSize.offset()),
            })
        })
    }

    pub fn set_header_field(&self, f: HeaderField, value: u32) -> Result<()> {
        let mut g = self.lock();
        put_u32(g.writer()?.page_mut(PageNo(1))?, f.offset(), value);
        g.changes += 1;
        if let Some(ws) = g.write_set() {
            ws.header.insert(f.offset());
        }
        g.note_op(Op::SetHeader(f.offset(), value));
        Ok(())
    }

    pub fn create_btree(&self, kind: BtreeKind) -> Result<PageNo> {
        let mut g = self.lock();
        let root = tree::create(g.writer()?, kind == BtreeKind::Table)?;
        g.changes += 1;
        g.max_rowids.clear();
        g.note_schema(root);
        g.note_op(Op::Create(kind == BtreeKind::Table, root));
        Ok(root)
    }

    /// VACUUM's reset (lang_vacuum.html): page 1 becomes an empty schema leaf (its database
    /// header kept), the freelist is emptied and the database truncated to that one page,
    /// so the trees rebuilt next land on pages 2, 3, ... with none free. Every other tree
    /// is gone: the caller has read what it rebuilds first. Only a transaction holding the
    /// writer lock may do this (a concurrent one could not replay it); concurrent
    /// transactions validating against this commit find it opaque (C3) and fail.
    pub fn reset_to_empty_schema(&self) -> Result<()> {
        let mut g = self.lock();
        if g.conc.is_some() {
            return Err(StorageError::misuse(
                "VACUUM needs the writer lock, not a concurrent transaction",
            ));
        }
        let w = g.writer()?;
        let usable = w.usable_size();
        let p1 = w.page_mut(PageNo(1))?;
        crate::btree::page::init_page(p1, PageNo(1), crate::btree::page::TABLE_LEAF, usable);
        put_u32(p1, crate::header::OFFSET_FREELIST_TRUNK, 0);
        put_u32(p1, crate::header::OFFSET_FREELIST_COUNT, 0);
        w.truncate(1)?;
        g.changes += 1;
        g.max_rowids.clear();
        if let Some(ws) = g.write_set() {
            ws.opaque = true;
        }
        Ok(())
    }

    /// Frees every page of the tree, overflow pages included.
    pub fn drop_btree(&self, root: PageNo) -> Result<()> {
        let mut g = self.lock();
        tree::destroy(g.writer()?, root, false)?;
        g.changes += 1;
        g.max_rowids.clear();
        g.note_schema(root);
        g.note_op(Op::Drop(root));
        Ok(())
    }

    /// Deletes every entry, keeping the root page; returns how many there were.
    pub fn clear_btree(&self, root: PageNo) -> Result<u64> {
        let mut g = self.lock();
        let n = tree::destroy(g.writer()?, root, true)?;
        g.changes += 1;
        g.max_rowids.clear();
        g.note_schema(root);
        g.note_op(Op::Clear(root));
        Ok(n)
    }

    /// Number of entries in the tree.
    pub fn count(&self, root: PageNo) -> Result<u64> {
        let mut g = self.lock();
        if let Some(c) = g.conc.as_mut() {
            c.read(root, None, None, None);
        }
        with_view!(g, v => tree::count(v, root))
    }

    /// A cursor over the tree at `root`; `cmp` is required for index trees.
    pub fn cursor(
        &self,
        root: PageNo,
        kind: BtreeKind,
        cmp: Option<Arc<dyn KeyCompare>>,
    ) -> Result<Cursor> {
        if kind == BtreeKind::Index && cmp.is_none() {
            return Err(StorageError::misuse(
                "an index cursor needs a key comparator",
            ));
        }
        let record_reads = {
            let g = self.lock();
            if matches!(g.view, View::Done) {
                return Err(StorageError::misuse("transaction has ended"));
            }
            g.conc.is_some()
        };
        Ok(Cursor {
            record_reads,
            txn: self.clone(),
            tc: TreeCursor::new(root, kind == BtreeKind::Table),
            cmp,
            seen: 0,
            saved_rowid: 0,
            saved_key: Vec::new(),
            key_in_frame: false,
            scratch: Vec::new(),
        })
    }

    /// Inserts the row, replacing any row with the same rowid.
    pub fn table_insert(&self, root: PageNo, rowid: i64, record: &[u8]) -> Result<()> {
        self.insert_record(root, rowid, Cow::Borrowed(record))
            .map(drop)
    }

    /// `table_insert` of the record of `values`, encoded straight into the row's cell when
    /// the row is rewritten in place (btree `insert::Payload::Values`); `buf` is handed
    /// back unused. A concurrent transaction's log keeps a copy of each record (C5): it
    /// builds the record in `buf` and keeps it (logging a borrowed record copied it, a
    /// 4 KiB allocation and copy per bdb_update commit with its 3.9 kB rows), handing back
    /// instead the record buffer its thread's previous concurrent transaction left
    /// (`TxnBuffers::record`), if it has not done so already.
    pub fn table_insert_values(
        &self,
        root: PageNo,
        rowid: i64,
        values: &[ValueRef],
        mut buf: Vec<u8>,
    ) -> Result<Option<Vec<u8>>> {
        let mut g = self.lock();
        let g = &mut *g;
        if g.conc.is_none() {
            insert_payload(g, root, rowid, insert::Payload::Values(values))?;
            return Ok(Some(buf));
        }
        buf.clear();
        crate::record::encode_into(values, &mut buf);
        insert_record(g, root, rowid, Cow::Owned(buf))
    }

    fn insert_record(
        &self,
        root: PageNo,
        rowid: i64,
        record: Cow<'_, [u8]>,
    ) -> Result<Option<Vec<u8>>> {
        insert_record(&mut self.lock(), root, rowid, record)
    }

    /// Deletes the row; false if there was none.
    pub fn table_delete(&self, root: PageNo, rowid: i64) -> Result<bool> {
        let mut g = self.lock();
        let g = &mut *g;
        let v = g.view.write()?;
        // This table's hint is taken (a write here makes it stale whatever happens);
        // another table's is carried past this write when it yields none of its own.
        let hint = match &g.append_hint {
            Some((r, changes, _)) if *r == root && *changes == g.changes => {
                g.append_hint.take().map(|h| h.2)
            }
            _ => None,
        };
        g.tc.root = root;
        g.tc.table = true;
        g.changes += 1;
        let (found, next_hint) = delete::table_delete(v, &mut g.tc, rowid, hint)?;
        g.max_rowids
            .retain(|&(r, m)| r != root || m.is_some_and(|m| rowid < m));
        g.keep_hint_past(root);
        if let Some(h) = next_hint {
            g.append_hint = Some((root, g.changes, h));
        }
        g.note_key(root, Key::Row(rowid));
        g.note_op(Op::TableDelete(root, rowid));
        Ok(found)
    }

    /// `table_delete` that hands back the deleted row's record (None, with nothing
    /// written, when there is no such row), from one descent (delete.rs `table_take`). A
    /// concurrent transaction records the row as read (its content decides what the caller
    /// does next) and deleted.
    pub fn table_take(&self, root: PageNo, rowid: i64) -> Result<Option<Vec<u8>>> {
        let mut g = self.lock();
        let g = &mut *g;
        if let Some(c) = g.conc.as_mut() {
            c.read(root, Some(Key::Row(rowid)), Some(Key::Row(rowid)), None);
        }
        let v = g.view.write()?;
        g.tc.root = root;
        g.tc.table = true;
        let mut record = Vec::new();
        if !delete::table_take(v, &mut g.tc, rowid, &mut record)? {
            g.tc.invalidate();
            return Ok(None);
        }
        g.changes += 1;
        g.max_rowids
            .retain(|&(r, m)| r != root || m.is_some_and(|m| rowid < m));
        g.keep_hint_past(root);
        g.note_key(root, Key::Row(rowid));
        g.note_op(Op::TableDelete(root, rowid));
        Ok(Some(record))
    }

    /// Replaces the index entry comparing equal to `old` by `new` (insert.rs
    /// `index_rekey`: in place when `new` sorts where `old` lies); false, with nothing
    /// written, when there is no such entry. Recorded as `old`'s delete and `new`'s insert,
    /// the two writes it stands for, so a concurrent transaction replays it as such.
    pub fn index_rekey(
        &self,
        root: PageNo,
        old: &[u8],
        new: &[u8],
        cmp: &dyn KeyCompare,
    ) -> Result<bool> {
        let mut g = self.lock();
        let g = &mut *g;
        let shared = conc_comparator(g, cmp)?;
        let v = g.view.write()?;
        g.tc.root = root;
        g.tc.table = false;
        g.changes += 1;
        let found = insert::index_rekey(
            v,
            &mut g.tc,
            old,
            new,
            cmp,
            &mut g.bufs.scratch,
            &mut g.bufs.cell,
        )?;
        g.keep_hint_past(root);
        if !found {
            return Ok(false);
        }
        g.note_index_key(root, old);
        g.note_index_key(root, new);
        if let Some(c) = shared {
            g.note_op(Op::IndexDelete(root, old.to_vec(), c.clone()));
            g.note_op(Op::IndexInsert(root, new.to_vec(), c));
        }
        Ok(true)
    }

    /// Inserts an index entry (an entry comparing equal is replaced).
    pub fn index_insert(&self, root: PageNo, key: &[u8], cmp: &dyn KeyCompare) -> Result<()> {
        let mut g = self.lock();
        let g = &mut *g;
        let shared = conc_comparator(g, cmp)?;
        let hint = g.take_index_hint(root);
        let v = g.view.write()?;
        g.tc.root = root;
        g.tc.table = false;
        g.changes += 1;
        let next = insert::index_insert(
            v,
            &mut g.tc,
            key,
            cmp,
            &mut g.bufs.scratch,
            &mut g.bufs.cell,
            hint,
        )?;
        g.keep_hint_past(root);
        g.put_index_hint(root, next);
        g.note_index_key(root, key);
        if let Some(c) = shared {
            g.note_op(Op::IndexInsert(root, key.to_vec(), c));
        }
        Ok(())
    }

    /// Inserts `key` into a UNIQUE index unless an entry equal to `prefix` (compared over
    /// the prefix's fields; no NULL in it) exists, in one descent (insert.rs); false, with
    /// nothing written, when one exists. A concurrent transaction records the prefix as
    /// read (so a commit adding that prefix meanwhile conflicts) and the key as written.
    pub fn index_insert_unique(
        &self,
        root: PageNo,
        key: &[u8],
        prefix: &[u8],
        cmp: &dyn KeyCompare,
    ) -> Result<bool> {
        let mut g = self.lock();
        let g = &mut *g;
        let shared = note_prefix_read(g, root, prefix, cmp)?;
        let hint = g.take_index_hint(root);
        let v = g.view.write()?;
        g.tc.root = root;
        g.tc.table = false;
        // T1: a failure may come after pages were written (a balance), so it counts.
        let (inserted, next) = insert::index_insert_unique(
            v,
            &mut g.tc,
            key,
            prefix,
            cmp,
            &mut g.bufs.scratch,
            &mut g.bufs.cell,
            hint,
        )
        .inspect_err(|_| g.changes += 1)?;
        if !inserted {
            return Ok(false);
        }
        g.changes += 1;
        g.keep_hint_past(root);
        g.put_index_hint(root, next);
        g.note_index_key(root, key);
        if let Some(c) = shared {
            g.note_op(Op::IndexInsert(root, key.to_vec(), c));
        }
        Ok(true)
    }

    /// REPLACE's write of `key` into a UNIQUE index (insert.rs `index_replace_unique`):
    /// inserted when no entry equals `prefix`, else the equal entry is overwritten where
    /// it lies when it is a leaf cell (`Replaced` with its old key), else nothing is written
    /// (`Clash`). An overwrite is recorded as the old key's delete and the new key's insert,
    /// the two writes it stands for, so a concurrent transaction replays it as such.
    pub fn index_replace_unique(
        &self,
        root: PageNo,
        key: &[u8],
        prefix: &[u8],
        cmp: &dyn KeyCompare,
    ) -> Result<insert::UniqueWrite> {
        let mut g = self.lock();
        let g = &mut *g;
        let shared = note_prefix_read(g, root, prefix, cmp)?;
        let v = g.view.write()?;
        g.tc.root = root;
        g.tc.table = false;
        let done = insert::index_replace_unique(
            v,
            &mut g.tc,
            key,
            prefix,
            cmp,
            &mut g.bufs.scratch,
            &mut g.bufs.cell,
        )
        .inspect_err(|_| g.changes += 1)?;
        if let insert::UniqueWrite::Replaced(old) = &done {
            g.changes += 1;
            g.note_index_key(root, old);
            if let Some(c) = &shared {
                g.note_op(Op::IndexDelete(root, old.clone(), c.clone()));
            }
        }
        if done != insert::UniqueWrite::Clash {
            g.changes += 1;
            g.keep_hint_past(root);
            g.note_index_key(root, key);
            if let Some(c) = shared {
                g.note_op(Op::IndexInsert(root, key.to_vec(), c));
            }
        }
        Ok(done)
    }

    /// The largest rowid of the table at `root` (None when it is empty): a new rowid's
    /// basis, once per row of an INSERT without one. The transaction's own tree cursor
    /// serves it; a fresh `Cursor` for every row cost ~2,500 instructions (callgrind,
    /// speedtest1 test 290). A concurrent transaction records the read from that rowid to
    /// the end (the whole tree when it is empty), as `Cursor::last` does.
    ///
    /// The answer is remembered per table for the rest of the transaction (`max_rowids`):
    /// later calls cost a short scan of a few entries instead of a descent (~1,000
    /// instructions in memory). The read recorded at the descent, from that rowid to the
    /// end, covers every later answer, which only this transaction's inserts can raise.
    pub fn table_max_rowid(&self, root: PageNo) -> Result<Option<i64>> {
        let mut g = self.lock();
        let g = &mut *g;
        if let Some(&(_, m)) = g.max_rowids.iter().find(|e| e.0 == root) {
            return Ok(m);
        }
        g.tc.root = root;
        g.tc.table = true;
        let tc = &mut g.tc;
        let r = with_view!(g, v => {
            if tc.last(v)? && tc.valid {
                Ok(Some(tc.rowid(v.usable_size())?))
            } else {
                Ok(None)
            }
        });
        g.tc.invalidate();
        if let Some(c) = g.conc.as_mut() {
            let lo = match &r {
                Ok(Some(max)) => Some(Key::Row(*max)),
                _ => None,
            };
            c.read(root, lo, None, None);
        }
        if let Ok(m) = &r {
            if g.max_rowids.len() >= 8 {
                g.max_rowids.remove(0);
            }
            g.max_rowids.push((root, *m));
        }
        r
    }

    /// Calls `found` with each entry of the index at `root` that compares equal to `prefix`
    /// over the prefix's fields, in key order, from one descent of the transaction's own
    /// tree cursor: a UNIQUE index's conflict probe, once per row of an INSERT OR REPLACE.
    /// Building a `Cursor` and an iterator for it cost ~9,000 instructions a probe
    /// (callgrind, speedtest1 test 290). A concurrent transaction records the prefix as
    /// read (so a commit adding such an entry meanwhile conflicts), as `index_insert_unique`.
    pub fn index_find_prefix(
        &self,
        root: PageNo,
        prefix: &[u8],
        cmp: &dyn KeyCompare,
        found: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<()> {
        let mut g = self.lock();
        let g = &mut *g;
        note_prefix_read(g, root, prefix, cmp)?;
        g.tc.root = root;
        g.tc.table = false;
        let (tc, scratch) = (&mut g.tc, &mut g.bufs.scratch);
        let r = with_view!(g, v => {
            let usable = v.usable_size();
            let mut ok = tc.seek_index(v, prefix, false, cmp, scratch)?;
            while ok && tc.valid {
                let (frame, info) = tc.current(usable)?;
                let key = payload_of(v, frame, &info, scratch)?;
                if cmp.compare(key, prefix)? != Ordering::Equal {
                    break;
                }
                found(key)?;
                ok = tc.next(v)?;
            }
            Ok(())
        });
        // The frames hold page references; a later write must not copy those pages.
        g.tc.invalidate();
        r
    }

    /// Deletes the index entry comparing equal to `key`; false if there was none.
    pub fn index_delete(&self, root: PageNo, key: &[u8], cmp: &dyn KeyCompare) -> Result<bool> {
        let mut g = self.lock();
        let g = &mut *g;
        let shared = conc_comparator(g, cmp)?;
        let hint = g.take_index_hint(root);
        let v = g.view.write()?;
        g.tc.root = root;
        g.tc.table = false;
        g.changes += 1;
        let (found, next) =
            delete::index_delete(v, &mut g.tc, key, cmp, &mut g.bufs.scratch, hint)?;
        g.keep_hint_past(root);
        g.put_index_hint(root, next);
        g.note_index_key(root, key);
        if let Some(c) = shared {
            g.note_op(Op::IndexDelete(root, key.to_vec(), c));
        }
        Ok(found)
    }

    /// Fills the empty tree at `root` bottom up (btree/build.rs) with `entries`: table rows
    /// `(rowid, record)` in strictly ascending rowid order, or index keys `(_, key)` in
    /// strictly ascending `cmp` order (`cmp` given for index trees). An entry out of order
    /// is `Misuse` (the statement's savepoint takes back what was written). The writes are
    /// recorded as row and key inserts (T4), so a concurrent transaction replays them as
    /// it would replay single inserts. Returns the number of entries.
    pub fn build_btree<'a>(
        &self,
        root: PageNo,
        cmp: Option<&dyn KeyCompare>,
        entries: &mut dyn Iterator<Item = (i64, &'a [u8])>,
    ) -> Result<u64> {
        let mut g = self.lock();
        let g = &mut *g;
        let shared = match cmp {
            Some(c) => conc_comparator(g, c)?,
            None => None,
        };
        let recording = g.write_set().is_some();
        let v = g.view.write()?;
        g.changes += 1;
        g.max_rowids.clear();
        let mut b = build::Builder::new(&*v, root, cmp.is_none())?;
        let mut prev: Option<(i64, &[u8])> = None;
        let mut n = 0u64;
        let mut keys = Vec::new();
        let mut ops = Vec::new();
        for (rowid, payload) in entries {
            if let Some((pr, pk)) = prev {
                let ordered = match cmp {
                    None => pr < rowid,
                    Some(c) => c.compare(pk, payload)? == Ordering::Less,
                };
                if !ordered {
                    return Err(StorageError::misuse("bulk build entries out of order"));
                }
            }
            b.push(v, rowid, payload)?;
            prev = Some((rowid, payload));
            n += 1;
            if recording {
                keys.push(match cmp {
                    None => Key::Row(rowid),
                    Some(_) => Key::Idx(payload.to_vec()),
                });
            }
            if g.conc.is_some() {
                ops.push(match (&shared, cmp) {
                    (Some(c), Some(_)) => Op::IndexInsert(root, payload.to_vec(), c.clone()),
                    _ => Op::TableInsert(root, rowid, payload.to_vec()),
                });
            }
        }
        b.finish(v)?;
        for k in keys {
            g.note_key(root, k);
        }
        for op in ops {
            g.note_op(op);
        }
        Ok(n)
    }

    pub fn savepoint(&self) -> Result<u32> {
        let mut g = self.lock();
        let id = g.writer()?.savepoint();
        if let Some(c) = g.conc.as_mut() {
            let n = c.ops.len();
            c.savepoints.push((id, n));
        }
        Ok(id)
    }

    /// Restores the state at `savepoint`, which stays open.
    pub fn rollback_to(&self, sp: u32) -> Result<()> {
        let mut g = self.lock();
        g.writer()?.rollback_to(sp)?;
        g.changes += 1;
        g.max_rowids.clear();
        // The operations after the savepoint are undone; its reads and written keys stay
        // recorded (conservative: spurious conflicts only).
        if let Some(c) = g.conc.as_mut() {
            if let Some(pos) = c.savepoints.iter().position(|&(id, _)| id == sp) {
                let n = c.savepoints[pos].1;
                c.ops.truncate(n);
                c.savepoints.truncate(pos + 1);
            }
        }
        Ok(())
    }

    pub fn release(&self, sp: u32) -> Result<()> {
        let mut g = self.lock();
        g.writer()?.release(sp);
        if let Some(c) = g.conc.as_mut() {
            if let Some(pos) = c.savepoints.iter().position(|&(id, _)| id == sp) {
                c.savepoints.truncate(pos);
            }
        }
        Ok(())
    }

    /// Commits a write transaction; a read transaction just ends.
    pub fn commit(&self) -> Result<()> {
        let mut g = self.lock();
        let mut view = std::mem::replace(&mut g.view, View::Done);
        if let (Some(mode), View::Write(w)) = (g.synchronous, &mut view) {
            w.set_synchronous(mode);
        }
        if let Some(mut c) = g.conc.take() {
            let mut slot = match view {
                View::Write(w) => Some(w),
                View::Read(_) | View::Done => None,
            };
            // `g.db` borrowed, not cloned: a clone is a write to the `Database`'s reference
            // count, a cache line every connection's commits share.
            let r = commit_concurrent(&g.db, &mut slot, &mut c, g.synchronous);
            if let (Err(StorageError::Busy { .. }), Some(w)) = (&r, slot.take()) {
                // T3: the writer lock was not had in time; the transaction stays open, as
                // SQLite's COMMIT after SQLITE_BUSY.
                g.view = View::Write(w);
                g.conc = Some(c);
                return r.map(|_| ());
            }
            if let Some(w) = slot {
                w.rollback();
            }
            // T5: only now, after validation, may the entries it needed go; in the same
            // section as the commit's counters (`SharedHistory`).
            let mut h = g.db.inner.history.lock();
            h.unregister(c.registered);
            if let Ok((_, how)) = &r {
                h.stats.count(*how);
            }
            drop(h);
            g.bufs.record = c.take_record_buffer();
            return r.map(|(seq, _)| g.committed_seq = seq);
        }
        match view {
            View::Write(w) => {
                // C1: the entry goes in before the commit is published (the writer lock is
                // held, so the commit's sequence number is the snapshot's + 1).
                let entry_seq = w.snapshot_seq() + 1;
                match g.locked_writes.take() {
                    Some(ws) => g.db.inner.history.push(entry_seq, ws),
                    None => g.db.inner.history.push_opaque(entry_seq),
                }
                let seq = w.commit_seq();
                w.commit()?;
                g.committed_seq = seq;
                g.db.inner.history.lock().stats.locked_commits += 1;
                Ok(())
            }
            View::Read(_) => Ok(()),
            View::Done => Err(StorageError::misuse("transaction has ended")),
        }
    }

    pub fn rollback(&self) {
        let mut g = self.lock();
        if let View::Write(w) = std::mem::replace(&mut g.view, View::Done) {
            w.rollback();
        }
        if let Some(mut c) = g.conc.take() {
            g.db.inner.history.lock().unregister(c.registered);
            g.bufs.record = c.take_record_buffer();
        }
    }

    /// Structural check of the whole file: `roots` must list every tree (page 1, the
    /// schema table, is added if missing). Returns SQLite-worded messages; empty means ok.
    pub fn integrity_check(
        &self,
        roots: &[(PageNo, BtreeKind)],
        max_errors: usize,
    ) -> Result<Vec<String>> {
        let specs: Vec<CheckRoot> = roots.iter().map(|&(r, k)| (r, k, None)).collect();
        self.integrity_check_with(&specs, max_errors)
    }

    /// Like [`integrity_check`](Self::integrity_check), also checking the key order of
    /// index trees for which a comparator is given.
    pub fn integrity_check_with(
        &self,
        roots: &[CheckRoot],
        max_errors: usize,
    ) -> Result<Vec<String>> {
        let mut specs: Vec<TreeSpec> = Vec::with_capacity(roots.len() + 1);
        if !roots.iter().any(|r| r.0 .0 == 1) {
            specs.push(TreeSpec {
                root: PageNo(1),
                table: true,
                cmp: None,
            });
        }
        for (root, kind, cmp) in roots {
            specs.push(TreeSpec {
                root: *root,
                table: *kind == BtreeKind::Table,
                cmp: cmp.as_deref(),
            });
        }
        let g = self.lock();
        with_view!(g, v => check(v, &specs, true, max_errors))
    }
}

/// For an index write in a concurrent transaction: an owned comparator for the replay
/// (concurrent.rs C5), checked before anything changes. `None` for other transactions.
/// Records, in a concurrent transaction, a read of every index entry equal to `prefix`
/// (T4), so a commit adding such an entry meanwhile conflicts. Returns the comparator
/// shared with the history (`conc_comparator`), for recording the write that follows.
fn note_prefix_read(
    g: &mut TxnInner,
    root: PageNo,
    prefix: &[u8],
    cmp: &dyn KeyCompare,
) -> Result<Option<Arc<dyn KeyCompare>>> {
    let shared = conc_comparator(g, cmp)?;
    if let (Some(c), Some(sc)) = (g.conc.as_mut(), shared.as_ref()) {
        c.read(
            root,
            Some(Key::Idx(prefix.to_vec())),
            Some(Key::Idx(prefix.to_vec())),
            Some(sc),
        );
    }
    Ok(shared)
}

fn conc_comparator(g: &TxnInner, cmp: &dyn KeyCompare) -> Result<Option<Arc<dyn KeyCompare>>> {
    if g.conc.is_none() {
        return Ok(None);
    }
    match cmp.to_shared() {
        Some(c) => Ok(Some(c)),
        None => Err(StorageError::misuse(
            "index writes in a concurrent transaction need a comparator whose to_shared() is Some",
        )),
    }
}

/// How many times a concurrent commit rebases outside the writer lock (concurrent.rs C7)
/// before it validates and replays under the lock. Each failed try means another commit
/// landed during the rebase's replay, a window far shorter than the transaction; three
/// bounds the wasted replays when one tree is hot.
const REBASE_ATTEMPTS_MAX: usize = 3;

/// Commits a concurrent transaction (concurrent.rs C3–C7): the sequence number it
/// published and how, for the caller to count (`ConcurrencyStats`). On `Busy` the view is
/// left in `slot` and `c` whole (the caller keeps the transaction open); otherwise the view
/// is consumed, and once the writer lock is had `c`'s write set moves into the history.
fn commit_concurrent(
    db: &Database,
    slot: &mut Option<Box<dyn WriteView>>,
    c: &mut ConcTxn,
    synchronous: Option<Synchronous>,
) -> Result<(Option<u64>, ConcCommit)> {
    if slot.is_none() {
        return Err(StorageError::misuse("transaction has ended"));
    }
    if c.ops.is_empty() {
        // Read-only: its reads were of a consistent snapshot; nothing to validate.
        return Ok((None, ConcCommit::ReadOnly));
    }
    // W1: validation reads sealed write sets; the operations are over, so it stays sealed.
    c.writes.seal();
    let timeout = db.concurrent_busy_timeout();
    // C7: a rebased view (validated and replayed outside the lock) and its snapshot. The
    // transaction's own view stays in `slot` until the commit succeeds (T3 on `Busy`).
    let mut rebased: Option<Box<dyn WriteView>> = None;
    let mut base = c.snapshot;
    for _ in 0..REBASE_ATTEMPTS_MAX {
        if db.inner.history.newest_seq() > base {
            let current = rebased.as_deref().or(slot.as_deref());
            if let Some(mut v) = rebase(db, c, base, current)? {
                // The rebased view commits with this transaction's durability, as its own
                // view would have.
                if let Some(mode) = synchronous {
                    v.set_synchronous(mode);
                }
                base = v.snapshot_seq();
                if let Some(old) = rebased.replace(v) {
                    old.rollback();
                }
            }
        }
        let view = match rebased.as_mut() {
            Some(v) => v,
            None => match slot.as_mut() {
                Some(v) => v,
                None => return Err(StorageError::misuse("transaction has ended")),
            },
        };
        // C6: commits only if `base` is still the latest snapshot.
        if !view.attach_writer(timeout)? {
            continue;
        }
        let Some(view) = rebased.take().or_else(|| slot.take()) else {
            return Err(StorageError::misuse("transaction has ended"));
        };
        // C1. The write set is moved, not copied: past this point the transaction commits
        // or fails for good (no `Busy`), so it is not validated or retried again. (The copy
        // and its free were ~650 of a bdb_update CONCURRENT commit's ~36k instructions,
        // callgrind.)
        db.inner
            .history
            .push(base + 1, std::mem::take(&mut c.writes));
        let seq = view.commit_seq();
        view.commit()?;
        let how = if base == c.snapshot {
            ConcCommit::Fast
        } else {
            ConcCommit::Rebased
        };
        return Ok((seq, how));
    }
    drop(rebased);
    let mut fresh = db.inner.backend.begin_write(timeout)?;
    if let Some(mode) = synchronous {
        fresh.set_synchronous(mode);
    }
    if let Some(w) = slot.take() {
        w.rollback();
    }
    // C3, under the writer lock: the entries after the last rebase (C7 validated those
    // before it).
    let later = db.inner.history.lock().since(base);
    let checked = later
        .iter()
        .try_for_each(|e| c.validate(e))
        .and_then(|()| replay(&mut *fresh, &c.ops));
    if let Err(e) = checked {
        // C4.
        fresh.rollback();
        if let StorageError::Conflict { root, .. } = &e {
            db.inner.history.lock().conflict(*root);
        }
        return Err(e);
    }
    // C1, C5.
    db.inner
        .history
        .push(fresh.snapshot_seq() + 1, std::mem::take(&mut c.writes));
    let seq = fresh.commit_seq();
    fresh.commit()?;
    Ok((seq, ConcCommit::Replayed))
}

/// C7: a detached view on the latest snapshot with the transaction's operations applied,
/// after validating it against the commits between `base` and that snapshot; `None` when
/// `base` is still the latest published snapshot. A conflict is counted and returned.
/// The operations are applied by carrying `current`'s pages over when no commit since
/// `base` touched a page it used (pages P6), else by replaying them on a fresh view.
fn rebase(
    db: &Database,
    c: &ConcTxn,
    base: u64,
    current: Option<&dyn WriteView>,
) -> Result<Option<Box<dyn WriteView>>> {
    let carried = match current {
        Some(v) => v.rebase_pages()?,
        None => None,
    };
    let by_pages = carried.is_some();
    let mut fresh = match carried {
        Some(v) => v,
        None => db.inner.backend.begin_detached()?,
    };
    let latest = fresh.snapshot_seq();
    if latest <= base {
        fresh.rollback();
        return Ok(None);
    }
    let later = {
        let mut h = db.inner.history.lock();
        if by_pages {
            h.stats.page_rebases += 1;
        }
        h.between(base, latest)
    };
    let checked = later.iter().try_for_each(|e| c.validate(e)).and_then(|()| {
        if by_pages {
            Ok(())
        } else {
            replay(&mut *fresh, &c.ops)
        }
    });
    if let Err(e) = checked {
        // C4: nothing of it was published.
        fresh.rollback();
        if let StorageError::Conflict { root, .. } = &e {
            db.inner.history.lock().conflict(*root);
        }
        return Err(e);
    }
    Ok(Some(fresh))
}

/// `Txn::insert_record` under the transaction's lock: a concurrent transaction logs the
/// record and hands back its spare record buffer, any other hands back an owned record.
fn insert_record(
    g: &mut TxnInner,
    root: PageNo,
    rowid: i64,
    record: Cow<'_, [u8]>,
) -> Result<Option<Vec<u8>>> {
    insert_payload(g, root, rowid, insert::Payload::Record(&record))?;
    if g.conc.is_some() {
        g.note_op(Op::TableInsert(root, rowid, record.into_owned()));
        let spare = std::mem::take(&mut g.bufs.record);
        return Ok((spare.capacity() > 0).then_some(spare));
    }
    Ok(match record {
        Cow::Owned(buf) => Some(buf),
        Cow::Borrowed(_) => None,
    })
}

/// The write of `Txn::insert_record` and `Txn::table_insert_values`: the row goes in at
/// the table's hinted leaf or by a descent, and the transaction's per-table state follows.
fn insert_payload(
    g: &mut TxnInner,
    root: PageNo,
    rowid: i64,
    payload: insert::Payload<'_>,
) -> Result<()> {
    let v = g.view.write()?;
    let hint = match g.append_hint.take() {
        Some((r, changes, path)) if r == root && changes == g.changes => Some(path),
        _ => None,
    };
    g.tc.root = root;
    g.tc.table = true;
    g.changes += 1;
    let bufs = &mut g.bufs;
    let next_hint = insert::table_insert(
        v,
        &mut g.tc,
        rowid,
        payload,
        &mut bufs.scratch,
        &mut bufs.cell,
        hint,
    )?;
    g.keep_hint_past(root);
    g.append_hint = next_hint.map(|path| (root, g.changes, path));
    if let Some(e) = g.max_rowids.iter_mut().find(|e| e.0 == root) {
        e.1 = Some(e.1.map_or(rowid, |m| m.max(rowid)));
    }
    g.note_key(root, Key::Row(rowid));
    Ok(())
}

/// C5: applies a concurrent transaction's operations, in order, to `v`.
fn replay(v: &mut dyn WriteView, ops: &[Op]) -> Result<()> {
    let (mut cell, mut scratch) = (Vec::new(), Vec::new());
    for op in ops {
        match op {
            Op::TableInsert(root, rowid, rec) => {
                let mut tc = TreeCursor::new(*root, true);
                let payload = insert::Payload::Record(rec);
                insert::table_insert(v, &mut tc, *rowid, payload, &mut scratch, &mut cell, None)?;
            }
            Op::TableDelete(root, rowid) => {
                let mut tc = TreeCursor::new(*root, true);
                delete::table_delete(v, &mut tc, *rowid, None)?;
            }
            Op::IndexInsert(root, key, cmp) => {
                let mut tc = TreeCursor::new(*root, false);
                insert::index_insert(v, &mut tc, key, &**cmp, &mut scratch, &mut cell, None)?;
            }
            Op::IndexDelete(root, key, cmp) => {
                let mut tc = TreeCursor::new(*root, false);
                delete::index_delete(v, &mut tc, key, &**cmp, &mut scratch, None)?;
            }
            Op::Create(table, expected) => {
                let root = tree::create(v, *table)?;
                if root != *expected {
                    return Err(StorageError::Conflict {
                        root: *expected,
                        reason: format!(
                            "the tree created at page {expected} would be at page {root} after later commits"
                        ),
                    });
                }
            }
            Op::Drop(root) => {
                tree::destroy(v, *root, false)?;
            }
            Op::Clear(root) => {
                tree::destroy(v, *root, true)?;
            }
            Op::SetHeader(offset, value) => put_u32(v.page_mut(PageNo(1))?, *offset, *value),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{encode, RecordCompare, ValueRef};
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    /// A valid image with two tables (one with an index), overflow pages and a freelist.
    fn sample_image(page_size: u32) -> Vec<u8> {
        let mem = MemBackend::new(page_size).unwrap();
        let db = Database::with_backend(Arc::new(mem.clone())).unwrap();
        let t = db.begin_write(Duration::ZERO).unwrap();
        let cmp = RecordCompare::default();
        let a = t.create_btree(BtreeKind::Table).unwrap();
        let ai = t.create_btree(BtreeKind::Index).unwrap();
        let b = t.create_btree(BtreeKind::Table).unwrap();
        for i in 0..400i64 {
            let text = vec![b'a' + (i % 26) as u8; (i as usize * 37) % (page_size as usize * 2)];
            let rec = encode(&[ValueRef::Integer(i), ValueRef::Text(&text)]);
            t.table_insert(a, i, &rec).unwrap();
            t.index_insert(
                ai,
                &encode(&[ValueRef::Text(&text), ValueRef::Integer(i)]),
                &cmp,
            )
            .unwrap();
            t.table_insert(b, i * 7, &encode(&[ValueRef::Real(i as f64)]))
                .unwrap();
        }
        for i in (0..400i64).step_by(3) {
            t.table_delete(b, i * 7).unwrap();
        }
        for (n, (root, kind)) in [(a, "table"), (ai, "index"), (b, "table")]
            .into_iter()
            .enumerate()
        {
            let rec = encode(&[
                ValueRef::Text(kind.as_bytes()),
                ValueRef::Integer(root.0 as i64),
            ]);
            t.table_insert(PageNo(1), n as i64 + 1, &rec).unwrap();
        }
        t.commit().unwrap();
        mem.to_bytes()
    }

    /// Walks every tree named in the schema both ways, seeks, reads every record, checks
    /// integrity and writes: any of it may fail on a corrupt image, none of it may panic
    /// or hang.
    /// Returns the entries visited by the forward walks and the integrity messages.
    fn exercise(bytes: Vec<u8>) -> (usize, Vec<String>) {
        let mut visited = 0;
        let Ok(mem) = MemBackend::from_bytes(bytes) else {
            return (0, vec![]);
        };
        let Ok(db) = Database::with_backend(Arc::new(mem)) else {
            return (0, vec![]);
        };
        let Ok(r) = db.begin_read() else {
            return (0, vec![]);
        };
        let cmp: Arc<dyn KeyCompare> = Arc::new(RecordCompare::default());
        let mut roots = vec![(PageNo(1), BtreeKind::Table)];
        if let Ok(mut c) = r.cursor(PageNo(1), BtreeKind::Table, None) {
            let mut ok = c.first().unwrap_or(false);
            let mut steps = 0;
            while ok && steps < 100 {
                steps += 1;
                if let Ok(rec) = c.record() {
                    if let Ok(vals) = crate::record::decode(&rec) {
                        if let (Some(ValueRef::Text(k)), Some(ValueRef::Integer(p))) =
                            (vals.first(), vals.get(1))
                        {
                            let kind = if *k == b"index" {
                                BtreeKind::Index
                            } else {
                                BtreeKind::Table
                            };
                            roots.push((PageNo(*p as u32), kind));
                        }
                    }
                }
                ok = c.next().unwrap_or(false);
            }
        }
        for &(root, kind) in &roots {
            let Ok(mut c) = r.cursor(root, kind, Some(cmp.clone())) else {
                continue;
            };
            let mut ok = c.first().unwrap_or(false);
            let mut steps = 0;
            while ok && steps < 20_000 {
                steps += 1;
                visited += c.record().is_ok() as usize;
                let _ = c.rowid();
                ok = c.next().unwrap_or(false);
            }
            let mut ok = c.last().unwrap_or(false);
            while ok && steps < 40_000 {
                steps += 1;
                ok = c.prev().unwrap_or(false);
            }
            match kind {
                BtreeKind::Table => {
                    for op in [SeekOp::Eq, SeekOp::Ge, SeekOp::Gt, SeekOp::Le, SeekOp::Lt] {
                        let _ = c.seek_rowid(700, op);
                        let _ = c.record();
                    }
                }
                BtreeKind::Index => {
                    let _ = c.seek_key(&encode(&[ValueRef::Text(b"mmm")]), SeekOp::Ge);
                    let _ = c.record();
                }
            }
            let _ = r.count(root);
        }
        let errors = r
            .integrity_check(&roots, 10)
            .unwrap_or_else(|e| vec![e.to_string()]);
        r.commit().ok();
        if let Ok(w) = db.begin_write(Duration::ZERO) {
            let rcmp = RecordCompare::default();
            for &(root, kind) in &roots {
                for i in 0..30i64 {
                    let _ = match kind {
                        BtreeKind::Table => w
                            .table_insert(root, i * 13, &[2, 1, 5])
                            .map(|_| true)
                            .and_then(|_| w.table_delete(root, i * 5)),
                        BtreeKind::Index => {
                            let k = encode(&[ValueRef::Integer(i), ValueRef::Integer(i)]);
                            w.index_insert(root, &k, &rcmp)
                                .and_then(|_| w.index_delete(root, &k, &rcmp))
                        }
                    };
                }
                let _ = w.clear_btree(root);
            }
            let _ = w.integrity_check(&roots, 10);
            w.rollback();
        }
        (visited, errors)
    }

    /// `index_find_prefix` reports exactly the entries starting with the prefix, in order,
    /// across leaf boundaries and overflow keys; `table_max_rowid` follows inserts and
    /// deletes at the right edge. Both work in a concurrent transaction too.
    #[test]
    fn find_prefix_and_max_rowid() {
        let db = Database::open_in_memory(OpenOptions::default()).unwrap();
        for concurrent in [false, true] {
            let t = if concurrent {
                db.begin_concurrent().unwrap()
            } else {
                db.begin_write(Duration::ZERO).unwrap()
            };
            let cmp = RecordCompare::default();
            let table = t.create_btree(BtreeKind::Table).unwrap();
            let index = t.create_btree(BtreeKind::Index).unwrap();
            assert_eq!(t.table_max_rowid(table).unwrap(), None);
            let long = vec![b'x'; 3000];
            for i in 0..3000i64 {
                t.table_insert(table, i * 3, &encode(&[ValueRef::Integer(i)]))
                    .unwrap();
                let k = if i % 7 == 0 {
                    encode(&[ValueRef::Text(&long), ValueRef::Integer(i)])
                } else {
                    encode(&[ValueRef::Integer(i / 500), ValueRef::Integer(i)])
                };
                t.index_insert(index, &k, &cmp).unwrap();
            }
            assert_eq!(t.table_max_rowid(table).unwrap(), Some(8997));
            t.table_delete(table, 8997).unwrap();
            assert_eq!(t.table_max_rowid(table).unwrap(), Some(8994));
            let found = |prefix: &[ValueRef]| {
                let mut rowids = Vec::new();
                t.index_find_prefix(index, &encode(prefix), &cmp, &mut |key| {
                    let vals = crate::record::decode(key)?;
                    if let Some(ValueRef::Integer(r)) = vals.last() {
                        rowids.push(*r);
                    }
                    Ok(())
                })
                .unwrap();
                rowids
            };
            let want: Vec<i64> = (1000..1500).filter(|i| i % 7 != 0).collect();
            assert_eq!(found(&[ValueRef::Integer(2)]), want);
            assert_eq!(
                found(&[ValueRef::Integer(2), ValueRef::Integer(1002)]),
                vec![1002]
            );
            assert_eq!(
                found(&[ValueRef::Integer(2), ValueRef::Integer(6001)]),
                Vec::<i64>::new()
            );
            assert_eq!(found(&[ValueRef::Integer(9)]), Vec::<i64>::new());
            let want: Vec<i64> = (0..3000).filter(|i| i % 7 == 0).collect();
            assert_eq!(found(&[ValueRef::Text(&long)]), want);
            t.rollback();
        }
    }

    /// A write hint offered by a read (`Cursor::hint_write`) is used only while the change
    /// counter has not moved: after the table was cleared, its freed leaf still looks like
    /// a table leaf holding the row, and a delete through the stale hint would "find" the
    /// row there and write to a free page.
    #[test]
    fn read_hint_is_not_used_after_the_tree_changed() {
        let db = Database::open_in_memory(OpenOptions::default()).unwrap();
        let t = db.begin_write(Duration::ZERO).unwrap();
        let table = t.create_btree(BtreeKind::Table).unwrap();
        let text = vec![b'z'; 200];
        let rec = encode(&[ValueRef::Text(&text)]);
        for r in [5i64, 150, 299] {
            for i in 0..300i64 {
                t.table_insert(table, i, &rec).unwrap();
            }
            let mut c = t.cursor(table, BtreeKind::Table, None).unwrap();
            assert!(c.seek_rowid(r, SeekOp::Eq).unwrap());
            c.hint_write().unwrap();
            drop(c);
            t.clear_btree(table).unwrap();
            assert!(
                !t.table_delete(table, r).unwrap(),
                "row {r} deleted from a free page"
            );
            assert_eq!(t.count(table).unwrap(), 0);
            let roots = [(table, BtreeKind::Table)];
            assert_eq!(t.integrity_check(&roots, 10).unwrap(), Vec::<String>::new());
        }
        // And while it is current, the hinted delete removes exactly that row.
        for i in 0..300i64 {
            t.table_insert(table, i, &rec).unwrap();
        }
        let mut c = t.cursor(table, BtreeKind::Table, None).unwrap();
        assert!(c.seek_rowid(150, SeekOp::Eq).unwrap());
        c.hint_write().unwrap();
        drop(c);
        assert!(t.table_delete(table, 150).unwrap());
        assert!(!t.table_delete(table, 150).unwrap());
        assert_eq!(t.count(table).unwrap(), 299);
        t.rollback();
    }

    /// Appends to a table interleaved with key writes to other trees (index inserts and
    /// deletes, deletes in another table: the append hint is carried past them) and with
    /// deletes in the table itself (the hint is dropped) leave every tree intact and
    /// complete, splits of the table included.
    #[test]
    fn append_hint_survives_other_trees_writes() {
        let db = Database::open_in_memory(OpenOptions::default()).unwrap();
        let t = db.begin_write(Duration::ZERO).unwrap();
        let cmp = RecordCompare::default();
        let table = t.create_btree(BtreeKind::Table).unwrap();
        let other = t.create_btree(BtreeKind::Table).unwrap();
        let index = t.create_btree(BtreeKind::Index).unwrap();
        let text = vec![b'y'; 300];
        for i in 0..4000i64 {
            t.table_insert(
                table,
                i,
                &encode(&[ValueRef::Text(&text), ValueRef::Integer(i)]),
            )
            .unwrap();
            let k = encode(&[ValueRef::Integer((i * 7919) % 4001), ValueRef::Integer(i)]);
            t.index_insert(index, &k, &cmp).unwrap();
            t.table_insert(other, i, &encode(&[ValueRef::Integer(i)]))
                .unwrap();
            if i % 3 == 0 {
                t.index_delete(index, &k, &cmp).unwrap();
                t.table_delete(other, i).unwrap();
            }
            if i % 500 == 499 {
                t.table_delete(table, i - 1).unwrap();
            }
        }
        // A delete at the table's right edge frees its last leaves; an index write after it
        // must not revive the hint that leads there.
        t.table_insert(table, 4000, &encode(&[ValueRef::Integer(0)]))
            .unwrap();
        for i in (3500..=4000i64).rev() {
            t.table_delete(table, i).unwrap();
        }
        let k = encode(&[ValueRef::Integer(-1), ValueRef::Integer(-1)]);
        t.index_insert(index, &k, &cmp).unwrap();
        t.index_delete(index, &k, &cmp).unwrap();
        for i in 3500..4000i64 {
            t.table_insert(
                table,
                i,
                &encode(&[ValueRef::Text(&text), ValueRef::Integer(i)]),
            )
            .unwrap();
        }
        let roots = [
            (table, BtreeKind::Table),
            (other, BtreeKind::Table),
            (index, BtreeKind::Index),
        ];
        assert_eq!(t.integrity_check(&roots, 10).unwrap(), Vec::<String>::new());
        let mut c = t.cursor(table, BtreeKind::Table, None).unwrap();
        let mut rowids = Vec::new();
        let mut ok = c.first().unwrap();
        while ok {
            rowids.push(c.rowid().unwrap());
            ok = c.next().unwrap();
        }
        let want: Vec<i64> = (0..4000).filter(|i| i % 500 != 498 || *i >= 3500).collect();
        assert!(rowids == want, "table rows differ");
        assert_eq!(t.count(index).unwrap(), 4000 - 1334);
        t.rollback();
    }

    #[test]
    fn api_types_are_thread_safe() {
        fn send<T: Send>() {}
        fn send_sync<T: Send + Sync>() {}
        send_sync::<Database>();
        send::<Txn>();
        send::<Cursor>();
    }

    /// `step_entry` and `with_entry` (the scan path) see what `next`/`prev` + `rowid` +
    /// `record` see, overflow payloads included, and a scan survives a deletion of the row
    /// it is on (the cursor moves to the successor, T2).
    #[test]
    fn step_entry_matches_next_and_record() {
        let db = Database::open_in_memory(OpenOptions::default()).unwrap();
        let w = db.begin_write(Duration::ZERO).unwrap();
        let root = w.create_btree(BtreeKind::Table).unwrap();
        for i in 1..=3000i64 {
            let len = if i % 97 == 0 { 9000 } else { (i % 50) as usize };
            let text = vec![b'a' + (i % 26) as u8; len];
            let rec = encode(&[ValueRef::Integer(i), ValueRef::Text(&text)]);
            w.table_insert(root, i * 3, &rec).unwrap();
        }
        for forward in [true, false] {
            let mut a = w.cursor(root, BtreeKind::Table, None).unwrap();
            let mut b = w.cursor(root, BtreeKind::Table, None).unwrap();
            let (mut ok_a, ok_b) = if forward {
                (a.first().unwrap(), b.first().unwrap())
            } else {
                (a.last().unwrap(), b.last().unwrap())
            };
            assert!(ok_a && ok_b);
            let first = b.with_entry(|id, rec| (id, rec.to_vec())).unwrap();
            assert_eq!(first, (a.rowid().unwrap(), a.record().unwrap()));
            let mut n = 1;
            loop {
                ok_a = if forward {
                    a.next().unwrap()
                } else {
                    a.prev().unwrap()
                };
                let got = b.step_entry(forward, |id, rec| (id, rec.to_vec())).unwrap();
                match got {
                    None => {
                        assert!(!ok_a);
                        break;
                    }
                    Some(e) => assert_eq!(e, (a.rowid().unwrap(), a.record().unwrap())),
                }
                n += 1;
            }
            assert_eq!(n, 3000);
        }
        let mut c = w.cursor(root, BtreeKind::Table, None).unwrap();
        assert!(c.seek_rowid(300, SeekOp::Eq).unwrap());
        w.table_delete(root, 300).unwrap();
        w.table_delete(root, 303).unwrap();
        let next = c.step_entry(true, |id, _| id).unwrap();
        assert_eq!(next, Some(306));
        assert_eq!(c.with_entry(|id, _| id).unwrap(), 306);
        w.rollback();
    }

    /// `step_entry` and `with_entry` on an index cursor see what `next`/`prev` + `record`
    /// see, keys that overflow their page included, and a walk survives the deletion of
    /// the key it is on between steps: the key left in the cursor's frame (`key_in_frame`)
    /// is what re-finds its place (T2), forward and backward.
    #[test]
    fn index_step_entry_matches_next_and_record() {
        let db = Database::open_in_memory(OpenOptions::default()).unwrap();
        let w = db.begin_write(Duration::ZERO).unwrap();
        let root = w.create_btree(BtreeKind::Index).unwrap();
        let cmp: Arc<dyn KeyCompare> = Arc::new(RecordCompare::default());
        let key = |i: i64| {
            let len = if i % 97 == 0 { 9000 } else { (i % 50) as usize };
            let text = vec![b'a' + (i % 26) as u8; len];
            encode(&[ValueRef::Integer(i), ValueRef::Text(&text)])
        };
        for i in 1..=3000i64 {
            w.index_insert(root, &key(i), &*cmp).unwrap();
        }
        let cursor = || w.cursor(root, BtreeKind::Index, Some(cmp.clone())).unwrap();
        for forward in [true, false] {
            let (mut a, mut b) = (cursor(), cursor());
            let (mut ok_a, ok_b) = if forward {
                (a.first().unwrap(), b.first().unwrap())
            } else {
                (a.last().unwrap(), b.last().unwrap())
            };
            assert!(ok_a && ok_b);
            assert_eq!(
                b.with_entry(|_, k| k.to_vec()).unwrap(),
                a.record().unwrap()
            );
            let mut n = 1;
            loop {
                ok_a = if forward {
                    a.next().unwrap()
                } else {
                    a.prev().unwrap()
                };
                match b.step_entry(forward, |_, k| k.to_vec()).unwrap() {
                    None => {
                        assert!(!ok_a);
                        break;
                    }
                    Some(k) => assert_eq!(k, a.record().unwrap()),
                }
                n += 1;
            }
            assert_eq!(n, 3000);
        }
        // The entry the cursor is on and its neighbour deleted between two steps: keys all
        // on the page (300, 400), keys that overflow (291, 582), in both directions.
        for (on, gone, forward, want) in [
            (300, 301, true, 302),
            (291, 292, true, 293),
            (400, 399, false, 398),
            (582, 581, false, 580),
        ] {
            let mut c = cursor();
            assert!(c.seek_key(&key(on), SeekOp::Eq).unwrap());
            assert!(w.index_delete(root, &key(on), &*cmp).unwrap());
            assert!(w.index_delete(root, &key(gone), &*cmp).unwrap());
            let next = c.step_entry(forward, |_, k| k.to_vec()).unwrap();
            assert_eq!(next, Some(key(want)), "from {on}");
            assert_eq!(c.with_entry(|_, k| k.to_vec()).unwrap(), key(want));
            // Changed again while the cursor is on `want`: its entry reads the same.
            w.index_insert(root, &key(on + 10_000), &*cmp).unwrap();
            assert_eq!(c.record().unwrap(), key(want));
            assert_eq!(c.with_entry(|_, k| k.to_vec()).unwrap(), key(want));
        }
        w.rollback();
    }

    #[test]
    fn busy_upgrade_keeps_the_reader() {
        let db = Database::open_in_memory(OpenOptions::default()).unwrap();
        let r = db.begin_read().unwrap();
        let w = db.begin_write(Duration::ZERO).unwrap();
        assert!(matches!(
            r.upgrade(Duration::from_millis(5)),
            Err(StorageError::Busy { .. })
        ));
        assert_eq!(r.header().unwrap().page_count, 1);
        w.rollback();
        r.upgrade(Duration::ZERO).unwrap();
        assert!(r.is_write());
        r.create_btree(BtreeKind::Table).unwrap();
        r.commit().unwrap();
        assert_eq!(db.begin_read().unwrap().header().unwrap().page_count, 2);
    }

    #[test]
    fn failed_upgrade_keeps_a_stale_reader_readable() {
        let db = Database::open_in_memory(OpenOptions::default()).unwrap();
        let r = db.begin_read().unwrap();
        let w = db.begin_write(Duration::ZERO).unwrap();
        w.create_btree(BtreeKind::Table).unwrap();
        w.commit().unwrap();
        assert!(matches!(
            r.upgrade(Duration::ZERO),
            Err(StorageError::BusySnapshot { .. })
        ));
        assert_eq!(r.header().unwrap().page_count, 1);
        r.commit().unwrap();
        assert!(matches!(r.header(), Err(StorageError::Misuse { .. })));
    }

    #[test]
    fn corrupt_images_give_errors_not_panics() {
        let seed: u64 = std::env::var("PARLITE_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(rand::random);
        eprintln!("corrupt_images_give_errors_not_panics: seed = {seed}");
        let rounds = if std::env::var("PARLITE_LONG").as_deref() == Ok("1") {
            5000
        } else {
            400
        };
        let mut rng = StdRng::seed_from_u64(seed);
        for page_size in [512u32, 1024] {
            let image = sample_image(page_size);
            let ps = page_size as usize;
            // The clean image passes (the harness really walks everything).
            let (visited, errors) = exercise(image.clone());
            assert_eq!(visited, 3 + 400 + 400 + 266, "page size {page_size}");
            assert!(errors.is_empty(), "{errors:?}");
            for round in 0..rounds {
                let mut bytes = image.clone();
                match rng.gen_range(0..5) {
                    0 => {
                        // A few random bytes anywhere past the file header.
                        for _ in 0..rng.gen_range(1..8) {
                            let i = rng.gen_range(100..bytes.len());
                            bytes[i] = rng.gen();
                        }
                    }
                    1 => {
                        // A page header or cell pointer array field.
                        let pg = rng.gen_range(0..bytes.len() / ps);
                        let base = pg * ps + if pg == 0 { 100 } else { 0 };
                        let i = base + rng.gen_range(0..24);
                        bytes[i] = rng.gen();
                    }
                    2 => {
                        // A whole page of garbage.
                        let pg = rng.gen_range(1..bytes.len() / ps);
                        for b in &mut bytes[pg * ps..(pg + 1) * ps] {
                            *b = rng.gen();
                        }
                    }
                    3 => {
                        // Truncated, to a page boundary or not.
                        let n = rng.gen_range(1..bytes.len() / ps);
                        bytes.truncate(if rng.gen_bool(0.5) {
                            n * ps
                        } else {
                            n * ps + 17
                        });
                    }
                    _ => {
                        // A child or overflow pointer redirected to another page.
                        let i = rng.gen_range(100..bytes.len() - 4);
                        let target = rng.gen_range(0..(bytes.len() / ps) as u32 + 3);
                        bytes[i..i + 4].copy_from_slice(&target.to_be_bytes());
                    }
                }
                let before = std::time::Instant::now();
                exercise(bytes);
                assert!(
                    before.elapsed() < Duration::from_secs(10),
                    "round {round} took too long (seed {seed})"
                );
            }
        }
    }
}
