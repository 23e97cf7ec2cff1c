//! The table writer: what INSERT, UPDATE and DELETE need to write one table's rows (its
//! indexes with their key orders, bound partial-index predicates and expression terms, bound
//! CHECK constraints, defaults and generated columns), and the per-connection cache that
//! binds it once per table instead of once per statement.
//!
//! Why a cache: building the writer cost ~3k instructions and dropping it ~1.2k on every
//! single-row UPDATE of speedtest1 test 240 (a 4-column table with three indexes).
//!
//! Invariants:
//! 1. A cached writer is returned only for the very `Arc<Table>` it was built from and only
//!    while the table's indexes, looked up by name in its database's schema, are the very
//!    `Arc<Index>`es it holds (pointer equality). A `Table` or `Index` is never changed in
//!    place while an `Arc` to it is held elsewhere (the cache holds one), so any DDL that
//!    touches the table or its indexes (CREATE/DROP INDEX, ALTER TABLE, a schema reload after
//!    another connection's change, a rolled-back DDL) yields a miss.
//! 2. Everything else the writer holds is a function of the table and its indexes alone:
//!    binding CHECK, DEFAULT, generated-column and index expressions reads no tables, no
//!    parameters and no connection setting.
//! 3. The per-statement flags (`upsert`, `replace_hooks`) live outside the shared parts.

use super::super::eval::Exec;
use super::super::store::KeyOrder;
use super::super::without_rowid::{key_order_for, WrLayout};
use super::super::Engine;
use super::replace::ReplaceScratch;
use super::{bind_index_exprs, IndexExprs, Written};
use crate::parse::ast::ConflictAction;
use crate::plan::{Binder, CExpr};
use crate::schema::{Index, Table};
use crate::value::Value;
use crate::value::{Result, SqlError};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;

/// The statement-independent part of a table writer (shared through `WriterCache`).
pub struct WriterParts {
    pub t: Arc<Table>,
    /// Each index with its key order, bound partial-index predicate and bound expression
    /// terms (one per key column; None for plain columns), in SQLite's checking order
    /// (`check_order`): every writer loop that checks uniqueness walks this list, so the
    /// first clashing index here is the one that resolves or names the conflict.
    pub indexes: Vec<(Arc<Index>, KeyOrder, Option<CExpr>, IndexExprs)>,
    pub checks: Vec<(String, CExpr)>,
    /// Each column's DEFAULT, bound, or the error binding it gave: SQLite codes a default
    /// only where a row takes it, so an unknown function there fails only then (an INSERT
    /// naming the column never reaches it).
    pub defaults: Vec<Option<std::result::Result<CExpr, SqlError>>>,
    /// Generated columns in computing order (`Exec::generated_exprs`).
    pub generated: Vec<(usize, CExpr)>,
    /// WITHOUT ROWID tables: the record layout and the PRIMARY KEY's conflict clause (its
    /// index is the table tree, so it is not among `indexes`).
    pub wr: Option<(Arc<WrLayout>, Option<ConflictAction>)>,
    /// WITHOUT ROWID tables: how many of `indexes` SQLite checks before the PRIMARY KEY,
    /// whose index is in its list like any other (`check_order`).
    pub wr_key_at: usize,
    /// Every index of the table as found when bound (the WITHOUT ROWID key's too), to
    /// check invariant 1.
    all_indexes: Vec<Arc<Index>>,
}

/// Everything needed to write rows of one table in one statement.
pub struct TableWriter {
    pub parts: Rc<WriterParts>,
    /// Report aborting uniqueness conflicts as `Written::Conflict` (INSERT ... ON CONFLICT).
    pub upsert: bool,
    /// A REPLACE's conflicting rows must be deleted as DELETE deletes them (DELETE
    /// triggers under `recursive_triggers`, foreign-key actions): the writer then returns
    /// `Written::Replacing` instead of deleting them itself (dml/replace_delete.rs).
    pub replace_hooks: bool,
    /// How many leading `indexes` are targets of this INSERT's ON CONFLICT clauses, and
    /// whether the rowid (or WITHOUT ROWID key) is one: a clash there goes to the upsert
    /// whatever conflict clause the constraint declares, as in SQLite.
    pub upsert_first: usize,
    pub upsert_key: bool,
    /// `insert_replacing`'s per-row buffers, kept for the statement's next row.
    pub(super) replace_scratch: Cell<ReplaceScratch>,
    /// UPDATE (`skip_unchanged`): per column, whether the statement leaves it as it was,
    /// and per CHECK of `checks`, whether it reads nothing the statement changes. SQLite
    /// checks neither those NOT NULL columns nor those CHECKs (sqlite3GenerateConstraintChecks:
    /// `aiChng`, `sqlite3ExprReferencesUpdatedColumn`), so a row already violating one can
    /// still be updated elsewhere. Empty: check everything (INSERT).
    pub(super) unchanged: Vec<bool>,
    pub(super) checks_skipped: Vec<bool>,
}

