//! The rendering half of SQLite's printf family (`sqlite3_mprintf`, `sqlite3_snprintf`,
//! `sqlite3_str_appendf` and their `va_list` forms). Their C half (c/variadic.c) walks the
//! format, takes each conversion's arguments off the `va_list` with the types SQLite's
//! documentation gives them, and asks [`parlite_capi_format_spec`] to render the
//! conversion: the renderer is parlite's SQL `printf()` (parlite_sql::func::printf), which
//! is SQLite's printf with its extensions (`%q %Q %w %r %!`, `%,d`, SQLite's rounding of
//! reals). A C argument becomes the SQL value that `printf()` reads the same way: an
//! integer of any width an INTEGER, a double a REAL, a string a BLOB of its bytes (so that
//! bytes that are not UTF-8 pass through unchanged, as in SQLite), a NULL string a NULL.

use crate::{guard, rc};
use parlite_sql::func::printf::format_bytes;
use parlite_sql::value::Value;
use std::ffi::{c_char, c_int, CStr};
use std::ptr;

/// One C argument of a conversion, as c/variadic.c's `FormatArg` lays it out.
#[repr(C)]
pub struct FormatArg {
    kind: c_int,
    i: i64,
    r: f64,
    s: *const c_char,
}

const ARG_INT: c_int = 0;
const ARG_REAL: c_int = 1;
/// A C string, or NULL.
const ARG_TEXT: c_int = 2;
/// `i` bytes at `s` (`%c`'s character, already UTF-8).
const ARG_BYTES: c_int = 3;

/// The SQL value `printf()` reads as SQLite's C printf reads `arg`.
///
/// # Safety
/// `arg.s` is NULL, a NUL-terminated string (ARG_TEXT) or `arg.i` readable bytes
/// (ARG_BYTES).
unsafe fn value_of(arg: &FormatArg) -> Value {
    match arg.kind {
        ARG_INT => Value::Integer(arg.i),
        // Value::real would turn NaN into NULL, and printf() prints a NaN as "NaN". Value's
        // "never NaN" invariant is for values the engine keeps: this one lives only for
        // the one format_bytes call, which reads it with to_f64.
        ARG_REAL => Value::Real(arg.r),
        ARG_TEXT if arg.s.is_null() => Value::Null,
        ARG_TEXT => Value::blob(CStr::from_ptr(arg.s).to_bytes()),
        ARG_BYTES => Value::blob(std::slice::from_raw_parts(
            arg.s as *const u8,
            usize::try_from(arg.i).unwrap_or(0),
        )),
        _ => Value::Null,
    }
}

/// Renders the one conversion `spec[..len]` (from its `%` to its conversion character)
/// with its `nargs` arguments: SQLITE_OK and the bytes in `*out` (malloc'd, `*out_len`
/// long; NULL when empty), or SQLITE_TOOBIG when the field would pass SQLite's length
/// limit, SQLITE_NOMEM when the copy cannot be allocated.
#[no_mangle]
pub unsafe extern "C" fn parlite_capi_format_spec(
    spec: *const u8,
    len: usize,
    args: *const FormatArg,
    nargs: c_int,
    out: *mut *mut c_char,
    out_len: *mut usize,
) -> c_int {
    guard(rc::NOMEM, || {
        *out = ptr::null_mut();
        *out_len = 0;
        let spec = std::slice::from_raw_parts(spec, len);
        let args = std::slice::from_raw_parts(args, usize::try_from(nargs).unwrap_or(0));
        let values: Vec<Value> = args.iter().map(|a| value_of(a)).collect();
        let Some(bytes) = format_bytes(spec, &values) else {
            return rc::TOOBIG;
        };
        if bytes.is_empty() {
            return rc::OK;
        }
        let p = libc::malloc(bytes.len()) as *mut u8;
        if p.is_null() {
            return rc::NOMEM;
        }
        ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len());
        *out = p as *mut c_char;
        *out_len = bytes.len();
        rc::OK
    })
}
