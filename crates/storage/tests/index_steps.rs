//! Index walks (`Cursor::step_entry`, `next`, `prev`) against a sorted model while the
//! walking transaction itself inserts and deletes entries next to the cursor: the step
//! within a leaf (`TreeCursor::step_in_leaf`) reads the cursor's frame only while the tree
//! is unchanged since the cursor was positioned (T2 in txn.rs); after a change the step
//! re-seeks the cursor's key and moves from there, so it sees entries just inserted after
//! the cursor and never one just deleted. Keys are hc_mixed's shape (a TEXT, then the
//! rowid) under ascending BINARY, and now and then a key long enough to spill onto an
//! overflow page (the step then reads it the checked way), on 512-byte and 1 KiB pages so
//! that walks cross many leaf boundaries. Walks go forward and backward.
//!
//! Replay with `PARLITE_SEED=N`.

use parlite_storage::record::{decode, encode, KeyCompare, RecordCompare, ValueRef};
use parlite_storage::txn::Cursor;
use parlite_storage::{BtreeKind, Database, OpenOptions, SeekOp};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::sync::Arc;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(30);

fn seed() -> u64 {
    std::env::var("PARLITE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x57E9)
}

/// An index entry: the TEXT key and the rowid, ordered as the tree orders them.
type Key = (Vec<u8>, i64);

fn encode_key(k: &Key) -> Vec<u8> {
    encode(&[ValueRef::Text(&k.0), ValueRef::Integer(k.1)])
}

fn decode_key(rec: &[u8]) -> Key {
    match decode(rec).unwrap().as_slice() {
        [ValueRef::Text(t), ValueRef::Integer(r)] => (t.to_vec(), *r),
        other => panic!("unexpected entry {other:?}"),
    }
}

/// A TEXT key: mostly short lowercase strings from a small alphabet (neighbours share
/// prefixes), now and then one of 150-400 bytes (spilling at 512 B and 1 KiB pages).
fn text(rng: &mut StdRng) -> Vec<u8> {
    let n = match rng.gen_range(0..25) {
        0 => rng.gen_range(150..400),
        _ => rng.gen_range(1..24),
    };
    (0..n).map(|_| b"abcdq"[rng.gen_range(0..5)]).collect()
}

/// A key that sorts right after `k` (a longer text with `k`'s as prefix, or the same
/// text with a larger rowid): it lands in `k`'s leaf unless that leaf ends there.
fn neighbour_after(k: &Key, rng: &mut StdRng, rowid: &mut i64) -> Key {
    *rowid += 1;
    match rng.gen_range(0..2) {
        0 => {
            let mut t = k.0.clone();
            t.push(b'a');
            (t, *rowid)
        }
        _ => (k.0.clone(), k.1 + 1_000_000 + *rowid),
    }
}

/// A key that sorts right before `k`, as [`neighbour_after`] after it.
fn neighbour_before(k: &Key, rowid: &mut i64) -> Key {
    *rowid += 1;
    (k.0.clone(), k.1 - 1_000_000 - *rowid)
}

/// One step of the cursor through `step_entry` or `next`/`prev` + `record`, per `rng`.
fn step(c: &mut Cursor, forward: bool, rng: &mut StdRng) -> Option<Key> {
    if rng.gen_bool(0.7) {
        return c.step_entry(forward, |_, rec| decode_key(rec)).unwrap();
    }
    let more = if forward { c.next() } else { c.prev() }.unwrap();
    (more && c.valid()).then(|| decode_key(&c.record().unwrap()))
}

fn walk_with_own_writes(page_size: u32, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let ctx = format!("page {page_size}, seed {seed}");
    let cmp: Arc<dyn KeyCompare> = Arc::new(RecordCompare::new(vec![false], vec![None]));
    let d = Database::open_in_memory(OpenOptions {
        page_size,
        ..OpenOptions::default()
    })
    .unwrap();
    let w = d.begin_write(WAIT).unwrap();
    let root = w.create_btree(BtreeKind::Index).unwrap();
    let mut model: Vec<Key> = Vec::new();
    let mut rowid = 0i64;
    for _ in 0..800 {
        rowid += 1;
        let k = (text(&mut rng), rowid);
        w.index_insert(root, &encode_key(&k), &*cmp).unwrap();
        model.push(k);
    }
    model.sort();
    model.dedup();
    let mut c = w.cursor(root, BtreeKind::Index, Some(cmp.clone())).unwrap();
    let mut at: Option<Key> = None;
    let mut forward = true;
    let (mut steps, mut inserted, mut deleted) = (0, 0, 0);
    for i in 0..6000 {
        let Some(cur) = at.clone() else {
            // Off the end: start again at a random entry.
            let probe = model[rng.gen_range(0..model.len())].clone();
            assert!(
                c.seek_key(&encode_key(&probe), SeekOp::Ge).unwrap(),
                "{ctx}"
            );
            assert_eq!(decode_key(&c.record().unwrap()), probe, "{ctx}: seek");
            at = Some(probe);
            continue;
        };
        match rng.gen_range(0..20) {
            // Write next to the cursor: the entry after (or before) it in the walk's
            // direction inserted or deleted, or the cursor's own entry deleted.
            0..=2 => {
                let k = match rng.gen_bool(0.7) {
                    true if forward => neighbour_after(&cur, &mut rng, &mut rowid),
                    true => neighbour_before(&cur, &mut rowid),
                    false => (text(&mut rng), {
                        rowid += 1;
                        rowid
                    }),
                };
                let Err(p) = model.binary_search(&k) else {
                    continue;
                };
                w.index_insert(root, &encode_key(&k), &*cmp).unwrap();
                model.insert(p, k);
                inserted += 1;
            }
            3 | 4 => {
                let p = model.partition_point(|m| *m < cur);
                let victim = match rng.gen_range(0..3) {
                    0 => Some(p),
                    1 if forward => Some(p + 1),
                    _ => p.checked_sub(1),
                };
                if let Some(v) = victim.filter(|&v| v < model.len() && model.len() > 50) {
                    let k = model.remove(v);
                    assert!(
                        w.index_delete(root, &encode_key(&k), &*cmp).unwrap(),
                        "{ctx}"
                    );
                    deleted += 1;
                }
            }
            5 => forward = !forward,
            _ => {
                // The model's next entry: the first after the cursor's key (forward) or
                // the last before it, whether or not that key is still there.
                let want = if forward {
                    model.get(model.partition_point(|m| *m <= cur)).cloned()
                } else {
                    model
                        .partition_point(|m| *m < cur)
                        .checked_sub(1)
                        .map(|p| model[p].clone())
                };
                let got = step(&mut c, forward, &mut rng);
                assert_eq!(got, want, "{ctx}: step {i} forward={forward} from {cur:?}");
                at = got;
                steps += 1;
            }
        }
    }
    eprintln!("{ctx}: {steps} steps, {inserted} inserts, {deleted} deletes");
    assert!(steps > 3000 && inserted > 500 && deleted > 300, "{ctx}");
}

#[test]
fn index_steps_see_the_transactions_own_writes() {
    let seed = seed();
    for (i, page_size) in [512u32, 1024].into_iter().enumerate() {
        walk_with_own_writes(page_size, seed ^ ((i as u64 + 1) << 8));
    }
}

/// A walk through an unchanged tree takes every step within a leaf from the cursor's
/// frame: forward then backward over every entry, each read as the model has it.
#[test]
fn index_steps_over_an_unchanged_tree() {
    let mut rng = StdRng::seed_from_u64(seed());
    let cmp: Arc<dyn KeyCompare> = Arc::new(RecordCompare::new(vec![false], vec![None]));
    let d = Database::open_in_memory(OpenOptions {
        page_size: 512,
        ..OpenOptions::default()
    })
    .unwrap();
    let w = d.begin_write(WAIT).unwrap();
    let root = w.create_btree(BtreeKind::Index).unwrap();
    let mut model: Vec<Key> = (1..=1500).map(|r| (text(&mut rng), r)).collect();
    for k in &model {
        w.index_insert(root, &encode_key(k), &*cmp).unwrap();
    }
    model.sort();
    w.commit().unwrap();
    let r = d.begin_read().unwrap();
    let mut c = r.cursor(root, BtreeKind::Index, Some(cmp)).unwrap();
    assert!(c.first().unwrap());
    let mut got = vec![decode_key(&c.record().unwrap())];
    while let Some(k) = c.step_entry(true, |_, rec| decode_key(rec)).unwrap() {
        got.push(k);
    }
    assert_eq!(got, model, "forward");
    assert!(c.last().unwrap());
    let mut back = vec![decode_key(&c.record().unwrap())];
    while let Some(k) = c.step_entry(false, |_, rec| decode_key(rec)).unwrap() {
        back.push(k);
    }
    back.reverse();
    assert_eq!(back, model, "backward");
}
