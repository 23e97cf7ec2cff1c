//! `x IN (SELECT ...)` and `x IN (list)` driving a rowid or index lookup, against SQLite
//! (rusqlite, bundled 3.50.2): the EXPLAIN QUERY PLAN detail of every row and the rows.
//! - An uncorrelated single-column IN subquery is the probe set of `SEARCH t USING INDEX i
//!   (x=?)` / `USING INTEGER PRIMARY KEY (rowid=?)`, shown as a `LIST SUBQUERY N` row (with
//!   `CREATE BLOOM FILTER` unless the subquery sorts) instead of `USING INDEX i FOR
//!   IN-OPERATOR`; the column side must keep its values under the IN's affinity.
//! - Among equally long equality prefixes the fewer lookups win (an IN list counts its
//!   values, a subquery 25, as SQLite's cost does), so `c = ?` beats `b IN (SELECT ...)`.
//! - The key ranges of IN values are walked in key order (backward for a reverse walk),
//!   so an ORDER BY on the IN column needs no sort.
//! - UPDATE and DELETE use the same lookups (their rows checked after each statement).

mod common;

use common::{compare_plans_and_rows as compare, run_parlite, run_sqlite};

const SETUP: &str = "
    CREATE TABLE t(a INTEGER PRIMARY KEY, b INT, c TEXT, d);
    CREATE INDEX tb ON t(b);
    CREATE INDEX tcd ON t(c, d);
    CREATE TABLE u(x INT, y TEXT);
    CREATE INDEX ux ON u(x);
    CREATE TABLE n(v TEXT COLLATE NOCASE, w);
    CREATE INDEX nv ON n(v);
    INSERT INTO t VALUES(1, 5, 'x', 3), (2, 5, 'y', 3), (3, 7, 'x', 1), (4, NULL, NULL, NULL),
                        (5, 2, 'x', 2), (6, 9, 'Y', 1), (7, 7, '7', 7);
    INSERT INTO u VALUES(5, 'a'), (7, 'b'), (2, 'c'), (5, 'd'), (NULL, 'x'), (3, '7');
    INSERT INTO n VALUES('X', 1), ('y', 2), ('Z', 3);
";

