//! `backup`: the online backup API (SQLite's backup.html; `parlite::Backup`, rusqlite's
//! `backup::Backup` on the bundled SQLite), engine by engine on the same disk.
//!
//! Source: `t(id INTEGER PRIMARY KEY, pad BLOB)`, rows of 1,000 random bytes, about `--mb`
//! megabytes, built in WAL mode at the run's `--sync`. Two figures per engine:
//! - `backup_ms`: the whole source copied into a fresh file (WAL, same sync) in one step,
//!   from init to finish; `close_ms`: closing that copy right after (both engines fold
//!   their log into the file then). Headline: `total_ms`, the two together (lower is
//!   better).
//! - `write_tps_idle` / `write_tps_during`: one writer on another connection of the source
//!   (autocommit `UPDATE t SET pad = randomblob(1000) WHERE id = ?`) for `--seconds` alone,
//!   then while the copy runs in steps of `--step-pages`, `--step-sleep-ms` apart;
//!   `during_done=1` when the copy finished within `--seconds * 4`: SQLite restarts a copy whenever another connection
//!   writes the source, so under a steady writer it may never finish.
//!
//! Check (B1): the finished copy's `PRAGMA integrity_check` and row count.

use super::Ctx;
use crate::engine::Kind;
use crate::report::load1;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

pub struct Opts {
    pub mb: u64,
    pub seconds: f64,
    pub step_pages: i32,
    pub step_sleep: Duration,
    pub sync: String,
}

/// One engine's connection, as far as this workload needs it.
enum Conn {
    Parlite(parlite::Connection),
    Sqlite(rusqlite::Connection),
}

type R<T> = Result<T, String>;

impl Conn {
    fn open(kind: Kind, path: &Path, sync: &str) -> R<Conn> {
        let p = path.to_str().ok_or("path")?;
        let c = match kind {
            Kind::Parlite => Conn::Parlite(parlite::Connection::open(p).map_err(|e| e.message)?),
            Kind::Sqlite => Conn::Sqlite(rusqlite::Connection::open(p).map_err(|e| e.to_string())?),
        };
        c.exec(&format!(
            "PRAGMA journal_mode = wal; PRAGMA synchronous = {sync}; PRAGMA busy_timeout = 5000"
        ))?;
        Ok(c)
    }

    fn exec(&self, sql: &str) -> R<()> {
        match self {
            Conn::Parlite(c) => c.execute_batch(sql).map_err(|e| e.message),
            Conn::Sqlite(c) => c.execute_batch(sql).map_err(|e| e.to_string()),
        }
    }

    fn one(&self, sql: &str) -> R<String> {
        match self {
            Conn::Parlite(c) => {
                let (mut st, _) = c.prepare(sql).map_err(|e| e.message)?.ok_or("empty")?;
                st.step().map_err(|e| e.message)?;
                Ok(match st.column(0) {
                    parlite::Value::Integer(i) => i.to_string(),
                    parlite::Value::Text(t) => t,
                    other => format!("{other:?}"),
                })
            }
            Conn::Sqlite(c) => c
                .query_row(sql, [], |r| {
                    let v: rusqlite::types::Value = r.get(0)?;
                    Ok(match v {
                        rusqlite::types::Value::Integer(i) => i.to_string(),
                        rusqlite::types::Value::Text(t) => t,
                        other => format!("{other:?}"),
                    })
                })
                .map_err(|e| e.to_string()),
        }
    }

    /// One autocommit update of row `id`, retried while busy.
    fn update(&self, id: i64) -> R<()> {
        let sql = format!("UPDATE t SET pad = randomblob(1000) WHERE id = {id}");
        loop {
            match self.exec(&sql) {
                Err(e) if e.contains("locked") || e.contains("busy") => continue,
                r => return r,
            }
        }
    }
}

