//! Differential check of the REAL formatting the runner and the shell use
//! (parlite_cli::numfmt) against SQLite itself: `CAST(r AS TEXT)` (`%!.15g`) and
//! `printf('%.3f', r)` over values of every magnitude, seeded so a failure replays.

use parlite_cli::numfmt::{format_fixed, format_real};
use rusqlite::Connection;

/// xorshift64*: enough spread for bit patterns, no dependency.
fn next(state: &mut u64) -> u64 {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    state.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

fn samples() -> Vec<f64> {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut out = vec![
        0.0,
        -0.0,
        1.0,
        0.5,
        0.0625,
        0.0005,
        0.0015,
        2.675,
        1e15,
        1e16,
        1e19,
        1e20,
        1e-5,
        123456789012345678.0,
        -9223372036854775808.0,
        9.999999999999999e14,
        f64::MAX,
        f64::MIN_POSITIVE,
        5e-324,
    ];
    for _ in 0..4000 {
        let bits = next(&mut seed);
        let r = f64::from_bits(bits);
        if r.is_finite() {
            out.push(r);
        }
        // Values a few digits long, where decimal ties are common.
        let digits = (next(&mut seed) % 100_000_000) as f64;
        let scale = 10f64.powi((next(&mut seed) % 30) as i32 - 15);
        out.push(digits * scale);
        out.push(-(digits / 1000.0));
    }
    out
}

#[test]
fn real_formatting_matches_sqlite() {
    let conn = Connection::open_in_memory().unwrap();
    let mut stmt = conn
        .prepare("SELECT CAST(?1 AS TEXT), printf('%.3f', ?1)")
        .unwrap();
    let mut mismatches = Vec::new();
    for r in samples() {
        let (text, fixed): (String, String) = stmt
            .query_row([r], |row| Ok((row.get(0)?, row.get(1)?)))
            .unwrap();
        if format_real(r) != text {
            mismatches.push(format!(
                "{r:e}: %!.15g sqlite {text} ours {}",
                format_real(r)
            ));
        }
        if format_fixed(r, 3) != fixed {
            mismatches.push(format!(
                "{r:e}: %.3f sqlite {fixed} ours {}",
                format_fixed(r, 3)
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} mismatches, first: {:#?}",
        mismatches.len(),
        &mismatches[..mismatches.len().min(10)]
    );
}
