//! The 100-byte database header at the start of page 1 (sqlite.org/fileformat2.html §1.3).
//!
//! | offset | size | field                                   | parlite writes        |
//! |-------:|-----:|-----------------------------------------|-----------------------|
//! |      0 |   16 | magic "SQLite format 3\0"               | magic                 |
//! |     16 |    2 | page size (1 means 65536)               | chosen at create      |
//! |     18 |    1 | file format write version (1 legacy/2 WAL) | 1 at checkpoint    |
//! |     19 |    1 | file format read version                | 1 at checkpoint       |
//! |     20 |    1 | reserved bytes at the end of each page  | 0                     |
//! |     21 |    1 | max embedded payload fraction (64)      | 64                    |
//! |     22 |    1 | min embedded payload fraction (32)      | 32                    |
//! |     23 |    1 | leaf payload fraction (32)              | 32                    |
//! |     24 |    4 | file change counter                     | +1 per checkpoint     |
//! |     28 |    4 | database size in pages                  | commit and checkpoint |
//! |     32 |    4 | first freelist trunk page               | freelist              |
//! |     36 |    4 | total freelist pages                    | freelist              |
//! |     40 |    4 | schema cookie                           | SQL layer             |
//! |     44 |    4 | schema format number (1..=4)            | 4                     |
//! |     48 |    4 | default page cache size                 | 0                     |
//! |     52 |    4 | largest root page (auto-vacuum) or 0    | 0                     |
//! |     56 |    4 | text encoding (1 UTF-8, 2 UTF-16le, 3 be)| 1                    |
//! |     60 |    4 | user version                            | SQL layer             |
//! |     64 |    4 | incremental-vacuum mode                 | 0                     |
//! |     68 |    4 | application id                          | SQL layer             |
//! |     72 |   20 | reserved for expansion, zero            | 0                     |
//! |     92 |    4 | version-valid-for (= change counter)    | at checkpoint         |
//! |     96 |    4 | SQLITE_VERSION_NUMBER that last wrote   | [`WRITER_VERSION`]    |
//!
//! Who writes the header's bookkeeping fields (pages P3): a commit sets the page count (28)
//! when the count changes, and only then makes page 1 part of its frame for that reason.
//! The change counter (24), version-valid-for (92), the format versions (18, 19) and the
//! writer version (96) are written by [`stamp_file_state`] into the copy of page 1 that a
//! checkpoint writes into the database file, never into a committed image. Stock SQLite,
//! in rollback-journal mode (18, 19 = 1), compares the change counter with the one it saw
//! last to decide whether its page cache is stale; the database file changes only at a
//! checkpoint, so a counter advanced by every checkpoint that writes a page is what it
//! needs (SQLite's own WAL mode does not advance the counter per commit either:
//! fileformat2.html §1.3.6).
//!
//! Bytes read from disk are untrusted: [`DbHeader::parse`] validates every field that
//! decides how the rest of the file is read, and returns `NotADatabase` otherwise.

use crate::error::{Result, StorageError};

pub const HEADER_SIZE: usize = 100;
pub const MAGIC: &[u8; 16] = b"SQLite format 3\0";
/// The SQLite version number parlite claims as "last writer" (offset 96): the file format
/// it writes is the one SQLite 3.40 writes.
pub const WRITER_VERSION: u32 = 3_040_001;

/// The byte offset SQLite's file locks use (os_unix.c `PENDING_BYTE`, fileformat2 §1.3):
/// the page holding it is never used by a B-tree, an overflow chain or the freelist.
pub const PENDING_BYTE: u64 = 0x4000_0000;

/// The lock-byte page for `page_size`: 262,145 for 4 KiB pages (SQLite's
/// `PENDING_BYTE_PAGE`). Files smaller than 1 GiB never reach it.
pub fn lock_byte_page(page_size: usize) -> u32 {
    (PENDING_BYTE / page_size.max(1) as u64) as u32 + 1
}

