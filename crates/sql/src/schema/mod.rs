//! The in-memory schema: tables, indexes, views and triggers, built from CREATE statements.
//!
//! Invariants:
//! - The schema is a cache of `sqlite_schema` (the table B-tree at page 1). It is rebuilt by
//!   parsing the stored `sql` texts whenever the schema cookie differs from `cookie`, so a
//!   database written by stock SQLite loads the same way as one written by parlite.
//! - Names are looked up case-insensitively (ASCII), keyed by their lower-case form.
//! - An `INTEGER PRIMARY KEY` column (type exactly "INTEGER", not DESC) is the rowid alias:
//!   it is stored as NULL in the record and reads back as the rowid.
//! - UNIQUE and non-rowid PRIMARY KEY constraints own `sqlite_autoindex_<table>_<N>` indexes,
//!   numbered in declaration order (column constraints first, then table constraints), the
//!   way SQLite numbers them; identical constraints share one index.
//! - Generated columns (gencol.html): a VIRTUAL column has no place in the table record,
//!   which holds the other columns (ordinary and STORED) in declaration order, as SQLite's
//!   `sqlite3TableColumnToStorage` lays them out; `Table::storage_len` counts them.
//! - Attached databases (lang_attach.html) each have their own `Schema` in `attached`, in
//!   attach order; their roots carry the slot's bits (`exec::store::attached_bits`), so a
//!   table's root says which database it lives in (`db_schema`). Unqualified names resolve
//!   temp, then main, then the attached databases in attach order; while `default_db` names
//!   an attached database (binding its views, running its triggers) that database is
//!   searched first, as SQLite binds a view or trigger to its own database.

use crate::collation::Collation;
use crate::parse::ast::{
    ColumnConstraint, ConflictAction, CreateIndex, CreateTable, CreateTableBody, CreateTrigger,
    CreateView, Expr, Select, Stmt, TableConstraintKind,
};
use crate::value::{affinity_of_type_name, Affinity, Result, SqlError};
use std::cell::Cell;
use std::collections::HashMap;
use std::sync::Arc;

mod name_map;
pub use name_map::{NameHasher, NameMap};

#[derive(Debug, Clone)]
pub struct Column {
    pub name: String,
    pub decl_type: String,
    pub affinity: Affinity,
    pub not_null: Option<ConflictAction>,
    pub default: Option<Expr>,
    /// The default as written, for PRAGMA table_info.
    pub default_text: Option<String>,
    pub collation: Collation,
    /// The COLLATE name as declared (None without one): SQLite repeats that spelling in
    /// PRAGMA index_xinfo and sqlite3_table_column_metadata, not the collation's own.
    pub collation_name: Option<String>,
    /// 1-based position in the primary key, 0 if not part of it.
    pub pk: usize,
    /// `[GENERATED ALWAYS] AS (expr) [VIRTUAL|STORED]`.
    pub generated: Option<Generated>,
}

/// A generated column's definition.
#[derive(Debug, Clone)]
pub struct Generated {
    pub expr: Expr,
    /// STORED: computed on write and kept in the record; VIRTUAL: computed on read.
    pub stored: bool,
}

#[derive(Debug, Clone)]
pub struct IndexColumn {
    /// Table column index; None for the rowid itself or for an expression term.
    pub column: Option<usize>,
    /// The indexed expression (expridx.html) when the term is not a plain column; the key
    /// holds its value, computed over the row (columns, then the rowid).
    pub expr: Option<Expr>,
    pub collation: Collation,
    /// The collation's name as SQLite's `Index::azColl` spells it (PRAGMA index_xinfo):
    /// the term's COLLATE as written, else its column's as declared; None for neither.
    pub collation_name: Option<String>,
    pub desc: bool,
}

#[derive(Debug, Clone)]
pub struct Index {
    pub name: String,
    pub table: String,
    pub root: u32,
    pub columns: Vec<IndexColumn>,
    pub unique: bool,
    pub on_conflict: Option<ConflictAction>,
    pub partial: Option<Expr>,
    /// None for automatic indexes (stored with NULL sql).
    pub sql: Option<String>,
    /// "c" (CREATE INDEX), "u" (UNIQUE constraint) or "pk" (PRIMARY KEY), as PRAGMA index_list.
    pub origin: &'static str,
}

#[derive(Debug, Clone)]
pub struct Check {
    pub name: Option<String>,
    pub expr: Expr,
    /// The expression as written, which names an unnamed CHECK in its error message.
    pub span: String,
}

#[derive(Debug, Clone)]
pub struct Table {
    pub name: String,
    pub root: u32,
    pub columns: Vec<Column>,
    pub rowid_alias: Option<usize>,
    pub autoincrement: bool,
    pub without_rowid: bool,
    /// STRICT table (stricttables.html): every value must match its column's declared type.
    pub strict: bool,
    pub checks: Vec<Check>,
    /// Lower-case names of this table's indexes, automatic ones first, in creation order.
    pub indexes: Vec<String>,
    pub sql: String,
    /// Conflict clause of an INTEGER PRIMARY KEY (`PRIMARY KEY ON CONFLICT x`).
    pub pk_conflict: Option<ConflictAction>,
    /// WITHOUT ROWID tables: the PRIMARY KEY columns with their collation and direction, in
    /// key order. Such a table is an index B-tree whose records hold these columns first,
    /// then the other columns in table order (fileformat2.html §2.5).
    pub pk_key: Vec<IndexColumn>,
    /// FOREIGN KEY constraints of this (child) table.
    pub fkeys: Vec<ForeignKey>,
    /// How many columns are VIRTUAL generated columns (kept so that reading a row of an
    /// ordinary table costs no scan of its columns).
    pub virtual_columns: usize,
    /// A WITHOUT ROWID table's record layout, made by its first use
    /// (`WrLayout::shared`); a clone starts without it.
    pub wr_layout: crate::exec::without_rowid::LayoutCell,
    /// Its columns' size estimates for the planner, made by their first use
    /// (`plan::covering`); a clone starts without them.
    pub size_ests: crate::plan::covering::SizeEstCell,
}

