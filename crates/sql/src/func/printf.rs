//! `printf()` / `format()`: SQLite's own printf (printf.html), not C's.
//!
//! Differences from C that matter: `%q`/`%Q`/`%w` SQL quoting, `%!` (alternate form 2:
//! 26 significant digits for reals, character-counted width and precision for strings),
//! `%,d` thousands separators, `%r` ordinals, missing arguments read as 0/""/NULL, an
//! unknown conversion stops the output, and real rounding done on the decimal digit string
//! (see `value::num::fp_decode`). Arguments are converted the way the C API converts
//! them (`%d` of 'abc' is 0, `%s` of 1.5 is "1.5").
//!
//! Invariants: output never exceeds [`MAX_LENGTH_BYTES`]; a format that would (huge width
//! or precision) yields NULL without allocating, as SQLite's accumulator does on
//! SQLITE_TOOBIG. Text is assembled as bytes because `%.Ns` may cut a UTF-8 sequence, as
//! in SQLite; the result is converted lossily at the end (value invariant 2).

// `u64::is_multiple_of` is newer than the workspace's minimum Rust version (1.80).
#![allow(clippy::manual_is_multiple_of)]

use crate::value::num::{format_float, FloatFormat, FloatStyle};
use crate::value::{Value, MAX_LENGTH_BYTES};
use std::borrow::Cow;

/// Arguments consumed left to right; exhausted arguments read as 0 / 0.0 / NULL.
struct Args<'a> {
    values: &'a [Value],
    used: usize,
}

impl<'a> Args<'a> {
    fn next(&mut self) -> Option<&'a Value> {
        let v = self.values.get(self.used);
        if v.is_some() {
            self.used += 1;
        }
        v
    }
    fn int(&mut self) -> i64 {
        self.next().map_or(0, Value::to_i64)
    }
    fn double(&mut self) -> f64 {
        self.next().map_or(0.0, Value::to_f64)
    }
    fn text(&mut self) -> Option<Cow<'a, [u8]>> {
        self.next().and_then(|v| match v {
            Value::Null => None,
            Value::Text(s) => Some(Cow::Borrowed(s.as_bytes())),
            Value::Blob(b) => Some(Cow::Borrowed(&b[..])),
            other => other
                .to_text()
                .map(|t| Cow::Owned(t.into_owned().into_bytes())),
        })
    }
}

/// The output accumulator; `too_big` latches like SQLite's accError.
struct Out {
    buf: Vec<u8>,
    too_big: bool,
}

impl Out {
    fn room(&mut self, n: usize) -> bool {
        if self.too_big || self.buf.len().saturating_add(n) > MAX_LENGTH_BYTES {
            self.too_big = true;
            return false;
        }
        true
    }
    fn push(&mut self, s: &[u8]) {
        if self.room(s.len()) {
            self.buf.extend_from_slice(s);
        }
    }
    fn pad(&mut self, n: usize, c: u8) {
        if self.room(n) {
            self.buf.resize(self.buf.len() + n, c);
        }
    }
}

/// `printf(format, args...)`: NULL when the format is NULL or the result would be too big.
pub fn sql_printf(args: &[Value]) -> Value {
    let Some(fmt) = args.first() else {
        return Value::Null;
    };
    let fmt_bytes: Cow<[u8]> = match fmt {
        Value::Null => return Value::Null,
        Value::Text(s) => Cow::Borrowed(s.as_bytes()),
        Value::Blob(b) => Cow::Borrowed(&b[..]),
        other => match other.to_text() {
            Some(t) => Cow::Owned(t.into_owned().into_bytes()),
            None => return Value::Null,
        },
    };
    match format_bytes(&fmt_bytes, &args[1..]) {
        Some(bytes) => Value::text_from_bytes(&bytes),
        None => Value::Null,
    }
}

