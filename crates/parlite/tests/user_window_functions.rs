//! `Connection::create_window_function`: the application's aggregate window functions
//! (SQLite's `sqlite3_create_window_function`, windowfunctions.html#udfwinfunc) against
//! SQLite (rusqlite) with the same definitions: seeded rows in partitions, ROWS, RANGE and
//! GROUPS frames with every kind of edge, EXCLUDE and FILTER, where a moving frame start
//! takes rows back out with the function's inverse in SQLite's order (the results show
//! that order: `wcat` lists what its accumulator holds). An aggregate defined without
//! xValue/xInverse (`create_function`) used with OVER is SQLite's error, and the window
//! function still serves as a plain aggregate.
//!
//! `PARLITE_SEED=n` replays one seed.

mod common;

use common::{run_parlite, run_sqlite, Rng};
use parlite::{Aggregate, UserAggregate, UserImpl};
use parlite_sql::value::{Result as SqlResult, Value as SqlValue};
use rusqlite::functions::{Context, FunctionFlags, WindowAggregate};
use std::sync::Arc;

/// The text `wcat` keeps for one argument.
fn piece(v: &SqlValue) -> String {
    match v {
        SqlValue::Null => "N".to_string(),
        SqlValue::Integer(i) => i.to_string(),
        SqlValue::Real(r) => format!("{r:?}"),
        SqlValue::Text(t) => t.to_string(),
        SqlValue::Blob(b) => format!("x{}", b.len()),
    }
}

fn sqlite_piece(v: rusqlite::types::ValueRef<'_>) -> String {
    piece(&match common::sqlite_value(v) {
        parlite::Value::Null => SqlValue::Null,
        parlite::Value::Integer(i) => SqlValue::Integer(i),
        parlite::Value::Real(r) => SqlValue::Real(r),
        parlite::Value::Text(t) => SqlValue::text(t),
        parlite::Value::Blob(b) => SqlValue::Blob(b.into()),
    })
}

/// wcat(x): the frame's values joined with '.', oldest first; NULL for an empty frame.
/// wsum(x): the integer sum of the frame's integer arguments; NULL for an empty frame.
#[derive(Default)]
struct WState {
    pieces: std::collections::VecDeque<String>,
    sum: i64,
}

impl WState {
    fn cat(&self) -> Option<String> {
        (!self.pieces.is_empty()).then(|| self.pieces.iter().cloned().collect::<Vec<_>>().join("."))
    }
    fn sum(&self) -> Option<i64> {
        (!self.pieces.is_empty()).then_some(self.sum)
    }
}

struct PCat(bool);

struct PAcc {
    state: WState,
    sum: bool,
}

impl Aggregate for PAcc {
    fn step(&mut self, args: &[SqlValue]) -> SqlResult<()> {
        self.state.pieces.push_back(piece(&args[0]));
        if let SqlValue::Integer(i) = args[0] {
            self.state.sum += i;
        }
        Ok(())
    }
    fn finalize(&mut self) -> SqlResult<SqlValue> {
        self.value()
    }
    fn value(&self) -> SqlResult<SqlValue> {
        Ok(match self.sum {
            true => self.state.sum().map_or(SqlValue::Null, SqlValue::Integer),
            false => self.state.cat().map_or(SqlValue::Null, SqlValue::text),
        })
    }
    fn inverse(&mut self, args: &[SqlValue]) -> SqlResult<()> {
        self.state.pieces.pop_front();
        if let SqlValue::Integer(i) = args[0] {
            self.state.sum -= i;
        }
        Ok(())
    }
}

impl UserAggregate for PCat {
    fn accumulator(&self) -> Box<dyn Aggregate> {
        Box::new(PAcc {
            state: WState::default(),
            sum: self.0,
        })
    }
}

struct SCat(bool);

impl rusqlite::functions::Aggregate<WState, rusqlite::types::Value> for SCat {
    fn init(&self, _: &mut Context<'_>) -> rusqlite::Result<WState> {
        Ok(WState::default())
    }
    fn step(&self, ctx: &mut Context<'_>, acc: &mut WState) -> rusqlite::Result<()> {
        let v = ctx.get_raw(0);
        acc.pieces.push_back(sqlite_piece(v));
        if let rusqlite::types::ValueRef::Integer(i) = v {
            acc.sum += i;
        }
        Ok(())
    }
    fn finalize(
        &self,
        _: &mut Context<'_>,
        acc: Option<WState>,
    ) -> rusqlite::Result<rusqlite::types::Value> {
        Ok(self.out(acc.as_ref()))
    }
}

