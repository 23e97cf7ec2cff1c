//! Differential tests of short index-range reads against SQLite (rusqlite, bundled): the
//! rowid lookups of an index walk that start from the cursor's last cell
//! (`Frame::table_search_near`: ascending, descending, repeated and random rowids in one
//! leaf, rowid seeks `>=` / `>`), and group_concat writing each value's text straight
//! into its accumulator (`Value::push_text`): every storage class, separators of every
//! class, NULLs, empty and one-row ranges, DISTINCT and window forms.

mod common;

use common::{check_script, Compare, Rng};

/// A seeded table whose rowids have gaps, with indexes whose key order follows rowid
/// order (`b`), runs against it (`nb`), or ignores it (`r`), TEXT and BLOBs of which some
/// spill to overflow pages, and NULLs; then speedtest1's range aggregates (tests
/// 160/161/170) and ordered, limited walks over random ranges, before and after writes.
#[test]
fn index_range_lookups_agree_with_sqlite() {
    for seed in 1..=3u64 {
        let mut rng = Rng(seed);
        let mut script = String::from(
            "CREATE TABLE z(a INTEGER PRIMARY KEY, b INTEGER, nb INTEGER, r INTEGER, \
             c TEXT, d BLOB);\n\
             CREATE INDEX zb ON z(b);\n\
             CREATE INDEX znb ON z(nb);\n\
             CREATE INDEX zr ON z(r);\n\
             CREATE INDEX zc ON z(c);\n\
             CREATE INDEX zs ON z(substr(c, 1, 3));\n",
        );
        let mut a = 0i64;
        let mut rows = 0i64;
        while rows < 2500 {
            // Gaps of 1 to 4 rowids; b ascends with the rowid, nb descends.
            a += 1 + rng.below(4) as i64;
            rows += 1;
            let b = if rng.below(40) == 0 {
                "NULL".to_string()
            } else {
                (a * 3).to_string()
            };
            let c_len = match rng.below(50) {
                0 => 3000 + rng.below(3000),
                1 => 0,
                _ => 10 + rng.below(40),
            };
            let c = match rng.below(30) {
                0 => "NULL".to_string(),
                _ => format!(
                    "printf('%03d', {})||substr(hex(zeroblob({c_len})), 1, {c_len})",
                    a % 1000
                ),
            };
            let d = match rng.below(20) {
                0 => format!(
                    "CAST(zeroblob({}) || '{a}' AS BLOB)",
                    2000 + rng.below(4000)
                ),
                1 => "NULL".to_string(),
                _ => format!("x'{:08x}'", rng.next() as u32),
            };
            script.push_str(&format!(
                "INSERT INTO z VALUES({a}, {b}, {}, {}, {c}, {d});\n",
                -a,
                rng.below(100_000)
            ));
        }
        let top = a * 3;
        let queries = |rng: &mut Rng, script: &mut String| {
            for _ in 0..40 {
                let lo = rng.below(top as u64 + 60) as i64 - 30;
                let hi = lo + rng.below(60) as i64 - 5;
                let k = rng.below(1000);
                for q in [
                    format!(
                        "SELECT count(*), avg(b), sum(length(c)), group_concat(a) FROM z \
                         WHERE b BETWEEN {lo} AND {hi};"
                    ),
                    format!(
                        "SELECT count(*), avg(b), sum(length(c)), group_concat(a) FROM z \
                         WHERE a BETWEEN {} AND {};",
                        lo / 3,
                        hi / 3
                    ),
                    format!(
                        "SELECT count(*), sum(length(d)), group_concat(a, '-') FROM z \
                         WHERE nb BETWEEN {} AND {};",
                        -hi / 3,
                        -lo / 3
                    ),
                    format!(
                        "SELECT count(*), group_concat(a) FROM z WHERE r BETWEEN {} AND {};",
                        lo * 10,
                        lo * 10 + 400
                    ),
                    format!(
                        "SELECT count(*), min(a), group_concat(length(c)) FROM z \
                         WHERE c BETWEEN '{k:03}' AND '{k:03}'||'~';"
                    ),
                    format!(
                        "SELECT a, b, length(c), hex(substr(d, 1, 4)) FROM z WHERE b >= {lo} \
                         ORDER BY b LIMIT 7 OFFSET {};",
                        k % 3
                    ),
                    format!(
                        "SELECT a, b, length(d) FROM z WHERE b <= {hi} ORDER BY b DESC LIMIT 6;"
                    ),
                    format!(
                        "SELECT a, c, d FROM z WHERE substr(c, 1, 3) >= '{k:03}' \
                         ORDER BY substr(c, 1, 3) LIMIT 10;"
                    ),
                    format!(
                        "SELECT a, length(c) FROM z WHERE b IN ({lo}, {lo}, {}, {hi});",
                        lo + 3
                    ),
                    format!(
                        "SELECT x.a, (SELECT min(y.a) FROM z y WHERE y.a > x.a), \
                         (SELECT min(y.a) FROM z y WHERE y.a >= x.a + 1) \
                         FROM z x WHERE x.b BETWEEN {lo} AND {};",
                        lo + 40
                    ),
                ] {
                    script.push_str(&q);
                    script.push('\n');
                }
            }
        };
        queries(&mut rng, &mut script);
        // Writes between the reads: deleted rows open gaps inside leaves, updated ones
        // move between index positions.
        script.push_str(&format!(
            "DELETE FROM z WHERE a % 7 = {};\n\
             UPDATE z SET b = b + 1 WHERE a % 5 = 0;\n\
             UPDATE z SET c = c || c WHERE a % 11 = 0;\n",
            seed % 7
        ));
        queries(&mut rng, &mut script);
        check_script(&script, Compare::default());
    }
}

