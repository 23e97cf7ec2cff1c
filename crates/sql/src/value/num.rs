//! Text ↔ number conversions with SQLite's exact arithmetic.
//!
//! SQLite does not use the C library for these: text → real goes through its own
//! decimal scanner with Dekker double-double scaling (`sqlite3AtoF`), and real → text through
//! its own digit generator (`sqlite3FpDecode`) that rounds the *decimal digit string* half-up.
//! Both can differ from correctly rounded conversions in the last digit, and query results
//! are compared byte for byte against SQLite, so this module reproduces the same
//! arithmetic: same scaling constants, same digit rounding, same classification of
//! "looks numeric" text.
//!
//! Invariants: every function here is total (no panics, no overflow traps) on any input
//! bytes; integers are never parsed from hex here (hex literals are the lexer's business).

// The scaling constants are written digit for digit as in SQLite's util.c so that the two
// can be compared by eye; they parse to the same binary64 values either way.
#![allow(clippy::excessive_precision)]
// `u64::is_multiple_of` is newer than the workspace's minimum Rust version (1.80).
#![allow(clippy::manual_is_multiple_of)]

/// SQLite's `sqlite3Isspace`: the six ASCII whitespace bytes (not Unicode spaces).
#[inline]
pub fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// How much of a text looked like a number (the return value of `sqlite3AtoF`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NumClass {
    /// Not a number (no digits, or junk that is not a real-number prefix).
    NotNumeric,
    /// A valid real-number prefix (with `.` or exponent) followed by junk.
    RealPrefix,
    /// The whole text (modulo surrounding spaces) is a decimal integer.
    Integer,
    /// The whole text is a number with a decimal point and/or exponent.
    Real,
}

impl NumClass {
    /// True when the whole text is a well-formed number.
    pub fn is_valid(self) -> bool {
        matches!(self, NumClass::Integer | NumClass::Real)
    }
}

/// Double-double multiply: x = x * (y + yy), keeping ~106 bits (Dekker). SQLite uses this
/// to scale by powers of ten without compounding rounding errors; the constants passed as
/// `yy` are the errors of the binary64 approximations of 1e±100, 1e-10 and 1e-1.
fn dekker_mul2(x: &mut [f64; 2], y: f64, yy: f64) {
    const MASK: u64 = 0xffff_ffff_fc00_0000;
    let hx = f64::from_bits(x[0].to_bits() & MASK);
    let tx = x[0] - hx;
    let hy = f64::from_bits(y.to_bits() & MASK);
    let ty = y - hy;
    let p = hx * hy;
    let q = hx * ty + tx * hy;
    let c = p + q;
    let cc = p - c + q + tx * ty;
    let cc = x[0] * yy + x[1] * y + cc;
    x[0] = c + cc;
    x[1] = c - x[0];
    x[1] += cc;
}

