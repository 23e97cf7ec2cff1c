//! Group commit on a real file system (pager D1 and its gathering, `Inner::gather_frames`):
//! `Full` committers on many threads share fsyncs, every acknowledged row is there, and a
//! single writer still gets one fsync per commit (it never waits for company).

use parlite_storage::record::{encode, ValueRef};
use parlite_storage::{BtreeKind, Database, OpenOptions, OsVfs, PagerConfig, Synchronous};
use std::sync::Arc;
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(10);

fn temp_db(name: &str) -> (std::path::PathBuf, Database) {
    let dir = std::env::temp_dir().join(format!(
        "parlite-group-commit-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("g.db");
    let opts = OpenOptions {
        synchronous: Synchronous::Full,
        ..OpenOptions::default()
    };
    let db = Database::open_with_config(
        Arc::new(OsVfs),
        path.to_str().unwrap(),
        opts,
        PagerConfig::default(),
    )
    .unwrap();
    (dir, db)
}

#[test]
fn a_single_writer_gets_one_fsync_per_commit() {
    let (dir, db) = temp_db("single");
    let t = db.begin_write(TIMEOUT).unwrap();
    let root = t.create_btree(BtreeKind::Table).unwrap();
    t.commit().unwrap();
    let before = db.stats();
    for i in 0..40i64 {
        let t = db.begin_write(TIMEOUT).unwrap();
        t.table_insert(root, i, &encode(&[ValueRef::Integer(i)]))
            .unwrap();
        t.commit().unwrap();
    }
    let after = db.stats();
    assert_eq!(after.commits - before.commits, 40);
    assert_eq!(after.commit_syncs - before.commit_syncs, 40, "{after:?}");
    drop(db);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn full_committers_on_eight_threads_share_fsyncs() {
    let (dir, db) = temp_db("eight");
    let t = db.begin_write(TIMEOUT).unwrap();
    let root = t.create_btree(BtreeKind::Table).unwrap();
    t.commit().unwrap();
    // How slow an fsync is here: on tmpfs (~µs) there is nothing to gather.
    let started = std::time::Instant::now();
    for i in 0..10i64 {
        let t = db.begin_write(TIMEOUT).unwrap();
        t.table_insert(root, 100_000 + i, &encode(&[ValueRef::Integer(i)]))
            .unwrap();
        t.commit().unwrap();
    }
    let slow_fsync = started.elapsed() >= Duration::from_millis(2);
    let before = db.stats();
    let threads: Vec<_> = (0..8i64)
        .map(|w| {
            let db = db.clone();
            std::thread::spawn(move || {
                for i in 0..60i64 {
                    let row = w * 1_000 + i;
                    let t = db.begin_write(TIMEOUT).unwrap();
                    t.table_insert(root, row, &encode(&[ValueRef::Integer(row)]))
                        .unwrap();
                    t.commit().unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let after = db.stats();
    let commits = after.commits - before.commits;
    let syncs = after.commit_syncs - before.commit_syncs;
    assert_eq!(commits, 480);
    println!("{commits} commits, {syncs} fsyncs");
    if slow_fsync {
        assert!(
            syncs * 3 / 2 <= commits,
            "{commits} commits took {syncs} fsyncs"
        );
    }
    let r = db.begin_read().unwrap();
    let mut c = r.cursor(root, BtreeKind::Table, None).unwrap();
    let (mut n, mut more) = (0, c.first().unwrap());
    while more {
        n += 1;
        more = c.next().unwrap();
    }
    assert_eq!(n, 490);
    drop(r);
    drop(db);
    let _ = std::fs::remove_dir_all(dir);
}