/// group_concat and string_agg over every storage class (integer extremes, reals SQLite
/// prints with an exponent, text, blobs that are not UTF-8), NULLs first, last and
/// throughout, separators of every class, and the empty, DISTINCT and window forms.
#[test]
fn group_concat_text_of_every_class_agrees_with_sqlite() {
    let mut script = String::from("CREATE TABLE g(k INTEGER PRIMARY KEY, grp, v);\n");
    let values = [
        "NULL",
        "0",
        "-1",
        "7",
        "9223372036854775807",
        "-9223372036854775808",
        "1000000",
        "-42",
        "1.0",
        "0.1",
        "-0.0",
        "1e20",
        "-2.5e-7",
        "123456789012345.6",
        "''",
        "'abc'",
        "'é☃'",
        "x''",
        "x'41ff42'",
        "x'c3a9'",
        "NULL",
        "'tail'",
    ];
    for (k, v) in values.iter().enumerate() {
        script.push_str(&format!("INSERT INTO g VALUES({k}, {}, {v});\n", k % 3));
    }
    script.push_str("CREATE TABLE e(v);\n");
    for q in [
        "SELECT group_concat(v) FROM g;",
        "SELECT group_concat(v, '') FROM g;",
        "SELECT group_concat(v, NULL) FROM g;",
        "SELECT group_concat(v, 12) FROM g;",
        "SELECT group_concat(v, -0.5) FROM g;",
        "SELECT group_concat(v, x'2d2d') FROM g;",
        "SELECT string_agg(v, ';') FROM g;",
        "SELECT grp, group_concat(v), group_concat(k * 3 - 20) FROM g GROUP BY grp;",
        "SELECT group_concat(DISTINCT v) FROM g;",
        "SELECT group_concat(v) FROM g WHERE v IS NULL;",
        "SELECT group_concat(v) FROM g WHERE k = 4;",
        "SELECT group_concat(v) FROM g WHERE k > 100;",
        "SELECT group_concat(v), count(*) FROM e;",
        "SELECT group_concat(k) FROM g WHERE k BETWEEN 3 AND 3;",
        "SELECT k, group_concat(v, '|') OVER (ORDER BY k ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM g;",
        "SELECT length(group_concat(v)), typeof(group_concat(v)) FROM g;",
        "SELECT group_concat(k / 2.0) FROM g;",
    ] {
        script.push_str(q);
        script.push('\n');
    }
    check_script(&script, Compare::default());
}