impl TableWriter {
    /// Notes what an UPDATE assigning `assigned` (None: the rowid) leaves unchanged: the
    /// columns it does not assign, except the rowid's alias when the rowid is assigned and
    /// generated columns computed from an assigned one; and the CHECKs reading none of the
    /// changed columns (nor the rowid when it changes).
    pub fn skip_unchanged(&mut self, assigned: impl IntoIterator<Item = Option<usize>>) {
        let p = &self.parts;
        let n = p.t.columns.len();
        // One slot per column, then the rowid's (as a bound expression's row has them).
        let mut changed = vec![false; n + 1];
        for c in assigned {
            changed[c.unwrap_or(n)] = true;
        }
        if let Some(a) = p.t.rowid_alias {
            let either = changed[a] || changed[n];
            changed[a] = either;
            changed[n] = either;
        }
        // In computing order, so one pass sees a generated column's own sources first.
        for (g, e) in &p.generated {
            if reads_any(e, &changed) {
                changed[*g] = true;
            }
        }
        self.checks_skipped = p
            .checks
            .iter()
            .map(|(_, e)| !reads_any(e, &changed))
            .collect();
        changed.truncate(n);
        self.unchanged = changed.into_iter().map(|c| !c).collect();
    }

    /// Puts the indexes named by an INSERT's ON CONFLICT targets first, in clause order,
    /// the others after them in their order, as SQLite orders its checks for an UPSERT
    /// (sqlite3GenerateConstraintChecks): `targets` are the clauses' sorted column sets,
    /// up to the first clause without one; a target matching no index here (the rowid)
    /// is skipped. A WITHOUT ROWID table's key, whose index is in SQLite's list like any
    /// other, moves with it: to its clause's place among the targets, or after them at
    /// its place among the other indexes (`wr_key_at`). Only this statement's writer
    /// changes.
    pub fn upsert_targets_first(&mut self, targets: &[Vec<usize>]) {
        // Every INSERT comes here, most without a target: a new writer (`writer`) already
        // has no UPSERT key and nothing first. Building the key first cost ~0.2k
        // instructions per one-row REPLACE (callgrind, speedtest1 test 400).
        if targets.is_empty() {
            return;
        }
        let p = self.parts.clone();
        let key: Vec<usize> = match &p.wr {
            Some((layout, _)) => {
                let mut k = layout.pk.clone();
                k.sort_unstable();
                k
            }
            None => p.t.rowid_alias.into_iter().collect(),
        };
        self.upsert_key = targets.iter().any(|tc| *tc == key);
        let mut first: Vec<usize> = Vec::new();
        let mut key_target_at = None;
        for tc in targets {
            if p.wr.is_some() && *tc == key {
                key_target_at.get_or_insert(first.len());
                continue;
            }
            let found = p.indexes.iter().position(|(ix, ..)| {
                let mut ic: Vec<usize> = ix.columns.iter().filter_map(|c| c.column).collect();
                ic.sort_unstable();
                ix.unique && ix.partial.is_none() && ic.len() == ix.columns.len() && ic == *tc
            });
            if let Some(i) = found.filter(|i| !first.contains(i)) {
                first.push(i);
            }
        }
        self.upsert_first = first.len();
        let wr_key_at = key_target_at.unwrap_or_else(|| {
            first.len() + (0..p.wr_key_at).filter(|i| !first.contains(i)).count()
        });
        if wr_key_at == p.wr_key_at && first.iter().enumerate().all(|(n, &i)| n == i) {
            return;
        }
        let rest = (0..p.indexes.len()).filter(|i| !first.contains(i));
        let indexes = first
            .iter()
            .copied()
            .chain(rest)
            .map(|i| p.indexes[i].clone())
            .collect();
        self.parts = Rc::new(WriterParts {
            t: p.t.clone(),
            indexes,
            checks: p.checks.clone(),
            defaults: p.defaults.clone(),
            generated: p.generated.clone(),
            wr: p.wr.clone(),
            wr_key_at,
            all_indexes: p.all_indexes.clone(),
        });
    }
}

