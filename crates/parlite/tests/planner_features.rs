//! Planner choices SQLite makes without statistics, against SQLite (rusqlite, bundled) as the
//! oracle: the plan's wording (`detail` of EXPLAIN QUERY PLAN) and the rows must both match.
//! - min()/max() through an index or the rowid (`SELECT max(a) FROM t`: one seek, worded
//!   `SEARCH t USING COVERING INDEX i`; every loop of a min/max query is a `SEARCH`), and the
//!   bare columns of such a query come from the row the seek finds;
//! - ORDER BY satisfied by a non-covering index instead of a sort (`SCAN t USING INDEX i`),
//!   ascending and descending, with LIMIT/OFFSET stopping the walk early.

mod common;

use common::compare_plans_and_rows as compare;

const SETUP: &str = "
    CREATE TABLE t(a, b, c, d NOT NULL, e TEXT COLLATE NOCASE);
    CREATE INDEX ta ON t(a);
    CREATE INDEX td ON t(d);
    CREATE INDEX tbc ON t(b, c);
    CREATE INDEX te ON t(e);
    INSERT INTO t VALUES(1, 5, 1, 1, 'x'), (2, 9, 1, 2, 'Y'), (NULL, 2, 1, 3, 'y'),
                        (2, 3, 3, 3, 'X'), (NULL, NULL, 4, 0, NULL), (-1, 9, 0, 7, 'b');
    CREATE TABLE plain(x, y);
    INSERT INTO plain VALUES(3, 'a'), (1, 'b'), (NULL, 'c'), (1, 'd');
";

#[test]
fn min_max_seek_an_index() {
    let failures = compare(
        SETUP,
        &[
            "SELECT max(a) FROM t",
            "SELECT min(a) FROM t",
            "SELECT max(rowid) FROM t",
            "SELECT min(rowid) FROM t",
            "SELECT max(d) FROM t",
            "SELECT min(d) FROM t",
            "SELECT max(b) FROM t",
            "SELECT min(b) FROM t",
            "SELECT max(c) FROM t",
            "SELECT max(c) FROM t WHERE b > 1",
            "SELECT max(c) FROM t WHERE b = 9",
            "SELECT max(a) FROM t WHERE a < 2",
            "SELECT min(a) FROM t WHERE a > -5",
            "SELECT max(a) FROM t WHERE c = 1",
            "SELECT min(a) FROM t WHERE c = 4",
            "SELECT max(a) + 1 FROM t",
            "SELECT max(a), max(a) FROM t",
            "SELECT max(a), count(*) FROM t",
            "SELECT max(a) FILTER (WHERE c > 0) FROM t",
            "SELECT max(a + 1) FROM t",
            "SELECT max(a) FROM t NOT INDEXED",
            "SELECT max(DISTINCT a) FROM t",
            "SELECT max(e) FROM t",
            "SELECT min(e) FROM t",
            "SELECT c, max(a) FROM t",
            "SELECT c, min(a) FROM t",
            "SELECT c, rowid, min(a) FROM t WHERE a >= 2",
            "SELECT b, c, max(d) FROM t",
            "SELECT max(x) FROM plain",
            "SELECT y, min(x) FROM plain",
            "SELECT max(a) FROM t WHERE 0",
        ],
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn order_by_walks_a_non_covering_index() {
    let failures = compare(
        SETUP,
        &[
            "SELECT * FROM t ORDER BY a",
            "SELECT * FROM t ORDER BY a DESC",
            "SELECT * FROM t ORDER BY a LIMIT 2",
            "SELECT * FROM t ORDER BY a DESC LIMIT 2 OFFSET 1",
            "SELECT * FROM t ORDER BY b, c",
            "SELECT * FROM t ORDER BY b DESC, c DESC",
            "SELECT c FROM t ORDER BY b",
            "SELECT * FROM t WHERE c = 1 ORDER BY a",
            "SELECT * FROM t WHERE c = 1 ORDER BY d DESC LIMIT 1",
            "SELECT * FROM t ORDER BY e",
            "SELECT * FROM t ORDER BY e COLLATE BINARY",
            "SELECT * FROM t NOT INDEXED ORDER BY a",
            "SELECT * FROM t INDEXED BY td ORDER BY d",
            "SELECT * FROM plain ORDER BY x",
        ],
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `INDEXED BY` a partial index the WHERE clause does not imply: "no query solution", as
/// SQLite says; a usable partial index, any other index (walked whole), a rowid lookup and
/// `count(*)` are fine.
#[test]
fn indexed_by_an_unusable_partial_index_has_no_solution() {
    common::check_script(
        "CREATE TABLE t(a, b, c);
         CREATE INDEX ta ON t(a);
         CREATE INDEX tp ON t(b) WHERE b > 0;
         CREATE INDEX te ON t(a + b);
         INSERT INTO t VALUES(1, 2, 3), (4, -5, 6);
         SELECT * FROM t INDEXED BY ta WHERE b = 2;
         SELECT * FROM t INDEXED BY tp WHERE c = 3;
         SELECT * FROM t INDEXED BY tp;
         SELECT * FROM t INDEXED BY tp WHERE b > 0;
         SELECT * FROM t INDEXED BY tp WHERE b > 0 AND c = 3;
         SELECT * FROM t INDEXED BY tp WHERE b > 0 OR c = 6;
         SELECT * FROM t INDEXED BY tp WHERE b > 0 AND rowid = 1;
         SELECT * FROM t INDEXED BY te WHERE a = 1;
         SELECT * FROM t INDEXED BY te;
         SELECT count(*) FROM t INDEXED BY tp;
         SELECT * FROM t, t AS u INDEXED BY tp WHERE u.a = t.a;
         SELECT * FROM t INDEXED BY nosuch;
         DELETE FROM t INDEXED BY tp WHERE c = 5;
         UPDATE t INDEXED BY tp SET c = 1 WHERE c = 5;
         DELETE FROM t INDEXED BY nosuch WHERE c = 5;
         DELETE FROM t INDEXED BY tp;
         UPDATE t INDEXED BY tp SET c = 9 WHERE b > 0;
         DELETE FROM t INDEXED BY ta WHERE a = 4;
         SELECT * FROM t;",
        common::Compare::default(),
    );
}
