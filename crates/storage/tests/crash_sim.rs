//! Crash simulation of the file backend over `SimVfs` (checks pager D1–D5, log F1–F3).
//!
//! Each case is one seed: a random workload of write transactions (page edits, appends,
//! truncations, savepoints) runs against a model of the acknowledged state, while the
//! simulated disk fails calls and then loses power at a random I/O call — in a commit, in a
//! checkpoint, anywhere. Unsynced writes are kept, dropped or torn per sector. Some cases
//! crash again during the recovery itself. After the final reopen:
//! - under `Synchronous::Full`, the database equals the last acknowledged commit, or the
//!   commit that was in flight at the crash (D1, P3 atomicity);
//! - under `Normal` after a power loss, it equals the state after *some* commit (a
//!   prefix: no torn transaction, nothing never committed) (D3, D5); after a process crash
//!   (every issued write survives) it equals the last acknowledged commit or the one in
//!   flight, under `Off` too;
//! - under `Off` after a power loss, anything may be left, as in SQLite: the checkpoint
//!   rounds of `Off` commits skip their fsyncs (pager checkpoint.rs B8); reopening must
//!   still return an error or a database, never panic;
//! - it stays writable and reopens again with the same content.
//!
//! Replay one case: `PARLITE_SEED=1234 cargo test -p parlite-storage --test crash_sim`.
//! More cases: `PARLITE_LONG=1` (20,000 seeds instead of 3,000).

use parlite_storage::header::{init_header, DbHeader};
use parlite_storage::pager::{FileBackend, PagerConfig};
use parlite_storage::pages::{Backend, PageRead, ReadView};
use parlite_storage::vfs::{CrashMode, SimVfs};
use parlite_storage::{OpenOptions, PageNo, StorageError, Synchronous};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::sync::Arc;
use std::time::Duration;

const PS: usize = 512;
const MAX_PAGES: u32 = 48;

/// Bytes of page 1 the backend stamps at commit (P3) and so differ from the model.
fn masked(pgno: usize, i: usize) -> bool {
    pgno == 1 && (i == 18 || i == 19 || (24..32).contains(&i) || (92..100).contains(&i))
}

#[derive(Clone, Debug, PartialEq)]
struct Model {
    pages: Vec<Vec<u8>>,
}

impl Model {
    fn matches(&self, v: &dyn PageRead) -> Result<(), String> {
        if v.page_count() as usize != self.pages.len() {
            return Err(format!(
                "page count {} != model {}",
                v.page_count(),
                self.pages.len()
            ));
        }
        for (i, want) in self.pages.iter().enumerate() {
            let pgno = i + 1;
            let got = v
                .page(PageNo(pgno as u32))
                .map_err(|e| format!("page {pgno}: {e}"))?;
            for (j, (a, b)) in got.iter().zip(want.iter()).enumerate() {
                if a != b && !masked(pgno, j) {
                    return Err(format!("page {pgno} byte {j}: {a} != model {b}"));
                }
            }
        }
        if !self.pages.is_empty() {
            let p1 = v.page(PageNo(1)).map_err(|e| e.to_string())?;
            let count = u32::from_be_bytes([p1[28], p1[29], p1[30], p1[31]]);
            if count as usize != self.pages.len() {
                return Err(format!("header page count {count} != {}", self.pages.len()));
            }
            if p1[24..28] != p1[92..96] {
                return Err("change counter != version-valid-for".into());
            }
        }
        Ok(())
    }
}

fn opts(cache: usize, sync: Synchronous) -> OpenOptions {
    OpenOptions {
        page_size: PS as u32,
        cache_pages_max: cache,
        synchronous: sync,
        ..OpenOptions::default()
    }
}

struct Case {
    seed: u64,
    sync: Synchronous,
    cache: usize,
    config: PagerConfig,
    /// Commits of the workload: 5 up to this (exclusive).
    commits_max: usize,
    /// See [`run_txn`].
    wide_pages_max: usize,
}

