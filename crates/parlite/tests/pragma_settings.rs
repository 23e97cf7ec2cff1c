//! The pragmas of SQLite's list that set or read a connection's settings (pragma.html):
//! each one, read, set, schema-qualified and given bad values, answers as stock SQLite
//! (rusqlite, bundled, in WAL mode as parlite always is) answers, and the settings that
//! change behaviour do what SQLite does: `query_only` refuses writes, `data_version`
//! changes for other connections' commits only, `max_page_count` fails a growing write with
//! SQLITE_FULL, `page_size` before the first table sets the file's page size (which stock
//! SQLite then reads), `ignore_check_constraints` skips CHECK constraints.

mod common;
use common::{mismatches as compare, run_parlite, run_sqlite, Out};

/// [`compare`], failing on any mismatch (listing them).
fn assert_same(s: &rusqlite::Connection, p: &parlite::Connection, stmts: &[String]) {
    common::assert_no_mismatches(compare(s, p, stmts));
}

/// Fresh file databases: parlite's, and SQLite's in WAL mode.
fn fresh_pair(tag: &str) -> (common::TempDir, rusqlite::Connection, parlite::Connection) {
    let dir = common::TempDir::new(&format!("pragma-settings-{tag}"));
    let s = rusqlite::Connection::open(dir.join("s.db")).expect("sqlite");
    s.execute_batch("PRAGMA journal_mode = wal").expect("wal");
    let p = parlite::Connection::open(dir.join("p.db").to_str().expect("utf8")).expect("parlite");
    (dir, s, p)
}

/// Values an application or a typo may give: integers (signed, out of a byte's range,
/// real), words SQLite reads as booleans, and text it must parse (hex, junk).
const VALUES: &[&str] = &[
    "1",
    "0",
    "-5",
    "100",
    "256",
    "1.5",
    "2",
    "ON",
    "off",
    "yes",
    "'full'",
    "'normal'",
    "'bogus'",
    "'0x10'",
    "'12abc'",
    "-1",
    "268435456",
    "99999999999",
];

/// Settings that read back what was set, with SQLite's reading of every value.
const SETTINGS: &[&str] = &[
    "query_only",
    "ignore_check_constraints",
    "automatic_index",
    "trusted_schema",
    "cell_size_check",
    "read_uncommitted",
    "fullfsync",
    "checkpoint_fullfsync",
    "recursive_triggers",
    "temp_store",
    "threads",
    "analysis_limit",
    "mmap_size",
    "journal_size_limit",
    "wal_autocheckpoint",
    "max_page_count",
    "synchronous",
    "page_count",
    "freelist_count",
    "optimize",
];

