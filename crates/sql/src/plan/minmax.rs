//! SQLite's min/max optimization (optoverview.html §"The MIN/MAX optimization"): a query
//! whose only aggregate is `min(x)` or `max(x)` — no GROUP BY, no HAVING, no FILTER, one
//! argument — walks an index on `x` (or the rowid) in the aggregate's order and stops at the
//! first row whose `x` is not NULL: one seek instead of a scan.
//!
//! Invariants:
//! - The walk only decides which rows are visited; the aggregate still steps over each of
//!   them, so an early stop never changes min()/max() (the first non-NULL value in the walk
//!   order is the extreme) and the bare columns come from that same row, as in SQLite (the
//!   first row in index order for min(), the last for max(): ties go to the largest rowid).
//! - `Flagged` without `Ordered` changes nothing but EXPLAIN QUERY PLAN's wording: SQLite
//!   says `SEARCH` for every loop of a min/max query, even a full scan.

use super::bind::Binder;
use super::*;

/// Whether and how a core uses the min/max optimization.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MinMaxOpt {
    /// Not a min/max query.
    Off,
    /// A min/max query (SQLite's WHERE_ORDERBY_MIN/MAX) whose access path does not yield the
    /// argument's order: the aggregate scans every row.
    Flagged,
    /// The single source is walked in the argument's order: the executor stops after the
    /// first row (passing the filters) whose argument is not NULL.
    Ordered,
}

impl MinMaxOpt {
    /// Whether EXPLAIN QUERY PLAN words this core's loops as `SEARCH`.
    pub fn is_flagged(self) -> bool {
        self != MinMaxOpt::Off
    }
}

impl Binder<'_> {
    /// Sets `core.min_max` and, when an index or the rowid yields the argument's order,
    /// that access path (run after `choose_access`, which it may override with an index
    /// walk, covering or not, as `order_by_satisfied` does for ORDER BY).
    pub(crate) fn plan_min_max(&self, core: &mut CorePlan) {
        core.min_max = MinMaxOpt::Off;
        if !core.is_agg
            || !core.group_by.is_empty()
            || core.having.is_some()
            || !core.windows.is_empty()
            || core.values.is_some()
        {
            return;
        }
        let Some(first) = core.aggs.first() else {
            return;
        };
        if !first.def.is_min_max_aggregate() || first.args.len() != 1 || first.filter.is_some() {
            return;
        }
        // SQLite counts identical aggregate calls once: `max(a) + max(a)` still qualifies.
        // The plan's expressions have no equality of their own; their printed form is one.
        if core.aggs.len() > 1 {
            let shape = |a: &AggCall| format!("{:?}", (a.def, &a.args, a.distinct, &a.filter));
            let f = shape(first);
            if core.aggs[1..].iter().any(|a| shape(a) != f) {
                return;
            }
        }
        core.min_max = MinMaxOpt::Flagged;
        let is_max = first.def.name.eq_ignore_ascii_case("max");
        let mut scratch = core.clone();
        scratch.is_agg = false;
        scratch.aggs.clear();
        scratch.outputs = vec![first.args[0].clone()];
        scratch.n_visible = 1;
        scratch.distinct = false;
        let key = SortKey {
            idx: 0,
            desc: is_max,
            // The index order: NULLs first ascending, last descending; min() skips the
            // leading NULLs at run time.
            nulls_first: !is_max,
            coll: first.coll,
        };
        if self.order_by_satisfied(&mut scratch, &[key]) {
            core.sources[0].access = scratch.sources[0].access.clone();
            core.min_max = MinMaxOpt::Ordered;
        }
    }
}
