//! Date functions that read the clock or the time zone ('now', no time value, 'subsec'
//! as the time value, the `localtime` and `utc` modifiers) fail where SQLite codes
//! `OP_PureFunc`: in a CHECK constraint, an index expression or partial-index WHERE, and
//! a generated column — with SQLite's "non-deterministic use of f() in ..." — for every
//! write that reaches the expression (INSERT, UPDATE of the column or of another one,
//! REPLACE, upsert, DELETE, CREATE INDEX over existing rows), leaving nothing half
//! written; pure uses, DEFAULTs and ordinary queries are unaffected. Against SQLite.

mod common;

/// Each function called on column `a`, with and without a modifier that reads the zone,
/// and with no time value.
fn calls() -> Vec<String> {
    let mut out = Vec::new();
    for f in ["date", "time", "datetime", "julianday", "unixepoch"] {
        out.push(format!("{f}(a)"));
        out.push(format!("{f}()"));
        out.push(format!("{f}(a, 'localtime')"));
        out.push(format!("{f}(a, 'utc')"));
        out.push(format!("{f}(a, '+1 day', 'subsec')"));
    }
    out.push("strftime('%Y', a)".into());
    out.push("strftime('%Y')".into());
    out.push("strftime('%s', a, 'localtime')".into());
    out.push("strftime('%s', a, 'utc')".into());
    out.push("timediff(a, '2000-01-01')".into());
    out.push("timediff('2000-01-01', a)".into());
    out
}

/// The statements of one case: `expr` in context `ctx`, the time value `v`, the table
/// followed by `options` ("" or " WITHOUT ROWID").
fn case(ctx: &str, expr: &str, v: &str, options: &str) -> Vec<String> {
    let probe = format!("typeof({expr}) <> 'x'");
    let table = match ctx {
        "check" => format!("CREATE TABLE t(k INTEGER PRIMARY KEY, a, o, CHECK({probe}))"),
        "virtual" => format!("CREATE TABLE t(k INTEGER PRIMARY KEY, a, o, g AS ({probe}))"),
        "stored" => {
            format!("CREATE TABLE t(k INTEGER PRIMARY KEY, a, o, g AS ({probe}) STORED)")
        }
        _ => "CREATE TABLE t(k INTEGER PRIMARY KEY, a, o)".into(),
    };
    let index = match ctx {
        "index" => Some(format!("CREATE INDEX i ON t(({expr}))")),
        "partial" => Some(format!("CREATE INDEX i ON t(o) WHERE {probe}")),
        _ => None,
    };
    let mut s = vec![table + options];
    s.extend(index.clone());
    for st in [
        format!("INSERT INTO t(k, a, o) VALUES (1, {v}, 1)"),
        "INSERT INTO t(k, a, o) VALUES (2, '2020-01-01', 1)".into(),
        format!("INSERT INTO t(k, a, o) VALUES (10, '2020-01-02', 0), (11, {v}, 0)"),
        "UPDATE t SET o = o + 1 WHERE k = 2".into(),
        format!("UPDATE t SET a = {v} WHERE k = 2"),
        "UPDATE t SET o = o + 1 WHERE k = 2".into(),
        format!("REPLACE INTO t(k, a, o) VALUES (2, {v}, 5)"),
        format!(
            "INSERT INTO t(k, a, o) VALUES (2, {v}, 6) ON CONFLICT(k) DO UPDATE SET o = excluded.o"
        ),
        format!("INSERT INTO t(k, a, o) VALUES (2, 1, 7) ON CONFLICT(k) DO UPDATE SET a = {v}"),
        "SELECT k, a, o FROM t ORDER BY k".into(),
        "PRAGMA integrity_check".into(),
        "DELETE FROM t WHERE k = 2".into(),
        "SELECT k, a, o FROM t ORDER BY k".into(),
    ] {
        s.push(st);
    }
    if ctx == "virtual" || ctx == "stored" {
        s.push("SELECT count(*) FROM t WHERE g IS NOT NULL".into());
    }
    if let Some(ix) = index {
        // Over existing rows: CREATE INDEX evaluates the expression for each.
        s.push("DROP INDEX IF EXISTS i".into());
        s.push(format!("INSERT INTO t(k, a, o) VALUES (20, {v}, 0)"));
        s.push(ix);
        s.push("SELECT count(*) FROM sqlite_schema WHERE name = 'i'".into());
        s.push("REINDEX t".into());
    }
    s
}

#[test]
fn date_functions_reading_the_clock_fail_where_sqlite_wants_pure_values() {
    let mut failures = Vec::new();
    for ctx in ["check", "index", "partial", "virtual", "stored"] {
        for expr in calls() {
            for v in ["'2020-01-01 10:00:00'", "'now'", "'NOW'", "'subsec'"] {
                for options in ["", " WITHOUT ROWID"] {
                    let stmts = case(ctx, &expr, v, options);
                    let refs: Vec<&str> = stmts.iter().map(|s| s.as_str()).collect();
                    failures.extend(
                        common::statement_mismatches(&refs)
                            .into_iter()
                            .map(|m| format!("[{ctx} {expr} {v}{options}] {m}")),
                    );
                }
            }
        }
    }
    common::assert_no_mismatches(failures);
}

#[test]
fn the_error_names_the_function_and_the_context() {
    let c = parlite::Connection::open(":memory:").unwrap();
    c.execute_batch(
        "CREATE TABLE g(a, b AS (datetime('now')));
         CREATE TABLE x(a); CREATE INDEX xi ON x(datetime(a));
         CREATE TABLE k(a CHECK(date(a) IS NOT NULL));
         CREATE TABLE p(a); INSERT INTO p VALUES (1);",
    )
    .unwrap();
    for (sql, want) in [
        (
            "INSERT INTO g(a) VALUES (1)",
            "non-deterministic use of datetime() in a generated column",
        ),
        (
            "INSERT INTO x VALUES ('now')",
            "non-deterministic use of datetime() in an index",
        ),
        (
            "INSERT INTO k VALUES ('now')",
            "non-deterministic use of date() in a CHECK constraint",
        ),
        (
            "CREATE INDEX pi ON p(a) WHERE julianday('now') > 0",
            "non-deterministic use of julianday() in an index",
        ),
    ] {
        let e = c.execute_batch(sql).expect_err(sql);
        assert!(e.to_string().contains(want), "{sql}: {e}");
    }
}

#[test]
fn defaults_and_queries_still_read_the_clock() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE d(a, b DEFAULT (datetime('now', 'localtime')), c DEFAULT CURRENT_TIMESTAMP)",
        "INSERT INTO d(a) VALUES (1)",
        "SELECT a, b IS NOT NULL, c IS NOT NULL FROM d",
        "CREATE TABLE e(a)",
        "CREATE INDEX ei ON e(a) WHERE a > date('now')",
        "SELECT date('now') IS NOT NULL, julianday() > 0, time('12:00', 'localtime', 'utc') IS NOT NULL",
        "CREATE TABLE f(a CHECK(date(a) IS NOT NULL), b AS (date(a)))",
        "INSERT INTO f(a) VALUES ('2020-01-01')",
        "SELECT a, b FROM f WHERE date(a) <= date('now')",
        "CREATE INDEX fi ON f(date(a, '+1 day'))",
        "SELECT a FROM f WHERE date(a, '+1 day') = '2020-01-02' AND datetime('now') IS NOT NULL",
    ]));
}
