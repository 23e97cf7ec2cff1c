//! Borrowed access to the current result row: `ValueRef` and `Statement::column_ref`
//! (sqlite3_column_* / rusqlite's `Row::get_ref`).
//!
//! `Statement::column` hands out an owned `Value`, which copies every TEXT and BLOB it
//! reads; `column_ref` lends the value where the statement holds it, so reading a row costs
//! no allocation. Invariants:
//! 1. A `ValueRef` borrows the `Statement`: it cannot outlive the row, since `step`,
//!    `reset` and `bind` take `&mut self` (the borrow checker enforces SQLite's rule that a
//!    `sqlite3_column_text` pointer dies at the next step/reset).
//! 2. An index at or past the column count is an error, SQLITE_RANGE `column index out of
//!    range` (rusqlite's `InvalidColumnIndex`), whether or not a row is current.
//! 3. With no current row (before the first `step`, after the last, after `reset`) every
//!    column in range reads as NULL, as `sqlite3_column_type` answers SQLITE_NULL then.
//! 4. TEXT is always valid UTF-8 (`&str`): the SQL layer's text values are `str`.

use crate::{error, Result, Value};
use parlite_sql::value::{codes, Value as SqlValue};

/// A column value borrowed from the current row (invariant 1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ValueRef<'a> {
    Null,
    Integer(i64),
    Real(f64),
    Text(&'a str),
    Blob(&'a [u8]),
}

impl<'a> ValueRef<'a> {
    /// The integer, or None for any other type (no conversion, as rusqlite's `as_i64`).
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            ValueRef::Integer(i) => Some(i),
            _ => None,
        }
    }

    /// The real, or None for any other type.
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            ValueRef::Real(r) => Some(r),
            _ => None,
        }
    }

    /// The text, or None for any other type.
    pub fn as_str(&self) -> Option<&'a str> {
        match *self {
            ValueRef::Text(s) => Some(s),
            _ => None,
        }
    }

    /// The blob, or None for any other type.
    pub fn as_blob(&self) -> Option<&'a [u8]> {
        match *self {
            ValueRef::Blob(b) => Some(b),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, ValueRef::Null)
    }

    /// An owned copy (what `Statement::column` returns).
    pub fn to_value(&self) -> Value {
        Value::from(*self)
    }
}

impl<'a> From<&'a SqlValue> for ValueRef<'a> {
    #[inline]
    fn from(v: &'a SqlValue) -> Self {
        match v {
            SqlValue::Null => ValueRef::Null,
            SqlValue::Integer(i) => ValueRef::Integer(*i),
            SqlValue::Real(r) => ValueRef::Real(*r),
            SqlValue::Text(s) => ValueRef::Text(s),
            SqlValue::Blob(b) => ValueRef::Blob(b),
        }
    }
}

impl<'a> From<&'a Value> for ValueRef<'a> {
    fn from(v: &'a Value) -> Self {
        match v {
            Value::Null => ValueRef::Null,
            Value::Integer(i) => ValueRef::Integer(*i),
            Value::Real(r) => ValueRef::Real(*r),
            Value::Text(s) => ValueRef::Text(s),
            Value::Blob(b) => ValueRef::Blob(b),
        }
    }
}

impl From<ValueRef<'_>> for Value {
    fn from(v: ValueRef<'_>) -> Self {
        match v {
            ValueRef::Null => Value::Null,
            ValueRef::Integer(i) => Value::Integer(i),
            ValueRef::Real(r) => Value::Real(r),
            ValueRef::Text(s) => Value::Text(s.to_string()),
            ValueRef::Blob(b) => Value::Blob(b.to_vec()),
        }
    }
}

/// The SQL layer's value for a bound `ValueRef` (NaN binds as NULL, as `bind` does).
pub(crate) fn to_sql(v: ValueRef<'_>) -> SqlValue {
    match v {
        ValueRef::Null => SqlValue::Null,
        ValueRef::Integer(i) => SqlValue::Integer(i),
        ValueRef::Real(r) => SqlValue::real(r),
        ValueRef::Text(s) => SqlValue::text(s),
        ValueRef::Blob(b) => SqlValue::blob(b),
    }
}

/// Column `i` of `row` (None: no current row) for a statement of `ncols` columns
/// (invariants 2 and 3). A row longer than the prepared column list (a statement whose
/// columns are only known once it runs) is read up to its own length.
#[inline]
pub(crate) fn column_ref<'a>(
    row: Option<&'a [SqlValue]>,
    ncols: usize,
    i: usize,
) -> Result<ValueRef<'a>> {
    match row {
        Some(r) => match r.get(i) {
            Some(v) => Ok(ValueRef::from(v)),
            None => Err(out_of_range()),
        },
        None if i < ncols => Ok(ValueRef::Null),
        None => Err(out_of_range()),
    }
}

fn out_of_range() -> crate::Error {
    error(codes::SQLITE_RANGE, "column index out of range")
}
