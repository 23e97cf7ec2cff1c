//! The writer lock (pager K1): one lock-holding write transaction, commit critical section
//! or full checkpoint at a time. A flag taken by compare-and-swap; a waiter spins a few µs
//! before it sleeps on a condition variable.
//!
//! Why spin: a concurrent commit holds the lock for ~3 µs (bdb_update, sync=off), while a
//! sleeping waiter costs the releaser a futex wake (a syscall, an inter-processor interrupt
//! on a VM) and itself a wake-up latency several times the critical section. Measured
//! (bdb_update --threads 2 --begin concurrent, sync=off, 2-core machine, perf): the
//! condition variable's wait and notify were 7% of the writers' CPU and they spent 13% of
//! their time waiting for the lock.
//!
//! Invariants:
//! - W1. `held` is true exactly while one `acquire` has returned Ok and its `release` has
//!   not run; only a successful compare-and-swap from false sets it.
//! - W2. No lost wake-up: a sleeper increments `sleepers` and retries the swap under
//!   `sleep`'s mutex before waiting (the wait releases the mutex atomically); `release`
//!   clears `held` and then, if it reads `sleepers > 0` and neither its own wake in flight
//!   (W6) nor its own wasted wake (W7, where the sleepers' timed waits stand in for the
//!   notify) nor a standby (W8, which takes the lock instead), notifies under that mutex. All are SeqCst: either the releaser sees the sleeper
//!   (and its notify cannot slip in before the wait, the mutex being held), or the
//!   sleeper's swap comes after the clear and wins.
//! - W3. Fairness: while anyone sleeps, arrivals neither take the lock at once nor spin —
//!   they queue behind the sleepers (at most a race's worth of barging), so a sleeper is not
//!   starved by a stream of spinners. At most `SPINNERS_MAX` threads spin at a time; with
//!   many writers (FULL, 20–100 threads) the rest sleep as before.
//! - W4. Hand-off: a sleeper that has waited past `starve_after` (several fair shares of
//!   the lock) marks itself `starving`; the next `release` then keeps `held` set and hands
//!   the lock over (`handed`, under `sleep`'s mutex) instead of clearing it, so neither the
//!   releaser's next `acquire` nor a spinner can barge in. Only a sleeper that has waited at
//!   least once claims it (an arrival under the mutex does not), and the releaser hands
//!   over only while `sleepers > 0` under the mutex, where every counted sleeper is inside
//!   its wait or is the standby (W8), which stops spinning when it sees `handed` and
//!   looks under the mutex before it waits again: one of them sees `handed` before its
//!   deadline check and owns the lock — a hand-off is never orphaned. The standby's spin
//!   never takes a handed lock (`held` stays set). (Measured, hc_mixed 1:0 IMMEDIATE, 2 threads:
//!   without it the thread that released took the lock back before the woken sleeper ran,
//!   `thr_min`/`thr_max` 6.0k/47.7k.) Starvation is counted from the sleeper's arrival or
//!   the last hand-off, whichever is later, so hand-offs come at most one per
//!   `starve_after`: a hand-off leaves the lock held and idle until its sleeper has woken
//!   (tens of µs on a VM), and with 20 IMMEDIATE writers every sleeper had waited past
//!   1 ms, so nearly every release was a hand-off and the lock was idle about half the
//!   time (bdb_update sync=off, 2-core machine: held 9 µs per commit at 59k commits/s,
//!   24 µs of CPU per commit).
//! - W5. The spin adapts to the lock's hold time (`hold_ns_avg`, a moving average the
//!   holders update): a waiter spins up to twice the average hold, within
//!   `SPIN_US..=SPIN_US_MAX`, so an IMMEDIATE transaction of ~30 µs is taken over by the
//!   spinning waiter at its release (alternation, no futex) instead of the waiter falling
//!   asleep 20 µs in and the releaser taking the lock back.
//! - W6. A releaser whose own notify is still in flight does not notify again: `woken_by`
//!   holds the token of the thread whose notify woke a sleeper that has not yet run (0:
//!   none); the notifier sets it, and any sleeper that returns from its wait clears it before
//!   its swap. A release that skips its notify cleared `held` before it read its own token
//!   there, so the woken sleeper's swap comes after that clear (SeqCst): it takes the lock,
//!   or whoever barged in holds it and will release it, and that release notifies unless
//!   its own notify is in flight. This is the looping writer's case: it released, took the
//!   lock straight back with its next IMMEDIATE transaction before the woken sleeper ran,
//!   and releases again; a wake at each such release woke a sleeper on the idle core only
//!   to find the lock taken and sleep again (bdb_update sync=off, 20 writers: 1.0 context
//!   switches per commit). A release by another thread notifies as before: under FULL
//!   consecutive holders differ (each leaves for its durability wait), and skipping their
//!   notifies too left fewer sleepers awake to take the lock, smaller fsync groups and
//!   ~15% fewer commits.
//! - W7. A releaser whose last notify was wasted does not notify again until a sleeper next
//!   takes the lock: a woken sleeper that finds the lock taken again (its waker looped back
//!   into its next transaction before the sleeper ran) records the waker in `wasted_by`,
//!   and that thread's releases then skip the notify unless someone starves (W4). The
//!   sleeper is not lost: every wait ends by the sleeper's starvation deadline, where it
//!   marks itself starving and the next release hands it the lock, or a starvation period
//!   after its mark (another sleeper's hand-off may have cleared it), and the sleeper whose
//!   wake was wasted sleeps at most `STARVE_US_MIN` at a time (with long holds the deadline
//!   is far); a sleeper that marks itself retries the swap after the mark, so a release
//!   that read the mark clear has cleared `held` before that swap. So two threads looping on IMMEDIATE transactions take
//!   turns of a starvation period each, one sleeping, instead of a futex wake per commit
//!   that woke the sleeper only to find the lock re-taken (W6 stops only the second of two
//!   wakes in flight). Measured (hc_mixed 1:0, 2 threads, sync=off, `chrt -f 1`, 2-core
//!   machine): 0.5–0.7 → 0.04 wakes per commit, 37–39k → 40–52k tps, 47–49 → 24–32 µs CPU
//!   per commit; bdb_update sync=off, 20 IMMEDIATE writers: 74–78k → 174–178k tps, 23–24
//!   → 7.2–7.4 µs (BENCHMARKS.md, hcread2 branch). The price: when the looping waker
//!   stops, the lock may stay free up to `STARVE_US_MIN` (1 ms) before a sleeper looks
//!   again, where a notify would have woken it at once.
//! - W8. Standby: a thread that takes the lock while others sleep, nobody stands by and
//!   the last release left for a durability wait (`release`'s `leaves`: a `Full` commit,
//!   `left`), wakes one sleeper at once (`ask_standby`, under `sleep`'s mutex); the first
//!   sleeper to look takes the role up (`standby` ASKED → SPINNING, under the mutex right
//!   before a wait, so a request whose notify found nobody inside a wait is not lost) and
//!   spins without the mutex for the release, up to `spin_limit`, staying counted in
//!   `sleepers`; a release skips its notify while a standby is asked for or spins. So the
//!   next holder is awake when the lock frees, instead of the lock lying idle through a
//!   notified sleeper's wake-up (tens of µs on a VM), as it did at every hand-over once
//!   anyone slept (W3). No lost wake-up: a standby whose spin runs out gives the role up
//!   (SeqCst) before it retries the swap under the mutex, and a release clears `held`
//!   before it reads `standby` — either the release sees no standby and notifies, or the
//!   retry comes after the clear. An ASKED role is taken up by a sleeper that returns
//!   from its wait (a notified one, or one whose timeout raced the notify) or is on its way
//!   to one; a sleeper that leaves `acquire` with the role still asked for passes the
//!   notify on, or, the last one, withdraws the request. Why only after a release that
//!   left: a releaser that loops straight back to the lock (OFF/NORMAL, W6/W7) lost it to
//!   the spinning standby at nearly every release, a futex wake and a switch per commit.
//!   Measured (bdb_update, IMMEDIATE, 2-core VM, `chrt -f 1`; BENCHMARKS.md, "lockwake"):
//!   FULL, 50 / 100 writers: 45k / 44–48k → 73k / 79–85k commits/s, 0.95 → 0.06–0.16
//!   wakes and 32–34 → 18.5–19.7 µs CPU per commit; with a standby after every take,
//!   OFF 20 writers fell 218k → 165k commits/s, 5.8 → 11.6 µs CPU per commit.

