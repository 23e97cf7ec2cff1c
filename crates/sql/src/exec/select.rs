//! SELECT execution (nested-loop joins over the chosen access paths, grouping, compound
//! operators, sorting, LIMIT), as methods of the evaluator `Exec` (eval.rs).
//!
//! Invariants:
//! - Results are materialized: a query returns all its rows; `Statement::step` hands them
//!   out one by one. This keeps every operator simple and restartable.

use super::eval::{as_rowid, err, expand_row, Exec, Frame};
use super::store::{KeyOrder, Row, RowScan};
use super::without_rowid::{pk_positions_in_index, WrLayout};
use crate::collation::Collation;
use crate::func;
use crate::parse::ast::{CompoundOp, UnaryOp};
use crate::plan::*;
use crate::schema::Table;
use crate::value::{self, codes, Affinity, Result, SqlError, Value};
use std::cmp::Ordering;
use std::collections::{BTreeMap, HashSet};
use std::ops::Bound;
use std::rc::Rc;
use std::sync::Arc;

/// What a scan unwinds with once it has produced as many rows as its consumer needs
/// (LIMIT without ORDER BY, EXISTS); `run_core` catches it.
const STOP_SCAN_MSG: &str = "\u{0}stop-scan";

/// Orders two rows for DISTINCT/compound/grouping: column by column with BINARY (or the
/// given collations).
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
    /// A rowid table (no VIRTUAL columns) whose slots are its columns then the rowid.
    Scan {
        scan: Box<dyn RowScan>,
        defaults: Vec<Value>,
        /// Columns of REAL affinity.
        reals: Vec<usize>,
        rowid_alias: Option<usize>,
    },
}

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
            } => {
                // The same row `expand_row` builds, written in place.
                let n = slots.len() - 1;
                let Some((rowid, k)) = scan.next_into(&mut slots[..n])? else {
                    return Ok(false);
                };
                for (i, slot) in slots.iter_mut().enumerate().take(n).skip(k) {
                    *slot = defaults.get(i).cloned().unwrap_or(Value::Null);
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
                slots[n] = Value::Integer(rowid);
                Ok(true)
            }
        }
    }
}

