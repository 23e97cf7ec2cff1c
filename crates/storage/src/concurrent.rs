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
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
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

/// Keys written in one tree.
#[derive(Debug, Default, Clone)]
pub(crate) struct RootWrites {
    /// Every key (too many to list, or unknown).
    pub all: bool,
    pub rows: HashSet<i64>,
    pub keys: BTreeSet<Vec<u8>>,
}

impl RootWrites {
    fn len(&self) -> usize {
        self.rows.len() + self.keys.len()
    }

    fn add(&mut self, k: Key) {
        if self.all {
            return;
        }
        match k {
            Key::Row(r) => {
                self.rows.insert(r);
            }
            Key::Idx(b) => {
                self.keys.insert(b);
            }
        }
        if self.len() > KEYS_PER_ROOT_MAX {
            self.all = true;
            self.rows = HashSet::new();
            self.keys = BTreeSet::new();
        }
    }

    fn iter(&self) -> impl Iterator<Item = Key> + '_ {
        self.rows
            .iter()
            .map(|&r| Key::Row(r))
            .chain(self.keys.iter().map(|k| Key::Idx(k.clone())))
    }

    fn intersects(&self, other: &RootWrites) -> bool {
        if (self.all && other.len() > 0) || (other.all && self.len() > 0) || (self.all && other.all)
        {
            return true;
        }
        self.rows.iter().any(|r| other.rows.contains(r))
            || self.keys.iter().any(|k| other.keys.contains(k))
    }
}

/// What one transaction wrote: the part of it kept in the history.
#[derive(Debug, Default, Clone)]
pub(crate) struct WriteSet {
    pub roots: HashMap<PageNo, RootWrites>,
    /// Trees created, dropped or cleared.
    pub schema: BTreeSet<PageNo>,
    /// Header fields set (byte offsets on page 1).
    pub header: BTreeSet<usize>,
    /// Nothing was recorded: conflicts with everything (C3).
    pub opaque: bool,
}

impl WriteSet {
    pub fn key(&mut self, root: PageNo, k: Key) {
        self.roots.entry(root).or_default().add(k);
    }
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
            || self.writes.roots.contains_key(&root)
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
        for (&root, ew) in &e.roots {
            if self.writes.schema.contains(&root) {
                return conflict(
                    root,
                    "a later commit wrote a tree this transaction dropped or cleared",
                );
            }
            if let Some(mine) = self.writes.roots.get(&root) {
                if mine.intersects(ew) {
                    return conflict(root, "a later commit wrote a key this transaction wrote");
                }
            }
            if serializable && self.reads.contains_key(&root) {
                if ew.all {
                    return conflict(root, "a later commit rewrote a tree this transaction read");
                }
                for k in ew.iter() {
                    if self.read_covers(root, &k)? {
                        return conflict(root, "a later commit wrote a key this transaction read");
                    }
                }
            }
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

    /// C1: `History::push`, then `newest_seq` moved to it.
    pub(crate) fn push(&self, seq: u64, writes: WriteSet) {
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
        assert!(matches!(t.validate(&w), Err(StorageError::Conflict { root, .. }) if root == r));
        t.isolation = Isolation::Snapshot;
        t.validate(&w).unwrap();
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
