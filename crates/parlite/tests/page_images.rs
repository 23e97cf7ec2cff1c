//! Page images (`PageRef`, storage pages.rs) through the paths that reuse their memory, against
//! SQLite: a cache far smaller than the table, so pages are evicted and read back from the
//! file into the evicted images' buffers (cache `Lookup::Miss`); updates that copy pages on
//! write into buffers recycled from pruned versions (pager buffers.rs U1–U3); and a reader
//! holding a snapshot while those copies and checkpoints happen (cache C2, C4), so a buffer
//! reused while someone still reads it would show as a changed snapshot. hc_mixed's shape:
//! index range scans of ten rows, a rowid lookup per row.

mod common;

use common::{run_parlite, run_sqlite, seeds, Out, Rng, TempDir};

const ROWS: u64 = 600;

const SCAN: &str = "SELECT * FROM tbl WHERE substr(c,1,16) >= ?1 ORDER BY substr(c,1,16) LIMIT 10";

fn hex(rng: &mut Rng, n: usize) -> String {
    (0..n)
        .map(|_| char::from(b"0123456789abcdef"[rng.below(16) as usize]))
        .collect()
}

/// Both engines' connections: a writer and a reader on each file.
struct Pair {
    pw: parlite::Connection,
    pr: parlite::Connection,
    sw: rusqlite::Connection,
    sr: rusqlite::Connection,
}

impl Pair {
    fn write(&self, sql: &str) {
        self.sw.execute_batch(sql).expect(sql);
        self.pw.execute_batch(sql).expect(sql);
    }

    fn scan(&self, key: &str, reader: bool) -> (Out, Out) {
        let sql = SCAN.replace("?1", &format!("'{key}'"));
        match reader {
            true => (run_sqlite(&self.sr, &sql), run_parlite(&self.pr, &sql)),
            false => (run_sqlite(&self.sw, &sql), run_parlite(&self.pw, &sql)),
        }
    }
}

fn open(dir: &TempDir) -> (Pair, parlite::Database) {
    let (pp, sp) = (dir.join("p.db"), dir.join("s.db"));
    let db = parlite::Database::open(pp.to_str().unwrap()).unwrap();
    let sw = rusqlite::Connection::open(&sp).unwrap();
    sw.execute_batch("PRAGMA journal_mode=WAL").unwrap();
    let pair = Pair {
        pw: db.connect().unwrap(),
        pr: db.connect().unwrap(),
        sr: rusqlite::Connection::open(&sp).unwrap(),
        sw,
    };
    (pair, db)
}

/// Seeded updates, scans from the writer, and scans from a reader that keeps its snapshot
/// across updates and checkpoints; every scan's rows equal SQLite's, and a snapshot's scan
/// repeated later equals its first run.
#[test]
fn scans_through_evicted_and_recycled_page_buffers_match_sqlite() {
    for seed in seeds() {
        let dir = TempDir::new("page-images");
        let (p, _db) = open(&dir);
        let mut rng = Rng(seed);
        // ~400-byte rows: ~9 a leaf, ~70 leaves and the index's pages against a 24-page
        // cache (parlite's bound; SQLite's own cache size does not matter here).
        // (The database's bound is the largest of its connections' settings.)
        p.pw.execute_batch("PRAGMA cache_size = 24").unwrap();
        p.pr.execute_batch("PRAGMA cache_size = 24").unwrap();
        p.write("CREATE TABLE tbl(a INTEGER PRIMARY KEY, b BLOB, c CHAR(64));");
        p.write("CREATE INDEX tbl_i1 ON tbl(substr(c,1,16));");
        let mut fill = String::from("BEGIN;");
        for a in 1..=ROWS {
            let (b, c) = (hex(&mut rng, 300), hex(&mut rng, 64));
            fill.push_str(&format!("INSERT INTO tbl VALUES({a}, x'{b}', '{c}');"));
        }
        fill.push_str("COMMIT;");
        p.write(&fill);
        p.write("PRAGMA wal_checkpoint(TRUNCATE);");
        // The reader's open snapshot: the keys it scanned and what it saw.
        let mut held: Vec<(String, Out)> = Vec::new();
        let mut failures = Vec::new();
        for step in 0..400 {
            let key = hex(&mut rng, 2);
            match rng.below(10) {
                0..=3 => {
                    let a = 1 + rng.below(ROWS);
                    let len = 2 * (1 + rng.below(200) as usize);
                    let (b, c) = (hex(&mut rng, len), hex(&mut rng, 64));
                    p.write(&format!(
                        "UPDATE tbl SET b = x'{b}', c = '{c}' WHERE a = {a};"
                    ));
                }
                4 => p.write("PRAGMA wal_checkpoint(PASSIVE);"),
                5 | 6 => {
                    if held.is_empty() {
                        p.sr.execute_batch("BEGIN").unwrap();
                        p.pr.execute_batch("BEGIN").unwrap();
                    }
                    let (s, q) = p.scan(&key, true);
                    if s != q {
                        failures.push(format!(
                            "seed {seed} step {step} reader {key}: {s:?} vs {q:?}"
                        ));
                    }
                    held.push((key, q));
                }
                7 if !held.is_empty() => {
                    // The snapshot unchanged by everything since its first scans.
                    for (k, first) in &held {
                        let (s, q) = p.scan(k, true);
                        if &q != first || s != q {
                            failures.push(format!("seed {seed} step {step} snapshot {k}: {q:?}"));
                        }
                    }
                    held.clear();
                    p.sr.execute_batch("COMMIT").unwrap();
                    p.pr.execute_batch("COMMIT").unwrap();
                }
                _ => {
                    let (s, q) = p.scan(&key, false);
                    if s != q {
                        failures.push(format!(
                            "seed {seed} step {step} writer {key}: {s:?} vs {q:?}"
                        ));
                    }
                }
            }
        }
        assert!(
            failures.is_empty(),
            "{}",
            failures[..failures.len().min(5)].join("\n")
        );
    }
}
