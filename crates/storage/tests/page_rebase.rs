//! Rebasing a stale concurrent transaction by its pages (src/pages.rs P6, src/pager/rebase.rs
//! R1–R3): the pages are carried over only when no commit since the snapshot touched a page
//! the transaction used; otherwise its writes are replayed (concurrent.rs C7). Each case
//! checks the counters (which path ran), the rows, and the tree's integrity.

use parlite_storage::record::{decode, encode};
use parlite_storage::vfs::SimVfs;
use parlite_storage::{
    BtreeKind, ConcurrencyStats, Database, HeaderField, OpenOptions, PageNo, PagerConfig, SeekOp,
    Synchronous, Txn, ValueRef,
};
use std::sync::Arc;
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(5);

fn file_db() -> Database {
    let opts = OpenOptions {
        page_size: 1024,
        synchronous: Synchronous::Normal,
        ..OpenOptions::default()
    };
    let config = PagerConfig {
        background_checkpoint: false,
        ..PagerConfig::default()
    };
    Database::open_with_config(Arc::new(SimVfs::new(11)), "/rebase.db", opts, config).unwrap()
}

/// A record of `v` and a 300-byte blob: two or three rows per 1 KiB leaf.
fn row(v: i64) -> Vec<u8> {
    encode(&[ValueRef::Integer(v), ValueRef::Blob(&[7u8; 300])])
}

fn get(t: &Txn, root: PageNo, rowid: i64) -> Option<i64> {
    let mut c = t.cursor(root, BtreeKind::Table, None).unwrap();
    if !c.seek_rowid(rowid, SeekOp::Eq).unwrap() {
        return None;
    }
    match decode(&c.record().unwrap()).unwrap()[0] {
        ValueRef::Integer(v) => Some(v),
        _ => panic!("not an integer"),
    }
}

/// Rows 1..=n, value = rowid.
fn table(db: &Database, n: i64) -> PageNo {
    let w = db.begin_write(TIMEOUT).unwrap();
    let root = w.create_btree(BtreeKind::Table).unwrap();
    for r in 1..=n {
        w.table_insert(root, r, &row(r)).unwrap();
    }
    w.commit().unwrap();
    root
}

fn check(db: &Database, root: PageNo, want: &[(i64, Option<i64>)]) {
    check_with(db, root, want, &[]);
}

/// `check`, with `more` (trees created meanwhile) also walked by the integrity check.
fn check_with(db: &Database, root: PageNo, want: &[(i64, Option<i64>)], more: &[PageNo]) {
    let r = db.begin_read().unwrap();
    for &(k, v) in want {
        assert_eq!(get(&r, root, k), v, "row {k}");
    }
    let mut roots = vec![(root, BtreeKind::Table)];
    roots.extend(more.iter().map(|&m| (m, BtreeKind::Table)));
    let errors = r.integrity_check(&roots, 10).unwrap();
    assert!(errors.is_empty(), "{errors:?}");
}

fn delta(a: &ConcurrencyStats, b: &ConcurrencyStats) -> (u64, u64, u64) {
    (
        b.concurrent_rebased_commits - a.concurrent_rebased_commits,
        b.page_rebases - a.page_rebases,
        b.conflicts - a.conflicts,
    )
}

/// t updates row `mine` in place; u runs `other` and commits first; then t commits.
fn race(db: &Database, root: PageNo, mine: i64, other: impl FnOnce(&Txn)) -> (u64, u64, u64) {
    let before = db.concurrency_stats();
    let t = db.begin_concurrent().unwrap();
    assert_eq!(get(&t, root, mine), Some(mine));
    t.table_insert(root, mine, &row(mine + 1000)).unwrap();
    let u = db.begin_concurrent().unwrap();
    other(&u);
    u.commit().unwrap();
    t.commit().unwrap();
    delta(&before, &db.concurrency_stats())
}

