//! The page cache: committed page versions tagged with commit sequence numbers, the live
//! snapshots that may read them, and the eviction rule that keeps memory bounded.
//!
//! Invariants (cited by `pager` and its tests):
//! - C1. An entry's versions are sorted by sequence number; the newest is the latest
//!   committed image of the page. Tag 0 means "visible to every snapshot" (the image was
//!   read from the database file, or was the latest committed image when a newer version
//!   was published).
//! - C2. A snapshot `s` reads, from an entry, the newest version with tag `<= s`. An older
//!   version is dropped once no snapshot that may still read the cache falls in its
//!   visibility window `[tag, next version's tag)` — a live one, or one registering later,
//!   which registers at `committed_seq` or above (C9).
//! - C3. An entry is *dirty* while its newest version is not yet in the database file
//!   (committed after the last checkpoint). Dirty entries are never evicted: a checkpoint
//!   writes them and makes them clean.
//! - C4. A page absent from the cache is read from the database file. That is correct for
//!   every live snapshot because a clean entry is evicted only when it holds one version
//!   whose tag is `<=` the horizon (C10), so the file's image is what every live and future
//!   snapshot sees.
//! - C5. When a commit publishes a new version of a page that has no entry yet, the
//!   previous image (the writer's base) is inserted first with tag 0, so snapshots older
//!   than the commit keep seeing it after the checkpoint overwrites the file (C2).
//! - C6. The cache holds at most `cache_pages_max` entries except while entries cannot be
//!   evicted (dirty, or needed by an old snapshot); the pager asks for a background
//!   checkpoint when dirty entries pass half of the bound and makes committers wait for it
//!   past three quarters (`PagerConfig`, checkpoint.rs backpressure), so dirty entries stay
//!   under three quarters of the bound plus the pages of the commits in flight. Each shard
//!   (C7) keeps its own share of the bound, the shares summing to `cache_pages_max`; a
//!   shard past its share holds only entries that cannot be evicted, so the excess bound is
//!   the same.
//!
//! - C11. Releasing a snapshot that is not the oldest live one prunes nothing: the versions
//!   it frees (those whose window held it alone) are dropped when their page is published
//!   again (`publish` prunes the pages it pushes) or when the oldest snapshot goes (the
//!   horizon moves and every marked shard is swept). So a page holds at most one version
//!   per live snapshot plus one per release since its last publish window, and a sweep
//!   happens once per horizon move, not once per commit. (Measured: with two concurrent
//!   writers, one descheduled for milliseconds while holding its snapshot, the other's
//!   per-commit sweep of every multi-version entry was 7% of the process's CPU,
//!   bdb_update --threads 2 --begin concurrent, perf; 0.4% at one thread.)
//! - C12. Even the oldest snapshot's release sweeps only when no snapshot is left, when a
//!   shard is past its share (C6), or when the horizon has moved `SWEEP_HORIZON_STEP`
//!   commits since the last sweep. So with writers whose snapshots overlap (each commit
//!   releases the oldest) a sweep runs once per that many commits instead of once per
//!   commit, and the versions left meanwhile are those of pages published in the last
//!   `SWEEP_HORIZON_STEP` commits and not since (a page's publish prunes it, C11).
//!   (Measured: bdb_update --threads 2 --begin concurrent, sync=off, perf: the sweeps were
//!   7% of the writers' CPU, holding the registry mutex the other writer's snapshot
//!   registration waits for.)
//! - C13. Eviction order is second chance (CLOCK, Corbató 1968) over `lru`: a hit sets the
//!   entry's reference bit and touches nothing else; eviction walks `lru` from its oldest
//!   tick, evicts unreferenced evictable entries, and moves a referenced one to the newest
//!   tick with its bit cleared — unless the walk found too few others, then it is evicted
//!   too (C6 holds as without the bits). The order only decides the hit rate: C4 and C6 do
//!   not depend on it. (Measured: moving a hit entry in `lru` was a `BTreeMap` remove +
//!   insert, ~750 instructions, for most random lookups, BENCHMARKS.md "page cache hits".)
//!
//! Concurrency: page reads of all threads go through here, so no lock is shared by all of
//! them (measured: one cache mutex kept read-only `hc_mixed` on a file from scaling past two
//! threads, BENCHMARKS.md).
//! - C7. Entries live in `shards`, chosen by page number (`shard_index`). Each shard has its
//!   own mutex, LRU order, tick and set of multi-version entries. A page read (lookup, or
//!   insert after a miss, with its eviction) takes its page's shard mutex only. No thread
//!   holds two shard mutexes at once.
//! - C8. The registry (live snapshots, `committed_seq`, `page_count`) has its own mutex.
//!   Lock order: registry → one shard; a shard holder never takes the registry. A snapshot
//!   registers at `committed_seq` under the registry mutex; `publish` holds that mutex
//!   from advancing `committed_seq` until the last of the commit's versions is pushed, so
//!   a snapshot sees all of a commit's pages or none (tags above it are skipped, C2). The
//!   lock-free `committed` is stored after the last version. Registrations, releases and
//!   publishes spin for it before they sleep (`REGISTRY_TRIES`).
//! - C9. Pruning (C2) holds the registry mutex while it judges versions: every snapshot that
//!   can read a window is then either registered, hence seen, or will register at the
//!   registry's `committed_seq` or later, which pruning counts as a reader (a pushed
//!   version tagged above `committed_seq` would leave the image of `committed_seq`, which
//!   a snapshot registering now reads, inside an older window).
//! - C10. Eviction (C4) takes no registry: it compares with `horizon`, the oldest live
//!   snapshot or, with none, `committed_seq`. The horizon never decreases (a snapshot
//!   registers at `committed_seq`, at least every live one), so a stale load gives a
//!   smaller value and evicting by it is safe: every live and future snapshot is at least
//!   the true horizon, at least the loaded one, at least the evicted version's tag.
//! - C14. A committing write view reads no page after its publication, so `publish` releases
//!   its snapshot (`releasing`) in the same critical section, before the new versions are
//!   pruned: the version the writer's snapshot alone read goes at once, instead of being
//!   kept, marked multi-version and swept by the release that followed (a second registry
//!   section, a shard sweep, two set updates: ~0.5k of a bdb_update commit's ~25k
//!   instructions, callgrind). The release then does what `release_snapshot` does (C11,
//!   C12).
//! - C15. `write_marks[mark_index(p)]` is at least the sequence number of every published
//!   commit that wrote page `p`: `publish` stores it under the registry mutex, before
//!   `committed_seq` moves. A snapshot `s` registers under that mutex after the publish of
//!   every commit `<= s`, so for `f <= s` a mark `<= f` proves that no commit in `(f, s]`
//!   wrote `p`: its image at `s` is its image at `f` (`written_after`). A larger mark proves
//!   nothing (another page of the slot, or a commit after `s`). Read without any lock, so
//!   a thread can tell that a page it read earlier is still current without the shard
//!   mutex (thread_memo.rs).

use super::lock;
use crate::error::{PageNo, Result, StorageError};
use crate::pages::PageRef;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, TryLockError};
use std::time::{Duration, Instant};

/// How many clean candidates one eviction looks at, beyond the number it must evict, before
/// giving up (C6): entries held by old snapshots are skipped, and the scan must not become
/// a walk of the whole cache.
const EVICT_SCAN_MAX: usize = 64;

/// Most shards (C7); a power of two, at most 64 (the bit masks `multi_shards`,
/// `full_shards`). 16 shards of the default 16,384-page cache leave two threads on one
/// shard for 1 read in 16.
const SHARDS_MAX: usize = 16;

