//! One-transaction bulk load, for peak memory (spill branch): `bulk_load ENGINE ROWS SYNC
//! PATH [CACHE_SIZE]`, ENGINE `parlite` or `sqlite` (rusqlite, bundled), SYNC `normal` or
//! `full`, CACHE_SIZE a `PRAGMA cache_size` value for both (default: each engine's own,
//! parlite 64 MiB, SQLite 2 MB).
//! Creates `t(id INTEGER PRIMARY KEY, n INTEGER, s TEXT)` in a fresh file PATH (WAL
//! mode), then inserts ROWS rows of ~300 bytes (a 280-byte text) in one transaction
//! through one prepared statement, and commits. Prints the load's and the commit's
//! seconds and the resident memory after the commit and at its peak (`VmRSS`, `VmHWM`);
//! run it under `/usr/bin/time -f "%e s %M KB"` for the same peak as the OS counts it.

use std::time::Instant;

fn text(i: i64) -> String {
    let mut x = i as u64;
    (0..280)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            char::from(b'a' + (x >> 59) as u8 % 26)
        })
        .collect()
}

/// `VmRSS` and `VmHWM` of this process, in KiB.
fn memory_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn parlite_load(path: &str, rows: i64, sync: &str, cache: &str) -> (f64, f64) {
    let c = parlite::Connection::open(path).expect("open");
    c.execute_batch(&format!(
        "PRAGMA journal_mode=wal; PRAGMA synchronous={sync}; {cache}
         CREATE TABLE t(id INTEGER PRIMARY KEY, n INTEGER, s TEXT)"
    ))
    .expect("schema");
    let started = Instant::now();
    c.execute_batch("BEGIN").expect("begin");
    let (mut st, _) = c
        .prepare("INSERT INTO t VALUES (?1, ?2, ?3)")
        .expect("prepare")
        .expect("statement");
    for i in 1..=rows {
        st.bind(1, parlite::Value::Integer(i)).expect("bind");
        st.bind(2, parlite::Value::Integer(i * 7)).expect("bind");
        st.bind(3, parlite::Value::Text(text(i))).expect("bind");
        while st.step().expect("insert") {}
        st.reset();
    }
    drop(st);
    let loaded = started.elapsed().as_secs_f64();
    c.execute_batch("COMMIT").expect("commit");
    (loaded, started.elapsed().as_secs_f64() - loaded)
}

fn sqlite_load(path: &str, rows: i64, sync: &str, cache: &str) -> (f64, f64) {
    let c = rusqlite::Connection::open(path).expect("open");
    c.execute_batch(&format!(
        "PRAGMA journal_mode=wal; PRAGMA synchronous={sync}; {cache}
         CREATE TABLE t(id INTEGER PRIMARY KEY, n INTEGER, s TEXT)"
    ))
    .expect("schema");
    let started = Instant::now();
    c.execute_batch("BEGIN").expect("begin");
    {
        let mut st = c
            .prepare("INSERT INTO t VALUES (?1, ?2, ?3)")
            .expect("prepare");
        for i in 1..=rows {
            st.execute(rusqlite::params![i, i * 7, text(i)])
                .expect("insert");
        }
    }
    let loaded = started.elapsed().as_secs_f64();
    c.execute_batch("COMMIT").expect("commit");
    (loaded, started.elapsed().as_secs_f64() - loaded)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 5 && args.len() != 6 {
        eprintln!("usage: bulk_load parlite|sqlite ROWS normal|full PATH [CACHE_SIZE]");
        std::process::exit(2);
    }
    let cache = match args.get(5) {
        Some(n) => format!("PRAGMA cache_size={n};"),
        None => String::new(),
    };
    let rows: i64 = args[2].parse().expect("ROWS");
    let (engine, sync, path) = (args[1].as_str(), args[3].as_str(), args[4].as_str());
    let (load_s, commit_s) = match engine {
        "parlite" => parlite_load(path, rows, sync, &cache),
        "sqlite" => sqlite_load(path, rows, sync, &cache),
        other => panic!("unknown engine {other}"),
    };
    let (rss, hwm) = memory_kib();
    println!(
        "{engine} rows={rows} sync={sync} cache={} load_s={load_s:.2} commit_s={commit_s:.2} \
         rss_after_commit_kib={rss} peak_rss_kib={hwm}",
        args.get(5).map_or("default", |s| s.as_str())
    );
}
