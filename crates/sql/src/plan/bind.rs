//! Name resolution and SELECT planning: AST → `SelectPlan` / `CExpr`.
//!
//! Invariants:
//! - `frames` is the stack of query levels being bound; the last is the innermost. A column
//!   found `n` frames down becomes `CExpr::Col { level: n, .. }` and marks every frame above
//!   it as correlated.
//! - Views, CTE bodies and FROM-subqueries are bound without the current level's columns in
//!   scope (SQLite does not let them see their siblings). Views see no outer level at all;
//!   a FROM subquery and a CTE see the levels enclosing the query whose FROM names them: a
//!   CTE is bound at each use (as SQLite expands it there), so one named from two correlated
//!   places reads two different outer rows, and is computed again per outer row.
//! - Names resolve as SQLite resolves them: a column of this level's FROM, then of enclosing
//!   levels, then (WHERE/GROUP BY/HAVING/ORDER BY) a result-column alias, then a lone
//!   double-quoted name is a string literal.

use super::*;
use crate::func;
use crate::parse::ast::{
    self, Expr, FunctionArgs, JoinConstraint, JoinKind, Literal, ResultColumn, SelectCore,
    TableOrSubquery,
};
use crate::schema::{key, Schema};
use crate::value::{affinity_of_type_name, comparison_affinity, Result, SqlError};
use std::borrow::Cow;
use std::collections::HashMap;

mod expr;
mod from;

/// A bound expression with what comparisons need to know about it.
#[derive(Debug, Clone)]
pub struct Bound {
    pub e: CExpr,
    pub aff: Option<Affinity>,
    /// (collation, explicit COLLATE)
    pub coll: Option<(Collation, bool)>,
    /// Set for a plain column reference: (level, row index).
    pub col: Option<(usize, usize)>,
}

impl Bound {
    fn plain(e: CExpr) -> Bound {
        Bound {
            e,
            aff: None,
            coll: None,
            col: None,
        }
    }
}

#[derive(Debug, Clone)]
pub struct ScopeCol {
    pub name: String,
    /// Lower-case name of the source this column belongs to (shared by its columns: a
    /// `String` per column was ~10% of binding a point SELECT).
    pub source: Rc<str>,
    pub aff: Option<Affinity>,
    pub coll: Collation,
    /// Not found by unqualified names or `*` (the right side of USING/NATURAL).
    pub using_hidden: bool,
    /// A HIDDEN column of a table-valued function: found by name, not part of `*`.
    pub star_hidden: bool,
    pub is_rowid: bool,
    /// For rowid positions: the real table (rowid is only reachable in tables).
    pub table_name: Option<Rc<str>>,
    /// With `table_name`, the column's position in that table (None: its rowid).
    pub table_col: Option<u32>,
}

#[derive(Default)]
struct Frame {
    cols: Vec<ScopeCol>,
    /// Its FROM items in order.
    sources: Vec<FrameSource>,
    aggs: Vec<AggCall>,
    agg_allowed: bool,
    wins: Vec<WinCall>,
    /// Per window call, its window as defined (chains and names resolved), to find the
    /// calls that share SQLite's pass (`WinCall::pass`).
    win_defs: Vec<ast::WindowDef>,
    win_allowed: bool,
    /// The WINDOW clause of the core being bound.
    named_windows: Vec<(String, ast::WindowDef)>,
    correlated: bool,
    /// An aggregate of an outer query written where this query allows none (its WHERE
    /// before its result columns are known): an error unless this query is an aggregate
    /// one, as SQLite checks the place an aggregate is written (the name as written, `()`).
    outer_agg_here: Option<String>,
    /// Such an aggregate of an outer query that allows none where this query stands (its
    /// WHERE): if this query is an aggregate one, SQLite's code generator refuses it
    /// ("misuse of aggregate: f()"); if not, `outer_agg_here`'s resolve error comes first.
    outer_agg_unrunnable: Option<String>,
    /// This query is the operand of EXISTS and not a compound: its result columns are
    /// never computed (select.c codes no result column for SRT_Exists).
    exists_operand: bool,
    /// Its result columns are being bound.
    binding_outputs: bool,
    /// Its WHERE is being bound.
    binding_where: bool,
    /// The first aggregate written in its WHERE (the name as written, `()`): SQLite
    /// resolves the WHERE after the result columns, so which error it is depends on them
    /// (`select_core`).
    where_agg: Option<String>,
    /// Result aliases usable as a fallback: (lower-case alias, expression).
    aliases: Vec<(String, Expr)>,
    alias_depth: usize,
    /// USING columns merged by a RIGHT or FULL JOIN: (position of the visible left column,
    /// what an unqualified reference or `*` reads instead).
    using_values: Vec<(usize, Merged)>,
    /// Names skip this frame: set on the frames above an outer query while one of its
    /// result aliases is bound from a subquery (SQLite resolves the alias's expression at
    /// the alias's own level, resolve.c resolveAlias).
    hidden: bool,
    /// Its GROUP BY or ORDER BY is being bound: names there see no enclosing query
    /// (resolve.c clears the name context's pNext for them), save a trigger's NEW and OLD.
    isolated: bool,
    /// The frame of a trigger program's NEW and OLD rows, which SQLite finds from any
    /// query of the program (lookupName's pTriggerTab step).
    trigger: bool,
}

/// A FROM item of a frame: its columns are the frame's `cols[start..start + width]`.
struct FrameSource {
    /// Lower-case name (its alias, else its table's): the `ScopeCol::source` of its columns.
    key: Rc<str>,
    start: usize,
    width: usize,
    /// Its database: what `db.t.x` must name, and what SQLite spells with the name when
    /// `*` expands its columns among several FROM items (select.c selectExpander).
    db: SourceDb,
    /// The alias as written, else the table's name as declared.
    label: Rc<str>,
    /// A database's schema table without an alias, which a qualifier names by either of
    /// its names (resolve.c isValidSchemaTableName).
    schema_table: bool,
}

impl FrameSource {
    /// Whether qualifier `t` (of `db.t.x` when `db_given`) names this item as a schema
    /// table's other name: `sqlite_schema` for `sqlite_master` and back; for TEMP's,
    /// `sqlite_temp_schema`/`sqlite_temp_master`, or with a database named, the main ones.
    fn schema_table_named(&self, t: &str, db_given: bool) -> bool {
        let is = |n: &str| t.eq_ignore_ascii_case(n);
        let main_names = is("sqlite_master") || is("sqlite_schema");
        match self.db {
            _ if !self.schema_table => false,
            SourceDb::Temp => {
                is("sqlite_temp_master") || is("sqlite_temp_schema") || (db_given && main_names)
            }
            _ => main_names,
        }
    }
}

/// The database of a FROM item, as SQLite's `Table::pSchema`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SourceDb {
    Main,
    Temp,
    /// An attached database, by slot.
    Attached(usize),
    /// A subquery, CTE or NEW/OLD/excluded row: no `db.` names it; SQLite spells its
    /// database `*` in an expanded `*`.
    None,
}

impl SourceDb {
    /// The database of a table or view stored under `root` (views: 0 for main).
    fn of_root(root: u32) -> SourceDb {
        if root & crate::exec::store::TEMP_ROOT_BIT != 0 {
            return SourceDb::Temp;
        }
        crate::exec::store::attached_slot(root).map_or(SourceDb::Main, SourceDb::Attached)
    }

    /// Whether `db.` (as written) names this database.
    fn named_by(self, db: &str, schema: &Schema) -> bool {
        match self {
            SourceDb::Main => db.eq_ignore_ascii_case("main"),
            SourceDb::Temp => db.eq_ignore_ascii_case("temp"),
            SourceDb::Attached(slot) => schema.attached_db(db).is_some_and(|(s, _)| s == slot),
            SourceDb::None => false,
        }
    }

    fn name(self, schema: &Schema) -> &str {
        match self {
            SourceDb::Main => "main",
            SourceDb::Temp => "temp",
            SourceDb::Attached(slot) => schema.attached.get(slot).map_or("*", |a| &a.name),
            SourceDb::None => "*",
        }
    }
}

/// What an unqualified name of a USING column merged by a RIGHT or FULL JOIN reads: the
/// rightmost table's column (RIGHT), or coalesce() over the joined tables' columns (FULL),
/// as positions in the frame (resolve.c lookupName's pFJMatch).
#[derive(Debug, Clone)]
enum Merged {
    Col(usize),
    Coalesce(Vec<usize>),
}

impl Merged {
    fn columns(&self) -> &[usize] {
        match self {
            Merged::Col(i) => std::slice::from_ref(i),
            Merged::Coalesce(cols) => cols,
        }
    }
}

/// A recursive CTE whose step is being bound: its working table (`Working(id)`, the
/// columns `cols`) for the one reference its step's FROM may make.
#[derive(Clone)]
struct Recursing {
    name: String,
    id: usize,
    cols: Vec<OutCol>,
    /// The frame count while the step's own FROM is bound: a reference from deeper (a
    /// subquery of the step) is SQLite's error.
    depth: usize,
    /// Whether the step's FROM names the table itself.
    from_step: bool,
}

#[derive(Clone)]
struct CteDef {
    columns: Vec<String>,
    select: ast::Select,
    /// The address of the statement's own AST select (`select` is a copy): the
    /// `SubPlan::origin` of the CTE's plan, for EXPLAIN QUERY PLAN.
    origin: usize,
    recursive: bool,
}

