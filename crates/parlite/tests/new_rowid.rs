//! The rowid an INSERT without one picks (largest + 1, AUTOINCREMENT's sequence, the
//! random search above 9223372036854775807), against SQLite, now that the storage
//! transaction remembers each table's largest rowid instead of descending once a row
//! (`Txn::table_max_rowid`, `max_rowids`). Each case changes the table's last row some
//! other way between inserts of one transaction.

mod common;
use common::*;
use parlite::Value;

fn check(script: &str) {
    check_script(script, Compare::default());
}

#[test]
fn after_deleting_the_largest_rowid() {
    check(
        "CREATE TABLE t(a);
BEGIN;
INSERT INTO t(a) VALUES('a'),('b'),('c');
DELETE FROM t WHERE rowid = 3;
INSERT INTO t(a) VALUES('d');
DELETE FROM t WHERE rowid IN (2, 3);
INSERT INTO t(a) VALUES('e');
DELETE FROM t WHERE rowid = 1;
INSERT INTO t(a) VALUES('f');
DELETE FROM t;
INSERT INTO t(a) VALUES('g');
DELETE FROM t WHERE rowid = 1;
INSERT INTO t(a) VALUES('h');
COMMIT;
SELECT rowid, a FROM t ORDER BY rowid;
BEGIN;
INSERT INTO t(a) VALUES('i');
DELETE FROM t WHERE a = 'i';
INSERT INTO t(a) VALUES('j');
UPDATE t SET rowid = 100 WHERE a = 'j';
INSERT INTO t(a) VALUES('k');
UPDATE t SET rowid = 5 WHERE rowid = 100;
INSERT INTO t(a) VALUES('l');
COMMIT;
SELECT rowid, a FROM t ORDER BY rowid;",
    );
}

#[test]
fn after_rollback_to_and_failed_statements() {
    check(
        "CREATE TABLE t(a UNIQUE);
BEGIN;
INSERT INTO t(a) VALUES(1),(2);
SAVEPOINT s;
INSERT INTO t(a) VALUES(3),(4),(5);
ROLLBACK TO s;
INSERT INTO t(a) VALUES(6);
SAVEPOINT s2;
INSERT INTO t(rowid, a) VALUES(50, 7);
ROLLBACK TO s2;
INSERT INTO t(a) VALUES(8);
INSERT INTO t(a) VALUES(9),(10),(1);
INSERT INTO t(a) VALUES(11);
INSERT INTO t(a) SELECT 20 UNION ALL SELECT 21 UNION ALL SELECT 2;
INSERT INTO t(a) VALUES(22);
RELEASE s;
COMMIT;
SELECT rowid, a FROM t ORDER BY rowid;
BEGIN;
INSERT INTO t(a) VALUES(30);
ROLLBACK;
INSERT INTO t(a) VALUES(31);
SELECT rowid, a FROM t ORDER BY rowid;",
    );
}

#[test]
fn after_drop_create_and_vacuum() {
    check(
        "CREATE TABLE a(x);
CREATE TABLE b(y);
BEGIN;
INSERT INTO a(x) VALUES(1),(2),(3);
INSERT INTO b(y) VALUES(1);
DROP TABLE a;
CREATE TABLE c(z);
INSERT INTO c(z) VALUES(1),(2);
INSERT INTO b(y) VALUES(2);
COMMIT;
SELECT rowid, z FROM c ORDER BY rowid;
SELECT rowid, y FROM b ORDER BY rowid;
DELETE FROM c WHERE rowid = 2;
VACUUM;
INSERT INTO c(z) VALUES(3);
SELECT rowid, z FROM c ORDER BY rowid;",
    );
}

