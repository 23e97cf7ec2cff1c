//! ALTER TABLE RENAME TO / RENAME COLUMN through views and triggers, against SQLite: the
//! ALTER's outcome, then the whole of sqlite_schema byte for byte, then the renamed
//! objects at work (the views queried, the triggers fired). Names that resolve to the
//! renamed table or column are rewritten (FROM items, qualifiers, trigger targets and
//! column lists, NEW/OLD, UPDATE OF, CTE bodies); names that only read the same (another
//! table's column, aliases, CTE and subquery columns, strings) are not; a view or trigger
//! that does not resolve, before or after, fails the ALTER and changes nothing.

mod common;

const SCHEMA: &str = "SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY name";

/// Runs `stmts` in both engines, with the schema compared after each ALTER.
fn case(stmts: &[&str]) -> Vec<String> {
    let mut all = Vec::new();
    for s in stmts {
        all.push(*s);
        if s.starts_with("ALTER") {
            all.push(SCHEMA);
        }
    }
    common::statement_mismatches(&all)
}

const TABLES: &str = "CREATE TABLE t(a INTEGER, b TEXT, c);
     CREATE TABLE u(a, c, d);
     INSERT INTO t VALUES (1, 'x', 10), (2, 'y', 20);
     INSERT INTO u VALUES (1, 100, 'p'), (3, 300, 'q')";

fn with_tables<'a>(rest: &[&'a str]) -> Vec<&'a str> {
    let mut v: Vec<&str> = TABLES.split(';').collect();
    v.extend_from_slice(rest);
    v
}

#[test]
fn rename_table_rewrites_views() {
    common::assert_no_mismatches(case(&with_tables(&[
        "CREATE VIEW v1 AS SELECT a, t.b, \"t\".c FROM t WHERE t.a > 0",
        "CREATE VIEW v2 AS SELECT x.a, t.b, u.a AS ua FROM t AS x, t, u WHERE x.a = u.a",
        "CREATE VIEW v3 AS WITH c(a) AS (SELECT a FROM t) SELECT a, 't' AS t FROM c",
        "CREATE VIEW v4 AS SELECT (SELECT max(a) FROM t) AS m, * FROM u \
         WHERE a IN (SELECT a FROM [t]) AND EXISTS (SELECT 1 FROM t WHERE t.a = u.a)",
        "CREATE VIEW v5 AS WITH t AS (SELECT 5 AS a) SELECT a FROM t",
        "CREATE VIEW v6 AS SELECT * FROM (SELECT a, b FROM t) AS t WHERE t.a = 1",
        "CREATE VIEW v7 AS SELECT a FROM `t` UNION SELECT a FROM u ORDER BY 1",
        "CREATE VIEW v8 AS WITH RECURSIVE r(n) AS (SELECT a FROM t UNION ALL \
         SELECT n + 1 FROM r, t WHERE n < t.a + 3) SELECT n FROM r",
        "ALTER TABLE t RENAME TO t2",
        "SELECT * FROM v8",
        "SELECT * FROM v1",
        "SELECT * FROM v2",
        "SELECT * FROM v3",
        "SELECT * FROM v4",
        "SELECT * FROM v5",
        "SELECT * FROM v6",
        "SELECT * FROM v7",
        "ALTER TABLE t2 RENAME TO \"odd name\"",
        "SELECT * FROM v2",
        "ALTER TABLE \"odd name\" RENAME TO T",
        "SELECT * FROM v4",
    ])));
}

#[test]
fn rename_table_rewrites_triggers() {
    common::assert_no_mismatches(case(&with_tables(&[
        "CREATE TABLE log(x, y)",
        "CREATE TRIGGER tu AFTER INSERT ON u BEGIN \
         INSERT INTO t(a, b) VALUES (new.a, new.d); \
         UPDATE t SET c = c + 1 WHERE t.a = new.a; \
         DELETE FROM t WHERE a IN (SELECT a FROM t WHERE t.c > 1000); \
         INSERT INTO log SELECT a, 't' FROM t WHERE b = new.d; END",
        "CREATE TRIGGER tt BEFORE UPDATE OF b ON t WHEN new.a > 0 BEGIN \
         INSERT INTO log VALUES (old.b, new.b); END",
        "ALTER TABLE t RENAME TO t2",
        "INSERT INTO u VALUES (7, 1, 'z')",
        "UPDATE t2 SET b = 'w' WHERE a = 1",
        "SELECT * FROM t2 ORDER BY a",
        "SELECT * FROM log ORDER BY x",
        "ALTER TABLE u RENAME TO u2",
        "INSERT INTO u2 VALUES (8, 1, 'k')",
        "SELECT * FROM log ORDER BY x",
    ])));
}

