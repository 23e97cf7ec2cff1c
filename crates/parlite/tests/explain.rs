//! Plain EXPLAIN: SQLite's eight columns (names and value types as rusqlite, bundled
//! 3.50.2, returns them), one row per step of parlite's plan (not SQLite's bytecode: a
//! deliberate difference), for every statement kind, and never running the statement.

mod common;

use common::{run_parlite, run_sqlite, Out};
use parlite::Value;

const SETUP: &str = "
    CREATE TABLE t(a INTEGER PRIMARY KEY, b, c NOT NULL DEFAULT 0);
    CREATE INDEX tb ON t(b);
    CREATE TABLE p(id INTEGER PRIMARY KEY);
    CREATE TABLE ch(x REFERENCES p(id));
    CREATE TABLE w(k TEXT PRIMARY KEY, v) WITHOUT ROWID;
    CREATE VIEW v AS SELECT a, b FROM t;
    CREATE TRIGGER tr AFTER INSERT ON t BEGIN INSERT INTO p VALUES(NEW.a); END;
    INSERT INTO t VALUES(1, 10, 1), (2, 20, 2), (3, 30, 3);
    INSERT INTO w VALUES('a', 1);
";

fn setup() -> parlite::Connection {
    let c = parlite::Connection::open(":memory:").expect("open");
    c.execute_batch(SETUP).expect("setup");
    c
}

fn rows(o: Out) -> (Vec<String>, Vec<Vec<Value>>) {
    match o {
        Out::Rows { names, rows } => (names, rows),
        Out::Err(e) => panic!("error: {e}"),
    }
}

/// 'i' integer, 't' text, 'n' NULL.
fn kind(v: &Value) -> char {
    match v {
        Value::Integer(_) => 'i',
        Value::Text(_) => 't',
        Value::Null => 'n',
        _ => '?',
    }
}

/// The listing's invariants: addresses 0.., `Init` first jumping to a `Transaction` or
/// the end, `Goto 0 1` last, jump targets inside the listing, columns typed as SQLite's.
fn check_listing(sql: &str, rows: &[Vec<Value>]) {
    assert!(!rows.is_empty(), "{sql}: no rows");
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r.len(), 8, "{sql}");
        assert_eq!(r[0], Value::Integer(i as i64), "{sql}: addr");
        let kinds: String = r.iter().map(kind).collect();
        let ok = kinds.starts_with("itiii")
            && matches!(&kinds[5..6], "t" | "n")
            && &kinds[6..7] == "i"
            && matches!(&kinds[7..8], "t" | "n");
        assert!(ok, "{sql}: row {i} typed {kinds}: {r:?}");
        if let (Value::Text(op), Value::Integer(p2)) = (&r[1], &r[3]) {
            let jumps = [
                "Init",
                "Goto",
                "Rewind",
                "Next",
                "Prev",
                "SeekGE",
                "SeekGT",
                "SeekLE",
                "SeekLT",
                "SeekRowid",
                "IdxGT",
                "IdxGE",
                "IdxLT",
                "IdxLE",
                "IfNot",
                "SorterSort",
                "SorterNext",
                "NotExists",
                "Once",
                "DecrJumpZero",
            ];
            if jumps.contains(&&op[..]) {
                assert!(
                    (0..rows.len() as i64).contains(p2),
                    "{sql}: {op} at {i} jumps to {p2} of {}",
                    rows.len()
                );
            }
        }
    }
    assert_eq!(rows[0][1], Value::Text("Init".into()), "{sql}");
    let last = &rows[rows.len() - 1];
    assert_eq!(
        (&last[1], &last[2], &last[3]),
        (
            &Value::Text("Goto".into()),
            &Value::Integer(0),
            &Value::Integer(1)
        ),
        "{sql}"
    );
}

fn opcodes(rows: &[Vec<Value>]) -> Vec<String> {
    rows.iter()
        .map(|r| match &r[1] {
            Value::Text(t) => t.to_string(),
            _ => String::new(),
        })
        .collect()
}

#[test]
fn columns_are_named_and_typed_as_sqlite() {
    let s = rusqlite::Connection::open_in_memory().unwrap();
    s.execute_batch(SETUP).unwrap();
    let p = setup();
    for q in ["EXPLAIN SELECT 1", "EXPLAIN SELECT b FROM t WHERE b > 5"] {
        let (sn, sr) = rows(run_sqlite(&s, q));
        let (pn, pr) = rows(run_parlite(&p, q));
        assert_eq!(pn, sn, "{q}");
        check_listing(q, &sr);
        check_listing(q, &pr);
    }
    // The statement API reports the same count and names before the first step.
    let (st, _) = p.prepare("EXPLAIN SELECT * FROM t").unwrap().unwrap();
    let names: Vec<&str> = (0..st.column_count()).map(|i| st.column_name(i)).collect();
    assert_eq!(
        names,
        ["addr", "opcode", "p1", "p2", "p3", "p4", "p5", "comment"]
    );
}

