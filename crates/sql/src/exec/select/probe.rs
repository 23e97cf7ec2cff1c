//! The values an access path looks up: each expression of an equality's value list is one
//! value, except an `x IN (SELECT ...)` term (a probe set, `plan::access::is_probe_set`),
//! which stands for every value in its subquery's first column.
//!
//! Invariant: a probe set's values take the IN comparison's affinity (and a REAL one turns
//! integers into reals, as the IN test does), so every row the IN term accepts has a key
//! equal to one of them; the term stays a filter of its loop, so rows the lookup finds that
//! the IN term would reject never reach the output. NULLs are returned as they are: the
//! callers skip them (a NULL never equals a key).

use super::*;
use crate::plan::access::is_probe_set;

impl Exec<'_> {
    /// Appends the lookup values of `e` (one, or a probe set's) to `out`.
    pub(super) fn probe_values(&self, e: &CExpr, fr: &Frame, out: &mut Vec<Value>) -> Result<()> {
        let CExpr::InSelect { sub, terms, .. } = e else {
            out.push(self.eval(e, fr)?);
            return Ok(());
        };
        debug_assert!(is_probe_set(e));
        let aff = terms.first().and_then(|t| t.1);
        let rows = self.subquery_rows(sub, fr)?;
        out.reserve(rows.len());
        for r in rows.iter() {
            let v = r
                .first()
                .cloned()
                .unwrap_or(Value::Null)
                .apply_comparison_affinity(aff);
            out.push(match (v, aff) {
                (Value::Integer(i), Some(Affinity::Real)) => Value::Real(i as f64),
                (v, _) => v,
            });
        }
        Ok(())
    }
}
