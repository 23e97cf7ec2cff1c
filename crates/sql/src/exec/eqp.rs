//! EXPLAIN QUERY PLAN: the rows (`id`, `parent`, `notused`, `detail`) SQLite 3.50 prints
//! for a query (eqp.html), worded from parlite's plan.
//!
//! - Each loop of a query is a `SCAN`/`SEARCH` row in SQLite's wording.
//! - A subquery in an expression is a `[CORRELATED ]SCALAR SUBQUERY N` (scalar, EXISTS) or
//!   `[CORRELATED ]LIST SUBQUERY N` (`x IN (SELECT ...)`) row over its own rows, after the
//!   loops of the query holding it (access keys first, then filters, then results) and
//!   before its ORDER BY sort. An uncorrelated list gets a `CREATE BLOOM FILTER` child; an
//!   IN whose right side is a bare column of one table is instead a single
//!   `USING ROWID SEARCH ON TABLE t FOR IN-OPERATOR` / `USING INDEX i FOR IN-OPERATOR` row,
//!   as SQLite then probes the table or index directly (sqlite3FindInIndex). An IN
//!   subquery that drives a lookup (`SEARCH t USING INDEX i (x=?)`) is always a `LIST
//!   SUBQUERY` row, right after that loop; a sorted subquery gets no Bloom filter.
//! - The temp b-trees SQLite opens (`plan::grouping` decides where the loop order spares
//!   them): `<agg>(DISTINCT)` before the loops (after the GROUP BY row when grouped),
//!   `GROUP BY` right after the loops, `DISTINCT` after the results' subqueries, and the
//!   ORDER BY's last (`ORDER BY`, `LAST TERM OF ORDER BY`, `LAST n TERMS OF ORDER BY`).
//! - A compound select without ORDER BY is a `COMPOUND QUERY` row over `LEFT-MOST
//!   SUBQUERY` and one row per further arm (`UNION ALL`, `UNION USING TEMP B-TREE`, ...).
//! - An aggregate or DISTINCT FROM subquery of this statement that is its query's only
//!   source (SQLite cannot flatten it) is a `CO-ROUTINE name` row over its rows, then the
//!   loop `SCAN name` (the alias, else `(subquery-N)`); so is such a view named once in the
//!   statement (`CO-ROUTINE v`, then `SCAN` of its alias), and an aggregate or VALUES CTE
//!   named once
//!   (`CO-ROUTINE c`, then `SCAN c`).
//! - A select without FROM is `SCAN CONSTANT ROW`; so is a one-row VALUES (as a select:
//!   INSERT ... VALUES of one row shows none, eqp_dml.rs). Several VALUES rows are
//!   `SCAN n-ROW VALUES CLAUSE` (also as a FROM subquery, which SQLite flattens), or
//!   `SCAN n CONSTANT ROWS` when a value holds a subquery or the statement a WITH; a CTE
//!   that is such a list is a `CO-ROUTINE name` over it, then `SCAN name`.
//!
//! Invariants:
//! - N is SQLite's select id: selects numbered in the order its parser finishes them (CTEs,
//!   then per core its subqueries left to right and then the core; a compound's ORDER BY
//!   and LIMIT belong to its last core; a subquery is named by its last core). The id is
//!   found through `SubPlan::origin`, the address of the AST select the plan was bound from,
//!   so it is only known for selects of the statement being explained (not views).
//! - Every row's `parent` is an earlier row's `id` or 0, so the rows draw a tree.
//! - Shapes not worded yet keep the flat rows they always had: other FROM subqueries,
//!   views named twice, CTEs other than an aggregate or VALUES one named once
//!   (`SCAN (subquery)`; SQLite flattens or materializes them), a compound
//!   with ORDER BY (SQLite's `MERGE (UNION)` over `LEFT`/`RIGHT`), recursive CTEs. A
//!   descending ORDER BY equal to the GROUP BY is sorted by parlite but, as in SQLite's
//!   plan, shows no row.

use crate::collation::Collation;
use crate::parse::ast::{self, CompoundOp};
use crate::plan::{
    grouping, Access, CExpr, CorePlan, JoinType, SelectPlan, SortKey, Source, SourceKind, SubPlan,
};
use crate::schema::Schema;
use crate::value::{Affinity, Value};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use super::store::Row;

