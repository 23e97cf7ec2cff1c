//! `Cursor::seek_rowid_entry` (one lock for a rowid seek and the row's payload) against
//! `seek_rowid(Eq)` + `with_entry` on a second cursor: hits and misses, sought in order
//! (the same-leaf shortcut) and at random (full descents), records that overflow, rows
//! changed between seeks through the same transaction (stale frames), and a concurrent
//! transaction (the read-recording path).

use parlite_storage::record::{encode, ValueRef};
use parlite_storage::{BtreeKind, Cursor, Database, OpenOptions, PageNo, SeekOp, Txn};
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(5);

fn db() -> Database {
    Database::open_in_memory(OpenOptions {
        page_size: 1024,
        ..OpenOptions::default()
    })
    .unwrap()
}

/// Every third rowid from 3 to 3,000; every 50th record overflows a 1 KiB page.
fn record(rowid: i64) -> Vec<u8> {
    let len = if rowid % 50 == 0 {
        3000
    } else {
        20 + (rowid % 7) as usize
    };
    let blob = vec![(rowid % 251) as u8; len];
    encode(&[ValueRef::Integer(rowid), ValueRef::Blob(&blob)])
}

fn fill(w: &Txn) -> PageNo {
    let root = w.create_btree(BtreeKind::Table).unwrap();
    for r in (3..=3000).step_by(3) {
        w.table_insert(root, r, &record(r)).unwrap();
    }
    root
}

fn two_step(c: &mut Cursor, rowid: i64) -> Option<(i64, Vec<u8>)> {
    if !(c.seek_rowid(rowid, SeekOp::Eq).unwrap() && c.valid()) {
        return None;
    }
    Some(c.with_entry(|r, rec| (r, rec.to_vec())).unwrap())
}

fn one_step(c: &mut Cursor, rowid: i64) -> Option<(i64, Vec<u8>)> {
    let got = c
        .seek_rowid_entry(rowid, |r, rec| (r, rec.to_vec()))
        .unwrap();
    assert_eq!(c.valid(), got.is_some(), "rowid {rowid}: validity");
    got
}

/// Probes: in order (neighbours, misses between them), then scattered.
fn probes() -> Vec<i64> {
    let mut p: Vec<i64> = (0..=3010).collect();
    let mut x: u64 = 12345;
    for _ in 0..3000 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        p.push(((x >> 33) % 3100) as i64 - 50);
    }
    p.extend([i64::MIN, i64::MAX, -1, 0]);
    p
}

fn agree(w: &Txn, root: PageNo) {
    let mut a = w.cursor(root, BtreeKind::Table, None).unwrap();
    let mut b = w.cursor(root, BtreeKind::Table, None).unwrap();
    for rowid in probes() {
        let want = two_step(&mut b, rowid);
        assert_eq!(one_step(&mut a, rowid), want, "rowid {rowid}");
        if let Some((r, rec)) = want {
            assert_eq!((r, rec), (rowid, record(rowid)));
        }
    }
}

#[test]
fn matches_seek_then_entry_in_a_write_transaction() {
    let d = db();
    let w = d.begin_write(WAIT).unwrap();
    let root = fill(&w);
    agree(&w, root);
    w.commit().unwrap();
    let r = d.begin_read().unwrap();
    agree(&r, root);
}

#[test]
fn sees_rows_changed_between_seeks() {
    let d = db();
    let w = d.begin_write(WAIT).unwrap();
    let root = fill(&w);
    let mut c = w.cursor(root, BtreeKind::Table, None).unwrap();
    assert_eq!(one_step(&mut c, 300), Some((300, record(300))));
    // The cursor's frames end in the leaf holding 300: delete its neighbours and 300
    // itself, then insert 301, all through the same transaction.
    for r in [297, 300, 303] {
        assert!(w.table_delete(root, r).unwrap());
    }
    w.table_insert(root, 301, &record(301)).unwrap();
    assert_eq!(one_step(&mut c, 300), None);
    assert_eq!(one_step(&mut c, 303), None);
    assert_eq!(one_step(&mut c, 301), Some((301, record(301))));
    assert_eq!(one_step(&mut c, 306), Some((306, record(306))));
    // Grow the tree under a cursor positioned at its end (splits, new root levels).
    assert_eq!(one_step(&mut c, 3000), Some((3000, record(3000))));
    for r in 3001..4000 {
        w.table_insert(root, r, &record(r)).unwrap();
    }
    assert_eq!(one_step(&mut c, 3000), Some((3000, record(3000))));
    assert_eq!(one_step(&mut c, 3999), Some((3999, record(3999))));
    assert_eq!(one_step(&mut c, 4000), None);
}

#[test]
fn matches_in_a_concurrent_transaction() {
    let d = db();
    let root = {
        let w = d.begin_write(WAIT).unwrap();
        let root = fill(&w);
        w.commit().unwrap();
        root
    };
    let c = d.begin_concurrent().unwrap();
    agree(&c, root);
}
