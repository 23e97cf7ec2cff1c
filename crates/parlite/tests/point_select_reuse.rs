//! A reused prepared index walk against SQLite (rusqlite, bundled): the key buffers a
//! connection keeps between statements (`IdleCursors`) and the far bound that reuses the
//! near bound's encoding (`IndexIter::far_is_near`) must give every execution the rows of a
//! fresh statement: keys of growing and shrinking size (a buffer left longer by the last
//! probe), a key past the kept-buffer limit, bounds equal in value but not in encoding
//! (0.0 and -0.0, 1 and 1.0, 'a' and 'A' under NOCASE), equal bounds with one excluded,
//! and, between executions, a schema change or a commit by another connection, a write by
//! the same connection, and a reset in the middle of a result.

mod common;

use common::{prepare_one, rows_of, sqlite_rows_of};
use parlite::{Connection, Database, Value};

fn text(s: &str) -> Value {
    Value::Text(s.to_string())
}

/// Key `i` of `kv`: 2 to 44 bytes, so consecutive probes grow and shrink the key buffer.
fn key(i: usize) -> Value {
    text(&format!("{}-{i}", (i % 10).to_string().repeat(1 + i % 37)))
}

const SETUP: &str = "
    CREATE TABLE kv(key TEXT PRIMARY KEY, value TEXT);
    CREATE TABLE nc(k TEXT COLLATE NOCASE UNIQUE, v INTEGER);
    CREATE TABLE num(k REAL UNIQUE, v TEXT);
    CREATE TABLE two(a INTEGER, b BLOB, v TEXT, UNIQUE(a, b));
    CREATE INDEX num_v ON num(v);
    INSERT INTO nc VALUES('a', 1), ('B', 2), ('c', 3);
    INSERT INTO num VALUES(0.0, 'zero'), (1, 'one'), (2.5, 'two and a half'), (-1, 'minus');
";

/// The same reused statements and bindings through both engines, one connection each.
#[test]
fn reused_index_walks_match_sqlite() {
    let c = Connection::open(":memory:").unwrap();
    let s = rusqlite::Connection::open_in_memory().unwrap();
    c.execute_batch(SETUP).unwrap();
    s.execute_batch(SETUP).unwrap();
    let big = vec![7u8; 10_000];
    let mut fill_p = prepare_one(&c, "INSERT INTO kv VALUES(?, ?)");
    let mut fill_s = s.prepare("INSERT INTO kv VALUES(?, ?)").unwrap();
    let mut two_p = prepare_one(&c, "INSERT INTO two VALUES(?, ?, ?)");
    let mut two_s = s.prepare("INSERT INTO two VALUES(?, ?, ?)").unwrap();
    for i in 0..200usize {
        let b = [key(i), text(&format!("v{i}"))];
        rows_of(&mut fill_p, &b);
        sqlite_rows_of(&mut fill_s, &b);
        let blob = match i % 3 {
            0 => Value::Blob(big[..i * 50].to_vec()),
            1 => Value::Blob(vec![i as u8; i]),
            _ => Value::Null,
        };
        let t = [Value::Integer((i % 7) as i64), blob, text(&format!("t{i}"))];
        rows_of(&mut two_p, &t);
        sqlite_rows_of(&mut two_s, &t);
    }
    let keys: Vec<Vec<Value>> = (0..200usize)
        .map(|i| vec![key(i)])
        .chain([
            vec![text("absent")],
            vec![Value::Blob(big.clone())],
            vec![Value::Null],
            vec![Value::Integer(3)],
            vec![text("")],
        ])
        .collect();
    let cases: Vec<(&str, Vec<Vec<Value>>)> = vec![
        ("SELECT value FROM kv WHERE key=?", keys.clone()),
        (
            "SELECT key, value FROM kv WHERE key BETWEEN ?1 AND ?1",
            keys.clone(),
        ),
        (
            "SELECT key FROM kv WHERE key > ?1 AND key <= ?1",
            keys.iter().take(20).cloned().collect(),
        ),
        (
            "SELECT key FROM kv WHERE key >= ?1 AND key < ?1",
            keys.iter().take(20).cloned().collect(),
        ),
        (
            "SELECT v FROM nc WHERE k=?",
            ["a", "A", "b", "B", "C", "d", "", "aa"]
                .iter()
                .map(|s| vec![text(s)])
                .collect(),
        ),
        (
            "SELECT v FROM nc WHERE k BETWEEN ? AND ?",
            vec![
                vec![text("a"), text("A")],
                vec![text("A"), text("a")],
                vec![text("b"), text("B")],
                vec![text("a"), text("c")],
                vec![text("C"), text("C")],
            ],
        ),
        (
            "SELECT v FROM num WHERE k BETWEEN ? AND ?",
            vec![
                vec![Value::Real(0.0), Value::Real(-0.0)],
                vec![Value::Real(-0.0), Value::Real(0.0)],
                vec![Value::Integer(1), Value::Real(1.0)],
                vec![Value::Real(1.0), Value::Integer(1)],
                vec![Value::Integer(0), Value::Integer(0)],
                vec![Value::Real(2.5), Value::Real(2.5)],
                vec![Value::Integer(-1), Value::Real(2.5)],
                vec![text("1"), Value::Integer(1)],
            ],
        ),
        (
            "SELECT k FROM num WHERE v=?",
            ["one", "zero", "x", "two and a half"]
                .iter()
                .map(|s| vec![text(s)])
                .collect(),
        ),
        (
            "SELECT v, length(b) FROM two WHERE a=? AND b=?",
            (0..200usize)
                .step_by(7)
                .map(|i| {
                    let blob = match i % 3 {
                        0 => Value::Blob(big[..i * 50].to_vec()),
                        1 => Value::Blob(vec![i as u8; i]),
                        _ => Value::Null,
                    };
                    vec![Value::Integer((i % 7) as i64), blob]
                })
                .collect(),
        ),
        (
            "SELECT v FROM two WHERE a=? ORDER BY b DESC",
            (0..8).map(|i| vec![Value::Integer(i)]).collect(),
        ),
    ];
    for (sql, binds) in &cases {
        let mut p = prepare_one(&c, sql);
        let mut q = s.prepare(sql).unwrap();
        // Interleaved with another reused walk, so the kept buffers move between statements.
        let mut other = prepare_one(&c, "SELECT value FROM kv WHERE key=?");
        for (n, b) in binds.iter().enumerate() {
            let got = rows_of(&mut p, b);
            let want = sqlite_rows_of(&mut q, b);
            assert_eq!(got, want, "{sql} with {b:?} (execution {n})");
            rows_of(&mut other, &keys[n % keys.len()]);
        }
    }
}

