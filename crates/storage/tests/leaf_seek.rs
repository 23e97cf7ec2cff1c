//! Runs of nearby seeks on one long-lived cursor: the same-leaf shortcut of index seeks
//! (`TreeCursor::descend_index` with current frames) and of rowid seeks
//! (`TreeCursor::seek_in_leaf`), checked against a `BTreeSet`/`BTreeMap` model. Keys with
//! many duplicates of their first field straddle leaf boundaries (1 KiB pages), so prefix
//! probes equal to a leaf's first or last key, probes between leaves and probes past either
//! end all occur; inserts and deletes in the same transaction between seeks make the
//! frames stale (invariant T2), which must end the shortcut.

use parlite_storage::record::{encode, KeyCompare, RecordCompare, ValueRef};
use parlite_storage::txn::Cursor;
use parlite_storage::{BtreeKind, Database, OpenOptions, PageNo, SeekOp, Txn};
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound::{Excluded, Included, Unbounded};
use std::sync::Arc;
use std::time::Duration;

const OPS: [SeekOp; 5] = [SeekOp::Eq, SeekOp::Ge, SeekOp::Gt, SeekOp::Le, SeekOp::Lt];

fn db() -> Database {
    Database::open_in_memory(OpenOptions {
        page_size: 1024,
        ..OpenOptions::default()
    })
    .unwrap()
}

fn full(v: i64, r: i64) -> Vec<u8> {
    encode(&[ValueRef::Integer(v), ValueRef::Integer(r)])
}

/// Expected entry for a probe `[v]` (prefix) or `[v, r]` (full key).
fn expect(model: &BTreeSet<(i64, i64)>, v: i64, r: Option<i64>, op: SeekOp) -> Option<Vec<u8>> {
    let (lo, hi) = match r {
        Some(r) => ((v, r), (v, r)),
        None => ((v, i64::MIN), (v, i64::MAX)),
    };
    let hit = match op {
        SeekOp::Eq => model
            .range((Included(lo), Unbounded))
            .next()
            .filter(|k| k.0 == v && r.is_none_or(|r| k.1 == r)),
        SeekOp::Ge => model.range((Included(lo), Unbounded)).next(),
        SeekOp::Gt => model.range((Excluded(hi), Unbounded)).next(),
        SeekOp::Le => model.range((Unbounded, Included(hi))).next_back(),
        SeekOp::Lt => model.range((Unbounded, Excluded(lo))).next_back(),
    };
    hit.map(|&(v, r)| full(v, r))
}

fn seek_all(c: &mut Cursor, model: &BTreeSet<(i64, i64)>, v: i64, r: Option<i64>, op: SeekOp) {
    let probe = match r {
        Some(r) => full(v, r),
        None => encode(&[ValueRef::Integer(v)]),
    };
    let got = c.seek_key(&probe, op).unwrap().then(|| c.record().unwrap());
    assert_eq!(got, expect(model, v, r, op), "seek {op:?} [{v}, {r:?}]");
}

fn index_setup(txn: &mut Txn, cmp: &Arc<dyn KeyCompare>, n: i64) -> (PageNo, BTreeSet<(i64, i64)>) {
    let root = txn.create_btree(BtreeKind::Index).unwrap();
    let mut model = BTreeSet::new();
    // Seven entries per value (v = 0, 2, 4, ...): runs of duplicates cross leaves, odd
    // values fall between entries.
    for i in 0..n {
        let (v, r) = ((i / 7) * 2, i);
        txn.index_insert(root, &full(v, r), &**cmp).unwrap();
        model.insert((v, r));
    }
    (root, model)
}

