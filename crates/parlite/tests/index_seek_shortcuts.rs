//! Differential tests of the index-seek shortcuts: a descent deciding most comparisons on
//! the encoded key's first field (`storage::record::compare_first_field`), and WHERE terms
//! an index walk's bounds imply going untested on its rows (`Access::Index::implied`).
//! Same SQL through parlite and SQLite (rusqlite, bundled): every column affinity and
//! collation, ASC and DESC indexes, NULL keys and bounds, probes converted by affinity,
//! mixed storage classes in one column, one- and two-sided ranges, expression indexes.

mod common;
use common::*;

fn check(script: &str) {
    check_script(script, Compare::default());
}

/// Values of every storage class and integer width (serial types 1-6, 8, 9), reals,
/// NULLs, and text and blobs that sort among them.
const VALUES: &[&str] = &[
    "NULL",
    "0",
    "1",
    "-1",
    "2",
    "127",
    "-128",
    "200",
    "40000",
    "-40000",
    "8388608",
    "2147483648",
    "140737488355328",
    "9223372036854775807",
    "-9223372036854775808",
    "1.5",
    "-0.5",
    "2.0",
    "'2'",
    "'10'",
    "' 5'",
    "'abc'",
    "'ABC'",
    "'abd'",
    "''",
    "x'00'",
    "x'6162'",
    "'0x10'",
];

/// Probes: a sample of the values plus text that affinity turns into numbers.
const PROBES: &[&str] = &[
    "NULL",
    "0",
    "1",
    "2",
    "-1",
    "200",
    "40000",
    "1.5",
    "'2'",
    "'10'",
    "'abc'",
    "'ABC'",
    "''",
    "x'00'",
    "'1e2'",
    "9223372036854775807",
    "-9223372036854775808",
];

fn setup(desc: &str) -> String {
    let mut s = String::from(
        "CREATE TABLE m(id INTEGER PRIMARY KEY, v, i INTEGER, t TEXT, r REAL, \
         nc TEXT COLLATE NOCASE, w INTEGER);\n",
    );
    for (k, v) in VALUES.iter().enumerate() {
        // Each value in every column (affinity converts it on the way in), and a second
        // column that ties on the first for the two-column index.
        s.push_str(&format!(
            "INSERT INTO m VALUES({}, {v}, {v}, {v}, {v}, {v}, {});\n",
            k + 1,
            k % 3
        ));
    }
    for c in ["v", "i", "t", "r", "nc"] {
        s.push_str(&format!("CREATE INDEX m_{c} ON m({c} {desc});\n"));
    }
    s.push_str(&format!("CREATE INDEX m_iw ON m(w, i {desc});\n"));
    s
}

fn range_queries() -> String {
    let mut q = String::new();
    for c in ["v", "i", "t", "r", "nc"] {
        for p in PROBES {
            for op in ["=", ">", ">=", "<", "<="] {
                q.push_str(&format!(
                    "SELECT id FROM m WHERE {c} {op} {p} ORDER BY id;\n"
                ));
            }
            q.push_str(&format!(
                "SELECT id FROM m WHERE {c} BETWEEN {p} AND 'zzz' ORDER BY id;\n\
                 SELECT id FROM m WHERE {c} BETWEEN -5 AND {p} ORDER BY id;\n\
                 SELECT id FROM m WHERE w = 1 AND i >= {p} ORDER BY id;\n\
                 SELECT id FROM m WHERE w = 2 AND i < {p} ORDER BY id;\n"
            ));
        }
    }
    q
}

/// Every comparison operator against every probe on every affinity, ascending indexes.
#[test]
fn seeks_and_implied_ranges_ascending() {
    check(&format!("{}{}", setup("ASC"), range_queries()));
}

/// The same through descending indexes (bounds swap; NULL keys sort last).
#[test]
fn seeks_and_implied_ranges_descending() {
    check(&format!("{}{}", setup("DESC"), range_queries()));
}

