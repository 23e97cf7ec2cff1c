//! Differential tests of the index walks that decode each row straight into the join row
//! (`Store::index_lookup_scan`) and of the cursors a statement keeps for reuse (the
//! `TxnStore` cursor pool): the same SQL through parlite and SQLite (rusqlite, bundled).

mod common;
use common::*;

fn check(script: &str) {
    check_script(script, Compare::default());
}

const SETUP: &str = "
CREATE TABLE p(id INTEGER PRIMARY KEY, k TEXT COLLATE NOCASE, r REAL, n INTEGER, t TEXT);
INSERT INTO p VALUES(1,'a',1,10,'one'),(2,'B',2.5,20,'two'),(3,'c',NULL,30,'three'),
  (4,'A',4,NULL,'four'),(5,'b',5.0,50,NULL),(6,NULL,6,60,'six'),(7,'d',-1,70,'seven');
CREATE INDEX pk ON p(k);
CREATE INDEX pn ON p(n DESC);
CREATE UNIQUE INDEX pu ON p(t);
CREATE TABLE c(x INTEGER, pid INTEGER, tag TEXT);
INSERT INTO c VALUES(1,1,'x'),(2,2,'y'),(3,2,'z'),(4,9,'w'),(5,NULL,'v'),(6,5,'u'),(7,7,'t');
CREATE INDEX cpid ON c(pid);
";

/// Joins and single-table reads through an index: collations, DESC columns, UNIQUE
/// one-key walks, REAL columns stored as integers, NULL keys, ranges and their ends.
#[test]
fn index_walks_match_sqlite() {
    check(&format!(
        "{SETUP}
SELECT c.x, p.id, p.k, p.r, typeof(p.r), p.t FROM c, p WHERE p.id = c.pid ORDER BY c.x;
SELECT c.x, p.id, p.r FROM p, c WHERE c.pid = p.id ORDER BY 1, 2;
SELECT id, k, r FROM p WHERE k = 'a' ORDER BY id;
SELECT id, k FROM p WHERE k BETWEEN 'a' AND 'b' ORDER BY id;
SELECT id, n FROM p WHERE n > 20 ORDER BY n DESC;
SELECT id, n FROM p WHERE n BETWEEN 20 AND 60 ORDER BY id;
SELECT id, r, typeof(r) FROM p WHERE n < 60 ORDER BY id;
SELECT id, t FROM p WHERE t = 'two';
SELECT id, t FROM p WHERE t = 'nothing';
SELECT count(*), sum(r), group_concat(id) FROM p WHERE n BETWEEN 10 AND 50;
SELECT p.id, c.tag FROM p LEFT JOIN c ON c.pid = p.id ORDER BY 1, 2;
SELECT a.id, b.id FROM p AS a, p AS b WHERE b.k = a.k AND a.id < b.id ORDER BY 1, 2;
SELECT x, (SELECT t FROM p WHERE p.id = c.pid) FROM c ORDER BY x;
SELECT x, (SELECT count(*) FROM p WHERE p.k = c.tag) FROM c ORDER BY x;
SELECT id FROM p WHERE n > 10 ORDER BY n LIMIT 2;
SELECT id FROM p WHERE k IN ('a', 'c') ORDER BY id;
"
    ));
}

/// Columns added after rows were written read their defaults; an INTEGER PRIMARY KEY read
/// through an index is the rowid.
#[test]
fn short_records_and_rowid_alias() {
    check(
        "
CREATE TABLE s(id INTEGER PRIMARY KEY, v INTEGER);
INSERT INTO s VALUES(1,10),(2,20),(3,30);
CREATE INDEX sv ON s(v);
ALTER TABLE s ADD COLUMN w TEXT DEFAULT 'dflt';
ALTER TABLE s ADD COLUMN z REAL DEFAULT 2;
INSERT INTO s VALUES(4,40,'given',7);
SELECT id, v, w, z, typeof(z) FROM s WHERE v >= 20 ORDER BY v;
SELECT s1.id, s2.w FROM s AS s1 JOIN s AS s2 ON s2.v = s1.v + 10 ORDER BY 1;
",
    );
}

/// A statement that writes the tree its lookups read: the kept cursors re-seek after each
/// change instead of reusing stale pages.
#[test]
fn lookups_in_statements_that_write() {
    check(&format!(
        "{SETUP}
UPDATE c SET tag = (SELECT t FROM p WHERE p.id = c.pid) WHERE pid IS NOT NULL;
SELECT * FROM c ORDER BY x;
UPDATE p SET n = (SELECT count(*) FROM p AS q WHERE q.n < p.n) WHERE n IS NOT NULL;
SELECT id, n FROM p ORDER BY id;
INSERT INTO c SELECT x + 100, pid, tag FROM c WHERE pid IN (SELECT id FROM p WHERE n >= 0);
SELECT count(*), sum(x) FROM c;
DELETE FROM c WHERE pid IN (SELECT id FROM p WHERE k = 'b');
SELECT x, pid FROM c ORDER BY x;
INSERT INTO p(id, k, n) SELECT id + 10, k, n FROM p WHERE k = 'a';
SELECT id, k, n FROM p WHERE k = 'A' ORDER BY id;
BEGIN;
DELETE FROM p WHERE n = 0;
SELECT c.x, p.id FROM c JOIN p ON p.id = c.pid ORDER BY 1;
UPDATE p SET k = 'zz' WHERE k = 'a';
SELECT id FROM p WHERE k = 'ZZ' ORDER BY id;
COMMIT;
"
    ));
}

/// A concurrent transaction's reads through kept cursors are recorded like those through
/// new ones: a row read by a later lookup of a join, changed by another commit, aborts it.
#[test]
fn concurrent_reads_through_kept_cursors_are_validated() {
    use parlite::Database;
    let db = Database::open(":memory:").expect("open");
    let c1 = db.connect().expect("c1");
    let c2 = db.connect().expect("c2");
    c1.execute_batch(
        "CREATE TABLE p(id INTEGER PRIMARY KEY, k INTEGER, v INTEGER);
         CREATE INDEX pk ON p(k);
         CREATE TABLE c(pk INTEGER);
         CREATE TABLE log(x);
         INSERT INTO p VALUES(1,10,1),(2,20,2),(3,30,3),(4,40,4);
         INSERT INTO c VALUES(10),(20),(30),(40);",
    )
    .expect("setup");
    for c in [&c1, &c2] {
        c.execute_batch("PRAGMA isolation_level = serializable")
            .expect("isolation");
    }
    c2.execute_batch("BEGIN CONCURRENT").expect("begin");
    let (mut st, _) = c2
        .prepare("SELECT sum(p.v) FROM c JOIN p ON p.k = c.pk")
        .expect("prepare")
        .expect("a statement");
    assert!(st.step().expect("step"));
    assert_eq!(st.column(0), parlite::Value::Integer(10));
    drop(st);
    c2.execute_batch("INSERT INTO log VALUES(1)")
        .expect("write");
    c1.execute_batch("UPDATE p SET v = 100 WHERE id = 3")
        .expect("update");
    let e = c2
        .execute_batch("COMMIT")
        .expect_err("read row changed: must abort");
    assert_eq!(e.extended_code, 517, "{e}");
}