pub const OFFSET_CHANGE_COUNTER: usize = 24;
pub const OFFSET_PAGE_COUNT: usize = 28;
pub const OFFSET_FREELIST_TRUNK: usize = 32;
pub const OFFSET_FREELIST_COUNT: usize = 36;
pub const OFFSET_SCHEMA_COOKIE: usize = 40;
pub const OFFSET_SCHEMA_FORMAT: usize = 44;
pub const OFFSET_DEFAULT_CACHE_SIZE: usize = 48;
pub const OFFSET_AUTOVACUUM_ROOT: usize = 52;
pub const OFFSET_TEXT_ENCODING: usize = 56;
pub const OFFSET_USER_VERSION: usize = 60;
pub const OFFSET_INCREMENTAL_VACUUM: usize = 64;
pub const OFFSET_APPLICATION_ID: usize = 68;
pub const OFFSET_VERSION_VALID_FOR: usize = 92;
pub const OFFSET_WRITER_VERSION: usize = 96;

/// Header fields the SQL layer may set (PRAGMA user_version, schema changes...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderField {
    SchemaCookie,
    SchemaFormat,
    DefaultCacheSize,
    UserVersion,
    ApplicationId,
    IncrementalVacuum,
}

impl HeaderField {
    pub fn offset(self) -> usize {
        match self {
            HeaderField::SchemaCookie => OFFSET_SCHEMA_COOKIE,
            HeaderField::SchemaFormat => OFFSET_SCHEMA_FORMAT,
            HeaderField::DefaultCacheSize => OFFSET_DEFAULT_CACHE_SIZE,
            HeaderField::UserVersion => OFFSET_USER_VERSION,
            HeaderField::ApplicationId => OFFSET_APPLICATION_ID,
            HeaderField::IncrementalVacuum => OFFSET_INCREMENTAL_VACUUM,
        }
    }
}

/// The header decoded and validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbHeader {
    pub page_size: u32,
    pub write_version: u8,
    pub read_version: u8,
    pub reserved_bytes: u8,
    pub change_counter: u32,
    pub page_count: u32,
    pub freelist_trunk: u32,
    pub freelist_count: u32,
    pub schema_cookie: u32,
    pub schema_format: u32,
    pub default_cache_size: u32,
    pub autovacuum_root: u32,
    pub text_encoding: u32,
    pub user_version: u32,
    pub incremental_vacuum: u32,
    pub application_id: u32,
    pub version_valid_for: u32,
    pub writer_version: u32,
}

pub fn get_u32(buf: &[u8], offset: usize) -> u32 {
    u32::from_be_bytes([
        buf[offset],
        buf[offset + 1],
        buf[offset + 2],
        buf[offset + 3],
    ])
}

pub fn put_u32(buf: &mut [u8], offset: usize, v: u32) {
    buf[offset..offset + 4].copy_from_slice(&v.to_be_bytes());
}

/// The fields a checkpoint stamps into the copy of page 1 (or of its first 100 bytes) that
/// it writes into the database file (pages P3): change counter and version-valid-for
/// `change_counter`, page count `page_count` (valid, then, for SQLite), rollback-journal
/// format versions (stock SQLite must never look for a WAL) and the writer version.
pub fn stamp_file_state(page1: &mut [u8], change_counter: u32, page_count: u32) {
    put_u32(page1, OFFSET_CHANGE_COUNTER, change_counter);
    put_u32(page1, OFFSET_PAGE_COUNT, page_count);
    put_u32(page1, OFFSET_VERSION_VALID_FOR, change_counter);
    put_u32(page1, OFFSET_WRITER_VERSION, WRITER_VERSION);
    page1[18] = 1;
    page1[19] = 1;
}

/// Decodes the page-size field (offset 16): 1 means 65536.
pub fn decode_page_size(raw: u16) -> Option<u32> {
    let size = if raw == 1 { 65536 } else { raw as u32 };
    (512..=65536)
        .contains(&size)
        .then_some(size)
        .filter(|s| s.is_power_of_two())
}

