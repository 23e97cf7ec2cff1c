//! `x IS NULL` searches an index for the NULL keys, as SQLite's `SEARCH t USING INDEX i
//! (x=?)` (plan::access, `Access::Index::nulls`): rows and plans against SQLite's, over
//! tables whose indexed columns hold NULLs among other values — single and composite
//! indexes, UNIQUE ones (any number of NULL keys), DESC and NOCASE columns, expression
//! indexes, WITHOUT ROWID tables, a table with a VIRTUAL column, covering walks, ranges
//! and IN lists after the NULL prefix, joins, and UPDATE/DELETE finding their rows that
//! way.

mod common;

use common::{check_script, eqp_tree, run_parlite, run_sqlite, Compare};

const SETUP: &str = "
CREATE TABLE t(a, b, c TEXT, d);
CREATE INDEX ta ON t(a);
CREATE INDEX tab ON t(a, b DESC);
CREATE UNIQUE INDEX tu ON t(d);
CREATE INDEX tc ON t(c COLLATE NOCASE);
CREATE INDEX te ON t(substr(c, 1, 2));
CREATE TABLE w(k INTEGER PRIMARY KEY, a, b, c) WITHOUT ROWID;
CREATE INDEX wa ON w(a, b);
CREATE UNIQUE INDEX wc ON w(c);
CREATE TABLE g(a, b, v AS (b * 2));
CREATE UNIQUE INDEX ga ON g(a);
CREATE TABLE s(x, y);
CREATE INDEX sx ON s(x);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300)
INSERT INTO t SELECT
  CASE WHEN i % 3 = 0 THEN NULL ELSE i % 17 END,
  CASE WHEN i % 5 = 0 THEN NULL ELSE i % 7 END,
  CASE WHEN i % 4 = 0 THEN NULL WHEN i % 2 = 0 THEN 'Ab' || i ELSE 'aB' || i END,
  CASE WHEN i % 6 = 0 THEN NULL ELSE i END
FROM n;
INSERT INTO w SELECT rowid, a, b, c FROM t;
INSERT INTO g(a, b) SELECT d, a FROM t;
INSERT INTO s SELECT CASE WHEN i % 4 = 0 THEN NULL ELSE i % 9 END, i FROM
  (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40) SELECT i FROM n);
";

const QUERIES: &[&str] = &[
    "SELECT rowid, * FROM t WHERE a IS NULL ORDER BY rowid",
    "SELECT rowid FROM t WHERE a ISNULL ORDER BY rowid",
    "SELECT rowid FROM t WHERE NULL IS a ORDER BY rowid",
    "SELECT count(*) FROM t WHERE a IS NULL",
    "SELECT a, b FROM t WHERE a IS NULL",
    "SELECT rowid, b FROM t WHERE a IS NULL AND b > 3 ORDER BY rowid",
    "SELECT rowid, b FROM t WHERE a IS NULL AND b IS NULL ORDER BY rowid",
    "SELECT rowid, b FROM t WHERE a IS NULL AND b IN (1, 2, NULL) ORDER BY rowid",
    "SELECT rowid FROM t WHERE a IS NULL AND b = NULL",
    "SELECT rowid FROM t WHERE a IS NULL ORDER BY b DESC, rowid",
    "SELECT rowid, d FROM t WHERE d IS NULL ORDER BY rowid",
    "SELECT rowid FROM t WHERE c IS NULL ORDER BY rowid",
    "SELECT rowid FROM t WHERE substr(c, 1, 2) IS NULL ORDER BY rowid",
    "SELECT rowid FROM t WHERE a IS NULL AND c IS NULL ORDER BY rowid",
    "SELECT rowid FROM t WHERE a IS NOT NULL AND b IS NULL ORDER BY rowid",
    "SELECT rowid FROM t WHERE a IS NULL OR b IS NULL ORDER BY rowid",
    "SELECT k, a, b FROM w WHERE a IS NULL ORDER BY k",
    "SELECT k FROM w WHERE a IS NULL AND b IS NULL ORDER BY k",
    "SELECT count(*) FROM w WHERE a IS NULL AND b >= 2",
    "SELECT k FROM w WHERE c IS NULL ORDER BY k",
    "SELECT rowid, v FROM g WHERE a IS NULL ORDER BY rowid",
    "SELECT s.y, t.rowid FROM s JOIN t ON t.a IS s.x WHERE s.x IS NULL ORDER BY 1, 2",
    "SELECT s.y, (SELECT count(*) FROM t WHERE t.a IS NULL AND t.b = s.y) FROM s ORDER BY 1",
    "SELECT a, count(*) FROM t WHERE a IS NULL GROUP BY a",
    "SELECT max(b) FROM t WHERE a IS NULL",
    // Inner levels of joins, and IN lists beside the NULL prefix (the general walk).
    "SELECT s.y, t.rowid FROM s, t WHERE t.d IS NULL AND t.a = s.x ORDER BY 1, 2",
    "SELECT s.y, count(t.rowid) FROM s LEFT JOIN t ON t.d IS NULL AND t.b = s.x GROUP BY s.y ORDER BY 1",
    "SELECT rowid FROM t WHERE d IS NULL AND a IN (1, 2, 3) ORDER BY rowid",
    "SELECT rowid FROM t WHERE a IS NULL AND b IN (SELECT x FROM s) ORDER BY rowid",
];

#[test]
fn is_null_finds_the_rows_sqlite_finds() {
    let mut script = SETUP.to_string();
    for q in QUERIES {
        script += q;
        script += ";\n";
    }
    script += "
UPDATE t SET b = 100 + rowid WHERE a IS NULL AND b IS NULL;
SELECT rowid, a, b FROM t WHERE b > 100 ORDER BY rowid;
DELETE FROM t WHERE a IS NULL AND b > 3;
SELECT count(*), sum(rowid) FROM t;
UPDATE w SET c = 'x' || k WHERE a IS NULL;
DELETE FROM w WHERE a IS NULL AND b IS NULL;
SELECT k, a, b, c FROM w ORDER BY k;
PRAGMA integrity_check;
";
    check_script(&script, Compare::default());
}

/// The plans are SQLite's: the NULL keys are searched, not scanned.
#[test]
fn is_null_is_an_index_search() {
    let s = rusqlite::Connection::open_in_memory().expect("sqlite");
    let p = parlite::Connection::open(":memory:").expect("parlite");
    s.execute_batch(SETUP).expect("sqlite setup");
    p.execute_batch(SETUP).expect("parlite setup");
    let mut failures = Vec::new();
    for q in [
        "SELECT rowid, * FROM t WHERE a IS NULL",
        "SELECT a, b FROM t WHERE a IS NULL",
        "SELECT rowid FROM t WHERE a IS NULL AND b > 3",
        "SELECT rowid FROM t WHERE a IS NULL AND b IS NULL",
        "SELECT rowid FROM t WHERE d IS NULL",
        // (Not `SELECT k FROM w WHERE a IS NULL`: SQLite names that walk COVERING, parlite
        // does not for any WITHOUT ROWID secondary index, `a = 5` too.)
        "UPDATE t SET b = 1 WHERE a IS NULL",
        "DELETE FROM t WHERE a IS NULL",
    ] {
        let eqp = format!("EXPLAIN QUERY PLAN {q}");
        let a = eqp_tree(run_sqlite(&s, &eqp));
        let b = eqp_tree(run_parlite(&p, &eqp));
        if a != b {
            failures.push(format!("{q}\n  sqlite:  {a:?}\n  parlite: {b:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
