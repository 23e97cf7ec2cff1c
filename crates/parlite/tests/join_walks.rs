//! Differential tests of a join's inner index walks (`exec::select::join`): one walk per
//! outer row with a single key prefix (`index_walk_one`, `index_bounds` moving the prefix),
//! pooled key buffers, and covering index walks decoded into the row's slots
//! (`Store::index_covering_scan`). Same SQL through parlite and SQLite (rusqlite, bundled).

mod common;
use common::*;

fn check(script: &str) {
    check_script(script, Compare::default());
}

/// speedtest1 test 310's shape, with NULLs, duplicate keys, an empty inner table, REAL
/// and rowid-alias columns, DESC indexes, and seeks after writes in the same transaction.
#[test]
fn four_way_joins_over_unique_and_covering_indexes() {
    let mut s = String::from(
        "CREATE TABLE z1(a INTEGER, b INTEGER, c TEXT);
         CREATE TABLE z2(a INTEGER UNIQUE, b INTEGER, c TEXT);
         CREATE TABLE t3(a INTEGER UNIQUE, b INTEGER, c TEXT);
         CREATE TABLE t4(a INTEGER UNIQUE, b INTEGER, c TEXT);
         CREATE TABLE e(a INTEGER UNIQUE, c TEXT);
         CREATE TABLE r(id INTEGER PRIMARY KEY, x REAL, y TEXT DEFAULT 'd');
         CREATE INDEX t1c ON z1(c);
         CREATE INDEX t2c ON z2(c DESC);
         CREATE INDEX rx ON r(x DESC, y);\n",
    );
    for i in 0..600 {
        let c = if i % 7 == 0 {
            "NULL".to_string()
        } else {
            format!("'k{}'", i % 97)
        };
        s.push_str(&format!(
            "INSERT INTO z1 VALUES({i}, {}, {c});
             INSERT INTO z2 VALUES({i}, {}, {c});
             INSERT INTO t3 VALUES({}, {i}, 'x');
             INSERT INTO t4 VALUES({i}, {}, 'y');
             INSERT INTO r(x) VALUES({});\n",
            i * 3,
            i * 5,
            (i * 37) % 600,
            (i * 37) % 600,
            (i % 13) as f64 / 2.0
        ));
    }
    for (lo, hi) in [(0, 10), (250, 258), (590, 700), (-5, 3), (300, 300)] {
        s.push_str(&format!(
            "SELECT z1.c FROM z1, z2, t3, t4 WHERE t4.a BETWEEN {lo} AND {hi}
               AND t3.a=t4.b AND z2.a=t3.b AND z1.c=z2.c ORDER BY 1;
             SELECT z1.a, z2.c FROM z1, z2, t3, t4 WHERE t4.a BETWEEN {lo} AND {hi}
               AND t3.a=t4.b AND z2.a=t3.b AND z2.c=z1.c ORDER BY 1, 2;
             SELECT t4.a, e.c FROM t4 LEFT JOIN e ON e.a=t4.b WHERE t4.a BETWEEN {lo} AND {hi};
             SELECT t4.a FROM t4, e WHERE t4.a BETWEEN {lo} AND {hi} AND e.a=t4.b;
             SELECT t4.a, r.id, r.x, r.y FROM t4, r WHERE t4.a BETWEEN {lo} AND {hi}
               AND r.x = t4.a % 13 / 2.0 ORDER BY 1, 2;
             SELECT t4.a, r.x, r.y FROM t4, r WHERE t4.a BETWEEN {lo} AND {hi}
               AND r.x > t4.a % 5 AND r.x <= 3 ORDER BY 1, 2, 3;\n"
        ));
    }
    s.push_str(
        "BEGIN;
         INSERT INTO z1 VALUES(9000, 1, 'k3');
         DELETE FROM z2 WHERE a % 4 = 1;
         UPDATE t3 SET b = b + 1 WHERE a % 3 = 0;
         SELECT z1.c, z1.a FROM z1, z2, t3, t4 WHERE t4.a BETWEEN 100 AND 140
           AND t3.a=t4.b AND z2.a=t3.b AND z1.c=z2.c ORDER BY 1, 2;
         SELECT count(*) FROM z1, z2 WHERE z1.c = z2.c;
         COMMIT;\n",
    );
    check(&s);
}
