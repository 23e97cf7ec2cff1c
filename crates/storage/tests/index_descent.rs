//! Index seeks (`TreeCursor::descend_index`, reading cells through `IndexCells`, and its
//! same-leaf shortcut on a long-lived cursor) against a model on seeded random trees:
//! composite keys of one to three columns, each ascending or DESC, BINARY or NOCASE, over
//! values of every storage class (NULLs, integers of every serial type, REALs equal to
//! integers, TEXT differing only in case, BLOBs), keys of 128 bytes and more (two-byte
//! size varints) and keys that spill onto overflow pages, on 512-byte to 4 KiB pages; then
//! the trees left after deleting most entries (merges). Every probe (whole keys, prefixes,
//! values between and outside the keys) is sought with every `SeekOp` on a fresh cursor
//! and on a long-lived one. The model orders keys with its own comparison, written from
//! SQLite's rules (datatype3.html "Sort Order"), not with the storage comparator's code.
//! A reader seeking while writers commit splits and merges must keep seeing its snapshot.
//!
//! Replay with `PARLITE_SEED=N`.

use parlite_storage::record::{decode, encode, Collation, KeyCompare, RecordCompare, ValueRef};
use parlite_storage::txn::Cursor;
use parlite_storage::{BtreeKind, Database, OpenOptions, PageNo, SeekOp, Synchronous, Txn};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::cmp::Ordering;
use std::sync::Arc;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(30);
const OPS: [SeekOp; 5] = [SeekOp::Eq, SeekOp::Ge, SeekOp::Gt, SeekOp::Le, SeekOp::Lt];

fn seed() -> u64 {
    std::env::var("PARLITE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x1D5E)
}

/// SQLite's NOCASE: ASCII letters folded to lower case.
struct NoCase;

impl Collation for NoCase {
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        a.iter()
            .map(u8::to_ascii_lowercase)
            .cmp(b.iter().map(u8::to_ascii_lowercase))
    }
}

#[derive(Clone, Debug, PartialEq)]
enum V {
    Null,
    Int(i64),
    Real(f64),
    Text(Vec<u8>),
    Blob(Vec<u8>),
}

impl V {
    fn as_ref(&self) -> ValueRef<'_> {
        match self {
            V::Null => ValueRef::Null,
            V::Int(i) => ValueRef::Integer(*i),
            V::Real(r) => ValueRef::Real(*r),
            V::Text(t) => ValueRef::Text(t),
            V::Blob(b) => ValueRef::Blob(b),
        }
    }

    fn of(v: &ValueRef) -> V {
        match *v {
            ValueRef::Null => V::Null,
            ValueRef::Integer(i) => V::Int(i),
            ValueRef::Real(r) => V::Real(r),
            ValueRef::Text(t) => V::Text(t.to_vec()),
            ValueRef::Blob(b) => V::Blob(b.to_vec()),
        }
    }
}

/// One key column's order.
#[derive(Clone, Copy, Debug)]
struct Col {
    desc: bool,
    nocase: bool,
}

/// The model's order of two values of a column: NULLs first, then numbers by value (an
/// integer and a REAL compared exactly, through i128 where the REAL is integral), TEXT by
/// the collation, BLOBs by bytes.
fn model_cmp(a: &V, b: &V, nocase: bool) -> Ordering {
    fn class(v: &V) -> u8 {
        match v {
            V::Null => 0,
            V::Int(_) | V::Real(_) => 1,
            V::Text(_) => 2,
            V::Blob(_) => 3,
        }
    }
    // The test's REALs are integral and well inside i64, so this comparison is exact.
    let num = |v: &V| match *v {
        V::Int(i) => i as i128,
        V::Real(r) => {
            assert!(r.fract() == 0.0 && r.abs() < 1e15, "model REAL {r}");
            r as i128
        }
        _ => unreachable!(),
    };
    match (a, b) {
        (V::Text(x), V::Text(y)) if nocase => NoCase.compare(x, y),
        (V::Text(x), V::Text(y)) | (V::Blob(x), V::Blob(y)) => x.cmp(y),
        _ if class(a) != class(b) => class(a).cmp(&class(b)),
        _ if class(a) == 0 => Ordering::Equal,
        _ => num(a).cmp(&num(b)),
    }
}

/// Orders a stored key against a probe over the probe's fields (a shorter stored key
/// first), each column in its direction; the trailing rowid is ascending BINARY.
fn model_key_cmp(cols: &[Col], stored: &[V], probe: &[V]) -> Ordering {
    for (i, p) in probe.iter().enumerate() {
        let Some(s) = stored.get(i) else {
            return Ordering::Less;
        };
        let col = cols.get(i).copied().unwrap_or(Col {
            desc: false,
            nocase: false,
        });
        let o = model_cmp(s, p, col.nocase);
        if o != Ordering::Equal {
            return if col.desc { o.reverse() } else { o };
        }
    }
    Ordering::Equal
}

