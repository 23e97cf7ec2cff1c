//! Foreign-key pragmas, foreign keys inside attached databases, ANALYZE / REINDEX of
//! attached databases, and the catalog pragmas (function_list, pragma_list, module_list,
//! compile_options, collation_list): the same scripts through parlite and SQLite
//! (rusqlite, bundled), outcomes compared statement by statement.

mod common;
use common::{check_script, run_parlite, run_sqlite, Compare, Out};

/// Rows of statements without ORDER BY are compared as multisets: SQLite walks its
/// tables in hash order for `PRAGMA foreign_key_check`.
const UNORDERED: Compare = Compare {
    unordered_without_order_by: true,
    ignore_alter_names: false,
};

#[test]
fn foreign_key_list_and_check() {
    check_script(
        "PRAGMA foreign_keys=ON;
        CREATE TABLE p(id INTEGER PRIMARY KEY, x);
        CREATE TABLE p2(u, v, UNIQUE(u, v));
        CREATE TABLE c(a REFERENCES p(id) ON DELETE CASCADE ON UPDATE SET NULL, b, c2,
          FOREIGN KEY(b, c2) REFERENCES p2(u, v) ON DELETE RESTRICT,
          FOREIGN KEY(b) REFERENCES p ON UPDATE SET DEFAULT);
        PRAGMA foreign_key_list(c);
        SELECT * FROM pragma_foreign_key_list('c') ORDER BY id, seq;
        SELECT id, seq, \"from\", \"to\", arg, schema FROM pragma_foreign_key_list('c', 'main') ORDER BY 1, 2;
        SELECT m.name, f.* FROM sqlite_schema m, pragma_foreign_key_list(m.name) f ORDER BY 1, 2, 3;
        PRAGMA foreign_key_list(p);
        PRAGMA foreign_key_list(nosuch);
        INSERT INTO p VALUES(1, 'a'), (2, 'b');
        INSERT INTO p2 VALUES(1, 1);
        INSERT INTO c VALUES(1, NULL, NULL);
        INSERT INTO c VALUES(3, NULL, NULL);
        PRAGMA foreign_key_check;
        PRAGMA foreign_keys=OFF;
        INSERT INTO c VALUES(3, 1, 1), (2, 5, 5), (NULL, 1, 2), ('1', 1, '1');
        CREATE TABLE wc(k PRIMARY KEY, r REFERENCES p) WITHOUT ROWID;
        INSERT INTO wc VALUES(1, 9), (2, 1), (3, NULL);
        CREATE TABLE orphan(x REFERENCES nothere);
        INSERT INTO orphan VALUES(1), (NULL), ('z');
        PRAGMA foreign_key_check;
        PRAGMA foreign_key_check(c);
        PRAGMA foreign_key_check(wc);
        PRAGMA foreign_key_check(orphan);
        PRAGMA foreign_key_check(p);
        PRAGMA foreign_key_check(nosuch);
        PRAGMA foreign_keys=ON;
        INSERT INTO orphan VALUES(5);
        INSERT INTO orphan VALUES(NULL);",
        UNORDERED,
    );
}

