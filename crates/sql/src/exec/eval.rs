//! Expression evaluation over row frames: `Exec::eval` computes a bound expression
//! (`CExpr`) against a `Frame`, the row of one query level and its enclosing levels.
//! SELECT execution (joins, grouping, sorting, LIMIT) is in `select.rs`, on the same `Exec`.
//!
//! Invariants:
//! - A `Frame` is the row of one query level plus its aggregate results; `parent` links to
//!   the enclosing level, so `CExpr::Col { level, .. }` walks `level` links.
//! - Non-correlated subqueries are computed at most once per statement execution
//!   (`Exec::exec_id` tags the cache); correlated ones run per outer row.

use super::store::{Row, Store};
use crate::collation::Collation;
use crate::func::{self, FunctionContext, Special};
use crate::parse::ast::{BinaryOp, LikeOp, RaiseKind, UnaryOp};
use crate::plan::*;
use crate::schema::Table;
use crate::value::{self, codes, Affinity, ArithOp, BitOp, Result, SqlError, Value};
use std::cmp::Ordering;
use std::rc::Rc;

mod jump;

pub use super::select::{row_cmp, sort_cmp};
pub use int_term::{IntCols, IntTerm, Operand};

mod int_term;

pub struct Frame<'a> {
    pub row: &'a [Value],
    pub aggs: &'a [Value],
    /// Per aggregate: whether its value carries SQLite's JSON subtype (json_group_array,
    /// json_group_object: `agg_subtypes`); empty outside aggregate queries.
    pub agg_json: &'a [bool],
    /// Window function values for this output row.
    pub wins: &'a [Value],
    pub parent: Option<&'a Frame<'a>>,
}

impl<'a> Frame<'a> {
    /// The frame of the query `level` levels out (0: this one).
    fn outer(&self, level: usize) -> Result<&Frame<'a>> {
        let mut fr = self;
        for _ in 0..level {
            match fr.parent {
                Some(p) => fr = p,
                None => return err("internal error: a missing outer query"),
            }
        }
        Ok(fr)
    }

    pub fn new(row: &'a [Value], parent: Option<&'a Frame<'a>>) -> Self {
        Frame {
            row,
            aggs: &[],
            agg_json: &[],
            wins: &[],
            parent,
        }
    }
}

/// What a RAISE(IGNORE) unwinds with: the trigger machinery catches it.
pub const RAISE_IGNORE_MSG: &str = "\u{0}raise-ignore";

pub struct Exec<'a> {
    pub store: &'a dyn Store,
    pub schema: &'a crate::schema::Schema,
    pub params: &'a [Value],
    pub conn: &'a dyn FunctionContext,
    /// The connection's settings (the same object as `conn`): lets table-valued functions
    /// that read table data, such as `pragma_foreign_key_check`, run as an `Engine`.
    pub state: &'a super::ConnState,
    pub exec_id: u64,
    /// Inside a trigger program (RAISE is allowed).
    pub in_trigger: bool,
    /// Working tables of recursive CTEs being computed, by id.
    pub working: std::cell::RefCell<std::collections::HashMap<usize, Rc<Vec<Row>>>>,
    /// Index walks of join levels between two outer rows (`join_level` gives its walk back
    /// here when done, and the level's next `candidate_source` restarts it over the next
    /// row's bounds). Dropped with the `Exec`, so no cursor outlives the execution.
    pub kept_walks: std::cell::RefCell<Vec<super::select::KeptWalk>>,
    /// Result rows to write into (`result_row`): the statement's recycled ones
    /// (`CachedPlan::recycle_row`) while its top-level SELECT runs, else none.
    pub spare_rows: Option<&'a std::cell::RefCell<Vec<Row>>>,
    /// The top-level SELECT's chunking and its one core (`select::chunk`), while it runs
    /// in chunks; the core is known by its address, so no subquery's core matches.
    pub chunk: Option<(
        &'a super::select::chunk::Chunking,
        *const crate::plan::CorePlan,
    )>,
}

pub(super) fn err<T>(m: impl Into<String>) -> Result<T> {
    Err(SqlError::msg(m))
}

