//! The online backup (`parlite::Backup`, SQLite's backup.html) between files and memory:
//! the destination becomes the source's snapshot of the first step, stock SQLite reads it
//! and finds it intact; writers of the source are not blocked by a copy in progress; the
//! errors and result codes are SQLite's (rusqlite's backup, bundled SQLite, the oracle);
//! a process killed mid-copy leaves the destination as it was or complete.

mod common;

use common::{run_parlite, sqlite_rows, stock_integrity_problem, Out, TempDir};
use parlite::{Backup, BackupStep, Connection, Value};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn open(path: &Path) -> Connection {
    Connection::open(path.to_str().expect("utf8")).expect("open")
}

fn rows(c: &Connection, sql: &str) -> Vec<Vec<Value>> {
    match run_parlite(c, sql) {
        Out::Rows { rows, .. } => rows,
        Out::Err(e) => panic!("{sql}: {e}"),
    }
}

fn stock_rows(path: &Path, sql: &str) -> Vec<Vec<Value>> {
    match sqlite_rows(path, sql) {
        Out::Rows { rows, .. } => rows,
        Out::Err(e) => panic!("stock SQLite, {sql}: {e}"),
    }
}

/// A source with a rowid table, an index, a WITHOUT ROWID table and overflow pages.
fn fill(c: &Connection, rows_n: i64) {
    c.execute_batch(
        "PRAGMA user_version = 9;
         CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c BLOB);
         CREATE INDEX tb ON t(b);
         CREATE TABLE w(k TEXT PRIMARY KEY, v) WITHOUT ROWID;",
    )
    .expect("schema");
    c.execute_batch("BEGIN").expect("begin");
    for i in 0..rows_n {
        c.execute_batch(&format!(
            "INSERT INTO t VALUES({i}, 'row{i}', zeroblob({}));
             INSERT INTO w VALUES('k{i}', {i});",
            if i % 10 == 0 { 5000 } else { 100 }
        ))
        .expect("insert");
    }
    c.execute_batch("COMMIT").expect("commit");
}

const CHECK: &str = "SELECT count(*), sum(a), sum(length(b)), sum(length(c)), \
                     (SELECT count(*) FROM w), (SELECT group_concat(name) FROM sqlite_schema) FROM t";

#[test]
fn file_to_file_copy_is_the_source_and_stock_sqlite_reads_it() {
    let dir = TempDir::new("backup-ff");
    let (src_path, dst_path) = (dir.join("src.db"), dir.join("dst.db"));
    let src = open(&src_path);
    fill(&src, 400);
    let dst = open(&dst_path);
    // The destination had other content, more pages than the source: it is replaced.
    dst.execute_batch("CREATE TABLE old(x); INSERT INTO old VALUES(zeroblob(3000000));")
        .expect("old content");
    let before = rows(&dst, "PRAGMA schema_version")[0][0].clone();
    let mut b = Backup::new(&dst, "main", &src, "main").expect("init");
    assert_eq!(b.step(-1).expect("step"), BackupStep::Done);
    assert_eq!(b.remaining(), 0);
    let pages = rows(&src, "PRAGMA page_count")[0][0].clone();
    assert_eq!(Value::Integer(i64::from(b.page_count())), pages);
    b.finish().expect("finish");
    // The destination connection sees the new schema at once (its cached one was dropped),
    // and the cookie is its old value + 1, as SQLite's.
    assert_eq!(rows(&dst, CHECK), rows(&src, CHECK));
    assert_eq!(rows(&dst, "PRAGMA page_count")[0][0], pages);
    let Value::Integer(before) = before else {
        panic!("schema_version")
    };
    assert_eq!(
        rows(&dst, "PRAGMA schema_version"),
        vec![vec![Value::Integer(before + 1)]]
    );
    assert!(run_parlite(&dst, "SELECT * FROM old").eq(&Out::Err("no such table: old".into())));
    assert_eq!(
        rows(&dst, "PRAGMA integrity_check"),
        vec![vec![Value::Text("ok".into())]]
    );
    let expected = rows(&src, CHECK);
    drop(dst);
    assert_eq!(stock_integrity_problem(&dst_path), None);
    assert_eq!(stock_rows(&dst_path, CHECK), expected);
    assert_eq!(
        stock_rows(&dst_path, "PRAGMA user_version"),
        vec![vec![Value::Integer(9)]]
    );
}

