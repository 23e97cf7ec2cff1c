//! The bulk write paths — VACUUM copying trees bottom up, CREATE INDEX by sort and
//! bottom-up build, DELETE without WHERE clearing the trees (SQLite's truncate
//! optimization) — must give SQLite's results, changes() counts and error messages, fall
//! back to the row-by-row path whenever rows must be seen (triggers, foreign keys,
//! RETURNING), and leave files that stock SQLite's `PRAGMA integrity_check` accepts.

mod common;
use common::{check_script, Compare};
use parlite::{Connection, Value};

const SETUP: &str = "
CREATE TABLE t(a INTEGER PRIMARY KEY, b INT, c TEXT, d BLOB);
CREATE TABLE w(k TEXT PRIMARY KEY, v INT, x TEXT) WITHOUT ROWID;
CREATE TABLE au(id INTEGER PRIMARY KEY AUTOINCREMENT, s TEXT);
CREATE TABLE g(a INT, b INT, s INT GENERATED ALWAYS AS (a + b) VIRTUAL, p INT AS (a * 2) STORED);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
  INSERT INTO t(b, c, d) SELECT i % 97, 'row ' || (i * 7919 % 3001), CASE WHEN i % 50 = 0 THEN randomblob(3000 + i) ELSE x'00ff' END FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
  INSERT INTO w SELECT printf('k%05d', i * 37 % 2003), i, CASE WHEN i % 40 = 0 THEN zeroblob(2500) ELSE 'x' || i END FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500)
  INSERT INTO au(s) SELECT 's' || i FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 800)
  INSERT INTO g(a, b) SELECT i, i % 13 FROM n;
";

#[test]
fn create_index_matches_sqlite() {
    let script = format!(
        "{SETUP}
CREATE INDEX tb ON t(b);
CREATE INDEX tcd ON t(c DESC, b);
CREATE INDEX tcn ON t(c COLLATE NOCASE);
CREATE UNIQUE INDEX tbu ON t(b);
SELECT count(*) FROM sqlite_schema WHERE name = 'tbu';
CREATE UNIQUE INDEX tcu ON t(c, b);
CREATE UNIQUE INDEX tex ON t(b + 0);
CREATE INDEX tpart ON t(c) WHERE b < 10;
CREATE UNIQUE INDEX tpu ON t(b) WHERE a = 5;
CREATE INDEX wv ON w(v);
CREATE UNIQUE INDEX wx ON w(x);
CREATE UNIQUE INDEX wv2 ON w(v DESC);
CREATE INDEX gs ON g(s);
CREATE INDEX gp ON g(p, s);
CREATE UNIQUE INDEX gsu ON g(s);
CREATE TABLE nn(x, y);
INSERT INTO nn VALUES(NULL, 1), (NULL, 1), (1, NULL), (1, NULL), (2, 2);
CREATE UNIQUE INDEX nnu ON nn(x, y);
INSERT INTO nn VALUES(2, 2);
CREATE TABLE e(x);
CREATE UNIQUE INDEX eu ON e(x);
SELECT b, count(*) FROM t INDEXED BY tb WHERE b BETWEEN 5 AND 9 GROUP BY b ORDER BY b;
SELECT c, b FROM t INDEXED BY tcd WHERE c > 'row 2990' ORDER BY c DESC, b;
SELECT k, v FROM w INDEXED BY wv WHERE v BETWEEN 100 AND 110 ORDER BY v;
SELECT a, s FROM g INDEXED BY gs WHERE s BETWEEN 40 AND 44 ORDER BY s, a;
SELECT count(*) FROM t INDEXED BY tpart WHERE b < 10 AND c > 'row 1';
PRAGMA integrity_check;
REINDEX;
PRAGMA integrity_check;
SELECT count(*) FROM t WHERE b = 3;
"
    );
    check_script(&script, Compare::default());
}

