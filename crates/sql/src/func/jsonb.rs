//! SQLite's JSONB binary format (jsonb.html), to and from the JSON tree of [`super::json`].
//!
//! An element is a header and a payload. The header's low nibble is the element type
//! (NULL 0 ... OBJECT 12; 13-15 reserved) and its high nibble the payload size: 0-11
//! inline, 12/13/14/15 for a size in the next 1/2/4/8 bytes (big-endian). Scalars'
//! payloads are their literal text as written (so the tree's kinds map one to one onto
//! the element types); containers' payloads are their elements, an object's alternating
//! key and value.
//!
//! Encoding uses the smallest header for each payload, as SQLite does when it converts
//! text (`jsonBlobChangePayloadSize`), so `hex(jsonb(X))` equals SQLite's.
//!
//! Invariant: decoding never recurses past [`JSON_MAX_DEPTH`] nor reads past the blob.

use super::json::{is_ok, Node, NumKind, StrKind, JSON_MAX_DEPTH};

const NULL: u8 = 0;
const TRUE: u8 = 1;
const FALSE: u8 = 2;
const INT: u8 = 3;
const INT5: u8 = 4;
const FLOAT: u8 = 5;
const FLOAT5: u8 = 6;
const TEXT: u8 = 7;
const TEXTJ: u8 = 8;
const TEXT5: u8 = 9;
const TEXTRAW: u8 = 10;
const ARRAY: u8 = 11;
const OBJECT: u8 = 12;

/// The JSONB encoding of a tree.
pub(super) fn encode(n: &Node) -> Vec<u8> {
    let mut out = Vec::new();
    encode_into(n, &mut out);
    out
}

fn encode_into(n: &Node, out: &mut Vec<u8>) {
    match n {
        Node::Null => out.push(NULL),
        Node::True => out.push(TRUE),
        Node::False => out.push(FALSE),
        Node::Num(kind, t) => {
            let ty = match kind {
                NumKind::Int => INT,
                NumKind::Int5 => INT5,
                NumKind::Float => FLOAT,
                NumKind::Float5 => FLOAT5,
            };
            push_header(out, ty, t.len());
            out.extend_from_slice(t.as_bytes());
        }
        Node::Str(kind, raw) => {
            let ty = match kind {
                StrKind::Text => TEXT,
                StrKind::TextJ => TEXTJ,
                StrKind::Text5 => TEXT5,
                StrKind::TextRaw => TEXTRAW,
            };
            push_header(out, ty, raw.len());
            out.extend_from_slice(raw.as_bytes());
        }
        Node::Array(items) => {
            let mut body = Vec::new();
            for it in items {
                encode_into(it, &mut body);
            }
            push_header(out, ARRAY, body.len());
            out.extend_from_slice(&body);
        }
        Node::Object(members) => {
            let mut body = Vec::new();
            for (k, v) in members {
                encode_into(k, &mut body);
                encode_into(v, &mut body);
            }
            push_header(out, OBJECT, body.len());
            out.extend_from_slice(&body);
        }
    }
}

fn push_header(out: &mut Vec<u8>, ty: u8, size: usize) {
    if size <= 11 {
        out.push(ty | (size as u8) << 4);
    } else if size <= 0xff {
        out.extend_from_slice(&[ty | 0xc0, size as u8]);
    } else if size <= 0xffff {
        out.push(ty | 0xd0);
        out.extend_from_slice(&(size as u16).to_be_bytes());
    } else {
        out.push(ty | 0xe0);
        out.extend_from_slice(&(size as u32).to_be_bytes());
    }
}

/// `jsonbPayloadSize`: (header length, payload size) of the element at `i`, None when
/// the header is cut short, an 8-byte size exceeds 32 bits, or the payload overruns.
fn payload_size(b: &[u8], i: usize) -> Option<(usize, usize)> {
    let x = b.get(i)? >> 4;
    let bytes = |n: usize| b.get(i + 1..i + 1 + n);
    let (n, sz) = match x {
        0..=11 => (1, usize::from(x)),
        12 => (2, usize::from(*b.get(i + 1)?)),
        13 => (3, bytes(2)?.iter().fold(0, |s, &c| s << 8 | usize::from(c))),
        14 => (5, bytes(4)?.iter().fold(0, |s, &c| s << 8 | usize::from(c))),
        _ => {
            let h = bytes(8)?;
            if h[..4].iter().any(|&c| c != 0) {
                return None;
            }
            (9, h[4..].iter().fold(0, |s, &c| s << 8 | usize::from(c)))
        }
    };
    (i + n + sz <= b.len()).then_some((n, sz))
}

