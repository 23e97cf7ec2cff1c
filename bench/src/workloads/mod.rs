//! The workloads, one module each, mirroring the C harnesses in `shared/bench` (same schema,
//! statements, defaults and output keys), and the per-point protocol they share:
//!
//! ```text
//!   for each point (threads, mix, ...):
//!     for each engine (parlite, then SQLite): fresh database → seed → measure → check
//!       print one `workload=... engine=...` line (status=ok|unavailable|error)
//!     print one `ratio=` line (>1 always means parlite is better)
//! ```
//!
//! Invariants:
//! - B1. Every `check=ok` printed was checked in that point: `PRAGMA integrity_check` said
//!   `ok` and the row count (and, where the workload defines it, the content) is what the
//!   workload wrote. A failed check marks the run failed; the binary then exits 3, loudly.
//! - B2. An engine that cannot run a point (cannot open a file database, rejects a
//!   statement the workload needs) prints `status=unavailable` or `status=error` with the
//!   engine's message, and no figure; the ratio line then says `ratio=n/a`.

pub mod backup;
pub mod bdb_update;
pub mod hc_mixed;
pub mod kv_ops;
pub mod mt_insert;
pub mod speedtest1;

use crate::engine::{Conn, DbError, Kind, Settings, Target};
use crate::fsyncs::FsyncCounter;
use crate::report::{Csv, Line};
use std::path::{Path, PathBuf};

/// Everything a workload needs from the command line and the run.
pub struct Ctx {
    pub engines: Vec<Kind>,
    pub dir: PathBuf,
    pub memory: bool,
    pub journal: String,
    pub busy_timeout_ms: u32,
    pub extra_sql: Vec<String>,
    pub csv: Csv,
    pub fsyncs: FsyncCounter,
    /// A check failed (B1): data lost or corrupted.
    pub failed: bool,
    /// An engine could not run some point (B2).
    pub incomplete: bool,
}

impl Ctx {
    pub fn settings(&self, sync: &str) -> Settings {
        Settings {
            journal: self.journal.clone(),
            sync: sync.to_string(),
            busy_timeout_ms: self.busy_timeout_ms,
            extra_sql: self.extra_sql.clone(),
        }
    }

    /// The database file of `workload` for `kind` (each engine gets its own file).
    pub fn db_path(&self, workload: &str, kind: Kind) -> PathBuf {
        self.dir.join(format!("{workload}-{}.db", kind.name()))
    }

    pub fn fs(&self) -> &'static str {
        if self.memory {
            "memory"
        } else {
            crate::report::fs_type(&self.dir)
        }
    }

    /// fsyncs so far (None: not countable here).
    pub fn fsyncs_now(&self) -> Option<u64> {
        self.fsyncs.read()
    }

    /// Prints an engine's line and records it.
    pub fn emit(&mut self, line: &Line, variant: &str, metric: &str) {
        println!("{}", line.render());
        if let Err(e) = self.csv.row(line, variant, metric) {
            eprintln!("warning: --csv: {e:#}");
        }
    }
}

/// The result of a database check after a point.
#[derive(Clone, Debug, PartialEq)]
pub enum Check {
    Ok,
    Failed(String),
}

impl Check {
    pub fn label(&self) -> &'static str {
        match self {
            Check::Ok => "ok",
            Check::Failed(_) => "FAILED",
        }
    }
}

/// What one engine measured at one point.
pub struct Outcome {
    pub line: Line,
    /// The headline figure and whether higher is better (tps) or lower (times).
    pub value: f64,
    pub check: Check,
}

/// Adds `fsyncs=` and `fsyncs_per_commit=` from two counter readings.
///
/// Under `sync=off` an engine that honours `PRAGMA synchronous` never fsyncs; if it did,
/// `sync_honoured=no` says so (a measured fact, not a guess).
pub fn fsync_fields(
    line: &mut Line,
    sync: &str,
    before: Option<u64>,
    after: Option<u64>,
    commits: u64,
) {
    match (before, after) {
        (Some(a), Some(b)) => {
            let n = b.saturating_sub(a);
            line.kv("fsyncs", n);
            if sync == "off" && n > 0 {
                line.kv("sync_honoured", "no");
            }
            if commits > 0 {
                line.kv(
                    "fsyncs_per_commit",
                    format!("{:.3}", n as f64 / commits as f64),
                );
            } else {
                line.kv("fsyncs_per_commit", "n/a");
            }
        }
        _ => {
            line.kv("fsyncs", "n/a").kv("fsyncs_per_commit", "n/a");
        }
    }
}

