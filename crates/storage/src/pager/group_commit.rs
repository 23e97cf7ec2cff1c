//! Group commit (pager D1, step 7): `Full` committers share log fsyncs. Whoever finds no
//! fsync under way becomes the leader, syncs every frame written so far and wakes the
//! committers that fsync covered; the others sleep until then.
//!
//! Committers sleep in rounds: round `r` is the r-th leader's fsync, and every committer
//! sleeps on the futex word of the round that will cover its frame (`Rounds`, two words
//! used in turn), so a leader wakes exactly its round with one `FUTEX_WAKE`.
//! Why not a condition variable's `notify_all`: with 20 `BEGIN IMMEDIATE` writers under
//! `synchronous=FULL` (bdb_update, 2-core machine) every fsync woke all ~19 sleepers;
//! those whose frame came after the fsync's target went back to sleep, and all of them
//! fought for the state's mutex on the way. Measured: 3.4 voluntary context switches and
//! ~45 µs of CPU per commit. Why not a thread parked per waiter (the previous scheme): the
//! leader paid one `futex` call per covered committer (~14 at 20 writers, each an
//! inter-processor interrupt on a VM), 9.7% of a FULL commit's CPU (BENCHMARKS.md,
//! "durable"); one word per round needs one call per fsync. Measured against that scheme
//! (bdb_update, 20 writers, FULL, six interleaved pairs): 2.0 → 1.6 context switches and
//! 30.8 → 28.1 µs CPU per commit (medians; BENCHMARKS.md, "gcommit2").
//!
//! Invariants (`SyncState` is changed only under `Inner::sync`):
//! - G1. A committer sleeps only after registering under the mutex while `syncing` is set,
//!   so a leader exists that will see it: in round `round` if that round's target is not
//!   fixed yet or covers its frame, else in round `round + 1`.
//! - G2. `syncing` stays set from the moment a committer becomes leader until a round ends
//!   with nobody registered for the next one: the first committer registered for round
//!   `round + 1` is its leader (`next_leader`); it sleeps on round `round`'s word and leads
//!   once that round ends. So no registered committer is ever left without a leader (no
//!   lost wake-up), and a leader never stays one past its own fsync (no thread is kept
//!   from returning).
//! - G3. A round's word changes (and its sleepers are woken) only when the round ends —
//!   `synced_seq` then covers its frames, or the backend is poisoned (D2) — or when a
//!   checkpoint's fsync advances `synced_seq` (`mark_synced`). A woken committer decides
//!   on atomics alone: `synced_atomic` (which mirrors `synced_seq`, only growing) covers
//!   its frame, the backend is poisoned, or (next leader) `Rounds::ended` passed its round;
//!   else it sleeps again. At most two rounds have sleepers (round `round + 2` is entered
//!   only once round `round` has ended), so two words suffice.
//! - G4. The leader's target is read under the mutex together with the log files to sync
//!   (`active`, `prev`: B4), and `written_seq` is set under it after the frame's `write`,
//!   so every frame up to the target lies in a file the leader syncs.
//! - G5. Gathering only delays the fsync's start: it ends before the target is read (G4),
//!   so however it ends — on the count (`gather_until`, set and taken under the mutex, the
//!   committer that completes it bumping `Rounds::gather` there), on a gap without frames,
//!   or at its deadline — a committer still returns Ok only once `synced_atomic` covers its
//!   frame, set after an fsync whose target was read after its `written_seq` (D1).

use super::{lock, Inner};
use crate::error::{Result, StorageError};
use crate::log;
use crate::vfs::VfsFile;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, MutexGuard};
use std::time::{Duration, Instant};

/// The longest pause between two frames a gathering group-commit leader waits for
/// (`Inner::gather_frames`), µs: an eighth of the recent fsync time within these bounds.
/// A committer counted that writes no frame within it (an idle open transaction, a thread
/// that stopped committing) no longer delays the fsync.
const GATHER_GAP_MIN_US: u64 = 100;
pub(super) const GATHER_GAP_MAX_US: u64 = 1_000;

/// The gathering's cap, µs, whatever the recent fsync time.
const GATHER_MAX_US: u64 = 2_000;

