//! Indexes on expressions (expridx.html): DDL, maintenance on every write path, use by the
//! planner, and files shared with stock SQLite (rusqlite, bundled), whose
//! `PRAGMA integrity_check` cross-checks every index entry against its row.

mod common;

use parlite::{Connection, Value};

fn rows(c: &Connection, sql: &str) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    let (mut st, _) = c.prepare(sql).expect("prepare").expect("statement");
    while st.step().expect("step") {
        out.push((0..st.column_count()).map(|i| st.column(i)).collect());
    }
    out
}

fn err(c: &Connection, sql: &str) -> String {
    match c.execute_batch(sql) {
        Ok(_) => panic!("expected an error from {sql}"),
        Err(e) => e.message,
    }
}

fn temp_path(tag: &str) -> common::TempDb {
    common::temp_db_path("expridx", tag)
}

fn sqlite_check(path: &std::path::Path) -> String {
    let s = rusqlite::Connection::open(path).expect("open");
    s.query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("integrity_check")
}

const WRITES: &str = "
    INSERT INTO t(a, b, c) VALUES (1, 'Alpha-0001-xyz', 3), (2, 'beta-0002', -4), (3, NULL, 5);
    WITH RECURSIVE n(i) AS (SELECT 10 UNION ALL SELECT i + 1 FROM n WHERE i < 400)
      INSERT INTO t(a, b, c) SELECT i, 'key' || (i % 37) || '-' || i, i % 11 - 5 FROM n;
    UPDATE t SET b = upper(b) WHERE a % 5 = 0;
    UPDATE t SET c = c * 2 WHERE a % 7 = 0;
    DELETE FROM t WHERE a % 9 = 0;
    REPLACE INTO t(a, b, c) VALUES (11, 'replaced', 1);
    INSERT INTO t(a, b, c) VALUES (12, 'upserted', 2)
      ON CONFLICT(a) DO UPDATE SET b = excluded.b || '!', c = -c;
    INSERT INTO log VALUES ('trigger fired');
";

const SCHEMA: &str = "
    CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c INTEGER);
    CREATE TABLE log(m TEXT);
    CREATE TRIGGER tr AFTER INSERT ON log BEGIN UPDATE t SET b = b || '+' WHERE a < 20; END;
    CREATE INDEX t_sub ON t(substr(b, 1, 4));
    CREATE INDEX t_mix ON t(c DESC, lower(b) COLLATE NOCASE, abs(c) + a);
    CREATE INDEX t_part ON t(length(b)) WHERE c > 0;
";

#[test]
fn parlite_maintains_expression_indexes_that_sqlite_checks() {
    let path = temp_path("p");
    {
        let c = Connection::open(path.to_str().expect("utf8")).expect("open");
        c.execute_batch(SCHEMA).expect("schema");
        c.execute_batch(WRITES).expect("writes");
        c.execute_batch("REINDEX t_sub; REINDEX t;")
            .expect("reindex");
        assert_eq!(
            rows(&c, "PRAGMA integrity_check"),
            vec![vec![Value::Text("ok".into())]]
        );
    }
    assert_eq!(sqlite_check(&path), "ok");
}

#[test]
fn parlite_writes_a_file_sqlite_created_with_expression_indexes() {
    let path = temp_path("s");
    {
        let s = rusqlite::Connection::open(&path).expect("sqlite");
        s.execute_batch(SCHEMA).expect("schema");
        s.execute_batch("INSERT INTO t VALUES (500, 'from sqlite', 9);")
            .expect("insert");
    }
    {
        let c = Connection::open(path.to_str().expect("utf8")).expect("open");
        c.execute_batch(WRITES).expect("writes");
        // Populated on CREATE over existing rows, too.
        c.execute_batch("CREATE UNIQUE INDEX t_u ON t(a * 2, substr(b, 1, 1));")
            .expect("create");
        assert_eq!(
            rows(&c, "PRAGMA integrity_check"),
            vec![vec![Value::Text("ok".into())]]
        );
    }
    assert_eq!(sqlite_check(&path), "ok");
    let s = rusqlite::Connection::open(&path).expect("sqlite");
    let sql: String = s
        .query_row(
            "SELECT sql FROM sqlite_schema WHERE name = 't_u'",
            [],
            |r| r.get(0),
        )
        .expect("sql");
    assert_eq!(sql, "CREATE UNIQUE INDEX t_u ON t(a * 2, substr(b, 1, 1))");
}