#[test]
fn file_to_memory_and_memory_to_file() {
    let dir = TempDir::new("backup-mem");
    let src = open(&dir.join("src.db"));
    fill(&src, 200);
    let mem = Connection::open(":memory:").expect("memory");
    let b = {
        let mut b = Backup::new(&mem, "main", &src, "main").expect("init");
        assert_eq!(b.step(7).expect("step"), BackupStep::More);
        assert_eq!(b.remaining() + 7, b.page_count());
        while b.step(7).expect("step") == BackupStep::More {}
        b
    };
    b.finish().expect("finish");
    assert_eq!(rows(&mem, CHECK), rows(&src, CHECK));
    mem.execute_batch("INSERT INTO t VALUES(100000, 'mem', x'00')")
        .expect("memory copy is writable");

    let out_path = dir.join("out.db");
    let out = open(&out_path);
    let mut b = Backup::new(&out, "main", &mem, "main").expect("init");
    assert_eq!(b.step(-1).expect("step"), BackupStep::Done);
    b.finish().expect("finish");
    let expected = rows(&mem, CHECK);
    assert_eq!(rows(&out, CHECK), expected);
    drop(out);
    assert_eq!(stock_integrity_problem(&out_path), None);
    assert_eq!(stock_rows(&out_path, CHECK), expected);
}

#[test]
fn steps_copy_the_snapshot_of_the_first_step_while_the_source_is_written() {
    let dir = TempDir::new("backup-snap");
    let (src_path, dst_path) = (dir.join("src.db"), dir.join("dst.db"));
    let src = open(&src_path);
    fill(&src, 300);
    let expected = rows(&src, CHECK);
    let writer = open(&src_path);
    writer
        .execute_batch("PRAGMA busy_timeout = 0")
        .expect("no wait");
    let dst = open(&dst_path);
    let mut b = Backup::new(&dst, "main", &src, "main").expect("init");
    let mut steps = 0;
    loop {
        let r = b.step(5).expect("step");
        steps += 1;
        // Writers of the source never wait for the copy (busy_timeout 0 would fail them):
        // they change every row, add rows, change the schema and grow the file between
        // the steps, so pages copied later would differ from those copied before.
        writer
            .execute_batch(&format!(
                "INSERT INTO t VALUES({}, 'late', zeroblob(9000));
                 UPDATE t SET b = b || 'x';
                 BEGIN IMMEDIATE; DELETE FROM w WHERE v = {steps}; COMMIT;",
                100_000 + steps
            ))
            .expect("source writer not blocked");
        if steps == 3 {
            writer.execute_batch("CREATE TABLE late(x)").expect("ddl");
        }
        if r == BackupStep::Done {
            break;
        }
    }
    assert!(steps > 3, "the copy took {steps} steps");
    b.finish().expect("finish");
    assert_eq!(rows(&dst, CHECK), expected);
    assert_eq!(
        rows(&dst, "PRAGMA integrity_check"),
        vec![vec![Value::Text("ok".into())]]
    );
    assert_ne!(rows(&src, CHECK), expected, "the source moved on meanwhile");
    drop(dst);
    assert_eq!(stock_integrity_problem(&dst_path), None);
    assert_eq!(stock_rows(&dst_path, CHECK), expected);
}

