//! Crash simulation with real B-trees (pager D1–D5 through `Database`/`Txn`).
//!
//! Like `crash_sim.rs`, but each transaction inserts, replaces and deletes rows of two
//! tables (values up to 3 KB on 1 KiB pages: splits, merges, overflow chains, freelist),
//! keeping an index on the first table in step, and now and then a VACUUM (every tree
//! rebuilt on an emptied, truncated database: new roots); the model is a map per table. After the crash (power loss at a random I/O call, possibly
//! again during recovery) and reopen:
//! - the tables equal the last acknowledged commit or the one in flight (`Full`);
//! - `Txn::integrity_check` over every tree reports nothing;
//! - for a sample of seeds, stock SQLite (rusqlite) runs `PRAGMA integrity_check` on the
//!   checkpointed file and counts the same rows.
//!
//! Replay: `PARLITE_SEED=n cargo test -p parlite-storage --test crash_btree`; more cases
//! with `PARLITE_LONG=1`.

use parlite_storage::pager::PagerConfig;
use parlite_storage::record::{encode, ValueRef};
use parlite_storage::vfs::{CrashMode, SimVfs};
use parlite_storage::{BtreeKind, Database, OpenOptions, PageNo, RecordCompare, Synchronous, Txn};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

const PATH: &str = "b.db";
const TABLES: [&str; 2] = ["t1", "t2"];

type Tables = Vec<BTreeMap<i64, Vec<u8>>>;
type TreeSpec = (
    PageNo,
    BtreeKind,
    Option<Arc<dyn parlite_storage::KeyCompare>>,
);

#[derive(Clone, Debug, PartialEq)]
struct Model {
    /// Root pages of the tables, once the schema commit is acknowledged.
    roots: Vec<PageNo>,
    rows: Tables,
}

fn open(disk: &SimVfs, cache: usize, log_bytes: u64) -> parlite_storage::Result<Database> {
    let opts = OpenOptions {
        page_size: 1024,
        cache_pages_max: cache,
        synchronous: Synchronous::Full,
        ..OpenOptions::default()
    };
    let config = PagerConfig {
        checkpoint_log_bytes: log_bytes,
        checkpoint_dirty_percent: 50,
        backpressure_dirty_percent: 100,
        background_checkpoint: false,
    };
    Database::open_with_config(Arc::new(disk.clone()), PATH, opts, config)
}

fn row_record(value: &[u8]) -> Vec<u8> {
    encode(&[ValueRef::Blob(value)])
}

/// Creates the tables and their `sqlite_schema` rows, so stock SQLite can read the file.
fn create_schema(db: &Database) -> parlite_storage::Result<Vec<PageNo>> {
    let t = db.begin_write(Duration::from_secs(5))?;
    let mut roots = Vec::new();
    for (i, name) in TABLES.iter().enumerate() {
        let root = t.create_btree(BtreeKind::Table)?;
        let sql = format!("CREATE TABLE {name}(v)");
        let rec = encode(&[
            ValueRef::Text(b"table"),
            ValueRef::Text(name.as_bytes()),
            ValueRef::Text(name.as_bytes()),
            ValueRef::Integer(root.0 as i64),
            ValueRef::Text(sql.as_bytes()),
        ]);
        t.table_insert(PageNo(1), i as i64 + 1, &rec)?;
        roots.push(root);
    }
    // An index on t1(v): entries (v, rowid), kept in step with t1's rows.
    let root = t.create_btree(BtreeKind::Index)?;
    let rec = encode(&[
        ValueRef::Text(b"index"),
        ValueRef::Text(b"i1"),
        ValueRef::Text(b"t1"),
        ValueRef::Integer(root.0 as i64),
        ValueRef::Text(b"CREATE INDEX i1 ON t1(v)"),
    ]);
    t.table_insert(PageNo(1), TABLES.len() as i64 + 1, &rec)?;
    roots.push(root);
    t.set_header_field(parlite_storage::HeaderField::SchemaCookie, 1)?;
    t.commit()?;
    Ok(roots)
}

fn index_key(v: &[u8], rowid: i64) -> Vec<u8> {
    encode(&[ValueRef::Blob(v), ValueRef::Integer(rowid)])
}

