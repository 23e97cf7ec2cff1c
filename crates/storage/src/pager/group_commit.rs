//! Group commit (pager D1, step 7): `Full` committers share log fsyncs. Whoever finds no
//! fsync under way becomes the leader, syncs every frame written so far and wakes exactly
//! the committers that fsync covered; the others sleep until then.
//!
//! Why waiters are woken one by one instead of by a condition variable's `notify_all`:
//! with 20 `BEGIN IMMEDIATE` writers under `synchronous=FULL` (bdb_update, 2-core machine)
//! every fsync woke all ~19 sleepers; those whose frame came after the fsync's target went
//! back to sleep, and all of them fought for the state's mutex on the way (the mutex also
//! blocked the writer-lock holder setting `written_seq`). Measured before this module:
//! 3.4 voluntary context switches and ~45 µs of CPU per commit, 58% of it in the kernel.
//!
//! Invariants (`SyncState` is changed only under `Inner::sync`):
//! - G1. A committer sleeps only as a registered waiter (`waiters`) while `syncing` is
//!   set, so a leader exists that will see it.
//! - G2. `syncing` stays set from the moment a committer becomes leader until a leader
//!   finds no waiter left after its fsync: a leader that leaves waiters whose frames it
//!   did not cover hands the lead to one of them (`Parker::lead`) instead of clearing it.
//!   So no registered waiter is ever left without a leader (no lost wake-up), and a leader
//!   never stays one past its own fsync (no thread is kept from returning).
//! - G3. A waiter is woken (its `woken` flag set, then unparked) only when `synced_seq`
//!   covers its frame, when it is handed the lead, or when the backend is poisoned
//!   (every waiter, D2). `synced_seq` only grows; `synced_atomic` mirrors it, so a woken
//!   waiter returns without taking the mutex again.
//! - G4. The leader's target is read under the mutex together with the log files to sync
//!   (`active`, `prev`: B4), and `written_seq` is set under it after the frame's `write`,
//!   so every frame up to the target lies in a file the leader syncs.

use super::{lock, Inner};
use crate::error::{Result, StorageError};
use crate::log;
use crate::vfs::VfsFile;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, MutexGuard};
use std::thread::Thread;
use std::time::{Duration, Instant};

/// The longest pause between two frames a gathering group-commit leader waits for
/// (`Inner::gather_frames`), µs: an eighth of the recent fsync time within these bounds.
/// A view in progress that writes no frame within it (an idle open transaction) no longer
/// delays the fsync.
const GATHER_GAP_MIN_US: u64 = 100;
const GATHER_GAP_MAX_US: u64 = 1_000;

/// The gathering's cap, µs, whatever the recent fsync time.
const GATHER_MAX_US: u64 = 2_000;

/// Group-commit state (D1): which commits are written and which are synced, and the log
/// files a leader syncs (B4).
#[derive(Default)]
pub(super) struct SyncState {
    pub(super) written_seq: u64,
    pub(super) synced_seq: u64,
    /// A leader exists (G2): syncing, gathering, or handed the lead and about to.
    syncing: bool,
    /// Committers asleep until their frame is synced (G1).
    waiters: Vec<Waiter>,
    /// Commits the last leader's fsync covered (evidence of concurrent committers).
    last_group: u64,
    /// The active log file (set at open and by a round's switch, under the log mutex).
    pub(super) active: Option<Arc<dyn VfsFile>>,
    /// During a round: the previous log file and its last commit; synced first (B4).
    pub(super) prev: Option<(u64, Arc<dyn VfsFile>)>,
}

/// A sleeping committer: the commit it waits for and how to wake it.
struct Waiter {
    seq: u64,
    parker: Arc<Parker>,
}

/// One per thread: the flags its waker sets before unparking it (G3).
struct Parker {
    woken: AtomicBool,
    /// Handed the lead (G2).
    lead: AtomicBool,
    thread: Thread,
}

impl Parker {
    fn current() -> Arc<Parker> {
        thread_local! {
            static PARKER: Arc<Parker> = Arc::new(Parker {
                woken: AtomicBool::new(false),
                lead: AtomicBool::new(false),
                thread: std::thread::current(),
            });
        }
        PARKER.with(Arc::clone)
    }

