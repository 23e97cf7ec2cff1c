//! A UNION ALL chain without ORDER BY stops at LIMIT + OFFSET rows, and EXISTS, scalar and
//! row-value subqueries at their first row, as SQLite codes them: arms after the limit do
//! not run, so their errors never happen (SQLite runs the arms one after the other into
//! the result and jumps to the end at the limit). Results, errors and their absence must
//! equal SQLite's.

mod common;

use common::{assert_no_mismatches, statement_mismatches};

#[test]
fn union_all_limits_and_first_row_subqueries_match_sqlite() {
    assert_no_mismatches(statement_mismatches(&[
        "CREATE TABLE t(a)",
        "INSERT INTO t VALUES (1), (2), (3), (2)",
        "SELECT 1 UNION ALL SELECT abs(-9223372036854775808) LIMIT 1",
        "SELECT a FROM t UNION ALL SELECT abs(-9223372036854775808) FROM t LIMIT 4",
        "SELECT a FROM t UNION ALL SELECT abs(-9223372036854775808) FROM t LIMIT 2 OFFSET 2",
        "SELECT a FROM t UNION ALL SELECT abs(-9223372036854775808) FROM t LIMIT 5",
        "SELECT a FROM t UNION ALL SELECT a * 10 FROM t LIMIT 5",
        "SELECT a FROM t UNION ALL SELECT a * 10 FROM t LIMIT 3 OFFSET 3",
        "SELECT a FROM t UNION ALL SELECT a FROM t LIMIT -1 OFFSET 6",
        "SELECT a FROM t UNION ALL SELECT a FROM t LIMIT (SELECT 2) OFFSET (SELECT 3)",
        "SELECT DISTINCT a FROM t UNION ALL SELECT count(*) FROM t UNION ALL SELECT a FROM t LIMIT 4",
        "SELECT a FROM t UNION ALL SELECT DISTINCT a FROM t LIMIT 6 OFFSET 1",
        "SELECT a FROM t UNION ALL VALUES (7), (8) UNION ALL SELECT a + 100 FROM t LIMIT 7",
        "SELECT a, sum(a) OVER () FROM t UNION ALL SELECT a, 0 FROM t LIMIT 6",
        "SELECT a FROM t UNION SELECT a FROM t UNION ALL SELECT 9 LIMIT 3",
        "SELECT count(*) FROM (SELECT a FROM t UNION ALL SELECT a FROM t LIMIT 5)",
        "SELECT 5 IN (SELECT a FROM t UNION ALL SELECT 5 LIMIT 5), \
                5 IN (SELECT a FROM t UNION ALL SELECT 5 LIMIT 4)",
        "SELECT EXISTS (SELECT a FROM t WHERE a > 5 UNION ALL SELECT a FROM t), \
                EXISTS (SELECT 1 UNION ALL SELECT abs(-9223372036854775808))",
        "SELECT (SELECT 1 UNION ALL SELECT abs(-9223372036854775808)), \
                (SELECT 2 UNION ALL SELECT 3)",
        "SELECT (SELECT a FROM t UNION ALL SELECT abs(-9223372036854775808) FROM t), \
                (1, 2) = (SELECT 1, 2 UNION ALL SELECT 3, abs(-9223372036854775808))",
        "SELECT a, (SELECT count(*) FROM t) FROM t WHERE EXISTS (SELECT 1 FROM t AS u \
                WHERE u.a > 2) ORDER BY (SELECT max(a) FROM t), a",
        "SELECT a FROM t WHERE a = (SELECT 3 UNION ALL SELECT abs(-9223372036854775808))",
    ]));
}
