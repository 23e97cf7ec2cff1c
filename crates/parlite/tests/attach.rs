//! ATTACH/DETACH (lang_attach.html, lang_detach.html): the same scripts through parlite and
//! SQLite (rusqlite, bundled), each engine in its own folder (`DIR/` in a script is that
//! folder; in results it reads back as `DIR/`), rows and error messages compared; then
//! file checks: parlite's attached files and SQLite-made files, reopened and checked by
//! SQLite's `PRAGMA integrity_check`.

mod common;
use common::{msg, sqlite_value};
use std::path::Path;

#[derive(Debug, PartialEq)]
enum Out {
    Rows(Vec<Vec<parlite::Value>>),
    Err(String),
}

fn fresh_dir(tag: &str) -> common::TempDir {
    common::TempDir::new(&format!("attach-{tag}"))
}

fn unify(v: parlite::Value, dir: &Path) -> parlite::Value {
    match v {
        parlite::Value::Text(t) => {
            parlite::Value::Text(t.replace(&format!("{}/", dir.display()), "DIR/"))
        }
        v => v,
    }
}

fn run_sqlite(c: &rusqlite::Connection, sql: &str, dir: &Path) -> Out {
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
                    v.push(unify(sqlite_value(row.get_ref(i).expect("col")), dir));
                }
                rows.push(v);
            }
            Ok(None) => break,
            Err(e) => return Out::Err(msg(e)),
        }
    }
    Out::Rows(rows)
}

fn run_parlite(c: &parlite::Connection, sql: &str, dir: &Path) -> Out {
    let mut st = match c.prepare(sql) {
        Ok(Some((s, _))) => s,
        Ok(None) => return Out::Rows(Vec::new()),
        Err(e) => return Out::Err(e.message),
    };
    let n = st.column_count();
    let mut rows = Vec::new();
    loop {
        match st.step() {
            Ok(true) => rows.push((0..n).map(|i| unify(st.column(i), dir)).collect()),
            Ok(false) => break,
            Err(e) => return Out::Err(e.message),
        }
    }
    Out::Rows(rows)
}

/// Both engines on `main.db` in their own folders.
/// Fields drop in order: the connections close before their directories go.
struct Pair {
    s: rusqlite::Connection,
    p: parlite::Connection,
    sdir: common::TempDir,
    pdir: common::TempDir,
}

impl Pair {
    fn new(tag: &str) -> Pair {
        let sdir = fresh_dir(&format!("{tag}-sqlite"));
        let pdir = fresh_dir(&format!("{tag}-parlite"));
        let s = rusqlite::Connection::open(sdir.join("main.db")).expect("sqlite");
        s.pragma_update(None, "journal_mode", "wal").expect("wal");
        let p = parlite::Connection::open(pdir.join("main.db").to_str().expect("utf8"))
            .expect("parlite");
        Pair { sdir, pdir, s, p }
    }

    /// Runs each statement of `script` on both; returns the mismatches.
    fn check(&self, script: &str) {
        let mut rest = script;
        let mut failures = Vec::new();
        loop {
            let parsed = match parlite_sql::parse::parse_first(rest) {
                Ok(Some(p)) => p,
                Ok(None) => break,
                Err(e) => panic!("parlite cannot parse: {e}\n{rest}"),
            };
            let stmt = rest[..parsed.tail].trim();
            rest = &rest[parsed.tail..];
            let sd = format!("{}/", self.sdir.display());
            let pd = format!("{}/", self.pdir.display());
            let a = run_sqlite(&self.s, &stmt.replace("DIR/", &sd), &self.sdir);
            let b = run_parlite(&self.p, &stmt.replace("DIR/", &pd), &self.pdir);
            if a != b {
                failures.push(format!("{stmt}\n  sqlite:  {a:?}\n  parlite: {b:?}"));
            }
        }
        assert!(
            failures.is_empty(),
            "{} mismatches:\n{}",
            failures.len(),
            failures.join("\n")
        );
    }
}