/// The EXPLAIN QUERY PLAN rows of `plan`, bound from `sel`.
pub fn explain(schema: &Schema, sel: &ast::Select, plan: &SelectPlan) -> Vec<Row> {
    let mut ids = SelIds {
        schema: Some(schema),
        ..SelIds::default()
    };
    ids.select(sel);
    // A view named once in the statement is named as written there (its alias, else its
    // name); one named more often is left unnamed (its rows stay flat).
    for (addr, names) in std::mem::take(&mut ids.views) {
        if let [name] = names.as_slice() {
            ids.names.insert(addr, name.clone());
        }
    }
    // A CTE named more than once is materialized by SQLite (not worded yet): unnamed, its
    // rows stay flat.
    for (addr, name) in &ids.cte_names {
        if ids.cte_refs.get(name).copied() != Some(1) {
            ids.names.remove(addr);
        }
    }
    let mut e = Explainer {
        schema,
        sel_ids: ids.ids,
        names: ids.names,
        ctes: ids.ctes,
        has_with: ids.has_with,
        rows: Vec::new(),
        next_id: 2,
    };
    let _ = e.select(plan, 0);
    e.rows
}

/// The rows of a VALUES list of several rows, when `sp` is one (no ORDER BY or LIMIT).
fn values_rows(sp: &SubPlan) -> Option<&[Vec<CExpr>]> {
    let [c] = sp.plan.cores.as_slice() else {
        return None;
    };
    if sp.correlated || sp.plan.limit.is_some() || !sp.plan.order_by.is_empty() {
        return None;
    }
    c.values.as_deref().filter(|rows| rows.len() > 1)
}

/// SQLite's select ids of a statement's selects, by the address of their AST node.
#[derive(Default)]
struct SelIds<'a> {
    schema: Option<&'a Schema>,
    /// Per view (by the address of its stored select), its name and the name of each
    /// reference (the alias, else the view's name).
    views: HashMap<usize, Vec<(String, String)>>,
    next: i64,
    ids: HashMap<usize, i64>,
    /// FROM subqueries, views and CTEs: the names SQLite's rows give the co-routine and
    /// the loop scanning it (the alias, the view's or CTE's name, else `(subquery-N)`).
    names: HashMap<usize, (String, String)>,
    /// The CTEs' selects, by address.
    ctes: HashSet<usize>,
    /// Per CTE name (lowercase), how often a FROM clause of the statement names it.
    cte_refs: HashMap<String, usize>,
    /// Each CTE's name (lowercase), by the address of its select.
    cte_names: HashMap<usize, String>,
    /// Whether the statement has a WITH clause anywhere (SQLite's `bHasWith`).
    has_with: bool,
}

