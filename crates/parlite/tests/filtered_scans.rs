//! WHERE terms run inside table scans (exec/select/pushdown.rs) and integer terms compiled
//! to unboxed arithmetic (exec/eval/int_term.rs), against SQLite: every operand type and
//! affinity an integer term can meet (NULL, REAL, TEXT, numeric TEXT, overflow), rows
//! shorter than the table (ADD COLUMN), rowid aliases, REAL columns holding integers,
//! scans spanning many pages and overflow pages, correlated subqueries whose inner scan
//! is filtered by outer columns (speedtest1 test 320), and terms that stay in the join
//! loop (subqueries, outer joins).

mod common;

use common::{check_script, Compare};

fn check(script: &str) {
    check_script(script, Compare::default());
}

/// Integer comparisons, arithmetic and BETWEEN over every storage class and affinity.
#[test]
fn integer_terms_match_sqlite_on_every_operand_type() {
    let mut script = String::from(
        "CREATE TABLE t(id INTEGER PRIMARY KEY, i INT, r REAL, s TEXT, n NUMERIC, b BLOB, x);\n\
         INSERT INTO t(i, r, s, n, b, x) VALUES\n\
           (1, 1, '1', 1, 1, 1), (2, 2.5, '2', '2', x'02', 2.0), (NULL, NULL, NULL, NULL, NULL, NULL),\n\
           (9223372036854775807, 9223372036854775807, '9223372036854775807', 9223372036854775807, 5, 9223372036854775807),\n\
           (-9223372036854775808, -1, ' 3', '3.0', 'x', 'abc'), (7, 7, '07', '7', 7, '7'),\n\
           (4, 4, 'four', 4.5, 4, x'04'), (-3, -3.0, '-3', -3, -3, -3);\n",
    );
    for col in ["i", "r", "s", "n", "b", "x", "id"] {
        for term in [
            format!("{col} = 7"),
            format!("{col} <> 2"),
            format!("{col} < 4"),
            format!("{col} >= 2"),
            format!("5 + {col} = 12"),
            format!("{col} + 1 > {col}"),
            format!("{col} - 1 < 0"),
            format!("{col} * 2 = 14"),
            format!("({col} & 1) = (id & 1)"),
            format!("({col} | 1) <> {col}"),
            format!("{col} BETWEEN 1 AND 7"),
            format!("{col} NOT BETWEEN -3 AND 2"),
            format!("{col} BETWEEN '1' AND '7'"),
            format!("{col} = '7'"),
            format!("{col} + 9223372036854775807 > 0"),
            format!("{col} * 9223372036854775807 < 0"),
            format!("{col} - -9223372036854775808 <> 0"),
            format!("{col} = i"),
            format!("{col} / 2 = 3"),
            format!("{col} % 2 = 1"),
            format!("{col} << 1 = 14"),
        ] {
            script.push_str(&format!("SELECT id FROM t WHERE {term} ORDER BY id;\n"));
        }
    }
    script.push_str(
        "SELECT count(*) FROM t WHERE i = ?1;\n\
         SELECT id FROM t WHERE i = s ORDER BY id;\n\
         SELECT id FROM t WHERE s = i ORDER BY id;\n\
         SELECT id FROM t WHERE n = s ORDER BY id;\n\
         SELECT id FROM t WHERE CAST(i AS TEXT) = 7 ORDER BY id;\n\
         SELECT id FROM t WHERE id BETWEEN 2 AND 5 AND i > 0 ORDER BY id;\n",
    );
    check(&script);
}

/// Rows written before ADD COLUMN read the column's default; REAL columns holding
/// integers read as reals; the rowid alias and the rowid itself in filters.
#[test]
fn short_rows_reals_and_rowids_in_filters() {
    check(
        "CREATE TABLE t(a INTEGER PRIMARY KEY, b INT, c TEXT, d REAL);\n\
         INSERT INTO t(b, c, d) VALUES (1, 'one', 1), (2, 'two', 2.5), (3, 'three', NULL);\n\
         ALTER TABLE t ADD COLUMN e INT DEFAULT 5;\n\
         ALTER TABLE t ADD COLUMN f TEXT DEFAULT 'dflt';\n\
         INSERT INTO t(b, c, d, e, f) VALUES (4, 'four', 4, 6, 'x'), (5, 'five', 5, NULL, NULL);\n\
         SELECT a, b, c, d, e, f FROM t WHERE e = 5 ORDER BY a;\n\
         SELECT a, f FROM t WHERE e + b = 7 ORDER BY a;\n\
         SELECT a, c FROM t WHERE f = 'dflt' ORDER BY a;\n\
         SELECT a, e FROM t WHERE e BETWEEN 5 AND 6 ORDER BY a;\n\
         SELECT a, d, typeof(d) FROM t WHERE d = 1 ORDER BY a;\n\
         SELECT a, d FROM t WHERE d + 1 = 5 ORDER BY a;\n\
         SELECT a, c FROM t WHERE a = b ORDER BY a;\n\
         SELECT a, c FROM t WHERE rowid + 1 = 3;\n\
         SELECT a, c FROM t WHERE a BETWEEN 2 AND 4 AND b <> 3;\n\
         SELECT c FROM t WHERE rowid < 3 AND b = 2;\n\
         SELECT sum(b), group_concat(c) FROM t WHERE b > 1;\n",
    );
}

