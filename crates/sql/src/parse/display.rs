//! `Display` for the AST: prints SQL that parses back to an equal tree.
//!
//! Invariant: `parse(x.to_string()) == x` up to spans and `schema_sql` (which record source
//! text). Binary and unary operands are always parenthesised when they are themselves
//! operators, so precedence never has to be reconstructed. Identifiers are double-quoted
//! whenever they are not plain words, and always when they collide with a keyword.

use super::ast::*;
use std::fmt::{self, Display, Formatter, Write};

/// Writes an identifier, quoting it when needed.
pub struct Ident<'a>(pub &'a str);

impl Display for Ident<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let s = self.0;
        let plain = !s.is_empty()
            && s.bytes()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
            && s.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
            && !is_keyword(s);
        if plain {
            f.write_str(s)
        } else {
            write!(f, "\"{}\"", s.replace('"', "\"\""))
        }
    }
}

fn is_keyword(s: &str) -> bool {
    const KW: &[&str] = &[
        "ABORT",
        "ACTION",
        "ADD",
        "AFTER",
        "ALL",
        "ALTER",
        "ALWAYS",
        "ANALYZE",
        "AND",
        "AS",
        "ASC",
        "ATTACH",
        "AUTOINCREMENT",
        "BEFORE",
        "BEGIN",
        "BETWEEN",
        "BY",
        "CASCADE",
        "CASE",
        "CAST",
        "CHECK",
        "COLLATE",
        "COLUMN",
        "COMMIT",
        "CONFLICT",
        "CONSTRAINT",
        "CREATE",
        "CROSS",
        "CURRENT",
        "CURRENT_DATE",
        "CURRENT_TIME",
        "CURRENT_TIMESTAMP",
        "DATABASE",
        "DEFAULT",
        "DEFERRABLE",
        "DEFERRED",
        "DELETE",
        "DESC",
        "DETACH",
        "DISTINCT",
        "DO",
        "DROP",
        "EACH",
        "ELSE",
        "END",
        "ESCAPE",
        "EXCEPT",
        "EXCLUDE",
        "EXCLUSIVE",
        "EXISTS",
        "EXPLAIN",
        "FAIL",
        "FILTER",
        "FIRST",
        "FOLLOWING",
        "FOR",
        "FOREIGN",
        "FROM",
        "FULL",
        "GENERATED",
        "GLOB",
        "GROUP",
        "GROUPS",
        "HAVING",
        "IF",
        "IGNORE",
        "IMMEDIATE",
        "IN",
        "INDEX",
        "INDEXED",
        "INITIALLY",
        "INNER",
        "INSERT",
        "INSTEAD",
        "INTERSECT",
        "INTO",
        "IS",
        "ISNULL",
        "JOIN",
        "KEY",
        "LAST",
        "LEFT",
        "LIKE",
        "LIMIT",
        "MATCH",
        "MATERIALIZED",
        "NATURAL",
        "NO",
        "NOT",
        "NOTHING",
        "NOTNULL",
        "NULL",
        "NULLS",
        "OF",
        "OFFSET",
        "ON",
        "OR",
        "ORDER",
        "OTHERS",
        "OUTER",
        "OVER",
        "PARTITION",
        "PLAN",
        "PRAGMA",
        "PRECEDING",
        "PRIMARY",
        "QUERY",
        "RAISE",
        "RANGE",
        "RECURSIVE",
        "REFERENCES",
        "REGEXP",
        "REINDEX",
        "RELEASE",
        "RENAME",
        "REPLACE",
        "RESTRICT",
        "RETURNING",
        "RIGHT",
        "ROLLBACK",
        "ROW",
        "ROWS",
        "SAVEPOINT",
        "SELECT",
        "SET",
        "TABLE",
        "TEMP",
        "TEMPORARY",
        "THEN",
        "TIES",
        "TO",
        "TRANSACTION",
        "TRIGGER",
        "UNBOUNDED",
        "UNION",
        "UNIQUE",
        "UPDATE",
        "USING",
        "VACUUM",
        "VALUES",
        "VIEW",
        "VIRTUAL",
        "WHEN",
        "WHERE",
        "WINDOW",
        "WITH",
        "WITHOUT",
    ];
    KW.iter().any(|k| k.eq_ignore_ascii_case(s))
}