#[test]
fn attach_names_and_queries() {
    let pair = Pair::new("names");
    pair.check(
        "
        CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT);
        INSERT INTO t VALUES(1,'main1'),(2,'main2');
        PRAGMA database_list;
        ATTACH DATABASE 'DIR/aux1.db' AS aux;
        ATTACH 'DIR/aux2.db' AS 'second';
        PRAGMA database_list;
        CREATE TABLE aux.t(x, y);
        CREATE TABLE aux.only_aux(z);
        INSERT INTO aux.t VALUES(10,'a'),(20,'b'),(30,'c');
        INSERT INTO only_aux VALUES(99);
        SELECT * FROM t ORDER BY a;
        SELECT * FROM main.t ORDER BY a;
        SELECT * FROM aux.t ORDER BY x;
        SELECT * FROM only_aux;
        SELECT z FROM aux.only_aux;
        SELECT t.a, aux.t.x FROM main.t JOIN aux.t ON aux.t.x = t.a * 10 ORDER BY 1;
        SELECT m.b, a.y FROM t AS m, aux.t AS a WHERE a.x = m.a * 10 ORDER BY 1;
        INSERT INTO aux.t SELECT a * 100, b FROM main.t;
        SELECT * FROM aux.t ORDER BY x;
        UPDATE aux.t SET y = upper(y) WHERE x < 100;
        DELETE FROM aux.t WHERE x = 20;
        SELECT * FROM aux.t ORDER BY x;
        CREATE INDEX aux.tx ON t(x);
        CREATE UNIQUE INDEX aux.ty ON t(y);
        SELECT * FROM aux.t WHERE x = 30;
        INSERT INTO aux.t VALUES(40, 'A');
        SELECT type, name, tbl_name, sql FROM aux.sqlite_schema ORDER BY name;
        SELECT type, name, tbl_name, sql FROM aux.sqlite_master ORDER BY name;
        SELECT type, name FROM sqlite_schema ORDER BY name;
        PRAGMA aux.table_info(t);
        PRAGMA aux.index_list(t);
        PRAGMA aux.index_info(tx);
        PRAGMA table_info(t);
        PRAGMA aux.user_version = 7;
        PRAGMA aux.user_version;
        PRAGMA user_version;
        PRAGMA nosuch.table_info(t);
        SELECT * FROM nosuch.t;
        CREATE TABLE nosuch.t(x);
        DROP TABLE aux.only_aux;
        SELECT * FROM only_aux;
        DROP TABLE IF EXISTS aux.only_aux;
        CREATE TABLE aux.gone(x);
        DROP TABLE gone;
        SELECT name FROM aux.sqlite_schema WHERE name = 'gone';
        ALTER TABLE aux.t ADD COLUMN w DEFAULT 5;
        SELECT * FROM aux.t ORDER BY x;
        ALTER TABLE aux.t RENAME TO t2;
        SELECT * FROM aux.t2 ORDER BY x;
        DETACH DATABASE second;
        PRAGMA database_list;
        DETACH aux;
        SELECT * FROM aux.t2;
        PRAGMA database_list;
        ",
    );
}

#[test]
fn attach_errors() {
    let pair = Pair::new("errors");
    let mut script = String::from(
        "
        ATTACH 'DIR/a.db' AS a;
        ATTACH 'DIR/b.db' AS a;
        ATTACH 'DIR/b.db' AS A;
        ATTACH 'DIR/b.db' AS main;
        ATTACH 'DIR/b.db' AS temp;
        DETACH main;
        DETACH temp;
        DETACH nosuch;
        DETACH DATABASE nosuch;
        CREATE TABLE a.t(x);
        BEGIN;
        INSERT INTO a.t VALUES(1);
        DETACH a;
        COMMIT;
        SELECT * FROM a.t;
        BEGIN;
        DETACH a;
        COMMIT;
        ATTACH 'DIR/a.db' AS a;
        CREATE TEMP TABLE a.x(y);
        CREATE VIRTUAL TABLE a.v USING nosuchmodule(a);
        CREATE VIRTUAL TABLE v USING nosuchmodule(a);
        ",
    );
    for i in 0..11 {
        script.push_str(&format!("ATTACH 'DIR/many{i}.db' AS m{i};\n"));
    }
    script.push_str("PRAGMA database_list;\n");
    pair.check(&script);
}

