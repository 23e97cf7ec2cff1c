//! DROP TABLE / DROP VIEW against SQLite: a view's INSTEAD OF triggers go with it, and a
//! main table's or view's TEMP triggers (not those on a TEMP table of its name); `main.t`
//! and `temp.t` name that database's table (one a TEMP table hides too); the schema tables'
//! message; and with foreign keys on, dropping a parent table first deletes its rows as a
//! DELETE without triggers (sqlite3FkDropTable): the children's ON DELETE actions run, and
//! a child row left without its parent fails the DROP (at COMMIT for a deferred key).

mod common;

#[test]
fn drop_view_and_qualified_tables() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "PRAGMA foreign_keys = OFF",
        "CREATE TABLE t(b)",
        "CREATE VIEW v AS SELECT b FROM t",
        "CREATE TRIGGER vi INSTEAD OF INSERT ON v BEGIN INSERT INTO t VALUES (new.b); END",
        "CREATE TRIGGER tt AFTER INSERT ON t BEGIN SELECT 1; END",
        "DROP VIEW v",
        "SELECT type, name FROM sqlite_schema ORDER BY name",
        "DROP TABLE temp.t",
        "DROP TABLE IF EXISTS temp.t",
        "CREATE TEMP TABLE t(a)",
        "INSERT INTO t VALUES (1)",
        "DROP TABLE main.t",
        "SELECT * FROM t",
        "SELECT type, name FROM sqlite_schema ORDER BY name",
        "DROP TABLE main.t",
        "DROP TABLE temp.t",
        "SELECT name FROM sqlite_temp_schema",
        "DROP TABLE sqlite_schema",
        "DROP TABLE sqlite_temp_master",
    ]));
}

#[test]
fn dropping_a_parent_table_deletes_its_rows_first() {
    for (child, mode) in [
        ("CREATE TABLE c(x REFERENCES p(a))", "autocommit"),
        (
            "CREATE TABLE c(x REFERENCES p(a) ON DELETE CASCADE)",
            "autocommit",
        ),
        (
            "CREATE TABLE c(x REFERENCES p(a) ON DELETE SET NULL)",
            "autocommit",
        ),
        (
            "CREATE TABLE c(x REFERENCES p(a) ON DELETE RESTRICT)",
            "autocommit",
        ),
        (
            "CREATE TABLE c(x REFERENCES p(a) DEFERRABLE INITIALLY DEFERRED)",
            "txn",
        ),
        (
            "CREATE TABLE c(x REFERENCES p(a) DEFERRABLE INITIALLY DEFERRED)",
            "undone",
        ),
    ] {
        let mut stmts = vec![
            "PRAGMA foreign_keys = ON",
            "CREATE TABLE p(a PRIMARY KEY)",
            child,
            "CREATE TABLE log(x)",
            "CREATE TRIGGER pd AFTER DELETE ON p BEGIN INSERT INTO log VALUES (old.a); END",
            "INSERT INTO p VALUES (1), (2)",
            "INSERT INTO c VALUES (1), (NULL)",
        ];
        match mode {
            "txn" => stmts.extend(["BEGIN", "DROP TABLE p", "SELECT count(*) FROM c", "COMMIT"]),
            "undone" => stmts.extend(["BEGIN", "DROP TABLE p", "ROLLBACK", "SELECT * FROM p"]),
            _ => stmts.push("DROP TABLE p"),
        }
        stmts.extend([
            "SELECT name FROM sqlite_schema ORDER BY name",
            "SELECT * FROM c ORDER BY x",
            "SELECT * FROM log",
            "DROP TABLE c",
            "SELECT name FROM sqlite_schema ORDER BY name",
        ]);
        common::assert_no_mismatches(common::statement_mismatches(&stmts));
    }
}

#[test]
fn temp_triggers_on_a_dropped_main_table() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "PRAGMA foreign_keys = OFF",
        "CREATE TABLE log(x)",
        "CREATE TABLE t(a)",
        "CREATE TEMP TRIGGER tr AFTER INSERT ON t BEGIN INSERT INTO log VALUES (new.a); END",
        "CREATE TABLE u(a)",
        "CREATE TEMP TRIGGER tu AFTER INSERT ON main.u BEGIN INSERT INTO log VALUES (-new.a); END",
        "CREATE VIEW v AS SELECT 1 AS a",
        "CREATE TEMP TRIGGER tv INSTEAD OF INSERT ON v BEGIN INSERT INTO log VALUES (0); END",
        "DROP TABLE t",
        "DROP VIEW v",
        "SELECT name FROM sqlite_temp_schema ORDER BY name",
        "CREATE TABLE t(a)",
        "INSERT INTO t VALUES (1)",
        "INSERT INTO u VALUES (2)",
        "CREATE TEMP TABLE u(b)",
        "CREATE TEMP TRIGGER tt AFTER INSERT ON u BEGIN INSERT INTO log VALUES (100); END",
        "DROP TABLE main.u",
        "SELECT name FROM sqlite_temp_schema ORDER BY name",
        "INSERT INTO u VALUES (3)",
        "SELECT * FROM log ORDER BY x",
    ]));
}
