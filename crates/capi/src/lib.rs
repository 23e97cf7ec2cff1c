//! SQLite's C API over the `parlite` crate: built as `libsqlite3.so` (soname
//! `libsqlite3.so.0`), a program linked against the system SQLite runs on parlite unchanged
//! with `LD_LIBRARY_PATH` (README, "C API").
//!
//! Layout: `db.rs` the connection (`sqlite3`: open, close, errors, exec, busy handling,
//! interrupt, progress, trace, limits), `stmt.rs` prepared statements (`sqlite3_stmt`:
//! prepare, step, bind, column), `func.rs` application-defined functions (`sqlite3_value`,
//! `sqlite3_context`), `misc.rs` the library-wide functions (version, memory, errstr,
//! complete, sleep, randomness), `backup.rs` the online backup (`sqlite3_backup`),
//! `config.rs` configuration and status (`sqlite3_config`, `sqlite3_db_config`,
//! `sqlite3_status`), `printf.rs` the rendering of SQLite's printf family, `keywords.rs`
//! SQLite's keyword list, `unsupported.rs` the interfaces parlite's engine cannot serve yet
//! (incremental blob I/O, serialize, virtual tables, VFSes), which fail with an error.
//! The C-variadic functions (`sqlite3_mprintf`, `sqlite3_config`, ...) and the mutexes are
//! C, in c/*.c (build.rs), which hands typed arguments to the `parlite_capi_*` functions.
//!
//! Invariants:
//! 1. No panic crosses the boundary: every exported function runs its body under
//!    [`guard`], and a panic becomes SQLITE_INTERNAL ("internal error") or the function's
//!    neutral answer (0, NULL).
//! 2. A NULL handle gives what SQLite gives with SQLITE_ENABLE_API_ARMOR: SQLITE_MISUSE from
//!    functions that return a result code, 0 or NULL from accessors, SQLITE_OK from
//!    close/finalize/reset.
//! 3. Only functions whose semantics parlite honours are exported, and those it cannot
//!    honour yet but that programs import (CPython's `sqlite3` module) fail every call
//!    with an error the program reports; none is a silent no-op (README lists both).
//! 4. Pointers handed out live as long as SQLite's do: `sqlite3_column_text`/`_blob` until
//!    the next step, reset or finalize of the statement; `sqlite3_errmsg` until the next
//!    call that sets the connection's error; `sqlite3_column_name` and
//!    `sqlite3_bind_parameter_name` until finalize.
//! 5. Lock order: a statement's mutex, then its connection's state mutex (`db.rs`); the
//!    connection's mutex is never held while taking a statement's.
//!
//! The safety contract of every `unsafe extern "C"` function is SQLite's documented one
//! (sqlite.org/c3ref): handles from this library, pointers valid for the lengths given.
#![allow(clippy::missing_safety_doc)]

mod backup;
mod config;
mod db;
mod func;
mod keywords;
mod misc;
mod printf;
mod stmt;
mod unsupported;

use std::panic::{catch_unwind, AssertUnwindSafe};

/// SQLite's result codes (sqlite3.h) that this layer produces itself.
mod rc {
    use std::ffi::c_int;
    pub const OK: c_int = 0;
    pub const ERROR: c_int = 1;
    pub const INTERNAL: c_int = 2;
    pub const ABORT: c_int = 4;
    pub const BUSY: c_int = 5;
    pub const NOMEM: c_int = 7;
    pub const INTERRUPT: c_int = 9;
    pub const IOERR: c_int = 10;
    pub const CANTOPEN: c_int = 14;
    pub const TOOBIG: c_int = 18;
    pub const MISUSE: c_int = 21;
    pub const RANGE: c_int = 25;
    pub const ROW: c_int = 100;
    pub const DONE: c_int = 101;
}

// c/*.c's functions, referenced so that the linker keeps their objects in the library
// (build.rs exports them).
extern "C" {
    fn sqlite3_mprintf(format: *const std::ffi::c_char, ...) -> *mut std::ffi::c_char;
    fn sqlite3_mutex_alloc(kind: std::ffi::c_int) -> *mut std::ffi::c_void;
}

#[used]
static C_OBJECTS: (
    unsafe extern "C" fn(*const std::ffi::c_char, ...) -> *mut std::ffi::c_char,
    unsafe extern "C" fn(std::ffi::c_int) -> *mut std::ffi::c_void,
) = (sqlite3_mprintf, sqlite3_mutex_alloc);

/// Runs an exported function's body, turning a panic into `on_panic` (invariant 1).
fn guard<R>(on_panic: R, body: impl FnOnce() -> R) -> R {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(on_panic)
}