fn open(vfs: &SimVfs, case: &Case) -> parlite_storage::Result<FileBackend> {
    FileBackend::open_with(
        Arc::new(vfs.clone()),
        "t.db",
        &opts(case.cache, case.sync),
        case.config.clone(),
    )
}

/// One write transaction: random edits mirrored in `model`. `Err` if the backend failed.
/// `wide_pages_max` > 0: the transaction may also rewrite up to that many whole pages, so its
/// frame spans several KiB (the log-growth cases); 0 leaves the random stream as it was.
fn run_txn(
    b: &FileBackend,
    rng: &mut StdRng,
    model: &mut Model,
    wide_pages_max: usize,
) -> parlite_storage::Result<()> {
    let mut w = b.begin_write(Duration::from_secs(5))?;
    if w.page_count() == 0 {
        let p = w.append_page()?;
        init_header(w.page_mut(p)?, PS as u32);
        let mut page = vec![0u8; PS];
        init_header(&mut page, PS as u32);
        model.pages.push(page);
        return w.commit();
    }
    let saved = model.clone();
    if wide_pages_max > 0 && rng.gen_bool(0.6) {
        for _ in 0..rng.gen_range(1..=wide_pages_max) {
            let pgno = rng.gen_range(2..=model.pages.len().max(2));
            if pgno > model.pages.len() {
                break;
            }
            let byte: u8 = rng.gen();
            w.page_mut(PageNo(pgno as u32))?.fill(byte);
            model.pages[pgno - 1].fill(byte);
        }
    }
    let mut savepoint: Option<(u32, Model)> = None;
    for _ in 0..rng.gen_range(1..6) {
        match rng.gen_range(0..10) {
            0..=5 => {
                let pgno = rng.gen_range(1..=model.pages.len());
                let lo = if pgno == 1 { 100 } else { 0 };
                let off = rng.gen_range(lo..PS);
                let cap = if rng.gen_bool(0.2) { PS } else { 40 };
                let len = rng.gen_range(1..=(PS - off).min(cap));
                let byte: u8 = rng.gen();
                w.page_mut(PageNo(pgno as u32))?[off..off + len].fill(byte);
                model.pages[pgno - 1][off..off + len].fill(byte);
            }
            6..=7 if (model.pages.len() as u32) < MAX_PAGES => {
                let p = w.append_page()?;
                assert_eq!(p.0 as usize, model.pages.len() + 1);
                model.pages.push(vec![0u8; PS]);
                let byte: u8 = rng.gen();
                w.page_mut(p)?[..64].fill(byte);
                model.pages[p.0 as usize - 1][..64].fill(byte);
            }
            8 if model.pages.len() > 2 => {
                let n = rng.gen_range(1..model.pages.len());
                w.truncate(n as u32)?;
                model.pages.truncate(n);
            }
            _ => match savepoint.take() {
                None => savepoint = Some((w.savepoint(), model.clone())),
                Some((sp, m)) => {
                    if rng.gen_bool(0.5) {
                        w.rollback_to(sp)?;
                        *model = m;
                    } else {
                        w.release(sp);
                    }
                }
            },
        }
    }
    if rng.gen_bool(0.05) {
        w.rollback();
        *model = saved;
        return Ok(());
    }
    w.commit()
}

/// What the workload left: every acknowledged state in order, and the one in flight.
struct Outcome {
    acked: Vec<Model>,
    in_flight: Option<Model>,
    /// The largest size of the two log files together seen after a commit.
    log_file_bytes_max: u64,
}

