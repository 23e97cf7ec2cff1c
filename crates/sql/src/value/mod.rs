//! SQLite's dynamic values: storage classes, affinity, conversions, comparison, CAST.
//!
//! A [`Value`] is one of SQLite's five storage classes. Text and blobs are reference
//! counted (`Arc<str>`, `Arc<[u8]>`) so the executor can copy values between registers,
//! rows and aggregate states with a pointer increment; numbers are inline. `Value` is
//! `Send + Sync`.
//!
//! Invariants:
//! 1. A `Real` is never NaN: every operation that could produce NaN yields `Null` instead
//!    (SQLite stores NaN as NULL). Infinity is a valid `Real`.
//! 2. `Text` is valid UTF-8. SQLite can carry invalid UTF-8 in TEXT values (e.g. after
//!    `CAST(x'ff' AS TEXT)`); parlite replaces invalid sequences with U+FFFD when bytes
//!    become text. This is the one deliberate divergence; it only shows in values that
//!    were not valid text to begin with.
//! 3. Every function here is total: no input panics or overflows, and nothing allocates
//!    past [`MAX_LENGTH_BYTES`] (SQLITE_MAX_LENGTH) for one value.
//!
//! The API at a glance: [`Value`] and its C-API conversions (`to_i64`, `to_f64`,
//! `to_text`, `to_bytes`); [`affinity_of_type_name`], [`Value::apply_affinity`] (storing
//! into a column), [`Value::cast`]; [`Value::compare`] (sort order under a collation),
//! [`comparison_affinity`] + [`compare_op`] / [`is_op`] (SQL comparison operators);
//! [`arith`], [`negate`], [`bit_op`], [`bit_not`], [`concat()`] (operators); [`truth`],
//! [`and3`], [`or3`], [`not3`], [`bool_value`] (three-valued logic); [`CollatedKey`]
//! (hash/ordered keys with SQL equality); [`num`] (SQLite's exact text↔number
//! conversions, including [`num::decimal_literal`] for the parser); [`SqlError`] (the
//! layer's error, with SQLite's wording and result codes).
//!
//! Conversions follow SQLite's C code (vdbemem.c, vdbe.c, util.c) rather than the prose of
//! datatype3.html where they differ: e.g. `CAST('1e3' AS INTEGER)` is 1 (SQLite takes the
//! integer prefix of text), while `CAST('1e3' AS NUMERIC)` is 1000.

mod error;
mod key;
pub mod num;
mod ops;

pub use error::{codes, Result, SqlError};
pub use key::CollatedKey;
pub use ops::*;

use crate::collation::Collation;
use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

/// SQLITE_MAX_LENGTH's default: the largest string or blob, in bytes. Functions that build
/// values (zeroblob, randomblob, replace, printf, ||, group_concat...) return
/// [`SqlError::TooBig`] past it instead of allocating.
pub const MAX_LENGTH_BYTES: usize = 1_000_000_000;

/// One SQLite value. Cloning is O(1).
#[derive(Clone, Default)]
pub enum Value {
    #[default]
    Null,
    Integer(i64),
    /// Never NaN (invariant 1).
    Real(f64),
    Text(Arc<str>),
    Blob(Arc<[u8]>),
}

/// Overwrites `text` with `s` when they have the same length and nothing else holds `text`
/// (so no reader sees it change); false, `text` untouched, otherwise.
#[inline]
pub fn refill_text(text: &mut Arc<str>, s: &str) -> bool {
    match Arc::get_mut(text) {
        Some(buf) if buf.len() == s.len() => {
            // SAFETY: the bytes written are the whole of a `str` of the buffer's length,
            // so the buffer holds valid UTF-8 again when the borrow ends.
            unsafe { buf.as_bytes_mut() }.copy_from_slice(s.as_bytes());
            true
        }
        _ => false,
    }
}

