//! Checkpoints: folding committed pages from the log files into the database file
//! (docs/log-and-recovery.md sections 3 and 3b).
//!
//! Two kinds, one at a time (the checkpoint slot, `Inner::ckpt_busy`):
//! - the **full checkpoint** ([`Inner::checkpoint_full`]) runs under the writer lock: at open
//!   after recovery, at clean close and for `Backend::checkpoint`;
//! - the **background round** ([`CheckpointRound`]) runs without it, in the checkpointer
//!   thread (or inline after a commit when `PagerConfig::background_checkpoint` is off):
//!   R1a fsync the active log file, R1b switch commits to the other file, R2 fsync the
//!   previous one, R3 write the pages of state S, R4 fsync the database file, R5 empty the
//!   previous log file.
//!
//! Invariants (numbered in the doc, cited here):
//! - B2. The database file receives state-S images only after frames ≤ S are durable
//!   (R2 before R3); a log file is emptied or restarted only after the database file is
//!   durable at its last frame (R4 before R5; full checkpoint steps 4 → 5).
//! - B3. Outside a round the spare (inactive) file is durably empty, and a generation's
//!   header is written only after the previous generation's header is durable (R1a).
//! - B4. While a round's previous file is not yet synced, group-commit leaders sync it before
//!   the active file (`SyncState::prev`, pager `wait_durable`).
//! - B5. A round writes only pages that were dirty at S (cached and pinned, cache C3) and
//!   truncates the file no lower than any live snapshot's page count at R1.
//! - B6. Writers wait for a round only in R1 (the log mutex: one 32-byte header write and the
//!   capture of the dirty list, no fsync).
//! - B7. Any failure in a round poisons the backend (D2): a round is never retried half-way,
//!   so the spare file is never reused before R5 completed.
//! - B8. A *relaxed* round skips R1a, R2 and R4 (no fsync but R5's): it is chosen at R1,
//!   under the log mutex, only when every commit up to S was made under `Synchronous::Off`
//!   (`Inner::strict_commit_seq`, published under the log mutex before the commit). Like
//!   SQLite's checkpoints at `synchronous=OFF`, it leaves a power loss free to tear the
//!   database file — only a power loss: a process crash loses nothing, the OS has every
//!   write. `Normal`/`Full` commits keep their promises: (a) a round that holds one runs
//!   strictly; (b) before R5 a relaxed round records, in one critical section of
//!   `Inner::db_sync_owed`, that the database file owes a sync and whether a strict commit
//!   came after S — if one did, it runs R2 and R4 after all; (c) whoever marks a `Full`
//!   commit durable (group-commit leader, `mark_synced`) first pays that debt, so the base
//!   images of its frames are durable with them. Either (b) sees the commit or (c) sees the
//!   debt (the commit publishes before its leader looks). R5 still syncs the emptied file,
//!   so `SyncState::prev == None` keeps meaning "durably empty" for leaders (B4).
//! - B9. No checkpoint (full, or a round's switch) starts on a poisoned backend, and it
//!   looks under the log mutex. A commit is published before its frame is written (pager
//!   steps 3–5), both under that mutex, and a failed write poisons before the mutex goes:
//!   so a checkpoint that finds no poison there sees only commits whose frames are in the
//!   log, and the pages of a published commit whose frame is not never reach the database
//!   file.

use super::{lock, Inner};
use crate::error::{PageNo, Result, StorageError};
use crate::header::{self, HEADER_SIZE};
use crate::log::{self, LogFile};
use crate::pages::PageRef;
use crate::vfs::{read_zero_padded, VfsFile};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

/// `PRAGMA wal_checkpoint`'s modes, with SQLite's names. What each means for the two log
/// files is in docs/log-and-recovery.md, section 3c.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckpointMode {
    /// Fold what is committed now without waiting for writers: one background round.
    Passive,
    /// Take the writer lock (waiting up to the busy timeout) and fold everything: the full
    /// checkpoint, which also starts a fresh generation.
    Full,
    /// As `Full` (our full checkpoint always restarts the log).
    Restart,
    /// As `Full`, reporting the log as empty (it is truncated to its header).
    Truncate,
}

