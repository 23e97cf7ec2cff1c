//! Robustness: mutated SQL (from a seed workload) run through the whole engine must return
//! results or errors, never panic. Seeded, so a failure replays.

use rand::{Rng, SeedableRng};

const SEEDS: &[&str] = &[
    "CREATE TABLE t1(a INTEGER PRIMARY KEY, b TEXT UNIQUE, c REAL CHECK (c > -100), d)",
    "CREATE INDEX i1 ON t1(c, d)",
    "INSERT INTO t1(b, c, d) VALUES('x', 1.5, NULL), ('y', 2, x'00'), (NULL, -3, 'q')",
    "INSERT OR REPLACE INTO t1 SELECT a + 10, b || 'z', c * 2, d FROM t1 WHERE a < 5",
    "UPDATE t1 SET c = c + 1, d = (SELECT max(a) FROM t1) WHERE b LIKE '%y%'",
    "DELETE FROM t1 WHERE a IN (SELECT a FROM t1 WHERE c > 3 LIMIT 1)",
    "SELECT a, count(*) OVER (PARTITION BY d ORDER BY c), sum(c) FROM t1 GROUP BY a HAVING sum(c) > 0 ORDER BY 2 DESC",
    "SELECT * FROM t1 AS x LEFT JOIN t1 AS y ON x.a = y.a + 1 WHERE x.c BETWEEN 0 AND 10 UNION SELECT 1, 2, 3, 4, 5, 6, 7, 8",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 20) SELECT n, CASE n % 3 WHEN 0 THEN 'a' ELSE NULL END FROM r",
    "CREATE VIEW v1 AS SELECT b, c FROM t1 WHERE c IS NOT NULL",
    "CREATE TRIGGER tr1 AFTER INSERT ON t1 BEGIN UPDATE t1 SET d = new.a WHERE a = new.a; END",
    "SELECT b, typeof(c), abs(c), coalesce(d, 'none') FROM v1 NATURAL JOIN t1 ORDER BY b COLLATE NOCASE",
    "ALTER TABLE t1 ADD COLUMN e INT DEFAULT 3",
    "SELECT count(DISTINCT d), group_concat(b, ';'), total(c) FROM t1 WHERE EXISTS (SELECT 1 FROM v1 WHERE v1.b = t1.b)",
];

fn mutate(rng: &mut rand::rngs::StdRng, s: &str) -> String {
    let pieces = [
        "(",
        ")",
        ",",
        "'",
        "NULL",
        "SELECT",
        "*",
        " AND ",
        " OR ",
        "1",
        "-",
        "t1",
        "a",
        " ORDER BY ",
        " GROUP BY ",
        "max(",
        ";",
        "OVER ()",
        "x'",
        " IN ",
        "9223372036854775807",
        "1e308",
    ];
    let mut out: Vec<char> = s.chars().collect();
    for _ in 0..rng.gen_range(1..4) {
        let p = rng.gen_range(0..=out.len());
        match rng.gen_range(0..3) {
            0 if p < out.len() => {
                let q = (p + rng.gen_range(1..8)).min(out.len());
                out.drain(p..q);
            }
            _ => {
                let piece = pieces[rng.gen_range(0..pieces.len())];
                for (k, ch) in piece.chars().enumerate() {
                    out.insert(p + k, ch);
                }
            }
        }
    }
    out.into_iter().collect()
}

#[test]
fn mutated_statements_never_panic() {
    let seed = 0xfa11_u64;
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    for round in 0..400 {
        let c = parlite::Connection::open(":memory:").expect("open");
        for (i, s) in SEEDS.iter().enumerate() {
            let sql = if rng.gen_bool(0.5) {
                mutate(&mut rng, s)
            } else {
                s.to_string()
            };
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let _ = c.execute_batch(&sql);
            }));
            assert!(
                r.is_ok(),
                "seed {seed:#x} round {round} statement {i} panicked: {sql}"
            );
        }
    }
}