pub struct Binder<'s> {
    pub schema: &'s Schema,
    frames: Vec<Frame>,
    ctes: Vec<HashMap<String, CteDef>>,
    view_depth: usize,
    /// The views being bound, outermost first: one met again inside itself is SQLite's
    /// "view v is circularly defined" (sqlite3ViewGetColumnNames).
    views_open: Vec<*const crate::schema::View>,
    /// The database of the (non-TEMP) view being bound: SQLite qualifies the table names of
    /// a view with it (sqlite3FixSelect), so a missing one reads `no such table: main.t`.
    view_db_name: Option<String>,
    /// CTE names whose own body is being bound (a non-recursive CTE's name there means the
    /// table of that name, not the CTE).
    hidden_ctes: Vec<String>,
    /// Recursive CTEs whose step is being bound: (name, working table id, columns).
    recursing: Vec<Recursing>,
    next_working_id: usize,
    /// FROM subqueries without an alias bound so far: each gets a source name of its own,
    /// one no SQL text can write (it starts with NUL), so USING and NATURAL joins, which
    /// name their sides' columns through the sources, tell two of them apart.
    unnamed_sources: usize,
    /// Set by a simple select with LIMIT just before its core is bound (and taken there), so
    /// the access path may favour an index that yields the ORDER BY order.
    order_limit_hint: bool,
    /// The next query bound is the operand of EXISTS (`Frame::exists_operand`).
    exists_next: bool,
    /// Set only by ALTER TABLE RENAME: what the names of the tree being bound resolve to.
    pub rename_log: Option<RenameLog>,
}

/// A name of a bound tree that resolved to a table of the schema, keyed by the address of
/// its text in the tree (`parse::NameSpan::addr`): what SQLite's rename walkers find
/// (alter.c renameTableExprCb, renameColumnExprCb).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NameRef {
    /// A FROM item, DML target or `t.` qualifier naming table `table` itself (an alias
    /// does not).
    Table { addr: usize, table: String },
    /// A name resolving to column `column` of table `table` (through the table, or the
    /// NEW/OLD/excluded row of one).
    Column {
        addr: usize,
        table: String,
        column: String,
    },
    /// A name resolving to the rowid of table `table` (`rowid`, `oid`, `_rowid_`).
    Rowid { addr: usize, table: String },
}

/// What [`Binder::rename_log`] gathers.
#[derive(Debug, Default)]
pub struct RenameLog {
    pub refs: Vec<NameRef>,
    /// The `ScopeCol::source` of each table (or table row) source bound, and whether a
    /// qualifier naming it names the table: a subquery's columns carry their origin table's
    /// name too, but a name resolving to one of them names the subquery's column.
    table_sources: Vec<(Rc<str>, bool)>,
}

impl RenameLog {
    /// Logs a name (`qualifier.name`) that resolved to `c`.
    fn note_column(&mut self, c: &ScopeCol, qualifier: Option<&str>, name: &str) {
        let Some(table) = c.table_name.as_deref() else {
            return;
        };
        let Some(&(_, names_table)) = self
            .table_sources
            .iter()
            .find(|(s, _)| Rc::ptr_eq(s, &c.source))
        else {
            return;
        };
        let addr = name.as_ptr() as usize;
        let table = table.to_string();
        if let Some(q) = qualifier.filter(|_| names_table) {
            self.refs.push(NameRef::Table {
                addr: q.as_ptr() as usize,
                table: table.clone(),
            });
        }
        self.refs.push(if c.is_rowid {
            NameRef::Rowid { addr, table }
        } else {
            NameRef::Column {
                addr,
                table,
                column: c.name.clone(),
            }
        });
    }

    /// Logs the qualifier of a `t.*` that expanded to `c`.
    fn note_star(&mut self, c: &ScopeCol, qualifier: &str) {
        let names_table = self
            .table_sources
            .iter()
            .any(|(s, n)| *n && Rc::ptr_eq(s, &c.source));
        if let Some(table) = c.table_name.as_deref().filter(|_| names_table) {
            self.refs.push(NameRef::Table {
                addr: qualifier.as_ptr() as usize,
                table: table.to_string(),
            });
        }
    }
}

fn err<T>(m: impl Into<String>) -> Result<T> {
    Err(SqlError::msg(m))
}

fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (1, 11) | (2, 12) | (3, 13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// Splits a conjunction into its terms, borrowed from the tree (copying them was ~5% of
/// binding a point SELECT).
pub fn conjuncts<'e>(e: &'e Expr, out: &mut Vec<Cow<'e, Expr>>) {
    match e {
        Expr::Binary(l, BinaryOp::And, r) => {
            conjuncts(l, out);
            conjuncts(r, out);
        }
        _ => out.push(Cow::Borrowed(e)),
    }
}

/// `conjuncts` of a WHERE clause, each tagged `usize::MAX` (not an ON term), straight into
/// the list of the core's terms.
fn where_conjuncts<'e>(e: &'e Expr, out: &mut Vec<(Term<'e>, usize)>) {
    match e {
        Expr::Binary(l, BinaryOp::And, r) => {
            where_conjuncts(l, out);
            where_conjuncts(r, out);
        }
        _ => out.push((Term::Written(Cow::Borrowed(e)), usize::MAX)),
    }
}

/// A term of a core's WHERE, or of a join's ON (which SQLite appends to the WHERE).
enum Term<'e> {
    /// As written: bound with the WHERE.
    Written(Cow<'e, Expr>),
    /// A USING equality, bound with its join: its sides are columns by position.
    Bound(CExpr),
}

/// Whether two bound expressions compute the same value the same way, as far as a
/// compound's ORDER BY needs (sqlite3ExprCompare, collations aside): columns, literals,
/// parameters, and operators, functions and casts over them; anything else is different.
fn same_expr(a: &CExpr, b: &CExpr) -> bool {
    let all = |x: &[CExpr], y: &[CExpr]| {
        x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_expr(x, y))
    };
    match (a, b) {
        (CExpr::Col { level, idx }, CExpr::Col { level: l, idx: i }) => level == l && idx == i,
        (CExpr::Lit(x), CExpr::Lit(y)) => x == y,
        (CExpr::Param(x), CExpr::Param(y)) => x == y,
        (CExpr::Unary(o, x), CExpr::Unary(p, y)) => o == p && same_expr(x, y),
        (
            CExpr::Binary { op, l, r, .. },
            CExpr::Binary {
                op: p, l: x, r: y, ..
            },
        ) => op == p && same_expr(l, x) && same_expr(r, y),
        (
            CExpr::Func { def, args, .. },
            CExpr::Func {
                def: d, args: y, ..
            },
        ) => std::ptr::eq(def.0, d.0) && all(args, y),
        (CExpr::Cast { e, aff }, CExpr::Cast { e: x, aff: f }) => aff == f && same_expr(e, x),
        _ => false,
    }
}

/// `l = r` as the binder builds a comparison of two operands.
fn equality(l: Bound, r: Bound) -> CExpr {
    CExpr::Binary {
        op: BinaryOp::Eq,
        coll: pick_collation(&l, &r),
        laff: l.aff,
        raff: r.aff,
        l: Box::new(l.e),
        r: Box::new(r.e),
    }
}

impl<'s> Binder<'s> {
    pub fn new(schema: &'s Schema) -> Self {
        Binder {
            schema,
            frames: Vec::new(),
            ctes: Vec::new(),
            view_depth: 0,
            views_open: Vec::new(),
            view_db_name: None,
            hidden_ctes: Vec::new(),
            recursing: Vec::new(),
            next_working_id: 0,
            unnamed_sources: 0,
            order_limit_hint: false,
            exists_next: false,
            rename_log: None,
        }
    }

    // ---- expressions ------------------------------------------------------------------

    /// Binds an expression in a scope that has no FROM (defaults, VALUES outside a query).
    pub fn bind_standalone(&mut self, e: &Expr) -> Result<CExpr> {
        self.frames.push(Frame::default());
        let r = self.expr(e);
        self.frames.pop();
        Ok(r?.e)
    }

    /// Binds `e` against a single table's row (CHECK constraints, UPDATE/DELETE WHERE,
    /// partial index predicates); the row layout is the table's columns then its rowid.
    pub fn bind_for_table(&mut self, t: &Table, alias: Option<&str>, e: &Expr) -> Result<CExpr> {
        self.push_table_frame(t, alias);
        let r = self.expr(e);
        self.frames.pop();
        Ok(r?.e)
    }

    /// Pushes a frame holding one table (for DML); pair with `pop_frame`.
    pub fn push_table_frame(&mut self, t: &Table, alias: Option<&str>) {
        let mut f = Frame::default();
        let sname = source_key(alias.unwrap_or(&t.name));
        let tname = shared_name(&sname, &t.name);
        f.cols.reserve_exact(t.columns.len() + 1);
        for (i, c) in t.columns.iter().enumerate() {
            f.cols.push(ScopeCol {
                name: c.name.clone(),
                source: sname.clone(),
                aff: Some(c.affinity),
                coll: c.collation,
                using_hidden: false,
                star_hidden: false,
                is_rowid: false,
                table_name: Some(tname.clone()),
                table_col: Some(i as u32),
            });
        }
        f.cols.push(rowid_scope_col(t, sname.clone(), tname, true));
        if let Some(log) = &mut self.rename_log {
            log.table_sources.push((sname.clone(), alias.is_none()));
        }
        f.sources.push(FrameSource {
            key: sname,
            start: 0,
            width: t.columns.len() + 1,
            db: SourceDb::of_root(t.root),
            label: alias.map_or_else(|| t.name.as_str().into(), Rc::from),
            schema_table: false,
        });
        self.frames.push(f);
    }

    /// Adds a pseudo-source (e.g. `excluded`, or NEW/OLD for triggers) to the top frame at
    /// the given row offset.
    pub fn add_pseudo_source(&mut self, name: &str, t: &Table, start: usize) {
        if let Some(f) = self.frames.last_mut() {
            let sname: Rc<str> = key(name).into();
            let tname: Rc<str> = t.name.as_str().into();
            while f.cols.len() < start {
                f.cols.push(ScopeCol {
                    name: String::new(),
                    source: "".into(),
                    aff: None,
                    coll: Collation::Binary,
                    using_hidden: true,
                    star_hidden: false,
                    is_rowid: false,
                    table_name: None,
                    table_col: None,
                });
            }
            for (i, c) in t.columns.iter().enumerate() {
                f.cols.push(ScopeCol {
                    name: c.name.clone(),
                    source: sname.clone(),
                    aff: Some(c.affinity),
                    coll: c.collation,
                    using_hidden: true,
                    star_hidden: false,
                    is_rowid: false,
                    table_name: Some(tname.clone()),
                    table_col: Some(i as u32),
                });
            }
            f.cols.push(rowid_scope_col(t, sname.clone(), tname, true));
            if let Some(log) = &mut self.rename_log {
                // SQLite resolves `excluded.x` to a column of the table's own FROM item, so
                // RENAME TO rewrites that qualifier to the new table name (resolve.c
                // lookupName remaps it; only an alias undoes that): copied, as the stored
                // text is what users see. NEW and OLD are TK_TRIGGER there: kept.
                log.table_sources
                    .push((sname.clone(), name.eq_ignore_ascii_case("excluded")));
            }
            f.sources.push(FrameSource {
                key: sname,
                start,
                width: t.columns.len() + 1,
                db: SourceDb::None,
                label: name.into(),
                schema_table: false,
            });
        }
    }

