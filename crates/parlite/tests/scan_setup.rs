//! What a SELECT decides before and after its scan, against SQLite (rusqlite, bundled):
//! which WHERE terms are constant (SQLite evaluates those before any loop, so one that fails
//! fails the statement even over an empty table, while a term reading a column, an
//! aggregate, a subquery or a non-deterministic function is evaluated per row only);
//! LIMIT and OFFSET evaluated once, the rows a capped scan returns cut only when they exceed
//! them (compounds, groups, DISTINCT, OFFSET); a LIMIT or EXISTS stopping its scan without
//! swallowing a real error; and reused statements whose index walks restart over new
//! bounds, with and without an equality prefix (the bound rows handed back by the previous
//! execution take the new keys). Seeded (`PARLITE_SEED` replays one seed).

mod common;

use common::{
    assert_no_mismatches, prepare_one, rows_of, seeds, sqlite_rows_of, statement_mismatches, Rng,
};
use parlite::Value;

const TABLES: &str = "
    CREATE TABLE t0(a INTEGER PRIMARY KEY, b, c TEXT);
    CREATE INDEX t0_c2 ON t0(substr(c,1,2));
    CREATE TABLE t1(a INTEGER PRIMARY KEY, b, c TEXT);
    CREATE INDEX t1_c2 ON t1(substr(c,1,2));
    CREATE INDEX t1_bc ON t1(b, substr(c,1,2));
    INSERT INTO t1(b, c) VALUES (1,'aa1'),(2,'ab2'),(1,'ba3'),(NULL,'bb4'),(2,NULL),(3,'ca6'),
        (1,'cb7'),(2,'aa8'),(3,'ab9'),(1,'ba10'),(2,'zz11'),(3,'az12');
";

/// `abs(-9223372036854775808)` fails with "integer overflow" whenever it is evaluated.
const OVERFLOW: &str = "abs(-9223372036854775808)";

fn script(stmts: &[String]) -> Vec<String> {
    let mut all: Vec<String> = TABLES
        .split(';')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect();
    all.extend(stmts.iter().cloned());
    all
}

fn mismatches_of(stmts: &[String]) -> Vec<String> {
    let all = script(stmts);
    let refs: Vec<&str> = all.iter().map(String::as_str).collect();
    statement_mismatches(&refs)
}

#[test]
fn constant_terms_fail_before_the_scan_and_varying_ones_only_per_row() {
    let terms = [
        // Constant: evaluated before the loop, so the error shows over an empty table too.
        format!("{OVERFLOW} > 0"),
        format!("{OVERFLOW}"),
        format!("-({OVERFLOW}) < 0"),
        format!("(1 + (2 * {OVERFLOW})) IS NOT NULL"),
        format!("CASE WHEN 1 THEN {OVERFLOW} END"),
        format!("{OVERFLOW} BETWEEN 1 AND 2"),
        format!("{OVERFLOW} IN (1, 2)"),
        format!("1 IN ({OVERFLOW}, 2)"),
        format!("coalesce(NULL, {OVERFLOW}) > ?1"),
        format!("substr('abc', 1, {OVERFLOW}) = 'a'"),
        // Varying: a column, however deep, or a non-deterministic function.
        format!("ifnull(c, {OVERFLOW}) > 0"),
        format!("c > {OVERFLOW}"),
        format!("{OVERFLOW} < c"),
        format!("substr(c,1,2) >= {OVERFLOW}"),
        format!("CASE WHEN 1 THEN {OVERFLOW} + length(c) END"),
        format!("coalesce(NULL, 1 + abs(b), {OVERFLOW})"),
        format!("random() > {OVERFLOW}"),
        format!("{OVERFLOW} + (random() % 1) > 0"),
        format!("(SELECT {OVERFLOW}) > 0"),
        format!("EXISTS (SELECT 1 WHERE {OVERFLOW})"),
        format!("b IN (SELECT {OVERFLOW})"),
        format!("abs(b) + {OVERFLOW} > 0"),
    ];
    let mut stmts = Vec::new();
    for t in &terms {
        let t = t.replace("?1", "0");
        for table in ["t0", "t1"] {
            stmts.push(format!("SELECT * FROM {table} WHERE {t}"));
            stmts.push(format!(
                "SELECT a FROM {table} WHERE substr(c,1,2) >= 'a' AND {t}"
            ));
            stmts.push(format!(
                "SELECT a, c FROM {table} WHERE {t} AND substr(c,1,2) >= 'b' \
                 ORDER BY substr(c,1,2) LIMIT 3"
            ));
            stmts.push(format!("SELECT count(*) FROM {table} WHERE {t}"));
            stmts.push(format!(
                "SELECT x.a FROM {table} AS x JOIN t1 AS y ON y.a = x.a WHERE {t}"
            ));
        }
    }
    assert_no_mismatches(mismatches_of(&stmts));
}

