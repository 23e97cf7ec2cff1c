//! Many writers at the SQL level (crates/parlite/src/lib.rs invariants 1–5;
//! docs/concurrency.md, "SQL"). Seeded: `PARLITE_SEED=n` replays a bank run.

use parlite::{Connection, Database, Error, Value};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

const SQLITE_BUSY: i32 = 5;
const SQLITE_BUSY_SNAPSHOT: i32 = 517;

/// A fresh directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let p = std::env::temp_dir().join(format!(
            "parlite-conc-{tag}-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    fn db(&self) -> String {
        self.0.join("test.db").to_string_lossy().into_owned()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn query(c: &Connection, sql: &str) -> Vec<Vec<Value>> {
    try_query(c, sql).unwrap_or_else(|e| panic!("{sql}: {e}"))
}

fn try_query(c: &Connection, sql: &str) -> Result<Vec<Vec<Value>>, Error> {
    let (mut st, _) = c.prepare(sql)?.expect("a statement");
    let mut rows = Vec::new();
    while st.step()? {
        rows.push((0..st.column_count()).map(|i| st.column(i)).collect());
    }
    Ok(rows)
}

fn int(c: &Connection, sql: &str) -> i64 {
    match query(c, sql).first().and_then(|r| r.first()) {
        Some(Value::Integer(i)) => *i,
        other => panic!("{sql}: {other:?}"),
    }
}

fn is_conflict(e: &Error) -> bool {
    e.extended_code == SQLITE_BUSY_SNAPSHOT
}

