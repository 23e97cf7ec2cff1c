//! `Connection::create_collation`: the application's collating sequences
//! (parlite_sql::collation::user) against SQLite (rusqlite) with the same definitions, over
//! seeded rows: ORDER BY, GROUP BY, DISTINCT, comparisons, min/max, window partitions,
//! compounds, joins and index scans under a reversing (`rev`) and a case-folding (`fold`)
//! collation, columns and indexes declared with them, a UNIQUE index that calls texts
//! differing in case duplicates, redefinition and deletion under prepared statements,
//! `PRAGMA collation_list`, and a database reopened by a connection that lacks the
//! collation its index needs (`no such collation sequence`, never a wrong answer).
//!
//! `PARLITE_SEED=n` replays one seed.

mod common;

use common::{run_parlite, run_sqlite, Out, Rng};
use std::cmp::Ordering;

fn rev(a: &str, b: &str) -> Ordering {
    b.cmp(a)
}

/// Case-insensitive over all of Unicode's simple lower-casing, then bytes: a total order.
fn fold(a: &str, b: &str) -> Ordering {
    a.to_lowercase().cmp(&b.to_lowercase())
}

fn define_both(p: &parlite::Connection, s: &rusqlite::Connection) {
    p.create_collation("rev", rev).expect("parlite rev");
    p.create_collation("Fold", fold).expect("parlite fold");
    s.create_collation("rev", rev).expect("sqlite rev");
    s.create_collation("Fold", fold).expect("sqlite fold");
}

fn word(rng: &mut Rng) -> String {
    const PARTS: &[&str] = &[
        "a", "B", "ab", "AB", "Ab", "b", "é", "É", "x", "Y", "zz", " ",
    ];
    let n = 1 + rng.below(3);
    (0..n)
        .map(|_| PARTS[rng.below(PARTS.len() as u64) as usize])
        .collect()
}

fn setup(rng: &mut Rng) -> Vec<String> {
    let mut out = vec![
        "CREATE TABLE t(id INTEGER PRIMARY KEY, a TEXT, b TEXT COLLATE rev, c TEXT COLLATE fold, n)"
            .to_string(),
        "CREATE INDEX tb ON t(b)".to_string(),
        "CREATE INDEX tc ON t(c, n)".to_string(),
        "CREATE INDEX ta ON t(a COLLATE rev DESC)".to_string(),
        "CREATE TABLE s(k TEXT COLLATE fold PRIMARY KEY, v) WITHOUT ROWID".to_string(),
    ];
    for i in 0..120 {
        let v = |rng: &mut Rng| match rng.below(9) {
            0 => "NULL".to_string(),
            1 => rng.below(5).to_string(),
            _ => format!("'{}'", word(rng)),
        };
        let (a, b, c) = (v(rng), v(rng), v(rng));
        out.push(format!(
            "INSERT INTO t VALUES({i}, {a}, {b}, {c}, {})",
            rng.below(4)
        ));
        out.push(format!("INSERT OR IGNORE INTO s VALUES({c}, {i})"));
    }
    out
}

