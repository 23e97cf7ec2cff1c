//! The `execute` fuzz target of `crates/sql/fuzz/` on stable: the target body
//! (`parlite::fuzzing::execute`) runs over the seed statements and seeded mutations of
//! them against its small in-memory database. A panic fails the test with the case's seed
//! and input. Never skipped.
//!
//! Replay: `PARLITE_SEED=N cargo test -p parlite --test fuzz_smoke`; more cases with
//! `PARLITE_LONG=1`. Crashes found by cargo-fuzz live on as named tests at the bottom.

use parlite::fuzzing::execute;
use parlite_sql::fuzzing::{mutate, SEED_SQL};
use std::panic::{catch_unwind, AssertUnwindSafe};

fn base_seed() -> u64 {
    std::env::var("PARLITE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed)
}

fn cases() -> u64 {
    if std::env::var("PARLITE_LONG").is_ok() {
        40_000
    } else {
        4_000
    }
}

fn run(input: &[u8], what: &str) {
    if catch_unwind(AssertUnwindSafe(|| execute(input))).is_err() {
        panic!(
            "execute target panicked on {what}: {:?}",
            String::from_utf8_lossy(input)
        );
    }
}

#[test]
fn seeds_execute() {
    for sql in SEED_SQL {
        run(sql.as_bytes(), "a seed");
    }
}

#[test]
fn mutated_inputs_execute() {
    let seed = base_seed();
    eprintln!("fuzz_smoke execute: PARLITE_SEED={seed}");
    for i in 0..cases() {
        let case_seed = seed.wrapping_add(i);
        let a = SEED_SQL[(case_seed % SEED_SQL.len() as u64) as usize];
        let b = SEED_SQL[((case_seed / 7) % SEED_SQL.len() as u64) as usize];
        let joined = format!("{a};\n{b}");
        let input = mutate(joined.as_bytes(), case_seed);
        run(&input, &format!("case seed {case_seed}"));
    }
}
