//! SELECT execution (nested-loop joins over the chosen access paths, grouping, compound
//! operators, sorting, LIMIT), as methods of the evaluator `Exec` (eval.rs).
//!
//! Invariants:
//! - Results are materialized: a query returns all its rows; `Statement::step` hands them
//!   out one by one. This keeps every operator simple and restartable.

use super::eval::{as_rowid, err, expand_row, Exec, Frame};
use super::store::{KeyOrder, RecordPre, Row, RowScan};
use super::without_rowid::{pk_positions_in_index, WrLayout};
use crate::collation::Collation;
use crate::func;
use crate::parse::ast::{CompoundOp, UnaryOp};
use crate::plan::minmax::MinMaxOpt;
use crate::plan::*;
use crate::schema::Table;
use crate::value::{self, codes, Affinity, Result, SqlError, Value};
use std::cmp::Ordering;
use std::collections::{BTreeMap, HashSet};
use std::ops::Bound;
use std::rc::Rc;
use std::sync::Arc;

mod bare;
pub mod chunk;
mod join;
mod probe;
mod pushdown;
mod record_filter;
mod topn;
mod window;

/// The result code a scan unwinds with once it has produced as many rows as its consumer
/// needs (LIMIT without ORDER BY, EXISTS, min/max); `run_core` catches it. No SQLite result
/// code is negative, so no real error reads as this one.
const STOP_SCAN_CODE: i32 = -1;

/// The error that stops a scan (`STOP_SCAN_CODE`): its message is empty, so making and
/// dropping it allocates nothing (a message `String` was ~0.16k instructions of each
/// execution of hc_mixed's LIMIT 10 scan, callgrind).
fn stop_scan() -> SqlError {
    SqlError::Code {
        code: STOP_SCAN_CODE,
        extended_code: STOP_SCAN_CODE,
        message: String::new(),
    }
}

/// The scan was stopped on purpose (`stop_scan`).
fn is_stop_scan(e: &SqlError) -> bool {
    matches!(
        e,
        SqlError::Code {
            code: STOP_SCAN_CODE,
            ..
        }
    )
}

/// Whether `e` reads a column of its own query level outside an aggregate (a bare column
/// of an aggregate query). Subqueries count as reading it (they may be correlated).
fn reads_row(e: &CExpr) -> bool {
    match e {
        CExpr::Col { level: 0, .. }
        | CExpr::Exists(_)
        | CExpr::Scalar(_)
        | CExpr::Field { .. }
        | CExpr::InSelect { .. } => true,
        _ => {
            let mut found = false;
            e.for_each_child(&mut |c| found = found || reads_row(c));
            found
        }
    }
}

/// Orders two rows for DISTINCT/compound/grouping: column by column with BINARY (or the
/// given collations).
/// One row per group of equal rows (`rows` sorted by `row_cmp`, each tagged true when it
/// came from a compound's right arm): with `merges`, the group's first right-arm row if it
/// has one, else its first row; otherwise its last row (see `run_select_capped`).
fn keep_one_per_group(rows: Vec<(bool, Row)>, colls: &[Collation], merges: bool) -> Vec<Row> {
    let mut out: Vec<(bool, Row)> = Vec::with_capacity(rows.len());
    for (right, row) in rows {
        match out.last_mut() {
            Some(kept) if row_cmp(&kept.1, &row, colls) == Ordering::Equal => {
                if !merges || (right && !kept.0) {
                    *kept = (right, row);
                }
            }
            _ => out.push((right, row)),
        }
    }
    out.into_iter().map(|(_, r)| r).collect()
}

pub fn row_cmp(a: &[Value], b: &[Value], colls: &[Collation]) -> Ordering {
    for (i, (x, y)) in a.iter().zip(b.iter()).enumerate() {
        let o = x.compare(y, colls.get(i).copied().unwrap_or_default());
        if o != Ordering::Equal {
            return o;
        }
    }
    a.len().cmp(&b.len())
}

/// A row usable as an ordered map key, compared under per-column collations (BINARY where
/// none is given). Keys of one map share one collation list.
#[derive(Clone)]
struct Key(Vec<Value>, Vec<Collation>);

impl Key {
    fn binary(values: Vec<Value>) -> Key {
        Key(values, Vec::new())
    }
}