/// `sqlite3AtoF`: converts the longest numeric prefix of `z` and classifies the text.
/// Leading and trailing ASCII whitespace is allowed; hex is not numeric. The value is 0.0
/// when there is no numeric prefix. Overflow gives ±inf as in SQLite.
pub fn atof(z: &[u8]) -> (f64, NumClass) {
    let end = z.len();
    let mut i = 0usize;
    let mut sign_neg = false;
    let mut s: u64 = 0;
    let mut d: i32 = 0;
    let mut esign: i32 = 1;
    let mut e: i32 = 0;
    let mut e_valid = true;
    let mut n_digit = 0u32;
    let mut e_type = 1i32;
    const SIG_MAX: u64 = (u64::MAX - 9) / 10;

    while i < end && is_space(z[i]) {
        i += 1;
    }
    if i >= end {
        return (0.0, NumClass::NotNumeric);
    }
    if z[i] == b'-' {
        sign_neg = true;
        i += 1;
    } else if z[i] == b'+' {
        i += 1;
    }
    'scan: {
        while i < end && z[i].is_ascii_digit() {
            s = s * 10 + u64::from(z[i] - b'0');
            i += 1;
            n_digit += 1;
            if s >= SIG_MAX {
                // Digits past u64 precision only shift the exponent.
                while i < end && z[i].is_ascii_digit() {
                    i += 1;
                    d = d.saturating_add(1);
                }
            }
        }
        if i >= end {
            break 'scan;
        }
        if z[i] == b'.' {
            i += 1;
            e_type += 1;
            while i < end && z[i].is_ascii_digit() {
                if s < SIG_MAX {
                    s = s * 10 + u64::from(z[i] - b'0');
                    d -= 1;
                    n_digit += 1;
                }
                i += 1;
            }
        }
        if i >= end {
            break 'scan;
        }
        if z[i] == b'e' || z[i] == b'E' {
            i += 1;
            e_valid = false;
            e_type += 1;
            if i >= end {
                break 'scan;
            }
            if z[i] == b'-' {
                esign = -1;
                i += 1;
            } else if z[i] == b'+' {
                i += 1;
            }
            while i < end && z[i].is_ascii_digit() {
                e = if e < 10000 {
                    e * 10 + i32::from(z[i] - b'0')
                } else {
                    10000
                };
                i += 1;
                e_valid = true;
            }
        }
        while i < end && is_space(z[i]) {
            i += 1;
        }
    }

    let mut result;
    if s == 0 {
        result = if sign_neg { -0.0 } else { 0.0 };
    } else {
        // Clamped: past ±20000 the result is already inf or 0 whatever the digits.
        let mut e = (i64::from(e) * i64::from(esign) + i64::from(d)).clamp(-20000, 20000) as i32;
        while e > 0 && s < (u64::MAX - 0x7ff) / 10 {
            s *= 10;
            e -= 1;
        }
        while e < 0 && s % 10 == 0 {
            s /= 10;
            e += 1;
        }
        let mut rr = [s as f64, 0.0];
        if rr[0] <= 18446744073709549568.0 {
            let s2 = rr[0] as u64;
            rr[1] = if s >= s2 {
                (s - s2) as f64
            } else {
                -((s2 - s) as f64)
            };
        }
        if e > 0 {
            while e >= 100 {
                e -= 100;
                dekker_mul2(&mut rr, 1.0e+100, -1.5902891109759918046e+83);
            }
            while e >= 10 {
                e -= 10;
                dekker_mul2(&mut rr, 1.0e+10, 0.0);
            }
            while e >= 1 {
                e -= 1;
                dekker_mul2(&mut rr, 1.0e+01, 0.0);
            }
        } else {
            while e <= -100 {
                e += 100;
                dekker_mul2(&mut rr, 1.0e-100, -1.99918998026028836196e-117);
            }
            while e <= -10 {
                e += 10;
                dekker_mul2(&mut rr, 1.0e-10, -3.6432197315497741579e-27);
            }
            while e <= -1 {
                e += 1;
                dekker_mul2(&mut rr, 1.0e-01, -5.5511151231257827021e-18);
            }
        }
        result = rr[0] + rr[1];
        if result.is_nan() {
            result = f64::INFINITY;
        }
        if sign_neg {
            result = -result;
        }
    }

    let class = if i == end && n_digit > 0 && e_valid {
        if e_type == 1 {
            NumClass::Integer
        } else {
            NumClass::Real
        }
    } else if e_type >= 2 && (e_type == 3 || e_valid) && n_digit > 0 {
        NumClass::RealPrefix
    } else {
        NumClass::NotNumeric
    };
    (result, class)
}

/// Outcome of [`atoi64`] (the return codes of `sqlite3Atoi64`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntParse {
    /// No digits at all (`-1`).
    NoDigits,
    /// The whole text is an integer that fits (`0`).
    Exact,
    /// An integer followed by non-space text (`1`); the value is the prefix.
    TrailingText,
    /// Too large for i64 (`2`); the value is saturated.
    Overflow,
    /// Exactly 9223372036854775808 (`3`); the value is saturated to i64::MAX.
    Pow63,
}

impl IntParse {
    /// SQLite's numeric code, used where its callers compare with `<= 1`.
    pub fn code(self) -> i32 {
        match self {
            IntParse::NoDigits => -1,
            IntParse::Exact => 0,
            IntParse::TrailingText => 1,
            IntParse::Overflow => 2,
            IntParse::Pow63 => 3,
        }
    }
}

