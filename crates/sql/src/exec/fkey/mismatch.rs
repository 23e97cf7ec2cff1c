//! "foreign key mismatch" (foreignkeys.html §3): a parent key must be the parent's INTEGER
//! PRIMARY KEY, or the columns of a UNIQUE index of the parent (a PRIMARY KEY or UNIQUE
//! constraint, or CREATE UNIQUE INDEX) — exactly those columns in any order, each indexed
//! under the column's own collation, the index neither partial nor on expressions.
//!
//! SQLite checks it (sqlite3FkLocateIndex) while preparing a statement that must look the
//! other side of a key up — so the error comes even when no row is touched: an INSERT or
//! DELETE on the child table, a DELETE on the parent table (with `foreign_keys` on), and
//! `PRAGMA foreign_key_check` (always). A key whose parent table does not exist is not a
//! mismatch (every non-NULL child key simply violates it).

use super::super::Engine;
use crate::schema::{ForeignKey, Table};
use crate::value::{Result, SqlError};
use std::sync::Arc;

pub(super) fn mismatch(child: &Table, fk: &ForeignKey) -> SqlError {
    SqlError::msg(format!(
        "foreign key mismatch - \"{}\" referencing \"{}\"",
        child.name, fk.parent
    ))
}

impl Engine<'_> {
    /// Whether `cols` (the parent key of a foreign key) is a key SQLite can look up in
    /// `parent` (see the module header).
    pub(super) fn parent_key_is_usable(&self, parent: &Table, cols: &[String]) -> bool {
        let mut idxs = Vec::with_capacity(cols.len());
        for c in cols {
            match parent.column_index(c) {
                Some(i) => idxs.push(i),
                None => return false,
            }
        }
        if idxs.len() == 1 && parent.rowid_alias == Some(idxs[0]) {
            return true;
        }
        let mut candidates = self.schema.table_indexes(parent);
        if parent.without_rowid {
            candidates.push(Arc::new(super::super::without_rowid::primary_key_index(
                parent,
            )));
        }
        candidates.iter().any(|ix| {
            ix.unique
                && ix.partial.is_none()
                && ix.columns.len() == idxs.len()
                && ix.columns.iter().all(|ic| {
                    ic.expr.is_none()
                        && ic.column.is_some_and(|c| {
                            idxs.contains(&c)
                                && parent.columns.get(c).map(|col| col.collation)
                                    == Some(ic.collation)
                        })
                })
        })
    }

    /// The prepare-time check of a statement writing `t` with foreign keys on: each key of
    /// `t` as a child (for an UPDATE, only keys with a child column among `set_columns`),
    /// and for a DELETE or UPDATE each key naming `t` as its parent, must have a usable
    /// parent key (sqlite3FkCheck and sqlite3FkOldmask).
    pub(crate) fn fk_check_statement(&self, t: &Table, write: FkWrite<'_>) -> Result<()> {
        if !self.fk_on() {
            return Ok(());
        }
        for fk in &t.fkeys {
            if let FkWrite::Update(set) = write {
                let touched = fk.columns.iter().any(|&c| {
                    t.columns
                        .get(c)
                        .is_some_and(|col| set.iter().any(|s| s.eq_ignore_ascii_case(&col.name)))
                });
                if !touched {
                    continue;
                }
            }
            if self.parent_table(fk, t).is_none() {
                continue;
            }
            let (parent, cols) = self.parent_key(fk, t)?;
            if !self.parent_key_is_usable(&parent, &cols) {
                return Err(mismatch(t, fk));
            }
        }
        if !matches!(write, FkWrite::Insert) {
            for (child, fk) in self.children_of(t) {
                let (parent, cols) = self.parent_key(&fk, &child)?;
                if !self.parent_key_is_usable(&parent, &cols) {
                    return Err(mismatch(&child, &fk));
                }
            }
        }
        Ok(())
    }
}

/// The kind of statement `fk_check_statement` checks.
#[derive(Debug, Clone, Copy)]
pub(crate) enum FkWrite<'a> {
    Insert,
    Delete,
    /// The columns named by SET.
    Update(&'a [String]),
}