fn index_cmp() -> RecordCompare {
    RecordCompare::new(vec![false, false], vec![None, None])
}

/// Keeps index i1 in step with a change of t1's row `rowid` from `old` to `new`.
fn sync_index(
    t: &Txn,
    roots: &[PageNo],
    rowid: i64,
    old: Option<&[u8]>,
    new: Option<&[u8]>,
) -> parlite_storage::Result<()> {
    let cmp = index_cmp();
    if let Some(old) = old {
        let found = t.index_delete(roots[TABLES.len()], &index_key(old, rowid), &cmp)?;
        assert!(found, "index entry of row {rowid} missing");
    }
    if let Some(new) = new {
        t.index_insert(roots[TABLES.len()], &index_key(new, rowid), &cmp)?;
    }
    Ok(())
}

fn random_value(rng: &mut StdRng) -> Vec<u8> {
    let len = match rng.gen_range(0..10) {
        0 => rng.gen_range(900..3000), // overflow pages
        1..=3 => rng.gen_range(100..400),
        _ => rng.gen_range(0..40),
    };
    let b: u8 = rng.gen();
    (0..len).map(|i| b.wrapping_add(i as u8)).collect()
}

/// One transaction of random row changes, mirrored into `rows`.
fn run_txn(
    t: &Txn,
    roots: &[PageNo],
    rng: &mut StdRng,
    rows: &mut Tables,
) -> parlite_storage::Result<()> {
    let mut sp: Option<(u32, Tables)> = None;
    for _ in 0..rng.gen_range(1..12) {
        let ti = rng.gen_range(0..TABLES.len());
        let rowid = rng.gen_range(1..150i64);
        match rng.gen_range(0..10) {
            0..=5 => {
                let v = random_value(rng);
                t.table_insert(roots[ti], rowid, &row_record(&v))?;
                if ti == 0 {
                    sync_index(
                        t,
                        roots,
                        rowid,
                        rows[0].get(&rowid).map(|o| &o[..]),
                        Some(&v),
                    )?;
                }
                rows[ti].insert(rowid, v);
            }
            6..=7 => {
                let existed = t.table_delete(roots[ti], rowid)?;
                let old = rows[ti].remove(&rowid);
                assert_eq!(
                    existed,
                    old.is_some(),
                    "delete of {rowid} disagrees with the model"
                );
                if ti == 0 {
                    sync_index(t, roots, rowid, old.as_deref(), None)?;
                }
            }
            8 => {
                // A burst of deletes shrinks the tree (merges, freelist).
                let keys: Vec<i64> = rows[ti]
                    .keys()
                    .copied()
                    .filter(|k| k % 3 == rowid % 3)
                    .collect();
                for k in keys {
                    t.table_delete(roots[ti], k)?;
                    let old = rows[ti].remove(&k);
                    if ti == 0 {
                        sync_index(t, roots, k, old.as_deref(), None)?;
                    }
                }
            }
            _ => match sp.take() {
                None => sp = Some((t.savepoint()?, rows.clone())),
                Some((id, saved)) => {
                    if rng.gen_bool(0.5) {
                        t.rollback_to(id)?;
                        *rows = saved;
                    } else {
                        t.release(id)?;
                    }
                }
            },
        }
    }
    t.commit()
}

