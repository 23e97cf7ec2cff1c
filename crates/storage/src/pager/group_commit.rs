//! Group commit (pager D1, step 7): `Full` committers share log fsyncs. Whoever finds no
//! fsync under way becomes the leader, gathers the frames of commits on their way, syncs
//! every frame written so far and wakes the committers that fsync covered; the others
//! sleep until then. The committer whose frame ends the gathering syncs in its place (G6).
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
//! Why not overlap a round's fsync with the next round's commits: rounds run nearly in
//! lockstep (the covered committers wake, write the next round's frames while the disk is
//! idle, and sleep through its fsync while the writer lock is mostly idle), but with one
//! commit in flight per thread a frame written during an fsync waits for the rest of it
//! and a whole next one, so overlapping halves the rounds instead of shortening them.
//! Measured (bdb_update, `BEGIN IMMEDIATE`, FULL, 20 writers, `chrt -f 1`, 2-core VM,
//! timestamps of the lock's holds and the fsyncs; BENCHMARKS.md, "pipeline"): a round of
//! 368 µs and 15.3 commits = a 184 µs fsync (the lock busy 41 µs of it), 132 µs of lock
//! work alone, 52 µs of neither; a next-round leader that syncs at once whatever is
//! written: rounds of 225 µs but 7.7 commits, 41.6k → 34.1k commits/s, 31.5 → 37.9 µs CPU
//! per commit. Waking that leader before the round's committers, or skipping the
//! gathering only when the commits on their way would hold the lock longer than an
//! fsync lasts, did no better. `PagerStats::log_sync_us` beside `writer_lock_held_ns`
//! shows the two shares of a run.
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
//!   `synced_seq` then covers its frames, or the backend is poisoned (D2) — when a
//!   checkpoint's fsync advances `synced_seq` (`mark_synced`), or when a non-`Full` frame
//!   ends the gathering of its leader, which sleeps on it (G6). A woken committer decides
//!   on atomics alone: `synced_atomic` (which mirrors `synced_seq`, only growing) covers
//!   its frame, the backend is poisoned, or (next leader) `Rounds::ended` passed its round;
//!   else it sleeps again. At most two rounds have sleepers (round `round + 2` is entered
//!   only once round `round` has ended), so two words suffice.
//! - G4. The leader's target is read under the mutex together with the log files to sync
//!   (`active`, `prev`: B4), and `written_seq` is set under it after the frame's `write`,
//!   by commits in sequence order (pager L1: still under the log mutex), so every frame up
//!   to the target lies in a file the leader syncs.
//! - G5. Gathering only delays the fsync's start: it ends before the target is read (G4),
//!   so however it ends — on the count (`SyncState::gather`, set and ended under the
//!   mutex by the committer whose frame completes it), on a gap without frames, or at its
//!   deadline — a committer still returns Ok only once `synced_atomic` covers its frame,
//!   set after an fsync whose target was read after its `written_seq` (D1).
//! - G6. The round's leader role may pass once, from the gathering leader to the `Full`
//!   committer whose frame completes the count (`Gather::Handed`, set under the mutex in
//!   `note_written`); that committer leads the round (`lead_handed`) as soon as it has let
//!   the writer lock go, so it reads the target after its own `written_seq` (G4) and ends
//!   the round, and `syncing` stays set throughout (G2). The gathering leader sleeps on its
//!   round's word registered as one of its committers (G1), so the round's end wakes it
//!   with them; once it sees the hand-off (or the round ended) it waits like them, for
//!   `synced_atomic` to cover its own frame (G3). A non-`Full` committer completing the
//!   count does not lead: it ends the gathering and wakes the leader's word (the round's
//!   other sleepers find their frames not yet covered and sleep again).
//!   Why: the gathering leader's wake-up (a `futex` call by the committer, a context
//!   switch and its scheduling latency before the fsync starts) was paid once per gathered
//!   round, and the committer that completed the count slept for the round anyway.
//!   Measured (bdb_update, 20 writers, FULL, `chrt -f 1`, eight interleaved pairs on the
//!   loaded 2-core machine): lower in 7 of 8 pairs; in the four quieter ones, medians
//!   34.0 → 30.2 µs CPU and 1.65 → 1.42 context switches per commit, gathering 110 → ~55
//!   µs (BENCHMARKS.md, "combine").

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
    /// The gathering of the round in progress (G5, G6).
    gather: Gather,
    /// The active log file (set at open and by a round's switch, under the log mutex).
    pub(super) active: Option<Arc<dyn VfsFile>>,
    /// During a round: the previous log file and its last commit; synced first (B4).
    pub(super) prev: Option<(u64, Arc<dyn VfsFile>)>,
}

