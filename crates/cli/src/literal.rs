//! Values and names written as SQL text, as sqlite3 3.40's shell writes them in `.dump` and
//! in the insert, quote, json and qbox modes (shell.c `output_quoted_string`,
//! `output_quoted_escaped_string`, `output_hex_blob`, `output_json_string`, `quoteChar`,
//! `quoted_column`). The dump's text must read back, in stock sqlite3 and in parlite, as
//! the same values: every REAL's text parses to the same double, text keeps its bytes
//! (newlines and carriage returns travel through `replace(...)` so the statement stays on
//! one line), blobs are hex.
//!
//! Text is handled as the C shell sees it, a NUL-terminated string: bytes after a NUL in a
//! TEXT value are not printed (sqlite3 drops them too).

use crate::backend::Cell;
use crate::fp80::format_g20;
use parlite_sql::parse::display::Ident;

/// A name as `quoteChar` leaves it: bare when it is a plain word and no keyword, else in
/// double quotes (shell.c `set_table_name`, the dump's column lists).
pub fn name(s: &str) -> String {
    Ident(s).to_string()
}

/// The bytes of a TEXT value up to its first NUL.
fn c_text(v: &[u8]) -> &[u8] {
    match v.iter().position(|&b| b == 0) {
        Some(n) => &v[..n],
        None => v,
    }
}

/// `'...'` with quotes doubled; newlines stay raw (`output_quoted_string`, quote mode).
pub fn push_quoted(out: &mut Vec<u8>, v: &[u8]) {
    out.push(b'\'');
    for &b in c_text(v) {
        out.push(b);
        if b == b'\'' {
            out.push(b'\'');
        }
    }
    out.push(b'\'');
}

/// `output_quoted_escaped_string` (insert mode, `.dump`): as `push_quoted`, but a newline or
/// carriage return is written as an escape that a `replace()` around the literal turns back
/// into the character, the escape chosen not to occur in the text.
pub fn push_quoted_escaped(out: &mut Vec<u8>, v: &[u8]) {
    let v = c_text(v);
    let has = |b: u8| v.contains(&b);
    if !has(b'\n') && !has(b'\r') {
        return push_quoted(out, v);
    }
    let nl = has(b'\n').then(|| unused_string(v, "\\n", "\\012"));
    let cr = has(b'\r').then(|| unused_string(v, "\\r", "\\015"));
    if nl.is_some() {
        out.extend_from_slice(b"replace(");
    }
    if cr.is_some() {
        out.extend_from_slice(b"replace(");
    }
    out.push(b'\'');
    for &b in v {
        match b {
            b'\n' => out.extend_from_slice(nl.as_deref().unwrap_or_default().as_bytes()),
            b'\r' => out.extend_from_slice(cr.as_deref().unwrap_or_default().as_bytes()),
            b'\'' => out.extend_from_slice(b"''"),
            _ => out.push(b),
        }
    }
    out.push(b'\'');
    if let Some(cr) = &cr {
        out.extend_from_slice(format!(",'{cr}',char(13))").as_bytes());
    }
    if let Some(nl) = &nl {
        out.extend_from_slice(format!(",'{nl}',char(10))").as_bytes());
    }
}

/// shell.c `unused_string`: `a`, else `b`, else `(aN)` for the first N not in `text`.
fn unused_string(text: &[u8], a: &str, b: &str) -> String {
    let absent = |s: &str| !text.windows(s.len()).any(|w| w == s.as_bytes());
    if absent(a) {
        return a.to_string();
    }
    if absent(b) {
        return b.to_string();
    }
    (0u32..)
        .map(|i| format!("({a}{i})"))
        .find(|s| absent(s))
        .unwrap_or_default()
}

/// `X'..'` in lower-case hex (`output_hex_blob`).
pub fn push_hex_blob(out: &mut Vec<u8>, v: &[u8]) {
    out.extend_from_slice(b"X'");
    push_hex(out, v);
    out.push(b'\'');
}

fn push_hex(out: &mut Vec<u8>, v: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for &b in v {
        out.push(HEX[usize::from(b >> 4)]);
        out.push(HEX[usize::from(b & 15)]);
    }
}

/// C's `(sqlite3_int64)r` on x86-64: out of range (and NaN) gives the "integer indefinite"
/// value i64::MIN, where Rust's `as` would saturate.
fn c_real_to_int(r: f64) -> i64 {
    let limit = -(i64::MIN as f64);
    if (-limit..limit).contains(&r) {
        r as i64
    } else {
        i64::MIN
    }
}

