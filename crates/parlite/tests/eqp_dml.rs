//! EXPLAIN QUERY PLAN for UPDATE, DELETE and INSERT, against SQLite (rusqlite, bundled
//! 3.50.2) as the oracle: the `detail` of every row and the tree the `id`/`parent` columns
//! draw, then the statement's effect (its RETURNING rows, else the table afterwards).
//! - UPDATE/DELETE: the loop that finds the target rows (`SCAN t`, `SEARCH t USING INDEX
//!   i (a=?)`, `SEARCH t USING INTEGER PRIMARY KEY (rowid=?)`), the subqueries of WHERE
//!   and SET, and `USE TEMP B-TREE FOR ORDER BY` for ORDER BY ... LIMIT.
//! - INSERT ... SELECT: the SELECT's plan; INSERT ... VALUES: no rows (one row) or
//!   the rows SQLite prints for a multi-row VALUES.

mod common;

use common::{eqp_tree, run_parlite, run_sqlite, Out};

const SETUP: &str = "
    CREATE TABLE t1(a INTEGER PRIMARY KEY, b, c);
    CREATE TABLE t2(x, y);
    CREATE INDEX t2x ON t2(x);
    CREATE TABLE t3(p, q);
    CREATE TABLE t4(k TEXT PRIMARY KEY, v) WITHOUT ROWID;
    INSERT INTO t1 VALUES(1, 10, 'a'), (2, 20, 'b'), (3, 30, 'c');
    INSERT INTO t2 VALUES(1, 100), (2, 200), (2, 201), (5, 500);
    INSERT INTO t3 VALUES(10, 'x'), (30, 'y');
    INSERT INTO t4 VALUES('a', 1), ('b', 2);
";

/// Each statement in a fresh pair of databases: its plan, then what it did (the tables'
/// contents afterwards).
fn compare(stmts: &[&str]) -> Vec<String> {
    let mut failures = Vec::new();
    for q in stmts {
        let s = rusqlite::Connection::open_in_memory().expect("sqlite");
        let p = parlite::Connection::open(":memory:").expect("parlite");
        s.execute_batch(SETUP).expect("sqlite setup");
        p.execute_batch(SETUP).expect("parlite setup");
        let eqp = format!("EXPLAIN QUERY PLAN {q}");
        let (a, b) = (
            eqp_tree(run_sqlite(&s, &eqp)),
            eqp_tree(run_parlite(&p, &eqp)),
        );
        if a != b {
            failures.push(format!("{eqp}\n  sqlite:  {a:#?}\n  parlite: {b:#?}"));
        }
        let (a, b) = (run_sqlite(&s, q), run_parlite(&p, q));
        if a != b {
            failures.push(format!("{q}\n  sqlite:  {a:?}\n  parlite: {b:?}"));
        }
        for t in ["t1", "t2", "t3", "t4"] {
            let all = format!("SELECT * FROM {t} ORDER BY 1, 2");
            let (a, b) = (run_sqlite(&s, &all), run_parlite(&p, &all));
            if a != b {
                failures.push(format!(
                    "after {q}: {t}\n  sqlite:  {a:?}\n  parlite: {b:?}"
                ));
            }
        }
    }
    failures
}

