//! INSERT of many rows into an empty or a smaller table with indexes
//! (exec/dml/bulk_insert.rs): the rows are checked first, then the table is filled or
//! appended to and each index sorted (merged with its entries) and built bottom up. Against SQLite (rusqlite, bundled) as the oracle: the rows, every index
//! (read through queries that use it), changes(), last_insert_rowid(), total_changes(),
//! error messages in row order (a failing row falls back to the row-by-row path), and
//! `PRAGMA integrity_check`; then a file written this way through stock SQLite.

mod common;
use common::{check_script, Compare};
use parlite::{Connection, Value};

const SOURCE: &str = "
CREATE TABLE src(a INT, b INT, c TEXT, d);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
  INSERT INTO src SELECT i * 7919 % 3001, i, 'v' || (i * 31 % 997), CASE WHEN i % 7 = 0 THEN NULL ELSE i % 50 END FROM n;
";

#[test]
fn insert_select_into_empty_indexed_table() {
    let script = format!(
        "{SOURCE}
CREATE TABLE t(a INTEGER UNIQUE, b INT, c TEXT COLLATE NOCASE, d INT DEFAULT 7);
CREATE UNIQUE INDEX tb ON t(b DESC);
CREATE INDEX tc ON t(c, a);
CREATE INDEX td ON t(d) WHERE d > 20;
CREATE INDEX te ON t(b % 10, c);
INSERT INTO t SELECT * FROM src;
SELECT changes(), last_insert_rowid(), total_changes();
SELECT count(*), sum(a), sum(b), count(d) FROM t;
SELECT rowid, a, b FROM t WHERE a BETWEEN 100 AND 110 ORDER BY a;
SELECT rowid, b FROM t WHERE b > 2990 ORDER BY b DESC;
SELECT a, c FROM t WHERE c = 'V17' ORDER BY a;
SELECT count(*) FROM t WHERE d > 20;
SELECT a FROM t WHERE b % 10 = 3 AND c = 'v10' ORDER BY a;
PRAGMA integrity_check;
DELETE FROM t;
SELECT changes();
INSERT INTO t(b, a) SELECT b, a FROM src WHERE b % 3 = 0;
SELECT changes(), last_insert_rowid();
SELECT d, count(*) FROM t GROUP BY d;
SELECT rowid, a, b FROM t ORDER BY rowid LIMIT 5;
PRAGMA integrity_check;
CREATE TABLE n(x INTEGER PRIMARY KEY, y UNIQUE, z);
CREATE INDEX nz ON n(z);
INSERT INTO n SELECT CASE WHEN b % 5 = 0 THEN NULL ELSE 5000 - b END, d, c FROM src;
SELECT changes(), last_insert_rowid();
SELECT count(*), min(x), max(x) FROM n;
SELECT x, y FROM n WHERE y IS NULL ORDER BY x LIMIT 5;
SELECT x FROM n WHERE z = 'v3' ORDER BY x;
PRAGMA integrity_check;
"
    );
    check_script(&script, Compare::default());
}

#[test]
fn failures_are_reported_in_row_order() {
    // Each failing statement leaves the table empty; the next succeeds by the bulk path.
    let script = format!(
        "{SOURCE}
CREATE TABLE t(a INTEGER PRIMARY KEY, b INT UNIQUE, c TEXT NOT NULL, d INT CHECK (d <> 49));
CREATE INDEX tc ON t(c);
INSERT INTO t(b, c) SELECT b % 2000, c FROM src;
SELECT count(*) FROM t;
INSERT INTO t(b, c) SELECT b, CASE WHEN b = 1500 THEN NULL ELSE c END FROM src;
SELECT count(*) FROM t;
INSERT INTO t(b, c) SELECT b % 1400, CASE WHEN b = 1500 THEN NULL ELSE c END FROM src;
INSERT INTO t(b, c) SELECT b % 1600, CASE WHEN b = 1500 THEN NULL ELSE c END FROM src;
INSERT INTO t(b, c, d) SELECT b, c, d FROM src;
INSERT INTO t(a, b, c) SELECT b % 2500, b, c FROM src;
INSERT INTO t(a, b, c) SELECT 'x' || b, b, c FROM src;
INSERT INTO t(a, b, c) SELECT CASE WHEN b = 2999 THEN 'x' ELSE b END, b, c FROM src;
SELECT count(*) FROM t;
INSERT INTO t(a, b, c) SELECT 4000 - b, b, c FROM src;
SELECT changes(), last_insert_rowid();
SELECT a, b FROM t ORDER BY a LIMIT 3;
SELECT a, b FROM t WHERE b < 4 ORDER BY b;
PRAGMA integrity_check;
CREATE TABLE u(a UNIQUE, b TEXT COLLATE NOCASE UNIQUE);
INSERT INTO u SELECT b, CASE WHEN b = 2000 THEN 'V1' ELSE 'v' || b END FROM src;
INSERT INTO u SELECT CASE WHEN b = 2000 THEN '1' ELSE b END, 'w' || b FROM src;
SELECT count(*) FROM u;
DELETE FROM u;
INSERT INTO u SELECT CASE WHEN b = 2000 THEN 1.0 ELSE b END, 'w' || b FROM src;
SELECT count(*) FROM u;
DELETE FROM u;
INSERT INTO u SELECT CASE WHEN b % 2 = 0 THEN NULL ELSE b END, NULL FROM src;
SELECT changes(), count(*), count(a), count(b) FROM u;
PRAGMA integrity_check;
"
    );
    check_script(&script, Compare::default());
}