fn check(queries: &[&str]) {
    let failures = compare(SETUP, queries);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn in_subquery_drives_lookup() {
    check(&[
        "SELECT * FROM t WHERE b IN (SELECT x FROM u)",
        "SELECT * FROM t WHERE a IN (SELECT x FROM u)",
        "SELECT * FROM t WHERE c IN (SELECT y FROM u WHERE x > 5)",
        "SELECT * FROM t WHERE b IN (SELECT x FROM u WHERE y = 'a')",
        "SELECT * FROM t WHERE b IN (SELECT x + 1 FROM u)",
        "SELECT * FROM t WHERE b IN (SELECT y FROM u)",
        "SELECT * FROM t WHERE a IN (SELECT b FROM t WHERE c = 'x')",
        "SELECT * FROM u WHERE x IN (SELECT b FROM t)",
        "SELECT * FROM u WHERE y IN (SELECT c FROM t)",
        "SELECT * FROM t WHERE b IN (SELECT x FROM u ORDER BY y LIMIT 2)",
        "SELECT * FROM t WHERE b IN (SELECT x FROM u ORDER BY y)",
        "SELECT * FROM t WHERE b IN (SELECT DISTINCT x FROM u)",
        "SELECT * FROM t WHERE b IN (SELECT max(x) FROM u)",
        "SELECT * FROM t WHERE b IN (SELECT x FROM u UNION SELECT 7)",
        "SELECT count(*) FROM t WHERE b IN (SELECT x FROM u)",
        "SELECT * FROM u WHERE x IN (SELECT b FROM t) AND y IN (SELECT c FROM t)",
        "SELECT * FROM t, u WHERE t.b = u.x AND u.y IN (SELECT c FROM t)",
        "SELECT * FROM n WHERE v IN (SELECT c FROM t)",
        "SELECT * FROM n WHERE v IN (SELECT c COLLATE NOCASE FROM t)",
        "SELECT * FROM t WHERE b IN (SELECT x FROM u WHERE 0)",
    ]);
}

#[test]
fn in_subquery_stays_a_filter() {
    check(&[
        // Scanned, probed per row: NOT IN, correlated, affinity that converts the column.
        "SELECT * FROM t WHERE b NOT IN (SELECT x FROM u)",
        "SELECT * FROM t WHERE b IN (SELECT u.x FROM u WHERE u.y = t.c)",
        "SELECT * FROM t WHERE c IN (SELECT x FROM u)",
        "SELECT * FROM t WHERE d IN (SELECT x FROM u ORDER BY y)",
        // An equality with one value wins over the IN set.
        "SELECT * FROM t WHERE b IN (SELECT x FROM u) AND c = 'x'",
        "SELECT * FROM t WHERE c = 'x' AND d IN (SELECT x FROM u)",
        "SELECT * FROM t WHERE b IN (1, 2, 3) AND c IN ('x', 'y')",
        "SELECT * FROM t WHERE a IN (SELECT x FROM u) AND a = 5",
    ]);
}

#[test]
fn in_values_walked_in_key_order() {
    check(&[
        "SELECT * FROM t WHERE a IN (3, 1, 2) ORDER BY a",
        "SELECT * FROM t WHERE a IN (SELECT x FROM u) ORDER BY a",
        "SELECT * FROM t WHERE b IN (7, 5, 2) ORDER BY b",
        "SELECT * FROM t WHERE b IN (7, 5, 2) ORDER BY b DESC",
        "SELECT * FROM t WHERE b IN (7, 5, 2) ORDER BY b, a",
        "SELECT * FROM t WHERE c IN ('y', 'x') ORDER BY c, d",
        "SELECT * FROM t WHERE c IN ('y', 'x') ORDER BY c DESC, d DESC",
        "SELECT * FROM t WHERE c IN ('y', 'x') ORDER BY d",
        "SELECT * FROM t WHERE c IN ('y', 'x') AND d IN (1, 3) ORDER BY c, d",
        "SELECT * FROM t WHERE c = 'x' AND d IN (3, 1, 2) ORDER BY d",
        "SELECT * FROM t WHERE c IN (SELECT y FROM u) ORDER BY c",
        "SELECT b FROM t WHERE b IN (SELECT x FROM u) ORDER BY b LIMIT 2",
        "SELECT * FROM u WHERE x IN (SELECT b FROM t) ORDER BY x",
        "SELECT max(b) FROM t WHERE b IN (5, 2, 9)",
        "SELECT min(b) FROM t WHERE b IN (SELECT x FROM u)",
    ]);
}

#[test]
fn in_subquery_lookups_in_update_and_delete() {
    let s = rusqlite::Connection::open_in_memory().expect("sqlite");
    let p = parlite::Connection::open(":memory:").expect("parlite");
    s.execute_batch(SETUP).expect("sqlite setup");
    p.execute_batch(SETUP).expect("parlite setup");
    for q in [
        "DELETE FROM u WHERE x IN (SELECT b FROM t WHERE c = 'x')",
        "SELECT * FROM u ORDER BY x, y",
        "UPDATE t SET d = 9 WHERE b IN (SELECT x FROM u)",
        "UPDATE t SET d = -1 WHERE a IN (SELECT x FROM u)",
        "SELECT * FROM t ORDER BY a",
    ] {
        assert_eq!(run_sqlite(&s, q), run_parlite(&p, q), "{q}");
    }
}

#[test]
fn in_subquery_column_count_error() {
    check(&[
        "SELECT * FROM t WHERE b IN (SELECT x, y FROM u)",
        "SELECT * FROM t WHERE a IN (SELECT x, y FROM u)",
    ]);
}
