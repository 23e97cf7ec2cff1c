//! CREATE, DROP and ALTER: B-trees allocated or freed, `sqlite_schema` rows written exactly
//! as SQLite writes them, then the schema reloaded.
//!
//! Invariants:
//! - `sqlite_schema` rows are (type, name, tbl_name, rootpage, sql); automatic indexes have
//!   NULL sql; views and triggers have rootpage 0.
//! - A failed CREATE INDEX leaves nothing behind (the connection rolls the statement back).
//! - DDL on an attached database (`CREATE TABLE aux.t`, `DROP INDEX aux.i`, ...) runs with
//!   that database's schema swapped in as `self.schema` (`in_attached`) and `schema_root`
//!   naming its schema table, so each database keeps its own namespace; the full schema
//!   waits in `outer_schema` (CREATE TABLE .. AS SELECT binds its SELECT against it).
//! - Root pages are written to a schema table without their database bits: the file holds
//!   the numbers stock SQLite expects, and loading tags them again.

use super::eval::{expand_row, Frame};
use super::rename::{edit_spans, replacement, Renaming};
use super::store::Row;
use super::Engine;
use crate::parse::ast::{self, AlterAction, CreateTableBody, ObjectKind, Stmt};
use crate::plan::{Binder, CExpr};
use crate::schema::{index_from_create, key, table_from_create, view_from_create, Index, Table};
use crate::value::{Affinity, Result, SqlError, Value};
use std::cmp::Ordering;
use std::ops::Bound;

fn err<T>(m: impl Into<String>) -> Result<T> {
    Err(SqlError::msg(m))
}

/// Quotes an identifier the way SQLite's createTableStmt does (identPut): bare when it is a
/// plain word that is not a keyword.
fn quote_ident(s: &str) -> String {
    crate::parse::display::Ident(s).to_string()
}

