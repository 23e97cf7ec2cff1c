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

/// A frame with its offsets evaluated (`WinFrame::Spec`); `exclude` is `None` without an
/// EXCLUDE clause.
struct FrameSpec {
    units: FrameUnits,
    start: Edge,
    end: Edge,
    exclude: Option<FrameExclude>,
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
    /// its value from its partition, peers and frame (lang_windowfunc.html). Aggregates
    /// step rows in and invert them out as SQLite does (`FrameWalk`: O(rows)), except
    /// over a frame with EXCLUDE, aggregated afresh per row (O(rows x frame)) as SQLite
    /// does too. Returns each row's values and the order the rows leave in (module docs).
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
        if let WinKind::Agg { def, coll, .. } = &w.kind {
            // The frames without EXCLUDE, SQLite's way: rows stepped in and inverted out.
            let implicit;
            let spec = match frame {
                Some(f) if f.exclude.is_some() => None,
                Some(f) => Some(f),
                None => {
                    implicit = FrameSpec {
                        units: FrameUnits::Range,
                        start: Edge::UnboundedPreceding,
                        end: match w.frame {
                            WinFrame::ToCurrentPeers => Edge::CurrentRow,
                            _ => Edge::UnboundedFollowing,
                        },
                        exclude: None,
                    };
                    Some(&implicit)
                }
            };
            if let Some(spec) = spec {
                let start_moves = !matches!(spec.start, Edge::UnboundedPreceding);
                let mut walk = FrameWalk {
                    spec,
                    peers: &peers,
                    term: w.order.first(),
                    rows: FrameRows {
                        part,
                        okeys,
                        args,
                        json,
                        passes,
                    },
                    acc: def.new_window_aggregate(*coll, start_moves)?,
                    out,
                    wi,
                    avail: 1,
                    newest: None,
                    start: 0,
                    current: 0,
                    end: 0,
                    start_count: 0,
                    end_count: 0,
                };
                return walk.run();
            }
        }
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
                                None | Some(FrameExclude::NoOthers) => None,
                                Some(FrameExclude::CurrentRow) => Some((pos, pos, None)),
                                Some(FrameExclude::Group) => {
                                    Some((peers.first[pos], peers.last[pos], None))
                                }
                                Some(FrameExclude::Ties) => {
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
                            .next_back()
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
                        // A frame with EXCLUDE (the others are walked above): SQLite
                        // aggregates each row's frame afresh and finalizes it.
                        WinKind::Agg {
                            def,
                            distinct,
                            coll,
                        } => {
                            let mut acc = def.new_aggregate(*distinct, *coll, &[])?;
                            for k in in_frame() {
                                let r = part[k as usize];
                                if !passes_filter(r) {
                                    continue;
                                }
                                match json.get(r) {
                                    Some(j) => acc.step_subtyped(&args[r], j)?,
                                    None => acc.step(&args[r])?,
                                }
                            }
                            acc.finalize()?
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

/// What a `FrameWalk` reads of the partition's rows: `part` maps partition positions to
/// row indexes, the other slices are indexed by row (`WindowInputs`).
struct FrameRows<'a> {
    part: &'a [usize],
    okeys: &'a [Vec<Value>],
    args: &'a [Vec<Value>],
    json: &'a [Vec<bool>],
    passes: &'a [bool],
}

/// An operation of SQLite's window program (window.c `windowCodeOp`), on the row under
/// its cursor: xStep of the row at `end`, xInverse of the row at `start`, or the result
/// of the row at `current`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum WalkOp {
    Step,
    Inverse,
    Return,
}

/// What holds an operation back (`regCountdown`): the start's or the end's offset, in rows
/// or groups still to skip (`OP_IfPos`), or for RANGE until the range test holds; `No`
/// for an edge without an offset.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Countdown {
    No,
    Start,
    End,
}

/// A comparison of `windowCodeRangeTest`.
#[derive(Clone, Copy)]
enum RangeCmp {
    Ge,
    Gt,
    Le,
    Lt,
}