#[test]
fn limit_and_offset_cut_what_the_scan_did_not() {
    let limits = [
        "LIMIT 0",
        "LIMIT 1",
        "LIMIT 3",
        "LIMIT 100",
        "LIMIT -1",
        "LIMIT 2 OFFSET 3",
        "LIMIT 3 OFFSET 0",
        "LIMIT -1 OFFSET 5",
        "LIMIT 5 OFFSET 100",
        "LIMIT (SELECT count(*) FROM t1) - 9",
        "LIMIT 2 + (random() % 1) OFFSET 1 + (random() % 1)",
        "LIMIT '2'",
        "LIMIT 2.0 OFFSET 1",
        "LIMIT 'x'",
        "LIMIT 2 OFFSET 'x'",
        "LIMIT NULL",
        "LIMIT 2 OFFSET -3",
    ];
    let bodies = [
        "SELECT a, c FROM t1",
        "SELECT a, c FROM t1 WHERE substr(c,1,2) >= 'ab'",
        "SELECT a, c FROM t1 WHERE substr(c,1,2) >= 'ab' ORDER BY substr(c,1,2)",
        "SELECT a, c FROM t1 ORDER BY c DESC",
        "SELECT b, count(*) FROM t1 GROUP BY b",
        "SELECT DISTINCT b FROM t1",
        "SELECT a FROM t1 UNION ALL SELECT a FROM t1",
        "SELECT b FROM t1 UNION SELECT a FROM t1",
        "SELECT a FROM t1 EXCEPT SELECT b FROM t1 ORDER BY 1 DESC",
        "SELECT a, c FROM t0",
        "SELECT a, sum(a) OVER (ORDER BY a) FROM t1",
    ];
    let mut stmts = Vec::new();
    for b in bodies {
        for l in limits {
            stmts.push(format!("{b} {l}"));
        }
    }
    // A LIMIT or EXISTS stopping the scan is not an error; a real error in the rows it
    // reads is.
    for l in ["LIMIT 1", "LIMIT 4", ""] {
        stmts.push(format!("SELECT a, b + {OVERFLOW} FROM t1 {l}"));
        stmts.push(format!("SELECT a FROM t1 WHERE b + {OVERFLOW} > 0 {l}"));
        stmts.push(format!(
            "SELECT a FROM t1 WHERE CASE WHEN a > 3 THEN {OVERFLOW} ELSE 1 END {l}"
        ));
    }
    stmts.push("SELECT EXISTS (SELECT 1 FROM t1 WHERE substr(c,1,2) >= 'b')".into());
    stmts.push(format!(
        "SELECT EXISTS (SELECT 1 FROM t1 WHERE CASE WHEN a > 1 THEN {OVERFLOW} ELSE 1 END)"
    ));
    stmts.push("SELECT min(substr(c,1,2)), max(substr(c,1,2)) FROM t1".into());
    stmts.push("SELECT min(substr(c,1,2)) FROM t1 WHERE substr(c,1,2) > 'ab'".into());
    stmts.push(
        "SELECT a, (SELECT y.a FROM t1 AS y WHERE substr(y.c,1,2) >= substr(x.c,1,2) \
         ORDER BY substr(y.c,1,2) LIMIT 1 OFFSET 1) FROM t1 AS x ORDER BY a"
            .into(),
    );
    assert_no_mismatches(mismatches_of(&stmts));
}

impl Rng {
    fn prefix2(&mut self) -> Value {
        match self.below(10) {
            0 => Value::Null,
            1 => Value::Integer(self.below(3) as i64),
            _ => Value::Text(
                (0..1 + self.below(2))
                    .map(|_| char::from(b"abcz"[self.below(4) as usize]))
                    .collect(),
            ),
        }
    }
}

/// Reused statements of several bound shapes, executed in a seeded order so that each
/// walk restarts from the rows another shape (or the same) handed back.
#[test]
fn reused_walks_take_each_executions_bounds() {
    let queries = [
        "SELECT * FROM t1 WHERE substr(c,1,2) >= ?1 ORDER BY substr(c,1,2) LIMIT ?3",
        "SELECT a, c FROM t1 WHERE substr(c,1,2) <= ?1 ORDER BY substr(c,1,2) DESC LIMIT ?3",
        "SELECT a FROM t1 WHERE substr(c,1,2) BETWEEN ?1 AND ?2 ORDER BY substr(c,1,2) LIMIT ?3",
        "SELECT a FROM t1 WHERE substr(c,1,2) > ?1 AND substr(c,1,2) < ?2 LIMIT ?3",
        "SELECT a, b FROM t1 WHERE b = ?3 AND substr(c,1,2) >= ?1 ORDER BY substr(c,1,2) LIMIT 2",
        "SELECT a FROM t1 WHERE b = ?3 AND substr(c,1,2) < ?2 ORDER BY b, substr(c,1,2) DESC",
        "SELECT a FROM t1 WHERE b = ?3 ORDER BY substr(c,1,2) LIMIT 3",
        "SELECT count(*) FROM t1 WHERE substr(c,1,2) = ?1",
    ];
    let mut failures = Vec::new();
    for seed in seeds() {
        let mut rng = Rng(seed);
        let s = rusqlite::Connection::open_in_memory().expect("sqlite");
        let p = parlite::Connection::open(":memory:").expect("parlite");
        s.execute_batch(TABLES).expect("sqlite setup");
        p.execute_batch(TABLES).expect("parlite setup");
        let mut ps: Vec<_> = queries.iter().map(|q| prepare_one(&p, q)).collect();
        let mut ss: Vec<_> = queries
            .iter()
            .map(|q| s.prepare(q).expect("sqlite prepare"))
            .collect();
        for step in 0..300 {
            let i = rng.below(queries.len() as u64) as usize;
            let binds = [
                rng.prefix2(),
                rng.prefix2(),
                Value::Integer(rng.below(5) as i64 - 1),
            ];
            // Bound up to the highest parameter the statement names (?2 may go unused).
            let count = (1..=3)
                .filter(|k| queries[i].contains(&format!("?{k}")))
                .max()
                .unwrap_or(0);
            let used = &binds[..count];
            let (a, b) = (sqlite_rows_of(&mut ss[i], used), rows_of(&mut ps[i], used));
            if a != b {
                failures.push(format!(
                    "seed {seed} step {step}: {}\n  binds {used:?}\n  sqlite:  {a:?}\n  parlite: {b:?}",
                    queries[i]
                ));
            }
        }
    }
    assert_no_mismatches(failures);
}