/// `PRAGMA wal_checkpoint`'s result row: `busy|log|checkpointed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckpointOutcome {
    /// A `Full`/`Restart`/`Truncate` checkpoint could not get the writer lock in time (a
    /// passive round was run instead).
    pub busy: bool,
    /// Frames in the log that were not yet in the database file when the checkpoint
    /// began, plus those committed while it ran; -1 for a database without a log.
    pub log_frames: i64,
    /// How many of those are now in the database file; -1 without a log.
    pub checkpointed_frames: i64,
}

impl CheckpointOutcome {
    /// A database without a log (memory, read-only): SQLite's answer outside WAL mode.
    pub const NO_LOG: CheckpointOutcome = CheckpointOutcome {
        busy: false,
        log_frames: -1,
        checkpointed_frames: -1,
    };
}

/// The log files of a writable database (B1–B4). Guarded by `Inner::log`.
pub(super) struct Logs {
    /// The generation commits append to.
    pub active: LogFile,
    /// The other file: durably empty (B3), or during a round the previous generation.
    pub spare: Arc<dyn VfsFile>,
    /// During a round: the previous generation's last sequence number and frame bytes.
    pub prev: Option<(u64, u64)>,
    /// The last commit the database file holds durably (D3): the end of the last completed
    /// checkpoint. The frames after it are the log's, for `PRAGMA wal_checkpoint`.
    pub folded_seq: u64,
}

impl Logs {
    /// Bytes of frames not yet folded into the database file (both files).
    pub fn frames_bytes(&self) -> u64 {
        self.active.frames_bytes() + self.prev.map_or(0, |p| p.1)
    }
}

/// The checkpoint slot, released on drop (`None`: already released).
pub(super) struct CheckpointSlot {
    inner: Option<Arc<Inner>>,
}

impl CheckpointSlot {
    fn vacant() -> CheckpointSlot {
        CheckpointSlot { inner: None }
    }
}

impl Drop for CheckpointSlot {
    fn drop(&mut self) {
        if let Some(inner) = self.inner.take() {
            *lock(&inner.ckpt_busy) = false;
            inner.ckpt_cv.notify_all();
        }
    }
}

impl Inner {
    /// Takes the checkpoint slot; `wait`: block until it is free, else `None` if taken.
    pub(super) fn checkpoint_slot(self: &Arc<Self>, wait: bool) -> Option<CheckpointSlot> {
        let mut busy = lock(&self.ckpt_busy);
        while *busy {
            if !wait {
                return None;
            }
            busy = self.ckpt_cv.wait(busy).unwrap_or_else(|p| p.into_inner());
        }
        *busy = true;
        Some(CheckpointSlot {
            inner: Some(Arc::clone(self)),
        })
    }

    /// Writes the newest image of every dirty page, trims the file and fsyncs it (full
    /// checkpoint steps 2–4). The caller holds the writer lock and the log mutex (or is
    /// `open`), so nothing is committed meanwhile. Returns the pages written.
    fn write_all_dirty(&self) -> Result<usize> {
        let (dirty, page_count, keep_pages) = {
            let c = &self.cache;
            let keep_pages = c.max_snapshot_page_count();
            (
                c.dirty_pages(c.page_count().max(keep_pages)),
                c.page_count(),
                keep_pages,
            )
        };
        self.write_pages_and_trim(&dirty, page_count, page_count.max(keep_pages))?;
        self.sync_db()?;
        Ok(dirty.len())
    }

