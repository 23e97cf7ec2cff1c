//! Errors SQLite reports when it prepares a statement, against SQLite: likelihood()'s
//! probability must be a real literal between 0.0 and 1.0; a WITH clause names each table
//! once; a recursive CTE's step reads the recursive table once; ORDER BY / LIMIT only on a
//! compound's last arm; HAVING only in an aggregate query; ON/USING only after a join;
//! only the last ON CONFLICT clause without a target.

mod common;

#[test]
fn likelihood_takes_a_real_literal_probability() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(a)",
        "INSERT INTO t VALUES (1), (2)",
        "SELECT likelihood(3, 0.5), likely(1), unlikely(2)",
        "SELECT likelihood(3, 1.0), likelihood(3, 0.0), likelihood(3, .25), likelihood(3, 1e-1)",
        "SELECT a FROM t WHERE likelihood(a = 1, 0.9)",
        "SELECT likelihood(3, 2.0)",
        "SELECT likelihood(3, 1)",
        "SELECT LIKELIHOOD(3, -0.5)",
        "SELECT likelihood(3, a) FROM t",
        "SELECT likelihood(3, NULL)",
    ]));
}

#[test]
fn with_clause_errors_match_sqlite() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "WITH t AS (SELECT 1 AS a), t AS (SELECT 2) SELECT * FROM t",
        "WITH t AS (SELECT 1 AS a), T AS (SELECT 2) SELECT * FROM t",
        "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t, t AS t2 WHERE n < 3) \
         SELECT * FROM t",
        "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT t.n + 1 FROM t JOIN t AS u \
         ON u.n = t.n WHERE t.n < 3) SELECT * FROM t",
        "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 3 \
         AND n IN (SELECT n FROM t)) SELECT * FROM t",
        "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 3) \
         SELECT * FROM t AS a, t AS b",
    ]));
}

#[test]
fn compound_arms_before_the_last_take_no_order_by_or_limit() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "SELECT 1 ORDER BY 1 UNION SELECT 2",
        "SELECT 1 LIMIT 1 UNION ALL SELECT 2",
        "SELECT 1 ORDER BY 1 LIMIT 1 INTERSECT SELECT 2 LIMIT 3 EXCEPT SELECT 3 ORDER BY 1",
        "SELECT 1 LIMIT 1 UNION SELECT 2 ORDER BY 1 EXCEPT SELECT 3",
        "VALUES (1) UNION SELECT 2 ORDER BY 1 UNION SELECT 3",
        "VALUES (1) ORDER BY 1 UNION SELECT 2",
        "SELECT * FROM (SELECT 1 LIMIT 1 UNION SELECT 2)",
        "SELECT 3 UNION SELECT 2 ORDER BY 1 LIMIT 1",
        "SELECT 3 UNION SELECT 2 UNION SELECT 1 ORDER BY 1 DESC LIMIT 2 OFFSET 1",
    ]));
}

#[test]
fn having_needs_an_aggregate_query() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(a, b)",
        "INSERT INTO t VALUES (1, 2), (1, 3), (2, 4)",
        "SELECT a FROM t HAVING a > 1",
        "SELECT sum(b) FROM t HAVING count(*) > 2",
        "SELECT a, sum(b) FROM t GROUP BY a HAVING sum(b) > 4",
        "SELECT a FROM t GROUP BY a HAVING a > 1",
        "SELECT 1 HAVING 1",
    ]));
}

#[test]
fn on_and_using_need_a_join_and_upsert_targets_come_first() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(a UNIQUE, b)",
        "INSERT INTO t VALUES (1, 1)",
        "SELECT * FROM t ON 1",
        "SELECT * FROM t USING (a)",
        "SELECT * FROM t ON 1 WHERE 1",
        "SELECT * FROM t ON 1, t AS u",
        "SELECT * FROM t USING (a) x",
        "SELECT * FROM (SELECT * FROM t ON 1)",
        "SELECT * FROM t, t AS u ON 1",
        // The FROM item takes the ON: SQLite's documented parsing ambiguity.
        "INSERT INTO t SELECT * FROM t ON CONFLICT DO NOTHING",
        "INSERT INTO t SELECT * FROM (SELECT 1, 2) ON CONFLICT(a) DO UPDATE SET b = 3",
        "INSERT INTO t SELECT * FROM t WHERE true ON CONFLICT DO NOTHING",
        "INSERT INTO t VALUES (1, 1) ON CONFLICT DO NOTHING ON CONFLICT(a) DO NOTHING",
        "INSERT INTO t VALUES (1, 1) ON CONFLICT(a) DO UPDATE SET b = 2 \
         ON CONFLICT DO NOTHING RETURNING *",
        "INSERT INTO t VALUES (2, 1) ON CONFLICT DO UPDATE SET b = 2 RETURNING *",
        "SELECT * FROM t",
    ]));
}

#[test]
fn unknown_table_valued_functions() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(a)",
        "CREATE VIEW v AS SELECT 1",
        "SELECT * FROM nosuch(1)",
        "SELECT * FROM main.nosuch(1)",
        "SELECT * FROM t(1)",
        "SELECT * FROM v(1)",
        "SELECT * FROM pragma_nosuch(1)",
        "SELECT 1 IN nosuch(1)",
        "SELECT 1 IN t(1)",
        "SELECT * FROM json_each('[1]')",
    ]));
}

/// A result column's alias names it in WHERE, GROUP BY, HAVING and ORDER BY, never in the
/// result columns themselves (resolve.c makes the aliases visible after resolving them).
#[test]
fn aliases_are_not_visible_to_other_result_columns() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(a, b)",
        "INSERT INTO t VALUES (1, 2), (3, 4)",
        "SELECT 1 AS x, x + 1",
        "SELECT a AS x, x FROM t",
        "SELECT a AS x, (SELECT x) FROM t",
        "SELECT a AS x, CASE WHEN x THEN 1 END FROM t",
        "SELECT a AS x, sum(b) OVER (ORDER BY x) FROM t",
        "SELECT a AS x, max(b) FILTER (WHERE x > 1) FROM t",
        "SELECT a AS b, b AS a FROM t WHERE a = 1",
        "SELECT a AS x FROM t WHERE x > 1",
        "SELECT a + b AS s, count(*) FROM t GROUP BY s HAVING s > 3",
        "SELECT a AS x, b FROM t ORDER BY x DESC",
    ]));
}