impl Engine<'_> {
    fn insert_schema_row(
        &self,
        ty: &str,
        name: &str,
        tbl: &str,
        root: u32,
        sql: Option<&str>,
    ) -> Result<()> {
        let rowid = self.store.table_max_rowid(self.schema_root)?.unwrap_or(0) + 1;
        let file_root = root & !(super::store::TEMP_ROOT_BIT | super::store::ATTACHED_MASK);
        let row = vec![
            Value::text(ty),
            Value::text(name),
            Value::text(tbl),
            Value::Integer(i64::from(file_root)),
            sql.map(Value::text).unwrap_or(Value::Null),
        ];
        self.store.table_insert(self.schema_root, rowid, &row)
    }

    /// (rowid, row) of every sqlite_schema entry.
    pub(crate) fn schema_rows(&self) -> Result<Vec<(i64, Row)>> {
        let mut v = Vec::new();
        for r in
            self.store
                .table_range(self.schema_root, Bound::Unbounded, Bound::Unbounded, false)?
        {
            // Rows come from the file: normalize to the five schema columns so that a
            // malformed row can never index out of bounds.
            let (rowid, mut row) = r?;
            row.resize(5, Value::Null);
            v.push((rowid, row));
        }
        Ok(v)
    }

    fn check_new_name(
        &self,
        name: &ast::QualifiedName,
        if_not_exists: bool,
        kind: &str,
    ) -> Result<bool> {
        if let Some(s) = &name.schema {
            if !s.eq_ignore_ascii_case(self.ddl_db_name()) {
                return err(format!("unknown database {s}"));
            }
        }
        if key(&name.name).starts_with("sqlite_") {
            return err(format!(
                "object name reserved for internal use: {}",
                name.name
            ));
        }
        // Tables and views share a namespace with indexes, not with triggers; IF NOT
        // EXISTS forgives only an object of the kind being made (sqlite3StartTable,
        // sqlite3CreateIndex).
        match self.name_in_use_here(&name.name) {
            Some("table" | "view") if kind == "index" => {
                return err(format!("there is already a table named {}", name.name));
            }
            Some("index") if kind != "index" => {
                return err(format!("there is already an index named {}", name.name));
            }
            None => {}
            Some(_) if if_not_exists => return Ok(false),
            Some(existing) => return err(format!("{existing} {} already exists", name.name)),
        }
        Ok(true)
    }

    /// Runs `f` with DDL directed at the temp database's schema when `temp`.
    fn in_schema<T>(&mut self, temp: bool, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        if !temp {
            return f(self);
        }
        if !self.store.has_temp() {
            return err("TEMP objects are not available on this connection");
        }
        self.schema.temp_shown.set(true);
        let saved = self.schema_root;
        self.schema_root = super::TEMP_SCHEMA_ROOT;
        let r = f(self);
        self.schema_root = saved;
        r
    }

    /// The attach slot a DDL statement's schema qualifier names: None for main, temp or no
    /// qualifier; `unknown database x` when no database has that name.
    fn attached_target(&self, schema: Option<&str>) -> Result<Option<usize>> {
        match schema {
            None => Ok(None),
            Some(s) if s.eq_ignore_ascii_case("main") || s.eq_ignore_ascii_case("temp") => Ok(None),
            Some(s) => match self.schema.attached_db(s) {
                Some((slot, _)) => Ok(Some(slot)),
                None => err(format!("unknown database {s}")),
            },
        }
    }

    /// The attach slot holding an object of this kind and name when neither temp nor main
    /// has one (unqualified names resolve temp, main, then attached in attach order).
    fn attached_holder(&self, kind: ObjectKind, name: &str) -> Option<usize> {
        let k = key(name);
        let has = |s: &crate::schema::Schema| match kind {
            ObjectKind::Table => s.tables.contains_key(&k),
            ObjectKind::Index => s.indexes.contains_key(&k),
            ObjectKind::View => s.views.contains_key(&k),
            ObjectKind::Trigger => s.triggers.contains_key(&k),
        };
        if has(self.schema) {
            return None;
        }
        self.schema.attached.iter().position(|a| has(&a.schema))
    }

    /// Runs `f` with the attached database in `slot` as the DDL target: its schema is
    /// `self.schema` for the duration (module invariant), its schema table `schema_root`.
    pub(crate) fn in_attached<T>(
        &mut self,
        slot: usize,
        f: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<T> {
        let Some(db) = self.schema.attached.get_mut(slot) else {
            return err("internal error: no such attached database");
        };
        let mut sub = std::mem::take(&mut db.schema);
        std::mem::swap(self.schema, &mut sub);
        let saved_root = self.schema_root;
        self.schema_root = 1 | super::store::attached_bits(slot);
        let saved_outer = self.outer_schema.replace(sub);
        let r = f(self);
        self.schema_root = saved_root;
        let outer = std::mem::replace(&mut self.outer_schema, saved_outer);
        let Some(mut outer) = outer else {
            return err("internal error: outer schema lost");
        };
        std::mem::swap(self.schema, &mut outer);
        if let Some(db) = self.schema.attached.get_mut(slot) {
            db.schema = outer;
        }
        r
    }

    /// The schema name of the database DDL is aimed at, for messages.
    pub(super) fn ddl_db_name(&self) -> &str {
        match (
            &self.outer_schema,
            super::store::attached_slot(self.schema_root),
        ) {
            (Some(o), Some(slot)) => o.attached.get(slot).map_or("main", |a| a.name.as_str()),
            _ if self.temp_mode() => "temp",
            _ => "main",
        }
    }

    /// A table of the DDL target database: attached tables are not candidates for
    /// unqualified DDL on main (CREATE INDEX i ON t names main.t).
    fn target_table(&self, name: &str) -> Option<std::sync::Arc<Table>> {
        self.schema
            .table(name)
            .filter(|t| {
                self.outer_schema.is_some() || super::store::attached_slot(t.root).is_none()
            })
            .cloned()
    }

    fn temp_mode(&self) -> bool {
        self.schema_root & super::store::TEMP_ROOT_BIT != 0
    }

    /// `Schema::name_in_use` for DDL directed at main or temp: the merged schema holds both,
    /// and a table of one may share a name with a table of the other (either made first;
    /// the TEMP one shadows, `Schema::shadowed`), and so may views (`shadowed_views`).
    /// Indexes are kept one per name in the merged map, so any of them clashes.
    fn name_in_use_here(&self, name: &str) -> Option<&'static str> {
        let k = key(name);
        let temp = self.temp_mode();
        let table = self
            .schema
            .tables
            .get(&k)
            .is_some_and(|t| (t.root & super::store::TEMP_ROOT_BIT != 0) == temp)
            || (!temp
                && (self.schema.shadowed.contains_key(&k)
                    || self.schema.unsupported.contains_key(&k)));
        // A TEMP view may share a main view's name (it shadows it, as a TEMP table does).
        let view = match temp {
            true => self.schema.temp_views.contains_key(&k),
            false => {
                self.schema.shadowed_views.contains_key(&k)
                    || (self.schema.views.contains_key(&k)
                        && !self.schema.temp_views.contains_key(&k))
            }
        };
        let index = self.schema.indexes.contains_key(&k);
        match (table, view, index) {
            (true, ..) => Some("table"),
            (_, true, _) => Some("view"),
            (.., true) => Some("index"),
            _ => None,
        }
    }

    fn new_table_btree(&self) -> Result<u32> {
        if self.temp_mode() {
            self.store.create_temp_table_btree()
        } else {
            self.store
                .create_btree_in(self.schema_root & super::store::ATTACHED_MASK, false)
        }
    }

    fn new_index_btree(&self) -> Result<u32> {
        if self.temp_mode() {
            self.store.create_temp_index_btree()
        } else {
            self.store
                .create_btree_in(self.schema_root & super::store::ATTACHED_MASK, true)
        }
    }

    pub fn create_table(&mut self, c: &ast::CreateTable) -> Result<Vec<Row>> {
        if let Some(slot) = self.attached_target(c.name.schema.as_deref())? {
            if c.temp {
                return err("temporary table name must be unqualified");
            }
            return self.in_attached(slot, |e| e.create_table_inner(c));
        }
        let temp = c.temp
            || c.name
                .schema
                .as_deref()
                .is_some_and(|s| s.eq_ignore_ascii_case("temp"));
        self.in_schema(temp, |e| e.create_table_inner(c))
    }

    fn create_table_inner(&mut self, c: &ast::CreateTable) -> Result<Vec<Row>> {
        if self.temp_mode() {
            // A TEMP table may shadow a main table, but not another TEMP object.
            let k = key(&c.name.name);
            let clash = self
                .schema
                .tables
                .get(&k)
                .is_some_and(|t| t.root & super::store::TEMP_ROOT_BIT != 0);
            if clash {
                if c.if_not_exists {
                    return Ok(Vec::new());
                }
                return err(format!("table {} already exists", c.name.name));
            }
        } else if !self.check_new_name(&c.name, c.if_not_exists, "table")? {
            return Ok(Vec::new());
        }
        let (def, sql, rows): (ast::CreateTable, String, Vec<Row>) = match &c.body {
            CreateTableBody::Columns { .. } => (c.clone(), c.schema_sql.clone(), Vec::new()),
            CreateTableBody::AsSelect(sel) => {
                // The SELECT sees every database, also when the new table is attached.
                let full: &crate::schema::Schema =
                    self.outer_schema.as_ref().unwrap_or(self.schema);
                let plan = Binder::new(full).bind_select(sel)?;
                let mut ex = self.exec();
                ex.schema = full;
                let rows = ex.run_select(&plan, None)?;
                let mut cols_sql = Vec::new();
                let mut defs = Vec::new();
                let mut seen: Vec<String> = Vec::new();
                for col in &plan.columns {
                    // Duplicate names get ":1", ":2", ... suffixes as in SQLite.
                    let mut name = col.name.clone();
                    let mut n = 0;
                    while seen.iter().any(|s| s.eq_ignore_ascii_case(&name)) {
                        n += 1;
                        name = format!("{}:{n}", col.name);
                    }
                    seen.push(name.clone());
                    let ty = match col.sub_aff {
                        Some(Affinity::Text) => "TEXT",
                        Some(Affinity::Numeric) => "NUM",
                        Some(Affinity::Integer) => "INT",
                        Some(Affinity::Real) => "REAL",
                        _ => "",
                    };
                    cols_sql.push(if ty.is_empty() {
                        quote_ident(&name)
                    } else {
                        format!("{} {ty}", quote_ident(&name))
                    });
                    defs.push(ast::ColumnDef {
                        name,
                        type_name: if ty.is_empty() {
                            None
                        } else {
                            Some(ty.to_string())
                        },
                        constraints: Vec::new(),
                    });
                }
                // SQLite's createTableStmt: one line while the names are short, else a
                // column per line.
                let ident_len = |s: &str| s.len() + s.matches('"').count() + 2;
                let width = ident_len(&c.name.name)
                    + defs.iter().map(|d| ident_len(&d.name) + 5).sum::<usize>();
                let (sep, end) = if width < 50 {
                    (",", ")")
                } else {
                    (",\n  ", "\n)")
                };
                let sql = format!(
                    "CREATE TABLE {}({}{}{end}",
                    quote_ident(&c.name.name),
                    if width < 50 { "" } else { "\n  " },
                    cols_sql.join(sep)
                );
                let def = ast::CreateTable {
                    temp: false,
                    if_not_exists: false,
                    name: c.name.clone(),
                    body: CreateTableBody::Columns {
                        columns: defs,
                        constraints: Vec::new(),
                        without_rowid: false,
                        strict: false,
                    },
                    schema_sql: sql.clone(),
                };
                (def, sql, rows)
            }
        };
        if let CreateTableBody::Columns { columns, .. } = &def.body {
            columns.iter().try_for_each(check_default)?;
        }
        let (t, specs) = table_from_create(&def, 0)?;
        for c in &t.columns {
            c.collation.require()?;
        }
        check_checks(self.schema, &t)?;
        check_generated(self.schema, &t)?;
        if t.autoincrement && self.temp_mode() {
            return err("AUTOINCREMENT on TEMP tables is not supported");
        }
        // A WITHOUT ROWID table is an index B-tree keyed by its PRIMARY KEY, which is
        // therefore not a separate index (fileformat2.html §2.5).
        let root = if t.without_rowid {
            self.new_index_btree()?
        } else {
            self.new_table_btree()?
        };
        self.insert_schema_row("table", &t.name, &t.name, root, Some(&sql))?;
        for (i, spec) in specs.iter().enumerate() {
            if t.without_rowid && spec.origin == "pk" {
                continue;
            }
            let iroot = self.new_index_btree()?;
            let iname = format!("sqlite_autoindex_{}_{}", t.name, i + 1);
            self.insert_schema_row("index", &iname, &t.name, iroot, None)?;
        }
        if t.autoincrement && self.schema.table("sqlite_sequence").is_none() {
            let sroot = self.new_table_btree()?;
            self.insert_schema_row(
                "table",
                "sqlite_sequence",
                "sqlite_sequence",
                sroot,
                Some("CREATE TABLE sqlite_sequence(name,seq)"),
            )?;
        }
        self.schema_changed()?;
        if !rows.is_empty() {
            let t = self
                .schema
                .table(&c.name.name)
                .cloned()
                .ok_or_else(|| SqlError::msg("table vanished"))?;
            let w = self.writer(&t)?;
            for r in rows {
                self.write_row(&w, None, r, None, None)?;
            }
        }
        Ok(Vec::new())
    }

    /// Fills `ix` (a new or cleared index) with an entry for every row of `t`: the keys
    /// are computed, sorted, checked for UNIQUE duplicates next to each other, then the
    /// tree is built bottom up (`Store::index_fill`). Inserting each key with a descent
    /// and probing it for uniqueness cost ~5x SQLite (speedtest1 test 150: 603 ms vs 115).
    pub fn populate_index(&self, t: &Table, ix: &Index) -> Result<()> {
        let exec = self.exec();
        let defaults = exec.column_defaults(t);
        let pred = match &ix.partial {
            Some(p) => Some(Binder::new(self.schema).bind_for_table(t, None, p)?),
            None => None,
        };
        let exprs = super::dml::bind_index_exprs(&mut Binder::new(self.schema), t, ix)?;
        let (order, keys) = if t.without_rowid {
            let order = super::without_rowid::key_order_for(t, ix);
            let keys = self.index_keys_wr(t, ix, &defaults, pred.as_ref(), &exprs)?;
            (order, keys)
        } else {
            let order = super::eval::Exec::key_order(ix);
            (
                order,
                self.index_keys(t, ix, &defaults, pred.as_ref(), &exprs)?,
            )
        };
        let mut keys = keys;
        order.sort(&mut keys);
        if ix.unique {
            let n = ix.columns.len();
            for w in keys.windows(2) {
                let (a, b) = (&w[0][..n.min(w[0].len())], &w[1][..n.min(w[1].len())]);
                if !a.iter().any(|v| v.is_null()) && order.compare(a, b) == Ordering::Equal {
                    return Err(unique_index_failed(t, ix));
                }
            }
        }
        self.store.index_fill(ix.root, &order, keys)
    }

    /// The index keys of every row of the WITHOUT ROWID table `t` (entries end with the
    /// PRIMARY KEY suffix), in no particular order.
    fn index_keys_wr(
        &self,
        t: &Table,
        ix: &Index,
        defaults: &[Value],
        pred: Option<&CExpr>,
        exprs: &super::dml::IndexExprs,
    ) -> Result<Vec<Row>> {
        let exec = self.exec();
        let t = std::sync::Arc::new(t.clone());
        let rows: Vec<Row> = exec
            .table_rows(&t, defaults.to_vec())?
            .collect::<Result<_>>()?;
        let mut keys = Vec::with_capacity(rows.len());
        for full in rows {
            if let Some(p) = pred {
                if !exec.index_where_is_true(p, &Frame::new(&full, None))? {
                    continue;
                }
            }
            let vals = &full[..t.columns.len()];
            keys.push(super::without_rowid::index_key_wr(
                &exec, &t, ix, exprs, vals,
            )?);
        }
        Ok(keys)
    }

    /// The index keys (ending with the rowid) of every row of the rowid table `t`.
    fn index_keys(
        &self,
        t: &Table,
        ix: &Index,
        defaults: &[Value],
        pred: Option<&CExpr>,
        exprs: &super::dml::IndexExprs,
    ) -> Result<Vec<Row>> {
        let exec = self.exec();
        let gen = match t.has_virtual() {
            true => exec.generated_exprs(t)?,
            false => Vec::new(),
        };
        // A key of plain columns only, with no predicate and no generated column to
        // compute, decodes just those columns of each record (the others read NULL, and
        // the fields after the last one are not read): speedtest1 test 150's row decoding
        // went from 187M to 161M instructions (two of its five indexes skip a TEXT
        // column; callgrind), more on a wide table.
        let plain =
            pred.is_none() && !t.has_generated() && ix.columns.iter().all(|c| c.expr.is_none());
        let rows = if plain {
            let mut needed = vec![false; t.columns.len()];
            for i in ix.columns.iter().filter_map(|c| c.column) {
                if let Some(n) = needed.get_mut(i) {
                    *n = true;
                }
            }
            self.store.table_range_cols(
                t.root,
                Bound::Unbounded,
                Bound::Unbounded,
                false,
                needed.into(),
            )?
        } else {
            self.store
                .table_range(t.root, Bound::Unbounded, Bound::Unbounded, false)?
        };
        let mut keys = Vec::new();
        for r in rows {
            let (rowid, vals) = r?;
            let mut full = expand_row(t, rowid, vals, defaults);
            exec.compute_generated(t, &gen, &mut full, true)?;
            if let Some(p) = pred {
                if !exec.index_where_is_true(p, &Frame::new(&full, None))? {
                    continue;
                }
            }
            keys.push(super::dml::index_key(
                &exec,
                ix,
                exprs,
                &full[..t.columns.len()],
                rowid,
            )?);
        }
        Ok(keys)
    }

    pub fn create_index(&mut self, c: &ast::CreateIndex) -> Result<Vec<Row>> {
        if let Some(slot) = self.attached_target(c.name.schema.as_deref())? {
            return self.in_attached(slot, |e| e.create_index_inner(c));
        }
        let table_temp = self
            .schema
            .table(&c.table)
            .map(|t| t.root & super::store::TEMP_ROOT_BIT != 0);
        // An index lives in its table's database; naming `temp` for a main table's index
        // is sqlite3CreateIndex's error, and `main` looks for the table in main only.
        let temp = match c.name.schema.as_deref() {
            Some(s) if s.eq_ignore_ascii_case("temp") => {
                if table_temp == Some(false) {
                    return err(format!(
                        "cannot create a TEMP index on non-TEMP table \"{}\"",
                        c.table
                    ));
                }
                true
            }
            Some(_) => false,
            None => table_temp == Some(true),
        };
        self.in_schema(temp, |e| e.create_index_inner(c))
    }

    fn create_index_inner(&mut self, c: &ast::CreateIndex) -> Result<Vec<Row>> {
        // `main.i` on a name a TEMP table shadows indexes the main table.
        let found = self.target_table(&c.table).and_then(|t| {
            if !self.temp_mode() && t.root & super::store::TEMP_ROOT_BIT != 0 {
                self.schema.shadowed.get(&key(&c.table)).cloned()
            } else {
                Some(t)
            }
        });
        let Some(t) = found else {
            if self.schema.views.contains_key(&key(&c.table)) {
                return err("views may not be indexed");
            }
            return err(format!("no such table: {}.{}", self.ddl_db_name(), c.table));
        };
        if key(&t.name).starts_with("sqlite_") {
            return err(format!("table {} may not be indexed", t.name));
        }
        if !self.check_new_name(&c.name, c.if_not_exists, "index")? {
            return Ok(Vec::new());
        }
        let mut ix = index_from_create(c, &t)?;
        for c in &ix.columns {
            c.collation.require()?;
        }
        for e in ix.columns.iter().filter_map(|c| c.expr.as_ref()) {
            refuse_rowid(&t, e)?;
        }
        if let Some(p) = &ix.partial {
            let bound = Binder::new(self.schema).bind_for_table(&t, None, p)?;
            super::dml::check_index_expr(&bound, "partial index WHERE clauses")?;
        }
        super::dml::bind_index_exprs(&mut Binder::new(self.schema), &t, &ix)?;
        ix.root = self.new_index_btree()?;
        self.populate_index(&t, &ix)?;
        self.insert_schema_row("index", &ix.name, &t.name, ix.root, Some(&c.schema_sql))?;
        self.schema_changed()?;
        Ok(Vec::new())
    }

    pub fn create_view(&mut self, c: &ast::CreateView) -> Result<Vec<Row>> {
        if let Some(slot) = self.attached_target(c.name.schema.as_deref())? {
            return self.in_attached(slot, |e| e.create_view_inner(c));
        }
        let named_temp = c
            .name
            .schema
            .as_deref()
            .is_some_and(|s| s.eq_ignore_ascii_case("temp"));
        if c.temp && c.name.schema.is_some() && !named_temp {
            return err("temporary table name must be unqualified");
        }
        // A TEMP view is a row of the temp schema table, as SQLite keeps it (so it is
        // listed in sqlite_temp_schema and a rolled-back CREATE or DROP is undone).
        self.in_schema(c.temp || named_temp, |e| e.create_view_inner(c))
    }

    fn create_view_inner(&mut self, c: &ast::CreateView) -> Result<Vec<Row>> {
        if !self.check_new_name(&c.name, c.if_not_exists, "view")? {
            return Ok(Vec::new());
        }
        // As SQLite, a view's names are resolved when it is used, not here: a view may name
        // tables, columns and functions that do not exist yet (`no such table` etc. come from
        // the statement that reads it; parameters are refused by the parser).
        // A view stored in main or an attached database reads only that database's tables
        // by name (sqlite3FixSelect); a TEMP view may name any.
        if !self.temp_mode() {
            if let Some(other) =
                crate::parse::fix::foreign_db_in_select(&c.select, self.ddl_db_name())
            {
                return err(format!(
                    "view {} cannot reference objects in database {other}",
                    c.name.name
                ));
            }
        }
        let v = view_from_create(c);
        self.insert_schema_row("view", &v.name, &v.name, 0, Some(&c.schema_sql))?;
        self.schema_changed()?;
        Ok(Vec::new())
    }

    pub fn create_trigger(&mut self, c: &ast::CreateTrigger) -> Result<Vec<Row>> {
        if let Some(slot) = self.attached_target(c.name.schema.as_deref())? {
            return self.in_attached(slot, |e| e.create_trigger_inner(c));
        }
        let on_temp = self
            .schema
            .table_in(c.table_schema.as_deref(), &c.table)
            .is_some_and(|t| t.root & super::store::TEMP_ROOT_BIT != 0);
        self.in_schema(c.temp || on_temp, |e| e.create_trigger_inner(c))
    }

    fn create_trigger_inner(&mut self, c: &ast::CreateTrigger) -> Result<Vec<Row>> {
        if let Some(s) = &c.name.schema {
            if !s.eq_ignore_ascii_case(self.ddl_db_name()) {
                return err(format!("unknown database {s}"));
            }
        }
        if let Some(ts) = &c.table_schema {
            // SQLite's sqlite3FixSrcList: a trigger lives in its table's database (TEMP
            // triggers excepted).
            if !self.temp_mode() && !ts.eq_ignore_ascii_case(self.ddl_db_name()) {
                return err(format!(
                    "trigger {} cannot reference objects in database {ts}",
                    c.name.name
                ));
            }
        }
        let qualified = c.body.iter().any(|st| match st {
            Stmt::Insert(i) => i.table.schema.is_some(),
            Stmt::Update(u) => u.table.schema.is_some(),
            Stmt::Delete(d) => d.table.schema.is_some(),
            _ => false,
        });
        if qualified {
            return err(
                "qualified table names are not allowed on INSERT, UPDATE, and DELETE \
                 statements within triggers",
            );
        }
        if self.schema.triggers.contains_key(&key(&c.name.name)) {
            if c.if_not_exists {
                return Ok(Vec::new());
            }
            return err(format!("trigger {} already exists", c.name.name));
        }
        let is_view = self.schema.views.contains_key(&key(&c.table));
        if is_view {
            if c.time != Some(ast::TriggerTime::InsteadOf) {
                let when = match c.time {
                    Some(ast::TriggerTime::After) => "AFTER",
                    _ => "BEFORE",
                };
                return err(format!("cannot create {when} trigger on view: {}", c.table));
            }
            let vname = self
                .schema
                .views
                .get(&key(&c.table))
                .map(|v| v.name.clone())
                .unwrap_or_else(|| c.table.clone());
            self.check_trigger_databases(c)?;
            self.insert_schema_row("trigger", &c.name.name, &vname, 0, Some(&c.schema_sql))?;
            self.schema_changed()?;
            return Ok(Vec::new());
        }
        let Some(t) = self.target_table(&c.table) else {
            return err(format!("no such table: {}.{}", self.ddl_db_name(), c.table));
        };
        if c.time == Some(ast::TriggerTime::InsteadOf) {
            return err(format!(
                "cannot create INSTEAD OF trigger on table: {}",
                t.name
            ));
        }
        if key(&t.name).starts_with("sqlite_") {
            return err("cannot create trigger on system table");
        }
        self.check_trigger_databases(c)?;
        self.insert_schema_row("trigger", &c.name.name, &t.name, 0, Some(&c.schema_sql))?;
        self.schema_changed()?;
        Ok(Vec::new())
    }

    /// With foreign keys on, dropping a parent table first deletes its rows as a DELETE
    /// without triggers would (sqlite3FkDropTable; foreignkeys.html 5): the children's
    /// ON DELETE actions run, and a child row left without its parent fails the DROP with
    /// `FOREIGN KEY constraint failed` (a deferred key waits for COMMIT).
    fn empty_parent_before_drop(&mut self, t: &std::sync::Arc<Table>) -> Result<()> {
        if !self.fk_on() || self.children_of(t).is_empty() {
            return Ok(());
        }
        let del = ast::Delete {
            with: None,
            table: self.fk_name(t, &t.name),
            alias: None,
            indexed: None,
            where_: None,
            returning: Vec::new(),
            order_by: Vec::new(),
            limit: None,
        };
        let bound = super::BoundDml {
            table: t.clone(),
            event: ast::TriggerEvent::Delete,
            sets: Vec::new(),
            targets: Vec::new(),
            before: Vec::new(),
            after: Vec::new(),
        };
        self.fk_statement(|e| e.delete_rows(&del, &bound))?;
        Ok(())
    }

    /// A trigger stored in main or an attached database reads only that database's tables
    /// by name (sqlite3FixTriggerStep); a TEMP trigger may name any.
    fn check_trigger_databases(&self, c: &ast::CreateTrigger) -> Result<()> {
        if self.temp_mode() {
            return Ok(());
        }
        let db = self.ddl_db_name();
        match crate::parse::fix::foreign_db_in_trigger(c.when.as_ref(), &c.body, db) {
            Some(other) => err(format!(
                "trigger {} cannot reference objects in database {other}",
                c.name.name
            )),
            None => Ok(()),
        }
    }

    pub fn drop(
        &mut self,
        kind: ObjectKind,
        if_exists: bool,
        name: &ast::QualifiedName,
    ) -> Result<Vec<Row>> {
        let slot = match self.attached_target(name.schema.as_deref()) {
            Ok(None) if name.schema.is_none() => self.attached_holder(kind, &name.name),
            Ok(slot) => slot,
            Err(e) if if_exists => {
                let _ = e;
                return Ok(Vec::new());
            }
            Err(e) => return Err(e),
        };
        if let Some(slot) = slot {
            return self.in_attached(slot, |e| e.drop_inner(kind, if_exists, name));
        }
        let k = key(&name.name);
        let bit = super::store::TEMP_ROOT_BIT;
        let temp = match kind {
            // `temp.t` / `main.t` name that database's table (`main.t` one a TEMP table
            // hides: `drop_inner`).
            ObjectKind::Table => match name.schema.as_deref() {
                Some(s) if s.eq_ignore_ascii_case("temp") => true,
                Some(_) => false,
                None => self
                    .schema
                    .tables
                    .get(&k)
                    .is_some_and(|t| t.root & bit != 0),
            },
            ObjectKind::Index => self
                .schema
                .indexes
                .get(&k)
                .is_some_and(|i| i.root & bit != 0),
            ObjectKind::Trigger => self.schema.triggers.get(&k).is_some_and(|t| {
                self.schema
                    .table(&t.table)
                    .is_some_and(|tab| tab.root & bit != 0)
                    || t.def.temp
            }),
            ObjectKind::View => match name.schema.as_deref() {
                Some(s) => s.eq_ignore_ascii_case("temp"),
                None => self.schema.temp_views.contains_key(&k),
            },
        };
        self.in_schema(temp, |e| e.drop_inner(kind, if_exists, name))
    }

    fn drop_inner(
        &mut self,
        kind: ObjectKind,
        if_exists: bool,
        name: &ast::QualifiedName,
    ) -> Result<Vec<Row>> {
        let k = key(&name.name);
        match kind {
            ObjectKind::Table => {
                let temp_mode = self.temp_mode();
                let found = self.target_table(&name.name).and_then(|t| {
                    match (temp_mode, t.root & super::store::TEMP_ROOT_BIT != 0) {
                        (false, true) => self.schema.shadowed.get(&k).cloned(),
                        (true, false) => None,
                        _ => Some(t),
                    }
                });
                let Some(t) = found else {
                    if self.schema.views.contains_key(&k) {
                        return err(format!("use DROP VIEW to delete view {}", name.name));
                    }
                    if if_exists {
                        return Ok(Vec::new());
                    }
                    if matches!(
                        k.as_str(),
                        "sqlite_master"
                            | "sqlite_schema"
                            | "sqlite_temp_master"
                            | "sqlite_temp_schema"
                    ) {
                        return err(match k.contains("temp") {
                            true => "table sqlite_temp_master may not be dropped",
                            false => "table sqlite_master may not be dropped",
                        });
                    }
                    return err(match &name.schema {
                        Some(s) => format!("no such table: {s}.{}", name.name),
                        None => format!("no such table: {}", name.name),
                    });
                };
                if k == "sqlite_sequence" {
                    return err("table sqlite_sequence may not be dropped");
                }
                self.empty_parent_before_drop(&t)?;
                for ix in self.schema.table_indexes(&t) {
                    // A WITHOUT ROWID table's PRIMARY KEY index is the table tree itself.
                    if ix.root != 0 && ix.root != t.root {
                        self.store.drop_btree(ix.root)?;
                    }
                }
                self.store.drop_btree(t.root)?;
                for (rowid, row) in self.schema_rows()? {
                    let tbl = row
                        .get(2)
                        .and_then(|v| v.to_text().map(|s| s.into_owned()))
                        .unwrap_or_default();
                    if tbl.eq_ignore_ascii_case(&t.name) {
                        self.store.table_delete(self.schema_root, rowid)?;
                    }
                }
                self.delete_temp_triggers_on(&k)?;
                if t.autoincrement {
                    if let Some(seq) = self.target_table("sqlite_sequence") {
                        let mut del = Vec::new();
                        for r in self.store.table_range(
                            seq.root,
                            Bound::Unbounded,
                            Bound::Unbounded,
                            false,
                        )? {
                            let (rowid, vals) = r?;
                            if vals
                                .first()
                                .and_then(|v| v.to_text())
                                .is_some_and(|n| n.eq_ignore_ascii_case(&t.name))
                            {
                                del.push(rowid);
                            }
                        }
                        for r in del {
                            self.store.table_delete(seq.root, r)?;
                        }
                    }
                }
            }
            ObjectKind::Index => {
                let Some(ix) = self.schema.indexes.get(&k).cloned() else {
                    if if_exists {
                        return Ok(Vec::new());
                    }
                    return err(format!("no such index: {}", name.name));
                };
                if ix.sql.is_none() {
                    return err(
                        "index associated with UNIQUE or PRIMARY KEY constraint cannot be dropped",
                    );
                }
                self.store.drop_btree(ix.root)?;
                self.delete_schema_entry("index", &ix.name)?;
            }
            ObjectKind::View => {
                if !self.schema.views.contains_key(&k) {
                    if self.schema.table(&name.name).is_some() {
                        return err(format!("use DROP TABLE to delete table {}", name.name));
                    }
                    if if_exists {
                        return Ok(Vec::new());
                    }
                    return err(format!("no such view: {}", name.name));
                }
                self.delete_schema_entry("view", &name.name)?;
                // Its INSTEAD OF triggers go with it, as a table's triggers do.
                self.delete_triggers_on(&name.name, false)?;
                self.delete_temp_triggers_on(&k)?;
            }
            ObjectKind::Trigger => {
                if !self.schema.triggers.contains_key(&k) {
                    if if_exists {
                        return Ok(Vec::new());
                    }
                    return err(format!("no such trigger: {}", name.name));
                }
                self.delete_schema_entry("trigger", &name.name)?;
            }
        }
        self.schema_changed()?;
        Ok(Vec::new())
    }

    /// Deletes the triggers on `table` from the schema table at `schema_root`; with
    /// `only_main`, only those whose CREATE TRIGGER says `ON main.table`.
    fn delete_triggers_on(&self, table: &str, only_main: bool) -> Result<()> {
        for (rowid, row) in self.schema_rows()? {
            let mut on_it = row[0].to_text_or_empty() == "trigger"
                && row[2].to_text_or_empty().eq_ignore_ascii_case(table);
            if on_it && only_main {
                on_it = match crate::parse::parse_first(&row[4].to_text_or_empty()) {
                    Ok(Some(p)) => matches!(&p.stmt, Stmt::CreateTrigger(c)
                        if c.table_schema.as_deref().is_some_and(|s| s.eq_ignore_ascii_case("main"))),
                    _ => false,
                };
            }
            if on_it {
                self.store.table_delete(self.schema_root, rowid)?;
            }
        }
        Ok(())
    }

    /// A main table or view being dropped takes the TEMP triggers on it along (SQLite
    /// keeps them in the temp schema but on the main object). When a TEMP table of that
    /// name exists, an unqualified `ON t` is taken to name it (as it would be now), so only
    /// the triggers made `ON main.t` go.
    fn delete_temp_triggers_on(&mut self, k: &str) -> Result<()> {
        let temp_table = self
            .schema
            .tables
            .get(k)
            .is_some_and(|t| t.root & super::store::TEMP_ROOT_BIT != 0);
        if self.temp_mode() || self.outer_schema.is_some() || !self.store.has_temp() {
            return Ok(());
        }
        let saved = self.schema_root;
        self.schema_root = super::TEMP_SCHEMA_ROOT;
        let r = self.delete_triggers_on(k, temp_table);
        self.schema_root = saved;
        r
    }

    fn delete_schema_entry(&self, ty: &str, name: &str) -> Result<()> {
        for (rowid, row) in self.schema_rows()? {
            let t = row
                .first()
                .and_then(|v| v.to_text().map(|s| s.into_owned()))
                .unwrap_or_default();
            let n = row
                .get(1)
                .and_then(|v| v.to_text().map(|s| s.into_owned()))
                .unwrap_or_default();
            if t == ty && n.eq_ignore_ascii_case(name) {
                self.store.table_delete(self.schema_root, rowid)?;
            }
        }
        Ok(())
    }

    /// Every tree of the database with root bits `bits`, with its key order (None: a rowid
    /// table); a WITHOUT ROWID table's PRIMARY KEY index is the table's own tree. The flag
    /// says whether some table was left out (its schema is write-blocked).
    pub(crate) fn vacuum_trees(
        &self,
        bits: u32,
    ) -> (Vec<(u32, Option<super::store::KeyOrder>)>, bool) {
        let mut trees: Vec<(u32, Option<super::store::KeyOrder>)> = Vec::new();
        let mut blocked = false;
        let mut tables: Vec<_> = self.schema.tables.values().cloned().collect();
        tables.sort_by(|a, b| a.name.cmp(&b.name));
        for t in tables {
            if super::store::db_bits(t.root) != bits {
                continue;
            }
            if self.schema.write_blocked.contains_key(&key(&t.name)) {
                blocked = true;
                continue;
            }
            let order = t
                .without_rowid
                .then(|| super::without_rowid::WrLayout::of(&t).order);
            if t.root != 0 && !trees.iter().any(|(r, _)| *r == t.root) {
                trees.push((t.root, order));
            }
            for ix in self.schema.table_indexes(&t) {
                if ix.root == 0 || trees.iter().any(|(r, _)| *r == ix.root) {
                    continue;
                }
                let order = super::without_rowid::key_order_for(&t, &ix);
                trees.push((ix.root, Some(order)));
            }
        }
        (trees, blocked)
    }

    /// VACUUM (lang_vacuum.html) of main or, inside `in_attached`, of an attached database:
    /// rebuilds every table and index (rows keep their rowids) and rewrites the root pages
    /// in `sqlite_schema`, by `Store::vacuum_compact` where the store can (no free page
    /// left, the file shrinks), else tree by tree into fresh B-trees, freeing the old ones.
    pub fn vacuum(&mut self) -> Result<Vec<Row>> {
        // Main (bits 0) or, inside `in_attached`, an attached database (its bits).
        let bits = super::store::db_bits(self.schema_root);
        if self.schema_root != 1 | bits || bits == super::store::TEMP_ROOT_BIT {
            return err("VACUUM of this database is not supported");
        }
        // Root numbers in the schema rows are the file's own, without the bits.
        let plain = |r: u32| r & !bits;
        let (trees, blocked) = self.vacuum_trees(bits);
        let rows = self.schema_rows()?;
        // Compaction empties the file: only when every tree a schema row names is known.
        let named = |r: u32| r == 0 || trees.iter().any(|(t, _)| plain(*t) == r);
        let all_named = !blocked
            && rows
                .iter()
                .all(|(_, row)| named(row.get(3).map(|v| v.to_i64()).unwrap_or(0) as u32));
        let compacted = if all_named {
            self.store.vacuum_compact(&trees)?
        } else {
            None
        };
        let copied = compacted.is_none();
        let new_roots = match compacted {
            // Every tree rebuilt on fresh pages after the database was emptied down to
            // page 1: the file shrinks to what it holds (`freelist_count` 0), as SQLite's.
            Some(roots) => roots,
            None => {
                if bits != 0 {
                    // The copies below create trees in main: never for an attached database.
                    return err("VACUUM of this attached database is not supported");
                }
                // Tree by tree, records and keys copied as stored and built bottom up
                // (`Store::table_copy`/`index_copy`); the old trees' pages go to the
                // freelist and the file keeps its size.
                let mut roots = Vec::with_capacity(trees.len());
                for (old, order) in &trees {
                    roots.push(match order {
                        None => {
                            let root = self.store.create_table_btree()?;
                            self.store.table_copy(*old, root)?;
                            root
                        }
                        Some(order) => {
                            let root = self.store.create_index_btree()?;
                            self.store.index_copy(*old, root, order)?;
                            root
                        }
                    });
                }
                roots
            }
        };
        for (rowid, mut row) in rows {
            let old = row.get(3).map(|v| v.to_i64()).unwrap_or(0) as u32;
            if old == 0 {
                continue;
            }
            if let Some(i) = trees.iter().position(|(r, _)| plain(*r) == old) {
                row[3] = Value::Integer(i64::from(plain(new_roots[i])));
                self.store.table_insert(self.schema_root, rowid, &row)?;
            }
        }
        if copied {
            for (old, _) in &trees {
                self.store.drop_btree(*old)?;
            }
        }
        self.schema_changed()?;
        Ok(Vec::new())
    }

    /// ANALYZE: writes `sqlite_stat1` (tbl, idx, stat) as SQLite does: for each index
    /// "rows n1 n2 ..." where nk is the average number of rows sharing the first k columns,
    /// and for a table without indexes a row with a NULL idx. Empty tables get no row.
    pub fn analyze(&mut self, target: Option<&ast::QualifiedName>) -> Result<Vec<Row>> {
        // This database's own statistics table (not an attached database's).
        if !self.schema.tables.contains_key("sqlite_stat1") {
            let root = self.new_table_btree()?;
            self.insert_schema_row(
                "table",
                "sqlite_stat1",
                "sqlite_stat1",
                root,
                Some("CREATE TABLE sqlite_stat1(tbl,idx,stat)"),
            )?;
            self.schema_changed()?;
        }
        let stat = self
            .schema
            .tables
            .get("sqlite_stat1")
            .cloned()
            .ok_or_else(|| SqlError::msg("sqlite_stat1 missing"))?;
        let mut tables: Vec<_> = self
            .schema
            .tables
            .values()
            .filter(|t| !key(&t.name).starts_with("sqlite_"))
            .cloned()
            .collect();
        // `ANALYZE idx` (a name that is an index, not a table) measures that index alone and
        // replaces only its row, as SQLite's analyzeIndex.
        let only_idx = target
            .filter(|n| self.schema.table(&n.name).is_none())
            .and_then(|n| {
                tables.iter().find_map(|t| {
                    self.schema
                        .table_indexes(t)
                        .iter()
                        .find(|i| i.name.eq_ignore_ascii_case(&n.name))
                        .map(|i| i.name.clone())
                })
            });
        if let Some(n) = target {
            tables.retain(|t| {
                t.name.eq_ignore_ascii_case(&n.name)
                    || self
                        .schema
                        .table_indexes(t)
                        .iter()
                        .any(|i| i.name.eq_ignore_ascii_case(&n.name))
            });
            if tables.is_empty()
                && !["main", "sqlite_schema", "sqlite_master"]
                    .iter()
                    .any(|x| n.name.eq_ignore_ascii_case(x))
                && self.schema.table(&n.name).is_none()
            {
                return err(format!("no such table: {}", n.name));
            }
        }
        tables.sort_by(|a, b| a.name.cmp(&b.name));
        // Replace the old statistics of the analyzed tables.
        let mut old = Vec::new();
        for r in self
            .store
            .table_range(stat.root, Bound::Unbounded, Bound::Unbounded, false)?
        {
            let (rowid, vals) = r?;
            let tbl = vals
                .first()
                .map(|v| v.to_text_or_empty().into_owned())
                .unwrap_or_default();
            let idx_matches = match &only_idx {
                None => true,
                Some(i) => vals
                    .get(1)
                    .is_some_and(|v| v.to_text_or_empty().eq_ignore_ascii_case(i)),
            };
            if idx_matches && tables.iter().any(|t| t.name.eq_ignore_ascii_case(&tbl)) {
                old.push(rowid);
            }
        }
        for r in old {
            self.store.table_delete(stat.root, r)?;
        }
        for t in tables {
            // Counted page by page where the store can (`Txn::count`): decoding every row
            // to count it was a fifth of speedtest1 test 990's instructions (callgrind).
            let nrows = if t.without_rowid {
                let layout = super::without_rowid::WrLayout::shared(&t);
                self.store.index_entry_count(t.root, &layout.order)? as u64
            } else {
                self.store.table_row_count(t.root)?
            };
            if nrows == 0 {
                continue;
            }
            let ixs = self.schema.table_indexes(&t);
            let mut entries: Vec<(Value, String)> = Vec::new();
            // As SQLite's analyzeOneTable: the table's own row (NULL idx, its row count) is
            // written when no index covering every row was measured (none, or only partial
            // ones), after the indexes' rows. A partial index no row satisfies gets "0 0"
            // (SQLite 3.50; 3.40 wrote no row).
            let mut need_table_count = only_idx.is_none();
            for ix in ixs {
                if ix.root == 0 {
                    continue;
                }
                if only_idx.as_ref().is_some_and(|i| *i != ix.name) {
                    continue;
                }
                if ix.partial.is_none() {
                    need_table_count = false;
                }
                let order = super::eval::Exec::key_order(&ix);
                let ncols = ix.columns.len().min(order.columns.len());
                let (nkeys, distinct) = self.store.index_prefix_counts(ix.root, &order, ncols)?;
                let mut parts = vec![nkeys.to_string()];
                for d in distinct {
                    parts.push(((nkeys + d.max(1) - 1) / d.max(1)).to_string());
                }
                // SQLite names a WITHOUT ROWID table's PRIMARY KEY statistics after the table.
                let idx = if t.without_rowid && ix.root == t.root {
                    t.name.as_str()
                } else {
                    ix.name.as_str()
                };
                entries.push((Value::text(idx), parts.join(" ")));
            }
            if need_table_count {
                entries.push((Value::Null, nrows.to_string()));
            }
            for (idx, s) in entries {
                let rowid = self.store.table_max_rowid(stat.root)?.unwrap_or(0) + 1;
                self.store.table_insert(
                    stat.root,
                    rowid,
                    &[Value::text(t.name.as_str()), idx, Value::text(s)],
                )?;
            }
        }
        Ok(Vec::new())
    }

    pub fn alter(&mut self, table: &ast::QualifiedName, action: &AlterAction) -> Result<Vec<Row>> {
        if matches!(action, AlterAction::RenameTable(_)) {
            // SQLite opens the temp database to rewrite TEMP triggers that name the table.
            self.schema.temp_shown.set(true);
        }
        let slot = match self.attached_target(table.schema.as_deref())? {
            None if table.schema.is_none() => self.attached_holder(ObjectKind::Table, &table.name),
            slot => slot,
        };
        if let Some(slot) = slot {
            return self.in_attached(slot, |e| e.alter_inner(table, action));
        }
        let temp = self
            .schema
            .table(&table.name)
            .is_some_and(|t| t.root & super::store::TEMP_ROOT_BIT != 0);
        self.in_schema(temp, |e| e.alter_inner(table, action))
    }

    fn alter_inner(
        &mut self,
        table: &ast::QualifiedName,
        action: &AlterAction,
    ) -> Result<Vec<Row>> {
        if matches!(
            key(&table.name).as_str(),
            "sqlite_schema" | "sqlite_master" | "sqlite_temp_schema" | "sqlite_temp_master"
        ) {
            return err("table sqlite_master may not be altered");
        }
        let Some(t) = self.target_table(&table.name) else {
            if let Some(v) = self.schema.views.get(&key(&table.name)) {
                // alter.c's refusals for a view, each in its own words.
                return err(match action {
                    AlterAction::RenameTable(_) => format!("view {} may not be altered", v.name),
                    AlterAction::AddColumn { .. } => "Cannot add a column to a view".to_string(),
                    AlterAction::RenameColumn { .. } => {
                        format!("cannot rename columns of view \"{}\"", v.name)
                    }
                    AlterAction::DropColumn { .. } => {
                        format!("cannot drop column from view \"{}\"", v.name)
                    }
                });
            }
            return err(format!("no such table: {}", table.name));
        };
        if key(&t.name).starts_with("sqlite_") {
            return err(format!("table {} may not be altered", t.name));
        }
        match action {
            AlterAction::RenameTable(new) => {
                if self.schema.name_in_use(new).is_some() {
                    return err(format!(
                        "there is already another table or index with this name: {new}"
                    ));
                }
                if key(new).starts_with("sqlite_") {
                    return err(format!("object name reserved for internal use: {new}"));
                }
                let quoted_new = format!("\"{}\"", new.replace('"', "\"\""));
                let renaming = Renaming::Table { old: &t.name, new };
                self.rename_objects(&renaming)?;
                for (rowid, mut row) in self.schema_rows()? {
                    let ty = row[0].to_text_or_empty().into_owned();
                    let tbl = row[2].to_text_or_empty().into_owned();
                    if matches!(ty.as_str(), "view" | "trigger") {
                        continue;
                    }
                    if !tbl.eq_ignore_ascii_case(&t.name) {
                        // Another table's foreign keys name the new parent (SQLite rewrites
                        // REFERENCES clauses unless legacy_alter_table is on).
                        if ty == "table" && !row[4].is_null() {
                            let sql = row[4].to_text_or_empty().into_owned();
                            let new_sql = rename_references(&sql, &t.name, Some(&quoted_new), None);
                            if new_sql != sql {
                                row[4] = Value::text(new_sql);
                                self.store.table_insert(self.schema_root, rowid, &row)?;
                            }
                        }
                        continue;
                    }
                    let sql = row.get(4).and_then(|v| v.to_text().map(|s| s.into_owned()));
                    let new_sql = sql.map(|s| {
                        let s = rename_in_sql(&s, &ty, &t.name, new);
                        if ty == "table" {
                            rename_references(&s, &t.name, Some(&quoted_new), None)
                        } else {
                            s
                        }
                    });
                    if ty == "table" {
                        row[1] = Value::text(new.as_str());
                    } else if ty == "index" && row[4].is_null() {
                        let n = row[1].to_text_or_empty().into_owned();
                        row[1] = Value::text(n.replacen(
                            &format!("sqlite_autoindex_{}_", t.name),
                            &format!("sqlite_autoindex_{new}_"),
                            1,
                        ));
                    }
                    row[2] = Value::text(new.as_str());
                    if let Some(s) = new_sql {
                        row[4] = Value::text(s);
                    }
                    self.store.table_insert(self.schema_root, rowid, &row)?;
                }
                if t.autoincrement {
                    // The sequence follows the table (alter.c's UPDATE of sqlite_sequence).
                    if let Some((root, rowid, seq)) = self.sequence_row(&t)? {
                        self.store.table_insert(
                            root,
                            rowid,
                            &[Value::text(new.as_str()), Value::Integer(seq)],
                        )?;
                    }
                }
                self.finish_rename()?;
                return Ok(Vec::new());
            }
            AlterAction::AddColumn { def: cd, text } => {
                check_default(cd)?;
                if t.column_index(&cd.name).is_some() {
                    return err(format!("duplicate column name: {}", cd.name));
                }
                let mut default_null = true;
                let mut generated = false;
                let empty = self
                    .store
                    .table_range(t.root, Bound::Unbounded, Bound::Unbounded, false)?
                    .next()
                    .is_none();
                for c in &cd.constraints {
                    match &c.constraint {
                        ast::ColumnConstraint::PrimaryKey { .. } => {
                            return err("Cannot add a PRIMARY KEY column")
                        }
                        ast::ColumnConstraint::Unique { .. } => {
                            return err("Cannot add a UNIQUE column")
                        }
                        ast::ColumnConstraint::Generated { stored, .. } => {
                            generated = true;
                            if *stored && !empty {
                                return err("cannot add a STORED column");
                            }
                        }
                        // SQLite refuses what sqlite3ValueFromExpr cannot compute only when
                        // rows exist to take the value (sqlite3ErrorIfNotEmpty).
                        ast::ColumnConstraint::Default { expr, .. } => {
                            if !default_is_constant(expr) && !empty {
                                return err("Cannot add a column with non-constant default");
                            }
                            default_null = matches!(expr, ast::Expr::Literal(ast::Literal::Null));
                        }
                        _ => {}
                    }
                }
                if default_null
                    && !generated
                    && !empty
                    && cd
                        .constraints
                        .iter()
                        .any(|c| matches!(c.constraint, ast::ColumnConstraint::NotNull { .. }))
                {
                    return err("Cannot add a NOT NULL column with default value NULL");
                }
                for (rowid, mut row) in self.schema_rows()? {
                    if row[0].to_text_or_empty() == "table"
                        && row[1].to_text_or_empty().eq_ignore_ascii_case(&t.name)
                    {
                        let sql = row[4].to_text_or_empty().into_owned();
                        // After the last column definition, before any table constraint
                        // (SQLite's `addColOffset`).
                        let Some(p) = top_level_items(&sql)
                            .get(t.columns.len().saturating_sub(1))
                            .map(|&(_, end)| end)
                        else {
                            return err("malformed table definition");
                        };
                        let new_sql = format!("{}, {}{}", &sql[..p], text, &sql[p..]);
                        // Validate before writing.
                        match crate::parse::parse_first(&new_sql) {
                            Ok(Some(p)) => match &p.stmt {
                                Stmt::CreateTable(ct) => {
                                    // As SQLite's check of the rewritten schema, the
                                    // new table's own errors (a STRICT table's unknown
                                    // type) are reported after the ALTER too.
                                    table_from_create(ct, t.root)
                                        .and_then(|(nt, _)| {
                                            check_checks(self.schema, &nt)?;
                                            check_generated(self.schema, &nt)
                                        })
                                        .map_err(|e| {
                                            SqlError::msg(format!(
                                                "error in table {} after add column: {e}",
                                                t.name
                                            ))
                                        })?;
                                }
                                _ => return err("malformed table definition after ADD COLUMN"),
                            },
                            _ => return err("malformed table definition after ADD COLUMN"),
                        }
                        row[4] = Value::text(new_sql);
                        self.store.table_insert(self.schema_root, rowid, &row)?;
                    }
                }
            }
            AlterAction::RenameColumn {
                old,
                new,
                new_quoted,
            } => {
                let Some(ci) = t.column_index(old) else {
                    return err(format!("no such column: \"{old}\""));
                };
                if let Some(other) = t.column_index(new).filter(|&i| i != ci) {
                    return err(format!(
                        "error in table {} after rename: duplicate column name: {}",
                        t.name, t.columns[other].name
                    ));
                }
                let old_name = t.columns[ci].name.clone();
                let renaming = Renaming::Column {
                    table: &t.name,
                    old: &old_name,
                    new,
                    quoted: *new_quoted,
                    rowid_alias: t.rowid_alias == Some(ci),
                };
                let column = (old_name.as_str(), new.as_str(), *new_quoted);
                self.rename_objects(&renaming)?;
                for (rowid, mut row) in self.schema_rows()? {
                    let ty = row[0].to_text_or_empty().into_owned();
                    let tbl = row[2].to_text_or_empty().into_owned();
                    if row[4].is_null() || matches!(ty.as_str(), "view" | "trigger") {
                        continue;
                    }
                    let sql = row[4].to_text_or_empty().into_owned();
                    let new_sql = if !tbl.eq_ignore_ascii_case(&t.name) {
                        // Another table's foreign keys name the parent's columns.
                        if ty != "table" {
                            continue;
                        }
                        rename_references(&sql, &t.name, None, Some(column))
                    } else {
                        rename_column_in_sql(&sql, &t.name, column, ty == "table")
                    };
                    if new_sql != sql {
                        row[4] = Value::text(new_sql);
                        self.store.table_insert(self.schema_root, rowid, &row)?;
                    }
                }
                self.finish_rename()?;
                return Ok(Vec::new());
            }
            AlterAction::DropColumn(name) => {
                let Some(ci) = t.column_index(name) else {
                    return err(format!("no such column: \"{name}\""));
                };
                let cname = t.columns[ci].name.clone();
                if t.columns[ci].pk > 0 {
                    return err(format!("cannot drop PRIMARY KEY column: \"{cname}\""));
                }
                for ix in self.schema.table_indexes(&t) {
                    let in_expr = ix.columns.iter().any(|c| {
                        c.expr
                            .as_ref()
                            .is_some_and(|e| expr_names_column(e, &cname))
                    });
                    if in_expr || ix.columns.iter().any(|c| c.column == Some(ci)) {
                        return err(if ix.sql.is_none() {
                            format!("cannot drop UNIQUE column: \"{cname}\"")
                        } else {
                            format!(
                                "error in index {} after drop column: no such column: {cname}",
                                ix.name
                            )
                        });
                    }
                }
                if t.columns.len() == 1 {
                    return err(format!(
                        "cannot drop column \"{cname}\": no other columns exist"
                    ));
                }
                // As SQLite's sqlite3AlterDropColumn: every view and trigger must resolve
                // before, and again after (checked below, once the schema is reloaded).
                self.check_views_and_triggers("")?;
                for (rowid, mut row) in self.schema_rows()? {
                    if row[0].to_text_or_empty() == "table"
                        && row[1].to_text_or_empty().eq_ignore_ascii_case(&t.name)
                    {
                        let sql = row[4].to_text_or_empty().into_owned();
                        let Some(new_sql) = drop_column_in_sql(&sql, ci) else {
                            return err("malformed table definition");
                        };
                        // The table as it will read: a CHECK of another column or of the
                        // table that names the column is an error; the column's own
                        // constraints went with its definition.
                        if let Ok(Some(p)) = crate::parse::parse_first(&new_sql) {
                            if let Stmt::CreateTable(ct) = &p.stmt {
                                let after = |e: SqlError| {
                                    SqlError::msg(format!(
                                        "error in table {} after drop column: {e}",
                                        t.name
                                    ))
                                };
                                let (nt, _) = table_from_create(ct, t.root).map_err(after)?;
                                if nt.checks.iter().any(|c| expr_names_column(&c.expr, &cname)) {
                                    return Err(after(SqlError::msg(format!(
                                        "no such column: {cname}"
                                    ))));
                                }
                                if t.has_generated() {
                                    check_generated(self.schema, &nt).map_err(after)?;
                                }
                            }
                        }
                        row[4] = Value::text(new_sql);
                        self.store.table_insert(self.schema_root, rowid, &row)?;
                    }
                }
                if t.without_rowid {
                    // Records hold the key first: the column's field is found by layout.
                    let layout = super::without_rowid::WrLayout::of(&t);
                    // A VIRTUAL column has no field: nothing to rewrite.
                    let pos = layout
                        .record
                        .iter()
                        .position(|&c| c == ci)
                        .unwrap_or(usize::MAX);
                    let mut recs = Vec::new();
                    for r in self.store.index_range(
                        t.root,
                        &layout.order,
                        Bound::Unbounded,
                        Bound::Unbounded,
                        false,
                    )? {
                        recs.push(r?);
                    }
                    for mut rec in recs {
                        if pos < rec.len() {
                            let pk = rec[..layout.pk.len()].to_vec();
                            self.store.index_delete(t.root, &pk, &layout.order)?;
                            rec.remove(pos);
                            self.store.index_insert(t.root, &rec, &layout.order)?;
                        }
                    }
                    self.schema_changed()?;
                    self.check_views_and_triggers(" after drop column")?;
                    return Ok(Vec::new());
                }
                // Rewrite every row without the column (rows may be shorter after ADD COLUMN).
                let mut rows = Vec::new();
                for r in
                    self.store
                        .table_range(t.root, Bound::Unbounded, Bound::Unbounded, false)?
                {
                    rows.push(r?);
                }
                // The column's place in the record: VIRTUAL columns have none.
                let at = (0..ci).filter(|&i| !t.is_virtual(i)).count();
                for (rowid, mut vals) in rows {
                    if !t.is_virtual(ci) && at < vals.len() {
                        vals.remove(at);
                        self.store.table_insert(t.root, rowid, &vals)?;
                    }
                }
            }
        }
        self.schema_changed()?;
        if matches!(action, AlterAction::DropColumn(_)) {
            self.check_views_and_triggers(" after drop column")?;
        }
        Ok(Vec::new())
    }
}