    /// Pushes the frame a trigger program sees: NEW (columns, rowid) then OLD.
    /// Names a missing unqualified table as `db.name` in "no such table" (a trigger's
    /// program, as a view's body, binds to its own database's objects).
    pub fn qualify_missing_tables(&mut self, db: Option<String>) {
        self.view_db_name = db;
    }

    pub fn push_trigger_frame(&mut self, t: &Table) {
        self.frames.push(Frame {
            trigger: true,
            ..Frame::default()
        });
        self.add_pseudo_source("new", t, 0);
        self.add_pseudo_source("old", t, t.columns.len() + 1);
    }

    pub fn pop_frame(&mut self) {
        self.frames.pop();
    }

    fn subplan(&mut self, s: &ast::Select) -> Result<SubPlan> {
        self.frames.push(Frame::default());
        let plan = self.select_in_frame(s);
        let f = self.frames.pop();
        let plan = plan?;
        // An outer query's aggregate nothing can compute, left by a query that is not a
        // SELECT core (which raises it at its end).
        if let Some(name) = f.as_ref().and_then(|f| f.outer_agg_unrunnable.as_ref()) {
            return err(format!("misuse of aggregate: {name}"));
        }
        let correlated = f.map(|f| f.correlated).unwrap_or(false);
        Ok(SubPlan {
            plan,
            correlated,
            origin: s as *const ast::Select as usize,
            cache: RefCell::new(None),
        })
    }

    /// Binds a query whose level is not nested in the current one (views, CTEs, FROM
    /// subqueries): the current frame's columns are hidden from it.
    fn detached_subplan(&mut self, s: &ast::Select, keep_outer: bool) -> Result<SubPlan> {
        let saved_top = if keep_outer { self.frames.pop() } else { None };
        let saved_all = if keep_outer {
            Vec::new()
        } else {
            std::mem::take(&mut self.frames)
        };
        let r = self.subplan(s);
        if keep_outer {
            if let Some(mut t) = saved_top {
                // What the subquery reads from outside lies beyond the hidden frame too, so
                // the query holding it is correlated as well (else its results are cached
                // across outer rows).
                if r.as_ref().is_ok_and(|sp| sp.correlated) {
                    t.correlated = true;
                }
                self.frames.push(t);
            }
        } else {
            self.frames = saved_all;
        }
        r
    }

    // ---- SELECT ---------------------------------------------------------------------

    /// Binds a top-level SELECT.
    pub fn bind_select(&mut self, s: &ast::Select) -> Result<SelectPlan> {
        let sub = self.subplan(s)?;
        Ok(sub.plan)
    }

    /// Binds a SELECT in the frame already pushed for it (the frame is reused per core).
    fn select_in_frame(&mut self, s: &ast::Select) -> Result<SelectPlan> {
        let pushed = match &s.with {
            Some(w) => {
                self.push_with(w);
                true
            }
            None => false,
        };
        let r = self.select_body(s);
        if pushed {
            self.ctes.pop();
        }
        r
    }

    /// Makes a WITH clause's tables visible; pair with `pop_with`.
    pub fn push_with(&mut self, w: &ast::With) {
        let mut m = HashMap::new();
        for c in &w.ctes {
            // SQLite treats any self-referencing CTE as recursive; the keyword is optional.
            let recursive = select_mentions(&c.select, &c.name);
            m.insert(
                key(&c.name),
                CteDef {
                    columns: c.columns.clone(),
                    select: (*c.select).clone(),
                    origin: &*c.select as *const ast::Select as usize,
                    recursive,
                },
            );
        }
        self.ctes.push(m);
        if self.rename_log.is_some() {
            // A CTE is bound at each use from a copy, whose names are not the tree's: bind
            // the tree's own body once so its names are logged (SQLite's renameWalkWith).
            // Errors are left to the binding at the use.
            for c in &w.ctes {
                if select_mentions(&c.select, &c.name) {
                    self.log_recursive_cte(c);
                } else {
                    self.hidden_ctes.push(key(&c.name));
                    let _ = self.detached_subplan(&c.select, true);
                    self.hidden_ctes.pop();
                }
            }
        }
    }

    /// For `rename_log`: binds a recursive CTE's own select cores in place, the initial
    /// ones as `bind_cte` does and the step with the working table of their columns
    /// (`bind_cte` binds copies of them, put together as new selects).
    fn log_recursive_cte(&mut self, c: &ast::Cte) {
        let k = key(&c.name);
        let def = CteDef {
            columns: c.columns.clone(),
            select: (*c.select).clone(),
            origin: 0,
            recursive: true,
        };
        // The columns, and whether the CTE binds at all.
        let Ok((_, cols)) = self.bind_cte(&c.name, &def) else {
            return;
        };
        let body = &c.select.body;
        let Some(pos) = body
            .compounds
            .iter()
            .position(|(_, core)| core_mentions(core, &k))
        else {
            return;
        };
        self.hidden_ctes.push(k.clone());
        for core in std::iter::once(&body.first).chain(body.compounds[..pos].iter().map(|(_, c)| c))
        {
            self.log_detached_core(core);
        }
        self.hidden_ctes.pop();
        let id = self.next_working_id;
        self.next_working_id += 1;
        self.recursing.push(Recursing {
            name: k,
            id,
            cols,
            depth: self.frames.len(),
            from_step: true,
        });
        self.log_detached_core(&body.compounds[pos].1);
        self.recursing.pop();
    }

    /// Binds a select core as `detached_subplan` binds a select, results dropped.
    fn log_detached_core(&mut self, core: &SelectCore) {
        let saved_top = self.frames.pop();
        self.frames.push(Frame::default());
        let _ = self.core(core, &[]);
        self.frames.pop();
        self.frames.extend(saved_top);
    }

    pub fn pop_with(&mut self) {
        self.ctes.pop();
    }

    /// Binds a CTE reference: a plain subquery, or for a recursive CTE its initial select and
    /// recursive step (lang_with.html "Recursive Common Table Expressions").
    fn bind_cte(&mut self, name: &str, cte: &CteDef) -> Result<(SourceKind, Vec<OutCol>)> {
        let k = key(name);
        if !cte.recursive {
            self.hidden_ctes.push(k.clone());
            let sub = self.detached_subplan(&cte.select, true);
            self.hidden_ctes.pop();
            let mut sub = sub?;
            sub.origin = cte.origin;
            if !cte.columns.is_empty() && cte.columns.len() != sub.plan.columns.len() {
                return err(format!(
                    "table {} has {} values for {} columns",
                    name,
                    sub.plan.columns.len(),
                    cte.columns.len()
                ));
            }
            let cols = sub.plan.columns.clone();
            return Ok((SourceKind::Subquery(Rc::new(sub)), cols));
        }
        let sel = &cte.select;
        let Some(pos) = sel
            .body
            .compounds
            .iter()
            .position(|(_, c)| core_mentions(c, name))
        else {
            return err(format!("circular reference: {name}"));
        };
        if core_mentions(&sel.body.first, name) || pos + 1 != sel.body.compounds.len() {
            return err(format!("circular reference: {name}"));
        }
        let (op, step_core) = &sel.body.compounds[pos];
        // The step's FROM may name the recursive table once (its rows of one round).
        let mut refs = 0;
        if let SelectCore::Select(core) = step_core {
            let names = |t: &TableOrSubquery| {
                matches!(t, TableOrSubquery::Table { name: n, .. }
                    if n.schema.is_none() && n.name.eq_ignore_ascii_case(name))
            };
            refs = core.from.as_ref().map_or(0, |f| {
                usize::from(names(&f.first)) + f.joins.iter().filter(|j| names(&j.table)).count()
            });
            if refs > 1 {
                return err(format!("multiple references to recursive table: {name}"));
            }
        }
        let union_all = match op {
            CompoundOp::UnionAll => true,
            CompoundOp::Union => false,
            _ => return err(format!("circular reference: {name}")),
        };
        let init_sel = ast::Select {
            with: None,
            body: ast::SelectBody {
                first: sel.body.first.clone(),
                compounds: sel.body.compounds[..pos].to_vec(),
            },
            order_by: Vec::new(),
            limit: None,
        };
        self.hidden_ctes.push(k.clone());
        let init = self.detached_subplan(&init_sel, true);
        self.hidden_ctes.pop();
        let init = init?;
        if !cte.columns.is_empty() && cte.columns.len() != init.plan.columns.len() {
            return err(format!(
                "table {} has {} values for {} columns",
                name,
                init.plan.columns.len(),
                cte.columns.len()
            ));
        }
        let mut cols = init.plan.columns.clone();
        for (i, c) in cols.iter_mut().enumerate() {
            if let Some(n) = cte.columns.get(i) {
                c.name = n.clone();
            }
        }
        let id = self.next_working_id;
        self.next_working_id += 1;
        self.recursing.push(Recursing {
            name: k,
            id,
            cols: cols.clone(),
            depth: self.frames.len(),
            from_step: refs == 1,
        });
        let step_sel = ast::Select {
            with: None,
            body: ast::SelectBody {
                first: step_core.clone(),
                compounds: Vec::new(),
            },
            order_by: Vec::new(),
            limit: None,
        };
        let step = self.detached_subplan(&step_sel, true);
        self.recursing.pop();
        let mut step = step?;
        if step.plan.columns.len() != cols.len() {
            return err(format!(
                "SELECTs to the left and right of {} do not have the same number of result columns",
                if union_all { "UNION ALL" } else { "UNION" }
            ));
        }
        // A step or initial select that reads an enclosing query's columns makes the whole
        // CTE correlated (SQLite binds it at each use, with the outer scopes of that place).
        let correlated = init.correlated || step.correlated;
        // The step reads the working table, which changes every round: never cache it.
        step.correlated = true;
        let limit = match &sel.limit {
            Some(l) => Some(self.bind_standalone_in_frame(&l.limit)?),
            None => None,
        };
        let mut order = Vec::new();
        for (ti, term) in sel.order_by.iter().enumerate() {
            let mut e = &term.expr;
            let mut coll = None;
            if let Expr::Collate { expr, collation } = e {
                coll = Some(Collation::from_name(collation)?);
                e = expr;
            }
            let idx = match e {
                Expr::Literal(Literal::Integer(k)) if *k >= 1 && (*k as usize) <= cols.len() => {
                    Some(*k as usize - 1)
                }
                // Names are the compound's own result names, not the CTE's column list.
                Expr::Column { name, .. } => init
                    .plan
                    .columns
                    .iter()
                    .position(|c| c.name.eq_ignore_ascii_case(name)),
                _ => None,
            };
            let Some(idx) = idx else {
                return err(format!(
                    "{} ORDER BY term does not match any column in the result set",
                    ordinal(ti + 1)
                ));
            };
            order.push(SortKey {
                idx,
                desc: term.desc,
                nulls_first: term.nulls_first.unwrap_or(!term.desc),
                coll: coll.unwrap_or(cols[idx].coll),
            });
        }
        let plan = RecursivePlan {
            init,
            step,
            union_all,
            working_id: id,
            limit,
            order,
            correlated,
            cache: RefCell::new(None),
        };
        Ok((SourceKind::Recursive(Rc::new(plan)), cols))
    }