/// `b` as a `str` when it is UTF-8 (invariant 2), ASCII checked first: `<[u8]>::is_ascii`
/// reads 16 bytes a step, ~27 instructions for a 64-byte string where `str::from_utf8`
/// took ~75 aligned and ~170 unaligned (callgrind; hc_mixed's 64-character TEXT, 0.67k
/// instructions of a 10-row scan: BENCHMARKS.md "hcscan6"). Other text is validated
/// in full.
#[inline]
pub fn utf8(b: &[u8]) -> Option<&str> {
    if b.is_ascii() {
        // SAFETY: every ASCII byte sequence is valid UTF-8.
        return Some(unsafe { std::str::from_utf8_unchecked(b) });
    }
    std::str::from_utf8(b).ok()
}

/// Whether `refill_text` would take a string of `len` bytes into `text` (two loads, no
/// atomic read-modify-write): a caller checks it before validating the bytes.
#[inline]
pub fn refillable(text: &Arc<str>, len: usize) -> bool {
    text.len() == len && Arc::strong_count(text) == 1 && Arc::weak_count(text) == 0
}

/// `refill_text` for a BLOB.
#[inline]
pub fn refill_blob(blob: &mut Arc<[u8]>, b: &[u8]) -> bool {
    match Arc::get_mut(blob) {
        Some(buf) if buf.len() == b.len() => {
            buf.copy_from_slice(b);
            true
        }
        _ => false,
    }
}

/// SQLite's fundamental datatypes (`sqlite3_value_type`): SQLITE_INTEGER=1, FLOAT=2,
/// TEXT=3, BLOB=4, NULL=5.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ValueType {
    Integer = 1,
    Real = 2,
    Text = 3,
    Blob = 4,
    Null = 5,
}

/// Column / expression affinity (datatype3.html §3). An expression with no affinity is
/// `Option::<Affinity>::None` in the APIs below; `Blob` is the affinity of a column declared
/// without a type or with BLOB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Affinity {
    Blob,
    Text,
    Numeric,
    Integer,
    Real,
}

impl Affinity {
    pub fn is_numeric(self) -> bool {
        matches!(self, Affinity::Numeric | Affinity::Integer | Affinity::Real)
    }
}

/// Affinity of a declared column type (datatype3.html §3.1), also used for CAST targets.
/// Rules in order: contains "INT" → INTEGER; "CHAR", "CLOB" or "TEXT" → TEXT; "BLOB" or
/// empty → BLOB; "REAL", "FLOA" or "DOUB" → REAL; anything else → NUMERIC. Case-insensitive.
pub fn affinity_of_type_name(type_name: &str) -> Affinity {
    let upper = type_name.to_ascii_uppercase();
    let has = |s: &str| upper.contains(s);
    if has("INT") {
        Affinity::Integer
    } else if has("CHAR") || has("CLOB") || has("TEXT") {
        Affinity::Text
    } else if has("BLOB") || type_name.trim().is_empty() {
        Affinity::Blob
    } else if has("REAL") || has("FLOA") || has("DOUB") {
        Affinity::Real
    } else {
        Affinity::Numeric
    }
}

/// Which affinity a binary comparison applies to its operands (datatype3.html §4.2,
/// `sqlite3CompareAffinity`): both operands with a column affinity → NUMERIC if either is
/// numeric, otherwise none; exactly one with an affinity → that one; neither → none.
pub fn comparison_affinity(lhs: Option<Affinity>, rhs: Option<Affinity>) -> Option<Affinity> {
    match (lhs, rhs) {
        (Some(a), Some(b)) => {
            if a.is_numeric() || b.is_numeric() {
                Some(Affinity::Numeric)
            } else {
                None
            }
        }
        (Some(a), None) | (None, Some(a)) => match a {
            Affinity::Blob => None,
            a => Some(a),
        },
        (None, None) => None,
    }
}

impl Value {
    /// A text value.
    pub fn text(s: impl Into<Arc<str>>) -> Value {
        Value::Text(s.into())
    }

    /// A blob value.
    pub fn blob(b: impl Into<Arc<[u8]>>) -> Value {
        Value::Blob(b.into())
    }

    /// A real, mapping NaN to NULL (invariant 1).
    #[inline]
    pub fn real(r: f64) -> Value {
        if r.is_nan() {
            Value::Null
        } else {
            Value::Real(r)
        }
    }

