//! TEMP views as SQLite keeps them — rows of the temp schema table — and what SQLite says of
//! views where a table is expected: listed in `sqlite_temp_schema` and `PRAGMA table_list`,
//! undone by a rollback, shadowing a main view of the same name (still reachable as
//! `main.v`), private to their connection; ALTER TABLE on a view and views that read
//! themselves refused in SQLite's words.

mod common;

#[test]
fn temp_views_live_in_the_temp_schema_table() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(a)",
        "INSERT INTO t VALUES (1), (2)",
        "CREATE TEMP VIEW v AS SELECT a FROM t",
        "CREATE VIEW temp.w AS SELECT a * 2 AS d FROM t",
        "CREATE TEMP VIEW main.x AS SELECT 1",
        "SELECT type, name, tbl_name, rootpage, sql FROM sqlite_temp_schema ORDER BY name",
        "SELECT count(*) FROM sqlite_schema WHERE type = 'view'",
        "SELECT * FROM pragma_table_list ORDER BY schema, name",
        "PRAGMA table_info(w)",
        "SELECT * FROM v, temp.w ORDER BY 1, 2",
        "CREATE TEMP VIEW v AS SELECT 2",
        "CREATE TEMP VIEW IF NOT EXISTS v AS SELECT 2",
        "CREATE TEMP TABLE tt(a)",
        "CREATE TEMP VIEW tt AS SELECT 1",
        "BEGIN",
        "CREATE TEMP VIEW r AS SELECT 3",
        "DROP VIEW v",
        "ROLLBACK",
        "SELECT name FROM sqlite_temp_schema WHERE type = 'view' ORDER BY name",
        "SELECT * FROM v ORDER BY 1",
        "SELECT * FROM r",
        "DROP VIEW w",
        "SELECT * FROM w",
        "ALTER TABLE t RENAME TO u",
        "SELECT sql FROM sqlite_temp_schema WHERE name = 'v'",
        "SELECT * FROM v ORDER BY 1",
    ]));
}

#[test]
fn a_temp_view_shadows_a_main_view_of_its_name() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(a)",
        "INSERT INTO t VALUES (1)",
        "CREATE VIEW v AS SELECT a FROM t",
        "CREATE TEMP VIEW v AS SELECT a * 10 AS a FROM t",
        "SELECT * FROM v",
        "SELECT * FROM main.v",
        "SELECT * FROM temp.v",
        "CREATE VIEW v AS SELECT 2",
        "DROP VIEW main.v",
        "SELECT * FROM main.v",
        "SELECT * FROM v",
        "CREATE VIEW v AS SELECT 3 AS a",
        "DROP VIEW v",
        "SELECT * FROM v",
        "SELECT type, name FROM sqlite_schema ORDER BY name",
    ]));
}

#[test]
fn temp_views_are_private_to_their_connection() {
    let path = common::temp_db_path("temp-views", "private");
    let p = path.to_str().unwrap();
    let a = parlite::Connection::open(p).expect("open");
    a.execute_batch(
        "CREATE TABLE t(a); INSERT INTO t VALUES (5); CREATE TEMP VIEW v AS SELECT a FROM t",
    )
    .expect("setup");
    let b = parlite::Connection::open(p).expect("open");
    match common::run_parlite(&b, "SELECT * FROM v") {
        common::Out::Err(e) => assert!(e.contains("no such table: v"), "{e}"),
        other => panic!("another connection sees a TEMP view: {other:?}"),
    }
    // The other connection's DDL reloads `a`'s main schema: its TEMP view stays.
    b.execute_batch("CREATE TABLE u(x)").expect("ddl");
    match common::run_parlite(&a, "SELECT * FROM v") {
        common::Out::Rows { rows, .. } => assert_eq!(rows, vec![vec![parlite::Value::Integer(5)]]),
        other => panic!("{other:?}"),
    }
    drop((a, b));
    let s = rusqlite::Connection::open(&*path).expect("sqlite");
    let views: i64 = s
        .query_row(
            "SELECT count(*) FROM sqlite_schema WHERE type = 'view'",
            [],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(views, 0, "a TEMP view reached the database file");
}

#[test]
fn views_where_tables_are_expected() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(a)",
        "CREATE VIEW v AS SELECT a FROM t",
        "ALTER TABLE v RENAME TO w",
        "ALTER TABLE v ADD COLUMN b",
        "ALTER TABLE v RENAME COLUMN a TO b",
        "ALTER TABLE v DROP COLUMN a",
        "CREATE VIEW s AS SELECT * FROM s",
        "SELECT * FROM s",
        "CREATE VIEW v1 AS SELECT * FROM v2",
        "CREATE VIEW v2 AS SELECT a FROM t WHERE a IN (SELECT * FROM v1)",
        "SELECT * FROM v1",
        "SELECT * FROM v2",
        "CREATE VIEW d1 AS SELECT 1 AS x",
        "CREATE VIEW d2 AS SELECT * FROM d1, d1 AS b",
        "CREATE VIEW d3 AS SELECT * FROM d2 NATURAL JOIN d1",
        "SELECT * FROM d3",
    ]));
}

