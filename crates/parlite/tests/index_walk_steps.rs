//! Index walks whose steps stay in a leaf read the next key from the cursor's frame
//! (`TreeCursor::step_in_leaf`) only while the transaction's tree is unchanged since the
//! cursor was positioned, whose seeks order a TEXT probe by a search compiled for it
//! (`TreeCursor::descend_index`), and whose entries' rowids are read by their width
//! (`record::int_field`). Against SQLite (rusqlite, bundled), seeded (`PARLITE_SEED`
//! replays one seed), on 512-byte pages so that walks cross many leaves: hc_mixed's scan
//! over an expression index; forward and backward walks over a TEXT index with and
//! without a far bound, covering and with table lookups, over keys short and long enough
//! for two-byte serial types (their rowids read the checked way); a composite index whose
//! probes are TEXT prefixes (a tie on the first field decided by the rest); all reused
//! between the connection's own writes (inside and outside a transaction, among them
//! statements that walk the index they write), another connection's commits and
//! rollbacks. A damaged index leaf makes the walk that steps onto it fail with
//! SQLITE_CORRUPT, never panic or skip the entry.

mod common;

use common::{prepare_one, sqlite_rows_of, temp_db_path, Pair, Rng};
use parlite::Value;

const SETUP: &str = "
    PRAGMA page_size=512;
    CREATE TABLE t(a INTEGER PRIMARY KEY, b BLOB, c TEXT, d TEXT);
    CREATE INDEX t_c6 ON t(substr(c,1,6));
    CREATE INDEX t_c ON t(c);
    CREATE INDEX t_dc ON t(d, c);
";

/// The reused statements; every row order is defined by the walk (ties in index order
/// are broken by rowid in both engines). ?1 and ?2 are texts.
const QUERIES: &[&str] = &[
    "SELECT * FROM t WHERE substr(c,1,6)>=?1 ORDER BY substr(c,1,6) LIMIT 10",
    "SELECT a, c FROM t WHERE c >= ?1 ORDER BY c LIMIT 30",
    "SELECT * FROM t WHERE c >= ?1 ORDER BY c LIMIT 12",
    "SELECT * FROM t WHERE c < ?1 ORDER BY c DESC LIMIT 12",
    "SELECT a, c FROM t WHERE c < ?1 ORDER BY c DESC LIMIT 30",
    "SELECT a, c FROM t WHERE c > ?1 AND c <= ?2 ORDER BY c",
    "SELECT count(*), min(a), max(a) FROM t WHERE c BETWEEN ?1 AND ?2",
    "SELECT a, d, c FROM t WHERE d = substr(?1,1,2) AND c >= ?2 ORDER BY d, c LIMIT 20",
    "SELECT a, d FROM t WHERE d >= ?1 ORDER BY d, c, a LIMIT 25",
];

impl Rng {
    /// A TEXT key over a small alphabet (neighbours share prefixes), 1-30 bytes, now and
    /// then 120-300 (spilling onto overflow pages at 512-byte pages).
    fn key(&mut self) -> String {
        let n = match self.below(20) {
            0 => 120 + self.below(180) as usize,
            _ => 1 + self.below(30) as usize,
        };
        (0..n)
            .map(|_| char::from(b"abcdq"[self.below(5) as usize]))
            .collect()
    }

    /// A BLOB literal of 0-39 bytes.
    fn blob(&mut self) -> String {
        let n = self.below(40);
        let hex: String = (0..n).map(|_| format!("{:02x}", self.below(256))).collect();
        format!("x'{hex}'")
    }
}

fn quote(s: &str) -> String {
    format!("'{s}'")
}

/// One row's INSERT, with `c` and `d` from `rng`.
fn insert(rng: &mut Rng) -> String {
    let c = rng.key();
    let d: String = c.chars().take(2).collect();
    format!(
        "INSERT INTO t(b, c, d) VALUES({}, {}, {})",
        rng.blob(),
        quote(&c),
        quote(&d)
    )
}

/// A write by the connection that reuses the statements: rows inserted, deleted and
/// updated by rowid, and statements that walk the index they change.
fn own_write(rng: &mut Rng) -> String {
    let (k1, k2) = (rng.key(), rng.key());
    let (lo, hi) = if k1 <= k2 { (k1, k2) } else { (k2, k1) };
    let a = 1 + rng.below(700);
    match rng.below(7) {
        0 | 1 => insert(rng),
        2 => format!("DELETE FROM t WHERE a = {a}"),
        3 => format!("UPDATE t SET c = {} WHERE a = {a}", quote(&rng.key())),
        4 => format!(
            "UPDATE t SET b = {} WHERE c >= {} AND c < {}",
            rng.blob(),
            quote(&lo),
            quote(&hi)
        ),
        5 => format!(
            "UPDATE t SET c = c || 'a' WHERE c > {} AND c < {}",
            quote(&lo),
            quote(&hi)
        ),
        _ => format!(
            "DELETE FROM t WHERE c > {} AND c <= {} AND a % 3 = 0",
            quote(&lo),
            quote(&hi)
        ),
    }
}