#[test]
fn conflict_clauses_triggers_and_transactions() {
    let script = format!(
        "{SOURCE}
CREATE TABLE t(a INT UNIQUE, b INT, c TEXT NOT NULL ON CONFLICT IGNORE);
CREATE INDEX tb ON t(b);
INSERT INTO t SELECT a % 2500, b, CASE WHEN b % 9 = 0 THEN NULL ELSE c END FROM src;
INSERT OR IGNORE INTO t SELECT a % 2500, b, CASE WHEN b % 9 = 0 THEN NULL ELSE c END FROM src;
SELECT changes(), last_insert_rowid(), count(*) FROM t;
SELECT rowid, a, b FROM t WHERE b > 2990 ORDER BY b;
DELETE FROM t;
INSERT OR REPLACE INTO t SELECT a % 2500, b, c FROM src;
SELECT changes(), last_insert_rowid(), count(*) FROM t;
SELECT rowid, a, b FROM t WHERE a < 3 ORDER BY a;
DELETE FROM t;
INSERT OR FAIL INTO t SELECT a % 2500, b, c FROM src;
SELECT count(*) FROM t;
DELETE FROM t;
BEGIN;
INSERT INTO t SELECT a, b, c FROM src;
SELECT count(*) FROM t WHERE b BETWEEN 10 AND 20;
ROLLBACK;
SELECT count(*) FROM t;
BEGIN;
SAVEPOINT s;
INSERT INTO t SELECT a, b, c FROM src;
ROLLBACK TO s;
INSERT INTO t SELECT a, b, c FROM src WHERE b < 100;
COMMIT;
SELECT count(*), max(rowid) FROM t;
DELETE FROM t;
CREATE TABLE log(x);
CREATE TRIGGER tr AFTER INSERT ON t WHEN new.b % 1000 = 0 BEGIN INSERT INTO log VALUES(new.rowid); END;
INSERT INTO t SELECT a, b, c FROM src;
SELECT * FROM log ORDER BY x;
DROP TRIGGER tr;
DELETE FROM t;
INSERT INTO t SELECT a, b, c FROM src WHERE b < 50 RETURNING rowid, a;
CREATE TABLE r(a INT UNIQUE ON CONFLICT REPLACE, b);
CREATE INDEX rb ON r(b);
INSERT INTO r SELECT a % 100, b FROM src;
SELECT count(*), sum(b) FROM r;
SELECT a, b FROM r WHERE b > 2995 ORDER BY b;
PRAGMA integrity_check;
"
    );
    check_script(&script, Compare::default());
}