/// Copies `source` over `dest` in steps of `pages` (-1: one step), `sleep` apart (as
/// CPython's `Connection.backup` sleeps between steps), until done or `until`.
/// Returns whether it finished.
fn copy(source: &Conn, dest: &mut Conn, pages: i32, sleep: Duration, until: Instant) -> R<bool> {
    match (source, dest) {
        (Conn::Parlite(s), Conn::Parlite(d)) => {
            let mut b = parlite::Backup::new(d, "main", s, "main").map_err(|e| e.message)?;
            loop {
                match b.step(pages) {
                    Ok(parlite::BackupStep::Done) => break,
                    Ok(parlite::BackupStep::More) => {}
                    Err(e) if e.code == 5 => {}
                    Err(e) => return Err(e.message),
                }
                if Instant::now() > until {
                    return Ok(false);
                }
                std::thread::sleep(sleep);
            }
            b.finish().map_err(|e| e.message)?;
            Ok(true)
        }
        (Conn::Sqlite(s), Conn::Sqlite(d)) => {
            use rusqlite::backup::StepResult;
            let b = rusqlite::backup::Backup::new(s, d).map_err(|e| e.to_string())?;
            loop {
                // Busy and Locked are retried, as More continues.
                if b.step(pages).map_err(|e| e.to_string())? == StepResult::Done {
                    break;
                }
                if Instant::now() > until {
                    return Ok(false);
                }
                std::thread::sleep(sleep);
            }
            Ok(true)
        }
        _ => Err("engines differ".into()),
    }
}

fn remove_db(path: &Path) {
    for suffix in ["", "-wal", "-shm", "-journal", "-plog", "-plog2", "-plock"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        let _ = std::fs::remove_file(p);
    }
}

/// Updates random rows until `stop`; returns how many.
fn writer(c: &Conn, rows: i64, stop: &AtomicBool, done: &AtomicU64) -> R<()> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    while !stop.load(Ordering::Relaxed) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        c.update(1 + (x % rows as u64) as i64)?;
        done.fetch_add(1, Ordering::Relaxed);
    }
    Ok(())
}

/// Writer throughput on `path` for `seconds`, while `during` runs on this thread (or
/// idle when None). Returns (tps, what `during` returned).
fn writes_while<T>(
    path: &Path,
    kind: Kind,
    o: &Opts,
    rows: i64,
    during: impl FnOnce() -> R<T>,
) -> R<(f64, T)> {
    let (stop, done) = (AtomicBool::new(false), AtomicU64::new(0));
    let opened = std::sync::Barrier::new(2);
    std::thread::scope(|s| {
        let (stop, done, opened) = (&stop, &done, &opened);
        let h = s.spawn(move || {
            let w = Conn::open(kind, path, &o.sync);
            opened.wait();
            writer(&w?, rows, stop, done)
        });
        opened.wait();
        let t0 = Instant::now();
        let r = during();
        let elapsed = t0.elapsed().as_secs_f64();
        stop.store(true, Ordering::Relaxed);
        let n = done.load(Ordering::Relaxed);
        h.join().map_err(|_| "writer panicked".to_string())??;
        Ok((n as f64 / elapsed, r?))
    })
}

