//! CREATE / DROP / ALTER statements: tables, columns and their constraints, indexes,
//! views, triggers and virtual tables.

use super::*;

impl<'a> Parser<'a> {
    fn opt_if_not_exists(&mut self) -> PResult<bool> {
        if self.is_kw("IF") && self.is_kw_at(1, "NOT") {
            self.advance();
            self.advance();
            self.expect_kw("EXISTS")?;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    pub(super) fn create(&mut self) -> PResult<Stmt> {
        self.expect_kw("CREATE")?;
        let temp = self.eat_kw("TEMP") || self.eat_kw("TEMPORARY");
        if self.eat_kw("TABLE") {
            return self.create_table(temp);
        }
        if !temp && self.eat_kw("UNIQUE") {
            self.expect_kw("INDEX")?;
            return self.create_index(true);
        }
        if !temp && self.eat_kw("INDEX") {
            return self.create_index(false);
        }
        if self.eat_kw("VIEW") {
            let if_not_exists = self.opt_if_not_exists()?;
            let (name, name_start) = self.qualified_name()?;
            let columns = if self.is(&Tok::LParen) {
                self.name_list_paren()?
            } else {
                Vec::new()
            };
            self.expect_kw("AS")?;
            let refs_before = self.param_refs;
            let select = self.select()?;
            if self.param_refs != refs_before {
                return perr("parameters are not allowed in views");
            }
            let schema_sql = format!("CREATE VIEW {}", self.text(name_start, self.last_end));
            return Ok(Stmt::CreateView(Box::new(CreateView {
                temp,
                if_not_exists,
                name,
                columns,
                select: Box::new(select),
                schema_sql,
            })));
        }
        if self.eat_kw("TRIGGER") {
            return self.create_trigger(temp);
        }
        if !temp && self.eat_kw("VIRTUAL") {
            self.expect_kw("TABLE")?;
            let if_not_exists = self.opt_if_not_exists()?;
            let (name, name_start) = self.qualified_name()?;
            self.expect_kw("USING")?;
            let module = self.name()?;
            let mut args = Vec::new();
            if self.eat(&Tok::LParen) {
                let mut depth = 0usize;
                let mut arg_start = self.cur_start();
                loop {
                    match self.peek().clone() {
                        Tok::Eof => return self.syntax_error(),
                        Tok::LParen => depth += 1,
                        Tok::RParen if depth == 0 => {
                            let s = self.cur_start();
                            let a = self.text(arg_start, s).trim().to_string();
                            if !a.is_empty() {
                                args.push(a);
                            }
                            self.advance();
                            break;
                        }
                        Tok::RParen => depth -= 1,
                        Tok::Comma if depth == 0 => {
                            let s = self.cur_start();
                            args.push(self.text(arg_start, s).trim().to_string());
                            self.advance();
                            arg_start = self.cur_start();
                            continue;
                        }
                        _ => {}
                    }
                    self.advance();
                }
            }
            let schema_sql = format!(
                "CREATE VIRTUAL TABLE {}",
                self.text(name_start, self.last_end)
            );
            return Ok(Stmt::CreateVirtualTable(Box::new(CreateVirtualTable {
                if_not_exists,
                name,
                module,
                args,
                schema_sql,
            })));
        }
        self.syntax_error()
    }

    fn create_table(&mut self, temp: bool) -> PResult<Stmt> {
        let if_not_exists = self.opt_if_not_exists()?;
        let (name, name_start) = self.qualified_name()?;
        if self.eat_kw("AS") {
            let select = self.select()?;
            let schema_sql = format!("CREATE TABLE {}", self.text(name_start, self.last_end));
            return Ok(Stmt::CreateTable(Box::new(CreateTable {
                temp,
                if_not_exists,
                name,
                body: CreateTableBody::AsSelect(Box::new(select)),
                schema_sql,
            })));
        }
        self.expect(&Tok::LParen)?;
        let mut columns = Vec::new();
        let mut constraints = Vec::new();
        loop {
            if self.is_table_constraint_start() {
                // SQLite's grammar needs at least one column before table constraints.
                if columns.is_empty() {
                    return self.syntax_error();
                }
                break;
            }
            columns.push(self.column_def()?);
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        if !self.is(&Tok::RParen) {
            loop {
                constraints.push(self.table_constraint()?);
                if self.eat(&Tok::Comma) {
                    continue;
                }
                if self.is(&Tok::RParen) {
                    break;
                }
            }
        }
        self.expect(&Tok::RParen)?;
        let mut without_rowid = false;
        let mut strict = false;
        loop {
            if self.is_kw("WITHOUT") {
                self.advance();
                match self.peek().clone() {
                    Tok::Word(w) if w.eq_ignore_ascii_case("ROWID") => {
                        self.advance();
                        without_rowid = true;
                    }
                    Tok::Word(w) => {
                        self.advance();
                        return perr(format!("unknown table option: {w}"));
                    }
                    _ => return self.syntax_error(),
                }
            } else if self.is_kw("STRICT") {
                self.advance();
                strict = true;
            } else if let Tok::Word(w) = self.peek().clone() {
                if is_reserved(w) {
                    return self.syntax_error();
                }
                self.advance();
                return perr(format!("unknown table option: {w}"));
            } else {
                break;
            }
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        let schema_sql = format!("CREATE TABLE {}", self.text(name_start, self.last_end));
        Ok(Stmt::CreateTable(Box::new(CreateTable {
            temp,
            if_not_exists,
            name,
            body: CreateTableBody::Columns {
                columns,
                constraints,
                without_rowid,
                strict,
            },
            schema_sql,
        })))
    }

    fn is_table_constraint_start(&mut self) -> bool {
        ["CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK", "FOREIGN"]
            .iter()
            .any(|k| self.is_kw(k))
    }

    fn column_def(&mut self) -> PResult<ColumnDef> {
        let name = self.name()?;
        let type_name = self.opt_type_name()?;
        let mut constraints = Vec::new();
        loop {
            let cname = if self.eat_kw("CONSTRAINT") {
                Some(self.name()?)
            } else {
                None
            };
            let c = if self.is_kw("PRIMARY") {
                self.advance();
                self.expect_kw("KEY")?;
                let desc = if self.eat_kw("DESC") {
                    Some(true)
                } else if self.eat_kw("ASC") {
                    Some(false)
                } else {
                    None
                };
                let conflict = self.opt_on_conflict()?;
                let autoincrement = self.eat_kw("AUTOINCREMENT");
                ColumnConstraint::PrimaryKey {
                    desc,
                    conflict,
                    autoincrement,
                }
            } else if self.is_kw("NOT") {
                self.advance();
                self.expect_kw("NULL")?;
                ColumnConstraint::NotNull {
                    conflict: self.opt_on_conflict()?,
                }
            } else if self.eat_kw("NULL") {
                ColumnConstraint::Null {
                    conflict: self.opt_on_conflict()?,
                }
            } else if self.eat_kw("UNIQUE") {
                ColumnConstraint::Unique {
                    conflict: self.opt_on_conflict()?,
                }
            } else if self.eat_kw("CHECK") {
                self.expect(&Tok::LParen)?;
                let start = self.cur_start();
                let e = self.expr()?;
                let span = self.text(start, self.last_end).trim().to_string();
                self.expect(&Tok::RParen)?;
                ColumnConstraint::Check(e, span)
            } else if self.eat_kw("DEFAULT") {
                self.default_value()?
            } else if self.eat_kw("COLLATE") {
                ColumnConstraint::Collate(self.name()?)
            } else if self.eat_kw("REFERENCES") {
                ColumnConstraint::References(self.foreign_key_clause()?)
            } else if (self.is_kw("GENERATED") && self.is_kw_at(1, "ALWAYS")) || self.is_kw("AS") {
                if self.eat_kw("GENERATED") {
                    self.expect_kw("ALWAYS")?;
                }
                self.expect_kw("AS")?;
                self.expect(&Tok::LParen)?;
                let expr = self.expr()?;
                self.expect(&Tok::RParen)?;
                let stored = if self.eat_kw("STORED") {
                    true
                } else {
                    self.eat_kw("VIRTUAL");
                    false
                };
                ColumnConstraint::Generated { expr, stored }
            } else if cname.is_some() {
                return self.syntax_error();
            } else {
                break;
            };
            constraints.push(NamedColumnConstraint {
                name: cname,
                constraint: c,
            });
        }
        Ok(ColumnDef {
            name,
            type_name,
            constraints,
        })
    }

    /// A DEFAULT's literal after its sign: negated when the sign was `-`.
    fn signed_term(&mut self, neg: bool) -> PResult<Expr> {
        let t = self.primary()?;
        Ok(if neg {
            Expr::Unary(UnaryOp::Neg, Box::new(t))
        } else {
            t
        })
    }

    fn default_value(&mut self) -> PResult<ColumnConstraint> {
        match self.peek().clone() {
            Tok::LParen => {
                self.advance();
                let start = self.cur_start();
                let expr = self.expr()?;
                let span = self.text(start, self.last_end);
                self.expect(&Tok::RParen)?;
                Ok(ColumnConstraint::Default { expr, span })
            }
            Tok::Plus | Tok::Minus | Tok::Number(_) => {
                let start = self.cur_start();
                let neg = self.is(&Tok::Minus);
                if matches!(self.peek(), Tok::Plus | Tok::Minus) {
                    self.advance();
                }
                let expr = match self.peek().clone() {
                    Tok::Number(n) => {
                        self.advance();
                        Expr::Literal(number_literal(n, neg)?)
                    }
                    // After a sign SQLite's grammar takes only a literal `term`.
                    Tok::Str(_) | Tok::Blob(_) => self.signed_term(neg)?,
                    Tok::Word(w)
                        if matches!(
                            Upper::new(&w).as_str(),
                            "NULL" | "CURRENT_TIME" | "CURRENT_DATE" | "CURRENT_TIMESTAMP"
                        ) =>
                    {
                        self.signed_term(neg)?
                    }
                    _ => return self.syntax_error(),
                };
                Ok(ColumnConstraint::Default {
                    expr,
                    span: self.text(start, self.last_end),
                })
            }
            Tok::Str(_) | Tok::Blob(_) => {
                let start = self.cur_start();
                let expr = self.primary()?;
                Ok(ColumnConstraint::Default {
                    expr,
                    span: self.text(start, self.last_end),
                })
            }
            Tok::Word(w) => {
                let start = self.cur_start();
                let up = Upper::new(w);
                let expr = match up.as_str() {
                    "NULL" => Expr::Literal(Literal::Null),
                    "CURRENT_TIME" => Expr::Literal(Literal::CurrentTime),
                    "CURRENT_DATE" => Expr::Literal(Literal::CurrentDate),
                    "CURRENT_TIMESTAMP" => Expr::Literal(Literal::CurrentTimestamp),
                    // `DEFAULT TRUE`/`FALSE` are the integers; any other bare word is text.
                    "TRUE" => Expr::Literal(Literal::Integer(1)),
                    "FALSE" => Expr::Literal(Literal::Integer(0)),
                    _ if is_reserved(w) => return self.syntax_error(),
                    _ => Expr::Literal(Literal::String(w.to_string())),
                };
                self.advance();
                Ok(ColumnConstraint::Default {
                    expr,
                    span: self.text(start, self.last_end),
                })
            }
            Tok::QuotedId { name, .. } => {
                let start = self.cur_start();
                self.advance();
                Ok(ColumnConstraint::Default {
                    expr: Expr::Literal(Literal::String(name.into_owned())),
                    span: self.text(start, self.last_end),
                })
            }
            _ => self.syntax_error(),
        }
    }

    fn opt_on_conflict(&mut self) -> PResult<Option<ConflictAction>> {
        if self.is_kw("ON") && self.is_kw_at(1, "CONFLICT") {
            self.advance();
            self.advance();
            Ok(Some(self.conflict_action()?))
        } else {
            Ok(None)
        }
    }

    /// A type name: one or more words, then an optional `(n)` or `(n, m)`. Returns the text
    /// as written (SQLite keeps the declared type verbatim).
    pub(super) fn opt_type_name(&mut self) -> PResult<Option<String>> {
        let start = self.cur_start();
        let mut any = false;
        loop {
            let is_type_word = match self.peek() {
                Tok::Word(w) => !is_reserved(w),
                Tok::Str(_) | Tok::QuotedId { .. } => true,
                _ => false,
            };
            if !is_type_word {
                break;
            }
            if self.is_kw("GENERATED") && self.is_kw_at(1, "ALWAYS") {
                break;
            }
            self.advance();
            any = true;
        }
        if !any {
            return Ok(None);
        }
        if self.eat(&Tok::LParen) {
            self.signed_number()?;
            if self.eat(&Tok::Comma) {
                self.signed_number()?;
            }
            self.expect(&Tok::RParen)?;
        }
        Ok(Some(self.text(start, self.last_end)))
    }

    fn foreign_key_clause(&mut self) -> PResult<ForeignKeyClause> {
        let table = self.name()?;
        let columns = if self.is(&Tok::LParen) {
            self.name_list_paren()?
        } else {
            Vec::new()
        };
        let mut actions = Vec::new();
        loop {
            let start = self.cur_start();
            if self.is_kw("ON") && (self.is_kw_at(1, "DELETE") || self.is_kw_at(1, "UPDATE")) {
                self.advance();
                self.advance();
                if self.eat_kw("SET") {
                    if !self.eat_kw("NULL") {
                        self.expect_kw("DEFAULT")?;
                    }
                } else if self.eat_kw("NO") {
                    self.expect_kw("ACTION")?;
                } else if !self.eat_kw("CASCADE") {
                    self.expect_kw("RESTRICT")?;
                }
            } else if self.eat_kw("MATCH") {
                self.name()?;
            } else if self.is_kw("DEFERRABLE")
                || (self.is_kw("NOT") && self.is_kw_at(1, "DEFERRABLE"))
            {
                self.eat_kw("NOT");
                self.advance();
                if self.eat_kw("INITIALLY") && !self.eat_kw("DEFERRED") {
                    self.expect_kw("IMMEDIATE")?;
                }
            } else {
                break;
            }
            actions.push(self.text(start, self.last_end));
        }
        Ok(ForeignKeyClause {
            table,
            columns,
            actions,
        })
    }

    fn table_constraint(&mut self) -> PResult<TableConstraint> {
        let name = if self.eat_kw("CONSTRAINT") {
            Some(self.name()?)
        } else {
            None
        };
        let constraint = if self.eat_kw("PRIMARY") {
            self.expect_kw("KEY")?;
            self.expect(&Tok::LParen)?;
            let columns = self.indexed_columns_tail()?;
            let autoincrement = self.eat_kw("AUTOINCREMENT");
            let conflict = self.opt_on_conflict()?;
            TableConstraintKind::PrimaryKey {
                columns,
                conflict,
                autoincrement,
            }
        } else if self.eat_kw("UNIQUE") {
            self.expect(&Tok::LParen)?;
            let columns = self.indexed_columns_tail()?;
            TableConstraintKind::Unique {
                columns,
                conflict: self.opt_on_conflict()?,
            }
        } else if self.eat_kw("CHECK") {
            self.expect(&Tok::LParen)?;
            let start = self.cur_start();
            let e = self.expr()?;
            let span = self.text(start, self.last_end).trim().to_string();
            self.expect(&Tok::RParen)?;
            TableConstraintKind::Check(e, span)
        } else if self.eat_kw("FOREIGN") {
            self.expect_kw("KEY")?;
            let columns = self.name_list_paren()?;
            self.expect_kw("REFERENCES")?;
            TableConstraintKind::ForeignKey {
                columns,
                clause: self.foreign_key_clause()?,
            }
        } else {
            return self.syntax_error();
        };
        Ok(NamedTableConstraint { name, constraint })
    }

    /// Indexed columns after the opening parenthesis, through the closing one.
    pub(super) fn indexed_columns_tail(&mut self) -> PResult<Vec<IndexedColumn>> {
        let mut v = Vec::new();
        loop {
            let mut expr = self.expr()?;
            let mut collation = None;
            if let Expr::Collate {
                expr: inner,
                collation: c,
            } = expr
            {
                collation = Some(c);
                expr = *inner;
            }
            let desc = if self.eat_kw("DESC") {
                Some(true)
            } else if self.eat_kw("ASC") {
                Some(false)
            } else {
                None
            };
            v.push(IndexedColumn {
                expr,
                collation,
                desc,
            });
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        self.expect(&Tok::RParen)?;
        Ok(v)
    }

    fn create_index(&mut self, unique: bool) -> PResult<Stmt> {
        let if_not_exists = self.opt_if_not_exists()?;
        let (name, name_start) = self.qualified_name()?;
        self.expect_kw("ON")?;
        let table = self.name()?;
        self.expect(&Tok::LParen)?;
        let columns = self.indexed_columns_tail()?;
        let where_ = if self.eat_kw("WHERE") {
            Some(self.expr()?)
        } else {
            None
        };
        let prefix = if unique {
            "CREATE UNIQUE INDEX"
        } else {
            "CREATE INDEX"
        };
        let schema_sql = format!("{prefix} {}", self.text(name_start, self.last_end));
        Ok(Stmt::CreateIndex(Box::new(CreateIndex {
            unique,
            if_not_exists,
            name,
            table,
            columns,
            where_,
            schema_sql,
        })))
    }

    fn create_trigger(&mut self, temp: bool) -> PResult<Stmt> {
        let if_not_exists = self.opt_if_not_exists()?;
        let (name, name_start) = self.qualified_name()?;
        let time = if self.eat_kw("BEFORE") {
            Some(TriggerTime::Before)
        } else if self.eat_kw("AFTER") {
            Some(TriggerTime::After)
        } else if self.eat_kw("INSTEAD") {
            self.expect_kw("OF")?;
            Some(TriggerTime::InsteadOf)
        } else {
            None
        };
        let event = if self.eat_kw("DELETE") {
            TriggerEvent::Delete
        } else if self.eat_kw("INSERT") {
            TriggerEvent::Insert
        } else if self.eat_kw("UPDATE") {
            let mut cols = Vec::new();
            if self.eat_kw("OF") {
                cols.push(self.name()?);
                while self.eat(&Tok::Comma) {
                    cols.push(self.name()?);
                }
            }
            TriggerEvent::Update(cols)
        } else {
            return self.syntax_error();
        };
        self.expect_kw("ON")?;
        let (table, table_schema) = {
            let (q, _) = self.qualified_name()?;
            (q.name, q.schema)
        };
        let for_each_row = if self.eat_kw("FOR") {
            self.expect_kw("EACH")?;
            self.expect_kw("ROW")?;
            true
        } else {
            false
        };
        let when = if self.eat_kw("WHEN") {
            Some(self.expr()?)
        } else {
            None
        };
        self.expect_kw("BEGIN")?;
        let mut body = Vec::new();
        self.in_trigger = true;
        loop {
            if self.is_kw("END") {
                break;
            }
            let s = if self.is_kw("WITH") {
                let with = self.with_clause()?;
                // Only a SELECT takes a WITH clause in a trigger (parse.y `trigger_cmd`).
                if !self.is_kw("SELECT") && !self.is_kw("VALUES") {
                    return self.syntax_error();
                }
                self.dml_after_with(Some(with))?
            } else if self.is_kw("SELECT") || self.is_kw("VALUES") {
                Stmt::Select(Box::new(self.select()?))
            } else if self.is_kw("INSERT") || self.is_kw("REPLACE") {
                Stmt::Insert(Box::new(self.insert(None)?))
            } else if self.is_kw("UPDATE") {
                Stmt::Update(Box::new(self.update(None)?))
            } else if self.is_kw("DELETE") {
                Stmt::Delete(Box::new(self.delete(None)?))
            } else {
                return self.syntax_error();
            };
            body.push(s);
            self.expect(&Tok::Semi)?;
        }
        self.in_trigger = false;
        if body.is_empty() {
            return self.syntax_error();
        }
        self.expect_kw("END")?;
        let schema_sql = format!("CREATE TRIGGER {}", self.text(name_start, self.last_end));
        Ok(Stmt::CreateTrigger(Box::new(CreateTrigger {
            temp,
            if_not_exists,
            name,
            time,
            event,
            table,
            table_schema,
            for_each_row,
            when,
            body,
            schema_sql,
        })))
    }

    pub(super) fn drop(&mut self) -> PResult<Stmt> {
        self.expect_kw("DROP")?;
        let kind = if self.eat_kw("TABLE") {
            ObjectKind::Table
        } else if self.eat_kw("INDEX") {
            ObjectKind::Index
        } else if self.eat_kw("VIEW") {
            ObjectKind::View
        } else if self.eat_kw("TRIGGER") {
            ObjectKind::Trigger
        } else {
            return self.syntax_error();
        };
        let if_exists = if self.is_kw("IF") && self.is_kw_at(1, "EXISTS") {
            self.advance();
            self.advance();
            true
        } else {
            false
        };
        let (name, _) = self.qualified_name()?;
        Ok(Stmt::Drop {
            kind,
            if_exists,
            name,
        })
    }

    pub(super) fn alter(&mut self) -> PResult<Stmt> {
        self.expect_kw("ALTER")?;
        self.expect_kw("TABLE")?;
        let (table, _) = self.qualified_name()?;
        let action = if self.eat_kw("RENAME") {
            if self.eat_kw("TO") {
                AlterAction::RenameTable(self.name()?)
            } else {
                self.eat_kw("COLUMN");
                let old = self.name()?;
                self.expect_kw("TO")?;
                let new_quoted = matches!(self.peek(), Tok::QuotedId { .. } | Tok::Str(_));
                let new = self.name()?;
                AlterAction::RenameColumn {
                    old,
                    new,
                    new_quoted,
                }
            }
        } else if self.eat_kw("ADD") {
            self.eat_kw("COLUMN");
            {
                let start = self.cur_start();
                let def = self.column_def()?;
                AlterAction::AddColumn {
                    def,
                    text: self.text(start, self.last_end),
                }
            }
        } else if self.eat_kw("DROP") {
            self.eat_kw("COLUMN");
            AlterAction::DropColumn(self.name()?)
        } else {
            return self.syntax_error();
        };
        Ok(Stmt::AlterTable { table, action })
    }
}
