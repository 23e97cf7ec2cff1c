//! SQLite's number-to-text rules, for front ends that receive typed values and must print
//! them byte-for-byte as SQLite does.
//!
//! A REAL becomes text through SQLite's own printf (printf.c), not C's: `%!.15g` for
//! `CAST(r AS TEXT)` and `sqlite3_column_text` (what the shell prints), and `%.3f` in the
//! sqllogictest harness. Both go through `sqlite3FpDecode`, which keeps at most 16 significant
//! digits (26 with the `!` flag) and rounds half-up on the decimal digit string; so `%.3f` of
//! -9223372036854775808.0 is `-9223372036854776000.000`, where C would print every digit.
//! The digits come from SQLite's double-double scaling (ported, constants included), not
//! from the exact decimal expansion, so that large values round as SQLite >= 3.43 rounds
//! them; `tests/numfmt_vs_sqlite.rs` in parlite-testkit checks this against SQLite itself.

/// A decoded REAL: decimal digits (no leading zero unless the value is 0) and the position
/// of the decimal point (`dp` digits precede it; may be <= 0 or past the digits).
struct Decoded {
    digits: Vec<u8>,
    dp: i32,
}

/// util.c `dekkerMul2`: `x *= (y + yy)` in double-double arithmetic, where `yy` is the error
/// of the binary64 constant `y`. Rust's f64 operations are IEEE binary64 without extended
/// precision, which is what the C code's `volatile`s force.
// The sum is written in SQLite's order: float addition is not associative, and `cc += ...`
// would add `cc` last.
#[allow(clippy::assign_op_pattern)]
fn dekker_mul2(x: &mut [f64; 2], y: f64, yy: f64) {
    const HIGH_BITS: u64 = 0xffff_ffff_fc00_0000;
    let hx = f64::from_bits(x[0].to_bits() & HIGH_BITS);
    let tx = x[0] - hx;
    let hy = f64::from_bits(y.to_bits() & HIGH_BITS);
    let ty = y - hy;
    let p = hx * hy;
    let q = hx * ty + tx * hy;
    let c = p + q;
    let mut cc = p - c + q + tx * ty;
    cc = x[0] * yy + x[1] * y + cc;
    x[0] = c + cc;
    x[1] = c - x[0];
    x[1] += cc;
}

/// The first half of `sqlite3FpDecode`: `r` (finite, > 0) as `v * 10^exp` with `v` of
/// 18-19 digits, scaled with SQLite's own constants so the digits are SQLite's, not the
/// exact expansion (they differ in the 16th digit for about 1 value in 30 above 1e100).
// The constants are SQLite's, digit for digit, so the port can be compared with the C.
#[allow(clippy::excessive_precision)]
fn scale_to_u64(r: f64) -> (u64, i32) {
    let mut rr = [r, 0.0];
    let mut exp = 0;
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
    let v = if rr[1] < 0.0 {
        (rr[0] as u64).wrapping_sub((-rr[1]) as u64)
    } else {
        (rr[0] as u64).wrapping_add(rr[1] as u64)
    };
    (v, exp)
}

/// `sqlite3FpDecode(r, round, round_max)` for a finite, non-negative `r`.
fn decode(r: f64, round: i32, round_max: i32) -> Decoded {
    if r == 0.0 {
        return Decoded {
            digits: vec![b'0'],
            dp: 1,
        };
    }
    let (v, exp) = scale_to_u64(r);
    let mut digits: Vec<u8> = v.to_string().into_bytes();
    let mut dp = digits.len() as i32 + exp;
    let mut round = round;
    if round <= 0 {
        round = dp - round;
        if round == 0 && digits[0] >= b'5' {
            // The value rounds up into the digit just before the first one kept.
            round = 1;
            digits.insert(0, b'0');
            dp += 1;
        }
    }
    let n = digits.len() as i32;
    if round > 0 && (round < n || n > round_max) {
        let round = round.min(round_max) as usize;
        let carry = digits[round] >= b'5';
        digits.truncate(round);
        if carry {
            let mut j = round;
            loop {
                if j == 0 {
                    digits.insert(0, b'1');
                    dp += 1;
                    break;
                }
                j -= 1;
                if digits[j] == b'9' {
                    digits[j] = b'0';
                } else {
                    digits[j] += 1;
                    break;
                }
            }
        }
    }
    while digits.len() > 1 && digits.last() == Some(&b'0') {
        digits.pop();
    }
    Decoded { digits, dp }
}

