//! The differential harness shared by the test files that compare parlite with SQLite
//! (rusqlite, bundled): run a statement in each engine, capture rows (with storage classes),
//! column names or the error message, and compare a whole script statement by statement.

#![allow(dead_code)] // each test crate uses the part it needs

use rusqlite::types::ValueRef;

#[derive(Debug, PartialEq)]
pub enum Out {
    Rows {
        names: Vec<String>,
        rows: Vec<Vec<parlite::Value>>,
    },
    Err(String),
}

pub fn run_sqlite(c: &rusqlite::Connection, sql: &str) -> Out {
    let mut st = match c.prepare(sql) {
        Ok(s) => s,
        Err(e) => return Out::Err(msg(e)),
    };
    let names: Vec<String> = st.column_names().iter().map(|s| s.to_string()).collect();
    let n = names.len();
    let mut rows = Vec::new();
    let mut r = st.raw_query();
    loop {
        match r.next() {
            Ok(Some(row)) => {
                let mut v = Vec::new();
                for i in 0..n {
                    v.push(sqlite_value(row.get_ref(i).expect("col")));
                }
                rows.push(v);
            }
            Ok(None) => break,
            Err(e) => return Out::Err(msg(e)),
        }
    }
    Out::Rows { names, rows }
}

/// A value SQLite returned, as parlite's `Value`.
pub fn sqlite_value(v: ValueRef<'_>) -> parlite::Value {
    match v {
        ValueRef::Null => parlite::Value::Null,
        ValueRef::Integer(i) => parlite::Value::Integer(i),
        ValueRef::Real(f) => parlite::Value::Real(f),
        ValueRef::Text(t) => parlite::Value::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => parlite::Value::Blob(b.to_vec()),
    }
}

pub fn msg(e: rusqlite::Error) -> String {
    match e {
        // Newer SQLite appends " in <sql> at offset N"; parlite reports the bare message.
        rusqlite::Error::SqlInputError { msg, .. } => msg,
        rusqlite::Error::SqliteFailure(_, Some(m)) => match m.find(" in ") {
            Some(i) if m.contains(" at offset ") => m[..i].to_string(),
            _ => m,
        },
        other => other.to_string(),
    }
}

pub fn run_parlite(c: &parlite::Connection, sql: &str) -> Out {
    let mut st = match c.prepare(sql) {
        Ok(Some((s, _))) => s,
        Ok(None) => {
            return Out::Rows {
                names: Vec::new(),
                rows: Vec::new(),
            }
        }
        Err(e) => return Out::Err(e.message),
    };
    let names: Vec<String> = (0..st.column_count())
        .map(|i| st.column_name(i).to_string())
        .collect();
    let mut rows = Vec::new();
    loop {
        match st.step() {
            Ok(true) => rows.push((0..names.len()).map(|i| st.column(i)).collect()),
            Ok(false) => break,
            Err(e) => return Out::Err(e.message),
        }
    }
    Out::Rows { names, rows }
}

/// How `check_script` compares two outcomes.
#[derive(Clone, Copy, Default)]
pub struct Compare {
    /// Rows of a statement without ORDER BY are compared as a multiset (their order depends
    /// on how each engine happens to scan, e.g. the NULL-extended rows of a RIGHT JOIN).
    pub unordered_without_order_by: bool,
    /// rusqlite reports the columns of the statement SQLite runs inside ALTER TABLE: ignore
    /// the names of an ALTER's outcome.
    pub ignore_alter_names: bool,
}

