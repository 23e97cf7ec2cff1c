//! Storage-level `bdb_update`: N threads, each committing concurrent transactions that read
//! one random row and rewrite it with a fresh ~4 KiB record, on a file database with
//! `synchronous=OFF`. Prints, per thread count, commits per second, the writer lock's hold
//! time (the commit path's serial section) as a fraction of wall time and per commit, the
//! process CPU time per commit, and how commits went (fast path, rebased outside the lock,
//! replayed under it; conflicts). No SQL layer: what it measures is the storage's share.
//!
//! `cargo run --release -p parlite-storage --example conc_update -- [threads,..] [seconds | Nc] [rows] [nockpt]`
//! (`Nc`: N commits per thread instead of a time, for `perf stat -e instructions`).

use parlite_storage::record::{encode, ValueRef};
use parlite_storage::{
    BtreeKind, Database, OpenOptions, OsVfs, PageNo, PagerConfig, SeekOp, StorageError, Synchronous,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const PAD_BYTES: usize = 3900;

fn cpu_time() -> Duration {
    // SAFETY: getrusage writes into the zeroed struct we pass; RUSAGE_SELF is valid.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let t = |tv: libc::timeval| Duration::new(tv.tv_sec as u64, tv.tv_usec as u32 * 1000);
    t(ru.ru_utime) + t(ru.ru_stime)
}

fn row(rng: &mut StdRng, id: i64) -> Vec<u8> {
    let mut pad = vec![0u8; PAD_BYTES];
    rng.fill(&mut pad[..]);
    encode(&[ValueRef::Integer(id), ValueRef::Blob(&pad)])
}

fn main() -> parlite_storage::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let threads: Vec<usize> = args
        .first()
        .map(|s| s.split(',').filter_map(|t| t.parse().ok()).collect())
        .unwrap_or_else(|| vec![1, 2]);
    // "3": seconds per point; "20000c": that many commits per thread (for instruction counts).
    let span = args.get(1).map_or("3", String::as_str);
    let (seconds, per_thread) = match span.strip_suffix('c') {
        Some(n) => (f64::INFINITY, n.parse().unwrap_or(10_000u64)),
        None => (span.parse().unwrap_or(3.0), u64::MAX),
    };
    let rows: i64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(10_000);
    // "nockpt": no automatic checkpoint during the timed part (its page writes and fsync
    // run under the writer lock), to see the commit path's own share of the lock.
    let no_checkpoint = args.get(3).is_some_and(|a| a == "nockpt");
    let dir = tempfile::tempdir().map_err(|e| StorageError::misuse(e.to_string()))?;
    for &n in &threads {
        let path = dir.path().join(format!("t{n}.db"));
        let mut opts = OpenOptions {
            synchronous: Synchronous::Off,
            ..OpenOptions::default()
        };
        let mut config = PagerConfig::default();
        if no_checkpoint {
            opts.cache_pages_max = 1 << 20;
            config.checkpoint_log_bytes = 1 << 40;
            config.checkpoint_dirty_percent = 100;
            config.backpressure_dirty_percent = 200;
        }
        let path = path
            .to_str()
            .ok_or_else(|| StorageError::misuse("path not UTF-8"))?;
        let db = Database::open_with_config(Arc::new(OsVfs), path, opts, config)?;
        let mut rng = StdRng::seed_from_u64(1);
        let w = db.begin_write(Duration::from_secs(5))?;
        let root = w.create_btree(BtreeKind::Table)?;
        for id in 1..=rows {
            w.table_insert(root, id, &row(&mut rng, id))?;
        }
        w.commit()?;
        db.checkpoint()?;
        let (s0, c0, cpu0) = (db.stats(), db.concurrency_stats(), cpu_time());
        let stop = Arc::new(AtomicBool::new(false));
        let conflicts = Arc::new(AtomicU64::new(0));
        let start = Instant::now();
        let handles: Vec<_> = (0..n)
            .map(|t| {
                let (db, stop, conflicts) = (db.clone(), stop.clone(), conflicts.clone());
                std::thread::spawn(move || -> parlite_storage::Result<u64> {
                    let mut rng = StdRng::seed_from_u64(100 + t as u64);
                    let mut done = 0;
                    while !stop.load(Ordering::Relaxed) && done < per_thread {
                        let id = rng.gen_range(1..=rows);
                        let rec = row(&mut rng, id);
                        match update(&db, root, id, &rec) {
                            Ok(()) => done += 1,
                            Err(StorageError::Conflict { .. }) => {
                                conflicts.fetch_add(1, Ordering::Relaxed);
                            }
                            Err(e) => return Err(e),
                        }
                    }
                    Ok(done)
                })
            })
            .collect();
        if seconds.is_finite() {
            std::thread::sleep(Duration::from_secs_f64(seconds));
            stop.store(true, Ordering::Relaxed);
        }
        let mut commits = 0;
        for h in handles {
            commits += h
                .join()
                .map_err(|_| StorageError::misuse("worker panicked"))??;
        }
        let wall = start.elapsed();
        let (s1, c1, cpu1) = (db.stats(), db.concurrency_stats(), cpu_time());
        let held_ns = s1.writer_lock_held_ns - s0.writer_lock_held_ns;
        let fast = c1.concurrent_fast_commits - c0.concurrent_fast_commits;
        let rebased = c1.concurrent_rebased_commits - c0.concurrent_rebased_commits;
        let all = c1.concurrent_commits - c0.concurrent_commits;
        println!(
            "threads={n} commits={commits} tps={:.0} lock_held_frac={:.3} lock_held_us_per_commit={:.2} \
             cpu_us_per_commit={:.1} fast={fast} rebased={rebased} replayed_locked={} conflicts={} \
             checkpoints={} load1={}",
            commits as f64 / wall.as_secs_f64(),
            held_ns as f64 / wall.as_nanos() as f64,
            held_ns as f64 / 1000.0 / commits.max(1) as f64,
            (cpu1 - cpu0).as_secs_f64() * 1e6 / commits.max(1) as f64,
            all - fast - rebased,
            conflicts.load(Ordering::Relaxed),
            s1.checkpoints - s0.checkpoints,
            std::fs::read_to_string("/proc/loadavg")
                .ok()
                .and_then(|l| l.split_whitespace().next().map(str::to_string))
                .unwrap_or_default(),
        );
    }
    Ok(())
}

/// One transaction: read the row, write its new image, commit.
fn update(db: &Database, root: PageNo, id: i64, rec: &[u8]) -> parlite_storage::Result<()> {
    let t = db.begin_concurrent()?;
    let mut c = t.cursor(root, BtreeKind::Table, None)?;
    if !c.seek_rowid(id, SeekOp::Eq)? {
        return Err(StorageError::misuse("row missing"));
    }
    let _ = c.record()?;
    drop(c);
    t.table_insert(root, id, rec)?;
    t.commit()
}
