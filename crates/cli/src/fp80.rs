//! The text sqlite3 3.40's shell gives a REAL in `.dump`, and in the insert, quote and json
//! modes: SQLite's printf `%!.20g`, as SQLite 3.40 computes it on x86-64.
//!
//! SQLite before 3.43 generated printf digits in `long double`, which on x86-64 is the x87
//! 80-bit format (64-bit significand): it scales the value into [1, 10) by repeated
//! multiplications and divisions by powers of ten and then peels off one digit at a time,
//! each step rounded to 64 bits. The digits past the 17th are therefore not the exact
//! decimal expansion (0.1 prints as `0.10000000000000000555`, correct; 1e300 as
//! `1.0000000000000000047e+300`, whose last five digits are rounding noise; 100.5 as
//! `100.49999999999999999`), but they always read back as the same double. The SQL layer's
//! printf (`parlite_sql::value::num`) ports the exact algorithm of later SQLite, so it
//! cannot reproduce these bytes; matching the stock 3.40 shell byte for byte needs the same
//! arithmetic, done here in software: `F80` rounds every product, quotient, sum and
//! difference to a 64-bit significand, round-half-even, as the x87 unit does at its default
//! (extended) precision. The exponent never leaves the range printf uses, so there are no
//! denormals, infinities or overflow to model.

use std::cmp::Ordering;

/// A non-negative x87 extended value: `m * 2^e`, `m` normalised (top bit set) or zero.
#[derive(Clone, Copy, Debug)]
struct F80 {
    m: u64,
    e: i32,
}

impl F80 {
    const ZERO: F80 = F80 { m: 0, e: 0 };

    /// The exact extension of a non-negative finite double.
    fn from_f64(d: f64) -> F80 {
        let bits = d.to_bits();
        let exp_field = ((bits >> 52) & 0x7ff) as i32;
        let frac = bits & ((1u64 << 52) - 1);
        let (m, e) = if exp_field == 0 {
            (frac, -1074)
        } else {
            (frac | (1u64 << 52), exp_field - 1075)
        };
        if m == 0 {
            return F80::ZERO;
        }
        let lz = m.leading_zeros() as i32;
        F80 {
            m: m << lz,
            e: e - lz,
        }
    }

    /// `x * 2^e`, plus a fraction below x's last bit when `sticky`, rounded to 64 bits.
    fn round(x: u128, e: i32, sticky: bool) -> F80 {
        if x == 0 {
            return F80::ZERO;
        }
        let lz = x.leading_zeros() as i32;
        let x = x << lz;
        let mut m = (x >> 64) as u64;
        let mut e = e - lz + 64;
        let rest = x as u64;
        const HALF: u64 = 1 << 63;
        let up = rest > HALF || (rest == HALF && (sticky || m & 1 == 1));
        if up {
            m = m.wrapping_add(1);
            if m == 0 {
                m = HALF;
                e += 1;
            }
        }
        F80 { m, e }
    }

    fn is_zero(self) -> bool {
        self.m == 0
    }

    fn mul(self, o: F80) -> F80 {
        if self.is_zero() || o.is_zero() {
            return F80::ZERO;
        }
        F80::round(self.m as u128 * o.m as u128, self.e + o.e, false)
    }

    fn div(self, o: F80) -> F80 {
        if self.is_zero() {
            return F80::ZERO;
        }
        let d = o.m as u128;
        let n = (self.m as u128) << 64;
        let (mut q, mut r) = (n / d, n % d);
        // Two more quotient bits: with the remainder as sticky bit they decide the rounding.
        for _ in 0..2 {
            q <<= 1;
            r <<= 1;
            if r >= d {
                q |= 1;
                r -= d;
            }
        }
        F80::round(q, self.e - o.e - 66, r != 0)
    }

    /// The two operands as integers of one scale (63 guard bits below the larger one's
    /// significand) and whether bits of the smaller were shifted out.
    fn align(a: F80, b: F80) -> (u128, u128, i32, bool) {
        let (ax, bx) = ((a.m as u128) << 63, (b.m as u128) << 63);
        let shift = (a.e - b.e) as u32;
        if shift >= 128 {
            return (ax, 0, a.e - 63, bx != 0);
        }
        let lost = bx & ((1u128 << shift) - 1);
        (ax, bx >> shift, a.e - 63, lost != 0)
    }

    fn add(self, o: F80) -> F80 {
        if self.is_zero() {
            return o;
        }
        if o.is_zero() {
            return self;
        }
        let (a, b) = if self.e >= o.e { (self, o) } else { (o, self) };
        let (ax, bx, e, sticky) = F80::align(a, b);
        F80::round(ax + bx, e, sticky)
    }

    /// `self - o` for `self >= o`.
    fn sub(self, o: F80) -> F80 {
        if o.is_zero() {
            return self;
        }
        let (ax, bx, e, sticky) = F80::align(self, o);
        // A fraction shifted out of `o` makes the difference a little less than ax - bx.
        F80::round(ax - bx - sticky as u128, e, sticky)
    }

