//! Unary plus (`+x`) as SQLite types it: the operand's collation stays (sqlite3ExprCollSeq
//! looks through it), its affinity does not (sqlite3ExprAffinity stops at it), so `+col`
//! compares as an expression would (datatype3.html 4.2). Compared with SQLite.

mod common;

#[test]
fn unary_plus_keeps_collation_not_affinity() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(a INTEGER, b TEXT COLLATE NOCASE, c REAL, d TEXT)",
        "INSERT INTO t VALUES (1, 'x', 2, '3'), (2, 'Y', 2.5, 'z')",
        "SELECT +a = '1', a = '1', +b = 'X', b = 'X', (+a) = '1', +a IN ('1'), +c = '2', \
         +d = 3, d = 3, -(-a) = '1' FROM t ORDER BY a",
        "SELECT a FROM t WHERE +a = '2'",
        "SELECT a FROM t WHERE +b = 'y'",
        "SELECT a, +a IN (SELECT '1'), a IN (SELECT '1') FROM t ORDER BY a",
        "CREATE VIEW v AS SELECT +a AS pa, a FROM t",
        "SELECT pa = '1', a = '1' FROM v ORDER BY a",
        "SELECT a FROM t ORDER BY +b DESC",
    ]));
}
