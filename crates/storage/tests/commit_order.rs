//! A commit is published before its frame is written, and its writer lock is released in
//! between (pager L1, docs/log-and-recovery.md commit steps 3–5): the next writer may read
//! and build on a commit whose frame is not in the log yet. These tests hold the promises
//! that must survive that order:
//! - frames reach the log in commit order, without gaps, whatever thread writes them;
//! - when a frame's write fails (D2), nothing committed on top of it is logged or
//!   acknowledged, and no checkpoint writes its pages (checkpoint.rs B9);
//! - after a crash, the database holds exactly a prefix of the commit order, containing
//!   every acknowledged commit the crash cannot take (`Full` ones always, all after a
//!   process crash).
//!
//! Writers of both kinds (`BEGIN IMMEDIATE` and `BEGIN CONCURRENT`) each commit under
//! `Full` or `Normal`; every commit reads a counter row, writes it + 1 and inserts a row
//! keyed by the new value naming the commit, so the commit order is written into the data
//! and a hole in it shows as a missing row. A reader checks every snapshot it takes. The
//! simulated disk fails one call, or every call from one on, then loses power or the
//! process dies; writes are slowed in half of the cases so that other threads act between
//! a publication and its frame's write.
//!
//! Replay a failure: `PARLITE_SEED=1234 cargo test -p parlite-storage --test commit_order`.

