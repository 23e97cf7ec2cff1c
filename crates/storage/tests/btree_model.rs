//! Random operation sequences on table and index B-trees, checked against
//! `std::collections::BTreeMap`/`BTreeSet` models after every operation (point results) and
//! after every batch (full forward and backward scans, structural integrity check).
//!
//! Seeded: each test prints its seed; `PARLITE_SEED=<n>` replays one. `PARLITE_LONG=1`
//! runs many more operations.

use parlite_storage::record::{encode, KeyCompare, RecordCompare, ValueRef};
use parlite_storage::{BtreeKind, Database, OpenOptions, PageNo, SeekOp, Txn};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

fn long() -> bool {
    std::env::var("PARLITE_LONG")
        .map(|v| v == "1")
        .unwrap_or(false)
}

fn seed_for(name: &str) -> u64 {
    let seed = match std::env::var("PARLITE_SEED") {
        Ok(s) => s.parse().expect("PARLITE_SEED must be an integer"),
        Err(_) => rand::random::<u64>(),
    };
    eprintln!("{name}: seed = {seed} (replay with PARLITE_SEED={seed})");
    seed
}

fn db(page_size: u32) -> Database {
    Database::open_in_memory(OpenOptions {
        page_size,
        ..OpenOptions::default()
    })
    .unwrap()
}

/// Payload of a varied size: mostly small, some spilling onto several overflow pages.
fn payload(rng: &mut StdRng, page_size: u32, tag: i64) -> Vec<u8> {
    let len = match rng.gen_range(0..100) {
        0..=69 => rng.gen_range(0..40),
        70..=89 => rng.gen_range(40..(page_size as usize / 3)),
        90..=96 => rng.gen_range(0..page_size as usize * 2),
        _ => rng.gen_range(0..page_size as usize * 4),
    };
    let mut v = Vec::with_capacity(len + 8);
    v.extend_from_slice(&tag.to_be_bytes());
    v.extend((0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(tag as u8)));
    v
}

fn check(txn: &Txn, roots: &[parlite_storage::CheckRoot]) {
    let errs = txn.integrity_check_with(roots, 20).unwrap();
    assert!(errs.is_empty(), "integrity check failed: {errs:#?}");
}

fn scan_table(txn: &Txn, root: PageNo, model: &BTreeMap<i64, Vec<u8>>) {
    let mut c = txn.cursor(root, BtreeKind::Table, None).unwrap();
    let mut it = model.iter();
    let mut ok = c.first().unwrap();
    while ok {
        let (k, v) = it.next().expect("tree has more rows than the model");
        assert_eq!(c.rowid().unwrap(), *k);
        assert_eq!(&c.record().unwrap(), v, "row {k}");
        ok = c.next().unwrap();
    }
    assert!(it.next().is_none(), "tree has fewer rows than the model");
    let mut it = model.iter().rev();
    let mut ok = c.last().unwrap();
    while ok {
        let (k, _) = it.next().expect("backward: tree has more rows");
        assert_eq!(c.rowid().unwrap(), *k);
        ok = c.prev().unwrap();
    }
    assert!(it.next().is_none(), "backward: tree has fewer rows");
    assert_eq!(txn.count(root).unwrap(), model.len() as u64);
    // Runs of seeks on one cursor with no modification in between (the same-leaf shortcut),
    // walking keys near each other and then jumping.
    let keys: Vec<i64> = model.keys().copied().collect();
    for (i, &base) in keys.iter().enumerate().step_by((keys.len() / 20).max(1)) {
        for (j, delta) in [-1i64, 0, 1, 2, 0, -3, 5].into_iter().enumerate() {
            let k = base + delta;
            let op = OPS[(i + j) % 5];
            let got = c.seek_rowid(k, op).unwrap().then(|| c.rowid().unwrap());
            assert_eq!(got, expect_seek(model, k, op), "seek {op:?} {k}");
        }
    }
}

