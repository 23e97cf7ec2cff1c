//! The file backend: a SQLite database file, parlite's log `<db>-plog` beside it, and a
//! versioned page cache between them. Implements [`Backend`] (see `pages` for P1–P4).
//!
//! Life of a commit (the numbered steps of docs/log-and-recovery.md, "Commit path"):
//! 1. the writer holds the writer lock (one writer at a time; readers never take it) —
//!    from its begin, or, for a detached view, from `attach_writer` (after step 2);
//! 2. it sets page 1's page count if the count changed (P3), diffs each changed page
//!    against its base image and encodes the frame — a detached view before it takes the
//!    lock (K5);
//! 3. it takes the log mutex and publishes the new page versions in the cache (readers
//!    who begin now see them);
//! 4. it releases the writer lock — the next writer may start while this one writes and
//!    waits (a looping `Off`/`Normal` lock holder does this after step 5, L2);
//! 5. it seals the frame (salt, chained checksum), appends it to the log with `write` (no
//!    fsync yet), records it written (group commit's `written_seq`) and releases the log
//!    mutex (L1);
//! 6. it asks for a background checkpoint (checkpoint.rs) if the log or the pinned pages
//!    passed their thresholds — without waiting for it;
//! 7. it waits until the frame is as durable as the synchronous mode promises — its own
//!    view's mode if one was set (`WriteView::set_synchronous`), else the database's (group
//!    commit: one fsync covers every frame written before it, in both log files, B4).
//!
//! Durability invariants (cited by tests/crash_sim.rs, tests/kill_process.rs):
//! - D1. `commit` returns Ok under `Synchronous::Full` only after an fsync of the log that
//!   started after the commit's frame was written; under `Normal` only after the frame was
//!   written to the OS; under `Off` after the frame was handed to `write`.
//! - D2. A failed fsync, or a failed log write, on the commit path poisons the backend: every
//!   later write transaction gets `ReadOnly` until the database is reopened. No fsync is
//!   ever retried. The commit that saw the failure returns the error and may or may not
//!   survive a crash; it was already published (step 3), so readers in this process may
//!   have seen it, but no later commit is logged on top of a commit whose frame write
//!   failed, nor any checkpoint run (L1, checkpoint.rs B9).
//! - D3. The checkpoint writes a page into the database file only after the log holding its
//!   frames is synced, and empties or restarts a log file only after the database file is
//!   synced (checkpoint.rs B2). So at every instant, database file + the valid chain of log
//!   frames (B1) = the last durable state.
//! - D4. Recovery (at open) syncs the log it found before writing any page it redoes, then
//!   checkpoints (D3); a crash during recovery is recovered the same way at the next open.
//! - D5. Redo is idempotent: applying a generation's frames in order to any page image that
//!   is a sector-wise mix of the generation's base and later images gives the newest image
//!   (log::format F3; the argument is in docs/log-and-recovery.md).
//! - D6. A lock holder's transaction larger than its bound keeps its private pages in a
//!   spill file (spill.rs). Its commit first runs a full checkpoint (both log files empty,
//!   no dirty page), then writes the pages it appended past T — the largest page count of
//!   its snapshot and of every live snapshot, at least 1 — straight into the database
//!   file and syncs it, holding the checkpoint slot until its publication; then it logs
//!   and publishes the pages up to T as any commit (steps 2–7), dropping the cache's stale
//!   entries of the pages past T. Until the frame is durable no snapshot and no durable
//!   state (database file + log chain, whose page count is at most T) reads a page past
//!   T, and no frame of the chain holds an older image of one, so a crash at any point
//!   leaves the state before the transaction or after it (`FileWriteView::
//!   write_beyond_snapshots`, tests spill_tests.rs, kill_process.rs).
//!
//! Concurrency invariants:
//! - K1. Lock order: writer slot → checkpoint slot → log mutex → {cache registry mutex →
//!   one cache shard mutex (cache C7, C8), sync mutex} → poison mutex (a leaf); log mutex →
//!   database-sync debt mutex (checkpoint.rs B8), which alone is held across an fsync (the
//!   database file's, owed by a relaxed round) and is never held while taking another
//!   lock but the poison mutex. No cache mutex is held across I/O; a page read takes one
//!   shard mutex only; group-commit fsyncs hold no lock while syncing the log (they copy
//!   the files' handles out of the sync mutex), so they never wait for a checkpoint.
//! - K2. Readers never wait for the writer lock or for I/O of other transactions; a
//!   snapshot stays stable across later commits and checkpoints (cache C2, C4, C5).
//! - K3. The full checkpoint runs under the writer lock and the log mutex, so no frame is
//!   appended while it restarts the log (a committer that released the writer lock holds
//!   the log mutex until its frame is written, L1); a background round switches files under
//!   the log mutex (B6) and does its I/O holding only the checkpoint slot.
//! - K4. A detached write view (`begin_detached`, pages.rs P5) holds a registered snapshot
//!   but no writer slot; `commit_inner` refuses to run without the slot, which only
//!   `attach_writer` gives it, after checking under the slot that the snapshot is the latest
//!   (so the diff base of step 2 is the latest committed image).
//! - K5. Steps 1–2 (page count, diff, frame encoding without salt and checksum) depend only on
//!   the view's snapshot and its private pages, so a detached view runs them in
//!   `attach_writer` *before* taking the writer lock; the result is used only if the lock
//!   holder then finds the snapshot still the latest (K4: nothing was committed since, so
//!   the bases are the latest images and the sequence number is the next) and no page was
//!   changed since (`PageWrite` calls drop it). Under the lock remain taking the log mutex
//!   and the publication; the sealing (salt and chained checksum, which a round's switch
//!   can change) and the `write` follow under the log mutex alone (L1).
//! - K6. No commit writes a cache line that the other threads' commits only read: the
//!   writer lock, the log and sync mutexes, `writers_in_progress` and the per-commit
//!   counters (`CommitCounts`) each sit on lines of their own (`OwnLines`), away from the
//!   fields every page access and `check_writable` load (`page_size`, `db`, `poisoned`).
//!   And a write view holds `Inner` through its snapshot's `Arc` alone: its place in
//!   `writers_in_progress` (`InProgress`) and its writer lock (`HeldWriter`) are given
//!   back through that `Arc` by the view's `Drop`, and its methods borrow it rather than
//!   clone it. Every clone and drop of that `Arc` is a write to the one reference count
//!   all threads share.
//! - L1. Commits enter the log mutex in sequence-number order: a committer takes it while
//!   it still holds the writer lock, and the next committer can take it only after taking
//!   the writer lock that one releases. It holds it from its publication (step 3) to the
//!   end of its frame's `write` and `note_written` (step 5). So frames are appended in
//!   sequence order without gaps (log G1), `written_seq` is a contiguous prefix
//!   (group_commit.rs G4), a `Normal` commit's return implies every earlier frame was
//!   written, and whoever holds the log mutex sees every published commit's frame written
//!   or the backend poisoned (D2) — never a commit between publication and write. The
//!   writer lock so need not cover the sealing and the `write` system call (L2).
//! - L2. The writer lock goes before the seal and `write` (step 4 before 5) when its holder
//!   does not come straight back for it: a `Full` committer (it waits for the disk next)
//!   and a detached view's (its thread's next transaction runs without the lock). Measured
//!   (bdb_update, 2-core VM, `chrt -f 1`, medians of 7 runs, BENCHMARKS.md "logwrite"):
//!   hold 7.4 → 6.4 µs and +5–9% commits/s at 20–100 `Full` IMMEDIATE writers; CONCURRENT
//!   `Off`, 2 threads, hold 1.7 → 1.1 µs, +5% commits/s. An `Off`/`Normal` lock holder
//!   keeps the lock until its frame is written (step 5 before 4): released early, such a
//!   looping writer came back for the lock only after its write, and the lock's
//!   looping-writer rules (writer_lock.rs W6, W7) then woke twice the sleepers (0.04 → 0.09
//!   per commit): −7% / −9% commits/s at 50 / 100 `Off` writers, 10.8 → 12.5 µs CPU per
//!   commit at 100.

mod buffers;
mod cache;
mod checkpoint;
mod group_commit;
mod memo;
mod read_memo;
mod rebase;
mod saved;
mod spill;
mod thread_memo;
mod writer_lock;

use cache::{Cache, OwnLines};
use checkpoint::Logs;
pub use checkpoint::{CheckpointMode, CheckpointOutcome, CheckpointRound};
use group_commit::{Rounds, SyncState, Written};
use rebase::Footprint;
use writer_lock::WriterLock;

use crate::error::{PageNo, Result, StorageError};
use crate::header::{self, put_u32, DbHeader, HEADER_SIZE};
use crate::lockfile::ProcessLock;
use crate::log;
use crate::log::format::{apply_runs, FrameBuilder};
use crate::options::{OpenOptions, Synchronous};
use crate::pages::{zeroed_page, Backend, PageRead, PageRef, PageWrite, ReadView, WriteView};
use crate::vfs::{read_zero_padded, Vfs, VfsFile};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, Weak};
use std::time::{Duration, Instant};

/// Tunables of the file backend that are not part of `OpenOptions`.
#[derive(Debug, Clone)]
pub struct PagerConfig {
    /// Checkpoint automatically once the log's frames pass this many bytes. 4 MiB keeps
    /// recovery short (a few thousand frames) while amortising the checkpoint's two fsyncs.
    pub checkpoint_log_bytes: u64,
    /// Checkpoint automatically once dirty (pinned) pages pass this fraction of the cache,
    /// in percent (C6). Dirty pages take their room inside the cache, not beyond it, and the
    /// log, not they, bounds recovery; a round writes each page once however many commits
    /// changed it since the last round, so the larger this, the fewer page writes per commit
    /// where commits come back to pages. 50 rather than 25: on bdb_update (10,000 one-row
    /// pages updated uniformly) 0.52 instead of 0.85 writes per commit, and 6–15% less CPU
    /// per commit at 1, 2 and 20 writers (BENCHMARKS.md, ckpt branch).
    pub checkpoint_dirty_percent: usize,
    /// Committers wait for the checkpointer once dirty pages pass this fraction of the
    /// cache, in percent (backpressure, checkpoint.rs). The rest is kept for clean pages
    /// and for what is committed while a round runs, so the cache stays within
    /// `cache_pages_max` unless one transaction outgrows that rest. (Twice a threshold of
    /// 25, as before, stalled 20 `sync=off` writers on bdb_update 158–288 times in 3 s.)
    pub backpressure_dirty_percent: usize,
    /// Run those checkpoints in a checkpointer thread (docs/log-and-recovery.md 3b). Off:
    /// the committing thread runs the same round itself after releasing the writer lock,
    /// which keeps single-threaded crash tests deterministic.
    pub background_checkpoint: bool,
}

