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
