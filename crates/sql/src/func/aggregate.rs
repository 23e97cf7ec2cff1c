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
//!
//! Window frames whose start moves take rows back out with [`Aggregate::inverse`]
//! (SQLite's xInverse): count, sum/total/avg, group_concat/string_agg and the JSON group
//! aggregates port SQLite's inverse functions (func.c, json.c) state for state, quirks
//! included, since results depend on the order of steps and inverses (a compensated sum's
//! rounding, group_concat's separator bookkeeping). min() and max() have no inverse in
//! SQLite either: over such frames they keep an ordered index of the frame's values
//! ([`new_window_aggregate`]).

// `Option::is_none_or` is newer than the workspace's minimum Rust version (1.80).
#![allow(clippy::unnecessary_map_or)]

use super::AggKind;
use crate::collation::Collation;
use crate::exec::select::sort_cmp;
use crate::plan::SortKey;
use crate::value::{Affinity, CollatedKey, Result, SqlError, Value, MAX_LENGTH_BYTES};
use std::borrow::Cow;
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
    /// The result so far, without ending the group (`xValue`): window aggregates step
    /// rows as they enter the frame and read the value at each row.
    fn value(&self) -> Result<Value>;
    /// Takes back out the oldest row still accumulated (`xInverse`), given the arguments
    /// it was stepped with: window frames whose start moves call it as rows leave the
    /// frame, in SQLite's order (module docs). Only the aggregates SQLite gives an inverse
    /// implement it; the window executor never inverts another.
    fn inverse(&mut self, args: &[Value]) -> Result<()> {
        let _ = args;
        Err(SqlError::msg(
            "internal error: the aggregate has no inverse",
        ))
    }
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
        AggKind::GroupConcat => Box::new(GroupConcat {
            acc: None,
            n_accum: 0,
            first_sep_len: 0,
            sep_lens: None,
        }),
        AggKind::JsonGroupArray => Box::new(super::json::GroupArray::new(false)),
        AggKind::JsonGroupObject => Box::new(super::json::GroupObject::new(false)),
        AggKind::JsonbGroupArray => Box::new(super::json::GroupArray::new(true)),
        AggKind::JsonbGroupObject => Box::new(super::json::GroupObject::new(true)),
    };
    wrap_aggregate(
        inner,
        matches!(kind, AggKind::Min | AggKind::Max),
        distinct,
        collation,
        order,
    )
}