/// What happens to child rows when their parent key is deleted or changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FkAction {
    NoAction,
    Restrict,
    SetNull,
    SetDefault,
    Cascade,
}

#[derive(Debug, Clone)]
pub struct ForeignKey {
    /// Child columns (indexes into this table's columns).
    pub columns: Vec<usize>,
    pub parent: String,
    /// Parent column names; empty means the parent's PRIMARY KEY.
    pub parent_columns: Vec<String>,
    pub on_delete: FkAction,
    pub on_update: FkAction,
    /// `DEFERRABLE INITIALLY DEFERRED`: checked at COMMIT inside an explicit transaction.
    pub deferred: bool,
}

/// Whether a constraint's words say `DEFERRABLE INITIALLY DEFERRED` (SQLite's
/// defer_subclause: any other form, `NOT DEFERRABLE ...` included, is immediate).
fn fk_deferred(words: &[String]) -> bool {
    words.iter().any(|w| {
        let u = w.to_ascii_uppercase();
        let u: Vec<&str> = u.split_whitespace().collect();
        u == ["DEFERRABLE", "INITIALLY", "DEFERRED"]
    })
}

fn fk_actions(words: &[String]) -> (FkAction, FkAction) {
    let mut del = FkAction::NoAction;
    let mut upd = FkAction::NoAction;
    for w in words {
        let u = w.to_ascii_uppercase();
        let u: Vec<&str> = u.split_whitespace().collect();
        if u.len() < 3 || u[0] != "ON" {
            continue;
        }
        let action = match u[2..].join(" ").as_str() {
            "CASCADE" => FkAction::Cascade,
            "SET NULL" => FkAction::SetNull,
            "SET DEFAULT" => FkAction::SetDefault,
            "RESTRICT" => FkAction::Restrict,
            _ => FkAction::NoAction,
        };
        if u[1] == "DELETE" {
            del = action;
        } else {
            upd = action;
        }
    }
    (del, upd)
}

impl Table {
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(name))
    }

    pub fn has_generated(&self) -> bool {
        self.columns.iter().any(|c| c.generated.is_some())
    }

    /// Some column is VIRTUAL, so the record and the row layouts differ.
    pub fn has_virtual(&self) -> bool {
        self.virtual_columns > 0
    }

    /// Values in this table's record: the columns that are not VIRTUAL.
    pub fn storage_len(&self) -> usize {
        (0..self.columns.len())
            .filter(|&i| !self.is_virtual(i))
            .count()
    }

    pub fn is_virtual(&self, i: usize) -> bool {
        self.columns
            .get(i)
            .and_then(|c| c.generated.as_ref())
            .is_some_and(|g| !g.stored)
    }

    /// The generated columns in an order that computes each after the columns it reads;
    /// `Err(name)` when they read each other in a loop. This is SQLite's pass-until-no-
    /// progress order (`sqlite3ComputeGeneratedColumns`), and names the column it does: the
    /// last one of the last pass that could not be computed.
    pub fn generated_order(&self) -> std::result::Result<Vec<usize>, String> {
        let mut avail: Vec<bool> = self.columns.iter().map(|c| c.generated.is_none()).collect();
        let mut order = Vec::new();
        loop {
            let mut progress = false;
            let mut redo = None;
            for (i, c) in self.columns.iter().enumerate() {
                let Some(g) = &c.generated else { continue };
                if avail[i] {
                    continue;
                }
                let mut ready = true;
                let mut stack = vec![&g.expr];
                while let Some(e) = stack.pop() {
                    if let Expr::Column {
                        table: None, name, ..
                    } = e
                    {
                        if let Some(j) = self.column_index(name) {
                            ready &= avail[j];
                        }
                    }
                    e.for_each_child(&mut |x| stack.push(x));
                }
                if ready {
                    avail[i] = true;
                    order.push(i);
                    progress = true;
                } else {
                    redo = Some(i);
                }
            }
            match redo {
                None => return Ok(order),
                Some(i) if !progress => return Err(self.columns[i].name.clone()),
                Some(_) => {}
            }
        }
    }
}

/// A constraint that needs an automatic index, before it has a root page.
#[derive(Debug, Clone)]
pub struct AutoIndexSpec {
    pub columns: Vec<IndexColumn>,
    pub on_conflict: Option<ConflictAction>,
    pub origin: &'static str,
}

#[derive(Debug, Clone)]
pub struct View {
    pub name: String,
    pub columns: Vec<String>,
    pub select: Select,
    pub sql: String,
}

#[derive(Debug, Clone)]
pub struct Trigger {
    pub name: String,
    pub table: String,
    pub def: CreateTrigger,
    pub sql: String,
    /// Its place among its schema's rows (their rowid order): SQLite fires a table's
    /// triggers newest first, TEMP ones before the others (sqlite3TriggerList).
    pub seq: usize,
}