/// `sqlite3Atoi64`: decimal integer prefix of `z` (leading spaces and sign allowed).
pub fn atoi64(z: &[u8]) -> (i64, IntParse) {
    let end = z.len();
    let mut i = 0usize;
    while i < end && is_space(z[i]) {
        i += 1;
    }
    let mut neg = false;
    if i < end {
        if z[i] == b'-' {
            neg = true;
            i += 1;
        } else if z[i] == b'+' {
            i += 1;
        }
    }
    let start = i;
    while i < end && z[i] == b'0' {
        i += 1;
    }
    let digits_at = i;
    let mut u: u64 = 0;
    while i < end && z[i].is_ascii_digit() {
        u = u.wrapping_mul(10).wrapping_add(u64::from(z[i] - b'0'));
        i += 1;
    }
    let n_digits = i - digits_at;
    let mut value: i64 = if u > i64::MAX as u64 {
        if neg {
            i64::MIN
        } else {
            i64::MAX
        }
    } else if neg {
        -(u as i64)
    } else {
        u as i64
    };
    let mut rc = IntParse::Exact;
    if n_digits == 0 && start == digits_at {
        rc = IntParse::NoDigits;
    } else if z[i..].iter().any(|&b| !is_space(b)) {
        rc = IntParse::TrailingText;
    }
    if n_digits < 19 {
        return (value, rc);
    }
    let c = if n_digits > 19 {
        1
    } else {
        // Compare the 19 digits with 2^63 = 9223372036854775808.
        match z[digits_at..digits_at + 19].cmp(b"9223372036854775808".as_slice()) {
            std::cmp::Ordering::Less => -1,
            std::cmp::Ordering::Equal => 0,
            std::cmp::Ordering::Greater => 1,
        }
    };
    if c < 0 {
        return (value, rc);
    }
    value = if neg { i64::MIN } else { i64::MAX };
    if c > 0 {
        (value, IntParse::Overflow)
    } else if neg {
        (value, rc)
    } else {
        (value, IntParse::Pow63)
    }
}

/// The value of a decimal numeric literal token as SQLite's code generator computes it
/// (`codeInteger` / `codeReal`): digits that fit an i64 (after the optional unary minus
/// the parser folded in) are an INTEGER — including -9223372036854775808 — and anything
/// else (too large, or with `.`/exponent) is a REAL read with SQLite's own text→real
/// conversion, which differs from correctly rounded parsing in the last bit for some
/// literals with far exponents. Hex literals are the parser's business.
pub fn decimal_literal(text: &str, negate: bool) -> super::Value {
    let z = text.as_bytes();
    if !z.is_empty() && z.iter().all(u8::is_ascii_digit) {
        match atoi64(z) {
            (v, IntParse::Exact) => return super::Value::Integer(if negate { -v } else { v }),
            (_, IntParse::Pow63) if negate => return super::Value::Integer(i64::MIN),
            _ => {}
        }
    }
    let r = atof(z).0;
    super::Value::real(if negate { -r } else { r })
}

/// `sqlite3RealToI64`: nearest-toward-zero integer, saturating at the i64 range.
pub fn real_to_i64(r: f64) -> i64 {
    if r < -9223372036854774784.0 {
        i64::MIN
    } else if r > 9223372036854774784.0 {
        i64::MAX
    } else {
        // NaN maps to 0 (Rust `as` semantics); SQLite never stores NaN.
        r as i64
    }
}

/// `sqlite3RealSameAsInt`: `r` is exactly `i` and small enough (|i| < 2^51) that the
/// integer form loses nothing when converted back.
pub fn real_same_as_int(r: f64, i: i64) -> bool {
    r == 0.0
        || (r.to_bits() == (i as f64).to_bits()
            && (-2251799813685248..2251799813685248).contains(&i))
}

/// `sqlite3IntFloatCompare`: exact comparison of an i64 with an f64 (no rounding of the
/// integer through f64, which would make 2^53+1 equal 2^53 as a real).
pub fn int_float_cmp(i: i64, r: f64) -> std::cmp::Ordering {
    use std::cmp::Ordering::*;
    if r.is_nan() {
        return Greater;
    }
    if r < -9223372036854775808.0 {
        return Greater;
    }
    if r >= 9223372036854775808.0 {
        return Less;
    }
    let y = r as i64;
    if i < y {
        return Less;
    }
    if i > y {
        return Greater;
    }
    let fi = i as f64;
    if fi < r {
        Less
    } else if fi > r {
        Greater
    } else {
        Equal
    }
}

