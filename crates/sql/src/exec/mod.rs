//! Executor: runs one parsed statement against a `Store` inside the caller's transaction.
//!
//! The connection layer (crate `parlite`) owns transactions and statement atomicity; this
//! module owns what statements mean. `Engine` borrows the store, the schema cache and the
//! connection counters for the duration of one statement.
//!
//! Invariants:
//! - After any statement that changed `sqlite_schema`, the schema cookie has been bumped and
//!   `schema` reloaded from the stored rows, so the cache never disagrees with the file.
//! - Trigger programs run with `trigger_row` holding NEW then OLD (each the table's columns
//!   plus rowid); statements inside see it as the enclosing frame. Depth is bounded by
//!   SQLite's SQLITE_MAX_TRIGGER_DEPTH (1000): a trigger fires itself again only under
//!   `PRAGMA recursive_triggers`, and each firing runs on a heap-grown stack segment when
//!   the caller's stack runs low (`crate::stack`), so 1000 levels are safe on any thread.

pub mod covering;
pub mod ddl;
pub mod dml;
pub mod eqp;
pub mod eqp_dml;
pub mod eval;
pub mod explain;
pub mod fkey;
pub mod memstore;
pub mod pragma;
mod rename;
pub mod select;
pub mod store;
pub mod txnstore;
pub mod vacuum_into;
pub mod without_rowid;

use crate::func::FunctionContext;
use crate::parse::ast::{self, Stmt, TriggerEvent, TriggerTime};
use crate::plan::{Binder, CExpr, SelectPlan};
use crate::schema::{Schema, Table, Trigger};
use crate::value::{Result, SqlError, Value};
use eval::{Exec, Frame};
use std::cell::Cell;
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use store::{Row, Store};

/// Per-connection counters and settings that statements read and update.
#[derive(Debug, Default)]
pub struct ConnState {
    pub last_insert_rowid: Cell<i64>,
    pub changes: Cell<i64>,
    pub total_changes: Cell<i64>,
    /// Changes of the running top-level statement.
    pub pending_changes: Cell<i64>,
    pub busy_timeout_ms: Cell<i64>,
    pub synchronous: Cell<i64>,
    pub foreign_keys: Cell<bool>,
    /// `PRAGMA recursive_triggers`: lets a trigger fire itself again (up to SQLite's depth
    /// limit, `Engine::fire`), and REPLACE's deletes of conflicting rows fire DELETE
    /// triggers only when this is on (dml/replace_delete.rs).
    pub recursive_triggers: Cell<bool>,
    pub case_sensitive_like: Cell<bool>,
    /// `PRAGMA isolation_level`: this connection's concurrent transactions (BEGIN
    /// CONCURRENT, autocommit writes) validate reads too (false, the default: serializable)
    /// or write-write conflicts only (true: snapshot isolation).
    pub isolation_snapshot: Cell<bool>,
    /// The conflict resolution that governed the running statement's last constraint
    /// failure (set where the failure is raised, cleared when a top-level statement starts).
    pub failed_resolution: Cell<Option<ast::ConflictAction>>,
    /// Table writers bound by earlier statements (dml/writer.rs).
    pub writers: dml::WriterCache,
    /// The running statement belongs to an explicit transaction (set by the connection
    /// before each statement): only then are foreign keys deferred (fkey.rs).
    pub explicit_txn: Cell<bool>,
    /// `PRAGMA defer_foreign_keys`: every foreign key deferred until the transaction ends
    /// (the connection clears it at COMMIT and ROLLBACK).
    pub defer_foreign_keys: Cell<bool>,
    /// Deferred foreign-key checks of the explicit transaction, re-run at COMMIT
    /// (`Engine::fk_check_deferred`); cleared when the transaction ends.
    pub fk_deferred: std::cell::RefCell<Vec<fkey::FkNoAction>>,
    /// The settings pragmas of `pragma::Settings` (query_only, max_page_count, ...).
    pub settings: pragma::Settings,
    /// `FunctionContext::pure_context`, set by `Exec::eval_pure`.
    pub pure_context: Cell<Option<&'static str>>,
    /// The application's update hook (sqlite3_update_hook).
    pub update_hook: UpdateHookSlot,
}

/// What an update hook is told a row went through: SQLite's SQLITE_INSERT (18),
/// SQLITE_DELETE (9) and SQLITE_UPDATE (23).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowChange {
    Insert = 18,
    Delete = 9,
    Update = 23,
}

/// An update hook: the change, the database's name ("main", "temp", an attached one's),
/// the table's name and the row's rowid (after an UPDATE, its new rowid).
pub type UpdateHook = Box<dyn FnMut(RowChange, &str, &str, i64) + Send>;

/// A connection's update hook, if any (`Engine::row_changed`).
#[derive(Default)]
pub struct UpdateHookSlot(pub std::cell::RefCell<Option<UpdateHook>>);

impl UpdateHookSlot {
    pub fn is_set(&self) -> bool {
        self.0.borrow().is_some()
    }
}

impl std::fmt::Debug for UpdateHookSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.is_set() {
            "UpdateHook(set)"
        } else {
            "UpdateHook(none)"
        })
    }
}

impl FunctionContext for ConnState {
    fn changes(&self) -> i64 {
        self.changes.get()
    }
    fn total_changes(&self) -> i64 {
        self.total_changes.get()
    }
    fn last_insert_rowid(&self) -> i64 {
        self.last_insert_rowid.get()
    }
    fn case_sensitive_like(&self) -> bool {
        self.case_sensitive_like.get()
    }
    fn pure_context(&self) -> Option<&'static str> {
        self.pure_context.get()
    }
    fn set_pure_context(&self, what: Option<&'static str>) {
        self.pure_context.set(what);
    }
}

static EXEC_IDS: AtomicU64 = AtomicU64::new(1);

