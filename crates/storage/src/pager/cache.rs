//! The page cache: committed page versions tagged with commit sequence numbers, the live
//! snapshots that may read them, and the eviction rule that keeps memory bounded.
//!
//! Invariants (cited by `pager` and its tests):
//! - C1. An entry's versions are sorted by sequence number; the newest is the latest
//!   committed image of the page. Tag 0 means "visible to every snapshot" (the image was
//!   read from the database file, or was the latest committed image when a newer version
//!   was published).
//! - C2. A snapshot `s` reads, from an entry, the newest version with tag `<= s`. An older
//!   version is dropped once no live snapshot falls in its visibility window
//!   `[tag, next version's tag)`.
//! - C3. An entry is *dirty* while its newest version is not yet in the database file
//!   (committed after the last checkpoint). Dirty entries are never evicted: a checkpoint
//!   writes them and makes them clean.
//! - C4. A page absent from the cache is read from the database file. That is correct for
//!   every live snapshot because a clean entry is evicted only when it holds one version
//!   whose tag is `<=` the oldest live snapshot (so the file's image is what every live and
//!   future snapshot sees).
//! - C5. When a commit publishes a new version of a page that has no entry yet, the
//!   previous image (the writer's base) is inserted first with tag 0, so snapshots older
//!   than the commit keep seeing it after the checkpoint overwrites the file (C2).
//! - C6. The cache holds at most `cache_pages_max` entries except while entries cannot be
//!   evicted (dirty, or needed by an old snapshot); the pager asks for a background
//!   checkpoint when dirty entries pass a quarter of the bound and makes committers wait for
//!   it past half (checkpoint.rs backpressure), so the excess is bounded by half the bound
//!   plus one transaction's pages.

use crate::error::{PageNo, Result, StorageError};
use crate::pages::PageRef;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::time::{Duration, Instant};

/// How many clean candidates one eviction looks at, beyond the number it must evict, before
/// giving up (C6): entries held by old snapshots are skipped, and the scan must not become
/// a walk of the whole cache.
const EVICT_SCAN_MAX: usize = 64;

/// Hashes page numbers by one multiplication (Fibonacci hashing): a cache lookup runs
/// under the cache mutex on every page read of every thread, and SipHash was ~15% of it.
/// Page numbers are not attacker-chosen keys.
#[derive(Default)]
struct PageNoHasher(u64);

