//! A simulated disk for crash tests: in-memory files that remember which writes have not
//! been synced, with seeded power losses and fault injection.
//!
//! Model (deliberately harsher than ext4 in `data=ordered` mode):
//! - S1. Each file has a *durable* image (what survives a power loss for sure) and a list of
//!   *pending* operations (writes and truncates issued since the last successful `sync`).
//!   `sync` folds the pending list into the durable image (V1).
//! - S2. [`SimVfs::crash`] returns a new disk holding, for each file, the durable image with
//!   each pending operation independently kept, dropped, or — for writes — torn (each
//!   512-byte sector of the write lands or not), in issue order; the choices come from the
//!   seed only, so a failure replays exactly. `CrashMode::ProcessCrash` keeps every pending
//!   operation readable and still pending (the OS survives a killed process: its cache holds
//!   the writes, and a later power loss may still drop them).
//! - S3. After `crash` the old disk is frozen: every later call on it fails, as if the
//!   machine had stopped at that instant (so a backend still alive in the test cannot change
//!   what "survived").
//! - S4. Fault injection counts every call (open, delete, exists, read, write, sync, size,
//!   truncate) with one global counter: `fail_at(n)` fails call number `n`, `fail_from(n)`
//!   fails it and every later one. A failing write may still land a prefix of its sectors
//!   (an EIO in the middle of a write), never more.
//! - S5. Creating and deleting files is durable at once (directory operations are outside
//!   this model; `OsVfs` syncs the directory on create, V3).

use super::{Vfs, VfsFile};
use crate::error::{Result, StorageError};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

const SECTOR_BYTES: u64 = 512;

/// What a crash does to writes that were not synced (S2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrashMode {
    /// Power loss: each unsynced operation kept, dropped or torn.
    PowerLoss,
    /// The process died but the OS did not: every issued write survives.
    ProcessCrash,
}

/// SplitMix64: tiny, seedable, good enough to pick fates; keeps the crate free of an RNG
/// dependency.
#[derive(Debug, Clone)]
pub struct SimRng(u64);

