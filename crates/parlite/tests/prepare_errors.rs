//! Errors SQLite reports when it prepares a statement, against SQLite: likelihood()'s
//! probability must be a real literal between 0.0 and 1.0; a WITH clause names each table
//! once; a recursive CTE's step reads the recursive table once.

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
