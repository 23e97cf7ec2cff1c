//! Index writes that start at the leaf of the previous write to the same index
//! (btree/insert.rs `IndexHint`, kept per index by `Txn`), against `BTreeSet` models.
//!
//! Each step writes "rows": a table row and one entry in each of three indexes, as a
//! statement does, so every index's hint is carried past the other trees' writes. Keys
//! come in runs that stay inside one leaf and cross into the next (ascending and
//! descending inserts and deletes of adjacent entries, appends past the last entry,
//! deletes of absent keys between two present ones), mixed with random keys, UNIQUE
//! inserts refused on their prefix, REPLACE's in-place rewrites of entries (which must
//! leave their index's hint stale), overflow keys, savepoints rolled back, and commits.
//! Pages of 512 B to 4 KiB, so runs split and merge leaves. After every batch: every
//! index scanned against its model and the structural check.
//!
//! Seeded: the seed is printed; `PARLITE_SEED=<n>` replays it.

use parlite_storage::btree::insert::UniqueWrite;
use parlite_storage::record::{encode, KeyCompare, RecordCompare, ValueRef};
use parlite_storage::{BtreeKind, Database, OpenOptions, PageNo, Txn};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

fn seed() -> u64 {
    let seed = match std::env::var("PARLITE_SEED") {
        Ok(s) => s.parse().expect("PARLITE_SEED must be an integer"),
        Err(_) => rand::random::<u64>(),
    };
    eprintln!("seed = {seed} (replay with PARLITE_SEED={seed})");
    seed
}

/// An index entry in the model, ordered as the tree orders it.
#[derive(Clone, Debug)]
struct Key(Vec<u8>);

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
        RecordCompare::default().compare(&self.0, &o.0).unwrap()
    }
}

/// The three indexes' keys for row `rowid` with value `v`: an integer index, a text index
/// whose keys sometimes spill onto overflow pages, and a UNIQUE index on `v` alone
/// (`(key, prefix)`).
struct RowKeys {
    int: Vec<u8>,
    text: Vec<u8>,
    unique: (Vec<u8>, Vec<u8>),
}

fn row_keys(v: i64, rowid: i64, page_size: u32) -> RowKeys {
    // One text in 16 is long enough to overflow; its length follows from v, so the
    // model can rebuild it.
    let pad = if v % 16 == 5 {
        page_size as usize + (v as usize % 300)
    } else {
        (v as usize * 7) % 23
    };
    let text: Vec<u8> = format!("{v:09}").bytes().chain(vec![b'p'; pad]).collect();
    RowKeys {
        int: encode(&[ValueRef::Integer(v), ValueRef::Integer(rowid)]),
        text: encode(&[ValueRef::Text(&text), ValueRef::Integer(rowid)]),
        unique: (
            encode(&[ValueRef::Integer(v), ValueRef::Integer(rowid)]),
            encode(&[ValueRef::Integer(v)]),
        ),
    }
}

struct Trees {
    table: PageNo,
    int: PageNo,
    text: PageNo,
    unique: PageNo,
}

/// What the trees should hold: rows by rowid with their value, each index's entries, and
/// which values the UNIQUE index holds.
#[derive(Clone, Default)]
struct Model {
    rows: std::collections::BTreeMap<i64, i64>,
    int: BTreeSet<Key>,
    text: BTreeSet<Key>,
    unique: BTreeSet<Key>,
}

struct Run {
    txn: Txn,
    trees: Trees,
    model: Model,
    cmp: Arc<dyn KeyCompare>,
    page_size: u32,
    next_rowid: i64,
}

impl Run {
    /// Writes a row as an INSERT does: the table row, then each index entry; the UNIQUE
    /// entry only when no entry holds `v` (else the other two are still written, as a
    /// row may be in an index and not another).
    fn insert(&mut self, v: i64) {
        let rowid = self.next_rowid;
        self.next_rowid += 1;
        let k = row_keys(v, rowid, self.page_size);
        let t = &self.txn;
        t.table_insert(self.trees.table, rowid, &v.to_be_bytes())
            .unwrap();
        t.index_insert(self.trees.int, &k.int, &*self.cmp).unwrap();
        t.index_insert(self.trees.text, &k.text, &*self.cmp)
            .unwrap();
        let inserted = t
            .index_insert_unique(self.trees.unique, &k.unique.0, &k.unique.1, &*self.cmp)
            .unwrap();
        assert_eq!(
            inserted,
            self.unique_entry(v).is_none(),
            "unique insert of {v}"
        );
        self.model.rows.insert(rowid, v);
        self.model.int.insert(Key(k.int));
        self.model.text.insert(Key(k.text));
        if inserted {
            self.model.unique.insert(Key(k.unique.0));
        }
    }

