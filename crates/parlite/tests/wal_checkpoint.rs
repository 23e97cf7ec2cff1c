//! `PRAGMA wal_checkpoint[(PASSIVE|FULL|RESTART|TRUNCATE)]` (docs/log-and-recovery.md 3c):
//! SQLite's result row shape `busy|log|checkpointed`, checked beside stock SQLite in WAL mode
//! where both engines must agree (column names, memory databases, busy, TRUNCATE), and
//! parlite's own counts where the two logs differ (SQLite counts page frames, parlite commit
//! frames).

use parlite::{Connection, Database, Value};
use std::path::PathBuf;
use std::time::{Duration, Instant};

struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let p =
            std::env::temp_dir().join(format!("parlite-ckpt-{tag}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    fn path(&self, name: &str) -> String {
        self.0.join(name).to_string_lossy().into_owned()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Column names and rows of one statement.
fn query(c: &Connection, sql: &str) -> (Vec<String>, Vec<Vec<i64>>) {
    let (mut st, _) = c.prepare(sql).unwrap().expect("a statement");
    let names = (0..st.column_count())
        .map(|i| st.column_name(i).to_string())
        .collect();
    let mut rows = Vec::new();
    while st.step().unwrap() {
        rows.push(
            (0..st.column_count())
                .map(|i| match st.column(i) {
                    Value::Integer(v) => v,
                    other => panic!("{sql}: {other:?}"),
                })
                .collect(),
        );
    }
    (names, rows)
}

fn sqlite_query(c: &rusqlite::Connection, sql: &str) -> (Vec<String>, Vec<Vec<i64>>) {
    let mut st = c.prepare(sql).unwrap();
    let names: Vec<String> = st.column_names().iter().map(|s| s.to_string()).collect();
    let n = names.len();
    let rows = st
        .query_map([], |r| (0..n).map(|i| r.get::<_, i64>(i)).collect())
        .unwrap()
        .collect::<rusqlite::Result<Vec<Vec<i64>>>>()
        .unwrap();
    (names, rows)
}

fn one_row(c: &Connection, sql: &str) -> [i64; 3] {
    let (_, rows) = query(c, sql);
    assert_eq!(rows.len(), 1, "{sql}");
    [rows[0][0], rows[0][1], rows[0][2]]
}

#[test]
fn memory_databases_answer_like_sqlite_outside_wal() {
    let db = Database::open(":memory:").unwrap();
    let c = db.connect().unwrap();
    let s = rusqlite::Connection::open_in_memory().unwrap();
    for mode in ["", "(PASSIVE)", "(FULL)", "(RESTART)", "(TRUNCATE)"] {
        let sql = format!("PRAGMA wal_checkpoint{mode}");
        assert_eq!(query(&c, &sql), sqlite_query(&s, &sql), "{sql}");
    }
    assert_eq!(one_row(&c, "PRAGMA wal_checkpoint"), [0, -1, -1]);
}

#[test]
fn modes_fold_the_log_with_sqlites_row_shape() {
    let dir = TempDir::new("modes");
    let ours = dir.path("p.db");
    let theirs = dir.path("s.db");
    let db = Database::open(&ours).unwrap();
    let c = db.connect().unwrap();
    let s = rusqlite::Connection::open(&theirs).unwrap();
    s.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
        .unwrap();
    // No automatic checkpoint on SQLite's side either, so both logs keep their frames.
    s.execute_batch("PRAGMA wal_autocheckpoint=0").unwrap();
    let setup = "CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT)";
    c.execute_batch(setup).unwrap();
    s.execute_batch(setup).unwrap();
    let write = |n: i64| {
        for i in 0..n {
            let sql = format!("INSERT INTO t(v) VALUES ('row {i}')");
            c.execute_batch(&sql).unwrap();
            s.execute_batch(&sql).unwrap();
        }
    };
    for mode in [
        "",
        "(PASSIVE)",
        "(FULL)",
        "(RESTART)",
        "=passive",
        "(bogus)",
    ] {
        write(5);
        let sql = format!("PRAGMA wal_checkpoint{mode}");
        let (names, rows) = query(&c, &sql);
        let (s_names, s_rows) = sqlite_query(&s, &sql);
        assert_eq!(names, s_names, "{sql}");
        assert_eq!(names, ["busy", "log", "checkpointed"]);
        assert_eq!(rows.len(), 1);
        // Both: not busy, every frame checkpointed. SQLite's frames are pages, parlite's
        // commits: at least the 5 commits since the last checkpoint.
        assert_eq!(rows[0][0], s_rows[0][0], "{sql}");
        assert_eq!(rows[0][1], rows[0][2], "{sql}: {rows:?}");
        assert_eq!(s_rows[0][1], s_rows[0][2], "{sql}: {s_rows:?}");
        assert!(rows[0][1] >= 5, "{sql}: {rows:?}");
        // Nothing new: nothing to do.
        assert_eq!(one_row(&c, &sql), [0, 0, 0], "{sql} again");
    }
    write(5);
    let sql = "PRAGMA wal_checkpoint(TRUNCATE)";
    assert_eq!(query(&c, sql), sqlite_query(&s, sql));
    assert_eq!(one_row(&c, sql), [0, 0, 0]);
    // Truncated to its header (docs/log-and-recovery.md 3c): both log files.
    let log_bytes = |p: &str| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    assert!(log_bytes(&format!("{ours}-plog")) <= 32);
    assert!(log_bytes(&format!("{ours}-plog2")) <= 32);
    // The rows are in the database file itself: stock SQLite reads them beside our process
    // (the log is empty, nothing of the state is only in it).
    let reader =
        rusqlite::Connection::open_with_flags(&ours, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let n: i64 = reader
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 35);
    assert_eq!(
        reader
            .query_row("PRAGMA integrity_check", [], |r| r.get::<_, String>(0))
            .unwrap(),
        "ok"
    );
}

#[test]
fn full_reports_busy_while_a_writer_holds_the_lock() {
    let dir = TempDir::new("busy");
    let db = Database::open(&dir.path("p.db")).unwrap();
    let c1 = db.connect().unwrap();
    let c2 = db.connect().unwrap();
    c1.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1), (2);")
        .unwrap();
    c1.execute_batch("BEGIN IMMEDIATE; INSERT INTO t VALUES (3);")
        .unwrap();
    c2.execute_batch("PRAGMA busy_timeout = 50").unwrap();
    for mode in ["FULL", "RESTART", "TRUNCATE"] {
        let started = Instant::now();
        let [busy, log, done] = one_row(&c2, &format!("PRAGMA wal_checkpoint({mode})"));
        assert_eq!(busy, 1, "{mode}");
        // The passive round it ran instead folded what was committed.
        assert_eq!(log, done, "{mode}");
        assert!(started.elapsed() >= Duration::from_millis(45), "{mode}");
    }
    // Inside its own write transaction a connection does not wait for itself.
    c1.execute_batch("PRAGMA busy_timeout = 5000").unwrap();
    let started = Instant::now();
    assert_eq!(one_row(&c1, "PRAGMA wal_checkpoint(FULL)")[0], 1);
    assert!(started.elapsed() < Duration::from_secs(2));
    // PASSIVE never waits for writers and is never busy.
    assert_eq!(one_row(&c2, "PRAGMA wal_checkpoint")[0], 0);
    c1.execute_batch("COMMIT").unwrap();
    let [busy, log, done] = one_row(&c2, "PRAGMA wal_checkpoint(FULL)");
    assert_eq!((busy, log, done), (0, 1, 1));
    let (_, rows) = query(&c2, "SELECT count(*) FROM t");
    assert_eq!(rows, vec![vec![3]]);
    // Beside SQLite: the same busy answer while another connection writes.
    let sdir = TempDir::new("sbusy");
    let p = sdir.path("s.db");
    let s1 = rusqlite::Connection::open(&p).unwrap();
    s1.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
        .unwrap();
    s1.execute_batch(
        "CREATE TABLE t(x); INSERT INTO t VALUES (1); BEGIN IMMEDIATE; INSERT INTO t VALUES (2);",
    )
    .unwrap();
    let s2 = rusqlite::Connection::open(&p).unwrap();
    s2.busy_timeout(Duration::from_millis(50)).unwrap();
    let (_, s_rows) = sqlite_query(&s2, "PRAGMA wal_checkpoint(FULL)");
    assert_eq!(s_rows[0][0], 1);
}

#[test]
fn schema_qualified_checkpoints() {
    let dir = TempDir::new("schema");
    let db = Database::open(&dir.path("p.db")).unwrap();
    let c = db.connect().unwrap();
    c.execute_batch(&format!(
        "ATTACH '{}' AS aux; CREATE TABLE aux.a(x); INSERT INTO aux.a VALUES (1);
         CREATE TABLE m(x); INSERT INTO m VALUES (1);",
        dir.path("aux.db")
    ))
    .unwrap();
    let [busy, log, done] = one_row(&c, "PRAGMA aux.wal_checkpoint(TRUNCATE)");
    assert_eq!((busy, log, done), (0, 0, 0));
    let [busy, log, done] = one_row(&c, "PRAGMA main.wal_checkpoint");
    assert_eq!(busy, 0);
    assert!(log >= 2 && log == done, "{log} {done}");
    assert_eq!(one_row(&c, "PRAGMA temp.wal_checkpoint"), [0, -1, -1]);
    let err = c
        .prepare("PRAGMA nosuch.wal_checkpoint")
        .and_then(|s| s.expect("stmt").0.step())
        .unwrap_err();
    assert!(err.to_string().contains("unknown database nosuch"), "{err}");
}
