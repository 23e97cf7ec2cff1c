//! Expression binding: AST `Expr` → `Bound` (a `CExpr` with its affinity and collation),
//! including column resolution, function and aggregate calls, and window calls.

use super::*;

impl<'s> Binder<'s> {
    /// Binds an expression in the current top frame.
    pub fn bind_expr(&mut self, e: &Expr) -> Result<CExpr> {
        Ok(self.expr(e)?.e)
    }

    /// Binds one expression node (recursing into its operands). Trees are up to SQLite's
    /// height limit (1000) deep: each level continues on a heap stack segment when the
    /// caller's stack runs low (`crate::stack`).
    pub fn expr(&mut self, e: &Expr) -> Result<Bound> {
        crate::stack::guarded(|| self.expr_node(e))
    }

    /// The terms of a comparison operand: a row value's (a vector of two or more, or a
    /// subquery of two or more columns), else the operand itself as the one term.
    fn row_terms(&mut self, e: &Expr) -> Result<Vec<Bound>> {
        match e {
            Expr::Vector(v) if v.len() > 1 => v.iter().map(|x| self.expr(x)).collect(),
            Expr::Subquery(s) => self.subquery_terms(s),
            _ => Ok(vec![self.expr(e)?]),
        }
    }

    /// A subquery as an operand: one scalar term, or one term per column of its first row
    /// (a row value), each with its column's affinity and collation.
    fn subquery_terms(&mut self, s: &ast::Select) -> Result<Vec<Bound>> {
        let sub = self.subplan(s)?;
        if sub.plan.columns.len() == 1 {
            let aff = sub.plan.columns[0].aff;
            return Ok(vec![Bound {
                e: CExpr::Scalar(Rc::new(sub)),
                aff,
                coll: None,
                col: None,
            }]);
        }
        let terms: Vec<(Option<Affinity>, Option<(Collation, bool)>)> = sub
            .plan
            .columns
            .iter()
            .map(|c| (c.aff, c.has_coll.then_some((c.coll, c.explicit_coll))))
            .collect();
        let sub = Rc::new(sub);
        Ok(terms
            .into_iter()
            .enumerate()
            .map(|(idx, (aff, coll))| Bound {
                e: CExpr::Field {
                    sub: sub.clone(),
                    idx,
                },
                aff,
                coll,
                col: None,
            })
            .collect())
    }