/// Runs a script (statements separated by lines ending in `;`) in both engines and compares
/// each statement's outcome.
pub fn check_script(script: &str, cmp: Compare) {
    let s = rusqlite::Connection::open_in_memory().expect("sqlite");
    let p = parlite::Connection::open(":memory:").expect("parlite");
    let mut rest = script;
    let mut failures = Vec::new();
    let mut count = 0;
    loop {
        let parsed = match parlite_sql::parse::parse_first(rest) {
            Ok(Some(p)) => p,
            Ok(None) => break,
            Err(e) => {
                failures.push(format!(
                    "parlite cannot parse the rest of the script: {e}\n{rest}"
                ));
                break;
            }
        };
        count += 1;
        let stmt = rest[..parsed.tail].trim();
        rest = &rest[parsed.tail..];
        let mut a = run_sqlite(&s, stmt);
        let mut b = run_parlite(&p, stmt);
        if cmp.ignore_alter_names && stmt.to_ascii_uppercase().starts_with("ALTER") {
            if let Out::Rows { names, .. } = &mut a {
                names.clear();
            }
        }
        if cmp.unordered_without_order_by && !stmt.to_ascii_uppercase().contains("ORDER BY") {
            for o in [&mut a, &mut b] {
                if let Out::Rows { rows, .. } = o {
                    rows.sort_by_key(|r| format!("{r:?}"));
                }
            }
        }
        if a != b {
            failures.push(format!("{stmt}\n  sqlite:  {a:?}\n  parlite: {b:?}"));
        }
    }
    assert!(count > 0, "empty script");
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// A fresh directory of its own under the system temp dir, removed with everything in it
/// (databases, logs, lock files) when this value is dropped, also when the test panics.
/// Derefs to the directory's path (canonical, so paths printed by SQL compare as text).
pub struct TempDir {
    path: std::path::PathBuf,
    _guard: tempfile::TempDir,
}

impl TempDir {
    pub fn new(prefix: &str) -> TempDir {
        let guard = tempfile::Builder::new()
            .prefix(&format!("parlite-{prefix}-"))
            .tempdir()
            .expect("temp dir");
        let path = guard.path().canonicalize().expect("canonical temp dir");
        TempDir {
            path,
            _guard: guard,
        }
    }
}

impl std::ops::Deref for TempDir {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.path
    }
}

impl AsRef<std::path::Path> for TempDir {
    fn as_ref(&self) -> &std::path::Path {
        &self.path
    }
}

/// A database path (`db.sqlite`) in a fresh [`TempDir`]; the directory goes when this value
/// is dropped. Derefs to the database's path.
pub struct TempDb {
    path: std::path::PathBuf,
    _dir: TempDir,
}

impl std::ops::Deref for TempDb {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.path
    }
}

impl AsRef<std::path::Path> for TempDb {
    fn as_ref(&self) -> &std::path::Path {
        &self.path
    }
}

/// A fresh database path for this test, named after `prefix` and `tag`.
pub fn temp_db_path(prefix: &str, tag: &str) -> TempDb {
    let dir = TempDir::new(&format!("{prefix}-{tag}"));
    TempDb {
        path: dir.join("db.sqlite"),
        _dir: dir,
    }
}

/// `sql` run by stock SQLite (rusqlite) on the file at `path`.
pub fn sqlite_rows(path: &std::path::Path, sql: &str) -> Out {
    let s = rusqlite::Connection::open(path).expect("open");
    run_sqlite(&s, sql)
}

/// What stock SQLite's `PRAGMA integrity_check` finds in the file at `path`; None for "ok".
pub fn stock_integrity_problem(path: &std::path::Path) -> Option<String> {
    match sqlite_rows(path, "PRAGMA integrity_check") {
        Out::Rows { rows, .. } if rows == vec![vec![parlite::Value::Text("ok".into())]] => None,
        other => Some(format!("stock SQLite on parlite's file: {other:?}")),
    }
}

/// Runs each statement in both engines, in order; the mismatches, each with both answers.
pub fn mismatches(
    s: &rusqlite::Connection,
    p: &parlite::Connection,
    stmts: &[String],
) -> Vec<String> {
    let mut failures = Vec::new();
    for sql in stmts {
        let (a, b) = (run_sqlite(s, sql), run_parlite(p, sql));
        if a != b {
            failures.push(format!("{sql}\n  sqlite:  {a:?}\n  parlite: {b:?}"));
        }
    }
    failures
}