/// Formats; None on SQLITE_TOOBIG.
pub fn format_bytes(fmt: &[u8], values: &[Value]) -> Option<Vec<u8>> {
    let mut out = Out {
        buf: Vec::with_capacity(fmt.len() + 16),
        too_big: false,
    };
    let mut args = Args { values, used: 0 };
    // A C string: the format ends at its first NUL.
    let fmt = match fmt.iter().position(|&b| b == 0) {
        Some(n) => &fmt[..n],
        None => fmt,
    };
    let at = |i: usize| -> u8 { fmt.get(i).copied().unwrap_or(0) };
    let mut i = 0usize;
    while i < fmt.len() {
        if fmt[i] != b'%' {
            let start = i;
            while i < fmt.len() && fmt[i] != b'%' {
                i += 1;
            }
            out.push(&fmt[start..i]);
            continue;
        }
        i += 1;
        let mut c = at(i);
        if c == 0 {
            out.push(b"%");
            break;
        }
        let mut left = false;
        let mut prefix_flag: Option<u8> = None;
        let mut alt = false;
        let mut alt2 = false;
        let mut zero_pad = false;
        let mut thousands = false;
        let mut width: i64 = 0;
        let mut precision: i64 = -1;
        loop {
            let mut done = false;
            match c {
                b'-' => left = true,
                b'+' => prefix_flag = Some(b'+'),
                b' ' => prefix_flag = Some(b' '),
                b'#' => alt = true,
                b'!' => alt2 = true,
                b'0' => zero_pad = true,
                b',' => thousands = true,
                b'l' => {
                    i += 1;
                    c = at(i);
                    if c == b'l' {
                        i += 1;
                        c = at(i);
                    }
                    done = true;
                }
                b'1'..=b'9' => {
                    let mut wx: u32 = u32::from(c - b'0');
                    loop {
                        i += 1;
                        c = at(i);
                        if !c.is_ascii_digit() {
                            break;
                        }
                        wx = wx.wrapping_mul(10).wrapping_add(u32::from(c - b'0'));
                    }
                    width = i64::from(wx & 0x7fff_ffff);
                    if c != b'.' && c != b'l' {
                        done = true;
                    } else {
                        i -= 1;
                    }
                }
                b'*' => {
                    let w = args.int() as i32;
                    if w < 0 {
                        left = true;
                        width = if w >= -2147483647 { -i64::from(w) } else { 0 };
                    } else {
                        width = i64::from(w);
                    }
                    let next = at(i + 1);
                    if next != b'.' && next != b'l' {
                        i += 1;
                        c = at(i);
                        done = true;
                    }
                }
                b'.' => {
                    i += 1;
                    c = at(i);
                    if c == b'*' {
                        let p = args.int() as i32;
                        precision = if p < 0 {
                            if p >= -2147483647 {
                                -i64::from(p)
                            } else {
                                -1
                            }
                        } else {
                            i64::from(p)
                        };
                        i += 1;
                        c = at(i);
                    } else {
                        let mut px: u32 = 0;
                        while c.is_ascii_digit() {
                            px = px.wrapping_mul(10).wrapping_add(u32::from(c - b'0'));
                            i += 1;
                            c = at(i);
                        }
                        precision = i64::from(px & 0x7fff_ffff);
                    }
                    if c == b'l' {
                        i -= 1;
                    } else {
                        done = true;
                    }
                }
                _ => done = true,
            }
            if done {
                break;
            }
            i += 1;
            c = at(i);
            if c == 0 {
                break;
            }
        }
        // `i` now indexes the conversion character `c`; the next literal run starts after.
        i += 1;
        let mut spec = Spec {
            left,
            width,
            precision,
            alt,
            alt2,
            zero_pad,
            thousands,
            prefix_flag,
        };
        let body: Vec<u8> = match c {
            b'd' | b'i' => render_int(&mut out, &mut spec, args.int(), true, 10, false, None, b""),
            b'u' => render_int(&mut out, &mut spec, args.int(), false, 10, false, None, b""),
            b'x' => render_int(
                &mut out,
                &mut spec,
                args.int(),
                false,
                16,
                false,
                Some(b"0x"),
                b"",
            ),
            b'X' => render_int(
                &mut out,
                &mut spec,
                args.int(),
                false,
                16,
                true,
                Some(b"0X"),
                b"",
            ),
            b'o' => render_int(
                &mut out,
                &mut spec,
                args.int(),
                false,
                8,
                false,
                Some(b"0"),
                b"",
            ),
            // %p: upper-case digits behind a lower-case "0x", as SQLite's table has it.
            b'p' => render_int(
                &mut out,
                &mut spec,
                args.int(),
                false,
                16,
                true,
                Some(b"0x"),
                b"",
            ),
            b'r' => render_ordinal(&mut out, &mut spec, args.int()),
            b'f' | b'e' | b'E' | b'g' | b'G' => {
                let style = match c {
                    b'f' => FloatStyle::Fixed,
                    b'e' | b'E' => FloatStyle::Exp,
                    _ => FloatStyle::General,
                };
                let r = args.double();
                render_float(&mut out, &spec, r, style, c == b'E' || c == b'G')
            }
            b'n' => {
                spec.width = 0;
                Vec::new()
            }
            b'%' => b"%".to_vec(),
            b'c' => render_char(&mut out, &mut spec, args.text()),
            b's' | b'z' => render_string(&mut spec, args.text()),
            b'q' | b'Q' | b'w' => render_escape(&mut spec, c, args.text()),
            // Unknown conversions (and SQLite's internal %T/%S) end the output here.
            _ => break,
        };
        if out.too_big {
            return None;
        }
        emit_padded(&mut out, &spec, &body);
        if out.too_big {
            return None;
        }
    }
    if out.too_big {
        None
    } else {
        Some(out.buf)
    }
}

