//! Trigger programs against SQLite: the narrower grammar of their statements (parse.y
//! `trigger_cmd`), the database that qualifies the tables they name, and RETURNING on a
//! view written through INSTEAD OF triggers; RETURNING's own name resolution; the order a
//! table's triggers fire in.

mod common;

#[test]
fn trigger_statements_take_sqlites_grammar() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(a)",
        "CREATE INDEX i ON t(a)",
        "CREATE TRIGGER r1 AFTER INSERT ON t BEGIN WITH c AS (SELECT 1) INSERT INTO t SELECT * FROM c; END",
        "CREATE TRIGGER r2 AFTER INSERT ON t BEGIN WITH c AS (SELECT 1) DELETE FROM t; END",
        "CREATE TRIGGER r3 AFTER INSERT ON t BEGIN DELETE FROM t INDEXED BY i WHERE a = 1; END",
        "CREATE TRIGGER r4 AFTER INSERT ON t BEGIN UPDATE t NOT INDEXED SET a = 1; END",
        "CREATE TRIGGER r5 AFTER INSERT ON t BEGIN UPDATE t AS x SET a = 1; END",
        "CREATE TRIGGER r6 AFTER INSERT ON t BEGIN DELETE FROM t AS x; END",
        "CREATE TRIGGER r7 AFTER INSERT ON t BEGIN INSERT INTO t AS x VALUES (1); END",
        "CREATE TRIGGER r8 AFTER INSERT ON t BEGIN DELETE FROM t ORDER BY a LIMIT 1; END",
        "CREATE TRIGGER r9 AFTER INSERT ON t BEGIN INSERT INTO t DEFAULT VALUES; END",
        "CREATE TRIGGER r10 AFTER INSERT ON t BEGIN INSERT INTO t VALUES (1) RETURNING *; END",
        "CREATE TRIGGER r11 AFTER INSERT ON t BEGIN UPDATE t SET a = 1 RETURNING a; END",
        "CREATE TRIGGER r12 AFTER INSERT ON t BEGIN DELETE FROM t RETURNING a; END",
        // What they do take.
        "CREATE TRIGGER ok1 AFTER INSERT ON t BEGIN WITH c AS (SELECT 1) SELECT * FROM c; \
         SELECT * FROM (WITH c AS (SELECT 2) SELECT * FROM c); \
         UPDATE t SET a = 1 FROM t AS u WHERE 0; END",
        "SELECT name FROM sqlite_schema WHERE type = 'trigger'",
        // Outside triggers an alias needs AS.
        "UPDATE t x SET a = 1",
        "DELETE FROM t x WHERE 1",
        "UPDATE t AS x SET a = x.a",
        "DELETE FROM t AS x WHERE x.a = 1 RETURNING *",
    ]));
}

#[test]
fn tables_a_trigger_names_are_its_databases() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(a)",
        "CREATE TEMP TABLE tt(a)",
        "CREATE TRIGGER r1 AFTER INSERT ON t BEGIN UPDATE nosuch SET x = 1; END",
        "INSERT INTO t VALUES (1)",
        "DROP TRIGGER r1",
        "CREATE TRIGGER r2 AFTER INSERT ON t BEGIN SELECT (SELECT x FROM nosuch); END",
        "INSERT INTO t VALUES (1)",
        "DROP TRIGGER r2",
        "CREATE TRIGGER r3 AFTER INSERT ON t WHEN (SELECT 1 FROM nosuch) BEGIN SELECT 1; END",
        "INSERT INTO t VALUES (1)",
        "DROP TRIGGER r3",
        "CREATE TRIGGER r4 AFTER INSERT ON t BEGIN INSERT INTO t2 SELECT * FROM nosuch; END",
        "INSERT INTO t VALUES (1)",
        "DROP TRIGGER r4",
        // TEMP triggers (declared, or on a TEMP table) name any database: unqualified.
        "CREATE TEMP TRIGGER r5 AFTER INSERT ON t BEGIN DELETE FROM nosuch; END",
        "INSERT INTO t VALUES (1)",
        "DROP TRIGGER r5",
        "CREATE TRIGGER r6 AFTER INSERT ON tt BEGIN DELETE FROM nosuch; END",
        "INSERT INTO tt VALUES (1)",
        "DROP TRIGGER r6",
        "ATTACH ':memory:' AS aux",
        "CREATE TABLE aux.u(a)",
        "CREATE TRIGGER aux.r7 AFTER INSERT ON u BEGIN DELETE FROM nosuch; END",
        "INSERT INTO aux.u VALUES (1)",
        "SELECT count(*) FROM t",
    ]));
}

