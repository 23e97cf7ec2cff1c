//! The file abstraction under the pager: the operating system ([`OsVfs`]) or a simulated disk
//! for crash tests ([`SimVfs`]).
//!
//! The pager reaches files only through these traits, so every byte it persists can be
//! intercepted by the simulator, which replays power losses and failing calls from a seed.
//!
//! Invariants every implementation keeps:
//! - V1. `sync` has fdatasync semantics: when it returns Ok, every write and truncate issued
//!   on that file before the call survives a power loss. Nothing is promised for writes that
//!   were not followed by a successful `sync`.
//! - V2. `read_at` past the end of the file returns the bytes that exist (possibly none); it
//!   never fabricates data. Callers treat a short read as zeros or as corruption.
//! - V3. Creating a file makes its name durable before `open` returns (directory fsync), so
//!   a synced file cannot vanish after a power loss.
//! - V4. An error is returned, never a panic, for every failing call; implementations do not
//!   retry a failed `sync` (a failed fsync may have dropped dirty pages — fsyncgate).

pub mod os;
pub mod sim;

pub use os::OsVfs;
pub use sim::{CrashMode, SimVfs};

use crate::error::Result;
use std::sync::Arc;

/// A namespace of files.
pub trait Vfs: Send + Sync {
    /// Opens `path` read-write, creating it (empty) when `create` is true and it is missing.
    /// A missing file without `create` is `CantOpen`.
    fn open(&self, path: &str, create: bool) -> Result<Arc<dyn VfsFile>>;
    fn delete(&self, path: &str) -> Result<()>;
    fn exists(&self, path: &str) -> Result<bool>;
    /// A key naming the same file for every handle of this namespace (the canonical path
    /// for the OS), used by the in-process registry that shares one backend per database.
    /// `None`: the namespace is private to this `Vfs` instance.
    fn registry_key(&self, _path: &str) -> Option<String> {
        None
    }
    /// Takes the cross-process lock for the database at `path` (see `lockfile`). Namespaces
    /// invisible to other processes need none and return `Ok(None)`.
    fn lock_process(&self, _path: &str) -> Result<Option<crate::lockfile::ProcessLock>> {
        Ok(None)
    }
}

/// An open file. All offsets are absolute; calls may come from several threads at once.
pub trait VfsFile: Send + Sync {
    /// Reads up to `buf.len()` bytes at `offset`; returns how many were read (V2).
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize>;
    /// Writes all of `data` at `offset`, extending the file if needed (a gap reads as zeros).
    fn write_at(&self, offset: u64, data: &[u8]) -> Result<()>;
    /// fdatasync (V1).
    fn sync(&self) -> Result<()>;
    fn size(&self) -> Result<u64>;
    fn truncate(&self, len: u64) -> Result<()>;
}

/// Reads exactly `buf.len()` bytes at `offset`, filling whatever lies past the end of the
/// file with zeros; returns how many bytes really came from the file.
pub fn read_zero_padded(file: &dyn VfsFile, offset: u64, buf: &mut [u8]) -> Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        let n = file.read_at(offset + done as u64, &mut buf[done..])?;
        if n == 0 {
            break;
        }
        // A file claiming more bytes than asked for is not trusted past the buffer.
        done += n.min(buf.len() - done);
    }
    buf[done..].fill(0);
    Ok(done)
}
