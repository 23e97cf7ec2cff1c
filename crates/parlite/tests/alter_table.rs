//! ALTER TABLE and CREATE TABLE AS against SQLite: the stored schema text, rows and errors.
//! RENAME TABLE rewrites other tables' REFERENCES clauses and refuses reserved names;
//! RENAME COLUMN of a parent key rewrites its children's REFERENCES column lists, and a
//! column renamed to its own name is no error; DROP COLUMN drops the column's own CHECK
//! and refuses one of another column or of the table that names it; ADD COLUMN refuses a
//! non-constant default, a NOT NULL column without a default or a STORED column only when
//! the table has rows; CREATE TABLE AS writes SQLite's text (a column per line once the
//! names are long, keywords quoted).

mod common;

#[test]
fn added_columns_match_sqlite() {
    // SQLite reports the rows of the check it runs for a non-constant default (a statement
    // of one column, `raise(...)`), so only success and the error are compared here, and
    // then the table.
    let s = rusqlite::Connection::open_in_memory().expect("sqlite");
    let p = parlite::Connection::open(":memory:").expect("parlite");
    let mut failures = Vec::new();
    for sql in [
        "CREATE TABLE e(a)",
        "ALTER TABLE e ADD COLUMN b DEFAULT (1 + 1)",
        "ALTER TABLE e ADD COLUMN c DEFAULT CURRENT_TIME",
        "ALTER TABLE e ADD COLUMN d NOT NULL",
        "ALTER TABLE e ADD COLUMN f AS (a * 2) STORED",
        "ALTER TABLE e ADD COLUMN g DEFAULT -5",
        "ALTER TABLE e ADD COLUMN h DEFAULT CAST('7' AS INTEGER)",
        "INSERT INTO e(a, d) VALUES (3, 4)",
        "ALTER TABLE e ADD COLUMN i DEFAULT (1 + 1)",
        "ALTER TABLE e ADD COLUMN j DEFAULT CURRENT_DATE",
        "ALTER TABLE e ADD COLUMN k NOT NULL",
        "ALTER TABLE e ADD COLUMN l AS (a * 3) STORED",
        "ALTER TABLE e ADD COLUMN m DEFAULT +'x'",
        "ALTER TABLE e ADD COLUMN n DEFAULT TRUE",
        "ALTER TABLE e ADD COLUMN o DEFAULT (abs(-1))",
        "ALTER TABLE e ADD COLUMN q DEFAULT -(-(2))",
    ] {
        let a = s.execute_batch(sql).map_err(common::msg);
        let b = p.execute_batch(sql).map_err(|e| e.message);
        if a != b {
            failures.push(format!("{sql}\n  sqlite:  {a:?}\n  parlite: {b:?}"));
        }
    }
    failures.extend(common::mismatches(
        &s,
        &p,
        &[
            "SELECT sql FROM sqlite_schema WHERE name = 'e'".to_string(),
            "SELECT a, b, typeof(c), d, f, g, h, m, n, q FROM e".to_string(),
        ],
    ));
    common::assert_no_mismatches(failures);
}

#[test]
fn alter_table_matches_sqlite() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE p(id PRIMARY KEY, k UNIQUE)",
        "CREATE TABLE c(x REFERENCES p(id), y REFERENCES p(k, id), z)",
        "CREATE TABLE c(x, y, FOREIGN KEY (x, y) REFERENCES p(id))",
        "CREATE TABLE c(x REFERENCES p(id), y REFERENCES \"p\"(k), z, w, \
         FOREIGN KEY (z) REFERENCES p, FOREIGN KEY (w, z) REFERENCES p(id, k))",
        "CREATE TABLE self(a PRIMARY KEY, b REFERENCES self(a))",
        "ALTER TABLE p RENAME COLUMN id TO pid",
        "SELECT name, sql FROM sqlite_schema ORDER BY name",
        "CREATE TABLE k(k PRIMARY KEY, pid REFERENCES p(pid), FOREIGN KEY (k) REFERENCES k(k))",
        "ALTER TABLE k RENAME COLUMN pid TO q",
        "ALTER TABLE k RENAME COLUMN k TO kk",
        "SELECT sql FROM sqlite_schema WHERE name = 'k'",
        "ALTER TABLE p RENAME TO p2",
        "ALTER TABLE self RENAME TO self2",
        "ALTER TABLE self2 RENAME COLUMN a TO a2",
        "SELECT name, sql FROM sqlite_schema ORDER BY name",
        "ALTER TABLE c RENAME TO sqlite_c",
        "ALTER TABLE sqlite_schema RENAME TO x",
        "ALTER TABLE c RENAME COLUMN x TO x",
        "ALTER TABLE c RENAME COLUMN x TO Y",
        "ALTER TABLE c RENAME COLUMN nope TO y2",
        "CREATE TABLE d(a, b CHECK (b > 0), c CHECK (c <> a), CHECK (a < 100))",
        "INSERT INTO d VALUES (1, 2, 3)",
        "ALTER TABLE d DROP COLUMN b",
        "ALTER TABLE d DROP COLUMN a",
        "ALTER TABLE d DROP COLUMN c",
        "SELECT sql FROM sqlite_schema WHERE name = 'd'",
        "SELECT * FROM d",
        "CREATE TABLE e(a INT, b TEXT, c)",
        "CREATE TABLE s AS SELECT * FROM e",
        "CREATE TABLE \"order\" AS SELECT a AS \"select\", a AS \"x y\", a AS \"x\"\"y\", a, a \
         FROM e",
        "CREATE TABLE short AS SELECT 1 AS a, 2.5 AS b, 'x' AS c",
        "SELECT name, sql FROM sqlite_schema WHERE name IN ('s', 'order', 'short') ORDER BY name",
    ]));
}

#[test]
fn drop_column_checks_views_and_triggers_before_and_after() {
    for case in [
        "CREATE TABLE t(a, b); CREATE VIEW v AS SELECT a FROM t; ALTER TABLE t DROP COLUMN a",
        "CREATE TABLE t(a, b); CREATE VIEW v AS SELECT b FROM t; ALTER TABLE t DROP COLUMN a; \
         SELECT * FROM v",
        "CREATE TABLE t(a, b); CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT new.a; END; \
         ALTER TABLE t DROP COLUMN a",
        "CREATE TABLE t(a, b); CREATE TABLE u(x); CREATE TRIGGER tr AFTER INSERT ON u \
         BEGIN SELECT a FROM t; END; ALTER TABLE t DROP COLUMN a",
        "CREATE TABLE t(a, b); CREATE VIEW bad AS SELECT nosuch FROM t; ALTER TABLE t DROP COLUMN a",
        "CREATE TABLE t2(a PRIMARY KEY, b, c) WITHOUT ROWID; CREATE VIEW v AS SELECT b FROM t2; \
         ALTER TABLE t2 DROP COLUMN b",
        "CREATE TABLE t(a, b); INSERT INTO t VALUES (1, 2); CREATE VIEW v AS SELECT a FROM t; \
         ALTER TABLE t DROP COLUMN a",
    ] {
        let mut stmts: Vec<&str> = case.split("; ").collect();
        stmts.push("SELECT type, name, sql FROM sqlite_schema ORDER BY name");
        stmts.push("SELECT * FROM t");
        common::assert_no_mismatches(common::statement_mismatches(&stmts));
    }
}
