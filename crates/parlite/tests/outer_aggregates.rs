//! Where an aggregate belongs and where it may stand, against SQLite: an aggregate written
//! in a subquery whose arguments read only an outer query's columns is that outer query's
//! (the outer query becomes an aggregate one; resolve.c's sqlite3ReferencesSrcList loop);
//! an aggregate in a WHERE, or ordering a query that is not an aggregate one, fails with
//! SQLite's message for the place (a resolve error or its code generator's "misuse of
//! aggregate: f()"), the alias of a window function likewise.

mod common;

const SETUP: [&str; 3] = [
    "CREATE TABLE t(a, b)",
    "INSERT INTO t VALUES (1, 10), (2, 20), (1, 30), (NULL, 5)",
    "CREATE TABLE e(a, b)",
];

fn check(queries: &[&str]) {
    let mut stmts: Vec<&str> = SETUP.to_vec();
    stmts.extend_from_slice(queries);
    common::assert_no_mismatches(common::statement_mismatches(&stmts));
}

#[test]
fn aggregates_of_outer_queries() {
    check(&[
        "SELECT (SELECT sum(t.a)) FROM t",
        "SELECT (SELECT sum(t.a) FROM t AS t2) FROM t",
        "SELECT (SELECT sum(t.a) FROM e) FROM t",
        "SELECT a, (SELECT sum(t.b)) FROM t GROUP BY a ORDER BY a",
        "SELECT a, (SELECT sum(t.b) + count(*) FROM t AS t2) FROM t GROUP BY a ORDER BY a",
        "SELECT a, (SELECT sum(t.a) + sum(t2.a) FROM t AS t2) FROM t",
        "SELECT a, (SELECT sum(t.a + t2.a) FROM t AS t2) FROM t ORDER BY 1, 2",
        "SELECT (SELECT (SELECT max(t.b))) FROM t",
        "SELECT (SELECT count(*) FROM t AS t2 WHERE t2.a = count(t.a)) FROM t",
        "SELECT (SELECT t2.b FROM t AS t2 WHERE t2.a = count(t.a)) FROM t",
        "SELECT (SELECT count(*) FILTER (WHERE t.a > 1)) FROM t",
        "SELECT (SELECT group_concat(t.b, '-') FILTER (WHERE t.a = 1)) FROM t",
        "SELECT (SELECT sum(t.a)) FROM t ORDER BY (SELECT count(t.a))",
        "SELECT a FROM t GROUP BY a HAVING (SELECT sum(t.b)) > 15 ORDER BY a",
        "SELECT a, (SELECT max(t.b) FROM e GROUP BY e.a) FROM t GROUP BY a ORDER BY a",
        "SELECT (SELECT sum(e.a) FROM e), (SELECT sum(t.a)) FROM t",
        "SELECT (SELECT sum(t.a)) FROM e",
        "SELECT * FROM t WHERE (SELECT sum(t.a)) > 0",
        "SELECT a FROM t GROUP BY a HAVING EXISTS (SELECT 1 HAVING count(t.a) > 1)",
        "UPDATE t SET a = (SELECT sum(t.a))",
        "SELECT a, b FROM t ORDER BY a, b",
    ]);
}

#[test]
fn aggregates_where_none_may_stand() {
    check(&[
        "SELECT count(*) AS c FROM t WHERE c > 0",
        "SELECT count(*) FROM t WHERE count(*) > 0",
        "SELECT a FROM t WHERE count(*) > 0",
        "SELECT nosuch FROM t WHERE count(*) > 0",
        "SELECT a FROM t JOIN t AS t2 ON count(*) > 0",
        "SELECT a FROM t ORDER BY count(*)",
        "SELECT a FROM t ORDER BY 1, SUM(b)",
        "SELECT sum(b) FROM t ORDER BY count(*)",
        "SELECT a FROM t GROUP BY a ORDER BY count(*) DESC, a",
        "SELECT row_number() OVER () AS r FROM t WHERE r > 1",
        "SELECT sum(b) OVER () AS s FROM t GROUP BY s",
        "DELETE FROM t WHERE count(*) = 1",
        "SELECT count(*) FROM t",
    ]);
}

/// An EXISTS operand's result columns are never computed (select.c codes none for
/// SRT_Exists), so an outer query's aggregate written there runs where it could not be
/// computed (the outer query's WHERE or ORDER BY); in the outer query's own result columns
/// it still makes that query an aggregate one. A compound operand computes its columns.
#[test]
fn aggregates_of_outer_queries_in_exists_operands() {
    check(&[
        "SELECT 1 FROM t WHERE EXISTS (SELECT count(t.a))",
        "SELECT a FROM t WHERE EXISTS (SELECT count(t.a) FROM e)",
        "SELECT a FROM t WHERE NOT EXISTS (SELECT max(t.b) FROM t AS t2 WHERE t2.a > 5)",
        "SELECT a FROM t WHERE EXISTS (SELECT count(t.a) FROM t AS t2 GROUP BY t2.a)",
        "SELECT a FROM t WHERE EXISTS (SELECT count(t2.a) + count(t.a) FROM t AS t2)",
        "SELECT a FROM t WHERE EXISTS (SELECT (SELECT count(t.a)))",
        "SELECT a FROM t WHERE EXISTS (SELECT count(*), count(t.a) FROM t AS t2)",
        "SELECT a FROM t ORDER BY EXISTS (SELECT count(t.a)), a",
        "SELECT a, EXISTS (SELECT count(t.a)) FROM t",
        "SELECT sum(a) FROM t WHERE EXISTS (SELECT count(t.a))",
        "UPDATE t SET b = b + 1 WHERE EXISTS (SELECT count(t.a))",
        "SELECT a, b FROM t ORDER BY a, b",
        // Computed, so refused as before.
        "SELECT a FROM t WHERE EXISTS (SELECT count(t.a) UNION SELECT 1)",
        "SELECT a FROM t WHERE EXISTS (SELECT 1 FROM e WHERE (SELECT count(t.a)))",
        "SELECT a FROM t WHERE (SELECT count(t.a))",
        "SELECT a FROM t WHERE t.a = (SELECT count(t.a))",
        // A subquery's own WHERE: the subquery's error, however the outer query turns out.
        "SELECT a FROM t WHERE EXISTS (SELECT 1 FROM e WHERE count(t.a))",
        "SELECT count(*) FROM t WHERE a IN (SELECT 1 FROM e WHERE count(t.a))",
        "SELECT a FROM t WHERE EXISTS (SELECT 1 FROM e WHERE count(t.a) GROUP BY e.a)",
        "SELECT a FROM t WHERE EXISTS (SELECT count(t.a) HAVING count(t.a) > 1)",
    ]);
}