/// Every query run once in both engines with bounds drawn from `rng`; the mismatches.
fn run_queries(
    ps: &mut [parlite::Statement],
    ss: &mut [rusqlite::Statement],
    rng: &mut Rng,
    ctx: &str,
) -> Vec<String> {
    let mut bad = Vec::new();
    for (q, (p, s)) in ps.iter_mut().zip(ss.iter_mut()).enumerate() {
        let (k1, k2) = (rng.key(), rng.key());
        let binds = [Value::Text(k1), Value::Text(k2)];
        let n = p.parameter_count();
        let got = common::rows_of(p, &binds[..n]);
        let want = sqlite_rows_of(s, &binds[..n]);
        if got != want {
            bad.push(format!(
                "{ctx}: query {q} {binds:?}\n parlite {got:?}\n sqlite  {want:?}"
            ));
        }
    }
    bad
}

fn one_seed(seed: u64) -> Vec<String> {
    let mut rng = Rng(seed);
    let pair = Pair::on_files("index-walk-steps");
    pair.own(SETUP);
    pair.own("BEGIN");
    for _ in 0..600 {
        pair.own(&insert(&mut rng));
    }
    pair.own("COMMIT");
    let mut ps: Vec<_> = QUERIES.iter().map(|q| prepare_one(&pair.p1, q)).collect();
    let mut ss: Vec<_> = QUERIES
        .iter()
        .map(|q| pair.s1.prepare(q).expect("sqlite prepare"))
        .collect();
    let mut bad = Vec::new();
    for step in 0..120 {
        let ctx = format!("seed {seed} step {step}");
        match rng.below(6) {
            // Own writes in autocommit between executions.
            0 | 1 => pair.own(&own_write(&mut rng)),
            // A transaction of own writes and queries interleaved.
            2 | 3 => {
                pair.own("BEGIN");
                for _ in 0..3 {
                    bad.extend(run_queries(&mut ps, &mut ss, &mut rng, &ctx));
                    pair.own(&own_write(&mut rng));
                }
                bad.extend(run_queries(&mut ps, &mut ss, &mut rng, &ctx));
                pair.own(if rng.below(4) == 0 {
                    "ROLLBACK"
                } else {
                    "COMMIT"
                });
            }
            // Another connection's commit (or rollback) between executions.
            4 => {
                pair.other("BEGIN");
                pair.other(&own_write(&mut rng));
                pair.other(&own_write(&mut rng));
                pair.other(if rng.below(3) == 0 {
                    "ROLLBACK"
                } else {
                    "COMMIT"
                });
            }
            _ => {}
        }
        bad.extend(run_queries(&mut ps, &mut ss, &mut rng, &ctx));
        if bad.len() > 5 {
            break;
        }
    }
    bad
}

#[test]
fn index_walks_between_own_and_other_writes_match_sqlite() {
    let mut bad = Vec::new();
    for seed in common::seeds() {
        bad.extend(one_seed(seed));
    }
    common::assert_no_mismatches(bad);
}

/// Cell 3 of the one-leaf index `t_c` (40 entries) given a pointer past the page's end:
/// a walk from below every key seeks onto cell 0 (its binary search reads cells 20, 10,
/// 5, 2, 1 and 0), then steps onto cells 1, 2 and 3, where it must stop with an error.
#[test]
fn a_damaged_index_leaf_fails_the_walk_that_steps_onto_it() {
    let path = temp_db_path("index-walk-steps", "damaged");
    {
        let s = rusqlite::Connection::open(&*path).expect("sqlite");
        s.execute_batch(
            "PRAGMA page_size=4096;
             CREATE TABLE t(a INTEGER PRIMARY KEY, c TEXT);
             CREATE INDEX t_c ON t(c);",
        )
        .expect("schema");
        for i in 0..40 {
            s.execute("INSERT INTO t(c) VALUES(?1)", [format!("k{i:03}")])
                .expect("insert");
        }
    }
    let root: u64 = rusqlite::Connection::open(&*path)
        .expect("sqlite")
        .query_row(
            "SELECT rootpage FROM sqlite_schema WHERE name = 't_c'",
            [],
            |r| r.get(0),
        )
        .expect("root");
    let mut file = std::fs::read(&*path).expect("read");
    let page = (root as usize - 1) * 4096;
    assert_eq!(file[page], 0x0a, "t_c's root is one index leaf");
    assert_eq!(u16::from_be_bytes([file[page + 3], file[page + 4]]), 40);
    let ptr = page + 8 + 2 * 3;
    file[ptr..ptr + 2].copy_from_slice(&0xfff0u16.to_be_bytes());
    std::fs::write(&*path, &file).expect("write");

    let db = parlite::Database::open(path.to_str().expect("path")).expect("open");
    let c = db.connect().expect("connect");
    for sql in [
        "SELECT c FROM t WHERE c >= 'a' ORDER BY c",
        "SELECT a, c FROM t WHERE c >= 'a' ORDER BY c LIMIT 10",
        "SELECT count(*) FROM t WHERE c BETWEEN 'a' AND 'z'",
    ] {
        let mut st = prepare_one(&c, sql);
        let mut rows = Vec::new();
        let err = loop {
            match st.step() {
                Ok(true) => rows.push(st.column(0)),
                Ok(false) => break None,
                Err(e) => break Some(e),
            }
        };
        let err = err.unwrap_or_else(|| panic!("{sql}: no error, rows {rows:?}"));
        assert_eq!(err.code, 11, "{sql}: SQLITE_CORRUPT, got {err:?}");
        assert!(
            rows.len() <= 3,
            "{sql}: rows past the damaged cell: {rows:?}"
        );
    }
}