use super::lock;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Shortest spin limit before sleeping: a few concurrent commits' critical sections (W3).
const SPIN_US: u64 = 20;

/// Longest spin limit, however long the holds (W5): spinning burns a core the holder or
/// the checkpointer may need.
const SPIN_US_MAX: u64 = 100;

/// A hold counted in the average at most this long (W5): a full checkpoint's hold must not
/// make waiters spin their longest for the next many commits.
const HOLD_SAMPLE_NS_MAX: u64 = 1_000_000;

/// A sleeper starves (W4) after this long at least; one whose wake was wasted looks again
/// this often (W7).
const STARVE_US_MIN: u64 = 1_000;

/// W8: no standby, one asked for, one spinning.
const STANDBY_NONE: u8 = 0;
const STANDBY_ASKED: u8 = 1;
const STANDBY_SPINNING: u8 = 2;

/// Threads that may spin at once (W3): one waiter is enough to take over a lock released
/// in microseconds; more would burn cores the holder may need.
const SPINNERS_MAX: usize = 1;

#[derive(Default)]
pub(super) struct WriterLock {
    held: AtomicBool,
    sleepers: AtomicUsize,
    spinners: AtomicUsize,
    /// W4: some sleeper has waited past `starve_after`.
    starving: AtomicBool,
    /// W4: the lock was handed to a sleeper (`held` stayed set); changed under `sleep`.
    handed: AtomicBool,
    /// W6: token (`thread_token`) of the thread whose notify woke a sleeper that has not
    /// yet run; 0: none.
    woken_by: AtomicU64,
    /// W7: token of the releaser whose last notify woke a sleeper that found the lock
    /// taken again; 0: none.
    wasted_by: AtomicU64,
    /// W5: moving average of the hold time, ns (one eighth per hold).
    hold_ns_avg: AtomicU64,
    /// W8: `STANDBY_NONE`, `STANDBY_ASKED` (a taker woke a sleeper to stand by) or
    /// `STANDBY_SPINNING` (a sleeper took that up and spins for the release).
    standby: AtomicU8,
    /// W8: the last release left for a durability wait, so the next one will likely too.
    left: AtomicBool,
    /// Tests only: lengthens the longest spin (W5), so that a test's standby still spins
    /// when the test thread gets the other core back on a loaded machine.
    #[cfg(test)]
    spin_extra_ns: AtomicU64,
    /// Notifies of a sleeper and hand-offs (W4) so far (`PagerStats::writer_wakes`).
    wakes: AtomicU64,
    handoffs: AtomicU64,
    /// W4: when the lock was last handed over (None: never).
    sleep: Mutex<Option<Instant>>,
    cv: Condvar,
}