#[test]
fn returning_on_a_view_with_instead_of_triggers() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(a, b)",
        "CREATE VIEW v AS SELECT a, b FROM t",
        "CREATE VIEW w(x, y) AS SELECT a, b FROM t",
        "CREATE TRIGGER vi INSTEAD OF INSERT ON v BEGIN INSERT INTO t VALUES (new.a * 2, new.b); END",
        "CREATE TRIGGER vu INSTEAD OF UPDATE ON v BEGIN UPDATE t SET b = new.b WHERE a = old.a; END",
        "CREATE TRIGGER vd INSTEAD OF DELETE ON v BEGIN DELETE FROM t WHERE a = old.a; END",
        "CREATE TRIGGER wi INSTEAD OF INSERT ON w BEGIN INSERT INTO t VALUES (new.x, new.y); END",
        "INSERT INTO v VALUES (5, 'p') RETURNING *, a + 1",
        "INSERT INTO v(b) VALUES ('q'), ('r') RETURNING b, a IS NULL",
        "INSERT INTO v SELECT 7, 's' RETURNING (SELECT count(*) FROM t)",
        "INSERT INTO w VALUES (8, 'z') RETURNING x, y, *",
        "UPDATE v SET b = b || '!' WHERE a > 5 RETURNING *",
        "UPDATE v AS q SET b = 'u' WHERE a = 10 RETURNING q.a, b",
        "UPDATE v AS q SET b = 'u' WHERE a = 10 RETURNING v.a, b",
        "UPDATE v SET b = 'u' RETURNING v.*",
        "DELETE FROM v WHERE a = 14 RETURNING a, b",
        "INSERT INTO v VALUES (1, 1) RETURNING nosuch",
        "UPDATE v SET b = 1 WHERE 0 RETURNING nosuch",
        "DELETE FROM v WHERE 0 RETURNING nosuch",
        "SELECT * FROM t ORDER BY rowid",
    ]));
}

#[test]
fn returning_names_the_table_not_its_alias() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(a, b)",
        "CREATE TABLE u(x)",
        "INSERT INTO t VALUES (1, 2)",
        "INSERT INTO u VALUES (1)",
        "UPDATE t AS q SET b = 3 RETURNING q.a",
        "UPDATE t AS q SET b = 3 RETURNING t.a, q.b",
        "UPDATE t AS q SET b = 4 WHERE q.a = 1 RETURNING t.a, rowid, typeof(b)",
        "DELETE FROM t AS q WHERE 0 RETURNING q.b",
        "INSERT INTO t AS q VALUES (5, 6) RETURNING q.b",
        "INSERT INTO t AS q VALUES (7, 8) RETURNING t.b",
        "UPDATE t AS q SET b = 3 RETURNING q.*",
        "UPDATE t SET b = 3 RETURNING t.*",
        "DELETE FROM t WHERE 0 RETURNING nosuch.*",
        "UPDATE t SET b = u.x FROM u WHERE u.x = t.a RETURNING u.x",
        "UPDATE t SET b = u.x FROM u WHERE u.x = t.a RETURNING b, (SELECT count(*) FROM u)",
        "INSERT INTO t AS q VALUES (1, 9) ON CONFLICT DO NOTHING RETURNING t.a, q.a",
        "SELECT * FROM t ORDER BY rowid",
    ]));
}

#[test]
fn a_tables_triggers_fire_newest_first_temp_ones_before() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(a, b, c)",
        "CREATE TABLE log(x)",
        "CREATE TRIGGER z1 AFTER INSERT ON t BEGIN INSERT INTO log VALUES ('z1'); END",
        "CREATE TRIGGER a1 AFTER INSERT ON t BEGIN INSERT INTO log VALUES ('a1'); END",
        "CREATE TEMP TRIGGER m1 AFTER INSERT ON t BEGIN INSERT INTO log VALUES ('m1'); END",
        "CREATE TRIGGER b1 BEFORE INSERT ON t BEGIN INSERT INTO log VALUES ('b1'); END",
        "CREATE TRIGGER b0 BEFORE INSERT ON t BEGIN INSERT INTO log VALUES ('b0'); END",
        "INSERT INTO t VALUES (1, 2, 3)",
        "DROP TRIGGER a1",
        "CREATE TRIGGER a1 AFTER INSERT ON t BEGIN INSERT INTO log VALUES ('a1 again'); END",
        "INSERT INTO t VALUES (4, 5, 6)",
        "CREATE TRIGGER au AFTER UPDATE ON t BEGIN INSERT INTO log VALUES ('au'); END",
        "CREATE TRIGGER uc AFTER UPDATE OF c ON t BEGIN INSERT INTO log VALUES ('uc'); END",
        "CREATE TRIGGER au2 AFTER UPDATE ON t BEGIN INSERT INTO log VALUES ('au2'); END",
        "UPDATE t SET c = 0 WHERE a = 1",
        "CREATE TRIGGER d2 AFTER DELETE ON t BEGIN INSERT INTO log VALUES ('d2'); END",
        "CREATE TRIGGER d1 AFTER DELETE ON t BEGIN INSERT INTO log VALUES ('d1'); END",
        "DELETE FROM t WHERE a = 4",
        "SELECT * FROM log ORDER BY rowid",
    ]));
}
