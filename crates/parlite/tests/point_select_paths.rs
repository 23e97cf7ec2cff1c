//! Point and range SELECTs through the executor's in-place row paths, against SQLite
//! (rusqlite, bundled): `rowid = ?` on a rowid table (`Store::table_lookup_scan`, by rowid,
//! by its INTEGER PRIMARY KEY alias) and walks of a WITHOUT ROWID table's own tree
//! (`Store::without_rowid_scan`, which decodes each record into its columns' slots and
//! leaves the WHERE terms its bounds imply untested). Covered: misses, NULL keys, the key's
//! type affinity ('5' vs 5 vs 5.0), NOCASE and RTRIM keys, keys in another order than the
//! columns, DESC keys, records written before ADD COLUMN, REAL columns holding integers,
//! inner and outer joins over a kept walk, constant WHERE terms over no row; and on
//! prepared statements: a schema change between prepare and step, a reset in the middle
//! of a result, a step after an error.

mod common;

use common::{check_script, prepare_one, rows_of, sqlite_rows_of, Compare};
use parlite::{Connection, Value};

const SETUP: &str = "
CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL, d);
INSERT INTO t VALUES(1, 'one', 1, 'A'), (2, 'two', 2.5, 'b'), (5, 'five', NULL, 'c '),
    (-3, 'minus three', -3, NULL), (9223372036854775807, 'max', 0, 'zz');
ALTER TABLE t ADD COLUMN e TEXT DEFAULT 'dflt';
INSERT INTO t VALUES(7, 'seven', 7, 'B', 'set');
CREATE TABLE r(x, y REAL);
INSERT INTO r VALUES('x1', 1), ('x2', 2.25), (NULL, NULL);
CREATE TABLE w(k TEXT PRIMARY KEY, v, x REAL) WITHOUT ROWID;
INSERT INTO w VALUES('a', 1, 1), ('b', 'two', 2), ('c', -9223372036854775808, 3.5),
    ('5', 'five', NULL), ('', 'empty', 0);
CREATE TABLE wn(k TEXT COLLATE NOCASE PRIMARY KEY, v) WITHOUT ROWID;
INSERT INTO wn VALUES('a', 'lower a'), ('B', 'upper b'), ('c ', 'c space'), ('zz', 'zz');
CREATE TABLE wr(k TEXT COLLATE RTRIM PRIMARY KEY, v) WITHOUT ROWID;
INSERT INTO wr VALUES('a', 1), ('b  ', 2), ('C', 3);
CREATE TABLE w2(p INT, q TEXT, r, PRIMARY KEY(q, p DESC)) WITHOUT ROWID;
INSERT INTO w2 VALUES(1, 'x', 'x1'), (2, 'x', 'x2'), (1, 'y', 'y1'), (3, 'y', 'y3');
ALTER TABLE w2 ADD COLUMN s DEFAULT 'late';
INSERT INTO w2 VALUES(4, 'x', 'x4', 'now');
CREATE TABLE wi(k INTEGER PRIMARY KEY, v) WITHOUT ROWID;
INSERT INTO wi VALUES(5, 'five'), (6, 'six'), (-1, 'minus one');
CREATE TABLE e(x);
";

