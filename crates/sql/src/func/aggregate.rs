//! Aggregate functions (lang_aggfunc.html) behind one accumulator API.
//!
//! The executor creates one accumulator per group with [`new_aggregate`], calls
//! [`Aggregate::step`] once per input row with the evaluated arguments, and
//! [`Aggregate::finalize`] once at the end of the group (an empty group still finalizes:
//! count → 0, sum → NULL, total → 0.0). DISTINCT is a wrapper that drops argument values
//! already seen, comparing them as SQLite's ephemeral DISTINCT index does (sort-order
//! equality under the argument's collation, so 1 and 1.0 are the same value).
//!
//! sum/total/avg reproduce SQLite 3.50's arithmetic exactly: integer accumulation until
//! the first non-integer input or overflow, then Kahan-Babuska-Neumaier compensated
//! summation of reals; sum() reports "integer overflow" only when every input was an
//! integer (a later real input clears the condition, as in SQLite).

// `Option::is_none_or` is newer than the workspace's minimum Rust version (1.80).
#![allow(clippy::unnecessary_map_or)]

use super::AggKind;
use crate::collation::Collation;
use crate::exec::select::sort_cmp;
use crate::plan::SortKey;
use crate::value::{Affinity, CollatedKey, Result, SqlError, Value, MAX_LENGTH_BYTES};
use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::sync::Arc;

/// One group's accumulator.
pub trait Aggregate: Send {
    /// Adds one row's arguments (already evaluated; for count(*) the slice is empty).
    fn step(&mut self, args: &[Value]) -> Result<()>;
    /// `step` with SQLite's JSON subtype of each argument (`json[i]`: argument `i` came
    /// straight from a JSON function), for the aggregates that read it
    /// (`FuncDef::reads_json_subtype`): json_group_array(json('[1]')) nests the array.
    fn step_subtyped(&mut self, args: &[Value], json: &[bool]) -> Result<()> {
        let _ = json;
        self.step(args)
    }
    /// The group's result. Called once, after the last step.
    fn finalize(&mut self) -> Result<Value>;
    /// The result so far, without ending the group (`xValue`): window aggregates over
    /// growing frames step once per row and read the value at each row.
    fn value(&self) -> Result<Value>;
    /// SQLite's "magnet" for bare columns (sqlite3SkipAccumulatorLoad): after a `step` of
    /// min()/max(), `Some(true)` when the row became the group's new minimum/maximum (or
    /// the accumulator was still empty), `Some(false)` when it did not; `None` when the
    /// last step never reached a min()/max() accumulator (another aggregate, or a DISTINCT
    /// duplicate), so the caller's magnet keeps its previous state.
    fn last_step_magnet(&self) -> Option<bool> {
        None
    }
}

/// A fresh accumulator for `kind`; `distinct` for `agg(DISTINCT x)`; `collation` is the
/// argument's collation (min/max ordering and DISTINCT equality).
pub fn new_aggregate(
    kind: AggKind,
    distinct: bool,
    collation: Collation,
    order: &[SortKey],
) -> Box<dyn Aggregate> {
    let inner: Box<dyn Aggregate> = match kind {
        AggKind::Count => Box::new(Count { n: 0 }),
        AggKind::Sum => Box::new(Sum::new(SumResult::Sum)),
        AggKind::Total => Box::new(Sum::new(SumResult::Total)),
        AggKind::Avg => Box::new(Sum::new(SumResult::Avg)),
        AggKind::Min => Box::new(MinMax {
            best: None,
            max: false,
            collation,
            hit: None,
        }),
        AggKind::Max => Box::new(MinMax {
            best: None,
            max: true,
            collation,
            hit: None,
        }),
        AggKind::GroupConcat => Box::new(GroupConcat { acc: None }),
        AggKind::JsonGroupArray => Box::new(super::json::GroupArray::new(false)),
        AggKind::JsonGroupObject => Box::new(super::json::GroupObject::new(false)),
        AggKind::JsonbGroupArray => Box::new(super::json::GroupArray::new(true)),
        AggKind::JsonbGroupObject => Box::new(super::json::GroupObject::new(true)),
    };
    // DISTINCT drops repeats in the order rows arrive, before ORDER BY sorts what is
    // left (SQLite: `group_concat(DISTINCT x ORDER BY y)` keeps each x's first row).
    // min() and max() do not depend on the order of their rows: SQLite ignores their
    // ORDER BY, so their bare-column row is still the one holding the result, in arrival
    // order (the keys stay in the call, which keeps it distinct from a call without them).
    let inner: Box<dyn Aggregate> = match order {
        [] => inner,
        _ if matches!(kind, AggKind::Min | AggKind::Max) => inner,
        keys => Box::new(Ordered {
            inner,
            keys: keys.to_vec(),
            rows: Vec::new(),
        }),
    };
    if distinct {
        Box::new(Distinct {
            seen: BTreeSet::new(),
            collation,
            inner,
            last_duplicate: false,
            seen_null: false,
        })
    } else {
        inner
    }
}

