//! The rows an UPDATE or DELETE targets. When there is no WHERE clause, or it is a single
//! `column = value` or `column BETWEEN value AND value` whose answer is exactly a rowid
//! lookup or a range of one index, the rows are read straight from the trees; anything else
//! goes through the general SELECT that `matching_rows` binds.
//!
//! Why: binding and planning that SELECT was ~60% of a one-row `UPDATE z2 SET d=b*3 WHERE
//! a=29046` (speedtest1 tests 240 and 280: ~64,000 of ~119,000 instructions per statement,
//! callgrind), for a plan that is always the same lookup.
//!
//! Invariants:
//! - The direct path is taken only when its rows are exactly the general path's: the value
//!   is a literal or bound parameter, and either the column is the rowid (integer value) or
//!   the comparison is decided by the index's own order — an integer against a column of
//!   numeric affinity (collation plays no part; text and blobs sort after every number and
//!   NULL before), or text against a TEXT column whose collation the index shares. The
//!   index is a full (not partial) index whose ascending first term is the column itself.
//! - Rows come in rowid order, as SQLite visits the rowids it gathered for a multi-row
//!   UPDATE/DELETE, and, as for the general path, all of them are collected before the
//!   statement writes anything (dml.rs).
//! - A single-row target is read with `Store::table_get_for_write`, so that its rewrite
//!   or delete starts from the leaf the lookup found (the store checks the leaf is still
//!   current); the rows of a range are written in another order than they are read, so
//!   they are not.
//! - Never inside a trigger program (its WHERE may name NEW/OLD), nor with WITH, INDEXED
//!   BY/NOT INDEXED, ORDER BY or LIMIT, nor on WITHOUT ROWID tables or tables with
//!   generated columns.

use super::super::Engine;
use super::TableWriter;
use crate::parse::ast::{self, BinaryOp, Expr, Literal, UnaryOp};
use crate::schema::Table;
use crate::value::{Affinity, Result, Value};
use std::cmp::Ordering;
use std::ops::Bound;

/// The column a direct WHERE term compares.
#[derive(Clone, Copy)]
enum Target {
    Rowid,
    Column(usize),
}

/// What a DML statement says about the rows it targets.
pub(super) struct TargetClause<'s> {
    pub with: &'s Option<ast::With>,
    pub table: &'s ast::QualifiedName,
    pub alias: &'s Option<String>,
    pub indexed: &'s Option<ast::Indexed>,
    pub where_: &'s Option<Expr>,
    pub order_by: &'s [ast::OrderingTerm],
    pub limit: &'s Option<ast::Limit>,
}