impl Hasher for PageNoHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.0 = (self.0 ^ u64::from(n)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

type PageMap<V> = HashMap<u32, V, BuildHasherDefault<PageNoHasher>>;

#[derive(Debug)]
pub struct Entry {
    /// (tag, image), ascending by tag (C1).
    pub versions: Vec<(u64, PageRef)>,
    pub dirty: bool,
    tick: u64,
}

#[derive(Debug)]
pub struct Cache {
    pub committed_seq: u64,
    /// Page count of the latest commit.
    pub page_count: u32,
    entries: PageMap<Entry>,
    /// Clean entries by last use, oldest first (C3: dirty entries are not here).
    lru: BTreeMap<u64, u32>,
    tick: u64,
    /// Live snapshots: seq → (how many views hold it, their page count, when the first of
    /// them registered).
    snapshots: BTreeMap<u64, (usize, u32, Instant)>,
    /// Entries holding more than one version (candidates for C2 pruning).
    multi: BTreeSet<u32>,
    dirty_count: usize,
    pub cache_pages_max: usize,
}

/// Unreachable while C2/C5 hold; reported rather than guessed at.
fn no_version(pgno: PageNo, seq: u64) -> StorageError {
    StorageError::corrupt(
        pgno,
        format!("no cached version of the page is visible to snapshot {seq}"),
    )
}

impl Cache {
    pub fn new(committed_seq: u64, page_count: u32, cache_pages_max: usize) -> Cache {
        Cache {
            committed_seq,
            page_count,
            entries: PageMap::default(),
            lru: BTreeMap::new(),
            tick: 0,
            snapshots: BTreeMap::new(),
            multi: BTreeSet::new(),
            dirty_count: 0,
            cache_pages_max: cache_pages_max.max(8),
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Page images held, every version of every entry (C2).
    pub fn version_count(&self) -> usize {
        self.entries.values().map(|e| e.versions.len()).sum()
    }

    pub fn dirty_count(&self) -> usize {
        self.dirty_count
    }

    pub fn register_snapshot(&mut self) -> (u64, u32) {
        let seq = self.committed_seq;
        let slot = self
            .snapshots
            .entry(seq)
            .or_insert((0, self.page_count, Instant::now()));
        slot.0 += 1;
        (seq, self.page_count)
    }

    pub fn release_snapshot(&mut self, seq: u64) {
        let oldest_before = self.oldest_snapshot();
        if let Some(slot) = self.snapshots.get_mut(&seq) {
            slot.0 -= 1;
            if slot.0 == 0 {
                self.snapshots.remove(&seq);
            }
        }
        // Versions only become droppable when a window loses its last snapshot; pruning on
        // every release keeps old versions from piling up behind a long reader (C2).
        if oldest_before != self.oldest_snapshot() || !self.snapshots.contains_key(&seq) {
            let multi: Vec<u32> = self.multi.iter().copied().collect();
            for pgno in multi {
                self.prune(pgno);
            }
            self.evict();
        }
    }

    pub fn oldest_snapshot(&self) -> Option<u64> {
        self.snapshots.keys().next().copied()
    }

    /// How long the oldest live snapshot's commit has had a registered snapshot (an upper
    /// bound on the oldest reader's age when several readers shared that commit).
    pub fn oldest_snapshot_age(&self) -> Option<Duration> {
        self.snapshots.values().next().map(|v| v.2.elapsed())
    }

    /// The largest page count any live snapshot sees (the checkpoint must not truncate the
    /// file below it while such a snapshot may still read those pages from the file).
    pub fn max_snapshot_page_count(&self) -> u32 {
        self.snapshots.values().map(|v| v.1).max().unwrap_or(0)
    }

    /// The image snapshot `seq` sees, if the page is cached (C2).
    pub fn lookup(&mut self, pgno: PageNo, seq: u64) -> Option<Result<PageRef>> {
        let tick = self.next_tick();
        // Approximate LRU: an entry used within the last quarter-cache of ticks is among
        // the most recently used already, so it keeps its place (moving it in `lru` is two
        // B-tree operations under the cache mutex: with SipHash, ~630 instructions a lookup, now ~150). Eviction still takes
        // the least recently repositioned entry; which clean entry goes is a matter of
        // hit rate only (C4 and C6 do not depend on the order).
        let recent = (self.cache_pages_max / 4) as u64;
        let e = self.entries.get_mut(&pgno.0)?;
        let found = e
            .versions
            .iter()
            .rev()
            .find(|(tag, _)| *tag <= seq)
            .map(|(_, img)| img.clone());
        if e.dirty {
            // Not in `lru` (C3); the tick is where `mark_clean` will put it.
            e.tick = tick;
        } else if e.tick + recent < tick {
            self.lru.remove(&e.tick);
            self.lru.insert(tick, pgno.0);
            e.tick = tick;
        }
        Some(found.ok_or_else(|| no_version(pgno, seq)))
    }

    fn next_tick(&mut self) -> u64 {
        self.tick += 1;
        self.tick
    }

    /// Inserts an image just read from the database file, unless the page got an entry
    /// meanwhile (then the entry wins: the file may already hold a newer image). Returns
    /// the image `seq` sees.
    pub fn insert_from_file(&mut self, pgno: PageNo, seq: u64, img: PageRef) -> Result<PageRef> {
        if let Some(found) = self.lookup(pgno, seq) {
            return found;
        }
        let tick = self.next_tick();
        self.entries.insert(
            pgno.0,
            Entry {
                versions: vec![(0, img.clone())],
                dirty: false,
                tick,
            },
        );
        self.lru.insert(tick, pgno.0);
        self.evict();
        Ok(img)
    }

    /// Whether `pgno` has an entry.
    pub fn contains(&self, pgno: PageNo) -> bool {
        self.entries.contains_key(&pgno.0)
    }

    /// Publishes commit `seq`: each page's new image, with the writer's base image for
    /// pages that have no entry yet (C5). `page_count` is the count after the commit.
    pub fn publish(
        &mut self,
        seq: u64,
        page_count: u32,
        pages: Vec<(PageNo, Option<PageRef>, PageRef)>,
    ) {
        debug_assert!(seq > self.committed_seq);
        let mut published = Vec::with_capacity(pages.len());
        for (pgno, base, img) in pages {
            published.push(pgno.0);
            let tick = self.next_tick();
            let e = self.entries.entry(pgno.0).or_insert_with(|| Entry {
                versions: base.map(|b| vec![(0, b)]).unwrap_or_default(),
                dirty: false,
                tick,
            });
            e.versions.push((seq, img));
            if !e.dirty {
                self.lru.remove(&e.tick);
                e.dirty = true;
                self.dirty_count += 1;
            }
            e.tick = tick;
            if e.versions.len() > 1 {
                self.multi.insert(pgno.0);
            }
        }
        self.committed_seq = seq;
        self.page_count = page_count;
        // Only the pages just published can have a version newly invisible: every other
        // entry's windows, and the set of live snapshots, are as they were when it was last
        // pruned (every change of that set that can close a window prunes all of `multi`, in
        // `release_snapshot`). Pruning all of `multi` here was a third of a commit's CPU
        // under the writer lock (callgrind, bdb_update).
        for pgno in published {
            self.prune(pgno);
        }
    }

    /// Drops versions no live snapshot can see (C2).
    fn prune(&mut self, pgno: u32) {
        let Some(e) = self.entries.get_mut(&pgno) else {
            self.multi.remove(&pgno);
            return;
        };
        // Compacted in place (no allocation, no reference-count traffic): version `r + 1`
        // is still unmoved when `r` is judged, since kept versions only move down.
        let n = e.versions.len();
        let mut kept = 0;
        for r in 0..n {
            let visible = r + 1 == n || {
                let (lo, hi) = (e.versions[r].0, e.versions[r + 1].0);
                self.snapshots.range(lo..hi).next().is_some()
            };
            if visible {
                e.versions.swap(kept, r);
                kept += 1;
            }
        }
        e.versions.truncate(kept);
        if e.versions.len() <= 1 {
            self.multi.remove(&pgno);
        }
    }

    /// The newest image of every dirty page numbered `<= limit`, for the checkpoint (C3).
    /// The limit covers the pages live snapshots can see (a truncated page an old snapshot
    /// still reads must reach the file before its entry may be evicted, C4).
    pub fn dirty_pages(&self, limit: u32) -> Vec<(PageNo, PageRef)> {
        let mut v: Vec<(PageNo, PageRef)> = self
            .entries
            .iter()
            .filter(|(pgno, e)| e.dirty && **pgno <= limit)
            .filter_map(|(pgno, e)| {
                e.versions
                    .last()
                    .map(|(_, img)| (PageNo(*pgno), img.clone()))
            })
            .collect();
        v.sort_by_key(|(p, _)| *p);
        v
    }

    /// After a checkpoint wrote every dirty page of commits `<= seq`: they become clean and
    /// evictable (C3). The caller holds the writer lock, so nothing newer exists.
    pub fn mark_clean(&mut self) {
        let mut ticks = Vec::new();
        for (pgno, e) in self.entries.iter_mut() {
            if e.dirty {
                e.dirty = false;
                ticks.push((e.tick, *pgno));
            }
        }
        for (tick, pgno) in ticks {
            self.lru.insert(tick, pgno);
        }
        self.dirty_count = 0;
        self.evict();
    }

    /// After a background round wrote the image at commit `seq` of every page dirty at
    /// `seq` (checkpoint B5): entries whose newest version is at most `seq` become clean and
    /// evictable; pages committed again since stay dirty for the next round (C3).
    pub fn mark_clean_upto(&mut self, seq: u64) {
        let mut ticks = Vec::new();
        for (pgno, e) in self.entries.iter_mut() {
            if e.dirty && e.versions.last().is_none_or(|v| v.0 <= seq) {
                e.dirty = false;
                ticks.push((e.tick, *pgno));
            }
        }
        self.dirty_count -= ticks.len();
        for (tick, pgno) in ticks {
            self.lru.insert(tick, pgno);
        }
        self.evict();
    }

    /// Evicts clean, unshared entries, least recently used first, down to the bound (C4, C6).
    fn evict(&mut self) {
        if self.entries.len() <= self.cache_pages_max {
            return;
        }
        let oldest = self.oldest_snapshot();
        let mut victims = Vec::new();
        let excess = self.entries.len() - self.cache_pages_max;
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
            let evictable = e.versions.len() == 1
                && match oldest {
                    None => true,
                    Some(o) => e.versions[0].0 <= o,
                };
            if evictable {
                victims.push((*tick, *pgno));
            }
        }
        for (tick, pgno) in victims {
            self.lru.remove(&tick);
            self.entries.remove(&pgno);
            self.multi.remove(&pgno);
        }
    }

    /// Inserts a recovered page image (redo from the log) as dirty: it must reach the
    /// database file at the next checkpoint.
    pub fn insert_recovered(&mut self, pgno: PageNo, img: PageRef) {
        let tick = self.next_tick();
        if let Some(old) = self.entries.insert(
            pgno.0,
            Entry {
                versions: vec![(0, img)],
                dirty: true,
                tick,
            },
        ) {
            if old.dirty {
                return;
            }
            self.lru.remove(&old.tick);
        }
        self.dirty_count += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn img(b: u8) -> PageRef {
        Arc::new(vec![b; 16])
    }

    #[test]
    fn snapshot_keeps_old_version_until_released() {
        let mut c = Cache::new(0, 3, 8);
        c.insert_from_file(PageNo(2), 0, img(1)).unwrap();
        let (s0, _) = c.register_snapshot();
        c.publish(1, 3, vec![(PageNo(2), Some(img(1)), img(2))]);
        assert_eq!(*c.lookup(PageNo(2), s0).unwrap().unwrap(), vec![1; 16]);
        assert_eq!(*c.lookup(PageNo(2), 1).unwrap().unwrap(), vec![2; 16]);
        c.release_snapshot(s0);
        assert_eq!(c.entries[&2].versions.len(), 1);
    }

    #[test]
    fn publish_prunes_its_pages_and_release_prunes_the_rest() {
        // C2 with the pruning split between publish (its own pages) and release (all).
        let mut c = Cache::new(0, 4, 8);
        for p in 1..=3 {
            c.insert_from_file(PageNo(p), 0, img(p as u8)).unwrap();
        }
        let (s0, _) = c.register_snapshot();
        c.publish(
            1,
            4,
            vec![(PageNo(1), None, img(11)), (PageNo(2), None, img(12))],
        );
        let (s1, _) = c.register_snapshot();
        c.publish(
            2,
            4,
            vec![(PageNo(2), None, img(22)), (PageNo(3), None, img(23))],
        );
        // s0 reads the tag-0 images of 1, 2, 3; s1 reads 1@1, 2@1 and 3's tag-0 image.
        assert_eq!(c.version_count(), 2 + 3 + 2);
        c.release_snapshot(s0);
        assert_eq!(c.entries[&1].versions.len(), 1);
        assert_eq!(c.entries[&2].versions.len(), 2, "s1 still reads 2@1");
        assert_eq!(c.entries[&3].versions.len(), 2, "s1 still reads 3@0");
        assert_eq!(*c.lookup(PageNo(2), s1).unwrap().unwrap(), vec![12; 16]);
        // No snapshot left: the next publish of page 2 leaves it one version; a publish
        // of another page leaves every entry minimal too.
        c.release_snapshot(s1);
        c.publish(3, 4, vec![(PageNo(2), None, img(32))]);
        c.publish(4, 4, vec![(PageNo(3), None, img(43))]);
        assert_eq!(c.version_count(), 3);
        assert_eq!(*c.lookup(PageNo(2), 4).unwrap().unwrap(), vec![32; 16]);
    }

    #[test]
    fn pages_in_use_survive_eviction_under_approximate_lru() {
        // A page looked up between every insert keeps being repositioned once its place
        // is a quarter-cache old, so the pages read once are evicted before it.
        let mut c = Cache::new(0, 1000, 16);
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
    fn eviction_spares_dirty_and_snapshot_pages() {
        let mut c = Cache::new(0, 100, 8);
        for p in 1..=8 {
            c.insert_from_file(PageNo(p), 0, img(p as u8)).unwrap();
        }
        let (s0, _) = c.register_snapshot();
        c.publish(1, 100, vec![(PageNo(1), None, img(9))]);
        c.mark_clean();
        for p in 9..=20 {
            c.insert_from_file(PageNo(p), 1, img(p as u8)).unwrap();
        }
        // Page 1's only version is newer than snapshot 0: it must stay (C4).
        assert!(c.contains(PageNo(1)));
        assert!(c.len() <= 9);
        c.release_snapshot(s0);
        c.publish(2, 100, vec![(PageNo(30), None, img(3))]);
        assert_eq!(c.dirty_count(), 1);
        for p in 40..=60 {
            c.insert_from_file(PageNo(p), 2, img(1)).unwrap();
        }
        assert!(c.contains(PageNo(30)), "dirty pages are pinned (C3)");
        assert!(c.len() <= 8);
    }
}
