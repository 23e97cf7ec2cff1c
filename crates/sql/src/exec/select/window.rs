//! Window functions: every window call of a query computed over the rows reaching the
//! output, partition by partition (lang_windowfunc.html).
//!
//! Frames (2.2): a row's frame is a range of its partition's rows in window order, from
//! `start` to `end`, counted in rows (ROWS), in peer groups (GROUPS), or in the value of
//! the window's one ORDER BY term (RANGE); EXCLUDE then takes the current row, its peers,
//! or both out of it, and an aggregate's FILTER leaves out the rows where it is not true.
//! Offsets are constants, evaluated once per execution (and only when there are rows, as
//! SQLite checks them at the first row).
//!
//! The rows leave in window order when the query has no ORDER BY, as SQLite's: SQLite
//! computes the calls of each distinct window in a pass that sorts the rows it receives
//! by the window's PARTITION BY and ORDER BY (stably), the first window's pass last
//! (`WinCall::pass`): ties meet a window in the order the later passes left them in, which
//! decides row_number() among peers, and the rows leave in the first window's order.

use super::*;
use crate::value::ArithOp;

/// A frame offset as the executor uses it: rows or groups (ROWS, GROUPS), or a distance
/// in the ORDER BY term's value (RANGE).
enum Offset {
    Count(i64),
    Distance(Value),
}

/// One frame edge with its offset evaluated.
enum Edge {
    UnboundedPreceding,
    Preceding(Offset),
    CurrentRow,
    Following(Offset),
    UnboundedFollowing,
}

/// A frame with its offsets evaluated (`WinFrame::Spec`).
struct FrameSpec {
    units: FrameUnits,
    start: Edge,
    end: Edge,
    exclude: FrameExclude,
}

/// A partition's peer groups: rows with equal window-order keys, in window order.
struct Peers {
    /// Per row of the partition: its group's first and last row, and the group's number
    /// (from 0).
    first: Vec<usize>,
    last: Vec<usize>,
    group: Vec<usize>,
    /// Per group: its first row.
    starts: Vec<usize>,
}

impl Peers {
    fn new(len: usize, same: impl Fn(usize, usize) -> bool) -> Peers {
        let mut p = Peers {
            first: vec![0; len],
            last: vec![0; len],
            group: vec![0; len],
            starts: Vec::new(),
        };
        let mut i = 0;
        while i < len {
            let mut j = i + 1;
            while j < len && same(i, j) {
                j += 1;
            }
            for k in i..j {
                p.first[k] = i;
                p.last[k] = j - 1;
                p.group[k] = p.starts.len();
            }
            p.starts.push(i);
            i = j;
        }
        p
    }

    /// The last row of group `g`.
    fn last_of(&self, g: usize) -> usize {
        self.last[self.starts[g]]
    }
}