    fn expr_node(&mut self, e: &Expr) -> Result<Bound> {
        match e {
            // CURRENT_TIME and the like read the clock when the statement runs (a kept plan
            // runs again later): calls of SQLite's current_time() etc.
            Expr::Literal(
                l @ (Literal::CurrentTime | Literal::CurrentDate | Literal::CurrentTimestamp),
            ) => {
                let name = match l {
                    Literal::CurrentTime => "current_time",
                    Literal::CurrentDate => "current_date",
                    _ => "current_timestamp",
                };
                let def = crate::func::lookup(name, 0)?;
                Ok(Bound::plain(CExpr::Func {
                    def: FnRef(def),
                    args: Vec::new(),
                    coll: Collation::Binary,
                }))
            }
            Expr::Literal(l) => Ok(Bound::plain(CExpr::Lit(literal_value(l)))),
            Expr::Param { index, .. } => Ok(Bound::plain(CExpr::Param(*index))),
            Expr::Column {
                schema,
                table,
                name,
                dq,
            } => self.column(schema.as_deref(), table.as_deref(), name, *dq),
            // `-(9223372036854775808)`: parentheses make no node in SQLite, whose minus reads
            // the integer token itself (codeInteger) and gives the smallest integer.
            Expr::Unary(UnaryOp::Neg, inner)
                if matches!(&**inner, Expr::Literal(Literal::Float { text, .. })
                    if text.bytes().all(|b| b.is_ascii_digit())
                        && text.parse::<u128>() == Ok(1 << 63)) =>
            {
                Ok(Bound::plain(CExpr::Lit(Value::Integer(i64::MIN))))
            }
            Expr::Unary(op, inner) => {
                let b = self.expr(inner)?;
                // Unary plus keeps the operand's collation (sqlite3ExprCollSeq looks through
                // it) but not its affinity (sqlite3ExprAffinity does not): `+col` compares as
                // an expression, datatype3.html 4.2.
                if *op == UnaryOp::Plus {
                    return Ok(Bound {
                        e: CExpr::Unary(*op, Box::new(b.e)),
                        aff: None,
                        coll: b.coll,
                        col: None,
                    });
                }
                Ok(Bound {
                    coll: explicit(&[&b]),
                    ..Bound::plain(CExpr::Unary(*op, Box::new(b.e)))
                })
            }
            Expr::Binary(l, op @ (BinaryOp::Is | BinaryOp::IsNot), r)
                if is_true_false_keyword(r) && self.expr(r).is_ok_and(|b| b.col.is_none()) =>
            {
                self.truth_test(l, *op == BinaryOp::Is, r)
            }
            Expr::Binary(l, op, r) => {
                let is_cmp = matches!(
                    op,
                    BinaryOp::Eq
                        | BinaryOp::Ne
                        | BinaryOp::Lt
                        | BinaryOp::Le
                        | BinaryOp::Gt
                        | BinaryOp::Ge
                        | BinaryOp::Is
                        | BinaryOp::IsNot
                );
                // `x IS NULL` is SQLite's ISNULL on x, not a comparison of row values.
                let is_null_test = matches!(op, BinaryOp::Is | BinaryOp::IsNot)
                    && matches!(&**r, Expr::Literal(Literal::Null));
                let (lb, rb) = if is_cmp && !is_null_test {
                    let mut lt = self.row_terms(l)?;
                    let mut rt = self.row_terms(r)?;
                    if lt.len() != rt.len() {
                        return err("row value misused");
                    }
                    if lt.len() > 1 {
                        return Ok(Bound::plain(row_cmp(*op, lt, rt)));
                    }
                    (lt.remove(0), rt.remove(0))
                } else {
                    (self.expr(l)?, self.expr(r)?)
                };
                if matches!(op, BinaryOp::Arrow | BinaryOp::Arrow2) {
                    // JSON operators are the functions `->` and `->>` (json1).
                    let def = func::lookup(op.as_str(), 2)?;
                    return Ok(Bound::plain(CExpr::Func {
                        def: FnRef(def),
                        args: vec![lb.e, rb.e],
                        coll: Collation::Binary,
                    }));
                }
                let coll = pick_collation(&lb, &rb);
                Ok(Bound {
                    coll: explicit(&[&lb, &rb]),
                    ..Bound::plain(CExpr::Binary {
                        op: *op,
                        l: Box::new(lb.e),
                        r: Box::new(rb.e),
                        coll,
                        laff: lb.aff,
                        raff: rb.aff,
                    })
                })
            }
            Expr::Like {
                lhs,
                not,
                op,
                rhs,
                escape,
            } => {
                if *op == LikeOp::Regexp {
                    // `x REGEXP y` is the function regexp(y, x), which SQLite looks up
                    // before it resolves the operands: none is built in, an application
                    // may define one (`Connection::create_function`).
                    let def = func::lookup("regexp", 2)?;
                    let x = self.expr(lhs)?.e;
                    let y = self.expr(rhs)?.e;
                    let call = CExpr::Func {
                        def: FnRef(def),
                        args: vec![y, x],
                        coll: Collation::Binary,
                    };
                    return Ok(Bound::plain(match *not {
                        true => CExpr::Unary(UnaryOp::Not, Box::new(call)),
                        false => call,
                    }));
                }
                let l = self.expr(lhs)?.e;
                let r = self.expr(rhs)?.e;
                let esc = match escape {
                    Some(x) => Some(Box::new(self.expr(x)?.e)),
                    None => None,
                };
                Ok(Bound::plain(CExpr::Like {
                    op: *op,
                    not: *not,
                    l: Box::new(l),
                    r: Box::new(r),
                    esc,
                }))
            }
            Expr::Between {
                expr,
                not,
                low,
                high,
            } if [expr, low, high]
                .iter()
                .any(|x| matches!(&***x, Expr::Vector(v) if v.len() > 1)) =>
            {
                // Row values: SQLite codes `x BETWEEN lo AND hi` as `x >= lo AND x <= hi`.
                let both = Expr::Binary(
                    Box::new(Expr::Binary(expr.clone(), BinaryOp::Ge, low.clone())),
                    BinaryOp::And,
                    Box::new(Expr::Binary(expr.clone(), BinaryOp::Le, high.clone())),
                );
                if *not {
                    self.expr(&Expr::Unary(UnaryOp::Not, Box::new(both)))
                } else {
                    self.expr(&both)
                }
            }
            Expr::Between {
                expr,
                not,
                low,
                high,
            } => {
                let eb = self.expr(expr)?;
                let lo = self.expr(low)?;
                let hi = self.expr(high)?;
                let coll = pick_collation(&eb, &lo);
                let hicoll = pick_collation(&eb, &hi);
                Ok(Bound::plain(CExpr::Between {
                    e: Box::new(eb.e),
                    not: *not,
                    lo: Box::new(lo.e),
                    hi: Box::new(hi.e),
                    coll,
                    hicoll,
                    eaff: eb.aff,
                    loaff: lo.aff,
                    hiaff: hi.aff,
                }))
            }
            Expr::InList { expr, not, list } if matches!(&**expr, Expr::Vector(v) if v.len() > 1) =>
            {
                // A row value IN a list: the list is a VALUES of row values (SQLite's parser
                // makes it one, sqlite3ExprListToValues).
                let Expr::Vector(v) = &**expr else {
                    unreachable!()
                };
                let mut rows = Vec::with_capacity(list.len());
                for x in list {
                    match x {
                        Expr::Vector(terms) if terms.len() == v.len() => rows.push(terms.clone()),
                        _ => {
                            let n = match x {
                                Expr::Vector(terms) => terms.len(),
                                _ => 1,
                            };
                            return err(format!(
                                "IN(...) element has {n} term{} - expected {}",
                                if n == 1 { "" } else { "s" },
                                v.len()
                            ));
                        }
                    }
                }
                // Each term compares under the affinity and collation SQLite derives from
                // the last row (the head of the compound its parser builds, whose result
                // list exprINAffinity and the IN's key collations read).
                let mut terms = Vec::with_capacity(v.len());
                for (x, y) in v.iter().zip(rows.last().into_iter().flatten()) {
                    let (xb, yb) = (self.expr(x)?, self.expr(y)?);
                    terms.push((
                        pick_collation(&xb, &yb),
                        comparison_affinity(xb.aff, yb.aff),
                    ));
                }
                let values = ast::Select {
                    with: None,
                    body: ast::SelectBody {
                        first: ast::SelectCore::Values(rows),
                        compounds: Vec::new(),
                    },
                    order_by: Vec::new(),
                    limit: None,
                };
                let mut b = self.expr(&Expr::InSelect {
                    expr: expr.clone(),
                    not: *not,
                    select: Box::new(values),
                })?;
                if let CExpr::InSelect {
                    coll,
                    eaff,
                    terms: t,
                    ..
                } = &mut b.e
                {
                    (*coll, *eaff) = terms[0];
                    *t = terms;
                }
                Ok(b)
            }
            Expr::InList { expr, not, list } => {
                let eb = self.expr(expr)?;
                let mut items = Vec::new();
                let mut affs = Vec::new();
                let mut single_explicit = None;
                for x in list {
                    let b = self.expr(x)?;
                    // `x IN (c)` with one constant c is SQLite's `x = +c` (parse.y), where
                    // an explicit COLLATE on c counts as on either side of `=`.
                    if list.len() == 1 && parsed_constant(x) {
                        single_explicit = explicit(&[&b]);
                    }
                    affs.push(b.aff);
                    items.push(b.e);
                }
                let coll = explicit(&[&eb])
                    .or(single_explicit)
                    .or(eb.coll)
                    .map(|c| c.0)
                    .unwrap_or_default();
                Ok(Bound::plain(CExpr::InList {
                    e: Box::new(eb.e),
                    not: *not,
                    list: items,
                    coll,
                    eaff: eb.aff,
                    laffs: affs,
                }))
            }
            Expr::InSelect { expr, not, select } => {
                // A row value's terms are bound one by one for their affinities and
                // collations.
                let (eb, items) = match &**expr {
                    Expr::Vector(v) if v.len() > 1 => {
                        let mut items = Vec::with_capacity(v.len());
                        for x in v {
                            items.push(self.expr(x)?);
                        }
                        let e = CExpr::Vector(items.iter().map(|b| b.e.clone()).collect());
                        (Bound::plain(e), Some(items))
                    }
                    _ => (self.expr(expr)?, None),
                };
                let sub = self.subplan(select)?;
                let width = items.as_ref().map_or(1, Vec::len);
                if sub.plan.columns.len() != width {
                    return err(format!(
                        "sub-select returns {} columns - expected {}",
                        sub.plan.columns.len(),
                        width
                    ));
                }
                let term = |b: &Bound, i: usize| {
                    let col = sub.plan.columns.get(i);
                    let aff = comparison_affinity(b.aff, col.and_then(|c| c.aff));
                    let coll = b
                        .coll
                        .map(|c| c.0)
                        .or(col.map(|c| c.coll))
                        .unwrap_or_default();
                    (coll, aff)
                };
                let terms: Vec<(Collation, Option<Affinity>)> = match &items {
                    Some(items) => items.iter().enumerate().map(|(i, b)| term(b, i)).collect(),
                    None => vec![term(&eb, 0)],
                };
                let own_coll = |b: &Bound| b.coll.map(|c| c.0).unwrap_or_default();
                let own = match &items {
                    Some(items) => items.iter().map(own_coll).collect(),
                    None => vec![own_coll(&eb)],
                };
                let (coll, aff) = terms[0];
                Ok(Bound::plain(CExpr::InSelect {
                    e: Box::new(eb.e),
                    not: *not,
                    sub: Rc::new(sub),
                    coll,
                    eaff: aff,
                    terms,
                    own,
                }))
            }
            Expr::InTable {
                expr,
                not,
                table,
                args,
            } => {
                if !args.is_empty() {
                    return Err(self.not_a_table_function(table));
                }
                let sel = ast::Select::of_table(
                    None,
                    vec![ResultColumn::Star],
                    table.clone(),
                    None,
                    None,
                    None,
                );
                self.expr(&Expr::InSelect {
                    expr: expr.clone(),
                    not: *not,
                    select: Box::new(sel),
                })
            }
            Expr::IsNull { expr, not } => {
                let b = self.expr(expr)?;
                Ok(Bound::plain(CExpr::IsNull {
                    e: Box::new(b.e),
                    not: *not,
                }))
            }
            Expr::Exists(s) => {
                self.exists_next = true;
                let sub = self.subplan(s);
                self.exists_next = false;
                let sub = sub?;
                Ok(Bound::plain(CExpr::Exists(Rc::new(sub))))
            }
            Expr::Subquery(s) => {
                let mut terms = self.subquery_terms(s)?;
                if terms.len() != 1 {
                    return err(format!(
                        "sub-select returns {} columns - expected 1",
                        terms.len()
                    ));
                }
                Ok(terms.remove(0))
            }
            Expr::Case {
                base: Some(base),
                whens,
                else_,
            } if matches!(&**base, Expr::Vector(v) if v.len() > 1) => {
                // A row value CASE compares the value with each WHEN as `base = w`.
                let whens = whens
                    .iter()
                    .map(|(w, t)| {
                        let eq = Expr::Binary(base.clone(), BinaryOp::Eq, Box::new(w.clone()));
                        (eq, t.clone())
                    })
                    .collect();
                self.expr(&Expr::Case {
                    base: None,
                    whens,
                    else_: else_.clone(),
                })
            }
            Expr::Case { base, whens, else_ } => {
                let bb = match base {
                    Some(b) => Some(self.expr(b)?),
                    None => None,
                };
                let mut ws = Vec::new();
                let mut coll = bb
                    .as_ref()
                    .and_then(|b| b.coll)
                    .map(|c| c.0)
                    .unwrap_or_default();
                // The CASE's own collation, as for any operator: its first operand with an
                // explicit COLLATE (base, then WHEN/THEN pairs, then ELSE).
                let mut prop = bb.as_ref().and_then(|b| explicit(&[b]));
                for (w, t) in whens {
                    let wb = self.expr(w)?;
                    if let (Some(b), None) = (&bb, bb.as_ref().and_then(|b| b.coll)) {
                        let _ = b;
                        if let Some(c) = wb.coll {
                            coll = c.0;
                        }
                    }
                    let tb = self.expr(t)?;
                    prop = prop.or(explicit(&[&wb, &tb]));
                    ws.push((wb.e, tb.e));
                }
                let el = match else_ {
                    Some(x) => {
                        let xb = self.expr(x)?;
                        prop = prop.or(explicit(&[&xb]));
                        Some(Box::new(xb.e))
                    }
                    None => None,
                };
                let baff = bb.as_ref().and_then(|b| b.aff);
                Ok(Bound {
                    coll: prop,
                    ..Bound::plain(CExpr::Case {
                        base: bb.map(|b| Box::new(b.e)),
                        whens: ws,
                        else_: el,
                        coll,
                        baff,
                    })
                })
            }
            Expr::Cast { expr, type_name } => {
                let b = self.expr(expr)?;
                let aff = affinity_of_type_name(type_name);
                Ok(Bound {
                    e: CExpr::Cast {
                        e: Box::new(b.e),
                        aff,
                    },
                    aff: Some(aff),
                    coll: b.coll,
                    col: None,
                })
            }
            Expr::Collate { expr, collation } => {
                let c = Collation::from_name(collation)?;
                let b = self.expr(expr)?;
                Ok(Bound {
                    e: b.e,
                    aff: b.aff,
                    coll: Some((c, true)),
                    col: b.col,
                })
            }
            Expr::Function(fc) => self.function(fc),
            Expr::Vector(v) => {
                let mut items = Vec::new();
                for x in v {
                    items.push(self.expr(x)?.e);
                }
                Ok(Bound::plain(CExpr::Vector(items)))
            }
            Expr::Raise { kind, message } => {
                let msg = match message {
                    Some(m) => Some(Box::new(self.expr(m)?.e)),
                    None => None,
                };
                Ok(Bound::plain(CExpr::Raise { kind: *kind, msg }))
            }
        }
    }