fn workload(
    b: &FileBackend,
    rng: &mut StdRng,
    commits: usize,
    vfs: &SimVfs,
    crash_at: u64,
    wide_pages_max: usize,
) -> Outcome {
    let mut log_file_bytes_max = 0;
    let mut acked = vec![Model { pages: Vec::new() }];
    let mut old_snapshot: Option<(Box<dyn ReadView>, Model)> = None;
    for _ in 0..commits {
        if vfs.io_calls() > crash_at.saturating_add(50) {
            break;
        }
        let mut m = acked.last().cloned().unwrap_or(Model { pages: Vec::new() });
        let result = run_txn(b, rng, &mut m, wide_pages_max);
        if wide_pages_max > 0 {
            // Only here: the stats read the log files' sizes, I/O calls that would move the
            // other cases' crash points.
            log_file_bytes_max = log_file_bytes_max.max(b.stats().log_file_bytes);
        }
        match result {
            Ok(()) => {
                if &m != acked.last().unwrap() {
                    acked.push(m);
                }
            }
            Err(_) => {
                // The commit (or an earlier step of it) failed: its outcome is unknown.
                return Outcome {
                    acked,
                    in_flight: Some(m),
                    log_file_bytes_max,
                };
            }
        }
        // Explicit checkpoints restart the log: rarer in the log-growth cases, so that a
        // generation grows through several steps.
        let explicit_checkpoint_odds = if wide_pages_max > 0 { 48 } else { 12 };
        match rng.gen_range(0..explicit_checkpoint_odds) {
            0 if b.checkpoint().is_err() => {
                return Outcome {
                    acked,
                    in_flight: None,
                    log_file_bytes_max,
                };
            }
            1 => {
                // A long-lived snapshot must not move while commits and checkpoints happen.
                if let Some((v, model)) = old_snapshot.take() {
                    if let Err(e) = model.matches(&*v) {
                        // A read may fail on an injected I/O error; a mismatch never may.
                        assert!(e.contains("I/O"), "seed snapshot drifted: {e}");
                    }
                }
                if let Ok(v) = b.begin_read() {
                    old_snapshot = Some((v, acked.last().unwrap().clone()));
                }
            }
            _ => {}
        }
    }
    Outcome {
        acked,
        in_flight: None,
        log_file_bytes_max,
    }
}

fn read_state(b: &FileBackend) -> Result<Box<dyn ReadView>, StorageError> {
    b.begin_read()
}

#[derive(Default, Debug)]
struct Tally {
    cases: u64,
    acked_commits: u64,
    in_flight: u64,
    recovered_to_in_flight: u64,
    recovered_empty: u64,
    checkpoints: u64,
    /// `Off` cases that lost power (checked only for not panicking, B8).
    off_power_losses: u64,
    /// Cases whose log files together grew past two zero-filled steps of 64 KiB (log G5).
    log_grown_cases: u64,
    /// The largest size of the two log files together in any case.
    log_file_bytes_max: u64,
}

