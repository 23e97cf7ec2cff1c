//! `kv_ops`: the Ada B-tree vs SQLite key/value comparison (shared/bench/kv_ops.c), one
//! thread.
//!
//! `test_table(key TEXT PRIMARY KEY, value TEXT)`, KEYS (1,000) random pairs (16-char key,
//! 32-char value, from the C program's PRNG and seed, so the same keys). Phases, each
//! statement in its own autocommit transaction: insert every pair; select every key; update
//! every value to a random value twice as long (64 chars); delete half of the keys.
//! Figures: ms per operation per phase. Headline (and ratio): total time; each phase's ratio
//! is printed too.

use super::{check_conn, cleanup, fsync_fields, sqlite_check, Check, Ctx, Rnd};
use crate::engine::{DbError, Kind, Target};
use crate::report::{CpuSnap, Line};
use std::time::Instant;

pub struct Opts {
    pub keys: usize,
    pub sync: String,
}

struct Measured {
    line: Line,
    phases_ms_op: [f64; 4],
    total_s: f64,
    check: Check,
}

pub fn run(ctx: &mut Ctx, o: &Opts) {
    let mut head = Line::new();
    head.kv("workload", "kv_ops")
        .kv("keys", o.keys)
        .kv("journal", &ctx.journal)
        .kv("sync", &o.sync)
        .kv("fs", ctx.fs());
    let mut got: Vec<(Kind, Measured)> = Vec::new();
    for kind in ctx.engines.clone() {
        let mut line = head.clone();
        line.kv("engine", kind.name());
        match point(ctx, o, kind) {
            Ok(m) => {
                line.kv("status", "ok");
                if m.line.get("errors").is_some_and(|v| v != "0") {
                    ctx.incomplete = true;
                }
                line.fields.extend(m.line.fields.iter().cloned());
                if let Check::Failed(why) = &m.check {
                    ctx.failed = true;
                    eprintln!(
                        "!!!!! DATA CHECK FAILED: kv_ops engine={}: {why}",
                        kind.name()
                    );
                }
                ctx.emit(&line, "", "total_s");
                if m.check == Check::Ok {
                    got.push((kind, m));
                }
            }
            Err(e) => {
                ctx.incomplete = true;
                let status = if e.code == 14 || e.message.contains("not available") {
                    "unavailable"
                } else {
                    "error"
                };
                line.kv("status", status).kv("error", &e.message);
                ctx.emit(&line, "", "total_s");
            }
        }
    }
    if ctx.engines.len() < 2 {
        return;
    }
    let mut line = head.clone();
    line.kv("engine", "ratio");
    let p = got.iter().find(|(k, _)| *k == Kind::Parlite).map(|g| &g.1);
    let s = got.iter().find(|(k, _)| *k == Kind::Sqlite).map(|g| &g.1);
    match (p, s) {
        (Some(p), Some(s)) if p.total_s > 0.0 => {
            line.kv("ratio", crate::report::fmt_ratio(s.total_s / p.total_s));
            for (i, name) in ["insert", "select", "update", "delete"].iter().enumerate() {
                let r = if p.phases_ms_op[i] > 0.0 {
                    crate::report::fmt_ratio(s.phases_ms_op[i] / p.phases_ms_op[i])
                } else {
                    "n/a".into()
                };
                line.kv(&format!("ratio_{name}"), r);
            }
        }
        _ => {
            line.kv("ratio", "n/a");
        }
    }
    line.kv("ratio_of", "total_s")
        .kv("ratio_means", "sqlite/parlite,>1=parlite_better");
    ctx.emit(&line, "", "ratio");
}

