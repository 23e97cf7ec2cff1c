//! Bottom-up builds (`Txn::build_btree`, btree/build.rs): trees built from sorted entries
//! must be valid SQLite B-trees (stock SQLite's `PRAGMA integrity_check` cross-checks the
//! index against the table), read back exactly what was given, and keep working under
//! ordinary inserts and deletes afterwards. Sizes cover the edge cases of the packing:
//! empty, one entry, one page exactly, a leaf boundary on the last entry, deep trees on
//! small pages, and payloads with overflow chains.

use parlite_storage::record::{decode, encode, KeyCompare, RecordCompare, ValueRef};
use parlite_storage::{BtreeKind, Database, HeaderField, MemBackend, PageNo, SeekOp, Txn};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::sync::Arc;
use std::time::Duration;

fn text_row(rng: &mut StdRng, page_size: usize, i: i64) -> Vec<u8> {
    let len = if rng.gen_bool(0.05) {
        rng.gen_range(page_size / 2..page_size * 3)
    } else {
        rng.gen_range(0..40)
    };
    let s: Vec<u8> = (0..len).map(|_| rng.gen_range(b'a'..=b'z')).collect();
    encode(&[ValueRef::Integer(i * 7 % 1000), ValueRef::Text(&s)])
}

/// Index key of a row: its text column, then the rowid.
fn key_of(rec: &[u8], rowid: i64) -> Vec<u8> {
    let vals = decode(rec).unwrap();
    encode(&[vals[1], ValueRef::Integer(rowid)])
}

fn build(page_size: u32, nrows: usize, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mem = MemBackend::new(page_size).unwrap();
    let db = Database::with_backend(Arc::new(mem.clone())).unwrap();
    let txn = db.begin_write(Duration::ZERO).unwrap();
    let cmp = RecordCompare::default();
    let root = txn.create_btree(BtreeKind::Table).unwrap();
    let iroot = txn.create_btree(BtreeKind::Index).unwrap();
    let mut rows: Vec<(i64, Vec<u8>)> = Vec::new();
    let mut rowid = 0i64;
    for i in 0..nrows {
        rowid += rng.gen_range(1..5);
        rows.push((rowid, text_row(&mut rng, page_size as usize, i as i64)));
    }
    let n = txn
        .build_btree(
            root,
            None,
            &mut rows.iter().map(|(r, b)| (*r, b.as_slice())),
        )
        .unwrap();
    assert_eq!(n as usize, nrows);
    let mut keys: Vec<Vec<u8>> = rows.iter().map(|(r, b)| key_of(b, *r)).collect();
    keys.sort_by(|a, b| cmp.compare(a, b).unwrap());
    txn.build_btree(
        iroot,
        Some(&cmp),
        &mut keys.iter().map(|k| (0, k.as_slice())),
    )
    .unwrap();
    check_parlite(&txn, root, iroot);
    read_back(&txn, root, &rows);
    // Ordinary writes keep working on the built trees.
    for _ in 0..nrows / 3 {
        let r = rng.gen_range(0..rowid + 50);
        if rng.gen_bool(0.5) {
            let rec = text_row(&mut rng, page_size as usize, r);
            if let Some(pos) = rows.iter().position(|(x, _)| *x == r) {
                txn.index_delete(iroot, &key_of(&rows[pos].1, r), &cmp)
                    .unwrap();
                rows[pos].1 = rec.clone();
            } else {
                rows.push((r, rec.clone()));
            }
            txn.table_insert(root, r, &rec).unwrap();
            txn.index_insert(iroot, &key_of(&rec, r), &cmp).unwrap();
        } else if let Some(pos) = rows.iter().position(|(x, _)| *x == r) {
            let (_, old) = rows.remove(pos);
            assert!(txn.table_delete(root, r).unwrap());
            assert!(txn.index_delete(iroot, &key_of(&old, r), &cmp).unwrap());
        }
    }
    rows.sort_by_key(|(r, _)| *r);
    check_parlite(&txn, root, iroot);
    read_back(&txn, root, &rows);
    let schema = [
        ("table", "t", root, "CREATE TABLE t(a, b)"),
        ("index", "t_b", iroot, "CREATE INDEX t_b ON t(b)"),
    ];
    for (i, (ty, name, r, sql)) in schema.iter().enumerate() {
        let rec = encode(&[
            ValueRef::Text(ty.as_bytes()),
            ValueRef::Text(name.as_bytes()),
            ValueRef::Text(b"t"),
            ValueRef::Integer(r.0 as i64),
            ValueRef::Text(sql.as_bytes()),
        ]);
        txn.table_insert(PageNo(1), i as i64 + 1, &rec).unwrap();
    }
    txn.set_header_field(HeaderField::SchemaCookie, 1).unwrap();
    txn.commit().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.sqlite");
    std::fs::write(&path, mem.to_bytes()).unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    let ok: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok", "page size {page_size}, {nrows} rows, seed {seed}");
    let count: i64 = conn
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap();
    assert_eq!(count as usize, rows.len());
}