    fn select_body(&mut self, s: &ast::Select) -> Result<SelectPlan> {
        let simple = s.body.compounds.is_empty();
        let exists_operand = std::mem::take(&mut self.exists_next) && simple;
        if let Some(f) = self.frames.last_mut() {
            f.exists_operand = exists_operand;
        }
        // Sized exactly: a `CorePlan` is ~330 bytes, so the default first growth (four) asked
        // glibc for a block past its per-thread cache, which consolidated its fast bins on
        // every statement (with `Source` below, ~2.5k instructions of a one-shot point
        // SELECT, speedtest1 test 510 under callgrind).
        let mut cores = Vec::with_capacity(1 + s.body.compounds.len());
        let mut ops = Vec::new();
        let mut columns = Vec::new();
        let mut order_by = Vec::new();
        if simple {
            self.order_limit_hint = s.limit.is_some();
            let (mut core, cols, keys) = self.core(&s.body.first, &s.order_by)?;
            self.order_limit_hint = false;
            // No sort when the scan already yields this order; run_select_capped then
            // stops the scan after LIMIT + OFFSET rows.
            if !self.order_by_satisfied(&mut core, &keys) {
                order_by = keys;
            } else {
                // The sort values the ORDER BY added after the visible columns are then
                // read by nothing (the rows are cut to the visible columns): not computed
                // per row (hc_mixed: `ORDER BY substr(c,1,16)` along its index).
                core.outputs.truncate(core.n_visible);
            }
            cores.push(core);
            columns = cols;
        } else {
            let all: Vec<&SelectCore> = std::iter::once(&s.body.first)
                .chain(s.body.compounds.iter().map(|(_, c)| c))
                .collect();
            let mut first_exprs: Vec<(Option<String>, Option<Expr>)> = Vec::new();
            // The later arms' result columns: an ORDER BY term that matches none of the
            // first arm's is looked for in them, left to right (resolveCompoundOrderBy).
            let mut later_exprs: Vec<Vec<(Option<String>, Option<Expr>)>> = Vec::new();
            // Per arm, each column's affinity and the kinds of value it may hold
            // (`compound_sub_aff`).
            let mut arms: Vec<Vec<(Option<Affinity>, u8)>> = Vec::new();
            // Each arm's frame, to resolve an ORDER BY term in it (`order_term_in_arm`).
            let mut arm_frames: Vec<Frame> = Vec::new();
            for (i, c) in all.iter().enumerate() {
                if i > 0 {
                    if let SelectCore::Select(sc) = c {
                        later_exprs.push(
                            sc.columns
                                .iter()
                                .map(|rc| match rc {
                                    ResultColumn::Expr { expr, alias, .. } => {
                                        (alias.clone(), Some(expr.clone()))
                                    }
                                    _ => (None, None),
                                })
                                .collect(),
                        );
                    }
                }
                let outer_frame = self.frames.pop();
                self.frames.push(Frame::default());
                let r = self.core(c, &[]);
                let core_frame = self.frames.pop();
                if let Some(mut f) = outer_frame {
                    // An outer reference of any core makes the whole compound correlated.
                    if core_frame.as_ref().is_some_and(|c| c.correlated) {
                        f.correlated = true;
                    }
                    self.frames.push(f);
                }
                arm_frames.extend(core_frame);
                let (core, cols, _) = r?;
                arms.push(
                    cols.iter()
                        .zip(&core.outputs)
                        .map(|(c, e)| (c.aff, data_type(e, c.aff)))
                        .collect(),
                );
                if i == 0 {
                    columns = cols;
                    if let SelectCore::Select(sc) = c {
                        for rc in &sc.columns {
                            if let ResultColumn::Expr { expr, alias, .. } = rc {
                                first_exprs.push((alias.clone(), Some(expr.clone())));
                            } else {
                                first_exprs.push((None, None));
                            }
                        }
                    }
                } else if cols.len() != columns.len() {
                    let name = s.body.compounds[i - 1].0.name();
                    return err(format!("SELECTs to the left and right of {name} do not have the same number of result columns"));
                } else {
                    // Each column's collation is its leftmost arm's that has one.
                    for (c, o) in columns.iter_mut().zip(&cols) {
                        if !c.has_coll && o.has_coll {
                            c.coll = o.coll;
                            c.has_coll = true;
                            c.explicit_coll = o.explicit_coll;
                        }
                    }
                }
                cores.push(core);
            }
            for (ci, c) in columns.iter_mut().enumerate() {
                let col: Vec<(Option<Affinity>, u8)> =
                    arms.iter().filter_map(|a| a.get(ci).copied()).collect();
                c.aff = col.last().and_then(|x| x.0);
                c.sub_aff = compound_sub_aff(&col);
            }
            ops = s.body.compounds.iter().map(|(op, _)| *op).collect();
            for (ti, term) in s.order_by.iter().enumerate() {
                let mut e = &term.expr;
                let mut coll = None;
                if let Expr::Collate { expr, collation } = e {
                    coll = Some(Collation::from_name(collation)?);
                    e = expr;
                }
                let idx = match e {
                    Expr::Literal(Literal::Integer(k)) if i32::try_from(*k).is_ok() => {
                        if *k < 1 || *k as usize > columns.len() {
                            return err(format!(
                                "{} ORDER BY term out of range - should be between 1 and {}",
                                ordinal(ti + 1),
                                columns.len()
                            ));
                        }
                        Some(*k as usize - 1)
                    }
                    Expr::Column {
                        table: None, name, ..
                    } => columns
                        .iter()
                        .position(|c| c.name.eq_ignore_ascii_case(name)),
                    _ => None,
                };
                let in_arm = |arm: &[(Option<String>, Option<Expr>)]| {
                    if arm.len() != columns.len() {
                        return None;
                    }
                    let by_alias = match e {
                        Expr::Column {
                            table: None, name, ..
                        } => arm.iter().position(|(alias, _)| {
                            alias
                                .as_deref()
                                .is_some_and(|a| a.eq_ignore_ascii_case(name))
                        }),
                        _ => None,
                    };
                    by_alias.or_else(|| arm.iter().position(|(_, ae)| ae.as_ref() == Some(e)))
                };
                let idx = idx
                    .or_else(|| {
                        first_exprs
                            .iter()
                            .position(|(_, fe)| fe.as_ref() == Some(e))
                    })
                    .or_else(|| later_exprs.iter().find_map(|arm| in_arm(arm)));
                // Else the term resolved in each arm, left to right, as one of its result
                // expressions (`t.a` for `a`).
                let idx = match idx {
                    Some(i) => Some(i),
                    None => {
                        let mut found = None;
                        for (f, core) in arm_frames.iter_mut().zip(&cores) {
                            let outputs = core.outputs.get(..columns.len()).unwrap_or(&[]);
                            found = self.order_term_in_arm(e, f, outputs);
                            if found.is_some() {
                                break;
                            }
                        }
                        found
                    }
                };
                let Some(idx) = idx else {
                    return err(format!(
                        "{} ORDER BY term does not match any column in the result set",
                        ordinal(ti + 1)
                    ));
                };
                order_by.push(SortKey {
                    idx,
                    desc: term.desc,
                    nulls_first: term.nulls_first.unwrap_or(!term.desc),
                    coll: coll.unwrap_or(columns[idx].coll),
                });
            }
            // SQLite runs a compound other than UNION ALL whose ORDER BY has a COLLATE
            // term as `SELECT * FROM (compound) ORDER BY ...`
            // (convertCompoundSelectToSubquery), so its columns carry subquery names.
            let collate_order = s
                .order_by
                .iter()
                .any(|t| matches!(t.expr, Expr::Collate { .. }));
            if collate_order && ops.iter().any(|o| *o != CompoundOp::UnionAll) {
                // The rewrite happens before names resolve: a column reference is named as
                // written (`T.A` gives "A"), not after the table's column.
                if first_exprs.len() == columns.len() {
                    for (c, (alias, e)) in columns.iter_mut().zip(first_exprs.iter()) {
                        if let (None, Some(Expr::Column { name, .. })) = (alias, e) {
                            c.name = name.clone();
                        }
                    }
                }
                dedup_subquery_names(&mut columns);
            }
        }
        let (limit, offset) = match &s.limit {
            Some(l) => {
                let lim = self.bind_standalone_in_frame(&l.limit)?;
                let off = match &l.offset {
                    Some(o) => Some(self.bind_standalone_in_frame(o)?),
                    None => None,
                };
                (Some(lim), off)
            }
            None => (None, None),
        };
        Ok(SelectPlan {
            cores,
            ops,
            columns,
            order_by,
            limit,
            offset,
        })
    }