/// Reads a table row into the combined-row layout: columns (padded with defaults when the
/// record is shorter, as after ADD COLUMN), the rowid alias filled in, then the rowid.
/// VIRTUAL generated columns, which the record lacks, read NULL here; `Exec::table_row`
/// computes them.
pub fn expand_row(t: &Table, rowid: i64, mut vals: Row, defaults: &[Value]) -> Row {
    let n = t.columns.len();
    if t.has_virtual() {
        let mut stored = vals.into_iter();
        vals = (0..n)
            .map(|i| match t.is_virtual(i) {
                true => Value::Null,
                false => stored
                    .next()
                    .unwrap_or_else(|| defaults.get(i).cloned().unwrap_or(Value::Null)),
            })
            .collect();
    }
    if vals.len() > n {
        vals.truncate(n);
    }
    while vals.len() < n {
        vals.push(defaults.get(vals.len()).cloned().unwrap_or(Value::Null));
    }
    // SQLite writes an integral value of a REAL column as an integer (fileformat2.html
    // §2.1 leaves the choice to the writer) and reads it back as a real.
    for (v, c) in vals.iter_mut().zip(&t.columns) {
        if let Value::Integer(i) = *v {
            if c.affinity == Affinity::Real {
                *v = Value::Real(i as f64);
            }
        }
    }
    if let Some(a) = t.rowid_alias {
        vals[a] = Value::Integer(rowid);
    }
    vals.push(Value::Integer(rowid));
    vals
}

/// Converts a value to a rowid for lookups: integers, integral reals and numeric text.
pub fn as_rowid(v: &Value) -> Option<i64> {
    match v.clone().apply_affinity(Affinity::Numeric) {
        Value::Integer(i) => Some(i),
        Value::Real(r)
            if r.fract() == 0.0 && r >= -9.223372036854776e18 && r < 9.223372036854776e18 =>
        {
            Some(r as i64)
        }
        _ => None,
    }
}

/// Per aggregate of `aggs`: whether its value carries SQLite's JSON subtype
/// (`Frame::agg_json`): json_group_array's and json_group_object's do.
pub fn agg_subtypes(aggs: &[AggCall]) -> Vec<bool> {
    aggs.iter().map(|a| a.def.reads_json_subtype()).collect()
}

/// Whether a scalar subquery's text value carries SQLite's JSON subtype: its one column is
/// a json_group_array/json_group_object aggregate or a JSON function whose text result
/// always does (json_extract's does only for arrays and objects, which is not known
/// here: it counts as a plain string).
fn subquery_gives_json(plan: &SelectPlan) -> bool {
    let [core] = plan.cores.as_slice() else {
        return false;
    };
    match core.outputs.as_slice() {
        [CExpr::Agg(i)] => core
            .aggs
            .get(*i)
            .is_some_and(|a| a.def.reads_json_subtype()),
        [CExpr::Func { def, .. }] => {
            func::json::may_return_subtype(def.0) && def.0.name != "json_extract"
        }
        _ => false,
    }
}

impl<'a> Exec<'a> {
    /// Calls a function that reads SQLite's JSON subtype of its arguments, or may return
    /// one, with the subtype tracked: an argument that is itself such a call is evaluated
    /// here too, so `json_object('a', json('[1]'))` nests the array where the value of
    /// any other expression (a column, CAST, an operator) is a plain string, as in SQLite.
    /// Returns the value and whether it carries the subtype.
    fn eval_json_call(
        &self,
        def: &func::FuncDef,
        args: &[CExpr],
        coll: Collation,
        f: &Frame,
    ) -> Result<(Value, bool)> {
        let mut vals = Vec::with_capacity(args.len());
        let mut json = Vec::with_capacity(args.len());
        for a in args {
            let (v, j) = self.eval_subtyped(a, f)?;
            vals.push(v);
            json.push(j);
        }
        let ctx = func::Ctx {
            conn: self.conn,
            collation: coll,
        };
        func::json::call_with_subtypes(def, &ctx, &vals, &json)
    }