#[test]
fn ascending_index_seeks_match_model() {
    let db = db();
    let mut txn = db.begin_write(Duration::ZERO).unwrap();
    let cmp: Arc<dyn KeyCompare> = Arc::new(RecordCompare::default());
    let (root, model) = index_setup(&mut txn, &cmp, 5_000);
    let mut c = txn
        .cursor(root, BtreeKind::Index, Some(cmp.clone()))
        .unwrap();
    let vmax = 5_000 / 7 * 2 + 2;
    for op in OPS {
        // Ascending, descending, then every full key in order (each leaf's first and last).
        for v in (-2..=vmax).chain((-2..=vmax).rev()) {
            seek_all(&mut c, &model, v, None, op);
        }
        for &(v, r) in &model {
            seek_all(&mut c, &model, v, Some(r), op);
            seek_all(&mut c, &model, v, Some(r + 1), op);
        }
    }
    txn.commit().unwrap();
}

#[test]
fn index_seeks_between_same_transaction_writes_match_model() {
    let db = db();
    let mut txn = db.begin_write(Duration::ZERO).unwrap();
    let cmp: Arc<dyn KeyCompare> = Arc::new(RecordCompare::default());
    let (root, mut model) = index_setup(&mut txn, &cmp, 4_000);
    let mut c = txn
        .cursor(root, BtreeKind::Index, Some(cmp.clone()))
        .unwrap();
    let mut next_rowid = 10_000;
    for v in 0..1_200i64 {
        let op = OPS[(v % 5) as usize];
        seek_all(&mut c, &model, v, None, op);
        seek_all(&mut c, &model, v, Some(v * 3), op);
        match v % 3 {
            // Insert right where the cursor is (its leaf changes, may split).
            0 => {
                for _ in 0..5 {
                    txn.index_insert(root, &full(v, next_rowid), &*cmp).unwrap();
                    model.insert((v, next_rowid));
                    next_rowid += 1;
                }
            }
            // Delete the entries just sought (the leaf shrinks, may merge away).
            1 => {
                let gone: Vec<(i64, i64)> = model
                    .range((v, i64::MIN)..(v + 2, i64::MIN))
                    .copied()
                    .collect();
                for (gv, gr) in gone {
                    assert!(txn.index_delete(root, &full(gv, gr), &*cmp).unwrap());
                    model.remove(&(gv, gr));
                }
            }
            _ => {}
        }
        seek_all(&mut c, &model, v, None, OPS[((v + 1) % 5) as usize]);
        seek_all(&mut c, &model, v + 1, None, SeekOp::Ge);
    }
    txn.commit().unwrap();
}

#[test]
fn rowid_seeks_between_same_transaction_writes_match_model() {
    let db = db();
    let txn = db.begin_write(Duration::ZERO).unwrap();
    let root = txn.create_btree(BtreeKind::Table).unwrap();
    let mut model: BTreeMap<i64, Vec<u8>> = BTreeMap::new();
    for r in (0..6_000i64).step_by(2) {
        let rec = encode(&[ValueRef::Integer(r)]);
        txn.table_insert(root, r, &rec).unwrap();
        model.insert(r, rec);
    }
    let mut c = txn.cursor(root, BtreeKind::Table, None).unwrap();
    for r in -3..6_003i64 {
        let op = OPS[(r.rem_euclid(5)) as usize];
        let want = match op {
            SeekOp::Eq => model.get_key_value(&r),
            SeekOp::Ge => model.range(r..).next(),
            SeekOp::Gt => model.range(r + 1..).next(),
            SeekOp::Le => model.range(..=r).next_back(),
            SeekOp::Lt => model.range(..r).next_back(),
        }
        .map(|(k, _)| *k);
        let got = c.seek_rowid(r, op).unwrap().then(|| c.rowid().unwrap());
        assert_eq!(got, want, "seek {op:?} {r}");
        if r % 97 == 0 {
            let rec = encode(&[ValueRef::Integer(-r)]);
            txn.table_insert(root, r + 1, &rec).unwrap();
            model.insert(r + 1, rec);
        } else if r % 89 == 0 && model.remove(&(r + 2)).is_some() {
            assert!(txn.table_delete(root, r + 2).unwrap());
        }
    }
    txn.commit().unwrap();
}
