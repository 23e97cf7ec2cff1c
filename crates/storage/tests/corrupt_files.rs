//! Malformed database and log files: opening and reading return errors (`Corrupt`,
//! `NotADatabase`, `CantOpen`), never panic, never hang (log F1, F2; header validation).
//!
//! Replay one fuzz case: `PARLITE_SEED=N cargo test -p parlite-storage --test corrupt_files`;
//! more fuzz cases with `PARLITE_LONG=1`.

use parlite_storage::header::init_header;
use parlite_storage::pager::{FileBackend, PagerConfig};
use parlite_storage::pages::Backend;
use parlite_storage::vfs::{CrashMode, SimVfs};
use parlite_storage::{OpenOptions, PageNo, StorageError};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::sync::Arc;
use std::time::Duration;

const PS: usize = 1024;
const DB: &str = "c.db";
const LOG: &str = "c.db-plog";

fn opts() -> OpenOptions {
    OpenOptions {
        page_size: PS as u32,
        cache_pages_max: 100,
        ..OpenOptions::default()
    }
}

fn open(vfs: &SimVfs) -> parlite_storage::Result<FileBackend> {
    FileBackend::open_with(Arc::new(vfs.clone()), DB, &opts(), PagerConfig::default())
}

/// A disk holding a 12-page database whose last commits are only in the log (the state a
/// killed process leaves), plus the expected page bytes (byte 500 of each page).
fn disk_with_log() -> (SimVfs, Vec<u8>) {
    let vfs = SimVfs::new(1);
    let b = open(&vfs).unwrap();
    let mut marks = Vec::new();
    let mut w = b.begin_write(Duration::from_secs(1)).unwrap();
    let p = w.append_page().unwrap();
    init_header(w.page_mut(p).unwrap(), PS as u32);
    for i in 2..=12u8 {
        let p = w.append_page().unwrap();
        w.page_mut(p).unwrap()[500] = i;
    }
    w.commit().unwrap();
    b.checkpoint().unwrap();
    for round in 0..3u8 {
        let mut w = b.begin_write(Duration::from_secs(1)).unwrap();
        for p in 2..=12u32 {
            w.page_mut(PageNo(p)).unwrap()[500] = 100 + round + p as u8;
        }
        w.commit().unwrap();
    }
    marks.push(0);
    for p in 2..=12u32 {
        marks.push(102 + p as u8);
    }
    let disk = vfs.crash(0, CrashMode::ProcessCrash);
    drop(b);
    assert!(disk.file_bytes(LOG).is_some_and(|l| l.len() > 32));
    (disk, marks)
}

/// Opens and reads every page; returns the first error. Panics propagate (a test failure).
fn open_and_read_all(vfs: &SimVfs) -> parlite_storage::Result<()> {
    let b = open(vfs)?;
    let r = b.begin_read()?;
    for p in 1..=r.page_count().min(10_000) {
        r.page(PageNo(p))?;
    }
    Ok(())
}

/// Runs `f` on a thread and fails the test if it does not finish in time (no endless loop).
fn within_time<T: Send + 'static>(what: String, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(Duration::from_secs(20)) {
        Ok(v) => v,
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => panic!("{what}: panicked"),
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("{what}: did not finish within 20 s")
        }
    }
}

fn expect_err(vfs: &SimVfs, what: &str, ok: impl Fn(&StorageError) -> bool) {
    match open_and_read_all(vfs) {
        Err(e) if ok(&e) => {}
        Err(e) => panic!("{what}: unexpected error kind {e:?}"),
        Ok(()) => panic!("{what}: opened and read without error"),
    }
}

fn valid_db_bytes(pages: usize) -> Vec<u8> {
    let mut db = vec![0u8; pages * PS];
    init_header(&mut db[..PS], PS as u32);
    db[28..32].copy_from_slice(&(pages as u32).to_be_bytes());
    db
}

#[test]
fn redo_from_log_is_applied() {
    let (disk, marks) = disk_with_log();
    let b = open(&disk).unwrap();
    let r = b.begin_read().unwrap();
    assert_eq!(r.page_count(), 12);
    for p in 2..=12u32 {
        assert_eq!(r.page(PageNo(p)).unwrap()[500], marks[p as usize - 1]);
    }
}

