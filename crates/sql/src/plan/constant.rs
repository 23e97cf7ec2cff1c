//! Comparison constants converted once: a literal compared with a column takes the
//! comparison's affinity here, at plan time, instead of on every row (SQLite codes the
//! constant with the affinity applied, `sqlite3ExprCodeTarget` + `OP_Affinity` once).
//!
//! Measured (speedtest1 fp test 130, `a BETWEEN '-61358342.0e45' AND '40211933.3e-10'` on a
//! REAL column): converting the two text bounds to REAL per row was 22% of the
//! instructions of the 13 queries (`atof`).
//!
//! Invariant: the result of every comparison is unchanged. Applying a comparison affinity
//! is idempotent (a number under a numeric affinity, a text under TEXT, stays as it is), so
//! the executor applying it again to the converted literal changes nothing; the operands'
//! affinities (`laff`/`raff`, ...) are left as they were, so the comparison affinity the
//! executor derives is the same.

use super::CExpr;
use crate::parse::ast::BinaryOp;
use crate::value::{comparison_affinity, Affinity, Value};

/// Converts, in place, every literal operand of a comparison in `e` (and its children) to
/// the comparison's affinity.
pub fn fold_comparison_literals(e: &mut CExpr) {
    match e {
        CExpr::Binary {
            op: BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Is | BinaryOp::IsNot,
            l,
            r,
            laff,
            raff,
            ..
        }
        | CExpr::Binary {
            op: BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge,
            l,
            r,
            laff,
            raff,
            ..
        } => {
            let aff = comparison_affinity(*laff, *raff);
            convert(l, aff);
            convert(r, aff);
        }
        CExpr::Between {
            e: x,
            lo,
            hi,
            eaff,
            loaff,
            hiaff,
            ..
        } => {
            // `x` is compared twice, possibly under two affinities: only the bounds change.
            convert(lo, comparison_affinity(*eaff, *loaff));
            convert(hi, comparison_affinity(*eaff, *hiaff));
            fold_comparison_literals(x);
        }
        CExpr::InList { list, eaff, .. } if eaff.is_some() => {
            // The left operand's affinity applies to every item (see the executor).
            let aff = comparison_affinity(*eaff, None);
            for item in list.iter_mut() {
                convert(item, aff);
            }
        }
        _ => {}
    }
    for_each_child_mut(e, &mut fold_comparison_literals);
}

/// Applies `aff` to `e` when it is a literal.
fn convert(e: &mut CExpr, aff: Option<Affinity>) {
    if let CExpr::Lit(v) = e {
        let wants = match aff {
            Some(a) if a.is_numeric() => matches!(v, Value::Text(_)),
            Some(Affinity::Text) => matches!(v, Value::Integer(_) | Value::Real(_)),
            _ => false,
        };
        if wants {
            *v = std::mem::replace(v, Value::Null).apply_comparison_affinity(aff);
        }
    }
}

/// The comparison and logical nodes whose children can hold more comparisons (AND/OR/NOT
/// trees and CASE); other nodes are left alone (a subquery plan folds its own filters).
fn for_each_child_mut(e: &mut CExpr, f: &mut dyn FnMut(&mut CExpr)) {
    match e {
        CExpr::Binary { l, r, .. } => {
            f(l);
            f(r)
        }
        CExpr::Unary(_, x) => f(x),
        CExpr::Case {
            base, whens, else_, ..
        } => {
            if let Some(b) = base {
                f(b)
            }
            for (w, t) in whens {
                f(w);
                f(t)
            }
            if let Some(x) = else_ {
                f(x)
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collation::Collation;

    fn col() -> Box<CExpr> {
        Box::new(CExpr::Col { level: 0, idx: 0 })
    }

    #[test]
    fn text_bound_of_a_real_column_becomes_real_once() {
        let mut e = CExpr::Between {
            e: col(),
            not: false,
            lo: Box::new(CExpr::Lit(Value::text("-6.5e3"))),
            hi: Box::new(CExpr::Lit(Value::text("abc"))),
            coll: Collation::Binary,
            hicoll: Collation::Binary,
            eaff: Some(Affinity::Real),
            loaff: None,
            hiaff: None,
        };
        fold_comparison_literals(&mut e);
        let CExpr::Between { lo, hi, .. } = &e else {
            panic!("shape")
        };
        assert!(matches!(**lo, CExpr::Lit(Value::Real(r)) if r == -6500.0));
        // Not numeric text stays text, as the per-row conversion would leave it.
        assert!(matches!(&**hi, CExpr::Lit(Value::Text(t)) if &**t == "abc"));
    }

    #[test]
    fn number_compared_with_a_text_column_becomes_text() {
        let mut e = CExpr::Binary {
            op: BinaryOp::Eq,
            l: col(),
            r: Box::new(CExpr::Lit(Value::Integer(5))),
            coll: Collation::Binary,
            laff: Some(Affinity::Text),
            raff: None,
        };
        fold_comparison_literals(&mut e);
        let CExpr::Binary { r, .. } = &e else {
            panic!("shape")
        };
        assert!(matches!(&**r, CExpr::Lit(Value::Text(t)) if &**t == "5"));
    }

    #[test]
    fn blob_columns_convert_nothing() {
        let mut e = CExpr::Binary {
            op: BinaryOp::Lt,
            l: col(),
            r: Box::new(CExpr::Lit(Value::text("5"))),
            coll: Collation::Binary,
            laff: Some(Affinity::Blob),
            raff: None,
        };
        fold_comparison_literals(&mut e);
        let CExpr::Binary { r, .. } = &e else {
            panic!("shape")
        };
        assert!(matches!(&**r, CExpr::Lit(Value::Text(_))));
    }
}
