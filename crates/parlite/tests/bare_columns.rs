//! Bare columns in aggregate queries (lang_select.html, "bare columns"), against SQLite
//! (rusqlite, bundled 3.50.2) as the oracle: `SELECT a, max(b) FROM t GROUP BY c` shows the
//! row holding the maximum, `SELECT a, count(*) FROM t` the first row, and the corners of
//! SQLite's code generation (several min()/max(), FILTER, DISTINCT, NULLs, HAVING on a bare
//! column) pick the same row as SQLite for the same scan order.

mod common;

use common::{check_script, Compare};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[test]
fn bare_columns_follow_sqlite() {
    check_script(
        "CREATE TABLE t(a, b, c);
         INSERT INTO t VALUES(1,5,1),(2,9,1),(3,2,1),(4,7,2),(5,1,2),(6,NULL,3),(7,4,3),(8,4,3),(9,NULL,3);
         SELECT a, max(b) FROM t GROUP BY c;
         SELECT a, min(b) FROM t GROUP BY c;
         SELECT a, count(*) FROM t;
         SELECT a, sum(b) FROM t GROUP BY c;
         SELECT a, max(b), min(b) FROM t;
         SELECT a, min(b), max(b) FROM t;
         SELECT a, max(b) FROM t;
         SELECT a, count(*) FROM t WHERE 0;
         SELECT a, max(b) FROM t WHERE 0;
         SELECT a, count(*) FROM t GROUP BY c HAVING a > 1;
         SELECT a, b, max(b) + min(b) FROM t;
         SELECT c, a, max(b) FILTER (WHERE a < 3) FROM t GROUP BY c;
         SELECT a, max(b) FILTER (WHERE a > 3) FROM t;
         SELECT a, min(b) FILTER (WHERE a > 100), count(*) FROM t;
         SELECT a, max(DISTINCT b), count(*) FROM t GROUP BY c;
         SELECT a, min(DISTINCT b) FROM t;
         SELECT a, max(b) FROM t WHERE c = 3;
         SELECT a, min(b) FROM t WHERE c = 3;
         SELECT a, max(b) FROM t GROUP BY c HAVING max(b) > 4;
         SELECT a, count(b), group_concat(a) FROM t GROUP BY c;
         CREATE TABLE u(x TEXT COLLATE NOCASE, y);
         INSERT INTO u VALUES('b',1),('B',2),('a',3),('A',4),('b',5);
         SELECT x, count(*) FROM u GROUP BY x;
         SELECT x, max(y) FROM u GROUP BY x;
         SELECT x, min(x), y FROM u;
         SELECT y, max(x) FROM u;",
        Compare::default(),
    );
}

/// Seeded random aggregate queries over a table with NULLs and duplicates: every query's
/// rows (bare columns included) must be SQLite's.
#[test]
fn random_bare_column_queries_match_sqlite() {
    let mut rng = StdRng::seed_from_u64(0xba5e_c01);
    let mut script = String::from("CREATE TABLE r(a INTEGER, b, c TEXT, d REAL);\n");
    for i in 0..120 {
        let b = match rng.gen_range(0..5) {
            0 => "NULL".to_string(),
            _ => rng.gen_range(-4..6).to_string(),
        };
        let c = match rng.gen_range(0..4) {
            0 => "NULL".to_string(),
            k => format!("'g{k}'"),
        };
        let d = match rng.gen_range(0..3) {
            0 => "NULL".to_string(),
            _ => format!("{}.5", rng.gen_range(-3..4)),
        };
        script.push_str(&format!("INSERT INTO r VALUES({i},{b},{c},{d});\n"));
    }
    let aggs = [
        "max(b)",
        "min(b)",
        "count(*)",
        "sum(b)",
        "max(d)",
        "min(d)",
        "max(DISTINCT b)",
        "min(DISTINCT d)",
        "max(b) FILTER (WHERE a % 3 = 0)",
        "min(d) FILTER (WHERE b > 0)",
        "count(b) FILTER (WHERE d IS NULL)",
        "group_concat(a)",
    ];
    let wheres = ["", " WHERE b IS NOT NULL", " WHERE a > 50", " WHERE d < 1"];
    let groups = [
        "",
        " GROUP BY c",
        " GROUP BY b",
        " GROUP BY c, b % 2",
        " GROUP BY c HAVING a > 40",
    ];
    for _ in 0..1000 {
        let n = rng.gen_range(1..4);
        let list: Vec<&str> = (0..n).map(|_| aggs[rng.gen_range(0..aggs.len())]).collect();
        script.push_str(&format!(
            "SELECT a, b, c, d, {} FROM r{}{};\n",
            list.join(", "),
            wheres[rng.gen_range(0..wheres.len())],
            groups[rng.gen_range(0..groups.len())]
        ));
    }
    check_script(&script, Compare::default());
}
