//! Expressions: precedence climbing over SQLite's operator table, operands, literals,
//! function calls, CASE and parameters (`?`, `?N`, `:name`).

use super::*;

impl<'a> Parser<'a> {
    pub fn expr_list(&mut self) -> PResult<Vec<Expr>> {
        // Room for a short VALUES row or argument list at once (grown from one, a row of
        // two was two allocations and a copy).
        let mut v = Vec::with_capacity(4);
        v.push(self.expr()?);
        while self.eat(&Tok::Comma) {
            v.push(self.expr()?);
        }
        Ok(v)
    }

    /// A complete expression; enforces SQLite's expression height limit.
    pub fn expr(&mut self) -> PResult<Expr> {
        let first_tok = self.pos;
        let e = self.expr_prec(P_OR)?;
        // Every node of a path from the root consumes at least one token of its own (an
        // operator, a keyword, a parenthesis, a leaf), and no token yields more than two
        // nodes, so an expression of few tokens cannot be too high: walking it only when it
        // is long keeps this check off short statements (it was ~850 instructions for
        // `a=1`) and stops nested calls from rewalking their subtrees.
        if self.pos - first_tok > MAX_EXPR_HEIGHT / 4 && e.height() > MAX_EXPR_HEIGHT {
            return perr(format!(
                "Expression tree is too large (maximum depth {MAX_EXPR_HEIGHT})"
            ));
        }
        Ok(e)
    }

    fn expr_prec(&mut self, min: u8) -> PResult<Expr> {
        self.enter()?;
        // Nesting (parentheses, subqueries, CASE, calls) recurses through here up to
        // MAX_DEPTH levels: continue on a heap segment when the caller's stack runs low.
        let r = crate::stack::guarded(|| self.expr_prec_inner(min));
        self.leave();
        r
    }

