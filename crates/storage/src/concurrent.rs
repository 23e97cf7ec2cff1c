//! Optimistic concurrent write transactions (`Database::begin_concurrent`): what a
//! transaction read and wrote at the B-tree key level, the history of committed write sets,
//! and the validation rule (docs/concurrency.md).
//!
//! A concurrent transaction runs on a *detached* write view (`Backend::begin_detached`):
//! copy-on-write pages on its snapshot, holding no lock. It records
//! - its **reads** per root: closed key intervals, from a seek key to where the cursor stopped
//!   (an open end where it ran off the tree), so the gaps it saw empty are covered too
//!   (phantom protection); a point read is the interval `[k, k]`;
//! - its **writes** per root: the rowids / index keys it inserted or deleted, the trees it
//!   created, dropped or cleared, the header fields it set;
//! - the logical **operations** in order, replayed at commit onto the latest state.
//!
//! Every writer (lock holders included) leaves a [`CommitEntry`] with its write set in the
//! [`History`] before its commit is published. Invariants:
//! - C1. An entry for commit `s + 1` (the writer's snapshot `s` is the latest, since it holds
//!   the writer lock) is pushed while the writer lock is held and before the commit is
//!   published, so a transaction whose snapshot is `<= s` finds it when it validates.
//! - C2. A concurrent transaction registers in the history, before it takes its snapshot
//!   `s`, a number `r <= s`: the newest entry's number minus one (by C1 at most one entry,
//!   the newest, is pushed and not yet published, and the latest commit never goes back,
//!   so every later snapshot is at least `r`). Pruning removes only entries with `seq <=`
//!   every live registration and below the newest entry (which may not be published yet).
//!   So an entry a live or future transaction needs (`seq > s >= r`) is never pruned.
//! - C3. Validation covers every entry with `seq >` the transaction's snapshot up to its
//!   commit point (the part after the last rebase, C7, under the writer lock): under
//!   Serializable it fails if a later commit wrote a key
//!   inside one of its read intervals or a key it wrote; under Snapshot only the latter.
//!   Schema-level: a later commit that created, dropped or cleared a tree the transaction
//!   touched, or set a header field it read or wrote, fails it too. An entry whose keys were
//!   not recorded (`opaque`) fails every transaction it is checked against.
//! - C4. A conflicting transaction is rolled back: nothing of it is published.
//! - C5. A passing transaction's operations are replayed in order onto a fresh write view
//!   of the state it was validated up to — before the writer lock on a rebased view (C7),
//!   or under the lock on the latest state — which commits through the normal path (log
//!   frame, group commit). A replayed `create_btree` that gets another root page
//!   than the transaction saw is a conflict (the root may be stored in records).
//! - C6. A detached view cannot commit unless `attach_writer` took the writer lock on a
//!   snapshot that is still the latest (fast path: nothing committed since).
//! - C7. Rebase, outside the writer lock: a transaction whose snapshot `s` is stale opens a
//!   fresh detached view on the latest snapshot `t`, validates against the entries
//!   `s < seq <= t` (all present: each was pushed before its commit was published, C1, and
//!   none is pruned while `s` is registered, C2) and replays its operations onto that view
//!   (C5). The view then commits only through C6, i.e. only if `t` is still the latest when
//!   the writer lock is held, so the entries validated are exactly those between `s` and
//!   the commit point; otherwise it rebases again from `t`, or (after
//!   `REBASE_ATTEMPTS_MAX` tries) validates the entries after `t` and replays under the
//!   lock. The transaction's own view is kept until the commit succeeds, so a `Busy` leaves
//!   it as it was (txn.rs T3).
//!
//! Why this is serializable: commits are totally ordered by the writer lock. A transaction
//! T passing C3 read nothing that any commit between its snapshot and its commit point
//! changed (every such write lies outside T's read intervals), so T's reads return the same
//! results at its commit point; replaying its writes there is equivalent to running T
//! entirely at that point (Silo's read-set validation, with ranges instead of node versions).
//!
//! Memory: the history holds the entries committed after the oldest live concurrent
//! snapshot (plus the newest). A writer that writes more than [`KEYS_PER_ROOT_MAX`] keys in
//! one tree records that tree as written entirely; one that began before any concurrent
//! transaction existed records nothing and leaves an opaque entry.

