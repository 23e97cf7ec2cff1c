//! `parlite-slt`: runs sqllogictest files (or a speedtest1 script) against parlite or SQLite
//! and scores them. Exit status: 0 all passed, 1 some failed, 2 the run itself could not
//! proceed (bad path, engine not available).

use clap::{Parser, Subcommand};
use parlite_testkit::slt::supervise::{
    describe_failure, run_file_in_child, write_end, write_verdict,
};
use parlite_testkit::slt::{self, Tally};
use parlite_testkit::{open_engine, speedtest, Engine, EngineError};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Parser)]
#[command(
    name = "parlite-slt",
    about = "Run sqllogictest files against parlite or SQLite",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    /// .test files or folders (searched recursively). Default: the corpus's sqllogictest
    /// folder, under $PARLITE_CORPUS or else ../shared/corpus.
    paths: Vec<PathBuf>,
    /// The engine to test.
    #[arg(long, default_value = "parlite", value_parser = ["parlite", "sqlite"])]
    engine: String,
    /// Print each failing record: its SQL, what was expected and what came back.
    #[arg(long, short)]
    verbose: bool,
    /// Also print a summary line per folder.
    #[arg(long)]
    per_folder: bool,
    /// Seconds one record may run before its file's child process is stopped (the record and
    /// the rest of the file then count as failed).
    #[arg(long, default_value_t = 60.0, value_name = "SECS")]
    record_timeout: f64,
    /// Run every file in this process: faster to start, but a hang or crash ends the run.
    #[arg(long)]
    in_process: bool,
    /// Internal: run one file and report each record on stdout for a supervising parent.
    #[arg(long, hide = true)]
    child: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Replay a speedtest1 script like `sqlite3 fresh.db < script.sql` and diff its output.
    Speedtest {
        /// The script (.sql or .sql.xz).
        script: PathBuf,
        /// stock sqlite3's output for it (.expected or .expected.xz).
        expected: PathBuf,
        #[arg(long, default_value = "parlite", value_parser = ["parlite", "sqlite"])]
        engine: String,
        /// Also write the replay's output to this file (to diff it in full).
        #[arg(long)]
        save: Option<PathBuf>,
        /// The database to run on: `:memory:`, or a file (which must not exist yet).
        /// Default: a fresh file in a temporary folder, as the reference run used.
        #[arg(long)]
        db: Option<String>,
    },
}

/// Engine panics seen; the runner turns each into a failed record.
static PANICS: AtomicUsize = AtomicUsize::new(0);

/// How many panic messages to print before only counting them: a broken engine can panic on
/// every record, and 300k backtraces bury the summary.
const PANICS_SHOWN_MAX: usize = 10;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if PANICS.fetch_add(1, Ordering::Relaxed) < PANICS_SHOWN_MAX {
            default_hook(info);
        }
    }));
    let result = match cli.command {
        Some(Command::Speedtest {
            ref script,
            ref expected,
            ref engine,
            ref save,
            ref db,
        }) => run_speedtest(script, expected, engine, save.as_deref(), db.as_deref()),
        None => run_slt(&cli),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(message) => {
            eprintln!("parlite-slt: {message}");
            ExitCode::from(2)
        }
    }
}

/// The corpus root: $PARLITE_CORPUS, else ../shared/corpus.
fn corpus_root() -> PathBuf {
    match std::env::var_os("PARLITE_CORPUS") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from("../shared/corpus"),
    }
}

/// Runs the .test files; Ok(true) when none failed.
fn run_slt(cli: &Cli) -> Result<bool, String> {
    let paths = if cli.paths.is_empty() {
        let default = corpus_root().join("sqllogictest");
        if !default.exists() {
            return Err(format!(
                "no paths given and the default corpus {} does not exist \
                 (set PARLITE_CORPUS to the shared corpus folder)",
                default.display()
            ));
        }
        vec![default]
    } else {
        cli.paths.clone()
    };
    let mut files = Vec::new();
    for p in &paths {
        files.extend(slt::collect_test_files(p).map_err(|e| e.to_string())?);
    }
    if files.is_empty() {
        return Err("no .test files found".to_string());
    }
    // Fail before the first file, not once per file, when the engine is unavailable.
    open_engine(&cli.engine, ":memory:").map_err(|e| e.to_string())?;
    let engine_name = cli.engine.clone();
    let new_engine =
        move || -> Result<Box<dyn Engine>, EngineError> { open_engine(&engine_name, ":memory:") };

    if cli.child {
        return run_child(&files, &new_engine);
    }
    let exe = std::env::current_exe().map_err(|e| format!("finding this program: {e}"))?;
    if !(cli.record_timeout > 0.0 && cli.record_timeout.is_finite()) {
        return Err("--record-timeout must be a positive number of seconds".to_string());
    }
    let record_timeout = Duration::from_secs_f64(cli.record_timeout);

    let started = Instant::now();
    let mut total = Tally::default();
    let mut folders: BTreeMap<PathBuf, Tally> = BTreeMap::new();
    let stdout = std::io::stdout();
    for file in &files {
        let (tally, failure_text, incident) = if cli.in_process {
            let outcome = slt::run_file(file, &new_engine)?;
            let text: String = outcome
                .failures
                .iter()
                .map(|f| describe_failure(file, f))
                .collect();
            (outcome.tally, text, None)
        } else {
            let s = run_file_in_child(&exe, &cli.engine, file, record_timeout)?;
            (s.tally, s.failure_text, s.incident)
        };
        let mut out = stdout.lock();
        if cli.verbose {
            let _ = out.write_all(failure_text.as_bytes());
        }
        if let Some(incident) = incident {
            let _ = writeln!(out, "{}: {incident}", file.display());
        }
        let _ = writeln!(out, "{}: {tally}", file.display());
        let _ = out.flush();
        total.add(tally);
        let folder = file.parent().unwrap_or(Path::new("")).to_path_buf();
        folders.entry(folder).or_default().add(tally);
    }
    let panics = PANICS.load(Ordering::Relaxed);
    if panics > 0 {
        eprintln!("the engine panicked {panics} times (each a failed record)");
    }
    let mut out = stdout.lock();
    if cli.per_folder {
        for (folder, tally) in &folders {
            let _ = writeln!(out, "{}/: {tally}", folder.display());
        }
    }
    eprintln!(
        "{} files in {:.1} s with engine {}",
        files.len(),
        started.elapsed().as_secs_f64(),
        cli.engine
    );
    let _ = writeln!(out, "{total}");
    Ok(total.failed == 0)
}