#[test]
fn a_copy_in_progress_holds_the_destination_until_done_or_finish() {
    let dir = TempDir::new("backup-lock");
    let src = open(&dir.join("src.db"));
    fill(&src, 100);
    let dst_path = dir.join("dst.db");
    let dst = open(&dst_path);
    dst.execute_batch("CREATE TABLE keep(x); INSERT INTO keep VALUES(1)")
        .expect("dst");
    let other = open(&dst_path);
    other
        .execute_batch("PRAGMA busy_timeout = 0")
        .expect("no wait");
    let mut b = Backup::new(&dst, "main", &src, "main").expect("init");
    assert_eq!(b.step(2).expect("step"), BackupStep::More);
    // The destination's writer lock is held: another writer is busy, readers see the old
    // content (nothing is visible before the commit).
    let e = other
        .execute_batch("INSERT INTO keep VALUES(2)")
        .expect_err("busy");
    assert_eq!(e.code, 5, "{e:?}");
    assert_eq!(
        rows(&other, "SELECT x FROM keep"),
        vec![vec![Value::Integer(1)]]
    );
    // finish before the end rolls the destination back.
    b.finish().expect("finish of a copy that had no error");
    other
        .execute_batch("INSERT INTO keep VALUES(2)")
        .expect("lock released");
    assert_eq!(
        rows(&dst, "SELECT count(*) FROM keep"),
        vec![vec![Value::Integer(2)]]
    );
}

#[test]
fn a_busy_destination_is_retried() {
    let dir = TempDir::new("backup-busy");
    let src = open(&dir.join("src.db"));
    fill(&src, 50);
    let dst_path = dir.join("dst.db");
    let dst = open(&dst_path);
    let holder = open(&dst_path);
    holder
        .execute_batch("BEGIN IMMEDIATE; CREATE TABLE h(x)")
        .expect("hold the writer lock");
    let mut b = Backup::new(&dst, "main", &src, "main").expect("init");
    let e = b.step(-1).expect_err("busy");
    assert_eq!(e.code, 5, "{e:?}");
    holder.execute_batch("COMMIT").expect("commit");
    assert_eq!(b.step(-1).expect("retried"), BackupStep::Done);
    b.finish().expect("finish");
    assert_eq!(rows(&dst, CHECK), rows(&src, CHECK));

    // Finishing right after SQLITE_BUSY reports it, as sqlite3_backup_finish does.
    holder.execute_batch("BEGIN IMMEDIATE").expect("hold again");
    let mut b = Backup::new(&dst, "main", &src, "main").expect("init");
    assert_eq!(b.step(-1).expect_err("busy").code, 5);
    assert_eq!(b.finish().expect_err("busy").code, 5);
    holder.execute_batch("ROLLBACK").expect("rollback");
}

/// SQLite's answer (code, message) to the same misuse, through rusqlite's backup.
fn sqlite_init_error(
    dst: &mut rusqlite::Connection,
    dst_name: &str,
    src: &rusqlite::Connection,
    src_name: &str,
) -> (i32, String) {
    match rusqlite::backup::Backup::new_with_names(src, src_name, dst, dst_name) {
        Ok(_) => panic!("SQLite accepted the backup"),
        Err(rusqlite::Error::SqliteFailure(f, m)) => {
            (f.extended_code & 0xff, m.unwrap_or_default())
        }
        Err(e) => panic!("{e}"),
    }
}

fn parlite_init_error(
    dst: &Connection,
    dst_name: &str,
    src: &Connection,
    src_name: &str,
) -> (i32, String) {
    match Backup::new(dst, dst_name, src, src_name) {
        Ok(_) => panic!("parlite accepted the backup"),
        Err(e) => (e.code, e.message),
    }
}

