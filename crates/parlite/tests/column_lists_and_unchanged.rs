//! Two rules of SQLite's INSERT and UPDATE code generation that decide which values and
//! which constraints count, against SQLite:
//!
//! - An INSERT's column list (sqlite3Insert): a column named twice keeps the first value
//!   given; the rowid — its alias column (INTEGER PRIMARY KEY) and `rowid`/`oid`/`_rowid_`
//!   all name it — takes the last value given for any of its names. Seeded random column
//!   lists over rowid tables with and without an alias, WITHOUT ROWID tables, tables with
//!   indexes and triggers (the row-by-row path), `INSERT ... SELECT` into an empty table
//!   (the bulk path) and views with INSTEAD OF triggers.
//! - An UPDATE (and an upsert's DO UPDATE) checks NOT NULL only on the columns it changes
//!   and a CHECK only when the CHECK reads a changed column, a generated column computed
//!   from one, or the rowid when the rowid changes (sqlite3GenerateConstraintChecks'
//!   `aiChng`): rows that already break a constraint (written under
//!   `ignore_check_constraints`, or by a schema edited behind the table's back) can still be
//!   updated elsewhere.
//!
//! `PARLITE_SEED=n` replays one seed.

mod common;

use common::{assert_no_mismatches as assert_none, mismatches as compare, Rng};

/// A table the column lists go into: its schema, the names a list draws from, and the
/// query reading it back.
struct Target {
    schema: &'static str,
    table: &'static str,
    names: &'static [&'static str],
    rows: &'static str,
}

const TARGETS: &[Target] = &[
    Target {
        schema: "CREATE TABLE t(a INTEGER PRIMARY KEY, b, c DEFAULT 'dc')",
        table: "t",
        names: &["a", "b", "c", "rowid", "oid", "_rowid_", "A", "B"],
        rows: "SELECT rowid, * FROM t ORDER BY rowid",
    },
    Target {
        schema: "CREATE TABLE u(x, y DEFAULT 'dy', z)",
        table: "u",
        names: &["x", "y", "z", "rowid", "oid", "_rowid_", "Z"],
        rows: "SELECT rowid, * FROM u ORDER BY rowid",
    },
    Target {
        schema: "CREATE TABLE w(k PRIMARY KEY, v, n DEFAULT 0) WITHOUT ROWID",
        table: "w",
        names: &["k", "v", "n", "K", "rowid"],
        rows: "SELECT * FROM w ORDER BY k",
    },
    // An index and a trigger: the row-by-row path, with the trigger seeing NEW.
    Target {
        schema: "CREATE TABLE ix(a INTEGER PRIMARY KEY, b, c);
                 CREATE INDEX ix_b ON ix(b);
                 CREATE TABLE ix_log(r, a, b, c);
                 CREATE TRIGGER ix_t AFTER INSERT ON ix BEGIN
                   INSERT INTO ix_log VALUES(NEW.rowid, NEW.a, NEW.b, NEW.c); END",
        table: "ix",
        names: &["a", "b", "c", "rowid", "oid"],
        rows: "SELECT rowid, * FROM ix ORDER BY rowid",
    },
];

/// The statements of a schema, one each (as `run_sqlite` and `run_parlite` take them).
fn statements(schema: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    // A trigger's body holds `;`: the schemas above end each statement at a line end.
    for part in schema.split(";\n") {
        out.push(part.trim().to_string());
    }
    out
}

/// A column list of one to five names (repeats likely) and VALUES giving each position
/// its own value, or NULL now and then (a NULL rowid asks for a new one).
fn column_list(rng: &mut Rng, names: &[&str], serial: &mut i64) -> (String, Vec<String>) {
    let n = 1 + rng.below(5) as usize;
    let cols: Vec<&str> = (0..n)
        .map(|_| names[rng.below(names.len() as u64) as usize])
        .collect();
    let vals: Vec<String> = (0..n)
        .map(|_| {
            *serial += 1;
            match rng.below(6) {
                0 => "NULL".to_string(),
                1 => format!("'s{serial}'"),
                _ => serial.to_string(),
            }
        })
        .collect();
    (cols.join(", "), vals)
}