impl WriterParts {
    /// Column `c`'s DEFAULT for a row that does not give it (None: it has none).
    pub fn default_value(&self, exec: &Exec, c: usize) -> Result<Option<Value>> {
        match &self.defaults[c] {
            None => Ok(None),
            Some(Ok(d)) => exec.eval(d, &super::Frame::new(&[], None)).map(Some),
            Some(Err(e)) => Err(e.clone()),
        }
    }
}

impl std::ops::Deref for TableWriter {
    type Target = WriterParts;
    fn deref(&self) -> &WriterParts {
        &self.parts
    }
}

/// The connection's recently used writers, most recent last.
#[derive(Default)]
pub struct WriterCache {
    entries: RefCell<Vec<Rc<WriterParts>>>,
}

// SAFETY: a `WriterCache` is !Send only because of the `Rc`s: its own (one per entry, and
// the clone each `TableWriter` holds) and those the binder may build inside bound
// expressions. A `TableWriter` is made and dropped within one DML statement's execution
// (`Engine::insert`/`update`/`delete`, DDL's table rewrite), and every `Rc` clone made while
// evaluating lives in that statement's `Engine`/`Exec` values, gone when it returns. Between
// statements each of those `Rc`s is reachable only through the cache, so moving the
// connection (and its cache) to another thread moves every owner of those counts with it —
// the argument `exec::CachedPlan` makes for a kept SELECT plan.
unsafe impl Send for WriterCache {}

impl std::fmt::Debug for WriterCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "WriterCache({} tables)", self.entries.borrow().len())
    }
}

/// How many tables' writers a connection keeps; a statement writes one table, a trigger
/// program or foreign-key action a few more.
const WRITER_CACHE_TABLES: usize = 16;

/// A table's indexes (given in creation order: CREATE TABLE's constraints as parsed, then
/// CREATE INDEX; a schema read back from a file gives them in sqlite_schema order, the
/// same) in the order SQLite checks them: its table's index list, where each new index
/// goes to the front, except that an index resolving conflicts by REPLACE goes after the
/// leading run of non-REPLACE ones (sqlite3CreateIndex), so REPLACE indexes come last.
pub fn check_order(indexes: &[Arc<Index>]) -> Vec<Arc<Index>> {
    let replace = |ix: &Index| ix.unique && ix.on_conflict == Some(ConflictAction::Replace);
    let mut list: Vec<Arc<Index>> = Vec::with_capacity(indexes.len());
    for ix in indexes {
        let at = match list.first() {
            Some(head) if replace(ix) && !replace(head) => {
                list.iter().take_while(|x| !replace(x)).count()
            }
            _ => 0,
        };
        list.insert(at, ix.clone());
    }
    list
}