/// Virtual tables: parlite has no modules, not even SQLite's built-in fts5 (the bundled
/// oracle has it), and says so in SQLite's words.
#[test]
fn virtual_tables_have_no_module() {
    let dir = fresh_dir("vtab");
    let c = parlite::Connection::open(dir.join("main.db").to_str().expect("utf8")).expect("open");
    for sql in [
        "CREATE VIRTUAL TABLE x USING fts5(a)",
        "CREATE VIRTUAL TABLE IF NOT EXISTS main.x USING fts5(a, b)",
        "CREATE VIRTUAL TABLE x USING rtree(id, a, b)",
    ] {
        let e = c.execute_batch(sql).expect_err(sql);
        let module = if sql.contains("rtree") {
            "rtree"
        } else {
            "fts5"
        };
        assert_eq!(e.message, format!("no such module: {module}"), "{sql}");
    }
}

#[test]
fn attach_memory_and_temp_databases() {
    let pair = Pair::new("memory");
    pair.check(
        "
        ATTACH ':memory:' AS mem;
        ATTACH '' AS tmp;
        ATTACH DATABASE ':memory:' AS mem2;
        PRAGMA database_list;
        CREATE TABLE mem.t(a);
        CREATE TABLE tmp.t(b);
        INSERT INTO mem.t VALUES(1),(2);
        INSERT INTO tmp.t SELECT a * 10 FROM mem.t;
        SELECT * FROM mem.t;
        SELECT * FROM tmp.t;
        SELECT * FROM mem2.sqlite_schema;
        DETACH mem;
        ATTACH ':memory:' AS mem;
        SELECT * FROM mem.t;
        ",
    );
}

#[test]
fn attach_name_resolution() {
    let pair = Pair::new("resolve");
    pair.check(
        "
        CREATE TABLE t(a);
        INSERT INTO t VALUES('main');
        ATTACH 'DIR/x.db' AS x;
        ATTACH 'DIR/y.db' AS y;
        CREATE TABLE x.t(a);
        INSERT INTO x.t VALUES('x');
        CREATE TABLE y.t(a);
        INSERT INTO y.t VALUES('y');
        CREATE TABLE x.u(a);
        INSERT INTO x.u VALUES('x.u');
        CREATE TABLE y.u(a);
        INSERT INTO y.u VALUES('y.u');
        SELECT * FROM t;
        SELECT * FROM u;
        CREATE VIEW y.v AS SELECT a FROM t;
        SELECT * FROM y.v;
        SELECT * FROM v;
        CREATE TEMP TABLE t(a);
        INSERT INTO temp.t VALUES('temp');
        SELECT * FROM t;
        SELECT * FROM main.t;
        SELECT * FROM y.v;
        CREATE TABLE y.log(msg);
        CREATE TRIGGER y.tr AFTER INSERT ON t BEGIN INSERT INTO log VALUES('y.t got ' || new.a); END;
        INSERT INTO y.t VALUES('y2');
        INSERT INTO t VALUES('temp2');
        SELECT * FROM y.log;
        CREATE TRIGGER y.bad AFTER INSERT ON t BEGIN INSERT INTO main.t VALUES(1); END;
        CREATE TRIGGER bad2 AFTER INSERT ON y.t BEGIN SELECT 1; END;
        CREATE TRIGGER y.bad3 AFTER INSERT ON main.t BEGIN SELECT 1; END;
        CREATE TRIGGER y.ok2 AFTER INSERT ON y.u BEGIN SELECT 1; END;
        CREATE TRIGGER ok3 AFTER INSERT ON main.t BEGIN SELECT 1; END;
        CREATE INDEX i1 ON u(a);
        CREATE INDEX y.i2 ON u(a);
        SELECT name, tbl_name FROM y.sqlite_schema WHERE type = 'index';
        DROP VIEW v;
        SELECT name FROM y.sqlite_schema WHERE type = 'view';
        ",
    );
}