/// Writes a string literal with `'` doubled.
pub fn quote_str(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

fn comma<T>(
    f: &mut Formatter<'_>,
    items: &[T],
    mut each: impl FnMut(&mut Formatter<'_>, &T) -> fmt::Result,
) -> fmt::Result {
    for (i, it) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        each(f, it)?;
    }
    Ok(())
}

impl Display for QualifiedName {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if let Some(s) = &self.schema {
            write!(f, "{}.", Ident(s))?;
        }
        write!(f, "{}", Ident(&self.name))
    }
}

impl Display for Literal {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Null => f.write_str("NULL"),
            Literal::Integer(i) => write!(f, "{i}"),
            Literal::Float { text, .. } => f.write_str(text),
            Literal::String(s) => f.write_str(&quote_str(s)),
            Literal::Blob(b) => {
                f.write_str("X'")?;
                for byte in b {
                    write!(f, "{byte:02X}")?;
                }
                f.write_str("'")
            }
            Literal::CurrentTime => f.write_str("CURRENT_TIME"),
            Literal::CurrentDate => f.write_str("CURRENT_DATE"),
            Literal::CurrentTimestamp => f.write_str("CURRENT_TIMESTAMP"),
        }
    }
}

impl BinaryOp {
    pub fn as_str(self) -> &'static str {
        match self {
            BinaryOp::Or => "OR",
            BinaryOp::And => "AND",
            BinaryOp::Eq => "=",
            BinaryOp::Ne => "<>",
            BinaryOp::Is => "IS",
            BinaryOp::IsNot => "IS NOT",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::BitAnd => "&",
            BinaryOp::BitOr => "|",
            BinaryOp::Shl => "<<",
            BinaryOp::Shr => ">>",
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Rem => "%",
            BinaryOp::Concat => "||",
            BinaryOp::Arrow => "->",
            BinaryOp::Arrow2 => "->>",
        }
    }
}

/// An operand, parenthesised unless it is atomic.
struct Operand<'a>(&'a Expr);

impl Display for Operand<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let atomic = matches!(
            self.0,
            Expr::Literal(_)
                | Expr::Param { .. }
                | Expr::Column { .. }
                | Expr::Function(_)
                | Expr::Subquery(_)
                | Expr::Exists(_)
                | Expr::Cast { .. }
                | Expr::Case { .. }
                | Expr::Vector(_)
                | Expr::Raise { .. }
        );
        // A negative number as an operand must be parenthesised too (`- -1` vs `--1`).
        let negative = matches!(self.0, Expr::Literal(Literal::Integer(i)) if *i < 0)
            || matches!(self.0, Expr::Literal(Literal::Float { value, .. }) if *value < 0.0);
        if atomic && !negative {
            write!(f, "{}", self.0)
        } else {
            write!(f, "({})", self.0)
        }
    }
}

