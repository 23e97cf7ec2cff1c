//! Prepared statements reused many times (kv_ops, issue 4): each execution after `reset`
//! and new bindings gives the results, changes() and last_insert_rowid() of a fresh
//! statement, a failing execution undoes only itself and leaves the statement reusable,
//! and the sole connection of a database runs its autocommit writes under the writer lock
//! (lib.rs invariant 7) while two connections keep running them concurrently (invariant 3).

mod common;

use parlite::{Connection, Database, Statement, Value};

fn prep(c: &Connection, sql: &str) -> Statement {
    c.prepare(sql).expect("prepare").expect("one statement").0
}

/// Binds `binds`, steps to the end, resets; the rows' first columns.
fn run(st: &mut Statement, binds: &[Value]) -> parlite::Result<Vec<Value>> {
    for (i, v) in binds.iter().enumerate() {
        st.bind(i + 1, v.clone())?;
    }
    let mut out = Vec::new();
    let r = (|| {
        while st.step()? {
            out.push(st.column(0));
        }
        Ok(())
    })();
    st.reset();
    r.map(|()| out)
}

fn text(s: &str) -> Value {
    Value::Text(s.to_string())
}

fn int(c: &Connection, sql: &str) -> i64 {
    let mut st = prep(c, sql);
    assert!(st.step().unwrap());
    match st.column(0) {
        Value::Integer(n) => n,
        other => panic!("{sql}: {other:?}"),
    }
}

fn kv_table(c: &Connection) {
    c.execute_batch("CREATE TABLE kv(key TEXT PRIMARY KEY, value TEXT)")
        .unwrap();
}

#[test]
fn reused_statements_report_each_execution() {
    let c = Connection::open(":memory:").unwrap();
    kv_table(&c);
    let mut ins = prep(&c, "INSERT INTO kv(key, value) VALUES(?,?)");
    let mut sel = prep(&c, "SELECT value FROM kv WHERE key=?");
    let mut upd = prep(&c, "UPDATE kv SET value=? WHERE key=?");
    let mut del = prep(&c, "DELETE FROM kv WHERE key=?");
    for i in 0..50 {
        run(&mut ins, &[text(&format!("k{i}")), text(&format!("v{i}"))]).unwrap();
        assert_eq!(c.changes(), 1);
        assert_eq!(c.last_insert_rowid(), i + 1);
    }
    // A duplicate key fails, changes nothing, and the statement runs again afterwards.
    let e = run(&mut ins, &[text("k7"), text("other")]).unwrap_err();
    assert_eq!(e.to_string(), "UNIQUE constraint failed: kv.key");
    assert_eq!(run(&mut sel, &[text("k7")]).unwrap(), vec![text("v7")]);
    assert_eq!(int(&c, "SELECT count(*) FROM kv"), 50);
    run(&mut ins, &[text("k50"), text("v50")]).unwrap();
    assert_eq!(c.last_insert_rowid(), 51);
    for i in 0..51 {
        assert_eq!(
            run(&mut sel, &[text(&format!("k{i}"))]).unwrap(),
            vec![text(&format!("v{i}"))]
        );
    }
    assert_eq!(
        run(&mut sel, &[text("missing")]).unwrap(),
        Vec::<Value>::new()
    );
    for i in 0..51 {
        run(&mut upd, &[text(&format!("w{i}")), text(&format!("k{i}"))]).unwrap();
        assert_eq!(c.changes(), 1);
    }
    run(&mut upd, &[text("x"), text("missing")]).unwrap();
    assert_eq!(c.changes(), 0);
    for i in (0..51).step_by(2) {
        run(&mut del, &[text(&format!("k{i}"))]).unwrap();
        assert_eq!(c.changes(), 1);
    }
    run(&mut del, &[text("k0")]).unwrap();
    assert_eq!(c.changes(), 0);
    assert_eq!(int(&c, "SELECT count(*) FROM kv"), 25);
    assert_eq!(
        int(
            &c,
            "SELECT count(*) FROM kv WHERE value = 'w' || substr(key, 2)"
        ),
        25
    );
    assert_eq!(c.total_changes(), 51 + 51 + 26);
    let mut chk = prep(&c, "PRAGMA integrity_check");
    assert!(chk.step().unwrap());
    assert_eq!(chk.column(0), text("ok"));
}

