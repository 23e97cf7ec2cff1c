//! Fuzz target bodies, shared by the cargo-fuzz project (`crates/storage/fuzz/`) and the
//! stable smoke test (`tests/fuzz_smoke.rs`), so every `cargo test` runs them too.
//!
//! Each target takes arbitrary bytes and drives one decoder as far as the bytes allow. The
//! contract under test is the storage layer's rule for untrusted bytes (STYLE.md): any input
//! yields `Ok` or an error, never a panic, an endless loop or an unbounded allocation. The
//! targets return nothing; they panic only when a property that must hold for *every*
//! input breaks (a decode → encode → decode round trip that changes the values).
//!
//! - [`record_decode`]: the bytes as a record: `decode`, `FieldIter`, `column`,
//!   `column_count`, and `RecordCompare` against itself and a split of itself.
//! - [`page_walk`]: the bytes as a whole database image (`MemBackend::from_bytes`; a mode
//!   byte decides whether the header is patched to be plausible, so most inputs get past
//!   header validation and into the pages): walk `sqlite_schema`, then every root it names
//!   with a cursor both ways and with seeks; an integrity check; and one small write
//!   transaction (rolled back) on each table.
//! - [`log_recover`]: the bytes as `<db>-plog` beside a valid small database on the
//!   simulated disk (a mode byte decides whether the header and frame checksums are
//!   recomputed, so mutated logs get past the checksum into frame decoding and redo); open,
//!   read everything back, integrity check.
//!
//! Every loop here is bounded ([`STEPS_MAX`]): a corrupt tree can make a cursor revisit
//! pages many times (an interior page whose children all point to one subtree), which is
//! slow but legal; the bound keeps a fuzz case fast without hiding a real endless loop
//! (each single cursor step is bounded by the tree depth, cursor.rs).
//!
//! [`seed_database`] and [`seed_log`] build valid inputs (tables, an index, overflow
//! payloads, a log of unapplied commits) for seeding corpora and for mutation.

use crate::error::{PageNo, Result};
use crate::header::{get_u32, init_header, put_u32};
use crate::mem::MemBackend;
use crate::options::{OpenOptions, Synchronous};
use crate::record::{self, Collation, FieldIter, KeyCompare, RecordCompare, ValueRef};
use crate::txn::{BtreeKind, CheckRoot, Database, SeekOp, Txn};
use crate::vfs::{CrashMode, SimVfs};
use std::cmp::Ordering;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// Most cursor steps (next/prev/seek) per tree in one fuzz case.
pub const STEPS_MAX: usize = 2_000;
/// Most trees walked in one fuzz case.
const TREES_MAX: usize = 32;
/// Most fields looked at in one record.
const FIELDS_MAX: usize = 256;

const DB_PATH: &str = "fuzz.db";
const LOG_PATH: &str = "fuzz.db-plog";
const SEED_PAGE_SIZE: u32 = 512;

thread_local! {
    /// Cursor steps taken on this thread: lets tests check that seeds reach the pages.
    static STEPS_TAKEN: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Cursor steps the targets have taken on this thread so far.
pub fn steps_taken() -> usize {
    STEPS_TAKEN.with(|c| c.get())
}

fn count_step() {
    STEPS_TAKEN.with(|c| c.set(c.get() + 1));
}

/// ASCII case folding, the shape of SQLite's NOCASE: exercises the collation path.
struct NoCase;

impl Collation for NoCase {
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        let fold = |c: &u8| c.to_ascii_lowercase();
        a.iter().map(fold).cmp(b.iter().map(fold))
    }
}

fn comparators() -> [RecordCompare; 2] {
    [
        RecordCompare::default(),
        RecordCompare::new(
            vec![true, false, true],
            vec![Some(Arc::new(NoCase)), None, Some(Arc::new(NoCase))],
        ),
    ]
}

/// Values equal with NaN-safe float comparison (bitwise for reals).
fn same_values(a: &[ValueRef], b: &[ValueRef]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| match (x, y) {
            (ValueRef::Real(p), ValueRef::Real(q)) => p.to_bits() == q.to_bits(),
            _ => x == y,
        })
}

