//! Reused prepared INSERTs (and UPDATEs/DELETEs) keep their resolved table, triggers and
//! target columns between executions (`exec::BoundDml`, dropped when `schema_gen` moves).
//! Differential against SQLite (rusqlite, bundled): the same prepared statements executed
//! in both engines between schema changes made by the same connection or by another one
//! (DROP/CREATE of the table, triggers created and dropped after prepare, ALTER TABLE), each execution's rows or error, then `changes()`,
//! `total_changes()` and `last_insert_rowid()` after it, as the API and as SQL functions.

mod common;

use common::{run_parlite, run_sqlite, sqlite_value, temp_db_path, Out};
use parlite::Value;

/// One step of a script: SQL run once on connection 0 or 1, or prepared statement `i`
/// (prepared at the start on connection 0) executed with bindings.
enum Op<'a> {
    Sql(usize, &'a str),
    Exec(usize, Vec<Value>),
}

fn t(s: &str) -> Value {
    Value::Text(s.to_string())
}

fn i(n: i64) -> Value {
    Value::Integer(n)
}

fn to_sqlite(v: &Value) -> rusqlite::types::Value {
    match v {
        Value::Null => rusqlite::types::Value::Null,
        Value::Integer(n) => rusqlite::types::Value::Integer(*n),
        Value::Real(f) => rusqlite::types::Value::Real(*f),
        Value::Text(s) => rusqlite::types::Value::Text(s.clone()),
        Value::Blob(b) => rusqlite::types::Value::Blob(b.clone()),
    }
}

fn exec_sqlite(st: &mut rusqlite::Statement<'_>, binds: &[Value]) -> Out {
    for (k, v) in binds.iter().enumerate() {
        if let Err(e) = st.raw_bind_parameter(k + 1, to_sqlite(v)) {
            return Out::Err(common::msg(e));
        }
    }
    let n = st.column_count();
    let names = st.column_names().iter().map(|s| s.to_string()).collect();
    let mut rows = Vec::new();
    let mut r = st.raw_query();
    loop {
        match r.next() {
            Ok(Some(row)) => rows.push(
                (0..n)
                    .map(|c| sqlite_value(row.get_ref(c).expect("column")))
                    .collect(),
            ),
            Ok(None) => break,
            Err(e) => return Out::Err(common::msg(e)),
        }
    }
    Out::Rows { names, rows }
}

fn exec_parlite(st: &mut parlite::Statement, binds: &[Value]) -> Out {
    for (k, v) in binds.iter().enumerate() {
        if let Err(e) = st.bind(k + 1, v.clone()) {
            return Out::Err(e.message);
        }
    }
    let names = (0..st.column_count())
        .map(|c| st.column_name(c).to_string())
        .collect();
    let mut rows = Vec::new();
    let out = loop {
        match st.step() {
            Ok(true) => rows.push((0..st.column_count()).map(|c| st.column(c)).collect()),
            Ok(false) => break Out::Rows { names, rows },
            Err(e) => break Out::Err(e.message),
        }
    };
    st.reset();
    out
}