    /// Evaluates `e` and says whether its value carries SQLite's JSON subtype: a JSON
    /// function's result does (`eval_json_call`), and keeps it through the functions
    /// that hand one argument back unchanged (coalesce/ifnull, iif, likely) and a CAST
    /// to TEXT of a text value; any other expression's value does not.
    pub fn eval_subtyped(&self, e: &CExpr, f: &Frame) -> Result<(Value, bool)> {
        let CExpr::Func { def, args, coll } = e else {
            if let CExpr::Agg(i) = e {
                let v = self.eval(e, f)?;
                return Ok((v, f.agg_json.get(*i).copied().unwrap_or(false)));
            }
            if let CExpr::Scalar(sp) = e {
                let v = self.eval(e, f)?;
                let json = matches!(v, Value::Text(_)) && subquery_gives_json(&sp.plan);
                return Ok((v, json));
            }
            if let CExpr::Cast {
                e: inner,
                aff: Affinity::Text,
            } = e
            {
                let (v, j) = self.eval_subtyped(inner, f)?;
                let was_text = matches!(v, Value::Text(_));
                return Ok((v.cast(Affinity::Text), j && was_text));
            }
            return Ok((self.eval(e, f)?, false));
        };
        match def.special {
            _ if func::json::may_return_subtype(def.0) => {
                self.eval_json_call(def.0, args, *coll, f)
            }
            Some(Special::Coalesce) => {
                for a in args {
                    let (v, j) = self.eval_subtyped(a, f)?;
                    if !v.is_null() {
                        return Ok((v, j));
                    }
                }
                Ok((Value::Null, false))
            }
            Some(Special::Iif) => {
                let mut i = 0;
                while i + 1 < args.len() {
                    if value::truth(&self.eval(&args[i], f)?) == Some(true) {
                        return self.eval_subtyped(&args[i + 1], f);
                    }
                    i += 2;
                }
                match args.get(i) {
                    Some(last) => self.eval_subtyped(last, f),
                    None => Ok((Value::Null, false)),
                }
            }
            Some(Special::Unlikely) if !args.is_empty() => self.eval_subtyped(&args[0], f),
            _ => Ok((self.eval(e, f)?, false)),
        }
    }