    /// Deletes row `rowid` and its entries, as a DELETE does; an entry the model lacks
    /// (the UNIQUE one of a refused insert) must be reported absent.
    fn delete(&mut self, rowid: i64) {
        let v = self.model.rows.remove(&rowid).expect("row in the model");
        let k = row_keys(v, rowid, self.page_size);
        let t = &self.txn;
        assert!(t.table_delete(self.trees.table, rowid).unwrap());
        assert!(t.index_delete(self.trees.int, &k.int, &*self.cmp).unwrap());
        assert!(t
            .index_delete(self.trees.text, &k.text, &*self.cmp)
            .unwrap());
        let present = self.model.unique.remove(&Key(k.unique.0.clone()));
        assert_eq!(
            t.index_delete(self.trees.unique, &k.unique.0, &*self.cmp)
                .unwrap(),
            present,
            "unique delete of {v}"
        );
        assert!(self.model.int.remove(&Key(k.int)));
        assert!(self.model.text.remove(&Key(k.text)));
    }

    /// The entry of the UNIQUE index holding `v`, if any.
    fn unique_entry(&self, v: i64) -> Option<Key> {
        let prefix = encode(&[ValueRef::Integer(v)]);
        self.model
            .unique
            .range(Key(encode(&[ValueRef::Integer(v), ValueRef::Integer(i64::MIN)]))..)
            .next()
            .filter(|e| RecordCompare::default().compare(&e.0, &prefix).unwrap() == Ordering::Equal)
            .cloned()
    }

    /// Replaces row `rowid` by a new row of the same value, as REPLACE does: the index
    /// entries move to the new rowid in place (`index_rekey`, `index_replace_unique`),
    /// writes that leave each index's own hint stale.
    fn replace(&mut self, rowid: i64) {
        let v = self.model.rows.remove(&rowid).expect("row in the model");
        let new = self.next_rowid;
        self.next_rowid += 1;
        let (old_k, k) = (
            row_keys(v, rowid, self.page_size),
            row_keys(v, new, self.page_size),
        );
        let t = &self.txn;
        assert!(t.table_delete(self.trees.table, rowid).unwrap());
        t.table_insert(self.trees.table, new, &v.to_be_bytes())
            .unwrap();
        assert!(t
            .index_rekey(self.trees.int, &old_k.int, &k.int, &*self.cmp)
            .unwrap());
        assert!(t
            .index_rekey(self.trees.text, &old_k.text, &k.text, &*self.cmp)
            .unwrap());
        let holder = self.unique_entry(v);
        match t
            .index_replace_unique(self.trees.unique, &k.unique.0, &k.unique.1, &*self.cmp)
            .unwrap()
        {
            UniqueWrite::Inserted => assert!(holder.is_none(), "inserted beside {holder:?}"),
            UniqueWrite::Replaced(old) => {
                assert_eq!(Some(Key(old)), holder);
                self.model.unique.remove(holder.as_ref().unwrap());
            }
            UniqueWrite::Clash => {
                let holder = holder.expect("a clash with no entry");
                assert!(t
                    .index_delete(self.trees.unique, &holder.0, &*self.cmp)
                    .unwrap());
                self.model.unique.remove(&holder);
                assert!(t
                    .index_insert_unique(self.trees.unique, &k.unique.0, &k.unique.1, &*self.cmp)
                    .unwrap());
            }
        }
        self.model.unique.insert(Key(k.unique.0));
        self.model.rows.insert(new, v);
        assert!(self.model.int.remove(&Key(old_k.int)));
        assert!(self.model.text.remove(&Key(old_k.text)));
        self.model.int.insert(Key(k.int));
        self.model.text.insert(Key(k.text));
    }

    /// The rowids of up to `n` rows in `int` order from the first entry >= `v`.
    fn adjacent_rows(&self, v: i64, n: usize) -> Vec<i64> {
        let from = Key(encode(&[ValueRef::Integer(v), ValueRef::Integer(i64::MIN)]));
        self.model
            .int
            .range(from..)
            .take(n)
            .map(
                |k| match parlite_storage::record::decode(&k.0).unwrap()[1] {
                    ValueRef::Integer(r) => r,
                    other => panic!("rowid field {other:?}"),
                },
            )
            .collect()
    }