/// NaN and infinities as SQLite's printf writes them (`NaN`, `Inf`, `-Inf`).
fn special(r: f64) -> Option<&'static str> {
    if r.is_nan() {
        Some("NaN")
    } else if r == f64::INFINITY {
        Some("Inf")
    } else if r == f64::NEG_INFINITY {
        Some("-Inf")
    } else {
        None
    }
}

/// Appends the digits of a fixed-point rendering: `int_digits` places before the point
/// (at least a `0`), then `precision` places after it, taking digits from `d` in order.
fn push_fixed(out: &mut String, d: &Decoded, precision: i32, dot: bool) {
    let mut next = 0usize;
    let mut take = |out: &mut String| {
        let c = d.digits.get(next).copied().unwrap_or(b'0');
        next += 1;
        out.push(c as char);
    };
    let mut e2 = d.dp - 1;
    if e2 < 0 {
        out.push('0');
    } else {
        while e2 >= 0 {
            take(out);
            e2 -= 1;
        }
    }
    if dot {
        out.push('.');
    }
    let mut precision = precision;
    e2 += 1;
    while e2 < 0 && precision > 0 {
        out.push('0');
        precision -= 1;
        e2 += 1;
    }
    while precision > 0 {
        take(out);
        precision -= 1;
    }
}

/// SQLite's `printf("%.Nf", r)`.
pub fn format_fixed(r: f64, precision: u32) -> String {
    if let Some(s) = special(r) {
        return s.to_string();
    }
    let precision = precision as i32;
    let d = decode(r.abs(), -precision, 16);
    let mut out = String::new();
    // -0.0 is not below zero, so SQLite prints it unsigned.
    if r < 0.0 {
        out.push('-');
    }
    push_fixed(&mut out, &d, precision, precision > 0);
    out
}

/// SQLite's `printf("%!.15g", r)`: the text of a REAL in `CAST(r AS TEXT)`,
/// `sqlite3_column_text` and the shell. Integral values keep a `.0` (`1.0`, `1.0e+20`).
pub fn format_real(r: f64) -> String {
    if let Some(s) = special(r) {
        return s.to_string();
    }
    let d = decode(r.abs(), 15, 26);
    let mut out = String::new();
    if r < 0.0 {
        out.push('-');
    }
    let exp = d.dp - 1;
    // %g's precision counts significant digits; one sits before the point.
    let precision = 14;
    let body_start = out.len();
    if exp < -4 || exp > precision {
        let e = Decoded {
            digits: d.digits.clone(),
            dp: 1,
        };
        push_fixed(&mut out, &e, precision, true);
        trim_zeros(&mut out, body_start);
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        out.push_str(&format!("{:02}", exp.abs()));
    } else {
        push_fixed(&mut out, &d, precision - exp, true);
        trim_zeros(&mut out, body_start);
    }
    out
}

/// The `!` flag's trailing-zero removal: drop zeros after the point but keep one digit.
fn trim_zeros(out: &mut String, body_start: usize) {
    while out.len() > body_start && out.ends_with('0') {
        out.pop();
    }
    if out.ends_with('.') {
        out.push('0');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_three_places() {
        assert_eq!(format_fixed(0.0, 3), "0.000");
        assert_eq!(format_fixed(-0.0, 3), "0.000");
        assert_eq!(format_fixed(1.5, 3), "1.500");
        assert_eq!(format_fixed(0.0625, 3), "0.063");
        assert_eq!(format_fixed(0.0006, 3), "0.001");
        assert_eq!(format_fixed(0.0004, 3), "0.000");
        assert_eq!(format_fixed(-0.0001, 3), "-0.000");
        assert_eq!(format_fixed(1e19, 3), "10000000000000000000.000");
        assert_eq!(
            format_fixed(-9223372036854775808.0, 3),
            "-9223372036854776000.000"
        );
        assert_eq!(format_fixed(999.9996, 3), "1000.000");
        assert_eq!(format_fixed(f64::INFINITY, 3), "Inf");
    }

    #[test]
    fn real_as_text() {
        assert_eq!(format_real(0.0), "0.0");
        assert_eq!(format_real(1.0), "1.0");
        assert_eq!(format_real(-2.5), "-2.5");
        assert_eq!(format_real(0.1 + 0.2), "0.3");
        assert_eq!(format_real(1e20), "1.0e+20");
        assert_eq!(format_real(1e15), "1.0e+15");
        assert_eq!(format_real(1e14), "100000000000000.0");
        assert_eq!(format_real(0.0001), "0.0001");
        assert_eq!(format_real(0.00001), "1.0e-05");
        assert_eq!(format_real(1.5e-300), "1.5e-300");
        assert_eq!(format_real(123456789012345678.0), "1.23456789012346e+17");
        assert_eq!(format_real(9.999999999999999e14), "1.0e+15");
    }
}
