//! Calibration for two CONCURRENT writers (issue 5): parlite-bench's `bdb_update --begin
//! concurrent --sync off` loop (BEGIN CONCURRENT; UPDATE one random ~4 KiB row; COMMIT) run
//! by THREADS threads of one process, either all on one database file (`shared`, as the
//! bench) or each on a file of its own (`separate`: the same process, allocator and kernel
//! file table, no database shared). The ratio of the two tells what sharing the database
//! costs apart from sharing the process.
//!
//! `cargo run --release -p parlite --example conc_dbs -- THREADS SECONDS shared|separate DIR`
//! prints tps, conflicts and the process's CPU time per commit.

use parlite::{Connection, Statement, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

const ROWS: i64 = 10_000;

/// The process's user + system CPU time (`/proc/self/stat`, clock ticks of 10 ms).
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    // Fields after the parenthesised command name; utime and stime are the 14th and 15th.
    let rest = &stat[stat.rfind(')').expect("stat format") + 2..];
    let f: Vec<u64> = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .map(|v| v.parse().expect("tick count"))
        .collect();
    Duration::from_millis((f[0] + f[1]) * 10)
}

fn prepare(c: &Connection, sql: &str) -> Statement {
    c.prepare(sql).expect(sql).expect("a statement").0
}

fn run(st: &mut Statement) -> parlite::Result<()> {
    while st.step()? {}
    st.reset();
    Ok(())
}

fn open(path: &str) -> Connection {
    let c = Connection::open(path).expect("open");
    c.execute_batch("PRAGMA journal_mode=wal; PRAGMA synchronous=off")
        .expect("pragmas");
    c
}

fn fill(path: &str) {
    let c = open(path);
    c.execute_batch(&format!(
        "CREATE TABLE test(id INTEGER PRIMARY KEY, x INTEGER, pad BLOB);
         BEGIN;
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {ROWS})
         INSERT INTO test SELECT i, random(), randomblob(3900) FROM n;
         COMMIT;
         PRAGMA wal_checkpoint(TRUNCATE)"
    ))
    .expect("fill");
}

/// One writer's loop until `stop`: (commits, conflicts).
fn worker(path: &str, id: u64, start: &Barrier, stop: &AtomicBool) -> (u64, u64) {
    let c = open(path);
    let mut begin = prepare(&c, "BEGIN CONCURRENT");
    let mut update = prepare(&c, "UPDATE test SET x=random() WHERE id=?");
    let mut commit = prepare(&c, "COMMIT");
    let mut rollback = prepare(&c, "ROLLBACK");
    let mut seed = 0x9E37_79B9_7F4A_7C15u64.wrapping_mul(id + 1);
    let (mut commits, mut conflicts) = (0, 0);
    start.wait();
    while !stop.load(Ordering::Relaxed) {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let row = 1 + (seed % ROWS as u64) as i64;
        run(&mut begin).expect("begin");
        update.bind(1, Value::Integer(row)).expect("bind");
        run(&mut update).expect("update");
        match run(&mut commit) {
            Ok(()) => commits += 1,
            Err(_) => {
                conflicts += 1;
                commit.reset();
                if !c.is_autocommit() {
                    run(&mut rollback).expect("rollback");
                }
            }
        }
    }
    (commits, conflicts)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let threads: u64 = args.first().and_then(|a| a.parse().ok()).unwrap_or(2);
    let seconds: f64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(3.0);
    let shared = args.get(2).map_or("shared", String::as_str) == "shared";
    let dir = args.get(3).map_or("/tmp", String::as_str);
    let paths: Vec<String> = (0..threads)
        .map(|t| format!("{dir}/conc_dbs{}.db", if shared { 0 } else { t }))
        .collect();
    for p in &paths {
        for suffix in ["", "-wal", "-wal2", "-shm"] {
            let _ = std::fs::remove_file(format!("{p}{suffix}"));
        }
    }
    for p in paths.iter().take(if shared { 1 } else { paths.len() }) {
        fill(p);
    }
    let start = Arc::new(Barrier::new(threads as usize + 1));
    let stop = Arc::new(AtomicBool::new(false));
    let handles: Vec<_> = paths
        .iter()
        .enumerate()
        .map(|(t, p)| {
            let (p, start, stop) = (p.clone(), Arc::clone(&start), Arc::clone(&stop));
            std::thread::spawn(move || worker(&p, t as u64, &start, &stop))
        })
        .collect();
    start.wait();
    let (t0, cpu0) = (Instant::now(), cpu_time());
    std::thread::sleep(Duration::from_secs_f64(seconds));
    stop.store(true, Ordering::Relaxed);
    let done: Vec<(u64, u64)> = handles
        .into_iter()
        .map(|h| h.join().expect("worker"))
        .collect();
    let (wall, cpu) = (t0.elapsed(), cpu_time() - cpu0);
    let commits: u64 = done.iter().map(|d| d.0).sum();
    let conflicts: u64 = done.iter().map(|d| d.1).sum();
    println!(
        "threads={threads} db={} commits={commits} tps={:.0} conflicts={conflicts} cpu_us_per_commit={:.2}",
        if shared { "shared" } else { "separate" },
        commits as f64 / wall.as_secs_f64(),
        cpu.as_secs_f64() * 1e6 / commits.max(1) as f64,
    );
}
