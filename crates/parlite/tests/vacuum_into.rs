//! `VACUUM INTO 'file'` (lang_vacuum.html): a compacted copy of the main database in a new
//! file that stock SQLite (rusqlite, bundled) opens and checks, with the same rows, schema,
//! rowids and header values; an existing non-empty output file is refused with SQLite's
//! "output file already exists"; `VACUUM temp` does nothing, as in SQLite.

mod common;

use common::{run_parlite, sqlite_rows, temp_db_path, Out};

fn rows(o: Out) -> Vec<Vec<parlite::Value>> {
    match o {
        Out::Rows { rows, .. } => rows,
        Out::Err(e) => panic!("error: {e}"),
    }
}

#[test]
fn vacuum_into_writes_a_compacted_copy_sqlite_reads() {
    let src = temp_db_path("vacuum-into", "src");
    let dst = src.with_file_name("copy.db");
    let c = parlite::Connection::open(src.to_str().expect("utf8")).expect("open");
    c.execute_batch(
        "PRAGMA user_version = 42;
         PRAGMA application_id = 7;
         CREATE TABLE t(a INTEGER PRIMARY KEY AUTOINCREMENT, b TEXT, c REAL);
         CREATE INDEX tb ON t(b);
         CREATE TABLE w(k TEXT PRIMARY KEY, v) WITHOUT ROWID;
         CREATE UNIQUE INDEX wv ON w(v);
         CREATE VIEW vt AS SELECT a, b FROM t;
         CREATE TRIGGER tr AFTER INSERT ON t BEGIN INSERT INTO w VALUES(new.b, new.a); END;
         CREATE TABLE big(x, y);",
    )
    .expect("schema");
    c.execute_batch("BEGIN").expect("begin");
    for i in 0..3000 {
        c.execute_batch(&format!(
            "INSERT INTO t(b, c) VALUES('row{i}', {i}.5); INSERT INTO big VALUES({i}, zeroblob(300));"
        ))
        .expect("insert");
    }
    c.execute_batch(
        "COMMIT; DELETE FROM big WHERE x % 3 <> 0; DELETE FROM t WHERE a % 5 = 0; ANALYZE;",
    )
    .expect("thin out");
    let probes = [
        "SELECT count(*), sum(a), sum(c), max(b) FROM t",
        "SELECT * FROM t WHERE b = 'row77'",
        "SELECT count(*), sum(v) FROM w",
        "SELECT count(*), sum(x), sum(length(y)) FROM big",
        "SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY rowid",
        "SELECT * FROM sqlite_sequence",
        "SELECT count(*) FROM sqlite_stat1",
        "SELECT * FROM vt WHERE a < 5",
        "PRAGMA user_version",
        "PRAGMA application_id",
    ];
    let before: Vec<_> = probes.iter().map(|q| rows(run_parlite(&c, q))).collect();
    let pages_before = rows(run_parlite(&c, "PRAGMA page_count"));
    run_parlite(&c, &format!("VACUUM INTO '{}'", dst.display()));
    // The source is unchanged.
    for (q, b) in probes.iter().zip(&before) {
        assert_eq!(&rows(run_parlite(&c, q)), b, "source changed: {q}");
    }
    // Refused: the output exists now.
    match run_parlite(&c, &format!("VACUUM INTO '{}'", dst.display())) {
        Out::Err(e) => assert_eq!(e, "output file already exists"),
        other => panic!("expected an error, got {other:?}"),
    }
    // Stock SQLite reads the copy: integrity, rows, no free pages, fewer pages.
    let ok = sqlite_rows(&dst, "PRAGMA integrity_check");
    assert_eq!(rows(ok), vec![vec![parlite::Value::Text("ok".into())]]);
    for (q, b) in probes.iter().zip(&before) {
        assert_eq!(&rows(sqlite_rows(&dst, q)), b, "copy differs: {q}");
    }
    assert_eq!(
        rows(sqlite_rows(&dst, "PRAGMA freelist_count")),
        vec![vec![parlite::Value::Integer(0)]]
    );
    let copy_pages = rows(sqlite_rows(&dst, "PRAGMA page_count"));
    let (parlite::Value::Integer(a), parlite::Value::Integer(b)) =
        (&pages_before[0][0], &copy_pages[0][0])
    else {
        panic!("page counts: {pages_before:?} {copy_pages:?}");
    };
    assert!(b < a, "copy has {b} pages, source {a}");
    // The copy is a parlite database too, and writable.
    drop(c);
    let d = parlite::Connection::open(dst.to_str().expect("utf8")).expect("open copy");
    d.execute_batch("INSERT INTO t(b, c) VALUES('new', 1.0)")
        .expect("write copy");
    assert_eq!(
        rows(run_parlite(&d, "SELECT count(*) FROM w WHERE k = 'new'")),
        vec![vec![parlite::Value::Integer(1)]]
    );
}

#[test]
fn vacuum_into_errors_and_vacuum_temp() {
    let src = temp_db_path("vacuum-into", "errors");
    let c = parlite::Connection::open(src.to_str().expect("utf8")).expect("open");
    c.execute_batch("CREATE TABLE t(a); INSERT INTO t VALUES(1)")
        .expect("setup");
    assert!(matches!(run_parlite(&c, "VACUUM temp"), Out::Rows { .. }));
    // An empty file may be the output (SQLite allows it).
    let empty = src.with_file_name("empty.db");
    std::fs::write(&empty, b"").expect("empty file");
    assert!(matches!(
        run_parlite(&c, &format!("VACUUM INTO '{}'", empty.display())),
        Out::Rows { .. }
    ));
    assert_eq!(
        rows(sqlite_rows(&empty, "SELECT a FROM t")),
        vec![vec![parlite::Value::Integer(1)]]
    );
    c.execute_batch("BEGIN").expect("begin");
    let inside = src.with_file_name("inside.db");
    match run_parlite(&c, &format!("VACUUM INTO '{}'", inside.display())) {
        Out::Err(e) => assert_eq!(e, "cannot VACUUM from within a transaction"),
        other => panic!("expected an error, got {other:?}"),
    }
    assert!(!inside.exists());
}