/// A real number decoded into decimal digits (`FpDecode`).
#[derive(Debug, Clone)]
pub struct FpDecoded {
    pub negative: bool,
    /// 0: finite; 1: infinity; 2: NaN.
    pub special: u8,
    /// ASCII digits, most significant first, no trailing zeros, never empty when finite.
    pub digits: Vec<u8>,
    /// Position of the decimal point relative to `digits[0]` (value = 0.d1d2… × 10^dp).
    pub dp: i32,
}

/// `sqlite3FpDecode`: digits of `r`, rounded half-up on the decimal string.
/// `round > 0`: keep min(round, max_round) significant digits; `round <= 0`: keep `-round`
/// digits after the decimal point (at most `max_round` significant).
pub fn fp_decode(r: f64, round: i32, max_round: i32) -> FpDecoded {
    let mut r = r;
    let negative;
    if r < 0.0 {
        negative = true;
        r = -r;
    } else if r == 0.0 {
        return FpDecoded {
            negative: false,
            special: 0,
            digits: vec![b'0'],
            dp: 1,
        };
    } else {
        negative = false;
    }
    if r.is_infinite() {
        return FpDecoded {
            negative,
            special: 1,
            digits: Vec::new(),
            dp: 0,
        };
    }
    if r.is_nan() {
        return FpDecoded {
            negative,
            special: 2,
            digits: Vec::new(),
            dp: 0,
        };
    }
    let mut exp: i32 = 0;
    let mut rr = [r, 0.0];
    // Scale into [~9.2e17, ~9.2e18] so the integer part holds 18-19 significant digits.
    if rr[0] > 9.223372036854774784e+18 {
        while rr[0] > 9.223372036854774784e+118 {
            exp += 100;
            dekker_mul2(&mut rr, 1.0e-100, -1.99918998026028836196e-117);
        }
        while rr[0] > 9.223372036854774784e+28 {
            exp += 10;
            dekker_mul2(&mut rr, 1.0e-10, -3.6432197315497741579e-27);
        }
        while rr[0] > 9.223372036854774784e+18 {
            exp += 1;
            dekker_mul2(&mut rr, 1.0e-01, -5.5511151231257827021e-18);
        }
    } else {
        while rr[0] < 9.223372036854774784e-83 {
            exp -= 100;
            dekker_mul2(&mut rr, 1.0e+100, -1.5902891109759918046e+83);
        }
        while rr[0] < 9.223372036854774784e+07 {
            exp -= 10;
            dekker_mul2(&mut rr, 1.0e+10, 0.0);
        }
        while rr[0] < 9.22337203685477478e+17 {
            exp -= 1;
            dekker_mul2(&mut rr, 1.0e+01, 0.0);
        }
    }
    let mut v: u64 = if rr[1] < 0.0 {
        (rr[0] as u64).wrapping_sub((-rr[1]) as u64)
    } else {
        (rr[0] as u64).wrapping_add(rr[1] as u64)
    };
    let mut digits: Vec<u8> = Vec::with_capacity(24);
    if v == 0 {
        digits.push(b'0');
    }
    while v > 0 {
        digits.push(b'0' + (v % 10) as u8);
        v /= 10;
    }
    digits.reverse();
    let mut n = digits.len() as i32;
    let mut dp = n + exp;
    let mut round = round;
    if round <= 0 {
        round = dp - round;
        if round == 0 && digits[0] >= b'5' {
            round = 1;
            digits.insert(0, b'0');
            n += 1;
            dp += 1;
        }
    }
    if round > 0 && (round < n || n > max_round) {
        if round > max_round {
            round = max_round;
        }
        let cut = round as usize;
        let round_up = digits.get(cut).is_some_and(|&c| c >= b'5');
        digits.truncate(cut);
        if round_up {
            let mut j = cut;
            loop {
                if j == 0 {
                    digits.insert(0, b'1');
                    dp += 1;
                    break;
                }
                j -= 1;
                if digits[j] < b'9' {
                    digits[j] += 1;
                    break;
                }
                digits[j] = b'0';
            }
        }
    }
    while digits.len() > 1 && digits.last() == Some(&b'0') {
        digits.pop();
    }
    FpDecoded {
        negative,
        special: 0,
        digits,
        dp,
    }
}

/// Conversion letters of the floating-point printf formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FloatStyle {
    /// `%f`
    Fixed,
    /// `%e` / `%E`
    Exp,
    /// `%g` / `%G`
    General,
}

