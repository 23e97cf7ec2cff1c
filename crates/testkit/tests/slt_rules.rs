//! The sqllogictest runner's parsing, rendering and scoring rules, each checked on a small
//! inline .test snippet run against the SQLite engine.

use parlite_testkit::slt::parse::{parse, Command, Condition, SortMode};
use parlite_testkit::slt::run::{hash_values, render};
use parlite_testkit::slt::{run_text, FileOutcome, Tally};
use parlite_testkit::sqlite::SqliteEngine;
use parlite_testkit::Value;

fn run(text: &str) -> FileOutcome {
    let mut engine = SqliteEngine::memory().unwrap();
    run_text(&mut engine, text)
}

fn tally(passed: usize, failed: usize, skipped: usize) -> Tally {
    Tally {
        passed,
        failed,
        skipped,
    }
}

/// Asserts every record of `text` passes, showing the failures otherwise.
fn assert_all_pass(text: &str, passed: usize) {
    let out = run(text);
    assert_eq!(out.tally, tally(passed, 0, 0), "{:#?}", out.failures);
}

const NINE_ROWS: &str = "statement ok
CREATE TABLE t(x INTEGER); INSERT INTO t VALUES (1),(2),(3),(4),(5),(6),(7),(8),(9)
";

#[test]
fn parses_records_and_conditions() {
    let records = parse(
        "# comment\nhash-threshold 3\n\nskipif mysql\nonlyif sqlite\nquery IT rowsort lbl\nSELECT 1,\n 'a'\n----\n1\na\n\nstatement error\nSELEC 1\n\nquery R\nSELECT 1\n\nhalt\n",
    );
    assert_eq!(records.len(), 5);
    assert_eq!(records[0].command, Command::HashThreshold(3));
    assert_eq!(
        records[1].conditions,
        vec![
            Condition::SkipIf("mysql".into()),
            Condition::OnlyIf("sqlite".into())
        ]
    );
    assert_eq!(records[1].line, 6);
    assert_eq!(
        records[1].command,
        Command::Query {
            types: "IT".into(),
            sort: SortMode::RowSort,
            label: Some("lbl".into()),
            sql: "SELECT 1,\n 'a'".into(),
            expected: Some(vec!["1".into(), "a".into()]),
        }
    );
    assert_eq!(
        records[2].command,
        Command::Statement {
            expect_ok: false,
            sql: "SELEC 1".into()
        }
    );
    assert!(matches!(
        records[3].command,
        Command::Query { expected: None, .. }
    ));
    assert_eq!(records[4].command, Command::Halt);
}

#[test]
fn renders_by_type_letter() {
    assert_eq!(render(&Value::Text(b"12abc".to_vec()), b'I'), "12");
    assert_eq!(render(&Value::Text(b"abc".to_vec()), b'I'), "0");
    assert_eq!(render(&Value::Real(0.5), b'I'), "0");
    assert_eq!(render(&Value::Real(-2.7), b'I'), "-2");
    // sqlite3_column_int is 32-bit: 2^32 + 5 keeps its low half.
    assert_eq!(render(&Value::Integer(4_294_967_301), b'I'), "5");
    assert_eq!(render(&Value::Real(1e19), b'R'), "10000000000000000000.000");
    assert_eq!(
        render(&Value::Integer(i64::MIN), b'R'),
        "-9223372036854776000.000"
    );
    assert_eq!(render(&Value::Integer(7), b'R'), "7.000");
    assert_eq!(render(&Value::Text(b"2.5x".to_vec()), b'R'), "2.500");
    assert_eq!(render(&Value::Text(Vec::new()), b'T'), "(empty)");
    assert_eq!(
        render(&Value::Text(b"a\tb\xc3\xa9".to_vec()), b'T'),
        "a@b@@"
    );
    assert_eq!(render(&Value::Real(2.0), b'T'), "2.0");
    assert_eq!(render(&Value::Integer(-3), b'T'), "-3");
    assert_eq!(render(&Value::Null, b'I'), "NULL");
    assert_eq!(render(&Value::Null, b'T'), "NULL");
}

#[test]
fn renders_what_sqlite_returns() {
    assert_all_pass(
        "query IRTT
SELECT '12abc', 1e19, '', NULL
----
12
10000000000000000000.000
(empty)
NULL

query I
SELECT 2147483648 + 3
----
-2147483645

query T
SELECT 1.0/4
----
0.25
",
        3,
    );
}

#[test]
fn hashes_more_than_eight_values_by_default() {
    let hashed = format!(
        "{NINE_ROWS}
query I nosort
SELECT x FROM t ORDER BY x
----
9 values hashing to 22e400a2ddbb013acf2a5852d6ab69fc
"
    );
    assert_all_pass(&hashed, 2);
    assert_eq!(
        hash_values(&(1..=9).map(|i| i.to_string()).collect::<Vec<_>>()),
        "22e400a2ddbb013acf2a5852d6ab69fc"
    );
    // Eight values are listed, not hashed.
    assert_all_pass(
        &format!("{NINE_ROWS}\nquery I nosort\nSELECT x FROM t WHERE x<9 ORDER BY x\n----\n1\n2\n3\n4\n5\n6\n7\n8\n"),
        2,
    );
}

#[test]
fn hash_threshold_record_changes_and_disables_hashing() {
    assert_all_pass(
        &format!("hash-threshold 2\n\n{NINE_ROWS}\nquery I nosort\nSELECT x FROM t WHERE x<4 ORDER BY x\n----\n3 values hashing to {}\n",
            hash_values(&["1".into(), "2".into(), "3".into()])),
        2,
    );
    let listed: String = (1..=9).map(|i| format!("{i}\n")).collect();
    assert_all_pass(
        &format!("hash-threshold 0\n\n{NINE_ROWS}\nquery I nosort\nSELECT x FROM t ORDER BY x\n----\n{listed}"),
        2,
    );
}