/// `PRAGMA integrity_check` and a count query on a fresh connection; `want_rows` is the
/// count the workload must find.
pub fn check_db(
    target: &Target,
    settings: &Settings,
    count_sql: &str,
    want_rows: i64,
) -> Result<Check, DbError> {
    let (conn, _) = target.connect(settings)?;
    check_conn(&conn, count_sql, want_rows)
}

pub fn check_conn(conn: &Conn, count_sql: &str, want_rows: i64) -> Result<Check, DbError> {
    let mut st = conn.prepare("PRAGMA integrity_check")?;
    let rows = st.rows()?;
    drop(st);
    let msgs: Vec<String> = rows
        .iter()
        .filter_map(|r| r.first().map(|v| v.to_text()))
        .collect();
    if msgs != ["ok"] {
        return Ok(Check::Failed(format!(
            "integrity_check: {}",
            if msgs.is_empty() {
                "no result".to_string()
            } else {
                msgs.join("; ")
            }
        )));
    }
    match conn.query_i64(count_sql)? {
        Some(n) if n == want_rows => Ok(Check::Ok),
        got => Ok(Check::Failed(format!(
            "`{count_sql}` gave {got:?}, expected {want_rows}"
        ))),
    }
}

/// Runs one point on every selected engine and prints the lines and the ratio.
///
/// `head` holds the point's identifying fields (workload, threads, ...), printed first on
/// every line. `run` measures one engine. `metric` names the headline figure;
/// `higher_better` says whether the ratio is parlite/SQLite (throughput) or SQLite/parlite
/// (times).
pub fn run_point(
    ctx: &mut Ctx,
    head: &Line,
    variant: &str,
    metric: &str,
    higher_better: bool,
    run: &mut dyn FnMut(&mut Ctx, Kind) -> Result<Outcome, DbError>,
) -> Option<f64> {
    let mut values: Vec<(Kind, f64)> = Vec::new();
    for kind in ctx.engines.clone() {
        let mut line = head.clone();
        line.kv("engine", kind.name());
        match run(ctx, kind) {
            Ok(o) => {
                line.kv("status", "ok");
                // As the C harnesses: statement errors fail the run (not as data loss), and
                // a point with errors did not do the workload's work: no ratio for it.
                let had_errors = o.line.get("errors").is_some_and(|v| v != "0");
                if had_errors {
                    ctx.incomplete = true;
                }
                line.fields.extend(o.line.fields);
                if let Check::Failed(why) = &o.check {
                    ctx.failed = true;
                    eprintln!(
                        "!!!!! DATA CHECK FAILED: {} engine={} {}: {why}",
                        head.render(),
                        kind.name(),
                        variant
                    );
                } else if !had_errors {
                    values.push((kind, o.value));
                }
                ctx.emit(&line, variant, metric);
            }
            Err(e) => {
                ctx.incomplete = true;
                let status = if e.code == 14 || e.message.contains("not available") {
                    "unavailable"
                } else {
                    "error"
                };
                line.kv("status", status).kv("error", &e.message);
                ctx.emit(&line, variant, metric);
            }
        }
    }
    if ctx.engines.len() < 2 {
        return None;
    }
    let mut line = head.clone();
    line.kv("engine", "ratio");
    let p = values
        .iter()
        .find(|(k, _)| *k == Kind::Parlite)
        .map(|v| v.1);
    let s = values.iter().find(|(k, _)| *k == Kind::Sqlite).map(|v| v.1);
    let ratio = match (p, s) {
        (Some(p), Some(s)) if higher_better && s > 0.0 => Some(p / s),
        (Some(p), Some(s)) if !higher_better && p > 0.0 => Some(s / p),
        _ => None,
    };
    match ratio {
        Some(r) => line.kv("ratio", crate::report::fmt_ratio(r)),
        None => line.kv("ratio", "n/a"),
    };
    line.kv("ratio_of", metric).kv(
        "ratio_means",
        if higher_better {
            "parlite/sqlite,>1=parlite_better"
        } else {
            "sqlite/parlite,>1=parlite_better"
        },
    );
    ctx.emit(&line, variant, "ratio");
    ratio
}

/// xorshift64* (common.h `rnd`): deterministic per-thread PRNG, same streams as the C code.
#[derive(Clone, Debug)]
pub struct Rnd(pub u64);

