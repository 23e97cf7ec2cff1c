//! One-row INSERTs inside a transaction, which run without a statement savepoint when they
//! can fail only before their first write (`exec::needs_statement_savepoint`,
//! `dml::insert::single_write`), against SQLite on files: seeded runs of INSERTs that clash
//! on the rowid or on a UNIQUE index, fail NOT NULL or CHECK, carry every conflict clause,
//! with SAVEPOINT / ROLLBACK TO / RELEASE between them, on tables that qualify (no index,
//! one UNIQUE index with or without plain ones) and tables that keep the savepoint (two
//! UNIQUE indexes, whose second clash comes after the first index was written). Every
//! statement's outcome, the transaction state after it and the final files must equal
//! SQLite's. A failure that came after a write would end parlite's transaction (the
//! connection's rule for statements without a savepoint), which SQLite's does not: the
//! next statements' outcomes would differ.
//!
//! `PARLITE_SEED=n` replays one seed.

mod common;

use common::{run_parlite, run_sqlite, temp_db_path, Rng};

/// Tables under test: (tag, schema). 1 KiB pages, so that leaves split often.
const TABLES: &[(&str, &str)] = &[
    ("plain", "CREATE TABLE t(a INTEGER, b INTEGER NOT NULL, c TEXT CHECK(length(c) < 300))"),
    ("unique", "CREATE TABLE t(a INTEGER UNIQUE, b INTEGER NOT NULL, c TEXT CHECK(length(c) < 300))"),
    (
        "unique_and_plain",
        "CREATE TABLE t(a INTEGER UNIQUE, b INTEGER NOT NULL, c TEXT CHECK(length(c) < 300));
         CREATE INDEX tb ON t(b); CREATE INDEX tcb ON t(c, b)",
    ),
    ("text_pk", "CREATE TABLE t(c TEXT PRIMARY KEY, a INTEGER, b INTEGER NOT NULL)"),
    (
        "integer_pk",
        "CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER UNIQUE, b INTEGER NOT NULL, c TEXT);
         CREATE INDEX tbi ON t(b, id)",
    ),
    (
        "two_unique",
        "CREATE TABLE t(a INTEGER UNIQUE, b INTEGER NOT NULL UNIQUE, c TEXT CHECK(length(c) < 300));
         CREATE INDEX tc ON t(c)",
    ),
];

/// One random statement of the mix.
fn statement(r: &mut Rng) -> String {
    let a = match r.below(8) {
        0 => "NULL".to_string(),
        _ => r.below(400).to_string(),
    };
    let b = match r.below(30) {
        0 => "NULL".to_string(),
        _ => r.below(600).to_string(),
    };
    let len = match r.below(40) {
        0 => 300 + r.below(50),
        1..=3 => 100 + r.below(150),
        _ => r.below(30),
    };
    let c = format!("'{}{}'", "x".repeat(len as usize), r.below(50));
    let or = match r.below(12) {
        0 => " OR IGNORE",
        1 => " OR FAIL",
        2 => " OR ABORT",
        3 => " OR ROLLBACK",
        _ => "",
    };
    match r.below(100) {
        0..=69 => format!("INSERT{or} INTO t(a, b, c) VALUES({a}, {b}, {c})"),
        70..=79 => {
            let rowid = 1 + r.below(500);
            format!("INSERT{or} INTO t(rowid, a, b, c) VALUES({rowid}, {a}, {b}, {c})")
        }
        80..=81 => "INSERT INTO t DEFAULT VALUES".to_string(),
        82..=84 => "SAVEPOINT s".to_string(),
        85..=86 => "ROLLBACK TO s".to_string(),
        87..=88 => "RELEASE s".to_string(),
        89..=91 => "BEGIN".to_string(),
        92 => "COMMIT".to_string(),
        _ => "SELECT count(*), sum(a), sum(b), sum(length(c)), max(rowid), last_insert_rowid() \
              FROM t"
            .to_string(),
    }
}

