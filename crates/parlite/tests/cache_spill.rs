//! `PRAGMA cache_spill`: a write transaction much larger than a tiny cache
//! (`cache_size=10`) moves its pages to a spill file of its own (storage pager/spill.rs)
//! and still reads its own writes, rolls back to savepoints, rolls back and commits as
//! SQLite does; its commit writes its new pages straight into the database file (pager
//! D6), whose result stock SQLite reads and checks. `cache_spill=OFF` keeps them in memory.

mod common;

use common::{stock_integrity_problem, temp_db_path};
use parlite::{Connection, Database, Value};

fn one(c: &Connection, sql: &str) -> Vec<Value> {
    let (mut st, _) = c.prepare(sql).expect(sql).expect("a statement");
    assert!(st.step().expect(sql), "{sql}: no row");
    (0..st.column_count()).map(|i| st.column(i)).collect()
}

fn int(c: &Connection, sql: &str) -> i64 {
    match one(c, sql)[0] {
        Value::Integer(n) => n,
        ref v => panic!("{sql}: {v:?}"),
    }
}

/// `count(*)` and `sum(length(s))` of t, and the sum of its ids: a digest of the table.
fn digest(c: &Connection) -> (i64, i64, i64) {
    (
        int(c, "SELECT count(*) FROM t"),
        int(c, "SELECT coalesce(sum(length(s)), 0) FROM t"),
        int(c, "SELECT coalesce(sum(id), 0) FROM t"),
    )
}

/// Inserts rows `lo..=hi` of ~300 bytes through one prepared statement.
fn insert(c: &Connection, lo: i64, hi: i64) {
    let (mut st, _) = c
        .prepare("INSERT INTO t VALUES (?1, ?2)")
        .expect("prepare")
        .expect("statement");
    for i in lo..=hi {
        st.bind(1, Value::Integer(i)).unwrap();
        st.bind(2, Value::Text(format!("{i:>8}{}", "x".repeat(290))))
            .unwrap();
        while st.step().unwrap() {}
        st.reset();
    }
}

fn open(path: &std::path::Path) -> (Database, Connection) {
    let db = Database::open(path.to_str().unwrap()).unwrap();
    let c = db.connect().unwrap();
    c.execute_batch(
        "PRAGMA cache_size=10;
         CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, s TEXT);
         CREATE INDEX IF NOT EXISTS t_s ON t(s)",
    )
    .unwrap();
    (db, c)
}

/// Rows a transaction writes: ~3 MB, over 1,500 pages of table and index, against a
/// 32-page spill bound.
const ROWS: i64 = 10_000;

#[test]
fn a_transaction_larger_than_the_cache_spills_reads_back_and_commits() {
    let path = temp_db_path("cache_spill", "commit");
    let (db, c) = open(&path);
    insert(&c, 1, 100);
    let before = db.stats();
    let reader = db.connect().unwrap();
    reader.execute_batch("BEGIN").unwrap();
    assert_eq!(digest(&reader).0, 100);
    c.execute_batch("BEGIN").unwrap();
    insert(&c, 101, ROWS);
    // Read-your-writes through spilled pages: the table, and the index in both orders.
    assert_eq!(int(&c, "SELECT count(*) FROM t"), ROWS);
    assert_eq!(
        int(
            &c,
            "SELECT count(*) FROM t WHERE s >= '    5000' AND s < '    6000'"
        ),
        1000
    );
    assert_eq!(int(&c, "SELECT id FROM t ORDER BY s DESC LIMIT 1"), ROWS);
    c.execute_batch("UPDATE t SET s = s || 'y' WHERE id % 3 = 0")
        .unwrap();
    let spilled = db.stats();
    assert!(
        spilled.spilled_pages > before.spilled_pages + 1000,
        "the transaction did not spill: {} → {}",
        before.spilled_pages,
        spilled.spilled_pages
    );
    let want = digest(&c);
    c.execute_batch("COMMIT").unwrap();
    assert!(db.stats().spilled_direct_pages > before.spilled_direct_pages);
    // The reader's snapshot never saw any of it.
    assert_eq!(digest(&reader).0, 100);
    reader.execute_batch("COMMIT").unwrap();
    assert_eq!(digest(&reader), want);
    assert_eq!(
        int(&c, "SELECT count(*) FROM t INDEXED BY t_s WHERE s > ''"),
        ROWS
    );
    assert_eq!(
        one(&c, "PRAGMA integrity_check")[0],
        Value::Text("ok".into())
    );
    drop((c, reader, db));
    assert_eq!(stock_integrity_problem(&path), None);
    let (_db, c) = open(&path);
    assert_eq!(digest(&c), want);
}