#[test]
fn rename_column_rewrites_views() {
    common::assert_no_mismatches(case(&with_tables(&[
        "CREATE VIEW v1 AS SELECT a, t.b, c AS cc FROM t WHERE a > 0 GROUP BY a, b \
         HAVING max(c) > 0 ORDER BY a, t.a",
        "CREATE VIEW v2 AS SELECT t.a, u.a AS ua, u.c FROM t JOIN u ON t.a = u.a",
        "CREATE VIEW v3 AS SELECT * FROM t",
        "CREATE VIEW v4 AS WITH w(a) AS (SELECT a FROM t) SELECT a, 'a' FROM w",
        "CREATE VIEW v5 AS SELECT s.a FROM (SELECT a AS a FROM t) AS s WHERE s.a IN (SELECT a FROM t)",
        "CREATE VIEW v6 AS SELECT x.a AS a FROM u AS x WHERE x.a = 1",
        "CREATE VIEW v7(p, q) AS SELECT a, count(*) FROM t GROUP BY a",
        "CREATE VIEW v8 AS WITH RECURSIVE r(a) AS (SELECT a FROM t UNION \
         SELECT r.a + 1 FROM r JOIN t ON t.a = r.a WHERE r.a < 5) SELECT a FROM r",
        "ALTER TABLE t RENAME COLUMN a TO k",
        "SELECT * FROM v8",
        "SELECT * FROM v1",
        "SELECT * FROM v2",
        "SELECT * FROM v3",
        "SELECT * FROM v4",
        "SELECT * FROM v5",
        "SELECT * FROM v6",
        "SELECT * FROM v7",
        "ALTER TABLE t RENAME COLUMN k TO \"a b\"",
        "SELECT * FROM v1",
        "ALTER TABLE t RENAME COLUMN \"a b\" TO [c2]",
        "ALTER TABLE t RENAME COLUMN c2 TO plain",
        "ALTER TABLE u RENAME COLUMN a TO ua",
        "SELECT * FROM v2",
    ])));
}

#[test]
fn rename_column_rewrites_triggers() {
    common::assert_no_mismatches(case(&with_tables(&[
        "CREATE TABLE log(x, y)",
        "CREATE TRIGGER tt AFTER UPDATE OF a, b ON t WHEN new.a <> old.a OR new.b IS NULL BEGIN \
         INSERT INTO log(x, y) VALUES (new.a, old.a); \
         UPDATE u SET a = new.a WHERE a = old.a; \
         INSERT INTO log SELECT a, c FROM t WHERE t.a = new.a; END",
        "CREATE TRIGGER tu AFTER INSERT ON u BEGIN \
         INSERT INTO t(a, c) VALUES (new.a, new.c); \
         UPDATE t SET a = a + 100, c = new.c WHERE a = new.a; \
         DELETE FROM t WHERE t.a > 1000; END",
        "ALTER TABLE t RENAME COLUMN a TO k",
        "UPDATE t SET k = 5 WHERE k = 1",
        "INSERT INTO u VALUES (9, 900, 'n')",
        "SELECT * FROM t ORDER BY k",
        "SELECT * FROM u ORDER BY a",
        "SELECT * FROM log ORDER BY x",
        "ALTER TABLE u RENAME COLUMN a TO \"A\"",
        "INSERT INTO u VALUES (10, 1, 'm')",
        "SELECT * FROM t ORDER BY k",
        "ALTER TABLE log RENAME COLUMN x TO xx",
    ])));
}

