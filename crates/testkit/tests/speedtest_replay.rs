//! The speedtest1 replayer's shell behaviour on small inline scripts.

use parlite_testkit::speedtest::{check, replay};
use parlite_testkit::sqlite::SqliteEngine;

#[test]
fn prints_rows_in_list_mode() {
    let mut engine = SqliteEngine::memory().unwrap();
    let out = replay(
        &mut engine,
        "-- comment\nCREATE TABLE t(a, b);\nINSERT INTO t VALUES (1, 'x'), (2.5, NULL),\n  (1e20, '');\nSELECT a, b FROM t; SELECT 1.0;\n",
    );
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "1|x\n2.5|\n1.0e+20|\n1.0\n"
    );
}

#[test]
fn trigger_bodies_span_semicolons() {
    let mut engine = SqliteEngine::memory().unwrap();
    let out = replay(
        &mut engine,
        "CREATE TABLE t(a); CREATE TABLE log(a);\nCREATE TRIGGER tr AFTER INSERT ON t BEGIN\n  INSERT INTO log VALUES (new.a);\nEND;\nINSERT INTO t VALUES (7);\nSELECT * FROM log;\n",
    );
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert_eq!(out.stdout, b"7\n");
}

#[test]
fn errors_are_reported_like_the_shell_and_replay_goes_on() {
    let mut engine = SqliteEngine::memory().unwrap();
    let out = replay(&mut engine, "SELECT 1;\nSELEC 2;\nSELECT 3;\n");
    assert_eq!(out.stdout, b"1\n3\n");
    assert_eq!(
        out.errors,
        vec!["Error: near line 2: near \"SELEC\": syntax error"]
    );
}

#[test]
fn check_reports_a_line_diff() {
    let mut engine = SqliteEngine::memory().unwrap();
    let c = check(&mut engine, "SELECT 1;\nSELECT 2;\n", b"1\n3\n");
    assert!(!c.passed());
    assert_eq!(c.changed_lines, 2);
    assert!(c.diff_excerpt.contains("-3\n+2\n"), "{}", c.diff_excerpt);
    // One missing line is one change, not a shift of everything after it.
    let mut engine = SqliteEngine::memory().unwrap();
    let c = check(&mut engine, "SELECT 2;\nSELECT 3;\n", b"1\n2\n3\n");
    assert_eq!(c.changed_lines, 1);
    let mut engine = SqliteEngine::memory().unwrap();
    assert!(check(&mut engine, "SELECT 1;\n", b"1\n").passed());
}
