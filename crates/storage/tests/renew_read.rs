//! `Txn::renew_read` (txn.rs T6): a finished transaction begun again reads a snapshot
//! taken at the renewal, never the one it had, and a cursor positioned before the renewal
//! re-seeks its key instead of reading the old snapshot's pages. Both backends: the
//! file's read views also recycle their page memo (pager/read_memo.rs), so a renewed view
//! must not see the previous view's pages either.

use parlite_storage::record::{encode, ValueRef};
use parlite_storage::vfs::SimVfs;
use parlite_storage::{
    BtreeKind, CheckpointMode, Database, OpenOptions, PageNo, SeekOp, StorageError,
};
use std::sync::Arc;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(5);

fn row(v: i64) -> Vec<u8> {
    encode(&[ValueRef::Integer(v), ValueRef::Blob(&[7u8; 40])])
}

fn value_at(c: &mut parlite_storage::Cursor) -> i64 {
    c.with_entry(|_, rec| match parlite_storage::record::column(rec, 0) {
        Ok(ValueRef::Integer(v)) => v,
        other => panic!("unexpected field {other:?}"),
    })
    .unwrap()
}

fn databases() -> Vec<(&'static str, Database)> {
    let disk = SimVfs::new(5);
    let file =
        Database::open_with_vfs(Arc::new(disk), "/renew.db", OpenOptions::default()).unwrap();
    let mem = Database::open_in_memory(OpenOptions::default()).unwrap();
    vec![("file", file), ("memory", mem)]
}

/// A table of rows 1..=n with value = 10 * rowid.
fn fill(db: &Database, n: i64) -> PageNo {
    let w = db.begin_write(WAIT).unwrap();
    let root = w.create_btree(BtreeKind::Table).unwrap();
    for k in 1..=n {
        w.table_insert(root, k, &row(10 * k)).unwrap();
    }
    w.commit().unwrap();
    root
}

#[test]
fn a_renewed_transaction_reads_the_commits_made_after_it_ended() {
    for (kind, db) in databases() {
        let root = fill(&db, 300);
        let r = db.begin_read().unwrap();
        let mut c = r.cursor(root, BtreeKind::Table, None).unwrap();
        assert!(c.seek_rowid(150, SeekOp::Eq).unwrap(), "{kind}");
        assert_eq!(value_at(&mut c), 1500, "{kind}");
        r.commit().unwrap();
        // T3 until renewed.
        assert!(
            matches!(c.rebind(), Err(StorageError::Misuse { .. })),
            "{kind}"
        );

        let w = db.begin_write(WAIT).unwrap();
        w.table_insert(root, 150, &row(-1)).unwrap();
        w.table_delete(root, 151).unwrap();
        w.table_insert(root, 1000, &row(7)).unwrap();
        w.commit().unwrap();

        r.renew_read().unwrap();
        c.rebind().unwrap();
        // The cursor's frames are of the old snapshot: T6 makes it re-seek its key.
        assert_eq!(value_at(&mut c), -1, "{kind}: stale row after renewal");
        assert!(c.next().unwrap(), "{kind}");
        assert_eq!(
            c.rowid().unwrap(),
            152,
            "{kind}: deleted row seen after renewal"
        );
        // A fresh descent sees the new snapshot too, row 151 gone and 1000 there.
        let mut d = r.cursor(root, BtreeKind::Table, None).unwrap();
        assert!(!d.seek_rowid(151, SeekOp::Eq).unwrap(), "{kind}");
        assert!(d.seek_rowid(1000, SeekOp::Eq).unwrap(), "{kind}");
        assert_eq!(value_at(&mut d), 7, "{kind}");
        assert!(d.last().unwrap());
        assert_eq!(d.rowid().unwrap(), 1000, "{kind}");
        r.commit().unwrap();
    }
}

#[test]
fn renewing_is_only_for_a_finished_transaction_and_keeps_no_snapshot_between() {
    for (kind, db) in databases() {
        let root = fill(&db, 20);
        let r = db.begin_read().unwrap();
        assert!(
            matches!(r.renew_read(), Err(StorageError::Misuse { .. })),
            "{kind}: renewed while open"
        );
        r.rollback();
        // Renewed many times, each time on the latest commit.
        for k in 21..=60 {
            let w = db.begin_write(WAIT).unwrap();
            w.table_insert(root, k, &row(10 * k)).unwrap();
            w.commit().unwrap();
            r.renew_read().unwrap();
            let mut c = r.cursor(root, BtreeKind::Table, None).unwrap();
            assert!(c.last().unwrap());
            assert_eq!(
                c.rowid().unwrap(),
                k,
                "{kind}: renewal read an old snapshot"
            );
            assert_eq!(value_at(&mut c), 10 * k, "{kind}");
            drop(c);
            r.commit().unwrap();
            if kind == "file" {
                // The finished transaction holds no snapshot: a checkpoint that must wait
                // for every reader to finish is not kept waiting.
                let o = db
                    .checkpoint_mode(CheckpointMode::Truncate, Duration::ZERO)
                    .unwrap();
                assert!(
                    !o.busy,
                    "a finished, renewable transaction held its snapshot"
                );
            }
        }
    }
}