fn expect_seek(model: &BTreeMap<i64, Vec<u8>>, k: i64, op: SeekOp) -> Option<i64> {
    match op {
        SeekOp::Eq => model.contains_key(&k).then_some(k),
        SeekOp::Ge => model.range(k..).next().map(|e| *e.0),
        SeekOp::Gt => model
            .range((std::ops::Bound::Excluded(k), std::ops::Bound::Unbounded))
            .next()
            .map(|e| *e.0),
        SeekOp::Le => model.range(..=k).next_back().map(|e| *e.0),
        SeekOp::Lt => model.range(..k).next_back().map(|e| *e.0),
    }
}

const OPS: [SeekOp; 5] = [SeekOp::Eq, SeekOp::Ge, SeekOp::Gt, SeekOp::Le, SeekOp::Lt];

fn table_run(page_size: u32, ops: usize, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let db = db(page_size);
    let mut txn = db.begin_write(Duration::ZERO).unwrap();
    let root = txn.create_btree(BtreeKind::Table).unwrap();
    let roots = vec![(root, BtreeKind::Table, None)];
    let mut model: BTreeMap<i64, Vec<u8>> = BTreeMap::new();
    let key_space: i64 = (ops as i64 / 2).max(100);
    let batch = (ops / 40).max(50);
    // Phases: grow (insert-heavy), shrink (delete-heavy, forces merges), mixed.
    for step in 0..ops {
        let phase = step * 3 / ops;
        let r = rng.gen_range(0..100);
        let insert_pct = match phase {
            0 => 75,
            1 => 15,
            _ => 50,
        };
        if r < insert_pct {
            let k = if rng.gen_bool(0.2) {
                model.keys().next_back().map_or(1, |k| k + 1)
            } else {
                rng.gen_range(-key_space..key_space)
            };
            let v = payload(&mut rng, page_size, k);
            txn.table_insert(root, k, &v).unwrap();
            model.insert(k, v);
        } else if r < 95 {
            // Mostly an existing row (the next one at or after a random key), else any key.
            let k = rng.gen_range(-key_space..key_space);
            let k = if rng.gen_bool(0.8) {
                model.range(k..).next().map_or(k, |e| *e.0)
            } else {
                k
            };
            assert_eq!(
                txn.table_delete(root, k).unwrap(),
                model.remove(&k).is_some(),
                "delete {k}"
            );
        } else {
            let k = rng.gen_range(-key_space - 2..key_space + 2);
            let op = OPS[rng.gen_range(0..5)];
            let mut c = txn.cursor(root, BtreeKind::Table, None).unwrap();
            let got = c.seek_rowid(k, op).unwrap().then(|| c.rowid().unwrap());
            assert_eq!(got, expect_seek(&model, k, op), "seek {op:?} {k}");
            if let Some(g) = got {
                assert_eq!(&c.record().unwrap(), &model[&g]);
            }
        }
        if step % batch == batch - 1 {
            check(&txn, &roots);
            scan_table(&txn, root, &model);
            if rng.gen_bool(0.3) {
                txn.commit().unwrap();
                txn = db.begin_write(Duration::ZERO).unwrap();
            }
        }
    }
    check(&txn, &roots);
    scan_table(&txn, root, &model);
    // Delete nearly everything: the tree must shrink back to a few pages.
    let keys: Vec<i64> = model.keys().copied().collect();
    let peak_pages = txn.header().unwrap().page_count;
    for k in keys.iter().skip(3) {
        assert!(txn.table_delete(root, *k).unwrap());
        model.remove(k);
    }
    check(&txn, &roots);
    scan_table(&txn, root, &model);
    // Merges must have collapsed the tree: page 1, the root, and the 3 rows' overflow.
    let h = txn.header().unwrap();
    let in_use = h.page_count - h.freelist_count;
    assert!(
        in_use <= 2 + 3 * 5,
        "{in_use} pages still in use (peak {peak_pages})"
    );
    assert!(
        peak_pages > 20,
        "test too small to exercise splits: {peak_pages} pages"
    );
    txn.commit().unwrap();
}

#[test]
fn table_model_all_page_sizes() {
    let seed = seed_for("table_model_all_page_sizes");
    let n = if long() { 600_000 } else { 60_000 };
    for (i, ps) in [512u32, 1024, 4096, 65536].into_iter().enumerate() {
        table_run(
            ps,
            if ps == 65536 { n / 2 } else { n },
            seed.wrapping_add(i as u64),
        );
    }
}

