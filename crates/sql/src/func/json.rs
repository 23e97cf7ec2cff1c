//! JSON functions (json1.html): json, json_valid, json_quote, json_type,
//! json_array_length, json_extract, the `->` and `->>` operators, json_array,
//! json_object, json_insert, json_replace, json_set, json_remove, json_patch, and the
//! json_group_array / json_group_object aggregates, json_pretty, and their jsonb_ forms.
//!
//! JSON text is parsed into a small tree that keeps each string's and number's original
//! text, because SQLite returns JSON "minified but otherwise as written" (`json(' [1.50,
//! "\u0041"] ')` is `[1.50,"\u0041"]`). Values leave JSON exactly as SQLite's
//! `jsonReturnFromBlob` converts them: integers that fit i64 as INTEGER, other numbers as
//! REAL via SQLite's text→real conversion, strings unescaped, true/false as 1/0, arrays
//! and objects as minified JSON text.
//!
//! JSONB (SQLite 3.45+): a blob argument that passes SQLite's JSONB test is decoded
//! (jsonb.rs), any other blob is read as JSON text; the jsonb_ functions encode their
//! result tree. Limits, documented rather than faked:
//! - Where SQLite overwrites an element by a shorter one in place it widens the new
//!   element's header (`jsonBlobOverwrite`); the tree is encoded with the smallest
//!   headers, so such jsonb_set/jsonb_replace/jsonb_patch results differ in bytes only.
//! - A JSONB blob is decoded whole, so a blob broken inside is "malformed JSON" to every
//!   function, where SQLite's functions read only the parts they visit.
//! - SQLite marks the results of JSON functions with a JSON subtype so that
//!   `json_array(json('[1]'))` nests the array. Values carry no subtype; the executor
//!   evaluates the arguments of the functions that read it (`Special::JsonSubtypes`)
//!   through [`call_with_subtypes`], so a value passed straight from one JSON function to
//!   another keeps it (exec/eval.rs, `eval_json_call`), and so do json_group_array and
//!   json_group_object (`Aggregate::step_subtyped`; not as window functions). Through the
//!   plain registry call, text arguments are JSON strings.
//!
//! Invariant: nesting depth is bounded ([`JSON_MAX_DEPTH`], as SQLite's 1000), so parsing
//! and rendering never recurse without limit.

use super::aggregate::Aggregate;
use super::jsonb;
use super::Ctx;
use crate::value::num::{atof, atoi64};
use crate::value::{Result, SqlError, Value, MAX_LENGTH_BYTES};
use std::sync::Arc;

/// SQLite's JSON_MAX_DEPTH.
pub const JSON_MAX_DEPTH: usize = 1000;

/// How a string literal was written (SQLite's JSONB text node types): it decides both
/// how the string is rendered back as JSON and how it is unescaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StrKind {
    /// No escapes.
    Text,
    /// Standard JSON escapes.
    TextJ,
    /// JSON5 escapes, raw control characters or a `"` inside a single-quoted string.
    Text5,
    /// Unescaped text that needs escaping to be JSON: an SQL text value stored by
    /// jsonb_set and friends, or a key they create.
    TextRaw,
}

/// How a number was written: standard JSON, or JSON5 (hex integers; floats with a bare
/// leading or trailing decimal point).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NumKind {
    Int,
    Int5,
    Float,
    Float5,
}

#[derive(Debug, Clone)]
pub(super) enum Node {
    Null,
    True,
    False,
    /// The literal's text (a leading `+` dropped).
    Num(NumKind, String),
    /// The text between the delimiters, escapes kept.
    Str(StrKind, String),
    Array(Vec<Node>),
    /// Keys are `Node::Str`.
    Object(Vec<(Node, Node)>),
}

fn malformed() -> SqlError {
    SqlError::msg("malformed JSON")
}

/// Bytes that need no attention inside a string literal (`jsonIsOk`).
pub(super) fn is_ok(c: u8) -> bool {
    c >= 0x20 && c != b'"' && c != b'\\' && c != b'\''
}

fn is_json_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

fn is_alnum(c: u8) -> bool {
    c.is_ascii_alphanumeric()
}

/// `sqlite3JsonId1` / `sqlite3JsonId2`: characters of an unquoted JSON5 object key.
fn is_id1(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c == b'$' || c >= 0x80
}
fn is_id2(c: u8) -> bool {
    is_id1(c) || c.is_ascii_digit()
}

/// Outcomes of one parse step besides a value (SQLite's negative return codes).
enum Step {
    Value(Node, usize),
    /// End of input.
    Eof,
    CloseBrace(usize),
    CloseBracket(usize),
    Comma(usize),
    Colon(usize),
    Error,
}

struct Parser<'a> {
    z: &'a [u8],
    depth: usize,
    /// A JSON5 extension was used (json_valid(X, 1) rejects the text).
    nonstd: bool,
    /// Where the text went wrong, as SQLite's `JsonParse::iErr` says it (a byte offset):
    /// set where `jsonTranslateTextToBlob` sets it, json_error_position's answer.
    err: usize,
}

impl<'a> Parser<'a> {
    fn at(&self, i: usize) -> u8 {
        self.z.get(i).copied().unwrap_or(0)
    }

    fn starts_ic(&self, i: usize, w: &str) -> bool {
        self.z
            .get(i..i + w.len())
            .is_some_and(|s| s.eq_ignore_ascii_case(w.as_bytes()))
    }

    /// `json5Whitespace`: bytes of JSON5 whitespace and comments at `i`.
    fn json5_ws(&self, i: usize) -> usize {
        let mut n = i;
        loop {
            let c = self.at(n);
            match c {
                0x09 | 0x0a | 0x0b | 0x0c | 0x0d | 0x20 => n += 1,
                b'/' => {
                    if self.at(n + 1) == b'*' && self.at(n + 2) != 0 {
                        let mut j = n + 3;
                        loop {
                            if self.at(j) == b'/' && self.at(j - 1) == b'*' {
                                break;
                            }
                            if self.at(j) == 0 {
                                return n - i;
                            }
                            j += 1;
                        }
                        n = j + 1;
                    } else if self.at(n + 1) == b'/' {
                        let mut j = n + 2;
                        loop {
                            let c = self.at(j);
                            if c == 0 || c == b'\n' || c == b'\r' {
                                break;
                            }
                            if c == 0xe2
                                && self.at(j + 1) == 0x80
                                && matches!(self.at(j + 2), 0xa8 | 0xa9)
                            {
                                j += 2;
                                break;
                            }
                            j += 1;
                        }
                        n = j;
                        if self.at(n) != 0 {
                            n += 1;
                        }
                    } else {
                        return n - i;
                    }
                }
                0xc2 if self.at(n + 1) == 0xa0 => n += 2,
                0xe1 if self.at(n + 1) == 0x9a && self.at(n + 2) == 0x80 => n += 3,
                0xe2 => {
                    let (c1, c2) = (self.at(n + 1), self.at(n + 2));
                    // U+2000..U+200A, U+2028, U+2029, U+202F, U+205F.
                    let space = (c1 == 0x80
                        && c2 >= 0x80
                        && (c2 <= 0x8a || c2 == 0xa8 || c2 == 0xa9 || c2 == 0xaf))
                        || (c1 == 0x81 && c2 == 0x9f);
                    if space {
                        n += 3;
                    } else {
                        return n - i;
                    }
                }
                0xe3 if self.at(n + 1) == 0x80 && self.at(n + 2) == 0x80 => n += 3,
                0xef if self.at(n + 1) == 0xbb && self.at(n + 2) == 0xbf => n += 3,
                _ => return n - i,
            }
        }
    }

    /// Fails with SQLite's error offset `at`.
    fn fail(&mut self, at: usize) -> Step {
        self.err = at;
        Step::Error
    }

    fn text(&self, a: usize, b: usize) -> String {
        String::from_utf8_lossy(&self.z[a.min(self.z.len())..b.min(self.z.len())]).into_owned()
    }

