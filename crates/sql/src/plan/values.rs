//! The rows of `INSERT ... VALUES (...)` read straight from the tree when every term is a
//! literal or a parameter: no SELECT plan is bound, run and dropped for them.
//!
//! Measured (callgrind, 10,000 statements of speedtest1 test 400,
//! `REPLACE INTO t5 VALUES(16384,'one')`): binding the VALUES row as a SELECT, running it
//! and dropping its plan was ~5k of the statement's ~40k instructions.
//!
//! Invariant: the rows are exactly those the general path (bind the VALUES as a SELECT,
//! run it) yields: a literal becomes `literal_value`'s value, a parameter its bound value
//! (NULL when unbound), as `CExpr::Lit`/`CExpr::Param` evaluate. Anything else — another
//! expression, `CURRENT_TIME`, a row of another width, ORDER BY, LIMIT, a compound, a WITH
//! clause — answers `None` and takes the general path, which also words the errors.

use super::bind::literal_value;
use crate::parse::ast::{Expr, Literal, Select, SelectCore};
use crate::value::Value;

/// The rows of `s` when it is a plain VALUES list of literals and parameters whose every
/// row has `width` terms; `None` when the general path must bind it.
pub fn constant_rows(s: &Select, params: &[Value], width: usize) -> Option<Vec<Vec<Value>>> {
    if s.with.is_some() || !s.order_by.is_empty() || s.limit.is_some() {
        return None;
    }
    if !s.body.compounds.is_empty() {
        return None;
    }
    let SelectCore::Values(rows) = &s.body.first else {
        return None;
    };
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        if row.len() != width {
            return None;
        }
        let mut vals = Vec::with_capacity(width);
        for e in row {
            vals.push(match e {
                Expr::Literal(
                    Literal::CurrentTime | Literal::CurrentDate | Literal::CurrentTimestamp,
                ) => return None,
                Expr::Literal(l) => literal_value(l),
                Expr::Param { index, .. } => index
                    .checked_sub(1)
                    .and_then(|i| params.get(i))
                    .cloned()
                    .unwrap_or(Value::Null),
                _ => return None,
            });
        }
        out.push(vals);
    }
    Some(out)
}