    fn function(&mut self, fc: &ast::FunctionCall) -> Result<Bound> {
        // An ORDER BY inside the parentheses belongs to aggregates only; SQLite counts a
        // window function (an aggregate with OVER too) as non-aggregate here.
        let order_misused = || {
            err(format!(
                "ORDER BY may not be used with non-aggregate {}()",
                fc.name
            ))
        };
        if let Some(over) = &fc.over {
            if !fc.order_by.is_empty() {
                return order_misused();
            }
            return self.window_call(fc, over);
        }
        let nargs = match &fc.args {
            FunctionArgs::Star => 0,
            FunctionArgs::List(a) => a.len(),
        };
        let def = func::lookup(&fc.name, nargs)?;
        // likelihood()'s probability must be a real literal in [0, 1] (exprProbability: an
        // integer, a sign or an expression is refused).
        if let (true, FunctionArgs::List(a)) = (def.name == "likelihood", &fc.args) {
            if !matches!(a.get(1), Some(Expr::Literal(Literal::Float { value, .. })) if *value <= 1.0)
            {
                return err(format!(
                    "second argument to {}() must be a constant between 0.0 and 1.0",
                    fc.name
                ));
            }
        }
        if !fc.order_by.is_empty() && !def.is_aggregate() {
            return order_misused();
        }
        if let FunctionArgs::Star = fc.args {
            if !def.is_aggregate() || !def.name.eq_ignore_ascii_case("count") {
                return err(format!(
                    "wrong number of arguments to function {}()",
                    fc.name
                ));
            }
        }
        let args_ast: &[Expr] = match &fc.args {
            FunctionArgs::Star => &[],
            FunctionArgs::List(a) => a,
        };
        if def.is_aggregate() {
            // Bound from an outer query's result alias: that query's aggregate.
            let hidden = self.hidden_top();
            if hidden > 0 && self.rename_log.is_none() {
                return self.outer_aggregate(fc, hidden);
            }
            let allowed = self.frames.last().map(|f| f.agg_allowed).unwrap_or(false);
            if !allowed {
                // An outer query's aggregate may be written here only if this query turns
                // out to be an aggregate one (`outer_agg_here`).
                if let Some(k) = self.outer_aggregate_level(fc)? {
                    let name = format!("{}()", fc.name);
                    let b = self.outer_aggregate(fc, k)?;
                    if let Some(f) = self.frames.last_mut() {
                        f.outer_agg_here.get_or_insert(name);
                    }
                    return Ok(b);
                }
                if let Some(f) = self.frames.last_mut().filter(|f| f.binding_where) {
                    // Which error depends on the result columns, not bound yet.
                    f.where_agg.get_or_insert_with(|| format!("{}()", fc.name));
                    return Ok(Bound::plain(CExpr::Lit(Value::Null)));
                }
                return err(format!("{}{}()", super::AGG_MISUSE, fc.name));
            }
            if fc.distinct && args_ast.len() != 1 {
                return err("DISTINCT aggregates must have exactly one argument");
            }
            if let Some(f) = self.frames.last_mut() {
                f.agg_allowed = false;
            }
            let mut args = Vec::new();
            let mut coll = Collation::Binary;
            let mut res: Result<()> = Ok(());
            for (i, a) in args_ast.iter().enumerate() {
                match self.expr(a) {
                    Ok(b) => {
                        if i == 0 {
                            coll = b.coll.map(|c| c.0).unwrap_or_default();
                        }
                        args.push(b.e)
                    }
                    Err(e) => {
                        res = Err(e);
                        break;
                    }
                }
            }
            // ORDER BY terms: evaluated with the arguments, after them (`AggCall::order`).
            let mut order = Vec::new();
            if res.is_ok() {
                for term in &fc.order_by {
                    match self.expr(&term.expr) {
                        Ok(b) => {
                            order.push(SortKey {
                                idx: args.len(),
                                desc: term.desc,
                                nulls_first: term.nulls_first.unwrap_or(!term.desc),
                                coll: b.coll.map(|c| c.0).unwrap_or_default(),
                            });
                            args.push(b.e);
                        }
                        Err(e) => {
                            res = Err(e);
                            break;
                        }
                    }
                }
            }
            let filter = match (&res, &fc.filter) {
                (Ok(()), Some(f)) => match self.expr(f) {
                    Ok(b) => Some(b.e),
                    Err(e) => {
                        res = Err(e);
                        None
                    }
                },
                _ => None,
            };
            if let Some(f) = self.frames.last_mut() {
                f.agg_allowed = true;
            }
            res?;
            if let Some(k) = outer_level(args.iter().chain(&filter)).filter(|&k| k > 0) {
                if self.rename_log.is_none() && self.frames.len() > k {
                    return self.outer_aggregate(fc, k);
                }
            }
            let f = self
                .frames
                .last_mut()
                .ok_or_else(|| SqlError::msg("aggregate outside a query"))?;
            f.aggs.push(AggCall {
                def: FnRef(def),
                args,
                distinct: fc.distinct,
                coll,
                filter,
                order,
            });
            return Ok(Bound::plain(CExpr::Agg(f.aggs.len() - 1)));
        }
        if fc.filter.is_some() {
            return err(format!(
                "FILTER may not be used with non-aggregate {}()",
                fc.name
            ));
        }
        if fc.distinct {
            return err(format!(
                "DISTINCT is not allowed for non-aggregate function {}()",
                fc.name
            ));
        }
        let mut args = Vec::new();
        let mut coll = None;
        let mut prop = None;
        for a in args_ast {
            let b = self.expr(a)?;
            if coll.is_none() {
                coll = b.coll.map(|c| c.0);
            }
            prop = prop.or(explicit(&[&b]));
            args.push(b.e);
        }
        Ok(Bound {
            coll: prop,
            ..Bound::plain(CExpr::Func {
                def: FnRef(def),
                args,
                coll: coll.unwrap_or_default(),
            })
        })
    }