/// Scans over many pages, rows with overflow pages, and filters that reject most rows
/// (the scan steps over them under one lock) or accept them all.
#[test]
fn long_scans_and_overflow_rows() {
    check(
        "CREATE TABLE z(a INT, b INT, c TEXT);\n\
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000)\n\
           INSERT INTO z SELECT i, (i * 7919) % 5003, printf('row %d', i) FROM n;\n\
         UPDATE z SET c = c || substr(hex(zeroblob(3000)), 1, 5000) WHERE a % 97 = 0;\n\
         SELECT count(*), sum(a), sum(length(c)) FROM z WHERE b BETWEEN 100 AND 120;\n\
         SELECT a, length(c) FROM z WHERE (b & 1) = (a & 1) AND a % 97 = 0 ORDER BY a LIMIT 5;\n\
         SELECT count(*) FROM z WHERE 5 + b = a;\n\
         SELECT count(*) FROM z WHERE b >= 0;\n\
         SELECT a FROM z WHERE c LIKE '%000000%' AND b < 2000 ORDER BY a LIMIT 3;\n\
         SELECT count(*) FROM z WHERE a > 100000;\n\
         SELECT max(a) FROM z WHERE b < 10;\n\
         SELECT a, b FROM z WHERE b < 50 ORDER BY a DESC LIMIT 4;\n\
         SELECT rowid, b FROM z WHERE b < 30 ORDER BY rowid DESC;\n\
         SELECT a FROM z WHERE rowid BETWEEN 100 AND 900 AND b < 200 ORDER BY rowid DESC;\n\
         SELECT a FROM z WHERE rowid > 4990 AND b > 0 ORDER BY rowid;\n",
    );
}

/// Correlated subqueries whose inner scan is filtered by an outer column (speedtest1 test
/// 320), EXISTS, and terms that stay in the join loop: subqueries in the WHERE of the
/// scanned table, outer joins, joins whose inner source is a scan.
#[test]
fn subqueries_joins_and_terms_left_in_the_loop() {
    check(
        "CREATE TABLE z1(a INT, b INT, c TEXT);\n\
         CREATE TABLE z2(a INT, b INT, c TEXT);\n\
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 600)\n\
           INSERT INTO z1 SELECT i, (i * 37) % 601, 'c' || i FROM n;\n\
         INSERT INTO z2 SELECT a + 1000, b - 5, c FROM z1 WHERE a % 3 <> 0;\n\
         INSERT INTO z2 VALUES (1, NULL, 'n'), (2, 4.5, 'r'), (3, '12', 't');\n\
         SELECT sum(a), max(c), avg((SELECT a FROM z2 WHERE 5+z2.b=z1.b) AND rowid<500), max(c)\n\
           FROM z1 WHERE rowid<500;\n\
         SELECT a, (SELECT a FROM z2 WHERE 5 + z2.b = z1.b) FROM z1 WHERE a < 20 ORDER BY a;\n\
         SELECT a, (SELECT count(*) FROM z2 WHERE z2.b BETWEEN z1.b - 10 AND z1.b) FROM z1\n\
           WHERE a < 10 ORDER BY a;\n\
         SELECT a FROM z1 WHERE EXISTS (SELECT 1 FROM z2 WHERE z2.b + 5 = z1.b AND z2.a > 1300)\n\
           AND a < 40 ORDER BY a;\n\
         SELECT a FROM z1 WHERE b = (SELECT max(b) FROM z2 WHERE z2.a < 1010) + 5;\n\
         SELECT z1.a, z2.a FROM z1, z2 WHERE z2.b = z1.b - 5 AND z1.a < 15 ORDER BY 1, 2;\n\
         SELECT z1.a, z2.a FROM z1 LEFT JOIN z2 ON z2.b + 5 = z1.b AND z2.a > 1000\n\
           WHERE z1.a < 12 ORDER BY 1, 2;\n\
         SELECT z1.a FROM z1 WHERE z1.a < 8 AND NOT EXISTS (SELECT 1 FROM z2 WHERE z2.b + 5 = z1.b)\n\
           ORDER BY 1;\n\
         SELECT (SELECT b FROM z2 WHERE a = 3) + 0, (SELECT a FROM z2 WHERE b = '12');\n\
         UPDATE z1 SET c = 'u' || a WHERE b + 0 BETWEEN 10 AND 20;\n\
         SELECT a, c FROM z1 WHERE c LIKE 'u%' ORDER BY a;\n\
         DELETE FROM z2 WHERE (b & 1) = 1;\n\
         SELECT count(*), sum(b) FROM z2;\n\
         INSERT INTO z2(a, b, c) SELECT a, b, c FROM z1 WHERE (b & 1) == (a & 1);\n\
         SELECT count(*), sum(a), sum(b) FROM z2;\n",
    );
}

/// A term that fails (an error inside the scan, under its lock) reports the same error and
/// leaves the connection usable.
#[test]
fn errors_inside_a_filtered_scan() {
    check(
        "CREATE TABLE t(a INT, b TEXT);\n\
         INSERT INTO t VALUES (1, 'x'), (-9223372036854775808, 'y'), (3, 'z');\n\
         SELECT a FROM t WHERE abs(a) > 0;\n\
         SELECT a FROM t WHERE a > 0 AND b LIKE 'x' ESCAPE 'ab';\n\
         SELECT a FROM t WHERE a + 0 > 0 ORDER BY a;\n\
         SELECT count(*) FROM t WHERE b < 'y';\n",
    );
}