#[test]
fn init_errors_are_sqlites() {
    let (p_src, p_dst) = (
        Connection::open(":memory:").expect("p"),
        Connection::open(":memory:").expect("p"),
    );
    let (s_src, mut s_dst) = (
        rusqlite::Connection::open_in_memory().expect("s"),
        rusqlite::Connection::open_in_memory().expect("s"),
    );
    for (dst_name, src_name) in [("main", "nosuch"), ("aux", "main")] {
        assert_eq!(
            parlite_init_error(&p_dst, dst_name, &p_src, src_name),
            sqlite_init_error(&mut s_dst, dst_name, &s_src, src_name)
        );
    }
    // A destination with an open transaction (one that has read) is "in use".
    let in_txn = "BEGIN; SELECT count(*) FROM sqlite_schema;";
    p_dst.execute_batch(in_txn).expect("p txn");
    s_dst.execute_batch(in_txn).expect("s txn");
    let p = parlite_init_error(&p_dst, "main", &p_src, "main");
    assert_eq!(p, sqlite_init_error(&mut s_dst, "main", &s_src, "main"));
    assert_eq!(p, (1, "destination database is in use".to_string()));
    p_dst.execute_batch("COMMIT").expect("commit");
    // The same connection twice (rusqlite's safe API cannot express it; SQLite's text).
    assert_eq!(
        parlite_init_error(&p_dst, "main", &p_dst, "main"),
        (1, "source and destination must be distinct".to_string())
    );
}

#[test]
fn a_read_only_destination_is_sqlite_readonly() {
    let dir = TempDir::new("backup-ro");
    let src = open(&dir.join("src.db"));
    fill(&src, 10);
    let dst_path = dir.join("dst.db");
    open(&dst_path)
        .execute_batch("CREATE TABLE x(y)")
        .expect("dst");
    let ro = parlite::Database::open_with(dst_path.to_str().expect("utf8"), false, true)
        .expect("ro")
        .connect()
        .expect("connect");
    let mut b = Backup::new(&ro, "main", &src, "main").expect("init");
    let e = b.step(-1).expect_err("read-only");
    // A fatal error sticks: the next step and finish give it again.
    assert_eq!(b.step(-1).expect_err("sticky"), e);
    assert_eq!(b.finish().expect_err("finish"), e);
    drop((ro, src)); // the files as stock SQLite reads them: closed, the log folded in

    let s_src = rusqlite::Connection::open(dir.join("src.db")).expect("s");
    let mut s_dst = rusqlite::Connection::open_with_flags(
        &dst_path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .expect("s ro");
    let sb = rusqlite::backup::Backup::new(&s_src, &mut s_dst).expect("s init");
    let se = sb.step(-1).expect_err("s read-only");
    let rusqlite::Error::SqliteFailure(f, _) = se else {
        panic!("{se}")
    };
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            f.extended_code & 0xff,
            "attempt to write a readonly database"
        )
    );
}

#[test]
fn page_sizes_follow_the_source_on_a_blank_destination_else_readonly() {
    let dir = TempDir::new("backup-pgsz");
    let src = open(&dir.join("src.db"));
    src.execute_batch("PRAGMA page_size = 1024")
        .expect("page size");
    fill(&src, 50);
    // A fresh destination takes the source's page size, as in SQLite.
    let fresh_path = dir.join("fresh.db");
    let fresh = open(&fresh_path);
    let mut b = Backup::new(&fresh, "main", &src, "main").expect("init");
    assert_eq!(b.step(-1).expect("step"), BackupStep::Done);
    b.finish().expect("finish");
    assert_eq!(
        rows(&fresh, "PRAGMA page_size"),
        vec![vec![Value::Integer(1024)]]
    );
    assert_eq!(rows(&fresh, CHECK), rows(&src, CHECK));
    drop(fresh);
    assert_eq!(stock_integrity_problem(&fresh_path), None);
    // One that has content keeps its size: SQLITE_READONLY, as SQLite answers for a WAL
    // destination (parlite's log is one).
    let used_path = dir.join("used.db");
    let used = open(&used_path);
    used.execute_batch("CREATE TABLE u(x)").expect("content");
    let mut b = Backup::new(&used, "main", &src, "main").expect("init");
    let e = b.step(-1).expect_err("page size");
    assert_eq!(e.code, 8, "{e:?}");
    drop(b);
    assert_eq!(
        rows(&used, "SELECT name FROM sqlite_schema"),
        vec![vec![Value::Text("u".into())]]
    );
    drop(src);

    let s_src = rusqlite::Connection::open(dir.join("src.db")).expect("s");
    let mut s_dst = rusqlite::Connection::open(dir.join("s_used.db")).expect("s");
    s_dst
        .execute_batch("PRAGMA journal_mode = wal; CREATE TABLE u(x)")
        .expect("s wal");
    let sb = rusqlite::backup::Backup::new(&s_src, &mut s_dst).expect("s init");
    match sb.step(-1) {
        Err(rusqlite::Error::SqliteFailure(f, _)) => assert_eq!(f.extended_code & 0xff, e.code),
        other => panic!("SQLite: {other:?}"),
    }
}

