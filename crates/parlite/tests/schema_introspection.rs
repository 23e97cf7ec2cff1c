//! What a program reading the schema sees, against SQLite: the schema tables under each of
//! their names (`temp.sqlite_schema` is the temp database's, `main.sqlite_temp_schema` does
//! not exist), PRAGMA table_info of the schema table itself, and declared types as SQLite
//! keeps them (the standard names ANY/BLOB/INT/INTEGER/REAL/TEXT in capitals, a quoted type
//! unquoted, anything else as written), `main.table_list`, and the header values
//! `user_version`/`application_id` read from the assigned text as sqlite3Atoi does.

mod common;

#[test]
fn schema_tables_and_declared_types_match_sqlite() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(a Int, b integer, c InTeGeR, d real, e Text, f blob, g any, h int(5), \
         i varchar, j \"integer\", k 'Real', l [text], m \"my type\", n unsigned big int, o)",
        "CREATE TEMP TABLE tt(x integer PRIMARY KEY, y TEXT)",
        "CREATE TABLE s(a int, b TEXT) STRICT",
        "PRAGMA table_info(t)",
        "PRAGMA table_xinfo(t)",
        "PRAGMA table_info(s)",
        "PRAGMA table_info(tt)",
        "SELECT name, type FROM pragma_table_info('t') ORDER BY cid",
        "PRAGMA table_info(sqlite_schema)",
        "PRAGMA table_info(sqlite_master)",
        "PRAGMA table_xinfo(sqlite_temp_master)",
        "SELECT name, type FROM pragma_table_info('sqlite_schema')",
        "SELECT sql FROM sqlite_schema WHERE name = 't'",
        "SELECT name FROM temp.sqlite_schema",
        "SELECT name FROM temp.sqlite_master",
        "SELECT name FROM sqlite_temp_schema",
        "SELECT name FROM temp.sqlite_temp_master",
        "SELECT name FROM main.sqlite_schema ORDER BY name",
        "SELECT name FROM main.sqlite_temp_master",
        "SELECT name FROM main.sqlite_temp_schema",
        "INSERT INTO t(j) VALUES ('5')",
        "SELECT typeof(j), rowid FROM t",
        "CREATE TABLE q(id \"integer\" PRIMARY KEY, v)",
        "INSERT INTO q(v) VALUES ('x')",
        "SELECT id, rowid, v FROM q",
    ]));
}

#[test]
fn header_values_and_table_list_match_sqlite() {
    let mut stmts = vec![
        "CREATE TABLE t(a)".to_string(),
        "CREATE TEMP TABLE tt(b)".to_string(),
        "PRAGMA main.table_list".to_string(),
        "PRAGMA temp.table_list".to_string(),
        "PRAGMA main.table_list(t)".to_string(),
    ];
    for v in [
        "2147483647",
        "2147483648",
        "-2147483648",
        "-2147483649",
        "'12abc'",
        "'0x10'",
        "'0x7fffffff'",
        "'0x80000000'",
        "'0x000'",
        "1.9",
        "'-0012'",
        "' 5'",
        "'x'",
        "'00000000000000000007'",
        "99999999999",
    ] {
        stmts.push(format!("PRAGMA user_version = {v}"));
        stmts.push("PRAGMA user_version".to_string());
        stmts.push(format!("PRAGMA application_id = {v}"));
        stmts.push("PRAGMA application_id".to_string());
    }
    let stmts: Vec<&str> = stmts.iter().map(String::as_str).collect();
    common::assert_no_mismatches(common::statement_mismatches(&stmts));
}
