//! The core scalar functions (lang_corefunc.html), each `fn(&Ctx, &[Value]) -> Result<Value>`.
//!
//! Argument counts are checked by the registry before a call, so each function may assume
//! its arity; they still never index past `args` (a missing argument reads as NULL).
//! Conversions follow the C API (`sqlite3_value_text` of a number is its rendering,
//! `sqlite3_value_int64` of text is its integer prefix). Functions that SQLite writes
//! against NUL-terminated C strings (length, substr on text, trim's character set, like,
//! unicode, soundex, %s) stop at the first NUL as SQLite does; byte-oriented ones (hex,
//! replace, upper, octet_length) see every byte.
//!
//! coalesce/ifnull/iif/likely/unlikely/likelihood are implemented here on evaluated
//! arguments for completeness; SQLite evaluates them lazily (CASE-like), so the executor
//! should short-circuit them (see `FuncDef::special`) to match SQLite when a skipped
//! argument would raise an error.

use super::Ctx;
use crate::collation::Collation;
use crate::value::num::{self, FloatFormat, FloatStyle};
use crate::value::{truth, Result, SqlError, Value, MAX_LENGTH_BYTES};
use std::borrow::Cow;
use std::cmp::Ordering;
use std::sync::Arc;

/// The SQLite version parlite claims compatibility with, returned by `sqlite_version()`.
/// It is the version whose behaviour the differential tests check against (the SQLite
/// bundled with the `rusqlite` dev-dependency).
pub const SQLITE_COMPAT_VERSION: &str = "3.50.2";

/// What `sqlite_source_id()` returns: parlite's own identification.
pub const SOURCE_ID: &str = concat!(
    "parlite ",
    env!("CARGO_PKG_VERSION"),
    " (SQLite 3.50.2 compatible)"
);

fn arg(args: &[Value], i: usize) -> &Value {
    args.get(i).unwrap_or(&Value::Null)
}

fn until_nul(s: &str) -> &str {
    match s.find('\0') {
        Some(n) => &s[..n],
        None => s,
    }
}

fn text_result(s: String) -> Result<Value> {
    if s.len() > MAX_LENGTH_BYTES {
        return Err(SqlError::TooBig);
    }
    Ok(Value::Text(Arc::from(s)))
}

/// `abs(X)`: integer overflow error for -9223372036854775808; text and blobs as reals.
pub fn abs(_: &Ctx, args: &[Value]) -> Result<Value> {
    match arg(args, 0) {
        Value::Null => Ok(Value::Null),
        Value::Integer(i) => i
            .checked_abs()
            .map(Value::Integer)
            .ok_or(SqlError::IntegerOverflow),
        v => Ok(Value::real(v.to_f64().abs())),
    }
}

pub fn changes(ctx: &Ctx, _: &[Value]) -> Result<Value> {
    Ok(Value::Integer(ctx.conn.changes()))
}

pub fn total_changes(ctx: &Ctx, _: &[Value]) -> Result<Value> {
    Ok(Value::Integer(ctx.conn.total_changes()))
}

pub fn last_insert_rowid(ctx: &Ctx, _: &[Value]) -> Result<Value> {
    Ok(Value::Integer(ctx.conn.last_insert_rowid()))
}

/// `char(X1, ..., XN)`: out-of-range code points become U+FFFD. Surrogate code points
/// (which SQLite encodes as invalid UTF-8) also become U+FFFD (value invariant 2).
pub fn char_fn(_: &Ctx, args: &[Value]) -> Result<Value> {
    let mut s = String::with_capacity(args.len());
    for a in args {
        let x = a.to_i64();
        let c = if (0..=0x10ffff).contains(&x) {
            char::from_u32(x as u32).unwrap_or('\u{fffd}')
        } else {
            '\u{fffd}'
        };
        s.push(c);
    }
    text_result(s)
}

