//! ORDER BY through an index on an expression (the hc_mixed scan of the many-writers issue):
//! `WHERE substr(c,1,16) >= ? ORDER BY substr(c,1,16) LIMIT 10` walks the index and stops
//! after 10 rows instead of sorting. The plan must read as SQLite's (no `USE TEMP B-TREE FOR
//! ORDER BY`) and the rows must be SQLite's (rusqlite, bundled), in order.

use parlite::{Connection, Value};

const SCHEMA: &str = "
    CREATE TABLE tbl(a INTEGER PRIMARY KEY, b BLOB, c TEXT, d INTEGER);
    CREATE INDEX tbl_i1 ON tbl(substr(c,1,16));
    CREATE INDEX tbl_i2 ON tbl(substr(c,2,16));
    CREATE INDEX tbl_i3 ON tbl(d, lower(c) DESC);
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 600)
      INSERT INTO tbl SELECT i, zeroblob(i % 7),
        CASE WHEN i % 50 = 0 THEN NULL
             ELSE printf('%X%X', (i * 2654435761) % 65536, (i * 40503) % 4096) END,
        i % 5 FROM n;
    INSERT INTO tbl VALUES (1000, NULL, 'A00000000000000000dup', 1), (1001, NULL, 'A00000000000000000dup', 1);
";

/// Rows of parlite, values as text (NULL as "NULL") so both engines compare alike.
fn ours(c: &Connection, sql: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let (mut st, _) = c.prepare(sql).expect("prepare").expect("statement");
    while st.step().expect("step") {
        out.push(
            (0..st.column_count())
                .map(|i| match st.column(i) {
                    Value::Null => "NULL".to_string(),
                    Value::Integer(v) => v.to_string(),
                    Value::Real(v) => v.to_string(),
                    Value::Text(t) => t,
                    Value::Blob(b) => format!("x{}", b.len()),
                })
                .collect(),
        );
    }
    out
}

fn theirs(s: &rusqlite::Connection, sql: &str) -> Vec<Vec<String>> {
    let mut st = s.prepare(sql).expect("prepare");
    let n = st.column_count();
    // Unbound parameters are NULL, as in parlite.
    let nulls = vec![rusqlite::types::Null; st.parameter_count()];
    st.query_map(rusqlite::params_from_iter(nulls), |r| {
        (0..n)
            .map(|i| {
                Ok(match r.get_ref(i)? {
                    rusqlite::types::ValueRef::Null => "NULL".to_string(),
                    rusqlite::types::ValueRef::Integer(v) => v.to_string(),
                    rusqlite::types::ValueRef::Real(v) => v.to_string(),
                    rusqlite::types::ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                    rusqlite::types::ValueRef::Blob(b) => format!("x{}", b.len()),
                })
            })
            .collect()
    })
    .expect("query")
    .collect::<Result<_, _>>()
    .expect("rows")
}

fn engines() -> (Connection, rusqlite::Connection) {
    let c = Connection::open(":memory:").expect("open");
    let s = rusqlite::Connection::open_in_memory().expect("sqlite");
    c.execute_batch(SCHEMA).expect("schema");
    s.execute_batch(SCHEMA).expect("schema");
    (c, s)
}

/// The `detail` column of EXPLAIN QUERY PLAN.
fn plan_ours(c: &Connection, q: &str) -> Vec<String> {
    ours(c, &format!("EXPLAIN QUERY PLAN {q}"))
        .into_iter()
        .map(|r| r[3].clone())
        .collect()
}

fn plan_theirs(s: &rusqlite::Connection, q: &str) -> Vec<String> {
    theirs(s, &format!("EXPLAIN QUERY PLAN {q}"))
        .into_iter()
        .map(|r| r[3].clone())
        .collect()
}

