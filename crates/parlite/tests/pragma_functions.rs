//! Every pragma SQLite offers as a virtual table (`pragma_x`, lang_pragma.html "PRAGMA
//! functions"): its columns and HIDDEN `arg` / `schema` columns as SQLite declares them, run
//! when the statement runs (a reused statement sees a changed header), and
//! `integrity_check`'s argument (a count or a table) in both forms. The same scripts
//! through parlite and SQLite (rusqlite, bundled), outcomes compared statement by
//! statement.

mod common;
use common::{check_script, Compare};

const EXACT: Compare = Compare {
    unordered_without_order_by: false,
    ignore_alter_names: false,
};

#[test]
fn settings_and_header_pragmas_as_tables() {
    check_script(
        "CREATE TABLE t(a INTEGER PRIMARY KEY, b);
        PRAGMA user_version = 7;
        SELECT user_version FROM pragma_user_version;
        SELECT * FROM pragma_user_version();
        SELECT * FROM pragma_schema_version;
        SELECT * FROM pragma_application_id, pragma_page_size, pragma_page_count;
        SELECT page_size, typeof(schema), schema FROM pragma_page_size('main');
        SELECT * FROM pragma_freelist_count;
        SELECT * FROM pragma_encoding;
        SELECT * FROM pragma_auto_vacuum;
        SELECT * FROM pragma_max_page_count;
        SELECT * FROM pragma_journal_size_limit;
        SELECT * FROM pragma_synchronous;
        SELECT * FROM pragma_synchronous('main');
        PRAGMA busy_timeout = 250;
        SELECT * FROM pragma_busy_timeout;
        PRAGMA recursive_triggers = 1;
        SELECT * FROM pragma_recursive_triggers;
        SELECT * FROM pragma_defer_foreign_keys;
        SELECT * FROM pragma_automatic_index, pragma_trusted_schema, pragma_temp_store;
        SELECT * FROM pragma_query_only, pragma_cell_size_check, pragma_legacy_alter_table;
        SELECT * FROM pragma_secure_delete, pragma_analysis_limit;
        SELECT * FROM pragma_reverse_unordered_selects, pragma_writable_schema;
        SELECT * FROM pragma_full_column_names, pragma_short_column_names;
        SELECT * FROM pragma_count_changes, pragma_empty_result_callbacks;
        SELECT * FROM pragma_fullfsync, pragma_checkpoint_fullfsync;
        SELECT * FROM pragma_ignore_check_constraints, pragma_read_uncommitted;
        SELECT * FROM pragma_user_version('main');
        SELECT * FROM pragma_page_count('main', 'x');
        SELECT * FROM pragma_page_count('nosuch');
        SELECT * FROM pragma_nosuch;
        SELECT * FROM pragma_wal_checkpoint;
        SELECT * FROM pragma_case_sensitive_like;
        SELECT (SELECT user_version FROM pragma_user_version) + 1;
        SELECT t.a, u.user_version FROM t, pragma_user_version u;",
        EXACT,
    );
}

#[test]
fn object_pragmas_hidden_columns_hold_the_arguments_text() {
    check_script(
        "CREATE TABLE t(a INTEGER PRIMARY KEY, b REFERENCES t);
        CREATE INDEX ti ON t(b);
        SELECT name, typeof(arg), arg, typeof(schema), schema FROM pragma_table_info('t');
        SELECT name, arg, schema FROM pragma_table_info('t', 'main');
        SELECT typeof(arg), arg FROM pragma_table_info(5);
        SELECT name, arg FROM pragma_index_list('t');
        SELECT name, arg, schema FROM pragma_index_info('ti', 'main');
        SELECT \"table\", arg FROM pragma_foreign_key_list('t');
        SELECT name, arg FROM pragma_table_list('t');
        SELECT * FROM pragma_foreign_key_check('x', 'main');
        SELECT * FROM pragma_foreign_key_check('t', 'main');
        PRAGMA main.foreign_key_check(x);",
        EXACT,
    );
}