#[test]
fn attached_and_temp_databases_by_name() {
    let dir = TempDir::new("backup-names");
    let src = Connection::open(":memory:").expect("src");
    let aux_path = dir.join("aux.db");
    src.execute_batch(&format!(
        "ATTACH '{}' AS aux;
         CREATE TABLE aux.a(x); INSERT INTO aux.a VALUES(1),(2),(3);
         CREATE TEMP TABLE tt(y); INSERT INTO tt VALUES('temp');",
        aux_path.display()
    ))
    .expect("src");
    // From an attached database into main of another connection.
    let dst = Connection::open(":memory:").expect("dst");
    let mut b = Backup::new(&dst, "main", &src, "AUX").expect("init");
    assert_eq!(b.step(-1).expect("step"), BackupStep::Done);
    b.finish().expect("finish");
    assert_eq!(
        rows(&dst, "SELECT sum(x) FROM a"),
        vec![vec![Value::Integer(6)]]
    );
    // From temp into an attached database of another connection.
    let out_path = dir.join("out.db");
    dst.execute_batch(&format!("ATTACH '{}' AS o", out_path.display()))
        .expect("attach");
    let mut b = Backup::new(&dst, "o", &src, "temp").expect("init");
    assert_eq!(b.step(-1).expect("step"), BackupStep::Done);
    b.finish().expect("finish");
    assert_eq!(
        rows(&dst, "SELECT y FROM o.tt"),
        vec![vec![Value::Text("temp".into())]]
    );
    // Into temp: the connection's TEMP tables become the source's.
    let mut b = Backup::new(&dst, "temp", &src, "aux").expect("init");
    assert_eq!(b.step(-1).expect("step"), BackupStep::Done);
    b.finish().expect("finish");
    assert_eq!(
        rows(&dst, "SELECT count(*) FROM temp.a"),
        vec![vec![Value::Integer(3)]]
    );
    dst.execute_batch("DETACH o").expect("detach");
    assert_eq!(
        stock_rows(&out_path, "SELECT y FROM tt"),
        vec![vec![Value::Text("temp".into())]]
    );
}

const CHILD_ENV: &str = "PARLITE_BACKUP_KILL_CHILD";