    /// Where an aggregate may not be written: the level of the outer query whose aggregate
    /// it is (its arguments bound here read only that query's columns), if any.
    fn outer_aggregate_level(&mut self, fc: &ast::FunctionCall) -> Result<Option<usize>> {
        if self.rename_log.is_some() {
            return Ok(None);
        }
        let mut bound = Vec::new();
        if let FunctionArgs::List(args) = &fc.args {
            for a in args {
                match self.expr(a) {
                    Ok(b) => bound.push(b.e),
                    Err(_) => return Ok(None),
                }
            }
        }
        if let Some(f) = &fc.filter {
            match self.expr(f) {
                Ok(b) => bound.push(b.e),
                Err(_) => return Ok(None),
            }
        }
        Ok(outer_level(bound.iter()).filter(|&k| k > 0 && self.frames.len() > k))
    }

    /// Binds aggregate call `fc` as one of the query `k` levels out (SQLite moves an
    /// aggregate out while it reads none of a query's own columns: resolve.c's
    /// sqlite3ReferencesSrcList loop), from there on a reference to that query's value.
    /// That query must allow an aggregate where the subquery stands, else SQLite's code
    /// generator refuses it ("misuse of aggregate: f()") — unless it stands in an EXISTS
    /// operand's result columns, which are never computed: then it is bound as NULL.
    fn outer_aggregate(&mut self, fc: &ast::FunctionCall, k: usize) -> Result<Bound> {
        let at = self.frames.len() - 1 - k;
        if self.uncoded_outer_aggregate(at) {
            return Ok(Bound::plain(CExpr::Lit(Value::Null)));
        }
        if !self.frames[at].agg_allowed {
            // SQLite's code generator refuses it, once every name is resolved.
            if let Some(f) = self.frames.last_mut() {
                f.outer_agg_unrunnable
                    .get_or_insert_with(|| format!("{}()", fc.name));
            }
            return Ok(Bound::plain(CExpr::Lit(Value::Null)));
        }
        let inner = self.frames.split_off(at + 1);
        let r = self.function(fc);
        self.frames.extend(inner);
        let idx = match r?.e {
            CExpr::Agg(idx) => idx,
            _ => return err(format!("misuse of aggregate: {}()", fc.name)),
        };
        for f in &mut self.frames[at + 1..] {
            f.correlated = true;
        }
        Ok(Bound::plain(CExpr::OuterAgg { level: k, idx }))
    }