/// SQLITE_FULL from AUTOINCREMENT past 9223372036854775807 ends the whole transaction,
/// as in SQLite (no statement journal for these INSERTs).
#[test]
fn largest_rowid_with_and_without_autoincrement() {
    check(
        "CREATE TABLE t(a);
BEGIN;
INSERT INTO t(rowid, a) VALUES(9223372036854775806, 'x');
INSERT INTO t(a) VALUES('max');
SELECT rowid, a FROM t ORDER BY rowid;
DELETE FROM t WHERE rowid = 9223372036854775807;
INSERT INTO t(a) VALUES('again');
SELECT max(rowid) FROM t;
COMMIT;
CREATE TABLE s(id INTEGER PRIMARY KEY AUTOINCREMENT, a);
BEGIN;
INSERT INTO s(a) VALUES('one');
INSERT INTO s VALUES(9223372036854775806, 'x');
INSERT INTO s(a) VALUES('max');
INSERT INTO s(a) VALUES('full 1'),('full 2');
DELETE FROM s WHERE id = 9223372036854775807;
INSERT INTO s(a) VALUES('full again 1'),('full again 2');
COMMIT;
INSERT INTO s(a) VALUES('full autocommit');
SELECT id, a FROM s ORDER BY id;
SELECT name, seq FROM sqlite_sequence;
CREATE TABLE s2(id INTEGER PRIMARY KEY AUTOINCREMENT, a);
BEGIN;
INSERT INTO s2(a) VALUES('1'),('2'),('3');
DELETE FROM s2 WHERE id = 3;
INSERT INTO s2(a) VALUES('4');
SAVEPOINT p;
INSERT INTO s2(a) VALUES('5');
ROLLBACK TO p;
INSERT INTO s2(a) VALUES('6');
COMMIT;
SELECT id, a FROM s2 ORDER BY id;
SELECT name, seq FROM sqlite_sequence ORDER BY name;",
    );
}

/// Without AUTOINCREMENT a full rowid space sends SQLite to random rowids; parlite probes
/// down from the top. Either way the new row must not replace the one at the top, and a
/// second insert in the same transaction must pick yet another rowid.
#[test]
fn full_rowid_space_picks_free_rowids() {
    let p = parlite::Connection::open(":memory:").expect("open");
    p.execute_batch(
        "CREATE TABLE t(a);
         BEGIN;
         INSERT INTO t(rowid, a) VALUES(9223372036854775807, 'top');
         INSERT INTO t(a) VALUES('r1');
         INSERT INTO t(a) VALUES('r2');
         COMMIT;",
    )
    .expect("inserts");
    let r = rows(&p, "SELECT count(*), count(DISTINCT rowid) FROM t");
    assert_eq!(r, vec![vec![Value::Integer(3), Value::Integer(3)]]);
    let r = rows(&p, "SELECT a FROM t WHERE rowid = 9223372036854775807");
    assert_eq!(r, vec![vec![Value::Text("top".into())]]);
}

fn rows(p: &parlite::Connection, sql: &str) -> Vec<Vec<Value>> {
    let mut st = p.prepare(sql).expect("prepare").expect("stmt").0;
    let mut out = Vec::new();
    while st.step().expect("step") {
        out.push((0..st.column_count()).map(|i| st.column(i)).collect());
    }
    out
}

/// Two connections taking turns (autocommit and explicit transactions) on one file: each
/// new transaction must see the other's rows, as in SQLite.
#[test]
fn two_connections_interleaving_inserts() {
    let pp = temp_db_path("newrowid", "parlite");
    let sp = temp_db_path("newrowid", "sqlite");
    let p1 = parlite::Connection::open(pp.to_str().expect("path")).expect("p1");
    let p2 = parlite::Connection::open(pp.to_str().expect("path")).expect("p2");
    let s1 = rusqlite::Connection::open(&*sp).expect("s1");
    let s2 = rusqlite::Connection::open(&*sp).expect("s2");
    let steps: &[(u8, &str)] = &[
        (1, "CREATE TABLE t(a)"),
        (1, "INSERT INTO t(a) VALUES('p1 a')"),
        (2, "INSERT INTO t(a) VALUES('p2 a')"),
        (1, "BEGIN"),
        (1, "INSERT INTO t(a) VALUES('p1 b')"),
        (1, "INSERT INTO t(a) VALUES('p1 c')"),
        (1, "COMMIT"),
        (2, "BEGIN"),
        (2, "INSERT INTO t(a) VALUES('p2 b')"),
        (2, "COMMIT"),
        (1, "DELETE FROM t WHERE rowid = 5"),
        (2, "INSERT INTO t(a) VALUES('p2 c')"),
        (1, "INSERT INTO t(a) VALUES('p1 d')"),
        (2, "SELECT rowid, a FROM t ORDER BY rowid"),
    ];
    for &(who, sql) in steps {
        let (p, s) = if who == 1 { (&p1, &s1) } else { (&p2, &s2) };
        let a = run_sqlite(s, sql);
        let b = run_parlite(p, sql);
        assert_eq!(a, b, "{sql}");
    }
}

