//! Operators whose meaning SQLite fixes in the parser or the resolver, against SQLite:
//! `x IS [NOT] TRUE|FALSE` (a truth test, not a comparison with 1 or 0, unless a column is
//! named `true`), the collation an operator, function or CASE takes from an operand with
//! an explicit COLLATE (EP_Collate), `-(9223372036854775808)`, an IN list's affinity, and a
//! compound's column affinities (as a subquery's columns: sqlite3SubqueryColumnTypes; in IN and
//! scalar subqueries: the last arm's).

mod common;

#[test]
fn is_true_and_is_false_test_truth() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(a, b)",
        "INSERT INTO t VALUES (2, 'x'), (0, '1x'), (NULL, x'31'), (0.5, ''), (-1, '0.0')",
        "SELECT a IS TRUE, a IS FALSE, a IS NOT TRUE, a IS NOT FALSE, \
         b IS TRUE, b IS FALSE, b IS NOT TRUE, b IS NOT FALSE FROM t ORDER BY rowid",
        "SELECT count(*) FROM t WHERE a IS TRUE",
        "SELECT count(*) FROM t WHERE b IS NOT FALSE",
        "SELECT (1 IS TRUE) IS TRUE, 1 IS (TRUE), 1 IS +TRUE, 2 IS TRUE = 1, 2 IS true, \
         2 IS \"true\", 'a' IS FALSE",
        "CREATE TABLE u(\"true\", \"false\")",
        "INSERT INTO u VALUES (5, 6)",
        "SELECT 5 IS true, 6 IS false, 1 IS TRUE FROM u",
        "SELECT 5 IS main.u.true FROM u",
    ]));
}

#[test]
fn operators_take_an_operands_explicit_collation() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "SELECT upper('a' COLLATE NOCASE) = 'a', lower('A') COLLATE NOCASE = 'a', \
         ('a' COLLATE NOCASE || 'b') = 'AB', -('1' COLLATE NOCASE) = -1",
        "SELECT CASE WHEN 1 THEN 'a' COLLATE NOCASE END = 'A', \
         CASE 'x' COLLATE NOCASE WHEN 'X' THEN 1 ELSE 0 END, \
         coalesce(NULL, 'a' COLLATE NOCASE) = 'A'",
        "SELECT ('a' COLLATE BINARY || 'b' COLLATE NOCASE) = 'AB', \
         ('a' COLLATE NOCASE || 'b' COLLATE BINARY) = 'AB'",
        "SELECT 'A' = 'a' || '' COLLATE NOCASE, 'A' COLLATE BINARY = 'a' || '' COLLATE NOCASE",
        "SELECT 'a' || 'b' COLLATE NOCASE = 'AB', ('a' || 'b') = 'AB' COLLATE NOCASE",
        "CREATE TABLE t(a, b COLLATE NOCASE)",
        "INSERT INTO t VALUES ('b', 'B'), ('A', 'a'), ('c', 'C'), ('B', 'b')",
        "SELECT a FROM t ORDER BY upper(a) || '' COLLATE NOCASE, a",
        "SELECT a FROM t ORDER BY a || '' COLLATE NOCASE DESC, a",
        "SELECT a || '' = 'B', b || '' = 'B', upper(b) = 'b' FROM t ORDER BY rowid",
        "SELECT DISTINCT lower(a COLLATE NOCASE) FROM t ORDER BY 1",
        "SELECT lower(a) || '' COLLATE NOCASE AS k, count(*) FROM t GROUP BY k ORDER BY k",
    ]));
}

#[test]
fn minus_the_smallest_integer_in_parentheses_is_an_integer() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "SELECT -(9223372036854775808), typeof(-(9223372036854775808)), \
         -((9223372036854775808)), - 9223372036854775808, -(-(9223372036854775808)), \
         -(09223372036854775808), -(9223372036854775809), 9223372036854775808",
    ]));
}

