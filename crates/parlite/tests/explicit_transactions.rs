//! Explicit transactions one after another on one connection, against stock SQLite: each
//! BEGIN (DEFERRED, IMMEDIATE, EXCLUSIVE, CONCURRENT; SAVEPOINT outside a transaction)
//! renews the connection's previous transaction (storage txn.rs T6), whose parked cursors
//! must re-seek on the new snapshot; each commit is published with its writer's snapshot
//! released in the same step (pager cache.rs C14). Checked: every statement's outcome,
//! what a second connection and an older reader see after each commit, nested savepoints
//! released into and rolled back to, a COMMIT that fails (a deferred foreign key, a
//! validation conflict) and what follows it.

mod common;

use common::{run_parlite, run_sqlite, seeds, temp_db_path, Out, Rng};
use parlite::Value;

const SETUP: &[&str] = &[
    "CREATE TABLE t(id INTEGER PRIMARY KEY, v INTEGER, s TEXT)",
    "CREATE INDEX t_v ON t(v)",
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<200) \
     INSERT INTO t SELECT i, i % 17, printf('%.*c', 20 + i % 300, 'x') FROM n",
];

/// What the whole table holds, in both engines' terms.
const CONTENTS: &str = "SELECT id, v, length(s) FROM t ORDER BY id";

/// One statement inside a transaction: a write or a read of a row, a range, the index; an
/// INSERT that takes the next rowid, a DELETE of the last row.
fn statement(rng: &mut Rng) -> String {
    let id = 1 + rng.below(260);
    match rng.below(11) {
        9 => format!("INSERT INTO t(v, s) VALUES ({}, 'auto')", rng.below(17)),
        10 => "DELETE FROM t WHERE id = (SELECT max(id) FROM t)".to_string(),
        0 => format!("SELECT v, length(s) FROM t WHERE id = {id}"),
        1 => format!(
            "SELECT id, v FROM t WHERE v = {} ORDER BY id",
            rng.below(17)
        ),
        2 => format!(
            "SELECT count(*), sum(v) FROM t WHERE id BETWEEN {id} AND {}",
            id + 30
        ),
        3 | 4 => format!("UPDATE t SET v = v + {} WHERE id = {id}", 1 + rng.below(5)),
        5 => format!(
            "UPDATE t SET s = printf('%.*c', {}, 'y') WHERE id = {id}",
            rng.below(3000)
        ),
        6 => format!(
            "INSERT OR REPLACE INTO t VALUES ({id}, {}, 'new')",
            rng.below(17)
        ),
        7 => format!("DELETE FROM t WHERE id = {id}"),
        _ => format!("UPDATE t SET v = v * 2 WHERE v = {}", rng.below(17)),
    }
}

/// `(parlite's BEGIN, SQLite's)`: stock SQLite has no BEGIN CONCURRENT; with one writer
/// at a time it behaves as BEGIN IMMEDIATE.
fn begin(rng: &mut Rng) -> (&'static str, &'static str) {
    match rng.below(6) {
        0 => ("BEGIN", "BEGIN"),
        1 => ("BEGIN DEFERRED", "BEGIN DEFERRED"),
        2 => ("BEGIN EXCLUSIVE", "BEGIN EXCLUSIVE"),
        3 => ("BEGIN CONCURRENT", "BEGIN IMMEDIATE"),
        4 => ("SAVEPOINT outer_sp", "SAVEPOINT outer_sp"),
        _ => ("BEGIN IMMEDIATE", "BEGIN IMMEDIATE"),
    }
}

struct Pair {
    sqlite: rusqlite::Connection,
    parlite: parlite::Connection,
}

impl Pair {
    fn run(&self, p_sql: &str, s_sql: &str, failures: &mut Vec<String>) -> Out {
        let a = run_sqlite(&self.sqlite, s_sql);
        let b = run_parlite(&self.parlite, p_sql);
        if a != b {
            failures.push(format!("{p_sql}\n  sqlite:  {a:?}\n  parlite: {b:?}"));
        }
        b
    }
}

