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
    let dir = std::env::temp_dir().join(format!("parlite-smoke-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join("a.db");
    let _ = std::fs::remove_file(&path);
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
    let dir = std::env::temp_dir().join(format!("parlite-compat-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join("s.db");
    let _ = std::fs::remove_file(&path);
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
    let dir = std::env::temp_dir().join(format!("parlite-unsup-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join("u.db");
    let _ = std::fs::remove_file(&path);
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
    let e = c.execute_batch("INSERT INTO e VALUES(3, 4)").unwrap_err();
    assert!(e.message.contains("read-only"), "{}", e.message);
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
    let e = c
        .execute_batch("INSERT INTO w VALUES(3, 'k3', 'z')")
        .unwrap_err();
    assert!(e.message.contains("WITHOUT ROWID"), "{}", e.message);
    let e = c
        .execute_batch("CREATE TABLE w2(a PRIMARY KEY) WITHOUT ROWID")
        .unwrap_err();
    assert!(e.message.contains("WITHOUT ROWID"), "{}", e.message);
    drop(c);
    let _ = std::fs::remove_dir_all(&dir);
}
