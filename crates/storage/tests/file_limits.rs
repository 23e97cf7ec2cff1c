//! The file backend at its limits: a database many times larger than the page cache
//! (memory bounded by `cache_pages_max`, pager cache C6), and every page size from 512 to
//! 65536 on real files. Both end with stock SQLite's `PRAGMA integrity_check` and a row
//! comparison through rusqlite.
//!
//! Replay: `PARLITE_SEED=N cargo test -p parlite-storage --test file_limits`.

use parlite_storage::record::{decode, encode, ValueRef};
use parlite_storage::{
    BtreeKind, Database, HeaderField, OpenOptions, PageNo, SeekOp, Synchronous, Txn,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::time::Duration;

const BUSY: Duration = Duration::from_secs(5);

fn seed() -> u64 {
    std::env::var("PARLITE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(42)
}

/// Row `rowid`'s blob: deterministic, so the check needs no copy of the data.
fn row_blob(rowid: i64, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (rowid as usize).wrapping_mul(31).wrapping_add(i * 7) as u8)
        .collect()
}

fn row_record(rowid: i64, len: usize) -> Vec<u8> {
    encode(&[
        ValueRef::Null,
        ValueRef::Integer(len as i64),
        ValueRef::Blob(&row_blob(rowid, len)),
    ])
}

/// Creates table `t(a INTEGER PRIMARY KEY, n, b)` named in sqlite_schema; returns its root.
fn create_table(db: &Database) -> PageNo {
    let t = db.begin_write(BUSY).unwrap();
    let root = t.create_btree(BtreeKind::Table).unwrap();
    let schema = encode(&[
        ValueRef::Text(b"table"),
        ValueRef::Text(b"t"),
        ValueRef::Text(b"t"),
        ValueRef::Integer(root.0 as i64),
        ValueRef::Text(b"CREATE TABLE t(a INTEGER PRIMARY KEY, n, b)"),
    ]);
    t.table_insert(PageNo(1), 1, &schema).unwrap();
    t.set_header_field(HeaderField::SchemaCookie, 1).unwrap();
    t.commit().unwrap();
    root
}

/// Checks one row read back through a cursor.
fn check_row(rowid: i64, rec: &[u8]) {
    let vals = decode(rec).unwrap();
    let ValueRef::Integer(len) = vals[1] else {
        panic!("row {rowid}: length column is {:?}", vals[1]);
    };
    assert_eq!(
        vals[2],
        ValueRef::Blob(&row_blob(rowid, len as usize)),
        "row {rowid}"
    );
}

/// Stock SQLite's verdict on the file, plus its row count and total blob length.
fn sqlite_check(path: &str) -> (i64, i64) {
    let conn = rusqlite::Connection::open(path).unwrap();
    let ok: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok", "{path}");
    conn.query_row("SELECT count(*), total(length(b)) FROM t", [], |r| {
        Ok((r.get(0)?, r.get::<_, f64>(1)? as i64))
    })
    .unwrap()
}

/// Walks the table forward and backward, checking every row; calls `probe` every 64 rows.
fn read_back(t: &Txn, root: PageNo, rows: &[(i64, usize)], mut probe: impl FnMut()) {
    let mut c = t.cursor(root, BtreeKind::Table, None).unwrap();
    let mut ok = c.first().unwrap();
    let mut n = 0;
    while ok {
        let rowid = c.rowid().unwrap();
        assert_eq!(rowid, rows[n].0);
        check_row(rowid, &c.record().unwrap());
        n += 1;
        if n % 64 == 0 {
            probe();
        }
        ok = c.next().unwrap();
    }
    assert_eq!(n, rows.len());
    let mut ok = c.last().unwrap();
    while ok {
        n -= 1;
        assert_eq!(c.rowid().unwrap(), rows[n].0);
        if n % 64 == 0 {
            probe();
        }
        ok = c.prev().unwrap();
    }
    assert_eq!(n, 0);
    // Point seeks all over the file: each one a cache miss in a cold cache.
    for (i, &(rowid, _)) in rows.iter().enumerate().step_by(37) {
        assert!(c.seek_rowid(rowid, SeekOp::Eq).unwrap());
        check_row(rowid, &c.record().unwrap());
        if i % 64 == 0 {
            probe();
        }
    }
}

/// Memory is bounded by the cache, not by the database size (pager cache C6).
///
/// The bound checked: outside a commit and with no snapshot older than the latest commit
/// alive, the cache holds at most `cache_pages_max` entries, each a single version. Why it
/// holds: readers and the writer read through the cache, which evicts a clean
/// single-version entry for each page it adds (C4); a commit publishes its pages as dirty
/// entries (C3, which are never evicted) and checkpoints when they pass half the cache
/// (`checkpoint_dirty_percent`), which makes them clean and evicts down to the bound again.
/// The two ways past it, both bounded by something other than the database size: dirty
/// pages of commits since the last checkpoint (at most three quarters of the cache,
/// `backpressure_dirty_percent`, plus one transaction's pages, and a transaction's private page copies live in its writer, not
/// in the cache), and old versions a live snapshot still reads (at most the pages
/// committed since the oldest live snapshot began) — exercised at the end.
#[test]
fn database_many_times_the_cache_size() {
    let mut rng = StdRng::seed_from_u64(seed());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.db").display().to_string();
    const CACHE: usize = 64;
    let opts = OpenOptions {
        page_size: 1024,
        cache_pages_max: CACHE,
        synchronous: Synchronous::Off,
        ..OpenOptions::default()
    };
    let db = Database::open(&path, opts.clone()).unwrap();
    let root = create_table(&db);
    let mut rows: Vec<(i64, usize)> = Vec::new();
    let mut peak = 0usize;
    let mut observe = |db: &Database, what: &str| {
        let s = db.stats();
        assert!(
            s.cache_pages <= CACHE && s.cache_versions <= CACHE,
            "{what}: {s:?}"
        );
        peak = peak.max(s.cache_pages);
    };
    // Many small commits, rows of 10..400 bytes with every 25th on overflow pages.
    let mut next = 1i64;
    for commit in 0..300 {
        let t = db.begin_write(BUSY).unwrap();
        for _ in 0..10 {
            let len = if next % 25 == 0 {
                rng.gen_range(1500..5000)
            } else {
                rng.gen_range(10..400)
            };
            t.table_insert(root, next, &row_record(next, len)).unwrap();
            rows.push((next, len));
            next += 1;
        }
        if commit % 50 == 0 {
            observe(&db, "inside a small transaction");
        }
        t.commit().unwrap();
        observe(&db, "after a small commit");
    }
    // A few single transactions of several hundred pages each.
    for _ in 0..3 {
        let t = db.begin_write(BUSY).unwrap();
        for i in 0..150 {
            let len = rng.gen_range(1500..3000);
            t.table_insert(root, next, &row_record(next, len)).unwrap();
            rows.push((next, len));
            next += 1;
            if i % 50 == 0 {
                observe(&db, "inside a large transaction");
            }
        }
        t.commit().unwrap();
        observe(&db, "after a large commit");
    }
    let t = db.begin_read().unwrap();
    let pages = t.header().unwrap().page_count;
    assert!(pages as usize > 30 * CACHE, "only {pages} pages");
    read_back(&t, root, &rows, || observe(&db, "reading back"));
    drop(t);

    // A snapshot held across commits keeps the versions it reads: more than the bound,
    // but never more than the bound plus the pages committed meanwhile.
    let old = db.begin_read().unwrap();
    let mut old_cursor = old.cursor(root, BtreeKind::Table, None).unwrap();
    assert!(old_cursor.first().unwrap());
    for i in 0..20 {
        let t = db.begin_write(BUSY).unwrap();
        let rowid = rows[i * 97].0;
        t.table_insert(root, rowid, &row_record(rowid, 20)).unwrap();
        rows[i * 97].1 = 20;
        t.commit().unwrap();
    }
    let held = db.stats();
    // 20 commits of one row each change at most a leaf and its ancestors (depth <= 4).
    assert!(held.cache_versions <= CACHE + 20 * 4, "{held:?}");
    let mut n = 0;
    while old_cursor.next().unwrap() {
        n += 1;
    }
    assert_eq!(n + 1, rows.len(), "the old snapshot sees every row");
    drop((old_cursor, old));
    let t = db.begin_write(BUSY).unwrap();
    t.table_insert(root, next, &row_record(next, 5)).unwrap();
    rows.push((next, 5));
    t.commit().unwrap();
    drop(t);
    db.checkpoint().unwrap();
    observe(&db, "after the old snapshot ended");
    drop(db);

    // Reopen with the same small cache: everything is there.
    let db = Database::open(&path, opts).unwrap();
    let t = db.begin_read().unwrap();
    read_back(&t, root, &rows, || observe(&db, "after reopening"));
    assert!(t
        .integrity_check(&[(root, BtreeKind::Table)], 10)
        .unwrap()
        .is_empty());
    drop((t, db));
    assert!(peak > CACHE / 2, "the cache was used (peak {peak})");

    let (count, bytes) = sqlite_check(&path);
    assert_eq!(count as usize, rows.len());
    assert_eq!(bytes as usize, rows.iter().map(|r| r.1).sum::<usize>());
}

/// Every power-of-two page size from 512 to 65536 on real files: overflow payloads
/// (several pages long), reopen, stock SQLite's integrity check and row comparison.
#[test]
fn every_page_size_on_files() {
    let mut rng = StdRng::seed_from_u64(seed() ^ 0x9a9e);
    let dir = tempfile::tempdir().unwrap();
    for shift in 9..=16u32 {
        let page_size = 1u32 << shift;
        let path = dir.path().join(format!("ps{page_size}.db"));
        let path = path.display().to_string();
        let opts = OpenOptions {
            page_size,
            cache_pages_max: 32,
            synchronous: Synchronous::Off,
            ..OpenOptions::default()
        };
        let db = Database::open(&path, opts.clone()).unwrap();
        let root = create_table(&db);
        let mut rows = Vec::new();
        for batch in 0..3 {
            let t = db.begin_write(BUSY).unwrap();
            for i in 0..20 {
                let rowid = batch * 100 + i + 1;
                // Local rows, rows just past the local limit, and chains of several pages.
                let len = match i % 4 {
                    0 => rng.gen_range(0..50),
                    1 => page_size as usize - rng.gen_range(0..40),
                    2 => rng.gen_range(2..5) * page_size as usize + rng.gen_range(0..100),
                    _ => rng.gen_range(50..page_size as usize / 4),
                };
                t.table_insert(root, rowid, &row_record(rowid, len))
                    .unwrap();
                rows.push((rowid, len));
            }
            t.commit().unwrap();
        }
        // Delete some so the freelist and overflow freeing are on disk too.
        let t = db.begin_write(BUSY).unwrap();
        for i in (0..rows.len()).rev().step_by(7) {
            assert!(t.table_delete(root, rows[i].0).unwrap());
            rows.remove(i);
        }
        t.commit().unwrap();
        // A finished Txn still holds the backend: the close (checkpoint) waits for it.
        drop((t, db));

        let bytes = std::fs::read(&path).unwrap();
        let raw = u16::from_be_bytes([bytes[16], bytes[17]]);
        assert_eq!(
            if raw == 1 { 65536 } else { raw as u32 },
            page_size,
            "header page size"
        );
        assert_eq!(bytes.len() % page_size as usize, 0);

        let db = Database::open(&path, opts).unwrap();
        let t = db.begin_read().unwrap();
        assert_eq!(t.header().unwrap().page_size, page_size);
        read_back(&t, root, &rows, || {});
        assert!(t
            .integrity_check(&[(root, BtreeKind::Table)], 10)
            .unwrap()
            .is_empty());
        drop((t, db));

        let (count, total) = sqlite_check(&path);
        assert_eq!(count as usize, rows.len(), "page size {page_size}");
        assert_eq!(total as usize, rows.iter().map(|r| r.1).sum::<usize>());
        // Row by row: stock SQLite reads the same bytes.
        let conn = rusqlite::Connection::open(&path).unwrap();
        let mut st = conn.prepare("SELECT a, n, b FROM t ORDER BY a").unwrap();
        let got: Vec<(i64, i64, Vec<u8>)> = st
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .map(|r| r.unwrap())
            .collect();
        assert_eq!(got.len(), rows.len());
        for ((a, n, b), &(rowid, len)) in got.iter().zip(&rows) {
            assert_eq!((*a, *n as usize), (rowid, len), "page size {page_size}");
            assert!(
                *b == row_blob(rowid, len),
                "page size {page_size} row {rowid}"
            );
        }
    }
}
