//! The order in which a row's uniqueness constraints are checked, against SQLite (rusqlite,
//! bundled) as the oracle. SQLite keeps a table's indexes in a list where each new index goes
//! to the front, except that a REPLACE index goes after the leading non-REPLACE ones
//! (sqlite3CreateIndex); a row clashing on several constraints is reported by (or resolved
//! by) the first one in that list, and the rowid is checked first unless it resolves by
//! REPLACE while some index does not. UPSERT targets are checked before every other index.
//! Each case compares the error message, `changes()` and the final rows, over table shapes
//! × declared conflict clauses × statement kinds.

mod common;

use common::{run_parlite, run_sqlite, Out};

/// Table shapes over columns a, b, c; `{a}`, `{b}`, `{c}` take each constraint's clause.
const SHAPES: &[&[&str]] = &[
    &["CREATE TABLE u(a UNIQUE {a}, b UNIQUE {b}, c UNIQUE {c})"],
    &["CREATE TABLE u(a INTEGER PRIMARY KEY {a}, b UNIQUE {b}, c UNIQUE {c})"],
    &["CREATE TABLE u(a PRIMARY KEY {a}, b UNIQUE {b}, c UNIQUE {c})"],
    &[
        "CREATE TABLE u(a UNIQUE {a}, b UNIQUE {b}, c)",
        "CREATE UNIQUE INDEX uc ON u(c)",
    ],
    &[
        "CREATE TABLE u(a, b UNIQUE {b}, c UNIQUE {c})",
        "CREATE UNIQUE INDEX ua ON u(a)",
        "CREATE INDEX ub ON u(b, c)",
    ],
    &["CREATE TABLE u(a, b, c, UNIQUE(c) {c}, UNIQUE(a) {a}, UNIQUE(b) {b})"],
    &["CREATE TABLE u(c UNIQUE {c}, b, a INTEGER PRIMARY KEY {a}, UNIQUE(b) {b})"],
];

/// WITHOUT ROWID tables: SQLite checks the PRIMARY KEY at its place in the index list
/// (`without_rowid_key_is_checked_at_its_place`).
const WITHOUT_ROWID_SHAPES: &[&[&str]] = &[
    &["CREATE TABLE u(a PRIMARY KEY {a}, b UNIQUE {b}, c UNIQUE {c}) WITHOUT ROWID"],
    &["CREATE TABLE u(b UNIQUE {b}, a PRIMARY KEY {a}, c UNIQUE {c}) WITHOUT ROWID"],
    // An INTEGER key's index is made last (newest: checked first), as SQLite makes it.
    &["CREATE TABLE u(a INTEGER PRIMARY KEY {a}, b UNIQUE {b}, c UNIQUE {c}) WITHOUT ROWID"],
];

const CLAUSES: &[&str] = &[
    "",
    "ON CONFLICT IGNORE",
    "ON CONFLICT REPLACE",
    "ON CONFLICT FAIL",
];

