//! Index entries written in runs of adjacent keys, statement after statement in one
//! transaction: the storage transaction starts each index write at the leaf of that
//! index's previous write when the key falls inside it (storage btree/insert.rs
//! `IndexHint`), and ascending keys append to the right-most leaf without a descent.
//! DELETEs and UPDATEs of index ranges (speedtest1 tests 230 and 270), ascending and
//! descending INSERT … SELECT runs, appends past the largest key (test 110), REPLACE
//! refills (test 290), UNIQUE clashes half-way through a run, texts long enough to
//! spill keys onto overflow pages, on files of 512 B, 1 KiB and 4 KiB pages. Against
//! SQLite (rusqlite, bundled): every statement's outcome, then every table and index
//! read in order, and `PRAGMA integrity_check` of parlite's file by stock SQLite.

mod common;

use common::{integrity_check_rows, run_parlite, run_sqlite, sqlite_rows, temp_db_path, Out, Rng};
use parlite::Value;

fn seed() -> u64 {
    std::env::var("PARLITE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20261124)
}

const SCHEMA: &str = "CREATE TABLE z(a INTEGER UNIQUE, b INTEGER, c TEXT);
CREATE UNIQUE INDEX zb ON z(b);
CREATE INDEX zc ON z(c DESC);
CREATE TABLE src(n INTEGER PRIMARY KEY, t TEXT);";

/// A text for `n`: its words, and for one `n` in 13 a tail longer than a small page, so
/// that `zc`'s keys spill onto overflow pages.
fn text(n: u64) -> String {
    let tail = if n % 13 == 4 {
        "~".repeat(700 + (n % 5) as usize * 400)
    } else {
        String::new()
    };
    format!("t{:06}{}", (n * 7919) % 1_000_000, tail)
}

/// One statement of the mix; the values make runs of adjacent keys in each index.
fn statement(g: &mut Rng, n: u64) -> String {
    let lo = g.below(n * 4);
    let w = 1 + g.below(40);
    match g.below(10) {
        // Ascending rows: `a` past the largest (appends), `b` a run.
        0 | 1 => format!(
            "INSERT INTO z(a, b, c) SELECT (SELECT coalesce(max(a), 0) FROM z) + n, {lo} * 10 + n, \
             t FROM src WHERE n <= {w} ORDER BY n"
        ),
        // A descending run of `b`, clashing with existing rows now and then.
        2 => format!(
            "INSERT OR IGNORE INTO z(a, b, c) SELECT -({lo} * 100 + n), {lo} * 10 + 40 - n, t \
             FROM src WHERE n <= {w} ORDER BY n"
        ),
        3 => format!(
            "DELETE FROM z WHERE b BETWEEN {} AND {}",
            lo * 10,
            lo * 10 + w * 3
        ),
        4 => format!("DELETE FROM z WHERE a BETWEEN {lo} AND {}", lo + w),
        // The walked index's key moved (a clash aborts the statement half-way).
        5 => format!(
            "UPDATE z SET b = b + {} WHERE b BETWEEN {} AND {}",
            g.below(3),
            lo * 10,
            lo * 10 + w * 2
        ),
        6 => format!(
            "UPDATE z SET c = c || 'x' WHERE b BETWEEN {} AND {}",
            lo * 10,
            lo * 10 + w * 5
        ),
        // REPLACE of a run of rows by themselves with new rowids, as test 290.
        7 => format!(
            "REPLACE INTO z(a, b, c) SELECT a, b, c FROM z WHERE b BETWEEN {} AND {} ORDER BY b",
            lo * 10,
            lo * 10 + w * 4
        ),
        8 => format!(
            "INSERT INTO z(a, b, c) VALUES({}, {}, 'one')",
            lo * 1000 + 7,
            lo * 10 + 5
        ),
        _ => "DELETE FROM z WHERE rowid IN (SELECT rowid FROM z ORDER BY c DESC LIMIT 5)".into(),
    }
}

fn run(page_size: u32, statements: usize, seed: u64) {
    let path = temp_db_path("index_write_runs", &page_size.to_string());
    let mut setup = String::from(SCHEMA);
    setup.push_str("\nINSERT INTO src VALUES");
    for n in 1..=40u64 {
        setup.push_str(&format!(
            "{}({n}, '{}')",
            if n > 1 { "," } else { "" },
            text(n)
        ));
    }
    setup.push(';');
    {
        // Stock SQLite makes the file, so its page size is the one asked for.
        let f = rusqlite::Connection::open(&path).expect("create");
        f.execute_batch(&format!("PRAGMA page_size={page_size}; {setup}"))
            .expect("file setup");
    }
    let p = parlite::Connection::open(path.to_str().expect("utf8")).expect("open");
    let s = rusqlite::Connection::open_in_memory().expect("sqlite");
    s.execute_batch(&setup).expect("sqlite setup");
    let mut g = Rng(seed);
    let mut failures = Vec::new();
    let both = |sql: &str, failures: &mut Vec<String>| {
        let (theirs, ours) = (run_sqlite(&s, sql), run_parlite(&p, sql));
        if theirs != ours {
            failures.push(format!("{sql}\n  sqlite:  {theirs:?}\n  parlite: {ours:?}"));
        }
    };
    let reads = [
        "SELECT rowid, a, b, c FROM z ORDER BY rowid",
        "SELECT b, rowid FROM z ORDER BY b",
        "SELECT a, rowid FROM z WHERE a IS NOT NULL ORDER BY a",
        "SELECT c, rowid FROM z ORDER BY c DESC, rowid",
        "SELECT count(*), sum(b), max(length(c)) FROM z",
    ];
    let n = statements as u64 / 4;
    for chunk in 0..4 {
        both("BEGIN", &mut failures);
        for _ in 0..statements / 4 {
            both(&statement(&mut g, n), &mut failures);
            both("SELECT changes()", &mut failures);
        }
        both("COMMIT", &mut failures);
        for q in reads {
            both(q, &mut failures);
        }
        assert!(
            failures.is_empty(),
            "seed {seed}, {page_size} B pages, chunk {chunk}: {} mismatches:\n{}",
            failures.len(),
            failures.join("\n")
        );
    }
    drop(p);
    assert_eq!(
        integrity_check_rows(&path),
        vec!["ok".to_string()],
        "seed {seed}"
    );
    match sqlite_rows(&path, "PRAGMA integrity_check") {
        Out::Rows { rows, .. } => {
            assert_eq!(rows, vec![vec![Value::Text("ok".into())]], "seed {seed}")
        }
        other => panic!("seed {seed}: integrity_check: {other:?}"),
    }
    match sqlite_rows(&path, "SELECT count(*) FROM z") {
        Out::Rows { rows, .. } => assert!(
            matches!(rows[0][0], Value::Integer(k) if k > 50),
            "too few rows left to span leaves: {rows:?}"
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn index_runs_match_sqlite_on_small_and_large_pages() {
    let seed = seed();
    for (i, page_size) in [512u32, 1024, 4096].into_iter().enumerate() {
        run(page_size, 400, seed.wrapping_add(i as u64));
    }
}