impl Default for PagerConfig {
    fn default() -> Self {
        PagerConfig {
            checkpoint_log_bytes: 4 << 20,
            checkpoint_dirty_percent: 50,
            backpressure_dirty_percent: 75,
            background_checkpoint: true,
        }
    }
}

/// Counters for tests and benchmarks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PagerStats {
    /// Commits that wrote a frame.
    pub commits: u64,
    /// fsyncs of the log issued to make commits durable (group commit leaders).
    pub commit_syncs: u64,
    /// Time the leaders spent in those fsyncs (and in a database file's fsync a round
    /// paid first, B8), µs. Beside `writer_lock_held_ns` it tells whether the disk and
    /// the commits' serial section work at the same time: if their shares of a run add up
    /// to about all of it, rounds run in lockstep (group_commit.rs, "Why not overlap").
    pub log_sync_us: u64,
    /// Checkpoints that wrote pages (full and background rounds).
    pub checkpoints: u64,
    /// Pages those checkpoints wrote into the database file.
    pub checkpoint_pages: u64,
    /// Of those, background rounds that folded only `Synchronous::Off` commits and so
    /// skipped their log and database fsyncs (checkpoint.rs B8).
    pub relaxed_checkpoints: u64,
    /// Time spent in them, start to end (a background round's, off the writer lock).
    pub checkpoint_us: u64,
    /// The longest of them.
    pub checkpoint_max_us: u64,
    /// Commits that waited for the checkpointer because the log or the dirty pages passed
    /// their backpressure bound (`PagerConfig`, checkpoint.rs).
    pub checkpoint_stalls: u64,
    /// Private pages write transactions moved to their spill files (spill.rs), and pages
    /// their commits then wrote straight into the database file (D6).
    pub spilled_pages: u64,
    pub spilled_direct_pages: u64,
    /// Bytes of log frames not yet folded into the database file (both log files).
    pub log_frames_bytes: u64,
    /// Bytes of the log files on disk (headers included).
    pub log_file_bytes: u64,
    /// Age of the oldest live snapshot in ms (0: none), see `Cache::oldest_snapshot_age`.
    pub oldest_snapshot_age_ms: u64,
    /// Write transactions that had to wait for the writer lock, and their total and
    /// longest wait.
    pub writer_waits: u64,
    pub writer_wait_us: u64,
    pub writer_wait_max_us: u64,
    /// Sleeping writer-lock waiters woken, and of those the lock's hand-offs to a starving
    /// one (writer_lock.rs W4, W6).
    pub writer_wakes: u64,
    pub writer_handoffs: u64,
    /// Pages (entries) in the cache, and its bound (cache C6, `PRAGMA cache_size`).
    pub cache_pages: usize,
    pub cache_pages_max: usize,
    /// Page images the cache holds: `cache_pages` plus the older versions kept for live
    /// snapshots (cache C2). This, not `cache_pages`, is the cache's memory in pages.
    pub cache_versions: usize,
    pub dirty_pages: usize,
    /// Total time the writer lock was held, and how many times it was taken: the commit
    /// path's serial section (docs/concurrency.md, "Commit concurrency").
    pub writer_lock_held_ns: u64,
    pub writer_lock_holds: u64,
    /// Group-commit leaders that waited for other commits before their fsync, and their
    /// total wait (group_commit.rs G5).
    pub gathers: u64,
    pub gather_us: u64,
    /// Of those, the gatherings ended by a `Full` committer's frame, which then led the
    /// round itself (G6).
    pub gather_handoffs: u64,
}

fn sync_to_u8(s: Synchronous) -> u8 {
    match s {
        Synchronous::Off => 0,
        Synchronous::Normal => 1,
        Synchronous::Full => 2,
    }
}

fn u8_to_sync(v: u8) -> Synchronous {
    match v {
        0 => Synchronous::Off,
        1 => Synchronous::Normal,
        _ => Synchronous::Full,
    }
}

/// Wakes the checkpointer thread.
#[derive(Default)]
struct Wake {
    requested: bool,
    stop: bool,
}

struct Inner {
    vfs: Arc<dyn Vfs>,
    path: String,
    registry_key: String,
    db: Arc<dyn VfsFile>,
    page_size: usize,
    usable_size: usize,
    read_only: bool,
    config: PagerConfig,
    synchronous: AtomicU8,
    poison: Mutex<Option<String>>,
    /// Set once `poison` holds a reason: `check_writable` runs several times per commit of
    /// every thread, and a mutex there was a cache line all writers passed around.
    poisoned: AtomicBool,
    /// Sharded; locks of its own (cache C7, C8).
    cache: Cache,
    /// K6: on lines of its own, as `log`, `sync`, `writers_in_progress` and `counts`.
    writer: OwnLines<WriterLock>,
    /// `None` for read-only databases. Held by a committer from its publication to the end
    /// of its frame's write (L1), by the full checkpoint, and by a background round for its
    /// switch (B6) and its end (K1).
    log: OwnLines<Mutex<Option<Logs>>>,
    sync: OwnLines<Mutex<SyncState>>,
    /// `SyncState::synced_seq`, readable without the mutex (group_commit.rs G3).
    synced_atomic: AtomicU64,
    /// The futex words group-commit sleepers wait on (group_commit.rs G3).
    rounds: Rounds,
    /// Write views that may still append a frame: created and neither committed (frame
    /// written) nor dropped. A gathering leader counts on their frames (group_commit.rs G5).
    writers_in_progress: OwnLines<AtomicU64>,
    /// Recent log fsync time, µs (moving average of the leaders' fsyncs): bounds the wait.
    log_sync_us_avg: AtomicU64,
    /// `Backend::history`: one per file, as this `Inner` (O1).
    history: Arc<crate::concurrent::SharedHistory>,
    /// `PagerStats::log_sync_us`.
    log_sync_us: AtomicU64,
    /// `PagerStats::gathers`, `gather_us`, `gather_handoffs`.
    gathers: AtomicU64,
    gather_us: AtomicU64,
    gather_handoffs: AtomicU64,
    /// The checkpoint slot: one checkpoint (full or round) at a time.
    ckpt_busy: Mutex<bool>,
    ckpt_cv: Condvar,
    /// The checkpointer thread's signal; unset when rounds run inline.
    wake: OnceLock<Arc<(Mutex<Wake>, Condvar)>>,
    /// Commits and writer-lock holds (K6).
    counts: OwnLines<CommitCounts>,
    /// The highest commit made under `Normal` or `Full` (its own mode, else the
    /// database's); set under the log mutex before the commit is published (B8).
    strict_commit_seq: AtomicU64,
    /// A background round wrote pages into the database file without syncing it and
    /// emptied its log file (B8): the next `Full` or `Normal` commit syncs the database
    /// file first, so that its frames' base images are durable.
    /// Held across that fsync, so whoever finds it clear knows no payment is in flight.
    db_sync_owed: Mutex<bool>,
    commit_syncs: AtomicU64,
    checkpoints: AtomicU64,
    relaxed_checkpoints: AtomicU64,
    checkpoint_pages: AtomicU64,
    checkpoint_us: AtomicU64,
    checkpoint_max_us: AtomicU64,
    checkpoint_stalls: AtomicU64,
    spilled_pages: AtomicU64,
    spilled_direct_pages: AtomicU64,
    writer_waits: AtomicU64,
    writer_wait_us: AtomicU64,
    writer_wait_max_us: AtomicU64,
    /// The change counter (header offset 24) the database file's page 1 holds: read at
    /// open, advanced by every checkpoint that writes pages (P3, header.rs). Changed only
    /// by the holder of the checkpoint slot (or by `open`).
    file_change_counter: AtomicU32,
    /// The user-side owner (`Handle`), for the snapshots views register.
    handle: OnceLock<Weak<Handle>>,
    /// Released at close, before this struct may be freed (the checkpointer thread can hold
    /// it a moment longer), so a reopen in this process can take it again.
    process_lock: Mutex<Option<ProcessLock>>,
}

/// What every commit adds to (`PagerStats::commits`, `writer_lock_held_ns`,
/// `writer_lock_holds`): written by the lock holder, together (K6).
#[derive(Default)]
struct CommitCounts {
    commits: AtomicU64,
    writer_held_ns: AtomicU64,
    writer_holds: AtomicU64,
}

/// A mutex whose data stays consistent even if a holder panicked: every critical section
/// here either completes its update or leaves the previous state (no partial writes), so
/// the poison flag is ignored rather than turned into a panic.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The file backend. Cheap to clone; all clones share one cache and one log.
#[derive(Clone)]
pub struct FileBackend {
    inner: Arc<Inner>,
    handle: Arc<Handle>,
}

/// What the users of a backend (its `FileBackend` clones and their views) hold: when the
/// last goes, the backend closes — in the dropping thread, after any background round has
/// ended — so the file is a plain SQLite database once the last handle is dropped. The
/// checkpointer thread holds only the `Inner`, never a `Handle`.
struct Handle {
    inner: Arc<Inner>,
}

impl Drop for Handle {
    fn drop(&mut self) {
        self.inner.close();
    }
}

type Registry = Mutex<HashMap<String, Weak<Handle>>>;