#[test]
fn attach_transactions() {
    let pair = Pair::new("txn");
    pair.check(
        "
        CREATE TABLE t(a);
        ATTACH 'DIR/aux.db' AS aux;
        CREATE TABLE aux.t(a);
        BEGIN;
        INSERT INTO main.t VALUES(1);
        INSERT INTO aux.t VALUES(1);
        COMMIT;
        BEGIN;
        INSERT INTO main.t VALUES(2);
        INSERT INTO aux.t VALUES(2);
        ROLLBACK;
        SELECT * FROM main.t;
        SELECT * FROM aux.t;
        BEGIN;
        INSERT INTO aux.t VALUES(3);
        SAVEPOINT s1;
        INSERT INTO aux.t VALUES(4);
        INSERT INTO main.t VALUES(4);
        ROLLBACK TO s1;
        INSERT INTO aux.t VALUES(5);
        RELEASE s1;
        COMMIT;
        SELECT * FROM main.t;
        SELECT * FROM aux.t;
        SAVEPOINT outer1;
        INSERT INTO main.t VALUES(6);
        SAVEPOINT inner1;
        INSERT INTO aux.t VALUES(6);
        ROLLBACK TO inner1;
        INSERT INTO aux.t VALUES(7);
        RELEASE outer1;
        SELECT * FROM main.t;
        SELECT * FROM aux.t;
        CREATE UNIQUE INDEX aux.ua ON t(a);
        BEGIN;
        INSERT INTO aux.t VALUES(8);
        INSERT INTO aux.t VALUES(8),(9);
        INSERT INTO aux.t VALUES(10);
        COMMIT;
        SELECT * FROM aux.t;
        BEGIN;
        CREATE TABLE aux.ddl(x);
        INSERT INTO aux.ddl VALUES(1);
        ROLLBACK;
        SELECT * FROM aux.ddl;
        SELECT name FROM aux.sqlite_schema;
        ",
    );
}

/// SQLite's integrity_check of a file (after parlite closed it).
fn sqlite_integrity(path: &Path) -> String {
    let c = rusqlite::Connection::open(path).expect("open with sqlite");
    c.query_row("PRAGMA integrity_check", [], |r| r.get::<_, String>(0))
        .expect("integrity_check")
}

fn rows(c: &parlite::Connection, sql: &str) -> Vec<Vec<parlite::Value>> {
    let (mut st, _) = c.prepare(sql).expect("prepare").expect("statement");
    let mut out = Vec::new();
    while st.step().expect("step") {
        out.push((0..st.column_count()).map(|i| st.column(i)).collect());
    }
    out
}