/// How far the horizon moves between two sweeps while snapshots overlap (C12).
const SWEEP_HORIZON_STEP: u64 = 64;

/// Tries at the registry mutex before waiting on it (`Cache::registry`): a few to tens of
/// microseconds of spinning. The mutex's own spin gives up sooner than a publish or a
/// sweep holds it, and the futex sleep and wake that follow cost both threads more than
/// the wait. Measured (bdb_update --threads 2 --begin concurrent, sync=off, `perf stat`):
/// 11.5k context switches in a 3 s run, the wake in `release_snapshot` and the sleep in a
/// rebase's `register_snapshot` ~6% of the samples; with 2,000 tries 3.6k and 194k → 211k
/// tps; with 256 tries as many switches as without.
const REGISTRY_TRIES: usize = 2000;

/// Fewest pages per shard: a share much smaller than the dirty pages of one commit would
/// let one shard pass its share while the others are full of clean pages (C6), so small
/// caches (the tests' 16 to 100 pages) keep one shard.
const SHARD_PAGES_MIN: usize = 1024;

/// The smallest bound of C6 a cache takes, whatever it is asked for.
const PAGES_MAX_MIN: usize = 8;

/// Shard `i`'s share of a bound of `pages_max` over `n` shards: the shares sum to the
/// bound (C6).
fn share(pages_max: usize, n: usize, i: usize) -> usize {
    pages_max / n + usize::from(i < pages_max % n)
}

/// Most page buffers a shard keeps from evicted entries for the next reads from the file
/// (`Shard::spare`): one eviction per miss hands one back, so a few cover a steady state.
const SPARE_BUFFERS_MAX: usize = 4;

/// Slots of `Cache::write_marks` (C15): 32 KiB. A page shares its slot with one page in
/// `WRITE_MARKS`, whose writes then make it look written too (a refetch, never a wrong
/// image).
const WRITE_MARKS: usize = 4096;

/// The next cache's `Cache::id`: ids are never reused, so an image named by one belongs
/// to that cache only.
static NEXT_CACHE_ID: AtomicU64 = AtomicU64::new(1);

/// Fibonacci hashing's multiplier (2^64 / golden ratio).
const FIB: u64 = 0x9e37_79b9_7f4a_7c15;

/// Hashes page numbers by one multiplication (Fibonacci hashing): a cache lookup runs
/// under a shard mutex on every page read of every thread, and SipHash was ~15% of it.
/// Page numbers are not attacker-chosen keys.
#[derive(Default)]
pub(super) struct PageNoHasher(u64);

impl Hasher for PageNoHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(FIB);
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.0 = (self.0 ^ u64::from(n)).wrapping_mul(FIB);
    }
}

pub(super) type PageMap<V> = HashMap<u32, V, BuildHasherDefault<PageNoHasher>>;

#[derive(Debug)]
struct Entry {
    /// The newest version, (tag, image) (C1). Kept in the entry rather than at the end of
    /// `older`: a hit then reads the entry's bucket and the page, not also a vector's heap
    /// block — the lookup's samples were a third each on its three dependent loads.
    newest: (u64, PageRef),
    /// Older versions a snapshot may still read (C2), ascending by tag; empty for most.
    older: Vec<(u64, PageRef)>,
    dirty: bool,
    /// Its key in `Shard::lru` while clean (C3), or the key `mark_clean` will give it.
    tick: u64,
    /// Set by a hit, cleared when eviction passes the entry over (second chance, C13).
    referenced: bool,
}

impl Entry {
    fn new(tag: u64, img: PageRef, dirty: bool, tick: u64) -> Entry {
        Entry {
            newest: (tag, img),
            older: Vec::new(),
            dirty,
            tick,
            referenced: false,
        }
    }

    fn version_count(&self) -> usize {
        self.older.len() + 1
    }

    /// The image snapshot `seq` reads (C2).
    fn visible_to(&self, seq: u64) -> Option<&PageRef> {
        if self.newest.0 <= seq {
            return Some(&self.newest.1);
        }
        self.older
            .iter()
            .rev()
            .find(|(tag, _)| *tag <= seq)
            .map(|(_, img)| img)
    }

    /// Adds commit `seq`'s image as the newest (C1).
    fn push(&mut self, seq: u64, img: PageRef) {
        debug_assert!(seq > self.newest.0);
        let previous = std::mem::replace(&mut self.newest, (seq, img));
        self.older.push(previous);
    }

    /// Drops the older versions no snapshot can read (C2, C9), their buffers recycled when
    /// no one else holds them (buffers.rs U1). The caller keeps `Shard::multi` in step.
    fn prune(&mut self, reg: &Registry) {
        // Compacted in place (no allocation, no reference-count traffic): version `r + 1`
        // is still unmoved when `r` is judged, since kept versions only move down. The
        // newest is always kept.
        let n = self.older.len();
        let mut kept = 0;
        for r in 0..n {
            let hi = self.older.get(r + 1).map_or(self.newest.0, |v| v.0);
            if reg.reads_window(self.older[r].0, hi) {
                self.older.swap(kept, r);
                kept += 1;
            }
        }
        for (_, img) in self.older.drain(kept..) {
            super::buffers::recycle(img);
        }
    }
}

/// What `Cache::lookup_or_spare` found.
pub enum Lookup {
    /// The page is cached: the image the snapshot sees (C2).
    Hit(Result<PageRef>),
    /// It is not: a buffer from an evicted image to read it into, if the shard had one
    /// (its `Arc` unique).
    Miss(Option<PageRef>),
}

/// Live snapshots and the latest commit (C8), behind `Cache::registry`.
#[derive(Debug)]
struct Registry {
    committed_seq: u64,
    /// Page count of the latest commit.
    page_count: u32,
    /// Live snapshots: seq → (how many views hold it, their page count, when the first of
    /// them registered).
    snapshots: BTreeMap<u64, (usize, u32, Instant)>,
    /// The horizon at the last sweep of `release_snapshot` (C12).
    swept_horizon: u64,
}

impl Registry {
    /// Whether a snapshot that may read the cache, now or later, falls in `[lo, hi)` (C9).
    fn reads_window(&self, lo: u64, hi: u64) -> bool {
        (lo..hi).contains(&self.committed_seq) || self.snapshots.range(lo..hi).next().is_some()
    }

    /// The oldest live snapshot, or the latest commit with none (C10).
    fn horizon(&self) -> u64 {
        self.snapshots
            .keys()
            .next()
            .copied()
            .unwrap_or(self.committed_seq)
    }
}

/// One shard of the entries (C7), behind its own mutex.
#[derive(Debug)]
struct Shard {
    entries: PageMap<Entry>,
    /// Clean entries by the tick they were inserted, made clean, or last passed over by
    /// eviction at, oldest first (C3: dirty entries are not here; C13).
    lru: BTreeMap<u64, u32>,
    tick: u64,
    /// Entries holding more than one version (candidates for C2 pruning).
    multi: BTreeSet<u32>,
    /// This shard's share of `cache_pages_max` (C6).
    pages_max: usize,
    /// Buffers of evicted images no one else held, reused by the next read of a page from
    /// the file instead of a freshly zeroed allocation (`Cache::lookup_or_spare`).
    spare: Vec<PageRef>,
}

/// Unreachable while C2/C5/C9 hold; reported rather than guessed at.
fn no_version(pgno: PageNo, seq: u64) -> StorageError {
    StorageError::corrupt(
        pgno,
        format!("no cached version of the page is visible to snapshot {seq}"),
    )
}

impl Shard {
    fn next_tick(&mut self) -> u64 {
        self.tick += 1;
        self.tick
    }

