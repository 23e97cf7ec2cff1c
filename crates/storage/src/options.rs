//! Options for opening a database, shared by every backend.

/// How hard `COMMIT` works to make a commit durable (`PRAGMA synchronous`).
///
/// - `Full`: the commit's log record is on disk (fsync) before `commit` returns.
/// - `Normal`: the record is written to the OS (survives a process crash, not a power
///   loss) and is fsynced with a later group or at the next checkpoint.
/// - `Off`: no flush is ever requested for commits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Synchronous {
    Off,
    Normal,
    Full,
}

#[derive(Debug, Clone)]
pub struct OpenOptions {
    /// Page size for a new database (512..=65536, a power of two). Ignored for an existing file
    /// unless `page_size_for_blank` says otherwise.
    pub page_size: u32,
    /// Re-create an existing file at `page_size` when it is a blank database (one page, no
    /// table, no header setting: `header::is_blank_database`) whose log holds nothing more,
    /// as SQLite's `PRAGMA page_size` applies until the first table is created.
    pub page_size_for_blank: bool,
    /// Most pages the cache keeps; memory is bounded by this, not by the database size.
    pub cache_pages_max: usize,
    pub synchronous: Synchronous,
    /// Create the file if it does not exist.
    pub create: bool,
    pub read_only: bool,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            page_size: 4096,
            page_size_for_blank: false,
            cache_pages_max: 16384,
            synchronous: Synchronous::Full,
            create: true,
            read_only: false,
        }
    }
}