#[derive(Debug, Clone, Default)]
pub struct Schema {
    pub tables: NameMap<Arc<Table>>,
    pub indexes: NameMap<Arc<Index>>,
    pub views: NameMap<Arc<View>>,
    pub triggers: NameMap<Arc<Trigger>>,
    pub cookie: u32,
    /// TEMP views (rows of the temp schema table); each is also in `views`, where it
    /// hides a main view of the same name.
    pub temp_views: NameMap<Arc<View>>,
    /// Main views hidden by a TEMP view of the same name (reachable as `main.name`).
    pub shadowed_views: NameMap<Arc<View>>,
    /// Tables in the file that parlite cannot use (virtual tables, WITHOUT ROWID tables
    /// with generated columns...), with the reason; loading the rest of the schema still
    /// succeeds.
    pub unsupported: NameMap<String>,
    /// Main tables hidden by a TEMP table of the same name (reachable as `main.name`).
    pub shadowed: NameMap<Arc<Table>>,
    /// Tables parlite can read but must not write, because one of their indexes is of a
    /// kind it cannot maintain (writing would leave that index stale).
    pub write_blocked: NameMap<String>,
    /// Attached databases in attach order.
    pub attached: Vec<AttachedSchema>,
    /// Attach slot + 1 of the database whose view or trigger is being bound or run (0: none).
    pub default_db: Cell<usize>,
    /// The main database's file as `PRAGMA database_list` shows it ("" in memory).
    pub main_file: String,
    /// `PRAGMA database_list` lists temp: SQLite opened it (a TEMP object was created, or
    /// ALTER TABLE RENAME looked for TEMP triggers), and it stays listed.
    pub temp_shown: Cell<bool>,
}

/// One attached database: its schema name, its file as `PRAGMA database_list` shows it
/// ("" for ':memory:' and temporary databases), and its objects.
#[derive(Debug, Clone, Default)]
pub struct AttachedSchema {
    pub name: String,
    pub file: String,
    pub schema: Schema,
}

pub fn key(name: &str) -> String {
    name.to_ascii_lowercase()
}

/// The table that describes the schema itself.
pub fn schema_table() -> Table {
    let col = |n: &str, t: &str| Column {
        name: n.to_string(),
        decl_type: t.to_string(),
        affinity: affinity_of_type_name(t),
        not_null: None,
        default: None,
        default_text: None,
        collation: Collation::Binary,
        collation_name: None,
        pk: 0,
        generated: None,
    };
    Table {
        name: "sqlite_schema".to_string(),
        root: 1,
        columns: vec![
            col("type", "TEXT"),
            col("name", "TEXT"),
            col("tbl_name", "TEXT"),
            col("rootpage", "INT"),
            col("sql", "TEXT"),
        ],
        rowid_alias: None,
        autoincrement: false,
        without_rowid: false,
        strict: false,
        checks: Vec::new(),
        indexes: Vec::new(),
        sql: "CREATE TABLE sqlite_schema(type text,name text,tbl_name text,rootpage int,sql text)"
            .to_string(),
        pk_conflict: None,
        pk_key: Vec::new(),
        fkeys: Vec::new(),
        virtual_columns: 0,
        wr_layout: Default::default(),
        size_ests: Default::default(),
    }
}

/// `key(name)` without allocating when the name is already lower-case, as names usually are
/// when statements look tables up (a `String` per lookup showed in every statement's binding).
pub fn key_ref(name: &str) -> std::borrow::Cow<'_, str> {
    if name.bytes().any(|b| b.is_ascii_uppercase()) {
        std::borrow::Cow::Owned(name.to_ascii_lowercase())
    } else {
        std::borrow::Cow::Borrowed(name)
    }
}

impl Schema {
    pub fn table(&self, name: &str) -> Option<&Arc<Table>> {
        let k = key_ref(name);
        let k = k.as_ref();
        if k == "sqlite_master" || k == "sqlite_schema" {
            return None;
        }
        if let Some(d) = self.default_attached() {
            if let Some(t) = d.schema.tables.get(k) {
                return Some(t);
            }
        }
        self.tables
            .get(k)
            .or_else(|| self.attached.iter().find_map(|a| a.schema.tables.get(k)))
    }

    /// The attached database `default_db` names, if any.
    fn default_attached(&self) -> Option<&AttachedSchema> {
        match self.default_db.get() {
            0 => None,
            n => self.attached.get(n - 1),
        }
    }

    /// An attached database by schema name (case-insensitive): (slot, database).
    pub fn attached_db(&self, name: &str) -> Option<(usize, &AttachedSchema)> {
        self.attached
            .iter()
            .enumerate()
            .find(|(_, a)| a.name.eq_ignore_ascii_case(name))
    }

    /// The schema of the database a root belongs to: an attached database's, or this one
    /// (main and temp objects).
    pub fn db_schema(&self, root: u32) -> &Schema {
        crate::exec::store::attached_slot(root)
            .and_then(|i| self.attached.get(i))
            .map_or(self, |a| &a.schema)
    }

    /// A table by schema-qualified name: `main.x` skips TEMP tables, `temp.x` finds only them,
    /// `aux.x` looks only in the attached database `aux`.
    pub fn table_in(&self, schema: Option<&str>, name: &str) -> Option<&Arc<Table>> {
        let temp_bit = crate::exec::store::TEMP_ROOT_BIT;
        let main_bits = temp_bit | crate::exec::store::ATTACHED_MASK;
        let k = key_ref(name);
        let k = k.as_ref();
        match schema.map(|s| s.to_ascii_lowercase()) {
            Some(s) if s == "main" => self
                .shadowed
                .get(k)
                .or_else(|| self.tables.get(k).filter(|t| t.root & main_bits == 0)),
            Some(s) if s == "temp" => self.tables.get(k).filter(|t| t.root & temp_bit != 0),
            Some(s) => self.attached_db(&s).and_then(|(_, a)| a.schema.table(name)),
            None => self.table(name),
        }
    }

