//! INSERT, UPDATE and DELETE: rows checked against the table's constraints and written with
//! their index entries, with SQLite's conflict resolution and error texts.
//!
//! Invariants:
//! - A row is written only after every constraint passed (NOT NULL, CHECK, then uniqueness
//!   of the rowid and of each UNIQUE index in SQLite's order (`writer::check_order`,
//!   UPSERT targets first: `TableWriter::upsert_targets_first`), as SQLite checks them); REPLACE
//!   deletes the conflicting rows first. Two REPLACE shapes write the same trees by a
//!   shorter way: a row replacing the one at its own rowid (or WITHOUT ROWID key) is
//!   rewritten in place, index entries only where the key changed; a new row whose every
//!   UNIQUE index resolves by REPLACE is checked index by index while it is inserted
//!   (dml/replace.rs). A REPLACE declared on the INTEGER PRIMARY KEY (no OR clause) is
//!   resolved after the UNIQUE indexes, as SQLite defers it. When REPLACE's deletes must
//!   fire DELETE triggers or foreign-key actions (`TableWriter::replace_hooks`), neither
//!   shorter way is taken: the writer returns the rows to delete and
//!   dml/replace_delete.rs deletes them as DELETE does, then writes the row again.
//! - The table record stores NULL for the rowid alias column; index keys carry the real
//!   value and end with the rowid.
//! - UPDATE and DELETE first collect the affected rows, then write, so a statement never
//!   sees its own changes.
//! - A WITHOUT ROWID table's rows are written by `write_row_wr`/`delete_row_wr` and found
//!   again by their PRIMARY KEY values, never by a rowid (layout in `without_rowid.rs`); the
//!   same constraint checks (`check_row`) run first, then the key, then each UNIQUE index.

use super::eval::{Exec, Frame};
use super::without_rowid::{index_key_wr, pk_positions_in_index, WrLayout};
use super::{ConnState, Engine};
use crate::parse::ast::{
    self, ConflictAction, Expr, InsertSource, ResultColumn, TriggerEvent, TriggerTime,
};
use crate::plan::{Binder, CExpr};
use crate::schema::{key, Index, Table};
use crate::value::{codes, Affinity, Result, SqlError, Value};
use replace::Replacing;
use std::ops::Bound;
use std::sync::Arc;

mod bulk_insert;
mod delete;
pub(crate) use delete::delete_writes_unchecked;
mod insert;
pub(crate) use insert::single_write;
mod replace;
mod replace_delete;
pub(crate) mod set_row_value;
mod target;
mod update;
pub(crate) use update::update_writes_unchecked;
mod writer;

pub use writer::{TableWriter, WriterCache, WriterParts};

pub const SQLITE_CONSTRAINT_CHECK: i32 = 275;
pub const SQLITE_CONSTRAINT_NOTNULL: i32 = 1299;
pub const SQLITE_CONSTRAINT_PRIMARYKEY: i32 = 1555;
pub const SQLITE_CONSTRAINT_UNIQUE: i32 = 2067;
pub const SQLITE_CONSTRAINT_DATATYPE: i32 = 3091;

fn constraint(ext: i32, msg: String) -> SqlError {
    SqlError::Code {
        code: codes::SQLITE_CONSTRAINT,
        extended_code: ext,
        message: msg,
    }
}

/// The table `name` names, when it is in the main database and no trigger is on it: the
/// first conditions under which a statement can run without a statement savepoint
/// (`single_write`, `delete_writes_unchecked`, `update_writes_unchecked`). Tables outside
/// main have their own savepoints; a trigger may write anything, and fail, between rows.
/// A main table's triggers are `schema`'s own (`Schema::triggers_on`), read here without
/// collecting them: this runs for every INSERT, UPDATE and DELETE.
fn main_table_without_triggers<'s>(
    schema: &'s crate::schema::Schema,
    name: &ast::QualifiedName,
) -> Option<&'s Arc<Table>> {
    let outside_main = super::store::TEMP_ROOT_BIT | super::store::ATTACHED_MASK;
    let t = schema.table_in(name.schema.as_deref(), &name.name)?;
    let triggered = schema
        .triggers
        .values()
        .any(|tr| tr.table.eq_ignore_ascii_case(&t.name));
    (t.root & outside_main == 0 && !triggered).then_some(t)
}

/// `Written::Replacing` reaching a statement: only `write_row_replacing` and
/// `write_row_wr_replacing` (dml/replace_delete.rs) may see it.
fn replacing_escaped() -> SqlError {
    SqlError::msg("internal error: a REPLACE's conflicting rows were not deleted")
}

/// True when the two keys hold the same values with the same storage classes, so that
/// their encoded index entries are byte-identical (a REAL 1.0 and an INTEGER 1 are not).
fn same_values(a: &[Value], b: &[Value]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| match (x, y) {
            (Value::Null, Value::Null) => true,
            (Value::Integer(p), Value::Integer(q)) => p == q,
            (Value::Real(p), Value::Real(q)) => p.to_bits() == q.to_bits(),
            (Value::Text(p), Value::Text(q)) => p == q,
            (Value::Blob(p), Value::Blob(q)) => p == q,
            _ => false,
        })
}

/// What an UPDATE knows of the row it rewrites in place (`write_row_over`), valid only
/// while nothing has changed the row since the statement read it.
pub(crate) struct Scanned<'a> {
    /// The row's stored columns (without the rowid).
    pub cols: &'a [Value],
    /// Per index of the writer: true when the UPDATE assigns none of the columns its key
    /// or partial-index predicate depends on, so its entry for the row stays as it is.
    pub unchanged: &'a [bool],
}

/// The existing row an upsert conflicted with.
pub enum Existing {
    Rowid(i64),
    /// A WITHOUT ROWID table's row (combined layout).
    Row(Vec<Value>),
}

pub enum Written {
    Row(i64),
    /// A row of a WITHOUT ROWID table, as written (combined layout, NULL rowid slot).
    Keyed(Vec<Value>),
    Ignored,
    /// A uniqueness conflict with row `rowid` on `columns` (None: the rowid), reported
    /// instead of `error` because the INSERT has an upsert clause to consult.
    Conflict {
        rowid: i64,
        columns: Option<Vec<usize>>,
        error: SqlError,
    },
    /// The WITHOUT ROWID form of `Conflict`: the existing row (combined layout).
    KeyConflict {
        existing: Vec<Value>,
        columns: Vec<usize>,
        error: SqlError,
    },
    /// Nothing written: the row passed every check and REPLACE must first delete these
    /// rows through the DELETE machinery (only when `TableWriter::replace_hooks`);
    /// `rowid` is the row's rowid, to be given again when it is retried.
    Replacing {
        victims: Victims,
        rowid: i64,
    },
}