#[test]
fn rows_on_distinct_pages_are_carried_over_without_replay() {
    let db = file_db();
    let root = table(&db, 200);
    let d = race(&db, root, 1, |u| {
        u.table_insert(root, 150, &row(1150)).unwrap()
    });
    assert_eq!(d, (1, 1, 0), "rebased, by pages, no conflict");
    check(
        &db,
        root,
        &[(1, Some(1001)), (150, Some(1150)), (2, Some(2))],
    );
}

#[test]
fn a_shared_leaf_is_replayed() {
    let db = file_db();
    let root = table(&db, 200);
    // Rows 1 and 2 share the first leaf: the carried page would lose u's write.
    let d = race(&db, root, 1, |u| {
        u.table_insert(root, 2, &row(1002)).unwrap()
    });
    assert_eq!(d, (1, 0, 0), "rebased by replay");
    check(&db, root, &[(1, Some(1001)), (2, Some(1002)), (3, Some(3))]);
}

#[test]
fn a_changed_page_on_the_path_is_replayed() {
    let db = file_db();
    let root = table(&db, 200);
    // Appending rows adds leaves under the interior pages t descended through.
    let d = race(&db, root, 1, |u| {
        for r in 201..=260 {
            u.table_insert(root, r, &row(r)).unwrap();
        }
    });
    assert_eq!(d, (1, 0, 0), "rebased by replay");
    check(
        &db,
        root,
        &[(1, Some(1001)), (260, Some(260)), (100, Some(100))],
    );
}

#[test]
fn a_leaf_emptied_into_its_neighbours_is_replayed() {
    // u deletes the rows around row 1 (not row 1 itself: no key conflict), so balancing
    // may move row 1's cell to another page and free t's leaf without writing it. The
    // parent on t's path changes, so t is replayed and its write lands where row 1 is now.
    let db = file_db();
    let root = table(&db, 200);
    let d = race(&db, root, 1, |u| {
        for r in 2..=60 {
            assert!(u.table_delete(root, r).unwrap());
        }
    });
    assert_eq!(d, (1, 0, 0), "rebased by replay");
    check(
        &db,
        root,
        &[(1, Some(1001)), (2, None), (60, None), (61, Some(61))],
    );
}

#[test]
fn a_grown_file_or_a_changed_page_1_is_replayed() {
    let db = file_db();
    let root = table(&db, 200);
    // u creates a tree at the end of the file: the page count differs.
    let created = std::cell::Cell::new(PageNo(0));
    let d = race(&db, root, 151, |u| {
        created.set(u.create_btree(BtreeKind::Table).unwrap());
    });
    assert_eq!(d, (1, 0, 0), "rebased by replay");
    // t writes page 1 (a header field) while u frees pages, which changes page 1's
    // freelist fields: t's page 1 would undo them.
    let before = db.concurrency_stats();
    let t = db.begin_concurrent().unwrap();
    t.set_header_field(HeaderField::UserVersion, 7).unwrap();
    let u = db.begin_concurrent().unwrap();
    for r in 2..=40 {
        assert!(u.table_delete(root, r).unwrap());
    }
    u.commit().unwrap();
    t.commit().unwrap();
    assert_eq!(delta(&before, &db.concurrency_stats()), (1, 0, 0));
    check_with(
        &db,
        root,
        &[(151, Some(1151)), (2, None), (41, Some(41))],
        &[created.get()],
    );
    let h = db.begin_read().unwrap().header().unwrap();
    assert_eq!(h.user_version, 7);
    assert!(h.freelist_count > 0, "u's freed pages are on the freelist");
}

