//! A long reader beside 100,000 small commits on a real file (pager C2, log checkpoint step 5):
//! - the reader sees exactly its snapshot throughout (checked periodically and at the end);
//! - the log (`<db>-plog` + `<db>-plog2`) stays bounded while commits continue: background
//!   checkpoint rounds keep happening although a snapshot older than every checkpoint is
//!   live, and the old page versions it needs live in the cache, not the log (bound: twice
//!   the 4 MiB threshold, where committers start to help the checkpointer, plus one frame
//!   and the two headers; docs/log-and-recovery.md 3b);
//! - the cache's page versions held for the old snapshot stay bounded, and are released
//!   once the reader ends.
//!
//! Replay with `PARLITE_SEED=N`.

use parlite_storage::record::{decode, encode, ValueRef};
use parlite_storage::{BtreeKind, Database, OpenOptions, PageNo, Synchronous, Txn};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::time::{Duration, Instant};

const ROWS: i64 = 200;
const WRITERS: u64 = 4;
const COMMITS: u64 = 100_000;
/// Auto-checkpoint threshold on the log's frames (docs/log-and-recovery.md step 5).
const CHECKPOINT_LOG_BYTES: u64 = 4 << 20;
/// One frame of these commits: a few pages (the updated leaf, perhaps page 1) plus headers.
const FRAME_BYTES_MAX: u64 = 64 << 10;
const CACHE_PAGES_MAX: usize = 2000;
/// Both log files together (see the module docs).
const LOG_BYTES_MAX: u64 = 2 * CHECKPOINT_LOG_BYTES + FRAME_BYTES_MAX + 64;