/// The bound SELECT of a top-level statement (a SELECT, or the WHERE of an UPDATE/DELETE
/// bound as a SELECT), kept by a prepared statement so that re-running it skips the binder.
/// Parameters stay late-bound (`CExpr::Param`); the plan depends only on the schema, so its
/// keeper must drop it whenever the schema is reloaded or changed (parlite's
/// `schema_gen`). Subquery result caches inside it are tagged with `exec_id`, so rows of a
/// previous run are never reused.
pub struct CachedPlan {
    /// The top-level SELECT's plan (or the UPDATE/DELETE row search's). Boxed, as is
    /// `update`: the plan moves between the statement, the connection and the engine
    /// six times per execution, and moving ~250 bytes each time cost ~0.3k instructions
    /// per kv_ops statement.
    select: Option<Box<SelectPlan>>,
    /// A top-level UPDATE's or DELETE's resolved table, triggers and SET clause.
    dml: Option<Box<BoundDml>>,
    /// The index walks the SELECT's join levels kept at the end of its last execution,
    /// detached from that execution's store (`RowScan::detach`), for the next execution to
    /// restart (`Engine::run_top_select`): a reused point SELECT then neither builds its
    /// walk (two pooled cursors, the key buffer, the box: ~1.1k instructions of a kv_ops
    /// select) nor drops it (~0.75k; BENCHMARKS.md "pointsel"). Keyed by their sources'
    /// addresses in `select`, which stay put while the plan is kept.
    walks: Vec<select::KeptWalk>,
    /// `select` ran before. Walks are kept from the second execution on: a one-shot
    /// statement's walks go back to the store's pool instead, whose idle cursors the
    /// connection's next statement reuses (kept with a plan dropped unused, they were
    /// freed, and the next one-shot SELECT opened its cursors anew).
    ran: bool,
    /// Result rows the statement's caller has read (`recycle_row`), values and all, for
    /// the next execution's rows to be written into (`Exec::result_row`).
    rows: Vec<Row>,
    /// `select` ran twice or more: its rows are recycled. A one-shot statement's go as
    /// before (`rows` would be an allocation more, freed unused: ~0.5k instructions of
    /// each of speedtest1 test 410's 70,000 one-shot point SELECTs, callgrind).
    reran: bool,
}

/// At most this many result rows are kept for reuse (`CachedPlan::recycle_row`): a short
/// scan's rows, not a big result's.
const RECYCLED_ROWS_MAX: usize = 64;

/// A recycled row keeps a TEXT or BLOB of at most this many bytes (a larger one becomes
/// NULL): with `RECYCLED_ROWS_MAX`, what an idle statement holds stays small.
const RECYCLED_VALUE_BYTES_MAX: usize = 1024;

impl CachedPlan {
    /// Takes back a result row of this plan's statement once its caller has read it. The
    /// next execution writes its result rows into these (`Exec::result_row`) rather than
    /// allocating each row, and each TEXT or BLOB that keeps its length goes into the
    /// recycled buffer (`Value::assign`) rather than sharing the scan's: the scan then
    /// overwrites its own buffer for the next row too (`txnstore::owned_into`). hc_mixed's
    /// 10-row scan made three allocations and frees a row (the row, its TEXT, its BLOB):
    /// see BENCHMARKS.md "hcscan5".
    #[inline]
    pub fn recycle_row(&mut self, row: Row) {
        if self.reran && self.rows.len() < RECYCLED_ROWS_MAX {
            self.keep_row(row);
        }
    }

    /// `recycle_row`'s keeping, out of line: the one-shot statement's test stays small.
    fn keep_row(&mut self, mut row: Row) {
        for v in row.iter_mut() {
            let big = match v {
                Value::Text(t) => t.len() > RECYCLED_VALUE_BYTES_MAX,
                Value::Blob(b) => b.len() > RECYCLED_VALUE_BYTES_MAX,
                _ => false,
            };
            if big {
                *v = Value::Null;
            }
        }
        self.rows.push(row);
    }
}

/// What a top-level INSERT, UPDATE or DELETE resolves and binds before touching a row: its
/// table, its trigger event (UPDATE: the assigned column names), its BEFORE and AFTER
/// triggers, UPDATE's SET clause bound against the table row (columns then rowid) and
/// INSERT's target columns. Like the SELECT plan it depends only on the schema and the
/// statement's text, so it is kept with the statement's plan and dropped with it.
/// Resolving and binding it again on every execution was ~3.5k instructions per kv_ops
/// UPDATE (the binder's table frame pushed and popped, the column names listed, the
/// expressions built and dropped), ~1.3k per DELETE (the table and view lookups by a
/// lower-cased name, the trigger lists) and ~1.4k per INSERT (the same, and the target
/// list).
pub(crate) struct BoundDml {
    pub(crate) table: Arc<Table>,
    pub(crate) event: TriggerEvent,
    /// Per assignment: the column (None: the rowid) and its bound expression.
    pub(crate) sets: Vec<(Option<usize>, CExpr)>,
    /// INSERT: where each source value goes; empty for UPDATE and DELETE.
    pub(crate) targets: Vec<Target>,
    pub(crate) before: Vec<Arc<Trigger>>,
    pub(crate) after: Vec<Arc<Trigger>>,
}

/// Where one value of an INSERT's source goes (its column list as sqlite3Insert reads it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// A column of the table (the rowid's alias column too).
    Column(usize),
    /// The rowid of a table without an alias column, named `rowid`, `oid` or `_rowid_`.
    Rowid,
    /// A column the list names again: SQLite keeps the first value given (its
    /// `aTabColMap` is set once), so this one is evaluated and dropped.
    Repeat,
}

/// The `BoundDml` slot, as `PlanSlot`: Off (not the top-level statement, or no
/// caching), Empty (bind and keep), Filled (reuse), Done (kept after this run).
pub(crate) enum DmlSlot {
    Off,
    Empty,
    Filled(Box<BoundDml>),
    Done(Box<BoundDml>),
}

// SAFETY: a `SelectPlan` is !Send only because of the `Rc`s (subplans, result caches) the
// binder builds inside it. A `CachedPlan` is handed out only after the `Engine` that ran it
// is gone (`Engine::take_cached_plan` consumes the engine), and every `Rc` clone made while
// running lives in that engine's `Exec` values; or straight from `prepare_info`, after the
// `Binder` that built it is dropped (for a `BoundDml`: `update` drops its binder before
// running the statement). From then on each `Rc` in the plan is reachable only
// through the plan, so moving the whole plan to another thread moves every owner of those
// counts with it. Its kept walks are detached (`RowScan::detach`): they hold no `Rc` of
// the store that made them (its cursor pool), only what is `Send` (parked cursors, key
// buffers, bound values). Its recycled rows are values only (`Arc`s, no `Rc`).
unsafe impl Send for CachedPlan {}

/// The top-level statement's plan slot: Off (no caching), Empty (bind and keep), Filled
/// (reuse), Done (already used by this statement; later binds are not the top-level one).
enum PlanSlot {
    Off,
    Empty,
    Filled(Box<SelectPlan>),
    Done(Box<SelectPlan>),
}

/// SQLite's limit on nested trigger programs (SQLITE_MAX_TRIGGER_DEPTH).
const MAX_TRIGGER_DEPTH: usize = 1000;

