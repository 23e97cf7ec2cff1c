//! REPLACE's clash on a UNIQUE index resolved where the descent found it
//! (exec/dml/replace.rs, storage btree/insert.rs `index_replace_unique`): the clashing
//! leaf entry is overwritten by the new key (in its place when the cell keeps its size,
//! else dropped and inserted at the same index) and the clashing row loses its other
//! entries; a clash on an interior cell falls back to find, delete whole, insert again.
//! Against SQLite (rusqlite, bundled): rows, every index read through queries that use it,
//! changes(), and `PRAGMA integrity_check` of the file by stock SQLite.

mod common;

use common::{check_script, integrity_check_rows, sqlite_rows, temp_db_path, Compare, Out};
use parlite::Value;

/// Deterministic generator (PCG-style LCG) so a failure replays from the printed seed.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

fn seed() -> u64 {
    std::env::var("PARLITE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20261123)
}

/// Thousands of clashing rows over trees several levels deep (clashes on leaf and interior
/// cells), keys of changing size (integers crossing varint widths, NOCASE text that compares
/// equal with other bytes, text long enough to overflow the index page), then the file
/// through stock SQLite.
#[test]
fn random_replaces_over_unique_indexes() {
    let seed = seed();
    println!("seed {seed} (PARLITE_SEED replays)");
    let mut g = Lcg(seed);
    let dir = temp_db_path("replace_ow", "random");
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("r.db");
    let mut script = String::from(
        "BEGIN;
         CREATE TABLE src(a, b, c);
         CREATE TABLE z(a INTEGER UNIQUE, b INTEGER, c TEXT);
         CREATE UNIQUE INDEX zb ON z(b);
         CREATE INDEX zc ON z(c DESC);
         CREATE TABLE n(k TEXT COLLATE NOCASE UNIQUE, v);
         CREATE TABLE w(k TEXT UNIQUE, v);
         CREATE INDEX wv ON w(v);\n",
    );
    for i in 0..3000u64 {
        let a = g.next() % 1500;
        let b = g.next() % 100_000 * if g.next() % 3 == 0 { 100_000 } else { 1 };
        script.push_str(&format!(
            "INSERT OR REPLACE INTO src VALUES({a}, {b}, 'c{}');\n",
            g.next() % 400
        ));
        let k = g.next() % 600;
        let case = if g.next() % 2 == 0 { "KEY" } else { "key" };
        script.push_str(&format!(
            "REPLACE INTO n VALUES('{case}{k}{}', {i});\n",
            "x".repeat((g.next() % 3) as usize)
        ));
        let long = g.next() % 300;
        script.push_str(&format!(
            "REPLACE INTO w VALUES('{}{long}', {});\n",
            "w".repeat(if long % 7 == 0 { 3000 } else { 20 }),
            g.next() % 50
        ));
    }
    script.push_str(
        "INSERT OR IGNORE INTO z SELECT a, b, c FROM src;
         REPLACE INTO z(a, b, c) SELECT a, b, c FROM src;
         REPLACE INTO z(a, b, c) SELECT a + 700, b, c || 'x' FROM src WHERE a % 3 = 0;
         REPLACE INTO z(a, b, c) SELECT a * 1000000, b + 1, c FROM src WHERE a % 5 = 0;
         COMMIT;\n",
    );
    let c = parlite::Connection::open(path.to_str().expect("utf8")).expect("open");
    c.execute_batch(&script).expect("script");
    drop(c);
    let s = rusqlite::Connection::open_in_memory().expect("sqlite");
    s.execute_batch(&script).expect("sqlite script");
    for q in [
        "SELECT rowid, a, b, c FROM z ORDER BY rowid",
        "SELECT b, rowid FROM z ORDER BY b",
        "SELECT a, rowid FROM z WHERE a IS NOT NULL ORDER BY a",
        "SELECT c, rowid FROM z ORDER BY c DESC, rowid",
        "SELECT rowid, k, v FROM n ORDER BY rowid",
        "SELECT k, rowid FROM n ORDER BY k",
        "SELECT rowid, length(k), substr(k, -4), v FROM w ORDER BY rowid",
        "SELECT substr(k, -4), rowid FROM w ORDER BY k",
        "SELECT v, count(*) FROM w GROUP BY v ORDER BY v",
    ] {
        let theirs = common::run_sqlite(&s, q);
        assert_eq!(sqlite_rows(&path, q), theirs, "seed {seed}: {q}");
    }
    assert_eq!(integrity_check_rows(&path), vec!["ok".to_string()]);
    match sqlite_rows(&path, "PRAGMA integrity_check") {
        Out::Rows { rows, .. } => assert_eq!(rows, vec![vec![Value::Text("ok".into())]]),
        other => panic!("seed {seed}: integrity_check: {other:?}"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The overwrite and its fall-backs next to each other: several UNIQUE clashes in one row,
/// an expression UNIQUE index, NOCASE keys of another length, a partial UNIQUE index (the
/// whole shortcut is off), DELETE triggers with recursive_triggers and ON DELETE actions
/// (the hooked path), WITHOUT ROWID, and the change counts.
#[test]
fn overwrite_and_its_fallbacks() {
    check_script(
        "CREATE TABLE z(a INTEGER UNIQUE, b INTEGER, c TEXT COLLATE NOCASE UNIQUE);
         CREATE UNIQUE INDEX zb ON z(b);
         CREATE INDEX zc ON z(c DESC);
         INSERT INTO z VALUES(1, 10, 'x'), (2, 20, 'y'), (3, 30, 'z'), (4, 40, 'w');
         REPLACE INTO z VALUES(1, 20, 'Z');
         SELECT changes(), total_changes(), last_insert_rowid();
         SELECT rowid, * FROM z ORDER BY rowid;
         SELECT rowid FROM z WHERE a = 1;
         SELECT rowid FROM z WHERE b = 20;
         SELECT rowid, c FROM z WHERE c = 'z';
         SELECT rowid FROM z WHERE c = 'x';
         REPLACE INTO z VALUES(4, 40, 'WWWWWWWWWWWWWWWWWWWWWWWWWWWW');
         REPLACE INTO z VALUES(4000000000, 40, 'w');
         SELECT changes();
         SELECT rowid, * FROM z ORDER BY rowid;
         SELECT a, rowid FROM z ORDER BY a;
         SELECT c, rowid FROM z ORDER BY c DESC;
         CREATE TABLE e(a, b);
         CREATE UNIQUE INDEX ea ON e(a * 2);
         CREATE INDEX eb ON e(b);
         INSERT INTO e VALUES(1, 'one'), (2, 'two'), (3, 'three');
         REPLACE INTO e VALUES(1.0, 'uno');
         REPLACE INTO e SELECT a, b || '!' FROM e;
         SELECT rowid, * FROM e ORDER BY rowid;
         SELECT rowid FROM e WHERE a * 2 = 4;
         SELECT rowid FROM e WHERE b = 'uno!';
         CREATE TABLE p(a, b);
         CREATE UNIQUE INDEX pa ON p(a) WHERE b > 0;
         CREATE UNIQUE INDEX pb ON p(b);
         INSERT INTO p VALUES(1, 1), (1, 0), (2, 5);
         REPLACE INTO p VALUES(1, 5);
         SELECT rowid, * FROM p ORDER BY rowid;
         CREATE TABLE wr(k TEXT PRIMARY KEY, u UNIQUE, v) WITHOUT ROWID;
         INSERT INTO wr VALUES('a', 1, 'x'), ('b', 2, 'y');
         REPLACE INTO wr VALUES('c', 1, 'z');
         SELECT changes();
         SELECT * FROM wr ORDER BY k;
         SELECT k FROM wr WHERE u = 1;
         PRAGMA integrity_check;",
        Compare::default(),
    );
}

#[test]
fn overwrite_with_triggers_and_foreign_keys() {
    check_script(
        "PRAGMA recursive_triggers = ON;
         CREATE TABLE t(a INTEGER UNIQUE, b UNIQUE, c);
         CREATE TABLE log(x);
         CREATE TRIGGER td AFTER DELETE ON t BEGIN INSERT INTO log VALUES('del ' || old.a); END;
         INSERT INTO t VALUES(1, 'p', 1), (2, 'q', 2), (3, 'r', 3);
         REPLACE INTO t VALUES(1, 'q', 9);
         SELECT changes();
         SELECT rowid, * FROM t ORDER BY rowid;
         SELECT * FROM log ORDER BY rowid;
         PRAGMA recursive_triggers = OFF;
         REPLACE INTO t VALUES(3, 's', 9);
         SELECT * FROM log ORDER BY rowid;
         SELECT rowid, * FROM t ORDER BY rowid;
         PRAGMA foreign_keys = ON;
         CREATE TABLE par(id INTEGER PRIMARY KEY, u UNIQUE);
         CREATE TABLE kid(x, pu REFERENCES par(u) ON DELETE CASCADE);
         INSERT INTO par VALUES(1, 'a'), (2, 'b');
         INSERT INTO kid VALUES(1, 'a'), (2, 'b');
         REPLACE INTO par VALUES(3, 'a');
         SELECT * FROM par ORDER BY id;
         SELECT * FROM kid ORDER BY x;
         PRAGMA foreign_keys = OFF;
         REPLACE INTO par VALUES(4, 'b');
         SELECT * FROM par ORDER BY id;
         SELECT * FROM kid ORDER BY x;
         SELECT id FROM par WHERE u = 'b';
         PRAGMA integrity_check;",
        Compare::default(),
    );
}

/// A concurrent transaction's overwrite is recorded as the old key's delete and the new
/// key's insert: committed after another transaction changed other keys of the same
/// index, it is rebased or replayed and both transactions' rows are there, as SQLite has
/// them when the two run one after the other.
#[test]
fn concurrent_replace_overwrite_commits_after_another() {
    let db = parlite::Database::open(":memory:").expect("open");
    let c1 = db.connect().expect("c1");
    let c2 = db.connect().expect("c2");
    let setup = "CREATE TABLE u(a INTEGER UNIQUE, b);
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 400)
         INSERT INTO u SELECT i, 'old' FROM n;";
    let first = "UPDATE u SET a = a + 10000, b = 'c2' WHERE a BETWEEN 250 AND 350;";
    let second = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200)
         REPLACE INTO u(a, b) SELECT i, 'c1' FROM n;";
    c1.execute_batch(setup).expect("setup");
    c1.execute_batch("BEGIN CONCURRENT").expect("begin");
    c2.execute_batch("BEGIN CONCURRENT").expect("begin");
    c1.execute_batch(second).expect("c1 replace");
    c2.execute_batch(first).expect("c2 replace");
    c2.execute_batch("COMMIT").expect("c2 commit");
    c1.execute_batch("COMMIT").expect("c1 commit");
    let s = rusqlite::Connection::open_in_memory().expect("sqlite");
    s.execute_batch(setup).expect("sqlite setup");
    s.execute_batch(first).expect("sqlite first");
    s.execute_batch(second).expect("sqlite second");
    for q in [
        "SELECT a, b FROM u ORDER BY a",
        "SELECT count(*), count(DISTINCT rowid) FROM u",
        "SELECT b, count(*) FROM u GROUP BY b ORDER BY b",
        "PRAGMA integrity_check",
    ] {
        assert_eq!(
            common::run_parlite(&c1, q),
            common::run_sqlite(&s, q),
            "{q}"
        );
    }
}
