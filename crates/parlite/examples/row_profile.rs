//! Profiling driver for reading rows through the API, both engines (issues 4 and 5):
//! `row_profile ENGINE WORKLOAD N [PATH]`, ENGINE `parlite` or `sqlite` (rusqlite, bundled).
//!
//! - `kv`: kv_ops' point select on a 1,000-key `:memory:` table (`SELECT value FROM
//!   test_table WHERE key=?`, prepared once, each execution its own autocommit
//!   transaction), N executions; the value is compared borrowed, as kv_ops.c's `strcmp`.
//! - `hc`: hc_mixed's scan (`SELECT * FROM tbl WHERE substr(c,1,16)>=? ORDER BY
//!   substr(c,1,16) LIMIT 10`) on the database at PATH (`tbl(a INTEGER PRIMARY KEY, b BLOB,
//!   c CHAR(64))` with index `tbl_i1 ON tbl(substr(c,1,16))`), N / 10 transactions of
//!   `BEGIN DEFERRED`, ten scans, `COMMIT`, every column of every row read borrowed.
//!   `ROW_MMAP=1`: SQLite reads the file through `PRAGMA mmap_size=1000000000`, as
//!   hc_mixed runs it; without, it copies pages into its 2 MB page cache with `pread`,
//!   which callgrind does not see (the kernel's copy), and its cache simulation then
//!   finds the pages where the copy left them.
//!
//! The keys are walked once before `phase` (the page cache warm, the plan cached), so
//! `valgrind --tool=callgrind --toggle-collect='row_profile::phase*' ...` counts only
//! the measured executions; instructions per statement = that count / N.

use parlite::{Connection, Statement, Value, ValueRef};

fn hex(mut x: u64, n: usize) -> String {
    let mut s = String::with_capacity(n);
    for _ in 0..n {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        s.push(char::from(b"0123456789abcdef"[(x >> 60) as usize]));
    }
    s
}

fn kv_keys(n: usize) -> (Vec<String>, Vec<String>) {
    let keys = (0..n).map(|i| hex(i as u64 * 2 + 1, 16)).collect();
    let vals = (0..n).map(|i| hex(i as u64 * 2 + 2, 32)).collect();
    (keys, vals)
}

/// `ROW_OWNED=1`: read through the copying `Statement::column` instead (the API before
/// `column_ref`).
fn owned() -> bool {
    static OWNED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *OWNED.get_or_init(|| std::env::var_os("ROW_OWNED").is_some())
}

/// Binds the key borrowed (`bind_ref`), or as an owned `Value` under `ROW_OWNED=1`.
fn bind_key(st: &mut Statement, k: &str) {
    match owned() {
        true => st.bind(1, Value::Text(k.to_string())),
        false => st.bind_ref(1, ValueRef::Text(k)),
    }
    .expect("bind");
}

/// Reads every column of every row of `st` borrowed; returns a length sum.
fn p_rows(st: &mut Statement) -> Result<usize, parlite::Error> {
    let mut n = 0;
    let ncol = st.column_count();
    while st.step()? {
        for i in 0..ncol {
            if owned() {
                n += match st.column(i) {
                    Value::Text(t) => t.len(),
                    Value::Blob(b) => b.len(),
                    _ => 1,
                };
                continue;
            }
            n += match st.column_ref(i)? {
                ValueRef::Null => 0,
                ValueRef::Integer(v) => v as usize & 1,
                ValueRef::Real(_) => 1,
                ValueRef::Text(t) => t.len(),
                ValueRef::Blob(b) => b.len(),
            };
        }
    }
    st.reset();
    Ok(n)
}

fn s_rows(st: &mut rusqlite::Statement) -> rusqlite::Result<usize> {
    use rusqlite::types::ValueRef as V;
    let mut n = 0;
    let ncol = st.column_count();
    let mut rows = st.raw_query();
    while let Some(r) = rows.next()? {
        for i in 0..ncol {
            n += match r.get_ref(i)? {
                V::Null => 0,
                V::Integer(v) => v as usize & 1,
                V::Real(_) => 1,
                V::Text(t) => t.len(),
                V::Blob(b) => b.len(),
            };
        }
    }
    Ok(n)
}

#[inline(never)]
fn loop_p_kv(st: &mut Statement, keys: &[String], vals: &[String]) -> usize {
    let mut ok = 0;
    for (k, v) in keys.iter().zip(vals) {
        bind_key(st, k);
        let hit = st.step().expect("step");
        let same = match owned() {
            true => st.column(0) == Value::Text(v.clone()),
            false => st.column_ref(0).expect("col").as_str() == Some(v),
        };
        if hit && same {
            ok += 1;
        }
        st.reset();
    }
    ok
}

#[inline(never)]
fn loop_s_kv(st: &mut rusqlite::Statement, keys: &[String], vals: &[String]) -> usize {
    let mut ok = 0;
    for (k, v) in keys.iter().zip(vals) {
        st.raw_bind_parameter(1, k.as_str()).expect("bind");
        let mut rows = st.raw_query();
        if let Some(r) = rows.next().expect("step") {
            if r.get_ref(0).expect("col").as_str().ok() == Some(v.as_str()) {
                ok += 1;
            }
        }
    }
    ok
}

#[inline(never)]
fn loop_p_hc(c: &Connection, st: &mut Statement, keys: &[String]) -> usize {
    let mut n = 0;
    for chunk in keys.chunks(10) {
        c.execute_batch("BEGIN DEFERRED").expect("begin");
        for k in chunk {
            bind_key(st, k);
            n += p_rows(st).expect("scan");
        }
        c.execute_batch("COMMIT").expect("commit");
    }
    n
}

