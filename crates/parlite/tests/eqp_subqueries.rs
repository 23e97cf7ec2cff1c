//! EXPLAIN QUERY PLAN for queries holding subqueries, against SQLite (rusqlite, bundled
//! 3.50.2) as the oracle: the `detail` of every row and the tree the `id`/`parent` columns
//! draw (each row's depth and order), plus the query's rows.
//! - `SCALAR SUBQUERY N` / `CORRELATED SCALAR SUBQUERY N` (a scalar or EXISTS subquery) and
//!   `LIST SUBQUERY N` / `CORRELATED LIST SUBQUERY N` (`x IN (SELECT ...)`), each over its own
//!   loops, after the loops of the query holding them and before its ORDER BY sort;
//! - `COMPOUND QUERY` over `LEFT-MOST SUBQUERY` and one `UNION ALL` / `UNION USING TEMP
//!   B-TREE` / `INTERSECT USING TEMP B-TREE` / `EXCEPT USING TEMP B-TREE` per further arm.
//! - `CO-ROUTINE name` over the rows of an aggregate FROM subquery that is its query's only
//!   source (SQLite cannot flatten it), then `SCAN name` (the alias, else `(subquery-N)`);
//!   likewise a view (`CO-ROUTINE v`).
//! N is SQLite's select id: selects are numbered in the order the parser finishes them (a
//! subquery before the select holding it, left to right).

mod common;

use common::{eqp_tree, run_parlite, run_sqlite};

const SETUP: &str = "
    CREATE TABLE t1(a INTEGER PRIMARY KEY, b, c);
    CREATE TABLE t2(x, y);
    CREATE INDEX t2x ON t2(x);
    CREATE TABLE t3(p, q);
    CREATE VIEW v AS SELECT count(*) AS n FROM t1;
    INSERT INTO t1 VALUES(1, 10, 'a'), (2, 20, 'b'), (3, 30, 'c');
    INSERT INTO t2 VALUES(1, 100), (2, 200), (2, 201), (5, 500);
    INSERT INTO t3 VALUES(10, 'x'), (30, 'y');
";

fn compare(queries: &[&str]) -> Vec<String> {
    let s = rusqlite::Connection::open_in_memory().expect("sqlite");
    let p = parlite::Connection::open(":memory:").expect("parlite");
    s.execute_batch(SETUP).expect("sqlite setup");
    p.execute_batch(SETUP).expect("parlite setup");
    let mut failures = Vec::new();
    for q in queries {
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
    }
    failures
}

