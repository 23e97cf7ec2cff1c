//! Planner: binds AST names to row positions and chooses access paths, producing plans the
//! executor walks (`exec`).
//!
//! Row layout: a query's FROM clause produces one combined row, the sources' columns side by
//! side; a table source contributes its columns followed by its rowid. `CExpr::Col { level,
//! idx }` reads position `idx` of the row `level` frames up (0: this query, 1: the enclosing
//! query, ...), which is how correlated subqueries see their outer row.
//!
//! Invariants:
//! - Every WHERE/ON conjunct stays a filter even when an index lookup is derived from it, so
//!   an access path can only narrow the rows examined, never change the result.
//! - Comparisons carry the affinity and collation SQLite would apply (datatype3.html §4.2,
//!   §7.1), decided here once, not per row.
//! - Aggregate calls are collected per query level and evaluated over groups; elsewhere they
//!   are errors (`misuse of aggregate function f()`).

pub mod access;
pub mod bind;
pub mod constant;
pub mod covering;
pub mod grouping;
pub mod minmax;
pub mod usage;
pub mod values;

use crate::collation::Collation;
use crate::exec::store::KeyOrder;
use crate::func::FuncDef;
use crate::parse::ast::{BinaryOp, CompoundOp, LikeOp, RaiseKind, UnaryOp};
use crate::schema::{Index, Table};
use crate::value::{Affinity, Value};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

pub use bind::Binder;

/// A bound expression.
#[derive(Debug, Clone)]
pub enum CExpr {
    Lit(Value),
    Param(usize),
    Col {
        level: usize,
        idx: usize,
    },
    Unary(UnaryOp, Box<CExpr>),
    /// Comparison and arithmetic; `coll`/affinities matter only for comparisons.
    Binary {
        op: BinaryOp,
        l: Box<CExpr>,
        r: Box<CExpr>,
        coll: Collation,
        laff: Option<Affinity>,
        raff: Option<Affinity>,
    },
    Like {
        op: LikeOp,
        not: bool,
        l: Box<CExpr>,
        r: Box<CExpr>,
        esc: Option<Box<CExpr>>,
    },
    Between {
        e: Box<CExpr>,
        not: bool,
        lo: Box<CExpr>,
        hi: Box<CExpr>,
        /// Collation of `e >= lo`; `e <= hi` has its own (`hicoll`): SQLite rewrites BETWEEN
        /// into the two comparisons, each picking its collation from its own operands.
        coll: Collation,
        hicoll: Collation,
        eaff: Option<Affinity>,
        loaff: Option<Affinity>,
        hiaff: Option<Affinity>,
    },
    InList {
        e: Box<CExpr>,
        not: bool,
        list: Vec<CExpr>,
        coll: Collation,
        /// The left operand's affinity: the only one a list's comparisons apply.
        eaff: Option<Affinity>,
        /// The items' own affinities, for the planner's index lookups (`access.rs`).
        laffs: Vec<Option<Affinity>>,
    },
    InSelect {
        e: Box<CExpr>,
        not: bool,
        sub: Rc<SubPlan>,
        /// The first (or only) term's comparison collation and affinity.
        coll: Collation,
        eaff: Option<Affinity>,
        /// A row value's terms, each compared with its own subquery column under its own
        /// collation and affinity (SQLite's per-column IN comparison); `[(coll, eaff)]`
        /// for a single value.
        terms: Vec<(Collation, Option<Affinity>)>,
        /// Each left term's own collation (BINARY without one): SQLite compares the left
        /// value with each subquery row under it when the lookup found no equal row
        /// (sqlite3ExprCodeIN's step 6, deciding between false and NULL).
        own: Vec<Collation>,
    },
    Exists(Rc<SubPlan>),
    Scalar(Rc<SubPlan>),
    /// Column `idx` of the first row of a subquery of several columns (NULL without a
    /// row): a term of a row value compared in a [`RowCmp`] (rowvalue.html 2.2).
    Field {
        sub: Rc<SubPlan>,
        idx: usize,
    },
    /// A comparison of two row values of the same size.
    RowCmp(Box<RowCmp>),
    IsNull {
        e: Box<CExpr>,
        not: bool,
    },
    Case {
        base: Option<Box<CExpr>>,
        whens: Vec<(CExpr, CExpr)>,
        else_: Option<Box<CExpr>>,
        coll: Collation,
        baff: Option<Affinity>,
    },
    Cast {
        e: Box<CExpr>,
        aff: Affinity,
    },
    Func {
        def: FnRef,
        args: Vec<CExpr>,
        coll: Collation,
    },
    Agg(usize),
    /// The value of aggregate `idx` of the query `level` levels out: an aggregate written in
    /// a subquery whose arguments read only that outer query's columns is that query's
    /// (SQLite's TK_AGG_FUNCTION with `op2` > 0).
    OuterAgg {
        level: usize,
        idx: usize,
    },
    /// The value of window call `i` for the current output row.
    Win(usize),
    Vector(Vec<CExpr>),
    Raise {
        kind: RaiseKind,
        msg: Option<Box<CExpr>>,
    },
}

