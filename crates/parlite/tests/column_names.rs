//! Result and scope column names against SQLite: expressions named as written, quoted
//! names, `*` over joins, views, CTEs and RETURNING; a FROM subquery's, a CTE's and a
//! view's repeated names made unique as SQLite's sqlite3ColumnsFromExprList ("a", "a:1").

mod common;

#[test]
fn result_column_names_match_sqlite() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(a, \"b c\", [d])",
        "INSERT INTO t VALUES (1, 2, 3)",
        "SELECT a+1, t.a, \"b c\", [d], `d`, a AS x, count(*), max(a) FROM t",
        "SELECT * FROM (SELECT a, a FROM t)",
        "SELECT * FROM t AS x JOIN t AS y USING (a)",
        "SELECT * FROM t NATURAL JOIN t AS y",
        "SELECT x.*, 1 FROM t x",
        "SELECT (SELECT a FROM t), exists(SELECT 1), CAST(a AS TEXT), a COLLATE nocase FROM t",
        "SELECT a FROM t UNION SELECT d FROM t",
        "SELECT 1, 'x', NULL, x'00', 1.5, -1, +a, (a), ((a)) FROM t",
        "SELECT a  +  1, a/*c*/+1, upper( 'x' ) FROM t",
        "WITH w(p, q) AS (SELECT 1, 2) SELECT * FROM w",
        "WITH w AS (SELECT 1 AS p, 2) SELECT * FROM w",
        "CREATE VIEW v AS SELECT a, a+1 FROM t",
        "SELECT * FROM v",
        "CREATE VIEW v2(m, n) AS SELECT a, a+1 FROM t",
        "SELECT * FROM v2",
        "SELECT rowid, oid, _rowid_ FROM t",
        "SELECT t.rowid, * FROM t",
        "VALUES (1, 2), (3, 4)",
        "SELECT * FROM (VALUES (1, 2))",
        "SELECT a FROM t WHERE a IN (SELECT a FROM t) ORDER BY 1",
        "INSERT INTO t VALUES (4, 5, 6) RETURNING a, a+1, *",
        "UPDATE t SET a = a RETURNING \"b c\" AS bc, rowid",
        "SELECT group_concat(a, ',') OVER (), row_number() OVER w FROM t WINDOW w AS (ORDER BY a)",
        "SELECT json_extract('{}', '$'), t.* FROM t",
        "SELECT max(a), min(a) AS mn, a FROM t GROUP BY d HAVING count(*) > 0",
        "SELECT DISTINCT a FROM t",
        "SELECT a FROM t AS \"x y\"",
        "SELECT \"x y\".a FROM t AS \"x y\"",
    ]));
}
#[test]
fn repeated_subquery_column_names_match_sqlite() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(a, b)",
        "INSERT INTO t VALUES (1, 2)",
        "SELECT * FROM (SELECT a, a FROM t)",
        "SELECT * FROM (SELECT a, a, a AS \"a:1\", b AS A FROM t)",
        "SELECT a FROM (SELECT a, b AS a FROM t)",
        "SELECT \"a:1\" FROM (SELECT a, b AS a FROM t)",
        "WITH w AS (SELECT 1 AS p, 2 AS p) SELECT * FROM w",
        "CREATE VIEW v AS SELECT a, b AS a FROM t",
        "SELECT * FROM v",
        "SELECT name FROM pragma_table_info('v')",
        "CREATE TABLE c AS SELECT a, a FROM t",
        "SELECT * FROM c",
        "SELECT * FROM t, (SELECT a FROM t) AS s",
    ]));
}

#[test]
fn unaliased_subqueries_join_using_and_naturally() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "SELECT * FROM (SELECT 1 AS x) NATURAL JOIN (SELECT 1 AS x)",
        "SELECT * FROM (SELECT 1 AS x) NATURAL JOIN (SELECT 1 AS x) \
         NATURAL JOIN (SELECT 1 AS x, 2 AS y)",
        "SELECT * FROM (SELECT 1 AS x) JOIN (SELECT 1 AS x) USING (x) \
         JOIN (SELECT 1 AS x, 2 AS y) USING (x)",
        "SELECT x, y FROM (SELECT 1 AS x) LEFT JOIN (SELECT 2 AS x, 3 AS y) USING (x)",
        "SELECT * FROM (SELECT 1 AS x) FULL JOIN (SELECT 2 AS x) USING (x) ORDER BY 1",
        "SELECT * FROM (SELECT 1 AS x) AS s NATURAL JOIN (SELECT 1 AS x)",
        "SELECT x FROM (SELECT 1 AS x), (SELECT 2 AS x)",
        "SELECT * FROM (SELECT 1 AS x), (SELECT 2 AS x) WHERE x = 1",
    ]));
}

#[test]
fn subquery_and_cte_columns_are_named_as_written() {
    // SQLite names a FROM subquery's and a CTE's columns before names resolve
    // (sqlite3ColumnsFromExprList); a view's after.
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(a, b)",
        "INSERT INTO t VALUES (1, 2)",
        "CREATE TABLE ip(id INTEGER PRIMARY KEY, v)",
        "INSERT INTO ip VALUES (7, 's')",
        "SELECT * FROM (SELECT A FROM t)",
        "SELECT * FROM (SELECT T.A, t.B FROM t)",
        "SELECT * FROM (SELECT main.t.A FROM t)",
        "SELECT * FROM (SELECT A COLLATE nocase, (b), +a FROM t)",
        "SELECT * FROM (SELECT rowid, oid FROM t)",
        "SELECT * FROM (SELECT rowid, * FROM ip)",
        "SELECT * FROM (SELECT ID, _ROWID_ FROM ip)",
        "SELECT * FROM (SELECT \"a\", \"A\", \"b\" FROM t)",
        "SELECT * FROM (SELECT A FROM t UNION SELECT b FROM t)",
        "SELECT * FROM (SELECT true, false, 1 AS true FROM t)",
        "SELECT x.* FROM (SELECT A FROM t) x",
        "SELECT A FROM (SELECT A FROM t)",
        "WITH c AS (SELECT A, ROWID FROM t) SELECT * FROM c",
        "WITH RECURSIVE r AS (SELECT A FROM t UNION ALL SELECT a + 1 FROM r WHERE a < 3) \
         SELECT * FROM r",
        "CREATE VIEW v AS SELECT A, ROWID, ip.rowid, oid FROM t, ip",
        "SELECT * FROM v",
        "CREATE TABLE c AS SELECT A, rowid FROM t",
        "SELECT * FROM c",
    ]));
}