    /// Writes `pages` (state S's images, S having `page_count` pages) into the database
    /// file and trims it. P3: if any page is written, page 1 is written too, stamped with
    /// the next change counter (`header::stamp_file_state`) — from its image when it is among
    /// `pages`, else its first 100 bytes from the file, which holds page 1's image at S
    /// since the page is clean. Committed images keep their own counter: the two differ
    /// only in the fields `stamp_file_state` writes, which no commit changes (commits set
    /// the page count only when it changes, to the count S then has) and which parlite
    /// reads only at open, from the file.
    fn write_pages_and_trim(
        &self,
        pages: &[(PageNo, PageRef)],
        page_count: u32,
        keep_pages: u32,
    ) -> Result<()> {
        let counter = self
            .file_change_counter
            .load(Ordering::Relaxed)
            .wrapping_add(1);
        let mut page1_written = false;
        for (pgno, img) in pages {
            if img.len() != self.page_size {
                return Err(StorageError::corrupt(
                    *pgno,
                    format!("cached image of {} bytes", img.len()),
                ));
            }
            let offset = (pgno.0 as u64 - 1) * self.page_size as u64;
            if pgno.0 == 1 {
                let mut p1 = img.to_vec();
                header::stamp_file_state(&mut p1, counter, page_count);
                self.db.write_at(offset, &p1)?;
                page1_written = true;
            } else {
                self.db.write_at(offset, img)?;
            }
        }
        if !pages.is_empty() {
            if !page1_written {
                let mut h = [0u8; HEADER_SIZE];
                if read_zero_padded(&*self.db, 0, &mut h)? != HEADER_SIZE {
                    return Err(StorageError::corrupt(
                        PageNo(1),
                        "database file shorter than its header at checkpoint",
                    ));
                }
                header::stamp_file_state(&mut h, counter, page_count);
                self.db.write_at(0, &h)?;
            }
            self.file_change_counter.store(counter, Ordering::Relaxed);
        }
        // Pages past the count are cut off, unless a live snapshot may still read them from
        // the file (cache C4); a later checkpoint trims them.
        let want_len = keep_pages as u64 * self.page_size as u64;
        if self.db.size()? > want_len {
            self.db.truncate(want_len)?;
        }
        Ok(())
    }

    fn sync_db(&self) -> Result<()> {
        if let Err(e) = self.db.sync() {
            self.poison(format!("database fsync failed during checkpoint: {e}"));
            return Err(e);
        }
        Ok(())
    }

    /// The full checkpoint (section 3): log sync → pages → db sync → new generation (D3,
    /// B2). Caller holds the writer lock, the checkpoint slot and the log mutex.
    pub(super) fn checkpoint_full(&self, logs: &mut Logs) -> Result<()> {
        // B9: the frame write of the last commit published has ended, and succeeded.
        self.check_writable()?;
        if logs.prev.is_some() {
            // B7: only an abandoned or failed round leaves a previous file, and it poisoned.
            return Err(StorageError::misuse(
                "a background checkpoint round did not finish",
            ));
        }
        let log = &mut logs.active;
        let dirty = self.cache.dirty_count();
        if dirty == 0 && log.last_seq() == log.base_seq() {
            return Ok(());
        }
        let started = Instant::now();
        // Under `Full` a group-commit fsync has usually covered every frame already.
        if lock(&self.sync).synced_seq < log.last_seq() {
            if let Err(e) = log.file().sync() {
                self.poison(format!("log fsync failed during checkpoint: {e}"));
                return Err(e);
            }
            self.mark_synced(log.last_seq())?;
        }
        let written = self.write_all_dirty()?;
        // The database file is synced at the newest state: no relaxed round's debt is left.
        *lock(&self.db_sync_owed) = false;
        // B3: the spare file is already durably empty, so restarting the active file is
        // step 5 entire.
        let seq = self.cache.committed_seq();
        if let Err(e) = log.restart(seq) {
            self.poison(format!("log restart failed during checkpoint: {e}"));
            return Err(e);
        }
        logs.folded_seq = seq;
        self.cache.mark_clean();
        self.count_checkpoint(written, started);
        Ok(())
    }

