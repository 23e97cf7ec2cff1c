//! ALTER TABLE RENAME through views and triggers, as SQLite does it (alter.c,
//! legacy_alter_table off): each view and trigger is parsed again with the span of every
//! name recorded (`Parser::with_name_spans`), bound with the binder logging what each name
//! resolved to (`Binder::rename_log`), and its text edited at exactly the names that
//! resolved to the renamed table or column. A name that merely reads the same (another
//! table's column, an alias, a CTE or subquery column, a string) resolves elsewhere and is
//! left as written.
//!
//! Invariants:
//! - Only names the binder resolved are edited; the rest of the text is kept byte for byte.
//! - A view or trigger that does not resolve is an error, before the rename ("error in view
//!   v: ...") as after it ("error in view v after rename: ..."), and the statement changes
//!   nothing (the connection rolls it back).

use super::Engine;
use crate::parse::ast::{self, Stmt};
use crate::parse::{NameSpan, Parser};
use crate::plan::bind::{NameRef, RenameLog};
use crate::plan::Binder;
use crate::value::{Result, SqlError, Value};

/// What is being renamed.
pub(super) enum Renaming<'a> {
    Table {
        old: &'a str,
        new: &'a str,
    },
    /// `quoted`: the new name was written quoted in the ALTER statement; `rowid_alias`:
    /// the column is the table's INTEGER PRIMARY KEY, which SQLite identifies with the
    /// rowid, so `rowid` references are renamed too (renameColumnFunc's iCol of -1).
    Column {
        table: &'a str,
        old: &'a str,
        new: &'a str,
        quoted: bool,
        rowid_alias: bool,
    },
}

impl Renaming<'_> {
    fn is_renamed(&self, r: &NameRef) -> bool {
        match (self, r) {
            (Renaming::Table { old, .. }, NameRef::Table { table, .. }) => {
                table.eq_ignore_ascii_case(old)
            }
            (
                Renaming::Column {
                    table: t, old: c, ..
                },
                NameRef::Column { table, column, .. },
            ) => table.eq_ignore_ascii_case(t) && column.eq_ignore_ascii_case(c),
            (
                Renaming::Column {
                    table: t,
                    rowid_alias: true,
                    ..
                },
                NameRef::Rowid { table, .. },
            ) => table.eq_ignore_ascii_case(t),
            _ => false,
        }
    }
}

/// The text that replaces the name token `sql[start..end]` (alter.c renameEditSql): the new
/// name bare when it was written bare and the old token was a bare word, else double-quoted
/// (a table's new name always is); a space follows when the next byte is a `"`, so two
/// quoted names never run together.
pub(super) fn replacement(sql: &str, start: usize, end: usize, new: &str, quote: bool) -> String {
    let bare_old = sql
        .as_bytes()
        .get(start)
        .is_some_and(|&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80);
    if !quote && bare_old {
        return new.to_string();
    }
    let mut q = format!("\"{}\"", new.replace('"', "\"\""));
    if sql.as_bytes().get(end) == Some(&b'"') {
        q.push(' ');
    }
    q
}

/// `sql` with each span replaced (spans may repeat: a name bound twice is edited once).
pub(super) fn edit_spans(
    sql: &str,
    mut spans: Vec<(usize, usize)>,
    new: &str,
    quote: bool,
) -> String {
    spans.sort_unstable();
    spans.dedup();
    let mut out = sql.to_string();
    for (a, b) in spans.into_iter().rev() {
        let r = replacement(sql, a, b, new, quote);
        out.replace_range(a..b, &r);
    }
    out
}