/// The same statements inside an explicit transaction: a failing execution undoes only
/// itself (statement atomicity), ROLLBACK undoes them all, and the prepared statements stay
/// usable across both.
#[test]
fn reused_statements_inside_explicit_transactions() {
    let c = Connection::open(":memory:").unwrap();
    kv_table(&c);
    let mut ins = prep(&c, "INSERT INTO kv(key, value) VALUES(?,?)");
    c.execute_batch("BEGIN").unwrap();
    run(&mut ins, &[text("a"), text("1")]).unwrap();
    run(&mut ins, &[text("a"), text("2")]).unwrap_err();
    run(&mut ins, &[text("b"), text("3")]).unwrap();
    c.execute_batch("COMMIT").unwrap();
    assert_eq!(int(&c, "SELECT count(*) FROM kv"), 2);
    c.execute_batch("BEGIN").unwrap();
    run(&mut ins, &[text("c"), text("4")]).unwrap();
    c.execute_batch("ROLLBACK").unwrap();
    run(&mut ins, &[text("d"), text("5")]).unwrap();
    assert_eq!(int(&c, "SELECT count(*) FROM kv"), 3);
    assert_eq!(int(&c, "SELECT count(*) FROM kv WHERE key = 'c'"), 0);
}

fn stat(db: &Database, name: &str) -> u64 {
    let s = db.stats();
    match name {
        "locked" => s.locked_commits,
        "concurrent" => s.concurrent_commits,
        _ => s.autocommit_lock_fallbacks,
    }
}

/// Invariant 7: one connection writes under the lock; a second open connection turns
/// autocommit writes back into concurrent transactions; closing it turns them back.
#[test]
fn sole_connection_writes_under_the_writer_lock() {
    let db = Database::open(":memory:").unwrap();
    let c1 = db.connect().unwrap();
    kv_table(&c1);
    let mut ins = prep(&c1, "INSERT INTO kv(key, value) VALUES(?,?)");
    let (l0, k0) = (stat(&db, "locked"), stat(&db, "concurrent"));
    for i in 0..10 {
        run(&mut ins, &[text(&format!("a{i}")), text("x")]).unwrap();
    }
    assert_eq!(stat(&db, "locked") - l0, 10);
    assert_eq!(stat(&db, "concurrent") - k0, 0);
    let c2 = db.connect().unwrap();
    let (l1, k1) = (stat(&db, "locked"), stat(&db, "concurrent"));
    for i in 0..10 {
        run(&mut ins, &[text(&format!("b{i}")), text("x")]).unwrap();
    }
    c2.execute_batch("INSERT INTO kv VALUES('c', 'y')").unwrap();
    assert_eq!(stat(&db, "concurrent") - k1, 11);
    assert_eq!(stat(&db, "locked") - l1, 0);
    assert_eq!(stat(&db, "fallbacks"), 0);
    drop(c2);
    let l2 = stat(&db, "locked");
    run(&mut ins, &[text("d"), text("x")]).unwrap();
    assert_eq!(stat(&db, "locked") - l2, 1);
    assert_eq!(int(&c1, "SELECT count(*) FROM kv"), 22);
}