struct Count {
    n: i64,
}

impl Aggregate for Count {
    fn step(&mut self, args: &[Value]) -> Result<()> {
        if args.first().map_or(true, |v| !v.is_null()) {
            self.n += 1;
        }
        Ok(())
    }
    fn finalize(&mut self) -> Result<Value> {
        self.value()
    }
    fn value(&self) -> Result<Value> {
        Ok(Value::Integer(self.n))
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum SumResult {
    Sum,
    Total,
    Avg,
}

/// SQLite's SumCtx.
struct Sum {
    what: SumResult,
    r_sum: f64,
    r_err: f64,
    i_sum: i64,
    cnt: i64,
    approx: bool,
    overflow: bool,
}

impl Sum {
    fn new(what: SumResult) -> Self {
        Sum {
            what,
            r_sum: 0.0,
            r_err: 0.0,
            i_sum: 0,
            cnt: 0,
            approx: false,
            overflow: false,
        }
    }

    fn kbn_step(&mut self, r: f64) {
        let s = self.r_sum;
        let t = s + r;
        if s.abs() > r.abs() {
            self.r_err += (s - t) + r;
        } else {
            self.r_err += (r - t) + s;
        }
        self.r_sum = t;
    }

    /// Adds a possibly huge integer without losing its low bits to f64 rounding.
    fn kbn_step_i64(&mut self, v: i64) {
        if !(-4503599627370495..=4503599627370495).contains(&v) {
            let small = v % 16384;
            self.kbn_step((v - small) as f64);
            self.kbn_step(small as f64);
        } else {
            self.kbn_step(v as f64);
        }
    }

    fn kbn_init(&mut self, v: i64) {
        if !(-4503599627370495..=4503599627370495).contains(&v) {
            let small = v % 16384;
            self.r_sum = (v - small) as f64;
            self.r_err = small as f64;
        } else {
            self.r_sum = v as f64;
            self.r_err = 0.0;
        }
    }

    fn real_total(&self) -> f64 {
        if self.approx {
            // sqlite3IsOverflow: an infinite or NaN error term is dropped.
            if self.r_err.is_finite() {
                self.r_sum + self.r_err
            } else {
                self.r_sum
            }
        } else {
            self.i_sum as f64
        }
    }
}

impl Aggregate for Sum {
    fn step(&mut self, args: &[Value]) -> Result<()> {
        let Some(v) = args.first() else {
            return Ok(());
        };
        // sqlite3_value_numeric_type: numeric-looking text counts as a number. Numbers are
        // read where they lie: cloning each argument to convert it cost ~40 instructions a
        // row of fp speedtest1 test 130's sum() (callgrind).
        let converted;
        let v = match v {
            Value::Null => return Ok(()),
            Value::Integer(_) | Value::Real(_) => v,
            Value::Text(_) | Value::Blob(_) => {
                converted = v.clone().apply_comparison_affinity(Some(Affinity::Numeric));
                &converted
            }
        };
        self.cnt += 1;
        if !self.approx {
            match *v {
                Value::Integer(i) => match self.i_sum.checked_add(i) {
                    Some(s) => self.i_sum = s,
                    None => {
                        self.overflow = true;
                        self.kbn_init(self.i_sum);
                        self.approx = true;
                        self.kbn_step_i64(i);
                    }
                },
                ref other => {
                    self.kbn_init(self.i_sum);
                    self.approx = true;
                    self.kbn_step(other.to_f64());
                }
            }
        } else {
            match *v {
                Value::Integer(i) => self.kbn_step_i64(i),
                ref other => {
                    self.overflow = false;
                    self.kbn_step(other.to_f64());
                }
            }
        }
        Ok(())
    }

    fn finalize(&mut self) -> Result<Value> {
        self.value()
    }

    fn value(&self) -> Result<Value> {
        match self.what {
            SumResult::Sum => {
                if self.cnt == 0 {
                    Ok(Value::Null)
                } else if self.approx {
                    if self.overflow {
                        Err(SqlError::IntegerOverflow)
                    } else {
                        Ok(Value::real(self.real_total()))
                    }
                } else {
                    Ok(Value::Integer(self.i_sum))
                }
            }
            SumResult::Total => Ok(Value::real(self.real_total())),
            SumResult::Avg => {
                if self.cnt == 0 {
                    Ok(Value::Null)
                } else {
                    Ok(Value::real(self.real_total() / self.cnt as f64))
                }
            }
        }
    }
}

struct MinMax {
    best: Option<Value>,
    max: bool,
    collation: Collation,
    /// The last step's magnet (see [`Aggregate::last_step_magnet`]): a NULL argument or a
    /// value no better than the best so far is a miss once a best exists; ties miss, so
    /// the first row holding the extreme value keeps it (minmaxStep in SQLite's func.c).
    hit: Option<bool>,
}

impl Aggregate for MinMax {
    fn step(&mut self, args: &[Value]) -> Result<()> {
        let Some(v) = args.first() else {
            return Ok(());
        };
        if v.is_null() {
            self.hit = Some(self.best.is_none());
            return Ok(());
        }
        let replace = match &self.best {
            None => true,
            Some(b) => {
                let c = b.compare(v, self.collation);
                if self.max {
                    c == Ordering::Less
                } else {
                    c == Ordering::Greater
                }
            }
        };
        if replace {
            self.best = Some(v.clone());
        }
        self.hit = Some(replace);
        Ok(())
    }
    fn finalize(&mut self) -> Result<Value> {
        Ok(self.best.take().unwrap_or(Value::Null))
    }
    fn value(&self) -> Result<Value> {
        Ok(self.best.clone().unwrap_or(Value::Null))
    }
    fn last_step_magnet(&self) -> Option<bool> {
        self.hit
    }
}

/// group_concat(X [, SEP]) and string_agg(X, SEP): the separator of each row goes before
/// that row's value (the first row's separator is unused); the default separator is ",".
struct GroupConcat {
    acc: Option<String>,
}

impl Aggregate for GroupConcat {
    fn step(&mut self, args: &[Value]) -> Result<()> {
        let Some(v) = args.first().filter(|v| !v.is_null()) else {
            return Ok(());
        };
        // Numbers are written straight into the accumulator (`to_text` built a `String`
        // per row first), which starts with room for a few values (growing from empty
        // reallocated ~5 times for a dozen small integers): a step went from ~480 to ~300
        // instructions a row of group_concat(a) over integers (callgrind, speedtest1 160).
        let Some(acc) = &mut self.acc else {
            let mut acc = String::with_capacity(64);
            v.push_text(&mut acc);
            self.acc = Some(acc);
            return Ok(());
        };
        // Text and blobs longer than the limit fail before they are copied; the text
        // of a number (at most ~25 bytes) or of a blob (lossy UTF-8, possibly longer
        // than its bytes) is measured once appended.
        let stored_len = |v: &Value| match v {
            Value::Text(s) => s.len(),
            Value::Blob(b) => b.len(),
            _ => 0,
        };
        let sep = args.get(1);
        let before = acc.len();
        let known = before
            .saturating_add(sep.map_or(1, stored_len))
            .saturating_add(stored_len(v));
        if known > MAX_LENGTH_BYTES {
            return Err(SqlError::TooBig);
        }
        match sep {
            None => acc.push(','),
            Some(s) => s.push_text(acc),
        }
        v.push_text(acc);
        if acc.len() > MAX_LENGTH_BYTES {
            acc.truncate(before);
            return Err(SqlError::TooBig);
        }
        Ok(())
    }
    fn finalize(&mut self) -> Result<Value> {
        Ok(match self.acc.take() {
            None => Value::Null,
            Some(s) => Value::Text(Arc::from(s)),
        })
    }
    fn value(&self) -> Result<Value> {
        Ok(match self.acc.as_deref() {
            None => Value::Null,
            // SQLite's groupConcatValue returns `"", 1` for an empty accumulation: a
            // one-byte text holding NUL. Reproduced, since window results show it.
            Some("") => Value::text("\0"),
            Some(s) => Value::text(s),
        })
    }
}

struct Distinct {
    seen: BTreeSet<CollatedKey>,
    collation: Collation,
    inner: Box<dyn Aggregate>,
    /// Whether the last step dropped its argument as already seen.
    last_duplicate: bool,
    seen_null: bool,
}

impl Distinct {
    /// Whether the row's argument is new (then the inner aggregate steps).
    fn admits(&mut self, args: &[Value]) -> bool {
        self.last_duplicate = false;
        let Some(v) = args.first() else {
            return true;
        };
        let new = if v.is_null() {
            // Every built-in aggregate ignores NULL, but SQLite's DISTINCT table holds one
            // NULL like any value: a second NULL is a duplicate, which shows in the
            // bare-column magnet of min()/max().
            !std::mem::replace(&mut self.seen_null, true)
        } else {
            self.seen
                .insert(CollatedKey::new(v.clone(), self.collation))
        };
        self.last_duplicate = !new;
        new
    }
}

impl Aggregate for Distinct {
    fn step(&mut self, args: &[Value]) -> Result<()> {
        match self.admits(args) {
            true => self.inner.step(args),
            false => Ok(()),
        }
    }
    fn step_subtyped(&mut self, args: &[Value], json: &[bool]) -> Result<()> {
        match self.admits(args) {
            true => self.inner.step_subtyped(args, json),
            false => Ok(()),
        }
    }
    fn last_step_magnet(&self) -> Option<bool> {
        if self.last_duplicate {
            None
        } else {
            self.inner.last_step_magnet()
        }
    }
    fn finalize(&mut self) -> Result<Value> {
        self.inner.finalize()
    }
    fn value(&self) -> Result<Value> {
        self.inner.value()
    }
}

/// `agg(args ORDER BY keys)`: each row's arguments and sort keys are kept (`args` ends
/// with the keys, `AggCall::order`), and the group's end feeds the inner aggregate its
/// arguments in key order; rows with equal keys keep their arrival order, as SQLite's.
struct Ordered {
    inner: Box<dyn Aggregate>,
    keys: Vec<SortKey>,
    /// Each row's arguments and keys, with the JSON subtypes of its arguments when it came
    /// through `step_subtyped`.
    rows: Vec<(Vec<Value>, Option<Vec<bool>>)>,
}

impl Ordered {
    /// How many leading values of a row are the function's own arguments.
    fn nargs(&self) -> usize {
        self.keys.iter().map(|k| k.idx).min().unwrap_or(0)
    }
}

impl Aggregate for Ordered {
    fn step(&mut self, args: &[Value]) -> Result<()> {
        self.rows.push((args.to_vec(), None));
        Ok(())
    }

    fn step_subtyped(&mut self, args: &[Value], json: &[bool]) -> Result<()> {
        self.rows.push((args.to_vec(), Some(json.to_vec())));
        Ok(())
    }

    fn finalize(&mut self) -> Result<Value> {
        let mut rows = std::mem::take(&mut self.rows);
        // A stable sort: ties stay in arrival order.
        rows.sort_by(|a, b| sort_cmp(&a.0, &b.0, &self.keys));
        let n = self.nargs();
        for (r, json) in &rows {
            match json {
                Some(json) => self.inner.step_subtyped(&r[..n], json)?,
                None => self.inner.step(&r[..n])?,
            }
        }
        self.inner.finalize()
    }

    fn value(&self) -> Result<Value> {
        Err(SqlError::msg(
            "internal error: an ordered aggregate has no running value",
        ))
    }
}
