//! Result values moved out of the combined row (`exec::select::move_outputs`): when every
//! output of a SELECT is a column of its last source, none twice, each row's values are
//! swapped with the recycled result row's rather than copied, and the scan decodes its next
//! row into the buffers it got back (join.rs invariant E1). Against SQLite (rusqlite,
//! bundled), seeded (`PARLITE_SEED` replays one seed): plain column lists in and out of
//! table order, a column output twice or read again by an expression (not moved), joins
//! whose outputs come from the last source or from an earlier one (whose slots stay bound
//! across the later source's rows), LEFT/RIGHT/FULL JOIN rows without a match, rows written
//! before an ALTER TABLE ADD COLUMN (the default filled in), a WITHOUT ROWID table, a
//! covering index, DISTINCT, a subquery in FROM, full scans whose WHERE runs inside the
//! scan, an index walk with a WHERE term its bound does not imply; TEXT of one length with
//! different bytes (two-byte UTF-8 among them) so a stale buffer shows; the statements
//! reused across the connection's and another connection's writes and resets after the
//! first row.

mod common;

use common::{prepare_one, sqlite_rows_of, Rng};
use parlite::{Statement, Value};

const SETUP: &str = "
    PRAGMA page_size=1024;
    CREATE TABLE t(a INTEGER PRIMARY KEY, b BLOB, c TEXT, d);
    CREATE INDEX t_c3 ON t(substr(c,1,3));
    CREATE INDEX t_d ON t(d);
    CREATE TABLE u(k INTEGER, v TEXT, w BLOB);
    CREATE INDEX u_k ON u(k);
    CREATE TABLE w(p TEXT PRIMARY KEY, q, r BLOB) WITHOUT ROWID;
";

/// Added once the first rows are in, so those rows' records lack it.
const ADD_COLUMN: &str = "ALTER TABLE t ADD COLUMN e TEXT DEFAULT 'dflt-é'";

/// The reused statements, with whether their row order is defined (otherwise both sides
/// are compared sorted). ?1 bounds the walk.
const QUERIES: &[(&str, bool)] = &[
    (
        "SELECT * FROM t WHERE substr(c,1,3)>=?1 ORDER BY substr(c,1,3) LIMIT 10",
        true,
    ),
    // One term the walk's bound implies and one it does not (`join_level`'s
    // `all_implied`).
    (
        "SELECT * FROM t WHERE substr(c,1,3)>=?1 AND length(b) > 4 \
         ORDER BY substr(c,1,3) LIMIT 10",
        true,
    ),
    ("SELECT e, c, b, a, d FROM t WHERE a>=?1 LIMIT 15", true),
    ("SELECT c, b, c, e, e FROM t WHERE a>=?1 LIMIT 12", true),
    (
        "SELECT c, length(c), b, hex(b) FROM t WHERE a>=?1 LIMIT 12",
        true,
    ),
    ("SELECT b, c, e FROM t WHERE length(c) > ?1", false),
    ("SELECT e, b, a FROM t WHERE d > ?1 OR c < ?1", false),
    (
        "SELECT u.* FROM t JOIN u ON u.k = t.d WHERE t.a >= ?1",
        false,
    ),
    (
        "SELECT t.c, t.b FROM t JOIN u ON u.k = t.d WHERE t.a >= ?1",
        false,
    ),
    (
        "SELECT t.e, t.c FROM u JOIN t ON t.d = u.k WHERE u.k >= ?1",
        false,
    ),
    (
        "SELECT u.v, u.w FROM t LEFT JOIN u ON u.k = t.d WHERE t.a >= ?1",
        false,
    ),
    (
        "SELECT u.w, u.v FROM u RIGHT JOIN t ON u.k = t.d WHERE t.a >= ?1",
        false,
    ),
    (
        "SELECT t.c, t.b FROM u FULL JOIN t ON u.k = t.a WHERE coalesce(t.a, u.k) >= ?1",
        false,
    ),
    ("SELECT r, q, p FROM w WHERE p >= ?1 LIMIT 10", true),
    ("SELECT d FROM t WHERE d >= ?1 ORDER BY d", true),
    ("SELECT DISTINCT d FROM t WHERE a >= ?1", false),
    (
        "SELECT * FROM (SELECT c, b FROM t WHERE a >= ?1 LIMIT 20) WHERE length(c) > 2",
        false,
    ),
    ("SELECT c FROM t WHERE d >= ?1 ORDER BY d, a LIMIT 20", true),
];