impl SimRng {
    pub fn new(seed: u64) -> SimRng {
        SimRng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

#[derive(Debug, Clone)]
enum PendingOp {
    Write { offset: u64, data: Vec<u8> },
    Truncate { len: u64 },
}

#[derive(Debug, Clone, Default)]
struct SimFileData {
    current: Vec<u8>,
    durable: Vec<u8>,
    pending: Vec<PendingOp>,
    syncs: u64,
}

fn apply_write(buf: &mut Vec<u8>, offset: u64, data: &[u8]) {
    let (start, end) = (offset as usize, offset as usize + data.len());
    if buf.len() < end {
        buf.resize(end, 0);
    }
    buf[start..end].copy_from_slice(data);
}

fn apply_truncate(buf: &mut Vec<u8>, len: u64) {
    buf.resize(len as usize, 0);
}

#[derive(Debug)]
struct SimState {
    files: HashMap<String, SimFileData>,
    io_calls: u64,
    fail_at: Option<u64>,
    fail_from: Option<u64>,
    frozen: bool,
    rng: SimRng,
    /// Time each `fdatasync` takes, slept outside the disk's lock so that other threads
    /// keep writing meanwhile, as on a real disk (zero: instant).
    sync_delay: std::time::Duration,
    /// Time each write takes, slept outside the disk's lock before the write (and its fault
    /// decision), so tests can widen the moments between a commit's publication and its
    /// frame's write (pager L1) that other threads act in (zero: instant).
    write_delay: std::time::Duration,
}

/// The simulated disk. Clones share the same disk.
#[derive(Debug, Clone)]
pub struct SimVfs {
    state: Arc<Mutex<SimState>>,
}

struct SimFile {
    state: Arc<Mutex<SimState>>,
    name: String,
}

impl SimVfs {
    pub fn new(seed: u64) -> SimVfs {
        SimVfs {
            state: Arc::new(Mutex::new(SimState {
                files: HashMap::new(),
                io_calls: 0,
                fail_at: None,
                fail_from: None,
                frozen: false,
                rng: SimRng::new(seed),
                sync_delay: std::time::Duration::ZERO,
                write_delay: std::time::Duration::ZERO,
            })),
        }
    }

    fn lock(&self) -> MutexGuard<'_, SimState> {
        lock_state(&self.state)
    }

    /// Calls counted so far (S4).
    pub fn io_calls(&self) -> u64 {
        self.lock().io_calls
    }

    /// Makes call number `n` (0-based, counted from the disk's creation) fail (S4).
    pub fn fail_at(&self, n: u64) {
        self.lock().fail_at = Some(n);
    }

    /// Makes call number `n` and every later call fail (S4).
    pub fn fail_from(&self, n: u64) {
        self.lock().fail_from = Some(n);
    }

    /// Makes every later `fdatasync` take `delay` (slept outside the disk's lock).
    pub fn set_sync_delay(&self, delay: std::time::Duration) {
        self.lock().sync_delay = delay;
    }

    /// Makes every later write take `delay` (slept outside the disk's lock).
    pub fn set_write_delay(&self, delay: std::time::Duration) {
        self.lock().write_delay = delay;
    }

    pub fn clear_faults(&self) {
        let mut s = self.lock();
        s.fail_at = None;
        s.fail_from = None;
    }

    /// The disk after a crash at this instant (S2); this disk is frozen (S3).
    pub fn crash(&self, seed: u64, mode: CrashMode) -> SimVfs {
        let mut s = self.lock();
        s.frozen = true;
        let mut rng = SimRng::new(seed);
        let mut files = HashMap::new();
        for (name, f) in &s.files {
            if mode == CrashMode::ProcessCrash {
                // The OS lives on: what was written is readable, and still only as durable
                // as it was (a later power loss may drop it).
                files.insert(
                    name.clone(),
                    SimFileData {
                        syncs: 0,
                        ..f.clone()
                    },
                );
                continue;
            }
            let mut img = f.durable.clone();
            for op in &f.pending {
                let fate = rng.below(3);
                match (op, fate) {
                    (_, 1) => {}
                    (PendingOp::Write { offset, data }, 0) => apply_write(&mut img, *offset, data),
                    (PendingOp::Truncate { len }, 0) => apply_truncate(&mut img, *len),
                    (PendingOp::Write { offset, data }, _) => {
                        // Torn: split at sector boundaries of the file, keep each piece or not.
                        let mut at = *offset;
                        let end = offset + data.len() as u64;
                        while at < end {
                            let next = ((at / SECTOR_BYTES) + 1) * SECTOR_BYTES;
                            let piece_end = next.min(end);
                            if rng.below(2) == 0 {
                                let lo = (at - offset) as usize;
                                let hi = (piece_end - offset) as usize;
                                apply_write(&mut img, at, &data[lo..hi]);
                            }
                            at = piece_end;
                        }
                    }
                    (PendingOp::Truncate { len }, _) => {
                        if rng.below(2) == 0 {
                            apply_truncate(&mut img, *len)
                        }
                    }
                }
            }
            files.insert(
                name.clone(),
                SimFileData {
                    current: img.clone(),
                    durable: img,
                    pending: Vec::new(),
                    syncs: 0,
                },
            );
        }
        SimVfs {
            state: Arc::new(Mutex::new(SimState {
                files,
                io_calls: 0,
                fail_at: None,
                fail_from: None,
                frozen: false,
                rng: SimRng::new(seed.wrapping_add(1)),
                sync_delay: std::time::Duration::ZERO,
                write_delay: std::time::Duration::ZERO,
            })),
        }
    }

    /// A copy of the disk as it is now (not sharing state), so one instant can be crashed in
    /// many ways.
    pub fn fork(&self) -> SimVfs {
        let s = self.lock();
        SimVfs {
            state: Arc::new(Mutex::new(SimState {
                files: s.files.clone(),
                io_calls: 0,
                fail_at: None,
                fail_from: None,
                frozen: false,
                rng: s.rng.clone(),
                sync_delay: s.sync_delay,
                write_delay: s.write_delay,
            })),
        }
    }

    /// The file's current bytes (what a read would return), if it exists.
    pub fn file_bytes(&self, path: &str) -> Option<Vec<u8>> {
        self.lock().files.get(path).map(|f| f.current.clone())
    }

    /// Replaces a file's content, durably (for corruption tests).
    pub fn put_file(&self, path: &str, bytes: Vec<u8>) {
        let mut s = self.lock();
        s.files.insert(
            path.to_string(),
            SimFileData {
                current: bytes.clone(),
                durable: bytes,
                pending: Vec::new(),
                syncs: 0,
            },
        );
    }

    /// Successful `sync` calls on `path` so far.
    pub fn sync_count(&self, path: &str) -> u64 {
        self.lock().files.get(path).map_or(0, |f| f.syncs)
    }
}

fn lock_state(state: &Mutex<SimState>) -> MutexGuard<'_, SimState> {
    // A test thread that panicked while holding the lock leaves the disk's data intact
    // (every mutation is a single in-memory step), so the poison flag carries no meaning.
    state.lock().unwrap_or_else(|p| p.into_inner())
}