impl DbHeader {
    /// Parses and validates the first 100 bytes of a database file.
    pub fn parse(buf: &[u8]) -> Result<DbHeader> {
        let bad = |reason: &str| StorageError::NotADatabase {
            reason: reason.to_string(),
        };
        if buf.len() < HEADER_SIZE {
            return Err(bad("file is shorter than the 100-byte header"));
        }
        if &buf[0..16] != MAGIC {
            return Err(bad("wrong magic string"));
        }
        let page_size = decode_page_size(u16::from_be_bytes([buf[16], buf[17]]))
            .ok_or_else(|| bad("page size is not a power of two between 512 and 65536"))?;
        let (write_version, read_version) = (buf[18], buf[19]);
        if !(1..=2).contains(&read_version) {
            return Err(bad("unsupported file format read version"));
        }
        let reserved_bytes = buf[20];
        if page_size - (reserved_bytes as u32) < 480 {
            return Err(bad("too many reserved bytes per page"));
        }
        if buf[21] != 64 || buf[22] != 32 || buf[23] != 32 {
            return Err(bad("payload fractions are not 64/32/32"));
        }
        let h = DbHeader {
            page_size,
            write_version,
            read_version,
            reserved_bytes,
            change_counter: get_u32(buf, OFFSET_CHANGE_COUNTER),
            page_count: get_u32(buf, OFFSET_PAGE_COUNT),
            freelist_trunk: get_u32(buf, OFFSET_FREELIST_TRUNK),
            freelist_count: get_u32(buf, OFFSET_FREELIST_COUNT),
            schema_cookie: get_u32(buf, OFFSET_SCHEMA_COOKIE),
            schema_format: get_u32(buf, OFFSET_SCHEMA_FORMAT),
            default_cache_size: get_u32(buf, OFFSET_DEFAULT_CACHE_SIZE),
            autovacuum_root: get_u32(buf, OFFSET_AUTOVACUUM_ROOT),
            text_encoding: get_u32(buf, OFFSET_TEXT_ENCODING),
            user_version: get_u32(buf, OFFSET_USER_VERSION),
            incremental_vacuum: get_u32(buf, OFFSET_INCREMENTAL_VACUUM),
            application_id: get_u32(buf, OFFSET_APPLICATION_ID),
            version_valid_for: get_u32(buf, OFFSET_VERSION_VALID_FOR),
            writer_version: get_u32(buf, OFFSET_WRITER_VERSION),
        };
        if h.schema_format > 4 {
            return Err(bad("unsupported schema format number"));
        }
        match h.text_encoding {
            0 | 1 => {}
            // SQLite compares a UTF-16 database's text as UTF-16 bytes (its indexes are
            // ordered so); parlite reads and writes UTF-8 only, so such a file is refused
            // at open rather than read as if its text were UTF-8.
            2 => {
                return Err(bad(
                    "its text encoding is UTF-16le: parlite reads UTF-8 databases only",
                ))
            }
            3 => {
                return Err(bad(
                    "its text encoding is UTF-16be: parlite reads UTF-8 databases only",
                ))
            }
            _ => return Err(bad("unknown text encoding")),
        }
        Ok(h)
    }

    /// The page count the file's pages should be trusted for: SQLite trusts offset 28 only
    /// when it is non-zero and version-valid-for equals the change counter; otherwise the
    /// size comes from the file length (`file_pages`).
    pub fn effective_page_count(&self, file_pages: u32) -> u32 {
        if self.page_count != 0 && self.version_valid_for == self.change_counter {
            self.page_count
        } else {
            file_pages
        }
    }

    /// Usable bytes per page: page size minus reserved bytes.
    pub fn usable_size(&self) -> usize {
        self.page_size as usize - self.reserved_bytes as usize
    }
}

/// Writes a fresh header for a new, empty database of `page_size` bytes per page into the
/// first 100 bytes of `page1` (one page, zero-filled by the caller). The page count is 1.
pub fn init_header(page1: &mut [u8], page_size: u32) {
    assert!(decode_page_size(if page_size == 65536 {
        1
    } else {
        page_size as u16
    })
    .is_some());
    page1[0..16].copy_from_slice(MAGIC);
    let raw: u16 = if page_size == 65536 {
        1
    } else {
        page_size as u16
    };
    page1[16..18].copy_from_slice(&raw.to_be_bytes());
    page1[18] = 1;
    page1[19] = 1;
    page1[20] = 0;
    page1[21] = 64;
    page1[22] = 32;
    page1[23] = 32;
    put_u32(page1, OFFSET_CHANGE_COUNTER, 1);
    put_u32(page1, OFFSET_PAGE_COUNT, 1);
    put_u32(page1, OFFSET_SCHEMA_FORMAT, 4);
    put_u32(page1, OFFSET_TEXT_ENCODING, 1);
    put_u32(page1, OFFSET_VERSION_VALID_FOR, 1);
    put_u32(page1, OFFSET_WRITER_VERSION, WRITER_VERSION);
}