/// VACUUM's compaction as the SQL layer runs it: every tree read whole, the database
/// emptied down to page 1 (`Txn::reset_to_empty_schema`), the trees rebuilt bottom up on
/// fresh pages and the schema rows put back with their new roots. Returns the new roots;
/// the caller commits.
fn vacuum_txn(t: &Txn, roots: &[PageNo]) -> parlite_storage::Result<Vec<PageNo>> {
    let cmp: Arc<dyn parlite_storage::KeyCompare> = Arc::new(index_cmp());
    let read = |root: PageNo, index: bool| -> parlite_storage::Result<Vec<(i64, Vec<u8>)>> {
        let (kind, c) = if index {
            (BtreeKind::Index, Some(cmp.clone()))
        } else {
            (BtreeKind::Table, None)
        };
        let mut cur = t.cursor(root, kind, c)?;
        let mut out = Vec::new();
        let mut more = cur.first()?;
        while more {
            let rowid = if index { 0 } else { cur.rowid()? };
            out.push((rowid, cur.record()?));
            more = cur.next()?;
        }
        Ok(out)
    };
    let schema = read(PageNo(1), false)?;
    let mut trees = Vec::new();
    for (i, r) in roots.iter().enumerate() {
        trees.push(read(*r, i == TABLES.len())?);
    }
    t.reset_to_empty_schema()?;
    let mut new_roots = Vec::new();
    for (i, entries) in trees.iter().enumerate() {
        let index = i == TABLES.len();
        let kind = if index {
            BtreeKind::Index
        } else {
            BtreeKind::Table
        };
        let root = t.create_btree(kind)?;
        t.build_btree(
            root,
            if index { Some(cmp.as_ref()) } else { None },
            &mut entries.iter().map(|(r, p)| (*r, &p[..])),
        )?;
        new_roots.push(root);
    }
    for (rowid, rec) in &schema {
        let mut vals = parlite_storage::record::decode(rec)?;
        let slot = usize::try_from(*rowid - 1).expect("schema rowids start at 1");
        vals[3] = ValueRef::Integer(i64::from(new_roots[slot].0));
        t.table_insert(PageNo(1), *rowid, &encode(&vals))?;
    }
    Ok(new_roots)
}

fn read_tables(db: &Database, roots: &[PageNo]) -> Result<Tables, String> {
    let t = db.begin_read().map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for root in &roots[..TABLES.len()] {
        let mut rows = BTreeMap::new();
        let mut c = t
            .cursor(*root, BtreeKind::Table, None)
            .map_err(|e| e.to_string())?;
        let mut more = c.first().map_err(|e| e.to_string())?;
        while more {
            let rec = c.record().map_err(|e| e.to_string())?;
            let v = match parlite_storage::record::decode(&rec)
                .map_err(|e| e.to_string())?
                .first()
            {
                Some(ValueRef::Blob(b)) => b.to_vec(),
                other => return Err(format!("unexpected value {other:?}")),
            };
            rows.insert(c.rowid().map_err(|e| e.to_string())?, v);
            more = c.next().map_err(|e| e.to_string())?;
        }
        out.push(rows);
    }
    // The index holds exactly (v, rowid) for each row of t1, in key order.
    let cmp: Arc<dyn parlite_storage::KeyCompare> = Arc::new(index_cmp());
    let mut c = t
        .cursor(roots[TABLES.len()], BtreeKind::Index, Some(cmp.clone()))
        .map_err(|e| e.to_string())?;
    let mut entries = Vec::new();
    let mut more = c.first().map_err(|e| e.to_string())?;
    while more {
        entries.push(c.record().map_err(|e| e.to_string())?);
        more = c.next().map_err(|e| e.to_string())?;
    }
    let mut want: Vec<Vec<u8>> = out[0].iter().map(|(r, v)| index_key(v, *r)).collect();
    want.sort_by(|a, b| cmp.compare(a, b).unwrap_or(std::cmp::Ordering::Equal));
    if entries != want {
        return Err(format!(
            "index has {} entries, t1 has {} rows (or they differ)",
            entries.len(),
            want.len()
        ));
    }
    let mut specs: Vec<TreeSpec> = roots[..TABLES.len()]
        .iter()
        .map(|r| (*r, BtreeKind::Table, None))
        .collect();
    specs.push((roots[TABLES.len()], BtreeKind::Index, Some(cmp)));
    let problems = t
        .integrity_check_with(&specs, 20)
        .map_err(|e| e.to_string())?;
    if !problems.is_empty() {
        return Err(format!("integrity_check: {problems:?}"));
    }
    t.commit().map_err(|e| e.to_string())?;
    Ok(out)
}

struct Outcome {
    acked: Model,
    in_flight: Option<Model>,
}

