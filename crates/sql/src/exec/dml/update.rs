//! UPDATE (with FROM, ORDER BY/LIMIT and RETURNING) and INSTEAD OF triggers on views for
//! INSERT, UPDATE and DELETE. The affected rows are collected before any is written (dml.rs
//! invariants).

use super::super::eval::Frame;
use super::super::{Engine, RowChange};
use super::target::TargetClause;
use super::*;
use crate::parse::ast::{BinaryOp, UnaryOp};
use crate::schema::Schema;

/// Whether UPDATE `u`, run now, can fail after its first write only with an error that
/// ends the transaction (I/O, a full disk, a corrupt page): SQLite's UPDATE without a
/// statement journal (no trigger, no foreign key required, no constraint that may abort:
/// `sqlite3MayAbort` is never called). It then needs no statement savepoint, whose first
/// write of each page in every statement copied the page for the undo image
/// (BENCHMARKS.md, delupd branch). As for `single_write`, the connection ends the
/// transaction if such a statement fails after writing (`Txn::change_count`), so a wrong
/// `true` would cost the transaction, never leave half a statement behind.
///
/// Why it holds: the rows are all collected before the first write (dml.rs invariants);
/// then per row only the SET expressions run, and they are built of columns, literals,
/// parameters and operators that give NULL or REAL rather than an error (`value::arith`,
/// `bit_op`, `negate`); an assigned column has no NOT NULL, is in no PRIMARY KEY nor
/// UNIQUE index, the table has no CHECK, is not STRICT (type errors) and has no generated
/// column (its expression runs on the new row), and no index has an expression or a
/// predicate (either may run on the new values). A row keeps its rowid (none assigned),
/// so no REPLACE or clash can delete or stop anything. Kept: FROM, RETURNING, OR REPLACE,
/// foreign keys on, triggers (any), tables outside main.
pub(crate) fn update_writes_unchecked(schema: &Schema, state: &ConnState, u: &ast::Update) -> bool {
    if u.from.is_some()
        || !u.returning.is_empty()
        || u.or_conflict == Some(ConflictAction::Replace)
        || state.foreign_keys.get()
    {
        return false;
    }
    let Some(t) = main_table_without_triggers(schema, &u.table) else {
        return false;
    };
    if t.strict || !t.checks.is_empty() || t.columns.iter().any(|c| c.generated.is_some()) {
        return false;
    }
    // The assigned columns as a bit set (this runs for every UPDATE: no allocation).
    let mut assigned = 0u64;
    for a in &u.sets {
        let [name] = &a.columns[..] else {
            return false;
        };
        match t.column_index(name) {
            Some(i) if i < 64 && t.columns[i].not_null.is_none() && t.columns[i].pk == 0 => {
                assigned |= 1 << i
            }
            _ => return false,
        }
        if !never_fails(&a.expr) {
            return false;
        }
    }
    t.indexes
        .iter()
        .filter_map(|n| schema.indexes.get(n))
        .all(|ix| {
            ix.partial.is_none()
                && ix.columns.iter().all(|c| match c.column {
                    Some(i) => !ix.unique || i >= 64 || assigned & (1 << i) == 0,
                    None => false,
                })
        })
}

/// Whether evaluating `e` over a row can give no error: columns, literals, parameters and
/// the arithmetic, bitwise and sign operators over them (lang_expr.html: they give NULL
/// or switch to REAL where they cannot compute).
fn never_fails(e: &Expr) -> bool {
    match e {
        Expr::Literal(_) | Expr::Param { .. } | Expr::Column { .. } => true,
        Expr::Unary(UnaryOp::Neg | UnaryOp::Plus | UnaryOp::BitNot, x) => never_fails(x),
        Expr::Binary(l, op, r) => {
            matches!(
                op,
                BinaryOp::Add
                    | BinaryOp::Sub
                    | BinaryOp::Mul
                    | BinaryOp::Div
                    | BinaryOp::Rem
                    | BinaryOp::BitAnd
                    | BinaryOp::BitOr
                    | BinaryOp::Shl
                    | BinaryOp::Shr
            ) && never_fails(l)
                && never_fails(r)
        }
        _ => false,
    }
}