    /// Text from bytes that may not be UTF-8 (invariant 2).
    pub fn text_from_bytes(b: &[u8]) -> Value {
        // `utf8` validates ASCII 16 bytes at a time; `from_utf8_lossy`'s chunk iterator
        // goes byte by byte (it was 2.1% of the instructions of a speedtest1 profile).
        // Invalid bytes still take the lossy path.
        if let Some(s) = utf8(b) {
            return Value::Text(Arc::from(s));
        }
        match String::from_utf8_lossy(b) {
            Cow::Borrowed(s) => Value::Text(Arc::from(s)),
            Cow::Owned(s) => Value::Text(Arc::from(s)),
        }
    }

    /// Makes `self` equal to `v`. A TEXT or BLOB of `v`'s length that nobody else holds
    /// is overwritten in place, so a buffer reused row after row (a scan's slot, a
    /// statement's recycled result row) costs a copy instead of an allocation and a free;
    /// otherwise `v` is cloned (a count increment).
    #[inline]
    pub fn assign(&mut self, v: &Value) {
        let done = match (&mut *self, v) {
            (Value::Text(old), Value::Text(new)) => refill_text(old, new),
            (Value::Blob(old), Value::Blob(new)) => refill_blob(old, new),
            _ => false,
        };
        if !done {
            *self = v.clone();
        }
    }

    #[inline]
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    pub fn value_type(&self) -> ValueType {
        match self {
            Value::Null => ValueType::Null,
            Value::Integer(_) => ValueType::Integer,
            Value::Real(_) => ValueType::Real,
            Value::Text(_) => ValueType::Text,
            Value::Blob(_) => ValueType::Blob,
        }
    }