const QUERIES: &[&str] = &[
    "SELECT id, a FROM t ORDER BY a COLLATE rev, id",
    "SELECT id, b FROM t ORDER BY b, id",
    "SELECT id, b FROM t ORDER BY b DESC, id",
    "SELECT id, c FROM t ORDER BY c, id",
    "SELECT id, c FROM t ORDER BY c COLLATE binary, id",
    "SELECT id, a FROM t ORDER BY a COLLATE fold DESC, id LIMIT 7",
    "SELECT lower(c), count(*), min(id) FROM t GROUP BY c ORDER BY 3",
    "SELECT count(*), min(id) FROM t GROUP BY a COLLATE fold ORDER BY 2",
    "SELECT count(DISTINCT c), count(DISTINCT a COLLATE fold), count(DISTINCT b) FROM t",
    "SELECT DISTINCT lower(c) FROM (SELECT DISTINCT c FROM t) ORDER BY 1",
    "SELECT id FROM t WHERE b > 'b' ORDER BY id",
    "SELECT id FROM t WHERE b BETWEEN 'a' AND 'x' ORDER BY id",
    "SELECT b FROM t WHERE b < 'ab' ORDER BY b",
    "SELECT id FROM t WHERE c = 'AB' ORDER BY id",
    "SELECT id, c FROM t WHERE c >= 'ab' AND c < 'b' ORDER BY c, id",
    "SELECT id FROM t WHERE c IN ('A', 'É', 'zZ') ORDER BY id",
    "SELECT id FROM t WHERE a = 'AB' COLLATE fold ORDER BY id",
    "SELECT id FROM t WHERE a COLLATE rev > 'b' ORDER BY id",
    "SELECT id FROM t WHERE 'ab' = a COLLATE fold ORDER BY id",
    "SELECT id, a = c, c = a, a < b, b < a FROM t ORDER BY id",
    "SELECT min(b), max(b), min(c), max(c), min(a COLLATE rev), max(a COLLATE fold) FROM t",
    "SELECT max(c), n FROM t GROUP BY n ORDER BY n",
    "SELECT id, count(*) OVER (PARTITION BY c), row_number() OVER (ORDER BY b, id) FROM t ORDER BY id",
    "SELECT id, max(a) OVER (PARTITION BY n ORDER BY c, id) FROM t ORDER BY id",
    "SELECT b FROM t UNION SELECT c FROM t ORDER BY 1",
    "SELECT c FROM t INTERSECT SELECT a FROM t ORDER BY 1",
    "SELECT x.id, y.id FROM t x JOIN t y ON x.c = y.a WHERE x.id < 30 ORDER BY 1, 2",
    "SELECT x.id, y.id FROM t x JOIN t y ON y.c = x.a WHERE x.id < 30 ORDER BY 1, 2",
    "SELECT k, v FROM s ORDER BY k",
    "SELECT v FROM s WHERE k = 'ab' COLLATE binary",
    "SELECT v FROM s WHERE k = 'AB'",
    "SELECT v FROM s WHERE k > 'b' ORDER BY k DESC",
    "SELECT b FROM t INDEXED BY tb WHERE b > 'a' ORDER BY b",
    "SELECT c, n FROM t INDEXED BY tc WHERE c = 'ab' AND n > 0 ORDER BY c, n",
    "SELECT a FROM t INDEXED BY ta WHERE a COLLATE rev < 'b' ORDER BY a COLLATE rev DESC",
    "SELECT 'a' < 'b' COLLATE rev, 'A' = 'a' COLLATE fold, 'x' COLLATE rev < 'y' COLLATE fold",
    "SELECT CASE WHEN c = 'ab' THEN 1 END, c FROM t ORDER BY id LIMIT 20",
    "SELECT id FROM t ORDER BY a COLLATE nope",
    "PRAGMA integrity_check",
    "PRAGMA index_xinfo('tb')",
    "PRAGMA index_xinfo('ta')",
];

fn differences(p: &parlite::Connection, s: &rusqlite::Connection, sql: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for q in sql {
        let (pr, sr) = (run_parlite(p, q), run_sqlite(s, q));
        if pr != sr {
            out.push(format!("{q}\n  parlite: {pr:?}\n  sqlite:  {sr:?}"));
        }
    }
    out
}

#[test]
fn queries_under_app_collations_match_sqlite() {
    let mut failures = Vec::new();
    for seed in common::seeds() {
        let p = parlite::Connection::open(":memory:").expect("parlite");
        let s = rusqlite::Connection::open_in_memory().expect("sqlite");
        define_both(&p, &s);
        let mut rng = Rng(seed);
        for stmt in setup(&mut rng) {
            p.execute_batch(&stmt).expect("parlite setup");
            s.execute_batch(&stmt).expect("sqlite setup");
        }
        for f in differences(&p, &s, QUERIES) {
            failures.push(format!("seed {seed}: {f}"));
        }
    }
    common::assert_no_mismatches(failures);
}

/// UNIQUE under a collation: texts it calls equal are duplicates, in both a table's UNIQUE
/// column and a WITHOUT ROWID primary key; REPLACE and upserts find the conflicting row by
/// the collation.
#[test]
fn unique_under_app_collation_matches_sqlite() {
    let p = parlite::Connection::open(":memory:").expect("parlite");
    let s = rusqlite::Connection::open_in_memory().expect("sqlite");
    define_both(&p, &s);
    let script = [
        "CREATE TABLE u(x TEXT COLLATE fold UNIQUE, y)",
        "INSERT INTO u VALUES('abc', 1)",
        "INSERT INTO u VALUES('ABC', 2)",
        "INSERT INTO u VALUES('abd', 3)",
        "INSERT OR REPLACE INTO u VALUES('aBc', 4)",
        "INSERT INTO u VALUES('ABD', 5) ON CONFLICT(x) DO UPDATE SET y = 50",
        "SELECT x, y FROM u ORDER BY y",
        "CREATE TABLE w(x TEXT PRIMARY KEY COLLATE fold, y) WITHOUT ROWID",
        "INSERT INTO w VALUES('É', 1)",
        "INSERT INTO w VALUES('é', 2)",
        "SELECT x, y FROM w",
        "CREATE UNIQUE INDEX ur ON u(y, x COLLATE rev)",
        "CREATE TABLE v(x)",
        "INSERT INTO v VALUES('q'), ('Q')",
        "CREATE UNIQUE INDEX vf ON v(x COLLATE fold)",
        "CREATE UNIQUE INDEX vr ON v(x COLLATE rev)",
        "INSERT INTO v VALUES('q')",
        "SELECT x FROM v ORDER BY x COLLATE fold, x",
    ];
    common::assert_no_mismatches(differences(&p, &s, &script));
}

