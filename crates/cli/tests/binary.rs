//! The `parlite` binary end to end: scripts on stdin, SQL as an argument, exit status, and
//! the file it leaves behind read by stock SQLite (rusqlite, bundled).

use std::io::Write;
use std::process::{Command, Stdio};

fn parlite() -> Command {
    Command::new(env!("CARGO_BIN_EXE_parlite"))
}

fn run_script(db: &str, script: &str) -> std::process::Output {
    let mut child = parlite()
        .arg(db)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn a_script_leaves_a_file_stock_sqlite_reads_after_exit() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("shell.db").display().to_string();
    let out = run_script(
        &db,
        "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT);\n\
         INSERT INTO t(b) VALUES('one'),\n('two');\n\
         CREATE INDEX tb ON t(b);\n\
         SELECT a, b FROM t ORDER BY a;\n",
    );
    assert!(out.status.success(), "{:?}", out);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "1|one\n2|two\n");
    assert!(
        !std::path::Path::new(&format!("{db}-plog")).exists(),
        "the shell closes the database on exit, which checkpoints and removes the log"
    );
    let conn = rusqlite::Connection::open(&db).unwrap();
    let ok: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
    let rows: Vec<(i64, String)> = conn
        .prepare("SELECT a, b FROM t ORDER BY a")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(rows, vec![(1, "one".to_string()), (2, "two".to_string())]);
}

#[test]
fn sql_argument_prints_list_mode_and_errors_exit_nonzero() {
    let out = parlite()
        .args([":memory:", "SELECT 1, NULL, 'x', 2.5"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "1||x|2.5\n");
    let out = parlite().args([":memory:", "SELEC 1"]).output().unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("near \"SELEC\": syntax error"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn attach_and_dot_databases() {
    let dir = tempfile::tempdir().unwrap();
    let dir_path = dir.path().canonicalize().unwrap();
    let db = dir_path.join("main.db").display().to_string();
    let aux = dir_path.join("aux.db").display().to_string();
    let out = run_script(
        &db,
        &format!(
            "ATTACH '{aux}' AS aux;\n\
             ATTACH ':memory:' AS mem;\n\
             CREATE TABLE aux.t(a);\n\
             INSERT INTO aux.t VALUES(1),(2);\n\
             .databases\n\
             SELECT sum(a) FROM aux.t;\n\
             DETACH mem;\n\
             DETACH mem;\n"
        ),
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("main: {db} r/w\naux: {aux} r/w\nmem: \"\" r/w\n3\n")
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "Runtime error near line 8: no such database: mem\n"
    );
    let conn = rusqlite::Connection::open(&aux).unwrap();
    let ok: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
    let n: i64 = conn
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 2);
}

#[test]
fn explain_lists_parlite_steps_and_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("explain.db").display().to_string();
    let out = run_script(
        &db,
        "CREATE TABLE t(a INTEGER PRIMARY KEY, b);\n\
         INSERT INTO t VALUES(1, 'x');\n\
         EXPLAIN DELETE FROM t WHERE a = 1;\n\
         .explain off\n\
         EXPLAIN SELECT b FROM t;\n\
         SELECT count(*) FROM t;\n",
    );
    assert!(out.status.success(), "{:?}", out);
    let text = String::from_utf8_lossy(&out.stdout);
    // The first listing in sqlite3's EXPLAIN layout, the second in list mode.
    assert!(text.starts_with("addr  opcode         p1    p2"), "{text}");
    assert!(text.contains("  SeekRowid  "), "{text}");
    assert!(text.contains("|OpenRead|"), "{text}");
    assert!(text.contains("|ResultRow|"), "{text}");
    assert!(text.ends_with("\n1\n"), "{text}");
}