impl Display for Expr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Literal(l) => write!(f, "{l}"),
            Expr::Param { name, .. } => f.write_str(name),
            Expr::Column {
                schema,
                table,
                name,
                dq,
            } => {
                if let Some(s) = schema {
                    write!(f, "{}.", Ident(s))?;
                }
                if let Some(t) = table {
                    write!(f, "{}.", Ident(t))?;
                }
                if *dq {
                    write!(f, "\"{}\"", name.replace('"', "\"\""))
                } else {
                    write!(f, "{}", Ident(name))
                }
            }
            Expr::Unary(op, e) => {
                let s = match op {
                    UnaryOp::Neg => "-",
                    UnaryOp::Plus => "+",
                    UnaryOp::BitNot => "~",
                    UnaryOp::Not => "NOT ",
                };
                // `-(5)`, not `-5`: the parser folds `-5` into one literal, which would not
                // round-trip to the same tree.
                if matches!(
                    **e,
                    Expr::Literal(Literal::Integer(_) | Literal::Float { .. })
                ) {
                    write!(f, "{s}({e})")
                } else {
                    write!(f, "{s}{}", Operand(e))
                }
            }
            Expr::Binary(l, op, r) => write!(f, "{} {} {}", Operand(l), op.as_str(), Operand(r)),
            Expr::Like {
                lhs,
                not,
                op,
                rhs,
                escape,
            } => {
                let o = match op {
                    LikeOp::Like => "LIKE",
                    LikeOp::Glob => "GLOB",
                    LikeOp::Regexp => "REGEXP",
                    LikeOp::Match => "MATCH",
                };
                write!(
                    f,
                    "{} {}{o} {}",
                    Operand(lhs),
                    if *not { "NOT " } else { "" },
                    Operand(rhs)
                )?;
                if let Some(e) = escape {
                    write!(f, " ESCAPE {}", Operand(e))?;
                }
                Ok(())
            }
            Expr::Between {
                expr,
                not,
                low,
                high,
            } => {
                write!(
                    f,
                    "{} {}BETWEEN {} AND {}",
                    Operand(expr),
                    if *not { "NOT " } else { "" },
                    Operand(low),
                    Operand(high)
                )
            }
            Expr::InList { expr, not, list } => {
                write!(
                    f,
                    "{} {}IN (",
                    Operand(expr),
                    if *not { "NOT " } else { "" }
                )?;
                comma(f, list, |f, e| write!(f, "{e}"))?;
                f.write_str(")")
            }
            Expr::InSelect { expr, not, select } => {
                write!(
                    f,
                    "{} {}IN ({select})",
                    Operand(expr),
                    if *not { "NOT " } else { "" }
                )
            }
            Expr::InTable {
                expr,
                not,
                table,
                args,
            } => {
                write!(
                    f,
                    "{} {}IN {table}",
                    Operand(expr),
                    if *not { "NOT " } else { "" }
                )?;
                if !args.is_empty() {
                    f.write_str("(")?;
                    comma(f, args, |f, e| write!(f, "{e}"))?;
                    f.write_str(")")?;
                }
                Ok(())
            }
            Expr::IsNull { expr, not } => write!(
                f,
                "{} {}",
                Operand(expr),
                if *not { "NOTNULL" } else { "ISNULL" }
            ),
            Expr::Exists(s) => write!(f, "EXISTS ({s})"),
            Expr::Subquery(s) => write!(f, "({s})"),
            Expr::Case { base, whens, else_ } => {
                f.write_str("CASE")?;
                if let Some(b) = base {
                    write!(f, " {b}")?;
                }
                for (w, t) in whens {
                    write!(f, " WHEN {w} THEN {t}")?;
                }
                if let Some(e) = else_ {
                    write!(f, " ELSE {e}")?;
                }
                f.write_str(" END")
            }
            Expr::Cast { expr, type_name } => write!(f, "CAST({expr} AS {type_name})"),
            Expr::Collate { expr, collation } => {
                write!(f, "{} COLLATE {}", Operand(expr), Ident(collation))
            }
            Expr::Function(fc) => write!(f, "{fc}"),
            Expr::Vector(v) => {
                f.write_str("(")?;
                comma(f, v, |f, e| write!(f, "{e}"))?;
                f.write_str(")")
            }
            Expr::Raise { kind, message } => {
                let k = match kind {
                    RaiseKind::Ignore => "IGNORE",
                    RaiseKind::Rollback => "ROLLBACK",
                    RaiseKind::Abort => "ABORT",
                    RaiseKind::Fail => "FAIL",
                };
                match message {
                    Some(m) => write!(f, "RAISE({k}, {m})"),
                    None => write!(f, "RAISE({k})"),
                }
            }
        }
    }
}

impl Display for FunctionCall {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}(", Ident(&self.name))?;
        match &self.args {
            FunctionArgs::Star => f.write_str("*")?,
            FunctionArgs::List(args) => {
                if self.distinct {
                    f.write_str("DISTINCT ")?;
                }
                comma(f, args, |f, e| write!(f, "{e}"))?;
                if !self.order_by.is_empty() {
                    f.write_str(" ORDER BY ")?;
                    comma(f, &self.order_by, |f, o| write!(f, "{o}"))?;
                }
            }
        }
        f.write_str(")")?;
        if let Some(e) = &self.filter {
            write!(f, " FILTER (WHERE {e})")?;
        }
        match &self.over {
            Some(Over::Name(n)) => write!(f, " OVER {}", Ident(n))?,
            Some(Over::Window(w)) => write!(f, " OVER {w}")?,
            None => {}
        }
        Ok(())
    }
}

impl Display for WindowDef {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = Vec::new();
        if let Some(b) = &self.base {
            parts.push(Ident(b).to_string());
        }
        if !self.partition_by.is_empty() {
            let list: Vec<String> = self.partition_by.iter().map(|e| e.to_string()).collect();
            parts.push(format!("PARTITION BY {}", list.join(", ")));
        }
        if !self.order_by.is_empty() {
            let list: Vec<String> = self.order_by.iter().map(|e| e.to_string()).collect();
            parts.push(format!("ORDER BY {}", list.join(", ")));
        }
        if let Some(fr) = &self.frame {
            let mut s = fr.units.clone();
            match &fr.end {
                Some(end) => write!(s, " BETWEEN {} AND {}", fr.start, end)?,
                None => write!(s, " {}", fr.start)?,
            }
            if let Some(x) = &fr.exclude {
                write!(s, " EXCLUDE {x}")?;
            }
            parts.push(s);
        }
        write!(f, "({})", parts.join(" "))
    }
}

