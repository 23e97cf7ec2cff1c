//! Profiling driver for the per-statement path of reused prepared statements (kv_ops,
//! issue 4): `kv_profile PHASE [KEYS] [PATH]` prepares kv_ops' four statements, fills the
//! table, then runs PHASE (insert, select, update, delete) once per key inside `phase`, so
//! `valgrind --tool=callgrind --toggle-collect='kv_profile::phase' ...` counts only it.
//! PATH defaults to `:memory:`. With ENGINE `sqlite` (4th argument) the same statements run
//! through rusqlite (bundled SQLite; a file in WAL mode with `synchronous=FULL`, as
//! parlite-bench's kv_ops) inside `phase_sqlite`, so `--toggle-collect='kv_profile::phase*'`
//! measures either engine the same way.

use parlite::{Connection, Statement, Value};

fn key(i: usize) -> String {
    format!("{:016x}", (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

fn run(st: &mut Statement, binds: &[Value]) -> Result<usize, parlite::Error> {
    for (i, v) in binds.iter().enumerate() {
        st.bind(i + 1, v.clone())?;
    }
    let mut n = 0;
    while st.step()? {
        n += 1;
    }
    st.reset();
    Ok(n)
}

/// Fills the table outside `phase` (written differently from `phase`, so that the
/// compiler cannot merge the two loops into one function and the profile count the fill).
#[inline(never)]
fn fill(st: &mut Statement, binds: &[Vec<Value>]) -> Result<(), parlite::Error> {
    for b in binds.iter().rev() {
        run(st, std::hint::black_box(b))?;
    }
    Ok(())
}

#[inline(never)]
fn phase(st: &mut Statement, binds: &[Vec<Value>]) -> Result<usize, parlite::Error> {
    let mut rows = 0;
    for b in binds {
        rows += run(st, b)?;
    }
    Ok(rows)
}

fn run_sqlite(st: &mut rusqlite::Statement, binds: &[Value]) -> rusqlite::Result<usize> {
    for (i, v) in binds.iter().enumerate() {
        if let Value::Text(s) = v {
            st.raw_bind_parameter(i + 1, s.as_str())?;
        }
    }
    let mut n = 0;
    if st.readonly() {
        let mut rows = st.raw_query();
        while let Some(r) = rows.next()? {
            let v: String = r.get(0)?;
            std::hint::black_box(v);
            n += 1;
        }
    } else {
        st.raw_execute()?;
    }
    Ok(n)
}

#[inline(never)]
fn fill_sqlite(st: &mut rusqlite::Statement, binds: &[Vec<Value>]) -> rusqlite::Result<()> {
    for b in binds.iter().rev() {
        run_sqlite(st, std::hint::black_box(b))?;
    }
    Ok(())
}

#[inline(never)]
fn phase_sqlite(st: &mut rusqlite::Statement, binds: &[Vec<Value>]) -> rusqlite::Result<usize> {
    let mut rows = 0;
    for b in binds {
        rows += run_sqlite(st, b)?;
    }
    Ok(rows)
}

/// The same phases through rusqlite.
fn main_sqlite(which: &str, path: &str, binds: &Binds) -> rusqlite::Result<()> {
    let conn = rusqlite::Connection::open(path)?;
    if path != ":memory:" {
        conn.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))?;
        conn.execute_batch("PRAGMA synchronous=FULL")?;
    }
    conn.execute_batch("CREATE TABLE test_table(key TEXT PRIMARY KEY, value TEXT)")?;
    let mut ins = conn.prepare("INSERT INTO test_table(key, value) VALUES(?,?)")?;
    let mut sel = conn.prepare("SELECT value FROM test_table WHERE key=?")?;
    let mut upd = conn.prepare("UPDATE test_table SET value=? WHERE key=?")?;
    let mut del = conn.prepare("DELETE FROM test_table WHERE key=?")?;
    let t = std::time::Instant::now();
    let rows = match which {
        "insert" => phase_sqlite(&mut ins, &binds.ins)?,
        _ => {
            fill_sqlite(&mut ins, &binds.ins)?;
            match which {
                "select" => phase_sqlite(&mut sel, &binds.one_key)?,
                "update" => phase_sqlite(&mut upd, &binds.upd)?,
                "delete" => phase_sqlite(&mut del, &binds.one_key)?,
                other => panic!("unknown phase {other}"),
            }
        }
    };
    eprintln!(
        "sqlite {which}: {} statements, {rows} rows, {:?}",
        binds.ins.len(),
        t.elapsed()
    );
    Ok(())
}

struct Binds {
    ins: Vec<Vec<Value>>,
    one_key: Vec<Vec<Value>>,
    upd: Vec<Vec<Value>>,
}

fn main() -> Result<(), parlite::Error> {
    let args: Vec<String> = std::env::args().collect();
    let which = args.get(1).map(String::as_str).unwrap_or("select");
    let keys: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let path = args.get(3).map(String::as_str).unwrap_or(":memory:");
    if args.get(4).map(String::as_str) == Some("sqlite") {
        let text = |s: String| Value::Text(s);
        let binds = Binds {
            ins: (0..keys)
                .map(|i| vec![text(key(i)), text(format!("{:032}", i))])
                .collect(),
            one_key: (0..keys).map(|i| vec![text(key(i))]).collect(),
            upd: (0..keys)
                .map(|i| vec![text(format!("{:064}", i)), text(key(i))])
                .collect(),
        };
        main_sqlite(which, path, &binds).expect("sqlite run");
        return Ok(());
    }
    let conn = Connection::open(path)?;
    conn.execute_batch("CREATE TABLE test_table(key TEXT PRIMARY KEY, value TEXT)")?;
    let prep = |sql: &str| -> Result<Statement, parlite::Error> {
        Ok(conn.prepare(sql)?.expect("one statement").0)
    };
    let mut ins = prep("INSERT INTO test_table(key, value) VALUES(?,?)")?;
    let mut sel = prep("SELECT value FROM test_table WHERE key=?")?;
    let mut upd = prep("UPDATE test_table SET value=? WHERE key=?")?;
    let mut del = prep("DELETE FROM test_table WHERE key=?")?;
    let text = |s: String| Value::Text(s);
    let ins_b: Vec<Vec<Value>> = (0..keys)
        .map(|i| vec![text(key(i)), text(format!("{:032}", i))])
        .collect();
    let one_key: Vec<Vec<Value>> = (0..keys).map(|i| vec![text(key(i))]).collect();
    let upd_b: Vec<Vec<Value>> = (0..keys)
        .map(|i| vec![text(format!("{:064}", i)), text(key(i))])
        .collect();
    let t = std::time::Instant::now();
    let rows = match which {
        "insert" => phase(&mut ins, &ins_b)?,
        _ => {
            fill(&mut ins, &ins_b)?;
            match which {
                "select" => phase(&mut sel, &one_key)?,
                "update" => phase(&mut upd, &upd_b)?,
                "delete" => phase(&mut del, &one_key)?,
                other => panic!("unknown phase {other}"),
            }
        }
    };
    let elapsed = t.elapsed();
    let mut stats = prep("PRAGMA parlite_stats")?;
    let mut commits = Value::Null;
    while stats.step()? {
        if stats.column(0) == Value::Text("locked_commits".into()) {
            commits = stats.column(1);
        }
    }
    eprintln!(
        "{which}: {keys} statements, {rows} rows, {elapsed:?}; locked commits in all: {commits:?}"
    );
    Ok(())
}