/// Group-commit state (D1): which commits are written and which are synced, the round in
/// progress, and the log files a leader syncs (B4).
#[derive(Default)]
pub(super) struct SyncState {
    pub(super) written_seq: u64,
    pub(super) synced_seq: u64,
    /// A leader exists (G2): syncing, gathering, or chosen and about to.
    syncing: bool,
    /// The round in progress (or next, while nobody syncs): rounds ended so far.
    round: u64,
    /// The round's fsync target once its leader fixed it (after gathering); a committer
    /// whose frame lies past it registers for the next round (G1).
    target: Option<u64>,
    /// A committer registered for round `round + 1` and will lead it (G2).
    next_leader: bool,
    /// Someone registered on word `i` since its last round ended (else no `FUTEX_WAKE`).
    sleepers: [bool; 2],
    /// Commits the last leader's fsync covered (evidence of concurrent committers).
    last_group: u64,
    /// While the leader gathers: the commit whose frame completes the count it waits for
    /// (G5); its committer takes it and wakes the leader (`Inner::note_written`).
    gather_until: Option<u64>,
    /// The active log file (set at open and by a round's switch, under the log mutex).
    pub(super) active: Option<Arc<dyn VfsFile>>,
    /// During a round: the previous log file and its last commit; synced first (B4).
    pub(super) prev: Option<(u64, Arc<dyn VfsFile>)>,
}

/// What sleeping committers watch without the mutex (G3).
#[derive(Default)]
pub(super) struct Rounds {
    /// Round `r` sleeps on word `r % 2`; a leader ending round `r` bumps it.
    words: [AtomicU32; 2],
    /// `SyncState::round`: rounds ended so far.
    ended: AtomicU64,
    /// The gathering leader sleeps on this word; the committer that completes its count
    /// bumps it (G5).
    gather: AtomicU32,
    /// Where the futex system call is missing (not Linux): sleepers wait on this condition
    /// variable instead, checking their word under its mutex (`futex_wait`).
    #[cfg(not(target_os = "linux"))]
    park: (std::sync::Mutex<()>, std::sync::Condvar),
}

impl Rounds {
    /// Sleeps on round `round`'s word until `done()`. The word is read before `done()` and
    /// bumped after what `done()` reads changes (G3), so a bump in between makes the
    /// `FUTEX_WAIT` return at once: no wake-up is lost.
    fn sleep_until(&self, round: u64, done: impl Fn() -> bool) {
        let word = &self.words[(round % 2) as usize];
        loop {
            let seen = word.load(Ordering::Acquire);
            if done() {
                return;
            }
            self.futex_wait(word, seen, None);
        }
    }

    /// Sleeps while `word` holds `seen`, at most `timeout` (or until a spurious return:
    /// callers check again).
    #[cfg(target_os = "linux")]
    fn futex_wait(&self, word: &AtomicU32, seen: u32, timeout: Option<Duration>) {
        let timespec = timeout.map(|t| libc::timespec {
            tv_sec: libc::time_t::try_from(t.as_secs()).unwrap_or(libc::time_t::MAX),
            tv_nsec: libc::c_long::try_from(t.subsec_nanos()).unwrap_or(0),
        });
        let timespec_ptr = timespec
            .as_ref()
            .map_or(std::ptr::null(), |t| t as *const libc::timespec);
        // SAFETY: the word is an aligned u32 that lives as long as `self`; FUTEX_WAIT
        // only reads it, and returns at once if it no longer holds `seen`; the timeout,
        // relative, lives on this frame. Its result (woken, EAGAIN, EINTR, ETIMEDOUT) is
        // irrelevant: the caller looks at the state again.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                word.as_ptr(),
                libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
                seen,
                timespec_ptr,
            );
        }
    }

    /// `futex_wait` without the system call: the word is compared under `park`'s mutex,
    /// and `futex_wake` takes that mutex after the bump before it notifies, so a bump
    /// after the comparison finds the sleeper already waiting (no wake-up is lost).
    #[cfg(not(target_os = "linux"))]
    fn futex_wait(&self, word: &AtomicU32, seen: u32, timeout: Option<Duration>) {
        let (lock, cond) = &self.park;
        let guard = lock.lock().unwrap_or_else(|e| e.into_inner());
        if word.load(Ordering::Acquire) == seen {
            match timeout {
                Some(t) => drop(
                    cond.wait_timeout(guard, t)
                        .unwrap_or_else(|e| e.into_inner()),
                ),
                None => drop(cond.wait(guard).unwrap_or_else(|e| e.into_inner())),
            }
        }
    }

    /// Bumps word `i` (under the sync mutex, after the state its sleepers check changed).
    fn bump(&self, i: usize) {
        self.words[i].fetch_add(1, Ordering::Release);
    }

    /// Wakes every sleeper of word `i` with one call (after the sync mutex is released: a
    /// woken committer must not find it held).
    fn wake(&self, i: usize) {
        self.futex_wake(&self.words[i]);
    }

    /// Wakes the gathering leader, if it still sleeps (G5).
    pub(super) fn wake_gatherer(&self) {
        self.futex_wake(&self.gather);
    }

    fn futex_wake(&self, word: &AtomicU32) {
        #[cfg(target_os = "linux")]
        // SAFETY: as in `futex_wait`; FUTEX_WAKE does not touch the word.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                word.as_ptr(),
                libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
                i32::MAX,
            );
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = word; // one condition variable serves every word: sleepers check again
            let (lock, cond) = &self.park;
            drop(lock.lock().unwrap_or_else(|e| e.into_inner()));
            cond.notify_all();
        }
    }
}

