//! The B-tree's write primitives (btree/page.rs, insert.rs, delete.rs: cells rewritten in
//! place, placed in freeblocks, freed into the freeblock list, pages defragmented and
//! balanced only when needed) against SQLite as the oracle: random mixes of inserts,
//! REPLACEs, growing and shrinking UPDATEs and range DELETEs, in small pages so that
//! every path (fragments, overflow chains, splits, merges) is taken, run on parlite and on
//! SQLite from the same starting file. Afterwards stock SQLite opens parlite's file: its
//! `PRAGMA integrity_check` must say ok and every row must equal the oracle's.
//!
//! `PARLITE_SEED=n` replays one seed.

mod common;

use common::Rng;
use parlite::{Connection, Value};
use std::path::{Path, PathBuf};

/// The draws this file's seeded mixes use, beside `common::Rng`'s.
impl Rng {
    /// A text length: mostly short, sometimes long enough to spill to overflow pages.
    fn text_len(&mut self) -> u64 {
        match self.below(20) {
            0 => 900 + self.below(2500),
            1..=4 => 100 + self.below(200),
            _ => self.below(40),
        }
    }
}

const SCHEMA: &str = "
PRAGMA page_size=1024;
PRAGMA journal_mode=DELETE;
CREATE TABLE t(a INTEGER PRIMARY KEY, b INT, c TEXT, d BLOB);
CREATE INDEX tb ON t(b);
CREATE INDEX tc ON t(c);
CREATE TABLE w(k TEXT PRIMARY KEY, v INT, p TEXT) WITHOUT ROWID;
CREATE INDEX wv ON w(v);
";

/// One statement of the mix; deterministic SQL, so both engines do the same thing.
fn statement(r: &mut Rng) -> String {
    let a = 1 + r.below(1500);
    let span = r.below(30);
    match r.below(12) {
        0..=2 => format!(
            "INSERT OR REPLACE INTO t VALUES({a}, {}, replace(hex(zeroblob({})), '00', 'x'), zeroblob({}))",
            r.below(100),
            r.text_len(),
            r.below(60)
        ),
        3 => format!(
            "INSERT INTO t(b, c) VALUES({}, replace(hex(zeroblob({})), '00', 'n'))",
            r.below(100),
            r.text_len()
        ),
        4 | 5 => format!(
            "UPDATE t SET c = replace(hex(zeroblob({})), '00', 'u') WHERE a BETWEEN {a} AND {}",
            r.text_len(),
            a + span
        ),
        6 => format!(
            "UPDATE t SET d = zeroblob({}), b = b + 1 WHERE b = {}",
            r.below(200),
            r.below(100)
        ),
        7 => format!("DELETE FROM t WHERE a BETWEEN {a} AND {}", a + span),
        8 => format!("DELETE FROM t WHERE b = {}", r.below(100)),
        9 => format!(
            "INSERT OR REPLACE INTO w VALUES('k' || {}, {}, replace(hex(zeroblob({})), '00', 'w'))",
            r.below(800),
            r.below(50),
            r.text_len()
        ),
        10 => format!(
            "UPDATE w SET p = replace(hex(zeroblob({})), '00', 'v') WHERE v = {}",
            r.text_len(),
            r.below(50)
        ),
        _ => format!("DELETE FROM w WHERE v = {}", r.below(50)),
    }
}

fn scratch_dir(seed: u64) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("parlite-btree-mix-{}-{seed}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn sqlite_rows(c: &rusqlite::Connection, sql: &str) -> Vec<Vec<rusqlite::types::Value>> {
    let mut st = c.prepare(sql).expect("prepare");
    let n = st.column_count();
    let rows = st
        .query_map([], |row| {
            (0..n)
                .map(|i| row.get::<_, rusqlite::types::Value>(i))
                .collect()
        })
        .expect("query");
    rows.map(|r| r.expect("row")).collect()
}

fn integrity(c: &rusqlite::Connection) -> String {
    c.query_row("PRAGMA integrity_check", [], |r| r.get::<_, String>(0))
        .expect("integrity_check")
}

fn parlite_integrity(p: &Connection) -> String {
    let mut st = p
        .prepare("PRAGMA integrity_check")
        .expect("prepare")
        .expect("a statement")
        .0;
    assert!(st.step().expect("step"));
    match st.column(0) {
        Value::Text(t) => t,
        other => format!("{other:?}"),
    }
}

fn run_mix(seed: u64, statements: usize) {
    let dir = scratch_dir(seed);
    let ours = dir.join("parlite.db");
    let oracle = dir.join("sqlite.db");
    {
        let c = rusqlite::Connection::open(&ours).expect("create");
        c.execute_batch(SCHEMA).expect("schema");
    }
    std::fs::copy(&ours, &oracle).expect("copy");
    let mut script = Vec::new();
    let mut r = Rng(seed);
    for i in 0..statements {
        if i % 40 == 0 {
            script.push("BEGIN".to_string());
        }
        script.push(statement(&mut r));
        if i % 40 == 39 || i + 1 == statements {
            script.push("COMMIT".to_string());
        }
    }
    {
        let p = Connection::open(path_str(&ours)).expect("parlite open");
        for sql in &script {
            p.execute_batch(sql)
                .unwrap_or_else(|e| panic!("seed {seed}: parlite: {sql}: {e}"));
        }
        assert_eq!(parlite_integrity(&p), "ok", "seed {seed}: parlite's check");
    }
    {
        let s = rusqlite::Connection::open(&oracle).expect("oracle open");
        for sql in &script {
            s.execute_batch(sql)
                .unwrap_or_else(|e| panic!("seed {seed}: sqlite: {sql}: {e}"));
        }
    }
    let s = rusqlite::Connection::open(&oracle).expect("oracle");
    let o = rusqlite::Connection::open(&ours).expect("sqlite opens parlite's file");
    assert_eq!(
        integrity(&o),
        "ok",
        "seed {seed}: SQLite's check of parlite's file"
    );
    for q in [
        "SELECT a, b, c, d FROM t ORDER BY a",
        "SELECT b, a FROM t INDEXED BY tb ORDER BY b, a",
        "SELECT k, v, p FROM w ORDER BY k",
        "SELECT v, k FROM w INDEXED BY wv ORDER BY v, k",
    ] {
        let (got, want) = (sqlite_rows(&o, q), sqlite_rows(&s, q));
        assert!(
            want.len() > 10,
            "seed {seed}: the mix left too few rows to test"
        );
        assert_eq!(got.len(), want.len(), "seed {seed}: row count of {q}");
        assert!(got == want, "seed {seed}: rows of {q} differ");
    }
    drop((o, s));
    let _ = std::fs::remove_dir_all(&dir);
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("utf8 path")
}

#[test]
fn random_write_mixes_leave_sqlite_readable_files() {
    if let Some(seed) = std::env::var("PARLITE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        run_mix(seed, 1500);
        return;
    }
    for seed in 1..=6 {
        run_mix(seed, 1500);
    }
}