/// A comparison of two row values (`(a, b) < (1, 2)`, `(a, b) = (SELECT x, y ...)`), term
/// by term as SQLite's codeVectorCompare: `=` is true when every term is equal, false at
/// the first unequal term, else NULL; `<` `<=` `>` `>=` are decided by the first term that
/// is not equal (a NULL there makes the result NULL), the last term compared with the
/// operator itself; `IS`/`IS NOT` compare NULLs as values.
#[derive(Debug, Clone)]
pub struct RowCmp {
    pub op: BinaryOp,
    /// Terms of the same length; a subquery's are its [`CExpr::Field`]s.
    pub l: Vec<CExpr>,
    pub r: Vec<CExpr>,
    /// Per term, its comparison's collation and the two operands' affinities.
    pub terms: Vec<(Collation, Option<Affinity>, Option<Affinity>)>,
}

/// A built-in function definition (a `Debug`-printable reference).
#[derive(Clone, Copy)]
pub struct FnRef(pub &'static FuncDef);

impl std::fmt::Debug for FnRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}()", self.0.name)
    }
}

impl std::ops::Deref for FnRef {
    type Target = FuncDef;
    fn deref(&self) -> &FuncDef {
        self.0
    }
}

/// An aggregate call of one query level.
#[derive(Debug, Clone)]
pub struct AggCall {
    pub def: FnRef,
    /// The function's arguments, then the terms of its ORDER BY (`order`).
    pub args: Vec<CExpr>,
    pub distinct: bool,
    pub coll: Collation,
    pub filter: Option<CExpr>,
    /// `agg(x ORDER BY y)` (SQLite 3.44+): sort keys over `args`, each past the function's
    /// own arguments; empty without ORDER BY.
    pub order: Vec<SortKey>,
}

/// Which window function a `WinCall` computes.
#[derive(Debug, Clone)]
pub enum WinKind {
    RowNumber,
    Rank,
    DenseRank,
    PercentRank,
    CumeDist,
    Ntile,
    Lag,
    Lead,
    FirstValue,
    LastValue,
    NthValue,
    /// An aggregate over the frame.
    Agg {
        def: FnRef,
        distinct: bool,
        coll: Collation,
    },
}

/// One end of a frame (lang_windowfunc.html 2.2.2). An offset is a constant expression,
/// evaluated once per execution; one SQLite does not take as constant (a column, a
/// function, a subquery) is bound as NULL, which fails at run time as SQLite's does.
#[derive(Debug, Clone)]
pub enum FrameEdge {
    UnboundedPreceding,
    Preceding(CExpr),
    CurrentRow,
    Following(CExpr),
    UnboundedFollowing,
}

/// How a frame's edges are counted (lang_windowfunc.html 2.2.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameUnits {
    Rows,
    Groups,
    /// Offsets are distances in the value of the window's one ORDER BY term.
    Range,
}