pub fn coalesce(_: &Ctx, args: &[Value]) -> Result<Value> {
    Ok(args
        .iter()
        .find(|v| !v.is_null())
        .cloned()
        .unwrap_or(Value::Null))
}

/// `iif(C1, V1 [, C2, V2 ...] [, ELSE])`: CASE WHEN C1 THEN V1 ... ELSE ... END.
pub fn iif(_: &Ctx, args: &[Value]) -> Result<Value> {
    let mut i = 0;
    while i + 1 < args.len() {
        if truth(&args[i]) == Some(true) {
            return Ok(args[i + 1].clone());
        }
        i += 2;
    }
    Ok(if i < args.len() {
        args[i].clone()
    } else {
        Value::Null
    })
}

pub fn printf(_: &Ctx, args: &[Value]) -> Result<Value> {
    Ok(super::printf::sql_printf(args))
}

pub fn glob(_: &Ctx, args: &[Value]) -> Result<Value> {
    super::like::glob_fn(args)
}

pub fn like(ctx: &Ctx, args: &[Value]) -> Result<Value> {
    super::like::like_fn(args, ctx.conn.case_sensitive_like())
}

/// `hex(X)`: upper-case hex of the blob, of the text's UTF-8 bytes, or of a number's text;
/// NULL gives ''.
pub fn hex(_: &Ctx, args: &[Value]) -> Result<Value> {
    let bytes = arg(args, 0).to_bytes().unwrap_or(Cow::Borrowed(&[]));
    if bytes.len() > MAX_LENGTH_BYTES / 2 {
        return Err(SqlError::TooBig);
    }
    const DIGITS: &[u8; 16] = b"0123456789ABCDEF";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes.iter() {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 0xf)] as char);
    }
    Ok(Value::Text(Arc::from(s)))
}

pub fn ifnull(_: &Ctx, args: &[Value]) -> Result<Value> {
    let a = arg(args, 0);
    Ok(if a.is_null() {
        arg(args, 1).clone()
    } else {
        a.clone()
    })
}

/// `instr(X, Y)`: 1-based character position (bytes when both are blobs), 0 when absent,
/// 1 for an empty needle.
pub fn instr(_: &Ctx, args: &[Value]) -> Result<Value> {
    let (h, n) = (arg(args, 0), arg(args, 1));
    if h.is_null() || n.is_null() {
        return Ok(Value::Null);
    }
    if n.byte_len() == 0 {
        return Ok(Value::Integer(1));
    }
    if let (Value::Blob(hb), Value::Blob(nb)) = (h, n) {
        let pos = find_bytes(hb, nb).map_or(0, |p| p as i64 + 1);
        return Ok(Value::Integer(pos));
    }
    let (ht, nt) = (h.to_text_or_empty(), n.to_text_or_empty());
    let pos = match ht.find(nt.as_ref()) {
        Some(byte_pos) => ht[..byte_pos].chars().count() as i64 + 1,
        None => 0,
    };
    Ok(Value::Integer(pos))
}

fn find_bytes(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return Some(0);
    }
    hay.windows(needle.len()).position(|w| w == needle)
}

/// `length(X)`: characters of text (up to a NUL), bytes of blobs, bytes of a number's text.
pub fn length(_: &Ctx, args: &[Value]) -> Result<Value> {
    Ok(match arg(args, 0) {
        Value::Null => Value::Null,
        Value::Text(s) => Value::Integer(until_nul(s).chars().count() as i64),
        Value::Blob(b) => Value::Integer(b.len() as i64),
        v => Value::Integer(v.byte_len() as i64),
    })
}

/// `octet_length(X)`: bytes of the text or blob form.
pub fn octet_length(_: &Ctx, args: &[Value]) -> Result<Value> {
    Ok(match arg(args, 0) {
        Value::Null => Value::Null,
        v => Value::Integer(v.byte_len() as i64),
    })
}