impl SelIds<'_> {
    fn select(&mut self, s: &ast::Select) {
        if let Some(w) = &s.with {
            self.has_with = true;
            for cte in &w.ctes {
                self.select(&cte.select);
                let addr = &*cte.select as *const ast::Select as usize;
                self.ctes.insert(addr);
                self.cte_names.insert(addr, cte.name.to_lowercase());
                self.names
                    .insert(addr, (cte.name.clone(), cte.name.clone()));
            }
        }
        let cores: Vec<&ast::SelectCore> = std::iter::once(&s.body.first)
            .chain(s.body.compounds.iter().map(|(_, c)| c))
            .collect();
        let last = cores.len().saturating_sub(1);
        for (i, core) in cores.into_iter().enumerate() {
            match core {
                ast::SelectCore::Select(c) => self.core(c),
                ast::SelectCore::Values(rows) => {
                    // Each row of a VALUES list is a select of its own, finished after
                    // that row's subqueries (the last row's number is the list's).
                    for (k, r) in rows.iter().enumerate() {
                        r.iter().for_each(|e| self.expr(e));
                        if k + 1 < rows.len() {
                            self.next += 1;
                        }
                    }
                }
            }
            if i == last {
                s.order_by.iter().for_each(|o| self.expr(&o.expr));
                if let Some(l) = &s.limit {
                    self.limit(l);
                }
            }
            self.next += 1;
        }
        self.ids.insert(s as *const ast::Select as usize, self.next);
    }

    fn limit(&mut self, l: &ast::Limit) {
        self.expr(&l.limit);
        if let Some(o) = &l.offset {
            self.expr(o);
        }
    }

    fn core(&mut self, c: &ast::SelectCoreSelect) {
        for rc in &c.columns {
            if let ast::ResultColumn::Expr { expr, .. } = rc {
                self.expr(expr);
            }
        }
        if let Some(f) = &c.from {
            self.from(f);
        }
        if let Some(w) = &c.where_ {
            self.expr(w);
        }
        c.group_by.iter().for_each(|e| self.expr(e));
        if let Some(h) = &c.having {
            self.expr(h);
        }
    }

    fn from(&mut self, f: &ast::FromClause) {
        self.table(&f.first);
        for j in &f.joins {
            self.table(&j.table);
            if let Some(ast::JoinConstraint::On(e)) = &j.constraint {
                self.expr(e);
            }
        }
    }

    fn table(&mut self, t: &ast::TableOrSubquery) {
        match t {
            ast::TableOrSubquery::Table {
                name,
                alias,
                indexed: None,
            } => {
                if name.schema.is_none() {
                    *self.cte_refs.entry(name.name.to_lowercase()).or_default() += 1;
                }
                if let Some(v) = self
                    .schema
                    .and_then(|sc| sc.view_in(name.schema.as_deref(), &name.name))
                {
                    let addr = &v.select as *const ast::Select as usize;
                    let shown = alias.clone().unwrap_or_else(|| name.name.clone());
                    self.views
                        .entry(addr)
                        .or_default()
                        .push((v.name.clone(), shown));
                }
            }
            ast::TableOrSubquery::Table { .. } => {}
            ast::TableOrSubquery::TableFunction { args, .. } => {
                args.iter().for_each(|e| self.expr(e))
            }
            ast::TableOrSubquery::Subquery { select, alias } => {
                self.select(select);
                let addr = &**select as *const ast::Select as usize;
                let name = match alias {
                    Some(a) => a.clone(),
                    None => format!("(subquery-{})", self.ids.get(&addr).copied().unwrap_or(0)),
                };
                self.names.insert(addr, (name.clone(), name));
            }
            ast::TableOrSubquery::Nested { from, .. } => self.from(from),
        }
    }

    /// The selects inside `e`, left to right (an explicit stack: any depth is safe).
    fn expr(&mut self, e: &ast::Expr) {
        let mut stack = vec![e];
        while let Some(e) = stack.pop() {
            match e {
                ast::Expr::Exists(s) | ast::Expr::Subquery(s) => self.select(s),
                ast::Expr::InSelect { expr, select, .. } => {
                    self.expr(expr);
                    self.select(select);
                    continue;
                }
                _ => {}
            }
            let mut children = Vec::new();
            e.for_each_child(&mut |c| children.push(c));
            stack.extend(children.into_iter().rev());
        }
    }
}

struct Explainer<'a> {
    schema: &'a Schema,
    sel_ids: HashMap<usize, i64>,
    names: HashMap<usize, (String, String)>,
    ctes: HashSet<usize>,
    has_with: bool,
    rows: Vec<Row>,
    next_id: i64,
}

