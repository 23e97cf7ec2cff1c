//! FOREIGN KEY enforcement (foreignkeys.html), active when `PRAGMA foreign_keys = ON`.
//!
//! Invariants and limits:
//! - Checks run per row right after the row is written. An immediate constraint is
//!   checked at the end of the statement (foreignkeys.html 4.2): inside a top-level
//!   INSERT, UPDATE or DELETE (`fk_statement`), a check that fails is recorded in
//!   `Engine::fk_pending` (the child key and the parent key it needs, as a deferred one)
//!   and re-run when the statement, its triggers and foreign-key actions are done; one
//!   still violated fails the statement with `FOREIGN KEY constraint failed`, and the
//!   connection's statement savepoint undoes it. So a statement that violates a key for a
//!   moment and repairs it succeeds (a self-referencing table renumbered by one UPDATE, a
//!   DELETE of a parent and its children, a child inserted before its parent). Outside
//!   such a statement (DDL) checks fail at once. RESTRICT fails at once, as SQLite.
//! - Deferred constraints (foreignkeys.html 4.2): a `DEFERRABLE INITIALLY DEFERRED` key,
//!   or every key while `PRAGMA defer_foreign_keys` is on, is deferred only inside an
//!   explicit transaction (`ConnState::explicit_txn`; in autocommit it is immediate, as
//!   SQLite checks it when the statement's implicit transaction commits). A deferred check
//!   that fails is recorded in `ConnState::fk_deferred` instead (the child key and parent
//!   key it needs) and `fk_check_deferred` re-runs every record at COMMIT (and at the
//!   outermost RELEASE): a violation still present fails COMMIT, which leaves the
//!   transaction open. SQLite keeps a counter instead; re-checking the recorded keys
//!   against the data gives the same answer once the transaction's writes are final,
//!   ROLLBACK TO included, except for a child row that was already orphaned before the
//!   transaction and shares a recorded key (SQLite does not count it; this fails COMMIT).
//!   RESTRICT is not deferred by DEFERRABLE but is by `defer_foreign_keys` (as SQLite's
//!   fkActionTrigger), and CASCADE / SET NULL / SET DEFAULT act at once.
//! - Parent-side actions (CASCADE, SET NULL, SET DEFAULT, RESTRICT / NO ACTION) run as
//!   ordinary DELETE/UPDATE statements on the child table, so they fire triggers and further
//!   foreign-key actions; their rows are not counted in changes(). A row deleted by
//!   REPLACE gets the same ON DELETE actions, except NO ACTION, checked only once the new
//!   row is written (`fk_parent_deleted_by_replace`), so a REPLACE keeping the key passes.
//! - A foreign key lives within one database, as in SQLite: the parent of a table in
//!   `aux` is `aux.parent` (temp's is temp's, main's is main's), and only tables of the
//!   parent's own database are its children. Statements this module builds name their
//!   tables qualified by that database, except while DDL or a PRAGMA runs with an attached
//!   database's schema swapped in (`in_attached`), where bare names already resolve there.
//! - `PRAGMA foreign_key_check` reports, for each table (or the one named) in name order,
//!   its rows in scan order and, per row, each violated key in `foreign_key_list` id order:
//!   (table, rowid or NULL for WITHOUT ROWID, parent, fkid). A key whose parent table does
//!   not exist is violated by every row whose child key has no NULL, as in SQLite.
//! - A parent key that is neither the INTEGER PRIMARY KEY nor UNIQUE is SQLite's "foreign
//!   key mismatch" error (`fkey/mismatch.rs`).

use super::dml::Written;
use super::store::Row;
use super::Engine;
use crate::parse::ast::{self, BinaryOp, Expr, Literal};
use crate::plan::Binder;
use crate::schema::{FkAction, ForeignKey, Table};
use crate::value::{codes, Result, SqlError, Value};
use std::sync::Arc;

mod mismatch;
pub(crate) use mismatch::FkWrite;

pub const SQLITE_CONSTRAINT_FOREIGNKEY: i32 = 787;

