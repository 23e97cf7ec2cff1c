//! Write transactions larger than the cache (spill.rs S1–S4, pager D6), over the simulated
//! disk: what they read back while they write, their savepoints and rollbacks, their
//! commits, and crashes at every I/O call of such a commit.

use super::*;
use crate::header::init_header;
use crate::vfs::{CrashMode, SimVfs};

const PS: usize = 512;
/// The cache's bound; a view spills past `spill::SPILL_PAGES_MIN` (32) private pages.
const CACHE_PAGES: usize = 16;
/// Pages a big transaction writes: ten times the spill bound.
const BIG: u32 = 320;

fn open(vfs: &SimVfs) -> FileBackend {
    let opts = OpenOptions {
        page_size: PS as u32,
        cache_pages_max: CACHE_PAGES,
        ..OpenOptions::default()
    };
    // Rounds run inline: the I/O calls of a commit are then the same at every run. And
    // none runs after a commit by itself (thresholds out of reach): what the commit wrote
    // must be durable through its own syncs.
    let config = PagerConfig {
        background_checkpoint: false,
        checkpoint_log_bytes: 1 << 40,
        checkpoint_dirty_percent: 1 << 20,
        backpressure_dirty_percent: 1 << 21,
    };
    FileBackend::open_with(Arc::new(vfs.clone()), "db", &opts, config).unwrap()
}

/// Page 1, then pages 2..=10 holding `1`, committed and checkpointed.
fn base_state(b: &FileBackend) {
    let mut w = b.begin_write(Duration::from_secs(1)).unwrap();
    let p = w.append_page().unwrap();
    init_header(w.page_mut(p).unwrap(), PS as u32);
    w.commit().unwrap();
    let mut w = b.begin_write(Duration::from_secs(1)).unwrap();
    for pgno in 2..=10 {
        w.append_page().unwrap();
        stamp(&mut *w, pgno, 1);
    }
    w.commit().unwrap();
    b.checkpoint().unwrap();
}

/// Writes `value` and the page number into page `pgno` (which must exist).
fn stamp(w: &mut dyn WriteView, pgno: u32, value: u32) {
    let p = w.page_mut(PageNo(pgno)).unwrap();
    p[200..204].copy_from_slice(&value.to_be_bytes());
    p[300..304].copy_from_slice(&pgno.to_be_bytes());
    p[400..].fill(value as u8);
}

/// The value `stamp` wrote into `pgno`, checking the page number beside it.
fn value(v: &dyn PageRead, pgno: u32) -> u32 {
    let p = v.page(PageNo(pgno)).unwrap();
    let at = |o: usize| u32::from_be_bytes([p[o], p[o + 1], p[o + 2], p[o + 3]]);
    assert_eq!(at(300), pgno, "page {pgno} holds another page's image");
    assert!(
        p[400..].iter().all(|&b| b == at(200) as u8),
        "page {pgno} torn"
    );
    at(200)
}

/// Pages 2..=BIG of a view all hold `value` (pages past 10 appended first if needed).
fn write_big(w: &mut dyn WriteView, value: u32) {
    while w.page_count() < BIG {
        w.append_page().unwrap();
    }
    for pgno in 2..=BIG {
        stamp(w, pgno, value);
    }
}

/// A lock-holding view, unboxed so the tests can look at its resident pages.
fn writer(b: &FileBackend) -> Box<FileWriteView> {
    Box::new(b.lock_holder_view(Duration::from_secs(1)).unwrap())
}

