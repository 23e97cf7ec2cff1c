//! Interfaces programs import (CPython's `sqlite3` module) that parlite's engine cannot
//! serve yet: incremental blob I/O, serialize/deserialize and shared-cache mode. Each fails with an error the program reports, never a silent
//! success (lib.rs invariant 3); README's "C API" lists them.
//!
//! No call ever hands out a blob handle, so the functions that take one see only NULL
//! (SQLITE_MISUSE, or 0).

use crate::db::{db_ref, Db};
use crate::{guard, rc};
use std::ffi::{c_char, c_int, c_void};
use std::ptr;

/// What C calls `sqlite3_blob`: never made.
pub enum Blob {}

/// sqlite3_deserialize's flag that hands the buffer to SQLite, which frees it on failure.
const DESERIALIZE_FREEONCLOSE: u32 = 1;

#[no_mangle]
pub unsafe extern "C" fn sqlite3_blob_open(
    db: *mut Db,
    _db_name: *const c_char,
    _table: *const c_char,
    _column: *const c_char,
    _rowid: i64,
    _flags: c_int,
    pp_blob: *mut *mut Blob,
) -> c_int {
    guard(rc::INTERNAL, || {
        if !pp_blob.is_null() {
            *pp_blob = ptr::null_mut();
        }
        match db_ref(db) {
            None => rc::MISUSE,
            Some(d) => d.fail(rc::ERROR, "parlite does not support incremental blob I/O"),
        }
    })
}

#[no_mangle]
pub extern "C" fn sqlite3_blob_close(_b: *mut Blob) -> c_int {
    rc::OK
}

#[no_mangle]
pub extern "C" fn sqlite3_blob_bytes(_b: *mut Blob) -> c_int {
    0
}

#[no_mangle]
pub extern "C" fn sqlite3_blob_read(_b: *mut Blob, _z: *mut c_void, _n: c_int, _o: c_int) -> c_int {
    rc::MISUSE
}

#[no_mangle]
pub extern "C" fn sqlite3_blob_write(
    _b: *mut Blob,
    _z: *const c_void,
    _n: c_int,
    _o: c_int,
) -> c_int {
    rc::MISUSE
}

#[no_mangle]
pub extern "C" fn sqlite3_blob_reopen(_b: *mut Blob, _rowid: i64) -> c_int {
    rc::MISUSE
}

/// NULL, SQLite's answer when it cannot serialize (with `*size` -1).
#[no_mangle]
pub unsafe extern "C" fn sqlite3_serialize(
    _db: *mut Db,
    _schema: *const c_char,
    size: *mut i64,
    _flags: u32,
) -> *mut u8 {
    guard(ptr::null_mut(), || {
        if !size.is_null() {
            *size = -1;
        }
        ptr::null_mut()
    })
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_deserialize(
    db: *mut Db,
    _schema: *const c_char,
    data: *mut u8,
    _size: i64,
    _buffer_size: i64,
    flags: u32,
) -> c_int {
    guard(rc::INTERNAL, || {
        if flags & DESERIALIZE_FREEONCLOSE != 0 {
            libc::free(data as *mut c_void);
        }
        match db_ref(db) {
            None => rc::MISUSE,
            Some(d) => d.fail(rc::ERROR, "parlite does not support sqlite3_deserialize"),
        }
    })
}

/// Shared-cache mode (table-level locks, READ UNCOMMITTED) is not parlite's: turning it
/// off succeeds, turning it on fails.
#[no_mangle]
pub extern "C" fn sqlite3_enable_shared_cache(enable: c_int) -> c_int {
    if enable == 0 {
        rc::OK
    } else {
        rc::ERROR
    }
}
