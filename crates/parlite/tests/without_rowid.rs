//! WITHOUT ROWID tables (withoutrowid.html): the same SQL through parlite and SQLite
//! (rusqlite, bundled) must give the same rows and error messages; files written by either
//! engine must be read and written by the other, and pass stock SQLite's
//! `PRAGMA integrity_check` (which checks every index entry against its row, and so the
//! record layout: PRIMARY KEY columns first, secondary entries ending in the key suffix).

mod common;
use common::{msg, sqlite_value};
use parlite::{Connection, Value};

#[derive(Debug, PartialEq)]
enum Out {
    Rows(Vec<Vec<Value>>),
    Err(String),
}

fn run_sqlite(c: &rusqlite::Connection, sql: &str) -> Out {
    let mut st = match c.prepare(sql) {
        Ok(s) => s,
        Err(e) => return Out::Err(msg(e)),
    };
    let n = st.column_count();
    let mut rows = Vec::new();
    let mut r = st.raw_query();
    loop {
        match r.next() {
            Ok(Some(row)) => {
                let mut v = Vec::new();
                for i in 0..n {
                    v.push(sqlite_value(row.get_ref(i).expect("col")));
                }
                rows.push(v);
            }
            Ok(None) => break,
            Err(e) => return Out::Err(msg(e)),
        }
    }
    Out::Rows(rows)
}

fn run_parlite(c: &Connection, sql: &str) -> Out {
    let mut st = match c.prepare(sql) {
        Ok(Some((s, _))) => s,
        Ok(None) => return Out::Rows(Vec::new()),
        Err(e) => return Out::Err(e.message),
    };
    let n = st.column_count();
    let mut rows = Vec::new();
    loop {
        match st.step() {
            Ok(true) => rows.push((0..n).map(|i| st.column(i)).collect()),
            Ok(false) => break,
            Err(e) => return Out::Err(e.message),
        }
    }
    Out::Rows(rows)
}