    /// The image snapshot `seq` sees, if the page is cached (C2). A hit only sets the
    /// entry's reference bit (C13): no tick, no `lru` change. Inlined into the hit path of
    /// `lookup_or_spare` (it was, until `PageRef` became a wide pointer).
    #[inline]
    fn lookup(&mut self, pgno: u32, seq: u64) -> Option<Result<PageRef>> {
        let e = self.entries.get_mut(&pgno)?;
        e.referenced = true;
        Some(
            e.visible_to(seq)
                .cloned()
                .ok_or_else(|| no_version(PageNo(pgno), seq)),
        )
    }

    /// Drops the versions of `pgno` no snapshot can read (C2, C9); keeps `multi` in step.
    fn prune(&mut self, pgno: u32, reg: &Registry) {
        let Some(e) = self.entries.get_mut(&pgno) else {
            self.multi.remove(&pgno);
            return;
        };
        e.prune(reg);
        if e.older.is_empty() {
            self.multi.remove(&pgno);
        }
    }

    fn prune_all(&mut self, reg: &Registry) {
        let multi: Vec<u32> = self.multi.iter().copied().collect();
        for pgno in multi {
            self.prune(pgno, reg);
        }
    }

    /// Evicts clean, unshared entries down to the shard's share (C4, C6, C10), oldest in
    /// `lru` first, giving referenced ones a second chance (C13).
    fn evict(&mut self, horizon: u64) {
        if self.entries.len() <= self.pages_max {
            return;
        }
        let excess = self.entries.len() - self.pages_max;
        let mut victims = Vec::with_capacity(excess);
        // Evictable entries passed over for their reference bit, in `lru` order: evicted
        // after all if the scan finds too few others, so the second chance never leaves the
        // shard past its share with evictable entries (C6).
        let mut reprieved = Vec::new();
        // The scan covers the whole excess plus the allowance for skipped entries: after a
        // checkpoint makes a large commit's pages clean at once, a scan of a fixed 64
        // entries left the cache several times over its bound (tests/file_limits.rs).
        for (tick, pgno) in self.lru.iter().take(excess + EVICT_SCAN_MAX) {
            if victims.len() >= excess {
                break;
            }
            let Some(e) = self.entries.get(pgno) else {
                continue;
            };
            if e.older.is_empty() && e.newest.0 <= horizon {
                if e.referenced {
                    reprieved.push((*tick, *pgno));
                } else {
                    victims.push((*tick, *pgno));
                }
            }
        }
        let short = excess - victims.len();
        let kept = reprieved.split_off(short.min(reprieved.len()));
        victims.extend(reprieved);
        for (tick, pgno) in victims {
            self.lru.remove(&tick);
            self.multi.remove(&pgno);
            let Some(e) = self.entries.remove(&pgno) else {
                continue;
            };
            let mut img = e.newest.1;
            if self.spare.len() < SPARE_BUFFERS_MAX && std::sync::Arc::get_mut(&mut img).is_some() {
                self.spare.push(img);
            }
        }
        for (tick, pgno) in kept {
            let next = self.next_tick();
            self.lru.remove(&tick);
            self.lru.insert(next, pgno);
            if let Some(e) = self.entries.get_mut(&pgno) {
                e.referenced = false;
                e.tick = next;
            }
        }
    }

    /// Makes clean the dirty entries `is_written` accepts (C3); returns how many.
    fn mark_clean_where(&mut self, is_written: impl Fn(&Entry) -> bool) -> usize {
        let mut ticks = Vec::new();
        for (pgno, e) in self.entries.iter_mut() {
            if e.dirty && is_written(e) {
                e.dirty = false;
                ticks.push((e.tick, *pgno));
            }
        }
        let n = ticks.len();
        for (tick, pgno) in ticks {
            self.lru.insert(tick, pgno);
        }
        n
    }
}

/// A value on cache lines of its own (128 bytes: CPUs fetch lines in adjacent pairs).
#[derive(Debug, Default)]
#[repr(align(128))]
pub(super) struct OwnLines<T>(pub(super) T);

impl<T> std::ops::Deref for OwnLines<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// The fields every commit writes (`registry`, `committed`, `horizon`, `dirty_count`) are
/// each on lines of their own, away from those every page read loads (`shards`,
/// `write_marks`, `id`): sharing a line, each commit of one thread made the other
/// thread's next page read miss on it. (Measured: the load of `write_marks`' length was
/// 29% of `thread_memo::get`'s samples, bdb_update --threads 2 --begin concurrent, perf.)
#[derive(Debug)]
pub struct Cache {
    /// The entries, by `shard_index` (C7); a power of two of them, each on lines of its
    /// own (a shard is ~150 bytes: neighbours shared a line, so a read in one shard
    /// invalidated the next shard's mutex for the other thread).
    shards: Box<[OwnLines<Mutex<Shard>>]>,
    registry: OwnLines<Mutex<Registry>>,
    /// `Registry::committed_seq`, stored under the registry mutex by `publish`, for readers
    /// that need no snapshot (`committed_seq`: the commit path asks it twice per commit).
    committed: OwnLines<AtomicU64>,
    /// `Registry::horizon`, published for eviction without the registry (C10); raised
    /// under the registry mutex, never lowered.
    horizon: OwnLines<AtomicU64>,
    /// Dirty entries of all shards (C3), changed under the entry's shard mutex.
    dirty_count: OwnLines<AtomicUsize>,
    /// Bit i: shard i has multi-version entries. Bit i changes only under shard i's mutex,
    /// so its holder knows it; `release_snapshot` prunes only the shards marked.
    multi_shards: AtomicU64,
    /// Bit i: shard i is past its share with entries it could not evict (C6); swept again
    /// when the horizon rises.
    full_shards: AtomicU64,
    /// The bound of C6, in pages; `PRAGMA cache_size` moves it (`set_pages_max`).
    cache_pages_max: AtomicUsize,
    /// C15, by `mark_index`.
    write_marks: Box<[AtomicU64]>,
    /// This cache among all of the process's (`NEXT_CACHE_ID`).
    id: u64,
}

impl Cache {
    pub fn new(committed_seq: u64, page_count: u32, cache_pages_max: usize) -> Cache {
        let shards = (cache_pages_max / SHARD_PAGES_MIN).clamp(1, SHARDS_MAX);
        Cache::with_shards(committed_seq, page_count, cache_pages_max, shards)
    }