fn run_seed(tag: &str, schema: &str, seed: u64) -> Vec<String> {
    let sp = temp_db_path("single-write-sqlite", tag);
    let pp = temp_db_path("single-write-parlite", tag);
    let s = rusqlite::Connection::open(&*sp).expect("sqlite");
    let p = parlite::Connection::open(pp.to_str().expect("utf-8 path")).expect("parlite");
    // No fsync per commit: after OR ROLLBACK the mix runs in autocommit for a while.
    let setup = format!("PRAGMA page_size=1024; PRAGMA synchronous=OFF; {schema}");
    s.execute_batch(&setup).expect("sqlite setup");
    p.execute_batch(&setup).expect("parlite setup");
    let mut r = Rng(seed);
    let mut failures = Vec::new();
    let mut script = vec!["BEGIN".to_string()];
    script.extend((0..1000).map(|_| statement(&mut r)));
    script.push("COMMIT".to_string());
    for stmt in &script {
        let a = run_sqlite(&s, stmt);
        let b = run_parlite(&p, stmt);
        if a != b {
            failures.push(format!("{stmt}\n  sqlite:  {a:?}\n  parlite: {b:?}"));
        }
        if s.is_autocommit() != p.is_autocommit() {
            failures.push(format!(
                "{stmt}\n  autocommit: sqlite {} parlite {}",
                s.is_autocommit(),
                p.is_autocommit()
            ));
        }
        if failures.len() > 5 {
            break;
        }
    }
    drop(p);
    let check = "SELECT rowid, a, b, c FROM t ORDER BY rowid";
    let want = run_sqlite(&s, check);
    let got = common::sqlite_rows(&pp, check);
    if want != got {
        failures.push(format!("rows after COMMIT differ (seed {seed})"));
    }
    failures.extend(common::stock_integrity_problem(&pp));
    failures
        .into_iter()
        .map(|f| format!("[{tag}, seed {seed}] {f}"))
        .collect()
}

#[test]
fn one_row_inserts_match_sqlite_on_every_table_shape() {
    let mut failures = Vec::new();
    for seed in common::seeds() {
        for (tag, schema) in TABLES {
            failures.extend(run_seed(tag, schema, seed));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The cases that decide between statement-only and whole-transaction failure, spelled
/// out: a UNIQUE clash on the only UNIQUE index (no savepoint, nothing written), a clash
/// on the second of two (savepoint kept: the first index's entry is taken back), each
/// followed by statements that must still run inside the same transaction.
#[test]
fn clashes_fail_the_statement_only() {
    for (tag, schema) in [TABLES[2], TABLES[5]] {
        let sp = temp_db_path("single-write-sqlite", tag);
        let pp = temp_db_path("single-write-parlite", tag);
        let s = rusqlite::Connection::open(&*sp).expect("sqlite");
        let p = parlite::Connection::open(pp.to_str().expect("utf-8 path")).expect("parlite");
        s.execute_batch(schema).expect("sqlite setup");
        p.execute_batch(schema).expect("parlite setup");
        for stmt in [
            "BEGIN",
            "INSERT INTO t VALUES(1, 10, 'one')",
            "INSERT INTO t VALUES(2, 20, 'two')",
            "INSERT INTO t VALUES(1, 30, 'clash on a')",
            "INSERT INTO t VALUES(3, 20, 'clash on b in two_unique')",
            "INSERT INTO t VALUES(4, NULL, 'not null')",
            "INSERT INTO t(rowid, a, b, c) VALUES(1, 5, 50, 'clash on the rowid')",
            "SELECT rowid, * FROM t ORDER BY rowid",
            "INSERT INTO t VALUES(6, 60, 'six')",
            "COMMIT",
            "SELECT rowid, * FROM t ORDER BY rowid",
            "SELECT a FROM t INDEXED BY sqlite_autoindex_t_1 WHERE a > 0 ORDER BY a",
        ] {
            let a = run_sqlite(&s, stmt);
            let b = run_parlite(&p, stmt);
            assert_eq!(a, b, "[{tag}] {stmt}");
            assert_eq!(s.is_autocommit(), p.is_autocommit(), "[{tag}] {stmt}");
        }
    }
}