fn run_case(case: &Case, tally: &mut Tally) {
    let seed = case.seed;
    let mut rng = StdRng::seed_from_u64(seed);
    let vfs = SimVfs::new(seed);
    let commits = rng.gen_range(5..case.commits_max);
    // Opening takes ~15 calls and a commit 2–4 (more with a checkpoint): most crash points
    // land inside the workload, some after it (unsynced tail only).
    let crash_at = 15 + rng.gen_range(0..(commits as u64 * 4 + 10));
    let single_fault = rng.gen_bool(0.25);
    if single_fault {
        vfs.fail_at(rng.gen_range(0..crash_at.max(1)));
    } else {
        vfs.fail_from(crash_at);
    }
    let outcome = match open(&vfs, case) {
        Ok(b) => {
            let o = workload(
                &b,
                &mut rng,
                commits,
                &vfs,
                if single_fault { u64::MAX } else { crash_at },
                case.wide_pages_max,
            );
            tally.checkpoints += b.stats().checkpoints;
            tally.log_grown_cases += (o.log_file_bytes_max > 2 * (64 << 10)) as u64;
            tally.log_file_bytes_max = tally.log_file_bytes_max.max(o.log_file_bytes_max);
            // Power off with the backend still alive (S3: its drop cannot write any more).
            let mode = if case.sync != Synchronous::Full && rng.gen_bool(0.5) {
                CrashMode::ProcessCrash
            } else {
                CrashMode::PowerLoss
            };
            let crashed = vfs.crash(seed ^ 0xC0FFEE, mode);
            drop(b);
            (o, crashed, mode)
        }
        Err(_) => {
            let crashed = vfs.crash(seed ^ 0xC0FFEE, CrashMode::PowerLoss);
            (
                Outcome {
                    acked: vec![Model { pages: Vec::new() }],
                    in_flight: None,
                    log_file_bytes_max: 0,
                },
                crashed,
                CrashMode::PowerLoss,
            )
        }
    };
    let (outcome, mut disk, mode) = outcome;

    // Crash during recovery: fail from a random call of the reopen, then lose power again.
    // After a process crash the log's unsynced frames are still only in the OS cache, so
    // this power loss may drop them: recovery must sync the log before redoing pages (D4).
    let recovery_crash = rng.gen_bool(if mode == CrashMode::ProcessCrash {
        0.5
    } else {
        0.3
    });
    if recovery_crash {
        disk.fail_from(rng.gen_range(0..30));
        let b = open(&disk, case);
        let next = disk.crash(seed ^ 0xBADD1E, CrashMode::PowerLoss);
        drop(b);
        disk = next;
    }

    tally.cases += 1;
    tally.acked_commits += outcome.acked.len() as u64 - 1;
    tally.in_flight += outcome.in_flight.is_some() as u64;
    // B8: `Off` promises nothing across a power loss (relaxed rounds write the database
    // file without syncing it).
    let off_power_loss =
        case.sync == Synchronous::Off && (mode == CrashMode::PowerLoss || recovery_crash);
    if off_power_loss {
        tally.off_power_losses += 1;
        let Ok(b) = open(&disk, case) else {
            return;
        };
        let Ok(v) = read_state(&b) else {
            return;
        };
        let any = outcome
            .acked
            .iter()
            .chain(outcome.in_flight.iter())
            .any(|m| m.matches(&*v).is_ok());
        if !any {
            return;
        }
    }
    let b = open(&disk, case).unwrap_or_else(|e| panic!("seed {seed}: reopen failed: {e}"));
    let v = read_state(&b).unwrap_or_else(|e| panic!("seed {seed}: begin_read: {e}"));
    let last = outcome.acked.last().unwrap();
    let exact =
        case.sync == Synchronous::Full || (mode == CrashMode::ProcessCrash && !recovery_crash);
    let ok = if exact {
        last.matches(&*v).is_ok()
            || outcome
                .in_flight
                .as_ref()
                .is_some_and(|m| m.matches(&*v).is_ok())
    } else {
        outcome.acked.iter().any(|m| m.matches(&*v).is_ok())
            || outcome
                .in_flight
                .as_ref()
                .is_some_and(|m| m.matches(&*v).is_ok())
    };
    if !ok {
        panic!(
            "seed {seed} ({:?}, {mode:?}): recovered state matches no allowed state; vs last acked: {:?}; \
             vs in flight: {:?}; {} acked commits",
            case.sync,
            last.matches(&*v),
            outcome.in_flight.as_ref().map(|m| m.matches(&*v)),
            outcome.acked.len() - 1
        );
    }
    // The recovered database stays usable: commit on top, reopen, compare.
    let mut model = outcome
        .acked
        .iter()
        .chain(outcome.in_flight.iter())
        .rev()
        .find(|m| m.matches(&*v).is_ok())
        .cloned()
        .unwrap();
    tally.recovered_to_in_flight += (last.matches(&*v).is_err()) as u64;
    tally.recovered_empty += (v.page_count() == 0) as u64;
    drop(v);
    for _ in 0..3 {
        let mut m = model.clone();
        run_txn(&b, &mut rng, &mut m, case.wide_pages_max)
            .unwrap_or_else(|e| panic!("seed {seed}: commit after recovery: {e}"));
        model = m;
    }
    drop(b);
    assert!(
        disk.file_bytes("t.db-plog").is_none() && disk.file_bytes("t.db-plog2").is_none(),
        "seed {seed}: clean close leaves no log"
    );
    let b = open(&disk, case).unwrap();
    let v = b.begin_read().unwrap();
    if let Err(e) = model.matches(&*v) {
        panic!("seed {seed}: after recovery + commits + reopen: {e}");
    }
}