impl SCat {
    fn out(&self, acc: Option<&WState>) -> rusqlite::types::Value {
        use rusqlite::types::Value;
        match (self.0, acc) {
            (true, Some(a)) => a.sum().map_or(Value::Null, Value::Integer),
            (false, Some(a)) => a.cat().map_or(Value::Null, Value::Text),
            (_, None) => Value::Null,
        }
    }
}

impl WindowAggregate<WState, rusqlite::types::Value> for SCat {
    fn value(&self, acc: Option<&mut WState>) -> rusqlite::Result<rusqlite::types::Value> {
        Ok(self.out(acc.as_deref()))
    }
    fn inverse(&self, ctx: &mut Context<'_>, acc: &mut WState) -> rusqlite::Result<()> {
        acc.pieces.pop_front();
        if let rusqlite::types::ValueRef::Integer(i) = ctx.get_raw(0) {
            acc.sum -= i;
        }
        Ok(())
    }
}

/// isum(x): a plain aggregate (no xValue/xInverse) in both engines.
struct PISum;
struct PISumAcc(i64);

impl Aggregate for PISumAcc {
    fn step(&mut self, args: &[SqlValue]) -> SqlResult<()> {
        if let SqlValue::Integer(i) = args[0] {
            self.0 += i;
        }
        Ok(())
    }
    fn finalize(&mut self) -> SqlResult<SqlValue> {
        Ok(SqlValue::Integer(self.0))
    }
    fn value(&self) -> SqlResult<SqlValue> {
        Err(parlite_sql::value::SqlError::msg("isum has no xValue"))
    }
}

impl UserAggregate for PISum {
    fn accumulator(&self) -> Box<dyn Aggregate> {
        Box::new(PISumAcc(0))
    }
}

struct SISum;

impl rusqlite::functions::Aggregate<i64, i64> for SISum {
    fn init(&self, _: &mut Context<'_>) -> rusqlite::Result<i64> {
        Ok(0)
    }
    fn step(&self, ctx: &mut Context<'_>, acc: &mut i64) -> rusqlite::Result<()> {
        if let rusqlite::types::ValueRef::Integer(i) = ctx.get_raw(0) {
            *acc += i;
        }
        Ok(())
    }
    fn finalize(&self, _: &mut Context<'_>, acc: Option<i64>) -> rusqlite::Result<i64> {
        Ok(acc.unwrap_or(0))
    }
}

fn define_both(p: &parlite::Connection, s: &rusqlite::Connection) {
    let flags = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    p.create_window_function("wcat", Some(1), true, Some(Arc::new(PCat(false))))
        .expect("parlite wcat");
    p.create_window_function("wsum", Some(1), true, Some(Arc::new(PCat(true))))
        .expect("parlite wsum");
    p.create_function(
        "isum",
        Some(1),
        true,
        Some(UserImpl::Aggregate(Arc::new(PISum))),
    )
    .expect("parlite isum");
    s.create_window_function("wcat", 1, flags, SCat(false))
        .expect("sqlite wcat");
    s.create_window_function("wsum", 1, flags, SCat(true))
        .expect("sqlite wsum");
    s.create_aggregate_function("isum", 1, flags, SISum)
        .expect("sqlite isum");
}

fn pick<'a>(rng: &mut Rng, items: &[&'a str]) -> &'a str {
    items[rng.below(items.len() as u64) as usize]
}

const EDGES: &[&str] = &[
    "UNBOUNDED PRECEDING",
    "1 PRECEDING",
    "2 PRECEDING",
    "CURRENT ROW",
    "1 FOLLOWING",
    "3 FOLLOWING",
    "UNBOUNDED FOLLOWING",
];

/// A random window over `t`: partition, order, frame units and edges, EXCLUDE.
fn window(rng: &mut Rng) -> String {
    let partition = pick(rng, &["", "PARTITION BY g "]);
    let units = pick(rng, &["ROWS", "RANGE", "GROUPS"]);
    let order = match units {
        "RANGE" => pick(rng, &["ORDER BY k", "ORDER BY k DESC"]),
        _ => pick(rng, &["ORDER BY k, id", "ORDER BY k", "ORDER BY x, id"]),
    };
    let (mut a, mut b) = (rng.below(7) as usize, rng.below(7) as usize);
    if a > b {
        std::mem::swap(&mut a, &mut b);
    }
    // SQLite refuses UNBOUNDED FOLLOWING as a start and UNBOUNDED PRECEDING as an end.
    let a = a.min(5);
    let b = b.max(1);
    let exclude = pick(
        rng,
        &[
            "",
            "",
            " EXCLUDE CURRENT ROW",
            " EXCLUDE GROUP",
            " EXCLUDE TIES",
        ],
    );
    format!(
        "{partition}{order} {units} BETWEEN {} AND {}{exclude}",
        EDGES[a], EDGES[b]
    )
}