/// Runs each statement of `script` in both engines and compares the outcomes.
fn check_on(s: &rusqlite::Connection, p: &Connection, script: &str) {
    let mut rest = script;
    let mut failures = Vec::new();
    loop {
        let parsed = match parlite_sql::parse::parse_first(rest) {
            Ok(Some(p)) => p,
            Ok(None) => break,
            Err(e) => panic!("parlite cannot parse the rest of the script: {e}\n{rest}"),
        };
        let text = rest[..parsed.tail].trim();
        let (mut a, mut b) = (run_sqlite(s, text), run_parlite(p, text));
        if text.starts_with("EXPLAIN QUERY PLAN") {
            // Compare the plan's wording only (SQLite's ids and "notused" values differ).
            for o in [&mut a, &mut b] {
                if let Out::Rows(rows) = o {
                    for r in rows.iter_mut() {
                        let detail = r.pop().unwrap_or(Value::Null);
                        *r = vec![detail];
                    }
                }
            }
        }
        if a != b {
            failures.push(format!("{text}\n  sqlite:  {a:?}\n  parlite: {b:?}"));
        }
        rest = &rest[parsed.tail..];
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn check(script: &str) {
    let s = rusqlite::Connection::open_in_memory().expect("sqlite");
    let p = Connection::open(":memory:").expect("parlite");
    check_on(&s, &p, script);
}

#[test]
fn create_rules_and_errors() {
    check(
        "
CREATE TABLE nopk(a, b) WITHOUT ROWID;
CREATE TABLE ai(a INTEGER PRIMARY KEY AUTOINCREMENT) WITHOUT ROWID;
CREATE TABLE ai2(a TEXT PRIMARY KEY AUTOINCREMENT) WITHOUT ROWID;
CREATE TABLE t(a TEXT PRIMARY KEY, b NOT NULL, c) WITHOUT ROWID;
INSERT INTO t VALUES(NULL, 1, 1);
INSERT INTO t VALUES('k', NULL, 1);
INSERT INTO t VALUES('k', 1, 1);
INSERT INTO t VALUES('k', 2, 2);
INSERT INTO t(rowid, a, b) VALUES(1, 'z', 1);
SELECT rowid FROM t;
SELECT oid FROM t;
SELECT _rowid_, a FROM t;
UPDATE t SET rowid = 5;
SELECT last_insert_rowid();
CREATE TABLE r(x INTEGER PRIMARY KEY);
INSERT INTO r VALUES(41);
INSERT INTO t VALUES('m', 2, 2);
SELECT last_insert_rowid();
CREATE TABLE u(a, b, c, PRIMARY KEY(a, b)) WITHOUT ROWID;
INSERT INTO u VALUES(1, 2, 3);
INSERT INTO u VALUES(1, 2, 4);
INSERT INTO u VALUES(1, NULL, 4);
CREATE TABLE s(a INT PRIMARY KEY, b TEXT) STRICT, WITHOUT ROWID;
INSERT INTO s VALUES('x', 'y');
INSERT INTO s VALUES('12', 3);
SELECT a, typeof(a), b, typeof(b) FROM s;
CREATE TABLE d(a DEFAULT NULL, b NOT NULL, c, PRIMARY KEY(a)) WITHOUT ROWID;
REPLACE INTO d(a, c) VALUES(NULL, 1);
REPLACE INTO d(a, b) VALUES(NULL, 1);
CREATE TABLE e(a NOT NULL DEFAULT NULL, b NOT NULL);
INSERT OR REPLACE INTO e VALUES(NULL, NULL);
CREATE TABLE dup(a, b, PRIMARY KEY(a, b, a)) WITHOUT ROWID;
INSERT INTO dup VALUES(1, 2), (1, 3);
INSERT INTO dup VALUES(1, 2);
SELECT * FROM dup WHERE a = 1 AND b = 3;
PRAGMA index_xinfo(sqlite_autoindex_dup_1);
PRAGMA table_info(dup);
PRAGMA table_info(t);
PRAGMA table_info(u);
PRAGMA table_list(u);
",
    );
}

#[test]
fn reads_and_plans() {
    check(
        "
CREATE TABLE t(a TEXT, b, c, d COLLATE NOCASE, PRIMARY KEY(b, a DESC), UNIQUE(c)) WITHOUT ROWID;
CREATE INDEX td ON t(d, a);
CREATE INDEX tc2 ON t(c DESC);
INSERT INTO t VALUES('x', 1, 10, 'P'), ('y', 1, 20, 'p'), ('x', 2, 30, 'Q'), ('z', 1, NULL, NULL),
  ('a', 3, 40, 'q'), ('b', 3, 41, 'r');
SELECT * FROM t;
SELECT * FROM t WHERE b = 1;
SELECT * FROM t WHERE b = 1 AND a > 'x';
SELECT * FROM t WHERE b = 1 AND a = 'y';
SELECT * FROM t WHERE b >= 2;
SELECT * FROM t WHERE b IN (3, 1, 3) ORDER BY b, a;
SELECT * FROM t WHERE b IN (3, 1, 3);
SELECT * FROM t WHERE b = 1 AND a IN ('z', 'x', 'y', 'x');
SELECT * FROM t WHERE d IN ('r', 'Q', 'p');
CREATE TABLE ri(id INTEGER PRIMARY KEY, v);
CREATE INDEX riv ON ri(v DESC);
INSERT INTO ri VALUES(1, 'a'), (2, 'b'), (3, 'c');
SELECT * FROM ri WHERE id IN (3, 1, 2, 3);
SELECT * FROM ri WHERE v IN ('a', 'c', 'b');
SELECT * FROM t WHERE c = 20;
SELECT * FROM t WHERE c > 25 ORDER BY c;
SELECT * FROM t WHERE d = 'p';
SELECT * FROM t WHERE d = 'q' AND a = 'a';
SELECT * FROM t ORDER BY b, a DESC;
SELECT * FROM t ORDER BY b DESC, a;
SELECT * FROM t ORDER BY b DESC LIMIT 2;
SELECT * FROM t ORDER BY a;
SELECT b, count(*), max(a) FROM t GROUP BY b;
SELECT t.a, r.a FROM t JOIN t AS r ON r.b = t.b AND r.a < t.a ORDER BY 1, 2;
SELECT count(*) FROM t WHERE a IN (SELECT a FROM t WHERE c > 15);
EXPLAIN QUERY PLAN SELECT * FROM t WHERE b = 1;
EXPLAIN QUERY PLAN SELECT * FROM t WHERE b = 1 AND a = 'y';
EXPLAIN QUERY PLAN SELECT * FROM t WHERE b = 1 AND a > 'x';
EXPLAIN QUERY PLAN SELECT * FROM t WHERE c = 20;
EXPLAIN QUERY PLAN SELECT b FROM t ORDER BY b, a DESC;
PRAGMA index_list(t);
PRAGMA index_info(sqlite_autoindex_t_1);
PRAGMA index_xinfo(sqlite_autoindex_t_1);
PRAGMA index_xinfo(sqlite_autoindex_t_2);
PRAGMA index_xinfo(td);
PRAGMA index_xinfo(tc2);
SELECT * FROM pragma_index_xinfo('td');
PRAGMA integrity_check;
",
    );
}

#[test]
fn writes_conflicts_upsert_returning() {
    check(
        "
CREATE TABLE t(a TEXT COLLATE NOCASE, b INTEGER, c, PRIMARY KEY(a, b), UNIQUE(c)) WITHOUT ROWID;
CREATE INDEX tcb ON t(c, b);
INSERT INTO t VALUES('x', 1, 10), ('y', 1, 20), ('x', 2, 30);
INSERT INTO t VALUES('X', 1, 99);
INSERT INTO t VALUES('q', 1, 10);
INSERT OR IGNORE INTO t VALUES('X', 1, 99);
INSERT OR REPLACE INTO t VALUES('X', 1, 40);
REPLACE INTO t VALUES('w', 5, 20);
SELECT * FROM t ORDER BY a, b;
INSERT INTO t VALUES('x', 2, 0) ON CONFLICT(a, b) DO UPDATE SET c = excluded.c + 100 RETURNING *;
INSERT INTO t VALUES('n', 7, 40) ON CONFLICT(c) DO UPDATE SET a = 'changed' RETURNING a, b, c;
INSERT INTO t VALUES('n', 8, 1) ON CONFLICT DO NOTHING RETURNING *;
INSERT INTO t VALUES('n', 8, 2) ON CONFLICT(a, b) DO NOTHING;
SELECT * FROM t ORDER BY c;
UPDATE t SET b = b + 10 WHERE c > 30 RETURNING *;
UPDATE t SET a = upper(a) WHERE b = 1;
UPDATE t SET c = 20 WHERE a = 'n';
UPDATE OR REPLACE t SET c = 20 WHERE a = 'n';
UPDATE t SET a = 'W' WHERE c = 20;
SELECT * FROM t ORDER BY a, b;
DELETE FROM t WHERE b > 10 RETURNING a, c;
SELECT * FROM t;
SELECT changes(), total_changes();
DELETE FROM t;
SELECT count(*) FROM t;
PRAGMA integrity_check;
",
    );
}

#[test]
fn triggers_and_foreign_keys() {
    check(
        "
PRAGMA foreign_keys = ON;
CREATE TABLE p(k TEXT PRIMARY KEY, v) WITHOUT ROWID;
CREATE TABLE c(id INTEGER PRIMARY KEY, pk TEXT REFERENCES p(k) ON DELETE CASCADE ON UPDATE CASCADE);
CREATE TABLE w(a, b, PRIMARY KEY(a), FOREIGN KEY(b) REFERENCES p(k)) WITHOUT ROWID;
CREATE TABLE log(m);
CREATE TRIGGER ti AFTER INSERT ON p BEGIN INSERT INTO log VALUES('ins ' || new.k || ' ' || new.v); END;
CREATE TRIGGER tu BEFORE UPDATE ON p BEGIN INSERT INTO log VALUES('upd ' || old.k || '->' || new.k); END;
CREATE TRIGGER td AFTER DELETE ON p BEGIN INSERT INTO log VALUES('del ' || old.k); END;
INSERT INTO p VALUES('a', 1), ('b', 2), ('c', 3);
INSERT INTO c(pk) VALUES('a'), ('b'), ('b');
INSERT INTO c(pk) VALUES('zz');
INSERT INTO w VALUES(1, 'a');
INSERT INTO w VALUES(2, 'nope');
UPDATE p SET k = 'B' WHERE k = 'b';
SELECT * FROM c ORDER BY id;
DELETE FROM p WHERE k = 'a';
DELETE FROM p WHERE k = 'c';
SELECT * FROM c ORDER BY id;
SELECT * FROM w;
SELECT * FROM log;
CREATE TRIGGER tw BEFORE INSERT ON w BEGIN SELECT RAISE(IGNORE) WHERE new.a > 100; END;
INSERT INTO w VALUES(101, NULL);
INSERT INTO w VALUES(5, NULL);
SELECT * FROM w;
",
    );
}

#[test]
fn alter_vacuum_reindex_analyze() {
    check(
        "
CREATE TABLE t(a, b TEXT, c, PRIMARY KEY(b, a)) WITHOUT ROWID;
CREATE INDEX tc ON t(c);
INSERT INTO t VALUES(1, 'x', 10), (2, 'x', 20), (1, 'y', 30);
ALTER TABLE t ADD COLUMN d DEFAULT 'dflt';
SELECT * FROM t;
INSERT INTO t VALUES(3, 'z', 40, 'given');
SELECT * FROM t WHERE d = 'dflt';
ALTER TABLE t DROP COLUMN b;
ALTER TABLE t DROP COLUMN c;
ALTER TABLE t RENAME COLUMN a TO aa;
ALTER TABLE t DROP COLUMN d;
SELECT * FROM t;
SELECT aa FROM t WHERE b = 'x';
ALTER TABLE t RENAME TO t2;
SELECT * FROM t2 WHERE c = 20;
PRAGMA index_list(t2);
ANALYZE;
SELECT tbl, idx, stat FROM sqlite_stat1 ORDER BY tbl, idx;
VACUUM;
REINDEX;
REINDEX t2;
SELECT * FROM t2;
SELECT * FROM t2 WHERE c = 30;
PRAGMA integrity_check;
DROP TABLE t2;
SELECT name FROM sqlite_schema WHERE name NOT LIKE 'sqlite_stat%';
CREATE TABLE k(a, b , UNIQUE(a));
ALTER TABLE k ADD COLUMN c DEFAULT 3;
INSERT INTO k(a, b) VALUES(1, 2);
SELECT * FROM k;
SELECT sql FROM sqlite_schema WHERE name = 'k';
",
    );
}

fn temp_path(tag: &str) -> common::TempDb {
    common::temp_db_path("wr", tag)
}

const SCHEMA: &str = "
CREATE TABLE t(a TEXT COLLATE NOCASE, b INTEGER, c, d, PRIMARY KEY(b DESC, a), UNIQUE(c)) WITHOUT ROWID;
CREATE INDEX td ON t(d, a COLLATE BINARY);
CREATE INDEX tpart ON t(c) WHERE b > 100;
CREATE TABLE big(k TEXT PRIMARY KEY, v) WITHOUT ROWID;
";

const WRITES: &str = "
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300)
  INSERT INTO t SELECT 'key' || (i % 17), i, i * 3, i % 5 FROM n;
UPDATE t SET a = upper(a) WHERE b % 4 = 0;
UPDATE t SET b = b + 1000 WHERE b % 9 = 0;
DELETE FROM t WHERE b % 7 = 0;
REPLACE INTO t VALUES('KEY1', 1, -1, 'r');
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
  INSERT INTO big SELECT printf('%08d-%s', i * 7919 % 2000, hex(randomblob(4))), zeroblob(i % 700) FROM n;
";

fn dump(p: &Connection) -> Vec<Vec<Value>> {
    let mut st = p
        .prepare("SELECT a, b, c, d FROM t ORDER BY b, a")
        .expect("prepare")
        .expect("stmt")
        .0;
    let mut out = Vec::new();
    while st.step().expect("step") {
        out.push((0..4).map(|i| st.column(i)).collect());
    }
    out
}

#[test]
fn files_interoperate_both_ways() {
    // parlite writes, SQLite checks and reads.
    let path = temp_path("p2s");
    let rows_p = {
        let p = Connection::open(path.to_str().expect("utf8")).expect("open");
        p.execute_batch(SCHEMA).expect("schema");
        for stmt in WRITES.split(";\n").filter(|s| !s.trim().is_empty()) {
            p.execute_batch(stmt).expect(stmt);
        }
        p.execute_batch("DELETE FROM big WHERE k < '00000500'")
            .expect("delete");
        dump(&p)
    };
    {
        let s = rusqlite::Connection::open(&path).expect("sqlite open");
        let ok: String = s
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .expect("check");
        assert_eq!(ok, "ok");
        let n: i64 = s
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .expect("count");
        assert_eq!(n as usize, rows_p.len());
        let n: i64 = s
            .query_row("SELECT count(*) FROM big WHERE k >= '00000500'", [], |r| {
                r.get(0)
            })
            .expect("count");
        assert_eq!(n, 1500);
        // SQLite writes into parlite's file; parlite reads it back.
        s.execute_batch(
            "INSERT INTO t VALUES('fromsqlite', 5000, 77, 'z');
             UPDATE t SET d = d || '!' WHERE b < 20;",
        )
        .expect("sqlite writes");
    }
    {
        let p = Connection::open(path.to_str().expect("utf8")).expect("reopen");
        let s = rusqlite::Connection::open(&path).expect("sqlite open");
        let mut st = s
            .prepare("SELECT a, b, c, d FROM t ORDER BY b, a")
            .expect("prep");
        let expect: Vec<Vec<Value>> = st
            .query_map([], |r| {
                Ok((0..4)
                    .map(|i| sqlite_value(r.get_ref(i).expect("col")))
                    .collect())
            })
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows");
        drop(st);
        drop(s);
        assert_eq!(dump(&p), expect);
        assert_eq!(
            run_parlite(&p, "PRAGMA integrity_check"),
            Out::Rows(vec![vec![Value::Text("ok".into())]])
        );
    }

    // SQLite writes, parlite reads, writes and SQLite checks again.
    let path = temp_path("s2p");
    {
        let s = rusqlite::Connection::open(&path).expect("sqlite open");
        s.execute_batch(SCHEMA).expect("schema");
        for stmt in WRITES.split(";\n").filter(|s| !s.trim().is_empty()) {
            s.execute_batch(stmt).expect(stmt);
        }
    }
    {
        let s = rusqlite::Connection::open(&path).expect("sqlite open");
        let p = Connection::open(path.to_str().expect("utf8")).expect("open");
        for q in [
            "SELECT count(*), sum(b), group_concat(a) FROM t",
            "SELECT * FROM t WHERE b = 1000 + 18",
            "SELECT * FROM t WHERE d = 3 AND a = 'key3' ORDER BY b",
            "SELECT b FROM t WHERE c = 30",
            "SELECT count(*), min(k), max(k), sum(length(v)) FROM big",
            "SELECT k FROM big WHERE k > '00001990' ORDER BY k",
            "PRAGMA integrity_check",
        ] {
            assert_eq!(run_parlite(&p, q), run_sqlite(&s, q), "{q}");
        }
        drop(s);
        p.execute_batch(
            "UPDATE t SET c = c + 1 WHERE b % 2 = 0;
             DELETE FROM t WHERE b % 3 = 0;
             INSERT INTO t VALUES('Key3', 3, 3003, 'parlite');
             DELETE FROM big WHERE k > '00001000';
             VACUUM;",
        )
        .expect("parlite writes");
    }
    let s = rusqlite::Connection::open(&path).expect("sqlite open");
    let ok: String = s
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("check");
    assert_eq!(ok, "ok");
    let n: i64 = s
        .query_row("SELECT count(*) FROM t WHERE d = 'parlite'", [], |r| {
            r.get(0)
        })
        .expect("count");
    assert_eq!(n, 1);
    let _ = std::fs::remove_dir_all(path.parent().expect("dir"));
}

#[test]
fn same_connection_sees_both_kinds_of_table() {
    // A WITHOUT ROWID table next to rowid tables in one statement.
    let s = rusqlite::Connection::open_in_memory().expect("sqlite");
    let p = Connection::open(":memory:").expect("parlite");
    check_on(
        &s,
        &p,
        "
CREATE TABLE r(id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE w(name TEXT PRIMARY KEY, score REAL) WITHOUT ROWID;
INSERT INTO r(name) VALUES('ann'), ('bob'), ('cy');
INSERT INTO w SELECT name, id * 1.5 FROM r;
SELECT r.id, w.score FROM r JOIN w USING(name) ORDER BY r.id;
SELECT * FROM w NATURAL JOIN r;
UPDATE w SET score = (SELECT id FROM r WHERE r.name = w.name) * 10;
UPDATE w SET score = score + r.id FROM r WHERE r.name = w.name AND r.id > 1;
SELECT * FROM w ORDER BY name;
WITH x AS (SELECT name FROM w WHERE score > 15) DELETE FROM w WHERE name IN x;
SELECT * FROM w;
",
    );
}

#[test]
fn concurrent_writers_conflict_on_the_same_key_only() {
    for level in ["serializable", "snapshot"] {
        let db = parlite::Database::open(":memory:").expect("db");
        let c1 = db.connect().expect("c1");
        let c2 = db.connect().expect("c2");
        c1.execute_batch(
            "CREATE TABLE w(k TEXT PRIMARY KEY, v) WITHOUT ROWID;
             INSERT INTO w VALUES('a', 1), ('m', 2), ('z', 3);",
        )
        .expect("setup");
        for c in [&c1, &c2] {
            c.execute_batch(&format!("PRAGMA isolation_level = {level}"))
                .expect("level");
        }
        // The same new key, different rows: the second commit must fail.
        c1.execute_batch("BEGIN CONCURRENT; INSERT INTO w VALUES('k', 'one');")
            .expect("c1");
        c2.execute_batch("BEGIN CONCURRENT; INSERT INTO w VALUES('k', 'two');")
            .expect("c2");
        c1.execute_batch("COMMIT").expect("c1 commit");
        let Err(e) = c2.execute_batch("COMMIT") else {
            panic!("{level}: a duplicate PRIMARY KEY committed");
        };
        assert_eq!(e.extended_code, 517, "{level}: {e}");
        // Different keys, and updates of different rows: both commit.
        c1.execute_batch(
            "BEGIN CONCURRENT; INSERT INTO w VALUES('b', 4); UPDATE w SET v = 10 WHERE k = 'a';",
        )
        .expect("c1");
        c2.execute_batch(
            "BEGIN CONCURRENT; INSERT INTO w VALUES('y', 5); UPDATE w SET v = 30 WHERE k = 'z';",
        )
        .expect("c2");
        c1.execute_batch("COMMIT").expect("c1 commit");
        c2.execute_batch("COMMIT").expect("c2 commit");
        assert_eq!(
            run_parlite(&c1, "SELECT k, v FROM w"),
            Out::Rows(vec![
                vec![Value::Text("a".into()), Value::Integer(10)],
                vec![Value::Text("b".into()), Value::Integer(4)],
                vec![Value::Text("k".into()), Value::Text("one".into())],
                vec![Value::Text("m".into()), Value::Integer(2)],
                vec![Value::Text("y".into()), Value::Integer(5)],
                vec![Value::Text("z".into()), Value::Integer(30)],
            ])
        );
        // Two updates of one row (other values, same key): a write-write conflict.
        c1.execute_batch("BEGIN CONCURRENT; UPDATE w SET v = 100 WHERE k = 'm';")
            .expect("c1");
        c2.execute_batch("BEGIN CONCURRENT; UPDATE w SET v = 200 WHERE k = 'm';")
            .expect("c2");
        c1.execute_batch("COMMIT").expect("c1 commit");
        let Err(e) = c2.execute_batch("COMMIT") else {
            panic!("{level}: a lost update committed");
        };
        assert_eq!(e.extended_code, 517, "{level}: {e}");
        assert_eq!(
            run_parlite(&c2, "SELECT v FROM w WHERE k = 'm'"),
            Out::Rows(vec![vec![Value::Integer(100)]])
        );
        assert_eq!(
            run_parlite(&c2, "PRAGMA integrity_check"),
            Out::Rows(vec![vec![Value::Text("ok".into())]])
        );
    }
}

/// A WITHOUT ROWID table whose PRIMARY KEY is one INTEGER column: SQLite makes that key's
/// index after the UNIQUE constraints' (it parses the key as a rowid alias first), so the
/// UNIQUE autoindexes are numbered from 1. A file parlite writes must name them as SQLite
/// does (stock SQLite matches `sqlite_schema`'s autoindex rows to its own names, and an
/// unknown one is an "orphan index", a malformed file), and parlite must find them in a
/// file SQLite wrote.
#[test]
fn integer_key_autoindexes_are_named_as_sqlite_names_them() {
    let shapes = [
        "CREATE TABLE t(k INTEGER PRIMARY KEY, a UNIQUE, b UNIQUE) WITHOUT ROWID",
        "CREATE TABLE t(k integer primary key, a UNIQUE) WITHOUT ROWID",
        "CREATE TABLE t(k INTEGER PRIMARY KEY DESC, a UNIQUE) WITHOUT ROWID",
        "CREATE TABLE t(k INT PRIMARY KEY, a UNIQUE) WITHOUT ROWID",
        "CREATE TABLE t(a UNIQUE, k INTEGER, b UNIQUE, PRIMARY KEY(k)) WITHOUT ROWID",
        "CREATE TABLE t(k INTEGER PRIMARY KEY, a UNIQUE)",
    ];
    let names = "SELECT name, rootpage > 0 FROM sqlite_schema ORDER BY name";
    for ddl in shapes {
        let dir = common::TempDir::new("wr-intkey");
        let (pp, sp) = (dir.join("p.db"), dir.join("s.db"));
        let fill = "INSERT INTO t(k, a) VALUES(1, 10), (2, 20), (3, 30)";
        {
            let p = Connection::open(pp.to_str().unwrap()).unwrap();
            p.execute_batch(&format!("{ddl}; {fill};")).unwrap();
        }
        let s = rusqlite::Connection::open(&sp).unwrap();
        s.execute_batch(&format!("{ddl}; {fill};")).unwrap();
        let sqlite_names = common::sqlite_rows(&sp, names);
        // parlite's file, read by stock SQLite.
        assert_eq!(common::sqlite_rows(&pp, names), sqlite_names, "{ddl}");
        assert_eq!(
            common::sqlite_rows(&pp, "PRAGMA integrity_check"),
            common::sqlite_rows(&sp, "PRAGMA integrity_check"),
            "{ddl}"
        );
        // SQLite's file, read by parlite through the UNIQUE index.
        drop(s);
        assert_eq!(common::integrity_check_rows(&sp), vec!["ok"], "{ddl}");
        let p = Connection::open(sp.to_str().unwrap()).unwrap();
        let mut st = p
            .prepare("SELECT k FROM t WHERE a = 20")
            .unwrap()
            .unwrap()
            .0;
        assert!(st.step().unwrap(), "{ddl}");
        assert_eq!(st.column(0), Value::Integer(2), "{ddl}");
    }
}
