//! Result rows recycled between a prepared SELECT's executions (`CachedPlan::recycle_row`,
//! `Exec::result_row`): a row the caller has stepped past is written over by the next
//! execution, a TEXT or BLOB of the same length copied into its buffer, and the scan's own
//! slot overwritten in place row after row (`txnstore::owned_into`). Against SQLite
//! (rusqlite, bundled), seeded (`PARLITE_SEED` replays one seed): TEXT and BLOB of one
//! length with different bytes (multi-byte UTF-8 among them) so a stale or half-copied
//! buffer shows, of varying lengths, over 1 KiB (not kept), columns of mixed types, a column
//! output twice, expressions, scalar subqueries (nested rows of other widths taken from the
//! same pool: a UNION of them shows a recycled row's leftover values), UNION ALL of a TEXT
//! and a BLOB column, a sort, DISTINCT, more than the 64 rows kept; read borrowed
//! (`column_ref`) and copied (`column`); between executions the connection's own writes
//! (in transactions too), another connection's commits and resets after the first row.

mod common;

use common::{prepare_one, sqlite_rows_of, Rng};
use parlite::{Statement, Value};

const SETUP: &str = "
    PRAGMA page_size=1024;
    CREATE TABLE t(a INTEGER PRIMARY KEY, b BLOB, c TEXT, d);
    CREATE INDEX t_c4 ON t(substr(c,1,4));
    CREATE INDEX t_d ON t(d);
";

/// The reused statements; ?1 bounds the walk.
const QUERIES: &[&str] = &[
    "SELECT * FROM t WHERE substr(c,1,4)>=?1 ORDER BY substr(c,1,4) LIMIT 10",
    "SELECT c, b, c, a, b FROM t WHERE a>=?1 LIMIT 12",
    "SELECT a, c || 'x', length(b), b FROM t WHERE a>=?1 LIMIT 9",
    "SELECT d, a FROM t WHERE d>=?1 ORDER BY d LIMIT 20",
    "SELECT a, (SELECT c FROM t AS u WHERE u.a = t.a + 1), b FROM t WHERE a>=?1 LIMIT 8",
    "SELECT c FROM t WHERE a>=?1 AND a<?1+5 UNION ALL SELECT b FROM t WHERE a>=?1 AND a<?1+5",
    "SELECT b, c FROM t WHERE a>=?1 ORDER BY c DESC, a LIMIT 15",
    "SELECT DISTINCT length(c), substr(c,1,2) FROM t WHERE a>=?1 ORDER BY 1, 2 LIMIT 6",
    "SELECT c, d, b FROM t WHERE a>=?1",
    "SELECT a, b, c, (SELECT count(*) FROM (SELECT DISTINCT length(c) FROM t AS u \
     WHERE u.a < t.a + 3)) FROM t WHERE a>=?1 LIMIT 5",
    "SELECT a, b, c, (SELECT count(*) FROM (SELECT length(c) FROM t AS u WHERE u.a < t.a + 3 \
     UNION SELECT length(c) FROM t AS v WHERE v.a < t.a + 2)) FROM t WHERE a>=?1 LIMIT 5",
];

impl Rng {
    /// Mostly 12 bytes (the buffers are overwritten in place), sometimes another length.
    fn c_value(&mut self) -> String {
        let n = match self.below(10) {
            0 => return "NULL".to_string(),
            1 => 1 + self.below(30) as usize,
            2 => 1100 + self.below(200) as usize,
            _ => 12,
        };
        format!("'{}'", self.text_of(n))
    }

    /// Mostly 6 bytes of different content, sometimes another length or over 1 KiB.
    fn b_value(&mut self) -> String {
        match self.below(10) {
            0 => "NULL".to_string(),
            1 => format!("x'{:02x}'", self.below(256)),
            2 => format!("zeroblob({})", 1000 + self.below(2000)),
            _ => format!("x'{:012x}'", self.next() >> 16),
        }
    }

    /// Any storage class.
    fn d_value(&mut self) -> String {
        match self.below(6) {
            0 => "NULL".to_string(),
            1 => format!("{}", self.below(50)),
            2 => format!("{}.5", self.below(50)),
            3 => format!("x'{:04x}'", self.below(65536)),
            _ => format!("'{}'", self.text_of(4)),
        }
    }

    fn bound(&mut self) -> Value {
        match self.below(6) {
            0 => Value::Text(self.text_of(2)),
            1 => Value::Text(String::new()),
            2 => Value::Real(self.below(50) as f64),
            _ => Value::Integer(self.below(140) as i64),
        }
    }
}

