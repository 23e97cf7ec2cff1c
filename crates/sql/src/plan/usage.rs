//! Column usage: which positions of a core's combined row any expression can read, so that
//! table scans decode only those columns (the others are left NULL and never looked at).
//!
//! Invariants:
//! - Over-marking is always safe, under-marking never is: every expression the executor
//!   evaluates over a core's rows (outputs, filters, ON terms, access-path probes, grouping,
//!   HAVING, aggregate arguments and filters, window terms) is walked, and so is every nested
//!   subplan that can see the core as an enclosing frame (correlated subqueries at depth + 1,
//!   FROM-subqueries, recursive CTEs and table-valued pragma arguments at the same depth).
//! - Rows leave a core only as the values of its `outputs`; nothing reads a combined row by
//!   position except through a `CExpr::Col`, which is what makes the mask complete.
//! - A value computed on read from other columns of the record (a VIRTUAL generated column)
//!   would need the columns its expression reads marked, and a table with VIRTUAL columns
//!   has a record shorter than its row (the mask is in table-column positions, decoding is in
//!   record positions): such tables are not pruned at all. STORED generated columns are
//!   ordinary record columns here.
//!
//! Measured (speedtest1 test 320, `SELECT ... (SELECT a FROM z2 WHERE 5+z2.b=z1.b) ...`):
//! not decoding `z2.c` (TEXT) removes one allocation, a UTF-8 check and a free per row.

use super::{Access, CExpr, CorePlan, FrameEdge, SelectPlan, SourceKind, WinFrame};
use std::sync::Arc;

/// Per source of `core`, the columns a scan must decode (`None`: every column, because all
/// are read or the source is not a table). The mask covers the source's record columns; the
/// rowid slot that follows them is always filled.
pub fn needed_columns(core: &CorePlan) -> Vec<Option<Arc<[bool]>>> {
    // A combined row of up to 64 positions is marked on the stack (a heap mask was one of
    // the ~80 allocations of a one-shot point SELECT).
    let mut small = [false; 64];
    let mut large = Vec::new();
    let mask: &mut [bool] = match small.get_mut(..core.width) {
        Some(m) => m,
        None => {
            large.resize(core.width, false);
            &mut large
        }
    };
    mark_core(core, 0, mask);
    core.sources
        .iter()
        .map(|src| {
            let SourceKind::Table(t) = &src.kind else {
                return None;
            };
            let ncols = t.columns.len();
            if t.without_rowid || t.has_virtual() || src.start + ncols > mask.len() {
                return None;
            }
            let m = &mask[src.start..src.start + ncols];
            if m.iter().all(|b| *b) {
                None
            } else {
                Some(Arc::from(m))
            }
        })
        .collect()
}

/// Marks the positions of the target frame that `e` reads; the target is `depth` frames up
/// from `e`'s own (0: `e` belongs to the target core itself).
fn mark_expr(e: &CExpr, depth: usize, mask: &mut [bool]) {
    match e {
        CExpr::Col { level, idx } if *level == depth => {
            if let Some(m) = mask.get_mut(*idx) {
                *m = true;
            }
        }
        CExpr::Exists(sp)
        | CExpr::Scalar(sp)
        | CExpr::Field { sub: sp, .. }
        | CExpr::InSelect { sub: sp, .. } => mark_plan(&sp.plan, depth + 1, mask),
        _ => {}
    }
    e.for_each_child(&mut |c| mark_expr(c, depth, mask));
}

fn mark_plan(plan: &SelectPlan, depth: usize, mask: &mut [bool]) {
    for core in &plan.cores {
        mark_core(core, depth, mask);
    }
    // LIMIT/OFFSET are evaluated over an empty frame whose parent is the plan's parent.
    for e in plan.limit.iter().chain(plan.offset.iter()) {
        mark_expr(e, depth, mask);
    }
}

fn mark_core(core: &CorePlan, depth: usize, mask: &mut [bool]) {
    // Marked as found, without collecting them first (a `Vec` per core).
    let mark = |e: &CExpr, mask: &mut [bool]| mark_expr(e, depth, mask);
    for row in core.values.iter().flatten() {
        for e in row.iter() {
            mark(e, mask);
        }
    }
    for src in &core.sources {
        for e in src.on.iter() {
            mark(e, mask);
        }
        match &src.access {
            Access::Scan => {}
            Access::RowidEq(v) => {
                for e in v.iter() {
                    mark(e, mask);
                }
            }
            Access::RowidRange { lo, hi, .. } => {
                for e in lo.iter().chain(hi.iter()).map(|(e, _)| e) {
                    mark(e, mask);
                }
            }
            Access::Index { eq, lo, hi, .. } => {
                for e in eq.iter().flat_map(|(v, _)| v.iter()) {
                    mark(e, mask);
                }
                for e in lo.iter().chain(hi.iter()).map(|(e, _)| e) {
                    mark(e, mask);
                }
            }
            Access::AutoIndex { col, probe, .. } => {
                mark(probe, mask);
                if depth == 0 {
                    if let Some(x) = mask.get_mut(src.start + col) {
                        *x = true;
                    }
                }
            }
        }
        // FROM-subqueries, recursive CTEs and table-valued function arguments run with this core's parent
        // as their parent: the target is as many frames up from them as from this core.
        match &src.kind {
            SourceKind::Subquery(sp) => mark_plan(&sp.plan, depth, mask),
            SourceKind::Recursive(rp) => {
                mark_plan(&rp.init.plan, depth, mask);
                mark_plan(&rp.step.plan, depth, mask);
                for e in rp.limit.iter() {
                    mark(e, mask);
                }
            }
            SourceKind::PragmaFn { args, .. } | SourceKind::JsonFn { args, .. } => {
                for e in args.iter() {
                    mark(e, mask);
                }
            }
            _ => {}
        }
    }
    for e in core.filters.iter().flatten() {
        mark(e, mask);
    }
    for e in core.group_by.iter() {
        mark(e, mask);
    }
    for e in core.having.iter() {
        mark(e, mask);
    }
    for a in &core.aggs {
        for e in a.args.iter() {
            mark(e, mask);
        }
        for e in a.filter.iter() {
            mark(e, mask);
        }
    }
    for e in core.outputs.iter() {
        mark(e, mask);
    }
    for w in &core.windows {
        for e in w.args.iter() {
            mark(e, mask);
        }
        for e in w.partition.iter() {
            mark(e, mask);
        }
        for e in w.order.iter().map(|(e, ..)| e) {
            mark(e, mask);
        }
        if let Some(f) = &w.filter {
            mark(f, mask);
        }
        if let WinFrame::Spec { start, end, .. } = &w.frame {
            for edge in [start, end] {
                if let FrameEdge::Preceding(e) | FrameEdge::Following(e) = edge {
                    mark(e, mask);
                }
            }
        }
    }
}