#[test]
fn a_page_1_change_the_transaction_never_read_is_carried_over() {
    // t's writes never read page 1 (an in-place update), so u's freelist change there does
    // not stop the carry-over (R2 is about the pages t used).
    let db = file_db();
    let root = table(&db, 200);
    let d = race(&db, root, 150, |u| {
        for r in 2..=40 {
            assert!(u.table_delete(root, r).unwrap());
        }
    });
    assert_eq!(d.1, 0, "the deletes changed interior pages on t's path");
    let count = db.begin_read().unwrap().header().unwrap().page_count;
    let created = std::cell::Cell::new(PageNo(0));
    let d = race(&db, root, 151, |u| {
        // Reuses a free page: page 1's freelist fields change, the page count does not.
        created.set(u.create_btree(BtreeKind::Table).unwrap());
    });
    assert_eq!(d, (1, 1, 0), "rebased by pages");
    assert_eq!(db.begin_read().unwrap().header().unwrap().page_count, count);
    check_with(
        &db,
        root,
        &[(150, Some(1150)), (151, Some(1151)), (1, Some(1))],
        &[created.get()],
    );
}

#[test]
fn chains_of_stale_commits_each_carry_their_pages() {
    // Several transactions on distinct leaves, all begun on one snapshot, commit in turn:
    // each but the first finds its snapshot stale and is carried over by pages.
    let db = file_db();
    let root = table(&db, 200);
    let before = db.concurrency_stats();
    let rows = [10i64, 50, 90, 130, 170];
    let ts: Vec<Txn> = rows
        .iter()
        .map(|&r| {
            let t = db.begin_concurrent().unwrap();
            assert_eq!(get(&t, root, r), Some(r));
            t.table_insert(root, r, &row(r + 1000)).unwrap();
            t
        })
        .collect();
    for t in &ts {
        t.commit().unwrap();
    }
    let after = db.concurrency_stats();
    assert_eq!(delta(&before, &after), (4, 4, 0));
    assert_eq!(
        after.concurrent_fast_commits - before.concurrent_fast_commits,
        1
    );
    let want: Vec<(i64, Option<i64>)> = rows.iter().map(|&r| (r, Some(r + 1000))).collect();
    check(&db, root, &want);
}

/// A file database on `disk` at FULL (every acknowledged commit must survive).
fn full_db(disk: &SimVfs) -> Database {
    let opts = OpenOptions {
        page_size: 1024,
        synchronous: Synchronous::Full,
        ..OpenOptions::default()
    };
    let config = PagerConfig {
        checkpoint_log_bytes: 32 << 10,
        checkpoint_dirty_percent: 50,
        backpressure_dirty_percent: 100,
        background_checkpoint: false,
    };
    Database::open_with_config(Arc::new(disk.clone()), "/crash.db", opts, config).unwrap()
}