#[test]
fn expression_index_errors_match_sqlite() {
    let c = Connection::open(":memory:").expect("open");
    let s = rusqlite::Connection::open_in_memory().expect("sqlite");
    let setup = "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c INTEGER);
                 INSERT INTO t VALUES (1, 'x', 1), (2, 'x', 2);";
    c.execute_batch(setup).expect("setup");
    s.execute_batch(setup).expect("setup");
    for sql in [
        "CREATE INDEX i1 ON t(random() + a)",
        "CREATE INDEX i2 ON t(b || zz)",
        "CREATE INDEX i3 ON t((SELECT 1) + a)",
        "CREATE UNIQUE INDEX i4 ON t(lower(b))",
    ] {
        let ours = err(&c, sql);
        let theirs = match s.execute_batch(sql) {
            Ok(_) => panic!("sqlite accepted {sql}"),
            Err(rusqlite::Error::SqlInputError { msg, .. }) => msg,
            Err(rusqlite::Error::SqliteFailure(_, Some(m))) => m,
            Err(e) => e.to_string(),
        };
        // Newer SQLite appends " in <sql> at offset N"; parlite reports the bare message.
        let theirs = match theirs.find(" in CREATE") {
            Some(i) => theirs[..i].to_string(),
            None => theirs,
        };
        assert_eq!(ours, theirs, "{sql}");
    }
    c.execute_batch("CREATE UNIQUE INDEX i5 ON t(c * 10)")
        .expect("create");
    assert_eq!(
        err(&c, "INSERT INTO t VALUES (3, 'y', 2)"),
        "UNIQUE constraint failed: index 'i5'"
    );
}

#[test]
fn queries_through_expression_indexes_agree_with_sqlite() {
    let c = Connection::open(":memory:").expect("open");
    let s = rusqlite::Connection::open_in_memory().expect("sqlite");
    c.execute_batch(SCHEMA).expect("schema");
    c.execute_batch(WRITES).expect("writes");
    s.execute_batch(SCHEMA).expect("schema");
    s.execute_batch(WRITES).expect("writes");
    for q in [
        "SELECT a FROM t WHERE substr(b, 1, 4) = 'key1' ORDER BY a",
        "SELECT a FROM t WHERE substr(b,1,4) IN ('key2', 'KEY3') ORDER BY a",
        "SELECT a FROM t WHERE substr(b, 1, 4) > 'key3' AND substr(b, 1, 4) <= 'key5' ORDER BY a",
        "SELECT a FROM t WHERE length(b) = 9 AND c > 0 ORDER BY a",
        "SELECT a FROM t WHERE c = 3 AND lower(b) = 'key10-10+' ORDER BY a",
        "SELECT a, substr(b, 1, 4) FROM t ORDER BY substr(b, 1, 4), a LIMIT 20",
    ] {
        let ours: Vec<Vec<Value>> = rows(&c, q);
        let mut st = s.prepare(q).expect("prepare");
        let n = st.column_count();
        let theirs: Vec<Vec<Value>> = st
            .query_map([], |r| {
                (0..n)
                    .map(|i| {
                        Ok(match r.get_ref(i)? {
                            rusqlite::types::ValueRef::Integer(v) => Value::Integer(v),
                            rusqlite::types::ValueRef::Text(t) => {
                                Value::Text(String::from_utf8_lossy(t).into_owned())
                            }
                            rusqlite::types::ValueRef::Null => Value::Null,
                            other => panic!("unexpected {other:?}"),
                        })
                    })
                    .collect()
            })
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows");
        assert_eq!(ours, theirs, "{q}");
    }
}

#[test]
fn alter_table_keeps_expression_indexes_right() {
    let path = temp_path("a");
    {
        let c = Connection::open(path.to_str().expect("utf8")).expect("open");
        c.execute_batch(SCHEMA).expect("schema");
        c.execute_batch(WRITES).expect("writes");
        assert_eq!(
            err(&c, "ALTER TABLE t DROP COLUMN b"),
            "error in index t_sub after drop column: no such column: b"
        );
        c.execute_batch("ALTER TABLE t RENAME COLUMN b TO bb; UPDATE t SET bb = bb || 'z';")
            .expect("rename");
        assert_eq!(
            rows(&c, "SELECT sql FROM sqlite_schema WHERE name = 't_sub'"),
            vec![vec![Value::Text(
                "CREATE INDEX t_sub ON t(substr(bb, 1, 4))".into()
            )]]
        );
    }
    assert_eq!(sqlite_check(&path), "ok");
}

#[test]
fn planner_searches_an_expression_index() {
    let c = Connection::open(":memory:").expect("open");
    c.execute_batch(SCHEMA).expect("schema");
    c.execute_batch(WRITES).expect("writes");
    for q in [
        "SELECT a FROM t WHERE substr(b, 1, 4) = 'key1'",
        "SELECT a FROM t WHERE substr(b,1,4) >= 'key3'",
        "SELECT a FROM t WHERE substr(b, 1, 4) IN ('key2', 'KEY3')",
    ] {
        let plan = format!("{:?}", rows(&c, &format!("EXPLAIN QUERY PLAN {q}")));
        assert!(plan.contains("USING INDEX t_sub"), "{q}: {plan}");
    }
}