/// Words whose sleepers are to be woken once the mutex is released.
type Wakes = [bool; 2];

impl SyncState {
    /// The state at open: every commit up to `committed_seq` is in the file or synced.
    pub(super) fn new(committed_seq: u64) -> SyncState {
        SyncState {
            written_seq: committed_seq,
            synced_seq: committed_seq,
            ..SyncState::default()
        }
    }

    /// Records `seq` as synced.
    fn advance(&mut self, seq: u64, synced_atomic: &AtomicU64) {
        if seq > self.synced_seq {
            self.synced_seq = seq;
            synced_atomic.fetch_max(seq, Ordering::Release);
        }
    }

    /// Bumps word `i` if anyone sleeps on it; says whether to wake it. The sleepers stay
    /// registered: those not done sleep again until their round ends (G3).
    fn poke_sleepers(&self, rounds: &Rounds, i: usize) -> bool {
        if self.sleepers[i] {
            rounds.bump(i);
        }
        self.sleepers[i]
    }

    /// `poke_sleepers` for the word of a round that ends: its sleepers are all done.
    fn take_sleepers(&mut self, rounds: &Rounds, i: usize) -> bool {
        let any = self.poke_sleepers(rounds, i);
        self.sleepers[i] = false;
        any
    }

    /// Ends round `round` (G2): the next round's leader, if one registered, keeps
    /// `syncing` set. Returns the words to wake: the ended round's (where the next leader
    /// sleeps too).
    fn end_round(&mut self, rounds: &Rounds) -> Wakes {
        let i = (self.round % 2) as usize;
        self.round += 1;
        rounds.ended.store(self.round, Ordering::Release);
        self.target = None;
        if !std::mem::take(&mut self.next_leader) {
            self.syncing = false;
        }
        let mut wakes = [false; 2];
        wakes[i] = self.take_sleepers(rounds, i);
        wakes
    }
}

fn wake(rounds: &Rounds, wakes: Wakes) {
    for (i, w) in wakes.into_iter().enumerate() {
        if w {
            rounds.wake(i);
        }
    }
}