/// Fuzz target: arbitrary bytes as a record.
pub fn record_decode(data: &[u8]) {
    if let Ok(values) = record::decode(data) {
        // Property: whatever decodes re-encodes to a record that decodes to the same values.
        let again = record::encode(&values);
        match record::decode(&again) {
            Ok(v2) => assert!(
                same_values(&values, &v2),
                "record round trip changed values: {values:?} vs {v2:?}"
            ),
            Err(e) => panic!("re-encoded record does not decode: {e}"),
        }
    }
    if let Ok(mut it) = FieldIter::new(data) {
        for _ in 0..FIELDS_MAX {
            match it.next_field() {
                Some(Ok(_)) => {}
                Some(Err(_)) | None => break,
            }
        }
    }
    let n = record::column_count(data).unwrap_or(0).min(FIELDS_MAX);
    for i in 0..=n {
        let _ = record::column(data, i);
    }
    let split = data.len() / 2;
    for cmp in comparators() {
        let _ = cmp.compare(data, data);
        let _ = cmp.compare(&data[..split], &data[split..]);
        let _ = cmp.compare(&data[split..], &data[..split]);
    }
}

/// Fuzz target: arbitrary bytes as a whole database image.
///
/// Byte 0 is a mode: bit 0 clear patches the image into a plausible one (the magic string,
/// a page size from bits 1..3, a page count matching the length, rounded up to whole pages)
/// so the fuzzer spends its time in the pages; bit 0 set uses the rest of the bytes as they
/// are (header validation).
pub fn page_walk(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let image = if mode & 1 == 0 {
        plausible_image(rest, 512u32 << ((mode >> 1) & 3))
    } else {
        rest.to_vec()
    };
    let Ok(backend) = MemBackend::from_bytes(image) else {
        return;
    };
    let Ok(db) = Database::with_backend(Arc::new(backend)) else {
        return;
    };
    let _ = walk_database(&db, true);
}

/// `bytes` as a database image with a valid-looking header: magic, page size, page count.
fn plausible_image(bytes: &[u8], page_size: u32) -> Vec<u8> {
    let ps = page_size as usize;
    let pages = bytes.len().div_ceil(ps).max(1);
    let mut image = bytes.to_vec();
    image.resize(pages * ps, 0);
    let mut fresh = vec![0u8; ps];
    init_header(&mut fresh, page_size);
    // Keep the input's header fields other than these: the fuzzer still mutates the
    // reserved-bytes count, freelist pointers, schema format, text encoding...
    image[0..16].copy_from_slice(&fresh[0..16]);
    image[16..18].copy_from_slice(&fresh[16..18]);
    image[21..24].copy_from_slice(&fresh[21..24]);
    put_u32(&mut image, 28, pages as u32);
    image.copy_within(24..28, 92);
    image
}

/// A tree named by `sqlite_schema`.
struct Root {
    pgno: PageNo,
    kind: BtreeKind,
}

/// Reads the schema table: (type, rootpage) of each row naming a tree, at most
/// [`TREES_MAX`].
fn schema_roots(t: &Txn) -> Result<Vec<Root>> {
    let mut roots = Vec::new();
    let mut c = t.cursor(PageNo(1), BtreeKind::Table, None)?;
    let mut ok = c.first()?;
    let mut steps = 0;
    while ok && steps < STEPS_MAX && roots.len() < TREES_MAX {
        steps += 1;
        let rec = c.record()?;
        if let (Ok(ValueRef::Text(ty)), Ok(ValueRef::Integer(root))) =
            (record::column(&rec, 0), record::column(&rec, 3))
        {
            if let Ok(pgno) = u32::try_from(root) {
                if pgno > 1 {
                    let kind = if ty == b"index" {
                        BtreeKind::Index
                    } else {
                        BtreeKind::Table
                    };
                    roots.push(Root {
                        pgno: PageNo(pgno),
                        kind,
                    });
                }
            }
        }
        ok = c.next()?;
    }
    Ok(roots)
}

