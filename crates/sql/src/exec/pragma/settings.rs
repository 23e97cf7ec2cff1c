//! The connection settings of SQLite's pragma list that parlite keeps per connection and
//! answers as SQLite does (pragma.html): the value set reads back, the assignment returns
//! SQLite's row (or none), bad values are read as SQLite reads them.
//!
//! A setting reads back what was set only where parlite behaves as the setting asks, or
//! where the setting is a hint or bound that parlite's behaviour already satisfies (docs/
//! pragmas.md says which, and why). A setting parlite cannot honour reads back SQLite's
//! default whatever is set (README, known differences) instead of pretending.

use crate::value::Value;
use std::cell::Cell;
use std::sync::atomic::{AtomicI64, Ordering};

/// SQLITE_MAX_PAGE_COUNT (3.45+): `max_page_count`'s default and ceiling.
pub const MAX_PAGE_COUNT: i64 = 0xffff_fffe;
/// SQLITE_MAX_MMAP_SIZE on 64-bit Linux: the most `mmap_size` reads back.
const MAX_MMAP_SIZE: i64 = 0x7fff_0000;
/// SQLITE_MAX_WORKER_THREADS: the most `threads` reads back.
const MAX_WORKER_THREADS: i64 = 8;

/// `PRAGMA soft_heap_limit`: process-wide in SQLite too (`sqlite3_soft_heap_limit64`).
static SOFT_HEAP_LIMIT: AtomicI64 = AtomicI64::new(0);

/// One connection's settings (SQLite's defaults until set).
#[derive(Debug)]
pub struct Settings {
    /// `query_only`: every statement that would write a database (TEMP included) fails
    /// with SQLITE_READONLY; the connection layer checks it before running one.
    pub query_only: Cell<bool>,
    /// `ignore_check_constraints`: CHECK constraints are not evaluated on writes.
    pub ignore_check_constraints: Cell<bool>,
    /// `max_page_count` of the main database: a statement that leaves the database larger
    /// fails with SQLITE_FULL (checked by the connection layer at the statement's end).
    pub max_page_count: Cell<i64>,
    temp_store: Cell<i64>,
    threads: Cell<i64>,
    analysis_limit: Cell<i64>,
    automatic_index: Cell<bool>,
    trusted_schema: Cell<bool>,
    cell_size_check: Cell<bool>,
    read_uncommitted: Cell<bool>,
    fullfsync: Cell<bool>,
    checkpoint_fullfsync: Cell<bool>,
    mmap_size: Cell<i64>,
    journal_size_limit: Cell<i64>,
    wal_autocheckpoint: Cell<i64>,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            query_only: Cell::new(false),
            ignore_check_constraints: Cell::new(false),
            max_page_count: Cell::new(MAX_PAGE_COUNT),
            temp_store: Cell::new(0),
            threads: Cell::new(0),
            analysis_limit: Cell::new(0),
            automatic_index: Cell::new(true),
            trusted_schema: Cell::new(true),
            cell_size_check: Cell::new(false),
            read_uncommitted: Cell::new(false),
            fullfsync: Cell::new(false),
            checkpoint_fullfsync: Cell::new(false),
            mmap_size: Cell::new(0),
            journal_size_limit: Cell::new(-1),
            wal_autocheckpoint: Cell::new(1000),
        }
    }
}

/// What a settings pragma answers.
pub enum Answer {
    /// Not one of this module's pragmas.
    NotASetting,
    /// No row (an assignment of a flag).
    Nothing,
    /// One integer row.
    Int(i64),
}

/// The pragmas `answer` runs (each in SQLite's pragma list).
pub const NAMES: &[&str] = &[
    "analysis_limit",
    "automatic_index",
    "cell_size_check",
    "checkpoint_fullfsync",
    "count_changes",
    "empty_result_callbacks",
    "full_column_names",
    "fullfsync",
    "hard_heap_limit",
    "ignore_check_constraints",
    "journal_size_limit",
    "read_uncommitted",
    "legacy_alter_table",
    "max_page_count",
    "mmap_size",
    "query_only",
    "reverse_unordered_selects",
    "secure_delete",
    "short_column_names",
    "soft_heap_limit",
    "temp_store",
    "threads",
    "trusted_schema",
    "wal_autocheckpoint",
    "writable_schema",
];