/// The rows EXCLUDE takes out of each row's frame (lang_windowfunc.html 2.2.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameExclude {
    NoOthers,
    CurrentRow,
    /// The current row and its peers.
    Group,
    /// The current row's peers, not the row itself.
    Ties,
}

#[derive(Debug, Clone)]
pub enum WinFrame {
    /// RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW (peers included): the default.
    ToCurrentPeers,
    /// The whole partition.
    Partition,
    /// Any other frame.
    Spec {
        units: FrameUnits,
        start: FrameEdge,
        end: FrameEdge,
        /// `None` without an EXCLUDE clause. SQLite computes a frame with one, even
        /// EXCLUDE NO OTHERS, by aggregating it afresh for each row (window.c
        /// `windowFullScan`), which shows in group_concat() over values that add no text.
        exclude: Option<FrameExclude>,
    },
}

/// A window function call of one query level (lang_windowfunc.html).
#[derive(Debug, Clone)]
pub struct WinCall {
    pub kind: WinKind,
    pub args: Vec<CExpr>,
    pub partition: Vec<CExpr>,
    /// (expression, descending, nulls first, collation)
    pub order: Vec<(CExpr, bool, bool, Collation)>,
    pub frame: WinFrame,
    /// Each PARTITION BY term's collation: rows fall in one partition when their terms
    /// are equal under it.
    pub partition_colls: Vec<Collation>,
    /// `FILTER (WHERE ...)` of an aggregate: rows where it is not true are left out of
    /// every frame.
    pub filter: Option<CExpr>,
    /// SQLite's pass that computes the call (sqlite3WindowLink, sqlite3WindowRewrite):
    /// the calls whose window (partition, order and frame) equals the first call's are
    /// pass 0, those equal to the first of the rest pass 1, and so on. Each pass sorts
    /// the rows it receives stably by its window's partition and order, the last pass
    /// first and pass 0 last, so ties meet each window in the order the later passes
    /// left them in, and the rows leave in pass 0's order (exec/select/window.rs).
    pub pass: usize,
}

/// A subquery inside an expression; `correlated` when it reads an enclosing row, in which
/// case it is re-run per outer row, else its result is computed once per execution.
#[derive(Debug)]
pub struct SubPlan {
    pub plan: SelectPlan,
    pub correlated: bool,
    /// The address of the AST select this was bound from: an identity only (never read
    /// through), by which EXPLAIN QUERY PLAN finds SQLite's number for the subquery
    /// (`exec::eqp`).
    pub origin: usize,
    pub cache: RefCell<Option<(u64, Rc<Vec<Vec<Value>>>)>>,
}

#[derive(Debug, Clone)]
pub struct OutCol {
    pub name: String,
    /// The affinity the column compares with as an expression: a compound's is its last
    /// arm's (SQLite's Select is the rightmost arm: `x IN (SELECT ...)`, a scalar
    /// subquery).
    pub aff: Option<Affinity>,
    /// The affinity of the column as a FROM subquery's, view's or CTE's column, and of
    /// CREATE TABLE AS's: `aff`, except for a compound (sqlite3SubqueryColumnTypes: the
    /// first arm with one, made BLOB when other arms' values may be of another kind).
    pub sub_aff: Option<Affinity>,
    pub coll: Collation,
    /// Whether the column has a collation of its own (a column reference or COLLATE), as
    /// opposed to BINARY for want of one (a literal, a function): a compound takes each
    /// column's collation from its leftmost arm that has one (multiSelectCollSeq).
    pub has_coll: bool,
    /// Whether that collation is a COLLATE's (SQLite's EP_Collate), which takes precedence
    /// over the other operand's column collation where the column is compared as a term
    /// of a row value.
    pub explicit_coll: bool,
    /// The table of a plain table column (what a FROM-subquery's scope column records as
    /// its table), shared with the scope it came from.
    pub origin: Option<std::rc::Rc<str>>,
    /// With `origin`, the column's position in that table (None: its rowid), from which
    /// PRAGMA table_info of a view reads the declared type (sqlite3SubqueryColumnTypes).
    pub origin_col: Option<u32>,
    /// The name SQLite gives the column as a FROM subquery's or a CTE's where that is not
    /// `name`: it names them from the result expressions before names resolve
    /// (sqlite3ColumnsFromExprList), so a column reference is named as written (`A` for
    /// column `a`, `oid` for the rowid) and `true`/`false` as `columnN`.
    pub sub_name: Option<String>,
}

