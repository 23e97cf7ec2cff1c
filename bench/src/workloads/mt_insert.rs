//! `mt_insert`: CodeProject "More SQLite multi-threading" (shared/bench/mt_insert.c).
//!
//! `log(t REAL, counter INTEGER, thread_id INTEGER, retries INTEGER)`. N threads (8), own
//! connection each, insert ROWS (1,000) rows each: one autocommit INSERT per row, or with
//! `--batch` all of a thread's rows inside one `BEGIN IMMEDIATE ... COMMIT`. A retryable
//! answer that reaches the app is retried (the statement in autocommit mode; the whole
//! transaction in batch mode). Headline figure: wall time (lower is better).

use super::{check_db, cleanup, fsync_fields, run_point, sqlite_check, Ctx, Outcome};
use crate::engine::{DbError, Kind, Settings, Target};
use crate::report::{CpuSnap, Line};
use std::sync::Barrier;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

pub struct Opts {
    pub threads: Vec<usize>,
    pub rows_per_thread: i64,
    pub batch: bool,
    pub sync: String,
}

#[derive(Default)]
struct ThreadStats {
    retries: u64,
    errors: u64,
    done: u64,
    first_error: Option<String>,
    end: Option<Instant>,
}

pub fn run(ctx: &mut Ctx, o: &Opts) {
    for &n in &o.threads {
        let mut head = Line::new();
        head.kv("workload", "mt_insert")
            .kv("threads", n)
            .kv("rows_per_thread", o.rows_per_thread)
            .kv("mode", if o.batch { "txn" } else { "autocommit" })
            .kv("journal", &ctx.journal)
            .kv("sync", &o.sync)
            .kv("fs", ctx.fs());
        let variant = if o.batch {
            "mode=txn"
        } else {
            "mode=autocommit"
        };
        run_point(ctx, &head, variant, "wall_ms", false, &mut |ctx, kind| {
            point(ctx, o, kind, n)
        });
    }
}

fn point(ctx: &mut Ctx, o: &Opts, kind: Kind, n: usize) -> Result<Outcome, DbError> {
    let path = ctx.db_path("mt_insert", kind);
    cleanup(ctx, &path);
    let settings = ctx.settings(&o.sync);
    let target = Target::open(kind, &path, ctx.memory)?;
    let journal_got = {
        let (conn, j) = target.connect(&settings)?;
        conn.exec("CREATE TABLE log(t REAL, counter INTEGER, thread_id INTEGER, retries INTEGER)")?;
        j
    };

    let barrier = Barrier::new(n + 1);
    let l1 = crate::report::load1();
    let fs_before = ctx.fsyncs_now();
    let cpu0 = CpuSnap::take();
    let t0 = Instant::now(); // no thread can start before main reaches the barrier
    let results: Vec<Result<ThreadStats, DbError>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|id| {
                let (target, settings, barrier) = (&target, &settings, &barrier);
                s.spawn(move || worker(target, settings, barrier, id, o))
            })
            .collect();
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
    let wall = t0.elapsed().as_secs_f64();
    let cpu1 = CpuSnap::take();
    let fs_after = ctx.fsyncs_now();
    let mut stats = Vec::with_capacity(n);
    for r in results {
        stats.push(r?);
    }
    let done: u64 = stats.iter().map(|t| t.done).sum();
    let retries: u64 = stats.iter().map(|t| t.retries).sum();
    let errors: u64 = stats.iter().map(|t| t.errors).sum();
    let first_done = stats
        .iter()
        .filter_map(|t| t.end)
        .min()
        .map(|e| e.duration_since(t0).as_secs_f64() * 1e3)
        .unwrap_or(0.0);
    let want = n as i64 * o.rows_per_thread;
    let check = check_db(&target, &settings, "SELECT count(*) FROM log", want)?;
    let (rows, max_row_retries) = {
        let (conn, _) = target.connect(&settings)?;
        let rows = conn.query_i64("SELECT count(*) FROM log")?.unwrap_or(-1);
        let maxr = conn
            .query_i64("SELECT coalesce(max(retries),0) FROM log")?
            .unwrap_or(-1);
        (rows, maxr)
    };
    let lib = target.lib();
    let pstats = target.parlite_stats();
    drop(target);
    let sqlite_check = sqlite_check(ctx, kind, &path, "SELECT count(*) FROM log", want);
    cleanup(ctx, &path);

    let commits = if o.batch { n as u64 } else { done };
    let wall_ms = wall * 1e3;
    let mut line = Line::new();
    line.kv("journal_got", journal_got)
        .kv("busy", format!("timeout{}", ctx.busy_timeout_ms))
        .kv("wall_ms", format!("{wall_ms:.1}"))
        .kv("rows_per_s", format!("{:.1}", done as f64 / wall.max(1e-9)))
        .kv("first_thread_done_ms", format!("{first_done:.1}"))
        .kv("retries", retries)
        .kv("max_row_retries", max_row_retries)
        .kv("errors", errors)
        .kv("rows", rows);
    fsync_fields(&mut line, &o.sync, fs_before, fs_after, commits);
    if let Some(p) = pstats {
        line.kvs(&p);
    }
    line.kv("check", check.label())
        .kv("sqlite_check", sqlite_check)
        .kv("load1", format!("{l1:.2}"));
    cpu0.report(&cpu1, &mut line);
    line.kv("lib", lib);
    if let Some(e) = stats.iter().find_map(|t| t.first_error.clone()) {
        line.kv("first_error", e);
    }
    Ok(Outcome {
        line,
        value: wall_ms,
        check,
    })
}

