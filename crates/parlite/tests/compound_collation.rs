//! UNION / INTERSECT / EXCEPT over values that are equal under a column's collation but
//! not as bytes ('k' and 'K' under NOCASE): which of the equal rows the result keeps must
//! be SQLite's (rusqlite, bundled, as the oracle). Without ORDER BY SQLite's temporary
//! index keeps the last row of each group; with ORDER BY its merge keeps the first, taken
//! from the right arm for a UNION when that arm has one (exec/select.rs
//! `keep_one_per_group`). Compared in order: the rows' order is part of the answer.

mod common;
use common::{check_script, Compare};

const TABLES: &str = "
CREATE TABLE a(v TEXT COLLATE NOCASE, w INT);
CREATE TABLE b(v TEXT, w INT);
INSERT INTO a VALUES ('k', 1), ('m', 1), ('M', 1), ('p', 2), ('x', 4), ('X ', 4);
INSERT INTO b VALUES ('K', 1), ('k', 1), ('P', 2), ('q', 3), ('Q', 3), ('p', 2), ('x', 4);
CREATE TABLE r(v TEXT COLLATE RTRIM);
INSERT INTO r VALUES ('s'), ('s  '), ('t '), ('t');
";

#[test]
fn compounds_keep_sqlites_row_among_equal_ones() {
    let script = format!(
        "{TABLES}
SELECT v FROM a UNION SELECT v FROM b;
SELECT v FROM a UNION SELECT v FROM b ORDER BY 1;
SELECT v FROM a UNION SELECT v FROM b ORDER BY 1 DESC;
SELECT v FROM b UNION SELECT v FROM a ORDER BY 1;
SELECT v FROM a UNION SELECT v FROM b UNION SELECT 'Q' ORDER BY 1;
SELECT v FROM a UNION SELECT v FROM b UNION SELECT 'm';
SELECT v FROM a UNION SELECT v FROM a;
SELECT v FROM a UNION SELECT v FROM b LIMIT 3;
SELECT v FROM a UNION SELECT v FROM b ORDER BY 1 LIMIT 2 OFFSET 1;
SELECT v, w FROM a UNION SELECT v, w FROM b ORDER BY 2;
SELECT v, w FROM a UNION SELECT v, w FROM b ORDER BY 2 DESC, 1;
SELECT v FROM a UNION SELECT v FROM b ORDER BY 1 COLLATE BINARY;
SELECT v FROM a EXCEPT SELECT 'X';
SELECT v FROM a EXCEPT SELECT 'X' ORDER BY 1;
SELECT v FROM a INTERSECT SELECT v FROM b;
SELECT v FROM a INTERSECT SELECT v FROM b ORDER BY 1;
SELECT v FROM r UNION SELECT v FROM r;
SELECT v FROM r UNION SELECT 's ' ORDER BY 1;
SELECT v FROM a UNION ALL SELECT v FROM b ORDER BY 1;
SELECT * FROM (SELECT v FROM a UNION SELECT v FROM b) ORDER BY 1;
"
    );
    check_script(&script, Compare::default());
}