impl Display for FrameBound {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            FrameBound::UnboundedPreceding => f.write_str("UNBOUNDED PRECEDING"),
            FrameBound::Preceding(e) => write!(f, "{e} PRECEDING"),
            FrameBound::CurrentRow => f.write_str("CURRENT ROW"),
            FrameBound::Following(e) => write!(f, "{e} FOLLOWING"),
            FrameBound::UnboundedFollowing => f.write_str("UNBOUNDED FOLLOWING"),
        }
    }
}

impl Display for OrderingTerm {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.expr)?;
        if self.desc {
            f.write_str(" DESC")?;
        }
        match self.nulls_first {
            Some(true) => f.write_str(" NULLS FIRST"),
            Some(false) => f.write_str(" NULLS LAST"),
            None => Ok(()),
        }
    }
}

impl Display for With {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("WITH ")?;
        if self.recursive {
            f.write_str("RECURSIVE ")?;
        }
        comma(f, &self.ctes, |f, c| {
            write!(f, "{}", Ident(&c.name))?;
            if !c.columns.is_empty() {
                f.write_str("(")?;
                comma(f, &c.columns, |f, n| write!(f, "{}", Ident(n)))?;
                f.write_str(")")?;
            }
            f.write_str(" AS ")?;
            match c.materialized {
                Some(true) => f.write_str("MATERIALIZED ")?,
                Some(false) => f.write_str("NOT MATERIALIZED ")?,
                None => {}
            }
            write!(f, "({})", c.select)
        })?;
        f.write_str(" ")
    }
}

impl Display for Select {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if let Some(w) = &self.with {
            write!(f, "{w}")?;
        }
        write!(f, "{}", self.body.first)?;
        for (op, core) in &self.body.compounds {
            write!(f, " {} {core}", op.name())?;
        }
        write_order_limit(f, &self.order_by, &self.limit)
    }
}

fn write_order_limit(
    f: &mut Formatter<'_>,
    order_by: &[OrderingTerm],
    limit: &Option<Limit>,
) -> fmt::Result {
    if !order_by.is_empty() {
        f.write_str(" ORDER BY ")?;
        comma(f, order_by, |f, o| write!(f, "{o}"))?;
    }
    if let Some(l) = limit {
        write!(f, " LIMIT {}", l.limit)?;
        if let Some(o) = &l.offset {
            write!(f, " OFFSET {o}")?;
        }
    }
    Ok(())
}

impl Display for SelectCore {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            SelectCore::Values(rows) => {
                f.write_str("VALUES ")?;
                comma(f, rows, |f, row| {
                    f.write_str("(")?;
                    comma(f, row, |f, e| write!(f, "{e}"))?;
                    f.write_str(")")
                })
            }
            SelectCore::Select(c) => {
                f.write_str("SELECT ")?;
                if c.distinct {
                    f.write_str("DISTINCT ")?;
                }
                comma(f, &c.columns, |f, rc| write!(f, "{rc}"))?;
                if let Some(from) = &c.from {
                    write!(f, " FROM {from}")?;
                }
                if let Some(w) = &c.where_ {
                    write!(f, " WHERE {w}")?;
                }
                if !c.group_by.is_empty() {
                    f.write_str(" GROUP BY ")?;
                    comma(f, &c.group_by, |f, e| write!(f, "{e}"))?;
                }
                if let Some(h) = &c.having {
                    write!(f, " HAVING {h}")?;
                }
                if !c.windows.is_empty() {
                    f.write_str(" WINDOW ")?;
                    comma(f, &c.windows, |f, (n, w)| write!(f, "{} AS {w}", Ident(n)))?;
                }
                Ok(())
            }
        }
    }
}

impl Display for ResultColumn {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            ResultColumn::Star => f.write_str("*"),
            ResultColumn::TableStar(t) => write!(f, "{}.*", Ident(t)),
            ResultColumn::Expr { expr, alias, .. } => {
                write!(f, "{expr}")?;
                if let Some(a) = alias {
                    write!(f, " AS {}", Ident(a))?;
                }
                Ok(())
            }
        }
    }
}

fn write_alias(f: &mut Formatter<'_>, alias: &Option<String>) -> fmt::Result {
    if let Some(a) = alias {
        write!(f, " AS {}", Ident(a))?;
    }
    Ok(())
}