/// The child's side of `supervise`: runs the files given, reporting each record's verdict
/// on stdout. Verdicts go to a buffer that a second thread writes out every
/// `CHILD_FLUSH_INTERVAL`: that keeps one write per record off the hot path (it cost 60% more
/// wall time over the corpus with SQLite), and if a record hangs, the thread still delivers
/// every verdict before it, so the parent's count is exact.
fn run_child(
    files: &[PathBuf],
    new_engine: &dyn Fn() -> Result<Box<dyn Engine>, EngineError>,
) -> Result<bool, String> {
    const CHILD_FLUSH_INTERVAL: Duration = Duration::from_millis(20);
    let pending: Arc<Mutex<Vec<u8>>> = Arc::default();
    let done = Arc::new(AtomicBool::new(false));
    let flusher = {
        let pending = Arc::clone(&pending);
        let done = Arc::clone(&done);
        std::thread::spawn(move || -> std::io::Result<()> {
            let stdout = std::io::stdout();
            loop {
                let finished = done.load(Ordering::Acquire);
                let chunk = match pending.lock() {
                    Ok(mut p) => std::mem::take(&mut *p),
                    Err(_) => return Err(std::io::Error::other("verdict buffer poisoned")),
                };
                if !chunk.is_empty() {
                    let mut out = stdout.lock();
                    out.write_all(&chunk)?;
                    out.flush()?;
                }
                if finished {
                    return Ok(());
                }
                std::thread::sleep(CHILD_FLUSH_INTERVAL);
            }
        })
    };
    let mut result = Ok(true);
    for file in files {
        let bytes = match std::fs::read(file) {
            Ok(b) => b,
            Err(e) => {
                result = Err(format!("{}: {e}", file.display()));
                break;
            }
        };
        let records = slt::parse::parse(&String::from_utf8_lossy(&bytes));
        let mut engine = match new_engine() {
            Ok(e) => e,
            Err(e) => {
                result = Err(format!("opening the engine: {e}"));
                break;
            }
        };
        slt::run::run_records_observed(engine.as_mut(), &records, &mut |verdict| {
            if let Ok(mut p) = pending.lock() {
                // Writing to a Vec cannot fail.
                let _ = write_verdict(&mut *p, file, &verdict);
            }
        });
    }
    if result.is_ok() {
        if let Ok(mut p) = pending.lock() {
            let _ = write_end(&mut *p);
        }
    }
    done.store(true, Ordering::Release);
    match flusher.join() {
        Ok(Ok(())) => result,
        Ok(Err(e)) => Err(format!("writing to the parent: {e}")),
        Err(_) => Err("the output thread panicked".to_string()),
    }
}

/// Replays one speedtest1 script on a fresh file database; Ok(true) when the output matches.
fn run_speedtest(
    script: &Path,
    expected: &Path,
    engine: &str,
    save: Option<&Path>,
    db: Option<&str>,
) -> Result<bool, String> {
    let sql = speedtest::read_maybe_xz(script)?;
    let sql = String::from_utf8(sql).map_err(|_| format!("{}: not UTF-8", script.display()))?;
    let expected = speedtest::read_maybe_xz(expected)?;
    // The reference ran on a fresh file database, not :memory:, so journaling is real.
    let dir = std::env::temp_dir().join(format!("parlite-speedtest-{}", std::process::id()));
    let db_path = match db {
        Some(":memory:") => ":memory:".to_string(),
        Some(path) if Path::new(path).exists() => {
            return Err(format!("{path}: exists; speedtest1 needs a fresh database"));
        }
        Some(path) => path.to_string(),
        None => {
            std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            dir.join("fresh.db").to_string_lossy().into_owned()
        }
    };
    let outcome = (|| {
        let mut engine = open_engine(engine, &db_path).map_err(|e| e.to_string())?;
        Ok::<_, String>(speedtest::check(engine.as_mut(), &sql, &expected))
    })();
    if db.is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    let check = outcome?;
    if let Some(save) = save {
        std::fs::write(save, &check.replay.stdout)
            .map_err(|e| format!("{}: {e}", save.display()))?;
    }
    for e in check.replay.errors.iter().take(20) {
        eprintln!("{e}");
    }
    if check.changed_lines > 0 {
        println!(
            "{} lines differ (diff expected -> got, first {} lines):",
            check.changed_lines,
            speedtest::DIFF_EXCERPT_LINES
        );
        print!("{}", check.diff_excerpt);
    }
    println!(
        "{}: {} ({} expected output lines, {} errors) in {:.2} s with engine {engine}",
        script.display(),
        if check.passed() { "PASSED" } else { "FAILED" },
        check.expected_lines,
        check.replay.errors.len(),
        check.replay.elapsed.as_secs_f64()
    );
    let tally = Tally {
        passed: usize::from(check.passed()),
        failed: usize::from(!check.passed()),
        skipped: 0,
    };
    println!("{tally}");
    Ok(check.passed())
}
