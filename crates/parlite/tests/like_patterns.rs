//! Seeded random differential test of LIKE and GLOB against SQLite (rusqlite, bundled):
//! random texts (ASCII letters of both cases, the wildcard characters themselves, non-ASCII
//! letters with and without case, long texts with many near-misses so the word-at-a-time
//! byte search crosses its 8-byte steps), integers, reals, blobs and NULLs, matched by random
//! patterns built from `%`, `_`, `*`, `?`, `[...]`, literals and escapes, with and without
//! ESCAPE, under both settings of `PRAGMA case_sensitive_like`. Each query returns the ids of
//! the matching rows, ordered; the outcome (rows or error message) must be identical.

mod common;

use common::{run_parlite, run_sqlite};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const ALPHABET: &[&str] = &[
    "o", "O", "n", "N", "on", "ON", "a", "b", "%", "_", "*", "?", "[", "]", "\\", "x", "é", "É",
    "ß", "ж", "Ж", " ", "-", "^",
];

fn random_text(rng: &mut StdRng) -> String {
    let len = match rng.gen_range(0..4) {
        0 => rng.gen_range(0..4),
        1 => rng.gen_range(4..12),
        _ => rng.gen_range(12..70),
    };
    (0..len)
        .map(|_| ALPHABET[rng.gen_range(0..ALPHABET.len())])
        .collect()
}

fn random_like_pattern(rng: &mut StdRng, esc: Option<char>) -> String {
    let len = rng.gen_range(0..7);
    let mut p = String::new();
    for _ in 0..len {
        match rng.gen_range(0..10) {
            0..=2 => p.push('%'),
            3 => p.push('_'),
            4 => {
                if let Some(e) = esc {
                    p.push(e);
                    p.push_str(ALPHABET[rng.gen_range(0..ALPHABET.len())]);
                } else {
                    p.push('o');
                }
            }
            _ => p.push_str(ALPHABET[rng.gen_range(0..ALPHABET.len())]),
        }
    }
    p
}

fn random_glob_pattern(rng: &mut StdRng) -> String {
    let len = rng.gen_range(0..6);
    let mut p = String::new();
    for _ in 0..len {
        match rng.gen_range(0..10) {
            0..=2 => p.push('*'),
            3 => p.push('?'),
            4 => p.push_str(["[oO]", "[^o]", "[a-o]", "[]]", "[é-ж]"][rng.gen_range(0..5)]),
            _ => p.push_str(ALPHABET[rng.gen_range(0..ALPHABET.len())]),
        }
    }
    p
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

#[test]
fn like_and_glob_agree_with_sqlite() {
    let seed: u64 = std::env::var("PARLITE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x11ce);
    let mut rng = StdRng::seed_from_u64(seed);
    let s = rusqlite::Connection::open_in_memory().expect("sqlite");
    let p = parlite::Connection::open(":memory:").expect("parlite");
    let mut setup = vec!["CREATE TABLE t(id INTEGER PRIMARY KEY, x)".to_string()];
    for id in 1..=160 {
        let v = match rng.gen_range(0..12) {
            0 => "NULL".to_string(),
            1 => rng.gen_range(-50..500).to_string(),
            2 => "1.5".to_string(),
            3 => "x'6f6e4f4e'".to_string(),
            4 => "x'ff6f6e'".to_string(),
            5 => "'one hundred twenty three thousand ' || 'four hundred fifty one'".to_string(),
            _ => quote(&random_text(&mut rng)),
        };
        setup.push(format!("INSERT INTO t VALUES({id}, {v})"));
    }
    for sql in &setup {
        assert_eq!(run_sqlite(&s, sql), run_parlite(&p, sql), "{sql}");
    }
    let mut failures = Vec::new();
    for case in 0..1500 {
        let sql = match case % 5 {
            0 | 1 => {
                let pat = random_like_pattern(&mut rng, None);
                format!("SELECT id FROM t WHERE x LIKE {} ORDER BY id", quote(&pat))
            }
            2 => {
                let esc = ['\\', '#', 'o', '%', '_', 'é'][rng.gen_range(0..6)];
                let pat = random_like_pattern(&mut rng, Some(esc));
                format!(
                    "SELECT id FROM t WHERE x NOT LIKE {} ESCAPE {} ORDER BY id",
                    quote(&pat),
                    quote(&esc.to_string())
                )
            }
            3 => {
                let pat = random_glob_pattern(&mut rng);
                format!("SELECT id FROM t WHERE x GLOB {} ORDER BY id", quote(&pat))
            }
            _ => {
                let pat = random_like_pattern(&mut rng, None);
                format!(
                    "SELECT id, like({}, x), x LIKE {} FROM t WHERE id % 7 = 0 ORDER BY id",
                    quote(&pat),
                    quote(&pat)
                )
            }
        };
        if case % 300 == 0 {
            let on = if case % 600 == 0 { "ON" } else { "OFF" };
            let pragma = format!("PRAGMA case_sensitive_like={on}");
            run_sqlite(&s, &pragma);
            run_parlite(&p, &pragma);
        }
        let (a, b) = (run_sqlite(&s, &sql), run_parlite(&p, &sql));
        if a != b {
            failures.push(format!("{sql}\n  sqlite:  {a:?}\n  parlite: {b:?}"));
        }
    }
    assert!(
        failures.is_empty(),
        "seed {seed}: {} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn like_edge_cases_agree_with_sqlite() {
    let s = rusqlite::Connection::open_in_memory().expect("sqlite");
    let p = parlite::Connection::open(":memory:").expect("parlite");
    for sql in [
        "SELECT 'abc' LIKE NULL, NULL LIKE 'a', 'a' LIKE 'a' ESCAPE NULL",
        "SELECT 'a%c' LIKE 'a\\%c' ESCAPE '\\', 'abc' LIKE 'a\\%c' ESCAPE '\\'",
        "SELECT 'abc' LIKE 'a%' ESCAPE 'ab'",
        "SELECT 'abc' LIKE 'a%' ESCAPE ''",
        "SELECT 'ÉCOLE' LIKE 'école', 'ecole' LIKE 'ECOLE', 'É' LIKE '_'",
        "SELECT 'xonx' LIKE '%ON%', 'xOnx' LIKE '%on%', 'onon' LIKE '%on%on', 'ono' LIKE '%on%on'",
        "SELECT 'aaaaaaaaaaaaaaaaaaaaaaaaon' LIKE '%on', 'aaaaaaaaaaaaaaaaaaaaaaaao' LIKE '%on%'",
        "SELECT 'a' || char(0) || 'on' LIKE '%on%', 'on' || char(0) || 'x' LIKE 'on'",
        "SELECT x'6f6e' LIKE 'on', 123 LIKE '12%', 1.5 LIKE '1._'",
        "SELECT 'abc' GLOB 'A*', 'abc' GLOB '[a-c]??', 'a]' GLOB '*[]]'",
    ] {
        assert_eq!(run_sqlite(&s, sql), run_parlite(&p, sql), "{sql}");
    }
}
