//! The commit and rollback hooks through the Rust API (the C API's differential test,
//! crates/capi/tests/c/hooks.c, compares their calls with SQLite's): parlite's own paths —
//! BEGIN CONCURRENT, autocommit writes run as concurrent transactions, a deferred foreign
//! key failing COMMIT — and a refused commit leaving nothing behind.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::temp_db_path;

struct Calls {
    commits: Arc<AtomicUsize>,
    rollbacks: Arc<AtomicUsize>,
    veto: Arc<AtomicUsize>,
}

impl Calls {
    fn install(c: &parlite::Connection) -> Calls {
        let calls = Calls {
            commits: Arc::default(),
            rollbacks: Arc::default(),
            veto: Arc::default(),
        };
        let (n, veto) = (calls.commits.clone(), calls.veto.clone());
        c.commit_hook(Some(Box::new(move || {
            n.fetch_add(1, Ordering::SeqCst);
            veto.load(Ordering::SeqCst) != 0
        })));
        let n = calls.rollbacks.clone();
        c.rollback_hook(Some(Box::new(move || {
            n.fetch_add(1, Ordering::SeqCst);
        })));
        calls
    }

    fn counts(&self) -> (usize, usize) {
        (
            self.commits.load(Ordering::SeqCst),
            self.rollbacks.load(Ordering::SeqCst),
        )
    }
}

fn count(c: &parlite::Connection) -> i64 {
    let (mut st, _) = c
        .prepare("SELECT count(*) FROM t")
        .expect("prepare")
        .expect("a statement");
    assert!(st.step().expect("step"));
    match st.column(0) {
        parlite::Value::Integer(n) => n,
        v => panic!("count is {v:?}"),
    }
}

#[test]
fn hooks_see_parlite_transactions_and_a_refused_commit_leaves_nothing() {
    let path = temp_db_path("commit-hooks", "db");
    let db = parlite::Database::open(path.to_str().expect("utf-8 path")).expect("open");
    let c = db.connect().expect("connect");
    c.execute_batch(
        "CREATE TABLE t(id INTEGER PRIMARY KEY, v);
         CREATE TABLE p(id INTEGER PRIMARY KEY);
         CREATE TABLE ch(id INTEGER PRIMARY KEY, p REFERENCES p DEFERRABLE INITIALLY DEFERRED);
         PRAGMA foreign_keys = ON",
    )
    .expect("schema");
    let calls = Calls::install(&c);

    // An autocommit write (run as a concurrent transaction, retried on conflict) commits
    // once; a read commits nothing.
    c.execute_batch("INSERT INTO t(v) VALUES (1)")
        .expect("insert");
    assert_eq!(count(&c), 1);
    assert_eq!(calls.counts(), (1, 0));

    // BEGIN CONCURRENT commits through the hook like any writer.
    c.execute_batch("BEGIN CONCURRENT; INSERT INTO t(v) VALUES (2); COMMIT")
        .expect("concurrent");
    assert_eq!(calls.counts(), (2, 0));

    // A deferred foreign key that fails COMMIT: no hook (the transaction stays open);
    // then ROLLBACK calls the rollback hook.
    c.execute_batch("BEGIN; INSERT INTO ch VALUES (1, 7)")
        .expect("begin");
    let e = c.execute_batch("COMMIT").expect_err("deferred violation");
    assert_eq!(e.extended_code, 787, "{e:?}");
    assert_eq!(calls.counts(), (2, 0));
    assert!(!c.is_autocommit());
    c.execute_batch("ROLLBACK").expect("rollback");
    assert_eq!(calls.counts(), (2, 1));

    // Refused: COMMIT fails with SQLITE_CONSTRAINT_COMMITHOOK, the transaction is rolled
    // back (the rollback hook runs) and its rows are gone, for explicit, concurrent and
    // autocommit writes alike.
    calls.veto.store(1, Ordering::SeqCst);
    for sql in [
        "BEGIN; INSERT INTO t(v) VALUES (3); COMMIT",
        "BEGIN CONCURRENT; INSERT INTO t(v) VALUES (4); COMMIT",
        "INSERT INTO t(v) VALUES (5)",
    ] {
        let e = c.execute_batch(sql).expect_err(sql);
        assert_eq!((e.code, e.extended_code), (19, 531), "{sql}: {e:?}");
        assert_eq!(e.message, "constraint failed");
        assert!(c.is_autocommit(), "{sql}");
    }
    assert_eq!(calls.counts(), (5, 4));
    calls.veto.store(0, Ordering::SeqCst);
    assert_eq!(count(&c), 2);
    let other = db.connect().expect("connect");
    assert_eq!(count(&other), 2, "a refused commit reached the database");

    // Replacing a hook hands back the previous one; without hooks nothing is called.
    assert!(c.commit_hook(None).is_some());
    assert!(c.rollback_hook(None).is_some());
    assert!(c.commit_hook(None).is_none());
    c.execute_batch("INSERT INTO t(v) VALUES (6); BEGIN; INSERT INTO t(v) VALUES (7); ROLLBACK")
        .expect("without hooks");
    assert_eq!(calls.counts(), (5, 4));
    assert_eq!(count(&c), 3);
}
