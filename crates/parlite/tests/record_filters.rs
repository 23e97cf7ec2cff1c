//! WHERE terms tested on record bytes before a row is decoded
//! (exec/select/record_filter.rs), against SQLite: `[NOT] LIKE` / `[NOT] GLOB` with a
//! constant pattern over every storage class (NULL, INTEGER, REAL, TEXT that looks numeric,
//! BLOB, invalid UTF-8), text longer than a page (overflow pages), COLLATE NOCASE/RTRIM
//! columns, PRAGMA case_sensitive_like, rowid aliases, short rows (ADD COLUMN), and a
//! leading term that cannot be compiled.

mod common;

use common::{check_script, Compare};

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
