//! The SQLite record format (sqlite.org/fileformat2.html §2.1) and SQLite's value order.
//!
//! A record is a header — a varint giving the header's own length in bytes, then one
//! *serial type* varint per column — followed by the column bodies in the same order:
//!
//! | serial type | body bytes | meaning                                  |
//! |------------:|-----------:|------------------------------------------|
//! | 0           | 0          | NULL                                     |
//! | 1,2,3,4,5,6 | 1,2,3,4,6,8| big-endian two's-complement integer      |
//! | 7           | 8          | IEEE 754 big-endian float                |
//! | 8, 9        | 0          | the integers 0 and 1 (schema format 4)   |
//! | 10, 11      | —          | reserved: rejected as corrupt            |
//! | N>=12 even  | (N-12)/2   | BLOB                                     |
//! | N>=13 odd   | (N-13)/2   | TEXT (in the database encoding)          |
//!
//! Invariants: [`encode`] writes the smallest integer serial type (8/9 for 0/1, as SQLite
//! does for schema format 4, which parlite always writes); decoding never reads outside the
//! slice and reports any inconsistency (header longer than the record, body past the end,
//! reserved serial types) as `Corrupt`. Nothing here allocates per column when reading:
//! [`FieldIter`] and [`column`] hand out borrowed [`ValueRef`]s.
//!
//! Value order ([`compare_values`]) is SQLite's: NULL < numbers (INTEGER and REAL compared
//! by value, exactly, even for integers a double cannot represent) < TEXT (memcmp, or a
//! collation) < BLOB (memcmp).

use crate::error::{Result, StorageError};
use crate::varint::{get_varint, push_varint, put_varint, varint_len};
use std::cmp::Ordering;
use std::sync::Arc;

/// One column value, borrowing text and blob bytes from the record.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ValueRef<'a> {
    Null,
    Integer(i64),
    Real(f64),
    Text(&'a [u8]),
    Blob(&'a [u8]),
}

fn corrupt(reason: &str) -> StorageError {
    StorageError::corrupt(None, format!("malformed record: {reason}"))
}

/// The serial type and body length SQLite uses for `v`.
#[inline]
pub fn serial_type_of(v: &ValueRef) -> (u64, usize) {
    match *v {
        ValueRef::Null => (0, 0),
        ValueRef::Integer(0) => (8, 0),
        ValueRef::Integer(1) => (9, 0),
        ValueRef::Integer(i) => {
            // Smallest of 1,2,3,4,6,8 bytes that holds i as two's complement.
            let u = if i < 0 { !i } else { i } as u64;
            if u <= 0x7f {
                (1, 1)
            } else if u <= 0x7fff {
                (2, 2)
            } else if u <= 0x7f_ffff {
                (3, 3)
            } else if u <= 0x7fff_ffff {
                (4, 4)
            } else if u <= 0x7fff_ffff_ffff {
                (5, 6)
            } else {
                (6, 8)
            }
        }
        ValueRef::Real(_) => (7, 8),
        ValueRef::Text(t) => (t.len() as u64 * 2 + 13, t.len()),
        ValueRef::Blob(b) => (b.len() as u64 * 2 + 12, b.len()),
    }
}

/// Body length of serial type `t`, or `None` for the reserved types 10 and 11.
#[inline]
pub fn serial_body_len(t: u64) -> Option<usize> {
    Some(match t {
        0 | 8 | 9 => 0,
        1 => 1,
        2 => 2,
        3 => 3,
        4 => 4,
        5 => 6,
        6 | 7 => 8,
        10 | 11 => return None,
        n => usize::try_from((n - 12) / 2).ok()?,
    })
}

/// Encodes `values` as a record.
pub fn encode(values: &[ValueRef]) -> Vec<u8> {
    let mut out = Vec::new();
    encode_into(values, &mut out);
    out
}

/// The header's and the bodies' lengths of the record for `values`.
#[inline]
fn record_lens(values: &[ValueRef]) -> (usize, usize) {
    let mut types_len = 0usize;
    let mut body_len = 0usize;
    for v in values {
        let (t, n) = serial_type_of(v);
        types_len += varint_len(t);
        body_len += n;
    }
    // The header length counts its own varint, which may itself grow the header.
    let mut header_len = types_len + 1;
    while varint_len(header_len as u64) + types_len > header_len {
        header_len = types_len + varint_len(header_len as u64);
    }
    (header_len, body_len)
}

/// The length in bytes of the record for `values` (what [`encode_into`] appends).
pub fn encoded_len(values: &[ValueRef]) -> usize {
    let (header_len, body_len) = record_lens(values);
    header_len + body_len
}

/// Where [`write_record`] puts a record's bytes, in order.
trait RecordSink {
    fn put(&mut self, bytes: &[u8]);
    fn put_varint(&mut self, v: u64);
}

// Inlined, as `encode_into`'s pushes were: otherwise each field's varint was a call
// (`put_varint` and `record_lens` showed as functions of their own in callgrind).
impl RecordSink for Vec<u8> {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
    #[inline]
    fn put_varint(&mut self, v: u64) {
        push_varint(self, v);
    }
}

/// A slice filled from its start; `at` is the next byte.
struct SliceSink<'a> {
    out: &'a mut [u8],
    at: usize,
}

impl RecordSink for SliceSink<'_> {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.out[self.at..self.at + bytes.len()].copy_from_slice(bytes);
        self.at += bytes.len();
    }
    #[inline]
    fn put_varint(&mut self, v: u64) {
        self.at += put_varint(&mut self.out[self.at..], v);
    }
}

#[inline]
fn write_record(values: &[ValueRef], header_len: usize, out: &mut impl RecordSink) {
    out.put_varint(header_len as u64);
    for v in values {
        out.put_varint(serial_type_of(v).0);
    }
    for v in values {
        match *v {
            ValueRef::Null => {}
            ValueRef::Integer(i) => {
                let (_, n) = serial_type_of(v);
                out.put(&i.to_be_bytes()[8 - n..]);
            }
            ValueRef::Real(r) => out.put(&r.to_bits().to_be_bytes()),
            ValueRef::Text(b) | ValueRef::Blob(b) => out.put(b),
        }
    }
}

/// Appends the record for `values` to `out` (lets callers reuse one buffer).
pub fn encode_into(values: &[ValueRef], out: &mut Vec<u8>) {
    let (header_len, body_len) = record_lens(values);
    out.reserve(header_len + body_len);
    write_record(values, header_len, out);
}

/// Writes the record for `values` into `out`, whose length is [`encoded_len`]: a row
/// rewritten in place is encoded straight into its cell in the page (btree
/// `insert::Payload::Values`) instead of into a buffer that is then copied there.
pub fn encode_to_slice(values: &[ValueRef], out: &mut [u8]) {
    let (header_len, body_len) = record_lens(values);
    assert_eq!(
        out.len(),
        header_len + body_len,
        "record slice of the wrong length"
    );
    write_record(values, header_len, &mut SliceSink { out, at: 0 });
}