    /// The name `typeof()` returns.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Integer(_) => "integer",
            Value::Real(_) => "real",
            Value::Text(_) => "text",
            Value::Blob(_) => "blob",
        }
    }

    /// `sqlite3_value_int64` / `sqlite3_column_int64`: integers as is, reals truncated
    /// toward zero and saturated, text and blobs by their integer prefix ("12abc" → 12,
    /// "1e3" → 1), NULL → 0.
    pub fn to_i64(&self) -> i64 {
        match self {
            Value::Null => 0,
            Value::Integer(i) => *i,
            Value::Real(r) => num::real_to_i64(*r),
            Value::Text(s) => num::atoi64(s.as_bytes()).0,
            Value::Blob(b) => num::atoi64(b).0,
        }
    }

    /// `sqlite3_column_int`: the low 32 bits of [`Value::to_i64`], as SQLite's C cast does.
    pub fn to_i32(&self) -> i32 {
        self.to_i64() as i32
    }

    /// `sqlite3_value_double` / `sqlite3_column_double`: text and blobs by their longest
    /// numeric prefix ("1.5e3x" → 1500.0), NULL → 0.0.
    pub fn to_f64(&self) -> f64 {
        match self {
            Value::Null => 0.0,
            Value::Integer(i) => *i as f64,
            Value::Real(r) => *r,
            Value::Text(s) => num::atof(s.as_bytes()).0,
            Value::Blob(b) => num::atof(b).0,
        }
    }

    /// `sqlite3_value_text` / `sqlite3_column_text`: None for NULL, numbers rendered as
    /// SQLite renders them (reals as `%!.15g`), blobs as their bytes (lossy UTF-8).
    pub fn to_text(&self) -> Option<Cow<'_, str>> {
        match self {
            Value::Null => None,
            Value::Integer(i) => Some(Cow::Owned(i.to_string())),
            Value::Real(r) => Some(Cow::Owned(num::real_to_text(*r))),
            Value::Text(s) => Some(Cow::Borrowed(s)),
            Value::Blob(b) => Some(String::from_utf8_lossy(b)),
        }
    }

    /// Appends [`Value::to_text`]'s text to `out` without building it first (no `String`
    /// per number); nothing for NULL.
    pub fn push_text(&self, out: &mut String) {
        match self {
            Value::Null => {}
            Value::Integer(i) => num::push_int_text(out, *i),
            Value::Real(r) => num::push_real_text(out, *r),
            Value::Text(s) => out.push_str(s),
            Value::Blob(b) => out.push_str(&String::from_utf8_lossy(b)),
        }
    }

    /// Like [`Value::to_text`] with NULL as the empty string (what string functions see).
    pub fn to_text_or_empty(&self) -> Cow<'_, str> {
        self.to_text().unwrap_or(Cow::Borrowed(""))
    }

    /// `sqlite3_value_blob` / `sqlite3_column_blob`: the bytes of text and blobs, the
    /// text rendering of numbers; None for NULL.
    pub fn to_bytes(&self) -> Option<Cow<'_, [u8]>> {
        match self {
            Value::Null => None,
            Value::Text(s) => Some(Cow::Borrowed(s.as_bytes())),
            Value::Blob(b) => Some(Cow::Borrowed(b)),
            other => other
                .to_text()
                .map(|t| Cow::Owned(t.into_owned().into_bytes())),
        }
    }

    /// `sqlite3_value_bytes`: length in bytes of the text or blob form.
    pub fn byte_len(&self) -> usize {
        match self {
            Value::Null => 0,
            Value::Text(s) => s.len(),
            Value::Blob(b) => b.len(),
            other => other.to_text().map_or(0, |t| t.len()),
        }
    }

    /// The value converted to a number for arithmetic (`numericType` in vdbe.c): text and
    /// blobs become an integer when their text is an integer that fits ('12abc' → 12,
    /// 'abc' → 0), a real otherwise; None for NULL.
    pub fn to_numeric_operand(&self) -> Option<Numeric> {
        match self {
            Value::Null => None,
            Value::Integer(i) => Some(Numeric::Int(*i)),
            Value::Real(r) => Some(Numeric::Real(*r)),
            Value::Text(s) => Some(text_numeric_type(s.as_bytes())),
            Value::Blob(b) => Some(text_numeric_type(b)),
        }
    }

    /// Applies a column's affinity to a value being stored in it (datatype3.html §3,
    /// `applyAffinity`). TEXT: numbers become text. NUMERIC/INTEGER: text that is a
    /// well-formed number becomes INTEGER when exact ("3.0" → 3, "1e3" → 1000), else REAL;
    /// reals with an exact integer value become INTEGER. REAL: like NUMERIC, then integers
    /// become REAL. BLOB: unchanged. NULL and blobs are never converted.
    pub fn apply_affinity(self, affinity: Affinity) -> Value {
        match affinity {
            Affinity::Blob => self,
            Affinity::Text => match self {
                Value::Integer(_) | Value::Real(_) => {
                    Value::Text(Arc::from(self.to_text_or_empty().as_ref()))
                }
                v => v,
            },
            Affinity::Numeric | Affinity::Integer => match self {
                Value::Text(ref s) => match numeric_affinity_of_text(s.as_bytes(), true) {
                    Some(v) => v,
                    None => self,
                },
                Value::Real(r) => integer_affinity(r),
                v => v,
            },
            Affinity::Real => match self {
                Value::Text(ref s) => match numeric_affinity_of_text(s.as_bytes(), true) {
                    Some(Value::Integer(i)) => Value::Real(i as f64),
                    Some(v) => v,
                    None => self,
                },
                Value::Integer(i) => Value::Real(i as f64),
                v => v,
            },
        }
    }

    /// Applies the affinity chosen by [`comparison_affinity`] to one operand of a
    /// comparison (vdbe.c OP_Lt..OP_Ge): numeric affinities convert well-formed numeric
    /// text to a number (keeping "3.0" a real); TEXT converts numbers to text.
    pub fn apply_comparison_affinity(self, affinity: Option<Affinity>) -> Value {
        match affinity {
            Some(a) if a.is_numeric() => match self {
                Value::Text(ref s) => match numeric_affinity_of_text(s.as_bytes(), false) {
                    Some(v) => v,
                    None => self,
                },
                v => v,
            },
            Some(Affinity::Text) => self.apply_affinity(Affinity::Text),
            _ => self,
        }
    }

    /// `CAST(self AS <type with this affinity>)` (lang_expr.html "CAST expressions",
    /// `sqlite3VdbeMemCast`). NULL stays NULL.
    /// - BLOB: text/numbers reinterpret their text bytes as a blob.
    /// - TEXT: numbers rendered, blobs reinterpreted as text.
    /// - INTEGER: integer prefix of text ('12abc' → 12, '1e3' → 1), reals truncated and
    ///   saturated.
    /// - REAL: longest numeric prefix of text.
    /// - NUMERIC: text → INTEGER if its prefix is an integer that fits or the real is an
    ///   exact small integer, else REAL; numbers unchanged.
    pub fn cast(self, affinity: Affinity) -> Value {
        match (affinity, self) {
            (_, Value::Null) => Value::Null,
            (Affinity::Blob, Value::Blob(b)) => Value::Blob(b),
            (Affinity::Blob, Value::Text(s)) => Value::Blob(Arc::from(s.as_bytes())),
            (Affinity::Blob, v) => Value::Blob(Arc::from(v.to_text_or_empty().as_bytes())),
            (Affinity::Text, Value::Text(s)) => Value::Text(s),
            (Affinity::Text, Value::Blob(b)) => Value::text_from_bytes(&b),
            (Affinity::Text, v) => Value::Text(Arc::from(v.to_text_or_empty().as_ref())),
            (Affinity::Integer, v) => Value::Integer(v.to_i64()),
            (Affinity::Real, v) => Value::real(v.to_f64()),
            (Affinity::Numeric, v @ (Value::Integer(_) | Value::Real(_))) => v,
            (Affinity::Numeric, Value::Text(s)) => numerify(s.as_bytes()),
            (Affinity::Numeric, Value::Blob(b)) => numerify(&b),
        }
    }

    /// SQLite's sort order (`sqlite3MemCompare`): NULL < numbers (integers and reals
    /// compared exactly) < text (by `coll`) < blobs (memcmp, then length). Two NULLs are
    /// equal here; SQL `=` treats NULL separately (see [`compare_op`]).
    pub fn compare(&self, other: &Value, coll: Collation) -> Ordering {
        use Value::*;
        match (self, other) {
            (Null, Null) => Ordering::Equal,
            (Null, _) => Ordering::Less,
            (_, Null) => Ordering::Greater,
            (Integer(a), Integer(b)) => a.cmp(b),
            (Real(a), Real(b)) => a.partial_cmp(b).unwrap_or(Ordering::Equal),
            (Integer(a), Real(b)) => num::int_float_cmp(*a, *b),
            (Real(a), Integer(b)) => num::int_float_cmp(*b, *a).reverse(),
            (Integer(_) | Real(_), _) => Ordering::Less,
            (_, Integer(_) | Real(_)) => Ordering::Greater,
            (Text(a), Text(b)) => coll.compare(a, b),
            (Text(_), Blob(_)) => Ordering::Less,
            (Blob(_), Text(_)) => Ordering::Greater,
            (Blob(a), Blob(b)) => a.as_ref().cmp(b.as_ref()),
        }
    }
}

