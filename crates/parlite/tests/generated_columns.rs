//! Generated columns (gencol.html): the same SQL through parlite and through SQLite
//! (rusqlite, bundled 3.50.2) with rows, column names and error messages compared (rows as
//! a multiset unless the statement has an ORDER BY), and files with VIRTUAL and STORED
//! columns shared with stock SQLite both ways, checked by its `PRAGMA integrity_check`.

mod common;
use common::*;

/// Runs a script in both engines and compares each statement's outcome (common/mod.rs).
fn check(script: &str) {
    check_script(
        script,
        Compare {
            unordered_without_order_by: true,
            ignore_alter_names: true,
        },
    );
}

const SETUP: &str = "
CREATE TABLE t(a INTEGER PRIMARY KEY, b INT, c TEXT,
  d INT GENERATED ALWAYS AS (a*abs(b)) VIRTUAL,
  e TEXT GENERATED ALWAYS AS (substr(c,b,b+1)) STORED,
  f AS (d + 1), g REAL AS (e || '') STORED NOT NULL);
INSERT INTO t(a, b, c) VALUES (1, 2, 'hello'), (2, -1, 'xyz'), (3, NULL, 'q');
INSERT INTO t(b, c) VALUES (3, 'generated');
INSERT INTO t VALUES (10, 1, 'abc');
";

#[test]
fn reads_and_writes() {
    check(&format!(
        "{SETUP}
SELECT * FROM t ORDER BY a;
SELECT a, typeof(d), typeof(e), typeof(f), typeof(g) FROM t ORDER BY a;
SELECT a FROM t WHERE d > 2 ORDER BY a;
SELECT f, count(*) FROM t GROUP BY f ORDER BY f;
UPDATE t SET b = b + 1 WHERE a < 3;
SELECT * FROM t ORDER BY a;
UPDATE t SET c = upper(c) RETURNING a, d, e, g;
DELETE FROM t WHERE d = 20 RETURNING *;
INSERT INTO t(a, b, c) VALUES (20, 1, 'r') RETURNING *;
REPLACE INTO t(a, b, c) VALUES (20, 2, 'rr');
INSERT INTO t(b, c) SELECT b, c || '!' FROM t WHERE a < 3;
SELECT * FROM t ORDER BY a;
SELECT t1.a, t2.a FROM t AS t1 JOIN t AS t2 ON t1.d = t2.f ORDER BY 1, 2;
SELECT * FROM t WHERE e IS NULL ORDER BY a;
"
    ));
}

#[test]
fn constraints_indexes_and_affinity() {
    check(
        "
CREATE TABLE u(a INTEGER PRIMARY KEY, b INT AS (a || '') UNIQUE,
  c TEXT AS (a * 2) STORED NOT NULL CHECK (c <> '100'), d, n AS (d) NOT NULL);
INSERT INTO u(a, d) VALUES (1, 1), (2, 2);
INSERT INTO u(a, d) VALUES (50, 1);
INSERT INTO u(a, d) VALUES (3, NULL);
INSERT OR IGNORE INTO u(a, d) VALUES (4, NULL);
SELECT a, b, typeof(b), c, typeof(c) FROM u ORDER BY a;
CREATE INDEX ub ON u(n DESC);
CREATE INDEX uc ON u(c, b);
INSERT INTO u(a, d) VALUES (5, 'x'), (6, 'y');
SELECT a FROM u WHERE n = 'x';
SELECT a, c FROM u WHERE c > '4' ORDER BY c;
UPDATE u SET d = 'z' WHERE a = 5;
SELECT a FROM u WHERE n = 'z';
PRAGMA integrity_check;
CREATE TABLE w(x, y TEXT COLLATE NOCASE AS (x), z AS (x) STORED);
INSERT INTO w VALUES ('A'), ('a'), ('b');
SELECT y FROM w ORDER BY y, z;
SELECT x FROM w WHERE y = 'A' ORDER BY x;
SELECT count(DISTINCT y), count(DISTINCT z) FROM w;
CREATE TABLE up(a UNIQUE, b AS (a * 10) STORED, c);
INSERT INTO up VALUES (1, 1);
INSERT INTO up VALUES (1, 2) ON CONFLICT(a) DO UPDATE SET c = excluded.c + b RETURNING *;
INSERT INTO up VALUES (1, 2) ON CONFLICT(a) DO UPDATE SET b = 1;
CREATE TABLE lg(x);
CREATE TRIGGER tr AFTER INSERT ON up BEGIN INSERT INTO lg VALUES (new.b); END;
CREATE TRIGGER tr2 AFTER UPDATE ON up BEGIN INSERT INTO lg VALUES (old.b || '>' || new.b); END;
INSERT INTO up VALUES (7, 0);
UPDATE up SET a = a + 1 RETURNING b;
SELECT * FROM lg;
CREATE TABLE rp(a NOT NULL DEFAULT 19, b INT AS (abs(a)) STORED NOT NULL, c AS (a || '') NOT NULL);
REPLACE INTO rp(a) VALUES (NULL), (-4);
INSERT OR REPLACE INTO rp(a) VALUES (NULL);
INSERT INTO rp(a) VALUES (NULL);
SELECT * FROM rp ORDER BY rowid;
CREATE TABLE ux(a UNIQUE, b AS (a * 10), c);
INSERT INTO ux VALUES (1, 1);
INSERT INTO ux VALUES (1, 2) ON CONFLICT(a) DO UPDATE SET c = excluded.b + excluded.c;
SELECT * FROM ux;
CREATE TABLE lb(x, y);
CREATE TRIGGER tb BEFORE INSERT ON ux BEGIN INSERT INTO lb VALUES (new.b, new.a); END;
CREATE TRIGGER tbu BEFORE UPDATE ON ux BEGIN INSERT INTO lb VALUES (new.b, old.b); END;
INSERT INTO ux VALUES (5, 5);
UPDATE ux SET a = 7 WHERE a = 5;
SELECT * FROM lb;
",
    );
}