/// `mismatches` of a seeded differential test, for each of `seeds()`: fresh in-memory
/// databases, `setup`'s statements, then `queries` statements from `query`; each
/// mismatch names its seed.
pub fn seeded_mismatches(
    setup: fn(&mut Rng) -> Vec<String>,
    query: fn(&mut Rng) -> String,
    queries: usize,
) -> Vec<String> {
    let mut failures = Vec::new();
    for seed in seeds() {
        let mut rng = Rng(seed);
        let s = rusqlite::Connection::open_in_memory().expect("sqlite");
        let p = parlite::Connection::open(":memory:").expect("parlite");
        let mut stmts = setup(&mut rng);
        for _ in 0..queries {
            stmts.push(query(&mut rng));
        }
        failures.extend(
            mismatches(&s, &p, &stmts)
                .into_iter()
                .map(|f| format!("seed {seed}: {f}")),
        );
    }
    failures
}

/// `mismatches` of a fixed list of statements, run in fresh in-memory databases.
pub fn statement_mismatches(stmts: &[&str]) -> Vec<String> {
    let s = rusqlite::Connection::open_in_memory().expect("sqlite");
    let p = parlite::Connection::open(":memory:").expect("parlite");
    let stmts: Vec<String> = stmts.iter().map(|s| s.to_string()).collect();
    mismatches(&s, &p, &stmts)
}

/// Fails, showing how many mismatches there were and the first 20, unless there are none.
pub fn assert_no_mismatches(failures: Vec<String>) {
    let shown: Vec<&str> = failures.iter().take(20).map(|s| s.as_str()).collect();
    assert!(
        failures.is_empty(),
        "{} mismatches, the first {}:\n{}",
        failures.len(),
        shown.len(),
        shown.join("\n")
    );
}

/// The seeds of a seeded differential test: `PARLITE_SEED` alone when set (to replay one),
/// else 1, 2 and 3.
pub fn seeds() -> Vec<u64> {
    match std::env::var("PARLITE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        Some(seed) => vec![seed],
        None => vec![1, 2, 3],
    }
}

/// Runs `setup` in both engines, then for each query compares the plan's wording and the
/// rows. Returns the mismatches.
pub fn compare_plans_and_rows<Q: AsRef<str>>(setup: &str, queries: &[Q]) -> Vec<String> {
    let s = rusqlite::Connection::open_in_memory().expect("sqlite");
    let p = parlite::Connection::open(":memory:").expect("parlite");
    s.execute_batch(setup).expect("sqlite setup");
    p.execute_batch(setup).expect("parlite setup");
    let mut failures = Vec::new();
    for q in queries {
        let q = q.as_ref();
        let eqp = format!("EXPLAIN QUERY PLAN {q}");
        let detail = |o: Out| -> Out {
            match o {
                Out::Rows { rows, .. } => Out::Rows {
                    names: Vec::new(),
                    rows: rows.into_iter().map(|mut r| vec![r.remove(3)]).collect(),
                },
                e => e,
            }
        };
        let (a, b) = (detail(run_sqlite(&s, &eqp)), detail(run_parlite(&p, &eqp)));
        if a != b {
            failures.push(format!("{eqp}\n  sqlite:  {a:?}\n  parlite: {b:?}"));
        }
        let (a, b) = (run_sqlite(&s, q), run_parlite(&p, q));
        if a != b {
            failures.push(format!("{q}\n  sqlite:  {a:?}\n  parlite: {b:?}"));
        }
    }
    failures
}

/// The rows of parlite's `PRAGMA integrity_check` on the database file at `path` ("ok", or
/// one line per problem; an error as `error: ...`).
pub fn integrity_check_rows(path: &std::path::Path) -> Vec<String> {
    let c = parlite::Connection::open(path.to_str().expect("utf8")).expect("open");
    match run_parlite(&c, "PRAGMA integrity_check") {
        Out::Rows { rows, .. } => rows
            .into_iter()
            .map(|r| match &r[0] {
                parlite::Value::Text(s) => s.clone(),
                other => format!("{other:?}"),
            })
            .collect(),
        Out::Err(e) => vec![format!("error: {e}")],
    }
}

