//! Relaxed checkpoint rounds (pager checkpoint.rs B8): a background round whose commits
//! were all `Synchronous::Off` issues no fsync but R5's, as SQLite's checkpoints at
//! `synchronous=OFF` do, while `Full` commits around it stay durable.
//!
//! - An `Off` workload's rounds never sync the database file and sync each log file only
//!   when emptying it; a process crash still loses nothing.
//! - A `Full` commit placed before, between any two steps of, or after a relaxed round,
//!   then a power loss (8 ways of keeping, dropping and tearing unsynced writes) at its
//!   acknowledgement and again after the round ends: the database equals that commit.
//!
//! Deterministic (inline rounds, stepped by hand).

use parlite_storage::header::init_header;
use parlite_storage::pager::{FileBackend, PagerConfig};
use parlite_storage::pages::Backend;
use parlite_storage::vfs::{CrashMode, SimVfs};
use parlite_storage::{OpenOptions, PageNo, Synchronous};
use std::sync::Arc;
use std::time::Duration;

const PS: usize = 512;
const PAGES: usize = 12;
const PATH: &str = "t.db";
const TIMEOUT: Duration = Duration::from_secs(5);

fn open(disk: &SimVfs, log_bytes: u64) -> FileBackend {
    let opts = OpenOptions {
        page_size: PS as u32,
        cache_pages_max: 256,
        synchronous: Synchronous::Off,
        ..OpenOptions::default()
    };
    let config = PagerConfig {
        checkpoint_log_bytes: log_bytes,
        checkpoint_dirty_percent: 100,
        backpressure_dirty_percent: 200,
        background_checkpoint: false,
    };
    FileBackend::open_with(Arc::new(disk.clone()), PATH, &opts, config).unwrap()
}

/// The pages' expected bytes past page 1's header.
type Model = Vec<Vec<u8>>;

/// One commit that writes `fill` over a 40-byte stretch of page `pgno` (creating the
/// database on the first call), under `mode`.
fn commit(b: &FileBackend, model: &mut Model, pgno: usize, fill: u8, mode: Synchronous) {
    let mut w = b.begin_write(TIMEOUT).unwrap();
    if w.page_count() == 0 {
        for i in 0..PAGES {
            let p = w.append_page().unwrap();
            if i == 0 {
                init_header(w.page_mut(p).unwrap(), PS as u32);
            }
        }
        *model = vec![vec![0u8; PS - 100]; PAGES];
    }
    let off = 100 + (fill as usize * 7) % (PS - 140);
    w.page_mut(PageNo(pgno as u32)).unwrap()[off..off + 40].fill(fill);
    model[pgno - 1][off - 100..off - 60].fill(fill);
    w.set_synchronous(mode);
    w.commit().unwrap();
}

/// Whether the database on `disk` reopens to exactly `model`.
fn check(disk: &SimVfs, model: &Model, what: &str) {
    let b = open(disk, 1 << 30);
    let v = b.begin_read().unwrap();
    assert_eq!(v.page_count() as usize, PAGES, "{what}");
    for (i, want) in model.iter().enumerate() {
        let got = v.page(PageNo(i as u32 + 1)).unwrap();
        assert_eq!(&got[100..], &want[..], "{what}: page {}", i + 1);
    }
}

fn db_syncs(disk: &SimVfs) -> u64 {
    disk.sync_count(PATH)
}

fn log_syncs(disk: &SimVfs) -> u64 {
    disk.sync_count("t.db-plog") + disk.sync_count("t.db-plog2")
}