impl PartialEq for Key {
    fn eq(&self, o: &Self) -> bool {
        row_cmp(&self.0, &o.0, &self.1) == Ordering::Equal
    }
}
impl Eq for Key {}
impl PartialOrd for Key {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Key {
    fn cmp(&self, o: &Self) -> Ordering {
        row_cmp(&self.0, &o.0, &self.1)
    }
}

/// What one level of the nested loop iterates: rows produced by an iterator, or a table
/// scan that decodes into the combined row in place.
enum Candidates<'s> {
    Rows(Box<dyn Iterator<Item = Result<Row>> + 's>),
    /// A table (no VIRTUAL columns) whose slots are its columns then the rowid.
    Scan {
        scan: Box<dyn RowScan>,
        defaults: Vec<Value>,
        /// Columns of REAL affinity.
        reals: Vec<usize>,
        rowid_alias: Option<usize>,
        /// A WITHOUT ROWID table read from its own tree (`Store::without_rowid_scan`, an
        /// index access, so never `pushdown`'s scans): the scan's field count is in record
        /// order and the rowid slot is NULL.
        wr: Option<Arc<WrLayout>>,
        /// Set for an index walk that `join_level` may keep for its next outer row.
        kept: Option<WalkKey>,
    },
}

/// Which walk a join level kept (`Exec::kept_walks`): the source's address in the plan
/// and what the walk's trees and shape follow from. A walk is restarted only for the
/// same key, so a plan freed during the execution whose address another one took still
/// gets a walk of its own trees, order and columns (one schema per execution).
#[derive(Clone, PartialEq)]
pub(crate) struct WalkKey {
    pub source: usize,
    pub index_root: u32,
    pub table_root: u32,
    pub reverse: bool,
    pub covering: bool,
    pub needed: Option<std::sync::Arc<[bool]>>,
}

/// A join level's index walk between two of its outer rows, with the rest of its
/// `Candidates::Scan`: the table's defaults and REAL columns, the same for every restart
/// (made anew per outer row they were ~200 instructions a walk, an allocation for a table
/// with a DEFAULT; speedtest1 310's `z2`).
pub struct KeptWalk {
    pub(crate) key: WalkKey,
    pub(crate) scan: Box<dyn RowScan>,
    pub(crate) defaults: Vec<Value>,
    pub(crate) reals: Vec<usize>,
}

/// At most this many walks are kept per execution (one per join level is the need).
pub(crate) const KEPT_WALKS_MAX: usize = 8;

/// Whether `run_core_capped` may move its outputs out of the combined row
/// (`move_outputs`) instead of copying them: every output is a column of the last source,
/// whose slots each of its rows writes anew (join.rs E1), and none is output twice, so no
/// output or later reader finds a slot it emptied.
fn outputs_movable(core: &CorePlan) -> bool {
    let Some(last) = core.sources.last() else {
        return false;
    };
    let mut seen: u64 = 0;
    core.outputs.iter().all(|e| match e {
        CExpr::Col { level: 0, idx } if *idx >= last.start && *idx - last.start < 64 => {
            let bit = 1u64 << (*idx - last.start);
            let first = seen & bit == 0;
            seen |= bit;
            first && *idx < last.start + last.width
        }
        _ => false,
    })
}

/// A result row of `outputs_movable` outputs, each value moved out of the combined row
/// `row`: swapped with the value a recycled row `o` holds there (whose TEXT or BLOB buffer
/// the scan then decodes its next row into, `txnstore::owned_into`), or taken. It was a
/// second copy of every TEXT and BLOB (page → slot → result row); hc_mixed's 10-row scan
/// copied 2.6 KiB and checked two buffers a row this way (BENCHMARKS.md "hcscan6").
fn move_outputs(outputs: &[CExpr], row: &mut [Value], o: &mut Row) {
    for (i, e) in outputs.iter().enumerate() {
        let from = match e {
            CExpr::Col { level: 0, idx } => row.get_mut(*idx),
            _ => None,
        };
        match (o.get_mut(i), from) {
            (Some(slot), Some(v)) => std::mem::swap(slot, v),
            (None, Some(v)) => o.push(std::mem::take(v)),
            // Not reached: `outputs_movable` admits columns of the row only.
            (Some(slot), None) => *slot = Value::Null,
            (None, None) => o.push(Value::Null),
        }
    }
}

/// Combined rows up to this many positions are kept on the stack (`run_core_capped`).
const ROW_INLINE: usize = 16;

impl Candidates<'_> {
    /// Puts the next candidate into `slots` (the source's part of the combined row); false
    /// when there is none.
    fn next_into(&mut self, slots: &mut [Value]) -> Result<bool> {
        match self {
            Candidates::Rows(it) => {
                let Some(vals) = it.next() else {
                    return Ok(false);
                };
                // Move what the source produced into place (no per-value clone and drop:
                // for text that was two atomic reference-count updates per column per
                // row); pad defensively so a short row can never misalign the combined row.
                let mut vals = vals?.into_iter();
                for slot in slots.iter_mut() {
                    *slot = vals.next().unwrap_or(Value::Null);
                }
                Ok(true)
            }
            Candidates::Scan {
                scan,
                defaults,
                reals,
                rowid_alias,
                wr,
                ..
            } => {
                // The same row `expand_row` builds, written in place.
                let n = slots.len() - 1;
                let Some((rowid, k)) = scan.next_into(&mut slots[..n])? else {
                    return Ok(false);
                };
                match wr {
                    // The row `WrLayout::row_of_record` builds: `k` counts fields in
                    // record order.
                    Some(layout) => {
                        for &c in layout.record.iter().skip(k) {
                            if let Some(slot) = slots.get_mut(c) {
                                *slot = defaults.get(c).cloned().unwrap_or(Value::Null);
                            }
                        }
                    }
                    None => {
                        for (i, slot) in slots.iter_mut().enumerate().take(n).skip(k) {
                            *slot = defaults.get(i).cloned().unwrap_or(Value::Null);
                        }
                    }
                }
                // SQLite writes an integral value of a REAL column as an integer
                // (fileformat2.html §2.1) and reads it back as a real.
                for &i in reals.iter() {
                    if let Value::Integer(v) = slots[i] {
                        slots[i] = Value::Real(v as f64);
                    }
                }
                if let Some(a) = *rowid_alias {
                    slots[a] = Value::Integer(rowid);
                }
                slots[n] = match wr {
                    Some(_) => Value::Null,
                    None => Value::Integer(rowid),
                };
                Ok(true)
            }
        }
    }
}

