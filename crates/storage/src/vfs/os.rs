//! The operating system's files: `pread`/`pwrite` through `std::os::unix::fs::FileExt`,
//! `fdatasync` through `File::sync_data`.
//!
//! Invariants (numbering of `vfs`): V1 via `sync_data` (fdatasync on Linux); V3 by syncing
//! the parent directory after creating a file; V4 by mapping every `io::Error` to
//! `StorageError::Io` and never retrying.

use super::{Vfs, VfsFile};
use crate::error::{Result, StorageError};
use crate::lockfile::ProcessLock;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

/// The real file system.
#[derive(Debug, Default, Clone, Copy)]
pub struct OsVfs;

struct OsFile {
    file: File,
    path: String,
}

impl Vfs for OsVfs {
    fn open(&self, path: &str, create: bool) -> Result<Arc<dyn VfsFile>> {
        let existed = Path::new(path).exists();
        let rw = OpenOptions::new()
            .read(true)
            .write(true)
            .create(create)
            .open(path);
        let file = match rw {
            Ok(f) => f,
            // A file we may only read (permissions, read-only mount): reads still work and
            // the first write reports the OS error.
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                OpenOptions::new().read(true).open(path).map_err(|e| {
                    crate::error::note_os_error(&e);
                    StorageError::CantOpen {
                        path: path.to_string(),
                        reason: e.to_string(),
                    }
                })?
            }
            Err(e) => {
                crate::error::note_os_error(&e);
                return Err(StorageError::CantOpen {
                    path: path.to_string(),
                    reason: e.to_string(),
                });
            }
        };
        if create && !existed {
            sync_parent_dir(path)?;
        }
        Ok(Arc::new(OsFile {
            file,
            path: path.to_string(),
        }))
    }

    fn delete(&self, path: &str) -> Result<()> {
        match std::fs::remove_file(path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(StorageError::io("unlink", path, &e)),
        }
    }

    fn exists(&self, path: &str) -> Result<bool> {
        Ok(Path::new(path).exists())
    }

    fn registry_key(&self, path: &str) -> Option<String> {
        // Canonicalise so that "./a.db" and "/abs/a.db" share one backend; a file not yet
        // created canonicalises through its directory.
        let p = Path::new(path);
        let canon = match p.canonicalize() {
            Ok(c) => c,
            Err(_) => {
                let parent = p
                    .parent()
                    .filter(|d| !d.as_os_str().is_empty())
                    .unwrap_or(Path::new("."));
                let name = p.file_name()?;
                parent.canonicalize().ok()?.join(name)
            }
        };
        Some(format!("os:{}", canon.display()))
    }

    fn lock_process(&self, path: &str) -> Result<Option<ProcessLock>> {
        ProcessLock::acquire(path).map(Some)
    }
}

fn sync_parent_dir(path: &str) -> Result<()> {
    let parent = Path::new(path)
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let dir = File::open(parent)
        .map_err(|e| StorageError::io("open dir", parent.display().to_string(), &e))?;
    dir.sync_all()
        .map_err(|e| StorageError::io("fsync dir", parent.display().to_string(), &e))
}

impl VfsFile for OsFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        loop {
            match self.file.read_at(buf, offset) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(StorageError::io("pread", &self.path, &e)),
            }
        }
    }

    fn write_at(&self, offset: u64, data: &[u8]) -> Result<()> {
        self.file
            .write_all_at(data, offset)
            .map_err(|e| StorageError::io("pwrite", &self.path, &e))
    }

    fn sync(&self) -> Result<()> {
        self.file
            .sync_data()
            .map_err(|e| StorageError::io("fdatasync", &self.path, &e))
    }

    fn size(&self) -> Result<u64> {
        self.file
            .metadata()
            .map(|m| m.len())
            .map_err(|e| StorageError::io("fstat", &self.path, &e))
    }

    fn truncate(&self, len: u64) -> Result<()> {
        self.file
            .set_len(len)
            .map_err(|e| StorageError::io("ftruncate", &self.path, &e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_read_truncate_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f").display().to_string();
        let vfs = OsVfs;
        assert!(vfs.open(&path, false).is_err());
        let f = vfs.open(&path, true).unwrap();
        f.write_at(10, b"hello").unwrap();
        f.sync().unwrap();
        assert_eq!(f.size().unwrap(), 15);
        let mut buf = [7u8; 20];
        let n = super::super::read_zero_padded(&*f, 8, &mut buf).unwrap();
        assert_eq!(n, 7);
        assert_eq!(&buf[..7], b"\0\0hello");
        assert!(buf[7..].iter().all(|b| *b == 0));
        f.truncate(3).unwrap();
        assert_eq!(f.size().unwrap(), 3);
        assert!(vfs.exists(&path).unwrap());
        vfs.delete(&path).unwrap();
        assert!(!vfs.exists(&path).unwrap());
    }
}