    fn expr_prec_inner(&mut self, min: u8) -> PResult<Expr> {
        let mut lhs = self.operand()?;
        // Each pass that does not stop wraps `lhs` in one more node, so a chain of more
        // passes than the height limit (`1+1+...`) is too high: stop before building it
        // (walking and dropping a tree thousands of nodes high recurses that deep).
        let mut passes = 0usize;
        loop {
            passes += 1;
            if passes > MAX_EXPR_HEIGHT {
                return perr(format!(
                    "Expression tree is too large (maximum depth {MAX_EXPR_HEIGHT})"
                ));
            }
            let tok = self.peek().clone();
            let (prec, op) = match &tok {
                Tok::Word(w) => {
                    let up = Upper::new(w);
                    match up.as_str() {
                        "OR" => (P_OR, None),
                        "AND" => (P_AND, None),
                        "IS" | "IN" | "LIKE" | "GLOB" | "REGEXP" | "MATCH" | "BETWEEN"
                        | "ISNULL" | "NOTNULL" => (P_EQ, None),
                        "NOT" => {
                            let next_ok = match self.peek_n(1) {
                                Tok::Word(n) => {
                                    ["IN", "LIKE", "GLOB", "REGEXP", "MATCH", "BETWEEN", "NULL"]
                                        .iter()
                                        .any(|k| k.eq_ignore_ascii_case(n))
                                }
                                _ => false,
                            };
                            if !next_ok {
                                break;
                            }
                            (P_EQ, None)
                        }
                        "COLLATE" => (P_COLLATE, None),
                        _ => break,
                    }
                }
                Tok::Eq | Tok::EqEq => (P_EQ, Some(BinaryOp::Eq)),
                Tok::Ne | Tok::LtGt => (P_EQ, Some(BinaryOp::Ne)),
                Tok::Lt => (P_CMP, Some(BinaryOp::Lt)),
                Tok::Le => (P_CMP, Some(BinaryOp::Le)),
                Tok::Gt => (P_CMP, Some(BinaryOp::Gt)),
                Tok::Ge => (P_CMP, Some(BinaryOp::Ge)),
                Tok::BitAnd => (P_BIT, Some(BinaryOp::BitAnd)),
                Tok::BitOr => (P_BIT, Some(BinaryOp::BitOr)),
                Tok::Shl => (P_BIT, Some(BinaryOp::Shl)),
                Tok::Shr => (P_BIT, Some(BinaryOp::Shr)),
                Tok::Plus => (P_ADD, Some(BinaryOp::Add)),
                Tok::Minus => (P_ADD, Some(BinaryOp::Sub)),
                Tok::Star => (P_MUL, Some(BinaryOp::Mul)),
                Tok::Slash => (P_MUL, Some(BinaryOp::Div)),
                Tok::Percent => (P_MUL, Some(BinaryOp::Rem)),
                Tok::Concat => (P_CONCAT, Some(BinaryOp::Concat)),
                Tok::Arrow => (P_CONCAT, Some(BinaryOp::Arrow)),
                Tok::Arrow2 => (P_CONCAT, Some(BinaryOp::Arrow2)),
                _ => break,
            };
            if prec < min {
                break;
            }
            if let Some(op) = op {
                self.advance();
                let rhs = self.expr_prec(prec + 1)?;
                lhs = Expr::Binary(Box::new(lhs), op, Box::new(rhs));
                continue;
            }
            let w = match tok {
                Tok::Word(w) => Upper::new(w),
                _ => break,
            };
            self.advance();
            lhs = match w.as_str() {
                "OR" => Expr::Binary(
                    Box::new(lhs),
                    BinaryOp::Or,
                    Box::new(self.expr_prec(P_OR + 1)?),
                ),
                "AND" => Expr::Binary(
                    Box::new(lhs),
                    BinaryOp::And,
                    Box::new(self.expr_prec(P_AND + 1)?),
                ),
                "COLLATE" => Expr::Collate {
                    expr: Box::new(lhs),
                    collation: self.name()?,
                },
                "ISNULL" => Expr::IsNull {
                    expr: Box::new(lhs),
                    not: false,
                },
                "NOTNULL" => Expr::IsNull {
                    expr: Box::new(lhs),
                    not: true,
                },
                "IS" => {
                    let mut not = self.eat_kw("NOT");
                    if self.eat_kw("DISTINCT") {
                        self.expect_kw("FROM")?;
                        not = !not;
                    }
                    let rhs = self.expr_prec(P_EQ + 1)?;
                    Expr::Binary(
                        Box::new(lhs),
                        if not { BinaryOp::IsNot } else { BinaryOp::Is },
                        Box::new(rhs),
                    )
                }
                "NOT" => {
                    if self.eat_kw("NULL") {
                        Expr::IsNull {
                            expr: Box::new(lhs),
                            not: true,
                        }
                    } else {
                        self.negatable_op(lhs, true)?
                    }
                }
                _ => {
                    // Put the keyword back for negatable_op, which reads it.
                    self.pos -= 1;
                    self.negatable_op(lhs, false)?
                }
            };
        }
        Ok(lhs)
    }