/// Walks every tree: forward with record decoding, backward, seeks; integrity check; and,
/// with `write`, one rolled-back write transaction touching each table.
fn walk_database(db: &Database, write: bool) -> Result<()> {
    let t = db.begin_read()?;
    let _ = t.header();
    let roots = schema_roots(&t)?;
    let cmp: Arc<dyn KeyCompare> = Arc::new(RecordCompare::default());
    let mut all = vec![Root {
        pgno: PageNo(1),
        kind: BtreeKind::Table,
    }];
    all.extend(roots);
    for r in &all {
        let _ = walk_tree(&t, r, &cmp);
    }
    let checks: Vec<CheckRoot> = all
        .iter()
        .map(|r| {
            let c = (r.kind == BtreeKind::Index).then(|| cmp.clone());
            (r.pgno, r.kind, c)
        })
        .collect();
    let _ = t.integrity_check_with(&checks, 20);
    drop(t);
    if write {
        let w = db.begin_write(Duration::from_secs(1))?;
        for r in &all {
            let _ = write_tree(&w, r, &cmp);
        }
        w.rollback();
    }
    Ok(())
}

fn walk_tree(t: &Txn, r: &Root, cmp: &Arc<dyn KeyCompare>) -> Result<()> {
    let index = r.kind == BtreeKind::Index;
    let mut c = t.cursor(r.pgno, r.kind, index.then(|| cmp.clone()))?;
    let mut keys: Vec<Vec<u8>> = Vec::new();
    let mut rowids: Vec<i64> = Vec::new();
    let mut ok = c.first()?;
    let mut steps = 0;
    while ok && steps < STEPS_MAX {
        steps += 1;
        count_step();
        let rec = c.record()?;
        record_decode(&rec);
        if index {
            if keys.len() < 8 {
                keys.push(rec);
            }
        } else if rowids.len() < 8 {
            rowids.push(c.rowid()?);
        }
        ok = c.next()?;
    }
    let mut ok = c.last()?;
    let mut steps = 0;
    while ok && steps < STEPS_MAX {
        steps += 1;
        count_step();
        let _ = c.record()?;
        ok = c.prev()?;
    }
    let ops = [SeekOp::Eq, SeekOp::Ge, SeekOp::Gt, SeekOp::Le, SeekOp::Lt];
    if index {
        keys.push(record::encode(&[ValueRef::Integer(0)]));
        keys.push(record::encode(&[ValueRef::Text(b"m")]));
        for k in &keys {
            for op in ops {
                if c.seek_key(k, op)? {
                    let _ = c.record()?;
                    let _ = c.next();
                }
            }
        }
    } else {
        rowids.extend([i64::MIN, -1, 0, 1, 100, i64::MAX]);
        for &rowid in &rowids {
            for op in ops {
                if c.seek_rowid(rowid, op)? {
                    let _ = c.record()?;
                    let _ = c.prev();
                }
            }
        }
    }
    let _ = c.count();
    Ok(())
}

/// Inserts into and deletes from one tree inside the (rolled-back) write transaction:
/// reaches balance, the freelist and overflow chains with corrupt pages underneath.
fn write_tree(w: &Txn, r: &Root, cmp: &Arc<dyn KeyCompare>) -> Result<()> {
    let big = vec![0x5au8; 700];
    let small = record::encode(&[ValueRef::Integer(7), ValueRef::Text(b"fuzz")]);
    let large = record::encode(&[ValueRef::Blob(&big)]);
    match r.kind {
        BtreeKind::Table => {
            for rowid in [1i64, 2, 50, 1_000_000] {
                w.table_insert(r.pgno, rowid, &small)?;
            }
            w.table_insert(r.pgno, 3, &large)?;
            for rowid in [1i64, 3, 4] {
                w.table_delete(r.pgno, rowid)?;
            }
        }
        BtreeKind::Index => {
            let k = record::encode(&[ValueRef::Text(b"k"), ValueRef::Integer(9)]);
            w.index_insert(r.pgno, &k, &**cmp)?;
            w.index_delete(r.pgno, &k, &**cmp)?;
        }
    }
    Ok(())
}

/// Fuzz target: arbitrary bytes as the log beside a valid small database.
///
/// Byte 0 is a mode: bit 0 clear recomputes the log header's checksum and each frame's
/// chained checksum (so mutations reach frame decoding and redo); bit 0 set uses the rest of
/// the bytes as they are.
pub fn log_recover(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let Some(base) = base_database() else {
        return;
    };
    let mut log = rest.to_vec();
    if mode & 1 == 0 {
        fix_log_checksums(&mut log);
    }
    let Ok(db) = open_on(base, log) else {
        return;
    };
    let _ = walk_database(&db, false);
}

