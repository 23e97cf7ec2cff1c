//! A SELECT in autocommit mode returns its rows in chunks (parlite_sql's select/chunk.rs):
//! results larger than a chunk (1,024 rows or 4 MiB of TEXT and BLOB) must equal SQLite's
//! for every shape that takes part — full scans, rowid ranges both ways, filters run
//! inside the scan and outside it, joins whose outer row joins many rows or none — and
//! the statement reads one snapshot from its first step to its last, whatever commits
//! meanwhile, as SQLite's statement does.

mod common;

use common::{run_parlite, run_sqlite, temp_db_path, Out};
use parlite::Value;
use std::sync::atomic::Ordering;

/// A table of 5,000 rows with rowids that skip, a small table to join, a table of large
/// blobs (past the 4 MiB a chunk holds).
const SETUP: &str = "
    CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL);
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000)
    INSERT INTO t SELECT i * 3 + (i % 7), printf('row-%d-%s', i, hex(i * 7919)),
                         (i * 37 % 101) / 100.0 FROM n;
    CREATE TABLE u(x INTEGER, y TEXT);
    WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 119)
    INSERT INTO u SELECT i % 60, 'u' || i FROM n;
    CREATE TABLE w(a INTEGER PRIMARY KEY, z BLOB);
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40)
    INSERT INTO w SELECT i, randomblob(300000) FROM n;
";

const QUERIES: &[&str] = &[
    "SELECT * FROM t",
    "SELECT rowid, * FROM t",
    "SELECT b, a FROM t WHERE c > 0.5",
    "SELECT a FROM t WHERE a % 5 IN (SELECT x FROM u WHERE x < 3)",
    "SELECT t.a, u.y FROM t JOIN u ON u.x = t.a % 50",
    "SELECT t.a, u.y FROM t LEFT JOIN u ON u.x = t.a",
    "SELECT * FROM t WHERE a > 1000 AND a < 9000",
    "SELECT a FROM t ORDER BY a DESC",
    "SELECT a, b FROM t WHERE a < 8000 ORDER BY rowid DESC",
    "SELECT a, (SELECT count(*) FROM u WHERE x = t.a % 7) FROM t",
    "SELECT length(b), upper(b) FROM t WHERE b LIKE '%7%'",
    "SELECT a, z FROM w",
    "SELECT w.z, t.b FROM w JOIN t ON t.a = w.a * 3 + (w.a % 7)",
];

fn engines(
    tag: &str,
) -> (
    parlite::Connection,
    rusqlite::Connection,
    [common::TempDb; 2],
) {
    let (pdb, sdb) = (
        temp_db_path("streaming", &format!("{tag}-p")),
        temp_db_path("streaming", &format!("{tag}-s")),
    );
    let p = parlite::Connection::open(pdb.to_str().expect("path")).expect("parlite open");
    let s = rusqlite::Connection::open(&*sdb).expect("sqlite open");
    s.execute_batch("PRAGMA journal_mode=WAL").expect("wal");
    p.execute_batch(SETUP).expect("parlite setup");
    s.execute_batch(SETUP).expect("sqlite setup");
    // randomblob differs: give parlite SQLite's blobs.
    let mut read = s.prepare("SELECT a, z FROM w").expect("prepare");
    let blobs: Vec<(i64, Vec<u8>)> = read
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("query")
        .map(|r| r.expect("row"))
        .collect();
    drop(read);
    let (mut up, _) = p
        .prepare("UPDATE w SET z = ?2 WHERE a = ?1")
        .expect("prepare")
        .expect("statement");
    for (a, z) in blobs {
        up.bind(1, Value::Integer(a)).expect("bind");
        up.bind(2, Value::Blob(z)).expect("bind");
        while up.step().expect("update") {}
        up.reset();
    }
    (p, s, [pdb, sdb])
}

fn row_count(o: &Out) -> usize {
    match o {
        Out::Rows { rows, .. } => rows.len(),
        Out::Err(_) => 0,
    }
}

/// Rows in order, for a comparison that leaves row order out (the engines may join in
/// another order where the query says none).
fn sorted(o: Out) -> Out {
    match o {
        Out::Rows { names, mut rows } => {
            rows.sort_by_cached_key(|r| format!("{r:?}"));
            Out::Rows { names, rows }
        }
        e => e,
    }
}