#[test]
fn rename_errors_change_nothing() {
    common::assert_no_mismatches(case(&[
        "CREATE TABLE t(a, b)",
        "CREATE TABLE u(c)",
        "CREATE VIEW v AS SELECT a FROM t, u",
        // The view's `a` becomes `c`, which u also has.
        "ALTER TABLE t RENAME COLUMN a TO c",
        "ALTER TABLE t RENAME COLUMN a TO b",
        "ALTER TABLE t RENAME COLUMN nope TO x",
        "ALTER TABLE t RENAME TO v",
        "DROP VIEW v",
        "CREATE VIEW v AS SELECT nosuch FROM t",
        "ALTER TABLE t RENAME TO t2",
        "ALTER TABLE t RENAME COLUMN a TO q",
        "DROP VIEW v",
        "CREATE TRIGGER tr AFTER INSERT ON u BEGIN INSERT INTO nosuch VALUES (1); END",
        "ALTER TABLE t RENAME COLUMN a TO q",
        "DROP TRIGGER tr",
        "CREATE TRIGGER tr AFTER INSERT ON u BEGIN UPDATE t SET nosuch = 1; END",
        "ALTER TABLE t RENAME COLUMN a TO q",
        // A subquery's column keeps the name it had: the outer `s.a` no longer resolves.
        "CREATE VIEW w AS SELECT s.q FROM (SELECT q FROM t) AS s",
        "ALTER TABLE t RENAME COLUMN q TO r",
        "SELECT * FROM w",
    ]));
}

#[test]
fn rename_reaches_windows_stars_and_rowid() {
    common::assert_no_mismatches(case(&[
        "CREATE TABLE t(id INTEGER PRIMARY KEY, a, b)",
        "INSERT INTO t VALUES (1, 2, 3), (2, 2, 4)",
        "CREATE VIEW v1 AS SELECT \"a\", 'a', sum(b) OVER (PARTITION BY a ORDER BY t.a), \
         CASE a WHEN 1 THEN a END, CAST(a AS TEXT), a IN (1, a), a BETWEEN a AND 2, \
         (SELECT count(*) FROM json_each(t.a)), sum(a) OVER w, count(*) FILTER (WHERE a > 1) OVER (ORDER BY id) \
         FROM t WINDOW w AS (PARTITION BY t.a ORDER BY a)",
        "CREATE VIEW v2 AS SELECT t.*, x.* FROM t, t AS x WHERE main.t.a = x.a",
        // SQLite identifies an INTEGER PRIMARY KEY with the rowid: renaming it renames
        // `rowid`/`oid` references too.
        "CREATE VIEW v3 AS SELECT id, rowid, oid, _rowid_, b FROM t",
        "ALTER TABLE t RENAME COLUMN a TO k",
        "ALTER TABLE t RENAME COLUMN id TO i",
        "ALTER TABLE t RENAME TO t2",
        "SELECT * FROM v1",
        "SELECT * FROM v2",
        "SELECT * FROM v3",
    ]));
}

#[test]
fn rename_reaches_upserts_in_triggers() {
    // SQLite rewrites an upsert's `excluded.` qualifier to the new table name on RENAME TO
    // (which changes what the trigger does): copied, as the stored text is the contract.
    common::assert_no_mismatches(case(&[
        "CREATE TABLE t(a UNIQUE, b)",
        "CREATE TABLE u(a, b)",
        "CREATE TRIGGER tr AFTER INSERT ON u BEGIN INSERT INTO t(a, b) VALUES (new.a, new.b) \
         ON CONFLICT(a) DO UPDATE SET b = excluded.b || t.b WHERE excluded.a > 0; END",
        "ALTER TABLE t RENAME COLUMN a TO k",
        "ALTER TABLE t RENAME COLUMN b TO bb",
        "INSERT INTO u VALUES (1, 'x')",
        "INSERT INTO u VALUES (1, 'y')",
        "SELECT * FROM t",
        "ALTER TABLE t RENAME TO t2",
        "INSERT INTO u VALUES (1, 'z')",
        "SELECT * FROM t2",
    ]));
}

#[test]
fn rename_column_quotes_as_sqlite_in_tables_and_indexes() {
    common::assert_no_mismatches(case(&[
        "CREATE TABLE t(a UNIQUE CHECK (a > 0), b AS (a * 2), c, \"d\" REFERENCES t(a))",
        "CREATE INDEX i ON t(a) WHERE a > 0",
        "CREATE INDEX j ON t(\"a\", c)",
        "ALTER TABLE t RENAME COLUMN a TO \"x\"",
        "ALTER TABLE t RENAME COLUMN x TO y",
        "ALTER TABLE t RENAME COLUMN \"y\" TO z",
        "ALTER TABLE t RENAME COLUMN d TO e",
        "INSERT INTO t(z, c) VALUES (5, 6)",
        "SELECT * FROM t",
    ]));
}