    /// `jsonTranslateTextToBlob`: one value (or a structural token) starting at `i`.
    fn step(&mut self, mut i: usize) -> Step {
        loop {
            let c = self.at(i);
            match c {
                b'{' => return self.object(i),
                b'[' => return self.array(i),
                b'\'' | b'"' => return self.string(i),
                b't' => {
                    return if self.z[i..].starts_with(b"true") && !is_alnum(self.at(i + 4)) {
                        Step::Value(Node::True, i + 4)
                    } else {
                        self.fail(i)
                    }
                }
                b'f' => {
                    return if self.z[i..].starts_with(b"false") && !is_alnum(self.at(i + 5)) {
                        Step::Value(Node::False, i + 5)
                    } else {
                        self.fail(i)
                    }
                }
                b'+' | b'.' | b'-' | b'0'..=b'9' => {
                    if c == b'+' {
                        self.nonstd = true;
                    }
                    return self.number(i);
                }
                // A structural byte: SQLite points its error offset at it too.
                b'}' | b']' | b',' | b':' => {
                    self.err = i;
                    return match c {
                        b'}' => Step::CloseBrace(i),
                        b']' => Step::CloseBracket(i),
                        b',' => Step::Comma(i),
                        _ => Step::Colon(i),
                    };
                }
                0 => return Step::Eof,
                0x09 | 0x0a | 0x0d | 0x20 => {
                    i += 1;
                    while is_json_space(self.at(i)) {
                        i += 1;
                    }
                }
                0x0b | 0x0c | b'/' | 0xc2 | 0xe1 | 0xe2 | 0xe3 | 0xef => {
                    let n = self.json5_ws(i);
                    if n == 0 {
                        return self.fail(i);
                    }
                    self.nonstd = true;
                    i += n;
                }
                _ => {
                    if c == b'n' && self.z[i..].starts_with(b"null") && !is_alnum(self.at(i + 4)) {
                        return Step::Value(Node::Null, i + 4);
                    }
                    // NaN and Infinity spellings (case-insensitive).
                    for (w, node_inf) in [
                        ("inf", true),
                        ("infinity", true),
                        ("nan", false),
                        ("qnan", false),
                        ("snan", false),
                    ] {
                        if self.starts_ic(i, w) && !is_alnum(self.at(i + w.len())) {
                            self.nonstd = true;
                            let node = if node_inf {
                                Node::Num(NumKind::Float, "9e999".into())
                            } else {
                                Node::Null
                            };
                            return Step::Value(node, i + w.len());
                        }
                    }
                    return self.fail(i);
                }
            }
        }
    }

    fn object(&mut self, i: usize) -> Step {
        self.depth += 1;
        if self.depth > JSON_MAX_DEPTH {
            return self.fail(i);
        }
        let mut members: Vec<(Node, Node)> = Vec::new();
        let mut j = i + 1;
        loop {
            // The key.
            let key = match self.step(j) {
                Step::Value(k, x) => (k, x),
                Step::CloseBrace(at) if members.is_empty() || self.at(j - 1) == b',' => {
                    if !members.is_empty() {
                        self.nonstd = true;
                    }
                    self.depth -= 1;
                    return Step::Value(Node::Object(members), at + 1);
                }
                // Anything else may be an unquoted JSON5 key.
                other => {
                    j += self.json5_ws(j);
                    // A `\uXXXX` escape may stand for any character of the name
                    // (`jsonIs4HexB`); the name is then JSON5 text with escapes.
                    let escape = |p: &Self, at: usize| {
                        p.at(at) == b'\\' && p.at(at + 1) == b'u' && p.is_hex(at + 2, 4)
                    };
                    if is_id1(self.at(j)) || escape(self, j) {
                        let mut kind = if escape(self, j) {
                            StrKind::Text5
                        } else {
                            StrKind::Text
                        };
                        let mut k = j + 1;
                        loop {
                            if is_id2(self.at(k)) && self.json5_ws(k) == 0 {
                                k += 1;
                            } else if escape(self, k) {
                                kind = StrKind::Text5;
                                k += 1;
                            } else {
                                break;
                            }
                        }
                        self.nonstd = true;
                        (Node::Str(kind, self.text(j, k)), k)
                    } else if matches!(other, Step::Error) {
                        return Step::Error;
                    } else {
                        return self.fail(j);
                    }
                }
            };
            let (key, mut x) = key;
            if !matches!(key, Node::Str(..)) {
                return self.fail(j);
            }
            // The colon.
            if self.at(x) == b':' {
                x += 1;
            } else {
                let mut k = x;
                while is_json_space(self.at(k)) {
                    k += 1;
                }
                if self.at(k) == b':' {
                    x = k + 1;
                } else {
                    match self.step(k) {
                        Step::Colon(at) => x = at + 1,
                        Step::Error => return Step::Error,
                        _ => return self.fail(k),
                    }
                }
            }
            // The value.
            let (value, mut y) = match self.step(x) {
                Step::Value(v, y) => (v, y),
                Step::Error => return Step::Error,
                _ => return self.fail(x),
            };
            members.push((key, value));
            // A comma or the closing brace.
            while is_json_space(self.at(y)) {
                y += 1;
            }
            match self.at(y) {
                b',' => j = y + 1,
                b'}' => {
                    self.depth -= 1;
                    return Step::Value(Node::Object(members), y + 1);
                }
                _ => match self.step(y) {
                    Step::Comma(at) => j = at + 1,
                    Step::CloseBrace(at) => {
                        self.depth -= 1;
                        return Step::Value(Node::Object(members), at + 1);
                    }
                    // SQLite points at the byte after the value even when the step failed
                    // further on.
                    _ => return self.fail(y),
                },
            }
        }
    }

    fn array(&mut self, i: usize) -> Step {
        self.depth += 1;
        if self.depth > JSON_MAX_DEPTH {
            return self.fail(i);
        }
        let mut items = Vec::new();
        let mut j = i + 1;
        loop {
            let mut y = match self.step(j) {
                Step::Value(v, y) => {
                    items.push(v);
                    y
                }
                // `[]`, or a trailing comma (JSON5).
                Step::CloseBracket(at) => {
                    if !items.is_empty() {
                        self.nonstd = true;
                    }
                    self.depth -= 1;
                    return Step::Value(Node::Array(items), at + 1);
                }
                Step::Error => return Step::Error,
                _ => return self.fail(j),
            };
            while is_json_space(self.at(y)) {
                y += 1;
            }
            match self.at(y) {
                b',' => j = y + 1,
                b']' => {
                    self.depth -= 1;
                    return Step::Value(Node::Array(items), y + 1);
                }
                _ => match self.step(y) {
                    Step::Comma(at) => j = at + 1,
                    Step::CloseBracket(at) => {
                        self.depth -= 1;
                        return Step::Value(Node::Array(items), at + 1);
                    }
                    _ => return self.fail(y),
                },
            }
        }
    }

    fn is_hex(&self, i: usize, n: usize) -> bool {
        (i..i + n).all(|k| self.at(k).is_ascii_hexdigit())
    }

    fn string(&mut self, i: usize) -> Step {
        let delim = self.at(i);
        if delim == b'\'' {
            self.nonstd = true;
        }
        let mut kind = StrKind::Text;
        let mut j = i + 1;
        loop {
            let c = self.at(j);
            if is_ok(c) {
                j += 1;
                continue;
            }
            if c == delim {
                break;
            }
            if c == b'\\' {
                j += 1;
                let e = self.at(j);
                if matches!(e, b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't')
                    || (e == b'u' && self.is_hex(j + 1, 4))
                {
                    if kind == StrKind::Text {
                        kind = StrKind::TextJ;
                    }
                } else if e == b'\''
                    || e == b'v'
                    || e == b'\n'
                    || (e == b'0' && !self.at(j + 1).is_ascii_digit())
                    || (e == 0xe2
                        && self.at(j + 1) == 0x80
                        && matches!(self.at(j + 2), 0xa8 | 0xa9))
                    || (e == b'x' && self.is_hex(j + 1, 2))
                {
                    kind = StrKind::Text5;
                    self.nonstd = true;
                } else if e == b'\r' {
                    if self.at(j + 1) == b'\n' {
                        j += 1;
                    }
                    kind = StrKind::Text5;
                    self.nonstd = true;
                } else {
                    return self.fail(j);
                }
            } else if c <= 0x1f {
                if c == 0 {
                    return self.fail(j);
                }
                kind = StrKind::Text5;
                self.nonstd = true;
            } else if c == b'"' {
                // A double quote inside a single-quoted string.
                kind = StrKind::Text5;
            }
            j += 1;
        }
        Step::Value(Node::Str(kind, self.text(i + 1, j)), j + 1)
    }