impl WriterLock {
    fn try_take(&self) -> bool {
        self.held
            .compare_exchange(false, true, Ordering::SeqCst, Ordering::Relaxed)
            .is_ok()
    }

    /// Threads waiting for the lock, spinning or asleep: commits on their way, as far as
    /// group commit's gathering can tell (group_commit.rs G5).
    pub(super) fn waiters(&self) -> u64 {
        let n = self.sleepers.load(Ordering::Relaxed) + self.spinners.load(Ordering::Relaxed);
        n as u64
    }

    /// Sleepers notified (W2, W6, hand-offs included) and hand-offs (W4) so far.
    pub(super) fn wakes(&self) -> (u64, u64) {
        (
            self.wakes.load(Ordering::Relaxed),
            self.handoffs.load(Ordering::Relaxed),
        )
    }

    /// Takes the lock, waiting until `deadline`. `Some(waited)`: taken (`waited`: not at the
    /// first try); `None`: not taken by the deadline.
    pub(super) fn acquire(&self, deadline: Instant) -> Option<bool> {
        if self.sleepers.load(Ordering::SeqCst) == 0 && self.try_take() {
            return Some(false);
        }
        let start = Instant::now();
        if self.spin(start) {
            if self.sleepers.load(Ordering::SeqCst) > 0 {
                self.ask_standby(&lock(&self.sleep));
            }
            return Some(true);
        }
        let mut g = lock(&self.sleep);
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        let mut waited = false;
        // W7: this sleeper found a wake of its wasted, so releases may not notify it.
        let mut unnotified = false;
        let taken = loop {
            let mut waker = 0;
            if waited {
                // W6: before the swap, so a release that skipped its notify for this wake
                // has cleared `held` before the swap reads it.
                waker = self.woken_by.swap(0, Ordering::SeqCst);
                // W4: a hand-off goes to a sleeper that has waited, never to an arrival.
                if self.handed.load(Ordering::SeqCst) {
                    self.handed.store(false, Ordering::SeqCst);
                    self.starving.store(false, Ordering::SeqCst);
                    self.wasted_by.store(0, Ordering::SeqCst);
                    break true;
                }
            }
            // W2: the swap is retried after the increment, under the mutex.
            if self.try_take() {
                if waited {
                    self.wasted_by.store(0, Ordering::SeqCst);
                }
                break true;
            }
            if waker != 0 {
                // W7: the lock was taken again before this woken sleeper ran.
                self.wasted_by.store(waker, Ordering::SeqCst);
                unnotified = true;
            }
            let now = Instant::now();
            if now >= deadline {
                break false;
            }
            // W4: from the later of this sleeper's arrival and the last hand-off.
            let starve_at = g.map_or(start, |h| h.max(start)) + self.starve_after();
            if now >= starve_at && !self.starving.swap(true, Ordering::SeqCst) {
                // W7: a release that read `starving` clear may have skipped its notify;
                // its clear of `held` then comes before this swap.
                if self.try_take() {
                    self.starving.store(false, Ordering::SeqCst);
                    self.wasted_by.store(0, Ordering::SeqCst);
                    break true;
                }
            }
            // Woken at `starve_at` at the latest, so a sleeper nobody notifies still marks
            // itself starving (W4); a starving one looks again a period later, its mark
            // being gone if another sleeper's hand-off cleared it (W7: no release may
            // notify it meanwhile); one whose wake was wasted looks again within
            // `STARVE_US_MIN`, so that a free lock waits at most that long for it however
            // long the holds (W7).
            let mut until = if now < starve_at {
                starve_at
            } else {
                now + self.starve_after()
            };
            if unnotified {
                until = until.min(now + Duration::from_micros(STARVE_US_MIN));
            }
            let until = until.min(deadline);
            // W8: checked under the mutex right before the wait, so a request made while
            // this sleeper was not inside its wait (its notify then woke nobody) is taken
            // up here.
            if self
                .standby
                .compare_exchange(
                    STANDBY_ASKED,
                    STANDBY_SPINNING,
                    Ordering::SeqCst,
                    Ordering::SeqCst,
                )
                .is_ok()
            {
                drop(g);
                let got = self.stand_by(deadline);
                g = lock(&self.sleep);
                waited = true;
                if got {
                    self.wasted_by.store(0, Ordering::SeqCst);
                    break true;
                }
                continue;
            }
            g = self
                .cv
                .wait_timeout(g, until - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
            waited = true;
        };
        self.sleepers.fetch_sub(1, Ordering::SeqCst);
        // W8: a request this sleeper may have been woken for, and leaves untaken, goes to
        // another sleeper, or lapses if none is left.
        if self.standby.load(Ordering::SeqCst) == STANDBY_ASKED {
            if self.sleepers.load(Ordering::SeqCst) > 0 {
                self.cv.notify_one();
            } else {
                self.standby.store(STANDBY_NONE, Ordering::SeqCst);
            }
        }
        if taken {
            self.ask_standby(&g);
        }
        drop(g);
        taken.then_some(true)
    }

    /// W8: wakes one sleeper to stand by for this holder's release, if the last release
    /// left for a durability wait, someone sleeps and nobody stands by yet. The caller
    /// holds the lock and `sleep`'s mutex (`_g`) and is not counted in `sleepers`.
    fn ask_standby(&self, _g: &MutexGuard<'_, Option<Instant>>) {
        if self.left.load(Ordering::Relaxed)
            && self.sleepers.load(Ordering::SeqCst) > 0
            && self
                .standby
                .compare_exchange(
                    STANDBY_NONE,
                    STANDBY_ASKED,
                    Ordering::SeqCst,
                    Ordering::SeqCst,
                )
                .is_ok()
        {
            self.wakes.fetch_add(1, Ordering::Relaxed);
            self.cv.notify_one();
        }
    }

    /// W8: the standby's spin, without `sleep`'s mutex, until it takes the lock, sees it
    /// handed over (W4: `held` stays set; the hand-off is claimed under the mutex), or
    /// `spin_limit` or `deadline` passes. Not taken: the role is given up, and the caller
    /// retries the swap under the mutex before it sleeps again.
    fn stand_by(&self, deadline: Instant) -> bool {
        let start = Instant::now();
        let limit = self.spin_limit();
        'spin: loop {
            for _ in 0..64 {
                if self.handed.load(Ordering::Relaxed) {
                    break 'spin;
                }
                if !self.held.load(Ordering::Relaxed) && self.try_take() {
                    self.standby.store(STANDBY_NONE, Ordering::SeqCst);
                    return true;
                }
                std::hint::spin_loop();
            }
            let now = Instant::now();
            if now.duration_since(start) >= limit || now >= deadline {
                break;
            }
        }
        self.standby.store(STANDBY_NONE, Ordering::SeqCst);
        false
    }