#[test]
fn emptied_tables_defaults_generated_strict() {
    // A table emptied row by row keeps multi-level index trees: they are cleared first.
    let script = format!(
        "{SOURCE}
CREATE TABLE t(a INTEGER PRIMARY KEY, b INT, c TEXT DEFAULT ('dflt'), g INT AS (b * 2) VIRTUAL, s TEXT AS (c || '!') STORED);
CREATE UNIQUE INDEX tg ON t(g);
CREATE INDEX ts ON t(s, b);
INSERT INTO t(b, c) SELECT b, c FROM src;
DELETE FROM t WHERE a > 0;
SELECT count(*) FROM t;
INSERT INTO t(b) SELECT b FROM src WHERE b % 2 = 1;
SELECT changes(), last_insert_rowid();
SELECT a, b, c, g, s FROM t WHERE g BETWEEN 100 AND 110 ORDER BY g;
SELECT count(*) FROM t WHERE s = 'dflt!';
PRAGMA integrity_check;
CREATE TABLE st(a INTEGER PRIMARY KEY, b INT UNIQUE, c TEXT) STRICT;
INSERT INTO st(b, c) SELECT b, c FROM src;
SELECT count(*) FROM st;
DELETE FROM st;
INSERT INTO st(b, c) SELECT b, CASE WHEN b = 77 THEN 3 ELSE c END FROM src;
SELECT count(*) FROM st;
INSERT INTO st(b, c) SELECT b, CASE WHEN b = 77 THEN x'00' ELSE c END FROM src;
SELECT count(*) FROM st;
CREATE TABLE ai(id INTEGER PRIMARY KEY AUTOINCREMENT, b UNIQUE);
INSERT INTO ai(b) SELECT b FROM src;
SELECT changes(), last_insert_rowid();
SELECT * FROM sqlite_sequence;
PRAGMA integrity_check;
"
    );
    check_script(&script, Compare::default());
}

#[test]
fn insert_select_into_half_filled_indexed_table() {
    // speedtest1 test 300's shape: the second INSERT adds as many rows as the table holds,
    // so each index is rebuilt from its entries merged with the new ones.
    let script = format!(
        "{SOURCE}
CREATE TABLE t(a INTEGER UNIQUE, b INT, c TEXT COLLATE NOCASE, d INT DEFAULT 7);
CREATE UNIQUE INDEX tb ON t(b DESC);
CREATE INDEX tc ON t(c, a);
CREATE INDEX td ON t(d) WHERE d > 20;
CREATE INDEX te ON t(b % 10, c);
INSERT INTO t SELECT * FROM src WHERE (b & 1) == (a & 1);
SELECT changes(), last_insert_rowid();
INSERT INTO t SELECT * FROM src WHERE (b & 1) <> (a & 1);
SELECT changes(), last_insert_rowid(), total_changes();
SELECT count(*), sum(a), sum(b), count(d), max(rowid) FROM t;
SELECT rowid, a, b FROM t WHERE a BETWEEN 100 AND 110 ORDER BY a;
SELECT rowid, b FROM t WHERE b > 2990 ORDER BY b DESC;
SELECT a, c FROM t WHERE c = 'V17' ORDER BY a;
SELECT count(*) FROM t WHERE d > 20;
SELECT a FROM t WHERE b % 10 = 3 AND c = 'v10' ORDER BY a;
PRAGMA integrity_check;
DELETE FROM t WHERE b > 10;
INSERT INTO t(b, a, c) SELECT b, a, c FROM src WHERE b > 10 AND b <= 50;
SELECT changes(), last_insert_rowid(), count(*) FROM t;
INSERT INTO t(b, a, c) SELECT b, a, c FROM src WHERE b > 50 AND b <= 60;
SELECT changes(), last_insert_rowid(), count(*) FROM t;
SELECT rowid, a, b, c FROM t WHERE b BETWEEN 5 AND 15 ORDER BY b;
PRAGMA integrity_check;
"
    );
    check_script(&script, Compare::default());
}

