//! The runner against real corpus files with the SQLite engine: stock SQLite passes every
//! record, so any failure here is a runner bug.
//!
//! The corpus is read from $PARLITE_CORPUS, else from ../shared/corpus beside the workspace.
//! A missing corpus fails the test with a message: a silent skip would hide a broken setup.

use parlite_testkit::engine::{Engine, EngineError};
use parlite_testkit::slt::{run_file, Tally};
use parlite_testkit::speedtest;
use parlite_testkit::sqlite::SqliteEngine;
use std::path::PathBuf;

fn corpus_root() -> PathBuf {
    let root = match std::env::var_os("PARLITE_CORPUS") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"),
    };
    assert!(
        root.join("sqllogictest").is_dir(),
        "the shared corpus is missing: expected {}/sqllogictest; set PARLITE_CORPUS to the \
         folder that holds sqllogictest/ and speedtest1/",
        root.display()
    );
    root
}

fn new_sqlite() -> Result<Box<dyn Engine>, EngineError> {
    Ok(Box::new(SqliteEngine::memory()?))
}

#[test]
fn sqlite_passes_select1_and_in1() {
    let root = corpus_root().join("sqllogictest");
    let mut total = Tally::default();
    for file in [
        "select1.test",
        "evidence/in1.test",
        "evidence/slt_lang_aggfunc.test",
    ] {
        let outcome = run_file(&root.join(file), &new_sqlite).unwrap();
        assert_eq!(
            outcome.tally.failed,
            0,
            "{file}: {:#?}",
            &outcome.failures[..outcome.failures.len().min(3)]
        );
        total.add(outcome.tally);
    }
    // select1 has 1,031 records and in1 216 (2 of them `onlyif mysql`): a parse that lost
    // records would pass vacuously.
    assert!(total.passed >= 1031 + 214, "{total}");
    assert!(total.skipped >= 2, "{total}");
}

#[test]
fn sqlite_passes_speedtest1_cte_and_app() {
    let dir = corpus_root().join("speedtest1");
    for name in ["cte-size5", "app-size100"] {
        let script =
            speedtest::read_maybe_xz(&dir.join(format!("speedtest1-{name}.sql.xz"))).unwrap();
        let expected =
            speedtest::read_maybe_xz(&dir.join(format!("speedtest1-{name}.expected.xz"))).unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let db = tmp.path().join("fresh.db");
        let mut engine = SqliteEngine::open(db.to_str().unwrap()).unwrap();
        let check = speedtest::check(&mut engine, &String::from_utf8(script).unwrap(), &expected);
        assert!(
            check.passed(),
            "{name}: {} {:?}",
            check.diff_excerpt,
            check.replay.errors
        );
        assert!(check.expected_lines > 0);
    }
}