impl Inner {
    /// Records that every commit up to `seq` is durable — after paying the database file's
    /// sync debt (B8): a commit's frames are durable only with their base images.
    pub(super) fn mark_synced(&self, seq: u64) -> Result<()> {
        self.pay_db_sync_owed()?;
        let mut s = lock(&self.sync);
        s.advance(seq, &self.synced_atomic);
        // G3: both rounds' sleepers look; those not covered sleep again.
        let wakes = [0, 1].map(|i| s.poke_sleepers(&self.rounds, i));
        drop(s);
        wake(&self.rounds, wakes);
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

    /// Step 3's end (G4): records commit `seq` as written. True if its frame completed a
    /// gathering leader's count (G5): the caller wakes it (`Rounds::wake_gatherer`) once it
    /// has let the writer lock go, so the system call does not lengthen the lock's hold.
    #[must_use = "a gathering leader whose count is complete must be woken"]
    pub(super) fn note_written(&self, seq: u64) -> bool {
        let mut s = lock(&self.sync);
        s.written_seq = seq;
        if !s.gather_until.is_some_and(|until| seq >= until) {
            return false;
        }
        s.gather_until = None;
        self.rounds.gather.fetch_add(1, Ordering::Release);
        true
    }

    /// Group commit's gathering (G5: it only delays the fsync's start). The leader waits for
    /// as many commits as the last fsync covered, or as are known to be on their way (write
    /// views in progress and writers waiting for the writer lock), whichever is more, so
    /// that one fsync covers them too; a lone writer (groups of one, nobody in flight) never
    /// waits. The committer whose frame completes the count wakes the leader. Fallback, for
    /// committers that never come (an idle open transaction, a thread that stopped): the
    /// gathering also ends once no frame came within a gap of an eighth of the recent fsync
    /// time (0.1–1 ms), and after half of it (≤ 2 ms).
    /// Why gather: with 8 autocommit threads the committers split into two cohorts that
    /// took turns in the fsync (each group = the frames written during the previous fsync,
    /// ~4): the cohort just acknowledged needs a few hundred µs of CPU to write its next
    /// frames. Measured (mt_insert, FULL, 8 threads × 1,000): 4.2 → 6.6 commits per fsync;
    /// bdb_update FULL 20 threads: 0.105 → 0.066 fsyncs per commit.
    /// Why a count rather than timed sleeps alone: the leader slept a gap at a time and
    /// looked whether frames came; on mt_insert its 1,050 sleeps for 1,007 fsyncs lasted
    /// 163 µs each (timer slack and wake-up latency against ~60 µs asked), 171 ms of a
    /// 388 ms run, although all 8 frames had usually come well before (BENCHMARKS.md,
    /// "gcommit2" and "gather"). One wake per round, from the committer completing the
    /// count, replaces them.
    fn gather_frames<'a>(&'a self, mut s: MutexGuard<'a, SyncState>) -> MutexGuard<'a, SyncState> {
        let in_flight = self.writers_in_progress.load(Ordering::Acquire) + self.writer.waiters();
        let until = (s.synced_seq + s.last_group).max(s.written_seq + in_flight);
        let avg_us = self.log_sync_us_avg.load(Ordering::Relaxed);
        let budget_us = (avg_us / 2).min(GATHER_MAX_US);
        if s.written_seq >= until || budget_us == 0 {
            return s;
        }
        let gap = Duration::from_micros((avg_us / 8).clamp(GATHER_GAP_MIN_US, GATHER_GAP_MAX_US));
        let started = Instant::now();
        let deadline = started + Duration::from_micros(budget_us);
        s.gather_until = Some(until);
        let mut before = s.written_seq;
        loop {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            // Read under the mutex: a bump after it makes the wait return at once.
            let seen = self.rounds.gather.load(Ordering::Acquire);
            drop(s);
            self.rounds
                .futex_wait(&self.rounds.gather, seen, Some(gap.min(deadline - now)));
            s = lock(&self.sync);
            // Count complete, or no frame within the gap. An early return (EINTR, a late
            // wake meant for an earlier round's leader) at worst ends the gathering early.
            if s.gather_until.is_none() || s.written_seq == before {
                break;
            }
            before = s.written_seq;
        }
        s.gather_until = None;
        let waited_us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        self.gathers.fetch_add(1, Ordering::Relaxed);
        self.gather_us.fetch_add(waited_us, Ordering::Relaxed);
        s
    }

    /// Group commit (D1): returns once an fsync that started after commit `seq` was
    /// written has succeeded (G1–G4).
    pub(super) fn wait_durable(&self, seq: u64) -> Result<()> {
        let mut s = lock(&self.sync);
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
        let round = s.round;
        if s.target.is_some_and(|t| seq > t) {
            if !s.next_leader {
                // G2: leads round + 1, woken with round `round`.
                s.next_leader = true;
                s.sleepers[(round % 2) as usize] = true;
                drop(s);
                self.rounds
                    .sleep_until(round, || self.rounds.ended.load(Ordering::Acquire) > round);
                return self.lead();
            }
            s.sleepers[((round + 1) % 2) as usize] = true;
            drop(s);
            self.sleep_until_synced(round + 1, seq)
        } else {
            s.sleepers[(round % 2) as usize] = true;
            drop(s);
            self.sleep_until_synced(round, seq)
        }
    }

    /// A registered committer's sleep (G3): until `synced_seq` covers `seq` or the backend
    /// is poisoned.
    fn sleep_until_synced(&self, round: u64, seq: u64) -> Result<()> {
        self.rounds.sleep_until(round, || {
            self.synced_atomic.load(Ordering::Acquire) >= seq
                || self.poisoned.load(Ordering::Acquire)
        });
        if self.synced_atomic.load(Ordering::Acquire) >= seq {
            return Ok(());
        }
        // Woken by the poison (D2); never Ok for a frame no fsync covered (D1).
        Err(self
            .poison_error()
            .unwrap_or_else(|| StorageError::misuse("group commit woke a waiter early")))
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

    /// The leader's part (G2): gathers, syncs every frame written so far and ends the
    /// round, waking its committers and the next round's leader, if one registered. The
    /// caller set `syncing` (or is that next leader) and holds no lock; its own frame is
    /// written, so the fsync covers it.
    fn lead(&self) -> Result<()> {
        let mut s = lock(&self.sync);
        if let Some(err) = self.poison_error() {
            return Err(self.end_lead_poisoned(s, err));
        }
        s = self.gather_frames(s);
        let target = s.written_seq;
        s.target = Some(target);
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
        s.advance(target, &self.synced_atomic);
        let wakes = s.end_round(&self.rounds);
        drop(s);
        wake(&self.rounds, wakes);
        Ok(())
    }

    /// Ends a lead on a poisoned backend: every waiter is woken to see the poison (G3, D2).
    fn end_lead_poisoned(
        &self,
        mut s: MutexGuard<'_, SyncState>,
        err: StorageError,
    ) -> StorageError {
        // G3: the round ends on the poison; the next round's leader, if any, finds it too.
        let mut wakes = s.end_round(&self.rounds);
        s.syncing = false;
        let next = (s.round % 2) as usize;
        wakes[next] = s.take_sleepers(&self.rounds, next);
        drop(s);
        wake(&self.rounds, wakes);
        err
    }
}