/// The child of `a_process_killed_mid_copy_leaves_the_destination_whole`: copies the
/// source over the destination a few pages a step, printing each step, until killed.
#[test]
fn backup_kill_child() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let dir = Path::new(&dir);
    let src = open(&dir.join("src.db"));
    let dst = open(&dir.join("dst.db"));
    let mut b = Backup::new(&dst, "main", &src, "main").expect("init");
    loop {
        let r = b.step(3).expect("step");
        println!("step {}", b.remaining());
        if r == BackupStep::Done {
            println!("done");
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    b.finish().expect("finish");
    println!("finished");
    // Stay alive until killed: a clean close would checkpoint.
    std::thread::sleep(Duration::from_secs(60));
}

#[test]
fn a_process_killed_mid_copy_leaves_the_destination_whole() {
    let dir = TempDir::new("backup-kill");
    let src = open(&dir.join("src.db"));
    fill(&src, 600);
    let new_state = rows(&src, CHECK);
    drop(src);
    let dst_path = dir.join("dst.db");
    let dst = open(&dst_path);
    dst.execute_batch("CREATE TABLE old(x); INSERT INTO old VALUES('before')")
        .expect("dst");
    let old_state = rows(&dst, "SELECT x FROM old");
    drop(dst);
    let exe = std::env::current_exe().expect("exe");
    // Kill after a number of steps: early, mid-copy, and after the commit was acknowledged.
    for kill_after in [1usize, 20, usize::MAX] {
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "backup_kill_child",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, dir.as_os_str())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("spawn");
        let out = child.stdout.take().expect("stdout");
        let mut lines = std::io::BufRead::lines(std::io::BufReader::new(out));
        let mut seen = 0;
        let mut done = false;
        let deadline = Instant::now() + Duration::from_secs(60);
        while let Some(Ok(line)) = lines.next() {
            if line.starts_with("step") {
                seen += 1;
            }
            done |= line == "finished";
            if seen >= kill_after || done || Instant::now() > deadline {
                break;
            }
        }
        child.kill().expect("kill");
        child.wait().expect("wait");
        let c = open(&dst_path);
        assert_eq!(
            rows(&c, "PRAGMA integrity_check"),
            vec![vec![Value::Text("ok".into())]]
        );
        let tables = rows(&c, "SELECT group_concat(name) FROM sqlite_schema");
        if done {
            assert_eq!(
                rows(&c, CHECK),
                new_state,
                "an acknowledged copy is all there"
            );
        } else if tables == vec![vec![Value::Text("old".into())]] {
            assert_eq!(rows(&c, "SELECT x FROM old"), old_state);
        } else {
            assert_eq!(rows(&c, CHECK), new_state, "killed after {seen} steps");
        }
        if kill_after == usize::MAX {
            assert!(done, "the child never finished");
        } else {
            assert!(!done, "killed after {seen} steps, after the copy");
            // Restore the old content for the next round.
            assert_eq!(tables, vec![vec![Value::Text("old".into())]]);
        }
    }
}

/// The copy's pages may be the source's images, shared (storage pages.rs `put_page`):
/// writes to either database afterwards must not show in the other (P2).
#[test]
fn source_and_copy_are_written_apart_afterwards() {
    let dir = TempDir::new("backup-apart");
    let src = open(&dir.join("src.db"));
    fill(&src, 200);
    let before = rows(&src, CHECK);
    let dst = open(&dir.join("dst.db"));
    let mut b = Backup::new(&dst, "main", &src, "main").expect("init");
    assert_eq!(b.step(-1).expect("step"), BackupStep::Done);
    b.finish().expect("finish");
    src.execute_batch("UPDATE t SET b = 'src'; DELETE FROM w WHERE v % 2 = 0")
        .expect("source write");
    assert_eq!(
        rows(&dst, CHECK),
        before,
        "the source's writes reached the copy"
    );
    dst.execute_batch("UPDATE t SET c = x'01'; INSERT INTO w VALUES('dst', 0)")
        .expect("copy write");
    assert_eq!(
        rows(
            &src,
            "SELECT count(*), min(b), max(b), sum(length(c)) FROM t"
        ),
        vec![vec![
            Value::Integer(200),
            Value::Text("src".into()),
            Value::Text("src".into()),
            before[0][3].clone(),
        ]]
    );
    assert_eq!(
        rows(
            &dst,
            "SELECT count(*), sum(length(c)), (SELECT count(*) FROM w) FROM t"
        ),
        vec![vec![
            Value::Integer(200),
            Value::Integer(200),
            Value::Integer(201)
        ]]
    );
    for c in [&src, &dst] {
        assert_eq!(
            rows(c, "PRAGMA integrity_check"),
            vec![vec![Value::Text("ok".into())]]
        );
    }
}