/// Options of one floating-point conversion (the printf flags that affect the digits).
#[derive(Debug, Clone, Copy)]
pub struct FloatFormat {
    pub style: FloatStyle,
    /// Negative: the default (6).
    pub precision: i32,
    /// `#`
    pub alternate: bool,
    /// `!`: 26 significant digits instead of 16, and keep ".0" on whole numbers.
    pub alt2: bool,
    /// `+` or ` ` or none.
    pub sign_char: Option<u8>,
    /// `0` flag: SQLite prints "null" for NaN and 9e999 for infinity under it.
    pub zero_pad: bool,
    /// `,` flag (thousands separator in the integer part).
    pub thousands: bool,
    /// `E`/`G`: upper-case exponent letter.
    pub upper: bool,
}

/// Renders `r` as SQLite's printf does for %f/%e/%g, without width padding.
/// Returns the text and whether it is "numeric" (zero padding applies) .
pub fn format_float(out: &mut String, r: f64, f: &FloatFormat) {
    let mut precision = if f.precision < 0 { 6 } else { f.precision };
    // SQLite caps the digit buffer; precision beyond ~100M would only produce zeros and
    // risks huge allocations, so it is capped (printf.rs caps widths the same way).
    precision = precision.min(100_000_000);
    let mut style = f.style;
    let round = match style {
        FloatStyle::Fixed => -precision,
        FloatStyle::General => {
            if precision == 0 {
                precision = 1;
            }
            precision
        }
        FloatStyle::Exp => precision.saturating_add(1),
    };
    let mut s = fp_decode(r, round, if f.alt2 { 26 } else { 16 });
    if s.special == 2 {
        out.push_str(if f.zero_pad { "null" } else { "NaN" });
        return;
    }
    if s.special == 1 {
        if f.zero_pad {
            s.digits = vec![b'9'];
            s.dp = 1000;
        } else {
            if s.negative {
                out.push('-');
            } else if let Some(c) = f.sign_char {
                out.push(c as char);
            }
            out.push_str("Inf");
            return;
        }
    }
    let prefix = if s.negative { Some(b'-') } else { f.sign_char };
    let mut exp = s.dp - 1;
    let rtz;
    if style == FloatStyle::General {
        precision -= 1;
        rtz = !f.alternate;
        if exp < -4 || exp > precision {
            style = FloatStyle::Exp;
        } else {
            precision -= exp;
            style = FloatStyle::Fixed;
        }
    } else {
        rtz = f.alt2;
    }
    let mut e2 = if style == FloatStyle::Exp {
        0
    } else {
        s.dp - 1
    };
    let start = out.len();
    let dp_flag = precision > 0 || f.alternate || f.alt2;
    if let Some(c) = prefix {
        out.push(c as char);
    }
    let digits = &s.digits;
    let mut j = 0usize;
    let next_digit = |j: &mut usize| -> char {
        if *j < digits.len() {
            let c = digits[*j] as char;
            *j += 1;
            c
        } else {
            '0'
        }
    };
    if e2 < 0 {
        out.push('0');
    } else {
        while e2 >= 0 {
            out.push(next_digit(&mut j));
            if f.thousands && e2 % 3 == 0 && e2 > 1 {
                out.push(',');
            }
            e2 -= 1;
        }
    }
    if dp_flag {
        out.push('.');
    }
    e2 += 1;
    while e2 < 0 && precision > 0 {
        out.push('0');
        precision -= 1;
        e2 += 1;
    }
    while precision > 0 {
        out.push(next_digit(&mut j));
        precision -= 1;
    }
    if rtz && dp_flag {
        while out.len() > start && out.ends_with('0') {
            out.pop();
        }
        if out.ends_with('.') {
            if f.alt2 {
                out.push('0');
            } else {
                out.pop();
            }
        }
    }
    if style == FloatStyle::Exp {
        exp = s.dp - 1;
        out.push(if f.upper { 'E' } else { 'e' });
        if exp < 0 {
            out.push('-');
            exp = -exp;
        } else {
            out.push('+');
        }
        if exp >= 100 {
            out.push((b'0' + (exp / 100) as u8) as char);
            exp %= 100;
        }
        out.push((b'0' + (exp / 10) as u8) as char);
        out.push((b'0' + (exp % 10) as u8) as char);
    }
}

