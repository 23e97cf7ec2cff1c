//! INSERT (VALUES, SELECT, DEFAULT VALUES, with its conflict clauses and UPSERT) and the
//! RETURNING clause shared by INSERT, UPDATE and DELETE. Rows are checked and written by
//! `write_row`/`write_row_wr` (dml.rs), which hold the invariants.

use super::super::eval::Frame;
use super::super::{BoundDml, Engine, RowChange, Target};
use super::bulk_insert;
use super::*;
use crate::exec::select::chunk;
use crate::parse::ast::SelectCore;
use crate::plan::SelectPlan;
use crate::schema::Schema;

/// Whether `ins`, run now, writes at most one row and can fail only before its first
/// write or with an error that ends the transaction (I/O, a full disk): SQLite's INSERT
/// without a statement journal (no `sqlite3MultiWrite`). Such a statement needs no
/// statement savepoint, whose first write of each page in every statement copied the page
/// for the undo image (BENCHMARKS.md, inserts branch). The connection then ends the
/// transaction if the statement fails after writing anything (`Txn::change_count`), as
/// SQLite's VDBE halt does without a statement journal, so a wrong `true` here would cost
/// the transaction, never leave half a statement behind.
///
/// Why each condition holds it: the one row is computed (its VALUES terms, then DEFAULTs,
/// NOT NULL, CHECK and the rowid's clash probe in `write_row_over`) before anything is
/// written; with at most one UNIQUE index resolving by ABORT, that index's checked insert
/// is the row's first write (`write_row_over`), so a clash writes nothing; plain-column
/// index keys cannot fail to compute. A REPLACE writes one B-tree entry when the table has
/// no index but its own key: a rowid table's row is written over its rowid
/// (`blind_replace` in `write_row_over`), a WITHOUT ROWID row over its PRIMARY KEY
/// (`Store::index_put` in `write_row_wr`), and without triggers or foreign keys the row it
/// replaces is deleted by nothing else. SQLite runs such a REPLACE without a statement
/// journal too: `sqlite3GenerateConstraintChecks` calls `sqlite3MultiWrite` for a rowid
/// REPLACE only with an index, a trigger or a foreign key, and for a key's REPLACE only
/// with a trigger or a foreign key. A WITHOUT ROWID table
/// without secondary indexes writes only its key's entry (probed first, by
/// `write_row_wr`). Everything that writes more or checks after writing keeps the
/// savepoint: several rows, triggers (any), foreign keys (checked at the statement's
/// end), RETURNING, UPSERT, REPLACE with an index to keep (deletes first), AUTOINCREMENT
/// (writes `sqlite_sequence` before the checks), generated columns, expression or partial
/// indexes, WITHOUT ROWID tables with secondary indexes, and tables outside the main
/// database (their own savepoints).
pub(crate) fn single_write(schema: &Schema, state: &ConnState, ins: &ast::Insert) -> bool {
    let one_row = match &ins.source {
        InsertSource::DefaultValues => true,
        InsertSource::Select(s) => {
            s.with.is_none()
                && s.order_by.is_empty()
                && s.limit.is_none()
                && s.body.compounds.is_empty()
                && matches!(&s.body.first, SelectCore::Values(rows) if rows.len() == 1)
        }
    };
    if !one_row
        || ins.with.is_some()
        || !ins.upsert.is_empty()
        || !ins.returning.is_empty()
        || state.foreign_keys.get()
    {
        return false;
    }
    let Some(t) = main_table_without_triggers(schema, &ins.table) else {
        return false;
    };
    if t.autoincrement || t.columns.iter().any(|c| c.generated.is_some()) {
        return false;
    }
    // A main table's indexes are `schema`'s own (`table_indexes`), read here without
    // collecting them: this runs for every INSERT. A WITHOUT ROWID table's PRIMARY KEY
    // is the table's own tree (its root), not a second entry.
    let mut others = t
        .indexes
        .iter()
        .filter_map(|n| schema.indexes.get(n))
        .filter(|ix| !(t.without_rowid && ix.root == t.root));
    if t.without_rowid {
        return others.next().is_none();
    }
    let replace = Some(ConflictAction::Replace);
    if ins.or_conflict == replace || t.pk_conflict == replace {
        return others.next().is_none();
    }
    let mut unique = 0;
    for ix in others {
        if ix.partial.is_some()
            || ix.on_conflict == Some(ConflictAction::Replace)
            || ix.columns.iter().any(|c| c.column.is_none())
        {
            return false;
        }
        unique += usize::from(ix.unique);
    }
    unique <= 1
}