fn check_parlite(txn: &Txn, root: PageNo, iroot: PageNo) {
    let cmp: Arc<dyn KeyCompare> = Arc::new(RecordCompare::default());
    let errs = txn
        .integrity_check_with(
            &[
                (PageNo(1), BtreeKind::Table, None),
                (root, BtreeKind::Table, None),
                (iroot, BtreeKind::Index, Some(cmp)),
            ],
            10,
        )
        .unwrap();
    assert!(errs.is_empty(), "{errs:?}");
}

fn read_back(txn: &Txn, root: PageNo, rows: &[(i64, Vec<u8>)]) {
    let mut cur = txn.cursor(root, BtreeKind::Table, None).unwrap();
    let mut got = Vec::new();
    if cur.first().unwrap() {
        while cur.valid() {
            got.push((cur.rowid().unwrap(), cur.record().unwrap()));
            cur.next().unwrap();
        }
    }
    assert_eq!(got.len(), rows.len());
    assert!(got == rows, "rows differ");
    if let Some((r, rec)) = rows.last() {
        assert!(cur.seek_rowid(*r, SeekOp::Eq).unwrap());
        assert_eq!(&cur.record().unwrap(), rec);
    }
}

#[test]
fn built_trees_pass_sqlite_integrity_check() {
    for (ps, n) in [
        (4096u32, 0usize),
        (4096, 1),
        (4096, 150),
        (4096, 3000),
        (512, 1),
        (512, 5),
        (512, 2000),
        (1024, 777),
        (65536, 4000),
    ] {
        for seed in 0..3 {
            build(ps, n, seed);
        }
    }
}

#[test]
fn every_small_size_on_small_pages() {
    // Every count up to a few leaves: each leaf and interior boundary case comes up.
    for n in 0..120 {
        build(512, n, n as u64);
    }
}

#[test]
fn out_of_order_entries_are_refused() {
    let db = Database::open_in_memory(Default::default()).unwrap();
    let txn = db.begin_write(Duration::ZERO).unwrap();
    let root = txn.create_btree(BtreeKind::Table).unwrap();
    let rec = encode(&[ValueRef::Integer(1)]);
    let rows = [(2i64, rec.as_slice()), (1, rec.as_slice())];
    assert!(txn
        .build_btree(root, None, &mut rows.iter().copied())
        .is_err());
    let iroot = txn.create_btree(BtreeKind::Index).unwrap();
    let (a, b) = (
        encode(&[ValueRef::Integer(5)]),
        encode(&[ValueRef::Integer(5)]),
    );
    let keys = [(0i64, a.as_slice()), (0, b.as_slice())];
    let cmp = RecordCompare::default();
    assert!(txn
        .build_btree(iroot, Some(&cmp), &mut keys.iter().copied())
        .is_err());
    // A tree that is not empty is refused too.
    txn.table_insert(root, 1, &rec).unwrap();
    let one = [(5i64, rec.as_slice())];
    let r2 = txn.create_btree(BtreeKind::Table).unwrap();
    txn.table_insert(r2, 1, &rec).unwrap();
    assert!(txn.build_btree(r2, None, &mut one.iter().copied()).is_err());
}