use crate::error::{PageNo, Result, StorageError};
use crate::record::KeyCompare;
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::{Arc, MutexGuard};

/// Isolation level of concurrent transactions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Isolation {
    /// Reads are validated too (no write skew, no phantoms). SQLite's promise; the default.
    #[default]
    Serializable,
    /// Write-write conflicts only: fewer aborts, write skew possible.
    Snapshot,
}

/// Counters for `Database::concurrency_stats`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConcurrencyStats {
    /// Concurrent transactions committed (fast path and replayed).
    pub concurrent_commits: u64,
    /// Of those, committed as is because nothing had committed since their snapshot.
    pub concurrent_fast_commits: u64,
    /// Of those, validated and replayed onto a newer snapshot outside the writer lock, and
    /// committed as that view because nothing had committed since it (C7).
    pub concurrent_rebased_commits: u64,
    /// Rebases (C7) that carried the transaction's pages over instead of replaying its
    /// writes, because no commit since its snapshot touched a page it used (pages P6).
    pub page_rebases: u64,
    /// Lock-holding write transactions (`begin_write`, `upgrade`) committed.
    pub locked_commits: u64,
    /// Concurrent transactions that failed validation.
    pub conflicts: u64,
    /// Conflicts by the root page named in the error.
    pub conflicts_by_root: BTreeMap<PageNo, u64>,
}

/// How a concurrent transaction's commit went (`ConcurrencyStats::count`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ConcCommit {
    /// It wrote nothing: nothing to validate or publish, not counted.
    ReadOnly,
    /// Committed as is (`concurrent_fast_commits`).
    Fast,
    /// Committed as a view rebased outside the writer lock (`concurrent_rebased_commits`).
    Rebased,
    /// Validated and replayed under the writer lock.
    Replayed,
}

impl ConcurrencyStats {
    pub(crate) fn count(&mut self, how: ConcCommit) {
        match how {
            ConcCommit::ReadOnly => return,
            ConcCommit::Fast => self.concurrent_fast_commits += 1,
            ConcCommit::Rebased => self.concurrent_rebased_commits += 1,
            ConcCommit::Replayed => {}
        }
        self.concurrent_commits += 1;
    }
}

/// Past this many keys written in one tree by one transaction, the tree is recorded as
/// written entirely (bounds the history's memory; costs spurious conflicts only).
pub const KEYS_PER_ROOT_MAX: usize = 50_000;

/// A B-tree key: a rowid, or an index record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Key {
    Row(i64),
    Idx(Vec<u8>),
}

/// Below this many keys recorded, `WriteSet::key` does not seal (the memory bound's floor).
const SEAL_KEYS_MIN: usize = 4096;

