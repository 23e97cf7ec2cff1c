//! FROM-clause binding: tables, views, CTEs, subqueries and table-valued functions become
//! `Source`s, with join constraints turned into WHERE/ON terms.

use super::*;

impl<'s> Binder<'s> {
    /// Binds the FROM clause into `sources`. ON terms of inner joins go to `where_terms`
    /// tagged with the index of their join's source (WHERE terms are tagged `usize::MAX`), so
    /// the caller can keep them inside the left operand of a later RIGHT/FULL JOIN.
    pub(super) fn from_clause<'e>(
        &mut self,
        from: &'e ast::FromClause,
        sources: &mut Vec<Source>,
        where_terms: &mut Vec<(Term<'e>, usize)>,
    ) -> Result<()> {
        self.add_source(&from.first, JoinType::Inner, sources)?;
        for j in &from.joins {
            let jt = match j.op.kind {
                JoinKind::Left => JoinType::Left,
                JoinKind::Right => JoinType::Right,
                JoinKind::Full => JoinType::Full,
                _ => JoinType::Inner,
            };
            // Only USING and NATURAL look at the left side's columns: copying them for every
            // join was ~3% of a four-way join's statement (speedtest1 test 310, callgrind).
            let by_name = j.op.natural || matches!(j.constraint, Some(JoinConstraint::Using(_)));
            let left_cols: Vec<(usize, ScopeCol)> = self
                .frames
                .last()
                .filter(|_| by_name)
                .map(|f| {
                    f.cols
                        .iter()
                        .cloned()
                        .enumerate()
                        .filter(|(_, c)| !c.is_rowid && !c.using_hidden && !c.star_hidden)
                        .collect()
                })
                .unwrap_or_default();
            self.add_source(&j.table, jt, sources)?;
            let si = sources.len() - 1;
            let (start, w) = (sources[si].start, sources[si].width);
            let mut using: Vec<String> = match &j.constraint {
                Some(JoinConstraint::Using(cols)) => cols.clone(),
                _ => Vec::new(),
            };
            if j.op.natural {
                if j.constraint.is_some() {
                    return err("a NATURAL join may not have an ON or USING clause");
                }
                let f = self
                    .frames
                    .last()
                    .ok_or_else(|| SqlError::msg("no frame"))?;
                for c in &f.cols[start..start + w] {
                    if !c.is_rowid
                        && left_cols
                            .iter()
                            .any(|(_, l)| l.name.eq_ignore_ascii_case(&c.name))
                    {
                        using.push(c.name.clone());
                    }
                }
            }
            let mut on_terms: Vec<Term<'e>> = Vec::new();
            for u in &using {
                let f = self
                    .frames
                    .last_mut()
                    .ok_or_else(|| SqlError::msg("no frame"))?;
                let Some(li) = left_cols
                    .iter()
                    .find(|(_, c)| c.name.eq_ignore_ascii_case(u))
                    .map(|(i, _)| *i)
                else {
                    return err(format!(
                        "cannot join using column {u} - column not present in both tables"
                    ));
                };
                let Some(ri) = (start..start + w)
                    .find(|&i| !f.cols[i].is_rowid && f.cols[i].name.eq_ignore_ascii_case(u))
                else {
                    return err(format!(
                        "cannot join using column {u} - column not present in both tables"
                    ));
                };
                f.cols[ri].using_hidden = true;
                // The left side is what an unqualified name means so far: the leftmost
                // table's column, or what an earlier RIGHT/FULL JOIN made of it. Both sides
                // are columns by position, as SQLite builds them (sqlite3CreateColumnExpr):
                // a qualified name would not tell `a JOIN a USING(x)`'s two `a.x` apart.
                let left = match f.using_values.iter().find(|(i, _)| *i == li) {
                    Some((_, m)) => m.clone(),
                    None => Merged::Col(li),
                };
                // SQLite resolves the merged column of a RIGHT JOIN to the right table's
                // column and of a FULL JOIN to coalesce(left, right) (resolve.c lookupName).
                let merged = match jt {
                    JoinType::Right => Some(Merged::Col(ri)),
                    JoinType::Full => {
                        let mut cols = left.columns().to_vec();
                        cols.push(ri);
                        Some(Merged::Coalesce(cols))
                    }
                    JoinType::Inner | JoinType::Left => None,
                };
                if let Some(m) = merged {
                    f.using_values.retain(|(i, _)| *i != li);
                    f.using_values.push((li, m));
                }
                let fi = self.frames.len() - 1;
                let l = self.merged_value(fi, &left)?;
                let r = self.column_of_frame(fi, ri);
                on_terms.push(Term::Bound(equality(l, r)));
            }
            if let Some(JoinConstraint::On(e)) = &j.constraint {
                let mut written = Vec::new();
                conjuncts(e, &mut written);
                on_terms.extend(written.into_iter().map(Term::Written));
            }
            if jt.is_outer() {
                for t in on_terms {
                    let e = match t {
                        Term::Written(t) => self.expr(&t)?.e,
                        Term::Bound(e) => e,
                    };
                    sources[si].on.push(e);
                }
            } else {
                where_terms.extend(on_terms.into_iter().map(|t| (t, si)));
            }
        }
        Ok(())
    }