impl Explainer<'_> {
    /// Adds a row under `parent`; returns its id.
    fn push(&mut self, parent: i64, detail: String) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.rows.push(vec![
            Value::Integer(id),
            Value::Integer(parent),
            Value::Integer(0),
            Value::text(detail),
        ]);
        id
    }

    /// The rows of `plan` under `parent`; returns the row later rows of this select hang
    /// from (the `COMPOUND QUERY` row of a compound, else `parent`).
    fn select(&mut self, plan: &SelectPlan, parent: i64) -> i64 {
        // LIMIT and OFFSET are computed before the first row is looked for.
        let limits: Vec<&CExpr> = plan.limit.iter().chain(plan.offset.iter()).collect();
        self.subqueries(&limits, &mut HashSet::new(), parent);
        if plan.cores.len() > 1 && plan.order_by.is_empty() {
            let top = self.push(parent, "COMPOUND QUERY".to_string());
            for (i, core) in plan.cores.iter().enumerate() {
                let head = match i.checked_sub(1).and_then(|k| plan.ops.get(k)) {
                    None => "LEFT-MOST SUBQUERY",
                    Some(CompoundOp::UnionAll) => "UNION ALL",
                    Some(CompoundOp::Union) => "UNION USING TEMP B-TREE",
                    Some(CompoundOp::Intersect) => "INTERSECT USING TEMP B-TREE",
                    Some(CompoundOp::Except) => "EXCEPT USING TEMP B-TREE",
                };
                let arm = self.push(top, head.to_string());
                self.core(core, &[], arm);
            }
            return top;
        }
        let keys: &[SortKey] = match plan.cores.as_slice() {
            [_] => &plan.order_by,
            _ => &[],
        };
        for core in &plan.cores {
            self.core(core, keys, parent);
        }
        let sort = match plan.cores.as_slice() {
            [core] => order_by_sort(core, &plan.order_by),
            _ => (!plan.order_by.is_empty()).then(|| "ORDER BY".to_string()),
        };
        if let Some(what) = sort {
            self.push(parent, format!("USE TEMP B-TREE FOR {what}"));
        }
        parent
    }

    /// The loops of `core`, each followed by the subqueries of its lookup keys and of the
    /// terms first tested at that loop (SQLite codes each loop's terms inside it), then the
    /// subqueries of grouping, aggregate arguments, HAVING and the results.
    ///
    /// The temp b-trees of the level come where SQLite opens them: a DISTINCT aggregate's
    /// before the loops (after the GROUP BY's when grouped), the GROUP BY sorter's right
    /// after the loops, a DISTINCT's after the results (`keys`: the select's ORDER BY).
    fn core(&mut self, core: &CorePlan, keys: &[SortKey], parent: i64) {
        let mut seen = HashSet::new();
        let distinct_aggs: Vec<String> = distinct_aggregates(core);
        if core.group_by.is_empty() {
            for a in &distinct_aggs {
                self.push(parent, format!("USE TEMP B-TREE FOR {a}"));
            }
        }
        match &core.values {
            None if core.sources.is_empty() => {
                self.push(parent, "SCAN CONSTANT ROW".to_string());
            }
            None => {}
            Some(rows) => {
                self.push(parent, values_detail(rows, self.has_with));
            }
        }
        let coroutine = self.coroutine(core);
        for (i, src) in core.sources.iter().enumerate() {
            let detail = match &coroutine {
                Some((sp, (name, shown))) => {
                    let node = self.push(parent, format!("CO-ROUTINE {name}"));
                    let _ = self.select(&sp.plan, node);
                    format!("SCAN {shown}")
                }
                None => match &src.kind {
                    // SQLite flattens a FROM subquery that is a bare VALUES list.
                    SourceKind::Subquery(sp) if !self.ctes.contains(&sp.origin) => {
                        match values_rows(sp) {
                            Some(rows) => values_detail(rows, self.has_with),
                            None => loop_detail(core, src),
                        }
                    }
                    _ => loop_detail(core, src),
                },
            };
            self.push(parent, detail);
            // An IN subquery driving the lookup is a LIST SUBQUERY row even when a bare
            // indexed column would be probed directly as a filter (SQLite codes the set).
            let driving: Vec<&CExpr> = match &src.access {
                Access::RowidEq(v) => v.iter().collect(),
                Access::Index { eq, .. } => eq.iter().flat_map(|(v, _)| v.iter()).collect(),
                _ => Vec::new(),
            };
            self.subqueries_as(&driving, &mut seen, parent, true);
            let mut exprs: Vec<&CExpr> = Vec::new();
            match &src.access {
                Access::Scan => {}
                Access::RowidEq(v) => exprs.extend(v),
                Access::RowidRange { lo, hi, .. } => {
                    exprs.extend(lo.iter().chain(hi.iter()).map(|(e, _)| e))
                }
                Access::Index { eq, lo, hi, .. } => {
                    exprs.extend(eq.iter().flat_map(|(v, _)| v.iter()));
                    exprs.extend(lo.iter().chain(hi.iter()).map(|(e, _)| e));
                }
                Access::AutoIndex { probe, .. } => exprs.push(probe),
            }
            exprs.extend(&src.on);
            if let Some(f) = core.filters.get(i) {
                exprs.extend(f);
            }
            self.subqueries(&exprs, &mut seen, parent);
        }
        // The pass over a RIGHT/FULL JOIN's unmatched rows, as SQLite shows it: a
        // "RIGHT-JOIN t" node over a scan of t.
        for src in &core.sources {
            let (true, SourceKind::Table(t)) = (src.join.keeps_right_rows(), &src.kind) else {
                continue;
            };
            let node = self.push(parent, format!("RIGHT-JOIN {}", t.name));
            self.push(node, format!("SCAN {}", t.name));
        }
        let as_group_by = grouping::order_by_is_distinct(core, keys);
        if core.is_agg && !core.group_by.is_empty() && grouping::group_by_sorts(core) {
            self.push(parent, "USE TEMP B-TREE FOR GROUP BY".to_string());
        }
        if as_group_by && distinct_sorts(core) {
            self.push(parent, "USE TEMP B-TREE FOR DISTINCT".to_string());
        }
        if !core.group_by.is_empty() {
            for a in &distinct_aggs {
                self.push(parent, format!("USE TEMP B-TREE FOR {a}"));
            }
        }
        let mut exprs: Vec<&CExpr> = Vec::new();
        // Filters of a FROM-less select.
        for f in core.filters.iter().skip(core.sources.len()) {
            exprs.extend(f);
        }
        exprs.extend(&core.group_by);
        for a in &core.aggs {
            exprs.extend(&a.args);
            exprs.extend(&a.filter);
        }
        exprs.extend(&core.having);
        exprs.extend(&core.outputs);
        if let Some(rows) = &core.values {
            exprs.extend(rows.iter().flatten());
        }
        self.subqueries(&exprs, &mut seen, parent);
        let distinct_table = if core.is_agg {
            core.distinct
        } else {
            core.distinct && !as_group_by && distinct_sorts(core)
        };
        if distinct_table {
            self.push(parent, "USE TEMP B-TREE FOR DISTINCT".to_string());
        }
    }

    /// The rows of the subqueries in `exprs`, left to right. A subquery reached twice (a
    /// filter that also keys a lookup) is shown once.
    fn subqueries(&mut self, exprs: &[&CExpr], seen: &mut HashSet<*const SubPlan>, parent: i64) {
        self.subqueries_as(exprs, seen, parent, false)
    }

    /// [`subqueries`](Self::subqueries); `driving`: the expressions are an access path's
    /// lookup values, where an IN subquery is the probe set.
    fn subqueries_as(
        &mut self,
        exprs: &[&CExpr],
        seen: &mut HashSet<*const SubPlan>,
        parent: i64,
        driving: bool,
    ) {
        for &e in exprs {
            let mut stack = vec![e];
            while let Some(e) = stack.pop() {
                match e {
                    CExpr::Scalar(sp) | CExpr::Exists(sp) | CExpr::Field { sub: sp, .. } => {
                        if seen.insert(Rc::as_ptr(sp)) {
                            self.scalar(sp, parent);
                        }
                    }
                    CExpr::InSelect {
                        sub, eaff, coll, ..
                    } => {
                        if seen.insert(Rc::as_ptr(sub)) {
                            self.list(sub, *eaff, *coll, parent, driving);
                        }
                    }
                    _ => {}
                }
                let mut children = Vec::new();
                e.for_each_child(&mut |c| children.push(c));
                stack.extend(children.into_iter().rev());
            }
        }
    }

    /// The FROM subquery SQLite runs as a co-routine and `core` scans, with its name: the
    /// only source of `core`, a subquery of this statement SQLite cannot flatten into the
    /// query (an aggregate or DISTINCT one). Other FROM subqueries keep `SCAN (subquery)`.
    fn coroutine(&self, core: &CorePlan) -> Option<(Rc<SubPlan>, (String, String))> {
        let [src] = core.sources.as_slice() else {
            return None;
        };
        let SourceKind::Subquery(sp) = &src.kind else {
            return None;
        };
        let [inner] = sp.plan.cores.as_slice() else {
            return None;
        };
        // A DISTINCT CTE SQLite may materialize instead (in an IN list): not worded yet.
        let shape = if self.ctes.contains(&sp.origin) {
            inner.is_agg || values_rows(sp).is_some()
        } else {
            inner.is_agg || inner.distinct
        };
        if sp.correlated || !shape {
            return None;
        }
        let name = self.names.get(&sp.origin)?;
        Some((Rc::clone(sp), name.clone()))
    }

    fn sel_id(&self, sp: &SubPlan) -> String {
        self.sel_ids
            .get(&sp.origin)
            .map(|n| format!(" {n}"))
            .unwrap_or_default()
    }

    fn scalar(&mut self, sp: &SubPlan, parent: i64) {
        let c = if sp.correlated { "CORRELATED " } else { "" };
        let node = self.push(parent, format!("{c}SCALAR SUBQUERY{}", self.sel_id(sp)));
        let _ = self.select(&sp.plan, node);
    }

    /// `driving`: the subquery is the probe set of a lookup, never probed directly.
    fn list(
        &mut self,
        sp: &SubPlan,
        eaff: Option<Affinity>,
        coll: Collation,
        parent: i64,
        driving: bool,
    ) {
        if !driving {
            if let Some(line) = self.in_operator(sp, eaff, coll) {
                self.push(parent, line);
                return;
            }
        }
        let c = if sp.correlated { "CORRELATED " } else { "" };
        let node = self.push(parent, format!("{c}LIST SUBQUERY{}", self.sel_id(sp)));
        let last = self.select(&sp.plan, node);
        // A sorted subquery's rows are not filtered by a Bloom filter (SQLite 3.50).
        if !sp.correlated && sp.plan.order_by.is_empty() {
            self.push(last, "CREATE BLOOM FILTER".to_string());
        }
    }

    /// SQLite's direct probe for `x IN (SELECT col FROM t)` (sqlite3FindInIndex): an
    /// uncorrelated, plain select of one column of one table, probed by rowid when the
    /// column is the rowid, else through an index whose first column it is (with the
    /// comparison's collation and an affinity that keeps the comparison).
    fn in_operator(&self, sp: &SubPlan, eaff: Option<Affinity>, coll: Collation) -> Option<String> {
        let plan = &sp.plan;
        let [core] = plan.cores.as_slice() else {
            return None;
        };
        if sp.correlated
            || plan.limit.is_some()
            || core.distinct
            || core.is_agg
            || core.values.is_some()
            || core.filters.iter().any(|f| !f.is_empty())
            || core.n_visible != 1
        {
            return None;
        }
        let [src] = core.sources.as_slice() else {
            return None;
        };
        let (SourceKind::Table(t), JoinType::Inner) = (&src.kind, src.join) else {
            return None;
        };
        let CExpr::Col { level: 0, idx } = core.outputs.first()? else {
            return None;
        };
        let col = idx.checked_sub(src.start)?;
        if col == t.columns.len() || t.rowid_alias == Some(col) {
            if t.without_rowid {
                return None;
            }
            return Some(format!(
                "USING ROWID SEARCH ON TABLE {} FOR IN-OPERATOR",
                t.name
            ));
        }
        let column = t.columns.get(col)?;
        if eaff.is_some_and(|a| a.is_numeric()) && !column.affinity.is_numeric() {
            return None;
        }
        self.schema
            .table_indexes(t)
            .into_iter()
            .find(|ix| {
                ix.partial.is_none()
                    && ix
                        .columns
                        .first()
                        .is_some_and(|ic| ic.column == Some(col) && ic.collation == coll)
            })
            .map(|ix| format!("USING INDEX {} FOR IN-OPERATOR", ix.name))
    }
}

