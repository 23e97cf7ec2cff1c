//! Where SQLite's plan needs a temp b-tree, against SQLite (rusqlite, bundled 3.50.2): the
//! EXPLAIN QUERY PLAN detail of every row and the rows.
//! - `USE TEMP B-TREE FOR GROUP BY` unless the outer loop brings the groups together (its
//!   index or rowid order, in any order of the GROUP BY terms); a GROUP BY no loop
//!   groups walks a (covering first) index or the table in rowid order that does.
//! - `USE TEMP B-TREE FOR DISTINCT` unless the rowid is among the results of a one-table
//!   query or the loop brings equal results together; after a GROUP BY, always.
//! - `USE TEMP B-TREE FOR <agg>(DISTINCT)`, before the loops (after them when grouped),
//!   except for a lone DISTINCT aggregate whose argument the loop walks in order.
//! - `USE TEMP B-TREE FOR ORDER BY` / `LAST TERM OF ORDER BY` / `LAST n TERMS OF ORDER
//!   BY` by how many leading ORDER BY terms the loop yields; none for an ORDER BY that is the
//!   GROUP BY (or a DISTINCT's result columns) the groups already come out in.

mod common;

use common::compare_plans_and_rows as compare;

const SETUP: &str = "
    CREATE TABLE t(a INTEGER PRIMARY KEY, b INT, c TEXT, d);
    CREATE INDEX tb ON t(b);
    CREATE INDEX tcd ON t(c, d);
    CREATE TABLE u(x INT, y TEXT);
    CREATE INDEX ux ON u(x);
    CREATE TABLE w(k TEXT PRIMARY KEY, v INT) WITHOUT ROWID;
    INSERT INTO t VALUES(1, 5, 'x', 3), (2, 5, 'y', 3), (3, 7, 'x', 1), (4, NULL, NULL, NULL),
                        (5, 2, 'x', 2), (6, 9, 'Y', 1), (7, 7, '7', 7), (8, 2, 'x', 'q');
    INSERT INTO u VALUES(5, 'a'), (7, 'b'), (2, 'c'), (5, 'd'), (NULL, 'x'), (3, '7');
    INSERT INTO w VALUES('b', 1), ('a', 2), ('c', 1);
";

