//! SQL operators on values: arithmetic, bitwise, concatenation, truth and three-valued
//! logic, as the VDBE opcodes OP_Add..OP_Remainder, OP_BitAnd..OP_ShiftRight, OP_Concat,
//! OP_If/OP_And/OP_Or/OP_Not compute them.
//!
//! Rules (lang_expr.html "Operators"): any NULL operand gives NULL (except AND/OR, which
//! follow three-valued logic). Text and blob operands are read as numbers the way
//! [`Value::to_numeric_operand`] does. Integer `+ - *` that overflow switch to REAL; `/`
//! truncates toward zero for integers; division or modulo by zero gives NULL; a NaN result
//! gives NULL. Bitwise operators work on the 64-bit integer reading of each operand.

use super::{Numeric, Result, SqlError, Value, MAX_LENGTH_BYTES};
use std::sync::Arc;

/// The arithmetic operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArithOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

/// `lhs <op> rhs` for + - * / %.
pub fn arith(op: ArithOp, lhs: &Value, rhs: &Value) -> Value {
    let (Some(a), Some(b)) = (lhs.to_numeric_operand(), rhs.to_numeric_operand()) else {
        return Value::Null;
    };
    if let (Numeric::Int(a), Numeric::Int(b)) = (a, b) {
        let int_result = match op {
            ArithOp::Add => a.checked_add(b),
            ArithOp::Sub => a.checked_sub(b),
            ArithOp::Mul => a.checked_mul(b),
            ArithOp::Div => {
                if b == 0 {
                    return Value::Null;
                }
                // i64::MIN / -1 overflows: SQLite redoes it in floating point.
                a.checked_div(b)
            }
            ArithOp::Rem => {
                if b == 0 {
                    return Value::Null;
                }
                // SQLite maps a divisor of -1 to 1, so i64::MIN % -1 is 0.
                let b = if b == -1 { 1 } else { b };
                Some(a % b)
            }
        };
        if let Some(i) = int_result {
            return Value::Integer(i);
        }
    }
    // Like OP_Add's fp_math path, the real operands are re-read from the original values
    // (`sqlite3VdbeRealValue`), and `%` re-reads integers (`sqlite3VdbeIntValue`): for
    // text such as '1e3' the two readings differ (1000.0 vs 1).
    let (x, y) = (lhs.to_f64(), rhs.to_f64());
    let r = match op {
        ArithOp::Add => x + y,
        ArithOp::Sub => x - y,
        ArithOp::Mul => x * y,
        ArithOp::Div => {
            if y == 0.0 {
                return Value::Null;
            }
            x / y
        }
        ArithOp::Rem => {
            // SQLite computes a real remainder on the operands' integer readings and
            // returns it as REAL.
            let ia = lhs.to_i64();
            let ib = rhs.to_i64();
            if ib == 0 {
                return Value::Null;
            }
            let ib = if ib == -1 { 1 } else { ib };
            (ia % ib) as f64
        }
    };
    Value::real(r)
}

/// Unary minus of a non-literal operand. SQLite compiles `-x` as `0 - x`, so i64::MIN
/// becomes the REAL 9.223372036854775808e18, text is read as a number, and `-(0.0)` is
/// 0.0. (The parser folds `-<literal>` itself.)
pub fn negate(v: &Value) -> Value {
    arith(ArithOp::Sub, &Value::Integer(0), v)
}

/// Unary plus is a no-op in SQLite: it returns the operand unchanged (even text).
pub fn unary_plus(v: &Value) -> Value {
    v.clone()
}

/// The bitwise operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BitOp {
    And,
    Or,
    ShiftLeft,
    ShiftRight,
}

/// `lhs <op> rhs` for & | << >>. Shifts by a negative amount shift the other way; shifts
/// of 64 or more give 0 (or -1 for a right shift of a negative number).
pub fn bit_op(op: BitOp, lhs: &Value, rhs: &Value) -> Value {
    if lhs.is_null() || rhs.is_null() {
        return Value::Null;
    }
    let a = lhs.to_i64();
    let b = rhs.to_i64();
    Value::Integer(match op {
        BitOp::And => a & b,
        BitOp::Or => a | b,
        BitOp::ShiftLeft => shift(a, b, true),
        BitOp::ShiftRight => shift(a, b, false),
    })
}

fn shift(a: i64, amount: i64, left: bool) -> i64 {
    let (left, amount) = if amount < 0 {
        (!left, if amount > -64 { -amount } else { 64 })
    } else {
        (left, amount)
    };
    if amount >= 64 {
        if a >= 0 || left {
            0
        } else {
            -1
        }
    } else if left {
        ((a as u64) << amount) as i64
    } else {
        // Arithmetic shift: SQLite fills with the sign bit.
        a >> amount
    }
}

/// `~x`.
pub fn bit_not(v: &Value) -> Value {
    if v.is_null() {
        Value::Null
    } else {
        Value::Integer(!v.to_i64())
    }
}

/// `lhs || rhs`: the text forms joined; NULL if either is NULL.
pub fn concat(lhs: &Value, rhs: &Value) -> Result<Value> {
    let (Some(a), Some(b)) = (lhs.to_text(), rhs.to_text()) else {
        return Ok(Value::Null);
    };
    if a.len() + b.len() > MAX_LENGTH_BYTES {
        return Err(SqlError::TooBig);
    }
    let mut s = String::with_capacity(a.len() + b.len());
    s.push_str(&a);
    s.push_str(&b);
    Ok(Value::Text(Arc::from(s)))
}

/// Truth of a value in a boolean context (`sqlite3VdbeBooleanValue`): None for NULL;
/// integers are true when non-zero; reals, text and blobs when their numeric reading is
/// non-zero (text '1abc' and '0.5' are true, 'abc' and '0e5' false).
pub fn truth(v: &Value) -> Option<bool> {
    match v {
        Value::Null => None,
        Value::Integer(i) => Some(*i != 0),
        other => Some(other.to_f64() != 0.0),
    }
}

/// Three-valued AND: false wins over NULL.
pub fn and3(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    match (a, b) {
        (Some(false), _) | (_, Some(false)) => Some(false),
        (Some(true), Some(true)) => Some(true),
        _ => None,
    }
}

/// Three-valued OR: true wins over NULL.
pub fn or3(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    match (a, b) {
        (Some(true), _) | (_, Some(true)) => Some(true),
        (Some(false), Some(false)) => Some(false),
        _ => None,
    }
}

/// Three-valued NOT.
pub fn not3(a: Option<bool>) -> Option<bool> {
    a.map(|b| !b)
}

/// A truth value as SQL returns it: 1, 0 or NULL.
pub fn bool_value(b: Option<bool>) -> Value {
    match b {
        Some(true) => Value::Integer(1),
        Some(false) => Value::Integer(0),
        None => Value::Null,
    }
}
