//! What CREATE TABLE / INDEX / VIEW check when they run, against SQLite: CHECK constraints
//! resolved against the new table (unknown columns and functions, subqueries, parameters,
//! aggregates), DEFAULT expressions that are not constant, a generated PRIMARY KEY, and
//! the namespaces object names share (tables, views and indexes one; triggers their own;
//! main and temp tables apart).

mod common;

#[test]
fn check_constraints_resolve_when_the_table_is_made() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t1(a CHECK(nosuch > 0))",
        "CREATE TABLE t2(a, CHECK(u.a > 0))",
        "CREATE TABLE t3(a, CHECK(t3.a > 0), CHECK(main.t3.a > 0))",
        "INSERT INTO t3 VALUES (1)",
        "INSERT INTO t3 VALUES (0)",
        "CREATE TABLE t4(a CHECK(a > (SELECT 1)))",
        "CREATE TABLE t5(a, CHECK(a IN (SELECT 1)))",
        "CREATE TABLE t6(a, CHECK(EXISTS (SELECT 1)))",
        "CREATE TABLE t7(a, CHECK(a IN t7))",
        "CREATE TABLE t8(a CHECK(a > ?))",
        "CREATE TABLE t9(a, CHECK(:x))",
        "CREATE TABLE t10(a CHECK(sum(a) > 0))",
        "CREATE TABLE t11(a CHECK(row_number() OVER () > 0))",
        "CREATE TABLE t12(a CHECK(nosuchfunc(a)))",
        "CREATE TABLE t13(a CHECK(abs(a, 1)))",
        "CREATE TABLE t14(a PRIMARY KEY, CHECK(rowid > 0)) WITHOUT ROWID",
        "CREATE TABLE t15(a CHECK(rowid > 0), b CHECK(random() IS NOT NULL), c)",
        "INSERT INTO t15 VALUES (1, 2, 3)",
        "CREATE TABLE t16(a, b, CHECK(a > b), CHECK(c > 0))",
        "CREATE TABLE t17(a CHECK(new.a > 0))",
        "CREATE TABLE t18(a CHECK(a COLLATE nosuch > 'x'))",
        "CREATE TABLE t19(x)",
        "ALTER TABLE t19 ADD COLUMN a CHECK(nosuch)",
        "INSERT INTO t19 VALUES (1)",
        "SELECT name FROM sqlite_schema ORDER BY name",
    ]));
}

#[test]
fn defaults_must_be_constant_or_a_function() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t1(a DEFAULT (nosuch))",
        "CREATE TABLE t2(a, b DEFAULT (a))",
        "CREATE TABLE t3(a DEFAULT ((SELECT 1)))",
        "CREATE TABLE t4(a DEFAULT (?))",
        "CREATE TABLE t5(a DEFAULT (1 IN t5))",
        "CREATE TABLE t6(a DEFAULT (count(*) OVER ()))",
        "CREATE TABLE t7(a DEFAULT (t7.a))",
        "CREATE TABLE t8(a DEFAULT (random()), b DEFAULT (abs(-1) + 2), c DEFAULT (true), \
         d DEFAULT (x'00' || 'a'), e DEFAULT \"abc\")",
        "CREATE TABLE t8f(a, f DEFAULT (sum(1)))",
        "CREATE TABLE t8g(a, g DEFAULT (nosuchf()))",
        "INSERT INTO t8f(a) VALUES (1)",
        "INSERT INTO t8f(a, f) VALUES (1, 2)",
        "INSERT INTO t8g VALUES (1, 2)",
        "INSERT INTO t8g SELECT 3, 4",
        "INSERT INTO t8g(a) VALUES (5)",
        "INSERT INTO t8g DEFAULT VALUES",
        "UPDATE t8g SET a = a + 1",
        "SELECT * FROM t8g ORDER BY a",
        "CREATE TABLE t8h(a, b NOT NULL DEFAULT (nosuch()))",
        "INSERT INTO t8h VALUES (1, 2)",
        "INSERT OR REPLACE INTO t8h VALUES (2, NULL)",
        "SELECT * FROM t8h",
        "INSERT INTO t8(a) VALUES (1)",
        "SELECT a, b, c, hex(d), e FROM t8",
        "CREATE TABLE t9(x)",
        "ALTER TABLE t9 ADD COLUMN a DEFAULT (nosuch)",
        "ALTER TABLE t9 ADD COLUMN b DEFAULT (?)",
        "INSERT INTO t9(x) VALUES (1)",
        "SELECT * FROM t9",
        "CREATE TABLE t10(a INTEGER PRIMARY KEY AS (1))",
        "CREATE TABLE t11(a AS (1), b, PRIMARY KEY(a))",
    ]));
}