#[test]
fn views_and_triggers_read_only_their_own_database() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "ATTACH ':memory:' AS a",
        "CREATE TABLE t(x)",
        "CREATE TABLE a.u(y)",
        "CREATE VIEW a.v1 AS SELECT * FROM main.t",
        "CREATE VIEW a.v2 AS SELECT * FROM a.u, (SELECT * FROM main.t)",
        "CREATE VIEW v3 AS SELECT (SELECT y FROM a.u)",
        "CREATE VIEW v4 AS SELECT * FROM t WHERE x IN (SELECT y FROM a.u)",
        "CREATE VIEW v5 AS WITH c AS (SELECT * FROM a.u) SELECT * FROM c",
        "CREATE VIEW v6 AS SELECT * FROM temp.t",
        "CREATE VIEW v7 AS SELECT * FROM t WHERE x IN a.u",
        "CREATE VIEW v8 AS SELECT * FROM t JOIN t AS t2 ON t2.x = (SELECT y FROM a.u)",
        "CREATE VIEW main.v9 AS SELECT * FROM main.t",
        "CREATE VIEW a.v10 AS SELECT * FROM a.u",
        "CREATE TEMP VIEW v11 AS SELECT * FROM a.u, main.t",
        "CREATE TRIGGER tr1 AFTER INSERT ON t BEGIN SELECT * FROM a.u; END",
        "CREATE TRIGGER tr2 AFTER INSERT ON t BEGIN INSERT INTO t SELECT y FROM a.u; END",
        "CREATE TRIGGER tr3 AFTER INSERT ON t WHEN (SELECT count(*) FROM a.u) BEGIN SELECT 1; END",
        "CREATE TRIGGER tr4 AFTER INSERT ON t BEGIN UPDATE t SET x = (SELECT y FROM a.u); END",
        "CREATE TRIGGER tr5 AFTER INSERT ON t BEGIN DELETE FROM t WHERE x IN (SELECT y FROM main.t); END",
        "CREATE TEMP TRIGGER tr6 AFTER INSERT ON t BEGIN SELECT * FROM a.u; END",
        "CREATE TRIGGER a.tr7 AFTER INSERT ON u BEGIN SELECT * FROM main.t; END",
        "SELECT type, name FROM sqlite_schema ORDER BY name",
        "SELECT type, name FROM a.sqlite_schema ORDER BY name",
        "SELECT type, name FROM sqlite_temp_schema ORDER BY name",
    ]));
}

/// `PRAGMA main.table_info(t)` / `temp.table_info(t)` and the pragma functions' schema
/// argument answer for that database's object alone, also where a TEMP table or view hides
/// a main one of the same name.
#[test]
fn schema_pragmas_of_main_and_temp() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(b)",
        "CREATE INDEX ib ON t(b)",
        "CREATE VIEW v AS SELECT 1 AS m",
        "PRAGMA temp.table_info(t)",
        "PRAGMA main.table_info(t)",
        "PRAGMA temp.index_list(t)",
        "SELECT * FROM pragma_index_info('ib', 'temp')",
        "SELECT * FROM pragma_index_info('ib', 'main')",
        "CREATE TEMP TABLE t(a, c)",
        "CREATE TEMP VIEW v AS SELECT 2 AS tv",
        "PRAGMA main.table_info(t)",
        "PRAGMA temp.table_info(t)",
        "PRAGMA table_info(t)",
        "PRAGMA main.table_xinfo(v)",
        "PRAGMA temp.table_info(v)",
        "PRAGMA main.index_list(t)",
        "SELECT name FROM pragma_table_info('t', 'main')",
        "SELECT name FROM pragma_table_info('t', 'temp')",
        "SELECT name FROM pragma_table_info('t')",
        "SELECT name FROM pragma_table_info('v', 'main')",
    ]));
}