    pub fn eval(&self, e: &CExpr, f: &Frame) -> Result<Value> {
        match e {
            CExpr::Lit(v) => Ok(v.clone()),
            CExpr::Param(i) => Ok(self.params.get(i - 1).cloned().unwrap_or(Value::Null)),
            CExpr::Col { level, idx } => {
                let fr = f.outer(*level)?;
                Ok(fr.row.get(*idx).cloned().unwrap_or(Value::Null))
            }
            CExpr::Agg(i) => Ok(f.aggs.get(*i).cloned().unwrap_or(Value::Null)),
            CExpr::OuterAgg { level, idx } => {
                let fr = f.outer(*level)?;
                Ok(fr.aggs.get(*idx).cloned().unwrap_or(Value::Null))
            }
            CExpr::Win(i) => Ok(f.wins.get(*i).cloned().unwrap_or(Value::Null)),
            CExpr::Unary(op, x) => {
                let v = self.eval(x, f)?;
                Ok(match op {
                    UnaryOp::Neg => value::negate(&v),
                    UnaryOp::Plus => v,
                    UnaryOp::BitNot => value::bit_not(&v),
                    UnaryOp::Not => value::bool_value(value::not3(value::truth(&v))),
                })
            }
            CExpr::Binary {
                op,
                l,
                r,
                coll,
                laff,
                raff,
            } => self.binary(*op, l, r, *coll, *laff, *raff, f),
            CExpr::Like { op, not, l, r, esc } => {
                // Borrowed operands: a TEXT column is matched in place (no reference-count
                // traffic per row); the compiled pattern comes from `func::like`'s cache.
                let lv = self.operand(l, f)?;
                let rv = self.operand(r, f)?;
                let res = match op {
                    LikeOp::Like => {
                        let ev = match esc {
                            Some(e) => Some(self.eval(e, f)?),
                            None => None,
                        };
                        func::like::like_values(
                            &rv,
                            &lv,
                            ev.as_ref(),
                            self.conn.case_sensitive_like(),
                        )?
                    }
                    LikeOp::Glob => func::like::glob_values(&rv, &lv)?,
                    LikeOp::Regexp => {
                        return Err(SqlError::NoSuchFunction {
                            name: "regexp".into(),
                        })
                    }
                    LikeOp::Match => {
                        return err("unable to use function MATCH in the requested context")
                    }
                };
                if *not {
                    Ok(value::bool_value(value::not3(value::truth(&res))))
                } else {
                    Ok(res)
                }
            }
            CExpr::Between {
                e,
                not,
                lo,
                hi,
                coll,
                hicoll,
                eaff,
                loaff,
                hiaff,
            } => {
                let v = self.operand(e, f)?;
                let a = self.operand(lo, f)?;
                let b = self.operand(hi, f)?;
                let (v, a, b): (&Value, &Value, &Value) = (&v, &a, &b);
                // Three integers: no affinity changes them unless one side has TEXT
                // affinity, and no collation applies (as `binary`'s integer path).
                // speedtest1 test 130's `b BETWEEN 65040 AND 65056` per row.
                if let (Value::Integer(x), Value::Integer(l), Value::Integer(h)) = (v, a, b) {
                    let text = Some(Affinity::Text);
                    if *eaff != text && *loaff != text && *hiaff != text {
                        let r = *l <= *x && *x <= *h;
                        return Ok(Value::Integer(i64::from(r != *not)));
                    }
                }
                let ge = value::compare_op(v, *eaff, a, *loaff, *coll).map(|o| o != Ordering::Less);
                let le =
                    value::compare_op(v, *eaff, b, *hiaff, *hicoll).map(|o| o != Ordering::Greater);
                let r = value::and3(ge, le);
                Ok(value::bool_value(if *not { value::not3(r) } else { r }))
            }
            CExpr::InList {
                e,
                not,
                list,
                coll,
                eaff,
                ..
            } => {
                let v = self.eval(e, f)?;
                if list.is_empty() {
                    return Ok(Value::Integer(i64::from(*not)));
                }
                if v.is_null() {
                    return Ok(Value::Null);
                }
                let mut saw_null = false;
                let mut found = false;
                for item in list {
                    let iv = self.eval(item, f)?;
                    // Only the left operand's affinity applies (exprINAffinity for a list):
                    // `5 IN (a)` with a TEXT column `a` holding '5' is false.
                    match value::compare_op(&v, *eaff, &iv, None, *coll) {
                        None => saw_null = true,
                        Some(Ordering::Equal) => {
                            found = true;
                            break;
                        }
                        _ => {}
                    }
                }
                let r = if found {
                    Some(true)
                } else if saw_null {
                    None
                } else {
                    Some(false)
                };
                Ok(value::bool_value(if *not { value::not3(r) } else { r }))
            }
            CExpr::InSelect {
                e,
                not,
                sub,
                terms,
                own,
                ..
            } => {
                // A row value's terms are evaluated one by one (evaluating the vector
                // itself is "row value misused"), before the subquery runs.
                let lhs: Vec<Value> = match &**e {
                    CExpr::Vector(items) => {
                        let mut out = Vec::with_capacity(items.len());
                        for it in items {
                            out.push(self.eval(it, f)?);
                        }
                        out
                    }
                    _ => vec![self.eval(e, f)?],
                };
                let rows = self.subquery_rows(sub, f)?;
                if rows.is_empty() {
                    return Ok(Value::Integer(i64::from(*not)));
                }
                // SQLite's OP_Affinity with REAL affinity turns an integer into a real (a
                // large one loses precision, so 2^63-1 matches 9.223372036854776e18);
                // with every integer made a real, equality is compared the same way.
                let realify = |x: Value, aff: Option<Affinity>| match (x, aff) {
                    (Value::Integer(i), Some(Affinity::Real)) => Value::Real(i as f64),
                    (x, _) => x,
                };
                let term = |i: usize| terms.get(i).copied().unwrap_or_default();
                // The subquery's values are stored with the terms' affinities; the left
                // value takes them only when it has no NULL (sqlite3ExprCodeIN: a NULL
                // jumps from step 2 to step 6, past the OP_Affinity of step 3).
                let rhs = |r: &Row, i: usize| {
                    let aff = term(i).1;
                    let y = r.get(i).cloned().unwrap_or(Value::Null);
                    realify(y.apply_comparison_affinity(aff), aff)
                };
                let lhs_has_null = lhs.iter().any(Value::is_null);
                let lhs: Vec<Value> = if lhs_has_null {
                    lhs
                } else {
                    lhs.into_iter()
                        .enumerate()
                        .map(|(i, x)| realify(x.apply_comparison_affinity(term(i).1), term(i).1))
                        .collect()
                };
                // Step 3: a row equal in every term, under the terms' collations. Step 6,
                // when none is: NULL when some row has no term that is unequal, compared
                // under each left term's own collation, a NULL on either side not unequal.
                // `(1,NULL) IN (SELECT 2,3)` is 0, `(1,NULL) IN (SELECT 1,2)` is NULL.
                let mut found = false;
                let mut saw_null = false;
                for r in rows.iter() {
                    let mut equal = !lhs_has_null;
                    let mut not_unequal = true;
                    for (i, x) in lhs.iter().enumerate() {
                        let y = rhs(r, i);
                        if x.is_null() || y.is_null() {
                            equal = false;
                            continue;
                        }
                        let (coll, own_coll) = (term(i).0, own.get(i).copied().unwrap_or_default());
                        let same = x.compare(&y, coll) == Ordering::Equal;
                        equal = equal && same;
                        not_unequal = not_unequal
                            && if own_coll == coll {
                                same
                            } else {
                                x.compare(&y, own_coll) == Ordering::Equal
                            };
                        if !equal && !not_unequal {
                            break;
                        }
                    }
                    if equal {
                        found = true;
                        break;
                    }
                    saw_null |= not_unequal;
                }
                let r = if found {
                    Some(true)
                } else if saw_null {
                    None
                } else {
                    Some(false)
                };
                Ok(value::bool_value(if *not { value::not3(r) } else { r }))
            }
            CExpr::Exists(sub) => {
                // One row decides EXISTS; correlated subqueries are re-run per outer row, so
                // stopping early matters there.
                if sub.correlated {
                    let rows = self.run_select_capped(&sub.plan, Some(f), Some(1))?;
                    return Ok(Value::Integer(i64::from(!rows.is_empty())));
                }
                let rows = self.subquery_rows_capped(sub, f, Some(1))?;
                Ok(Value::Integer(i64::from(!rows.is_empty())))
            }
            // The value is the first row's (SQLite codes the subquery with LIMIT 1), so a
            // correlated one, re-run per outer row, stops at its first row: speedtest1 test
            // 320 scans half of z2 per outer row instead of all of it.
            CExpr::Scalar(sub) => Ok(self
                .first_row(sub, f)?
                .and_then(|r| r.into_iter().next())
                .unwrap_or(Value::Null)),
            CExpr::IsNull { e, not } => {
                let v = self.eval(e, f)?;
                Ok(Value::Integer(i64::from(v.is_null() != *not)))
            }
            CExpr::Case {
                base,
                whens,
                else_,
                coll,
                baff,
            } => {
                let bv = match base {
                    Some(b) => Some(self.eval(b, f)?),
                    None => None,
                };
                for (w, t) in whens {
                    let wv = self.eval(w, f)?;
                    let hit = match &bv {
                        Some(b) => {
                            value::compare_op(b, *baff, &wv, None, *coll) == Some(Ordering::Equal)
                        }
                        None => value::truth(&wv) == Some(true),
                    };
                    if hit {
                        return self.eval(t, f);
                    }
                }
                match else_ {
                    Some(e) => self.eval(e, f),
                    None => Ok(Value::Null),
                }
            }
            CExpr::Cast { e, aff } => Ok(self.eval(e, f)?.cast(*aff)),
            CExpr::Func { def, args, coll } => {
                match def.special {
                    Some(Special::Coalesce) => {
                        for a in args {
                            let v = self.eval(a, f)?;
                            if !v.is_null() {
                                return Ok(v);
                            }
                        }
                        return Ok(Value::Null);
                    }
                    Some(Special::Iif) => {
                        let mut i = 0;
                        while i + 1 < args.len() {
                            if value::truth(&self.eval(&args[i], f)?) == Some(true) {
                                return self.eval(&args[i + 1], f);
                            }
                            i += 2;
                        }
                        return if i < args.len() {
                            self.eval(&args[i], f)
                        } else {
                            Ok(Value::Null)
                        };
                    }
                    Some(Special::Unlikely) => {
                        if let Some(a) = args.first() {
                            return self.eval(a, f);
                        }
                    }
                    Some(Special::JsonSubtypes) => {
                        return Ok(self.eval_json_call(def.0, args, *coll, f)?.0);
                    }
                    None => {}
                }
                let ctx = func::Ctx {
                    conn: self.conn,
                    collation: *coll,
                };
                // Up to four arguments live on the stack: no allocation per call per row.
                if args.len() <= 4 {
                    let mut vals: [Value; 4] = Default::default();
                    for (v, a) in vals.iter_mut().zip(args) {
                        *v = self.eval(a, f)?;
                    }
                    return def.call(&ctx, &vals[..args.len()]);
                }
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(self.eval(a, f)?);
                }
                def.call(&ctx, &vals)
            }
            CExpr::Field { sub, idx } => Ok(self
                .first_row(sub, f)?
                .and_then(|r| r.get(*idx).cloned())
                .unwrap_or(Value::Null)),
            CExpr::RowCmp(rc) => self.row_cmp(rc, f),
            CExpr::Vector(items) => {
                if items.len() == 1 {
                    return self.eval(&items[0], f);
                }
                err("row value misused")
            }
            CExpr::Raise { kind, msg } => {
                if !self.in_trigger {
                    return err("RAISE() may only be used within a trigger-program");
                }
                let m = match msg {
                    Some(m) => self.eval(m, f)?.to_text_or_empty().into_owned(),
                    None => String::new(),
                };
                match kind {
                    RaiseKind::Ignore => err(RAISE_IGNORE_MSG),
                    _ => Err(SqlError::Code {
                        code: codes::SQLITE_CONSTRAINT,
                        extended_code: 1811,
                        message: m,
                    }),
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn binary(
        &self,
        op: BinaryOp,
        l: &CExpr,
        r: &CExpr,
        coll: Collation,
        laff: Option<Affinity>,
        raff: Option<Affinity>,
        f: &Frame,
    ) -> Result<Value> {
        match op {
            BinaryOp::And => {
                let a = value::truth(&self.eval(l, f)?);
                if a == Some(false) {
                    return Ok(Value::Integer(0));
                }
                let b = value::truth(&self.eval(r, f)?);
                return Ok(value::bool_value(value::and3(a, b)));
            }
            BinaryOp::Or => {
                let a = value::truth(&self.eval(l, f)?);
                if a == Some(true) {
                    return Ok(Value::Integer(1));
                }
                let b = value::truth(&self.eval(r, f)?);
                return Ok(value::bool_value(value::or3(a, b)));
            }
            _ => {}
        }
        // Columns and literals are read in place: no clone and drop per operand per row.
        let lv = self.operand(l, f)?;
        let rv = self.operand(r, f)?;
        let (lv, rv): (&Value, &Value) = (&lv, &rv);
        // Two integers: no affinity can change them unless one side has TEXT affinity, and
        // no collation applies; `+ - *` that do not overflow stay integers. Skipping the
        // general paths took speedtest1 test 320's `5+z2.b=z1.b` from ~300 to ~170
        // instructions per row (callgrind).
        if let (Value::Integer(a), Value::Integer(b)) = (lv, rv) {
            let (a, b) = (*a, *b);
            let int_cmp = laff != Some(Affinity::Text) && raff != Some(Affinity::Text);
            let fast = match op {
                BinaryOp::Eq if int_cmp => Some(Value::Integer(i64::from(a == b))),
                BinaryOp::Ne if int_cmp => Some(Value::Integer(i64::from(a != b))),
                BinaryOp::Lt if int_cmp => Some(Value::Integer(i64::from(a < b))),
                BinaryOp::Le if int_cmp => Some(Value::Integer(i64::from(a <= b))),
                BinaryOp::Gt if int_cmp => Some(Value::Integer(i64::from(a > b))),
                BinaryOp::Ge if int_cmp => Some(Value::Integer(i64::from(a >= b))),
                BinaryOp::Add => a.checked_add(b).map(Value::Integer),
                BinaryOp::Sub => a.checked_sub(b).map(Value::Integer),
                BinaryOp::Mul => a.checked_mul(b).map(Value::Integer),
                _ => None,
            };
            if let Some(v) = fast {
                return Ok(v);
            }
        }
        let cmp = |pred: fn(Ordering) -> bool| -> Value {
            match value::compare_op(lv, laff, rv, raff, coll) {
                Some(o) => Value::Integer(i64::from(pred(o))),
                None => Value::Null,
            }
        };
        Ok(match op {
            BinaryOp::Eq => cmp(|o| o == Ordering::Equal),
            BinaryOp::Ne => cmp(|o| o != Ordering::Equal),
            BinaryOp::Lt => cmp(|o| o == Ordering::Less),
            BinaryOp::Le => cmp(|o| o != Ordering::Greater),
            BinaryOp::Gt => cmp(|o| o == Ordering::Greater),
            BinaryOp::Ge => cmp(|o| o != Ordering::Less),
            BinaryOp::Is => Value::Integer(i64::from(value::is_op(lv, laff, rv, raff, coll))),
            BinaryOp::IsNot => Value::Integer(i64::from(!value::is_op(lv, laff, rv, raff, coll))),
            BinaryOp::Add => value::arith(ArithOp::Add, lv, rv),
            BinaryOp::Sub => value::arith(ArithOp::Sub, lv, rv),
            BinaryOp::Mul => value::arith(ArithOp::Mul, lv, rv),
            BinaryOp::Div => value::arith(ArithOp::Div, lv, rv),
            BinaryOp::Rem => value::arith(ArithOp::Rem, lv, rv),
            BinaryOp::BitAnd => value::bit_op(BitOp::And, lv, rv),
            BinaryOp::BitOr => value::bit_op(BitOp::Or, lv, rv),
            BinaryOp::Shl => value::bit_op(BitOp::ShiftLeft, lv, rv),
            BinaryOp::Shr => value::bit_op(BitOp::ShiftRight, lv, rv),
            BinaryOp::Concat => value::concat(lv, rv)?,
            BinaryOp::Arrow | BinaryOp::Arrow2 => {
                return Err(SqlError::NoSuchFunction { name: "->".into() })
            }
            BinaryOp::And | BinaryOp::Or => Value::Null,
        })
    }

    /// An operand of a binary operator: a column or literal borrowed from the frame or the
    /// plan, anything else evaluated.
    pub(super) fn operand<'v>(
        &self,
        e: &'v CExpr,
        f: &'v Frame<'_>,
    ) -> Result<std::borrow::Cow<'v, Value>> {
        use std::borrow::Cow;
        match e {
            CExpr::Lit(v) => Ok(Cow::Borrowed(v)),
            CExpr::Col { level, idx } => {
                let mut fr = f;
                for _ in 0..*level {
                    match fr.parent {
                        Some(p) => fr = p,
                        None => return err("internal error: column of a missing outer query"),
                    }
                }
                Ok(match fr.row.get(*idx) {
                    Some(v) => Cow::Borrowed(v),
                    None => Cow::Owned(Value::Null),
                })
            }
            _ => Ok(Cow::Owned(self.eval(e, f)?)),
        }
    }

    /// A row value comparison (`RowCmp`), SQLite's codeVectorCompare: see the type's doc.
    fn row_cmp(&self, rc: &RowCmp, f: &Frame) -> Result<Value> {
        let l = self.row_terms(&rc.l, f)?;
        let r = self.row_terms(&rc.r, f)?;
        let last = rc.terms.len().saturating_sub(1);
        let strict = match rc.op {
            BinaryOp::Lt | BinaryOp::Le => Some(Ordering::Less),
            BinaryOp::Gt | BinaryOp::Ge => Some(Ordering::Greater),
            _ => None,
        };
        let mut res = Some(true);
        for (i, &(coll, laff, raff)) in rc.terms.iter().enumerate() {
            let (x, y) = (&l[i], &r[i]);
            match rc.op {
                BinaryOp::Is | BinaryOp::IsNot => {
                    if !value::is_op(x, laff, y, raff, coll) {
                        res = Some(false);
                        break;
                    }
                }
                BinaryOp::Eq | BinaryOp::Ne => match value::compare_op(x, laff, y, raff, coll) {
                    Some(Ordering::Equal) => {}
                    Some(_) => {
                        res = Some(false);
                        break;
                    }
                    // A NULL term leaves the result NULL unless a later term is unequal.
                    None => res = None,
                },
                _ => {
                    let Some(o) = value::compare_op(x, laff, y, raff, coll) else {
                        res = None;
                        break;
                    };
                    if i == last {
                        res = Some(match rc.op {
                            BinaryOp::Le => o != Ordering::Greater,
                            BinaryOp::Ge => o != Ordering::Less,
                            _ => Some(o) == strict,
                        });
                    } else if o != Ordering::Equal {
                        res = Some(Some(o) == strict);
                        break;
                    }
                }
            }
        }
        if matches!(rc.op, BinaryOp::Ne | BinaryOp::IsNot) {
            res = value::not3(res);
        }
        Ok(value::bool_value(res))
    }

    /// The values of one side of a row value comparison: a subquery's terms from one run
    /// of it (its first row, NULLs without one), other terms evaluated in order.
    fn row_terms(&self, items: &[CExpr], f: &Frame) -> Result<Vec<Value>> {
        if let Some(CExpr::Field { sub, .. }) = items.first() {
            let row = self.first_row(sub, f)?;
            return Ok((0..items.len())
                .map(|i| {
                    row.as_ref()
                        .and_then(|r| r.get(i).cloned())
                        .unwrap_or(Value::Null)
                })
                .collect());
        }
        items.iter().map(|x| self.eval(x, f)).collect()
    }

    /// The first row of a subquery (a correlated one stops there, as a scalar subquery).
    fn first_row(&self, sub: &SubPlan, f: &Frame) -> Result<Option<Row>> {
        if sub.correlated {
            let rows = self.run_select_capped(&sub.plan, Some(f), Some(1))?;
            return Ok(rows.into_iter().next());
        }
        Ok(self.subquery_rows_capped(sub, f, Some(1))?.first().cloned())
    }

    /// `eval` where SQLite codes `OP_PureFunc` (`what`: "a CHECK constraint", "an index",
    /// "a generated column"): a date function reading the clock or the zone fails there,
    /// as the value would differ between the write and a later read of the same row.
    pub fn eval_pure(&self, what: &'static str, e: &CExpr, f: &Frame) -> Result<Value> {
        let outer = self.conn.pure_context();
        self.conn.set_pure_context(Some(what));
        let v = self.eval(e, f);
        self.conn.set_pure_context(outer);
        v
    }

    /// `is_true` of a partial index's WHERE, evaluated as `eval_pure` (in "an index").
    pub fn index_where_is_true(&self, e: &CExpr, f: &Frame) -> Result<bool> {
        Ok(value::truth(&self.eval_pure("an index", e, f)?) == Some(true))
    }

    pub fn is_true(&self, e: &CExpr, f: &Frame) -> Result<bool> {
        if let CExpr::Between { .. } = e {
            return self.between_is_true(e, f);
        }
        Ok(value::truth(&self.eval(e, f)?) == Some(true))
    }

    pub fn subquery_rows(&self, sub: &SubPlan, f: &Frame) -> Result<Rc<Vec<Row>>> {
        self.subquery_rows_capped(sub, f, None)
    }

    /// `subquery_rows` of a subquery whose node looks at its first `need` rows only
    /// (EXISTS, a scalar subquery: 1), which are all it computes and caches (the cache
    /// is the node's own).
    fn subquery_rows_capped(
        &self,
        sub: &SubPlan,
        f: &Frame,
        need: Option<usize>,
    ) -> Result<Rc<Vec<Row>>> {
        if !sub.correlated {
            if let Some((id, rows)) = &*sub.cache.borrow() {
                if *id == self.exec_id {
                    return Ok(rows.clone());
                }
            }
        }
        let rows = Rc::new(self.run_select_capped(&sub.plan, Some(f), need)?);
        if !sub.correlated {
            *sub.cache.borrow_mut() = Some((self.exec_id, rows.clone()));
        }
        Ok(rows)
    }
}