    /// W4: how long a sleeper waits before it starves: `STARVE_US_MIN`, or four fair shares
    /// of the lock (one average hold per sleeper) if longer.
    fn starve_after(&self) -> Duration {
        let sleepers = self.sleepers.load(Ordering::Relaxed) as u64;
        let share_ns = self
            .hold_ns_avg
            .load(Ordering::Relaxed)
            .saturating_mul(sleepers);
        Duration::from_micros(STARVE_US_MIN).max(Duration::from_nanos(share_ns.saturating_mul(4)))
    }

    /// W5: twice the average hold, within `SPIN_US..=SPIN_US_MAX`.
    fn spin_limit(&self) -> Duration {
        let ns = self.hold_ns_avg.load(Ordering::Relaxed).saturating_mul(2);
        #[cfg(test)]
        let max = SPIN_US_MAX * 1_000 + self.spin_extra_ns.load(Ordering::Relaxed);
        #[cfg(not(test))]
        let max = SPIN_US_MAX * 1_000;
        Duration::from_nanos(ns.clamp(SPIN_US * 1_000, max))
    }

    /// W3: spins up to `spin_limit` from `start` while nobody sleeps and no other thread
    /// spins.
    fn spin(&self, start: Instant) -> bool {
        if self.spinners.fetch_add(1, Ordering::AcqRel) >= SPINNERS_MAX {
            self.spinners.fetch_sub(1, Ordering::AcqRel);
            return false;
        }
        let limit = self.spin_limit();
        let mut taken = false;
        'spin: loop {
            // The clock is read once per 64 pauses (a pause is 10–140 cycles).
            for _ in 0..64 {
                if self.sleepers.load(Ordering::Relaxed) > 0 {
                    break 'spin;
                }
                if !self.held.load(Ordering::Relaxed) && self.try_take() {
                    taken = true;
                    break 'spin;
                }
                std::hint::spin_loop();
            }
            if start.elapsed() >= limit {
                break;
            }
        }
        self.spinners.fetch_sub(1, Ordering::AcqRel);
        taken
    }

    /// Releases the lock (W1) after a hold of `held`, handing it to a starving sleeper
    /// (W4), else waking one sleeper, if any (W2) and nobody stands by (W8). `leaves`:
    /// the holder goes on to a durability wait, not straight back to the lock (W8).
    pub(super) fn release(&self, held: Duration, leaves: bool) {
        self.left.store(leaves, Ordering::Relaxed);
        // W5: only the holder writes the average, so a load and a store suffice.
        let sample = u64::try_from(held.as_nanos())
            .unwrap_or(u64::MAX)
            .min(HOLD_SAMPLE_NS_MAX);
        let avg = self.hold_ns_avg.load(Ordering::Relaxed);
        self.hold_ns_avg
            .store(avg - avg / 8 + sample / 8, Ordering::Relaxed);
        if self.starving.load(Ordering::SeqCst) {
            let mut g = lock(&self.sleep);
            if self.sleepers.load(Ordering::SeqCst) > 0 {
                // W4: `held` stays set; a counted sleeper is inside its wait. Notified even
                // with a wake in flight (W6): hand-offs are rare, and a sleeper already
                // woken would claim it as well.
                self.handed.store(true, Ordering::SeqCst);
                *g = Some(Instant::now());
                self.handoffs.fetch_add(1, Ordering::Relaxed);
                self.notify(thread_token());
                return;
            }
            self.starving.store(false, Ordering::SeqCst);
        }
        self.held.store(false, Ordering::SeqCst);
        // W6: `woken_by` is read after `held` is cleared; W8: so is `standby`.
        let me = thread_token();
        if self.sleepers.load(Ordering::SeqCst) > 0
            && self.standby.load(Ordering::SeqCst) == STANDBY_NONE
            && self.woken_by.load(Ordering::SeqCst) != me
            && (self.wasted_by.load(Ordering::SeqCst) != me || self.starving.load(Ordering::SeqCst))
        {
            let _g = lock(&self.sleep);
            self.notify(me);
        }
    }

    /// Wakes one sleeper on behalf of the thread with token `by` (W2, W4, W6); the caller
    /// holds `sleep`'s mutex.
    fn notify(&self, by: u64) {
        self.woken_by.store(by, Ordering::SeqCst);
        self.wakes.fetch_add(1, Ordering::Relaxed);
        self.cv.notify_one();
    }
}

