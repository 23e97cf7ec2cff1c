//! Attached databases (lang_attach.html): ATTACH/DETACH and the transactions a connection
//! holds on each attached file.
//!
//! Each attached database is its own storage `Database` with its own log. The connection
//! keeps one storage transaction per attached database beside the main one:
//! ```text
//!   none ──first read──▶ read snapshot ──first write──▶ write (its writer lock held)
//!    ▲                        │                              │
//!    └──── main txn ends: commit (after main's) / rollback ◀─┘
//! ```
//! Invariants:
//! 1. A transaction on an attached database begins lazily, on the statement's first access
//!    (`AttachedStore`), and ends with the connection's transaction: right after the
//!    statement in autocommit mode, at COMMIT/ROLLBACK/outermost RELEASE otherwise.
//! 2. Writes to an attached database always hold its writer lock (never a concurrent
//!    transaction), also under BEGIN CONCURRENT: they cannot fail validation at COMMIT.
//! 3. COMMIT commits main first, then each attached database in attach order. A main
//!    conflict rolls every attached database back, so nothing is committed; once main has
//!    committed, an attached commit can fail only on I/O. Each file is atomic on its own,
//!    the set of files is not (as in SQLite in WAL mode).
//! 4. Statement atomicity: the first write of a statement inside an explicit transaction
//!    takes a statement savepoint on that database (`stmt_sp`), undone if the statement
//!    fails; named savepoints are mirrored on each attached database once it writes
//!    (`named_sps`, aligned with the connection's list).
//! 5. A file attached by several connections of this process shares one storage
//!    `Database` (`open_shared`), so their writer locks and snapshots are coordinated.

use crate::CacheSetting;
use parlite_sql::exec::store::{KeyIter, KeyOrder, KeyRecords, RoutedStore, Row, RowIter, Store};
use parlite_sql::exec::txnstore::TxnStore;
use parlite_sql::exec::Engine;
use parlite_sql::parse::ast::Expr;
use parlite_sql::schema::AttachedSchema;
use parlite_sql::value::{codes, Result as SqlResult, SqlError, Value as SqlValue};
use parlite_storage::{OpenOptions, Txn};
use std::cell::{Cell, RefCell};
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

/// A storage database opened by ATTACH, shared by every connection of this process that
/// attached the same file (invariant 5).
pub(crate) struct SharedFile {
    pub(crate) db: parlite_storage::Database,
}

static SHARED_FILES: Mutex<Vec<(PathBuf, Weak<SharedFile>)>> = Mutex::new(Vec::new());

/// The file's absolute path: canonical when it exists, else its canonical folder joined
/// with its name (ATTACH creates missing files).
pub(crate) fn absolute_path(path: &str) -> PathBuf {
    let p = Path::new(path);
    if let Ok(c) = p.canonicalize() {
        return c;
    }
    let parent = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    match (parent.canonicalize(), p.file_name()) {
        (Ok(d), Some(n)) => d.join(n),
        _ => p.to_path_buf(),
    }
}

/// Opens `path` (created if missing), or joins the storage database already open for it.
pub(crate) fn open_shared(path: &Path) -> crate::Result<Arc<SharedFile>> {
    let mut files = match SHARED_FILES.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    files.retain(|(_, w)| w.strong_count() > 0);
    if let Some(f) = files
        .iter()
        .find(|(p, _)| p == path)
        .and_then(|(_, w)| w.upgrade())
    {
        return Ok(f);
    }
    let db = parlite_storage::Database::open(path, OpenOptions::default())?;
    let f = Arc::new(SharedFile { db });
    files.push((path.to_path_buf(), Arc::downgrade(&f)));
    Ok(f)
}

/// One attached database of a connection (its schema lives in `Schema::attached`).
pub(crate) struct AttachedDb {
    pub(crate) name: String,
    pub(crate) file: Arc<SharedFile>,
    /// This connection's `PRAGMA aux.cache_size`.
    pub(crate) cache: CacheSetting,
    /// This connection's `PRAGMA aux.synchronous` (SQLite's levels, 0..=3): its commits on
    /// this database are as durable as it says, whatever the main database's level.
    pub(crate) synchronous: Cell<i64>,
    /// The transaction on it (invariant 1).
    pub(crate) txn: RefCell<Option<Txn>>,
    /// The running statement's savepoint, taken at its first write (invariant 4).
    pub(crate) stmt_sp: Cell<Option<u32>>,
    /// Savepoints mirroring the connection's named savepoints, once writing (invariant 4).
    pub(crate) named_sps: RefCell<Vec<u32>>,
}