impl Engine<'_> {
    /// Rows (columns then rowid) of `w`'s table that `c` targets, honouring ORDER BY/LIMIT.
    pub(super) fn targeted_rows(
        &self,
        w: &TableWriter,
        c: &TargetClause<'_>,
    ) -> Result<Vec<Vec<Value>>> {
        let simple = c.with.is_none()
            && c.indexed.is_none()
            && c.order_by.is_empty()
            && c.limit.is_none()
            && c.table.schema.is_none();
        if simple {
            if let Some(rows) = self.direct_rows(w, c.alias.as_deref(), c.where_)? {
                return Ok(rows);
            }
        }
        self.matching_rows(
            c.with, c.table, c.alias, c.indexed, c.where_, c.order_by, c.limit,
        )
    }

    /// The direct path (module docs); None when it does not apply.
    fn direct_rows(
        &self,
        w: &TableWriter,
        alias: Option<&str>,
        where_: &Option<Expr>,
    ) -> Result<Option<Vec<Vec<Value>>>> {
        let t = &w.t;
        if w.wr.is_some() || t.has_generated() || self.trigger_row.is_some() {
            return Ok(None);
        }
        let Some(wh) = where_ else {
            // No WHERE: every row, in rowid order. Through the general SELECT each row was
            // also projected column by column into a new row (~1k instructions a row of
            // speedtest1 test 250, `UPDATE z2 SET d=b*4`).
            return self
                .rows_between(t, Bound::Unbounded, Bound::Unbounded)
                .map(Some);
        };
        let (target, lo, hi) = match wh {
            Expr::Binary(l, BinaryOp::Eq, r) => {
                let (col, val) = match (self.target_of(w, alias, l), self.target_of(w, alias, r)) {
                    (Some(c), None) => (c, r),
                    (None, Some(c)) => (c, l),
                    _ => return Ok(None),
                };
                let Some(v) = self.constant_of(val) else {
                    return Ok(None);
                };
                (col, v.clone(), v)
            }
            Expr::Between {
                expr,
                not: false,
                low,
                high,
            } => {
                let Some(col) = self.target_of(w, alias, expr) else {
                    return Ok(None);
                };
                let (Some(lo), Some(hi)) = (self.constant_of(low), self.constant_of(high)) else {
                    return Ok(None);
                };
                (col, lo, hi)
            }
            _ => return Ok(None),
        };
        let exec = self.exec();
        let defaults = exec.column_defaults(t);
        let mut rows = Vec::new();
        match target {
            Target::Rowid => {
                let (Value::Integer(lo), Value::Integer(hi)) = (lo, hi) else {
                    return Ok(None);
                };
                if lo == hi {
                    if let Some(rec) = self.store.table_get_for_write(t.root, lo)? {
                        rows.push(exec.table_row(t, lo, rec, &defaults)?);
                    }
                } else if lo < hi {
                    rows = self.rows_between(t, Bound::Included(lo), Bound::Included(hi))?;
                }
            }
            Target::Column(i) => {
                let col = &t.columns[i];
                let numeric = matches!(
                    col.affinity,
                    Affinity::Integer | Affinity::Real | Affinity::Numeric
                );
                let fits = |v: &Value| match v {
                    Value::Integer(_) => numeric,
                    Value::Text(_) => col.affinity == Affinity::Text,
                    _ => false,
                };
                if !fits(&lo)
                    || !fits(&hi)
                    || std::mem::discriminant(&lo) != std::mem::discriminant(&hi)
                {
                    return Ok(None);
                }
                let text = matches!(lo, Value::Text(_));
                let Some((ix, order, ..)) = w.indexes.iter().find(|(ix, _, pred, exprs)| {
                    pred.is_none()
                        && exprs.first().is_some_and(Option::is_none)
                        && ix.columns.first().is_some_and(|k| {
                            k.column == Some(i)
                                && !k.desc
                                && (!text || k.collation == col.collation)
                        })
                }) else {
                    return Ok(None);
                };
                let coll = order.columns.first().map(|(c, _)| *c).unwrap_or_default();
                if lo.compare(&hi, coll) == Ordering::Greater {
                    return Ok(Some(rows));
                }
                // A one-column UNIQUE index holds at most one entry equal to a non-NULL
                // value: stop there instead of stepping on to find the range's end.
                let most = if ix.unique
                    && ix.columns.len() == 1
                    && lo.compare(&hi, coll) == Ordering::Equal
                {
                    1
                } else {
                    usize::MAX
                };
                let keys = self.store.index_range(
                    ix.root,
                    order,
                    Bound::Included(vec![lo]),
                    Bound::Included(vec![hi]),
                    false,
                )?;
                for k in keys.take(most) {
                    let k = k?;
                    let Some(&Value::Integer(rowid)) = k.last() else {
                        continue;
                    };
                    let rec = match most {
                        1 => self.store.table_get_for_write(t.root, rowid)?,
                        _ => self.store.table_get(t.root, rowid)?,
                    };
                    if let Some(rec) = rec {
                        rows.push(exec.table_row(t, rowid, rec, &defaults)?);
                    }
                }
                // SQLite gathers the rowids of a multi-row UPDATE/DELETE in a RowSet and
                // visits them in rowid order (RETURNING and triggers show it).
                rows.sort_by_key(|r| match r.last() {
                    Some(Value::Integer(rowid)) => *rowid,
                    _ => i64::MIN,
                });
            }
        }
        Ok(Some(rows))
    }

    /// The rows (columns then rowid) of `t` whose rowid lies between `lo` and `hi`, in
    /// rowid order.
    fn rows_between(&self, t: &Table, lo: Bound<i64>, hi: Bound<i64>) -> Result<Vec<Vec<Value>>> {
        let exec = self.exec();
        let defaults = exec.column_defaults(t);
        let mut rows = Vec::new();
        for r in self.store.table_range(t.root, lo, hi, false)? {
            let (rowid, rec) = r?;
            rows.push(exec.table_row(t, rowid, rec, &defaults)?);
        }
        Ok(rows)
    }

    /// The table column (or rowid) `e` names, if it is a plain reference to `w`'s table.
    fn target_of(&self, w: &TableWriter, alias: Option<&str>, e: &Expr) -> Option<Target> {
        let Expr::Column {
            schema: None,
            table,
            name,
            dq: false,
        } = e
        else {
            return None;
        };
        if let Some(q) = table {
            if !q.eq_ignore_ascii_case(alias.unwrap_or(&w.t.name)) {
                return None;
            }
        }
        match w.t.column_index(name) {
            Some(i) if w.t.rowid_alias == Some(i) => Some(Target::Rowid),
            Some(i) => Some(Target::Column(i)),
            None if ["rowid", "oid", "_rowid_"]
                .iter()
                .any(|r| r.eq_ignore_ascii_case(name)) =>
            {
                Some(Target::Rowid)
            }
            None => None,
        }
    }

    /// The value of a literal integer or text (possibly negated integer) or a bound
    /// parameter holding an integer or text; None for anything else.
    fn constant_of(&self, e: &Expr) -> Option<Value> {
        let v = match e {
            Expr::Literal(Literal::Integer(i)) => Value::Integer(*i),
            Expr::Literal(Literal::String(s)) => Value::text(s.as_str()),
            Expr::Unary(UnaryOp::Neg, inner) => match &**inner {
                Expr::Literal(Literal::Integer(i)) => Value::Integer(i.checked_neg()?),
                _ => return None,
            },
            Expr::Param { index, .. } => self.params.get(index.checked_sub(1)?)?.clone(),
            _ => return None,
        };
        matches!(v, Value::Integer(_) | Value::Text(_)).then_some(v)
    }
}