#[test]
fn order_by_an_indexed_expression_walks_the_index_as_sqlite_does() {
    let (c, s) = engines();
    // hc_mixed's scan as it is prepared (its rows are checked below with bound keys).
    let q = "SELECT * FROM tbl WHERE substr(c,1,16)>=? ORDER BY substr(c,1,16) LIMIT 10";
    assert_eq!(
        plan_ours(&c, q),
        ["SEARCH tbl USING INDEX tbl_i1 (<expr>>?)"],
        "{q}"
    );
    assert_eq!(plan_ours(&c, q), plan_theirs(&s, q), "{q}");
    for q in [
        "SELECT * FROM tbl WHERE substr(c,1,16)>='8' ORDER BY substr(c,1,16) LIMIT 10",
        "SELECT * FROM tbl WHERE substr(c,1,16)>'8' ORDER BY substr(c,1,16) DESC LIMIT 10",
        "SELECT a, b FROM tbl WHERE substr(c,2,16)<'4' ORDER BY substr(c,2,16) DESC LIMIT 5",
        "SELECT a, d FROM tbl WHERE substr(c, 1, 16) >= 'A' ORDER BY substr(c, 1, 16), a LIMIT 4",
        "SELECT a, c FROM tbl WHERE d = 3 ORDER BY lower(c) DESC LIMIT 7",
        "SELECT a, c FROM tbl WHERE d = 3 ORDER BY lower(c) LIMIT 7",
    ] {
        let plan = plan_ours(&c, q);
        assert_eq!(plan, plan_theirs(&s, q), "{q}");
        assert!(
            !plan.iter().any(|p| p.contains("TEMP B-TREE")),
            "{q}: {plan:?}"
        );
        assert_eq!(ours(&c, q), theirs(&s, q), "{q}");
    }
}

#[test]
fn order_by_an_expression_the_index_does_not_give_still_sorts() {
    let (c, s) = engines();
    for q in [
        // A different expression, collation, or direction mix than the index has.
        "SELECT a FROM tbl WHERE substr(c,1,16)>='8' ORDER BY substr(c,1,15) LIMIT 10",
        "SELECT a FROM tbl WHERE substr(c,1,16)>='8' ORDER BY substr(c,1,16) COLLATE NOCASE LIMIT 10",
        "SELECT a FROM tbl WHERE substr(c,1,16)>='8' ORDER BY substr(c,1,16), a DESC LIMIT 10",
        "SELECT a FROM tbl WHERE substr(c,1,16)>='8' ORDER BY substr(c,2,16) LIMIT 10",
        "SELECT a FROM tbl WHERE d = 3 ORDER BY upper(c) LIMIT 7",
    ] {
        let plan = plan_ours(&c, q);
        assert!(
            plan.iter().any(|p| p == "USE TEMP B-TREE FOR ORDER BY"
                || p == "USE TEMP B-TREE FOR RIGHT PART OF ORDER BY"),
            "{q}: {plan:?}"
        );
        assert_eq!(ours(&c, q), theirs(&s, q), "{q}");
    }
}

#[test]
fn prepared_scan_rebinds_and_stops_at_the_limit() {
    let (c, s) = engines();
    let q = "SELECT a, c FROM tbl WHERE substr(c,1,16)>=?1 ORDER BY substr(c,1,16) LIMIT 10";
    let (mut st, _) = c.prepare(q).expect("prepare").expect("statement");
    let mut sst = s.prepare(q).expect("prepare");
    for key in ["", "0", "7FFF", "A0000000000000000", "C", "FFFF", "zzz"] {
        st.reset();
        st.bind(1, Value::Text(key.into())).expect("bind");
        let mut got = Vec::new();
        while st.step().expect("step") {
            got.push((st.column(0), st.column(1)));
        }
        let want: Vec<(Value, Value)> = sst
            .query_map([key], |r| {
                Ok((
                    Value::Integer(r.get(0)?),
                    r.get::<_, Option<String>>(1)?
                        .map_or(Value::Null, Value::Text),
                ))
            })
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows");
        assert_eq!(got, want, "key {key:?}");
    }
}