impl Settings {
    /// Runs `PRAGMA name [= arg]` if `name` is one of this module's settings. `page_count`
    /// is the main database's (max_page_count never goes below it); `in_memory`: the main
    /// database has no file (SQLite then answers nothing for mmap_size).
    pub fn answer(
        &self,
        name: &str,
        arg: Option<&Value>,
        page_count: impl FnOnce() -> crate::value::Result<i64>,
        in_memory: bool,
    ) -> crate::value::Result<Answer> {
        let flag = |cell: &Cell<bool>| match arg {
            Some(v) => {
                cell.set(boolean(v));
                Answer::Nothing
            }
            None => Answer::Int(i64::from(cell.get())),
        };
        // Accepted and ignored: parlite cannot do what they ask, so they read back
        // SQLite's default (README, known differences).
        let fixed = |default: i64| match arg {
            Some(_) => Answer::Nothing,
            None => Answer::Int(default),
        };
        // SQLite's `sqlite3DecOrHexToI64`: the value (what could be read of it) and
        // whether the whole argument was an integer.
        let (lenient, whole) = arg.map_or((0, false), dec_or_hex);
        let int = whole.then_some(lenient);
        Ok(match name {
            "query_only" => flag(&self.query_only),
            "ignore_check_constraints" => flag(&self.ignore_check_constraints),
            "automatic_index" => flag(&self.automatic_index),
            "trusted_schema" => flag(&self.trusted_schema),
            "cell_size_check" => flag(&self.cell_size_check),
            "read_uncommitted" => flag(&self.read_uncommitted),
            "fullfsync" => flag(&self.fullfsync),
            "checkpoint_fullfsync" => flag(&self.checkpoint_fullfsync),
            "count_changes"
            | "empty_result_callbacks"
            | "full_column_names"
            | "legacy_alter_table"
            | "reverse_unordered_selects"
            | "writable_schema" => fixed(0),
            "short_column_names" => fixed(1),
            // parlite never zeroes freed content (README): it answers "off" even to an
            // assignment, where SQLite answers the new setting.
            "secure_delete" => Answer::Int(0),
            // No hard limit on parlite's memory: 0 ("none"), even after an assignment.
            "hard_heap_limit" => Answer::Int(0),
            "temp_store" => match arg {
                Some(v) => {
                    self.temp_store.set(temp_store(v));
                    Answer::Nothing
                }
                None => Answer::Int(self.temp_store.get()),
            },
            "threads" => {
                if let Some(n) = int.filter(|n| *n >= 0) {
                    self.threads.set(n.min(MAX_WORKER_THREADS));
                }
                Answer::Int(self.threads.get())
            }
            "analysis_limit" => {
                if let Some(n) = int.filter(|n| *n >= 0) {
                    self.analysis_limit.set(n & 0x7fff_ffff);
                }
                Answer::Int(self.analysis_limit.get())
            }
            "mmap_size" => {
                if arg.is_some() {
                    self.mmap_size.set(lenient.clamp(0, MAX_MMAP_SIZE));
                }
                if in_memory {
                    return Ok(Answer::Nothing);
                }
                Answer::Int(self.mmap_size.get())
            }
            "journal_size_limit" => {
                if arg.is_some() {
                    self.journal_size_limit.set(lenient.max(-1));
                }
                Answer::Int(self.journal_size_limit.get())
            }
            "wal_autocheckpoint" => {
                if let Some(v) = arg {
                    self.wal_autocheckpoint.set(atoi(v).max(0));
                }
                Answer::Int(self.wal_autocheckpoint.get())
            }
            "soft_heap_limit" => {
                if let Some(n) = int.filter(|n| *n >= 0) {
                    SOFT_HEAP_LIMIT.store(n, Ordering::Relaxed);
                }
                Answer::Int(SOFT_HEAP_LIMIT.load(Ordering::Relaxed))
            }
            "max_page_count" => {
                // SQLite never lowers the bound below the database's current size.
                if let Some(n) = int.filter(|n| *n > 0) {
                    self.max_page_count
                        .set(n.min(MAX_PAGE_COUNT).max(page_count()?));
                }
                Answer::Int(self.max_page_count.get())
            }
            _ => Answer::NotASetting,
        })
    }
}