    /// An aggregate of the query at frame `at` written in the result columns of an EXISTS
    /// operand nested in it, which nothing computes, and which does not make that query an
    /// aggregate one because it stands outside that query's own result columns (SQLite
    /// decides SF_Aggregate from the result columns alone, before WHERE and ORDER BY).
    fn uncoded_outer_aggregate(&self, at: usize) -> bool {
        let uncoded = self.frames[at + 1..]
            .iter()
            .any(|f| f.exists_operand && f.binding_outputs);
        uncoded && !(self.frames[at].agg_allowed && self.frames[at].binding_outputs)
    }

    /// `x IS [NOT] TRUE|FALSE` with the keyword (not a column of that name): SQLite's
    /// TK_TRUTH, x read as a boolean (a number not 0, text and blobs as numbers), a NULL x
    /// giving false for IS and true for IS NOT. Written as a CASE, x evaluated once.
    fn truth_test(&mut self, l: &Expr, is: bool, r: &Expr) -> Result<Bound> {
        let x = self.expr(l)?.e;
        let want_true = matches!(r, Expr::Column { name, .. } if name.eq_ignore_ascii_case("true"));
        let when = if want_true {
            x
        } else {
            CExpr::Unary(UnaryOp::Not, Box::new(x))
        };
        let int = |b: bool| CExpr::Lit(Value::Integer(i64::from(b)));
        Ok(Bound::plain(CExpr::Case {
            base: None,
            whens: vec![(when, int(is))],
            else_: Some(Box::new(int(!is))),
            coll: Collation::Binary,
            baff: None,
        }))
    }

    /// Binds `f(...) OVER (...)` into the current frame's window calls.
    fn window_call(&mut self, fc: &ast::FunctionCall, over: &ast::Over) -> Result<Bound> {
        let allowed = self.frames.last().is_some_and(|f| f.win_allowed);
        if !allowed {
            return err(format!("misuse of window function {}()", fc.name));
        }
        if self.rename_log.is_some() {
            // The call is bound below from copies of its arguments and window, whose names
            // are not the tree's.
            if let FunctionArgs::List(args) = &fc.args {
                for a in args {
                    let _ = self.expr(a);
                }
            }
            if let ast::Over::Window(w) = over {
                self.log_window_names(w);
            }
        }
        let named = self
            .frames
            .last()
            .map(|f| f.named_windows.clone())
            .unwrap_or_default();
        let find = |n: &str| {
            named
                .iter()
                .find(|(w, _)| w.eq_ignore_ascii_case(n))
                .map(|(_, d)| d.clone())
        };
        let def = match over {
            ast::Over::Name(n) => {
                find(n).ok_or_else(|| SqlError::msg(format!("no such window: {n}")))?
            }
            ast::Over::Window(d) => match &d.base {
                // Window chaining (lang_windowfunc.html 4, sqlite3WindowChain): the new
                // definition adds to the named one and overrides none of its parts.
                Some(b) => {
                    let base =
                        find(b).ok_or_else(|| SqlError::msg(format!("no such window: {b}")))?;
                    if !d.partition_by.is_empty() {
                        return err(format!("cannot override PARTITION clause of window: {b}"));
                    }
                    if !base.order_by.is_empty() && !d.order_by.is_empty() {
                        return err(format!("cannot override ORDER BY clause of window: {b}"));
                    }
                    if base.frame.is_some() {
                        return err(format!(
                            "cannot override frame specification of window: {b}"
                        ));
                    }
                    ast::WindowDef {
                        base: None,
                        partition_by: base.partition_by,
                        order_by: if d.order_by.is_empty() {
                            base.order_by
                        } else {
                            d.order_by.clone()
                        },
                        frame: d.frame.clone(),
                    }
                }
                None => d.clone(),
            },
        };
        if fc.distinct {
            return err("DISTINCT is not supported for window functions");
        }
        let args_ast: Vec<Expr> = match &fc.args {
            FunctionArgs::Star => Vec::new(),
            FunctionArgs::List(a) => a.clone(),
        };
        let n = args_ast.len();
        let lname = fc.name.to_ascii_lowercase();
        let arity = |lo: usize, hi: usize| -> Result<()> {
            if n < lo || n > hi {
                return err(format!(
                    "wrong number of arguments to function {}()",
                    fc.name
                ));
            }
            Ok(())
        };
        let kind = match lname.as_str() {
            "row_number" => arity(0, 0).map(|_| WinKind::RowNumber)?,
            "rank" => arity(0, 0).map(|_| WinKind::Rank)?,
            "dense_rank" => arity(0, 0).map(|_| WinKind::DenseRank)?,
            "percent_rank" => arity(0, 0).map(|_| WinKind::PercentRank)?,
            "cume_dist" => arity(0, 0).map(|_| WinKind::CumeDist)?,
            "ntile" => arity(1, 1).map(|_| WinKind::Ntile)?,
            "lag" => arity(1, 3).map(|_| WinKind::Lag)?,
            "lead" => arity(1, 3).map(|_| WinKind::Lead)?,
            "first_value" => arity(1, 1).map(|_| WinKind::FirstValue)?,
            "last_value" => arity(1, 1).map(|_| WinKind::LastValue)?,
            "nth_value" => arity(2, 2).map(|_| WinKind::NthValue)?,
            _ => {
                let d = func::lookup(&fc.name, n)?;
                // An application's aggregate without xValue/xInverse is no window
                // function (resolve.c).
                if !d.is_window_aggregate() {
                    return err(format!(
                        "{}() may not be used as a window function",
                        fc.name
                    ));
                }
                WinKind::Agg {
                    def: FnRef(d),
                    distinct: fc.distinct,
                    coll: Collation::Binary,
                }
            }
        };
        if let Some(fs) = &def.frame {
            let offset = |b: &ast::FrameBound| {
                matches!(
                    b,
                    ast::FrameBound::Preceding(_) | ast::FrameBound::Following(_)
                )
            };
            if fs.units == "RANGE"
                && (offset(&fs.start) || fs.end.as_ref().is_some_and(offset))
                && def.order_by.len() != 1
            {
                return err(
                    "RANGE with offset PRECEDING/FOLLOWING requires one ORDER BY expression",
                );
            }
        }
        if fc.filter.is_some() && !matches!(kind, WinKind::Agg { .. }) {
            return err("FILTER clause may only be used with aggregate window functions");
        }
        let frame = frame_of(&kind, def.frame.as_ref());
        let def = ast::WindowDef {
            frame: Some(frame),
            ..def
        };
        if let Some(f) = self.frames.last_mut() {
            f.win_allowed = false;
        }
        let r = self.window_parts(kind, &args_ast, fc.filter.as_ref(), &def);
        if let Some(f) = self.frames.last_mut() {
            f.win_allowed = true;
        }
        let mut call = r?;
        let f = self
            .frames
            .last_mut()
            .ok_or_else(|| SqlError::msg("window function outside a query"))?;
        call.pass = match f.win_defs.iter().position(|d| *d == def) {
            Some(i) => f.wins[i].pass,
            None => f.wins.iter().map(|w| w.pass + 1).max().unwrap_or(0),
        };
        f.wins.push(call);
        f.win_defs.push(def);
        Ok(Bound::plain(CExpr::Win(f.wins.len() - 1)))
    }