    /// `[NOT] IN ...`, `[NOT] LIKE ...`, `[NOT] BETWEEN ...` with the current token being the
    /// operator keyword.
    fn negatable_op(&mut self, lhs: Expr, not: bool) -> PResult<Expr> {
        let w = match self.next_tok().tok {
            Tok::Word(w) => Upper::new(w),
            _ => return self.syntax_error(),
        };
        let lhs = Box::new(lhs);
        match w.as_str() {
            "BETWEEN" => {
                let low = self.expr_prec(P_EQ + 1)?;
                self.expect_kw("AND")?;
                let high = self.expr_prec(P_EQ + 1)?;
                Ok(Expr::Between {
                    expr: lhs,
                    not,
                    low: Box::new(low),
                    high: Box::new(high),
                })
            }
            "IN" => {
                if self.eat(&Tok::LParen) {
                    if self.is_kw("SELECT") || self.is_kw("VALUES") || self.is_kw("WITH") {
                        let select = self.select()?;
                        self.expect(&Tok::RParen)?;
                        return Ok(Expr::InSelect {
                            expr: lhs,
                            not,
                            select: Box::new(select),
                        });
                    }
                    let list = if self.is(&Tok::RParen) {
                        Vec::new()
                    } else {
                        self.expr_list()?
                    };
                    self.expect(&Tok::RParen)?;
                    return Ok(Expr::InList {
                        expr: lhs,
                        not,
                        list,
                    });
                }
                let (table, _) = self.qualified_name()?;
                let args = if self.eat(&Tok::LParen) {
                    let a = if self.is(&Tok::RParen) {
                        Vec::new()
                    } else {
                        self.expr_list()?
                    };
                    self.expect(&Tok::RParen)?;
                    a
                } else {
                    Vec::new()
                };
                Ok(Expr::InTable {
                    expr: lhs,
                    not,
                    table,
                    args,
                })
            }
            "LIKE" | "GLOB" | "REGEXP" | "MATCH" => {
                let op = match w.as_str() {
                    "LIKE" => LikeOp::Like,
                    "GLOB" => LikeOp::Glob,
                    "REGEXP" => LikeOp::Regexp,
                    _ => LikeOp::Match,
                };
                let rhs = self.expr_prec(P_EQ + 1)?;
                let escape = if self.eat_kw("ESCAPE") {
                    Some(Box::new(self.expr_prec(P_BIT)?))
                } else {
                    None
                };
                Ok(Expr::Like {
                    lhs,
                    not,
                    op,
                    rhs: Box::new(rhs),
                    escape,
                })
            }
            _ => {
                self.pos -= 1;
                self.syntax_error()
            }
        }
    }

    /// Prefix operators, then a primary.
    fn operand(&mut self) -> PResult<Expr> {
        match self.peek() {
            Tok::Minus => {
                self.advance();
                // Fold `-<integer>` so that -9223372036854775808 is an integer, as in SQLite.
                if let Tok::Number(n) = self.peek().clone() {
                    if !matches!(self.peek_n(1), Tok::Word(w) if w.eq_ignore_ascii_case("COLLATE"))
                    {
                        if let Ok(Literal::Integer(i)) = number_literal(n, true) {
                            self.advance();
                            return Ok(Expr::Literal(Literal::Integer(i)));
                        }
                    }
                }
                let e = self.expr_prec(P_UNARY)?;
                Ok(Expr::Unary(UnaryOp::Neg, Box::new(e)))
            }
            Tok::Plus => {
                self.advance();
                let e = self.expr_prec(P_UNARY)?;
                Ok(Expr::Unary(UnaryOp::Plus, Box::new(e)))
            }
            Tok::BitNot => {
                self.advance();
                let e = self.expr_prec(P_UNARY)?;
                Ok(Expr::Unary(UnaryOp::BitNot, Box::new(e)))
            }
            Tok::Word(w) if w.eq_ignore_ascii_case("NOT") => {
                self.advance();
                let e = self.expr_prec(P_NOT)?;
                Ok(Expr::Unary(UnaryOp::Not, Box::new(e)))
            }
            _ => self.primary(),
        }
    }

