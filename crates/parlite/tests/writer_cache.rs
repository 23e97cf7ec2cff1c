//! The per-connection table-writer cache (crates/sql/src/exec/dml/writer.rs): a writer bound
//! by one statement is reused by the next only while the table and its indexes are unchanged.
//! Each script writes a table, changes its indexes, constraints or defaults, and writes again
//! on the same connection; SQLite (rusqlite, bundled) is the oracle.

mod common;
use common::*;
use parlite::{Database, Value};

fn check(script: &str) {
    check_script(script, Compare::default());
}

#[test]
fn index_created_dropped_and_recreated_between_writes() {
    check(
        "CREATE TABLE t(a INTEGER PRIMARY KEY, b, c, d);
INSERT INTO t VALUES(1, 10, 'x', 0), (2, 20, 'y', 0), (3, 30, 'z', 0);
UPDATE t SET d = b * 2 WHERE a = 1;
CREATE INDEX tb ON t(b);
UPDATE t SET b = b + 1 WHERE a = 2;
INSERT INTO t VALUES(4, 40, 'w', 0);
SELECT a FROM t WHERE b = 21;
SELECT a FROM t WHERE b = 40;
DROP INDEX tb;
CREATE INDEX tb ON t(c) WHERE d = 0;
UPDATE t SET c = 'q', d = 0 WHERE a = 1;
DELETE FROM t WHERE a = 3;
SELECT a FROM t WHERE c = 'q' AND d = 0;
SELECT a FROM t WHERE c = 'z' AND d = 0;
CREATE UNIQUE INDEX tu ON t(c);
INSERT INTO t VALUES(5, 50, 'q', 1);
UPDATE t SET c = 'y' WHERE a = 4;
DROP INDEX tu;
INSERT INTO t VALUES(5, 50, 'q', 1);
PRAGMA integrity_check;
SELECT * FROM t ORDER BY a;",
    );
}

#[test]
fn rolled_back_index_and_added_column_default() {
    check(
        "CREATE TABLE t(a INTEGER PRIMARY KEY, b);
INSERT INTO t(b) VALUES(1), (2);
BEGIN;
CREATE UNIQUE INDEX tb ON t(b);
INSERT INTO t(b) VALUES(3);
INSERT INTO t(b) VALUES(3);
ROLLBACK;
INSERT INTO t(b) VALUES(2);
ALTER TABLE t ADD COLUMN c DEFAULT 'dflt';
INSERT INTO t(b) VALUES(9);
UPDATE t SET b = b + 100 WHERE a = 1;
SELECT * FROM t ORDER BY a;
PRAGMA integrity_check;
CREATE TABLE w(k TEXT PRIMARY KEY, v) WITHOUT ROWID;
INSERT INTO w VALUES('a', 1);
CREATE INDEX wv ON w(v);
UPDATE w SET v = 2 WHERE k = 'a';
SELECT k FROM w WHERE v = 2;
PRAGMA integrity_check;",
    );
}

/// Another connection's CREATE UNIQUE INDEX reloads this connection's schema: its next
/// write must see the new index, not the writer it cached before.
#[test]
fn index_created_by_another_connection() {
    let db = Database::open(":memory:").expect("open");
    let c1 = db.connect().expect("c1");
    let c2 = db.connect().expect("c2");
    c1.execute_batch("CREATE TABLE t(a INTEGER PRIMARY KEY, b); INSERT INTO t VALUES(1, 7)")
        .expect("setup");
    c1.execute_batch("UPDATE t SET b = 8 WHERE a = 1")
        .expect("cached writer");
    c2.execute_batch("CREATE UNIQUE INDEX tb ON t(b)")
        .expect("index");
    let e = c1
        .execute_batch("INSERT INTO t VALUES(2, 8)")
        .expect_err("the new UNIQUE index must be enforced");
    assert_eq!(e.message, "UNIQUE constraint failed: t.b");
    let (mut st, _) = c1
        .prepare("SELECT count(*) FROM t WHERE b = 8")
        .expect("prepare")
        .expect("statement");
    assert!(st.step().expect("step"));
    assert_eq!(st.column(0), Value::Integer(1));
}

/// The cached writer holds the DEFAULT expression, not a value: each statement on the same
/// connection evaluates `random()` again.
#[test]
fn cached_default_is_evaluated_per_row() {
    let db = Database::open(":memory:").expect("open");
    let c = db.connect().expect("connect");
    c.execute_batch("CREATE TABLE r(a, b DEFAULT (random()))")
        .expect("create");
    for i in 0..5 {
        c.execute_batch(&format!("INSERT INTO r(a) VALUES({i})"))
            .expect("insert");
    }
    let (mut st, _) = c
        .prepare("SELECT count(DISTINCT b) FROM r")
        .expect("prepare")
        .expect("statement");
    assert!(st.step().expect("step"));
    assert_eq!(st.column(0), Value::Integer(5));
}