#[test]
fn rollback_and_savepoints_of_a_spilled_transaction_restore_exactly() {
    let path = temp_db_path("cache_spill", "rollback");
    let (db, c) = open(&path);
    insert(&c, 1, 100);
    let at_start = digest(&c);
    // A whole spilled transaction rolled back.
    c.execute_batch("BEGIN").unwrap();
    insert(&c, 101, ROWS);
    assert_eq!(digest(&c).0, ROWS);
    c.execute_batch("ROLLBACK").unwrap();
    assert_eq!(digest(&c), at_start);
    assert!(db.stats().spilled_pages > 1000);
    // Savepoints around spilled work: each ROLLBACK TO restores its state exactly.
    c.execute_batch("BEGIN").unwrap();
    insert(&c, 101, ROWS / 2);
    let at_a = digest(&c);
    c.execute_batch("SAVEPOINT a").unwrap();
    insert(&c, ROWS / 2 + 1, ROWS);
    c.execute_batch("UPDATE t SET s = 'z' || s WHERE id % 2 = 0")
        .unwrap();
    let at_b = digest(&c);
    c.execute_batch("SAVEPOINT b").unwrap();
    c.execute_batch("DELETE FROM t WHERE id % 5 = 0; UPDATE t SET s = s || 'w'")
        .unwrap();
    insert(&c, ROWS + 1, ROWS + 2000);
    c.execute_batch("ROLLBACK TO b").unwrap();
    assert_eq!(digest(&c), at_b);
    c.execute_batch("DELETE FROM t WHERE id > 9000; RELEASE b")
        .unwrap();
    c.execute_batch("ROLLBACK TO a").unwrap();
    assert_eq!(digest(&c), at_a);
    assert_eq!(
        one(&c, "PRAGMA integrity_check")[0],
        Value::Text("ok".into())
    );
    c.execute_batch("COMMIT").unwrap();
    assert_eq!(digest(&c), at_a);
    drop((c, db));
    assert_eq!(stock_integrity_problem(&path), None);
}

/// An autocommit `INSERT ... SELECT` of a sole connection spills too (it holds the writer
/// lock), and `cache_spill=OFF` keeps a transaction in memory, as SQLite's.
#[test]
fn insert_select_spills_and_cache_spill_off_does_not() {
    let path = temp_db_path("cache_spill", "off");
    let (db, c) = open(&path);
    c.execute_batch("BEGIN").unwrap();
    insert(&c, 1, ROWS);
    c.execute_batch("COMMIT").unwrap();
    let before = db.stats().spilled_pages;
    c.execute_batch(
        "CREATE TABLE u(id INTEGER PRIMARY KEY, s TEXT); INSERT INTO u SELECT * FROM t",
    )
    .unwrap();
    let after = db.stats().spilled_pages;
    assert!(
        after > before + 500,
        "INSERT ... SELECT spilled {}",
        after - before
    );
    assert_eq!(int(&c, "SELECT count(*) FROM u"), ROWS);
    c.execute_batch("PRAGMA cache_spill=OFF; DROP TABLE u")
        .unwrap();
    assert_eq!(int(&c, "PRAGMA cache_spill"), 0);
    c.execute_batch("BEGIN").unwrap();
    c.execute_batch("DELETE FROM t").unwrap();
    insert(&c, 1, ROWS);
    c.execute_batch("COMMIT").unwrap();
    assert_eq!(
        db.stats().spilled_pages,
        after,
        "spilled with cache_spill=OFF"
    );
    c.execute_batch("PRAGMA cache_spill=ON").unwrap();
    assert_eq!(int(&c, "SELECT count(*) FROM t"), ROWS);
}