    /// A view by schema-qualified name, resolved like `table_in`.
    pub fn view_in(&self, schema: Option<&str>, name: &str) -> Option<&Arc<View>> {
        let k = key(name);
        match schema.map(|s| s.to_ascii_lowercase()) {
            Some(s) if s == "main" => match self.temp_views.contains_key(&k) {
                true => self.shadowed_views.get(&k),
                false => self.views.get(&k),
            },
            Some(s) if s == "temp" => self.temp_views.get(&k),
            Some(s) => self
                .attached_db(&s)
                .and_then(|(_, a)| a.schema.views.get(&k)),
            None => {
                if let Some(d) = self.default_attached() {
                    if let Some(v) = d.schema.views.get(&k) {
                        return Some(v);
                    }
                }
                self.views
                    .get(&k)
                    .or_else(|| self.attached.iter().find_map(|a| a.schema.views.get(&k)))
            }
        }
    }

    /// The attach slot + 1 of the database holding view `v` (0 for main and temp views).
    pub fn view_db(&self, v: &Arc<View>) -> usize {
        self.attached
            .iter()
            .position(|a| {
                a.schema
                    .views
                    .get(&key(&v.name))
                    .is_some_and(|x| Arc::ptr_eq(x, v))
            })
            .map_or(0, |i| i + 1)
    }

    /// The attach slot + 1 of the database holding trigger `t` (0 for main and temp).
    pub fn trigger_db(&self, t: &Arc<Trigger>) -> usize {
        self.attached
            .iter()
            .position(|a| {
                a.schema
                    .triggers
                    .get(&key(&t.name))
                    .is_some_and(|x| Arc::ptr_eq(x, t))
            })
            .map_or(0, |i| i + 1)
    }

    /// An index of table `t`, looked up in `t`'s database.
    pub fn index_of(&self, t: &Table, name: &str) -> Option<&Arc<Index>> {
        self.db_schema(t.root).indexes.get(name)
    }

    pub fn table_indexes(&self, t: &Table) -> Vec<Arc<Index>> {
        let s = self.db_schema(t.root);
        t.indexes
            .iter()
            .filter_map(|n| s.indexes.get(n).cloned())
            .collect()
    }

    /// The triggers on table `t`, from `t`'s database (and TEMP triggers on main tables).
    pub fn triggers_on(&self, t: &Table) -> Vec<Arc<Trigger>> {
        self.db_schema(t.root).triggers_for(&t.name)
    }

    pub fn triggers_for(&self, table: &str) -> Vec<Arc<Trigger>> {
        let mut v: Vec<Arc<Trigger>> = self
            .triggers
            .values()
            .filter(|t| t.table.eq_ignore_ascii_case(table))
            .cloned()
            .collect();
        v.sort_by(|a, b| b.seq.cmp(&a.seq));
        v
    }