#[test]
fn merge_failures_and_rowids_match_sqlite() {
    // A new key equal to an existing one (found as neighbours in the merge), explicit
    // rowids at or below the table's largest, NULLs in UNIQUE keys, negative rowids.
    let script = format!(
        "{SOURCE}
CREATE TABLE t(a INTEGER PRIMARY KEY, b INT UNIQUE, c TEXT COLLATE NOCASE UNIQUE, d);
CREATE INDEX td ON t(d);
INSERT INTO t(b, c, d) SELECT b, c || '-' || b, d FROM src WHERE b <= 1000;
INSERT INTO t(b, c, d) SELECT b, c || '-' || b, d FROM src WHERE b BETWEEN 1001 AND 2000 OR b = 999;
SELECT count(*), max(a) FROM t;
INSERT INTO t(b, c, d) SELECT b, upper(c) || '-' || (b - 1000), d FROM src WHERE b BETWEEN 1001 AND 2000;
SELECT count(*), max(a) FROM t;
INSERT INTO t(a, b, c) SELECT b - 2000, b, c || '-' || b FROM src WHERE b > 2000;
INSERT INTO t(a, b, c) SELECT b + 5000, b, c || '-' || b FROM src WHERE b > 2000;
SELECT changes(), last_insert_rowid(), count(*), max(a) FROM t;
DELETE FROM t WHERE a > 1000;
INSERT INTO t(a, b, c) SELECT -b, b, c || '-' || b FROM src WHERE b > 2000;
SELECT changes(), last_insert_rowid(), count(*), min(a) FROM t;
INSERT INTO t(b, c) SELECT NULL, NULL FROM src WHERE b <= 600;
INSERT INTO t(b, c) SELECT NULL, NULL FROM src WHERE b <= 600;
SELECT changes(), last_insert_rowid(), count(*), count(b), count(c) FROM t;
PRAGMA integrity_check;
CREATE TABLE g(x, y UNIQUE);
INSERT INTO g(rowid, x, y) SELECT CASE WHEN b = 1 THEN -5 ELSE NULL END, b, b FROM src WHERE b <= 40;
SELECT rowid, x FROM g ORDER BY x LIMIT 3;
DELETE FROM g WHERE x > 1;
INSERT INTO g(x, y) SELECT b, b FROM src WHERE b BETWEEN 2 AND 40;
SELECT rowid, x FROM g ORDER BY x LIMIT 3;
BEGIN;
INSERT INTO g(x, y) SELECT b, b FROM src WHERE b BETWEEN 41 AND 100;
SELECT count(*), max(rowid) FROM g;
ROLLBACK;
SELECT count(*), max(rowid) FROM g;
PRAGMA integrity_check;
"
    );
    check_script(&script, Compare::default());
}

fn rows(p: &Connection, sql: &str) -> Vec<Vec<Value>> {
    let mut st = p.prepare(sql).expect("prepare").expect("stmt").0;
    let mut out = Vec::new();
    while st.step().expect("step") {
        out.push((0..st.column_count()).map(|i| st.column(i)).collect());
    }
    out
}

/// Bulk-built trees in a file: stock SQLite checks them, reads the same rows and keeps
/// writing into them.
#[test]
fn bulk_inserted_file_passes_sqlite_integrity_check() {
    let path = common::temp_db_path("bulk_insert", "file");
    let queries = [
        "SELECT rowid, a, b, c, d FROM t ORDER BY rowid",
        "SELECT a, rowid FROM t INDEXED BY sqlite_autoindex_t_1 WHERE a > 0 ORDER BY a",
        "SELECT b FROM t INDEXED BY tb WHERE b > 0 ORDER BY b DESC",
        "SELECT c, a FROM t INDEXED BY tc WHERE c > '' ORDER BY c, a",
    ];
    let want: Vec<Vec<Vec<Value>>> = {
        let p = Connection::open(path.to_str().expect("utf8")).expect("open");
        p.execute_batch(SOURCE).expect("source");
        p.execute_batch(
            "CREATE TABLE t(a INTEGER UNIQUE, b INT, c TEXT, d INT);
             CREATE UNIQUE INDEX tb ON t(b DESC);
             CREATE INDEX tc ON t(c COLLATE NOCASE, a);
             INSERT INTO t SELECT * FROM src;
             INSERT INTO src SELECT a + 5000, b + 5000, c || 'x', d FROM src;
             DELETE FROM t;
             INSERT INTO t SELECT * FROM src;",
        )
        .expect("bulk inserts");
        queries.iter().map(|q| rows(&p, q)).collect()
    };
    let s = rusqlite::Connection::open(&path).expect("sqlite open");
    let ok: String = s
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("check");
    assert_eq!(ok, "ok");
    for (q, w) in queries.iter().zip(&want) {
        let common::Out::Rows { rows: got, .. } = common::run_sqlite(&s, q) else {
            panic!("{q} failed in SQLite");
        };
        assert_eq!(got.len(), 6000, "{q}");
        assert!(&got == w, "{q}: SQLite reads other rows");
    }
    s.execute_batch(
        "INSERT INTO t SELECT a + 20000, b + 20000, c, d FROM t WHERE b % 7 = 0;
         DELETE FROM t WHERE b % 5 = 0;",
    )
    .expect("sqlite writes");
    let ok: String = s
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("check");
    assert_eq!(ok, "ok");
}