/// `jsonArgIsJsonb`: whether a BLOB argument is taken as JSONB. Like SQLite, only the
/// outer header is checked (a malformed inside is "malformed JSON" later), except for
/// short blobs that start like JSON text (`{`, `[`, `"`), which must decode fully;
/// other blobs are read as JSON text.
pub(super) fn is_jsonb(b: &[u8]) -> bool {
    let Some(&h) = b.first() else {
        return false;
    };
    let Some((n, sz)) = payload_size(b, 0) else {
        return false;
    };
    h & 0x0f <= OBJECT
        && n + sz == b.len()
        && (h & 0x0f > FALSE || sz == 0)
        && (sz > 7 || !(h == b'{' || h == b'[' || h.is_ascii_digit()) || is_valid(b))
}

/// `jsonbValidityCheck`: the blob is one element, well-formed throughout (every
/// literal's text included). json_valid(X, 8) is this test.
pub(super) fn is_valid(b: &[u8]) -> bool {
    payload_size(b, 0).is_some_and(|(n, sz)| n + sz == b.len()) && first_error(b) == 0
}

/// Where a blob taken as JSONB first goes wrong, as `jsonbValidityCheck` answers it for
/// json_error_position: 0 when it is well-formed, else a 1-based byte position (SQLite
/// calls it approximate: the start of the element, or the byte inside it at fault).
pub(super) fn first_error(b: &[u8]) -> usize {
    match payload_size(b, 0) {
        Some((n, sz)) if n + sz == b.len() => error_at(b, 0, b.len(), 1),
        _ => 1,
    }
}

/// `first_error` for the element at `i`, which ends at `end` (its header says so).
fn error_at(z: &[u8], i: usize, end: usize, depth: usize) -> usize {
    let Some((n, sz)) = payload_size(z, i).filter(|_| depth <= JSON_MAX_DEPTH) else {
        return i + 1;
    };
    let x = z[i] & 0x0f;
    let at = i + n;
    let body = &z[at..end];
    // A position inside the body, 1-based in the blob.
    let inside = |k: usize| at + k + 1;
    match x {
        NULL | TRUE | FALSE if n + sz == 1 => 0,
        NULL | TRUE | FALSE => i + 1,
        INT => {
            let neg = usize::from(body.first() == Some(&b'-'));
            if body.len() < 1 + neg {
                return i + 1;
            }
            body[neg..]
                .iter()
                .position(|c| !c.is_ascii_digit())
                .map_or(0, |k| inside(neg + k))
        }
        INT5 => {
            let neg = usize::from(body.first() == Some(&b'-'));
            if body.len() < 3 + neg || body[neg] != b'0' {
                return i + 1;
            }
            if !matches!(body[neg + 1], b'x' | b'X') {
                return inside(neg + 1);
            }
            body[neg + 2..]
                .iter()
                .position(|c| !c.is_ascii_hexdigit())
                .map_or(0, |k| inside(neg + 2 + k))
        }
        FLOAT | FLOAT5 if sz < 2 => i + 1,
        FLOAT | FLOAT5 => match float_error(body, x == FLOAT) {
            FloatError::None => 0,
            FloatError::Element => i + 1,
            FloatError::At(k) => inside(k),
        },
        TEXT => body
            .iter()
            .position(|&c| !(is_ok(c) || c == b'\''))
            .map_or(0, inside),
        TEXTJ | TEXT5 => text_error(body, x == TEXT5).map_or(0, inside),
        TEXTRAW => 0,
        ARRAY | OBJECT => {
            let mut j = at;
            let mut cnt = 0usize;
            while j < end {
                let Some((m, s)) = payload_size(&z[..end], j) else {
                    return j + 1;
                };
                let key_type = z[j] & 0x0f;
                if x == OBJECT && cnt % 2 == 0 && !(TEXT..=TEXTRAW).contains(&key_type) {
                    return j + 1;
                }
                let sub = error_at(z, j, j + m + s, depth + 1);
                if sub != 0 {
                    return sub;
                }
                cnt += 1;
                j += m + s;
            }
            if x == OBJECT && cnt % 2 == 1 {
                j + 1
            } else {
                0
            }
        }
        _ => i + 1,
    }
}

/// What `float_error` found.
enum FloatError {
    None,
    /// The element as a whole (its start is the position).
    Element,
    /// The byte at this offset of the payload.
    At(usize),
}

