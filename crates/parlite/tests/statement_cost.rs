//! The cheaper preparation paths of one-shot statements (issue 4, speedtest1's tens of
//! thousands of one-row statements) give what SQLite gives: INSERT ... VALUES rows read
//! straight from the tree (`plan::values`), and the binder's shared scope names.

mod common;
use common::*;
use parlite::{Connection, Value};

fn check(script: &str) {
    check_script(script, Compare::default());
}

#[test]
fn insert_values_of_literals_and_their_fallbacks() {
    check(
        "
CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL, d BLOB, e);
INSERT INTO t VALUES(1,'one',1.5,x'00ff',NULL);
INSERT INTO t VALUES(2,'2',2,'x',2.0),(3,3,'3.5',3,'3');
REPLACE INTO t VALUES(1,'uno',1e3,NULL,-1);
INSERT OR REPLACE INTO t VALUES(3,'tres',+3,-4.5,- -5);
INSERT INTO t(e,a) VALUES('last',10);
INSERT INTO t(rowid,b) VALUES(20,'by rowid');
INSERT INTO t VALUES(1,'dup',0,0,0);
INSERT INTO t VALUES(30,'short');
INSERT INTO t(a,b) VALUES(31,'x','y');
INSERT INTO t VALUES(36,'x',1,2,3) UNION ALL VALUES(37,'y',1,2,3);
WITH w(x) AS (VALUES(1)) INSERT INTO t VALUES(38,'with',1,2,3);
INSERT INTO t VALUES(39,'expr',1+1,abs(-2),(SELECT max(a) FROM t));
INSERT INTO t VALUES(40, typeof(CURRENT_DATE), length(CURRENT_TIME), NULL, NULL);
SELECT a, b, typeof(b), c, typeof(c), d, typeof(d), e, typeof(e) FROM t ORDER BY a;
CREATE TABLE w(k TEXT PRIMARY KEY, v INT) WITHOUT ROWID;
REPLACE INTO w VALUES('one', 1);
REPLACE INTO w VALUES('one', '2');
INSERT INTO w VALUES('two', 2.0), ('three', '3e0');
INSERT INTO w VALUES('one', 9);
SELECT k, v, typeof(v) FROM w ORDER BY k;
CREATE TABLE g(a INTEGER PRIMARY KEY, b, c AS (b * 2), d DEFAULT 'dflt');
INSERT INTO g VALUES(1, 5);
INSERT INTO g VALUES(2, 6, 7);
INSERT INTO g(a, b) VALUES(3, 8);
SELECT * FROM g ORDER BY a;
CREATE TABLE log(x);
CREATE TRIGGER tr AFTER INSERT ON g BEGIN INSERT INTO log VALUES('g'); INSERT INTO log VALUES(new.b); END;
INSERT INTO g(a, b) VALUES(4, 9);
SELECT x, typeof(x) FROM log;
",
    );
}

/// Parameters of a reused prepared INSERT take each execution's bindings (NULL when
/// unbound), as the bound-SELECT path gave them.
#[test]
fn insert_values_with_parameters() {
    let c = Connection::open(":memory:").unwrap();
    c.execute_batch("CREATE TABLE t(a INTEGER PRIMARY KEY, b, c)")
        .unwrap();
    let (mut st, _) = c
        .prepare("INSERT INTO t VALUES(?1, ?2, :c)")
        .unwrap()
        .unwrap();
    for i in 1..=3i64 {
        st.bind(1, Value::Integer(i)).unwrap();
        st.bind(2, Value::Text(format!("v{i}"))).unwrap();
        if i != 2 {
            st.bind(3, Value::Real(i as f64 / 2.0)).unwrap();
        }
        while st.step().unwrap() {}
        st.reset();
        assert_eq!(c.last_insert_rowid(), i);
    }
    let (mut q, _) = c
        .prepare("SELECT group_concat(a || ':' || b || ':' || quote(c), ' ') FROM t")
        .unwrap()
        .unwrap();
    assert!(q.step().unwrap());
    // Bindings persist across reset (sqlite3_reset keeps them), so row 2 reuses 0.5.
    assert_eq!(
        q.column(0),
        Value::Text("1:v1:0.5 2:v2:0.5 3:v3:1.5".into())
    );
    let (mut unbound, _) = c.prepare("INSERT INTO t VALUES(?, ?, ?)").unwrap().unwrap();
    while unbound.step().unwrap() {}
    let (mut q, _) = c
        .prepare("SELECT a, typeof(b), typeof(c) FROM t WHERE a = 4")
        .unwrap()
        .unwrap();
    assert!(q.step().unwrap());
    assert_eq!(q.column(0), Value::Integer(4));
    assert_eq!(q.column(1), Value::Text("null".into()));
}

/// ORDER BY and LIMIT follow only a SELECT core (parse.y `oneselect`): after VALUES they
/// are a syntax error at that word, as in SQLite (parlite used to accept them).
#[test]
fn values_take_no_order_by_or_limit() {
    let p = Connection::open(":memory:").unwrap();
    let s = rusqlite::Connection::open_in_memory().unwrap();
    for sql in [
        "VALUES(1) ORDER BY 1",
        "VALUES(1) LIMIT 1",
        "SELECT 1 UNION VALUES(2) ORDER BY 1",
        "SELECT * FROM (VALUES(1),(2) LIMIT 1)",
        "CREATE TABLE t(a); INSERT INTO t VALUES(1) ORDER BY 1",
        "WITH c AS (SELECT 1) VALUES(3) LIMIT 1",
    ] {
        let want = match s.execute_batch(sql) {
            Err(e) => msg(e),
            Ok(()) => panic!("{sql}: SQLite accepted it"),
        };
        let got = match p.execute_batch(sql) {
            Err(e) => e.message,
            Ok(()) => panic!("{sql}: parlite accepted it"),
        };
        assert_eq!(got, want, "{sql}");
    }
    // A compound ending in a SELECT core still takes them.
    let (mut st, _) = p
        .prepare("VALUES(2) UNION SELECT 1 ORDER BY 1 LIMIT 1")
        .unwrap()
        .unwrap();
    assert!(st.step().unwrap());
    assert_eq!(st.column(0), Value::Integer(1));
}
