//! Borrowed row access (`Statement::column_ref`, `ValueRef`, `Statement::bind_ref`; row.rs)
//! against rusqlite's answers (`Row::get_ref`) on the same SQL: every storage class, NULL,
//! an index out of range (row.rs invariant 2), no current row (invariant 3: before the
//! first step, after the last, after `reset`), and a schema change between executions.

use parlite::{Connection, Statement, Value, ValueRef};

/// rusqlite's borrowed value, as parlite's `ValueRef` (TEXT checked to be UTF-8).
fn from_rusqlite(v: rusqlite::types::ValueRef<'_>) -> ValueRef<'_> {
    use rusqlite::types::ValueRef as V;
    match v {
        V::Null => ValueRef::Null,
        V::Integer(i) => ValueRef::Integer(i),
        V::Real(r) => ValueRef::Real(r),
        V::Text(t) => ValueRef::Text(std::str::from_utf8(t).expect("utf-8")),
        V::Blob(b) => ValueRef::Blob(b),
    }
}

fn prep(c: &Connection, sql: &str) -> Statement {
    c.prepare(sql).expect("prepare").expect("one statement").0
}

/// Every row of `sql` on both engines, read borrowed and compared column by column; the
/// number of rows.
fn same_rows(p: &Connection, s: &rusqlite::Connection, sql: &str) -> usize {
    let mut ps = prep(p, sql);
    let mut ss = s.prepare(sql).expect("sqlite prepare");
    assert_eq!(ps.column_count(), ss.column_count(), "{sql}");
    let ncol = ss.column_count();
    let mut rows = ss.raw_query();
    let mut n = 0;
    while let Some(row) = rows.next().expect("sqlite step") {
        assert!(
            ps.step().expect("parlite step"),
            "{sql}: parlite ended at row {n}"
        );
        for i in 0..ncol {
            let want = from_rusqlite(row.get_ref(i).expect("sqlite column"));
            let got = ps.column_ref(i).expect("parlite column");
            assert_eq!(got, want, "{sql}: row {n} column {i}");
            // The copying accessor agrees with the borrowed one.
            assert_eq!(ps.column(i), got.to_value(), "{sql}: row {n} column {i}");
        }
        // Past the last column: an error on both sides.
        assert!(row.get_ref(ncol).is_err());
        let e = ps.column_ref(ncol).expect_err("out of range");
        assert_eq!(e.code, 25, "SQLITE_RANGE");
        assert_eq!(e.message, "column index out of range");
        n += 1;
    }
    assert!(
        !ps.step().expect("parlite end"),
        "{sql}: parlite has more rows"
    );
    n
}

fn both() -> (Connection, rusqlite::Connection) {
    (
        Connection::open(":memory:").expect("parlite"),
        rusqlite::Connection::open_in_memory().expect("sqlite"),
    )
}

fn exec_both(p: &Connection, s: &rusqlite::Connection, sql: &str) {
    p.execute_batch(sql).expect("parlite exec");
    s.execute_batch(sql).expect("sqlite exec");
}

#[test]
fn every_storage_class_reads_as_rusqlite_does() {
    let (p, s) = both();
    exec_both(
        &p,
        &s,
        "CREATE TABLE t(i INTEGER, r REAL, x TEXT, b BLOB, n, any_col);
         INSERT INTO t VALUES(1, 2.5, 'text', x'00ff10', NULL, 'a');
         INSERT INTO t VALUES(-9223372036854775808, -0.0, '', x'', NULL, 7);
         INSERT INTO t VALUES(9223372036854775807, 3, 'ünïcødé ✓', zeroblob(3), NULL, 1.5);
         INSERT INTO t VALUES(NULL, NULL, NULL, NULL, NULL, x'41');
         INSERT INTO t VALUES('12', '4', 5, 'blob as text', 0, NULL);",
    );
    assert_eq!(same_rows(&p, &s, "SELECT * FROM t"), 5);
    assert_eq!(
        same_rows(&p, &s, "SELECT rowid, * FROM t ORDER BY x DESC"),
        5
    );
    same_rows(
        &p,
        &s,
        "SELECT 1, 2.5, 'lit', x'cafe', NULL, 1e308 * 10, typeof(r), length(b) FROM t",
    );
    same_rows(&p, &s, "SELECT group_concat(x), sum(i), avg(r) FROM t");
    same_rows(&p, &s, "SELECT x, count(*) FROM t GROUP BY x ORDER BY 1");
}

#[test]
fn a_real_column_holding_an_integral_value_reads_as_real() {
    let (p, s) = both();
    exec_both(
        &p,
        &s,
        "CREATE TABLE t(r REAL); INSERT INTO t VALUES(3), (4.0), ('5'), (-1);",
    );
    assert_eq!(same_rows(&p, &s, "SELECT r, r + 0 FROM t"), 4);
    let mut st = prep(&p, "SELECT r FROM t LIMIT 1");
    assert!(st.step().expect("step"));
    assert_eq!(st.column_ref(0).expect("col"), ValueRef::Real(3.0));
    assert_eq!(st.column_ref(0).expect("col").as_f64(), Some(3.0));
    assert_eq!(st.column_ref(0).expect("col").as_i64(), None);
}

#[test]
fn no_current_row_reads_null_in_range_and_errors_past_it() {
    let p = Connection::open(":memory:").expect("open");
    p.execute_batch("CREATE TABLE t(a, b); INSERT INTO t VALUES('x', x'01');")
        .expect("setup");
    let mut st = prep(&p, "SELECT a, b FROM t");
    // Before the first step (sqlite3_column_type answers SQLITE_NULL).
    assert_eq!(st.column_ref(0).expect("col"), ValueRef::Null);
    assert_eq!(st.column_ref(1).expect("col"), ValueRef::Null);
    assert_eq!(st.column_ref(2).expect_err("range").code, 25);
    assert!(st.step().expect("step"));
    assert_eq!(st.column_ref(0).expect("col"), ValueRef::Text("x"));
    assert_eq!(st.column_ref(1).expect("col"), ValueRef::Blob(&[1]));
    // After the last row.
    assert!(!st.step().expect("end"));
    assert!(st.column_ref(0).expect("col").is_null());
    assert_eq!(st.column_ref(2).expect_err("range").code, 25);
    // After reset, and again after the next run's first step.
    st.reset();
    assert!(st.step().expect("rerun"));
    st.reset();
    assert!(st.column_ref(1).expect("col").is_null());
    assert_eq!(st.column(1), Value::Null);
    assert!(st.step().expect("rerun"));
    assert_eq!(st.column_ref(0).expect("col").as_str(), Some("x"));
    assert_eq!(st.column_ref(1).expect("col").as_blob(), Some(&[1u8][..]));
}

#[test]
fn a_statement_with_no_result_columns_has_none_to_read() {
    let p = Connection::open(":memory:").expect("open");
    let mut st = prep(&p, "CREATE TABLE t(a)");
    assert_eq!(st.column_count(), 0);
    assert_eq!(st.column_ref(0).expect_err("range").code, 25);
    assert!(!st.step().expect("step"));
    assert_eq!(st.column_ref(0).expect_err("range").code, 25);
}

#[test]
fn schema_change_between_executions_reads_the_new_columns() {
    let (p, s) = both();
    exec_both(
        &p,
        &s,
        "CREATE TABLE t(a, b); INSERT INTO t VALUES(1, 'one');",
    );
    let mut ps = prep(&p, "SELECT * FROM t");
    let mut ss = s.prepare("SELECT * FROM t").expect("sqlite prepare");
    assert!(ps.step().expect("step"));
    assert_eq!(ps.column_ref(1).expect("col"), ValueRef::Text("one"));
    ps.reset();
    // The same connection, then another one, change the table under the statement.
    p.execute_batch("ALTER TABLE t ADD COLUMN c DEFAULT 'dflt'")
        .expect("alter");
    s.execute_batch("ALTER TABLE t ADD COLUMN c DEFAULT 'dflt'")
        .expect("alter");
    assert!(ps.step().expect("step after ALTER"));
    let mut rows = ss.raw_query();
    let row = rows.next().expect("sqlite step").expect("a row");
    let ncol = row.as_ref().column_count();
    assert_eq!(ncol, 3);
    assert_eq!(ps.column_count(), ncol);
    for i in 0..ncol {
        assert_eq!(
            ps.column_ref(i).expect("col"),
            from_rusqlite(row.get_ref(i).expect("sqlite col")),
            "column {i}"
        );
    }
    assert_eq!(ps.column_ref(2).expect("col"), ValueRef::Text("dflt"));
    drop(rows);
    ps.reset();

    let db_path = std::env::temp_dir().join(format!("column_ref_{}.db", std::process::id()));
    let path = db_path.to_str().expect("utf-8 path").to_string();
    let _ = std::fs::remove_file(&db_path);
    let db = parlite::Database::open(&path).expect("open file");
    let c1 = db.connect().expect("c1");
    let c2 = db.connect().expect("c2");
    c1.execute_batch("CREATE TABLE u(a); INSERT INTO u VALUES(x'beef');")
        .expect("setup");
    let mut st = prep(&c1, "SELECT * FROM u");
    assert_eq!(st.column_count(), 1);
    c2.execute_batch("ALTER TABLE u ADD COLUMN b DEFAULT 42")
        .expect("alter elsewhere");
    assert!(st.step().expect("step"));
    assert_eq!(st.column_count(), 2);
    assert_eq!(
        st.column_ref(0).expect("col"),
        ValueRef::Blob(&[0xbe, 0xef])
    );
    assert_eq!(st.column_ref(1).expect("col"), ValueRef::Integer(42));
    assert_eq!(st.column_ref(2).expect_err("range").code, 25);
    drop((st, c1, c2, db));
    let _ = std::fs::remove_file(&db_path);
}

#[test]
fn bind_ref_binds_every_type_as_bind_does() {
    let (p, s) = both();
    let sql = "SELECT ?1, typeof(?1), ?2, typeof(?2), ?3, ?4, ?5, length(?5)";
    let mut ps = prep(&p, sql);
    let mut ss = s.prepare(sql).expect("sqlite prepare");
    let cases: [[ValueRef<'_>; 5]; 3] = [
        [
            ValueRef::Integer(-7),
            ValueRef::Real(0.25),
            ValueRef::Text("héllo"),
            ValueRef::Blob(&[0, 1, 2]),
            ValueRef::Null,
        ],
        [
            ValueRef::Text(""),
            ValueRef::Blob(&[]),
            ValueRef::Integer(i64::MAX),
            ValueRef::Real(-1e300),
            ValueRef::Text("abc"),
        ],
        [
            ValueRef::Null,
            ValueRef::Null,
            ValueRef::Null,
            ValueRef::Null,
            ValueRef::Blob(b"xyz"),
        ],
    ];
    for case in cases {
        for (i, v) in case.iter().enumerate() {
            ps.bind_ref(i + 1, *v).expect("bind_ref");
            let r = match *v {
                ValueRef::Null => ss.raw_bind_parameter(i + 1, rusqlite::types::Null),
                ValueRef::Integer(x) => ss.raw_bind_parameter(i + 1, x),
                ValueRef::Real(x) => ss.raw_bind_parameter(i + 1, x),
                ValueRef::Text(x) => ss.raw_bind_parameter(i + 1, x),
                ValueRef::Blob(x) => ss.raw_bind_parameter(i + 1, x),
            };
            r.expect("sqlite bind");
        }
        let mut rows = ss.raw_query();
        let row = rows.next().expect("sqlite step").expect("a row");
        assert!(ps.step().expect("step"));
        for i in 0..8 {
            assert_eq!(
                ps.column_ref(i).expect("col"),
                from_rusqlite(row.get_ref(i).expect("sqlite col")),
                "{case:?} column {i}"
            );
        }
        drop(rows);
        ps.reset();
    }
    // Index 0 and past the parameters: SQLITE_RANGE, as `bind`.
    assert_eq!(ps.bind_ref(0, ValueRef::Null).expect_err("0").code, 25);
    assert_eq!(
        ps.bind_ref(6, ValueRef::Integer(1)).expect_err("6").code,
        25
    );
    assert_eq!(ps.bind(6, Value::Integer(1)).expect_err("6").code, 25);
    // NaN binds as NULL through either call.
    let mut st = prep(&p, "SELECT typeof(?1)");
    st.bind_ref(1, ValueRef::Real(f64::NAN)).expect("bind");
    assert!(st.step().expect("step"));
    assert_eq!(st.column_ref(0).expect("col"), ValueRef::Text("null"));
}

#[test]
fn value_ref_conversions() {
    let owned = [
        Value::Null,
        Value::Integer(3),
        Value::Real(1.5),
        Value::Text("t".into()),
        Value::Blob(vec![9, 8]),
    ];
    for v in &owned {
        let r = ValueRef::from(v);
        assert_eq!(&r.to_value(), v);
        assert_eq!(&Value::from(r), v);
    }
    assert_eq!(ValueRef::Text("a").as_blob(), None);
    assert_eq!(ValueRef::Blob(b"a").as_str(), None);
    assert_eq!(ValueRef::Integer(1).as_f64(), None);
    assert!(!ValueRef::Integer(0).is_null());
}