#[test]
fn attached_files_are_durable_and_sqlite_compatible() {
    let dir = fresh_dir("files");
    let main = dir.join("main.db");
    let aux = dir.join("aux.db");
    let made = dir.join("made_by_sqlite.db");
    {
        let s = rusqlite::Connection::open(&made).expect("sqlite");
        s.execute_batch(
            "CREATE TABLE s(k INTEGER PRIMARY KEY, v TEXT UNIQUE);
             INSERT INTO s VALUES(1,'one'),(2,'two');
             CREATE INDEX sv ON s(v, k);
             CREATE VIEW sview AS SELECT v FROM s;",
        )
        .expect("sqlite setup");
    }
    {
        let c = parlite::Connection::open(main.to_str().expect("utf8")).expect("open");
        c.execute_batch(&format!(
            "CREATE TABLE m(a);
             ATTACH '{}' AS aux;
             ATTACH '{}' AS made;
             CREATE TABLE aux.t(a INTEGER PRIMARY KEY, b UNIQUE);
             CREATE INDEX aux.tb ON t(b);
             BEGIN;
             INSERT INTO m VALUES(1);
             INSERT INTO aux.t VALUES(1, 'x'), (2, 'y');
             INSERT INTO made.s VALUES(3, 'three');
             COMMIT;
             INSERT INTO aux.t SELECT k + 10, v FROM made.s;
             UPDATE made.s SET v = v || '!' WHERE k = 1;",
            aux.display(),
            made.display()
        ))
        .expect("parlite script");
        assert_eq!(
            rows(&c, "SELECT v FROM sview ORDER BY v"),
            vec![
                vec![parlite::Value::Text("one!".into())],
                vec![parlite::Value::Text("three".into())],
                vec![parlite::Value::Text("two".into())],
            ]
        );
    }
    {
        let c = parlite::Connection::open(main.to_str().expect("utf8")).expect("reopen");
        c.execute_batch(&format!("ATTACH '{}' AS aux", aux.display()))
            .expect("reattach");
        assert_eq!(
            rows(&c, "SELECT count(*), sum(a) FROM aux.t"),
            vec![vec![
                parlite::Value::Integer(5),
                parlite::Value::Integer(39)
            ]]
        );
        assert_eq!(
            rows(&c, "SELECT count(*) FROM m"),
            vec![vec![parlite::Value::Integer(1)]]
        );
        assert_eq!(
            rows(&c, "PRAGMA aux.integrity_check"),
            vec![vec![parlite::Value::Text("ok".into())]]
        );
    }
    for f in [&main, &aux, &made] {
        assert_eq!(sqlite_integrity(f), "ok", "{}", f.display());
    }
    let s = rusqlite::Connection::open(&aux).expect("sqlite aux");
    let n: i64 = s
        .query_row(
            "SELECT count(*) FROM t WHERE b IN ('x','y','one','two','three')",
            [],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(n, 5);
    let s = rusqlite::Connection::open(&made).expect("sqlite made");
    let v: String = s
        .query_row(
            "SELECT group_concat(v, ',') FROM (SELECT v FROM s ORDER BY k)",
            [],
            |r| r.get(0),
        )
        .expect("made rows");
    assert_eq!(v, "one!,two,three");
}

#[test]
fn two_connections_share_an_attached_file() {
    let dir = fresh_dir("shared");
    let db = parlite::Database::open(dir.join("main.db").to_str().expect("utf8")).expect("db");
    let a = db.connect().expect("a");
    let b = db.connect().expect("b");
    let aux = dir.join("aux.db");
    for c in [&a, &b] {
        c.execute_batch(&format!("ATTACH '{}' AS aux", aux.display()))
            .expect("attach");
    }
    a.execute_batch("CREATE TABLE aux.t(x); INSERT INTO aux.t VALUES(1)")
        .expect("a writes");
    b.execute_batch("INSERT INTO aux.t VALUES(2)")
        .expect("b writes");
    assert_eq!(
        rows(&a, "SELECT sum(x) FROM aux.t"),
        vec![vec![parlite::Value::Integer(3)]]
    );
    // A snapshot inside a transaction is stable while the other connection commits.
    a.execute_batch("BEGIN; SELECT * FROM aux.t;")
        .expect("begin");
    b.execute_batch("INSERT INTO aux.t VALUES(4)")
        .expect("b writes again");
    assert_eq!(
        rows(&a, "SELECT sum(x) FROM aux.t"),
        vec![vec![parlite::Value::Integer(3)]]
    );
    a.execute_batch("COMMIT").expect("commit");
    assert_eq!(
        rows(&a, "SELECT sum(x) FROM aux.t"),
        vec![vec![parlite::Value::Integer(7)]]
    );
}

#[test]
fn begin_immediate_locks_attached_databases() {
    let dir = fresh_dir("immediate");
    let db = parlite::Database::open(dir.join("main.db").to_str().expect("utf8")).expect("db");
    let a = db.connect().expect("a");
    let b = db.connect().expect("b");
    let aux = dir.join("aux.db");
    for c in [&a, &b] {
        c.execute_batch(&format!("ATTACH '{}' AS aux", aux.display()))
            .expect("attach");
    }
    a.execute_batch("CREATE TABLE aux.t(x)").expect("create");
    a.execute_batch("BEGIN IMMEDIATE").expect("begin immediate");
    let e = b
        .execute_batch("INSERT INTO aux.t VALUES(1)")
        .expect_err("aux is locked by a's BEGIN IMMEDIATE");
    assert_eq!(e.code, 5, "{}", e.message);
    // DETACH of a database the transaction holds is refused, as in SQLite.
    let e = a.execute_batch("DETACH aux").expect_err("locked");
    assert_eq!(e.message, "database aux is locked");
    a.execute_batch("INSERT INTO aux.t VALUES(2); COMMIT")
        .expect("commit");
    b.execute_batch("INSERT INTO aux.t VALUES(3)")
        .expect("b writes after commit");
    assert_eq!(
        rows(&b, "SELECT sum(x) FROM aux.t"),
        vec![vec![parlite::Value::Integer(5)]]
    );
}

/// SQLITE_LIMIT_ATTACHED: 0 forbids ATTACH before any file is touched (the fuzz targets
/// rely on it: mutated `ATTACH ':memory:'` inputs once left files in the working folder).
#[test]
fn attach_limit_zero_creates_no_file() {
    let dir = fresh_dir("limit");
    let c = parlite::Connection::open(":memory:").expect("open");
    assert_eq!(c.set_limit_attached(0), 10);
    let f = dir.join("never.db");
    let e = c
        .execute_batch(&format!("ATTACH '{}' AS x", f.display()))
        .expect_err("limit 0");
    assert_eq!(e.message, "too many attached databases - max 0");
    assert!(!f.exists());
    assert_eq!(c.set_limit_attached(1), 0);
    c.execute_batch("ATTACH ':memory:' AS a")
        .expect("one allowed");
    let e = c
        .execute_batch("ATTACH ':memory:' AS b")
        .expect_err("max 1");
    assert_eq!(e.message, "too many attached databases - max 1");
}

/// attach.rs invariant 3: BEGIN CONCURRENT writes main optimistically and attached files
/// under their writer lock; a main conflict at COMMIT rolls the attached writes back too.
#[test]
fn concurrent_conflict_rolls_back_attached_writes() {
    let dir = fresh_dir("concurrent");
    let db = parlite::Database::open(dir.join("main.db").to_str().expect("utf8")).expect("db");
    let a = db.connect().expect("a");
    let b = db.connect().expect("b");
    let aux = dir.join("aux.db");
    for c in [&a, &b] {
        c.execute_batch(&format!("ATTACH '{}' AS aux", aux.display()))
            .expect("attach");
    }
    a.execute_batch(
        "CREATE TABLE t(id INTEGER PRIMARY KEY, v); INSERT INTO t VALUES(1, 0);
         CREATE TABLE aux.log(who);",
    )
    .expect("setup");
    // Both files commit together when nothing conflicts.
    a.execute_batch(
        "BEGIN CONCURRENT; UPDATE t SET v = v + 1; INSERT INTO aux.log VALUES('ok'); COMMIT;",
    )
    .expect("concurrent commit");
    a.execute_batch(
        "BEGIN CONCURRENT; UPDATE t SET v = 10 WHERE id = 1; INSERT INTO aux.log VALUES('a');",
    )
    .expect("a writes");
    b.execute_batch("UPDATE t SET v = 20 WHERE id = 1")
        .expect("b commits first");
    let e = a.execute_batch("COMMIT").expect_err("a conflicts on t");
    assert_eq!(e.extended_code, 517, "{}", e.message);
    assert!(a.is_autocommit());
    assert_eq!(
        rows(&b, "SELECT group_concat(who) FROM aux.log"),
        vec![vec![parlite::Value::Text("ok".into())]]
    );
    assert_eq!(
        rows(&a, "SELECT v FROM t"),
        vec![vec![parlite::Value::Integer(20)]]
    );
    // The aux lock was released with the rollback.
    b.execute_batch("INSERT INTO aux.log VALUES('b')")
        .expect("b writes aux");
}