/// Where the round in progress stands in its gathering (G5, G6).
#[derive(Clone, Copy, Default)]
enum Gather {
    /// Not gathering: the leader has not started, or has fixed its target.
    #[default]
    Idle,
    /// The leader, asleep on its round's word, waits for commit `until`'s frame.
    Waiting { until: u64, since: Instant },
    /// The `Full` committer whose frame completed the count leads the round instead (G6).
    Handed,
}

/// What `Inner::note_written` leaves its committer to do once the writer lock is released.
#[must_use = "a round handed over must be led, a woken leader's word woken"]
pub(super) enum Written {
    Nothing,
    /// The frame completed the gathering of a `Full` committer's own round: it leads it
    /// (`Inner::lead_handed`, G6).
    Lead,
    /// A non-`Full` frame completed the count: wake the gathering leader's word.
    WakeLeader(usize),
}

/// What sleeping committers watch without the mutex (G3).
#[derive(Default)]
pub(super) struct Rounds {
    /// Round `r` sleeps on word `r % 2`; a leader ending round `r` bumps it.
    words: [AtomicU32; 2],
    /// `SyncState::round`: rounds ended so far.
    ended: AtomicU64,
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
    pub(super) fn wake(&self, i: usize) {
        self.futex_wake(&self.words[i]);
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
        self.gather = Gather::Idle;
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

    /// Step 5's end (G4): records commit `seq` as written (`full`: its committer waits for
    /// the fsync). If its frame completed a gathering leader's count (G5), a `Full`
    /// committer takes the round over (G6): the caller leads it once it has let the writer
    /// lock go (`lead_handed`), so the fsync starts without the gathering leader's wake-up;
    /// any other committer has the caller wake the leader.
    pub(super) fn note_written(&self, seq: u64, full: bool) -> Written {
        let mut s = lock(&self.sync);
        s.written_seq = seq;
        let Gather::Waiting { until, since } = s.gather else {
            return Written::Nothing;
        };
        if seq < until {
            return Written::Nothing;
        }
        self.count_gathering(since);
        if full {
            s.gather = Gather::Handed;
            self.gather_handoffs.fetch_add(1, Ordering::Relaxed);
            return Written::Lead;
        }
        s.gather = Gather::Idle;
        let i = (s.round % 2) as usize;
        if s.poke_sleepers(&self.rounds, i) {
            Written::WakeLeader(i)
        } else {
            Written::Nothing
        }
    }

    /// `PagerStats::gathers`, `gather_us`: one gathering, begun at `since`, has ended.
    fn count_gathering(&self, since: Instant) {
        let waited_us = u64::try_from(since.elapsed().as_micros()).unwrap_or(u64::MAX);
        self.gathers.fetch_add(1, Ordering::Relaxed);
        self.gather_us.fetch_add(waited_us, Ordering::Relaxed);
    }

    /// Group commit's gathering (G5: it only delays the fsync's start). The leader waits for
    /// as many commits as the last fsync covered, or as are known to be on their way (write
    /// views in progress and writers waiting for the writer lock), whichever is more, so
    /// that one fsync covers them too; a lone writer (groups of one, nobody in flight) never
    /// waits. The committer whose frame completes the count takes the round over (G6).
    /// Fallback, for committers that never come (an idle open transaction, a thread that
    /// stopped): the gathering also ends once no frame came within a gap of an eighth of the
    /// recent fsync time (0.1–1 ms), and after half of it (≤ 2 ms). `None`: the round was
    /// handed over, and the caller is one of its committers.
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
    /// count, replaced them; the hand-off (G6) then replaced that wake.
    fn gather_frames<'a>(
        &'a self,
        mut s: MutexGuard<'a, SyncState>,
    ) -> Option<MutexGuard<'a, SyncState>> {
        let in_flight = self.writers_in_progress.load(Ordering::Acquire) + self.writer.waiters();
        let until = (s.synced_seq + s.last_group).max(s.written_seq + in_flight);
        let avg_us = self.log_sync_us_avg.load(Ordering::Relaxed);
        let budget_us = (avg_us / 2).min(GATHER_MAX_US);
        if s.written_seq >= until || budget_us == 0 {
            return Some(s);
        }
        let gap = Duration::from_micros((avg_us / 8).clamp(GATHER_GAP_MIN_US, GATHER_GAP_MAX_US));
        let since = Instant::now();
        let deadline = since + Duration::from_micros(budget_us);
        // G6: the leader sleeps on its round's word, registered like the round's
        // committers, so a hand-off wakes it only when the round ends, with them.
        let round = s.round;
        let i = (round % 2) as usize;
        s.sleepers[i] = true;
        s.gather = Gather::Waiting { until, since };
        let mut before = s.written_seq;
        loop {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            // Read under the mutex: a bump after it makes the wait return at once.
            let seen = self.rounds.words[i].load(Ordering::Acquire);
            drop(s);
            self.rounds
                .futex_wait(&self.rounds.words[i], seen, Some(gap.min(deadline - now)));
            s = lock(&self.sync);
            if s.round != round {
                // Handed over, and the round has ended since (resetting `gather`).
                return None;
            }
            match s.gather {
                Gather::Handed => return None,
                // A non-`Full` frame completed the count.
                Gather::Idle => return Some(s),
                // No frame within the gap. An early return (EINTR, a checkpoint's
                // `mark_synced`) at worst ends the gathering early.
                Gather::Waiting { .. } if s.written_seq == before => break,
                Gather::Waiting { .. } => before = s.written_seq,
            }
        }
        s.gather = Gather::Idle;
        self.count_gathering(since);
        Some(s)
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
            return self.lead(s, seq);
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
                return self.lead(lock(&self.sync), seq);
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

