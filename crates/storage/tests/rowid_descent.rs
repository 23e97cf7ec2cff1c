//! Rowid seeks (`TreeCursor::descend_table` and the same-leaf `seek_in_leaf`, both probing
//! cells through `TableCells`) against a `BTreeMap` model, on seeded random trees of many
//! shapes: 512-byte to 4 KiB pages (deep and shallow trees), rowids of every varint length
//! (dense small ones, ones below 2^21 that the inline decoding covers, and any i64,
//! negatives taking nine bytes), records that spill onto overflow pages, and the trees
//! left after deleting most rows (merges, shrinking depth). Every probe is sought with
//! every `SeekOp` on a fresh cursor (a full descent) and on one long-lived cursor (the
//! same-leaf shortcut first), and looked up by `seek_rowid_entry`. A reader descending
//! while writers commit new versions of the same pages must keep seeing its snapshot.
//!
//! The searches start where the rowid would be if a page's keys were spread evenly over
//! the bracket its parent gives it (`TableCells::search_in`): rowids inserted in ascending
//! order (the guess exact), in far-apart clusters and spread geometrically (guesses far
//! off, the probes galloping to the answer) check that only the probes decide the answer;
//! a long-lived cursor kept across the transaction's own inserts and deletes checks that a
//! leaf's bracket is not used after the tree changed.
//!
//! Replay with `PARLITE_SEED=N`.

use parlite_storage::record::{decode, encode, ValueRef};
use parlite_storage::{BtreeKind, Cursor, Database, OpenOptions, PageNo, SeekOp, Synchronous, Txn};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::ops::Bound::{Excluded, Included, Unbounded};
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(30);
const OPS: [SeekOp; 5] = [SeekOp::Eq, SeekOp::Ge, SeekOp::Gt, SeekOp::Le, SeekOp::Lt];