/// Each statement runs on rows (1,1,1) .. (4,4,4); (1,2,3) clashes on a, b and c at once.
const STATEMENTS: &[&str] = &[
    "INSERT INTO u(a, b, c) VALUES(1, 2, 3)",
    "INSERT INTO u(a, b, c) VALUES(5, 2, 3)",
    "INSERT OR IGNORE INTO u(a, b, c) VALUES(1, 2, 3)",
    "INSERT OR REPLACE INTO u(a, b, c) VALUES(1, 2, 3)",
    "REPLACE INTO u(a, b, c) VALUES(5, 2, 3)",
    "INSERT OR REPLACE INTO u(a, b, c) VALUES(1, 1, 9)",
    "REPLACE INTO u(a, b, c) VALUES(2, 9, 2)",
    "INSERT OR FAIL INTO u(a, b, c) VALUES(1, 2, 3)",
    "INSERT OR ABORT INTO u(a, b, c) VALUES(1, 2, 3)",
    "INSERT INTO u(a, b, c) VALUES(6, 6, 6), (1, 2, 3), (7, 7, 7)",
    "INSERT INTO u(a, b, c) SELECT 6, 6, 6 UNION ALL SELECT 1, 2, 3",
    "UPDATE u SET a = 1, b = 2, c = 3 WHERE a = 4",
    "UPDATE u SET b = 2, c = 3 WHERE a = 4",
    "UPDATE OR IGNORE u SET a = 1, b = 2, c = 3 WHERE a = 4",
    "UPDATE OR REPLACE u SET a = 1, b = 2, c = 3 WHERE a = 4",
    "UPDATE OR FAIL u SET a = 1, b = 2, c = 3 WHERE a >= 3",
    "INSERT INTO u(a, b, c) VALUES(1, 2, 3) ON CONFLICT(b) DO UPDATE SET c = c + 100",
    "INSERT INTO u(a, b, c) VALUES(1, 2, 3) ON CONFLICT(c) DO UPDATE SET b = b + 100",
    "INSERT INTO u(a, b, c) VALUES(1, 2, 3) ON CONFLICT(a) DO UPDATE SET c = c + 100",
    "INSERT INTO u(a, b, c) VALUES(1, 2, 3) ON CONFLICT(b) DO NOTHING",
    "INSERT INTO u(a, b, c) VALUES(1, 2, 3) ON CONFLICT DO NOTHING",
    "INSERT INTO u(a, b, c) VALUES(1, 2, 3) ON CONFLICT(c) DO NOTHING \
     ON CONFLICT(b) DO UPDATE SET a = a + 100",
    "INSERT INTO u(a, b, c) VALUES(1, 2, 3) ON CONFLICT(b) DO NOTHING \
     ON CONFLICT(a) DO UPDATE SET c = c + 100",
    "INSERT INTO u(a, b, c) VALUES(1, 2, 3) ON CONFLICT(c) DO UPDATE SET b = b + 100 \
     ON CONFLICT(a) DO NOTHING",
];

fn setups(shapes: &[&[&str]]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for shape in shapes {
        for ca in CLAUSES {
            for cb in CLAUSES {
                for cc in CLAUSES {
                    out.push(
                        shape
                            .iter()
                            .map(|s| s.replace("{a}", ca).replace("{b}", cb).replace("{c}", cc))
                            .collect(),
                    );
                }
            }
        }
    }
    out
}

/// Runs every statement on every setup in both engines; returns the mismatches.
fn mismatches(setups: &[Vec<String>], statements: &[&str]) -> Vec<String> {
    let s = rusqlite::Connection::open_in_memory().expect("sqlite");
    let p = parlite::Connection::open(":memory:").expect("parlite");
    let mut failures = Vec::new();
    for setup in setups {
        for stmt in statements {
            let mut script: Vec<String> = vec!["DROP TABLE IF EXISTS u".into()];
            script.extend(setup.iter().cloned());
            script.push("INSERT INTO u(a, b, c) VALUES(1,1,1),(2,2,2),(3,3,3),(4,4,4)".into());
            let mut outs = Vec::new();
            for sql in &script {
                let a = run_sqlite(&s, sql);
                let b = run_parlite(&p, sql);
                assert_eq!(a, b, "setup statement differs: {sql}");
            }
            for sql in [
                *stmt,
                "SELECT changes()",
                "SELECT a, b, c FROM u ORDER BY a, b, c",
                "PRAGMA integrity_check",
            ] {
                outs.push((sql, run_sqlite(&s, sql), run_parlite(&p, sql)));
            }
            if outs.iter().any(|(_, a, b)| a != b) {
                let mut f = format!("{}\n  {stmt}", setup.join("; "));
                for (sql, a, b) in &outs {
                    if a != b {
                        f += &format!("\n    {sql}\n      sqlite:  {a:?}\n      parlite: {b:?}");
                    }
                }
                failures.push(f);
            }
        }
    }
    failures
}