fn seed() -> u64 {
    std::env::var("PARLITE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed)
}

fn setup_accounts(c: &Connection, n: i64, balance: i64) {
    c.execute_batch(
        "CREATE TABLE accounts(id INTEGER PRIMARY KEY, balance INTEGER NOT NULL);
         CREATE TABLE transfers(id INTEGER PRIMARY KEY, src INTEGER, dst INTEGER, amount INTEGER);",
    )
    .unwrap();
    c.execute_batch(&format!(
        "BEGIN; WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<{n})
         INSERT INTO accounts SELECT i, {balance} FROM n; COMMIT;"
    ))
    .unwrap();
}

/// One transfer in an explicit transaction (`begin` is the BEGIN statement); the transfer is
/// logged in `transfers` inside the same transaction. Ok(false): it conflicted.
fn transfer_explicit(
    c: &Connection,
    begin: &str,
    src: i64,
    dst: i64,
    amount: i64,
) -> Result<bool, Error> {
    c.execute_batch(begin)?;
    let body = format!(
        "UPDATE accounts SET balance = balance - {amount} WHERE id = {src};
         UPDATE accounts SET balance = balance + {amount} WHERE id = {dst};
         INSERT INTO transfers(src, dst, amount) VALUES ({src}, {dst}, {amount});"
    );
    if let Err(e) = c.execute_batch(&body) {
        let _ = c.execute_batch("ROLLBACK");
        return if is_conflict(&e) { Ok(false) } else { Err(e) };
    }
    match c.execute_batch("COMMIT") {
        Ok(()) => Ok(true),
        Err(e) if is_conflict(&e) => {
            assert!(c.is_autocommit(), "a conflict ends the transaction");
            Ok(false)
        }
        Err(e) => {
            let _ = c.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

#[test]
fn bank_many_connections_conserve_total() {
    const ACCOUNTS: i64 = 1000;
    const THREADS: u64 = 8;
    let dir = TempDir::new("bank");
    let db = Database::open(&dir.db()).unwrap();
    let c0 = db.connect().unwrap();
    setup_accounts(&c0, ACCOUNTS, 1000);
    let seed = seed();
    let stop = Arc::new(AtomicBool::new(false));
    let mut handles = Vec::new();
    for tid in 0..THREADS {
        let db = db.clone();
        let stop = stop.clone();
        handles.push(thread::spawn(move || {
            let c = db.connect().unwrap();
            // Setting pragmas from many connections at once never takes the writer lock.
            c.execute_batch("PRAGMA busy_timeout = 5000; PRAGMA synchronous = NORMAL;")
                .unwrap();
            let mut rng = StdRng::seed_from_u64(seed ^ (tid * 0x9e37_79b9));
            let (mut done, mut conflicts) = (0u64, 0u64);
            while !stop.load(Ordering::Relaxed) {
                let src = rng.gen_range(1..=ACCOUNTS);
                let dst = rng.gen_range(1..=ACCOUNTS);
                let amount = rng.gen_range(1..=50);
                match rng.gen_range(0..3) {
                    0 | 1 => {
                        let begin = if rng.gen_bool(0.5) {
                            "BEGIN CONCURRENT"
                        } else {
                            "BEGIN IMMEDIATE"
                        };
                        loop {
                            match transfer_explicit(&c, begin, src, dst, amount) {
                                Ok(true) => break,
                                Ok(false) => {
                                    assert_eq!(begin, "BEGIN CONCURRENT", "IMMEDIATE conflicted");
                                    conflicts += 1;
                                }
                                Err(e) => panic!("{begin}: {e} ({})", e.extended_code),
                            }
                        }
                    }
                    _ => {
                        // Autocommit: a single conserving statement, then its log entry. Neither
                        // may surface a conflict (invariant 3), so the log stays exact.
                        let sql = format!(
                            "UPDATE accounts SET balance = balance + \
                             CASE id WHEN {src} THEN -{amount} ELSE {amount} END \
                             WHERE id IN ({src}, {dst}) AND {src} <> {dst}"
                        );
                        if let Err(e) = try_query(&c, &sql) {
                            panic!("autocommit write surfaced {e} ({})", e.extended_code);
                        }
                        assert_eq!(c.changes(), if src == dst { 0 } else { 2 });
                        let log = format!(
                            "INSERT INTO transfers(src, dst, amount) VALUES ({src}, {dst}, {amount})"
                        );
                        if let Err(e) = try_query(&c, &log) {
                            panic!("autocommit insert surfaced {e} ({})", e.extended_code);
                        }
                    }
                }
                done += 1;
            }
            (done, conflicts)
        }));
    }
    thread::sleep(Duration::from_millis(2000));
    stop.store(true, Ordering::Relaxed);
    let mut done = 0;
    let mut conflicts = 0;
    for h in handles {
        let (d, k) = h.join().unwrap();
        done += d;
        conflicts += k;
    }
    let c = db.connect().unwrap();
    assert_eq!(int(&c, "SELECT sum(balance) FROM accounts"), ACCOUNTS * 1000);
    assert_eq!(int(&c, "SELECT count(*) FROM transfers"), done as i64);
    // Every account equals a replay of the logged transfers: each committed transfer was
    // counted exactly once.
    let mut expected = vec![1000i64; ACCOUNTS as usize + 1];
    for r in query(&c, "SELECT src, dst, amount FROM transfers") {
        let (Value::Integer(src), Value::Integer(dst), Value::Integer(amount)) =
            (&r[0], &r[1], &r[2])
        else {
            panic!("{r:?}");
        };
        expected[*src as usize] -= amount;
        expected[*dst as usize] += amount;
    }
    for r in query(&c, "SELECT id, balance FROM accounts") {
        let (Value::Integer(id), Value::Integer(balance)) = (&r[0], &r[1]) else {
            panic!("{r:?}");
        };
        assert_eq!(*balance, expected[*id as usize], "account {id} (seed {seed})");
    }
    assert_eq!(
        query(&c, "PRAGMA integrity_check"),
        vec![vec![Value::Text("ok".into())]]
    );
    let st = db.stats();
    assert!(st.commits > 0);
    assert!(st.concurrent_commits > 0, "{st:?}");
    eprintln!(
        "bank: seed {seed}, {done} transfers, {conflicts} explicit conflicts retried, {st:?}"
    );
}