    fn number(&mut self, i0: usize) -> Step {
        let mut i = i0;
        let mut t: u8 = 0; // 0x01: JSON5, 0x02: float
        let c = self.at(i);
        let mut j;
        'finish: {
            if c == b'.' {
                if !self.at(i + 1).is_ascii_digit() {
                    return self.fail(i);
                }
                t = 0x03;
            } else if c <= b'0' {
                if c == b'0' {
                    if matches!(self.at(i + 1), b'x' | b'X') && self.at(i + 2).is_ascii_hexdigit() {
                        t = 0x01;
                        j = i + 3;
                        while self.at(j).is_ascii_hexdigit() {
                            j += 1;
                        }
                        break 'finish;
                    } else if self.at(i + 1).is_ascii_digit() {
                        return self.fail(i + 1);
                    }
                } else {
                    // '+' or '-'
                    if !self.at(i + 1).is_ascii_digit() {
                        if matches!(self.at(i + 1), b'I' | b'i') && self.starts_ic(i + 1, "inf") {
                            self.nonstd = true;
                            let text = if c == b'-' { "-9e999" } else { "9e999" };
                            let len = if self.starts_ic(i + 4, "inity") { 9 } else { 4 };
                            return Step::Value(Node::Num(NumKind::Float, text.into()), i + len);
                        }
                        if self.at(i + 1) == b'.' {
                            t |= 0x01;
                        } else {
                            return self.fail(i);
                        }
                    } else if self.at(i + 1) == b'0' {
                        if self.at(i + 2).is_ascii_digit() {
                            return self.fail(i + 1);
                        } else if matches!(self.at(i + 2), b'x' | b'X')
                            && self.at(i + 3).is_ascii_hexdigit()
                        {
                            t |= 0x01;
                            j = i + 4;
                            while self.at(j).is_ascii_hexdigit() {
                                j += 1;
                            }
                            break 'finish;
                        }
                    }
                }
            }
            let mut seen_e = false;
            j = i + 1;
            loop {
                let c = self.at(j);
                if c.is_ascii_digit() {
                    j += 1;
                    continue;
                }
                if c == b'.' {
                    if t & 0x02 != 0 {
                        return self.fail(j);
                    }
                    t |= 0x02;
                    j += 1;
                    continue;
                }
                if c == b'e' || c == b'E' {
                    if self.at(j - 1) < b'0' {
                        if self.at(j - 1) == b'.' && j >= i + 2 && self.at(j - 2).is_ascii_digit() {
                            t |= 0x01;
                        } else {
                            return self.fail(j);
                        }
                    }
                    if seen_e {
                        return self.fail(j);
                    }
                    t |= 0x02;
                    seen_e = true;
                    let mut c2 = self.at(j + 1);
                    if c2 == b'+' || c2 == b'-' {
                        j += 1;
                        c2 = self.at(j + 1);
                    }
                    if !c2.is_ascii_digit() {
                        return self.fail(j);
                    }
                    j += 1;
                    continue;
                }
                break;
            }
            if self.at(j - 1) < b'0' {
                if self.at(j - 1) == b'.' && j >= i + 2 && self.at(j - 2).is_ascii_digit() {
                    t |= 0x01;
                } else {
                    return self.fail(j);
                }
            }
        }
        if self.at(i) == b'+' {
            i += 1;
        }
        if t & 0x01 != 0 {
            self.nonstd = true;
        }
        let kind = match t {
            0 => NumKind::Int,
            1 => NumKind::Int5,
            2 => NumKind::Float,
            _ => NumKind::Float5,
        };
        Step::Value(Node::Num(kind, self.text(i, j)), j)
    }
}

/// Parses a whole JSON text (RFC 8259 plus SQLite's JSON5 extensions). The text ends at
/// its first NUL, as SQLite reads it as a C string.
fn parse(z: &[u8]) -> Option<Node> {
    parse_checked(z).map(|(n, _)| n)
}

/// Like [`parse`], also telling whether any JSON5 extension was used.
fn parse_checked(z: &[u8]) -> Option<(Node, bool)> {
    parse_text(z).ok()
}

/// [`parse_checked`], or SQLite's byte offset of the first error (`JsonParse::iErr`:
/// where `jsonTranslateTextToBlob` left it, also when only trailing text is wrong).
fn parse_text(z: &[u8]) -> std::result::Result<(Node, bool), usize> {
    let z = match z.iter().position(|&b| b == 0) {
        Some(n) => &z[..n],
        None => z,
    };
    let mut p = Parser {
        z,
        depth: 0,
        nonstd: false,
        err: 0,
    };
    let Step::Value(v, mut i) = p.step(0) else {
        return Err(p.err);
    };
    while is_json_space(p.at(i)) {
        i += 1;
    }
    if p.at(i) != 0 {
        i += p.json5_ws(i);
        if p.at(i) != 0 {
            return Err(p.err);
        }
        p.nonstd = true;
    }
    Ok((v, p.nonstd))
}

/// The JSON argument of a function: text (or a number's text) parsed, JSONB decoded;
/// NULL → None. A blob that is not JSONB is read as JSON text, as SQLite does for
/// compatibility with applications that store JSON text in blobs.
pub(super) fn json_arg(v: &Value) -> Result<Option<Node>> {
    match v {
        Value::Null => Ok(None),
        Value::Blob(b) if jsonb::is_jsonb(b) => jsonb::decode(b).map(Some).ok_or_else(malformed),
        Value::Blob(b) => parse(b).map(Some).ok_or_else(malformed),
        other => {
            let t = other.to_text_or_empty();
            parse(t.as_bytes()).map(Some).ok_or_else(malformed)
        }
    }
}

/// Minified JSON text of a node (`jsonTranslateBlobToText`): standard literals as
/// written, JSON5 ones converted to standard JSON.
fn render(n: &Node, out: &mut String) {
    match n {
        Node::Null => out.push_str("null"),
        Node::True => out.push_str("true"),
        Node::False => out.push_str("false"),
        Node::Num(NumKind::Int | NumKind::Float, t) => out.push_str(t),
        Node::Num(NumKind::Int5, t) => {
            let b = t.as_bytes();
            let mut k = 2;
            if b.first() == Some(&b'-') {
                out.push('-');
                k += 1;
            }
            let mut u: u64 = 0;
            let mut overflow = false;
            for &c in &b[k.min(b.len())..] {
                if u >> 60 != 0 {
                    overflow = true;
                } else {
                    u = u * 16 + u64::from(super::scalar::hex_digit_value(c));
                }
            }
            if overflow {
                out.push_str("9.0e999");
            } else {
                out.push_str(&u.to_string());
            }
        }
        Node::Num(NumKind::Float5, t) => {
            let b = t.as_bytes();
            let mut k = 0;
            if b.first() == Some(&b'-') {
                out.push('-');
                k = 1;
            }
            if b.get(k) == Some(&b'.') {
                out.push('0');
            }
            while k < b.len() {
                out.push(char::from(b[k]));
                if b[k] == b'.' && !b.get(k + 1).is_some_and(u8::is_ascii_digit) {
                    out.push('0');
                }
                k += 1;
            }
        }
        Node::Str(StrKind::Text | StrKind::TextJ, raw) => {
            out.push('"');
            out.push_str(raw);
            out.push('"');
        }
        Node::Str(StrKind::Text5, raw) => render_text5(raw, out),
        Node::Str(StrKind::TextRaw, raw) => append_json_string(out, raw),
        Node::Array(items) => {
            out.push('[');
            for (k, it) in items.iter().enumerate() {
                if k > 0 {
                    out.push(',');
                }
                render(it, out);
            }
            out.push(']');
        }
        Node::Object(members) => {
            out.push('{');
            for (k, (key, v)) in members.iter().enumerate() {
                if k > 0 {
                    out.push(',');
                }
                render(key, out);
                out.push(':');
                render(v, out);
            }
            out.push('}');
        }
    }
}

/// A JSON5 string as standard JSON (the JSONB_TEXT5 case of `jsonTranslateBlobToText`,
/// including its rendering of `\v` as `\u0009`).
fn render_text5(raw: &str, out: &mut String) {
    let z = raw.as_bytes();
    let mut bytes: Vec<u8> = Vec::with_capacity(z.len() + 2);
    bytes.push(b'"');
    let mut i = 0;
    while i < z.len() {
        let c = z[i];
        if is_ok(c) || c == b'\'' {
            bytes.push(c);
            i += 1;
            continue;
        }
        if c == b'"' {
            bytes.extend_from_slice(b"\\\"");
            i += 1;
            continue;
        }
        if c <= 0x1f {
            push_control_escape(&mut bytes, c);
            i += 1;
            continue;
        }
        // A backslash escape.
        let Some(&e) = z.get(i + 1) else { break };
        match e {
            b'\'' => bytes.push(b'\''),
            b'v' => bytes.extend_from_slice(b"\\u0009"),
            b'x' => {
                bytes.extend_from_slice(b"\\u00");
                bytes.extend_from_slice(z.get(i + 2..i + 4).unwrap_or(b"00"));
                i += 2;
            }
            b'0' => bytes.extend_from_slice(b"\\u0000"),
            b'\r' => {
                if z.get(i + 2) == Some(&b'\n') {
                    i += 1;
                }
            }
            b'\n' => {}
            0xe2 => i += 2,
            _ => bytes.extend_from_slice(&z[i..i + 2]),
        }
        i += 2;
    }
    bytes.push(b'"');
    out.push_str(&String::from_utf8_lossy(&bytes));
}

fn push_control_escape(out: &mut Vec<u8>, c: u8) {
    match c {
        0x08 => out.extend_from_slice(b"\\b"),
        0x09 => out.extend_from_slice(b"\\t"),
        0x0a => out.extend_from_slice(b"\\n"),
        0x0c => out.extend_from_slice(b"\\f"),
        0x0d => out.extend_from_slice(b"\\r"),
        _ => {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(c >> 4)]);
            out.push(HEX[usize::from(c & 0xf)]);
        }
    }
}

fn rendered(n: &Node) -> String {
    let mut s = String::new();
    render(n, &mut s);
    s
}