    fn step(&mut self, rng: &mut StdRng, space: i64) {
        let len = rng.gen_range(1..40usize);
        let v = rng.gen_range(0..space);
        match rng.gen_range(0..12) {
            // Ascending and descending runs of new adjacent values (the same values again
            // make equal-value entries with new rowids, next to the old ones).
            0 | 1 => (v..v + len as i64).for_each(|x| self.insert(x)),
            2 => (v..v + len as i64).rev().for_each(|x| self.insert(x)),
            // Appends past every entry: the right-most leaf.
            3 => {
                let top = self.model.rows.values().max().copied().unwrap_or(0);
                (top + 1..top + 1 + len as i64).for_each(|x| self.insert(x));
            }
            // Deletes of adjacent entries in key order, forwards and backwards.
            4 | 5 => self
                .adjacent_rows(v, len)
                .into_iter()
                .for_each(|r| self.delete(r)),
            6 => self
                .adjacent_rows(v, len)
                .into_iter()
                .rev()
                .for_each(|r| self.delete(r)),
            // Deletes of keys absent from the tree, between present adjacent ones: each
            // must find nothing, whichever leaf the hint offers.
            7 => {
                for r in self.adjacent_rows(v, len) {
                    let x = self.model.rows[&r];
                    let absent = row_keys(x, r + space * 1000, self.page_size);
                    let t = &self.txn;
                    assert!(!t
                        .index_delete(self.trees.int, &absent.int, &*self.cmp)
                        .unwrap());
                    assert!(!t
                        .index_delete(self.trees.text, &absent.text, &*self.cmp)
                        .unwrap());
                }
            }
            // Runs of REPLACEs (each row's entries rewritten in place), between which
            // the inserts and deletes above reuse their hints.
            8 | 9 => self
                .adjacent_rows(v, len)
                .into_iter()
                .for_each(|r| self.replace(r)),
            // Random single rows in and out.
            10 => self.insert(rng.gen_range(0..space)),
            _ => {
                if !self.model.rows.is_empty() {
                    let i = rng.gen_range(0..self.model.rows.len());
                    let r = *self.model.rows.keys().nth(i).unwrap();
                    self.delete(r);
                }
            }
        }
    }

    fn check(&self) {
        let roots: Vec<parlite_storage::CheckRoot> = vec![
            (self.trees.table, BtreeKind::Table, None),
            (self.trees.int, BtreeKind::Index, Some(self.cmp.clone())),
            (self.trees.text, BtreeKind::Index, Some(self.cmp.clone())),
            (self.trees.unique, BtreeKind::Index, Some(self.cmp.clone())),
        ];
        let errs = self.txn.integrity_check_with(&roots, 20).unwrap();
        assert!(errs.is_empty(), "integrity check failed: {errs:#?}");
        for (root, model) in [
            (self.trees.int, &self.model.int),
            (self.trees.text, &self.model.text),
            (self.trees.unique, &self.model.unique),
        ] {
            let mut c = self
                .txn
                .cursor(root, BtreeKind::Index, Some(self.cmp.clone()))
                .unwrap();
            let mut got = Vec::new();
            let mut ok = c.first().unwrap();
            while ok {
                got.push(c.record().unwrap());
                ok = c.next().unwrap();
            }
            let want: Vec<Vec<u8>> = model.iter().map(|k| k.0.clone()).collect();
            assert!(
                got == want,
                "index {root:?}: {} entries, model {}",
                got.len(),
                want.len()
            );
        }
        assert_eq!(
            self.txn.count(self.trees.table).unwrap(),
            self.model.rows.len() as u64
        );
    }
}

fn run(page_size: u32, steps: usize, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let db = Database::open_in_memory(OpenOptions {
        page_size,
        ..OpenOptions::default()
    })
    .unwrap();
    let txn = db.begin_write(Duration::ZERO).unwrap();
    let trees = Trees {
        table: txn.create_btree(BtreeKind::Table).unwrap(),
        int: txn.create_btree(BtreeKind::Index).unwrap(),
        text: txn.create_btree(BtreeKind::Index).unwrap(),
        unique: txn.create_btree(BtreeKind::Index).unwrap(),
    };
    let mut r = Run {
        txn,
        trees,
        model: Model::default(),
        cmp: Arc::new(RecordCompare::default()),
        page_size,
        next_rowid: 1,
    };
    // Values from a space that lets runs meet earlier entries; grown, then shrunk.
    let space = (steps as i64) * 4;
    let mut pages_max = 0;
    for step in 0..steps {
        if step % 50 == 49 {
            r.check();
            pages_max = pages_max.max(r.txn.header().unwrap().page_count);
            match rng.gen_range(0..4) {
                0 => {
                    r.txn.commit().unwrap();
                    r.txn = db.begin_write(Duration::ZERO).unwrap();
                }
                // A savepoint rolled back: the trees go back under the hints made since.
                1 => {
                    let saved = (r.model.clone(), r.next_rowid);
                    let sp = r.txn.savepoint().unwrap();
                    for _ in 0..5 {
                        r.step(&mut rng, space);
                    }
                    r.txn.rollback_to(sp).unwrap();
                    r.txn.release(sp).unwrap();
                    (r.model, r.next_rowid) = saved;
                    r.check();
                }
                _ => {}
            }
        }
        if step > steps * 2 / 3 {
            // Mostly deletes at the end, so leaves merge.
            let rows: Vec<i64> = r.adjacent_rows(rng.gen_range(0..space), 30);
            rows.into_iter().for_each(|x| r.delete(x));
        } else {
            r.step(&mut rng, space);
        }
    }
    r.check();
    assert!(
        pages_max > 30,
        "too small to split leaves: {pages_max} pages"
    );
    r.txn.commit().unwrap();
}

#[test]
fn index_runs_match_model_on_all_page_sizes() {
    let seed = seed();
    for (i, page_size) in [512u32, 1024, 4096].into_iter().enumerate() {
        run(page_size, 1500, seed.wrapping_add(i as u64));
    }
}
