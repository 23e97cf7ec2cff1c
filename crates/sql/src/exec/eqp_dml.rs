//! EXPLAIN QUERY PLAN for UPDATE, DELETE and INSERT: the rows SQLite 3.50 prints for them,
//! worded (by `eqp`) from the plan of the SELECT parlite runs to find the rows.
//!
//! - UPDATE/DELETE without FROM: the plan of the SELECT that `matching_rows` binds (the
//!   target table with the statement's INDEXED BY, WHERE, ORDER BY and LIMIT; results `*`
//!   and the rowid), with the SET expressions added as results so that their subqueries
//!   are worded after the loop and its WHERE subqueries, as SQLite codes them.
//! - UPDATE ... FROM: the plan of the join `update_from_rows` binds.
//! - INSERT: the plan of its SELECT (or VALUES); DEFAULT VALUES has no rows.
//!
//! Invariants:
//! - The rows describe parlite's own plan, never a copy of SQLite's text. A one-term WHERE
//!   the direct path of `dml/target.rs` answers (rowid or first-column index lookup) is
//!   the lookup the planner picks for the same SELECT (`SEARCH t USING INTEGER PRIMARY KEY
//!   (rowid=?)`, `SEARCH t USING INDEX i (a=?)`), so the wording holds for both paths.
//! - Subquery numbers follow SQLite's parser order: the synthesized SELECT lists the SET
//!   expressions before the WHERE clause, as the statement's text does.
//! - A statement that does not target a table (an INSTEAD OF view) has no rows, as before.

use crate::parse::ast::{self, Expr, ResultColumn, Stmt, TriggerEvent, TriggerTime};
use crate::plan::Binder;
use crate::schema::Schema;
use crate::value::{Result, Value};

use super::store::Row;
use super::{eqp, Engine};

impl Engine<'_> {
    /// The EXPLAIN QUERY PLAN rows of a DML statement (`Ok(None)` for other statements).
    pub(super) fn explain_dml(&self, stmt: &Stmt) -> Result<Option<Vec<Row>>> {
        let Some(sel) = self.dml_select(stmt)? else {
            return Ok(None);
        };
        let Some(sel) = sel else {
            return Ok(Some(Vec::new()));
        };
        let plan = Binder::new(self.schema).bind_select(&sel)?;
        let mut rows = eqp::explain(self.schema, &sel, &plan);
        // INSERT ... VALUES with one row codes the row in place: no loop, so not the
        // `SCAN CONSTANT ROW` of that row as a select (its subqueries stay).
        let one_row = matches!(
            (stmt, &sel.body.first),
            (Stmt::Insert(_), ast::SelectCore::Values(v)) if v.len() == 1
        ) && sel.body.compounds.is_empty();
        if one_row {
            rows.retain(
                |r| !matches!(r.get(3), Some(Value::Text(t)) if &t[..] == "SCAN CONSTANT ROW"),
            );
        }
        Ok(Some(rows))
    }

    /// Whether DELETE takes the truncate path (dml/delete.rs): no WHERE and nothing that
    /// needs the rows one by one. It plans no loop, so SQLite and parlite show no rows.
    fn truncates(&self, d: &ast::Delete) -> bool {
        let Some(t) = self
            .schema
            .table_in(d.table.schema.as_deref(), &d.table.name)
        else {
            return false;
        };
        d.where_.is_none()
            && d.order_by.is_empty()
            && d.limit.is_none()
            && d.returning.is_empty()
            && self
                .table_triggers(t, TriggerTime::Before, &TriggerEvent::Delete)
                .is_empty()
            && self
                .table_triggers(t, TriggerTime::After, &TriggerEvent::Delete)
                .is_empty()
            && !self.fk_required_for_delete(t)
    }

    /// The SELECT whose plan a DML statement's plan is: `Ok(None)` for a statement that is
    /// not DML, `Ok(Some(None))` for one that runs no query.
    pub(super) fn dml_select(&self, stmt: &Stmt) -> Result<Option<Option<ast::Select>>> {
        let schema: &Schema = self.schema;
        let sel = match stmt {
            Stmt::Insert(i) => match &i.source {
                ast::InsertSource::Select(s) => {
                    let mut sel = (**s).clone();
                    // The INSERT's WITH scopes over its SELECT (insert.rs binds it so).
                    if let Some(w) = &i.with {
                        let mut with = w.clone();
                        if let Some(own) = sel.with.take() {
                            with.recursive |= own.recursive;
                            with.ctes.extend(own.ctes);
                        }
                        sel.with = Some(with);
                    }
                    sel
                }
                ast::InsertSource::DefaultValues => return Ok(Some(None)),
            },
            Stmt::Delete(d) if self.truncates(d) => return Ok(Some(None)),
            Stmt::Delete(d) => {
                let Some(sel) = target_select(schema, &d.with, &d.table, &d.alias, &d.where_, &[])
                else {
                    return Ok(Some(None));
                };
                with_order(sel, d.indexed.clone(), &d.order_by, &d.limit)
            }
            Stmt::Update(u) if u.sets.iter().any(|a| a.columns.len() != 1) => {
                // As UPDATE itself splits them (dml/set_row_value.rs).
                let split = super::dml::set_row_value::expand(schema, u)?;
                return match split {
                    Some(s) => self.dml_select(&Stmt::Update(Box::new(s))),
                    None => Ok(None),
                };
            }
            Stmt::Update(u) => {
                let sets: Vec<Expr> = u.sets.iter().map(|a| a.expr.clone()).collect();
                let Some(mut sel) =
                    target_select(schema, &u.with, &u.table, &u.alias, &u.where_, &sets)
                else {
                    return Ok(Some(None));
                };
                if let (Some(from), ast::SelectCore::Select(core)) = (&u.from, &mut sel.body.first)
                {
                    // update_from_rows: the target joined (comma) with the FROM tables.
                    if let Some(f) = &mut core.from {
                        f.joins.push(ast::Join {
                            op: ast::JoinOp {
                                comma: true,
                                natural: false,
                                kind: ast::JoinKind::Inner,
                            },
                            table: from.first.clone(),
                            constraint: None,
                        });
                        f.joins.extend(from.joins.iter().cloned());
                    }
                    core.columns[0] = ResultColumn::TableStar(
                        u.alias.clone().unwrap_or_else(|| u.table.name.clone()),
                    );
                    with_order(sel, None, &u.order_by, &u.limit)
                } else {
                    with_order(sel, u.indexed.clone(), &u.order_by, &u.limit)
                }
            }
            _ => return Ok(None),
        };
        Ok(Some(Some(sel)))
    }
}