#[test]
fn crash_keeps_exactly_the_acknowledged_commits_carried_by_pages() {
    // Rounds of concurrent transactions begun on one snapshot, each updating distinct rows
    // in place (most commits after the first of a round are carried over by pages), I/O
    // failing from a random call, then a power loss: recovery shows exactly the
    // acknowledged commits, or those plus the one in flight (durability as for any commit:
    // a carried view commits through the same frame, group commit and checkpoint).
    use rand::{rngs::StdRng, Rng, SeedableRng};
    let base: u64 = std::env::var("PARLITE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random);
    eprintln!("seed = {base} (replay with PARLITE_SEED={base})");
    let mut carried = 0;
    for case in 0..60u64 {
        let seed = base.wrapping_add(case);
        let mut rng = StdRng::seed_from_u64(seed);
        let disk = SimVfs::new(seed);
        let db = full_db(&disk);
        let root = table(&db, 120);
        let mut acked: Vec<i64> = (0..=120).collect();
        let mut in_flight: Option<Vec<i64>> = None;
        disk.fail_from(disk.io_calls() + rng.gen_range(0..300));
        'run: for _round in 0..15 {
            let mut txns = Vec::new();
            let mut used = std::collections::BTreeSet::new();
            for _ in 0..rng.gen_range(2..5) {
                let Ok(t) = db.begin_concurrent() else {
                    break 'run;
                };
                let mut rows = Vec::new();
                for _ in 0..rng.gen_range(1..3) {
                    let r = rng.gen_range(1..=120i64);
                    if !used.insert(r) {
                        continue;
                    }
                    let v = rng.gen_range(0..1_000_000);
                    if t.table_insert(root, r, &row(v)).is_err() {
                        break 'run;
                    }
                    rows.push((r, v));
                }
                txns.push((t, rows));
            }
            for (t, rows) in txns {
                let mut next = acked.clone();
                for &(r, v) in &rows {
                    next[r as usize] = v;
                }
                let before = db.concurrency_stats().page_rebases;
                match t.commit() {
                    Ok(()) => {
                        acked = next;
                        carried += db.concurrency_stats().page_rebases - before;
                    }
                    Err(parlite_storage::StorageError::Conflict { .. }) => {
                        panic!("seed {seed}: disjoint rows conflicted")
                    }
                    Err(_) => {
                        in_flight = Some(next);
                        break 'run;
                    }
                }
            }
        }
        let after = disk.crash(seed ^ 0x5EED, parlite_storage::vfs::CrashMode::PowerLoss);
        drop(db);
        let db = full_db(&after);
        let r = db.begin_read().unwrap();
        let got: Vec<i64> = (0..=120)
            .map(|k| {
                if k == 0 {
                    0
                } else {
                    get(&r, root, k).unwrap_or(-1)
                }
            })
            .collect();
        assert!(
            got == acked || in_flight.as_ref() == Some(&got),
            "seed {seed}: recovered rows differ from the acknowledged commits"
        );
        let errors = r.integrity_check(&[(root, BtreeKind::Table)], 10).unwrap();
        assert!(errors.is_empty(), "seed {seed}: {errors:?}");
    }
    assert!(carried > 0, "no commit was carried over by pages");
}

#[test]
fn a_rebased_commit_releases_both_snapshots_once() {
    // A rebased commit ends two registrations, the rebased view's (by its publication,
    // cache C14) and its own view's. Each once: a reader registered at the own view's
    // snapshot keeps reading it while later commits prune; and not never: with every
    // transaction over, no snapshot is left.
    for by_pages in [true, false] {
        let db = file_db();
        let root = table(&db, 200);
        let reader = db.begin_read().unwrap();
        let t = db.begin_concurrent().unwrap();
        assert_eq!(
            t.snapshot_seq(),
            reader.snapshot_seq(),
            "one registration, two holders"
        );
        assert_eq!(get(&t, root, 1), Some(1));
        t.table_insert(root, 1, &row(1001)).unwrap();
        let u = db.begin_concurrent().unwrap();
        // Row 150 lies on another leaf (carried over), row 2 on t's (replayed).
        let other = if by_pages { 150 } else { 2 };
        u.table_insert(root, other, &row(other + 1000)).unwrap();
        u.commit().unwrap();
        let before = db.concurrency_stats();
        t.commit().unwrap();
        let d = delta(&before, &db.concurrency_stats());
        assert_eq!(d, (1, u64::from(by_pages), 0), "by pages: {by_pages}");
        // Commits to the reader's pages, each pruning what no live snapshot reads.
        for v in 0..3 {
            let w = db.begin_write(TIMEOUT).unwrap();
            for r in [1, 2, 150] {
                w.table_insert(root, r, &row(2000 + v)).unwrap();
            }
            w.commit().unwrap();
        }
        for r in [1, 2, 150, 151] {
            assert_eq!(get(&reader, root, r), Some(r), "reader's row {r}");
        }
        drop(reader);
        check(
            &db,
            root,
            &[(1, Some(2002)), (2, Some(2002)), (150, Some(2002))],
        );
        std::thread::sleep(Duration::from_millis(5));
        let s = db.stats();
        assert_eq!(s.oldest_snapshot_age_ms, 0, "a snapshot outlived its views");
        assert_eq!(
            s.cache_versions, s.cache_pages,
            "old versions kept for no one"
        );
    }
}