/// An EXPLAIN QUERY PLAN result as one line per row (its detail), indented by its depth in
/// the id/parent tree.
pub fn eqp_tree(o: Out) -> Result<Vec<String>, String> {
    let rows = match o {
        Out::Rows { rows, .. } => rows,
        Out::Err(e) => return Err(e),
    };
    let mut depth: Vec<(i64, usize)> = Vec::new();
    let mut out = Vec::new();
    for r in rows {
        let (parlite::Value::Integer(id), parlite::Value::Integer(parent)) = (&r[0], &r[1]) else {
            return Err(format!("bad row {r:?}"));
        };
        let d = depth
            .iter()
            .rev()
            .find(|(i, _)| i == parent)
            .map(|(_, d)| d + 1)
            .unwrap_or(0);
        depth.push((*id, d));
        out.push(format!("{}{:?}", "  ".repeat(d), r[3]));
    }
    Ok(out)
}

/// A small deterministic generator (SplitMix64) for seeded tests, so a failing seed replays
/// exactly. Test files add the draws they need in their own `impl common::Rng` blocks.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// Text of exactly `n` bytes over an alphabet with a two-byte character.
    pub fn text_of(&mut self, n: usize) -> String {
        let mut s = String::new();
        while s.len() < n {
            match (self.below(5), n - s.len()) {
                (0, 2..) => s.push('é'),
                (k, _) => s.push(char::from(b"ab01"[k as usize % 4])),
            }
        }
        s
    }
}

/// The one statement `sql` prepares to, for tests that reuse prepared statements.
pub fn prepare_one(c: &parlite::Connection, sql: &str) -> parlite::Statement {
    c.prepare(sql).expect("prepare").expect("one statement").0
}

/// Binds `binds` to a prepared parlite statement, steps it to the end and resets it: every
/// row.
pub fn rows_of(st: &mut parlite::Statement, binds: &[parlite::Value]) -> Vec<Vec<parlite::Value>> {
    for (i, v) in binds.iter().enumerate() {
        st.bind(i + 1, v.clone()).expect("bind");
    }
    let mut out = Vec::new();
    while st.step().expect("step") {
        out.push((0..st.column_count()).map(|i| st.column(i)).collect());
    }
    st.reset();
    out
}

/// Every row of `st` for a first parameter `bind`, read borrowed (`column_ref`) or copied
/// (`column`); the statement is reset after.
pub fn rows_read(
    st: &mut parlite::Statement,
    bind: &parlite::Value,
    borrowed: bool,
) -> Vec<Vec<parlite::Value>> {
    use parlite::{Value, ValueRef};
    st.bind(1, bind.clone()).expect("bind");
    let mut out = Vec::new();
    while st.step().expect("step") {
        let row = (0..st.column_count())
            .map(|i| match borrowed {
                false => st.column(i),
                true => match st.column_ref(i).expect("column_ref") {
                    ValueRef::Null => Value::Null,
                    ValueRef::Integer(n) => Value::Integer(n),
                    ValueRef::Real(f) => Value::Real(f),
                    ValueRef::Text(s) => Value::Text(s.to_string()),
                    ValueRef::Blob(b) => Value::Blob(b.to_vec()),
                },
            })
            .collect();
        out.push(row);
    }
    st.reset();
    out
}