#[test]
fn seeded_transactions_match_sqlite_and_are_seen_after_commit() {
    for seed in seeds() {
        let sp = temp_db_path("explicit-sqlite", &seed.to_string());
        let pp = temp_db_path("explicit-parlite", &seed.to_string());
        let path = pp.to_str().expect("utf-8 path");
        let db = parlite::Database::open(path).expect("parlite");
        let main = Pair {
            sqlite: rusqlite::Connection::open(&*sp).expect("sqlite"),
            parlite: db.connect().expect("parlite"),
        };
        let other = Pair {
            sqlite: rusqlite::Connection::open(&*sp).expect("sqlite"),
            parlite: db.connect().expect("parlite"),
        };
        let reader = db.connect().expect("parlite");
        let mut failures = Vec::new();
        for sql in SETUP {
            main.run(sql, sql, &mut failures);
        }
        let mut rng = Rng(seed);
        for round in 0..120 {
            // The other connection writes between transactions, so the renewed
            // transaction's parked cursors see a changed tree.
            if rng.below(3) == 0 {
                let sql = statement(&mut rng);
                other.run(&sql, &sql, &mut failures);
            }
            // A reader whose snapshot is older than this round's commit.
            let held = rng.below(4) == 0;
            let before = run_parlite(&reader, CONTENTS);
            if held {
                run_parlite(&reader, "BEGIN");
                run_parlite(&reader, CONTENTS);
            }
            let (p_begin, s_begin) = begin(&mut rng);
            let by_savepoint = p_begin.starts_with("SAVEPOINT");
            main.run(p_begin, s_begin, &mut failures);
            let mut depth = 0;
            for _ in 0..1 + rng.below(6) {
                match rng.below(8) {
                    0 => {
                        depth += 1;
                        let sql = format!("SAVEPOINT sp{depth}");
                        main.run(&sql, &sql, &mut failures);
                    }
                    1 if depth > 0 => {
                        let sql = format!("RELEASE sp{depth}");
                        main.run(&sql, &sql, &mut failures);
                        depth -= 1;
                    }
                    2 if depth > 0 => {
                        let sql = format!("ROLLBACK TO sp{}", 1 + rng.below(depth));
                        main.run(&sql, &sql, &mut failures);
                    }
                    _ => {
                        let sql = statement(&mut rng);
                        main.run(&sql, &sql, &mut failures);
                    }
                }
            }
            let end = match (by_savepoint, rng.below(4)) {
                (true, 0) => "ROLLBACK",
                (true, _) => "RELEASE outer_sp",
                (false, 0) => "ROLLBACK",
                (false, _) => "COMMIT",
            };
            main.run(end, end, &mut failures);
            let now = main.run(CONTENTS, CONTENTS, &mut failures);
            if other.run(CONTENTS, CONTENTS, &mut failures) != now {
                failures.push(format!("round {round}: another connection differs"));
            }
            if held {
                if run_parlite(&reader, CONTENTS) != before {
                    failures.push(format!("round {round}: the older reader's snapshot moved"));
                }
                run_parlite(&reader, "COMMIT");
            }
            if run_parlite(&reader, CONTENTS) != now {
                failures.push(format!("round {round}: a new reader differs"));
            }
            if !failures.is_empty() {
                break;
            }
        }
        assert!(failures.is_empty(), "seed {seed}:\n{}", failures.join("\n"));
        drop((main, other, reader, db));
        assert_eq!(common::stock_integrity_problem(&pp), None);
    }
}

#[test]
fn a_failed_commit_leaves_the_next_transactions_working() {
    let pp = temp_db_path("explicit-failed", "commit");
    let path = pp.to_str().expect("utf-8 path");
    let sp = temp_db_path("explicit-failed-sqlite", "commit");
    let db = parlite::Database::open(path).expect("parlite");
    let main = Pair {
        sqlite: rusqlite::Connection::open(&*sp).expect("sqlite"),
        parlite: db.connect().expect("parlite"),
    };
    let mut failures = Vec::new();
    let both = |sql: &str, failures: &mut Vec<String>| main.run(sql, sql, failures);
    for sql in [
        "PRAGMA foreign_keys = ON",
        "CREATE TABLE p(id INTEGER PRIMARY KEY)",
        "CREATE TABLE c(id INTEGER PRIMARY KEY, p INTEGER REFERENCES p DEFERRABLE INITIALLY DEFERRED)",
        "INSERT INTO p VALUES (1), (2)",
        // A deferred violation fails COMMIT and leaves the transaction open, twice.
        "BEGIN IMMEDIATE",
        "INSERT INTO c VALUES (1, 3)",
        "COMMIT",
        "COMMIT",
        "SELECT count(*) FROM c",
        "ROLLBACK",
        "SELECT count(*) FROM c",
        "BEGIN IMMEDIATE",
        "INSERT INTO c VALUES (1, 2)",
        "COMMIT",
        "BEGIN",
        "INSERT INTO c VALUES (2, 9)",
        "UPDATE c SET p = 1 WHERE id = 2",
        "COMMIT",
        "SELECT * FROM c ORDER BY id",
    ] {
        both(sql, &mut failures);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));

    // A concurrent transaction that loses validation: COMMIT fails and rolls it back;
    // the connection's next transactions (renewed or not) start clean.
    let other = db.connect().expect("parlite");
    let p = &main.parlite;
    let ok = |c: &parlite::Connection, sql: &str| {
        if let Out::Err(e) = run_parlite(c, sql) {
            panic!("{sql}: {e}");
        }
    };
    ok(p, "CREATE TABLE q(id INTEGER PRIMARY KEY, n INTEGER)");
    ok(p, "INSERT INTO q VALUES (1, 0)");
    ok(p, "BEGIN CONCURRENT");
    ok(p, "UPDATE q SET n = n + 1 WHERE id = 1");
    ok(&other, "UPDATE q SET n = 5 WHERE id = 1");
    match run_parlite(p, "COMMIT") {
        Out::Err(e) => assert!(e.contains("conflict on table q"), "{e}"),
        other => panic!("the stale commit succeeded: {other:?}"),
    }
    assert!(
        matches!(run_parlite(p, "ROLLBACK"), Out::Err(_)),
        "no transaction left"
    );
    for begin in ["BEGIN CONCURRENT", "BEGIN IMMEDIATE", "BEGIN"] {
        ok(p, begin);
        ok(p, "UPDATE q SET n = n + 1 WHERE id = 1");
        ok(p, "INSERT INTO q SELECT max(id) + 1, 0 FROM q");
        ok(p, "COMMIT");
    }
    let want = Out::Rows {
        names: vec!["id".into(), "n".into()],
        rows: vec![
            vec![Value::Integer(1), Value::Integer(8)],
            vec![Value::Integer(2), Value::Integer(0)],
            vec![Value::Integer(3), Value::Integer(0)],
            vec![Value::Integer(4), Value::Integer(0)],
        ],
    };
    assert_eq!(run_parlite(&other, "SELECT id, n FROM q ORDER BY id"), want);
    assert_eq!(run_parlite(p, "SELECT id, n FROM q ORDER BY id"), want);
}
