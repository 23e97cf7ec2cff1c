//! Rows deleted by REPLACE conflict resolution, as SQLite deletes them (lang_conflict.html):
//! the table's DELETE triggers fire for each if and only if `PRAGMA recursive_triggers` is
//! on, and with `PRAGMA foreign_keys` on each deleted row gets a parent row's ON DELETE
//! actions. changes() does not count these deletes (the triggers' and actions' own
//! statements count in total_changes() only, as for any trigger).
//!
//! Invariants:
//! - The writer (`write_row_over`, `write_row_wr`) still decides which rows clash, after
//!   every check of the new row passed; with `TableWriter::replace_hooks` set it writes
//!   nothing and returns `Written::Replacing`. The rows are then deleted here in the
//!   writer's order (SQLite's: BEFORE DELETE triggers, delete, foreign-key actions, AFTER
//!   DELETE triggers, row by row) and the write is retried with the rowid it was given,
//!   so an INSERT's allocated rowid (and AUTOINCREMENT sequence) is not allocated twice.
//!   A trigger may write new clashing rows: the retry finds and deletes them too.
//! - NO ACTION foreign keys of a deleted parent row are checked after the new row is
//!   written (`fkey.rs`, `fk_parent_deleted_by_replace`): a REPLACE keeping a referenced
//!   key violates nothing.
//! - Without hooks (no DELETE trigger to fire or recursive_triggers off, and the table
//!   the parent of no foreign key with checking on) the writer keeps its own fast REPLACE
//!   paths (in place, dml/replace.rs), which fire nothing.
//! - A BEFORE DELETE trigger's RAISE(IGNORE) keeps its row; when a round deletes no row
//!   the new row is dropped as by IGNORE (the clash cannot be resolved). A trigger that
//!   keeps writing clashing rows fails the statement after `MAX_REPLACE_ROUNDS`.

use super::super::fkey::FkNoAction;
use super::super::Engine;
use super::{Scanned, TableWriter, Victims, Written};
use crate::parse::ast::{ConflictAction, TriggerEvent, TriggerTime};
use crate::value::{Result, SqlError, Value};

/// Rounds of delete-and-retry one REPLACE may take before it fails: each round means a
/// trigger wrote a new clashing row, which a trigger re-inserting what it sees deleted
/// would do forever.
const MAX_REPLACE_ROUNDS: usize = 1000;

fn too_many_rounds() -> SqlError {
    SqlError::msg("too many levels of trigger recursion")
}

impl Engine<'_> {
    /// Whether a REPLACE on `t` must delete its conflicting rows through the DELETE
    /// machinery (sets `TableWriter::replace_hooks`).
    /// `conflict` is the statement's OR clause: only a statement that may resolve a
    /// conflict by REPLACE looks further.
    pub(crate) fn replace_needs_hooks(
        &self,
        w: &TableWriter,
        conflict: Option<ConflictAction>,
    ) -> bool {
        let t = &w.t;
        let replace = Some(ConflictAction::Replace);
        let may_replace = conflict == replace
            || (conflict.is_none()
                && (t.pk_conflict == replace
                    || w.wr.as_ref().is_some_and(|(_, c)| *c == replace)
                    || w.indexes.iter().any(|(ix, ..)| ix.on_conflict == replace)));
        may_replace
            && ((self.state.recursive_triggers.get()
                && (!self
                    .table_triggers(t, TriggerTime::Before, &TriggerEvent::Delete)
                    .is_empty()
                    || !self
                        .table_triggers(t, TriggerTime::After, &TriggerEvent::Delete)
                        .is_empty()))
                || self.fk_is_parent(t))
    }

    /// `write_row_over`, deleting a REPLACE's conflicting rows as DELETE does when
    /// `w.replace_hooks` is set.
    pub(crate) fn write_row_replacing(
        &mut self,
        w: &TableWriter,
        old: Option<i64>,
        vals: Vec<Value>,
        rowid_in: Option<Value>,
        conflict: Option<ConflictAction>,
        stored: Option<Scanned<'_>>,
    ) -> Result<Written> {
        if !w.replace_hooks {
            return self.write_row_over(w, old, vals, rowid_in, conflict, stored);
        }
        let mut no_action = Vec::new();
        let mut rowid_in = rowid_in;
        let mut stored = stored;
        for _ in 0..MAX_REPLACE_ROUNDS {
            let written = self.write_row_over(
                w,
                old,
                vals.clone(),
                rowid_in.clone(),
                conflict,
                stored.take(),
            )?;
            let Written::Replacing { victims, rowid } = written else {
                self.fk_check_no_action(no_action)?;
                return Ok(written);
            };
            rowid_in = Some(Value::Integer(rowid));
            if !self.delete_victims(w, victims, &mut no_action)? {
                return Ok(Written::Ignored);
            }
        }
        Err(too_many_rounds())
    }

    /// `write_row_wr` with a REPLACE's conflicting rows deleted as DELETE does when
    /// `w.replace_hooks` is set.
    pub(crate) fn write_row_wr_replacing(
        &mut self,
        w: &TableWriter,
        old: Option<&[Value]>,
        vals: Vec<Value>,
        conflict: Option<ConflictAction>,
    ) -> Result<Written> {
        if !w.replace_hooks {
            return self.write_row_wr(w, old, vals, conflict);
        }
        let mut no_action = Vec::new();
        for _ in 0..MAX_REPLACE_ROUNDS {
            let written = self.write_row_wr(w, old, vals.clone(), conflict)?;
            let Written::Replacing { victims, .. } = written else {
                self.fk_check_no_action(no_action)?;
                return Ok(written);
            };
            if !self.delete_victims(w, victims, &mut no_action)? {
                return Ok(Written::Ignored);
            }
        }
        Err(too_many_rounds())
    }

    /// Deletes each row as DELETE would (triggers under recursive_triggers, foreign-key
    /// actions), counting no change; false when a BEFORE trigger kept a row and none was
    /// deleted.
    fn delete_victims(
        &mut self,
        w: &TableWriter,
        victims: Victims,
        no_action: &mut Vec<FkNoAction>,
    ) -> Result<bool> {
        let t = w.t.clone();
        let ncols = t.columns.len();
        let (before, after) = match self.state.recursive_triggers.get() {
            true => (
                self.table_triggers(&t, TriggerTime::Before, &TriggerEvent::Delete),
                self.table_triggers(&t, TriggerTime::After, &TriggerEvent::Delete),
            ),
            false => (Vec::new(), Vec::new()),
        };
        let rows: Vec<Vec<Value>> = match victims {
            Victims::Keyed(rows) => rows,
            Victims::Rowids(rowids) => {
                let exec = self.exec();
                let defaults = exec.column_defaults(&t);
                let mut rows = Vec::with_capacity(rowids.len());
                for r in rowids {
                    if let Some(stored) = self.store.table_get(t.root, r)? {
                        rows.push(exec.table_row(&t, r, stored, &defaults)?);
                    }
                }
                rows
            }
        };
        let mut any = false;
        let mut kept = false;
        for old in rows {
            if !before.is_empty() && !self.fire(&before, Some(&old), None)? {
                kept = true;
                continue;
            }
            let deleted = match old.get(ncols) {
                Some(Value::Integer(r)) if w.wr.is_none() => self.delete_row(w, *r)?,
                _ => self.delete_row_wr(w, &old[..ncols])?,
            };
            if deleted {
                any = true;
                self.fk_parent_deleted_by_replace(&t, &old, no_action)?;
                if !after.is_empty() {
                    self.fire(&after, Some(&old), None)?;
                }
            }
        }
        Ok(any || !kept)
    }
}