/// Decodes the body of one column.
#[inline]
fn decode_body(t: u64, body: &[u8]) -> ValueRef<'_> {
    match t {
        0 => ValueRef::Null,
        8 => ValueRef::Integer(0),
        9 => ValueRef::Integer(1),
        1..=6 => {
            // Sign-extend a big-endian integer of body.len() bytes.
            let mut v: i64 = if body[0] & 0x80 != 0 { -1 } else { 0 };
            for &b in body {
                v = (v << 8) | b as i64;
            }
            ValueRef::Integer(v)
        }
        7 => {
            let mut b = [0u8; 8];
            b.copy_from_slice(body);
            ValueRef::Real(f64::from_bits(u64::from_be_bytes(b)))
        }
        n if n % 2 == 0 => ValueRef::Blob(body),
        _ => ValueRef::Text(body),
    }
}

/// Body lengths of serial types 0-11 (10 and 11 are reserved; callers exclude them).
const SMALL_BODY_LEN: [usize; 12] = [0, 1, 2, 3, 4, 6, 8, 8, 0, 0, 0, 0];

/// A record's fields as (serial type, body) read in place, for comparisons that decode
/// nothing they need not; `None` from `new` or `next` for a malformed record.
struct RawFields<'a> {
    rec: &'a [u8],
    header_pos: usize,
    header_end: usize,
    body_pos: usize,
}

impl<'a> RawFields<'a> {
    #[inline]
    fn new(rec: &'a [u8]) -> Option<RawFields<'a>> {
        let (header_end, header_pos) = match rec {
            [h, ..] if *h < 0x80 => (usize::from(*h), 1),
            _ => {
                let (h, n) = get_varint(rec)?;
                (usize::try_from(h).ok()?, n)
            }
        };
        if header_end < header_pos || header_end > rec.len() {
            return None;
        }
        Some(RawFields {
            rec,
            header_pos,
            header_end,
            body_pos: header_end,
        })
    }

    /// The next field, `Some(None)` after the last.
    #[inline]
    fn next(&mut self) -> Option<Option<(u64, &'a [u8])>> {
        if self.header_pos >= self.header_end {
            return Some(None);
        }
        let t = match self.rec[self.header_pos] {
            b if b < 0x80 => {
                self.header_pos += 1;
                u64::from(b)
            }
            _ => {
                let (t, n) = get_varint(self.rec.get(self.header_pos..self.header_end)?)?;
                self.header_pos += n;
                t
            }
        };
        let end = self.body_pos.checked_add(serial_body_len(t)?)?;
        let body = self.rec.get(self.body_pos..end)?;
        self.body_pos = end;
        Some(Some((t, body)))
    }
}

/// Iterates over a record's columns without allocating.
pub struct FieldIter<'a> {
    rec: &'a [u8],
    header_pos: usize,
    header_end: usize,
    body_pos: usize,
}

impl<'a> FieldIter<'a> {
    pub fn new(rec: &'a [u8]) -> Result<FieldIter<'a>> {
        let (header_len, n) = get_varint(rec).ok_or_else(|| corrupt("truncated header length"))?;
        let header_end = usize::try_from(header_len).map_err(|_| corrupt("huge header"))?;
        if header_end < n || header_end > rec.len() {
            return Err(corrupt("header length out of range"));
        }
        Ok(FieldIter {
            rec,
            header_pos: n,
            header_end,
            body_pos: header_end,
        })
    }

    /// The next column, `None` after the last.
    #[inline(always)]
    pub fn next_field(&mut self) -> Option<Result<ValueRef<'a>>> {
        if self.header_pos >= self.header_end {
            return None;
        }
        // A one-byte serial type (every type but TEXT/BLOB over 57 bytes) whose body lies
        // inside the record: decoded inline, without `read_one`'s general varint and error
        // paths (speedtest1 test 320's scan: ~80 -> ~35 instructions per integer field).
        // `new` checked `header_end <= rec.len()`.
        let h = self.header_pos;
        if let Some(&t) = self.rec.get(h) {
            if t < 0x80 && !matches!(t, 10 | 11) {
                let len = if t >= 12 {
                    usize::from((t - 12) / 2)
                } else {
                    SMALL_BODY_LEN[usize::from(t)]
                };
                if let Some(body) = self.rec.get(self.body_pos..self.body_pos + len) {
                    self.header_pos += 1;
                    self.body_pos += len;
                    return Some(Ok(decode_body(u64::from(t), body)));
                }
            }
        }
        // A two-byte serial type inside the header: a TEXT or BLOB of 58 to 8,185 bytes
        // (hc_mixed's 64-character TEXT and 200-byte BLOB), inline as well: through
        // `read_one` ~35 instructions a field, ~0.3k of hc_mixed's 10-row scan (callgrind).
        if h + 1 < self.header_end {
            if let (Some(&b0), Some(&b1)) = (self.rec.get(h), self.rec.get(h + 1)) {
                let t = (u64::from(b0 & 0x7f) << 7) | u64::from(b1);
                if b0 >= 0x80 && b1 < 0x80 && t >= 12 {
                    let len = ((t - 12) / 2) as usize;
                    if let Some(body) = self.rec.get(self.body_pos..self.body_pos + len) {
                        self.header_pos += 2;
                        self.body_pos += len;
                        return Some(Ok(decode_body(t, body)));
                    }
                }
            }
        }
        Some(self.read_one())
    }

    fn read_one(&mut self) -> Result<ValueRef<'a>> {
        let (t, n) = get_varint(&self.rec[self.header_pos..self.header_end])
            .ok_or_else(|| corrupt("truncated serial type"))?;
        self.header_pos += n;
        let len = serial_body_len(t).ok_or_else(|| corrupt("reserved serial type"))?;
        let end = self
            .body_pos
            .checked_add(len)
            .filter(|&e| e <= self.rec.len());
        let end = end.ok_or_else(|| corrupt("column body past the end of the record"))?;
        let v = decode_body(t, &self.rec[self.body_pos..end]);
        self.body_pos = end;
        Ok(v)
    }

    /// Skips one column without decoding it; false after the last.
    fn skip_field(&mut self) -> Result<bool> {
        if self.header_pos >= self.header_end {
            return Ok(false);
        }
        let (t, n) = get_varint(&self.rec[self.header_pos..self.header_end])
            .ok_or_else(|| corrupt("truncated serial type"))?;
        self.header_pos += n;
        let len = serial_body_len(t).ok_or_else(|| corrupt("reserved serial type"))?;
        self.body_pos = self
            .body_pos
            .checked_add(len)
            .ok_or_else(|| corrupt("huge column"))?;
        Ok(true)
    }
}

impl<'a> Iterator for FieldIter<'a> {
    type Item = Result<ValueRef<'a>>;
    fn next(&mut self) -> Option<Self::Item> {
        self.next_field()
    }
}

/// Decodes every column.
pub fn decode(rec: &[u8]) -> Result<Vec<ValueRef<'_>>> {
    FieldIter::new(rec)?.collect()
}

/// Decodes every column into `out` when they are at most `out.len()`: the column count,
/// or `None` when there are more or the record is malformed (callers then fall back to
/// [`decode`]). Lets a descent decode its probe without allocating.
pub fn decode_into_slice<'a>(rec: &'a [u8], out: &mut [ValueRef<'a>]) -> Option<usize> {
    let mut n = 0;
    for f in FieldIter::new(rec).ok()? {
        *out.get_mut(n)? = f.ok()?;
        n += 1;
    }
    Some(n)
}

/// Number of columns in the record (reads only the header).
pub fn column_count(rec: &[u8]) -> Result<usize> {
    let mut it = FieldIter::new(rec)?;
    let mut n = 0;
    while it.skip_field()? {
        n += 1;
    }
    Ok(n)
}

