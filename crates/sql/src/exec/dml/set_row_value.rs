//! Row-value assignments in UPDATE (lang_update.html): `SET (a, b) = (x, y)` and
//! `SET (a, b) = (SELECT x, y FROM ...)`, rewritten into one single-column assignment per
//! column before the UPDATE is bound, so every UPDATE path (direct, FROM, views with
//! INSTEAD OF triggers, EXPLAIN and EXPLAIN QUERY PLAN) sees only `SET a = e`.
//!
//! - `(a, b) = (x, y)`: `a = x`, `b = y`. Every value is computed from the old row, as any
//!   SET expression is.
//! - `(a, b) = (SELECT x, y ...)`: `a = (SELECT x ...)`, `b = (SELECT y ...)`, the
//!   subquery projected onto one of its result columns. The first row, which a scalar
//!   subquery yields, is the same row for each projection: ORDER BY and GROUP BY terms that
//!   name a result column (by number or alias) are replaced by its expression, and `*` is
//!   expanded to the columns of the FROM tables. A compound (UNION, INTERSECT, EXCEPT)
//!   runs whole as a FROM subquery, `SELECT rv_i FROM (...)`, which cannot see the
//!   UPDATE's row. Shapes whose columns are not known here (`*` over a subquery, a USING
//!   or NATURAL join) are an error naming the limitation.
//!
//! Invariants:
//! - The number of values must equal the number of columns: otherwise SQLite's
//!   `N columns assigned M values`.
//! - A subquery with volatile functions (random()) is evaluated once per column, so such
//!   values may differ from SQLite's, which evaluates it once per row.

use crate::parse::ast::{self, Expr, Literal, ResultColumn, SelectCore};
use crate::schema::Schema;
use crate::value::{Result, SqlError};

/// `u` with its row-value assignments split, or None when it has none.
pub fn expand(schema: &Schema, u: &ast::Update) -> Result<Option<ast::Update>> {
    if u.sets.iter().all(|a| a.columns.len() == 1) {
        return Ok(None);
    }
    let mut sets = Vec::with_capacity(u.sets.len());
    for a in &u.sets {
        if a.columns.len() == 1 {
            sets.push(a.clone());
            continue;
        }
        let n = a.columns.len();
        let values: Vec<Expr> = match &a.expr {
            Expr::Vector(v) => v.clone(),
            Expr::Subquery(s) => {
                let width = result_width(schema, s)?;
                if width != n {
                    return Err(mismatch(n, width));
                }
                (0..n)
                    .map(|i| project(schema, s, i).map(|p| Expr::Subquery(Box::new(p))))
                    .collect::<Result<_>>()?
            }
            _ => vec![a.expr.clone()],
        };
        if values.len() != n {
            return Err(mismatch(n, values.len()));
        }
        for (c, e) in a.columns.iter().zip(values) {
            sets.push(ast::Assignment {
                columns: vec![c.clone()],
                expr: e,
            });
        }
    }
    Ok(Some(ast::Update { sets, ..u.clone() }))
}

fn mismatch(columns: usize, values: usize) -> SqlError {
    SqlError::msg(format!("{columns} columns assigned {values} values"))
}

fn unsupported(what: &str) -> SqlError {
    SqlError::msg(format!(
        "row-value assignment from a subquery with {what} is not supported"
    ))
}

/// The result columns of a core, `*` and `t.*` expanded.
fn core_columns(schema: &Schema, core: &ast::SelectCoreSelect) -> Result<Vec<ResultColumn>> {
    let mut out = Vec::new();
    for rc in &core.columns {
        match rc {
            ResultColumn::Expr { .. } => out.push(rc.clone()),
            ResultColumn::Star | ResultColumn::TableStar(_) => {
                let only = match rc {
                    ResultColumn::TableStar(t) => Some(t.as_str()),
                    _ => None,
                };
                for (qualifier, table) in from_tables(schema, core)? {
                    if only.is_some_and(|o| !o.eq_ignore_ascii_case(&qualifier)) {
                        continue;
                    }
                    for c in &table.columns {
                        out.push(ResultColumn::Expr {
                            expr: Expr::Column {
                                schema: None,
                                table: Some(qualifier.clone()),
                                name: c.name.clone(),
                                dq: false,
                            },
                            alias: Some(c.name.clone()),
                            span: c.name.clone(),
                        });
                    }
                }
            }
        }
    }
    Ok(out)
}

/// The FROM clause's tables with the name that qualifies their columns.
fn from_tables(
    schema: &Schema,
    core: &ast::SelectCoreSelect,
) -> Result<Vec<(String, std::sync::Arc<crate::schema::Table>)>> {
    let Some(from) = &core.from else {
        return Ok(Vec::new());
    };
    let mut items = vec![&from.first];
    for j in &from.joins {
        if j.op.natural || matches!(j.constraint, Some(ast::JoinConstraint::Using(_))) {
            return Err(unsupported("`*` over a NATURAL or USING join"));
        }
        items.push(&j.table);
    }
    let mut out = Vec::new();
    for it in items {
        match it {
            ast::TableOrSubquery::Table { name, alias, .. } => {
                let Some(t) = schema.table_in(name.schema.as_deref(), &name.name) else {
                    return Err(unsupported("`*` over a view or an unknown table"));
                };
                out.push((
                    alias.clone().unwrap_or_else(|| name.name.clone()),
                    t.clone(),
                ));
            }
            _ => return Err(unsupported("`*` over a subquery or table function")),
        }
    }
    Ok(out)
}

