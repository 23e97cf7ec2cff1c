//! BEGIN CONCURRENT writers on two threads and one file, against SQLite. The two begin and
//! write, then commit together, so one of each pair finds its snapshot stale: rebased before
//! the writer lock (docs/concurrency.md C7), or found stale only once the lock is had, when
//! the other committed while it waited (the storage's `attach_writer`, which then gives its
//! prepared frame back).
//! Every transaction adds to counters, so the committed ones may be applied to SQLite in any
//! order: both tables must then be equal, and stock SQLite must find parlite's file sound.
//! Seeded: `PARLITE_SEED=n`.

mod common;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::sync::Barrier;

const ROWS: i64 = 600;
const TXNS_PER_THREAD: usize = 1500;
const SQLITE_BUSY_SNAPSHOT: i32 = 517;

/// One thread's transactions, each committed when the other thread's is written too; the
/// statements of those that committed.
fn writer(db: &parlite::Database, seed: u64, both_written: &Barrier) -> Vec<String> {
    let c = db.connect().expect("connect");
    c.execute_batch("PRAGMA synchronous=off").expect("sync");
    let mut rng = StdRng::seed_from_u64(seed);
    let mut committed = Vec::new();
    for _ in 0..TXNS_PER_THREAD {
        let stmts: Vec<String> = (0..rng.gen_range(1..=2))
            .map(|_| {
                format!(
                    "UPDATE t SET n = n + {} WHERE id = {}",
                    rng.gen_range(1..100),
                    rng.gen_range(1..=ROWS)
                )
            })
            .collect();
        c.execute_batch("BEGIN CONCURRENT").expect("begin");
        for s in &stmts {
            c.execute_batch(s).expect(s);
        }
        both_written.wait();
        match c.execute_batch("COMMIT") {
            Ok(()) => committed.extend(stmts),
            Err(e) => {
                // Both updated a row: the later commit read what the earlier one changed.
                assert_eq!(e.extended_code, SQLITE_BUSY_SNAPSHOT, "{e}");
                assert!(c.is_autocommit(), "the failed transaction is rolled back");
            }
        }
    }
    committed
}

#[test]
fn stale_concurrent_commits_equal_sqlite_applying_the_committed_ones() {
    for seed in common::seeds() {
        let file = common::temp_db_path("conc-stale", &seed.to_string());
        let path = file.to_str().expect("utf8");
        // 300-byte rows: several leaves, so rebases both carry pages over and replay.
        let setup = format!(
            "CREATE TABLE t(id INTEGER PRIMARY KEY, n INTEGER, pad BLOB);
             WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < {ROWS})
             INSERT INTO t SELECT i, 0, zeroblob(300) FROM c;"
        );
        let db = parlite::Database::open(path).expect("open");
        let c = db.connect().expect("connect");
        c.execute_batch(&format!("PRAGMA synchronous=off; {setup}"))
            .expect("setup");
        let both_written = Barrier::new(2);
        let committed: Vec<String> = std::thread::scope(|s| {
            let threads: Vec<_> = (0..2u64)
                .map(|t| {
                    let (db, both_written) = (&db, &both_written);
                    s.spawn(move || writer(db, seed * 2 + t, both_written))
                })
                .collect();
            threads
                .into_iter()
                .flat_map(|h| h.join().expect("writer"))
                .collect()
        });
        let stats = db.stats();
        assert!(
            stats.concurrent_rebased_commits > 0,
            "seed {seed}: no commit found its snapshot stale: {stats:?}"
        );
        let sqlite = rusqlite::Connection::open_in_memory().expect("sqlite");
        sqlite.execute_batch(&setup).expect("sqlite setup");
        for s in &committed {
            sqlite.execute_batch(s).expect(s);
        }
        let q = "SELECT id, n, length(pad) FROM t ORDER BY id";
        assert_eq!(
            common::run_parlite(&c, q),
            common::run_sqlite(&sqlite, q),
            "seed {seed}"
        );
        drop(c);
        drop(db);
        assert_eq!(common::stock_integrity_problem(&file), None, "seed {seed}");
    }
}
