//! The supervised runner (one child process per file): a record that hangs fails, the rest
//! of its file counts as failed, and the run goes on. Uses the real `parlite-slt` binary
//! with the SQLite engine and an endless recursive query.

use std::process::Command;

#[test]
fn a_hanging_record_fails_its_file_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let hang = dir.path().join("a_hang.test");
    std::fs::write(
        &hang,
        "statement ok
CREATE TABLE t(x)

query I
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c
----
1

query I
SELECT 1
----
1

skipif sqlite
query I
SELECT 1
----
1
",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("b_fine.test"),
        "query I\nSELECT 1\n----\n1\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_parlite-slt"))
        .args(["--engine", "sqlite", "--record-timeout", "1", "-v"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("a_hang.test:4: FAILED: a record ran past the 1 s limit\nWITH RECURSIVE"),
        "{stdout}"
    );
    assert!(
        stdout.contains("a_hang.test: 1 passed, 2 failed, 1 skipped"),
        "{stdout}"
    );
    assert!(
        stdout.contains("b_fine.test: 1 passed, 0 failed, 0 skipped"),
        "{stdout}"
    );
    assert!(
        stdout.ends_with("2 passed, 2 failed, 1 skipped\n"),
        "{stdout}"
    );
}