/// SQLite's refusals for a generated column's expression (gencol.html §2.3): it reads only
/// columns of its own row (not the rowid), and holds no parameters, subqueries or
/// non-deterministic functions (aggregates and window functions fail to bind).
/// A column's DEFAULT as SQLite takes it when it parses the definition
/// (sqlite3AddDefaultValue, sqlite3ExprIsConstantOrFunction): no column, subquery,
/// parameter, RAISE or window function; any other function, unknown or aggregate ones too,
/// is judged only when a row takes the default. Not applied to schemas read from a file
/// (SQLite's init is more lenient).
fn check_default(cd: &ast::ColumnDef) -> Result<()> {
    for c in &cd.constraints {
        let ast::ColumnConstraint::Default { expr, .. } = &c.constraint else {
            continue;
        };
        let mut stack = vec![expr];
        while let Some(e) = stack.pop() {
            let constant = match e {
                ast::Expr::Column {
                    table: None,
                    schema: None,
                    name,
                    ..
                } => name.eq_ignore_ascii_case("true") || name.eq_ignore_ascii_case("false"),
                ast::Expr::Column { .. }
                | ast::Expr::Param { .. }
                | ast::Expr::Exists(_)
                | ast::Expr::Subquery(_)
                | ast::Expr::InSelect { .. }
                | ast::Expr::InTable { .. }
                | ast::Expr::Raise { .. } => false,
                ast::Expr::Function(f) => f.over.is_none(),
                _ => true,
            };
            if !constant {
                return err(format!(
                    "default value of column [{}] is not constant",
                    cd.name
                ));
            }
            e.for_each_child(&mut |x| stack.push(x));
        }
    }
    Ok(())
}