impl AttachedDb {
    pub(crate) fn new(name: String, file: Arc<SharedFile>, cache: CacheSetting) -> AttachedDb {
        AttachedDb {
            synchronous: Cell::new(crate::sync_level(file.db.synchronous())),
            name,
            file,
            cache,
            txn: RefCell::new(None),
            stmt_sp: Cell::new(None),
            named_sps: RefCell::new(Vec::new()),
        }
    }

    pub(crate) fn in_transaction(&self) -> bool {
        self.txn.borrow().is_some()
    }

    /// Ends the running statement: keeps its changes, or undoes them (invariant 4).
    pub(crate) fn end_statement(&self, ok: bool) {
        if let (Some(sp), Some(t)) = (self.stmt_sp.take(), self.txn.borrow().as_ref()) {
            if !ok {
                let _ = t.rollback_to(sp);
            }
            let _ = t.release(sp);
        }
    }

    /// Commits (invariant 3) or rolls back its transaction, if any.
    pub(crate) fn end_transaction(&self, commit: bool) -> parlite_storage::Result<()> {
        self.stmt_sp.set(None);
        self.named_sps.borrow_mut().clear();
        let Some(t) = self.txn.borrow_mut().take() else {
            return Ok(());
        };
        if commit && t.is_write() {
            t.set_synchronous(crate::sync_mode(self.synchronous.get()));
            if let Err(e) = t.commit() {
                t.rollback();
                return Err(e);
            }
            return Ok(());
        }
        t.rollback();
        Ok(())
    }

    /// BEGIN IMMEDIATE/EXCLUSIVE: the write transaction (and writer lock) now.
    pub(crate) fn begin_write(&self, wait: Duration) -> parlite_storage::Result<()> {
        if self.txn.borrow().is_none() {
            let t = self.file.db.begin_write(wait)?;
            *self.txn.borrow_mut() = Some(t);
        }
        Ok(())
    }

    /// SAVEPOINT: mirrored when this database is writing.
    pub(crate) fn savepoint(&self) -> parlite_storage::Result<()> {
        if let Some(t) = self.txn.borrow().as_ref().filter(|t| t.is_write()) {
            let sp = t.savepoint()?;
            self.named_sps.borrow_mut().push(sp);
        }
        Ok(())
    }

    /// ROLLBACK TO the named savepoint at `pos` (kept open).
    pub(crate) fn rollback_to(&self, pos: usize) -> parlite_storage::Result<()> {
        let mut sps = self.named_sps.borrow_mut();
        if let (Some(&sp), Some(t)) = (sps.get(pos), self.txn.borrow().as_ref()) {
            t.rollback_to(sp)?;
            sps.truncate(pos + 1);
        }
        Ok(())
    }

    /// RELEASE of the named savepoint at `pos` (and every later one).
    pub(crate) fn release(&self, pos: usize) -> parlite_storage::Result<()> {
        let mut sps = self.named_sps.borrow_mut();
        if let (Some(&sp), Some(t)) = (sps.get(pos), self.txn.borrow().as_ref()) {
            t.release(sp)?;
            sps.truncate(pos);
        }
        Ok(())
    }
}

fn storage_err(e: parlite_storage::StorageError) -> SqlError {
    SqlError::from(e)
}

/// `Store` over an attached database, beginning its transaction on first use (invariant 1).
pub(crate) struct AttachedStore<'a> {
    pub(crate) db: &'a AttachedDb,
    /// How long a first write waits for the writer lock.
    pub(crate) lock_wait: Duration,
    /// Inside an explicit transaction: writes take a statement savepoint.
    pub(crate) explicit: bool,
    /// The connection's named savepoints (mirrored at the first write).
    pub(crate) named: usize,
}