#[test]
fn results_larger_than_a_chunk_equal_sqlites() {
    let (p, s, _files) = engines("equal");
    for q in QUERIES {
        let mine = run_parlite(&p, q);
        // Inside a transaction the statement runs whole: the same plan, every row in one
        // run, the order chunks must keep.
        p.execute_batch("BEGIN").expect("begin");
        let whole = run_parlite(&p, q);
        p.execute_batch("COMMIT").expect("commit");
        assert!(
            row_count(&whole) > 1024 || blob_bytes(&whole) > 4 << 20,
            "{q}: {} rows, not past a chunk",
            row_count(&whole)
        );
        assert!(
            mine == whole,
            "{q}: in chunks {} rows, whole {} rows; first difference at {:?}",
            row_count(&mine),
            row_count(&whole),
            first_difference(&mine, &whole)
        );
        let (mine, theirs) = (sorted(mine), sorted(run_sqlite(&s, q)));
        assert!(
            mine == theirs,
            "{q}: parlite {} rows, SQLite {} rows; first difference at {:?}",
            row_count(&mine),
            row_count(&theirs),
            first_difference(&mine, &theirs)
        );
    }
    // The same statements again, prepared once and run twice: the second run starts over.
    for q in QUERIES {
        let (mut st, _) = p.prepare(q).expect("prepare").expect("statement");
        let first = common::rows_of(&mut st, &[]);
        let second = common::rows_of(&mut st, &[]);
        assert_eq!(first.len(), second.len(), "{q}: a second run");
        assert!(first == second, "{q}: a second run returned other rows");
    }
}

fn blob_bytes(o: &Out) -> usize {
    match o {
        Out::Rows { rows, .. } => rows
            .iter()
            .flatten()
            .map(|v| match v {
                Value::Blob(b) => b.len(),
                _ => 0,
            })
            .sum(),
        Out::Err(_) => 0,
    }
}

fn first_difference(a: &Out, b: &Out) -> Option<usize> {
    match (a, b) {
        (Out::Rows { rows: x, .. }, Out::Rows { rows: y, .. }) => {
            (0..x.len().max(y.len())).find(|&i| x.get(i) != y.get(i))
        }
        _ => None,
    }
}

/// Steps `st` to the end, collecting column 0 as text, `after(n)` run after row n.
fn steps(st: &mut parlite::Statement, after: &mut dyn FnMut(usize)) -> Vec<String> {
    let mut out = Vec::new();
    while st.step().expect("step") {
        out.push(format!("{:?}", st.column(0)));
        after(out.len());
    }
    out
}

fn sqlite_steps(s: &rusqlite::Connection, sql: &str, after: &mut dyn FnMut(usize)) -> Vec<String> {
    let mut st = s.prepare(sql).expect("prepare");
    let mut rows = st.raw_query();
    let mut out = Vec::new();
    while let Some(r) = rows.next().expect("sqlite step") {
        out.push(format!(
            "{:?}",
            common::sqlite_value(r.get_ref(0).expect("col"))
        ));
        after(out.len());
    }
    out
}

/// Another connection deletes, updates and inserts rows while the statement is between
/// chunks: the statement reads the snapshot of its first step to its end, in both engines.
#[test]
fn a_statement_reads_one_snapshot_across_chunks() {
    let (p, s, files) = engines("snapshot");
    let p2 = parlite::Database::open(files[0].to_str().expect("path"))
        .expect("open")
        .connect()
        .expect("connect");
    let s2 = rusqlite::Connection::open(&*files[1]).expect("sqlite open");
    let change = |n: usize| {
        format!(
            "DELETE FROM t WHERE a % 2 = 0; UPDATE t SET b = 'changed';
             INSERT INTO t(a, b) SELECT a + {}, 'new' FROM t WHERE a < 100000;",
            n * 100000
        )
    };
    let sql = "SELECT b || ':' || a FROM t";
    let (mut st, _) = p.prepare(sql).expect("prepare").expect("statement");
    let mine = steps(&mut st, &mut |n| {
        if n == 10 || n == 3000 {
            p2.execute_batch(&change(n)).expect("parlite change");
        }
    });
    let theirs = sqlite_steps(&s, sql, &mut |n| {
        if n == 10 || n == 3000 {
            s2.execute_batch(&change(n)).expect("sqlite change");
        }
    });
    assert_eq!(mine.len(), 5000);
    assert!(
        mine == theirs,
        "first difference at {:?}",
        (0..5000).find(|&i| mine.get(i) != theirs.get(i))
    );
    // A new run reads the latest.
    let after = common::rows_of(&mut st, &[]);
    let theirs_after = sqlite_steps(&s, sql, &mut |_| {});
    assert_eq!(after.len(), theirs_after.len());
    assert!(after.iter().all(
        |r| matches!(&r[0], Value::Text(t) if t.starts_with("changed:") || t.starts_with("new:"))
    ));
}