/// The loop over a VALUES list: one row is a constant row; several are SQLite's co-routine
/// over the list (`SCAN n-ROW VALUES CLAUSE`) when every value is constant (no subquery),
/// the first row's carry no affinity (no CAST) and the statement has no WITH, else its compound of rows (`SCAN n
/// CONSTANT ROWS`, sqlite3MultiValues).
fn values_detail(rows: &[Vec<CExpr>], has_with: bool) -> String {
    let n = rows.len();
    if n == 1 {
        return "SCAN CONSTANT ROW".to_string();
    }
    // A first row whose values carry an affinity (a CAST), or a WITH anywhere in the
    // statement, keeps the compound.
    let mut constant = !has_with
        && !rows
            .first()
            .is_some_and(|r| r.iter().any(|e| matches!(e, CExpr::Cast { .. })));
    for e in rows.iter().flatten() {
        let mut stack = vec![e];
        while let Some(e) = stack.pop() {
            if matches!(
                e,
                CExpr::Scalar(_) | CExpr::Exists(_) | CExpr::Field { .. } | CExpr::InSelect { .. }
            ) {
                constant = false;
            }
            e.for_each_child(&mut |c| stack.push(c));
        }
    }
    if constant {
        format!("SCAN {n}-ROW VALUES CLAUSE")
    } else {
        format!("SCAN {n} CONSTANT ROWS")
    }
}

