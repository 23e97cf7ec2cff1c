//! Index walks a prepared SELECT keeps between its executions (`CachedPlan::walks`:
//! detached from the store at the end of an execution, attached to the next one's and
//! restarted over its bounds), against SQLite (rusqlite, bundled) on files. Seeded
//! (`PARLITE_SEED` replays one seed): reused point lookups through an index, a covering
//! index and a WITHOUT ROWID table, a join and a correlated subquery whose inner walks are
//! kept, a range with LIMIT, and a TEMP table's walk joined to the main database's,
//! rebound with present, absent, NULL and integer keys; between executions, another connection's commits, schema changes by it (an index made
//! and dropped, ADD COLUMN with a default, the WITHOUT ROWID table rebuilt on new pages),
//! the connection's own writes, explicit transactions committed and rolled back, resets in
//! the middle of a result, executions that fail after their walk, and executions on
//! another thread.

mod common;

use common::{prepare_one, rows_of, sqlite_rows_of, Rng};
use parlite::{Statement, Value};

const SETUP: &str = "
    CREATE TABLE kv(k TEXT PRIMARY KEY, v TEXT);
    CREATE TABLE wr(k TEXT PRIMARY KEY, w INTEGER) WITHOUT ROWID;
";

/// The reused statements: each keeps one or two index walks between executions.
const QUERIES: &[&str] = &[
    "SELECT v FROM kv WHERE k=?1",
    "SELECT k FROM kv WHERE k=?1",
    "SELECT * FROM kv WHERE k=?1",
    "SELECT w FROM wr WHERE k=?1",
    "SELECT a.v, b.w FROM kv a JOIN wr b ON b.k = a.v WHERE a.k=?1",
    "SELECT k, (SELECT w FROM wr WHERE wr.k = kv.v) FROM kv WHERE k BETWEEN ?1 AND ?2 ORDER BY k",
    "SELECT k FROM kv WHERE k >= ?1 ORDER BY k LIMIT 3",
    "SELECT t.v, kv.v FROM tk t JOIN kv ON kv.k = t.v WHERE t.k=?1",
];

/// Fails after its walk found the row: abs() of the smallest integer overflows.
const FAILING: &str = "SELECT v, abs(?2) FROM kv WHERE k=?1";

impl Rng {
    fn key(&mut self) -> Value {
        match self.below(20) {
            0 => Value::Null,
            1 => Value::Integer(self.below(8) as i64),
            2 => Value::Text(self.below(8).to_string()),
            _ => Value::Text(format!("k{}", self.below(40))),
        }
    }
}

fn write_sql(rng: &mut Rng) -> String {
    let k = rng.below(40);
    match rng.below(4) {
        0 => format!("DELETE FROM kv WHERE k='k{k}'"),
        1 => format!("UPDATE wr SET w=w+1 WHERE k='k{}'", rng.below(40)),
        2 => format!(
            "INSERT OR REPLACE INTO wr VALUES('k{k}', {})",
            rng.below(1000)
        ),
        _ => format!(
            "INSERT OR REPLACE INTO kv(k, v) VALUES('k{k}', 'k{}')",
            rng.below(40)
        ),
    }
}

/// One execution of `QUERIES[q]` with fresh keys through both engines, compared.
fn run_query(
    rng: &mut Rng,
    ps: &mut [Statement],
    ss: &mut [rusqlite::Statement],
    q: usize,
    ctx: &str,
) {
    let binds = [rng.key(), rng.key()];
    let n = if q == 5 { 2 } else { 1 };
    let got = rows_of(&mut ps[q], &binds[..n]);
    let want = sqlite_rows_of(&mut ss[q], &binds[..n]);
    assert_eq!(got, want, "{ctx}: {} with {binds:?}", QUERIES[q]);
}