/// Decodes a string literal's escapes (`jsonUnescapeOneChar`, JSON5 escapes included).
/// Code points SQLite would emit as invalid UTF-8 (lone surrogates) become U+FFFD.
pub(super) fn unescape(raw: &str) -> String {
    if !raw.contains('\\') {
        return raw.to_string();
    }
    let z = raw.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(z.len());
    let hex4 = |i: usize| -> u32 {
        z.get(i..i + 4).map_or(0, |h| {
            h.iter().fold(0u32, |v, &c| {
                (v << 4) | u32::from(super::scalar::hex_digit_value(c))
            })
        })
    };
    let mut i = 0;
    while i < z.len() {
        if z[i] != b'\\' {
            out.push(z[i]);
            i += 1;
            continue;
        }
        let n = z.len() - i;
        let (v, used): (Option<u32>, usize) = if n < 2 {
            (None, n)
        } else {
            match z[i + 1] {
                b'u' if n >= 6 => {
                    let v = hex4(i + 2);
                    if v & 0xfc00 == 0xd800
                        && n >= 12
                        && z[i + 6] == b'\\'
                        && z[i + 7] == b'u'
                        && hex4(i + 8) & 0xfc00 == 0xdc00
                    {
                        (
                            Some(((v & 0x3ff) << 10) + (hex4(i + 8) & 0x3ff) + 0x10000),
                            12,
                        )
                    } else {
                        (Some(v), 6)
                    }
                }
                b'u' => (None, n),
                b'b' => (Some(8), 2),
                b'f' => (Some(12), 2),
                b'n' => (Some(10), 2),
                b'r' => (Some(13), 2),
                b't' => (Some(9), 2),
                b'v' => (Some(11), 2),
                b'0' => (
                    if z.get(i + 2).is_some_and(u8::is_ascii_digit) {
                        None
                    } else {
                        Some(0)
                    },
                    2,
                ),
                b'\'' | b'"' | b'/' | b'\\' => (Some(u32::from(z[i + 1])), 2),
                b'x' if n >= 4 => {
                    let h = |c: u8| u32::from(super::scalar::hex_digit_value(c));
                    (Some((h(z[i + 2]) << 4) | h(z[i + 3])), 4)
                }
                b'x' => (None, n),
                b'\r' | b'\n' | 0xe2 => {
                    // A line continuation: the escape and the line break vanish.
                    let mut k = i + 1;
                    if z[k] == b'\r' && z.get(k + 1) == Some(&b'\n') {
                        k += 2;
                    } else if z[k] == 0xe2 {
                        k += 3;
                    } else {
                        k += 1;
                    }
                    i = k.min(z.len());
                    continue;
                }
                _ => (None, 2),
            }
        };
        if let Some(v) = v {
            match char::from_u32(v) {
                Some(ch) => {
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
                None => out.extend_from_slice("\u{fffd}".as_bytes()),
            }
        }
        i += used.max(1);
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The SQL value of a JSON node (`jsonReturnFromBlob`).
pub(super) fn to_sql(n: &Node) -> Result<Value> {
    Ok(match n {
        Node::Null => Value::Null,
        Node::True => Value::Integer(1),
        Node::False => Value::Integer(0),
        Node::Num(NumKind::Int | NumKind::Int5, t) => {
            let (neg, body) = match t.strip_prefix('-') {
                Some(d) => (true, d),
                None => (false, t.as_str()),
            };
            match dec_or_hex_to_i64(body) {
                (v, 0) => Value::Integer(if neg { v.wrapping_neg() } else { v }),
                (_, 3) if neg => Value::Integer(i64::MIN),
                (_, 1) => return Err(malformed()),
                _ => real_of(t)?,
            }
        }
        Node::Num(_, t) => real_of(t)?,
        Node::Str(StrKind::Text | StrKind::TextRaw, raw) => Value::Text(Arc::from(raw.as_str())),
        Node::Str(_, raw) => Value::Text(Arc::from(unescape(raw))),
        Node::Array(_) | Node::Object(_) => Value::Text(Arc::from(rendered(n))),
    })
}

fn real_of(t: &str) -> Result<Value> {
    let (r, class) = atof(t.as_bytes());
    if class.is_valid() {
        Ok(Value::real(r))
    } else {
        Err(malformed())
    }
}

/// `sqlite3DecOrHexToI64`: (value, code) with SQLite's codes (0 ok, 1 trailing text,
/// 2 overflow, 3 exactly 2^63).
fn dec_or_hex_to_i64(z: &str) -> (i64, i32) {
    let b = z.as_bytes();
    if b.len() >= 2 && b[0] == b'0' && (b[1] == b'x' || b[1] == b'X') {
        let digits = b[2..]
            .iter()
            .skip_while(|&&c| c == b'0')
            .copied()
            .collect::<Vec<u8>>();
        let hex: Vec<u8> = digits
            .iter()
            .take_while(|c| c.is_ascii_hexdigit())
            .copied()
            .collect();
        let mut u: u64 = 0;
        for &c in &hex {
            u = u
                .wrapping_mul(16)
                .wrapping_add(u64::from(super::scalar::hex_digit_value(c)));
        }
        if hex.len() > 16 {
            return (u as i64, 2);
        }
        if hex.len() != digits.len() {
            return (u as i64, 1);
        }
        return (u as i64, 0);
    }
    let (v, p) = atoi64(b);
    (v, p.code().max(0))
}

pub(super) fn type_name(n: &Node) -> &'static str {
    match n {
        Node::Null => "null",
        Node::True => "true",
        Node::False => "false",
        Node::Num(NumKind::Int | NumKind::Int5, _) => "integer",
        Node::Num(..) => "real",
        Node::Str(..) => "text",
        Node::Array(_) => "array",
        Node::Object(_) => "object",
    }
}

/// The decoded text of an object key.
pub(super) fn key_text(k: &Node) -> String {
    match k {
        Node::Str(StrKind::Text | StrKind::TextRaw, raw) => raw.clone(),
        Node::Str(_, raw) => unescape(raw),
        _ => String::new(),
    }
}

enum Lookup<'a> {
    Found(&'a Node),
    NotFound,
    PathError,
}

/// `jsonLookupStep` over the tree: the path after `$`.
fn lookup<'a>(mut node: &'a Node, path: &[u8]) -> Lookup<'a> {
    let mut p = 0;
    let at = |i: usize| path.get(i).copied().unwrap_or(0);
    loop {
        if p >= path.len() {
            return Lookup::Found(node);
        }
        match path[p] {
            b'.' => {
                p += 1;
                let key: String;
                if at(p) == b'"' {
                    let mut i = p + 1;
                    while at(i) != 0 && at(i) != b'"' {
                        if at(i) == b'\\' && at(i + 1) != 0 {
                            i += 1;
                        }
                        i += 1;
                    }
                    if at(i) != b'"' {
                        return Lookup::PathError;
                    }
                    key = unescape(&String::from_utf8_lossy(&path[p + 1..i]));
                    p = i + 1;
                } else {
                    let mut i = p;
                    while at(i) != 0 && at(i) != b'.' && at(i) != b'[' {
                        i += 1;
                    }
                    if i == p {
                        return Lookup::PathError;
                    }
                    key = String::from_utf8_lossy(&path[p..i]).into_owned();
                    p = i;
                }
                let Node::Object(members) = node else {
                    return Lookup::NotFound;
                };
                match members.iter().find(|(k, _)| key_text(k) == key) {
                    Some((_, v)) => node = v,
                    None => return Lookup::NotFound,
                }
            }
            b'[' => {
                let Node::Array(items) = node else {
                    return Lookup::NotFound;
                };
                let mut k: u32 = 0;
                let mut i = p + 1;
                while at(i).is_ascii_digit() {
                    k = k.wrapping_mul(10).wrapping_add(u32::from(at(i) - b'0'));
                    i += 1;
                }
                if i < p + 2 || at(i) != b']' {
                    if at(p + 1) != b'#' {
                        return Lookup::PathError;
                    }
                    k = items.len() as u32;
                    i = p + 2;
                    if at(p + 2) == b'-' && at(p + 3).is_ascii_digit() {
                        let mut nn: u32 = 0;
                        i = p + 3;
                        while at(i).is_ascii_digit() {
                            nn = nn.wrapping_mul(10).wrapping_add(u32::from(at(i) - b'0'));
                            i += 1;
                        }
                        if nn > k {
                            return Lookup::NotFound;
                        }
                        k -= nn;
                    }
                    if at(i) != b']' {
                        return Lookup::PathError;
                    }
                }
                match items.get(k as usize) {
                    Some(v) => node = v,
                    None => return Lookup::NotFound,
                }
                p = i + 1;
            }
            _ => return Lookup::PathError,
        }
    }
}

fn bad_path(path: &str) -> SqlError {
    SqlError::msg(format!("bad JSON path: '{}'", path.replace('\'', "''")))
}

/// Resolves a full path argument (`$...`) against a document.
pub(super) fn resolve<'a>(doc: &'a Node, path: &str) -> Result<Option<&'a Node>> {
    let Some(rest) = path.strip_prefix('$') else {
        return Err(bad_path(path));
    };
    match lookup(doc, rest.as_bytes()) {
        Lookup::Found(n) => Ok(Some(n)),
        Lookup::NotFound => Ok(None),
        Lookup::PathError => Err(bad_path(path)),
    }
}

fn text(s: String) -> Result<Value> {
    if s.len() > MAX_LENGTH_BYTES {
        return Err(SqlError::TooBig);
    }
    Ok(Value::Text(Arc::from(s)))
}

