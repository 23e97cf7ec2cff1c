//! Abstract syntax tree for SQLite's dialect.
//!
//! The tree mirrors SQLite's grammar (lang_*.html) closely so that it prints back to SQL
//! (`display.rs`) with the same meaning. Names keep their spelling as written (case is folded
//! only when resolved). Where the engine needs the source text exactly as written (result
//! column names, the CREATE text stored in `sqlite_schema`), the node carries it (`span`,
//! `Stmt`'s `schema_sql`), because SQLite stores and reports the text, not a reprint.

#[derive(Debug, Clone, PartialEq)]
pub enum Stmt {
    Select(Box<Select>),
    Insert(Box<Insert>),
    Update(Box<Update>),
    Delete(Box<Delete>),
    CreateTable(Box<CreateTable>),
    CreateIndex(Box<CreateIndex>),
    CreateView(Box<CreateView>),
    CreateTrigger(Box<CreateTrigger>),
    CreateVirtualTable(Box<CreateVirtualTable>),
    Drop {
        kind: ObjectKind,
        if_exists: bool,
        name: QualifiedName,
    },
    AlterTable {
        table: QualifiedName,
        action: AlterAction,
    },
    Begin {
        mode: Option<TxnMode>,
    },
    Commit,
    Rollback {
        savepoint: Option<String>,
    },
    Savepoint(String),
    Release(String),
    Pragma {
        name: QualifiedName,
        value: Option<PragmaValue>,
    },
    Explain {
        query_plan: bool,
        stmt: Box<Stmt>,
    },
    Reindex(Option<QualifiedName>),
    Vacuum {
        schema: Option<String>,
        into: Option<Expr>,
    },
    Analyze(Option<QualifiedName>),
    Attach {
        file: Expr,
        schema: Expr,
        key: Option<Expr>,
    },
    Detach(Expr),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectKind {
    Table,
    Index,
    View,
    Trigger,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxnMode {
    Deferred,
    Immediate,
    Exclusive,
    Concurrent,
}

#[derive(Debug, Clone, PartialEq)]
pub enum PragmaValue {
    /// `PRAGMA x = v`
    Assign(Expr),
    /// `PRAGMA x(v)`
    Call(Expr),
}

#[derive(Debug, Clone, PartialEq)]
pub enum AlterAction {
    RenameTable(String),
    /// `new_quoted`: the new name was written quoted, so SQLite writes it quoted wherever it
    /// replaces the old one (renameEditSql's `bQuote`).
    RenameColumn {
        old: String,
        new: String,
        new_quoted: bool,
    },
    /// `text` is the column definition as written (SQLite appends it to the stored CREATE).
    AddColumn {
        def: ColumnDef,
        text: String,
    },
    DropColumn(String),
}

/// `[schema.]name`
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QualifiedName {
    pub schema: Option<String>,
    pub name: String,
}

impl QualifiedName {
    pub fn bare(name: impl Into<String>) -> Self {
        QualifiedName {
            schema: None,
            name: name.into(),
        }
    }
}

// ---------------------------------------------------------------------------------------
// SELECT

#[derive(Debug, Clone, PartialEq)]
pub struct With {
    pub recursive: bool,
    pub ctes: Vec<Cte>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Cte {
    pub name: String,
    pub columns: Vec<String>,
    /// `Some(true)` for MATERIALIZED, `Some(false)` for NOT MATERIALIZED.
    pub materialized: Option<bool>,
    pub select: Box<Select>,
}

/// A full SELECT: compound body plus ORDER BY / LIMIT that apply to the whole.
#[derive(Debug, Clone, PartialEq)]
pub struct Select {
    pub with: Option<With>,
    pub body: SelectBody,
    pub order_by: Vec<OrderingTerm>,
    pub limit: Option<Limit>,
}

impl Select {
    /// `[WITH ...] SELECT columns FROM table [AS alias] [INDEXED BY ...] [WHERE where_]`: the
    /// one-table query the engine builds for its own work (the rows an UPDATE/DELETE
    /// visits, their EXPLAIN QUERY PLAN, a foreign-key probe); callers add ORDER BY/LIMIT.
    pub fn of_table(
        with: Option<With>,
        columns: Vec<ResultColumn>,
        table: QualifiedName,
        alias: Option<String>,
        indexed: Option<Indexed>,
        where_: Option<Expr>,
    ) -> Select {
        let source = TableOrSubquery::Table {
            name: table,
            alias,
            indexed,
        };
        Select::of_source(with, columns, source, where_)
    }

    /// `[WITH ...] SELECT columns FROM source [WHERE where_]` over one FROM item of any kind
    /// (a table, a subquery): the general form of [`Select::of_table`].
    pub fn of_source(
        with: Option<With>,
        columns: Vec<ResultColumn>,
        source: TableOrSubquery,
        where_: Option<Expr>,
    ) -> Select {
        Select {
            with,
            body: SelectBody {
                first: SelectCore::Select(Box::new(SelectCoreSelect {
                    distinct: false,
                    columns,
                    from: Some(FromClause {
                        first: source,
                        joins: Vec::new(),
                    }),
                    where_,
                    group_by: Vec::new(),
                    having: None,
                    windows: Vec::new(),
                })),
                compounds: Vec::new(),
            },
            order_by: Vec::new(),
            limit: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct SelectBody {
    pub first: SelectCore,
    pub compounds: Vec<(CompoundOp, SelectCore)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompoundOp {
    Union,
    UnionAll,
    Intersect,
    Except,
}

impl CompoundOp {
    /// The operator as SQL writes it (and SQLite's messages name it).
    pub fn name(self) -> &'static str {
        match self {
            CompoundOp::Union => "UNION",
            CompoundOp::UnionAll => "UNION ALL",
            CompoundOp::Intersect => "INTERSECT",
            CompoundOp::Except => "EXCEPT",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum SelectCore {
    Select(Box<SelectCoreSelect>),
    Values(Vec<Vec<Expr>>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct SelectCoreSelect {
    pub distinct: bool,
    pub columns: Vec<ResultColumn>,
    pub from: Option<FromClause>,
    pub where_: Option<Expr>,
    pub group_by: Vec<Expr>,
    pub having: Option<Expr>,
    pub windows: Vec<(String, WindowDef)>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ResultColumn {
    /// `*`
    Star,
    /// `t.*`
    TableStar(String),
    /// `expr [AS alias]`; `span` is the expression's source text as written.
    Expr {
        expr: Expr,
        alias: Option<String>,
        span: String,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct FromClause {
    pub first: TableOrSubquery,
    pub joins: Vec<Join>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Join {
    pub op: JoinOp,
    pub table: TableOrSubquery,
    pub constraint: Option<JoinConstraint>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JoinOp {
    /// `,` rather than a JOIN keyword.
    pub comma: bool,
    pub natural: bool,
    pub kind: JoinKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinKind {
    Inner,
    /// Plain `JOIN`, no qualifier.
    Plain,
    Cross,
    Left,
    Right,
    Full,
}

#[derive(Debug, Clone, PartialEq)]
pub enum JoinConstraint {
    On(Expr),
    Using(Vec<String>),
}

#[derive(Debug, Clone, PartialEq)]
pub enum TableOrSubquery {
    Table {
        name: QualifiedName,
        alias: Option<String>,
        indexed: Option<Indexed>,
    },
    TableFunction {
        name: QualifiedName,
        args: Vec<Expr>,
        alias: Option<String>,
    },
    Subquery {
        select: Box<Select>,
        alias: Option<String>,
    },
    Nested {
        from: Box<FromClause>,
        alias: Option<String>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub enum Indexed {
    By(String),
    NotIndexed,
}

#[derive(Debug, Clone, PartialEq)]
pub struct OrderingTerm {
    pub expr: Expr,
    pub desc: bool,
    /// `Some(true)` NULLS FIRST, `Some(false)` NULLS LAST.
    pub nulls_first: Option<bool>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Limit {
    pub limit: Expr,
    pub offset: Option<Expr>,
}

// ---------------------------------------------------------------------------------------
// INSERT / UPDATE / DELETE

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConflictAction {
    Rollback,
    Abort,
    Fail,
    Ignore,
    Replace,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Insert {
    pub with: Option<With>,
    /// `REPLACE INTO` is `Some(Replace)` with `replace_keyword` set.
    pub or_conflict: Option<ConflictAction>,
    pub replace_keyword: bool,
    pub table: QualifiedName,
    pub alias: Option<String>,
    pub columns: Vec<String>,
    pub source: InsertSource,
    pub upsert: Vec<Upsert>,
    pub returning: Vec<ResultColumn>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum InsertSource {
    Select(Box<Select>),
    DefaultValues,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Upsert {
    pub target: Option<UpsertTarget>,
    pub action: UpsertAction,
}

#[derive(Debug, Clone, PartialEq)]
pub struct UpsertTarget {
    pub columns: Vec<IndexedColumn>,
    pub where_: Option<Expr>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum UpsertAction {
    Nothing,
    Update {
        sets: Vec<Assignment>,
        where_: Option<Expr>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Assignment {
    /// One column, or several for `(a, b) = (...)`.
    pub columns: Vec<String>,
    pub expr: Expr,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Update {
    pub with: Option<With>,
    pub or_conflict: Option<ConflictAction>,
    pub table: QualifiedName,
    pub alias: Option<String>,
    pub indexed: Option<Indexed>,
    pub sets: Vec<Assignment>,
    pub from: Option<FromClause>,
    pub where_: Option<Expr>,
    pub returning: Vec<ResultColumn>,
    pub order_by: Vec<OrderingTerm>,
    pub limit: Option<Limit>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Delete {
    pub with: Option<With>,
    pub table: QualifiedName,
    pub alias: Option<String>,
    pub indexed: Option<Indexed>,
    pub where_: Option<Expr>,
    pub returning: Vec<ResultColumn>,
    pub order_by: Vec<OrderingTerm>,
    pub limit: Option<Limit>,
}

// ---------------------------------------------------------------------------------------
// CREATE

#[derive(Debug, Clone, PartialEq)]
pub struct CreateTable {
    pub temp: bool,
    pub if_not_exists: bool,
    pub name: QualifiedName,
    pub body: CreateTableBody,
    /// The text SQLite stores in `sqlite_schema.sql`: `CREATE TABLE ` followed by the source
    /// from the (unqualified) table name to the end of the statement.
    pub schema_sql: String,
}

#[derive(Debug, Clone, PartialEq)]
pub enum CreateTableBody {
    Columns {
        columns: Vec<ColumnDef>,
        constraints: Vec<TableConstraint>,
        without_rowid: bool,
        strict: bool,
    },
    AsSelect(Box<Select>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct ColumnDef {
    pub name: String,
    /// The declared type as written, words separated by one space, e.g. `VARCHAR(10)`.
    pub type_name: Option<String>,
    pub constraints: Vec<NamedColumnConstraint>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NamedColumnConstraint {
    pub name: Option<String>,
    pub constraint: ColumnConstraint,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ColumnConstraint {
    PrimaryKey {
        desc: Option<bool>,
        conflict: Option<ConflictAction>,
        autoincrement: bool,
    },
    NotNull {
        conflict: Option<ConflictAction>,
    },
    /// `NULL` (a no-op SQLite accepts).
    Null {
        conflict: Option<ConflictAction>,
    },
    Unique {
        conflict: Option<ConflictAction>,
    },
    /// The expression and its source text (SQLite names an unnamed CHECK by that text).
    Check(Expr, String),
    /// `span` is the default as written (parentheses stripped), for PRAGMA table_info.
    Default {
        expr: Expr,
        span: String,
    },
    Collate(String),
    References(ForeignKeyClause),
    Generated {
        expr: Expr,
        stored: bool,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct ForeignKeyClause {
    pub table: String,
    pub columns: Vec<String>,
    /// `ON DELETE ...`, `ON UPDATE ...`, `MATCH x`, deferrability, kept as written words.
    pub actions: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NamedTableConstraint {
    pub name: Option<String>,
    pub constraint: TableConstraintKind,
}

pub type TableConstraint = NamedTableConstraint;

#[derive(Debug, Clone, PartialEq)]
pub enum TableConstraintKind {
    PrimaryKey {
        columns: Vec<IndexedColumn>,
        conflict: Option<ConflictAction>,
        autoincrement: bool,
    },
    Unique {
        columns: Vec<IndexedColumn>,
        conflict: Option<ConflictAction>,
    },
    /// The expression and its source text, as for a column CHECK.
    Check(Expr, String),
    ForeignKey {
        columns: Vec<String>,
        clause: ForeignKeyClause,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct IndexedColumn {
    pub expr: Expr,
    pub collation: Option<String>,
    pub desc: Option<bool>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CreateIndex {
    pub unique: bool,
    pub if_not_exists: bool,
    pub name: QualifiedName,
    pub table: String,
    pub columns: Vec<IndexedColumn>,
    pub where_: Option<Expr>,
    pub schema_sql: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CreateView {
    pub temp: bool,
    pub if_not_exists: bool,
    pub name: QualifiedName,
    pub columns: Vec<String>,
    pub select: Box<Select>,
    pub schema_sql: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TriggerTime {
    Before,
    After,
    InsteadOf,
}

#[derive(Debug, Clone, PartialEq)]
pub enum TriggerEvent {
    Delete,
    Insert,
    Update(Vec<String>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct CreateTrigger {
    pub temp: bool,
    pub if_not_exists: bool,
    pub name: QualifiedName,
    pub time: Option<TriggerTime>,
    pub event: TriggerEvent,
    pub table: String,
    /// The schema named in `ON schema.table`, if any.
    pub table_schema: Option<String>,
    pub for_each_row: bool,
    pub when: Option<Expr>,
    pub body: Vec<Stmt>,
    pub schema_sql: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CreateVirtualTable {
    pub if_not_exists: bool,
    pub name: QualifiedName,
    pub module: String,
    pub args: Vec<String>,
    pub schema_sql: String,
}

// ---------------------------------------------------------------------------------------
// Expressions

#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    Null,
    Integer(i64),
    /// A real literal; `text` is as written so it prints back unchanged.
    Float {
        value: f64,
        text: String,
    },
    String(String),
    Blob(Vec<u8>),
    CurrentTime,
    CurrentDate,
    CurrentTimestamp,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnaryOp {
    Neg,
    Plus,
    BitNot,
    Not,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryOp {
    Or,
    And,
    Eq,
    Ne,
    Is,
    IsNot,
    Lt,
    Le,
    Gt,
    Ge,
    BitAnd,
    BitOr,
    Shl,
    Shr,
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Concat,
    Arrow,
    Arrow2,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LikeOp {
    Like,
    Glob,
    Regexp,
    Match,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RaiseKind {
    Ignore,
    Rollback,
    Abort,
    Fail,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Literal(Literal),
    /// A bound parameter: `index` is 1-based (sqlite3_bind_* numbering); `name` as written.
    Param {
        index: usize,
        name: String,
    },
    /// `[schema.][table.]column`. `dq` marks a lone double-quoted name, which SQLite turns
    /// into a string literal when no column matches.
    Column {
        schema: Option<String>,
        table: Option<String>,
        name: String,
        dq: bool,
    },
    Unary(UnaryOp, Box<Expr>),
    Binary(Box<Expr>, BinaryOp, Box<Expr>),
    Like {
        lhs: Box<Expr>,
        not: bool,
        op: LikeOp,
        rhs: Box<Expr>,
        escape: Option<Box<Expr>>,
    },
    Between {
        expr: Box<Expr>,
        not: bool,
        low: Box<Expr>,
        high: Box<Expr>,
    },
    InList {
        expr: Box<Expr>,
        not: bool,
        list: Vec<Expr>,
    },
    InSelect {
        expr: Box<Expr>,
        not: bool,
        select: Box<Select>,
    },
    InTable {
        expr: Box<Expr>,
        not: bool,
        table: QualifiedName,
        args: Vec<Expr>,
    },
    /// `ISNULL` / `NOTNULL` / `NOT NULL` postfix; `not` for the latter two.
    IsNull {
        expr: Box<Expr>,
        not: bool,
    },
    Exists(Box<Select>),
    Subquery(Box<Select>),
    Case {
        base: Option<Box<Expr>>,
        whens: Vec<(Expr, Expr)>,
        else_: Option<Box<Expr>>,
    },
    Cast {
        expr: Box<Expr>,
        type_name: String,
    },
    Collate {
        expr: Box<Expr>,
        collation: String,
    },
    Function(Box<FunctionCall>),
    /// `(a, b, ...)` row value.
    Vector(Vec<Expr>),
    Raise {
        kind: RaiseKind,
        message: Option<Box<Expr>>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct FunctionCall {
    pub name: String,
    pub distinct: bool,
    pub args: FunctionArgs,
    /// Aggregate `ORDER BY` inside the parentheses (SQLite 3.44+).
    pub order_by: Vec<OrderingTerm>,
    pub filter: Option<Expr>,
    pub over: Option<Over>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum FunctionArgs {
    Star,
    List(Vec<Expr>),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Over {
    Name(String),
    Window(WindowDef),
}

#[derive(Debug, Clone, PartialEq)]
pub struct WindowDef {
    pub base: Option<String>,
    pub partition_by: Vec<Expr>,
    pub order_by: Vec<OrderingTerm>,
    pub frame: Option<FrameSpec>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FrameSpec {
    /// `RANGE`, `ROWS` or `GROUPS`.
    pub units: String,
    pub start: FrameBound,
    pub end: Option<FrameBound>,
    /// `NO OTHERS`, `CURRENT ROW`, `GROUP`, `TIES`.
    pub exclude: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum FrameBound {
    UnboundedPreceding,
    Preceding(Box<Expr>),
    CurrentRow,
    Following(Box<Expr>),
    UnboundedFollowing,
}

impl Expr {
    /// Calls `f` on each direct sub-expression (not those inside subqueries).
    pub fn for_each_child<'a>(&'a self, f: &mut dyn FnMut(&'a Expr)) {
        match self {
            Expr::Literal(_) | Expr::Param { .. } | Expr::Column { .. } => {}
            Expr::Exists(_) | Expr::Subquery(_) => {}
            Expr::Unary(_, e) | Expr::IsNull { expr: e, .. } => f(e),
            Expr::Cast { expr, .. } | Expr::Collate { expr, .. } => f(expr),
            Expr::Binary(l, _, r) => {
                f(l);
                f(r);
            }
            Expr::Like {
                lhs, rhs, escape, ..
            } => {
                f(lhs);
                f(rhs);
                if let Some(e) = escape {
                    f(e);
                }
            }
            Expr::Between {
                expr, low, high, ..
            } => {
                f(expr);
                f(low);
                f(high);
            }
            Expr::InList { expr, list, .. } => {
                f(expr);
                list.iter().for_each(|e| f(e));
            }
            Expr::InSelect { expr, .. } => f(expr),
            Expr::InTable { expr, args, .. } => {
                f(expr);
                args.iter().for_each(|e| f(e));
            }
            Expr::Case { base, whens, else_ } => {
                if let Some(b) = base {
                    f(b);
                }
                for (w, t) in whens {
                    f(w);
                    f(t);
                }
                if let Some(e) = else_ {
                    f(e);
                }
            }
            Expr::Function(fc) => {
                if let FunctionArgs::List(args) = &fc.args {
                    args.iter().for_each(|e| f(e));
                }
                for o in &fc.order_by {
                    f(&o.expr);
                }
                if let Some(e) = &fc.filter {
                    f(e);
                }
            }
            Expr::Vector(v) => v.iter().for_each(|e| f(e)),
            Expr::Raise { message, .. } => {
                if let Some(m) = message {
                    f(m);
                }
            }
        }
    }

    /// Height of the expression tree (a leaf is 1), computed without recursion so that it
    /// is safe on trees of any shape.
    pub fn height(&self) -> usize {
        let mut max = 0;
        let mut stack: Vec<(&Expr, usize)> = vec![(self, 1)];
        while let Some((e, d)) = stack.pop() {
            max = max.max(d);
            e.for_each_child(&mut |c| stack.push((c, d + 1)));
        }
        max
    }
}