/// likely(X), unlikely(X), likelihood(X, P): X.
pub fn first_arg(_: &Ctx, args: &[Value]) -> Result<Value> {
    Ok(arg(args, 0).clone())
}

/// `lower(X)` / `upper(X)`: ASCII letters only, as SQLite without ICU.
pub fn lower(_: &Ctx, args: &[Value]) -> Result<Value> {
    Ok(match arg(args, 0).to_text() {
        None => Value::Null,
        Some(t) => Value::Text(Arc::from(t.to_ascii_lowercase())),
    })
}

pub fn upper(_: &Ctx, args: &[Value]) -> Result<Value> {
    Ok(match arg(args, 0).to_text() {
        None => Value::Null,
        Some(t) => Value::Text(Arc::from(t.to_ascii_uppercase())),
    })
}

#[derive(Clone, Copy)]
enum TrimSide {
    Left,
    Right,
    Both,
}

fn trim_impl(args: &[Value], side: TrimSide) -> Result<Value> {
    let Some(input) = arg(args, 0).to_text() else {
        return Ok(Value::Null);
    };
    let set_text;
    let set: Vec<&str> = if args.len() >= 2 {
        let Some(t) = arg(args, 1).to_text() else {
            return Ok(Value::Null);
        };
        set_text = t;
        // The character set is a C string: it ends at its first NUL.
        let set_str = until_nul(&set_text);
        set_str
            .char_indices()
            .map(|(i, c)| &set_str[i..i + c.len_utf8()])
            .collect()
    } else {
        vec![" "]
    };
    let mut s: &str = &input;
    if !set.is_empty() {
        if matches!(side, TrimSide::Left | TrimSide::Both) {
            while let Some(c) = set.iter().find(|c| s.starts_with(**c)) {
                s = &s[c.len()..];
            }
        }
        if matches!(side, TrimSide::Right | TrimSide::Both) {
            while let Some(c) = set.iter().find(|c| s.ends_with(**c)) {
                s = &s[..s.len() - c.len()];
            }
        }
    }
    Ok(Value::Text(Arc::from(s)))
}

pub fn ltrim(_: &Ctx, args: &[Value]) -> Result<Value> {
    trim_impl(args, TrimSide::Left)
}
pub fn rtrim(_: &Ctx, args: &[Value]) -> Result<Value> {
    trim_impl(args, TrimSide::Right)
}
pub fn trim(_: &Ctx, args: &[Value]) -> Result<Value> {
    trim_impl(args, TrimSide::Both)
}

/// Scalar `max(X, Y, ...)` / `min(...)`: NULL if any argument is NULL; compared with the
/// function's collation. On ties max keeps the earlier argument and min the later one,
/// as SQLite's loop does (visible in `min(1, 1.0)` = 1.0).
pub fn max_scalar(ctx: &Ctx, args: &[Value]) -> Result<Value> {
    min_max(args, ctx.collation, true)
}
pub fn min_scalar(ctx: &Ctx, args: &[Value]) -> Result<Value> {
    min_max(args, ctx.collation, false)
}

fn min_max(args: &[Value], coll: Collation, max: bool) -> Result<Value> {
    let Some(first) = args.first() else {
        return Ok(Value::Null);
    };
    if first.is_null() {
        return Ok(Value::Null);
    }
    let mut best = 0;
    for (i, v) in args.iter().enumerate().skip(1) {
        if v.is_null() {
            return Ok(Value::Null);
        }
        let c = args[best].compare(v, coll);
        let take = if max {
            c == Ordering::Less
        } else {
            c != Ordering::Less
        };
        if take {
            best = i;
        }
    }
    Ok(args[best].clone())
}

/// `nullif(X, Y)`: X unless X and Y compare equal (collation-aware, no affinity).
pub fn nullif(ctx: &Ctx, args: &[Value]) -> Result<Value> {
    let (a, b) = (arg(args, 0), arg(args, 1));
    Ok(if a.compare(b, ctx.collation) != Ordering::Equal {
        a.clone()
    } else {
        Value::Null
    })
}