/// `json(X)`: X validated and minified.
pub fn json(_: &Ctx, args: &[Value]) -> Result<Value> {
    text_of(json_arg(args.first().unwrap_or(&Value::Null))?)
}

/// `jsonb(X)`: X as JSONB. JSON5 literals keep their form (`jsonb('0x1F')` is an INT5
/// element), and a blob that passes for JSONB is returned as it is, as in SQLite.
pub fn jsonb(_: &Ctx, args: &[Value]) -> Result<Value> {
    match args.first().unwrap_or(&Value::Null) {
        v @ Value::Blob(b) if jsonb::is_jsonb(b) => Ok(v.clone()),
        v => blob_of(json_arg(v)?),
    }
}

/// `json_pretty(X [, INDENT])`: X with one element per line, each level indented by
/// INDENT (four spaces when absent or NULL), as `jsonTranslateBlobToPrettyText`.
pub fn json_pretty(_: &Ctx, args: &[Value]) -> Result<Value> {
    let Some(doc) = json_arg(args.first().unwrap_or(&Value::Null))? else {
        return Ok(Value::Null);
    };
    let indent = args
        .get(1)
        .and_then(Value::to_text)
        .map_or_else(|| "    ".to_string(), |t| t.into_owned());
    let mut out = String::new();
    render_pretty(&doc, &indent, 0, &mut out)?;
    text(out)
}

fn render_pretty(n: &Node, indent: &str, level: usize, out: &mut String) -> Result<()> {
    let newline = |out: &mut String, level: usize| {
        out.push('\n');
        for _ in 0..level {
            out.push_str(indent);
        }
    };
    match n {
        Node::Array(items) if !items.is_empty() => {
            out.push('[');
            for (k, it) in items.iter().enumerate() {
                out.push_str(if k > 0 { "," } else { "" });
                newline(out, level + 1);
                render_pretty(it, indent, level + 1, out)?;
            }
            newline(out, level);
            out.push(']');
        }
        Node::Object(members) if !members.is_empty() => {
            out.push('{');
            for (k, (key, v)) in members.iter().enumerate() {
                out.push_str(if k > 0 { "," } else { "" });
                newline(out, level + 1);
                render(key, out);
                out.push_str(": ");
                render_pretty(v, indent, level + 1, out)?;
            }
            newline(out, level);
            out.push('}');
        }
        other => render(other, out),
    }
    // A long INDENT multiplies the text by the depth: stop as soon as it is too big.
    if out.len() > MAX_LENGTH_BYTES {
        return Err(SqlError::TooBig);
    }
    Ok(())
}

/// `json_valid(X [, FLAGS])`.
/// json_error_position(X) (SQLite 3.42+): 0 when X is well-formed JSON text (JSON5
/// included) or a well-formed JSONB blob, else the 1-based position of the first error —
/// in characters for text, in bytes (SQLite's approximate position) for a blob taken as
/// JSONB; NULL for NULL.
pub fn json_error_position(_: &Ctx, args: &[Value]) -> Result<Value> {
    let text_position = |z: &[u8]| match parse_text(z) {
        Ok(_) => 0,
        // Characters before the offset (the text ends at a NUL), and the one at it.
        Err(at) => {
            1 + z
                .iter()
                .take(at)
                .take_while(|&&b| b != 0)
                .filter(|&&b| b & 0xc0 != 0x80)
                .count()
        }
    };
    let position = match &args[0] {
        Value::Null => return Ok(Value::Null),
        Value::Blob(b) if jsonb::is_jsonb(b) => jsonb::first_error(b),
        Value::Blob(b) => text_position(b),
        other => text_position(other.to_text_or_empty().as_bytes()),
    };
    Ok(Value::Integer(position as i64))
}

pub fn json_valid(_: &Ctx, args: &[Value]) -> Result<Value> {
    // The flags are checked first, a NULL read as 0, as SQLite's sqlite3_value_int64.
    let flags = match args.get(1) {
        None => 1,
        Some(f) => {
            let f = f.to_i64();
            if !(1..=15).contains(&f) {
                return Err(SqlError::msg(
                    "FLAGS parameter to json_valid() must be between 1 and 15",
                ));
            }
            f
        }
    };
    Ok(match args.first().unwrap_or(&Value::Null) {
        Value::Null => Value::Null,
        // Flag 0x04: a blob that looks like JSONB; flag 0x08: one that is well-formed
        // throughout. Other blobs are tested as text (below).
        Value::Blob(b) if jsonb::is_jsonb(b) => Value::Integer(i64::from(
            flags & 0x04 != 0 || (flags & 0x08 != 0 && jsonb::is_valid(b)),
        )),
        Value::Blob(b) if flags & 0x3 != 0 => Value::Integer(i64::from(text_valid(b, flags))),
        v if flags & 0x3 != 0 => Value::Integer(i64::from(text_valid(
            v.to_text_or_empty().as_bytes(),
            flags,
        ))),
        _ => Value::Integer(0),
    })
}

/// json_valid's test of JSON text under flags 0x01 (RFC 8259) / 0x02 (JSON5 too).
fn text_valid(z: &[u8], flags: i64) -> bool {
    match parse_checked(z) {
        Some((_, nonstd)) => flags & 0x02 != 0 || !nonstd,
        None => false,
    }
}

/// Appends an SQL value as JSON (`jsonAppendSqlValue`); `is_json`: the value carries
/// SQLite's JSON subtype (it came straight from a JSON function), so text is embedded as
/// JSON rather than quoted.
fn append_sql_value_sub(out: &mut String, v: &Value, is_json: bool) -> Result<()> {
    match v {
        Value::Text(t) if is_json => out.push_str(t),
        Value::Null => out.push_str("null"),
        Value::Integer(i) => out.push_str(&i.to_string()),
        Value::Real(r) => out.push_str(&super::scalar::real_json_text(*r)),
        Value::Text(t) => append_json_string(out, t),
        Value::Blob(b) if jsonb::is_jsonb(b) => {
            render(&jsonb::decode(b).ok_or_else(malformed)?, out)
        }
        Value::Blob(_) => return Err(SqlError::msg("JSON cannot hold BLOB values")),
    }
    if out.len() > MAX_LENGTH_BYTES {
        return Err(SqlError::TooBig);
    }
    Ok(())
}

/// `jsonAppendString`: a JSON string literal for `s`.
fn append_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// `json_quote(X)`.
pub fn json_quote(_: &Ctx, args: &[Value]) -> Result<Value> {
    json_quote_sub(args, &[])
}

fn json_quote_sub(args: &[Value], is_json: &[bool]) -> Result<Value> {
    let mut s = String::new();
    append_sql_value_sub(
        &mut s,
        args.first().unwrap_or(&Value::Null),
        is_json.first() == Some(&true),
    )?;
    text(s)
}

/// `json_array(X...)`.
pub fn json_array(_: &Ctx, args: &[Value]) -> Result<Value> {
    json_array_sub(args, &[])
}

/// `jsonb_array(X...)`.
pub fn jsonb_array(_: &Ctx, args: &[Value]) -> Result<Value> {
    as_jsonb(json_array_sub(args, &[])?)
}

fn json_array_sub(args: &[Value], is_json: &[bool]) -> Result<Value> {
    let mut s = String::from("[");
    for (k, v) in args.iter().enumerate() {
        if k > 0 {
            s.push(',');
        }
        append_sql_value_sub(&mut s, v, is_json.get(k) == Some(&true))?;
    }
    s.push(']');
    text(s)
}

/// `json_object(K, V, ...)`.
pub fn json_object(_: &Ctx, args: &[Value]) -> Result<Value> {
    json_object_sub(args, &[])
}

/// `jsonb_object(K, V, ...)`.
pub fn jsonb_object(_: &Ctx, args: &[Value]) -> Result<Value> {
    as_jsonb(json_object_sub(args, &[])?)
}