fn point(ctx: &mut Ctx, o: &Opts, kind: Kind) -> Result<Measured, DbError> {
    let path = ctx.db_path("kv_ops", kind);
    cleanup(ctx, &path);
    let settings = ctx.settings(&o.sync);
    let target = Target::open(kind, &path, ctx.memory)?;
    let (conn, journal_got) = target.connect(&settings)?;
    conn.exec("CREATE TABLE test_table(key TEXT PRIMARY KEY, value TEXT)")?;

    let nk = o.keys;
    let mut seed = Rnd(42);
    let mut keys = Vec::with_capacity(nk);
    let mut vals = Vec::with_capacity(nk);
    for _ in 0..nk {
        keys.push(seed.hex(16));
        vals.push(seed.hex(32));
    }
    let mut ins = conn.prepare("INSERT INTO test_table(key, value) VALUES(?,?)")?;
    let mut sel = conn.prepare("SELECT value FROM test_table WHERE key=?")?;
    let mut upd = conn.prepare("UPDATE test_table SET value=? WHERE key=?")?;
    let mut del = conn.prepare("DELETE FROM test_table WHERE key=?")?;
    let (mut errors, mut mismatches) = (0u64, 0u64);
    let mut first_error: Option<String> = None;
    let note = |e: DbError, first_error: &mut Option<String>| {
        if first_error.is_none() {
            *first_error = Some(e.to_string());
        }
    };
    let l1 = crate::report::load1();
    let fs_before = ctx.fsyncs_now();
    let cpu0 = CpuSnap::take();

    let t0 = Instant::now();
    for i in 0..nk {
        let r = ins
            .bind_text(1, &keys[i])
            .and_then(|_| ins.bind_text(2, &vals[i]))
            .and_then(|_| ins.run());
        if let Err(e) = r {
            errors += 1;
            note(e, &mut first_error);
        }
    }
    let t1 = Instant::now();
    for i in 0..nk {
        // Compared borrowed, as kv_ops.c's strcmp on sqlite3_column_text.
        let r = sel
            .bind_text(1, &keys[i])
            .and_then(|_| sel.first_text_is(&vals[i]));
        match r {
            Ok(ok) => {
                if !ok {
                    mismatches += 1;
                }
            }
            Err(e) => {
                mismatches += 1;
                note(e, &mut first_error);
            }
        }
    }
    let t2 = Instant::now();
    for i in 0..nk {
        vals[i] = seed.hex(64); // twice as long
        let r = upd
            .bind_text(1, &vals[i])
            .and_then(|_| upd.bind_text(2, &keys[i]))
            .and_then(|_| upd.run());
        match r {
            Ok(()) if conn.changes() == 1 => {}
            Ok(()) => errors += 1,
            Err(e) => {
                errors += 1;
                note(e, &mut first_error);
            }
        }
    }
    let t3 = Instant::now();
    let nd = nk / 2;
    for key in keys.iter().take(nd) {
        let r = del.bind_text(1, key).and_then(|_| del.run());
        match r {
            Ok(()) if conn.changes() == 1 => {}
            Ok(()) => errors += 1,
            Err(e) => {
                errors += 1;
                note(e, &mut first_error);
            }
        }
    }
    let t4 = Instant::now();
    let cpu1 = CpuSnap::take();
    let fs_after = ctx.fsyncs_now();
    drop((ins, sel, upd, del));

    // B1: remaining rows and their updated values, then integrity_check + count.
    let mut check = check_conn(&conn, "SELECT count(*) FROM test_table", (nk - nd) as i64)?;
    let len = conn
        .query_i64("SELECT sum(length(value)) FROM test_table")?
        .unwrap_or(-1);
    if check == Check::Ok && len != ((nk - nd) * 64) as i64 {
        check = Check::Failed(format!(
            "sum(length(value)) = {len}, expected {}",
            (nk - nd) * 64
        ));
    }
    if check == Check::Ok && mismatches > 0 {
        check = Check::Failed(format!(
            "{mismatches} selects did not return the inserted value"
        ));
    }
    let lib = target.lib();
    drop(conn);
    drop(target);
    let sqlite_check = sqlite_check(
        ctx,
        kind,
        &path,
        "SELECT count(*) FROM test_table",
        (nk - nd) as i64,
    );
    cleanup(ctx, &path);

    let ms = |a: Instant, b: Instant, n: usize| {
        b.duration_since(a).as_secs_f64() * 1e3 / n.max(1) as f64
    };
    let phases = [
        ms(t0, t1, nk),
        ms(t1, t2, nk),
        ms(t2, t3, nk),
        ms(t3, t4, nd),
    ];
    let total_s = t4.duration_since(t0).as_secs_f64();
    let mut line = Line::new();
    line.kv("journal_got", journal_got)
        .kv("insert_ms_op", format!("{:.4}", phases[0]))
        .kv("select_ms_op", format!("{:.4}", phases[1]))
        .kv("update_ms_op", format!("{:.4}", phases[2]))
        .kv("delete_ms_op", format!("{:.4}", phases[3]))
        .kv("total_s", format!("{total_s:.3}"))
        .kv("errors", errors + mismatches);
    fsync_fields(
        &mut line,
        &o.sync,
        fs_before,
        fs_after,
        (nk + nk + nd) as u64,
    );
    line.kv("check", check.label())
        .kv("sqlite_check", sqlite_check)
        .kv("load1", format!("{l1:.2}"));
    cpu0.report(&cpu1, &mut line);
    line.kv("lib", lib);
    if let Some(e) = first_error {
        line.kv("first_error", e);
    }
    Ok(Measured {
        line,
        phases_ms_op: phases,
        total_s,
        check,
    })
}