/// `quote(X)`: an SQL literal. Reals use 15 significant digits when that round-trips,
/// otherwise 20 in exponent form; infinity becomes 9.0e+999 (SQLite's `%!0.15g`).
pub fn quote(_: &Ctx, args: &[Value]) -> Result<Value> {
    text_result(quote_value(arg(args, 0)))
}

/// `unistr_quote(X)`: like quote(), but text containing control characters becomes a
/// `unistr('...')` call with `\uXXXX` escapes (and backslashes doubled), so the literal
/// survives tools that mangle control characters.
pub fn unistr_quote(_: &Ctx, args: &[Value]) -> Result<Value> {
    match arg(args, 0) {
        Value::Text(t) => {
            let t = until_nul(t);
            if !t.bytes().any(|b| b <= 0x1f) {
                return text_result(quote_value(arg(args, 0)));
            }
            let mut s = String::with_capacity(t.len() + 12);
            s.push_str("unistr('");
            for c in t.chars() {
                match c {
                    '\'' => s.push_str("''"),
                    '\\' => s.push_str("\\\\"),
                    c if (c as u32) <= 0x1f => s.push_str(&format!("\\u{:04x}", c as u32)),
                    c => s.push(c),
                }
            }
            s.push_str("')");
            text_result(s)
        }
        v => text_result(quote_value(v)),
    }
}

/// The compile-time options parlite reports (`sqlite_compileoption_used/get`,
/// `PRAGMA compile_options`): the ones whose behaviour it reproduces.
pub const COMPILE_OPTIONS: &[&str] = &["ENABLE_MATH_FUNCTIONS", "SOUNDEX", "THREADSAFE=1"];

/// `sqlite_compileoption_used(X)`: 1 if option X (with or without "SQLITE_") is set.
pub fn sqlite_compileoption_used(_: &Ctx, args: &[Value]) -> Result<Value> {
    let Some(name) = arg(args, 0).to_text() else {
        return Ok(Value::Null);
    };
    // Byte comparisons: the name may be any text (slicing a str could split a character).
    let name = name.as_bytes();
    let name = if name.len() >= 7 && name[..7].eq_ignore_ascii_case(b"SQLITE_") {
        &name[7..]
    } else {
        name
    };
    let used = COMPILE_OPTIONS.iter().any(|opt| {
        let opt = opt.as_bytes();
        opt.len() >= name.len()
            && opt[..name.len()].eq_ignore_ascii_case(name)
            && !opt
                .get(name.len())
                .is_some_and(|&c| c.is_ascii_alphanumeric() || c == b'_')
    });
    Ok(Value::Integer(i64::from(used)))
}

/// `sqlite_compileoption_get(N)`: the N-th option, NULL past the end.
pub fn sqlite_compileoption_get(_: &Ctx, args: &[Value]) -> Result<Value> {
    let n = arg(args, 0).to_i64();
    Ok(usize::try_from(n)
        .ok()
        .and_then(|i| COMPILE_OPTIONS.get(i))
        .map_or(Value::Null, |o| Value::text(*o)))
}

/// `load_extension(X [, Y])`: parlite loads no native extensions.
pub fn load_extension(_: &Ctx, _: &[Value]) -> Result<Value> {
    Err(SqlError::msg("not authorized"))
}

/// A real as JSON text (`%!0.15g`; infinity becomes 9.0e+999 as in SQLite).
pub fn real_json_text(r: f64) -> String {
    let mut s = String::new();
    num::format_float(
        &mut s,
        r,
        &FloatFormat {
            style: FloatStyle::General,
            precision: 15,
            alternate: false,
            alt2: true,
            sign_char: None,
            zero_pad: true,
            thousands: false,
            upper: false,
        },
    );
    s
}