impl<'a> Exec<'a> {
    /// The chunking of the run whose top-level core is `core` (chunk.rs), None for any
    /// other core (a subquery's) and for a run not in chunks.
    #[inline]
    fn chunk_of(&self, core: &CorePlan) -> Option<&'a chunk::Chunking> {
        match self.chunk {
            Some((c, top)) if std::ptr::eq(top, core) => Some(c),
            _ => None,
        }
    }

    /// Runs a query; rows hold the visible columns only.
    pub fn run_select(&self, plan: &SelectPlan, parent: Option<&Frame>) -> Result<Vec<Row>> {
        self.run_select_capped(plan, parent, None)
    }

    /// Like `run_select`; `need` is how many rows the consumer will look at (EXISTS: 1).
    /// A simple query (one core, no ORDER BY, grouping, DISTINCT or windows) stops scanning
    /// once it has them, or once it has LIMIT + OFFSET rows.
    pub fn run_select_capped(
        &self,
        plan: &SelectPlan,
        parent: Option<&Frame>,
        need: Option<usize>,
    ) -> Result<Vec<Row>> {
        let nvis = plan.columns.len();
        // SQLite computes LIMIT first and skips the whole query when it is 0 (select.c
        // computeLimitRegisters), so errors the rows would raise never happen; except for a
        // UNION/INTERSECT/EXCEPT without ORDER BY, whose arms it runs into a temporary table
        // before applying the LIMIT.
        let limit_first = plan.cores.len() == 1
            || !plan.order_by.is_empty()
            || plan.ops.iter().all(|o| *o == CompoundOp::UnionAll);
        let empty: [Value; 0] = [];
        // Made only for a LIMIT or OFFSET (most SELECTs have neither).
        let fr = || Frame::new(&empty, parent);
        // Evaluated once: the cap below reads the same value.
        let limit = match &plan.limit {
            Some(e) if limit_first => Some(limit_value(self.eval(e, &fr())?)?),
            _ => None,
        };
        if limit == Some(0) {
            return Ok(Vec::new());
        }
        let first = &plan.cores[0];
        let simple = plan.cores.len() == 1
            && plan.order_by.is_empty()
            && !first.is_agg
            && !first.distinct
            && first.windows.is_empty();
        // One core that only sorts (no grouping, DISTINCT or windows, which reorder or
        // merge rows after the scan) keeps its LIMIT + OFFSET first rows in a bounded
        // sorter as they arrive (topn.rs).
        let sorts_only = plan.cores.len() == 1
            && !plan.order_by.is_empty()
            && !first.is_agg
            && !first.distinct
            && first.windows.is_empty()
            && first.values.is_none();
        // A UNION ALL chain without ORDER BY stops at LIMIT + OFFSET rows (or the rows the
        // consumer needs), as SQLite runs its arms one after the other into the result: an
        // arm that only scans stops its scan there, and later arms do not run at all (nor
        // raise their errors). `SELECT ... UNION ALL SELECT ... LIMIT 3` computed both
        // arms whole.
        let union_all = plan.cores.len() > 1
            && plan.order_by.is_empty()
            && plan.ops.iter().all(|o| *o == CompoundOp::UnionAll);
        // How many rows the scan (a UNION ALL chain's arms, together) may stop at.
        let mut cap = if simple || union_all { need } else { None };
        let mut sort_cap = None;
        // OFFSET, once evaluated (as LIMIT, it is evaluated once per execution).
        let mut offset = None;
        // One core or a UNION ALL chain: `limit` holds the LIMIT whenever there is one.
        if let (true, Some(lim)) = (simple || sorts_only || union_all, limit) {
            let off = match &plan.offset {
                Some(e) => limit_value(self.eval(e, &fr())?)?.max(0),
                None => 0,
            };
            offset = Some(off);
            if lim >= 0 {
                let n = (lim as usize).saturating_add(off as usize);
                if sorts_only {
                    sort_cap = Some(n);
                } else {
                    cap = Some(cap.map_or(n, |c| c.saturating_add(off as usize).min(n)));
                }
            }
        }
        // What an arm may stop at when `have` rows came before it.
        let arm_cap = |core: &CorePlan, have: usize| {
            cap.filter(|_| !core.is_agg && !core.distinct && core.windows.is_empty())
                .map(|c| c.saturating_sub(have))
        };
        let mut rows = match sort_cap {
            Some(n) => self.run_core_top_n(first, parent, n, &plan.order_by)?,
            None if union_all => self.run_core_capped(first, parent, arm_cap(first, 0))?,
            None => self.run_core_capped(first, parent, cap)?,
        };
        // Which of several rows equal under the columns' collations (but not as bytes: 'z'
        // and 'Z' under NOCASE) a UNION, INTERSECT or EXCEPT keeps, as SQLite: without ORDER
        // BY (or when it sorts under another collation than the columns') it runs the arms
        // into a temporary index where a later equal row replaces the earlier, so the last
        // one stays; with ORDER BY it merges the sorted arms (select.c
        // multiSelectOrderBy), keeping the first of each group, taken from the right arm
        // for a UNION when that arm has one.
        let merges = !plan.order_by.is_empty()
            && plan
                .order_by
                .iter()
                .all(|k| plan.columns.get(k.idx).is_none_or(|c| c.coll == k.coll));
        for (i, op) in plan.ops.iter().enumerate() {
            if union_all {
                if cap.is_some_and(|c| rows.len() >= c) {
                    break;
                }
                let core = &plan.cores[i + 1];
                let right = self.run_core_capped(core, parent, arm_cap(core, rows.len()))?;
                rows.extend(right);
                continue;
            }
            let right = self.run_core(&plan.cores[i + 1], parent)?;
            let colls: Vec<Collation> = plan.columns.iter().map(|c| c.coll).collect();
            rows = match op {
                CompoundOp::UnionAll => {
                    rows.extend(right);
                    rows
                }
                CompoundOp::Union => {
                    let mut sided: Vec<(bool, Row)> = rows
                        .into_iter()
                        .map(|r| (false, r))
                        .chain(right.into_iter().map(|r| (true, r)))
                        .collect();
                    sided.sort_by(|a, b| row_cmp(&a.1, &b.1, &colls));
                    keep_one_per_group(sided, &colls, merges)
                }
                CompoundOp::Intersect | CompoundOp::Except => {
                    let mut r = right;
                    r.sort_by(|a, b| row_cmp(a, b, &colls));
                    rows.sort_by(|a, b| row_cmp(a, b, &colls));
                    let rows = keep_one_per_group(
                        rows.into_iter().map(|r| (false, r)).collect(),
                        &colls,
                        merges,
                    );
                    let keep_found = *op == CompoundOp::Intersect;
                    rows.into_iter()
                        .filter(|x| {
                            r.binary_search_by(|y| row_cmp(y, x, &colls)).is_ok() == keep_found
                        })
                        .collect()
                }
            };
        }
        // LIMIT and OFFSET, evaluated once: (limit, offset), limit -1 for none.
        let bounds = match (&plan.limit, &plan.offset) {
            (None, None) => None,
            (lim_e, off_e) => {
                let lim = match (limit, lim_e) {
                    (Some(lim), _) => lim,
                    (None, Some(e)) => limit_value(self.eval(e, &fr())?)?,
                    (None, None) => -1,
                };
                let off = match (offset, off_e) {
                    (Some(off), _) => off,
                    (None, Some(e)) => limit_value(self.eval(e, &fr())?)?.max(0),
                    (None, None) => 0,
                };
                Some((lim, off as usize))
            }
        };
        if !plan.order_by.is_empty() && sort_cap.is_none() {
            let keys = &plan.order_by;
            let top = match bounds {
                Some((lim, off)) if lim >= 0 => Some((lim as usize).saturating_add(off)),
                _ => None,
            };
            match top {
                Some(n) if n < rows.len() => rows = top_n(rows, n, keys),
                _ => rows.sort_by(|a, b| sort_cmp(a, b, keys)),
            }
        }
        // Nothing to cut when a capped scan already stopped at LIMIT rows and there is no
        // OFFSET (the usual `LIMIT n`): the collect below was ~0.11k instructions of each
        // execution of hc_mixed's scan (callgrind).
        let cuts = bounds.is_some_and(|(lim, off)| {
            off > 0 || usize::try_from(lim).is_ok_and(|n| n < rows.len())
        });
        if let (Some((lim, off)), true) = (bounds, cuts) {
            let rows_iter = rows.into_iter().skip(off);
            rows = if lim < 0 {
                rows_iter.collect()
            } else {
                rows_iter.take(lim as usize).collect()
            };
        }
        for r in &mut rows {
            r.truncate(nvis);
        }
        Ok(rows)
    }

    /// One output of a scanned row. A column of the row itself (`SELECT *`, plain column
    /// lists) is cloned in place: through `eval` it was a call and a `Result` per column,
    /// ~25 of its ~36 instructions (hc_mixed's scan, callgrind; BENCHMARKS.md "hcscan2").
    #[inline]
    fn output_value(&self, e: &CExpr, fr: &Frame) -> Result<Value> {
        match e {
            CExpr::Col { level: 0, idx } => Ok(fr.row.get(*idx).cloned().unwrap_or_default()),
            _ => self.eval(e, fr),
        }
    }

    /// `output_value` written into `slot`, which holds a recycled row's value: a column's
    /// TEXT or BLOB is copied into the slot's buffer where `Value::assign` can.
    fn output_into(&self, e: &CExpr, fr: &Frame, slot: &mut Value) -> Result<()> {
        match e {
            CExpr::Col { level: 0, idx } => match fr.row.get(*idx) {
                Some(v) => slot.assign(v),
                None => *slot = Value::Null,
            },
            _ => *slot = self.eval(e, fr)?,
        }
        Ok(())
    }

    /// A result row of `n` values to fill: a recycled one (`spare_rows`), holding up to
    /// `n` of its previous values for `output_into` to overwrite, or a new one.
    fn result_row(&self, n: usize) -> Row {
        match self.spare_rows.and_then(|rows| rows.borrow_mut().pop()) {
            Some(mut r) => {
                r.truncate(n);
                r
            }
            None => Vec::with_capacity(n),
        }
    }

    /// The first `n` rows in `keys` order of a core without grouping, DISTINCT or windows,
    /// sorted: only `n` rows are held during the scan (topn.rs).
    fn run_core_top_n(
        &self,
        core: &CorePlan,
        parent: Option<&Frame>,
        n: usize,
        keys: &[SortKey],
    ) -> Result<Vec<Row>> {
        self.check_constant_filters(core, parent)?;
        let nvis = core.outputs.len();
        let mut top = topn::TopN::new(n, keys);
        let mut row = vec![Value::Null; core.width];
        self.scan_level(core, 0, &mut row, parent, &mut |r: &mut [Value]| {
            let fr = Frame::new(r, parent);
            let mut o = top.take_buffer(nvis);
            for e in &core.outputs {
                o.push(self.output_value(e, &fr)?);
            }
            top.offer(o);
            Ok(())
        })?;
        Ok(top.into_sorted())
    }

    pub fn run_core(&self, core: &CorePlan, parent: Option<&Frame>) -> Result<Vec<Row>> {
        self.run_core_capped(core, parent, None)
    }

    fn run_core_capped(
        &self,
        core: &CorePlan,
        parent: Option<&Frame>,
        cap: Option<usize>,
    ) -> Result<Vec<Row>> {
        if let Some(values) = &core.values {
            let empty: [Value; 0] = [];
            let fr = Frame::new(&empty, parent);
            let mut out = Vec::new();
            for row in values {
                let mut r = Vec::with_capacity(row.len());
                for e in row {
                    r.push(self.eval(e, &fr)?);
                }
                out.push(r);
            }
            return Ok(out);
        }
        self.check_constant_filters(core, parent)?;
        let mut out: Vec<Row> = Vec::new();
        let mut seen: std::collections::BTreeSet<Key> = std::collections::BTreeSet::new();
        let nvis = core.outputs.len();
        // Rows (and their aggregate values) awaiting window computation.
        let mut pending: Vec<(Row, Vec<Value>)> = Vec::new();
        let agg_json = super::eval::agg_subtypes(&core.aggs);
        if core.is_agg {
            struct Group {
                rep: Row,
                accs: Vec<Box<dyn func::aggregate::Aggregate>>,
                bare: bare::BareState,
            }
            let bare_rule = bare::BareRule::new(&core.aggs, !core.group_by.is_empty());
            let mut groups: BTreeMap<Key, Group> = BTreeMap::new();
            // Without GROUP BY there is one group, kept out of the map (no key per row).
            let mut single: Option<Group> = None;
            // The bare-column row of a group is kept only when something reads it after the scan
            // (bare columns in the result or HAVING, windows): a clone of every row was
            // ~15% of speedtest1 test 140's instructions.
            let keep_rep =
                !core.windows.is_empty() || core.outputs.iter().chain(&core.having).any(reads_row);
            let mut args: Vec<Value> = Vec::new();
            let mut row = vec![Value::Null; core.width];
            let scanned = self.scan_level(core, 0, &mut row, parent, &mut |r: &mut [Value]| {
                let fr = Frame::new(r, parent);
                let g = if core.group_by.is_empty() {
                    if single.is_none() {
                        let mut accs = Vec::new();
                        for a in &core.aggs {
                            accs.push(a.def.new_aggregate(a.distinct, a.coll, &a.order)?);
                        }
                        single = Some(Group {
                            rep: Vec::new(),
                            accs,
                            bare: bare::BareState::default(),
                        });
                    }
                    single
                        .as_mut()
                        .ok_or_else(|| SqlError::msg("internal error: lost group"))?
                } else {
                    let mut k = Vec::with_capacity(core.group_by.len());
                    for g in &core.group_by {
                        k.push(self.eval(g, &fr)?);
                    }
                    let key = Key(k, core.group_colls.clone());
                    if !groups.contains_key(&key) {
                        let mut accs = Vec::new();
                        for a in &core.aggs {
                            accs.push(a.def.new_aggregate(a.distinct, a.coll, &a.order)?);
                        }
                        groups.insert(
                            key.clone(),
                            Group {
                                rep: Vec::new(),
                                accs,
                                bare: bare::BareState::default(),
                            },
                        );
                    }
                    groups
                        .get_mut(&key)
                        .ok_or_else(|| SqlError::msg("internal error: lost group"))?
                };
                for (i, a) in core.aggs.iter().enumerate() {
                    let min_max = bare_rule.moves_magnet(i);
                    if let Some(flt) = &a.filter {
                        if min_max {
                            g.bare.before_filter(&bare_rule);
                        }
                        if !self.is_true(flt, &fr)? {
                            continue;
                        }
                    }
                    if a.def.reads_json_subtype() {
                        args.clear();
                        let mut json = Vec::with_capacity(a.args.len());
                        for x in &a.args {
                            let (v, j) = self.eval_subtyped(x, &fr)?;
                            args.push(v);
                            json.push(j);
                        }
                        g.accs[i].step_subtyped(&args, &json)?;
                    } else if let [x] = a.args.as_slice() {
                        // A one-argument aggregate steps on its argument borrowed where it
                        // lies (a column of the row, a literal): evaluated into `args`, each
                        // column was cloned and dropped, ~70 instructions a row of fp
                        // speedtest1 test 130's sum(b) (callgrind).
                        g.accs[i].step(std::slice::from_ref(&*self.operand(x, &fr)?))?;
                    } else {
                        args.clear();
                        for x in &a.args {
                            args.push(self.eval(x, &fr)?);
                        }
                        g.accs[i].step(&args)?;
                    }
                    if min_max {
                        g.bare.after_min_max(g.accs[i].last_step_magnet());
                    }
                }
                // The row bare columns read (bare.rs); copied only when something reads it
                // after the scan, but a group's first row always (it marks the group seen).
                let take = g.bare.finish_row(&bare_rule);
                if (keep_rep && take) || g.rep.is_empty() {
                    g.rep.clear();
                    g.rep.extend_from_slice(r);
                }
                // The min/max optimization: the walk is in the argument's order, so the
                // first non-NULL argument is the answer (plan::minmax).
                if core.min_max == MinMaxOpt::Ordered {
                    if let Some(arg) = core.aggs.first().and_then(|a| a.args.first()) {
                        if !self.eval(arg, &fr)?.is_null() {
                            return Err(stop_scan());
                        }
                    }
                }
                Ok(())
            });
            match scanned {
                Err(e) if is_stop_scan(&e) => {}
                other => other?,
            }
            // Without GROUP BY there is one row, also over no input; it does not go through
            // the map (a node allocated and freed per statement: ~1k instructions of a
            // speedtest1 test 160 aggregate).
            if single.is_none() && core.group_by.is_empty() {
                let mut accs = Vec::new();
                for a in &core.aggs {
                    accs.push(a.def.new_aggregate(a.distinct, a.coll, &a.order)?);
                }
                single = Some(Group {
                    rep: vec![Value::Null; core.width],
                    accs,
                    bare: bare::BareState::default(),
                });
            }
            for mut g in single.into_iter().chain(groups.into_values()) {
                let mut aggv = Vec::with_capacity(g.accs.len());
                for a in g.accs.iter_mut() {
                    aggv.push(a.finalize()?);
                }
                let fr = Frame {
                    row: &g.rep,
                    aggs: &aggv,
                    agg_json: &agg_json,
                    wins: &[],
                    parent,
                };
                if let Some(h) = &core.having {
                    if !self.is_true(h, &fr)? {
                        continue;
                    }
                }
                if !core.windows.is_empty() {
                    pending.push((std::mem::take(&mut g.rep), aggv));
                    continue;
                }
                let mut o = Vec::with_capacity(nvis);
                for e in &core.outputs {
                    o.push(self.eval(e, &fr)?);
                }
                out.push(o);
            }
        } else {
            // The combined row on the stack when it is narrow: a `vec!` per execution was a
            // malloc and a free of every reused point SELECT (~0.2k instructions of kv_ops's;
            // BENCHMARKS.md "pointsel").
            let mut inline: [Value; ROW_INLINE] = Default::default();
            let mut heap = Vec::new();
            let row: &mut [Value] = match inline.get_mut(..core.width) {
                Some(r) => r,
                None => {
                    heap.resize(core.width, Value::Null);
                    &mut heap
                }
            };
            let windowed = !core.windows.is_empty();
            if cap == Some(0) {
                return Ok(Vec::new());
            }
            // A LIMIT's rows are known up front (hc_mixed's LIMIT 10 grew the vector three
            // times per statement, ~1.3k instructions); 64 bounds what an unreached cap holds.
            out.reserve(cap.unwrap_or(0).min(64));
            let movable = outputs_movable(core);
            let chunk = self.chunk_of(core);
            let scanned = self.scan_level(core, 0, row, parent, &mut |r: &mut [Value]| {
                if windowed {
                    pending.push((r.to_vec(), Vec::new()));
                    return Ok(());
                }
                let mut o = self.result_row(nvis);
                if movable {
                    move_outputs(&core.outputs, r, &mut o);
                } else {
                    let fr = Frame::new(r, parent);
                    for (i, e) in core.outputs.iter().enumerate() {
                        match o.get_mut(i) {
                            Some(slot) => self.output_into(e, &fr, slot)?,
                            None => o.push(self.output_value(e, &fr)?),
                        }
                    }
                }
                if let Some(c) = chunk {
                    c.count(&o);
                }
                out.push(o);
                if cap.is_some_and(|c| out.len() >= c) {
                    return Err(stop_scan());
                }
                Ok(())
            });
            match scanned {
                Err(e) if is_stop_scan(&e) => {}
                other => other?,
            }
        }
        if !core.windows.is_empty() {
            let (wins, order) = self.compute_windows(core, &pending, parent)?;
            for i in order {
                let ((row, aggv), w) = (&pending[i], &wins[i]);
                let fr = Frame {
                    row,
                    aggs: aggv,
                    agg_json: &agg_json,
                    wins: w,
                    parent,
                };
                let mut o = Vec::with_capacity(nvis);
                for e in &core.outputs {
                    o.push(self.eval(e, &fr)?);
                }
                out.push(o);
            }
        }
        if core.distinct {
            // Distinctness is over the visible columns only; hidden sort values follow them.
            let nv = core.n_visible;
            let mut kept = Vec::new();
            for r in out {
                let k = Key(r[..nv.min(r.len())].to_vec(), core.distinct_colls.clone());
                if seen.insert(k) {
                    kept.push(r);
                }
            }
            out = kept;
        }
        Ok(out)
    }

    /// SQLite tests the constant WHERE terms before any loop (sqlite3WhereBegin), so one
    /// that fails (`abs(-9223372036854775808)`) fails the statement even over an empty
    /// table. The planner puts them first at the outer level, where they stay filters.
    /// (Not past a RIGHT or FULL JOIN, whose leftover rows a constant ON term of an
    /// earlier join does not remove.)
    fn check_constant_filters(&self, core: &CorePlan, parent: Option<&Frame>) -> Result<()> {
        if !core.sources.is_empty() && !core.sources.iter().any(|s| s.join.keeps_right_rows()) {
            let empty: [Value; 0] = [];
            let fr = Frame::new(&empty, parent);
            for t in core.filters.iter().take(1).flatten() {
                if !t.is_constant() {
                    break;
                }
                self.eval(t, &fr)?;
            }
        }
        Ok(())
    }

    /// Computes a recursive CTE to its fixpoint: the initial rows, then rounds of the step
    /// over the previous round's rows (the working table) until a round adds nothing (or
    /// LIMIT rows exist). UNION (not ALL) discards rows already produced.
    fn recursive_rows(&self, rp: &RecursivePlan, parent: Option<&Frame>) -> Result<Rc<Vec<Row>>> {
        if let Some((id, rows)) = &*rp.cache.borrow() {
            if *id == self.exec_id && !rp.correlated {
                return Ok(rows.clone());
            }
        }
        let limit = match &rp.limit {
            Some(e) => {
                let empty: [Value; 0] = [];
                limit_value(self.eval(e, &Frame::new(&empty, parent))?)?
            }
            None => -1,
        };
        let mut seen: std::collections::BTreeSet<Key> = std::collections::BTreeSet::new();
        let mut all: Vec<Row> = Vec::new();
        let mut queue: Vec<Row> = Vec::new();
        let full = |n: usize| limit >= 0 && n as i64 >= limit;
        if !rp.order.is_empty() {
            // Priority queue (lang_with.html "Queue order"): repeatedly take the first row
            // in ORDER BY order, output it, and run the step over that single row.
            for r in self.run_select(&rp.init.plan, parent)? {
                if rp.union_all || seen.insert(Key::binary(r.clone())) {
                    queue.push(r);
                }
            }
            while !queue.is_empty() && !full(all.len()) {
                let mut best = 0;
                for i in 1..queue.len() {
                    if sort_cmp(&queue[i], &queue[best], &rp.order) == Ordering::Less {
                        best = i;
                    }
                }
                let row = queue.remove(best);
                all.push(row.clone());
                self.working
                    .borrow_mut()
                    .insert(rp.working_id, Rc::new(vec![row]));
                for r in self.run_select(&rp.step.plan, parent)? {
                    if rp.union_all || seen.insert(Key::binary(r.clone())) {
                        queue.push(r);
                    }
                }
            }
            self.working.borrow_mut().remove(&rp.working_id);
            let rows = Rc::new(all);
            *rp.cache.borrow_mut() = Some((self.exec_id, rows.clone()));
            return Ok(rows);
        }
        for r in self.run_select(&rp.init.plan, parent)? {
            if full(all.len()) {
                break;
            }
            if rp.union_all || seen.insert(Key::binary(r.clone())) {
                all.push(r.clone());
                queue.push(r);
            }
        }
        while !queue.is_empty() && !full(all.len()) {
            self.working
                .borrow_mut()
                .insert(rp.working_id, Rc::new(std::mem::take(&mut queue)));
            for r in self.run_select(&rp.step.plan, parent)? {
                if full(all.len()) {
                    break;
                }
                if rp.union_all || seen.insert(Key::binary(r.clone())) {
                    all.push(r.clone());
                    queue.push(r);
                }
            }
        }
        self.working.borrow_mut().remove(&rp.working_id);
        let rows = Rc::new(all);
        *rp.cache.borrow_mut() = Some((self.exec_id, rows.clone()));
        Ok(rows)
    }

    /// Every row of a table in the combined-row layout, in key order: rowid order, or the
    /// PRIMARY KEY order of a WITHOUT ROWID table (whose rowid slot is NULL).
    pub fn table_rows(
        &self,
        t: &Arc<Table>,
        defaults: Vec<Value>,
    ) -> Result<Box<dyn Iterator<Item = Result<Row>> + '_>> {
        self.table_rows_cols(t, defaults, None)
    }

    /// [`table_rows`](Self::table_rows), decoding only the `needed` columns of a rowid table
    /// (a WITHOUT ROWID table's records are decoded whole).
    fn table_rows_cols(
        &self,
        t: &Arc<Table>,
        defaults: Vec<Value>,
        needed: Option<&std::sync::Arc<[bool]>>,
    ) -> Result<Box<dyn Iterator<Item = Result<Row>> + '_>> {
        if t.without_rowid {
            let layout = WrLayout::shared(t);
            let it = self.store.index_range(
                t.root,
                &layout.order,
                Bound::Unbounded,
                Bound::Unbounded,
                false,
            )?;
            // VIRTUAL columns have no field in the record: computed per row.
            let gen = match t.has_virtual() {
                true => Some(Rc::new(self.generated_exprs(t)?)),
                false => None,
            };
            let t = t.clone();
            return Ok(Box::new(it.map(move |r| {
                r.and_then(|rec| {
                    self.virtual_filled(&t, &gen, layout.row_of_record(rec, &defaults))
                })
            })));
        }
        let t = t.clone();
        if t.has_virtual() {
            // VIRTUAL columns are computed from the whole row (no pruning: the mask's
            // positions would not be the record's).
            let gen = Some(Rc::new(self.generated_exprs(&t)?));
            let it = self
                .store
                .table_range(t.root, Bound::Unbounded, Bound::Unbounded, false)?;
            return Ok(Box::new(it.map(move |r| {
                r.and_then(|(rowid, vals)| {
                    self.virtual_filled(&t, &gen, expand_row(&t, rowid, vals, &defaults))
                })
            })));
        }
        let it = self.table_range(t.root, Bound::Unbounded, Bound::Unbounded, false, needed)?;
        Ok(Box::new(it.map(move |r| {
            r.map(|(rowid, vals)| expand_row(&t, rowid, vals, &defaults))
        })))
    }

    /// Column defaults as values, for rows stored before ADD COLUMN.
    /// `column_defaults` for `Candidates::Scan`, which reads it with `get` (a missing
    /// default is NULL): empty, with no allocation, when every default is NULL (a join
    /// builds one per outer row).
    pub fn scan_defaults(&self, t: &Table) -> Vec<Value> {
        if t.columns.iter().all(|c| c.default.is_none()) {
            return Vec::new();
        }
        self.column_defaults(t)
    }

    pub fn column_defaults(&self, t: &Table) -> Vec<Value> {
        // A table without DEFAULTs needs no vector (a missing entry reads as NULL): one
        // allocation less per statement that reads a table.
        if t.columns.iter().all(|c| c.default.is_none()) {
            return Vec::new();
        }
        t.columns
            .iter()
            .map(|c| match &c.default {
                Some(crate::parse::ast::Expr::Literal(l)) => crate::plan::bind::literal_value(l),
                Some(crate::parse::ast::Expr::Unary(UnaryOp::Neg, inner)) => match &**inner {
                    crate::parse::ast::Expr::Literal(l) => {
                        value::negate(&crate::plan::bind::literal_value(l))
                    }
                    _ => Value::Null,
                },
                _ => Value::Null,
            })
            .collect()
    }

    /// The generated columns of `t` bound over its row (columns, then the rowid), in the
    /// order that computes each after what it reads (`Table::generated_order`).
    pub fn generated_exprs(&self, t: &Table) -> Result<Vec<(usize, CExpr)>> {
        let order = t
            .generated_order()
            .map_err(|name| SqlError::msg(format!("generated column loop on \"{name}\"")))?;
        let mut b = Binder::new(self.schema);
        let mut out = Vec::with_capacity(order.len());
        for i in order {
            if let Some(g) = &t.columns[i].generated {
                out.push((i, b.bind_for_table(t, None, &g.expr)?));
            }
        }
        Ok(out)
    }

    /// Computes generated columns into `row` (columns then rowid), each converted to its
    /// column's affinity; with `virtual_only` the STORED ones are kept as read.
    pub fn compute_generated(
        &self,
        t: &Table,
        gen: &[(usize, CExpr)],
        row: &mut [Value],
        virtual_only: bool,
    ) -> Result<()> {
        for (i, e) in gen {
            if virtual_only && !t.is_virtual(*i) {
                continue;
            }
            let v = self.eval_pure("a generated column", e, &Frame::new(row, None))?;
            row[*i] = v.apply_affinity(t.columns[*i].affinity);
        }
        Ok(())
    }

    /// A row from `expand_row` with its VIRTUAL columns computed by `gen` (bound once per
    /// scan); None for a table without any.
    fn virtual_filled(
        &self,
        t: &Table,
        gen: &Option<Rc<Vec<(usize, CExpr)>>>,
        mut row: Row,
    ) -> Result<Row> {
        if let Some(g) = gen {
            self.compute_generated(t, g, &mut row, true)?;
        }
        Ok(row)
    }

    /// `expand_row` with the VIRTUAL columns computed.
    pub fn table_row(&self, t: &Table, rowid: i64, vals: Row, defaults: &[Value]) -> Result<Row> {
        let mut row = expand_row(t, rowid, vals, defaults);
        if t.has_virtual() {
            let gen = self.generated_exprs(t)?;
            self.compute_generated(t, &gen, &mut row, true)?;
        }
        Ok(row)
    }

    /// The key order of an index.
    pub fn key_order(ix: &crate::schema::Index) -> KeyOrder {
        KeyOrder {
            columns: ix.columns.iter().map(|c| (c.collation, c.desc)).collect(),
        }
    }
}

