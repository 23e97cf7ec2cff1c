//! `hc_mixed`: hctree's "threadtest" mix as run by seddonm1/sqlite-bench
//! (shared/bench/hc_mixed.c).
//!
//! `tbl(a INTEGER PRIMARY KEY, b BLOB(200), c CHAR(64))`, ROWS (200,000) rows of
//! `randomblob(200)` and 64 random hex digits, indexes on `substr(c,1,16)` and
//! `substr(c,2,16)`. WAL, `synchronous=OFF` (or `--sync full` for the durable column),
//! `mmap_size=1e9`, `journal_size_limit=16 MiB` on both engines. N threads for S seconds;
//! each transaction runs NSCAN 10-row index scans (every row stepped, every column read) then
//! NUPDATE single-row updates, under `BEGIN IMMEDIATE` when it updates, else
//! `BEGIN DEFERRED` (or `--begin`). The whole transaction is retried with the same
//! parameters on a retryable answer. `--plain-columns` is the C program's `-P` schema
//! (`c1`/`c2` columns with ordinary indexes); every line says `schema=expr|cols`.
//!
//! The database is seeded once per engine per run and reused across points, as the C
//! program reuses it; after each point its row count and integrity are checked.

use super::{check_db, fsync_fields, Check, Ctx, Outcome, Rnd};
use crate::engine::{DbError, Kind, Settings, Target};
use crate::report::{quantile, CpuSnap, Line};
use std::collections::HashMap;
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

pub struct Opts {
    pub threads: Vec<usize>,
    pub seconds: f64,
    pub sync: String,
    pub rows: i64,
    /// (nupdate, nscan) pairs.
    pub mixes: Vec<(usize, usize)>,
    pub plain_columns: bool,
    pub begin: Option<String>,
}

#[derive(Default)]
struct ThreadStats {
    commits: u64,
    late: u64,
    retries: u64,
    conflicts: u64,
    errors: u64,
    scan_rows: u64,
    first_error: Option<String>,
    lat_ms: Vec<f64>,
}

fn extra_pragmas(ctx: &Ctx, sync: &str) -> Settings {
    let mut s = ctx.settings(sync);
    let mut extra = vec![
        "PRAGMA mmap_size=1000000000".to_string(),
        "PRAGMA journal_size_limit=16777216".to_string(),
    ];
    extra.append(&mut s.extra_sql);
    s.extra_sql = extra;
    s
}

pub fn run(ctx: &mut Ctx, o: &Opts) {
    let schema = if o.plain_columns { "cols" } else { "expr" };
    let settings = extra_pragmas(ctx, &o.sync);
    // One seeded database per engine, kept for the whole run (None: seeding failed).
    let mut seeded: HashMap<&'static str, Result<(Target, f64), DbError>> = HashMap::new();
    for &(nupd, nscan) in &o.mixes {
        for &n in &o.threads {
            let mut head = Line::new();
            head.kv("workload", "hc_mixed")
                .kv("threads", n)
                .kv("nupdate", nupd)
                .kv("nscan", nscan)
                .kv("journal", &ctx.journal)
                .kv("sync", &o.sync)
                .kv("fs", ctx.fs())
                .kv("secs", format!("{:.1}", o.seconds))
                .kv("rows", o.rows)
                .kv("schema", schema);
            let variant = format!("u{nupd}c{nscan} schema={schema}");
            super::run_point(ctx, &head, &variant, "tps", true, &mut |ctx, kind| {
                let entry = seeded
                    .entry(kind.name())
                    .or_insert_with(|| seed(ctx, o, kind, &settings));
                match entry {
                    Ok((target, seed_s)) => {
                        point(ctx, o, target, *seed_s, &settings, n, nupd, nscan)
                    }
                    Err(e) if !o.plain_columns && e.message.contains("expression") => {
                        let mut e = e.clone();
                        e.message
                            .push_str(" (try --plain-columns: the C program's -P schema)");
                        Err(e)
                    }
                    Err(e) => Err(e.clone()),
                }
            });
        }
    }
    for (kind, r) in seeded {
        let was_open = r.is_ok();
        drop(r);
        let k = if kind == "parlite" {
            Kind::Parlite
        } else {
            Kind::Sqlite
        };
        let path = ctx.db_path(db_name(o), k);
        if was_open && k == Kind::Parlite && !ctx.memory {
            let verdict = super::sqlite_check(ctx, k, &path, "SELECT count(*) FROM tbl", o.rows);
            let mut line = Line::new();
            line.kv("workload", "hc_mixed")
                .kv("engine", "parlite")
                .kv("after", "all_points")
                .kv("schema", schema)
                .kv("sqlite_check", verdict);
            println!("{}", line.render());
        }
        super::cleanup(ctx, &path);
    }
}

