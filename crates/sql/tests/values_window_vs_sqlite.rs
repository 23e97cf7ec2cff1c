//! Built-in window functions against SQLite's OVER clauses (the `rusqlite` bundled
//! library). PARLITE_SEED and PARLITE_CASES as in values_vs_sqlite.rs.
// Test inputs spell out SQLite's boundary values digit for digit.
#![allow(clippy::excessive_precision)]

mod values_support;
use values_support::*;

// ---------------------------------------------------------------------------------------
// Window functions

#[test]
fn generated_window_functions() {
    use parlite_sql::func::window::{evaluate_partition, Partition, WindowKind};
    let mut rng = StdRng::seed_from_u64(seed() ^ 13);
    let conn = Connection::open_in_memory().expect("open");
    conn.execute_batch("CREATE TABLE w(id INTEGER PRIMARY KEY, g, y, x)")
        .expect("create");
    let mut failures = Vec::new();
    let mut checked = 0;
    for round in 0..cases(150) {
        conn.execute("DELETE FROM w", []).expect("delete");
        let n = rng.gen_range(0..12);
        let mut rows = Vec::new();
        for id in 1..=n {
            let g = Value::Integer(rng.gen_range(0..3));
            let y = Value::Integer(rng.gen_range(0..4));
            let x = random_value(&mut rng);
            conn.execute(
                "INSERT INTO w VALUES (?1, ?2, ?3, ?4)",
                rusqlite::params_from_iter(
                    [Value::Integer(id), g.clone(), y.clone(), x.clone()]
                        .iter()
                        .map(to_rusqlite),
                ),
            )
            .expect("insert");
            rows.push((id, g, y, x));
        }
        let specs: Vec<(&str, WindowKind, Vec<Value>, bool, bool)> = vec![
            // (sql call, kind, constant extra args, ties in ORDER BY, sliding ROWS frame)
            ("row_number()", WindowKind::RowNumber, vec![], false, false),
            ("rank()", WindowKind::Rank, vec![], true, false),
            ("dense_rank()", WindowKind::DenseRank, vec![], true, false),
            (
                "percent_rank()",
                WindowKind::PercentRank,
                vec![],
                true,
                false,
            ),
            ("cume_dist()", WindowKind::CumeDist, vec![], true, false),
            (
                "ntile(3)",
                WindowKind::Ntile,
                vec![Value::Integer(3)],
                false,
                false,
            ),
            ("lag(x)", WindowKind::Lag, vec![], false, false),
            (
                "lag(x, 2, 'd')",
                WindowKind::Lag,
                vec![Value::Integer(2), Value::text("d")],
                false,
                false,
            ),
            ("lead(x)", WindowKind::Lead, vec![], false, false),
            (
                "lead(x, 0)",
                WindowKind::Lead,
                vec![Value::Integer(0)],
                false,
                false,
            ),
            (
                "first_value(x)",
                WindowKind::FirstValue,
                vec![],
                false,
                false,
            ),
            ("last_value(x)", WindowKind::LastValue, vec![], false, true),
            (
                "nth_value(x, 2)",
                WindowKind::NthValue,
                vec![Value::Integer(2)],
                false,
                true,
            ),
            ("last_value(x)", WindowKind::LastValue, vec![], true, false),
        ];
        for (call_sql, kind, extra, ties, sliding) in specs {
            checked += 1;
            let order = if ties { "y" } else { "y, id" };
            let frame = if sliding {
                " ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING"
            } else {
                ""
            };
            let sql = format!("SELECT id, {call_sql} OVER (PARTITION BY g ORDER BY {order}{frame}) FROM w ORDER BY id");
            let mut stmt = conn.prepare_cached(&sql).expect("prepare");
            let want: Vec<(i64, Value)> = stmt
                .query_map([], |r| Ok((r.get::<_, i64>(0)?, from_ref(r.get_ref(1)?))))
                .expect("query")
                .map(|r| r.expect("row"))
                .collect();
            // parlite: partition by g, sort by (y[, id]), peers by y (or unique), frames.
            let mut got: Vec<(i64, Value)> = Vec::new();
            let mut parts: Vec<Value> = rows.iter().map(|r| r.1.clone()).collect();
            parts.sort_by(|a, b| a.compare(b, Collation::Binary));
            parts.dedup();
            for pg in parts {
                let mut part: Vec<&(i64, Value, Value, Value)> =
                    rows.iter().filter(|r| r.1 == pg).collect();
                part.sort_by(|a, b| a.2.compare(&b.2, Collation::Binary).then(a.0.cmp(&b.0)));
                let m = part.len();
                let mut peer = Vec::with_capacity(m);
                for i in 0..m {
                    let same = i > 0
                        && ties
                        && part[i].2.compare(&part[i - 1].2, Collation::Binary) == Ordering::Equal;
                    peer.push(if i == 0 {
                        0
                    } else if same {
                        peer[i - 1]
                    } else {
                        peer[i - 1] + 1
                    });
                }
                let frames: Vec<(usize, usize)> = (0..m)
                    .map(|i| {
                        if sliding {
                            (i.saturating_sub(1), (i + 2).min(m))
                        } else {
                            let mut end = i + 1;
                            while end < m && peer[end] == peer[i] {
                                end += 1;
                            }
                            (0, end)
                        }
                    })
                    .collect();
                let args: Vec<Vec<Value>> = part
                    .iter()
                    .map(|r| {
                        let mut a = if matches!(kind, WindowKind::Ntile) {
                            vec![]
                        } else {
                            vec![r.3.clone()]
                        };
                        a.extend(extra.iter().cloned());
                        a
                    })
                    .collect();
                let vals = evaluate_partition(
                    kind,
                    &Partition {
                        args: &args,
                        peer_group: &peer,
                        frames: &frames,
                    },
                )
                .expect("window");
                for (r, v) in part.iter().zip(vals) {
                    got.push((r.0, v));
                }
            }
            got.sort_by_key(|(id, _)| *id);
            let ok = want.len() == got.len()
                && want
                    .iter()
                    .zip(&got)
                    .all(|(w, g)| w.0 == g.0 && same(&w.1, &g.1));
            if !ok {
                failures.push(format!(
                    "round {round}: {sql}\n    sqlite  {want:?}\n    parlite {got:?}"
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {checked} differ:\n{}",
        failures.len(),
        failures
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// Aggregates used as window functions over the default growing frame: one step per row,
/// `Aggregate::value` read after each (ORDER BY id makes every row its own peer group).
#[test]
fn aggregate_windows_over_growing_frames() {
    let mut rng = StdRng::seed_from_u64(seed() ^ 15);
    let conn = Connection::open_in_memory().expect("open");
    conn.execute_batch("CREATE TABLE w(id INTEGER PRIMARY KEY, x)")
        .expect("create");
    let mut failures = Vec::new();
    for round in 0..cases(150) {
        conn.execute("DELETE FROM w", []).expect("delete");
        let n = rng.gen_range(0..10);
        let xs: Vec<Value> = (0..n)
            .map(|_| match rng.gen_range(0..3) {
                0 => Value::Integer(rng.gen_range(-5..5)),
                1 => Value::real(rng.gen_range(-5.0..5.0)),
                _ => random_value(&mut rng),
            })
            .collect();
        for (i, x) in xs.iter().enumerate() {
            conn.execute(
                "INSERT INTO w VALUES (?1, ?2)",
                rusqlite::params_from_iter(
                    [Value::Integer(i as i64), x.clone()]
                        .iter()
                        .map(to_rusqlite),
                ),
            )
            .expect("insert");
        }
        for (sql_call, name, n_args) in [
            ("sum(x)", "sum", 1),
            ("total(x)", "total", 1),
            ("avg(x)", "avg", 1),
            ("count(x)", "count", 1),
            ("count(*)", "count", 0),
            ("min(x)", "min", 1),
            ("max(x)", "max", 1),
            ("group_concat(x)", "group_concat", 1),
        ] {
            let sql = format!("SELECT {sql_call} OVER (ORDER BY id) FROM w ORDER BY id");
            let mut stmt = conn.prepare_cached(&sql).expect("prepare");
            let want: Vec<Result<Value, String>> =
                match stmt.query_map([], |r| Ok(from_ref(r.get_ref(0)?))) {
                    Ok(rows) => rows.map(|r| r.map_err(err_msg)).collect(),
                    Err(e) => vec![Err(err_msg(e))],
                };
            let def = func::lookup(name, n_args).expect("lookup");
            let mut acc = def
                .new_aggregate(false, Collation::Binary, &[])
                .expect("aggregate");
            let mut got = Vec::new();
            for x in &xs {
                let args = if n_args == 0 { vec![] } else { vec![x.clone()] };
                match acc.step(&args).and_then(|_| acc.value()) {
                    Ok(v) => got.push(Ok(v)),
                    Err(e) => {
                        got.push(Err(e.to_string()));
                        break;
                    }
                }
            }
            // An error ends SQLite's statement at that row; compare up to the first error.
            let ok = want.iter().zip(&got).all(|(w, g)| match (w, g) {
                (Ok(w), Ok(g)) => same(w, g) || both_replaced(w, g),
                (Err(w), Err(g)) => w == g,
                _ => false,
            }) && (want.len() == got.len()
                || want.last().is_some_and(|w| w.is_err())
                || got.last().is_some_and(|g| g.is_err()));
            if !ok && !diverges_by_design(&sql, &xs) {
                failures.push(format!(
                    "round {round}: {sql} over {xs:?}\n    sqlite  {want:?}\n    parlite {got:?}"
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} differ:\n{}",
        failures.len(),
        failures
            .iter()
            .take(8)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