#[test]
fn header_damage_is_not_a_database() {
    let not_db = |e: &StorageError| matches!(e, StorageError::NotADatabase { .. });
    let vfs = SimVfs::new(2);
    vfs.put_file(DB, b"SQLite format 3\0short".to_vec());
    expect_err(&vfs, "file shorter than the header", not_db);

    let mut bad = valid_db_bytes(3);
    bad[0] = b's';
    vfs.put_file(DB, bad);
    expect_err(&vfs, "wrong magic", not_db);

    let mut bad = valid_db_bytes(3);
    bad[16..18].copy_from_slice(&1000u16.to_be_bytes());
    vfs.put_file(DB, bad);
    expect_err(&vfs, "page size not a power of two", not_db);

    let mut bad = valid_db_bytes(3);
    bad[20] = 255;
    bad[16..18].copy_from_slice(&512u16.to_be_bytes());
    vfs.put_file(DB, bad);
    expect_err(&vfs, "reserved bytes leave < 480 usable", not_db);

    let mut bad = valid_db_bytes(3);
    bad[21] = 63;
    vfs.put_file(DB, bad);
    expect_err(&vfs, "payload fraction", not_db);

    let mut bad = valid_db_bytes(3);
    bad[19] = 9;
    vfs.put_file(DB, bad);
    expect_err(&vfs, "read version", not_db);

    vfs.put_file(DB, vec![0xA5; 4096]);
    expect_err(&vfs, "random bytes", not_db);
}

#[test]
fn truncated_database_is_corrupt_on_read() {
    let corrupt = |e: &StorageError| matches!(e, StorageError::Corrupt { .. });
    let vfs = SimVfs::new(3);
    let mut db = valid_db_bytes(10);
    db.truncate(5 * PS + 100);
    vfs.put_file(DB, db);
    expect_err(&vfs, "header says 10 pages, file has 5.1", corrupt);

    let mut db = valid_db_bytes(2);
    db[28..32].copy_from_slice(&u32::MAX.to_be_bytes());
    vfs.put_file(DB, db);
    expect_err(&vfs, "huge page count", corrupt);
}

#[test]
fn empty_file_is_an_empty_database() {
    let vfs = SimVfs::new(4);
    vfs.put_file(DB, Vec::new());
    let b = open(&vfs).unwrap();
    assert_eq!(b.begin_read().unwrap().page_count(), 0);
}

#[test]
fn garbage_or_truncated_log_is_ignored_up_to_the_damage() {
    let (disk, marks) = disk_with_log();
    let log = disk.file_bytes(LOG).unwrap();
    // Garbage instead of a log: nothing to redo, the checkpointed state opens.
    let vfs = disk.fork();
    vfs.put_file(LOG, (0..log.len()).map(|i| (i * 31 % 251) as u8).collect());
    let b = open(&vfs).unwrap();
    let r = b.begin_read().unwrap();
    assert_eq!(r.page(PageNo(5)).unwrap()[500], 5);
    drop((r, b));
    // Every truncation point opens to the state of some commit (atomic prefix).
    for cut in (0..log.len()).step_by(7) {
        let vfs = disk.fork();
        vfs.put_file(LOG, log[..cut].to_vec());
        let b = open(&vfs).unwrap_or_else(|e| panic!("cut {cut}: {e}"));
        let r = b.begin_read().unwrap();
        let v2 = r.page(PageNo(2)).unwrap()[500];
        let round = v2.wrapping_sub(102);
        assert!(v2 == 2 || round < 3, "cut {cut}: page 2 holds {v2}");
        for p in 3..=12u32 {
            let want = if v2 == 2 {
                p as u8
            } else {
                100 + round + p as u8
            };
            assert_eq!(
                r.page(PageNo(p)).unwrap()[500],
                want,
                "cut {cut}, page {p}: torn commit"
            );
        }
    }
    let full = disk.fork();
    let b = open(&full).unwrap();
    assert_eq!(
        b.begin_read().unwrap().page(PageNo(12)).unwrap()[500],
        marks[11]
    );
}