/// A statement prepared before the collation is redefined runs with the new definition,
/// and after it is deleted fails as SQLite's does: nothing stale.
#[test]
fn redefinition_and_deletion_reach_prepared_statements() {
    let p = parlite::Connection::open(":memory:").expect("parlite");
    p.create_collation("c", rev).expect("define");
    p.execute_batch(
        "CREATE TABLE t(x TEXT COLLATE c); INSERT INTO t VALUES('a'), ('c'), ('b');
         CREATE TABLE u(x TEXT COLLATE c); CREATE INDEX ux ON u(x); INSERT INTO u SELECT x FROM t;",
    )
    .expect("setup");
    // Ordered by the index: no comparison runs, yet once the collation is deleted the
    // plan must not stand (SQLite expires it).
    let mut by_index = common::prepare_one(&p, "SELECT x FROM u ORDER BY x");
    let mut st = common::prepare_one(&p, "SELECT x FROM t ORDER BY x");
    let text = |rows: Vec<Vec<parlite::Value>>| -> String {
        rows.iter()
            .map(|r| match &r[0] {
                parlite::Value::Text(t) => t.clone(),
                v => format!("{v:?}"),
            })
            .collect()
    };
    assert_eq!(text(common::rows_of(&mut st, &[])), "cba");
    assert_eq!(text(common::rows_of(&mut by_index, &[])), "cba");
    p.create_collation("C", |a: &str, b: &str| a.cmp(b))
        .expect("redefine");
    assert_eq!(text(common::rows_of(&mut st, &[])), "abc");
    p.remove_collation("c").expect("remove");
    // The plan ordered by the index first: a failed statement would expire it anyway.
    let err = by_index.step().expect_err("deleted collation");
    assert_eq!(err.message, "no such collation sequence: c");
    let err = st.step().expect_err("deleted collation");
    assert_eq!(err.message, "no such collation sequence: c");
    // Taking over a built-in: NOCASE orders by the application's, and once deleted is gone.
    p.create_collation("NOCASE", rev).expect("nocase");
    assert_eq!(
        run_parlite(&p, "SELECT x FROM t ORDER BY x COLLATE nocase"),
        run_parlite(&p, "SELECT x FROM t ORDER BY x COLLATE binary DESC")
    );
    p.remove_collation("nocase").expect("remove nocase");
    assert_eq!(
        run_parlite(&p, "SELECT 'a' = 'A' COLLATE NOCASE"),
        Out::Err("no such collation sequence: NOCASE".to_string())
    );
}

/// `PRAGMA collation_list`, and the deletions SQLite keeps listing. Its order is SQLite's
/// hash order, which differs between versions (3.40 lists the most recently defined first,
/// then RTRIM, NOCASE, BINARY, as parlite does; 3.50 interleaves them): compared as sets.
#[test]
fn collation_list_matches_sqlite() {
    let p = parlite::Connection::open(":memory:").expect("parlite");
    let s = rusqlite::Connection::open_in_memory().expect("sqlite");
    define_both(&p, &s);
    p.create_collation("zz", rev).expect("zz");
    s.create_collation("zz", rev).expect("zz");
    p.remove_collation("zz").expect("zz");
    s.remove_collation("zz").expect("zz");
    let names = |o: Out| match o {
        Out::Rows { rows, .. } => {
            let mut n: Vec<String> = rows.iter().map(|r| format!("{:?}", r[1])).collect();
            n.sort();
            n
        }
        Out::Err(e) => vec![e],
    };
    let q = "PRAGMA collation_list";
    assert_eq!(names(run_parlite(&p, q)), names(run_sqlite(&s, q)));
    assert_eq!(
        run_parlite(
            &p,
            "SELECT group_concat(name, ' ') FROM pragma_collation_list"
        ),
        Out::Rows {
            names: vec!["group_concat(name, ' ')".to_string()],
            rows: vec![vec![parlite::Value::Text(
                "zz Fold rev RTRIM NOCASE BINARY".to_string()
            )]],
        }
    );
}

