//! REPLACE written over an existing row in place (exec/dml.rs `write_row_over`,
//! `write_row_wr`): a REPLACE whose rowid (or WITHOUT ROWID primary key) names an existing
//! row rewrites that row and only the index entries whose key changed, instead of deleting
//! the row with all its entries and inserting it again. Against SQLite (rusqlite, bundled)
//! as the oracle: the rows, every index (read through queries that use it), changes(),
//! last_insert_rowid() and `PRAGMA integrity_check`; then the file through stock SQLite.
//! A new row whose every UNIQUE index resolves by REPLACE is written index by index, each
//! UNIQUE index probed in the descent that inserts into it (exec/dml/replace.rs).

mod common;

use common::{check_script, integrity_check_rows, sqlite_rows, temp_db_path, Compare, Out};

#[test]
fn rowid_replace_over_existing_rows() {
    check_script(
        "CREATE TABLE t(a INTEGER PRIMARY KEY, b, c UNIQUE, d);
         CREATE INDEX tb ON t(b);
         CREATE INDEX td ON t(d) WHERE d > 10;
         CREATE INDEX te ON t(b || 'x', c);
         INSERT INTO t VALUES(1, 'one', 10, 5), (2, 'two', 20, 15), (3, 'three', 30, 25);
         REPLACE INTO t VALUES(1, 'one', 10, 5);
         SELECT changes(), last_insert_rowid();
         REPLACE INTO t VALUES(2, 'deux', 20, 5);
         REPLACE INTO t VALUES(3, 'three', 31, 35);
         SELECT * FROM t ORDER BY a;
         SELECT a FROM t WHERE b = 'two';
         SELECT a FROM t WHERE b = 'deux';
         SELECT a FROM t WHERE d > 10 ORDER BY d;
         SELECT a FROM t WHERE b || 'x' = 'deuxx';
         SELECT a FROM t WHERE c = 30;
         -- The row at the rowid and another row holding the UNIQUE value: both go.
         REPLACE INTO t VALUES(1, 'uno', 20, 50);
         SELECT changes(), last_insert_rowid(), total_changes();
         SELECT * FROM t ORDER BY a;
         SELECT a FROM t WHERE c = 20;
         SELECT count(*) FROM t WHERE b = 'deux';
         INSERT OR REPLACE INTO t(a, b, c) VALUES(3, NULL, NULL), (3, 'again', 7);
         SELECT * FROM t ORDER BY a;
         SELECT a, b FROM t WHERE b IS NULL OR b = 'again';
         PRAGMA integrity_check;",
        Compare::default(),
    );
}

#[test]
fn declared_replace_with_abort_indexes() {
    check_script(
        "CREATE TABLE k(a INTEGER PRIMARY KEY ON CONFLICT REPLACE, b UNIQUE, c);
         CREATE INDEX kc ON k(c);
         INSERT INTO k VALUES(1, 1, 'x'), (2, 2, 'y');
         INSERT INTO k VALUES(1, 1, 'z');
         SELECT * FROM k ORDER BY a;
         SELECT a FROM k WHERE c = 'x';
         INSERT INTO k VALUES(1, 5, 'w');
         SELECT a, b FROM k WHERE b = 1;
         INSERT INTO k VALUES(1, 2, 'v');
         SELECT * FROM k ORDER BY a;
         BEGIN;
         INSERT INTO k VALUES(2, 2, 'q');
         ROLLBACK;
         SELECT * FROM k ORDER BY a;
         INSERT INTO k VALUES(3, 3, 'u');
         UPDATE k SET a = 2 WHERE a = 3;
         UPDATE k SET a = 2, b = 7 WHERE a = 3;
         SELECT * FROM k ORDER BY a;
         SELECT a FROM k WHERE b = 7;
         CREATE TABLE s(a INTEGER PRIMARY KEY AUTOINCREMENT, b);
         INSERT INTO s VALUES(5, 'x');
         REPLACE INTO s VALUES(5, 'y');
         SELECT * FROM s;
         SELECT name, seq FROM sqlite_sequence;
         INSERT INTO s(b) VALUES('z');
         SELECT * FROM s ORDER BY a;
         PRAGMA integrity_check;",
        Compare::default(),
    );
}

#[test]
fn replace_with_triggers_and_returning() {
    check_script(
        "CREATE TABLE t(a INTEGER PRIMARY KEY, b);
         CREATE TABLE log(x);
         CREATE TRIGGER ti AFTER INSERT ON t BEGIN INSERT INTO log VALUES('ins ' || new.a || ' ' || new.b); END;
         CREATE TRIGGER td AFTER DELETE ON t BEGIN INSERT INTO log VALUES('del ' || old.a); END;
         INSERT INTO t VALUES(1, 'a');
         REPLACE INTO t VALUES(1, 'b') RETURNING *;
         SELECT * FROM log ORDER BY rowid;
         SELECT * FROM t;",
        Compare::default(),
    );
}