fn wall_clock() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

fn worker(
    target: &Target,
    settings: &Settings,
    barrier: &Barrier,
    id: usize,
    o: &Opts,
) -> Result<ThreadStats, DbError> {
    let mut t = ThreadStats::default();
    let conn = match target.connect(settings) {
        Ok((c, _)) => c,
        Err(e) => {
            barrier.wait();
            return Err(e);
        }
    };
    let prepared = (|| {
        Ok::<_, DbError>((
            conn.prepare("INSERT INTO log(t, counter, thread_id, retries) VALUES(?,?,?,?)")?,
            conn.prepare("BEGIN IMMEDIATE")?,
            conn.prepare("COMMIT")?,
            conn.prepare("ROLLBACK")?,
        ))
    })();
    barrier.wait();
    let (mut ins, mut begin, mut commit, mut rollback) = prepared?;
    let note_err = |t: &mut ThreadStats, e: &DbError| {
        t.errors += 1;
        if t.first_error.is_none() {
            t.first_error = Some(e.to_string());
        }
    };

    // `--busy-timeout-ms 0` (mt_insert.c `-t 0`): no busy timeout; the app retries at once
    // after yielding the CPU.
    let no_timeout = settings.busy_timeout_ms == 0;
    'again: loop {
        if o.batch {
            loop {
                match begin.run() {
                    Ok(()) => break,
                    Err(e) if e.is_retry() => {
                        t.retries += 1;
                        if no_timeout {
                            std::thread::yield_now();
                        }
                    }
                    Err(e) => {
                        note_err(&mut t, &e);
                        break 'again;
                    }
                }
            }
        }
        let mut done = 0u64;
        for i in 0..o.rows_per_thread {
            let r0 = t.retries;
            let rc = loop {
                let r = ins
                    .bind_real(1, wall_clock())
                    .and_then(|_| ins.bind_int(2, i))
                    .and_then(|_| ins.bind_int(3, id as i64))
                    .and_then(|_| ins.bind_int(4, (t.retries - r0) as i64))
                    .and_then(|_| ins.run());
                match r {
                    Err(e) if e.is_retry() => {
                        t.retries += 1;
                        if o.batch {
                            let _ = rollback.run();
                            continue 'again;
                        }
                        if no_timeout {
                            std::thread::yield_now();
                        }
                    }
                    other => break other,
                }
            };
            match rc {
                Ok(()) => done += 1,
                Err(e) => note_err(&mut t, &e),
            }
        }
        if o.batch {
            let rc = loop {
                match commit.run() {
                    Err(e) if e.is_plain_busy() => t.retries += 1,
                    other => break other,
                }
            };
            match rc {
                Ok(()) => {}
                Err(e) if e.is_retry() => {
                    t.retries += 1;
                    let _ = rollback.run();
                    continue 'again;
                }
                Err(e) => {
                    note_err(&mut t, &e);
                    done = 0;
                }
            }
        }
        t.done += done;
        break;
    }
    t.end = Some(Instant::now());
    Ok(t)
}