struct Spec {
    left: bool,
    width: i64,
    precision: i64,
    alt: bool,
    alt2: bool,
    zero_pad: bool,
    thousands: bool,
    prefix_flag: Option<u8>,
}

fn emit_padded(out: &mut Out, spec: &Spec, body: &[u8]) {
    let pad = spec.width - body.len() as i64;
    if pad > 0 {
        let pad = pad as usize;
        if !spec.left {
            out.pad(pad, b' ');
        }
        out.push(body);
        if spec.left {
            out.pad(pad, b' ');
        }
    } else {
        out.push(body);
    }
}

/// %d %i %u %x %X %o %p: digits, zero padding up to the precision (or the width under `0`),
/// thousands separators (decimal only), sign and `#` prefix.
#[allow(clippy::too_many_arguments)]
fn render_int(
    out: &mut Out,
    spec: &mut Spec,
    v: i64,
    signed: bool,
    base: u64,
    upper: bool,
    alt_prefix: Option<&[u8]>,
    suffix: &[u8],
) -> Vec<u8> {
    // Only %d %i %u take thousands separators (not %x %o %p %r).
    let thousands = spec.thousands && base == 10 && suffix.is_empty();
    let (mut value, prefix) = if signed {
        if v < 0 {
            (v.unsigned_abs(), Some(b'-'))
        } else {
            (v as u64, spec.prefix_flag)
        }
    } else {
        (v as u64, None)
    };
    let alt = spec.alt && value != 0;
    let mut precision = spec.precision;
    if spec.zero_pad && precision < spec.width - i64::from(prefix.is_some()) {
        precision = spec.width - i64::from(prefix.is_some());
    }
    let needed = precision.max(0) as usize + 30;
    if !out.room(needed.saturating_mul(if thousands { 2 } else { 1 })) {
        return Vec::new();
    }
    let digits: &[u8; 16] = if upper {
        b"0123456789ABCDEF"
    } else {
        b"0123456789abcdef"
    };
    let mut rev: Vec<u8> = Vec::with_capacity(needed);
    loop {
        rev.push(digits[(value % base) as usize]);
        value /= base;
        if value == 0 {
            break;
        }
    }
    // The ordinal suffix counts toward the zero-padded length, as in SQLite.
    while ((rev.len() + suffix.len()) as i64) < precision {
        rev.push(b'0');
    }
    let mut body: Vec<u8> = Vec::with_capacity(rev.len() + rev.len() / 3 + 4);
    if alt {
        if let Some(p) = alt_prefix {
            body.extend_from_slice(p);
        }
    }
    if let Some(p) = prefix {
        body.push(p);
    }
    let n = rev.len();
    for (k, &d) in rev.iter().rev().enumerate() {
        body.push(d);
        let remaining = n - 1 - k;
        if thousands && remaining > 0 && remaining % 3 == 0 {
            body.push(b',');
        }
    }
    body.extend_from_slice(suffix);
    body
}

/// %r: "1st", "2nd", "11th"...
fn render_ordinal(out: &mut Out, spec: &mut Spec, v: i64) -> Vec<u8> {
    let mag = v.unsigned_abs();
    let mut x = (mag % 10) as usize;
    if x >= 4 || (mag / 10) % 10 == 1 {
        x = 0;
    }
    const ORD: &[u8; 8] = b"thstndrd";
    render_int(out, spec, v, true, 10, false, None, &ORD[x * 2..x * 2 + 2])
}

