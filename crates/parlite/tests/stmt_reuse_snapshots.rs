//! What a reused prepared SELECT keeps between executions, against SQLite (rusqlite,
//! bundled): the connection's autocommit read transaction, renewed per statement
//! (storage `Txn::renew_read`, T6), the file read views' recycled page memos
//! (pager/read_memo.rs), and a WITHOUT ROWID table's record layout kept with the table
//! (`WrLayout::shared`). A seeded script mixes, between executions of the same statements,
//! writes by another connection and by the statement's own, a rolled-back transaction,
//! ALTER TABLE ADD COLUMN and DROP/CREATE of a WITHOUT ROWID table under the same name
//! with its columns and key in another order, and an attached database; both engines run
//! the same SQL on files of their own and every result must match. A second test has a
//! writer thread commit while a reader re-executes: each execution must see every commit
//! acknowledged before it began (a fresh snapshot, never the renewed transaction's last).

mod common;

use common::{prepare_one, rows_of, sqlite_rows_of};
use parlite::{Database, Statement, Value};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

/// A small deterministic generator (xorshift), so that a failure replays from its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn key(i: u64) -> String {
    format!("k{:03}-{}", i, "x".repeat((i % 13) as usize))
}

const QUERIES: [&str; 4] = [
    "SELECT value FROM kv WHERE key=?",
    "SELECT * FROM wr WHERE a=?",
    "SELECT b FROM wr WHERE a=?",
    "SELECT kv.value, aux.side.n FROM kv, aux.side WHERE kv.key=? AND aux.side.k=kv.key",
];

/// One change between executions, as SQL both engines run (`own`: on the querying
/// connection, else on the other one).
fn change(rng: &mut Rng, step: usize) -> (bool, String) {
    let k = key(rng.below(40));
    let v = rng.below(1000);
    let own = rng.below(3) == 0;
    let sql = match rng.below(12) {
        0..=2 => format!("INSERT OR REPLACE INTO kv VALUES('{k}', 'v{v}')"),
        3 => format!("DELETE FROM kv WHERE key='{k}'"),
        4..=5 => format!("INSERT OR REPLACE INTO wr(a, b) VALUES('{k}', {v})"),
        6 => format!("DELETE FROM wr WHERE a='{k}'"),
        7 => format!("INSERT OR REPLACE INTO aux.side VALUES('{k}', {v})"),
        8 => format!("BEGIN; UPDATE kv SET value='gone' WHERE key='{k}'; ROLLBACK"),
        9 => format!("ALTER TABLE wr ADD COLUMN c{step} DEFAULT {v}"),
        // The same name, the key and the other columns in another order: the layout of
        // the table the statement was prepared on no longer describes the records.
        10 => format!(
            "DROP TABLE wr; CREATE TABLE wr(b INT, z TEXT DEFAULT 'z{v}', a TEXT, \
             PRIMARY KEY(a DESC)) WITHOUT ROWID; \
             INSERT INTO wr(a, b) SELECT key, length(value) FROM kv"
        ),
        _ => format!(
            "DROP TABLE wr; CREATE TABLE wr(a TEXT PRIMARY KEY, b INT) WITHOUT ROWID; \
             INSERT INTO wr SELECT key, {v} FROM kv"
        ),
    };
    (own, sql)
}