#[test]
fn object_names_share_sqlites_namespaces() {
    for case in [
        "CREATE TABLE t(a); CREATE INDEX t ON t(a)",
        "CREATE TABLE t(a); CREATE INDEX IF NOT EXISTS t ON t(a)",
        "CREATE TABLE t(a); CREATE VIEW v AS SELECT 1; CREATE INDEX v ON t(a)",
        "CREATE TABLE t(a); CREATE INDEX i ON t(a); CREATE TABLE i(x)",
        "CREATE TABLE t(a); CREATE INDEX i ON t(a); CREATE TABLE IF NOT EXISTS i(x)",
        "CREATE TABLE t(a); CREATE INDEX i ON t(a); CREATE VIEW IF NOT EXISTS i AS SELECT 1",
        "CREATE TABLE t(a); CREATE INDEX i ON t(a); CREATE INDEX IF NOT EXISTS i ON t(a)",
        "CREATE TABLE t(a); CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1; END; \
         CREATE TABLE tr(x); CREATE INDEX tr2 ON t(a); CREATE VIEW tr3 AS SELECT 1",
        "CREATE TABLE t(a); CREATE INDEX i ON t(a); CREATE TRIGGER i AFTER INSERT ON t BEGIN SELECT 1; END",
        "CREATE VIEW v AS SELECT 1; CREATE TABLE IF NOT EXISTS v(a); CREATE VIEW IF NOT EXISTS v AS SELECT 2",
        "CREATE TABLE t(a); CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1; END; ALTER TABLE t RENAME TO tr",
        "CREATE TEMP TABLE t(a); CREATE TABLE t(b); INSERT INTO main.t VALUES (1)",
        "CREATE TEMP TABLE t(a); CREATE TABLE t(b); CREATE INDEX t ON t(a)",
        "CREATE TABLE t(a); CREATE TEMP TABLE t(b); CREATE TEMP TABLE t(c)",
        "CREATE TABLE sqlite_x(a)",
        "CREATE TABLE t(a); CREATE INDEX sqlite_i ON t(a)",
    ] {
        let mut stmts: Vec<&str> = case.split("; ").collect();
        stmts.push("SELECT type, name, tbl_name FROM sqlite_schema ORDER BY name");
        stmts.push("SELECT type, name FROM temp.sqlite_schema ORDER BY name");
        common::assert_no_mismatches(common::statement_mismatches(&stmts));
    }
}

#[test]
fn create_index_refuses_what_sqlite_refuses() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(a, b)",
        "CREATE INDEX i1 ON t(?)",
        "CREATE INDEX i2 ON t(a) WHERE a > :x",
        "CREATE INDEX i3 ON t(rowid)",
        "CREATE INDEX i4 ON t(rowid + 1)",
        "CREATE INDEX i5 ON t(a) WHERE rowid > 0",
        "CREATE INDEX temp.i6 ON t(a)",
        "CREATE TEMP TABLE tt(a)",
        "CREATE INDEX main.i7 ON tt(a)",
        "CREATE INDEX temp.i8 ON tt(a)",
        "CREATE INDEX i9 ON tt(a)",
        "CREATE TEMP TABLE t(c)",
        "CREATE INDEX main.i10 ON t(b)",
        "CREATE INDEX i11 ON t(c)",
        "SELECT type, name, tbl_name FROM sqlite_schema ORDER BY name",
        "SELECT type, name, tbl_name FROM sqlite_temp_schema ORDER BY name",
    ]));
}

#[test]
fn strict_tables_store_and_refuse_as_sqlite() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE s(a INT, b TEXT, c REAL, d BLOB, e ANY) STRICT",
        "INSERT INTO s VALUES ('1', 2, '2.5', x'00', '12')",
        "INSERT INTO s VALUES (1, 'x', 1, x'01', 1.0)",
        "SELECT a, typeof(a), b, typeof(b), c, typeof(c), e, typeof(e) FROM s",
        "SELECT count(*) FROM s WHERE e = 12",
        "SELECT count(*) FROM s WHERE e = '12'",
        "INSERT INTO s(d) VALUES (2)",
        "INSERT INTO s(a) VALUES (1.5)",
        "INSERT INTO s(c) VALUES ('x')",
        "INSERT INTO s(b) VALUES (x'01')",
        "UPDATE s SET a = 'q'",
        "ALTER TABLE s ADD COLUMN f foo",
        "ALTER TABLE s ADD COLUMN f",
        "CREATE TABLE n(a INT, e ANY)",
        "INSERT INTO n VALUES ('12', '12')",
        "SELECT typeof(a), typeof(e) FROM n",
        "PRAGMA table_list",
    ]));
}