/// Sort key: position in the output row.
#[derive(Debug, Clone)]
pub struct SortKey {
    pub idx: usize,
    pub desc: bool,
    pub nulls_first: bool,
    pub coll: Collation,
}

#[derive(Debug, Clone)]
pub struct SelectPlan {
    pub cores: Vec<CorePlan>,
    pub ops: Vec<CompoundOp>,
    pub columns: Vec<OutCol>,
    /// Output rows carry `columns.len()` visible values, then hidden sort values.
    pub order_by: Vec<SortKey>,
    pub limit: Option<CExpr>,
    pub offset: Option<CExpr>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinType {
    Inner,
    Left,
    /// RIGHT JOIN: inner-joined in the nested loop, the right rows no left row matched are
    /// emitted afterwards with every earlier source NULL (`exec::eval::scan_level`).
    Right,
    /// FULL JOIN: LEFT's NULL extension of unmatched left rows plus RIGHT's of unmatched
    /// right rows.
    Full,
}

impl JoinType {
    /// The source's rows are kept when nothing on the left matches them.
    pub fn keeps_right_rows(self) -> bool {
        matches!(self, JoinType::Right | JoinType::Full)
    }

    /// Its ON terms decide a match (they are not WHERE filters).
    pub fn is_outer(self) -> bool {
        self != JoinType::Inner
    }
}

#[derive(Debug, Clone)]
pub enum SourceKind {
    Table(Arc<Table>),
    /// A view, FROM-subquery or CTE, materialized when scanned.
    Subquery(Rc<SubPlan>),
    /// The sqlite_schema table (root page 1, read-only).
    Schema,
    /// sqlite_temp_schema: the temp database's schema table (empty without one).
    TempSchema,
    /// `aux.sqlite_schema`: an attached database's schema table, by its tagged root.
    AttachedSchema(u32),
    /// A recursive CTE, computed to a fixpoint when scanned.
    Recursive(Rc<RecursivePlan>),
    /// The working table of the recursive CTE being computed (the rows of the last round).
    Working(usize),
    /// Rows computed while planning (schema pragmas as table-valued functions, the empty
    /// temp schema).
    Rows(Rc<Vec<Vec<Value>>>),
    /// A schema pragma as a table-valued function whose argument depends on earlier
    /// sources (`pragma_table_info(m.name)`), evaluated per outer row.
    PragmaFn {
        pragma: String,
        args: Vec<CExpr>,
    },
    /// json_each / json_tree (`recursive`) over arguments that may depend on earlier
    /// sources, evaluated per outer row (func::json_table).
    JsonFn {
        recursive: bool,
        args: Vec<CExpr>,
    },
}

/// `init UNION [ALL] step`, where `step` reads working table `working_id`.
#[derive(Debug)]
pub struct RecursivePlan {
    pub init: SubPlan,
    pub step: SubPlan,
    pub union_all: bool,
    pub working_id: usize,
    pub limit: Option<CExpr>,
    /// ORDER BY of the recursive select: the queue is then a priority queue and rows are
    /// processed one at a time in that order (lang_with.html, "Queue order").
    pub order: Vec<SortKey>,
    /// Whether the initial select or the step reads a column of an enclosing query: the
    /// rows are then computed again for every outer row (never cached).
    pub correlated: bool,
    pub cache: RefCell<Option<(u64, Rc<Vec<Vec<Value>>>)>>,
}

#[derive(Debug, Clone)]
pub struct Source {
    pub kind: SourceKind,
    /// First position of this source in the combined row.
    pub start: usize,
    /// Number of positions (columns, plus the rowid for tables).
    pub width: usize,
    pub join: JoinType,
    /// ON terms of a LEFT, RIGHT or FULL JOIN, tested before deciding the row matched.
    pub on: Vec<CExpr>,
    pub access: Access,
    /// `INDEXED BY i` (only index i may be used) or `NOT INDEXED` (no index at all: rowid
    /// lookups and scans only), as written after the table name.
    pub indexed: Option<crate::parse::ast::Indexed>,
}

impl Source {
    /// Whether an access path may use index `ix` (its `INDEXED BY` / `NOT INDEXED`).
    pub fn may_use_index(&self, ix: &Index) -> bool {
        // An index ordered by a collation this connection lacks orders nothing it can
        // check: the plan reads the table, and the comparisons that need the collation
        // fail the statement (`collation::user` invariant 2).
        if !ix.columns.iter().all(|c| c.collation.is_live()) {
            return false;
        }
        match &self.indexed {
            None => true,
            Some(crate::parse::ast::Indexed::NotIndexed) => false,
            Some(crate::parse::ast::Indexed::By(name)) => name.eq_ignore_ascii_case(&ix.name),
        }
    }
}

/// How a source's rows are found.
#[derive(Debug, Clone)]
pub enum Access {
    Scan,
    /// `rowid = e` (each of several values for IN).
    RowidEq(Vec<CExpr>),
    /// Rows by rowid between the bounds; descending when `reverse` (an ORDER BY rowid DESC
    /// the scan satisfies).
    RowidRange {
        lo: Option<(CExpr, bool)>,
        hi: Option<(CExpr, bool)>,
        reverse: bool,
    },
    /// Equality on a prefix of the index columns (each with one or more candidate values),
    /// then an optional range on the next column. Bounds carry (expr, inclusive).
    Index {
        index: Arc<Index>,
        order: KeyOrder,
        eq: Vec<(Vec<CExpr>, Option<Affinity>)>,
        /// The `eq` positions (a bit each) that match NULL keys: `x IS NULL`, which SQLite
        /// searches an index for as `x=?`. Elsewhere a NULL equality value makes the walk
        /// empty, as `=` matches no NULL.
        nulls: u64,
        lo: Option<(CExpr, bool)>,
        hi: Option<(CExpr, bool)>,
        range_aff: Option<Affinity>,
        /// Walk the index backwards (an ORDER BY it satisfies in reverse key order).
        reverse: bool,
        /// The index holds every column the query reads from this table
        /// (`plan::covering`): rows are built from the index entries alone, with no
        /// table lookup (EXPLAIN QUERY PLAN: `USING COVERING INDEX`).
        covering: bool,
        /// The source's WHERE terms (`CorePlan::filters`; inner joins only) every row of
        /// this walk satisfies, a bit per position (terms past 63 never): each equality
        /// or range comparison the bounds were built from (`plan::access::implied_terms`).
        /// Only a walk of one key range with table lookups (`Store::index_lookup_scan`)
        /// or of a WITHOUT ROWID table's own tree (`Store::without_rowid_scan`), whose
        /// rows are its entries, may skip testing them; 0 everywhere else.
        implied: u64,
    },
    /// SQLite's "automatic index": an inner table joined by `col = <earlier sources>` with
    /// no usable index is hashed on `col` once per execution and probed per outer row.
    AutoIndex {
        col: usize,
        probe: CExpr,
        aff: Option<Affinity>,
        coll: Collation,
        cache: AutoIndexCache,
    },
}

impl Access {
    /// A walk of the whole index `ix`, in key order (no bounds), reading the table unless
    /// `covering`.
    pub fn whole_index(ix: Arc<Index>, covering: bool) -> Access {
        let order = KeyOrder {
            columns: ix.columns.iter().map(|c| (c.collation, c.desc)).collect(),
        };
        Access::Index {
            index: ix,
            order,
            eq: Vec::new(),
            nulls: 0,
            lo: None,
            hi: None,
            range_aff: None,
            reverse: false,
            covering,
            implied: 0,
        }
    }
}

/// Rows of a table grouped by the hash key of one column, tagged with the execution that
/// built them.
pub type AutoIndexCache =
    Rc<RefCell<Option<(u64, std::collections::HashMap<Vec<u8>, Vec<Vec<Value>>>)>>>;

#[derive(Debug, Clone)]
pub struct CorePlan {
    pub sources: Vec<Source>,
    pub width: usize,
    /// Filters checked once the sources up to index i are bound (index = sources.len() when
    /// there are no sources: a FROM-less select).
    pub filters: Vec<Vec<CExpr>>,
    pub group_by: Vec<CExpr>,
    pub having: Option<CExpr>,
    pub aggs: Vec<AggCall>,
    pub is_agg: bool,
    /// Visible outputs then hidden sort values.
    pub outputs: Vec<CExpr>,
    /// How many of `outputs` are visible (DISTINCT compares only these).
    pub n_visible: usize,
    /// Window function calls, computed over the rows that reach the output.
    pub windows: Vec<WinCall>,
    pub distinct: bool,
    /// The collation of each visible output, which DISTINCT compares under (empty when
    /// the core is not DISTINCT: every reader is a DISTINCT path).
    pub distinct_colls: Vec<Collation>,
    /// The collation of each GROUP BY term, which groups compare under.
    pub group_colls: Vec<Collation>,
    /// A VALUES core: rows of expressions, no FROM.
    pub values: Option<Vec<Vec<CExpr>>>,
    /// Per source, the record columns its scans decode (`usage::needed_columns`; `None` or
    /// a missing entry: all of them).
    pub needed: Vec<Option<Arc<[bool]>>>,
    /// SQLite's min/max optimization (`plan::minmax`).
    pub min_max: minmax::MinMaxOpt,
}

impl CExpr {
    /// Calls `f` on direct children, including those of nested subplans' outer references
    /// (not the subplans themselves).
    pub fn for_each_child<'a>(&'a self, f: &mut dyn FnMut(&'a CExpr)) {
        match self {
            CExpr::Lit(_)
            | CExpr::Param(_)
            | CExpr::Col { .. }
            | CExpr::Agg(_)
            | CExpr::OuterAgg { .. }
            | CExpr::Win(_)
            | CExpr::Exists(_)
            | CExpr::Scalar(_)
            | CExpr::Field { .. } => {}
            CExpr::RowCmp(rc) => rc.l.iter().chain(&rc.r).for_each(|x| f(x)),
            CExpr::Unary(_, e) | CExpr::IsNull { e, .. } | CExpr::Cast { e, .. } => f(e),
            CExpr::Binary { l, r, .. } => {
                f(l);
                f(r)
            }
            CExpr::Like { l, r, esc, .. } => {
                f(l);
                f(r);
                if let Some(e) = esc {
                    f(e)
                }
            }
            CExpr::Between { e, lo, hi, .. } => {
                f(e);
                f(lo);
                f(hi)
            }
            CExpr::InList { e, list, .. } => {
                f(e);
                list.iter().for_each(|x| f(x))
            }
            CExpr::InSelect { e, .. } => f(e),
            CExpr::Case {
                base, whens, else_, ..
            } => {
                if let Some(b) = base {
                    f(b)
                }
                for (w, t) in whens {
                    f(w);
                    f(t)
                }
                if let Some(e) = else_ {
                    f(e)
                }
            }
            CExpr::Func { args, .. } => args.iter().for_each(|x| f(x)),
            CExpr::Vector(v) => v.iter().for_each(|x| f(x)),
            CExpr::Raise { msg, .. } => {
                if let Some(m) = msg {
                    f(m)
                }
            }
        }
    }