/// `=` terms on the HIDDEN columns of a function called without arguments are its
/// arguments (SQLite's xBestIndex): in the WHERE, in an inner join's ON, in a LEFT JOIN's
/// ON; a WHERE term over a LEFT JOIN's function filters after the join instead.
#[test]
fn hidden_column_terms_are_the_arguments() {
    check_script(
        "CREATE TABLE t(a PRIMARY KEY, b);
        CREATE TABLE u(x, y REFERENCES t);
        SELECT * FROM pragma_table_info WHERE arg = 't';
        SELECT name FROM pragma_table_info WHERE arg = 't' AND schema = 'main';
        SELECT name FROM pragma_table_info WHERE schema = 'main';
        SELECT name FROM pragma_table_info WHERE 'u' = arg AND name = 'y';
        SELECT m.name, p.name FROM sqlite_schema m, pragma_table_info p
          WHERE p.arg = m.name ORDER BY 1, 2;
        SELECT m.name, p.name FROM sqlite_schema m JOIN pragma_table_info p
          ON p.arg = m.name ORDER BY 1, 2;
        SELECT m.name, p.name FROM sqlite_schema m LEFT JOIN pragma_table_info p
          ON p.arg = m.name ORDER BY 1, 2;
        SELECT m.name, p.name FROM sqlite_schema m LEFT JOIN pragma_table_info p
          WHERE p.arg = m.name ORDER BY 1, 2;
        SELECT count(*) FROM pragma_table_list;
        SELECT name FROM pragma_table_list WHERE arg = 'u';
        SELECT * FROM pragma_foreign_key_list WHERE arg = 'u';
        SELECT * FROM pragma_index_list WHERE arg = 't';
        SELECT * FROM pragma_table_info WHERE arg = 5;
        SELECT * FROM pragma_table_info('t') WHERE arg = 'u';
        SELECT name FROM pragma_table_info WHERE arg = (SELECT max(name) FROM sqlite_schema);",
        EXACT,
    );
}

#[test]
fn integrity_check_takes_a_count_or_a_table() {
    check_script(
        "CREATE TABLE t(a PRIMARY KEY, b);
        CREATE INDEX i ON t(b);
        CREATE VIEW v AS SELECT 1;
        INSERT INTO t VALUES (1, 1), (2, 2);
        PRAGMA integrity_check(t);
        PRAGMA integrity_check(x);
        PRAGMA main.integrity_check(x);
        PRAGMA integrity_check(3);
        PRAGMA integrity_check(0);
        PRAGMA integrity_check('-1');
        PRAGMA integrity_check('0x10');
        PRAGMA integrity_check(v);
        PRAGMA quick_check(t);
        PRAGMA quick_check('t');
        SELECT * FROM pragma_integrity_check;
        SELECT * FROM pragma_integrity_check('t');
        SELECT * FROM pragma_integrity_check('x');
        SELECT * FROM pragma_integrity_check('x', 'main');
        SELECT * FROM pragma_quick_check(2);
        SELECT quick_check, arg, schema FROM pragma_quick_check('t', 'main');",
        EXACT,
    );
}

/// A pragma function reads the database when its statement runs, not when it was
/// prepared: the same prepared statement sees each new user_version, page count and
/// schema version, as SQLite's does.
#[test]
fn a_reused_statement_reads_the_pragma_again() {
    let s = rusqlite::Connection::open_in_memory().expect("sqlite");
    let p = parlite::Connection::open(":memory:").expect("parlite");
    let sql = "SELECT u.user_version, s.schema_version, c.page_count \
               FROM pragma_user_version u, pragma_schema_version s, pragma_page_count c";
    let mut ps = common::prepare_one(&p, sql);
    let mut ss = s.prepare(sql).expect("sqlite prepare");
    // SQLite's file has no page until the first write, parlite's has one from the start.
    s.execute_batch("CREATE TABLE first(x)").expect("sqlite");
    p.execute_batch("CREATE TABLE first(x)").expect("parlite");
    let mut seen = Vec::new();
    for (i, change) in [
        "PRAGMA user_version = 3",
        "CREATE TABLE t(x)",
        "INSERT INTO t VALUES (zeroblob(20000))",
        "PRAGMA user_version = -9",
    ]
    .iter()
    .enumerate()
    {
        let a = common::sqlite_rows_of(&mut ss, &[]);
        let b = common::rows_of(&mut ps, &[]);
        assert_eq!(a, b, "before change {i}: {change}");
        seen.push(b);
        s.execute_batch(change).expect("sqlite change");
        p.execute_batch(change).expect("parlite change");
    }
    let a = common::sqlite_rows_of(&mut ss, &[]);
    let b = common::rows_of(&mut ps, &[]);
    assert_eq!(a, b, "after the last change");
    seen.push(b);
    seen.dedup();
    assert_eq!(seen.len(), 5, "every change shows: {seen:?}");
}