impl AttachedStore<'_> {
    fn read(&self) -> SqlResult<TxnStore> {
        if let Some(t) = self.db.txn.borrow().as_ref() {
            return Ok(TxnStore::new(t.clone()));
        }
        let t = self.db.file.db.begin_read().map_err(storage_err)?;
        *self.db.txn.borrow_mut() = Some(t.clone());
        Ok(TxnStore::new(t))
    }

    fn write(&self) -> SqlResult<TxnStore> {
        let existing = self.db.txn.borrow().clone();
        let t = match existing {
            Some(t) if t.is_write() => t,
            Some(t) => {
                t.upgrade(self.lock_wait).map_err(storage_err)?;
                self.mirror_named(&t)?;
                t
            }
            None => {
                let t = self
                    .db
                    .file
                    .db
                    .begin_write(self.lock_wait)
                    .map_err(storage_err)?;
                *self.db.txn.borrow_mut() = Some(t.clone());
                self.mirror_named(&t)?;
                t
            }
        };
        if self.explicit && self.db.stmt_sp.get().is_none() {
            self.db
                .stmt_sp
                .set(Some(t.savepoint().map_err(storage_err)?));
        }
        Ok(TxnStore::new(t))
    }

    /// The named savepoints opened before this database started writing all begin here.
    fn mirror_named(&self, t: &Txn) -> SqlResult<()> {
        let mut sps = self.db.named_sps.borrow_mut();
        sps.clear();
        for _ in 0..self.named {
            sps.push(t.savepoint().map_err(storage_err)?);
        }
        Ok(())
    }
}

impl Store for AttachedStore<'_> {
    fn create_table_btree(&self) -> SqlResult<u32> {
        self.write()?.create_table_btree()
    }
    fn create_index_btree(&self) -> SqlResult<u32> {
        self.write()?.create_index_btree()
    }
    fn drop_btree(&self, root: u32) -> SqlResult<()> {
        self.write()?.drop_btree(root)
    }
    fn clear_btree(&self, root: u32) -> SqlResult<()> {
        self.write()?.clear_btree(root)
    }
    fn table_range(
        &self,
        root: u32,
        lo: Bound<i64>,
        hi: Bound<i64>,
        reverse: bool,
    ) -> SqlResult<RowIter> {
        self.read()?.table_range(root, lo, hi, reverse)
    }
    fn table_get(&self, root: u32, rowid: i64) -> SqlResult<Option<Row>> {
        self.read()?.table_get(root, rowid)
    }
    fn table_max_rowid(&self, root: u32) -> SqlResult<Option<i64>> {
        self.read()?.table_max_rowid(root)
    }
    fn table_insert(&self, root: u32, rowid: i64, row: &[SqlValue]) -> SqlResult<()> {
        self.write()?.table_insert(root, rowid, row)
    }
    fn table_delete(&self, root: u32, rowid: i64) -> SqlResult<bool> {
        self.write()?.table_delete(root, rowid)
    }
    fn index_insert(&self, root: u32, key: &[SqlValue], order: &KeyOrder) -> SqlResult<()> {
        self.write()?.index_insert(root, key, order)
    }
    fn index_delete(&self, root: u32, key: &[SqlValue], order: &KeyOrder) -> SqlResult<bool> {
        self.write()?.index_delete(root, key, order)
    }
    fn index_range(
        &self,
        root: u32,
        order: &KeyOrder,
        lo: Bound<Row>,
        hi: Bound<Row>,
        reverse: bool,
    ) -> SqlResult<KeyIter> {
        self.read()?.index_range(root, order, lo, hi, reverse)
    }
    fn index_prefix_counts(
        &self,
        root: u32,
        order: &KeyOrder,
        ncols: usize,
    ) -> SqlResult<(u64, Vec<u64>)> {
        self.read()?.index_prefix_counts(root, order, ncols)
    }
    fn index_records(
        &self,
        root: u32,
        order: &KeyOrder,
        max: usize,
        out: &mut KeyRecords,
    ) -> SqlResult<bool> {
        self.read()?.index_records(root, order, max, out)
    }
    fn table_row_count(&self, root: u32) -> SqlResult<u64> {
        self.read()?.table_row_count(root)
    }
    fn schema_cookie(&self) -> SqlResult<u32> {
        self.read()?.schema_cookie()
    }
    fn set_schema_cookie(&self, v: u32) -> SqlResult<()> {
        self.write()?.set_schema_cookie(v)
    }
    fn user_version(&self) -> SqlResult<u32> {
        self.read()?.user_version()
    }
    fn set_user_version(&self, v: u32) -> SqlResult<()> {
        self.write()?.set_user_version(v)
    }
    fn vacuum_compact(&self, trees: &[(u32, Option<KeyOrder>)]) -> SqlResult<Option<Vec<u32>>> {
        self.write()?.vacuum_compact(trees)
    }
    fn file_header_in(&self, db: u32) -> SqlResult<parlite_sql::exec::store::FileHeader> {
        self.read()?.file_header_in(db)
    }
    fn set_application_id_in(&self, db: u32, v: u32) -> SqlResult<()> {
        self.write()?.set_application_id_in(db, v)
    }
    fn savepoint(&self) -> SqlResult<u32> {
        self.write()?.savepoint()
    }
    fn rollback_to(&self, sp: u32) -> SqlResult<()> {
        self.write()?.rollback_to(sp)
    }
    fn release(&self, sp: u32) -> SqlResult<()> {
        self.write()?.release(sp)
    }
}