fn run_seed(seed: u64) {
    let pair = common::Pair::on_files("kept-walks");
    pair.own(SETUP);
    let mut rng = Rng(seed);
    for i in 0..40 {
        pair.own(&format!(
            "INSERT INTO kv VALUES('k{i}', 'k{}'); INSERT INTO wr VALUES('k{i}', {i});",
            rng.below(40)
        ));
    }
    pair.own("INSERT INTO kv VALUES('3', 'k3'); INSERT INTO wr VALUES('5', 55);");
    // A TEMP table (its own store and transaction) with the main table's keys shifted.
    pair.own("CREATE TEMP TABLE tk(k TEXT PRIMARY KEY, v TEXT)");
    for i in 0..40 {
        pair.own(&format!(
            "INSERT INTO tk VALUES('k{i}', 'k{}')",
            (i + 7) % 40
        ));
    }
    let mut ps: Vec<Statement> = QUERIES.iter().map(|q| prepare_one(&pair.p1, q)).collect();
    let mut ss: Vec<rusqlite::Statement> = QUERIES
        .iter()
        .map(|q| pair.s1.prepare(q).unwrap())
        .collect();
    let mut failing_p = prepare_one(&pair.p1, FAILING);
    let mut failing_s = pair.s1.prepare(FAILING).unwrap();
    let mut added = 0;
    for step in 0..300 {
        let ctx = format!("seed {seed} step {step}");
        match rng.below(100) {
            0..=59 => {
                let q = rng.below(QUERIES.len() as u64) as usize;
                run_query(&mut rng, &mut ps, &mut ss, q, &ctx);
            }
            60..=69 => pair.other(&write_sql(&mut rng)),
            70..=74 => pair.own(&write_sql(&mut rng)),
            75..=79 => {
                // The kept walks rebound to an explicit transaction, which reads its own
                // writes; then committed or rolled back.
                pair.own("BEGIN");
                for _ in 0..3 {
                    let q = rng.below(QUERIES.len() as u64) as usize;
                    run_query(&mut rng, &mut ps, &mut ss, q, &ctx);
                    pair.own(&write_sql(&mut rng));
                }
                let q = rng.below(QUERIES.len() as u64) as usize;
                run_query(&mut rng, &mut ps, &mut ss, q, &ctx);
                pair.own(if rng.below(2) == 0 {
                    "COMMIT"
                } else {
                    "ROLLBACK"
                });
            }
            80..=83 => {
                // A reset after the first row of a range, then the walk reused.
                let k = Value::Text(format!("k{}", rng.below(40)));
                let st = &mut ps[6];
                st.bind(1, k.clone()).unwrap();
                let first_p = match st.step().unwrap() {
                    true => Some(st.column(0)),
                    false => None,
                };
                st.reset();
                let first_s = sqlite_rows_of(&mut ss[6], &[k]).into_iter().next();
                assert_eq!(first_p, first_s.map(|r| r[0].clone()), "{ctx}: reset");
                run_query(&mut rng, &mut ps, &mut ss, 6, &ctx);
            }
            84..=87 => match rng.below(3) {
                0 => pair.other(if rng.below(2) == 0 {
                    "CREATE INDEX IF NOT EXISTS kv_v ON kv(v)"
                } else {
                    "DROP INDEX IF EXISTS kv_v"
                }),
                1 if added < 3 => {
                    added += 1;
                    pair.other(&format!(
                        "ALTER TABLE kv ADD COLUMN c{added} DEFAULT 'd{added}'"
                    ));
                }
                _ => pair.other(
                    "CREATE TABLE filler(x); INSERT INTO filler VALUES(randomblob(3000));
                     CREATE TABLE wr2(k TEXT PRIMARY KEY, w INTEGER) WITHOUT ROWID;
                     INSERT INTO wr2 SELECT * FROM wr; DROP TABLE wr; DROP TABLE filler;
                     CREATE TABLE wr(k TEXT PRIMARY KEY, w INTEGER) WITHOUT ROWID;
                     INSERT INTO wr SELECT * FROM wr2; DROP TABLE wr2;",
                ),
            },
            88..=93 => {
                // Fails after its walk when the key is there; the next execution of it
                // and of the others goes on as in SQLite.
                let k = format!("k{}", rng.below(40));
                let binds = [Value::Text(k.clone()), Value::Integer(i64::MIN)];
                for (i, b) in binds.iter().enumerate() {
                    failing_p.bind(i + 1, b.clone()).unwrap();
                }
                let got = failing_p.step().is_err();
                failing_p.reset();
                failing_s.raw_bind_parameter(1, k.as_str()).unwrap();
                failing_s.raw_bind_parameter(2, i64::MIN).unwrap();
                let want = failing_s.raw_query().next().is_err();
                assert_eq!(got, want, "{ctx}: failing execution");
                let ok = [binds[0].clone(), Value::Integer(-7)];
                assert_eq!(
                    rows_of(&mut failing_p, &ok),
                    sqlite_rows_of(&mut failing_s, &ok),
                    "{ctx}: after a failed execution"
                );
            }
            _ => {
                // Executed on another thread (a statement is `Send` with its kept walks),
                // and a fresh statement that kept its walk dropped on another thread.
                let q = rng.below(QUERIES.len() as u64) as usize;
                let binds = [rng.key(), rng.key()];
                let n = if q == 5 { 2 } else { 1 };
                let st = &mut ps[q];
                let got =
                    std::thread::scope(|sc| sc.spawn(|| rows_of(st, &binds[..n])).join().unwrap());
                assert_eq!(
                    got,
                    sqlite_rows_of(&mut ss[q], &binds[..n]),
                    "{ctx}: thread"
                );
                let mut fresh = prepare_one(&pair.p1, QUERIES[q]);
                rows_of(&mut fresh, &binds[..n]);
                std::thread::spawn(move || drop(fresh)).join().unwrap();
            }
        }
    }
    // Every statement once more at the end, after whatever the last steps did.
    for q in 0..QUERIES.len() {
        run_query(&mut rng, &mut ps, &mut ss, q, &format!("seed {seed} end"));
    }
}

#[test]
fn kept_walks_match_sqlite() {
    for seed in common::seeds() {
        run_seed(seed);
    }
}