#[test]
fn reused_selects_across_commits_and_schema_changes_match_sqlite() {
    for seed in [1u64, 7, 42] {
        let pdir = common::TempDir::new(&format!("stmt-reuse-p{seed}"));
        let sdir = common::TempDir::new(&format!("stmt-reuse-s{seed}"));
        let setup = |dir: &std::path::Path| {
            format!(
                "PRAGMA journal_mode=WAL;
                 CREATE TABLE kv(key TEXT PRIMARY KEY, value TEXT);
                 CREATE TABLE wr(a TEXT PRIMARY KEY, b INT) WITHOUT ROWID;
                 ATTACH '{}' AS aux;
                 CREATE TABLE aux.side(k TEXT PRIMARY KEY, n INT);",
                dir.join("aux.db").display()
            )
        };
        let attach =
            |dir: &std::path::Path| format!("ATTACH '{}' AS aux", dir.join("aux.db").display());
        let db = Database::open(pdir.join("main.db").to_str().unwrap()).unwrap();
        let p1 = db.connect().unwrap();
        let p2 = db.connect().unwrap();
        p1.execute_batch(&setup(&pdir)).unwrap();
        p2.execute_batch(&attach(&pdir)).unwrap();
        let s1 = rusqlite::Connection::open(sdir.join("main.db")).unwrap();
        let s2 = rusqlite::Connection::open(sdir.join("main.db")).unwrap();
        s1.execute_batch(&setup(&sdir)).unwrap();
        s2.execute_batch(&attach(&sdir)).unwrap();

        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let mut pst: Vec<Statement> = QUERIES.iter().map(|q| prepare_one(&p1, q)).collect();
        for step in 0..300 {
            let (own, sql) = change(&mut rng, step);
            let (p, s) = if own { (&p1, &s1) } else { (&p2, &s2) };
            let pr = p.execute_batch(&sql).map_err(|e| e.to_string());
            let sr = s.execute_batch(&sql).map_err(|e| e.to_string());
            assert_eq!(
                pr.is_ok(),
                sr.is_ok(),
                "seed {seed} step {step}: {sql}: {pr:?} {sr:?}"
            );
            for _ in 0..3 {
                let q = rng.below(QUERIES.len() as u64) as usize;
                let k = Value::Text(key(rng.below(40)));
                // rusqlite prepares per execution (its statements borrow the connection);
                // SQLite re-prepares a statement whose schema changed, as parlite rebinds.
                let mut sst = s1.prepare(QUERIES[q]).unwrap();
                let want = sqlite_rows_of(&mut sst, std::slice::from_ref(&k));
                let got = rows_of(&mut pst[q], std::slice::from_ref(&k));
                assert_eq!(
                    got, want,
                    "seed {seed} step {step}: {} with {k:?} after {sql}",
                    QUERIES[q]
                );
            }
        }
    }
}

#[test]
fn each_execution_sees_every_commit_acknowledged_before_it() {
    let dir = common::TempDir::new("stmt-reuse-fresh");
    let db = Database::open(dir.join("db.sqlite").to_str().unwrap()).unwrap();
    let reader = db.connect().unwrap();
    reader
        .execute_batch(
            "CREATE TABLE c(id INTEGER PRIMARY KEY, n INTEGER);
             CREATE TABLE w(k TEXT PRIMARY KEY, n INTEGER) WITHOUT ROWID;
             INSERT INTO c VALUES(1, 0); INSERT INTO w VALUES('n', 0);",
        )
        .unwrap();
    let acked = Arc::new(AtomicI64::new(0));
    const COMMITS: i64 = 400;
    let writer = {
        let acked = acked.clone();
        let w = db.connect().unwrap();
        std::thread::spawn(move || {
            let mut up = prepare_one(&w, "UPDATE c SET n=? WHERE id=1");
            let mut upw = prepare_one(&w, "UPDATE w SET n=? WHERE k='n'");
            for n in 1..=COMMITS {
                rows_of(&mut up, &[Value::Integer(n)]);
                rows_of(&mut upw, &[Value::Integer(n)]);
                acked.store(n, Ordering::SeqCst);
            }
        })
    };
    let mut sel = prepare_one(&reader, "SELECT n FROM c WHERE id=1");
    let mut selw = prepare_one(&reader, "SELECT n FROM w WHERE k='n'");
    let mut last = [0, 0];
    loop {
        let before = acked.load(Ordering::SeqCst);
        for (st, last) in [&mut sel, &mut selw].into_iter().zip(&mut last) {
            let rows = rows_of(st, &[]);
            let Value::Integer(n) = rows[0][0] else {
                panic!("{rows:?}")
            };
            assert!(
                n >= before,
                "an execution missed commit {before} (read {n})"
            );
            assert!(n >= *last, "went back from {last} to {n}");
            *last = n;
        }
        if before == COMMITS {
            break;
        }
    }
    writer.join().unwrap();
}