use parlite_storage::record::{decode, encode};
use parlite_storage::vfs::{CrashMode, SimVfs};
use parlite_storage::{
    BtreeKind, Database, OpenOptions, PageNo, PagerConfig, SeekOp, StorageError, Synchronous, Txn,
    ValueRef,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(5);
const PATH: &str = "/order.db";
const WRITERS: i64 = 4;
const TXNS_PER_WRITER: i64 = 120;
const CASES: u64 = 150;
/// The counter's row; commit number `n` (counted from 1) inserts row `n`.
const COUNTER: i64 = 0;

fn seed() -> u64 {
    let s = std::env::var("PARLITE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random);
    eprintln!("seed = {s} (replay with PARLITE_SEED={s})");
    s
}

fn open(disk: &SimVfs, sync: Synchronous, config: PagerConfig) -> Database {
    let opts = OpenOptions {
        page_size: 1024,
        synchronous: sync,
        ..OpenOptions::default()
    };
    Database::open_with_config(Arc::new(disk.clone()), PATH, opts, config).unwrap()
}

fn int(v: i64) -> Vec<u8> {
    encode(&[ValueRef::Integer(v)])
}

fn ints(t: &Txn, root: PageNo) -> parlite_storage::Result<BTreeMap<i64, Vec<i64>>> {
    let mut out = BTreeMap::new();
    let mut c = t.cursor(root, BtreeKind::Table, None)?;
    let mut more = c.first()?;
    while more {
        let values = decode(&c.record()?)?
            .iter()
            .map(|v| match v {
                ValueRef::Integer(i) => *i,
                other => panic!("not an integer: {other:?}"),
            })
            .collect();
        out.insert(c.rowid()?, values);
        more = c.next()?;
    }
    Ok(out)
}

fn counter(t: &Txn, root: PageNo) -> parlite_storage::Result<i64> {
    let mut c = t.cursor(root, BtreeKind::Table, None)?;
    if !c.seek_rowid(COUNTER, SeekOp::Eq)? {
        panic!("the counter row is missing");
    }
    match decode(&c.record()?)?[0] {
        ValueRef::Integer(v) => Ok(v),
        _ => panic!("the counter is not an integer"),
    }
}

/// One commit attempt: which writer's which transaction, whether it had to survive a power
/// loss once acknowledged, and the counter value it wrote (its place in the commit order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Attempt {
    writer: i64,
    txn: i64,
    full: bool,
    number: i64,
}

/// What the writers saw, for the checks after recovery.
#[derive(Default)]
struct Log {
    acked: Vec<Attempt>,
    failed: Vec<(Attempt, StorageError)>,
    /// Errors that no injected fault explains (anything but `Io`/`ReadOnly`, or before the
    /// disk's failing call), with the disk's call count when they came.
    spurious: Vec<(Attempt, StorageError, u64)>,
}

/// Runs transaction `txn` of `writer` until it commits or fails for good (conflicts and
/// `Busy` are retried); returns the attempt and the error, if any.
fn run_txn(
    db: &Database,
    root: PageNo,
    writer: i64,
    txn: i64,
    concurrent: bool,
    full: bool,
) -> (Attempt, Option<StorageError>) {
    let mut attempt = Attempt {
        writer,
        txn,
        full,
        number: 0,
    };
    loop {
        let r = (|| {
            let t = if concurrent {
                db.begin_concurrent()?
            } else {
                db.begin_write(TIMEOUT)?
            };
            attempt.number = counter(&t, root)? + 1;
            t.table_insert(root, COUNTER, &int(attempt.number))?;
            t.table_insert(
                root,
                attempt.number,
                &encode(&[ValueRef::Integer(writer), ValueRef::Integer(txn)]),
            )?;
            t.set_synchronous(if full {
                Synchronous::Full
            } else {
                Synchronous::Normal
            });
            t.commit()
        })();
        match r {
            Ok(()) => return (attempt, None),
            Err(StorageError::Conflict { .. } | StorageError::Busy { .. }) => continue,
            Err(e) => return (attempt, Some(e)),
        }
    }
}

/// Whether `e` is the failed write of a commit's own frame (D2).
fn is_frame_write(e: &StorageError) -> bool {
    matches!(e, StorageError::Io { op: "pwrite", path, .. } if path.contains("-plog"))
}

#[test]
fn many_writers_crash_between_publication_and_write_leave_a_prefix_of_the_commit_order() {
    let base = seed();
    let (mut frame_write_failures, mut built_on_unlogged, mut lost_reads) = (0, 0, 0);
    let mut checkpoints = 0;
    for case in 0..CASES {
        let seed = base.wrapping_add(case);
        let mut rng = StdRng::seed_from_u64(seed);
        let disk = SimVfs::new(seed);
        let config = PagerConfig {
            checkpoint_log_bytes: rng.gen_range(2..16) << 10,
            checkpoint_dirty_percent: 50,
            backpressure_dirty_percent: 100,
            background_checkpoint: true,
        };
        let db_sync = if rng.gen_bool(0.5) {
            Synchronous::Full
        } else {
            Synchronous::Normal
        };
        let db = open(&disk, db_sync, config.clone());
        let root = {
            let t = db.begin_write(TIMEOUT).unwrap();
            let root = t.create_btree(BtreeKind::Table).unwrap();
            t.table_insert(root, COUNTER, &int(0)).unwrap();
            t.set_synchronous(Synchronous::Full);
            t.commit().unwrap();
            root
        };
        if rng.gen_bool(0.5) {
            disk.set_write_delay(Duration::from_micros(rng.gen_range(10..80)));
        }
        let fault = disk.io_calls() + rng.gen_range(20..700);
        let disk_dies = rng.gen_bool(0.5);
        if disk_dies {
            disk.fail_from(fault);
        } else {
            disk.fail_at(fault);
        }
        let log = Arc::new(Mutex::new(Log::default()));
        let writing = Arc::new(AtomicBool::new(true));
        let writers: Vec<_> = (0..WRITERS)
            .map(|writer| {
                let (db, log, disk) = (db.clone(), Arc::clone(&log), disk.clone());
                let mut rng = StdRng::seed_from_u64(seed ^ ((writer as u64 + 1) << 32));
                std::thread::spawn(move || {
                    for txn in 0..TXNS_PER_WRITER {
                        let (concurrent, full) = (rng.gen_bool(0.5), rng.gen_bool(0.5));
                        let (attempt, err) = run_txn(&db, root, writer, txn, concurrent, full);
                        let mut log = log.lock().unwrap();
                        let Some(e) = err else {
                            log.acked.push(attempt);
                            continue;
                        };
                        let calls = disk.io_calls();
                        let explained = calls > fault
                            && matches!(e, StorageError::Io { .. } | StorageError::ReadOnly { .. });
                        if !explained {
                            log.spurious.push((attempt, e.clone(), calls));
                        }
                        log.failed.push((attempt, e));
                        return;
                    }
                })
            })
            .collect();
        // The reader: every snapshot holds rows 1..=counter exactly (a commit is published
        // whole); the highest counter it saw, to tell whether it read a commit the crash
        // then took.
        let reader = {
            let (db, writing) = (db.clone(), Arc::clone(&writing));
            std::thread::spawn(move || {
                let mut seen = 0;
                while writing.load(Ordering::Acquire) {
                    let Ok(t) = db.begin_read() else { break };
                    let Ok(rows) = ints(&t, root) else { continue };
                    let n = rows[&COUNTER][0];
                    assert!(
                        rows.keys().copied().eq(0..=n),
                        "seed {seed}: a snapshot with counter {n} holds rows {:?}",
                        rows.keys().collect::<Vec<_>>()
                    );
                    seen = seen.max(n);
                }
                seen
            })
        };
        for w in writers {
            w.join().unwrap();
        }
        writing.store(false, Ordering::Release);
        let seen = reader.join().unwrap();
        checkpoints += db.stats().checkpoints;
        let mode = if rng.gen_bool(0.5) {
            CrashMode::PowerLoss
        } else {
            CrashMode::ProcessCrash
        };
        let after = disk.crash(seed ^ 0x0D3E, mode);
        drop(db);

        let log = log.lock().unwrap();
        let what = format!(
            "seed {seed}: {mode:?}, database {db_sync:?}, fault at call {fault} (disk dies: \
             {disk_dies}), {} acknowledged, failed {:?}",
            log.acked.len(),
            log.failed
        );
        assert!(
            log.spurious.is_empty(),
            "{what}: errors no injected fault explains: {:?}",
            log.spurious
        );
        let mut acked_at: BTreeMap<i64, Attempt> = BTreeMap::new();
        for a in &log.acked {
            let dup = acked_at.insert(a.number, *a);
            assert!(dup.is_none(), "{what}: two commits numbered {}", a.number);
        }
        for (a, e) in &log.failed {
            if is_frame_write(e) {
                frame_write_failures += 1;
                // Writers whose transaction read this commit (published, never logged) and
                // failed at their commit: they built on it, and nothing of theirs may stay.
                built_on_unlogged += log
                    .failed
                    .iter()
                    .filter(|(b, _)| b.number == a.number + 1)
                    .count();
            }
        }

        let db = open(&after, db_sync, config);
        let r = db.begin_read().unwrap();
        let rows = ints(&r, root).unwrap();
        let n = rows[&COUNTER][0];
        if seen > n {
            lost_reads += 1;
        }
        // A prefix of the commit order: rows 1..=n, each written by the commit numbered so.
        assert!(
            rows.keys().copied().eq(0..=n),
            "{what}: counter {n} but rows {:?}",
            rows.keys().collect::<Vec<_>>()
        );
        for number in 1..=n {
            let (writer, txn) = (rows[&number][0], rows[&number][1]);
            let by = |a: &Attempt| a.writer == writer && a.txn == txn && a.number == number;
            match acked_at.get(&number) {
                Some(a) => assert!(by(a), "{what}: row {number} is not {a:?}'s"),
                None => assert!(
                    log.failed.iter().any(|(a, _)| by(a)),
                    "{what}: row {number} was written by no commit that was acknowledged or \
                     in flight ({writer}, {txn})"
                ),
            }
        }
        // ... containing every acknowledged commit this crash cannot take.
        for a in log.acked.iter() {
            if a.full || mode == CrashMode::ProcessCrash {
                assert!(
                    a.number <= n,
                    "{what}: acknowledged {a:?} lost (counter {n})"
                );
            }
        }
        let errors = r.integrity_check(&[(root, BtreeKind::Table)], 10).unwrap();
        assert!(errors.is_empty(), "{what}: {errors:?}");
        drop(r);
        // The recovered database takes commits again.
        let (a, err) = run_txn(&db, root, WRITERS, 0, false, true);
        assert!(err.is_none(), "{what}: {err:?}");
        assert_eq!(a.number, n + 1, "{what}");
    }
    println!(
        "{frame_write_failures} failed frame writes, {built_on_unlogged} commits built on \
         their unlogged commits refused, {lost_reads} cases where the reader saw a commit the \
         crash took, {checkpoints} checkpoints"
    );
    // The cases reach the path under test: a failed frame write after its publication.
    assert!(
        frame_write_failures >= CASES / 8,
        "{frame_write_failures} failed frame writes"
    );
    assert!(
        built_on_unlogged > 0,
        "no writer built on a commit whose frame write failed"
    );
    assert!(checkpoints > CASES, "rounds must run: {checkpoints}");
}
