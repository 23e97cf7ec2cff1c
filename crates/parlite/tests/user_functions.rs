//! `Connection::create_function`: the application's scalar functions and aggregates
//! (parlite_sql::func::user): results and errors as SQLite gives them for the same
//! definitions (crates/capi/tests/c/functions.c checks the C API's against SQLite itself),
//! overriding a built-in, deletion, and that a definition belongs to its connection alone.

use parlite::{Aggregate, Connection, Database, UserAggregate, UserImpl, UserScalar, Value};
use parlite_sql::value::{Result as SqlResult, SqlError, Value as SqlValue};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// twice(x): x * 2 for numbers, x repeated for text, NULL for NULL; an error for blobs.
struct Twice;

impl UserScalar for Twice {
    fn call(&self, args: &[SqlValue]) -> SqlResult<SqlValue> {
        Ok(match &args[0] {
            SqlValue::Integer(i) => SqlValue::Integer(i * 2),
            SqlValue::Real(r) => SqlValue::real(r * 2.0),
            SqlValue::Text(t) => SqlValue::text(format!("{t}{t}")),
            SqlValue::Null => SqlValue::Null,
            SqlValue::Blob(_) => return Err(SqlError::msg("twice: no blobs")),
        })
    }
}

/// isum(x): the integer sum of a group, or 'empty' for none.
struct ISum;

struct ISumGroup {
    sum: Option<i64>,
}

impl Aggregate for ISumGroup {
    fn step(&mut self, args: &[SqlValue]) -> SqlResult<()> {
        if let SqlValue::Integer(i) = args[0] {
            *self.sum.get_or_insert(0) += i;
        }
        Ok(())
    }
    fn finalize(&mut self) -> SqlResult<SqlValue> {
        Ok(self.sum.map_or(SqlValue::text("empty"), SqlValue::Integer))
    }
    fn value(&self) -> SqlResult<SqlValue> {
        Err(SqlError::msg("not a window function"))
    }
}

impl UserAggregate for ISum {
    fn accumulator(&self) -> Box<dyn Aggregate> {
        Box::new(ISumGroup { sum: None })
    }
}

fn rows(c: &Connection, sql: &str) -> Result<Vec<Vec<Value>>, String> {
    let (mut st, _) = c.prepare(sql).map_err(|e| e.message)?.expect("a statement");
    let mut out = Vec::new();
    while st.step().map_err(|e| e.message)? {
        out.push((0..st.column_count()).map(|i| st.column(i)).collect());
    }
    Ok(out)
}

fn define_in_parlite(c: &Connection) {
    c.create_function(
        "twice",
        Some(1),
        true,
        Some(UserImpl::Scalar(Arc::new(Twice))),
    )
    .expect("twice");
    c.create_function(
        "ISUM",
        Some(1),
        true,
        Some(UserImpl::Aggregate(Arc::new(ISum))),
    )
    .expect("isum");
}

fn int(i: i64) -> Value {
    Value::Integer(i)
}

fn text(t: &str) -> Value {
    Value::Text(t.into())
}

#[test]
fn user_functions_answer_as_in_sqlite() {
    let c = Connection::open(":memory:").expect("open");
    define_in_parlite(&c);
    c.execute_batch(
        "CREATE TABLE t(g, x); INSERT INTO t VALUES (1, 10), (1, 'a'), (2, 2.5), (2, NULL), (3, 7);",
    )
    .expect("setup");
    let cases: [(&str, Result<Vec<Vec<Value>>, &str>); 12] = [
        (
            "SELECT twice(1), twice(-2.5), twice('ab'), twice(NULL), TWICE(twice(3))",
            Ok(vec![vec![
                int(2),
                Value::Real(-5.0),
                text("abab"),
                Value::Null,
                int(12),
            ]]),
        ),
        (
            "SELECT g, twice(x) FROM t WHERE g <> 2 ORDER BY g, x",
            Ok(vec![
                vec![int(1), int(20)],
                vec![int(1), text("aa")],
                vec![int(3), int(14)],
            ]),
        ),
        ("SELECT twice(x'00')", Err("twice: no blobs")),
        (
            "SELECT twice(1, 2)",
            Err("wrong number of arguments to function twice()"),
        ),
        ("SELECT isum(x) FROM t", Ok(vec![vec![int(17)]])),
        (
            "SELECT isum(x) FROM t WHERE 0",
            Ok(vec![vec![text("empty")]]),
        ),
        (
            "SELECT g, isum(x), count(*) FROM t GROUP BY g ORDER BY g",
            Ok(vec![
                vec![int(1), int(10), int(2)],
                vec![int(2), text("empty"), int(2)],
                vec![int(3), int(7), int(1)],
            ]),
        ),
        ("SELECT isum(DISTINCT g) FROM t", Ok(vec![vec![int(6)]])),
        // 'empty' is TEXT, which sorts above every number.
        (
            "SELECT g FROM t GROUP BY g HAVING isum(x) > 5 ORDER BY g",
            Ok(vec![vec![int(1)], vec![int(2)], vec![int(3)]]),
        ),
        (
            "SELECT isum(x) OVER () FROM t",
            Err("isum() may not be used as a window function"),
        ),
        ("CREATE INDEX tx ON t(twice(x))", Ok(vec![])),
        (
            "SELECT x FROM t WHERE twice(x) = 20",
            Ok(vec![vec![int(10)]]),
        ),
    ];
    for (sql, want) in cases {
        assert_eq!(rows(&c, sql), want.map_err(String::from), "{sql}");
    }
}