/// One backend per database file per process (lockfile L3): path → live backend.
fn registry() -> &'static (Registry, Condvar) {
    static REGISTRY: OnceLock<(Registry, Condvar)> = OnceLock::new();
    REGISTRY.get_or_init(|| (Mutex::new(HashMap::new()), Condvar::new()))
}

/// How long `open` waits for a previous backend of the same file, already unreachable, to
/// finish closing (its final checkpoint) before reporting `Busy`.
const CLOSE_WAIT: Duration = Duration::from_secs(30);

/// How long an explicit checkpoint waits for the writer lock before reporting `Busy`.
const CHECKPOINT_WAIT: Duration = Duration::from_secs(5);

impl FileBackend {
    /// Opens (or creates) the database at `path` on the real file system.
    pub fn open(path: &str, opts: &OpenOptions) -> Result<FileBackend> {
        FileBackend::open_with(
            Arc::new(crate::vfs::OsVfs),
            path,
            opts,
            PagerConfig::default(),
        )
    }

    /// Opens through any [`Vfs`]. Opening a database already open in this process returns
    /// the same backend (its options stay those of the first open).
    pub fn open_with(
        vfs: Arc<dyn Vfs>,
        path: &str,
        opts: &OpenOptions,
        config: PagerConfig,
    ) -> Result<FileBackend> {
        let key = vfs
            .registry_key(path)
            .unwrap_or_else(|| format!("vfs:{:p}:{path}", Arc::as_ptr(&vfs)));
        let (map, cv) = registry();
        let mut reg = lock(map);
        let deadline = Instant::now() + CLOSE_WAIT;
        while let Some(weak) = reg.get(&key) {
            if let Some(handle) = weak.upgrade() {
                return Ok(FileBackend {
                    inner: Arc::clone(&handle.inner),
                    handle,
                });
            }
            // The last handle is gone but its close (checkpoint) is still running.
            let now = Instant::now();
            if now >= deadline {
                return Err(StorageError::Busy {
                    reason: format!("{path} is still closing"),
                });
            }
            reg = cv
                .wait_timeout(reg, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        let inner = Arc::new(open_inner(vfs, path, key.clone(), opts, config)?);
        let handle = Arc::new(Handle {
            inner: Arc::clone(&inner),
        });
        let _ = inner.handle.set(Arc::downgrade(&handle));
        reg.insert(key, Arc::downgrade(&handle));
        if !inner.read_only && inner.config.background_checkpoint {
            spawn_checkpointer(&inner);
        }
        Ok(FileBackend { inner, handle })
    }

    /// Starts a background checkpoint round by hand (R1 done; advance it with
    /// [`CheckpointRound::step`]): `None` when there is nothing to fold or a checkpoint is
    /// running. For tests that commit and crash between the steps.
    pub fn begin_checkpoint_round(&self) -> Result<Option<CheckpointRound>> {
        let round = self.inner.begin_round()?;
        Ok(round.map(|r| r.held_by(Arc::clone(&self.handle))))
    }

    pub fn path(&self) -> &str {
        &self.inner.path
    }

    pub fn set_synchronous(&self, s: Synchronous) {
        self.inner
            .synchronous
            .store(sync_to_u8(s), Ordering::Relaxed);
    }

    pub fn synchronous(&self) -> Synchronous {
        u8_to_sync(self.inner.synchronous.load(Ordering::Relaxed))
    }

    /// Why writes are refused after a failed fsync (D2), if they are.
    pub fn poisoned(&self) -> Option<String> {
        lock(&self.inner.poison).clone()
    }

    pub fn stats(&self) -> PagerStats {
        let (cache_pages, cache_pages_max, cache_versions, dirty_pages, age) = {
            let c = &self.inner.cache;
            (
                c.len(),
                c.pages_max(),
                c.version_count(),
                c.dirty_count(),
                c.oldest_snapshot_age(),
            )
        };
        let (log_frames_bytes, files) = match lock(&self.inner.log).as_ref() {
            Some(l) => (
                l.frames_bytes(),
                vec![Arc::clone(l.active.file()), Arc::clone(&l.spare)],
            ),
            None => (0, Vec::new()),
        };
        let log_file_bytes = files.iter().map(|f| f.size().unwrap_or(0)).sum();
        let i = &self.inner;
        let (writer_wakes, writer_handoffs) = i.writer.wakes();
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        PagerStats {
            commits: load(&i.counts.commits),
            commit_syncs: load(&i.commit_syncs),
            log_sync_us: load(&i.log_sync_us),
            checkpoints: load(&i.checkpoints),
            relaxed_checkpoints: load(&i.relaxed_checkpoints),
            checkpoint_pages: load(&i.checkpoint_pages),
            checkpoint_us: load(&i.checkpoint_us),
            checkpoint_max_us: load(&i.checkpoint_max_us),
            checkpoint_stalls: load(&i.checkpoint_stalls),
            spilled_pages: load(&i.spilled_pages),
            spilled_direct_pages: load(&i.spilled_direct_pages),
            log_frames_bytes,
            log_file_bytes,
            oldest_snapshot_age_ms: age
                .map_or(0, |a| u64::try_from(a.as_millis()).unwrap_or(u64::MAX)),
            writer_waits: load(&i.writer_waits),
            writer_wait_us: load(&i.writer_wait_us),
            writer_wait_max_us: load(&i.writer_wait_max_us),
            writer_wakes,
            writer_handoffs,
            cache_pages,
            cache_pages_max,
            cache_versions,
            dirty_pages,
            writer_lock_held_ns: load(&i.counts.writer_held_ns),
            writer_lock_holds: load(&i.counts.writer_holds),
            gathers: load(&i.gathers),
            gather_us: load(&i.gather_us),
            gather_handoffs: load(&i.gather_handoffs),
        }
    }
}

/// Refuses databases another engine still has un-applied changes for.
fn check_foreign_logs(vfs: &dyn Vfs, path: &str) -> Result<()> {
    let refuse = |what: &str| {
        StorageError::CantOpen {
        path: path.to_string(),
        reason: format!(
            "{what} holds changes stock SQLite has not applied yet; open the database once with \
             sqlite3 (or run `PRAGMA wal_checkpoint(TRUNCATE)`) so they are checkpointed, then retry"
        ),
    }
    };
    let wal = format!("{path}-wal");
    if vfs.exists(&wal)? && vfs.open(&wal, false)?.size()? > 0 {
        return Err(refuse(&wal));
    }
    let journal = format!("{path}-journal");
    if vfs.exists(&journal)? {
        let f = vfs.open(&journal, false)?;
        // SQLite's rule: a journal is hot when it is non-empty and its header is not zeroed
        // (journal_mode=PERSIST zeroes the header on commit).
        let mut head = [0u8; 28];
        let n = read_zero_padded(&*f, 0, &mut head)?;
        if n > 0 && head.iter().any(|b| *b != 0) {
            return Err(refuse(&journal));
        }
    }
    Ok(())
}

/// Opening: lock, scan the log, redo it over the database file, checkpoint (D4).
fn open_inner(
    vfs: Arc<dyn Vfs>,
    path: &str,
    registry_key: String,
    opts: &OpenOptions,
    config: PagerConfig,
) -> Result<Inner> {
    let create = opts.create && !opts.read_only;
    if !vfs.exists(path)? && !create {
        // The open(2) SQLite would make fails with ENOENT.
        crate::error::note_os_error(&std::io::Error::from_raw_os_error(libc::ENOENT));
        return Err(StorageError::CantOpen {
            path: path.to_string(),
            reason: "no such file".into(),
        });
    }
    check_foreign_logs(&*vfs, path)?;
    let process_lock = vfs.lock_process(path)?;
    let db = vfs.open(path, create)?;
    let db_size = db.size()?;
    // P3: the counter stock SQLite last saw in the file, whatever the log redoes below.
    let file_change_counter = {
        let mut h = [0u8; HEADER_SIZE];
        read_zero_padded(&*db, 0, &mut h)?;
        header::get_u32(&h, header::OFFSET_CHANGE_COUNTER)
    };

    // Both log files, chained (B1).
    let mut log_files: Vec<Option<Arc<dyn VfsFile>>> = Vec::new();
    for lpath in [log::log_path(path), log::log2_path(path)] {
        log_files.push(if vfs.exists(&lpath)? {
            Some(vfs.open(&lpath, false)?)
        } else {
            None
        });
    }
    let found: Vec<Option<&dyn VfsFile>> = log_files.iter().map(|f| f.as_deref()).collect();
    let chain = log::scan_chain(&found)?;
    let log_header = chain.header;
    let frames = &chain.frames[..];

    // The page size comes from the log when it has frames: page 1 in the file may be torn
    // by an interrupted checkpoint and is repaired by the redo below (D5). A log without
    // frames has nothing to say about this database.
    let new_page_size = || {
        let ps = opts.page_size;
        if !(512..=65536).contains(&ps) || !ps.is_power_of_two() {
            return Err(StorageError::misuse(format!(
                "page size {ps} is not a power of two in 512..=65536"
            )));
        }
        Ok(ps as usize)
    };
    let mut db_size = db_size;
    let page_size = match log_header.filter(|_| !frames.is_empty()) {
        Some(h) => h.page_size as usize,
        None if db_size == 0 => new_page_size()?,
        None => {
            let mut h = [0u8; HEADER_SIZE];
            read_zero_padded(&*db, 0, &mut h)?;
            let page_size = DbHeader::parse(&h)?.page_size as usize;
            // A blank database asked to take another page size is emptied and begins
            // again as a new file. Under the process lock with no frame to redo, every
            // state a crash can leave (the old blank page, an empty file) is an empty
            // database, so no commit can be lost.
            if opts.page_size_for_blank
                && !opts.read_only
                && opts.page_size as usize != page_size
                && db_size == page_size as u64
            {
                let mut page1 = vec![0u8; page_size];
                read_zero_padded(&*db, 0, &mut page1)?;
                if header::is_blank_database(&page1) {
                    let ps = new_page_size()?;
                    db.truncate(0)?;
                    db.sync()?;
                    db_size = 0;
                    ps
                } else {
                    page_size
                }
            } else {
                page_size
            }
        }
    };

    // Redo (D5): every valid frame, in order, over pages read from the database file.
    let mut redo: BTreeMap<u32, Vec<u8>> = BTreeMap::new();
    for frame in frames {
        for delta in &frame.pages {
            let page = match redo.entry(delta.pgno.0) {
                std::collections::btree_map::Entry::Occupied(o) => o.into_mut(),
                std::collections::btree_map::Entry::Vacant(v) => {
                    let mut buf = vec![0u8; page_size];
                    read_zero_padded(&*db, (delta.pgno.0 as u64 - 1) * page_size as u64, &mut buf)?;
                    v.insert(buf)
                }
            };
            apply_runs(page, &delta.runs);
        }
    }
    let last_frame_count = frames.last().map(|f| f.page_count);

    // The header, from the redone page 1 or the file.
    let (page_count, usable_size) = if db_size == 0 && last_frame_count.is_none() {
        (0u32, page_size)
    } else {
        let page1 = match redo.get(&1) {
            Some(p) => p.clone(),
            None => {
                let mut buf = vec![0u8; page_size.max(HEADER_SIZE)];
                read_zero_padded(&*db, 0, &mut buf)?;
                buf
            }
        };
        let h = DbHeader::parse(&page1)?;
        if h.page_size as usize != page_size {
            return Err(StorageError::corrupt(
                PageNo(1),
                format!(
                    "header page size {} differs from the log's {page_size}",
                    h.page_size
                ),
            ));
        }
        let file_pages = u32::try_from(db_size.div_ceil(page_size as u64)).unwrap_or(u32::MAX);
        let count = last_frame_count.unwrap_or_else(|| h.effective_page_count(file_pages));
        // Every page up to the count is in the file or in the log: a page new to the file
        // is logged whole (log F3), and the file holds at least the generation's base pages
        // (D3). A larger count is corruption — trusting it would size per-page structures
        // (the integrity check's page map) by an untrusted number. SQLite likewise reports
        // a header page count past the end of the file as corrupt.
        let logged_max = redo.keys().next_back().copied().unwrap_or(0);
        if count > file_pages.max(logged_max) {
            return Err(StorageError::corrupt(
                PageNo(1),
                format!(
                    "page count {count} exceeds the {file_pages} pages in the file and \
                     the pages in the log"
                ),
            ));
        }
        (count, h.usable_size())
    };
    if page_count == 0 && db_size > 0 {
        return Err(StorageError::NotADatabase {
            reason: "database size is zero pages".into(),
        });
    }

    let committed_seq = chain.last_seq().unwrap_or(0);
    let cache = Cache::new(committed_seq, page_count, opts.cache_pages_max);
    for (pgno, img) in redo {
        if pgno <= page_count {
            cache.insert_recovered(PageNo(pgno), PageRef::from(img));
        }
    }

    let inner = Inner {
        vfs: Arc::clone(&vfs),
        path: path.to_string(),
        registry_key,
        db,
        page_size,
        usable_size,
        read_only: opts.read_only,
        config,
        synchronous: AtomicU8::new(sync_to_u8(opts.synchronous)),
        poison: Mutex::new(None),
        poisoned: AtomicBool::new(false),
        cache,
        writer: OwnLines(WriterLock::default()),
        log: OwnLines(Mutex::new(None)),
        sync: OwnLines(Mutex::new(SyncState::new(committed_seq))),
        synced_atomic: AtomicU64::new(committed_seq),
        rounds: Rounds::default(),
        writers_in_progress: OwnLines(AtomicU64::new(0)),
        log_sync_us_avg: AtomicU64::new(0),
        history: Arc::default(),
        log_sync_us: AtomicU64::new(0),
        gathers: AtomicU64::new(0),
        gather_us: AtomicU64::new(0),
        gather_handoffs: AtomicU64::new(0),
        ckpt_busy: Mutex::new(false),
        ckpt_cv: Condvar::new(),
        wake: OnceLock::new(),
        counts: OwnLines::default(),
        commit_syncs: AtomicU64::new(0),
        checkpoints: AtomicU64::new(0),
        checkpoint_pages: AtomicU64::new(0),
        checkpoint_us: AtomicU64::new(0),
        checkpoint_max_us: AtomicU64::new(0),
        checkpoint_stalls: AtomicU64::new(0),
        spilled_pages: AtomicU64::new(0),
        spilled_direct_pages: AtomicU64::new(0),
        strict_commit_seq: AtomicU64::new(0),
        db_sync_owed: Mutex::new(false),
        relaxed_checkpoints: AtomicU64::new(0),
        writer_waits: AtomicU64::new(0),
        writer_wait_us: AtomicU64::new(0),
        writer_wait_max_us: AtomicU64::new(0),
        file_change_counter: AtomicU32::new(file_change_counter),
        handle: OnceLock::new(),
        process_lock: Mutex::new(process_lock),
    };
    if opts.read_only {
        // Redone pages stay pinned in the cache; nothing is written.
        return Ok(inner);
    }

    // Writable: take over both log files and checkpoint everything recovered (D4). The
    // logs found are synced first (inside the checkpoint) so a second crash cannot lose
    // frames whose pages were already written.
    let mut files = Vec::with_capacity(2);
    for (f, lpath) in log_files
        .into_iter()
        .zip([log::log_path(path), log::log2_path(path)])
    {
        files.push(match f {
            Some(f) => f,
            None => vfs.open(&lpath, true)?,
        });
    }
    let (Some(second), Some(first)) = (files.pop(), files.pop()) else {
        return Err(StorageError::misuse("two log files expected"));
    };
    let logs = inner.checkpoint_at_open([first, second], &chain.positions, chain.salt_max)?;
    {
        let mut st = lock(&inner.sync);
        st.active = Some(Arc::clone(logs.active.file()));
    }
    *lock(&inner.log) = Some(logs);
    Ok(inner)
}

/// Starts the checkpointer thread (docs/log-and-recovery.md 3b). It holds only a weak
/// reference, so the backend still closes when its last handle goes; if the thread cannot
/// be started, rounds run inline after commits instead.
fn spawn_checkpointer(inner: &Arc<Inner>) {
    let wake: Arc<(Mutex<Wake>, Condvar)> = Arc::default();
    let weak = Arc::downgrade(inner);
    let signal = Arc::clone(&wake);
    let spawned = std::thread::Builder::new()
        .name("parlite-checkpoint".into())
        .spawn(move || loop {
            {
                let (m, cv) = &*signal;
                let mut w = lock(m);
                while !w.requested && !w.stop {
                    w = cv.wait(w).unwrap_or_else(|p| p.into_inner());
                }
                if w.stop {
                    return;
                }
                w.requested = false;
            }
            let Some(inner) = weak.upgrade() else {
                return;
            };
            // A request made while the previous round ran is judged again now that the
            // round is over: that round captured the state that passed the threshold, and
            // what was committed during it alone seldom passes it again. Run at once, the
            // next round folded only those pages, so rounds ran back to back, each writing
            // fewer distinct pages per commit (BENCHMARKS.md, conc3 branch).
            if inner.past_checkpoint_threshold() {
                // A failure poisons the backend (B7); the committers see it.
                let _ = inner.run_round();
            }
            drop(inner);
        });
    if spawned.is_ok() {
        let _ = inner.wake.set(wake);
    }
}

impl Inner {
    fn poison(&self, reason: String) {
        let mut p = lock(&self.poison);
        if p.is_none() {
            *p = Some(reason);
        }
        self.poisoned.store(true, Ordering::SeqCst);
    }

    fn check_writable(&self) -> Result<()> {
        if self.read_only {
            return Err(StorageError::ReadOnly {
                reason: "the database was opened read-only".into(),
            });
        }
        if !self.poisoned.load(Ordering::Acquire) {
            return Ok(());
        }
        if let Some(reason) = lock(&self.poison).clone() {
            return Err(StorageError::ReadOnly {
                reason: format!("an earlier write failed ({reason}); reopen the database"),
            });
        }
        Ok(())
    }

    /// Takes the writer lock, waiting up to `timeout` (writer_lock.rs), released on drop.
    fn acquire_writer(self: &Arc<Self>, timeout: Duration) -> Result<WriterGuard> {
        let held = self.acquire_held(timeout)?;
        Ok(WriterGuard {
            inner: Arc::clone(self),
            held: Some(held),
        })
    }

    /// Takes the writer lock, waiting up to `timeout` (writer_lock.rs), for a write view,
    /// which releases it through its own `Arc` (K6).
    fn acquire_held(&self, timeout: Duration) -> Result<HeldWriter> {
        let start = Instant::now();
        let got = self.writer.acquire(start + timeout);
        if got != Some(false) {
            self.writer_waits.fetch_add(1, Ordering::Relaxed);
            self.count_writer_wait(start);
        }
        if got.is_none() {
            return Err(StorageError::Busy {
                reason: "another write transaction is active".into(),
            });
        }
        Ok(HeldWriter {
            since: Instant::now(),
            leaves: false,
        })
    }

    /// Adds a writer-lock wait that began at `start` to the statistics.
    fn count_writer_wait(&self, start: Instant) {
        let waited_us = u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX);
        if waited_us > 0 {
            self.writer_wait_us.fetch_add(waited_us, Ordering::Relaxed);
            self.writer_wait_max_us
                .fetch_max(waited_us, Ordering::Relaxed);
        }
    }

    fn register_snapshot(self: &Arc<Self>) -> SnapshotGuard {
        let (seq, page_count) = self.cache.register_snapshot();
        SnapshotGuard {
            _handle: self.handle.get().and_then(Weak::upgrade),
            inner: Arc::clone(self),
            seq,
            page_count,
            registered: true,
        }
    }

    /// Page `pgno` as snapshot `seq` sees it (P1, C2, C4): this thread's kept image if it
    /// is still current (thread_memo.rs H2), else the cache's, else the file's.
    fn read_page(&self, seq: u64, page_count: u32, pgno: PageNo) -> Result<PageRef> {
        if pgno.0 == 0 || pgno.0 > page_count {
            return Err(StorageError::corrupt(
                pgno,
                format!("page number out of range 1..={page_count}"),
            ));
        }
        if let Some(img) = thread_memo::get(&self.cache, pgno.0, seq) {
            return Ok(img);
        }
        let img = self.fetch_page(seq, pgno)?;
        thread_memo::put(&self.cache, pgno.0, seq, &img);
        Ok(img)
    }

    /// `read_page` from the cache, or from the file into the cache.
    fn fetch_page(&self, seq: u64, pgno: PageNo) -> Result<PageRef> {
        let mut img = match self.cache.lookup_or_spare(pgno, seq) {
            cache::Lookup::Hit(found) => return found,
            cache::Lookup::Miss(Some(spare)) if spare.len() == self.page_size => spare,
            cache::Lookup::Miss(_) => zeroed_page(self.page_size),
        };
        let Some(buf) = Arc::get_mut(&mut img) else {
            return Err(StorageError::misuse("a spare page buffer is shared"));
        };
        let got = read_zero_padded(&*self.db, (pgno.0 as u64 - 1) * self.page_size as u64, buf)?;
        if got < self.page_size {
            return Err(StorageError::corrupt(
                pgno,
                "page lies past the end of the database file",
            ));
        }
        // C4: re-check under the shard lock — an entry created meanwhile wins over these
        // bytes.
        self.cache.insert_from_file(pgno, seq, img)
    }

    /// Step 6: asks for a background round (checkpoint.rs) without waiting for it — the
    /// checkpointer thread's, or, without one, run here (the caller holds no lock).
    fn request_checkpoint(self: &Arc<Self>) {
        match self.wake.get() {
            Some(wake) => {
                // A request already pending is seen when the checkpointer next looks:
                // notifying again cost every commit during a round a `futex` call.
                let (m, cv) = &**wake;
                let mut w = lock(m);
                if !w.requested {
                    w.requested = true;
                    cv.notify_one();
                }
            }
            // A failure poisons the backend (B7); the commit's own durability wait sees it.
            None => {
                let _ = self.run_round();
            }
        }
    }
}

impl Inner {
    /// Clean close, when the last `Handle` goes: fold the log into the database file and
    /// remove both log files, so the file is a plain SQLite database. Errors leave the logs
    /// for the next open's recovery.
    fn close(self: &Arc<Self>) {
        if let Some(wake) = self.wake.get() {
            let (m, cv) = &**wake;
            lock(m).stop = true;
            cv.notify_all();
        }
        // Waits for a running background round (it holds the slot).
        let slot = self.checkpoint_slot(true);
        if !self.read_only && lock(&self.poison).is_none() {
            let logs = lock(&self.log).take();
            if let Some(mut logs) = logs {
                if self.checkpoint_full(&mut logs).is_ok() {
                    drop(logs);
                    let _ = self.vfs.delete(&log::log2_path(&self.path));
                    let _ = self.vfs.delete(&log::log_path(&self.path));
                }
            }
        }
        drop(slot);
        drop(lock(&self.process_lock).take());
        let (map, cv) = registry();
        let mut reg = lock(map);
        let ours = self.handle.get().map_or(std::ptr::null(), |h| h.as_ptr());
        if reg
            .get(&self.registry_key)
            .is_some_and(|w| std::ptr::eq(w.as_ptr(), ours))
        {
            reg.remove(&self.registry_key);
        }
        cv.notify_all();
    }
}

/// A write view's place in `Inner::writers_in_progress`, given back once its frame is
/// written or when the view goes (`FileWriteView`'s `Drop`). Holds no `Arc` (K6).
struct InProgress {
    counted: bool,
}

impl InProgress {
    fn new(inner: &Inner) -> InProgress {
        inner.writers_in_progress.fetch_add(1, Ordering::AcqRel);
        InProgress { counted: true }
    }