#[test]
fn without_rowid_replace_over_existing_rows() {
    check_script(
        "CREATE TABLE w(a TEXT PRIMARY KEY, b, c UNIQUE) WITHOUT ROWID;
         CREATE INDEX wb ON w(b);
         INSERT INTO w VALUES('x', 1, 10), ('y', 2, 20), ('z', 3, 30);
         REPLACE INTO w VALUES('x', 1, 10);
         SELECT changes();
         REPLACE INTO w VALUES('y', 5, 20);
         REPLACE INTO w VALUES('z', 3, 31);
         SELECT * FROM w ORDER BY a;
         SELECT a FROM w WHERE b = 5;
         SELECT count(*) FROM w WHERE b = 2;
         SELECT a FROM w WHERE c = 31;
         REPLACE INTO w VALUES('x', 9, 20);
         SELECT * FROM w ORDER BY a;
         SELECT a FROM w WHERE c = 20;
         CREATE TABLE w2(a, b, c, PRIMARY KEY(b, a)) WITHOUT ROWID;
         INSERT INTO w2 VALUES(1, 'p', 1), (2, 'p', 2), (1, 'q', 3);
         REPLACE INTO w2 VALUES(1, 'p', 9), (1, 'P', 8);
         INSERT OR REPLACE INTO w2 VALUES(2, 'p', NULL);
         SELECT * FROM w2 ORDER BY b, a;
         CREATE TABLE w3(a TEXT PRIMARY KEY COLLATE NOCASE, b) WITHOUT ROWID;
         INSERT INTO w3 VALUES('Abc', 1);
         REPLACE INTO w3 VALUES('aBC', 2);
         SELECT * FROM w3;
         PRAGMA integrity_check;",
        Compare::default(),
    );
}

/// A REPLACE into a WITHOUT ROWID table with no secondary index deletes the entry holding
/// its PRIMARY KEY, if any, and inserts the new record, without probing (exec/dml.rs
/// `write_row_wr`); triggers, upserts, IGNORE and RETURNING keep their own paths.
#[test]
fn without_rowid_replace_without_secondary_indexes() {
    check_script(
        "CREATE TABLE k(a INT, b TEXT COLLATE NOCASE, c, PRIMARY KEY(b DESC, a)) WITHOUT ROWID;
         INSERT INTO k VALUES(1, 'p', 1), (2, 'p', 2), (1, 'q', 3);
         REPLACE INTO k VALUES(1, 'P', 9), (3, 'r', 4);
         SELECT changes(), total_changes();
         SELECT * FROM k ORDER BY b DESC, a;
         INSERT OR REPLACE INTO k SELECT a, b, c * 10 FROM k WHERE a < 3;
         INSERT OR REPLACE INTO k VALUES(5, 'x', 1), (5, 'X', 2), (5, 'x', 3);
         SELECT changes();
         SELECT * FROM k ORDER BY b DESC, a;
         REPLACE INTO k VALUES(7, 'z', 1) RETURNING *;
         REPLACE INTO k VALUES(7, 'Z', 2) RETURNING a, b, c;
         INSERT OR IGNORE INTO k VALUES(7, 'z', 3);
         INSERT INTO k VALUES(7, 'z', 4) ON CONFLICT DO UPDATE SET c = excluded.c + 100;
         SELECT * FROM k WHERE a = 7;
         INSERT INTO k VALUES(7, 'z', 5);
         CREATE TABLE d(a TEXT PRIMARY KEY ON CONFLICT REPLACE, b CHECK (b <> 0), g AS (b * 2) STORED) WITHOUT ROWID;
         INSERT INTO d(a, b) VALUES('one', 1), ('two', 2);
         INSERT INTO d(a, b) VALUES('one', 3);
         INSERT INTO d(a, b) VALUES('two', 0);
         SELECT * FROM d ORDER BY a;
         BEGIN;
         REPLACE INTO d(a, b) VALUES('one', 5), ('three', 6);
         ROLLBACK;
         SELECT * FROM d ORDER BY a;
         CREATE TABLE log(x);
         CREATE TRIGGER dd AFTER DELETE ON d BEGIN INSERT INTO log VALUES(old.a || ':' || old.b); END;
         PRAGMA recursive_triggers = ON;
         REPLACE INTO d(a, b) VALUES('one', 7);
         PRAGMA recursive_triggers = OFF;
         REPLACE INTO d(a, b) VALUES('two', 8);
         SELECT * FROM log;
         SELECT * FROM d ORDER BY a;
         PRAGMA integrity_check;",
        Compare::default(),
    );
}