fn comparator(cols: &[Col]) -> Arc<dyn KeyCompare> {
    let nocase: Arc<dyn Collation> = Arc::new(NoCase);
    Arc::new(RecordCompare::new(
        cols.iter().map(|c| c.desc).collect(),
        cols.iter()
            .map(|c| c.nocase.then(|| nocase.clone()))
            .collect(),
    ))
}

/// A random value: every storage class, integers of each serial type's width, REALs
/// equal to small integers, TEXT in a few cases of a few stems, and now and then a TEXT or
/// BLOB of 100-300 bytes (two-byte size varints) or of 700-3000 (spilling at 512 B-4 KiB).
fn value(rng: &mut StdRng) -> V {
    let len = |rng: &mut StdRng| match rng.gen_range(0..30) {
        0 => rng.gen_range(700..3000),
        1..=3 => rng.gen_range(100..300),
        _ => rng.gen_range(0..12),
    };
    match rng.gen_range(0..14) {
        0 => V::Null,
        1 => V::Int(rng.gen_range(-3..3)),
        2 => V::Int(rng.gen_range(-200..200)),
        3 => V::Int(rng.gen_range(-40_000..40_000)),
        4 => V::Int(rng.gen_range(-(1 << 23)..(1 << 23))),
        5 => V::Int(rng.gen_range(-(1 << 40)..(1 << 40))),
        6 => V::Int(rng.gen()),
        7 => V::Real(rng.gen_range(-200..200) as f64),
        8 => V::Real(rng.gen_range(-(1i64 << 40)..(1 << 40)) as f64),
        9 | 10 | 11 => {
            let n = len(rng);
            let stem = [b"abc".as_slice(), b"ABD", b"aBc", b"b", b"", b"zz"][rng.gen_range(0..6)];
            let mut t = stem.to_vec();
            t.extend((0..n).map(|_| [b'a', b'A', b'q', b'Z'][rng.gen_range(0..4)]));
            V::Text(t)
        }
        _ => {
            let n = len(rng);
            V::Blob((0..n).map(|_| rng.gen_range(0..4)).collect())
        }
    }
}

/// The entries as the tree holds them: key fields then the rowid, in the model's order.
struct Model {
    cols: Vec<Col>,
    keys: Vec<Vec<V>>,
}

impl Model {
    fn sort(&mut self) {
        let cols = self.cols.clone();
        self.keys.sort_by(|a, b| model_key_cmp(&cols, a, b));
    }

    /// The entry `op` lands on from `probe`, per the model.
    fn expect(&self, probe: &[V], op: SeekOp) -> Option<&Vec<V>> {
        let o = |k: &Vec<V>| model_key_cmp(&self.cols, k, probe);
        let ge = self.keys.partition_point(|k| o(k) == Ordering::Less);
        let gt = self.keys.partition_point(|k| o(k) != Ordering::Greater);
        match op {
            SeekOp::Eq => self.keys.get(ge).filter(|k| o(k) == Ordering::Equal),
            SeekOp::Ge => self.keys.get(ge),
            SeekOp::Gt => self.keys.get(gt),
            SeekOp::Le => gt.checked_sub(1).map(|i| &self.keys[i]),
            SeekOp::Lt => ge.checked_sub(1).map(|i| &self.keys[i]),
        }
    }

    /// Probes: prefixes of every length of random entries and of the first and last,
    /// with the last field nudged (an integer ± 1, a case-flipped text), and random values.
    fn probes(&self, rng: &mut StdRng) -> Vec<Vec<V>> {
        let mut out = Vec::new();
        let n = self.keys.len();
        let mut picks: Vec<usize> = (0..200.min(n)).map(|_| rng.gen_range(0..n)).collect();
        if n > 0 {
            picks.extend([0, n - 1]);
        }
        for i in picks {
            let key = &self.keys[i];
            let len = rng.gen_range(1..=key.len());
            let mut p = key[..len].to_vec();
            out.push(p.clone());
            match p.last_mut() {
                Some(V::Int(x)) => *x = x.saturating_add(rng.gen_range(-1..=1)),
                Some(V::Text(t)) => t
                    .iter_mut()
                    .for_each(|c| *c ^= 0x20 * (c.is_ascii_alphabetic() as u8)),
                Some(last) => *last = value(rng),
                None => {}
            }
            out.push(p);
        }
        for _ in 0..100 {
            let len = rng.gen_range(1..=self.cols.len());
            out.push((0..len).map(|_| value(rng)).collect());
        }
        out
    }
}

