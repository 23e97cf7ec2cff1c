//! `PRAGMA page_count`, `freelist_count`, `application_id` and `page_size` report the
//! database file's header: on a file parlite wrote they equal what stock SQLite (rusqlite,
//! bundled) reads from the same file, for main and for an attached database.

mod common;
use common::{run_parlite, Out};

fn temp_path(tag: &str) -> common::TempDb {
    common::temp_db_path("header-pragmas", tag)
}

fn one_int(out: Out) -> i64 {
    match out {
        Out::Rows { rows, .. } => match rows.as_slice() {
            [row] => match row.as_slice() {
                [parlite::Value::Integer(i)] => *i,
                other => panic!("expected one integer, got {other:?}"),
            },
            other => panic!("expected one row, got {other:?}"),
        },
        Out::Err(e) => panic!("error: {e}"),
    }
}

fn sqlite_int(path: &std::path::Path, sql: &str) -> i64 {
    let s = rusqlite::Connection::open(path).expect("sqlite");
    s.query_row(sql, [], |r| r.get(0)).expect("query")
}

const PRAGMAS: [&str; 4] = [
    "PRAGMA page_count",
    "PRAGMA freelist_count",
    "PRAGMA application_id",
    "PRAGMA page_size",
];

#[test]
fn header_pragmas_match_what_sqlite_reads_from_the_file() {
    let path = temp_path("main");
    let ours: Vec<i64> = {
        let c = parlite::Connection::open(path.to_str().expect("utf8")).expect("open");
        c.execute_batch(
            "CREATE TABLE t(a INTEGER PRIMARY KEY, b);
             CREATE INDEX tb ON t(b);
             WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 3000)
             INSERT INTO t SELECT x, randomblob(300) FROM n;
             DELETE FROM t WHERE a > 500;
             PRAGMA application_id = -123456;",
        )
        .expect("writes");
        let got: Vec<i64> = PRAGMAS
            .iter()
            .map(|p| one_int(run_parlite(&c, p)))
            .collect();
        // The deleted rows' pages went to the freelist; the id reads back signed.
        assert!(got[0] > 100, "page_count {}", got[0]);
        assert!(got[1] > 50, "freelist_count {}", got[1]);
        assert_eq!(got[2], -123456);
        got
    };
    let theirs: Vec<i64> = PRAGMAS.iter().map(|p| sqlite_int(&path, p)).collect();
    assert_eq!(ours, theirs);
}

#[test]
fn header_pragmas_of_an_attached_database() {
    let main = temp_path("att-main");
    let aux = temp_path("att-aux");
    {
        let s = rusqlite::Connection::open(&aux).expect("sqlite");
        s.execute_batch(
            "PRAGMA application_id = 77;
             CREATE TABLE x(v);
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500)
             INSERT INTO x SELECT randomblob(500) FROM n;
             DELETE FROM x WHERE rowid % 2 = 0;",
        )
        .expect("aux");
    }
    let expected: Vec<i64> = PRAGMAS.iter().map(|p| sqlite_int(&aux, p)).collect();
    let c = parlite::Connection::open(main.to_str().expect("utf8")).expect("open");
    c.execute_batch(&format!("ATTACH '{}' AS aux", aux.to_str().expect("utf8")))
        .expect("attach");
    let got: Vec<i64> = PRAGMAS
        .iter()
        .map(|p| one_int(run_parlite(&c, &p.replace("PRAGMA ", "PRAGMA aux."))))
        .collect();
    assert_eq!(got, expected);
    c.execute_batch("PRAGMA aux.application_id = 5")
        .expect("set");
    assert_eq!(one_int(run_parlite(&c, "PRAGMA aux.application_id")), 5);
    assert_eq!(one_int(run_parlite(&c, "PRAGMA main.application_id")), 0);
    match run_parlite(&c, "PRAGMA nosuch.page_count") {
        Out::Err(e) => assert_eq!(e, "unknown database nosuch"),
        other => panic!("expected an error, got {other:?}"),
    }
}