/// A database whose index was built under `rev`, reopened by connections without it: the
/// statements that need the collation fail with SQLite's error, the others run; once the
/// collation is defined again everything runs and the index is intact.
#[test]
fn index_reopened_without_its_collation() {
    let pdb = common::temp_db_path("app-coll", "parlite");
    let sdb = common::temp_db_path("app-coll", "sqlite");
    let setup = "CREATE TABLE t(x TEXT COLLATE rev, y);
        CREATE INDEX tx ON t(x);
        CREATE TABLE plain(z);
        INSERT INTO t VALUES('a', 1), ('b', 2), ('c', 3);";
    {
        let p = parlite::Connection::open(pdb.to_str().expect("path")).expect("parlite");
        let s = rusqlite::Connection::open(&*sdb).expect("sqlite");
        define_both(&p, &s);
        p.execute_batch(setup).expect("parlite setup");
        s.execute_batch(setup).expect("sqlite setup");
    }
    let p = parlite::Connection::open(pdb.to_str().expect("path")).expect("parlite reopen");
    let s = rusqlite::Connection::open(&*sdb).expect("sqlite reopen");
    let without = [
        "SELECT y FROM t",
        "SELECT x FROM t WHERE x > 'a'",
        "SELECT x FROM t ORDER BY x",
        "SELECT max(x) FROM t",
        "INSERT INTO t VALUES('d', 4)",
        "UPDATE t SET x = 'e' WHERE y = 1",
        "INSERT INTO plain VALUES(1)",
        "SELECT z FROM plain",
        "CREATE TABLE t2(x COLLATE rev)",
        "CREATE INDEX ty ON t(y COLLATE rev)",
        "SELECT y FROM t ORDER BY y",
    ];
    common::assert_no_mismatches(differences(&p, &s, &without));
    define_both(&p, &s);
    let with = [
        "SELECT x FROM t WHERE x > 'a' ORDER BY x",
        "INSERT INTO t VALUES('d', 4)",
        "SELECT x, y FROM t ORDER BY x",
        "SELECT x FROM t WHERE x < 'c'",
        "PRAGMA integrity_check",
    ];
    common::assert_no_mismatches(differences(&p, &s, &with));
}

/// `set_collation_needed`: asked for a name the connection lacks, once per statement that
/// needs it, and a definition it makes is used at once.
#[test]
fn collation_needed_hook_defines_on_demand() {
    use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};
    use std::sync::{Arc, Mutex, Weak};
    let p = Arc::new(parlite::Connection::open(":memory:").expect("parlite"));
    let asked = Arc::new(AtomicUsize::new(0));
    let names = Arc::new(Mutex::new(Vec::<String>::new()));
    let (weak, a, n): (Weak<parlite::Connection>, _, _) =
        (Arc::downgrade(&p), asked.clone(), names.clone());
    p.set_collation_needed(Some(Arc::new(move |name: &str| {
        a.fetch_add(1, AtomicOrdering::SeqCst);
        n.lock().expect("names").push(name.to_string());
        if name.eq_ignore_ascii_case("rev") {
            if let Some(c) = weak.upgrade() {
                c.create_collation(name, rev).expect("define from hook");
            }
        }
    })));
    assert_eq!(
        run_parlite(&p, "SELECT 'a' < 'b' COLLATE nope"),
        Out::Err("no such collation sequence: nope".to_string())
    );
    assert_eq!(
        run_parlite(&p, "SELECT 'a' < 'b' COLLATE REV"),
        Out::Rows {
            names: vec!["'a' < 'b' COLLATE REV".to_string()],
            rows: vec![vec![parlite::Value::Integer(0)]],
        }
    );
    assert_eq!(*names.lock().expect("names"), ["nope", "REV"]);
    run_parlite(&p, "SELECT 'a' < 'b' COLLATE rev");
    assert_eq!(
        asked.load(AtomicOrdering::SeqCst),
        2,
        "a defined name asks no more"
    );
}

/// A comparison that redefines its own collation gets SQLite's SQLITE_BUSY refusal
/// instead of waiting forever on the definition it runs.
#[test]
fn redefining_from_inside_a_comparison_is_refused() {
    use std::sync::{Arc, Mutex, Weak};
    let p = Arc::new(parlite::Connection::open(":memory:").expect("parlite"));
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let (weak, s): (Weak<parlite::Connection>, _) = (Arc::downgrade(&p), seen.clone());
    p.create_collation("selfish", move |a: &str, b: &str| {
        if let Some(c) = weak.upgrade() {
            let r = c.create_collation("selfish", rev);
            s.lock()
                .expect("seen")
                .push(r.map_or_else(|e| format!("{} {}", e.code, e.message), |_| "ok".into()));
        }
        a.cmp(b)
    })
    .expect("define");
    assert_eq!(
        run_parlite(&p, "SELECT 'a' < 'b' COLLATE selfish"),
        Out::Rows {
            names: vec!["'a' < 'b' COLLATE selfish".to_string()],
            rows: vec![vec![parlite::Value::Integer(1)]],
        }
    );
    assert_eq!(
        *seen.lock().expect("seen"),
        ["5 unable to delete/modify collation sequence due to active statements"]
    );
}
