//! Library-wide functions: version, memory, result-code texts, completeness, sleep.

use crate::{guard, rc};
use parlite_sql::func::scalar::{SOURCE_ID, SQLITE_COMPAT_VERSION};
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::OnceLock;
use std::time::Duration;

/// SQLite's text for a result code (sqlite3ErrStr).
pub(crate) fn errstr(code: c_int) -> &'static CStr {
    match code {
        516 => c"abort due to ROLLBACK",
        rc::ROW => c"another row available",
        rc::DONE => c"no more rows available",
        _ => match code & 0xff {
            0 => c"not an error",
            1 => c"SQL logic error",
            3 => c"access permission denied",
            4 => c"query aborted",
            5 => c"database is locked",
            6 => c"database table is locked",
            7 => c"out of memory",
            8 => c"attempt to write a readonly database",
            9 => c"interrupted",
            10 => c"disk I/O error",
            11 => c"database disk image is malformed",
            12 => c"unknown operation",
            13 => c"database or disk is full",
            14 => c"unable to open database file",
            15 => c"locking protocol",
            17 => c"database schema has changed",
            18 => c"string or blob too big",
            19 => c"constraint failed",
            20 => c"datatype mismatch",
            21 => c"bad parameter or other API misuse",
            23 => c"authorization denied",
            25 => c"column index out of range",
            26 => c"file is not a database",
            27 => c"notification message",
            28 => c"warning message",
            _ => c"unknown error",
        },
    }
}

/// A copy of `s` in memory from `sqlite3_malloc`, for the caller to `sqlite3_free`.
pub(crate) fn malloc_c_string(s: &CStr) -> *mut c_char {
    let bytes = s.to_bytes_with_nul();
    // SAFETY: a fresh allocation of `bytes.len()` bytes, filled before it is handed out.
    unsafe {
        let p = libc::malloc(bytes.len()) as *mut u8;
        if !p.is_null() {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len());
        }
        p as *mut c_char
    }
}

/// SQLITE_VERSION_NUMBER of "X.Y.Z": X*1000000 + Y*1000 + Z.
fn version_number(version: &str) -> c_int {
    version
        .split('.')
        .map(|p| p.parse::<c_int>().unwrap_or(0))
        .chain(std::iter::repeat(0))
        .take(3)
        .fold(0, |n, p| n * 1000 + p)
}

/// The version parlite reports everywhere (`sqlite_version()`): the SQLite it matches.
#[no_mangle]
pub extern "C" fn sqlite3_libversion() -> *const c_char {
    static V: OnceLock<CString> = OnceLock::new();
    V.get_or_init(|| crate::db::c_string(SQLITE_COMPAT_VERSION))
        .as_ptr()
}

#[no_mangle]
pub extern "C" fn sqlite3_libversion_number() -> c_int {
    version_number(SQLITE_COMPAT_VERSION)
}

/// The first 60 bytes of `SQLITE_SOURCE_ID` in the `sqlite3.h` this library's ABI is
/// built and tested against (Debian 12's SQLite 3.40.1, /usr/include/sqlite3.h): the
/// stock sqlite3 shell compares exactly these bytes of `sqlite3_sourceid()` with its own
/// header's and exits ("SQLite header and source version mismatch") when they differ.
const ABI_SOURCE_ID: &str = "2022-12-28 14:03:47 df5c253c0b3dd24916e4ec7cf77d3db5294cc9fd";

/// The check-in of the header whose ABI parlite serves, then parlite's own identification
/// ("... parlite 0.1.0 (SQLite 3.50.2 compatible)"): a program that checks its header
/// against the library (the sqlite3 shell) runs, and one that shows or parses the id can
/// tell it is parlite. `sqlite3_libversion` stays the SQLite whose SQL parlite matches.
#[no_mangle]
pub extern "C" fn sqlite3_sourceid() -> *const c_char {
    static V: OnceLock<CString> = OnceLock::new();
    V.get_or_init(|| crate::db::c_string(&format!("{ABI_SOURCE_ID} {SOURCE_ID}")))
        .as_ptr()
}

/// 1: serialized. Every handle and statement is behind a mutex (lib.rs invariant 5), so
/// any thread may use any of them.
#[no_mangle]
pub extern "C" fn sqlite3_threadsafe() -> c_int {
    1
}

/// parlite needs no process-wide set-up or tear-down: both succeed, as SQLite's do when
/// there is nothing left to do.
#[no_mangle]
pub extern "C" fn sqlite3_initialize() -> c_int {
    crate::config::mark_initialized();
    rc::OK
}

#[no_mangle]
pub extern "C" fn sqlite3_shutdown() -> c_int {
    crate::config::mark_shut_down();
    rc::OK
}