/// `SELECT *, rowid, <sets> FROM table [AS alias] WHERE ...`, as `matching_rows` (and
/// `rowid_result_column`) build it; None when `table` is not a table of the schema.
fn target_select(
    schema: &Schema,
    with: &Option<ast::With>,
    table: &ast::QualifiedName,
    alias: &Option<String>,
    where_: &Option<Expr>,
    sets: &[Expr],
) -> Option<ast::Select> {
    let t = schema.table_in(table.schema.as_deref(), &table.name)?;
    let rowid = if t.without_rowid {
        Expr::Literal(ast::Literal::Null)
    } else {
        Expr::Column {
            schema: None,
            table: Some(alias.clone().unwrap_or_else(|| table.name.clone())),
            name: "rowid".into(),
            dq: false,
        }
    };
    let mut columns = vec![
        ResultColumn::Star,
        ResultColumn::Expr {
            expr: rowid,
            alias: None,
            span: "rowid".into(),
        },
    ];
    columns.extend(sets.iter().map(|e| ResultColumn::Expr {
        expr: e.clone(),
        alias: None,
        span: String::new(),
    }));
    Some(ast::Select::of_table(
        with.clone(),
        columns,
        table.clone(),
        alias.clone(),
        None,
        where_.clone(),
    ))
}

/// `sel` with the statement's INDEXED BY, ORDER BY and LIMIT.
fn with_order(
    mut sel: ast::Select,
    indexed: Option<ast::Indexed>,
    order_by: &[ast::OrderingTerm],
    limit: &Option<ast::Limit>,
) -> ast::Select {
    if let ast::SelectCore::Select(core) = &mut sel.body.first {
        if let Some(ast::FromClause {
            first: ast::TableOrSubquery::Table { indexed: ix, .. },
            ..
        }) = &mut core.from
        {
            *ix = indexed;
        }
    }
    sel.order_by = order_by.to_vec();
    sel.limit = limit.clone();
    sel
}