fn render_float(out: &mut Out, spec: &Spec, r: f64, style: FloatStyle, upper: bool) -> Vec<u8> {
    let precision = if spec.precision < 0 {
        -1
    } else {
        spec.precision.min(i64::from(i32::MAX))
    };
    let e2 = if r.is_finite() && r != 0.0 {
        r.abs().log10().max(0.0) as i64
    } else {
        0
    };
    let needed = precision.max(0) + e2 + 30;
    if !out.room(needed.max(0) as usize) {
        return Vec::new();
    }
    let mut s = String::new();
    format_float(
        &mut s,
        r,
        &FloatFormat {
            style,
            precision: precision as i32,
            alternate: spec.alt,
            alt2: spec.alt2,
            sign_char: spec.prefix_flag,
            zero_pad: spec.zero_pad,
            thousands: spec.thousands,
            upper,
        },
    );
    let mut body = s.into_bytes();
    // Zero padding goes between the sign and the digits ("NaN"/"Inf" are not padded).
    let numeric = body
        .first()
        .is_some_and(|b| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b' '))
        && !body.ends_with(b"Inf")
        && body != b"null";
    if spec.zero_pad && !spec.left && (body.len() as i64) < spec.width && numeric {
        let pad = (spec.width - body.len() as i64) as usize;
        if !out.room(spec.width as usize) {
            return Vec::new();
        }
        let sign_len = usize::from(matches!(body.first(), Some(b'-' | b'+' | b' ')));
        let mut padded = Vec::with_capacity(spec.width as usize);
        padded.extend_from_slice(&body[..sign_len]);
        padded.resize(sign_len + pad, b'0');
        padded.extend_from_slice(&body[sign_len..]);
        body = padded;
    }
    body
}

/// %c: the first character of the argument's text, repeated `precision` times.
fn render_char(out: &mut Out, spec: &mut Spec, arg: Option<Cow<[u8]>>) -> Vec<u8> {
    let mut ch: Vec<u8> = Vec::with_capacity(4);
    match arg.as_deref() {
        Some(t) if !t.is_empty() => {
            ch.push(t[0]);
            if t[0] & 0xc0 == 0xc0 {
                let mut k = 1;
                while ch.len() < 4 && k < t.len() && t[k] & 0xc0 == 0x80 {
                    ch.push(t[k]);
                    k += 1;
                }
            }
        }
        // SQLite emits a NUL byte for an empty or NULL argument.
        _ => ch.push(0),
    }
    // As SQLite: all but the last copy go out directly (after left padding computed in
    // characters); the last copy is padded like any field, its width widened by its
    // UTF-8 continuation bytes.
    if spec.precision > 1 {
        let copies = (spec.precision - 1) as usize;
        if !out.room(copies.saturating_mul(ch.len())) {
            return Vec::new();
        }
        spec.width -= spec.precision - 1;
        if spec.width > 1 && !spec.left {
            out.pad((spec.width - 1) as usize, b' ');
            spec.width = 0;
        }
        for _ in 0..copies {
            out.push(&ch);
        }
    }
    adjust_width_for_utf8(spec, &ch, true);
    ch
}

/// %s / %z: the text, cut to `precision` bytes (characters under `!`).
fn render_string(spec: &mut Spec, arg: Option<Cow<[u8]>>) -> Vec<u8> {
    let text: &[u8] = arg.as_deref().unwrap_or(b"");
    // C string semantics: the argument ends at its first NUL.
    let text = match text.iter().position(|&b| b == 0) {
        Some(n) => &text[..n],
        None => text,
    };
    let len = if spec.precision >= 0 {
        if spec.alt2 {
            utf8_prefix_len(text, spec.precision as usize)
        } else {
            text.len().min(spec.precision as usize)
        }
    } else {
        text.len()
    };
    let body = text[..len].to_vec();
    adjust_width_for_utf8(spec, &body, spec.alt2);
    body
}

/// Byte length of the first `chars` UTF-8 characters of `s`.
fn utf8_prefix_len(s: &[u8], chars: usize) -> usize {
    let mut i = 0;
    let mut n = 0;
    while n < chars && i < s.len() {
        i += 1;
        if s[i - 1] >= 0xc0 {
            while i < s.len() && s[i] & 0xc0 == 0x80 {
                i += 1;
            }
        }
        n += 1;
    }
    i
}

fn adjust_width_for_utf8(spec: &mut Spec, body: &[u8], chars: bool) {
    if chars && spec.width > 0 {
        spec.width += body.iter().filter(|&&b| b & 0xc0 == 0x80).count() as i64;
    }
}