/// speedtest1 tests 400 and 500 in small: many REPLACEs on few keys, in one file, which
/// stock SQLite must find intact and equal to its own result.
#[test]
fn many_replaces_leave_a_file_sqlite_accepts() {
    let dir = temp_db_path("replace", "many");
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("r.db");
    let mut script = String::from(
        "BEGIN;
         CREATE TABLE t5(a INTEGER PRIMARY KEY, b, c UNIQUE);
         CREATE INDEX t5b ON t5(b);
         CREATE TABLE t6(a TEXT PRIMARY KEY, b) WITHOUT ROWID;
         CREATE TABLE t7(a INTEGER PRIMARY KEY, b);\n",
    );
    let mut x: u64 = 7;
    for i in 0..3000 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let k = (x >> 33) % 700;
        script.push_str(&format!(
            "REPLACE INTO t5 VALUES({k}, 'v{}', {});\n\
             REPLACE INTO t6 VALUES('key number {k} {}', {i});\n\
             REPLACE INTO t7 VALUES({k}, zeroblob({}));\n",
            i % 37,
            (x >> 20) % 900,
            "pad".repeat((k % 50) as usize),
            (x >> 40) % 9000
        ));
    }
    script.push_str("COMMIT;\n");
    let c = parlite::Connection::open(path.to_str().expect("utf8")).expect("open");
    c.execute_batch(&script).expect("script");
    drop(c);
    let s = rusqlite::Connection::open_in_memory().expect("sqlite");
    s.execute_batch(&script).expect("sqlite script");
    for q in [
        "SELECT a, b, c FROM t5 ORDER BY a",
        "SELECT b, count(*) FROM t5 GROUP BY b ORDER BY b",
        "SELECT a, b FROM t6 ORDER BY a",
        "SELECT a, length(b) FROM t7 ORDER BY a",
    ] {
        let theirs = common::run_sqlite(&s, q);
        assert_eq!(sqlite_rows(&path, q), theirs, "{q}");
    }
    assert_eq!(integrity_check_rows(&path), vec!["ok".to_string()]);
    match sqlite_rows(&path, "PRAGMA integrity_check") {
        Out::Rows { rows, .. } => assert_eq!(rows, vec![vec![parlite::Value::Text("ok".into())]]),
        other => panic!("integrity_check: {other:?}"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn replace_clashing_in_several_unique_indexes() {
    check_script(
        "CREATE TABLE z(a INTEGER UNIQUE, b INTEGER, c TEXT COLLATE NOCASE UNIQUE);
         CREATE UNIQUE INDEX zb ON z(b);
         CREATE INDEX zc ON z(c DESC);
         INSERT INTO z VALUES(1, 10, 'x'), (2, 20, 'y'), (3, 30, 'z'), (NULL, NULL, NULL), (NULL, NULL, NULL);
         REPLACE INTO z VALUES(1, 20, 'Z');
         SELECT changes(), last_insert_rowid();
         SELECT rowid, * FROM z ORDER BY rowid;
         SELECT rowid FROM z WHERE b = 20;
         SELECT rowid FROM z WHERE c = 'z';
         SELECT count(*) FROM z WHERE c = 'y';
         INSERT OR REPLACE INTO z(a, b, c) SELECT a + 1, b, c FROM z WHERE a IS NOT NULL;
         SELECT rowid, * FROM z ORDER BY rowid;
         REPLACE INTO z VALUES(NULL, NULL, NULL);
         SELECT count(*) FROM z WHERE a IS NULL;
         REPLACE INTO z(rowid, a, b, c) VALUES(100, 2, 30, 'q');
         SELECT rowid, * FROM z ORDER BY rowid;
         CREATE TABLE d(a UNIQUE ON CONFLICT REPLACE, b UNIQUE ON CONFLICT REPLACE, c);
         INSERT INTO d VALUES(1, 1, 'one'), (2, 2, 'two'), (3, 3, 'three');
         INSERT INTO d VALUES(1, 2, 'both');
         SELECT rowid, * FROM d ORDER BY rowid;
         CREATE TABLE p(a, b);
         CREATE UNIQUE INDEX pa ON p(a) WHERE b > 0;
         INSERT INTO p VALUES(1, 1), (1, 0), (2, 5);
         REPLACE INTO p VALUES(1, 2);
         SELECT rowid, * FROM p ORDER BY rowid;
         CREATE TABLE s(id INTEGER PRIMARY KEY AUTOINCREMENT, u UNIQUE);
         INSERT INTO s(u) VALUES('a'), ('b');
         REPLACE INTO s(u) VALUES('a');
         SELECT * FROM s ORDER BY id;
         SELECT seq FROM sqlite_sequence WHERE name = 's';
         PRAGMA integrity_check;",
        Compare::default(),
    );
}