impl Display for TableOrSubquery {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            TableOrSubquery::Table {
                name,
                alias,
                indexed,
            } => {
                write!(f, "{name}")?;
                write_alias(f, alias)?;
                match indexed {
                    Some(Indexed::By(i)) => write!(f, " INDEXED BY {}", Ident(i)),
                    Some(Indexed::NotIndexed) => f.write_str(" NOT INDEXED"),
                    None => Ok(()),
                }
            }
            TableOrSubquery::TableFunction { name, args, alias } => {
                write!(f, "{name}(")?;
                comma(f, args, |f, e| write!(f, "{e}"))?;
                f.write_str(")")?;
                write_alias(f, alias)
            }
            TableOrSubquery::Subquery { select, alias } => {
                write!(f, "({select})")?;
                write_alias(f, alias)
            }
            TableOrSubquery::Nested { from, alias } => {
                write!(f, "({from})")?;
                write_alias(f, alias)
            }
        }
    }
}

impl Display for FromClause {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.first)?;
        for j in &self.joins {
            if j.op.comma {
                write!(f, ", {}", j.table)?;
            } else {
                f.write_str(" ")?;
                if j.op.natural {
                    f.write_str("NATURAL ")?;
                }
                let k = match j.op.kind {
                    JoinKind::Inner => "INNER ",
                    JoinKind::Plain => "",
                    JoinKind::Cross => "CROSS ",
                    JoinKind::Left => "LEFT ",
                    JoinKind::Right => "RIGHT ",
                    JoinKind::Full => "FULL ",
                };
                write!(f, "{k}JOIN {}", j.table)?;
            }
            match &j.constraint {
                Some(JoinConstraint::On(e)) => write!(f, " ON {e}")?,
                Some(JoinConstraint::Using(cols)) => {
                    f.write_str(" USING (")?;
                    comma(f, cols, |f, c| write!(f, "{}", Ident(c)))?;
                    f.write_str(")")?;
                }
                None => {}
            }
        }
        Ok(())
    }
}

impl Display for ConflictAction {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ConflictAction::Rollback => "ROLLBACK",
            ConflictAction::Abort => "ABORT",
            ConflictAction::Fail => "FAIL",
            ConflictAction::Ignore => "IGNORE",
            ConflictAction::Replace => "REPLACE",
        })
    }
}

fn write_assignments(f: &mut Formatter<'_>, sets: &[Assignment]) -> fmt::Result {
    comma(f, sets, |f, a| {
        if a.columns.len() == 1 {
            write!(f, "{} = {}", Ident(&a.columns[0]), a.expr)
        } else {
            f.write_str("(")?;
            comma(f, &a.columns, |f, c| write!(f, "{}", Ident(c)))?;
            write!(f, ") = {}", a.expr)
        }
    })
}

fn write_returning(f: &mut Formatter<'_>, r: &[ResultColumn]) -> fmt::Result {
    if !r.is_empty() {
        f.write_str(" RETURNING ")?;
        comma(f, r, |f, c| write!(f, "{c}"))?;
    }
    Ok(())
}

impl Display for IndexedColumn {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.expr)?;
        if let Some(c) = &self.collation {
            write!(f, " COLLATE {}", Ident(c))?;
        }
        match self.desc {
            Some(true) => f.write_str(" DESC"),
            Some(false) => f.write_str(" ASC"),
            None => Ok(()),
        }
    }
}

impl Display for Insert {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if let Some(w) = &self.with {
            write!(f, "{w}")?;
        }
        if self.replace_keyword {
            f.write_str("REPLACE")?;
        } else {
            f.write_str("INSERT")?;
            if let Some(c) = self.or_conflict {
                write!(f, " OR {c}")?;
            }
        }
        write!(f, " INTO {}", self.table)?;
        write_alias(f, &self.alias)?;
        if !self.columns.is_empty() {
            f.write_str(" (")?;
            comma(f, &self.columns, |f, c| write!(f, "{}", Ident(c)))?;
            f.write_str(")")?;
        }
        match &self.source {
            InsertSource::DefaultValues => f.write_str(" DEFAULT VALUES")?,
            InsertSource::Select(s) => write!(f, " {s}")?,
        }
        for u in &self.upsert {
            f.write_str(" ON CONFLICT")?;
            if let Some(t) = &u.target {
                f.write_str(" (")?;
                comma(f, &t.columns, |f, c| write!(f, "{c}"))?;
                f.write_str(")")?;
                if let Some(w) = &t.where_ {
                    write!(f, " WHERE {w}")?;
                }
            }
            match &u.action {
                UpsertAction::Nothing => f.write_str(" DO NOTHING")?,
                UpsertAction::Update { sets, where_ } => {
                    f.write_str(" DO UPDATE SET ")?;
                    write_assignments(f, sets)?;
                    if let Some(w) = where_ {
                        write!(f, " WHERE {w}")?;
                    }
                }
            }
        }
        write_returning(f, &self.returning)
    }
}

