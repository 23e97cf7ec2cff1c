//! Group commit through the SQL API (storage pager D1): 8 connections on 8 threads insert
//! rows in autocommit under `PRAGMA synchronous=FULL` on a file database; `PRAGMA
//! parlite_stats` (and `Database::stats`) must show more than one commit per log fsync, and
//! every insert must be there.

use parlite::{Connection, Database, Value};
use std::collections::BTreeMap;
use std::time::Instant;

/// A fresh directory under the system temp dir, removed on drop.
struct TempDir(std::path::PathBuf);

impl TempDir {
    fn new() -> TempDir {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let p = std::env::temp_dir().join(format!("parlite-group-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const THREADS: i64 = 8;
const PER_THREAD: i64 = 150;

fn query(c: &Connection, sql: &str) -> Vec<Vec<Value>> {
    let (mut st, _) = c
        .prepare(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .expect("a statement");
    let mut rows = Vec::new();
    while st.step().unwrap_or_else(|e| panic!("{sql}: {e}")) {
        rows.push((0..st.column_count()).map(|i| st.column(i)).collect());
    }
    rows
}

/// `PRAGMA parlite_stats` as name → value (integers as f64).
fn pragma_stats(c: &Connection) -> BTreeMap<String, f64> {
    query(c, "PRAGMA parlite_stats")
        .into_iter()
        .map(|r| match (&r[0], &r[1]) {
            (Value::Text(n), Value::Integer(v)) => (n.clone(), *v as f64),
            (Value::Text(n), Value::Real(v)) => (n.clone(), *v),
            other => panic!("bad parlite_stats row {other:?}"),
        })
        .collect()
}

#[test]
fn eight_writers_under_full_share_fsyncs() {
    let dir = TempDir::new();
    let path = dir.0.join("group.db").display().to_string();
    let db = Database::open(&path).unwrap();
    let c = db.connect().unwrap();
    c.execute_batch("PRAGMA synchronous=FULL; CREATE TABLE t(k INTEGER PRIMARY KEY, th, v)")
        .unwrap();
    let before = pragma_stats(&c);
    let start = Instant::now();
    let handles: Vec<_> = (0..THREADS)
        .map(|th| {
            let db = db.clone();
            std::thread::spawn(move || {
                let c = db.connect().unwrap();
                c.execute_batch("PRAGMA synchronous=FULL").unwrap();
                for i in 0..PER_THREAD {
                    c.execute_batch(&format!(
                        "INSERT INTO t VALUES ({}, {th}, 'row {i} of thread {th}')",
                        th * 1_000_000 + i
                    ))
                    .unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let elapsed = start.elapsed();
    let after = pragma_stats(&c);
    let delta = |n: &str| after[n] - before[n];
    let (commits, fsyncs) = (delta("commits"), delta("fsyncs"));
    println!(
        "{THREADS} writers x {PER_THREAD} autocommit inserts under FULL in {elapsed:?}: \
         {commits} commits, {fsyncs} fsyncs ({:.2} commits per fsync; \
         concurrent {}, conflicts {}, retries {}, lock fallbacks {})",
        commits / fsyncs.max(1.0),
        delta("concurrent_commits"),
        delta("conflicts"),
        delta("autocommit_retries"),
        delta("autocommit_lock_fallbacks"),
    );
    let n = match &query(&c, "SELECT count(*) FROM t")[0][0] {
        Value::Integer(n) => *n,
        other => panic!("{other:?}"),
    };
    assert_eq!(n, THREADS * PER_THREAD);
    assert_eq!(commits, (THREADS * PER_THREAD) as f64, "{after:?}");
    assert!(fsyncs >= 1.0, "no fsync under FULL: {after:?}");
    assert!(
        commits / fsyncs > 1.0,
        "no group commit: {commits} commits, {fsyncs} fsyncs"
    );
    // The pragma and the API report the same counters.
    let s = db.stats();
    assert_eq!(s.commits as f64, after["commits"]);
    assert_eq!(s.fsyncs as f64, after["fsyncs"]);
}