#[test]
fn foreign_keys_within_an_attached_database() {
    check_script(
        "PRAGMA foreign_keys=ON;
        CREATE TABLE p(id INTEGER PRIMARY KEY, x);
        CREATE TABLE c(k INTEGER PRIMARY KEY, pid);
        CREATE TABLE onlymain(id INTEGER PRIMARY KEY);
        INSERT INTO p VALUES(3, 'main'), (99, 'main');
        ATTACH ':memory:' AS aux;
        CREATE TABLE aux.p(id INTEGER PRIMARY KEY, x);
        CREATE TABLE aux.c(k INTEGER PRIMARY KEY, pid REFERENCES p(id) ON DELETE CASCADE ON UPDATE CASCADE);
        CREATE TABLE aux.d(k INTEGER PRIMARY KEY, pid REFERENCES p(id) ON DELETE SET NULL);
        CREATE TABLE aux.r(k INTEGER PRIMARY KEY, pid REFERENCES p(id) ON DELETE RESTRICT);
        INSERT INTO aux.p VALUES(1, 'x'), (2, 'y'), (4, 'z');
        INSERT INTO aux.c VALUES(10, 1), (11, 2);
        INSERT INTO aux.d VALUES(20, 1);
        INSERT INTO aux.r VALUES(30, 4);
        INSERT INTO aux.c VALUES(12, 3);
        DELETE FROM aux.p WHERE id = 1;
        SELECT * FROM aux.c ORDER BY k;
        SELECT * FROM aux.d ORDER BY k;
        UPDATE aux.p SET id = 5 WHERE id = 2;
        SELECT * FROM aux.c ORDER BY k;
        DELETE FROM aux.p WHERE id = 4;
        DELETE FROM main.p WHERE id = 3;
        SELECT * FROM main.p ORDER BY id;
        PRAGMA aux.foreign_key_list(c);
        PRAGMA foreign_key_list(c);
        SELECT id, \"table\", \"from\" FROM pragma_foreign_key_list('d', 'aux');
        CREATE TABLE aux.orph(x REFERENCES onlymain);
        INSERT INTO aux.orph VALUES(1);
        PRAGMA foreign_keys=OFF;
        INSERT INTO aux.orph VALUES(1);
        INSERT INTO aux.c VALUES(13, 99), (14, 5);
        PRAGMA aux.foreign_key_check;
        PRAGMA aux.foreign_key_check(c);
        PRAGMA aux.foreign_key_check(nosuch);
        PRAGMA foreign_key_check;
        PRAGMA nosuchdb.foreign_key_check;",
        UNORDERED,
    );
}

#[test]
fn analyze_and_reindex_attached_databases() {
    check_script(
        "CREATE TABLE t(a, b);
        CREATE INDEX ta ON t(a);
        INSERT INTO t VALUES(1, 1), (1, 2), (2, 3);
        ATTACH ':memory:' AS aux;
        CREATE TABLE aux.c(k INTEGER PRIMARY KEY, v, w);
        CREATE INDEX aux.cv ON c(v);
        CREATE INDEX aux.cvw ON c(v, w);
        CREATE TABLE aux.plain(x);
        INSERT INTO aux.c VALUES(1, 'a', 1), (2, 'a', 2), (3, 'b', 2), (4, 'c', 3);
        INSERT INTO aux.plain VALUES(1), (2);
        ANALYZE aux;
        SELECT * FROM aux.sqlite_stat1 ORDER BY tbl, idx;
        SELECT count(*) FROM main.sqlite_schema WHERE name = 'sqlite_stat1';
        INSERT INTO aux.c VALUES(5, 'd', 4);
        ANALYZE aux.c;
        SELECT * FROM aux.sqlite_stat1 ORDER BY tbl, idx;
        INSERT INTO aux.c VALUES(6, 'd', 5);
        ANALYZE aux.cv;
        ANALYZE cvw;
        SELECT tbl, idx FROM aux.sqlite_stat1 ORDER BY tbl, idx;
        ANALYZE aux.nosuch;
        ANALYZE nosuchdb.t;
        ANALYZE;
        SELECT * FROM main.sqlite_stat1 ORDER BY tbl, idx;
        SELECT * FROM aux.sqlite_stat1 ORDER BY tbl, idx;
        REINDEX aux.c;
        REINDEX aux.cv;
        REINDEX cvw;
        REINDEX aux.nosuch;
        REINDEX nosuchdb.x;
        REINDEX aux;
        REINDEX;
        REINDEX nocase;
        PRAGMA aux.integrity_check;
        SELECT k FROM aux.c INDEXED BY cv WHERE v > 'a' ORDER BY k;
        SELECT k FROM aux.c INDEXED BY cvw WHERE v = 'd' AND w > 0 ORDER BY k;",
        Compare::default(),
    );
}