impl Rng {
    /// Mostly 10 bytes (buffers handed back and forth keep their length), sometimes
    /// another length or NULL.
    fn text_value(&mut self) -> String {
        let n = match self.below(10) {
            0 => return "NULL".to_string(),
            1 => 1 + self.below(20) as usize,
            _ => 10,
        };
        format!("'{}'", self.text_of(n))
    }

    /// Mostly 5 bytes of different content, sometimes another length, NULL or an integer.
    fn blob_value(&mut self) -> String {
        match self.below(10) {
            0 => "NULL".to_string(),
            1 => format!("x'{:02x}'", self.below(256)),
            2 => format!("{}", self.below(100)),
            _ => format!("x'{:010x}'", self.next() >> 24),
        }
    }

    /// A join key or any storage class.
    fn key_value(&mut self) -> String {
        match self.below(8) {
            0 => "NULL".to_string(),
            1 => format!("{}.5", self.below(20)),
            2 => format!("'{}'", self.text_of(3)),
            _ => format!("{}", self.below(20)),
        }
    }

    fn bound(&mut self) -> Value {
        match self.below(6) {
            0 => Value::Text(self.text_of(2)),
            1 => Value::Real(self.below(20) as f64 + 0.5),
            _ => Value::Integer(self.below(90) as i64),
        }
    }
}

/// A write to one of the tables, run by both engines.
fn write_sql(rng: &mut Rng) -> String {
    let a = 1 + rng.below(90);
    match rng.below(7) {
        0 => format!("DELETE FROM t WHERE a={a}"),
        1 => format!(
            "UPDATE t SET c={}, e={} WHERE a={a}",
            rng.text_value(),
            rng.text_value()
        ),
        2 => format!(
            "UPDATE t SET b={}, d={} WHERE a={a}",
            rng.blob_value(),
            rng.key_value()
        ),
        3 => format!(
            "INSERT INTO u VALUES({}, {}, {})",
            rng.key_value(),
            rng.text_value(),
            rng.blob_value()
        ),
        4 => format!(
            "INSERT OR REPLACE INTO w VALUES('{}', {}, {})",
            rng.text_of(2),
            rng.key_value(),
            rng.blob_value()
        ),
        _ => format!(
            "INSERT OR REPLACE INTO t VALUES({a}, {}, {}, {}, {})",
            rng.blob_value(),
            rng.text_value(),
            rng.key_value(),
            rng.text_value()
        ),
    }
}

/// Rows in a canonical order, for a query whose order SQL leaves open.
fn sorted(mut rows: Vec<Vec<Value>>) -> Vec<Vec<Value>> {
    rows.sort_by_cached_key(|r| format!("{r:?}"));
    rows
}

fn run_query(rng: &mut Rng, ps: &mut [Statement], ss: &mut [rusqlite::Statement], ctx: &str) {
    let q = rng.below(QUERIES.len() as u64) as usize;
    let bind = rng.bound();
    let mut got = common::rows_read(&mut ps[q], &bind, rng.below(2) == 0);
    let mut want = sqlite_rows_of(&mut ss[q], std::slice::from_ref(&bind));
    if !QUERIES[q].1 {
        (got, want) = (sorted(got), sorted(want));
    }
    assert_eq!(got, want, "{ctx}: {} with {bind:?}", QUERIES[q].0);
}