/// An aggregate window call over one partition, computed as SQLite's VDBE program for
/// its frame computes it (window.c `sqlite3WindowCodeStep`, whose comment lists the
/// program per frame kind): three cursors walk the partition in window order, `end`
/// stepping rows into the accumulator as they enter frames, `start` inverting them as
/// they leave, `current` taking each row's value (xValue) between the two. The
/// operations come in SQLite's order, as the partition's rows arrive one by one and then
/// at its end (the "flush"), because the results depend on it: a compensated sum rounds
/// differently, group_concat's separator bookkeeping drifts, min()/max() keep the latest
/// of equal values (`aggregate::new_window_aggregate`). Each row is stepped and inverted
/// at most once: O(rows), O(rows log frame) for min()/max().
///
/// Invariant: an operation only reaches rows already read (`avail`); the main loop never
/// steps the newest row of a RANGE frame with both edges on one side.
struct FrameWalk<'a> {
    spec: &'a FrameSpec,
    peers: &'a Peers,
    /// The window's first ORDER BY term (RANGE offsets measure its value).
    term: Option<&'a (CExpr, bool, bool, Collation)>,
    rows: FrameRows<'a>,
    acc: Box<dyn crate::func::aggregate::Aggregate>,
    out: &'a mut [Vec<Value>],
    /// The window call's column in `out`.
    wi: usize,
    /// How many of the partition's rows SQLite has read: cursors stop there (EOF).
    avail: usize,
    /// While rows are being read, the newest one (`regRowid`).
    newest: Option<usize>,
    start: usize,
    current: usize,
    end: usize,
    /// ROWS and GROUPS: the rows or groups each edge still lets pass before its
    /// operations run (`regStart`, `regEnd`).
    start_count: i64,
    end_count: i64,
}