/// TEMP views and triggers over a main table are rewritten with it. (parlite keeps TEMP
/// views in memory, not in sqlite_temp_schema: they are compared through their rows.)
#[test]
fn rename_reaches_temp_objects() {
    common::assert_no_mismatches(case(&[
        "CREATE TABLE t(a, b)",
        "CREATE TABLE log(x)",
        "CREATE TEMP VIEW tv AS SELECT a, t.b FROM t",
        "CREATE TEMP TRIGGER tt AFTER INSERT ON t BEGIN INSERT INTO log VALUES (new.a); END",
        "ALTER TABLE t RENAME COLUMN a TO k",
        "SELECT type, name, tbl_name, sql FROM sqlite_temp_schema WHERE type = 'trigger'",
        "SELECT * FROM tv",
        "ALTER TABLE t RENAME TO t3",
        "SELECT type, name, tbl_name, sql FROM sqlite_temp_schema WHERE type = 'trigger'",
        "INSERT INTO t3 VALUES (1, 2)",
        "SELECT * FROM tv",
        "SELECT * FROM log",
        "CREATE TABLE u(z)",
        "CREATE TEMP VIEW tw AS SELECT b FROM t3, u",
        // tw's `b` becomes `z`, which u has too: nothing changes, tv included.
        "ALTER TABLE t3 RENAME COLUMN b TO z",
        "SELECT * FROM tv",
    ]));
}

/// Views and triggers over two tables whose column names overlap, each name written bare,
/// quoted, qualified or aliased at random; then a column of one table renamed, then the
/// table itself.
#[test]
fn seeded_bodies_match_sqlite() {
    fn setup(r: &mut common::Rng) -> Vec<String> {
        let mut v: Vec<String> = TABLES.split(';').map(str::to_string).collect();
        v.push("CREATE TABLE log(x, y)".into());
        for i in 0..6 {
            v.push(format!("CREATE VIEW v{i} AS {}", select(r)));
        }
        for i in 0..3 {
            let (on, other) = if r.below(2) == 0 {
                ("t", "u")
            } else {
                ("u", "t")
            };
            let col = ["a", "c"][r.below(2) as usize];
            v.push(format!(
                "CREATE TRIGGER tr{i} AFTER UPDATE OF {col} ON {on} WHEN new.{col} IS NOT old.{col} \
                 BEGIN INSERT INTO log VALUES (new.{col}, old.a); \
                 UPDATE {other} SET c = new.c WHERE {other}.a = new.a; \
                 INSERT INTO log {}; END",
                select(r)
            ));
        }
        v
    }
    fn name(r: &mut common::Rng, n: &str) -> String {
        match r.below(3) {
            0 => format!("\"{n}\""),
            1 => n.to_uppercase(),
            _ => n.to_string(),
        }
    }
    /// `a` or `c` (both tables have them), written some way.
    fn col(r: &mut common::Rng) -> String {
        let n = ["a", "c"][r.below(2) as usize];
        name(r, n)
    }
    fn select(r: &mut common::Rng) -> String {
        match r.below(5) {
            0 => format!(
                "SELECT {}, {} FROM t WHERE {} > 0",
                col(r),
                name(r, "b"),
                col(r)
            ),
            1 => format!(
                "SELECT t.{}, u.{} FROM t, u WHERE t.a = u.a",
                col(r),
                col(r)
            ),
            2 => format!(
                "SELECT x.{0}, {0} AS y FROM u AS x WHERE x.a IN (SELECT {1} FROM t)",
                col(r),
                col(r)
            ),
            3 => format!(
                "WITH w(a, c) AS (SELECT {}, {} FROM t) SELECT a, c FROM w",
                col(r),
                col(r)
            ),
            _ => format!(
                "SELECT s.a, s.c FROM (SELECT {}, c FROM {}) AS s",
                name(r, "a"),
                ["t", "u"][r.below(2) as usize]
            ),
        }
    }
    fn query(r: &mut common::Rng) -> String {
        match r.below(8) {
            0 => "ALTER TABLE t RENAME COLUMN a TO k".into(),
            1 => "ALTER TABLE u RENAME COLUMN c TO \"C c\"".into(),
            2 => "ALTER TABLE t RENAME TO t2".into(),
            3 => "UPDATE t SET a = a + 1, c = c + 1".into(),
            4 => "UPDATE u SET a = a + 1, c = c + 1".into(),
            5 => format!("SELECT * FROM v{}", r.below(6)),
            6 => "SELECT * FROM log ORDER BY x, y".into(),
            _ => SCHEMA.into(),
        }
    }
    common::assert_no_mismatches(common::seeded_mismatches(setup, query, 24));
}