fn rows_of(out: Out) -> Vec<Vec<parlite::Value>> {
    match out {
        Out::Rows { rows, .. } => rows,
        Out::Err(e) => panic!("error: {e}"),
    }
}

/// VACUUM rebuilds the database with no free page, so the file shrinks as SQLite's does;
/// stock SQLite checks the result, and a reader's snapshot taken before stays readable.
#[test]
fn vacuum_leaves_no_free_page_and_the_file_shrinks() {
    let path = temp_path("vacuum");
    let fill = "CREATE TABLE t(a INTEGER PRIMARY KEY, b, c TEXT);
         CREATE INDEX tb ON t(b);
         CREATE TABLE w(k TEXT PRIMARY KEY, v) WITHOUT ROWID;
         CREATE TABLE s(id INTEGER PRIMARY KEY AUTOINCREMENT, x);
         CREATE VIEW v AS SELECT a FROM t;
         WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 4000)
         INSERT INTO t SELECT x, randomblob(200), 'row ' || x FROM n;
         INSERT INTO w SELECT 'k' || a, a FROM t WHERE a % 3 = 0;
         INSERT INTO s(x) VALUES (1), (2);
         DELETE FROM t WHERE a % 5 <> 0;
         DELETE FROM w WHERE v % 2 = 0;
         ANALYZE;";
    let probe = "SELECT count(*), sum(a), sum(length(b)), (SELECT count(*) FROM w),
                 (SELECT group_concat(name || ':' || seq) FROM sqlite_sequence)
                 FROM t WHERE c LIKE 'row %'";
    let c = parlite::Connection::open(path.to_str().expect("utf8")).expect("open");
    c.execute_batch(fill).expect("fill");
    let before_pages = one_int(run_parlite(&c, "PRAGMA page_count"));
    assert!(one_int(run_parlite(&c, "PRAGMA freelist_count")) > 100);
    let expected = rows_of(run_parlite(&c, probe));

    let reader = parlite::Connection::open(path.to_str().expect("utf8")).expect("open");
    reader.execute_batch("BEGIN").expect("begin");
    assert_eq!(rows_of(run_parlite(&reader, probe)), expected);

    c.execute_batch("VACUUM").expect("vacuum");
    assert_eq!(one_int(run_parlite(&c, "PRAGMA freelist_count")), 0);
    let after_pages = one_int(run_parlite(&c, "PRAGMA page_count"));
    assert!(
        after_pages * 3 < before_pages,
        "{before_pages} -> {after_pages} pages"
    );
    assert_eq!(rows_of(run_parlite(&c, probe)), expected);
    // The snapshot from before VACUUM still reads its pages.
    assert_eq!(rows_of(run_parlite(&reader, probe)), expected);
    reader.execute_batch("COMMIT").expect("commit");
    drop(reader);
    c.execute_batch("INSERT INTO t VALUES (100000, x'00', 'row x'); INSERT INTO s(x) VALUES (3)")
        .expect("write after vacuum");
    drop(c);

    assert_eq!(sqlite_int(&path, "PRAGMA freelist_count"), 0);
    let s = rusqlite::Connection::open(&path).expect("sqlite");
    let check: String = s
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("check");
    assert_eq!(check, "ok");
    let n: i64 = s
        .query_row("SELECT count(*) FROM t WHERE b IS NOT NULL", [], |r| {
            r.get(0)
        })
        .expect("count");
    assert_eq!(n, 801);
    // The same content vacuumed by SQLite takes about as many pages.
    s.execute_batch("VACUUM").expect("sqlite vacuum");
    let theirs: i64 = s
        .query_row("PRAGMA page_count", [], |r| r.get(0))
        .expect("pages");
    let ours = after_pages;
    assert!(
        (ours - theirs).abs() * 10 <= theirs + 10,
        "parlite {ours} pages, SQLite {theirs}"
    );
}