/// This thread's token for W6: unique per thread, never 0.
fn thread_token() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    thread_local! {
        static TOKEN: u64 = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    TOKEN.with(|t| *t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn one_holder_at_a_time_and_timeouts() {
        let l = WriterLock::default();
        let far = Instant::now() + Duration::from_secs(5);
        assert_eq!(l.acquire(far), Some(false));
        assert_eq!(l.acquire(Instant::now() + Duration::from_millis(30)), None);
        l.release(Duration::ZERO, false);
        assert_eq!(l.acquire(far), Some(false));
        l.release(Duration::ZERO, false);
    }

    /// W1, W2, W8: many threads, short and long critical sections (long ones make waiters
    /// sleep); a counter updated non-atomically under the lock loses nothing, and nobody
    /// times out (no lost wake-up), with releases that stay (no standby) or leave (W8:
    /// every take with sleepers asks for one).
    #[test]
    fn mutual_exclusion_without_lost_wakeups() {
        for leaves in [false, true] {
            mutual_exclusion_without_lost_wakeups_when(leaves);
        }
    }

    fn mutual_exclusion_without_lost_wakeups_when(leaves: bool) {
        let l = Arc::new(WriterLock::default());
        let inside = Arc::new(AtomicUsize::new(0));
        let count = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..6)
            .map(|t| {
                let (l, inside, count) = (l.clone(), inside.clone(), count.clone());
                std::thread::spawn(move || {
                    for i in 0..2_000 {
                        let deadline = Instant::now() + Duration::from_secs(20);
                        assert!(l.acquire(deadline).is_some(), "timed out");
                        assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0);
                        let c = count.load(Ordering::Relaxed);
                        if (i + t) % 97 == 0 {
                            std::thread::sleep(Duration::from_micros(200));
                        }
                        count.store(c + 1, Ordering::Relaxed);
                        inside.fetch_sub(1, Ordering::SeqCst);
                        l.release(Duration::ZERO, leaves);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().expect("thread");
        }
        assert_eq!(count.load(Ordering::SeqCst), 12_000);
    }

    /// W4: a thread that releases and at once takes the lock again (an IMMEDIATE writer
    /// looping) does not starve a sleeping waiter: both threads get a fair part of the
    /// holds, and nobody times out.
    #[test]
    fn a_releasing_thread_does_not_starve_a_sleeper() {
        let l = Arc::new(WriterLock::default());
        let stop = Arc::new(AtomicBool::new(false));
        let threads: Vec<_> = (0..2)
            .map(|_| {
                let (l, stop) = (l.clone(), stop.clone());
                std::thread::spawn(move || {
                    let mut holds = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        let deadline = Instant::now() + Duration::from_secs(5);
                        assert!(l.acquire(deadline).is_some(), "timed out");
                        let since = Instant::now();
                        // A busy hold longer than the longest spin, so the waiter sleeps
                        // while the holder keeps its core.
                        while since.elapsed() < Duration::from_micros(300) {
                            std::hint::spin_loop();
                        }
                        holds += 1;
                        l.release(since.elapsed(), false);
                    }
                    holds
                })
            })
            .collect();
        std::thread::sleep(Duration::from_millis(600));
        stop.store(true, Ordering::Relaxed);
        let holds: Vec<u64> = threads
            .into_iter()
            .map(|t| t.join().expect("thread"))
            .collect();
        let total: u64 = holds.iter().sum();
        assert!(total > 20, "holds {holds:?}");
        eprintln!("holds {holds:?}");
        for h in &holds {
            assert!(*h * 8 >= total, "unfair: holds {holds:?}");
        }
    }

    /// W4: once the lock was handed over, a sleeper that had starved before does not
    /// starve again, and get the next hand-off, until a starvation period after it. Two
    /// sleepers starve while the test holds the lock; its release hands the lock to one;
    /// the other is woken while the recipient holds it (as by the wakes of a looping
    /// holder's releases) and must not mark itself starving then, so the recipient's
    /// release is an ordinary one: one hand-off in all. Counted from the sleeper's arrival,
    /// it marked itself at that wake and took a second hand-off. (A 25 ms average hold
    /// makes the periods 200 ms with two sleepers, ~90 ms with one, so the recipient's
    /// 10 ms hold ends well inside the second whatever the wake-up latency under load.)
    #[test]
    fn hand_offs_come_at_most_one_per_starvation_period() {
        let l = Arc::new(WriterLock::default());
        let far = || Instant::now() + Duration::from_secs(10);
        l.hold_ns_avg.store(25_000_000, Ordering::Relaxed);
        assert_eq!(l.acquire(far()), Some(false));
        let threads: Vec<_> = (0..2)
            .map(|_| {
                let l = l.clone();
                std::thread::spawn(move || {
                    let got = l.acquire(far());
                    std::thread::sleep(Duration::from_millis(10));
                    l.release(Duration::ZERO, false);
                    got
                })
            })
            .collect();
        while l.sleepers.load(Ordering::SeqCst) < 2 || !l.starving.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
        l.release(Duration::ZERO, false);
        assert_eq!(l.wakes().1, 1, "the starving sleepers got no hand-off");
        while l.handed.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
        // The recipient holds the lock: wake the other sleeper.
        drop(lock(&l.sleep));
        l.cv.notify_all();
        for t in threads {
            assert_eq!(t.join().expect("thread"), Some(true));
        }
        assert_eq!(l.wakes().1, 1, "a second hand-off within the period");
    }

    /// W6: a release whose own notify is still in flight (its sleeper has not yet run)
    /// does not notify again, and that wake still gets the sleeper the lock; a release with
    /// no wake in flight, or with another thread's, notifies. (A long average hold keeps
    /// the sleeper from waking at its starvation deadline, W4, during the test.)
    #[test]
    fn a_releaser_does_not_notify_while_its_own_wake_is_in_flight() {
        for (in_flight, notifies) in [(thread_token(), 0), (0, 1), (u64::MAX, 1)] {
            let l = Arc::new(WriterLock::default());
            l.hold_ns_avg.store(1_000_000_000, Ordering::Relaxed);
            assert_eq!(l.acquire(Instant::now()), Some(false));
            let waiter = {
                let l = l.clone();
                std::thread::spawn(move || {
                    let got = l.acquire(Instant::now() + Duration::from_secs(60));
                    l.release(Duration::ZERO, false);
                    got
                })
            };
            // The sleeper holds the mutex from its count until its wait releases it.
            while l.sleepers.load(Ordering::SeqCst) == 0 {
                std::thread::yield_now();
            }
            drop(lock(&l.sleep));
            l.woken_by.store(in_flight, Ordering::SeqCst);
            l.release(Duration::ZERO, false);
            assert_eq!(l.wakes().0, notifies, "wake in flight from {in_flight}");
            if notifies == 0 {
                // The wake that was in flight arrives.
                let _g = lock(&l.sleep);
                l.cv.notify_one();
            }
            assert_eq!(waiter.join().expect("thread"), Some(true));
        }
    }

    /// Waits (yielding) until `cond` holds; fails after 10 s instead of hanging.
    fn wait_for(what: &str, cond: impl Fn() -> bool) {
        let until = Instant::now() + Duration::from_secs(10);
        while !cond() {
            assert!(Instant::now() < until, "never saw: {what}");
            std::thread::yield_now();
        }
    }

    /// W7: a sleeper woken while the lock is held again marks its waker; that thread's next
    /// release does not notify, and the sleeper still takes the free lock within about
    /// `STARVE_US_MIN`, long before its starvation deadline. A release by another thread
    /// than the marked one notifies. (A 250 ms average hold puts the deadline 1 s after
    /// the sleeper's arrival, so the test's release comes well before it even under load.)
    #[test]
    fn a_releaser_whose_wake_was_wasted_does_not_notify_again() {
        for (waker, notifies) in [(thread_token(), 0), (u64::MAX, 1)] {
            let l = Arc::new(WriterLock::default());
            l.hold_ns_avg.store(250_000_000, Ordering::Relaxed);
            assert_eq!(l.acquire(Instant::now()), Some(false));
            let waiter = {
                let l = l.clone();
                std::thread::spawn(move || {
                    let got = l.acquire(Instant::now() + Duration::from_secs(60));
                    let at = Instant::now();
                    l.release(Duration::ZERO, false);
                    (got, at)
                })
            };
            wait_for("a sleeper", || l.sleepers.load(Ordering::SeqCst) > 0);
            // `waker`'s notify, its thread having taken the lock straight back.
            {
                let _g = lock(&l.sleep);
                l.woken_by.store(waker, Ordering::SeqCst);
                l.cv.notify_one();
            }
            wait_for("the wasted wake marked", || {
                l.wasted_by.load(Ordering::SeqCst) == waker
            });
            assert!(!l.starving.load(Ordering::SeqCst));
            let released = Instant::now();
            l.release(Duration::ZERO, false);
            assert_eq!(l.wakes(), (notifies, 0), "waker {waker}");
            let (got, at) = waiter.join().expect("thread");
            assert_eq!(got, Some(true));
            let waited = at.duration_since(released);
            assert!(waited < Duration::from_millis(500), "free for {waited:?}");
        }
    }

    /// W7: a starving sleeper whose mark was cleared (as by another sleeper's hand-off)
    /// while no release notifies it still looks again a starvation period later, instead
    /// of sleeping to its deadline. (A 12.5 ms average hold: 50 ms periods.)
    #[test]
    fn a_starving_sleeper_looks_again_a_period_after_its_mark() {
        let l = Arc::new(WriterLock::default());
        l.hold_ns_avg.store(12_500_000, Ordering::Relaxed);
        assert_eq!(l.acquire(Instant::now()), Some(false));
        let waiter = {
            let l = l.clone();
            std::thread::spawn(move || {
                let got = l.acquire(Instant::now() + Duration::from_secs(30));
                l.release(Duration::ZERO, false);
                got
            })
        };
        wait_for("a starving sleeper", || l.starving.load(Ordering::SeqCst));
        {
            // The sleeper is inside its wait once the mutex is free.
            let _g = lock(&l.sleep);
            l.starving.store(false, Ordering::SeqCst);
            l.wasted_by.store(thread_token(), Ordering::SeqCst);
        }
        let released = Instant::now();
        l.release(Duration::ZERO, false);
        assert_eq!(l.wakes(), (0, 0));
        assert_eq!(waiter.join().expect("thread"), Some(true));
        assert!(released.elapsed() < Duration::from_secs(10));
    }

    /// A thread that sleeps in `acquire` on `l` (nobody spins: the test holds the lock and
    /// the long average hold makes the arrival's spin end first) and sends when it took
    /// the lock; it releases once told to.
    fn sleeper(
        l: &Arc<WriterLock>,
    ) -> (
        std::sync::mpsc::Receiver<Instant>,
        std::sync::mpsc::Sender<()>,
        std::thread::JoinHandle<()>,
    ) {
        let (took_tx, took_rx) = std::sync::mpsc::channel();
        let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
        let l = l.clone();
        let t = std::thread::spawn(move || {
            let got = l.acquire(Instant::now() + Duration::from_secs(60));
            assert_eq!(got, Some(true));
            took_tx.send(Instant::now()).expect("send");
            go_rx.recv().expect("recv");
            l.release(Duration::ZERO, true);
        });
        (took_rx, go_tx, t)
    }

    /// Waits until `n` threads sleep on `l`, inside their waits (the mutex free).
    fn wait_for_sleepers(l: &WriterLock, n: usize) {
        wait_for("sleepers", || l.sleepers.load(Ordering::SeqCst) == n);
        drop(lock(&l.sleep));
    }

    /// Waits until a sleeper took the standby's role up (W8), spinning: a yield could give
    /// the core away for longer than the standby spins.
    /// A held lock (taken after a release that left, W8) and a sleeper that has taken up
    /// the standby role it was asked for, spinning up to 2 s: with another test on the
    /// other core of a 2-core machine, a standby spinning its usual 100 µs at most ran out
    /// before the test thread got its core back to release. (A 250 ms average hold keeps
    /// the sleeper from starving, W4.)
    #[allow(clippy::type_complexity)]
    fn held_with_a_standby() -> (
        Arc<WriterLock>,
        std::sync::mpsc::Receiver<Instant>,
        std::sync::mpsc::Sender<()>,
        std::thread::JoinHandle<()>,
    ) {
        let l = Arc::new(WriterLock::default());
        l.hold_ns_avg.store(250_000_000, Ordering::Relaxed);
        l.spin_extra_ns.store(2_000_000_000, Ordering::Relaxed);
        l.left.store(true, Ordering::Relaxed);
        assert_eq!(l.acquire(Instant::now()), Some(false));
        let (took, go, t) = sleeper(&l);
        wait_for_sleepers(&l, 1);
        l.ask_standby(&lock(&l.sleep));
        standby_taken_up(&l);
        (l, took, go, t)
    }

    fn standby_taken_up(l: &WriterLock) {
        let until = Instant::now() + Duration::from_secs(10);
        while l.standby.load(Ordering::SeqCst) == STANDBY_ASKED {
            assert!(Instant::now() < until, "no standby");
            std::hint::spin_loop();
        }
    }

    /// W8: a take asks for a standby only if the last release left for a durability wait:
    /// two sleepers, a release that stays wakes one (W2) and that one, taking the lock,
    /// asks for no standby; after a release that leaves it does (a second wake). (A 250 ms
    /// average hold keeps the sleepers from starving, W4, during the test.)
    #[test]
    fn a_standby_is_asked_for_only_after_a_release_that_left() {
        for (leaves, wakes) in [(false, 1), (true, 2)] {
            let l = Arc::new(WriterLock::default());
            l.hold_ns_avg.store(250_000_000, Ordering::Relaxed);
            assert_eq!(l.acquire(Instant::now()), Some(false));
            let (took1, go1, t1) = sleeper(&l);
            let (took2, go2, t2) = sleeper(&l);
            wait_for_sleepers(&l, 2);
            l.release(Duration::ZERO, leaves);
            // Whichever sleeper took the lock has asked for its standby by now.
            let first_is_1 = loop {
                if took1.try_recv().is_ok() {
                    break true;
                }
                if took2.try_recv().is_ok() {
                    break false;
                }
                std::thread::yield_now();
            };
            assert_eq!(l.wakes(), (wakes, 0), "leaves {leaves}");
            let (go_first, go_second, took_second) = if first_is_1 {
                (&go1, &go2, &took2)
            } else {
                (&go2, &go1, &took1)
            };
            go_first.send(()).expect("send");
            took_second.recv().expect("recv");
            go_second.send(()).expect("send");
            t1.join().expect("thread");
            t2.join().expect("thread");
        }
    }

    /// W8: a standby spinning at the release takes the lock without the release's notify:
    /// one wake in all (the standby's). Retried a few times: under load the standby's spin
    /// may run out before the test releases, and then the release must notify.
    #[test]
    fn a_standby_takes_the_lock_at_release_without_a_notify() {
        let mut tries = Vec::new();
        for _ in 0..20 {
            let (l, took, go, t) = held_with_a_standby();
            let spinning = l.standby.load(Ordering::SeqCst) == STANDBY_SPINNING;
            l.release(Duration::ZERO, true);
            took.recv().expect("recv");
            go.send(()).expect("send");
            t.join().expect("thread");
            let wakes = l.wakes();
            if spinning && wakes == (1, 0) {
                return;
            }
            tries.push((spinning, wakes));
        }
        panic!("no standby took the lock without a notify: {tries:?}");
    }

    /// W8, W2: no lost wake-up when a standby's spin runs out as the lock is released: the
    /// release, the standby's giving up and its swap race across the spin limit (100 µs
    /// with a 250 ms average hold), and each time the sleeper takes the lock at once; a
    /// lost wake-up would leave it asleep until it starves (W4, 1 s after its arrival).
    /// Some rounds release after the spin ran out (the release must notify), some during
    /// it (the standby takes the lock), some as it runs out.
    #[test]
    fn no_lost_wake_up_when_a_standby_gives_up_as_the_lock_is_released() {
        let l = Arc::new(WriterLock::default());
        l.left.store(true, Ordering::Relaxed);
        for i in 0..400u32 {
            // Each release moves the average towards its zero hold.
            l.hold_ns_avg.store(250_000_000, Ordering::Relaxed);
            let limit = l.spin_limit();
            assert_eq!(l.acquire(Instant::now()), Some(false));
            let (took, go, t) = sleeper(&l);
            wait_for_sleepers(&l, 1);
            l.ask_standby(&lock(&l.sleep));
            standby_taken_up(&l);
            // From 20 µs before the spin limit to 20 µs after, 0.1 µs apart, counted
            // from when the standby took its role up.
            let spinning = Instant::now();
            let hold = limit - Duration::from_micros(20) + Duration::from_nanos(100) * i;
            while spinning.elapsed() < hold {
                std::hint::spin_loop();
            }
            let released = Instant::now();
            l.release(Duration::ZERO, true);
            let at = took.recv().expect("recv");
            go.send(()).expect("send");
            t.join().expect("thread");
            let waited = at.saturating_duration_since(released);
            assert!(
                waited < Duration::from_millis(500),
                "round {i}: the lock was free for {waited:?}"
            );
        }
    }

    /// W8, W4: a hand-off while the only counted sleeper is a standby spinning (not inside
    /// its wait, so the release's notify wakes nobody) is not orphaned: the standby sees
    /// it and claims it under the mutex at once. (A 250 ms average hold: the sleeper would
    /// otherwise sleep about 1 s before it looks again.)
    #[test]
    fn a_hand_off_to_a_standby_that_spins_is_claimed() {
        let mut tries = 0;
        loop {
            let (l, took, go, t) = held_with_a_standby();
            // As if the sleeper had starved: the release hands the lock over.
            l.starving.store(true, Ordering::SeqCst);
            let spinning = l.standby.load(Ordering::SeqCst) == STANDBY_SPINNING;
            let released = Instant::now();
            l.release(Duration::ZERO, true);
            assert_eq!(l.wakes().1, 1, "no hand-off");
            let at = took.recv().expect("recv");
            go.send(()).expect("send");
            t.join().expect("thread");
            assert!(!l.handed.load(Ordering::SeqCst) && !l.starving.load(Ordering::SeqCst));
            let waited = at.saturating_duration_since(released);
            assert!(waited < Duration::from_millis(500), "handed for {waited:?}");
            tries += 1;
            // Under load the spin may have run out before the release: try again.
            if spinning || tries == 20 {
                assert!(spinning, "the standby never spun at the hand-off");
                break;
            }
        }
    }
}