/// A NO ACTION check a REPLACE's delete defers until the new row is written: child rows
/// matching `child_cond` need a parent row matching `parent_cond`. Also the record of a
/// deferred check, re-run at COMMIT.
#[derive(Debug, Clone)]
pub struct FkNoAction {
    child: ast::QualifiedName,
    child_cond: Expr,
    parent: ast::QualifiedName,
    parent_cond: Expr,
}

fn fk_failed() -> SqlError {
    SqlError::Code {
        code: codes::SQLITE_CONSTRAINT,
        extended_code: SQLITE_CONSTRAINT_FOREIGNKEY,
        message: "FOREIGN KEY constraint failed".into(),
    }
}

fn lit(v: &Value) -> Expr {
    Expr::Literal(match v {
        Value::Null => Literal::Null,
        Value::Integer(i) => Literal::Integer(*i),
        Value::Real(r) => Literal::Float {
            value: *r,
            text: format!("{r:?}"),
        },
        Value::Text(s) => Literal::String(s.to_string()),
        Value::Blob(b) => Literal::Blob(b.to_vec()),
    })
}

/// `c1 = v1 AND c2 = v2 ...`
fn key_match(cols: &[String], vals: &[Value]) -> Option<Expr> {
    let mut out: Option<Expr> = None;
    for (c, v) in cols.iter().zip(vals) {
        let term = Expr::Binary(
            Box::new(Expr::Column {
                schema: None,
                table: None,
                name: c.clone(),
                dq: false,
            }),
            BinaryOp::Eq,
            Box::new(lit(v)),
        );
        out = Some(match out {
            None => term,
            Some(prev) => Expr::Binary(Box::new(prev), BinaryOp::And, Box::new(term)),
        });
    }
    out
}

