//! A deferred transaction's snapshot starts at its first read, as in SQLite's WAL mode
//! (BEGIN alone reads nothing): commits made between BEGIN and the first read are seen,
//! a first write after them does not fail as stale, and from the first read on the
//! snapshot holds. Each scenario runs on both engines with two connections; the answers
//! must be equal.

mod common;

use common::temp_db_path;

/// One step: which connection (0 or 1) runs which SQL.
type Script<'a> = &'a [(usize, &'a str)];

fn outcome_sqlite(path: &std::path::Path, script: Script<'_>) -> Vec<String> {
    let conns = [0, 1].map(|_| rusqlite::Connection::open(path).expect("open"));
    conns[0]
        .execute_batch("PRAGMA journal_mode=WAL")
        .expect("wal");
    script
        .iter()
        .map(|(c, sql)| {
            let conn = &conns[*c];
            let code = |e: rusqlite::Error| e.sqlite_error().map(|e| e.extended_code);
            let mut st = match conn.prepare(sql) {
                Ok(st) => st,
                Err(e) => return format!("{c}: error {:?}", code(e)),
            };
            let mut rows = match st.query([]) {
                Ok(r) => r,
                Err(e) => return format!("{c}: error {:?}", code(e)),
            };
            let mut out = Vec::new();
            loop {
                match rows.next() {
                    Ok(Some(r)) => out.push(format!("{:?}", r.get::<_, i64>(0).ok())),
                    Ok(None) => break,
                    Err(e) => return format!("{c}: error {:?}", code(e)),
                }
            }
            format!("{c}: {}", out.join(","))
        })
        .collect()
}

fn outcome_parlite(path: &std::path::Path, script: Script<'_>) -> Vec<String> {
    let db = parlite::Database::open(path.to_str().expect("utf-8 path")).expect("open");
    let conns = [0, 1].map(|_| db.connect().expect("connect"));
    script
        .iter()
        .map(|(c, sql)| {
            let conn = &conns[*c];
            let mut st = match conn.prepare(sql) {
                Ok(Some((st, _))) => st,
                Ok(None) => return format!("{c}: "),
                Err(e) => return format!("{c}: error {:?}", Some(e.extended_code)),
            };
            let mut out = Vec::new();
            loop {
                match st.step() {
                    Ok(true) => out.push(format!(
                        "{:?}",
                        match st.column(0) {
                            parlite::Value::Integer(i) => Some(i),
                            _ => None,
                        }
                    )),
                    Ok(false) => break,
                    Err(e) => return format!("{c}: error {:?}", Some(e.extended_code)),
                }
            }
            format!("{c}: {}", out.join(","))
        })
        .collect()
}

fn check(name: &str, script: Script<'_>) {
    let setup: Script<'_> = &[(0, "CREATE TABLE t(x)"), (0, "INSERT INTO t VALUES (1)")];
    let full: Vec<(usize, &str)> = setup.iter().chain(script).copied().collect();
    let sqlite = outcome_sqlite(&temp_db_path(&format!("deferred-{name}"), "sqlite"), &full);
    let parlite = outcome_parlite(&temp_db_path(&format!("deferred-{name}"), "parlite"), &full);
    assert_eq!(parlite, sqlite, "{name}");
}

#[test]
fn a_deferred_transaction_reads_from_its_first_read() {
    check(
        "read",
        &[
            (0, "BEGIN"),
            (1, "INSERT INTO t VALUES (2)"),
            (0, "SELECT count(*) FROM t"),
            (1, "INSERT INTO t VALUES (3)"),
            (0, "SELECT count(*) FROM t"),
            (0, "COMMIT"),
            (0, "SELECT count(*) FROM t"),
        ],
    );
    check(
        "deferred-keyword",
        &[
            (0, "BEGIN DEFERRED"),
            (1, "INSERT INTO t VALUES (2)"),
            (0, "SELECT count(*) FROM t"),
            (0, "COMMIT"),
        ],
    );
}

#[test]
fn a_first_write_after_other_commits_is_not_stale() {
    check(
        "write",
        &[
            (0, "BEGIN"),
            (1, "INSERT INTO t VALUES (2)"),
            (0, "INSERT INTO t VALUES (10)"),
            (0, "SELECT count(*) FROM t"),
            (0, "COMMIT"),
            (1, "SELECT count(*) FROM t"),
        ],
    );
    // After a read the snapshot is fixed: a write then is stale (SQLITE_BUSY_SNAPSHOT).
    check(
        "stale",
        &[
            (0, "BEGIN"),
            (0, "SELECT count(*) FROM t"),
            (1, "INSERT INTO t VALUES (2)"),
            (0, "INSERT INTO t VALUES (10)"),
            (0, "ROLLBACK"),
        ],
    );
    // A savepoint opened in a deferred transaction before its first read.
    check(
        "savepoint",
        &[
            (0, "BEGIN"),
            (1, "INSERT INTO t VALUES (2)"),
            (0, "SAVEPOINT s"),
            (0, "INSERT INTO t VALUES (10)"),
            (0, "RELEASE s"),
            (0, "COMMIT"),
            (1, "SELECT count(*) FROM t"),
        ],
    );
}