#[test]
fn settings_read_set_qualified_and_bad_values_match_sqlite() {
    let mut failures = Vec::new();
    for name in SETTINGS {
        for schema in ["", "main."] {
            let (_dir, s, p) = fresh_pair(name);
            let mut stmts = vec![format!("PRAGMA {schema}{name}")];
            for v in VALUES {
                stmts.push(format!("PRAGMA {schema}{name} = {v}"));
                stmts.push(format!("PRAGMA {schema}{name}"));
                // Each setting reads back the same through the other spelling.
                stmts.push(format!("PRAGMA main.{name}"));
            }
            failures.extend(compare(&s, &p, &stmts));
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The deprecated or debugging flags parlite cannot honour read SQLite's default, and an
/// assignment answers as SQLite's (no row); pragma_list is SQLite's.
#[test]
fn unhonoured_flags_read_sqlites_defaults() {
    let (_dir, s, p) = fresh_pair("fixed");
    let mut stmts = vec!["PRAGMA pragma_list".to_string()];
    for name in [
        "count_changes",
        "empty_result_callbacks",
        "full_column_names",
        "short_column_names",
        "legacy_alter_table",
        "reverse_unordered_selects",
        "writable_schema",
        "secure_delete",
        "hard_heap_limit",
    ] {
        stmts.push(format!("PRAGMA {name}"));
    }
    for name in [
        "count_changes",
        "full_column_names",
        "legacy_alter_table",
        "writable_schema",
    ] {
        stmts.push(format!("PRAGMA {name} = 0"));
    }
    stmts.push("PRAGMA encoding = 'UTF-8'".into());
    stmts.push("PRAGMA encoding = 'latin1'".into());
    stmts.push("PRAGMA encoding".into());
    stmts.push("PRAGMA no_such_pragma".into());
    stmts.push("PRAGMA no_such_pragma = 3".into());
    assert_same(&s, &p, &stmts);
}

/// `soft_heap_limit` is process-wide in SQLite too: set to a value no test can reach, then
/// back to none.
#[test]
fn soft_heap_limit_reads_back_as_sqlite() {
    let (_dir, s, p) = fresh_pair("soft-heap");
    let stmts: Vec<String> = [
        "PRAGMA soft_heap_limit = 1099511627776",
        "PRAGMA soft_heap_limit",
        "PRAGMA soft_heap_limit = -3",
        "PRAGMA soft_heap_limit = 'junk'",
        "PRAGMA soft_heap_limit = 0",
        "PRAGMA soft_heap_limit",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_same(&s, &p, &stmts);
}

/// The statements an application opens a database with (the task's script), on fresh files.
#[test]
fn an_applications_opening_pragmas_answer_as_sqlite() {
    let (dir, _, p) = fresh_pair("opening");
    // SQLite's file in its default journal mode: switching to WAL would write page 1,
    // after which SQLite ignores page_size too.
    let s = rusqlite::Connection::open(dir.join("s-rollback.db")).expect("sqlite");
    let stmts: Vec<String> = "PRAGMA page_size=8192; CREATE TABLE t(a); PRAGMA page_size; \
        PRAGMA mmap_size=268435456; PRAGMA mmap_size; PRAGMA journal_size_limit=1000; \
        PRAGMA journal_size_limit; PRAGMA wal_autocheckpoint; PRAGMA max_page_count; \
        PRAGMA temp_store=2; PRAGMA temp_store; PRAGMA threads; PRAGMA analysis_limit; \
        PRAGMA trusted_schema; PRAGMA cell_size_check; PRAGMA query_only; \
        PRAGMA automatic_index; PRAGMA checkpoint_fullfsync; PRAGMA fullfsync; \
        PRAGMA temp.temp_store; PRAGMA database_list"
        .split(';')
        .map(|s| s.trim().to_string())
        .collect();
    let mut failures = compare(&s, &p, &stmts);
    // database_list names each engine's own file: compare the shape.
    let shape = |o: Out| match o {
        Out::Rows { rows, .. } => rows.iter().map(|r| r[..2].to_vec()).collect::<Vec<_>>(),
        Out::Err(e) => panic!("{e}"),
    };
    failures.retain(|f| !f.starts_with("PRAGMA database_list"));
    assert_eq!(
        shape(run_sqlite(&s, "PRAGMA database_list")),
        shape(run_parlite(&p, "PRAGMA database_list"))
    );
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn query_only_refuses_every_write_as_sqlite() {
    let (dir, s, p) = fresh_pair("query-only");
    let aux = dir.join("aux.db");
    let stmts: Vec<String> = [
        "CREATE TABLE t(a INTEGER PRIMARY KEY, b)",
        "INSERT INTO t VALUES (1, 'x'), (2, 'y')",
        "PRAGMA query_only = 1",
        "SELECT * FROM t ORDER BY a",
        "INSERT INTO t VALUES (3, 'z')",
        "UPDATE t SET b = 'w' WHERE a = 1",
        "UPDATE t SET b = 'w' WHERE 0",
        "DELETE FROM t",
        "REPLACE INTO t VALUES (1, 'r')",
        "CREATE TABLE u(x)",
        "CREATE INDEX tb ON t(b)",
        "CREATE TEMP TABLE tt(x)",
        "CREATE VIEW v AS SELECT 1",
        "DROP TABLE t",
        "ALTER TABLE t ADD COLUMN c",
        "PRAGMA user_version = 7",
        "PRAGMA application_id = 7",
        "PRAGMA user_version",
        "ANALYZE",
        "VACUUM",
        "BEGIN",
        "SELECT count(*) FROM t",
        "INSERT INTO t VALUES (4, 'q')",
        "COMMIT",
        "BEGIN IMMEDIATE",
        "ROLLBACK",
        "PRAGMA busy_timeout = 100",
        "PRAGMA query_only",
        "PRAGMA query_only = 0",
        "INSERT INTO t VALUES (3, 'z')",
        "SELECT * FROM t ORDER BY a",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_same(&s, &p, &stmts);
    // The error is SQLITE_READONLY, as SQLite's; attaching writes nothing and is allowed.
    p.execute_batch("PRAGMA query_only = ON").expect("set");
    let e = p.execute_batch("DELETE FROM t").expect_err("refused");
    assert_eq!(
        (e.code, e.message.as_str()),
        (8, "attempt to write a readonly database")
    );
    p.execute_batch(&format!("ATTACH '{}' AS aux; DETACH aux", aux.display()))
        .expect("attach under query_only");
}

#[test]
fn ignore_check_constraints_skips_checks_as_sqlite() {
    common::check_script(
        "CREATE TABLE c(x CHECK (x > 0), y CHECK (y <> 'no'));
         INSERT INTO c VALUES (1, 'ok');
         INSERT INTO c VALUES (-1, 'ok');
         PRAGMA ignore_check_constraints = 1;
         INSERT INTO c VALUES (-2, 'no');
         UPDATE c SET x = -3 WHERE x = 1;
         PRAGMA ignore_check_constraints;
         PRAGMA ignore_check_constraints = 0;
         INSERT INTO c VALUES (-4, 'ok');
         UPDATE c SET x = 5, y = 'no' WHERE x = -3;
         SELECT * FROM c ORDER BY x;",
        common::Compare::default(),
    );
}

/// Whether `PRAGMA data_version` moved since the last call, for each engine's connection.
struct Watch {
    last: Option<i64>,
}

impl Watch {
    fn moved(&mut self, now: i64) -> bool {
        let moved = self.last.is_some_and(|l| l != now);
        self.last = Some(now);
        moved
    }
}

fn data_version_sqlite(c: &rusqlite::Connection) -> i64 {
    c.query_row("PRAGMA data_version", [], |r| r.get(0))
        .expect("data_version")
}

fn data_version_parlite(c: &parlite::Connection) -> i64 {
    match run_parlite(c, "PRAGMA data_version") {
        Out::Rows { rows, .. } => match rows.as_slice() {
            [row] => match row.as_slice() {
                [parlite::Value::Integer(i)] => *i,
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        },
        Out::Err(e) => panic!("{e}"),
    }
}

#[test]
fn data_version_moves_only_for_other_connections_commits() {
    let dir = common::TempDir::new("pragma-settings-data-version");
    let (sp, pp) = (dir.join("s.db"), dir.join("p.db"));
    let s1 = rusqlite::Connection::open(&sp).expect("sqlite");
    s1.execute_batch("PRAGMA journal_mode = wal; CREATE TABLE t(a)")
        .expect("wal");
    let s2 = rusqlite::Connection::open(&sp).expect("sqlite");
    let db = parlite::Database::open(pp.to_str().expect("utf8")).expect("parlite");
    let (p1, p2) = (db.connect().expect("c1"), db.connect().expect("c2"));
    p1.execute_batch("CREATE TABLE t(a)").expect("create");
    // (which connection runs it: 1 or 2, statement); connection 1 watches data_version.
    let steps: &[(u8, &str)] = &[
        (1, "SELECT 1"),
        (1, "INSERT INTO t VALUES (1)"),
        (1, "BEGIN IMMEDIATE; INSERT INTO t VALUES (2); COMMIT"),
        (1, "BEGIN IMMEDIATE; COMMIT"),
        (2, "INSERT INTO t VALUES (3)"),
        (1, "SELECT count(*) FROM t"),
        (2, "SELECT count(*) FROM t"),
        (2, "BEGIN IMMEDIATE; UPDATE t SET a = a + 1; COMMIT"),
        (1, "INSERT INTO t VALUES (4)"),
        (2, "BEGIN; SELECT 1; COMMIT"),
        (1, "DELETE FROM t WHERE a = 4"),
        (2, "DELETE FROM t WHERE a = 3"),
        (2, "CREATE TABLE u(x)"),
        (1, "CREATE INDEX ta ON t(a)"),
    ];
    let (mut ws, mut wp) = (Watch { last: None }, Watch { last: None });
    ws.moved(data_version_sqlite(&s1));
    wp.moved(data_version_parlite(&p1));
    for (who, sql) in steps {
        match who {
            1 => {
                s1.execute_batch(sql).expect(sql);
                p1.execute_batch(sql).expect(sql);
            }
            _ => {
                s2.execute_batch(sql).expect(sql);
                p2.execute_batch(sql).expect(sql);
            }
        }
        let sqlite_moved = ws.moved(data_version_sqlite(&s1));
        let parlite_moved = wp.moved(data_version_parlite(&p1));
        assert_eq!(parlite_moved, sqlite_moved, "after {who}: {sql}");
        assert_eq!(
            sqlite_moved,
            *who == 2 && !sql.contains("SELECT"),
            "sqlite after {sql}"
        );
    }
    // Inside a read transaction the value is that of its snapshot; it moves at the next
    // snapshot.
    p1.execute_batch("BEGIN; SELECT 1").expect("begin");
    let before = data_version_parlite(&p1);
    p2.execute_batch("INSERT INTO t VALUES (9)").expect("other");
    assert_eq!(data_version_parlite(&p1), before, "within the snapshot");
    p1.execute_batch("COMMIT").expect("commit");
    assert_ne!(data_version_parlite(&p1), before, "after the snapshot");
}

fn int_rows(o: Out) -> Vec<Vec<parlite::Value>> {
    match o {
        Out::Rows { rows, .. } => rows,
        Out::Err(e) => panic!("{e}"),
    }
}

#[test]
fn max_page_count_fails_a_growing_write_with_sqlite_full() {
    let (_dir, s, p) = fresh_pair("max-page-count");
    let stmts: Vec<String> = [
        "CREATE TABLE t(a INTEGER PRIMARY KEY, b)",
        "INSERT INTO t VALUES (1, zeroblob(100))",
        "PRAGMA page_count",
        // Never below the current size.
        "PRAGMA max_page_count = 1",
        "PRAGMA max_page_count = 4",
        "INSERT INTO t VALUES (2, zeroblob(100))",
        "INSERT INTO t VALUES (3, zeroblob(20000))",
        "SELECT a, length(b) FROM t ORDER BY a",
        "INSERT INTO t VALUES (4, zeroblob(50))",
        "CREATE TABLE u(x)",
        "CREATE TABLE w(x)",
        "SELECT name FROM sqlite_schema ORDER BY name",
        "PRAGMA max_page_count = 100",
        "INSERT INTO t VALUES (3, zeroblob(20000))",
        "SELECT a, length(b) FROM t ORDER BY a",
        "PRAGMA max_page_count",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_same(&s, &p, &stmts);
    p.execute_batch("PRAGMA max_page_count = 8").expect("set");
    let e = p
        .execute_batch("INSERT INTO t VALUES (5, zeroblob(40000))")
        .expect_err("full");
    assert_eq!(
        (e.code, e.message.as_str()),
        (13, "database or disk is full")
    );
    assert_eq!(
        int_rows(run_parlite(&p, "PRAGMA integrity_check")),
        vec![vec![parlite::Value::Text("ok".into())]]
    );
}

fn page_size_of(c: &parlite::Connection) -> i64 {
    match int_rows(run_parlite(c, "PRAGMA page_size")).as_slice() {
        [row] => match row.as_slice() {
            [parlite::Value::Integer(i)] => *i,
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
}

#[test]
fn page_size_before_the_first_table_sets_the_files_page_size() {
    let dir = common::TempDir::new("pragma-settings-page-size");
    for size in [512i64, 1024, 8192, 65536] {
        let path = dir.join(format!("p{size}.db"));
        {
            let c = parlite::Connection::open(path.to_str().expect("utf8")).expect("open");
            // Not a power of two in 512..=65536: ignored, as SQLite.
            c.execute_batch("PRAGMA page_size = 1000; PRAGMA page_size = 131072")
                .expect("bad sizes");
            assert_eq!(page_size_of(&c), 4096);
            c.execute_batch(&format!("PRAGMA page_size = {size}"))
                .expect("set");
            assert_eq!(page_size_of(&c), size);
            c.execute_batch(
                "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT);
                 CREATE INDEX tb ON t(b);
                 WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 2000)
                 INSERT INTO t SELECT x, printf('row %d %.*c', x, x % 700, 'y') FROM n;",
            )
            .expect("fill");
            // Once the database has a table the size is fixed.
            c.execute_batch("PRAGMA page_size = 2048").expect("ignored");
            assert_eq!(page_size_of(&c), size);
        }
        let s = rusqlite::Connection::open(&path).expect("sqlite");
        let (ps, n, check): (i64, i64, String) = s
            .query_row(
                "SELECT (SELECT page_size FROM pragma_page_size), (SELECT count(*) FROM t), \
                 (SELECT integrity_check FROM pragma_integrity_check)",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .expect("sqlite reads it");
        assert_eq!(
            (ps, n, check.as_str()),
            (size, 2000, "ok"),
            "page size {size}"
        );
    }
    // A header setting makes the database non-blank, as SQLite's first write does.
    let path = dir.join("set.db");
    let c = parlite::Connection::open(path.to_str().expect("utf8")).expect("open");
    c.execute_batch("PRAGMA user_version = 3; PRAGMA page_size = 8192")
        .expect("set");
    assert_eq!(page_size_of(&c), 4096);
    // In memory as on disk.
    common::check_script(
        "PRAGMA page_size = 1024;
         PRAGMA page_size;
         CREATE TABLE t(a);
         PRAGMA page_size = 8192;
         PRAGMA page_size;
         INSERT INTO t VALUES (randomblob(3000));
         PRAGMA page_count;",
        common::Compare::default(),
    );
}

/// Each database has its own `synchronous`: `temp` is OFF and ignores assignments, an
/// attached database starts at its default and keeps its own level (through DETACH and a
/// new ATTACH, the default again); no level changes inside a transaction.
#[test]
fn synchronous_is_per_database_as_sqlite() {
    let (dir, s, p) = fresh_pair("sync-schemas");
    let attach = |name: &str| format!("ATTACH '{}' AS aux", dir.join(name).display());
    let mut stmts = vec![
        "PRAGMA temp.synchronous".to_string(),
        "PRAGMA temp.synchronous = 2".to_string(),
        "PRAGMA temp.synchronous".to_string(),
        "PRAGMA synchronous = 1".to_string(),
        "PRAGMA temp.synchronous".to_string(),
        "PRAGMA aux.synchronous".to_string(),
    ];
    // Each engine attaches its own file (the statements differ only in the path).
    let mut failures = compare(&s, &p, &stmts);
    run_sqlite(&s, &attach("s-aux.db"));
    run_parlite(&p, &attach("p-aux.db"));
    stmts.clear();
    for v in ["", " = 0", " = 3", " = 'normal'", " = 7"] {
        stmts.push(format!("PRAGMA aux.synchronous{v}"));
        stmts.push("PRAGMA aux.synchronous".into());
        stmts.push("PRAGMA main.synchronous".into());
        stmts.push("PRAGMA temp.synchronous".into());
    }
    stmts.extend(
        [
            "PRAGMA main.synchronous = 0",
            "PRAGMA aux.synchronous",
            "CREATE TABLE aux.t(x)",
            "BEGIN",
            "INSERT INTO aux.t VALUES(1)",
            "PRAGMA aux.synchronous = 2",
            "PRAGMA synchronous = 2",
            "PRAGMA main.synchronous = 2",
            "PRAGMA temp.synchronous = 2",
            "PRAGMA synchronous",
            "PRAGMA aux.synchronous",
            "COMMIT",
            "PRAGMA nosuch.synchronous",
            "DETACH aux",
            "PRAGMA aux.synchronous",
        ]
        .map(String::from),
    );
    failures.extend(compare(&s, &p, &stmts));
    run_sqlite(&s, &attach("s-aux.db"));
    run_parlite(&p, &attach("p-aux.db"));
    failures.extend(compare(
        &s,
        &p,
        &[
            "PRAGMA aux.synchronous".into(),
            "SELECT * FROM aux.t".into(),
        ],
    ));
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
