//! Interfaces programs import (CPython's `sqlite3` module, the sqlite3 shell) that
//! parlite's engine cannot serve yet: incremental blob I/O, serialize/deserialize,
//! shared-cache mode, virtual tables and VFSes. Each fails with an error the program
//! reports, never a silent success (lib.rs invariant 3); README's "C API" lists them.
//!
//! No call ever hands out a blob handle, a virtual table or a VFS object, so the functions
//! that take one see only NULL or a call outside their context (SQLITE_MISUSE, or 0).

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

// ---- virtual tables ----------------------------------------------------------------------

/// What C calls `sqlite3_module` and `sqlite3_index_info`: never read.
pub enum Module {}
pub enum IndexInfo {}

type XDestroy = unsafe extern "C" fn(*mut c_void);

const VTAB_MESSAGE: &str = "parlite does not support virtual tables";

/// sqlite3_create_module: SQLITE_ERROR, "parlite does not support virtual tables".
#[no_mangle]
pub unsafe extern "C" fn sqlite3_create_module(
    db: *mut Db,
    _name: *const c_char,
    _module: *const Module,
    _aux: *mut c_void,
) -> c_int {
    guard(rc::INTERNAL, || match db_ref(db) {
        None => rc::MISUSE,
        Some(d) => d.fail(rc::ERROR, VTAB_MESSAGE),
    })
}

/// sqlite3_create_module_v2: as sqlite3_create_module; `destroy` gets `aux` back at once,
/// as SQLite's does when the registration fails.
#[no_mangle]
pub unsafe extern "C" fn sqlite3_create_module_v2(
    db: *mut Db,
    name: *const c_char,
    module: *const Module,
    aux: *mut c_void,
    destroy: Option<XDestroy>,
) -> c_int {
    guard(rc::INTERNAL, || {
        let code = sqlite3_create_module(db, name, module, aux);
        if let Some(f) = destroy {
            f(aux);
        }
        code
    })
}

/// sqlite3_declare_vtab: only a module's xCreate/xConnect may call it, and none runs.
#[no_mangle]
pub unsafe extern "C" fn sqlite3_declare_vtab(db: *mut Db, _sql: *const c_char) -> c_int {
    guard(rc::INTERNAL, || match db_ref(db) {
        None => rc::MISUSE,
        Some(d) => d.fail(rc::MISUSE, VTAB_MESSAGE),
    })
}

/// sqlite3_vtab_config's body (c/variadic.c takes the `...`): outside xCreate/xConnect,
/// SQLITE_MISUSE, as SQLite answers there.
#[no_mangle]
pub unsafe extern "C" fn parlite_capi_vtab_config(db: *mut Db, _op: c_int) -> c_int {
    guard(rc::INTERNAL, || match db_ref(db) {
        None => rc::MISUSE,
        Some(d) => d.fail(rc::MISUSE, VTAB_MESSAGE),
    })
}

/// sqlite3_vtab_collation: only xBestIndex has an index_info to ask about: NULL.
#[no_mangle]
pub extern "C" fn sqlite3_vtab_collation(_info: *mut IndexInfo, _i: c_int) -> *const c_char {
    ptr::null()
}

/// sqlite3_vtab_nochange: 0, "the column is being changed", the answer outside xUpdate.
#[no_mangle]
pub extern "C" fn sqlite3_vtab_nochange(_ctx: *mut c_void) -> c_int {
    0
}

/// sqlite3_vtab_on_conflict: no virtual-table update is ever under way to ask about.
#[no_mangle]
pub extern "C" fn sqlite3_vtab_on_conflict(_db: *mut Db) -> c_int {
    rc::MISUSE
}

// ---- VFSes --------------------------------------------------------------------------------

/// What C calls `sqlite3_vfs`: parlite has none to hand out (its files are
/// parlite_storage's).
pub enum Vfs {}

/// sqlite3_vfs_find: NULL, "no such VFS", for every name, the default included: there is
/// no `sqlite3_vfs` object whose methods parlite's storage would honour.
#[no_mangle]
pub extern "C" fn sqlite3_vfs_find(_name: *const c_char) -> *mut Vfs {
    ptr::null_mut()
}

/// sqlite3_vfs_register: SQLITE_ERROR; parlite's storage cannot run over another VFS.
#[no_mangle]
pub extern "C" fn sqlite3_vfs_register(vfs: *mut Vfs, _make_default: c_int) -> c_int {
    if vfs.is_null() {
        return rc::MISUSE;
    }
    rc::ERROR
}

// ---- the session extension ------------------------------------------------------------------

/// What C calls `sqlite3_session`: never made, parlite's engine records no changesets.
pub enum Session {}

/// sqlite3session_create: SQLITE_ERROR, "parlite does not support the session extension";
/// `*session` NULL.
#[no_mangle]
pub unsafe extern "C" fn sqlite3session_create(
    db: *mut Db,
    _db_name: *const c_char,
    session: *mut *mut Session,
) -> c_int {
    guard(rc::INTERNAL, || {
        if !session.is_null() {
            *session = ptr::null_mut();
        }
        match db_ref(db) {
            None => rc::MISUSE,
            Some(d) => d.fail(rc::ERROR, "parlite does not support the session extension"),
        }
    })
}

#[no_mangle]
pub extern "C" fn sqlite3session_delete(_s: *mut Session) {}

/// The state of a session that does not exist: not enabled, not indirect.
#[no_mangle]
pub extern "C" fn sqlite3session_enable(_s: *mut Session, _enable: c_int) -> c_int {
    0
}

#[no_mangle]
pub extern "C" fn sqlite3session_indirect(_s: *mut Session, _indirect: c_int) -> c_int {
    0
}

#[no_mangle]
pub extern "C" fn sqlite3session_isempty(_s: *mut Session) -> c_int {
    1
}

#[no_mangle]
pub extern "C" fn sqlite3session_attach(_s: *mut Session, _table: *const c_char) -> c_int {
    rc::MISUSE
}

/// sqlite3session_table_filter's callback: (its argument, a table name) -> keep.
type TableFilter = unsafe extern "C" fn(*mut c_void, *const c_char) -> c_int;

#[no_mangle]
pub extern "C" fn sqlite3session_table_filter(
    _s: *mut Session,
    _filter: Option<TableFilter>,
    _arg: *mut c_void,
) {
}

/// sqlite3session_changeset and _patchset: no session, no changes: SQLITE_MISUSE with an
/// empty buffer.
#[no_mangle]
pub unsafe extern "C" fn sqlite3session_changeset(
    _s: *mut Session,
    n: *mut c_int,
    p: *mut *mut c_void,
) -> c_int {
    no_changes(n, p)
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3session_patchset(
    _s: *mut Session,
    n: *mut c_int,
    p: *mut *mut c_void,
) -> c_int {
    no_changes(n, p)
}

unsafe fn no_changes(n: *mut c_int, p: *mut *mut c_void) -> c_int {
    if !n.is_null() {
        *n = 0;
    }
    if !p.is_null() {
        *p = ptr::null_mut();
    }
    rc::MISUSE
}
