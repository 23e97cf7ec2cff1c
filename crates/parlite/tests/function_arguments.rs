//! Arguments SQLite checks when it prepares a call, against SQLite: likelihood()'s
//! probability must be a real literal between 0.0 and 1.0.

mod common;

#[test]
fn likelihood_takes_a_real_literal_probability() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(a)",
        "INSERT INTO t VALUES (1), (2)",
        "SELECT likelihood(3, 0.5), likely(1), unlikely(2)",
        "SELECT likelihood(3, 1.0), likelihood(3, 0.0), likelihood(3, .25), likelihood(3, 1e-1)",
        "SELECT a FROM t WHERE likelihood(a = 1, 0.9)",
        "SELECT likelihood(3, 2.0)",
        "SELECT likelihood(3, 1)",
        "SELECT LIKELIHOOD(3, -0.5)",
        "SELECT likelihood(3, a) FROM t",
        "SELECT likelihood(3, NULL)",
    ]));
}
