//! Row values (rowvalue.html) against SQLite: comparisons of two row values term by term,
//! each term with its own affinity and collation; a subquery of several columns as a row
//! value (its first row, NULLs without one); a row value IN a list of row values, BETWEEN
//! row values, a row value CASE; and SQLite's errors for row values of different sizes.

mod common;

use common::Rng;

/// Columns of the table the seeded comparisons read: every affinity, a NOCASE column.
const SETUP: &str = "CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER, b TEXT COLLATE NOCASE, \
                     c REAL, d, e TEXT)";

impl Rng {
    /// A value for a row value's term: NULL, integers and reals that compare equal, numeric
    /// text, text differing in case.
    fn term_value(&mut self) -> String {
        const VALUES: [&str; 14] = [
            "NULL", "1", "2", "1.0", "2.5", "'1'", "'2'", "'01'", "'a'", "'A'", "'b'", "'B'",
            "x'61'", "-1",
        ];
        VALUES[self.below(VALUES.len() as u64) as usize].to_string()
    }

    /// A term of a row value: a column, a value, a value with a COLLATE, or an expression
    /// without affinity.
    /// `table` qualifies the columns (`t.` or a subquery's `u.`).
    fn term(&mut self, table: &str) -> String {
        const COLUMNS: [&str; 5] = ["a", "b", "c", "d", "e"];
        let column = format!("{table}{}", COLUMNS[self.below(5) as usize]);
        match self.below(6) {
            0 | 1 => column,
            2 => format!(
                "{column} COLLATE {}",
                ["NOCASE", "BINARY", "RTRIM"][self.below(3) as usize]
            ),
            3 => format!("+{column}"),
            _ => self.term_value(),
        }
    }

    fn row(&mut self, n: usize) -> String {
        let terms: Vec<String> = (0..n).map(|_| self.term("t.")).collect();
        format!("({})", terms.join(", "))
    }

    /// The right side of a comparison: a row value, or a subquery giving one (of the same
    /// table, correlated or not, possibly without a row).
    fn row_operand(&mut self, n: usize) -> String {
        match self.below(4) {
            0 => {
                let terms: Vec<String> = (0..n).map(|_| self.term("u.")).collect();
                let filter = [
                    "",
                    " WHERE u.id > t.id",
                    " WHERE u.id = 99",
                    " WHERE u.id >= 2",
                ][self.below(4) as usize];
                let order = [" ORDER BY u.id", " ORDER BY u.id DESC"][self.below(2) as usize];
                format!("(SELECT {} FROM t AS u{filter}{order})", terms.join(", "))
            }
            1 => {
                let terms: Vec<String> = (0..n).map(|_| self.term_value()).collect();
                format!("(SELECT {})", terms.join(", "))
            }
            _ => self.row(n),
        }
    }
}

fn setup(rng: &mut Rng) -> Vec<String> {
    let mut stmts = vec![SETUP.to_string()];
    for id in 1..=8 {
        let v: Vec<String> = (0..5).map(|_| rng.term_value()).collect();
        stmts.push(format!("INSERT INTO t VALUES ({id}, {})", v.join(", ")));
    }
    stmts
}

fn query(rng: &mut Rng) -> String {
    let n = 2 + rng.below(2) as usize;
    let op = ["=", "<>", "<", "<=", ">", ">=", "IS", "IS NOT"][rng.below(8) as usize];
    let l = rng.row(n);
    let r = rng.row_operand(n);
    match rng.below(5) {
        0 => format!("SELECT id FROM t WHERE {l} {op} {r} ORDER BY id"),
        1 => {
            let lo = rng.row(n);
            let hi = rng.row(n);
            let not = ["", "NOT "][rng.below(2) as usize];
            format!("SELECT id, {l} {not}BETWEEN {lo} AND {hi} FROM t ORDER BY id")
        }
        2 => {
            let list: Vec<String> = (0..1 + rng.below(3)).map(|_| rng.row(n)).collect();
            let not = ["", "NOT "][rng.below(2) as usize];
            format!(
                "SELECT id, {l} {not}IN ({}) FROM t ORDER BY id",
                list.join(", ")
            )
        }
        _ => format!("SELECT id, {l} {op} {r} FROM t ORDER BY id"),
    }
}

#[test]
fn seeded_row_value_comparisons_match_sqlite() {
    common::assert_no_mismatches(common::seeded_mismatches(setup, query, 400));
}

#[test]
fn row_value_forms_and_errors_match_sqlite() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(a INTEGER, b TEXT COLLATE NOCASE, c)",
        "INSERT INTO t VALUES (1, 'x', '1'), (2, 'Y', 2), (NULL, 'z', NULL)",
        "SELECT a, (a, b) = ('1', 'X'), (b, a) = ('y', '2'), (c, a) = (1, 1) FROM t",
        "SELECT (1, 'a') < (1, 'B'), ('a' COLLATE NOCASE, 1) = ('A', 1), \
         ('a', 1) = ('A' COLLATE NOCASE, 1)",
        "SELECT (1, NULL) < (2, 3), (NULL, 1) < (2, 3), (1, NULL) = (1, NULL), \
         (1, NULL) IS (1, NULL), (1, 2) IS NOT (1, NULL), (1, 2, 3) >= (1, 2, NULL), \
         (NULL, 1) = (2, 3), (NULL, 1) = (2, 1), (1, NULL) <> (2, NULL)",
        "SELECT (SELECT 1, 2) = (1, 2), (1, 2) = (SELECT 1, 2), (SELECT 1, 2) < (SELECT 1, 3)",
        "SELECT a FROM t WHERE (a, b) = (SELECT a, b FROM t ORDER BY a DESC)",
        "SELECT (SELECT a, b FROM t WHERE a > 5) = (1, 2), \
         (SELECT a, b FROM t WHERE a > 5) IS (NULL, NULL)",
        "SELECT a, (SELECT count(*), max(u.a) FROM t AS u WHERE u.a <= t.a) = (2, 2) FROM t",
        "SELECT (1, 2) IN ((1, 2)), (1, 2) IN ((1, 3), (1, 2)), (1, NULL) IN ((1, 2)), \
         (1, 2) NOT IN ((1, 3)), (1, (2)) IN ((1, 2))",
        "SELECT a, (a, b) IN ((1, 'X'), (2, 'y')), (a, c) NOT IN ((1, 1)) FROM t",
        "SELECT a FROM t WHERE (a, b) BETWEEN (1, 'a') AND (2, 'x') ORDER BY a",
        "SELECT a FROM t WHERE (a, b) NOT BETWEEN (1, 'a') AND (1, 'z') ORDER BY a",
        "SELECT CASE (1, 2) WHEN (1, 3) THEN 'a' WHEN (1, 2) THEN 'b' END",
        "SELECT (1, 2) = (SELECT 1, 2, 3)",
        "SELECT (1, 2) = (1, 2, 3)",
        "SELECT (SELECT 1, 2) = 1",
        "SELECT (SELECT 1, 2) IS NULL",
        "SELECT (SELECT 1, 2) + 1",
        "SELECT (1, 2) IN ((1, 2), 3)",
        "SELECT (1, 2) IN ((1, 2), (1, 2, 3))",
        "SELECT (1, 2) IN (SELECT 1, 2, 3)",
        "UPDATE t SET c = 'hit' WHERE (a, b) = (SELECT 2, 'y')",
        "DELETE FROM t WHERE (a, c) IS (NULL, NULL)",
        "SELECT * FROM t ORDER BY a",
    ]));
}