pub struct Engine<'a> {
    pub store: &'a dyn Store,
    pub schema: &'a mut Schema,
    pub params: &'a [Value],
    pub state: &'a ConnState,
    pub exec_id: u64,
    trigger_row: Option<Vec<Value>>,
    trigger_table: Option<Arc<Table>>,
    /// The database a running (not TEMP) trigger lives in: SQLite qualifies the tables its
    /// program names with it (sqlite3FixSrcList), so a missing one is "no such table:
    /// main.x".
    trigger_db_name: Option<String>,
    trigger_depth: usize,
    active_triggers: Vec<String>,
    /// > 0 inside trigger programs and foreign-key actions, whose rows changes() skips.
    pub(crate) nested_depth: usize,
    /// The schema table DDL writes to: 1 (`sqlite_schema`), the temp database's, or an
    /// attached database's (its root bits set).
    pub(crate) schema_root: u32,
    /// While DDL runs on an attached database (`ddl::in_attached`): the full schema, whose
    /// slot for that database is empty because its schema is `schema` for the duration.
    pub(crate) outer_schema: Option<Schema>,
    plan_slot: std::cell::RefCell<PlanSlot>,
    /// The kept plan's detached walks (`CachedPlan::walks`), lent to the top-level
    /// SELECT's `Exec` while it runs.
    plan_walks: std::cell::RefCell<Vec<select::KeptWalk>>,
    /// `CachedPlan::ran` of the kept plan.
    plan_ran: bool,
    /// The kept plan's recycled result rows (`CachedPlan::rows`), lent to the top-level
    /// SELECT's `Exec` while it runs.
    plan_rows: std::cell::RefCell<Vec<Row>>,
    /// The top-level INSERT's, UPDATE's or DELETE's `BoundDml`; taken by `insert`,
    /// `update` and `delete` only at trigger and nesting depth 0, so a trigger program's or
    /// a foreign-key action's statement never sees it.
    pub(crate) dml_slot: DmlSlot,
    /// Immediate foreign-key checks held to the end of the running statement (fkey.rs).
    pub(crate) fk_pending: Option<Vec<fkey::FkNoAction>>,
    /// The top-level SELECT runs in chunks where its plan allows (select/chunk.rs).
    chunk: Option<&'a select::chunk::Chunking>,
}

/// Reads an attached database's `sqlite_schema` (the store routes `attached_bits(slot)`).
pub fn load_attached_schema(store: &dyn Store, slot: usize) -> Result<Schema> {
    let bits = store::attached_bits(slot);
    load_schema_at(store, 1 | bits, store.schema_cookie_in(bits)?)
}

/// Reads `sqlite_schema` and builds the schema.
pub fn load_schema(store: &dyn Store) -> Result<Schema> {
    let mut main = load_schema_at(store, 1, store.schema_cookie()?)?;
    if store.has_temp() {
        let temp = load_schema_at(store, TEMP_SCHEMA_ROOT, 0)?;
        main.merge_temp(temp);
    }
    Ok(main)
}

/// The temp database's schema table, as routed by `RoutedStore`.
pub const TEMP_SCHEMA_ROOT: u32 = 1 | store::TEMP_ROOT_BIT;

fn load_schema_at(store: &dyn Store, root: u32, cookie: u32) -> Result<Schema> {
    let mut rows = Vec::new();
    for r in store.table_range(root, Bound::Unbounded, Bound::Unbounded, false)? {
        let (_, v) = r?;
        let text = |i: usize| {
            v.get(i)
                .and_then(|x| x.to_text().map(|s| s.into_owned()))
                .unwrap_or_default()
        };
        let sql = v.get(4).and_then(|x| x.to_text().map(|s| s.into_owned()));
        rows.push((
            text(0),
            text(1),
            text(2),
            v.get(3).map(|x| x.to_i64()).unwrap_or(0),
            sql,
        ));
    }
    let root_bit = store::db_bits(root);
    let mut rows = rows;
    for r in &mut rows {
        if root_bit & store::ATTACHED_MASK != 0
            && !(0..i64::from(store::ATTACHED_ROOT_MAX)).contains(&r.3)
        {
            return Err(SqlError::msg(format!(
                "attached database too large: root page {} of {} is not below 2^27",
                r.3, r.1
            )));
        }
        if r.3 != 0 {
            r.3 |= i64::from(root_bit);
        }
    }
    Schema::load(&rows, cookie)
}

/// What preparing a statement needs: its output column names and, for a SELECT, the plan
/// bound to find them, which the statement keeps for its first execution instead of binding
/// again (a one-shot SELECT used to be bound twice: `SELECT b FROM t5 WHERE a=?` x 20,000,
/// perf: binding fell from 35% to 17% of the time).
pub fn prepare_info(stmt: &Stmt, schema: &Schema) -> Result<(Vec<String>, Option<CachedPlan>)> {
    if let Stmt::Select(s) = stmt {
        let plan = Binder::new(schema).bind_select(s)?;
        let names = plan.columns.iter().map(|c| c.name.clone()).collect();
        // The binder is gone: every `Rc` in the plan is owned by the plan (see `CachedPlan`).
        return Ok((
            names,
            Some(CachedPlan {
                select: Some(Box::new(plan)),
                dml: None,
                walks: Vec::new(),
                ran: false,
                rows: Vec::new(),
                reran: false,
            }),
        ));
    }
    Ok((column_names(stmt, schema)?, None))
}

/// sqlite3_column_decltype of a SELECT's output columns (None for another statement's):
/// the declared type of the table column a result column reads unchanged (through
/// subqueries, CTEs and views; "INTEGER" for a rowid), None for an expression and for a
/// column declared without a type (SQLite's columnType).
pub fn column_decltypes(plan: &CachedPlan, schema: &Schema) -> Vec<Option<String>> {
    let Some(select) = &plan.select else {
        return Vec::new();
    };
    let declared = |c: &crate::plan::OutCol| {
        let table = c.origin.as_deref()?;
        let Some(i) = c.origin_col else {
            return Some("INTEGER".to_string());
        };
        let typed = |col: &crate::schema::Column| {
            (!col.decl_type.is_empty()).then(|| col.decl_type.clone())
        };
        match schema.table(table) {
            Some(t) => t.columns.get(i as usize).and_then(typed),
            None => crate::schema::schema_table()
                .columns
                .get(i as usize)
                .and_then(typed),
        }
    };
    select.columns.iter().map(declared).collect()
}

/// For each result column of a SELECT that reads a table column unchanged, that column's
/// (database, table, column) as sqlite3_column_database_name, _table_name and
/// _origin_name report them ("rowid" for a rowid without an INTEGER PRIMARY KEY alias);
/// None for an expression.
pub fn column_origins(plan: &CachedPlan, schema: &Schema) -> Vec<Option<[String; 3]>> {
    let Some(select) = &plan.select else {
        return Vec::new();
    };
    let origin = |c: &crate::plan::OutCol| {
        let name = c.origin.as_deref()?;
        let Some(t) = schema.table(name) else {
            // The schema table's own columns.
            let col = crate::schema::schema_table()
                .columns
                .get(c.origin_col? as usize)?
                .name
                .clone();
            return Some(["main".to_string(), "sqlite_master".to_string(), col]);
        };
        let db = if t.root & store::TEMP_ROOT_BIT != 0 {
            "temp".to_string()
        } else {
            match store::attached_slot(t.root).and_then(|i| schema.attached.get(i)) {
                Some(a) => a.name.clone(),
                None => "main".to_string(),
            }
        };
        let col = match c.origin_col.or(t.rowid_alias.map(|a| a as u32)) {
            Some(i) => t.columns.get(i as usize)?.name.clone(),
            None => "rowid".to_string(),
        };
        Some([db, t.name.clone(), col])
    };
    select.columns.iter().map(origin).collect()
}