fn check(queries: &[&str]) {
    let failures = compare(queries);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn scalar_subqueries() {
    check(&[
        "SELECT a, (SELECT max(y) FROM t2) FROM t1",
        "SELECT a, (SELECT y FROM t2 WHERE x = t1.a) FROM t1",
        "SELECT a FROM t1 WHERE b = (SELECT max(p) FROM t3)",
        "SELECT a FROM t1 WHERE b > (SELECT count(*) FROM t2 WHERE x = a)",
        "SELECT (SELECT 1), (SELECT count(*) FROM t3) FROM t1 WHERE a = (SELECT min(x) FROM t2)",
        "SELECT a FROM t1 WHERE EXISTS (SELECT 1 FROM t3 WHERE p = b)",
        "SELECT a FROM t1 WHERE NOT EXISTS (SELECT 1 FROM t3)",
        "SELECT a, (SELECT max(y) FROM t2) FROM t1 ORDER BY c",
        "SELECT (SELECT (SELECT max(p) FROM t3) FROM t2 LIMIT 1)",
        "SELECT 1",
        "SELECT (SELECT 1)",
        "SELECT a FROM t1 ORDER BY (SELECT count(*) FROM t2 WHERE x = a)",
        "SELECT a FROM t1 LIMIT (SELECT count(*) FROM t3)",
        "SELECT count(*), (SELECT max(p) FROM t3) FROM t1 HAVING sum(b) > (SELECT min(p) FROM t3)",
        "SELECT sum(b + (SELECT max(p) FROM t3)) FROM t1",
        "SELECT t1.a, t2.y FROM t1 JOIN t2 ON t2.x = t1.a AND t2.y > (SELECT min(p) FROM t3)",
        "SELECT t1.a FROM t1 LEFT JOIN t2 ON x = (SELECT max(p) FROM t3) WHERE b > 0",
        "SELECT y FROM t2 WHERE y IN (SELECT b FROM t1 WHERE c IN (SELECT q FROM t3))",
        "SELECT a FROM t1 WHERE a = (SELECT x FROM t2 WHERE y = (SELECT max(y) FROM t2))",
        "SELECT (SELECT a FROM t1 UNION ALL SELECT p FROM t3 LIMIT 1)",
        "SELECT CASE WHEN a > 1 THEN (SELECT 'x') ELSE (SELECT q FROM t3 WHERE p = b) END FROM t1",
    ]);
}

#[test]
fn list_subqueries() {
    check(&[
        "SELECT a FROM t1 WHERE b IN (SELECT p FROM t3)",
        "SELECT a FROM t1 WHERE b NOT IN (SELECT p FROM t3)",
        "SELECT a FROM t1 WHERE b IN (SELECT p FROM t3 WHERE q = c)",
        "SELECT a, b IN (SELECT p FROM t3) FROM t1",
        "SELECT * FROM t2 WHERE x IN (SELECT a FROM t1)",
        "SELECT a FROM t1 WHERE b IN (SELECT x FROM t2)",
        "SELECT a FROM t1 WHERE c IN (SELECT x FROM t2)",
        "SELECT a FROM t1 WHERE c COLLATE nocase IN (SELECT x FROM t2)",
        "SELECT a FROM t1 WHERE b IN (SELECT DISTINCT x FROM t2)",
        "SELECT a FROM t1 WHERE b IN (SELECT x FROM t2 WHERE y > 0)",
        "SELECT a FROM t1 WHERE b IN (SELECT a FROM t1 UNION SELECT x FROM t2)",
    ]);
}

#[test]
fn compound_selects() {
    check(&[
        "SELECT a FROM t1 UNION ALL SELECT x FROM t2",
        "SELECT a FROM t1 UNION SELECT x FROM t2",
        "SELECT a FROM t1 INTERSECT SELECT x FROM t2",
        "SELECT a FROM t1 EXCEPT SELECT x FROM t2",
        "SELECT a FROM t1 UNION ALL SELECT x FROM t2 UNION ALL SELECT p FROM t3",
        "SELECT a FROM t1 UNION ALL SELECT x FROM t2 LIMIT 3",
        "SELECT a FROM t1 WHERE b > (SELECT 1) UNION ALL SELECT x FROM t2 WHERE y IN (SELECT p FROM t3)",
        "SELECT 1 UNION ALL SELECT 2",
        "SELECT b FROM t1 UNION ALL SELECT (SELECT max(p) FROM t3)",
    ]);
}

#[test]
fn from_subqueries() {
    check(&[
        "SELECT * FROM (SELECT max(b) AS m FROM t1) AS g",
        "SELECT * FROM (SELECT max(b) AS m FROM t1)",
        "SELECT * FROM (SELECT count(*) FROM t1 WHERE a > (SELECT 1)) AS d",
        "SELECT m + 1 FROM (SELECT count(b) AS m, (SELECT min(p) FROM t3) AS n FROM t1) WHERE m > 0",
        "SELECT * FROM v",
        "SELECT n FROM v AS w WHERE n > 0",
        "SELECT (SELECT n FROM v) FROM t2",
        "SELECT (SELECT 1) FROM (SELECT count(*) AS n FROM t2 WHERE y IN (SELECT p FROM t3)) AS s",
    ]);
}
