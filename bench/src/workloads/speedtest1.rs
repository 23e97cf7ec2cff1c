//! `speedtest1`: replays SQLite's own benchmark scripts (`shared/corpus/speedtest1/
//! speedtest1-*.sql.xz`, written by speedtest1's `--script` option) on both engines and
//! times each subtest and the whole script.
//!
//! Script format (checked against the corpus): a setup part (`PRAGMA threads=0;`), then
//! subtests delimited by lines `-- begin test N DESCRIPTION` and `-- end test N`. Statements
//! are split the way the sqlite3 shell splits its input: text is cut at a `;` once
//! `sqlite3_complete` says the statement is complete (so trigger bodies stay whole), and
//! whitespace/comment-only pieces are dropped. Both engines get the identical statement list;
//! each statement is prepared, every row stepped and every column read, like the shell.
//!
//! Correctness: each subtest's rows are folded into a digest per engine (values with their
//! type, not their text rendering); parlite's lines say `same_results=yes|no` against
//! SQLite's. Statement errors are counted (`errors=`, first message kept) and the replay
//! goes on, as the shell does. `PRAGMA integrity_check` runs at the end of each script.

use super::{check_conn, cleanup, sqlite_check, Check, Ctx};
use crate::engine::{DbError, Kind, Target};
use crate::report::{CpuSnap, Line};
use anyhow::{bail, Context, Result};
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::time::Instant;

pub struct Opts {
    pub corpus: PathBuf,
    /// Script names: main, orm, cte, fp, app (matched against the file names).
    pub scripts: Vec<String>,
    pub sync: String,
    /// Stop an engine's replay after this many seconds (status=timeout).
    pub max_seconds: f64,
}

/// One subtest: its number, description and statements.
struct Segment {
    test: Option<u32>,
    name: String,
    stmts: Vec<String>,
}

/// What one engine did on one segment.
#[derive(Clone, Default)]
struct SegResult {
    ms: f64,
    rows: u64,
    digest: u32,
    errors: u64,
    first_error: Option<String>,
}

struct EngineRun {
    kind: Kind,
    segs: Vec<Option<SegResult>>,
    total_ms: f64,
    check: Check,
    timed_out: bool,
    journal: String,
    sqlite_check: String,
    load1: f64,
    cpu: Line,
    lib: String,
}

/// Finds `speedtest1-NAME*.sql.xz` files in `corpus/speedtest1` (or `corpus` itself).
pub fn find_scripts(corpus: &Path, names: &[String]) -> Result<Vec<(String, PathBuf)>> {
    let dir = if corpus.join("speedtest1").is_dir() {
        corpus.join("speedtest1")
    } else {
        corpus.to_path_buf()
    };
    if !dir.is_dir() {
        bail!(
            "speedtest1 corpus not found at {} (give --corpus DIR or set PARLITE_CORPUS to the \
             shared/corpus directory)",
            dir.display()
        );
    }
    let mut found = Vec::new();
    for name in names {
        let prefix = format!("speedtest1-{name}-");
        let mut hit = None;
        for e in std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))? {
            let e = e?;
            let f = e.file_name().to_string_lossy().into_owned();
            if f.starts_with(&prefix) && f.ends_with(".sql.xz") {
                hit = Some((f.trim_end_matches(".sql.xz").to_string(), e.path()));
            }
        }
        match hit {
            Some(h) => found.push(h),
            None => bail!("no speedtest1-{name}-*.sql.xz in {}", dir.display()),
        }
    }
    Ok(found)
}

fn decompress(path: &Path) -> Result<String> {
    let f = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut r = std::io::BufReader::new(f);
    let mut out = Vec::new();
    lzma_rs::xz_decompress(&mut r, &mut out)
        .map_err(|e| anyhow::anyhow!("xz {}: {e:?}", path.display()))?;
    String::from_utf8(out).with_context(|| format!("{} is not UTF-8", path.display()))
}

/// `sqlite3_complete`: does `sql` end with a complete statement?
fn complete(sql: &str) -> bool {
    match CString::new(sql) {
        // SAFETY: a valid NUL-terminated string; sqlite3_complete only reads it.
        Ok(c) => unsafe { rusqlite::ffi::sqlite3_complete(c.as_ptr()) != 0 },
        Err(_) => false,
    }
}