impl Rnd {
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// `n` random upper-case hex digits (common.h `rnd_hex`).
    pub fn hex(&mut self, n: usize) -> String {
        const HX: &[u8; 16] = b"0123456789ABCDEF";
        (0..n)
            .map(|_| HX[(self.next() & 15) as usize] as char)
            .collect()
    }
}

/// Removes the database files of `path` unless the run is in memory.
pub fn cleanup(ctx: &Ctx, path: &Path) {
    if !ctx.memory {
        crate::engine::rm_db(path);
    }
}

/// DESIGN: a parlite database is a SQLite 3 file; after a clean close stock SQLite opens it
/// and passes `PRAGMA integrity_check`. Run on parlite's file points once every handle is
/// dropped; printed as `sqlite_check=` (n/a for SQLite and in-memory runs). A failure is
/// reported loudly on stderr but kept apart from `check=` (parlite's own view of its data).
pub fn sqlite_check(ctx: &Ctx, kind: Kind, path: &Path, count_sql: &str, want: i64) -> String {
    if kind != Kind::Parlite || ctx.memory {
        return "n/a".into();
    }
    let verdict = (|| -> Result<Check, DbError> {
        let conn = rusqlite::Connection::open_with_flags(
            path,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        check_conn(&Conn::S(conn), count_sql, want)
    })();
    match verdict {
        Ok(Check::Ok) => "ok".into(),
        Ok(Check::Failed(why)) => {
            eprintln!(
                "!!!!! stock SQLite rejects parlite's file {}: {why}",
                path.display()
            );
            "FAILED".into()
        }
        Err(e) => {
            eprintln!(
                "!!!!! stock SQLite cannot read parlite's file {}: {e}",
                path.display()
            );
            "FAILED".into()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> Ctx {
        Ctx {
            engines: vec![Kind::Parlite, Kind::Sqlite],
            dir: std::env::temp_dir(),
            memory: true,
            journal: "wal".into(),
            busy_timeout_ms: 1000,
            extra_sql: Vec::new(),
            csv: Csv::open(None).expect("no csv"),
            fsyncs: FsyncCounter::open(),
            failed: false,
            incomplete: false,
        }
    }

    fn outcome(value: f64, check: Check) -> Outcome {
        let mut line = Line::new();
        line.kv("errors", 0);
        Outcome { line, value, check }
    }

    #[test]
    fn ratio_above_one_means_parlite_is_better_both_ways() {
        let head = Line::new();
        for (higher_better, p, s) in [(true, 200.0, 100.0), (false, 50.0, 100.0)] {
            let mut c = ctx();
            let r = run_point(&mut c, &head, "", "x", higher_better, &mut |_, k| {
                Ok(outcome(if k == Kind::Parlite { p } else { s }, Check::Ok))
            });
            assert_eq!(r, Some(2.0), "higher_better={higher_better}");
            assert!(!c.failed && !c.incomplete);
        }
    }

    #[test]
    fn a_failed_check_fails_the_run() {
        let mut c = ctx();
        let r = run_point(&mut c, &Line::new(), "", "x", true, &mut |_, _| {
            Ok(outcome(1.0, Check::Failed("lost a row".into())))
        });
        assert!(c.failed);
        assert_eq!(r, None, "no ratio from a failed point");
    }

    #[test]
    fn check_finds_a_wrong_row_count_and_passes_a_right_one() {
        let t = Target::open(Kind::Sqlite, Path::new("unused"), true).expect("memdb");
        let s = ctx().settings("full");
        let (conn, _) = t.connect(&s).expect("connect");
        conn.exec("CREATE TABLE t(a)").expect("create");
        conn.exec("INSERT INTO t VALUES (1), (2)").expect("insert");
        assert_eq!(
            check_db(&t, &s, "SELECT count(*) FROM t", 2).expect("check"),
            Check::Ok
        );
        assert!(matches!(
            check_db(&t, &s, "SELECT count(*) FROM t", 3).expect("check"),
            Check::Failed(_)
        ));
    }

    #[test]
    fn rnd_matches_the_c_xorshift() {
        // common.h rnd(): x ^= x>>12; x ^= x<<25; x ^= x>>27; return x * 0x2545F4914F6CDD1D.
        let mut r = Rnd(42);
        let mut x: u64 = 42;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        assert_eq!(r.next(), x.wrapping_mul(0x2545_F491_4F6C_DD1D));
        assert_eq!(Rnd(42).hex(16).len(), 16);
    }
}
