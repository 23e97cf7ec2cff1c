//! SQLite's lenient UTF-8 reader (`sqlite3Utf8Read`), for functions that walk the bytes
//! of blobs as characters (unicode, LIKE, GLOB). It never fails: a lead byte >= 0xc0
//! absorbs the continuation bytes that follow; results below 0x80, UTF-16 surrogates and
//! U+FFFE/U+FFFF become U+FFFD; a stray byte 0x80..=0xbf stands for itself.

/// Decodes the character at the start of `z`: (code point, bytes used). `z` must be
/// non-empty; an empty slice gives (0, 0).
pub fn read(z: &[u8]) -> (u32, usize) {
    let Some(&c0) = z.first() else {
        return (0, 0);
    };
    if c0 < 0xc0 {
        return (u32::from(c0), 1);
    }
    let mut c = match c0 {
        0xc0..=0xdf => u32::from(c0 - 0xc0),
        0xe0..=0xef => u32::from(c0 - 0xe0),
        0xf0..=0xf7 => u32::from(c0 - 0xf0),
        0xf8..=0xfb => u32::from(c0 - 0xf8),
        0xfc..=0xfd => u32::from(c0 - 0xfc),
        _ => 0,
    };
    let mut n = 1;
    while n < z.len() && z[n] & 0xc0 == 0x80 {
        c = (c << 6).wrapping_add(u32::from(z[n] & 0x3f));
        n += 1;
    }
    if c < 0x80 || (c & 0xffff_f800) == 0xd800 || (c & 0xffff_fffe) == 0xfffe {
        c = 0xfffd;
    }
    (c, n)
}

/// All characters of `z` (which the caller has already cut at any NUL).
pub fn decode(z: &[u8]) -> Vec<u32> {
    let mut out = Vec::with_capacity(z.len());
    let mut i = 0;
    while i < z.len() {
        let (c, n) = read(&z[i..]);
        out.push(c);
        i += n.max(1);
    }
    out
}

/// The offset of the first byte `b` of `hay` with `b | mask == want`, eight bytes per step
/// (the exact zero-byte test: the lowest set bit of `(x - 0x01..) & !x & 0x80..` marks the
/// first zero byte of `x`; bits above it may be spurious, so only the lowest is read). A
/// byte loop took ~5 instructions per text byte, about half of a `%on%` match on
/// speedtest1's texts, and [`until_nul`]'s byte loop as much again.
#[inline]
pub fn find_byte(hay: &[u8], want: u8, mask: u8) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let wantw = LO.wrapping_mul(u64::from(want));
    let maskw = LO.wrapping_mul(u64::from(mask));
    let mut chunks = hay.chunks_exact(8);
    let mut base = 0;
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        let x = (u64::from_le_bytes(w) | maskw) ^ wantw;
        let z = x.wrapping_sub(LO) & !x & HI;
        if z != 0 {
            return Some(base + (z.trailing_zeros() / 8) as usize);
        }
        base += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&b| b | mask == want)
        .map(|k| base + k)
}

/// `z` up to its first NUL (C string semantics).
pub fn until_nul(z: &[u8]) -> &[u8] {
    match find_byte(z, 0, 0) {
        Some(n) => &z[..n],
        None => z,
    }
}