fn db_name(o: &Opts) -> &'static str {
    if o.plain_columns {
        "hc_mixed_cols"
    } else {
        "hc_mixed"
    }
}

fn seed(ctx: &Ctx, o: &Opts, kind: Kind, settings: &Settings) -> Result<(Target, f64), DbError> {
    let t = Instant::now();
    let path = ctx.db_path(db_name(o), kind);
    super::cleanup(ctx, &path);
    let target = Target::open(kind, &path, ctx.memory)?;
    let (conn, _) = target.connect(settings)?;
    let cols = o.plain_columns;
    conn.exec(if cols {
        "CREATE TABLE tbl(a INTEGER PRIMARY KEY, b BLOB(200), c CHAR(64), c1 TEXT, c2 TEXT)"
    } else {
        "CREATE TABLE tbl(a INTEGER PRIMARY KEY, b BLOB(200), c CHAR(64))"
    })?;
    let mut ins = conn.prepare(if cols {
        "INSERT INTO tbl VALUES(?1, randomblob(200), ?2, substr(?2,1,16), substr(?2,2,16))"
    } else {
        "INSERT INTO tbl VALUES(?1, randomblob(200), ?2)"
    })?;
    let mut rnd = Rnd(0x243F_6A88_85A3_08D3);
    conn.exec("BEGIN")?;
    for i in 1..=o.rows {
        let hex = rnd.hex(64);
        ins.bind_int(1, i)?;
        ins.bind_text(2, &hex)?;
        ins.run()?;
    }
    drop(ins);
    conn.exec("COMMIT")?;
    conn.exec(if cols {
        "CREATE INDEX tbl_i1 ON tbl(c1)"
    } else {
        "CREATE INDEX tbl_i1 ON tbl(substr(c,1,16))"
    })?;
    conn.exec(if cols {
        "CREATE INDEX tbl_i2 ON tbl(c2)"
    } else {
        "CREATE INDEX tbl_i2 ON tbl(substr(c,2,16))"
    })?;
    conn.exec("PRAGMA wal_checkpoint(TRUNCATE)")?;
    drop(conn);
    let secs = t.elapsed().as_secs_f64();
    eprintln!(
        "hc_mixed: {} seeded {} rows in {secs:.1} s",
        kind.name(),
        o.rows
    );
    Ok((target, secs))
}