#[test]
fn insert_column_lists_keep_the_first_value_and_the_last_rowid() {
    let mut failures = Vec::new();
    for seed in common::seeds() {
        let mut rng = Rng(seed);
        let s = rusqlite::Connection::open_in_memory().expect("sqlite");
        let p = parlite::Connection::open(":memory:").expect("parlite");
        let mut stmts: Vec<String> = TARGETS.iter().flat_map(|t| statements(t.schema)).collect();
        let mut serial = 0;
        for _ in 0..150 {
            let t = &TARGETS[rng.below(TARGETS.len() as u64) as usize];
            let (cols, vals) = column_list(&mut rng, t.names, &mut serial);
            let verb = ["INSERT", "INSERT OR REPLACE", "INSERT OR IGNORE"][rng.below(3) as usize];
            stmts.push(format!(
                "{verb} INTO {}({cols}) VALUES({})",
                t.table,
                vals.join(", ")
            ));
            // The same list from a SELECT (a source of the same width).
            let (_, more) = column_list(&mut rng, t.names, &mut serial);
            let width = vals.len();
            let sel: Vec<String> = (0..width)
                .map(|i| {
                    more.get(i)
                        .cloned()
                        .unwrap_or_else(|| (i as i64 + 1000).to_string())
                })
                .collect();
            stmts.push(format!(
                "INSERT OR IGNORE INTO {}({cols}) SELECT {}",
                t.table,
                sel.join(", ")
            ));
        }
        for t in TARGETS {
            stmts.push(t.rows.to_string());
        }
        stmts.push("SELECT * FROM ix_log ORDER BY rowid".into());
        failures.extend(
            compare(&s, &p, &stmts)
                .into_iter()
                .map(|f| format!("seed {seed}: {f}")),
        );
    }
    assert_none(failures);
}

/// `INSERT INTO t(...) SELECT ...` into an empty table builds the table bottom up (the
/// bulk path): the same list rules there.
#[test]
fn bulk_inserts_read_column_lists_as_sqlite() {
    let mut failures = Vec::new();
    for seed in common::seeds() {
        let mut rng = Rng(seed.wrapping_mul(7919));
        for _ in 0..30 {
            let s = rusqlite::Connection::open_in_memory().expect("sqlite");
            let p = parlite::Connection::open(":memory:").expect("parlite");
            let t = &TARGETS[rng.below(3) as usize];
            let mut serial = 0;
            let (cols, vals) = column_list(&mut rng, t.names, &mut serial);
            let width = vals.len();
            let exprs: Vec<String> = (0..width)
                .map(|i| match rng.below(3) {
                    0 => format!("n * {} + {i}", width + 1),
                    1 => format!("'v' || n || '_{i}'"),
                    _ => "NULL".to_string(),
                })
                .collect();
            let mut stmts = statements(t.schema);
            stmts.extend([
                "CREATE TABLE src(n)".to_string(),
                "INSERT INTO src VALUES(1),(2),(3),(4),(5)".to_string(),
                format!(
                    "INSERT OR IGNORE INTO {}({cols}) SELECT {} FROM src",
                    t.table,
                    exprs.join(", ")
                ),
                t.rows.to_string(),
            ]);
            failures.extend(
                compare(&s, &p, &stmts)
                    .into_iter()
                    .map(|f| format!("seed {seed}: {f}")),
            );
        }
    }
    assert_none(failures);
}