/// Reads column `i` without decoding the ones before it. A column past the record's last is
/// NULL, as in SQLite (rows written before an `ALTER TABLE ADD COLUMN` are shorter).
pub fn column(rec: &[u8], i: usize) -> Result<ValueRef<'_>> {
    let mut it = FieldIter::new(rec)?;
    for _ in 0..i {
        if !it.skip_field()? {
            return Ok(ValueRef::Null);
        }
    }
    it.next_field().unwrap_or(Ok(ValueRef::Null))
}

/// Field `i` read straight from the record's bytes, for a filter that tests a row before
/// (or instead of) decoding it: the header is walked up to field `i` only, the bodies before
/// it are skipped by length. `None` when the record has `i` fields or fewer (a row written
/// before ADD COLUMN: its default applies) or is malformed; callers then decode the record
/// the checked way ([`FieldIter`]), which reports the corruption.
#[inline]
pub fn field(rec: &[u8], i: usize) -> Option<ValueRef<'_>> {
    let (header_len, mut pos) = get_varint(rec)?;
    let header_end = usize::try_from(header_len).ok()?;
    if header_end > rec.len() {
        return None;
    }
    let mut body = header_end;
    let mut k = 0;
    loop {
        if pos >= header_end {
            return None;
        }
        let (t, n) = match rec[pos] {
            b if b < 0x80 => (u64::from(b), 1),
            _ => get_varint(&rec[pos..header_end])?,
        };
        pos += n;
        let len = serial_body_len(t)?;
        if k == i {
            let end = body.checked_add(len).filter(|&e| e <= rec.len())?;
            return Some(decode_body(t, &rec[body..end]));
        }
        body = body.checked_add(len)?;
        k += 1;
    }
}

/// Field `i` as [`field`] reads it when it is an integer and the record's header length
/// and its serial types up to field `i` are one-byte varints (an index entry of short keys
/// and its rowid, SQLite's `sqlite3VdbeIdxRowid` shortcut): the types before it are summed
/// as lengths without decoding, the integer read by its width. `None` for anything else
/// (not an integer, a longer varint on the way, a record too short), which [`field`] then
/// reads. Reading hc_mixed's scan's rowids this way rather than through `field` (the
/// serial-type walk, `decode_body`'s byte loop) saved ~31 instructions an entry (callgrind).
#[inline]
pub fn int_field(rec: &[u8], i: usize) -> Option<i64> {
    let h = usize::from(*rec.first()?);
    if h >= 0x80 || h > rec.len() {
        return None;
    }
    let types = rec.get(1..h)?;
    let t = *types.get(i)?;
    let mut body = h;
    for &s in &types[..i] {
        body += match s {
            10 | 11 => return None,
            0..=9 => SMALL_BODY_LEN[usize::from(s)],
            12..=0x7f => usize::from((s - 12) / 2),
            _ => return None,
        };
    }
    let b = rec.get(body..)?;
    Some(match (t, b) {
        (1, [a, ..]) => i64::from(*a as i8),
        (2, [a, b, ..]) => i64::from(i16::from_be_bytes([*a, *b])),
        (3, [a, b, c, ..]) => i64::from(i32::from_be_bytes([*a, *b, *c, 0]) >> 8),
        (4, [a, b, c, d, ..]) => i64::from(i32::from_be_bytes([*a, *b, *c, *d])),
        (5, [a, b, c, d, e, f, ..]) => i64::from_be_bytes([*a, *b, *c, *d, *e, *f, 0, 0]) >> 16,
        (6, [a, b, c, d, e, f, g, k, ..]) => i64::from_be_bytes([*a, *b, *c, *d, *e, *f, *g, *k]),
        (8, _) => 0,
        (9, _) => 1,
        _ => return None,
    })
}

/// The last field read straight from the record's bytes (an index entry's rowid), as
/// [`field`] reads field `i`: `None` for a record without fields or a malformed one.
pub fn last_field(rec: &[u8]) -> Option<ValueRef<'_>> {
    let mut f = RawFields::new(rec)?;
    let mut last = None;
    while let Some(field) = f.next()? {
        last = Some(field);
    }
    last.map(|(t, body)| decode_body(t, body))
}

/// SQLite's comparison of an integer with a double (sqlite3IntFloatCompare): exact, even
/// where `i as f64` would round.
pub fn compare_int_real(i: i64, r: f64) -> Ordering {
    if r.is_nan() {
        return Ordering::Greater;
    }
    if r < -9_223_372_036_854_775_808.0 {
        return Ordering::Greater;
    }
    if r >= 9_223_372_036_854_775_808.0 {
        return Ordering::Less;
    }
    let y = r as i64;
    match i.cmp(&y) {
        Ordering::Equal => (i as f64).partial_cmp(&r).unwrap_or(Ordering::Equal),
        o => o,
    }
}

#[inline]
fn type_class(v: &ValueRef) -> u8 {
    match v {
        ValueRef::Null => 0,
        ValueRef::Integer(_) | ValueRef::Real(_) => 1,
        ValueRef::Text(_) => 2,
        ValueRef::Blob(_) => 3,
    }
}

/// Compares two values in SQLite's order with the BINARY collation.
pub fn compare_values(a: &ValueRef, b: &ValueRef) -> Ordering {
    compare_values_with(a, b, None)
}

/// Compares two values in SQLite's order; text uses `coll` when given.
pub fn compare_values_with(a: &ValueRef, b: &ValueRef, coll: Option<&dyn Collation>) -> Ordering {
    match (a, b) {
        (ValueRef::Integer(x), ValueRef::Integer(y)) => x.cmp(y),
        (ValueRef::Real(x), ValueRef::Real(y)) => x.partial_cmp(y).unwrap_or(Ordering::Equal),
        (ValueRef::Integer(x), ValueRef::Real(y)) => compare_int_real(*x, *y),
        (ValueRef::Real(x), ValueRef::Integer(y)) => compare_int_real(*y, *x).reverse(),
        (ValueRef::Text(x), ValueRef::Text(y)) => match coll {
            Some(c) => c.compare(x, y),
            None => x.cmp(y),
        },
        (ValueRef::Blob(x), ValueRef::Blob(y)) => x.cmp(y),
        _ => type_class(a).cmp(&type_class(b)),
    }
}

/// A text collating sequence (BINARY, NOCASE, RTRIM, or user-defined).
pub trait Collation: Send + Sync {
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering;
}