#[test]
fn pragmas_and_alter_table() {
    check(&format!(
        "{SETUP}
PRAGMA table_info(t);
PRAGMA table_xinfo(t);
SELECT name, hidden FROM pragma_table_xinfo('t');
SELECT count(*) FROM pragma_table_info('t');
ALTER TABLE t ADD COLUMN h AS (a * 100);
ALTER TABLE t ADD COLUMN i AS (a) STORED;
ALTER TABLE t ADD COLUMN j AS (zz);
ALTER TABLE t ADD COLUMN k INT AS (h + 1) NOT NULL;
SELECT a, h, k FROM t ORDER BY a;
PRAGMA table_xinfo(t);
CREATE TABLE e(a, b AS (a) VIRTUAL);
ALTER TABLE e ADD COLUMN c AS (a) STORED;
INSERT INTO e VALUES (4);
SELECT * FROM e;
ALTER TABLE t DROP COLUMN d;
ALTER TABLE t DROP COLUMN k;
ALTER TABLE t DROP COLUMN f;
SELECT * FROM t ORDER BY a;
ALTER TABLE t DROP COLUMN g;
ALTER TABLE t DROP COLUMN c;
SELECT * FROM t ORDER BY a;
CREATE TABLE z(a, b AS (a), c AS (b) STORED);
ALTER TABLE z DROP COLUMN a;
PRAGMA integrity_check;
"
    ));
}

#[test]
fn errors() {
    check(
        "
CREATE TABLE t(a, b AS (a) STORED, c AS (b * 2));
INSERT INTO t VALUES (1, 2);
INSERT INTO t(b) VALUES (1);
INSERT INTO t(a, c) VALUES (1, 1);
UPDATE t SET b = 1;
UPDATE t SET a = 1, c = 2;
CREATE TABLE x1(a, b AS (a) PRIMARY KEY);
CREATE TABLE x2(a, b AS (a), PRIMARY KEY(b));
CREATE TABLE x3(a, b AS (a) DEFAULT 1);
CREATE TABLE x4(a, b DEFAULT 1 AS (a));
CREATE TABLE x5(a, b AS ((SELECT 1)));
CREATE TABLE x6(a, b AS (random()));
CREATE TABLE x7(a, b AS (rowid));
CREATE TABLE x8(a AS (1));
CREATE TABLE x9(a, b AS (nope));
CREATE TABLE x10(a, b AS (a + ?));
CREATE TABLE x11(a, b AS (count(a)));
CREATE TABLE x12(a, b AS (a IN (SELECT 1)));
CREATE TABLE x14(a, b AS (b));
INSERT INTO x14 VALUES (1);
SELECT * FROM x14;
CREATE TABLE x15(a, b AS (c), c AS (b));
INSERT INTO x15 VALUES (1);
SELECT * FROM x15;
CREATE TABLE x16(a, b AS (json(a)), c AS (max(a, 1)), d AS (a COLLATE NOCASE));
INSERT INTO x16 VALUES ('[1, 2]');
SELECT * FROM x16;
CREATE TABLE eo(a INTEGER PRIMARY KEY, n NOT NULL, g AS (abs(a)) STORED, v AS (abs(a)));
INSERT INTO eo(a) VALUES (-9223372036854775808);
INSERT OR IGNORE INTO eo(a) VALUES (-9223372036854775808);
INSERT OR IGNORE INTO eo(a) VALUES (5);
SELECT count(*) FROM eo;
",
    );
}