impl<'a> Exec<'a> {
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
        if let (Some(e), true) = (&plan.limit, limit_first) {
            let empty: [Value; 0] = [];
            if limit_value(self.eval(e, &Frame::new(&empty, parent))?)? == 0 {
                return Ok(Vec::new());
            }
        }
        let first = &plan.cores[0];
        let simple = plan.cores.len() == 1
            && plan.order_by.is_empty()
            && !first.is_agg
            && !first.distinct
            && first.windows.is_empty();
        let mut cap = if simple { need } else { None };
        if simple && plan.limit.is_some() {
            let empty: [Value; 0] = [];
            let fr = Frame::new(&empty, parent);
            let lim = match &plan.limit {
                Some(e) => limit_value(self.eval(e, &fr)?)?,
                None => -1,
            };
            let off = match &plan.offset {
                Some(e) => limit_value(self.eval(e, &fr)?)?.max(0),
                None => 0,
            };
            if lim >= 0 {
                let n = (lim as usize).saturating_add(off as usize);
                cap = Some(cap.map_or(n, |c| c.saturating_add(off as usize).min(n)));
            }
        }
        let mut rows = self.run_core_capped(first, parent, cap)?;
        for (i, op) in plan.ops.iter().enumerate() {
            let right = self.run_core(&plan.cores[i + 1], parent)?;
            let colls: Vec<Collation> = plan.columns.iter().map(|c| c.coll).collect();
            rows = match op {
                CompoundOp::UnionAll => {
                    rows.extend(right);
                    rows
                }
                CompoundOp::Union => {
                    rows.extend(right);
                    rows.sort_by(|a, b| row_cmp(a, b, &colls));
                    rows.dedup_by(|a, b| row_cmp(a, b, &colls) == Ordering::Equal);
                    rows
                }
                CompoundOp::Intersect | CompoundOp::Except => {
                    let mut r = right;
                    r.sort_by(|a, b| row_cmp(a, b, &colls));
                    rows.sort_by(|a, b| row_cmp(a, b, &colls));
                    rows.dedup_by(|a, b| row_cmp(a, b, &colls) == Ordering::Equal);
                    let keep_found = *op == CompoundOp::Intersect;
                    rows.into_iter()
                        .filter(|x| {
                            r.binary_search_by(|y| row_cmp(y, x, &colls)).is_ok() == keep_found
                        })
                        .collect()
                }
            };
        }
        if !plan.order_by.is_empty() {
            let keys = &plan.order_by;
            rows.sort_by(|a, b| sort_cmp(a, b, keys));
        }
        if plan.limit.is_some() || plan.offset.is_some() {
            let empty: [Value; 0] = [];
            let fr = Frame::new(&empty, parent);
            let lim = match &plan.limit {
                Some(e) => limit_value(self.eval(e, &fr)?)?,
                None => -1,
            };
            let off = match &plan.offset {
                Some(e) => limit_value(self.eval(e, &fr)?)?.max(0) as usize,
                None => 0,
            };
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
        let mut out: Vec<Row> = Vec::new();
        let mut seen: std::collections::BTreeSet<Key> = std::collections::BTreeSet::new();
        let nvis = core.outputs.len();
        // Rows (and their aggregate values) awaiting window computation.
        let mut pending: Vec<(Row, Vec<Value>)> = Vec::new();
        if core.is_agg {
            struct Group {
                rep: Row,
                accs: Vec<Box<dyn func::aggregate::Aggregate>>,
            }
            let mut groups: BTreeMap<Key, Group> = BTreeMap::new();
            let mut order: Vec<Key> = Vec::new();
            let mut row = vec![Value::Null; core.width];
            self.scan_level(core, 0, &mut row, parent, &mut |r: &[Value]| {
                let fr = Frame::new(r, parent);
                let mut k = Vec::with_capacity(core.group_by.len());
                for g in &core.group_by {
                    k.push(self.eval(g, &fr)?);
                }
                let key = Key(k, core.group_colls.clone());
                if !groups.contains_key(&key) {
                    let mut accs = Vec::new();
                    for a in &core.aggs {
                        accs.push(a.def.new_aggregate(a.distinct, a.coll)?);
                    }
                    groups.insert(
                        key.clone(),
                        Group {
                            rep: r.to_vec(),
                            accs,
                        },
                    );
                    order.push(key.clone());
                }
                let g = groups
                    .get_mut(&key)
                    .ok_or_else(|| SqlError::msg("internal error: lost group"))?;
                g.rep.clear();
                g.rep.extend_from_slice(r);
                for (i, a) in core.aggs.iter().enumerate() {
                    if let Some(flt) = &a.filter {
                        if !self.is_true(flt, &fr)? {
                            continue;
                        }
                    }
                    let mut args = Vec::with_capacity(a.args.len());
                    for x in &a.args {
                        args.push(self.eval(x, &fr)?);
                    }
                    g.accs[i].step(&args)?;
                }
                Ok(())
            })?;
            if groups.is_empty() && core.group_by.is_empty() {
                let mut accs = Vec::new();
                for a in &core.aggs {
                    accs.push(a.def.new_aggregate(a.distinct, a.coll)?);
                }
                groups.insert(
                    Key::binary(Vec::new()),
                    Group {
                        rep: vec![Value::Null; core.width],
                        accs,
                    },
                );
            }
            for (_, mut g) in groups {
                let mut aggv = Vec::with_capacity(g.accs.len());
                for a in g.accs.iter_mut() {
                    aggv.push(a.finalize()?);
                }
                let fr = Frame {
                    row: &g.rep,
                    aggs: &aggv,
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
            let _ = order;
        } else {
            let mut row = vec![Value::Null; core.width];
            let windowed = !core.windows.is_empty();
            if cap == Some(0) {
                return Ok(Vec::new());
            }
            let scanned = self.scan_level(core, 0, &mut row, parent, &mut |r: &[Value]| {
                if windowed {
                    pending.push((r.to_vec(), Vec::new()));
                    return Ok(());
                }
                let fr = Frame::new(r, parent);
                let mut o = Vec::with_capacity(nvis);
                for e in &core.outputs {
                    o.push(self.eval(e, &fr)?);
                }
                out.push(o);
                if cap.is_some_and(|c| out.len() >= c) {
                    return Err(SqlError::msg(STOP_SCAN_MSG));
                }
                Ok(())
            });
            match scanned {
                Err(e) if e.to_string() == STOP_SCAN_MSG => {}
                other => other?,
            }
        }
        if !core.windows.is_empty() {
            let wins = self.compute_windows(core, &pending, parent)?;
            for ((row, aggv), w) in pending.iter().zip(wins.iter()) {
                let fr = Frame {
                    row,
                    aggs: aggv,
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

    /// Computes every window call for the rows reaching the output: rows are sorted by
    /// partition then window order, each partition is walked in order, and each row gets
    /// its value from its partition, peers and frame (lang_windowfunc.html). Aggregates over a
    /// frame are recomputed per row (O(rows x frame)).
    fn compute_windows(
        &self,
        core: &CorePlan,
        rows: &[(Row, Vec<Value>)],
        parent: Option<&Frame>,
    ) -> Result<Vec<Vec<Value>>> {
        let n = rows.len();
        let mut out = vec![vec![Value::Null; core.windows.len()]; n];
        for (wi, w) in core.windows.iter().enumerate() {
            let mut pkeys = Vec::with_capacity(n);
            let mut okeys = Vec::with_capacity(n);
            let mut args = Vec::with_capacity(n);
            for (row, aggv) in rows {
                let fr = Frame {
                    row,
                    aggs: aggv,
                    wins: &[],
                    parent,
                };
                let mut p = Vec::with_capacity(w.partition.len());
                for e in &w.partition {
                    p.push(self.eval(e, &fr)?);
                }
                let mut o = Vec::with_capacity(w.order.len());
                for (e, ..) in &w.order {
                    o.push(self.eval(e, &fr)?);
                }
                let mut a = Vec::with_capacity(w.args.len());
                for e in &w.args {
                    a.push(self.eval(e, &fr)?);
                }
                pkeys.push(p);
                okeys.push(o);
                args.push(a);
            }
            let order_cmp = |a: &[Value], b: &[Value]| -> Ordering {
                for (k, (x, y)) in w.order.iter().zip(a.iter().zip(b.iter())) {
                    let (_, desc, nulls_first, coll) = k;
                    let o = match (x.is_null(), y.is_null()) {
                        (true, true) => Ordering::Equal,
                        (true, false) => {
                            if *nulls_first {
                                Ordering::Less
                            } else {
                                Ordering::Greater
                            }
                        }
                        (false, true) => {
                            if *nulls_first {
                                Ordering::Greater
                            } else {
                                Ordering::Less
                            }
                        }
                        _ => {
                            let o = x.compare(y, *coll);
                            if *desc {
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
            };
            let mut idx: Vec<usize> = (0..n).collect();
            idx.sort_by(|&a, &b| {
                row_cmp(&pkeys[a], &pkeys[b], &[]).then_with(|| order_cmp(&okeys[a], &okeys[b]))
            });
            let mut start = 0;
            while start < n {
                let mut end = start + 1;
                while end < n
                    && row_cmp(&pkeys[idx[start]], &pkeys[idx[end]], &[]) == Ordering::Equal
                {
                    end += 1;
                }
                let part = &idx[start..end];
                self.window_partition(
                    w, part, &okeys, &args, rows, parent, wi, &mut out, &order_cmp,
                )?;
                start = end;
            }
        }
        Ok(out)
    }

    #[allow(clippy::too_many_arguments)]
    fn window_partition(
        &self,
        w: &WinCall,
        part: &[usize],
        okeys: &[Vec<Value>],
        args: &[Vec<Value>],
        rows: &[(Row, Vec<Value>)],
        parent: Option<&Frame>,
        wi: usize,
        out: &mut [Vec<Value>],
        order_cmp: &dyn Fn(&[Value], &[Value]) -> Ordering,
    ) -> Result<()> {
        let len = part.len();
        // Peer groups: rows with equal window-order keys.
        let mut group_start = vec![0usize; len];
        let mut group_end = vec![0usize; len];
        let mut dense = vec![0usize; len];
        let mut g = 0;
        let mut i = 0;
        while i < len {
            let mut j = i + 1;
            while j < len && order_cmp(&okeys[part[i]], &okeys[part[j]]) == Ordering::Equal {
                j += 1;
            }
            g += 1;
            for k in i..j {
                group_start[k] = i;
                group_end[k] = j - 1;
                dense[k] = g;
            }
            i = j;
        }
        let offset_value = |row: usize, e: &CExpr| -> Result<i64> {
            let (r, aggv) = &rows[row];
            let v = self.eval(
                e,
                &Frame {
                    row: r,
                    aggs: aggv,
                    wins: &[],
                    parent,
                },
            )?;
            match v.apply_affinity(Affinity::Integer) {
                Value::Integer(i) if i >= 0 => Ok(i),
                _ => err("frame starting offset must be a non-negative integer"),
            }
        };
        let mut running: Option<Box<dyn crate::func::aggregate::Aggregate>> = None;
        let mut running_len = 0usize;
        for pos in 0..len {
            let row = part[pos];
            let a = &args[row];
            let v = match &w.kind {
                WinKind::RowNumber => Value::Integer(pos as i64 + 1),
                WinKind::Rank => Value::Integer(group_start[pos] as i64 + 1),
                WinKind::DenseRank => Value::Integer(dense[pos] as i64),
                WinKind::PercentRank => Value::real(if len > 1 {
                    group_start[pos] as f64 / (len - 1) as f64
                } else {
                    0.0
                }),
                WinKind::CumeDist => Value::real((group_end[pos] + 1) as f64 / len as f64),
                WinKind::Ntile => {
                    let nt = match a
                        .first()
                        .map(|x| x.clone().apply_affinity(Affinity::Integer))
                    {
                        Some(Value::Integer(k)) if k > 0 => k as usize,
                        _ => return err("argument of ntile must be a positive integer"),
                    };
                    let size = len / nt;
                    let rem = len % nt;
                    // The first `rem` buckets hold one extra row.
                    let big = rem * (size + 1);
                    let bucket = if pos < big {
                        pos / (size + 1)
                    } else {
                        rem + (pos - big) / size.max(1)
                    };
                    Value::Integer(bucket as i64 + 1)
                }
                WinKind::Lag | WinKind::Lead => {
                    let off = match a.get(1) {
                        Some(x) => match x.clone().apply_affinity(Affinity::Integer) {
                            Value::Integer(k) => k,
                            _ => 1,
                        },
                        None => 1,
                    };
                    let target = if matches!(w.kind, WinKind::Lag) {
                        pos as i64 - off
                    } else {
                        pos as i64 + off
                    };
                    if target >= 0 && (target as usize) < len {
                        args[part[target as usize]]
                            .first()
                            .cloned()
                            .unwrap_or(Value::Null)
                    } else {
                        a.get(2).cloned().unwrap_or(Value::Null)
                    }
                }
                _ => {
                    // Frame-based functions.
                    let (fs, fe): (i64, i64) = match &w.frame {
                        WinFrame::Partition => (0, len as i64 - 1),
                        WinFrame::ToCurrentPeers => (0, group_end[pos] as i64),
                        WinFrame::Rows { start, end } => {
                            let edge = |e: &FrameEdge| -> Result<i64> {
                                Ok(match e {
                                    FrameEdge::UnboundedPreceding => 0,
                                    FrameEdge::Preceding(x) => pos as i64 - offset_value(row, x)?,
                                    FrameEdge::CurrentRow => pos as i64,
                                    FrameEdge::Following(x) => pos as i64 + offset_value(row, x)?,
                                    FrameEdge::UnboundedFollowing => len as i64 - 1,
                                })
                            };
                            (edge(start)?.max(0), edge(end)?.min(len as i64 - 1))
                        }
                    };
                    match &w.kind {
                        WinKind::FirstValue => {
                            if fs <= fe {
                                args[part[fs as usize]]
                                    .first()
                                    .cloned()
                                    .unwrap_or(Value::Null)
                            } else {
                                Value::Null
                            }
                        }
                        WinKind::LastValue => {
                            if fs <= fe {
                                args[part[fe as usize]]
                                    .first()
                                    .cloned()
                                    .unwrap_or(Value::Null)
                            } else {
                                Value::Null
                            }
                        }
                        WinKind::NthValue => {
                            let k =
                                match a
                                    .get(1)
                                    .map(|x| x.clone().apply_affinity(Affinity::Integer))
                                {
                                    Some(Value::Integer(k)) if k > 0 => k,
                                    _ => return err(
                                        "second argument to nth_value must be a positive integer",
                                    ),
                                };
                            let t = fs + k - 1;
                            if t <= fe {
                                args[part[t as usize]]
                                    .first()
                                    .cloned()
                                    .unwrap_or(Value::Null)
                            } else {
                                Value::Null
                            }
                        }
                        WinKind::Agg {
                            def,
                            distinct,
                            coll,
                        } => {
                            // Frames that start at the partition's first row and only grow
                            // share one accumulator (stepped forward, read with `value`);
                            // any other frame is recomputed from scratch.
                            if fs == 0 && fe + 1 >= running_len as i64 {
                                if running.is_none() {
                                    running = Some(def.new_aggregate(*distinct, *coll)?);
                                }
                                if let Some(acc) = running.as_mut() {
                                    while (running_len as i64) <= fe {
                                        acc.step(&args[part[running_len]])?;
                                        running_len += 1;
                                    }
                                    acc.value()?
                                } else {
                                    Value::Null
                                }
                            } else {
                                let mut acc = def.new_aggregate(*distinct, *coll)?;
                                let mut k = fs;
                                while k <= fe {
                                    acc.step(&args[part[k as usize]])?;
                                    k += 1;
                                }
                                acc.finalize()?
                            }
                        }
                        _ => Value::Null,
                    }
                }
            };
            out[row][wi] = v;
        }
        Ok(())
    }

    /// Nested-loop join: binds source `i` for each of its candidate rows and recurses;
    /// calls `emit` with the full combined row.
    ///
    /// RIGHT and FULL JOIN follow SQLite (where.c, "RIGHT JOIN"): in the loop, a right source
    /// `r` is joined as an inner (FULL: left) join while the rows of `r` that satisfied its ON
    /// terms are recorded; after the loop, each unrecorded row of `r` is bound with every
    /// source before `r` NULL, tested against `r`'s filters and carried through the sources
    /// after `r`, in source order (so one right join's leftovers can still match a later
    /// one). The planner scans right sources whole (`Access::Scan`), in the same order every
    /// time, so a row is known by its position in the scan, and keeps WHERE terms from being
    /// tested before the last right join they follow (`bind::select_core`).
    pub fn scan_level(
        &self,
        core: &CorePlan,
        i: usize,
        row: &mut Row,
        parent: Option<&Frame>,
        emit: &mut dyn FnMut(&[Value]) -> Result<()>,
    ) -> Result<()> {
        // Left empty (no allocation) when no source keeps its unmatched rows.
        let mut matched: Vec<Vec<bool>> = Vec::new();
        if core.sources.iter().any(|s| s.join.keeps_right_rows()) {
            matched = vec![Vec::new(); core.sources.len()];
        }
        self.join_level(core, i, row, parent, emit, &mut matched)?;
        for r in i..core.sources.len() {
            let src = &core.sources[r];
            if !src.join.keeps_right_rows() {
                continue;
            }
            let needed = core.needed.get(r).and_then(|n| n.as_ref());
            let candidates = self.candidates(src, needed, row, parent)?;
            for (pos, cand) in candidates.enumerate() {
                let vals = cand?;
                if matched[r].get(pos).copied().unwrap_or(false) {
                    continue;
                }
                for v in &mut row[..src.start] {
                    *v = Value::Null;
                }
                let mut vals = vals.into_iter();
                for slot in row[src.start..src.start + src.width].iter_mut() {
                    *slot = vals.next().unwrap_or(Value::Null);
                }
                let fr = Frame::new(row, parent);
                let mut ok = true;
                for t in &core.filters[r] {
                    if !self.is_true(t, &fr)? {
                        ok = false;
                        break;
                    }
                }
                if ok {
                    self.join_level(core, r + 1, row, parent, emit, &mut matched)?;
                }
            }
        }
        Ok(())
    }

    /// One level of the nested loop; `matched[r]` records (by scan position) the rows of
    /// each RIGHT/FULL source `r` that satisfied its ON terms.
    fn join_level(
        &self,
        core: &CorePlan,
        i: usize,
        row: &mut Row,
        parent: Option<&Frame>,
        emit: &mut dyn FnMut(&[Value]) -> Result<()>,
        matched: &mut Vec<Vec<bool>>,
    ) -> Result<()> {
        if core.sources.is_empty() {
            let fr = Frame::new(row, parent);
            for flt in core.filters.first().map(|v| v.as_slice()).unwrap_or(&[]) {
                if !self.is_true(flt, &fr)? {
                    return Ok(());
                }
            }
            return emit(row);
        }
        if i == core.sources.len() {
            return emit(row);
        }
        let src = &core.sources[i];
        let mut any = false;
        let needed = core.needed.get(i).and_then(|n| n.as_ref());
        let mut candidates = self.candidate_source(src, needed, row, parent)?;
        let mut pos = 0usize;
        loop {
            if !candidates.next_into(&mut row[src.start..src.start + src.width])? {
                break;
            }
            pos += 1;
            let pos = pos - 1;
            let fr = Frame::new(row, parent);
            if src.join.is_outer() {
                let mut ok = true;
                for t in &src.on {
                    if !self.is_true(t, &fr)? {
                        ok = false;
                        break;
                    }
                }
                if !ok {
                    continue;
                }
                any = true;
                if src.join.keeps_right_rows() {
                    if let Some(m) = matched.get_mut(i) {
                        if m.len() <= pos {
                            m.resize(pos + 1, false);
                        }
                        m[pos] = true;
                    }
                }
            }
            let mut ok = true;
            for t in &core.filters[i] {
                if !self.is_true(t, &fr)? {
                    ok = false;
                    break;
                }
            }
            if ok {
                self.join_level(core, i + 1, row, parent, emit, matched)?;
            }
        }
        if matches!(src.join, JoinType::Left | JoinType::Full) && !any {
            for v in &mut row[src.start..src.start + src.width] {
                *v = Value::Null;
            }
            let fr = Frame::new(row, parent);
            for t in &core.filters[i] {
                if !self.is_true(t, &fr)? {
                    return Ok(());
                }
            }
            self.join_level(core, i + 1, row, parent, emit, matched)?;
        }
        Ok(())
    }

    /// The candidates of one source for `join_level`: a rowid table read by a full scan or
    /// a rowid range decodes straight into the combined row (`Store::table_scan`); every
    /// other source goes through [`candidates`](Self::candidates).
    fn candidate_source<'s>(
        &'s self,
        src: &Source,
        needed: Option<&std::sync::Arc<[bool]>>,
        row: &Row,
        parent: Option<&Frame>,
    ) -> Result<Candidates<'s>> {
        if let SourceKind::Table(t) = &src.kind {
            let n = t.columns.len();
            let direct = !t.without_rowid && !t.has_virtual() && src.width == n + 1;
            let range = match &src.access {
                Access::Scan if direct => Some((Bound::Unbounded, Bound::Unbounded, false)),
                Access::RowidRange { lo, hi, reverse } if direct => {
                    let fr = Frame::new(row, parent);
                    let lo_b = match lo {
                        Some((e, incl)) => match rowid_bound(&self.eval(e, &fr)?, *incl, true) {
                            Some(b) => b,
                            None => return Ok(Candidates::Rows(Box::new(std::iter::empty()))),
                        },
                        None => Bound::Unbounded,
                    };
                    let hi_b = match hi {
                        Some((e, incl)) => match rowid_bound(&self.eval(e, &fr)?, *incl, false) {
                            Some(b) => b,
                            None => return Ok(Candidates::Rows(Box::new(std::iter::empty()))),
                        },
                        None => Bound::Unbounded,
                    };
                    Some((lo_b, hi_b, *reverse))
                }
                _ => None,
            };
            if let Some((lo, hi, reverse)) = range {
                let scan = self
                    .store
                    .table_scan(t.root, lo, hi, reverse, needed.cloned())?;
                let reals = (0..n)
                    .filter(|&i| t.columns[i].affinity == Affinity::Real)
                    .collect();
                return Ok(Candidates::Scan {
                    scan,
                    defaults: self.column_defaults(t),
                    reals,
                    rowid_alias: t.rowid_alias,
                });
            }
        }
        Ok(Candidates::Rows(self.candidates(src, needed, row, parent)?))
    }

    /// The candidate rows of one source (in its row layout), per its access path.
    fn candidates(
        &self,
        src: &Source,
        needed: Option<&std::sync::Arc<[bool]>>,
        row: &Row,
        parent: Option<&Frame>,
    ) -> Result<Box<dyn Iterator<Item = Result<Row>> + '_>> {
        match &src.kind {
            SourceKind::Subquery(sp) => {
                let fr = Frame::new(row, parent);
                // FROM-subqueries see the enclosing query, not this level.
                let rows = match parent {
                    Some(p) => self.subquery_rows(sp, p)?,
                    None => {
                        let _ = fr;
                        let empty: [Value; 0] = [];
                        let top = Frame::new(&empty, None);
                        self.subquery_rows(sp, &top)?
                    }
                };
                let v: Vec<Result<Row>> = rows.iter().cloned().map(Ok).collect();
                Ok(Box::new(v.into_iter()))
            }
            SourceKind::Recursive(rp) => {
                let rows = self.recursive_rows(rp, parent)?;
                let v: Vec<Result<Row>> = rows.iter().cloned().map(Ok).collect();
                Ok(Box::new(v.into_iter()))
            }
            SourceKind::PragmaFn { pragma, args } => {
                let fr = Frame::new(row, parent);
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(self.eval(a, &fr)?);
                }
                let rows = crate::exec::pragma::function_rows(self.schema, pragma, &vals)?;
                Ok(Box::new(rows.into_iter().map(Ok)))
            }
            SourceKind::JsonFn { recursive, args } => {
                let fr = Frame::new(row, parent);
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(self.eval(a, &fr)?);
                }
                let rows = crate::func::json_table::rows(*recursive, &vals)?;
                Ok(Box::new(rows.into_iter().map(Ok)))
            }
            SourceKind::Rows(rows) => {
                let v: Vec<Result<Row>> = rows.iter().cloned().map(Ok).collect();
                Ok(Box::new(v.into_iter()))
            }
            SourceKind::Working(id) => {
                let rows = self.working.borrow().get(id).cloned().unwrap_or_default();
                let v: Vec<Result<Row>> = rows.iter().cloned().map(Ok).collect();
                Ok(Box::new(v.into_iter()))
            }
            SourceKind::TempSchema | SourceKind::Schema | SourceKind::AttachedSchema(_) => {
                let temp = matches!(src.kind, SourceKind::TempSchema);
                if temp && !self.store.has_temp() {
                    return Ok(Box::new(std::iter::empty()));
                }
                let root = match src.kind {
                    SourceKind::TempSchema => crate::exec::TEMP_SCHEMA_ROOT,
                    SourceKind::AttachedSchema(root) => root,
                    _ => 1,
                };
                let it = self
                    .store
                    .table_range(root, Bound::Unbounded, Bound::Unbounded, false)?;
                Ok(Box::new(it.map(|r| {
                    r.map(|(rowid, mut vals)| {
                        vals.resize(5, Value::Null);
                        vals.push(Value::Integer(rowid));
                        vals
                    })
                })))
            }
            SourceKind::Table(t) => {
                let t = t.clone();
                let defaults = self.column_defaults(&t);
                let gen = match t.has_virtual() {
                    true => Some(Rc::new(self.generated_exprs(&t)?)),
                    false => None,
                };
                // The mask covers table columns, which are the record's only while no column
                // is VIRTUAL; `usage::needed_columns` gives none then, and this keeps it so.
                let needed = needed.filter(|_| !t.has_virtual());
                let fr = Frame::new(row, parent);
                match &src.access {
                    Access::Scan => self.table_rows_cols(&t, defaults, needed),
                    Access::AutoIndex {
                        col,
                        probe,
                        aff,
                        coll,
                        cache,
                    } => {
                        let v = self.eval(probe, &fr)?.apply_comparison_affinity(*aff);
                        let Some(k) = hash_key(&v, *coll) else {
                            return Ok(Box::new(std::iter::empty()));
                        };
                        let fresh =
                            !matches!(&*cache.borrow(), Some((id, _)) if *id == self.exec_id);
                        if fresh {
                            let mut map: std::collections::HashMap<Vec<u8>, Vec<Row>> =
                                std::collections::HashMap::new();
                            for r in self.table_rows_cols(&t, defaults.clone(), needed)? {
                                let row = r?;
                                let cv = row
                                    .get(*col)
                                    .cloned()
                                    .unwrap_or(Value::Null)
                                    .apply_comparison_affinity(*aff);
                                if let Some(hk) = hash_key(&cv, *coll) {
                                    map.entry(hk).or_default().push(row);
                                }
                            }
                            *cache.borrow_mut() = Some((self.exec_id, map));
                        }
                        let rows: Vec<Result<Row>> = match &*cache.borrow() {
                            Some((_, map)) => map
                                .get(&k)
                                .map(|v| v.iter().cloned().map(Ok).collect())
                                .unwrap_or_default(),
                            None => Vec::new(),
                        };
                        Ok(Box::new(rows.into_iter()))
                    }
                    Access::RowidEq(exprs) => {
                        let mut ids = Vec::new();
                        for e in exprs {
                            if let Some(id) = as_rowid(&self.eval(e, &fr)?) {
                                if !ids.contains(&id) {
                                    ids.push(id);
                                }
                            }
                        }
                        // SQLite walks an IN list in key order (its values go through a
                        // sorted ephemeral table), so the rows come out in rowid order.
                        ids.sort_unstable();
                        let mut out = Vec::new();
                        for id in ids {
                            if let Some(vals) = self.table_get(t.root, id, needed)? {
                                out.push(self.virtual_filled(
                                    &t,
                                    &gen,
                                    expand_row(&t, id, vals, &defaults),
                                ));
                            }
                        }
                        Ok(Box::new(out.into_iter()))
                    }
                    Access::RowidRange { lo, hi, reverse } => {
                        let lo_b = match lo {
                            Some((e, incl)) => {
                                match rowid_bound(&self.eval(e, &fr)?, *incl, true) {
                                    Some(b) => b,
                                    None => return Ok(Box::new(std::iter::empty())),
                                }
                            }
                            None => Bound::Unbounded,
                        };
                        let hi_b = match hi {
                            Some((e, incl)) => match rowid_bound(&self.eval(e, &fr)?, *incl, false)
                            {
                                Some(b) => b,
                                None => return Ok(Box::new(std::iter::empty())),
                            },
                            None => Bound::Unbounded,
                        };
                        let it = self.table_range(t.root, lo_b, hi_b, *reverse, needed)?;
                        Ok(Box::new(it.map(move |r| {
                            r.and_then(|(rowid, vals)| {
                                self.virtual_filled(
                                    &t,
                                    &gen,
                                    expand_row(&t, rowid, vals, &defaults),
                                )
                            })
                        })))
                    }
                    Access::Index {
                        index,
                        order,
                        eq,
                        lo,
                        hi,
                        range_aff,
                        reverse,
                        covering,
                    } => {
                        // Candidate prefixes: the cartesian product of the equality values.
                        let mut prefixes: Vec<Row> = vec![Vec::new()];
                        for (exprs, aff) in eq {
                            let mut vals = Vec::new();
                            for e in exprs {
                                let v = self.eval(e, &fr)?.apply_comparison_affinity(*aff);
                                if !v.is_null() {
                                    vals.push(v);
                                }
                            }
                            let mut next = Vec::new();
                            for p in &prefixes {
                                for v in &vals {
                                    let mut q = p.clone();
                                    q.push(v.clone());
                                    next.push(q);
                                }
                            }
                            prefixes = next;
                        }
                        let lo_v = match lo {
                            Some((e, incl)) => {
                                let v = self.eval(e, &fr)?.apply_comparison_affinity(*range_aff);
                                if v.is_null() {
                                    return Ok(Box::new(std::iter::empty()));
                                }
                                Some((v, *incl))
                            }
                            None => None,
                        };
                        let hi_v = match hi {
                            Some((e, incl)) => {
                                let v = self.eval(e, &fr)?.apply_comparison_affinity(*range_aff);
                                if v.is_null() {
                                    return Ok(Box::new(std::iter::empty()));
                                }
                                Some((v, *incl))
                            }
                            None => None,
                        };
                        // Several prefixes (IN lists) are walked in key order, as SQLite
                        // does, each once.
                        prefixes.sort_by(|a, b| order.compare(a, b));
                        prefixes.dedup_by(|a, b| order.compare(a, b) == Ordering::Equal);
                        let multi = prefixes.len() > 1;
                        // Every column of a UNIQUE index fixed by `=`: at most one key
                        // matches (NULL values never reach a prefix), so the scan stops after
                        // it instead of stepping to the next key to find the range's end.
                        let one_key = index.unique
                            && eq.len() == index.columns.len()
                            && lo_v.is_none()
                            && hi_v.is_none();
                        let mut seen_ids: HashSet<i64> = HashSet::new();
                        let mut seen_keys: HashSet<String> = HashSet::new();
                        let mut out = Vec::new();
                        let ncols = index.columns.len();
                        let store = self.store;
                        let root = t.root;
                        // WITHOUT ROWID: the PRIMARY KEY's own tree holds whole rows; a
                        // secondary index's entry ends with the key that finds the row.
                        let wr = t.without_rowid.then(|| {
                            let layout = WrLayout::of(&t);
                            let pk_pos = if index.root == t.root {
                                Vec::new()
                            } else {
                                pk_positions_in_index(&t, index)
                            };
                            (layout, pk_pos, t.clone(), defaults.clone())
                        });
                        let (this, wr_gen) = (self, gen.clone());
                        let wr_row = move |key: Row| -> Result<Option<Row>> {
                            let Some((layout, pk_pos, t, defaults)) = &wr else {
                                return Ok(None);
                            };
                            let row = if pk_pos.is_empty() {
                                layout.row_of_record(key, defaults)
                            } else {
                                let pk: Row = pk_pos
                                    .iter()
                                    .map(|&p| key.get(p).cloned().unwrap_or(Value::Null))
                                    .collect();
                                match layout.lookup(store, t, &pk, defaults)? {
                                    Some(row) => row,
                                    None => return Ok(None),
                                }
                            };
                            this.virtual_filled(t, &wr_gen, row).map(Some)
                        };
                        if t.without_rowid {
                            let mut out = Vec::new();
                            for p in &prefixes {
                                let (lo_b, hi_b) = index_bounds(index, p, &lo_v, &hi_v);
                                let keys = self
                                    .store
                                    .index_range(index.root, order, lo_b, hi_b, *reverse)?;
                                if !multi {
                                    return Ok(Box::new(keys.filter_map(move |key| {
                                        key.and_then(&wr_row).transpose()
                                    })));
                                }
                                for key in keys {
                                    let Some(row) = wr_row(key?)? else { continue };
                                    if seen_keys.insert(format!("{row:?}")) {
                                        out.push(Ok(row));
                                    }
                                }
                            }
                            return Ok(Box::new(out.into_iter()));
                        }
                        let needed = needed.cloned();
                        let (covering, index_c, t_ncols) =
                            (*covering, index.clone(), t.columns.len());
                        // The table row of an index key (its last value is the rowid).
                        let lookup = move |key: Row| -> Result<Option<(i64, Row)>> {
                            if covering {
                                return super::covering::row_of_entry(&index_c, key, t_ncols)
                                    .map(Some);
                            }
                            let Some(id) = key.get(ncols).and_then(|v| match v {
                                Value::Integer(i) => Some(*i),
                                _ => None,
                            }) else {
                                return Err(SqlError::Code {
                                    code: codes::SQLITE_CORRUPT,
                                    extended_code: codes::SQLITE_CORRUPT,
                                    message: "database disk image is malformed".into(),
                                });
                            };
                            let vals = match &needed {
                                Some(n) => store.table_get_cols(root, id, n)?,
                                None => store.table_get(root, id)?,
                            };
                            Ok(vals.map(|vals| (id, vals)))
                        };
                        for p in prefixes {
                            let (lo_b, hi_b) = index_bounds(index, &p, &lo_v, &hi_v);
                            let keys = self
                                .store
                                .index_range(index.root, order, lo_b, hi_b, *reverse)?;
                            if !multi {
                                // One range: rows are produced as the scan advances, so a
                                // LIMIT (or EXISTS) stops it early instead of fetching every
                                // table row of the range first (hc_mixed 0:10 walks 10 keys of
                                // a 200,000-row index instead of all of them).
                                let t = t.clone();
                                let keys: Box<dyn Iterator<Item = Result<Row>>> = if one_key {
                                    Box::new(keys.take(1))
                                } else {
                                    keys
                                };
                                return Ok(Box::new(keys.filter_map(move |key| {
                                    match key.and_then(&lookup) {
                                        Ok(Some((id, vals))) => Some(self.virtual_filled(
                                            &t,
                                            &gen,
                                            expand_row(&t, id, vals, &defaults),
                                        )),
                                        Ok(None) => None,
                                        Err(e) => Some(Err(e)),
                                    }
                                })));
                            }
                            for key in keys {
                                let Some((id, vals)) = lookup(key?)? else {
                                    continue;
                                };
                                if !seen_ids.insert(id) {
                                    continue;
                                }
                                out.push(self.virtual_filled(
                                    &t,
                                    &gen,
                                    expand_row(&t, id, vals, &defaults),
                                ));
                            }
                        }
                        Ok(Box::new(out.into_iter()))
                    }
                }
            }
        }
    }

    /// A table's rows in rowid order, decoding only the `needed` columns when given.
    fn table_range(
        &self,
        root: u32,
        lo: Bound<i64>,
        hi: Bound<i64>,
        reverse: bool,
        needed: Option<&std::sync::Arc<[bool]>>,
    ) -> Result<super::store::RowIter> {
        match needed {
            Some(n) => self
                .store
                .table_range_cols(root, lo, hi, reverse, n.clone()),
            None => self.store.table_range(root, lo, hi, reverse),
        }
    }

    /// One table row by rowid, decoding only the `needed` columns when given.
    fn table_get(
        &self,
        root: u32,
        rowid: i64,
        needed: Option<&std::sync::Arc<[bool]>>,
    ) -> Result<Option<Row>> {
        match needed {
            Some(n) => self.store.table_get_cols(root, rowid, n),
            None => self.store.table_get(root, rowid),
        }
    }

    /// Computes a recursive CTE to its fixpoint: the initial rows, then rounds of the step
    /// over the previous round's rows (the working table) until a round adds nothing (or
    /// LIMIT rows exist). UNION (not ALL) discards rows already produced.
    fn recursive_rows(&self, rp: &RecursivePlan, parent: Option<&Frame>) -> Result<Rc<Vec<Row>>> {
        if let Some((id, rows)) = &*rp.cache.borrow() {
            if *id == self.exec_id {
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
            let layout = WrLayout::of(t);
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
    pub fn column_defaults(&self, t: &Table) -> Vec<Value> {
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
            let v = self.eval(e, &Frame::new(row, None))?;
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
                Collation::Binary => k.extend_from_slice(s.as_bytes()),
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

/// LIMIT/OFFSET operand: an integer (numeric text converts), else `datatype mismatch`.
fn limit_value(v: Value) -> Result<i64> {
    match v.apply_affinity(Affinity::Numeric) {
        Value::Integer(i) => Ok(i),
        Value::Real(r) if r.fract() == 0.0 => Ok(r as i64),
        Value::Null => Ok(-1),
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
/// bounds on the next column.
fn index_bounds(
    index: &crate::schema::Index,
    p: &Row,
    lo_v: &Option<(Value, bool)>,
    hi_v: &Option<(Value, bool)>,
) -> (Bound<Row>, Bound<Row>) {
    let lo_b = match lo_v {
        Some((v, incl)) => {
            let mut k = p.clone();
            k.push(v.clone());
            if *incl {
                Bound::Included(k)
            } else {
                Bound::Excluded(k)
            }
        }
        // Skip NULLs of a ranged ascending column: `x < 5` never
        // matches NULL, and NULLs sort first.
        None if hi_v.is_some() && !index.columns.get(p.len()).is_some_and(|c| c.desc) => {
            let mut k = p.clone();
            k.push(Value::Null);
            Bound::Excluded(k)
        }
        None if p.is_empty() => Bound::Unbounded,
        None => Bound::Included(p.clone()),
    };
    let hi_b = match hi_v {
        Some((v, incl)) => {
            let mut k = p.clone();
            k.push(v.clone());
            if *incl {
                Bound::Included(k)
            } else {
                Bound::Excluded(k)
            }
        }
        None if lo_v.is_some() && index.columns.get(p.len()).is_some_and(|c| c.desc) => {
            let mut k = p.clone();
            k.push(Value::Null);
            Bound::Excluded(k)
        }
        None if p.is_empty() => Bound::Unbounded,
        None => Bound::Included(p.clone()),
    };
    (lo_b, hi_b)
}