/// Sequential appends exercise the quick balance: pages end up nearly full.
#[test]
fn ascending_appends_fill_pages() {
    let db = db(4096);
    let txn = db.begin_write(Duration::ZERO).unwrap();
    let root = txn.create_btree(BtreeKind::Table).unwrap();
    let rec = encode(&[
        ValueRef::Integer(7),
        ValueRef::Text(b"some text that takes room"),
    ]);
    let n = 50_000;
    for i in 1..=n {
        txn.table_insert(root, i, &rec).unwrap();
    }
    check(&txn, &[(root, BtreeKind::Table, None)]);
    let cell = rec.len() + 2 + 3 + 2; // payload, size varint, rowid varint, pointer
    let ideal_pages = (n as usize * cell) / (4096 - 8);
    let pages = txn.header().unwrap().page_count as usize;
    assert!(
        pages < ideal_pages * 110 / 100 + 10,
        "{pages} pages, ideal {ideal_pages}"
    );
    let mut c = txn.cursor(root, BtreeKind::Table, None).unwrap();
    assert!(c.seek_rowid(n / 2, SeekOp::Eq).unwrap());
    assert_eq!(c.record().unwrap(), rec);
}

/// A cursor keeps its place while the same transaction inserts and deletes around it,
/// including deleting the cursor's own row.
#[test]
fn cursors_survive_modifications() {
    let seed = seed_for("cursors_survive_modifications");
    let mut rng = StdRng::seed_from_u64(seed);
    for ps in [512u32, 4096] {
        let db = db(ps);
        let txn = db.begin_write(Duration::ZERO).unwrap();
        let root = txn.create_btree(BtreeKind::Table).unwrap();
        let mut model = BTreeMap::new();
        for k in 0..3000i64 {
            let v = payload(&mut rng, ps, k);
            txn.table_insert(root, k * 2, &v).unwrap();
            model.insert(k * 2, v);
        }
        // Walk forward deleting the current row every other step and inserting odd rows
        // behind and ahead of the cursor.
        let mut c = txn.cursor(root, BtreeKind::Table, None).unwrap();
        let mut ok = c.first().unwrap();
        let mut expected: Vec<i64> = model.keys().copied().collect();
        let mut seen = Vec::new();
        let mut i = 0;
        while ok {
            let k = c.rowid().unwrap();
            seen.push(k);
            if i % 2 == 0 {
                assert!(txn.table_delete(root, k).unwrap());
                model.remove(&k);
            }
            if i % 3 == 0 {
                // Behind the cursor: must not be visited.
                let v = payload(&mut rng, ps, k - 1);
                txn.table_insert(root, k - 1, &v).unwrap();
                model.insert(k - 1, v);
            }
            i += 1;
            ok = c.next().unwrap();
        }
        expected.retain(|_| true);
        assert_eq!(seen, expected, "page size {ps}");
        scan_table(&txn, root, &model);
        check(&txn, &[(root, BtreeKind::Table, None)]);
        // Backward with deletions.
        let mut ok = c.last().unwrap();
        let mut back = Vec::new();
        while ok {
            let k = c.rowid().unwrap();
            back.push(k);
            txn.table_delete(root, k).unwrap();
            model.remove(&k);
            ok = c.prev().unwrap();
        }
        assert!(model.is_empty());
        assert!(back.windows(2).all(|w| w[0] > w[1]));
        check(&txn, &[(root, BtreeKind::Table, None)]);
    }
}