    /// The kind of the table, view or index that has this name (they share a namespace;
    /// triggers have their own).
    pub fn name_in_use(&self, name: &str) -> Option<&'static str> {
        let k = key(name);
        if self.tables.contains_key(&k) || self.unsupported.contains_key(&k) {
            Some("table")
        } else if self.views.contains_key(&k) {
            Some("view")
        } else if self.indexes.contains_key(&k) {
            Some("index")
        } else {
            None
        }
    }

    /// Rebuilds the schema from `sqlite_schema` rows: (type, name, tbl_name, rootpage, sql).
    pub fn load(
        rows: &[(String, String, String, i64, Option<String>)],
        cookie: u32,
    ) -> Result<Schema> {
        let mut s = Schema {
            cookie,
            ..Schema::default()
        };
        let parse_one = |sql: &str| -> Result<Stmt> {
            match crate::parse::parse_first(sql) {
                Ok(Some(p)) => Ok(p.stmt),
                Ok(None) => Err(SqlError::msg(format!(
                    "malformed database schema - empty sql for {sql}"
                ))),
                Err(e) => Err(SqlError::msg(format!("malformed database schema - {e}"))),
            }
        };
        let mut autoindex_roots: HashMap<String, u32> = HashMap::new();
        for (ty, name, _tbl, root, sql) in rows {
            if ty == "index" && sql.is_none() {
                autoindex_roots.insert(key(name), *root as u32);
            }
        }
        for (ty, name, _tbl, root, sql) in rows {
            let Some(sql) = sql else { continue };
            if ty == "table" {
                let stmt = parse_one(sql)?;
                if let Stmt::CreateVirtualTable(vt) = &stmt {
                    s.unsupported
                        .insert(key(name), format!("no such module: {}", vt.module));
                    continue;
                }
                if let Stmt::CreateTable(ct) = stmt {
                    let (mut t, specs) = match table_from_create(&ct, *root as u32) {
                        Ok(x) => x,
                        Err(e) => {
                            s.unsupported.insert(key(name), e.to_string());
                            continue;
                        }
                    };
                    t.sql = sql.clone();
                    let mut autos = Vec::new();
                    for (i, spec) in specs.into_iter().enumerate() {
                        let iname = format!("sqlite_autoindex_{}_{}", t.name, i + 1);
                        // A WITHOUT ROWID table's PRIMARY KEY index is the table's own tree
                        // (it has no `sqlite_schema` row); `root == table root` marks it.
                        let iroot = if t.without_rowid && spec.origin == "pk" {
                            t.root
                        } else {
                            autoindex_roots.get(&key(&iname)).copied().unwrap_or(0)
                        };
                        autos.push(Index {
                            name: iname,
                            table: t.name.clone(),
                            root: iroot,
                            columns: spec.columns,
                            unique: true,
                            on_conflict: spec.on_conflict,
                            partial: None,
                            sql: None,
                            origin: spec.origin,
                        });
                    }
                    for ix in autos {
                        t.indexes.push(key(&ix.name));
                        s.indexes.insert(key(&ix.name), Arc::new(ix));
                    }
                    s.tables.insert(key(&t.name), Arc::new(t));
                }
            }
        }
        for (seq, (ty, _name, _tbl, root, sql)) in rows.iter().enumerate() {
            let Some(sql) = sql else { continue };
            match ty.as_str() {
                "index" => {
                    if let Stmt::CreateIndex(ci) = parse_one(sql)? {
                        let Some(t) = s.tables.get(&key(&ci.table)).cloned() else {
                            continue;
                        };
                        let mut ix = match index_from_create(&ci, &t) {
                            Ok(ix) => ix,
                            Err(e) => {
                                s.write_blocked.insert(
                                    key(&t.name),
                                    format!(
                                        "index {} cannot be maintained by parlite: {e}",
                                        ci.name.name
                                    ),
                                );
                                continue;
                            }
                        };
                        ix.root = *root as u32;
                        ix.sql = Some(sql.clone());
                        s.add_index(ix);
                    }
                }
                "view" => {
                    if let Stmt::CreateView(cv) = parse_one(sql)? {
                        let mut v = view_from_create(&cv);
                        v.sql = sql.clone();
                        s.views.insert(key(&v.name), Arc::new(v));
                    }
                }
                "trigger" => {
                    if let Stmt::CreateTrigger(ct) = parse_one(sql)? {
                        let t = Trigger {
                            name: ct.name.name.clone(),
                            table: ct.table.clone(),
                            sql: sql.clone(),
                            def: *ct,
                            seq,
                        };
                        s.triggers.insert(key(&t.name), Arc::new(t));
                    }
                }
                _ => {}
            }
        }
        Ok(s)
    }

    /// Adds the temp database's objects (their roots already carry the temp bit); like in
    /// SQLite, a TEMP table shadows a main table of the same name.
    pub fn merge_temp(&mut self, temp: Schema) {
        for (k, t) in temp.tables {
            if k == "sqlite_sequence" {
                continue;
            }
            if let Some(main) = self.tables.insert(k.clone(), t) {
                self.shadowed.insert(k, main);
            }
        }
        self.indexes.extend(temp.indexes);
        // A trigger read from the temp schema is TEMP whatever its text says (SQLite
        // stores `CREATE TRIGGER` there for `CREATE TEMP TRIGGER`).
        self.triggers
            .extend(temp.triggers.into_iter().map(|(k, mut t)| {
                let t2 = Arc::make_mut(&mut t);
                t2.def.temp = true;
                t2.seq += usize::MAX / 2;
                (k, t)
            }));
        for (k, v) in temp.views {
            if let Some(main) = self.views.insert(k.clone(), v.clone()) {
                self.shadowed_views.insert(k.clone(), main);
            }
            self.temp_views.insert(k, v);
        }
        self.unsupported.extend(temp.unsupported);
        self.write_blocked.extend(temp.write_blocked);
    }

    /// The objects of main alone (`temp` false) or of temp alone, for `PRAGMA main.x` /
    /// `temp.x` and the pragma functions' schema argument: the merged maps hold both, a
    /// TEMP object hiding a main one of its name.
    pub fn only_db(&self, temp: bool) -> Schema {
        let bit = crate::exec::store::TEMP_ROOT_BIT;
        let is_temp = |root: u32| root & bit != 0;
        let mut s = Schema {
            cookie: self.cookie,
            main_file: self.main_file.clone(),
            ..Schema::default()
        };
        for (k, t) in &self.tables {
            match (is_temp(t.root), temp) {
                (true, true) | (false, false) => {
                    s.tables.insert(k.clone(), t.clone());
                }
                (true, false) => {
                    if let Some(m) = self.shadowed.get(k) {
                        s.tables.insert(k.clone(), m.clone());
                    }
                }
                (false, true) => {}
            }
        }
        for (k, i) in &self.indexes {
            if is_temp(i.root) == temp {
                s.indexes.insert(k.clone(), i.clone());
            }
        }
        for (k, v) in &self.views {
            let v_temp = self.temp_views.contains_key(k);
            match (v_temp, temp) {
                (true, true) | (false, false) => {
                    s.views.insert(k.clone(), v.clone());
                }
                (true, false) => {
                    if let Some(m) = self.shadowed_views.get(k) {
                        s.views.insert(k.clone(), m.clone());
                    }
                }
                (false, true) => {}
            }
        }
        if temp {
            s.temp_views = self.temp_views.clone();
        }
        for (k, t) in &self.triggers {
            if t.def.temp == temp {
                s.triggers.insert(k.clone(), t.clone());
            }
        }
        s
    }

    /// Keeps what belongs to the connection rather than to the main file across a reload:
    /// the attached databases, the main file's name, whether temp was opened.
    pub fn carry_connection_from(&mut self, old: &mut Schema) {
        self.attached = std::mem::take(&mut old.attached);
        self.main_file = std::mem::take(&mut old.main_file);
        self.temp_shown.set(old.temp_shown.get());
    }

    pub fn add_index(&mut self, ix: Index) {
        let k = key(&ix.name);
        if let Some(t) = self.tables.get_mut(&key(&ix.table)) {
            let t = Arc::make_mut(t);
            if !t.indexes.contains(&k) {
                t.indexes.push(k.clone());
            }
        }
        self.indexes.insert(k, Arc::new(ix));
    }
}