/// Runs `ops` in both engines on `paths` (None: one `:memory:` connection) and returns
/// every difference: each op's outcome, then the counters after it.
fn differences(
    paths: Option<(&std::path::Path, &std::path::Path)>,
    prepared: &[&str],
    ops: &[Op],
) -> Vec<String> {
    let (s0, s1, p0, p1) = match paths {
        None => (
            rusqlite::Connection::open_in_memory().expect("sqlite"),
            None,
            parlite::Connection::open(":memory:").expect("parlite"),
            None,
        ),
        Some((sp, pp)) => {
            let s0 = rusqlite::Connection::open(sp).expect("sqlite");
            let s1 = rusqlite::Connection::open(sp).expect("sqlite 2");
            let db = parlite::Database::open(pp.to_str().expect("utf-8 path")).expect("parlite");
            let (p0, p1) = (db.connect().expect("conn"), db.connect().expect("conn 2"));
            (s0, Some(s1), p0, Some(p1))
        }
    };
    let mut diffs = Vec::new();
    let mut sst: Vec<Option<rusqlite::Statement<'_>>> = Vec::new();
    let mut pst: Vec<Option<parlite::Statement>> = Vec::new();
    let mut prepared_yet = false;
    for (n, op) in ops.iter().enumerate() {
        // The statements are prepared after the first op (the setup).
        if n == 1 && !prepared_yet {
            for sql in prepared {
                sst.push(Some(s0.prepare(sql).expect("sqlite prepare")));
                pst.push(Some(
                    p0.prepare(sql).expect("parlite prepare").expect("one").0,
                ));
            }
            prepared_yet = true;
        }
        let (label, so, po) = match op {
            Op::Sql(c, sql) => {
                let (sc, pc) = match c {
                    0 => (&s0, &p0),
                    _ => (
                        s1.as_ref().expect("two connections"),
                        p1.as_ref().expect("two connections"),
                    ),
                };
                let label = format!("#{n} conn {c}: {sql}");
                let mut so = Out::Rows {
                    names: Vec::new(),
                    rows: Vec::new(),
                };
                let mut po = Out::Rows {
                    names: Vec::new(),
                    rows: Vec::new(),
                };
                // A setup may hold several statements; the last one's outcome is compared.
                for part in sql.split(";\n").filter(|s| !s.trim().is_empty()) {
                    so = run_sqlite(sc, part);
                    po = run_parlite(pc, part);
                }
                (label, so, po)
            }
            Op::Exec(k, binds) => {
                let label = format!("#{n} exec {:?} {binds:?}", prepared[*k]);
                let so = exec_sqlite(sst[*k].as_mut().expect("sqlite stmt"), binds);
                let po = exec_parlite(pst[*k].as_mut().expect("parlite stmt"), binds);
                (label, so, po)
            }
        };
        if so != po {
            diffs.push(format!("{label}\n  sqlite:  {so:?}\n  parlite: {po:?}"));
        }
        // Known difference, not compared: a statement that fails to compile in SQLite (no
        // such table or column, wrong value count) leaves changes() as it was; parlite,
        // which resolves names when the statement runs, reports 0 changes after it.
        if let Out::Err(m) = &so {
            if !m.contains("constraint failed") {
                // A write in both engines brings changes() level again.
                let sync = "INSERT INTO log VALUES('resync')";
                let _ = (run_sqlite(&s0, sync), run_parlite(&p0, sync));
                continue;
            }
        }
        let s_api = (s0.changes() as i64, s0.last_insert_rowid());
        let p_api = (p0.changes() as i64, p0.last_insert_rowid());
        if s_api != p_api {
            diffs.push(format!(
                "{label}\n  changes/last_insert_rowid: sqlite {s_api:?}, parlite {p_api:?}"
            ));
        }
        let counters = "SELECT changes(), total_changes(), last_insert_rowid()";
        let (sc, pc) = (run_sqlite(&s0, counters), run_parlite(&p0, counters));
        if sc != pc {
            diffs.push(format!(
                "{label}\n  counters: sqlite {sc:?}, parlite {pc:?}"
            ));
        }
        if p0.total_changes() as i64 != s0.total_changes() as i64 {
            diffs.push(format!(
                "{label}\n  total_changes(): sqlite {}, parlite {}",
                s0.total_changes(),
                p0.total_changes()
            ));
        }
    }
    drop(sst);
    diffs
}

const SETUP: &str = "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c DEFAULT 'dflt');\n\
                     CREATE TABLE log(x);\n\
                     CREATE TABLE kv(k TEXT PRIMARY KEY, v TEXT)";

const PREPARED: &[&str] = &[
    "INSERT INTO t(b) VALUES(?)",
    "INSERT INTO t VALUES(?,?,?)",
    "INSERT INTO t(c, b, rowid) VALUES(?,?,?)",
    "INSERT OR IGNORE INTO t(a, b) VALUES(?,?)",
    "INSERT OR REPLACE INTO t(a, b) VALUES(?,?)",
    "INSERT INTO kv VALUES(?,?) ON CONFLICT(k) DO UPDATE SET v = excluded.v || '+'",
    "INSERT INTO kv(k, v) VALUES(?,?) RETURNING k, v, rowid",
    "UPDATE kv SET v = ? WHERE k = ?",
    "DELETE FROM kv WHERE k = ?",
];