fn workload(db: &Database, rng: &mut StdRng, txns: usize) -> Outcome {
    let mut acked = Model {
        roots: Vec::new(),
        rows: vec![BTreeMap::new(); TABLES.len()],
    };
    match create_schema(db) {
        Ok(roots) => acked.roots = roots,
        Err(_) => {
            return Outcome {
                acked,
                in_flight: None,
            }
        }
    }
    for _ in 0..txns {
        let Ok(t) = db.begin_write(Duration::from_secs(5)) else {
            return Outcome {
                acked,
                in_flight: None,
            };
        };
        let mut rows = acked.rows.clone();
        if rng.gen_range(0..8) == 0 {
            // VACUUM: same rows, new roots, a shorter file.
            match vacuum_txn(&t, &acked.roots) {
                Ok(new_roots) => match t.commit() {
                    Ok(()) => {
                        VACUUMS[0].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        acked.roots = new_roots;
                    }
                    Err(_) => {
                        VACUUMS[1].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        t.rollback();
                        let in_flight = Model {
                            roots: new_roots,
                            rows,
                        };
                        return Outcome {
                            acked,
                            in_flight: Some(in_flight),
                        };
                    }
                },
                Err(_) => {
                    t.rollback();
                    return Outcome {
                        acked,
                        in_flight: None,
                    };
                }
            }
            continue;
        }
        match run_txn(&t, &acked.roots, rng, &mut rows) {
            Ok(()) => acked.rows = rows,
            Err(_) => {
                t.rollback();
                let in_flight = Model {
                    roots: acked.roots.clone(),
                    rows,
                };
                return Outcome {
                    acked,
                    in_flight: Some(in_flight),
                };
            }
        }
        if rng.gen_range(0..15) == 0 && db.checkpoint().is_err() {
            return Outcome {
                acked,
                in_flight: None,
            };
        }
    }
    Outcome {
        acked,
        in_flight: None,
    }
}

/// The roots as the recovered schema table lists them (empty if the schema commit was lost).
fn recovered_roots(db: &Database) -> Vec<PageNo> {
    let t = db.begin_read().unwrap();
    let mut roots = Vec::new();
    let mut c = t.cursor(PageNo(1), BtreeKind::Table, None).unwrap();
    let mut more = c.first().unwrap();
    while more {
        let rec = c.record().unwrap();
        if let Some(ValueRef::Integer(r)) = parlite_storage::record::decode(&rec).unwrap().get(3) {
            roots.push(PageNo(*r as u32));
        }
        more = c.next().unwrap();
    }
    roots
}

fn stock_sqlite_check(seed: u64, bytes: &[u8], model: &Model) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("check.db");
    std::fs::write(&path, bytes).unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    let result: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(result, "ok", "seed {seed}: stock SQLite integrity_check");
    if !model.roots.is_empty() {
        for (i, name) in TABLES.iter().enumerate() {
            let n: i64 = conn
                .query_row(&format!("SELECT count(*) FROM {name}"), [], |r| r.get(0))
                .unwrap();
            assert_eq!(
                n as usize,
                model.rows[i].len(),
                "seed {seed}: stock SQLite row count of {name}"
            );
        }
    }
}

static STOCK_CHECKS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
/// VACUUMs acknowledged, and VACUUMs whose commit the crash interrupted.
static VACUUMS: [std::sync::atomic::AtomicUsize; 2] = [
    std::sync::atomic::AtomicUsize::new(0),
    std::sync::atomic::AtomicUsize::new(0),
];