/// S1, S3 and D6: a transaction of ten times its bound keeps at most the bound resident,
/// reads every page back as written (the spilled ones from its file), commits, and
/// leaves the cache within its bound; readers before the commit see none of it.
#[test]
fn a_transaction_larger_than_the_cache_runs_in_the_bound_and_commits() {
    let vfs = SimVfs::new(1);
    let b = open(&vfs);
    base_state(&b);
    let before = b.begin_read().unwrap();
    let mut w = writer(&b);
    write_big(&mut *w, 2);
    assert!(
        w.private.len() <= spill::SPILL_PAGES_MIN,
        "{}",
        w.private.len()
    );
    for pgno in 2..=BIG {
        assert_eq!(value(&*w, pgno), 2, "read-your-writes of page {pgno}");
    }
    // Written again after the spill: each page comes back from the file and leaves again.
    for pgno in (2..=BIG).rev() {
        stamp(&mut *w, pgno, 3);
    }
    assert!(w.private.len() <= spill::SPILL_PAGES_MIN);
    let stats = b.stats();
    assert!(stats.spilled_pages >= 2 * (BIG as u64 - 64), "{stats:?}");
    w.commit().unwrap();
    let stats = b.stats();
    assert_eq!(stats.spilled_direct_pages, (BIG - 10) as u64, "{stats:?}");
    assert!(
        b.inner.cache.len() <= CACHE_PAGES + 16,
        "{}",
        b.inner.cache.len()
    );
    // The reader's snapshot is untouched; a new one sees every page.
    assert_eq!(before.page_count(), 10);
    for pgno in 2..=10 {
        assert_eq!(value(&*before, pgno), 1);
    }
    let r = b.begin_read().unwrap();
    assert_eq!(r.page_count(), BIG);
    for pgno in 2..=BIG {
        assert_eq!(value(&*r, pgno), 3);
    }
    drop((r, before));
    drop(b);
    let b = open(&vfs);
    let r = b.begin_read().unwrap();
    for pgno in 2..=BIG {
        assert_eq!(value(&*r, pgno), 3, "page {pgno} after reopen");
    }
}

/// A spilled transaction rolled back, and one whose savepoints are rolled back to: the
/// pages come back exactly as they were at the savepoint (S2), in memory or spilled.
#[test]
fn savepoints_and_rollback_restore_spilled_pages_exactly() {
    let vfs = SimVfs::new(2);
    let b = open(&vfs);
    base_state(&b);
    let mut w = writer(&b);
    write_big(&mut *w, 2);
    assert!(!w.spill.is_empty(), "nothing spilled");
    let outer = w.savepoint();
    for pgno in 2..=BIG / 2 {
        stamp(&mut *w, pgno, 3);
    }
    let inner = w.savepoint();
    for pgno in 2..=BIG {
        stamp(&mut *w, pgno, 4);
    }
    while w.page_count() < BIG + 100 {
        w.append_page().unwrap();
        let n = w.page_count();
        stamp(&mut *w, n, 4);
    }
    w.rollback_to(inner).unwrap();
    assert_eq!(w.page_count(), BIG);
    for pgno in 2..=BIG {
        let want = if pgno <= BIG / 2 { 3 } else { 2 };
        assert_eq!(
            value(&*w, pgno),
            want,
            "page {pgno} after rollback to inner"
        );
    }
    // Released into the outer savepoint, which still undoes it.
    for pgno in 2..=BIG {
        stamp(&mut *w, pgno, 5);
    }
    w.release(inner);
    w.rollback_to(outer).unwrap();
    for pgno in 2..=BIG {
        assert_eq!(value(&*w, pgno), 2, "page {pgno} after rollback to outer");
    }
    w.release(outer);
    w.commit().unwrap();
    let r = b.begin_read().unwrap();
    for pgno in 2..=BIG {
        assert_eq!(value(&*r, pgno), 2);
    }
    drop(r);
    // A whole spilled transaction rolled back leaves nothing.
    let mut w = b.begin_write(Duration::from_secs(1)).unwrap();
    while w.page_count() < 2 * BIG {
        w.append_page().unwrap();
    }
    for pgno in 2..=2 * BIG {
        stamp(&mut *w, pgno, 9);
    }
    let spilled = b.stats().spilled_pages;
    w.rollback();
    assert!(spilled > 2 * BIG as u64, "{spilled}");
    let r = b.begin_read().unwrap();
    assert_eq!(r.page_count(), BIG);
    for pgno in 2..=BIG {
        assert_eq!(value(&*r, pgno), 2);
    }
}

/// S3: a damaged spill file fails the read and the commit with `Corrupt`, never a panic
/// or a wrong page; the database keeps its state.
#[test]
fn a_damaged_spill_file_is_an_error() {
    let vfs = SimVfs::new(3);
    let b = open(&vfs);
    base_state(&b);
    let mut w = writer(&b);
    write_big(&mut *w, 2);
    w.spill.damage(20);
    assert!(matches!(
        w.page(PageNo(20)),
        Err(StorageError::Corrupt { .. })
    ));
    assert!(matches!(
        w.page_mut(PageNo(20)),
        Err(StorageError::Corrupt { .. })
    ));
    assert!(matches!(w.commit(), Err(StorageError::Corrupt { .. })));
    let r = b.begin_read().unwrap();
    assert_eq!(r.page_count(), 10);
    for pgno in 2..=10 {
        assert_eq!(value(&*r, pgno), 1);
    }
}