    pub(super) fn primary(&mut self) -> PResult<Expr> {
        let tok = self.peek().clone();
        match tok {
            Tok::Number(n) => {
                self.advance();
                Ok(Expr::Literal(number_literal(n, false)?))
            }
            // A string before a dot is a name (SQLite's `nm ::= STRING`): `'t'.a`.
            Tok::Str(s) if *self.peek_n(1) == Tok::Dot => {
                let name = s.into_owned();
                if self.name_spans.is_some() {
                    self.note_name(&name);
                }
                self.advance();
                self.after_name(name, false)
            }
            Tok::Str(s) => {
                self.advance();
                Ok(Expr::Literal(Literal::String(s.into_owned())))
            }
            Tok::Blob(b) => {
                self.advance();
                Ok(Expr::Literal(Literal::Blob(b)))
            }
            Tok::Variable(v) => {
                self.advance();
                let index = self.param_index(v)?;
                Ok(Expr::Param {
                    index,
                    name: v.to_string(),
                })
            }
            Tok::LParen => {
                self.advance();
                if self.is_kw("SELECT") || self.is_kw("VALUES") || self.is_kw("WITH") {
                    let s = self.select()?;
                    self.expect(&Tok::RParen)?;
                    return Ok(Expr::Subquery(Box::new(s)));
                }
                let mut list = self.expr_list()?;
                self.expect(&Tok::RParen)?;
                if list.len() == 1 {
                    Ok(list.remove(0))
                } else {
                    Ok(Expr::Vector(list))
                }
            }
            Tok::QuotedId { name, dq } => {
                let name = name.into_owned();
                if self.name_spans.is_some() {
                    self.note_name(&name);
                }
                self.advance();
                self.after_name(name, dq)
            }
            Tok::Word(w) => {
                let up = Upper::new(w);
                match up.as_str() {
                    "NULL" => {
                        self.advance();
                        Ok(Expr::Literal(Literal::Null))
                    }
                    "CURRENT_TIME" | "CURRENT_DATE" | "CURRENT_TIMESTAMP" => {
                        self.advance();
                        Ok(Expr::Literal(match up.as_str() {
                            "CURRENT_TIME" => Literal::CurrentTime,
                            "CURRENT_DATE" => Literal::CurrentDate,
                            _ => Literal::CurrentTimestamp,
                        }))
                    }
                    "CAST" if *self.peek_n(1) == Tok::LParen => {
                        self.advance();
                        self.advance();
                        let e = self.expr()?;
                        self.expect_kw("AS")?;
                        let type_name = self.opt_type_name()?.unwrap_or_default();
                        self.expect(&Tok::RParen)?;
                        Ok(Expr::Cast {
                            expr: Box::new(e),
                            type_name,
                        })
                    }
                    "CASE" => self.case_expr(),
                    "EXISTS" => {
                        self.advance();
                        self.expect(&Tok::LParen)?;
                        let s = self.select()?;
                        self.expect(&Tok::RParen)?;
                        Ok(Expr::Exists(Box::new(s)))
                    }
                    "RAISE" if *self.peek_n(1) == Tok::LParen => {
                        self.advance();
                        self.advance();
                        let kind = if self.eat_kw("IGNORE") {
                            RaiseKind::Ignore
                        } else if self.eat_kw("ROLLBACK") {
                            RaiseKind::Rollback
                        } else if self.eat_kw("ABORT") {
                            RaiseKind::Abort
                        } else if self.eat_kw("FAIL") {
                            RaiseKind::Fail
                        } else {
                            return self.syntax_error();
                        };
                        let message = if kind != RaiseKind::Ignore {
                            self.expect(&Tok::Comma)?;
                            Some(Box::new(self.expr()?))
                        } else {
                            None
                        };
                        self.expect(&Tok::RParen)?;
                        Ok(Expr::Raise { kind, message })
                    }
                    _ if is_reserved(w) => self.syntax_error(),
                    _ => {
                        let name = w.to_string();
                        if self.name_spans.is_some() {
                            self.note_name(&name);
                        }
                        self.advance();
                        self.after_name(name, false)
                    }
                }
            }
            _ => self.syntax_error(),
        }
    }