/// The script both tests run: schema changes between executions of the prepared
/// statements, on connection `ddl` (0: the statements' own, 1: another connection).
fn script(ddl: usize) -> Vec<Op<'static>> {
    use Op::*;
    vec![
        Sql(0, SETUP),
        Exec(0, vec![t("one")]),
        Exec(1, vec![i(10), t("ten"), t("c10")]),
        Exec(2, vec![t("c20"), t("twenty"), i(20)]),
        Exec(3, vec![i(10), t("ignored")]),
        Exec(3, vec![i(11), t("eleven")]),
        Exec(4, vec![i(10), t("replaced")]),
        Exec(5, vec![t("k1"), t("v1")]),
        Exec(5, vec![t("k1"), t("v2")]),
        Exec(6, vec![t("k2"), t("v")]),
        Exec(6, vec![t("k2"), t("dup")]),
        Exec(7, vec![t("new"), t("k1")]),
        Exec(8, vec![t("k2")]),
        Exec(8, vec![t("nosuch")]),
        // Triggers created after prepare fire on the next execution.
        Sql(ddl, "CREATE TRIGGER ta AFTER INSERT ON t BEGIN INSERT INTO log VALUES('after ' || new.b); END"),
        Exec(0, vec![t("two")]),
        Sql(ddl, "CREATE TRIGGER tb BEFORE INSERT ON t BEGIN INSERT INTO log VALUES('before ' || new.b); END"),
        Exec(1, vec![i(30), t("thirty"), t("c30")]),
        Exec(3, vec![i(30), t("ignored again")]),
        Sql(ddl, "CREATE TRIGGER tk AFTER UPDATE ON kv BEGIN INSERT INTO log VALUES('upd ' || new.v); END"),
        Exec(7, vec![t("newer"), t("k1")]),
        Sql(ddl, "CREATE TRIGGER td AFTER DELETE ON kv BEGIN INSERT INTO log VALUES('del ' || old.k); END"),
        Exec(8, vec![t("k1")]),
        Sql(0, "SELECT * FROM log ORDER BY rowid"),
        Sql(ddl, "DROP TRIGGER ta"),
        Exec(0, vec![t("three")]),
        Sql(ddl, "DROP TRIGGER tb"),
        Exec(0, vec![t("four")]),
        Sql(0, "SELECT * FROM log ORDER BY rowid"),
        // ALTER TABLE: a new column (with a default), a renamed one.
        Sql(ddl, "ALTER TABLE t ADD COLUMN d DEFAULT 7"),
        Exec(0, vec![t("five")]),
        Exec(1, vec![i(40), t("forty"), t("c40")]),
        Exec(2, vec![t("c50"), t("fifty"), i(50)]),
        Sql(ddl, "ALTER TABLE t RENAME COLUMN b TO bb"),
        Exec(0, vec![t("six")]),
        Exec(2, vec![t("c60"), t("sixty"), i(60)]),
        Sql(ddl, "ALTER TABLE t RENAME COLUMN bb TO b"),
        Exec(0, vec![t("seven")]),
        Sql(0, "SELECT rowid, * FROM t ORDER BY rowid"),
        // The table dropped, then created again with its columns in another order.
        Sql(ddl, "DROP TABLE t"),
        Exec(0, vec![t("gone")]),
        Exec(3, vec![i(1), t("gone")]),
        Sql(ddl, "CREATE TABLE t(b TEXT, c, a INTEGER PRIMARY KEY)"),
        Exec(0, vec![t("back")]),
        Exec(1, vec![t("b"), t("c"), i(70)]),
        Exec(2, vec![t("c80"), t("b80"), i(80)]),
        Exec(4, vec![i(80), t("b80 replaced")]),
        Sql(0, "SELECT rowid, * FROM t ORDER BY rowid"),
        // A unique index added after prepare: the second execution fails and counts nothing.
        Sql(ddl, "CREATE UNIQUE INDEX tb_u ON t(b)"),
        Exec(0, vec![t("dup")]),
        Exec(0, vec![t("dup")]),
        Exec(3, vec![i(90), t("dup")]),
        Exec(0, vec![t("not dup")]),
        // The table dropped and created again with another default.
        Sql(ddl, "DROP TABLE t"),
        Sql(ddl, "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c DEFAULT 'again')"),
        Exec(0, vec![t("table again")]),
        // In an explicit transaction, rolled back.
        Sql(0, "BEGIN"),
        Exec(0, vec![t("in txn")]),
        Exec(5, vec![t("k9"), t("v9")]),
        Sql(0, "ROLLBACK"),
        Exec(0, vec![t("after rollback")]),
        Sql(0, "SELECT rowid, * FROM t ORDER BY rowid"),
        Sql(0, "SELECT * FROM kv ORDER BY k"),
    ]
}

#[test]
fn reused_inserts_follow_the_connections_own_schema_changes() {
    let d = differences(None, PREPARED, &script(0));
    assert!(d.is_empty(), "{} differences:\n{}", d.len(), d.join("\n"));
}

#[test]
fn reused_inserts_follow_another_connections_schema_changes() {
    let (sp, pp) = (
        temp_db_path("insert-reuse", "sqlite"),
        temp_db_path("insert-reuse", "parlite"),
    );
    let d = differences(Some((&sp, &pp)), PREPARED, &script(1));
    assert!(d.is_empty(), "{} differences:\n{}", d.len(), d.join("\n"));
}