fn run_seed(seed: u64) {
    let pair = common::Pair::on_files("moved-outputs");
    pair.own(SETUP);
    let mut rng = Rng(seed);
    let mut rows = String::from("BEGIN;");
    for a in 1..=60 {
        let (b, c, d) = (rng.blob_value(), rng.text_value(), rng.key_value());
        rows.push_str(&format!("INSERT INTO t VALUES({a}, {b}, {c}, {d});"));
    }
    for _ in 0..40 {
        let (k, v, w) = (rng.key_value(), rng.text_value(), rng.blob_value());
        rows.push_str(&format!("INSERT INTO u VALUES({k}, {v}, {w});"));
    }
    for _ in 0..30 {
        let (p, q, r) = (rng.text_of(2), rng.key_value(), rng.blob_value());
        rows.push_str(&format!(
            "INSERT OR REPLACE INTO w VALUES('{p}', {q}, {r});"
        ));
    }
    rows.push_str("COMMIT;");
    pair.own(&rows);
    pair.own(ADD_COLUMN);
    for a in 61..=80 {
        let (b, c, d, e) = (
            rng.blob_value(),
            rng.text_value(),
            rng.key_value(),
            rng.text_value(),
        );
        pair.own(&format!("INSERT INTO t VALUES({a}, {b}, {c}, {d}, {e})"));
    }
    let mut ps: Vec<Statement> = QUERIES.iter().map(|q| prepare_one(&pair.p1, q.0)).collect();
    let mut ss: Vec<rusqlite::Statement> = QUERIES
        .iter()
        .map(|q| pair.s1.prepare(q.0).unwrap())
        .collect();
    for step in 0..300 {
        let ctx = format!("seed {seed} step {step}");
        match rng.below(100) {
            0..=64 => run_query(&mut rng, &mut ps, &mut ss, &ctx),
            65..=74 => pair.own(&write_sql(&mut rng)),
            75..=82 => pair.other(&write_sql(&mut rng)),
            83..=91 => {
                pair.own("BEGIN");
                for _ in 0..3 {
                    run_query(&mut rng, &mut ps, &mut ss, &ctx);
                    pair.own(&write_sql(&mut rng));
                }
                run_query(&mut rng, &mut ps, &mut ss, &ctx);
                pair.own(if rng.below(2) == 0 {
                    "COMMIT"
                } else {
                    "ROLLBACK"
                });
            }
            _ => {
                // A reset after the first row of an ordered query: the row read goes back
                // to the plan with the values moved into it.
                let q = rng.below(QUERIES.len() as u64) as usize;
                if !QUERIES[q].1 {
                    continue;
                }
                let k = rng.bound();
                let st = &mut ps[q];
                st.bind(1, k.clone()).unwrap();
                let first_p = match st.step().unwrap() {
                    true => Some((0..st.column_count()).map(|i| st.column(i)).collect()),
                    false => None,
                };
                st.reset();
                let first_s = sqlite_rows_of(&mut ss[q], &[k]).into_iter().next();
                assert_eq!(first_p, first_s, "{ctx}: reset of {}", QUERIES[q].0);
                run_query(&mut rng, &mut ps, &mut ss, &ctx);
            }
        }
    }
}

#[test]
fn moved_result_values_match_sqlite() {
    for seed in common::seeds() {
        run_seed(seed);
    }
}

/// TEXT that is not UTF-8 still reads as its lossy conversion (value invariant 2) when
/// the scan decodes it into the buffer of a valid string of the same length, and valid
/// multi-byte TEXT of that length is taken whole.
#[test]
fn text_refills_validate_what_they_take() {
    let c = parlite::Connection::open(":memory:").expect("open");
    c.execute_batch(
        "CREATE TABLE x(a INTEGER PRIMARY KEY, s TEXT);
         INSERT INTO x VALUES(1, 'abc'), (2, CAST(x'61ff62' AS TEXT)), (3, 'xyz'),
                             (4, 'é!'), (5, CAST(x'c3a921' AS TEXT));",
    )
    .expect("setup");
    let mut st = prepare_one(&c, "SELECT s FROM x WHERE a >= ?1");
    for _ in 0..3 {
        let got = common::rows_of(&mut st, &[Value::Integer(1)]);
        let want: Vec<Vec<Value>> = ["abc", "a\u{fffd}b", "xyz", "é!", "é!"]
            .iter()
            .map(|s| vec![Value::Text(s.to_string())])
            .collect();
        assert_eq!(got, want);
    }
}