/// A value converted for arithmetic.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Numeric {
    Int(i64),
    Real(f64),
}

impl Numeric {
    pub fn to_value(self) -> Value {
        match self {
            Numeric::Int(i) => Value::Integer(i),
            Numeric::Real(r) => Value::real(r),
        }
    }
    pub fn as_f64(self) -> f64 {
        match self {
            Numeric::Int(i) => i as f64,
            Numeric::Real(r) => r,
        }
    }
}

/// `computeNumericType`: the numeric reading of text for arithmetic.
fn text_numeric_type(z: &[u8]) -> Numeric {
    use num::{IntParse, NumClass};
    let (r, class) = num::atof(z);
    match class {
        NumClass::NotNumeric => {
            let (i, p) = num::atoi64(z);
            if p.code() <= 1 {
                Numeric::Int(i)
            } else {
                Numeric::Real(r)
            }
        }
        NumClass::RealPrefix | NumClass::Real => Numeric::Real(r),
        NumClass::Integer => match num::atoi64(z) {
            (i, IntParse::Exact) => Numeric::Int(i),
            _ => Numeric::Real(r),
        },
    }
}

/// `applyNumericAffinity`: Some(number) when the whole text is a well-formed number.
fn numeric_affinity_of_text(z: &[u8], try_for_int: bool) -> Option<Value> {
    use num::{IntParse, NumClass};
    let (r, class) = num::atof(z);
    if !class.is_valid() {
        return None;
    }
    if class == NumClass::Integer {
        let i = num::real_to_i64(r);
        if num::real_same_as_int(r, i) {
            return Some(Value::Integer(i));
        }
        if let (i, IntParse::Exact) = num::atoi64(z) {
            return Some(Value::Integer(i));
        }
    }
    if try_for_int {
        Some(integer_affinity(r))
    } else {
        Some(Value::real(r))
    }
}