impl crate::ConnInner {
    /// The values of ATTACH/DETACH operands (bare identifiers are names).
    pub(crate) fn attach_operands(
        &mut self,
        exprs: &[&Expr],
        params: &[SqlValue],
    ) -> crate::Result<Vec<SqlValue>> {
        self.with_read_txn(|c, t| {
            c.refresh_schema(t)?;
            let main = TxnStore::new(t.clone());
            let store = RoutedStore {
                main: &main,
                temp: None,
                attached: Vec::new(),
            };
            let engine = Engine::new(&store, &mut c.schema, params, &c.state);
            let mut out = Vec::new();
            for e in exprs {
                out.push(engine.attach_operand(e)?);
            }
            Ok(out)
        })
    }

    /// ATTACH DATABASE file AS name: SQLite's checks and messages, in its order.
    pub(crate) fn attach(
        &mut self,
        file: &Expr,
        schema: &Expr,
        params: &[SqlValue],
    ) -> crate::Result<Vec<Vec<SqlValue>>> {
        let vals = self.attach_operands(&[file, schema], params)?;
        let file = vals
            .first()
            .map(|v| v.to_text_or_empty().into_owned())
            .unwrap_or_default();
        let name = vals
            .get(1)
            .map(|v| v.to_text_or_empty().into_owned())
            .unwrap_or_default();
        if self.attached.len() >= self.attached_max {
            return Err(crate::error(
                codes::SQLITE_ERROR,
                format!("too many attached databases - max {}", self.attached_max),
            ));
        }
        if name.eq_ignore_ascii_case("main")
            || name.eq_ignore_ascii_case("temp")
            || self
                .attached
                .iter()
                .any(|a| a.name.eq_ignore_ascii_case(&name))
        {
            return Err(crate::error(
                codes::SQLITE_ERROR,
                format!("database {name} is already in use"),
            ));
        }
        let (shared, shown) = if file.is_empty() || file == ":memory:" {
            let db = parlite_storage::Database::open_in_memory(OpenOptions::default())?;
            (Arc::new(SharedFile { db }), String::new())
        } else {
            let path = absolute_path(&file);
            (open_shared(&path)?, path.to_string_lossy().into_owned())
        };
        let cache = crate::CacheSetting::new(&shared.db)?;
        self.attached
            .push(AttachedDb::new(name.clone(), shared, cache));
        self.schema.attached.push(AttachedSchema {
            name,
            file: shown,
            schema: Default::default(),
        });
        // Reload everything: the new database's schema is read (and checked) now.
        self.schema_loaded = false;
        self.schema_gen += 1;
        if let Err(e) = self.with_read_txn(|c, t| c.refresh_schema(t)) {
            self.attached.pop();
            self.schema.attached.pop();
            self.schema_loaded = false;
            return Err(e);
        }
        Ok(Vec::new())
    }

    /// DETACH [DATABASE] name.
    pub(crate) fn detach(
        &mut self,
        name: &Expr,
        params: &[SqlValue],
    ) -> crate::Result<Vec<Vec<SqlValue>>> {
        let vals = self.attach_operands(&[name], params)?;
        let name = vals
            .first()
            .map(|v| v.to_text_or_empty().into_owned())
            .unwrap_or_default();
        if name.eq_ignore_ascii_case("main") {
            return Err(crate::error(
                codes::SQLITE_ERROR,
                "cannot detach database main",
            ));
        }
        let Some(slot) = self
            .attached
            .iter()
            .position(|a| a.name.eq_ignore_ascii_case(&name))
        else {
            return Err(crate::error(
                codes::SQLITE_ERROR,
                format!("no such database: {name}"),
            ));
        };
        if self.attached[slot].in_transaction() {
            return Err(crate::error(
                codes::SQLITE_ERROR,
                format!("database {name} is locked"),
            ));
        }
        self.attached.remove(slot);
        if slot < self.schema.attached.len() {
            self.schema.attached.remove(slot);
        }
        // Later databases move down a slot: their roots carry new bits after a reload.
        self.schema_loaded = false;
        self.schema_gen += 1;
        Ok(Vec::new())
    }
}
