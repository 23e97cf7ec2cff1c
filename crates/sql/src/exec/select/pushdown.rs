//! WHERE terms run inside a table scan: a level of the nested loop whose source is a rowid
//! table read by a full scan or a rowid range hands its filter terms to the scan
//! (`RowScan::next_match`), which decodes only the columns those terms read, tests the
//! row, and decodes the rest of the row only when the terms hold. Rejected rows never
//! leave the scan: no trip through the join loop, no lock per row.
//!
//! Invariants:
//! - Only inner (and first) sources: an outer join's ON terms and its NULL row need the
//!   per-row bookkeeping of `join_level`.
//! - Only terms that cannot reach the store: no subquery anywhere in them. The scan may
//!   test the row under its transaction's lock (`Cursor::step_until`), and a subquery
//!   would open a cursor on the same transaction. Every other expression (operators,
//!   built-in functions, LIKE, CASE, CAST) works on the frame's values alone.
//! - The early mask covers every column of the source any of the terms reads, so a term
//!   never sees a stale slot; the rowid and its alias are filled before the terms run.
//!
//! Measured (callgrind, speedtest1 test 320 with `rowid<50`, 800,000 inner rows): see
//! BENCHMARKS.md, "Per-row cost of scans and expressions (eval branch)".

use super::record_filter::{RecordFilter, RecordRow};
use super::*;
use crate::exec::eval::IntTerm;

/// The columns (record positions) of `src` that `filters` read, when `filters` can run
/// inside `candidates`' scan; `None` when they cannot (see the module invariants).
pub(super) fn early_columns(
    src: &Source,
    filters: &[CExpr],
    candidates: &Candidates<'_>,
) -> Option<Vec<bool>> {
    if filters.is_empty()
        || src.join.is_outer()
        || !matches!(candidates, Candidates::Scan { .. })
        || !matches!(src.access, Access::Scan | Access::RowidRange { .. })
    {
        return None;
    }
    let ncols = src.width.checked_sub(1)?;
    let mut early = vec![false; ncols];
    let mut pure = true;
    for t in filters {
        mark(t, src.start, &mut early, &mut pure);
    }
    pure.then_some(early)
}

fn mark(e: &CExpr, start: usize, early: &mut [bool], pure: &mut bool) {
    match e {
        CExpr::Col { level: 0, idx } => {
            if let Some(slot) = idx.checked_sub(start).and_then(|i| early.get_mut(i)) {
                *slot = true;
            }
        }
        CExpr::Exists(_) | CExpr::Scalar(_) | CExpr::Field { .. } | CExpr::InSelect { .. } => {
            *pure = false
        }
        _ => {}
    }
    e.for_each_child(&mut |c| mark(c, start, early, pure));
}

impl Candidates<'_> {
    /// Moves to the next candidate that `keep` accepts, decoded into the source's slots
    /// `row[start..start + width]` (as `next_into`); false when there is none. `keep` sees
    /// the whole combined row with the `early` columns, the rowid and its alias in place.
    /// `filter`, the same terms compiled for record bytes, runs first on a scan's records.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn next_match(
        &mut self,
        row: &mut [Value],
        start: usize,
        width: usize,
        early: &[bool],
        filter: Option<&RecordFilter>,
        keep: &mut dyn FnMut(&[Value]) -> Result<bool>,
    ) -> Result<bool> {
        match self {
            Candidates::Rows(_) => loop {
                if !self.next_into(&mut row[start..start + width])? {
                    return Ok(false);
                }
                if keep(row)? {
                    return Ok(true);
                }
            },
            Candidates::Scan {
                scan,
                defaults,
                reals,
                rowid_alias,
                ..
            } => {
                let n = width - 1;
                // The row `expand_row` builds, completed in place (as `next_into`).
                let fix = |row: &mut [Value], rowid: i64, k: usize| {
                    let slots = &mut row[start..start + width];
                    if k < n {
                        for (i, slot) in slots.iter_mut().enumerate().take(n).skip(k) {
                            *slot = defaults.get(i).cloned().unwrap_or(Value::Null);
                        }
                    }
                    for &i in reals.iter() {
                        if let Value::Integer(v) = slots[i] {
                            slots[i] = Value::Real(v as f64);
                        }
                    }
                    if let Some(a) = *rowid_alias {
                        slots[a] = Value::Integer(rowid);
                    }
                    slots[n] = Value::Integer(rowid);
                };
                let mut pre = |rowid: i64, rec: &[u8]| {
                    filter?.test(&RecordRow {
                        rec,
                        rowid,
                        ncols: n,
                    })
                };
                let pre: Option<&mut RecordPre<'_>> = match filter {
                    Some(_) => Some(&mut pre),
                    None => None,
                };
                let found = scan.next_match(row, start, n, early, pre, &mut |row, rowid, k| {
                    fix(row, rowid, k);
                    keep(row)
                })?;
                match found {
                    Some((rowid, k)) => {
                        fix(row, rowid, k);
                        Ok(true)
                    }
                    None => Ok(false),
                }
            }
        }
    }
}

impl Exec<'_> {
    /// `join_level` for a source whose filters run inside its scan (`early_columns`):
    /// every row the scan yields already satisfies them.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn join_level_pushed(
        &self,
        core: &CorePlan,
        i: usize,
        row: &mut [Value],
        parent: Option<&Frame>,
        emit: &mut dyn FnMut(&mut [Value]) -> Result<()>,
        matched: &mut Vec<Vec<bool>>,
        mut candidates: Candidates<'_>,
        early: &[bool],
        chunk: Option<&super::chunk::Chunking>,
    ) -> Result<()> {
        let src = &core.sources[i];
        let filters = &core.filters[i];
        // Compiled once per scan: integer terms skip the general evaluator (int_term.rs).
        let fast: Vec<Option<IntTerm>> = filters
            .iter()
            .map(|t| IntTerm::compile(t, self.params))
            .collect();
        let (alias, reals) = match &candidates {
            Candidates::Scan {
                rowid_alias, reals, ..
            } => (*rowid_alias, &reals[..]),
            Candidates::Rows(_) => (None, &[][..]),
        };
        let record_filter = RecordFilter::compile(
            filters,
            src.start,
            src.width - 1,
            alias,
            reals,
            &Frame::new(row, parent),
            self.params,
            self.conn.case_sensitive_like(),
        );
        let mut keep = |r: &[Value]| -> Result<bool> {
            let fr = Frame::new(r, parent);
            for (t, c) in filters.iter().zip(&fast) {
                let holds = match c.as_ref().and_then(|c| c.test(&fr)) {
                    Some(b) => b,
                    None => self.is_true(t, &fr)?,
                };
                if !holds {
                    return Ok(false);
                }
            }
            Ok(true)
        };
        while candidates.next_match(
            row,
            src.start,
            src.width,
            early,
            record_filter.as_ref(),
            &mut keep,
        )? {
            // chunk.rs K2: the position is read before the later levels may move it out.
            let rowid = chunk.and_then(|_| super::chunk::outer_rowid(src, row));
            self.join_level(core, i + 1, row, parent, emit, matched)?;
            if chunk.is_some_and(|c| c.stop_after(rowid)) {
                return Err(stop_scan());
            }
        }
        Ok(())
    }
}