/// The statement's own connection writes between steps (autocommit UPDATE and INSERT into
/// another table, a CREATE TABLE): every row of the table is still returned once, and the
/// writes all land.
#[test]
fn own_writes_between_chunks() {
    let (p, s, _files) = engines("own");
    for c in ["CREATE TABLE log(a)"] {
        p.execute_batch(c).expect("parlite");
        s.execute_batch(c).expect("sqlite");
    }
    let sql = "SELECT a FROM t";
    let (mut st, _) = p.prepare(sql).expect("prepare").expect("statement");
    let mut seen = Vec::new();
    while st.step().expect("step") {
        let Value::Integer(a) = st.column(0) else {
            panic!("rowid");
        };
        seen.push(a);
        if seen.len() % 700 == 0 {
            p.execute_batch(&format!(
                "UPDATE t SET b = 'seen' WHERE a = {a}; INSERT INTO log VALUES ({a});"
            ))
            .expect("write between steps");
        }
        if seen.len() == 2100 {
            p.execute_batch("CREATE TABLE made_while_reading(x)")
                .expect("create");
        }
    }
    let mut sorted = seen.clone();
    sorted.dedup();
    assert_eq!(sorted.len(), 5000, "every row once");
    let theirs = sqlite_steps(&s, sql, &mut |_| {});
    assert_eq!(
        seen.iter()
            .map(|a| format!("{:?}", Value::Integer(*a)))
            .collect::<Vec<_>>(),
        theirs
    );
    let check = |q: &str| run_parlite(&p, q);
    assert_eq!(
        check("SELECT count(*) FROM log"),
        Out::Rows {
            names: vec!["count(*)".into()],
            rows: vec![vec![Value::Integer(7)]]
        }
    );
    assert_eq!(
        check("SELECT count(*) FROM t WHERE b = 'seen'"),
        Out::Rows {
            names: vec!["count(*)".into()],
            rows: vec![vec![Value::Integer(7)]]
        }
    );
}

/// An error raised by a row of a later chunk ends the statement with SQLite's error after
/// the rows of the chunks before it; the next step runs the statement again.
#[test]
fn an_error_in_a_later_chunk() {
    let (p, s, _files) = engines("error");
    let sql = "SELECT a, CASE WHEN a = 9004 THEN abs(-9223372036854775808) END FROM t";
    let theirs = run_sqlite(&s, sql);
    let Out::Err(expected) = theirs else {
        panic!("SQLite returned {} rows, no error", row_count(&theirs));
    };
    let (mut st, _) = p.prepare(sql).expect("prepare").expect("statement");
    let mut n = 0;
    let err = loop {
        match st.step() {
            Ok(true) => n += 1,
            Ok(false) => panic!("no error after {n} rows"),
            Err(e) => break e,
        }
    };
    // Row 3,000 fails (a = 9004): the first chunk (1,024 rows) was returned before it.
    assert!((1024..3000).contains(&n), "{n} rows before the error");
    assert_eq!(err.message, expected);
    assert!(st.step().expect("starts again"));
    assert_eq!(st.column(0), Value::Integer(4));
}

/// `PRAGMA parlite_stats`' oldest_snapshot_age_ms as `c` reads it.
fn oldest_snapshot_ms(c: &parlite::Connection) -> i64 {
    let Out::Rows { rows, .. } = run_parlite(c, "PRAGMA parlite_stats") else {
        panic!("stats");
    };
    let row = rows
        .iter()
        .find(|r| r[0] == Value::Text("oldest_snapshot_age_ms".into()))
        .expect("oldest_snapshot_age_ms");
    match row[1] {
        Value::Integer(ms) => ms,
        ref v => panic!("{v:?}"),
    }
}

/// A statement between chunks holds its snapshot (the oldest, as old as the statement);
/// reset or dropped, it releases it.
#[test]
fn reset_releases_the_snapshot() {
    let (p, _s, files) = engines("reset");
    let p2 = parlite::Database::open(files[0].to_str().expect("path"))
        .expect("open")
        .connect()
        .expect("connect");
    for finish in ["reset", "drop"] {
        let (mut st, _) = p
            .prepare("SELECT a FROM t")
            .expect("prepare")
            .expect("statement");
        assert!(st.step().expect("step"));
        p2.execute_batch("UPDATE t SET b = 'x'").expect("update");
        std::thread::sleep(std::time::Duration::from_millis(300));
        let held = oldest_snapshot_ms(&p2);
        assert!(
            held >= 300,
            "{finish}: the statement's snapshot is {held} ms old"
        );
        match finish {
            "reset" => st.reset(),
            _ => drop(st),
        }
        let after = oldest_snapshot_ms(&p2);
        assert!(
            after < held,
            "{finish}: still {after} ms old (held: {held} ms)"
        );
    }
}