/// The rows a REPLACE deletes: rowids, or a WITHOUT ROWID table's rows (combined layout).
pub enum Victims {
    Rowids(Vec<i64>),
    Keyed(Vec<Vec<Value>>),
}

impl Engine<'_> {
    /// Records the conflict resolution that governs the constraint failure about to be
    /// returned (the statement's OR clause, else the constraint's ON CONFLICT; REPLACE
    /// acting as ABORT counts as ABORT): `keeps_changes_on_error` and
    /// `rolls_back_transaction_on_error` read it, so a `UNIQUE ON CONFLICT FAIL` declared
    /// in CREATE TABLE keeps the earlier rows as `INSERT OR FAIL` does.
    fn note_resolution(&self, action: ConflictAction) {
        let action = match action {
            ConflictAction::Fail | ConflictAction::Rollback => action,
            _ => ConflictAction::Abort,
        };
        self.state.failed_resolution.set(Some(action));
    }

    pub fn table_for_write(&self, name: &ast::QualifiedName) -> Result<Arc<Table>> {
        // Borrowed for a lower-case name: no allocation per INSERT/UPDATE/DELETE.
        let k = crate::schema::key_ref(&name.name);
        let k: &str = k.as_ref();
        if k == "sqlite_master" || k == "sqlite_schema" {
            return Err(SqlError::msg(format!(
                "table {} may not be modified",
                name.name
            )));
        }
        if let Some(reason) = self.schema.write_blocked.get(k) {
            return Err(SqlError::msg(format!(
                "table {} is read-only in parlite: {reason}",
                name.name
            )));
        }
        if let Some(t) = self.schema.table_in(name.schema.as_deref(), &name.name) {
            return Ok(t.clone());
        }
        if let Some(reason) = self.schema.unsupported.get(k) {
            return Err(SqlError::msg(format!(
                "table {} cannot be used: {reason}",
                name.name
            )));
        }
        if self.schema.views.contains_key(k) {
            return Err(SqlError::msg(format!(
                "cannot modify {} because it is a view",
                name.name
            )));
        }
        match (&name.schema, &self.trigger_db_name) {
            (Some(db), _) | (None, Some(db)) => {
                Err(SqlError::msg(format!("no such table: {db}.{}", name.name)))
            }
            (None, None) => Err(SqlError::msg(format!("no such table: {}", name.name))),
        }
    }

    fn index_key(
        exec: &Exec,
        ix: &Index,
        exprs: &IndexExprs,
        vals: &[Value],
        rowid: i64,
    ) -> Result<Vec<Value>> {
        index_key(exec, ix, exprs, vals, rowid)
    }

    /// Row values with the rowid appended (the layout CHECK and partial-index predicates
    /// were bound against).
    fn with_rowid(vals: &[Value], rowid: i64) -> Vec<Value> {
        let mut r = Vec::with_capacity(vals.len() + 1);
        r.extend_from_slice(vals);
        r.push(Value::Integer(rowid));
        r
    }

    /// The table record of a checked row: NULL for the rowid alias, no field for a
    /// VIRTUAL column (schema module docs).
    /// Without either it is `vals` itself: the copy, with a clone and a drop per value,
    /// was ~300 instructions a row of `UPDATE z2 SET d=b*4` (speedtest1 test 250).
    fn record_of<'v>(t: &Table, vals: &'v [Value]) -> std::borrow::Cow<'v, [Value]> {
        if t.rowid_alias.is_none() && !t.has_virtual() {
            return std::borrow::Cow::Borrowed(vals);
        }
        let mut record = vals.to_vec();
        if let Some(a) = t.rowid_alias {
            record[a] = Value::Null;
        }
        if t.has_virtual() {
            record = record
                .into_iter()
                .enumerate()
                .filter(|(i, _)| !t.is_virtual(*i))
                .map(|(_, v)| v)
                .collect();
        }
        std::borrow::Cow::Owned(record)
    }

    /// A matched row of a multi-row UPDATE or DELETE read again at its turn (None: it is
    /// gone): a trigger or foreign-key action run for an earlier row may have changed or
    /// deleted it, and SQLite hands each row's triggers and SET expressions its current
    /// values. `old` is the row as matched (table-order columns, then what the match
    /// appended: the rowid), found again by its rowid or, WITHOUT ROWID, its PRIMARY KEY.
    pub(crate) fn row_now(
        &self,
        w: &TableWriter,
        old: &[Value],
        rowid: Option<i64>,
        defaults: &[Value],
    ) -> Result<Option<Vec<Value>>> {
        let t = &w.t;
        let exec = self.exec();
        match (rowid, &w.wr) {
            (Some(r), _) => match self.store.table_get(t.root, r)? {
                Some(vals) => Ok(Some(exec.table_row(t, r, vals, defaults)?)),
                None => Ok(None),
            },
            (None, Some((layout, _))) => {
                let ncols = t.columns.len();
                let pk = layout.pk_of(&old[..ncols]);
                let Some(mut row) = layout.lookup_full(&exec, t, &pk, defaults)? else {
                    return Ok(None);
                };
                row.truncate(ncols);
                row.extend_from_slice(&old[ncols.min(old.len())..]);
                Ok(Some(row))
            }
            (None, None) => Ok(Some(old.to_vec())),
        }
    }

    /// Deletes one row and its index entries (no triggers).
    pub fn delete_row(&self, w: &TableWriter, rowid: i64) -> Result<bool> {
        self.delete_row_of(w, rowid, None, None)
    }

    /// `delete_row` for a DELETE that already holds the stored columns of the row
    /// (`stored`); the caller guarantees the row still exists unchanged. Without them, one
    /// descent reads and deletes the table row (`Store::table_take`; reading it and then
    /// deleting it were two), and its index entries go after it. `replacing`: the row is
    /// deleted by REPLACE for a new row (dml/replace.rs, `Replacing`).
    fn delete_row_of(
        &self,
        w: &TableWriter,
        rowid: i64,
        stored: Option<&[Value]>,
        mut replacing: Option<Replacing<'_>>,
    ) -> Result<bool> {
        let exec = self.exec();
        let full;
        let vals = match stored {
            Some(v) => v,
            None => {
                let Some(stored) = self.store.table_take(w.t.root, rowid)? else {
                    return Ok(false);
                };
                let defaults = exec.column_defaults(&w.t);
                full = exec.table_row(&w.t, rowid, stored, &defaults)?;
                &full[..w.t.columns.len()]
            }
        };
        let mut key = Vec::new();
        for (i, (ix, order, pred, exprs)) in w.indexes.iter().enumerate() {
            if replacing.as_ref().is_some_and(|rp| rp.index == i) {
                continue;
            }
            if let Some(p) = pred {
                let row = Self::with_rowid(vals, rowid);
                if !exec.index_where_is_true(p, &Frame::new(&row, None))? {
                    continue;
                }
            }
            index_key_into(&exec, ix, exprs, vals, rowid, &mut key)?;
            if let Some(rp) = replacing.as_mut() {
                if self.move_entry(w, i, &key, rp)? {
                    continue;
                }
            }
            self.store.index_delete(ix.root, &key, order)?;
        }
        match stored {
            Some(_) => self.store.table_delete(w.t.root, rowid),
            None => Ok(true),
        }
    }

    /// STRICT types, NOT NULL (with its conflict resolution) and CHECK constraints of a row
    /// whose affinities are applied; false when the row is to be ignored (OR IGNORE).
    /// `rowid_slot` completes the row layout CHECK expressions were bound against.
    fn check_row(
        &self,
        w: &TableWriter,
        exec: &Exec,
        vals: &mut [Value],
        rowid_slot: Value,
        conflict: Option<ConflictAction>,
    ) -> Result<bool> {
        let t = &w.t;
        // STRICT: after affinity, each non-NULL value must have its column's type (ANY
        // takes anything).
        if t.strict {
            for (i, c) in t.columns.iter().enumerate() {
                let v = &vals[i];
                let ty = c.decl_type.to_ascii_uppercase();
                let ok = match (ty.as_str(), v) {
                    (_, Value::Null) | ("ANY", _) => true,
                    ("INT" | "INTEGER", Value::Integer(_)) => true,
                    ("REAL", Value::Real(_)) => true,
                    ("TEXT", Value::Text(_)) => true,
                    ("BLOB", Value::Blob(_)) => true,
                    _ => false,
                };
                if !ok {
                    let vt = match v {
                        // SQLite's names (vdbe.c vdbeMemTypeName).
                        Value::Integer(_) => "INT",
                        Value::Real(_) => "REAL",
                        Value::Text(_) => "TEXT",
                        Value::Blob(_) => "BLOB",
                        Value::Null => "NULL",
                    };
                    return Err(constraint(
                        SQLITE_CONSTRAINT_DATATYPE,
                        format!(
                            "cannot store {vt} value in {} column {}.{}",
                            ty, t.name, c.name
                        ),
                    ));
                }
            }
        }
        // Generated columns are computed first (their errors come before any constraint's).
        // Then NOT NULL, in SQLite's two passes: the first checks ordinary columns, where a
        // REPLACE column with a DEFAULT takes it; the second checks those again and the
        // generated columns (computed again first when a default went in), in declaration
        // order. Every later constraint sees the generated values.
        let compute = |vals: &mut [Value]| -> Result<()> {
            let mut row = vals.to_vec();
            row.push(rowid_slot.clone());
            exec.compute_generated(t, &w.generated, &mut row, false)?;
            let n = vals.len();
            vals.clone_from_slice(&row[..n]);
            Ok(())
        };
        if !w.generated.is_empty() {
            compute(vals)?;
        }
        let mut recheck: Vec<usize> = Vec::new();
        for (i, c) in t.columns.iter().enumerate() {
            if c.generated.is_some() {
                continue;
            }
            let Some(col_action) = c.not_null else {
                continue;
            };
            if !vals[i].is_null()
                || Some(i) == t.rowid_alias
                || w.unchanged.get(i).copied().unwrap_or(false)
            {
                continue;
            }
            match conflict.unwrap_or(col_action) {
                ConflictAction::Ignore => return Ok(false),
                ConflictAction::Replace if w.defaults[i].is_some() => {
                    if let Some(v) = w.default_value(exec, i)? {
                        vals[i] = v.apply_affinity(c.affinity);
                    }
                    recheck.push(i);
                }
                action => {
                    self.note_resolution(action);
                    return Err(constraint(
                        SQLITE_CONSTRAINT_NOTNULL,
                        format!("NOT NULL constraint failed: {}.{}", t.name, c.name),
                    ));
                }
            }
        }
        if !recheck.is_empty() && !w.generated.is_empty() {
            compute(vals)?;
        }
        for (i, c) in t.columns.iter().enumerate() {
            if !(recheck.contains(&i) || (c.generated.is_some() && c.not_null.is_some())) {
                continue;
            }
            if !vals[i].is_null() {
                continue;
            }
            if !recheck.contains(&i) {
                // A generated column: its own conflict action, REPLACE acting as ABORT.
                if conflict.or(c.not_null) == Some(ConflictAction::Ignore) {
                    return Ok(false);
                }
            }
            self.note_resolution(conflict.or(c.not_null).unwrap_or(ConflictAction::Abort));
            return Err(constraint(
                SQLITE_CONSTRAINT_NOTNULL,
                format!("NOT NULL constraint failed: {}.{}", t.name, c.name),
            ));
        }
        // CHECK, unless `PRAGMA ignore_check_constraints` is on.
        if !w.checks.is_empty() && !self.state.settings.ignore_check_constraints.get() {
            let mut row = vals.to_vec();
            row.push(rowid_slot);
            let fr = Frame::new(&row, None);
            for (k, (name, e)) in w.checks.iter().enumerate() {
                if w.checks_skipped.get(k).copied().unwrap_or(false) {
                    continue;
                }
                let v = exec.eval_pure("a CHECK constraint", e, &fr)?;
                if crate::value::truth(&v) == Some(false) {
                    if conflict == Some(ConflictAction::Ignore) {
                        return Ok(false);
                    }
                    return Err(constraint(
                        SQLITE_CONSTRAINT_CHECK,
                        format!("CHECK constraint failed: {name}"),
                    ));
                }
            }
        }
        Ok(true)
    }

    /// Checks and writes one row. `old` is the row being updated (its rowid), `rowid_in` an
    /// explicitly given rowid (INSERT with a rowid column), `conflict` the statement's OR
    /// clause.
    pub fn write_row(
        &self,
        w: &TableWriter,
        old: Option<i64>,
        vals: Vec<Value>,
        rowid_in: Option<Value>,
        conflict: Option<ConflictAction>,
    ) -> Result<Written> {
        self.write_row_over(w, old, vals, rowid_in, conflict, None)
    }

    /// `write_row` for an UPDATE that already holds the stored columns of row `old`
    /// (`stored`): an in-place rewrite then compares index keys against them instead of
    /// reading the row again. The caller guarantees nothing changed the row since it was read.
    pub(crate) fn write_row_over(
        &self,
        w: &TableWriter,
        old: Option<i64>,
        mut vals: Vec<Value>,
        rowid_in: Option<Value>,
        conflict: Option<ConflictAction>,
        stored: Option<Scanned<'_>>,
    ) -> Result<Written> {
        let t = &w.t;
        let exec = self.exec();
        for (i, c) in t.columns.iter().enumerate() {
            let v = std::mem::take(&mut vals[i]);
            vals[i] = v.apply_affinity(c.affinity);
        }
        // Rowid.
        let given = match t.rowid_alias {
            Some(a) if !vals[a].is_null() => Some(vals[a].clone()),
            _ => rowid_in.filter(|v| !v.is_null()),
        };
        // `fresh`: the rowid was just allocated above the table's largest, so no row holds it.
        let mut fresh = false;
        let rowid = match given {
            Some(v) => match v.apply_affinity(Affinity::Integer) {
                Value::Integer(i) => i,
                _ => {
                    return Err(SqlError::Code {
                        code: codes::SQLITE_MISMATCH,
                        extended_code: codes::SQLITE_MISMATCH,
                        message: "datatype mismatch".into(),
                    })
                }
            },
            None => match old {
                Some(r) if t.rowid_alias.is_none() => r,
                // UPDATE setting the INTEGER PRIMARY KEY to NULL: SQLite's OP_MustBeInt
                // fails; only INSERT turns a NULL key into a new rowid.
                Some(_) => {
                    return Err(SqlError::Code {
                        code: codes::SQLITE_MISMATCH,
                        extended_code: codes::SQLITE_MISMATCH,
                        message: "datatype mismatch".into(),
                    })
                }
                None => {
                    let r = self.new_rowid(t)?;
                    fresh = true;
                    // SQLite records an allocated AUTOINCREMENT rowid even when the row is
                    // then ignored by a conflict clause.
                    if t.autoincrement {
                        self.bump_sequence(&t, r)?;
                    }
                    r
                }
            },
        };
        if let Some(a) = t.rowid_alias {
            vals[a] = Value::Integer(rowid);
        }
        if !self.check_row(w, &exec, &mut vals, Value::Integer(rowid), conflict)? {
            return Ok(Written::Ignored);
        }
        // Uniqueness: the rowid, then each UNIQUE index.
        let mut to_delete: Vec<i64> = Vec::new();
        // The columns of the row a REPLACE overwrites at its own rowid: the new row is then
        // written over it in place, like an UPDATE keeping its rowid, instead of deleting the
        // row with every index entry and inserting it again (speedtest1 test 400, 70,000
        // `REPLACE INTO t5 VALUES(k,..)` on an IPK: see `in_place` below).
        let mut replaced: Option<Vec<Value>> = None;
        // The rowid's own REPLACE, deferred until the UNIQUE indexes were checked.
        let mut rowid_replace_deferred = false;
        // A fresh rowid cannot clash; skipping the probe saved ~4,900 instructions per
        // INSERT without a rowid (callgrind, speedtest1 test 100).
        // A REPLACE into a table without indexes needs no probe: `table_insert` overwrites
        // the row at its rowid, which is all that deleting it and inserting would leave
        // (its delete fires no trigger here). The probe was 4.8k of the 15.5k instructions
        // per row of speedtest1 test 400 (callgrind).
        let blind_replace = old.is_none()
            && !w.upsert
            && !w.replace_hooks
            && w.indexes.is_empty()
            && conflict.or(t.pk_conflict) == Some(ConflictAction::Replace);
        let existing = match !fresh && old != Some(rowid) && !blind_replace {
            true => self.store.table_get(t.root, rowid)?,
            false => None,
        };
        // An UPSERT whose first target is an index checks that index before the rowid.
        if existing.is_some() && w.upsert_first > 0 && conflict.is_none() && old.is_none() {
            if let Some(c) = self.upsert_first_clash(w, &exec, &vals, rowid)? {
                return Ok(c);
            }
        }
        if let Some(stored) = existing {
            let declared = match w.upsert_key {
                true => None,
                false => t.pk_conflict,
            };
            match conflict.or(declared).unwrap_or(ConflictAction::Abort) {
                ConflictAction::Ignore => return Ok(Written::Ignored),
                // A REPLACE declared on the key (no OR clause) runs after the checks of the
                // table's indexes, as SQLite defers it ("defer IPK REPLACE until last"): a
                // UNIQUE index resolving by ABORT then clashes with the very row the key
                // would replace.
                ConflictAction::Replace if conflict.is_none() && !w.indexes.is_empty() => {
                    rowid_replace_deferred = true;
                }
                ConflictAction::Replace if old.is_none() && !w.replace_hooks => {
                    let defaults = exec.column_defaults(t);
                    let mut full = exec.table_row(t, rowid, stored, &defaults)?;
                    full.truncate(t.columns.len());
                    replaced = Some(full);
                }
                ConflictAction::Replace => to_delete.push(rowid),
                action => {
                    let col = t
                        .rowid_alias
                        .map(|a| t.columns[a].name.clone())
                        .unwrap_or_else(|| "rowid".into());
                    let error = constraint(
                        SQLITE_CONSTRAINT_PRIMARYKEY,
                        format!("UNIQUE constraint failed: {}.{}", t.name, col),
                    );
                    if w.upsert && conflict.is_none() {
                        return Ok(Written::Conflict {
                            rowid,
                            columns: None,
                            error,
                        });
                    }
                    self.note_resolution(action);
                    return Err(error);
                }
            }
        }
        if old.is_none()
            && replaced.is_none()
            && to_delete.is_empty()
            && !rowid_replace_deferred
            && !w.replace_hooks
            && self.replaces_every_unique(w, conflict)
        {
            let record = Self::record_of(t, &vals);
            return self.insert_replacing(w, &vals, &record, rowid);
        }
        // An UPDATE that keeps its rowid rewrites the row in place: the old row's values
        // tell which index entries really change (see "Write." below). So does a REPLACE
        // whose rowid names an existing row: deleting that row and inserting the new one
        // leaves the same trees as rewriting it, and the REPLACE's delete fires no trigger
        // here (`delete_row`). Per row of speedtest1 test 400 (70,000 REPLACEs on an IPK,
        // callgrind): 19.8k instructions as delete + insert, 15.5k in place.
        let in_place = old == Some(rowid) || replaced.is_some();
        // Indexes whose key this in-place UPDATE cannot change are left alone, as SQLite
        // does: no key is built for them, no entry deleted or re-inserted.
        let untouched = |i: usize| {
            in_place
                && stored
                    .as_ref()
                    .is_some_and(|s| s.unchanged.get(i) == Some(&true))
        };
        let old_vals: Option<std::borrow::Cow<[Value]>> =
            if !in_place || (0..w.indexes.len()).all(untouched) {
                None
            } else if let Some(r) = replaced.take() {
                Some(std::borrow::Cow::Owned(r))
            } else if let Some(s) = &stored {
                Some(std::borrow::Cow::Borrowed(s.cols))
            } else {
                match self.store.table_get(t.root, rowid)? {
                    Some(stored) => {
                        let defaults = exec.column_defaults(t);
                        let mut full = exec.table_row(t, rowid, stored, &defaults)?;
                        full.truncate(t.columns.len());
                        Some(std::borrow::Cow::Owned(full))
                    }
                    None => None,
                }
            };
        // A new row whose every UNIQUE index resolves conflicts by ABORT (the default)
        // checks each index while inserting into it, in one descent
        // (`Store::index_insert_unique`), instead of probing first and descending again
        // to insert: the probes were ~20% of `INSERT INTO z2 SELECT * FROM z1` (speedtest1
        // test 190, callgrind). These inserts come first, before the table row, as SQLite
        // writes a row's index entries before the row (sqlite3CompleteInsertion): a clash
        // in the first UNIQUE index then fails the row with nothing written, which lets a
        // one-row INSERT run without a statement savepoint (`insert::single_write`). A
        // clash in a later one fails it after some of the row is written, which ABORT's
        // statement rollback takes back; the first clashing index in the same order still
        // names the error, as no other action can apply.
        let deferred_unique = old.is_none()
            && !w.upsert
            && !rowid_replace_deferred
            && w.indexes.iter().all(|(ix, ..)| {
                !ix.unique
                    || conflict.or(ix.on_conflict).unwrap_or(ConflictAction::Abort)
                        == ConflictAction::Abort
            });
        for (i, (ix, order, pred, exprs)) in w.indexes.iter().enumerate() {
            if !ix.unique || deferred_unique || untouched(i) {
                continue;
            }
            if let Some(p) = pred {
                let row = Self::with_rowid(&vals, rowid);
                if !exec.index_where_is_true(p, &Frame::new(&row, None))? {
                    continue;
                }
            }
            let mut k = Self::index_key(&exec, ix, exprs, &vals, rowid)?;
            k.pop();
            if k.iter().any(|v| v.is_null()) {
                continue;
            }
            // This row already holds the same key (and it was unique before): no new clash.
            if let Some(ov) = &old_vals {
                let mut ok = Self::index_key(&exec, ix, exprs, ov, rowid)?;
                ok.pop();
                let old_in = match pred {
                    Some(p) => exec
                        .index_where_is_true(p, &Frame::new(&Self::with_rowid(ov, rowid), None))?,
                    None => true,
                };
                if old_in && same_values(&ok, &k) {
                    continue;
                }
            }
            let mut clash = Vec::new();
            self.store
                .index_prefix_rowids(ix.root, order, &k, &mut clash)?;
            clash.retain(|r| {
                Some(*r) != old && !(in_place && *r == rowid) && !to_delete.contains(r)
            });
            if clash.is_empty() {
                continue;
            }
            let declared = match i < w.upsert_first {
                true => None,
                false => ix.on_conflict,
            };
            match conflict.or(declared).unwrap_or(ConflictAction::Abort) {
                ConflictAction::Ignore => return Ok(Written::Ignored),
                ConflictAction::Replace => to_delete.extend(clash),
                action => {
                    let ext = if ix.origin == "pk" {
                        SQLITE_CONSTRAINT_PRIMARYKEY
                    } else {
                        SQLITE_CONSTRAINT_UNIQUE
                    };
                    let error = constraint(ext, unique_failed_message(&t, ix));
                    if w.upsert && conflict.is_none() {
                        let cols: Vec<usize> = ix.columns.iter().filter_map(|c| c.column).collect();
                        return Ok(Written::Conflict {
                            rowid: clash[0],
                            columns: Some(cols),
                            error,
                        });
                    }
                    self.note_resolution(action);
                    return Err(error);
                }
            }
        }
        if rowid_replace_deferred && !to_delete.contains(&rowid) {
            to_delete.push(rowid);
        }
        if w.replace_hooks && !to_delete.is_empty() {
            return Ok(Written::Replacing {
                victims: Victims::Rowids(to_delete),
                rowid,
            });
        }
        for r in to_delete {
            self.delete_row(w, r)?;
        }
        // Write. In place (same rowid), `table_insert` replaces the row and only the index
        // entries whose key or partial-index membership changed are rewritten, as SQLite
        // does; deleting and re-inserting every entry made `UPDATE z2 SET d=b*4` (d in no
        // index) cost 151k instructions per row (speedtest1 test 250: 1,187 ms vs
        // SQLite's 17 ms).
        if !in_place {
            if let Some(o) = old {
                self.delete_row(w, o)?;
            }
        }
        if deferred_unique {
            for (ix, order, pred, exprs) in w.indexes.iter().filter(|(ix, ..)| ix.unique) {
                if let Some(p) = pred {
                    if !exec.index_where_is_true(
                        p,
                        &Frame::new(&Self::with_rowid(&vals, rowid), None),
                    )? {
                        continue;
                    }
                }
                let key = Self::index_key(&exec, ix, exprs, &vals, rowid)?;
                let n = ix.columns.len();
                if key[..n].iter().any(|v| v.is_null()) {
                    self.store.index_insert(ix.root, &key, order)?;
                } else if !self.store.index_insert_unique(ix.root, &key, n, order)? {
                    let ext = if ix.origin == "pk" {
                        SQLITE_CONSTRAINT_PRIMARYKEY
                    } else {
                        SQLITE_CONSTRAINT_UNIQUE
                    };
                    return Err(constraint(ext, unique_failed_message(t, ix)));
                }
            }
        }
        self.store
            .table_insert(t.root, rowid, &Self::record_of(t, &vals))?;
        for (i, (ix, order, pred, exprs)) in w.indexes.iter().enumerate() {
            if untouched(i) || (deferred_unique && ix.unique) {
                continue;
            }
            let new_in = match pred {
                Some(p) => {
                    exec.index_where_is_true(p, &Frame::new(&Self::with_rowid(&vals, rowid), None))?
                }
                None => true,
            };
            let new_key = Self::index_key(&exec, ix, exprs, &vals, rowid)?;
            if let Some(ov) = &old_vals {
                let old_in = match pred {
                    Some(p) => exec
                        .index_where_is_true(p, &Frame::new(&Self::with_rowid(ov, rowid), None))?,
                    None => true,
                };
                let old_key = Self::index_key(&exec, ix, exprs, ov, rowid)?;
                if old_in && new_in && same_values(&old_key, &new_key) {
                    continue;
                }
                if old_in {
                    self.store.index_delete(ix.root, &old_key, order)?;
                }
            }
            if !new_in {
                continue;
            }
            self.store.index_insert(ix.root, &new_key, order)?;
        }
        if t.autoincrement {
            self.bump_sequence(&t, rowid)?;
        }
        Ok(Written::Row(rowid))
    }

    /// Deletes one row of a WITHOUT ROWID table, found by the PRIMARY KEY of `vals` (its
    /// table-order columns), with its index entries (no triggers); false if it is gone.
    pub fn delete_row_wr(&self, w: &TableWriter, vals: &[Value]) -> Result<bool> {
        let Some((layout, _)) = &w.wr else {
            return Err(SqlError::msg("not a WITHOUT ROWID table"));
        };
        let exec = self.exec();
        let defaults = exec.column_defaults(&w.t);
        let pk = layout.pk_of(vals);
        let Some(stored) = layout.lookup_full(&exec, &w.t, &pk, &defaults)? else {
            return Ok(false);
        };
        let vals = &stored[..w.t.columns.len()];
        for (ix, order, pred, exprs) in &w.indexes {
            if let Some(p) = pred {
                if !exec.index_where_is_true(p, &Frame::new(&stored, None))? {
                    continue;
                }
            }
            let k = index_key_wr(&exec, &w.t, ix, exprs, vals)?;
            self.store.index_delete(ix.root, &k, order)?;
        }
        // A probe with only the key compares equal to the stored record.
        self.store
            .index_delete(w.t.root, &layout.pk_of(vals), &layout.order)
    }

    /// `write_row` for a WITHOUT ROWID table: the row's identity is its PRIMARY KEY. `old`
    /// is the row being updated (table-order columns).
    pub fn write_row_wr(
        &self,
        w: &TableWriter,
        old: Option<&[Value]>,
        mut vals: Vec<Value>,
        conflict: Option<ConflictAction>,
    ) -> Result<Written> {
        let t = &w.t;
        let Some((layout, pk_conflict)) = &w.wr else {
            return Err(SqlError::msg("not a WITHOUT ROWID table"));
        };
        let exec = self.exec();
        for (i, c) in t.columns.iter().enumerate() {
            let v = std::mem::take(&mut vals[i]);
            vals[i] = v.apply_affinity(c.affinity);
        }
        if !self.check_row(w, &exec, &mut vals, Value::Null, conflict)? {
            return Ok(Written::Ignored);
        }
        let defaults = exec.column_defaults(t);
        let pk = layout.pk_of(&vals);
        let old_pk = old.map(|o| layout.pk_of(o));
        // The row being updated, found again by its (old) key: it never clashes with itself.
        let is_old = |k: &[Value]| {
            old_pk
                .as_ref()
                .is_some_and(|o| layout.order.compare(o, k) == std::cmp::Ordering::Equal)
        };
        // A REPLACE into a table with no secondary index needs no probe: deleting the entry
        // holding this PRIMARY KEY, if any, and inserting the new record leaves what the
        // in-place rewrite below leaves (its delete fires nothing here, as there). The
        // probe read and decoded the row: ~7.5k of ~25.7k instructions per row of
        // speedtest1 test 500 (70,000 REPLACEs on a TEXT PRIMARY KEY, callgrind). The
        // entry is overwritten where one descent finds it (`Store::index_put`): a delete by
        // key and an insert were two descents (test 500: 2,528M -> 2,139M instructions).
        if old.is_none()
            && !w.upsert
            && !w.replace_hooks
            && w.indexes.is_empty()
            && conflict.or(*pk_conflict) == Some(ConflictAction::Replace)
        {
            self.store
                .index_put(t.root, &layout.record_of(&vals), pk.len(), &layout.order)?;
            vals.push(Value::Null);
            return Ok(Written::Keyed(vals));
        }
        let mut to_delete: Vec<Vec<Value>> = Vec::new();
        // True when `to_delete[0]` is the row holding this row's PRIMARY KEY, which the
        // new row is then written over in place (see "Write." below).
        let mut replaced_in_place = false;
        let old_full: Option<Vec<Value>> = old.map(|o| {
            let mut r = o.to_vec();
            r.push(Value::Null);
            r
        });
        let mut new_full = vals.clone();
        new_full.push(Value::Null);
        // Uniqueness: each UNIQUE index and the PRIMARY KEY, in SQLite's order.
        for i in 0..=w.indexes.len() {
            // The PRIMARY KEY, at its place in SQLite's order (`wr_key_at`; for an
            // UPSERT, as `upsert_targets_first` placed it).
            if i == w.wr_key_at && !is_old(&pk) {
                let pending = to_delete.iter().position(|d| {
                    layout.order.compare(&layout.pk_of(d), &pk) == std::cmp::Ordering::Equal
                });
                match pending {
                    // A REPLACE checked before took the row holding this key (SQLite has
                    // deleted it there): nothing clashes here, and it is the row rewritten
                    // in place when that applies.
                    Some(j) => {
                        if old.is_none() && !w.replace_hooks {
                            let r = to_delete.remove(j);
                            to_delete.insert(0, r);
                            replaced_in_place = true;
                        }
                    }
                    None => {
                        if let Some(existing) = layout.lookup_full(&exec, t, &pk, &defaults)? {
                            let declared = match w.upsert_key {
                                true => None,
                                false => *pk_conflict,
                            };
                            match conflict.or(declared).unwrap_or(ConflictAction::Abort) {
                                ConflictAction::Ignore => return Ok(Written::Ignored),
                                ConflictAction::Replace => {
                                    replaced_in_place = old.is_none() && !w.replace_hooks;
                                    match replaced_in_place {
                                        true => to_delete.insert(0, existing),
                                        false => to_delete.push(existing),
                                    }
                                }
                                action => {
                                    let cols: Vec<String> = layout
                                        .pk
                                        .iter()
                                        .map(|&c| format!("{}.{}", t.name, t.columns[c].name))
                                        .collect();
                                    let error = constraint(
                                        SQLITE_CONSTRAINT_PRIMARYKEY,
                                        format!("UNIQUE constraint failed: {}", cols.join(", ")),
                                    );
                                    if w.upsert && conflict.is_none() {
                                        return Ok(Written::KeyConflict {
                                            existing,
                                            columns: layout.pk.clone(),
                                            error,
                                        });
                                    }
                                    self.note_resolution(action);
                                    return Err(error);
                                }
                            }
                        }
                    }
                }
            }
            let Some((ix, order, pred, exprs)) = w.indexes.get(i) else {
                break;
            };
            if !ix.unique {
                continue;
            }
            if let Some(p) = pred {
                if !exec.index_where_is_true(p, &Frame::new(&new_full, None))? {
                    continue;
                }
            }
            let mut k = index_key_wr(&exec, t, ix, exprs, &vals)?;
            k.truncate(ix.columns.len());
            if k.iter().any(|v| v.is_null()) {
                continue;
            }
            if let Some(of) = &old_full {
                let mut ok = index_key_wr(&exec, t, ix, exprs, &of[..t.columns.len()])?;
                ok.truncate(ix.columns.len());
                let old_in = match pred {
                    Some(p) => exec.index_where_is_true(p, &Frame::new(of, None))?,
                    None => true,
                };
                if old_in
                    && same_values(&ok, &k)
                    && layout.order.compare(&pk, &layout.pk_of(of)) == std::cmp::Ordering::Equal
                {
                    continue;
                }
            }
            let positions = pk_positions_in_index(t, ix);
            let mut clash: Vec<Vec<Value>> = Vec::new();
            for e in self.store.index_range(
                ix.root,
                order,
                Bound::Included(k.clone()),
                Bound::Included(k.clone()),
                false,
            )? {
                let e = e?;
                let epk: Vec<Value> = positions
                    .iter()
                    .map(|&p| e.get(p).cloned().unwrap_or(Value::Null))
                    .collect();
                let pending = to_delete.iter().any(|d| {
                    layout.order.compare(&layout.pk_of(d), &epk) == std::cmp::Ordering::Equal
                });
                if is_old(&epk) || pending {
                    continue;
                }
                if let Some(row) = layout.lookup_full(&exec, t, &epk, &defaults)? {
                    clash.push(row);
                }
            }
            if clash.is_empty() {
                continue;
            }
            let declared = match i < w.upsert_first {
                true => None,
                false => ix.on_conflict,
            };
            match conflict.or(declared).unwrap_or(ConflictAction::Abort) {
                ConflictAction::Ignore => return Ok(Written::Ignored),
                ConflictAction::Replace => to_delete.extend(clash),
                action => {
                    let error = constraint(SQLITE_CONSTRAINT_UNIQUE, unique_failed_message(t, ix));
                    if w.upsert && conflict.is_none() {
                        return Ok(Written::KeyConflict {
                            existing: clash.swap_remove(0),
                            columns: ix.columns.iter().filter_map(|c| c.column).collect(),
                            error,
                        });
                    }
                    self.note_resolution(action);
                    return Err(error);
                }
            }
        }
        // Write. A REPLACE over the row holding the same PRIMARY KEY rewrites that row in
        // place: the table tree's entry is deleted by its key and the new record inserted,
        // and only the secondary entries whose key changed are rewritten, the same
        // trees as deleting the row and inserting the new one. Deleting it first read it a
        // second time and descended every tree twice: 33.5k instructions per row of
        // speedtest1 test 500 (70,000 REPLACEs on a TEXT PRIMARY KEY) against 26k.
        if w.replace_hooks && !to_delete.is_empty() {
            return Ok(Written::Replacing {
                victims: Victims::Keyed(to_delete),
                rowid: 0,
            });
        }
        let replaced: Option<&Vec<Value>> = match replaced_in_place {
            true => to_delete.first(),
            false => None,
        };
        for r in &to_delete[usize::from(replaced_in_place)..] {
            self.delete_row_wr(w, &r[..t.columns.len()])?;
        }
        if let Some(o) = old {
            self.delete_row_wr(w, o)?;
        }
        if replaced.is_some() {
            // A probe with only the key compares equal to the stored record (the tree's
            // comparator would order two records of one key by their other fields).
            self.store.index_delete(t.root, &pk, &layout.order)?;
        }
        self.store
            .index_insert(t.root, &layout.record_of(&vals), &layout.order)?;
        for (ix, order, pred, exprs) in &w.indexes {
            let new_in = match pred {
                Some(p) => exec.index_where_is_true(p, &Frame::new(&new_full, None))?,
                None => true,
            };
            let k = index_key_wr(&exec, t, ix, exprs, &vals)?;
            if let Some(r) = replaced {
                let old_in = match pred {
                    Some(p) => exec.index_where_is_true(p, &Frame::new(r, None))?,
                    None => true,
                };
                let ok = index_key_wr(&exec, t, ix, exprs, &r[..t.columns.len()])?;
                if old_in && new_in && same_values(&ok, &k) {
                    continue;
                }
                if old_in {
                    self.store.index_delete(ix.root, &ok, order)?;
                }
            }
            if new_in {
                self.store.index_insert(ix.root, &k, order)?;
            }
        }
        Ok(Written::Keyed(new_full))
    }

    /// The stored row a write produced (combined layout), for RETURNING, AFTER triggers and
    /// foreign-key checks.
    pub fn written_row(&self, t: &Table, written: &Written) -> Result<Option<Vec<Value>>> {
        match written {
            Written::Row(rowid) => {
                let Some(stored) = self.store.table_get(t.root, *rowid)? else {
                    return Ok(None);
                };
                let defaults = self.exec().column_defaults(t);
                Ok(Some(self.exec().table_row(t, *rowid, stored, &defaults)?))
            }
            Written::Keyed(row) => Ok(Some(row.clone())),
            _ => Ok(None),
        }
    }

    fn new_rowid(&self, t: &Table) -> Result<i64> {
        let max = self.store.table_max_rowid(t.root)?.unwrap_or(0);
        // Without AUTOINCREMENT the next rowid is the largest plus one, even when that is
        // negative (an empty table starts at 1); AUTOINCREMENT also stays above the
        // sequence, which starts at 0.
        let m = if t.autoincrement {
            max.max(self.sequence_value(&t)?.unwrap_or(0))
        } else {
            max
        };
        if m == i64::MAX {
            if t.autoincrement {
                return Err(SqlError::Code {
                    code: codes::SQLITE_FULL,
                    extended_code: codes::SQLITE_FULL,
                    message: "database or disk is full".into(),
                });
            }
            // SQLite then tries random rowids; probe downward from the top instead.
            let mut cand = i64::MAX - 1;
            while self.store.table_get(t.root, cand)?.is_some() {
                cand -= 1;
            }
            return Ok(cand);
        }
        Ok(m + 1)
    }

    /// `t`'s row of its database's `sqlite_sequence`: (that table's root, the row's rowid,
    /// the sequence value).
    pub(crate) fn sequence_row(&self, t: &Table) -> Result<Option<(u32, i64, i64)>> {
        let name = t.name.as_str();
        // The sequence table of `t`'s own database (main or attached).
        let Some(seq) = self.schema.db_schema(t.root).table("sqlite_sequence") else {
            return Ok(None);
        };
        for r in self
            .store
            .table_range(seq.root, Bound::Unbounded, Bound::Unbounded, false)?
        {
            let (rowid, vals) = r?;
            if vals
                .first()
                .and_then(|v| v.to_text())
                .is_some_and(|n| n.eq_ignore_ascii_case(name))
            {
                return Ok(Some((
                    seq.root,
                    rowid,
                    vals.get(1).map(|v| v.to_i64()).unwrap_or(0),
                )));
            }
        }
        Ok(None)
    }

    fn sequence_value(&self, t: &Table) -> Result<Option<i64>> {
        Ok(self.sequence_row(t)?.map(|(_, _, v)| v))
    }

    /// Makes `t`'s sequence row when it has none, at 0: SQLite writes it at the end of every
    /// INSERT into an AUTOINCREMENT table (autoIncrementEnd), even one that inserts no row.
    pub(crate) fn ensure_sequence_row(&self, t: &Table) -> Result<()> {
        match self.sequence_row(t)? {
            Some(_) => Ok(()),
            None => self.bump_sequence(t, 0),
        }
    }

    fn bump_sequence(&self, t: &Table, rowid: i64) -> Result<()> {
        let name = t.name.as_str();
        match self.sequence_row(t)? {
            Some((root, r, v)) => {
                if rowid > v {
                    self.store.table_insert(
                        root,
                        r,
                        &[Value::text(name), Value::Integer(rowid)],
                    )?;
                }
            }
            None => {
                let Some(seq) = self.schema.db_schema(t.root).table("sqlite_sequence") else {
                    return Ok(());
                };
                let r = self.store.table_max_rowid(seq.root)?.unwrap_or(0) + 1;
                // The sequence starts at 0: a negative rowid does not lower it.
                self.store.table_insert(
                    seq.root,
                    r,
                    &[Value::text(name), Value::Integer(rowid.max(0))],
                )?;
            }
        }
        Ok(())
    }

    /// Calls the update hook, if any, for row `rowid` of `t` that was just written or
    /// deleted: as SQLite, only for tables with rowids and not for its own sqlite_ tables,
    /// at the write (before AFTER triggers and foreign-key actions run). Not called for
    /// rows a REPLACE deletes, nor for a DELETE that empties a table whole.
    pub(crate) fn row_changed(&self, change: crate::exec::RowChange, t: &Table, rowid: i64) {
        if t.without_rowid || !self.state.update_hook.is_set() {
            return;
        }
        if t.name.len() >= 7 && t.name[..7].eq_ignore_ascii_case("sqlite_") {
            return;
        }
        let db = if t.root & super::store::TEMP_ROOT_BIT != 0 {
            "temp"
        } else {
            match super::store::attached_slot(t.root) {
                Some(i) => self
                    .schema
                    .attached
                    .get(i)
                    .map_or("main", |a| a.name.as_str()),
                None => "main",
            }
        };
        if let Some(h) = self.state.update_hook.0.borrow_mut().as_mut() {
            h(change, db, &t.name, rowid);
        }
    }

    fn count_change(&self) {
        let s: &ConnState = self.state;
        if self.nested_depth == 0 {
            s.pending_changes.set(s.pending_changes.get() + 1);
        }
        s.total_changes.set(s.total_changes.get() + 1);
    }
}

