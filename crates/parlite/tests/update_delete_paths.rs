//! The UPDATE/DELETE write path's shortcuts must give SQLite's results: rows found
//! straight from a rowid lookup or an index range when the WHERE clause is one comparison
//! (exec/dml/target.rs), with the general SELECT for every case the shortcut cannot decide
//! exactly (collations, affinities, partial, expression and DESC indexes), and in-place
//! UPDATEs that leave alone the indexes whose columns they do not assign (exec/dml.rs
//! `write_row_over`). Indexes are read back through INDEXED BY and checked with
//! `PRAGMA integrity_check`.

mod common;
use common::{check_script, Compare};
use parlite::{Connection, Value};

const SETUP: &str = "
CREATE TABLE z(a INTEGER UNIQUE, b INTEGER, c TEXT, r REAL, n NUMERIC);
CREATE INDEX zb ON z(b);
CREATE INDEX zc ON z(c);
CREATE INDEX zr ON z(r);
WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 400)
  INSERT INTO z SELECT i, (i * 7919) % 211, 'v' || (i % 37), i * 0.5, i % 50 FROM s;
INSERT INTO z VALUES(1001, 'text in b', 'T', 'x', '12abc');
INSERT INTO z VALUES(1002, NULL, NULL, NULL, NULL);
INSERT INTO z VALUES(1003, 7.5, 'v7', 7.0, 7.0);
CREATE TABLE m(a INT, b INT, UNIQUE(a, b));
WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 60)
  INSERT INTO m SELECT i % 4, i FROM s;
CREATE TABLE k(id INTEGER PRIMARY KEY, s TEXT COLLATE NOCASE, t TEXT, u);
CREATE INDEX ks ON k(s COLLATE BINARY);
CREATE INDEX kt ON k(t);
CREATE INDEX ku ON k(u DESC);
WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 120)
  INSERT INTO k SELECT i, CASE i % 3 WHEN 0 THEN 'abc' WHEN 1 THEN 'ABC' ELSE 'x' || i END, i, i % 9 FROM s;
";

const CHECK: &str = "
PRAGMA integrity_check;
SELECT count(*), total(a), total(r) FROM z;
SELECT a, b FROM z INDEXED BY zb WHERE b BETWEEN 0 AND 300 ORDER BY b, a;
SELECT a, c FROM z INDEXED BY zc WHERE c >= 'v' ORDER BY c, a;
SELECT a, r FROM z INDEXED BY zr WHERE r > -1 ORDER BY r, a;
SELECT id, s, t, u FROM k ORDER BY id;
SELECT id FROM k INDEXED BY ks WHERE s >= '' ORDER BY s COLLATE BINARY, id;
SELECT id FROM k INDEXED BY ku WHERE u >= 0 ORDER BY u DESC, id;
";

#[test]
fn one_comparison_deletes_match_sqlite() {
    let script = format!(
        "{SETUP}
DELETE FROM z WHERE a = 17;
DELETE FROM z WHERE 18 = a;
DELETE FROM z WHERE a = -5;
DELETE FROM z WHERE rowid = 19;
DELETE FROM z WHERE oid BETWEEN 20 AND 24;
DELETE FROM z WHERE _rowid_ BETWEEN 30 AND 25;
DELETE FROM z WHERE b = 3 RETURNING a, b;
DELETE FROM z WHERE b BETWEEN 10 AND 14 RETURNING a;
DELETE FROM z WHERE b = '15';
DELETE FROM z WHERE b BETWEEN 7 AND 8;
DELETE FROM z WHERE c = 'v3' RETURNING a;
DELETE FROM z WHERE c BETWEEN 'v10' AND 'v12';
DELETE FROM z WHERE r = 40 RETURNING a, r;
DELETE FROM z WHERE r BETWEEN 41 AND 43;
DELETE FROM z WHERE n = 12;
DELETE FROM z AS q WHERE q.a = 200;
DELETE FROM z AS q WHERE z.a = 201;
DELETE FROM z WHERE z.a = 202;
DELETE FROM z WHERE main.z.a = 203;
DELETE FROM z WHERE a = 99999;
DELETE FROM k WHERE s = 'abc' RETURNING id;
DELETE FROM k WHERE t = 5;
DELETE FROM k WHERE t BETWEEN '50' AND '60';
DELETE FROM k WHERE u = 4 RETURNING id;
DELETE FROM k WHERE u BETWEEN 6 AND 7;
DELETE FROM k WHERE id = 3;
DELETE FROM m WHERE a = 2 RETURNING b;
SELECT changes(), total_changes();
SELECT a, b FROM m ORDER BY a, b;
{CHECK}"
    );
    check_script(&script, Compare::default());
}