    /// Binds a window definition's expressions in place for `rename_log` only (results
    /// and errors are the real binding's business).
    pub(super) fn log_window_names(&mut self, w: &ast::WindowDef) {
        for e in w
            .partition_by
            .iter()
            .chain(w.order_by.iter().map(|o| &o.expr))
        {
            let _ = self.expr(e);
        }
    }

    fn window_parts(
        &mut self,
        kind: WinKind,
        args_ast: &[Expr],
        filter: Option<&Expr>,
        def: &ast::WindowDef,
    ) -> Result<WinCall> {
        let mut args = Vec::new();
        let mut first_coll = Collation::Binary;
        for (i, a) in args_ast.iter().enumerate() {
            let b = self.expr(a)?;
            if i == 0 {
                first_coll = b.coll.map(|c| c.0).unwrap_or_default();
            }
            args.push(b.e);
        }
        let kind = match kind {
            WinKind::Agg { def, distinct, .. } => WinKind::Agg {
                def,
                distinct,
                coll: first_coll,
            },
            k => k,
        };
        let mut partition = Vec::new();
        let mut partition_colls = Vec::new();
        for p in &def.partition_by {
            let b = self.expr(p)?;
            partition_colls.push(b.coll.map(|c| c.0).unwrap_or_default());
            partition.push(b.e);
        }
        let mut order = Vec::new();
        for o in &def.order_by {
            let b = self.expr(&o.expr)?;
            let coll = b.coll.map(|c| c.0).unwrap_or_default();
            order.push((b.e, o.desc, o.nulls_first.unwrap_or(!o.desc), coll));
        }
        let frame = match &def.frame {
            None if order.is_empty() => WinFrame::Partition,
            None => WinFrame::ToCurrentPeers,
            Some(fs) => self.frame_spec(fs, order.len())?,
        };
        // The frame-less functions compute nothing over a frame: no offset to evaluate.
        let frame = match kind {
            WinKind::Agg { .. } | WinKind::FirstValue | WinKind::LastValue | WinKind::NthValue => {
                frame
            }
            _ => WinFrame::Partition,
        };
        let filter = match filter {
            Some(f) => Some(self.expr(f)?.e),
            None => None,
        };
        Ok(WinCall {
            kind,
            args,
            partition,
            order,
            frame,
            partition_colls,
            filter,
            pass: 0,
        })
    }

    /// A window's frame as the executor computes it (`frame_of` gave every call one).
    fn frame_spec(&mut self, fs: &ast::FrameSpec, order_terms: usize) -> Result<WinFrame> {
        use ast::FrameBound as B;
        let end = fs.end.clone().unwrap_or(B::CurrentRow);
        let units = match fs.units.as_str() {
            "ROWS" => FrameUnits::Rows,
            "GROUPS" => FrameUnits::Groups,
            _ => FrameUnits::Range,
        };
        let exclude = fs.exclude.as_deref().map(|e| match e {
            "NO OTHERS" => FrameExclude::NoOthers,
            "CURRENT ROW" => FrameExclude::CurrentRow,
            "GROUP" => FrameExclude::Group,
            _ => FrameExclude::Ties,
        });
        // The two frames computed without a frame per row: from the partition's start to
        // the current row's last peer (all rows are peers without an ORDER BY), and the
        // whole partition.
        if exclude.is_none() && units != FrameUnits::Rows {
            match (&fs.start, &end) {
                (B::UnboundedPreceding, B::CurrentRow) if order_terms > 0 => {
                    return Ok(WinFrame::ToCurrentPeers)
                }
                (B::UnboundedPreceding, B::CurrentRow | B::UnboundedFollowing) => {
                    return Ok(WinFrame::Partition)
                }
                _ => {}
            }
        }
        Ok(WinFrame::Spec {
            units,
            start: self.frame_edge(&fs.start)?,
            end: self.frame_edge(&end)?,
            exclude,
        })
    }

    fn frame_edge(&mut self, b: &ast::FrameBound) -> Result<FrameEdge> {
        Ok(match b {
            ast::FrameBound::UnboundedPreceding => FrameEdge::UnboundedPreceding,
            ast::FrameBound::Preceding(e) => FrameEdge::Preceding(self.frame_offset(e)?),
            ast::FrameBound::CurrentRow => FrameEdge::CurrentRow,
            ast::FrameBound::Following(e) => FrameEdge::Following(self.frame_offset(e)?),
            ast::FrameBound::UnboundedFollowing => FrameEdge::UnboundedFollowing,
        })
    }

    /// A frame offset: SQLite keeps it only when it is constant as its parser sees it
    /// (sqlite3WindowOffsetExpr: literals, parameters and operators over them; a column,
    /// a function call or a subquery is not), else NULL, which fails when the statement
    /// runs ("frame starting offset must be ...").
    fn frame_offset(&mut self, e: &Expr) -> Result<CExpr> {
        if parsed_constant(e) {
            Ok(self.expr(e)?.e)
        } else {
            Ok(CExpr::Lit(Value::Null))
        }
    }