impl Exec<'_> {
    /// Computes every window call for the rows reaching the output: rows are sorted by
    /// partition then window order, each partition is walked in order, and each row gets
    /// its value from its partition, peers and frame (lang_windowfunc.html). Aggregates over a
    /// frame are recomputed per row (O(rows x frame)) unless the frames only grow from the
    /// partition's first row. Returns each row's values and the order the rows leave in
    /// (module docs).
    pub(super) fn compute_windows(
        &self,
        core: &CorePlan,
        rows: &[(Row, Vec<Value>)],
        parent: Option<&Frame>,
    ) -> Result<(Vec<Vec<Value>>, Vec<usize>)> {
        let n = rows.len();
        let mut out = vec![vec![Value::Null; core.windows.len()]; n];
        let agg_json = super::super::eval::agg_subtypes(&core.aggs);
        // The rows in the order the pass being computed receives them (`WinCall::pass`).
        let mut order: Vec<usize> = (0..n).collect();
        let passes = core.windows.iter().map(|w| w.pass + 1).max().unwrap_or(0);
        let calls = (0..passes).rev().flat_map(|pass| {
            core.windows
                .iter()
                .enumerate()
                .filter(move |(_, w)| w.pass == pass)
        });
        for (wi, w) in calls {
            let mut pkeys = Vec::with_capacity(n);
            let mut okeys = Vec::with_capacity(n);
            let mut args = Vec::with_capacity(n);
            // json_group_array/json_group_object read their arguments' JSON subtype
            // (`Aggregate::step_subtyped`): kept per row beside the arguments.
            let subtyped = matches!(&w.kind, WinKind::Agg { def, .. } if def.reads_json_subtype());
            let mut json: Vec<Vec<bool>> = Vec::new();
            // FILTER: whether each row enters the frames (all do without one).
            let mut passes: Vec<bool> = Vec::new();
            for (row, aggv) in rows {
                let fr = Frame {
                    row,
                    aggs: aggv,
                    agg_json: &agg_json,
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
                if subtyped {
                    let mut j = Vec::with_capacity(w.args.len());
                    for e in &w.args {
                        let (v, is_json) = self.eval_subtyped(e, &fr)?;
                        a.push(v);
                        j.push(is_json);
                    }
                    json.push(j);
                } else {
                    for e in &w.args {
                        a.push(self.eval(e, &fr)?);
                    }
                }
                if let Some(f) = &w.filter {
                    passes.push(self.is_true(f, &fr)?);
                }
                pkeys.push(p);
                okeys.push(o);
                args.push(a);
            }
            let order_cmp = |a: &[Value], b: &[Value]| -> Ordering {
                for (k, (x, y)) in w.order.iter().zip(a.iter().zip(b.iter())) {
                    let o = order_term_cmp(k, x, y);
                    if o != Ordering::Equal {
                        return o;
                    }
                }
                Ordering::Equal
            };
            let key_cmp = |a: usize, b: usize| {
                row_cmp(&pkeys[a], &pkeys[b], &w.partition_colls)
                    .then_with(|| order_cmp(&okeys[a], &okeys[b]))
            };
            // Stable: rows of equal keys keep the order the later passes left them in.
            // (The calls of one pass share partition and order: the sort is done once.)
            order.sort_by(|&a, &b| key_cmp(a, b));
            let idx = &order;
            let frame = if n > 0 {
                self.frame_spec(&w.frame, parent)?
            } else {
                None
            };
            let mut start = 0;
            while start < n {
                let mut end = start + 1;
                while end < n
                    && row_cmp(&pkeys[idx[start]], &pkeys[idx[end]], &w.partition_colls)
                        == Ordering::Equal
                {
                    end += 1;
                }
                let part = &idx[start..end];
                let inputs = WindowInputs {
                    okeys: &okeys,
                    args: &args,
                    json: &json,
                    passes: &passes,
                    order_cmp: &order_cmp,
                };
                self.window_partition(w, frame.as_ref(), part, &inputs, wi, &mut out)?;
                start = end;
            }
        }
        Ok((out, order))
    }

    /// The frame of a `WinFrame::Spec` window with its offsets evaluated, or an error as
    /// SQLite words it for an offset that is not a non-negative integer (ROWS, GROUPS) or
    /// number (RANGE); `None` for the frames computed without one.
    fn frame_spec(&self, frame: &WinFrame, parent: Option<&Frame>) -> Result<Option<FrameSpec>> {
        let WinFrame::Spec {
            units,
            start,
            end,
            exclude,
        } = frame
        else {
            return Ok(None);
        };
        let empty: [Value; 0] = [];
        let fr = Frame::new(&empty, parent);
        let offset = |e: &CExpr, which: &str| -> Result<Offset> {
            let v = self.eval(e, &fr)?;
            if *units == FrameUnits::Range {
                match v.apply_affinity(Affinity::Numeric) {
                    v @ Value::Integer(0..) => Ok(Offset::Distance(v)),
                    Value::Real(r) if r >= 0.0 => Ok(Offset::Distance(Value::Real(r))),
                    _ => err(format!(
                        "frame {which} offset must be a non-negative number"
                    )),
                }
            } else {
                match v.apply_affinity(Affinity::Integer) {
                    Value::Integer(i) if i >= 0 => Ok(Offset::Count(i)),
                    _ => err(format!(
                        "frame {which} offset must be a non-negative integer"
                    )),
                }
            }
        };
        let edge = |e: &FrameEdge, which: &str| -> Result<Edge> {
            Ok(match e {
                FrameEdge::UnboundedPreceding => Edge::UnboundedPreceding,
                FrameEdge::Preceding(x) => Edge::Preceding(offset(x, which)?),
                FrameEdge::CurrentRow => Edge::CurrentRow,
                FrameEdge::Following(x) => Edge::Following(offset(x, which)?),
                FrameEdge::UnboundedFollowing => Edge::UnboundedFollowing,
            })
        };
        Ok(Some(FrameSpec {
            units: *units,
            start: edge(start, "starting")?,
            end: edge(end, "ending")?,
            exclude: *exclude,
        }))
    }

    /// Computes window call `wi` for the rows of one partition (`part`: their indexes in
    /// window order).
    fn window_partition(
        &self,
        w: &WinCall,
        frame: Option<&FrameSpec>,
        part: &[usize],
        inputs: &WindowInputs,
        wi: usize,
        out: &mut [Vec<Value>],
    ) -> Result<()> {
        let WindowInputs {
            okeys,
            args,
            json,
            passes,
            order_cmp,
        } = *inputs;
        let len = part.len();
        let peers = Peers::new(len, |i, j| {
            order_cmp(&okeys[part[i]], &okeys[part[j]]) == Ordering::Equal
        });
        // Whether row `r` enters the frames (FILTER).
        let passes_filter = |r: usize| passes.get(r).copied().unwrap_or(true);
        let mut running: Option<Box<dyn crate::func::aggregate::Aggregate>> = None;
        let mut running_len = 0usize;
        for pos in 0..len {
            let row = part[pos];
            let a = &args[row];
            let v = match &w.kind {
                WinKind::RowNumber => Value::Integer(pos as i64 + 1),
                WinKind::Rank => Value::Integer(peers.first[pos] as i64 + 1),
                WinKind::DenseRank => Value::Integer(peers.group[pos] as i64 + 1),
                WinKind::PercentRank => Value::real(if len > 1 {
                    peers.first[pos] as f64 / (len - 1) as f64
                } else {
                    0.0
                }),
                WinKind::CumeDist => Value::real((peers.last[pos] + 1) as f64 / len as f64),
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
                    // Frame-based functions: the frame's rows, `fs..=fe` in window order,
                    // less those EXCLUDE takes out (`excluded`).
                    let (fs, fe, excluded) = match frame {
                        None => match &w.frame {
                            WinFrame::ToCurrentPeers => (0, peers.last[pos] as i64, None),
                            _ => (0, len as i64 - 1, None),
                        },
                        Some(f) => {
                            let (fs, fe) = frame_bounds(f, pos, &peers, |i| &okeys[part[i]], w)?;
                            let excluded = match f.exclude {
                                FrameExclude::NoOthers => None,
                                FrameExclude::CurrentRow => Some((pos, pos, None)),
                                FrameExclude::Group => {
                                    Some((peers.first[pos], peers.last[pos], None))
                                }
                                FrameExclude::Ties => {
                                    Some((peers.first[pos], peers.last[pos], Some(pos)))
                                }
                            };
                            (fs, fe, excluded)
                        }
                    };
                    // The frame's rows (partition positions) that count, in order.
                    let kept = |k: i64| -> bool {
                        let k = k as usize;
                        match excluded {
                            Some((lo, hi, keep)) => k < lo || k > hi || keep == Some(k),
                            None => true,
                        }
                    };
                    let in_frame = || (fs.max(0)..=fe).filter(|&k| kept(k));
                    match &w.kind {
                        WinKind::FirstValue => in_frame()
                            .next()
                            .and_then(|k| args[part[k as usize]].first().cloned())
                            .unwrap_or(Value::Null),
                        WinKind::LastValue => in_frame()
                            .last()
                            .and_then(|k| args[part[k as usize]].first().cloned())
                            .unwrap_or(Value::Null),
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
                            usize::try_from(k - 1)
                                .ok()
                                .and_then(|skip| in_frame().nth(skip))
                                .and_then(|k| args[part[k as usize]].first().cloned())
                                .unwrap_or(Value::Null)
                        }
                        WinKind::Agg {
                            def,
                            distinct,
                            coll,
                        } => {
                            let step = |acc: &mut Box<dyn crate::func::aggregate::Aggregate>,
                                        r: usize|
                             -> Result<()> {
                                if !passes_filter(r) {
                                    return Ok(());
                                }
                                match json.get(r) {
                                    Some(j) => acc.step_subtyped(&args[r], j),
                                    None => acc.step(&args[r]),
                                }
                            };
                            // Frames that start at the partition's first row and only grow
                            // share one accumulator (stepped forward, read with `value`);
                            // any other frame is recomputed from scratch.
                            if fs <= 0 && excluded.is_none() && fe + 1 >= running_len as i64 {
                                let acc = match running.as_mut() {
                                    Some(acc) => acc,
                                    None => {
                                        running.insert(def.new_aggregate(*distinct, *coll, &[])?)
                                    }
                                };
                                while (running_len as i64) <= fe {
                                    step(acc, part[running_len])?;
                                    running_len += 1;
                                }
                                acc.value()?
                            } else {
                                let mut acc = def.new_aggregate(*distinct, *coll, &[])?;
                                for k in in_frame() {
                                    step(&mut acc, part[k as usize])?;
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
}

/// What `window_partition` reads of every row (indexed by the row's position in the
/// query's rows).
#[derive(Clone, Copy)]
struct WindowInputs<'a> {
    okeys: &'a [Vec<Value>],
    args: &'a [Vec<Value>],
    /// Per row, its arguments' JSON subtypes (empty unless the call reads them).
    json: &'a [Vec<bool>],
    /// Per row, whether it passes the call's FILTER (empty without one).
    passes: &'a [bool],
    order_cmp: &'a dyn Fn(&[Value], &[Value]) -> Ordering,
}

/// Two values of one window ORDER BY term in window order: its direction, where NULLs go,
/// and its collation.
fn order_term_cmp(term: &(CExpr, bool, bool, Collation), x: &Value, y: &Value) -> Ordering {
    let (_, desc, nulls_first, coll) = term;
    match (x.is_null(), y.is_null()) {
        (true, true) => Ordering::Equal,
        (true, false) if *nulls_first => Ordering::Less,
        (true, false) => Ordering::Greater,
        (false, true) if *nulls_first => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => {
            let o = x.compare(y, *coll);
            if *desc {
                o.reverse()
            } else {
                o
            }
        }
    }
}

/// The frame of the row at partition position `pos`: its first and last position (the
/// frame is empty when the first is past the last). `key(i)`: the window-order keys of
/// the row at position `i`.
fn frame_bounds<'k>(
    f: &FrameSpec,
    pos: usize,
    peers: &Peers,
    key: impl Fn(usize) -> &'k [Value],
    w: &WinCall,
) -> Result<(i64, i64)> {
    let len = peers.first.len();
    let last = len as i64 - 1;
    let p = pos as i64;
    let groups = peers.starts.len() as i64;
    let g = peers.group[pos] as i64;
    // RANGE: the position of the first row at or after (`before`: of the last row at or
    // before) the value `distance` before or after the current row's, in window order.
    // A value that is not a number has no distance: the current row's peers bound it
    // (SQLite adds the offset only to a numeric value, windowCodeRangeTest).
    let range = |distance: &Value, preceding: bool, before: bool| -> Result<i64> {
        let term = &w.order[0];
        let xc = &key(pos)[0];
        let target = match xc {
            Value::Integer(_) | Value::Real(_) => {
                // ASC: PRECEDING is smaller, FOLLOWING larger; DESC the reverse.
                let op = if preceding != term.1 {
                    ArithOp::Sub
                } else {
                    ArithOp::Add
                };
                value::arith(op, xc, distance)
            }
            _ => xc.clone(),
        };
        // The rows are sorted by this term: the first position where `below` turns false.
        let first_not = |below: &dyn Fn(Ordering) -> bool| -> i64 {
            let (mut lo, mut hi) = (0, len);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                if below(order_term_cmp(term, &key(mid)[0], &target)) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            lo as i64
        };
        Ok(if before {
            first_not(&Ordering::is_le) - 1
        } else {
            first_not(&Ordering::is_lt)
        })
    };
    let start = match (&f.start, f.units) {
        (Edge::UnboundedPreceding, _) => 0,
        (Edge::CurrentRow, FrameUnits::Rows) => p,
        (Edge::CurrentRow, _) => peers.first[pos] as i64,
        (Edge::UnboundedFollowing, _) => last,
        (Edge::Preceding(Offset::Count(k)), FrameUnits::Rows) => p.saturating_sub(*k),
        (Edge::Following(Offset::Count(k)), FrameUnits::Rows) => p.saturating_add(*k),
        (Edge::Preceding(Offset::Count(k)), _) => {
            peers.starts[g.saturating_sub(*k).max(0) as usize] as i64
        }
        (Edge::Following(Offset::Count(k)), _) => match g.checked_add(*k) {
            Some(t) if t < groups => peers.starts[t as usize] as i64,
            _ => len as i64,
        },
        (Edge::Preceding(Offset::Distance(d)), _) => range(d, true, false)?,
        (Edge::Following(Offset::Distance(d)), _) => range(d, false, false)?,
    };
    let end = match (&f.end, f.units) {
        (Edge::UnboundedFollowing, _) => last,
        (Edge::CurrentRow, FrameUnits::Rows) => p,
        (Edge::CurrentRow, _) => peers.last[pos] as i64,
        (Edge::UnboundedPreceding, _) => 0,
        (Edge::Preceding(Offset::Count(k)), FrameUnits::Rows) => p.saturating_sub(*k),
        (Edge::Following(Offset::Count(k)), FrameUnits::Rows) => p.saturating_add(*k),
        (Edge::Preceding(Offset::Count(k)), _) => match g.checked_sub(*k) {
            Some(t) if t >= 0 => peers.last_of(t as usize) as i64,
            _ => -1,
        },
        (Edge::Following(Offset::Count(k)), _) => {
            peers.last_of(g.saturating_add(*k).min(groups - 1) as usize) as i64
        }
        (Edge::Preceding(Offset::Distance(d)), _) => range(d, true, true)?,
        (Edge::Following(Offset::Distance(d)), _) => range(d, false, true)?,
    };
    Ok((start.max(0), end.min(last)))
}