fn assert_none(failures: Vec<String>) {
    let shown: Vec<&String> = failures.iter().take(25).collect();
    assert!(
        failures.is_empty(),
        "{} mismatches, the first {}:\n{}",
        failures.len(),
        shown.len(),
        shown
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn unique_checks_follow_sqlites_index_order() {
    assert_none(mismatches(&setups(SHAPES), STATEMENTS));
}

/// WITHOUT ROWID tables: the PRIMARY KEY is checked at its place in the index list, as
/// SQLite does.
#[test]
fn without_rowid_key_is_checked_at_its_place() {
    let plain: Vec<&str> = STATEMENTS
        .iter()
        .copied()
        .filter(|s| !s.contains("ON CONFLICT"))
        .collect();
    assert_none(mismatches(&setups(WITHOUT_ROWID_SHAPES), &plain));
}

/// WITHOUT ROWID tables under an UPSERT: the ON CONFLICT targets first (the PRIMARY KEY
/// among them at its clause's place), then the other indexes and the PRIMARY KEY in list
/// order, as SQLite checks them.
#[test]
fn without_rowid_key_order_under_upsert() {
    let upserts: Vec<&str> = STATEMENTS
        .iter()
        .copied()
        .filter(|s| s.contains("ON CONFLICT"))
        .collect();
    assert_none(mismatches(&setups(WITHOUT_ROWID_SHAPES), &upserts));
}

/// A schema read back from a file checks its indexes in the same order.
#[test]
fn order_survives_reopening() {
    let dir = common::TempDir::new("uniqord");
    let path = dir.join("u.db");
    {
        let s = rusqlite::Connection::open(&path).expect("sqlite");
        s.execute_batch(
            "CREATE TABLE u(a UNIQUE ON CONFLICT REPLACE, b UNIQUE, c);
             CREATE UNIQUE INDEX uc ON u(c);
             INSERT INTO u VALUES(1,1,1),(2,2,2),(3,3,3);",
        )
        .expect("setup");
    }
    let p = parlite::Connection::open(path.to_str().expect("utf-8 path")).expect("parlite");
    assert_eq!(
        run_parlite(&p, "INSERT INTO u VALUES(1, 2, 3)"),
        Out::Err("UNIQUE constraint failed: u.c".into())
    );
    assert_eq!(
        run_parlite(&p, "INSERT INTO u VALUES(1, 2, 4)"),
        Out::Err("UNIQUE constraint failed: u.b".into())
    );
}

/// The example of the issue: two plain UNIQUE columns, a row clashing on both.
#[test]
fn two_unique_columns_report_the_later_one() {
    let p = parlite::Connection::open(":memory:").expect("parlite");
    for sql in [
        "CREATE TABLE u(a UNIQUE, b UNIQUE)",
        "INSERT INTO u VALUES(1, 1), (2, 2)",
    ] {
        assert!(matches!(run_parlite(&p, sql), Out::Rows { .. }));
    }
    assert_eq!(
        run_parlite(&p, "INSERT INTO u VALUES(1, 2)"),
        Out::Err("UNIQUE constraint failed: u.b".into())
    );
}

/// Rows inserted into an empty table (the bulk-insert path) name the same constraint.
#[test]
fn bulk_insert_into_empty_table() {
    common::check_script(
        "CREATE TABLE e(a UNIQUE, b UNIQUE, c);
         INSERT INTO e VALUES(1, 1, 1), (1, 1, 2);
         SELECT changes();
         SELECT * FROM e ORDER BY a;
         INSERT INTO e SELECT 5, 5, 5 UNION ALL SELECT 5, 5, 6;
         SELECT * FROM e ORDER BY a;
         CREATE TABLE f(a UNIQUE ON CONFLICT REPLACE, b UNIQUE, c);
         INSERT INTO f VALUES(1, 1, 1), (1, 1, 2);
         SELECT * FROM f ORDER BY a;
         CREATE TABLE g(a INTEGER PRIMARY KEY, b UNIQUE, c UNIQUE);
         INSERT INTO g VALUES(1, 1, 1), (1, 1, 1);
         INSERT INTO g VALUES(1, 1, 1), (2, 1, 1);
         SELECT * FROM g ORDER BY a;",
        common::Compare::default(),
    );
}