/// Invariant 7 when the lock is held elsewhere: a second `Database` over the same file
/// (as another process would be) holds BEGIN IMMEDIATE; the sole connection's autocommit
/// write does not fail at once but waits, as a concurrent attempt, for the lock.
#[test]
fn sole_connection_waits_when_another_handle_holds_the_lock() {
    let dir = common::TempDir::new("reuse");
    let path = dir.join("lock.db").display().to_string();
    let a = Connection::open(&path).unwrap();
    kv_table(&a);
    let b = Connection::open(&path).unwrap();
    b.execute_batch("BEGIN IMMEDIATE; INSERT INTO kv VALUES('held', '1')")
        .unwrap();
    let writer = std::thread::spawn(move || {
        let mut ins = prep(&a, "INSERT INTO kv(key, value) VALUES(?,?)");
        let r = run(&mut ins, &[text("after"), text("2")]);
        (r.map(|_| ()), int(&a, "SELECT count(*) FROM kv"))
    });
    std::thread::sleep(std::time::Duration::from_millis(200));
    b.execute_batch("COMMIT").unwrap();
    let (r, n) = writer.join().unwrap();
    r.unwrap();
    assert_eq!(n, 2);
    drop(b);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A connection keeps its statements' idle cursors between statements (lib.rs
/// `idle_cursors`): the next statement, in a new transaction, must see that transaction's
/// pages — other connections' commits, its own rolled-back changes gone, and trees dropped
/// and re-created on the same root pages — never the pages a kept cursor last stood on.
#[test]
fn kept_cursors_see_each_statements_own_transaction() {
    let dir = common::TempDir::new("kept-cursors");
    let path = dir.join("k.db");
    let path = path.to_str().unwrap();
    let db = Database::open(path).unwrap();
    let c1 = db.connect().unwrap();
    let c2 = db.connect().unwrap();
    for c in [&c1, &c2] {
        c.execute_batch("PRAGMA synchronous=OFF").unwrap();
    }
    kv_table(&c1);
    let key = |i: usize| format!("key{:05}", (i * 7919) % 3000);
    let mut ins = prep(&c1, "INSERT INTO kv(key, value) VALUES(?,?)");
    for i in 0..3000 {
        run(&mut ins, &[text(&key(i)), text(&format!("{i:0>60}"))]).unwrap();
    }
    let mut sel = prep(&c1, "SELECT value FROM kv WHERE key=?");
    let mut cnt = prep(&c1, "SELECT count(*) FROM kv WHERE key BETWEEN ? AND ?");
    for i in (0..3000).step_by(97) {
        assert_eq!(
            run(&mut sel, &[text(&key(i))]).unwrap(),
            vec![text(&format!("{i:0>60}"))]
        );
    }
    // Another connection rewrites, deletes and adds rows (splitting and merging pages).
    c2.execute_batch(
        "UPDATE kv SET value = 'x' || value WHERE rowid % 3 = 0;
         DELETE FROM kv WHERE rowid % 5 = 0;
         INSERT INTO kv SELECT 'new' || key, zeroblob(300) FROM kv WHERE rowid % 7 = 0;",
    )
    .unwrap();
    for i in 0..3000 {
        let rowid = i as i64 + 1;
        let want = if rowid % 5 == 0 {
            vec![]
        } else if rowid % 3 == 0 {
            vec![text(&format!("x{i:0>60}"))]
        } else {
            vec![text(&format!("{i:0>60}"))]
        };
        assert_eq!(
            run(&mut sel, &[text(&key(i))]).unwrap(),
            want,
            "key {}",
            key(i)
        );
    }
    let all = run(&mut cnt, &[text("key"), text("key99999")]).unwrap();
    assert_eq!(all, vec![Value::Integer(3000 - 600)]);
    // Own changes undone by ROLLBACK are gone for the next statement.
    c1.execute_batch("BEGIN; DELETE FROM kv WHERE key < 'key01000';")
        .unwrap();
    assert_eq!(run(&mut sel, &[text(&key(0))]).unwrap(), vec![]);
    c1.execute_batch("ROLLBACK").unwrap();
    assert_eq!(
        run(&mut sel, &[text(&key(0))]).unwrap(),
        vec![text(&format!("{:0>60}", 0))]
    );
    // The trees dropped and new ones made (on the freed root pages) under the same names.
    c2.execute_batch(
        "DROP TABLE kv;
         CREATE TABLE other(a INTEGER PRIMARY KEY, b);
         CREATE INDEX other_b ON other(b);
         WITH RECURSIVE s(v) AS (SELECT 1 UNION ALL SELECT v + 1 FROM s WHERE v < 500)
         INSERT INTO other SELECT v, v FROM s;
         CREATE TABLE kv(key TEXT PRIMARY KEY, value TEXT);
         INSERT INTO kv VALUES('key00000', 'again');",
    )
    .unwrap();
    assert_eq!(
        run(&mut sel, &[text("key00000")]).unwrap(),
        vec![text("again")]
    );
    assert_eq!(run(&mut sel, &[text(&key(1))]).unwrap(), vec![]);
    assert_eq!(
        run(&mut cnt, &[text("key"), text("key99999")]).unwrap(),
        vec![Value::Integer(1)]
    );
    let mut b = prep(&c1, "SELECT a FROM other WHERE b = ?");
    assert_eq!(
        run(&mut b, &[Value::Integer(250)]).unwrap(),
        vec![Value::Integer(250)]
    );
    drop((ins, sel, cnt, b, c1, c2, db));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Statements skip the temp database's statement savepoint until a TEMP object exists
/// (lib.rs `temp_savepoint`); from then on a failing statement still undoes its TEMP
/// writes, including those of a TEMP trigger on a main table.
#[test]
fn failing_statements_undo_their_temp_writes() {
    let c = Connection::open(":memory:").unwrap();
    kv_table(&c);
    let mut ins = prep(&c, "INSERT INTO kv(key, value) VALUES(?,?)");
    run(&mut ins, &[text("a"), text("1")]).unwrap();
    assert!(run(&mut ins, &[text("a"), text("2")]).is_err());
    c.execute_batch(
        "CREATE TEMP TABLE log(k);
         CREATE TEMP TRIGGER kv_log AFTER INSERT ON main.kv BEGIN INSERT INTO log VALUES(new.key); END;",
    )
    .unwrap();
    run(&mut ins, &[text("b"), text("1")]).unwrap();
    // The trigger logs 'c' before the second row's key clashes: both undone.
    let mut two = prep(&c, "INSERT INTO kv(key, value) VALUES('c', 1), ('a', 2)");
    assert!(run(&mut two, &[]).is_err());
    assert_eq!(int(&c, "SELECT count(*) FROM log"), 1);
    assert_eq!(int(&c, "SELECT count(*) FROM kv"), 2);
    c.execute_batch("BEGIN; INSERT INTO kv VALUES('d', 1);")
        .unwrap();
    assert!(run(&mut two, &[]).is_err());
    c.execute_batch("COMMIT").unwrap();
    assert_eq!(int(&c, "SELECT count(*) FROM log"), 2);
    let mut keys = prep(&c, "SELECT group_concat(k) FROM log");
    assert_eq!(run(&mut keys, &[]).unwrap(), vec![text("b,d")]);
}

/// sqlite3_step resets a statement by itself after SQLITE_DONE (SQLite >= 3.6.23.1): a
/// step after the last row runs the statement again with the same bindings, for a query
/// (rows from the first again, seeing writes made since) and for a write (it writes again).
#[test]
fn step_after_done_runs_the_statement_again() {
    let c = Connection::open(":memory:").unwrap();
    kv_table(&c);
    let mut ins = prep(&c, "INSERT INTO kv VALUES(?1, 'v')");
    ins.bind(1, text("a")).unwrap();
    assert!(!ins.step().unwrap());
    assert_eq!(int(&c, "SELECT count(*) FROM kv"), 1);
    // No reset: the second step inserts again, hitting the key already there.
    let e = ins.step().expect_err("second insert of the same key");
    assert_eq!(e.code, 19, "{e}");
    ins.bind(1, text("b")).unwrap();
    assert!(!ins.step().unwrap());
    assert_eq!(int(&c, "SELECT count(*) FROM kv"), 2);

    let mut q = prep(&c, "SELECT key FROM kv ORDER BY key");
    let mut seen = Vec::new();
    while q.step().unwrap() {
        seen.push(q.column(0));
    }
    assert_eq!(seen, vec![text("a"), text("b")]);
    c.execute_batch("INSERT INTO kv VALUES('c', 'v')").unwrap();
    let mut again = Vec::new();
    while q.step().unwrap() {
        again.push(q.column(0));
    }
    assert_eq!(again, vec![text("a"), text("b"), text("c")]);
}