/// A write to `t`, run by both engines.
fn write_sql(rng: &mut Rng) -> String {
    let a = 1 + rng.below(130);
    match rng.below(5) {
        0 => format!("DELETE FROM t WHERE a={a}"),
        1 => format!("UPDATE t SET c={} WHERE a={a}", rng.c_value()),
        2 => format!(
            "UPDATE t SET b={}, d={} WHERE a={a}",
            rng.b_value(),
            rng.d_value()
        ),
        _ => format!(
            "INSERT OR REPLACE INTO t VALUES({a}, {}, {}, {})",
            rng.b_value(),
            rng.c_value(),
            rng.d_value()
        ),
    }
}

fn run_query(rng: &mut Rng, ps: &mut [Statement], ss: &mut [rusqlite::Statement], ctx: &str) {
    let q = rng.below(QUERIES.len() as u64) as usize;
    let bind = rng.bound();
    let got = common::rows_read(&mut ps[q], &bind, rng.below(2) == 0);
    let want = sqlite_rows_of(&mut ss[q], std::slice::from_ref(&bind));
    assert_eq!(got, want, "{ctx}: {} with {bind:?}", QUERIES[q]);
}

fn run_seed(seed: u64) {
    let pair = common::Pair::on_files("recycled-rows");
    pair.own(SETUP);
    let mut rng = Rng(seed);
    let mut rows = String::from("BEGIN;");
    for a in 1..=120 {
        let (b, c, d) = (rng.b_value(), rng.c_value(), rng.d_value());
        rows.push_str(&format!("INSERT INTO t VALUES({a}, {b}, {c}, {d});"));
    }
    rows.push_str("COMMIT;");
    pair.own(&rows);
    let mut ps: Vec<Statement> = QUERIES.iter().map(|q| prepare_one(&pair.p1, q)).collect();
    let mut ss: Vec<rusqlite::Statement> = QUERIES
        .iter()
        .map(|q| pair.s1.prepare(q).unwrap())
        .collect();
    for step in 0..400 {
        let ctx = format!("seed {seed} step {step}");
        match rng.below(100) {
            0..=59 => run_query(&mut rng, &mut ps, &mut ss, &ctx),
            60..=69 => pair.own(&write_sql(&mut rng)),
            70..=77 => pair.other(&write_sql(&mut rng)),
            78..=89 => {
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
                // A reset after the first row: the row read goes back to the plan.
                let q = rng.below(QUERIES.len() as u64) as usize;
                let k = rng.bound();
                let st = &mut ps[q];
                st.bind(1, k.clone()).unwrap();
                let first_p = match st.step().unwrap() {
                    true => Some((0..st.column_count()).map(|i| st.column(i)).collect()),
                    false => None,
                };
                st.reset();
                let first_s = sqlite_rows_of(&mut ss[q], &[k]).into_iter().next();
                assert_eq!(first_p, first_s, "{ctx}: reset of {}", QUERIES[q]);
                run_query(&mut rng, &mut ps, &mut ss, &ctx);
            }
        }
    }
}

#[test]
fn recycled_result_rows_match_sqlite() {
    for seed in common::seeds() {
        run_seed(seed);
    }
}

/// One statement's rows of one length, executed over and over: each execution's values
/// are new bytes in the previous execution's buffers.
#[test]
fn same_length_values_change_between_executions() {
    let pair = common::Pair::on_files("recycled-same");
    pair.own(
        "CREATE TABLE k(a INTEGER PRIMARY KEY, b BLOB, c TEXT);
         CREATE INDEX k_c ON k(c);",
    );
    let mut ins = String::from("BEGIN;");
    for a in 0..200 {
        ins.push_str(&format!(
            "INSERT INTO k VALUES({a}, x'{:08x}', '{}');",
            a * 7919,
            format_args!("{:06}é", (a * 104729) % 1_000_000)
        ));
    }
    ins.push_str("COMMIT;");
    pair.own(&ins);
    let sql = "SELECT * FROM k WHERE c >= ?1 ORDER BY c LIMIT 10";
    let mut p = prepare_one(&pair.p1, sql);
    let mut s = pair.s1.prepare(sql).unwrap();
    for i in 0..60 {
        let bind = Value::Text(format!("{:06}", (i * 16661) % 1_000_000));
        let got = common::rows_read(&mut p, &bind, i % 2 == 0);
        let want = sqlite_rows_of(&mut s, std::slice::from_ref(&bind));
        assert_eq!(got, want, "execution {i} with {bind:?}");
        if i % 10 == 5 {
            // Rewritten in place (same lengths), so only the bytes differ.
            pair.other(&format!(
                "UPDATE k SET b = x'{:08x}', c = substr(c,1,5) || '{}é' WHERE a % 3 = {}",
                i * 31,
                i % 10,
                i % 3
            ));
        }
    }
}