impl Engine<'_> {
    pub(crate) fn fk_on(&self) -> bool {
        self.state.foreign_keys.get()
    }

    /// Whether `fk` is checked at COMMIT rather than at once (module invariants).
    fn fk_is_deferred(&self, fk: &ForeignKey) -> bool {
        self.state.explicit_txn.get() && (fk.deferred || self.state.defer_foreign_keys.get())
    }

    /// Runs a top-level INSERT, UPDATE or DELETE with its immediate foreign-key checks
    /// held to its end (module invariants): `Engine::fk_pending` collects the checks that
    /// failed while it ran, and any still failing afterwards fails the statement.
    pub(crate) fn fk_statement<T>(
        &mut self,
        run: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<T> {
        if !self.fk_on() || self.fk_pending.is_some() {
            return run(self);
        }
        self.fk_pending = Some(Vec::new());
        let r = run(self);
        let pending = self.fk_pending.take().unwrap_or_default();
        let out = r?;
        for p in pending {
            if self.still_violated(p.child, p.child_cond, p.parent, p.parent_cond)? {
                return Err(fk_failed());
            }
        }
        Ok(out)
    }

    /// Re-runs the transaction's deferred checks (COMMIT): fails with `FOREIGN KEY
    /// constraint failed` while a recorded child key still has no parent row.
    pub fn fk_check_deferred(&self) -> Result<()> {
        let pending = self.state.fk_deferred.borrow().clone();
        for p in pending {
            if self.still_violated(p.child, p.child_cond, p.parent, p.parent_cond)? {
                return Err(fk_failed());
            }
        }
        Ok(())
    }

    /// Whether a recorded check still fails: a child row with that key exists and no
    /// parent row does. A child table dropped since has no rows (its DROP deleted them); a
    /// parent table dropped since has none either (DROP TABLE's implicit DELETE).
    fn still_violated(
        &self,
        child: ast::QualifiedName,
        child_cond: Expr,
        parent: ast::QualifiedName,
        parent_cond: Expr,
    ) -> Result<bool> {
        let exists =
            |n: &ast::QualifiedName| self.schema.table_in(n.schema.as_deref(), &n.name).is_some();
        if !exists(&child) || !self.any_row(child, child_cond)? {
            return Ok(false);
        }
        Ok(!exists(&parent) || !self.any_row(parent, parent_cond)?)
    }

    /// The schema name that qualifies tables of `t`'s database in statements built here:
    /// None while an attached database's schema is swapped in (bare names resolve there).
    fn fk_db(&self, t: &Table) -> Option<String> {
        if t.root & super::store::TEMP_ROOT_BIT != 0 {
            return Some("temp".into());
        }
        match super::store::attached_slot(t.root) {
            None => Some("main".into()),
            Some(slot) => self.schema.attached.get(slot).map(|a| a.name.clone()),
        }
    }

    /// `t`'s name qualified by its database (see `fk_db`).
    pub(crate) fn fk_name(&self, t: &Table, name: &str) -> ast::QualifiedName {
        ast::QualifiedName {
            schema: self.fk_db(t),
            name: name.to_string(),
        }
    }

    /// The parent table of `fk` on child table `child`, in the child's database.
    fn parent_table(&self, fk: &ForeignKey, child: &Table) -> Option<Arc<Table>> {
        let q = self.fk_name(child, &fk.parent);
        self.schema.table_in(q.schema.as_deref(), &q.name).cloned()
    }

    /// The parent key column names of `fk` (its PRIMARY KEY when not listed).
    fn parent_key(&self, fk: &ForeignKey, child: &Table) -> Result<(Arc<Table>, Vec<String>)> {
        let Some(parent) = self.parent_table(fk, child) else {
            let db = self.fk_db(child).unwrap_or_else(|| {
                super::store::attached_slot(child.root)
                    .and_then(|s| self.outer_schema.as_ref()?.attached.get(s))
                    .map_or_else(|| "main".to_string(), |a| a.name.clone())
            });
            return Err(SqlError::msg(format!("no such table: {db}.{}", fk.parent)));
        };
        let cols = if !fk.parent_columns.is_empty() {
            fk.parent_columns.clone()
        } else if let Some(a) = parent.rowid_alias {
            vec![parent.columns[a].name.clone()]
        } else {
            let mut pk: Vec<(usize, String)> = parent
                .columns
                .iter()
                .filter(|c| c.pk > 0)
                .map(|c| (c.pk, c.name.clone()))
                .collect();
            pk.sort();
            pk.into_iter().map(|(_, n)| n).collect()
        };
        if cols.len() != fk.columns.len() {
            return Err(SqlError::msg(format!(
                "foreign key mismatch - \"{}\" referencing \"{}\"",
                child.name, fk.parent
            )));
        }
        Ok((parent, cols))
    }

    fn any_row(&self, table: ast::QualifiedName, cond: Expr) -> Result<bool> {
        let mut sel = ast::Select::of_table(
            None,
            vec![ast::ResultColumn::Expr {
                expr: Expr::Literal(Literal::Integer(1)),
                alias: None,
                span: "1".into(),
            }],
            table,
            None,
            None,
            Some(cond),
        );
        sel.limit = Some(ast::Limit {
            limit: Expr::Literal(Literal::Integer(1)),
            offset: None,
        });
        let plan = Binder::new(self.schema).bind_select(&sel)?;
        Ok(!self.exec().run_select(&plan, None)?.is_empty())
    }

    /// A child row (columns then rowid) must reference an existing parent row.
    pub fn fk_check_child(&mut self, t: &Table, row: &[Value]) -> Result<()> {
        if !self.fk_on() {
            return Ok(());
        }
        for fk in &t.fkeys {
            let vals: Vec<Value> = fk
                .columns
                .iter()
                .map(|&c| row.get(c).cloned().unwrap_or(Value::Null))
                .collect();
            // The parent table must exist even when this key is NULL (SQLite resolves it
            // when it compiles the statement).
            let (parent, cols) = self.parent_key(fk, t)?;
            if vals.iter().any(|v| v.is_null()) {
                continue;
            }
            let Some(cond) = key_match(&cols, &vals) else {
                continue;
            };
            let parent_name = self.fk_name(t, &parent.name);
            if !self.any_row(parent_name.clone(), cond.clone())? {
                let deferred = self.fk_is_deferred(fk);
                if !deferred && self.fk_pending.is_none() {
                    return Err(fk_failed());
                }
                let ccols: Vec<String> = fk
                    .columns
                    .iter()
                    .map(|&c| t.columns[c].name.clone())
                    .collect();
                if let Some(child_cond) = key_match(&ccols, &vals) {
                    let check = FkNoAction {
                        child: self.fk_name(t, &t.name),
                        child_cond,
                        parent: parent_name,
                        parent_cond: cond,
                    };
                    match self.fk_pending.as_mut() {
                        Some(pending) if !deferred => pending.push(check),
                        _ => self.state.fk_deferred.borrow_mut().push(check),
                    }
                }
            }
        }
        Ok(())
    }

    /// Whether a DELETE on `t` must see its rows one by one for foreign keys (SQLite's
    /// `sqlite3FkRequired` for a DELETE): checking is on and `t` is a child or a parent.
    pub(crate) fn fk_required_for_delete(&self, t: &Table) -> bool {
        self.fk_on() && (!t.fkeys.is_empty() || !self.children_of(t).is_empty())
    }

    /// Child foreign keys that reference `t`, from `t`'s own database: (child table, key).
    pub(crate) fn children_of(&self, t: &Table) -> Vec<(Arc<Table>, ForeignKey)> {
        let mut out = Vec::new();
        let db_bits = super::store::TEMP_ROOT_BIT | super::store::ATTACHED_MASK;
        let mut tables: Vec<&Arc<Table>> = self
            .schema
            .db_schema(t.root)
            .tables
            .values()
            .filter(|c| c.root & db_bits == t.root & db_bits)
            .collect();
        tables.sort_by(|a, b| a.name.cmp(&b.name));
        for c in tables {
            for fk in &c.fkeys {
                if fk.parent.eq_ignore_ascii_case(&t.name) {
                    out.push((c.clone(), fk.clone()));
                }
            }
        }
        out
    }

    /// Whether `t` is the parent of a foreign key and checking is on: a REPLACE that
    /// deletes one of its rows must then apply the ON DELETE actions.
    pub(crate) fn fk_is_parent(&self, t: &Table) -> bool {
        self.fk_on() && !self.children_of(t).is_empty()
    }

    /// Applies ON DELETE (`new` None) or ON UPDATE actions for a parent row that changed.
    pub fn fk_parent_changed(
        &mut self,
        t: &Table,
        old: &[Value],
        new: Option<&[Value]>,
    ) -> Result<()> {
        self.fk_parent_changed_in(t, old, new, None)
    }

    /// `fk_parent_changed` for a row a REPLACE deletes: NO ACTION keys are not checked now
    /// but pushed on `no_action`, to be checked by `fk_check_no_action` once the new row is
    /// written (SQLite counts the violation at the delete and takes it back when the new
    /// row brings the same key: a REPLACE keeping a referenced key is no violation).
    /// RESTRICT still fails at once, and CASCADE / SET NULL / SET DEFAULT act at once.
    pub(crate) fn fk_parent_deleted_by_replace(
        &mut self,
        t: &Table,
        old: &[Value],
        no_action: &mut Vec<FkNoAction>,
    ) -> Result<()> {
        self.fk_parent_changed_in(t, old, None, Some(no_action))
    }

    /// Fails when a deferred NO ACTION check finds child rows still referencing a parent
    /// key that no parent row holds any more.
    pub(crate) fn fk_check_no_action(&mut self, pending: Vec<FkNoAction>) -> Result<()> {
        if let Some(statement) = self.fk_pending.as_mut() {
            statement.extend(pending);
            return Ok(());
        }
        for p in pending {
            if self.any_row(p.child, p.child_cond)? && !self.any_row(p.parent, p.parent_cond)? {
                return Err(fk_failed());
            }
        }
        Ok(())
    }

    fn fk_parent_changed_in(
        &mut self,
        t: &Table,
        old: &[Value],
        new: Option<&[Value]>,
        mut no_action: Option<&mut Vec<FkNoAction>>,
    ) -> Result<()> {
        if !self.fk_on() {
            return Ok(());
        }
        for (child, fk) in self.children_of(t) {
            let (_, pcols) = self.parent_key(&fk, &child)?;
            let key_of = |row: &[Value]| -> Vec<Value> {
                pcols
                    .iter()
                    .map(|n| {
                        t.column_index(n)
                            .and_then(|i| row.get(i).cloned())
                            .unwrap_or(Value::Null)
                    })
                    .collect()
            };
            let old_key = key_of(old);
            if old_key.iter().any(|v| v.is_null()) {
                continue;
            }
            let new_key = new.map(key_of);
            if let Some(nk) = &new_key {
                if nk.iter().zip(&old_key).all(|(a, b)| {
                    a.compare(b, Default::default()) == std::cmp::Ordering::Equal
                        && a.value_type() == b.value_type()
                }) {
                    continue;
                }
            }
            let ccols: Vec<String> = fk
                .columns
                .iter()
                .map(|&c| child.columns[c].name.clone())
                .collect();
            let Some(cond) = key_match(&ccols, &old_key) else {
                continue;
            };
            let action = match if new.is_some() {
                fk.on_update
            } else {
                fk.on_delete
            } {
                // SQLite drops RESTRICT's immediate check under defer_foreign_keys (not for
                // a DEFERRABLE key): the key is then checked as a deferred NO ACTION.
                FkAction::Restrict
                    if self.state.explicit_txn.get() && self.state.defer_foreign_keys.get() =>
                {
                    FkAction::NoAction
                }
                a => a,
            };
            let target = self.fk_name(&child, &child.name);
            let deferred = self.fk_is_deferred(&fk);
            let at_statement_end = self.fk_pending.is_some();
            if action == FkAction::NoAction && (deferred || no_action.is_some() || at_statement_end)
            {
                let Some(parent_cond) = key_match(&pcols, &old_key) else {
                    continue;
                };
                let check = FkNoAction {
                    child: target,
                    child_cond: cond,
                    parent: self.fk_name(t, &t.name),
                    parent_cond,
                };
                match no_action.as_deref_mut() {
                    // Re-checked at COMMIT; recorded only when a child row refers to it now.
                    _ if deferred => {
                        if self.any_row(check.child.clone(), check.child_cond.clone())? {
                            self.state.fk_deferred.borrow_mut().push(check);
                        }
                    }
                    Some(pending) => pending.push(check),
                    // Immediate: re-checked at the end of the statement, when a child row
                    // refers to the key now.
                    None => {
                        if self.any_row(check.child.clone(), check.child_cond.clone())? {
                            if let Some(p) = self.fk_pending.as_mut() {
                                p.push(check);
                            }
                        }
                    }
                }
                continue;
            }
            self.nested_depth += 1;
            let r = match action {
                FkAction::NoAction | FkAction::Restrict => {
                    if self.any_row(target.clone(), cond)? {
                        Err(fk_failed())
                    } else {
                        Ok(())
                    }
                }
                FkAction::Cascade if new.is_none() => self
                    .delete(&ast::Delete {
                        with: None,
                        table: target,
                        alias: None,
                        indexed: None,
                        where_: Some(cond),
                        returning: Vec::new(),
                        order_by: Vec::new(),
                        limit: None,
                    })
                    .map(|_| ()),
                FkAction::Cascade | FkAction::SetNull | FkAction::SetDefault => {
                    let sets = ccols
                        .iter()
                        .enumerate()
                        .map(|(i, c)| {
                            let expr = match action {
                                FkAction::Cascade => new_key
                                    .as_ref()
                                    .map(|k| lit(&k[i]))
                                    .unwrap_or(Expr::Literal(Literal::Null)),
                                FkAction::SetDefault => child.columns[fk.columns[i]]
                                    .default
                                    .clone()
                                    .unwrap_or(Expr::Literal(Literal::Null)),
                                _ => Expr::Literal(Literal::Null),
                            };
                            ast::Assignment {
                                columns: vec![c.clone()],
                                expr,
                            }
                        })
                        .collect();
                    self.update(&ast::Update {
                        with: None,
                        or_conflict: None,
                        table: target,
                        alias: None,
                        indexed: None,
                        sets,
                        from: None,
                        where_: Some(cond),
                        returning: Vec::new(),
                        order_by: Vec::new(),
                        limit: None,
                    })
                    .map(|_| ())
                }
            };
            self.nested_depth -= 1;
            r?;
        }
        Ok(())
    }

    /// Post-write checks for a written row: the row as a child, and (for updates) the
    /// actions its old key owes to children.
    pub fn fk_after_write(
        &mut self,
        t: &Table,
        written: &Written,
        old: Option<&[Value]>,
    ) -> Result<()> {
        if !self.fk_on() {
            return Ok(());
        }
        let Some(row) = self.written_row(t, written)? else {
            return Ok(());
        };
        if let Some(o) = old {
            self.fk_parent_changed(t, o, Some(&row))?;
        }
        self.fk_check_child(t, &row)
    }
}

