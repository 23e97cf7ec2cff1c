//! Truth tests in SQLite's jump context (sqlite3ExprIfFalse / sqlite3ExprIfTrue): WHERE,
//! ON and HAVING terms, CHECK constraints and partial-index WHEREs, all tested through
//! `Exec::is_true`.
//!
//! Where that context evaluates less than the expression's value would, so does this:
//! `x BETWEEN lo AND hi` is coded as `x >= lo AND x <= hi` with a jump after the first
//! comparison, so `hi` is not evaluated once `x >= lo` is false or NULL (for `NOT BETWEEN`:
//! once it is false), and an error `hi` would raise (integer overflow) is not raised for
//! that row. As a value (a result column) both bounds are always evaluated.
//!
//! Invariant: the truth answered is the one `eval` gives the whole expression; only which
//! operands are evaluated differs.

use super::*;

impl Exec<'_> {
    /// `is_true` of a BETWEEN term (`e` must be a `CExpr::Between`).
    pub(super) fn between_is_true(&self, e: &CExpr, f: &Frame) -> Result<bool> {
        let CExpr::Between {
            e: x,
            not,
            lo,
            hi,
            coll,
            hicoll,
            eaff,
            loaff,
            hiaff,
        } = e
        else {
            return Ok(value::truth(&self.eval(e, f)?) == Some(true));
        };
        // Integers with no TEXT affinity around compare as they are (speedtest1 test
        // 130's `b BETWEEN 65040 AND 65056` per row, as in `eval`).
        let text = Some(Affinity::Text);
        let plain = *eaff != text && *loaff != text && *hiaff != text;
        let cmp = |v: &Value, eaff, b: &Value, baff, coll| match (v, b) {
            (Value::Integer(x), Value::Integer(y)) if plain => Some(x.cmp(y)),
            _ => value::compare_op(v, eaff, b, baff, coll),
        };
        let v = self.operand(x, f)?;
        let a = self.operand(lo, f)?;
        let ge = cmp(&v, *eaff, &a, *loaff, *coll).map(|o| o != Ordering::Less);
        match (ge, *not) {
            (Some(true), _) => {}
            (None, true) => {}
            // `x >= lo` decides: BETWEEN is false (or NULL), NOT BETWEEN true.
            (_, not) => return Ok(not),
        }
        let b = self.operand(hi, f)?;
        let le = cmp(&v, *eaff, &b, *hiaff, *hicoll).map(|o| o != Ordering::Greater);
        let r = value::and3(ge, le);
        Ok(if *not { value::not3(r) } else { r } == Some(true))
    }
}