/// `VACUUM aux` compacts an attached database's own file and leaves main alone.
#[test]
fn vacuum_of_an_attached_database() {
    let main = temp_path("vac-main");
    let aux = temp_path("vac-aux");
    {
        let s = rusqlite::Connection::open(&aux).expect("sqlite");
        s.execute_batch(
            "CREATE TABLE x(v, w);
             CREATE INDEX xw ON x(w);
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
             INSERT INTO x SELECT randomblob(300), i FROM n;
             DELETE FROM x WHERE w % 4 <> 0;",
        )
        .expect("aux");
    }
    let c = parlite::Connection::open(main.to_str().expect("utf8")).expect("open");
    c.execute_batch("CREATE TABLE m(a); INSERT INTO m VALUES (1)")
        .expect("main");
    c.execute_batch(&format!("ATTACH '{}' AS aux", aux.to_str().expect("utf8")))
        .expect("attach");
    let before = one_int(run_parlite(&c, "PRAGMA aux.page_count"));
    assert!(one_int(run_parlite(&c, "PRAGMA aux.freelist_count")) > 100);
    let probe = "SELECT count(*), sum(w), sum(length(v)) FROM aux.x WHERE w > 100";
    let expected = rows_of(run_parlite(&c, probe));
    c.execute_batch("VACUUM aux").expect("vacuum aux");
    assert_eq!(one_int(run_parlite(&c, "PRAGMA aux.freelist_count")), 0);
    assert!(one_int(run_parlite(&c, "PRAGMA aux.page_count")) * 2 < before);
    assert_eq!(rows_of(run_parlite(&c, probe)), expected);
    assert_eq!(one_int(run_parlite(&c, "SELECT a FROM m")), 1);
    // SQLite generates no code for VACUUM temp: it succeeds and does nothing.
    assert!(matches!(run_parlite(&c, "VACUUM temp"), Out::Rows { .. }));
    for (sql, msg) in [("VACUUM nosuch", "unknown database nosuch")] {
        match run_parlite(&c, sql) {
            Out::Err(e) => assert_eq!(e, msg),
            other => panic!("{sql}: expected an error, got {other:?}"),
        }
    }
    drop(c);
    let s = rusqlite::Connection::open(&aux).expect("sqlite");
    let check: String = s
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("check");
    assert_eq!(check, "ok");
    assert_eq!(sqlite_int(&aux, "PRAGMA freelist_count"), 0);
}

/// A UTF-16 database (its text and index order are UTF-16's) is refused at open with
/// SQLITE_NOTADB and a message naming the encoding, never read as if its text were UTF-8;
/// the file is left as it was.
#[test]
fn a_utf16_database_is_refused_at_open() {
    for (pragma, name) in [("UTF-16le", "UTF-16le"), ("UTF-16be", "UTF-16be")] {
        let path = temp_path(name);
        {
            let s = rusqlite::Connection::open(&*path).expect("sqlite");
            s.execute_batch(&format!(
                "PRAGMA encoding = '{pragma}'; CREATE TABLE t(a); INSERT INTO t VALUES ('héllo');"
            ))
            .expect("sqlite writes");
        }
        let before = std::fs::read(&*path).expect("file");
        let err = match parlite::Connection::open(path.to_str().unwrap())
            .and_then(|c| c.execute_batch("SELECT * FROM t"))
        {
            Ok(_) => panic!("{name}: a UTF-16 database opened"),
            Err(e) => e,
        };
        assert_eq!(err.code, 26, "{name}: {err}");
        assert!(err.to_string().contains(name), "{name}: {err}");
        assert_eq!(std::fs::read(&*path).expect("file"), before, "{name}");
        assert_eq!(
            sqlite_int(&path, "SELECT count(*) FROM t WHERE a = 'héllo'"),
            1
        );
    }
}