    /// LIMIT/OFFSET: no column of any query is in scope there.
    fn bind_standalone_in_frame(&mut self, e: &Expr) -> Result<CExpr> {
        // SQLite resolves LIMIT and OFFSET with no name context: a column of this or any
        // enclosing query is `no such column` there (also in a CTE or subquery).
        let saved = std::mem::take(&mut self.frames);
        let r = self.bind_standalone(e);
        self.frames = saved;
        r
    }

    /// Binds one core in the top frame. Returns the plan, output columns and sort keys.
    fn core(
        &mut self,
        core: &SelectCore,
        order: &[ast::OrderingTerm],
    ) -> Result<(CorePlan, Vec<OutCol>, Vec<SortKey>)> {
        match core {
            SelectCore::Values(rows) => {
                let mut out = Vec::new();
                for row in rows {
                    let mut r = Vec::new();
                    for e in row {
                        r.push(self.expr(e)?.e);
                    }
                    out.push(r);
                }
                let n = rows.first().map_or(0, |r| r.len());
                let columns: Vec<OutCol> = (0..n)
                    .map(|i| OutCol {
                        name: format!("column{}", i + 1),
                        aff: None,
                        sub_aff: None,
                        coll: Collation::Binary,
                        has_coll: false,
                        explicit_coll: false,
                        origin: None,
                        origin_col: None,
                        sub_name: None,
                    })
                    .collect();
                let mut keys = Vec::new();
                for (ti, term) in order.iter().enumerate() {
                    let idx = match &term.expr {
                        Expr::Literal(Literal::Integer(k)) if *k >= 1 && (*k as usize) <= n => {
                            *k as usize - 1
                        }
                        Expr::Column {
                            table: None, name, ..
                        } => match columns
                            .iter()
                            .position(|c| c.name.eq_ignore_ascii_case(name))
                        {
                            Some(i) => i,
                            None => {
                                return err(format!(
                                    "{} ORDER BY term does not match any column in the result set",
                                    ordinal(ti + 1)
                                ))
                            }
                        },
                        _ => {
                            return err(format!(
                                "{} ORDER BY term does not match any column in the result set",
                                ordinal(ti + 1)
                            ))
                        }
                    };
                    keys.push(SortKey {
                        idx,
                        desc: term.desc,
                        nulls_first: term.nulls_first.unwrap_or(!term.desc),
                        coll: Collation::Binary,
                    });
                }
                let plan = CorePlan {
                    sources: Vec::new(),
                    width: 0,
                    filters: vec![Vec::new()],
                    group_by: Vec::new(),
                    having: None,
                    aggs: Vec::new(),
                    is_agg: false,
                    outputs: Vec::new(),
                    n_visible: n,
                    windows: Vec::new(),
                    distinct: false,
                    distinct_colls: Vec::new(),
                    group_colls: Vec::new(),
                    values: Some(out),
                    needed: Vec::new(),
                    min_max: super::minmax::MinMaxOpt::Off,
                };
                Ok((plan, columns, keys))
            }
            SelectCore::Select(sc) => self.select_core(sc, order),
        }
    }

