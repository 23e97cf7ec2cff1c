//! ORDER BY under an application collation, both engines in one run:
//! `collate_sort ROWS REPS`. Each engine (parlite; SQLite through rusqlite, bundled) gets
//! an in-memory table `t(id INTEGER PRIMARY KEY, s TEXT)` of ROWS rows of 12 pseudo-random
//! mixed-case letters and the same collation `fold` (ASCII case folded, then bytes: what
//! NOCASE computes, but through the application's callback), then runs, REPS times,
//! alternating engines, `SELECT s FROM t ORDER BY s COLLATE fold` and, for the built-in
//! path, `... COLLATE nocase`, reading every row. Prints each run's milliseconds and the
//! median ratio SQLite / parlite (above 1: parlite faster).

use std::cmp::Ordering;
use std::time::Instant;

fn fold(a: &str, b: &str) -> Ordering {
    a.bytes()
        .map(|c| c.to_ascii_lowercase())
        .cmp(b.bytes().map(|c| c.to_ascii_lowercase()))
}

fn text(mut x: u64) -> String {
    (0..12)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            char::from(
                b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[(x >> 58) as usize % 52],
            )
        })
        .collect()
}

fn parlite_run(c: &parlite::Connection, sql: &str) -> usize {
    let (mut st, _) = c.prepare(sql).expect("prepare").expect("statement");
    let mut n = 0;
    while st.step().expect("step") {
        n += usize::from(matches!(st.column_ref(0), Ok(parlite::ValueRef::Text(_))));
    }
    n
}

fn sqlite_run(c: &rusqlite::Connection, sql: &str) -> usize {
    let mut st = c.prepare(sql).expect("prepare");
    let mut rows = st.raw_query();
    let mut n = 0;
    while let Some(r) = rows.next().expect("step") {
        n += usize::from(matches!(
            r.get_ref(0),
            Ok(rusqlite::types::ValueRef::Text(_))
        ));
    }
    n
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("ROWS REPS"))
        .collect();
    let (rows, reps) = (
        args.first().copied().unwrap_or(100_000),
        args.get(1).copied().unwrap_or(5),
    );
    let p = parlite::Connection::open(":memory:").expect("parlite");
    let s = rusqlite::Connection::open_in_memory().expect("sqlite");
    p.create_collation("fold", fold).expect("parlite collation");
    s.create_collation("fold", fold).expect("sqlite collation");
    let create = "CREATE TABLE t(id INTEGER PRIMARY KEY, s TEXT)";
    p.execute_batch(create).expect("parlite");
    s.execute_batch(create).expect("sqlite");
    p.execute_batch("BEGIN").expect("parlite");
    s.execute_batch("BEGIN").expect("sqlite");
    for i in 0..rows {
        let sql = format!("INSERT INTO t VALUES({i}, '{}')", text(i as u64 * 7919 + 1));
        p.execute_batch(&sql).expect("parlite insert");
        s.execute_batch(&sql).expect("sqlite insert");
    }
    p.execute_batch("COMMIT").expect("parlite");
    s.execute_batch("COMMIT").expect("sqlite");
    for coll in ["fold", "nocase"] {
        let sql = format!("SELECT s FROM t ORDER BY s COLLATE {coll}");
        let (mut pm, mut sm) = (Vec::new(), Vec::new());
        for _ in 0..reps {
            let t = Instant::now();
            assert_eq!(sqlite_run(&s, &sql), rows);
            sm.push(t.elapsed().as_secs_f64() * 1e3);
            let t = Instant::now();
            assert_eq!(parlite_run(&p, &sql), rows);
            pm.push(t.elapsed().as_secs_f64() * 1e3);
        }
        let show = |v: &[f64]| {
            v.iter()
                .map(|x| format!("{x:.1}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        println!(
            "collate={coll} rows={rows} sqlite_ms=[{}] parlite_ms=[{}] median_ratio={:.3}",
            show(&sm),
            show(&pm),
            median(sm.clone()) / median(pm.clone())
        );
    }
}
