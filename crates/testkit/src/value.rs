//! A result value with its runtime type, and SQLite's rules for reading one as another type.
//!
//! The sqllogictest harness reads every column through `sqlite3_column_int`, `_double` or
//! `_text` according to the type letter the test declares, so a runner that gets typed values
//! from an engine must apply SQLite's conversions itself: `memIntValue`/`sqlite3Atoi64`,
//! `sqlite3AtoF`, `doubleToInt64` and `%!.15g` for REAL-to-text (vdbemem.c, util.c).

use parlite_cli::numfmt;

/// One column of one row, typed as the engine returned it.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Integer(i64),
    Real(f64),
    /// Bytes, not `String`: SQLite text may hold invalid UTF-8 (`CAST(x'ff' AS TEXT)`),
    /// and the harness renders such bytes one `@` each.
    Text(Vec<u8>),
    Blob(Vec<u8>),
}

impl Value {
    /// `sqlite3_column_int64`: SQLite's integer reading of any value.
    pub fn as_i64(&self) -> i64 {
        match self {
            Value::Null => 0,
            Value::Integer(i) => *i,
            Value::Real(r) => real_to_i64(*r),
            Value::Text(b) | Value::Blob(b) => atoi64(b),
        }
    }

    /// `sqlite3_column_int`: the 64-bit reading truncated to its low 32 bits, as C's cast does.
    pub fn as_i32(&self) -> i32 {
        self.as_i64() as i32
    }

    /// `sqlite3_column_double`.
    pub fn as_f64(&self) -> f64 {
        match self {
            Value::Null => 0.0,
            Value::Integer(i) => *i as f64,
            Value::Real(r) => *r,
            Value::Text(b) | Value::Blob(b) => atof(b),
        }
    }

    /// `sqlite3_column_text`: integers in decimal, reals as `%!.15g`, text and blob bytes as
    /// they are; NULL gives no bytes.
    pub fn to_text(&self) -> Vec<u8> {
        match self {
            Value::Null => Vec::new(),
            Value::Integer(i) => i.to_string().into_bytes(),
            Value::Real(r) => numfmt::format_real(*r).into_bytes(),
            Value::Text(b) | Value::Blob(b) => b.clone(),
        }
    }
}

/// vdbemem.c `doubleToInt64`: saturates at the i64 range, truncates toward zero inside it.
pub fn real_to_i64(r: f64) -> i64 {
    if r <= i64::MIN as f64 {
        i64::MIN
    } else if r >= i64::MAX as f64 {
        i64::MAX
    } else {
        // NaN also lands here; Rust's cast gives 0 where C's is undefined.
        r as i64
    }
}

/// SQLite's `sqlite3Isspace`: space, \t, \n, \v, \f, \r.
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// `sqlite3Atoi64` as `memIntValue` uses it: the value of the longest integer prefix after
/// leading spaces and one sign (`'12abc'` is 12, `'abc'` is 0, `'1e5'` is 1), saturating at the
/// i64 range. Trailing text only changes the return code, which the caller ignores.
pub fn atoi64(z: &[u8]) -> i64 {
    let mut i = 0;
    while i < z.len() && is_space(z[i]) {
        i += 1;
    }
    let mut neg = false;
    if i < z.len() && (z[i] == b'-' || z[i] == b'+') {
        neg = z[i] == b'-';
        i += 1;
    }
    // 2^63 plus change: once past it the value saturates, so stop accumulating there.
    const CAP: u128 = 1 << 64;
    let mut u: u128 = 0;
    while i < z.len() && z[i].is_ascii_digit() {
        u = (u * 10 + u128::from(z[i] - b'0')).min(CAP);
        i += 1;
    }
    if neg {
        if u >= 1 << 63 {
            i64::MIN
        } else {
            -(u as i64)
        }
    } else if u > i64::MAX as u128 {
        i64::MAX
    } else {
        u as i64
    }
}

/// `sqlite3AtoF` as `sqlite3VdbeRealValue` uses it: the value of the longest prefix that reads
/// as a number (`[sign] digits [. digits] [e [sign] digits]`) after leading spaces; 0.0 when
/// there is none.
pub fn atof(z: &[u8]) -> f64 {
    let mut i = 0;
    while i < z.len() && is_space(z[i]) {
        i += 1;
    }
    let start = i;
    if i < z.len() && (z[i] == b'-' || z[i] == b'+') {
        i += 1;
    }
    let digits_from = |mut j: usize| {
        while j < z.len() && z[j].is_ascii_digit() {
            j += 1;
        }
        j
    };
    let int_end = digits_from(i);
    let mut n_digits = int_end - i;
    let mut end = int_end;
    if end < z.len() && z[end] == b'.' {
        let frac_end = digits_from(end + 1);
        n_digits += frac_end - (end + 1);
        end = frac_end;
    }
    if n_digits == 0 {
        return 0.0;
    }
    // The exponent counts only when at least one digit follows `e` and its sign.
    if end < z.len() && (z[end] == b'e' || z[end] == b'E') {
        let mut j = end + 1;
        if j < z.len() && (z[j] == b'-' || z[j] == b'+') {
            j += 1;
        }
        let exp_end = digits_from(j);
        if exp_end > j {
            end = exp_end;
        }
    }
    // The prefix is ASCII by construction; Rust's parse is correctly rounded.
    std::str::from_utf8(&z[start..end])
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_readings() {
        assert_eq!(atoi64(b"12abc"), 12);
        assert_eq!(atoi64(b"  -7 "), -7);
        assert_eq!(atoi64(b"abc"), 0);
        assert_eq!(atoi64(b"1e5"), 1);
        assert_eq!(atoi64(b"99999999999999999999999"), i64::MAX);
        assert_eq!(atoi64(b"-9223372036854775808"), i64::MIN);
        assert_eq!(atoi64(b"-99999999999999999999"), i64::MIN);
        assert_eq!(Value::Real(0.5).as_i32(), 0);
        assert_eq!(Value::Real(-1.9).as_i32(), -1);
        assert_eq!(Value::Integer(4294967297).as_i32(), 1);
        assert_eq!(Value::Real(1e30).as_i64(), i64::MAX);
    }

    #[test]
    fn real_readings() {
        assert_eq!(atof(b"12abc"), 12.0);
        assert_eq!(atof(b" 1.5e3x"), 1500.0);
        assert_eq!(atof(b"1e"), 1.0);
        assert_eq!(atof(b".5"), 0.5);
        assert_eq!(atof(b"-"), 0.0);
        assert_eq!(atof(b"abc"), 0.0);
    }
}