#[test]
fn savepoint_rollback_matches_model() {
    let seed = seed_for("savepoint_rollback_matches_model");
    let mut rng = StdRng::seed_from_u64(seed);
    let ps = 1024;
    let db = db(ps);
    let txn = db.begin_write(Duration::ZERO).unwrap();
    let root = txn.create_btree(BtreeKind::Table).unwrap();
    let mut model: BTreeMap<i64, Vec<u8>> = BTreeMap::new();
    let rounds = if long() { 400 } else { 60 };
    for round in 0..rounds {
        let sp = txn.savepoint().unwrap();
        let saved = model.clone();
        for _ in 0..rng.gen_range(1..200) {
            let k = rng.gen_range(0..2000);
            if rng.gen_bool(0.6) {
                let v = payload(&mut rng, ps, k);
                txn.table_insert(root, k, &v).unwrap();
                model.insert(k, v);
            } else {
                assert_eq!(
                    txn.table_delete(root, k).unwrap(),
                    model.remove(&k).is_some()
                );
            }
        }
        if round % 3 == 0 {
            txn.rollback_to(sp).unwrap();
            model = saved;
        }
        txn.release(sp).unwrap();
        if round % 10 == 0 {
            scan_table(&txn, root, &model);
            check(&txn, &[(root, BtreeKind::Table, None)]);
        }
    }
    scan_table(&txn, root, &model);
    txn.commit().unwrap();
    let r = db.begin_read().unwrap();
    scan_table(&r, root, &model);
}

#[test]
fn snapshots_do_not_see_later_commits() {
    let db = db(4096);
    let w = db.begin_write(Duration::ZERO).unwrap();
    let root = w.create_btree(BtreeKind::Table).unwrap();
    w.table_insert(root, 1, b"\x02\x09").unwrap();
    w.commit().unwrap();
    let r = db.begin_read().unwrap();
    let w = db.begin_write(Duration::ZERO).unwrap();
    for i in 2..2000 {
        w.table_insert(root, i, b"\x02\x09").unwrap();
    }
    assert!(db.begin_write(Duration::from_millis(5)).is_err());
    w.commit().unwrap();
    assert_eq!(r.count(root).unwrap(), 1);
    assert!(matches!(
        r.upgrade(Duration::ZERO),
        Err(parlite_storage::StorageError::BusySnapshot { .. })
    ));
    let r2 = db.begin_read().unwrap();
    assert_eq!(r2.count(root).unwrap(), 1999);
    r2.upgrade(Duration::ZERO).unwrap();
    assert!(r2.table_delete(root, 5).unwrap());
    r2.commit().unwrap();
    assert_eq!(db.begin_read().unwrap().count(root).unwrap(), 1998);
}

/// Index keys: [value, rowid] records with mixed types, ordered by RecordCompare.
#[derive(Clone)]
struct Key(Vec<u8>);

fn key_cmp() -> RecordCompare {
    RecordCompare::default()
}