#[test]
fn hash_is_over_sorted_values() {
    // valuesort sorts as strings: "10" sorts before "2".
    assert_all_pass(
        &format!(
            "{NINE_ROWS}
statement ok
INSERT INTO t VALUES (10)

query I valuesort
SELECT x FROM t ORDER BY x DESC
----
10 values hashing to ff2650590d3f27ea6644b5573ccc37ba
"
        ),
        3,
    );
}

#[test]
fn rowsort_sorts_whole_rows_and_valuesort_single_values() {
    let setup = "statement ok
CREATE TABLE p(a TEXT, b INTEGER); INSERT INTO p VALUES ('b', 1), ('a', 2), ('a', 10)
";
    assert_all_pass(
        &format!(
            "{setup}
query TI rowsort
SELECT a, b FROM p
----
a
10
a
2
b
1

query TI valuesort
SELECT a, b FROM p
----
1
10
2
a
a
b

query TI nosort
SELECT a, b FROM p ORDER BY rowid
----
b
1
a
2
a
10
"
        ),
        4,
    );
}

#[test]
fn wrong_results_fail_and_are_reported() {
    let out = run("query I\nSELECT 1\n----\n2\n\nquery I\nSELECT 1\n----\n1\n1\n");
    assert_eq!(out.tally, tally(0, 2, 0));
    assert_eq!(out.failures[0].line, 1);
    assert_eq!(out.failures[0].expected, vec!["2"]);
    assert_eq!(out.failures[0].got, vec!["1"]);
}

#[test]
fn statements_run_like_sqlite3_exec() {
    let out = run("statement ok
CREATE TABLE t(x); INSERT INTO t VALUES (1);
INSERT INTO t VALUES (2)

statement error
INSERT INTO t VALUES (3); SELEC 1

statement ok
SELEC 1

statement error
SELECT 1

query I
SELECT count(*) FROM t
----
3
");
    // The failing batch ran its first statement, then stopped.
    assert_eq!(out.tally, tally(3, 2, 0), "{:#?}", out.failures);
    assert_eq!(out.failures[0].line, 8);
    assert_eq!(out.failures[1].line, 11);
}

#[test]
fn step_error_keeps_earlier_rows_but_prepare_error_fails() {
    let out = run("statement ok
CREATE TABLE t(x); INSERT INTO t VALUES (1), (2), (3)

query I nosort
SELECT CASE WHEN x=2 THEN abs(-9223372036854775807-1) ELSE x END FROM t
----
1

query I
SELECT nosuchcolumn FROM t
----
1
");
    assert_eq!(out.tally, tally(2, 1, 0), "{:#?}", out.failures);
    assert!(out.failures[0].got[0].starts_with("prepare error"));
}

#[test]
fn conditions_skip_for_engine_named_sqlite() {
    let out = run("skipif sqlite
query I
SELECT 1
----
2

onlyif mysql
statement ok
SELEC 1

onlyif sqlite
query I
SELECT 1
----
1

skipif mysql
query I
SELECT 1
----
1
");
    assert_eq!(out.tally, tally(2, 0, 2));
}

#[test]
fn halt_stops_only_when_it_applies() {
    let out = run("onlyif mssql
halt

query I
SELECT 1
----
1

halt

query I
SELECT 1
----
2
");
    assert_eq!(out.tally, tally(1, 0, 0));
}

#[test]
fn labels_must_agree() {
    let out = run("query I nosort label-1
SELECT 1
----
1

query I nosort label-1
SELECT 1
----
1

query I nosort label-1
SELECT 2
----
2
");
    assert_eq!(out.tally, tally(2, 1, 0));
    assert_eq!(out.failures[0].line, 11);
}

#[test]
fn query_without_results_section_only_needs_to_prepare() {
    assert_eq!(run("query I\nSELECT 1\n").tally, tally(1, 0, 0));
    assert_eq!(run("query I\nSELEC 1\n").tally, tally(0, 1, 0));
}

#[test]
fn unknown_records_fail_instead_of_passing() {
    let out = run("frobnicate\nSELECT 1\n\nquery I\nSELECT 1\n----\n1\n");
    assert_eq!(out.tally, tally(1, 1, 0));
}

/// An engine that panics on one statement: that record fails, the rest still run.
struct Panicky(SqliteEngine);

impl parlite_testkit::Engine for Panicky {
    fn name(&self) -> &'static str {
        "panicky"
    }
    fn execute_batch(&mut self, sql: &str) -> Result<(), parlite_testkit::EngineError> {
        if sql.contains("boom") {
            panic!("boom");
        }
        self.0.execute_batch(sql)
    }
    fn query(
        &mut self,
        sql: &str,
    ) -> Result<parlite_testkit::QueryRows, parlite_testkit::EngineError> {
        self.0.query(sql)
    }
    fn run_script(
        &mut self,
        sql: &str,
        on_row: &mut dyn FnMut(&[Value]),
    ) -> Result<(), parlite_testkit::EngineError> {
        self.0.run_script(sql, on_row)
    }
}

#[test]
fn an_engine_panic_fails_one_record() {
    let mut engine = Panicky(SqliteEngine::memory().unwrap());
    let out = run_text(
        &mut engine,
        "statement ok\nSELECT 'boom'\n\nquery I\nSELECT 1\n----\n1\n",
    );
    assert_eq!(out.tally, tally(1, 1, 0));
    assert_eq!(out.failures[0].got, vec!["error: engine panicked: boom"]);
}