/// Output column names of a statement, as sqlite3_column_name reports them.
pub fn column_names(stmt: &Stmt, schema: &Schema) -> Result<Vec<String>> {
    match stmt {
        Stmt::Select(s) => Ok(Binder::new(schema)
            .bind_select(s)?
            .columns
            .into_iter()
            .map(|c| c.name)
            .collect()),
        Stmt::Explain {
            query_plan: true, ..
        } => Ok(vec![
            "id".into(),
            "parent".into(),
            "notused".into(),
            "detail".into(),
        ]),
        Stmt::Explain { stmt, .. } => {
            // As preparing the statement itself: a SELECT's errors come at prepare.
            if let Stmt::Select(s) = &**stmt {
                Binder::new(schema).bind_select(s)?;
            }
            Ok(explain::COLUMNS.iter().map(|c| c.to_string()).collect())
        }
        Stmt::Pragma { name, value } => Ok(pragma::column_names(&name.name, value.is_some())),
        Stmt::Insert(i) if !i.returning.is_empty() => {
            Ok(returning_names(schema, &i.table.name, &i.returning))
        }
        Stmt::Update(u) if !u.returning.is_empty() => {
            Ok(returning_names(schema, &u.table.name, &u.returning))
        }
        Stmt::Delete(d) if !d.returning.is_empty() => {
            Ok(returning_names(schema, &d.table.name, &d.returning))
        }
        _ => Ok(Vec::new()),
    }
}

/// Names of RETURNING columns: alias, else the column's name, else the text as written.
/// The target is a table, or a view written through INSTEAD OF triggers (its columns named
/// as its SELECT binds them, `Engine::trigger_target`).
fn returning_names(schema: &Schema, table: &str, cols: &[ast::ResultColumn]) -> Vec<String> {
    let target: Vec<String> = match schema.table(table) {
        Some(t) => t.columns.iter().map(|c| c.name.clone()).collect(),
        None => schema
            .views
            .get(&crate::schema::key(table))
            .and_then(|v| {
                let plan = Binder::new(schema).bind_select(&v.select).ok()?;
                let names = plan.columns.iter().enumerate();
                Some(
                    names
                        .map(|(i, c)| v.columns.get(i).cloned().unwrap_or_else(|| c.name.clone()))
                        .collect(),
                )
            })
            .unwrap_or_default(),
    };
    let mut out = Vec::new();
    for rc in cols {
        match rc {
            ast::ResultColumn::Star | ast::ResultColumn::TableStar(_) => {
                out.extend(target.iter().cloned())
            }
            ast::ResultColumn::Expr { expr, alias, span } => out.push(match (alias, expr) {
                (Some(a), _) => a.clone(),
                (None, ast::Expr::Column { name, .. }) => target
                    .iter()
                    .find(|c| c.eq_ignore_ascii_case(name))
                    .cloned()
                    .unwrap_or_else(|| span.clone()),
                _ => span.clone(),
            }),
        }
    }
    out
}

/// Whether a statement leaves the database unchanged (sqlite3_stmt_readonly).
/// Whether a failed INSERT/UPDATE keeps the rows it changed before the failure (the
/// caller then releases its statement savepoint instead of rolling back to it, and commits
/// in autocommit): the statement's own `OR FAIL` resolves UNIQUE, PRIMARY KEY, NOT NULL
/// and CHECK failures that way (lang_conflict.html). Foreign-key failures ignore conflict
/// clauses and undo the statement. A FAIL declared on the constraint in CREATE TABLE
/// (`UNIQUE ON CONFLICT FAIL`), with no OR clause on the statement, does the same
/// (`ConnState::failed_resolution`).
pub fn keeps_changes_on_error(
    state: &ConnState,
    stmt: &Stmt,
    code: i32,
    extended_code: i32,
) -> bool {
    statement_resolution(state, stmt, code, extended_code)
        == Some(crate::parse::ast::ConflictAction::Fail)
}

/// Whether a failed INSERT/UPDATE ends the whole transaction: `OR ROLLBACK` (the
/// statement's, or the constraint's ON CONFLICT ROLLBACK) on a UNIQUE, PRIMARY KEY or
/// NOT NULL failure, or the statement's on a CHECK failure (lang_conflict.html). Also
/// `SQLITE_FULL` ("database or disk is full", e.g. AUTOINCREMENT past the largest rowid):
/// SQLite's VDBE halt then rolls the whole transaction back unless the statement keeps a
/// statement journal (only statements that may abort part-way do; parlite does not model
/// that and always ends the transaction).
pub fn rolls_back_transaction_on_error(
    state: &ConnState,
    stmt: &Stmt,
    code: i32,
    extended_code: i32,
) -> bool {
    code == crate::value::codes::SQLITE_FULL
        || statement_resolution(state, stmt, code, extended_code)
            == Some(crate::parse::ast::ConflictAction::Rollback)
}

/// The conflict resolution of a failed INSERT/UPDATE when one governs the failure: a
/// constraint failure other than a foreign key's (those ignore conflict clauses). The
/// statement's OR clause wins; without one, the constraint's own ON CONFLICT as recorded
/// where the failure was raised.
fn statement_resolution(
    state: &ConnState,
    stmt: &Stmt,
    code: i32,
    extended_code: i32,
) -> Option<crate::parse::ast::ConflictAction> {
    let or = match stmt {
        Stmt::Insert(i) => i.or_conflict,
        Stmt::Update(u) => u.or_conflict,
        _ => return None,
    };
    (code == crate::value::codes::SQLITE_CONSTRAINT
        && extended_code != crate::value::codes::SQLITE_CONSTRAINT_FOREIGNKEY)
        .then(|| or.or(state.failed_resolution.get()))
        .flatten()
}

/// Whether `stmt` must run inside a statement savepoint of the main database, so that a
/// failure undoes it alone; false only for an INSERT of one row that fails before writing
/// (`dml::single_write`, which says what the caller must do on failure) and an UPDATE or
/// DELETE that cannot fail between its writes (`dml::update_writes_unchecked`,
/// `dml::delete_writes_unchecked`).
pub fn needs_statement_savepoint(schema: &Schema, state: &ConnState, stmt: &Stmt) -> bool {
    match stmt {
        Stmt::Insert(ins) => !dml::single_write(schema, state, ins),
        Stmt::Update(u) => !dml::update_writes_unchecked(schema, state, u),
        Stmt::Delete(d) => !dml::delete_writes_unchecked(schema, state, d),
        _ => true,
    }
}

