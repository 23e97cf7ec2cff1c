//! Differential tests of aggregates over index range walks: one-argument aggregates stepped
//! on their argument where it lies (`run_core_capped`), sum()/total()/avg() reading numbers
//! without a copy (`func::aggregate::Sum`), and a walk's far bound decided on each entry's
//! first field in place (`storage::record::FirstFieldOrder`, REALs included). Same SQL
//! through parlite and SQLite (rusqlite, bundled), seeded (`PARLITE_SEED` replays one):
//! every aggregate with NULLs, mixed storage classes, integer overflow and DISTINCT, over
//! covering and non-covering walks of ASC, DESC and NOCASE indexes, with closed, open,
//! one-sided and empty ranges and keys long enough to overflow their page.

mod common;
use common::*;

impl Rng {
    /// A value of any storage class, as SQL: integers of every width (some near the ends
    /// of the range, so sums overflow), reals (some integral), numeric-looking and other
    /// text in either case, blobs, NULLs, and now and then a key too long for its page.
    fn value(&mut self) -> String {
        match self.below(16) {
            0 | 1 => "NULL".into(),
            2..=4 => format!("{}", self.below(200) as i64 - 100),
            5 => format!("{}", 9_223_372_036_854_775_807 - self.below(1_000) as i64),
            6 => format!("{}", -9_223_372_036_854_775_807 + self.below(1_000) as i64),
            7..=9 => format!("{:.3}", (self.below(40_000) as f64 - 20_000.0) / 7.0),
            10 => format!("{}.0", self.below(200) as i64 - 100),
            11 => format!("'{}'", self.below(200) as i64 - 100),
            12 => {
                let w = ["abc", "ABD", "Abc", "b", "", " 5", "1e2", "zz"];
                format!("'{}'", w[self.below(w.len() as u64) as usize])
            }
            13 => format!("x'{:04x}'", self.below(0x10000)),
            14 => format!("'{}'", "k".repeat(1_500 + self.below(2_000) as usize)),
            // Reals past the integers' range (sum() goes to REAL); exponents stay small:
            // SQLite reads literals like 89e274 a unit in the last place off.
            _ => format!("{}.5e{}", self.below(100), 17 + self.below(4)),
        }
    }
}

/// The aggregate lists the queries read: one-argument aggregates of a column (stepped on
/// the value in place), of an expression and of a literal, several arguments, DISTINCT.
const AGGS: &[&str] = &[
    "count(*), count(b), sum(b), total(b), avg(b), min(b), max(b)",
    "group_concat(b), group_concat(b, '|'), sum(DISTINCT b), count(DISTINCT b)",
    "sum(b + 1), avg(length(b)), count(1), sum(2), total(-b)",
    "min(b) FILTER (WHERE b > 0), max(b), sum(b) FILTER (WHERE b IS NOT NULL)",
];

/// Range conditions on `col`, closed, open, one-sided and (when `lo > hi`) empty.
fn range(rng: &mut Rng, col: &str) -> String {
    let (lo, hi) = (rng.value(), rng.value());
    match rng.below(6) {
        0 | 1 => format!("{col} BETWEEN {lo} AND {hi}"),
        2 => format!("{col} > {lo} AND {col} < {hi}"),
        3 => format!("{col} >= {lo} AND {col} <= {hi}"),
        4 => format!("{col} > {lo}"),
        _ => format!("{col} <= {hi}"),
    }
}

fn setup(rng: &mut Rng) -> String {
    let mut s = String::from(
        "CREATE TABLE t(id INTEGER PRIMARY KEY, a, b, r REAL, c TEXT COLLATE NOCASE, d);\n\
         CREATE INDEX t_ab ON t(a, b);\n\
         CREATE INDEX t_rb ON t(r DESC, b);\n\
         CREATE INDEX t_cb ON t(c, b);\n\
         CREATE INDEX t_d ON t(d);\n\
         BEGIN;\n",
    );
    for id in 1..=400 {
        let v: Vec<String> = (0..5).map(|_| rng.value()).collect();
        s.push_str(&format!(
            "INSERT INTO t VALUES({id}, {}, {}, {}, {}, {});\n",
            v[0], v[1], v[2], v[3], v[4]
        ));
    }
    s.push_str("COMMIT;\n");
    s
}

