//! `_` digit separators in numeric literals (SQLite 3.46+, lang_expr.html "Literal
//! Values"): accepted between two digits of an integer, real or hex literal wherever an
//! expression is; anything else is SQLite's "unrecognized token", and where SQLite's
//! grammar wants a plain number (a PRAGMA value, a type's size) a syntax error.
//! Compared with SQLite statement by statement: rows, values and error messages.

mod common;

#[test]
fn digit_separators_match_sqlite() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "SELECT 1_000, 1_0.2_5, 0xF_F, 1e1_0, .5_5, 2_5e-1_0",
        "SELECT -9_223_372_036_854_775_808, typeof(9_223_372_036_854_775_808)",
        "SELECT 1_000 AS a, -2_0, +3_0, 0x7FFF_FFFF_FFFF_FFFF",
        "SELECT 0x_1",
        "SELECT 0x1_",
        "SELECT 1__0",
        "SELECT 1_",
        "SELECT 1_e10",
        "SELECT 1e_10",
        "SELECT 1_a",
        "SELECT 1._5",
        "SELECT 1_.5",
        "SELECT 1 LIMIT 1_0 OFFSET 0_0",
        "PRAGMA cache_size = 1_000",
        "CREATE TABLE x(a VARCHAR(1_0))",
        "CREATE TABLE y(a DEFAULT 1_0, b DEFAULT -2_0, c CHECK (c < 1_000))",
        "INSERT INTO y(c) VALUES (99_9)",
        "INSERT INTO y(c) VALUES (1_000)",
        "SELECT * FROM y",
        "SELECT c FROM y WHERE c BETWEEN 9_0_0 AND 1_0_0_0",
    ]));
}
