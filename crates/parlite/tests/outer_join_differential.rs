//! Differential tests of RIGHT and FULL OUTER JOIN (SQLite >= 3.39): the same SQL through
//! parlite and through SQLite (rusqlite, bundled 3.50.2); result rows in order (with storage
//! classes), column names and error messages must agree. Rows are compared as a multiset
//! unless the statement has an ORDER BY: the order of the NULL-extended right rows depends
//! on how SQLite happens to scan the right table (a covering index, say). The harness is
//! otherwise `differential.rs`'s.

mod common;
use common::*;

/// Runs a script in both engines and compares each statement's outcome (common/mod.rs).
fn check(script: &str) {
    check_script(
        script,
        Compare {
            unordered_without_order_by: true,
            ..Compare::default()
        },
    );
}

const SETUP: &str = "
CREATE TABLE a(x INTEGER, y TEXT);
CREATE TABLE b(x INTEGER, z TEXT);
CREATE TABLE c(x INTEGER, w TEXT);
CREATE TABLE e(x INTEGER);
INSERT INTO a VALUES(1,'a1'),(2,'a2'),(4,'a4'),(NULL,'an'),(2,'a2bis');
INSERT INTO b VALUES(2,'b2'),(3,'b3'),(4,'b4'),(NULL,'bn');
INSERT INTO c VALUES(3,'c3'),(4,'c4'),(5,'c5');
CREATE INDEX bx ON b(x);
";

#[test]
fn right_join() {
    check(&format!(
        "{SETUP}
SELECT * FROM a RIGHT JOIN b ON a.x=b.x;
SELECT * FROM a RIGHT OUTER JOIN b ON a.x=b.x ORDER BY b.z, a.y;
SELECT * FROM a RIGHT JOIN b USING(x);
SELECT x, a.x, b.x FROM a RIGHT JOIN b USING(x);
SELECT * FROM a NATURAL RIGHT JOIN b;
SELECT * FROM a RIGHT JOIN b ON a.x=b.x AND a.y<>'a2';
SELECT * FROM a RIGHT JOIN b ON a.x=b.x WHERE a.y IS NOT 'a4';
SELECT * FROM a RIGHT JOIN b ON a.x=b.x WHERE a.x IS NULL;
SELECT * FROM a RIGHT JOIN b ON 1;
SELECT * FROM a RIGHT JOIN b ON 0;
SELECT * FROM e RIGHT JOIN b ON e.x=b.x;
SELECT * FROM b RIGHT JOIN e ON e.x=b.x;
SELECT * FROM (SELECT x, y FROM a WHERE x>1) AS s RIGHT JOIN b ON s.x=b.x;
SELECT * FROM a RIGHT JOIN (SELECT * FROM b WHERE x>2) AS s ON s.x=a.x;
"
    ));
}

#[test]
fn full_join() {
    check(&format!(
        "{SETUP}
SELECT * FROM a FULL JOIN b ON a.x=b.x;
SELECT * FROM a FULL OUTER JOIN b ON a.x=b.x;
SELECT * FROM a FULL JOIN b USING(x);
SELECT x, a.x, b.x FROM a FULL JOIN b USING(x);
SELECT * FROM a NATURAL FULL JOIN b;
SELECT * FROM a FULL JOIN b ON a.x=b.x WHERE a.y IS NOT 'a2';
SELECT * FROM a FULL JOIN b ON a.x=b.x AND b.z='b4';
SELECT * FROM a FULL JOIN b ON a.x=b.x WHERE a.x IS NULL OR b.x IS NULL;
SELECT * FROM e FULL JOIN b ON e.x=b.x;
SELECT * FROM b FULL JOIN e ON e.x=b.x;
SELECT * FROM a FULL JOIN b ON 0;
SELECT * FROM a FULL JOIN b USING(x) WHERE x>1;
SELECT * FROM a FULL JOIN b USING(x) ORDER BY x DESC;
SELECT a.*, b.* FROM a FULL JOIN b USING(x);
SELECT a.*, b.* FROM a RIGHT JOIN b USING(x);
SELECT b.*, a.* FROM a NATURAL FULL JOIN b;
"
    ));
}

