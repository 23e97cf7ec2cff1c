//! Rowid lookups against SQLite (rusqlite, bundled) on tables whose rowids are spread in
//! the ways that steer a descent's page searches differently (storage `TableCells::search_in`
//! starts where an even spread of a page's keys over its parent's bracket puts the rowid,
//! then gallops; a kept cursor rejects another leaf's rowids by the bracket of the leaf it
//! is on): assigned in ascending order, with the gaps deletes leave, in far-apart clusters,
//! anywhere in the i64 range. Read through hc_mixed's scan shape (an expression-index walk,
//! a table lookup per entry, LIMIT), point lookups, rowid ranges and IN lists, on 1 KiB
//! pages (three-level trees) with some rows spilling onto overflow pages; then again
//! between the writes of one transaction (rows rewritten to overflow, rows inserted into
//! gaps and ranges deleted: splits and merges under the statements' kept cursors), and
//! after its COMMIT.
//!
//! Seeded: replay with `PARLITE_SEED=N`.

mod common;
use common::*;
use std::collections::BTreeSet;

#[derive(Clone, Copy, Debug)]
enum Spread {
    /// 1..=n, as INTEGER PRIMARY KEY assigns them.
    Ascending,
    /// Ascending with every third row deleted after loading (brackets wider than the keys).
    Gaps,
    /// Runs of consecutive rowids at far-apart starts, negative ones too.
    Clustered,
    /// Anywhere in the i64 range, the extremes included.
    Any,
}

const ROWS: usize = 3000;

impl Rng {
    fn hex(&mut self, n: usize) -> String {
        (0..n)
            .map(|_| char::from(b"0123456789abcdef"[self.below(16) as usize]))
            .collect()
    }

    /// The `i`-th rowid to insert for `spread`.
    fn rowid(&mut self, spread: Spread, i: usize) -> i64 {
        match spread {
            Spread::Ascending | Spread::Gaps => i as i64 + 1,
            Spread::Clustered => {
                const STARTS: [i64; 6] = [
                    i64::MIN,
                    -(1 << 40),
                    -700,
                    1 << 24,
                    1 << 52,
                    i64::MAX - 5000,
                ];
                STARTS[self.below(6) as usize].saturating_add(self.below(ROWS as u64) as i64)
            }
            Spread::Any => match self.below(8) {
                0 => i64::MAX - self.below(50) as i64,
                1 => i64::MIN + self.below(50) as i64,
                _ => self.next() as i64,
            },
        }
    }

    /// A row's values: a BLOB of 0-120 bytes, or one that spills onto overflow pages.
    fn row(&mut self, rowid: i64) -> String {
        let b = match self.below(25) {
            0 => format!("zeroblob({})", 1500 + self.below(3000)),
            _ => {
                let n = 2 * self.below(120) as usize;
                format!("x'{}'", self.hex(n))
            }
        };
        format!("({rowid}, {b}, '{}')", self.hex(24))
    }

    /// A rowid to look up: one of the table's, a neighbour of one, or any.
    fn probe(&mut self, keys: &BTreeSet<i64>) -> i64 {
        let n = keys.len() as u64;
        match (self.below(4), n) {
            (0, _) | (_, 0) => self.next() as i64,
            (k, _) => {
                let at = *keys.iter().nth(self.below(n) as usize).expect("key");
                at.saturating_add(k as i64 - 2)
            }
        }
    }
}

/// Reads of the table: the scan shape, point lookups, ranges both ways, an IN list.
fn reads(r: &mut Rng, keys: &BTreeSet<i64>, out: &mut String) {
    for _ in 0..6 {
        let from = r.hex(3);
        out.push_str(&format!(
            "SELECT a, length(b), c FROM t WHERE substr(c,1,8) >= '{from}' ORDER BY substr(c,1,8) LIMIT 10;\n"
        ));
    }
    for _ in 0..25 {
        let k = r.probe(keys);
        out.push_str(&format!(
            "SELECT a, length(b), hex(substr(b,1,6)), c FROM t WHERE a = {k};\n"
        ));
        let (op, dir) =
            [(">=", "ASC"), (">", "ASC"), ("<=", "DESC"), ("<", "DESC")][r.below(4) as usize];
        out.push_str(&format!(
            "SELECT a, length(b) FROM t WHERE a {op} {k} ORDER BY a {dir} LIMIT 3;\n"
        ));
    }
    let list: Vec<String> = (0..12).map(|_| r.probe(keys).to_string()).collect();
    out.push_str(&format!(
        "SELECT a, c FROM t WHERE a IN ({}) ORDER BY a;\n",
        list.join(",")
    ));
    out.push_str("SELECT count(*), sum(length(b)), min(a), max(a) FROM t;\n");
}

fn script(seed: u64, spread: Spread) -> String {
    let mut r = Rng(seed);
    let mut s = String::from(
        "PRAGMA page_size=1024;\n\
         CREATE TABLE t(a INTEGER PRIMARY KEY, b BLOB, c TEXT);\n\
         CREATE INDEX ti ON t(substr(c,1,8));\n",
    );
    let mut keys = BTreeSet::new();
    let mut rows = Vec::new();
    for i in 0..ROWS {
        let k = r.rowid(spread, i);
        if keys.insert(k) {
            rows.push(r.row(k));
        }
    }
    for chunk in rows.chunks(40) {
        s.push_str(&format!("INSERT INTO t VALUES {};\n", chunk.join(",")));
    }
    if let Spread::Gaps = spread {
        s.push_str("DELETE FROM t WHERE a % 3 = 0;\n");
        keys.retain(|k| k % 3 != 0);
    }
    reads(&mut r, &keys, &mut s);
    s.push_str("BEGIN;\n");
    for _ in 0..8 {
        let k = r.probe(&keys);
        match r.below(3) {
            0 => s.push_str(&format!(
                "UPDATE t SET b = zeroblob({}) WHERE a = {k};\n",
                1500 + r.below(3000)
            )),
            1 => {
                let new: Vec<String> = (1..=r.below(30) as i64 + 1)
                    .map(|d| k.saturating_add(d))
                    .filter(|k| keys.insert(*k))
                    .map(|k| r.row(k))
                    .collect();
                if !new.is_empty() {
                    s.push_str(&format!("INSERT INTO t VALUES {};\n", new.join(",")));
                }
            }
            _ => {
                let end = k.saturating_add(r.below(60) as i64);
                s.push_str(&format!("DELETE FROM t WHERE a BETWEEN {k} AND {end};\n"));
                keys.retain(|x| !(k..=end).contains(x));
            }
        }
        reads(&mut r, &keys, &mut s);
    }
    s.push_str("COMMIT;\n");
    reads(&mut r, &keys, &mut s);
    s
}

#[test]
fn rowid_lookups_match_sqlite_whatever_the_spread() {
    for seed in seeds() {
        for spread in [
            Spread::Ascending,
            Spread::Gaps,
            Spread::Clustered,
            Spread::Any,
        ] {
            eprintln!("seed {seed}, {spread:?}");
            check_script(&script(seed, spread), Compare::default());
        }
    }
}
