//! The per-row read path against SQLite: table scans that decode straight into the
//! combined row (`Store::table_scan`), the integer fast path of the evaluator, and
//! integrity_check's index probes and entry counts.

mod common;

use common::{check_script, integrity_check_rows, Compare};

/// Full scans and rowid ranges (forward and reverse) over rows that exercise every fixup
/// the scan applies in place: integers in a REAL column, the rowid alias, rows shorter than
/// the table after ADD COLUMN (defaults), a column mask (only some columns read), rows
/// spilling onto overflow pages, and a correlated subquery re-scanning per outer row.
#[test]
fn scans_match_sqlite() {
    let mut script = String::from(
        "CREATE TABLE t(id INTEGER PRIMARY KEY, r REAL, s TEXT, n INT);\n\
         CREATE TABLE u(a INTEGER, b INTEGER, c TEXT);\n",
    );
    for i in 1..=300 {
        let s = if i % 37 == 0 {
            format!("'{}'", "x".repeat(5000 + i))
        } else {
            format!("'s{i}'")
        };
        script.push_str(&format!(
            "INSERT INTO t VALUES({i}, {}, {s}, {});\n",
            i * 2,
            i % 7
        ));
        script.push_str(&format!(
            "INSERT INTO u VALUES({i}, {}, 'c{i}');\n",
            i * 3 % 101
        ));
    }
    script.push_str(
        "ALTER TABLE t ADD COLUMN d TEXT DEFAULT 'dflt';\n\
         ALTER TABLE t ADD COLUMN e INT DEFAULT 42;\n\
         INSERT INTO t(id, r, s, n, d, e) VALUES(1000, 1.5, 'late', 3, 'own', 7);\n\
         SELECT id, r, typeof(r), n, d, e FROM t WHERE n = 3;\n\
         SELECT sum(r), count(*), max(length(s)) FROM t;\n\
         SELECT e, d FROM t WHERE id > 290;\n\
         SELECT id, r FROM t WHERE id BETWEEN 20 AND 30 ORDER BY id DESC;\n\
         SELECT id, rowid, e FROM t WHERE rowid < 5 ORDER BY rowid DESC;\n\
         SELECT id FROM t WHERE id >= 295 AND id < 1001;\n\
         SELECT count(*), sum(a), group_concat(c) FROM u WHERE b BETWEEN 10 AND 20;\n\
         SELECT a, b FROM u WHERE 5 + b = 38;\n\
         SELECT a FROM u WHERE a * 2 > 590 OR a - 1 < 2;\n\
         SELECT a, (SELECT a FROM u AS v WHERE 5 + v.b = u.b) FROM u WHERE rowid < 40;\n\
         SELECT count(*) FROM t, u WHERE t.n = u.b % 7 AND u.a < 20;\n\
         SELECT 9223372036854775807 + a FROM u WHERE a < 3;\n\
         SELECT a FROM u WHERE c = 7 OR b = '7';\n\
         UPDATE u SET b = b + 1 WHERE a < 50;\n\
         SELECT count(*), sum(b) FROM u;\n",
    );
    check_script(&script, Compare::default());
}

fn fresh_dir(tag: &str) -> common::TempDir {
    common::TempDir::new(&format!("read-path-{tag}"))
}

/// integrity_check finds index entries missing for table rows (probing each index with
/// one reused cursor) and indexes holding the wrong number of entries (counted without
/// decoding keys): an index whose tree belongs to another table fails both.
#[test]
fn integrity_check_finds_missing_and_extra_index_entries() {
    let dir = fresh_dir("integrity");
    let path = dir.join("x.db");
    {
        let s = rusqlite::Connection::open(&path).expect("sqlite");
        s.execute_batch(
            "CREATE TABLE t1(a INTEGER, b TEXT);
             CREATE TABLE t2(a INTEGER, b TEXT);
             CREATE INDEX i1 ON t1(b);
             CREATE INDEX i2 ON t2(b);
             WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 200)
             INSERT INTO t1 SELECT x, 'v' || x FROM n;
             WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 50)
             INSERT INTO t2 SELECT x, 'w' || x FROM n;",
        )
        .expect("setup");
    }
    assert_eq!(integrity_check_rows(&path), vec!["ok".to_string()]);
    {
        let s = rusqlite::Connection::open(&path).expect("sqlite");
        let r1: i64 = s
            .query_row(
                "SELECT rootpage FROM sqlite_schema WHERE name='i1'",
                [],
                |r| r.get(0),
            )
            .expect("root");
        let r2: i64 = s
            .query_row(
                "SELECT rootpage FROM sqlite_schema WHERE name='i2'",
                [],
                |r| r.get(0),
            )
            .expect("root");
        s.execute_batch(&format!(
            "PRAGMA writable_schema=ON;
             UPDATE sqlite_schema SET rootpage={r2} WHERE name='i1';
             UPDATE sqlite_schema SET rootpage={r1} WHERE name='i2';"
        ))
        .expect("swap");
    }
    let got = integrity_check_rows(&path);
    assert!(
        got.contains(&"row 1 missing from index i1".to_string()),
        "{got:?}"
    );
    assert!(
        got.contains(&"wrong # of entries in index i1".to_string()),
        "{got:?}"
    );
    assert!(
        got.contains(&"wrong # of entries in index i2".to_string()),
        "{got:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