    /// The highest source index (in `sources`) this expression reads at level 0, or None if
    /// it reads no column of this level. `correlated` is set when a subplan or a column
    /// refers beyond level 0.
    pub fn max_source(&self, sources: &[Source], correlated: &mut bool) -> Option<usize> {
        let mut best: Option<usize> = None;
        walk(self, |e| {
            match e {
                CExpr::Col { level: 0, idx } => {
                    let s = sources
                        .iter()
                        .position(|s| *idx >= s.start && *idx < s.start + s.width);
                    best = best.max(s);
                }
                CExpr::Col { .. } | CExpr::OuterAgg { .. } => *correlated = true,
                CExpr::Exists(sp)
                | CExpr::Scalar(sp)
                | CExpr::Field { sub: sp, .. }
                | CExpr::InSelect { sub: sp, .. } => {
                    if sp.correlated {
                        // A correlated subquery may read any source of this level.
                        *correlated = true;
                        best = best.max(sources.len().checked_sub(1));
                    }
                }
                CExpr::Agg(_) | CExpr::Win(_) => best = best.max(sources.len().checked_sub(1)),
                _ => {}
            }
            true
        });
        best
    }

    /// No column, aggregate, window, subquery or non-deterministic function anywhere in
    /// the expression. Decided depth first, left to right, stopping at the first node that
    /// varies, so the usual WHERE term is decided at its first leaf: for `substr(c,1,16)
    /// >= ?` three nodes (Binary, Func, Col), where a `walk` visited all seven, ~256
    /// instructions in each execution of hc_mixed's scan (`check_constant_filters`,
    /// callgrind). Recursion is as deep as the expression, as `Exec::eval`'s is.
    pub fn is_constant(&self) -> bool {
        match self {
            CExpr::Col { .. }
            | CExpr::Agg(_)
            | CExpr::OuterAgg { .. }
            | CExpr::Win(_)
            | CExpr::Exists(_)
            | CExpr::Scalar(_)
            | CExpr::Field { .. }
            | CExpr::InSelect { .. } => false,
            CExpr::Lit(_) | CExpr::Param(_) => true,
            CExpr::Func { def, args, .. } => {
                def.deterministic && args.iter().all(CExpr::is_constant)
            }
            // The usual WHERE term compares a column: decided without a call.
            CExpr::Binary { l, r, .. } => {
                !matches!(**l, CExpr::Col { .. })
                    && !matches!(**r, CExpr::Col { .. })
                    && l.is_constant()
                    && r.is_constant()
            }
            _ => self.children_constant(),
        }
    }

