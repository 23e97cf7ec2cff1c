//! The commit path's lock-free part (pager K5): a concurrent transaction stamps, diffs and
//! encodes its frame in `attach_writer` before it takes the writer lock. These tests check
//! that the work done outside the lock is dropped whenever it no longer describes the
//! commit: after a `Busy` at the lock the transaction writes more, or another commit got in
//! first; and that page 1's change counter is never moved by a commit, however many times
//! it was prepared (pages P3: the checkpoint stamps it into the file, tests/change_counter.rs).

use parlite_storage::record::{decode, encode};
use parlite_storage::vfs::SimVfs;
use parlite_storage::{
    BtreeKind, Database, HeaderField, OpenOptions, PageNo, PagerConfig, StorageError, Synchronous,
    Txn, ValueRef,
};
use std::sync::Arc;
use std::time::Duration;

fn file_db(disk: &SimVfs) -> Database {
    let opts = OpenOptions {
        page_size: 1024,
        synchronous: Synchronous::Full,
        ..OpenOptions::default()
    };
    let config = PagerConfig {
        background_checkpoint: false,
        ..PagerConfig::default()
    };
    Database::open_with_config(Arc::new(disk.clone()), "/commit.db", opts, config).unwrap()
}

fn val(v: i64) -> Vec<u8> {
    encode(&[ValueRef::Integer(v)])
}

fn rows(t: &Txn, root: PageNo) -> Vec<(i64, i64)> {
    let mut out = Vec::new();
    let mut c = t.cursor(root, BtreeKind::Table, None).unwrap();
    let mut ok = c.first().unwrap();
    while ok {
        let v = match decode(&c.record().unwrap()).unwrap()[0] {
            ValueRef::Integer(v) => v,
            _ => panic!("not an integer"),
        };
        out.push((c.rowid().unwrap(), v));
        ok = c.next().unwrap();
    }
    out
}

/// Page 1's change counter (offset 24) in the backend's latest state.
fn change_counter(db: &Database) -> u32 {
    let r = db.backend().begin_read().unwrap();
    let p1 = r.page(PageNo(1)).unwrap();
    u32::from_be_bytes([p1[24], p1[25], p1[26], p1[27]])
}

#[test]
fn busy_at_the_lock_then_more_writes_commits_everything_once() {
    let disk = SimVfs::new(5);
    let db = file_db(&disk);
    let root = {
        let w = db.begin_write(Duration::from_secs(5)).unwrap();
        let root = w.create_btree(BtreeKind::Table).unwrap();
        w.commit().unwrap();
        root
    };
    db.set_concurrent_busy_timeout(Duration::from_millis(20));
    let before = change_counter(&db);
    let t = db.begin_concurrent().unwrap();
    t.table_insert(root, 1, &val(10)).unwrap();
    // Another writer holds the lock: the commit prepares, then times out (T3: still open).
    let holder = db.begin_write(Duration::from_secs(5)).unwrap();
    assert!(matches!(t.commit(), Err(StorageError::Busy { .. })));
    // More writes after the prepare: it must not be what gets committed.
    t.table_insert(root, 2, &val(20)).unwrap();
    t.set_header_field(HeaderField::UserVersion, 7).unwrap();
    holder.rollback();
    t.commit().unwrap();
    assert_eq!(change_counter(&db), before);
    let r = db.begin_read().unwrap();
    assert_eq!(rows(&r, root), vec![(1, 10), (2, 20)]);
    assert_eq!(r.header().unwrap().user_version, 7);
    drop(r);
    // And so it is after a reopen (redo of the frame that was sealed under the lock).
    drop(db);
    let db = file_db(&disk);
    let r = db.begin_read().unwrap();
    assert_eq!(rows(&r, root), vec![(1, 10), (2, 20)]);
    assert_eq!(r.header().unwrap().user_version, 7);
    assert!(r
        .integrity_check(&[(root, BtreeKind::Table)], 10)
        .unwrap()
        .is_empty());
}

#[test]
fn a_commit_that_got_in_first_makes_the_prepared_frame_unused() {
    let disk = SimVfs::new(6);
    let db = file_db(&disk);
    let root = {
        let w = db.begin_write(Duration::from_secs(5)).unwrap();
        let root = w.create_btree(BtreeKind::Table).unwrap();
        w.table_insert(root, 1, &val(1)).unwrap();
        w.commit().unwrap();
        root
    };
    db.set_concurrent_busy_timeout(Duration::from_millis(20));
    let before = change_counter(&db);
    let t = db.begin_concurrent().unwrap();
    t.table_insert(root, 5, &val(50)).unwrap();
    // Prepared on snapshot s, then Busy; meanwhile a commit makes s stale.
    let holder = db.begin_write(Duration::from_secs(5)).unwrap();
    assert!(matches!(t.commit(), Err(StorageError::Busy { .. })));
    holder.table_insert(root, 3, &val(30)).unwrap();
    holder.commit().unwrap();
    // The commit is rebased on the holder's (C7): its frame is built anew on that state.
    t.commit().unwrap();
    assert_eq!(change_counter(&db), before);
    assert_eq!(db.concurrency_stats().concurrent_rebased_commits, 1);
    drop(db);
    let db = file_db(&disk);
    let r = db.begin_read().unwrap();
    assert_eq!(rows(&r, root), vec![(1, 1), (3, 30), (5, 50)]);
    assert!(r
        .integrity_check(&[(root, BtreeKind::Table)], 10)
        .unwrap()
        .is_empty());
}
