//! The `parse` fuzz target of `crates/sql/fuzz/` on stable: the target body
//! (`parlite_sql::fuzzing::parse`) runs over the seed statements, a few thousand seeded
//! mutations of them and random byte strings. A panic fails the test with the case's seed
//! and input. Never skipped.
//!
//! Replay: `PARLITE_SEED=N cargo test -p parlite-sql --test fuzz_smoke`; more cases with
//! `PARLITE_LONG=1`. Crashes found by cargo-fuzz live on as named tests at the bottom.

use parlite_sql::fuzzing::{self, SEED_SQL};
use std::panic::{catch_unwind, AssertUnwindSafe};

fn base_seed() -> u64 {
    std::env::var("PARLITE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed)
}

fn cases() -> u64 {
    if std::env::var("PARLITE_LONG").is_ok() {
        200_000
    } else {
        6_000
    }
}

fn run(input: &[u8], what: &str) -> usize {
    match catch_unwind(AssertUnwindSafe(|| fuzzing::parse(input))) {
        Ok(n) => n,
        Err(_) => panic!(
            "parse target panicked on {what}: {:?}",
            String::from_utf8_lossy(input)
        ),
    }
}

#[test]
fn seeds_parse_and_round_trip() {
    for sql in SEED_SQL {
        let all = parlite_sql::parse::parse_all(sql);
        assert!(all.is_ok(), "seed does not parse: {sql}: {all:?}");
        assert!(
            run(sql.as_bytes(), "a seed") > 0,
            "seed parsed to nothing: {sql}"
        );
    }
}

#[test]
fn mutated_and_random_inputs() {
    let seed = base_seed();
    eprintln!("fuzz_smoke parse: PARLITE_SEED={seed}");
    let mut parsed = 0;
    for i in 0..cases() {
        let case_seed = seed.wrapping_add(i);
        let base = SEED_SQL[(case_seed % SEED_SQL.len() as u64) as usize].as_bytes();
        let mut input = fuzzing::mutate(base, case_seed);
        // Stack a few mutations on some cases, so damage compounds.
        for k in 0..(case_seed % 4) {
            input = fuzzing::mutate(&input, case_seed ^ (k + 1) << 32);
        }
        parsed += run(&input, &format!("case seed {case_seed}"));
    }
    // Mutations must leave many inputs parseable, or the round trip goes untested.
    eprintln!("{parsed} statements parsed and round-tripped");
    assert!(
        parsed > cases() as usize / 10,
        "only {parsed} statements parsed"
    );
}

// Crashes found by cargo-fuzz (crates/sql/fuzz), kept as regressions.

#[test]
fn fuzz_crash_reprint_deeper_than_depth_bound() {
    // A chain of 130 unary `+` parses, but its reprint `(+(+(...)))` nests twice as deep
    // and hits the parser's recursion bound: exempt from the round trip.
    let sql = format!("DETACH {}x", "+".repeat(130));
    run(sql.as_bytes(), "the fuzz crash");
    let artifact: &[u8] = b"DETACH\x0a\xa2\xa2\xa2\xa2MM\xa4\xa4\xa4\xa4\xa4\xff\xff\xff\xff\xff\xa4\xa4\xa4\xa4\xa4\xa4\xa4\xa4\xa4\xa4++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++\xa4\xa4\xa4\xff\xff\xff\xff\xff\xff\xff\xff\xa4\xa4\xa4\xa4\xa4\xa4\xa4C&\xa2";
    run(artifact, "the fuzz crash artifact");
    let sql = format!("SELECT 1 & {}'a'", "+".repeat(200));
    run(sql.as_bytes(), "the fuzz crash");
}

#[test]
fn fuzz_crash_table_with_only_constraints() {
    // `CREATE TABLE t(PRIMARY KEY (x))` parsed with no columns and printed as `t(, ...)`;
    // SQLite's grammar needs a column first, so it is a syntax error.
    let artifact: &[u8] =
        b"CREATE TEMP TABLE IF NOT EXISTS \x22q t\x22( PRIMARY KEY ([x y] DESC, \xfa))";
    run(artifact, "the fuzz crash artifact");
    for sql in [
        "CREATE TABLE t(PRIMARY KEY (x))",
        "CREATE TABLE u(CHECK(1))",
        "CREATE TABLE v(UNIQUE(a))",
        "CREATE TABLE w(CONSTRAINT c UNIQUE(a))",
    ] {
        let e = parlite_sql::parse::parse_all(sql);
        assert!(e.is_err(), "{sql} parsed: {e:?}");
    }
    assert!(parlite_sql::parse::parse_all("CREATE TABLE t(a, PRIMARY KEY (a))").is_ok());
}