#[allow(clippy::too_many_arguments)]
fn point(
    ctx: &mut Ctx,
    o: &Opts,
    target: &Target,
    seed_s: f64,
    settings: &Settings,
    n: usize,
    nupd: usize,
    nscan: usize,
) -> Result<Outcome, DbError> {
    let begin = match o.begin.as_deref() {
        Some("concurrent") if target.kind == Kind::Sqlite => "BEGIN IMMEDIATE",
        Some("concurrent") => "BEGIN CONCURRENT",
        Some("immediate") => "BEGIN IMMEDIATE",
        Some("deferred") => "BEGIN DEFERRED",
        _ if nupd > 0 => "BEGIN IMMEDIATE",
        _ => "BEGIN DEFERRED",
    };
    {
        // B2: an engine that rejects the begin mode says so once.
        let (conn, _) = target.connect(settings)?;
        conn.exec(begin)?;
        conn.exec("ROLLBACK")?;
    }
    let barrier = Barrier::new(n + 1);
    let deadline: Mutex<Option<Instant>> = Mutex::new(None);
    let fs_before = ctx.fsyncs_now();
    let lock0 = target.parlite_lock_counters();
    let mut cpu0 = CpuSnap::take();
    let mut l1 = 0.0;
    let results: Vec<Result<ThreadStats, DbError>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|id| {
                let (barrier, deadline) = (&barrier, &deadline);
                s.spawn(move || {
                    worker(
                        target, settings, barrier, deadline, id, o, begin, nupd, nscan,
                    )
                })
            })
            .collect();
        barrier.wait();
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
    let lock1 = target.parlite_lock_counters();
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
    let mut check = check_db(target, settings, "SELECT count(*) FROM tbl", o.rows)?;
    if check == Check::Ok {
        let (conn, _) = target.connect(settings)?;
        match conn.query_i64("SELECT max(a) FROM tbl")? {
            Some(m) if m == o.rows => {}
            got => check = Check::Failed(format!("max(a) = {got:?}, expected {}", o.rows)),
        }
    }

    let tps = commits as f64 / o.seconds;
    let mut line = Line::new();
    line.kv("busy", format!("timeout{}", ctx.busy_timeout_ms))
        .kv(
            "begin",
            begin.trim_start_matches("BEGIN ").to_ascii_lowercase(),
        )
        .kv("commits", commits)
        .kv("tps", format!("{tps:.1}"))
        .kv("retries", sum(|t| t.retries))
        .kv("conflicts", sum(|t| t.conflicts))
        .kv("errors", sum(|t| t.errors))
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
        )
        .kv("scan_rows", sum(|t| t.scan_rows));
    fsync_fields(&mut line, &o.sync, fs_before, fs_after, commits);
    if let (Some(l0), Some(l1)) = (lock0, lock1) {
        let d = |i: usize| l1[i].saturating_sub(l0[i]);
        line.kv("p_writer_waits", d(0))
            .kv("p_writer_wakes", d(1))
            .kv("p_writer_handoffs", d(2))
            .kv(
                "p_lock_held_us",
                format!("{:.2}", d(4) as f64 / d(3).max(1) as f64),
            );
    }
    line.kv("check", check.label())
        .kv("seed_s", format!("{seed_s:.1}"))
        .kv("load1", format!("{l1:.2}"));
    cpu0.report(&cpu1, &mut line);
    line.kv(
        "cpu_us_per_txn",
        format!(
            "{:.1}",
            cpu0.self_cpu_s(&cpu1) * 1e6 / commits.max(1) as f64
        ),
    );
    line.kv("lib", target.lib());
    if o.begin.as_deref() == Some("concurrent") && target.kind == Kind::Sqlite {
        line.kv(
            "note",
            "stock SQLite has no BEGIN CONCURRENT; ran BEGIN IMMEDIATE",
        );
    }
    if let Some(e) = stats.iter().find_map(|t| t.first_error.clone()) {
        line.kv("first_error", e);
    }
    Ok(Outcome {
        line,
        value: tps,
        check,
    })
}

