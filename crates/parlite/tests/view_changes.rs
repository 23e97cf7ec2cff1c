//! Differential test against SQLite (rusqlite, bundled): writes to a view that INSTEAD OF
//! triggers intercept change no rows of their own, so `changes()` after them is 0 and
//! `total_changes()` grows only by the rows the triggers' statements write (sqlite3_changes:
//! "changes to a view that are intercepted by INSTEAD OF triggers are not counted"). Covers
//! INSERT ... VALUES / SELECT, UPDATE and DELETE on views, a view written from another
//! table's trigger, and a trigger body that writes nothing.

mod common;

use common::{check_script, Compare};

#[test]
fn instead_of_writes_count_only_the_triggers_rows() {
    let script = "\
CREATE TABLE t(a INTEGER PRIMARY KEY, b);
CREATE TABLE log(x);
CREATE VIEW v AS SELECT a, b FROM t;
CREATE TRIGGER vi INSTEAD OF INSERT ON v BEGIN INSERT INTO t VALUES(new.a, new.b); INSERT INTO log VALUES('i'); END;
CREATE TRIGGER vu INSTEAD OF UPDATE ON v BEGIN UPDATE t SET b = new.b WHERE a = old.a; END;
CREATE TRIGGER vd INSTEAD OF DELETE ON v BEGIN DELETE FROM t WHERE a = old.a; END;
INSERT INTO v VALUES(1, 'one');
SELECT changes(), total_changes();
INSERT INTO v SELECT 2, 'two' UNION ALL SELECT 3, 'three' UNION ALL SELECT 4, 'four';
SELECT changes(), total_changes();
UPDATE v SET b = upper(b) WHERE a > 1;
SELECT changes(), total_changes();
DELETE FROM v WHERE a IN (2, 4);
SELECT changes(), total_changes();
INSERT INTO t VALUES(10, 'ten');
SELECT changes(), total_changes();
CREATE VIEW quiet AS SELECT a FROM t;
CREATE TRIGGER qi INSTEAD OF INSERT ON quiet BEGIN SELECT 1; END;
INSERT INTO quiet VALUES(5);
SELECT changes(), total_changes();
CREATE TABLE src(a, b);
CREATE TRIGGER si AFTER INSERT ON src BEGIN INSERT INTO v VALUES(new.a, new.b); END;
INSERT INTO src VALUES(20, 'twenty'), (21, 'twenty-one');
SELECT changes(), total_changes();
SELECT * FROM t ORDER BY a;
SELECT count(*) FROM log;
";
    check_script(script, Compare::default());
}

/// UPDATE and DELETE on a view read its rows under the view's own name, whatever alias the
/// statement gives it (SQLite materializes the view as a subquery named after it), and
/// SQLite resolves the WHERE again against the aliased item: with an alias, neither `v.a`
/// nor `q.a` may stand in the WHERE; the SET expressions see the alias.
#[test]
fn a_views_alias_in_update_and_delete() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(a)",
        "INSERT INTO t VALUES (1), (2)",
        "CREATE VIEW v AS SELECT a FROM t",
        "CREATE TRIGGER tu INSTEAD OF UPDATE ON v BEGIN UPDATE t SET a = new.a WHERE a = old.a; END",
        "CREATE TRIGGER td INSTEAD OF DELETE ON v BEGIN DELETE FROM t WHERE a = old.a; END",
        "UPDATE v AS q SET a = 5 WHERE q.a = 1",
        "UPDATE v AS q SET a = q.a + 10 WHERE v.a = 1",
        "UPDATE v AS q SET a = a + 100 WHERE a = 2",
        "DELETE FROM v AS q WHERE q.a = 11",
        "DELETE FROM v AS q WHERE v.a = 11",
        "SELECT a FROM t ORDER BY a",
    ]));
}