/// Whether `s` holds nothing but whitespace, `;` and comments.
fn is_blank(s: &str) -> bool {
    let mut rest = s;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == ';');
        if let Some(r) = rest.strip_prefix("--") {
            rest = r.split_once('\n').map_or("", |(_, t)| t);
        } else if let Some(r) = rest.strip_prefix("/*") {
            rest = r.split_once("*/").map_or("", |(_, t)| t);
        } else {
            return rest.is_empty();
        }
    }
}

/// Splits a script into statements at the `;`s where the text so far is complete.
fn split_statements(text: &str, out: &mut Vec<String>) {
    let mut start = 0;
    let mut i = 0;
    let b = text.as_bytes();
    while i < b.len() {
        if b[i] == b';' && complete(&text[start..=i]) {
            let s = &text[start..=i];
            if !is_blank(s) {
                out.push(s.trim().to_string());
            }
            start = i + 1;
        }
        i += 1;
    }
    let tail = &text[start..];
    if !is_blank(tail) {
        out.push(tail.trim().to_string());
    }
}

/// Cuts a script at its `-- begin test N` / `-- end test N` markers.
fn segments(script: &str) -> Vec<Segment> {
    let mut segs = vec![Segment {
        test: None,
        name: "setup".into(),
        stmts: Vec::new(),
    }];
    let mut buf = String::new();
    for line in script.lines() {
        if let Some(rest) = line.strip_prefix("-- begin test ") {
            if let Some(last) = segs.last_mut() {
                split_statements(&buf, &mut last.stmts);
            }
            buf.clear();
            let (num, name) = rest.split_once(' ').unwrap_or((rest, ""));
            segs.push(Segment {
                test: num.trim().parse().ok(),
                name: name.trim().to_string(),
                stmts: Vec::new(),
            });
        } else if line.starts_with("-- end test ") {
            if let Some(last) = segs.last_mut() {
                split_statements(&buf, &mut last.stmts);
            }
            buf.clear();
            segs.push(Segment {
                test: None,
                name: "between".into(),
                stmts: Vec::new(),
            });
        } else {
            buf.push_str(line);
            buf.push('\n');
        }
    }
    if let Some(last) = segs.last_mut() {
        split_statements(&buf, &mut last.stmts);
    }
    segs.retain(|s| s.test.is_some() || !s.stmts.is_empty());
    segs
}

pub fn run(ctx: &mut Ctx, o: &Opts) -> Result<()> {
    let scripts = find_scripts(&o.corpus, &o.scripts)?;
    for (name, path) in scripts {
        let text = decompress(&path)?;
        let segs = segments(&text);
        drop(text);
        let ntests = segs.iter().filter(|s| s.test.is_some()).count();
        eprintln!(
            "speedtest1: {name}: {ntests} subtests, {} statements",
            segs.iter().map(|s| s.stmts.len()).sum::<usize>()
        );
        let mut runs = Vec::new();
        for kind in ctx.engines.clone() {
            match replay(ctx, o, kind, &name, &segs) {
                Ok(r) => runs.push(r),
                Err(e) => {
                    ctx.incomplete = true;
                    let mut line = Line::new();
                    line.kv("workload", "speedtest1")
                        .kv("script", &name)
                        .kv("test", "total")
                        .kv("engine", kind.name())
                        .kv(
                            "status",
                            if e.code == 14 || e.message.contains("not available") {
                                "unavailable"
                            } else {
                                "error"
                            },
                        )
                        .kv("error", &e.message);
                    ctx.emit(&line, &name, "ms");
                }
            }
        }
        print_script(ctx, o, &name, &segs, &runs);
    }
    Ok(())
}

