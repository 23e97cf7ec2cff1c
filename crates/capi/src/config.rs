//! Configuration and status: `sqlite3_config`, `sqlite3_db_config`, `sqlite3_test_control`
//! (their C-variadic entry points are in c/variadic.c, which takes the arguments each
//! option code documents and calls the `parlite_capi_*` functions here), the error log,
//! `sqlite3_status`, `sqlite3_db_status`, `sqlite3_compileoption_used` and
//! `sqlite3_db_release_memory`.
//!
//! Invariants:
//! 1. An option parlite's engine honours is honoured: `SQLITE_DBCONFIG_ENABLE_FKEY` is
//!    `PRAGMA foreign_keys`, the switches that have a pragma set the pragma and report what
//!    the engine then reads back. An option whose behaviour is fixed in parlite reports
//!    that behaviour; asking for the other fails with SQLITE_ERROR (lib.rs invariant 3),
//!    as SQLite's does for an option it does not know.
//! 2. `sqlite3_config` is refused (SQLITE_MISUSE) once the library is initialized:
//!    `sqlite3_initialize`, or any open, which initializes it as SQLite's does, until
//!    `sqlite3_shutdown`.
//! 3. Figures parlite does not keep read 0: memory is Rust's and libc's allocator's, which
//!    count no bytes per library or per connection, and the engine has no lookaside,
//!    cache hit or statement-memory counters to read (README's "C API" says so). The page
//!    cache's size it has: `sqlite3_db_status`'s CACHE_USED.

use crate::db::{db_ref, Db};
use crate::{guard, rc};
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

static INITIALIZED: AtomicBool = AtomicBool::new(false);

/// The library is in use: `sqlite3_config` is refused from now on (invariant 2).
pub(crate) fn mark_initialized() {
    INITIALIZED.store(true, Ordering::Release);
}

/// `sqlite3_shutdown`: configuration is allowed again.
pub(crate) fn mark_shut_down() {
    INITIALIZED.store(false, Ordering::Release);
}

// ---- sqlite3_config ------------------------------------------------------------------

/// sqlite3_config option codes parlite answers (sqlite3.h).
const CONFIG_SINGLETHREAD: c_int = 1;
const CONFIG_MULTITHREAD: c_int = 2;
const CONFIG_SERIALIZED: c_int = 3;
const CONFIG_MEMSTATUS: c_int = 9;
const CONFIG_URI: c_int = 17;

/// SQLITE_CONFIG_LOG's callback: (its argument, a result code, a message).
type LogCallback = unsafe extern "C" fn(*mut c_void, c_int, *const c_char);

#[derive(Clone, Copy)]
struct Logger {
    callback: LogCallback,
    arg: *mut c_void,
}

// SAFETY: the application's callback and argument, called from any thread as SQLite's
// error log is (the library is serialized).
unsafe impl Send for Logger {}

static LOGGER: Mutex<Option<Logger>> = Mutex::new(None);

/// Reports an error to the application's error log (SQLITE_CONFIG_LOG), if one is set:
/// every error a connection records, as SQLite logs the errors of its statements.
pub(crate) fn log_error(code: c_int, message: &CStr) {
    let logger = *LOGGER.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(l) = logger {
        // SAFETY: the application installed this callback and its argument.
        unsafe { (l.callback)(l.arg, code, message.as_ptr()) };
    }
}

fn configurable() -> bool {
    !INITIALIZED.load(Ordering::Acquire)
}

/// An option with an int argument.
#[no_mangle]
pub extern "C" fn parlite_capi_config_int(op: c_int, value: c_int) -> c_int {
    if !configurable() {
        return rc::MISUSE;
    }
    match (op, value) {
        // No URI filenames (db.rs refuses them), no memory statistics (invariant 3):
        // switching either off is what parlite is.
        (CONFIG_URI | CONFIG_MEMSTATUS, 0) => rc::OK,
        _ => rc::ERROR,
    }
}

/// SQLITE_CONFIG_LOG: the callback (NULL: none) that hears of every error.
#[no_mangle]
pub extern "C" fn parlite_capi_config_log(
    callback: Option<LogCallback>,
    arg: *mut c_void,
) -> c_int {
    if !configurable() {
        return rc::MISUSE;
    }
    *LOGGER.lock().unwrap_or_else(|p| p.into_inner()) =
        callback.map(|callback| Logger { callback, arg });
    rc::OK
}

/// An option without arguments parlite reads, or one it does not know.
#[no_mangle]
pub extern "C" fn parlite_capi_config_other(op: c_int) -> c_int {
    if !configurable() {
        return rc::MISUSE;
    }
    match op {
        // Every handle and statement is behind a mutex (sqlite3_threadsafe() is 1): the
        // library is serialized, which gives what each threading mode promises.
        CONFIG_SINGLETHREAD | CONFIG_MULTITHREAD | CONFIG_SERIALIZED => rc::OK,
        _ => rc::ERROR,
    }
}

// ---- sqlite3_db_config -----------------------------------------------------------------