/// Builds a table from its CREATE TABLE (column list form) plus the automatic indexes its
/// constraints need, in SQLite's numbering order.
pub fn table_from_create(ct: &CreateTable, root: u32) -> Result<(Table, Vec<AutoIndexSpec>)> {
    let CreateTableBody::Columns {
        columns: defs,
        constraints,
        without_rowid,
        strict,
    } = &ct.body
    else {
        return Err(SqlError::msg(
            "CREATE TABLE AS must be expanded before building a table",
        ));
    };
    let tname = ct.name.name.clone();
    let mut columns: Vec<Column> = Vec::new();
    let mut checks = Vec::new();
    let mut fkeys: Vec<ForeignKey> = Vec::new();
    let mut specs: Vec<AutoIndexSpec> = Vec::new();
    let mut pk_cols: Option<(Vec<IndexColumn>, Option<ConflictAction>, bool, Option<bool>)> = None;
    for (ci, d) in defs.iter().enumerate() {
        if columns.iter().any(|c| c.name.eq_ignore_ascii_case(&d.name)) {
            return Err(SqlError::msg(format!("duplicate column name: {}", d.name)));
        }
        let decl_type = declared_type(d.type_name.as_deref().unwrap_or_default());
        let affinity = match d.type_name.as_deref() {
            // A type written as an empty quoted name (`""`) names no affinity's keyword:
            // NUMERIC, as sqlite3AffinityType gives it; only a column without a type is BLOB.
            Some(w) if !w.is_empty() && decl_type.is_empty() => Affinity::Numeric,
            _ => affinity_of_type_name(&decl_type),
        };
        let mut col = Column {
            name: d.name.clone(),
            affinity,
            decl_type,
            not_null: None,
            default: None,
            default_text: None,
            collation: Collation::Binary,
            collation_name: None,
            pk: 0,
            generated: None,
        };
        for c in &d.constraints {
            if let ColumnConstraint::Collate(name) = &c.constraint {
                col.collation = Collation::for_schema(name);
                col.collation_name = Some(name.clone());
            }
        }
        for c in &d.constraints {
            match &c.constraint {
                ColumnConstraint::PrimaryKey {
                    desc,
                    conflict,
                    autoincrement,
                } => {
                    if pk_cols.is_some() {
                        return Err(SqlError::msg(format!(
                            "table \"{tname}\" has more than one primary key"
                        )));
                    }
                    pk_cols = Some((
                        vec![IndexColumn {
                            expr: None,
                            column: Some(ci),
                            collation: col.collation,
                            collation_name: col.collation_name.clone(),
                            desc: *desc == Some(true),
                        }],
                        *conflict,
                        *autoincrement,
                        *desc,
                    ));
                    // Reserve this position in the autoindex numbering; dropped later if the
                    // column turns out to be the rowid alias.
                    specs.push(AutoIndexSpec {
                        columns: Vec::new(),
                        on_conflict: *conflict,
                        origin: "pk",
                    });
                }
                ColumnConstraint::NotNull { conflict } => {
                    col.not_null = Some(conflict.unwrap_or(ConflictAction::Abort))
                }
                ColumnConstraint::Unique { conflict } => specs.push(AutoIndexSpec {
                    columns: vec![IndexColumn {
                        expr: None,
                        column: Some(ci),
                        collation: col.collation,
                        collation_name: col.collation_name.clone(),
                        desc: false,
                    }],
                    on_conflict: *conflict,
                    origin: "u",
                }),
                ColumnConstraint::Check(e, span) => checks.push(Check {
                    name: c.name.clone(),
                    expr: e.clone(),
                    span: span.clone(),
                }),
                ColumnConstraint::Default { expr, span } => {
                    if col.generated.is_some() {
                        return Err(SqlError::msg("cannot use DEFAULT on a generated column"));
                    }
                    col.default = Some(expr.clone());
                    col.default_text = Some(span.clone());
                }
                ColumnConstraint::Generated { expr, stored } => {
                    if col.default.is_some() || col.generated.is_some() {
                        return Err(SqlError::msg(format!(
                            "error in generated column \"{}\"",
                            col.name
                        )));
                    }
                    col.generated = Some(Generated {
                        expr: expr.clone(),
                        stored: *stored,
                    });
                }
                ColumnConstraint::References(fk) => {
                    if fk.columns.len() > 1 {
                        return Err(SqlError::msg(format!(
                            "foreign key on {} should reference only one column of table {}",
                            col.name,
                            crate::parse::display::Ident(&fk.table)
                        )));
                    }
                    let (on_delete, on_update) = fk_actions(&fk.actions);
                    fkeys.push(ForeignKey {
                        columns: vec![ci],
                        parent: fk.table.clone(),
                        parent_columns: fk.columns.clone(),
                        on_delete,
                        on_update,
                        deferred: fk_deferred(&fk.actions),
                    });
                }
                ColumnConstraint::Null { .. } | ColumnConstraint::Collate(_) => {}
            }
        }
        columns.push(col);
    }
    if *strict {
        for c in &mut columns {
            let ty = c.decl_type.to_ascii_uppercase();
            // ANY stores every value as given (stricttables.html §3): no affinity, where a
            // non-STRICT table's ANY column is NUMERIC.
            if ty == "ANY" {
                c.affinity = Affinity::Blob;
            }
            if !matches!(
                ty.as_str(),
                "INT" | "INTEGER" | "REAL" | "TEXT" | "BLOB" | "ANY"
            ) {
                return Err(if ty.is_empty() {
                    SqlError::msg(format!("missing datatype for {}.{}", tname, c.name))
                } else {
                    SqlError::msg(format!(
                        "unknown datatype for {}.{}: \"{}\"",
                        tname, c.name, c.decl_type
                    ))
                });
            }
        }
    }
    let resolve = |ics: &[crate::parse::ast::IndexedColumn],
                   columns: &[Column]|
     -> Result<Vec<IndexColumn>> {
        let mut out = Vec::new();
        for ic in ics {
            let name = match &ic.expr {
                Expr::Column {
                    table: None, name, ..
                } => name.clone(),
                Expr::Literal(crate::parse::ast::Literal::String(s)) => s.clone(),
                _ => {
                    return Err(SqlError::msg(
                        "expressions prohibited in PRIMARY KEY and UNIQUE constraints",
                    ))
                }
            };
            let Some(ci) = columns
                .iter()
                .position(|c| c.name.eq_ignore_ascii_case(&name))
            else {
                return Err(SqlError::msg(format!("no such column: {name}")));
            };
            let collation = match &ic.collation {
                Some(c) => Collation::for_schema(c),
                None => columns[ci].collation,
            };
            out.push(IndexColumn {
                expr: None,
                column: Some(ci),
                collation,
                collation_name: ic
                    .collation
                    .clone()
                    .or_else(|| columns[ci].collation_name.clone()),
                desc: ic.desc == Some(true),
            });
        }
        Ok(out)
    };
    let mut pk_spec_pos = specs.iter().position(|s| s.origin == "pk");
    for tc in constraints {
        match &tc.constraint {
            TableConstraintKind::PrimaryKey {
                columns: ics,
                conflict,
                autoincrement,
            } => {
                if pk_cols.is_some() {
                    return Err(SqlError::msg(format!(
                        "table \"{tname}\" has more than one primary key"
                    )));
                }
                let cols = resolve(ics, &columns)?;
                let desc = ics.first().and_then(|c| c.desc);
                pk_cols = Some((cols, *conflict, *autoincrement, desc));
                pk_spec_pos = Some(specs.len());
                specs.push(AutoIndexSpec {
                    columns: Vec::new(),
                    on_conflict: *conflict,
                    origin: "pk",
                });
            }
            TableConstraintKind::Unique {
                columns: ics,
                conflict,
            } => {
                let cols = resolve(ics, &columns)?;
                specs.push(AutoIndexSpec {
                    columns: cols,
                    on_conflict: *conflict,
                    origin: "u",
                });
            }
            TableConstraintKind::Check(e, span) => checks.push(Check {
                name: tc.name.clone(),
                expr: e.clone(),
                span: span.clone(),
            }),
            TableConstraintKind::ForeignKey {
                columns: cols,
                clause,
            } => {
                let mut idx = Vec::new();
                for c in cols {
                    match columns.iter().position(|x| x.name.eq_ignore_ascii_case(c)) {
                        Some(i) => idx.push(i),
                        None => {
                            return Err(SqlError::msg(format!(
                                "unknown column \"{c}\" in foreign key definition"
                            )))
                        }
                    }
                }
                if !clause.columns.is_empty() && clause.columns.len() != idx.len() {
                    return Err(SqlError::msg(
                        "number of columns in foreign key does not match the number of columns \
                         in the referenced table",
                    ));
                }
                let (on_delete, on_update) = fk_actions(&clause.actions);
                fkeys.push(ForeignKey {
                    columns: idx,
                    parent: clause.table.clone(),
                    parent_columns: clause.columns.clone(),
                    on_delete,
                    on_update,
                    deferred: fk_deferred(&clause.actions),
                });
            }
        }
    }
    // A generated key column is refused while the definition parses (sqlite3AddGenerated),
    // before sqlite3EndTable counts the stored columns.
    let generated_key = pk_cols.as_ref().is_some_and(|(cols, ..)| {
        cols.iter()
            .any(|ic| ic.column.is_some_and(|c| columns[c].generated.is_some()))
    });
    if columns.iter().all(|c| c.generated.is_some()) && !generated_key {
        return Err(SqlError::msg("must have at least one non-generated column"));
    }
    if *without_rowid {
        // A key column repeated with the same collation is dropped (SQLite's isDupColumn).
        if let Some((cols, ..)) = &mut pk_cols {
            let mut kept: Vec<IndexColumn> = Vec::new();
            for c in cols.drain(..) {
                if !kept
                    .iter()
                    .any(|k| k.column == c.column && k.collation == c.collation)
                {
                    kept.push(c);
                }
            }
            *cols = kept;
        }
    }
    let mut rowid_alias = None;
    let mut autoincrement = false;
    let mut pk_conflict = None;
    if let Some((cols, conflict, autoinc, desc)) = &pk_cols {
        if generated_key {
            return Err(SqlError::msg(
                "generated columns cannot be part of the PRIMARY KEY",
            ));
        }
        for (i, ic) in cols.iter().enumerate() {
            if let Some(c) = ic.column {
                columns[c].pk = i + 1;
            }
        }
        let integer_key = cols.len() == 1
            && cols[0]
                .column
                .is_some_and(|c| columns[c].decl_type.eq_ignore_ascii_case("INTEGER"))
            && *desc != Some(true);
        if integer_key && !*without_rowid {
            rowid_alias = cols[0].column;
            autoincrement = *autoinc;
            pk_conflict = *conflict;
            if let Some(p) = pk_spec_pos {
                specs.remove(p);
            }
        } else {
            if *autoinc {
                let integer_key = cols.len() == 1
                    && cols[0]
                        .column
                        .is_some_and(|c| columns[c].decl_type.eq_ignore_ascii_case("INTEGER"));
                return Err(SqlError::msg(if *without_rowid && integer_key {
                    "AUTOINCREMENT not allowed on WITHOUT ROWID tables"
                } else {
                    "AUTOINCREMENT is only allowed on an INTEGER PRIMARY KEY"
                }));
            }
            if let Some(p) = pk_spec_pos {
                specs[p].columns = cols.clone();
                // SQLite parses such a key of a WITHOUT ROWID table as a rowid alias (no
                // index yet) and makes its index when the statement ends
                // (convertToWithoutRowidTable), after the UNIQUE constraints' ones: it is
                // last in their numbering (`sqlite_autoindex_T_N`, the names sqlite_schema
                // holds) and newest in the order constraints are checked.
                let twin = specs.iter().enumerate().any(|(i, s)| {
                    i != p
                        && s.columns
                            .iter()
                            .map(|c| c.column)
                            .eq(cols.iter().map(|c| c.column))
                });
                if integer_key && *without_rowid && !twin {
                    let pk = specs.remove(p);
                    specs.push(pk);
                }
            }
        }
    }
    let pk_key = if *without_rowid {
        match &pk_cols {
            Some((cols, ..)) => {
                // PRIMARY KEY columns of a WITHOUT ROWID table are NOT NULL (withoutrowid.html
                // §2.2), with ABORT unless declared otherwise.
                for ic in cols {
                    if let Some(c) = ic.column {
                        columns[c].not_null.get_or_insert(ConflictAction::Abort);
                    }
                }
                cols.clone()
            }
            None => {
                return Err(SqlError::msg(format!(
                    "PRIMARY KEY missing on table {tname}"
                )))
            }
        }
    } else {
        Vec::new()
    };
    // Identical UNIQUE constraints share one index (SQLite keeps the first).
    let mut deduped: Vec<AutoIndexSpec> = Vec::new();
    for s in specs {
        let same = |a: &AutoIndexSpec| {
            a.columns.len() == s.columns.len()
                && a.columns
                    .iter()
                    .zip(&s.columns)
                    .all(|(x, y)| x.column == y.column && x.collation == y.collation)
        };
        if !deduped.iter().any(same) {
            deduped.push(s);
        }
    }
    let table = Table {
        name: tname,
        root,
        columns,
        rowid_alias,
        autoincrement,
        without_rowid: *without_rowid,
        strict: *strict,
        checks,
        indexes: Vec::new(),
        sql: ct.schema_sql.clone(),
        pk_conflict,
        pk_key,
        fkeys,
        virtual_columns: 0,
        wr_layout: Default::default(),
        size_ests: Default::default(),
    };
    let table = Table {
        virtual_columns: (0..table.columns.len())
            .filter(|&i| table.is_virtual(i))
            .count(),
        ..table
    };
    Ok((table, deduped))
}