    /// Sets the flag, then unparks (the sleeper re-checks the flag after every return from
    /// `park`, so a spurious or stale unpark is harmless).
    fn wake(&self, lead: bool) {
        if lead {
            self.lead.store(true, Ordering::Release);
        }
        self.woken.store(true, Ordering::Release);
        self.thread.unpark();
    }
}

/// Waiters to wake once the mutex is released (a woken thread must not find it held).
type Wakes = Vec<(Arc<Parker>, bool)>;

fn wake_all(wakes: Wakes) {
    for (p, lead) in wakes {
        p.wake(lead);
    }
}

impl SyncState {
    /// The state at open: every commit up to `committed_seq` is in the file or synced.
    pub(super) fn new(committed_seq: u64) -> SyncState {
        SyncState {
            written_seq: committed_seq,
            synced_seq: committed_seq,
            ..SyncState::default()
        }
    }

    /// Records `seq` as synced and moves every waiter it covers to `wakes` (G3).
    fn advance(
        &mut self,
        seq: u64,
        synced_atomic: &std::sync::atomic::AtomicU64,
        wakes: &mut Wakes,
    ) {
        if seq > self.synced_seq {
            self.synced_seq = seq;
            synced_atomic.fetch_max(seq, Ordering::Release);
        }
        let synced = self.synced_seq;
        self.waiters.retain(|w| {
            if w.seq <= synced {
                wakes.push((Arc::clone(&w.parker), false));
                false
            } else {
                true
            }
        });
    }
}

impl Inner {
    /// Records that every commit up to `seq` is durable — after paying the database file's
    /// sync debt (B8): a commit's frames are durable only with their base images.
    pub(super) fn mark_synced(&self, seq: u64) -> Result<()> {
        self.pay_db_sync_owed()?;
        let mut wakes = Wakes::new();
        lock(&self.sync).advance(seq, &self.synced_atomic, &mut wakes);
        wake_all(wakes);
        Ok(())
    }

    /// B8: syncs the database file if a relaxed round left it unsynced behind an emptied
    /// log file. The mutex is held across the fsync, so a caller that finds nothing owed
    /// knows the last payment has completed.
    pub(super) fn pay_db_sync_owed(&self) -> Result<()> {
        let mut owed = lock(&self.db_sync_owed);
        if *owed {
            if let Err(e) = self.db.sync() {
                self.poison(format!("database fsync failed: {e}"));
                return Err(e);
            }
            *owed = false;
        }
        Ok(())
    }

    /// Group commit's gathering (D1 unaffected: it only delays the fsync's start). When other
    /// committers are about — the last fsync covered more than one commit, or write views
    /// are in progress — a leader waits while frames keep coming, each within a gap of an
    /// eighth of the recent fsync time (0.1–1 ms), for at most half of it (≤ 2 ms), so that
    /// one fsync covers them too. A single writer never waits (its groups are of one).
    /// Why: with 8 autocommit threads the committers split into two cohorts that took turns
    /// in the fsync (each group = the frames written during the previous fsync, ~4): the
    /// cohort just acknowledged needs a few hundred µs of CPU to write its next frames.
    /// Measured (mt_insert, FULL, 8 threads × 1,000): 4.2 → 6.6 commits per fsync;
    /// bdb_update FULL 20 threads: 0.105 → 0.066 fsyncs per commit.
    /// The leader sleeps a gap at a time and looks whether frames came, rather than being
    /// notified of each: a notification cost every committer a `futex` call and the
    /// leader a wake-up per frame.
    fn gather_frames<'a>(&'a self, s: MutexGuard<'a, SyncState>) -> MutexGuard<'a, SyncState> {
        let avg_us = self.log_sync_us_avg.load(Ordering::Relaxed);
        if s.last_group <= 1 && self.writers_in_progress.load(Ordering::Acquire) == 0 {
            return s;
        }
        let budget_us = (avg_us / 2).min(GATHER_MAX_US);
        let gap = Duration::from_micros((avg_us / 8).clamp(GATHER_GAP_MIN_US, GATHER_GAP_MAX_US));
        let deadline = Instant::now() + Duration::from_micros(budget_us);
        let mut before = s.written_seq;
        drop(s);
        loop {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            std::thread::sleep(gap.min(deadline - now));
            let s = lock(&self.sync);
            if s.written_seq == before {
                return s;
            }
            before = s.written_seq;
        }
        lock(&self.sync)
    }