fn run_case(seed: u64) -> (usize, bool) {
    let mut rng = StdRng::seed_from_u64(seed);
    let cache = rng.gen_range(12..60);
    let log_bytes = [2 << 10, 16 << 10, 4 << 20][rng.gen_range(0..3)];
    let txns = rng.gen_range(3..25);
    let disk = SimVfs::new(seed);
    let crash_at = 10 + rng.gen_range(0..(txns as u64 * 8 + 20));
    if rng.gen_bool(0.2) {
        disk.fail_at(crash_at);
    } else {
        disk.fail_from(crash_at);
    }
    let (outcome, mut after) = match open(&disk, cache, log_bytes) {
        Ok(db) => {
            let o = workload(&db, &mut rng, txns);
            let after = disk.crash(seed ^ 0xD15C, CrashMode::PowerLoss);
            drop(db);
            (o, after)
        }
        Err(_) => {
            let empty = Model {
                roots: Vec::new(),
                rows: vec![BTreeMap::new(); TABLES.len()],
            };
            (
                Outcome {
                    acked: empty,
                    in_flight: None,
                },
                disk.crash(seed ^ 0xD15C, CrashMode::PowerLoss),
            )
        }
    };
    if rng.gen_bool(0.25) {
        after.fail_from(rng.gen_range(0..40));
        let db = open(&after, cache, log_bytes);
        let next = after.crash(seed ^ 0xAB, CrashMode::PowerLoss);
        drop(db);
        after = next;
    }

    let db = open(&after, cache, log_bytes).unwrap_or_else(|e| panic!("seed {seed}: reopen: {e}"));
    let roots = recovered_roots(&db);
    let candidates: Vec<&Model> = std::iter::once(&outcome.acked)
        .chain(outcome.in_flight.iter())
        .collect();
    let found = if roots.is_empty() {
        // The schema commit itself was lost: allowed only if it was never acknowledged.
        assert!(
            outcome.acked.roots.is_empty(),
            "seed {seed}: acknowledged schema commit lost"
        );
        None
    } else {
        // The schema commit may have been the one in flight (then no rows yet).
        // (A VACUUM in flight may have moved them.)
        if !outcome.acked.roots.is_empty() {
            let in_flight = outcome.in_flight.as_ref().is_some_and(|m| m.roots == roots);
            assert!(
                roots == outcome.acked.roots || in_flight,
                "seed {seed}: roots {roots:?}, acknowledged {:?}",
                outcome.acked.roots
            );
        }
        let got = read_tables(&db, &roots).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let schema_only = outcome.acked.roots.is_empty() && got.iter().all(|t| t.is_empty());
        let m = candidates
            .iter()
            .copied()
            .find(|m| m.rows == got || schema_only)
            .unwrap_or_else(|| panic!("seed {seed}: recovered tables match neither the last acknowledged commit nor the one in flight"));
        Some(Model {
            roots: roots.clone(),
            rows: m.rows.clone(),
        })
    };
    let went_in_flight = found
        .as_ref()
        .is_some_and(|m| Some(m) == outcome.in_flight.as_ref() && m != &outcome.acked);
    drop(db);
    let bytes = after.file_bytes(PATH).unwrap_or_default();
    if seed % 10 == 0 && !bytes.is_empty() {
        STOCK_CHECKS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let model = found.clone().unwrap_or(Model {
            roots: Vec::new(),
            rows: vec![BTreeMap::new(); TABLES.len()],
        });
        stock_sqlite_check(seed, &bytes, &model);
    }
    (
        outcome.acked.rows.iter().map(|t| t.len()).sum(),
        went_in_flight,
    )
}

#[test]
fn btree_crash_at_random_io_calls() {
    if let Ok(s) = std::env::var("PARLITE_SEED") {
        run_case(s.parse().expect("PARLITE_SEED must be a number"));
        return;
    }
    let n = if std::env::var("PARLITE_LONG").is_ok() {
        10_000
    } else {
        2_000
    };
    let (mut rows, mut in_flight) = (0, 0);
    for seed in 0..n {
        let (r, f) = run_case(seed);
        rows += r;
        in_flight += f as usize;
    }
    let stock = STOCK_CHECKS.load(std::sync::atomic::Ordering::Relaxed);
    let vacuums = VACUUMS[0].load(std::sync::atomic::Ordering::Relaxed);
    let vacuums_cut = VACUUMS[1].load(std::sync::atomic::Ordering::Relaxed);
    println!(
        "{n} cases, {rows} acknowledged rows in total, {in_flight} recovered to the in-flight \
         commit, {stock} files checked by stock SQLite, {vacuums} VACUUMs acknowledged and \
         {vacuums_cut} cut by the crash at commit"
    );
    assert!(
        vacuums > n as usize / 5 && vacuums_cut > 0,
        "the workload must VACUUM, and crash during some VACUUM commits"
    );
    assert!(stock >= n as usize / 20, "too few stock SQLite checks");
    assert!(rows > n as usize * 5, "the workload must build real trees");
}
