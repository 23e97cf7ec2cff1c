//! Index walks stopped by a LIMIT and kept for the statement's next execution (or the
//! level's next outer row): `join_level` keeps a walk the LIMIT stopped in the middle of
//! its range, and the next execution restarts it over new bounds. Against SQLite
//! (rusqlite, bundled) on files with 1 KiB pages, seeded (`PARLITE_SEED` replays one seed):
//! hc_mixed's shape (`SELECT * ... WHERE substr(c,1,4)>=? ORDER BY substr(c,1,4) LIMIT ?`)
//! with TEXT, BLOB, NULL and overflowing rows, a BETWEEN walked in reverse, a NOCASE
//! index, a DESC index, OFFSET, and a correlated subquery whose LIMIT 1 stops its walk per
//! outer row; between executions the connection's own writes (inside and outside explicit
//! transactions, rolled back or committed), another connection's commits, and resets after
//! the first row.

mod common;

use common::{prepare_one, rows_of, sqlite_rows_of, Rng};
use parlite::{Statement, Value};

const SETUP: &str = "
    PRAGMA page_size=1024;
    CREATE TABLE t(a INTEGER PRIMARY KEY, b BLOB, c TEXT, d TEXT COLLATE NOCASE);
    CREATE INDEX t_c4 ON t(substr(c,1,4));
    CREATE INDEX t_d ON t(d);
    CREATE INDEX t_cdesc ON t(c DESC);
    CREATE TABLE u(k TEXT PRIMARY KEY, v TEXT);
";

/// The reused statements: ?1 (and ?3) bound the walk, ?2 is the LIMIT.
const QUERIES: &[&str] = &[
    "SELECT * FROM t WHERE substr(c,1,4)>=?1 ORDER BY substr(c,1,4) LIMIT ?2",
    "SELECT a, c, b FROM t WHERE substr(c,1,4) BETWEEN ?1 AND ?3 ORDER BY substr(c,1,4) DESC LIMIT ?2",
    "SELECT d, a FROM t WHERE d >= ?1 ORDER BY d LIMIT ?2",
    "SELECT * FROM t WHERE c > ?1 ORDER BY c DESC LIMIT ?2",
    "SELECT a, length(b), c FROM t WHERE substr(c,1,4)>=?1 ORDER BY substr(c,1,4) LIMIT ?2 OFFSET 3",
    "SELECT k, (SELECT a FROM t WHERE substr(c,1,4) >= u.v ORDER BY substr(c,1,4) LIMIT 1) \
     FROM u WHERE k >= ?1 ORDER BY k LIMIT ?2",
];

impl Rng {
    /// A short string over a small alphabet: many rows share a 4-character prefix.
    fn word(&mut self) -> String {
        let n = 1 + self.below(8) as usize;
        (0..n)
            .map(|_| char::from(b"abcAB0"[self.below(6) as usize]))
            .collect()
    }

    fn text_or_null(&mut self) -> String {
        match self.below(12) {
            0 => "NULL".to_string(),
            _ => format!("'{}'", self.word()),
        }
    }

    /// A BLOB (zeroblob: the same bytes in both files); one in eight overflows a 1 KiB
    /// page.
    fn blob(&mut self) -> String {
        match self.below(8) {
            0 => format!("zeroblob({})", 1000 + self.below(3000)),
            1 => "NULL".to_string(),
            _ => format!("zeroblob({})", self.below(200)),
        }
    }

    fn bound(&mut self) -> Value {
        match self.below(10) {
            0 => Value::Null,
            1 => Value::Integer(self.below(5) as i64),
            _ => Value::Text(self.word()),
        }
    }
}

/// A write to `t` or `u`, run by both engines.
fn write_sql(rng: &mut Rng) -> String {
    let a = 1 + rng.below(400);
    match rng.below(6) {
        0 => format!("DELETE FROM t WHERE a={a}"),
        1 => format!("UPDATE t SET c={} WHERE a={a}", rng.text_or_null()),
        2 => format!("UPDATE t SET b=zeroblob({}) WHERE a={a}", rng.below(3000)),
        3 => format!(
            "INSERT OR REPLACE INTO t VALUES({a}, zeroblob({}), {}, {})",
            rng.below(1500),
            rng.text_or_null(),
            rng.text_or_null()
        ),
        4 => format!(
            "DELETE FROM t WHERE substr(c,1,4) >= '{}' AND a % 7 = 0",
            rng.word()
        ),
        _ => format!(
            "INSERT OR REPLACE INTO u VALUES('{}', {})",
            rng.word(),
            rng.text_or_null()
        ),
    }
}

fn run_query(rng: &mut Rng, ps: &mut [Statement], ss: &mut [rusqlite::Statement], ctx: &str) {
    let q = rng.below(QUERIES.len() as u64) as usize;
    let limit = Value::Integer(match rng.below(6) {
        0 => 0,
        1 => -1,
        _ => 1 + rng.below(15) as i64,
    });
    let binds = [rng.bound(), limit, rng.bound()];
    let n = if q == 1 { 3 } else { 2 };
    let got = rows_of(&mut ps[q], &binds[..n]);
    let want = sqlite_rows_of(&mut ss[q], &binds[..n]);
    assert_eq!(got, want, "{ctx}: {} with {binds:?}", QUERIES[q]);
}

fn run_seed(seed: u64) {
    let pair = common::Pair::on_files("limit-walks");
    pair.own(SETUP);
    let mut rng = Rng(seed);
    let mut rows = String::from("BEGIN;");
    for a in 1..=400 {
        let b = rng.blob();
        let (c, d) = (rng.text_or_null(), rng.text_or_null());
        rows.push_str(&format!("INSERT INTO t VALUES({a}, {b}, {c}, {d});"));
    }
    for _ in 0..30 {
        let (k, v) = (rng.word(), rng.text_or_null());
        rows.push_str(&format!("INSERT OR REPLACE INTO u VALUES('{k}', {v});"));
    }
    rows.push_str("COMMIT;");
    pair.own(&rows);
    let mut ps: Vec<Statement> = QUERIES.iter().map(|q| prepare_one(&pair.p1, q)).collect();
    let mut ss: Vec<rusqlite::Statement> = QUERIES
        .iter()
        .map(|q| pair.s1.prepare(q).unwrap())
        .collect();
    for step in 0..300 {
        let ctx = format!("seed {seed} step {step}");
        match rng.below(100) {
            0..=54 => run_query(&mut rng, &mut ps, &mut ss, &ctx),
            55..=64 => pair.own(&write_sql(&mut rng)),
            65..=72 => pair.other(&write_sql(&mut rng)),
            73..=89 => {
                // The kept walks in an explicit transaction that reads its own writes
                // between executions.
                pair.own("BEGIN");
                for _ in 0..4 {
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
                // A reset after the first row, then the walk reused.
                let k = rng.bound();
                let st = &mut ps[0];
                st.bind(1, k.clone()).unwrap();
                st.bind(2, Value::Integer(5)).unwrap();
                let first_p = match st.step().unwrap() {
                    true => Some((0..st.column_count()).map(|i| st.column(i)).collect()),
                    false => None,
                };
                st.reset();
                let first_s = sqlite_rows_of(&mut ss[0], &[k, Value::Integer(5)])
                    .into_iter()
                    .next();
                assert_eq!(first_p, first_s, "{ctx}: reset");
                run_query(&mut rng, &mut ps, &mut ss, &ctx);
            }
        }
    }
}

#[test]
fn limit_stopped_walks_match_sqlite() {
    for seed in common::seeds() {
        run_seed(seed);
    }
}
