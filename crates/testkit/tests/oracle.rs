//! The differential oracle: statement splitting, and that a disagreement is found.

use parlite_testkit::oracle::{compare, split_statements, Outcome};
use parlite_testkit::sqlite::SqliteEngine;
use parlite_testkit::{Engine, EngineError, QueryRows, Value};

#[test]
fn splits_at_statement_ends_only() {
    assert_eq!(
        split_statements(
            "SELECT ';'; CREATE TRIGGER t AFTER INSERT ON x BEGIN SELECT 1; END;\n-- c\nSELECT 2"
        ),
        vec![
            "SELECT ';';",
            "CREATE TRIGGER t AFTER INSERT ON x BEGIN SELECT 1; END;",
            "-- c\nSELECT 2"
        ]
    );
    assert!(split_statements(" ; ;").is_empty());
}

/// SQLite, except that it answers every integer one too high.
struct OffByOne(SqliteEngine);

impl Engine for OffByOne {
    fn name(&self) -> &'static str {
        "off-by-one"
    }
    fn execute_batch(&mut self, sql: &str) -> Result<(), EngineError> {
        self.0.execute_batch(sql)
    }
    fn query(&mut self, sql: &str) -> Result<QueryRows, EngineError> {
        let mut r = self.0.query(sql)?;
        for v in r.rows.iter_mut().flatten() {
            if let Value::Integer(i) = v {
                *i += 1;
            }
        }
        Ok(r)
    }
    fn run_script(
        &mut self,
        sql: &str,
        on_row: &mut dyn FnMut(&[Value]),
    ) -> Result<(), EngineError> {
        self.0.run_script(sql, on_row)
    }
}

const SCRIPT: &str = "CREATE TABLE t(a, b TEXT);
INSERT INTO t VALUES (1, 'x'), (2.5, NULL);
SELECT a, b FROM t ORDER BY a;
SELECT b FROM t WHERE a > 2;
SELECT nosuch FROM t;
SELECT count(*) FROM t;";

#[test]
fn sqlite_agrees_with_itself() {
    let mut a = SqliteEngine::memory().unwrap();
    let mut b = SqliteEngine::memory().unwrap();
    assert_eq!(compare(&mut a, &mut b, SCRIPT), vec![]);
}

#[test]
fn finds_wrong_rows_and_reports_both_sides() {
    let mut a = SqliteEngine::memory().unwrap();
    let mut b = OffByOne(SqliteEngine::memory().unwrap());
    let diffs = compare(&mut a, &mut b, SCRIPT);
    let sqls: Vec<&str> = diffs.iter().map(|d| d.sql.as_str()).collect();
    assert_eq!(
        sqls,
        vec!["SELECT a, b FROM t ORDER BY a;", "SELECT count(*) FROM t;"]
    );
    assert_eq!(
        diffs[1].reference,
        Outcome::Rows {
            rows: vec![vec![Value::Integer(2)]],
            step_error: None
        }
    );
}