fn replay(
    ctx: &mut Ctx,
    o: &Opts,
    kind: Kind,
    name: &str,
    segs: &[Segment],
) -> Result<EngineRun, DbError> {
    let path = ctx.db_path(&format!("speedtest1-{name}"), kind);
    cleanup(ctx, &path);
    let settings = ctx.settings(&o.sync);
    let target = Target::open(kind, &path, ctx.memory)?;
    let (conn, journal) = target.connect(&settings)?;
    let l1 = crate::report::load1();
    let cpu0 = CpuSnap::take();
    let start = Instant::now();
    let mut out = Vec::with_capacity(segs.len());
    let mut timed_out = false;
    for seg in segs {
        if timed_out || start.elapsed().as_secs_f64() > o.max_seconds {
            timed_out = true;
            out.push(None);
            continue;
        }
        let mut r = SegResult::default();
        let mut h = crc32fast::Hasher::new();
        let t0 = Instant::now();
        for sql in &seg.stmts {
            let res = conn.prepare(sql).and_then(|mut st| st.digest_rows(&mut h));
            match res {
                Ok(n) => r.rows += n,
                Err(e) => {
                    r.errors += 1;
                    r.first_error.get_or_insert_with(|| {
                        let head: String = sql.chars().take(60).collect();
                        format!("{} [{}]", e.message, head)
                    });
                }
            }
        }
        r.ms = t0.elapsed().as_secs_f64() * 1e3;
        r.digest = h.finalize();
        out.push(Some(r));
    }
    let total_ms = start.elapsed().as_secs_f64() * 1e3;
    let cpu1 = CpuSnap::take();
    let mut cpu = Line::new();
    cpu0.report(&cpu1, &mut cpu);
    // A replay that stopped at an error may have left a transaction open.
    if !conn_is_autocommit(&conn) {
        let _ = conn.exec("ROLLBACK");
    }
    let check = check_conn(&conn, "SELECT 1", 1)?;
    let lib = target.lib();
    drop(conn);
    drop(target);
    let sqlite_check = sqlite_check(ctx, kind, &path, "SELECT 1", 1);
    cleanup(ctx, &path);
    Ok(EngineRun {
        kind,
        segs: out,
        total_ms,
        check,
        timed_out,
        journal,
        sqlite_check,
        load1: l1,
        cpu,
        lib,
    })
}

fn conn_is_autocommit(conn: &crate::engine::Conn) -> bool {
    match conn {
        crate::engine::Conn::P(c) => c.is_autocommit(),
        crate::engine::Conn::S(c) => c.is_autocommit(),
    }
}