#[test]
fn delete_all_matches_sqlite() {
    let script = format!(
        "{SETUP}
CREATE INDEX tb ON t(b);
CREATE INDEX wv ON w(v);
CREATE INDEX gs ON g(s);
DELETE FROM t;
SELECT changes(), total_changes() > 0;
SELECT count(*) FROM t;
SELECT count(*) FROM t WHERE b = 3;
DELETE FROM w;
SELECT changes();
DELETE FROM w;
SELECT changes();
DELETE FROM g;
SELECT changes(), count(*) FROM g;
DELETE FROM au;
SELECT changes();
INSERT INTO au(s) VALUES('after');
SELECT id, s FROM au;
SELECT name, seq FROM sqlite_sequence;
INSERT INTO t(b, c) VALUES(1, 'again');
SELECT a, b, c FROM t;
PRAGMA integrity_check;
CREATE TABLE log(x);
CREATE TABLE tr(a, b);
INSERT INTO tr VALUES(1, 2), (3, 4), (5, 6);
CREATE TRIGGER trd AFTER DELETE ON tr BEGIN INSERT INTO log VALUES(old.a); END;
DELETE FROM tr;
SELECT changes();
SELECT x FROM log ORDER BY x;
CREATE TABLE rt(a, b);
INSERT INTO rt VALUES(1, 2), (3, 4);
DELETE FROM rt RETURNING a;
PRAGMA foreign_keys = ON;
CREATE TABLE par(id INTEGER PRIMARY KEY);
CREATE TABLE chi(p REFERENCES par(id) ON DELETE CASCADE);
CREATE TABLE chr(p REFERENCES par(id));
INSERT INTO par VALUES(1), (2), (3);
INSERT INTO chi VALUES(1), (2), (2);
DELETE FROM par;
SELECT changes();
SELECT count(*) FROM chi;
INSERT INTO par VALUES(7);
INSERT INTO chr VALUES(7);
DELETE FROM par;
SELECT count(*) FROM par;
BEGIN;
CREATE TABLE sp(x);
INSERT INTO sp VALUES(1), (2), (3);
SAVEPOINT s1;
DELETE FROM sp;
ROLLBACK TO s1;
SELECT count(*) FROM sp;
COMMIT;
"
    );
    check_script(&script, Compare::default());
}

#[test]
fn vacuum_matches_sqlite() {
    let script = format!(
        "{SETUP}
CREATE INDEX tb ON t(b);
CREATE INDEX tcd ON t(c DESC);
CREATE INDEX wv ON w(v);
CREATE INDEX gs ON g(s);
DELETE FROM t WHERE a % 3 = 0;
DELETE FROM w WHERE v % 4 = 1;
VACUUM;
PRAGMA integrity_check;
SELECT count(*), sum(b), sum(length(d)) FROM t;
SELECT count(*), sum(v) FROM w;
SELECT k, v, length(x) FROM w WHERE k BETWEEN 'k00100' AND 'k00120' ORDER BY k;
SELECT b, count(*) FROM t WHERE b BETWEEN 10 AND 12 GROUP BY b;
SELECT a, s, p FROM g WHERE s = 40 ORDER BY a;
INSERT INTO t(b, c) VALUES(5, 'post vacuum');
INSERT INTO au(s) VALUES('next');
SELECT max(a) FROM t;
SELECT max(id) FROM au;
VACUUM main;
PRAGMA integrity_check;
"
    );
    check_script(&script, Compare::default());
}

#[test]
fn unique_checked_while_inserting_matches_sqlite() {
    // INSERT checks UNIQUE indexes in the same descent as it inserts (ABORT only): a clash
    // must give SQLite's error and leave nothing of the statement behind, in autocommit
    // and inside a transaction; other conflict actions keep probing first.
    let script = "
CREATE TABLE u(a INTEGER UNIQUE, b TEXT UNIQUE, c INT, d INT);
CREATE INDEX uc ON u(c);
CREATE UNIQUE INDEX ud ON u(d DESC, c) WHERE d > 0;
INSERT INTO u VALUES(1, 'x', 1, 1), (2, 'y', 2, 2), (NULL, NULL, 3, 3), (NULL, NULL, 3, 0);
INSERT INTO u VALUES(3, 'z', 4, 4), (4, 'x', 5, 5);
SELECT * FROM u ORDER BY c, a;
INSERT INTO u VALUES(5, 'w', 2, 2);
INSERT INTO u VALUES(6, 'v', 2, -2), (7, 'X', 8, 8);
SELECT * FROM u ORDER BY c, a;
CREATE TABLE src(a, b, c, d);
INSERT INTO src VALUES(10, 'p', 10, 10), (11, 'q', 11, 11), (1, 'r', 12, 12);
INSERT INTO u SELECT * FROM src;
SELECT count(*) FROM u;
BEGIN;
INSERT INTO u VALUES(20, 'm', 20, 20);
INSERT INTO u SELECT * FROM src;
SELECT count(*) FROM u;
COMMIT;
SELECT * FROM u ORDER BY c, a;
PRAGMA integrity_check;
INSERT OR IGNORE INTO u SELECT * FROM src;
SELECT * FROM u ORDER BY c, a;
INSERT OR REPLACE INTO u VALUES(1, 'k', 30, 30);
INSERT INTO u VALUES(41, 'k', 41, 41);
SELECT * FROM u ORDER BY c, a;
CREATE TABLE ab(a UNIQUE ON CONFLICT IGNORE, b UNIQUE);
INSERT INTO ab VALUES(1, 1), (1, 2), (2, 1);
INSERT INTO ab VALUES(3, 3), (4, 1);
SELECT * FROM ab ORDER BY a;
CREATE TABLE pk(a TEXT PRIMARY KEY, b UNIQUE);
INSERT INTO pk VALUES('a', 1), ('b', 2);
INSERT INTO pk VALUES('c', 3), ('a', 4);
INSERT INTO pk VALUES('d', 2);
SELECT * FROM pk ORDER BY a;
PRAGMA integrity_check;
";
    check_script(script, Compare::default());
}