fn seed() -> u64 {
    std::env::var("PARLITE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0xDE5C)
}

#[derive(Clone, Copy, Debug)]
enum Rowids {
    /// 0..n: one- and two-byte varints, keys packed densely.
    Dense,
    /// Below 2^21: up to three bytes, the inline decoding's limit, and just past it.
    Small,
    /// Any i64: four- to nine-byte varints, negatives.
    Any,
    /// 1..=n inserted in ascending order, as rowids are usually assigned: every page's
    /// keys evenly spread over its bracket.
    Ascending,
    /// Runs of consecutive rowids starting at eight far-apart points (negative ones too):
    /// a page across two runs has most of its bracket empty.
    Clustered,
    /// Just above powers of two, either sign: keys crowded at one end of most brackets.
    Geometric,
}

fn rowid(rng: &mut StdRng, kind: Rowids, n: usize) -> i64 {
    match kind {
        Rowids::Dense => rng.gen_range(0..n as i64 * 2),
        Rowids::Small => rng.gen_range(0..(1i64 << 21) + 4096),
        Rowids::Any => match rng.gen_range(0..4) {
            0 => rng.gen(),
            1 => rng.gen_range(-300..300),
            2 => rng.gen_range(i64::MAX - 1000..=i64::MAX),
            _ => rng.gen_range(i64::MIN..i64::MIN + 1000),
        },
        Rowids::Ascending => rng.gen_range(-2..n as i64 + 3),
        Rowids::Clustered => {
            const STARTS: [i64; 8] = [
                i64::MIN,
                -(1 << 40),
                -5000,
                0,
                1 << 20,
                1 << 33,
                1 << 50,
                i64::MAX - 20_000,
            ];
            STARTS[rng.gen_range(0..8)].saturating_add(rng.gen_range(0..n as i64 / 4 + 2))
        }
        Rowids::Geometric => {
            let p = 1i64 << rng.gen_range(0..62);
            let v = p.saturating_add(rng.gen_range(-2..p / 16 + 3));
            if rng.gen() {
                v
            } else {
                -v
            }
        }
    }
}

/// A record whose length says which row it is for: mostly small, some spilling onto
/// overflow pages at every page size used here.
fn record(rng: &mut StdRng, rowid: i64) -> Vec<u8> {
    let len = match rng.gen_range(0..40) {
        0 => rng.gen_range(1000..6000),
        1 => rng.gen_range(200..500),
        _ => rng.gen_range(0..40),
    };
    let blob = vec![rowid as u8; len];
    encode(&[ValueRef::Integer(rowid), ValueRef::Blob(&blob)])
}

/// The rowid `op` lands on from `probe`, per the model.
fn expect(model: &BTreeMap<i64, Vec<u8>>, probe: i64, op: SeekOp) -> Option<i64> {
    let hit = match op {
        SeekOp::Eq => model.get_key_value(&probe),
        SeekOp::Ge => model.range((Included(probe), Unbounded)).next(),
        SeekOp::Gt => model.range((Excluded(probe), Unbounded)).next(),
        SeekOp::Le => model.range((Unbounded, Included(probe))).next_back(),
        SeekOp::Lt => model.range((Unbounded, Excluded(probe))).next_back(),
    };
    hit.map(|(k, _)| *k)
}

fn seek(c: &mut Cursor, probe: i64, op: SeekOp) -> Option<i64> {
    c.seek_rowid(probe, op).unwrap().then(|| c.rowid().unwrap())
}

/// Probes: every key and its neighbours, the extremes, and random rowids of the kind.
fn probes(model: &BTreeMap<i64, Vec<u8>>, rng: &mut StdRng, kind: Rowids) -> Vec<i64> {
    let mut p = vec![i64::MIN, i64::MIN + 1, -1, 0, 1, i64::MAX - 1, i64::MAX];
    for &k in model.keys() {
        p.extend([k.saturating_sub(1), k, k.saturating_add(1)]);
    }
    for _ in 0..model.len().max(100) {
        p.push(rowid(rng, kind, model.len()));
    }
    p
}

/// Every probe, every op, on a fresh cursor and on one long-lived cursor; the row's
/// payload by `seek_rowid_entry`.
fn check(t: &Txn, root: PageNo, model: &BTreeMap<i64, Vec<u8>>, rng: &mut StdRng, kind: Rowids) {
    let mut kept = t.cursor(root, BtreeKind::Table, None).unwrap();
    let mut entry = t.cursor(root, BtreeKind::Table, None).unwrap();
    for probe in probes(model, rng, kind) {
        for op in OPS {
            let want = expect(model, probe, op);
            let mut fresh = t.cursor(root, BtreeKind::Table, None).unwrap();
            assert_eq!(seek(&mut fresh, probe, op), want, "fresh {op:?} {probe}");
            assert_eq!(seek(&mut kept, probe, op), want, "kept {op:?} {probe}");
        }
        let got = entry
            .seek_rowid_entry(probe, |r, rec| (r, rec.to_vec()))
            .unwrap();
        let want = model.get(&probe).map(|rec| (probe, rec.clone()));
        assert_eq!(got, want, "seek_rowid_entry {probe}");
    }
}

fn shapes(page_size: u32, kind: Rowids, n: usize, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let d = Database::open_in_memory(OpenOptions {
        page_size,
        ..OpenOptions::default()
    })
    .unwrap();
    let w = d.begin_write(WAIT).unwrap();
    let root = w.create_btree(BtreeKind::Table).unwrap();
    let mut model = BTreeMap::new();
    while model.len() < n {
        let r = match kind {
            Rowids::Ascending => model.len() as i64 + 1,
            _ => rowid(&mut rng, kind, n),
        };
        let rec = record(&mut rng, r);
        w.table_insert(root, r, &rec).unwrap();
        model.insert(r, rec);
    }
    let ctx = format!("page {page_size}, {kind:?}, {n} rows, seed {seed}");
    eprintln!("{ctx}");
    check(&w, root, &model, &mut rng, kind);
    w.commit().unwrap();
    let r = d.begin_read().unwrap();
    check(&r, root, &model, &mut rng, kind);
    drop(r);
    // Delete most rows (leaves merge, the tree loses levels), in a random order.
    let w = d.begin_write(WAIT).unwrap();
    let keys: Vec<i64> = model.keys().copied().collect();
    for k in keys {
        if rng.gen_range(0..10) < 8 {
            assert!(w.table_delete(root, k).unwrap(), "{ctx}: delete {k}");
            model.remove(&k);
        }
    }
    check(&w, root, &model, &mut rng, kind);
    w.commit().unwrap();
    let r = d.begin_read().unwrap();
    check(&r, root, &model, &mut rng, kind);
}

#[test]
fn rowid_seeks_match_model_on_trees_of_many_shapes() {
    let seed = seed();
    for (i, page_size) in [512u32, 1024, 4096].into_iter().enumerate() {
        for (j, kind) in [
            Rowids::Dense,
            Rowids::Small,
            Rowids::Any,
            Rowids::Ascending,
            Rowids::Clustered,
            Rowids::Geometric,
        ]
        .into_iter()
        .enumerate()
        {
            let n = if page_size == 512 { 2500 } else { 1500 };
            shapes(page_size, kind, n, seed ^ ((i * 6 + j) as u64) << 8);
        }
    }
}

#[test]
fn empty_and_one_row_tables() {
    let mut rng = StdRng::seed_from_u64(seed());
    let d = Database::open_in_memory(OpenOptions::default()).unwrap();
    let w = d.begin_write(WAIT).unwrap();
    let root = w.create_btree(BtreeKind::Table).unwrap();
    let mut model = BTreeMap::new();
    check(&w, root, &model, &mut rng, Rowids::Any);
    let rec = record(&mut rng, 5);
    w.table_insert(root, 5, &rec).unwrap();
    model.insert(5, rec);
    check(&w, root, &model, &mut rng, Rowids::Dense);
}

/// One long-lived cursor looks rows up (`seek_rowid_entry`, `seek_rowid` with every op)
/// between the transaction's own inserts and deletes next to the row it is on, which split
/// and merge that leaf and move its neighbours' keys: after any change the cursor descends
/// again (T2) rather than trusting the leaf it is on or that leaf's bracket.
#[test]
fn kept_cursor_across_own_writes() {
    let seed = seed();
    for (i, kind) in [Rowids::Ascending, Rowids::Clustered, Rowids::Dense]
        .into_iter()
        .enumerate()
    {
        let mut rng = StdRng::seed_from_u64(seed ^ (i as u64 + 1) << 12);
        let d = Database::open_in_memory(OpenOptions {
            page_size: 512,
            ..OpenOptions::default()
        })
        .unwrap();
        let w = d.begin_write(WAIT).unwrap();
        let root = w.create_btree(BtreeKind::Table).unwrap();
        let mut model = BTreeMap::new();
        while model.len() < 1500 {
            let r = match kind {
                Rowids::Ascending => model.len() as i64 + 1,
                _ => rowid(&mut rng, kind, 1500),
            };
            let rec = record(&mut rng, r);
            w.table_insert(root, r, &rec).unwrap();
            model.insert(r, rec);
        }
        let mut kept = w.cursor(root, BtreeKind::Table, None).unwrap();
        for step in 0..3000 {
            let probe = rowid(&mut rng, kind, 1500);
            let got = kept
                .seek_rowid_entry(probe, |r, rec| (r, rec.to_vec()))
                .unwrap();
            let want = model.get(&probe).map(|rec| (probe, rec.clone()));
            assert_eq!(got, want, "{kind:?} step {step}: seek_rowid_entry {probe}");
            let op = OPS[rng.gen_range(0..OPS.len())];
            let near = probe.saturating_add(rng.gen_range(-3..4));
            assert_eq!(
                seek(&mut kept, near, op),
                expect(&model, near, op),
                "{kind:?} step {step}: {op:?} {near}"
            );
            // A write next to the probe: a row moved in or out of the cursor's leaf.
            let k = probe.saturating_add(rng.gen_range(-2..3));
            if rng.gen_range(0..3) == 0 {
                assert_eq!(
                    w.table_delete(root, k).unwrap(),
                    model.remove(&k).is_some(),
                    "{kind:?} step {step}: delete {k}"
                );
            } else {
                let rec = record(&mut rng, k);
                w.table_insert(root, k, &rec).unwrap();
                model.insert(k, rec);
            }
        }
        check(&w, root, &model, &mut rng, kind);
    }
}

/// The row's value by `seek_rowid_entry`.
fn value(c: &mut Cursor, rowid: i64) -> Option<i64> {
    let rec = c.seek_rowid_entry(rowid, |_, rec| rec.to_vec()).unwrap()?;
    match decode(&rec).unwrap()[0] {
        ValueRef::Integer(v) => Some(v),
        ref other => panic!("row {rowid}: {other:?}"),
    }
}

/// Every row's value, by a scan (steps, no descents: the oracle for the seeks).
fn scan(t: &Txn, root: PageNo) -> BTreeMap<i64, i64> {
    let mut out = BTreeMap::new();
    let mut c = t.cursor(root, BtreeKind::Table, None).unwrap();
    let mut more = c.first().unwrap();
    while more {
        let v = match decode(&c.record().unwrap()).unwrap()[0] {
            ValueRef::Integer(v) => v,
            ref other => panic!("{other:?}"),
        };
        out.insert(c.rowid().unwrap(), v);
        more = c.next().unwrap();
    }
    out
}

/// Readers descend (fresh and long-lived cursors) while two writers commit inserts,
/// deletes and rewrites that split and merge the pages the readers cross: each reader
/// sees its snapshot's rows, taken by a scan when it began, on a file (page versions in
/// the cache, pager C2) with a small cache (evictions, reads from the file, C4).
#[test]
fn readers_see_their_snapshot_while_writers_commit() {
    let seed = seed();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("descent.db");
    let db = Database::open(
        &path,
        OpenOptions {
            page_size: 1024,
            cache_pages_max: 200,
            synchronous: Synchronous::Off,
            ..OpenOptions::default()
        },
    )
    .unwrap();
    const ROWS: i64 = 3000;
    let root = {
        let w = db.begin_write(WAIT).unwrap();
        let root = w.create_btree(BtreeKind::Table).unwrap();
        for k in 0..ROWS {
            w.table_insert(
                root,
                k * 7,
                &encode(&[ValueRef::Integer(0), ValueRef::Blob(&[1; 30])]),
            )
            .unwrap();
        }
        w.commit().unwrap();
        root
    };
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writers: Vec<_> = (0..2u64)
        .map(|wi| {
            let (db, stop) = (db.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut rng = StdRng::seed_from_u64(seed ^ (wi + 1));
                let mut n = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) && n < 3000 {
                    n += 1;
                    let t = db.begin_write(WAIT).unwrap();
                    for _ in 0..rng.gen_range(1..20) {
                        let k = rng.gen_range(0..ROWS * 7);
                        if rng.gen_range(0..3) == 0 {
                            t.table_delete(root, k).unwrap();
                        } else {
                            let len = rng.gen_range(0..300);
                            let rec = encode(&[
                                ValueRef::Integer(n as i64),
                                ValueRef::Blob(&vec![2; len]),
                            ]);
                            t.table_insert(root, k, &rec).unwrap();
                        }
                    }
                    t.commit().unwrap();
                }
            })
        })
        .collect();
    let mut rng = StdRng::seed_from_u64(seed);
    for round in 0..40 {
        let r = db.begin_read().unwrap();
        let snapshot = scan(&r, root);
        let mut kept = r.cursor(root, BtreeKind::Table, None).unwrap();
        for _ in 0..400 {
            let k = rng.gen_range(-5..ROWS * 7 + 5);
            let want = snapshot.get(&k).copied();
            let mut fresh = r.cursor(root, BtreeKind::Table, None).unwrap();
            assert_eq!(value(&mut fresh, k), want, "round {round}: fresh {k}");
            assert_eq!(value(&mut kept, k), want, "round {round}: kept {k}");
            let ge = snapshot.range(k..).next().map(|(k, _)| *k);
            assert_eq!(seek(&mut fresh, k, SeekOp::Ge), ge, "round {round}: Ge {k}");
        }
        assert_eq!(
            scan(&r, root),
            snapshot,
            "round {round}: the reader's rows changed"
        );
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for h in writers {
        h.join().unwrap();
    }
}
