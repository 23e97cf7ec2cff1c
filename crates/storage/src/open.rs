//! Opening a database file: `Database::open` and `Database::open_with_vfs`, the file
//! counterparts of `Database::open_in_memory`.
//!
//! They open (or share, within this process) a [`FileBackend`] — which takes the process
//! lock, recovers the log and checkpoints (pager D4) — and wrap it with
//! `Database::with_backend`, which gives an empty file its page 1.
//!
//! Invariants:
//! - O1. One backend per database file per process: a second `open` of the same path returns
//!   a `Database` over the same backend (lockfile L3), so two handles never keep two caches
//!   or two logs of one file.
//! - O2. The synchronous mode of `opts` is the backend's from the start: no commit of this
//!   open runs under a weaker mode than asked for.

use crate::error::{Result, StorageError};
use crate::options::OpenOptions;
use crate::pager::{FileBackend, PagerConfig};
use crate::txn::Database;
use crate::vfs::{OsVfs, Vfs};
use std::path::Path;
use std::sync::Arc;

impl Database {
    /// Opens (or creates, per `opts.create`) the database file at `path`.
    pub fn open(path: impl AsRef<Path>, opts: OpenOptions) -> Result<Database> {
        let path = path.as_ref();
        let text = path.to_str().ok_or_else(|| StorageError::CantOpen {
            path: path.display().to_string(),
            reason: "the path is not valid UTF-8".into(),
        })?;
        Database::open_with_vfs(Arc::new(OsVfs), text, opts)
    }

    /// Opens the database at `path` through `vfs` (the simulated disk in crash tests).
    pub fn open_with_vfs(vfs: Arc<dyn Vfs>, path: &str, opts: OpenOptions) -> Result<Database> {
        Database::open_with_config(vfs, path, opts, PagerConfig::default())
    }

    /// Like [`Database::open_with_vfs`], with the pager's tunables (checkpoint thresholds).
    pub fn open_with_config(
        vfs: Arc<dyn Vfs>,
        path: &str,
        opts: OpenOptions,
        config: PagerConfig,
    ) -> Result<Database> {
        let backend = FileBackend::open_with(vfs, path, &opts, config)?;
        // O2: a shared backend (O1) keeps the mode of its first open unless this one asks
        // for a different one explicitly.
        backend.set_synchronous(opts.synchronous);
        let db = Database::with_backend(Arc::new(backend))?;
        db.set_synchronous(opts.synchronous);
        Ok(db)
    }
}