/// Named twice in an INSERT into a view: its INSTEAD OF trigger sees the first value.
#[test]
fn view_inserts_keep_the_first_value_of_a_repeated_column() {
    let s = rusqlite::Connection::open_in_memory().expect("sqlite");
    let p = parlite::Connection::open(":memory:").expect("parlite");
    let stmts: Vec<String> = [
        "CREATE TABLE base(x, y)",
        "CREATE VIEW v AS SELECT x, y FROM base",
        "CREATE TRIGGER v_ins INSTEAD OF INSERT ON v BEGIN INSERT INTO base VALUES(NEW.x, NEW.y); END",
        "INSERT INTO v(x, x, y) VALUES(1, 2, 3)",
        "INSERT INTO v(y, x, y) VALUES(4, 5, 6)",
        "INSERT INTO v(x, y, X) SELECT 7, 8, 9",
        "SELECT * FROM base ORDER BY rowid",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_none(compare(&s, &p, &stmts));
}

/// Rows that break CHECKs (written with `ignore_check_constraints` on), then UPDATEs and
/// upserts of every subset of columns, rowid included: each outcome and the rows as SQLite's.
#[test]
fn updates_check_only_what_they_change() {
    let s = rusqlite::Connection::open_in_memory().expect("sqlite");
    let p = parlite::Connection::open(":memory:").expect("parlite");
    let mut stmts: Vec<String> = [
        "CREATE TABLE c(id INTEGER PRIMARY KEY, a, b, d, \
           g AS (b * 2), \
           CHECK(a > 0), CHECK(g < 100), CONSTRAINT named CHECK(id < 1000), CHECK(d IS NOT 'bad'), \
           UNIQUE(d))",
        "CREATE TABLE cw(k PRIMARY KEY, a CHECK(a > 0), b, CHECK(k <> 'zz')) WITHOUT ROWID",
        "PRAGMA ignore_check_constraints = 1",
        "INSERT INTO c(id, a, b, d) VALUES(1, -1, 1, 'x'), (2, 5, 60, 'y'), (1500, 5, 1, 'z'), (4, 1, 1, 'bad')",
        "INSERT INTO cw VALUES('a', -1, 1), ('zz', 3, 1)",
        "PRAGMA ignore_check_constraints = 0",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let sets = [
        "a = a",
        "b = b",
        "d = d",
        "b = 1",
        "b = 40",
        "a = 7",
        "id = id",
        "rowid = rowid",
        "id = id + 1",
        "d = 'w' || id",
        "a = a, b = b",
        "b = b + 0, d = d",
    ];
    for set in sets {
        for row in [1, 2, 1500, 4] {
            stmts.push(format!("UPDATE c SET {set} WHERE id = {row}"));
        }
        stmts.push(format!("UPDATE c SET {set}"));
    }
    for set in ["b = 2", "a = a", "k = k", "b = b, a = 1", "k = k || ''"] {
        for key in ["'a'", "'zz'"] {
            stmts.push(format!("UPDATE cw SET {set} WHERE k = {key}"));
        }
    }
    // An upsert's DO UPDATE is an UPDATE of the existing row.
    for set in ["b = 5", "a = excluded.a", "d = d", "b = excluded.b * 50"] {
        stmts.push(format!(
            "INSERT INTO c(id, a, b, d) VALUES(1, 9, 9, 'q') ON CONFLICT(id) DO UPDATE SET {set}"
        ));
    }
    stmts.push("SELECT * FROM c ORDER BY id".into());
    stmts.push("SELECT * FROM cw ORDER BY k".into());
    assert_none(compare(&s, &p, &stmts));
}

/// NOT NULL on a column the UPDATE leaves alone is not checked: a file whose schema
/// gained NOT NULL after NULLs were stored (SQLite's `writable_schema`) updates as SQLite.
#[test]
fn updates_check_not_null_only_on_changed_columns() {
    let dir = common::TempDir::new("unchanged-not-null");
    let made = dir.join("made.db");
    {
        let s = rusqlite::Connection::open(&made).expect("sqlite");
        s.execute_batch(
            "CREATE TABLE t(id INTEGER PRIMARY KEY, a, b, g AS (coalesce(b, 0) + 1));
             INSERT INTO t(id, a, b) VALUES(1, 1, NULL), (2, NULL, 2), (3, 3, 3);
             PRAGMA writable_schema = ON;
             UPDATE sqlite_schema SET sql = 'CREATE TABLE t(id INTEGER PRIMARY KEY, \
               a NOT NULL, b NOT NULL, g AS (coalesce(b, 0) + 1) NOT NULL)' WHERE name = 't';",
        )
        .expect("make");
    }
    let (sp, pp) = (dir.join("s.db"), dir.join("p.db"));
    std::fs::copy(&made, &sp).expect("copy");
    std::fs::copy(&made, &pp).expect("copy");
    let s = rusqlite::Connection::open(&sp).expect("sqlite");
    let p = parlite::Connection::open(pp.to_str().expect("utf8")).expect("parlite");
    let mut stmts = Vec::new();
    for set in [
        "a = a",
        "b = b",
        "a = 10",
        "b = 20",
        "id = id",
        "a = a, b = b",
    ] {
        for id in 1..=3 {
            stmts.push(format!("UPDATE t SET {set} WHERE id = {id}"));
        }
    }
    stmts.push("SELECT * FROM t ORDER BY id".into());
    assert_none(compare(&s, &p, &stmts));
}