/// Bound expression terms of an index, one per key column (None for plain columns).
pub type IndexExprs = Vec<Option<CExpr>>;

/// Binds the expression terms of `ix` against `t`'s row layout (columns, then the rowid),
/// refusing what SQLite refuses in index expressions (expridx.html §2).
pub fn bind_index_exprs(b: &mut Binder, t: &Table, ix: &Index) -> Result<IndexExprs> {
    let mut out = Vec::with_capacity(ix.columns.len());
    for c in &ix.columns {
        let Some(e) = &c.expr else {
            out.push(None);
            continue;
        };
        let bound = b.bind_for_table(t, None, e)?;
        check_index_expr(&bound, "index expressions")?;
        out.push(Some(bound));
    }
    Ok(out)
}

/// SQLite's refusals for index expressions and partial-index predicates.
/// `what` names the place in the message ("index expressions", "partial index WHERE
/// clauses").
pub fn check_index_expr(e: &CExpr, what: &str) -> Result<()> {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        match e {
            CExpr::Exists(_) | CExpr::Scalar(_) | CExpr::Field { .. } | CExpr::InSelect { .. } => {
                return Err(SqlError::msg(format!("subqueries prohibited in {what}")))
            }
            CExpr::Func { def, .. } if !def.deterministic => {
                return Err(SqlError::msg(format!(
                    "non-deterministic functions prohibited in {what}"
                )))
            }
            CExpr::Param(_) => {
                return Err(SqlError::msg(format!("parameters prohibited in {what}")))
            }
            _ => {}
        }
        e.for_each_child(&mut |x| stack.push(x));
    }
    Ok(())
}