/// `<agg>(DISTINCT)` for each DISTINCT aggregate needing a temp b-tree of its own: all but
/// a lone one without GROUP BY whose argument the outer loop walks in order.
fn distinct_aggregates(core: &CorePlan) -> Vec<String> {
    let lone_ordered = match core.aggs.as_slice() {
        [a] if a.distinct && core.group_by.is_empty() => match a.args.as_slice() {
            [arg] => grouping::grouped(core, &[(arg, a.coll, false)], true).is_some(),
            _ => false,
        },
        _ => false,
    };
    core.aggs
        .iter()
        .filter(|a| a.distinct && !lone_ordered)
        .map(|a| format!("{}(DISTINCT)", a.def.name))
        .collect()
}

/// Whether a non-aggregate DISTINCT needs its temp b-tree: its rows are not known unique
/// (the rowid among the results of a one-table query) and the outer loop does not bring
/// equal results together.
fn distinct_sorts(core: &CorePlan) -> bool {
    let visible = &core.outputs[..core.n_visible.min(core.outputs.len())];
    if let [Source {
        kind: SourceKind::Table(t),
        ..
    }] = core.sources.as_slice()
    {
        if !t.without_rowid
            && visible
                .iter()
                .any(|e| grouping::source_column(core, e) == Some(t.columns.len()))
        {
            return false;
        }
    }
    let terms: Vec<(&CExpr, Collation, bool)> = visible
        .iter()
        .zip(
            core.distinct_colls
                .iter()
                .copied()
                .chain(std::iter::repeat(Collation::Binary)),
        )
        .map(|(e, c)| (e, c, false))
        .collect();
    grouping::grouped(core, &terms, true).is_none()
}