/// Two concurrent transactions adding the same UNIQUE key under distinct rowids: the
/// one-descent check records the key's prefix as read, so the second commit conflicts
/// (serializable) instead of leaving a duplicate.
#[test]
fn concurrent_unique_inserts_conflict() {
    let db = parlite::Database::open(":memory:").expect("open");
    let c1 = db.connect().expect("c1");
    let c2 = db.connect().expect("c2");
    c1.execute_batch("CREATE TABLE u(a UNIQUE, b); PRAGMA isolation_level = serializable")
        .expect("schema");
    c2.execute_batch("PRAGMA isolation_level = serializable")
        .expect("pragma");
    c1.execute_batch("BEGIN CONCURRENT").expect("begin");
    c2.execute_batch("BEGIN CONCURRENT").expect("begin");
    c1.execute_batch("INSERT INTO u(rowid, a, b) VALUES(10, 1, 'c1')")
        .expect("c1 insert");
    c2.execute_batch("INSERT INTO u(rowid, a, b) VALUES(20, 1, 'c2')")
        .expect("c2 insert");
    c1.execute_batch("COMMIT").expect("c1 commit");
    assert!(c2.execute_batch("COMMIT").is_err(), "duplicate committed");
    assert_eq!(
        rows(&c2, "SELECT rowid, a, b FROM u"),
        vec![vec![
            Value::Integer(10),
            Value::Integer(1),
            Value::Text("c1".into())
        ]]
    );
    assert_eq!(
        rows(&c2, "PRAGMA integrity_check"),
        vec![vec![Value::Text("ok".into())]]
    );
}

fn temp_path(tag: &str) -> common::TempDb {
    common::temp_db_path("bulk", tag)
}

fn rows(p: &Connection, sql: &str) -> Vec<Vec<Value>> {
    let mut st = p.prepare(sql).expect("prepare").expect("stmt").0;
    let mut out = Vec::new();
    while st.step().expect("step") {
        out.push((0..st.column_count()).map(|i| st.column(i)).collect());
    }
    out
}

/// Every bulk path on a file, then stock SQLite checks it and reads the same rows.
#[test]
fn bulk_written_files_pass_sqlite_integrity_check() {
    let path = temp_path("file");
    let queries = [
        "SELECT a, b, c, length(d) FROM t ORDER BY a",
        "SELECT k, v, length(x) FROM w ORDER BY k",
        "SELECT id, s FROM au ORDER BY id",
        "SELECT a, b, s, p FROM g ORDER BY a",
        "SELECT b, a FROM t INDEXED BY tb ORDER BY b, a",
    ];
    let want: Vec<Vec<Vec<Value>>> = {
        let p = Connection::open(path.to_str().expect("utf8")).expect("open");
        p.execute_batch(SETUP).expect("setup");
        p.execute_batch(
            "CREATE INDEX tb ON t(b);
             CREATE UNIQUE INDEX tcu ON t(c, a);
             CREATE INDEX wv ON w(v DESC);
             CREATE INDEX gs ON g(s);
             CREATE TABLE t2(a INTEGER PRIMARY KEY, b INT, c TEXT, d BLOB);
             CREATE INDEX t2b ON t2(b);
             INSERT INTO t2 SELECT * FROM t;
             DELETE FROM t;
             INSERT INTO t SELECT * FROM t2 WHERE a % 2 = 0;
             DELETE FROM w WHERE v % 3 = 0;
             VACUUM;
             DELETE FROM t2;
             INSERT INTO t SELECT * FROM t2;",
        )
        .expect("bulk writes");
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
        assert!(&got == w, "{q}: SQLite reads other rows");
    }
    // SQLite keeps writing into the rebuilt trees.
    s.execute_batch(
        "INSERT INTO t(b, c) SELECT b, c || '!' FROM t WHERE a % 8 = 0;
         DELETE FROM w WHERE v % 5 = 0;",
    )
    .expect("sqlite writes");
    let ok: String = s
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("check");
    assert_eq!(ok, "ok");
}
