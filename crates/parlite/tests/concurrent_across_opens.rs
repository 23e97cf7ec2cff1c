//! BEGIN CONCURRENT between connections opened separately on one file in one process
//! (`Connection::open` twice, not `Database::connect`): they share the file's backend,
//! and a concurrent transaction must validate against every commit made on it, whichever
//! open made it. Each open kept its own commit history before, so a concurrent commit
//! missed the other's writes and a read-modify-write lost an update.

mod common;

const SQLITE_BUSY_SNAPSHOT: i32 = 517;

fn value(c: &parlite::Connection, sql: &str) -> i64 {
    let mut st = common::prepare_one(c, sql);
    match common::rows_of(&mut st, &[])
        .first()
        .and_then(|r| r.first())
    {
        Some(parlite::Value::Integer(i)) => *i,
        other => panic!("{sql}: {other:?}"),
    }
}

#[test]
fn a_concurrent_commit_sees_another_opens_commits() {
    let dir = common::TempDir::new("conc-opens");
    let path = dir.join("c.db");
    let path = path.to_str().expect("utf8");
    let a = parlite::Connection::open(path).expect("open a");
    let b = parlite::Connection::open(path).expect("open b");
    a.execute_batch(
        "CREATE TABLE t(id INTEGER PRIMARY KEY, n); INSERT INTO t VALUES(1, 0), (2, 0)",
    )
    .expect("setup");

    // Both read row 1 and write it back plus one: the second commit must fail.
    a.execute_batch("BEGIN CONCURRENT").expect("begin a");
    b.execute_batch("BEGIN CONCURRENT").expect("begin b");
    assert_eq!(value(&a, "SELECT n FROM t WHERE id = 1"), 0);
    assert_eq!(value(&b, "SELECT n FROM t WHERE id = 1"), 0);
    a.execute_batch("UPDATE t SET n = n + 1 WHERE id = 1")
        .expect("update a");
    b.execute_batch("UPDATE t SET n = n + 1 WHERE id = 1")
        .expect("update b");
    a.execute_batch("COMMIT").expect("commit a");
    let e = b
        .execute_batch("COMMIT")
        .expect_err("b read a row a changed: it must not commit");
    assert_eq!(e.extended_code, SQLITE_BUSY_SNAPSHOT, "{e}");
    assert!(b.is_autocommit(), "the failed transaction is rolled back");
    assert_eq!(value(&b, "SELECT n FROM t WHERE id = 1"), 1);

    // An IMMEDIATE writer of the other open counts too.
    a.execute_batch("BEGIN CONCURRENT").expect("begin a");
    assert_eq!(value(&a, "SELECT n FROM t WHERE id = 2"), 0);
    b.execute_batch("BEGIN IMMEDIATE; UPDATE t SET n = 10 WHERE id = 2; COMMIT")
        .expect("immediate b");
    a.execute_batch("UPDATE t SET n = n + 1 WHERE id = 2")
        .expect("update a");
    let e = a
        .execute_batch("COMMIT")
        .expect_err("a read a row b changed");
    assert_eq!(e.extended_code, SQLITE_BUSY_SNAPSHOT, "{e}");

    // Disjoint rows still both commit.
    a.execute_batch("BEGIN CONCURRENT; UPDATE t SET n = n + 1 WHERE id = 1")
        .expect("a");
    b.execute_batch("BEGIN CONCURRENT; UPDATE t SET n = n + 1 WHERE id = 2")
        .expect("b");
    a.execute_batch("COMMIT").expect("commit a");
    b.execute_batch("COMMIT").expect("commit b");
    assert_eq!(value(&a, "SELECT n FROM t WHERE id = 1"), 2);
    assert_eq!(value(&a, "SELECT n FROM t WHERE id = 2"), 11);
}