/// Puts an accumulator behind DISTINCT and `agg(x ORDER BY y)` as the call asks:
/// `min_max` for min() and max(), which ignore ORDER BY.
pub fn wrap_aggregate(
    inner: Box<dyn Aggregate>,
    min_max: bool,
    distinct: bool,
    collation: Collation,
    order: &[SortKey],
) -> Box<dyn Aggregate> {
    // DISTINCT drops repeats in the order rows arrive, before ORDER BY sorts what is
    // left (SQLite: `group_concat(DISTINCT x ORDER BY y)` keeps each x's first row).
    // min() and max() do not depend on the order of their rows: SQLite ignores their
    // ORDER BY, so their bare-column row is still the one holding the result, in arrival
    // order (the keys stay in the call, which keeps it distinct from a call without them).
    let inner: Box<dyn Aggregate> = match order {
        [] => inner,
        _ if min_max => inner,
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

/// A window aggregate's accumulator for a frame of `kind` (window.rs): as
/// [`new_aggregate`], except that min() and max() over a frame whose start moves
/// (`start_moves`: not UNBOUNDED PRECEDING) keep the frame's values in an ordered index,
/// as SQLite does (window.c, SQLITE_FUNC_MINMAX): they have no inverse.
pub fn new_window_aggregate(
    kind: AggKind,
    collation: Collation,
    start_moves: bool,
) -> Box<dyn Aggregate> {
    match kind {
        AggKind::Min | AggKind::Max if start_moves => Box::new(FrameMinMax {
            index: BTreeSet::new(),
            desc: kind == AggKind::Min,
            collation,
            arrivals: 0,
        }),
        _ => new_aggregate(kind, false, collation, &[]),
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
    fn inverse(&mut self, args: &[Value]) -> Result<()> {
        if args.first().map_or(true, |v| !v.is_null()) {
            self.n -= 1;
        }
        Ok(())
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

/// sqlite3_value_numeric_type: numeric-looking text counts as a number; `None` for NULL.
/// Numbers are read where they lie: cloning each argument to convert it cost ~40
/// instructions a row of fp speedtest1 test 130's sum() (callgrind).
fn numeric_arg(v: &Value) -> Option<Cow<'_, Value>> {
    match v {
        Value::Null => None,
        Value::Integer(_) | Value::Real(_) => Some(Cow::Borrowed(v)),
        Value::Text(_) | Value::Blob(_) => Some(Cow::Owned(
            v.clone().apply_comparison_affinity(Some(Affinity::Numeric)),
        )),
    }
}

impl Aggregate for Sum {
    fn step(&mut self, args: &[Value]) -> Result<()> {
        let Some(v) = args.first().and_then(numeric_arg) else {
            return Ok(());
        };
        let v = v.as_ref();
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

    /// sumInverse: the integer sum is exact until it overflows (then the result is an
    /// overflow until a real arrives, and the compensated sum goes on from zero); once
    /// approximate, the value is added negated (i64::MIN as i64::MAX and 1).
    fn inverse(&mut self, args: &[Value]) -> Result<()> {
        let Some(v) = args.first().and_then(numeric_arg) else {
            return Ok(());
        };
        self.cnt -= 1;
        if !self.approx {
            // Only integers were stepped so far: an inverted row is one of them.
            match self.i_sum.checked_sub(v.to_i64()) {
                Some(s) => self.i_sum = s,
                None => {
                    self.overflow = true;
                    self.approx = true;
                }
            }
        } else {
            match *v {
                Value::Integer(i) if i != i64::MIN => self.kbn_step_i64(-i),
                Value::Integer(_) => {
                    self.kbn_step_i64(i64::MAX);
                    self.kbn_step_i64(1);
                }
                ref other => self.kbn_step(-other.to_f64()),
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

/// min()/max() over a window frame whose start moves: SQLite keeps the frame's non-NULL
/// values in an ephemeral index ordered by value (descending for min()) and then by
/// arrival, reads the last entry, and removes a leaving row's value by seeking the first
/// entry not before it (window.c, windowAggStep with SQLITE_FUNC_MINMAX). So among values
/// equal under the collation (1 and 1.0, 'a' and 'A' under NOCASE) the latest to arrive
/// is the result, where a plain min()/max() keeps the first.
struct FrameMinMax {
    index: BTreeSet<(RankedValue, u64)>,
    /// min(): values in descending order.
    desc: bool,
    collation: Collation,
    /// Values inserted so far: each entry's arrival number.
    arrivals: u64,
}

/// A value as `FrameMinMax`'s index orders it.
struct RankedValue {
    key: CollatedKey,
    desc: bool,
}

impl Ord for RankedValue {
    fn cmp(&self, other: &Self) -> Ordering {
        let o = self.key.cmp(&other.key);
        if self.desc {
            o.reverse()
        } else {
            o
        }
    }
}

impl PartialOrd for RankedValue {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for RankedValue {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for RankedValue {}

impl FrameMinMax {
    fn ranked(&self, v: &Value) -> RankedValue {
        RankedValue {
            key: CollatedKey::new(v.clone(), self.collation),
            desc: self.desc,
        }
    }
}

impl Aggregate for FrameMinMax {
    fn step(&mut self, args: &[Value]) -> Result<()> {
        let Some(v) = args.first().filter(|v| !v.is_null()) else {
            return Ok(());
        };
        self.arrivals += 1;
        self.index.insert((self.ranked(v), self.arrivals));
        Ok(())
    }
    fn inverse(&mut self, args: &[Value]) -> Result<()> {
        let Some(v) = args.first().filter(|v| !v.is_null()) else {
            return Ok(());
        };
        // Arrival numbers start at 1: the probe sorts before every entry of its value.
        let probe = (self.ranked(v), 0);
        let found = self
            .index
            .range(probe..)
            .next()
            .map(|(r, n)| (self.ranked(&r.key.value), *n));
        if let Some(k) = found {
            self.index.remove(&k);
        }
        Ok(())
    }
    fn finalize(&mut self) -> Result<Value> {
        self.value()
    }
    fn value(&self) -> Result<Value> {
        Ok(self
            .index
            .last()
            .map_or(Value::Null, |(r, _)| r.key.value.clone()))
    }
}

/// group_concat(X [, SEP]) and string_agg(X, SEP): the separator of each row goes before
/// that row's value (the first row's separator is unused); the default separator is ",".
///
/// The inverse is SQLite's groupConcatInverse, bookkeeping and all: it removes the first
/// value and the separator after it, counting the separator's length as the first row's
/// (unused) separator had it until a row brings a separator of another length
/// (`sep_lens` then records each one); a text emptied by inverses starts over without a
/// separator, and a frame of values that add no text reads as a one-byte NUL.
struct GroupConcat {
    /// The text; `None` until the first value and again once inverses emptied it (SQLite's
    /// `mxAlloc == 0`: the next value is a first term).
    acc: Option<String>,
    /// How many values are accumulated (`nAccum`).
    n_accum: usize,
    /// The first term's separator length (`nFirstSepLength`).
    first_sep_len: usize,
    /// The length of each separator in the text, once they differ (`pnSepLengths`).
    sep_lens: Option<Vec<usize>>,
}

/// The length of the text `push_text` appends for `v`.
fn text_len(v: &Value) -> usize {
    match v {
        Value::Null => 0,
        Value::Text(s) => s.len(),
        Value::Blob(b) => String::from_utf8_lossy(b).len(),
        _ => {
            let mut s = String::new();
            v.push_text(&mut s);
            s.len()
        }
    }
}

impl Aggregate for GroupConcat {
    fn step(&mut self, args: &[Value]) -> Result<()> {
        let Some(v) = args.first().filter(|v| !v.is_null()) else {
            return Ok(());
        };
        let sep = args.get(1);
        // Numbers are written straight into the accumulator (`to_text` built a `String`
        // per row first), which starts with room for a few values (growing from empty
        // reallocated ~5 times for a dozen small integers): a step went from ~480 to ~300
        // instructions a row of group_concat(a) over integers (callgrind, speedtest1 160).
        let Some(acc) = &mut self.acc else {
            let mut acc = String::with_capacity(64);
            v.push_text(&mut acc);
            self.acc = Some(acc);
            self.first_sep_len = sep.map_or(1, text_len);
            self.n_accum += 1;
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
        let sep_len = acc.len() - before;
        if sep_len != self.first_sep_len || self.sep_lens.is_some() {
            // The separators before this one were all the first term's length.
            let lens = self
                .sep_lens
                .get_or_insert_with(|| vec![self.first_sep_len; self.n_accum.saturating_sub(1)]);
            lens.resize(self.n_accum.saturating_sub(1), 0);
            lens.push(sep_len);
        }
        self.n_accum += 1;
        v.push_text(acc);
        if acc.len() > MAX_LENGTH_BYTES {
            acc.truncate(before);
            return Err(SqlError::TooBig);
        }
        Ok(())
    }
    fn inverse(&mut self, args: &[Value]) -> Result<()> {
        let Some(v) = args.first().filter(|v| !v.is_null()) else {
            return Ok(());
        };
        let mut remove = text_len(v);
        self.n_accum = self.n_accum.saturating_sub(1);
        match &mut self.sep_lens {
            Some(lens) if self.n_accum > 0 => {
                if !lens.is_empty() {
                    remove += lens.remove(0);
                }
            }
            Some(_) => {}
            // Removing the only value removes a separator too: harmlessly more than there is.
            None => remove += self.first_sep_len,
        }
        let Some(acc) = &mut self.acc else {
            return Ok(());
        };
        if remove >= acc.len() {
            acc.clear();
        } else if acc.is_char_boundary(remove) {
            acc.drain(..remove);
        } else {
            // The bookkeeping above can cut a character where SQLite would keep the bytes
            // (its text is then not UTF-8, which a parlite text cannot hold).
            *acc = String::from_utf8_lossy(&acc.as_bytes()[remove..]).into_owned();
        }
        if acc.is_empty() {
            self.acc = None;
            self.sep_lens = None;
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
            Some(s) if !s.is_empty() => Value::text(s),
            // SQLite's groupConcatValue returns `"", 1` while values are accumulated but
            // no text: a one-byte text holding NUL. Reproduced, since window results show
            // it.
            _ if self.n_accum > 0 => Value::text("\0"),
            _ => Value::Null,
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
