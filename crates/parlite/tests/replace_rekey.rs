//! REPLACE handing a deleted row's index entries to the new row (exec/dml/replace.rs,
//! `Replacing`; storage btree/insert.rs `index_rekey`): UNIQUE indexes are written first,
//! and the clashing row's entry in an index not yet written, whose key columns the new row
//! shares, is moved to the new row (in its leaf cell when the new key sorts there, else
//! deleted and inserted) instead of deleted and inserted again. The clashing row is read
//! and deleted in one descent (`table_take`). A WITHOUT ROWID REPLACE without secondary
//! indexes overwrites its row by PRIMARY KEY (`index_put`).
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

/// Runs `script` in parlite (a file) and SQLite (memory), then compares `queries` and has
/// stock SQLite check the file.
fn compare_file(tag: &str, script: &str, queries: &[&str], seed: u64) {
    let dir = temp_db_path("replace_rekey", tag);
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("r.db");
    let c = parlite::Connection::open(path.to_str().expect("utf8")).expect("open");
    c.execute_batch(script).expect("script");
    drop(c);
    let s = rusqlite::Connection::open_in_memory().expect("sqlite");
    s.execute_batch(script).expect("sqlite script");
    for q in queries {
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

/// Rows replaced by themselves (only the rowid changes: every entry moves), by rows that
/// keep some key columns and change others, by rows clashing with two rows at once;
/// indexes created before and after the UNIQUE ones (the writer's order puts later ones
/// first), DESC, NOCASE, an expression, a partial index the new row may leave or enter,
/// keys long enough to overflow the page and of changing size, over trees several levels
/// deep (entries at leaf edges and in interior cells take the general path).
#[test]
fn random_replaces_move_entries() {
    let seed = seed();
    println!("seed {seed} (PARLITE_SEED replays)");
    let mut g = Lcg(seed);
    let mut script = String::from(
        "BEGIN;
         CREATE TABLE src(a, b, c, d);
         CREATE INDEX early ON src(d);
         CREATE TABLE z(a INTEGER UNIQUE, b INTEGER, c TEXT COLLATE NOCASE, d);
         CREATE INDEX zc ON z(c DESC);
         CREATE UNIQUE INDEX zb ON z(b);
         CREATE INDEX zdc ON z(d, c);
         CREATE INDEX zp ON z(d) WHERE a % 3 = 0;
         CREATE INDEX ze ON z(length(c) + b);
         CREATE TABLE t(a INTEGER UNIQUE, b, c);
         CREATE INDEX tbc ON t(b, c);\n",
    );
    for _ in 0..2500u64 {
        let a = g.next() % 1200;
        let b = g.next() % 5000;
        let pad = if g.next() % 11 == 0 {
            1500
        } else {
            (g.next() % 90) as usize
        };
        let case = if g.next() % 2 == 0 { "C" } else { "c" };
        script.push_str(&format!(
            "INSERT OR REPLACE INTO src VALUES({a}, {b}, '{case}{}{}', {});\n",
            g.next() % 300,
            "p".repeat(pad),
            g.next() % 40
        ));
    }
    script.push_str(
        "INSERT OR IGNORE INTO z SELECT a, b, c, d FROM src;
         INSERT OR IGNORE INTO t SELECT a, b, c FROM src;
         REPLACE INTO z(a, b, c, d) SELECT a, b, c, d FROM src;
         REPLACE INTO t(a, b, c) SELECT a, b, c FROM src;
         REPLACE INTO z(a, b, c, d) SELECT a, b, upper(c), d + 1 FROM src WHERE a % 4 = 0;
         REPLACE INTO z(a, b, c, d) SELECT a + 1, b, c, d FROM src WHERE a % 7 = 0;
         REPLACE INTO t(a, b, c) SELECT a, b, c || 'x' FROM src WHERE a % 5 = 0;
         REPLACE INTO t(rowid, a, b, c) SELECT rowid + 100000, a, b, c FROM t WHERE a % 2 = 0;
         COMMIT;\n",
    );
    compare_file(
        "random",
        &script,
        &[
            "SELECT rowid, a, b, c, d FROM z ORDER BY rowid",
            "SELECT b, rowid FROM z ORDER BY b",
            "SELECT a, rowid FROM z WHERE a IS NOT NULL ORDER BY a",
            "SELECT c, rowid FROM z ORDER BY c DESC, rowid",
            "SELECT d, c, rowid FROM z WHERE d > 5 ORDER BY d, c",
            "SELECT d, rowid FROM z WHERE a % 3 = 0 AND d < 20 ORDER BY d",
            "SELECT length(c) + b, rowid FROM z WHERE length(c) + b > 100 ORDER BY 1",
            "SELECT rowid, a, b, c FROM t ORDER BY rowid",
            "SELECT b, c, rowid FROM t WHERE b > 0 ORDER BY b, c",
            "SELECT a, rowid FROM t WHERE a > 0 ORDER BY a",
        ],
        seed,
    );
}

/// The moves next to the cases that must not move: a new row whose key columns differ,
/// a partial index the new row leaves, two clashing rows, a general-path clash, change
/// counts, and the hooked path (triggers, foreign keys), which moves nothing.
#[test]
fn moves_and_the_entries_that_must_not_move() {
    check_script(
        "CREATE TABLE z(a INTEGER UNIQUE, b UNIQUE, c, d);
         CREATE INDEX zc ON z(c);
         CREATE INDEX zd ON z(d) WHERE d > 0;
         CREATE INDEX zcd ON z(c, d DESC);
         INSERT INTO z VALUES(1, 10, 'x', 1), (2, 20, 'y', 2), (3, 30, 'x', -3), (4, 40, NULL, 4);
         REPLACE INTO z VALUES(1, 10, 'x', 1);
         SELECT changes(), last_insert_rowid();
         REPLACE INTO z VALUES(2, 20, 'y', -2);
         REPLACE INTO z VALUES(3, 30, 'X', 3);
         REPLACE INTO z VALUES(4, 20, NULL, 4);
         SELECT changes();
         SELECT rowid, * FROM z ORDER BY rowid;
         SELECT c, rowid FROM z WHERE c >= 'x' ORDER BY c;
         SELECT d, rowid FROM z WHERE d > 0 ORDER BY d;
         SELECT c, d, rowid FROM z WHERE c IS NOT NULL ORDER BY c, d DESC;
         SELECT rowid FROM z WHERE b = 20;
         REPLACE INTO z SELECT a, b, c, d FROM z;
         SELECT rowid, * FROM z ORDER BY rowid;
         SELECT c, rowid FROM z WHERE c >= 'x' ORDER BY c;
         CREATE TABLE k(a INTEGER PRIMARY KEY, u UNIQUE, v);
         CREATE INDEX kv ON k(v);
         INSERT INTO k VALUES(1, 'a', 'same'), (2, 'b', 'same');
         REPLACE INTO k VALUES(3, 'a', 'same');
         REPLACE INTO k VALUES(2, 'b', 'same');
         SELECT rowid, * FROM k ORDER BY rowid;
         SELECT v, rowid FROM k WHERE v = 'same' ORDER BY rowid;
         PRAGMA recursive_triggers = ON;
         CREATE TABLE log(x);
         CREATE TRIGGER td AFTER DELETE ON z BEGIN INSERT INTO log VALUES(old.rowid); END;
         REPLACE INTO z VALUES(1, 10, 'x', 1);
         SELECT * FROM log;
         SELECT c, rowid FROM z WHERE c >= 'x' ORDER BY c;
         PRAGMA integrity_check;",
        Compare::default(),
    );
}

/// WITHOUT ROWID REPLACE by PRIMARY KEY without secondary indexes: records of the same
/// size (overwritten in the cell), larger, smaller and overflowing ones, keys that clash
/// in interior cells (a tree several levels deep), NOCASE and composite keys.
#[test]
fn without_rowid_replace_overwrites_by_key() {
    let seed = seed();
    let mut g = Lcg(seed ^ 0x5eed);
    let mut script = String::from(
        "BEGIN;
         CREATE TABLE w(k TEXT PRIMARY KEY, v) WITHOUT ROWID;
         CREATE TABLE n(k TEXT COLLATE NOCASE, j INT, v, PRIMARY KEY(k, j DESC)) WITHOUT ROWID;\n",
    );
    for i in 0..6000u64 {
        let k = g.next() % 700;
        let v = match g.next() % 5 {
            0 => format!("{i}"),
            1 => format!("'{}'", "v".repeat((g.next() % 40) as usize)),
            2 => format!("'{}'", "o".repeat(2000 + (g.next() % 3000) as usize)),
            3 => "NULL".to_string(),
            _ => format!("{}.5", g.next()),
        };
        script.push_str(&format!(
            "REPLACE INTO w VALUES('key number {k} {}', {v});\n",
            "k".repeat((k % 50) as usize)
        ));
        let case = if g.next() % 2 == 0 { "N" } else { "n" };
        script.push_str(&format!(
            "INSERT OR REPLACE INTO n VALUES('{case}{}', {}, {v});\n",
            g.next() % 60,
            g.next() % 4
        ));
    }
    script.push_str("SELECT changes(); COMMIT;\n");
    compare_file(
        "wr",
        &script,
        &[
            "SELECT k, v FROM w ORDER BY k",
            "SELECT count(*), sum(length(v)) FROM w",
            "SELECT k, j, v FROM n ORDER BY k, j DESC",
            "SELECT k, j FROM n WHERE k = 'n7' ORDER BY j DESC",
        ],
        seed,
    );
    check_script(
        "CREATE TABLE w(k TEXT PRIMARY KEY, v) WITHOUT ROWID;
         INSERT INTO w VALUES('a', 1), ('b', 2);
         REPLACE INTO w VALUES('a', 'longer value');
         SELECT changes(), total_changes();
         REPLACE INTO w VALUES('b', 3), ('c', 4);
         SELECT changes();
         REPLACE INTO w VALUES(NULL, 5);
         SELECT * FROM w ORDER BY k;
         PRAGMA integrity_check;",
        Compare::default(),
    );
}

/// A concurrent transaction's moved entries are recorded as the old key's delete and the
/// new key's insert, and its read-and-delete of the clashing row as a read and a delete:
/// committed after another transaction changed other rows of the same tables, it is
/// rebased or replayed and both transactions' rows are there, as SQLite has them when the
/// two run one after the other.
#[test]
fn concurrent_moves_commit_after_another() {
    let db = parlite::Database::open(":memory:").expect("open");
    let c1 = db.connect().expect("c1");
    let c2 = db.connect().expect("c2");
    let setup = "CREATE TABLE u(a INTEGER UNIQUE, b, c);
         CREATE INDEX ub ON u(b, c);
         CREATE TABLE w(k TEXT PRIMARY KEY, v) WITHOUT ROWID;
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 400)
         INSERT INTO u SELECT i, i % 37, 'old' FROM n;
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 400)
         INSERT INTO w SELECT 'k' || i, i FROM n;";
    let first = "UPDATE u SET a = a + 10000, c = 'c2' WHERE a BETWEEN 250 AND 350;
         UPDATE w SET v = -v WHERE v BETWEEN 250 AND 350;";
    let second = "REPLACE INTO u(a, b, c) SELECT a, b, c FROM u WHERE a <= 200;
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200)
         REPLACE INTO w SELECT 'k' || i, i * 2 FROM n;";
    c1.execute_batch(setup).expect("setup");
    c1.execute_batch("BEGIN CONCURRENT").expect("begin");
    c2.execute_batch("BEGIN CONCURRENT").expect("begin");
    c1.execute_batch(second).expect("c1 replace");
    c2.execute_batch(first).expect("c2 update");
    c2.execute_batch("COMMIT").expect("c2 commit");
    c1.execute_batch("COMMIT").expect("c1 commit");
    let s = rusqlite::Connection::open_in_memory().expect("sqlite");
    s.execute_batch(setup).expect("sqlite setup");
    s.execute_batch(first).expect("sqlite first");
    s.execute_batch(second).expect("sqlite second");
    for q in [
        "SELECT rowid, a, b, c FROM u ORDER BY rowid",
        "SELECT b, c, rowid FROM u WHERE b >= 0 ORDER BY b, c",
        "SELECT k, v FROM w ORDER BY k",
        "PRAGMA integrity_check",
    ] {
        assert_eq!(
            common::run_parlite(&c1, q),
            common::run_sqlite(&s, q),
            "{q}"
        );
    }
}