    /// Recovery's checkpoint (section 4 step 7, D4): syncs both log files as found, writes
    /// every redone page, syncs the database file, empties both log files (B2: only now),
    /// and starts a fresh generation in `files[0]`. `positions`: each file's place in the
    /// chain (`log::Chain`). The emptying order keeps B2 at every instant: a file outside
    /// the chain first (left alone, it would become a chain of its own with a base past the
    /// database file's state), then the chain's first generation, then its second (left
    /// alone, the first would end before the file's state).
    pub(super) fn checkpoint_at_open(
        &self,
        files: [Arc<dyn VfsFile>; 2],
        positions: &[Option<usize>],
        salt_max: Option<u32>,
    ) -> Result<Logs> {
        let started = Instant::now();
        for f in &files {
            f.sync()?;
        }
        let written = self.write_all_dirty()?;
        let mut order = [0usize, 1];
        order.sort_by_key(|&i| positions.get(i).copied().flatten().map_or(0, |p| p + 1));
        for i in order {
            log::empty_file(&*files[i])?;
        }
        let [first, second] = files;
        let seq = self.cache.committed_seq();
        let active = LogFile::start(first, self.page_size as u32, salt_max, seq)?;
        self.cache.mark_clean();
        if written > 0 {
            self.count_checkpoint(written, started);
        }
        Ok(Logs {
            active,
            spare: second,
            prev: None,
            folded_seq: seq,
        })
    }

    fn count_checkpoint(&self, pages: usize, started: Instant) {
        self.checkpoints.fetch_add(1, Ordering::Relaxed);
        self.checkpoint_pages
            .fetch_add(pages as u64, Ordering::Relaxed);
        let us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        self.checkpoint_us.fetch_add(us, Ordering::Relaxed);
        self.checkpoint_max_us.fetch_max(us, Ordering::Relaxed);
    }

    /// `PRAGMA wal_checkpoint(mode)`. A passive checkpoint waits only for a running round
    /// (the checkpoint slot), never for writers; the others take the writer lock within
    /// `busy_timeout` and run the full checkpoint, or report `busy` after a passive round.
    pub(super) fn checkpoint_mode(
        self: &Arc<Self>,
        mode: CheckpointMode,
        busy_timeout: std::time::Duration,
    ) -> Result<CheckpointOutcome> {
        if self.read_only {
            return Ok(CheckpointOutcome::NO_LOG);
        }
        self.check_writable()?;
        let Some(folded_before) = lock(&self.log).as_ref().map(|l| l.folded_seq) else {
            return Ok(CheckpointOutcome::NO_LOG);
        };
        let counts = |inner: &Inner| {
            let g = lock(&inner.log);
            let (last, folded) = g.as_ref().map_or((folded_before, folded_before), |l| {
                (l.active.last_seq(), l.folded_seq)
            });
            let n = |v: u64| i64::try_from(v.saturating_sub(folded_before)).unwrap_or(i64::MAX);
            (n(last), n(folded))
        };
        let passive = |inner: &Arc<Inner>| -> Result<()> {
            // Waits for a running round: its frames are folded when it ends, and one more
            // round folds what was committed since.
            if let Some(slot) = inner.checkpoint_slot(true) {
                if let Some(mut round) = inner.begin_round_in(slot)? {
                    while round.step()? {}
                }
            }
            Ok(())
        };
        if mode == CheckpointMode::Passive {
            passive(self)?;
            let (log_frames, checkpointed_frames) = counts(self);
            return Ok(CheckpointOutcome {
                busy: false,
                log_frames,
                checkpointed_frames,
            });
        }
        let writer = match self.acquire_writer(busy_timeout) {
            Ok(w) => w,
            Err(StorageError::Busy { .. }) => {
                passive(self)?;
                let (log_frames, checkpointed_frames) = counts(self);
                return Ok(CheckpointOutcome {
                    busy: true,
                    log_frames,
                    checkpointed_frames,
                });
            }
            Err(e) => return Err(e),
        };
        // K1: writer slot → checkpoint slot → log mutex.
        let slot = self.checkpoint_slot(true);
        if let Some(logs) = lock(&self.log).as_mut() {
            self.checkpoint_full(logs)?;
        }
        // Counted under the writer lock: nothing was committed since the checkpoint.
        let (log_frames, checkpointed_frames) = counts(self);
        drop(slot);
        drop(writer);
        Ok(match mode {
            CheckpointMode::Truncate => CheckpointOutcome {
                busy: false,
                log_frames: 0,
                checkpointed_frames: 0,
            },
            _ => CheckpointOutcome {
                busy: false,
                log_frames,
                checkpointed_frames,
            },
        })
    }