/// CHECK constraints resolve against the new table when it is made (sqlite3EndTable,
/// NC_IsCheck): unknown columns and functions, aggregates, window functions, subqueries
/// and parameters are errors then, not when a row is first checked.
fn check_checks(schema: &crate::schema::Schema, t: &Table) -> Result<()> {
    for c in &t.checks {
        let mut stack = vec![&c.expr];
        while let Some(e) = stack.pop() {
            match e {
                ast::Expr::Param { .. } => {
                    return err("parameters prohibited in CHECK constraints")
                }
                ast::Expr::Exists(_)
                | ast::Expr::Subquery(_)
                | ast::Expr::InSelect { .. }
                | ast::Expr::InTable { .. } => {
                    return err("subqueries prohibited in CHECK constraints")
                }
                _ => {}
            }
            e.for_each_child(&mut |x| stack.push(x));
        }
        match crate::plan::Binder::new(schema).bind_for_table(t, None, &c.expr) {
            // A collation is looked up when the constraint is coded, at the first write.
            Err(e) if e.to_string().starts_with("no such collation sequence") => {}
            r => {
                r?;
            }
        }
    }
    Ok(())
}

fn check_generated(schema: &crate::schema::Schema, t: &Table) -> Result<()> {
    if let Err(name) = t.generated_order() {
        return err(format!("generated column loop on \"{name}\""));
    }
    for c in &t.columns {
        let Some(g) = &c.generated else { continue };
        let mut stack = vec![&g.expr];
        while let Some(e) = stack.pop() {
            match e {
                ast::Expr::Param { .. } => {
                    return err("parameters prohibited in generated columns")
                }
                _ => {}
            }
            e.for_each_child(&mut |x| stack.push(x));
        }
        refuse_rowid(t, &g.expr)?;
        let bound = crate::plan::Binder::new(schema).bind_for_table(t, None, &g.expr)?;
        super::dml::check_index_expr(&bound, "generated columns")?;
    }
    Ok(())
}