fn case_for(seed: u64) -> Case {
    let mut rng = StdRng::seed_from_u64(seed.wrapping_mul(0x9E37_79B9));
    let sync = match rng.gen_range(0..20) {
        0..=14 => Synchronous::Full,
        15..=18 => Synchronous::Normal,
        _ => Synchronous::Off,
    };
    let cache = rng.gen_range(8..40);
    let config = PagerConfig {
        checkpoint_log_bytes: [1 << 10, 4 << 10, 16 << 10, 4 << 20][rng.gen_range(0..4)],
        checkpoint_dirty_percent: 50,
        backpressure_dirty_percent: 100,
        background_checkpoint: false,
    };
    Case {
        seed,
        sync,
        cache,
        config,
        commits_max: 40,
        wide_pages_max: 0,
    }
}

#[test]
fn crash_at_random_io_calls() {
    if let Ok(s) = std::env::var("PARLITE_SEED") {
        let seed: u64 = s.parse().expect("PARLITE_SEED must be a number");
        let mut tally = Tally::default();
        run_case(&case_for(seed), &mut tally);
        println!("{tally:?}");
        return;
    }
    let n = if std::env::var("PARLITE_LONG").is_ok() {
        20_000
    } else {
        3_000
    };
    let mut tally = Tally::default();
    for seed in 0..n {
        run_case(&case_for(seed), &mut tally);
    }
    println!("{tally:?}");
    // The cases must really exercise the interesting paths.
    assert!(tally.acked_commits > 8 * n, "{tally:?}");
    assert!(tally.in_flight > n / 10, "{tally:?}");
    assert!(tally.recovered_to_in_flight > 0, "{tally:?}");
}

/// Log G5 under crashes: frames of a few hundred bytes to several KiB (512-byte pages,
/// whole-page rewrites) cross the log's zero-filled growth steps (64 KiB and up) many times
/// per generation, in both log files (checkpoint thresholds of 48 KiB to 2 MiB switch
/// generations to the spare file, explicit checkpoints restart the active one), and power is
/// lost at a random I/O call: a growth write dropped or torn, a frame torn over a grown tail,
/// a generation started over a grown file. After recovery every acknowledged commit is
/// there and nothing else (the `run_case` checks). A `grow` that wrote its zeros over the
/// frame just appended, or one that left stale bytes past `end`, fails here.
/// Replay: `PARLITE_SEED=n cargo test -p parlite-storage --test crash_sim log_growth`.
fn growth_case_for(seed: u64) -> Case {
    let mut case = case_for(seed);
    let mut rng = StdRng::seed_from_u64(seed.wrapping_mul(0x51_7CC1_B727));
    case.config.checkpoint_log_bytes =
        [48 << 10, 160 << 10, 400 << 10, 2 << 20][rng.gen_range(0..4)];
    // Every page fits the cache, so only the log's size starts a checkpoint round.
    case.cache = 64;
    case.config.checkpoint_dirty_percent = 100;
    case.config.backpressure_dirty_percent = 200;
    case.commits_max = 600;
    case.wide_pages_max = 16;
    case
}