/// How parlite serves one SQLITE_DBCONFIG_* switch (invariant 1).
enum Switch {
    /// A pragma of the connection, set and read back.
    Pragma(&'static str),
    /// sqlite3_enable_load_extension's switch.
    LoadExtension,
    /// The engine always behaves so.
    Fixed(bool),
}

/// The switch behind a SQLITE_DBCONFIG_* option code; None for an unknown one.
fn switch(op: c_int) -> Option<Switch> {
    Some(match op {
        1002 => Switch::Pragma("foreign_keys"), // ENABLE_FKEY
        1003 => Switch::Fixed(true),            // ENABLE_TRIGGER
        1004 => Switch::Fixed(false),           // ENABLE_FTS3_TOKENIZER
        1005 => Switch::LoadExtension,          // ENABLE_LOAD_EXTENSION
        1006 => Switch::Fixed(false),           // NO_CKPT_ON_CLOSE
        1007 => Switch::Fixed(false),           // ENABLE_QPSG
        1008 => Switch::Fixed(false),           // TRIGGER_EQP
        1009 => Switch::Fixed(false),           // RESET_DATABASE
        // DEFENSIVE: parlite refuses all that defensive mode forbids (writable_schema
        // cannot be turned on, schema_version cannot be set, journal_mode cannot be OFF,
        // there are no shadow tables), so it is always on.
        1010 => Switch::Fixed(true),
        1011 => Switch::Pragma("writable_schema"), // WRITABLE_SCHEMA
        1012 => Switch::Pragma("legacy_alter_table"), // LEGACY_ALTER_TABLE
        1013 | 1014 => Switch::Fixed(true),        // DQS_DML, DQS_DDL
        1015 => Switch::Fixed(true),               // ENABLE_VIEW
        1016 => Switch::Fixed(false),              // LEGACY_FILE_FORMAT
        1017 => Switch::Pragma("trusted_schema"),  // TRUSTED_SCHEMA
        1018 => Switch::Fixed(false),              // STMT_SCANSTATUS
        1019 => Switch::Pragma("reverse_unordered_selects"), // REVERSE_SCANORDER
        1020..=1022 => Switch::Fixed(true),        // ENABLE_ATTACH_CREATE, _WRITE, COMMENTS
        _ => return None,
    })
}

/// Runs `sql` on the connection; its first row's first column as an integer.
fn pragma_value(d: &Db, sql: &str) -> Option<i64> {
    let conn = d.conn()?;
    let (mut st, _) = conn.prepare(sql).ok()??;
    let value = match st.step() {
        Ok(true) => match st.column(0) {
            parlite::Value::Integer(i) => Some(i),
            _ => None,
        },
        Ok(false) => None,
        Err(_) => None,
    };
    st.reset();
    value
}

/// A switch (`onoff` > 0 on, 0 off, < 0 unchanged), with its state written to `*result`.
#[no_mangle]
pub unsafe extern "C" fn parlite_capi_db_config_switch(
    db: *mut Db,
    op: c_int,
    onoff: c_int,
    result: *mut c_int,
) -> c_int {
    guard(rc::INTERNAL, || {
        let Some(d) = db_ref(db) else {
            return rc::MISUSE;
        };
        let Some(sw) = switch(op) else {
            return rc::ERROR;
        };
        let wanted = (onoff >= 0).then_some(onoff > 0);
        let state = match sw {
            Switch::Fixed(on) => {
                if wanted.is_some_and(|w| w != on) {
                    return rc::ERROR;
                }
                on
            }
            Switch::LoadExtension => {
                if let Some(w) = wanted {
                    d.extensions_enabled.store(w, Ordering::Release);
                }
                d.extensions_enabled.load(Ordering::Acquire)
            }
            Switch::Pragma(name) => {
                if let Some(w) = wanted {
                    pragma_value(d, &format!("PRAGMA {name}={}", c_int::from(w)));
                }
                let Some(state) = pragma_value(d, &format!("PRAGMA {name}")).map(|v| v != 0) else {
                    return rc::ERROR;
                };
                // Inside a transaction SQLite leaves foreign_keys as it is and succeeds;
                // outside one, a pragma the engine did not take is an error.
                let in_transaction = d.conn().is_some_and(|c| !c.is_autocommit());
                if wanted.is_some_and(|w| w != state) && !in_transaction {
                    return rc::ERROR;
                }
                state
            }
        };
        if !result.is_null() {
            *result = c_int::from(state);
        }
        rc::OK
    })
}

/// SQLITE_DBCONFIG_MAINDBNAME (parlite's main database is always "main") and
/// SQLITE_DBCONFIG_LOOKASIDE (parlite has no lookaside allocator): SQLITE_ERROR.
#[no_mangle]
pub unsafe extern "C" fn parlite_capi_db_config_other(db: *mut Db, _op: c_int) -> c_int {
    guard(rc::INTERNAL, || match db_ref(db) {
        None => rc::MISUSE,
        Some(_) => rc::ERROR,
    })
}

/// sqlite3_test_control: 0 for every operation, as a SQLite built with SQLITE_UNTESTABLE
/// answers (parlite has none of SQLite's internal test hooks).
#[no_mangle]
pub extern "C" fn parlite_capi_test_control(_op: c_int) -> c_int {
    0
}

// ---- status ---------------------------------------------------------------------------

/// The number of sqlite3_status counters (SQLITE_STATUS_MEMORY_USED .. _MALLOC_COUNT).
const STATUS_COUNTERS: c_int = 10;
/// The highest sqlite3_db_status operation (SQLITE_DBSTATUS_MAX, 3.40 and 3.50).
const DBSTATUS_MAX: c_int = 12;

/// sqlite3_status64: every figure 0 (invariant 3).
#[no_mangle]
pub unsafe extern "C" fn sqlite3_status64(
    op: c_int,
    current: *mut i64,
    highwater: *mut i64,
    _reset: c_int,
) -> c_int {
    if !(0..STATUS_COUNTERS).contains(&op) || current.is_null() || highwater.is_null() {
        return rc::MISUSE;
    }
    *current = 0;
    *highwater = 0;
    rc::OK
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_status(
    op: c_int,
    current: *mut c_int,
    highwater: *mut c_int,
    reset: c_int,
) -> c_int {
    let (mut c, mut h) = (0i64, 0i64);
    let code = sqlite3_status64(op, &mut c, &mut h, reset);
    if code == rc::OK {
        *current = c as c_int;
        *highwater = h as c_int;
    }
    code
}

/// SQLITE_DBSTATUS_CACHE_USED and _CACHE_USED_SHARED.
const DBSTATUS_CACHE_USED: c_int = 1;
const DBSTATUS_CACHE_USED_SHARED: c_int = 11;

/// The bytes of page cache behind the handle: the pages of the file's shared cache times
/// the page size; divided among the handles sharing it when `shared`, as SQLite divides a
/// cache shared by several connections for SQLITE_DBSTATUS_CACHE_USED_SHARED. 0 for an
/// in-memory database, whose pages parlite does not count.
fn cache_bytes(d: &Db, shared: bool) -> i64 {
    let Some((pages, handles)) = d.shared_cache_pages() else {
        return 0;
    };
    let page_size = pragma_value(d, "PRAGMA page_size").unwrap_or(0);
    let bytes = (pages as i64).saturating_mul(page_size);
    if shared {
        bytes / handles.max(1) as i64
    } else {
        bytes
    }
}

/// sqlite3_db_status: the page cache's size (CACHE_USED, CACHE_USED_SHARED; their high-water
/// mark is 0, as SQLite's); every other figure 0 (invariant 3).
#[no_mangle]
pub unsafe extern "C" fn sqlite3_db_status(
    db: *mut Db,
    op: c_int,
    current: *mut c_int,
    highwater: *mut c_int,
    _reset: c_int,
) -> c_int {
    guard(rc::INTERNAL, || {
        let Some(d) = db_ref(db) else {
            return rc::MISUSE;
        };
        if current.is_null() || highwater.is_null() {
            return rc::MISUSE;
        }
        if !(0..=DBSTATUS_MAX).contains(&op) {
            return rc::ERROR;
        }
        let value = match op {
            DBSTATUS_CACHE_USED => cache_bytes(d, false),
            DBSTATUS_CACHE_USED_SHARED => cache_bytes(d, true),
            _ => 0,
        };
        *current = value.min(i64::from(c_int::MAX)) as c_int;
        *highwater = 0;
        rc::OK
    })
}

/// Nothing to give back: parlite keeps no per-connection cache outside the shared
/// `parlite::Database`, which other connections may be using.
#[no_mangle]
pub unsafe extern "C" fn sqlite3_db_release_memory(db: *mut Db) -> c_int {
    match db_ref(db) {
        None => rc::MISUSE,
        Some(_) => rc::OK,
    }
}

/// The compile-time options parlite's library has, as `sqlite3_compileoption_get` lists
/// them: serialized threading.
const COMPILE_OPTIONS: &[&str] = &["THREADSAFE=1"];

/// 1 when `name` (with or without the "SQLITE_" prefix, ASCII case ignored) is one of
/// [`COMPILE_OPTIONS`]; a name without "=" matches an option's name part.
#[no_mangle]
pub unsafe extern "C" fn sqlite3_compileoption_used(name: *const c_char) -> c_int {
    guard(0, || {
        if name.is_null() {
            return 0;
        }
        let name = CStr::from_ptr(name).to_bytes();
        let name = match name.get(..7) {
            Some(p) if p.eq_ignore_ascii_case(b"SQLITE_") => &name[7..],
            _ => name,
        };
        c_int::from(COMPILE_OPTIONS.iter().any(|o| {
            let o = o.as_bytes();
            o.eq_ignore_ascii_case(name)
                || (o.len() > name.len()
                    && o[name.len()] == b'='
                    && o[..name.len()].eq_ignore_ascii_case(name))
        }))
    })
}

/// The N-th compile-time option, or NULL past the end.
#[no_mangle]
pub extern "C" fn sqlite3_compileoption_get(n: c_int) -> *const c_char {
    static OPTIONS: [&CStr; 1] = [c"THREADSAFE=1"];
    usize::try_from(n)
        .ok()
        .and_then(|i| OPTIONS.get(i))
        .map_or(std::ptr::null(), |o| o.as_ptr())
}
