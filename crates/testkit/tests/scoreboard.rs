//! The project's SQL scoreboard, run by the README's test command: the whole sqllogictest
//! corpus through `parlite-slt` on parlite and on SQLite (the runner's own check), and the
//! speedtest1 scripts whose expected output parlite reproduces (fp: equal to the bundled SQLite).
//!
//! A missing corpus fails with a message ($PARLITE_CORPUS, default ../shared/corpus).

use parlite_testkit::parlite_engine::ParliteEngine;
use parlite_testkit::speedtest;
use std::path::PathBuf;
use std::process::Command;

fn corpus_root() -> PathBuf {
    let root = match std::env::var_os("PARLITE_CORPUS") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"),
    };
    assert!(
        root.join("sqllogictest").is_dir(),
        "the shared corpus is missing: expected {}/sqllogictest; set PARLITE_CORPUS",
        root.display()
    );
    root
}

/// Runs `parlite-slt` over the whole corpus; returns (passed, failed, skipped) of its last line.
fn run_corpus(engine: &str) -> (u64, u64, u64) {
    let corpus = corpus_root().join("sqllogictest");
    let out = Command::new(env!("CARGO_BIN_EXE_parlite-slt"))
        .args(["--engine", engine, "--per-folder"])
        .arg(&corpus)
        .output()
        .expect("run parlite-slt");
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    let last = stdout.lines().last().unwrap_or_default();
    let nums: Vec<u64> = last
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect();
    assert_eq!(
        nums.len(),
        3,
        "unexpected summary line {last:?}; stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (nums[0], nums[1], nums[2])
}

/// The corpus has 324,993 records an engine named `sqlite` runs and 27,328 it skips.
const CORPUS_RECORDS: u64 = 324_993;

#[test]
fn parlite_passes_the_sqllogictest_corpus() {
    let (passed, failed, skipped) = run_corpus("parlite");
    assert_eq!(failed, 0, "parlite failed {failed} sqllogictest records");
    assert_eq!(passed, CORPUS_RECORDS);
    assert_eq!(skipped, 27_328);
}

#[test]
fn sqlite_passes_the_sqllogictest_corpus_so_the_runner_is_right() {
    let (passed, failed, _) = run_corpus("sqlite");
    assert_eq!((passed, failed), (CORPUS_RECORDS, 0));
}

/// Replays `speedtest1-<name>.sql.xz` on a fresh parlite file and compares its output with
/// the expected output SQLite produced.
fn check_speedtest(name: &str) {
    let dir = corpus_root().join("speedtest1");
    let script = speedtest::read_maybe_xz(&dir.join(format!("speedtest1-{name}.sql.xz"))).unwrap();
    let expected =
        speedtest::read_maybe_xz(&dir.join(format!("speedtest1-{name}.expected.xz"))).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("speedtest.db");
    let mut engine = ParliteEngine::open(db.to_str().unwrap()).unwrap();
    let check = speedtest::check(&mut engine, &String::from_utf8(script).unwrap(), &expected);
    assert!(
        check.passed(),
        "{name}: {} {:?}",
        check.diff_excerpt,
        check.replay.errors
    );
    assert!(check.expected_lines > 0);
}

#[test]
fn parlite_reproduces_speedtest1_orm_and_cte_output() {
    for name in ["orm-size4", "cte-size5"] {
        check_speedtest(name);
    }
}

/// The main script (size 100: ~660,000 statements, WITHOUT ROWID tables in tests 500/510);
/// about 30 s of CPU in release mode.
#[test]
fn parlite_reproduces_speedtest1_main_output() {
    check_speedtest("main-size100");
}

/// speedtest1 fp: the expected file came from stock sqlite3 3.40.1, whose `sum()` adds reals
/// plainly; SQLite 3.43 moved `sum()` to Kahan–Babuska–Neumaier summation, and the bundled
/// SQLite (3.50.2, the differential tests' oracle) prints 3 of the 19 lines differently in
/// their last digits. parlite follows the oracle: its output equals the bundled SQLite's
/// byte for byte, and differs from the 3.40.1 file in exactly those 3 `sum()` lines.
#[test]
fn parlite_matches_bundled_sqlite_on_speedtest1_fp() {
    use parlite_testkit::sqlite::SqliteEngine;
    let dir = corpus_root().join("speedtest1");
    let script = speedtest::read_maybe_xz(&dir.join("speedtest1-fp-size33.sql.xz")).unwrap();
    let script = String::from_utf8(script).unwrap();
    let expected = speedtest::read_maybe_xz(&dir.join("speedtest1-fp-size33.expected.xz")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let mut ours = ParliteEngine::open(tmp.path().join("p.db").to_str().unwrap()).unwrap();
    let mut oracle = SqliteEngine::open(tmp.path().join("s.db").to_str().unwrap()).unwrap();
    let got = speedtest::check(&mut ours, &script, &expected);
    let want = speedtest::check(&mut oracle, &script, &expected);
    assert!(got.replay.errors.is_empty(), "{:?}", got.replay.errors);
    assert!(want.replay.errors.is_empty(), "{:?}", want.replay.errors);
    assert_eq!(
        String::from_utf8_lossy(&got.replay.stdout),
        String::from_utf8_lossy(&want.replay.stdout),
        "parlite and the bundled SQLite print different fp output"
    );
    assert_eq!(got.expected_lines, 19);
    // 3 lines removed and 3 added against the 3.40.1 file.
    assert_eq!(got.changed_lines, 6, "{}", got.diff_excerpt);
}
