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

/// An ON CONFLICT target names a partial UNIQUE index when its WHERE is that index's WHERE
/// (letter case of names aside), as SQLite's sqlite3UpsertAnalyzeTarget; a full index
/// matches whatever WHERE the target has.
#[test]
fn conflict_targets_on_partial_indexes() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(a, b, live)",
        "CREATE UNIQUE INDEX ia ON t(a) WHERE live = 1",
        "INSERT INTO t VALUES (1, 'x', 1), (1, 'old', 0)",
        "INSERT INTO t VALUES (1, 'y', 1) ON CONFLICT(a) WHERE live = 1 DO UPDATE SET b = excluded.b",
        "INSERT INTO t VALUES (1, 'z', 1) ON CONFLICT(a) WHERE LIVE=1 DO UPDATE SET b = b || excluded.b",
        "INSERT INTO t VALUES (1, 'w', 0) ON CONFLICT(a) WHERE live = 1 DO NOTHING",
        "INSERT INTO t VALUES (1, 'v', 1) ON CONFLICT(a) DO UPDATE SET b = 'none'",
        "INSERT INTO t VALUES (1, 'v', 1) ON CONFLICT(a) WHERE live = 2 DO UPDATE SET b = 'two'",
        "INSERT INTO t VALUES (1, 'v', 1) ON CONFLICT(a) WHERE live > 0 DO NOTHING",
        "CREATE TABLE s(a, b)",
        "CREATE UNIQUE INDEX isa ON s(a) WHERE b = 'X'",
        "INSERT INTO s VALUES (1, 'X')",
        "INSERT INTO s VALUES (1, 'X') ON CONFLICT(a) WHERE b = 'x' DO NOTHING",
        "INSERT INTO s VALUES (1, 'X') ON CONFLICT(a) WHERE b = 'X' DO UPDATE SET b = 'X2'",
        "CREATE TABLE f(a UNIQUE, b)",
        "INSERT INTO f VALUES (1, 2)",
        "INSERT INTO f VALUES (1, 3) ON CONFLICT(a) WHERE b > 100 DO UPDATE SET b = 9",
        "SELECT * FROM t ORDER BY rowid",
        "SELECT * FROM s ORDER BY rowid",
        "SELECT * FROM f ORDER BY rowid",
        "INSERT INTO main.nosuch VALUES (1)",
        "UPDATE temp.t SET a = 1",
        "DELETE FROM main.nosuch",
    ]));
}