/// The FLOAT / FLOAT5 payload rules of `jsonbValidityCheck` (`z`: at least two bytes).
fn float_error(z: &[u8], strict: bool) -> FloatError {
    let k = z.len();
    let mut j = usize::from(z[0] == b'-');
    if j == 1 && k < 3 {
        return FloatError::Element;
    }
    let digit = |i: usize| z.get(i).is_some_and(u8::is_ascii_digit);
    // 0: nothing seen; 1: a '.'; 2: an exponent.
    let mut seen = 0;
    if z[j] == b'.' {
        if strict || !digit(j + 1) {
            return FloatError::At(j);
        }
        j += 2;
        seen = 1;
    } else if z[j] == b'0' && strict {
        if j + 3 > k || !matches!(z[j + 1], b'.' | b'e' | b'E') {
            return FloatError::At(j);
        }
        j += 1;
    }
    while j < k {
        match z[j] {
            c if c.is_ascii_digit() => {}
            b'.' => {
                if seen > 0 || (strict && !digit(j + 1)) {
                    return FloatError::At(j);
                }
                seen = 1;
            }
            b'e' | b'E' => {
                if seen == 2 || j == k - 1 {
                    return FloatError::At(j);
                }
                if matches!(z[j + 1], b'+' | b'-') {
                    j += 1;
                    if j == k - 1 {
                        return FloatError::At(j);
                    }
                }
                seen = 2;
            }
            _ => return FloatError::At(j),
        }
        j += 1;
    }
    if seen == 0 {
        FloatError::Element
    } else {
        FloatError::None
    }
}

/// The TEXTJ / TEXT5 payload rules of `jsonbValidityCheck`: standard escapes, and for
/// TEXT5 also raw `"` and control characters and the JSON5 escapes. The offset of the
/// first byte at fault (an escape's backslash), if any.
fn text_error(z: &[u8], json5: bool) -> Option<usize> {
    let k = z.len();
    let hex = |i: usize, n: usize| {
        z.get(i..i + n)
            .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit))
    };
    let mut j = 0;
    while j < k {
        let c = z[j];
        if is_ok(c) || c == b'\'' {
            j += 1;
            continue;
        }
        if c == b'"' || c <= 0x1f {
            if !json5 {
                return Some(j);
            }
            j += 1;
            continue;
        }
        // A backslash.
        let Some(&e) = z.get(j + 1) else {
            return Some(j);
        };
        j += match e {
            // NUL too: SQLite looks the byte up with strchr(), which finds the string's
            // terminator.
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' | 0 => 2,
            b'u' if j + 5 < k && hex(j + 2, 4) => 6,
            _ if !json5 => return Some(j),
            b'\'' | b'v' => 2,
            b'0' if !z.get(j + 2).is_some_and(u8::is_ascii_digit) => 2,
            b'x' if hex(j + 2, 2) => 4,
            b'\n' => 2,
            b'\r' => 2 + usize::from(z.get(j + 2) == Some(&b'\n')),
            0xe2 if matches!(z.get(j + 2..j + 4), Some([0x80, 0xa8 | 0xa9])) => 4,
            _ => return Some(j),
        };
    }
    None
}

/// The tree of a whole JSONB blob; None when it is malformed.
pub(super) fn decode(b: &[u8]) -> Option<Node> {
    let (n, end) = decode_at(b, 0, 0)?;
    (end == b.len()).then_some(n)
}

/// The element at `i` and the offset after it.
fn decode_at(b: &[u8], i: usize, depth: usize) -> Option<(Node, usize)> {
    if depth > JSON_MAX_DEPTH {
        return None;
    }
    let (n, sz) = payload_size(b, i)?;
    let start = i + n;
    let end = start + sz;
    // SQLite does not check that text is UTF-8; parlite's text values are, so invalid
    // bytes become U+FFFD here (value invariant 2).
    let text = || String::from_utf8_lossy(&b[start..end]).into_owned();
    let node = match b[i] & 0x0f {
        NULL | TRUE | FALSE if sz != 0 => return None,
        NULL => Node::Null,
        TRUE => Node::True,
        FALSE => Node::False,
        ty @ (INT | INT5 | FLOAT | FLOAT5) => {
            let kind = match ty {
                INT => NumKind::Int,
                INT5 => NumKind::Int5,
                FLOAT => NumKind::Float,
                _ => NumKind::Float5,
            };
            if sz == 0 {
                return None;
            }
            Node::Num(kind, text())
        }
        ty @ (TEXT | TEXTJ | TEXT5 | TEXTRAW) => {
            let kind = match ty {
                TEXT => StrKind::Text,
                TEXTJ => StrKind::TextJ,
                TEXT5 => StrKind::Text5,
                _ => StrKind::TextRaw,
            };
            Node::Str(kind, text())
        }
        ARRAY => {
            let mut items = Vec::new();
            let mut j = start;
            while j < end {
                let (it, next) = decode_at(&b[..end], j, depth + 1)?;
                items.push(it);
                j = next;
            }
            Node::Array(items)
        }
        OBJECT => {
            let mut members = Vec::new();
            let mut j = start;
            while j < end {
                let (k, next) = decode_at(&b[..end], j, depth + 1)?;
                if !matches!(k, Node::Str(..)) {
                    return None;
                }
                let (v, next) = decode_at(&b[..end], next, depth + 1)?;
                members.push((k, v));
                j = next;
            }
            Node::Object(members)
        }
        _ => return None,
    };
    Some((node, end))
}