/// Counts the call and decides whether it fails (S3, S4).
fn admit(s: &mut SimState, op: &'static str, path: &str) -> Result<()> {
    let n = s.io_calls;
    s.io_calls += 1;
    let fail = s.frozen || s.fail_at == Some(n) || s.fail_from.is_some_and(|from| n >= from);
    if fail {
        Err(StorageError::Io {
            op,
            path: path.to_string(),
            message: format!("simulated I/O error at call {n}"),
        })
    } else {
        Ok(())
    }
}

impl Vfs for SimVfs {
    fn registry_key(&self, path: &str) -> Option<String> {
        // Clones share one disk, so they share backends too.
        Some(format!("sim:{:p}:{path}", Arc::as_ptr(&self.state)))
    }

    fn open(&self, path: &str, create: bool) -> Result<Arc<dyn VfsFile>> {
        let mut s = self.lock();
        admit(&mut s, "open", path)?;
        if !s.files.contains_key(path) {
            if !create {
                return Err(StorageError::CantOpen {
                    path: path.to_string(),
                    reason: "no such file".into(),
                });
            }
            s.files.insert(path.to_string(), SimFileData::default());
        }
        Ok(Arc::new(SimFile {
            state: Arc::clone(&self.state),
            name: path.to_string(),
        }))
    }

    fn delete(&self, path: &str) -> Result<()> {
        let mut s = self.lock();
        admit(&mut s, "unlink", path)?;
        s.files.remove(path);
        Ok(())
    }

    fn exists(&self, path: &str) -> Result<bool> {
        let mut s = self.lock();
        admit(&mut s, "stat", path)?;
        Ok(s.files.contains_key(path))
    }
}

impl SimFile {
    fn with<T>(
        &self,
        op: &'static str,
        f: impl FnOnce(&mut SimFileData, &mut SimRng) -> T,
    ) -> Result<T> {
        let mut guard = lock_state(&self.state);
        let s = &mut *guard;
        admit(s, op, &self.name)?;
        let file = s
            .files
            .get_mut(&self.name)
            .ok_or_else(|| StorageError::Io {
                op,
                path: self.name.clone(),
                message: "file was deleted".into(),
            })?;
        Ok(f(file, &mut s.rng))
    }
}