fn encode_key(key: &[V]) -> Vec<u8> {
    encode(&key.iter().map(V::as_ref).collect::<Vec<_>>())
}

fn seek(c: &mut Cursor, probe: &[V], op: SeekOp) -> Option<Vec<V>> {
    let found = c.seek_key(&encode_key(probe), op).unwrap();
    found.then(|| {
        decode(&c.record().unwrap())
            .unwrap()
            .iter()
            .map(V::of)
            .collect()
    })
}

/// Every probe, every op, on a fresh cursor (a full descent) and on one long-lived cursor
/// (the same-leaf shortcut when the leaf covers the probe).
fn check(
    t: &Txn,
    root: PageNo,
    cmp: &Arc<dyn KeyCompare>,
    model: &Model,
    rng: &mut StdRng,
    ctx: &str,
) {
    let mut kept = t.cursor(root, BtreeKind::Index, Some(cmp.clone())).unwrap();
    for probe in model.probes(rng) {
        for op in OPS {
            let want = model.expect(&probe, op);
            let mut fresh = t.cursor(root, BtreeKind::Index, Some(cmp.clone())).unwrap();
            assert_eq!(
                seek(&mut fresh, &probe, op).as_ref(),
                want,
                "{ctx}: fresh {op:?} {probe:?}"
            );
            assert_eq!(
                seek(&mut kept, &probe, op).as_ref(),
                want,
                "{ctx}: kept {op:?} {probe:?}"
            );
        }
    }
}

fn shapes(page_size: u32, ncols: usize, n: usize, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let cols: Vec<Col> = (0..ncols)
        .map(|_| Col {
            desc: rng.gen(),
            nocase: rng.gen(),
        })
        .collect();
    let ctx = format!("page {page_size}, {cols:?}, {n} entries, seed {seed}");
    eprintln!("{ctx}");
    let cmp = comparator(&cols);
    let d = Database::open_in_memory(OpenOptions {
        page_size,
        ..OpenOptions::default()
    })
    .unwrap();
    let w = d.begin_write(WAIT).unwrap();
    let root = w.create_btree(BtreeKind::Index).unwrap();
    let mut model = Model {
        cols,
        keys: Vec::new(),
    };
    // Few distinct values per column, so that long runs share a prefix across leaves.
    let pool: Vec<V> = (0..40).map(|_| value(&mut rng)).collect();
    for rowid in 0..n as i64 {
        let mut key: Vec<V> = (0..ncols)
            .map(|_| match rng.gen_range(0..3) {
                0 => value(&mut rng),
                _ => pool[rng.gen_range(0..pool.len())].clone(),
            })
            .collect();
        key.push(V::Int(rowid * 3));
        w.index_insert(root, &encode_key(&key), &*cmp).unwrap();
        model.keys.push(key);
    }
    model.sort();
    check(&w, root, &cmp, &model, &mut rng, &ctx);
    w.commit().unwrap();
    let r = d.begin_read().unwrap();
    check(&r, root, &cmp, &model, &mut rng, &ctx);
    drop(r);
    // Delete most entries (leaves merge, the tree loses levels), in a random order.
    let w = d.begin_write(WAIT).unwrap();
    let mut kept = Vec::new();
    for key in std::mem::take(&mut model.keys) {
        if rng.gen_range(0..10) < 8 {
            assert!(
                w.index_delete(root, &encode_key(&key), &*cmp).unwrap(),
                "{ctx}: delete {key:?}"
            );
        } else {
            kept.push(key);
        }
    }
    model.keys = kept;
    check(&w, root, &cmp, &model, &mut rng, &ctx);
    w.commit().unwrap();
    let r = d.begin_read().unwrap();
    check(&r, root, &cmp, &model, &mut rng, &ctx);
}

#[test]
fn index_seeks_match_model_on_trees_of_many_shapes() {
    let seed = seed();
    for (i, page_size) in [512u32, 1024, 4096].into_iter().enumerate() {
        for ncols in 1..=3 {
            let n = if page_size == 4096 { 3000 } else { 1200 };
            shapes(page_size, ncols, n, seed ^ ((i * 3 + ncols) as u64) << 8);
        }
    }
}

#[test]
fn empty_and_one_entry_indexes() {
    let mut rng = StdRng::seed_from_u64(seed());
    let cols = vec![Col {
        desc: true,
        nocase: true,
    }];
    let cmp = comparator(&cols);
    let d = Database::open_in_memory(OpenOptions::default()).unwrap();
    let w = d.begin_write(WAIT).unwrap();
    let root = w.create_btree(BtreeKind::Index).unwrap();
    let mut model = Model {
        cols,
        keys: Vec::new(),
    };
    check(&w, root, &cmp, &model, &mut rng, "empty");
    let key = vec![V::Text(b"Abc".to_vec()), V::Int(1)];
    w.index_insert(root, &encode_key(&key), &*cmp).unwrap();
    model.keys.push(key);
    check(&w, root, &cmp, &model, &mut rng, "one entry");
}