impl Engine<'_> {
    /// `PRAGMA foreign_key_check[(table)]` over the database whose schema is in scope (see
    /// the module invariants for the order of its rows).
    pub fn foreign_key_check(&self, table: Option<&str>) -> Result<Vec<Row>> {
        let tables: Vec<Arc<Table>> = match table {
            Some(name) => match self.schema.table(name) {
                Some(t) => vec![t.clone()],
                // The schema tables have no foreign keys (SQLite finds them: no rows).
                None if matches!(
                    crate::schema::key(name).as_str(),
                    "sqlite_schema" | "sqlite_master" | "sqlite_temp_schema" | "sqlite_temp_master"
                ) =>
                {
                    Vec::new()
                }
                None => {
                    // Inside `PRAGMA aux.foreign_key_check(t)` SQLite names the database.
                    let db = super::store::attached_slot(self.schema_root)
                        .and_then(|s| self.outer_schema.as_ref()?.attached.get(s))
                        .map(|a| format!("{}.", a.name))
                        .unwrap_or_default();
                    return Err(SqlError::msg(format!("no such table: {db}{name}")));
                }
            },
            None => {
                let mut v: Vec<Arc<Table>> = self
                    .schema
                    .tables
                    .values()
                    .filter(|t| {
                        t.root & (super::store::TEMP_ROOT_BIT | super::store::ATTACHED_MASK) == 0
                            || self.outer_schema.is_some()
                    })
                    .cloned()
                    .collect();
                v.sort_by(|a, b| a.name.cmp(&b.name));
                v
            }
        };
        let mut out = Vec::new();
        let exec = self.exec();
        for t in tables {
            if t.fkeys.is_empty() {
                continue;
            }
            // Each key's parent and the columns its child values are matched against; a
            // missing parent table leaves None (every non-NULL child key violates it).
            let mut keys = Vec::with_capacity(t.fkeys.len());
            for fk in t.fkeys.iter().rev() {
                keys.push(match self.parent_table(fk, &t) {
                    Some(_) => {
                        let (parent, cols) = self.parent_key(fk, &t)?;
                        if !self.parent_key_is_usable(&parent, &cols) {
                            return Err(mismatch::mismatch(&t, fk));
                        }
                        Some((parent, cols))
                    }
                    None => None,
                });
            }
            let rows: Vec<Row> = exec
                .table_rows(&t, exec.column_defaults(&t))?
                .collect::<Result<_>>()?;
            for row in rows {
                for (fkid, fk) in t.fkeys.iter().rev().enumerate() {
                    let vals: Vec<Value> = fk
                        .columns
                        .iter()
                        .map(|&c| row.get(c).cloned().unwrap_or(Value::Null))
                        .collect();
                    if vals.iter().any(|v| v.is_null()) {
                        continue;
                    }
                    let ok = match &keys[fkid] {
                        None => false,
                        Some((parent, cols)) => match key_match(cols, &vals) {
                            Some(cond) => self.any_row(self.fk_name(&t, &parent.name), cond)?,
                            None => true,
                        },
                    };
                    if !ok {
                        let rowid = if t.without_rowid {
                            Value::Null
                        } else {
                            row.get(t.columns.len()).cloned().unwrap_or(Value::Null)
                        };
                        out.push(vec![
                            Value::text(t.name.as_str()),
                            rowid,
                            Value::text(fk.parent.as_str()),
                            Value::Integer(fkid as i64),
                        ]);
                    }
                }
            }
        }
        Ok(out)
    }
}
