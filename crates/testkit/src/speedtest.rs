//! The speedtest1 checker: replays one of SQLite's speedtest1 scripts
//! (shared/corpus/speedtest1) through an engine the way `sqlite3 fresh.db < script.sql`
//! does in its default list mode, and compares the output with stock sqlite3's.
//!
//! The replay follows the shell, with the shell's own input chunking (`ChunkReader` from
//! parlite-cli): lines accumulate until they form a complete statement (`sqlite3_complete`),
//! and each complete chunk runs statement by statement; a row prints as its values' text joined by `|`, NULL as nothing. An error is
//! reported as the shell would (`Error: near line N: ...`) and the replay goes on with the
//! next chunk; the reference output was produced with an empty stderr, so any error fails.

use crate::engine::Engine;
use crate::value::Value;
use parlite_cli::shell::{Chunk, ChunkReader};
use similar::{ChangeTag, TextDiff};
use std::io::{BufReader, Read};
use std::path::Path;
use std::time::{Duration, Instant};

/// What a replay produced.
#[derive(Debug, Default)]
pub struct Replay {
    pub stdout: Vec<u8>,
    /// The shell's stderr lines, one per failed chunk.
    pub errors: Vec<String>,
    pub elapsed: Duration,
}

/// The outcome of checking one script against its expected output.
#[derive(Debug)]
pub struct Check {
    pub replay: Replay,
    /// Lines only in the expected output plus lines only in ours (a line diff, so one
    /// missing line counts once, not as every line after it).
    pub changed_lines: usize,
    /// A unified diff (expected → got) around the first difference, at most
    /// `DIFF_EXCERPT_LINES` lines.
    pub diff_excerpt: String,
    pub expected_lines: usize,
}

/// How much of the diff to keep for the report.
pub const DIFF_EXCERPT_LINES: usize = 40;

impl Check {
    pub fn passed(&self) -> bool {
        self.changed_lines == 0 && self.replay.errors.is_empty()
    }
}

/// Unpacks an `.xz` file (or reads a plain one, when the name does not end in `.xz`).
pub fn read_maybe_xz(path: &Path) -> Result<Vec<u8>, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut reader = BufReader::new(file);
    let mut out = Vec::new();
    if path.extension().is_some_and(|e| e == "xz") {
        lzma_rs::xz_decompress(&mut reader, &mut out)
            .map_err(|e| format!("{}: not a valid .xz file: {e}", path.display()))?;
    } else {
        reader
            .read_to_end(&mut out)
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(out)
}

/// Appends one row as list mode prints it.
fn push_row(out: &mut Vec<u8>, row: &[Value]) {
    for (i, v) in row.iter().enumerate() {
        if i > 0 {
            out.push(b'|');
        }
        out.extend_from_slice(&v.to_text());
    }
    out.push(b'\n');
}

/// Replays `script` on `engine` as the sqlite3 shell reads a script from standard input.
pub fn replay(engine: &mut dyn Engine, script: &str) -> Replay {
    let started = Instant::now();
    let mut out = Replay::default();
    let mut run_chunk = |chunk: Chunk, out: &mut Replay| match chunk {
        Chunk::Sql { text, start_line } => {
            let mut stdout = std::mem::take(&mut out.stdout);
            if let Err(e) = engine.run_script(&text, &mut |row| push_row(&mut stdout, row)) {
                out.errors
                    .push(format!("Error: near line {start_line}: {e}"));
            }
            out.stdout = stdout;
        }
        // speedtest1 scripts are plain SQL; a dot-command here is a corpus change this
        // replayer does not model, so say so instead of guessing.
        Chunk::Dot { line, line_no } => out
            .errors
            .push(format!("line {line_no}: unsupported dot-command: {line}")),
    };
    let mut reader = ChunkReader::new();
    for line in script.lines() {
        if let Some(chunk) = reader.push(line) {
            run_chunk(chunk, &mut out);
        }
    }
    if let Some(chunk) = reader.finish() {
        run_chunk(chunk, &mut out);
    }
    out.elapsed = started.elapsed();
    out
}

/// Replays `script` and compares its stdout with `expected`.
pub fn check(engine: &mut dyn Engine, script: &str, expected: &[u8]) -> Check {
    let replay = replay(engine, script);
    let want = String::from_utf8_lossy(expected);
    let got = String::from_utf8_lossy(&replay.stdout);
    // A deadline keeps a wildly different output from costing minutes; the diff is then
    // coarser but still counts every changed line.
    let diff = TextDiff::configure()
        .timeout(Duration::from_secs(10))
        .diff_lines(want.as_ref(), got.as_ref());
    let changed_lines = diff
        .iter_all_changes()
        .filter(|c| c.tag() != ChangeTag::Equal)
        .count();
    let diff_excerpt = if changed_lines > 0 {
        excerpt(&want, &got)
    } else {
        String::new()
    };
    Check {
        replay,
        changed_lines,
        diff_excerpt,
        expected_lines: want.lines().count(),
    }
}

/// A unified diff of the neighbourhood of the first differing line: diffing whole outputs
/// that differ everywhere hits the deadline and degrades to "replace everything", which says
/// nothing; a window of `EXCERPT_WINDOW_LINES` from the first difference stays precise.
fn excerpt(want: &str, got: &str) -> String {
    const EXCERPT_WINDOW_LINES: usize = 200;
    let want_lines: Vec<&str> = want.lines().collect();
    let got_lines: Vec<&str> = got.lines().collect();
    let first = (0..want_lines.len().max(got_lines.len()))
        .find(|&i| want_lines.get(i) != got_lines.get(i))
        .unwrap_or(0);
    let from = first.saturating_sub(2);
    let window = |lines: &[&str]| {
        let end = (from + EXCERPT_WINDOW_LINES).min(lines.len());
        let mut s = lines.get(from..end).unwrap_or(&[]).join("\n");
        s.push('\n');
        s
    };
    let (w, g) = (window(&want_lines), window(&got_lines));
    let diff = TextDiff::from_lines(&w, &g);
    let mut unified_diff = diff.unified_diff();
    let mut unified = format!(
        "--- expected (from line {0})\n+++ got (from line {0})\n",
        from + 1
    );
    // The windows are cut at the same offsets while the outputs may be shifted against each
    // other, so a hunk at the windows' end is an artefact of the cut, not a difference.
    let cut_zone = EXCERPT_WINDOW_LINES.saturating_sub(10);
    for hunk in unified_diff.context_radius(2).iter_hunks() {
        let starts_in_cut_zone = hunk
            .ops()
            .iter()
            .filter(|op| op.tag() != similar::DiffTag::Equal)
            .any(|op| op.old_range().start >= cut_zone || op.new_range().start >= cut_zone);
        if starts_in_cut_zone {
            break;
        }
        unified.push_str(&hunk.to_string());
    }
    let mut out = String::new();
    for line in unified.lines().take(DIFF_EXCERPT_LINES) {
        out.push_str(line);
        out.push('\n');
    }
    out
}