impl Display for Update {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if let Some(w) = &self.with {
            write!(f, "{w}")?;
        }
        f.write_str("UPDATE ")?;
        if let Some(c) = self.or_conflict {
            write!(f, "OR {c} ")?;
        }
        write!(f, "{}", self.table)?;
        write_alias(f, &self.alias)?;
        match &self.indexed {
            Some(Indexed::By(i)) => write!(f, " INDEXED BY {}", Ident(i))?,
            Some(Indexed::NotIndexed) => f.write_str(" NOT INDEXED")?,
            None => {}
        }
        f.write_str(" SET ")?;
        write_assignments(f, &self.sets)?;
        if let Some(from) = &self.from {
            write!(f, " FROM {from}")?;
        }
        if let Some(w) = &self.where_ {
            write!(f, " WHERE {w}")?;
        }
        write_returning(f, &self.returning)?;
        write_order_limit(f, &self.order_by, &self.limit)
    }
}

impl Display for Delete {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if let Some(w) = &self.with {
            write!(f, "{w}")?;
        }
        write!(f, "DELETE FROM {}", self.table)?;
        write_alias(f, &self.alias)?;
        match &self.indexed {
            Some(Indexed::By(i)) => write!(f, " INDEXED BY {}", Ident(i))?,
            Some(Indexed::NotIndexed) => f.write_str(" NOT INDEXED")?,
            None => {}
        }
        if let Some(w) = &self.where_ {
            write!(f, " WHERE {w}")?;
        }
        write_returning(f, &self.returning)?;
        write_order_limit(f, &self.order_by, &self.limit)
    }
}

fn write_conflict(f: &mut Formatter<'_>, c: &Option<ConflictAction>) -> fmt::Result {
    if let Some(c) = c {
        write!(f, " ON CONFLICT {c}")?;
    }
    Ok(())
}

impl Display for ColumnDef {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}", Ident(&self.name))?;
        if let Some(t) = &self.type_name {
            write!(f, " {t}")?;
        }
        for c in &self.constraints {
            if let Some(n) = &c.name {
                write!(f, " CONSTRAINT {}", Ident(n))?;
            }
            match &c.constraint {
                ColumnConstraint::PrimaryKey {
                    desc,
                    conflict,
                    autoincrement,
                } => {
                    f.write_str(" PRIMARY KEY")?;
                    match desc {
                        Some(true) => f.write_str(" DESC")?,
                        Some(false) => f.write_str(" ASC")?,
                        None => {}
                    }
                    write_conflict(f, conflict)?;
                    if *autoincrement {
                        f.write_str(" AUTOINCREMENT")?;
                    }
                }
                ColumnConstraint::NotNull { conflict } => {
                    f.write_str(" NOT NULL")?;
                    write_conflict(f, conflict)?;
                }
                ColumnConstraint::Null { conflict } => {
                    f.write_str(" NULL")?;
                    write_conflict(f, conflict)?;
                }
                ColumnConstraint::Unique { conflict } => {
                    f.write_str(" UNIQUE")?;
                    write_conflict(f, conflict)?;
                }
                ColumnConstraint::Check(e, _) => write!(f, " CHECK ({e})")?,
                ColumnConstraint::Default { expr, .. } => write!(f, " DEFAULT ({expr})")?,
                ColumnConstraint::Collate(c) => write!(f, " COLLATE {}", Ident(c))?,
                ColumnConstraint::References(fk) => write!(f, " REFERENCES {fk}")?,
                ColumnConstraint::Generated { expr, stored } => write!(
                    f,
                    " GENERATED ALWAYS AS ({expr}) {}",
                    if *stored { "STORED" } else { "VIRTUAL" }
                )?,
            }
        }
        Ok(())
    }
}

impl Display for ForeignKeyClause {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}", Ident(&self.table))?;
        if !self.columns.is_empty() {
            f.write_str("(")?;
            comma(f, &self.columns, |f, c| write!(f, "{}", Ident(c)))?;
            f.write_str(")")?;
        }
        for a in &self.actions {
            write!(f, " {a}")?;
        }
        Ok(())
    }
}