impl Engine<'_> {
    /// The text of the view or trigger `sql` after `renaming`, `None` when no name in it
    /// refers to the renamed object; an error (the bare message) when it does not resolve.
    pub(super) fn rename_in_object(
        &self,
        sql: &str,
        renaming: &Renaming,
    ) -> Result<Option<String>> {
        let mut p = Parser::with_name_spans(sql);
        let stmt = match p.next_statement() {
            Ok(Some((stmt, _))) => stmt,
            Ok(None) => return Ok(None),
            Err(e) => return Err(SqlError::msg(e.to_string())),
        };
        let spans = p.take_name_spans();
        let log = self.resolve_object(&stmt)?;
        let edits: Vec<(usize, usize)> = log
            .refs
            .iter()
            .filter(|r| renaming.is_renamed(r))
            .filter_map(|r| {
                let addr = match r {
                    NameRef::Table { addr, .. }
                    | NameRef::Column { addr, .. }
                    | NameRef::Rowid { addr, .. } => *addr,
                };
                spans
                    .iter()
                    .rev()
                    .find(|s| s.addr == addr)
                    .map(|s: &NameSpan| (s.start, s.end))
            })
            .collect();
        if edits.is_empty() {
            return Ok(None);
        }
        Ok(Some(match renaming {
            Renaming::Table { new, .. } => edit_spans(sql, edits, new, true),
            Renaming::Column { new, quoted, .. } => edit_spans(sql, edits, new, *quoted),
        }))
    }

    /// Rewrites the views and triggers of the schema table being altered, and of the temp
    /// database's when that is another (SQLite rewrites TEMP triggers and views that name a
    /// main table, alter.c sqlite3AlterRenameColumn's second UPDATE).
    pub(super) fn rename_objects(&mut self, renaming: &Renaming) -> Result<()> {
        self.rename_in_schema_table(renaming)?;
        let in_main = super::store::db_bits(self.schema_root) == 0;
        if in_main && self.outer_schema.is_none() && self.store.has_temp() {
            let saved = self.schema_root;
            self.schema_root = super::TEMP_SCHEMA_ROOT;
            let r = self.rename_in_schema_table(renaming);
            self.schema_root = saved;
            r?;
        }
        Ok(())
    }

    /// The views and triggers of the schema table at `schema_root`, rewritten in place; a
    /// trigger on the renamed table follows it (`tbl_name`).
    fn rename_in_schema_table(&mut self, renaming: &Renaming) -> Result<()> {
        for (rowid, mut row) in self.schema_rows()? {
            let ty = row[0].to_text_or_empty().into_owned();
            if !matches!(ty.as_str(), "view" | "trigger") || row[4].is_null() {
                continue;
            }
            let sql = row[4].to_text_or_empty().into_owned();
            let name = row[1].to_text_or_empty().into_owned();
            let new_sql = self
                .rename_in_object(&sql, renaming)
                .map_err(|e| object_error(&ty, &name, "", &e.to_string()))?;
            let mut changed = false;
            if let Renaming::Table { old, new } = renaming {
                if row[2].to_text_or_empty().eq_ignore_ascii_case(old) {
                    row[2] = Value::text(*new);
                    changed = true;
                }
            }
            if let Some(s) = new_sql {
                row[4] = Value::text(s);
                changed = true;
            }
            if changed {
                self.store.table_insert(self.schema_root, rowid, &row)?;
            }
        }
        Ok(())
    }

    /// After the rename's rows are written: reloads the schema and checks that every view
    /// and trigger still resolves.
    pub(super) fn finish_rename(&mut self) -> Result<()> {
        self.schema_changed()?;
        self.check_views_and_triggers(" after rename")
    }

    /// Checks that every view and trigger of the schema still resolves (SQLite's
    /// renameTestSchema after the edit), naming the first that does not.
    pub(super) fn check_views_and_triggers(&self, when: &str) -> Result<()> {
        let mut objects: Vec<(&str, &str, &str)> = Vec::new();
        for v in self.schema.views.values() {
            objects.push(("view", &v.name, &v.sql));
        }
        for t in self.schema.triggers.values() {
            objects.push(("trigger", &t.name, &t.sql));
        }
        for (ty, name, sql) in objects {
            let stmt = match crate::parse::parse_first(sql) {
                Ok(Some(p)) => p.stmt,
                Ok(None) => continue,
                Err(e) => return Err(object_error(ty, name, when, &e.to_string())),
            };
            if let Err(e) = self.resolve_object(&stmt) {
                return Err(object_error(ty, name, when, &e.to_string()));
            }
        }
        Ok(())
    }

    /// Binds a CREATE VIEW or CREATE TRIGGER as SQLite's rename does (sqlite3SelectPrep,
    /// renameResolveTrigger), returning what its names resolved to.
    fn resolve_object(&self, stmt: &Stmt) -> Result<RenameLog> {
        let mut b = Binder::new(self.schema);
        b.rename_log = Some(RenameLog::default());
        match stmt {
            Stmt::CreateView(v) => {
                b.bind_select(&v.select)?;
            }
            Stmt::CreateTrigger(t) => self.resolve_trigger(&mut b, t)?,
            _ => {}
        }
        Ok(b.rename_log.take().unwrap_or_default())
    }

    fn resolve_trigger(&self, b: &mut Binder, trig: &ast::CreateTrigger) -> Result<()> {
        let db = self.ddl_db_name().to_string();
        let Some(on) = self.trigger_target(&trig.table)? else {
            return Err(SqlError::msg(format!("no such table: {db}.{}", trig.table)));
        };
        let is_table = self.schema.table(&trig.table).is_some();
        let note = |b: &mut Binder, r: NameRef| {
            if let Some(log) = &mut b.rename_log {
                log.refs.push(r);
            }
        };
        // Names of `t`'s columns written as a list (UPDATE OF, INSERT INTO t(..), SET):
        // SQLite edits those equal to the column (renameColumnIdlistNames).
        let note_columns = |b: &mut Binder, t: &crate::schema::Table, names: &[String]| {
            for n in names {
                note(
                    b,
                    NameRef::Column {
                        addr: n.as_ptr() as usize,
                        table: t.name.clone(),
                        column: n.clone(),
                    },
                );
            }
        };
        if is_table {
            note(
                b,
                NameRef::Table {
                    addr: trig.table.as_ptr() as usize,
                    table: on.name.clone(),
                },
            );
            if let ast::TriggerEvent::Update(cols) = &trig.event {
                note_columns(b, &on, cols);
            }
        }
        b.push_trigger_frame(&on);
        if let Some(w) = &trig.when {
            b.bind_expr(w)?;
        }
        let target = |name: &ast::QualifiedName| {
            self.schema
                .table(&name.name)
                .cloned()
                .ok_or_else(|| SqlError::msg(format!("no such table: {db}.{}", name.name)))
        };
        for s in &trig.body {
            match s {
                Stmt::Select(sel) => {
                    b.bind_select(sel)?;
                }
                Stmt::Insert(i) => {
                    let t = target(&i.table)?;
                    note(b, table_ref(&i.table, &t));
                    note_columns(b, &t, &i.columns);
                    if let ast::InsertSource::Select(sel) = &i.source {
                        b.bind_select(sel)?;
                    }
                    for u in &i.upsert {
                        b.push_table_frame(&t, i.alias.as_deref());
                        b.add_pseudo_source("excluded", &t, t.columns.len() + 1);
                        let r = resolve_upsert(b, &t, u, &note_columns);
                        b.pop_frame();
                        r?;
                    }
                }
                Stmt::Update(u) => {
                    let t = target(&u.table)?;
                    note(b, table_ref(&u.table, &t));
                    // UPDATE ... FROM reads other sources the one-table frame lacks: its
                    // expressions are not resolved here.
                    if u.from.is_some() {
                        continue;
                    }
                    b.push_table_frame(&t, u.alias.as_deref());
                    let r = (|| -> Result<()> {
                        for a in &u.sets {
                            note_columns(b, &t, &a.columns);
                            b.bind_expr(&a.expr)?;
                        }
                        if let Some(w) = &u.where_ {
                            b.bind_expr(w)?;
                        }
                        Ok(())
                    })();
                    b.pop_frame();
                    r?;
                }
                Stmt::Delete(d) => {
                    let t = target(&d.table)?;
                    note(b, table_ref(&d.table, &t));
                    if let Some(w) = &d.where_ {
                        b.push_table_frame(&t, d.alias.as_deref());
                        let r = b.bind_expr(w);
                        b.pop_frame();
                        r?;
                    }
                }
                _ => {}
            }
        }
        b.pop_frame();
        Ok(())
    }
}

fn resolve_upsert(
    b: &mut Binder,
    t: &crate::schema::Table,
    u: &ast::Upsert,
    note_columns: &dyn Fn(&mut Binder, &crate::schema::Table, &[String]),
) -> Result<()> {
    if let Some(target) = &u.target {
        for c in &target.columns {
            b.bind_expr(&c.expr)?;
        }
        if let Some(w) = &target.where_ {
            b.bind_expr(w)?;
        }
    }
    if let ast::UpsertAction::Update { sets, where_ } = &u.action {
        for a in sets {
            note_columns(b, t, &a.columns);
            b.bind_expr(&a.expr)?;
        }
        if let Some(w) = where_ {
            b.bind_expr(w)?;
        }
    }
    Ok(())
}

/// The target of a trigger's INSERT/UPDATE/DELETE, naming table `t`.
fn table_ref(name: &ast::QualifiedName, t: &crate::schema::Table) -> NameRef {
    NameRef::Table {
        addr: name.name.as_ptr() as usize,
        table: t.name.clone(),
    }
}

fn object_error(ty: &str, name: &str, when: &str, msg: &str) -> SqlError {
    SqlError::msg(format!("error in {ty} {name}{when}: {msg}"))
}