/// A generated column's or an index's expression reads the row's columns, not its rowid:
/// SQLite leaves `rowid` unresolved there (resolve.c, NC_GenCol and NC_IdxExpr), so it is
/// "no such column" unless the table has a column of that name.
fn refuse_rowid(t: &Table, e: &ast::Expr) -> Result<()> {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        if let ast::Expr::Column {
            table: None, name, ..
        } = e
        {
            if t.column_index(name).is_none()
                && ["rowid", "oid", "_rowid_"]
                    .iter()
                    .any(|r| r.eq_ignore_ascii_case(name))
            {
                return err(format!("no such column: {name}"));
            }
        }
        e.for_each_child(&mut |x| stack.push(x));
    }
    Ok(())
}

fn lex_all(sql: &str) -> Vec<crate::parse::lexer::Token<'_>> {
    let mut lx = crate::parse::lexer::Lexer::new(sql);
    let mut toks = Vec::new();
    loop {
        let t = lx.next_token();
        if t.tok == crate::parse::lexer::Tok::Eof {
            return toks;
        }
        toks.push(t);
    }
}

/// Renames a column of `table` inside a stored CREATE TABLE / CREATE INDEX text. In a
/// table, the column-definition name (first token of a definition) and names nested in
/// parentheses (constraints, CHECK, defaults) are renamed, never type names nor the column
/// list of a REFERENCES clause naming another table (that table's columns); in an index,
/// names inside the parentheses and the WHERE clause.
fn rename_column_in_sql(
    sql: &str,
    table: &str,
    (old, new, quote): (&str, &str, bool),
    is_table: bool,
) -> String {
    use crate::parse::lexer::Tok;
    let toks = lex_all(sql);
    let name_is = |t: &Tok, n: &str| match t {
        Tok::Word(w) => w.eq_ignore_ascii_case(n),
        Tok::QuotedId { name, .. } | Tok::Str(name) => name.eq_ignore_ascii_case(n),
        _ => false,
    };
    // Token ranges of the column lists of REFERENCES clauses naming another table.
    let mut foreign = Vec::new();
    for (i, w) in toks.windows(3).enumerate() {
        if name_is(&w[0].tok, "REFERENCES") && !name_is(&w[1].tok, table) && w[2].tok == Tok::LParen
        {
            let end = toks[i + 3..]
                .iter()
                .position(|t| t.tok == Tok::RParen)
                .map_or(toks.len(), |p| i + 3 + p);
            foreign.push(i + 3..end);
        }
    }
    let mut depth = 0usize;
    let mut after_sep = false;
    let mut seen_on = false;
    let mut seen_where = false;
    let mut spans = Vec::new();
    for (ti, t) in toks.iter().enumerate() {
        let is_old = match &t.tok {
            Tok::Word(w) => w.eq_ignore_ascii_case(old),
            Tok::QuotedId { name, .. } => name.eq_ignore_ascii_case(old),
            _ => false,
        } && !foreign.iter().any(|r| r.contains(&ti));
        if let Tok::Word(w) = &t.tok {
            if w.eq_ignore_ascii_case("ON") {
                seen_on = true;
            }
            if w.eq_ignore_ascii_case("WHERE") {
                seen_where = true;
            }
        }
        let hit = if is_table {
            is_old && ((depth == 1 && after_sep) || depth >= 2)
        } else {
            is_old && ((seen_on && depth >= 1) || seen_where)
        };
        if hit {
            spans.push((t.start, t.end));
        }
        after_sep = false;
        match t.tok {
            Tok::LParen => {
                depth += 1;
                after_sep = depth == 1;
            }
            Tok::RParen => depth = depth.saturating_sub(1),
            Tok::Comma if depth == 1 => after_sep = true,
            _ => {}
        }
    }
    edit_spans(sql, spans, new, quote)
}