fn rows(out: Out) -> Vec<Vec<parlite::Value>> {
    match out {
        Out::Rows { rows, .. } => rows,
        Out::Err(e) => panic!("unexpected error: {e}"),
    }
}

/// `PRAGMA function_list`: for every function parlite lists, SQLite lists the same rows
/// (name, builtin, type, enc, narg, flags), except the math functions, which the oracle
/// build lacks; and every function SQLite lists that parlite resolves is listed.
#[test]
fn function_list_matches_sqlite() {
    let s = rusqlite::Connection::open_in_memory().expect("sqlite");
    let p = parlite::Connection::open(":memory:").expect("parlite");
    let q = "SELECT name, builtin, type, enc, narg, flags FROM pragma_function_list \
             WHERE builtin ORDER BY name, type, narg";
    let sq = rows(run_sqlite(&s, q));
    let pq = rows(run_parlite(&p, q));
    assert_eq!(
        rows(run_parlite(&p, "PRAGMA function_list")).len(),
        pq.len(),
        "PRAGMA and table-valued function agree"
    );
    let sqlite_names: Vec<&parlite::Value> = sq.iter().map(|r| &r[0]).collect();
    let parlite_names: Vec<&parlite::Value> = pq.iter().map(|r| &r[0]).collect();
    for r in &pq {
        // Functions the oracle build lacks (the math functions) are parlite's own.
        if sqlite_names.contains(&&r[0]) {
            assert!(sq.contains(r), "parlite lists {r:?}, SQLite does not");
        }
    }
    for r in &sq {
        if parlite_names.contains(&&r[0]) {
            assert!(pq.contains(r), "SQLite lists {r:?}, parlite does not");
        }
    }
    // The math functions: SQLite flags them deterministic (SQLITE_FUNC_CONSTANT).
    assert!(pq.contains(&vec![
        parlite::Value::Text("pi".into()),
        parlite::Value::Integer(1),
        parlite::Value::Text("s".into()),
        parlite::Value::Text("utf8".into()),
        parlite::Value::Integer(0),
        parlite::Value::Integer(2099200),
    ]));
}

#[test]
fn catalog_pragmas() {
    let s = rusqlite::Connection::open_in_memory().expect("sqlite");
    let p = parlite::Connection::open(":memory:").expect("parlite");
    // Every pragma parlite lists is one SQLite lists.
    let sq = rows(run_sqlite(&s, "PRAGMA pragma_list"));
    for r in rows(run_parlite(&p, "PRAGMA pragma_list")) {
        assert!(sq.contains(&r), "{r:?} is not a SQLite pragma");
    }
    // parlite's modules are SQLite's first two (the oracle also has FTS, R-Tree, dbstat).
    let modules = rows(run_parlite(&p, "PRAGMA module_list"));
    assert_eq!(
        modules,
        rows(run_sqlite(&s, "PRAGMA module_list"))[..2].to_vec()
    );
    for q in [
        "PRAGMA collation_list",
        "SELECT * FROM pragma_collation_list ORDER BY seq",
        "SELECT name FROM pragma_pragma_list WHERE name LIKE 'foreign%' ORDER BY 1",
    ] {
        assert_eq!(run_sqlite(&s, q), run_parlite(&p, q), "{q}");
    }
    // compile_options lists what sqlite_compileoption_get() numbers.
    let opts = rows(run_parlite(&p, "PRAGMA compile_options"));
    assert!(!opts.is_empty());
    for (i, o) in opts.iter().enumerate() {
        let got = rows(run_parlite(
            &p,
            &format!("SELECT sqlite_compileoption_get({i})"),
        ));
        assert_eq!(&got[0], o);
    }
    assert_eq!(
        rows(run_parlite(
            &p,
            "SELECT count(*) FROM pragma_compile_options"
        )),
        vec![vec![parlite::Value::Integer(opts.len() as i64)]]
    );
}