#[test]
fn crash_across_log_growth_steps() {
    if let Ok(s) = std::env::var("PARLITE_SEED") {
        let seed: u64 = s.parse().expect("PARLITE_SEED must be a number");
        let mut tally = Tally::default();
        run_case(&growth_case_for(seed), &mut tally);
        println!("{tally:?}");
        return;
    }
    let n = if std::env::var("PARLITE_LONG").is_ok() {
        5_000
    } else {
        500
    };
    let mut tally = Tally::default();
    for seed in 0..n {
        run_case(&growth_case_for(seed), &mut tally);
    }
    println!("{tally:?}");
    // Most cases must really grow the log several steps, and crash in the middle of it.
    assert!(tally.log_grown_cases > n / 5, "{tally:?}");
    assert!(tally.log_file_bytes_max > 256 << 10, "{tally:?}");
    assert!(tally.in_flight > n / 10, "{tally:?}");
    assert!(tally.checkpoints > n, "{tally:?}");
}

/// Walks every I/O call of one checkpoint, and then every I/O call of the recovery that
/// follows a crash there: for each call, fail it and everything after, lose power (several
/// seeds of kept/dropped/torn writes), reopen, and compare with the model. Deterministic.
#[test]
fn every_io_call_of_checkpoint_and_recovery() {
    let case = Case {
        seed: 0,
        sync: Synchronous::Full,
        cache: 64,
        config: PagerConfig {
            checkpoint_log_bytes: 1 << 30,
            checkpoint_dirty_percent: 100,
            backpressure_dirty_percent: 200,
            background_checkpoint: false,
        },
        commits_max: 40,
        wide_pages_max: 0,
    };
    // A database whose last commits are only in the log.
    let base = SimVfs::new(42);
    let b = open(&base, &case).unwrap();
    let mut rng = StdRng::seed_from_u64(42);
    let mut model = Model { pages: Vec::new() };
    for _ in 0..30 {
        let mut m = model.clone();
        run_txn(&b, &mut rng, &mut m, 0).unwrap();
        model = m;
    }
    let start = base.io_calls();
    let counter_before = base
        .file_bytes("t.db")
        .and_then(|f| DbHeader::parse(&f).ok())
        .map_or(0, |h| h.change_counter);
    // Count the checkpoint's calls on a copy.
    let copy = base.fork();
    let before = copy.io_calls();
    let cb = FileBackend::open_with(
        Arc::new(copy.clone()),
        "t.db",
        &opts(case.cache, case.sync),
        case.config.clone(),
    );
    drop(cb);
    let recovery_calls = copy.io_calls() - before;
    b.checkpoint().unwrap();
    let checkpoint_calls = base.io_calls() - start;
    drop(b);
    assert!(
        checkpoint_calls >= 5 && recovery_calls >= 5,
        "{checkpoint_calls} {recovery_calls}"
    );

    let mut checked = 0;
    for fail_at in 0..checkpoint_calls {
        for crash_seed in 0..4u64 {
            // Rebuild the same pre-checkpoint disk (deterministic from the seed).
            let disk = SimVfs::new(42);
            let b = open(&disk, &case).unwrap();
            let mut rng = StdRng::seed_from_u64(42);
            let mut m = Model { pages: Vec::new() };
            for _ in 0..30 {
                let mut next = m.clone();
                run_txn(&b, &mut rng, &mut next, 0).unwrap();
                m = next;
            }
            assert_eq!(m, model);
            disk.fail_from(disk.io_calls() + fail_at);
            let _ = b.checkpoint();
            let mut after = disk.crash(crash_seed, CrashMode::PowerLoss);
            drop(b);
            // Then crash again at one call of the recovery (cycling through them).
            let r_fail = (fail_at * 4 + crash_seed) % (recovery_calls + 2);
            after.fail_from(r_fail);
            let rb = open(&after, &case);
            let next = after.crash(crash_seed + 100, CrashMode::PowerLoss);
            drop(rb);
            after = next;
            let rb = open(&after, &case)
                .unwrap_or_else(|e| panic!("checkpoint call {fail_at}, seed {crash_seed}: {e}"));
            let v = rb.begin_read().unwrap();
            if let Err(e) = model.matches(&*v) {
                panic!("checkpoint call {fail_at}, recovery call {r_fail}, seed {crash_seed}: {e}");
            }
            // Pages P3: whichever checkpoint put the last pages into the file (the crashed
            // one, completed, or recovery's), it stamped page 1 with a counter the file did
            // not have before, equal to version-valid-for, and the page count SQLite will
            // then trust.
            let file = after.file_bytes("t.db").unwrap_or_default();
            let h = DbHeader::parse(&file).unwrap_or_else(|e| {
                panic!("checkpoint call {fail_at}, seed {crash_seed}: header: {e}")
            });
            let what = format!("checkpoint call {fail_at}, seed {crash_seed}: {h:?}");
            assert_ne!(h.change_counter, counter_before, "{what}");
            assert_eq!(h.version_valid_for, h.change_counter, "{what}");
            assert_eq!(h.page_count as usize, model.pages.len(), "{what}");
            checked += 1;
        }
    }
    println!("{checked} crash points in a checkpoint of {checkpoint_calls} calls and its recovery");
}