#[allow(clippy::too_many_arguments)]
fn worker(
    target: &Target,
    settings: &Settings,
    barrier: &Barrier,
    deadline: &Mutex<Option<Instant>>,
    id: usize,
    o: &Opts,
    begin_sql: &str,
    nupd: usize,
    nscan: usize,
) -> Result<ThreadStats, DbError> {
    let mut t = ThreadStats::default();
    let mut rnd = Rnd(0x9E37_79B9_7F4A_7C15u64.wrapping_mul(id as u64 + 7));
    let conn = match target.connect(settings) {
        Ok((c, _)) => c,
        Err(e) => {
            barrier.wait();
            barrier.wait();
            return Err(e);
        }
    };
    let cols = o.plain_columns;
    let prepared = (|| {
        Ok::<_, DbError>((
            conn.prepare(if cols {
                "SELECT a, b, c FROM tbl WHERE c1>=? ORDER BY c1 LIMIT 10"
            } else {
                "SELECT * FROM tbl WHERE substr(c,1,16)>=? ORDER BY substr(c,1,16) LIMIT 10"
            })?,
            conn.prepare(if cols {
                "UPDATE tbl SET b=?1, c=?2, c1=substr(?2,1,16), c2=substr(?2,2,16) WHERE a=?3"
            } else {
                "UPDATE tbl SET b=?, c=? WHERE a=?"
            })?,
            conn.prepare(begin_sql)?,
            conn.prepare("COMMIT")?,
            conn.prepare("ROLLBACK")?,
        ))
    })();
    barrier.wait();
    barrier.wait();
    let (mut scan, mut upd, mut begin, mut commit, mut rollback) = prepared?;
    let end = deadline
        .lock()
        .ok()
        .and_then(|d| *d)
        .unwrap_or_else(Instant::now);
    let mut digest = crc32fast::Hasher::new();
    let mut skey = vec![String::new(); nscan];
    let mut uc = vec![String::new(); nupd];
    let mut ub = vec![[0u8; 200]; nupd];
    let mut ua = vec![0i64; nupd];

    'txn: while Instant::now() < end {
        // The transaction's parameters up front (as sqlite-bench does).
        for k in skey.iter_mut() {
            *k = rnd.hex(16);
        }
        for i in 0..nupd {
            for j in (0..200).step_by(8) {
                let r = rnd.next().to_ne_bytes();
                let m = (200 - j).min(8);
                ub[i][j..j + m].copy_from_slice(&r[..m]);
            }
            uc[i] = rnd.hex(64);
            ua[i] = 1 + (rnd.next() % o.rows as u64) as i64;
        }
        let t0 = Instant::now();
        loop {
            match begin.run() {
                Ok(()) => {}
                Err(e) if e.is_retry() => {
                    t.retries += 1;
                    if Instant::now() >= end {
                        break 'txn;
                    }
                    continue;
                }
                Err(e) => {
                    t.errors += 1;
                    t.first_error.get_or_insert_with(|| e.to_string());
                    continue 'txn;
                }
            }
            let mut rc: Result<(), DbError> = Ok(());
            for k in &skey {
                rc = scan
                    .bind_text(1, k)
                    .and_then(|_| scan.digest_rows(&mut digest))
                    .map(|rows| {
                        t.scan_rows += rows;
                    });
                if rc.is_err() {
                    break;
                }
            }
            if rc.is_ok() {
                for i in 0..nupd {
                    rc = upd
                        .bind_blob(1, &ub[i])
                        .and_then(|_| upd.bind_text(2, &uc[i]))
                        .and_then(|_| upd.bind_int(3, ua[i]))
                        .and_then(|_| upd.run());
                    if rc.is_err() {
                        break;
                    }
                }
            }
            if rc.is_ok() {
                rc = loop {
                    match commit.run() {
                        Err(e) if e.is_plain_busy() => t.retries += 1,
                        other => break other,
                    }
                };
            }
            match rc {
                Ok(()) => break,
                Err(e) => {
                    let _ = rollback.run();
                    if e.is_retry() {
                        t.retries += 1;
                        t.conflicts += u64::from(e.is_conflict());
                        continue;
                    }
                    t.errors += 1;
                    t.first_error.get_or_insert_with(|| e.to_string());
                    continue 'txn;
                }
            }
        }
        let t1 = Instant::now();
        if t1 <= end {
            t.commits += 1;
            t.lat_ms.push(t1.duration_since(t0).as_secs_f64() * 1e3);
        } else {
            t.late += 1;
        }
    }
    std::hint::black_box(digest.finalize());
    Ok(t)
}
