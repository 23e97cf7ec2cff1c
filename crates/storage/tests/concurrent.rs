//! Optimistic concurrent transactions (`Database::begin_concurrent`, src/concurrent.rs).
//!
//! - Bank invariant: threads mixing concurrent, `begin_write` and `upgrade` transfers keep
//!   the total, and every account equals a replay of the acknowledged transfers (C1, C3,
//!   C5), on memory and on a file database.
//! - Anomalies per isolation level: lost update, write skew, phantoms (range and point),
//!   disjoint rows on one page, read-only transactions, index ranges, schema conflicts (C3),
//!   the detached view's commit guard (P5/C6), the history's memory bound (C2).
//! - Serializability: random interleavings; each committed transaction replays on the model
//!   at its commit point with the same observations (C3, C5).
//! - Crash: concurrent commits on `SimVfs`, then a power loss: exactly the acknowledged
//!   commits (and perhaps the one in flight) are present.
//!
//! Replay a failure: `PARLITE_SEED=1234 cargo test -p parlite-storage --test concurrent`.

use parlite_storage::record::{decode, encode};
use parlite_storage::vfs::{CrashMode, SimVfs};
use parlite_storage::KeyCompare as _;
use parlite_storage::{
    BtreeKind, Database, Isolation, OpenOptions, PageNo, PagerConfig, RecordCompare, SeekOp,
    StorageError, Synchronous, Txn, ValueRef,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(5);

fn seed() -> u64 {
    let s = std::env::var("PARLITE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random);
    eprintln!("seed = {s} (replay with PARLITE_SEED={s})");
    s
}

fn mem_db() -> Database {
    Database::open_in_memory(OpenOptions::default()).unwrap()
}

fn file_db(disk: &SimVfs, sync: Synchronous) -> parlite_storage::Result<Database> {
    let opts = OpenOptions {
        page_size: 1024,
        synchronous: sync,
        ..OpenOptions::default()
    };
    let config = PagerConfig {
        checkpoint_log_bytes: 64 << 10,
        checkpoint_dirty_percent: 50,
        backpressure_dirty_percent: 100,
        background_checkpoint: true,
    };
    Database::open_with_config(Arc::new(disk.clone()), "/bank.db", opts, config)
}

fn both() -> Vec<(&'static str, Database)> {
    vec![
        ("mem", mem_db()),
        (
            "file",
            file_db(&SimVfs::new(7), Synchronous::Normal).unwrap(),
        ),
    ]
}

fn val(v: i64) -> Vec<u8> {
    encode(&[ValueRef::Integer(v)])
}

fn get(t: &Txn, root: PageNo, rowid: i64) -> Option<i64> {
    let mut c = t.cursor(root, BtreeKind::Table, None).unwrap();
    if !c.seek_rowid(rowid, SeekOp::Eq).unwrap() {
        return None;
    }
    match decode(&c.record().unwrap()).unwrap()[0] {
        ValueRef::Integer(v) => Some(v),
        _ => panic!("not an integer"),
    }
}

/// A table with rows `rows` (value = rowid * 10).
fn table(db: &Database, rows: &[i64]) -> PageNo {
    let w = db.begin_write(TIMEOUT).unwrap();
    let root = w.create_btree(BtreeKind::Table).unwrap();
    for &r in rows {
        w.table_insert(root, r, &val(r * 10)).unwrap();
    }
    w.commit().unwrap();
    root
}

fn is_conflict(r: parlite_storage::Result<()>, want: PageNo) -> bool {
    matches!(r, Err(StorageError::Conflict { root, .. }) if root == want)
}

#[test]
fn lost_update_is_refused_under_both_levels() {
    // C3: write-write; C4: the loser publishes nothing (the row holds the winner's value).
    for (name, db) in both() {
        for iso in [Isolation::Serializable, Isolation::Snapshot] {
            db.set_concurrent_isolation(iso);
            let root = table(&db, &[1]);
            let a = db.begin_concurrent().unwrap();
            let b = db.begin_concurrent().unwrap();
            for t in [&a, &b] {
                let v = get(t, root, 1).unwrap();
                t.table_insert(root, 1, &val(v + 1)).unwrap();
            }
            a.commit().unwrap();
            assert!(is_conflict(b.commit(), root), "{name} {iso:?}");
            assert_eq!(get(&db.begin_read().unwrap(), root, 1), Some(11));
            assert!(matches!(b.commit(), Err(StorageError::Misuse { .. })));
        }
        assert!(
            db.concurrency_stats()
                .conflicts_by_root
                .values()
                .sum::<u64>()
                >= 2
        );
    }
}

#[test]
fn write_skew_fails_only_under_serializable() {
    // C3: read validation.
    for (name, db) in both() {
        for iso in [Isolation::Serializable, Isolation::Snapshot] {
            let root = table(&db, &[1, 2]);
            let a = db.begin_concurrent().unwrap();
            let b = db.begin_concurrent().unwrap();
            a.set_isolation(iso).unwrap();
            b.set_isolation(iso).unwrap();
            for (t, target) in [(&a, 1), (&b, 2)] {
                let sum = get(t, root, 1).unwrap() + get(t, root, 2).unwrap();
                t.table_insert(root, target, &val(sum)).unwrap();
            }
            a.commit().unwrap();
            let r = b.commit();
            match iso {
                Isolation::Serializable => assert!(is_conflict(r, root), "{name}"),
                Isolation::Snapshot => r.unwrap(),
            }
        }
    }
}

#[test]
fn phantoms_fail_under_serializable() {
    for (name, db) in both() {
        // A range scan [10, 30] (stops at 30), a write elsewhere; B inserts 15 in the gap.
        let root = table(&db, &[10, 20, 30, 40]);
        let a = db.begin_concurrent().unwrap();
        let mut c = a.cursor(root, BtreeKind::Table, None).unwrap();
        let mut ok = c.seek_rowid(10, SeekOp::Ge).unwrap();
        let mut seen = 0;
        while ok && c.rowid().unwrap() <= 20 {
            seen += 1;
            ok = c.next().unwrap();
        }
        assert_eq!(seen, 2);
        a.table_insert(root, 1000, &val(0)).unwrap();
        let b = db.begin_concurrent().unwrap();
        b.table_insert(root, 15, &val(0)).unwrap();
        b.commit().unwrap();
        assert!(is_conflict(a.commit(), root), "{name}: range phantom");

        // Outside the scanned range: no conflict. The scan stopped at 30, so 35 is outside.
        let a = db.begin_concurrent().unwrap();
        let mut c = a.cursor(root, BtreeKind::Table, None).unwrap();
        assert!(c.seek_rowid(10, SeekOp::Ge).unwrap());
        assert!(c.next().unwrap());
        a.table_insert(root, 2000, &val(0)).unwrap();
        let b = db.begin_concurrent().unwrap();
        b.table_insert(root, 35, &val(0)).unwrap();
        b.commit().unwrap();
        a.commit().unwrap();

        // A backward scan from 40 down to 30 covers the gap 31..39.
        let a = db.begin_concurrent().unwrap();
        let mut c = a.cursor(root, BtreeKind::Table, None).unwrap();
        assert!(c.seek_rowid(40, SeekOp::Le).unwrap());
        assert!(c.prev().unwrap());
        assert_eq!(c.rowid().unwrap(), 35);
        a.table_insert(root, 3000, &val(0)).unwrap();
        let b = db.begin_concurrent().unwrap();
        b.table_insert(root, 38, &val(0)).unwrap();
        b.commit().unwrap();
        assert!(is_conflict(a.commit(), root), "{name}: backward range");

        // A point read of an absent key, then another commit inserts it.
        let a = db.begin_concurrent().unwrap();
        assert_eq!(get(&a, root, 50), None);
        a.table_insert(root, 4000, &val(0)).unwrap();
        let b = db.begin_concurrent().unwrap();
        b.table_insert(root, 50, &val(0)).unwrap();
        b.commit().unwrap();
        assert!(is_conflict(a.commit(), root), "{name}: point phantom");

        // Under Snapshot the range phantom commits.
        let a = db.begin_concurrent().unwrap();
        a.set_isolation(Isolation::Snapshot).unwrap();
        let mut c = a.cursor(root, BtreeKind::Table, None).unwrap();
        assert!(c.first().unwrap());
        while c.next().unwrap() {}
        a.table_insert(root, 5000, &val(0)).unwrap();
        let b = db.begin_concurrent().unwrap();
        b.table_insert(root, 16, &val(0)).unwrap();
        b.commit().unwrap();
        a.commit().unwrap();
    }
}

#[test]
fn disjoint_rows_on_one_page_both_commit() {
    for (name, db) in both() {
        let root = table(&db, &(1..=20).collect::<Vec<_>>());
        let before = db.concurrency_stats();
        let ts: Vec<Txn> = (0..5).map(|_| db.begin_concurrent().unwrap()).collect();
        for (i, t) in ts.iter().enumerate() {
            let row = i as i64 + 1;
            let v = get(t, root, row).unwrap();
            t.table_insert(root, row, &val(v + 1)).unwrap();
        }
        for t in &ts {
            t.commit().unwrap();
        }
        let r = db.begin_read().unwrap();
        for row in 1..=20 {
            let bump = (row <= 5) as i64;
            assert_eq!(
                get(&r, root, row),
                Some(row * 10 + bump),
                "{name} row {row}"
            );
        }
        let after = db.concurrency_stats();
        assert_eq!(after.concurrent_commits - before.concurrent_commits, 5);
        assert_eq!(
            after.concurrent_fast_commits - before.concurrent_fast_commits,
            1
        );
        assert_eq!(after.conflicts, before.conflicts);
        let errors = r.integrity_check(&[(root, BtreeKind::Table)], 10).unwrap();
        assert!(errors.is_empty(), "{errors:?}");
    }
}

#[test]
fn read_only_concurrent_never_fails_and_sees_its_snapshot() {
    for (name, db) in both() {
        let root = table(&db, &[1, 2, 3]);
        let ro = db.begin_concurrent().unwrap();
        assert_eq!(get(&ro, root, 1), Some(10));
        let w = db.begin_write(TIMEOUT).unwrap();
        w.table_insert(root, 1, &val(99)).unwrap();
        w.table_delete(root, 2).unwrap();
        w.commit().unwrap();
        assert_eq!(get(&ro, root, 1), Some(10), "{name}: snapshot");
        assert_eq!(ro.count(root).unwrap(), 3);
        ro.commit().unwrap();
    }
}

#[test]
fn lock_holding_writers_are_validated_against() {
    // T4/C1: begin_write and upgrade record their keys.
    for (name, db) in both() {
        let root = table(&db, &[1, 2]);
        let a = db.begin_concurrent().unwrap();
        assert_eq!(get(&a, root, 1), Some(10));
        a.table_insert(root, 2, &val(0)).unwrap();
        let u = db.begin_read().unwrap();
        u.upgrade(TIMEOUT).unwrap();
        u.table_insert(root, 1, &val(11)).unwrap();
        u.commit().unwrap();
        assert!(is_conflict(a.commit(), root), "{name}: upgrade");

        let a = db.begin_concurrent().unwrap();
        assert_eq!(get(&a, root, 1), Some(11));
        a.table_insert(root, 2, &val(0)).unwrap();
        let w = db.begin_write(TIMEOUT).unwrap();
        w.table_insert(root, 7, &val(70)).unwrap();
        w.commit().unwrap();
        a.commit().unwrap();
        assert_eq!(get(&db.begin_read().unwrap(), root, 2), Some(0));
        assert_eq!(get(&db.begin_read().unwrap(), root, 7), Some(70));
    }
}

fn cmp_prefix(stored: &[u8], probe: &[u8]) -> bool {
    RecordCompare::default().compare(stored, probe).unwrap() == std::cmp::Ordering::Equal
}

#[test]
fn index_ranges_and_schema_changes_conflict() {
    let cmp = RecordCompare::default();
    let shared: Arc<dyn parlite_storage::KeyCompare> = Arc::new(cmp.clone());
    let key = |a: i64, rowid: i64| encode(&[ValueRef::Integer(a), ValueRef::Integer(rowid)]);
    for (name, db) in both() {
        let w = db.begin_write(TIMEOUT).unwrap();
        let idx = w.create_btree(BtreeKind::Index).unwrap();
        for i in 0..50 {
            w.index_insert(idx, &key(i * 2, i), &cmp).unwrap();
        }
        w.commit().unwrap();
        // A reads every entry with first field 10 (a prefix probe, then next() until the
        // prefix ends at (12, 6)): an insert of (10, 99) lands in its range; an insert of
        // (41, 98) does not.
        let a = db.begin_concurrent().unwrap();
        let mut c = a
            .cursor(idx, BtreeKind::Index, Some(shared.clone()))
            .unwrap();
        let probe = encode(&[ValueRef::Integer(10)]);
        let mut ok = c.seek_key(&probe, SeekOp::Eq).unwrap();
        let mut n = 0;
        while ok && cmp_prefix(&c.record().unwrap(), &probe) {
            n += 1;
            ok = c.next().unwrap();
        }
        assert_eq!(n, 1);
        a.index_insert(idx, &key(1001, 1), &cmp).unwrap();
        let b = db.begin_concurrent().unwrap();
        b.index_insert(idx, &key(41, 98), &cmp).unwrap();
        b.commit().unwrap();
        let d = db.begin_concurrent().unwrap();
        a.index_insert(idx, &key(1002, 2), &cmp).unwrap();
        d.index_insert(idx, &key(10, 99), &cmp).unwrap();
        d.commit().unwrap();
        assert!(is_conflict(a.commit(), idx), "{name}: index range");
        let r = db.begin_read().unwrap();
        assert_eq!(r.count(idx).unwrap(), 52);

        // Clearing a tree another transaction wrote: conflict.
        let root = table(&db, &[1]);
        let a = db.begin_concurrent().unwrap();
        a.table_insert(root, 2, &val(2)).unwrap();
        let w = db.begin_write(TIMEOUT).unwrap();
        w.clear_btree(root).unwrap();
        w.commit().unwrap();
        assert!(is_conflict(a.commit(), root), "{name}: clear");

        // Two transactions creating a tree get the same page in their views: the second
        // one's replay would move it, so it conflicts (C5).
        let a = db.begin_concurrent().unwrap();
        let b = db.begin_concurrent().unwrap();
        let ra = a.create_btree(BtreeKind::Table).unwrap();
        let rb = b.create_btree(BtreeKind::Table).unwrap();
        assert_eq!(ra, rb);
        a.commit().unwrap();
        assert!(is_conflict(b.commit(), rb), "{name}: create");

        // A header field read, then set by a later commit.
        let a = db.begin_concurrent().unwrap();
        a.header().unwrap();
        a.table_insert(root, 3, &val(3)).unwrap();
        let w = db.begin_write(TIMEOUT).unwrap();
        w.set_header_field(parlite_storage::HeaderField::UserVersion, 5)
            .unwrap();
        w.commit().unwrap();
        assert!(is_conflict(a.commit(), PageNo(1)), "{name}: header");
        let r = db.begin_read().unwrap();
        let errors = r
            .integrity_check(
                &[
                    (idx, BtreeKind::Index),
                    (root, BtreeKind::Table),
                    (ra, BtreeKind::Table),
                ],
                10,
            )
            .unwrap();
        assert!(errors.is_empty(), "{name}: {errors:?}");
    }
}

#[test]
fn detached_views_cannot_commit_without_the_lock() {
    // P5 / C6 (pager K4 on the file backend).
    for (name, db) in both() {
        let v = db.backend().begin_detached().unwrap();
        assert!(
            matches!(v.commit(), Err(StorageError::Misuse { .. })),
            "{name}"
        );
        // attach_writer on a stale view says so and releases the lock.
        let mut v = db.backend().begin_detached().unwrap();
        let w = db.begin_write(TIMEOUT).unwrap();
        w.create_btree(BtreeKind::Table).unwrap();
        w.commit().unwrap();
        assert!(!v.attach_writer(TIMEOUT).unwrap());
        db.begin_write(Duration::ZERO).unwrap().rollback();
        v.rollback();
    }
}

#[test]
fn history_is_pruned_when_no_concurrent_txn_is_live() {
    // C2: memory bound.
    let db = mem_db();
    let root = table(&db, &[1]);
    let old = db.begin_concurrent().unwrap();
    for i in 0..20 {
        let w = db.begin_write(TIMEOUT).unwrap();
        w.table_insert(root, 100 + i, &val(i)).unwrap();
        w.commit().unwrap();
    }
    assert!(db.concurrent_history_len() >= 20);
    drop(old);
    assert!(db.concurrent_history_len() <= 1);
}

/// A commit that changes nothing (deleting a missing row) writes no frame, so the next
/// commit has the same sequence number; found by
/// `committed_transactions_are_serializable_in_commit_order` (PARLITE_SEED=7816204700585740158).
#[test]
fn history_after_a_commit_that_changed_nothing() {
    let db = mem_db();
    let root = table(&db, &[1]);
    let t = db.begin_concurrent().unwrap();
    assert!(!t.table_delete(root, 99).unwrap());
    t.commit().unwrap();
    let t = db.begin_concurrent().unwrap();
    t.table_insert(root, 2, &val(2)).unwrap();
    t.commit().unwrap();
    assert!(db.concurrent_history_len() <= 1);
}

/// One transfer of `amount` from `a` to `b` in `t`; the caller commits.
fn transfer(t: &Txn, root: PageNo, a: i64, b: i64, amount: i64) -> parlite_storage::Result<()> {
    let mut c = t.cursor(root, BtreeKind::Table, None)?;
    let mut balance = |row: i64| -> parlite_storage::Result<i64> {
        assert!(c.seek_rowid(row, SeekOp::Eq)?);
        match decode(&c.record()?)?[0] {
            ValueRef::Integer(v) => Ok(v),
            _ => panic!("balance is not an integer"),
        }
    };
    let (ba, bb) = (balance(a)?, balance(b)?);
    t.table_insert(root, a, &val(ba - amount))?;
    t.table_insert(root, b, &val(bb + amount))
}

const ACCOUNTS: i64 = 200;
const START: i64 = 1000;

fn sum_all(t: &Txn, root: PageNo) -> i64 {
    let mut c = t.cursor(root, BtreeKind::Table, None).unwrap();
    let mut ok = c.first().unwrap();
    let mut total = 0;
    while ok {
        if let ValueRef::Integer(v) = decode(&c.record().unwrap()).unwrap()[0] {
            total += v;
        }
        ok = c.next().unwrap();
    }
    total
}

fn bank(name: &str, db: Database, seed: u64, run: Duration) {
    let root = table(&db, &[]);
    let w = db.begin_write(TIMEOUT).unwrap();
    for a in 0..ACCOUNTS {
        w.table_insert(root, a, &val(START)).unwrap();
    }
    w.commit().unwrap();
    let stats0 = db.concurrency_stats();
    let committed = Arc::new(Mutex::new(Vec::<(i64, i64, i64)>::new()));
    let successes = Arc::new(AtomicU64::new(0));
    let retries = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + run;
    let threads: Vec<_> = (0..8u64)
        .map(|i| {
            let (db, committed, successes, retries) = (
                db.clone(),
                committed.clone(),
                successes.clone(),
                retries.clone(),
            );
            std::thread::spawn(move || {
                let mut rng = StdRng::seed_from_u64(seed.wrapping_add(i));
                while Instant::now() < deadline {
                    let a = rng.gen_range(0..ACCOUNTS);
                    let b = (a + rng.gen_range(1..ACCOUNTS)) % ACCOUNTS;
                    let amount = rng.gen_range(1..50);
                    let kind = rng.gen_range(0..10);
                    if kind == 9 {
                        // An audit: a read-only concurrent txn sees a consistent total.
                        let t = db.begin_concurrent().unwrap();
                        assert_eq!(sum_all(&t, root), ACCOUNTS * START);
                        t.commit().unwrap();
                        continue;
                    }
                    loop {
                        let t = match kind {
                            0..=5 => db.begin_concurrent().unwrap(),
                            6 | 7 => db.begin_write(TIMEOUT).unwrap(),
                            _ => db.begin_read().unwrap(),
                        };
                        let mut r = transfer_or_upgrade(&t, root, a, b, amount, kind == 8);
                        if kind < 2 {
                            // Let other commits come in between: exercises validation and
                            // replay rather than the fast path.
                            std::thread::sleep(Duration::from_micros(100));
                        }
                        if r.is_ok() {
                            r = t.commit();
                        } else {
                            t.rollback();
                        }
                        match r {
                            Ok(()) => {
                                committed.lock().unwrap().push((a, b, amount));
                                successes.fetch_add(1, Ordering::Relaxed);
                                break;
                            }
                            Err(StorageError::Conflict { .. })
                            | Err(StorageError::BusySnapshot { .. })
                            | Err(StorageError::Busy { .. }) => {
                                retries.fetch_add(1, Ordering::Relaxed);
                            }
                            Err(e) => panic!("seed {seed}: {e}"),
                        }
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let log = committed.lock().unwrap().clone();
    assert_eq!(log.len() as u64, successes.load(Ordering::Relaxed));
    let mut model: BTreeMap<i64, i64> = (0..ACCOUNTS).map(|a| (a, START)).collect();
    for &(a, b, amount) in &log {
        *model.get_mut(&a).unwrap() -= amount;
        *model.get_mut(&b).unwrap() += amount;
    }
    let r = db.begin_read().unwrap();
    assert_eq!(sum_all(&r, root), ACCOUNTS * START, "{name} seed {seed}");
    for (&a, &want) in &model {
        assert_eq!(
            get(&r, root, a),
            Some(want),
            "{name} seed {seed}: account {a}"
        );
    }
    let errors = r.integrity_check(&[(root, BtreeKind::Table)], 10).unwrap();
    assert!(errors.is_empty(), "{name} seed {seed}: {errors:?}");
    let s = db.concurrency_stats();
    let commits = (s.concurrent_commits - stats0.concurrent_commits)
        + (s.locked_commits - stats0.locked_commits);
    assert_eq!(
        commits,
        log.len() as u64,
        "{name} seed {seed}: commit counters"
    );
    assert!(s.concurrent_commits > stats0.concurrent_commits);
    eprintln!(
        "{name}: {} transfers ({} concurrent: {} fast path, {} rebased outside the lock, {} replayed under it), {} conflicts, {} retries",
        log.len(),
        s.concurrent_commits - stats0.concurrent_commits,
        s.concurrent_fast_commits - stats0.concurrent_fast_commits,
        s.concurrent_rebased_commits - stats0.concurrent_rebased_commits,
        (s.concurrent_commits - stats0.concurrent_commits)
            - (s.concurrent_fast_commits - stats0.concurrent_fast_commits)
            - (s.concurrent_rebased_commits - stats0.concurrent_rebased_commits),
        s.conflicts,
        retries.load(Ordering::Relaxed)
    );
    assert!(db.concurrent_history_len() <= 1);
}

fn transfer_or_upgrade(
    t: &Txn,
    root: PageNo,
    a: i64,
    b: i64,
    amount: i64,
    upgrade: bool,
) -> parlite_storage::Result<()> {
    if upgrade {
        // Read first, then become the writer (BusySnapshot if a commit came in between).
        get(t, root, a);
        t.upgrade(TIMEOUT)?;
    }
    transfer(t, root, a, b, amount)
}

#[test]
fn bank_invariant_on_memory() {
    bank("mem", mem_db(), seed(), Duration::from_millis(1500));
}

#[test]
fn bank_invariant_on_a_file_database() {
    let disk = SimVfs::new(11);
    let db = file_db(&disk, Synchronous::Full).unwrap();
    bank("file", db, seed(), Duration::from_millis(1500));
}

/// Concurrent commits on a simulated disk that fails from a random I/O call on, then a power
/// loss: after reopening, the table holds exactly the acknowledged commits, plus perhaps the
/// one in flight.
#[test]
fn crash_keeps_exactly_the_acknowledged_concurrent_commits() {
    let base = seed();
    for case in 0..120u64 {
        let seed = base.wrapping_add(case);
        let mut rng = StdRng::seed_from_u64(seed);
        let disk = SimVfs::new(seed);
        let db = file_db(&disk, Synchronous::Full).unwrap();
        let root = table(&db, &[]);
        disk.fail_from(disk.io_calls() + rng.gen_range(0..200));
        let mut acked: BTreeMap<i64, i64> = BTreeMap::new();
        let mut in_flight: Option<BTreeMap<i64, i64>> = None;
        'run: for round in 0..20i64 {
            let n = rng.gen_range(1..4);
            let mut txns = Vec::new();
            for k in 0..n {
                let Ok(t) = db.begin_concurrent() else {
                    break 'run;
                };
                let mut rows = Vec::new();
                for j in 0..rng.gen_range(1..6) {
                    let row = round * 100 + k * 10 + j;
                    let v = rng.gen_range(0..1_000_000);
                    if t.table_insert(root, row, &val(v)).is_err() {
                        break 'run;
                    }
                    rows.push((row, v));
                }
                txns.push((t, rows));
            }
            for (t, rows) in txns {
                let mut next = acked.clone();
                next.extend(rows.iter().copied());
                match t.commit() {
                    Ok(()) => acked = next,
                    Err(StorageError::Conflict { .. }) => panic!("seed {seed}: disjoint rows"),
                    Err(_) => {
                        in_flight = Some(next);
                        break 'run;
                    }
                }
            }
        }
        let after = disk.crash(seed ^ 0xC0C0, CrashMode::PowerLoss);
        drop(db);
        let db = file_db(&after, Synchronous::Full).unwrap();
        let r = db.begin_read().unwrap();
        let mut got = BTreeMap::new();
        let mut c = r.cursor(root, BtreeKind::Table, None).unwrap();
        let mut ok = c.first().unwrap();
        while ok {
            if let ValueRef::Integer(v) = decode(&c.record().unwrap()).unwrap()[0] {
                got.insert(c.rowid().unwrap(), v);
            }
            ok = c.next().unwrap();
        }
        assert!(
            got == acked || in_flight.as_ref() == Some(&got),
            "seed {seed}: {} rows recovered, {} acknowledged",
            got.len(),
            acked.len()
        );
        let errors = r.integrity_check(&[(root, BtreeKind::Table)], 10).unwrap();
        assert!(errors.is_empty(), "seed {seed}: {errors:?}");
    }
}

#[test]
fn savepoint_rollback_drops_the_undone_operations_from_the_replay() {
    for (name, db) in both() {
        let root = table(&db, &[]);
        let a = db.begin_concurrent().unwrap();
        a.table_insert(root, 1, &val(1)).unwrap();
        let sp = a.savepoint().unwrap();
        a.table_insert(root, 2, &val(2)).unwrap();
        a.rollback_to(sp).unwrap();
        a.release(sp).unwrap();
        a.table_insert(root, 3, &val(3)).unwrap();
        // Another commit first, so `a` goes through validation and replay (C5).
        let b = db.begin_concurrent().unwrap();
        b.table_insert(root, 9, &val(9)).unwrap();
        b.commit().unwrap();
        a.commit().unwrap();
        let r = db.begin_read().unwrap();
        let rows: Vec<_> = [1, 2, 3, 9].iter().map(|&k| get(&r, root, k)).collect();
        assert_eq!(rows, vec![Some(1), None, Some(3), Some(9)], "{name}");
    }
}

#[test]
fn busy_commit_and_opaque_writers() {
    for (name, db) in both() {
        let root = table(&db, &[1]);
        // A lock-holding writer that began before any concurrent transaction records no
        // keys: its commit is opaque to the concurrent transactions it overlaps (C3).
        let w = db.begin_write(TIMEOUT).unwrap();
        let a = db.begin_concurrent().unwrap();
        a.table_insert(root, 2, &val(2)).unwrap();
        // The writer holds the lock: the commit waits, then gives up.
        db.set_concurrent_busy_timeout(Duration::from_millis(20));
        assert!(
            matches!(a.commit(), Err(StorageError::Busy { .. })),
            "{name}"
        );
        // T3: still open after Busy.
        assert_eq!(get(&a, root, 2), Some(2));
        w.table_insert(root, 5, &val(5)).unwrap();
        w.commit().unwrap();
        db.set_concurrent_busy_timeout(TIMEOUT);
        assert!(is_conflict(a.commit(), PageNo(1)), "{name}: opaque");
        // From now on writers record their keys: a disjoint write commits.
        let a = db.begin_concurrent().unwrap();
        a.table_insert(root, 2, &val(2)).unwrap();
        let w = db.begin_write(TIMEOUT).unwrap();
        w.table_insert(root, 6, &val(6)).unwrap();
        w.commit().unwrap();
        a.commit().unwrap();
    }
}

#[test]
fn rebase_outside_the_lock_keeps_the_own_view_until_it_commits() {
    // C7: a stale transaction is validated and replayed onto the latest snapshot before it
    // takes the writer lock. A `Busy` at the lock leaves the transaction on its own view
    // (T3): it still reads its snapshot, not the rebased state.
    for (name, db) in both() {
        let root = table(&db, &[1, 2, 3]);
        let s0 = db.concurrency_stats();
        let t = db.begin_concurrent().unwrap();
        assert_eq!(get(&t, root, 1), Some(10));
        t.table_insert(root, 1, &val(11)).unwrap();
        let u = db.begin_concurrent().unwrap();
        u.table_insert(root, 2, &val(21)).unwrap();
        u.commit().unwrap();
        let w = db.begin_write(TIMEOUT).unwrap();
        db.set_concurrent_busy_timeout(Duration::from_millis(20));
        assert!(
            matches!(t.commit(), Err(StorageError::Busy { .. })),
            "{name}"
        );
        assert_eq!(get(&t, root, 1), Some(11), "{name}: own write after Busy");
        assert_eq!(get(&t, root, 3), Some(30), "{name}");
        // The lock holder adds a row t did not see; t rebases again and commits.
        w.table_insert(root, 4, &val(40)).unwrap();
        w.commit().unwrap();
        db.set_concurrent_busy_timeout(TIMEOUT);
        t.commit().unwrap();
        let r = db.begin_read().unwrap();
        let rows: Vec<_> = (1..=4).map(|k| get(&r, root, k)).collect();
        assert_eq!(rows, [Some(11), Some(21), Some(30), Some(40)], "{name}");
        let s1 = db.concurrency_stats();
        assert_eq!(s1.concurrent_commits - s0.concurrent_commits, 2, "{name}");
        assert_eq!(
            s1.concurrent_rebased_commits - s0.concurrent_rebased_commits,
            1,
            "{name}"
        );
        assert_eq!(s1.conflicts, s0.conflicts, "{name}");
        // After a Busy the transaction reads its own snapshot (row 2 as it was), and that
        // read is validated: the commit that changed row 2 makes it a conflict.
        let t = db.begin_concurrent().unwrap();
        t.table_insert(root, 1, &val(12)).unwrap();
        let u = db.begin_concurrent().unwrap();
        u.table_insert(root, 2, &val(22)).unwrap();
        u.commit().unwrap();
        let w = db.begin_write(TIMEOUT).unwrap();
        db.set_concurrent_busy_timeout(Duration::from_millis(20));
        assert!(matches!(t.commit(), Err(StorageError::Busy { .. })));
        assert_eq!(
            get(&t, root, 2),
            Some(21),
            "{name}: own snapshot after Busy"
        );
        w.rollback();
        db.set_concurrent_busy_timeout(TIMEOUT);
        assert!(is_conflict(t.commit(), root), "{name}");
        let r = db.begin_read().unwrap();
        assert_eq!(get(&r, root, 1), Some(11), "{name}");
        let errors = r.integrity_check(&[(root, BtreeKind::Table)], 10).unwrap();
        assert!(errors.is_empty(), "{name}: {errors:?}");
    }
}

#[test]
fn rebase_conflicts_publish_nothing() {
    // C7 + C4: a conflict found while rebasing (outside the lock) rolls back; a later
    // commit the rebase did not see (one between its snapshot and the lock) is caught too.
    for (name, db) in both() {
        let root = table(&db, &[1, 2, 3]);
        // Found during the rebase: u wrote a row t read.
        let t = db.begin_concurrent().unwrap();
        assert_eq!(get(&t, root, 1), Some(10));
        t.table_insert(root, 2, &val(22)).unwrap();
        let u = db.begin_concurrent().unwrap();
        u.table_insert(root, 1, &val(11)).unwrap();
        u.commit().unwrap();
        let before = db.concurrency_stats().conflicts;
        assert!(is_conflict(t.commit(), root), "{name}");
        assert_eq!(db.concurrency_stats().conflicts, before + 1, "{name}");
        assert!(matches!(t.commit(), Err(StorageError::Misuse { .. })));
        assert_eq!(get(&db.begin_read().unwrap(), root, 2), Some(20), "{name}");
        // A chain of stale commits: each rebases over the ones before it.
        let ts: Vec<Txn> = (0..4).map(|_| db.begin_concurrent().unwrap()).collect();
        for (i, t) in ts.iter().enumerate() {
            t.table_insert(root, 10 + i as i64, &val(i as i64)).unwrap();
        }
        for t in &ts {
            t.commit().unwrap();
        }
        let r = db.begin_read().unwrap();
        for i in 0..4 {
            assert_eq!(get(&r, root, 10 + i), Some(i), "{name}");
        }
        assert!(db.concurrent_history_len() <= 1, "{name}");
    }
}

/// A comparator that cannot be kept for the replay.
struct Borrowed;

impl parlite_storage::KeyCompare for Borrowed {
    fn compare(&self, stored: &[u8], probe: &[u8]) -> parlite_storage::Result<std::cmp::Ordering> {
        RecordCompare::default().compare(stored, probe)
    }
}

#[test]
fn index_writes_need_a_shareable_comparator() {
    let db = mem_db();
    let w = db.begin_write(TIMEOUT).unwrap();
    let idx = w.create_btree(BtreeKind::Index).unwrap();
    w.index_insert(idx, &val(1), &Borrowed).unwrap();
    w.commit().unwrap();
    let a = db.begin_concurrent().unwrap();
    assert!(matches!(
        a.index_insert(idx, &val(2), &Borrowed),
        Err(StorageError::Misuse { .. })
    ));
    a.index_insert(idx, &val(2), &RecordCompare::default())
        .unwrap();
    a.commit().unwrap();
    assert_eq!(db.begin_read().unwrap().count(idx).unwrap(), 2);
}

/// One step of a transaction in the serializability check, with what it observed.
#[derive(Clone, Debug)]
enum Step {
    Get(i64, Option<i64>),
    /// Rows in [lo, hi], ascending, as a forward or backward scan saw them.
    Scan(i64, i64, Vec<(i64, i64)>),
    Put(i64, i64),
    Del(i64),
}

/// Replays `steps` on `state`: false if a read would see something else there.
fn replays(state: &mut BTreeMap<i64, i64>, steps: &[Step]) -> bool {
    for s in steps {
        match s {
            Step::Get(k, v) => {
                if state.get(k).copied() != *v {
                    return false;
                }
            }
            Step::Scan(lo, hi, rows) => {
                let now: Vec<(i64, i64)> = state.range(lo..=hi).map(|(&k, &v)| (k, v)).collect();
                if now != *rows {
                    return false;
                }
            }
            Step::Put(k, v) => {
                state.insert(*k, *v);
            }
            Step::Del(k) => {
                state.remove(k);
            }
        }
    }
    true
}

fn scan(t: &Txn, root: PageNo, lo: i64, hi: i64, backward: bool) -> Vec<(i64, i64)> {
    let mut c = t.cursor(root, BtreeKind::Table, None).unwrap();
    let mut rows = Vec::new();
    let value = |c: &parlite_storage::Cursor| match decode(&c.record().unwrap()).unwrap()[0] {
        ValueRef::Integer(v) => v,
        _ => panic!("not an integer"),
    };
    if backward {
        let mut ok = c.seek_rowid(hi, SeekOp::Le).unwrap();
        while ok && c.rowid().unwrap() >= lo {
            rows.push((c.rowid().unwrap(), value(&c)));
            ok = c.prev().unwrap();
        }
        rows.reverse();
    } else {
        let mut ok = c.seek_rowid(lo, SeekOp::Ge).unwrap();
        while ok && c.rowid().unwrap() <= hi {
            rows.push((c.rowid().unwrap(), value(&c)));
            ok = c.next().unwrap();
        }
    }
    rows
}

/// C3 soundness: random interleavings of concurrent transactions (and lock-holding writers)
/// over one table. Every commit that passes must be equivalent to running the whole
/// transaction at its commit point: replaying its observed reads and writes on the model
/// state of that moment reproduces every read. At the end the table equals the model.
#[test]
fn committed_transactions_are_serializable_in_commit_order() {
    let base = seed();
    for (name, db) in both() {
        let mut totals = (0, 0);
        for case in 0..40u64 {
            let seed = base.wrapping_add(case);
            let mut rng = StdRng::seed_from_u64(seed);
            let keys = rng.gen_range(8..40i64);
            let root = table(&db, &[]);
            let mut model = BTreeMap::new();
            // Each open transaction: itself, its steps, the model at its snapshot.
            let mut open: Vec<(Txn, Vec<Step>, BTreeMap<i64, i64>)> = Vec::new();
            let (mut commits, mut conflicts) = (0, 0);
            for _ in 0..300 {
                let roll = rng.gen_range(0..100);
                if open.is_empty() || (roll < 10 && open.len() < 4) {
                    open.push((db.begin_concurrent().unwrap(), Vec::new(), model.clone()));
                    continue;
                }
                if roll < 14 {
                    // A lock-holding writer, all at once, on the latest state.
                    let w = db.begin_write(TIMEOUT).unwrap();
                    let k = rng.gen_range(0..keys);
                    let v = get(&w, root, k).unwrap_or(0) + 1;
                    w.table_insert(root, k, &val(v)).unwrap();
                    w.commit().unwrap();
                    model.insert(k, v);
                    continue;
                }
                let i = rng.gen_range(0..open.len());
                let (t, steps, _) = &mut open[i];
                match roll {
                    14..=35 => {
                        let k = rng.gen_range(0..keys);
                        steps.push(Step::Get(k, get(t, root, k)));
                    }
                    36..=50 => {
                        let lo = rng.gen_range(0..keys);
                        let hi = lo + rng.gen_range(0..6);
                        let rows = scan(t, root, lo, hi, rng.gen_bool(0.5));
                        steps.push(Step::Scan(lo, hi, rows));
                    }
                    51..=75 => {
                        let (k, v) = (rng.gen_range(0..keys), rng.gen_range(0..1000));
                        t.table_insert(root, k, &val(v)).unwrap();
                        steps.push(Step::Put(k, v));
                    }
                    76..=82 => {
                        let k = rng.gen_range(0..keys);
                        t.table_delete(root, k).unwrap();
                        steps.push(Step::Del(k));
                    }
                    _ => {
                        let (t, steps, at_snapshot) = open.swap_remove(i);
                        let read_only = steps
                            .iter()
                            .all(|s| matches!(s, Step::Get(..) | Step::Scan(..)));
                        // A read-only transaction is serialized at its snapshot (it never
                        // fails); a writer at its commit point.
                        let mut next = if read_only {
                            at_snapshot
                        } else {
                            model.clone()
                        };
                        let serial = replays(&mut next, &steps);
                        match t.commit() {
                            Ok(()) => {
                                assert!(
                                    serial,
                                    "{name} seed {seed}: a committed transaction is not serializable: {steps:?}"
                                );
                                if !read_only {
                                    model = next;
                                }
                                commits += 1;
                            }
                            Err(StorageError::Conflict { .. }) => conflicts += 1,
                            Err(e) => panic!("{name} seed {seed}: {e}"),
                        }
                    }
                }
            }
            for (t, _, _) in open.drain(..) {
                t.rollback();
            }
            let r = db.begin_read().unwrap();
            let all = scan(&r, root, i64::MIN, i64::MAX, false);
            let want: Vec<(i64, i64)> = model.iter().map(|(&k, &v)| (k, v)).collect();
            assert_eq!(all, want, "{name} seed {seed}: final state");
            assert!(commits + conflicts > 0);
            totals.0 += commits;
            totals.1 += conflicts;
        }
        eprintln!("{name}: {} commits, {} conflicts", totals.0, totals.1);
        assert!(db.concurrent_history_len() <= 1, "{name}");
    }
}