fn temp_path(tag: &str) -> common::TempDb {
    common::temp_db_path("gencol", tag)
}

const FILE_SCHEMA: &str = "
CREATE TABLE t(a INTEGER PRIMARY KEY, b INT, c TEXT,
  d INT AS (a * abs(b)) VIRTUAL, e TEXT AS (substr(c, b, b + 1)) STORED, f AS (d + 1),
  g REAL AS (e || '') STORED);
CREATE INDEX td ON t(d);
CREATE INDEX tg ON t(g, f);
";

const FILE_WRITES: &str = "
INSERT INTO t(a, b, c) VALUES (1, 2, 'hello'), (2, -1, 'xyz'), (3, NULL, 'q');
WITH RECURSIVE n(i) AS (SELECT 10 UNION ALL SELECT i + 1 FROM n WHERE i < 300)
  INSERT INTO t(a, b, c) SELECT i, i % 7, 'row' || i FROM n;
UPDATE t SET b = b + 1 WHERE a % 5 = 0;
DELETE FROM t WHERE a % 9 = 0;
ALTER TABLE t ADD COLUMN h AS (a * 100);
UPDATE t SET c = c || '!' WHERE a % 4 = 0;
";

const FILE_QUERY: &str = "SELECT * FROM t ORDER BY a";

#[test]
fn sqlite_reads_and_checks_a_file_parlite_wrote() {
    let path = temp_path("p");
    let ours = {
        let c = parlite::Connection::open(path.to_str().expect("utf8")).expect("open");
        c.execute_batch(FILE_SCHEMA).expect("schema");
        c.execute_batch(FILE_WRITES).expect("writes");
        run_parlite(&c, FILE_QUERY)
    };
    assert_eq!(
        sqlite_rows(&path, "PRAGMA integrity_check"),
        Out::Rows {
            names: vec!["integrity_check".into()],
            rows: vec![vec![parlite::Value::Text("ok".into())]]
        }
    );
    assert_eq!(sqlite_rows(&path, FILE_QUERY), ours);
    assert_eq!(
        sqlite_rows(
            &path,
            "SELECT count(*) FROM t WHERE d > 100 AND g IS NOT NULL"
        ),
        {
            let c = parlite::Connection::open(path.to_str().expect("utf8")).expect("open");
            run_parlite(&c, "SELECT count(*) FROM t WHERE d > 100 AND g IS NOT NULL")
        }
    );
}

#[test]
fn parlite_reads_and_writes_a_file_sqlite_wrote() {
    let path = temp_path("s");
    {
        let s = rusqlite::Connection::open(&path).expect("sqlite");
        s.execute_batch(FILE_SCHEMA).expect("schema");
        s.execute_batch(FILE_WRITES).expect("writes");
    }
    let theirs = sqlite_rows(&path, FILE_QUERY);
    {
        let c = parlite::Connection::open(path.to_str().expect("utf8")).expect("open");
        assert_eq!(run_parlite(&c, FILE_QUERY), theirs);
        c.execute_batch(
            "UPDATE t SET b = b * 2 WHERE a % 3 = 0; DELETE FROM t WHERE a % 11 = 0;
             INSERT INTO t(b, c) VALUES (4, 'parlite');",
        )
        .expect("writes");
        assert_eq!(
            run_parlite(&c, "PRAGMA integrity_check"),
            Out::Rows {
                names: vec!["integrity_check".into()],
                rows: vec![vec![parlite::Value::Text("ok".into())]]
            }
        );
    }
    assert_eq!(
        sqlite_rows(&path, "PRAGMA integrity_check"),
        Out::Rows {
            names: vec!["integrity_check".into()],
            rows: vec![vec![parlite::Value::Text("ok".into())]]
        }
    );
    let c = parlite::Connection::open(path.to_str().expect("utf8")).expect("open");
    assert_eq!(sqlite_rows(&path, FILE_QUERY), run_parlite(&c, FILE_QUERY));
}

