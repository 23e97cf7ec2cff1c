//! Running each .test file in a child process, so that an engine that hangs, aborts or
//! overflows its stack costs one file, not the whole corpus run.
//!
//! The child is `parlite-slt --child --engine E FILE`; it writes one line per test record
//! to stdout, in file order: `@P` passed, `@S` skipped, `@F` failed (then the failure's
//! description, each line prefixed `| `), and `@END` when the file is done. The parent gives
//! each record `record_timeout` to finish. When the child hangs or dies, the record it was on
//! fails, and every record after it that would have run is counted failed too (not run): a
//! file must never look better because its engine stopped early.

use super::parse::{self, parse};
use super::run::{Failure, Tally, Verdict, CONDITION_ENGINE_NAME};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

/// A failed record as `--verbose` prints it, ending with a blank line.
pub fn describe_failure(file: &Path, f: &Failure) -> String {
    let mut s = format!(
        "{}:{}: FAILED\n{}\n-- expected:\n",
        file.display(),
        f.line,
        f.sql
    );
    for l in &f.expected {
        s.push_str(l);
        s.push('\n');
    }
    s.push_str("-- got:\n");
    for l in &f.got {
        s.push_str(l);
        s.push('\n');
    }
    s.push('\n');
    s
}

/// The child's side: reports one verdict in the protocol.
pub fn write_verdict(out: &mut dyn Write, file: &Path, verdict: &Verdict) -> std::io::Result<()> {
    match verdict {
        Verdict::Passed => writeln!(out, "@P"),
        Verdict::Skipped => writeln!(out, "@S"),
        Verdict::Failed(f) => {
            writeln!(out, "@F")?;
            for line in describe_failure(file, f).lines() {
                writeln!(out, "| {line}")?;
            }
            Ok(())
        }
    }
}

/// The child's side: marks the file done.
pub fn write_end(out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "@END")?;
    out.flush()
}

/// What the parent learnt about one file.
#[derive(Debug, Default)]
pub struct Supervised {
    pub tally: Tally,
    /// The failures' descriptions (`describe_failure`), for `--verbose`.
    pub failure_text: String,
    /// Why the child did not finish, when it did not.
    pub incident: Option<String>,
}

/// Runs `file` in a child `exe --child --engine ENGINE FILE`.
pub fn run_file_in_child(
    exe: &Path,
    engine: &str,
    file: &Path,
    record_timeout: Duration,
) -> Result<Supervised, String> {
    let mut child = Command::new(exe)
        .args(["--child", "--engine", engine])
        .arg(file)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("starting {}: {e}", exe.display()))?;
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| "the child's stdout was not captured".to_string())?;
    // A reader thread, so the wait for each line can time out.
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line).is_err() {
                return;
            }
        }
    });

    let mut out = Supervised::default();
    let mut reported = 0usize;
    let mut ended = false;
    loop {
        match rx.recv_timeout(record_timeout) {
            Ok(Ok(line)) => match line.as_str() {
                "@P" => {
                    out.tally.passed += 1;
                    reported += 1;
                }
                "@S" => {
                    out.tally.skipped += 1;
                    reported += 1;
                }
                "@F" => {
                    out.tally.failed += 1;
                    reported += 1;
                }
                "@END" => ended = true,
                other => {
                    if let Some(text) = other.strip_prefix("| ") {
                        out.failure_text.push_str(text);
                        out.failure_text.push('\n');
                    } else if other == "|" {
                        out.failure_text.push('\n');
                    }
                }
            },
            Ok(Err(e)) => {
                out.incident = Some(format!("reading the child's output: {e}"));
                break;
            }
            Err(RecvTimeoutError::Timeout) => {
                let _ = child.kill();
                out.incident = Some(format!(
                    "a record ran past the {} s limit",
                    record_timeout.as_secs_f64()
                ));
                break;
            }
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    let status = child
        .wait()
        .map_err(|e| format!("waiting for the child: {e}"))?;
    let _ = reader.join();
    if !ended && out.incident.is_none() {
        out.incident = Some(format!("the engine process died ({status})"));
    }
    if let Some(incident) = out.incident.clone() {
        count_unfinished(file, reported, &incident, &mut out)?;
    }
    Ok(out)
}

/// Counts the record the child was on, and the ones it never reached, as failed.
fn count_unfinished(
    file: &Path,
    reported: usize,
    incident: &str,
    out: &mut Supervised,
) -> Result<(), String> {
    let bytes = std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let records = parse(&String::from_utf8_lossy(&bytes));
    let tests: Vec<_> = records.iter().filter(|r| r.is_test()).collect();
    let Some(stuck) = tests.get(reported) else {
        return Ok(());
    };
    out.tally.failed += 1;
    let sql = match &stuck.command {
        parse::Command::Statement { sql, .. } | parse::Command::Query { sql, .. } => sql.as_str(),
        _ => "",
    };
    out.failure_text.push_str(&format!(
        "{}:{}: FAILED: {incident}\n{sql}\n\n",
        file.display(),
        stuck.line
    ));
    let mut not_run = 0;
    for r in &tests[reported + 1..] {
        if r.applies_to(CONDITION_ENGINE_NAME) {
            out.tally.failed += 1;
            not_run += 1;
        } else {
            out.tally.skipped += 1;
        }
    }
    out.incident = Some(format!(
        "{incident} at line {}; {not_run} later records not run, counted failed",
        stuck.line
    ));
    Ok(())
}