fn seed() -> u64 {
    std::env::var("PARLITE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x10E6)
}

fn value_of(t: &Txn, root: PageNo, rowid: i64) -> i64 {
    let mut c = t.cursor(root, BtreeKind::Table, None).unwrap();
    assert!(c.seek_rowid(rowid, parlite_storage::SeekOp::Eq).unwrap());
    match decode(&c.record().unwrap()).unwrap()[0] {
        ValueRef::Integer(v) => v,
        ref other => panic!("row {rowid}: {other:?}"),
    }
}

/// Every row's value as the transaction sees it, by a full scan.
fn scan(t: &Txn, root: PageNo) -> Vec<(i64, i64)> {
    let mut out = Vec::new();
    let mut c = t.cursor(root, BtreeKind::Table, None).unwrap();
    let mut more = c.first().unwrap();
    while more {
        let v = match decode(&c.record().unwrap()).unwrap()[0] {
            ValueRef::Integer(v) => v,
            ref other => panic!("{other:?}"),
        };
        out.push((c.rowid().unwrap(), v));
        more = c.next().unwrap();
    }
    out
}

#[test]
fn long_reader_sees_its_snapshot_while_the_log_stays_bounded() {
    let seed = seed();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.db");
    let log_paths = [
        format!("{}-plog", path.display()),
        format!("{}-plog2", path.display()),
    ];
    let opts = OpenOptions {
        cache_pages_max: CACHE_PAGES_MAX,
        synchronous: Synchronous::Off,
        ..OpenOptions::default()
    };
    let db = Database::open(&path, opts).unwrap();
    let t = db.begin_write(Duration::from_secs(5)).unwrap();
    let root = t.create_btree(BtreeKind::Table).unwrap();
    // Values of ~100 bytes so the table spans several leaves.
    for k in 0..ROWS {
        t.table_insert(
            root,
            k,
            &encode(&[ValueRef::Integer(-1), ValueRef::Blob(&[7; 100])]),
        )
        .unwrap();
    }
    t.commit().unwrap();
    drop(t);

    let reader = db.begin_read().unwrap();
    let snapshot = scan(&reader, root);
    assert_eq!(snapshot.len(), ROWS as usize);
    let before = db.stats();
    let start = Instant::now();

    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let db = db.clone();
            std::thread::spawn(move || {
                let mut rng = StdRng::seed_from_u64(seed ^ w);
                for i in 0..COMMITS / WRITERS {
                    let k = rng.gen_range(0..ROWS);
                    let t = db.begin_write(Duration::from_secs(30)).unwrap();
                    let v = (w * COMMITS + i) as i64;
                    // Random bytes, so each frame carries ~100 changed bytes and the log
                    // passes the checkpoint threshold several times.
                    let blob: Vec<u8> = (0..100).map(|_| rng.gen()).collect();
                    t.table_insert(
                        root,
                        k,
                        &encode(&[ValueRef::Integer(v), ValueRef::Blob(&blob)]),
                    )
                    .unwrap();
                    t.commit().unwrap();
                }
            })
        })
        .collect();

    // The reader keeps reading while the writers run; it samples the log and the cache.
    let mut rng = StdRng::seed_from_u64(seed);
    let (mut log_max, mut versions_max, mut checks) = (0u64, 0usize, 0u64);
    while writers.iter().any(|h| !h.is_finished()) {
        let k = rng.gen_range(0..ROWS);
        assert_eq!(
            value_of(&reader, root, k),
            -1,
            "reader saw a later commit (row {k})"
        );
        checks += 1;
        if checks % 64 == 0 {
            assert_eq!(scan(&reader, root), snapshot, "reader's scan changed");
            let log: u64 = log_paths
                .iter()
                .map(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0))
                .sum();
            log_max = log_max.max(log);
            versions_max = versions_max.max(db.stats().cache_versions);
        }
    }
    for h in writers {
        h.join().unwrap();
    }
    let elapsed = start.elapsed();
    assert_eq!(scan(&reader, root), snapshot, "reader's final scan changed");
    let s = db.stats();
    versions_max = versions_max.max(s.cache_versions);
    let held = s.cache_versions;
    println!(
        "{COMMITS} commits by {WRITERS} writers in {elapsed:?} beside one reader ({checks} reads): \
         {} checkpoints, log max {log_max} bytes (bound {LOG_BYTES_MAX}), cache versions max \
         {versions_max} (held at the end {held}, cache pages {}); writer waits {} (max {} us)",
        s.checkpoints - before.checkpoints,
        s.cache_pages,
        s.writer_waits,
        s.writer_wait_max_us,
    );
    assert_eq!(s.commits - before.commits, COMMITS, "{s:?}");
    assert!(
        s.checkpoints - before.checkpoints >= 2,
        "checkpoints stopped beside the long reader: {s:?}"
    );
    assert!(log_max <= LOG_BYTES_MAX, "log grew to {log_max} bytes");
    assert!(s.oldest_snapshot_age_ms > 0, "{s:?}");
    // Bounded independently of the commit count: C2 keeps, per page, the image the old
    // snapshot sees, the newest, and those of the (short) writers' snapshots in flight; the
    // assert allows the cache's capacity plus two images per cached page.
    assert!(
        versions_max <= CACHE_PAGES_MAX + 2 * (s.cache_pages.max(1)),
        "cache versions unbounded: {versions_max} ({s:?})"
    );

    // After the reader ends (and one more commit prunes), only newest images remain.
    drop(reader);
    let t = db.begin_write(Duration::from_secs(5)).unwrap();
    t.table_insert(root, 0, &encode(&[ValueRef::Integer(0)]))
        .unwrap();
    t.commit().unwrap();
    drop(t);
    let after = db.stats();
    println!(
        "after the reader: cache versions {} for {} cache pages",
        after.cache_versions, after.cache_pages
    );
    assert_eq!(
        after.cache_versions, after.cache_pages,
        "old versions kept after the reader ended: {after:?}"
    );
    let r = db.begin_read().unwrap();
    assert!(r
        .integrity_check(&[(root, BtreeKind::Table)], 10)
        .unwrap()
        .is_empty());
}