/// Every entry, by a scan (steps, no descents: the oracle for the seeks).
fn scan(t: &Txn, root: PageNo, cmp: &Arc<dyn KeyCompare>) -> Vec<Vec<V>> {
    let mut out = Vec::new();
    let mut c = t.cursor(root, BtreeKind::Index, Some(cmp.clone())).unwrap();
    let mut more = c.first().unwrap();
    while more {
        out.push(
            decode(&c.record().unwrap())
                .unwrap()
                .iter()
                .map(V::of)
                .collect(),
        );
        more = c.next().unwrap();
    }
    out
}

/// Readers seek (fresh and long-lived cursors, every op) while two writers commit inserts
/// and deletes that split and merge the pages the readers cross: each reader sees its
/// snapshot's entries, taken by a scan when it began, on a file (page versions in the
/// cache, pager C2) with a small cache (evictions, reads from the file, C4).
#[test]
fn readers_see_their_snapshot_while_writers_commit() {
    let seed = seed();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("index_descent.db");
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
    let cols = vec![
        Col {
            desc: false,
            nocase: true,
        },
        Col {
            desc: true,
            nocase: false,
        },
    ];
    let cmp = comparator(&cols);
    // Keys: a text of 20-120 bytes from the rowid's bucket, then the rowid's parity.
    let key = |rowid: i64, len: usize| {
        let text = format!("{:0>len$}", rowid / 10).into_bytes();
        vec![V::Text(text), V::Int(rowid % 2), V::Int(rowid)]
    };
    const ROWS: i64 = 3000;
    let root = {
        let w = db.begin_write(WAIT).unwrap();
        let root = w.create_btree(BtreeKind::Index).unwrap();
        for r in 0..ROWS {
            w.index_insert(root, &encode_key(&key(r, 20)), &*cmp)
                .unwrap();
        }
        w.commit().unwrap();
        root
    };
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writers: Vec<_> = (0..2u64)
        .map(|wi| {
            let (db, stop, cmp) = (db.clone(), stop.clone(), cmp.clone());
            std::thread::spawn(move || {
                let mut rng = StdRng::seed_from_u64(seed ^ (wi + 1));
                let mut n = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) && n < 3000 {
                    n += 1;
                    let t = db.begin_write(WAIT).unwrap();
                    for _ in 0..rng.gen_range(1..20) {
                        let r = rng.gen_range(0..ROWS);
                        // The same rowid under either length: a delete of the other
                        // one finds nothing, an insert of a present key is skipped.
                        let k = encode_key(&key(r, if rng.gen() { 20 } else { 120 }));
                        if rng.gen_range(0..3) == 0 {
                            t.index_delete(root, &k, &*cmp).unwrap();
                        } else {
                            let mut c =
                                t.cursor(root, BtreeKind::Index, Some(cmp.clone())).unwrap();
                            if !c.seek_key(&k, SeekOp::Eq).unwrap() {
                                t.index_insert(root, &k, &*cmp).unwrap();
                            }
                        }
                    }
                    t.commit().unwrap();
                }
            })
        })
        .collect();
    let mut rng = StdRng::seed_from_u64(seed);
    for round in 0..30 {
        let r = db.begin_read().unwrap();
        let model = Model {
            cols: cols.clone(),
            keys: scan(&r, root, &cmp),
        };
        let mut kept = r.cursor(root, BtreeKind::Index, Some(cmp.clone())).unwrap();
        for _ in 0..150 {
            let rowid = rng.gen_range(-5..ROWS + 5);
            let mut probe = key(rowid, [20, 120][rng.gen_range(0..2)]);
            probe.truncate(rng.gen_range(1..=3));
            for op in OPS {
                let want = model.expect(&probe, op);
                let mut fresh = r.cursor(root, BtreeKind::Index, Some(cmp.clone())).unwrap();
                let ctx = format!("round {round}: {op:?} {probe:?}");
                assert_eq!(seek(&mut fresh, &probe, op).as_ref(), want, "fresh {ctx}");
                assert_eq!(seek(&mut kept, &probe, op).as_ref(), want, "kept {ctx}");
            }
        }
        assert_eq!(
            scan(&r, root, &cmp),
            model.keys,
            "round {round}: the reader's entries changed"
        );
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for h in writers {
        h.join().unwrap();
    }
}
