//! parlite-storage: the bottom layer of parlite.
//!
//! It keeps a SQLite 3 database file (sqlite.org/fileformat2.html) and parlite's own durable
//! log beside it. It knows pages, cells, records and B-trees; it never names SQL types,
//! tables or columns — the SQL layer reaches it only through [`Txn`] and cursors.
//!
//! Layout (each module opens with its own invariants):
//! - `error`   — the layer's error enum and `PageNo`
//! - `pages`   — the contract between B-trees and page backends (snapshots, copy-on-write)
//! - `varint`, `record` — SQLite varints and the record format (serial types)
//! - `btree`   — table and index B-trees in SQLite's page format, freelist, integrity check
//! - `mem`     — the in-memory backend (`:memory:` databases, tests)
//! - `vfs`     — the file abstraction: the OS, and a simulated disk for crash tests
//! - `pager`, `log` — the file backend: page cache, durable log, recovery, checkpoint
//! - `concurrent` — optimistic concurrent transactions: read/write sets, history, validation
//! - `txn`     — `Database`, `Txn`, `Cursor`: the API the SQL layer uses
//! - `fuzzing` — fuzz target bodies (hidden; used by `fuzz/` and tests/fuzz_smoke.rs)

pub mod btree;
pub mod concurrent;
pub mod error;
#[doc(hidden)]
pub mod fuzzing;
pub mod header;
pub mod lockfile;
pub mod log;
pub mod mem;
mod open;
pub mod options;
pub mod pager;
pub mod pages;
pub mod record;
pub mod txn;
pub mod varint;
pub mod vfs;

pub use concurrent::{ConcurrencyStats, Isolation};
pub use error::{last_os_error, note_os_error, PageNo, Result, StorageError};
pub use header::HeaderField;
pub use mem::MemBackend;
pub use options::{OpenOptions, Synchronous};
pub use pager::{CheckpointMode, CheckpointOutcome, FileBackend, PagerConfig, PagerStats};
pub use record::{Collation, KeyCompare, RecordCompare, ValueRef};
pub use txn::{BtreeKind, CacheAsk, CheckRoot, Cursor, Database, HeaderInfo, SeekOp, Txn};
pub use vfs::{OsVfs, SimVfs, Vfs, VfsFile};