/// The text of `quote(v)`.
pub fn quote_value(v: &Value) -> String {
    match v {
        Value::Null => "NULL".to_string(),
        Value::Integer(i) => i.to_string(),
        Value::Real(r) => {
            let mut s = String::new();
            let mut f = FloatFormat {
                style: FloatStyle::General,
                precision: 15,
                alternate: false,
                alt2: true,
                sign_char: None,
                zero_pad: true,
                thousands: false,
                upper: false,
            };
            num::format_float(&mut s, *r, &f);
            if num::atof(s.as_bytes()).0 != *r {
                s.clear();
                f.style = FloatStyle::Exp;
                f.precision = 20;
                num::format_float(&mut s, *r, &f);
            }
            s
        }
        Value::Text(t) => {
            let t = until_nul(t);
            let mut s = String::with_capacity(t.len() + 2);
            s.push('\'');
            for c in t.chars() {
                s.push(c);
                if c == '\'' {
                    s.push('\'');
                }
            }
            s.push('\'');
            s
        }
        Value::Blob(b) => {
            const DIGITS: &[u8; 16] = b"0123456789ABCDEF";
            let mut s = String::with_capacity(b.len() * 2 + 3);
            s.push_str("X'");
            for byte in b.iter() {
                s.push(DIGITS[usize::from(byte >> 4)] as char);
                s.push(DIGITS[usize::from(byte & 0xf)] as char);
            }
            s.push('\'');
            s
        }
    }
}

/// `random()`: a pseudo-random i64, never i64::MIN (so abs() of it cannot overflow).
pub fn random(_: &Ctx, _: &[Value]) -> Result<Value> {
    let r = super::rng::next_u64() as i64;
    Ok(Value::Integer(if r < 0 { -(r & i64::MAX) } else { r }))
}

/// `randomblob(N)`: N random bytes (at least 1).
pub fn randomblob(_: &Ctx, args: &[Value]) -> Result<Value> {
    let n = arg(args, 0).to_i64().max(1);
    if n as u64 > MAX_LENGTH_BYTES as u64 {
        return Err(SqlError::TooBig);
    }
    let mut b = vec![0u8; n as usize];
    super::rng::fill(&mut b);
    Ok(Value::Blob(Arc::from(b)))
}

/// `replace(X, Y, Z)`: every non-overlapping Y in X (left to right) replaced by Z;
/// an empty Y returns X.
pub fn replace(_: &Ctx, args: &[Value]) -> Result<Value> {
    let Some(x) = arg(args, 0).to_text() else {
        return Ok(Value::Null);
    };
    let Some(y) = arg(args, 1).to_text() else {
        return Ok(Value::Null);
    };
    if y.is_empty() || y.starts_with('\0') {
        return Ok(Value::Text(Arc::from(x.as_ref())));
    }
    let Some(z) = arg(args, 2).to_text() else {
        return Ok(Value::Null);
    };
    let count = if z.len() > y.len() {
        x.matches(y.as_ref()).count()
    } else {
        0
    };
    if x.len()
        .saturating_add(count.saturating_mul(z.len() - y.len().min(z.len())))
        > MAX_LENGTH_BYTES
    {
        return Err(SqlError::TooBig);
    }
    Ok(Value::Text(Arc::from(x.replace(y.as_ref(), &z))))
}

/// `round(X [, N])`: SQLite rounds by printing with `%.Nf` (its own digit rounding) and
/// reading the text back; N is clamped to 0..=30; values beyond 2^52 are returned as is.
pub fn round(_: &Ctx, args: &[Value]) -> Result<Value> {
    let mut n: i64 = 0;
    if args.len() >= 2 {
        if arg(args, 1).is_null() {
            return Ok(Value::Null);
        }
        n = arg(args, 1).to_i64().clamp(0, 30);
    }
    let x = arg(args, 0);
    if x.is_null() {
        return Ok(Value::Null);
    }
    let mut r = x.to_f64();
    if !(-4503599627370496.0..=4503599627370496.0).contains(&r) {
        // No fractional part: nothing to round.
    } else if n == 0 {
        r = (r + if r < 0.0 { -0.5 } else { 0.5 }) as i64 as f64;
    } else {
        let mut s = String::new();
        num::format_float(
            &mut s,
            r,
            &FloatFormat {
                style: FloatStyle::Fixed,
                precision: n as i32,
                alternate: false,
                alt2: true,
                sign_char: None,
                zero_pad: false,
                thousands: false,
                upper: false,
            },
        );
        r = num::atof(s.as_bytes()).0;
    }
    Ok(Value::real(r))
}