/// A byte key such that SQL-equal values (under `coll`) get equal keys: integral reals
/// hash as integers, NOCASE folds ASCII case, RTRIM drops trailing spaces. NULL has none.
/// Only for a built-in collation (the planner gives an application's no hash index): under
/// any other, texts hash as BINARY.
fn hash_key(v: &Value, coll: Collation) -> Option<Vec<u8>> {
    let mut k = Vec::new();
    match v {
        Value::Null => return None,
        Value::Integer(i) => {
            k.push(0);
            k.extend_from_slice(&i.to_be_bytes());
        }
        Value::Real(r) => {
            if r.fract() == 0.0 && *r >= -9.223372036854776e18 && *r < 9.223372036854776e18 {
                k.push(0);
                k.extend_from_slice(&(*r as i64).to_be_bytes());
            } else {
                k.push(1);
                k.extend_from_slice(&r.to_bits().to_be_bytes());
            }
        }
        Value::Text(s) => {
            k.push(2);
            match coll {
                Collation::Binary | Collation::User(_) => k.extend_from_slice(s.as_bytes()),
                Collation::NoCase => {
                    let p = crate::collation::nocase_prefix(s.as_bytes());
                    k.extend(p.iter().map(|b| b.to_ascii_lowercase()));
                    // After a NUL only the length counts (`Collation::compare_bytes`).
                    if p.len() < s.len() {
                        k.extend_from_slice(&(s.len() as u64).to_be_bytes());
                    }
                }
                Collation::RTrim => k.extend_from_slice(s.trim_end_matches(' ').as_bytes()),
            }
        }
        Value::Blob(b) => {
            k.push(3);
            k.extend_from_slice(b);
        }
    }
    Some(k)
}

