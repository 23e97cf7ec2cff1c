//! An upsert's DO UPDATE is an UPDATE of the existing row, against SQLite: its BEFORE and
//! AFTER UPDATE triggers fire (UPDATE OF the assigned columns; RAISE(IGNORE) skips the
//! row), and its foreign keys are checked and acted on as an UPDATE's.

mod common;

#[test]
fn do_update_fires_update_triggers() {
    for table in [
        "CREATE TABLE t(a UNIQUE, b, c)",
        "CREATE TABLE t(a INTEGER PRIMARY KEY, b, c)",
        "CREATE TABLE t(a PRIMARY KEY, b, c)",
        "CREATE TABLE t(a PRIMARY KEY, b, c) WITHOUT ROWID",
    ] {
        common::assert_no_mismatches(common::statement_mismatches(&[
            table,
            "CREATE TABLE log(x)",
            "CREATE TRIGGER au AFTER UPDATE ON t BEGIN \
             INSERT INTO log VALUES ('au ' || old.b || '>' || new.b); END",
            "CREATE TRIGGER bu BEFORE UPDATE ON t BEGIN \
             INSERT INTO log VALUES ('bu ' || old.b || '>' || new.b); \
             SELECT RAISE(IGNORE) WHERE new.b = 'skip'; END",
            "CREATE TRIGGER uc AFTER UPDATE OF c ON t BEGIN INSERT INTO log VALUES ('c'); END",
            "CREATE TRIGGER ai AFTER INSERT ON t BEGIN INSERT INTO log VALUES ('ai ' || new.b); END",
            "CREATE TRIGGER bi BEFORE INSERT ON t BEGIN INSERT INTO log VALUES ('bi ' || new.b); END",
            "INSERT INTO t VALUES (1, 'a', 0), (1, 'b', 0), (2, 'c', 0) \
             ON CONFLICT(a) DO UPDATE SET b = b || excluded.b",
            "INSERT INTO t VALUES (1, 'x', 0) ON CONFLICT DO UPDATE SET b = 'skip' RETURNING *",
            "SELECT changes()",
            "INSERT INTO t VALUES (2, 'y', 0) ON CONFLICT(a) DO UPDATE SET c = 5 RETURNING a, b, c",
            "INSERT INTO t VALUES (2, 'y', 0) ON CONFLICT(a) DO UPDATE SET b = 'w' WHERE b = 'no'",
            "SELECT * FROM log ORDER BY rowid",
            "SELECT * FROM t ORDER BY a",
        ]));
    }
}

#[test]
fn do_update_checks_and_acts_on_foreign_keys() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "PRAGMA foreign_keys = 1",
        "CREATE TABLE p(id PRIMARY KEY, v)",
        "CREATE TABLE c(k UNIQUE, x REFERENCES p(id) ON UPDATE CASCADE)",
        "INSERT INTO p VALUES (1, 'a'), (2, 'b')",
        "INSERT INTO c VALUES (1, 1)",
        "INSERT INTO c VALUES (1, 1) ON CONFLICT(k) DO UPDATE SET x = 99",
        "SELECT * FROM c",
        "INSERT INTO c VALUES (1, 1) ON CONFLICT(k) DO UPDATE SET x = 2",
        "SELECT * FROM c",
        "INSERT INTO p VALUES (2, 'z') ON CONFLICT(id) DO UPDATE SET id = 3",
        "SELECT * FROM c",
        "SELECT * FROM p ORDER BY id",
        "CREATE TABLE d(y REFERENCES p(id))",
        "INSERT INTO d VALUES (1)",
        "INSERT INTO p VALUES (1, 'q') ON CONFLICT(id) DO UPDATE SET id = 9",
        "SELECT * FROM p ORDER BY id",
    ]));
}