#[test]
fn off_rounds_sync_only_the_emptied_log_file() {
    let disk = SimVfs::new(1);
    // A round every few commits (inline: the committing thread runs it).
    let b = open(&disk, 2 << 10);
    let mut model = Model::new();
    commit(&b, &mut model, 1, 1, Synchronous::Off);
    let (db0, log0, rounds0) = (db_syncs(&disk), log_syncs(&disk), b.stats().checkpoints);
    // 300: frames no longer carry page 1 (pages P3), so 200 made only 9 rounds.
    for i in 0..300usize {
        commit(
            &b,
            &mut model,
            1 + i % PAGES,
            (i % 251) as u8,
            Synchronous::Off,
        );
    }
    let st = b.stats();
    assert!(st.checkpoints >= 10, "{st:?}");
    assert_eq!(st.relaxed_checkpoints, st.checkpoints, "{st:?}");
    assert_eq!(
        db_syncs(&disk),
        db0,
        "an OFF round must not sync the database file"
    );
    assert_eq!(
        log_syncs(&disk) - log0,
        st.checkpoints - rounds0,
        "one fsync per round: emptying the previous log file (R5)"
    );
    assert_eq!(st.commit_syncs, 0, "{st:?}");
    // The OS keeps every write across a process crash: nothing is lost.
    let crashed = disk.fork().crash(5, CrashMode::ProcessCrash);
    check(&crashed, &model, "process crash after OFF rounds");
    // A FULL commit pays the database file's debt (one fsync) with its log fsync.
    commit(&b, &mut model, 3, 77, Synchronous::Full);
    assert_eq!(db_syncs(&disk), db0 + 1);
    for seed in 0..8 {
        let crashed = disk.fork().crash(seed, CrashMode::PowerLoss);
        check(
            &crashed,
            &model,
            &format!("power loss after FULL, seed {seed}"),
        );
    }
}

#[test]
fn a_full_commit_at_any_step_of_a_relaxed_round_survives_power_loss() {
    let mut checked = 0;
    // `at`: how many steps of the round (R1 = begin, then R2, R3, R4, R5) ran before the
    // FULL commit; 6: after the round and a second relaxed round.
    for at in 0..=6usize {
        for seed in 0..8u64 {
            let disk = SimVfs::new(seed);
            let b = open(&disk, 1 << 30);
            let mut model = Model::new();
            for i in 0..30usize {
                commit(&b, &mut model, 1 + i % PAGES, i as u8 + 1, Synchronous::Off);
            }
            // A first relaxed round leaves the database file's sync owed.
            let mut r = b.begin_checkpoint_round().unwrap().unwrap();
            while r.step().unwrap() {}
            drop(r);
            for i in 0..20usize {
                commit(
                    &b,
                    &mut model,
                    1 + (i * 5) % PAGES,
                    i as u8 + 40,
                    Synchronous::Off,
                );
            }
            let mut full_model = None;
            let full = |b: &FileBackend, model: &mut Model| {
                commit(
                    b,
                    model,
                    2 + seed as usize % 5,
                    200 + at as u8,
                    Synchronous::Full,
                );
                let m = model.clone();
                let crashed = disk.fork().crash(seed ^ 0x5EED, CrashMode::PowerLoss);
                check(&crashed, &m, &format!("at {at} seed {seed}: at the ack"));
                m
            };
            if at == 0 {
                full_model = Some(full(&b, &mut model));
            }
            let mut round = b.begin_checkpoint_round().unwrap().unwrap();
            let mut steps = 1;
            loop {
                if steps == at {
                    full_model = Some(full(&b, &mut model));
                }
                if !round.step().unwrap() {
                    break;
                }
                steps += 1;
            }
            drop(round);
            if at == 5 {
                full_model = Some(full(&b, &mut model));
            }
            if at == 6 {
                commit(&b, &mut model, 4, 99, Synchronous::Off);
                let mut r = b.begin_checkpoint_round().unwrap().unwrap();
                while r.step().unwrap() {}
                drop(r);
                full_model = Some(full(&b, &mut model));
            }
            let m = full_model.expect("the FULL commit ran");
            // The round's remaining steps must not endanger it either.
            let crashed = disk.fork().crash(seed ^ 0xAF7E, CrashMode::PowerLoss);
            check(
                &crashed,
                &m,
                &format!("at {at} seed {seed}: after the round"),
            );
            let st = b.stats();
            assert!(st.relaxed_checkpoints >= 1, "{st:?}");
            checked += 2;
        }
    }
    println!("{checked} power losses around relaxed rounds");
}