fn print_script(ctx: &mut Ctx, o: &Opts, name: &str, segs: &[Segment], runs: &[EngineRun]) {
    let sqlite = runs.iter().find(|r| r.kind == Kind::Sqlite);
    let parlite = runs.iter().find(|r| r.kind == Kind::Parlite);
    for (i, seg) in segs.iter().enumerate() {
        let Some(test) = seg.test else { continue };
        let mut head = Line::new();
        head.kv("workload", "speedtest1")
            .kv("script", name)
            .kv("test", test)
            .kv("name", &seg.name)
            .kv("sync", &o.sync)
            .kv("journal", &ctx.journal);
        for run in runs {
            let mut line = head.clone();
            line.kv("engine", run.kind.name());
            match &run.segs[i] {
                None => {
                    line.kv("status", "timeout");
                }
                Some(r) => {
                    line.kv("status", "ok")
                        .kv("ms", format!("{:.2}", r.ms))
                        .kv("rows", r.rows)
                        .kv("errors", r.errors);
                    if run.kind == Kind::Parlite {
                        if let Some(Some(s)) = sqlite.map(|s| &s.segs[i]) {
                            let same = s.digest == r.digest && s.rows == r.rows;
                            line.kv("same_results", if same { "yes" } else { "no" });
                        }
                    }
                    if let Some(e) = &r.first_error {
                        line.kv("first_error", e);
                    }
                }
            }
            ctx.emit(&line, name, "ms");
        }
        if let (Some(p), Some(s)) = (parlite, sqlite) {
            let mut line = head.clone();
            line.kv("engine", "ratio");
            match (&p.segs[i], &s.segs[i]) {
                (Some(pr), Some(sr)) if clean(pr, sr) && pr.ms > 0.0 => {
                    line.kv("ratio", crate::report::fmt_ratio(sr.ms / pr.ms))
                }
                // A failed statement is fast: no ratio unless both did the same work.
                (Some(_), Some(_)) => line
                    .kv("ratio", "n/a")
                    .kv("why", "errors_or_different_results"),
                _ => line.kv("ratio", "n/a"),
            };
            line.kv("ratio_of", "ms")
                .kv("ratio_means", "sqlite/parlite,>1=parlite_better");
            ctx.emit(&line, name, "ratio");
        }
    }
    // Totals.
    let mut head = Line::new();
    head.kv("workload", "speedtest1")
        .kv("script", name)
        .kv("test", "total")
        .kv("sync", &o.sync)
        .kv("journal", &ctx.journal)
        .kv("fs", ctx.fs());
    for run in runs {
        let mut line = head.clone();
        let errors: u64 = run.segs.iter().flatten().map(|r| r.errors).sum();
        let failed_tests = run.segs.iter().flatten().filter(|r| r.errors > 0).count();
        line.kv("engine", run.kind.name())
            .kv("status", if run.timed_out { "timeout" } else { "ok" })
            .kv("journal_got", &run.journal)
            .kv("total_ms", format!("{:.1}", run.total_ms))
            .kv("errors", errors)
            .kv("tests_with_errors", failed_tests);
        if run.kind == Kind::Parlite {
            if let Some(s) = sqlite {
                let differ = run
                    .segs
                    .iter()
                    .zip(&s.segs)
                    .zip(segs)
                    .filter(|((p, q), seg)| {
                        seg.test.is_some()
                            && match (p, q) {
                                (Some(p), Some(q)) => p.digest != q.digest || p.rows != q.rows,
                                _ => false,
                            }
                    })
                    .count();
                line.kv("tests_with_different_results", differ);
            }
        }
        if let Check::Failed(why) = &run.check {
            ctx.failed = true;
            eprintln!(
                "!!!!! DATA CHECK FAILED: speedtest1 {name} engine={}: {why}",
                run.kind.name()
            );
        }
        if run.kind == Kind::Sqlite && errors > 0 {
            // The corpus replays cleanly on stock SQLite; an error here is a harness bug.
            ctx.incomplete = true;
        }
        line.kv("check", run.check.label())
            .kv("sqlite_check", &run.sqlite_check)
            .kv("load1", format!("{:.2}", run.load1));
        line.fields.extend(run.cpu.fields.iter().cloned());
        line.kv("lib", &run.lib);
        ctx.emit(&line, name, "total_ms");
    }
    if let (Some(p), Some(s)) = (parlite, sqlite) {
        let mut line = head.clone();
        line.kv("engine", "ratio");
        let pairs: Vec<(&SegResult, &SegResult)> = p
            .segs
            .iter()
            .zip(&s.segs)
            .zip(segs)
            .filter(|(_, seg)| seg.test.is_some())
            .filter_map(|((a, b), _)| a.as_ref().zip(b.as_ref()))
            .collect();
        let ntests = segs.iter().filter(|s| s.test.is_some()).count();
        let all_clean = pairs.len() == ntests && pairs.iter().all(|(a, b)| clean(a, b));
        if p.timed_out || s.timed_out || p.total_ms <= 0.0 || !all_clean {
            line.kv("ratio", "n/a");
        } else {
            line.kv("ratio", crate::report::fmt_ratio(s.total_ms / p.total_ms));
        }
        // Over the subtests both engines ran cleanly with the same results only.
        let ok: Vec<_> = pairs.iter().filter(|(a, b)| clean(a, b)).collect();
        let (pm, sm) = ok
            .iter()
            .fold((0.0, 0.0), |(x, y), (a, b)| (x + a.ms, y + b.ms));
        line.kv("clean_tests", format!("{}/{}", ok.len(), ntests));
        if pm > 0.0 {
            line.kv("ratio_clean_tests", crate::report::fmt_ratio(sm / pm));
        } else {
            line.kv("ratio_clean_tests", "n/a");
        }
        line.kv("ratio_of", "total_ms")
            .kv("ratio_means", "sqlite/parlite,>1=parlite_better");
        ctx.emit(&line, name, "ratio");
    }
}

/// Both engines ran the subtest without errors and with the same results.
fn clean(p: &SegResult, s: &SegResult) -> bool {
    p.errors == 0 && s.errors == 0 && p.digest == s.digest && p.rows == s.rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_at_complete_statements_only() {
        let mut v = Vec::new();
        split_statements(
            "CREATE TABLE t(a);;\nINSERT INTO t VALUES('a;b');\n-- c;\n\
             CREATE TRIGGER r AFTER INSERT ON t BEGIN SELECT 1; SELECT 2; END;\nSELECT 3",
            &mut v,
        );
        assert_eq!(v.len(), 4, "{v:?}");
        assert!(v[2].starts_with("-- c;\nCREATE TRIGGER") && v[2].ends_with("END;"));
        assert_eq!(v[3], "SELECT 3");
    }

    #[test]
    fn segments_follow_markers() {
        let s = "PRAGMA threads=0;\n-- begin test 100 first one\nSELECT 1;\n-- end test 100\n\
                 -- begin test 110 second\nSELECT 2;\nSELECT 3;\n-- end test 110\n";
        let segs = segments(s);
        let tests: Vec<_> = segs.iter().filter_map(|s| s.test).collect();
        assert_eq!(tests, [100, 110]);
        assert_eq!(segs[0].name, "setup");
        assert_eq!(segs[1].name, "first one");
        assert_eq!(segs[2].stmts.len(), 2);
    }
}