#[test]
fn one_comparison_updates_match_sqlite() {
    let script = format!(
        "{SETUP}
UPDATE z SET c = 'one' WHERE a = 17 RETURNING a, c;
UPDATE z SET b = b + 1000 WHERE b BETWEEN 10 AND 20 RETURNING a, b;
UPDATE z SET r = r * 2 WHERE r BETWEEN 10 AND 20;
UPDATE z SET n = 'nine' WHERE rowid BETWEEN 50 AND 60;
UPDATE z SET a = a + 5000 WHERE a BETWEEN 100 AND 110;
UPDATE z SET a = 102 WHERE a = 5101;
UPDATE z SET rowid = 9000 WHERE a = 120;
UPDATE z SET c = upper(c) WHERE c = 'v5';
UPDATE z SET b = 3 WHERE b = 'text in b';
UPDATE k SET t = 'changed' WHERE s = 'ABC';
UPDATE k SET u = u + 100 WHERE u BETWEEN 2 AND 3;
UPDATE k SET s = 'moved' WHERE t = 7;
UPDATE m SET b = b + 100 WHERE a = 1 RETURNING a, b;
SELECT changes();
SELECT a, b FROM m ORDER BY a, b;
{CHECK}"
    );
    check_script(&script, Compare::default());
}

#[test]
fn in_place_updates_keep_every_index_right() {
    let script = "
CREATE TABLE p(a INTEGER PRIMARY KEY, b INT, c TEXT, d INT, e INT);
CREATE UNIQUE INDEX pb ON p(b);
CREATE INDEX pc ON p(c, b);
CREATE INDEX pd_part ON p(e) WHERE d > 5;
CREATE INDEX pexpr ON p(d + e);
CREATE INDEX pa ON p(a, c);
WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 300)
  INSERT INTO p SELECT i, i * 3, 'c' || (i % 11), i % 10, i % 7 FROM s;
UPDATE p SET d = d + 1;
UPDATE p SET e = e * 2 WHERE a BETWEEN 10 AND 200;
UPDATE p SET c = 'z' || c WHERE b BETWEEN 30 AND 90;
UPDATE p SET b = b + 1 WHERE a = 40;
UPDATE p SET b = 3 WHERE a = 41;
UPDATE OR IGNORE p SET b = 6 WHERE a = 42;
UPDATE OR REPLACE p SET b = 9 WHERE a = 43;
UPDATE p SET a = a + 1000 WHERE a = 44;
PRAGMA integrity_check;
SELECT a, b FROM p INDEXED BY pb WHERE b > -1 ORDER BY b;
SELECT a, c FROM p INDEXED BY pc WHERE c > '' ORDER BY c, b;
SELECT a, e FROM p INDEXED BY pd_part WHERE d > 5 AND e > -1 ORDER BY e, a;
SELECT a FROM p INDEXED BY pexpr WHERE d + e > 3 ORDER BY d + e, a;
SELECT a, c FROM p INDEXED BY pa WHERE a > 0 ORDER BY a;
SELECT count(*), total(a), total(b), total(d), total(e) FROM p;
";
    check_script(script, Compare::default());
}

/// Runs `sql` once with `params` bound (1-based), stepping it to the end.
fn run_bound(c: &Connection, sql: &str, params: &[Value]) {
    let (mut st, _) = c
        .prepare(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .expect("statement");
    for (i, v) in params.iter().enumerate() {
        st.bind(i + 1, v.clone()).expect("bind");
    }
    while st.step().unwrap_or_else(|e| panic!("{sql}: {e}")) {}
}

/// kv_ops's prepared `UPDATE ... WHERE key=?` and `DELETE ... WHERE key=?` on a TEXT
/// PRIMARY KEY, with the key bound as text (the direct path) and as an integer (the
/// general path: TEXT affinity turns it into text first).
#[test]
fn bound_keys_on_text_primary_key() {
    let c = Connection::open(":memory:").expect("open");
    c.execute_batch(
        "CREATE TABLE kv(key TEXT PRIMARY KEY, value TEXT);
         INSERT INTO kv VALUES('1','a'),('2','b'),('3','c'),('10','d');",
    )
    .expect("setup");
    let upd = "UPDATE kv SET value=? WHERE key=?";
    run_bound(&c, upd, &[Value::Text("A".into()), Value::Text("1".into())]);
    run_bound(&c, upd, &[Value::Text("B".into()), Value::Integer(2)]);
    let del = "DELETE FROM kv WHERE key=?";
    run_bound(&c, del, &[Value::Text("3".into())]);
    run_bound(&c, del, &[Value::Integer(10)]);
    run_bound(&c, del, &[Value::Text("missing".into())]);
    let (mut st, _) = c
        .prepare("SELECT key, value FROM kv ORDER BY key")
        .expect("prepare")
        .expect("statement");
    let mut rows = Vec::new();
    while st.step().expect("step") {
        rows.push(vec![st.column(0), st.column(1)]);
    }
    assert_eq!(
        rows,
        vec![
            vec![Value::Text("1".into()), Value::Text("A".into())],
            vec![Value::Text("2".into()), Value::Text("B".into())],
        ]
    );
}