impl PartialEq for Key {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Key {}
impl PartialOrd for Key {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Key {
    fn cmp(&self, o: &Self) -> Ordering {
        key_cmp().compare(&self.0, &o.0).unwrap()
    }
}

fn index_key(rng: &mut StdRng, page_size: u32, space: i64) -> (Vec<u8>, Vec<u8>) {
    let rowid = rng.gen_range(0..space);
    let v = rng.gen_range(0..space / 4 + 1);
    let text: Vec<u8>;
    let blob: Vec<u8>;
    let first = match rng.gen_range(0..10) {
        0 => ValueRef::Null,
        1..=3 => ValueRef::Integer(v),
        4 => ValueRef::Real(v as f64 + 0.5),
        5..=8 => {
            let len = if rng.gen_bool(0.1) {
                rng.gen_range(0..page_size as usize)
            } else {
                rng.gen_range(0..20)
            };
            text = format!("{v:08}").bytes().chain(vec![b'x'; len]).collect();
            ValueRef::Text(&text)
        }
        _ => {
            let len = if rng.gen_bool(0.2) {
                rng.gen_range(0..page_size as usize * 2)
            } else {
                rng.gen_range(0..20)
            };
            blob = (0..len).map(|i| (i as i64 * v) as u8).collect();
            ValueRef::Blob(&blob)
        }
    };
    (encode(&[first, ValueRef::Integer(rowid)]), encode(&[first]))
}

fn scan_index(txn: &Txn, root: PageNo, cmp: &Arc<dyn KeyCompare>, model: &BTreeSet<Key>) {
    let mut c = txn
        .cursor(root, BtreeKind::Index, Some(cmp.clone()))
        .unwrap();
    let mut it = model.iter();
    let mut ok = c.first().unwrap();
    while ok {
        let k = it.next().expect("index has more entries than the model");
        assert_eq!(c.record().unwrap(), k.0);
        ok = c.next().unwrap();
    }
    assert!(
        it.next().is_none(),
        "index has fewer entries than the model"
    );
    let mut it = model.iter().rev();
    let mut ok = c.last().unwrap();
    while ok {
        let k = it.next().expect("backward: index has more entries");
        assert_eq!(c.record().unwrap(), k.0);
        ok = c.prev().unwrap();
    }
    assert!(it.next().is_none());
    assert_eq!(txn.count(root).unwrap(), model.len() as u64);
    // Runs of seeks on one cursor (frames reused between them), full keys and prefixes.
    let keys: Vec<&Key> = model.iter().collect();
    for (i, k) in keys.iter().enumerate().step_by((keys.len() / 20).max(1)) {
        let first = parlite_storage::record::decode(&k.0).unwrap()[0];
        let prefix = encode(&[first]);
        for (j, probe) in [&k.0, &prefix, &k.0].into_iter().enumerate() {
            let op = OPS[(i + j) % 5];
            let got = c.seek_key(probe, op).unwrap().then(|| c.record().unwrap());
            assert_eq!(got, expect_index_seek(model, probe, op), "seek {op:?}");
        }
    }
}

/// Expected result of a (prefix) seek, computed from the model with range queries: a
/// one-field probe [v] is bracketed by the full keys [v, i64::MIN] and [v, i64::MAX] (every
/// model key is [value, rowid]).
fn expect_index_seek(model: &BTreeSet<Key>, probe: &[u8], op: SeekOp) -> Option<Vec<u8>> {
    use std::ops::Bound::{Excluded, Included, Unbounded};
    let fields = parlite_storage::record::decode(probe).unwrap();
    let (lo, hi) = if fields.len() == 1 {
        (
            Key(encode(&[fields[0], ValueRef::Integer(i64::MIN)])),
            Key(encode(&[fields[0], ValueRef::Integer(i64::MAX)])),
        )
    } else {
        (Key(probe.to_vec()), Key(probe.to_vec()))
    };
    let r = match op {
        SeekOp::Eq => model
            .range((Included(&lo), Unbounded))
            .next()
            .filter(|k| key_cmp().compare(&k.0, probe).unwrap() == Ordering::Equal),
        SeekOp::Ge => model.range((Included(&lo), Unbounded)).next(),
        SeekOp::Gt => model.range((Excluded(&hi), Unbounded)).next(),
        SeekOp::Le => model.range((Unbounded, Included(&hi))).next_back(),
        SeekOp::Lt => model.range((Unbounded, Excluded(&lo))).next_back(),
    };
    r.map(|k| k.0.clone())
}

fn index_run(page_size: u32, ops: usize, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let db = db(page_size);
    let mut txn = db.begin_write(Duration::ZERO).unwrap();
    let root = txn.create_btree(BtreeKind::Index).unwrap();
    let cmp: Arc<dyn KeyCompare> = Arc::new(key_cmp());
    let roots = vec![(root, BtreeKind::Index, Some(cmp.clone()))];
    let mut model: BTreeSet<Key> = BTreeSet::new();
    let space = (ops as i64).max(100);
    let batch = (ops / 30).max(50);
    for step in 0..ops {
        let phase = step * 3 / ops;
        let r = rng.gen_range(0..100);
        let insert_pct = [75, 15, 50][phase];
        if r < insert_pct {
            let (k, _) = index_key(&mut rng, page_size, space);
            txn.index_insert(root, &k, &*cmp).unwrap();
            model.insert(Key(k));
        } else if r < 95 {
            let k = if !model.is_empty() && rng.gen_bool(0.8) {
                let probe = index_key(&mut rng, page_size, space).0;
                model
                    .range(Key(probe)..)
                    .next()
                    .or_else(|| model.iter().next())
                    .map(|k| k.0.clone())
                    .unwrap_or_default()
            } else {
                index_key(&mut rng, page_size, space).0
            };
            if k.is_empty() {
                continue;
            }
            let removed = model.remove(&Key(k.clone()));
            assert_eq!(txn.index_delete(root, &k, &*cmp).unwrap(), removed);
        } else {
            let (full, prefix) = index_key(&mut rng, page_size, space);
            let probe = if rng.gen_bool(0.5) { full } else { prefix };
            let op = OPS[rng.gen_range(0..5)];
            let mut c = txn
                .cursor(root, BtreeKind::Index, Some(cmp.clone()))
                .unwrap();
            let got = c.seek_key(&probe, op).unwrap().then(|| c.record().unwrap());
            assert_eq!(got, expect_index_seek(&model, &probe, op), "seek {op:?}");
        }
        if step % batch == batch - 1 {
            check(&txn, &roots);
            scan_index(&txn, root, &cmp, &model);
            if rng.gen_bool(0.3) {
                txn.commit().unwrap();
                txn = db.begin_write(Duration::ZERO).unwrap();
            }
        }
    }
    check(&txn, &roots);
    scan_index(&txn, root, &cmp, &model);
    let keys: Vec<Key> = model.iter().cloned().collect();
    let peak_pages = txn.header().unwrap().page_count;
    for k in keys.iter().skip(2) {
        assert!(txn.index_delete(root, &k.0, &*cmp).unwrap());
        model.remove(k);
    }
    check(&txn, &roots);
    scan_index(&txn, root, &cmp, &model);
    let h = txn.header().unwrap();
    let in_use = h.page_count - h.freelist_count;
    assert!(
        in_use <= 2 + 2 * 3,
        "{in_use} pages still in use (peak {peak_pages})"
    );
    assert!(
        peak_pages > 20,
        "test too small to exercise splits: {peak_pages} pages"
    );
    txn.commit().unwrap();
}

#[test]
fn index_model_all_page_sizes() {
    let seed = seed_for("index_model_all_page_sizes");
    let n = if long() { 300_000 } else { 30_000 };
    for (i, ps) in [512u32, 1024, 4096, 65536].into_iter().enumerate() {
        index_run(
            ps,
            if ps == 65536 { n / 2 } else { n },
            seed.wrapping_add(i as u64),
        );
    }
}

/// Many trees in one file, dropped and cleared: every page stays accounted for.
#[test]
fn create_drop_clear_account_for_every_page() {
    let seed = seed_for("create_drop_clear_account_for_every_page");
    let mut rng = StdRng::seed_from_u64(seed);
    let db = db(1024);
    let txn = db.begin_write(Duration::ZERO).unwrap();
    let cmp: Arc<dyn KeyCompare> = Arc::new(key_cmp());
    let mut trees: Vec<(PageNo, BtreeKind)> = Vec::new();
    for round in 0..40 {
        let kind = if rng.gen_bool(0.5) {
            BtreeKind::Table
        } else {
            BtreeKind::Index
        };
        let root = txn.create_btree(kind).unwrap();
        for i in 0..rng.gen_range(0..300) {
            match kind {
                BtreeKind::Table => txn
                    .table_insert(root, i, &payload(&mut rng, 1024, i))
                    .unwrap(),
                BtreeKind::Index => txn
                    .index_insert(root, &index_key(&mut rng, 1024, 1000).0, &*cmp)
                    .unwrap(),
            }
        }
        trees.push((root, kind));
        if round % 4 == 3 {
            let (r, _) = trees.remove(rng.gen_range(0..trees.len()));
            txn.drop_btree(r).unwrap();
        }
        if round % 5 == 4 {
            let (r, _) = trees[rng.gen_range(0..trees.len())];
            let n = txn.count(r).unwrap();
            assert_eq!(txn.clear_btree(r).unwrap(), n);
            assert_eq!(txn.count(r).unwrap(), 0);
        }
        let errs = txn.integrity_check(&trees, 10).unwrap();
        assert!(errs.is_empty(), "{errs:?}");
    }
    let h = txn.header().unwrap();
    assert!(h.freelist_count > 0);
    txn.commit().unwrap();
}

/// An index cursor keeps its place while entries (its own included, interior ones too) are
/// deleted and inserted through the same transaction.
#[test]
fn index_cursor_survives_modifications() {
    let seed = seed_for("index_cursor_survives_modifications");
    let mut rng = StdRng::seed_from_u64(seed);
    let db = db(512);
    let txn = db.begin_write(Duration::ZERO).unwrap();
    let root = txn.create_btree(BtreeKind::Index).unwrap();
    let cmp: Arc<dyn KeyCompare> = Arc::new(key_cmp());
    let mut model: BTreeSet<Key> = BTreeSet::new();
    let key = |i: i64| encode(&[ValueRef::Integer(i * 2), ValueRef::Integer(i)]);
    for i in 0..3000 {
        txn.index_insert(root, &key(i), &*cmp).unwrap();
        model.insert(Key(key(i)));
    }
    let expected: Vec<Vec<u8>> = model.iter().map(|k| k.0.clone()).collect();
    let mut c = txn
        .cursor(root, BtreeKind::Index, Some(cmp.clone()))
        .unwrap();
    let mut seen = Vec::new();
    let mut ok = c.first().unwrap();
    let mut step = 0;
    while ok {
        let cur = c.record().unwrap();
        seen.push(cur.clone());
        if step % 2 == 0 {
            assert!(txn.index_delete(root, &cur, &*cmp).unwrap());
            model.remove(&Key(cur.clone()));
        }
        if rng.gen_bool(0.3) {
            // Behind the cursor (a smaller first column): never visited.
            let i: i64 = rng.gen_range(0..3000);
            let k = encode(&[ValueRef::Integer(-1 - i), ValueRef::Integer(i)]);
            txn.index_insert(root, &k, &*cmp).unwrap();
            model.insert(Key(k));
        }
        step += 1;
        ok = c.next().unwrap();
    }
    assert_eq!(seen, expected);
    scan_index(&txn, root, &cmp, &model);
    check(&txn, &[(root, BtreeKind::Index, Some(cmp.clone()))]);
}

/// Readers on other threads see stable snapshots while a writer commits.
#[test]
fn concurrent_readers_see_stable_snapshots() {
    let db = db(1024);
    let w = db.begin_write(Duration::ZERO).unwrap();
    let root = w.create_btree(BtreeKind::Table).unwrap();
    w.commit().unwrap();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let db = db.clone();
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut checks = 0;
                while checks == 0 || !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let r = db.begin_read().unwrap();
                    let n = r.count(root).unwrap();
                    // Rows are committed in batches of 100 with rowids 1..=n.
                    assert_eq!(n % 100, 0);
                    let mut c = r.cursor(root, BtreeKind::Table, None).unwrap();
                    if n > 0 {
                        assert!(c.last().unwrap());
                        assert_eq!(c.rowid().unwrap(), n as i64);
                    }
                    assert_eq!(r.count(root).unwrap(), n);
                    checks += 1;
                }
                checks
            })
        })
        .collect();
    let mut next = 1i64;
    for _ in 0..50 {
        let w = db.begin_write(Duration::from_secs(5)).unwrap();
        for _ in 0..100 {
            w.table_insert(root, next, &encode(&[ValueRef::Integer(next)]))
                .unwrap();
            next += 1;
        }
        w.commit().unwrap();
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for r in readers {
        assert!(r.join().unwrap() > 0);
    }
    assert_eq!(db.begin_read().unwrap().count(root).unwrap(), 5000);
}