impl Engine<'_> {
    /// A view with INSTEAD OF triggers for `event`: its pseudo-table (views without such
    /// triggers fall through to `table_for_write`'s error).
    pub(super) fn instead_of_target(
        &self,
        name: &ast::QualifiedName,
        event: &TriggerEvent,
    ) -> Result<Option<Arc<Table>>> {
        if self.schema.table(&name.name).is_some()
            || !self.schema.views.contains_key(&key(&name.name))
        {
            return Ok(None);
        }
        let Some(v) = self.trigger_target(&name.name)? else {
            return Ok(None);
        };
        if self
            .triggers(&v.name, TriggerTime::InsteadOf, event)
            .is_empty()
        {
            return Ok(None);
        }
        Ok(Some(v))
    }

    /// INSERT into a view: each row goes to the INSTEAD OF triggers as NEW.
    pub(super) fn insert_into_view(
        &mut self,
        ins: &ast::Insert,
        v: Arc<Table>,
    ) -> Result<Vec<Vec<Value>>> {
        let n = v.columns.len();
        // RETURNING names the view's columns (bound before any row, so its errors come
        // first, as SQLite's).
        let returning = self.returning_exprs(&v, &ins.returning)?;
        let targets: Vec<Option<usize>> = if ins.columns.is_empty() {
            (0..n).map(Some).collect()
        } else {
            let mut out = Vec::new();
            for c in &ins.columns {
                match v.column_index(c) {
                    // Named again: SQLite keeps the first value (`insert_targets`).
                    Some(i) if out.contains(&Some(i)) => out.push(None),
                    Some(i) => out.push(Some(i)),
                    None => {
                        return Err(SqlError::msg(format!(
                            "table {} has no column named {}",
                            v.name, c
                        )))
                    }
                }
            }
            out
        };
        let rows: Vec<Vec<Value>> = match &ins.source {
            InsertSource::DefaultValues => vec![Vec::new()],
            InsertSource::Select(s) => {
                let mut b = self.binder_with_trigger_frame();
                if let Some(w) = &ins.with {
                    b.push_with(w);
                }
                let plan = b.bind_select(s)?;
                if plan.columns.len() != targets.len() {
                    return Err(SqlError::msg(format!(
                        "table {} has {} columns but {} values were supplied",
                        v.name,
                        n,
                        plan.columns.len()
                    )));
                }
                self.exec_with_parent(|ex, parent| ex.run_select(&plan, parent))?
            }
        };
        let trigs = self.triggers(&v.name, TriggerTime::InsteadOf, &TriggerEvent::Insert);
        let mut out = Vec::new();
        for src in rows {
            let mut newrow = vec![Value::Null; n + 1];
            for (i, c) in targets.iter().enumerate() {
                if let (Some(c), Some(x)) = (c, src.get(i)) {
                    newrow[*c] = x.clone();
                }
            }
            // A view row handed to INSTEAD OF triggers is no change of its own
            // (sqlite3_changes: "changes to a view that are intercepted by INSTEAD OF
            // triggers are not counted"); the triggers' own writes count in total_changes.
            self.fire(&trigs, None, Some(&newrow))?;
            // RETURNING is an AFTER trigger in SQLite, run once the INSTEAD OF ones have.
            if !returning.is_empty() {
                self.push_returning_row(&newrow, &returning, &mut out)?;
            }
        }
        Ok(out)
    }

    /// UPDATE or DELETE on a view: the matching view rows go to the INSTEAD OF triggers.
    pub(super) fn view_update_or_delete(
        &mut self,
        v: Arc<Table>,
        alias: &Option<String>,
        where_: &Option<Expr>,
        upd: Option<&ast::Update>,
        event: &TriggerEvent,
        returning: &[ResultColumn],
    ) -> Result<Vec<Vec<Value>>> {
        // The rows come from the view under its own name, whatever the statement's alias
        // (sqlite3MaterializeView names its subquery after the view): the WHERE may not
        // say `q.a`.
        let sel = ast::Select::of_table(
            upd.and_then(|u| u.with.clone()),
            vec![ResultColumn::Star],
            ast::QualifiedName::bare(v.name.clone()),
            None,
            None,
            where_.clone(),
        );
        let plan = self.binder_with_trigger_frame().bind_select(&sel)?;
        // SQLite then resolves the WHERE once more against the statement's own FROM item,
        // alias and all: a qualified name passes only if it names both (never, with an
        // alias).
        if let (Some(_), Some(w)) = (alias, where_) {
            let mut b = self.binder_with_trigger_frame();
            b.push_table_frame(&v, alias.as_deref());
            let r = b.bind_expr(w);
            b.pop_frame();
            r?;
        }
        let rows = self.exec_with_parent(|ex, parent| ex.run_select(&plan, parent))?;
        let mut sets: Vec<(usize, CExpr)> = Vec::new();
        if let Some(u) = upd {
            let mut b = self.binder_with_trigger_frame();
            b.push_table_frame(&v, alias.as_deref());
            let mut res = Ok(());
            for a in &u.sets {
                for c in &a.columns {
                    match (v.column_index(c), a.columns.len()) {
                        (Some(i), 1) => match b.bind_expr(&a.expr) {
                            Ok(e) => sets.push((i, e)),
                            Err(e) => res = Err(e),
                        },
                        (Some(_), _) => {
                            res = Err(SqlError::msg("row-value assignments are not supported"))
                        }
                        (None, _) => res = Err(SqlError::msg(format!("no such column: {c}"))),
                    }
                }
            }
            b.pop_frame();
            res?;
        }
        let returning = self.returning_exprs(&v, returning)?;
        let trigs = self.triggers(&v.name, TriggerTime::InsteadOf, event);
        let mut out = Vec::new();
        for mut old in rows {
            old.resize(v.columns.len() + 1, Value::Null);
            if upd.is_some() {
                let mut new = old.clone();
                {
                    let exec = self.exec();
                    let parent_row = self.trigger_row.clone();
                    let pf = parent_row.as_ref().map(|r| Frame::new(r, None));
                    let fr = Frame::new(&old, pf.as_ref());
                    for (c, e) in &sets {
                        new[*c] = exec.eval(e, &fr)?;
                    }
                }
                self.fire(&trigs, Some(&old), Some(&new))?;
                if !returning.is_empty() {
                    self.push_returning_row(&new, &returning, &mut out)?;
                }
            } else {
                self.fire(&trigs, Some(&old), None)?;
                if !returning.is_empty() {
                    self.push_returning_row(&old, &returning, &mut out)?;
                }
            }
            // Not counted, as for INSERT into a view above.
        }
        Ok(out)
    }

    /// UPDATE ... FROM: joins the target with the FROM tables and returns, per target row
    /// (the last match wins), the old row (columns, rowid) and the SET values.
    pub(super) fn update_from_rows(
        &self,
        u: &ast::Update,
        from: &ast::FromClause,
        ncols: usize,
    ) -> Result<(Vec<Vec<Value>>, Vec<Vec<Value>>)> {
        let tname = u.alias.clone().unwrap_or_else(|| u.table.name.clone());
        let mut columns = vec![
            ResultColumn::TableStar(tname),
            self.rowid_result_column(&u.table, u.alias.as_deref()),
        ];
        let wr = self
            .schema
            .table_in(u.table.schema.as_deref(), &u.table.name)
            .filter(|t| t.without_rowid)
            .map(|t| WrLayout::shared(t));
        for a in &u.sets {
            columns.push(ResultColumn::Expr {
                expr: a.expr.clone(),
                alias: None,
                span: String::new(),
            });
        }
        let mut joins = vec![ast::Join {
            op: ast::JoinOp {
                comma: true,
                natural: false,
                kind: ast::JoinKind::Inner,
            },
            table: from.first.clone(),
            constraint: None,
        }];
        joins.extend(from.joins.iter().cloned());
        let sel = ast::Select {
            with: u.with.clone(),
            body: ast::SelectBody {
                first: ast::SelectCore::Select(Box::new(ast::SelectCoreSelect {
                    distinct: false,
                    columns,
                    from: Some(ast::FromClause {
                        first: ast::TableOrSubquery::Table {
                            name: u.table.clone(),
                            alias: u.alias.clone(),
                            indexed: None,
                        },
                        joins,
                    }),
                    where_: u.where_.clone(),
                    group_by: Vec::new(),
                    having: None,
                    windows: Vec::new(),
                })),
                compounds: Vec::new(),
            },
            order_by: u.order_by.clone(),
            limit: u.limit.clone(),
        };
        let plan = self.binder_with_trigger_frame().bind_select(&sel)?;
        let all = self.exec_with_parent(|ex, parent| ex.run_select(&plan, parent))?;
        // Several join rows may match one target row; SQLite leaves the choice unspecified
        // and in practice the last one wins (each match updates the row again).
        let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
        let mut rows = Vec::new();
        let mut sets = Vec::new();
        for mut r in all {
            let id = match (&wr, r.get(ncols)) {
                (None, Some(Value::Integer(id))) => id.to_string(),
                (Some(layout), _) => format!("{:?}", layout.pk_of(&r[..ncols])),
                _ => continue,
            };
            let tail = r.split_off(ncols + 1);
            match seen.get(&id) {
                Some(&i) => sets[i] = tail,
                None => {
                    seen.insert(id, rows.len());
                    rows.push(r);
                    sets.push(tail);
                }
            }
        }
        Ok((rows, sets))
    }

    /// Rows (columns then rowid) of `table` matching `where_`, honouring ORDER BY/LIMIT
    /// and the statement's INDEXED BY / NOT INDEXED.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn matching_rows(
        &self,
        with: &Option<ast::With>,
        table: &ast::QualifiedName,
        alias: &Option<String>,
        indexed: &Option<ast::Indexed>,
        where_: &Option<Expr>,
        order_by: &[ast::OrderingTerm],
        limit: &Option<ast::Limit>,
    ) -> Result<Vec<Vec<Value>>> {
        let mut sel = ast::Select::of_table(
            with.clone(),
            vec![
                ResultColumn::Star,
                self.rowid_result_column(table, alias.as_deref()),
            ],
            table.clone(),
            alias.clone(),
            indexed.clone(),
            where_.clone(),
        );
        sel.order_by = order_by.to_vec();
        sel.limit = limit.clone();
        self.run_top_select(&sel)
    }

    /// The result column that completes the combined row of DML's target: its rowid, or
    /// NULL for a WITHOUT ROWID table (which has none; rows are found by their key).
    pub(super) fn rowid_result_column(
        &self,
        table: &ast::QualifiedName,
        alias: Option<&str>,
    ) -> ResultColumn {
        let wr = self
            .schema
            .table_in(table.schema.as_deref(), &table.name)
            .is_some_and(|t| t.without_rowid);
        if wr {
            return ResultColumn::Expr {
                expr: Expr::Literal(ast::Literal::Null),
                alias: None,
                span: "NULL".into(),
            };
        }
        ResultColumn::Expr {
            expr: Expr::Column {
                schema: None,
                table: Some(
                    alias
                        .map(str::to_string)
                        .unwrap_or_else(|| table.name.clone()),
                ),
                name: "rowid".into(),
                dq: false,
            },
            alias: None,
            span: "rowid".into(),
        }
    }

    pub fn update(&mut self, u: &ast::Update) -> Result<Vec<Vec<Value>>> {
        // `SET (a, b) = ...` becomes `SET a = ..., b = ...` (set_row_value.rs).
        if let Some(split) = super::set_row_value::expand(self.schema, u)? {
            return self.update(&split);
        }
        // The assigned column names, listed once for the INSTEAD OF, BEFORE/AFTER trigger
        // lookups and the foreign-key check (three copies cost ~2k instructions per UPDATE).
        // A reused prepared UPDATE keeps its table, triggers and bound SET clause
        // (exec::BoundDml).
        let keep = self.take_dml();
        let caching = keep.is_some();
        let (mut bound, resolve) = match keep {
            Some(Some(b)) => (b, false),
            _ => {
                let cols = u.sets.iter().flat_map(|a| a.columns.clone()).collect();
                let event = TriggerEvent::Update(cols);
                if let Some(v) = self.instead_of_target(&u.table, &event)? {
                    return self.view_update_or_delete(
                        v,
                        &u.alias,
                        &u.where_,
                        Some(u),
                        &event,
                        &u.returning,
                    );
                }
                let table = self.table_for_write(&u.table)?;
                let b = crate::exec::BoundDml {
                    table,
                    event,
                    sets: Vec::new(),
                    targets: Vec::new(),
                    before: Vec::new(),
                    after: Vec::new(),
                };
                (Box::new(b), true)
            }
        };
        let t = bound.table.clone();
        let set_columns: &[String] = match &bound.event {
            TriggerEvent::Update(cols) => cols,
            _ => &[],
        };
        self.fk_check_statement(&t, crate::exec::fkey::FkWrite::Update(set_columns))?;
        let mut w = self.writer(&t)?;
        w.replace_hooks = self.replace_needs_hooks(&w, u.or_conflict);
        let returning = self.returning_exprs(&t, &u.returning)?;
        let mut out_rows = Vec::new();
        if resolve {
            bound.sets = self.bind_update_sets(u, &t)?;
            bound.before = self.table_triggers(&t, TriggerTime::Before, &bound.event);
            bound.after = self.table_triggers(&t, TriggerTime::After, &bound.event);
        }
        w.skip_unchanged(bound.sets.iter().map(|(c, _)| *c));
        let r = self.update_rows(u, &w, &bound, &returning, &mut out_rows);
        if caching {
            self.keep_dml(bound);
        }
        r?;
        Ok(out_rows)
    }

    /// Binds UPDATE's SET expressions against the table row (columns then rowid).
    fn bind_update_sets(
        &self,
        u: &ast::Update,
        t: &Arc<Table>,
    ) -> Result<Vec<(Option<usize>, CExpr)>> {
        let mut b = self.binder_with_trigger_frame();
        if let Some(w) = &u.with {
            b.push_with(w);
        }
        b.push_table_frame(&t, u.alias.as_deref());
        let mut sets: Vec<(Option<usize>, CExpr)> = Vec::new();
        let mut bind_err = None;
        for a in &u.sets {
            if a.columns.len() != 1 {
                bind_err = Some(SqlError::msg(
                    "row-value assignments in UPDATE are not supported",
                ));
                break;
            }
            let c = &a.columns[0];
            let target = match t.column_index(c) {
                Some(i) if t.columns[i].generated.is_some() => {
                    bind_err = Some(SqlError::msg(format!(
                        "cannot UPDATE generated column \"{}\"",
                        t.columns[i].name
                    )));
                    break;
                }
                Some(i) => Some(i),
                None if !t.without_rowid
                    && ["rowid", "oid", "_rowid_"]
                        .iter()
                        .any(|r| r.eq_ignore_ascii_case(c)) =>
                {
                    None
                }
                None => {
                    bind_err = Some(SqlError::msg(format!("no such column: {c}")));
                    break;
                }
            };
            // With FROM the values are computed by the join (see update_from_rows).
            let bound = if u.from.is_some() {
                Ok(CExpr::Lit(Value::Null))
            } else {
                b.bind_expr(&a.expr)
            };
            match bound {
                Ok(e) => sets.push((target, e)),
                Err(e) => {
                    bind_err = Some(e);
                    break;
                }
            }
        }
        b.pop_frame();
        if let Some(e) = bind_err {
            return Err(e);
        }
        Ok(sets)
    }

    /// Finds and rewrites the rows of UPDATE `u` with its resolved table, triggers and SET
    /// clause (`bound`).
    fn update_rows(
        &mut self,
        u: &ast::Update,
        w: &TableWriter,
        bound: &crate::exec::BoundDml,
        returning: &[CExpr],
        out_rows: &mut Vec<Vec<Value>>,
    ) -> Result<()> {
        let t = &bound.table;
        let sets = &bound.sets[..];
        let ncols = t.columns.len();
        // With FROM, the SET values come out of the join; otherwise they are evaluated per
        // row below.
        let (rows, joined_sets): (Vec<Vec<Value>>, Option<Vec<Vec<Value>>>) = match &u.from {
            None => (
                self.targeted_rows(
                    &w,
                    &TargetClause {
                        with: &u.with,
                        table: &u.table,
                        alias: &u.alias,
                        indexed: &u.indexed,
                        where_: &u.where_,
                        order_by: &u.order_by,
                        limit: &u.limit,
                    },
                )?,
                None,
            ),
            Some(from) => {
                let (r, v) = self.update_from_rows(u, from, ncols)?;
                (r, Some(v))
            }
        };
        let (before, after) = (&bound.before, &bound.after);
        // The scanned values are still the stored row when nothing runs between the scan and
        // the rewrite that could change another matched row: no triggers, no foreign-key
        // actions, no REPLACE (which deletes clashing rows), no FROM (a row can match more
        // than once). Then the in-place rewrite needs
        // no second read of the row (speedtest1 test 250: table_get was 21% of the samples).
        let replace = Some(ConflictAction::Replace);
        let replacing = u.or_conflict == replace
            || t.pk_conflict == replace
            || w.indexes.iter().any(|(ix, ..)| ix.on_conflict == replace);
        // A table with generated columns reads them back (and writes STORED ones) through
        // `Exec::table_row`, so its rows are read again rather than taken from the scan.
        let scanned_is_stored = u.from.is_none()
            && !t.has_generated()
            && before.is_empty()
            && after.is_empty()
            && !self.state.foreign_keys.get()
            && !replacing;
        // Per index: whether this UPDATE leaves its key alone. Only plain-column keys of
        // full indexes on a table without generated columns are judged (an expression,
        // a predicate or a generated column may depend on an assigned column); an
        // assigned rowid moves the row, which `write_row_over` never treats as in place.
        let assigned: Vec<usize> = sets.iter().filter_map(|(c, _)| *c).collect();
        let unchanged: Vec<bool> = w
            .indexes
            .iter()
            .map(|(ix, _, pred, exprs)| {
                pred.is_none()
                    && !t.has_generated()
                    && exprs.iter().all(Option::is_none)
                    && ix
                        .columns
                        .iter()
                        .all(|c| c.column.is_none_or(|i| !assigned.contains(&i)))
            })
            .collect();
        // With triggers, foreign-key actions or REPLACE each row is read again at its turn
        // (`row_now`): a REPLACE for an earlier row may have deleted a later one, which
        // SQLite then skips (taken from the scan, it was written back: a deleted row
        // brought back to life).
        let reread = (u.from.is_none()
            && (!before.is_empty()
                || !after.is_empty()
                || self.state.foreign_keys.get()
                || replacing))
            .then(|| self.exec().column_defaults(t));
        for (ri, old) in rows.into_iter().enumerate() {
            // None: a WITHOUT ROWID row, found again by its key.
            let rowid = match old.get(ncols) {
                Some(Value::Integer(r)) => Some(*r),
                _ if w.wr.is_some() => None,
                _ => continue,
            };
            let old = match &reread {
                Some(defaults) => match self.row_now(w, &old, rowid, defaults)? {
                    Some(now) => now,
                    None => continue,
                },
                None => old,
            };
            let mut vals = old[..ncols].to_vec();
            let mut new_rowid = None;
            if let Some(js) = &joined_sets {
                for ((target, _), v) in sets.iter().zip(js[ri].iter()) {
                    match target {
                        Some(c) => vals[*c] = v.clone(),
                        None => new_rowid = Some(v.clone()),
                    }
                }
            } else {
                let exec = self.exec();
                let parent_row = self.trigger_row.clone();
                let pf = parent_row.as_ref().map(|r| Frame::new(r, None));
                let fr = Frame::new(&old, pf.as_ref());
                for (target, e) in sets {
                    let v = exec.eval(e, &fr)?;
                    match target {
                        Some(c) => vals[*c] = v,
                        None => new_rowid = Some(v),
                    }
                }
            }
            if !before.is_empty() {
                let mut newrow = vals.clone();
                newrow.push(rowid.map_or(Value::Null, Value::Integer));
                self.exec()
                    .compute_generated(&t, &w.generated, &mut newrow, false)?;
                if !self.fire(&before, Some(&old), Some(&newrow))? {
                    continue;
                }
                // The triggers may have changed or deleted this very row: SQLite skips a
                // row they deleted and keeps their values in the columns SET leaves alone.
                if let Some(defaults) = &reread {
                    let Some(now) = self.row_now(w, &old, rowid, defaults)? else {
                        continue;
                    };
                    for (c, v) in now.into_iter().enumerate().take(ncols) {
                        if !assigned.contains(&c) {
                            vals[c] = v;
                        }
                    }
                }
            }
            let stored = scanned_is_stored.then(|| Scanned {
                cols: &old[..ncols],
                unchanged: &unchanged,
            });
            let written = match rowid {
                Some(r) => {
                    self.write_row_replacing(&w, Some(r), vals, new_rowid, u.or_conflict, stored)?
                }
                None => {
                    self.write_row_wr_replacing(&w, Some(&old[..ncols]), vals, u.or_conflict)?
                }
            };
            if let Written::Row(rowid) = written {
                self.row_changed(RowChange::Update, &t, rowid);
            }
            self.fk_after_write(&t, &written, Some(&old))?;
            match &written {
                Written::Conflict { error, .. } | Written::KeyConflict { error, .. } => {
                    return Err(error.clone())
                }
                Written::Replacing { .. } => return Err(replacing_escaped()),
                Written::Row(_) | Written::Keyed(_) => {
                    self.count_change();
                    self.push_returning(t, &written, returning, out_rows)?;
                    if !after.is_empty() {
                        if let Some(newrow) = self.written_row(&t, &written)? {
                            self.fire(&after, Some(&old), Some(&newrow))?;
                        }
                    }
                }
                Written::Ignored => {}
            }
        }
        Ok(())
    }
}