fn json_object_sub(args: &[Value], is_json: &[bool]) -> Result<Value> {
    if args.len() & 1 != 0 {
        return Err(SqlError::msg(
            "json_object() requires an even number of arguments",
        ));
    }
    let mut s = String::from("{");
    for (k, pair) in args.chunks(2).enumerate() {
        let Value::Text(key) = &pair[0] else {
            return Err(SqlError::msg("json_object() labels must be TEXT"));
        };
        if k > 0 {
            s.push(',');
        }
        append_json_string(&mut s, key);
        s.push(':');
        append_sql_value_sub(&mut s, &pair[1], is_json.get(2 * k + 1) == Some(&true))?;
    }
    s.push('}');
    text(s)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum EditMode {
    Insert,
    Replace,
    Set,
    Remove,
}

enum EditOutcome {
    Done,
    NotFound,
    /// Remove: the element at the end of the path is to be deleted by its parent.
    RemoveMe,
    PathError,
}

/// Parses one path step at `path[p..]`: (key or index, next position).
enum PathStep {
    /// The key, the string node json_insert/json_set create for it (SQLite's
    /// `jsonLookupStep`: the text as written when quoted with escapes, else raw), and the
    /// next position.
    Key(String, Node, usize),
    /// Array position: Some(k) = explicit index; the `#`-relative form resolved against
    /// the array length by the caller.
    Index(IndexSpec, usize),
}

enum IndexSpec {
    At(u32),
    FromEnd(u32),
}

fn parse_step(path: &[u8], p: usize) -> Option<PathStep> {
    let at = |i: usize| path.get(i).copied().unwrap_or(0);
    match at(p) {
        b'.' => {
            let p = p + 1;
            if at(p) == b'"' {
                let mut i = p + 1;
                while at(i) != 0 && at(i) != b'"' {
                    if at(i) == b'\\' && at(i + 1) != 0 {
                        i += 1;
                    }
                    i += 1;
                }
                if at(i) != b'"' {
                    return None;
                }
                let written = String::from_utf8_lossy(&path[p + 1..i]).into_owned();
                let created = if written.contains('\\') {
                    Node::Str(StrKind::Text5, written.clone())
                } else {
                    Node::Str(StrKind::TextRaw, written.clone())
                };
                Some(PathStep::Key(unescape(&written), created, i + 1))
            } else {
                let mut i = p;
                while at(i) != 0 && at(i) != b'.' && at(i) != b'[' {
                    i += 1;
                }
                if i == p {
                    return None;
                }
                let key = String::from_utf8_lossy(&path[p..i]).into_owned();
                Some(PathStep::Key(
                    key.clone(),
                    Node::Str(StrKind::TextRaw, key),
                    i,
                ))
            }
        }
        b'[' => {
            let mut k: u32 = 0;
            let mut i = p + 1;
            while at(i).is_ascii_digit() {
                k = k.wrapping_mul(10).wrapping_add(u32::from(at(i) - b'0'));
                i += 1;
            }
            if i >= p + 2 && at(i) == b']' {
                return Some(PathStep::Index(IndexSpec::At(k), i + 1));
            }
            if at(p + 1) != b'#' {
                return None;
            }
            let mut nn: u32 = 0;
            i = p + 2;
            if at(p + 2) == b'-' && at(p + 3).is_ascii_digit() {
                i = p + 3;
                while at(i).is_ascii_digit() {
                    nn = nn.wrapping_mul(10).wrapping_add(u32::from(at(i) - b'0'));
                    i += 1;
                }
            }
            if at(i) != b']' {
                return None;
            }
            Some(PathStep::Index(IndexSpec::FromEnd(nn), i + 1))
        }
        _ => None,
    }
}

/// Builds the structure a path creates under json_insert/json_set (`$.a.b` on `{}`
/// creates `{"a":{"b":V}}`); None when the path cannot be created (an index past the
/// end of a new, empty array).
fn create_along(
    path: &[u8],
    p: usize,
    value: &Node,
    depth: usize,
) -> std::result::Result<Option<Node>, ()> {
    if p >= path.len() {
        return Ok(Some(value.clone()));
    }
    let mut container = if path[p] == b'.' {
        Node::Object(Vec::new())
    } else {
        Node::Array(Vec::new())
    };
    match edit_at_depth(&mut container, path, p, EditMode::Insert, value, depth) {
        EditOutcome::Done => Ok(Some(container)),
        EditOutcome::PathError => Err(()),
        _ => Ok(None),
    }
}

/// `jsonLookupStep` in edit mode, on the tree.
fn edit_at(node: &mut Node, path: &[u8], p: usize, mode: EditMode, value: &Node) -> EditOutcome {
    edit_at_depth(node, path, p, mode, value, 0)
}

fn edit_at_depth(
    node: &mut Node,
    path: &[u8],
    p: usize,
    mode: EditMode,
    value: &Node,
    depth: usize,
) -> EditOutcome {
    // Each path step recurses once; a path deeper than any parseable document finds
    // nothing (and cannot grow the stack without bound).
    if depth > JSON_MAX_DEPTH {
        return EditOutcome::NotFound;
    }
    if p >= path.len() {
        return match mode {
            EditMode::Remove => EditOutcome::RemoveMe,
            EditMode::Insert => EditOutcome::Done,
            EditMode::Replace | EditMode::Set => {
                *node = value.clone();
                EditOutcome::Done
            }
        };
    }
    // As jsonLookupStep: an index step on a non-array is "not found" before the index
    // itself is checked (a key step checks its key first).
    if path[p] == b'[' && !matches!(node, Node::Array(_)) {
        return EditOutcome::NotFound;
    }
    let Some(step) = parse_step(path, p) else {
        return EditOutcome::PathError;
    };
    match step {
        PathStep::Key(key, created, next) => {
            let Node::Object(members) = node else {
                return EditOutcome::NotFound;
            };
            if let Some(pos) = members.iter().position(|(k, _)| key_text(k) == key) {
                return match edit_at_depth(&mut members[pos].1, path, next, mode, value, depth + 1)
                {
                    EditOutcome::RemoveMe => {
                        members.remove(pos);
                        EditOutcome::Done
                    }
                    other => other,
                };
            }
            if matches!(mode, EditMode::Insert | EditMode::Set) {
                return match create_along(path, next, value, depth + 1) {
                    Ok(Some(v)) => {
                        members.push((created, v));
                        EditOutcome::Done
                    }
                    Ok(None) => EditOutcome::NotFound,
                    Err(()) => EditOutcome::PathError,
                };
            }
            EditOutcome::NotFound
        }
        PathStep::Index(spec, next) => {
            let Node::Array(items) = node else {
                return EditOutcome::NotFound;
            };
            let k = match spec {
                IndexSpec::At(k) => k as usize,
                IndexSpec::FromEnd(nn) => {
                    let len = items.len();
                    if nn as usize > len {
                        return EditOutcome::NotFound;
                    }
                    len - nn as usize
                }
            };
            if k < items.len() {
                return match edit_at_depth(&mut items[k], path, next, mode, value, depth + 1) {
                    EditOutcome::RemoveMe => {
                        items.remove(k);
                        EditOutcome::Done
                    }
                    other => other,
                };
            }
            if k == items.len() && matches!(mode, EditMode::Insert | EditMode::Set) {
                return match create_along(path, next, value, depth + 1) {
                    Ok(Some(v)) => {
                        items.push(v);
                        EditOutcome::Done
                    }
                    Ok(None) => EditOutcome::NotFound,
                    Err(()) => EditOutcome::PathError,
                };
            }
            EditOutcome::NotFound
        }
    }
}

/// A JSON node for an SQL value given to json_insert/json_replace/json_set
/// (`jsonFunctionArgToBlob`): JSON text parsed, JSONB decoded, other text kept raw.
fn node_of_sql(v: &Value, is_json: bool) -> Result<Node> {
    match v {
        Value::Text(t) if !is_json => return Ok(Node::Str(StrKind::TextRaw, t.to_string())),
        Value::Blob(b) if jsonb::is_jsonb(b) => return jsonb::decode(b).ok_or_else(malformed),
        _ => {}
    }
    // jsonFunctionArgToBlob writes infinities as 9e999 (json_array writes 9.0e+999).
    if let Value::Real(r) = v {
        if r.is_infinite() {
            let t = if *r < 0.0 { "-9e999" } else { "9e999" };
            return Ok(Node::Num(NumKind::Float, t.into()));
        }
    }
    let mut s = String::new();
    append_sql_value_sub(&mut s, v, is_json)?;
    parse(s.as_bytes()).ok_or_else(malformed)
}

/// The edited document of json_insert/json_replace/json_set/json_remove and their
/// jsonb_ forms; None for an SQL NULL result.
fn edit_fn(name: &str, mode: EditMode, args: &[Value], is_json: &[bool]) -> Result<Option<Node>> {
    if mode != EditMode::Remove && args.len() & 1 == 0 {
        return Err(SqlError::msg(format!(
            "{name}() needs an odd number of arguments"
        )));
    }
    let Some(mut doc) = json_arg(args.first().unwrap_or(&Value::Null))? else {
        return Ok(None);
    };
    let stride = if mode == EditMode::Remove { 1 } else { 2 };
    let mut i = 1;
    while i < args.len() {
        let Some(path) = args[i].to_text() else {
            // A NULL path leaves the document as it is for the set family and makes
            // json_remove's result NULL, as in SQLite.
            if mode == EditMode::Remove {
                return Ok(None);
            }
            i += stride;
            continue;
        };
        let value = if mode == EditMode::Remove {
            Node::Null
        } else {
            node_of_sql(&args[i + 1], is_json.get(i + 1) == Some(&true))?
        };
        let Some(rest) = path.strip_prefix('$') else {
            return Err(bad_path(&path));
        };
        match edit_at(&mut doc, rest.as_bytes(), 0, mode, &value) {
            EditOutcome::RemoveMe => return Ok(None),
            EditOutcome::PathError => return Err(bad_path(&path)),
            EditOutcome::Done | EditOutcome::NotFound => {}
        }
        i += stride;
    }
    Ok(Some(doc))
}

/// A function's JSON result as text.
fn text_of(n: Option<Node>) -> Result<Value> {
    n.map_or(Ok(Value::Null), |n| text(rendered(&n)))
}

/// A function's JSON result as JSONB.
fn blob_of(n: Option<Node>) -> Result<Value> {
    let Some(n) = n else {
        return Ok(Value::Null);
    };
    let b = jsonb::encode(&n);
    if b.len() > MAX_LENGTH_BYTES {
        return Err(SqlError::TooBig);
    }
    Ok(Value::blob(b))
}

/// The JSONB form of a JSON text result (SQLite's `jsonReturnStringAsBlob`: the jsonb_
/// functions that build text, such as jsonb_array, convert it at the end).
fn as_jsonb(v: Value) -> Result<Value> {
    match v {
        Value::Text(t) => blob_of(Some(parse(t.as_bytes()).ok_or_else(malformed)?)),
        other => Ok(other),
    }
}

/// `json_insert(X, P, V, ...)`: adds values where the paths do not exist yet.
pub fn json_insert(_: &Ctx, args: &[Value]) -> Result<Value> {
    text_of(edit_fn("json_insert", EditMode::Insert, args, &[])?)
}

/// `jsonb_insert(...)`: json_insert returning JSONB.
pub fn jsonb_insert(_: &Ctx, args: &[Value]) -> Result<Value> {
    blob_of(edit_fn("jsonb_insert", EditMode::Insert, args, &[])?)
}

/// `json_replace(X, P, V, ...)`: overwrites values where the paths exist.
pub fn json_replace(_: &Ctx, args: &[Value]) -> Result<Value> {
    text_of(edit_fn("json_replace", EditMode::Replace, args, &[])?)
}

/// `jsonb_replace(...)`: json_replace returning JSONB.
pub fn jsonb_replace(_: &Ctx, args: &[Value]) -> Result<Value> {
    blob_of(edit_fn("jsonb_replace", EditMode::Replace, args, &[])?)
}

/// `json_set(X, P, V, ...)`: inserts or overwrites.
pub fn json_set(_: &Ctx, args: &[Value]) -> Result<Value> {
    text_of(edit_fn("json_set", EditMode::Set, args, &[])?)
}

/// `jsonb_set(...)`: json_set returning JSONB.
pub fn jsonb_set(_: &Ctx, args: &[Value]) -> Result<Value> {
    blob_of(edit_fn("jsonb_set", EditMode::Set, args, &[])?)
}

/// `json_remove(X, P, ...)`: deletes the elements at the paths (in order).
pub fn json_remove(_: &Ctx, args: &[Value]) -> Result<Value> {
    text_of(edit_fn("json_remove", EditMode::Remove, args, &[])?)
}

/// `jsonb_remove(...)`: json_remove returning JSONB.
pub fn jsonb_remove(_: &Ctx, args: &[Value]) -> Result<Value> {
    blob_of(edit_fn("jsonb_remove", EditMode::Remove, args, &[])?)
}

/// RFC 7396 merge patch (`jsonMergePatch`).
fn merge_patch(target: Node, patch: &Node) -> Option<Node> {
    let Node::Object(pm) = patch else {
        return Some(patch.clone());
    };
    let mut tm = match target {
        Node::Object(m) => m,
        _ => Vec::new(),
    };
    for (pk, pv) in pm {
        let key = key_text(pk);
        let pos = tm.iter().position(|(k, _)| key_text(k) == key);
        match (pos, pv) {
            (Some(i), Node::Null) => {
                tm.remove(i);
            }
            (None, Node::Null) => {}
            (Some(i), pv) => {
                let old = std::mem::replace(&mut tm[i].1, Node::Null);
                tm[i].1 = merge_patch(old, pv)?;
            }
            (None, pv) => {
                let v = merge_patch(Node::Null, pv)?;
                tm.push((pk.clone(), v));
            }
        }
    }
    Some(Node::Object(tm))
}

/// `json_patch(T, P)`: RFC 7396 merge patch of T by P.
pub fn json_patch(_: &Ctx, args: &[Value]) -> Result<Value> {
    text_of(patch_fn(args)?)
}

/// `jsonb_patch(T, P)`: json_patch returning JSONB.
pub fn jsonb_patch(_: &Ctx, args: &[Value]) -> Result<Value> {
    blob_of(patch_fn(args)?)
}

fn patch_fn(args: &[Value]) -> Result<Option<Node>> {
    let (Some(t), Some(p)) = (args.first(), args.get(1)) else {
        return Ok(None);
    };
    let (Some(t), Some(p)) = (json_arg(t)?, json_arg(p)?) else {
        return Ok(None);
    };
    Ok(merge_patch(t, &p))
}

/// Whether `json_extract(doc, path)` selects an array or an object.
fn extract_is_container(args: &[Value]) -> bool {
    let (Some(d), Some(p)) = (args.first(), args.get(1).and_then(Value::to_text)) else {
        return false;
    };
    match json_arg(d) {
        Ok(Some(doc)) => matches!(
            resolve(&doc, &p),
            Ok(Some(Node::Array(_) | Node::Object(_)))
        ),
        _ => false,
    }
}

/// Whether a call of `def` may return a value carrying the JSON subtype
/// ([`call_with_subtypes`] says whether this one does).
pub fn may_return_subtype(def: &super::FuncDef) -> bool {
    !def.is_user()
        && matches!(
            def.name,
            "json_array"
                | "json_object"
                | "json_quote"
                | "json_insert"
                | "json_replace"
                | "json_set"
                | "json_remove"
                | "json_patch"
                | "json"
                | "->"
                | "json_extract"
        )
}

/// Calls `def` with SQLite's JSON subtype semantics, for executors that track subtypes.
///
/// SQLite tags the results of JSON functions with a "JSON" subtype that lives only while
/// a value passes directly from one function to another: `json_array(json('[1]'))` is
/// `[[1]]` while `json_array('[1]')` is `["[1]"]`. `arg_is_json[i]` says whether argument
/// `i` carries the subtype (missing entries mean no); the result says whether the
/// returned value does. Functions other than the JSON ones ignore subtypes and return
/// none, as in SQLite (subtypes do not survive storage, CAST or operators).
pub fn call_with_subtypes(
    def: &super::FuncDef,
    ctx: &Ctx,
    args: &[Value],
    arg_is_json: &[bool],
) -> Result<(Value, bool)> {
    let edit = |mode| edit_fn(def.name, mode, args, arg_is_json);
    // The jsonb_ forms return blobs, which need no subtype to be read as JSON.
    match def.name {
        "json_array" => Ok((json_array_sub(args, arg_is_json)?, true)),
        "jsonb_array" => Ok((as_jsonb(json_array_sub(args, arg_is_json)?)?, false)),
        "json_object" => Ok((json_object_sub(args, arg_is_json)?, true)),
        "jsonb_object" => Ok((as_jsonb(json_object_sub(args, arg_is_json)?)?, false)),
        "json_quote" => Ok((json_quote_sub(args, arg_is_json)?, true)),
        "json_insert" => Ok((text_of(edit(EditMode::Insert)?)?, true)),
        "jsonb_insert" => Ok((blob_of(edit(EditMode::Insert)?)?, false)),
        "json_replace" => Ok((text_of(edit(EditMode::Replace)?)?, true)),
        "jsonb_replace" => Ok((blob_of(edit(EditMode::Replace)?)?, false)),
        "json_set" => Ok((text_of(edit(EditMode::Set)?)?, true)),
        "jsonb_set" => Ok((blob_of(edit(EditMode::Set)?)?, false)),
        "json_remove" | "json_patch" | "json_pretty" => Ok((def.call(ctx, args)?, true)),
        "json" | "->" => Ok((def.call(ctx, args)?, true)),
        "json_extract" => {
            let v = def.call(ctx, args)?;
            // One path: JSON only when the element is an array or object; several paths:
            // always a JSON array.
            let json =
                args.len() > 2 || (matches!(v, Value::Text(_)) && extract_is_container(args));
            Ok((v, json))
        }
        _ => Ok((def.call(ctx, args)?, false)),
    }
}

/// `json_type(X [, P])`.
pub fn json_type(_: &Ctx, args: &[Value]) -> Result<Value> {
    let Some(doc) = json_arg(args.first().unwrap_or(&Value::Null))? else {
        return Ok(Value::Null);
    };
    let node = match args.get(1) {
        None => Some(&doc),
        Some(Value::Null) => return Ok(Value::Null),
        Some(p) => resolve(&doc, &p.to_text_or_empty())?,
    };
    Ok(node.map_or(Value::Null, |n| Value::text(type_name(n))))
}

/// `json_array_length(X [, P])`.
pub fn json_array_length(_: &Ctx, args: &[Value]) -> Result<Value> {
    let Some(doc) = json_arg(args.first().unwrap_or(&Value::Null))? else {
        return Ok(Value::Null);
    };
    let node = match args.get(1) {
        None => Some(&doc),
        Some(Value::Null) => return Ok(Value::Null),
        Some(p) => resolve(&doc, &p.to_text_or_empty())?,
    };
    Ok(match node {
        None => Value::Null,
        Some(Node::Array(items)) => Value::Integer(items.len() as i64),
        Some(_) => Value::Integer(0),
    })
}

/// `json_extract(X, P...)`: one path gives an SQL value; several give a JSON array.
pub fn json_extract(_: &Ctx, args: &[Value]) -> Result<Value> {
    extract(args, false)
}

/// `jsonb_extract(X, P...)`: as json_extract, with arrays and objects as JSONB.
pub fn jsonb_extract(_: &Ctx, args: &[Value]) -> Result<Value> {
    extract(args, true)
}

fn extract(args: &[Value], as_blob: bool) -> Result<Value> {
    if args.len() < 2 {
        return Ok(Value::Null);
    }
    let Some(doc) = json_arg(&args[0])? else {
        return Ok(Value::Null);
    };
    if args.len() == 2 {
        let Some(p) = args[1].to_text() else {
            return Ok(Value::Null);
        };
        return match resolve(&doc, &p)? {
            Some(n @ (Node::Array(_) | Node::Object(_))) if as_blob => blob_of(Some(n.clone())),
            Some(n) => to_sql(n),
            None => Ok(Value::Null),
        };
    }
    let mut s = String::from("[");
    for (k, a) in args[1..].iter().enumerate() {
        let Some(p) = a.to_text() else {
            return Ok(Value::Null);
        };
        if k > 0 {
            s.push(',');
        }
        match resolve(&doc, &p)? {
            Some(n) => render(n, &mut s),
            None => s.push_str("null"),
        }
    }
    s.push(']');
    if as_blob {
        as_jsonb(text(s)?)
    } else {
        text(s)
    }
}

/// The abbreviated path of `->`/`->>`: `$...` as is, an integer N as `$[N]` (`$[#N]` for
/// negative N), a label of ASCII letters, digits and `_` as `$.label`, `[N]` as `$[N]`,
/// anything else as `$."text"`.
fn arrow_path(p: &Value, t: &str) -> String {
    if t.starts_with('$') {
        return t.to_string();
    }
    if matches!(p, Value::Integer(_)) {
        if t.starts_with('-') {
            format!("$[#{t}]")
        } else {
            format!("$[{t}]")
        }
    } else if t.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        format!("$.{t}")
    } else if t.starts_with('[') && t.len() >= 3 && t.ends_with(']') {
        format!("${t}")
    } else {
        format!("$.\"{t}\"")
    }
}