    /// R1: starts a background round, or `None` when there is nothing to fold, another
    /// checkpoint is running, or the database is read-only.
    pub(super) fn begin_round(self: &Arc<Self>) -> Result<Option<CheckpointRound>> {
        if self.read_only {
            return Ok(None);
        }
        match self.checkpoint_slot(false) {
            Some(slot) => self.begin_round_in(slot),
            None => Ok(None),
        }
    }

    /// R1 with the checkpoint slot already taken.
    fn begin_round_in(self: &Arc<Self>, slot: CheckpointSlot) -> Result<Option<CheckpointRound>> {
        self.check_writable()?;
        let started = Instant::now();
        let base = match lock(&self.log).as_ref() {
            Some(l) if l.active.last_seq() != l.active.base_seq() => l.active.base_seq(),
            _ => return Ok(None),
        };
        // B8: a round whose commits were all `Off` skips its fsyncs. Decided for good
        // below, under the log mutex; this early look only spares R1a.
        let relaxed_hint = self.strict_commit_seq.load(Ordering::SeqCst) <= base;
        // R1a (B3): the active file's header must be durable before a later generation's
        // header can be: else a power loss could keep the later one alone, and recovery
        // would start its chain past the database file's state. No lock held: the slot
        // keeps the active file from changing, commits go on appending.
        let (active, written) = {
            let s = lock(&self.sync);
            (s.active.clone(), s.written_seq)
        };
        if let (false, Some(f)) = (relaxed_hint, active) {
            if let Err(e) = f.sync() {
                self.poison(format!("log fsync failed during checkpoint: {e}"));
                return Err(e);
            }
            self.mark_synced(written)?;
        }
        let mut guard = lock(&self.log);
        let Some(logs) = guard.as_mut() else {
            return Ok(None);
        };
        // B9: every commit published up to here has its frame in the log.
        self.check_writable()?;
        if logs.active.last_seq() == logs.active.base_seq() {
            return Ok(None);
        }
        // B8: commits publish their strictness under this mutex, so this is exact for
        // every commit up to S.
        let relaxed = self.strict_commit_seq.load(Ordering::SeqCst) <= logs.active.base_seq();
        if relaxed_hint && !relaxed {
            // A `Normal`/`Full` commit came after the early look: R1a after all, here
            // (rare; writers wait for one fsync).
            if let Err(e) = logs.active.file().sync() {
                self.poison(format!("log fsync failed during checkpoint: {e}"));
                return Err(e);
            }
            self.mark_synced(logs.active.last_seq())?;
        }
        if logs.prev.is_some() {
            return Err(StorageError::misuse(
                "a background checkpoint round did not finish",
            ));
        }
        // B3: the spare file is durably empty; the new generation's header goes there.
        let next = match logs.active.next_generation(Arc::clone(&logs.spare)) {
            Ok(n) => n,
            Err(e) => {
                self.poison(format!("log switch failed during checkpoint: {e}"));
                return Err(e);
            }
        };
        let old = std::mem::replace(&mut logs.active, next);
        let seq = old.last_seq();
        let prev_file = Arc::clone(old.file());
        logs.spare = Arc::clone(&prev_file);
        logs.prev = Some((seq, old.frames_bytes()));
        {
            // B4: leaders sync the previous file first until it is synced to `seq`.
            let mut s = lock(&self.sync);
            s.active = Some(Arc::clone(logs.active.file()));
            s.prev = Some((seq, Arc::clone(&prev_file)));
        }
        // State S: commits publish under the log mutex, which this thread holds.
        let (pages, page_count, keep_pages) = {
            let c = &self.cache;
            debug_assert_eq!(c.committed_seq(), seq);
            let keep = c.page_count().max(c.max_snapshot_page_count());
            (c.dirty_pages(keep), c.page_count(), keep)
        };
        drop(guard);
        Ok(Some(CheckpointRound {
            inner: Arc::clone(self),
            handle: None,
            _slot: slot,
            step: Step::SyncPrev,
            seq,
            pages,
            page_count,
            keep_pages,
            prev_file,
            relaxed,
            started,
        }))
    }