#[test]
fn log_with_valid_checksum_but_bad_body_is_corrupt() {
    use parlite_storage::log::format::{encode_frame, LogHeader, PageDelta, Run};
    let vfs = SimVfs::new(5);
    vfs.put_file(DB, valid_db_bytes(2));
    let h = LogHeader {
        page_size: PS as u32,
        salt: 9,
        base_seq: 0,
    };
    let mut log = h.encode().to_vec();
    let pages = vec![PageDelta {
        pgno: PageNo(7),
        runs: vec![Run {
            offset: 0,
            bytes: vec![1; 8],
        }],
    }];
    let (frame, _) = encode_frame(9, 1, 2, &pages, h.chain_seed());
    log.extend_from_slice(&frame);
    vfs.put_file(LOG, log);
    expect_err(&vfs, "frame names a page past its page count", |e| {
        matches!(e, StorageError::Corrupt { .. })
    });

    // A log whose page size disagrees with the database header.
    let vfs = SimVfs::new(6);
    vfs.put_file(DB, valid_db_bytes(2));
    let h = LogHeader {
        page_size: 4096,
        salt: 9,
        base_seq: 0,
    };
    let mut log = h.encode().to_vec();
    let pages = vec![PageDelta {
        pgno: PageNo(2),
        runs: vec![Run {
            offset: 0,
            bytes: vec![1; 8],
        }],
    }];
    log.extend_from_slice(&encode_frame(9, 1, 2, &pages, h.chain_seed()).0);
    vfs.put_file(LOG, log);
    expect_err(&vfs, "log page size differs", |e| {
        matches!(e, StorageError::Corrupt { .. })
    });
}

#[test]
fn foreign_wal_or_hot_journal_is_refused() {
    let cant_open = |e: &StorageError| matches!(e, StorageError::CantOpen { .. });
    let vfs = SimVfs::new(7);
    vfs.put_file(DB, valid_db_bytes(2));
    vfs.put_file("c.db-wal", vec![1; 64]);
    expect_err(&vfs, "non-empty -wal", cant_open);
    vfs.put_file("c.db-wal", Vec::new());
    open_and_read_all(&vfs).unwrap();
    vfs.put_file("c.db-journal", vec![0xd9; 512]);
    expect_err(&vfs, "hot -journal", cant_open);
    vfs.put_file("c.db-journal", vec![0; 512]);
    open_and_read_all(&vfs).unwrap();
}

#[test]
fn fuzzed_files_never_panic_or_hang() {
    let (disk, _) = disk_with_log();
    let n: u64 = if std::env::var("PARLITE_LONG").is_ok() {
        5_000
    } else {
        1_000
    };
    let seeds: Vec<u64> = match std::env::var("PARLITE_SEED") {
        Ok(s) => vec![s.parse().expect("PARLITE_SEED must be a number")],
        Err(_) => (0..n).collect(),
    };
    let mut errors = 0;
    for seed in seeds {
        let mut rng = StdRng::seed_from_u64(seed);
        let vfs = disk.fork();
        for name in [DB, LOG] {
            let mut bytes = vfs.file_bytes(name).unwrap();
            match rng.gen_range(0..4) {
                0 => {
                    let cut = rng.gen_range(0..=bytes.len());
                    bytes.truncate(cut);
                }
                1 => {
                    for _ in 0..rng.gen_range(1..20) {
                        let i = rng.gen_range(0..bytes.len().max(1));
                        if let Some(b) = bytes.get_mut(i) {
                            *b = rng.gen();
                        }
                    }
                }
                2 => {
                    // Damage a header field the reader trusts (offsets 16..32, 92..100).
                    let i = [16, 17, 18, 19, 20, 21, 28, 29, 30, 31, 92][rng.gen_range(0..11)];
                    if let Some(b) = bytes.get_mut(i) {
                        *b = rng.gen();
                    }
                }
                _ => {}
            }
            vfs.put_file(name, bytes);
        }
        let v = vfs.clone();
        if within_time(format!("seed {seed}"), move || open_and_read_all(&v)).is_err() {
            errors += 1;
        }
    }
    println!("{errors} of the fuzzed cases returned an error (the rest opened and read)");
}

#[test]
fn stale_empty_log_of_another_page_size_is_ignored() {
    use parlite_storage::log::format::LogHeader;
    let vfs = SimVfs::new(8);
    vfs.put_file(DB, valid_db_bytes(2));
    vfs.put_file(
        LOG,
        LogHeader {
            page_size: 4096,
            salt: 3,
            base_seq: 9,
        }
        .encode()
        .to_vec(),
    );
    let b = open(&vfs).unwrap();
    assert_eq!(b.begin_read().unwrap().page_count(), 2);
    // The log was restarted for this database's page size.
    let log = vfs.file_bytes(LOG).unwrap();
    assert_eq!(LogHeader::parse(&log).unwrap().page_size, PS as u32);
}