pub fn index_from_create(ci: &CreateIndex, t: &Table) -> Result<Index> {
    let mut cols = Vec::new();
    for ic in &ci.columns {
        let name = match &ic.expr {
            Expr::Column {
                table: None, name, ..
            } => Some(name.clone()),
            Expr::Literal(crate::parse::ast::Literal::String(s)) if t.column_index(s).is_some() => {
                Some(s.clone())
            }
            _ => None,
        };
        let Some(name) = name else {
            // An expression term: binding (at CREATE INDEX and when a writer is built) checks
            // that it names only this table's columns and calls only deterministic functions.
            cols.push(IndexColumn {
                column: None,
                expr: Some(ic.expr.clone()),
                collation: match &ic.collation {
                    Some(c) => Collation::for_schema(c),
                    None => Collation::default(),
                },
                collation_name: ic.collation.clone(),
                desc: ic.desc == Some(true),
            });
            continue;
        };
        // An index names its table's columns only: `rowid` is no column there, as in
        // SQLite (resolve.c does not resolve it under NC_IdxExpr).
        let Some(column) = t.column_index(&name).map(Some) else {
            return Err(SqlError::msg(format!("no such column: {name}")));
        };
        let collation = match &ic.collation {
            Some(c) => Collation::for_schema(c),
            None => column.map(|c| t.columns[c].collation).unwrap_or_default(),
        };
        cols.push(IndexColumn {
            column,
            expr: None,
            collation,
            collation_name: ic
                .collation
                .clone()
                .or_else(|| column.and_then(|c| t.columns[c].collation_name.clone())),
            desc: ic.desc == Some(true),
        });
    }
    Ok(Index {
        name: ci.name.name.clone(),
        table: t.name.clone(),
        root: 0,
        columns: cols,
        unique: ci.unique,
        on_conflict: None,
        partial: ci.where_.clone(),
        sql: Some(ci.schema_sql.clone()),
        origin: "c",
    })
}