pub fn is_readonly(stmt: &Stmt) -> bool {
    match stmt {
        Stmt::Select(_) | Stmt::Explain { .. } => true,
        // Connection settings never write the file: setting one must not take the writer
        // lock (8 connections setting busy_timeout at once must not see SQLITE_BUSY).
        Stmt::Pragma { name, value } => {
            value.is_none() || pragma::is_connection_setting(&name.name)
        }
        Stmt::Begin { .. }
        | Stmt::Commit
        | Stmt::Rollback { .. }
        | Stmt::Savepoint(_)
        | Stmt::Release(_) => true,
        _ => false,
    }
}

impl<'a> Engine<'a> {
    pub fn new(
        store: &'a dyn Store,
        schema: &'a mut Schema,
        params: &'a [Value],
        state: &'a ConnState,
    ) -> Self {
        Engine {
            store,
            schema,
            params,
            state,
            exec_id: EXEC_IDS.fetch_add(1, Ordering::Relaxed),
            trigger_row: None,
            trigger_table: None,
            trigger_db_name: None,
            trigger_depth: 0,
            active_triggers: Vec::new(),
            nested_depth: 0,
            schema_root: 1,
            outer_schema: None,
            plan_slot: std::cell::RefCell::new(PlanSlot::Off),
            plan_walks: Default::default(),
            plan_ran: false,
            plan_rows: Default::default(),
            dml_slot: DmlSlot::Off,
            fk_pending: None,
            chunk: None,
        }
    }

    /// Lets the top-level SELECT run in chunks per `chunk` where its plan allows
    /// (select/chunk.rs K1; `Chunking::engaged` tells afterwards).
    pub fn set_chunking(&mut self, chunk: Option<&'a select::chunk::Chunking>) {
        self.chunk = chunk;
    }

    /// Lets the top-level SELECT (or UPDATE/DELETE WHERE) reuse `plan`, or bind and keep
    /// one when `plan` is None; take it back with `take_cached_plan`.
    pub fn with_plan_cache(mut self, plan: Option<CachedPlan>) -> Self {
        self.set_plan_cache(plan);
        self
    }

    /// `with_plan_cache` in place: the engine is ~200 bytes, and moving it in and out
    /// cost ~0.4k instructions per statement (kv_ops, BENCHMARKS.md kv branch).
    pub fn set_plan_cache(&mut self, plan: Option<CachedPlan>) {
        let (select, dml, walks, ran, rows) = match plan {
            Some(CachedPlan {
                select,
                dml,
                walks,
                ran,
                rows,
                reran: _,
            }) => (select, dml, walks, ran, rows),
            None => (None, None, Vec::new(), false, Vec::new()),
        };
        self.plan_walks = std::cell::RefCell::new(walks);
        self.plan_rows = std::cell::RefCell::new(rows);
        self.plan_ran = ran;
        self.plan_slot = std::cell::RefCell::new(match select {
            Some(p) => PlanSlot::Filled(p),
            None => PlanSlot::Empty,
        });
        self.dml_slot = match dml {
            Some(u) => DmlSlot::Filled(u),
            None => DmlSlot::Empty,
        };
    }

    /// The top-level plan bound or reused by the statement just run. Consumes the engine,
    /// which the `Send` safety argument of `CachedPlan` rests on.
    pub fn take_cached_plan(self) -> Option<CachedPlan> {
        let (select, ran) = match self.plan_slot.into_inner() {
            PlanSlot::Filled(p) => (Some(p), self.plan_ran),
            PlanSlot::Done(p) => (Some(p), true),
            PlanSlot::Off | PlanSlot::Empty => (None, false),
        };
        let dml = match self.dml_slot {
            DmlSlot::Filled(u) | DmlSlot::Done(u) => Some(u),
            DmlSlot::Off | DmlSlot::Empty => None,
        };
        if select.is_none() && dml.is_none() {
            return None;
        }
        // Walks and recycled rows go only with the plan whose sources they are keyed by
        // and whose results they are.
        let (walks, rows) = match select {
            Some(_) => (self.plan_walks.into_inner(), self.plan_rows.into_inner()),
            None => (Vec::new(), Vec::new()),
        };
        Some(CachedPlan {
            reran: select.is_some() && self.plan_ran,
            select,
            dml,
            walks,
            ran,
            rows,
        })
    }

    /// `set_plan_cache` for an INSERT: only its `BoundDml` is kept. Its SELECT slot stays
    /// off, so no row search run during the INSERT (a REPLACE's deletes, an upsert) takes
    /// the statement's plan.
    pub fn set_dml_cache(&mut self, plan: Option<CachedPlan>) {
        self.dml_slot = match plan.and_then(|p| p.dml) {
            Some(u) => DmlSlot::Filled(u),
            None => DmlSlot::Empty,
        };
    }

    /// The kept `BoundDml` for this INSERT, UPDATE or DELETE when it is the top-level statement
    /// and one is kept (`Some(Some(_))`), `Some(None)` when it should resolve and keep one
    /// (`keep_dml`), None when it must resolve its own and keep nothing (a trigger
    /// program's or a foreign-key action's statement, or caching is off).
    pub(crate) fn take_dml(&mut self) -> Option<Option<Box<BoundDml>>> {
        if self.trigger_depth != 0 || self.nested_depth != 0 {
            return None;
        }
        match std::mem::replace(&mut self.dml_slot, DmlSlot::Off) {
            DmlSlot::Filled(u) => Some(Some(u)),
            DmlSlot::Empty => Some(None),
            other => {
                self.dml_slot = other;
                None
            }
        }
    }

    /// Keeps the top-level INSERT's, UPDATE's or DELETE's `BoundDml` for the statement's next
    /// execution.
    pub(crate) fn keep_dml(&mut self, u: Box<BoundDml>) {
        self.dml_slot = DmlSlot::Done(u);
    }

