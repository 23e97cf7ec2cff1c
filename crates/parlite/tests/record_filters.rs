//! WHERE terms tested on record bytes before a row is decoded
//! (exec/select/record_filter.rs), against SQLite: `[NOT] LIKE` / `[NOT] GLOB` with a
//! constant pattern over every storage class (NULL, INTEGER, REAL, TEXT that looks numeric,
//! BLOB, invalid UTF-8), text longer than a page (overflow pages), COLLATE NOCASE/RTRIM
//! columns, PRAGMA case_sensitive_like, rowid aliases, short rows (ADD COLUMN), and a
//! leading term that cannot be compiled.

mod common;

use common::{check_script, run_parlite, sqlite_rows, temp_db_path, Compare};

#[test]
fn like_and_glob_on_record_bytes_match_sqlite() {
    let mut script = String::from(
        "CREATE TABLE t(id INTEGER PRIMARY KEY, c TEXT, n TEXT COLLATE NOCASE, r TEXT COLLATE RTRIM, x, i INT);\n\
         INSERT INTO t(c, n, r, x, i) VALUES\n\
           ('one', 'One', 'one  ', 'on', 1), ('Two', 'TWO', 'two', 12, 2), (NULL, NULL, NULL, NULL, NULL),\n\
           ('10', '10', '10', 10, 10), ('1.5', '1.5', '1.5', 1.5, 15), ('x_y%z', 'X_Y%Z', 'x_y%z ', 'x_y', 3),\n\
           (CAST(x'6f6eff6f' AS TEXT), CAST(x'c3a96f6e' AS TEXT), 'é', x'6f6e', 4),\n\
           (CAST(x'ff6f6e' AS TEXT), 'ÉON', 'éon', CAST(x'6f6e80' AS TEXT), 5), ('', '', '', '', 0);\n\
         INSERT INTO t(c, n, r, x, i) SELECT 'pre' || printf('%.*c', 5000, 'o') || 'n end', upper(c), c, c, 6 FROM t WHERE id = 1;\n\
         ALTER TABLE t ADD COLUMN d TEXT DEFAULT 'don';\n\
         INSERT INTO t(c, d) VALUES ('late', 'dx');\n",
    );
    for col in ["c", "n", "r", "x", "i", "d", "id"] {
        for pat in [
            "'%on%'", "'on'", "'ON%'", "'%n'", "'_n%'", "'%o_'", "'%'", "''", "'1%'", "'%é%'",
            "'x\\_y%'", "'%end'", "'o%n'", "?1",
        ] {
            script.push_str(&format!(
                "SELECT id FROM t WHERE {col} LIKE {pat} ORDER BY id;\n"
            ));
            script.push_str(&format!(
                "SELECT id FROM t WHERE {col} NOT LIKE {pat} ORDER BY id;\n"
            ));
        }
        for pat in ["'*on*'", "'o?'", "'[a-o]*'", "'*n'", "'1*'", "'*[^a-z]*'"] {
            script.push_str(&format!(
                "SELECT id FROM t WHERE {col} GLOB {pat} ORDER BY id;\n"
            ));
            script.push_str(&format!(
                "SELECT id FROM t WHERE {col} NOT GLOB {pat} ORDER BY id;\n"
            ));
        }
    }
    script.push_str(
        "SELECT count(*), sum(length(c)) FROM t WHERE c LIKE '%on%' AND i > 0;\n\
         SELECT id FROM t WHERE i + 0 > 2 AND c LIKE '%o%' ORDER BY id;\n\
         SELECT id FROM t WHERE length(c) > 2 AND c LIKE '%o%' ORDER BY id;\n\
         SELECT id FROM t WHERE c LIKE '%O%' ESCAPE '\\' ORDER BY id;\n\
         SELECT a.id, b.id FROM t a, t b WHERE b.c LIKE '%n%' AND b.i = a.i + 1 ORDER BY 1, 2;\n\
         SELECT id, (SELECT count(*) FROM t u WHERE u.c LIKE '%' || t.c || '%') FROM t ORDER BY id;\n\
         PRAGMA case_sensitive_like = 1;\n\
         SELECT id FROM t WHERE c LIKE '%On%' ORDER BY id;\n\
         SELECT id FROM t WHERE c LIKE 'two' ORDER BY id;\n\
         PRAGMA case_sensitive_like = 0;\n\
         SELECT id FROM t WHERE c LIKE 'two' ORDER BY id;\n",
    );
    check_script(&script, Compare::default());
}