/// Each query prepared once and stepped to the end, as a shell runs SQL text.
#[test]
fn one_shot_point_selects_match_sqlite() {
    let queries = [
        // rowid = ? on a rowid table: the alias, rowid and its other names, affinity.
        "SELECT * FROM t WHERE a=5",
        "SELECT b, e FROM t WHERE a=7",
        "SELECT b, e FROM t WHERE a=1",
        "SELECT a, rowid, _rowid_, oid, c FROM t WHERE rowid=1",
        "SELECT c FROM t WHERE a=2",
        "SELECT * FROM t WHERE a='5'",
        "SELECT * FROM t WHERE a=5.0",
        "SELECT * FROM t WHERE a='5.0'",
        "SELECT * FROM t WHERE a=' 5'",
        "SELECT * FROM t WHERE a=5.5",
        "SELECT * FROM t WHERE a='five'",
        "SELECT * FROM t WHERE a=NULL",
        "SELECT * FROM t WHERE a=x'05'",
        "SELECT * FROM t WHERE a=4",
        "SELECT * FROM t WHERE a=-3",
        "SELECT * FROM t WHERE a=9223372036854775807",
        "SELECT * FROM t WHERE a=9223372036854775808",
        "SELECT * FROM t WHERE a=9.3e18",
        "SELECT b FROM t WHERE a=5 AND d='c '",
        "SELECT b FROM t WHERE a=5 AND d='c'",
        "SELECT b FROM t WHERE a=1+1",
        "SELECT b FROM t WHERE a=(SELECT 2)",
        "SELECT count(*), max(b) FROM t WHERE a=2",
        "SELECT rowid, * FROM r WHERE rowid=2",
        "SELECT rowid, y FROM r WHERE rowid='1'",
        "SELECT * FROM r WHERE rowid=3",
        "SELECT * FROM r WHERE rowid=4",
        // The own tree of a WITHOUT ROWID table.
        "SELECT v FROM w WHERE k='a'",
        "SELECT * FROM w WHERE k='c'",
        "SELECT x, k FROM w WHERE k='b'",
        "SELECT * FROM w WHERE k=''",
        "SELECT * FROM w WHERE k='A'",
        "SELECT * FROM w WHERE k='d'",
        "SELECT * FROM w WHERE k=NULL",
        "SELECT * FROM w WHERE k=5",
        "SELECT * FROM w WHERE k='5'",
        "SELECT * FROM w WHERE k=5.0",
        "SELECT v FROM w WHERE k='a' AND v=1",
        "SELECT v FROM w WHERE k='a' AND v=2",
        "SELECT v FROM w WHERE k='a' AND x>0",
        "SELECT k, v FROM w WHERE k>'a' AND k<'c'",
        "SELECT k FROM w WHERE k BETWEEN '' AND 'b'",
        "SELECT k FROM w WHERE k>='b' ORDER BY k DESC",
        "SELECT k FROM w WHERE k<'b' ORDER BY k DESC",
        "SELECT k FROM w WHERE k>'zz'",
        "SELECT count(*), sum(x) FROM w WHERE k>='a'",
        "SELECT v FROM wn WHERE k='A'",
        "SELECT v FROM wn WHERE k='b'",
        "SELECT k, v FROM wn WHERE k='C '",
        "SELECT k, v FROM wn WHERE k='c'",
        "SELECT k, v FROM wn WHERE k='a' COLLATE BINARY",
        "SELECT k, v FROM wn WHERE k='A' COLLATE BINARY",
        "SELECT k FROM wn WHERE k>'A' AND k<'Z'",
        "SELECT k FROM wn WHERE k>='b' ORDER BY k DESC",
        "SELECT v FROM wr WHERE k='a   '",
        "SELECT k, v FROM wr WHERE k='b'",
        "SELECT k, v FROM wr WHERE k='c'",
        "SELECT k, v FROM wr WHERE k='b' COLLATE BINARY",
        "SELECT * FROM w2 WHERE q='x' AND p=2",
        "SELECT * FROM w2 WHERE q='x' AND p='4'",
        "SELECT * FROM w2 WHERE q='x'",
        "SELECT r, s FROM w2 WHERE q='y' ORDER BY p",
        "SELECT * FROM w2 WHERE q='x' AND p>1",
        "SELECT * FROM w2 WHERE q='z'",
        "SELECT * FROM w2 WHERE q='x' AND p=NULL",
        "SELECT v FROM wi WHERE k=5",
        "SELECT v FROM wi WHERE k='5'",
        "SELECT v FROM wi WHERE k=5.0",
        "SELECT v FROM wi WHERE k='-1'",
        "SELECT v FROM wi WHERE k=5.5",
        // A constant WHERE term is evaluated once before the loop, also over no row
        // (`CExpr::is_constant` answers a comparison with a column without its walk).
        "SELECT * FROM e WHERE abs(-9223372036854775808)=1",
        "SELECT * FROM e WHERE 1=abs(-9223372036854775808)",
        "SELECT * FROM e WHERE x=abs(-9223372036854775808)",
        "SELECT * FROM t WHERE a=4 AND abs(-9223372036854775808)=1",
        "SELECT * FROM w WHERE k='a' AND abs(-9223372036854775808)=1",
        "SELECT * FROM e WHERE x=x",
        // Aggregates without GROUP BY over these paths: one row, also over no row.
        "SELECT count(*), avg(b), sum(length(c)), group_concat(a) FROM t WHERE a BETWEEN 1 AND 5",
        "SELECT count(*), group_concat(k) FROM w WHERE k>'zz'",
        "SELECT count(*), b FROM t WHERE a=4",
        "SELECT max(a), b FROM t WHERE a=5",
        "SELECT count(*) FROM t WHERE a=4 HAVING count(*)>0",
        "SELECT count(*) FROM w WHERE k='a' HAVING count(*)>0",
        // Joins: the inner walk restarted for each outer row (a kept walk), its implied
        // terms skipped only for an inner join.
        "SELECT t.a, wn.k, wn.v FROM t JOIN wn ON wn.k=t.d ORDER BY t.a",
        "SELECT t.a, wn.k, wn.v FROM t LEFT JOIN wn ON wn.k=t.d ORDER BY t.a",
        "SELECT t.a, w.v FROM t JOIN w ON w.k=t.d WHERE w.v IS NOT NULL ORDER BY t.a",
        "SELECT w2.q, w2.p, w2.s, wr.v FROM w2 JOIN wr ON wr.k=w2.q ORDER BY 1, 2",
        "SELECT w2.q, w2.p, w2.s, wr.v FROM w2 LEFT JOIN wr ON wr.k=w2.q ORDER BY 1, 2",
        "SELECT wi.k, t.b, t.e FROM wi JOIN t ON t.a=wi.k ORDER BY wi.k",
        "SELECT wi.k, t.b FROM wi LEFT JOIN t ON t.a=wi.k ORDER BY wi.k",
        "SELECT wi.k, (SELECT v FROM w WHERE k=CAST(wi.k AS TEXT)) FROM wi ORDER BY 1",
    ];
    let mut script = SETUP.to_string();
    for q in queries {
        script.push_str(q);
        script.push_str(";\n");
    }
    check_script(&script, Compare::default());
}

