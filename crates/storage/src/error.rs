//! Errors of the storage layer.
//!
//! One enum for the whole layer, with structured payloads. The API edge (`parlite`) maps
//! each variant to a SQLite result code: `Corrupt` → SQLITE_CORRUPT (11), `NotADatabase` →
//! SQLITE_NOTADB (26), `Busy` → SQLITE_BUSY (5), `BusySnapshot` → SQLITE_BUSY_SNAPSHOT (517),
//! `Locked` (another process) → SQLITE_BUSY (5), `Io` → SQLITE_IOERR (10), `ReadOnly` →
//! SQLITE_READONLY (8), `Full` → SQLITE_FULL (13), `TooBig` → SQLITE_TOOBIG (18),
//! `Misuse` → SQLITE_MISUSE (21), `CantOpen` → SQLITE_CANTOPEN (14), `Conflict` (a
//! concurrent transaction failed validation at commit and was rolled back) →
//! SQLITE_BUSY_SNAPSHOT (517); the SQL layer names the table from `root`.

use std::fmt;

/// A page number: 1-based, as in the SQLite file format. Page 0 does not exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PageNo(pub u32);

impl fmt::Display for PageNo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum StorageError {
    /// An operating-system call failed.
    Io {
        op: &'static str,
        path: String,
        message: String,
    },
    /// Bytes read from the file (database or log) break the format's rules.
    Corrupt {
        page_no: Option<PageNo>,
        reason: String,
    },
    /// The file is not a SQLite 3 database (wrong magic, unsupported header values).
    NotADatabase { reason: String },
    /// The file could not be opened or created.
    CantOpen { path: String, reason: String },
    /// Another process holds the database (parlite admits one process per database).
    Locked {
        path: String,
        holder_pid: Option<u32>,
    },
    /// The writer lock could not be taken within the busy timeout.
    Busy { reason: String },
    /// A read transaction tried to become a writer but its snapshot is no longer the latest.
    BusySnapshot { reason: String },
    /// A concurrent transaction failed validation at commit (concurrent.rs C3) and was
    /// rolled back: a later commit wrote what it read or wrote in the tree at `root`.
    Conflict { root: PageNo, reason: String },
    /// Writes are refused: opened read-only, or an fsync failed on the commit path
    /// (the database refuses further writes until reopened; fsyncs are never retried).
    ReadOnly { reason: String },
    /// The database reached its maximum size.
    Full,
    /// A single record or page request exceeds a hard limit.
    TooBig { reason: String },
    /// The API was used against its contract (write on a read transaction, finished txn...).
    Misuse { reason: String },
}

pub type Result<T> = std::result::Result<T, StorageError>;

impl StorageError {
    pub fn corrupt(page_no: impl Into<Option<PageNo>>, reason: impl Into<String>) -> Self {
        StorageError::Corrupt {
            page_no: page_no.into(),
            reason: reason.into(),
        }
    }
    pub fn misuse(reason: impl Into<String>) -> Self {
        StorageError::Misuse {
            reason: reason.into(),
        }
    }
    pub fn io(op: &'static str, path: impl Into<String>, err: &std::io::Error) -> Self {
        note_os_error(err);
        StorageError::Io {
            op,
            path: path.into(),
            message: err.to_string(),
        }
    }
}

impl fmt::Display for StorageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StorageError::Io { op, path, message } => {
                write!(f, "disk I/O error: {op} {path}: {message}")
            }
            StorageError::Corrupt {
                page_no: Some(p),
                reason,
            } => {
                write!(f, "database disk image is malformed (page {p}: {reason})")
            }
            StorageError::Corrupt {
                page_no: None,
                reason,
            } => {
                write!(f, "database disk image is malformed ({reason})")
            }
            StorageError::NotADatabase { reason } => write!(f, "file is not a database ({reason})"),
            StorageError::CantOpen { path, reason } => {
                write!(f, "unable to open database file {path}: {reason}")
            }
            StorageError::Locked {
                path,
                holder_pid: Some(pid),
            } => {
                write!(f, "database is locked: {path} is in use by process {pid}")
            }
            StorageError::Locked {
                path,
                holder_pid: None,
            } => {
                write!(f, "database is locked: {path} is in use by another process")
            }
            StorageError::Busy { reason } => write!(f, "database is locked ({reason})"),
            StorageError::BusySnapshot { reason } => {
                write!(f, "database is locked (snapshot is stale: {reason})")
            }
            StorageError::Conflict { root, reason } => {
                write!(
                    f,
                    "database is locked (conflict in the tree at page {root}: {reason})"
                )
            }
            StorageError::ReadOnly { reason } => {
                write!(f, "attempt to write a readonly database ({reason})")
            }
            StorageError::Full => write!(f, "database or disk is full"),
            StorageError::TooBig { reason } => write!(f, "string or blob too big ({reason})"),
            StorageError::Misuse { reason } => {
                write!(f, "bad parameter or other API misuse ({reason})")
            }
        }
    }
}

impl std::error::Error for StorageError {}

thread_local! {
    /// The error number of the last operating-system call that failed on this thread
    /// (0: none yet), for sqlite3_system_errno.
    static LAST_OS_ERROR: std::cell::Cell<i32> = const { std::cell::Cell::new(0) };
}

/// Records `err`'s error number as this thread's last failed OS call (`last_os_error`).
pub fn note_os_error(err: &std::io::Error) {
    if let Some(n) = err.raw_os_error() {
        LAST_OS_ERROR.with(|c| c.set(n));
    }
}

/// The error number of the last operating-system call that failed on this thread, 0 if
/// none has: what sqlite3_system_errno reports after SQLITE_CANTOPEN or SQLITE_IOERR.
pub fn last_os_error() -> i32 {
    LAST_OS_ERROR.with(|c| c.get())
}