/// Integer terms whose operands come from outside the scanned table (an enclosing query's
/// row, an earlier join source) are bound once per scan (`RecordFilter::compile`): outer
/// values of every storage class, constant folds that overflow, REAL columns holding
/// integers (2^53 + 1 is inexact as a REAL), rowid aliases, short rows, and correlated
/// scalar subqueries that find no row, one, or several.
#[test]
fn integer_terms_bound_per_scan_match_sqlite() {
    let mut script = String::from(
        "CREATE TABLE o(id INTEGER PRIMARY KEY, v, w INT, r REAL);\n\
         INSERT INTO o(v, w, r) VALUES (6, 1, 6), (7, 2, 7.5), (NULL, 3, NULL), (6.0, 4, 6),\n\
           ('6', 5, 6), ('x', 6, 1), (x'06', 7, 6), (9223372036854775807, 8, 1),\n\
           (-9223372036854775808, 9, 2), (11, 10, 11), (1000, 11, 3), (9007199254740993, 12, 0);\n\
         CREATE TABLE t(k INTEGER PRIMARY KEY, a INT, b, f REAL);\n\
         INSERT INTO t(a, b, f) VALUES (1, 1, 1), (2, 2, 6), (1, 6, 7.5), (6, 'x', 2), (NULL, 4, 6),\n\
           (3, 2.5, 3), (1, 6, 6), (9223372036854775807, 0, 0), (5, -1, 11),\n\
           (7, 8, 9007199254740992);\n\
         ALTER TABLE t ADD COLUMN d INT DEFAULT 4;\n\
         INSERT INTO t(a, b, f, d) VALUES (1, 10, 1, 5), (6, 3, 6, NULL);\n",
    );
    // Subquery terms over t whose other operands read o's row.
    let terms = [
        "5+t.a=o.v",
        "t.a+5=o.v",
        "o.v=t.b",
        "t.b-o.v<0",
        "(o.v+1)*2=t.a*2+2",
        "o.v+1>t.a",
        "t.a BETWEEN o.v-5 AND o.v",
        "t.a NOT BETWEEN o.w AND o.v",
        "t.f=o.v",
        "t.f=o.r",
        "t.f+1=o.v",
        "t.k=o.w",
        "t.rowid+o.w=10",
        "t.d=o.w",
        "t.d+1=o.w",
        "o.v+1=t.a+1",
        "o.v*2=t.a",
        "o.w&1=t.a&1",
        "o.w|t.a=7",
        "o.v-(-9223372036854775807)=t.a",
        "t.a+o.v>0",
        "o.w+3=t.a",
        "o.w*3>t.k",
        "o.v-t.a=1",
        "o.w-t.k<t.a",
        "3-t.a>=o.w",
        "t.a*o.w<=o.v",
        "o.v<t.a",
        "o.w<=t.a",
        "o.v>=t.b",
        "o.w+1>t.k",
    ];
    for term in terms {
        for q in [
            format!("SELECT o.id, (SELECT t.k FROM t WHERE {term}) FROM o ORDER BY o.id;\n"),
            format!("SELECT o.id, (SELECT count(*) FROM t WHERE {term}) FROM o ORDER BY o.id;\n"),
            format!(
                "SELECT o.id, (SELECT group_concat(t.k) FROM t WHERE {term} AND t.k>1) \
                 FROM o ORDER BY o.id;\n"
            ),
            format!("SELECT o.id, t.k FROM o, t WHERE {term} ORDER BY 1, 2;\n"),
            format!("SELECT o.id, t.k FROM o CROSS JOIN t ON {term} WHERE t.k<>3 ORDER BY 1, 2;\n"),
        ] {
            script.push_str(&q);
        }
    }
    script.push_str(
        "SELECT sum(id), avg((SELECT a FROM t WHERE 5+t.b=o.w) AND id<5) FROM o WHERE id<9;\n\
         SELECT o.id FROM o WHERE EXISTS (SELECT 1 FROM t WHERE t.a=o.v+0) ORDER BY 1;\n\
         SELECT o.id FROM o WHERE NOT EXISTS (SELECT 1 FROM t WHERE t.a*o.w>3) ORDER BY 1;\n",
    );
    check_script(&script, Compare::default());
}

/// A REAL column holding an integral value SQLite wrote as an integer (it does so for
/// small ones): the decoded row holds a REAL, so an integer term must not answer from the
/// record's integer, whose arithmetic is exact where the REAL's rounds. The file is
/// SQLite's; both engines read it.
#[test]
fn integer_terms_on_real_columns_written_by_sqlite_match_sqlite() {
    let db = temp_db_path("record-filters", "reals");
    {
        let s = rusqlite::Connection::open(db.as_ref()).expect("open");
        s.execute_batch(
            "CREATE TABLE o(id INTEGER PRIMARY KEY, v);\n\
             INSERT INTO o(v) VALUES (9223372036854775807), (9007199254740999), (7), (NULL);\n\
             CREATE TABLE t(k INTEGER PRIMARY KEY, f REAL, a INT);\n\
             INSERT INTO t(f, a) VALUES (6, 1), (6.5, 2), (NULL, 3), (-6, 4);",
        )
        .expect("setup");
    }
    let p = parlite::Connection::open(db.as_ref().to_str().expect("utf8")).expect("parlite");
    let mut failures = Vec::new();
    for q in [
        // 6 * 1537228672809129301 is i64::MAX - 1 as an integer, 2^63 as a REAL.
        "SELECT o.id, (SELECT t.k FROM t WHERE t.f*1537228672809129301<o.v) FROM o ORDER BY o.id",
        "SELECT o.id, t.k FROM o, t WHERE t.f+9007199254740993=o.v ORDER BY 1, 2",
        "SELECT o.id, t.k FROM o, t WHERE o.v-t.f=9007199254740993 ORDER BY 1, 2",
        "SELECT k FROM t WHERE f+9007199254740993=9007199254740999 ORDER BY k",
        "SELECT k FROM t WHERE f=6 ORDER BY k",
    ] {
        let (a, b) = (sqlite_rows(db.as_ref(), q), run_parlite(&p, q));
        if a != b {
            failures.push(format!("{q}\n  sqlite:  {a:?}\n  parlite: {b:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