    fn cmp(self, o: F80) -> Ordering {
        match (self.is_zero(), o.is_zero()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            (false, false) => self.e.cmp(&o.e).then(self.m.cmp(&o.m)),
        }
    }

    fn lt(self, d: f64) -> bool {
        self.cmp(F80::from_f64(d)) == Ordering::Less
    }

    /// `(int)x` for `0 <= x < 10`.
    fn trunc(self) -> u64 {
        if self.is_zero() || self.e <= -64 {
            0
        } else {
            self.m >> (-self.e) as u32
        }
    }
}

/// printf.c's `et_getdigit`: the leading digit of `val` in [0, 10), which becomes the rest
/// times ten; '0' once the `nsd` significant digits are spent.
fn next_digit(val: &mut F80, nsd: &mut i32) -> char {
    if *nsd <= 0 {
        return '0';
    }
    *nsd -= 1;
    let digit = val.trunc();
    let d = F80::from_f64(digit as f64);
    *val = val.sub(d).mul(F80::from_f64(10.0));
    char::from(b'0' + digit as u8)
}

/// SQLite 3.40's `sqlite3_snprintf("%!.20g", r)` on x86-64 (printf.c's etGENERIC path with
/// the `!` flag: up to 26 significant digits, trailing zeros removed but one kept after the
/// point, `Inf` for infinities).
pub fn format_g20(r: f64) -> String {
    if r.is_nan() {
        return "NaN".to_string();
    }
    let mut out = String::new();
    if r < 0.0 {
        out.push('-');
    }
    if r.is_infinite() {
        // printf's scaling loops give up past 1e350 and print Inf.
        out.push_str("Inf");
        return out;
    }
    let mut value = F80::from_f64(r.abs());
    // `%.20g`: 19 digits after the first; the rounder is 0.5e-19, as arRound[9] * 1e-10.
    let mut precision: i32 = 19;
    let rounder = F80::from_f64(5.0e-10).mul(F80::from_f64(1.0e-10));
    let mut exp: i32 = 0;
    if !value.is_zero() {
        let mut scale = F80::from_f64(1.0);
        for (step, n) in [(1e100, 100), (1e10, 10), (10.0, 1)] {
            while value.cmp(F80::from_f64(step).mul(scale)) != Ordering::Less && exp <= 350 {
                scale = scale.mul(F80::from_f64(step));
                exp += n;
            }
        }
        value = value.div(scale);
        while value.lt(1e-8) {
            value = value.mul(F80::from_f64(1e8));
            exp -= 8;
        }
        while value.lt(1.0) {
            value = value.mul(F80::from_f64(10.0));
            exp -= 1;
        }
        if exp > 350 {
            out.push_str("Inf");
            return out;
        }
    }
    value = value.add(rounder);
    if !value.lt(10.0) {
        value = value.mul(F80::from_f64(0.1));
        exp += 1;
    }
    let exponential = exp < -4 || exp > precision;
    let mut e2 = if exponential {
        0
    } else {
        precision -= exp;
        exp
    };
    let mut nsd = 26;
    if e2 < 0 {
        out.push('0');
    } else {
        while e2 >= 0 {
            out.push(next_digit(&mut value, &mut nsd));
            e2 -= 1;
        }
    }
    out.push('.');
    e2 += 1;
    while e2 < 0 {
        out.push('0');
        precision -= 1;
        e2 += 1;
    }
    while precision > 0 {
        out.push(next_digit(&mut value, &mut nsd));
        precision -= 1;
    }
    while out.ends_with('0') {
        out.pop();
    }
    if out.ends_with('.') {
        out.push('0');
    }
    if exponential {
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        out.push_str(&format!("{:02}", exp.abs()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::format_g20;

    /// Bytes printed by sqlite3 3.40.1 (Debian, x86-64) for `printf('%!.20g', X)`.
    #[test]
    fn matches_sqlite_3_40() {
        let cases = [
            (0.1, "0.10000000000000000555"),
            (1e300, "1.0000000000000000047e+300"),
            (1e-7, "9.9999999999999995472e-08"),
            (2.5, "2.5"),
            (123.0, "123.0"),
            (0.0, "0.0"),
            (1.7976931348623157e308, "1.7976931348623156223e+308"),
            (4.9e-324, "4.9406564584124654428e-324"),
            (std::f64::consts::PI, "3.1415926535897931159"),
            (1e15, "1000000000000000.0"),
            (-1e18, "-1000000000000000000.0"),
            (2f64.powi(63), "9223372036854775807.8"),
            (1e20, "1.0e+20"),
            (0.3, "0.29999999999999998889"),
            (100.5, "100.49999999999999999"),
            (1e-300, "1.000000000000000025e-300"),
            (f64::INFINITY, "Inf"),
            (f64::NEG_INFINITY, "-Inf"),
        ];
        for (r, want) in cases {
            assert_eq!(format_g20(r), want, "{r:e}");
        }
    }
}