    fn select_core(
        &mut self,
        sc: &ast::SelectCoreSelect,
        order: &[ast::OrderingTerm],
    ) -> Result<(CorePlan, Vec<OutCol>, Vec<SortKey>)> {
        let has_limit = std::mem::take(&mut self.order_limit_hint);
        // FROM
        // Sized exactly (a `Source` is ~340 bytes; see `cores` in `select_body`).
        let mut sources: Vec<Source> =
            Vec::with_capacity(sc.from.as_ref().map_or(0, |f| 1 + f.joins.len()));
        let mut where_terms: Vec<(Term<'_>, usize)> = Vec::new();
        // Result-column aliases may be used in WHERE/GROUP BY/HAVING/ORDER BY, and in the ON
        // of an outer join (SQLite moves it into the WHERE, sqlite3ProcessJoin).
        let aliases: Vec<(String, Expr)> = sc
            .columns
            .iter()
            .filter_map(|rc| match rc {
                ResultColumn::Expr {
                    expr,
                    alias: Some(a),
                    ..
                } => Some((a.clone(), expr.clone())),
                _ => None,
            })
            .collect();
        if let Some(f) = self.frames.last_mut() {
            f.aliases = aliases;
            f.named_windows = sc.windows.clone();
        }
        if let Some(from) = &sc.from {
            self.from_clause(from, &mut sources, &mut where_terms)?;
        }
        let width = self.frames.last().map_or(0, |f| f.cols.len());
        if let Some(w) = &sc.where_ {
            // SQLite appends inner joins' ON terms to the WHERE (sqlite3ProcessJoin) and
            // tests a loop's terms in that order, so a WHERE term comes first: which one
            // raises a runtime error first depends on it.
            let on_terms = std::mem::take(&mut where_terms);
            where_conjuncts(w, &mut where_terms);
            where_terms.extend(on_terms);
        }
        if self.rename_log.is_some() {
            // Window calls bind their windows from copies.
            for (_, w) in &sc.windows {
                self.log_window_names(w);
            }
        }
        // WHERE
        // Each bound term with its floor and its join (one vector: a second one for the
        // floors was an allocation per SELECT with a WHERE).
        // A term applies to the result of the joins up to its own: it may not be tested
        // before the last RIGHT/FULL JOIN among them, or it would drop left rows before that
        // join decides which right rows went unmatched.
        // An ON term sees only the sources up to its join's (they were all that was in
        // scope), so it is tested there at the latest, even when it holds a correlated
        // subquery (`max_source` then answers the last source).
        let mut bound_terms: Vec<(CExpr, usize, usize)> = Vec::with_capacity(where_terms.len());
        // An aggregate in the WHERE: SQLite resolves the WHERE after the result columns, so
        // which error it is depends on them (`where_aggregate` below).
        if let Some(f) = self.frames.last_mut() {
            f.binding_where = true;
        }
        let mut bound = Ok(());
        for (t, at) in &where_terms {
            let e = match t {
                Term::Written(t) => match self.expr(t) {
                    Ok(b) => b.e,
                    Err(e) => {
                        bound = Err(e);
                        break;
                    }
                },
                Term::Bound(e) => e.clone(),
            };
            let upto = (*at).min(sources.len().saturating_sub(1));
            let floor = sources
                .get(..=upto)
                .and_then(|s| s.iter().rposition(|s| s.join.keeps_right_rows()))
                .unwrap_or(0);
            bound_terms.push((e, floor, *at));
        }
        let where_agg = self.frames.last_mut().and_then(|f| {
            f.binding_where = false;
            f.where_agg.take()
        });
        bound?;
        pragma_arguments_from_terms(&mut sources, &mut bound_terms);
        if sources.len() > 1
            && sources.iter().all(|s| {
                s.join == JoinType::Inner
                    && !matches!(
                        s.kind,
                        SourceKind::PragmaFn { .. } | SourceKind::JsonFn { .. }
                    )
            })
        {
            let terms: Vec<&CExpr> = bound_terms.iter().map(|(e, _, _)| e).collect();
            self.reorder_joins(&mut sources, &terms);
        }
        let mut filters: Vec<Vec<CExpr>> = vec![Vec::new(); sources.len().max(1)];
        let mut constants_first = 0;
        for (e, floor, at) in bound_terms {
            let mut corr = false;
            let mut lvl = e.max_source(&sources, &mut corr).unwrap_or(0).max(floor);
            if at != usize::MAX && sources.iter().any(|s| s.join.is_outer()) {
                lvl = lvl.min(at);
            }
            // SQLite tests a constant WHERE term before any loop (sqlite3WhereBegin): it
            // goes first at the outermost level, and also stays at its floor (after a RIGHT
            // JOIN) so that the NULL-extended rows are tested too.
            if at == usize::MAX && e.is_constant() && !sources.is_empty() {
                if lvl > 0 {
                    filters[0].insert(constants_first, e.clone());
                } else {
                    filters[0].insert(constants_first, e);
                    constants_first += 1;
                    continue;
                }
                constants_first += 1;
            }
            filters[lvl].push(e);
        }
        // Result columns (aggregates and window functions allowed from here on).
        if let Some(f) = self.frames.last_mut() {
            f.agg_allowed = true;
            f.win_allowed = true;
            f.binding_outputs = true;
        }
        let mut outputs = Vec::new();
        let mut columns = Vec::new();
        for rc in &sc.columns {
            match rc {
                ResultColumn::Star | ResultColumn::TableStar(_) => {
                    let only = match rc {
                        ResultColumn::TableStar(t) => Some(key(t)),
                        _ => None,
                    };
                    if sc.from.is_none() {
                        return err("no tables specified");
                    }
                    let f = self
                        .frames
                        .last()
                        .ok_or_else(|| SqlError::msg("no frame"))?;
                    if let Some(t) = &only {
                        if !f.sources.iter().any(|s| *s.key == **t) {
                            return err(format!(
                                "no such table: {}",
                                match rc {
                                    ResultColumn::TableStar(t) => t.as_str(),
                                    _ => "",
                                }
                            ));
                        }
                    }
                    let mut any = false;
                    let (scope, using_values) = (f.cols.clone(), f.using_values.clone());
                    for (i, c) in scope.iter().enumerate() {
                        if c.is_rowid || c.star_hidden || (c.using_hidden && only.is_none()) {
                            continue;
                        }
                        if let Some(t) = &only {
                            if *c.source != **t {
                                continue;
                            }
                        }
                        any = true;
                        if let (Some(log), ResultColumn::TableStar(q)) = (&mut self.rename_log, rc)
                        {
                            log.note_star(c, q);
                        }
                        // `*` and `t.*` both expand a merged USING column to its unqualified
                        // name (select.c selectExpander), so `a.*` of `a FULL JOIN b
                        // USING(x)` shows coalesce(a.x, b.x).
                        let merged = using_values.iter().find(|(k, _)| *k == i);
                        if merged.is_none() {
                            if let Some(what) = self.star_ambiguity(i) {
                                return err(format!("ambiguous column name: {what}"));
                            }
                        }
                        if let Some((_, m)) = merged {
                            let name = c.name.clone();
                            let fi = self.frames.len() - 1;
                            let b = self.merged_value(fi, m)?;
                            outputs.push(b.e);
                            columns.push(OutCol {
                                name,
                                aff: b.aff,
                                sub_aff: b.aff,
                                coll: b.coll.map_or(Collation::Binary, |c| c.0),
                                has_coll: b.coll.is_some(),
                                explicit_coll: b.coll.is_some_and(|c| c.1),
                                origin: None,
                                origin_col: None,
                                sub_name: None,
                            });
                            continue;
                        }
                        outputs.push(CExpr::Col { level: 0, idx: i });
                        columns.push(OutCol {
                            name: c.name.clone(),
                            aff: c.aff,
                            sub_aff: c.aff,
                            coll: c.coll,
                            has_coll: true,
                            explicit_coll: false,
                            origin: c.table_name.clone(),
                            origin_col: c.table_col,
                            sub_name: None,
                        });
                    }
                    if !any && only.is_none() {
                        return err("no tables specified");
                    }
                }
                ResultColumn::Expr { expr, alias, span } => {
                    let b = self.expr(expr)?;
                    let name = match alias {
                        Some(a) => a.clone(),
                        None => match (expr, &b.col) {
                            (Expr::Column { .. }, Some((0, idx))) => {
                                let c = self.frames.last().and_then(|f| f.cols.get(*idx));
                                match c {
                                    Some(c) if !c.is_rowid => c.name.clone(),
                                    // SQLite names a rowid column after the INTEGER PRIMARY
                                    // KEY when there is one, else "rowid", however written.
                                    Some(c) => c
                                        .table_name
                                        .as_deref()
                                        .and_then(|t| self.schema.table(t))
                                        .and_then(|t| t.rowid_alias.and_then(|i| t.columns.get(i)))
                                        .map(|ipk| ipk.name.clone())
                                        .unwrap_or_else(|| "rowid".to_string()),
                                    _ => span.clone(),
                                }
                            }
                            _ => span.clone(),
                        },
                    };
                    // SQLite's columnType, which finds a view column's declared type, reads
                    // a column reference (not one under COLLATE) and looks into a scalar
                    // subquery; a compound's is its last arm's, which the plan's columns
                    // are not, so it has none here.
                    let (origin, origin_col) = match (&b.col, &b.e) {
                        (_, _) if matches!(expr, Expr::Collate { .. }) => (None, None),
                        (Some((0, idx)), _) => self
                            .frames
                            .last()
                            .and_then(|f| f.cols.get(*idx))
                            .map_or((None, None), |c| (c.table_name.clone(), c.table_col)),
                        (None, CExpr::Scalar(sp)) if sp.plan.cores.len() == 1 => sp
                            .plan
                            .columns
                            .first()
                            .map_or((None, None), |c| (c.origin.clone(), c.origin_col)),
                        _ => (None, None),
                    };
                    // An expression's collation may come from a COLLATE inside it.
                    let (coll, explicit_coll) =
                        match (b.coll, crate::collation::collate_inside(expr)) {
                            (Some((c, explicit)), _) => (Some(c), explicit),
                            (None, Some(name)) => (Some(Collation::from_name(name)?), true),
                            (None, None) => (None, false),
                        };
                    let sub_name =
                        subquery_column_name(expr, alias.is_some(), &name, columns.len());
                    columns.push(OutCol {
                        name,
                        aff: b.aff,
                        sub_aff: b.aff,
                        coll: coll.unwrap_or_default(),
                        has_coll: coll.is_some(),
                        explicit_coll,
                        origin,
                        origin_col,
                        sub_name,
                    });
                    outputs.push(b.e);
                }
            }
        }
        if let Some(f) = self.frames.last_mut() {
            f.win_allowed = false;
            f.binding_outputs = false;
        }
        // SQLite's SF_Aggregate: aggregates in the result columns, or a GROUP BY.
        let agg_query =
            !sc.group_by.is_empty() || self.frames.last().is_some_and(|f| !f.aggs.is_empty());
        // A non-aggregate query may use no aggregate in its WHERE (a resolve error); an
        // aggregate query's WHERE resolves one but cannot run it (sqlite3ExprCodeTarget's
        // "misuse of aggregate", raised once everything else resolved).
        if let (Some(f), false) = (&where_agg, agg_query) {
            return err(format!("{AGG_MISUSE}{f}"));
        }
        let outer_agg_here = self.frames.last_mut().and_then(|f| f.outer_agg_here.take());
        if let (Some(f), false) = (outer_agg_here, agg_query) {
            return err(format!("{AGG_MISUSE}{f}"));
        }
        // GROUP BY. A term is a column number only when it is an integer that fits in 32
        // bits (sqlite3ExprIsInteger); `GROUP BY 2147483648` groups by that constant.
        let mut group_by = Vec::new();
        // Groups compare under each term's collation, as `=` would (a NOCASE column groups
        // 'a' with 'A').
        let mut group_colls = Vec::new();
        self.isolate(true);
        for g in &sc.group_by {
            let e = match g {
                Expr::Literal(Literal::Integer(k)) if i32::try_from(*k).is_ok() => {
                    let k = *k;
                    if k < 1 || k as usize > outputs.len() {
                        return err(format!(
                            "{} GROUP BY term out of range - should be between 1 and {}",
                            ordinal(group_by.len() + 1),
                            outputs.len()
                        ));
                    }
                    let e = outputs[k as usize - 1].clone();
                    if contains_agg(&e) {
                        return err("aggregate functions are not allowed in the GROUP BY clause");
                    }
                    group_colls.push(
                        columns
                            .get(k as usize - 1)
                            .map(|c| c.coll)
                            .unwrap_or_default(),
                    );
                    e
                }
                _ => {
                    if let Some(f) = self.frames.last_mut() {
                        f.agg_allowed = false;
                    }
                    let r = self.expr(g);
                    if let Some(f) = self.frames.last_mut() {
                        f.agg_allowed = true;
                    }
                    match r {
                        Ok(b) => {
                            group_colls.push(b.coll.map(|c| c.0).unwrap_or_default());
                            b.e
                        }
                        Err(e) if e.to_string().starts_with("misuse of aggregate") => {
                            return err(
                                "aggregate functions are not allowed in the GROUP BY clause",
                            );
                        }
                        Err(e) => return Err(e),
                    }
                }
            };
            group_by.push(e);
        }
        self.isolate(false);
        let having = match &sc.having {
            Some(h) => Some(self.expr(h)?.e),
            None => None,
        };
        self.isolate(true);
        if let Some(f) = self.frames.last_mut() {
            f.win_allowed = true;
        }
        // ORDER BY (single core): by number, by alias, or any expression.
        let n_visible = outputs.len();
        let mut keys = Vec::new();
        for (ti, term) in order.iter().enumerate() {
            let mut e = &term.expr;
            let mut coll = None;
            if let Expr::Collate { expr, collation } = e {
                coll = Some(Collation::from_name(collation)?);
                e = expr;
            }
            let aggs_before = self.frames.last().map_or(0, |f| f.aggs.len());
            let idx = match e {
                Expr::Literal(Literal::Integer(k)) if i32::try_from(*k).is_ok() => {
                    if *k < 1 || *k as usize > n_visible {
                        return err(format!("{} ORDER BY term out of range - should be between 1 and {}", ordinal(ti + 1), n_visible));
                    }
                    *k as usize - 1
                }
                Expr::Column { table: None, name, .. }
                    if sc.columns.iter().any(|rc| matches!(rc, ResultColumn::Expr { alias: Some(a), .. } if a.eq_ignore_ascii_case(name))) =>
                {
                    sc.columns
                        .iter()
                        .filter(|rc| !matches!(rc, ResultColumn::Star | ResultColumn::TableStar(_)))
                        .position(|rc| matches!(rc, ResultColumn::Expr { alias: Some(a), .. } if a.eq_ignore_ascii_case(name)))
                        .map(|p| self.expr_position(sc, p))
                        .unwrap_or(0)
                }
                _ => {
                    let b = self.expr(e)?;
                    if coll.is_none() {
                        coll = b.coll.map(|c| c.0);
                    }
                    outputs.push(b.e);
                    outputs.len() - 1
                }
            };
            // An aggregate ordering a query that is not an aggregate one resolves (ORDER BY
            // allows aggregates) but cannot run: SQLite's codegen error.
            let new_agg = self.frames.last().and_then(|f| f.aggs.get(aggs_before));
            if let (Some(a), false) = (new_agg, agg_query) {
                let name = written_function_name(e, a.def.name).unwrap_or(a.def.name);
                return err(format!("misuse of aggregate: {name}()"));
            }
            let coll = coll.unwrap_or_else(|| {
                columns
                    .get(idx)
                    .map(|c: &OutCol| c.coll)
                    .unwrap_or_default()
            });
            keys.push(SortKey {
                idx,
                desc: term.desc,
                nulls_first: term.nulls_first.unwrap_or(!term.desc),
                coll,
            });
        }
        self.isolate(false);
        let f = self
            .frames
            .last_mut()
            .ok_or_else(|| SqlError::msg("no frame"))?;
        f.agg_allowed = false;
        f.win_allowed = false;
        let aggs = std::mem::take(&mut f.aggs);
        let windows = std::mem::take(&mut f.wins);
        f.win_defs.clear();
        let is_agg = !aggs.is_empty() || !group_by.is_empty() || having.is_some();
        if having.is_some() && group_by.is_empty() && aggs.is_empty() {
            return err("HAVING clause on a non-aggregate query");
        }
        if let Some(f) = where_agg {
            return err(format!("misuse of aggregate: {f}"));
        }
        let unrunnable = self
            .frames
            .last_mut()
            .and_then(|f| f.outer_agg_unrunnable.take());
        if let Some(f) = unrunnable {
            return err(format!("misuse of aggregate: {f}"));
        }
        // ORDER BY <column of the only table> ... LIMIT: the column (and collation) whose index
        // order would let the scan stop after LIMIT rows.
        let order_hint = match (has_limit, sources.first(), keys.first()) {
            (true, Some(src), Some(k)) if sources.len() == 1 && !is_agg && !sc.distinct => {
                match outputs.get(k.idx) {
                    Some(CExpr::Col { level: 0, idx })
                        if *idx >= src.start && *idx < src.start + src.width =>
                    {
                        Some((*idx - src.start, k.coll))
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        let mut plan = CorePlan {
            sources,
            width,
            filters,
            group_by,
            having,
            aggs,
            is_agg,
            outputs,
            n_visible,
            windows,
            distinct: sc.distinct,
            // Only DISTINCT reads them: a one-shot SELECT without it skips an allocation.
            distinct_colls: if sc.distinct {
                columns.iter().map(|c| c.coll).collect()
            } else {
                Vec::new()
            },
            group_colls,
            values: None,
            needed: Vec::new(),
            min_max: super::minmax::MinMaxOpt::Off,
        };
        // Access paths are chosen knowing the columns read (covering indexes); every term
        // stays a filter, so the mask read with all sources scanned is the final one. It is
        // not computed again after them: access paths, INDEXED BY and min/max change only
        // how rows are found, and their probes are copies of terms marked here (the second
        // pass was ~0.8k instructions of a one-shot point SELECT, speedtest1 test 510).
        plan.needed = super::usage::needed_columns(&plan);
        let simple_count = super::covering::is_simple_count(&plan);
        self.choose_access(
            &mut plan.sources,
            &mut plan.filters,
            order_hint,
            &plan.needed,
            simple_count,
        );
        self.apply_indexed_by(&mut plan, simple_count)?;
        self.plan_min_max(&mut plan);
        Ok((plan, columns, keys))
    }

    /// The result column of a compound's arm that ORDER BY term `e` is, resolved in that
    /// arm alone (frame `f`, no enclosing query) and compared with its result expressions
    /// (select.c resolveOrderByTermToExprList). A term that does not resolve there, or
    /// holds a subquery or an aggregate, matches none.
    fn order_term_in_arm(&mut self, e: &Expr, f: &mut Frame, outputs: &[CExpr]) -> Option<usize> {
        let saved = std::mem::take(&mut self.frames);
        self.frames.push(std::mem::take(f));
        let bound = self.expr(e);
        *f = self.frames.pop().unwrap_or_default();
        self.frames = saved;
        let bound = bound.ok()?.e;
        let mut plain = true;
        walk(&bound, |x| {
            if matches!(
                x,
                CExpr::Agg(_)
                    | CExpr::Scalar(_)
                    | CExpr::Exists(_)
                    | CExpr::InSelect { .. }
                    | CExpr::Field { .. }
            ) {
                plain = false;
            }
            plain
        });
        if !plain {
            return None;
        }
        outputs.iter().position(|o| same_expr(o, &bound))
    }

    /// Marks the top frame as binding its GROUP BY or ORDER BY (`Frame::isolated`). An
    /// error there leaves the mark: the frame is then dropped with its query.
    fn isolate(&mut self, on: bool) {
        if let Some(f) = self.frames.last_mut() {
            f.isolated = on;
        }
    }

    /// Whether `*` may expand column `i` of the top frame: over several FROM items SQLite
    /// expands it to `db.t.x` and resolves that (select.c selectExpander), which is
    /// ambiguous where two items share the name and database (`a, a`), unless the later
    /// one's x is a USING column. Returns that spelling for the error.
    fn star_ambiguity(&self, i: usize) -> Option<String> {
        let f = self.frames.last()?;
        let c = f.cols.get(i)?;
        let src = f
            .sources
            .iter()
            .find(|s| (s.start..s.start + s.width).contains(&i))?;
        let same = |s: &&FrameSource| *s.key == *src.key && s.db == src.db;
        if f.sources.iter().filter(same).nth(1).is_none() {
            return None;
        }
        let mut hits = 0;
        for s in f.sources.iter().filter(same) {
            for d in &f.cols[s.start..s.start + s.width] {
                let name_ok = !d.is_rowid && d.name.eq_ignore_ascii_case(&c.name);
                if name_ok && (hits == 0 || !d.using_hidden) {
                    hits += 1;
                }
            }
        }
        let db = src.db.name(self.schema);
        (hits > 1).then(|| format!("{db}.{}.{}", src.label, c.name))
    }

    /// Output position of the p-th non-star result column.
    fn expr_position(&self, sc: &ast::SelectCoreSelect, p: usize) -> usize {
        // Stars expand to several outputs; count what precedes.
        let f = self.frames.last();
        let mut pos = 0;
        let mut seen = 0;
        for rc in &sc.columns {
            match rc {
                ResultColumn::Star => {
                    pos += f.map_or(0, |f| {
                        f.cols
                            .iter()
                            .filter(|c| !c.is_rowid && !c.using_hidden && !c.star_hidden)
                            .count()
                    })
                }
                ResultColumn::TableStar(t) => {
                    pos += f.map_or(0, |f| {
                        f.cols
                            .iter()
                            .filter(|c| !c.is_rowid && c.source.eq_ignore_ascii_case(t))
                            .count()
                    })
                }
                ResultColumn::Expr { .. } => {
                    if seen == p {
                        return pos;
                    }
                    seen += 1;
                    pos += 1;
                }
            }
        }
        pos
    }

    /// SQLite's error for `name(...)` in FROM when no table-valued function has that name:
    /// a table or view of that name "is not a function", else there is no such table.
    fn not_a_table_function(&self, name: &ast::QualifiedName) -> SqlError {
        let schema = name.schema.as_deref();
        if self.schema.table_in(schema, &name.name).is_some()
            || self.schema.view_in(schema, &name.name).is_some()
        {
            return SqlError::msg(format!("'{}' is not a function", name.name));
        }
        match schema {
            Some(s) => SqlError::msg(format!("no such table: {s}.{}", name.name)),
            None => SqlError::msg(format!("no such table: {}", name.name)),
        }
    }

    fn view_guard(&mut self) -> Result<()> {
        self.view_depth += 1;
        if self.view_depth > 50 {
            self.view_depth -= 1;
            return err("view nesting too deep (a view or CTE refers to itself?)");
        }
        Ok(())
    }
}

fn out_cols_to_scope(cols: &[OutCol], sname: &Rc<str>) -> Vec<ScopeCol> {
    cols.iter()
        .map(|c| ScopeCol {
            name: c.name.clone(),
            source: sname.clone(),
            aff: c.sub_aff,
            coll: c.coll,
            using_hidden: false,
            star_hidden: false,
            is_rowid: false,
            table_name: c.origin.clone(),
            table_col: c.origin_col,
        })
        .collect()
}

/// Whether a select core's FROM clause (or anything in it) mentions `name`.
fn core_mentions(c: &SelectCore, name: &str) -> bool {
    let s = ast::Select {
        with: None,
        body: ast::SelectBody {
            first: c.clone(),
            compounds: Vec::new(),
        },
        order_by: Vec::new(),
        limit: None,
    };
    select_mentions(&s, name)
}

fn sub_cols(sub: &SubPlan, sname: &Rc<str>, names: &[String], written: bool) -> Vec<ScopeCol> {
    // Without a column list the subquery's own names, made unique as SQLite names a
    // subquery's columns (`SELECT * FROM (SELECT a, a)` reads "a" and "a:1"); a FROM
    // subquery's as written (`written`, `OutCol::sub_name`), a view's as resolved.
    let mut own = sub.plan.columns.clone();
    if written {
        use_written_names(&mut own);
    }
    dedup_subquery_names(&mut own);
    own.iter()
        .enumerate()
        .map(|(i, c)| ScopeCol {
            name: names.get(i).cloned().unwrap_or_else(|| c.name.clone()),
            source: sname.clone(),
            aff: c.sub_aff,
            coll: c.coll,
            using_hidden: false,
            star_hidden: false,
            is_rowid: false,
            table_name: c.origin.clone(),
            table_col: c.origin_col,
        })
        .collect()
}

/// Collation for a binary comparison (datatype3.html §7.1): an explicit COLLATE on the left,
/// then on the right, then the left column's, then the right column's, else BINARY.
fn pick_collation(l: &Bound, r: &Bound) -> Collation {
    match (l.coll, r.coll) {
        (Some((c, true)), _) => c,
        (_, Some((c, true))) => c,
        (Some((c, false)), _) => c,
        (_, Some((c, false))) => c,
        _ => Collation::Binary,
    }
}

pub fn literal_value(l: &Literal) -> Value {
    match l {
        Literal::Null => Value::Null,
        Literal::Integer(i) => Value::Integer(*i),
        Literal::Float { value, .. } => Value::real(*value),
        Literal::String(s) => Value::text(s.as_str()),
        Literal::Blob(b) => Value::blob(b.clone()),
        // Evaluated at run time by the executor through functions; planned as calls.
        Literal::CurrentTime => current_fn("time"),
        Literal::CurrentDate => current_fn("date"),
        Literal::CurrentTimestamp => current_fn("datetime"),
    }
}

fn current_fn(name: &str) -> Value {
    let ctx = crate::func::NoConnection;
    match crate::func::lookup(name, 0) {
        Ok(def) => def
            .call(&crate::func::Ctx::new(&ctx), &[])
            .unwrap_or(Value::Null),
        Err(_) => Value::Null,
    }
}

/// The start of the binder's error for an aggregate where none may be
/// (`plan/bind/expr.rs`); the function's name as written and `()` follow.
const AGG_MISUSE: &str = "misuse of aggregate function ";

/// `pragma_x WHERE arg = e [AND schema = f]`: a pragma function called without arguments
/// takes them from `=` terms on its HIDDEN columns, as SQLite's pragma vtab xBestIndex
/// does (the `arg` term first; a `schema` term only after it), when `e` reads no source at
/// or after the function's (no term of a later join, no WHERE term over a function on the
/// right of an outer join). A term so used is dropped (SQLite's `omit`).
fn pragma_arguments_from_terms(sources: &mut [Source], terms: &mut Vec<(CExpr, usize, usize)>) {
    for i in 0..sources.len() {
        let SourceKind::PragmaFn { pragma, args } = &sources[i].kind else {
            continue;
        };
        let hidden = crate::exec::pragma::function_hidden_columns(pragma);
        if !args.is_empty() || hidden.first() != Some(&"arg") {
            continue;
        }
        let first_hidden = sources[i].start + sources[i].width - hidden.len();
        let mut taken = Vec::new();
        for slot in 0..hidden.len() {
            let col = first_hidden + slot;
            let (earlier, rest) = sources.split_at_mut(i);
            let on = &mut rest[0].on;
            let term = match on
                .iter()
                .position(|e| hidden_column_value(e, col, earlier).is_some())
            {
                Some(j) => on.remove(j),
                None => {
                    // An outer join's own terms are its ON terms alone (above).
                    let outer = rest[0].join.is_outer();
                    let found = terms.iter().position(|(e, _, at)| {
                        (*at == i || (*at == usize::MAX && !outer))
                            && hidden_column_value(e, col, earlier).is_some()
                    });
                    let Some(j) = found else { break };
                    terms.remove(j).0
                }
            };
            if let Some(v) = hidden_column_value(&term, col, earlier) {
                taken.push(v.clone());
            }
        }
        if let SourceKind::PragmaFn { args, .. } = &mut sources[i].kind {
            *args = taken;
        }
    }
}

/// The other side of `e` when `e` is `col = x` or `x = col` (column `col` of this level)
/// and `x` reads no source beyond `earlier`.
fn hidden_column_value<'e>(e: &'e CExpr, col: usize, earlier: &[Source]) -> Option<&'e CExpr> {
    let CExpr::Binary {
        op: BinaryOp::Eq,
        l,
        r,
        ..
    } = e
    else {
        return None;
    };
    let is_col = |x: &CExpr| matches!(x, CExpr::Col { level: 0, idx } if *idx == col);
    let other = match (is_col(l), is_col(r)) {
        (true, false) => r,
        (false, true) => l,
        _ => return None,
    };
    let mut usable = true;
    crate::plan::walk(other, |x| {
        usable &= match x {
            CExpr::Col { level: 0, idx } => earlier
                .iter()
                .any(|s| *idx >= s.start && *idx < s.start + s.width),
            CExpr::Agg(_) | CExpr::Win(_) => false,
            CExpr::Exists(sp)
            | CExpr::Scalar(sp)
            | CExpr::Field { sub: sp, .. }
            | CExpr::InSelect { sub: sp, .. } => !sp.correlated,
            _ => true,
        };
        usable
    });
    usable.then_some(other.as_ref())
}

/// How the query wrote function `name` (the first call of it in `e`), for messages that
/// quote it as SQLite's `%#T` does.
fn written_function_name<'e>(e: &'e Expr, name: &str) -> Option<&'e str> {
    let mut stack = vec![e];
    while let Some(x) = stack.pop() {
        if let Expr::Function(fc) = x {
            if fc.name.eq_ignore_ascii_case(name) {
                return Some(&fc.name);
            }
        }
        x.for_each_child(&mut |c| stack.push(c));
    }
    None
}

pub fn contains_agg(e: &CExpr) -> bool {
    let mut found = false;
    super::walk(e, |x| {
        found = matches!(x, CExpr::Agg(_) | CExpr::Win(_));
        !found
    });
    found
}

/// Whether a SELECT's FROM clauses mention `name` (to detect recursive CTEs).
fn select_mentions(s: &ast::Select, name: &str) -> bool {
    let text = s.to_string().to_ascii_lowercase();
    let n = name.to_ascii_lowercase();
    text.split(|c: char| !c.is_alphanumeric() && c != '_')
        .any(|w| w == n)
}

/// Makes column names unique as SQLite does for a subquery's columns
/// (sqlite3ColumnsFromExprList): a name already taken (ASCII case-insensitively) gets
/// ":1", ":2", ... appended, after dropping a ":digits" suffix it already has.
/// (SQLite draws a random suffix after the third collision; this keeps counting.)
/// Names the columns of a FROM subquery or CTE as SQLite does (`OutCol::sub_name`).
pub(crate) fn use_written_names(columns: &mut [OutCol]) {
    for c in columns {
        if let Some(n) = c.sub_name.take() {
            c.name = n;
        }
    }
}

/// `OutCol::sub_name` of result column `pos` (0-based) written as `expr` and named `name`
/// (its alias when `aliased`): a column reference's name as written, COLLATE skipped, and
/// `columnN` for a name that is `true` or `false` (sqlite3ColumnsFromExprList).
fn subquery_column_name(expr: &Expr, aliased: bool, name: &str, pos: usize) -> Option<String> {
    let mut e = expr;
    while let Expr::Collate { expr, .. } = e {
        e = expr;
    }
    let written = match e {
        Expr::Column { name: w, .. } if !aliased => w.as_str(),
        _ => name,
    };
    if written.eq_ignore_ascii_case("true") || written.eq_ignore_ascii_case("false") {
        return Some(format!("column{}", pos + 1));
    }
    (written != name).then(|| written.to_string())
}

pub(crate) fn dedup_subquery_names(columns: &mut [OutCol]) {
    let mut taken: std::collections::HashSet<String> = std::collections::HashSet::new();
    for c in columns.iter_mut() {
        let mut name = c.name.clone();
        let mut cnt = 0u32;
        while taken.contains(&name.to_ascii_lowercase()) {
            let base = match name.rfind(':') {
                Some(j) if j > 0 && name[j + 1..].bytes().all(|b| b.is_ascii_digit()) => {
                    name[..j].to_string()
                }
                _ => name.clone(),
            };
            cnt += 1;
            name = format!("{base}:{cnt}");
        }
        taken.insert(name.to_ascii_lowercase());
        c.name = name;
    }
}

/// The scope entry of a table's rowid slot. A WITHOUT ROWID table's slot (always NULL) has
/// no name, so `rowid`, `oid` and `_rowid_` are unknown columns there, as in SQLite; like
/// a rowid it is left out of `*` and `t.*`.
/// A source's lower-case name, built in one allocation (`key` then `Rc::from` was two, of
/// the ~75 allocations of a one-shot point SELECT, speedtest1 test 510).
pub(crate) fn source_key(name: &str) -> Rc<str> {
    Rc::from(crate::schema::key_ref(name).as_ref())
}

/// A table's name for `ScopeCol::table_name`: shares `sname` when they are the same text
/// (an unaliased lower-case table name, the usual case), else its own copy.
pub(crate) fn shared_name(sname: &Rc<str>, table: &str) -> Rc<str> {
    if **sname == *table {
        sname.clone()
    } else {
        table.into()
    }
}

fn rowid_scope_col(t: &Table, source: Rc<str>, table_name: Rc<str>, hidden: bool) -> ScopeCol {
    if t.without_rowid {
        return ScopeCol {
            name: String::new(),
            source,
            aff: None,
            coll: Collation::Binary,
            using_hidden: true,
            star_hidden: false,
            is_rowid: true,
            table_name: Some(table_name),
            table_col: None,
        };
    }
    ScopeCol {
        name: "rowid".into(),
        source,
        aff: Some(Affinity::Integer),
        coll: Collation::Binary,
        using_hidden: hidden,
        star_hidden: false,
        is_rowid: true,
        table_name: Some(table_name),
        table_col: None,
    }
}

/// The kinds of value an output expression may hold (sqlite3ExprDataType): 0x01 numeric,
/// 0x02 text, 0x04 blob; `aff` is the output's affinity.
fn data_type(e: &CExpr, aff: Option<Affinity>) -> u8 {
    let by_affinity = || match aff {
        Some(Affinity::Numeric | Affinity::Integer | Affinity::Real) => 0x05,
        Some(Affinity::Text) => 0x06,
        _ => 0x07,
    };
    match e {
        CExpr::Lit(Value::Null) => 0,
        CExpr::Lit(Value::Text(_)) => 0x02,
        CExpr::Lit(Value::Blob(_)) => 0x04,
        CExpr::Lit(_) => 0x01,
        CExpr::Unary(UnaryOp::Plus, x) => data_type(x, aff),
        CExpr::Binary {
            op: BinaryOp::Concat,
            ..
        } => 0x06,
        CExpr::Param(_) | CExpr::Func { .. } | CExpr::Agg(_) | CExpr::Win(_) => 0x07,
        CExpr::Case { whens, else_, .. } => {
            let thens = whens.iter().map(|(_, t)| data_type(t, None));
            thens
                .chain(else_.iter().map(|x| data_type(x, None)))
                .fold(0, |m, d| m | d)
        }
        CExpr::Col { .. } | CExpr::Scalar(_) | CExpr::Cast { .. } | CExpr::Field { .. } => {
            by_affinity()
        }
        _ => 0x01,
    }
}

/// A compound's column affinity as a subquery's (sqlite3SubqueryColumnTypes): the first
/// arm's that has one; when that is TEXT and a later arm may hold numbers, or numeric and a
/// later arm may hold text, BLOB (no conversion).
fn compound_sub_aff(arms: &[(Option<Affinity>, u8)]) -> Option<Affinity> {
    let at = arms.iter().position(|a| a.0.is_some())?;
    let aff = arms[at].0;
    let later = arms[..at]
        .iter()
        .chain(&arms[at + 1..])
        .fold(0, |m, a| m | a.1);
    match aff {
        Some(Affinity::Text) if later & 0x01 != 0 => Some(Affinity::Blob),
        Some(Affinity::Numeric | Affinity::Integer | Affinity::Real) if later & 0x02 != 0 => {
            Some(Affinity::Blob)
        }
        a => a,
    }
}
