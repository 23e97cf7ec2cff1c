//! The order the planner tries a table's indexes in (`covering::sqlite_index_order`: newest
//! first, indexes whose conflict action is REPLACE last) decides ties in cost, and a source's
//! name may be an alias or a mixed-case table name: EXPLAIN QUERY PLAN and the rows must be
//! SQLite's (rusqlite, bundled, as the oracle).

mod common;

use common::compare_plans_and_rows as compare;

fn assert_none(failures: Vec<String>) {
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

const SETUP: &str = "
CREATE TABLE r(a, b, c, UNIQUE(a) ON CONFLICT REPLACE, UNIQUE(b));
CREATE INDEX ra ON r(a);
CREATE INDEX rb ON r(b);
CREATE INDEX ra2 ON r(a);
CREATE TABLE q(a, b, c, d, UNIQUE(a, c), UNIQUE(a, b) ON CONFLICT REPLACE);
CREATE TABLE Mixed(Id INTEGER PRIMARY KEY, Name TEXT UNIQUE, v);
CREATE TABLE wr(k TEXT PRIMARY KEY, v) WITHOUT ROWID;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 60)
  INSERT INTO r SELECT i, i * 2, i % 7 FROM n;
INSERT INTO q SELECT a % 20, b, c, a FROM r;
INSERT INTO Mixed(Name, v) SELECT 'n' || a, c FROM r;
INSERT INTO wr SELECT 'k' || a, b FROM r;
";

/// Equal-cost indexes on the same column: SQLite takes the newest non-REPLACE one.
#[test]
fn ties_between_indexes_go_to_sqlites_order() {
    let queries = [
        "SELECT c FROM r WHERE a = 5",
        "SELECT c FROM r WHERE a > 50",
        "SELECT c FROM r WHERE b = 10",
        "SELECT a FROM r WHERE a = 7",
        "SELECT count(*) FROM r",
        "SELECT c FROM r WHERE a = 5 AND b = 10",
        // The REPLACE index is newer but goes last: SQLite searches sqlite_autoindex_q_1.
        "SELECT * FROM q WHERE a > 15",
        "SELECT d FROM q WHERE a = 3",
    ];
    assert_none(compare(SETUP, &queries));
}

/// Sources named by alias, by a mixed-case table name, and without a rowid: the rows must
/// be SQLite's. (Plans are not compared here: parlite's EXPLAIN QUERY PLAN names the table,
/// where SQLite names the alias or the name as written in FROM — a difference on main.)
#[test]
fn aliased_and_mixed_case_sources_bind_as_in_sqlite() {
    let queries = [
        "SELECT v FROM Mixed WHERE Name = 'n5'",
        "SELECT MIXED.v FROM mixed WHERE mixed.name = 'n5'",
        "SELECT M.v, m.Id FROM Mixed AS M WHERE M.Name > 'n50' ORDER BY m.Id",
        "SELECT x.c, y.v FROM r AS x JOIN Mixed y ON y.Id = x.a WHERE x.a < 4 ORDER BY x.a",
        "SELECT v FROM wr WHERE k = 'k9'",
        "SELECT W.v FROM wr AS W WHERE W.k BETWEEN 'k1' AND 'k2' ORDER BY W.k",
        "SELECT rowid, Mixed.rowid FROM Mixed WHERE Id = 3",
        "SELECT nosuch.v FROM Mixed AS M",
    ];
    let s = rusqlite::Connection::open_in_memory().expect("sqlite");
    let p = parlite::Connection::open(":memory:").expect("parlite");
    s.execute_batch(SETUP).expect("sqlite setup");
    p.execute_batch(SETUP).expect("parlite setup");
    let mut failures = Vec::new();
    for q in queries {
        let (so, po) = (common::run_sqlite(&s, q), common::run_parlite(&p, q));
        if so != po {
            failures.push(format!("{q}\n  sqlite:  {so:?}\n  parlite: {po:?}"));
        }
    }
    assert_none(failures);
}