/// A real rendered as SQLite renders it in query results and CAST: `%!.15g`.
pub fn real_to_text(r: f64) -> String {
    let mut s = String::with_capacity(24);
    push_real_text(&mut s, r);
    s
}

/// [`real_to_text`] appended to `out`.
pub fn push_real_text(out: &mut String, r: f64) {
    format_float(
        out,
        r,
        &FloatFormat {
            style: FloatStyle::General,
            precision: 15,
            alternate: false,
            alt2: true,
            sign_char: None,
            zero_pad: false,
            thousands: false,
            upper: false,
        },
    );
}

/// An integer's decimal text appended to `out`, as `i.to_string()` renders it without
/// a `String` of its own or the formatting machinery (group_concat of integers,
/// speedtest1 tests 160/161/170).
pub fn push_int_text(out: &mut String, i: i64) {
    // i64::MIN is a sign and 19 digits.
    let mut buf = [0u8; 20];
    let mut at = buf.len();
    let mut n = i.unsigned_abs();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if i < 0 {
        at -= 1;
        buf[at] = b'-';
    }
    // ASCII digits and a sign: the check cannot fail.
    out.push_str(std::str::from_utf8(&buf[at..]).unwrap_or_default());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_text_matches_sqlite_examples() {
        assert_eq!(real_to_text(1.0), "1.0");
        assert_eq!(real_to_text(1e20), "1.0e+20");
        assert_eq!(real_to_text(0.1), "0.1");
        assert_eq!(real_to_text(-0.0), "0.0");
        assert_eq!(real_to_text(9.223372036854776e18), "9.22337203685478e+18");
        assert_eq!(real_to_text(f64::INFINITY), "Inf");
        assert_eq!(real_to_text(f64::NEG_INFINITY), "-Inf");
        assert_eq!(real_to_text(1e-5), "1.0e-05");
        assert_eq!(real_to_text(123456.789), "123456.789");
    }

    #[test]
    fn atof_classifies() {
        assert_eq!(atof(b" 12 "), (12.0, NumClass::Integer));
        assert_eq!(atof(b"1.5e3"), (1500.0, NumClass::Real));
        assert_eq!(atof(b"1.5x").1, NumClass::RealPrefix);
        assert_eq!(atof(b"12x").1, NumClass::NotNumeric);
        assert_eq!(atof(b"0x10").1, NumClass::NotNumeric);
        assert_eq!(atof(b"").1, NumClass::NotNumeric);
        assert_eq!(atof(b"1e").1, NumClass::NotNumeric);
        assert_eq!(atof(b"1.5e").1, NumClass::RealPrefix);
        assert_eq!(atof(b".").1, NumClass::NotNumeric);
        assert_eq!(atof(b"1e999999999").0, f64::INFINITY);
    }

    #[test]
    fn literals() {
        use super::super::Value;
        assert_eq!(
            decimal_literal("9223372036854775807", false),
            Value::Integer(i64::MAX)
        );
        assert_eq!(
            decimal_literal("9223372036854775808", true),
            Value::Integer(i64::MIN)
        );
        assert_eq!(
            decimal_literal("9223372036854775808", false),
            Value::Real(9223372036854775808.0)
        );
        assert_eq!(decimal_literal("1.5", true), Value::Real(-1.5));
        assert_eq!(decimal_literal("1e999", false), Value::Real(f64::INFINITY));
        assert_eq!(decimal_literal(".5", false), Value::Real(0.5));
    }

    #[test]
    fn atoi64_codes() {
        assert_eq!(atoi64(b"9223372036854775807"), (i64::MAX, IntParse::Exact));
        assert_eq!(atoi64(b"9223372036854775808"), (i64::MAX, IntParse::Pow63));
        assert_eq!(atoi64(b"-9223372036854775808"), (i64::MIN, IntParse::Exact));
        assert_eq!(
            atoi64(b"99999999999999999999"),
            (i64::MAX, IntParse::Overflow)
        );
        assert_eq!(atoi64(b"12abc"), (12, IntParse::TrailingText));
        assert_eq!(atoi64(b"abc"), (0, IntParse::NoDigits));
        assert_eq!(atoi64(b" -0012 "), (-12, IntParse::Exact));
    }
}