/// Rows are computed a chunk at a time: after the first step the filter has seen about
/// one chunk of rows, not the table (whose 5,000 rows a statement computed at its first
/// step before), whether the outputs are copied or moved out of the scanned row.
#[test]
fn rows_are_computed_a_chunk_at_a_time() {
    let (p, _s, _files) = engines("lazy");
    let calls = common::define_call_counter(&p, "seen");
    for q in [
        "SELECT * FROM t WHERE seen(a)",
        "SELECT rowid, b FROM t WHERE seen(a)",
        "SELECT a, upper(b) FROM t WHERE seen(a)",
        "SELECT t.a, u.y FROM t JOIN u ON u.x = t.a % 50 WHERE seen(t.a)",
        "SELECT a FROM t WHERE a > 100 AND seen(a) ORDER BY rowid DESC",
    ] {
        calls.store(0, Ordering::Relaxed);
        let (mut st, _) = p.prepare(q).expect("prepare").expect("statement");
        assert!(st.step().expect("step"), "{q}");
        let first = calls.load(Ordering::Relaxed);
        assert!(
            (1..=1024).contains(&first),
            "{q}: {first} rows computed for the first step"
        );
        let mut n = 1;
        while st.step().expect("step") {
            n += 1;
        }
        let all = calls.load(Ordering::Relaxed);
        assert!(all > 4000, "{q}: {all} rows computed in all");
        assert!(n > 1024, "{q}: {n} rows");
    }
}

/// A statement between chunks keeps its snapshot while a transaction larger than the
/// cache commits (it spills and checkpoints the whole log before writing past every
/// snapshot: storage pager D6), on the statement's own connection (no wait on itself; the
/// rest of the rows are the snapshot's, where SQLite's same connection may see its own
/// writes) and on another (the snapshot's rows, as SQLite's).
#[test]
fn a_spilled_commit_beside_a_pending_statement() {
    let (p, s, files) = engines("spill");
    let p2 = parlite::Database::open(files[0].to_str().expect("path"))
        .expect("open")
        .connect()
        .expect("connect");
    let s2 = rusqlite::Connection::open(&*files[1]).expect("sqlite open");
    let big = |round: usize| {
        format!(
            "PRAGMA cache_size = 10; BEGIN; UPDATE t SET b = 'new{round} ' || a;
             INSERT INTO t SELECT a + {}, b, c FROM t WHERE a < 100000; COMMIT;",
            (round + 1) * 100000
        )
    };
    let sql = "SELECT b || ':' || a FROM t WHERE a < 100000";
    let before = sqlite_steps(&s, sql, &mut |_| {});
    let (mut st, _) = p.prepare(sql).expect("prepare").expect("statement");
    let mine = steps(&mut st, &mut |n| {
        if n == 1 {
            p.execute_batch(&big(0)).expect("parlite big commit");
        }
    });
    assert_eq!(mine, before, "own connection's commit");
    s.execute_batch(&big(0)).expect("sqlite big commit");
    let mine = steps(&mut st, &mut |n| {
        if n == 1 {
            p2.execute_batch(&big(1)).expect("parlite big commit");
        }
    });
    let theirs = sqlite_steps(&s, sql, &mut |n| {
        if n == 1 {
            s2.execute_batch(&big(1)).expect("sqlite big commit");
        }
    });
    assert_eq!(mine.len(), 5000);
    assert!(
        mine == theirs,
        "another connection's commit: first difference at {:?}",
        (0..5000).find(|&i| mine.get(i) != theirs.get(i))
    );
    let q = "SELECT count(*), sum(b LIKE 'new1 %') FROM t";
    assert_eq!(run_parlite(&p, q), run_sqlite(&s, q));
    let Out::Rows { rows, .. } = run_parlite(&p, "PRAGMA parlite_stats") else {
        panic!("stats");
    };
    let spilled = rows
        .iter()
        .find(|r| r[0] == Value::Text("spilled_pages".into()))
        .map(|r| r[1].clone());
    assert!(
        matches!(spilled, Some(Value::Integer(n)) if n > 0),
        "the commits spilled: {spilled:?}"
    );
}