/// Which temp b-tree the select's ORDER BY (`keys`, those parlite still sorts by) takes in
/// SQLite's plan of `core`, if any: none when the groups (or a DISTINCT run as a GROUP BY)
/// already come in that order, `LAST TERM OF ORDER BY` / `LAST n TERMS OF ORDER BY` when
/// the outer loop yields all but the last / some leading terms, else `ORDER BY`.
fn order_by_sort(core: &CorePlan, keys: &[SortKey]) -> Option<String> {
    if keys.is_empty() {
        return None;
    }
    if core.is_agg {
        if !core.group_by.is_empty() && grouping::order_by_is_group_by(core, keys, false) {
            let terms: Vec<(&CExpr, Collation, bool)> = core
                .group_by
                .iter()
                .zip(keys)
                .map(|(g, k)| (g, k.coll, k.desc))
                .collect();
            if grouping::group_by_sorts(core) || grouping::grouped(core, &terms, true) == Some(true)
            {
                return None;
            }
        }
        return Some("ORDER BY".to_string());
    }
    if grouping::order_by_is_distinct(core, keys) {
        let visible = &core.outputs[..core.n_visible.min(core.outputs.len())];
        let terms: Vec<(&CExpr, Collation, bool)> = visible
            .iter()
            .zip(keys)
            .map(|(e, k)| (e, k.coll, false))
            .collect();
        return match grouping::grouped(core, &terms, true) {
            Some(false) => Some("ORDER BY".to_string()),
            _ => None,
        };
    }
    let n = grouping::ordered_prefix(core, keys);
    if n >= keys.len() {
        None
    } else if n == 0 {
        Some("ORDER BY".to_string())
    } else if n + 1 == keys.len() {
        Some("LAST TERM OF ORDER BY".to_string())
    } else {
        Some(format!("LAST {} TERMS OF ORDER BY", keys.len() - n))
    }
}