/// `sign(X)`: -1, 0 or +1 for numbers and numeric text; NULL otherwise.
pub fn sign(_: &Ctx, args: &[Value]) -> Result<Value> {
    let v = arg(args, 0)
        .clone()
        .apply_comparison_affinity(Some(crate::value::Affinity::Numeric));
    let x = match v {
        Value::Integer(i) => i as f64,
        Value::Real(r) => r,
        _ => return Ok(Value::Null),
    };
    Ok(Value::Integer(if x < 0.0 {
        -1
    } else if x > 0.0 {
        1
    } else {
        0
    }))
}

/// `soundex(X)`: the four-character Soundex code; "?000" without ASCII letters.
pub fn soundex(_: &Ctx, args: &[Value]) -> Result<Value> {
    const CODE: [u8; 128] = {
        let mut t = [0u8; 128];
        let letters = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ";
        let codes = b"01230120022455012623010202";
        let mut i = 0;
        while i < 26 {
            t[letters[i] as usize] = codes[i] - b'0';
            t[letters[i] as usize + 32] = codes[i] - b'0';
            i += 1;
        }
        t
    };
    // Bytes, not lossy text: SQLite masks each byte with 0x7f, even in invalid UTF-8.
    let bytes = arg(args, 0).to_bytes().unwrap_or(Cow::Borrowed(&[]));
    let z = match bytes.iter().position(|&b| b == 0) {
        Some(n) => &bytes[..n],
        None => &bytes[..],
    };
    let mut i = 0;
    while i < z.len() && !z[i].is_ascii_alphabetic() {
        i += 1;
    }
    if i >= z.len() {
        return Ok(Value::text("?000"));
    }
    let mut out = String::with_capacity(4);
    let mut prev = CODE[usize::from(z[i] & 0x7f)];
    out.push(z[i].to_ascii_uppercase() as char);
    while out.len() < 4 && i < z.len() {
        let code = CODE[usize::from(z[i] & 0x7f)];
        if code > 0 {
            if code != prev {
                prev = code;
                out.push((b'0' + code) as char);
            }
        } else {
            prev = 0;
        }
        i += 1;
    }
    while out.len() < 4 {
        out.push('0');
    }
    Ok(Value::Text(Arc::from(out)))
}

pub fn sqlite_version(_: &Ctx, _: &[Value]) -> Result<Value> {
    Ok(Value::text(SQLITE_COMPAT_VERSION))
}

pub fn sqlite_source_id(_: &Ctx, _: &[Value]) -> Result<Value> {
    Ok(Value::text(SOURCE_ID))
}