/// True when `e` refers to the column `name` (outside subqueries, which index expressions
/// cannot hold).
fn expr_names_column(e: &ast::Expr, name: &str) -> bool {
    if let ast::Expr::Column { name: n, .. } = e {
        return n.eq_ignore_ascii_case(name);
    }
    let mut hit = false;
    e.for_each_child(&mut |c| hit = hit || expr_names_column(c, name));
    hit
}

/// Removes the `ci`-th column definition from a CREATE TABLE text.
/// Byte spans of the top-level items (column definitions, then table constraints) inside
/// the outer parentheses of a CREATE TABLE text.
fn top_level_items(sql: &str) -> Vec<(usize, usize)> {
    use crate::parse::lexer::Tok;
    let mut depth = 0usize;
    let mut items = Vec::new();
    let mut item_start = None;
    for t in &lex_all(sql) {
        match t.tok {
            Tok::LParen => {
                depth += 1;
                if depth == 1 {
                    item_start = Some(t.end);
                }
            }
            Tok::RParen => {
                if depth == 1 {
                    if let Some(s) = item_start {
                        items.push((s, t.start));
                    }
                }
                depth = depth.saturating_sub(1);
            }
            Tok::Comma if depth == 1 => {
                if let Some(s) = item_start {
                    items.push((s, t.start));
                }
                item_start = Some(t.end);
            }
            _ => {}
        }
    }
    items
}