/// Opens the base database of [`log_recover`] with `log` as its `-plog` (a fresh simulated
/// disk): how tests replay a log the fuzzer found.
pub fn open_with_log(log: Vec<u8>) -> Result<Database> {
    let base = base_database()
        .ok_or_else(|| crate::StorageError::misuse("base database could not be built"))?;
    open_on(base, log)
}

fn open_on(base: &[u8], log: Vec<u8>) -> Result<Database> {
    let vfs = SimVfs::new(1);
    vfs.put_file(DB_PATH, base.to_vec());
    vfs.put_file(LOG_PATH, log);
    Database::open_with_vfs(Arc::new(vfs), DB_PATH, seed_options())
}

/// Recomputes the header checksum and the chain of frame checksums in place (log/format.rs
/// layout). Stops at the first frame whose length field does not fit.
pub fn fix_log_checksums(log: &mut [u8]) {
    use crate::log::format::{FRAME_MIN_BYTES, LOG_HEADER_BYTES};
    if log.len() < LOG_HEADER_BYTES {
        return;
    }
    let crc = crc32fast::hash(&log[0..28]);
    put_u32(log, 28, crc);
    let mut prev = crc;
    let mut at = LOG_HEADER_BYTES;
    while at + FRAME_MIN_BYTES <= log.len() {
        let len = u32::from_be_bytes([log[at], log[at + 1], log[at + 2], log[at + 3]]) as usize;
        if len < FRAME_MIN_BYTES || len > log.len() - at {
            break;
        }
        let end = at + len - 4;
        let mut h = crc32fast::Hasher::new();
        h.update(&prev.to_be_bytes());
        h.update(&log[at..end]);
        prev = h.finalize();
        put_u32(log, end, prev);
        at += len;
    }
}

fn seed_options() -> OpenOptions {
    OpenOptions {
        page_size: SEED_PAGE_SIZE,
        cache_pages_max: 64,
        synchronous: Synchronous::Off,
        ..OpenOptions::default()
    }
}

/// splitmix64: the seed builders' deterministic randomness (no dependency on `rand`).
struct Mix(u64);

impl Mix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Adds a table and an index named in `sqlite_schema`, with `rows` rows, some of them
/// with overflow payloads.
fn fill(db: &Database, rng: &mut Mix, rows: i64) -> Result<()> {
    let w = db.begin_write(Duration::from_secs(1))?;
    let table = w.create_btree(BtreeKind::Table)?;
    let index = w.create_btree(BtreeKind::Index)?;
    let n = w.count(PageNo(1))? as i64;
    for (i, (ty, root)) in [(&b"table"[..], table), (&b"index"[..], index)]
        .into_iter()
        .enumerate()
    {
        let name = format!("t{}", n + i as i64);
        let rec = record::encode(&[
            ValueRef::Text(ty),
            ValueRef::Text(name.as_bytes()),
            ValueRef::Text(b"t"),
            ValueRef::Integer(root.0 as i64),
            ValueRef::Text(b"CREATE ..."),
        ]);
        w.table_insert(PageNo(1), n + i as i64 + 1, &rec)?;
    }
    let cmp = RecordCompare::default();
    for rowid in 1..=rows {
        let len = match rng.below(10) {
            0 => 600 + rng.below(3000) as usize,
            _ => rng.below(40) as usize,
        };
        let text = vec![b'a' + rng.below(26) as u8; len];
        let rec = record::encode(&[
            ValueRef::Integer(rng.next() as i64 >> rng.below(64)),
            ValueRef::Text(&text),
            ValueRef::Real(rowid as f64 / 3.0),
        ]);
        w.table_insert(table, rowid, &rec)?;
        let key = record::encode(&[
            ValueRef::Text(&text[..len.min(60)]),
            ValueRef::Integer(rowid),
        ]);
        w.index_insert(index, &key, &cmp)?;
    }
    w.commit()
}