impl VfsFile for SimFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        self.with("pread", |f, _| {
            let len = f.current.len() as u64;
            if offset >= len {
                return 0;
            }
            let n = ((len - offset) as usize).min(buf.len());
            buf[..n].copy_from_slice(&f.current[offset as usize..offset as usize + n]);
            n
        })
    }

    fn write_at(&self, offset: u64, data: &[u8]) -> Result<()> {
        let delay = lock_state(&self.state).write_delay;
        if !delay.is_zero() {
            std::thread::sleep(delay);
        }
        let mut guard = lock_state(&self.state);
        let s = &mut *guard;
        if let Err(e) = admit(s, "pwrite", &self.name) {
            // S4: an EIO mid-write may still have landed some leading sectors.
            if !s.frozen {
                let sectors = (data.len() as u64).div_ceil(SECTOR_BYTES);
                let keep =
                    (s.rng.below(sectors + 1) * SECTOR_BYTES).min(data.len() as u64) as usize;
                if keep > 0 {
                    if let Some(f) = s.files.get_mut(&self.name) {
                        apply_write(&mut f.current, offset, &data[..keep]);
                        f.pending.push(PendingOp::Write {
                            offset,
                            data: data[..keep].to_vec(),
                        });
                    }
                }
            }
            return Err(e);
        }
        let f = s
            .files
            .get_mut(&self.name)
            .ok_or_else(|| StorageError::Io {
                op: "pwrite",
                path: self.name.clone(),
                message: "file was deleted".into(),
            })?;
        apply_write(&mut f.current, offset, data);
        f.pending.push(PendingOp::Write {
            offset,
            data: data.to_vec(),
        });
        Ok(())
    }

    fn sync(&self) -> Result<()> {
        let delay = lock_state(&self.state).sync_delay;
        if !delay.is_zero() {
            std::thread::sleep(delay);
        }
        self.with("fdatasync", |f, _| {
            f.durable = f.current.clone();
            f.pending.clear();
            f.syncs += 1;
        })
    }

    fn size(&self) -> Result<u64> {
        self.with("fstat", |f, _| f.current.len() as u64)
    }

    fn truncate(&self, len: u64) -> Result<()> {
        self.with("ftruncate", |f, _| {
            apply_truncate(&mut f.current, len);
            f.pending.push(PendingOp::Truncate { len });
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synced_writes_survive_and_unsynced_may_not() {
        let vfs = SimVfs::new(1);
        let f = vfs.open("a", true).unwrap();
        f.write_at(0, &[1u8; 1024]).unwrap();
        f.sync().unwrap();
        f.write_at(0, &[2u8; 1024]).unwrap();
        let mut seen = std::collections::HashSet::new();
        for seed in 0..64 {
            let crashed = vfs.fork().crash(seed, CrashMode::PowerLoss);
            let bytes = crashed.file_bytes("a").unwrap();
            assert_eq!(bytes.len(), 1024);
            // Each sector is wholly old or wholly new.
            for sector in bytes.chunks(512) {
                assert!(sector.iter().all(|b| *b == sector[0]));
            }
            seen.insert(bytes.iter().map(|b| *b as u32).sum::<u32>());
        }
        // Kept, dropped and torn all happen across seeds.
        assert!(seen.len() >= 3, "{seen:?}");
        let kept = vfs.crash(0, CrashMode::ProcessCrash);
        assert_eq!(kept.file_bytes("a").unwrap(), vec![2u8; 1024]);
        // S3: the old disk is frozen.
        assert!(f.write_at(0, b"x").is_err());
    }

    #[test]
    fn fault_injection_counts_calls() {
        let vfs = SimVfs::new(7);
        let f = vfs.open("a", true).unwrap();
        let base = vfs.io_calls();
        vfs.fail_at(base + 1);
        assert!(f.size().is_ok());
        assert!(f.sync().is_err());
        assert!(f.sync().is_ok());
        vfs.fail_from(vfs.io_calls() + 1);
        assert!(f.size().is_ok());
        assert!(f.size().is_err());
        assert!(f.size().is_err());
        vfs.clear_faults();
        assert!(f.size().is_ok());
    }
}