/// Orders two rows by sort keys (ORDER BY semantics: NULLS FIRST/LAST, DESC, collation).
pub fn sort_cmp(a: &[Value], b: &[Value], keys: &[SortKey]) -> Ordering {
    for k in keys {
        let (Some(x), Some(y)) = (a.get(k.idx), b.get(k.idx)) else {
            continue;
        };
        let o = match (x.is_null(), y.is_null()) {
            (true, true) => Ordering::Equal,
            (true, false) => {
                if k.nulls_first {
                    Ordering::Less
                } else {
                    Ordering::Greater
                }
            }
            (false, true) => {
                if k.nulls_first {
                    Ordering::Greater
                } else {
                    Ordering::Less
                }
            }
            _ => {
                let o = x.compare(y, k.coll);
                if k.desc {
                    o.reverse()
                } else {
                    o
                }
            }
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

/// The first `n` rows of `rows` in ORDER BY order, as the stable sort would give them (ties
/// in their original order): a selection of the `n` smallest then a sort of those, O(rows)
/// comparisons where a full sort takes O(rows log rows). SQLite keeps a bounded sorter for
/// ORDER BY ... LIMIT the same way (speedtest1 test 145).
fn top_n(rows: Vec<Row>, n: usize, keys: &[SortKey]) -> Vec<Row> {
    if n == 0 {
        return Vec::new();
    }
    let mut at: Vec<(usize, Row)> = rows.into_iter().enumerate().collect();
    let cmp =
        |a: &(usize, Row), b: &(usize, Row)| sort_cmp(&a.1, &b.1, keys).then_with(|| a.0.cmp(&b.0));
    if n < at.len() {
        at.select_nth_unstable_by(n - 1, cmp);
        at.truncate(n);
    }
    at.sort_unstable_by(cmp);
    at.into_iter().map(|(_, r)| r).collect()
}

/// LIMIT/OFFSET operand: an integer (numeric text converts), else `datatype mismatch`
/// (NULL too, as SQLite's OP_MustBeInt).
fn limit_value(v: Value) -> Result<i64> {
    match v.apply_affinity(Affinity::Numeric) {
        Value::Integer(i) => Ok(i),
        Value::Real(r) if r.fract() == 0.0 => Ok(r as i64),
        _ => Err(SqlError::Code {
            code: codes::SQLITE_MISMATCH,
            extended_code: codes::SQLITE_MISMATCH,
            message: "datatype mismatch".into(),
        }),
    }
}

/// A rowid range bound from a compared value; None when no rowid can satisfy it.
fn rowid_bound(v: &Value, incl: bool, is_lo: bool) -> Option<Bound<i64>> {
    match v.clone().apply_affinity(Affinity::Numeric) {
        Value::Null => None,
        Value::Integer(i) => Some(if incl {
            Bound::Included(i)
        } else {
            Bound::Excluded(i)
        }),
        Value::Real(r) => {
            if r.is_nan() {
                return None;
            }
            if r >= 9.3e18 {
                return if is_lo { None } else { Some(Bound::Unbounded) };
            }
            if r <= -9.3e18 {
                return if is_lo { Some(Bound::Unbounded) } else { None };
            }
            let (fl, ce) = (r.floor() as i64, r.ceil() as i64);
            if is_lo {
                Some(if r.fract() == 0.0 && !incl {
                    Bound::Excluded(fl)
                } else {
                    Bound::Included(ce)
                })
            } else {
                Some(if r.fract() == 0.0 && !incl {
                    Bound::Excluded(ce)
                } else {
                    Bound::Included(fl)
                })
            }
        }
        // Text and blobs sort after every number.
        _ => {
            if is_lo {
                None
            } else {
                Some(Bound::Unbounded)
            }
        }
    }
}

/// The key range of one equality prefix `p` of an index access, with the optional range
/// bounds on the next column. `p` is moved into the upper bound (the lower one gets the
/// copy): a join builds these per outer row, and each copy is an allocation.
fn index_bounds(
    index: &crate::schema::Index,
    p: Row,
    spare: Row,
    lo_v: &Option<(Value, bool)>,
    hi_v: &Option<(Value, bool)>,
) -> (Bound<Row>, Bound<Row>) {
    // A bound's key: the prefix, then the given value when there is one, built in `k`.
    fn key(mut k: Row, p: &Row, next: Option<&Value>) -> Row {
        k.clear();
        k.reserve(p.len() + 1);
        k.extend_from_slice(p);
        k.extend(next.cloned());
        k
    }
    fn key_owned(mut p: Row, next: Option<&Value>) -> Row {
        p.extend(next.cloned());
        p
    }
    // With no prefix both rows are empty: the lower bound's key goes into the one with
    // room. A one-sided range (`substr(c,1,16) >= ?`) has no upper bound row, so the row
    // its restarted walk handed back as the prefix would be dropped while the lower key
    // allocated anew (a malloc and a free per execution of hc_mixed's scan, ~0.15k
    // instructions, callgrind).
    let (p, spare) = if p.is_empty() && p.capacity() > spare.capacity() {
        (spare, p)
    } else {
        (p, spare)
    };
    let next_desc = index.columns.get(p.len()).is_some_and(|c| c.desc);
    // Only the lower bound copies the prefix: into `spare` (empty; a restarted walk's old
    // bound row).
    let lo_b = match lo_v {
        Some((v, true)) => Bound::Included(key(spare, &p, Some(v))),
        Some((v, false)) => Bound::Excluded(key(spare, &p, Some(v))),
        // Skip NULLs of a ranged ascending column: `x < 5` never
        // matches NULL, and NULLs sort first.
        None if hi_v.is_some() && !next_desc => Bound::Excluded(key(spare, &p, Some(&Value::Null))),
        None if p.is_empty() => Bound::Unbounded,
        None => Bound::Included(key(spare, &p, None)),
    };
    let hi_b = match hi_v {
        Some((v, true)) => Bound::Included(key_owned(p, Some(v))),
        Some((v, false)) => Bound::Excluded(key_owned(p, Some(v))),
        None if lo_v.is_some() && next_desc => Bound::Excluded(key_owned(p, Some(&Value::Null))),
        None if p.is_empty() => Bound::Unbounded,
        None => Bound::Included(p),
    };
    (lo_b, hi_b)
}