/// `sqlite3VdbeIntegerAffinity`: a real with an exact integer value (not at the i64
/// extremes) becomes INTEGER.
fn integer_affinity(r: f64) -> Value {
    let i = num::real_to_i64(r);
    if r == i as f64 && i > i64::MIN && i < i64::MAX {
        Value::Integer(i)
    } else {
        Value::real(r)
    }
}

/// `sqlite3VdbeMemNumerify` on text: CAST(text AS NUMERIC).
fn numerify(z: &[u8]) -> Value {
    use num::NumClass;
    let (r, class) = num::atof(z);
    if matches!(class, NumClass::NotNumeric | NumClass::Integer) {
        let (i, p) = num::atoi64(z);
        if p.code() <= 1 {
            return Value::Integer(i);
        }
    }
    let i = num::real_to_i64(r);
    if num::real_same_as_int(r, i) {
        Value::Integer(i)
    } else {
        Value::real(r)
    }
}

/// A binary comparison operator's result (`<`, `<=`, `=`, ...) with SQLite's affinity
/// rules: `comparison_affinity(lhs_aff, rhs_aff)` is applied to both operands, then they
/// are compared with `coll` (the collation chosen by the planner: the left operand's
/// explicit or column collation, else the right's, else BINARY). None when either operand is
/// NULL.
pub fn compare_op(
    lhs: &Value,
    lhs_aff: Option<Affinity>,
    rhs: &Value,
    rhs_aff: Option<Affinity>,
    coll: Collation,
) -> Option<Ordering> {
    if lhs.is_null() || rhs.is_null() {
        return None;
    }
    let aff = comparison_affinity(lhs_aff, rhs_aff);
    // Only text under a numeric affinity, or a number under TEXT affinity, changes;
    // everything else compares in place (the common case in an executor's inner loop).
    let converts = |v: &Value| match aff {
        Some(a) if a.is_numeric() => matches!(v, Value::Text(_)),
        Some(Affinity::Text) => matches!(v, Value::Integer(_) | Value::Real(_)),
        _ => false,
    };
    let l: Cow<'_, Value> = if converts(lhs) {
        Cow::Owned(lhs.clone().apply_comparison_affinity(aff))
    } else {
        Cow::Borrowed(lhs)
    };
    let r: Cow<'_, Value> = if converts(rhs) {
        Cow::Owned(rhs.clone().apply_comparison_affinity(aff))
    } else {
        Cow::Borrowed(rhs)
    };
    Some(l.compare(&r, coll))
}

/// `a IS b` / `a IS NOT b` (true when both NULL; false when one is), with the same
/// affinity and collation rules as `=`.
pub fn is_op(
    lhs: &Value,
    lhs_aff: Option<Affinity>,
    rhs: &Value,
    rhs_aff: Option<Affinity>,
    coll: Collation,
) -> bool {
    match (lhs.is_null(), rhs.is_null()) {
        (true, true) => true,
        (true, false) | (false, true) => false,
        _ => compare_op(lhs, lhs_aff, rhs, rhs_aff, coll) == Some(Ordering::Equal),
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("NULL"),
            Value::Integer(i) => write!(f, "Integer({i})"),
            Value::Real(r) => write!(f, "Real({r:?})"),
            Value::Text(s) => write!(f, "Text({:?})", &**s),
            Value::Blob(b) => {
                f.write_str("Blob(x'")?;
                for byte in b.iter() {
                    write!(f, "{byte:02X}")?;
                }
                f.write_str("')")
            }
        }
    }
}

