//! `bdb_update`: the Berkeley DB SQL white paper's concurrent single-row updates
//! (shared/bench/bdb_update.c).
//!
//! `test(id INTEGER PRIMARY KEY, x INTEGER, pad BLOB)`, ROWS rows of about one 4 KiB page
//! each (`pad = randomblob(3900)`). N threads, one connection each, loop for S seconds:
//! `BEGIN IMMEDIATE; UPDATE test SET x=random() WHERE id=?; COMMIT` on a uniform random id.
//! A COMMIT answered exactly `SQLITE_BUSY` is retried; any other retryable answer rolls back
//! and counts in `retries` (`conflicts` when the engine lost the whole transaction).
//! Headline figure: committed tps (commits finished before the deadline / S).

use super::{check_db, cleanup, fsync_fields, run_point, sqlite_check, Ctx, Outcome, Rnd};
use crate::engine::{DbError, Kind, Target};
use crate::report::{quantile, CpuSnap, Line};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

pub struct Opts {
    pub threads: Vec<usize>,
    pub seconds: f64,
    pub sync: String,
    pub rows: i64,
    pub pad: i64,
    /// immediate | concurrent | deferred
    pub begin: String,
}

#[derive(Default)]
struct ThreadStats {
    commits: u64,
    late: u64,
    retries: u64,
    conflicts: u64,
    errors: u64,
    first_error: Option<String>,
    lat_ms: Vec<f64>,
}

fn begin_sql(mode: &str) -> &'static str {
    match mode {
        "concurrent" => "BEGIN CONCURRENT",
        "deferred" => "BEGIN DEFERRED",
        _ => "BEGIN IMMEDIATE",
    }
}

pub fn run(ctx: &mut Ctx, o: &Opts) {
    for &n in &o.threads {
        let mut head = Line::new();
        head.kv("workload", "bdb_update")
            .kv("threads", n)
            .kv("journal", &ctx.journal)
            .kv("sync", &o.sync)
            .kv("fs", ctx.fs())
            .kv("secs", format!("{:.1}", o.seconds))
            .kv("rows", o.rows);
        let variant = format!("begin={}", o.begin);
        run_point(ctx, &head, &variant, "tps", true, &mut |ctx, kind| {
            point(ctx, o, kind, n)
        });
    }
}

fn point(ctx: &mut Ctx, o: &Opts, kind: Kind, n: usize) -> Result<Outcome, DbError> {
    let path = ctx.db_path("bdb_update", kind);
    cleanup(ctx, &path);
    let settings = ctx.settings(&o.sync);
    // Stock SQLite has no BEGIN CONCURRENT: it runs its best equivalent, BEGIN IMMEDIATE.
    let (begin_mode, note) = if kind == Kind::Sqlite && o.begin == "concurrent" {
        (
            "immediate",
            Some("stock SQLite has no BEGIN CONCURRENT; ran BEGIN IMMEDIATE"),
        )
    } else {
        (o.begin.as_str(), None)
    };

    let t_setup = Instant::now();
    let target = Target::open(kind, &path, ctx.memory)?;
    let journal_got;
    {
        let (conn, j) = target.connect(&settings)?;
        journal_got = j;
        conn.exec("CREATE TABLE test(id INTEGER PRIMARY KEY, x INTEGER, pad BLOB)")?;
        conn.exec("BEGIN")?;
        let mut ins = conn.prepare("INSERT INTO test VALUES(?, random(), randomblob(?))")?;
        for i in 1..=o.rows {
            ins.bind_int(1, i)?;
            ins.bind_int(2, o.pad)?;
            ins.run()?;
        }
        drop(ins);
        conn.exec("COMMIT")?;
        if ctx.journal == "wal" {
            conn.exec("PRAGMA wal_checkpoint(TRUNCATE)")?;
        }
        // B2: an engine that rejects the begin mode says so once, instead of spinning.
        conn.exec(begin_sql(begin_mode))?;
        conn.exec("ROLLBACK")?;
    }
    let setup_s = t_setup.elapsed().as_secs_f64();

    let barrier = Barrier::new(n + 1);
    let deadline: Mutex<Option<Instant>> = Mutex::new(None);
    let fs_before = ctx.fsyncs_now();
    let mut cpu0 = CpuSnap::take();
    let mut l1 = 0.0;
    let results: Vec<Result<ThreadStats, DbError>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|id| {
                let (target, settings, barrier, deadline) =
                    (&target, &settings, &barrier, &deadline);
                s.spawn(move || worker(target, settings, barrier, deadline, id, o, begin_mode))
            })
            .collect();
        barrier.wait(); // all connections open (or failed)
        l1 = crate::report::load1();
        cpu0 = CpuSnap::take();
        if let Ok(mut d) = deadline.lock() {
            *d = Some(Instant::now() + Duration::from_secs_f64(o.seconds));
        }
        barrier.wait();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(DbError {
                        code: 1,
                        extended: 1,
                        message: "worker thread panicked".into(),
                    })
                })
            })
            .collect()
    });
    let cpu1 = CpuSnap::take();
    let fs_after = ctx.fsyncs_now();

    let mut stats = Vec::with_capacity(n);
    for r in results {
        stats.push(r?);
    }
    let commits: u64 = stats.iter().map(|t| t.commits).sum();
    let mut lat: Vec<f64> = stats
        .iter()
        .flat_map(|t| t.lat_ms.iter().copied())
        .collect();
    lat.sort_by(|a, b| a.total_cmp(b));
    let sum = |f: fn(&ThreadStats) -> u64| stats.iter().map(f).sum::<u64>();
    let errors = sum(|t| t.errors);
    let first_error = stats.iter().find_map(|t| t.first_error.clone());

    let check = check_db(&target, &settings, "SELECT count(*) FROM test", o.rows)?;
    let lib = target.lib();
    let pstats = target.parlite_stats();
    drop(target);
    let sqlite_check = sqlite_check(ctx, kind, &path, "SELECT count(*) FROM test", o.rows);
    cleanup(ctx, &path);

    let tps = commits as f64 / o.seconds;
    let mut line = Line::new();
    line.kv("journal_got", journal_got)
        .kv("busy", format!("timeout{}", ctx.busy_timeout_ms))
        .kv("begin", begin_mode)
        .kv("commits", commits)
        .kv("tps", format!("{tps:.1}"))
        .kv("retries", sum(|t| t.retries))
        .kv("conflicts", sum(|t| t.conflicts))
        .kv("errors", errors)
        .kv("late", sum(|t| t.late))
        .kv("p50_ms", format!("{:.2}", quantile(&lat, 0.5)))
        .kv("p99_ms", format!("{:.2}", quantile(&lat, 0.99)))
        .kv(
            "max_ms",
            format!("{:.1}", lat.last().copied().unwrap_or(0.0)),
        )
        .kv(
            "thr_min",
            stats.iter().map(|t| t.commits).min().unwrap_or(0),
        )
        .kv(
            "thr_max",
            stats.iter().map(|t| t.commits).max().unwrap_or(0),
        );
    fsync_fields(&mut line, &o.sync, fs_before, fs_after, commits);
    if let Some(p) = pstats {
        line.kvs(&p);
    }
    line.kv("check", check.label())
        .kv("sqlite_check", sqlite_check)
        .kv("setup_s", format!("{setup_s:.1}"))
        .kv("load1", format!("{l1:.2}"));
    cpu0.report(&cpu1, &mut line);
    line.kv(
        "cpu_us_per_commit",
        format!(
            "{:.1}",
            cpu0.self_cpu_s(&cpu1) * 1e6 / commits.max(1) as f64
        ),
    );
    line.kv("lib", lib);
    if let Some(n) = note {
        line.kv("note", n);
    }
    if let Some(e) = first_error {
        line.kv("first_error", e);
    }
    Ok(Outcome {
        line,
        value: tps,
        check,
    })
}