fn drop_column_in_sql(sql: &str, ci: usize) -> Option<String> {
    use crate::parse::lexer::Tok;
    let toks = lex_all(sql);
    let mut depth = 0usize;
    // Boundaries of top-level items inside the outer parentheses: (start, end) byte spans.
    let mut items: Vec<(usize, usize)> = Vec::new();
    let mut item_start = None;
    for t in &toks {
        match t.tok {
            Tok::LParen => {
                depth += 1;
                if depth == 1 {
                    item_start = Some(t.end);
                    continue;
                }
            }
            Tok::RParen => {
                if depth == 1 {
                    items.push((item_start?, t.start));
                }
                depth = depth.saturating_sub(1);
            }
            Tok::Comma if depth == 1 => {
                items.push((item_start?, t.start));
                item_start = Some(t.end);
            }
            _ => {}
        }
    }
    let (a, b) = *items.get(ci)?;
    let mut out = sql.to_string();
    // Remove the item and one adjacent comma.
    if ci + 1 < items.len() {
        let next_start = items[ci + 1].0;
        out.replace_range(a..next_start, "");
        if ci == 0 {
            // No space right after the opening parenthesis.
            while out[a..].starts_with(|c: char| c.is_ascii_whitespace()) {
                out.remove(a);
            }
        }
        Some(out)
    } else {
        let prev_end = items.get(ci.checked_sub(1)?)?.1;
        out.replace_range(prev_end..b, "");
        Some(out)
    }
}

