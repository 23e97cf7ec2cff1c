//! SQLite variable-length integers (sqlite.org/fileformat2.html §1.6, "varint").
//!
//! A varint is 1 to 9 bytes, big-endian. Bytes 1..=8 carry 7 bits each, the high bit set
//! meaning "another byte follows"; a 9th byte, when reached, carries a full 8 bits. So any
//! `u64` fits in 9 bytes, and values below 128 take one byte.
//!
//! Invariants: decoding never reads past the slice it is given (a truncated varint is
//! `None`, which callers turn into `StorageError::Corrupt`); encoding always produces the
//! shortest form, which is what SQLite writes and what size computations assume.

/// Decodes a varint at the start of `buf`: `(value, bytes used)`, or `None` if `buf` ends
/// before the varint does.
#[inline(always)]
pub fn get_varint(buf: &[u8]) -> Option<(u64, usize)> {
    // One- and two-byte varints are by far the most common (record headers, payload sizes,
    // rowids below 16384); keeping them inline and the rest out of line took the binary
    // search of a rowid lookup from a function call per probe to a few instructions.
    match buf {
        [a, ..] if *a < 0x80 => Some((*a as u64, 1)),
        [a, b, ..] if *b < 0x80 => Some((((*a as u64 & 0x7f) << 7) | *b as u64, 2)),
        _ => get_varint_slow(buf),
    }
}

#[cold]
#[inline(never)]
fn get_varint_slow(buf: &[u8]) -> Option<(u64, usize)> {
    let mut v: u64 = 0;
    for i in 0..8 {
        let b = *buf.get(i)?;
        v = (v << 7) | (b & 0x7f) as u64;
        if b < 0x80 {
            return Some((v, i + 1));
        }
    }
    let b = *buf.get(8)?;
    Some(((v << 8) | b as u64, 9))
}

/// Like [`get_varint`] but for a varint stored as a signed 64-bit value (rowids).
#[inline]
pub fn get_varint_i64(buf: &[u8]) -> Option<(i64, usize)> {
    get_varint(buf).map(|(v, n)| (v as i64, n))
}

/// Bytes needed to encode `v`.
#[inline]
pub fn varint_len(v: u64) -> usize {
    if v < 0x80 {
        1
    } else if v > 0x00ff_ffff_ffff_ffff {
        9
    } else {
        let bits = 64 - v.leading_zeros() as usize;
        bits.div_ceil(7)
    }
}

/// Writes the varint for `v` at the start of `buf` and returns the bytes written.
/// The caller guarantees `buf.len() >= varint_len(v)` (at most 9); a shorter buffer panics,
/// which is a programming error, never a consequence of disk contents.
#[inline]
pub fn put_varint(buf: &mut [u8], v: u64) -> usize {
    if v < 0x80 {
        buf[0] = v as u8;
        return 1;
    }
    if v > 0x00ff_ffff_ffff_ffff {
        // Nine bytes: the last carries the low 8 bits, the first eight 7 bits each.
        buf[8] = v as u8;
        let mut rest = v >> 8;
        for i in (0..8).rev() {
            buf[i] = ((rest & 0x7f) as u8) | 0x80;
            rest >>= 7;
        }
        return 9;
    }
    let n = varint_len(v);
    let mut rest = v;
    for i in (0..n).rev() {
        let low = (rest & 0x7f) as u8;
        buf[i] = if i == n - 1 { low } else { low | 0x80 };
        rest >>= 7;
    }
    n
}

/// Appends the varint for `v` to `out`.
#[inline]
pub fn push_varint(out: &mut Vec<u8>, v: u64) {
    let mut tmp = [0u8; 9];
    let n = put_varint(&mut tmp, v);
    out.extend_from_slice(&tmp[..n]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_at_every_length_boundary() {
        let mut values = vec![0u64, 1, 127, 128, 16383, 16384, u64::MAX, i64::MAX as u64];
        for shift in 0..64 {
            let v = 1u64 << shift;
            values.extend([v - 1, v, v + 1]);
        }
        values.push((-1i64) as u64);
        for v in values {
            let mut buf = [0u8; 9];
            let n = put_varint(&mut buf, v);
            assert_eq!(n, varint_len(v), "len of {v}");
            assert_eq!(get_varint(&buf[..n]), Some((v, n)), "value {v}");
            // A truncated varint is detected, never read past.
            assert_eq!(get_varint(&buf[..n - 1]), None);
        }
    }

    #[test]
    fn known_encodings() {
        let mut buf = [0u8; 9];
        assert_eq!(put_varint(&mut buf, 0x80), 2);
        assert_eq!(&buf[..2], &[0x81, 0x00]);
        assert_eq!(put_varint(&mut buf, u64::MAX), 9);
        assert_eq!(&buf[..9], &[0xff; 9]);
        assert_eq!(get_varint(&[0x81, 0x80, 0x00]), Some((0x4000, 3)));
        assert_eq!(get_varint(&[]), None);
        assert_eq!(get_varint(&[0x80]), None);
    }
}