fn worker(
    target: &Target,
    settings: &crate::engine::Settings,
    barrier: &Barrier,
    deadline: &Mutex<Option<Instant>>,
    id: usize,
    o: &Opts,
    begin_mode: &str,
) -> Result<ThreadStats, DbError> {
    let mut t = ThreadStats::default();
    let mut seed = Rnd(0x9E37_79B9_7F4A_7C15u64.wrapping_mul(id as u64 + 1));
    // Open before the barrier; a failure still reaches both barriers so main never hangs.
    let conn = match target.connect(settings) {
        Ok((c, _)) => c,
        Err(e) => {
            barrier.wait();
            barrier.wait();
            return Err(e);
        }
    };
    let prepared = (|| {
        Ok::<_, DbError>((
            conn.prepare(begin_sql(begin_mode))?,
            conn.prepare("UPDATE test SET x=random() WHERE id=?")?,
            conn.prepare("COMMIT")?,
            conn.prepare("ROLLBACK")?,
        ))
    })();
    barrier.wait();
    barrier.wait();
    let (mut begin, mut upd, mut commit, mut rollback) = prepared?;
    let end = deadline
        .lock()
        .ok()
        .and_then(|d| *d)
        .unwrap_or_else(Instant::now);
    let note_err = |t: &mut ThreadStats, e: &DbError| {
        t.errors += 1;
        if t.first_error.is_none() {
            t.first_error = Some(e.to_string());
        }
    };

    'outer: while Instant::now() < end {
        let t0 = Instant::now();
        loop {
            match begin.run() {
                Ok(()) => break,
                Err(e) if e.is_retry() => {
                    t.retries += 1;
                    if Instant::now() >= end {
                        break 'outer;
                    }
                }
                Err(e) => {
                    note_err(&mut t, &e);
                    continue 'outer;
                }
            }
        }
        let id = 1 + (seed.next() % o.rows as u64) as i64;
        if let Err(e) = upd.bind_int(1, id).and_then(|_| upd.run()) {
            if e.is_retry() {
                t.retries += 1;
                t.conflicts += u64::from(e.is_conflict());
            } else {
                note_err(&mut t, &e);
            }
            let _ = rollback.run();
            continue;
        }
        let committed = loop {
            match commit.run() {
                Ok(()) => break Ok(()),
                // The lock was not got: COMMIT may be retried.
                Err(e) if e.is_plain_busy() => t.retries += 1,
                Err(e) => break Err(e),
            }
        };
        if let Err(e) = committed {
            if e.is_retry() {
                t.retries += 1;
                t.conflicts += u64::from(e.is_conflict());
            } else {
                note_err(&mut t, &e);
            }
            let _ = rollback.run();
            continue;
        }
        let t1 = Instant::now();
        if t1 <= end {
            t.commits += 1;
            t.lat_ms.push(t1.duration_since(t0).as_secs_f64() * 1e3);
        } else {
            t.late += 1;
        }
    }
    Ok(t)
}