#[test]
fn every_statement_kind_explains() {
    let p = setup();
    for q in [
        "SELECT * FROM t",
        "SELECT a, c FROM t WHERE b > 5 ORDER BY c LIMIT 2 OFFSET 1",
        "SELECT b, count(*) FROM t GROUP BY b HAVING count(*) > 0",
        "SELECT DISTINCT b FROM t",
        "SELECT * FROM t WHERE a IN (1, 2)",
        "SELECT * FROM t WHERE a IN (SELECT id FROM p)",
        "SELECT (SELECT max(b) FROM t), EXISTS (SELECT 1 FROM p)",
        "SELECT * FROM t JOIN ch ON ch.x = t.a LEFT JOIN p ON p.id = t.a",
        "SELECT a FROM t UNION SELECT id FROM p ORDER BY 1",
        "SELECT a FROM t UNION ALL SELECT id FROM p",
        "SELECT * FROM v WHERE b BETWEEN 1 AND 20",
        "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 5) SELECT * FROM c",
        "SELECT * FROM (SELECT b, count(*) AS n FROM t GROUP BY b) WHERE n > 0",
        "SELECT row_number() OVER (ORDER BY a), CASE WHEN a > 1 THEN 'x' ELSE 'y' END FROM t",
        "SELECT * FROM json_each('[1,2]')",
        "SELECT * FROM pragma_table_info('t')",
        "SELECT * FROM w WHERE k = 'a'",
        "VALUES (1, 2), (3, 4)",
        "INSERT INTO t VALUES (9, 90, 9)",
        "INSERT INTO t(b) SELECT b FROM t WHERE a > 1",
        "INSERT INTO t DEFAULT VALUES",
        "REPLACE INTO w VALUES ('a', 2)",
        "UPDATE t SET b = b + 1, c = 5 WHERE a = 2",
        "UPDATE t SET b = 0",
        "DELETE FROM t WHERE b BETWEEN 10 AND 20",
        "DELETE FROM t",
        "DELETE FROM ch WHERE x = 1",
        "CREATE TABLE n(x)",
        "CREATE INDEX tc ON t(c)",
        "CREATE VIEW v2 AS SELECT 1",
        "CREATE TRIGGER tr2 BEFORE DELETE ON t BEGIN SELECT 1; END",
        "DROP TABLE t",
        "DROP INDEX tb",
        "DROP VIEW v",
        "DROP TRIGGER tr",
        "DROP TABLE IF EXISTS nosuch",
        "ALTER TABLE t ADD COLUMN d",
        "BEGIN",
        "COMMIT",
        "ROLLBACK",
        "SAVEPOINT s",
        "RELEASE s",
        "PRAGMA user_version = 3",
        "PRAGMA table_info(t)",
        "ANALYZE",
        "REINDEX",
        "VACUUM",
        "ATTACH ':memory:' AS aux",
        "DETACH aux",
    ] {
        let sql = format!("EXPLAIN {q}");
        let (names, r) = rows(run_parlite(&p, &sql));
        assert_eq!(names.len(), 8, "{sql}");
        check_listing(&sql, &r);
    }
}

#[test]
fn explain_names_parlite_steps_with_root_pages() {
    let p = setup();
    let root = |name: &str| {
        let (_, r) = rows(run_parlite(
            &p,
            &format!("SELECT rootpage FROM sqlite_schema WHERE name = '{name}'"),
        ));
        r[0][0].clone()
    };
    let (t_root, tb_root) = (root("t"), root("tb"));
    let (_, r) = rows(run_parlite(&p, "EXPLAIN SELECT a, c FROM t WHERE b > 5"));
    let ops = opcodes(&r);
    let open = |root: &Value| {
        r.iter().any(|x| {
            x[1] == Value::Text("OpenRead".into()) && &x[3] == root && x[4] == Value::Integer(0)
        })
    };
    assert!(open(&t_root) && open(&tb_root), "{r:?}");
    for op in [
        "SeekGT",
        "DeferredSeek",
        "Column",
        "ResultRow",
        "Next",
        "Halt",
        "Transaction",
    ] {
        assert!(ops.iter().any(|o| o == op), "{op} missing: {ops:?}");
    }
    let (_, r) = rows(run_parlite(&p, "EXPLAIN SELECT * FROM t WHERE a = 2"));
    assert!(opcodes(&r).iter().any(|o| o == "SeekRowid"), "{r:?}");
    let (_, r) = rows(run_parlite(&p, "EXPLAIN SELECT * FROM t"));
    let ops = opcodes(&r);
    assert!(ops.contains(&"Rewind".to_string()) && !ops.contains(&"SeekGT".to_string()));
    let (_, r) = rows(run_parlite(&p, "EXPLAIN DELETE FROM t WHERE b = 10"));
    let ops = opcodes(&r);
    for op in ["OpenWrite", "SeekGE", "IdxGT", "IdxDelete", "Delete"] {
        assert!(ops.iter().any(|o| o == op), "{op} missing: {ops:?}");
    }
    let (_, r) = rows(run_parlite(&p, "EXPLAIN INSERT INTO t VALUES (7, 70, 7)"));
    let ops = opcodes(&r);
    for op in [
        "OpenWrite",
        "NewRowid",
        "HaltIfNull",
        "IdxInsert",
        "Insert",
        "Program",
    ] {
        assert!(ops.iter().any(|o| o == op), "{op} missing: {ops:?}");
    }
    // A write statement's Transaction step is a write (p2 = 1), a read's is not.
    let tx = |sql: &str| {
        let (_, r) = rows(run_parlite(&p, sql));
        r.iter()
            .find(|x| x[1] == Value::Text("Transaction".into()))
            .map(|x| x[3].clone())
    };
    assert_eq!(tx("EXPLAIN SELECT * FROM t"), Some(Value::Integer(0)));
    assert_eq!(tx("EXPLAIN UPDATE t SET b = 1"), Some(Value::Integer(1)));
}

