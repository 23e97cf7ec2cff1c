//! Table and index B-trees in SQLite's exact page format (sqlite.org/fileformat2.html).
//!
//! Layering inside this module, bottom up:
//! - `page`     — bytes of one page: header, cell pointers, freeblocks, defragmentation;
//! - `cell`     — cell layouts and the local/overflow payload split;
//! - `overflow` — overflow chains; `freelist` — free pages, allocation;
//! - `cursor`   — descending, stepping and seeking (read-only);
//! - `insert`, `delete`, `balance` — modifications and restructuring;
//! - `build`    — bottom-up builds of an empty tree from sorted entries;
//! - `tree`     — create, drop, clear, count; `check` — the integrity check.
//!
//! Everything works on a page view (`PageRead`/`PageWrite` from pages.rs) and treats page
//! bytes as untrusted: any inconsistency is `StorageError::Corrupt`, never a panic, and
//! every loop over disk structures is bounded.

pub mod balance;
pub mod build;
pub mod cell;
pub mod check;
pub mod cursor;
pub mod delete;
pub mod freelist;
pub mod insert;
pub mod overflow;
pub mod page;
pub mod tree;
