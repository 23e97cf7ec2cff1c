//! The online backup API (`sqlite3_backup_*`, c3ref/backup_finish.html) over
//! `parlite::Backup`.
//!
//! Invariants:
//! 1. A backup counts as a live object of its source handle from `init` to `finish`
//!    (`Db::stmt_opened`): `sqlite3_close` of the source refuses with SQLITE_BUSY ("unable
//!    to close due to unfinalized statements or unfinished backups") and `close_v2` defers
//!    to the `finish`, which frees the zombie, as in SQLite.
//! 2. Errors land where SQLite puts them: a failed `init` on the destination handle (with
//!    its message), `step` on no handle (its result code only), `finish` on the destination
//!    handle as a code whose message is SQLite's text for it (`sqlite3Error`).
//! 3. A destination whose writer lock is held elsewhere runs the destination handle's busy
//!    handler, as SQLite's `sqlite3BtreeBeginTrans` on the destination does.

use crate::db::{db_ref, free, Db};
use crate::{guard, rc};
use parlite::BackupStep;
use std::ffi::{c_char, c_int, CStr};
use std::ptr;

/// What C calls `sqlite3_backup`.
pub struct Backup {
    copy: parlite::Backup,
    dest: *mut Db,
    source: *mut Db,
}

/// A schema name argument; NULL names no database, as in SQLite.
unsafe fn schema_name(p: *const c_char) -> String {
    if p.is_null() {
        return "(null)".to_string();
    }
    CStr::from_ptr(p).to_string_lossy().into_owned()
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_backup_init(
    dest: *mut Db,
    dest_name: *const c_char,
    source: *mut Db,
    source_name: *const c_char,
) -> *mut Backup {
    guard(ptr::null_mut(), || {
        let (Some(d), Some(s)) = (db_ref(dest), db_ref(source)) else {
            return ptr::null_mut();
        };
        let (Some(dc), Some(sc)) = (d.conn(), s.conn()) else {
            d.fail(rc::MISUSE, "bad parameter or other API misuse");
            return ptr::null_mut();
        };
        let copy = if ptr::eq(dest, source) {
            // One handle holds one connection: SQLite's check on the handles.
            Err(parlite::Error {
                code: rc::ERROR,
                extended_code: rc::ERROR,
                message: "source and destination must be distinct".into(),
            })
        } else {
            parlite::Backup::new(dc, &schema_name(dest_name), sc, &schema_name(source_name))
        };
        match copy {
            Ok(copy) => {
                s.stmt_opened();
                Box::into_raw(Box::new(Backup { copy, dest, source }))
            }
            Err(e) => {
                d.fail(e.extended_code, &e.message);
                ptr::null_mut()
            }
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_backup_step(b: *mut Backup, n_pages: c_int) -> c_int {
    guard(rc::INTERNAL, || {
        let Some(b) = b.as_mut() else {
            return rc::MISUSE;
        };
        let r = match db_ref(b.dest) {
            Some(d) => d.while_busy(|| b.copy.step(n_pages)),
            None => b.copy.step(n_pages),
        };
        match r {
            Ok(BackupStep::More) => rc::OK,
            Ok(BackupStep::Done) => rc::DONE,
            Err(e) => e.extended_code,
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_backup_finish(b: *mut Backup) -> c_int {
    guard(rc::INTERNAL, || {
        if b.is_null() {
            return rc::OK;
        }
        let b = Box::from_raw(b);
        let Backup { copy, dest, source } = *b;
        let code = match copy.finish() {
            Ok(()) => rc::OK,
            Err(e) => e.extended_code,
        };
        if let Some(d) = db_ref(dest) {
            d.set_code(code);
        }
        if db_ref(source).is_some_and(|s| s.stmt_closed()) {
            free(source);
        }
        code
    })
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_backup_remaining(b: *mut Backup) -> c_int {
    guard(0, || b.as_ref().map_or(0, |b| b.copy.remaining() as c_int))
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_backup_pagecount(b: *mut Backup) -> c_int {
    guard(0, || b.as_ref().map_or(0, |b| b.copy.page_count() as c_int))
}