/// True when `page1` is the whole of a database that holds nothing: page 1 exactly as a new
/// database of its page size starts (`init_header`, then an empty table leaf for
/// sqlite_schema at offset 100), except for the fields a commit or checkpoint stamps (change
/// counter, page count, version-valid-for, writer version). Such a file has no table, no
/// header setting and no free page, so re-creating it with another page size loses nothing
/// (`OpenOptions::page_size_for_blank`, SQLite's `PRAGMA page_size` before the first table).
pub fn is_blank_database(page1: &[u8]) -> bool {
    let Ok(h) = DbHeader::parse(page1) else {
        return false;
    };
    if page1.len() != h.page_size as usize {
        return false;
    }
    let mut fresh = vec![0u8; page1.len()];
    init_header(&mut fresh, h.page_size);
    // An empty table leaf: type 13, no freeblock, no cell, content starting at the end of
    // the page (0 stands for 65536), no fragmented byte.
    fresh[100] = 13;
    let content_start = if h.page_size == 65536 {
        0
    } else {
        h.page_size as u16
    };
    fresh[105..107].copy_from_slice(&content_start.to_be_bytes());
    let stamped = |i: usize| {
        (OFFSET_CHANGE_COUNTER..OFFSET_PAGE_COUNT + 4).contains(&i)
            || (OFFSET_VERSION_VALID_FOR..OFFSET_WRITER_VERSION + 4).contains(&i)
    };
    page1
        .iter()
        .zip(&fresh)
        .enumerate()
        .all(|(i, (a, b))| a == b || stamped(i))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_header_parses_back() {
        for size in [512u32, 1024, 4096, 65536] {
            let mut page = vec![0u8; size as usize];
            init_header(&mut page, size);
            let h = DbHeader::parse(&page).unwrap();
            assert_eq!(h.page_size, size);
            assert_eq!(h.effective_page_count(7), 1);
            assert_eq!(h.text_encoding, 1);
        }
    }

    #[test]
    fn rejects_bad_magic_and_page_size() {
        let mut page = vec![0u8; 4096];
        init_header(&mut page, 4096);
        let mut bad = page.clone();
        bad[0] = b'X';
        assert!(matches!(
            DbHeader::parse(&bad),
            Err(StorageError::NotADatabase { .. })
        ));
        let mut bad = page.clone();
        bad[16..18].copy_from_slice(&3000u16.to_be_bytes());
        assert!(matches!(
            DbHeader::parse(&bad),
            Err(StorageError::NotADatabase { .. })
        ));
        assert!(DbHeader::parse(&page[..50]).is_err());
    }

    #[test]
    fn a_blank_database_is_told_from_one_with_content() {
        for size in [512u32, 4096, 65536] {
            let mut page = vec![0u8; size as usize];
            init_header(&mut page, size);
            page[100] = 13;
            let start = if size == 65536 { 0 } else { size as u16 };
            page[105..107].copy_from_slice(&start.to_be_bytes());
            assert!(is_blank_database(&page), "{size}");
            let mut stamped = page.clone();
            put_u32(&mut stamped, OFFSET_CHANGE_COUNTER, 9);
            put_u32(&mut stamped, OFFSET_VERSION_VALID_FOR, 9);
            assert!(is_blank_database(&stamped));
            for offset in [
                OFFSET_USER_VERSION,
                OFFSET_APPLICATION_ID,
                OFFSET_SCHEMA_COOKIE,
            ] {
                let mut set = page.clone();
                put_u32(&mut set, offset, 1);
                assert!(!is_blank_database(&set), "header field at {offset}");
            }
            let mut one_cell = page.clone();
            one_cell[104] = 1;
            assert!(!is_blank_database(&one_cell));
            assert!(!is_blank_database(&page[..size as usize / 2]));
        }
    }
}