    fn column(
        &mut self,
        schema: Option<&str>,
        table: Option<&str>,
        name: &str,
        dq: bool,
    ) -> Result<Bound> {
        let n = self.frames.len();
        // Past a frame binding its GROUP BY or ORDER BY only a trigger's rows are seen.
        let mut isolated = false;
        for level in 0..n {
            let fi = n - 1 - level;
            let skip = self.frames[fi].hidden || (isolated && !self.frames[fi].trigger);
            isolated |= self.frames[fi].isolated;
            if skip {
                continue;
            }
            let found = {
                let f = &self.frames[fi];
                // `db.t.x`: only an item of that database (resolve.c lookupName).
                let in_db = |i: usize| match schema {
                    None => true,
                    Some(db) => f
                        .sources
                        .iter()
                        .find(|s| (s.start..s.start + s.width).contains(&i))
                        .is_some_and(|s| s.db.named_by(db, self.schema)),
                };
                // A schema table's other name (`sqlite_schema.name` of `FROM sqlite_master`).
                let other_name = table
                    .filter(|t| {
                        t.get(..7)
                            .is_some_and(|p| p.eq_ignore_ascii_case("sqlite_"))
                    })
                    .and_then(|t| {
                        f.sources
                            .iter()
                            .find(|s| s.schema_table_named(t, schema.is_some()))
                    })
                    .map(|s| s.key.clone());
                let source_named = |source: &str, t: &str| {
                    source.eq_ignore_ascii_case(t) || other_name.as_deref() == Some(source)
                };
                // (first hit, number of hits): sources are lower-case (`key`), so comparing
                // without case is comparing with `key(t)`, without allocating per column.
                let mut first: Option<usize> = None;
                let mut hits = 0usize;
                for (i, c) in f.cols.iter().enumerate() {
                    let name_ok = c.name.eq_ignore_ascii_case(name) && !c.is_rowid;
                    let hit = match table {
                        // The right side of a USING column counts only where nothing
                        // before it matched (`a JOIN a USING(x)`'s `a.x` is the left one).
                        Some(t) => {
                            name_ok
                                && source_named(&c.source, t)
                                && (hits == 0 || !c.using_hidden)
                                && in_db(i)
                        }
                        None => name_ok && !c.using_hidden,
                    };
                    if hit {
                        first.get_or_insert(i);
                        hits += 1;
                    }
                }
                if hits == 0
                    && ["rowid", "oid", "_rowid_"]
                        .iter()
                        .any(|r| r.eq_ignore_ascii_case(name))
                {
                    for (i, c) in f.cols.iter().enumerate() {
                        // A WITHOUT ROWID table's slot has no name: it never matches.
                        if c.is_rowid
                            && !c.name.is_empty()
                            && table.map_or(true, |t| source_named(&c.source, t))
                            && in_db(i)
                        {
                            first.get_or_insert(i);
                            hits += 1;
                        }
                    }
                    if table.is_none() && hits > 1 {
                        // Only a single table source makes a bare rowid unambiguous.
                        return err(format!("ambiguous column name: {name}"));
                    }
                }
                if hits > 1 {
                    return err(format!(
                        "ambiguous column name: {}",
                        written_name(schema, table, name)
                    ));
                }
                first.map(|i| (i, f.cols[i].aff, f.cols[i].coll))
            };
            if let Some((idx, aff, coll)) = found {
                if let Some(log) = &mut self.rename_log {
                    log.note_column(&self.frames[fi].cols[idx], table, name);
                }
                if table.is_none() {
                    let merged = self.frames[fi]
                        .using_values
                        .iter()
                        .find(|(i, _)| *i == idx)
                        .map(|(_, m)| m.clone());
                    if let Some(m) = merged {
                        return self.merged_value(fi, &m);
                    }
                }
                if level > 0 {
                    for f in &mut self.frames[fi + 1..] {
                        f.correlated = true;
                    }
                }
                return Ok(Bound {
                    e: CExpr::Col { level, idx },
                    aff,
                    coll: Some((coll, false)),
                    col: Some((level, idx)),
                });
            }
            // Result-column aliases of this level, never in the result columns themselves
            // (resolve.c sets NC_UEList after them); those of an enclosing query too, as
            // lookupName tries each level's aliases before the next level out.
            if table.is_none() && !self.frames[fi].binding_outputs {
                let alias = self.frames[fi]
                    .aliases
                    .iter()
                    .find(|(a, _)| a.eq_ignore_ascii_case(name))
                    .map(|(_, e)| e.clone());
                if let Some(e) = alias {
                    if self.frames[fi].alias_depth < 8 {
                        return self.alias(fi, name, &e);
                    }
                }
            }
        }
        if dq && table.is_none() {
            return Ok(Bound::plain(CExpr::Lit(Value::text(name))));
        }
        if name.eq_ignore_ascii_case("true") && table.is_none() {
            return Ok(Bound::plain(CExpr::Lit(Value::Integer(1))));
        }
        if name.eq_ignore_ascii_case("false") && table.is_none() {
            return Ok(Bound::plain(CExpr::Lit(Value::Integer(0))));
        }
        err(format!(
            "no such column: {}",
            written_name(schema, table, name)
        ))
    }

    /// Result alias `name` of the query at frame `fi`, standing for `e`, read from the
    /// innermost frame: `e` is bound as at its own level (resolve.c resolveAlias), the
    /// frames above hidden from its names, an aggregate in it being that query's.
    fn alias(&mut self, fi: usize, name: &str, e: &Expr) -> Result<Bound> {
        let outer = fi + 1 < self.frames.len();
        if outer {
            // lookupName's checks on the alias's expression from a subquery.
            if matches!(e, Expr::Function(fc) if fc.over.is_some()) {
                return err(format!("misuse of aliased window function {name}"));
            }
            if matches!(e, Expr::Vector(_)) {
                return err("row value misused");
            }
        }
        let hidden: Vec<bool> = self.frames[fi + 1..].iter().map(|f| f.hidden).collect();
        for f in &mut self.frames[fi + 1..] {
            f.hidden = true;
        }
        self.frames[fi].alias_depth += 1;
        let r = self.expr(e);
        self.frames[fi].alias_depth -= 1;
        for (f, h) in self.frames[fi + 1..].iter_mut().zip(hidden) {
            f.hidden = h;
        }
        // resolve.c names the alias of a window function where none may be.
        r.map_err(
            |e| match e.to_string().starts_with("misuse of window function") {
                true => SqlError::msg(format!("misuse of aliased window function {name}")),
                false => e,
            },
        )
    }

    /// The number of frames on top whose names are hidden (`Frame::hidden`): an aggregate
    /// bound there belongs to the query below them.
    pub(super) fn hidden_top(&self) -> usize {
        self.frames.iter().rev().take_while(|f| f.hidden).count()
    }