#[test]
fn join_chains() {
    check(&format!(
        "{SETUP}
SELECT * FROM a FULL JOIN b USING(x) FULL JOIN c USING(x);
SELECT * FROM a RIGHT JOIN b USING(x) RIGHT JOIN c USING(x);
SELECT * FROM a LEFT JOIN b USING(x) RIGHT JOIN c USING(x);
SELECT * FROM a LEFT JOIN b ON a.x=b.x RIGHT JOIN c ON b.x=c.x;
SELECT * FROM a JOIN b ON a.x=b.x RIGHT JOIN c ON a.x=c.x;
SELECT * FROM a RIGHT JOIN b ON a.x=b.x JOIN c ON c.x=b.x;
SELECT * FROM a RIGHT JOIN b ON a.x=b.x LEFT JOIN c ON c.x=b.x;
SELECT * FROM a RIGHT JOIN b ON a.x=b.x RIGHT JOIN c ON c.x=b.x;
SELECT * FROM a FULL JOIN b ON a.x=b.x FULL JOIN c ON c.x=b.x;
SELECT * FROM a FULL JOIN b ON a.x=b.x FULL JOIN c ON c.x=a.x;
SELECT * FROM a, b RIGHT JOIN c ON b.x=c.x;
SELECT * FROM a RIGHT JOIN b ON a.x=b.x, c WHERE c.x=4;
SELECT * FROM a RIGHT JOIN b ON a.x=b.x JOIN c ON a.x=4;
SELECT * FROM a JOIN b ON a.x=1 RIGHT JOIN c ON c.x=b.x;
SELECT * FROM a NATURAL RIGHT JOIN b NATURAL FULL JOIN c;
SELECT a.*, c.* FROM a FULL JOIN b USING(x) FULL JOIN c USING(x);
SELECT * FROM a RIGHT JOIN b ON a.x=b.x AND b.x=(SELECT max(x) FROM a);
SELECT count(*) FROM (SELECT * FROM a RIGHT JOIN b ON a.x=b.x LIMIT 2);
SELECT * FROM a CROSS JOIN b FULL JOIN c ON c.x=b.x AND a.x=b.x;
SELECT a.y, b.z, c.w FROM a JOIN b ON b.x IN (SELECT x FROM c WHERE c.x=a.x) FULL JOIN c ON c.x=b.x;
SELECT a.y, b.z, c.w FROM a FULL JOIN b ON a.x=b.x FULL JOIN c ON c.x IN (SELECT x FROM e WHERE e.x=a.x);
"
    ));
}

#[test]
fn aggregates_and_subqueries_over_outer_joins() {
    check(&format!(
        "{SETUP}
SELECT count(*), count(a.x), count(b.x), sum(b.x) FROM a FULL JOIN b ON a.x=b.x;
SELECT b.z, count(a.y) FROM a RIGHT JOIN b ON a.x=b.x GROUP BY b.z ORDER BY b.z;
SELECT coalesce(a.y,'-'), coalesce(b.z,'-') FROM a FULL JOIN b ON a.x=b.x ORDER BY 1, 2;
SELECT DISTINCT b.x FROM a RIGHT JOIN b ON a.x=b.x ORDER BY 1;
SELECT * FROM a FULL JOIN b ON a.x=b.x ORDER BY a.y, b.z LIMIT 3;
SELECT (SELECT count(*) FROM a RIGHT JOIN b ON a.x=b.x WHERE b.x=c.x) FROM c;
SELECT c.w FROM c WHERE EXISTS (SELECT 1 FROM a FULL JOIN b ON a.x=b.x WHERE b.x=c.x OR a.x=c.x);
SELECT x FROM a FULL JOIN b USING(x) GROUP BY x HAVING count(*)>1;
WITH t AS (SELECT * FROM a FULL JOIN b USING(x)) SELECT count(*), count(x) FROM t;
CREATE VIEW v AS SELECT a.y, b.z FROM a FULL JOIN b ON a.x=b.x;
SELECT * FROM v ORDER BY 1, 2;
"
    ));
}

#[test]
fn outer_join_errors() {
    check(&format!(
        "{SETUP}
SELECT * FROM a NATURAL RIGHT JOIN b ON a.x=b.x;
SELECT * FROM a RIGHT JOIN b USING(q);
SELECT * FROM a FULL JOIN b USING(y);
SELECT nosuch FROM a FULL JOIN b ON a.x=b.x;
SELECT * FROM a FULL JOIN b ON a.x=c.x;
"
    ));
}

/// EXPLAIN QUERY PLAN shows the pass over unmatched right rows as SQLite does.
#[test]
fn explain_query_plan_shows_the_right_join_pass() {
    let setup = "CREATE TABLE p(x); CREATE TABLE q(x); CREATE TABLE r(x);";
    let s = rusqlite::Connection::open_in_memory().expect("sqlite");
    let c = parlite::Connection::open(":memory:").expect("parlite");
    s.execute_batch(setup).expect("setup");
    c.execute_batch(setup).expect("setup");
    for q in [
        "EXPLAIN QUERY PLAN SELECT * FROM p RIGHT JOIN q ON p.x = q.x",
        "EXPLAIN QUERY PLAN SELECT * FROM p FULL JOIN q ON p.x = q.x",
        "EXPLAIN QUERY PLAN SELECT * FROM p FULL JOIN q ON p.x = q.x RIGHT JOIN r ON r.x = q.x",
    ] {
        let details = |o: Out| -> Vec<parlite::Value> {
            match o {
                Out::Rows { rows, .. } => rows.into_iter().map(|r| r[3].clone()).collect(),
                Out::Err(e) => panic!("{q}: {e}"),
            }
        };
        assert_eq!(
            details(run_parlite(&c, q)),
            details(run_sqlite(&s, q)),
            "{q}"
        );
    }
}