    /// `is_constant` of the other shapes, apart so that the closure's frame is not set up
    /// for the common ones.
    #[inline(never)]
    fn children_constant(&self) -> bool {
        let mut constant = true;
        self.for_each_child(&mut |e| constant = constant && e.is_constant());
        constant
    }
}

/// Visits `root` and every expression below it (`for_each_child`), depth first, until
/// `visit` answers false. The first 16 pending nodes are kept on the stack, so the terms of
/// a one-row statement are walked without a heap allocation (a `Vec` per walk, two walks
/// per WHERE term, was ~5% of binding a point SELECT; speedtest1 test 410, callgrind).
pub(crate) fn walk<'a>(root: &'a CExpr, mut visit: impl FnMut(&'a CExpr) -> bool) {
    const INLINE: usize = 16;
    let mut inline: [Option<&'a CExpr>; INLINE] = [None; INLINE];
    inline[0] = Some(root);
    let mut n = 1;
    // Nodes pushed once `inline` is full; while it holds any, new nodes go here too, so
    // popping `spill` first keeps the order last-in first-out.
    let mut spill: Vec<&'a CExpr> = Vec::new();
    loop {
        let e = match spill.pop() {
            Some(e) => e,
            None if n > 0 => {
                n -= 1;
                match inline[n] {
                    Some(e) => e,
                    None => return,
                }
            }
            None => return,
        };
        if !visit(e) {
            return;
        }
        e.for_each_child(&mut |c| {
            if n < INLINE && spill.is_empty() {
                inline[n] = Some(c);
                n += 1;
            } else {
                spill.push(c);
            }
        });
    }
}