    fn add_source(
        &mut self,
        t: &TableOrSubquery,
        join: JoinType,
        sources: &mut Vec<Source>,
    ) -> Result<()> {
        let start = self.frames.last().map_or(0, |f| f.cols.len());
        // The database and label of the item (`FrameSource`).
        let mut db = SourceDb::None;
        let mut label: Option<Rc<str>>;
        let mut schema_table = false;
        let (kind, sname, cols): (SourceKind, Rc<str>, Vec<ScopeCol>) = match t {
            TableOrSubquery::Table { name, alias, .. } => {
                let sname = super::source_key(alias.as_deref().unwrap_or(&name.name));
                label = Some(alias.as_deref().unwrap_or(&name.name).into());
                let k = crate::schema::key_ref(&name.name);
                let k = k.as_ref();
                if let Some(s) = &name.schema {
                    if !s.eq_ignore_ascii_case("main")
                        && !s.eq_ignore_ascii_case("temp")
                        && self.schema.attached_db(s).is_none()
                    {
                        return err(format!("no such table: {s}.{}", name.name));
                    }
                }
                if name.schema.is_none() && self.hidden_ctes.iter().any(|h| h == k) {
                    return err(format!("circular reference: {}", name.name));
                }
                let working = if name.schema.is_none() {
                    self.recursing.iter().rev().find(|r| r.name == *k).cloned()
                } else {
                    None
                };
                if let Some(r) = working.as_ref().filter(|r| self.frames.len() > r.depth) {
                    return err(if r.from_step {
                        format!("multiple recursive references: {}", name.name)
                    } else {
                        format!("recursive reference in a subquery: {}", name.name)
                    });
                }
                let cte = if name.schema.is_none()
                    && working.is_none()
                    && !self.hidden_ctes.iter().any(|h| h == k)
                {
                    self.ctes.iter().rev().find_map(|m| m.get(k).cloned())
                } else {
                    None
                };
                if let Some(r) = working {
                    let scols = out_cols_to_scope(&r.cols, &sname);
                    (SourceKind::Working(r.id), sname, scols)
                } else if let Some(cte) = cte {
                    self.view_guard()?;
                    let r = self.bind_cte(&name.name, &cte);
                    self.view_depth -= 1;
                    let (kind, mut cols) = r?;
                    use_written_names(&mut cols);
                    dedup_subquery_names(&mut cols);
                    let scols = out_cols_to_scope(&cols, &sname);
                    let scols = scols
                        .into_iter()
                        .enumerate()
                        .map(|(i, mut c)| {
                            if let Some(n) = cte.columns.get(i) {
                                c.name = n.clone();
                            }
                            c
                        })
                        .collect();
                    (kind, sname, scols)
                } else if let Some(tab) = self
                    .schema
                    .table_in(name.schema.as_deref(), &name.name)
                    .cloned()
                {
                    db = SourceDb::of_root(tab.root);
                    if alias.is_none() {
                        label = Some(tab.name.as_str().into());
                    }
                    let tname = super::shared_name(&sname, &tab.name);
                    let mut cols: Vec<ScopeCol> = Vec::with_capacity(tab.columns.len() + 1);
                    cols.extend(tab.columns.iter().enumerate().map(|(i, c)| ScopeCol {
                        name: c.name.clone(),
                        source: sname.clone(),
                        aff: Some(c.affinity),
                        coll: c.collation,
                        using_hidden: false,
                        star_hidden: false,
                        is_rowid: false,
                        table_name: Some(tname.clone()),
                        table_col: Some(i as u32),
                    }));
                    cols.push(rowid_scope_col(&tab, sname.clone(), tname, false));
                    if let Some(log) = &mut self.rename_log {
                        log.table_sources.push((sname.clone(), alias.is_none()));
                        log.refs.push(NameRef::Table {
                            addr: name.name.as_ptr() as usize,
                            table: tab.name.clone(),
                        });
                    }
                    (SourceKind::Table(tab), sname, cols)
                } else if let Some(v) = self
                    .schema
                    .view_in(name.schema.as_deref(), &name.name)
                    .cloned()
                {
                    if self.views_open.contains(&std::sync::Arc::as_ptr(&v)) {
                        return err(format!("view {} is circularly defined", v.name));
                    }
                    self.view_guard()?;
                    // A view binds to its own database's objects (lang_attach.html).
                    let view_db = self.schema.view_db(&v);
                    let saved_db = self.schema.default_db.replace(view_db);
                    let is_temp = self
                        .schema
                        .temp_views
                        .get(&key(&v.name))
                        .is_some_and(|x| std::sync::Arc::ptr_eq(x, &v));
                    let db_name = match view_db {
                        _ if is_temp => None,
                        0 => Some("main".to_string()),
                        n => self.schema.attached.get(n - 1).map(|a| a.name.clone()),
                    };
                    db = match view_db {
                        _ if is_temp => SourceDb::Temp,
                        0 => SourceDb::Main,
                        n => SourceDb::Attached(n - 1),
                    };
                    if alias.is_none() {
                        label = Some(v.name.as_str().into());
                    }
                    let saved_name = std::mem::replace(&mut self.view_db_name, db_name);
                    self.views_open.push(std::sync::Arc::as_ptr(&v));
                    let sub = self.detached_subplan(&v.select, false);
                    self.views_open.pop();
                    self.view_db_name = saved_name;
                    self.schema.default_db.set(saved_db);
                    self.view_depth -= 1;
                    let sub = sub?;
                    if !v.columns.is_empty() && v.columns.len() != sub.plan.columns.len() {
                        return err(format!(
                            "expected {} columns for '{}' but got {}",
                            v.columns.len(),
                            v.name,
                            sub.plan.columns.len()
                        ));
                    }
                    let cols = sub_cols(&sub, &sname, &v.columns, false);
                    (SourceKind::Subquery(Rc::new(sub)), sname, cols)
                } else if k == "sqlite_master"
                    || k == "sqlite_schema"
                    || k == "sqlite_temp_master"
                    || k == "sqlite_temp_schema"
                {
                    // `sqlite_temp_schema` is the temp database's schema table, and so is
                    // `temp.sqlite_schema`; no other database has a `sqlite_temp_schema`.
                    let temp_db = name
                        .schema
                        .as_deref()
                        .map(|s| s.eq_ignore_ascii_case("temp"));
                    if k.contains("temp") && temp_db == Some(false) {
                        let db = name.schema.as_deref().unwrap_or_default();
                        return err(format!("no such table: {db}.{}", name.name));
                    }
                    let temp = k.contains("temp") || temp_db == Some(true);
                    // Without an alias the item is named as SQLite names the table, whatever
                    // was written; a qualifier may use its other name (`FrameSource`).
                    schema_table = alias.is_none();
                    let sname: Rc<str> = match (schema_table, temp) {
                        (true, true) => "sqlite_temp_master".into(),
                        (true, false) => "sqlite_master".into(),
                        (false, _) => sname,
                    };
                    if schema_table {
                        label = Some(sname.clone());
                    }
                    let st = crate::schema::schema_table();
                    let tname: Rc<str> = name.name.as_str().into();
                    let mut cols: Vec<ScopeCol> = st
                        .columns
                        .iter()
                        .enumerate()
                        .map(|(i, c)| ScopeCol {
                            name: c.name.clone(),
                            source: sname.clone(),
                            aff: Some(c.affinity),
                            coll: c.collation,
                            using_hidden: false,
                            star_hidden: false,
                            is_rowid: false,
                            table_name: Some(tname.clone()),
                            table_col: Some(i as u32),
                        })
                        .collect();
                    cols.push(ScopeCol {
                        name: "rowid".into(),
                        source: sname.clone(),
                        aff: Some(Affinity::Integer),
                        coll: Collation::Binary,
                        using_hidden: false,
                        star_hidden: false,
                        is_rowid: true,
                        table_name: Some(tname.clone()),
                        table_col: None,
                    });
                    let attached = name
                        .schema
                        .as_deref()
                        .and_then(|s| self.schema.attached_db(s))
                        .map(|(slot, _)| slot);
                    let kind = match attached {
                        Some(slot) if !temp => {
                            db = SourceDb::Attached(slot);
                            SourceKind::AttachedSchema(1 | crate::exec::store::attached_bits(slot))
                        }
                        _ if temp => {
                            db = SourceDb::Temp;
                            SourceKind::TempSchema
                        }
                        _ => {
                            db = SourceDb::Main;
                            SourceKind::Schema
                        }
                    };
                    (kind, sname, cols)
                } else {
                    if let Some(reason) = self.schema.unsupported.get(k) {
                        return err(format!("table {} cannot be used: {reason}", name.name));
                    }
                    if k.starts_with("pragma_") {
                        // `FROM pragma_x` is the table-valued function without arguments.
                        let tf = TableOrSubquery::TableFunction {
                            name: name.clone(),
                            args: Vec::new(),
                            alias: alias.clone(),
                        };
                        return self.add_source(&tf, join, sources);
                    }
                    let full = match (&name.schema, &self.view_db_name) {
                        (Some(s), _) | (None, Some(s)) => format!("{s}.{}", name.name),
                        (None, None) => name.name.clone(),
                    };
                    return err(format!("no such table: {full}"));
                }
            }
            TableOrSubquery::Subquery { select, alias } => {
                let sub = self.detached_subplan(select, true)?;
                label = alias.as_deref().map(Rc::from);
                let sname: Rc<str> = match alias {
                    Some(a) => key(a).into(),
                    None => {
                        self.unnamed_sources += 1;
                        format!("\0{}", self.unnamed_sources).into()
                    }
                };
                let cols = sub_cols(&sub, &sname, &[], true);
                (SourceKind::Subquery(Rc::new(sub)), sname, cols)
            }
            TableOrSubquery::TableFunction { name, args, alias }
                if ["json_each", "json_tree"]
                    .iter()
                    .any(|f| f.eq_ignore_ascii_case(&name.name)) =>
            {
                // Arguments may name earlier sources (`FROM t, json_each(t.doc)`).
                let mut bound = Vec::with_capacity(args.len());
                for a in args {
                    bound.push(self.expr(a)?.e);
                }
                let sname: Rc<str> = key(alias.as_deref().unwrap_or(&name.name)).into();
                (db, label) = (
                    SourceDb::Main,
                    Some(alias.as_deref().unwrap_or(&name.name).into()),
                );
                let cols = crate::func::json_table::COLUMNS
                    .iter()
                    .enumerate()
                    .map(|(i, n)| ScopeCol {
                        name: n.to_string(),
                        source: sname.clone(),
                        aff: None,
                        coll: Collation::Binary,
                        using_hidden: false,
                        star_hidden: i >= crate::func::json_table::HIDDEN_FROM,
                        is_rowid: false,
                        table_name: None,
                        table_col: None,
                    })
                    .collect();
                let kind = SourceKind::JsonFn {
                    recursive: key(&name.name) == "json_tree",
                    args: bound,
                };
                (kind, sname, cols)
            }
            TableOrSubquery::TableFunction { name, args, alias } => {
                let k = key(&name.name);
                let Some(pragma) = k.strip_prefix("pragma_") else {
                    return Err(self.not_a_table_function(name));
                };
                if !crate::exec::pragma::is_table_function(pragma) {
                    return Err(self.not_a_table_function(name));
                }
                let names = crate::exec::pragma::function_columns(pragma);
                let hidden = crate::exec::pragma::function_hidden_columns(pragma);
                if args.len() > hidden.len() {
                    return err(format!(
                        "too many arguments on {}() - max {}",
                        name.name,
                        hidden.len()
                    ));
                }
                let sname: Rc<str> = key(alias.as_deref().unwrap_or(&name.name)).into();
                (db, label) = (
                    SourceDb::Main,
                    Some(alias.as_deref().unwrap_or(&name.name).into()),
                );
                // Pragmas that read the database or the connection run at run time, and so
                // does one called without its argument, which a WHERE term may give
                // (`pragma_arguments_from_terms`).
                let constants: Option<Vec<Value>> =
                    if !crate::exec::pragma::is_schema_function(pragma)
                        || (args.is_empty() && hidden.first() == Some(&"arg"))
                    {
                        None
                    } else {
                        args.iter()
                            .map(|a| match a {
                                Expr::Literal(l) => Some(literal_value(l)),
                                _ => None,
                            })
                            .collect()
                    };
                let kind =
                    match constants {
                        Some(vals) => SourceKind::Rows(Rc::new(
                            crate::exec::pragma::function_rows(self.schema, pragma, &vals)?,
                        )),
                        None => {
                            // Arguments may name earlier sources: evaluated per outer row.
                            let mut bound = Vec::with_capacity(args.len());
                            for a in args {
                                bound.push(self.expr(a)?.e);
                            }
                            SourceKind::PragmaFn {
                                pragma: pragma.to_string(),
                                args: bound,
                            }
                        }
                    };
                let cols = names
                    .iter()
                    .map(|n| (n.as_str(), false))
                    .chain(hidden.iter().map(|n| (*n, true)))
                    .map(|(n, star_hidden)| ScopeCol {
                        name: n.to_string(),
                        source: sname.clone(),
                        aff: None,
                        coll: Collation::Binary,
                        using_hidden: false,
                        star_hidden,
                        is_rowid: false,
                        table_name: None,
                        table_col: None,
                    })
                    .collect();
                (kind, sname, cols)
            }
            TableOrSubquery::Nested { from, alias } => {
                if alias.is_some() {
                    return err("aliases on parenthesized joins are not supported");
                }
                let mut terms = Vec::new();
                self.from_clause(from, sources, &mut terms)?;
                if !terms.is_empty() || sources.iter().any(|s| s.join.is_outer()) {
                    return err("parenthesized joins with join constraints are not supported");
                }
                return Ok(());
            }
        };
        let width = cols.len();
        let f = self
            .frames
            .last_mut()
            .ok_or_else(|| SqlError::msg("no frame"))?;
        if f.cols.is_empty() {
            f.cols = cols;
        } else {
            f.cols.extend(cols);
        }
        // SQLite allows two items of one name; a name they share is then ambiguous.
        let label = label.unwrap_or_else(|| sname.clone());
        f.sources.push(FrameSource {
            key: sname,
            start,
            width,
            db,
            label,
            schema_table,
        });
        let indexed = match t {
            TableOrSubquery::Table { indexed, .. } => indexed.clone(),
            _ => None,
        };
        sources.push(Source {
            kind,
            start,
            width,
            join,
            on: Vec::new(),
            access: Access::Scan,
            indexed,
        });
        Ok(())
    }
}
