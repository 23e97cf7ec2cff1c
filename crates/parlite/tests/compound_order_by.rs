//! A compound SELECT's ORDER BY terms resolved as SQLite's resolveCompoundOrderBy: a
//! number, else the first arm's names and expressions, else each later arm's aliases and
//! expressions, left to right. Compared with SQLite: rows in order and errors.

mod common;

#[test]
fn compound_order_by_terms_match_sqlite() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(a, b)",
        "CREATE TABLE u(c, d)",
        "INSERT INTO t VALUES (1, 2), (5, 6)",
        "INSERT INTO u VALUES (3, 4), (0, 9)",
        "SELECT 1 AS a UNION SELECT 2 AS b ORDER BY b",
        "SELECT 1 AS a, 2 AS b UNION SELECT 3 AS b, 4 AS a ORDER BY a",
        "SELECT a, b FROM t UNION SELECT c, d FROM u ORDER BY d DESC",
        "SELECT a FROM t UNION ALL SELECT c FROM u ORDER BY c",
        "SELECT a FROM t UNION SELECT c FROM u ORDER BY d",
        "SELECT 1 AS a UNION SELECT 2 AS b UNION SELECT 3 AS c ORDER BY c DESC",
        "SELECT 1 AS a UNION SELECT 2 AS b ORDER BY b + 1",
        "SELECT 'x' AS x UNION SELECT 'Y' AS y ORDER BY y COLLATE NOCASE",
        "SELECT a, b FROM t EXCEPT SELECT c, d FROM u ORDER BY c, 2",
        "SELECT a FROM t INTERSECT SELECT c AS a FROM u ORDER BY a",
    ]));
}