fn check(stmts: &[&str]) {
    let failures = compare(stmts);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn delete_plans() {
    check(&[
        "DELETE FROM t1",
        "DELETE FROM t1 WHERE a = 2",
        "DELETE FROM t1 WHERE a BETWEEN 1 AND 2",
        "DELETE FROM t1 WHERE a > 1",
        "DELETE FROM t1 WHERE b = 20",
        "DELETE FROM t2 WHERE x = 2",
        "DELETE FROM t2 WHERE x BETWEEN 1 AND 2",
        "DELETE FROM t2 WHERE y = 200",
        "DELETE FROM t4 WHERE k = 'a'",
        "DELETE FROM t4 WHERE v = 2",
        "DELETE FROM t1 WHERE b IN (SELECT p FROM t3)",
        "DELETE FROM t1 WHERE b = (SELECT max(p) FROM t3)",
        "DELETE FROM t1 WHERE EXISTS (SELECT 1 FROM t2 WHERE x = a)",
        "DELETE FROM t2 WHERE x IN (SELECT a FROM t1)",
        "DELETE FROM t1 WHERE a = 1 RETURNING b",
    ]);
}

#[test]
fn update_plans() {
    check(&[
        "UPDATE t1 SET b = 0",
        "UPDATE t1 SET b = 0 WHERE a = 2",
        "UPDATE t1 SET b = b + 1 WHERE a BETWEEN 1 AND 2",
        "UPDATE t1 SET c = 'z' WHERE b > 10",
        "UPDATE t2 SET y = 0 WHERE x = 2",
        "UPDATE t2 SET x = 7 WHERE x = 2",
        "UPDATE t2 SET y = y + 1 WHERE x BETWEEN 1 AND 2",
        "UPDATE t4 SET v = 9 WHERE k = 'b'",
        "UPDATE t1 SET b = (SELECT max(p) FROM t3)",
        "UPDATE t1 SET b = (SELECT count(*) FROM t2 WHERE x = a) WHERE a > 1",
        "UPDATE t1 SET b = 5 WHERE c IN (SELECT q FROM t3)",
        "UPDATE t1 SET b = 1 WHERE a = 3 RETURNING a, b",
    ]);
}

/// ORDER BY/LIMIT on UPDATE and DELETE: the bundled SQLite is built without
/// SQLITE_ENABLE_UPDATE_DELETE_LIMIT (a syntax error there), so parlite's plan is checked
/// against the loop and sort it runs.
#[test]
fn ordered_limited_plans() {
    let p = parlite::Connection::open(":memory:").expect("parlite");
    p.execute_batch(SETUP).expect("parlite setup");
    for (q, want) in [
        (
            "DELETE FROM t1 ORDER BY b LIMIT 1",
            &["SCAN t1", "USE TEMP B-TREE FOR ORDER BY"][..],
        ),
        ("DELETE FROM t1 ORDER BY a LIMIT 2", &["SCAN t1"]),
        (
            "DELETE FROM t2 WHERE x > 0 ORDER BY x LIMIT 2",
            &["SEARCH t2 USING INDEX t2x (x>?)"],
        ),
        (
            "UPDATE t1 SET c = 'q' ORDER BY b DESC LIMIT 2",
            &["SCAN t1", "USE TEMP B-TREE FOR ORDER BY"],
        ),
        (
            "UPDATE t2 SET y = 1 WHERE y > 100 ORDER BY y LIMIT 1",
            &["SCAN t2", "USE TEMP B-TREE FOR ORDER BY"],
        ),
    ] {
        let got = eqp_tree(run_parlite(&p, &format!("EXPLAIN QUERY PLAN {q}")));
        let want: Vec<String> = want.iter().map(|d| format!("Text({d:?})")).collect();
        assert_eq!(got, Ok(want), "{q}");
    }
}

#[test]
fn values_lists() {
    check(&[
        "VALUES(1, 2)",
        "VALUES(1, 2), (3, 4)",
        "SELECT 1 UNION ALL VALUES(2)",
        "SELECT * FROM (VALUES(1, 2), (3, 4))",
        "SELECT * FROM (VALUES(1, 2), (3, 4)) JOIN t1",
        "SELECT * FROM (VALUES(1, 2), (3, 4)) AS v WHERE v.column1 > 1",
        "SELECT * FROM t1 WHERE a IN (SELECT * FROM (VALUES(1), (2)))",
        "INSERT INTO t3 VALUES(1, 2), (3, (SELECT max(a) FROM t1))",
        "INSERT INTO t3 SELECT * FROM (VALUES(1, 2), (3, 4))",
        "INSERT INTO t3 VALUES(1, 2) UNION ALL SELECT 5, 6",
        "INSERT INTO t3 VALUES(CAST(1 AS INT), 2), (3, 4)",
        "INSERT INTO t3 VALUES(1, 2), (?1, 4)",
        "INSERT INTO t3 VALUES(1, 2), (abs(-3), 4)",
        "INSERT INTO t3 VALUES(1, 2), (3, 4) ON CONFLICT DO NOTHING",
    ]);
}

#[test]
fn ctes() {
    check(&[
        "WITH c(n) AS (SELECT max(b) FROM t1) UPDATE t3 SET q = (SELECT n FROM c)",
        "WITH c(n) AS (VALUES(1), (2)) SELECT * FROM c",
        "WITH c(n) AS (VALUES(1), (2)) INSERT INTO t3 SELECT n, n FROM c",
        "WITH c(n) AS (SELECT count(*) FROM t2) SELECT n FROM c",
        "WITH c(n) AS (SELECT sum(x) FROM t2) SELECT a FROM t1 WHERE b > (SELECT n FROM c)",
    ]);
}

#[test]
fn truncate_and_lists() {
    check(&[
        "DELETE FROM t1 WHERE 1",
        "DELETE FROM t1 RETURNING a",
        "DELETE FROM t4",
        "DELETE FROM t1 WHERE rowid IN (1, 3)",
        "DELETE FROM t2 WHERE x IN (1, 5)",
    ]);
}

/// Where parlite runs the statement differently from SQLite, its plan says what parlite
/// does (README: EXPLAIN QUERY PLAN). SQLite's rows are in the comments.
#[test]
fn known_differences() {
    let p = parlite::Connection::open(":memory:").expect("parlite");
    p.execute_batch(SETUP).expect("parlite setup");
    for (q, want) in [
        // SQLite: SCAN t1, BLOOM FILTER ON t3 (q=?), SEARCH t3 USING AUTOMATIC COVERING
        // INDEX (q=?): parlite builds no Bloom filter.
        (
            "UPDATE t1 SET b = t3.p FROM t3 WHERE t3.q = t1.c",
            &["SCAN t1", "SEARCH t3 USING AUTOMATIC COVERING INDEX (q=?)"][..],
        ),
        // SQLite: SCAN t2 USING COVERING INDEX t2x: parlite reads the target's whole rows.
        (
            "UPDATE t2 SET y = t1.b FROM t1 WHERE t1.a = t2.x",
            &["SCAN t2", "SEARCH t1 USING INTEGER PRIMARY KEY (rowid=?)"],
        ),
        // SQLite flattens the CTE into the subquery (SCAN t1): parlite runs it as a
        // subquery of its own.
        (
            "WITH c(n) AS (SELECT b FROM t1) DELETE FROM t3 WHERE p IN (SELECT n FROM c)",
            &[
                "SCAN t3",
                "LIST SUBQUERY 2",
                "  SCAN (subquery)",
                "  CREATE BLOOM FILTER",
            ],
        ),
        // SQLite: SEARCH t1 USING INTEGER PRIMARY KEY (rowid>?) (the CTE flattened).
        (
            "WITH c(n) AS (SELECT b FROM t1 WHERE a > 1) INSERT INTO t3 SELECT n, n FROM c",
            &["SCAN (subquery)"],
        ),
        // SQLite: MATERIALIZE c over SCAN t2 USING COVERING INDEX t2x, then SCAN c.
        (
            "WITH c(n) AS (SELECT DISTINCT x FROM t2) DELETE FROM t3 WHERE p IN (SELECT n FROM c)",
            &[
                "SCAN t3",
                "LIST SUBQUERY 2",
                "  SCAN (subquery)",
                "  CREATE BLOOM FILTER",
            ],
        ),
        // SQLite: MATERIALIZE c (SEARCH t1), SCAN c1, SCAN c2: parlite runs the CTE for
        // each reference.
        (
            "WITH c(n) AS (SELECT max(b) FROM t1) SELECT * FROM c AS c1, c AS c2",
            &["SCAN (subquery)", "SCAN (subquery)"],
        ),
    ] {
        let got = eqp_tree(run_parlite(&p, &format!("EXPLAIN QUERY PLAN {q}")));
        let want: Vec<String> = want
            .iter()
            .map(|d| {
                let depth = d.len() - d.trim_start().len();
                format!("{}Text({:?})", &d[..depth], d.trim_start())
            })
            .collect();
        assert_eq!(got, Ok(want), "{q}");
    }
}

/// `SET (a, b) = (x, y)` plans as SQLite's; `SET (a, b) = (SELECT ...)` runs the subquery
/// once per column (dml/set_row_value.rs), so its plan shows one SCALAR SUBQUERY per column
/// where SQLite shows one (a known difference; the rows agree, update_row_values.rs).
#[test]
fn row_value_assignments() {
    check(&[
        "UPDATE t1 SET (b, c) = (5, 'x') WHERE a = 1",
        "UPDATE t1 SET (b, c) = (c, b) WHERE b > 10",
    ]);
    let p = parlite::Connection::open(":memory:").expect("parlite");
    p.execute_batch(SETUP).expect("parlite setup");
    let q = "EXPLAIN QUERY PLAN UPDATE t1 SET (b, c) = (SELECT x, y FROM t2) WHERE a = 1";
    let Out::Rows { rows, .. } = run_parlite(&p, q) else {
        panic!("{q}");
    };
    let scalar = rows
        .iter()
        .filter(|r| matches!(&r[3], parlite::Value::Text(t) if t.starts_with("SCALAR SUBQUERY")))
        .count();
    assert_eq!(scalar, 2, "{rows:?}");
}

#[test]
fn insert_plans() {
    check(&[
        "INSERT INTO t3 VALUES(1, 2)",
        "INSERT INTO t3 VALUES(1, 2), (3, 4)",
        "INSERT INTO t3 SELECT b, c FROM t1",
        "INSERT INTO t3 SELECT b, c FROM t1 WHERE a = 2",
        "INSERT INTO t3 SELECT x, y FROM t2 WHERE x = 2",
        "INSERT INTO t3 SELECT * FROM t3",
        "INSERT INTO t3 SELECT b, (SELECT max(y) FROM t2) FROM t1",
        "INSERT INTO t3 SELECT x, count(*) FROM t2 GROUP BY x",
        "INSERT INTO t3 VALUES((SELECT max(a) FROM t1), 0)",
        "INSERT INTO t3 DEFAULT VALUES",
        "INSERT INTO t1(b, c) SELECT p, q FROM t3 ORDER BY p",
    ]);
}