/// How many columns the subquery returns.
fn result_width(schema: &Schema, s: &ast::Select) -> Result<usize> {
    Ok(match &s.body.first {
        SelectCore::Values(rows) => rows.first().map_or(0, Vec::len),
        SelectCore::Select(core) => core_columns(schema, core)?.len(),
    })
}

/// `s` returning only its column `i`.
fn project(schema: &Schema, s: &ast::Select, i: usize) -> Result<ast::Select> {
    if !s.body.compounds.is_empty() {
        return wrap(schema, s, i);
    }
    let mut out = s.clone();
    // ORDER BY terms naming a result column by number or alias: its expression.
    if let SelectCore::Select(core) = &s.body.first {
        let cols = core_columns(schema, core)?;
        for t in &mut out.order_by {
            if let Some(e) = named_column(&cols, &t.expr) {
                t.expr = e;
            }
        }
    }
    project_core(schema, &mut out.body.first, i)?;
    Ok(out)
}

/// A compound: `SELECT rv_i FROM (s)`, the first core's columns aliased `rv_0 ..` (ORDER
/// BY terms naming them by alias first resolved to their numbers). The compound then runs
/// whole, so INTERSECT, EXCEPT and ORDER BY on any column keep their rows; it cannot see
/// the UPDATE's row (a correlated compound is an error, `no such column`).
fn wrap(schema: &Schema, s: &ast::Select, i: usize) -> Result<ast::Select> {
    let mut inner = s.clone();
    let name = |k: usize| format!("rv_{k}");
    match &mut inner.body.first {
        SelectCore::Select(core) => {
            let cols = core_columns(schema, core)?;
            for t in &mut inner.order_by {
                if let Expr::Column {
                    schema: None,
                    table: None,
                    name: n,
                    ..
                } = &t.expr
                {
                    let k = cols.iter().position(|rc| match rc {
                        ResultColumn::Expr { alias: Some(a), .. } => a.eq_ignore_ascii_case(n),
                        ResultColumn::Expr {
                            expr: Expr::Column { name: c, .. },
                            alias: None,
                            ..
                        } => c.eq_ignore_ascii_case(n),
                        _ => false,
                    });
                    if let Some(k) = k {
                        t.expr = Expr::Literal(Literal::Integer(k as i64 + 1));
                    }
                }
            }
            core.columns = cols
                .into_iter()
                .enumerate()
                .map(|(k, rc)| match rc {
                    ResultColumn::Expr { expr, span, .. } => ResultColumn::Expr {
                        expr,
                        alias: Some(name(k)),
                        span,
                    },
                    other => other,
                })
                .collect();
        }
        SelectCore::Values(_) => {}
    }
    let column = match &inner.body.first {
        SelectCore::Values(_) => format!("column{}", i + 1),
        SelectCore::Select(_) => name(i),
    };
    let column_ref = ResultColumn::Expr {
        expr: Expr::Column {
            schema: None,
            table: None,
            name: column.clone(),
            dq: false,
        },
        alias: None,
        span: column,
    };
    let source = ast::TableOrSubquery::Subquery {
        select: Box::new(inner),
        alias: None,
    };
    Ok(ast::Select::of_source(None, vec![column_ref], source, None))
}

/// Keeps column `i` of a core; its GROUP BY terms that name result columns are resolved.
fn project_core(schema: &Schema, core: &mut SelectCore, i: usize) -> Result<()> {
    match core {
        SelectCore::Values(rows) => {
            for r in rows {
                let v = r.get(i).cloned().unwrap_or(Expr::Literal(Literal::Null));
                *r = vec![v];
            }
        }
        SelectCore::Select(c) => {
            let cols = core_columns(schema, c)?;
            for g in &mut c.group_by {
                if let Some(e) = named_column(&cols, g) {
                    *g = e;
                }
            }
            let Some(col) = cols.get(i).cloned() else {
                return Err(SqlError::msg(
                    "SELECTs to the left and right of UNION do not have the same number of result columns",
                ));
            };
            c.columns = vec![col];
        }
    }
    Ok(())
}

fn ordinal(e: &Expr) -> Option<usize> {
    match e {
        Expr::Literal(Literal::Integer(k)) => usize::try_from(*k).ok(),
        _ => None,
    }
}

/// The expression of the result column `e` names (a number, or a bare alias).
fn named_column(cols: &[ResultColumn], e: &Expr) -> Option<Expr> {
    let pick = |rc: &ResultColumn| match rc {
        ResultColumn::Expr { expr, .. } => Some(expr.clone()),
        _ => None,
    };
    if let Some(k) = ordinal(e) {
        return cols.get(k.checked_sub(1)?).and_then(pick);
    }
    if let Expr::Column {
        schema: None,
        table: None,
        name,
        ..
    } = e
    {
        return cols
            .iter()
            .find(|rc| {
                matches!(rc, ResultColumn::Expr { alias: Some(a), .. } if a.eq_ignore_ascii_case(name))
            })
            .and_then(pick);
    }
    None
}