/// What one transaction wrote: the part of it kept in the history.
///
/// The keys are flat vectors of (tree, key), sorted and deduplicated by `seal`, not a map
/// of per-tree hash sets: with two concurrent writers every commit validates against the
/// other thread's entry, and the maps were five or six cache lines written by the other
/// core (the map's control bytes and bucket, then the set's) and three allocations per
/// commit freed by the other thread's prune. Measured (bdb_update --threads 2 --begin
/// concurrent, sync=off, perf): `ConcTxn::validate` 1.37 samples per 1,000 commits, most
/// of them in the sets' lookups.
///
/// Invariants:
/// - W1. `seal` sorts and deduplicates the keys and records each tree with more than
///   `KEYS_PER_ROOT_MAX` keys as written entirely (`all`, sorted), dropping its keys.
///   Validation reads sealed sets only: the history's (`History::push` seals) and the
///   committing transaction's (`commit_concurrent` seals it before it validates).
/// - W2. Memory: `key` seals again once the keys recorded reach twice the count the last
///   seal left (at least `SEAL_KEYS_MIN`), so an unsealed set holds at most about twice
///   its sealed size.
#[derive(Debug, Default)]
pub(crate) struct WriteSet {
    /// Rowids written, with their table's root.
    rows: Vec<(PageNo, i64)>,
    /// Index keys written (record bytes), with their index's root.
    keys: Vec<(PageNo, Vec<u8>)>,
    /// Trees whose keys are recorded as every key (W1).
    all: Vec<PageNo>,
    /// Keys recorded at which `key` seals next (W2; 0 until the first seal).
    seal_at: usize,
    /// Trees created, dropped or cleared.
    pub schema: BTreeSet<PageNo>,
    /// Header fields set (byte offsets on page 1).
    pub header: BTreeSet<usize>,
    /// Nothing was recorded: conflicts with everything (C3).
    pub opaque: bool,
}

impl WriteSet {
    pub fn key(&mut self, root: PageNo, k: Key) {
        if self.all.contains(&root) {
            return;
        }
        match k {
            Key::Row(r) => self.rows.push((root, r)),
            Key::Idx(b) => self.keys.push((root, b)),
        }
        if self.rows.len() + self.keys.len() >= self.seal_at.max(SEAL_KEYS_MIN) {
            self.seal();
            self.seal_at = 2 * (self.rows.len() + self.keys.len());
        }
    }

    /// W1.
    pub fn seal(&mut self) {
        self.rows.sort_unstable();
        self.rows.dedup();
        self.keys.sort_unstable();
        self.keys.dedup();
        let mut over = Vec::new();
        for_each_run(&self.rows, |root, n| {
            if n > KEYS_PER_ROOT_MAX {
                over.push(root);
            }
        });
        for_each_run(&self.keys, |root, n| {
            if n > KEYS_PER_ROOT_MAX {
                over.push(root);
            }
        });
        if over.is_empty() {
            return;
        }
        self.rows.retain(|(root, _)| !over.contains(root));
        self.keys.retain(|(root, _)| !over.contains(root));
        self.all.extend(over);
        self.all.sort_unstable();
        self.all.dedup();
    }

    fn is_sealed(&self) -> bool {
        self.rows.is_sorted() && self.keys.is_sorted() && self.all.is_sorted()
    }

    /// Whether any key of `root` is recorded (or all of them). Sealed sets only (W1).
    fn wrote_in(&self, root: PageNo) -> bool {
        self.all.binary_search(&root).is_ok()
            || run_of(&self.rows, root).next().is_some()
            || run_of(&self.keys, root).next().is_some()
    }
}

/// Calls `f(root, n)` for each run of `n` entries of one root in a sorted slice.
fn for_each_run<K>(entries: &[(PageNo, K)], mut f: impl FnMut(PageNo, usize)) {
    for run in entries.chunk_by(|a, b| a.0 == b.0) {
        f(run[0].0, run.len());
    }
}

/// The entries of `root` in a sorted slice of (root, key) pairs.
fn run_of<K>(entries: &[(PageNo, K)], root: PageNo) -> impl Iterator<Item = &K> {
    let from = entries.partition_point(|e| e.0 < root);
    entries[from..]
        .iter()
        .take_while(move |e| e.0 == root)
        .map(|e| &e.1)
}

/// A closed interval of keys; `None` is an open end.
#[derive(Debug, Clone)]
struct Interval {
    lo: Option<Key>,
    hi: Option<Key>,
}

/// Reads in one tree.
#[derive(Default)]
struct RootReads {
    intervals: Vec<Interval>,
    /// The index comparator (from the cursors that read it).
    cmp: Option<Arc<dyn KeyCompare>>,
}

