//! One-shot statements compiled from SQL text (issue 4, speedtest1's tens of thousands of
//! point SELECTs and REPLACEs) against SQLite: the parser's names and aliases copied from
//! the token in place, WHERE terms bound with their join floors in one vector, DISTINCT's
//! collations kept only for DISTINCT cores, and the column mask computed once, before the
//! access paths are chosen (`Binder::select_core`; `usage.rs` says why that mask is final).
//! Every script runs statement by statement through `prepare`, as the shell runs it.

mod common;
use common::*;

fn check(script: &str) {
    check_script(script, Compare::default());
}

#[test]
fn names_and_aliases_as_written() {
    check(
        r#"
CREATE TABLE "Mixed ""Q"" T"([Col A] INTEGER PRIMARY KEY, `b``c` TEXT, "select" REAL, 'lit' BLOB);
INSERT INTO "Mixed ""Q"" T" VALUES(1, 'one', 1.5, x'01'), (2, 'two', 2.5, NULL);
SELECT [col a], "B`C", "SELECT", lit FROM "mixed ""q"" t" WHERE "Col A"=2;
SELECT "Col A" AS "x""y", `b``c` 'str alias', "select" [br alias] FROM "Mixed ""Q"" T" AS "T""1" WHERE "T""1"."Col A"=1;
SELECT t2.[col A] FROM "Mixed ""Q"" T" t2 WHERE t2."COL A"=1;
SELECT "t2".[col A] FROM "Mixed ""Q"" T" "t2" WHERE "T2"."COL A"=2;
SELECT 'it''s', "no such column" FROM "Mixed ""Q"" T";
SELECT a.b FROM "Mixed ""Q"" T" AS a;
SELECT * FROM "Mixed ""Q"" T" AS a WHERE a.rowid=1;
SELECT nosuch FROM "Mixed ""Q"" T";
SELECT 1 FROM nosuch WHERE x=1;
SELECT 1 FROM "Mixed ""Q"" T" AS "select" WHERE "select"."Col A"=1;
CREATE TABLE ünï(ç INTEGER PRIMARY KEY, ñ, "€ q");
INSERT INTO ünï VALUES(1, 'x', 'euro');
SELECT ñ, ç, "€ q" AS «» FROM ünï WHERE ç=1;
SELECT Ñ FROM ünï;
SELECT ñ FROM ÜNÏ;
SELECT ñ FROM ünï AS ŭ WHERE ŭ.ç=1;
"#,
    );
    // Statements that do not parse, each on its own (a script stops at the first).
    let s = rusqlite::Connection::open_in_memory().expect("sqlite");
    let p = parlite::Connection::open(":memory:").expect("parlite");
    let setup = r#"CREATE TABLE "Mixed ""Q"" T"("Col A" INTEGER PRIMARY KEY, b);"#;
    s.execute_batch(setup).expect("sqlite setup");
    p.execute_batch(setup).expect("parlite setup");
    let mut failures = Vec::new();
    for sql in [
        r#"SELECT 1 FROM "Mixed ""Q"" T" AS"#,
        r#"SELECT 1 FROM "Mixed ""Q"" T" AS;"#,
        r#"SELECT 1 FROM "Mixed ""Q"" T" AS WHERE"#,
        r#"SELECT 1 FROM "Mixed ""Q"" T" WHERE;"#,
        r#"SELECT 1 FROM "Mixed ""Q"" T" t3 t4"#,
        r#"SELECT 1 FROM "Mixed ""Q"" T" AS select"#,
        r#"SELECT 1 FROM "Mixed ""Q"" T" WHERE "Col A"=1 ORDER BY"#,
        r#"SELECT 1 FROM "Mixed ""Q"" T" WHERE "Col A"=1 §"#,
        r#"SELECT 1 AS x FROM "Mixed ""Q"" T" AS like"#,
        r#"SELECT 1 FROM "Mixed ""Q"" T" AS 'a''b' WHERE "a'b".b IS NULL"#,
        r#"SELECT "unterminated FROM "Mixed ""Q"" T""#,
        "SELECT 1 FROM \"Mixed \"\"Q\"\" T\" AS \"x",
        "SELECT b FROM",
    ] {
        let (a, b) = (run_sqlite(&s, sql), run_parlite(&p, sql));
        if a != b {
            failures.push(format!("{sql}\n  sqlite:  {a:?}\n  parlite: {b:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn where_terms_keep_their_join_floors() {
    check(
        "
CREATE TABLE a(x INTEGER PRIMARY KEY, y);
CREATE TABLE b(x INTEGER PRIMARY KEY, y);
CREATE TABLE c(x INTEGER PRIMARY KEY, y);
INSERT INTO a VALUES(1,'a1'),(2,'a2'),(3,NULL);
INSERT INTO b VALUES(2,'b2'),(3,'b3'),(4,'b4');
INSERT INTO c VALUES(3,'c3'),(4,NULL),(5,'c5');
SELECT a.x, b.x FROM a RIGHT JOIN b ON a.x=b.x WHERE a.y IS NULL ORDER BY 1, 2;
SELECT a.x, b.x FROM a LEFT JOIN b ON a.x=b.x WHERE b.y IS NULL ORDER BY 1, 2;
SELECT a.x, b.x, c.x FROM a FULL JOIN b ON a.x=b.x JOIN c ON c.x=coalesce(b.x, a.x)
  WHERE c.y IS NOT NULL AND 1 ORDER BY 1, 2, 3;
SELECT a.x, b.x, c.x FROM a JOIN b ON b.x=a.x+1 LEFT JOIN c ON c.x=b.x+1 WHERE 0 ORDER BY 1;
SELECT a.x, b.x, c.x FROM a LEFT JOIN b ON b.x=a.x AND b.y<>'b3' RIGHT JOIN c ON c.x=a.x
  WHERE (SELECT count(*) FROM a) > 2 AND c.x > 3 ORDER BY 3;
SELECT a.x, c.x FROM c, b, a WHERE a.x=b.x AND c.x=b.x+1 AND c.y IS NULL ORDER BY 1;
SELECT a.x, c.x FROM c, b, a WHERE c.x=b.x AND a.y>'a' AND b.x=a.x+1;
SELECT count(*) FROM a, b, c WHERE a.x < b.x AND b.x < c.x AND 2 > 1;
",
    );
    let failures = compare_plans_and_rows(
        "CREATE TABLE a(x INTEGER PRIMARY KEY, y); CREATE TABLE b(x INTEGER PRIMARY KEY, y);
         CREATE TABLE c(x INTEGER PRIMARY KEY, y); CREATE INDEX cy ON c(y);
         INSERT INTO a VALUES(1,'a1'),(2,'a2'); INSERT INTO b VALUES(2,'b2'),(3,'b3');
         INSERT INTO c VALUES(3,'c3'),(4,'b2');",
        &["SELECT a.x FROM a, b, c WHERE c.x=b.x+1 AND b.x=a.x+1 AND a.y='a1'"],
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn distinct_compares_under_its_collations_and_plain_selects_do_not() {
    check(
        "
CREATE TABLE t(a TEXT COLLATE NOCASE, b TEXT, c INT);
INSERT INTO t VALUES('x','Y',1),('X','y',2),('x','y',3),('Z','z',4),('z','Z',5);
SELECT DISTINCT a FROM t ORDER BY 1;
SELECT DISTINCT b FROM t ORDER BY 1;
SELECT DISTINCT b COLLATE NOCASE FROM t ORDER BY 1;
SELECT DISTINCT a, b FROM t ORDER BY a, b;
SELECT DISTINCT a COLLATE BINARY FROM t ORDER BY 1;
SELECT a FROM t ORDER BY a, c;
SELECT b FROM t WHERE c > 1 ORDER BY c;
SELECT DISTINCT upper(a) FROM t ORDER BY 1;
SELECT count(DISTINCT b), count(DISTINCT a) FROM t;
",
    );
    let failures = compare_plans_and_rows(
        "CREATE TABLE t(a TEXT COLLATE NOCASE, b TEXT, c INT); CREATE INDEX ta ON t(a);
         CREATE INDEX tb ON t(b COLLATE NOCASE);
         INSERT INTO t VALUES('x','Y',1),('X','y',2),('Z','z',4);",
        &[
            "SELECT DISTINCT a FROM t",
            "SELECT DISTINCT b FROM t",
            "SELECT DISTINCT b COLLATE NOCASE FROM t",
            "SELECT DISTINCT a FROM t ORDER BY a",
            "SELECT DISTINCT b FROM t ORDER BY b COLLATE NOCASE",
        ],
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The columns a scan decodes are those the query reads, whatever access path is chosen
/// afterwards: index and rowid searches, covering indexes, min/max walks, INDEXED BY and
/// automatic indexes, with statements that change the schema in between.
#[test]
fn columns_read_through_every_access_path() {
    check(
        "
CREATE TABLE w(a INTEGER PRIMARY KEY, b TEXT, c INT, d REAL, e TEXT, f);
INSERT INTO w VALUES(1,'one',10,1.5,'e1',x'01'),(2,'two',20,2.5,'e2',NULL),
  (3,'three',30,NULL,'e3',3),(4,'four',NULL,4.5,NULL,'4'),(5,'five',50,5.5,'e5',5.0);
CREATE INDEX wc ON w(c);
SELECT e FROM w WHERE c=20;
SELECT d, f FROM w WHERE c>15 AND e<>'e3' ORDER BY c;
SELECT b FROM w WHERE a=3;
SELECT b, e FROM w WHERE a BETWEEN 2 AND 4 AND d IS NOT NULL;
SELECT c FROM w WHERE c>10;
SELECT a, c FROM w WHERE c IN (10, 50, 60) AND f IS NOT NULL;
SELECT max(c), e FROM w;
SELECT min(c), b FROM w WHERE d>2;
SELECT e FROM w INDEXED BY wc WHERE c>=30 AND d>4;
SELECT e FROM w NOT INDEXED WHERE c=50;
CREATE TABLE v(k, g);
INSERT INTO v VALUES(20,'g20'),(50,'g50'),(99,'g99');
SELECT v.g, w.e, w.f FROM v, w WHERE w.c=v.k AND w.d>0 ORDER BY 1;
SELECT w.b, (SELECT g FROM v WHERE k=w.c AND w.e<>'e5') FROM w ORDER BY a;
SELECT b FROM w WHERE a=(SELECT max(k) FROM v WHERE k<10) OR e='e2';
DROP INDEX wc;
SELECT e FROM w WHERE c=20;
CREATE INDEX wce ON w(c, e);
SELECT e FROM w WHERE c=20;
SELECT f FROM w WHERE c=50 AND e='e5';
ALTER TABLE w ADD COLUMN g DEFAULT 'dflt';
SELECT g, e FROM w WHERE c=30;
SELECT g FROM w WHERE a=4;
CREATE TABLE x(k TEXT PRIMARY KEY, v1, v2, v3) WITHOUT ROWID;
INSERT INTO x VALUES('k1',1,2,3),('k2',4,5,6);
SELECT v3 FROM x WHERE k='k2';
SELECT v1 FROM x WHERE k>'k1' AND v2>0;
",
    );
}

/// The planner's row-size estimates (kept with each `Table` after their first use) follow
/// the columns the table has now: after ALTER TABLE ADD COLUMN and DROP/CREATE, a count(*)
/// walks the narrowest index and an index search prefers the narrower covering index, as
/// in SQLite.
#[test]
fn row_size_estimates_follow_schema_changes() {
    let setup = "CREATE TABLE t(a INT, b TEXT, c);
        CREATE INDEX ia ON t(a);
        INSERT INTO t VALUES(1,'one',1),(2,'two',2),(3,'three',3);";
    let queries = [
        "SELECT count(*) FROM t",
        "SELECT a FROM t WHERE a>1",
        "SELECT count(*) FROM t WHERE a>1",
        "ALTER TABLE t ADD COLUMN d VARCHAR(4000)",
        "CREATE INDEX id ON t(d)",
        "SELECT count(*) FROM t",
        "SELECT count(*) FROM t WHERE d='x'",
        "CREATE INDEX iad ON t(a, d)",
        "SELECT a FROM t WHERE a>1",
        "SELECT count(*) FROM t",
        "DROP TABLE t",
        "CREATE TABLE t(a VARCHAR(4000), b INT, d)",
        "CREATE INDEX ia ON t(a)",
        "CREATE INDEX ib ON t(b)",
        "SELECT count(*) FROM t",
        "ALTER TABLE t RENAME COLUMN b TO bb",
        "SELECT count(*) FROM t",
        "ALTER TABLE t RENAME TO t2",
        "SELECT count(*) FROM t2",
    ];
    let failures = compare_plans_and_rows(setup, &queries);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
