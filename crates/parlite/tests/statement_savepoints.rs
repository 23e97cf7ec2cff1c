//! Statements that fail half-way through on a file database, after earlier statements of
//! the same transaction wrote the same pages: the failing statement's savepoint must take
//! back exactly its own writes (pager saved.rs W1–W2: a page already private and saved is
//! written again without saving it again, until a savepoint opens, rolls back or is
//! released). Each statement's outcome is compared with stock SQLite on its own file.

mod common;

use common::{run_parlite, run_sqlite, temp_db_path};

/// Runs `script` (one statement per entry) in both engines on fresh file databases and
/// compares each outcome; then both files' integrity.
fn check_on_files(tag: &str, script: &[&str]) {
    let sp = temp_db_path("stmtsp-sqlite", tag);
    let pp = temp_db_path("stmtsp-parlite", tag);
    let s = rusqlite::Connection::open(&*sp).expect("sqlite");
    let p = parlite::Connection::open(pp.to_str().expect("utf-8 path")).expect("parlite");
    let mut failures = Vec::new();
    for stmt in script {
        let a = run_sqlite(&s, stmt);
        let b = run_parlite(&p, stmt);
        if a != b {
            failures.push(format!("{stmt}\n  sqlite:  {a:?}\n  parlite: {b:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    drop(p);
    assert_eq!(
        common::integrity_check_rows(&pp),
        vec!["ok".to_string()],
        "integrity of parlite's file"
    );
    match common::sqlite_rows(&pp, "PRAGMA integrity_check") {
        common::Out::Rows { rows, .. } => {
            assert_eq!(rows, vec![vec![parlite::Value::Text("ok".into())]])
        }
        other => panic!("stock SQLite on parlite's file: {other:?}"),
    }
}

const SETUP: &[&str] = &[
    "CREATE TABLE t(id INTEGER PRIMARY KEY, k TEXT UNIQUE, v BLOB)",
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<300) \
     INSERT INTO t SELECT i, 'k'||i, zeroblob(40 + i % 50) FROM n",
];

#[test]
fn failing_update_after_updates_of_the_same_pages() {
    let mut script = SETUP.to_vec();
    script.extend([
        "BEGIN",
        "UPDATE t SET v = zeroblob(60) WHERE id BETWEEN 10 AND 200",
        "UPDATE t SET v = zeroblob(70) WHERE id BETWEEN 20 AND 220",
        // Rewrites the same leaves, then fails on the UNIQUE index half-way.
        "UPDATE t SET k = CASE WHEN id = 150 THEN 'k3' ELSE k || 'x' END WHERE id >= 5",
        "SELECT count(*), sum(length(v)), sum(k LIKE '%x') FROM t",
        "UPDATE t SET v = zeroblob(80) WHERE id BETWEEN 30 AND 230",
        "INSERT INTO t SELECT id + 1000, CASE WHEN id = 290 THEN 'k1' ELSE 'n'||id END, v FROM t",
        "SELECT count(*), sum(length(v)), max(id) FROM t",
        "COMMIT",
        "SELECT count(*), sum(length(v)), group_concat(k) FROM t WHERE id % 37 = 0",
    ]);
    check_on_files("update", &script);
}

#[test]
fn rollback_to_and_release_around_rewritten_pages() {
    let mut script = SETUP.to_vec();
    script.extend([
        "BEGIN",
        "DELETE FROM t WHERE id % 3 = 0",
        "SAVEPOINT a",
        "UPDATE t SET v = zeroblob(90) WHERE id < 150",
        "SAVEPOINT b",
        "DELETE FROM t WHERE id BETWEEN 100 AND 250",
        "RELEASE b",
        "SELECT count(*), sum(length(v)) FROM t",
        "INSERT INTO t(k, v) SELECT k || 'y', v FROM t WHERE id < 50",
        "ROLLBACK TO a",
        "SELECT count(*), sum(length(v)) FROM t",
        "UPDATE t SET v = zeroblob(10) WHERE id > 100",
        "UPDATE t SET k = 'k2' WHERE id > 280",
        "ROLLBACK TO a",
        "UPDATE t SET v = zeroblob(20) WHERE id > 50",
        "RELEASE a",
        "SELECT count(*), sum(length(v)), sum(id) FROM t",
        "COMMIT",
        "SELECT count(*), sum(length(v)), sum(id) FROM t",
    ]);
    check_on_files("savepoints", &script);
}