    /// The leader's part (G2): gathers, then syncs the round (`sync_round`) — or, if a
    /// committer took the round over meanwhile (G6), waits for it like the round's other
    /// committers. The caller holds the mutex with `syncing` set for it (or is the next
    /// round's leader); its own frame, commit `seq`, is written, so the fsync covers it.
    fn lead(&self, s: MutexGuard<'_, SyncState>, seq: u64) -> Result<()> {
        let round = s.round;
        if let Some(err) = self.poison_error() {
            return Err(self.end_lead_poisoned(s, err));
        }
        match self.gather_frames(s) {
            Some(s) => self.sync_round(s),
            None => self.sleep_until_synced(round, seq),
        }
    }

    /// G6: leads the round that `note_written` handed over to this committer.
    pub(super) fn lead_handed(&self) -> Result<()> {
        self.sync_round(lock(&self.sync))
    }

    /// Syncs every frame written so far and ends the round, waking its committers and the
    /// next round's leader, if one registered.
    fn sync_round(&self, mut s: MutexGuard<'_, SyncState>) -> Result<()> {
        if let Some(err) = self.poison_error() {
            return Err(self.end_lead_poisoned(s, err));
        }
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
        self.log_sync_us.fetch_add(took_us, Ordering::Relaxed);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::OpenOptions;
    use crate::pager::{FileBackend, PagerConfig};
    use crate::vfs::SimVfs;

    /// G6's decision in `note_written`, with a gathering leader's state set up by hand (the
    /// threaded tests in pager/tests.rs cannot time a frame into a 1 ms gathering): a frame
    /// short of the count changes nothing; a `Full` frame completing it takes the round
    /// over; a non-`Full` one ends the gathering and has its committer wake the leader's
    /// word (bumped, so a leader about to sleep on it returns at once).
    #[test]
    fn the_frame_completing_a_gathering_takes_the_round_or_wakes_its_leader() {
        let b = FileBackend::open_with(
            Arc::new(SimVfs::new(7)),
            "db",
            &OpenOptions::default(),
            PagerConfig::default(),
        )
        .unwrap();
        let inner = &b.inner;
        let gathering = |until: u64| {
            let mut s = lock(&inner.sync);
            let i = (s.round % 2) as usize;
            s.syncing = true;
            s.sleepers[i] = true;
            s.gather = Gather::Waiting {
                until,
                since: Instant::now(),
            };
            s.written_seq
        };
        let seq = gathering(u64::MAX);
        assert!(matches!(inner.note_written(seq, true), Written::Nothing));
        assert!(matches!(lock(&inner.sync).gather, Gather::Waiting { .. }));

        let seq = gathering(0);
        assert!(matches!(inner.note_written(seq, true), Written::Lead));
        assert!(matches!(lock(&inner.sync).gather, Gather::Handed));
        assert_eq!(inner.gather_handoffs.load(Ordering::Relaxed), 1);

        let seq = gathering(0);
        let i = (lock(&inner.sync).round % 2) as usize;
        let word = inner.rounds.words[i].load(Ordering::Acquire);
        assert!(matches!(inner.note_written(seq, false), Written::WakeLeader(w) if w == i));
        assert!(matches!(lock(&inner.sync).gather, Gather::Idle));
        assert_ne!(inner.rounds.words[i].load(Ordering::Acquire), word);
        assert_eq!(inner.gather_handoffs.load(Ordering::Relaxed), 1);
        assert_eq!(inner.gathers.load(Ordering::Relaxed), 2);

        let mut s = lock(&inner.sync);
        s.syncing = false;
        s.sleepers = [false; 2];
    }
}