/// One logical operation of a concurrent transaction, replayed at commit (C5).
pub(crate) enum Op {
    TableInsert(PageNo, i64, Vec<u8>),
    TableDelete(PageNo, i64),
    IndexInsert(PageNo, Vec<u8>, Arc<dyn KeyCompare>),
    IndexDelete(PageNo, Vec<u8>, Arc<dyn KeyCompare>),
    /// Kind (table?) and the root the transaction's own view gave.
    Create(bool, PageNo),
    Drop(PageNo),
    Clear(PageNo),
    SetHeader(usize, u32),
}

/// Everything a concurrent transaction records.
pub(crate) struct ConcTxn {
    pub snapshot: u64,
    /// Its registration in the history (C2), at most `snapshot`.
    pub registered: u64,
    pub isolation: Isolation,
    reads: HashMap<PageNo, RootReads>,
    pub header_read: bool,
    pub writes: WriteSet,
    pub ops: Vec<Op>,
    /// Savepoint id → number of operations when it was taken.
    pub savepoints: Vec<(u32, usize)>,
}

fn cmp_key(a: &Key, b: &Key, cmp: Option<&dyn KeyCompare>) -> Result<Ordering> {
    match (a, b) {
        (Key::Row(x), Key::Row(y)) => Ok(x.cmp(y)),
        (Key::Idx(x), Key::Idx(y)) => match cmp {
            Some(c) => c.compare(x, y),
            None => Ok(x.cmp(y)),
        },
        // Mixed kinds cannot occur in one tree; treat as overlapping (conservative).
        _ => Ok(Ordering::Equal),
    }
}

impl ConcTxn {
    /// The record buffer of the last row this finished transaction logged, emptied, for
    /// the next transaction to build a record in (txn.rs `TxnBuffers::record`). Only once
    /// the transaction is over: C5's replay reads the records until then.
    pub fn take_record_buffer(&mut self) -> Vec<u8> {
        let logged = self.ops.iter_mut().rev().find_map(|op| match op {
            Op::TableInsert(_, _, record) => Some(record),
            _ => None,
        });
        let mut buf = logged.map(std::mem::take).unwrap_or_default();
        buf.clear();
        buf
    }

    pub fn new(snapshot: u64, registered: u64, isolation: Isolation) -> ConcTxn {
        ConcTxn {
            snapshot,
            registered,
            isolation,
            reads: HashMap::new(),
            header_read: false,
            writes: WriteSet::default(),
            ops: Vec::new(),
            savepoints: Vec::new(),
        }
    }

    /// Records that the transaction saw every key between `a` and `b` (either order;
    /// `None` = that end of the tree).
    pub fn read(
        &mut self,
        root: PageNo,
        a: Option<Key>,
        b: Option<Key>,
        cmp: Option<&Arc<dyn KeyCompare>>,
    ) {
        let rr = self.reads.entry(root).or_default();
        if rr.cmp.is_none() {
            rr.cmp = cmp.cloned();
        }
        let c = rr.cmp.as_deref();
        // Order the ends; an unorderable pair (comparator error) widens to the whole tree.
        let (lo, hi) = match (&a, &b) {
            (Some(x), Some(y)) => match cmp_key(x, y, c) {
                Ok(Ordering::Greater) => (b, a),
                Ok(_) => (a, b),
                Err(_) => (None, None),
            },
            _ => (a, b),
        };
        // A scan step continues the previous interval: merge instead of growing the list.
        if let Some(last) = rr.intervals.last_mut() {
            if last.hi.is_some() && last.hi == lo {
                last.hi = hi;
                return;
            }
            if last.lo.is_some() && last.lo == hi {
                last.lo = lo;
                return;
            }
        }
        rr.intervals.push(Interval { lo, hi });
    }

    /// Whether the transaction read or wrote the tree.
    fn touched(&self, root: PageNo) -> bool {
        self.reads.contains_key(&root)
            || self.writes.wrote_in(root)
            || self.writes.schema.contains(&root)
    }

