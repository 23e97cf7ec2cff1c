//! `PRAGMA cache_size`: the value reads back as SQLite's does, and it bounds the database's
//! page cache, which the connections of a database share (the bound is the largest setting
//! of an open connection: docs/concurrency.md).

mod common;

use common::{check_script, Compare, TempDir};
use parlite::{Connection, Database, Value};

/// What a set value reads back as, per schema, against SQLite (every statement but the
/// first read: parlite's default is 64 MiB where SQLite's is 2,000 KiB).
#[test]
fn cache_size_reads_back_what_was_set_as_sqlite_does() {
    check_script(
        "PRAGMA cache_size = 100;
         PRAGMA cache_size;
         PRAGMA cache_size = -4000;
         PRAGMA cache_size;
         PRAGMA cache_size = 0;
         PRAGMA cache_size;
         PRAGMA cache_size = '250';
         PRAGMA cache_size;
         PRAGMA cache_size = 12.75;
         PRAGMA cache_size;
         PRAGMA main.cache_size = 7;
         PRAGMA main.cache_size;
         PRAGMA cache_size;
         PRAGMA temp.cache_size = 9;
         PRAGMA temp.cache_size;
         PRAGMA cache_size;
         ATTACH ':memory:' AS aux;
         PRAGMA aux.cache_size = 11;
         PRAGMA aux.cache_size;
         PRAGMA main.cache_size;
         PRAGMA nosuch.cache_size;
         PRAGMA nosuch.cache_size = 5;",
        Compare::default(),
    );
}

fn int(c: &Connection, sql: &str) -> i64 {
    let mut st = c.prepare(sql).unwrap().unwrap().0;
    assert!(st.step().unwrap(), "{sql}: no row");
    match st.column(0) {
        Value::Integer(i) => i,
        v => panic!("{sql}: {v:?}"),
    }
}

#[test]
fn a_connection_that_sets_nothing_reads_back_the_64_mib_default() {
    let db = Database::open(":memory:").unwrap();
    let c = db.connect().unwrap();
    assert_eq!(int(&c, "PRAGMA cache_size"), -65536);
    assert_eq!(int(&c, "PRAGMA temp.cache_size"), -65536);
}

/// 2,000 rows of ~3 KB: one 4 KiB page each, checkpointed into the file so that every page
/// is clean and evictable.
fn filled(dir: &TempDir) -> (Database, Connection) {
    let db = Database::open(dir.join("t.db").to_str().unwrap()).unwrap();
    let c = db.connect().unwrap();
    c.execute_batch(
        "CREATE TABLE t(a INTEGER PRIMARY KEY, b BLOB);
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
         INSERT INTO t SELECT i, randomblob(3000) FROM n;
         PRAGMA wal_checkpoint(TRUNCATE);",
    )
    .unwrap();
    (db, c)
}

const SCAN: &str = "SELECT count(*), sum(length(b)) FROM t";

#[test]
fn cache_size_bounds_the_pages_the_cache_keeps() {
    let dir = TempDir::new("cache-size-bound");
    let (db, c) = filled(&dir);
    assert_eq!(db.stats().cache_pages_max, 16384);
    assert_eq!(int(&c, SCAN), 2000);
    assert!(db.stats().cache_pages > 2000, "{:?}", db.stats());

    c.execute_batch("PRAGMA cache_size = 100").unwrap();
    let st = db.stats();
    assert_eq!(st.cache_pages_max, 100);
    assert!(
        st.cache_pages <= 100,
        "a smaller bound evicts at once: {st:?}"
    );
    assert_eq!(int(&c, SCAN), 2000);
    let st = db.stats();
    assert!(
        st.cache_pages <= 100,
        "a scan keeps within the bound: {st:?}"
    );

    // Negative: KiB. 20,000 KiB are 5,000 pages of 4 KiB; the whole table fits again.
    c.execute_batch("PRAGMA cache_size = -20000").unwrap();
    assert_eq!(db.stats().cache_pages_max, 5000);
    assert_eq!(int(&c, SCAN), 2000);
    // Every leaf (the interior pages this thread read before may come from the pages it
    // keeps itself, storage pager/thread_memo.rs, instead of the cache).
    assert!(db.stats().cache_pages >= 2000, "{:?}", db.stats());
    assert_eq!(int(&c, "PRAGMA cache_size"), -20000);
    let mut st = c.prepare("PRAGMA integrity_check").unwrap().unwrap().0;
    assert!(st.step().unwrap());
    assert_eq!(st.column(0), Value::Text("ok".into()));
}

#[test]
fn the_shared_cache_keeps_the_largest_setting_of_an_open_connection() {
    let dir = TempDir::new("cache-size-max");
    let (db, c1) = filled(&dir);
    c1.execute_batch("PRAGMA cache_size = 100").unwrap();
    assert_eq!(db.stats().cache_pages_max, 100);

    // A new connection asks for the default until it sets its own.
    let c2 = db.connect().unwrap();
    assert_eq!(db.stats().cache_pages_max, 16384);
    c2.execute_batch("PRAGMA cache_size = 300").unwrap();
    assert_eq!(db.stats().cache_pages_max, 300);
    assert_eq!(
        int(&c1, "PRAGMA cache_size"),
        100,
        "each reads its own setting"
    );
    assert_eq!(int(&c2, "PRAGMA cache_size"), 300);

    // The larger ask goes with its connection.
    assert_eq!(int(&c2, SCAN), 2000);
    drop(c2);
    let st = db.stats();
    assert_eq!(st.cache_pages_max, 100);
    assert!(st.cache_pages <= 100, "{st:?}");
    assert_eq!(int(&c1, SCAN), 2000);
}

#[test]
fn negative_cache_size_counts_pages_of_the_databases_page_size() {
    // A database SQLite made with 1 KiB pages (parlite keeps a file's page size).
    let dir = TempDir::new("cache-size-pages");
    let path = dir.join("t.db");
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch("PRAGMA page_size = 1024; CREATE TABLE t(a); INSERT INTO t VALUES(1);")
        .unwrap();
    let db = Database::open(path.to_str().unwrap()).unwrap();
    let c = db.connect().unwrap();
    assert_eq!(int(&c, "PRAGMA page_size"), 1024);
    assert_eq!(
        db.stats().cache_pages_max,
        65536,
        "the 64 MiB default in 1 KiB pages"
    );
    c.execute_batch("PRAGMA cache_size = -400").unwrap();
    assert_eq!(db.stats().cache_pages_max, 400);
    c.execute_batch("PRAGMA cache_size = 50").unwrap();
    assert_eq!(db.stats().cache_pages_max, 50);
    assert_eq!(int(&c, "SELECT a FROM t"), 1);
}
