//! CURRENT_TIME / CURRENT_DATE / CURRENT_TIMESTAMP: read from the clock at each execution
//! of a statement, also of a prepared statement run again (its plan is kept), and refused
//! where SQLite refuses non-deterministic functions (index expressions, partial-index
//! WHEREs, generated columns), as SQLite codes them as calls of datetime functions.

mod common;

#[test]
fn a_reused_statement_reads_the_clock_again() {
    let c = parlite::Connection::open(":memory:").expect("open");
    let mut st = common::prepare_one(
        &c,
        "SELECT current_timestamp, current_time, datetime('now')",
    );
    let read = |st: &mut parlite::Statement| {
        assert!(st.step().expect("step"));
        let v = (st.column(0), st.column(1), st.column(2));
        while st.step().expect("step") {}
        v
    };
    let first = read(&mut st);
    assert_eq!(first.0, first.2, "CURRENT_TIMESTAMP is datetime('now')");
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let second = read(&mut st);
    assert_ne!(
        first.0, second.0,
        "the second execution read the first one's time"
    );
    assert_ne!(first.1, second.1);
    assert_eq!(second.0, second.2);
}

#[test]
fn current_time_where_sqlite_wants_deterministic_values() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(a, b DEFAULT CURRENT_DATE, c DEFAULT (CURRENT_TIME))",
        "CREATE INDEX i1 ON t(current_date)",
        "CREATE INDEX i2 ON t(a) WHERE current_time > '00'",
        "CREATE INDEX i3 ON t(a || current_timestamp)",
        "CREATE TABLE g1(a, b AS (current_timestamp))",
        "CREATE TABLE g2(a, b AS (a || current_date) STORED)",
        "CREATE TABLE k(a CHECK (current_date > '2000'))",
        "INSERT INTO k VALUES (1)",
        "INSERT INTO t(a) VALUES (1)",
        "SELECT length(b), length(c) FROM t",
        "SELECT length(current_date), length(current_time), length(current_timestamp)",
        "SELECT typeof(current_date), current_date = date('now')",
    ]));
}