    /// Whether `k` lies in an interval read in `root`.
    fn read_covers(&self, root: PageNo, k: &Key) -> Result<bool> {
        let Some(rr) = self.reads.get(&root) else {
            return Ok(false);
        };
        let c = rr.cmp.as_deref();
        for iv in &rr.intervals {
            let above_lo = match &iv.lo {
                None => true,
                Some(lo) => cmp_key(k, lo, c)? != Ordering::Less,
            };
            let below_hi = match &iv.hi {
                None => true,
                Some(hi) => cmp_key(k, hi, c)? != Ordering::Greater,
            };
            if above_lo && below_hi {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// C3: checks this transaction against one later commit.
    pub fn validate(&self, e: &WriteSet) -> Result<()> {
        let conflict = |root: PageNo, reason: &str| {
            Err(StorageError::Conflict {
                root,
                reason: reason.into(),
            })
        };
        let serializable = self.isolation == Isolation::Serializable;
        if e.opaque {
            return conflict(
                PageNo(1),
                "a later commit's writes were not recorded (it began before concurrent transactions were used)",
            );
        }
        for &root in &e.schema {
            if self.touched(root) {
                return conflict(root, "a later commit created, dropped or cleared this tree");
            }
        }
        if !e.header.is_empty()
            && ((serializable && self.header_read)
                || e.header.iter().any(|f| self.writes.header.contains(f)))
        {
            return conflict(PageNo(1), "a later commit changed a database header field");
        }
        debug_assert!(self.writes.is_sealed() && e.is_sealed(), "W1");
        let mine = &self.writes;
        for &root in &e.all {
            if mine.schema.contains(&root) {
                return conflict(
                    root,
                    "a later commit wrote a tree this transaction dropped or cleared",
                );
            }
            if mine.wrote_in(root) {
                return conflict(root, "a later commit wrote a key this transaction wrote");
            }
            if serializable && self.reads.contains_key(&root) {
                return conflict(root, "a later commit rewrote a tree this transaction read");
            }
        }
        for &(root, r) in &e.rows {
            let wrote = mine.rows.binary_search(&(root, r)).is_ok();
            self.check_key(root, wrote, &Key::Row(r))?;
        }
        for (root, k) in &e.keys {
            let wrote = mine
                .keys
                .binary_search_by(|(r, mk)| (*r, mk.as_slice()).cmp(&(*root, k.as_slice())))
                .is_ok();
            self.check_key(*root, wrote, &Key::Idx(k.clone()))?;
        }
        Ok(())
    }

    /// C3 for one key `k` of tree `root` that a later commit wrote (`wrote`: this
    /// transaction wrote it too).
    fn check_key(&self, root: PageNo, wrote: bool, k: &Key) -> Result<()> {
        let conflict = |reason: &str| {
            Err(StorageError::Conflict {
                root,
                reason: reason.into(),
            })
        };
        let mine = &self.writes;
        if mine.schema.contains(&root) {
            return conflict("a later commit wrote a tree this transaction dropped or cleared");
        }
        if wrote || mine.all.binary_search(&root).is_ok() {
            return conflict("a later commit wrote a key this transaction wrote");
        }
        if self.isolation == Isolation::Serializable && self.read_covers(root, k)? {
            return conflict("a later commit wrote a key this transaction read");
        }
        Ok(())
    }
}

/// One commit's write set (C1).
struct CommitEntry {
    seq: u64,
    writes: Arc<WriteSet>,
}

/// The [`History`] of one database file, shared by every `Database` opened over it
/// (`Backend::history`): a concurrent transaction validates against all of the file's
/// commits, whichever `Database` made them (two `Database`s over one backend, as two
/// `open`s of one file in a process give, each kept their own before, and a concurrent
/// commit did not see the other's writes: a lost update).
///
/// Every concurrent commit of every thread passes through it, so its mutex is a cache line
/// the writers' cores hand back and forth: a commit takes it three times (its snapshot's
/// registration, its entry's push, its unregistration with the counters), and asks
/// whether its snapshot went stale without it (`newest_seq`, a load). Measured
/// (bdb_update --threads 2 --begin concurrent, sync=off, perf): with five sections a
/// commit (and two settings mutexes, txn.rs `DbInner`), the mutexes' atomics were most of
/// `Txn::commit`'s 2.4 samples per 1,000 commits; with three, 1.1.
#[derive(Default)]
pub struct SharedHistory {
    history: std::sync::Mutex<History>,
    /// `History::newest_seq`, stored under the mutex by every push (`push`); never
    /// decreases, so a load that misses the latest push gives an older entry's number.
    newest: AtomicU64,
}

impl SharedHistory {
    pub(crate) fn lock(&self) -> MutexGuard<'_, History> {
        self.history.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The newest entry's sequence number, without the mutex (`History::newest_seq`). A
    /// caller that acts on a stale (smaller) value must be safe with it: a concurrent
    /// commit that misses the latest push skips a rebase and finds its snapshot stale at
    /// `attach_writer` instead (C6).
    pub(crate) fn newest_seq(&self) -> u64 {
        self.newest.load(AtomicOrdering::Acquire)
    }

    /// C1: `History::push` of the write set sealed (W1, outside the mutex), then
    /// `newest_seq` moved to it.
    pub(crate) fn push(&self, seq: u64, mut writes: WriteSet) {
        writes.seal();
        let mut h = self.lock();
        h.push(seq, writes);
        self.newest.store(h.newest_seq(), AtomicOrdering::Release);
    }

    /// C1: `History::push_opaque`, then `newest_seq` moved to it.
    pub(crate) fn push_opaque(&self, seq: u64) {
        let mut h = self.lock();
        h.push_opaque(seq);
        self.newest.store(h.newest_seq(), AtomicOrdering::Release);
    }
}

/// Write sets of recent commits and the live concurrent snapshots (C1, C2).
#[derive(Default)]
pub(crate) struct History {
    entries: VecDeque<CommitEntry>,
    /// Live concurrent snapshots: seq → how many.
    live: BTreeMap<u64, usize>,
    /// Set once a concurrent transaction has begun: writers record keys from then on.
    pub enabled: bool,
    pub stats: ConcurrencyStats,
    /// The write set of every opaque entry (`push_opaque`), shared: until a concurrent
    /// transaction begins every commit leaves one, and a fresh one was an allocation and
    /// its free per commit (~0.2k instructions of a bdb_update IMMEDIATE commit).
    opaque: Option<Arc<WriteSet>>,
}

impl History {
    pub fn register(&mut self, seq: u64) {
        self.enabled = true;
        *self.live.entry(seq).or_insert(0) += 1;
    }

    pub fn unregister(&mut self, seq: u64) {
        if let Some(n) = self.live.get_mut(&seq) {
            *n -= 1;
            if *n == 0 {
                self.live.remove(&seq);
            }
        }
        self.prune();
    }

    /// C1: called under the writer lock, before the commit is published.
    pub fn push(&mut self, seq: u64, writes: WriteSet) {
        debug_assert!(writes.is_sealed(), "W1");
        self.push_entry(seq, Arc::new(writes));
    }

    /// `push` of a write set that recorded nothing (C3: conflicts with everything).
    pub fn push_opaque(&mut self, seq: u64) {
        let writes = self.opaque.get_or_insert_with(|| {
            Arc::new(WriteSet {
                opaque: true,
                ..WriteSet::default()
            })
        });
        let writes = Arc::clone(writes);
        self.push_entry(seq, writes);
    }

    fn push_entry(&mut self, seq: u64, writes: Arc<WriteSet>) {
        // An entry with the same number is of a commit that did not advance the sequence:
        // it changed nothing (no frame) or failed. Its writes never happened, so it goes;
        // kept, it would outlive every snapshot (prune keeps all entries numbered `newest`)
        // and fail validations spuriously. Under the writer lock, `seq` never decreases.
        if self.entries.back().is_some_and(|e| e.seq == seq) {
            self.entries.pop_back();
        }
        debug_assert!(self.entries.back().is_none_or(|e| e.seq < seq));
        self.entries.push_back(CommitEntry { seq, writes });
        self.prune();
    }

    /// C2.
    fn prune(&mut self) {
        let newest = self.entries.back().map_or(0, |e| e.seq);
        let mut bound = newest.saturating_sub(1);
        if let Some((&oldest, _)) = self.live.iter().next() {
            bound = bound.min(oldest);
        }
        while self.entries.front().is_some_and(|e| e.seq <= bound) {
            self.entries.pop_front();
        }
    }

    /// Entries a transaction with snapshot `seq` must validate against (C3).
    pub fn since(&self, seq: u64) -> Vec<Arc<WriteSet>> {
        self.between(seq, u64::MAX)
    }

    /// Entries with `lo < seq <= hi`: the commits between two snapshots (C7).
    pub fn between(&self, lo: u64, hi: u64) -> Vec<Arc<WriteSet>> {
        self.entries
            .iter()
            .filter(|e| e.seq > lo && e.seq <= hi)
            .map(|e| Arc::clone(&e.writes))
            .collect()
    }

    /// The newest entry's sequence number (0: none). A commit pushes its entry before it
    /// is published (C1), so a snapshot older than this may be stale; one at least this
    /// new is the latest, unless a commit is between its push and its publication.
    pub fn newest_seq(&self) -> u64 {
        self.entries.back().map_or(0, |e| e.seq)
    }

    /// Number of entries kept (tests check the memory bound).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn conflict(&mut self, root: PageNo) {
        self.stats.conflicts += 1;
        *self.stats.conflicts_by_root.entry(root).or_insert(0) += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_merge_and_cover() {
        let mut t = ConcTxn::new(0, 0, Isolation::Serializable);
        let r = PageNo(2);
        t.read(r, Some(Key::Row(5)), Some(Key::Row(7)), None);
        t.read(r, Some(Key::Row(7)), Some(Key::Row(9)), None);
        t.read(r, Some(Key::Row(20)), Some(Key::Row(20)), None);
        assert_eq!(t.reads[&r].intervals.len(), 2);
        for (k, inside) in [
            (4, false),
            (5, true),
            (8, true),
            (9, true),
            (10, false),
            (20, true),
        ] {
            assert_eq!(t.read_covers(r, &Key::Row(k)).unwrap(), inside, "{k}");
        }
        let mut w = WriteSet::default();
        w.key(r, Key::Row(10));
        t.validate(&w).unwrap();
        w.key(r, Key::Row(8));
        w.seal();
        assert!(matches!(t.validate(&w), Err(StorageError::Conflict { root, .. }) if root == r));
        t.isolation = Isolation::Snapshot;
        t.validate(&w).unwrap();
    }

    /// A seeded generator of numbers in `0..n`.
    fn rng(seed: u64) -> impl FnMut(u64) -> u64 {
        let mut next = crate::record::tests::xorshift(seed);
        move |n| next() % n
    }

    #[test]
    fn sealed_write_sets_validate_as_the_rule_key_by_key() {
        // W1, C3: seeded write sets and reads over two tables (2, 3) and two indexes
        // (4, 5), against the rule checked on the unsealed lists, one later key at a time.
        let mut next = rng(0x9e37_79b9_7f4a_7c15);
        let key = |next: &mut dyn FnMut(u64) -> u64| {
            let root = PageNo(2 + next(4) as u32);
            let k = next(12);
            let k = if root.0 < 4 {
                Key::Row(k as i64)
            } else {
                Key::Idx(vec![k as u8, 7])
            };
            (root, k)
        };
        let mut conflicts = 0;
        for round in 0..3000 {
            let isolation = if round % 3 == 0 {
                Isolation::Snapshot
            } else {
                Isolation::Serializable
            };
            let mut t = ConcTxn::new(0, 0, isolation);
            let mut mine = Vec::new();
            for _ in 0..next(5) {
                let (root, k) = key(&mut next);
                t.writes.key(root, k.clone());
                mine.push((root, k));
            }
            let mut reads = Vec::new();
            for _ in 0..next(3) {
                let (root, lo) = key(&mut next);
                let (_, hi) = key(&mut next);
                let (lo, hi) = match (lo, hi) {
                    (Key::Row(a), _) => (Key::Row(a), Key::Row(a + next(6) as i64)),
                    (Key::Idx(a), _) => {
                        (Key::Idx(a.clone()), Key::Idx(vec![a[0] + next(6) as u8, 7]))
                    }
                };
                t.read(root, Some(lo.clone()), Some(hi.clone()), None);
                reads.push((root, lo, hi));
            }
            let mut e = WriteSet::default();
            let mut theirs = Vec::new();
            for _ in 0..1 + next(5) {
                let (root, k) = key(&mut next);
                e.key(root, k.clone());
                theirs.push((root, k));
            }
            t.writes.seal();
            e.seal();
            let inside = |k: &Key, lo: &Key, hi: &Key| match (k, lo, hi) {
                (Key::Row(k), Key::Row(lo), Key::Row(hi)) => lo <= k && k <= hi,
                (Key::Idx(k), Key::Idx(lo), Key::Idx(hi)) => lo <= k && k <= hi,
                _ => unreachable!("one kind per tree"),
            };
            let expected = theirs.iter().any(|(root, k)| {
                mine.contains(&(*root, k.clone()))
                    || (isolation == Isolation::Serializable
                        && reads
                            .iter()
                            .any(|(r, lo, hi)| r == root && inside(k, lo, hi)))
            });
            conflicts += expected as usize;
            assert_eq!(t.validate(&e).is_err(), expected, "round {round}");
        }
        assert!((300..2700).contains(&conflicts), "{conflicts} conflicts");
    }

    #[test]
    fn a_tree_past_the_key_bound_is_written_entirely() {
        // W1, W2.
        let (big, small) = (PageNo(2), PageNo(3));
        let mut e = WriteSet::default();
        for r in 0..3 * KEYS_PER_ROOT_MAX as i64 {
            e.key(big, Key::Row(r));
            assert!(e.rows.len() <= 2 * KEYS_PER_ROOT_MAX + 1, "W2 at {r}");
        }
        e.key(small, Key::Row(1));
        e.seal();
        assert_eq!(
            (e.all.as_slice(), e.rows.as_slice()),
            (&[big][..], &[(small, 1)][..])
        );
        let mut t = ConcTxn::new(0, 0, Isolation::Serializable);
        t.writes.key(small, Key::Row(2));
        t.writes.seal();
        t.validate(&e).unwrap();
        t.writes.key(big, Key::Row(-5));
        t.writes.seal();
        assert!(matches!(t.validate(&e), Err(StorageError::Conflict { root, .. }) if root == big));
        let mut t = ConcTxn::new(0, 0, Isolation::Serializable);
        t.read(big, Some(Key::Row(-9)), Some(Key::Row(-9)), None);
        assert!(matches!(t.validate(&e), Err(StorageError::Conflict { root, .. }) if root == big));
        t.isolation = Isolation::Snapshot;
        t.validate(&e).unwrap();
    }

    #[test]
    fn history_prunes_what_no_live_snapshot_needs() {
        // C2.
        let mut h = History::default();
        h.register(3);
        for s in 4..10 {
            h.push(s, WriteSet::default());
        }
        assert_eq!(h.since(3).len(), 6);
        h.unregister(3);
        assert_eq!(h.len(), 1, "only the newest entry stays");
        assert_eq!(h.since(8).len(), 1);
    }
}