fn point(ctx: &Ctx, o: &Opts, kind: Kind) -> R<Vec<(String, String)>> {
    let src_path = ctx.dir.join(format!("backup-src-{}.db", kind.name()));
    let dst_path = ctx.dir.join(format!("backup-dst-{}.db", kind.name()));
    remove_db(&src_path);
    remove_db(&dst_path);
    let rows = (o.mb * 1_000_000 / 1_040) as i64;
    let src = Conn::open(kind, &src_path, &o.sync)?;
    src.exec("CREATE TABLE t(id INTEGER PRIMARY KEY, pad BLOB)")?;
    let batch = 10_000;
    for first in (1..=rows).step_by(batch as usize) {
        let last = (first + batch - 1).min(rows);
        src.exec(&format!(
            "WITH RECURSIVE n(i) AS (SELECT {first} UNION ALL SELECT i + 1 FROM n WHERE i < {last}) \
             INSERT INTO t SELECT i, randomblob(1000) FROM n"
        ))?;
    }
    src.exec("PRAGMA wal_checkpoint(TRUNCATE)")?;
    let pages: i64 = src.one("PRAGMA page_count")?.parse().map_err(|_| "pages")?;
    let mut out = vec![
        ("rows".to_string(), rows.to_string()),
        ("pages".to_string(), pages.to_string()),
        ("load1".to_string(), format!("{:.2}", load1())),
    ];

    // The copy alone.
    let mut dst = Conn::open(kind, &dst_path, &o.sync)?;
    let t0 = Instant::now();
    let far = Instant::now() + Duration::from_secs(3600);
    copy(&src, &mut dst, -1, Duration::ZERO, far)?;
    let backup_ms = t0.elapsed().as_secs_f64() * 1e3;
    drop(dst);
    let total_ms = t0.elapsed().as_secs_f64() * 1e3;
    let dst = Conn::open(kind, &dst_path, &o.sync)?;
    let check = dst.one("PRAGMA integrity_check")?;
    let count: i64 = dst
        .one("SELECT count(*) FROM t")?
        .parse()
        .map_err(|_| "count")?;
    drop(dst);
    let ok = check == "ok" && count == rows;
    out.push(("backup_ms".into(), format!("{backup_ms:.0}")));
    out.push(("close_ms".into(), format!("{:.0}", total_ms - backup_ms)));
    out.push(("total_ms".into(), format!("{total_ms:.0}")));
    out.push((
        "check".into(),
        if ok {
            "ok".into()
        } else {
            format!("FAILED({check},{count})")
        },
    ));
    remove_db(&dst_path);

    // A writer alone, then during a copy in steps.
    let seconds = Duration::from_secs_f64(o.seconds);
    let (idle, ()) = writes_while(&src_path, kind, o, rows, || {
        std::thread::sleep(seconds);
        Ok(())
    })?;
    let mut dst = Conn::open(kind, &dst_path, &o.sync)?;
    let t2 = Instant::now();
    let (during, done) = writes_while(&src_path, kind, o, rows, || {
        copy(
            &src,
            &mut dst,
            o.step_pages,
            o.step_sleep,
            Instant::now() + seconds * 4,
        )
    })?;
    let during_ms = t2.elapsed().as_secs_f64() * 1e3;
    if done {
        let check = dst.one("PRAGMA integrity_check")?;
        let count: i64 = dst
            .one("SELECT count(*) FROM t")?
            .parse()
            .map_err(|_| "count")?;
        if check != "ok" || count != rows {
            out.push(("check_during".into(), format!("FAILED({check},{count})")));
        }
    }
    drop(dst);
    remove_db(&dst_path);
    drop(src);
    remove_db(&src_path);
    out.push(("write_tps_idle".into(), format!("{idle:.0}")));
    out.push(("write_tps_during".into(), format!("{during:.0}")));
    out.push(("during_ms".into(), format!("{during_ms:.0}")));
    out.push(("during_done".into(), u8::from(done).to_string()));
    Ok(out)
}

pub fn run(ctx: &mut Ctx, o: &Opts) {
    let mut totals = Vec::new();
    for &kind in &ctx.engines.clone() {
        let mut line = format!(
            "workload=backup engine={} mb={} sync={} step_pages={} step_sleep_ms={}",
            kind.name(),
            o.mb,
            o.sync,
            o.step_pages,
            o.step_sleep.as_millis()
        );
        match point(ctx, o, kind) {
            Ok(kv) => {
                for (k, v) in &kv {
                    line.push_str(&format!(" {k}={v}"));
                    if k.starts_with("check") && v != "ok" {
                        ctx.failed = true;
                    }
                    if k == "total_ms" {
                        totals.push(v.parse::<f64>().unwrap_or(f64::NAN));
                    }
                }
                line.push_str(" status=ok");
            }
            Err(e) => {
                ctx.incomplete = true;
                line.push_str(&format!(" status=error message={e:?}"));
            }
        }
        println!("{line}");
    }
    match totals.as_slice() {
        [p, s] => println!("workload=backup engine=ratio total_ms_ratio={:.2}", s / p),
        _ => println!("workload=backup engine=ratio ratio=n/a"),
    }
}