/// Where an INSERT's rows come from: all computed at once, or a SELECT fed in chunks
/// (`Engine::insert_source`).
enum SourceRows {
    All(Vec<Vec<Value>>),
    Chunks {
        plan: SelectPlan,
        resume: Option<i64>,
        done: bool,
    },
}

/// What every batch of one INSERT's rows is written with (`Engine::insert_batch`).
#[derive(Clone, Copy)]
struct BatchShape<'a> {
    targets: &'a [Target],
    is_default: bool,
    /// The columns left to their DEFAULT.
    unset: &'a [usize],
    /// The source row is the table row (every column in table order, no rowid).
    in_table_order: bool,
    triggers_before: &'a [Arc<crate::schema::Trigger>],
    triggers_after: &'a [Arc<crate::schema::Trigger>],
    or_conflict: Option<ConflictAction>,
    #[allow(clippy::type_complexity)]
    upserts: &'a [(
        Option<Vec<usize>>,
        Option<(Vec<(usize, CExpr)>, Option<CExpr>)>,
    )],
    returning: &'a [CExpr],
}

impl Engine<'_> {
    pub fn insert(&mut self, ins: &ast::Insert) -> Result<Vec<Vec<Value>>> {
        // A reused prepared INSERT keeps its table, triggers and target columns
        // (exec::BoundDml).
        let keep = self.take_dml();
        let caching = keep.is_some();
        let bound = match keep {
            Some(Some(b)) => b,
            _ => {
                if let Some(v) = self.instead_of_target(&ins.table, &TriggerEvent::Insert)? {
                    return self.insert_into_view(ins, v);
                }
                let t = self.table_for_write(&ins.table)?;
                let targets = insert_targets(&t, &ins.columns)?;
                let before = self.table_triggers(&t, TriggerTime::Before, &TriggerEvent::Insert);
                let after = self.table_triggers(&t, TriggerTime::After, &TriggerEvent::Insert);
                Box::new(BoundDml {
                    table: t,
                    event: TriggerEvent::Insert,
                    sets: Vec::new(),
                    targets,
                    before,
                    after,
                })
            }
        };
        let r = self.insert_rows(ins, &bound);
        if caching {
            self.keep_dml(bound);
        }
        r
    }

    /// Inserts the rows of INSERT `ins` into its resolved table.
    fn insert_rows(&mut self, ins: &ast::Insert, bound: &BoundDml) -> Result<Vec<Vec<Value>>> {
        let t = &bound.table;
        self.fk_check_statement(t, crate::exec::fkey::FkWrite::Insert)?;
        let mut w = self.writer(t)?;
        if t.autoincrement {
            self.ensure_sequence_row(t)?;
        }
        w.upsert = !ins.upsert.is_empty();
        let upserts = self.bind_upserts(t, ins)?;
        // A lone `ON CONFLICT DO NOTHING` without a target makes every uniqueness
        // conflict IGNORE, REPLACE ones included (SQLite's overrideError).
        let or_conflict = match upserts.as_slice() {
            [(None, None)] if ins.or_conflict.is_none() => Some(ConflictAction::Ignore),
            _ => ins.or_conflict,
        };
        w.replace_hooks = self.replace_needs_hooks(&w, or_conflict);
        let upsert_targets: Vec<Vec<usize>> =
            upserts.iter().map_while(|(tc, _)| tc.clone()).collect();
        w.upsert_targets_first(&upsert_targets);
        let returning = self.returning_exprs(&t, &ins.returning)?;
        let mut out_rows = Vec::new();
        let ncols = t.columns.len();
        let targets = &bound.targets;
        let (triggers_before, triggers_after) = (&bound.before, &bound.after);
        // Nothing sees the rows one by one: the bulk path may take them, and a SELECT
        // that reads only another table may feed them in chunks.
        let unobserved = triggers_before.is_empty()
            && triggers_after.is_empty()
            && returning.is_empty()
            && upserts.is_empty();
        let mut source = match &ins.source {
            InsertSource::DefaultValues => SourceRows::All(vec![Vec::new()]),
            InsertSource::Select(s) if ins.with.is_none() => {
                match crate::plan::values::constant_rows(s, self.params, targets.len()) {
                    Some(rows) => SourceRows::All(rows),
                    None => self.insert_source(ins, s, t, targets, unobserved)?,
                }
            }
            InsertSource::Select(s) => self.insert_source(ins, s, t, targets, unobserved)?,
        };
        let is_default = matches!(ins.source, InsertSource::DefaultValues);
        // Per statement, not per row: the columns left to their DEFAULT (every column for
        // DEFAULT VALUES), and whether the source row already is the table row (every
        // column in table order, no rowid), which then becomes the row without a copy.
        // Each source value is moved, not cloned, into the row written: a kv_ops INSERT
        // copied each text value three times (~0.6k instructions with the allocations).
        let unset: Vec<usize> = {
            let mut given = vec![false; ncols];
            if !is_default {
                for tg in targets {
                    if let Target::Column(c) = tg {
                        given[*c] = true;
                    }
                }
            }
            (0..ncols)
                .filter(|&c| !given[c] && w.defaults[c].is_some())
                .collect()
        };
        let in_table_order = !is_default
            && targets.len() == ncols
            && targets
                .iter()
                .enumerate()
                .all(|(i, tgt)| *tgt == Target::Column(i));
        while let Some(rows) = self.next_source_rows(&mut source)? {
            let rows = match unobserved {
                true => {
                    let map = bulk_insert::SourceMap {
                        targets,
                        is_default,
                    };
                    match self.insert_in_bulk(&w, rows, &map, or_conflict)? {
                        Some(rows) => rows,
                        None => continue,
                    }
                }
                false => rows,
            };
            self.insert_batch(
                &w,
                t,
                rows,
                &BatchShape {
                    targets,
                    is_default,
                    unset: &unset,
                    in_table_order,
                    triggers_before,
                    triggers_after,
                    or_conflict,
                    upserts: &upserts,
                    returning: &returning,
                },
                &mut out_rows,
            )?;
        }
        Ok(out_rows)
    }

    /// The next rows of an INSERT's source: all of them at once, or the next chunk of a
    /// SELECT fed in chunks; None when there are no more.
    fn next_source_rows(&self, source: &mut SourceRows) -> Result<Option<Vec<Vec<Value>>>> {
        match source {
            SourceRows::All(rows) => match rows.is_empty() {
                true => Ok(None),
                false => Ok(Some(std::mem::take(rows))),
            },
            SourceRows::Chunks { done: true, .. } => Ok(None),
            SourceRows::Chunks { plan, resume, done } => {
                let c = chunk::Chunking::with_limits(
                    chunk::INSERT_CHUNK_ROWS,
                    chunk::INSERT_CHUNK_BYTES,
                    *resume,
                );
                let mut ex = self.exec();
                ex.chunk = Some((&c, &plan.cores[0] as *const crate::plan::CorePlan));
                let rows = self.run_with_parent(&ex, |ex, parent| ex.run_select(plan, parent))?;
                *resume = c.stopped_at();
                *done = resume.is_none();
                Ok(Some(rows))
            }
        }
    }

    /// Writes one batch of an INSERT's source rows, row by row (triggers, conflict
    /// resolution, upserts, RETURNING).
    fn insert_batch(
        &mut self,
        w: &TableWriter,
        t: &Arc<Table>,
        rows: Vec<Vec<Value>>,
        shape: &BatchShape<'_>,
        out_rows: &mut Vec<Vec<Value>>,
    ) -> Result<()> {
        let BatchShape {
            targets,
            is_default,
            unset,
            in_table_order,
            triggers_before,
            triggers_after,
            or_conflict,
            upserts,
            returning,
        } = *shape;
        let ncols = t.columns.len();
        for mut src in rows {
            let mut rowid_in = None;
            let mut vals = if in_table_order && src.len() == ncols {
                src
            } else {
                let mut vals = vec![Value::Null; ncols];
                if !is_default {
                    for (i, tgt) in targets.iter().enumerate() {
                        let v = std::mem::take(&mut src[i]);
                        match tgt {
                            Target::Column(c) => vals[*c] = v,
                            Target::Rowid => rowid_in = Some(v),
                            Target::Repeat => {}
                        }
                    }
                }
                vals
            };
            for &c in unset {
                if let Some(v) = w.default_value(&self.exec(), c)? {
                    vals[c] = v;
                }
            }
            if !triggers_before.is_empty() {
                let mut newrow = vals.clone();
                for (i, c) in t.columns.iter().enumerate() {
                    newrow[i] = std::mem::take(&mut newrow[i]).apply_affinity(c.affinity);
                }
                let rid = t
                    .rowid_alias
                    .map(|a| vals[a].clone())
                    .or(rowid_in.clone())
                    .unwrap_or(Value::Integer(-1));
                newrow.push(if t.without_rowid {
                    Value::Null
                } else if rid.is_null() {
                    Value::Integer(-1)
                } else {
                    rid
                });
                self.exec()
                    .compute_generated(&t, &w.generated, &mut newrow, false)?;
                if !self.fire(triggers_before, None, Some(&newrow))? {
                    continue;
                }
            }
            // Only an upsert needs the proposed row again (its conflict comes back as
            // `Written::Conflict`/`KeyConflict` only when `w.upsert` is set).
            let (row, rowid_row) = match w.upsert {
                true => (vals.clone(), rowid_in.clone()),
                false => (std::mem::take(&mut vals), rowid_in.take()),
            };
            let mut result = if w.wr.is_some() {
                self.write_row_wr_replacing(&w, None, row, or_conflict)?
            } else {
                self.write_row_replacing(&w, None, row, rowid_row, or_conflict, None)?
            };
            if let Written::Row(rowid) = result {
                self.row_changed(RowChange::Insert, t, rowid);
            }
            let conflict = match std::mem::replace(&mut result, Written::Ignored) {
                Written::Conflict {
                    rowid,
                    columns,
                    error,
                } => Some((Existing::Rowid(rowid), columns, error)),
                Written::KeyConflict {
                    existing,
                    columns,
                    error,
                } => Some((Existing::Row(existing), Some(columns), error)),
                other => {
                    result = other;
                    None
                }
            };
            if let Some((existing, columns, error)) = conflict {
                result =
                    self.apply_upsert(&w, upserts, existing, columns, error, vals, rowid_in)?;
                if let Written::Row(rowid) = result {
                    self.row_changed(RowChange::Update, t, rowid);
                }
                if matches!(result, Written::Row(_) | Written::Keyed(_)) {
                    // An upsert's DO UPDATE counts as a change but is not an insert.
                    self.count_change();
                    self.push_returning(t, &result, returning, out_rows)?;
                    continue;
                }
            }
            self.fk_after_write(t, &result, None)?;
            match &result {
                Written::Conflict { error, .. } | Written::KeyConflict { error, .. } => {
                    return Err(error.clone())
                }
                Written::Replacing { .. } => return Err(replacing_escaped()),
                Written::Row(_) | Written::Keyed(_) => {
                    if let Written::Row(rowid) = result {
                        self.state.last_insert_rowid.set(rowid);
                    }
                    self.count_change();
                    self.push_returning(t, &result, returning, out_rows)?;
                    if !triggers_after.is_empty() {
                        if let Some(newrow) = self.written_row(t, &result)? {
                            self.fire(triggers_after, None, Some(&newrow))?;
                        }
                    }
                }
                Written::Ignored => {}
            }
        }
        Ok(())
    }

    /// The rows of an INSERT's SELECT or VALUES source, bound and run as a SELECT (the path
    /// for everything `plan::values::constant_rows` does not read directly). Where nothing
    /// observes the rows one by one (`unobserved`) and the SELECT reads one other table
    /// by a rowid scan (select/chunk.rs `feeds_insert`), they come in chunks, so a copy of
    /// a large table never holds all its rows.
    fn insert_source(
        &mut self,
        ins: &ast::Insert,
        s: &ast::Select,
        t: &Table,
        targets: &[Target],
        unobserved: bool,
    ) -> Result<SourceRows> {
        let mut b = self.binder_with_trigger_frame();
        if let Some(w) = &ins.with {
            b.push_with(w);
        }
        let plan = b.bind_select(s)?;
        let n = plan.columns.len();
        if n != targets.len() {
            return Err(SqlError::msg(if ins.columns.is_empty() {
                format!(
                    "table {} has {} columns but {} values were supplied",
                    t.name,
                    targets.len(),
                    n
                )
            } else {
                format!("{} values for {} columns", n, targets.len())
            }));
        }
        if unobserved && self.trigger_depth == 0 && chunk::feeds_insert(&plan, t) {
            return Ok(SourceRows::Chunks {
                plan,
                resume: None,
                done: false,
            });
        }
        self.exec_with_parent(|ex, parent| ex.run_select(&plan, parent))
            .map(SourceRows::All)
    }

    /// Binds the ON CONFLICT clauses: (target columns or None, DO UPDATE sets and WHERE).
    /// SET and WHERE see the existing row (the table's columns, rowid) then `excluded`.
    #[allow(clippy::type_complexity)]
    pub(super) fn bind_upserts(
        &self,
        t: &Table,
        ins: &ast::Insert,
    ) -> Result<
        Vec<(
            Option<Vec<usize>>,
            Option<(Vec<(usize, CExpr)>, Option<CExpr>)>,
        )>,
    > {
        let mut out = Vec::new();
        for u in &ins.upsert {
            let target = match &u.target {
                None => None,
                Some(tg) => {
                    let mut cols = Vec::new();
                    for ic in &tg.columns {
                        let Expr::Column { name, .. } = &ic.expr else {
                            return Err(SqlError::msg("ON CONFLICT clause does not match any PRIMARY KEY or UNIQUE constraint"));
                        };
                        match t.column_index(name) {
                            Some(c) => cols.push(c),
                            None => return Err(SqlError::msg(format!("no such column: {name}"))),
                        }
                    }
                    cols.sort_unstable();
                    let matches_pk = cols.len() == 1 && Some(cols[0]) == t.rowid_alias;
                    let matches_ix = self.schema.table_indexes(t).iter().any(|ix| {
                        let mut ic: Vec<usize> =
                            ix.columns.iter().filter_map(|c| c.column).collect();
                        ic.sort_unstable();
                        // A partial index is the target only of an ON CONFLICT whose WHERE
                        // is its WHERE (sqlite3UpsertAnalyzeTarget's sqlite3ExprCompare).
                        let partial_ok = match (&ix.partial, &tg.where_) {
                            (None, _) => true,
                            (Some(p), Some(w)) => same_expression(p, w),
                            (Some(_), None) => false,
                        };
                        ix.unique && partial_ok && ic == cols
                    });
                    if !matches_pk && !matches_ix {
                        return Err(SqlError::msg("ON CONFLICT clause does not match any PRIMARY KEY or UNIQUE constraint"));
                    }
                    Some(cols)
                }
            };
            let action = match &u.action {
                ast::UpsertAction::Nothing => None,
                ast::UpsertAction::Update { sets, where_ } => {
                    let mut b = self.binder_with_trigger_frame();
                    b.push_table_frame(t, ins.alias.as_deref());
                    b.add_pseudo_source("excluded", t, t.columns.len() + 1);
                    let mut bound = Vec::new();
                    let mut res: Result<()> = Ok(());
                    for a in sets {
                        for c in &a.columns {
                            match t.column_index(c) {
                                Some(ci) if t.columns[ci].generated.is_some() => {
                                    res = Err(SqlError::msg(format!(
                                        "cannot UPDATE generated column \"{}\"",
                                        t.columns[ci].name
                                    )))
                                }
                                Some(ci) if a.columns.len() == 1 => match b.bind_expr(&a.expr) {
                                    Ok(e) => bound.push((ci, e)),
                                    Err(e) => res = Err(e),
                                },
                                Some(_) => {
                                    res = Err(SqlError::msg(
                                        "row-value assignments are not supported",
                                    ))
                                }
                                None => res = Err(SqlError::msg(format!("no such column: {c}"))),
                            }
                        }
                    }
                    let wh = match (&res, where_) {
                        (Ok(()), Some(x)) => match b.bind_expr(x) {
                            Ok(e) => Some(e),
                            Err(e) => {
                                res = Err(e);
                                None
                            }
                        },
                        _ => None,
                    };
                    b.pop_frame();
                    res?;
                    Some((bound, wh))
                }
            };
            out.push((target, action));
        }
        Ok(out)
    }

    /// Resolves a uniqueness conflict through the first matching ON CONFLICT clause.
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    pub(super) fn apply_upsert(
        &mut self,
        w: &TableWriter,
        upserts: &[(
            Option<Vec<usize>>,
            Option<(Vec<(usize, CExpr)>, Option<CExpr>)>,
        )],
        existing: Existing,
        columns: Option<Vec<usize>>,
        error: SqlError,
        proposed: Vec<Value>,
        rowid_in: Option<Value>,
    ) -> Result<Written> {
        let t = &w.t;
        let conflict_cols: Vec<usize> = match columns {
            Some(mut c) => {
                c.sort_unstable();
                c
            }
            None => t.rowid_alias.into_iter().collect(),
        };
        let Some((_, action)) = upserts
            .iter()
            .find(|(target, _)| target.as_ref().map_or(true, |tc| *tc == conflict_cols))
        else {
            return Err(error);
        };
        let Some((sets, wh)) = action else {
            return Ok(Written::Ignored);
        };
        let old = match &existing {
            Existing::Rowid(rowid) => {
                let Some(stored) = self.store.table_get(t.root, *rowid)? else {
                    return Err(error);
                };
                let defaults = self.exec().column_defaults(t);
                self.exec().table_row(t, *rowid, stored, &defaults)?
            }
            Existing::Row(row) => row.clone(),
        };
        let mut excluded: Vec<Value> = proposed
            .iter()
            .zip(&t.columns)
            .map(|(v, c)| v.clone().apply_affinity(c.affinity))
            .collect();
        excluded.push(rowid_in.unwrap_or(Value::Null));
        self.exec()
            .compute_generated(t, &w.generated, &mut excluded, false)?;
        let mut row = old.clone();
        row.extend(excluded);
        let mut vals = old[..t.columns.len()].to_vec();
        {
            let exec = self.exec();
            let parent_row = self.trigger_row.clone();
            let pf = parent_row.as_ref().map(|r| Frame::new(r, None));
            let fr = Frame::new(&row, pf.as_ref());
            if let Some(x) = wh {
                if !exec.is_true(x, &fr)? {
                    return Ok(Written::Ignored);
                }
            }
            for (c, e) in sets {
                vals[*c] = exec.eval(e, &fr)?;
            }
        }
        let mut plain = TableWriter {
            parts: w.parts.clone(),
            upsert: false,
            replace_hooks: false,
            upsert_first: 0,
            upsert_key: false,
            replace_scratch: Default::default(),
            unchanged: Vec::new(),
            checks_skipped: Vec::new(),
        };
        // DO UPDATE is an UPDATE of the existing row (sqlite3UpsertDoUpdate): its BEFORE
        // and AFTER UPDATE triggers fire (UPDATE OF the assigned columns) and its foreign
        // keys are checked and acted on as an UPDATE's.
        plain.skip_unchanged(sets.iter().map(|(c, _)| Some(*c)));
        let event = TriggerEvent::Update(
            sets.iter()
                .map(|(c, _)| t.columns[*c].name.clone())
                .collect(),
        );
        let before = self.table_triggers(t, TriggerTime::Before, &event);
        let after = self.table_triggers(t, TriggerTime::After, &event);
        if !before.is_empty() {
            let mut newrow = vals.clone();
            newrow.push(match &existing {
                Existing::Rowid(rowid) => Value::Integer(*rowid),
                Existing::Row(_) => Value::Null,
            });
            self.exec()
                .compute_generated(t, &w.generated, &mut newrow, false)?;
            if !self.fire(&before, Some(&old), Some(&newrow))? {
                return Ok(Written::Ignored);
            }
        }
        let written = match existing {
            Existing::Rowid(rowid) => self.write_row(&plain, Some(rowid), vals, None, None)?,
            Existing::Row(row) => {
                self.write_row_wr(&plain, Some(&row[..t.columns.len()]), vals, None)?
            }
        };
        self.fk_after_write(t, &written, Some(&old))?;
        if matches!(written, Written::Row(_) | Written::Keyed(_)) && !after.is_empty() {
            if let Some(newrow) = self.written_row(t, &written)? {
                self.fire(&after, Some(&old), Some(&newrow))?;
            }
        }
        Ok(written)
    }

    /// Binds RETURNING expressions against the table row (columns, then rowid). The
    /// table goes by its own name there, not the statement's alias (SQLite runs RETURNING
    /// as a trigger on the table: `UPDATE t AS q ... RETURNING q.a` is "no such column").
    pub fn returning_exprs(&self, t: &Table, cols: &[ResultColumn]) -> Result<Vec<CExpr>> {
        let mut out = Vec::new();
        if cols.is_empty() {
            return Ok(out);
        }
        let mut b = self.binder_with_trigger_frame();
        b.push_table_frame(t, None);
        let mut res = Ok(());
        for rc in cols {
            match rc {
                ResultColumn::Star => {
                    for i in 0..t.columns.len() {
                        out.push(CExpr::Col { level: 0, idx: i });
                    }
                }
                ResultColumn::TableStar(_) => {
                    res = Err(SqlError::msg("RETURNING may not use \"TABLE.*\" wildcards"));
                    break;
                }
                ResultColumn::Expr { expr, .. } => match b.bind_expr(expr) {
                    Ok(e) => out.push(e),
                    Err(e) => {
                        res = Err(e);
                        break;
                    }
                },
            }
        }
        b.pop_frame();
        res.map(|_| out)
    }

    /// Evaluates RETURNING for the row a write stored.
    pub(super) fn push_returning(
        &self,
        t: &Table,
        written: &Written,
        exprs: &[CExpr],
        out: &mut Vec<Vec<Value>>,
    ) -> Result<()> {
        if exprs.is_empty() {
            return Ok(());
        }
        let Some(row) = self.written_row(t, written)? else {
            return Ok(());
        };
        self.push_returning_row(&row, exprs, out)
    }

    pub(super) fn push_returning_row(
        &self,
        row: &[Value],
        exprs: &[CExpr],
        out: &mut Vec<Vec<Value>>,
    ) -> Result<()> {
        let exec = self.exec();
        let parent_row = self.trigger_row.clone();
        let pf = parent_row.as_ref().map(|r| Frame::new(r, None));
        let fr = Frame::new(row, pf.as_ref());
        let mut r = Vec::with_capacity(exprs.len());
        for e in exprs {
            r.push(exec.eval(e, &fr)?);
        }
        out.push(r);
        Ok(())
    }
}