    /// After an identifier in an expression: a function call, a qualified column, or a column.
    fn after_name(&mut self, name: String, dq: bool) -> PResult<Expr> {
        if self.is(&Tok::LParen) {
            self.advance();
            return self.function_call(name);
        }
        if self.eat(&Tok::Dot) {
            let second = self.name()?;
            if self.eat(&Tok::Dot) {
                let third = self.name()?;
                return Ok(Expr::Column {
                    schema: Some(name),
                    table: Some(second),
                    name: third,
                    dq: false,
                });
            }
            return Ok(Expr::Column {
                schema: None,
                table: Some(name),
                name: second,
                dq: false,
            });
        }
        Ok(Expr::Column {
            schema: None,
            table: None,
            name,
            dq,
        })
    }

    fn function_call(&mut self, name: String) -> PResult<Expr> {
        let mut distinct = false;
        let mut order_by = Vec::new();
        let args = if self.eat(&Tok::Star) {
            FunctionArgs::Star
        } else if self.is(&Tok::RParen) {
            FunctionArgs::List(Vec::new())
        } else {
            if self.eat_kw("DISTINCT") {
                distinct = true;
            } else {
                self.eat_kw("ALL");
            }
            let list = self.expr_list()?;
            order_by = self.opt_order_by()?;
            FunctionArgs::List(list)
        };
        self.expect(&Tok::RParen)?;
        let filter = if self.is_kw("FILTER") && *self.peek_n(1) == Tok::LParen {
            self.advance();
            self.advance();
            self.expect_kw("WHERE")?;
            let e = self.expr()?;
            self.expect(&Tok::RParen)?;
            Some(e)
        } else {
            None
        };
        let over = if self.is_kw("OVER")
            && matches!(
                self.peek_n(1),
                Tok::LParen | Tok::Word(_) | Tok::QuotedId { .. }
            ) {
            self.advance();
            if self.is(&Tok::LParen) {
                Some(Over::Window(self.window_def()?))
            } else {
                Some(Over::Name(self.name()?))
            }
        } else {
            None
        };
        Ok(Expr::Function(Box::new(FunctionCall {
            name,
            distinct,
            args,
            order_by,
            filter,
            over,
        })))
    }

    fn case_expr(&mut self) -> PResult<Expr> {
        self.expect_kw("CASE")?;
        let base = if self.is_kw("WHEN") {
            None
        } else {
            Some(Box::new(self.expr()?))
        };
        let mut whens = Vec::new();
        while self.eat_kw("WHEN") {
            let w = self.expr()?;
            self.expect_kw("THEN")?;
            let t = self.expr()?;
            whens.push((w, t));
        }
        if whens.is_empty() {
            return self.syntax_error();
        }
        let else_ = if self.eat_kw("ELSE") {
            Some(Box::new(self.expr()?))
        } else {
            None
        };
        self.expect_kw("END")?;
        Ok(Expr::Case { base, whens, else_ })
    }

    fn param_index(&mut self, v: &str) -> PResult<usize> {
        const MAX_VARIABLE_NUMBER: usize = 32766;
        self.param_refs += 1;
        if v == "?" {
            self.params.names.push(None);
            return Ok(self.params.names.len());
        }
        if let Some(num) = v.strip_prefix('?') {
            let n: usize = match num.parse() {
                Ok(n) if (1..=MAX_VARIABLE_NUMBER).contains(&n) => n,
                _ => {
                    return perr(format!(
                        "variable number must be between ?1 and ?{MAX_VARIABLE_NUMBER}"
                    ))
                }
            };
            if self.params.names.len() < n {
                self.params.names.resize(n, None);
            }
            if self.params.names[n - 1].is_none() {
                self.params.names[n - 1] = Some(v.to_string());
            }
            return Ok(n);
        }
        if let Some(i) = self
            .params
            .names
            .iter()
            .position(|x| x.as_deref() == Some(v))
        {
            return Ok(i + 1);
        }
        if self.params.names.len() >= MAX_VARIABLE_NUMBER {
            return perr("too many SQL variables");
        }
        self.params.names.push(Some(v.to_string()));
        Ok(self.params.names.len())
    }
}