/// Phase 2 of the background-round scenario: rounds of the background checkpoint whose
/// steps (R2–R5) alternate with commits, so that commits land in the new log file while the
/// previous one is synced, copied and emptied (docs/log-and-recovery.md 3b). Stops at the
/// first failure: a failed commit is in flight; a failed step poisons the backend (B7).
fn rounds_under_commits(
    b: &FileBackend,
    rng: &mut StdRng,
    acked: &mut Vec<Model>,
) -> Option<Model> {
    let mut commit = |acked: &mut Vec<Model>| -> Result<(), Model> {
        let mut m = acked.last().cloned().unwrap_or(Model { pages: Vec::new() });
        match run_txn(b, rng, &mut m, 0) {
            Ok(()) => {
                acked.push(m);
                Ok(())
            }
            Err(_) => Err(m),
        }
    };
    for _ in 0..3 {
        for _ in 0..2 {
            if let Err(m) = commit(acked) {
                return Some(m);
            }
        }
        let mut round = match b.begin_checkpoint_round() {
            Ok(Some(r)) => r,
            Ok(None) => panic!("a round must start: the active log has frames"),
            Err(_) => return None,
        };
        loop {
            for _ in 0..2 {
                if let Err(m) = commit(acked) {
                    return Some(m);
                }
            }
            match round.step() {
                Ok(true) => {}
                Ok(false) => break,
                Err(_) => return None,
            }
        }
    }
    for _ in 0..2 {
        if let Err(m) = commit(acked) {
            return Some(m);
        }
    }
    None
}