/// %q (double single quotes), %Q (also wrap in quotes; NULL → NULL), %w (double `"`).
/// `#` adds unistr()-style escapes for control characters.
fn render_escape(spec: &mut Spec, conv: u8, arg: Option<Cow<[u8]>>) -> Vec<u8> {
    let (text, mut need_quote): (&[u8], u8) = match arg.as_deref() {
        None => (if conv == b'Q' { b"NULL" } else { b"(NULL)" }, 0),
        Some(t) => (t, u8::from(conv == b'Q')),
    };
    let text = match text.iter().position(|&b| b == 0) {
        Some(n) => &text[..n],
        None => text,
    };
    let q = if conv == b'w' { b'"' } else { b'\'' };
    let mut alt = spec.alt && conv != b'w';
    // Precision counts input bytes (characters under `!`).
    let mut k = spec.precision;
    let mut i = 0usize;
    while k != 0 && i < text.len() {
        if spec.alt2 && text[i] & 0xc0 == 0xc0 {
            while i + 1 < text.len() && text[i + 1] & 0xc0 == 0x80 {
                i += 1;
            }
        }
        i += 1;
        k -= 1;
    }
    let src = &text[..i];
    if alt {
        let n_ctrl = src.iter().filter(|&&b| b <= 0x1f).count();
        if n_ctrl > 0 || conv == b'q' {
            if conv == b'Q' {
                need_quote = 2;
            }
        } else {
            alt = false;
        }
    }
    let mut body = Vec::with_capacity(src.len() + 12);
    match need_quote {
        2 => body.extend_from_slice(b"unistr('"),
        1 => body.push(b'\''),
        _ => {}
    }
    for &ch in src {
        if alt {
            if ch == q {
                body.push(ch);
                body.push(ch);
            } else if ch == b'\\' {
                body.extend_from_slice(b"\\\\");
            } else if ch <= 0x1f {
                body.extend_from_slice(b"\\u00");
                body.push(if ch >= 0x10 { b'1' } else { b'0' });
                body.push(b"0123456789abcdef"[usize::from(ch & 0xf)]);
            } else {
                body.push(ch);
            }
        } else {
            body.push(ch);
            if ch == q {
                body.push(ch);
            }
        }
    }
    match need_quote {
        2 => body.extend_from_slice(b"')"),
        1 => body.push(b'\''),
        _ => {}
    }
    adjust_width_for_utf8(spec, &body, spec.alt2);
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(fmt: &str, args: &[Value]) -> String {
        let mut all = vec![Value::from(fmt)];
        all.extend_from_slice(args);
        match sql_printf(&all) {
            Value::Text(s) => s.to_string(),
            other => format!("{other:?}"),
        }
    }

    #[test]
    fn basics() {
        assert_eq!(
            f(
                "%d|%5d|%-5d|%05d",
                &[1.into(), 2.into(), 3.into(), 4.into()]
            ),
            "1|    2|3    |00004"
        );
        assert_eq!(
            f(
                "%x %X %#x %o",
                &[255.into(), 255.into(), 255.into(), 8.into()]
            ),
            "ff FF 0xff 10"
        );
        assert_eq!(f("%,d", &[1234567.into()]), "1,234,567");
        assert_eq!(
            f(
                "%.2f %e %g",
                &[1.23456.into(), 1234.5.into(), 0.0001.into()]
            ),
            "1.23 1.234500e+03 0.0001"
        );
        assert_eq!(
            f(
                "%q|%Q|%Q|%w",
                &["it's".into(), "a'b".into(), Value::Null, "x\"y".into()]
            ),
            "it''s|'a''b'|NULL|x\"\"y"
        );
        assert_eq!(f("%s and %s", &["a".into()]), "a and ");
        assert_eq!(f("%d%%", &[50.into()]), "50%");
        assert_eq!(
            f("%r %r %r %r", &[1.into(), 2.into(), 13.into(), 23.into()]),
            "1st 2nd 13th 23rd"
        );
        assert_eq!(f("abc%", &[]), "abc%");
        assert_eq!(f("a%yb", &[]), "a");
        assert_eq!(f("%c%c", &["xyz".into()]), "x\0");
        assert_eq!(f("%.3c", &["é".into()]), "ééé");
        assert_eq!(f("%2000000000d", &[1.into()]), "NULL");
    }
}