/// Rewrites the foreign keys of a stored CREATE TABLE whose parent table is `parent`: the
/// parent's name to `new_parent` (as it is to be written), and a column of the parent's
/// column list named `column.0` to `column.1` (written quoted if `column.2`, as
/// [`replacement`] does).
fn rename_references(
    sql: &str,
    parent: &str,
    new_parent: Option<&str>,
    column: Option<(&str, &str, bool)>,
) -> String {
    use crate::parse::lexer::Tok;
    let toks = lex_all(sql);
    let is = |t: &Tok, name: &str| match t {
        Tok::Word(w) => w.eq_ignore_ascii_case(name),
        Tok::QuotedId { name: n, .. } | Tok::Str(n) => n.eq_ignore_ascii_case(name),
        _ => false,
    };
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    let mut i = 0;
    while i + 1 < toks.len() {
        if !(is(&toks[i].tok, "REFERENCES") && is(&toks[i + 1].tok, parent)) {
            i += 1;
            continue;
        }
        if let Some(r) = new_parent {
            edits.push((toks[i + 1].start, toks[i + 1].end, r.to_string()));
        }
        i += 2;
        if toks.get(i).is_some_and(|t| t.tok == Tok::LParen) {
            while i < toks.len() && toks[i].tok != Tok::RParen {
                if let Some((_, new, quote)) = column.filter(|(old, ..)| is(&toks[i].tok, old)) {
                    let (a, b) = (toks[i].start, toks[i].end);
                    edits.push((a, b, replacement(sql, a, b, new, quote)));
                }
                i += 1;
            }
        }
    }
    let mut out = sql.to_string();
    for (a, b, r) in edits.into_iter().rev() {
        out.replace_range(a..b, &r);
    }
    out
}

/// Whether an added column's DEFAULT is a value SQLite computes without running anything
/// (sqlite3ValueFromExpr: a literal, signed numbers, TRUE/FALSE, a CAST of one).
fn default_is_constant(e: &ast::Expr) -> bool {
    match e {
        ast::Expr::Literal(l) => !matches!(
            l,
            ast::Literal::CurrentTime | ast::Literal::CurrentDate | ast::Literal::CurrentTimestamp
        ),
        ast::Expr::Unary(ast::UnaryOp::Neg | ast::UnaryOp::Plus, x) => default_is_constant(x),
        ast::Expr::Cast { expr, .. } => default_is_constant(expr),
        ast::Expr::Column {
            name,
            table: None,
            schema: None,
            ..
        } => name.eq_ignore_ascii_case("true") || name.eq_ignore_ascii_case("false"),
        _ => false,
    }
}

/// Replaces the table name in a stored CREATE statement: the object's own name for a table,
/// the `ON <table>` target for an index or trigger.
fn rename_in_sql(sql: &str, ty: &str, old: &str, new: &str) -> String {
    use crate::parse::lexer::{Lexer, Tok};
    let mut lx = Lexer::new(sql);
    let mut toks = Vec::new();
    loop {
        let t = lx.next_token();
        if t.tok == Tok::Eof {
            break;
        }
        toks.push(t);
    }
    let is_name = |t: &Tok| match t {
        Tok::Word(w) => w.eq_ignore_ascii_case(old),
        Tok::QuotedId { name, .. } | Tok::Str(name) => name.eq_ignore_ascii_case(old),
        _ => false,
    };
    let target = match ty {
        "table" => toks.iter().position(|t| is_name(&t.tok)),
        _ => toks
            .windows(2)
            .position(|w| {
                matches!(&w[0].tok, Tok::Word(x) if x.eq_ignore_ascii_case("ON"))
                    && is_name(&w[1].tok)
            })
            .map(|p| p + 1),
    };
    match target {
        Some(i) => format!(
            "{}\"{}\"{}",
            &sql[..toks[i].start],
            new.replace('"', "\"\""),
            &sql[toks[i].end..]
        ),
        None => sql.to_string(),
    }
}

/// SQLite's error for a CREATE INDEX over rows that repeat a UNIQUE key: the columns as
/// `table.column`, or `index 'name'` when the index has an expression.
fn unique_index_failed(t: &Table, ix: &Index) -> SqlError {
    let cols: Vec<String> = if ix.columns.iter().any(|c| c.expr.is_some()) {
        vec![format!("index '{}'", ix.name)]
    } else {
        ix.columns
            .iter()
            .filter_map(|c| c.column)
            .map(|i| format!("{}.{}", t.name, t.columns[i].name))
            .collect()
    };
    SqlError::Code {
        code: 19,
        extended_code: super::dml::SQLITE_CONSTRAINT_UNIQUE,
        message: format!("UNIQUE constraint failed: {}", cols.join(", ")),
    }
}