/// Orders an index's records for the B-tree (see docs/storage-api.md).
pub trait KeyCompare: Send + Sync {
    /// Compares a stored index record with a probe record over the probe's fields only.
    fn compare(&self, stored: &[u8], probe: &[u8]) -> Result<Ordering>;
    /// An owned copy of this comparator. Concurrent transactions keep one to replay their
    /// index writes at commit (concurrent.rs C5); a comparator that returns `None` cannot be
    /// used for index writes in a concurrent transaction.
    fn to_shared(&self) -> Option<std::sync::Arc<dyn KeyCompare>> {
        None
    }
    /// Like [`compare`](Self::compare), given the probe's fields already decoded (a
    /// descent compares one probe with ~log2(entries) stored keys; decoding it once saves
    /// re-parsing its header every time). Must order exactly as `compare(stored, probe)`.
    fn compare_decoded(
        &self,
        stored: &[u8],
        probe: &[u8],
        _probe_fields: &[ValueRef<'_>],
    ) -> Result<Ordering> {
        self.compare(stored, probe)
    }
    /// How column 0 is ordered, when it is SQLite's value order ([`compare_values_with`]),
    /// possibly reversed: `Some((desc, binary))`, `binary` when TEXT compares as bytes (no
    /// collation). A descent may then order a stored key's first field against the probe's
    /// with [`compare_first_field`] and call the comparator only on a tie. `None` (the
    /// default) keeps every comparison in `compare`/`compare_decoded`.
    fn first_field_order(&self) -> Option<(bool, bool)> {
        None
    }
}

/// A probe key's first field, classified once per descent for [`compare_first_field`].
#[derive(Clone, Copy, Debug)]
pub enum FirstProbe<'a> {
    Integer(i64),
    Real(f64),
    /// TEXT under BINARY (bytes).
    Text(&'a [u8]),
}

impl<'a> FirstProbe<'a> {
    /// The classification of `v` for a column ordered with or without a collation
    /// (`binary`); `None` for values the fast order does not handle (NULL, BLOB, and TEXT
    /// under a collation).
    pub fn of(v: &ValueRef<'a>, binary: bool) -> Option<FirstProbe<'a>> {
        match *v {
            ValueRef::Integer(i) => Some(FirstProbe::Integer(i)),
            ValueRef::Real(r) => Some(FirstProbe::Real(r)),
            ValueRef::Text(t) if binary => Some(FirstProbe::Text(t)),
            _ => None,
        }
    }
}

/// A probe key's first field with what a comparator says of column 0, for deciding most
/// comparisons on the stored key's first field in place ([`compare_first_field`]): an
/// index descent's probe, and an index walk's far bound tested on every entry it reads.
#[derive(Clone, Copy, Debug)]
pub struct FirstFieldOrder<'a> {
    probe: FirstProbe<'a>,
    /// Column 0 is DESC.
    desc: bool,
    /// The probe has no other field: a tie on the first field is the comparison's answer.
    single: bool,
}

impl<'a> FirstFieldOrder<'a> {
    /// For a probe whose first field is `first` (`single`: its only field) under `cmp`;
    /// `None` when `cmp` does not order column 0 as SQLite's value order or `first` is a
    /// value `FirstProbe` does not handle.
    #[inline]
    pub fn new<C: KeyCompare + ?Sized>(
        first: &ValueRef<'a>,
        single: bool,
        cmp: &C,
    ) -> Option<FirstFieldOrder<'a>> {
        let (desc, binary) = cmp.first_field_order()?;
        Some(FirstFieldOrder {
            probe: FirstProbe::of(first, binary)?,
            desc,
            single,
        })
    }

    /// The probe's first field and whether it is the probe's only one, when it is TEXT
    /// compared as bytes in ascending order: what [`decide`](Self::decide) then does with
    /// a constant `FirstProbe::Text`, for a search compiled for it.
    #[inline]
    pub fn ascending_text(&self) -> Option<(&'a [u8], bool)> {
        match self.probe {
            FirstProbe::Text(y) if !self.desc => Some((y, self.single)),
            _ => None,
        }
    }

    /// The order of `stored` against the whole probe when its first field decides it
    /// (exactly the comparator's answer); `None` leaves the comparison to the comparator.
    #[inline(always)]
    pub fn decide(&self, stored: &[u8]) -> Option<Ordering> {
        match compare_first_field(stored, self.probe)? {
            Ordering::Equal if !self.single => None,
            o if self.desc => Some(o.reverse()),
            o => Some(o),
        }
    }
}

/// Orders the first field of the stored index key `stored` against `probe` in ascending
/// SQLite order (TEXT as bytes), reading the key in place: SQLite's
/// `vdbeRecordCompareInt` / `vdbeRecordCompareString` shortcut. Only keys whose header
/// length and first serial type are one-byte varints are read; `None` hands anything else
/// (a reserved serial type, a long TEXT, any inconsistency) to the comparator, so a
/// corrupt key's error stays the comparator's. REALs order as `compare_values_with` orders
/// them: fp speedtest1 test 130's range walks over a REAL column tested each entry against
/// the far bound through `RecordCompare::compare` (~198 instructions an entry). `Some(Equal)` says only that the first
/// fields tie. Measured: ~150 instructions a comparison through `compare_decoded` (a `dyn`
/// call, `ValueRef` building) against ~35 here (callgrind, speedtest1 test 310).
#[inline(always)]
pub fn compare_first_field(stored: &[u8], probe: FirstProbe<'_>) -> Option<Ordering> {
    let (&h, &t) = match stored {
        [h, t, ..] => (h, t),
        _ => return None,
    };
    let h = h as usize;
    if !(2..0x80).contains(&h) || t >= 0x80 {
        return None;
    }
    let n = match t {
        0 | 8 | 9 => 0,
        1..=4 => t as usize,
        5 => 6,
        6 | 7 => 8,
        10 | 11 => return None,
        t => (t as usize - 12) / 2,
    };
    let b = stored.get(h..)?.get(..n)?;
    let integer = |b: &[u8]| {
        let mut x: i64 = if b[0] & 0x80 != 0 { -1 } else { 0 };
        for &c in b {
            x = (x << 8) | c as i64;
        }
        x
    };
    let real = |b: &[u8]| {
        let mut r = [0u8; 8];
        r.copy_from_slice(b);
        f64::from_bits(u64::from_be_bytes(r))
    };
    match probe {
        FirstProbe::Integer(y) => match t {
            0 => Some(Ordering::Less),
            8 => Some(0.cmp(&y)),
            9 => Some(1.cmp(&y)),
            1..=6 => Some(integer(b).cmp(&y)),
            7 => Some(compare_int_real(y, real(b)).reverse()),
            _ => Some(Ordering::Greater),
        },
        FirstProbe::Real(y) => match t {
            0 => Some(Ordering::Less),
            8 => Some(compare_int_real(0, y)),
            9 => Some(compare_int_real(1, y)),
            1..=6 => Some(compare_int_real(integer(b), y)),
            7 => Some(real(b).partial_cmp(&y).unwrap_or(Ordering::Equal)),
            _ => Some(Ordering::Greater),
        },
        FirstProbe::Text(y) => match t {
            0..=9 => Some(Ordering::Less),
            t if t % 2 == 1 => Some(b.cmp(y)),
            _ => Some(Ordering::Greater),
        },
    }
}

/// The standard index comparator: column by column in SQLite order, each column optionally
/// descending and with a text collation. Columns beyond `desc`/`collations` are ascending
/// BINARY (the trailing rowid of an index entry).
///
/// The columns' settings are shared slices, so `to_shared` (called for every index write
/// of a concurrent transaction) copies no vectors: it allocated three times per write and
/// was ~2.5% of a REPLACE ... SELECT into a table with three indexes (callgrind,
/// speedtest1 test 290).
#[derive(Clone, Default)]
pub struct RecordCompare {
    desc: Arc<[bool]>,
    collations: Arc<[Option<Arc<dyn Collation>>]>,
}

impl RecordCompare {
    pub fn new(desc: Vec<bool>, collations: Vec<Option<Arc<dyn Collation>>>) -> RecordCompare {
        RecordCompare {
            desc: desc.into(),
            collations: collations.into(),
        }
    }
}