/// One long-lived cursor seeking between modifications of its tree (its saved frames must
/// never be reused once pages changed), including misses and steps off the ends.
#[test]
fn long_lived_cursor_seeks_between_modifications() {
    let seed = seed_for("long_lived_cursor_seeks_between_modifications");
    let mut rng = StdRng::seed_from_u64(seed);
    for ps in [512u32, 4096] {
        let db = db(ps);
        let txn = db.begin_write(Duration::ZERO).unwrap();
        let root = txn.create_btree(BtreeKind::Table).unwrap();
        let mut model: BTreeMap<i64, Vec<u8>> = BTreeMap::new();
        let mut c = txn.cursor(root, BtreeKind::Table, None).unwrap();
        for step in 0..40_000 {
            let k = rng.gen_range(0..3000i64);
            if step % 500 == 0 {
                // Targeted: a miss keeps frames; a burst of inserts restructures the tree;
                // a step on the invalid cursor; then seeks must not trust the old frames.
                assert!(!c.seek_rowid(-1, SeekOp::Eq).unwrap());
                for _ in 0..40 {
                    let k = rng.gen_range(0..3000i64);
                    let v = payload(&mut rng, ps, k);
                    txn.table_insert(root, k, &v).unwrap();
                    model.insert(k, v);
                }
                assert!(!c.next().unwrap());
                for k in [k, k + 1, k + 50] {
                    let got = c
                        .seek_rowid(k, SeekOp::Ge)
                        .unwrap()
                        .then(|| c.rowid().unwrap());
                    assert_eq!(
                        got,
                        expect_seek(&model, k, SeekOp::Ge),
                        "seek Ge {k} after burst (step {step})"
                    );
                }
            }
            match rng.gen_range(0..10) {
                0..=3 => {
                    let v = payload(&mut rng, ps, k);
                    txn.table_insert(root, k, &v).unwrap();
                    model.insert(k, v);
                }
                4..=5 => {
                    assert_eq!(
                        txn.table_delete(root, k).unwrap(),
                        model.remove(&k).is_some()
                    );
                }
                6 => {
                    let got = c.next().unwrap();
                    if got {
                        let r = c.rowid().unwrap();
                        assert!(
                            model.contains_key(&r),
                            "next landed on missing row {r} (step {step})"
                        );
                    }
                }
                _ => {
                    for _ in 0..rng.gen_range(1..4) {
                        let k = k + rng.gen_range(-3..4);
                        let op = OPS[rng.gen_range(0..5)];
                        let got = c.seek_rowid(k, op).unwrap().then(|| c.rowid().unwrap());
                        assert_eq!(
                            got,
                            expect_seek(&model, k, op),
                            "seek {op:?} {k} (step {step})"
                        );
                        if let Some(g) = got {
                            assert_eq!(c.record().unwrap(), model[&g]);
                        }
                    }
                }
            }
        }
        check(&txn, &[(root, BtreeKind::Table, None)]);
    }
}