/// A valid database image (page size 512) with a table and an index of a few dozen rows,
/// some on overflow pages; different `seed`s give different contents and shapes.
pub fn seed_database(seed: u64) -> Result<Vec<u8>> {
    let mut rng = Mix(seed);
    let db = Database::with_backend(Arc::new(MemBackend::new(SEED_PAGE_SIZE)?))?;
    for _ in 0..=rng.below(2) {
        let rows = 1 + rng.below(60) as i64;
        fill(&db, &mut rng, rows)?;
    }
    let w = db.begin_write(Duration::from_secs(1))?;
    // Some deletes leave free pages on the freelist.
    for rowid in 1..rng.below(30) as i64 {
        w.table_delete(PageNo(2), rowid * 2)?;
    }
    w.commit()?;
    let backend = db.backend().clone();
    drop(db);
    let mut out = Vec::new();
    let r = backend.begin_read()?;
    for p in 1..=r.page_count() {
        out.extend_from_slice(&r.page(PageNo(p))?);
    }
    Ok(out)
}

/// The database file `log_recover` puts its log beside: built once, through the file
/// backend on the simulated disk, and checkpointed (so it holds no log of its own).
fn base_database() -> Option<&'static [u8]> {
    static BASE: OnceLock<Option<Vec<u8>>> = OnceLock::new();
    BASE.get_or_init(|| base_disk(0).ok().and_then(|v| v.file_bytes(DB_PATH)))
        .as_deref()
}

/// A simulated disk holding the base database after `seed`-driven fill (checkpointed).
fn base_disk(seed: u64) -> Result<SimVfs> {
    let vfs = SimVfs::new(7);
    {
        let db = Database::open_with_vfs(Arc::new(vfs.clone()), DB_PATH, seed_options())?;
        fill(&db, &mut Mix(seed), 20)?;
        db.checkpoint()?;
    }
    Ok(vfs)
}

/// A log (with its header) holding a few unapplied commits over the base database of
/// [`log_recover`] — what a killed process leaves behind. `seed` varies the commits.
pub fn seed_log(seed: u64) -> Result<Vec<u8>> {
    let vfs = SimVfs::new(7);
    vfs.put_file(
        DB_PATH,
        base_database()
            .ok_or_else(|| crate::StorageError::misuse("base database could not be built"))?
            .to_vec(),
    );
    // No checkpoint: every commit must stay in `-plog` (a round would move later ones to
    // `-plog2`, docs/log-and-recovery.md 3b).
    let quiet = crate::pager::PagerConfig {
        checkpoint_log_bytes: u64::MAX / 4,
        checkpoint_dirty_percent: 1000,
        backpressure_dirty_percent: 2000,
        background_checkpoint: false,
    };
    let db = Database::open_with_config(Arc::new(vfs.clone()), DB_PATH, seed_options(), quiet)?;
    let mut rng = Mix(seed);
    for _ in 0..=rng.below(3) {
        let w = db.begin_write(Duration::from_secs(1))?;
        for _ in 0..=rng.below(8) {
            let rowid = rng.below(40) as i64;
            if rng.below(3) == 0 {
                w.table_delete(PageNo(2), rowid)?;
            } else {
                let body = vec![b'z'; rng.below(900) as usize];
                w.table_insert(PageNo(2), rowid, &record::encode(&[ValueRef::Blob(&body)]))?;
            }
        }
        w.commit()?;
    }
    let disk = vfs.crash(seed, CrashMode::ProcessCrash);
    drop(db);
    let mut log = disk
        .file_bytes(LOG_PATH)
        .ok_or_else(|| crate::StorageError::misuse("no log after the crash"))?;
    // The zero tail the log grows ahead of its frames (log G5) carries nothing for the
    // fuzzer to mutate but bytes to wade through.
    use crate::log::format::{FRAME_MIN_BYTES, LOG_HEADER_BYTES};
    let mut end = LOG_HEADER_BYTES;
    while end + FRAME_MIN_BYTES <= log.len() {
        let len = get_u32(&log, end) as usize;
        if len < FRAME_MIN_BYTES || len > log.len() - end {
            break;
        }
        end += len;
    }
    if log.len() > end && log[end..].iter().all(|b| *b == 0) {
        log.truncate(end);
    }
    Ok(log)
}