#[test]
fn a_definition_overrides_a_builtin_until_deleted() {
    let c = Connection::open(":memory:").expect("open");
    c.create_function(
        "upper",
        Some(1),
        true,
        Some(UserImpl::Scalar(Arc::new(Twice))),
    )
    .expect("define");
    assert_eq!(
        rows(&c, "SELECT upper('ab'), upper('a', 'b')").err(),
        Some("wrong number of arguments to function upper()".into())
    );
    assert_eq!(
        rows(&c, "SELECT upper('ab')"),
        Ok(vec![vec![Value::Text("abab".into())]])
    );
    c.create_function("upper", Some(1), true, None)
        .expect("delete");
    assert_eq!(
        rows(&c, "SELECT upper('ab')"),
        Ok(vec![vec![Value::Text("AB".into())]])
    );
    assert_eq!(
        rows(&c, "SELECT nosuch(1)").err(),
        Some("no such function: nosuch".into())
    );
}

/// Counts the drops of the function it is part of.
struct Dropped(Arc<AtomicUsize>);

impl Drop for Dropped {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

struct Counted(#[allow(dead_code)] Dropped);

impl UserScalar for Counted {
    fn call(&self, _: &[SqlValue]) -> SqlResult<SqlValue> {
        Ok(SqlValue::Integer(1))
    }
}

#[test]
fn definitions_belong_to_their_connection_and_go_with_it() {
    let db = Database::open(":memory:").expect("open");
    let a = db.connect().expect("connect");
    let b = db.connect().expect("connect");
    let drops = Arc::new(AtomicUsize::new(0));
    let f = Counted(Dropped(drops.clone()));
    a.create_function("one", None, false, Some(UserImpl::Scalar(Arc::new(f))))
        .expect("define");
    assert_eq!(
        rows(&a, "SELECT one(), one(1, 2, 3)"),
        Ok(vec![vec![Value::Integer(1), Value::Integer(1)]])
    );
    assert_eq!(
        rows(&b, "SELECT one()").err(),
        Some("no such function: one".into())
    );
    // A statement prepared before the definition is deleted still names it: it then
    // fails rather than call a function that is gone.
    let (mut kept, _) = a.prepare("SELECT one()").expect("prepare").expect("stmt");
    a.create_function("one", None, false, None).expect("delete");
    assert_eq!(drops.load(Ordering::SeqCst), 1, "dropped on deletion");
    assert_eq!(
        kept.step().err().map(|e| e.message),
        Some("no such function: one".into())
    );
    let f = Counted(Dropped(drops.clone()));
    a.create_function("one", None, false, Some(UserImpl::Scalar(Arc::new(f))))
        .expect("define again");
    drop(kept);
    drop(a);
    assert_eq!(
        drops.load(Ordering::SeqCst),
        2,
        "dropped with the connection"
    );
}

/// regexp(pattern, text): true when `text` contains `pattern` (a plain substring here).
struct Contains;

impl UserScalar for Contains {
    fn call(&self, args: &[SqlValue]) -> SqlResult<SqlValue> {
        let text = |v: &SqlValue| v.to_text_or_empty().into_owned();
        Ok(SqlValue::Integer(i64::from(
            text(&args[1]).contains(&text(&args[0])),
        )))
    }
}

/// `x REGEXP y` calls the application's regexp(y, x), as SQLite's does (and NOT REGEXP
/// negates it); without one it is "no such function: regexp" when the statement is
/// prepared, before its operands are resolved.
#[test]
fn regexp_operator_calls_the_applications_regexp() {
    let c = Connection::open(":memory:").expect("open");
    let err = c
        .prepare("SELECT nosuch REGEXP 'a'")
        .err()
        .expect("no regexp yet");
    assert_eq!(err.message, "no such function: regexp");
    c.create_function(
        "regexp",
        Some(2),
        true,
        Some(UserImpl::Scalar(Arc::new(Contains))),
    )
    .expect("regexp");
    assert_eq!(
        rows(
            &c,
            "SELECT 'abc' REGEXP 'b', 'abc' REGEXP 'x', 'abc' NOT REGEXP 'x', NULL REGEXP 'a'"
        )
        .expect("rows"),
        vec![vec![int(1), int(0), int(1), int(0)]]
    );
}