/// The index analogue: one cursor seeking while its index changes underneath.
#[test]
fn long_lived_index_cursor_seeks_between_modifications() {
    let seed = seed_for("long_lived_index_cursor_seeks_between_modifications");
    let mut rng = StdRng::seed_from_u64(seed);
    let ps = 512;
    let db = db(ps);
    let txn = db.begin_write(Duration::ZERO).unwrap();
    let root = txn.create_btree(BtreeKind::Index).unwrap();
    let cmp: Arc<dyn KeyCompare> = Arc::new(key_cmp());
    let mut model: BTreeSet<Key> = BTreeSet::new();
    let mut c = txn
        .cursor(root, BtreeKind::Index, Some(cmp.clone()))
        .unwrap();
    for step in 0..20_000 {
        let (full, prefix) = index_key(&mut rng, ps, 2000);
        match rng.gen_range(0..10) {
            0..=3 => {
                txn.index_insert(root, &full, &*cmp).unwrap();
                model.insert(Key(full));
            }
            4..=5 => {
                let target = model
                    .range(Key(full.clone())..)
                    .next()
                    .map(|k| k.0.clone())
                    .unwrap_or(full);
                let removed = model.remove(&Key(target.clone()));
                assert_eq!(txn.index_delete(root, &target, &*cmp).unwrap(), removed);
            }
            6 => {
                let _ = c.next().unwrap();
            }
            _ => {
                for probe in [&full, &prefix] {
                    let op = OPS[rng.gen_range(0..5)];
                    let got = c.seek_key(probe, op).unwrap().then(|| c.record().unwrap());
                    assert_eq!(
                        got,
                        expect_index_seek(&model, probe, op),
                        "seek {op:?} (step {step})"
                    );
                }
            }
        }
    }
    check(&txn, &[(root, BtreeKind::Index, Some(cmp.clone()))]);
    scan_index(&txn, root, &cmp, &model);
}