/// `substr(X, Y [, Z])`: characters of text (bytes of blobs) from 1-based Y; negative Y
/// counts from the end; negative Z takes the |Z| characters before Y; Y = 0 is a position
/// before the first character (so `substr(X, 0, 2)` has one character).
pub fn substr(_: &Ctx, args: &[Value]) -> Result<Value> {
    let x = arg(args, 0);
    let y = arg(args, 1);
    if x.is_null() {
        return Ok(Value::Null);
    }
    let mut p1 = y.to_i64();
    let mut p2: i64 = if args.len() >= 3 {
        let z = arg(args, 2);
        if z.is_null() {
            return Ok(Value::Null);
        }
        z.to_i64()
    } else {
        MAX_LENGTH_BYTES as i64
    };
    if p1 == 0 && y.is_null() {
        return Ok(Value::Null);
    }
    let blob_bytes: Option<&[u8]> = match x {
        // A zero-length blob has no data pointer in SQLite: the result is NULL.
        Value::Blob(b) if b.is_empty() => return Ok(Value::Null),
        Value::Blob(b) => Some(b),
        _ => None,
    };
    let text = if blob_bytes.is_none() {
        x.to_text_or_empty()
    } else {
        Cow::Borrowed("")
    };
    let text = until_nul(&text);
    let len: i64 = match blob_bytes {
        Some(b) => b.len() as i64,
        None if p1 < 0 => text.chars().count() as i64,
        None => 0,
    };
    if p1 < 0 {
        p1 = p1.saturating_add(len);
        if p1 < 0 {
            p2 = if p2 < 0 { 0 } else { p2.saturating_add(p1) };
            p1 = 0;
        }
    } else if p1 > 0 {
        p1 -= 1;
    } else if p2 > 0 {
        p2 -= 1;
    }
    if p2 < 0 {
        if p2 < p1.saturating_neg() {
            p2 = p1;
        } else {
            p2 = p2.saturating_neg();
        }
        p1 -= p2;
    }
    match blob_bytes {
        Some(b) => {
            let (start, count) = if p1 >= len {
                (0, 0)
            } else {
                (p1, p2.min(len - p1))
            };
            Ok(Value::Blob(Arc::from(
                &b[start as usize..(start + count.max(0)) as usize],
            )))
        }
        None => {
            let mut it = text.char_indices();
            let start = match it.by_ref().nth(p1 as usize) {
                Some((i, _)) => i,
                None => text.len(),
            };
            let rest = &text[start..];
            let end = rest
                .char_indices()
                .nth(p2 as usize)
                .map_or(rest.len(), |(i, _)| i);
            Ok(Value::Text(Arc::from(&rest[..end])))
        }
    }
}

pub fn typeof_fn(_: &Ctx, args: &[Value]) -> Result<Value> {
    Ok(Value::text(arg(args, 0).type_name()))
}

/// `subtype(X)`: parlite has no subtypes (no JSON subtype yet): 0.
pub fn subtype(_: &Ctx, _: &[Value]) -> Result<Value> {
    Ok(Value::Integer(0))
}

/// `unhex(X [, Y])`: pairs of hex digits to a blob; characters of Y may appear between
/// pairs; anything else gives NULL.
pub fn unhex(_: &Ctx, args: &[Value]) -> Result<Value> {
    let Some(hex) = arg(args, 0).to_text() else {
        return Ok(Value::Null);
    };
    let pass_text;
    let pass: &str = if args.len() >= 2 {
        let Some(p) = arg(args, 1).to_text() else {
            return Ok(Value::Null);
        };
        pass_text = p;
        &pass_text
    } else {
        ""
    };
    let z = until_nul(&hex);
    let bytes = z.as_bytes();
    let mut out = Vec::with_capacity(bytes.len() / 2);
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if !c.is_ascii_hexdigit() {
            let ch = z[i..].chars().next().unwrap_or('\0');
            if !pass.contains(ch) {
                return Ok(Value::Null);
            }
            i += ch.len_utf8();
            continue;
        }
        let Some(&d) = bytes.get(i + 1) else {
            return Ok(Value::Null);
        };
        if !d.is_ascii_hexdigit() {
            return Ok(Value::Null);
        }
        out.push((hex_val(c) << 4) | hex_val(d));
        i += 2;
    }
    Ok(Value::Blob(Arc::from(out)))
}

/// The value of an ASCII hex digit (0 for anything else).
pub(crate) fn hex_digit_value(c: u8) -> u8 {
    hex_val(c)
}

fn hex_val(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        b'A'..=b'F' => c - b'A' + 10,
        _ => 0,
    }
}