/// The pragmas parlite's connection layer runs cannot be read through the SQL layer's
/// table: they fail with a message naming the PRAGMA to use, never an empty answer.
#[test]
fn connection_layer_pragmas_fail_loudly_as_tables() {
    let p = parlite::Connection::open(":memory:").expect("parlite");
    for name in ["cache_size", "cache_spill", "data_version"] {
        let sql = format!("SELECT * FROM pragma_{name}");
        let err = p
            .prepare(&sql)
            .and_then(|s| {
                let mut st = s.expect("one statement").0;
                st.step()
            })
            .expect_err(&sql);
        assert!(
            err.to_string().contains(&format!("use PRAGMA {name}")),
            "{sql}: {err}"
        );
    }
}

/// On a damaged file (two indexes' roots swapped) integrity_check reports at most 100
/// findings, or N for `integrity_check(N)`, and only TABLE's for `integrity_check(TABLE)`,
/// as SQLite's does: the same number of rows from both. quick_check finds only the
/// wrong entry counts.
#[test]
fn integrity_check_stops_at_its_limit_as_sqlite() {
    let path = common::temp_db_path("pragma-functions", "limit");
    {
        let s = rusqlite::Connection::open(&*path).expect("sqlite");
        s.execute_batch(
            "CREATE TABLE t1(a INTEGER, b TEXT);
             CREATE TABLE t2(a INTEGER, b TEXT);
             CREATE INDEX i1 ON t1(b);
             CREATE INDEX i2 ON t2(b);
             WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 150)
             INSERT INTO t1 SELECT x, 'v' || x FROM n;
             WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 20)
             INSERT INTO t2 SELECT x, 'w' || x FROM n;",
        )
        .expect("setup");
        common::swap_index_roots(&s, "i1", "i2");
    }
    let p = parlite::Connection::open(path.to_str().expect("utf8")).expect("parlite");
    for sql in [
        "PRAGMA integrity_check",
        "PRAGMA integrity_check(7)",
        "PRAGMA integrity_check(0)",
        "PRAGMA integrity_check(t2)",
        "SELECT * FROM pragma_integrity_check('t1')",
    ] {
        let count = |o: common::Out| match o {
            common::Out::Rows { rows, .. } => rows.len(),
            common::Out::Err(e) => panic!("{sql}: {e}"),
        };
        let want = count(common::sqlite_rows(&path, sql));
        let got = count(common::run_parlite(&p, sql));
        assert_eq!(got, want, "{sql}");
        assert!(want > 1, "{sql}: the damage must show");
    }
    // quick_check counts each index's entries but looks up no row (SQLite walks the
    // tables in its own order: compared as sets).
    for sql in [
        "PRAGMA quick_check",
        "SELECT * FROM pragma_quick_check('t2')",
    ] {
        let sorted = |o: common::Out| match o {
            common::Out::Rows { mut rows, .. } => {
                rows.sort_by_key(|r| format!("{r:?}"));
                rows
            }
            common::Out::Err(e) => panic!("{sql}: {e}"),
        };
        let want = sorted(common::sqlite_rows(&path, sql));
        assert_eq!(sorted(common::run_parlite(&p, sql)), want, "{sql}");
    }
}
