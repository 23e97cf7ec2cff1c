//! The databases a statement's table references are qualified with: what SQLite's
//! sqlite3FixSelect / sqlite3FixTriggerStep check when a view or trigger is made. An object
//! stored in one database may not read another's tables by name (that database need not
//! be attached when the object is used): "view v cannot reference objects in database a".

use super::ast::{
    Expr, FromClause, InsertSource, JoinConstraint, ResultColumn, Select, SelectCore, Stmt,
    TableOrSubquery, UpsertAction,
};

/// The first database qualifier in `s` (its CTEs, FROM items, subqueries anywhere) that is
/// not `db`, in SQLite's order closely enough for one error.
pub fn foreign_db_in_select<'a>(s: &'a Select, db: &str) -> Option<&'a str> {
    let mut found = None;
    select(s, &mut |name| {
        if found.is_none() && !name.eq_ignore_ascii_case(db) {
            found = Some(name);
        }
    });
    found
}

/// As [`foreign_db_in_select`], for a trigger's WHEN and its program's statements.
pub fn foreign_db_in_trigger<'a>(
    when: Option<&'a Expr>,
    body: &'a [Stmt],
    db: &str,
) -> Option<&'a str> {
    let mut found = None;
    let mut note = |name: &'a str| {
        if found.is_none() && !name.eq_ignore_ascii_case(db) {
            found = Some(name);
        }
    };
    if let Some(w) = when {
        expr(w, &mut note);
    }
    for st in body {
        stmt(st, &mut note);
    }
    found
}

fn stmt<'a>(st: &'a Stmt, f: &mut dyn FnMut(&'a str)) {
    match st {
        Stmt::Select(s) => select(s, f),
        Stmt::Insert(i) => {
            if let InsertSource::Select(s) = &i.source {
                select(s, f);
            }
            for u in &i.upsert {
                if let Some(w) = u.target.as_ref().and_then(|t| t.where_.as_ref()) {
                    expr(w, f);
                }
                if let UpsertAction::Update { sets, where_ } = &u.action {
                    sets.iter().for_each(|a| expr(&a.expr, f));
                    where_.iter().for_each(|w| expr(w, f));
                }
            }
        }
        Stmt::Update(u) => {
            u.sets.iter().for_each(|a| expr(&a.expr, f));
            if let Some(fr) = &u.from {
                from(fr, f);
            }
            u.where_.iter().for_each(|w| expr(w, f));
        }
        Stmt::Delete(d) => d.where_.iter().for_each(|w| expr(w, f)),
        _ => {}
    }
}

fn select<'a>(s: &'a Select, f: &mut dyn FnMut(&'a str)) {
    if let Some(w) = &s.with {
        w.ctes.iter().for_each(|c| select(&c.select, f));
    }
    core(&s.body.first, f);
    s.body.compounds.iter().for_each(|(_, c)| core(c, f));
    s.order_by.iter().for_each(|o| expr(&o.expr, f));
    if let Some(l) = &s.limit {
        expr(&l.limit, f);
        l.offset.iter().for_each(|o| expr(o, f));
    }
}

fn core<'a>(c: &'a SelectCore, f: &mut dyn FnMut(&'a str)) {
    match c {
        SelectCore::Select(c) => {
            if let Some(fr) = &c.from {
                from(fr, f);
            }
            for rc in &c.columns {
                if let ResultColumn::Expr { expr: e, .. } = rc {
                    expr(e, f);
                }
            }
            c.where_.iter().for_each(|w| expr(w, f));
            c.group_by.iter().for_each(|g| expr(g, f));
            c.having.iter().for_each(|h| expr(h, f));
        }
        SelectCore::Values(rows) => rows.iter().flatten().for_each(|e| expr(e, f)),
    }
}

fn from<'a>(fr: &'a FromClause, f: &mut dyn FnMut(&'a str)) {
    item(&fr.first, f);
    for j in &fr.joins {
        item(&j.table, f);
        if let Some(JoinConstraint::On(e)) = &j.constraint {
            expr(e, f);
        }
    }
}

fn item<'a>(t: &'a TableOrSubquery, f: &mut dyn FnMut(&'a str)) {
    match t {
        TableOrSubquery::Table { name, .. } => name.schema.iter().for_each(|s| f(s)),
        TableOrSubquery::TableFunction { name, args, .. } => {
            name.schema.iter().for_each(|s| f(s));
            args.iter().for_each(|a| expr(a, f));
        }
        TableOrSubquery::Subquery { select: s, .. } => select(s, f),
        TableOrSubquery::Nested { from: fr, .. } => from(fr, f),
    }
}

fn expr<'a>(e: &'a Expr, f: &mut dyn FnMut(&'a str)) {
    match e {
        Expr::Exists(s) | Expr::Subquery(s) => select(s, f),
        Expr::InSelect { select: s, .. } => select(s, f),
        Expr::InTable { table, .. } => table.schema.iter().for_each(|s| f(s)),
        _ => {}
    }
    e.for_each_child(&mut |c| expr(c, f));
}
