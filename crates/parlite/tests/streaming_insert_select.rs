//! `INSERT INTO u SELECT ... FROM t` takes the SELECT's rows in chunks when nothing sees
//! the rows one by one and the SELECT reads one other table (parlite_sql's
//! select/chunk.rs K4): the table written must equal SQLite's, a failure in a later chunk
//! must undo the whole statement, and a SELECT that reads the table it fills must still see
//! the table as it was when the statement began.

mod common;

use common::{integrity_check_rows, run_parlite, run_sqlite, temp_db_path, Out};
use parlite::Value;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

/// 70,000 rows: more than the 65,536 an INSERT's chunk holds.
const SETUP: &str = "
    CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c INTEGER);
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 70000)
    INSERT INTO t SELECT i * 3 + (i % 3), printf('b%08d', (i * 7919) % 100003), i % 97 FROM n;
    CREATE TABLE u(a INTEGER PRIMARY KEY, b TEXT UNIQUE, c INTEGER);
    CREATE INDEX uc ON u(c, b);
    CREATE TABLE v(x TEXT, y INTEGER);
";

/// Each step's statements, run in both engines; then every table's rows are compared.
const STEPS: &[&str] = &[
    "INSERT INTO u SELECT * FROM t",
    // Clashes on u.b in the second chunk (rows past 65,536): the whole statement fails.
    "INSERT INTO u SELECT a + 1000000, CASE WHEN a > 200000 THEN b ELSE b || 'x' END, c FROM t",
    "INSERT INTO u SELECT a + 2000000, b || 'y', c FROM t WHERE c % 2 = 0",
    "INSERT INTO v SELECT b, c FROM t",
    "INSERT INTO v(y) SELECT a FROM t WHERE a % 5 = 1 ORDER BY rowid DESC",
    "INSERT OR IGNORE INTO u SELECT a + 3000000, b, c FROM t",
    // Reads the table it fills: all rows as they were at the start, once.
    "INSERT INTO t SELECT a + 5000000, b, c FROM t",
    "INSERT INTO v SELECT x || y, y FROM v",
];

const CHECKS: &[&str] = &[
    "SELECT count(*), sum(a), sum(length(b)), sum(c) FROM u",
    "SELECT * FROM u ORDER BY a",
    "SELECT count(*), sum(y) FROM v",
    "SELECT rowid, * FROM v ORDER BY rowid",
    "SELECT count(*), sum(a) FROM t",
    "SELECT c, count(*), min(b), max(b) FROM u GROUP BY c",
];

#[test]
fn chunked_insert_select_equals_sqlite() {
    let (pdb, sdb) = (
        temp_db_path("insert-chunks", "p"),
        temp_db_path("insert-chunks", "s"),
    );
    let p = parlite::Connection::open(pdb.to_str().expect("path")).expect("open");
    let s = rusqlite::Connection::open(&*sdb).expect("open");
    p.execute_batch(SETUP).expect("parlite setup");
    s.execute_batch(SETUP).expect("sqlite setup");
    for step in STEPS {
        let (mine, theirs) = (run_parlite(&p, step), run_sqlite(&s, step));
        assert_eq!(mine, theirs, "{step}");
        for q in CHECKS {
            assert!(
                run_parlite(&p, q) == run_sqlite(&s, q),
                "after {step}: {q} differs"
            );
        }
    }
    assert_eq!(integrity_check_rows(&pdb), vec!["ok".to_string()]);
    // The second step failed as a whole, in both engines.
    let failed = run_parlite(
        &p,
        "SELECT count(*) FROM u WHERE a BETWEEN 1000000 AND 1999999",
    );
    assert_eq!(
        failed,
        Out::Rows {
            names: vec!["count(*)".into()],
            rows: vec![vec![Value::Integer(0)]]
        }
    );
}

/// The rows are written a chunk at a time: when the first row is written (the update
/// hook hears of it), the SELECT has computed one chunk of rows, not all 70,000.
#[test]
fn rows_are_written_before_the_select_ends() {
    let pdb = temp_db_path("insert-chunks", "lazy");
    let p = parlite::Connection::open(pdb.to_str().expect("path")).expect("open");
    p.execute_batch(SETUP).expect("setup");
    let calls = common::define_call_counter(&p, "seen");
    let at_first_write = Arc::new(Mutex::new(None));
    let (c, first) = (calls.clone(), at_first_write.clone());
    p.update_hook(Some(Box::new(move |_, _, _, _| {
        let mut f = first.lock().expect("lock");
        if f.is_none() {
            *f = Some(c.load(Ordering::Relaxed));
        }
    })));
    p.execute_batch("INSERT INTO v SELECT seen(b), c FROM t")
        .expect("insert");
    let first = at_first_write
        .lock()
        .expect("lock")
        .expect("a row was written");
    assert!(
        (1..=65536).contains(&first),
        "{first} rows computed before the first write"
    );
    assert_eq!(calls.load(Ordering::Relaxed), 70000);
}