/// sqlite3_randomness: `n` random bytes into `p` from the operating system's generator
/// (nothing for `n` <= 0 or a NULL `p`, where SQLite reseeds its generator; the OS's
/// needs no seeding).
#[no_mangle]
pub unsafe extern "C" fn sqlite3_randomness(n: c_int, p: *mut c_void) {
    guard((), || {
        let Ok(mut left) = usize::try_from(n) else {
            return;
        };
        if p.is_null() {
            return;
        }
        let mut at = p as *mut u8;
        while left > 0 {
            let got = libc::getrandom(at as *mut c_void, left, 0);
            if got < 0 {
                if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                // No getrandom (an old kernel): the same pool through its device.
                use std::io::Read;
                let rest = std::slice::from_raw_parts_mut(at, left);
                std::fs::File::open("/dev/urandom")
                    .and_then(|mut f| f.read_exact(rest))
                    .expect("the OS's random bytes");
                return;
            }
            at = at.add(got as usize);
            left -= got as usize;
        }
    })
}

#[no_mangle]
pub extern "C" fn sqlite3_errstr(code: c_int) -> *const c_char {
    errstr(code).as_ptr()
}

/// Sleeps `ms` milliseconds and returns them, as SQLite's default VFS does.
#[no_mangle]
pub extern "C" fn sqlite3_sleep(ms: c_int) -> c_int {
    let ms = ms.max(0);
    std::thread::sleep(Duration::from_millis(ms as u64));
    ms
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_complete(sql: *const c_char) -> c_int {
    guard(0, || {
        if sql.is_null() {
            return 0;
        }
        // Invalid UTF-8 turns into U+FFFD, whose bytes are >= 0x80 as the invalid ones
        // were: identifier characters to complete.c either way.
        parlite::complete::is_complete(&CStr::from_ptr(sql).to_string_lossy()) as c_int
    })
}

/// sqlite3StrICmp on at most `n` bytes: the difference of the first pair of bytes that
/// differ once ASCII upper case is folded to lower case; NULL sorts first.
unsafe fn strnicmp(a: *const c_char, b: *const c_char, n: usize) -> c_int {
    match (a.is_null(), b.is_null()) {
        (true, true) => return 0,
        (true, false) => return -1,
        (false, true) => return 1,
        _ => {}
    }
    for i in 0..n {
        let x = (*a.add(i) as u8).to_ascii_lowercase();
        let y = (*b.add(i) as u8).to_ascii_lowercase();
        if x != y {
            return x as c_int - y as c_int;
        }
        if x == 0 {
            break;
        }
    }
    0
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_stricmp(a: *const c_char, b: *const c_char) -> c_int {
    strnicmp(a, b, usize::MAX)
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_strnicmp(a: *const c_char, b: *const c_char, n: c_int) -> c_int {
    strnicmp(a, b, usize::try_from(n).unwrap_or(0))
}

// ---- memory: the C allocator, so that what sqlite3_malloc gives sqlite3_free takes ------

#[no_mangle]
pub extern "C" fn sqlite3_malloc(n: c_int) -> *mut c_void {
    if n <= 0 {
        return std::ptr::null_mut();
    }
    // SAFETY: plain allocation.
    unsafe { libc::malloc(n as usize) }
}

#[no_mangle]
pub extern "C" fn sqlite3_malloc64(n: u64) -> *mut c_void {
    if n == 0 {
        return std::ptr::null_mut();
    }
    // SAFETY: plain allocation.
    unsafe { libc::malloc(n as usize) }
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_free(p: *mut c_void) {
    libc::free(p)
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_realloc(p: *mut c_void, n: c_int) -> *mut c_void {
    if n <= 0 {
        libc::free(p);
        return std::ptr::null_mut();
    }
    libc::realloc(p, n as usize)
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_realloc64(p: *mut c_void, n: u64) -> *mut c_void {
    if n == 0 {
        libc::free(p);
        return std::ptr::null_mut();
    }
    libc::realloc(p, n as usize)
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_msize(p: *mut c_void) -> u64 {
    if p.is_null() {
        return 0;
    }
    libc::malloc_usable_size(p) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_numbers_as_sqlite_encodes_them() {
        assert_eq!(version_number("3.50.2"), 3_050_002);
        assert_eq!(version_number("3.8"), 3_008_000);
    }
}

/// sqlite3_strglob: 0 when `text` matches GLOB `pattern`, non-zero otherwise (NULL never
/// matches).
#[no_mangle]
pub unsafe extern "C" fn sqlite3_strglob(pattern: *const c_char, text: *const c_char) -> c_int {
    guard(1, || {
        if pattern.is_null() || text.is_null() {
            return 1;
        }
        let (p, t) = (CStr::from_ptr(pattern), CStr::from_ptr(text));
        c_int::from(!parlite_sql::func::like::glob_match_bytes(
            p.to_bytes(),
            t.to_bytes(),
        ))
    })
}

/// sqlite3_strlike: 0 when `text` matches LIKE `pattern` (ASCII case folded, `escape` 0
/// for none), non-zero otherwise (NULL never matches).
#[no_mangle]
pub unsafe extern "C" fn sqlite3_strlike(
    pattern: *const c_char,
    text: *const c_char,
    escape: u32,
) -> c_int {
    guard(1, || {
        if pattern.is_null() || text.is_null() {
            return 1;
        }
        let (p, t) = (CStr::from_ptr(pattern), CStr::from_ptr(text));
        let escape = (escape != 0).then_some(escape);
        c_int::from(!parlite_sql::func::like::like_match_bytes(
            p.to_bytes(),
            t.to_bytes(),
            escape,
            false,
        ))
    })
}