#[inline(never)]
fn loop_s_hc(c: &rusqlite::Connection, st: &mut rusqlite::Statement, keys: &[String]) -> usize {
    let mut n = 0;
    for chunk in keys.chunks(10) {
        c.execute_batch("BEGIN DEFERRED").expect("begin");
        for k in chunk {
            st.raw_bind_parameter(1, k.as_str()).expect("bind");
            n += s_rows(st).expect("scan");
        }
        c.execute_batch("COMMIT").expect("commit");
    }
    n
}

/// The measured calls: `--toggle-collect='row_profile::phase*'` counts these only (the
/// warm-up passes call the loops directly).
#[inline(never)]
fn phase_p_kv(st: &mut Statement, keys: &[String], vals: &[String]) -> usize {
    loop_p_kv(st, keys, vals)
}

#[inline(never)]
fn phase_s_kv(st: &mut rusqlite::Statement, keys: &[String], vals: &[String]) -> usize {
    loop_s_kv(st, keys, vals)
}

#[inline(never)]
fn phase_p_hc(c: &Connection, st: &mut Statement, keys: &[String]) -> usize {
    loop_p_hc(c, st, keys)
}

#[inline(never)]
fn phase_s_hc(c: &rusqlite::Connection, st: &mut rusqlite::Statement, keys: &[String]) -> usize {
    loop_s_hc(c, st, keys)
}

const KV_SETUP: &str = "CREATE TABLE test_table(key TEXT PRIMARY KEY, value TEXT)";
const KV_INS: &str = "INSERT INTO test_table(key, value) VALUES(?,?)";
const KV_SEL: &str = "SELECT value FROM test_table WHERE key=?";
const HC_SCAN: &str = "SELECT * FROM tbl WHERE substr(c,1,16)>=? ORDER BY substr(c,1,16) LIMIT 10";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let engine = args.get(1).map(String::as_str).unwrap_or("parlite");
    let workload = args.get(2).map(String::as_str).unwrap_or("kv");
    let n: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let path = args.get(4).map(String::as_str).unwrap_or(":memory:");
    let t = std::time::Instant::now();
    let got = match (engine, workload) {
        ("parlite", "kv") => {
            let c = Connection::open(":memory:").expect("open");
            c.execute_batch(KV_SETUP).expect("create");
            let (keys, vals) = kv_keys(1000);
            let mut ins = c.prepare(KV_INS).expect("prepare").expect("one").0;
            for (k, v) in keys.iter().zip(&vals) {
                ins.bind(1, Value::Text(k.clone())).expect("bind");
                ins.bind(2, Value::Text(v.clone())).expect("bind");
                while ins.step().expect("insert") {}
                ins.reset();
            }
            let mut sel = c.prepare(KV_SEL).expect("prepare").expect("one").0;
            let (k, v): (Vec<_>, Vec<_>) = (0..n)
                .map(|i| (keys[i % 1000].clone(), vals[i % 1000].clone()))
                .unzip();
            loop_p_kv(&mut sel, &keys, &vals);
            phase_p_kv(&mut sel, &k, &v)
        }
        ("sqlite", "kv") => {
            let c = rusqlite::Connection::open_in_memory().expect("open");
            c.execute_batch(KV_SETUP).expect("create");
            let (keys, vals) = kv_keys(1000);
            let mut ins = c.prepare(KV_INS).expect("prepare");
            for (k, v) in keys.iter().zip(&vals) {
                ins.execute([k, v]).expect("insert");
            }
            let mut sel = c.prepare(KV_SEL).expect("prepare");
            let (k, v): (Vec<_>, Vec<_>) = (0..n)
                .map(|i| (keys[i % 1000].clone(), vals[i % 1000].clone()))
                .unzip();
            loop_s_kv(&mut sel, &keys, &vals);
            phase_s_kv(&mut sel, &k, &v)
        }
        ("parlite", "hc") => {
            let c = Connection::open(path).expect("open");
            let mut st = c.prepare(HC_SCAN).expect("prepare").expect("one").0;
            let keys: Vec<String> = (0..n).map(|i| hex(i as u64 + 77, 16)).collect();
            loop_p_hc(&c, &mut st, &keys[..keys.len().min(10)]);
            for k in &keys {
                bind_key(&mut st, k);
                p_rows(&mut st).expect("warm");
            }
            phase_p_hc(&c, &mut st, &keys)
        }
        ("sqlite", "hc") => {
            let c = rusqlite::Connection::open(path).expect("open");
            if std::env::var_os("ROW_MMAP").is_some() {
                c.execute_batch("PRAGMA mmap_size=1000000000")
                    .expect("mmap");
            }
            let mut st = c.prepare(HC_SCAN).expect("prepare");
            let keys: Vec<String> = (0..n).map(|i| hex(i as u64 + 77, 16)).collect();
            loop_s_hc(&c, &mut st, &keys[..keys.len().min(10)]);
            for k in &keys {
                st.raw_bind_parameter(1, k.as_str()).expect("bind");
                s_rows(&mut st).expect("warm");
            }
            phase_s_hc(&c, &mut st, &keys)
        }
        other => panic!("unknown engine/workload {other:?}"),
    };
    eprintln!(
        "{engine} {workload}: n={n} result={got} in {:.1} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
}