/// Two BEGIN CONCURRENT transactions appending to one table pick the same new rowids from
/// their snapshots; the second commit must fail rather than overwrite the first's rows,
/// and the next transaction continues after the committed ones.
#[test]
fn concurrent_transactions_appending() {
    for level in ["snapshot", "serializable"] {
        let db = parlite::Database::open(":memory:").expect("open");
        let c1 = db.connect().expect("c1");
        let c2 = db.connect().expect("c2");
        c1.execute_batch(&format!(
            "CREATE TABLE t(a); INSERT INTO t(a) VALUES('base');
             PRAGMA isolation_level = {level}"
        ))
        .expect("schema");
        c2.execute_batch(&format!("PRAGMA isolation_level = {level}"))
            .expect("pragma");
        c1.execute_batch("BEGIN CONCURRENT").expect("begin");
        c2.execute_batch("BEGIN CONCURRENT").expect("begin");
        c1.execute_batch("INSERT INTO t(a) VALUES('c1 a')")
            .expect("c1");
        c2.execute_batch("INSERT INTO t(a) VALUES('c2 a')")
            .expect("c2");
        c1.execute_batch("INSERT INTO t(a) VALUES('c1 b')")
            .expect("c1");
        c2.execute_batch("INSERT INTO t(a) VALUES('c2 b')")
            .expect("c2");
        c1.execute_batch("COMMIT").expect("c1 commit");
        let second = c2.execute_batch("COMMIT");
        if second.is_err() {
            c2.execute_batch("ROLLBACK").ok();
        }
        let got = rows(&c2, "SELECT count(*), count(DISTINCT rowid) FROM t");
        let n = if second.is_ok() { 5 } else { 3 };
        assert_eq!(
            got,
            vec![vec![Value::Integer(n), Value::Integer(n)]],
            "{level}"
        );
        let c1_rows = rows(&c2, "SELECT rowid FROM t WHERE a LIKE 'c1%' ORDER BY 1");
        assert_eq!(
            c1_rows,
            vec![vec![Value::Integer(2)], vec![Value::Integer(3)]],
            "{level}: c1's rows kept"
        );
        // A later concurrent transaction, after a commit by the other connection made
        // while it was open, still appends after every row it can see.
        c2.execute_batch("BEGIN CONCURRENT; INSERT INTO t(a) VALUES('c2 c')")
            .expect("c2 again");
        c1.execute_batch("INSERT INTO t(a) VALUES('c1 c')")
            .expect("c1 autocommit");
        c2.execute_batch("INSERT INTO t(a) VALUES('c2 d')")
            .expect("c2 d");
        if c2.execute_batch("COMMIT").is_err() {
            c2.execute_batch("ROLLBACK").ok();
        }
        let got = rows(
            &c1,
            "SELECT count(*) = count(DISTINCT rowid), max(rowid) = count(*) FROM t",
        );
        assert_eq!(
            got,
            vec![vec![Value::Integer(1), Value::Integer(1)]],
            "{level}"
        );
        let got = rows(&c1, "SELECT count(*) FROM t WHERE a = 'c1 c'");
        assert_eq!(got, vec![vec![Value::Integer(1)]], "{level}: c1 c kept");
    }
}

/// AUTOINCREMENT's sequence as SQLite keeps it: it starts at 0 (a negative rowid does not
/// lower it), its row is written by every INSERT into the table (even one inserting no
/// row), it follows the table through ALTER TABLE RENAME, and `sqlite_sequence` is a
/// reserved name.
#[test]
fn autoincrement_sequence_rows() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(a INTEGER PRIMARY KEY AUTOINCREMENT, b)",
        "INSERT INTO t VALUES (-5, 1)",
        "SELECT * FROM sqlite_sequence",
        "INSERT INTO t(b) VALUES (2)",
        "SELECT * FROM t ORDER BY a",
        "SELECT * FROM sqlite_sequence",
        "CREATE TABLE u(a INTEGER PRIMARY KEY AUTOINCREMENT, b)",
        "INSERT INTO u(b) SELECT 1 WHERE 0",
        "SELECT rowid, * FROM sqlite_sequence",
        "INSERT INTO u VALUES (-3, 0)",
        "INSERT INTO u(b) VALUES (1)",
        "SELECT * FROM u ORDER BY a",
        "ALTER TABLE t RENAME TO t2",
        "SELECT rowid, * FROM sqlite_sequence",
        "INSERT INTO t2(b) VALUES (3)",
        "SELECT * FROM t2 ORDER BY a",
        "CREATE TABLE sqlite_sequence(name, seq)",
        "CREATE TABLE IF NOT EXISTS sqlite_sequence(name, seq)",
        "SELECT rowid, * FROM sqlite_sequence",
    ]));
}