fn arrow(args: &[Value], as_json: bool) -> Result<Value> {
    let Some(doc) = json_arg(args.first().unwrap_or(&Value::Null))? else {
        return Ok(Value::Null);
    };
    let Some(p) = args.get(1) else {
        return Ok(Value::Null);
    };
    let Some(t) = p.to_text() else {
        return Ok(Value::Null);
    };
    let path = arrow_path(p, &t);
    // Errors name the path as the user wrote it.
    let found = resolve(&doc, &path).map_err(|_| bad_path(&t))?;
    Ok(match found {
        None => Value::Null,
        Some(n) if as_json => Value::Text(Arc::from(rendered(n))),
        Some(n) => to_sql(n)?,
    })
}

/// `X -> P`: the selected element as JSON text.
pub fn arrow_json(_: &Ctx, args: &[Value]) -> Result<Value> {
    arrow(args, true)
}

/// `X ->> P`: the selected element as an SQL value.
pub fn arrow_sql(_: &Ctx, args: &[Value]) -> Result<Value> {
    arrow(args, false)
}

/// `json_group_array(X)`, or `jsonb_group_array(X)` with `blob`.
pub struct GroupArray {
    acc: Option<String>,
    blob: bool,
}

impl GroupArray {
    pub fn new(blob: bool) -> Self {
        GroupArray { acc: None, blob }
    }
}