/// Where each value of an INSERT's source goes: the columns that are not generated, in
/// table order, without a column list. With one, as sqlite3Insert: a column named twice
/// keeps its first value, except the rowid — the alias column and `rowid`/`oid`/`_rowid_`
/// name the same thing, and the last of them named gives it (`ipkColumn` is overwritten).
fn insert_targets(t: &Table, columns: &[String]) -> Result<Vec<Target>> {
    if columns.is_empty() {
        return Ok((0..t.columns.len())
            .filter(|&i| t.columns[i].generated.is_none())
            .map(Target::Column)
            .collect());
    }
    let mut v: Vec<Target> = Vec::with_capacity(columns.len());
    let mut rowid_at = None;
    for c in columns {
        let target = match t.column_index(c) {
            Some(i) if t.columns[i].generated.is_some() => {
                return Err(SqlError::msg(format!(
                    "cannot INSERT into generated column \"{}\"",
                    t.columns[i].name
                )))
            }
            Some(i) if t.rowid_alias == Some(i) => None,
            Some(i) if v.contains(&Target::Column(i)) => Some(Target::Repeat),
            Some(i) => Some(Target::Column(i)),
            None if !t.without_rowid
                && ["rowid", "oid", "_rowid_"]
                    .iter()
                    .any(|r| r.eq_ignore_ascii_case(c)) =>
            {
                None
            }
            None => {
                return Err(SqlError::msg(format!(
                    "table {} has no column named {}",
                    t.name, c
                )))
            }
        };
        match target {
            Some(tg) => v.push(tg),
            // The rowid: this value gives it, an earlier one that named it is dropped.
            None => {
                if let Some(at) = rowid_at.replace(v.len()) {
                    v[at] = Target::Repeat;
                }
                v.push(t.rowid_alias.map_or(Target::Rowid, Target::Column));
            }
        }
    }
    Ok(v)
}

/// Whether two expressions are the same up to the letter case of names and keywords (as
/// sqlite3ExprCompare before resolution): compared token by token in their canonical text.
fn same_expression(a: &Expr, b: &Expr) -> bool {
    use crate::parse::lexer::{Lexer, Tok};
    let (ta, tb) = (a.to_string(), b.to_string());
    let (mut la, mut lb) = (Lexer::new(&ta), Lexer::new(&tb));
    loop {
        let (x, y) = (la.next_token().tok, lb.next_token().tok);
        let same = match (&x, &y) {
            (Tok::Word(p), Tok::Word(q)) => p.eq_ignore_ascii_case(q),
            (Tok::QuotedId { name: p, .. }, Tok::QuotedId { name: q, .. }) => {
                p.eq_ignore_ascii_case(q)
            }
            _ => x == y,
        };
        if !same {
            return false;
        }
        if x == Tok::Eof {
            return true;
        }
    }
}