/// `unicode(X)`: code point of the first character; NULL for empty text. Blob bytes are
/// decoded with SQLite's lenient UTF-8 reader, so invalid bytes give what SQLite gives.
pub fn unicode(_: &Ctx, args: &[Value]) -> Result<Value> {
    let Some(bytes) = arg(args, 0).to_bytes() else {
        return Ok(Value::Null);
    };
    match bytes.first() {
        None | Some(0) => Ok(Value::Null),
        Some(_) => Ok(Value::Integer(i64::from(super::utf8::read(&bytes).0))),
    }
}

/// `unistr(X)`: decodes \XXXX, \+XXXXXX, \uXXXX, \UXXXXXXXX and \\ escapes.
pub fn unistr(_: &Ctx, args: &[Value]) -> Result<Value> {
    let Some(t) = arg(args, 0).to_text() else {
        return Ok(Value::Null);
    };
    let bad = || SqlError::msg("invalid Unicode escape");
    let b = t.as_bytes();
    let mut out = String::with_capacity(t.len());
    let mut i = 0;
    let hexn = |at: usize, n: usize| -> Option<u32> {
        let s = b.get(at..at + n)?;
        if !s.iter().all(u8::is_ascii_hexdigit) {
            return None;
        }
        Some(
            s.iter()
                .fold(0u32, |v, &c| (v << 4) | u32::from(hex_val(c))),
        )
    };
    while i < b.len() {
        let Some(off) = t[i..].find('\\') else {
            out.push_str(&t[i..]);
            break;
        };
        out.push_str(&t[i..i + off]);
        i += off;
        let next = b.get(i + 1).copied().unwrap_or(0);
        let (v, adv) = if next == b'\\' {
            out.push('\\');
            i += 2;
            continue;
        } else if next.is_ascii_hexdigit() {
            (hexn(i + 1, 4).ok_or_else(bad)?, 5)
        } else if next == b'+' {
            (hexn(i + 2, 6).ok_or_else(bad)?, 8)
        } else if next == b'u' {
            (hexn(i + 2, 4).ok_or_else(bad)?, 6)
        } else if next == b'U' {
            (hexn(i + 2, 8).ok_or_else(bad)?, 10)
        } else {
            return Err(bad());
        };
        out.push(char::from_u32(v).unwrap_or('\u{fffd}'));
        i += adv;
    }
    text_result(out)
}

/// `zeroblob(N)`: N zero bytes (negative N gives an empty blob).
pub fn zeroblob(_: &Ctx, args: &[Value]) -> Result<Value> {
    let n = arg(args, 0).to_i64().max(0);
    if n as u64 > MAX_LENGTH_BYTES as u64 {
        return Err(SqlError::TooBig);
    }
    Ok(Value::Blob(Arc::from(vec![0u8; n as usize])))
}

/// `concat(X, ...)`: the text of the non-NULL arguments joined; never NULL.
pub fn concat(_: &Ctx, args: &[Value]) -> Result<Value> {
    concat_core(args, "")
}

/// `concat_ws(SEP, X, ...)`: NULL when SEP is NULL. As in SQLite, the separator is only
/// written once the output is non-empty (an empty first value adds no separator).
pub fn concat_ws(_: &Ctx, args: &[Value]) -> Result<Value> {
    let Some(sep) = arg(args, 0).to_text() else {
        return Ok(Value::Null);
    };
    concat_core(args.get(1..).unwrap_or(&[]), &sep)
}

fn concat_core(args: &[Value], sep: &str) -> Result<Value> {
    let mut s = String::new();
    for a in args {
        if let Some(t) = a.to_text() {
            if !s.is_empty() && !sep.is_empty() {
                s.push_str(sep);
            }
            if s.len() + t.len() > MAX_LENGTH_BYTES {
                return Err(SqlError::TooBig);
            }
            s.push_str(&t);
        }
    }
    Ok(Value::Text(Arc::from(s)))
}