#[test]
fn aggregates_over_range_walks() {
    for seed in seeds() {
        let mut rng = Rng(seed);
        let setup = setup(&mut rng);
        let s = rusqlite::Connection::open_in_memory().expect("sqlite");
        let p = parlite::Connection::open(":memory:").expect("parlite");
        s.execute_batch(&setup).expect("sqlite setup");
        p.execute_batch(&setup).expect("parlite setup");
        // The walks the queries below are meant to take: covering walks of each index
        // (`b` is in every one), and a walk of `t_d` that reads each row by rowid.
        for (q, want) in [
            (
                "SELECT sum(b) FROM t WHERE a BETWEEN 1 AND 5",
                "COVERING INDEX t_ab",
            ),
            (
                "SELECT sum(b) FROM t WHERE r BETWEEN 1 AND 5",
                "COVERING INDEX t_rb",
            ),
            (
                "SELECT sum(b) FROM t WHERE c BETWEEN 'a' AND 'b'",
                "COVERING INDEX t_cb",
            ),
            ("SELECT sum(b) FROM t WHERE d BETWEEN 1 AND 5", "INDEX t_d"),
        ] {
            let plan = format!("{:?}", run_parlite(&p, &format!("EXPLAIN QUERY PLAN {q}")));
            assert!(plan.contains(want), "{q}: {plan}");
        }
        let mut failures = Vec::new();
        for _ in 0..300 {
            let aggs = AGGS[rng.below(AGGS.len() as u64) as usize];
            let col = ["a", "r", "c", "d"][rng.below(4) as usize];
            let q = format!("SELECT {aggs} FROM t WHERE {}", range(&mut rng, col));
            let (a, b) = (run_sqlite(&s, &q), run_parlite(&p, &q));
            if a != b {
                failures.push(format!("{q}\n  sqlite:  {a:?}\n  parlite: {b:?}"));
            }
        }
        assert!(
            failures.is_empty(),
            "seed {seed}: {} mismatches:\n{}",
            failures.len(),
            failures.join("\n")
        );
    }
}

/// Walks whose far bound ties the entries' first field: a two-field bound on a two-column
/// index (the comparator decides past the tie), a REAL bound equal to INTEGER keys, and a
/// NOCASE bound equal to keys that differ only in case.
#[test]
fn far_bounds_that_tie_the_first_field() {
    let mut s = String::from(
        "CREATE TABLE u(a, b, c TEXT COLLATE NOCASE, r REAL);\n\
         CREATE INDEX u_ab ON u(a, b);\n\
         CREATE INDEX u_cb ON u(c DESC, b);\n\
         CREATE INDEX u_rb ON u(r, b);\n",
    );
    for i in 0..60 {
        s.push_str(&format!(
            "INSERT INTO u VALUES({}, {}, '{}', {});\n",
            i % 6,
            i,
            ["x", "X", "y", "Y"][i % 4],
            (i % 5) as f64 / 2.0
        ));
    }
    s.push_str(
        "SELECT sum(b), count(*) FROM u WHERE a BETWEEN 2.0 AND 4.0;\n\
         SELECT sum(b), count(*) FROM u WHERE a > 1.0 AND a < 4.0;\n\
         SELECT sum(b), count(*) FROM u WHERE a BETWEEN 1.5 AND 3.5;\n\
         SELECT sum(b), count(*) FROM u WHERE a = 3 AND b BETWEEN 10 AND 40;\n\
         SELECT sum(b), count(*) FROM u WHERE a = 3 AND b > 9 AND b < 39;\n\
         SELECT group_concat(b) FROM u WHERE c BETWEEN 'x' AND 'X';\n\
         SELECT group_concat(b) FROM u WHERE c > 'x';\n\
         SELECT group_concat(b) FROM u WHERE c < 'Y';\n\
         SELECT total(b), max(b) FROM u WHERE r BETWEEN 1 AND 2;\n\
         SELECT total(b), min(b) FROM u WHERE r > 0 AND r < 2;\n\
         SELECT total(b), avg(b) FROM u WHERE r >= 0.5 AND r <= 1.5;\n\
         SELECT count(*) FROM u WHERE r BETWEEN 2 AND 1;\n",
    );
    check_script(&s, Compare::default());
}

/// sum()/total()/avg() of TEXT and BLOB arguments (converted as numbers when they look like
/// one, SQLite's sqlite3_value_numeric_type) among integers only, so the result stays an
/// INTEGER unless a value converts to a REAL or does not convert; over covering walks.
#[test]
fn sums_of_text_among_integers() {
    let mut s = String::from(
        "CREATE TABLE n(a INTEGER, b);\n\
         CREATE INDEX n_ab ON n(a, b);\n",
    );
    let texts = [
        "'7'",
        "' 12 '",
        "'-3'",
        "'1e2'",
        "'2.5'",
        "'abc'",
        "x'3132'",
        "'9223372036854775807'",
    ];
    for (i, t) in texts.iter().enumerate() {
        let i = i as i64 * 10;
        s.push_str(&format!(
            "INSERT INTO n VALUES({i}, {t}), ({}, {}), ({}, NULL);\n",
            i + 1,
            i * 3,
            i + 2
        ));
    }
    for (lo, hi) in [
        (0, 2),
        (10, 12),
        (20, 22),
        (0, 22),
        (30, 32),
        (40, 42),
        (50, 52),
        (60, 62),
        (70, 72),
        (60, 72),
        (0, 80),
    ] {
        s.push_str(&format!(
            "SELECT sum(b), total(b), avg(b), count(b) FROM n WHERE a BETWEEN {lo} AND {hi};\n"
        ));
    }
    check_script(&s, Compare::default());
}