/// Structural equality (same storage class and same content), for tests and
/// DISTINCT-like bookkeeping; SQL equality is [`compare_op`].
impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Null, Value::Null) => true,
            (Value::Integer(a), Value::Integer(b)) => a == b,
            (Value::Real(a), Value::Real(b)) => a.to_bits() == b.to_bits() || a == b,
            (Value::Text(a), Value::Text(b)) => a == b,
            (Value::Blob(a), Value::Blob(b)) => a == b,
            _ => false,
        }
    }
}

impl From<i64> for Value {
    fn from(i: i64) -> Value {
        Value::Integer(i)
    }
}
impl From<f64> for Value {
    fn from(r: f64) -> Value {
        Value::real(r)
    }
}
impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::Text(Arc::from(s))
    }
}
impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::Text(Arc::from(s))
    }
}
impl From<Vec<u8>> for Value {
    fn from(b: Vec<u8>) -> Value {
        Value::Blob(Arc::from(b))
    }
}
impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(o: Option<T>) -> Value {
        o.map_or(Value::Null, Into::into)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Affinity::*;

    fn t(s: &str) -> Value {
        Value::text(s)
    }

    /// `utf8` takes ASCII and valid multi-byte text at any length and alignment, and
    /// nothing else (a lone continuation byte, a truncated sequence, an overlong form).
    #[test]
    fn utf8_takes_valid_text_only() {
        let long = "0123456789abcdef".repeat(5);
        for off in 0..8 {
            assert_eq!(utf8(&long.as_bytes()[off..]), Some(&long[off..]));
        }
        assert_eq!(utf8(b""), Some(""));
        assert_eq!(
            utf8("héllo wörld, ünïcode".as_bytes()),
            Some("héllo wörld, ünïcode")
        );
        // Each kind alone in otherwise ASCII text, at a different offset.
        for (i, junk) in [&[0xff][..], &[0x80], &[0xc3], &[0xc0, 0xaf]]
            .iter()
            .enumerate()
        {
            let mut bad = long.clone().into_bytes();
            bad.splice(7 * i..7 * i, junk.iter().copied());
            assert_eq!(utf8(&bad), None, "{junk:02x?} at {}", 7 * i);
        }
    }

    #[test]
    fn affinity_on_store() {
        assert_eq!(t("3.0").apply_affinity(Integer), Value::Integer(3));
        assert_eq!(t("3.0").apply_affinity(Numeric), Value::Integer(3));
        assert_eq!(t("3.5").apply_affinity(Numeric), Value::Real(3.5));
        assert_eq!(t(" 12 ").apply_affinity(Numeric), Value::Integer(12));
        assert_eq!(t("0x10").apply_affinity(Numeric), t("0x10"));
        assert_eq!(t("1e3").apply_affinity(Integer), Value::Integer(1000));
        assert_eq!(
            t("9223372036854775808").apply_affinity(Numeric),
            Value::Real(9223372036854775808.0)
        );
        assert_eq!(Value::Integer(5).apply_affinity(Real), Value::Real(5.0));
        assert_eq!(t("5").apply_affinity(Real), Value::Real(5.0));
        assert_eq!(Value::Real(2.0).apply_affinity(Numeric), Value::Integer(2));
        assert_eq!(Value::Real(1.0).apply_affinity(Text), t("1.0"));
        assert_eq!(
            Value::blob(vec![b'1']).apply_affinity(Numeric),
            Value::blob(vec![b'1'])
        );
        assert_eq!(affinity_of_type_name("VARCHAR(10)"), Text);
        assert_eq!(affinity_of_type_name("FLOATING POINT"), Integer);
        assert_eq!(affinity_of_type_name(""), Blob);
        assert_eq!(affinity_of_type_name("DOUBLE PRECISION"), Real);
        assert_eq!(affinity_of_type_name("DECIMAL(10,5)"), Numeric);
    }

    #[test]
    fn cast_and_text() {
        assert_eq!(t("12abc").cast(Integer), Value::Integer(12));
        assert_eq!(t("1e3").cast(Integer), Value::Integer(1));
        assert_eq!(t("1e3").cast(Numeric), Value::Integer(1000));
        assert_eq!(Value::Real(1e20).cast(Integer), Value::Integer(i64::MAX));
        assert_eq!(Value::Real(1e20).cast(Text), t("1.0e+20"));
        assert_eq!(Value::Real(0.1).cast(Text), t("0.1"));
        assert_eq!(Value::Integer(42).cast(Blob), Value::blob(b"42".to_vec()));
        assert_eq!(Value::Null.cast(Integer), Value::Null);
    }

    #[test]
    fn sort_order_and_comparison() {
        let ord = |a: &Value, b: &Value| a.compare(b, Collation::Binary);
        assert_eq!(ord(&Value::Null, &Value::Integer(i64::MIN)), Ordering::Less);
        assert_eq!(ord(&Value::Real(f64::INFINITY), &t("")), Ordering::Less);
        assert_eq!(ord(&t("z"), &Value::blob(vec![])), Ordering::Less);
        // Beyond 2^53 integers and reals compare exactly.
        assert_eq!(
            ord(
                &Value::Integer(9007199254740993),
                &Value::Real(9007199254740992.0)
            ),
            Ordering::Greater
        );
        assert_eq!(
            ord(
                &Value::Integer(i64::MAX),
                &Value::Real(9223372036854775808.0)
            ),
            Ordering::Less
        );
        // Column affinity: a TEXT column holding '10' vs the number 9.
        assert_eq!(
            compare_op(&t("10"), Some(Integer), &t("9"), None, Collation::Binary),
            Some(Ordering::Greater)
        );
        assert_eq!(
            compare_op(&t("10"), None, &t("9"), None, Collation::Binary),
            Some(Ordering::Less)
        );
        assert_eq!(
            compare_op(
                &Value::Integer(1),
                Some(Text),
                &t("1"),
                None,
                Collation::Binary
            ),
            Some(Ordering::Equal)
        );
        assert_eq!(
            compare_op(&Value::Null, None, &Value::Null, None, Collation::Binary),
            None
        );
        assert!(is_op(
            &Value::Null,
            None,
            &Value::Null,
            None,
            Collation::Binary
        ));
    }

    #[test]
    fn operators() {
        assert_eq!(
            arith(ArithOp::Add, &Value::Integer(i64::MAX), &Value::Integer(1)),
            Value::Real(9223372036854775808.0)
        );
        assert_eq!(
            arith(ArithOp::Div, &Value::Integer(7), &Value::Integer(-2)),
            Value::Integer(-3)
        );
        assert_eq!(
            arith(ArithOp::Div, &Value::Integer(1), &Value::Integer(0)),
            Value::Null
        );
        assert_eq!(
            arith(ArithOp::Rem, &Value::Real(5.5), &Value::Integer(0)),
            Value::Null
        );
        assert_eq!(
            arith(ArithOp::Add, &t("12abc"), &Value::Integer(1)),
            Value::Integer(13)
        );
        assert_eq!(
            negate(&Value::Integer(i64::MIN)),
            Value::Real(9223372036854775808.0)
        );
        assert_eq!(
            bit_op(BitOp::ShiftRight, &Value::Integer(-8), &Value::Integer(100)),
            Value::Integer(-1)
        );
        assert_eq!(
            bit_op(BitOp::ShiftLeft, &Value::Integer(1), &Value::Integer(-1)),
            Value::Integer(0)
        );
        assert_eq!(truth(&t("1abc")), Some(true));
        assert_eq!(truth(&t("abc")), Some(false));
        assert_eq!(and3(None, Some(false)), Some(false));
        assert_eq!(or3(None, Some(false)), None);
        assert_eq!(concat(&Value::Integer(1), &Value::Real(2.0)), Ok(t("12.0")));
    }

    #[test]
    fn c_api_conversions() {
        assert_eq!(t("  42xyz").to_i64(), 42);
        assert_eq!(t("4.9").to_i64(), 4);
        assert_eq!(Value::Real(-1e300).to_i64(), i64::MIN);
        assert_eq!(Value::Integer(0x1_0000_0005).to_i32(), 5);
        assert_eq!(t("1.5e3x").to_f64(), 1500.0);
        assert_eq!(Value::Real(100.0).to_text().as_deref(), Some("100.0"));
        assert_eq!(Value::Null.to_text(), None);
    }
}