#[test]
fn explain_never_runs_the_statement() {
    let p = setup();
    let snapshot = |p: &parlite::Connection| {
        [
            "SELECT * FROM t ORDER BY a",
            "SELECT * FROM p ORDER BY id",
            "SELECT * FROM w",
            "SELECT type, name, sql FROM sqlite_schema ORDER BY name",
            "PRAGMA user_version",
            "PRAGMA database_list",
        ]
        .iter()
        .map(|q| run_parlite(p, q))
        .collect::<Vec<_>>()
    };
    let before = snapshot(&p);
    let changes = p.total_changes();
    for q in [
        "DELETE FROM t",
        "DELETE FROM t WHERE a = 1",
        "INSERT INTO t VALUES (9, 90, 9)",
        "INSERT INTO t SELECT a + 10, b, c FROM t",
        "UPDATE t SET b = 0",
        "REPLACE INTO w VALUES ('a', 2)",
        "DROP TABLE t",
        "DROP INDEX tb",
        "DROP VIEW v",
        "DROP TRIGGER tr",
        "CREATE TABLE n(x)",
        "CREATE INDEX tc ON t(c)",
        "ALTER TABLE t RENAME TO t9",
        "ALTER TABLE t ADD COLUMN d",
        "PRAGMA user_version = 7",
        "BEGIN",
        "SAVEPOINT s",
        "ATTACH ':memory:' AS aux",
        "VACUUM",
        "ANALYZE",
    ] {
        let sql = format!("EXPLAIN {q}");
        let (_, r) = rows(run_parlite(&p, &sql));
        check_listing(&sql, &r);
        assert!(p.is_autocommit(), "{sql} opened a transaction");
    }
    assert_eq!(snapshot(&p), before);
    assert_eq!(p.total_changes(), changes);
    // The statement still runs when not explained.
    p.execute_batch("DELETE FROM t").unwrap();
    assert_eq!(run_parlite(&p, "SELECT count(*) FROM t"), rows_of(0));
}

fn rows_of(n: i64) -> Out {
    Out::Rows {
        names: vec!["count(*)".into()],
        rows: vec![vec![Value::Integer(n)]],
    }
}

#[test]
fn errors_are_the_statements_own() {
    let s = rusqlite::Connection::open_in_memory().unwrap();
    s.execute_batch(SETUP).unwrap();
    let p = setup();
    for q in [
        "EXPLAIN SELECT * FROM nosuch",
        "EXPLAIN SELECT nosuch FROM t",
        "EXPLAIN INSERT INTO nosuch VALUES (1)",
        "EXPLAIN INSERT INTO t(nosuch) VALUES (1)",
        "EXPLAIN UPDATE nosuch SET a = 1",
        "EXPLAIN UPDATE t SET nosuch = 1",
        "EXPLAIN DELETE FROM nosuch",
        "EXPLAIN DELETE FROM t WHERE nosuch = 1",
        "EXPLAIN DROP TABLE nosuch",
        "EXPLAIN DROP INDEX nosuch",
        "EXPLAIN CREATE TABLE t(x)",
        "EXPLAIN CREATE INDEX i ON nosuch(x)",
    ] {
        let (a, b) = (run_sqlite(&s, q), run_parlite(&p, q));
        match (&a, &b) {
            (Out::Err(x), Out::Err(y)) => assert_eq!(x, y, "{q}"),
            _ => panic!("{q}\n  sqlite:  {a:?}\n  parlite: {b:?}"),
        }
    }
    // As for the SELECT itself, the error comes at prepare.
    assert!(p.prepare("EXPLAIN SELECT * FROM nosuch").is_err());
}