fn check(queries: &[&str]) {
    let failures = compare(SETUP, queries);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn group_by() {
    check(&[
        "SELECT b, count(*) FROM t GROUP BY b",
        "SELECT b, max(d) FROM t GROUP BY b",
        "SELECT d, count(*) FROM t GROUP BY d",
        "SELECT c, d, count(*) FROM t GROUP BY c, d",
        "SELECT d, c, count(*) FROM t GROUP BY d, c",
        "SELECT d, c, count(*) FROM t WHERE c > 'a' GROUP BY d, c",
        "SELECT a, d, count(*) FROM t GROUP BY d, a",
        "SELECT c, count(*) FROM t GROUP BY c",
        "SELECT c, max(b) FROM t GROUP BY c",
        "SELECT a, count(*) FROM t GROUP BY a",
        "SELECT b, count(*) FROM t WHERE b > 5 GROUP BY b",
        "SELECT b, count(*) FROM t WHERE c = 'x' GROUP BY b",
        "SELECT d, count(*) FROM t WHERE c = 'x' GROUP BY d",
        "SELECT b + 1, count(*) FROM t GROUP BY b + 1",
        "SELECT b, count(*) FROM t GROUP BY b HAVING count(*) > 1",
        "SELECT b FROM t GROUP BY b LIMIT 2",
        "SELECT x, count(*) FROM u GROUP BY x",
        "SELECT y, count(*) FROM u GROUP BY y",
        "SELECT b, count(*) FROM t, u WHERE t.b = u.x GROUP BY b",
        "SELECT t.d, count(*) FROM t, u WHERE t.b = u.x GROUP BY t.d",
        "SELECT k, sum(v) FROM w GROUP BY k",
        "SELECT v, count(*) FROM w GROUP BY v",
        "SELECT * FROM (SELECT d, count(*) FROM t GROUP BY d)",
    ]);
}

#[test]
fn group_by_then_order_by() {
    check(&[
        "SELECT b, count(*) FROM t GROUP BY b ORDER BY b",
        "SELECT b, count(*) FROM t GROUP BY b ORDER BY b DESC",
        "SELECT b, count(*) FROM t GROUP BY b ORDER BY 2",
        "SELECT b, count(*) FROM t GROUP BY b ORDER BY count(*), b",
        "SELECT d, count(*) FROM t GROUP BY d ORDER BY d",
        "SELECT d, count(*) FROM t GROUP BY d ORDER BY d DESC",
        "SELECT d, count(*) FROM t GROUP BY d ORDER BY count(*)",
        "SELECT d, count(*) FROM t GROUP BY d ORDER BY d, count(*)",
        "SELECT d, count(*) FROM t GROUP BY d ORDER BY d COLLATE NOCASE",
        "SELECT d, count(*) FROM t GROUP BY d ORDER BY d LIMIT 2",
        "SELECT c, count(*) FROM t GROUP BY c ORDER BY c NULLS LAST",
        "SELECT d, c, count(*) FROM t GROUP BY d, c ORDER BY c, d",
        "SELECT d, c, count(*) FROM t GROUP BY d, c ORDER BY d, c",
        "SELECT c, d, count(*) FROM t GROUP BY c, d ORDER BY c, d",
        "SELECT d, b, count(*) FROM t GROUP BY d, b ORDER BY b, d",
        "SELECT d, b, count(*) FROM t GROUP BY d, b ORDER BY d, b",
        "SELECT b, count(*) FROM t WHERE c = 'x' GROUP BY b ORDER BY b",
        "SELECT v, count(*) FROM w GROUP BY v ORDER BY v",
    ]);
}

#[test]
fn distinct() {
    check(&[
        "SELECT DISTINCT b FROM t",
        "SELECT DISTINCT d FROM t",
        "SELECT DISTINCT c, d FROM t",
        "SELECT DISTINCT d, c FROM t",
        "SELECT DISTINCT a FROM t",
        "SELECT DISTINCT a, d FROM t",
        "SELECT DISTINCT d FROM t ORDER BY d",
        "SELECT DISTINCT d FROM t ORDER BY d DESC",
        "SELECT DISTINCT b FROM t ORDER BY b DESC",
        "SELECT DISTINCT c FROM t ORDER BY 1",
        "SELECT DISTINCT t.d FROM t, u WHERE t.b = u.x",
        "SELECT DISTINCT t.b FROM t, u WHERE t.b = u.x",
        "SELECT DISTINCT b, count(*) FROM t GROUP BY b",
        "SELECT DISTINCT b FROM t GROUP BY b",
        "SELECT DISTINCT d, count(*) FROM t GROUP BY d ORDER BY d",
        "SELECT DISTINCT count(*) FROM t",
        "SELECT DISTINCT k FROM w",
    ]);
}

#[test]
fn distinct_aggregates() {
    check(&[
        "SELECT count(DISTINCT d) FROM t",
        "SELECT count(DISTINCT b) FROM t",
        "SELECT count(DISTINCT d), sum(DISTINCT b) FROM t",
        "SELECT b, count(DISTINCT d) FROM t GROUP BY b",
        "SELECT count(DISTINCT d) FROM t WHERE b = 5",
    ]);
}

#[test]
fn order_by_parts() {
    check(&[
        "SELECT * FROM t WHERE c = 'x' ORDER BY d, b",
        "SELECT * FROM t WHERE c = 'x' ORDER BY d, b, a",
        "SELECT * FROM t WHERE c = 'x' ORDER BY d DESC, b",
        "SELECT * FROM t WHERE b > 3 ORDER BY b, c",
        "SELECT * FROM t WHERE b > 3 ORDER BY b, a",
        "SELECT * FROM t WHERE b > 3 ORDER BY b, a, c",
        "SELECT * FROM t WHERE b = 5 ORDER BY c",
        "SELECT * FROM t ORDER BY d",
        "SELECT c, d FROM t ORDER BY c, d",
        "SELECT * FROM t, u WHERE t.b = u.x ORDER BY u.y",
        "SELECT * FROM t WHERE c = 'x' ORDER BY d, b, a, c",
        "SELECT * FROM t WHERE c = 'x' ORDER BY c, d, b",
    ]);
}