// Merged with column pruning (`plan::usage`): a scan that reads only a VIRTUAL column must
// still decode the stored columns its expression reads (through other generated columns),
// whatever the access path; the record of a table with VIRTUAL columns is shorter than its row.
#[test]
fn queries_reading_only_virtual_columns() {
    check(
        "
CREATE TABLE v(a INTEGER PRIMARY KEY, b INT, c TEXT, d TEXT,
  e AS (b * 10) VIRTUAL, f TEXT AS (c || '-' || d) STORED, g AS (e + length(f)) VIRTUAL,
  h AS (upper(d)), i);
INSERT INTO v(a, b, c, d, i) VALUES (1, 2, 'x', 'p', 7), (2, 3, 'yy', 'q', 8),
  (3, NULL, 'z', NULL, 9), (4, -4, 'ww', 'rr', 10), (5, 6, NULL, 's', 11);
SELECT e FROM v;
SELECT g FROM v;
SELECT h FROM v;
SELECT i, h FROM v;
SELECT f FROM v;
SELECT g FROM v WHERE a BETWEEN 2 AND 4;
SELECT g FROM v WHERE a IN (1, 3, 5);
SELECT g FROM v WHERE a = 4;
SELECT count(*) FROM v WHERE g > 20;
SELECT sum(e), max(h) FROM v;
SELECT (SELECT g FROM v AS w WHERE w.a = v.a + 1) FROM v;
SELECT x.a FROM v AS x JOIN v AS y ON x.e = y.b * 10 WHERE y.i > 7;
SELECT a FROM v WHERE EXISTS (SELECT 1 FROM v AS w WHERE w.g = v.g + 0 AND w.a <> 0);
CREATE INDEX vg ON v(g);
CREATE INDEX vh ON v(h, e);
SELECT g FROM v WHERE g > 25 ORDER BY g;
SELECT e FROM v WHERE h = 'RR';
SELECT h FROM v WHERE h > 'P' ORDER BY h DESC LIMIT 2;
CREATE TABLE s(a INTEGER PRIMARY KEY, b, c AS (b * 2) STORED, d);
INSERT INTO s(b, d) VALUES (1, 'a'), (2, 'b'), (NULL, 'c');
SELECT c FROM s;
SELECT d FROM s WHERE c > 2;
SELECT a FROM v WHERE g IN (SELECT c + 19 FROM s);
PRAGMA integrity_check;
",
    );
}

// Merged with UPDATE/DELETE reusing scanned rows: a table with generated columns (and
// indexes on them) reads its old rows again, so every index entry it removes exists.
#[test]
fn update_delete_with_indexes_on_generated_columns() {
    check(
        "
CREATE TABLE w(a INTEGER PRIMARY KEY, b INT, c TEXT,
  d AS (b * 2) VIRTUAL, e TEXT AS (c || b) STORED, f AS (d + 1) VIRTUAL UNIQUE, g);
CREATE INDEX wd ON w(d);
CREATE INDEX we ON w(e, d);
CREATE INDEX wf ON w(f) WHERE d > 4;
CREATE INDEX wx ON w(d + a);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200)
  INSERT INTO w(a, b, c, g) SELECT i, i, 'c' || (i % 7), i % 3 FROM n;
UPDATE w SET b = b + 1000 WHERE a % 3 = 0;
UPDATE w SET c = 'u' WHERE d BETWEEN 10 AND 40;
UPDATE w SET g = g + 1;
UPDATE w SET b = -b WHERE e LIKE 'c3%';
DELETE FROM w WHERE a % 5 = 0;
DELETE FROM w WHERE d > 2000;
DELETE FROM w WHERE f IN (3, 5, 7);
PRAGMA integrity_check;
SELECT * FROM w ORDER BY a;
SELECT a, d, f FROM w WHERE d > 100 ORDER BY d;
SELECT count(*), sum(f) FROM w WHERE f > 4;
UPDATE w SET b = 1 WHERE a = 2;
UPDATE OR REPLACE w SET b = 1 WHERE a = 4;
SELECT * FROM w WHERE a < 6 ORDER BY a;
DELETE FROM w;
PRAGMA integrity_check;
SELECT count(*) FROM w;
",
    );
}

// Merged with ATTACH: generated columns in an attached database read and write as in main.
#[test]
fn generated_columns_in_an_attached_database() {
    check(
        "
ATTACH ':memory:' AS aux;
CREATE TABLE aux.t(a INTEGER PRIMARY KEY, b INT, c TEXT,
  d AS (a * b) VIRTUAL, e TEXT AS (c || d) STORED, f AS (length(e)));
CREATE INDEX aux.td ON t(d);
INSERT INTO aux.t(b, c) VALUES (2, 'x'), (3, 'y'), (NULL, 'z'), (-1, 'w');
SELECT * FROM aux.t ORDER BY a;
SELECT f FROM t;
SELECT d FROM aux.t WHERE d > 2 ORDER BY d;
UPDATE aux.t SET b = b + 1;
DELETE FROM aux.t WHERE d = 9;
SELECT * FROM aux.t ORDER BY a;
PRAGMA aux.table_xinfo(t);
SELECT name, hidden FROM pragma_table_xinfo('t', 'aux');
SELECT name FROM aux.pragma_table_info('t');
PRAGMA aux.integrity_check;
INSERT INTO aux.t(a, b, c, d) VALUES (9, 1, 'q', 1);
CREATE TABLE aux.bad(a, b AS (c));
",
    );
}

// Generated columns in WITHOUT ROWID tables: tests/without_rowid_generated.rs.