    /// Column `idx` of frame `fi` as read from the innermost frame.
    pub(super) fn column_of_frame(&mut self, fi: usize, idx: usize) -> Bound {
        let level = self.frames.len() - 1 - fi;
        for f in &mut self.frames[fi + 1..] {
            f.correlated = true;
        }
        let c = &self.frames[fi].cols[idx];
        Bound {
            e: CExpr::Col { level, idx },
            aff: c.aff,
            coll: Some((c.coll, false)),
            col: Some((level, idx)),
        }
    }

    /// A USING column of frame `fi` merged by a RIGHT or FULL JOIN, as read from the
    /// innermost frame: the column, or coalesce() of the columns (bound as the function
    /// call would be).
    pub(super) fn merged_value(&mut self, fi: usize, m: &Merged) -> Result<Bound> {
        match m {
            Merged::Col(i) => Ok(self.column_of_frame(fi, *i)),
            Merged::Coalesce(cols) => {
                let def = func::lookup("coalesce", cols.len())?;
                let args: Vec<Bound> = cols.iter().map(|&i| self.column_of_frame(fi, i)).collect();
                let coll = args.first().and_then(|b| b.coll).map(|c| c.0);
                Ok(Bound::plain(CExpr::Func {
                    def: FnRef(def),
                    args: args.into_iter().map(|b| b.e).collect(),
                    coll: coll.unwrap_or_default(),
                }))
            }
        }
    }
}

/// `[db.][t.]x` as written, for an error message.
fn written_name(schema: Option<&str>, table: Option<&str>, name: &str) -> String {
    match (schema, table) {
        (Some(db), Some(t)) => format!("{db}.{t}.{name}"),
        (None, Some(t)) => format!("{t}.{name}"),
        _ => name.to_string(),
    }
}

/// The frame SQLite gives a window call (sqlite3WindowAlloc, sqlite3WindowUpdate): the
/// declared one with a missing end read as CURRENT ROW, RANGE UNBOUNDED PRECEDING to
/// CURRENT ROW when none is declared, and for the built-in functions that read no frame
/// (row_number, rank, ..., lag, lead) SQLite's own, whatever was declared. Calls whose
/// windows are equal with these frames share a pass (`WinCall::pass`).
fn frame_of(kind: &WinKind, declared: Option<&ast::FrameSpec>) -> ast::FrameSpec {
    use ast::FrameBound as B;
    let own = |units: &str, start: B, end: B| ast::FrameSpec {
        units: units.to_string(),
        start,
        end: Some(end),
        exclude: None,
    };
    let one = || Box::new(Expr::Literal(ast::Literal::Integer(1)));
    match kind {
        WinKind::RowNumber | WinKind::Lag => own("ROWS", B::UnboundedPreceding, B::CurrentRow),
        WinKind::Rank | WinKind::DenseRank => own("RANGE", B::UnboundedPreceding, B::CurrentRow),
        WinKind::PercentRank => own("GROUPS", B::CurrentRow, B::UnboundedFollowing),
        WinKind::CumeDist => own("GROUPS", B::Following(one()), B::UnboundedFollowing),
        WinKind::Ntile => own("ROWS", B::CurrentRow, B::UnboundedFollowing),
        WinKind::Lead => own("ROWS", B::UnboundedPreceding, B::UnboundedFollowing),
        _ => match declared {
            Some(fs) => ast::FrameSpec {
                end: Some(fs.end.clone().unwrap_or(B::CurrentRow)),
                ..fs.clone()
            },
            None => own("RANGE", B::UnboundedPreceding, B::CurrentRow),
        },
    }
}

/// A comparison of two row values of the same size, each term with its own collation and
/// affinities (SQLite's codeCompare per term).
fn row_cmp(op: BinaryOp, l: Vec<Bound>, r: Vec<Bound>) -> CExpr {
    let terms = l
        .iter()
        .zip(&r)
        .map(|(x, y)| (pick_collation(x, y), x.aff, y.aff))
        .collect();
    CExpr::RowCmp(Box::new(RowCmp {
        op,
        l: l.into_iter().map(|b| b.e).collect(),
        r: r.into_iter().map(|b| b.e).collect(),
        terms,
    }))
}

/// The first of `operands` with an explicit COLLATE (SQLite's EP_Collate, which an operator
/// takes from its operands): the collation sqlite3ExprCollSeq finds for the operator.
fn explicit(operands: &[&Bound]) -> Option<(Collation, bool)> {
    operands.iter().find_map(|b| b.coll.filter(|c| c.1))
}

/// An unqualified `true` / `false` identifier (the keyword unless a column has the name).
fn is_true_false_keyword(e: &Expr) -> bool {
    matches!(e, Expr::Column { schema: None, table: None, name, dq: false }
        if name.eq_ignore_ascii_case("true") || name.eq_ignore_ascii_case("false"))
}

/// Constant as SQLite's parser sees it (sqlite3ExprIsConstant before names resolve):
/// literals, parameters and operators over them; a column, a function call or a subquery
/// is not.
fn parsed_constant(e: &Expr) -> bool {
    match e {
        Expr::Literal(_) | Expr::Param { .. } => true,
        Expr::Unary(_, x) | Expr::Cast { expr: x, .. } | Expr::Collate { expr: x, .. } => {
            parsed_constant(x)
        }
        Expr::IsNull { expr, .. } => parsed_constant(expr),
        Expr::Binary(l, _, r) => parsed_constant(l) && parsed_constant(r),
        Expr::Between {
            expr, low, high, ..
        } => parsed_constant(expr) && parsed_constant(low) && parsed_constant(high),
        Expr::InList { expr, list, .. } => {
            parsed_constant(expr) && list.iter().all(parsed_constant)
        }
        Expr::Case { base, whens, else_ } => {
            base.as_deref().is_none_or(parsed_constant)
                && whens
                    .iter()
                    .all(|(w, t)| parsed_constant(w) && parsed_constant(t))
                && else_.as_deref().is_none_or(parsed_constant)
        }
        _ => false,
    }
}

/// The nearest query level the expressions read a column of (0: this one), or None when
/// they read no column or hold a subquery (an aggregate over those stays where it is).
fn outer_level<'a>(exprs: impl Iterator<Item = &'a CExpr>) -> Option<usize> {
    let mut level: Option<usize> = None;
    let mut subquery = false;
    for e in exprs {
        crate::plan::walk(e, |x| {
            match x {
                CExpr::Col { level: l, .. } => level = Some(level.map_or(*l, |m| m.min(*l))),
                CExpr::OuterAgg { .. } | CExpr::Scalar(_) | CExpr::Exists(_) => subquery = true,
                CExpr::InSelect { .. } => subquery = true,
                _ => {}
            }
            true
        });
    }
    if subquery {
        return None;
    }
    level
}
