//! `parlite-bench`: side-by-side benchmarks of parlite against SQLite (rusqlite, bundled).
//!
//! Each subcommand is one workload of `shared/bench` (same schema, statements, defaults and
//! output keys as the C harness of that name). Every point runs on parlite, then on SQLite,
//! with the same pragmas on the same disk, prints one `key=value` line per engine and a
//! `ratio=` line (>1 means parlite is better), then checks both databases (row count and
//! `PRAGMA integrity_check`). See BENCHMARKS.md at the repository root.
//!
//! Exit status: 0 all ran and every check passed; 3 a check failed (data lost or corrupted,
//! said loudly on stderr); 4 an engine could not run some point or a statement failed
//! (`status=unavailable|error`, or `errors=` > 0); 2 bad usage or a harness failure.

mod chart;
mod engine;
mod fsyncs;
mod report;
mod workloads;

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};
use engine::Kind;
use std::path::PathBuf;
use workloads::Ctx;

#[derive(Parser)]
#[command(
    name = "parlite-bench",
    about = "Side-by-side benchmarks of parlite against SQLite",
    after_help = "Lines are key=value; `engine=ratio` lines compare the two engines of the \
                  point just printed: ratio>1 always means parlite is better (parlite/sqlite \
                  for throughput, sqlite/parlite for times)."
)]
struct Cli {
    #[command(flatten)]
    common: Common,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum EngineSel {
    Parlite,
    Sqlite,
    Both,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum SyncMode {
    Full,
    Normal,
    Off,
}

impl SyncMode {
    fn name(self) -> &'static str {
        match self {
            SyncMode::Full => "full",
            SyncMode::Normal => "normal",
            SyncMode::Off => "off",
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum Journal {
    Wal,
    Delete,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum BeginMode {
    Immediate,
    Concurrent,
    Deferred,
}

impl BeginMode {
    fn name(self) -> &'static str {
        match self {
            BeginMode::Immediate => "immediate",
            BeginMode::Concurrent => "concurrent",
            BeginMode::Deferred => "deferred",
        }
    }
}

#[derive(Args, Clone, Debug)]
struct Common {
    /// Which engines to run.
    #[arg(long, global = true, value_enum, default_value = "both")]
    engine: EngineSel,
    /// Writer/worker thread counts, comma separated (default: the workload's own).
    #[arg(long, global = true, value_delimiter = ',')]
    threads: Option<Vec<usize>>,
    /// Seconds per point for the timed workloads (default: 5).
    #[arg(long, global = true)]
    seconds: Option<f64>,
    /// PRAGMA synchronous (default: full; hc_mixed: off).
    #[arg(long, global = true, value_enum)]
    sync: Option<SyncMode>,
    /// PRAGMA journal_mode asked of both engines.
    #[arg(long, global = true, value_enum, default_value = "wal")]
    journal: Journal,
    /// Directory for the databases (default: a fresh temporary directory under /tmp).
    #[arg(long, global = true)]
    dir: Option<PathBuf>,
    /// Run both engines on in-memory databases instead (parlite `:memory:`, SQLite memdb).
    #[arg(long, global = true)]
    memory: bool,
    /// Append one row per printed line to this CSV file.
    #[arg(long, global = true)]
    csv: Option<PathBuf>,
    /// Tiny sizes and short points, to check the harness (figures are meaningless).
    #[arg(long, global = true)]
    quick: bool,
    /// Busy timeout of every connection, in ms.
    #[arg(long, global = true, default_value_t = 5000)]
    busy_timeout_ms: u32,
    /// Extra SQL run on every connection after the pragmas (repeatable).
    #[arg(long = "exec", global = true)]
    exec: Vec<String>,
}

#[derive(Subcommand)]
enum Cmd {
    /// N writers: BEGIN IMMEDIATE; UPDATE 1 random ~4 KiB row; COMMIT (committed tps).
    #[command(name = "bdb_update", alias = "bdb-update")]
    BdbUpdate(BdbArgs),
    /// 8 threads x 1,000 INSERTs, autocommit or one transaction per thread (wall time).
    #[command(name = "mt_insert", alias = "mt-insert")]
    MtInsert(MtArgs),
    /// 1,000 keys: insert, select, update, delete half, one commit per op (ms/op).
    #[command(name = "kv_ops", alias = "kv-ops")]
    KvOps(KvArgs),
    /// hctree threadtest mix: index scans and updates on 200,000 rows (tps).
    #[command(name = "hc_mixed", alias = "hc-mixed")]
    HcMixed(HcArgs),
    /// Replays SQLite's speedtest1 scripts (time per subtest and total).
    Speedtest1(StArgs),
    /// The online backup of a ~100 MB database, alone and beside a writer (ms, tps).
    Backup(BackupArgs),
    /// Every workload with its defaults (or `--quick` sizes).
    All(StArgs),
    /// PNG charts of tps vs threads from a --csv file.
    Chart(ChartArgs),
}

#[derive(Args, Clone, Debug)]
struct BdbArgs {
    #[arg(long, default_value_t = 10_000)]
    rows: i64,
    /// Bytes of randomblob per row (3,900: about one 4 KiB page per row).
    #[arg(long, default_value_t = 3900)]
    pad: i64,
    #[arg(long, value_enum, default_value = "immediate")]
    begin: BeginMode,
}

#[derive(Args, Clone, Debug)]
struct MtArgs {
    #[arg(long, default_value_t = 1000)]
    rows_per_thread: i64,
    /// One BEGIN IMMEDIATE ... COMMIT per thread instead of autocommit INSERTs.
    #[arg(long)]
    batch: bool,
}

#[derive(Args, Clone, Debug)]
struct KvArgs {
    #[arg(long, default_value_t = 1000)]
    keys: usize,
}

#[derive(Args, Clone, Debug)]
struct HcArgs {
    #[arg(long, default_value_t = 200_000)]
    rows: i64,
    /// (nupdate:nscan) transaction mixes, comma separated.
    #[arg(long, value_delimiter = ',', default_value = "1:0,10:0,1:10,0:10")]
    mix: Vec<String>,
    /// The C program's -P schema: c1/c2 columns with ordinary indexes (schema=cols).
    #[arg(long)]
    plain_columns: bool,
    /// Override the begin mode (default: IMMEDIATE when updating, else DEFERRED).
    #[arg(long, value_enum)]
    begin: Option<BeginMode>,
}

#[derive(Args, Clone, Debug)]
struct BackupArgs {
    /// Size of the source database, in megabytes.
    #[arg(long, default_value_t = 100)]
    mb: u64,
    /// Pages per step of the copy that runs beside a writer.
    #[arg(long, default_value_t = 256)]
    step_pages: i32,
    /// Milliseconds between those steps.
    #[arg(long, default_value_t = 10)]
    step_sleep_ms: u64,
}

#[derive(Args, Clone, Debug)]
struct StArgs {
    /// The shared corpus directory (holding speedtest1/); default $PARLITE_CORPUS, then
    /// ../shared/corpus.
    #[arg(long)]
    corpus: Option<PathBuf>,
    /// Scripts to replay, comma separated: main, orm, cte, fp, app.
    #[arg(long, value_delimiter = ',')]
    script: Option<Vec<String>>,
    /// Stop an engine's replay of one script after this many seconds.
    #[arg(long, default_value_t = 600.0)]
    max_seconds: f64,
}

#[derive(Args, Clone, Debug)]
struct ChartArgs {
    /// Input written by --csv.
    #[arg(long = "in", alias = "input")]
    input: Option<PathBuf>,
    /// Output directory for the PNG files.
    #[arg(long)]
    out: PathBuf,
}

/// A temporary directory removed on drop (only if this run created it).
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn main() {
    // First: the fsync counters must exist before any thread starts (fsyncs.rs).
    let fsyncs = fsyncs::FsyncCounter::open();
    let cli = Cli::parse();
    match run(cli, fsyncs) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("parlite-bench: error: {e:#}");
            std::process::exit(2);
        }
    }
}

fn run(cli: Cli, fsyncs: fsyncs::FsyncCounter) -> Result<i32> {
    let c = cli.common;
    if let Cmd::Chart(a) = &cli.cmd {
        let input = a
            .input
            .clone()
            .or_else(|| c.csv.clone())
            .context("chart needs --csv FILE (or --in FILE)")?;
        chart::run(&input, &a.out)?;
        return Ok(0);
    }
    if let Some(why) = &fsyncs.unavailable {
        eprintln!("note: fsync counting unavailable ({why}); lines say fsyncs=n/a");
    }
    let engines = match c.engine {
        EngineSel::Parlite => vec![Kind::Parlite],
        EngineSel::Sqlite => vec![Kind::Sqlite],
        EngineSel::Both => vec![Kind::Parlite, Kind::Sqlite],
    };
    let (dir, _tmp) = match &c.dir {
        Some(d) => {
            if !d.is_dir() {
                bail!("--dir {} is not a directory", d.display());
            }
            (d.clone(), None)
        }
        None => {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0);
            let d =
                std::env::temp_dir().join(format!("parlite-bench-{}-{nanos}", std::process::id()));
            std::fs::create_dir_all(&d).with_context(|| format!("creating {}", d.display()))?;
            (d.clone(), Some(TempDir(d)))
        }
    };
    if engines.contains(&Kind::Parlite) && c.sync.is_some_and(|s| s != SyncMode::Full) {
        eprintln!(
            "note: parlite takes PRAGMA synchronous per connection; whether its storage honours \
             it shows in fsyncs_per_commit="
        );
    }
    let mut ctx = Ctx {
        engines,
        dir,
        memory: c.memory,
        journal: match c.journal {
            Journal::Wal => "wal".into(),
            Journal::Delete => "delete".into(),
        },
        busy_timeout_ms: c.busy_timeout_ms,
        extra_sql: c.exec.clone(),
        csv: report::Csv::open(c.csv.as_deref())?,
        fsyncs,
        failed: false,
        incomplete: false,
    };
    match cli.cmd {
        Cmd::BdbUpdate(a) => bdb(&mut ctx, &c, &a),
        Cmd::MtInsert(a) => mt(&mut ctx, &c, &a),
        Cmd::KvOps(a) => kv(&mut ctx, &c, &a),
        Cmd::HcMixed(a) => hc(&mut ctx, &c, &a)?,
        Cmd::Speedtest1(a) => st(&mut ctx, &c, &a)?,
        Cmd::Backup(a) => {
            let o = workloads::backup::Opts {
                mb: if c.quick { a.mb.min(2) } else { a.mb },
                seconds: c.seconds.unwrap_or(if c.quick { 0.3 } else { 5.0 }),
                step_pages: a.step_pages,
                step_sleep: std::time::Duration::from_millis(a.step_sleep_ms),
                sync: sync_or(&c, SyncMode::Full),
            };
            workloads::backup::run(&mut ctx, &o);
        }
        Cmd::All(a) => {
            bdb(
                &mut ctx,
                &c,
                &BdbArgs {
                    rows: 10_000,
                    pad: 3900,
                    begin: BeginMode::Immediate,
                },
            );
            for batch in [false, true] {
                mt(
                    &mut ctx,
                    &c,
                    &MtArgs {
                        rows_per_thread: 1000,
                        batch,
                    },
                );
            }
            kv(&mut ctx, &c, &KvArgs { keys: 1000 });
            hc(
                &mut ctx,
                &c,
                &HcArgs {
                    rows: 200_000,
                    mix: vec!["1:0".into(), "10:0".into(), "1:10".into(), "0:10".into()],
                    plain_columns: false,
                    begin: None,
                },
            )?;
            st(&mut ctx, &c, &a)?;
        }
        Cmd::Chart(_) => {}
    }
    if ctx.failed {
        eprintln!("!!!!! parlite-bench: A DATA CHECK FAILED (see the lines marked check=FAILED)");
        return Ok(3);
    }
    if ctx.incomplete {
        eprintln!(
            "parlite-bench: some points did not run or had statement errors \
             (status=unavailable|error, errors>0)"
        );
        return Ok(4);
    }
    Ok(0)
}

fn sync_or(c: &Common, default: SyncMode) -> String {
    c.sync.unwrap_or(default).name().to_string()
}

fn bdb(ctx: &mut Ctx, c: &Common, a: &BdbArgs) {
    let o = workloads::bdb_update::Opts {
        threads: c.threads.clone().unwrap_or_else(|| {
            if c.quick {
                vec![1, 4]
            } else {
                vec![1, 2, 5, 10, 20, 50, 100]
            }
        }),
        seconds: c.seconds.unwrap_or(if c.quick { 0.3 } else { 5.0 }),
        sync: sync_or(c, SyncMode::Full),
        rows: if c.quick { a.rows.min(200) } else { a.rows },
        pad: a.pad,
        begin: a.begin.name().to_string(),
    };
    workloads::bdb_update::run(ctx, &o);
}

fn mt(ctx: &mut Ctx, c: &Common, a: &MtArgs) {
    let o = workloads::mt_insert::Opts {
        threads: c.threads.clone().unwrap_or_else(|| vec![8]),
        rows_per_thread: if c.quick {
            a.rows_per_thread.min(50)
        } else {
            a.rows_per_thread
        },
        batch: a.batch,
        sync: sync_or(c, SyncMode::Full),
    };
    workloads::mt_insert::run(ctx, &o);
}

fn kv(ctx: &mut Ctx, c: &Common, a: &KvArgs) {
    let o = workloads::kv_ops::Opts {
        keys: if c.quick { a.keys.min(100) } else { a.keys },
        sync: sync_or(c, SyncMode::Full),
    };
    workloads::kv_ops::run(ctx, &o);
}

fn hc(ctx: &mut Ctx, c: &Common, a: &HcArgs) -> Result<()> {
    let mut mixes = Vec::new();
    for m in &a.mix {
        let (u, s) = m
            .split_once(':')
            .with_context(|| format!("--mix {m}: want NUPDATE:NSCAN"))?;
        let (u, s): (usize, usize) = (u.trim().parse()?, s.trim().parse()?);
        if u == 0 && s == 0 {
            bail!("--mix {m}: a transaction needs an update or a scan");
        }
        mixes.push((u, s));
    }
    let o = workloads::hc_mixed::Opts {
        threads: c.threads.clone().unwrap_or_else(|| {
            if c.quick {
                vec![1, 2]
            } else {
                vec![1, 2, 4, 8, 16]
            }
        }),
        seconds: c.seconds.unwrap_or(if c.quick { 0.3 } else { 5.0 }),
        sync: sync_or(c, SyncMode::Off),
        rows: if c.quick { a.rows.min(2000) } else { a.rows },
        mixes,
        plain_columns: a.plain_columns,
        begin: a.begin.map(|b| b.name().to_string()),
    };
    workloads::hc_mixed::run(ctx, &o);
    Ok(())
}

fn st(ctx: &mut Ctx, c: &Common, a: &StArgs) -> Result<()> {
    let corpus = a
        .corpus
        .clone()
        .or_else(|| std::env::var_os("PARLITE_CORPUS").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("../shared/corpus"));
    let scripts = a.script.clone().unwrap_or_else(|| {
        if c.quick {
            vec!["cte".into()]
        } else {
            ["main", "orm", "cte", "fp", "app"]
                .iter()
                .map(|s| s.to_string())
                .collect()
        }
    });
    let o = workloads::speedtest1::Opts {
        corpus,
        scripts,
        sync: sync_or(c, SyncMode::Full),
        max_seconds: a.max_seconds,
    };
    workloads::speedtest1::run(ctx, &o)
}