fn setup(rng: &mut Rng) -> Vec<String> {
    let mut out = vec!["CREATE TABLE t(id INTEGER PRIMARY KEY, g, k, x)".to_string()];
    for i in 0..40 {
        let x = match rng.below(6) {
            0 => "NULL".to_string(),
            1 => format!("'s{}'", rng.below(9)),
            _ => rng.below(20).to_string(),
        };
        out.push(format!(
            "INSERT INTO t VALUES({i}, {}, {}, {x})",
            rng.below(3),
            rng.below(12)
        ));
    }
    out
}

#[test]
fn window_functions_over_frames_match_sqlite() {
    let mut failures = Vec::new();
    for seed in common::seeds() {
        let p = parlite::Connection::open(":memory:").expect("parlite");
        let s = rusqlite::Connection::open_in_memory().expect("sqlite");
        define_both(&p, &s);
        let mut rng = Rng(seed);
        for stmt in setup(&mut rng) {
            p.execute_batch(&stmt).expect("parlite setup");
            s.execute_batch(&stmt).expect("sqlite setup");
        }
        let mut queries = vec![
            "SELECT wcat(x), wsum(x), isum(x) FROM t".to_string(),
            "SELECT g, wcat(x), wsum(x) FROM t GROUP BY g ORDER BY g".to_string(),
            "SELECT id, wcat(x) OVER (), wsum(x) OVER () FROM t ORDER BY id".to_string(),
            "SELECT id, wcat(x) OVER (ORDER BY k) FROM t ORDER BY id".to_string(),
            "SELECT id, isum(x) OVER (ORDER BY k) FROM t".to_string(),
            "SELECT id, isum(x) OVER w FROM t WINDOW w AS (ROWS 2 PRECEDING)".to_string(),
        ];
        for _ in 0..40 {
            let w = window(&mut rng);
            let filter = pick(&mut rng, &["", " FILTER (WHERE x > 3)"]);
            queries.push(format!(
                "SELECT id, wcat(x){filter} OVER ({w}), wsum(x){filter} OVER ({w}), \
                 sum(x){filter} OVER ({w}) FROM t ORDER BY id"
            ));
        }
        let mut answered = 0;
        for q in &queries {
            let (pr, sr) = (run_parlite(&p, q), run_sqlite(&s, q));
            answered += usize::from(matches!(sr, common::Out::Rows { .. }));
            if pr != sr {
                failures.push(format!(
                    "seed {seed}: {q}\n  parlite: {pr:?}\n  sqlite:  {sr:?}"
                ));
            }
        }
        // Only the two isum-with-OVER queries are errors.
        assert_eq!(answered, queries.len() - 2, "seed {seed}");
    }
    common::assert_no_mismatches(failures);
}

/// Deleting a window function, and redefining one as a plain aggregate: OVER then fails
/// as in SQLite.
#[test]
fn redefinition_changes_what_over_accepts() {
    let p = parlite::Connection::open(":memory:").expect("parlite");
    let s = rusqlite::Connection::open_in_memory().expect("sqlite");
    define_both(&p, &s);
    let setup = "CREATE TABLE t(x); INSERT INTO t VALUES(1), (2), (3);";
    p.execute_batch(setup).expect("parlite");
    s.execute_batch(setup).expect("sqlite");
    let q = "SELECT wsum(x) OVER (ROWS 1 PRECEDING) FROM t";
    assert_eq!(run_parlite(&p, q), run_sqlite(&s, q));
    p.create_window_function("wsum", Some(1), true, None)
        .expect("delete");
    s.remove_function("wsum", 1).expect("delete");
    assert_eq!(run_parlite(&p, q), run_sqlite(&s, q));
    p.create_function(
        "wsum",
        Some(1),
        true,
        Some(UserImpl::Aggregate(Arc::new(PISum))),
    )
    .expect("parlite");
    s.create_aggregate_function("wsum", 1, FunctionFlags::SQLITE_UTF8, SISum)
        .expect("sqlite");
    assert_eq!(run_parlite(&p, q), run_sqlite(&s, q));
}