    /// Runs `sel` with the cached plan when this is the statement's first top-level SELECT
    /// and a plan is cached (binding and caching it otherwise). Measured, callgrind on
    /// `parlite-bench kv_ops --memory --engine parlite`: 267.3M → 202.8M instructions (-24%),
    /// `Binder::subplan` 62.5M → 4.1M, UPDATE 88.5M → 57.6M, DELETE 45.2M → 30.3M.
    ///
    /// Only the top-level statement's own SELECT (or row search) uses the slot: a trigger
    /// program's or a foreign-key action's statement binds its own plan. (A DELETE whose
    /// rows are found without a plan left the slot empty, and the first trigger UPDATE to
    /// search its rows kept its plan there; the next execution ran that plan for whichever
    /// trigger searched first, another table's rows. Test
    /// `plan_cache::trigger_programs_never_take_the_statements_plan`.)
    pub(crate) fn run_top_select(&self, sel: &ast::Select) -> Result<Vec<Row>> {
        if self.trigger_depth != 0 || self.nested_depth != 0 {
            let plan = self.binder_with_trigger_frame().bind_select(sel)?;
            return self.exec_with_parent(|ex, parent| ex.run_select(&plan, parent));
        }
        let slot = self.plan_slot.replace(PlanSlot::Off);
        let plan = match slot {
            PlanSlot::Filled(p) => p,
            PlanSlot::Empty => Box::new(self.binder_with_trigger_frame().bind_select(sel)?),
            other => {
                self.plan_slot.replace(other);
                let plan = self.binder_with_trigger_frame().bind_select(sel)?;
                return self.exec_with_parent(|ex, parent| ex.run_select(&plan, parent));
            }
        };
        // The plan's kept walks, attached to this execution's store, are the `Exec`'s
        // kept walks: its join levels restart them over this execution's bounds
        // (`candidate_source`). Those it keeps at the end go back with the plan, detached,
        // from the plan's second execution on (`CachedPlan::ran`). (One vector goes round
        // between the plan and the `Exec`.)
        let mut ex = self.exec();
        let mut walks = self.plan_walks.take();
        walks.retain_mut(|w| {
            matches!(
                self.store.attach_scan(w.key.index_root, &mut *w.scan),
                Ok(true)
            )
        });
        ex.kept_walks.replace(walks);
        ex.spare_rows = Some(&self.plan_rows);
        if let Some(c) = self.chunk.filter(|_| select::chunk::eligible(&plan)) {
            c.engage();
            ex.chunk = Some((c, &plan.cores[0] as *const crate::plan::CorePlan));
        }
        let r = self.run_with_parent(&ex, |ex, parent| ex.run_select(&plan, parent));
        if r.is_ok() && self.plan_ran {
            // Not a walk on an attached database: kept by a statement, its cursors would
            // keep the file open after DETACH.
            let mut walks = ex.kept_walks.take();
            walks.retain_mut(|w| {
                store::attached_slot(w.key.index_root).is_none() && w.scan.detach()
            });
            self.plan_walks.replace(walks);
        }
        drop(ex);
        self.plan_slot.replace(PlanSlot::Done(plan));
        r
    }

