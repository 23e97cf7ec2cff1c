mod common;
use parlite::{Connection, Value};

fn rows(c: &Connection, sql: &str) -> Vec<Vec<Value>> {
    let (mut st, _) = c
        .prepare(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .expect("statement");
    let mut out = Vec::new();
    while st.step().unwrap_or_else(|e| panic!("{sql}: {e}")) {
        out.push((0..st.column_count()).map(|i| st.column(i)).collect());
    }
    out
}

#[test]
fn smoke() {
    let c = Connection::open(":memory:").unwrap();
    c.execute_batch("CREATE TABLE t1(a INTEGER PRIMARY KEY, b TEXT, c REAL); INSERT INTO t1(b,c) VALUES('x',1.5),('y',2); CREATE INDEX i1 ON t1(b);").unwrap();
    assert_eq!(
        rows(&c, "SELECT a, b, c FROM t1 ORDER BY a"),
        vec![
            vec![Value::Integer(1), Value::Text("x".into()), Value::Real(1.5)],
            vec![Value::Integer(2), Value::Text("y".into()), Value::Real(2.0)],
        ]
    );
    assert_eq!(
        rows(&c, "SELECT count(*), sum(c) FROM t1 WHERE b = 'y'"),
        vec![vec![Value::Integer(1), Value::Real(2.0)]]
    );
    assert_eq!(
        rows(
            &c,
            "SELECT type, name, tbl_name, rootpage, sql FROM sqlite_master ORDER BY name"
        )
        .len(),
        2
    );
    let e = c.execute_batch("INSERT INTO t1(a) VALUES(1)").unwrap_err();
    assert_eq!(e.message, "UNIQUE constraint failed: t1.a");
    assert_eq!(c.last_insert_rowid(), 2);
}

#[test]
fn file_database_round_trip_with_sqlite() {
    let dir = common::TempDir::new("smoke");
    let path = dir.join("a.db");
    let p = path.to_str().expect("utf8 path");
    {
        let c = Connection::open(p).unwrap();
        c.execute_batch("CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT UNIQUE); INSERT INTO t(b) VALUES('x'),('y'); CREATE INDEX tb ON t(b, a);").unwrap();
    }
    {
        let c = Connection::open(p).unwrap();
        assert_eq!(
            rows(&c, "SELECT a, b FROM t WHERE b = 'y'"),
            vec![vec![Value::Integer(2), Value::Text("y".into())]]
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn opens_a_database_written_by_sqlite() {
    let dir = common::TempDir::new("compat");
    let path = dir.join("s.db");
    {
        let s = rusqlite::Connection::open(&path).unwrap();
        s.execute_batch(
            "CREATE TABLE artist(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE, born INT);
             CREATE INDEX artist_born ON artist(born DESC);
             CREATE VIEW old AS SELECT name FROM artist WHERE born < 1950;
             CREATE TABLE log(msg);
             CREATE TRIGGER t_ins AFTER INSERT ON artist BEGIN INSERT INTO log VALUES(new.name); END;
             INSERT INTO artist(name, born) VALUES('a', 1940), ('b', 1960), ('c', 1930);",
        )
        .unwrap();
    }
    let p = path.to_str().expect("utf8 path");
    let c = Connection::open(p).unwrap();
    assert_eq!(
        rows(&c, "SELECT name FROM old ORDER BY name"),
        vec![vec![Value::Text("a".into())], vec![Value::Text("c".into())]]
    );
    assert_eq!(
        rows(&c, "SELECT name FROM artist WHERE born = 1960"),
        vec![vec![Value::Text("b".into())]]
    );
    c.execute_batch("INSERT INTO artist(name, born) VALUES('d', 2000)")
        .unwrap();
    assert_eq!(
        rows(&c, "SELECT count(*) FROM log"),
        vec![vec![Value::Integer(4)]]
    );
    assert_eq!(
        rows(&c, "SELECT seq FROM sqlite_sequence WHERE name = 'artist'"),
        vec![vec![Value::Integer(4)]]
    );
    let e = c
        .execute_batch("INSERT INTO artist(name) VALUES('a')")
        .unwrap_err();
    assert_eq!(e.message, "UNIQUE constraint failed: artist.name");
    assert_eq!(
        rows(&c, "PRAGMA integrity_check"),
        vec![vec![Value::Text("ok".into())]]
    );
    drop(c);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn unsupported_objects_do_not_block_the_rest_of_a_sqlite_file() {
    let dir = common::TempDir::new("unsup");
    let path = dir.join("u.db");
    {
        let s = rusqlite::Connection::open(&path).unwrap();
        s.execute_batch(
            "CREATE TABLE w(b, a TEXT PRIMARY KEY, c UNIQUE) WITHOUT ROWID;
             INSERT INTO w VALUES(1, 'k2', 'x'), (2, 'k1', 'y');
             CREATE TABLE e(x, y);
             CREATE INDEX e_expr ON e(x + y);
             CREATE TABLE ok(v);
             INSERT INTO ok VALUES(1); INSERT INTO e VALUES(1, 2);",
        )
        .unwrap();
    }
    let c = Connection::open(path.to_str().expect("utf8")).unwrap();
    assert_eq!(rows(&c, "SELECT v FROM ok"), vec![vec![Value::Integer(1)]]);
    assert_eq!(
        rows(&c, "SELECT x, y FROM e"),
        vec![vec![Value::Integer(1), Value::Integer(2)]]
    );
    // Expression indexes are maintained (expr_index.rs has the thorough tests).
    c.execute_batch("INSERT INTO e VALUES(3, 4)").unwrap();
    assert_eq!(
        rows(&c, "PRAGMA integrity_check"),
        vec![vec![Value::Text("ok".into())]]
    );
    assert_eq!(
        rows(&c, "SELECT a, b, c FROM w WHERE b > 0"),
        vec![
            vec![
                Value::Text("k1".into()),
                Value::Integer(2),
                Value::Text("y".into())
            ],
            vec![
                Value::Text("k2".into()),
                Value::Integer(1),
                Value::Text("x".into())
            ],
        ]
    );
    // WITHOUT ROWID tables are written too (without_rowid.rs has the thorough tests).
    c.execute_batch("INSERT INTO w VALUES(3, 'k3', 'z')")
        .unwrap();
    c.execute_batch("CREATE TABLE w2(a PRIMARY KEY) WITHOUT ROWID")
        .unwrap();
    assert_eq!(
        rows(&c, "SELECT count(*) FROM w WHERE a = 'k3' AND c = 'z'"),
        vec![vec![Value::Integer(1)]]
    );
    drop(c);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn api_types_are_thread_safe() {
    fn send<T: Send>() {}
    fn sync<T: Sync>() {}
    send::<Connection>();
    send::<parlite::Statement>();
    send::<parlite::Database>();
    sync::<parlite::Database>();
}

#[test]
fn two_connections_share_data_and_schema_changes() {
    let dir = common::TempDir::new("two");
    let path = dir.join("t.db");
    let db = parlite::Database::open(path.to_str().expect("utf8")).unwrap();
    let a = db.connect().unwrap();
    let b = db.connect().unwrap();
    a.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES(1);")
        .unwrap();
    assert_eq!(rows(&b, "SELECT x FROM t"), vec![vec![Value::Integer(1)]]);
    // b's cached schema must notice a's change.
    a.execute_batch("CREATE INDEX tx ON t(x); ALTER TABLE t ADD COLUMN y DEFAULT 7;")
        .unwrap();
    assert_eq!(
        rows(&b, "SELECT x, y FROM t WHERE x = 1"),
        vec![vec![Value::Integer(1), Value::Integer(7)]]
    );
    // An open read transaction keeps its snapshot.
    b.execute_batch("BEGIN").unwrap();
    assert_eq!(
        rows(&b, "SELECT count(*) FROM t"),
        vec![vec![Value::Integer(1)]]
    );
    a.execute_batch("INSERT INTO t(x) VALUES(2)").unwrap();
    assert_eq!(
        rows(&b, "SELECT count(*) FROM t"),
        vec![vec![Value::Integer(1)]]
    );
    b.execute_batch("COMMIT").unwrap();
    assert_eq!(
        rows(&b, "SELECT count(*) FROM t"),
        vec![vec![Value::Integer(2)]]
    );
    assert!(a.is_autocommit() && b.is_autocommit());
    drop((a, b, db));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn statements_bind_parameters_and_report_columns() {
    let c = Connection::open(":memory:").unwrap();
    c.execute_batch("CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT)")
        .unwrap();
    let (mut ins, tail) = c
        .prepare("INSERT INTO t(b) VALUES(:name); SELECT 1")
        .unwrap()
        .unwrap();
    assert_eq!(tail, " SELECT 1");
    assert_eq!(ins.parameter_count(), 1);
    assert_eq!(ins.parameter_index(":name"), Some(1));
    for name in ["x", "y"] {
        ins.reset();
        ins.bind(1, Value::Text(name.into())).unwrap();
        assert!(!ins.step().unwrap());
    }
    assert_eq!(c.changes(), 1);
    assert_eq!(c.total_changes(), 2);
    assert_eq!(c.last_insert_rowid(), 2);
    assert!(ins.bind(2, Value::Null).is_err());
    let (st, _) = c
        .prepare("SELECT a AS id, b, a + 1, t.b FROM t")
        .unwrap()
        .unwrap();
    let names: Vec<&str> = (0..st.column_count()).map(|i| st.column_name(i)).collect();
    assert_eq!(names, ["id", "b", "a + 1", "b"]);
    assert!(st.readonly());
    assert!(c.prepare("  -- nothing\n").unwrap().is_none());
    let e = c.prepare("SELEC 1").err().unwrap();
    assert_eq!(
        (e.code, e.message.as_str()),
        (1, "near \"SELEC\": syntax error")
    );
    let e = c.prepare("SELECT * FROM nope").err().unwrap();
    assert_eq!(e.message, "no such table: nope");
}

#[test]
fn sqlite_reads_what_parlite_wrote() {
    let dir = common::TempDir::new("rev");
    let path = dir.join("p.db");
    {
        let c = Connection::open(path.to_str().expect("utf8")).unwrap();
        c.execute_batch(
            "CREATE TABLE t(a INTEGER PRIMARY KEY AUTOINCREMENT, b TEXT UNIQUE, c REAL);
             CREATE INDEX tc ON t(c DESC);
             CREATE VIEW v AS SELECT b FROM t WHERE c > 1;
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500)
               INSERT INTO t(b, c) SELECT 'row' || i, i / 7.0 FROM n;
             DELETE FROM t WHERE a % 3 = 0;",
        )
        .unwrap();
    }
    let s = rusqlite::Connection::open(&path).unwrap();
    let ok: String = s
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
    let n: i64 = s
        .query_row("SELECT count(*) FROM v", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, (8..=500).filter(|i| i % 3 != 0).count() as i64);
    let seq: i64 = s
        .query_row(
            "SELECT seq FROM sqlite_sequence WHERE name = 't'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(seq, 500);
    let _ = std::fs::remove_dir_all(&dir);
}