/// A REAL in insert mode and `.dump`: `N.0` for an integral value, ±`1e999` for the
/// infinities, else `%!.20g` (always enough digits to read back as the same double).
pub fn insert_real(r: f64) -> String {
    if r.is_infinite() {
        return if r > 0.0 { "1e999" } else { "-1e999" }.to_string();
    }
    let i = c_real_to_int(r);
    if r == i as f64 {
        format!("{i}.0")
    } else {
        format_g20(r)
    }
}

/// One value of an `INSERT INTO t VALUES(...)` (insert mode, `.dump`).
pub fn push_insert_value(out: &mut Vec<u8>, cell: &Cell) {
    match cell {
        Cell::Null => out.extend_from_slice(b"NULL"),
        Cell::Integer(i) => out.extend_from_slice(i.to_string().as_bytes()),
        Cell::Real(r) => out.extend_from_slice(insert_real(*r).as_bytes()),
        Cell::Text(t) => push_quoted_escaped(out, t),
        Cell::Blob(b) => push_hex_blob(out, b),
    }
}

/// One value in quote mode: as insert mode's, but text keeps raw newlines and a REAL is
/// always `%!.20g` (`Inf` for infinity).
pub fn push_quote_mode_value(out: &mut Vec<u8>, cell: &Cell) {
    match cell {
        Cell::Real(r) => out.extend_from_slice(format_g20(*r).as_bytes()),
        Cell::Text(t) => push_quoted(out, t),
        other => push_insert_value(out, other),
    }
}

/// A value as qbox shows it (shell.c `quoted_column`): numbers as their text, text in
/// quotes, blobs `x'..'`, NULL as `NULL`.
pub fn quoted_column(cell: &Cell) -> Vec<u8> {
    let mut out = Vec::new();
    match cell {
        Cell::Null => out.extend_from_slice(b"NULL"),
        Cell::Integer(_) | Cell::Real(_) => out = cell.text().unwrap_or_default(),
        Cell::Text(t) => push_quoted(&mut out, t),
        Cell::Blob(b) => {
            out.extend_from_slice(b"x'");
            push_hex(&mut out, b);
            out.push(b'\'');
        }
    }
    out
}

/// `output_json_string`: `"..."` with `\` and `"` escaped and control bytes as `\b \f \n
/// \r \t` or `\u00XX`; other bytes (UTF-8 or not) pass through.
pub fn push_json_string(out: &mut Vec<u8>, v: &[u8]) {
    out.push(b'"');
    for &b in v {
        match b {
            b'\\' | b'"' => out.extend_from_slice(&[b'\\', b]),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0..=0x1f => out.extend_from_slice(format!("\\u{b:04x}").as_bytes()),
            _ => out.push(b),
        }
    }
    out.push(b'"');
}

/// One value in json mode: numbers bare (REALs `%!.20g`, infinities ±`1e999`), text as a
/// JSON string, a blob's bytes as a JSON string.
pub fn push_json_value(out: &mut Vec<u8>, cell: &Cell) {
    match cell {
        Cell::Null => out.extend_from_slice(b"null"),
        Cell::Integer(i) => out.extend_from_slice(i.to_string().as_bytes()),
        Cell::Real(r) if r.is_infinite() => out.extend_from_slice(insert_real(*r).as_bytes()),
        Cell::Real(r) => out.extend_from_slice(format_g20(*r).as_bytes()),
        Cell::Text(t) => push_json_string(out, c_text(t)),
        Cell::Blob(b) => push_json_string(out, b),
    }
}

/// `output_html_string`: `< & > " '` as entities.
pub fn push_html(out: &mut Vec<u8>, v: &[u8]) {
    for &b in v {
        match b {
            b'<' => out.extend_from_slice(b"&lt;"),
            b'&' => out.extend_from_slice(b"&amp;"),
            b'>' => out.extend_from_slice(b"&gt;"),
            b'"' => out.extend_from_slice(b"&quot;"),
            b'\'' => out.extend_from_slice(b"&#39;"),
            _ => out.push(b),
        }
    }
}

/// `output_c_string` (`.show`, tcl mode): `"..."` with `\\ \" \t \n \r` escaped and every
/// other byte outside printable ASCII in octal.
pub fn c_string(v: &str) -> String {
    let mut out = Vec::new();
    push_c_string(&mut out, v.as_bytes());
    String::from_utf8_lossy(&out).into_owned()
}

pub fn push_c_string(out: &mut Vec<u8>, v: &[u8]) {
    out.push(b'"');
    for &b in v {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'"' => out.extend_from_slice(b"\\\""),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            0x20..=0x7e => out.push(b),
            _ => out.extend_from_slice(format!("\\{b:03o}").as_bytes()),
        }
    }
    out.push(b'"');
}