    /// Runs one whole background round (R1–R5), if there is anything to fold.
    pub(super) fn run_round(self: &Arc<Self>) -> Result<()> {
        if let Some(mut round) = self.begin_round()? {
            while round.step()? {}
        }
        Ok(())
    }

    /// Backpressure (B6's one exception, C6): the log or the dirty pages passed their
    /// backpressure bound (`over_hard_bound`) because commits outran the checkpointer. The
    /// committer (which holds no lock) waits for the running round to end; if the bound is
    /// still passed then (the round had captured the state before this commit, e.g. a
    /// commit of hundreds of pages), or none was running, it runs one itself. Commits are so
    /// slowed to the checkpointer's pace, and memory and the log stay bounded whatever the
    /// commit rate.
    /// (A second round only when the first did not bring the bound back: on bdb_update,
    /// 20 threads, always running one doubled the stalled commit's latency.)
    pub(super) fn checkpoint_backpressure(self: &Arc<Self>) -> Result<()> {
        self.checkpoint_stalls.fetch_add(1, Ordering::Relaxed);
        {
            let mut busy = lock(&self.ckpt_busy);
            while *busy {
                busy = self.ckpt_cv.wait(busy).unwrap_or_else(|p| p.into_inner());
            }
        }
        let Some(slot) = self.checkpoint_slot(false) else {
            return Ok(());
        };
        if !self.over_hard_bound() {
            return Ok(());
        }
        if let Some(mut round) = self.begin_round_in(slot)? {
            while round.step()? {}
        }
        Ok(())
    }

    /// Whether the log's frames or the dirty pages are past their backpressure bounds:
    /// twice `checkpoint_log_bytes`, `backpressure_dirty_percent` of the cache.
    pub(super) fn over_hard_bound(&self) -> bool {
        let log_bytes = lock(&self.log).as_ref().map_or(0, |l| l.frames_bytes());
        self.past(log_bytes, 2, self.config.backpressure_dirty_percent)
    }

    /// Whether the frames of both log files or the dirty pages are past their checkpoint
    /// thresholds.
    pub(super) fn past_checkpoint_threshold(&self) -> bool {
        let log_bytes = lock(&self.log).as_ref().map_or(0, |l| l.frames_bytes());
        self.past_threshold(log_bytes)
    }

    /// Whether `log_bytes` of frames or the dirty pages are past their checkpoint
    /// thresholds (`PagerConfig`).
    pub(super) fn past_threshold(&self, log_bytes: u64) -> bool {
        self.past(log_bytes, 1, self.config.checkpoint_dirty_percent)
    }

    /// Whether `log_bytes` passed `log_times` `checkpoint_log_bytes`, or the dirty pages
    /// `dirty_percent` of the cache.
    fn past(&self, log_bytes: u64, log_times: u64, dirty_percent: usize) -> bool {
        let (dirty, cache_max) = {
            let c = &self.cache;
            (c.dirty_count(), c.pages_max())
        };
        log_bytes > self.config.checkpoint_log_bytes.saturating_mul(log_times)
            || dirty.saturating_mul(100) > cache_max.saturating_mul(dirty_percent)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    SyncPrev,
    WritePages,
    SyncDb,
    EmptyPrev,
    Done,
}

/// A background checkpoint round after its switch (R1), advanced one step (R2–R5) at a
/// time by [`CheckpointRound::step`], so tests can commit between the steps and crash at
/// any of them. Dropping an unfinished round poisons the backend (B7).
pub struct CheckpointRound {
    inner: Arc<Inner>,
    /// A round begun through the API keeps the backend open (pager `Handle`).
    handle: Option<Arc<super::Handle>>,
    _slot: CheckpointSlot,
    step: Step,
    /// S: the last commit in the previous log file.
    seq: u64,
    /// The newest image of every page dirty at S (with page number ≤ `keep_pages`).
    pages: Vec<(PageNo, PageRef)>,
    /// S's page count (pages P3: stamped into the file's page 1).
    page_count: u32,
    keep_pages: u32,
    prev_file: Arc<dyn VfsFile>,
    /// Every commit up to `seq` was `Off` at R1 (B8): no fsync unless a `Normal`/`Full`
    /// commit is found before R5.
    relaxed: bool,
    started: Instant,
}

impl CheckpointRound {
    pub(super) fn held_by(mut self, handle: Arc<super::Handle>) -> CheckpointRound {
        self.handle = Some(handle);
        self
    }