/// `rows_of` for a prepared SQLite statement.
pub fn sqlite_rows_of(
    st: &mut rusqlite::Statement,
    binds: &[parlite::Value],
) -> Vec<Vec<parlite::Value>> {
    use parlite::Value;
    for (i, v) in binds.iter().enumerate() {
        let r = match v {
            Value::Null => st.raw_bind_parameter(i + 1, rusqlite::types::Null),
            Value::Integer(n) => st.raw_bind_parameter(i + 1, n),
            Value::Real(f) => st.raw_bind_parameter(i + 1, f),
            Value::Text(s) => st.raw_bind_parameter(i + 1, s.as_str()),
            Value::Blob(b) => st.raw_bind_parameter(i + 1, b.as_slice()),
        };
        r.expect("sqlite bind");
    }
    let mut out = Vec::new();
    let mut rows = st.raw_query();
    while let Some(r) = rows.next().expect("sqlite step") {
        // Counted per row: SQLite re-prepares inside the first step after another
        // connection's schema change, and `SELECT *` may then have more columns.
        let n = r.as_ref().column_count();
        out.push(
            (0..n)
                .map(|i| sqlite_value(r.get_ref(i).expect("col")))
                .collect(),
        );
    }
    out
}

/// Swaps the root pages of two indexes in SQLite's schema (writable_schema), so each
/// index's name points at the other's entries: a damaged file for `integrity_check` tests.
pub fn swap_index_roots(s: &rusqlite::Connection, a: &str, b: &str) {
    let root = |name: &str| -> i64 {
        s.query_row(
            "SELECT rootpage FROM sqlite_schema WHERE name = ?1",
            [name],
            |r| r.get(0),
        )
        .expect("root")
    };
    let (ra, rb) = (root(a), root(b));
    s.execute_batch(&format!(
        "PRAGMA writable_schema = ON;
         UPDATE sqlite_schema SET rootpage = {rb} WHERE name = '{a}';
         UPDATE sqlite_schema SET rootpage = {ra} WHERE name = '{b}';
         PRAGMA writable_schema = OFF;"
    ))
    .expect("swap");
}

/// Both engines, two connections each on one database: `p1`/`s1` run the statements
/// under test, `p2`/`s2` commit beside them.
pub struct Pair {
    pub p1: parlite::Connection,
    pub p2: parlite::Connection,
    pub s1: rusqlite::Connection,
    pub s2: rusqlite::Connection,
    /// The two database files, removed when the pair is dropped.
    _files: (TempDb, TempDb),
}

impl Pair {
    /// Both engines on fresh database files named after `prefix`.
    pub fn on_files(prefix: &str) -> Pair {
        let (pdb, sdb) = (
            temp_db_path(prefix, "parlite"),
            temp_db_path(prefix, "sqlite"),
        );
        let db = parlite::Database::open(pdb.to_str().expect("path")).expect("parlite open");
        Pair {
            p1: db.connect().expect("parlite connect"),
            p2: db.connect().expect("parlite connect"),
            s1: rusqlite::Connection::open(&*sdb).expect("sqlite open"),
            s2: rusqlite::Connection::open(&*sdb).expect("sqlite open"),
            _files: (pdb, sdb),
        }
    }

    /// `sql` on the first connections (the one whose statements are reused).
    pub fn own(&self, sql: &str) {
        self.p1.execute_batch(sql).expect("parlite own");
        self.s1.execute_batch(sql).expect("sqlite own");
    }

    /// `sql` on the second connections (another connection's commit).
    pub fn other(&self, sql: &str) {
        self.p2.execute_batch(sql).expect("parlite other");
        self.s2.execute_batch(sql).expect("sqlite other");
    }
}

/// A scalar function that returns its first argument and counts its calls.
struct CallCounter(std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl parlite::UserScalar for CallCounter {
    fn call(
        &self,
        args: &[parlite_sql::value::Value],
    ) -> parlite_sql::value::Result<parlite_sql::value::Value> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(args[0].clone())
    }
}

/// Defines `name(x)` on `c`: x, counting its calls in the returned counter.
pub fn define_call_counter(
    c: &parlite::Connection,
    name: &str,
) -> std::sync::Arc<std::sync::atomic::AtomicUsize> {
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    c.create_function(
        name,
        Some(1),
        false,
        Some(parlite::UserImpl::Scalar(std::sync::Arc::new(CallCounter(
            calls.clone(),
        )))),
    )
    .expect("define the counting function");
    calls
}