/// A group aggregate's text, as JSONB for the jsonb_ forms once a row was added (over no
/// rows SQLite returns the text `[]` or `{}` from both forms).
fn group_result(s: String, blob: bool) -> Result<Value> {
    let v = text(s)?;
    if blob {
        as_jsonb(v)
    } else {
        Ok(v)
    }
}

/// jsonGroupInverse, for both group aggregates: removes the first element (or label and
/// value) with the comma after it, the first comma outside strings and nested containers;
/// with no such comma, everything after the opening bracket. It takes out an element per
/// call whatever the row, so a json_group_object() row with a NULL label, which added
/// nothing, still removes one, as in SQLite.
fn group_inverse(acc: &mut Option<String>) {
    let Some(acc) = acc else {
        return;
    };
    let z = acc.as_bytes();
    let (mut in_str, mut nest) = (false, 0i32);
    let mut i = 1;
    while i < z.len() && (z[i] != b',' || in_str || nest != 0) {
        match z[i] {
            b'"' => in_str = !in_str,
            b'\\' => i += 1,
            b'{' | b'[' if !in_str => nest += 1,
            b'}' | b']' if !in_str => nest -= 1,
            _ => {}
        }
        i += 1;
    }
    if i < z.len() {
        // `z[i]` is an ASCII comma: a character boundary.
        acc.drain(1..=i);
    } else {
        acc.truncate(1);
    }
}

impl Aggregate for GroupArray {
    fn step(&mut self, args: &[Value]) -> Result<()> {
        self.step_subtyped(args, &[])
    }
    fn step_subtyped(&mut self, args: &[Value], json: &[bool]) -> Result<()> {
        let acc = self.acc.get_or_insert_with(|| String::from("["));
        if acc.len() > 1 {
            acc.push(',');
        }
        let is_json = json.first().copied().unwrap_or(false);
        append_sql_value_sub(acc, args.first().unwrap_or(&Value::Null), is_json)
    }
    fn finalize(&mut self) -> Result<Value> {
        let blob = self.blob && self.acc.is_some();
        let mut s = self.acc.take().unwrap_or_else(|| String::from("["));
        s.push(']');
        group_result(s, blob)
    }
    fn value(&self) -> Result<Value> {
        let mut s = self.acc.clone().unwrap_or_else(|| String::from("["));
        s.push(']');
        group_result(s, self.blob && self.acc.is_some())
    }
    fn inverse(&mut self, _args: &[Value]) -> Result<()> {
        group_inverse(&mut self.acc);
        Ok(())
    }
}

/// `json_group_object(K, V)` (`jsonb_group_object` with `blob`): rows with a NULL label
/// add nothing (but count as a row: the jsonb_ form then gives an empty JSONB object).
pub struct GroupObject {
    acc: Option<String>,
    blob: bool,
}

impl GroupObject {
    pub fn new(blob: bool) -> Self {
        GroupObject { acc: None, blob }
    }
}

impl Aggregate for GroupObject {
    fn step(&mut self, args: &[Value]) -> Result<()> {
        self.step_subtyped(args, &[])
    }
    fn step_subtyped(&mut self, args: &[Value], json: &[bool]) -> Result<()> {
        let key = args.first().unwrap_or(&Value::Null);
        let acc = self.acc.get_or_insert_with(|| String::from("{"));
        let Some(k) = key.to_text() else {
            return Ok(());
        };
        if acc.len() > 1 {
            acc.push(',');
        }
        append_json_string(acc, &k);
        acc.push(':');
        let is_json = json.get(1).copied().unwrap_or(false);
        append_sql_value_sub(acc, args.get(1).unwrap_or(&Value::Null), is_json)
    }
    fn finalize(&mut self) -> Result<Value> {
        let blob = self.blob && self.acc.is_some();
        let mut s = self.acc.take().unwrap_or_else(|| String::from("{"));
        s.push('}');
        group_result(s, blob)
    }
    fn value(&self) -> Result<Value> {
        let mut s = self.acc.clone().unwrap_or_else(|| String::from("{"));
        s.push('}');
        group_result(s, self.blob && self.acc.is_some())
    }
    fn inverse(&mut self, _args: &[Value]) -> Result<()> {
        group_inverse(&mut self.acc);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subtypes_nest() {
        use crate::func::{lookup, NoConnection};
        let ctx = Ctx::new(&NoConnection);
        let inner = Value::text("[1]");
        let arr = lookup("json_array", 1)
            .map(|d| call_with_subtypes(d, &ctx, std::slice::from_ref(&inner), &[true]));
        assert!(matches!(arr, Ok(Ok((Value::Text(t), true))) if &*t == "[[1]]"));
        let plain = lookup("json_array", 1).and_then(|d| d.call(&ctx, &[inner]));
        assert!(matches!(plain, Ok(Value::Text(t)) if &*t == "[\"[1]\"]"));
    }

    #[test]
    fn parse_render_roundtrip() {
        let n = parse(br#" { "a" : [1, 2.50, "x\u0041"], "b":null } "#);
        assert_eq!(
            n.map(|n| rendered(&n)).as_deref(),
            Some(r#"{"a":[1,2.50,"x\u0041"],"b":null}"#)
        );
        assert!(matches!(parse_checked(b"[1,]"), Some((_, true))));
        assert!(parse(b"[1,,2]").is_none());
        assert_eq!(
            parse(b"{a:.5, 'b':0x1F}").map(|n| rendered(&n)).as_deref(),
            Some(r#"{"a":0.5,"b":31}"#)
        );
        assert!(parse(b"01").is_none());
        let deep = "[".repeat(2000) + &"]".repeat(2000);
        assert!(parse(deep.as_bytes()).is_none());
    }
}