    pub fn exec(&self) -> Exec<'_> {
        Exec {
            store: self.store,
            schema: self.schema,
            params: self.params,
            conn: self.state,
            state: self.state,
            exec_id: self.exec_id,
            in_trigger: self.trigger_depth > 0,
            working: Default::default(),
            kept_walks: Default::default(),
            spare_rows: None,
            chunk: None,
        }
    }

    /// Runs `f` with the trigger frame (if any) as the enclosing frame.
    pub fn exec_with_parent<T>(
        &self,
        f: impl FnOnce(&Exec, Option<&Frame>) -> Result<T>,
    ) -> Result<T> {
        self.run_with_parent(&self.exec(), f)
    }

    /// `exec_with_parent` on a given `Exec`.
    fn run_with_parent<T>(
        &self,
        ex: &Exec,
        f: impl FnOnce(&Exec, Option<&Frame>) -> Result<T>,
    ) -> Result<T> {
        match &self.trigger_row {
            Some(r) => {
                let fr = Frame::new(r, None);
                f(ex, Some(&fr))
            }
            None => f(ex, None),
        }
    }

    /// A binder whose outermost frame holds NEW and OLD when running a trigger program.
    pub fn binder_with_trigger_frame(&self) -> Binder<'_> {
        let mut b = Binder::new(self.schema);
        if let Some(t) = &self.trigger_table {
            b.push_trigger_frame(t);
            b.qualify_missing_tables(self.trigger_db_name.clone());
        }
        b
    }

    /// Reloads the schema after a change to `sqlite_schema`, bumping the cookie.
    pub fn schema_changed(&mut self) -> Result<()> {
        // TEMP objects are private to this connection: nobody else needs to notice.
        let db = store::db_bits(self.schema_root);
        if db != store::TEMP_ROOT_BIT {
            let c = self.store.schema_cookie_in(db)?.wrapping_add(1);
            self.store.set_schema_cookie_in(db, c)?;
        }
        if self.outer_schema.is_some() {
            // DDL on an attached database: `schema` is that database's alone.
            *self.schema = load_schema_at(
                self.store,
                self.schema_root,
                self.store.schema_cookie_in(db)?,
            )?;
            return Ok(());
        }
        let mut fresh = load_schema(self.store)?;
        fresh.carry_connection_from(self.schema);
        *self.schema = fresh;
        Ok(())
    }

    /// The value of an ATTACH/DETACH operand: a bare identifier is its own name (SQLite's
    /// resolveAttachExpr), anything else a constant expression (parameters allowed).
    pub fn attach_operand(&self, e: &ast::Expr) -> Result<Value> {
        if let ast::Expr::Column {
            schema: None,
            table: None,
            name,
            ..
        } = e
        {
            return Ok(Value::text(name.as_str()));
        }
        let c = Binder::new(self.schema).bind_standalone(e)?;
        let empty: [Value; 0] = [];
        self.exec().eval(&c, &Frame::new(&empty, None))
    }

    /// Runs one statement (not transaction control, which the connection handles) and
    /// returns its result rows.
    pub fn execute(&mut self, stmt: &Stmt) -> Result<Vec<Row>> {
        let is_dml = matches!(stmt, Stmt::Insert(_) | Stmt::Update(_) | Stmt::Delete(_));
        let total_before = self.state.total_changes.get();
        if is_dml {
            self.state.pending_changes.set(0);
            self.state.failed_resolution.set(None);
        }
        let r = if is_dml {
            self.fk_statement(|e| e.execute_inner(stmt))
        } else {
            self.execute_inner(stmt)
        };
        if is_dml {
            // A failed statement is rolled back, and SQLite then reports no changes — except
            // under OR FAIL, which keeps (and counts) the rows changed before the failure.
            let kept = match &r {
                Ok(_) => true,
                Err(e) => keeps_changes_on_error(self.state, stmt, e.code(), e.extended_code()),
            };
            self.state.changes.set(if kept {
                self.state.pending_changes.get()
            } else {
                0
            });
            if !kept {
                // Rows the failed statement wrote and took back are not counted either.
                self.state.total_changes.set(total_before);
            }
        }
        r
    }

    fn execute_inner(&mut self, stmt: &Stmt) -> Result<Vec<Row>> {
        match stmt {
            Stmt::Select(s) => self.run_top_select(s),
            Stmt::Insert(i) => self.insert(i),
            Stmt::Update(u) => self.update(u),
            Stmt::Delete(d) => self.delete(d),
            Stmt::CreateTable(c) => self.create_table(c),
            Stmt::CreateIndex(c) => self.create_index(c),
            Stmt::CreateView(c) => self.create_view(c),
            Stmt::CreateTrigger(c) => self.create_trigger(c),
            Stmt::CreateVirtualTable(v) => {
                Err(SqlError::msg(format!("no such module: {}", v.module)))
            }
            Stmt::Drop {
                kind,
                if_exists,
                name,
            } => self.drop(*kind, *if_exists, name),
            Stmt::AlterTable { table, action } => self.alter(table, action),
            Stmt::Pragma { name, value } => self.pragma(name, value.as_ref()),
            Stmt::Explain {
                query_plan: true,
                stmt,
            } => self.explain_query_plan(stmt),
            Stmt::Explain {
                query_plan: false,
                stmt,
            } => self.explain(stmt),
            Stmt::Reindex(target) => self.reindex(target.as_ref()),
            Stmt::Vacuum { schema, into } => {
                if into.is_some() {
                    // The connection opens the output file and calls `vacuum_into`.
                    return Err(SqlError::msg("VACUUM INTO needs a connection"));
                }
                match schema {
                    // SQLite generates no code for VACUUM temp: it does nothing.
                    Some(s) if s.eq_ignore_ascii_case("temp") => Ok(Vec::new()),
                    Some(s) if !s.eq_ignore_ascii_case("main") => {
                        let Some((slot, _)) = self.schema.attached_db(s) else {
                            return Err(SqlError::msg(format!("unknown database {s}")));
                        };
                        self.in_attached(slot, |e| e.vacuum())
                    }
                    _ => self.vacuum(),
                }
            }
            Stmt::Analyze(target) => self.analyze_any(target.as_ref()),
            Stmt::Attach { .. } | Stmt::Detach(_) => {
                Err(SqlError::msg("ATTACH and DETACH are not supported"))
            }
            Stmt::Begin { .. }
            | Stmt::Commit
            | Stmt::Rollback { .. }
            | Stmt::Savepoint(_)
            | Stmt::Release(_) => Err(SqlError::msg(
                "internal error: transaction control reached the executor",
            )),
        }
    }

    // ---- triggers ---------------------------------------------------------------------

    pub fn triggers(
        &self,
        table: &str,
        time: TriggerTime,
        event: &TriggerEvent,
    ) -> Vec<Arc<Trigger>> {
        Self::matching_triggers(self.schema.triggers_for(table), time, event)
    }

    /// The triggers on table `t` (looked up in `t`'s database) for this time and event.
    pub fn table_triggers(
        &self,
        t: &Table,
        time: TriggerTime,
        event: &TriggerEvent,
    ) -> Vec<Arc<Trigger>> {
        Self::matching_triggers(self.schema.triggers_on(t), time, event)
    }

    fn matching_triggers(
        all: Vec<Arc<Trigger>>,
        time: TriggerTime,
        event: &TriggerEvent,
    ) -> Vec<Arc<Trigger>> {
        all.into_iter()
            .filter(|t| {
                let tt = t.def.time.unwrap_or(TriggerTime::Before);
                let ev_ok = match (&t.def.event, event) {
                    (TriggerEvent::Insert, TriggerEvent::Insert)
                    | (TriggerEvent::Delete, TriggerEvent::Delete) => true,
                    (TriggerEvent::Update(cols), TriggerEvent::Update(changed)) => {
                        cols.is_empty()
                            || cols
                                .iter()
                                .any(|c| changed.iter().any(|x| x.eq_ignore_ascii_case(c)))
                    }
                    _ => false,
                };
                tt == time && ev_ok
            })
            .collect()
    }

    /// Fires row triggers with the given OLD/NEW rows (columns then rowid). Returns false
    /// when a BEFORE trigger's RAISE(IGNORE) asks to skip the row.
    pub fn fire(
        &mut self,
        triggers: &[Arc<Trigger>],
        old: Option<&Row>,
        new: Option<&Row>,
    ) -> Result<bool> {
        for trig in triggers {
            // Without recursive_triggers a trigger does not fire itself again.
            if !self.state.recursive_triggers.get()
                && self
                    .active_triggers
                    .iter()
                    .any(|n| n.eq_ignore_ascii_case(&trig.name))
            {
                continue;
            }
            if self.trigger_depth >= MAX_TRIGGER_DEPTH {
                return Err(SqlError::msg("too many levels of trigger recursion"));
            }
            // A trigger of an attached database names that database's objects.
            let saved_db = self.schema.default_db.replace(self.schema.trigger_db(trig));
            // Recursion (recursive_triggers) nests up to MAX_TRIGGER_DEPTH frames: continue
            // on a heap segment when the caller's stack runs low.
            // A trigger program's INSERTs set last_insert_rowid() only while it runs: once
            // it ends the value reverts to what it was before it fired (sqlite3_last_insert_rowid;
            // test insert_reuse.rs).
            let saved_rowid = self.state.last_insert_rowid.get();
            let r = crate::stack::guarded(|| self.fire_one(trig, old, new));
            self.state.last_insert_rowid.set(saved_rowid);
            self.schema.default_db.set(saved_db);
            match r {
                Ok(true) => {}
                Ok(false) => return Ok(false),
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }

    /// Runs one trigger's program for one row (`fire` has checked recursion and depth).
    fn fire_one(
        &mut self,
        trig: &Arc<Trigger>,
        old: Option<&Row>,
        new: Option<&Row>,
    ) -> Result<bool> {
        let Some(t) = self.trigger_target(&trig.table)? else {
            return Ok(true);
        };
        let w = t.columns.len() + 1;
        let mut row = Vec::with_capacity(2 * w);
        match new {
            Some(n) => row.extend(n.iter().take(w).cloned()),
            None => row.extend(std::iter::repeat(Value::Null).take(w)),
        }
        row.resize(w, Value::Null);
        match old {
            Some(o) => row.extend(o.iter().take(w).cloned()),
            None => row.extend(std::iter::repeat(Value::Null).take(w)),
        }
        row.resize(2 * w, Value::Null);
        let saved_row = self.trigger_row.replace(row);
        let saved_table = self.trigger_table.replace(t.clone());
        let temp = trig.def.temp
            || self
                .schema
                .table(&trig.table)
                .is_some_and(|tab| tab.root & store::TEMP_ROOT_BIT != 0);
        let db_name = match self.schema.default_db.get() {
            _ if temp => None,
            0 => Some("main".to_string()),
            n => self.schema.attached.get(n - 1).map(|a| a.name.clone()),
        };
        let saved_db_name = std::mem::replace(&mut self.trigger_db_name, db_name);
        self.trigger_depth += 1;
        self.nested_depth += 1;
        self.active_triggers.push(trig.name.clone());
        let r = self.run_trigger(trig);
        self.active_triggers.pop();
        self.nested_depth -= 1;
        self.trigger_depth -= 1;
        self.trigger_row = saved_row;
        self.trigger_table = saved_table;
        self.trigger_db_name = saved_db_name;
        match r {
            Ok(()) => {}
            Err(e) if e.to_string() == eval::RAISE_IGNORE_MSG => return Ok(false),
            Err(e) => return Err(e),
        }
        Ok(true)
    }

    /// The row shape NEW/OLD take for a trigger's target: the table, or for a view a
    /// pseudo-table of its result columns.
    pub fn trigger_target(&self, name: &str) -> Result<Option<Arc<Table>>> {
        if let Some(t) = self.schema.table(name) {
            return Ok(Some(t.clone()));
        }
        let Some(v) = self.schema.views.get(&crate::schema::key(name)).cloned() else {
            return Ok(None);
        };
        let plan = Binder::new(self.schema).bind_select(&v.select)?;
        let mut t = crate::schema::schema_table();
        t.name = v.name.clone();
        t.root = 0;
        t.columns = plan
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| crate::schema::Column {
                name: v.columns.get(i).cloned().unwrap_or_else(|| c.name.clone()),
                decl_type: String::new(),
                affinity: crate::value::Affinity::Blob,
                not_null: None,
                default: None,
                default_text: None,
                collation: c.coll,
                collation_name: None,
                pk: 0,
                generated: None,
            })
            .collect();
        t.sql = v.sql.clone();
        Ok(Some(Arc::new(t)))
    }

    fn run_trigger(&mut self, trig: &Trigger) -> Result<()> {
        if let Some(w) = &trig.def.when {
            let e = self.binder_with_trigger_frame().bind_expr(w)?;
            let row = self.trigger_row.clone().unwrap_or_default();
            if !self.exec().is_true(&e, &Frame::new(&row, None))? {
                return Ok(());
            }
        }
        for s in &trig.def.body {
            match s {
                Stmt::Insert(i) => {
                    self.insert(i)?;
                }
                Stmt::Update(u) => {
                    self.update(u)?;
                }
                Stmt::Delete(d) => {
                    self.delete(d)?;
                }
                Stmt::Select(sel) => {
                    let plan = self.binder_with_trigger_frame().bind_select(sel)?;
                    self.exec_with_parent(|ex, parent| ex.run_select(&plan, parent))?;
                }
                _ => return Err(SqlError::msg("unsupported statement in trigger program")),
            }
        }
        Ok(())
    }

    // ---- EXPLAIN QUERY PLAN -----------------------------------------------------------

    fn explain_query_plan(&mut self, stmt: &Stmt) -> Result<Vec<Row>> {
        let sel = match stmt {
            Stmt::Select(s) => s.clone(),
            _ => return Ok(self.explain_dml(stmt)?.unwrap_or_default()),
        };
        let plan = Binder::new(self.schema).bind_select(&sel)?;
        Ok(eqp::explain(self.schema, &sel, &plan))
    }

    /// REINDEX (lang_reindex.html): every index; those of a collation (all of them here);
    /// a table's; or one index. An unqualified name is looked up through temp, main and
    /// the attached databases, a qualified one in its database only.
    fn reindex(&mut self, target: Option<&ast::QualifiedName>) -> Result<Vec<Row>> {
        let all_tables = |schema: &Schema| -> Vec<Arc<Table>> {
            let mut v: Vec<Arc<Table>> = schema.tables.values().cloned().collect();
            for a in &schema.attached {
                v.extend(a.schema.tables.values().cloned());
            }
            v
        };
        // (table, None for all its indexes or the one index to rebuild)
        let work: Vec<(Arc<Table>, Option<Arc<crate::schema::Index>>)> = match target {
            None => all_tables(self.schema)
                .into_iter()
                .map(|t| (t, None))
                .collect(),
            Some(n)
                if n.schema.is_none()
                    && crate::collation::Collation::from_name(&n.name).is_ok() =>
            {
                all_tables(self.schema)
                    .into_iter()
                    .map(|t| (t, None))
                    .collect()
            }
            Some(n) => {
                let k = crate::schema::key(&n.name);
                let index_schemas: Vec<&Schema> = match &n.schema {
                    None => std::iter::once(&*self.schema)
                        .chain(self.schema.attached.iter().map(|a| &a.schema))
                        .collect(),
                    Some(s) if s.eq_ignore_ascii_case("main") || s.eq_ignore_ascii_case("temp") => {
                        vec![&*self.schema]
                    }
                    Some(s) => match self.schema.attached_db(s) {
                        Some((_, a)) => vec![&a.schema],
                        None => return Err(SqlError::msg(format!("unknown database {s}"))),
                    },
                };
                if let Some(t) = self.schema.table_in(n.schema.as_deref(), &n.name) {
                    vec![(t.clone(), None)]
                } else if let Some(ix) = index_schemas.iter().find_map(|s| s.indexes.get(&k)) {
                    let s = index_schemas
                        .iter()
                        .find(|s| s.indexes.contains_key(&k))
                        .copied()
                        .unwrap_or(&*self.schema);
                    match s.tables.get(&crate::schema::key(&ix.table)) {
                        Some(t) => vec![(t.clone(), Some(ix.clone()))],
                        None => Vec::new(),
                    }
                } else {
                    return Err(SqlError::msg(
                        "unable to identify the object to be reindexed",
                    ));
                }
            }
        };
        for (t, only) in work {
            let ixs = match only {
                Some(ix) => vec![ix],
                None => self.schema.table_indexes(&t),
            };
            for ix in ixs {
                // A WITHOUT ROWID table's PRIMARY KEY is the table itself: nothing to rebuild.
                if ix.root == 0 || ix.root == t.root {
                    continue;
                }
                self.store.clear_btree(ix.root)?;
                self.populate_index(&t, &ix)?;
            }
        }
        Ok(Vec::new())
    }

    /// ANALYZE's forms (lang_analyze.html): every database but temp; a database named
    /// alone; a table or index, qualified or looked up through main and then the attached
    /// databases. An attached database's statistics go to its own `sqlite_stat1`.
    fn analyze_any(&mut self, target: Option<&ast::QualifiedName>) -> Result<Vec<Row>> {
        let Some(n) = target else {
            self.analyze(None)?;
            for slot in 0..self.schema.attached.len() {
                self.in_attached(slot, |e| e.analyze(None))?;
            }
            return Ok(Vec::new());
        };
        let k = crate::schema::key(&n.name);
        let holds = |s: &Schema| s.tables.contains_key(&k) || s.indexes.contains_key(&k);
        let slot = match &n.schema {
            None => {
                if let Some((slot, _)) = self.schema.attached_db(&n.name) {
                    return self.in_attached(slot, |e| e.analyze(None));
                }
                if holds(self.schema) {
                    None
                } else {
                    self.schema.attached.iter().position(|a| holds(&a.schema))
                }
            }
            Some(s) if s.eq_ignore_ascii_case("main") || s.eq_ignore_ascii_case("temp") => None,
            Some(s) => match self.schema.attached_db(s) {
                Some((slot, a)) if holds(&a.schema) => Some(slot),
                Some((_, a)) => {
                    return Err(SqlError::msg(format!(
                        "no such table: {}.{}",
                        a.name, n.name
                    )))
                }
                None => return Err(SqlError::msg(format!("unknown database {s}"))),
            },
        };
        match slot {
            Some(slot) => {
                let bare = ast::QualifiedName::bare(n.name.clone());
                self.in_attached(slot, |e| e.analyze(Some(&bare)))
            }
            None => self.analyze(target),
        }
    }
}