impl FrameWalk<'_> {
    fn run(&mut self) -> Result<()> {
        let len = self.rows.part.len();
        let units = self.spec.units;
        let count = |e: &Edge| match e {
            Edge::Preceding(Offset::Count(k)) | Edge::Following(Offset::Count(k)) => Some(*k),
            _ => None,
        };
        let (start_k, end_k) = (count(&self.spec.start), count(&self.spec.end));
        // ROWS and GROUPS frames with both edges PRECEDING, or both FOLLOWING, in the
        // wrong order are empty for every row: SQLite returns each row as it arrives, from
        // an accumulator that saw nothing.
        let always_empty = match (&self.spec.start, &self.spec.end) {
            (Edge::Preceding(_), Edge::Preceding(_)) => end_k > start_k,
            (Edge::Following(_), Edge::Following(_)) => end_k < start_k,
            _ => false,
        };
        if units != FrameUnits::Range && always_empty {
            let v = self.acc.value()?;
            for pos in 0..len {
                self.out[self.rows.part[pos]][self.wi] = v.clone();
            }
            return Ok(());
        }
        self.start_count = start_k.unwrap_or(0);
        self.end_count = end_k.unwrap_or(0);
        let start_following = matches!(self.spec.start, Edge::Following(_));
        if units != FrameUnits::Range && start_following {
            if let Some(e) = end_k {
                // Counted from the end: the start's rows trail it by the difference.
                self.start_count = e - self.start_count;
            }
        }
        let end_preceding = matches!(self.spec.end, Edge::Preceding(_));
        let end_unbounded = matches!(self.spec.end, Edge::UnboundedFollowing);
        let end_offset = !matches!(self.spec.end, Edge::CurrentRow) && !end_unbounded;
        // RANGE n PRECEDING AND m PRECEDING inverts before it returns the row.
        let rps = units == FrameUnits::Range && matches!(self.spec.start, Edge::Preceding(_));
        use WalkOp::*;
        // The main loop: a new row is read (GROUPS and RANGE act on a new peer group only).
        for i in 1..len {
            self.avail = i + 1;
            self.newest = Some(i);
            if units != FrameUnits::Rows && self.peers.first[i] != i {
                continue;
            }
            if start_following {
                self.op(Step, Countdown::No, false)?;
                if !end_unbounded {
                    if units == FrameUnits::Range {
                        while !self.range_test(RangeCmp::Ge, self.current, true, self.end) {
                            self.op(Inverse, Countdown::Start, false)?;
                            self.op(Return, Countdown::No, false)?;
                        }
                    } else {
                        self.op(Return, Countdown::End, false)?;
                        self.op(Inverse, Countdown::Start, false)?;
                    }
                }
            } else if end_preceding {
                self.op(Step, Countdown::End, false)?;
                if rps {
                    self.op(Inverse, Countdown::Start, false)?;
                }
                self.op(Return, Countdown::No, false)?;
                if !rps {
                    self.op(Inverse, Countdown::Start, false)?;
                }
            } else {
                self.op(Step, Countdown::No, false)?;
                if !end_unbounded {
                    if units == FrameUnits::Range {
                        loop {
                            if end_offset
                                && self.range_test(RangeCmp::Ge, self.current, true, self.end)
                            {
                                break;
                            }
                            self.op(Return, Countdown::No, false)?;
                            self.op(Inverse, Countdown::Start, false)?;
                            if !end_offset {
                                break;
                            }
                        }
                    } else if end_offset && self.end_count > 0 {
                        self.end_count -= 1;
                    } else {
                        self.op(Return, Countdown::No, false)?;
                        self.op(Inverse, Countdown::Start, false)?;
                    }
                }
            }
        }
        // The flush, once the partition's last row is read.
        self.avail = len;
        self.newest = None;
        if end_preceding {
            self.op(Step, Countdown::End, false)?;
            if rps {
                self.op(Inverse, Countdown::Start, false)?;
            }
            self.op(Return, Countdown::No, false)?;
        } else if start_following {
            self.op(Step, Countdown::No, false)?;
            // Returns rows and inverts the start's until a cursor runs off the partition:
            // `true` when it was `start`, so the rest of the rows are still to return.
            let inverts_ran_out = loop {
                if units == FrameUnits::Range {
                    if self.op(Inverse, Countdown::Start, true)? {
                        break true;
                    }
                    if self.op(Return, Countdown::No, true)? {
                        break false;
                    }
                } else if end_unbounded {
                    if self.op(Return, Countdown::Start, true)? {
                        break false;
                    }
                    if self.op(Inverse, Countdown::No, true)? {
                        break true;
                    }
                } else {
                    if self.op(Return, Countdown::End, true)? {
                        break false;
                    }
                    if self.op(Inverse, Countdown::Start, true)? {
                        break true;
                    }
                }
            };
            if inverts_ran_out {
                while !self.op(Return, Countdown::No, true)? {}
            }
        } else {
            self.op(Step, Countdown::No, false)?;
            while !self.op(Return, Countdown::No, true)? {
                self.op(Inverse, Countdown::Start, false)?;
            }
        }
        Ok(())
    }

    /// One operation (`windowCodeOp`): unless its countdown holds it back, it acts on the
    /// row under its cursor and moves the cursor on, over the row's whole peer group for
    /// GROUPS and RANGE, and for RANGE again while the range test allows. Returns whether
    /// the cursor ran off the partition, when the caller asked (`jump_on_eof`).
    fn op(&mut self, op: WalkOp, countdown: Countdown, jump_on_eof: bool) -> Result<bool> {
        if op == WalkOp::Inverse && matches!(self.spec.start, Edge::UnboundedPreceding) {
            return Ok(false);
        }
        let has_offset = |e: &Edge| matches!(e, Edge::Preceding(_) | Edge::Following(_));
        let counted = match countdown {
            Countdown::No => false,
            Countdown::Start => has_offset(&self.spec.start),
            Countdown::End => has_offset(&self.spec.end),
        };
        let range = counted && self.spec.units == FrameUnits::Range;
        // SQLite keeps a RANGE frame with both edges on one side from inverting past the
        // end cursor, and from stepping the newest row before its group is complete.
        let guarded = range
            && matches!(
                (&self.spec.start, &self.spec.end),
                (Edge::Preceding(_), Edge::Preceding(_)) | (Edge::Following(_), Edge::Following(_))
            );
        loop {
            if range {
                let done = match op {
                    WalkOp::Inverse if matches!(self.spec.start, Edge::Following(_)) => {
                        self.range_test(RangeCmp::Le, self.current, false, self.start)
                    }
                    WalkOp::Inverse => {
                        self.range_test(RangeCmp::Ge, self.start, false, self.current)
                    }
                    _ => self.range_test(RangeCmp::Gt, self.end, true, self.current),
                };
                if done {
                    return Ok(false);
                }
            } else if counted {
                let left = match countdown {
                    Countdown::Start => &mut self.start_count,
                    _ => &mut self.end_count,
                };
                if *left > 0 {
                    *left -= 1;
                    return Ok(false);
                }
            }
            let value = match op {
                WalkOp::Return => Some(self.acc.value()?),
                _ => None,
            };
            loop {
                if guarded {
                    let stop = match op {
                        WalkOp::Inverse => self.start >= self.end,
                        _ => self.newest.is_some_and(|n| self.end >= n),
                    };
                    if stop {
                        return Ok(false);
                    }
                }
                let pos = match op {
                    WalkOp::Step => self.end,
                    WalkOp::Inverse => self.start,
                    WalkOp::Return => self.current,
                };
                if pos >= self.avail {
                    return err("internal error: a window frame cursor ran past its rows");
                }
                let row = self.rows.part[pos];
                let enters = self.rows.passes.get(row).copied().unwrap_or(true);
                match (op, &value) {
                    (WalkOp::Return, Some(v)) => self.out[row][self.wi] = v.clone(),
                    (WalkOp::Step, _) if enters => match self.rows.json.get(row) {
                        Some(j) => self.acc.step_subtyped(&self.rows.args[row], j)?,
                        None => self.acc.step(&self.rows.args[row])?,
                    },
                    (WalkOp::Inverse, _) if enters => self.acc.inverse(&self.rows.args[row])?,
                    _ => {}
                }
                let cursor = match op {
                    WalkOp::Step => &mut self.end,
                    WalkOp::Inverse => &mut self.start,
                    WalkOp::Return => &mut self.current,
                };
                *cursor += 1;
                let next = *cursor;
                if next >= self.avail {
                    return Ok(jump_on_eof);
                }
                if self.spec.units == FrameUnits::Rows
                    || self.peers.group[next] != self.peers.group[next - 1]
                {
                    break;
                }
            }
            if !range {
                return Ok(false);
            }
        }
    }

    /// `windowCodeRangeTest`: whether the ORDER BY value at `a`, moved by the start's
    /// offset (the end's with `end_offset`) toward the frame's far side, compares to the
    /// value at `b` as `cmp` asks. DESC flips the comparison and subtracts; a value that is
    /// not a number is not moved; NULLs compare as equal to each other and smallest, or
    /// largest where the term puts them at the other end than its direction's default.
    fn range_test(&self, cmp: RangeCmp, a: usize, end_offset: bool, b: usize) -> bool {
        let distance = match if end_offset {
            &self.spec.end
        } else {
            &self.spec.start
        } {
            Edge::Preceding(Offset::Distance(d)) | Edge::Following(Offset::Distance(d)) => d,
            _ => return false,
        };
        let Some((_, desc, nulls_first, coll)) = self.term else {
            return false;
        };
        // A cursor past the last row reads NULL.
        let key = |pos: usize| match self.rows.part.get(pos) {
            Some(&r) if pos < self.avail => &self.rows.okeys[r][0],
            _ => &Value::Null,
        };
        let (x, y) = (key(a), key(b));
        let cmp = match (*desc, cmp) {
            (false, c) => c,
            (true, RangeCmp::Ge) => RangeCmp::Le,
            (true, RangeCmp::Gt) => RangeCmp::Lt,
            (true, RangeCmp::Le) => RangeCmp::Ge,
            (true, RangeCmp::Lt) => RangeCmp::Gt,
        };
        let holds = |o: Ordering| match cmp {
            RangeCmp::Ge => o.is_ge(),
            RangeCmp::Gt => o.is_gt(),
            RangeCmp::Le => o.is_le(),
            RangeCmp::Lt => o.is_lt(),
        };
        if nulls_first == desc {
            match (x.is_null(), y.is_null()) {
                (true, _) => {
                    return holds(if y.is_null() {
                        Ordering::Equal
                    } else {
                        Ordering::Greater
                    })
                }
                (false, true) => return holds(Ordering::Less),
                _ => {}
            }
        }
        let moved = match x {
            Value::Integer(_) | Value::Real(_) => {
                // Already past `y` before the offset is added (or subtracted): SQLite
                // tests this first, so an infinite sum that is NaN does not undo it.
                let first = matches!((cmp, *desc), (RangeCmp::Ge, false) | (RangeCmp::Le, true));
                if first && !y.is_null() && holds(x.compare(y, *coll)) {
                    return true;
                }
                let op = if *desc { ArithOp::Sub } else { ArithOp::Add };
                value::arith(op, x, distance)
            }
            other => other.clone(),
        };
        holds(match (moved.is_null(), y.is_null()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            _ => moved.compare(y, *coll),
        })
    }
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