/// Prepared statements stepped through the same paths in both engines: bindings of every
/// storage class for the key, a reset in the middle of a result, a step after an error,
/// and schema changes between prepare and step.
#[test]
fn prepared_point_selects_match_sqlite() {
    let c = Connection::open(":memory:").unwrap();
    let s = rusqlite::Connection::open_in_memory().unwrap();
    c.execute_batch(SETUP).unwrap();
    s.execute_batch(SETUP).unwrap();
    let keys = [
        Value::Integer(5),
        Value::Text("5".into()),
        Value::Real(5.0),
        Value::Text("5.0".into()),
        Value::Real(5.5),
        Value::Null,
        Value::Blob(b"5".to_vec()),
        Value::Text("a".into()),
        Value::Text("A".into()),
        Value::Text("a  ".into()),
        Value::Text("c".into()),
        Value::Text("".into()),
        Value::Integer(1),
        Value::Integer(-3),
        Value::Integer(7),
    ];
    let queries = [
        "SELECT * FROM t WHERE a=?",
        "SELECT b, rowid FROM t WHERE rowid=?",
        "SELECT * FROM w WHERE k=?",
        "SELECT k, v FROM wn WHERE k=?",
        "SELECT k, v FROM wr WHERE k=?",
        "SELECT * FROM w2 WHERE q='x' AND p=?",
        "SELECT v FROM wi WHERE k=?",
    ];
    for q in queries {
        let mut p = prepare_one(&c, q);
        let mut st = s.prepare(q).unwrap();
        for k in &keys {
            let b = [k.clone()];
            assert_eq!(
                rows_of(&mut p, &b),
                sqlite_rows_of(&mut st, &b),
                "{q} with {k:?}"
            );
        }
    }
}

#[test]
fn reset_mid_result_and_step_after_error() {
    let c = Connection::open(":memory:").unwrap();
    let s = rusqlite::Connection::open_in_memory().unwrap();
    c.execute_batch(SETUP).unwrap();
    s.execute_batch(SETUP).unwrap();
    // A range of the WITHOUT ROWID tree, reset after its first row, then stepped again:
    // the rows from the start.
    let q = "SELECT k, v FROM w WHERE k>=? ORDER BY k";
    let mut p = prepare_one(&c, q);
    let mut st = s.prepare(q).unwrap();
    let b = [Value::Text("".into())];
    p.bind(1, b[0].clone()).unwrap();
    assert!(p.step().unwrap());
    assert_eq!(p.column(0), Value::Text("".into()));
    p.reset();
    assert_eq!(rows_of(&mut p, &b), sqlite_rows_of(&mut st, &b));
    // A point lookup by rowid, reset before its row was read.
    let q = "SELECT b FROM t WHERE a=?";
    let mut p = prepare_one(&c, q);
    p.bind(1, Value::Integer(2)).unwrap();
    p.reset();
    let mut st = s.prepare(q).unwrap();
    let b = [Value::Integer(2)];
    assert_eq!(rows_of(&mut p, &b), sqlite_rows_of(&mut st, &b));
    // abs() of the smallest integer fails on the row found (the first of the range: the
    // executor computes a result whole at its first step, so rows before a failing one
    // are not returned, where SQLite returns them); the next executions, of other keys,
    // give their rows.
    for q in [
        "SELECT abs(v) FROM w WHERE k=?",
        "SELECT abs(v) FROM w WHERE k<=? ORDER BY k DESC",
    ] {
        let mut p = prepare_one(&c, q);
        let mut st = s.prepare(q).unwrap();
        p.bind(1, Value::Text("c".into())).unwrap();
        let e = loop {
            match p.step() {
                Ok(true) => continue,
                Ok(false) => panic!("{q}: no error"),
                Err(e) => break e,
            }
        };
        assert_eq!(e.message, "integer overflow");
        st.raw_bind_parameter(1, "c").unwrap();
        assert!(st.raw_query().next().is_err());
        for k in ["a", "b", "c", "a"] {
            let b = [Value::Text(k.into())];
            let mut ours = Vec::new();
            for (i, v) in b.iter().enumerate() {
                p.bind(i + 1, v.clone()).unwrap();
            }
            loop {
                match p.step() {
                    Ok(true) => ours.push(vec![p.column(0)]),
                    Ok(false) => break,
                    Err(e) => {
                        ours.push(vec![Value::Text(e.message)]);
                        break;
                    }
                }
            }
            p.reset();
            let mut theirs = Vec::new();
            st.raw_bind_parameter(1, k).unwrap();
            let mut rows = st.raw_query();
            loop {
                match rows.next() {
                    Ok(Some(r)) => theirs.push(vec![common::sqlite_value(r.get_ref(0).unwrap())]),
                    Ok(None) => break,
                    Err(e) => {
                        theirs.push(vec![Value::Text(common::msg(e))]);
                        break;
                    }
                }
            }
            assert_eq!(ours, theirs, "{q} with {k}");
        }
    }
}