/// A pragma argument as SQLite's `zRight` text: an integer prints its digits (with the
/// minus sign of `= -5`), a string or identifier is itself.
fn text(v: &Value) -> String {
    v.to_text_or_empty().into_owned()
}

/// SQLite's `getSafetyLevel(z, omitFull, dflt)`: a leading digit reads the integer prefix
/// (truncated to a byte); else on/no/off/false/yes/true, and extra/full unless `omit_full`;
/// anything else is `dflt`.
pub fn safety_level(v: &Value, omit_full: bool, dflt: u8) -> u8 {
    let z = text(v);
    if z.as_bytes().first().is_some_and(u8::is_ascii_digit) {
        return atoi(v) as u8;
    }
    let words: [(&str, u8); 8] = [
        ("on", 1),
        ("no", 0),
        ("off", 0),
        ("false", 0),
        ("yes", 1),
        ("true", 1),
        ("extra", 3),
        ("full", 2),
    ];
    words
        .iter()
        .find(|(w, level)| w.eq_ignore_ascii_case(&z) && (!omit_full || *level <= 1))
        .map_or(dflt, |&(_, level)| level)
}

/// SQLite's `sqlite3GetBoolean(z, 0)`, how a flag pragma reads its argument.
pub fn boolean(v: &Value) -> bool {
    safety_level(v, true, 0) != 0
}

/// SQLite's `sqlite3Atoi` (`sqlite3GetInt32`): the leading signed decimal integer, or a
/// whole 0x hex one; 0 when there is none or it does not fit 32 bits.
fn atoi(v: &Value) -> i64 {
    if let Value::Integer(i) = v {
        return i32::try_from(*i).map_or(0, i64::from);
    }
    let z = text(v);
    if let Some(hex) = z.strip_prefix("0x").or_else(|| z.strip_prefix("0X")) {
        return u32::from_str_radix(hex, 16).map_or(0, |u| i64::from(u as i32));
    }
    let (neg, digits) = match z.as_bytes().first() {
        Some(b'-') => (true, &z[1..]),
        Some(b'+') => (false, &z[1..]),
        _ => (false, z.as_str()),
    };
    let end = digits.bytes().take_while(u8::is_ascii_digit).count();
    let n = match digits[..end].parse::<i64>() {
        Ok(n) if end <= 10 => {
            if neg {
                -n
            } else {
                n
            }
        }
        _ => 0,
    };
    i32::try_from(n).map_or(0, i64::from)
}

/// SQLite's `sqlite3DecOrHexToI64`: (the value, true) for a whole decimal or 0x hex
/// integer; else (its leading decimal integer, 0 for none, false).
fn dec_or_hex(v: &Value) -> (i64, bool) {
    if let Value::Integer(i) = v {
        return (*i, true);
    }
    let z = text(v);
    if let Some(hex) = z.strip_prefix("0x").or_else(|| z.strip_prefix("0X")) {
        return match u64::from_str_radix(hex, 16) {
            Ok(u) => (u as i64, true),
            Err(_) => (0, false),
        };
    }
    let t = z.trim();
    if let Ok(n) = t.parse::<i64>() {
        return (n, true);
    }
    let sign = usize::from(t.starts_with(['-', '+']));
    let end = sign + t[sign..].bytes().take_while(u8::is_ascii_digit).count();
    (t[..end].parse::<i64>().unwrap_or(0), false)
}

/// SQLite's `getTempStore`: 0 (default), 1 (file) or 2 (memory).
fn temp_store(v: &Value) -> i64 {
    let z = text(v);
    match z.as_bytes().first() {
        Some(c @ b'0'..=b'2') => i64::from(c - b'0'),
        _ if z.eq_ignore_ascii_case("file") => 1,
        _ if z.eq_ignore_ascii_case("memory") => 2,
        _ => 0,
    }
}