/// Walks every I/O call of three background checkpoint rounds with commits between their
/// steps (pager checkpoint.rs B1–B7, D1): for each call, fail it and everything after, lose
/// power (5 seeds of kept/dropped/torn writes), crash again at one call of the recovery,
/// reopen. Under `Full` the database must equal the last acknowledged commit or the one in
/// flight; under `Normal`, some acknowledged prefix (or the one in flight). Deterministic.
#[test]
fn every_io_call_of_background_rounds_under_commits() {
    let mut checked = 0;
    for sync in [Synchronous::Full, Synchronous::Normal] {
        let case = Case {
            seed: 0,
            sync,
            cache: 64,
            config: PagerConfig {
                checkpoint_log_bytes: 1 << 30,
                checkpoint_dirty_percent: 100,
                backpressure_dirty_percent: 200,
                background_checkpoint: false,
            },
            commits_max: 40,
            wide_pages_max: 0,
        };
        let setup = |disk: &SimVfs| -> (FileBackend, StdRng, Vec<Model>) {
            let b = open(disk, &case).unwrap();
            let mut rng = StdRng::seed_from_u64(77);
            let mut acked = vec![Model { pages: Vec::new() }];
            for _ in 0..12 {
                let mut m = acked.last().unwrap().clone();
                run_txn(&b, &mut rng, &mut m, 0).unwrap();
                acked.push(m);
            }
            (b, rng, acked)
        };
        // Count phase 2's calls on a fault-free run, and check its final state.
        let disk = SimVfs::new(77);
        let (b, mut rng, mut acked) = setup(&disk);
        let start = disk.io_calls();
        assert!(rounds_under_commits(&b, &mut rng, &mut acked).is_none());
        let calls = disk.io_calls() - start;
        assert_eq!(b.stats().checkpoints, 3, "{:?}", b.stats());
        assert!(acked
            .last()
            .unwrap()
            .matches(&*b.begin_read().unwrap())
            .is_ok());
        drop(b);
        assert!(calls >= 40, "{calls}");
        for fail_at in 0..calls {
            for crash_seed in 0..5u64 {
                let disk = SimVfs::new(77);
                let (b, mut rng, mut acked) = setup(&disk);
                disk.fail_from(disk.io_calls() + fail_at);
                let in_flight = rounds_under_commits(&b, &mut rng, &mut acked);
                let mut after = disk.crash(crash_seed, CrashMode::PowerLoss);
                drop(b);
                let mut dbg = String::new();
                {
                    for f in ["t.db-plog", "t.db-plog2"] {
                        let bytes = after.file_bytes(f).unwrap_or_default();
                        let v = SimVfs::new(1);
                        v.put_file("x", bytes.clone());
                        let file = parlite_storage::vfs::Vfs::open(&v, "x", false).unwrap();
                        let sc = parlite_storage::log::scan(&*file).unwrap();
                        dbg += &format!(
                            "{f}: {} bytes, header {:?}, frames {:?}\n",
                            bytes.len(),
                            sc.header,
                            sc.frames.iter().map(|f| f.seq).collect::<Vec<_>>()
                        );
                    }
                    dbg += &format!(
                        "acked {} in flight {}\n",
                        acked.len() - 1,
                        in_flight.is_some()
                    );
                }
                let r_fail = (fail_at * 5 + crash_seed) % 24;
                after.fail_from(r_fail);
                let rb = open(&after, &case);
                let next = after.crash(crash_seed + 100, CrashMode::PowerLoss);
                drop(rb);
                after = next;
                let rb = open(&after, &case).unwrap_or_else(|e| {
                    panic!("{sync:?} round call {fail_at}, seed {crash_seed}: reopen: {e}")
                });
                let v = rb.begin_read().unwrap();
                let last = acked.last().unwrap();
                for (i, m) in acked.iter().enumerate() {
                    dbg += &format!("acked {i}: {:?}\n", m.matches(&*v));
                }
                let ok = if sync == Synchronous::Full {
                    last.matches(&*v).is_ok()
                } else {
                    acked.iter().any(|m| m.matches(&*v).is_ok())
                } || in_flight.as_ref().is_some_and(|m| m.matches(&*v).is_ok());
                assert!(
                    ok,
                    "{sync:?} round call {fail_at}, recovery call {r_fail}, seed {crash_seed}: \
                     vs last acked ({} commits): {:?}\n{dbg}",
                    acked.len() - 1,
                    last.matches(&*v)
                );
                // Pages P3: the file's page 1, as the rounds' R3 and recovery stamp it.
                if let Some(h) = after
                    .file_bytes("t.db")
                    .filter(|f| !f.is_empty())
                    .map(|f| DbHeader::parse(&f).unwrap())
                {
                    let what = format!("{sync:?} round call {fail_at}, seed {crash_seed}: {h:?}");
                    assert_eq!(h.version_valid_for, h.change_counter, "{what}");
                    assert_eq!(h.page_count, v.page_count(), "{what}");
                }
                checked += 1;
            }
        }
    }
    println!("{checked} crash points in background rounds under commits");
}