impl Display for TableConstraint {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if let Some(n) = &self.name {
            write!(f, "CONSTRAINT {} ", Ident(n))?;
        }
        match &self.constraint {
            TableConstraintKind::PrimaryKey {
                columns,
                conflict,
                autoincrement,
            } => {
                f.write_str("PRIMARY KEY (")?;
                comma(f, columns, |f, c| write!(f, "{c}"))?;
                f.write_str(")")?;
                if *autoincrement {
                    f.write_str(" AUTOINCREMENT")?;
                }
                write_conflict(f, conflict)
            }
            TableConstraintKind::Unique { columns, conflict } => {
                f.write_str("UNIQUE (")?;
                comma(f, columns, |f, c| write!(f, "{c}"))?;
                f.write_str(")")?;
                write_conflict(f, conflict)
            }
            TableConstraintKind::Check(e, _) => write!(f, "CHECK ({e})"),
            TableConstraintKind::ForeignKey { columns, clause } => {
                f.write_str("FOREIGN KEY (")?;
                comma(f, columns, |f, c| write!(f, "{}", Ident(c)))?;
                write!(f, ") REFERENCES {clause}")
            }
        }
    }
}

impl Display for Stmt {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Stmt::Select(s) => write!(f, "{s}"),
            Stmt::Insert(i) => write!(f, "{i}"),
            Stmt::Update(u) => write!(f, "{u}"),
            Stmt::Delete(d) => write!(f, "{d}"),
            Stmt::CreateTable(c) => {
                f.write_str("CREATE ")?;
                if c.temp {
                    f.write_str("TEMP ")?;
                }
                f.write_str("TABLE ")?;
                if c.if_not_exists {
                    f.write_str("IF NOT EXISTS ")?;
                }
                write!(f, "{}", c.name)?;
                match &c.body {
                    CreateTableBody::AsSelect(s) => write!(f, " AS {s}"),
                    CreateTableBody::Columns {
                        columns,
                        constraints,
                        without_rowid,
                        strict,
                    } => {
                        f.write_str("(")?;
                        comma(f, columns, |f, c| write!(f, "{c}"))?;
                        for tc in constraints {
                            write!(f, ", {tc}")?;
                        }
                        f.write_str(")")?;
                        let mut opts = Vec::new();
                        if *without_rowid {
                            opts.push("WITHOUT ROWID");
                        }
                        if *strict {
                            opts.push("STRICT");
                        }
                        if !opts.is_empty() {
                            write!(f, " {}", opts.join(", "))?;
                        }
                        Ok(())
                    }
                }
            }
            Stmt::CreateIndex(c) => {
                f.write_str(if c.unique {
                    "CREATE UNIQUE INDEX "
                } else {
                    "CREATE INDEX "
                })?;
                if c.if_not_exists {
                    f.write_str("IF NOT EXISTS ")?;
                }
                write!(f, "{} ON {}(", c.name, Ident(&c.table))?;
                comma(f, &c.columns, |f, col| write!(f, "{col}"))?;
                f.write_str(")")?;
                if let Some(w) = &c.where_ {
                    write!(f, " WHERE {w}")?;
                }
                Ok(())
            }
            Stmt::CreateView(v) => {
                f.write_str("CREATE ")?;
                if v.temp {
                    f.write_str("TEMP ")?;
                }
                f.write_str("VIEW ")?;
                if v.if_not_exists {
                    f.write_str("IF NOT EXISTS ")?;
                }
                write!(f, "{}", v.name)?;
                if !v.columns.is_empty() {
                    f.write_str("(")?;
                    comma(f, &v.columns, |f, c| write!(f, "{}", Ident(c)))?;
                    f.write_str(")")?;
                }
                write!(f, " AS {}", v.select)
            }
            Stmt::CreateTrigger(t) => {
                f.write_str("CREATE ")?;
                if t.temp {
                    f.write_str("TEMP ")?;
                }
                f.write_str("TRIGGER ")?;
                if t.if_not_exists {
                    f.write_str("IF NOT EXISTS ")?;
                }
                write!(f, "{}", t.name)?;
                match t.time {
                    Some(TriggerTime::Before) => f.write_str(" BEFORE")?,
                    Some(TriggerTime::After) => f.write_str(" AFTER")?,
                    Some(TriggerTime::InsteadOf) => f.write_str(" INSTEAD OF")?,
                    None => {}
                }
                match &t.event {
                    TriggerEvent::Delete => f.write_str(" DELETE")?,
                    TriggerEvent::Insert => f.write_str(" INSERT")?,
                    TriggerEvent::Update(cols) => {
                        f.write_str(" UPDATE")?;
                        if !cols.is_empty() {
                            f.write_str(" OF ")?;
                            comma(f, cols, |f, c| write!(f, "{}", Ident(c)))?;
                        }
                    }
                }
                write!(f, " ON {}", Ident(&t.table))?;
                if t.for_each_row {
                    f.write_str(" FOR EACH ROW")?;
                }
                if let Some(w) = &t.when {
                    write!(f, " WHEN {w}")?;
                }
                f.write_str(" BEGIN ")?;
                for s in &t.body {
                    write!(f, "{s}; ")?;
                }
                f.write_str("END")
            }
            Stmt::CreateVirtualTable(v) => {
                f.write_str("CREATE VIRTUAL TABLE ")?;
                if v.if_not_exists {
                    f.write_str("IF NOT EXISTS ")?;
                }
                write!(f, "{} USING {}", v.name, Ident(&v.module))?;
                if !v.args.is_empty() {
                    write!(f, "({})", v.args.join(", "))?;
                }
                Ok(())
            }
            Stmt::Drop {
                kind,
                if_exists,
                name,
            } => {
                let k = match kind {
                    ObjectKind::Table => "TABLE",
                    ObjectKind::Index => "INDEX",
                    ObjectKind::View => "VIEW",
                    ObjectKind::Trigger => "TRIGGER",
                };
                write!(
                    f,
                    "DROP {k} {}{name}",
                    if *if_exists { "IF EXISTS " } else { "" }
                )
            }
            Stmt::AlterTable { table, action } => {
                write!(f, "ALTER TABLE {table} ")?;
                match action {
                    AlterAction::RenameTable(n) => write!(f, "RENAME TO {}", Ident(n)),
                    AlterAction::RenameColumn { old, new, .. } => {
                        write!(f, "RENAME COLUMN {} TO {}", Ident(old), Ident(new))
                    }
                    AlterAction::AddColumn { def, .. } => write!(f, "ADD COLUMN {def}"),
                    AlterAction::DropColumn(c) => write!(f, "DROP COLUMN {}", Ident(c)),
                }
            }
            Stmt::Begin { mode } => {
                f.write_str("BEGIN")?;
                match mode {
                    Some(TxnMode::Deferred) => f.write_str(" DEFERRED"),
                    Some(TxnMode::Immediate) => f.write_str(" IMMEDIATE"),
                    Some(TxnMode::Exclusive) => f.write_str(" EXCLUSIVE"),
                    Some(TxnMode::Concurrent) => f.write_str(" CONCURRENT"),
                    None => Ok(()),
                }
            }
            Stmt::Commit => f.write_str("COMMIT"),
            Stmt::Rollback { savepoint } => match savepoint {
                Some(s) => write!(f, "ROLLBACK TO SAVEPOINT {}", Ident(s)),
                None => f.write_str("ROLLBACK"),
            },
            Stmt::Savepoint(s) => write!(f, "SAVEPOINT {}", Ident(s)),
            Stmt::Release(s) => write!(f, "RELEASE SAVEPOINT {}", Ident(s)),
            Stmt::Pragma { name, value } => {
                write!(f, "PRAGMA {name}")?;
                match value {
                    Some(PragmaValue::Assign(e)) => write!(f, " = {e}"),
                    Some(PragmaValue::Call(e)) => write!(f, "({e})"),
                    None => Ok(()),
                }
            }
            Stmt::Explain { query_plan, stmt } => {
                write!(
                    f,
                    "EXPLAIN {}{stmt}",
                    if *query_plan { "QUERY PLAN " } else { "" }
                )
            }
            Stmt::Reindex(t) => match t {
                Some(t) => write!(f, "REINDEX {t}"),
                None => f.write_str("REINDEX"),
            },
            Stmt::Analyze(t) => match t {
                Some(t) => write!(f, "ANALYZE {t}"),
                None => f.write_str("ANALYZE"),
            },
            Stmt::Vacuum { schema, into } => {
                f.write_str("VACUUM")?;
                if let Some(s) = schema {
                    write!(f, " {}", Ident(s))?;
                }
                if let Some(i) = into {
                    write!(f, " INTO {i}")?;
                }
                Ok(())
            }
            Stmt::Attach { file, schema, key } => {
                write!(f, "ATTACH DATABASE {file} AS {schema}")?;
                if let Some(k) = key {
                    write!(f, " KEY {k}")?;
                }
                Ok(())
            }
            Stmt::Detach(e) => write!(f, "DETACH DATABASE {e}"),
        }
    }
}