/// State kept between executions of one reused statement on a file database: another
/// connection's commit, a schema change by another connection, a write by the same
/// connection, and a reset in the middle of a result, each seen by the next execution.
#[test]
fn reused_point_select_sees_changes_between_executions() {
    let dir = common::TempDir::new("point-select-reuse");
    let path = dir.join("db.sqlite");
    let db = Database::open(path.to_str().unwrap()).unwrap();
    let c1 = db.connect().unwrap();
    let c2 = db.connect().unwrap();
    c1.execute_batch(
        "CREATE TABLE kv(key TEXT PRIMARY KEY, value TEXT);
         INSERT INTO kv VALUES('a', '1'), ('b', '2'), ('c', '3');",
    )
    .unwrap();
    let mut sel = prepare_one(&c1, "SELECT value FROM kv WHERE key=?");
    let one = |v: &str| vec![vec![text(v)]];
    assert_eq!(rows_of(&mut sel, &[text("a")]), one("1"));

    // Another connection's commit is visible at the next execution.
    c2.execute_batch("UPDATE kv SET value='1b' WHERE key='a'; INSERT INTO kv VALUES('d', '4')")
        .unwrap();
    assert_eq!(rows_of(&mut sel, &[text("a")]), one("1b"));
    assert_eq!(rows_of(&mut sel, &[text("d")]), one("4"));

    // A schema change by another connection: the table and its index rebuilt with other
    // rows (new root pages); the statement must read the new trees.
    c2.execute_batch(
        "DROP TABLE kv;
         CREATE TABLE filler(x); INSERT INTO filler VALUES(randomblob(5000));
         CREATE TABLE kv(key TEXT PRIMARY KEY, value TEXT);
         INSERT INTO kv VALUES('a', 'new-a'), ('e', 'new-e');",
    )
    .unwrap();
    assert_eq!(rows_of(&mut sel, &[text("a")]), one("new-a"));
    assert_eq!(rows_of(&mut sel, &[text("b")]), Vec::<Vec<Value>>::new());
    assert_eq!(rows_of(&mut sel, &[text("e")]), one("new-e"));

    // A write by the same connection, inside and outside an explicit transaction.
    c1.execute_batch("INSERT INTO kv VALUES('f', 'mine')")
        .unwrap();
    assert_eq!(rows_of(&mut sel, &[text("f")]), one("mine"));
    c1.execute_batch("BEGIN; UPDATE kv SET value='txn' WHERE key='f'")
        .unwrap();
    assert_eq!(rows_of(&mut sel, &[text("f")]), one("txn"));
    c1.execute_batch("ROLLBACK").unwrap();
    assert_eq!(rows_of(&mut sel, &[text("f")]), one("mine"));

    // A reset in the middle of a result, then executions with other keys.
    let mut range = prepare_one(&c1, "SELECT key FROM kv WHERE key >= ? ORDER BY key");
    range.bind(1, text("a")).unwrap();
    assert!(range.step().unwrap());
    assert_eq!(range.column(0), text("a"));
    range.reset();
    assert_eq!(rows_of(&mut sel, &[text("e")]), one("new-e"));
    assert_eq!(
        rows_of(&mut range, &[text("b")]),
        vec![vec![text("e")], vec![text("f")]]
    );
}