    fn release(&mut self, inner: &Inner) {
        if std::mem::take(&mut self.counted) {
            inner.writers_in_progress.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// The writer lock, held: released by `release`, which a `WriterGuard`'s drop and a
/// `FileWriteView`'s call (K6). It has no `Drop` of its own: an owner that forgets to
/// release it leaves the lock taken.
struct HeldWriter {
    /// When the lock was taken (`PagerStats::writer_lock_held_ns`).
    since: Instant,
    /// The holder goes on to a durability wait once it lets the lock go (writer_lock.rs W8).
    leaves: bool,
}

impl HeldWriter {
    fn release(self, inner: &Inner) {
        let held = self.since.elapsed();
        let held_ns = u64::try_from(held.as_nanos()).unwrap_or(u64::MAX);
        inner
            .counts
            .writer_held_ns
            .fetch_add(held_ns, Ordering::Relaxed);
        inner.counts.writer_holds.fetch_add(1, Ordering::Relaxed);
        inner.writer.release(held, self.leaves);
    }
}

/// The writer lock, released on drop.
struct WriterGuard {
    inner: Arc<Inner>,
    /// `None` only during the drop.
    held: Option<HeldWriter>,
}

impl Drop for WriterGuard {
    fn drop(&mut self) {
        if let Some(held) = self.held.take() {
            held.release(&self.inner);
        }
    }
}

/// A registered snapshot, released on drop (cache C2) unless a commit released it (C14).
struct SnapshotGuard {
    inner: Arc<Inner>,
    seq: u64,
    page_count: u32,
    /// Cleared once the commit's publication released it (`FileWriteView::commit_inner`).
    registered: bool,
    /// Keeps the backend open while the view lives (`Handle`).
    _handle: Option<Arc<Handle>>,
}

impl Drop for SnapshotGuard {
    fn drop(&mut self) {
        if self.registered {
            self.inner.cache.release_snapshot(self.seq);
        }
    }
}

/// A read snapshot. Its pages are memoized per view: for a fixed snapshot `seq` the image of
/// a page never changes (cache C2; a checkpoint round writes only dirty, hence cached, pages:
/// B5), so the interior pages every descent crosses are fetched from the shared cache (a
/// shard mutex other threads take too, cache C7) once per view instead of once per descent.
/// Measured: read-only hc_mixed on a file did not scale past one thread while the same run
/// in memory scaled 9x at 8 threads (BENCHMARKS.md, 16-core machine, before the shards).
struct FileReadView {
    /// Declared first, so dropped before the snapshot is released (read_memo.rs).
    memo: std::cell::RefCell<read_memo::ReadMemo>,
    snap: SnapshotGuard,
}

impl PageRead for FileReadView {
    fn page_size(&self) -> usize {
        self.snap.inner.page_size
    }
    fn usable_size(&self) -> usize {
        self.snap.inner.usable_size
    }
    fn page_count(&self) -> u32 {
        self.snap.page_count
    }
    fn page(&self, pgno: PageNo) -> Result<PageRef> {
        if let Some(page) = self.memo.borrow().get(pgno.0) {
            return Ok(page);
        }
        let page = self
            .snap
            .inner
            .read_page(self.snap.seq, self.snap.page_count, pgno)?;
        self.memo.borrow_mut().put(pgno.0, page.clone());
        Ok(page)
    }
}

impl ReadView for FileReadView {
    fn snapshot_seq(&self) -> u64 {
        self.snap.seq
    }
}

/// A savepoint: the private state of each page changed since it was taken (P4).
struct Savepoint {
    id: u32,
    page_count: u32,
    /// pgno → the page's private state at savepoint time (spill.rs S2).
    saved: HashMap<u32, spill::SavedImage>,
}

struct FileWriteView {
    snap: SnapshotGuard,
    /// Counts this view in `Inner::writers_in_progress` until its frame is written.
    in_progress: InProgress,
    /// Given back by `release_writer` or the drop (K6).
    writer: Option<HeldWriter>,
    page_count: u32,
    /// Private copies (P2); `Arc` so `page()` can hand them out and `page_mut` copies on
    /// write only when a reader of this view still holds one.
    private: BTreeMap<u32, PageRef>,
    savepoints: Vec<Savepoint>,
    next_savepoint: u32,
    /// This commit's durability (`WriteView::set_synchronous`); `None`: the database's.
    synchronous: Option<Synchronous>,
    /// Steps 1–2 done before the writer lock (`attach_writer`, K5); dropped by any change.
    prepared: Option<Prepared>,
    /// Detached views: the pages read or written (rebase.rs R1); `None` for lock holders.
    footprint: Option<std::cell::RefCell<Footprint>>,
    /// The snapshot's images this view fetched (memo.rs M1).
    base: memo::SnapshotMemo,
    /// Pages already private and saved for the innermost savepoint (saved.rs W1).
    saved: saved::SavedMemo,
    /// Private pages moved out of `private` when it passed its bound (spill.rs S1).
    spill: spill::Spill,
    /// Set by `write_beyond_snapshots` for a spilled commit: pages numbered above it were
    /// written straight into the database file (D6) and stay out of the frame.
    direct_above: Option<u32>,
}

impl Drop for FileWriteView {
    /// The writer lock and the place in `writers_in_progress` go through the snapshot's
    /// `Arc` (K6); the snapshot's own release follows, with the fields.
    fn drop(&mut self) {
        self.release_writer();
        self.in_progress.release(&self.snap.inner);
    }
}

impl FileWriteView {
    fn inner(&self) -> &Arc<Inner> {
        &self.snap.inner
    }

    /// Releases the writer lock, if the view holds it.
    fn release_writer(&mut self) {
        if let Some(w) = self.writer.take() {
            w.release(&self.snap.inner);
        }
    }

    /// Page `pgno` as the view's snapshot sees it, fetched once per view (memo.rs M1, M2).
    fn base_page(&self, pgno: PageNo) -> Result<PageRef> {
        self.base.get_or_fetch(pgno.0, || {
            self.inner()
                .read_page(self.snap.seq, self.snap.page_count, pgno)
        })
    }

    fn remember(&mut self, pgno: u32) {
        if let Some(sp) = self.savepoints.last_mut() {
            if let std::collections::hash_map::Entry::Vacant(v) = sp.saved.entry(pgno) {
                let img = match self.private.get(&pgno) {
                    Some(img) => spill::SavedImage::Mem(Arc::clone(img)),
                    None => self.spill.save(pgno).unwrap_or(spill::SavedImage::Absent),
                };
                v.insert(img);
            }
        }
    }

    /// Makes room for one more resident private page (spill.rs): past the view's bound,
    /// every resident page but page 1, the recent ones and `keep` goes to the spill file
    /// (S4), in one batch, so a bulk load writes its full pages out once.
    fn make_room(&mut self, keep: u32) -> Result<()> {
        if !self.spill.is_full(self.private.len()) {
            return Ok(());
        }
        let leaving: Vec<u32> = self
            .private
            .keys()
            .copied()
            .filter(|&p| p != 1 && p != keep && !self.spill.recent.contains(p))
            .collect();
        // W1: the memo names only resident pages.
        self.saved.clear();
        let inner = &self.snap.inner;
        for pgno in leaving {
            if let Some(img) = self.private.get(&pgno) {
                self.spill.put(pgno, img, inner.page_size)?;
                inner.spilled_pages.fetch_add(1, Ordering::Relaxed);
            }
            if let Some(img) = self.private.remove(&pgno) {
                buffers::recycle(img);
            }
        }
        Ok(())
    }

    /// Whether the view holds no change (as `prepare` decides).
    fn unchanged(&self) -> bool {
        self.private.is_empty() && self.spill.is_empty() && self.page_count == self.snap.page_count
    }

    /// Steps 1–2 of the commit path (module docs), which need no lock: set page 1's page
    /// count if it changed, diff every private page against its base (the snapshot's image)
    /// and encode the frame without its salt and checksum. `None`: nothing to commit. The
    /// result is the same under the writer lock as outside it as long as no commit followed
    /// the snapshot (K5), and running it again gives the same.
    fn prepare(&mut self) -> Result<Option<Prepared>> {
        let base_count = self.snap.page_count;
        if self.unchanged() {
            return Ok(None);
        }
        if self.page_count == 0 {
            return Err(StorageError::misuse("a commit must leave at least page 1"));
        }
        let seq = self.snap.seq + 1;
        // P3: a commit records a new page count on page 1 (offset 28), and touches page 1
        // for nothing else: the change counter and version-valid-for are stamped by the
        // checkpoint into the file's copy (`Inner::write_pages_and_trim`). A commit that
        // leaves page 1 alone so neither copies, diffs, logs nor publishes it — it did all
        // four on every commit, ~4k instructions of the ~16.7k of a kv_ops disk commit
        // (BENCHMARKS.md, commit branch, 2026-11-23).
        let count = self.page_count;
        let count_stale = match self.private.get(&1) {
            Some(p1) => {
                p1.len() >= HEADER_SIZE && header::get_u32(p1, header::OFFSET_PAGE_COUNT) != count
            }
            None => count != base_count,
        };
        if count_stale {
            let p1 = self.page_mut(PageNo(1))?;
            if p1.len() >= HEADER_SIZE {
                put_u32(p1, header::OFFSET_PAGE_COUNT, count);
            }
        }
        // Step 2: diff against the base images (F3), straight into the frame.
        let inner = &*self.snap.inner;
        let mut frame =
            FrameBuilder::new(buffers::take_frame(), seq, self.page_count, inner.page_size);
        let mut publish = Vec::new();
        // Asked only for pages new to the file: it takes the cache's registry mutex, which
        // every other writer's snapshot registration and release also take.
        let mut max_snap_count: Option<u32> = None;
        let mut log = |pgno: u32, img: &PageRef| -> Result<()> {
            if pgno <= base_count {
                let base = self.base_page(PageNo(pgno))?;
                if frame.push_diff(PageNo(pgno), &base, img) {
                    publish.push((PageNo(pgno), Some(base), Arc::clone(img)));
                }
            } else {
                // New to the file: logged whole (F3). A snapshot from before a truncation
                // may still see an older image of this page number; keep it for it (C5).
                let max_snap_count =
                    *max_snap_count.get_or_insert_with(|| inner.cache.max_snapshot_page_count());
                let old = if pgno <= max_snap_count && !inner.cache.contains(PageNo(pgno)) {
                    let mut buf = vec![0u8; inner.page_size];
                    read_zero_padded(
                        &*inner.db,
                        (pgno as u64 - 1) * inner.page_size as u64,
                        &mut buf,
                    )?;
                    Some(PageRef::from(buf))
                } else {
                    None
                };
                frame.push_full(PageNo(pgno), img);
                publish.push((PageNo(pgno), old, Arc::clone(img)));
            }
            Ok(())
        };
        let direct = match self.direct_above {
            None if self.spill.is_empty() => {
                for (&pgno, img) in self.private.range(1..=self.page_count) {
                    log(pgno, img)?;
                }
                None
            }
            _ => {
                // A spilled view: its resident and spilled pages merged in page order, each
                // spilled one read back alone; those above `direct_above` are in the
                // database file already (D6) and are neither logged nor published.
                let last = self
                    .direct_above
                    .map_or(self.page_count, |t| t.min(self.page_count));
                let mut resident = self.private.range(1..=last).peekable();
                let mut spilled = self.spill.range(1..=last).peekable();
                loop {
                    let from_memory = match (resident.peek(), spilled.peek()) {
                        (None, None) => break,
                        (Some((&r, _)), Some(&(sp, _))) => r < sp,
                        (Some(_), None) => true,
                        (None, Some(_)) => false,
                    };
                    if from_memory {
                        if let Some((&pgno, img)) = resident.next() {
                            log(pgno, img)?;
                        }
                    } else if let Some((pgno, slot)) = spilled.next() {
                        log(pgno, &self.spill.read_slot(slot, pgno)?)?;
                    }
                }
                (last < self.page_count).then_some(last + 1..=self.page_count)
            }
        };
        Ok(Some(Prepared {
            snapshot_seq: self.snap.seq,
            page_count: self.page_count,
            frame: frame.finish(),
            publish,
            direct,
        }))
    }

    /// D6, for a view that spilled: makes room for its pages numbered above every page
    /// count a snapshot sees (the snapshot's included), by writing them straight into the
    /// database file instead of logging and publishing them, so that its commit neither
    /// builds a frame nor pins cache pages for them. First a full checkpoint empties both
    /// log files, so no frame of the chain holds an older image of those page numbers;
    /// then the pages are written and the file synced. No snapshot reads those numbers
    /// (past its page count) and the durable state's page count is the snapshot's, so a
    /// crash before the commit's frame leaves bytes past the database's end only, and the
    /// frame, which follows, finds them durable. The returned checkpoint slot is held
    /// until the publication: a round trims the file to the committed page count.
    fn write_beyond_snapshots(&mut self) -> Result<checkpoint::CheckpointSlot> {
        let inner = &self.snap.inner;
        let Some(slot) = inner.checkpoint_slot(true) else {
            return Err(StorageError::misuse("checkpoint slot not taken"));
        };
        {
            let mut guard = lock(&inner.log);
            let Some(logs) = guard.as_mut() else {
                return Err(StorageError::misuse("write on a database without a log"));
            };
            inner.checkpoint_full(logs)?;
        }
        // Page 1 always goes through the frame: `prepare` stamps its page count after this.
        let above = self
            .snap
            .page_count
            .max(inner.cache.max_snapshot_page_count())
            .max(1);
        if above >= self.page_count {
            self.direct_above = Some(above);
            return Ok(slot);
        }
        let page_size = inner.page_size as u64;
        let mut written = 0u64;
        let mut write = |pgno: u32, img: &[u8]| -> Result<()> {
            if img.len() as u64 != page_size {
                return Err(StorageError::corrupt(
                    PageNo(pgno),
                    format!("private image of {} bytes", img.len()),
                ));
            }
            written += 1;
            inner.db.write_at((pgno as u64 - 1) * page_size, img)
        };
        for (&pgno, img) in self.private.range(above + 1..=self.page_count) {
            write(pgno, img)?;
        }
        for (pgno, slot) in self.spill.range(above + 1..=self.page_count) {
            write(pgno, &self.spill.read_slot(slot, pgno)?)?;
        }
        // Every page past the snapshot's count was appended by this view (none is left to
        // the file's stale bytes).
        if written != u64::from(self.page_count - above) {
            return Err(StorageError::misuse(format!(
                "{written} private pages for the {} pages past {above}",
                self.page_count - above
            )));
        }
        if let Err(e) = inner.db.sync() {
            inner.poison(format!(
                "database fsync failed during a spilled commit: {e}"
            ));
            return Err(e);
        }
        inner
            .spilled_direct_pages
            .fetch_add(written, Ordering::Relaxed);
        self.direct_above = Some(above);
        Ok(slot)
    }

    /// Steps 3–7 of the commit path (module docs), after `prepare` (done by `attach_writer`
    /// before it took the lock, else here).
    fn commit_inner(&mut self) -> Result<()> {
        if self.writer.is_none() {
            // P5: a detached view never publishes without the writer lock.
            return Err(StorageError::misuse(
                "a detached write view cannot commit without the writer lock",
            ));
        }
        self.inner().check_writable()?;
        // D6: a spilled view's pages past every snapshot go to the database file first.
        let ckpt_slot = match self.spill.is_empty() {
            true => None,
            false => Some(self.write_beyond_snapshots()?),
        };
        let prepared = match self.prepared.take() {
            Some(p) if p.snapshot_seq == self.snap.seq => Some(p),
            _ => self.prepare()?,
        };
        // Borrowed, not cloned (K6): only fields other than the snapshot's `Arc` change below.
        let inner = &self.snap.inner;
        let Some(mut prepared) = prepared else {
            return Ok(());
        };
        let (page_count, publish) = (prepared.page_count, std::mem::take(&mut prepared.publish));
        let mut frame = std::mem::take(&mut prepared.frame);
        let seq = self.snap.seq + 1;
        let mode = self
            .synchronous
            .unwrap_or_else(|| u8_to_sync(inner.synchronous.load(Ordering::Relaxed)));
        // Step 3: publish, under the log mutex taken while the writer lock is still held.
        // The next committer can reach the log mutex only after taking the writer lock this
        // one lets go below, so commits enter it in sequence order (L1): frames are appended
        // in that order (log G1) and `written_seq` stays a contiguous prefix (group_commit.rs
        // G4).
        let mut log_guard = lock(&inner.log);
        let Some(logs) = log_guard.as_mut() else {
            return Err(StorageError::misuse("write on a database without a log"));
        };
        // D2, under the log mutex: the previous commit's frame write may have failed after
        // its publication, which this view's snapshot may include; nothing may be logged
        // or published on top of it.
        inner.check_writable()?;
        if mode != Synchronous::Off {
            // B8: under the log mutex, before the publication, and before `written_seq`, so
            // a group-commit leader that covers this commit finds any relaxed round's debt
            // this commit depends on.
            inner.strict_commit_seq.fetch_max(seq, Ordering::SeqCst);
        }
        // The view reads no page from here on: its memo goes first, so a base version the
        // publication prunes is the cache's alone and its buffer is recycled (buffers.rs
        // U1) for this thread's next copy-on-write instead of freed, and its snapshot is
        // released by the publication itself (cache C14).
        self.base = memo::SnapshotMemo::default();
        if let Some(direct) = prepared.direct.take() {
            inner.cache.forget_unseen(direct, seq);
        }
        inner
            .cache
            .publish(seq, page_count, publish, Some(self.snap.seq));
        self.snap.registered = false;
        // Step 6 below may wait for a round, which needs the slot.
        drop(ckpt_slot);
        // Step 4: let the next writer in before the frame's `write` and the wait for the
        // disk, if this thread does not come straight back for the lock (L2).
        if let Some(w) = self.writer.as_mut() {
            w.leaves = mode == Synchronous::Full;
        }
        if mode == Synchronous::Full || self.footprint.is_some() {
            if let Some(w) = self.writer.take() {
                w.release(inner);
            }
        }
        // Step 5: seal and append the frame, then record it written, before the log mutex
        // goes. A failed write poisons the backend (D2) while the mutex is still held, so
        // the next committer, whose snapshot may hold this unlogged commit, finds the poison
        // above and logs nothing after it, and no checkpoint writes its pages (they check
        // under the same mutex, checkpoint.rs B9).
        if let Err(e) = logs.active.append_unsealed(&mut frame) {
            inner.poison(format!("log write failed: {e}"));
            return Err(e);
        }
        buffers::recycle_frame(frame);
        self.in_progress.release(inner);
        let written = inner.note_written(seq, mode == Synchronous::Full);
        inner.counts.commits.fetch_add(1, Ordering::Relaxed);
        // Step 6: ask for a background checkpoint (B6: the commit never waits for it).
        let need = inner.past_threshold(logs.active.frames_bytes());
        drop(log_guard);
        // Step 4 for a looping lock holder (L2), if not done above.
        if let Some(w) = self.writer.take() {
            w.release(inner);
        }
        // G6: a round handed over is synced before anything else delays its fsync.
        let led = match written {
            Written::Nothing => None,
            Written::Lead => Some(inner.lead_handed()),
            Written::WakeLeader(i) => {
                inner.rounds.wake(i);
                None
            }
        };
        if need {
            if inner.over_hard_bound() {
                // A failure poisons (B7); the durability wait below reports it.
                let _ = inner.checkpoint_backpressure();
            } else {
                inner.request_checkpoint();
            }
        }
        // Step 7: this commit's own mode, else the database's.
        match mode {
            Synchronous::Full => led.unwrap_or_else(|| inner.wait_durable(seq)),
            Synchronous::Normal | Synchronous::Off => Ok(()),
        }
    }
}

/// A commit's lock-free part (`FileWriteView::prepare`): valid while no commit followed
/// `snapshot_seq` and the view was not changed since (every `PageWrite` call drops it).
struct Prepared {
    snapshot_seq: u64,
    page_count: u32,
    /// The frame, salt and checksum still zero (`log::format::seal_frame`).
    frame: Vec<u8>,
    /// (page, base image to keep for older snapshots, new image) for `Cache::publish`.
    publish: Vec<(PageNo, Option<PageRef>, PageRef)>,
    /// Pages written into the database file before the frame (D6), for
    /// `Cache::forget_unseen`.
    direct: Option<std::ops::RangeInclusive<u32>>,
}

impl Drop for Prepared {
    /// A frame never written (the view changed, went stale or was dropped) is read by no
    /// one: its buffer is kept for this thread's next commit as a written one is (buffers.rs
    /// U4). (Measured: a concurrent commit that prepared, found its snapshot stale under
    /// the lock and rebased built its next frame in a fresh allocation: `FrameBuilder::new`'s
    /// malloc was ~2% of the samples, bdb_update --threads 2 --begin concurrent, perf.)
    fn drop(&mut self) {
        if self.frame.capacity() > 0 {
            buffers::recycle_frame(std::mem::take(&mut self.frame));
        }
    }
}

impl PageRead for FileWriteView {
    fn page_size(&self) -> usize {
        self.inner().page_size
    }
    fn usable_size(&self) -> usize {
        self.inner().usable_size
    }
    fn page_count(&self) -> u32 {
        self.page_count
    }
    fn page(&self, pgno: PageNo) -> Result<PageRef> {
        if pgno.0 == 0 || pgno.0 > self.page_count {
            return Err(StorageError::corrupt(
                pgno,
                format!("page number out of range 1..={}", self.page_count),
            ));
        }
        if let Some(f) = &self.footprint {
            f.borrow_mut().note(pgno.0);
        }
        self.spill.recent.note(pgno.0);
        if let Some(p) = self.private.get(&pgno.0) {
            return Ok(Arc::clone(p));
        }
        if let Some(p) = self.spill.read(pgno.0)? {
            return Ok(p);
        }
        self.base_page(pgno)
    }
}

impl PageWrite for FileWriteView {
    fn page_mut(&mut self, pgno: PageNo) -> Result<&mut [u8]> {
        if pgno.0 == 0 || pgno.0 > self.page_count {
            return Err(StorageError::corrupt(
                pgno,
                format!("page number out of range 1..={}", self.page_count),
            ));
        }
        self.prepared = None;
        if let Some(f) = &self.footprint {
            f.borrow_mut().note(pgno.0);
        }
        self.spill.recent.note(pgno.0);
        if !self.saved.contains(pgno.0) {
            self.remember(pgno.0);
            if !self.private.contains_key(&pgno.0) {
                // Room first: a failed spill write then leaves this page where it was.
                self.make_room(pgno.0)?;
                let img = match self.spill.take(pgno.0)? {
                    Some(img) => img,
                    None => self.base_page(pgno)?,
                };
                self.private.insert(pgno.0, img);
            }
            self.saved.note(pgno.0);
        }
        match self.private.get_mut(&pgno.0) {
            // P2: the committed image is shared; it is copied on first write, into a
            // buffer this thread recycled if it has one (buffers.rs).
            Some(p) => {
                if Arc::get_mut(p).is_none() {
                    *p = buffers::copy_of(p);
                }
                match Arc::get_mut(p) {
                    Some(img) => Ok(img),
                    None => Err(StorageError::misuse("private page still shared")),
                }
            }
            None => Err(StorageError::misuse("private page vanished")),
        }
    }

    /// The image is kept as it is, shared with whoever else holds it (the source of a
    /// backup), not copied into a fresh zeroed page: over six alternating pairs of a 100 MB
    /// backup the SQLite/parlite time ratio averaged 1.18 against 0.88 copying, parlite's
    /// own time falling in five of the six (BENCHMARKS.md, backup branch; the disk's state
    /// moves single runs by ±40%). The bookkeeping is `page_mut`'s.
    fn put_page(&mut self, pgno: PageNo, image: PageRef) -> Result<()> {
        let last = self.page_count.checked_add(1).ok_or(StorageError::Full)?;
        if pgno.0 == 0 || pgno.0 > last {
            return Err(StorageError::corrupt(
                pgno,
                format!("page number out of range 1..={last}"),
            ));
        }
        if image.len() != self.inner().page_size {
            return Err(StorageError::misuse("page image of another size"));
        }
        self.prepared = None;
        if let Some(f) = &self.footprint {
            f.borrow_mut().note(pgno.0);
        }
        if !self.saved.contains(pgno.0) {
            self.remember(pgno.0);
            if !self.private.contains_key(&pgno.0) {
                self.spill.discard(pgno.0);
                self.make_room(pgno.0)?;
            }
            self.saved.note(pgno.0);
        }
        self.private.insert(pgno.0, image);
        self.page_count = self.page_count.max(pgno.0);
        Ok(())
    }

    fn append_page(&mut self) -> Result<PageNo> {
        let pgno = self.page_count.checked_add(1).ok_or(StorageError::Full)?;
        self.prepared = None;
        self.remember(pgno);
        if let Some(f) = &self.footprint {
            f.borrow_mut().note(pgno);
        }
        self.spill.recent.note(pgno);
        if !self.private.contains_key(&pgno) {
            self.spill.discard(pgno);
            self.make_room(pgno)?;
        }
        self.private
            .insert(pgno, zeroed_page(self.inner().page_size));
        self.saved.note(pgno);
        self.page_count = pgno;
        Ok(PageNo(pgno))
    }

    fn truncate(&mut self, n: u32) -> Result<()> {
        if n > self.page_count {
            return Err(StorageError::misuse(format!(
                "truncate to {n} pages grows the database"
            )));
        }
        self.prepared = None;
        self.saved.clear();
        if let Some(f) = &self.footprint {
            f.borrow_mut().give_up();
        }
        self.page_count = n;
        Ok(())
    }

    fn savepoint(&mut self) -> u32 {
        self.next_savepoint += 1;
        self.saved.clear();
        let id = self.next_savepoint;
        self.savepoints.push(Savepoint {
            id,
            page_count: self.page_count,
            saved: HashMap::new(),
        });
        id
    }

    fn rollback_to(&mut self, savepoint: u32) -> Result<()> {
        let Some(pos) = self.savepoints.iter().position(|s| s.id == savepoint) else {
            return Err(StorageError::misuse(format!("no savepoint {savepoint}")));
        };
        self.prepared = None;
        self.saved.clear();
        // Undo newest first, so the oldest saved image of each page is restored last (P4).
        while self.savepoints.len() > pos {
            let Some(sp) = self.savepoints.pop() else {
                break;
            };
            for (pgno, img) in sp.saved {
                self.spill.discard(pgno);
                match img {
                    spill::SavedImage::Mem(img) => {
                        self.private.insert(pgno, img);
                    }
                    spill::SavedImage::Absent => {
                        self.private.remove(&pgno);
                    }
                    spill::SavedImage::Spilled(slot) => {
                        self.private.remove(&pgno);
                        self.spill.restore(pgno, slot);
                    }
                }
            }
            self.page_count = sp.page_count;
            if self.savepoints.len() == pos {
                // The savepoint stays open, now empty.
                self.savepoints.push(Savepoint {
                    id: sp.id,
                    page_count: sp.page_count,
                    saved: HashMap::new(),
                });
                break;
            }
        }
        Ok(())
    }

    fn release(&mut self, savepoint: u32) {
        let Some(pos) = self.savepoints.iter().position(|s| s.id == savepoint) else {
            return;
        };
        self.saved.clear();
        // The enclosing savepoint must still be able to undo what the released ones did:
        // it inherits their oldest saved images for pages it has not saved itself. (In
        // place: collecting the released ones first was an allocation per statement.)
        let (kept, released) = self.savepoints.split_at_mut(pos);
        let spill = &mut self.spill;
        // S2: a saved image dropped here gives back its slot.
        let mut drop_saved = |img: spill::SavedImage| {
            if let spill::SavedImage::Spilled(slot) = img {
                spill.release(slot);
            }
        };
        match kept.last_mut() {
            Some(outer) => {
                for sp in released {
                    for (pgno, img) in sp.saved.drain() {
                        match outer.saved.entry(pgno) {
                            std::collections::hash_map::Entry::Occupied(_) => drop_saved(img),
                            std::collections::hash_map::Entry::Vacant(v) => {
                                v.insert(img);
                            }
                        }
                    }
                }
            }
            None => {
                for sp in released {
                    sp.saved.drain().for_each(|(_, img)| drop_saved(img));
                }
            }
        }
        self.savepoints.truncate(pos);
    }
}

impl WriteView for FileWriteView {
    fn snapshot_seq(&self) -> u64 {
        self.snap.seq
    }

    fn commit(mut self: Box<Self>) -> Result<()> {
        self.commit_inner()
    }

    fn commit_seq(&self) -> Option<u64> {
        // As `prepare`, which publishes nothing for such a view.
        (!self.unchanged()).then_some(self.snap.seq + 1)
    }

    fn rollback(self: Box<Self>) {}

    fn set_spill_pages(&mut self, pages: Option<usize>) {
        // Only a lock holder spills: a detached view's pages are carried over by a rebase
        // and replayed by a concurrent commit's validation (spill.rs).
        if self.writer.is_some() && self.footprint.is_none() {
            self.spill.set_pages_max(pages);
        }
    }

    fn set_synchronous(&mut self, mode: Synchronous) {
        self.synchronous = Some(mode);
    }

    fn rebase_pages(&self) -> Result<Option<Box<dyn WriteView>>> {
        self.rebased()
    }

    fn attach_writer(&mut self, busy_timeout: Duration) -> Result<bool> {
        if self.writer.is_some() {
            return Ok(true);
        }
        self.inner().check_writable()?;
        // K5: steps 1–2 outside the lock; kept only if the snapshot is still the latest.
        if self.inner().cache.committed_seq() != self.snap.seq {
            // A frame prepared before a `Busy` is as stale (see below).
            self.prepared = None;
            return Ok(false);
        }
        if self.prepared.is_none() {
            self.prepared = self.prepare()?;
        }
        // Held by the view at once, so an error below releases it (the view's drop, K6).
        self.writer = Some(self.inner().acquire_held(busy_timeout)?);
        self.inner().check_writable()?;
        // The latest committed sequence number; stable while the writer lock is held.
        if self.inner().cache.committed_seq() != self.snap.seq {
            // The snapshot is stale for good, so the prepared frame can never be written:
            // its buffer goes back to this thread now (buffers.rs U4) for the view the
            // caller rebases onto, which prepares next. (Measured: kept until this view was
            // dropped after that commit, it left the rebased view's `FrameBuilder::new` to
            // allocate: 0.27 → 0.02 samples per 1,000 commits, `prepare` 0.78 → 0.48,
            // bdb_update --threads 2 --begin concurrent, perf.) The lock goes first: the
            // drop is no part of its hold.
            self.release_writer();
            self.prepared = None;
            return Ok(false);
        }
        Ok(true)
    }
}

impl FileBackend {
    /// `begin_write`'s view, unboxed (the tests look into it).
    fn lock_holder_view(&self, busy_timeout: Duration) -> Result<FileWriteView> {
        self.inner.check_writable()?;
        let writer = self.inner.acquire_held(busy_timeout)?;
        // Re-checked under the lock: the previous writer may have failed an fsync (D2).
        if let Err(e) = self.inner.check_writable() {
            writer.release(&self.inner);
            return Err(e);
        }
        let snap = self.inner.register_snapshot();
        let page_count = snap.page_count;
        Ok(FileWriteView {
            in_progress: InProgress::new(&self.inner),
            snap,
            writer: Some(writer),
            page_count,
            private: BTreeMap::new(),
            savepoints: Vec::new(),
            next_savepoint: 0,
            synchronous: None,
            prepared: None,
            footprint: None,
            base: memo::SnapshotMemo::default(),
            saved: saved::SavedMemo::default(),
            spill: spill::Spill::new(Some(self.inner.cache.pages_max())),
            direct_above: None,
        })
    }
}

impl Backend for FileBackend {
    fn history(&self) -> Arc<crate::concurrent::SharedHistory> {
        Arc::clone(&self.inner.history)
    }
    fn is_shared(&self) -> bool {
        Arc::strong_count(&self.handle) > 1
    }

    fn begin_read(&self) -> Result<Box<dyn ReadView>> {
        Ok(Box::new(FileReadView {
            memo: std::cell::RefCell::new(read_memo::ReadMemo::new()),
            snap: self.inner.register_snapshot(),
        }))
    }

    fn begin_write(&self, busy_timeout: Duration) -> Result<Box<dyn WriteView>> {
        Ok(Box::new(self.lock_holder_view(busy_timeout)?))
    }

    fn begin_detached(&self) -> Result<Box<dyn WriteView>> {
        self.inner.check_writable()?;
        let snap = self.inner.register_snapshot();
        let page_count = snap.page_count;
        Ok(Box::new(FileWriteView {
            in_progress: InProgress::new(&self.inner),
            snap,
            writer: None,
            page_count,
            private: BTreeMap::new(),
            savepoints: Vec::new(),
            next_savepoint: 0,
            synchronous: None,
            prepared: None,
            footprint: Some(std::cell::RefCell::new(Footprint::default())),
            base: memo::SnapshotMemo::default(),
            saved: saved::SavedMemo::default(),
            // Detached views stay in memory (spill.rs): a rebase carries their pages over.
            spill: spill::Spill::new(None),
            direct_above: None,
        }))
    }

    fn upgrade(
        &self,
        read: Box<dyn ReadView>,
        busy_timeout: Duration,
    ) -> Result<Box<dyn WriteView>> {
        let seq = read.snapshot_seq();
        self.inner.check_writable()?;
        let writer = self.inner.acquire_held(busy_timeout)?;
        if let Err(e) = self.inner.check_writable() {
            writer.release(&self.inner);
            return Err(e);
        }
        let snap = self.inner.register_snapshot();
        if snap.seq != seq {
            writer.release(&self.inner);
            return Err(StorageError::BusySnapshot {
                reason: format!(
                    "snapshot {seq} is older than the latest commit {}",
                    snap.seq
                ),
            });
        }
        drop(read);
        let page_count = snap.page_count;
        Ok(Box::new(FileWriteView {
            in_progress: InProgress::new(&self.inner),
            snap,
            writer: Some(writer),
            page_count,
            private: BTreeMap::new(),
            savepoints: Vec::new(),
            next_savepoint: 0,
            synchronous: None,
            prepared: None,
            footprint: None,
            base: memo::SnapshotMemo::default(),
            saved: saved::SavedMemo::default(),
            spill: spill::Spill::new(Some(self.inner.cache.pages_max())),
            direct_above: None,
        }))
    }

    fn checkpoint(&self) -> Result<()> {
        if self.inner.read_only {
            return Ok(());
        }
        self.inner.check_writable()?;
        let _writer = self.inner.acquire_writer(CHECKPOINT_WAIT)?;
        // Waits for a background round to end (K1: writer slot → checkpoint slot).
        let _slot = self.inner.checkpoint_slot(true);
        let mut guard = lock(&self.inner.log);
        match guard.as_mut() {
            Some(logs) => self.inner.checkpoint_full(logs),
            None => Ok(()),
        }
    }

    fn checkpoint_mode(
        &self,
        mode: CheckpointMode,
        busy_timeout: Duration,
    ) -> Result<CheckpointOutcome> {
        self.inner.checkpoint_mode(mode, busy_timeout)
    }

    fn set_synchronous(&self, mode: Synchronous) {
        FileBackend::set_synchronous(self, mode)
    }

    fn set_cache_pages_max(&self, pages: usize) {
        self.inner.cache.set_pages_max(pages)
    }

    fn stats(&self) -> PagerStats {
        FileBackend::stats(self)
    }
}

#[cfg(test)]
mod spill_tests;
#[cfg(test)]
mod tests;
