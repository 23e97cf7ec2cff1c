//! Per-commit durability and background checkpoints under real threads
//! (docs/log-and-recovery.md sections 2 and 3b; pager D1, checkpoint.rs B1–B7).
//!
//! - `Txn::set_synchronous` overrides the database's mode for one commit: an `Off` or
//!   `Normal` commit issues no fsync and does not wait for one; a `Full` commit fsyncs, and
//!   since the log is a chain it makes every earlier commit durable too — whatever the
//!   database's own mode.
//! - Threads commit while the checkpointer thread runs rounds (tiny thresholds, so rounds
//!   overlap commits all the time); the disk fails from a random call on, then loses power:
//!   every acknowledged `Full` commit is present, nothing never committed is, and the file
//!   passes the integrity check.
//!
//! Replay a failure: `PARLITE_SEED=1234 cargo test -p parlite-storage --test durability_modes`.

use parlite_storage::record::{decode, encode};
use parlite_storage::vfs::{CrashMode, SimVfs};
use parlite_storage::{
    BtreeKind, Database, OpenOptions, PageNo, PagerConfig, SeekOp, Synchronous, Txn, ValueRef,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(5);
const PATH: &str = "/modes.db";

fn seed() -> u64 {
    let s = std::env::var("PARLITE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random);
    eprintln!("seed = {s} (replay with PARLITE_SEED={s})");
    s
}

fn open(
    disk: &SimVfs,
    sync: Synchronous,
    config: PagerConfig,
) -> parlite_storage::Result<Database> {
    let opts = OpenOptions {
        page_size: 1024,
        synchronous: sync,
        ..OpenOptions::default()
    };
    Database::open_with_config(Arc::new(disk.clone()), PATH, opts, config)
}

fn quiet() -> PagerConfig {
    PagerConfig {
        checkpoint_log_bytes: 1 << 30,
        checkpoint_dirty_percent: 100,
        backpressure_dirty_percent: 200,
        background_checkpoint: true,
    }
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

fn rows(t: &Txn, root: PageNo) -> BTreeMap<i64, i64> {
    let mut out = BTreeMap::new();
    let mut c = t.cursor(root, BtreeKind::Table, None).unwrap();
    let mut more = c.first().unwrap();
    while more {
        if let ValueRef::Integer(v) = decode(&c.record().unwrap()).unwrap()[0] {
            out.insert(c.rowid().unwrap(), v);
        }
        more = c.next().unwrap();
    }
    out
}

/// fsyncs of both log files so far.
fn log_syncs(disk: &SimVfs) -> u64 {
    disk.sync_count("/modes.db-plog") + disk.sync_count("/modes.db-plog2")
}

fn insert(db: &Database, root: PageNo, row: i64, mode: Option<Synchronous>) {
    let t = db.begin_write(TIMEOUT).unwrap();
    t.table_insert(root, row, &val(row)).unwrap();
    if let Some(m) = mode {
        t.set_synchronous(m);
    }
    t.commit().unwrap();
}

#[test]
fn off_and_normal_commits_do_not_sync_and_a_full_commit_makes_the_chain_durable() {
    // The database says FULL; single commits say otherwise.
    let disk = SimVfs::new(1);
    let db = open(&disk, Synchronous::Full, quiet()).unwrap();
    let t = db.begin_write(TIMEOUT).unwrap();
    let root = t.create_btree(BtreeKind::Table).unwrap();
    t.commit().unwrap();
    let before = log_syncs(&disk);
    insert(&db, root, 1, Some(Synchronous::Off));
    insert(&db, root, 2, Some(Synchronous::Normal));
    assert_eq!(
        log_syncs(&disk),
        before,
        "OFF/NORMAL commits must not fsync"
    );
    // A concurrent transaction that replays (a commit happened since its snapshot).
    let c = db.begin_concurrent().unwrap();
    c.table_insert(root, 3, &val(3)).unwrap();
    c.set_synchronous(Synchronous::Off);
    insert(&db, root, 4, Some(Synchronous::Off));
    c.commit().unwrap();
    assert_eq!(
        log_syncs(&disk),
        before,
        "a replayed OFF commit must not fsync"
    );
    insert(&db, root, 5, Some(Synchronous::Full));
    assert_eq!(
        log_syncs(&disk),
        before + 1,
        "one fsync for the FULL commit"
    );
    // Power loss: the FULL commit's fsync covered every frame before it (the chain).
    let after = disk.crash(7, CrashMode::PowerLoss);
    drop(db);
    let db = open(&after, Synchronous::Full, quiet()).unwrap();
    let r = db.begin_read().unwrap();
    assert_eq!(
        rows(&r, root),
        (1..=5).map(|k| (k, k)).collect::<BTreeMap<_, _>>()
    );
}

#[test]
fn a_full_commit_is_durable_in_a_database_running_off() {
    for crash_seed in 0..20 {
        let disk = SimVfs::new(crash_seed);
        let db = open(&disk, Synchronous::Off, quiet()).unwrap();
        let t = db.begin_write(TIMEOUT).unwrap();
        let root = t.create_btree(BtreeKind::Table).unwrap();
        t.set_synchronous(Synchronous::Full);
        t.commit().unwrap();
        insert(&db, root, 1, None);
        insert(&db, root, 2, Some(Synchronous::Full));
        let syncs = log_syncs(&disk);
        insert(&db, root, 3, None);
        assert_eq!(
            log_syncs(&disk),
            syncs,
            "the database's OFF mode must not fsync"
        );
        let after = disk.crash(crash_seed, CrashMode::PowerLoss);
        drop(db);
        let db = open(&after, Synchronous::Off, quiet()).unwrap();
        let r = db.begin_read().unwrap();
        let got = rows(&r, root);
        // 1 and 2 are durable (2 was FULL); 3 may or may not be.
        assert_eq!(get(&r, root, 1), Some(1), "seed {crash_seed}: {got:?}");
        assert_eq!(get(&r, root, 2), Some(2), "seed {crash_seed}: {got:?}");
        assert!(got.len() <= 3, "seed {crash_seed}: {got:?}");
    }
}

/// Writer threads commit under `Full` while the checkpointer thread folds the log every
/// few KiB; the disk fails from a random call on, then power is lost. Each thread's
/// acknowledged rows must all be there; any other row present must be one whose commit was
/// in flight when its thread saw the failure.
#[test]
fn crash_during_background_rounds_keeps_every_acknowledged_commit() {
    let base = seed();
    let mut checkpoints = 0;
    for case in 0..40u64 {
        let seed = base.wrapping_add(case);
        let mut rng = StdRng::seed_from_u64(seed);
        let disk = SimVfs::new(seed);
        let config = PagerConfig {
            checkpoint_log_bytes: rng.gen_range(1..8) << 10,
            checkpoint_dirty_percent: 50,
            backpressure_dirty_percent: 100,
            background_checkpoint: true,
        };
        let db = open(&disk, Synchronous::Full, config.clone()).unwrap();
        let t = db.begin_write(TIMEOUT).unwrap();
        let root = t.create_btree(BtreeKind::Table).unwrap();
        t.commit().unwrap();
        disk.fail_from(disk.io_calls() + rng.gen_range(20..600));
        let acked = Arc::new(Mutex::new(BTreeMap::new()));
        let in_flight = Arc::new(Mutex::new(BTreeMap::new()));
        let threads: Vec<_> = (0..4i64)
            .map(|w| {
                let (db, acked, in_flight) = (db.clone(), acked.clone(), in_flight.clone());
                std::thread::spawn(move || {
                    for i in 0..200i64 {
                        let row = w * 100_000 + i;
                        // 300 bytes, so the log passes its threshold every few commits.
                        let rec =
                            encode(&[ValueRef::Integer(row), ValueRef::Blob(&[w as u8; 300])]);
                        let r = db.begin_write(TIMEOUT).and_then(|t| {
                            t.table_insert(root, row, &rec)?;
                            t.commit()
                        });
                        match r {
                            Ok(()) => {
                                acked.lock().unwrap().insert(row, row);
                            }
                            Err(_) => {
                                in_flight.lock().unwrap().insert(row, row);
                                return;
                            }
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        checkpoints += db.stats().checkpoints;
        let after = disk.crash(seed ^ 0xBAC6, CrashMode::PowerLoss);
        drop(db);
        let db = open(&after, Synchronous::Full, config).unwrap();
        let r = db.begin_read().unwrap();
        let got = rows(&r, root);
        let (acked, in_flight) = (acked.lock().unwrap(), in_flight.lock().unwrap());
        for (k, v) in acked.iter() {
            assert_eq!(
                got.get(k),
                Some(v),
                "seed {seed}: acknowledged row {k} lost"
            );
        }
        for k in got.keys() {
            assert!(
                acked.contains_key(k) || in_flight.contains_key(k),
                "seed {seed}: row {k} was never committed"
            );
        }
        let errors = r.integrity_check(&[(root, BtreeKind::Table)], 10).unwrap();
        assert!(errors.is_empty(), "seed {seed}: {errors:?}");
    }
    println!("{checkpoints} checkpoints in the crashed runs");
    assert!(
        checkpoints > 20,
        "rounds must run during the cases: {checkpoints}"
    );
}

/// B8 under real threads: `Off` writers alone (relaxed rounds), then `Off` and `Full`
/// writers together, with the checkpointer folding every few KiB; a last `Full` commit
/// makes everything before it durable, so after a power loss every row is there and the
/// tree is sound — the `Full` commits paid the database file's sync that relaxed rounds
/// left owed.
#[test]
fn full_commits_after_relaxed_rounds_keep_everything_across_power_loss() {
    let base = seed();
    for case in 0..6u64 {
        let seed = base.wrapping_add(case);
        let disk = SimVfs::new(seed);
        let config = PagerConfig {
            checkpoint_log_bytes: 4 << 10,
            checkpoint_dirty_percent: 50,
            backpressure_dirty_percent: 100,
            background_checkpoint: true,
        };
        let db = open(&disk, Synchronous::Off, config.clone()).unwrap();
        let t = db.begin_write(TIMEOUT).unwrap();
        let root = t.create_btree(BtreeKind::Table).unwrap();
        t.commit().unwrap();
        let mut expected = BTreeMap::new();
        for (phase, modes) in [
            [Synchronous::Off, Synchronous::Off],
            [Synchronous::Off, Synchronous::Full],
        ]
        .into_iter()
        .enumerate()
        {
            let threads: Vec<_> = modes
                .into_iter()
                .enumerate()
                .map(|(w, mode)| {
                    let db = db.clone();
                    std::thread::spawn(move || {
                        for i in 0..150i64 {
                            let row = (phase as i64 * 10 + w as i64) * 100_000 + i;
                            let rec =
                                encode(&[ValueRef::Integer(row), ValueRef::Blob(&[w as u8; 300])]);
                            let t = db.begin_write(TIMEOUT).unwrap();
                            t.table_insert(root, row, &rec).unwrap();
                            t.set_synchronous(mode);
                            t.commit().unwrap();
                        }
                    })
                })
                .collect();
            for t in threads {
                t.join().unwrap();
            }
            for w in 0..2i64 {
                for i in 0..150i64 {
                    let row = (phase as i64 * 10 + w) * 100_000 + i;
                    expected.insert(row, row);
                }
            }
        }
        insert(&db, root, 1, Some(Synchronous::Full));
        expected.insert(1, 1);
        let st = db.stats();
        assert!(st.relaxed_checkpoints > 0, "seed {seed}: {st:?}");
        for crash_seed in 0..4 {
            let after = disk.fork().crash(crash_seed, CrashMode::PowerLoss);
            let db = open(&after, Synchronous::Off, config.clone()).unwrap();
            let r = db.begin_read().unwrap();
            let got = rows(&r, root);
            assert_eq!(got, expected, "seed {seed}, crash {crash_seed}");
            let errors = r.integrity_check(&[(root, BtreeKind::Table)], 10).unwrap();
            assert!(errors.is_empty(), "seed {seed}: {errors:?}");
        }
    }
}