    /// A cache of `shards` shards (rounded down to a power of two, 1..=64).
    pub fn with_shards(
        committed_seq: u64,
        page_count: u32,
        cache_pages_max: usize,
        shards: usize,
    ) -> Cache {
        let cache_pages_max = cache_pages_max.max(PAGES_MAX_MIN);
        let n = 1usize << shards.clamp(1, 64).ilog2();
        let shards: Vec<OwnLines<Mutex<Shard>>> = (0..n)
            .map(|i| {
                OwnLines(Mutex::new(Shard {
                    entries: PageMap::default(),
                    lru: BTreeMap::new(),
                    tick: 0,
                    multi: BTreeSet::new(),
                    spare: Vec::new(),
                    pages_max: share(cache_pages_max, n, i),
                }))
            })
            .collect();
        Cache {
            shards: shards.into_boxed_slice(),
            registry: OwnLines(Mutex::new(Registry {
                committed_seq,
                page_count,
                snapshots: BTreeMap::new(),
                swept_horizon: committed_seq,
            })),
            committed: OwnLines(AtomicU64::new(committed_seq)),
            horizon: OwnLines(AtomicU64::new(committed_seq)),
            dirty_count: OwnLines(AtomicUsize::new(0)),
            multi_shards: AtomicU64::new(0),
            full_shards: AtomicU64::new(0),
            cache_pages_max: AtomicUsize::new(cache_pages_max),
            write_marks: (0..WRITE_MARKS).map(|_| AtomicU64::new(0)).collect(),
            id: NEXT_CACHE_ID.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// This cache among all of the process's, for memos kept outside it (thread_memo.rs).
    pub fn id(&self) -> u64 {
        self.id
    }

    fn mark_index(pgno: u32) -> usize {
        pgno as usize % WRITE_MARKS
    }

    /// Whether a commit after `seq` may have written `pgno` (C15). `false` is a proof that
    /// none did up to any snapshot registered now or earlier that is `>= seq`.
    pub fn written_after(&self, pgno: PageNo, seq: u64) -> bool {
        self.write_marks[Cache::mark_index(pgno.0)].load(Ordering::Acquire) > seq
    }

    /// The bound of C6, in pages.
    pub fn pages_max(&self) -> usize {
        self.cache_pages_max.load(Ordering::Acquire)
    }

    /// Moves the bound of C6 (`PRAGMA cache_size`). Each shard takes its new share under
    /// its mutex and, past it, evicts at once; what cannot be evicted (dirty entries, old
    /// versions a snapshot reads) stays until a checkpoint or a release frees it, as for
    /// any shard past its share. The shard count stays what the cache was made with.
    pub fn set_pages_max(&self, pages_max: usize) {
        let pages_max = pages_max.max(PAGES_MAX_MIN);
        self.cache_pages_max.store(pages_max, Ordering::Release);
        let horizon = self.horizon.load(Ordering::Acquire);
        for i in 0..self.shards.len() {
            let mut s = self.shard(i);
            s.pages_max = share(pages_max, self.shards.len(), i);
            s.evict(horizon);
            self.note(i, &s);
        }
    }

    /// The shard of `pgno`: bits 32.. of its Fibonacci hash. Not the low bits, which the
    /// shard's hash table indexes by, nor the top seven, its control bytes' tags: a shard
    /// then still spreads its own pages over all of its buckets and tags.
    fn shard_index(&self, pgno: u32) -> usize {
        ((u64::from(pgno).wrapping_mul(FIB) >> 32) as usize) & (self.shards.len() - 1)
    }

    fn shard(&self, i: usize) -> MutexGuard<'_, Shard> {
        lock(&self.shards[i])
    }

    /// Records shard `i`'s state in the shard bit masks; called holding its mutex. Loads
    /// first: the bits rarely change, and a read-modify-write on every page read would make
    /// the masks' cache line the shared hot spot the shards exist to avoid.
    fn note(&self, i: usize, s: &Shard) {
        let bit = 1u64 << i;
        for (mask, set) in [
            (&self.multi_shards, !s.multi.is_empty()),
            (&self.full_shards, s.entries.len() > s.pages_max),
        ] {
            if (mask.load(Ordering::Acquire) & bit != 0) != set {
                if set {
                    mask.fetch_or(bit, Ordering::AcqRel);
                } else {
                    mask.fetch_and(!bit, Ordering::AcqRel);
                }
            }
        }
    }

    /// How many shards (C7).
    #[cfg(test)]
    pub fn shard_count(&self) -> usize {
        self.shards.len()
    }

    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| lock(s).entries.len()).sum()
    }

    /// Page images held, every version of every entry (C2).
    pub fn version_count(&self) -> usize {
        self.shards
            .iter()
            .map(|s| {
                lock(s)
                    .entries
                    .values()
                    .map(Entry::version_count)
                    .sum::<usize>()
            })
            .sum()
    }

    pub fn dirty_count(&self) -> usize {
        self.dirty_count.load(Ordering::Acquire)
    }

    /// The latest commit's sequence number (C8).
    pub fn committed_seq(&self) -> u64 {
        self.committed.load(Ordering::Acquire)
    }

    /// The latest commit's page count.
    pub fn page_count(&self) -> u32 {
        lock(&self.registry).page_count
    }

    /// Registers a snapshot of the latest commit: (its seq, its page count) (C8).
    /// The registry mutex for a snapshot's registration or release or a publish, tried
    /// `REGISTRY_TRIES` times before waiting (C8).
    fn registry(&self) -> MutexGuard<'_, Registry> {
        for _ in 0..REGISTRY_TRIES {
            match self.registry.try_lock() {
                Ok(g) => return g,
                Err(TryLockError::Poisoned(p)) => return p.into_inner(),
                Err(TryLockError::WouldBlock) => std::hint::spin_loop(),
            }
        }
        lock(&self.registry)
    }

    pub fn register_snapshot(&self) -> (u64, u32) {
        let mut reg = self.registry();
        let (seq, page_count) = (reg.committed_seq, reg.page_count);
        let slot = reg
            .snapshots
            .entry(seq)
            .or_insert((0, page_count, Instant::now()));
        slot.0 += 1;
        // The horizon stays: the oldest live snapshot, or `committed_seq` = `seq` (C10).
        (seq, page_count)
    }

    pub fn release_snapshot(&self, seq: u64) {
        let mut reg = self.registry();
        if Cache::unregister(&mut reg, seq) {
            self.after_release(&mut reg, seq);
        }
    }

    /// Drops one holder of snapshot `seq`; true when it was the last.
    fn unregister(reg: &mut Registry, seq: u64) -> bool {
        let Some(slot) = reg.snapshots.get_mut(&seq) else {
            return false;
        };
        slot.0 -= 1;
        if slot.0 > 0 {
            return false;
        }
        reg.snapshots.remove(&seq);
        true
    }

    /// After the last holder of snapshot `seq` went: raises the horizon (C10) and sweeps
    /// the marked shards when C11 and C12 say so.
    fn after_release(&self, reg: &mut Registry, seq: u64) {
        let horizon = reg.horizon();
        self.horizon.fetch_max(horizon, Ordering::AcqRel);
        if horizon < seq {
            // C11: an older snapshot lives on, so the sweep is left to the publishes and to
            // the release that moves the horizon.
            return;
        }
        // Versions only become droppable when a window loses its last snapshot; pruning on
        // every such release keeps old versions from piling up behind a long reader (C2),
        // and entries a rising horizon frees are evicted (C6). Only the shards marked: in a
        // read-only workload neither mask has a bit, and releasing locks no shard.
        let full = self.full_shards.load(Ordering::Acquire);
        if !reg.snapshots.is_empty()
            && full == 0
            && horizon < reg.swept_horizon.saturating_add(SWEEP_HORIZON_STEP)
        {
            // C12: the next sweep, or the pages' own publishes, drop what this frees.
            return;
        }
        reg.swept_horizon = horizon;
        let sweep = self.multi_shards.load(Ordering::Acquire) | full;
        for i in (0..self.shards.len()).filter(|i| sweep & (1u64 << i) != 0) {
            let mut s = self.shard(i);
            s.prune_all(reg);
            s.evict(horizon);
            self.note(i, &s);
        }
    }

    #[cfg(test)]
    fn oldest_snapshot(&self) -> Option<u64> {
        lock(&self.registry).snapshots.keys().next().copied()
    }

    /// How long the oldest live snapshot's commit has had a registered snapshot (an upper
    /// bound on the oldest reader's age when several readers shared that commit).
    pub fn oldest_snapshot_age(&self) -> Option<Duration> {
        lock(&self.registry)
            .snapshots
            .values()
            .next()
            .map(|v| v.2.elapsed())
    }

    /// The largest page count any live snapshot sees (the checkpoint must not truncate the
    /// file below it while such a snapshot may still read those pages from the file).
    pub fn max_snapshot_page_count(&self) -> u32 {
        lock(&self.registry)
            .snapshots
            .values()
            .map(|v| v.1)
            .max()
            .unwrap_or(0)
    }

    /// The image snapshot `seq` sees, if the page is cached (C2).
    #[cfg(test)]
    pub fn lookup(&self, pgno: PageNo, seq: u64) -> Option<Result<PageRef>> {
        self.shard(self.shard_index(pgno.0)).lookup(pgno.0, seq)
    }

    /// The image snapshot `seq` sees if the page is cached (C2), else a buffer to read it
    /// into if its shard kept one from an eviction (stale contents: the reader overwrites
    /// every byte). Spares a read from the file its zero-filled allocation (callgrind: 4.4k
    /// instructions a 4 KiB page in `calloc`).
    pub fn lookup_or_spare(&self, pgno: PageNo, seq: u64) -> Lookup {
        let mut s = self.shard(self.shard_index(pgno.0));
        match s.lookup(pgno.0, seq) {
            Some(found) => Lookup::Hit(found),
            None => Lookup::Miss(s.spare.pop()),
        }
    }

    /// Inserts an image just read from the database file, unless the page got an entry
    /// meanwhile (then the entry wins: the file may already hold a newer image). Returns
    /// the image `seq` sees.
    pub fn insert_from_file(&self, pgno: PageNo, seq: u64, img: PageRef) -> Result<PageRef> {
        let i = self.shard_index(pgno.0);
        let mut s = self.shard(i);
        if let Some(found) = s.lookup(pgno.0, seq) {
            return found;
        }
        let tick = s.next_tick();
        s.entries
            .insert(pgno.0, Entry::new(0, img.clone(), false, tick));
        s.lru.insert(tick, pgno.0);
        if s.entries.len() > s.pages_max {
            s.evict(self.horizon.load(Ordering::Acquire));
            self.note(i, &s);
        }
        Ok(img)
    }

    /// Whether `pgno` has an entry.
    pub fn contains(&self, pgno: PageNo) -> bool {
        self.shard(self.shard_index(pgno.0))
            .entries
            .contains_key(&pgno.0)
    }

    /// Publishes commit `seq`: each page's new image, with the writer's base image for
    /// pages that have no entry yet (C5). `page_count` is the count after the commit.
    /// `releasing`: the committing view's snapshot, released here (C14). All under the
    /// registry mutex (C8).
    pub fn publish(
        &self,
        seq: u64,
        page_count: u32,
        pages: Vec<(PageNo, Option<PageRef>, PageRef)>,
        releasing: Option<u64>,
    ) {
        let mut reg = self.registry();
        debug_assert!(seq > reg.committed_seq);
        // C8: no snapshot registers until every version below is pushed, so the versions
        // may be judged (C9) with `seq` already the latest commit.
        reg.committed_seq = seq;
        reg.page_count = page_count;
        let released = releasing.filter(|&s| Cache::unregister(&mut reg, s));
        for (pgno, base, img) in pages {
            // C15: before `committed` and the registry mutex's release.
            self.write_marks[Cache::mark_index(pgno.0)].store(seq, Ordering::Release);
            let i = self.shard_index(pgno.0);
            let mut guard = self.shard(i);
            let s = &mut *guard;
            let tick = s.next_tick();
            let (e, was_multi) = match s.entries.entry(pgno.0) {
                std::collections::hash_map::Entry::Occupied(o) => {
                    // Dropped before the prune below, which recycles the base's buffer
                    // only if the cache's reference is the last.
                    drop(base);
                    let e = o.into_mut();
                    let was_multi = !e.older.is_empty();
                    e.push(seq, img);
                    (e, was_multi)
                }
                std::collections::hash_map::Entry::Vacant(v) => match base {
                    Some(base) => {
                        let e = v.insert(Entry::new(0, base, false, tick));
                        e.push(seq, img);
                        (e, false)
                    }
                    None => (v.insert(Entry::new(seq, img, false, tick)), false),
                },
            };
            if !e.dirty {
                s.lru.remove(&e.tick);
                e.dirty = true;
                self.dirty_count.fetch_add(1, Ordering::AcqRel);
            }
            e.tick = tick;
            // Only the pages just published can have a version newly invisible: every
            // other entry's windows, and the set of live snapshots, are as they were when
            // it was last pruned (every change of that set that can close a window prunes
            // every marked shard, `after_release`, called below for `releasing`). Pruning
            // all multi-version entries here was a third of a commit's CPU under the writer
            // lock (callgrind, bdb_update).
            e.prune(&reg);
            match (was_multi, !e.older.is_empty()) {
                (false, true) => {
                    s.multi.insert(pgno.0);
                }
                (true, false) => {
                    s.multi.remove(&pgno.0);
                }
                _ => {}
            }
            self.note(i, s);
        }
        self.committed.store(seq, Ordering::Release);
        match released {
            Some(s) => self.after_release(&mut reg, s),
            None => {
                self.horizon.fetch_max(reg.horizon(), Ordering::AcqRel);
            }
        }
    }

    /// Before commit `seq` publishes pages it wrote straight into the database file (pager
    /// D6), numbered in `pages`, which no snapshot can read yet (past every page count):
    /// drops their entries, stale images of an older file, and marks them written by
    /// `seq` (C15; a mark set before the publication only proves less).
    pub fn forget_unseen(&self, pages: std::ops::RangeInclusive<u32>, seq: u64) {
        let (lo, hi) = (*pages.start(), *pages.end());
        if (hi - lo) as usize >= WRITE_MARKS {
            for m in self.write_marks.iter() {
                m.fetch_max(seq, Ordering::AcqRel);
            }
        } else {
            for pgno in pages {
                self.write_marks[Cache::mark_index(pgno)].fetch_max(seq, Ordering::AcqRel);
            }
        }
        for i in 0..self.shards.len() {
            let mut guard = self.shard(i);
            let s = &mut *guard;
            let gone: Vec<u32> = s
                .entries
                .keys()
                .copied()
                .filter(|p| (lo..=hi).contains(p))
                .collect();
            for pgno in gone {
                if let Some(e) = s.entries.remove(&pgno) {
                    if e.dirty {
                        self.dirty_count.fetch_sub(1, Ordering::AcqRel);
                    } else {
                        s.lru.remove(&e.tick);
                    }
                }
                s.multi.remove(&pgno);
            }
            self.note(i, s);
        }
    }

    /// The newest image of every dirty page numbered `<= limit`, for the checkpoint (C3).
    /// The limit covers the pages live snapshots can see (a truncated page an old snapshot
    /// still reads must reach the file before its entry may be evicted, C4).
    pub fn dirty_pages(&self, limit: u32) -> Vec<(PageNo, PageRef)> {
        let mut v: Vec<(PageNo, PageRef)> = Vec::new();
        for shard in self.shards.iter() {
            let s = lock(shard);
            v.extend(
                s.entries
                    .iter()
                    .filter(|(pgno, e)| e.dirty && **pgno <= limit)
                    .map(|(pgno, e)| (PageNo(*pgno), e.newest.1.clone())),
            );
        }
        v.sort_by_key(|(p, _)| *p);
        v
    }

    /// After a checkpoint wrote every dirty page of commits `<= seq`: they become clean and
    /// evictable (C3). The caller holds the writer lock, so nothing newer exists.
    pub fn mark_clean(&self) {
        self.mark_clean_where(|_| true);
    }

    /// After a background round wrote the image at commit `seq` of every page dirty at
    /// `seq` (checkpoint B5): entries whose newest version is at most `seq` become clean and
    /// evictable; pages committed again since stay dirty for the next round (C3).
    pub fn mark_clean_upto(&self, seq: u64) {
        self.mark_clean_where(|e| e.newest.0 <= seq);
    }

    fn mark_clean_where(&self, is_written: impl Fn(&Entry) -> bool) {
        for i in 0..self.shards.len() {
            let mut s = self.shard(i);
            let cleaned = s.mark_clean_where(&is_written);
            self.dirty_count.fetch_sub(cleaned, Ordering::AcqRel);
            s.evict(self.horizon.load(Ordering::Acquire));
            self.note(i, &s);
        }
    }

    /// Inserts a recovered page image (redo from the log) as dirty: it must reach the
    /// database file at the next checkpoint.
    pub fn insert_recovered(&self, pgno: PageNo, img: PageRef) {
        let i = self.shard_index(pgno.0);
        let mut s = self.shard(i);
        let tick = s.next_tick();
        if let Some(old) = s.entries.insert(pgno.0, Entry::new(0, img, true, tick)) {
            if old.dirty {
                return;
            }
            s.lru.remove(&old.tick);
        }
        self.dirty_count.fetch_add(1, Ordering::AcqRel);
        self.note(i, &s);
    }

    /// Versions held for `pgno` (tests).
    #[cfg(test)]
    fn versions_of(&self, pgno: u32) -> usize {
        self.shard(self.shard_index(pgno))
            .entries
            .get(&pgno)
            .map_or(0, Entry::version_count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};
    use std::sync::atomic::AtomicBool;
    use std::sync::RwLock;

    fn img(b: u8) -> PageRef {
        PageRef::from(vec![b; 16])
    }

    #[test]
    fn snapshot_keeps_old_version_until_released() {
        let c = Cache::new(0, 3, 8);
        c.insert_from_file(PageNo(2), 0, img(1)).unwrap();
        let (s0, _) = c.register_snapshot();
        c.publish(1, 3, vec![(PageNo(2), Some(img(1)), img(2))], None);
        assert_eq!(*c.lookup(PageNo(2), s0).unwrap().unwrap(), vec![1; 16]);
        assert_eq!(*c.lookup(PageNo(2), 1).unwrap().unwrap(), vec![2; 16]);
        c.release_snapshot(s0);
        assert_eq!(c.versions_of(2), 1);
    }

    #[test]
    fn publish_prunes_its_pages_and_release_prunes_the_rest() {
        // C2 with the pruning split between publish (its own pages) and release (C11, C12).
        let c = Cache::new(0, 4, 8);
        for p in 1..=3 {
            c.insert_from_file(PageNo(p), 0, img(p as u8)).unwrap();
        }
        let (s0, _) = c.register_snapshot();
        c.publish(
            1,
            4,
            vec![(PageNo(1), None, img(11)), (PageNo(2), None, img(12))],
            None,
        );
        let (s1, _) = c.register_snapshot();
        c.publish(
            2,
            4,
            vec![(PageNo(2), None, img(22)), (PageNo(3), None, img(23))],
            None,
        );
        // s0 reads the tag-0 images of 1, 2, 3; s1 reads 1@1, 2@1 and 3's tag-0 image.
        assert_eq!(c.version_count(), 2 + 3 + 2);
        c.release_snapshot(s0);
        // C12: s1 lives and the horizon moved less than a step: nothing swept yet.
        assert_eq!(c.versions_of(1), 2);
        assert_eq!(*c.lookup(PageNo(2), s1).unwrap().unwrap(), vec![12; 16]);
        // The horizon moves a step while a newer snapshot lives: the oldest's release
        // sweeps every entry.
        for seq in 3..3 + SWEEP_HORIZON_STEP {
            c.publish(seq, 4, vec![(PageNo(4), None, img(4))], None);
        }
        let (s2, _) = c.register_snapshot();
        c.release_snapshot(s1);
        assert_eq!(c.versions_of(1), 1);
        assert_eq!(c.versions_of(2), 1);
        assert_eq!(c.versions_of(3), 1);
        assert_eq!(c.versions_of(4), 1);
        c.release_snapshot(s2);
        // With no snapshot left, a release always sweeps.
        let (s3, _) = c.register_snapshot();
        let next = 3 + SWEEP_HORIZON_STEP;
        c.publish(next, 4, vec![(PageNo(1), None, img(31))], None);
        assert_eq!(c.versions_of(1), 2, "s3 reads 1@1");
        c.release_snapshot(s3);
        assert_eq!(c.version_count(), 4);
        assert_eq!(*c.lookup(PageNo(1), next).unwrap().unwrap(), vec![31; 16]);
    }

    /// Whether `pgno` is in its shard's multi-version set, and the shard's `multi_shards` bit.
    fn marked_multi(c: &Cache, pgno: u32) -> (bool, bool) {
        let i = c.shard_index(pgno);
        let in_set = c.shard(i).multi.contains(&pgno);
        (
            in_set,
            c.multi_shards.load(Ordering::Acquire) & (1 << i) != 0,
        )
    }

    #[test]
    fn a_publish_releases_the_committing_snapshot_before_it_prunes() {
        // C14: the writer's snapshot, released by its own publish, keeps no version: the
        // base goes at once, unmarked, and the snapshot is no longer live.
        let c = Cache::new(0, 4, 8);
        let base = img(1);
        c.insert_from_file(PageNo(1), 0, base.clone()).unwrap();
        let (w, _) = c.register_snapshot();
        c.publish(1, 4, vec![(PageNo(1), Some(base), img(2))], Some(w));
        assert_eq!(c.versions_of(1), 1);
        assert_eq!(marked_multi(&c, 1), (false, false));
        assert_eq!(c.oldest_snapshot(), None);
        assert_eq!(
            c.horizon.load(Ordering::Acquire),
            1,
            "C10: no snapshot, the latest"
        );
        // A reader on the same snapshot keeps the base for itself (one holder of two goes),
        // and its release sweeps it.
        let (r, _) = c.register_snapshot();
        let (w, _) = c.register_snapshot();
        assert_eq!(r, w);
        c.publish(2, 4, vec![(PageNo(1), None, img(3))], Some(w));
        assert_eq!(c.versions_of(1), 2);
        assert_eq!(*c.lookup(PageNo(1), r).unwrap().unwrap(), vec![2; 16]);
        assert_eq!(marked_multi(&c, 1), (true, true));
        assert_eq!(c.oldest_snapshot(), Some(r));
        c.release_snapshot(r);
        assert_eq!(c.versions_of(1), 1);
        assert_eq!(marked_multi(&c, 1), (false, false));
        // With an older reader live, releasing the writer's snapshot afterwards would
        // prune nothing (C11): the version only the writer read must go in the publish.
        c.insert_from_file(PageNo(3), 2, img(30)).unwrap();
        let (r, _) = c.register_snapshot();
        c.publish(3, 4, vec![(PageNo(3), None, img(31))], None);
        let (w, _) = c.register_snapshot();
        c.publish(4, 4, vec![(PageNo(3), None, img(32))], Some(w));
        assert_eq!(
            c.versions_of(3),
            2,
            "r's tag-0 image and 3@4; 3@3 only w read"
        );
        assert_eq!(*c.lookup(PageNo(3), r).unwrap().unwrap(), vec![30; 16]);
        c.release_snapshot(r);
        assert_eq!(c.versions_of(3), 1);
        // A page holding a version for an older reader, which went without a sweep (C12:
        // the writer's snapshot lives), loses that version and its mark with the
        // writer's publish.
        c.insert_from_file(PageNo(2), 4, img(20)).unwrap();
        let (old, _) = c.register_snapshot();
        c.publish(5, 4, vec![(PageNo(2), None, img(4))], None);
        let (w, _) = c.register_snapshot();
        c.release_snapshot(old);
        assert_eq!(c.versions_of(2), 2, "C12: not swept yet");
        assert_eq!(marked_multi(&c, 2), (true, true));
        c.publish(6, 4, vec![(PageNo(2), None, img(5))], Some(w));
        assert_eq!(c.versions_of(2), 1);
        assert_eq!(marked_multi(&c, 2), (false, false));
        assert_eq!(*c.lookup(PageNo(2), 6).unwrap().unwrap(), vec![5; 16]);
    }

    #[test]
    fn releasing_a_newer_snapshot_leaves_the_sweep_to_the_oldest() {
        // C11: with s0 held, releasing s1 sweeps nothing; the version only s1 read goes
        // when its page is published again, or when s0 goes.
        let c = Cache::new(0, 4, 8);
        for p in 1..=3 {
            c.insert_from_file(PageNo(p), 0, img(p as u8)).unwrap();
        }
        let (s0, _) = c.register_snapshot();
        c.publish(
            1,
            4,
            vec![(PageNo(2), None, img(12)), (PageNo(3), None, img(13))],
            None,
        );
        let (s1, _) = c.register_snapshot();
        c.publish(
            2,
            4,
            vec![(PageNo(2), None, img(22)), (PageNo(3), None, img(23))],
            None,
        );
        assert_eq!(c.versions_of(2), 3);
        c.release_snapshot(s1);
        assert_eq!(c.versions_of(2), 3, "not swept: s0 is older");
        assert_eq!(*c.lookup(PageNo(2), s0).unwrap().unwrap(), vec![2; 16]);
        c.publish(3, 4, vec![(PageNo(2), None, img(32))], None);
        assert_eq!(c.versions_of(2), 2, "its publish pruned 2@1: s0 reads 2@0");
        assert_eq!(c.versions_of(3), 3);
        c.release_snapshot(s0);
        assert_eq!(c.versions_of(2), 1);
        assert_eq!(c.versions_of(3), 1, "the oldest's release swept page 3");
        assert_eq!(*c.lookup(PageNo(3), 3).unwrap().unwrap(), vec![23; 16]);
    }

    #[test]
    fn pages_in_use_survive_eviction_under_second_chance() {
        // C13: a page looked up between every insert has its reference bit set whenever
        // eviction reaches it, so the pages read once are evicted before it.
        let c = Cache::new(0, 1000, 16);
        for p in 1..=16 {
            c.insert_from_file(PageNo(p), 0, img(p as u8)).unwrap();
        }
        for p in 17..=200 {
            assert!(
                c.lookup(PageNo(1), 0).is_some(),
                "page 1 evicted before page {p}"
            );
            c.insert_from_file(PageNo(p), 0, img(p as u8)).unwrap();
            assert!(c.len() <= 16);
        }
        assert!(c.contains(PageNo(1)));
        assert!(!c.contains(PageNo(2)));
    }

    #[test]
    fn second_chance_evicts_unreferenced_pages_first_and_keeps_the_bound() {
        // C13: pages hit since they entered outlive older pages read once; with every
        // page referenced, eviction still evicts (C6).
        let c = Cache::new(0, 1000, 16);
        for p in 1..=16 {
            c.insert_from_file(PageNo(p), 0, img(p as u8)).unwrap();
        }
        for p in 1..=8 {
            assert!(c.lookup(PageNo(p), 0).is_some());
        }
        for p in 17..=24 {
            c.insert_from_file(PageNo(p), 0, img(p as u8)).unwrap();
        }
        assert!(
            (1..=8).all(|p| c.contains(PageNo(p))),
            "referenced pages kept"
        );
        assert!(
            (9..=16).all(|p| !c.contains(PageNo(p))),
            "pages read once evicted"
        );
        for p in (1..=8).chain(17..=24) {
            assert!(c.lookup(PageNo(p), 0).is_some());
        }
        for p in 100..=140 {
            c.insert_from_file(PageNo(p), 0, img(1)).unwrap();
            assert_eq!(c.len(), 16, "C6 with every page referenced");
        }
    }

    #[test]
    fn evicted_buffers_are_reused_only_when_no_one_holds_them() {
        let c = Cache::new(0, 1000, 8);
        let held = img(1);
        c.insert_from_file(PageNo(1), 0, held.clone()).unwrap();
        for p in 2..=8 {
            c.insert_from_file(PageNo(p), 0, img(p as u8)).unwrap();
        }
        // Page 1 goes first, but a reader still holds its image: not a spare.
        c.insert_from_file(PageNo(9), 0, img(9)).unwrap();
        assert!(!c.contains(PageNo(1)));
        assert!(matches!(
            c.lookup_or_spare(PageNo(1), 0),
            Lookup::Miss(None)
        ));
        // Page 2's image was the cache's alone: its buffer comes back for the next miss.
        c.insert_from_file(PageNo(10), 0, img(10)).unwrap();
        match c.lookup_or_spare(PageNo(2), 0) {
            Lookup::Miss(Some(buf)) => assert_eq!(buf[..], [2; 16]),
            _ => panic!("expected page 2's buffer as a spare"),
        }
        assert!(matches!(
            c.lookup_or_spare(PageNo(3), 0),
            Lookup::Hit(Ok(_))
        ));
        assert_eq!(*held, vec![1; 16]);
    }

    #[test]
    fn eviction_spares_dirty_and_snapshot_pages() {
        let c = Cache::new(0, 100, 8);
        for p in 1..=8 {
            c.insert_from_file(PageNo(p), 0, img(p as u8)).unwrap();
        }
        let (s0, _) = c.register_snapshot();
        c.publish(1, 100, vec![(PageNo(1), None, img(9))], None);
        c.mark_clean();
        for p in 9..=20 {
            c.insert_from_file(PageNo(p), 1, img(p as u8)).unwrap();
        }
        // Page 1's only version is newer than snapshot 0: it must stay (C4).
        assert!(c.contains(PageNo(1)));
        assert!(c.len() <= 9);
        c.release_snapshot(s0);
        c.publish(2, 100, vec![(PageNo(30), None, img(3))], None);
        assert_eq!(c.dirty_count(), 1);
        for p in 40..=60 {
            c.insert_from_file(PageNo(p), 2, img(1)).unwrap();
        }
        assert!(c.contains(PageNo(30)), "dirty pages are pinned (C3)");
        assert!(c.len() <= 8);
    }

    #[test]
    fn default_cache_is_sharded_and_spreads_pages() {
        let c = Cache::new(0, 0, 16384);
        assert_eq!(c.shard_count(), SHARDS_MAX);
        assert_eq!(
            Cache::new(0, 0, 64).shard_count(),
            1,
            "small caches keep one shard"
        );
        let shares: usize = c.shards.iter().map(|s| lock(s).pages_max).sum();
        assert_eq!(shares, 16384, "C6: the shares sum to the bound");
        // Consecutive page numbers (a table's leaves) land on every shard evenly.
        let mut per = vec![0usize; c.shard_count()];
        for p in 1..=16000u32 {
            per[c.shard_index(p)] += 1;
        }
        assert!(per.iter().all(|&n| (900..=1100).contains(&n)), "{per:?}");
    }

    #[test]
    fn shards_keep_the_bound() {
        let c = Cache::with_shards(0, 1000, 64, 4);
        for p in 1..=500 {
            c.insert_from_file(PageNo(p), 0, img(1)).unwrap();
            assert!(c.len() <= 64, "C6 with shards");
        }
        assert!(c.len() >= 60, "each shard fills its share: {}", c.len());
    }

    #[test]
    fn pruning_with_a_version_above_the_latest_commit_keeps_the_latest_committed_image() {
        // C9: with a version pushed above `committed_seq` (which `publish` leaves no one
        // to see, C8), a release that prunes must keep the image of `committed_seq`: a
        // snapshot registering now reads it, though no live snapshot is in its window.
        let c = Cache::with_shards(0, 1000, 64, 4);
        c.insert_from_file(PageNo(7), 0, img(1)).unwrap();
        let (other, _) = c.register_snapshot();
        {
            // A version of commit 1 pushed, `committed_seq` still 0.
            let i = c.shard_index(7);
            let mut guard = c.shard(i);
            let s = &mut *guard;
            let e = s.entries.get_mut(&7).unwrap();
            e.push(1, img(2));
            e.dirty = true;
            s.lru.remove(&e.tick);
            s.multi.insert(7);
            c.dirty_count.fetch_add(1, Ordering::AcqRel);
            c.note(i, s);
        }
        c.release_snapshot(other);
        let (s, _) = c.register_snapshot();
        assert_eq!(s, 0);
        assert_eq!(*c.lookup(PageNo(7), s).unwrap().unwrap(), vec![1; 16]);
        c.release_snapshot(s);
        assert_eq!(c.versions_of(7), 2);
    }

    /// An image naming its page and the commit that wrote it (0: the file as created).
    fn stamp(pgno: u32, seq: u64) -> PageRef {
        let mut v = pgno.to_be_bytes().to_vec();
        v.extend_from_slice(&seq.to_be_bytes());
        PageRef::from(v)
    }

    fn stamp_of(img: &[u8]) -> (u32, u64) {
        let mut p = [0u8; 4];
        let mut s = [0u8; 8];
        p.copy_from_slice(&img[..4]);
        s.copy_from_slice(&img[4..12]);
        (u32::from_be_bytes(p), u64::from_be_bytes(s))
    }

    /// C1–C10 and C14 under threads, checked against a model: four readers register
    /// snapshots (some held for thousands of reads), look pages up and insert misses read
    /// from the "file" (evicting in their shard); one writer publishes commits as the pager
    /// does (base image first, C5, its snapshot mostly released by the publish, C14) and
    /// captures each round's dirty pages between publishes (the log mutex, B5); a
    /// checkpointer writes them into the file and marks them clean while commits go on. Every image a reader gets must be the one the model's commit history
    /// gives for its snapshot. Seeded: `PARLITE_SEED=n`.
    #[test]
    fn sharded_cache_under_concurrent_reads_commits_and_checkpoints() {
        const PAGES: u32 = 300;
        const COMMITS: u64 = 4000;
        const CACHE: usize = 64;
        let seed: u64 = std::env::var("PARLITE_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(7);
        println!("PARLITE_SEED={seed}");
        let cache = Cache::with_shards(0, PAGES, CACHE, 4);
        let file: Mutex<HashMap<u32, PageRef>> =
            Mutex::new((1..=PAGES).map(|p| (p, stamp(p, 0))).collect());
        // pgno → the commits that wrote it, ascending.
        let history: RwLock<HashMap<u32, Vec<u64>>> = RwLock::new(HashMap::new());
        let expected = |pgno: u32, s: u64| -> u64 {
            let h = history.read().unwrap();
            h.get(&pgno)
                .and_then(|v| v.iter().rev().find(|&&c| c <= s).copied())
                .unwrap_or(0)
        };
        let done = AtomicBool::new(false);
        let (cache, file, expected, done) = (&cache, &file, &expected, &done);
        let (misses, reads) = std::thread::scope(|sc| {
            let readers: Vec<_> = (0..4u64)
                .map(|r| {
                    sc.spawn(move || {
                        let mut rng = StdRng::seed_from_u64(seed ^ (r + 1));
                        let (mut reads, mut misses) = (0u64, 0u64);
                        while reads == 0 || !done.load(Ordering::Acquire) {
                            let (s, _) = cache.register_snapshot();
                            let n = if rng.gen_range(0..16) == 0 { 3000 } else { 40 };
                            for _ in 0..n {
                                let p = rng.gen_range(1..=PAGES);
                                let got = match cache.lookup(PageNo(p), s) {
                                    Some(found) => found.unwrap(),
                                    None => {
                                        misses += 1;
                                        let bytes = lock(file)[&p].clone();
                                        cache.insert_from_file(PageNo(p), s, bytes).unwrap()
                                    }
                                };
                                assert_eq!(stamp_of(&got), (p, expected(p, s)), "snapshot {s}");
                                reads += 1;
                            }
                            cache.release_snapshot(s);
                        }
                        (misses, reads)
                    })
                })
                .collect();
            let (tx, rx) = std::sync::mpsc::sync_channel::<(u64, Vec<(PageNo, PageRef)>)>(1);
            let checkpointer = sc.spawn(move || {
                for (s, pages) in rx {
                    for (p, img) in pages {
                        lock(file).insert(p.0, img);
                        std::thread::yield_now();
                    }
                    cache.mark_clean_upto(s);
                }
            });
            let mut rng = StdRng::seed_from_u64(seed);
            for seq in 1..=COMMITS {
                let mut pages: Vec<u32> = (0..rng.gen_range(1..=4))
                    .map(|_| rng.gen_range(1..=PAGES))
                    .collect();
                pages.sort_unstable();
                pages.dedup();
                let mut publish = Vec::new();
                {
                    let mut h = history.write().unwrap();
                    for &p in &pages {
                        let writes = h.entry(p).or_default();
                        let base = stamp(p, writes.last().copied().unwrap_or(0));
                        writes.push(seq);
                        publish.push((PageNo(p), Some(base), stamp(p, seq)));
                    }
                }
                // As the pager does (C14), most commits release the writer's snapshot in
                // their publish.
                let (w, _) = cache.register_snapshot();
                assert_eq!(w, seq - 1);
                match rng.gen_range(0..4) {
                    0 => {
                        cache.publish(seq, PAGES, publish, None);
                        cache.release_snapshot(w);
                    }
                    _ => cache.publish(seq, PAGES, publish, Some(w)),
                }
                if seq % 20 == 0 {
                    tx.send((seq, cache.dirty_pages(PAGES))).unwrap();
                }
            }
            drop(tx);
            checkpointer.join().unwrap();
            done.store(true, Ordering::Release);
            readers
                .into_iter()
                .map(|h| h.join().unwrap())
                .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
        });
        println!("{reads} reads, {misses} misses");
        assert!(misses > 1000, "evictions not exercised: {misses} misses");
        // No snapshot left: only newest images remain (C2), nothing is dirty (every commit
        // was in a round), and the cache is back within its bound (C6).
        assert!(cache.oldest_snapshot().is_none());
        assert_eq!(cache.version_count(), cache.len());
        assert_eq!(cache.dirty_count(), 0);
        let dirty = cache
            .shards
            .iter()
            .map(|s| lock(s).entries.values().filter(|e| e.dirty).count())
            .sum::<usize>();
        assert_eq!(dirty, 0);
        cache.mark_clean();
        assert!(cache.len() <= CACHE, "{} entries", cache.len());
        for p in 1..=PAGES {
            let img = match cache.lookup(PageNo(p), COMMITS) {
                Some(found) => found.unwrap(),
                None => lock(file)[&p].clone(),
            };
            assert_eq!(stamp_of(&img), (p, expected(p, COMMITS)));
        }
    }
}
