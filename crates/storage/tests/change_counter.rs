//! Page 1's change counter (header offset 24) and version-valid-for (92) belong to the
//! checkpoint, not to commits (pages P3, header.rs): a commit that changes neither page 1
//! nor the page count leaves page 1 alone, and every checkpoint that writes pages into the
//! database file stamps a new counter into the file's page 1. These tests check both
//! halves, and the reason the counter exists: stock SQLite, in rollback-journal mode, keeps
//! its page cache between transactions while the counter it sees in the file is unchanged,
//! so a SQLite connection opened before parlite wrote the file must see parlite's rows.

use parlite_storage::header::{self, DbHeader};
use parlite_storage::record::{encode, ValueRef};
use parlite_storage::vfs::{CrashMode, SimVfs};
use parlite_storage::{BtreeKind, Database, OpenOptions, PageNo, PagerConfig, Synchronous};
use std::sync::Arc;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(5);

fn sim_db(disk: &SimVfs) -> Database {
    let opts = OpenOptions {
        page_size: 1024,
        synchronous: Synchronous::Full,
        ..OpenOptions::default()
    };
    let config = PagerConfig {
        background_checkpoint: false,
        ..PagerConfig::default()
    };
    Database::open_with_config(Arc::new(disk.clone()), "/cc.db", opts, config).unwrap()
}

fn row(v: i64) -> Vec<u8> {
    encode(&[ValueRef::Integer(v), ValueRef::Blob(&[7u8; 40])])
}

/// Page 1 as the backend's latest committed state has it.
fn committed_page1(db: &Database) -> Vec<u8> {
    let r = db.backend().begin_read().unwrap();
    let p = r.page(PageNo(1)).unwrap();
    p.to_vec()
}

fn file_header(disk: &SimVfs) -> DbHeader {
    DbHeader::parse(&disk.file_bytes("/cc.db").unwrap()).unwrap()
}

#[test]
fn commits_leave_page1_alone_and_each_checkpoint_advances_the_files_counter() {
    let disk = SimVfs::new(11);
    let db = sim_db(&disk);
    let root = {
        let w = db.begin_write(WAIT).unwrap();
        let root = w.create_btree(BtreeKind::Table).unwrap();
        w.table_insert(root, 1, &row(1)).unwrap();
        w.commit().unwrap();
        root
    };
    db.checkpoint().unwrap();
    let h0 = file_header(&disk);
    assert_eq!(h0.change_counter, h0.version_valid_for);
    let p1_before = committed_page1(&db);
    let commits_before = db.stats().commits;
    // Small rows into the one leaf: page 1 and the page count stay as they were.
    for k in 2..=6 {
        let w = db.begin_write(WAIT).unwrap();
        w.table_insert(root, k, &row(k)).unwrap();
        w.commit().unwrap();
    }
    assert_eq!(db.stats().commits, commits_before + 5);
    assert_eq!(committed_page1(&db), p1_before, "a commit rewrote page 1");
    // One checkpoint, one new counter in the file, whatever the number of commits.
    db.checkpoint().unwrap();
    let h1 = file_header(&disk);
    assert_eq!(h1.change_counter, h0.change_counter.wrapping_add(1));
    assert_eq!(h1.version_valid_for, h1.change_counter);
    assert_eq!(h1.writer_version, header::WRITER_VERSION);
    assert_eq!(h1.page_count, 2);
    // A checkpoint with nothing to write leaves the file alone.
    db.checkpoint().unwrap();
    assert_eq!(file_header(&disk).change_counter, h1.change_counter);
    // A commit that grows the file sets the page count on page 1 (and logs page 1).
    {
        let w = db.begin_write(WAIT).unwrap();
        for k in 7..=100 {
            w.table_insert(root, k, &row(k)).unwrap();
        }
        w.commit().unwrap();
    }
    let p1 = committed_page1(&db);
    let count = db.begin_read().unwrap().header().unwrap().page_count;
    assert!(count > 2);
    assert_eq!(header::get_u32(&p1, header::OFFSET_PAGE_COUNT), count);
    drop(db);
    // Clean close: one more checkpoint, and the file is consistent for SQLite.
    let h2 = file_header(&disk);
    assert_eq!(h2.change_counter, h1.change_counter.wrapping_add(1));
    assert_eq!(h2.version_valid_for, h2.change_counter);
    assert_eq!(h2.page_count, count);
    let db = sim_db(&disk);
    let r = db.begin_read().unwrap();
    assert_eq!(r.count(root).unwrap(), 100);
    assert!(r
        .integrity_check(&[(root, BtreeKind::Table)], 10)
        .unwrap()
        .is_empty());
}

