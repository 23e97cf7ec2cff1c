//! Math functions (lang_mathfunc.html), as SQLite builds them with
//! SQLITE_ENABLE_MATH_FUNCTIONS (on in the stock Debian/Ubuntu libsqlite3 and CLI).
//!
//! Arguments must be numbers or numeric-looking text (`sqlite3_value_numeric_type`);
//! anything else gives NULL, as does a NaN result (domain errors such as sqrt(-1)).
//! ceil/floor/trunc return integers unchanged and reals as reals. The transcendental
//! functions are the platform libm's, as in SQLite.

use super::Ctx;
use crate::value::{Affinity, Result, Value};

// Rust's std computes asinh/acosh/atanh with its own formulas, which differ from the C
// library's in the last bits; SQLite calls the C library, so parlite does too. These are
// pure functions of one double (no pointers, no global state), available in every libm
// Rust's std already links on Unix targets.
mod libm {
    extern "C" {
        pub fn asinh(x: f64) -> f64;
        pub fn acosh(x: f64) -> f64;
        pub fn atanh(x: f64) -> f64;
    }
}

fn c_asinh(x: f64) -> f64 {
    // SAFETY: a pure libm function of one double; no memory is touched.
    unsafe { libm::asinh(x) }
}
fn c_acosh(x: f64) -> f64 {
    // SAFETY: as above.
    unsafe { libm::acosh(x) }
}
fn c_atanh(x: f64) -> f64 {
    // SAFETY: as above.
    unsafe { libm::atanh(x) }
}

/// `sqlite3_value_numeric_type` + `sqlite3_value_double`: Some(x) for numbers and
/// well-formed numeric text, None otherwise.
fn numeric(v: Option<&Value>) -> Option<Value> {
    match v?
        .clone()
        .apply_comparison_affinity(Some(Affinity::Numeric))
    {
        n @ (Value::Integer(_) | Value::Real(_)) => Some(n),
        _ => None,
    }
}

fn num_f64(v: Option<&Value>) -> Option<f64> {
    numeric(v).map(|n| n.to_f64())
}

fn rounding(args: &[Value], f: fn(f64) -> f64) -> Result<Value> {
    Ok(match numeric(args.first()) {
        Some(Value::Integer(i)) => Value::Integer(i),
        Some(v) => Value::real(f(v.to_f64())),
        None => Value::Null,
    })
}

pub fn ceil(_: &Ctx, args: &[Value]) -> Result<Value> {
    rounding(args, f64::ceil)
}
pub fn floor(_: &Ctx, args: &[Value]) -> Result<Value> {
    rounding(args, f64::floor)
}
pub fn trunc(_: &Ctx, args: &[Value]) -> Result<Value> {
    rounding(args, f64::trunc)
}

fn math1(args: &[Value], f: fn(f64) -> f64) -> Result<Value> {
    Ok(match num_f64(args.first()) {
        Some(x) => Value::real(f(x)),
        None => Value::Null,
    })
}

fn math2(args: &[Value], f: fn(f64, f64) -> f64) -> Result<Value> {
    Ok(match (num_f64(args.first()), num_f64(args.get(1))) {
        (Some(x), Some(y)) => Value::real(f(x, y)),
        _ => Value::Null,
    })
}

/// ln(X), log(X) = log10(X), log10(X), log2(X), log(B, X); NULL for X <= 0 or B <= 1.
fn log_impl(args: &[Value], one_arg: fn(f64) -> f64) -> Result<Value> {
    let Some(x) = num_f64(args.first()) else {
        return Ok(Value::Null);
    };
    if x <= 0.0 {
        return Ok(Value::Null);
    }
    if args.len() == 2 {
        // As in SQLite: the base is the first argument, and the second is read with
        // sqlite3_value_double without a numeric-type check.
        let b = x.ln();
        if b <= 0.0 {
            return Ok(Value::Null);
        }
        let x = args[1].to_f64();
        if x <= 0.0 {
            return Ok(Value::Null);
        }
        return Ok(Value::real(x.ln() / b));
    }
    Ok(Value::real(one_arg(x)))
}

pub fn ln(_: &Ctx, args: &[Value]) -> Result<Value> {
    log_impl(args, f64::ln)
}
pub fn log(_: &Ctx, args: &[Value]) -> Result<Value> {
    log_impl(args, f64::log10)
}
pub fn log2(_: &Ctx, args: &[Value]) -> Result<Value> {
    log_impl(args, f64::log2)
}
pub fn exp(_: &Ctx, args: &[Value]) -> Result<Value> {
    math1(args, f64::exp)
}
pub fn pow(_: &Ctx, args: &[Value]) -> Result<Value> {
    math2(args, f64::powf)
}
/// `mod(X, Y)`: C's fmod (the sign follows X).
pub fn fmod(_: &Ctx, args: &[Value]) -> Result<Value> {
    math2(args, |x, y| x % y)
}
pub fn acos(_: &Ctx, args: &[Value]) -> Result<Value> {
    math1(args, f64::acos)
}
pub fn asin(_: &Ctx, args: &[Value]) -> Result<Value> {
    math1(args, f64::asin)
}
pub fn atan(_: &Ctx, args: &[Value]) -> Result<Value> {
    math1(args, f64::atan)
}
pub fn atan2(_: &Ctx, args: &[Value]) -> Result<Value> {
    math2(args, f64::atan2)
}
pub fn cos(_: &Ctx, args: &[Value]) -> Result<Value> {
    math1(args, f64::cos)
}
pub fn sin(_: &Ctx, args: &[Value]) -> Result<Value> {
    math1(args, f64::sin)
}
pub fn tan(_: &Ctx, args: &[Value]) -> Result<Value> {
    math1(args, f64::tan)
}
pub fn cosh(_: &Ctx, args: &[Value]) -> Result<Value> {
    math1(args, f64::cosh)
}
pub fn sinh(_: &Ctx, args: &[Value]) -> Result<Value> {
    math1(args, f64::sinh)
}
pub fn tanh(_: &Ctx, args: &[Value]) -> Result<Value> {
    math1(args, f64::tanh)
}
pub fn acosh(_: &Ctx, args: &[Value]) -> Result<Value> {
    math1(args, c_acosh)
}
pub fn asinh(_: &Ctx, args: &[Value]) -> Result<Value> {
    math1(args, c_asinh)
}
pub fn atanh(_: &Ctx, args: &[Value]) -> Result<Value> {
    math1(args, c_atanh)
}
pub fn sqrt(_: &Ctx, args: &[Value]) -> Result<Value> {
    math1(args, f64::sqrt)
}
/// `radians(X)`: X*(π/180), with π/180 rounded first as in C.
pub fn radians(_: &Ctx, args: &[Value]) -> Result<Value> {
    math1(args, |x| x * (std::f64::consts::PI / 180.0))
}
/// `degrees(X)`: X*(180/π).
pub fn degrees(_: &Ctx, args: &[Value]) -> Result<Value> {
    math1(args, |x| x * (180.0 / std::f64::consts::PI))
}
pub fn pi(_: &Ctx, _: &[Value]) -> Result<Value> {
    Ok(Value::Real(std::f64::consts::PI))
}