/// Terms that are not implied stay tested: a second bound on the same column, a collation
/// other than the index's, bounds of different affinities, a BETWEEN with one bound on a
/// column of the same table (only its other half bounds the walk), an outer column of
/// another affinity driving the range, IS, and a NULL bound from a subquery.
#[test]
fn terms_the_walk_does_not_imply() {
    check(&format!(
        "{}
SELECT id FROM m WHERE i > 0 AND i > 100 ORDER BY id;
SELECT id FROM m WHERE i >= 1 AND i >= -1 AND i < 300 ORDER BY id;
SELECT id FROM m WHERE nc = 'abc' COLLATE BINARY ORDER BY id;
SELECT id FROM m WHERE nc >= 'ABC' COLLATE BINARY ORDER BY id;
SELECT id FROM m WHERE t > 'a' COLLATE NOCASE ORDER BY id;
SELECT id FROM m WHERE t BETWEEN 1 AND '2' ORDER BY id;
SELECT id FROM m WHERE v BETWEEN 1 AND '2' ORDER BY id;
SELECT id FROM m WHERE v >= CAST(1 AS TEXT) ORDER BY id;
SELECT id FROM m WHERE i IS 2 ORDER BY id;
SELECT id FROM m WHERE i > (SELECT NULL) ORDER BY id;
SELECT id FROM m WHERE i = (SELECT NULL) ORDER BY id;
SELECT id FROM m WHERE v IN (1, '2', x'00') ORDER BY id;
SELECT id FROM m WHERE i IN (SELECT i FROM m WHERE id < 5) ORDER BY id;
SELECT a.id, b.id FROM m AS a, m AS b WHERE b.i >= a.t AND a.id < 4 ORDER BY 1, 2;
SELECT a.id, b.id FROM m AS a, m AS b WHERE b.v = a.t AND a.id < 25 ORDER BY 1, 2;
SELECT a.id, b.id FROM m AS a, m AS b WHERE b.t > a.i AND a.id IN (2, 3) ORDER BY 1, 2;
SELECT a.id, b.id FROM m AS a LEFT JOIN m AS b ON b.i > a.i AND b.i < 3 ORDER BY 1, 2;
SELECT id FROM m WHERE i BETWEEN w AND 100 ORDER BY id;
SELECT id FROM m WHERE i BETWEEN -5 AND w ORDER BY id;
SELECT id FROM m WHERE t BETWEEN nc AND 'zzz' ORDER BY id;
SELECT id FROM m WHERE i >= w ORDER BY id;
SELECT id FROM m WHERE i > 1 ORDER BY i LIMIT 3;
SELECT id FROM m WHERE i < 200 ORDER BY i DESC LIMIT 3;
",
        setup("ASC")
    ));
}

/// An expression index (hc_mixed's shape): the term on the indexed expression is implied
/// by the walk; another term on the same row is still tested.
#[test]
fn expression_index_ranges() {
    let mut s = String::from(
        "CREATE TABLE tbl(a INTEGER PRIMARY KEY, b BLOB, c CHAR(64));\n\
         CREATE INDEX tbl_i1 ON tbl(substr(c,1,4));\n\
         CREATE INDEX tbl_i2 ON tbl(substr(c,2,4) DESC);\n",
    );
    for k in 0..300 {
        let c = format!(
            "{:08X}{:08x}",
            (k * 2_654_435_761u64) % 4_294_967_291,
            k * 7919
        );
        s.push_str(&format!(
            "INSERT INTO tbl VALUES({k}, x'{k:04x}', '{c}');\n"
        ));
    }
    s.push_str("INSERT INTO tbl VALUES(1000, NULL, NULL), (1001, 5, 12345), (1002, 6, 'ab');\n");
    for p in ["'8'", "'80'", "'C1A'", "'c1a'", "''", "NULL", "5", "'1234'"] {
        s.push_str(&format!(
            "SELECT a, c FROM tbl WHERE substr(c,1,4) >= {p} ORDER BY substr(c,1,4) LIMIT 10;\n\
             SELECT a FROM tbl WHERE substr(c,1,4) < {p} ORDER BY a;\n\
             SELECT a FROM tbl WHERE substr(c,1,4) = {p} ORDER BY a;\n\
             SELECT a FROM tbl WHERE substr(c,2,4) > {p} AND a % 3 = 0 ORDER BY a;\n\
             SELECT a FROM tbl WHERE substr(c,2,4) <= {p} ORDER BY substr(c,2,4) DESC LIMIT 5;\n"
        ));
    }
    check(&s);
}

/// Covering walks (speedtest1 fp test 130's shape): REAL columns bounded by TEXT that
/// affinity turns into numbers, a two-column covering index whose second column the query
/// reads, empty ranges (low bound above the high), and a second term on the covered column
/// that the walk does not imply and must still test.
#[test]
fn covering_walks_over_reals() {
    let mut s = String::from(
        "CREATE TABLE z(a REAL, b REAL, c INTEGER);\n\
         CREATE INDEX z_ab ON z(a, b);\n\
         CREATE INDEX z_cd ON z(c DESC, b);\n",
    );
    for k in 0..400i64 {
        let (a, b) = ((k * 7919) % 401 - 200, (k * 104_729) % 97);
        s.push_str(&format!(
            "INSERT INTO z VALUES('{a}.5e{e}', {b}, {c});\n",
            e = k % 5 - 2,
            c = k % 13 - 6
        ));
    }
    s.push_str("INSERT INTO z VALUES(NULL, 1, NULL), (3, NULL, 3), ('x', 2, 'y');\n");
    for (lo, hi) in [
        ("'-61.5e1'", "'40.5e-1'"),
        ("'30.5e-2'", "'-5.5e1'"),
        ("'-1e9'", "'1e9'"),
        ("3", "'3.0'"),
        ("NULL", "1"),
        ("'-20.5'", "20"),
    ] {
        s.push_str(&format!(
            "SELECT count(*), min(b), max(b), total(b) FROM z WHERE a BETWEEN {lo} AND {hi};\n\
             SELECT a, b FROM z WHERE a > {lo} AND a <= {hi} ORDER BY a, b;\n\
             SELECT count(*), total(b) FROM z WHERE a BETWEEN {lo} AND {hi} AND b < 50;\n\
             SELECT b FROM z WHERE c BETWEEN {lo} AND {hi} ORDER BY c DESC, b;\n\
             SELECT c, b FROM z WHERE c >= {lo} AND b > 10 ORDER BY c DESC, b;\n"
        ));
    }
    check(&s);
}
