//! A prepared statement keeps its bound plan across step/reset/bind, and re-plans
//! transparently when the schema changed, on its own connection or another (SQLite's
//! prepare_v2 retries SQLITE_SCHEMA the same way).

use parlite::{Connection, Database, Statement, Value};
use std::path::PathBuf;

struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let p = std::env::temp_dir().join(format!(
            "parlite-plancache-{tag}-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    fn db(&self) -> String {
        self.0.join("test.db").to_string_lossy().into_owned()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn prepare(c: &Connection, sql: &str) -> Statement {
    c.prepare(sql).unwrap().expect("a statement").0
}

/// Binds `params`, runs to the end, returns the rows and resets.
fn run(st: &mut Statement, params: &[Value]) -> Result<Vec<Vec<Value>>, parlite::Error> {
    for (i, p) in params.iter().enumerate() {
        st.bind(i + 1, p.clone()).unwrap();
    }
    let mut rows = Vec::new();
    let r = loop {
        match st.step() {
            Ok(true) => rows.push((0..st.column_count()).map(|i| st.column(i)).collect()),
            Ok(false) => break Ok(rows),
            Err(e) => break Err(e),
        }
    };
    st.reset();
    r
}

fn int(i: i64) -> Value {
    Value::Integer(i)
}

fn text(s: &str) -> Value {
    Value::Text(s.to_string())
}

#[test]
fn parameters_are_late_bound_across_reruns() {
    let c = Connection::open(":memory:").unwrap();
    c.execute_batch("CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT); INSERT INTO t VALUES (1,'x'),(2,'y'),(3,'z');")
        .unwrap();
    let mut sel = prepare(&c, "SELECT b FROM t WHERE a = ?1");
    let mut upd = prepare(&c, "UPDATE t SET b = ?2 WHERE a = ?1");
    let mut del = prepare(&c, "DELETE FROM t WHERE a = ?");
    for round in 0..3 {
        assert_eq!(run(&mut sel, &[int(1)]).unwrap(), vec![vec![text("x")]]);
        assert_eq!(run(&mut sel, &[int(2)]).unwrap(), vec![vec![text("y")]]);
        run(&mut upd, &[int(2), text(&format!("y{round}"))]).unwrap();
        assert_eq!(
            run(&mut sel, &[int(2)]).unwrap(),
            vec![vec![text(&format!("y{round}"))]]
        );
        run(&mut upd, &[int(2), text("y")]).unwrap();
    }
    run(&mut del, &[int(3)]).unwrap();
    assert_eq!(c.changes(), 1);
    run(&mut del, &[int(3)]).unwrap();
    assert_eq!(c.changes(), 0);
    assert_eq!(run(&mut sel, &[int(3)]).unwrap(), Vec::<Vec<Value>>::new());
}

#[test]
fn replans_after_own_table_recreated_with_other_columns() {
    let c = Connection::open(":memory:").unwrap();
    c.execute_batch("CREATE TABLE t(a INTEGER, b TEXT); INSERT INTO t VALUES (1,'x');")
        .unwrap();
    let mut sel = prepare(&c, "SELECT b FROM t WHERE a = ?");
    let mut upd = prepare(&c, "UPDATE t SET b = 'u' WHERE a = ?");
    let mut del = prepare(&c, "DELETE FROM t WHERE a = ?");
    assert_eq!(run(&mut sel, &[int(1)]).unwrap(), vec![vec![text("x")]]);
    run(&mut upd, &[int(9)]).unwrap();
    run(&mut del, &[int(9)]).unwrap();

    // b moves from the second column to the third: a stale plan would read c.
    c.execute_batch("DROP TABLE t; CREATE TABLE t(c TEXT, a INTEGER, b TEXT); INSERT INTO t VALUES ('c1', 1, 'b1'), ('c2', 2, 'b2');")
        .unwrap();
    assert_eq!(run(&mut sel, &[int(1)]).unwrap(), vec![vec![text("b1")]]);
    run(&mut upd, &[int(2)]).unwrap();
    assert_eq!(run(&mut sel, &[int(2)]).unwrap(), vec![vec![text("u")]]);
    run(&mut del, &[int(1)]).unwrap();
    assert_eq!(c.changes(), 1);
    assert_eq!(run(&mut sel, &[int(1)]).unwrap(), Vec::<Vec<Value>>::new());

    // Without the column the statement refers to: SQLite's error, not stale rows.
    c.execute_batch(
        "DROP TABLE t; CREATE TABLE t(a INTEGER, z TEXT); INSERT INTO t VALUES (1, 'z');",
    )
    .unwrap();
    let e = run(&mut sel, &[int(1)]).unwrap_err();
    assert!(e.to_string().contains("no such column: b"), "{e}");
    c.execute_batch("DROP TABLE t").unwrap();
    let e = run(&mut sel, &[int(1)]).unwrap_err();
    assert!(e.to_string().contains("no such table: t"), "{e}");
}

#[test]
fn replans_after_temp_table_shadows_main() {
    let c = Connection::open(":memory:").unwrap();
    c.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES ('main');")
        .unwrap();
    let mut sel = prepare(&c, "SELECT x FROM t");
    assert_eq!(run(&mut sel, &[]).unwrap(), vec![vec![text("main")]]);
    c.execute_batch("CREATE TEMP TABLE t(x); INSERT INTO temp.t VALUES ('temp');")
        .unwrap();
    assert_eq!(run(&mut sel, &[]).unwrap(), vec![vec![text("temp")]]);
    c.execute_batch("DROP TABLE temp.t").unwrap();
    assert_eq!(run(&mut sel, &[]).unwrap(), vec![vec![text("main")]]);
}

#[test]
fn replans_after_another_connection_changes_the_schema() {
    let dir = TempDir::new("other");
    let db = Database::open(&dir.db()).unwrap();
    let c1 = db.connect().unwrap();
    let c2 = db.connect().unwrap();
    c1.execute_batch(
        "CREATE TABLE t(a INTEGER, b TEXT); INSERT INTO t VALUES (1,'x'),(2,'y'),(3,'z');",
    )
    .unwrap();
    let mut sel = prepare(&c1, "SELECT b FROM t WHERE a = ?");
    let mut upd = prepare(&c1, "UPDATE t SET b = b || '!' WHERE a = ?");
    let mut del = prepare(&c1, "DELETE FROM t WHERE a = ?");
    assert_eq!(run(&mut sel, &[int(2)]).unwrap(), vec![vec![text("y")]]);
    run(&mut upd, &[int(9)]).unwrap();
    run(&mut del, &[int(9)]).unwrap();

    // An index added by another connection: the plan may now use it, results are the same,
    // and writes through the old statements keep it up to date.
    c2.execute_batch("CREATE INDEX ta ON t(a)").unwrap();
    assert_eq!(run(&mut sel, &[int(2)]).unwrap(), vec![vec![text("y")]]);
    run(&mut upd, &[int(2)]).unwrap();
    run(&mut del, &[int(3)]).unwrap();
    let mut check = prepare(
        &c2,
        "SELECT a, b FROM t INDEXED BY ta WHERE a > 0 ORDER BY a",
    );
    assert_eq!(
        run(&mut check, &[]).unwrap(),
        vec![vec![int(1), text("x")], vec![int(2), text("y!")]]
    );
    let mut ic = prepare(&c2, "PRAGMA integrity_check");
    assert_eq!(run(&mut ic, &[]).unwrap(), vec![vec![text("ok")]]);

    // The index dropped by the other connection: a stale plan would read a freed tree.
    c2.execute_batch("DROP INDEX ta").unwrap();
    assert_eq!(run(&mut sel, &[int(2)]).unwrap(), vec![vec![text("y!")]]);
    run(&mut upd, &[int(1)]).unwrap();
    assert_eq!(run(&mut sel, &[int(1)]).unwrap(), vec![vec![text("x!")]]);

    // The table recreated with other columns by the other connection.
    c2.execute_batch(
        "DROP TABLE t; CREATE TABLE t(c TEXT, b TEXT, a INTEGER); INSERT INTO t VALUES ('c', 'b5', 5);",
    )
    .unwrap();
    assert_eq!(run(&mut sel, &[int(5)]).unwrap(), vec![vec![text("b5")]]);
    run(&mut upd, &[int(5)]).unwrap();
    assert_eq!(run(&mut sel, &[int(5)]).unwrap(), vec![vec![text("b5!")]]);
    run(&mut del, &[int(5)]).unwrap();
    assert_eq!(c1.changes(), 1);
    assert_eq!(run(&mut sel, &[int(5)]).unwrap(), Vec::<Vec<Value>>::new());

    c2.execute_batch("DROP TABLE t").unwrap();
    let e = run(&mut sel, &[int(5)]).unwrap_err();
    assert!(e.to_string().contains("no such table: t"), "{e}");
}

/// `prepare` binds a SELECT to learn its column names and keeps that plan for the first
/// step: a schema change between prepare and the first step must still re-plan.
#[test]
fn plan_bound_by_prepare_is_dropped_when_the_schema_changes_before_the_first_step() {
    let dir = TempDir::new("prepare");
    let db = Database::open(&dir.db()).unwrap();
    let c1 = db.connect().unwrap();
    let c2 = db.connect().unwrap();
    c1.execute_batch(
        "CREATE TABLE t(a INTEGER, b TEXT); CREATE INDEX ta ON t(a); INSERT INTO t VALUES (1,'x'),(2,'y');",
    )
    .unwrap();
    // Own connection: b moves from the second column to the third.
    let mut sel = prepare(&c1, "SELECT b FROM t WHERE a = ?");
    c1.execute_batch(
        "DROP TABLE t; CREATE TABLE t(c TEXT, a INTEGER, b TEXT); CREATE INDEX ta ON t(a); INSERT INTO t VALUES ('c1', 1, 'b1'), ('c2', 2, 'b2');",
    )
    .unwrap();
    assert_eq!(run(&mut sel, &[int(2)]).unwrap(), vec![vec![text("b2")]]);
    // Another connection drops the index the prepared plan searches.
    let mut sel2 = prepare(&c1, "SELECT b FROM t WHERE a = ?");
    c2.execute_batch("DROP INDEX ta").unwrap();
    assert_eq!(run(&mut sel2, &[int(1)]).unwrap(), vec![vec![text("b1")]]);
    assert_eq!(run(&mut sel2, &[int(2)]).unwrap(), vec![vec![text("b2")]]);
}

/// Prepare binds against the connection's cached schema without a transaction (as SQLite's
/// prepare does); a schema another connection changed since is caught then: a name the cache
/// lacks makes prepare check the file and retry, and a statement the stale cache could bind
/// is re-bound and renamed by its first step.
#[test]
fn prepare_on_a_stale_cached_schema_retries_or_renames() {
    let dir = TempDir::new("stale");
    let db = Database::open(&dir.db()).unwrap();
    let c1 = db.connect().unwrap();
    let c2 = db.connect().unwrap();
    c1.execute_batch("CREATE TABLE t(a INTEGER, b TEXT); INSERT INTO t VALUES (1,'x');")
        .unwrap();
    // c2 caches the schema.
    assert_eq!(
        run(&mut prepare(&c2, "SELECT a FROM t"), &[]).unwrap(),
        vec![vec![int(1)]]
    );
    c1.execute_batch("ALTER TABLE t ADD COLUMN c TEXT DEFAULT 'z'; CREATE TABLE u(v);")
        .unwrap();
    // Names only the new schema has: prepare checks the file and succeeds.
    let mut sel_c = prepare(&c2, "SELECT c FROM t");
    assert_eq!(run(&mut sel_c, &[]).unwrap(), vec![vec![text("z")]]);
    assert_eq!(
        run(&mut prepare(&c2, "SELECT count(*) FROM u"), &[]).unwrap(),
        vec![vec![int(0)]]
    );
    // `*` bound on the stale cache: the first step re-binds it and names three columns.
    c1.execute_batch("ALTER TABLE t ADD COLUMN d INTEGER DEFAULT 7")
        .unwrap();
    let mut star = prepare(&c2, "SELECT * FROM t");
    let rows = run(&mut star, &[]).unwrap();
    assert_eq!(rows, vec![vec![int(1), text("x"), text("z"), int(7)]]);
    assert_eq!(star.column_count(), 4);
    assert_eq!(star.column_name(3), "d");
    // A table dropped by another connection: the error comes from prepare or the first step.
    c1.execute_batch("DROP TABLE u").unwrap();
    let r = c2
        .prepare("SELECT * FROM u")
        .and_then(|p| run(&mut p.expect("a statement").0, &[]));
    assert_eq!(r.unwrap_err().to_string(), "no such table: u");
}

/// A reused UPDATE keeps its bound SET clause (exec::BoundUpdate) only while the schema is
/// unchanged: SET expressions and target columns follow a recreated table, a renamed column
/// fails as SQLite does, and an index created in between is maintained.
#[test]
fn update_set_clause_is_rebound_after_schema_changes() {
    let c = Connection::open(":memory:").unwrap();
    c.execute_batch("CREATE TABLE t(a INTEGER, b TEXT, c TEXT); INSERT INTO t VALUES (1,'b1','c1'),(2,'b2','c2');")
        .unwrap();
    let mut upd = prepare(&c, "UPDATE t SET b = c || ?1, c = ?2 WHERE a = ?3");
    let mut sel = prepare(&c, "SELECT a, b, c FROM t ORDER BY a");
    run(&mut upd, &[text("!"), text("x"), int(1)]).unwrap();
    assert_eq!(c.changes(), 1);
    // Rebinding: each execution sees its own parameters.
    run(&mut upd, &[text("?"), text("y"), int(2)]).unwrap();
    assert_eq!(
        run(&mut sel, &[]).unwrap(),
        vec![
            vec![int(1), text("c1!"), text("x")],
            vec![int(2), text("c2?"), text("y")]
        ]
    );

    // b and c swap places: a kept SET clause would write the wrong columns.
    c.execute_batch(
        "DROP TABLE t; CREATE TABLE t(c TEXT, a INTEGER, b TEXT); INSERT INTO t VALUES ('c5', 5, 'b5');",
    )
    .unwrap();
    run(&mut upd, &[text("+"), text("z"), int(5)]).unwrap();
    assert_eq!(c.changes(), 1);
    let mut sel = prepare(&c, "SELECT c, a, b FROM t");
    assert_eq!(
        run(&mut sel, &[]).unwrap(),
        vec![vec![text("z"), int(5), text("c5+")]]
    );

    // An index on an assigned column, created between executions, is kept up to date.
    c.execute_batch("CREATE INDEX tb ON t(b)").unwrap();
    run(&mut upd, &[text("#"), text("w"), int(5)]).unwrap();
    let mut by_index = prepare(&c, "SELECT a FROM t INDEXED BY tb WHERE b = ?");
    assert_eq!(
        run(&mut by_index, &[text("z#")]).unwrap(),
        vec![vec![int(5)]]
    );
    let mut ic = prepare(&c, "PRAGMA integrity_check");
    assert_eq!(run(&mut ic, &[]).unwrap(), vec![vec![text("ok")]]);

    // A column added: still the same columns; a column renamed away: SQLite's error.
    c.execute_batch("ALTER TABLE t ADD COLUMN d TEXT").unwrap();
    run(&mut upd, &[text("1"), text("v"), int(5)]).unwrap();
    assert_eq!(c.changes(), 1);
    c.execute_batch("ALTER TABLE t RENAME COLUMN c TO cc")
        .unwrap();
    let e = run(&mut upd, &[text("2"), text("u"), int(5)]).unwrap_err();
    assert!(e.to_string().contains("no such column: c"), "{e}");
    c.execute_batch("ALTER TABLE t RENAME COLUMN cc TO c")
        .unwrap();
    run(&mut upd, &[text("3"), text("t"), int(5)]).unwrap();
    let mut sel = prepare(&c, "SELECT c, b FROM t");
    assert_eq!(
        run(&mut sel, &[]).unwrap(),
        vec![vec![text("t"), text("v3")]]
    );
}

/// The kept SET clause belongs to the top-level UPDATE only: a trigger program's UPDATEs
/// (fired by the UPDATE itself or by a reused DELETE) bind their own every time, and a
/// trigger created between executions (a schema change) fires from the next one.
#[test]
fn update_set_clause_is_not_lent_to_trigger_programs() {
    let c = Connection::open(":memory:").unwrap();
    c.execute_batch(
        "CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT);
         CREATE TABLE log(n INTEGER PRIMARY KEY, what TEXT, cnt INTEGER DEFAULT 0);
         INSERT INTO log(n, what) VALUES (1, ''), (2, '');
         INSERT INTO t VALUES (1,'a'),(2,'b'),(3,'c');
         CREATE TRIGGER tu AFTER UPDATE OF v ON t BEGIN
           UPDATE log SET what = what || new.v, cnt = cnt + 1 WHERE n = 1;
         END;
         CREATE TRIGGER td AFTER DELETE ON t BEGIN
           UPDATE log SET cnt = cnt + 10, what = old.v WHERE n = 2;
         END;",
    )
    .unwrap();
    let mut upd = prepare(&c, "UPDATE t SET v = v || ? WHERE k = ?");
    let mut del = prepare(&c, "DELETE FROM t WHERE k = ?");
    let mut log = prepare(&c, "SELECT n, what, cnt FROM log ORDER BY n");
    for (k, s) in [(1, "x"), (2, "y"), (1, "z")] {
        run(&mut upd, &[text(s), int(k)]).unwrap();
        assert_eq!(c.changes(), 1);
    }
    run(&mut del, &[int(3)]).unwrap();
    run(&mut del, &[int(2)]).unwrap();
    assert_eq!(c.changes(), 1);
    assert_eq!(
        run(&mut log, &[]).unwrap(),
        vec![
            vec![int(1), text("axbyaxz"), int(3)],
            vec![int(2), text("by"), int(20)]
        ]
    );
    // A BEFORE trigger added between executions fires on the next one.
    c.execute_batch(
        "CREATE TRIGGER tb BEFORE UPDATE ON t BEGIN
           UPDATE log SET cnt = cnt + 100 WHERE n = 2;
         END;",
    )
    .unwrap();
    run(&mut upd, &[text("!"), int(1)]).unwrap();
    assert_eq!(
        run(&mut log, &[]).unwrap(),
        vec![
            vec![int(1), text("axbyaxzaxz!"), int(4)],
            vec![int(2), text("by"), int(120)]
        ]
    );
}

/// A reused UPDATE that failed (constraint, or an error evaluating its SET clause) undoes
/// only itself and runs correctly again with new bindings.
#[test]
fn update_set_clause_survives_failed_executions() {
    let c = Connection::open(":memory:").unwrap();
    c.execute_batch(
        "CREATE TABLE t(k INTEGER PRIMARY KEY, v INTEGER NOT NULL, u TEXT UNIQUE);
         INSERT INTO t VALUES (1, 10, 'p'), (2, 20, 'q');",
    )
    .unwrap();
    let mut upd = prepare(&c, "UPDATE t SET v = abs(?1), u = ?2 WHERE k = ?3");
    run(&mut upd, &[int(-5), text("r"), int(1)]).unwrap();
    assert_eq!(c.changes(), 1);
    let e = run(&mut upd, &[Value::Null, text("s"), int(1)]).unwrap_err();
    assert!(
        e.to_string().contains("NOT NULL constraint failed: t.v"),
        "{e}"
    );
    let e = run(&mut upd, &[int(1), text("q"), int(1)]).unwrap_err();
    assert!(
        e.to_string().contains("UNIQUE constraint failed: t.u"),
        "{e}"
    );
    let e = run(&mut upd, &[int(i64::MIN), text("t"), int(1)]).unwrap_err();
    assert!(e.to_string().contains("integer overflow"), "{e}");
    run(&mut upd, &[int(-7), text("t"), int(2)]).unwrap();
    assert_eq!(c.changes(), 1);
    let mut sel = prepare(&c, "SELECT k, v, u FROM t ORDER BY k");
    assert_eq!(
        run(&mut sel, &[]).unwrap(),
        vec![
            vec![int(1), int(5), text("r")],
            vec![int(2), int(7), text("t")]
        ]
    );
}

/// A reused DELETE or UPDATE keeps its resolved table and triggers (exec::BoundDml) only
/// while the schema is unchanged: triggers created or dropped in between fire or stop, and
/// a table replaced by a view with INSTEAD OF triggers sends the rows to them.
#[test]
fn delete_and_update_resolve_their_table_and_triggers_again_after_schema_changes() {
    let c = Connection::open(":memory:").unwrap();
    c.execute_batch(
        "CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT);
         CREATE TABLE log(what TEXT);
         INSERT INTO t VALUES (1,'a'),(2,'b'),(3,'c'),(4,'d');",
    )
    .unwrap();
    let mut del = prepare(&c, "DELETE FROM t WHERE k = ?");
    let mut upd = prepare(&c, "UPDATE t SET v = ? WHERE k = ?");
    let mut log = prepare(&c, "SELECT what FROM log");
    run(&mut del, &[int(1)]).unwrap();
    run(&mut upd, &[text("B"), int(2)]).unwrap();
    assert_eq!(run(&mut log, &[]).unwrap(), Vec::<Vec<Value>>::new());

    c.execute_batch(
        "CREATE TRIGGER td AFTER DELETE ON t BEGIN INSERT INTO log VALUES ('del ' || old.v); END;
         CREATE TRIGGER tu BEFORE UPDATE ON t BEGIN INSERT INTO log VALUES ('upd ' || new.v); END;",
    )
    .unwrap();
    run(&mut del, &[int(3)]).unwrap();
    assert_eq!(c.changes(), 1);
    run(&mut upd, &[text("D"), int(4)]).unwrap();
    assert_eq!(c.changes(), 1);
    assert_eq!(
        run(&mut log, &[]).unwrap(),
        vec![vec![text("del c")], vec![text("upd D")]]
    );

    c.execute_batch("DROP TRIGGER td; DROP TRIGGER tu; DELETE FROM log;")
        .unwrap();
    run(&mut del, &[int(4)]).unwrap();
    run(&mut upd, &[text("X"), int(2)]).unwrap();
    assert_eq!(run(&mut log, &[]).unwrap(), Vec::<Vec<Value>>::new());

    // The table becomes a view: without INSTEAD OF triggers SQLite's error, with them the
    // triggers get the rows.
    c.execute_batch(
        "ALTER TABLE t RENAME TO t0;
         CREATE VIEW t AS SELECT k, v FROM t0;",
    )
    .unwrap();
    let e = run(&mut del, &[int(2)]).unwrap_err();
    assert!(
        e.to_string()
            .contains("cannot modify t because it is a view"),
        "{e}"
    );
    c.execute_batch(
        "CREATE TRIGGER vd INSTEAD OF DELETE ON t BEGIN INSERT INTO log VALUES ('vdel ' || old.v); END;
         CREATE TRIGGER vu INSTEAD OF UPDATE ON t BEGIN INSERT INTO log VALUES ('vupd ' || new.v); END;",
    )
    .unwrap();
    run(&mut upd, &[text("Y"), int(2)]).unwrap();
    run(&mut del, &[int(2)]).unwrap();
    assert_eq!(
        run(&mut log, &[]).unwrap(),
        vec![vec![text("vupd Y")], vec![text("vdel X")]]
    );
    let mut rest = prepare(&c, "SELECT k, v FROM t0");
    assert_eq!(run(&mut rest, &[]).unwrap(), vec![vec![int(2), text("X")]]);
}

/// The statement's cached row-search plan belongs to the top-level statement: a reused
/// DELETE whose own row search takes no plan (a rowid lookup) must not hand the slot to the
/// UPDATEs its triggers run, or the next execution would run one trigger's plan for
/// another trigger's table.
#[test]
fn trigger_programs_never_take_the_statements_plan() {
    let c = Connection::open(":memory:").unwrap();
    c.execute_batch(
        "CREATE TABLE t(k INTEGER PRIMARY KEY, v INTEGER);
         CREATE TABLE a(x INTEGER, y INTEGER);
         CREATE TABLE b(p INTEGER, q INTEGER, r TEXT);
         INSERT INTO t VALUES (1, 1), (2, 2), (3, 1);
         INSERT INTO a VALUES (5, 0);
         INSERT INTO b VALUES (7, 8, 'r');
         CREATE TRIGGER t1 AFTER DELETE ON t WHEN old.v = 1 BEGIN
           UPDATE a SET y = y + 1 WHERE x > 0;
         END;
         CREATE TRIGGER t2 AFTER DELETE ON t WHEN old.v = 2 BEGIN
           UPDATE b SET r = r || '!' WHERE p > 0;
         END;",
    )
    .unwrap();
    let mut del = prepare(&c, "DELETE FROM t WHERE k = ?");
    for k in 1..=3 {
        run(&mut del, &[int(k)]).unwrap();
        assert_eq!(c.changes(), 1);
    }
    let mut a = prepare(&c, "SELECT x, y FROM a");
    let mut b = prepare(&c, "SELECT p, q, r FROM b");
    assert_eq!(run(&mut a, &[]).unwrap(), vec![vec![int(5), int(2)]]);
    assert_eq!(
        run(&mut b, &[]).unwrap(),
        vec![vec![int(7), int(8), text("r!")]]
    );
}
