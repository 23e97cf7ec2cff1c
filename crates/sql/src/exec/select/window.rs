//! Window functions: every window call of a query computed over the rows reaching the
//! output, partition by partition (lang_windowfunc.html).

use super::*;

impl Exec<'_> {
    /// Computes every window call for the rows reaching the output: rows are sorted by
    /// partition then window order, each partition is walked in order, and each row gets
    /// its value from its partition, peers and frame (lang_windowfunc.html). Aggregates over a
    /// frame are recomputed per row (O(rows x frame)).
    pub(super) fn compute_windows(
        &self,
        core: &CorePlan,
        rows: &[(Row, Vec<Value>)],
        parent: Option<&Frame>,
    ) -> Result<Vec<Vec<Value>>> {
        let n = rows.len();
        let mut out = vec![vec![Value::Null; core.windows.len()]; n];
        let agg_json = super::super::eval::agg_subtypes(&core.aggs);
        for (wi, w) in core.windows.iter().enumerate() {
            let mut pkeys = Vec::with_capacity(n);
            let mut okeys = Vec::with_capacity(n);
            let mut args = Vec::with_capacity(n);
            // json_group_array/json_group_object read their arguments' JSON subtype
            // (`Aggregate::step_subtyped`): kept per row beside the arguments.
            let subtyped = matches!(&w.kind, WinKind::Agg { def, .. } if def.reads_json_subtype());
            let mut json: Vec<Vec<bool>> = Vec::new();
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
                    w, part, &okeys, &args, &json, rows, parent, wi, &mut out, &order_cmp,
                )?;
                start = end;
            }
        }
        Ok(out)
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn window_partition(
        &self,
        w: &WinCall,
        part: &[usize],
        okeys: &[Vec<Value>],
        args: &[Vec<Value>],
        // Per row, its arguments' JSON subtypes (empty unless the call reads them).
        json: &[Vec<bool>],
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
                    agg_json: &[],
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
                                    running = Some(def.new_aggregate(*distinct, *coll, &[])?);
                                }
                                if let Some(acc) = running.as_mut() {
                                    while (running_len as i64) <= fe {
                                        let r = part[running_len];
                                        match json.get(r) {
                                            Some(j) => acc.step_subtyped(&args[r], j)?,
                                            None => acc.step(&args[r])?,
                                        }
                                        running_len += 1;
                                    }
                                    acc.value()?
                                } else {
                                    Value::Null
                                }
                            } else {
                                let mut acc = def.new_aggregate(*distinct, *coll, &[])?;
                                let mut k = fs;
                                while k <= fe {
                                    let r = part[k as usize];
                                    match json.get(r) {
                                        Some(j) => acc.step_subtyped(&args[r], j)?,
                                        None => acc.step(&args[r])?,
                                    }
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
}