/// The index entry of a row: each term's value (a column, the rowid, or an evaluated
/// expression), then the rowid. `vals` are the row's columns without the rowid.
pub fn index_key(
    exec: &Exec,
    ix: &Index,
    exprs: &IndexExprs,
    vals: &[Value],
    rowid: i64,
) -> Result<Vec<Value>> {
    // Sized for the trailing rowid up front: `collect` then `push` reallocated every
    // key (250M of 14.6G instructions in a speedtest1 excerpt, callgrind).
    let mut k: Vec<Value> = Vec::with_capacity(ix.columns.len() + 1);
    index_key_into(exec, ix, exprs, vals, rowid, &mut k)?;
    Ok(k)
}

/// `index_key` written into `k` (cleared first), whose room a writer keeps from row to
/// row.
pub fn index_key_into(
    exec: &Exec,
    ix: &Index,
    exprs: &IndexExprs,
    vals: &[Value],
    rowid: i64,
    k: &mut Vec<Value>,
) -> Result<()> {
    k.clear();
    let mut row: Option<Vec<Value>> = None;
    for (i, c) in ix.columns.iter().enumerate() {
        if let Some(Some(e)) = exprs.get(i) {
            let row = row.get_or_insert_with(|| {
                let mut r = Vec::with_capacity(vals.len() + 1);
                r.extend_from_slice(vals);
                r.push(Value::Integer(rowid));
                r
            });
            k.push(exec.eval_pure("an index", e, &Frame::new(row, None))?);
            continue;
        }
        k.push(
            c.column
                .and_then(|i| vals.get(i).cloned())
                .unwrap_or(Value::Integer(rowid)),
        );
    }
    k.push(Value::Integer(rowid));
    Ok(())
}

/// `UNIQUE constraint failed: t.a, t.b` (or `index 'i'` for an index on expressions), as
/// SQLite words a uniqueness violation of `ix`.
fn unique_failed_message(t: &Table, ix: &Index) -> String {
    let cols: Vec<String> = if ix.columns.iter().any(|c| c.expr.is_some()) {
        vec![format!("index '{}'", ix.name)]
    } else {
        ix.columns
            .iter()
            .map(|c| {
                let name = c
                    .column
                    .map(|i| t.columns[i].name.clone())
                    .unwrap_or_else(|| "rowid".into());
                format!("{}.{name}", t.name)
            })
            .collect()
    };
    format!("UNIQUE constraint failed: {}", cols.join(", "))
}
