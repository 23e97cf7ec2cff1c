//! The cross-process lock: one process per database.
//!
//! parlite keeps its page cache and its log state in memory, so two processes writing the
//! same database would corrupt it. A process that opens `<db>` takes `flock(LOCK_EX |
//! LOCK_NB)` on the side file `<db>-plock` (a name stock SQLite ignores) and writes its pid
//! there; a second process fails fast with `StorageError::Locked { holder_pid }`.
//!
//! Invariants:
//! - L1. While a [`ProcessLock`] lives, no other process holds one for the same database: the
//!   kernel releases a `flock` only when its open file description closes (our drop, or the
//!   process's death, including SIGKILL), so a crashed holder never leaves a stale lock.
//! - L2. The lock file is never deleted: unlinking it while another process waits on the
//!   old inode would let two processes hold "the" lock on two different inodes.
//! - L3. Within one process the lock is taken once per database (the backend registry in
//!   `open` shares one backend per path); `flock` locks conflict even inside one process.

use crate::error::{Result, StorageError};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::io::AsRawFd;

/// The lock file's name for the database at `db_path`.
pub fn lock_path(db_path: &str) -> String {
    format!("{db_path}-plock")
}

/// A held process lock; released on drop (L1).
#[derive(Debug)]
pub struct ProcessLock {
    file: File,
    path: String,
}

impl ProcessLock {
    /// Takes the lock for the database at `db_path` or returns `Locked` naming the holder.
    pub fn acquire(db_path: &str) -> Result<ProcessLock> {
        let path = lock_path(db_path);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| {
                crate::error::note_os_error(&e);
                StorageError::CantOpen {
                    path: path.clone(),
                    reason: e.to_string(),
                }
            })?;
        // SAFETY: flock on a valid, owned file descriptor; no memory is shared with the kernel.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc != 0 {
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
                let mut text = String::new();
                let holder_pid = file
                    .read_to_string(&mut text)
                    .ok()
                    .and_then(|_| text.trim().parse::<u32>().ok());
                return Err(StorageError::Locked {
                    path: db_path.to_string(),
                    holder_pid,
                });
            }
            return Err(StorageError::io("flock", path, &err));
        }
        let pid = std::process::id();
        let write = file
            .set_len(0)
            .and_then(|_| file.seek(SeekFrom::Start(0)))
            .and_then(|_| file.write_all(format!("{pid}\n").as_bytes()));
        write.map_err(|e| StorageError::io("write", path.clone(), &e))?;
        Ok(ProcessLock { file, path })
    }

    pub fn path(&self) -> &str {
        &self.path
    }
}

impl Drop for ProcessLock {
    fn drop(&mut self) {
        // Clearing the pid is cosmetic (L1: closing the descriptor is what releases the lock).
        let _ = self.file.set_len(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_lock_in_same_process_is_refused_then_released() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("x.db").display().to_string();
        let a = ProcessLock::acquire(&db).unwrap();
        match ProcessLock::acquire(&db) {
            Err(StorageError::Locked { holder_pid, .. }) => {
                assert_eq!(holder_pid, Some(std::process::id()))
            }
            other => panic!("expected Locked, got {other:?}"),
        }
        drop(a);
        let _b = ProcessLock::acquire(&db).unwrap();
    }
}
