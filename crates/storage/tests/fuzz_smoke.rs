//! The fuzz targets of `crates/storage/fuzz/` on stable: each target body
//! (`parlite_storage::fuzzing`) runs over seeded valid inputs and a few thousand random and
//! mutated ones. A panic fails the test with the case's seed and bytes; a case that runs
//! too long fails it too (no endless loop). Never skipped.
//!
//! Replay: `PARLITE_SEED=N cargo test -p parlite-storage --test fuzz_smoke`; more cases with
//! `PARLITE_LONG=1`. Crashes found by cargo-fuzz live on as named tests at the bottom.

use parlite_storage::fuzzing;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

fn base_seed() -> u64 {
    std::env::var("PARLITE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed)
}

fn scale(n: usize) -> usize {
    if std::env::var("PARLITE_LONG").is_ok() {
        n * 20
    } else {
        n
    }
}

/// One mutation of `input`, shaped after what corrupts real files: bit flips, bytes set to
/// boundary values, small integers written over 2- and 4-byte fields (cell counts, cell
/// pointers, page numbers), truncation, random splices.
fn mutate(rng: &mut StdRng, input: &mut Vec<u8>) {
    if input.is_empty() {
        input.extend((0..rng.gen_range(1..64)).map(|_| rng.gen::<u8>()));
        return;
    }
    let n = 1 + rng.gen_range(0..4);
    for _ in 0..n {
        let len = input.len();
        let at = rng.gen_range(0..len);
        match rng.gen_range(0..8) {
            0 => input[at] ^= 1 << rng.gen_range(0..8),
            1 => input[at] = [0, 1, 0x7f, 0x80, 0xff, 0x0d, 0x05][rng.gen_range(0..7)],
            2 if at + 2 <= len => {
                let v: u16 = [0, 1, 8, 12, 100, 511, 512, 0xffff][rng.gen_range(0..8)];
                input[at..at + 2].copy_from_slice(&v.to_be_bytes());
            }
            3 if at + 4 <= len => {
                let v: u32 = rng.gen_range(0..(len as u32 / 256).max(4) + 3);
                input[at..at + 4].copy_from_slice(&v.to_be_bytes());
            }
            4 => input.truncate(at.max(1)),
            5 => {
                let k = rng.gen_range(1..32).min(len - at);
                for b in &mut input[at..at + k] {
                    *b = rng.gen();
                }
            }
            6 => {
                // Copy one range over another (a page's bytes in the wrong place).
                let k = rng.gen_range(1..600).min(len - at);
                let to = rng.gen_range(0..len);
                let chunk = input[at..at + k].to_vec();
                let k = k.min(len - to);
                input[to..to + k].copy_from_slice(&chunk[..k]);
            }
            _ => input.insert(at, rng.gen()),
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    let shown: String = bytes.iter().take(96).map(|b| format!("{b:02x}")).collect();
    if bytes.len() > 96 {
        format!("{shown}... ({} bytes)", bytes.len())
    } else {
        shown
    }
}

/// Runs `target` on each seed, then on `cases` mutations of random seeds and `cases / 8`
/// purely random inputs. Fails on the first panic or on a case over the time limit.
fn run(name: &str, target: fn(&[u8]), seeds: &[Vec<u8>], cases: usize) {
    let seed = base_seed();
    let mut rng = StdRng::seed_from_u64(seed ^ name.len() as u64);
    let mut inputs: Vec<Vec<u8>> = seeds.to_vec();
    for _ in 0..cases {
        let mut input = seeds[rng.gen_range(0..seeds.len())].clone();
        mutate(&mut rng, &mut input);
        inputs.push(input);
    }
    for _ in 0..cases / 8 {
        let n = rng.gen_range(0..2048);
        inputs.push((0..n).map(|_| rng.gen()).collect());
    }
    let started = Instant::now();
    for (i, input) in inputs.iter().enumerate() {
        let t0 = Instant::now();
        let r = catch_unwind(AssertUnwindSafe(|| target(input)));
        if r.is_err() {
            panic!(
                "{name}: case {i} (PARLITE_SEED={seed}) panicked on input {}",
                hex(input)
            );
        }
        let took = t0.elapsed();
        assert!(
            took < Duration::from_secs(10),
            "{name}: case {i} (PARLITE_SEED={seed}) took {took:?} on input {}",
            hex(input)
        );
    }
    eprintln!(
        "{name}: {} cases in {:?} (PARLITE_SEED={seed})",
        inputs.len(),
        started.elapsed()
    );
}

fn with_mode(mode: u8, bytes: Vec<u8>) -> Vec<u8> {
    let mut v = vec![mode];
    v.extend(bytes);
    v
}

#[test]
fn record_decode_survives_random_and_mutated_records() {
    use parlite_storage::record::{encode, ValueRef};
    let big = vec![b'x'; 300];
    let seeds = vec![
        encode(&[ValueRef::Null, ValueRef::Integer(0), ValueRef::Integer(1)]),
        encode(&[
            ValueRef::Integer(-5),
            ValueRef::Integer(1 << 40),
            ValueRef::Integer(i64::MIN),
            ValueRef::Real(2.5),
        ]),
        encode(&[ValueRef::Text(b"abc"), ValueRef::Blob(&big)]),
        encode(&[
            ValueRef::Text(b"A"),
            ValueRef::Integer(3),
            ValueRef::Text(b"b"),
        ]),
        vec![0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01],
    ];
    run("record_decode", fuzzing::record_decode, &seeds, scale(5000));
}

#[test]
fn page_walk_survives_random_and_mutated_databases() {
    let mut seeds = Vec::new();
    for s in 0..4 {
        seeds.push(with_mode(0, fuzzing::seed_database(s).unwrap()));
    }
    // Unpatched images: header validation itself.
    seeds.push(with_mode(1, fuzzing::seed_database(9).unwrap()));
    run("page_walk", fuzzing::page_walk, &seeds, scale(4000));
}

#[test]
fn log_recover_survives_random_and_mutated_logs() {
    let mut seeds = Vec::new();
    for s in 0..4 {
        let log = fuzzing::seed_log(s).unwrap();
        assert!(log.len() > 32, "seed log {s} has frames");
        seeds.push(with_mode(0, log));
    }
    seeds.push(with_mode(1, fuzzing::seed_log(5).unwrap()));
    run("log_recover", fuzzing::log_recover, &seeds, scale(2000));
}

#[test]
fn seed_inputs_are_valid() {
    // Unmutated seeds walk every row (forward and back): the targets reach the pages.
    let before = fuzzing::steps_taken();
    fuzzing::page_walk(&with_mode(0, fuzzing::seed_database(3).unwrap()));
    let walked = fuzzing::steps_taken() - before;
    assert!(walked > 40, "page_walk took {walked} steps on a valid seed");
    let before = fuzzing::steps_taken();
    fuzzing::log_recover(&with_mode(0, fuzzing::seed_log(3).unwrap()));
    let walked = fuzzing::steps_taken() - before;
    assert!(
        walked > 40,
        "log_recover took {walked} steps on a valid seed"
    );
    // The seeds must be healthy, or the mutations above start from garbage.
    let img = fuzzing::seed_database(1).unwrap();
    let b = parlite_storage::MemBackend::from_bytes(img).unwrap();
    let db = parlite_storage::Database::with_backend(std::sync::Arc::new(b)).unwrap();
    let t = db.begin_read().unwrap();
    assert!(t.count(parlite_storage::PageNo(1)).unwrap() >= 2);
    assert!(t.count(parlite_storage::PageNo(2)).unwrap() >= 1);
}

#[test]
fn write_corpus() {
    // Builds the seed inputs; with PARLITE_FUZZ_CORPUS=DIR also writes them as cargo-fuzz
    // corpora (DIR/<target>/seed-N).
    let mut sets: Vec<(&str, Vec<Vec<u8>>)> =
        vec![("page_walk", Vec::new()), ("log_recover", Vec::new())];
    for s in 0..6 {
        sets[0]
            .1
            .push(with_mode(0, fuzzing::seed_database(s).unwrap()));
        sets[1].1.push(with_mode(0, fuzzing::seed_log(s).unwrap()));
    }
    sets.push((
        "record_decode",
        sets[0].1.iter().map(|img| img[1..300].to_vec()).collect(),
    ));
    if let Ok(dir) = std::env::var("PARLITE_FUZZ_CORPUS") {
        for (target, seeds) in &sets {
            let d = std::path::Path::new(&dir).join(target);
            std::fs::create_dir_all(&d).unwrap();
            for (i, s) in seeds.iter().enumerate() {
                std::fs::write(d.join(format!("seed-{i}")), s).unwrap();
            }
        }
    }
}

// Crashes found by cargo-fuzz (crates/storage/fuzz), kept as regression tests.

/// `log_recover` OOM: a log frame with a valid checksum claimed 2,667,577,363 pages; open
/// trusted it and the integrity check sized its page map by it (2.6 GB). Open now reports
/// a page count past both the file and the log as corrupt.
#[test]
fn fuzz_log_frame_with_huge_page_count_is_corrupt() {
    let input = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/fuzz/log_recover-huge-page-count"),
    )
    .unwrap();
    fuzzing::log_recover(&input);
    // The same damage made by hand, opened directly: Corrupt, not a 2.6 G-page database.
    let mut log = fuzzing::seed_log(0).unwrap();
    let mut at = 32;
    while at + 28 <= log.len() {
        let len = u32::from_be_bytes([log[at], log[at + 1], log[at + 2], log[at + 3]]) as usize;
        if len < 28 {
            break; // past the last frame
        }
        // Every frame's page count: the last frame's is the one recovery uses.
        log[at + 16..at + 20].copy_from_slice(&0x9f00_0000u32.to_be_bytes());
        at += len;
    }
    fuzzing::fix_log_checksums(&mut log);
    match fuzzing::open_with_log(log) {
        Err(parlite_storage::StorageError::Corrupt { .. }) => {}
        Err(e) => panic!("expected Corrupt, got {e}"),
        Ok(_) => panic!("opened a database whose log claims 2.6 G pages"),
    }
}

/// The same rule for the database header alone: a page count (trusted because
/// version-valid-for matches the change counter) past the end of the file is corrupt.
#[test]
fn header_page_count_past_the_file_is_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.db");
    let mut img = fuzzing::seed_database(2).unwrap();
    img[28..32].copy_from_slice(&0x7fff_0000u32.to_be_bytes());
    std::fs::write(&path, &img).unwrap();
    match parlite_storage::Database::open(&path, parlite_storage::OpenOptions::default()) {
        Err(parlite_storage::StorageError::Corrupt { .. }) => {}
        Err(e) => panic!("expected Corrupt, got {e}"),
        Ok(_) => panic!("opened a file whose header claims more pages than it holds"),
    }
}