impl KeyCompare for RecordCompare {
    fn to_shared(&self) -> Option<Arc<dyn KeyCompare>> {
        Some(Arc::new(self.clone()))
    }

    fn first_field_order(&self) -> Option<(bool, bool)> {
        let desc = self.desc.first().copied().unwrap_or(false);
        let binary = self.collations.first().map_or(true, |c| c.is_none());
        Some((desc, binary))
    }

    fn compare(&self, stored: &[u8], probe: &[u8]) -> Result<Ordering> {
        // Both records read in place first (`compare_records_fast`): the checked walk of
        // both below cost ~690 instructions a comparison of two-field keys, the order check
        // of every entry a bulk build or `PRAGMA integrity_check` makes (callgrind,
        // speedtest1 tests 150, 200 and 980).
        if let Some(o) = self.compare_records_fast(stored, probe) {
            return Ok(o);
        }
        self.compare_checked(stored, probe)
    }

    fn compare_decoded(
        &self,
        stored: &[u8],
        _probe: &[u8],
        probe_fields: &[ValueRef<'_>],
    ) -> Result<Ordering> {
        if let Some(o) = self.compare_fast(stored, probe_fields) {
            return Ok(o);
        }
        let mut s = FieldIter::new(stored)?;
        for (i, pv) in probe_fields.iter().enumerate() {
            let o = self.compare_field(&mut s, i, pv)?;
            if o != Ordering::Equal {
                return Ok(o);
            }
        }
        Ok(Ordering::Equal)
    }
}

impl RecordCompare {
    /// `compare_decoded` for a stored key read in place, without `FieldIter`'s per-field
    /// `Result`s: header length and serial types are varints (one byte inline, longer ones
    /// through `get_varint`: TEXT of 58 bytes or more has a two-byte serial type, and
    /// speedtest1's number-name keys often do), integers compare as integers and TEXT under
    /// BINARY (no collation) or BLOB as bytes, without building a `ValueRef`. `None` sends
    /// anything it does not accept, well-formed or not, to the general path, so both orders
    /// agree exactly and a corrupt key's error is the general path's. Measured: a descent's
    /// comparison went from ~245 to ~140 instructions with one-byte serial types only
    /// (callgrind, speedtest1 test 290); long text keys took the general path (~250).
    #[inline]
    fn compare_fast(&self, stored: &[u8], probe_fields: &[ValueRef<'_>]) -> Option<Ordering> {
        let (header_end, mut hp) = match stored {
            [h, ..] if *h < 0x80 => (*h as usize, 1),
            _ => {
                let (h, n) = get_varint(stored)?;
                (usize::try_from(h).ok()?, n)
            }
        };
        if header_end < hp || header_end > stored.len() {
            return None;
        }
        let mut bp = header_end;
        for (i, pv) in probe_fields.iter().enumerate() {
            if hp >= header_end {
                // A stored key shorter than the probe sorts first.
                return Some(Ordering::Less);
            }
            let t = match stored[hp] {
                b if b < 0x80 => {
                    hp += 1;
                    u64::from(b)
                }
                _ => {
                    let (t, n) = get_varint(stored.get(hp..header_end)?)?;
                    hp += n;
                    t
                }
            };
            let len = match t {
                0 | 8 | 9 => 0,
                1..=4 => t as usize,
                5 => 6,
                6 | 7 => 8,
                10 | 11 => return None,
                n => usize::try_from((n - 12) / 2).ok()?,
            };
            let end = bp.checked_add(len)?;
            let body = stored.get(bp..end)?;
            bp = end;
            let coll = self.collations.get(i).and_then(|c| c.as_deref());
            let o = match (t, pv) {
                // TEXT against TEXT, BLOB against BLOB: bytes, unless a collation applies.
                (t, ValueRef::Text(y)) if t >= 13 && t % 2 == 1 && coll.is_none() => body.cmp(y),
                (t, ValueRef::Blob(y)) if t >= 12 && t % 2 == 0 => body.cmp(y),
                _ => {
                    let sv = decode_body(t, body);
                    match (&sv, pv) {
                        (ValueRef::Integer(x), ValueRef::Integer(y)) => x.cmp(y),
                        _ => compare_values_with(&sv, pv, coll),
                    }
                }
            };
            if o != Ordering::Equal {
                return Some(if self.desc.get(i).copied().unwrap_or(false) {
                    o.reverse()
                } else {
                    o
                });
            }
        }
        Some(Ordering::Equal)
    }

    /// How many of the first `n` fields keys `a` and `b` share: the index of the first
    /// field (below `n`) whose values differ under its collation (SQLite's value order,
    /// the direction aside: equality does not depend on it), or `n` when none does. A key
    /// with fewer fields differs at its end. ANALYZE counts distinct prefixes with this on
    /// the entries as stored, as SQLite's analyze.c compares each column with OP_Ne
    /// (NULLs equal).
    pub fn common_prefix(&self, a: &[u8], b: &[u8], n: usize) -> Result<usize> {
        let mut fa = FieldIter::new(a)?;
        let mut fb = FieldIter::new(b)?;
        for i in 0..n {
            let (Some(x), Some(y)) = (fa.next_field(), fb.next_field()) else {
                return Ok(i);
            };
            let coll = self.collations.get(i).and_then(|c| c.as_deref());
            if compare_values_with(&x?, &y?, coll) != Ordering::Equal {
                return Ok(i);
            }
        }
        Ok(n)
    }

    /// `compare` by the checked field iterators, which name a corruption.
    fn compare_checked(&self, stored: &[u8], probe: &[u8]) -> Result<Ordering> {
        let mut s = FieldIter::new(stored)?;
        let mut p = FieldIter::new(probe)?;
        let mut i = 0;
        while let Some(pv) = p.next_field() {
            let o = self.compare_field(&mut s, i, &pv?)?;
            if o != Ordering::Equal {
                return Ok(o);
            }
            i += 1;
        }
        Ok(Ordering::Equal)
    }

    /// `compare` on two records read in place, as `compare_fast` reads the stored one:
    /// `None` for anything it does not accept (the general path then orders it or names
    /// the corruption), so both agree exactly.
    #[inline]
    fn compare_records_fast(&self, stored: &[u8], probe: &[u8]) -> Option<Ordering> {
        let mut s = RawFields::new(stored)?;
        let mut p = RawFields::new(probe)?;
        let mut i = 0;
        loop {
            let Some((tp, bp)) = p.next()? else {
                return Some(Ordering::Equal);
            };
            let Some((ts, bs)) = s.next()? else {
                // A stored key shorter than the probe sorts first.
                return Some(Ordering::Less);
            };
            let coll = self.collations.get(i).and_then(|c| c.as_deref());
            let text = |t: u64| t >= 13 && t % 2 == 1;
            let blob = |t: u64| t >= 12 && t % 2 == 0;
            let o = if (text(ts) && text(tp) && coll.is_none()) || (blob(ts) && blob(tp)) {
                bs.cmp(bp)
            } else {
                compare_values_with(&decode_body(ts, bs), &decode_body(tp, bp), coll)
            };
            if o != Ordering::Equal {
                return Some(if self.desc.get(i).copied().unwrap_or(false) {
                    o.reverse()
                } else {
                    o
                });
            }
            i += 1;
        }
    }

    /// Compares the stored key's next field (column `i`) with the probe's.
    #[inline]
    fn compare_field(
        &self,
        s: &mut FieldIter<'_>,
        i: usize,
        pv: &ValueRef<'_>,
    ) -> Result<Ordering> {
        let sv = match s.next_field() {
            Some(v) => v?,
            // A stored key shorter than the probe sorts first.
            None => return Ok(Ordering::Less),
        };
        let coll = self.collations.get(i).and_then(|c| c.as_deref());
        let o = compare_values_with(&sv, pv, coll);
        Ok(if self.desc.get(i).copied().unwrap_or(false) {
            o.reverse()
        } else {
            o
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A seeded xorshift64 generator for the randomized tests below (and concurrent.rs's).
    pub(crate) fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        }
    }

    /// `int_field` reads what `field` reads wherever it answers, and answers for the integer
    /// fields of records with one-byte serial types: seeded records of integers of every
    /// width (and 0/1 as types 8/9), NULLs, reals, short and long (two-byte serial type)
    /// texts, read at every index and past the end; then each record cut short and given
    /// a reserved serial type, where `field` has no answer and neither may `int_field`.
    #[test]
    fn int_field_reads_as_field_reads() {
        let mut next = xorshift(0x1D_F1E1D);
        let mut answered = 0;
        for _ in 0..3000 {
            let n = 1 + (next() % 5) as usize;
            let texts: Vec<Vec<u8>> = (0..n).map(|_| vec![b'x'; (next() % 80) as usize]).collect();
            let vals: Vec<ValueRef> = (0..n)
                .map(|k| match next() % 7 {
                    0 => ValueRef::Null,
                    1 => ValueRef::Real(next() as f64),
                    2 => ValueRef::Text(&texts[k]),
                    3 => ValueRef::Integer((next() % 3) as i64),
                    _ => {
                        let bits = next() % 64;
                        ValueRef::Integer((next() as i64) >> bits)
                    }
                })
                .collect();
            let rec = encode(&vals);
            for i in 0..=n {
                let fast = int_field(&rec, i);
                if let Some(v) = fast {
                    answered += 1;
                    assert_eq!(field(&rec, i), Some(ValueRef::Integer(v)), "{vals:?} {i}");
                } else if rec[0] < 0x80 && rec[1..usize::from(rec[0])].iter().all(|&t| t < 0x80) {
                    assert!(
                        !matches!(field(&rec, i), Some(ValueRef::Integer(_))),
                        "{vals:?} {i}: int_field missed an integer"
                    );
                }
            }
            // Cut inside the body, and a reserved serial type before the last field.
            let cut = &rec[..rec.len() - 1];
            let last = n - 1;
            if field(cut, last).is_none() {
                assert_eq!(int_field(cut, last), None, "{vals:?} cut");
            }
            if n > 1 && rec[0] < 0x80 {
                let mut bad = rec.clone();
                bad[1] = 10;
                assert_eq!(int_field(&bad, last), None, "{vals:?} reserved");
                assert_eq!(field(&bad, last), None, "{vals:?} reserved");
            }
        }
        assert!(answered > 3000, "{answered}");
    }

    /// `encode_to_slice` writes exactly what `encode` builds, `encoded_len` bytes long, for
    /// seeded random records of every serial type: integers of each body size, reals,
    /// texts and blobs up to two-byte serial types, and up to 200 columns, so that the
    /// header's own length takes two bytes (a header of 128 bytes or more).
    #[test]
    fn records_encoded_into_a_slice_equal_encoded_ones() {
        let mut next = xorshift(0x2545_f491_4f6c_dd1du64);
        let bytes: Vec<u8> = (0..300u32).map(|i| (i * 7) as u8).collect();
        let mut two_byte_headers = 0;
        for round in 0..3_000 {
            let n = match round % 3 {
                0 => next() % 4,
                1 => next() % 20,
                _ => 100 + next() % 100,
            };
            let vals: Vec<ValueRef> = (0..n)
                .map(|_| {
                    let r = next();
                    let len = (r >> 8) as usize % bytes.len();
                    match r % 7 {
                        0 => ValueRef::Null,
                        1 => ValueRef::Integer((r >> 8) as i64 >> ((r >> 3) % 64)),
                        2 => ValueRef::Integer(-((r >> 8) as i64 >> ((r >> 3) % 64))),
                        3 => ValueRef::Real(f64::from_bits(r >> 2)),
                        4 => ValueRef::Text(&bytes[..len]),
                        5 => ValueRef::Blob(&bytes[..len]),
                        _ => ValueRef::Integer((r >> 8) as i64 % 3),
                    }
                })
                .collect();
            let want = encode(&vals);
            assert_eq!(encoded_len(&vals), want.len());
            let mut got = vec![0xEEu8; want.len()];
            encode_to_slice(&vals, &mut got);
            assert_eq!(got, want, "{vals:?}");
            assert_eq!(decode(&got).expect("decodes"), vals);
            two_byte_headers += usize::from(want[0] & 0x80 != 0);
        }
        assert!(two_byte_headers > 100, "{two_byte_headers}");
    }

    /// `compare_records_fast` (and `last_field`) against the checked walk on seeded random
    /// records of every storage class, equal-valued integers and reals, texts equal under
    /// NOCASE, long texts (two-byte serial types), shorter records and malformed ones.
    #[test]
    fn fast_record_compare_agrees_with_the_checked_walk() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
        let long_a = vec![b'a'; 70];
        let long_b = vec![b'A'; 70];
        let texts: [&[u8]; 6] = [b"abc", b"ABC", b"abd", b"", &long_a, &long_b];
        let value = |r: u64| match r % 9 {
            0 => ValueRef::Null,
            1 => ValueRef::Integer((r / 9 % 5) as i64 - 2),
            2 => ValueRef::Real((r / 9 % 5) as f64 - 2.0),
            3 => ValueRef::Real((r / 9 % 5) as f64 - 1.5),
            4 | 5 => ValueRef::Text(texts[(r / 9 % 6) as usize]),
            6 => ValueRef::Blob(texts[(r / 9 % 6) as usize]),
            7 => ValueRef::Integer(i64::MAX - (r / 9 % 2) as i64),
            _ => ValueRef::Real(9.223372036854775807e18),
        };
        let comparators = [
            RecordCompare::new(vec![false, false, false], vec![None, None, None]),
            RecordCompare::new(
                vec![true, false, true],
                vec![Some(Arc::new(NoCase) as Arc<dyn Collation>), None, None],
            ),
        ];
        let mut decided = 0;
        for _ in 0..20_000 {
            let rec = |n: u64, next: &mut dyn FnMut() -> u64| {
                let vals: Vec<ValueRef> = (0..n).map(|_| value(next())).collect();
                let mut r = encode(&vals);
                // Now and then a malformed record: a body cut short or a reserved type.
                match next() % 40 {
                    0 if r.len() > 2 => {
                        r.pop();
                    }
                    1 if r.len() > 1 => r[1] = 10,
                    _ => {}
                }
                r
            };
            let a = rec(1 + next() % 3, &mut next);
            let b = rec(1 + next() % 3, &mut next);
            let cmp = &comparators[(next() % 2) as usize];
            let checked = cmp.compare_checked(&a, &b).ok();
            match cmp.compare_records_fast(&a, &b) {
                Some(o) => {
                    assert_eq!(Some(o), checked, "{a:?} {b:?}");
                    decided += 1;
                }
                // Only a malformed record (or a reserved type) is left to the checked walk.
                None => assert!(
                    FieldIter::new(&a).is_err()
                        || FieldIter::new(&b).is_err()
                        || decode(&a).is_err()
                        || decode(&b).is_err(),
                    "{a:?} {b:?}"
                ),
            }
            assert_eq!(cmp.compare(&a, &b).ok(), checked);
            if let Ok(fields) = decode(&a) {
                assert_eq!(last_field(&a), fields.last().copied(), "{a:?}");
            }
        }
        assert!(decided > 15_000, "{decided}");
    }

    #[test]
    fn round_trip_all_types() {
        let big = vec![7u8; 300];
        let vals = [
            ValueRef::Null,
            ValueRef::Integer(0),
            ValueRef::Integer(1),
            ValueRef::Integer(-1),
            ValueRef::Integer(127),
            ValueRef::Integer(-128),
            ValueRef::Integer(128),
            ValueRef::Integer(32767),
            ValueRef::Integer(-32769),
            ValueRef::Integer(8_388_607),
            ValueRef::Integer(2_147_483_648),
            ValueRef::Integer(140_737_488_355_327),
            ValueRef::Integer(140_737_488_355_328),
            ValueRef::Integer(i64::MIN),
            ValueRef::Integer(i64::MAX),
            ValueRef::Real(3.5),
            ValueRef::Real(-0.0),
            ValueRef::Text(b"hello"),
            ValueRef::Text(b""),
            ValueRef::Blob(&[1, 2, 3]),
            ValueRef::Blob(&big),
        ];
        let rec = encode(&vals);
        assert_eq!(decode(&rec).unwrap(), vals.to_vec());
        assert_eq!(column_count(&rec).unwrap(), vals.len());
        for (i, v) in vals.iter().enumerate() {
            assert_eq!(column(&rec, i).unwrap(), *v);
        }
        assert_eq!(column(&rec, vals.len() + 3).unwrap(), ValueRef::Null);
        for (i, v) in vals.iter().enumerate() {
            assert_eq!(field(&rec, i), Some(*v));
        }
        assert_eq!(field(&rec, vals.len()), None);
    }

    #[test]
    fn field_of_a_malformed_record_is_none() {
        let rec = encode(&[ValueRef::Integer(300), ValueRef::Text(b"abc")]);
        // Body cut short, header longer than the record, reserved serial type.
        assert_eq!(field(&rec[..rec.len() - 1], 1), None);
        assert_eq!(field(&[9, 1, 1], 0), None);
        assert_eq!(field(&[2, 10], 0), None);
        assert_eq!(field(&[], 0), None);
        // A long serial type (TEXT of 100 bytes: a two-byte varint) before the field.
        let long = vec![b'x'; 100];
        let rec = encode(&[ValueRef::Text(&long), ValueRef::Integer(-5)]);
        assert_eq!(field(&rec, 1), Some(ValueRef::Integer(-5)));
        assert_eq!(field(&rec, 0), Some(ValueRef::Text(&long)));
    }

    /// `next_field`'s inline paths (one- and two-byte serial types) against `read_one`,
    /// the general varint walk, on seeded records: TEXT/BLOB of 0 to 300 bytes (one-, two-
    /// byte serial types), a non-canonical two-byte varint of a small type, a three-byte
    /// one, a header ending inside a serial type, and every record cut short (bodies past
    /// the end).
    #[test]
    fn next_field_agrees_with_read_one() {
        let mut next = xorshift(0x2545_f491_4f6c_dd1du64);
        let bytes = vec![b'q'; 300];
        for _ in 0..2000 {
            let n = 1 + next() % 4;
            let mut vals = Vec::new();
            for _ in 0..n {
                let len = (next() % 301) as usize;
                vals.push(match next() % 4 {
                    0 => ValueRef::Text(&bytes[..len]),
                    1 => ValueRef::Blob(&bytes[..len]),
                    2 => ValueRef::Integer(next() as i64 >> (next() % 64)),
                    _ => ValueRef::Null,
                });
            }
            let mut recs = vec![encode(&vals)];
            // A small type written as a two-byte varint (0x80 0x01: an 8-bit integer), then
            // a TEXT type as a three-byte varint (0x81 0x80 0x0d: 8,205, 8,190 bytes), which
            // only `read_one` takes.
            recs.push(vec![3, 0x80, 0x01, 7]);
            let mut long = vec![4, 0x81, 0x80, 0x0d];
            long.extend(std::iter::repeat_n(b'z', 8190));
            recs.push(long);
            // A header that ends inside a two-byte serial type (its second byte is body).
            let mut split = vec![2, 0x81, 0x01];
            split.extend(std::iter::repeat_n(b'y', 80));
            recs.push(split);
            for rec in recs {
                for cut in (0..=rec.len()).rev().take(rec.len().min(400) + 1) {
                    let r = &rec[..cut];
                    let (Ok(mut fast), Ok(mut slow)) = (FieldIter::new(r), FieldIter::new(r))
                    else {
                        continue;
                    };
                    loop {
                        let f = fast.next_field();
                        let s = (slow.header_pos < slow.header_end).then(|| slow.read_one());
                        match (f, s) {
                            (None, None) => break,
                            (Some(Ok(a)), Some(Ok(b))) => assert_eq!(a, b, "{r:?}"),
                            (Some(Err(_)), Some(Err(_))) => break,
                            (a, b) => panic!("{r:?}: inline {a:?}, read_one {b:?}"),
                        }
                        assert_eq!(
                            (fast.header_pos, fast.body_pos),
                            (slow.header_pos, slow.body_pos)
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn smallest_integer_serial_types() {
        assert_eq!(encode(&[ValueRef::Integer(0)]), vec![2, 8]);
        assert_eq!(encode(&[ValueRef::Integer(1)]), vec![2, 9]);
        assert_eq!(encode(&[ValueRef::Integer(2)]), vec![2, 1, 2]);
        assert_eq!(encode(&[ValueRef::Integer(-129)]), vec![2, 2, 0xff, 0x7f]);
        assert_eq!(encode(&[ValueRef::Integer(1 << 40)]).len(), 2 + 6);
        assert_eq!(encode(&[ValueRef::Text(b"ab")]), vec![2, 17, b'a', b'b']);
    }

    #[test]
    fn long_header_counts_itself() {
        // 200 columns: the header is longer than 127 bytes, so its length takes 2 bytes.
        let vals = vec![ValueRef::Null; 200];
        let rec = encode(&vals);
        assert_eq!(get_varint(&rec).unwrap(), (202, 2));
        assert_eq!(decode(&rec).unwrap().len(), 200);
        let vals = vec![ValueRef::Null; 126];
        let rec = encode(&vals);
        assert_eq!(get_varint(&rec).unwrap().0 as usize, rec.len());
    }

    #[test]
    fn corrupt_records_are_errors() {
        assert!(decode(&[]).is_err());
        assert!(decode(&[5, 1]).is_err()); // header longer than record
        assert!(decode(&[2, 10]).is_err()); // reserved serial type
        assert!(decode(&[2, 6, 1]).is_err()); // body truncated
        assert!(decode(&[2, 0x81]).is_err()); // serial type varint truncated
        assert!(decode(&[0]).is_err()); // header length smaller than itself
    }

    #[test]
    fn sqlite_value_order() {
        use ValueRef::*;
        let ordered = [
            Null,
            Real(f64::NEG_INFINITY),
            Integer(i64::MIN),
            Real(-1.5),
            Integer(-1),
            Integer(0),
            Real(0.5),
            Integer(1),
            Integer(9_007_199_254_740_992),
            Integer(9_007_199_254_740_993), // not representable as f64, still ordered exactly
            Real(9_007_199_254_740_994.0),
            Integer(i64::MAX),
            Real(9.3e18),
            Text(b""),
            Text(b"a"),
            Text(b"ab"),
            Text(b"b"),
            Blob(b""),
            Blob(b"\x00"),
        ];
        for (i, a) in ordered.iter().enumerate() {
            for (j, b) in ordered.iter().enumerate() {
                assert_eq!(compare_values(a, b), i.cmp(&j), "{a:?} vs {b:?}");
            }
        }
        assert_eq!(compare_values(&Integer(3), &Real(3.0)), Ordering::Equal);
    }

    struct NoCase;
    impl Collation for NoCase {
        fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
            a.to_ascii_lowercase().cmp(&b.to_ascii_lowercase())
        }
    }

    #[test]
    fn record_compare_prefix_desc_and_collation() {
        let cmp = RecordCompare::new(vec![false, true], vec![Some(Arc::new(NoCase)), None]);
        let stored = encode(&[
            ValueRef::Text(b"Abc"),
            ValueRef::Integer(5),
            ValueRef::Integer(77),
        ]);
        let probe = encode(&[ValueRef::Text(b"abc")]);
        assert_eq!(cmp.compare(&stored, &probe).unwrap(), Ordering::Equal);
        let probe = encode(&[ValueRef::Text(b"abc"), ValueRef::Integer(6)]);
        // Column 2 is descending: 5 sorts after 6.
        assert_eq!(cmp.compare(&stored, &probe).unwrap(), Ordering::Greater);
        let probe = encode(&[ValueRef::Text(b"abd")]);
        assert_eq!(cmp.compare(&stored, &probe).unwrap(), Ordering::Less);
        let full = encode(&[
            ValueRef::Text(b"abc"),
            ValueRef::Integer(5),
            ValueRef::Integer(78),
        ]);
        assert_eq!(cmp.compare(&stored, &full).unwrap(), Ordering::Less);
    }

    #[test]
    fn compare_first_field_agrees_with_the_comparator() {
        // Every one- and two-field stored key against every first-field probe the fast
        // order accepts: a decided order must be the comparator's on the first field, and
        // keys it cannot read (REAL, long TEXT, corrupt) must be left to the comparator.
        let values = [
            ValueRef::Null,
            ValueRef::Integer(0),
            ValueRef::Integer(1),
            ValueRef::Integer(-1),
            ValueRef::Integer(127),
            ValueRef::Integer(-129),
            ValueRef::Integer(40_000),
            ValueRef::Integer(1 << 40),
            ValueRef::Integer(i64::MIN),
            ValueRef::Integer(i64::MAX),
            ValueRef::Real(7.5),
            ValueRef::Text(b""),
            ValueRef::Text(b"ab"),
            ValueRef::Text(b"abc"),
            ValueRef::Text(b"b"),
            ValueRef::Text(&[b'y'; 60]),
            ValueRef::Blob(b""),
            ValueRef::Blob(b"ab"),
        ];
        let plain = RecordCompare::new(vec![], vec![]);
        for s in &values {
            for s2 in [None, Some(ValueRef::Integer(3))] {
                let stored = match s2 {
                    None => encode(&[*s]),
                    Some(v) => encode(&[*s, v]),
                };
                for p in &values {
                    let Some(fp) = FirstProbe::of(p, true) else {
                        continue;
                    };
                    let want = plain.compare(&stored, &encode(&[*p])).unwrap();
                    match compare_first_field(&stored, fp) {
                        Some(got) => assert_eq!(got, want, "stored {s:?} probe {p:?}"),
                        None => assert!(
                            matches!(s, ValueRef::Real(_)) || stored[1] >= 0x80,
                            "undecided: stored {s:?} probe {p:?}"
                        ),
                    }
                }
            }
        }
        // Corrupt keys: a body past the end, a header past the end, a reserved type.
        for bad in [
            vec![2u8, 4, 0, 0],
            vec![5, 1, 7],
            vec![2, 10, 0],
            vec![2, 19, b'a'],
        ] {
            assert_eq!(compare_first_field(&bad, FirstProbe::Integer(1)), None);
        }
        assert_eq!(
            compare_first_field(&[2, 19, b'a'], FirstProbe::Text(b"a")),
            None
        );
        assert!(FirstProbe::of(&ValueRef::Text(b"a"), false).is_none());
        let nocase = RecordCompare::new(vec![true], vec![Some(Arc::new(NoCase))]);
        assert_eq!(nocase.first_field_order(), Some((true, false)));
        assert_eq!(plain.first_field_order(), Some((false, true)));
    }

    #[test]
    fn compare_decoded_orders_exactly_as_compare() {
        // Every pair of keys of 0-3 columns (prefixes, NULLs, mixed types, collation and
        // descending columns), and a stored key that is corrupt past its first column.
        let cmp = RecordCompare::new(vec![false, true], vec![Some(Arc::new(NoCase)), None]);
        let values = [
            ValueRef::Null,
            ValueRef::Integer(-1),
            ValueRef::Integer(7),
            ValueRef::Real(7.0),
            ValueRef::Real(7.5),
            ValueRef::Text(b"ab"),
            ValueRef::Text(b"AB"),
            ValueRef::Text(b"b"),
            ValueRef::Blob(b"ab"),
            // Two-byte serial types: the fast path's hand-off to the general one.
            ValueRef::Text(&[b'x'; 70]),
            ValueRef::Integer(i64::MIN),
            ValueRef::Text(&[b'y'; 60]),
            ValueRef::Blob(&[1; 65]),
            ValueRef::Text(b""),
            ValueRef::Blob(b""),
        ];
        let mut keys = vec![encode(&[])];
        for a in &values {
            keys.push(encode(&[*a]));
            for b in &values {
                keys.push(encode(&[*a, *b]));
                keys.push(encode(&[*a, *b, ValueRef::Integer(3)]));
            }
        }
        let mut corrupt = encode(&[ValueRef::Integer(7), ValueRef::Text(b"abc")]);
        corrupt.truncate(corrupt.len() - 2);
        keys.push(corrupt);
        // A reserved serial type (10) in the second column, and a header past the end.
        keys.push(vec![3, 1, 10, 7]);
        keys.push(vec![5, 1, 7]);
        // A header longer than 127 bytes (its length a two-byte varint), and a two-byte
        // serial type cut by the header's end.
        let mut wide = vec![ValueRef::Integer(7); 130];
        wide[1] = ValueRef::Text(&[b'y'; 60]);
        keys.push(encode(&wide));
        keys.push(vec![2, 0x81, 1]);
        for probe in &keys {
            let Ok(fields) = decode(probe) else { continue };
            for stored in &keys {
                let want = cmp.compare(stored, probe).map_err(|e| e.to_string());
                let got = cmp
                    .compare_decoded(stored, probe, &fields)
                    .map_err(|e| e.to_string());
                assert_eq!(got, want, "stored {stored:?} probe {probe:?}");
            }
        }
    }
}
