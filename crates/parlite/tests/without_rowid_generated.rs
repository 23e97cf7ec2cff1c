//! Generated columns in WITHOUT ROWID tables (gencol.html, withoutrowid.html): the same SQL
//! through parlite and SQLite (rusqlite, bundled 3.50.2), outcomes compared statement by
//! statement; and files shared with stock SQLite both ways (VIRTUAL columns have no field
//! in the record, STORED ones follow the key in table order), checked by SQLite's
//! `PRAGMA integrity_check`.

mod common;
use common::*;

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
CREATE TABLE w(a INT, b AS (a * 2) STORED, c AS (b + a) VIRTUAL, d TEXT,
  e TEXT AS (upper(d)) VIRTUAL, PRIMARY KEY(d, a)) WITHOUT ROWID;
INSERT INTO w(a, d) VALUES (1, 'x'), (2, 'y'), (3, 'x'), (-4, 'zz');
";

#[test]
fn reads_writes_and_indexes() {
    check(&format!(
        "{SETUP}
        SELECT * FROM w ORDER BY d, a;
        SELECT c, e FROM w WHERE a > 1 ORDER BY a;
        SELECT a FROM w WHERE c = 9;
        SELECT d, sum(c) FROM w GROUP BY d ORDER BY d;
        CREATE INDEX wc ON w(c);
        CREATE INDEX we ON w(e, b);
        SELECT a, d FROM w WHERE c > 3 ORDER BY c;
        SELECT a FROM w INDEXED BY we WHERE e = 'X' ORDER BY a;
        UPDATE w SET a = a + 10 WHERE d = 'x';
        SELECT * FROM w ORDER BY d, a;
        SELECT a FROM w WHERE c = 33;
        UPDATE w SET d = 'q' WHERE a = 2;
        SELECT * FROM w WHERE e = 'Q';
        DELETE FROM w WHERE c = 39;
        SELECT * FROM w ORDER BY d, a;
        INSERT INTO w(a, d) VALUES (11, 'x');
        INSERT OR REPLACE INTO w(a, d) VALUES (11, 'x');
        INSERT INTO w(a, d) VALUES (11, 'x') ON CONFLICT(d, a) DO UPDATE SET a = excluded.a + c;
        SELECT * FROM w ORDER BY d, a;
        INSERT INTO w VALUES (1, 2, 3, 'v', 'V');
        INSERT INTO w(a, b, d) VALUES (1, 2, 'v');
        PRAGMA table_xinfo(w);
        PRAGMA table_info(w);
        PRAGMA index_xinfo(wc);
        PRAGMA index_xinfo(we);
        PRAGMA index_xinfo(sqlite_autoindex_w_1);
        SELECT name FROM pragma_index_list('w') ORDER BY name;
        PRAGMA integrity_check;
        DROP INDEX wc;
        SELECT count(*), sum(c) FROM w;"
    ));
}

#[test]
fn constraints_and_errors() {
    check(
        "CREATE TABLE bad(a AS (1) PRIMARY KEY, b) WITHOUT ROWID;
        CREATE TABLE bad2(a, b AS (a + 1), PRIMARY KEY(b)) WITHOUT ROWID;
        CREATE TABLE u(k PRIMARY KEY, v, g AS (v % 3) UNIQUE, n AS (nullif(v, 0)) NOT NULL,
          s AS (v * 10) STORED CHECK (s < 100)) WITHOUT ROWID;
        INSERT INTO u(k, v) VALUES (1, 1), (2, 2);
        INSERT INTO u(k, v) VALUES (3, 4);
        INSERT INTO u(k, v) VALUES (3, 0);
        INSERT INTO u(k, v) VALUES (3, 30);
        INSERT OR REPLACE INTO u(k, v) VALUES (3, 4);
        SELECT * FROM u ORDER BY k;
        UPDATE u SET v = 5 WHERE k = 3;
        UPDATE u SET v = 6 WHERE k = 3;
        SELECT * FROM u ORDER BY k;
        CREATE TABLE loop_(k PRIMARY KEY, a AS (b), b AS (a)) WITHOUT ROWID;
        ALTER TABLE u ADD COLUMN z AS (k + v);
        ALTER TABLE u ADD COLUMN y AS (k) STORED;
        SELECT * FROM u ORDER BY k;
        ALTER TABLE u DROP COLUMN z;
        SELECT * FROM u ORDER BY k;
        PRAGMA integrity_check;",
    );
}

fn temp_path(tag: &str) -> common::TempDb {
    common::temp_db_path("wrgen", tag)
}

fn ok() -> Out {
    Out::Rows {
        names: vec!["integrity_check".into()],
        rows: vec![vec![parlite::Value::Text("ok".into())]],
    }
}

const FILE_SCHEMA: &str = "
CREATE TABLE w(a INT, b AS (a * 2) STORED, c AS (b + a) VIRTUAL, d TEXT,
  e TEXT AS (upper(d)) VIRTUAL, f, PRIMARY KEY(d, a DESC)) WITHOUT ROWID;
CREATE INDEX wc ON w(c);
CREATE INDEX we ON w(e, f);
";

const FILE_WRITES: &str = "
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 400)
  INSERT INTO w(a, d, f) SELECT i, 'k' || (i % 13), i % 5 FROM n;
UPDATE w SET a = a + 1000 WHERE a % 7 = 0;
DELETE FROM w WHERE c % 9 = 0;
ALTER TABLE w ADD COLUMN g AS (a || d);
UPDATE w SET f = 'x' || f WHERE a % 4 = 0;
";

const FILE_QUERY: &str = "SELECT * FROM w ORDER BY d, a";

#[test]
fn sqlite_reads_and_checks_a_file_parlite_wrote() {
    let path = temp_path("p");
    let ours = {
        let c = parlite::Connection::open(path.to_str().expect("utf8")).expect("open");
        c.execute_batch(FILE_SCHEMA).expect("schema");
        c.execute_batch(FILE_WRITES).expect("writes");
        run_parlite(&c, FILE_QUERY)
    };
    assert_eq!(sqlite_rows(&path, "PRAGMA integrity_check"), ok());
    assert_eq!(sqlite_rows(&path, FILE_QUERY), ours);
    let q = "SELECT count(*), sum(c) FROM w WHERE c > 100 AND e > 'K5'";
    let c = parlite::Connection::open(path.to_str().expect("utf8")).expect("open");
    assert_eq!(sqlite_rows(&path, q), run_parlite(&c, q));
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
        let q = "SELECT a, c FROM w WHERE c BETWEEN 30 AND 60 ORDER BY c, a";
        assert_eq!(run_parlite(&c, q), sqlite_rows(&path, q));
        c.execute_batch(
            "UPDATE w SET a = a * 3 WHERE a % 3 = 0; DELETE FROM w WHERE c % 11 = 0;
             INSERT INTO w(a, d, f) VALUES (5000, 'new', 1);",
        )
        .expect("writes");
        assert_eq!(run_parlite(&c, "PRAGMA integrity_check"), ok());
    }
    assert_eq!(sqlite_rows(&path, "PRAGMA integrity_check"), ok());
    let c = parlite::Connection::open(path.to_str().expect("utf8")).expect("open");
    assert_eq!(sqlite_rows(&path, FILE_QUERY), run_parlite(&c, FILE_QUERY));
}