    /// The commit sequence number this round folds into the database file.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// Runs the next step; `Ok(false)` once the round is complete. Any error poisons (B7).
    pub fn step(&mut self) -> Result<bool> {
        let r = self.step_inner();
        if let Err(e) = &r {
            self.inner
                .poison(format!("background checkpoint failed: {e}"));
            self.step = Step::Done;
        }
        r
    }

    fn step_inner(&mut self) -> Result<bool> {
        let inner = Arc::clone(&self.inner);
        match self.step {
            Step::SyncPrev => {
                // R2 (B2: before any page of state S reaches the database file).
                if !self.relaxed {
                    self.prev_file.sync()?;
                    inner.mark_synced(self.seq)?;
                }
                self.step = Step::WritePages;
            }
            Step::WritePages => {
                // R3 (B5).
                inner.write_pages_and_trim(&self.pages, self.page_count, self.keep_pages)?;
                self.step = Step::SyncDb;
            }
            Step::SyncDb => {
                // R4.
                if !self.relaxed {
                    inner.sync_db()?;
                    // Durable at S: any earlier relaxed round's debt is paid too.
                    *lock(&inner.db_sync_owed) = false;
                }
                self.step = Step::EmptyPrev;
            }
            Step::EmptyPrev => {
                if self.relaxed {
                    // B8: owe the database file's sync before looking for a strict commit
                    // (in the same critical section), so a `Full` commit after S is either
                    // seen here or finds the debt when its fsync is led.
                    let strict_since = {
                        let mut owed = lock(&inner.db_sync_owed);
                        *owed = true;
                        inner.strict_commit_seq.load(Ordering::SeqCst) > self.seq
                    };
                    if strict_since {
                        // Its frames' base images are in this round: R2 and R4 after all.
                        self.prev_file.sync()?;
                        inner.sync_db()?;
                        *lock(&inner.db_sync_owed) = false;
                        inner.mark_synced(self.seq)?;
                    }
                }
                // R5 (B2: the database file is durable at S, or owed (B8); B3 again
                // afterwards: the emptying is synced even when relaxed).
                log::empty_file(&*self.prev_file)?;
                if let Some(logs) = lock(&inner.log).as_mut() {
                    logs.prev = None;
                    logs.folded_seq = self.seq;
                }
                lock(&inner.sync).prev = None;
                inner.cache.mark_clean_upto(self.seq);
                inner.count_checkpoint(self.pages.len(), self.started);
                if self.relaxed {
                    inner.relaxed_checkpoints.fetch_add(1, Ordering::Relaxed);
                }
                self.step = Step::Done;
                return Ok(false);
            }
            Step::Done => return Ok(false),
        }
        Ok(true)
    }
}

impl Drop for CheckpointRound {
    fn drop(&mut self) {
        if self.step != Step::Done {
            self.inner
                .poison("a background checkpoint round was abandoned".into());
        }
        // The slot goes before the handle: the handle's drop may close, which takes it.
        let slot = std::mem::replace(&mut self._slot, CheckpointSlot::vacant());
        drop(slot);
        drop(self.handle.take());
    }
}
