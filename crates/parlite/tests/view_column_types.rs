//! The declared types of a view's columns (PRAGMA table_info / table_xinfo,
//! pragma_table_info) against SQLite's sqlite3SubqueryColumnTypes: the declared type of the
//! table column a column reads, through subqueries, CTEs, views and `*`, when its affinity is
//! the column's, else the affinity's name; and CREATE TABLE AS from those views.

mod common;

const TABLES: &[&str] = &[
    "CREATE TABLE t(a INTEGER, b VARCHAR(10), c, d DECIMAL(5,2), e \"\", f INT PRIMARY KEY, \
     g text, h Double Precision, i BLOB, j FLOATING POINT, k datetime)",
    "CREATE TABLE u(x INTEGER PRIMARY KEY, y REAL, z TEXT COLLATE nocase)",
    "CREATE TABLE r(p INT PRIMARY KEY, q TEXT) WITHOUT ROWID",
];

/// The views, each checked through the three ways of reading its columns, and as the
/// source of a CREATE TABLE AS.
const VIEWS: &[&str] = &[
    "SELECT a, b, c, a + 1 AS d, CAST(c AS REAL) AS e, 'x' AS f, 1 AS g, (SELECT 1) AS h, \
     upper(b) AS i FROM t",
    "SELECT * FROM t",
    "SELECT t.*, u.* FROM t, u",
    "SELECT d, e, f, g, h, i, j, k FROM t",
    "SELECT rowid, oid, _rowid_, x, rowid AS rid FROM u",
    "SELECT rowid FROM t",
    "SELECT a AS x, b AS y FROM t",
    "SELECT * FROM (SELECT a AS x, b FROM t)",
    "SELECT x, b FROM (SELECT * FROM (SELECT a AS x, b FROM t))",
    "SELECT a FROM t UNION SELECT b FROM t",
    "SELECT a FROM t UNION ALL SELECT a FROM t",
    "SELECT b FROM t UNION SELECT 1",
    "SELECT a FROM t UNION SELECT 'x'",
    "SELECT 1 UNION SELECT a FROM t",
    "SELECT NULL UNION SELECT b FROM t",
    "SELECT y, z FROM u EXCEPT SELECT a, b FROM t",
    "SELECT d FROM t INTERSECT SELECT h FROM t",
    "SELECT CAST(a AS TEXT), CAST(b AS INTEGER), CAST(c AS NUMERIC), CAST(d AS BLOB), \
     CAST(e AS VARCHAR(3)) FROM t",
    "SELECT +a, -a, (a), a COLLATE nocase AS ac, b COLLATE rtrim AS bc, a IS NULL, b || 'x', z \
     FROM t, u",
    "SELECT NULL, x'00', 1.5, -1, 'str', ? FROM t",
    "SELECT max(a), min(b), count(*), sum(d), group_concat(b), coalesce(a, b) FROM t",
    "SELECT (SELECT a FROM t), (SELECT b FROM t), (SELECT y FROM u), exists(SELECT 1)",
    "SELECT (SELECT x FROM (SELECT a AS x FROM t)), (SELECT rowid FROM u), (SELECT c FROM t), \
     (SELECT a COLLATE nocase FROM t) AS sc, (SELECT m FROM v_base) AS sv",
    "SELECT CASE WHEN a THEN b END, iif(a, a, a) FROM t",
    "WITH w AS (SELECT a, b AS bb FROM t) SELECT * FROM w",
    "WITH w(m, n) AS (SELECT y, z FROM u) SELECT n, m FROM w",
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3) \
     SELECT i FROM n",
    "SELECT * FROM t JOIN u ON a = x",
    "SELECT * FROM t NATURAL JOIN t AS t2",
    "SELECT * FROM t AS t1 JOIN t AS t2 USING (a, b)",
    "SELECT * FROM t LEFT JOIN u ON a = x",
    "SELECT p, q, p + 0 FROM r",
    "SELECT name, type, rootpage FROM sqlite_schema",
    "SELECT * FROM (VALUES (1, 'a'))",
    "SELECT * FROM v_base",
    "SELECT m, n FROM v_base",
    "SELECT * FROM v_cols",
    "SELECT v_base.m FROM v_base JOIN u ON 1",
    "SELECT a FROM t GROUP BY a HAVING count(*) > 0 ORDER BY 1 LIMIT 3",
    "SELECT DISTINCT b FROM t",
];

fn statements() -> Vec<String> {
    let mut s: Vec<String> = TABLES.iter().map(|s| s.to_string()).collect();
    s.push("INSERT INTO t VALUES (1, 'b', x'01', 2.5, 3, 4, 'g', 5.5, x'02', 6, 'k')".into());
    s.push("INSERT INTO u VALUES (1, 2.0, 'Z')".into());
    s.push("INSERT INTO r VALUES (1, 'q')".into());
    // Views read by other views, one with a column list (the list names, the body types).
    s.push("CREATE VIEW v_base AS SELECT a AS m, b AS n, c FROM t".into());
    s.push("CREATE VIEW v_cols(p, q) AS SELECT a, b FROM t".into());
    for (i, body) in VIEWS.iter().enumerate() {
        let v = format!("v{i}");
        s.push(format!("CREATE VIEW {v} AS {body}"));
        s.push(format!("PRAGMA table_info({v})"));
        s.push(format!("PRAGMA table_xinfo({v})"));
        s.push(format!(
            "SELECT cid, name, type FROM pragma_table_info('{v}')"
        ));
        // CREATE TABLE AS takes its types from the affinities alone (createTableStmt).
        s.push(format!("CREATE TABLE c{i} AS SELECT * FROM {v}"));
        s.push(format!("SELECT sql FROM sqlite_schema WHERE name = 'c{i}'"));
        s.push(format!("PRAGMA table_info(c{i})"));
    }
    s
}

#[test]
fn view_column_types_match_sqlite() {
    let stmts = statements();
    let refs: Vec<&str> = stmts.iter().map(|s| s.as_str()).collect();
    common::assert_no_mismatches(common::statement_mismatches(&refs));
}

#[test]
fn view_with_column_list_types_match_sqlite() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(a INTEGER, b VARCHAR(10), c)",
        "CREATE VIEW y(p, q) AS SELECT a, b FROM t",
        "PRAGMA table_info(y)",
        "CREATE VIEW y2(p, q, r) AS SELECT b, c, a FROM t UNION SELECT 1, 2, 3",
        "PRAGMA table_info(y2)",
        "CREATE TEMP VIEW tv AS SELECT a, b FROM t",
        "PRAGMA table_info(tv)",
        "PRAGMA temp.table_info(tv)",
        "SELECT name, type FROM pragma_table_info('y') ORDER BY name DESC",
    ]));
}