impl Engine<'_> {
    pub fn writer(&self, t: &Arc<Table>) -> Result<TableWriter> {
        let db = self.schema.db_schema(t.root);
        let current = |p: &WriterParts| {
            Arc::ptr_eq(&p.t, t)
                && p.all_indexes.len() == t.indexes.len()
                && t.indexes
                    .iter()
                    .zip(&p.all_indexes)
                    .all(|(n, ix)| db.indexes.get(n).is_some_and(|x| Arc::ptr_eq(x, ix)))
        };
        let cache = &self.state.writers.entries;
        let hit = cache.borrow().iter().rev().find(|p| current(p)).cloned();
        let parts = match hit {
            Some(p) => p,
            None => {
                let p = Rc::new(self.bind_writer(t)?);
                let mut entries = cache.borrow_mut();
                entries.retain(|e| !Arc::ptr_eq(&e.t, t));
                if entries.len() >= WRITER_CACHE_TABLES {
                    entries.remove(0);
                }
                entries.push(p.clone());
                p
            }
        };
        Ok(TableWriter {
            parts,
            upsert: false,
            replace_hooks: false,
            upsert_first: 0,
            upsert_key: false,
            replace_scratch: Cell::default(),
            unchanged: Vec::new(),
            checks_skipped: Vec::new(),
        })
    }

    /// The clash of a new row on the writer's first index, an UPSERT target, as
    /// `Written::Conflict`; None when there is none.
    pub(super) fn upsert_first_clash(
        &self,
        w: &TableWriter,
        exec: &Exec,
        vals: &[Value],
        rowid: i64,
    ) -> Result<Option<Written>> {
        let Some((ix, order, _, exprs)) = w.indexes.first() else {
            return Ok(None);
        };
        let mut k = Engine::index_key(exec, ix, exprs, vals, rowid)?;
        k.pop();
        if k.iter().any(|v| v.is_null()) {
            return Ok(None);
        }
        let mut clash = Vec::new();
        self.store
            .index_prefix_rowids(ix.root, order, &k, &mut clash)?;
        let Some(&existing) = clash.first() else {
            return Ok(None);
        };
        Ok(Some(Written::Conflict {
            rowid: existing,
            columns: Some(ix.columns.iter().filter_map(|c| c.column).collect()),
            error: super::constraint(
                super::SQLITE_CONSTRAINT_UNIQUE,
                super::unique_failed_message(&w.t, ix),
            ),
        }))
    }

    fn bind_writer(&self, t: &Arc<Table>) -> Result<WriterParts> {
        let mut b = Binder::new(self.schema);
        let mut indexes = Vec::new();
        let mut pk_conflict = None;
        let mut wr_key_at = 0;
        let all_indexes = self.schema.table_indexes(t);
        for ix in &check_order(&all_indexes) {
            // Writing keys orders them: an index whose collation this connection lacks is
            // SQLite's `no such collation sequence: X` when the statement is prepared.
            for c in &ix.columns {
                c.collation.require()?;
            }
            if t.without_rowid && ix.root == t.root {
                pk_conflict = ix.on_conflict;
                wr_key_at = indexes.len();
                continue;
            }
            let pred = match &ix.partial {
                Some(p) => Some(b.bind_for_table(t, None, p)?),
                None => None,
            };
            let order = key_order_for(t, ix);
            let exprs = bind_index_exprs(&mut b, t, ix)?;
            indexes.push((ix.clone(), order, pred, exprs));
        }
        let mut checks = Vec::new();
        for c in &t.checks {
            let name = c.name.clone().unwrap_or_else(|| c.span.clone());
            checks.push((name, b.bind_for_table(t, None, &c.expr)?));
        }
        let mut defaults = Vec::new();
        for c in &t.columns {
            defaults.push(
                c.default
                    .as_ref()
                    .map(|e| b.bind_standalone(e).map_err(default_error)),
            );
        }
        let generated = match t.has_generated() {
            true => self.exec().generated_exprs(t)?,
            false => Vec::new(),
        };
        Ok(WriterParts {
            t: t.clone(),
            indexes,
            checks,
            defaults,
            generated,
            wr: t.without_rowid.then(|| (WrLayout::shared(t), pk_conflict)),
            wr_key_at,
            all_indexes,
        })
    }
}

/// Whether bound expression `e` reads a column (or the rowid) marked in `changed`, by its
/// slot in the row.
fn reads_any(e: &CExpr, changed: &[bool]) -> bool {
    let mut stack = vec![e];
    while let Some(x) = stack.pop() {
        if let CExpr::Col { level: 0, idx } = x {
            if changed.get(*idx).copied().unwrap_or(false) {
                return true;
            }
        }
        x.for_each_child(&mut |c| stack.push(c));
    }
    false
}

/// A DEFAULT's function that does not resolve fails as SQLite's code generator reports it
/// (sqlite3ExprCodeTarget: "unknown function: f()" for a missing function, a wrong
/// argument count or an aggregate), not as the resolver does.
fn default_error(e: SqlError) -> SqlError {
    let text = e.to_string();
    let name = match &e {
        SqlError::NoSuchFunction { name } => Some(name.as_str()),
        _ => [
            "wrong number of arguments to function ",
            "misuse of aggregate function ",
        ]
        .iter()
        .find_map(|p| text.strip_prefix(p)?.strip_suffix("()")),
    };
    match name {
        Some(name) => SqlError::msg(format!("unknown function: {name}()")),
        None => e,
    }
}