#[test]
fn an_in_list_compares_with_the_left_operands_affinity_only() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(a TEXT, b INT, c TEXT COLLATE NOCASE, d)",
        "INSERT INTO t VALUES ('5', 5, 'x', 'X')",
        "SELECT 5 IN (a), 5 IN (a, 6), '5' IN (b), '5' IN (b, 7), 5 IN (b), a IN (b), \
         b IN (a), a IN (b, 1), b IN (a, 1), 5 NOT IN (a), '5' NOT IN (b, 7) FROM t",
        "SELECT 'X' IN (c), 'X' IN (c, 'y'), d IN (c), d IN (c, 'y'), c IN (d), c IN (d, 'y'), \
         'X' IN ('x' COLLATE NOCASE), 'X' IN ('x' COLLATE NOCASE, 'y'), \
         'X' NOT IN ('x' COLLATE NOCASE), d IN ('x' COLLATE NOCASE), \
         'X' COLLATE BINARY IN ('x' COLLATE NOCASE), c IN ('X' COLLATE BINARY) FROM t",
        "CREATE INDEX ia ON t(a)",
        "SELECT count(*) FROM t WHERE a IN (5, 6)",
        "SELECT count(*) FROM t WHERE 5 IN (a)",
        "SELECT count(*) FROM t WHERE d IN ('x' COLLATE NOCASE)",
    ]));
}

#[test]
fn compound_columns_take_sqlites_affinities() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(a INT, b TEXT, c)",
        "INSERT INTO t VALUES (1, '1', 1)",
        // As a FROM subquery, view or CTE: the first arm with an affinity, BLOB when
        // another arm may hold the other kind of value.
        "SELECT x = '1', x = 1, typeof(x) FROM (SELECT a AS x FROM t UNION ALL SELECT '1')",
        "SELECT x = '1', x = 1 FROM (SELECT b AS x FROM t UNION ALL SELECT 1)",
        "SELECT x = '1', x = 1 FROM (SELECT a AS x FROM t UNION ALL SELECT 2) ORDER BY 1",
        "SELECT x = '1', x = 1 FROM (SELECT NULL AS x UNION ALL SELECT a FROM t)",
        "SELECT x = '1', x = 1 FROM (SELECT b AS x FROM t UNION ALL SELECT 2 UNION ALL SELECT 'y')",
        "SELECT x = '1', x = 1 FROM (SELECT CAST(b AS INT) AS x FROM t UNION ALL SELECT '1')",
        "SELECT x = '1', x = 1 FROM (SELECT a AS x FROM t UNION SELECT a || '' FROM t)",
        "SELECT x = '1', x = 1 FROM (SELECT a AS x FROM t UNION ALL SELECT c FROM t)",
        "SELECT x = '1' FROM (SELECT a AS x FROM t UNION ALL SELECT CASE WHEN 1 THEN 'z' END)",
        "CREATE VIEW v AS SELECT a FROM t UNION ALL SELECT '1'",
        "SELECT a = '1', a = 1, typeof(a) FROM v",
        "WITH w AS (SELECT b FROM t UNION ALL SELECT 1) SELECT b = '1', b = 1 FROM w",
        // In IN and as a scalar subquery: the last arm's affinity.
        "SELECT '1' IN (SELECT a FROM t UNION ALL SELECT 'x'), 1 IN (SELECT b FROM t UNION ALL \
         SELECT 2), '1' IN (SELECT 'x' UNION ALL SELECT a FROM t), 1 IN (SELECT 2 UNION ALL \
         SELECT b FROM t)",
        "SELECT (SELECT a FROM t UNION ALL SELECT 'x') = '1', \
         (SELECT b FROM t UNION ALL SELECT 2) = 1, \
         (SELECT 'x' UNION ALL SELECT a FROM t ORDER BY 1) = '1'",
        // CREATE TABLE AS writes the subquery's type.
        "CREATE TABLE c1 AS SELECT a FROM t UNION ALL SELECT 'x'",
        "CREATE TABLE c2 AS SELECT b FROM t UNION ALL SELECT 2",
        "CREATE TABLE c3 AS SELECT a FROM t UNION ALL SELECT 2",
        "SELECT name, sql FROM sqlite_schema WHERE name LIKE 'c_' ORDER BY name",
    ]));
}