/// D6 and D1 under crashes: a spilled commit whose I/O call number `k` fails, for every
/// `k` of the commit, then a power loss: the database reopens at the state before the
/// transaction or, if the commit returned Ok, after it — never a mix. Then the same
/// with the process dying (every issued write kept).
#[test]
fn a_crash_at_any_call_of_a_spilled_commit_keeps_it_atomic() {
    for mode in [CrashMode::PowerLoss, CrashMode::ProcessCrash] {
        let mut k = 0u64;
        loop {
            let vfs = SimVfs::new(100 + k);
            let b = open(&vfs);
            base_state(&b);
            // The transaction also rewrites pages of the snapshot (logged in the frame).
            let mut w = b.begin_write(Duration::from_secs(1)).unwrap();
            write_big(&mut *w, 2);
            vfs.fail_at(vfs.io_calls() + k);
            let committed = w.commit().is_ok();
            let crashed = vfs.crash(k, mode);
            drop(b);
            let b = open(&crashed);
            let r = b.begin_read().unwrap();
            let after = r.page_count() == BIG;
            if committed {
                assert!(after, "{mode:?} k={k}: an acknowledged commit was lost");
            }
            let want = if after { 2 } else { 1 };
            assert_eq!(r.page_count(), if after { BIG } else { 10 }, "k={k}");
            for pgno in 2..=r.page_count() {
                assert_eq!(value(&*r, pgno), want, "{mode:?} k={k}: page {pgno}");
            }
            if committed {
                // The fault fell past the commit's last call: every call was covered.
                break;
            }
            k += 1;
        }
        assert!(
            k > BIG as u64 - 10,
            "{mode:?}: the commit made only {k} calls"
        );
    }
}

/// D6's preconditions: pages past the snapshot's count that an earlier commit logged and
/// a later one truncated away (still in the log and in the cache) are neither replayed
/// over the spilled commit's images at recovery (the full checkpoint emptied the log
/// first) nor read from the cache after it (`Cache::forget_unseen`).
#[test]
fn a_spilled_commit_over_truncated_logged_pages_reads_and_recovers_its_own() {
    let vfs = SimVfs::new(7);
    let b = open(&vfs);
    base_state(&b);
    // Kept in memory (`cache_spill=OFF`), so logged whole and published.
    let mut w = b.begin_write(Duration::from_secs(1)).unwrap();
    w.set_spill_pages(None);
    while w.page_count() < 400 {
        w.append_page().unwrap();
        let n = w.page_count();
        stamp(&mut *w, n, 5);
    }
    w.commit().unwrap();
    // Read while cached, so their images have entries.
    let r = b.begin_read().unwrap();
    assert_eq!(value(&*r, 300), 5);
    drop(r);
    let mut w = b.begin_write(Duration::from_secs(1)).unwrap();
    w.truncate(10).unwrap();
    w.commit().unwrap();
    assert!(
        b.stats().log_frames_bytes > 0,
        "the earlier commits are still logged"
    );
    assert!(
        b.inner.cache.contains(PageNo(300)),
        "page 300 keeps its stale entry"
    );
    let mut w = writer(&b);
    write_big(&mut *w, 2);
    w.commit().unwrap();
    let r = b.begin_read().unwrap();
    // First the page whose stale entry was cached (reading the others evicts it).
    assert_eq!(value(&*r, 300), 2, "page 300 after the commit");
    assert_eq!(r.page_count(), BIG);
    for pgno in 2..=BIG {
        assert_eq!(value(&*r, pgno), 2, "page {pgno} after the commit");
    }
    drop(r);
    let crashed = vfs.crash(7, CrashMode::ProcessCrash);
    drop(b);
    let b = open(&crashed);
    let r = b.begin_read().unwrap();
    assert_eq!(r.page_count(), BIG);
    for pgno in 2..=BIG {
        assert_eq!(value(&*r, pgno), 2, "page {pgno} after recovery");
    }
}