    /// Group commit (D1): returns once an fsync that started after commit `seq` was
    /// written has succeeded (G1–G4).
    pub(super) fn wait_durable(&self, seq: u64) -> Result<()> {
        let mut s = lock(&self.sync);
        loop {
            if s.synced_seq >= seq {
                return Ok(());
            }
            if let Some(err) = self.poison_error() {
                return Err(err);
            }
            if !s.syncing {
                s.syncing = true;
                drop(s);
                return self.lead();
            }
            // G1: registered under the mutex while a leader exists.
            let parker = Parker::current();
            parker.woken.store(false, Ordering::Relaxed);
            parker.lead.store(false, Ordering::Relaxed);
            s.waiters.push(Waiter {
                seq,
                parker: Arc::clone(&parker),
            });
            drop(s);
            while !parker.woken.load(Ordering::Acquire) {
                std::thread::park();
            }
            if parker.lead.load(Ordering::Acquire) {
                return self.lead();
            }
            if self.synced_atomic.load(Ordering::Acquire) >= seq {
                return Ok(());
            }
            s = lock(&self.sync);
        }
    }

    /// The poisoned backend's error for a waiting committer (D2).
    fn poison_error(&self) -> Option<StorageError> {
        if !self.poisoned.load(Ordering::Acquire) {
            return None;
        }
        lock(&self.poison).clone().map(|reason| StorageError::Io {
            op: "fdatasync",
            path: log::log_path(&self.path),
            message: reason,
        })
    }

    /// The leader's part (G2): gathers, syncs every frame written so far, wakes the
    /// waiters it covered, and hands the lead to one of the rest if any are left. The
    /// caller set `syncing` (or was handed the lead) and holds no lock; its own frame is
    /// written, so the fsync covers it.
    fn lead(&self) -> Result<()> {
        let mut s = lock(&self.sync);
        if let Some(err) = self.poison_error() {
            return Err(self.end_lead_poisoned(s, err));
        }
        s = self.gather_frames(s);
        let target = s.written_seq;
        // B4: frames of the previous log file come first in the chain.
        let prev = s
            .prev
            .as_ref()
            .filter(|(last, _)| s.synced_seq < *last)
            .map(|(_, f)| Arc::clone(f));
        let active = s.active.clone();
        drop(s);
        let sync_started = Instant::now();
        let result = self
            .pay_db_sync_owed()
            .and_then(|()| {
                prev.map_or(Ok(()), |f| {
                    self.commit_syncs.fetch_add(1, Ordering::Relaxed);
                    f.sync()
                })
            })
            .and_then(|()| match active {
                Some(f) => f.sync(),
                None => Err(StorageError::misuse("commit on a database without a log")),
            });
        self.commit_syncs.fetch_add(1, Ordering::Relaxed);
        let took_us = u64::try_from(sync_started.elapsed().as_micros()).unwrap_or(u64::MAX);
        let avg = self.log_sync_us_avg.load(Ordering::Relaxed);
        self.log_sync_us_avg.store(
            avg.saturating_mul(7).saturating_add(took_us) / 8,
            Ordering::Relaxed,
        );
        let mut s = lock(&self.sync);
        if let Err(e) = result {
            self.poison(format!("log fsync failed: {e}"));
            return Err(self.end_lead_poisoned(s, e));
        }
        if target > s.synced_seq {
            s.last_group = target - s.synced_seq;
        }
        let mut wakes = Wakes::new();
        s.advance(target, &self.synced_atomic, &mut wakes);
        // G2: the earliest waiter left leads next; `syncing` stays set.
        let next = (0..s.waiters.len()).min_by_key(|&i| s.waiters[i].seq);
        match next {
            Some(i) => {
                let w = s.waiters.swap_remove(i);
                wakes.push((w.parker, true));
            }
            None => s.syncing = false,
        }
        drop(s);
        wake_all(wakes);
        Ok(())
    }

    /// Ends a lead on a poisoned backend: every waiter is woken to see the poison (G3, D2).
    fn end_lead_poisoned(
        &self,
        mut s: MutexGuard<'_, SyncState>,
        err: StorageError,
    ) -> StorageError {
        s.syncing = false;
        let wakes: Wakes = s.waiters.drain(..).map(|w| (w.parker, false)).collect();
        drop(s);
        wake_all(wakes);
        err
    }
}