/// The table a prepared statement reads is changed between its executions (and between
/// prepare and the first step): dropped and created again WITHOUT ROWID with its key and
/// columns in another order, turned into a rowid table, given a column.
#[test]
fn schema_change_between_prepare_and_step() {
    let c = Connection::open(":memory:").unwrap();
    let s = rusqlite::Connection::open_in_memory().unwrap();
    c.execute_batch(SETUP).unwrap();
    s.execute_batch(SETUP).unwrap();
    let q = "SELECT * FROM w WHERE k=?";
    let mut p = prepare_one(&c, q);
    let mut st = s.prepare(q).unwrap();
    let changes = [
        "",
        "ALTER TABLE w ADD COLUMN y DEFAULT 'new'",
        "INSERT INTO w VALUES('d', 4, 4.0, 'given')",
        "DROP TABLE w; CREATE TABLE w(x REAL, v, k TEXT COLLATE NOCASE, PRIMARY KEY(k)) \
         WITHOUT ROWID; INSERT INTO w VALUES(1.5, 'one', 'A'), (2, 'two', 'b')",
        "DROP TABLE w; CREATE TABLE w(k INTEGER PRIMARY KEY, v); \
         INSERT INTO w VALUES(5, 'five as rowid')",
        "DROP TABLE w; CREATE TABLE w(v, k TEXT PRIMARY KEY) WITHOUT ROWID; \
         INSERT INTO w VALUES('vv', 'a')",
    ];
    for change in changes {
        if !change.is_empty() {
            c.execute_batch(change).unwrap();
            s.execute_batch(change).unwrap();
        }
        for k in [
            Value::Text("a".into()),
            Value::Text("B".into()),
            Value::Text("d".into()),
            Value::Integer(5),
            Value::Text("5".into()),
        ] {
            let b = [k.clone()];
            assert_eq!(
                rows_of(&mut p, &b),
                sqlite_rows_of(&mut st, &b),
                "after {change:?}: {k:?}"
            );
        }
    }
}

/// A file SQLite wrote, read through the same paths: SQLite stores an integral value of a
/// REAL column as an integer (fileformat2.html §2.1), which reads back as a real.
#[test]
fn rows_of_a_file_sqlite_wrote() {
    let db = common::temp_db_path("point-select-paths", "sqlite-file");
    let s = rusqlite::Connection::open(&db).unwrap();
    s.execute_batch(SETUP).unwrap();
    drop(s);
    let c = Connection::open(db.as_ref().to_str().unwrap()).unwrap();
    let mut failures = Vec::new();
    for q in [
        "SELECT a, c, e FROM t WHERE a=1",
        "SELECT a, c FROM t WHERE rowid=-3",
        "SELECT rowid, y FROM r WHERE rowid=1",
        "SELECT * FROM w WHERE k='a'",
        "SELECT * FROM w WHERE k>='a'",
        "SELECT * FROM w2 WHERE q='y' AND p=3",
        "SELECT t.a, t.c, w.x FROM t JOIN w ON w.k=t.b ORDER BY 1",
        "SELECT * FROM w",
        "SELECT x FROM w WHERE v=1",
    ] {
        let (ours, theirs) = (
            common::run_parlite(&c, q),
            common::sqlite_rows(db.as_ref(), q),
        );
        if ours != theirs {
            failures.push(format!("{q}\n  sqlite:  {theirs:?}\n  parlite: {ours:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