/// SQLite's wording of one loop (`SCAN t`, `SEARCH t USING INDEX i (a=?)`, ...).
fn loop_detail(core: &CorePlan, src: &Source) -> String {
    let detail = match (&src.kind, &src.access) {
        (SourceKind::Table(t), Access::Scan) => {
            format!("SCAN {}", t.name)
        }
        (SourceKind::Table(t), Access::RowidEq(_)) => {
            format!("SEARCH {} USING INTEGER PRIMARY KEY (rowid=?)", t.name)
        }
        (SourceKind::Table(t), Access::RowidRange { lo, hi, .. }) => {
            let cond = match (lo, hi) {
                (Some(_), Some(_)) => "rowid>? AND rowid<?",
                (Some(_), None) => "rowid>?",
                (None, Some(_)) => "rowid<?",
                // An unbounded range is a full scan in rowid order.
                (None, None) => "",
            };
            if cond.is_empty() {
                format!("SCAN {}", t.name)
            } else {
                format!("SEARCH {} USING INTEGER PRIMARY KEY ({cond})", t.name)
            }
        }
        (
            SourceKind::Table(t),
            Access::Index {
                index,
                eq,
                lo,
                hi,
                covering,
                ..
            },
        ) => {
            let kind = if *covering { "COVERING INDEX" } else { "INDEX" };
            // A WITHOUT ROWID table's PRIMARY KEY is the table tree itself.
            let primary = t.without_rowid && index.root == t.root;
            if primary && eq.is_empty() && lo.is_none() && hi.is_none() {
                // (never a min/max SEARCH, never LEFT-JOIN)
                return format!("SCAN {}", t.name);
            }
            // SQLite's names (explainIndexColumnName): an expression term
            // reads `<expr>`.
            let name = |i: usize| {
                index
                    .columns
                    .get(i)
                    .and_then(|ic| match (ic.column, &ic.expr) {
                        (Some(c), _) => t.columns.get(c).map(|col| col.name.clone()),
                        (None, Some(_)) => Some("<expr>".to_string()),
                        (None, None) => None,
                    })
            };
            let mut conds: Vec<String> = Vec::new();
            for (i, _) in eq.iter().enumerate() {
                if let Some(n) = name(i) {
                    conds.push(format!("{n}=?"));
                }
            }
            if let Some(n) = name(eq.len()) {
                // The planner swapped the bounds of a DESC column into key
                // order; SQLite words them as written.
                let desc = index.columns.get(eq.len()).is_some_and(|ic| ic.desc);
                let (gt, lt) = if desc { (hi, lo) } else { (lo, hi) };
                if gt.is_some() {
                    conds.push(format!("{n}>?"));
                }
                if lt.is_some() {
                    conds.push(format!("{n}<?"));
                }
            }
            if primary {
                format!(
                    "SEARCH {} USING PRIMARY KEY ({})",
                    t.name,
                    conds.join(" AND ")
                )
            } else if conds.is_empty() {
                format!("SCAN {} USING {kind} {}", t.name, index.name)
            } else {
                format!(
                    "SEARCH {} USING {kind} {} ({})",
                    t.name,
                    index.name,
                    conds.join(" AND ")
                )
            }
        }
        (SourceKind::Table(t), Access::AutoIndex { col, .. }) => {
            format!(
                "SEARCH {} USING AUTOMATIC COVERING INDEX ({}=?)",
                t.name,
                t.columns.get(*col).map(|c| c.name.as_str()).unwrap_or("?")
            )
        }
        (SourceKind::Subquery(_), _) => "SCAN (subquery)".to_string(),
        (SourceKind::Schema, _)
        | (SourceKind::AttachedSchema(_), _)
        | (SourceKind::TempSchema, _) => "SCAN sqlite_schema".to_string(),
        (SourceKind::Recursive(_), _)
        | (SourceKind::Working(_), _)
        | (SourceKind::Rows(_), _)
        | (SourceKind::PragmaFn { .. }, _) => "SCAN (recursive CTE)".to_string(),
        (SourceKind::JsonFn { recursive, .. }, _) => format!(
            "SCAN {} VIRTUAL TABLE INDEX 0:",
            if *recursive { "json_tree" } else { "json_each" }
        ),
    };
    // SQLite words every loop of a min/max query as a search (plan::minmax).
    let detail = match (&src.kind, detail.strip_prefix("SCAN ")) {
        (SourceKind::Table(_), Some(rest)) if core.min_max.is_flagged() => {
            format!("SEARCH {rest}")
        }
        _ => detail,
    };
    match src.join {
        JoinType::Left | JoinType::Full => {
            format!("{detail} LEFT-JOIN")
        }
        _ => detail,
    }
}