pub fn view_from_create(cv: &CreateView) -> View {
    View {
        name: cv.name.name.clone(),
        columns: cv.columns.clone(),
        select: (*cv.select).clone(),
        sql: cv.schema_sql.clone(),
    }
}

/// A column's type as SQLite keeps it (sqlite3AddColumn): a type written as one quoted
/// token loses its quotes, and one of the standard names (ANY, BLOB, INT, INTEGER, REAL,
/// TEXT, in any case) is kept as that name in capitals, which PRAGMA table_info and
/// sqlite3_column_decltype report; any other type keeps its spelling.
fn declared_type(written: &str) -> String {
    let b = written.as_bytes();
    let quoted = b.len() >= 2
        && matches!(b[0], b'"' | b'\'' | b'`' | b'[')
        && !b[1..b.len() - 1]
            .iter()
            .any(|c| matches!(c, b'"' | b'\'' | b'`' | b'['));
    let t = if quoted {
        &written[1..written.len() - 1]
    } else {
        written
    };
    const STANDARD: [&str; 6] = ["ANY", "BLOB", "INT", "INTEGER", "REAL", "TEXT"];
    match STANDARD.iter().find(|s| s.eq_ignore_ascii_case(t)) {
        Some(s) => s.to_string(),
        None => t.to_string(),
    }
}