/// Recovery's checkpoint stamps the file too: a crash after commits that never touched
/// page 1, then a reopen, leaves a counter above the one the file had before.
#[test]
fn recovery_checkpoint_advances_the_counter() {
    let disk = SimVfs::new(12);
    let root = {
        let db = sim_db(&disk);
        let w = db.begin_write(WAIT).unwrap();
        let root = w.create_btree(BtreeKind::Table).unwrap();
        w.commit().unwrap();
        root
    };
    let before = file_header(&disk).change_counter;
    let db = sim_db(&disk);
    for k in 1..=5 {
        let w = db.begin_write(WAIT).unwrap();
        w.table_insert(root, k, &row(k)).unwrap();
        w.commit().unwrap();
    }
    // Power loss: the FULL commits' frames are synced, nothing reached the database file.
    let disk = disk.crash(3, CrashMode::PowerLoss);
    drop(db);
    assert_eq!(file_header(&disk).change_counter, before);
    let db = sim_db(&disk);
    assert_eq!(db.begin_read().unwrap().count(root).unwrap(), 5);
    let h = file_header(&disk);
    assert!(
        h.change_counter != before,
        "recovery wrote pages under the old counter"
    );
    assert_eq!(h.version_valid_for, h.change_counter);
}

/// The reason for the counter: a SQLite connection that read the file before parlite
/// opened it keeps its page cache while the counter is unchanged. parlite's commit below
/// changes one leaf only (not page 1, not the page count); after parlite closes, the warm
/// connection must see the new row and the changed one.
#[test]
fn stock_sqlite_with_a_warm_cache_sees_parlite_commits() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("warm.db");
    let warm = rusqlite::Connection::open(&path).unwrap();
    warm.execute_batch(
        "PRAGMA journal_mode=DELETE;
         CREATE TABLE t(a INTEGER PRIMARY KEY, b BLOB);
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200)
         INSERT INTO t SELECT i, zeroblob(100) FROM n;",
    )
    .unwrap();
    let count = |c: &rusqlite::Connection| -> (i64, i64) {
        c.query_row("SELECT count(*), max(a) FROM t", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap()
    };
    assert_eq!(count(&warm), (200, 200));
    let pages_before: i64 = warm
        .query_row("PRAGMA page_count", [], |r| r.get(0))
        .unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let counter_before = DbHeader::parse(&bytes).unwrap().change_counter;
    {
        let db = Database::open(&path, OpenOptions::default()).unwrap();
        let root = PageNo(2);
        let w = db.begin_write(WAIT).unwrap();
        // The last leaf has room for one more 100-byte row.
        w.table_insert(
            root,
            201,
            &encode(&[ValueRef::Null, ValueRef::Blob(&[1u8; 100])]),
        )
        .unwrap();
        let p1 = committed_page1(&db);
        assert_eq!(
            db.backend().begin_read().unwrap().page_count(),
            pages_before as u32
        );
        w.commit().unwrap();
        assert_eq!(
            db.backend().begin_read().unwrap().page_count(),
            pages_before as u32
        );
        assert_eq!(committed_page1(&db), p1, "the commit rewrote page 1");
    }
    let bytes = std::fs::read(&path).unwrap();
    let h = DbHeader::parse(&bytes).unwrap();
    assert_ne!(h.change_counter, counter_before);
    assert_eq!(h.version_valid_for, h.change_counter);
    assert_eq!(h.page_count as i64, pages_before);
    assert_eq!(count(&warm), (201, 201));
    let check: String = warm
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
}
