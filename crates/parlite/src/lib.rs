//! parlite: `Database`, `Connection` and `Statement`, the API every front end uses
//! (docs/parlite-api.md).
//!
//! Transactions (the connection's job):
//! ```text
//!   autocommit ──BEGIN──▶ explicit ──COMMIT/END──▶ autocommit
//!       ▲                    │ ROLLBACK
//!       └────────────────────┘
//! ```
//! - In autocommit mode each statement runs in its own storage transaction: a read
//!   transaction for read-only statements, a write transaction otherwise; it commits when the
//!   statement finishes and rolls back if it fails.
//! - Inside an explicit transaction, each statement runs inside a storage savepoint, so a
//!   failing statement undoes only its own changes (SQLite's statement atomicity). A
//!   deferred transaction starts as a read snapshot and upgrades on its first write.
//! - SAVEPOINT outside a transaction starts one; RELEASE of that outermost savepoint commits.
//! - Before each statement the schema cookie is compared with the cached schema's, which is
//!   reloaded from `sqlite_schema` when another connection changed it.

use parlite_sql::exec::{self, store::RoutedStore, txnstore::TxnStore, ConnState, Engine};
use parlite_sql::parse::{self, ast::Stmt, ast::TxnMode, Params};
use parlite_sql::schema::Schema;
use parlite_sql::value::{codes, SqlError, Value as SqlValue};
use parlite_storage::{OpenOptions, Txn};
use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// A value as the API hands it out.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Integer(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

impl From<&SqlValue> for Value {
    fn from(v: &SqlValue) -> Self {
        match v {
            SqlValue::Null => Value::Null,
            SqlValue::Integer(i) => Value::Integer(*i),
            SqlValue::Real(r) => Value::Real(*r),
            SqlValue::Text(s) => Value::Text(s.to_string()),
            SqlValue::Blob(b) => Value::Blob(b.to_vec()),
        }
    }
}

impl From<&Value> for SqlValue {
    fn from(v: &Value) -> Self {
        match v {
            Value::Null => SqlValue::Null,
            Value::Integer(i) => SqlValue::Integer(*i),
            Value::Real(r) => SqlValue::real(*r),
            Value::Text(s) => SqlValue::text(s.as_str()),
            Value::Blob(b) => SqlValue::blob(b.clone()),
        }
    }
}

/// A SQLite-style error: primary result code, extended code, message worded as SQLite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub code: i32,
    pub extended_code: i32,
    pub message: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl From<SqlError> for Error {
    fn from(e: SqlError) -> Self {
        Error {
            code: e.code(),
            extended_code: e.extended_code(),
            message: e.to_string(),
        }
    }
}

impl From<parlite_storage::StorageError> for Error {
    fn from(e: parlite_storage::StorageError) -> Self {
        Error::from(SqlError::from(e))
    }
}

impl From<parse::ParseError> for Error {
    fn from(e: parse::ParseError) -> Self {
        Error {
            code: codes::SQLITE_ERROR,
            extended_code: codes::SQLITE_ERROR,
            message: e.message,
        }
    }
}

fn error(code: i32, message: impl Into<String>) -> Error {
    Error {
        code,
        extended_code: code,
        message: message.into(),
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// Shared by many threads; each thread opens its own Connection from it.
#[derive(Clone)]
pub struct Database {
    storage: parlite_storage::Database,
}

impl Database {
    /// ":memory:" (or "") gives a private in-memory database.
    pub fn open(path: &str) -> Result<Database> {
        if path.is_empty() || path == ":memory:" {
            let storage = parlite_storage::Database::open_in_memory(OpenOptions::default())?;
            return Ok(Database { storage });
        }
        let storage = parlite_storage::Database::open(path, OpenOptions::default())?;
        Ok(Database { storage })
    }

    pub fn connect(&self) -> Result<Connection> {
        // The connection's private temp database (TEMP tables, indexes, triggers): in memory,
        // held in one write transaction for the connection's life; savepoints on it mirror
        // the main transaction's so that ROLLBACK undoes TEMP changes too.
        let temp_db = parlite_storage::Database::open_in_memory(OpenOptions::default())?;
        let temp_txn = temp_db.begin_write(Duration::from_secs(0))?;
        Ok(Connection {
            inner: Arc::new(Mutex::new(ConnInner {
                temp_txn,
                temp_tx_sp: None,
                _temp_db: temp_db,
                db: self.storage.clone(),
                schema: Schema::default(),
                schema_loaded: false,
                state: ConnState::default(),
                txn: None,
                savepoints: Vec::new(),
                txn_from_savepoint: false,
            })),
        })
    }
}

struct ConnInner {
    _temp_db: parlite_storage::Database,
    temp_txn: Txn,
    /// The temp savepoint opened with the explicit transaction.
    temp_tx_sp: Option<u32>,
    db: parlite_storage::Database,
    schema: Schema,
    schema_loaded: bool,
    state: ConnState,
    /// The explicit transaction, when not in autocommit mode.
    txn: Option<Txn>,
    /// Named savepoints of the explicit transaction, innermost last: (name, main, temp).
    savepoints: Vec<(String, u32, u32)>,
    /// The transaction was opened by SAVEPOINT (RELEASE of the outermost commits it).
    txn_from_savepoint: bool,
}

impl ConnInner {
    fn busy_timeout(&self) -> Duration {
        Duration::from_millis(self.state.busy_timeout_ms.get().max(0) as u64)
    }

    /// Brings the cached schema up to date with `txn`'s snapshot.
    fn refresh_schema(&mut self, txn: &Txn) -> Result<()> {
        let cookie = txn.header()?.schema_cookie;
        if !self.schema_loaded || cookie != self.schema.cookie {
            let main = TxnStore { txn: txn.clone() };
            let temp = TxnStore {
                txn: self.temp_txn.clone(),
            };
            let store = RoutedStore {
                main: &main,
                temp: Some(&temp),
            };
            let mut fresh = exec::load_schema(&store)?;
            fresh.carry_temp_from(&self.schema);
            self.schema = fresh;
            self.schema_loaded = true;
        }
        Ok(())
    }

    /// Runs `f` with a transaction valid for reading the schema.
    fn with_read_txn<T>(&mut self, f: impl FnOnce(&mut ConnInner, &Txn) -> Result<T>) -> Result<T> {
        if let Some(t) = self.txn.clone() {
            return f(self, &t);
        }
        let t = self.db.begin_read()?;
        let r = f(self, &t);
        t.rollback();
        r
    }

    fn run(&mut self, stmt: &Stmt, params: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>> {
        match stmt {
            Stmt::Begin { mode } => {
                if self.txn.is_some() {
                    return Err(error(
                        codes::SQLITE_ERROR,
                        "cannot start a transaction within a transaction",
                    ));
                }
                let t = match mode {
                    Some(TxnMode::Immediate) | Some(TxnMode::Exclusive) => {
                        self.db.begin_write(self.busy_timeout())?
                    }
                    Some(TxnMode::Concurrent) => {
                        return Err(error(
                            codes::SQLITE_ERROR,
                            "BEGIN CONCURRENT is not supported yet",
                        ))
                    }
                    _ => self.db.begin_read()?,
                };
                self.txn = Some(t);
                self.txn_from_savepoint = false;
                self.temp_tx_sp = Some(self.temp_txn.savepoint()?);
                Ok(Vec::new())
            }
            Stmt::Commit => {
                let Some(t) = self.txn.take() else {
                    return Err(error(
                        codes::SQLITE_ERROR,
                        "cannot commit - no transaction is active",
                    ));
                };
                self.savepoints.clear();
                if let Err(e) = t.commit() {
                    t.rollback();
                    self.end_temp_tx(false);
                    self.schema_loaded = false;
                    return Err(e.into());
                }
                self.end_temp_tx(true);
                Ok(Vec::new())
            }
            Stmt::Rollback { savepoint: None } => {
                let Some(t) = self.txn.take() else {
                    return Err(error(
                        codes::SQLITE_ERROR,
                        "cannot rollback - no transaction is active",
                    ));
                };
                self.savepoints.clear();
                t.rollback();
                self.end_temp_tx(false);
                // DDL may have been undone.
                self.schema_loaded = false;
                Ok(Vec::new())
            }
            Stmt::Rollback {
                savepoint: Some(name),
            } => {
                let Some(pos) = self
                    .savepoints
                    .iter()
                    .rposition(|(n, _, _)| n.eq_ignore_ascii_case(name))
                else {
                    return Err(error(
                        codes::SQLITE_ERROR,
                        format!("no such savepoint: {name}"),
                    ));
                };
                let t = self.txn.clone().ok_or_else(|| {
                    error(codes::SQLITE_ERROR, format!("no such savepoint: {name}"))
                })?;
                t.rollback_to(self.savepoints[pos].1)?;
                self.temp_txn.rollback_to(self.savepoints[pos].2)?;
                self.savepoints.truncate(pos + 1);
                self.schema_loaded = false;
                Ok(Vec::new())
            }
            Stmt::Savepoint(name) => {
                if self.txn.is_none() {
                    self.txn = Some(self.db.begin_read()?);
                    self.txn_from_savepoint = true;
                    self.temp_tx_sp = Some(self.temp_txn.savepoint()?);
                }
                let t = self
                    .txn
                    .clone()
                    .ok_or_else(|| error(codes::SQLITE_ERROR, "no transaction"))?;
                // Storage savepoints live in write transactions.
                if !t.is_write() {
                    t.upgrade(self.busy_timeout())?;
                }
                let sp = t.savepoint()?;
                let tsp = self.temp_txn.savepoint()?;
                self.savepoints.push((name.clone(), sp, tsp));
                Ok(Vec::new())
            }
            Stmt::Release(name) => {
                let Some(pos) = self
                    .savepoints
                    .iter()
                    .rposition(|(n, _, _)| n.eq_ignore_ascii_case(name))
                else {
                    return Err(error(
                        codes::SQLITE_ERROR,
                        format!("no such savepoint: {name}"),
                    ));
                };
                let t = self.txn.clone().ok_or_else(|| {
                    error(codes::SQLITE_ERROR, format!("no such savepoint: {name}"))
                })?;
                if pos == 0 && self.txn_from_savepoint {
                    self.savepoints.clear();
                    self.txn = None;
                    if let Err(e) = t.commit() {
                        t.rollback();
                        self.end_temp_tx(false);
                        self.schema_loaded = false;
                        return Err(e.into());
                    }
                    self.end_temp_tx(true);
                    return Ok(Vec::new());
                }
                t.release(self.savepoints[pos].1)?;
                self.temp_txn.release(self.savepoints[pos].2)?;
                self.savepoints.truncate(pos);
                Ok(Vec::new())
            }
            Stmt::Vacuum { .. } if self.txn.is_some() => Err(error(
                codes::SQLITE_ERROR,
                "cannot VACUUM from within a transaction",
            )),
            _ => self.run_in_txn(stmt, params),
        }
    }

    fn run_in_txn(&mut self, stmt: &Stmt, params: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>> {
        let readonly = exec::is_readonly(stmt);
        if let Some(t) = self.txn.clone() {
            if !readonly && !t.is_write() {
                t.upgrade(self.busy_timeout())?;
            }
            self.refresh_schema(&t)?;
            if !t.is_write() {
                // A read snapshot has nothing to undo; no statement savepoint needed.
                return self.execute(&t, stmt, params);
            }
            let sp = t.savepoint()?;
            let r = self.execute(&t, stmt, params);
            match r {
                Ok(rows) => {
                    t.release(sp)?;
                    Ok(rows)
                }
                Err(e) => {
                    // Statement atomicity: undo this statement only.
                    let _ = t.rollback_to(sp);
                    let _ = t.release(sp);
                    if self.schema_loaded {
                        let _ = self.refresh_schema(&t);
                    }
                    Err(e)
                }
            }
        } else {
            let t = if readonly {
                self.db.begin_read()?
            } else {
                self.db.begin_write(self.busy_timeout())?
            };
            if let Err(e) = self.refresh_schema(&t) {
                t.rollback();
                return Err(e);
            }
            match self.execute(&t, stmt, params) {
                Ok(rows) => {
                    if let Err(e) = t.commit() {
                        t.rollback();
                        self.schema_loaded = false;
                        return Err(e.into());
                    }
                    Ok(rows)
                }
                Err(e) => {
                    t.rollback();
                    // The schema cache may hold changes that were just rolled back.
                    self.schema_loaded = false;
                    Err(e)
                }
            }
        }
    }

    fn execute(&mut self, t: &Txn, stmt: &Stmt, params: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>> {
        let main = TxnStore { txn: t.clone() };
        let temp = TxnStore {
            txn: self.temp_txn.clone(),
        };
        let store = RoutedStore {
            main: &main,
            temp: Some(&temp),
        };
        // The temp database follows the statement: undone with it on error.
        let tsp = self.temp_txn.savepoint()?;
        let mut engine = Engine::new(&store, &mut self.schema, params, &self.state);
        let r = engine.execute(stmt);
        match r {
            Ok(rows) => {
                self.temp_txn.release(tsp)?;
                if let Stmt::Pragma {
                    name,
                    value: Some(_),
                } = stmt
                {
                    if name.name.eq_ignore_ascii_case("synchronous") {
                        self.apply_synchronous();
                    }
                }
                Ok(rows)
            }
            Err(e) => {
                let _ = self.temp_txn.rollback_to(tsp);
                let _ = self.temp_txn.release(tsp);
                Err(e.into())
            }
        }
    }

    /// Hands `PRAGMA synchronous` to storage, which until now only recorded it (every commit
    /// fsynced, so kv_ops with `--sync off` ran at fsync speed). Storage keeps one level per
    /// database, so the last connection to set it decides for all of them; SQLite keeps it
    /// per connection.
    fn apply_synchronous(&self) {
        let level = match self.state.synchronous.get() {
            0 => parlite_storage::Synchronous::Off,
            1 => parlite_storage::Synchronous::Normal,
            _ => parlite_storage::Synchronous::Full,
        };
        self.db.set_synchronous(level);
    }

    /// Ends the explicit transaction's temp savepoint: kept on commit, undone on rollback.
    fn end_temp_tx(&mut self, commit: bool) {
        if let Some(sp) = self.temp_tx_sp.take() {
            if !commit {
                let _ = self.temp_txn.rollback_to(sp);
            }
            let _ = self.temp_txn.release(sp);
        }
    }
}

pub struct Connection {
    inner: Arc<Mutex<ConnInner>>,
}

fn lock(m: &Mutex<ConnInner>) -> MutexGuard<'_, ConnInner> {
    // A panic while holding the lock leaves counters possibly stale but never memory unsafe;
    // keep serving rather than poisoning the connection forever.
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

impl Connection {
    /// Database::open + connect.
    pub fn open(path: &str) -> Result<Connection> {
        Database::open(path)?.connect()
    }

    /// Compiles the first statement of `sql`. Ok(None) when `sql` holds only spaces and
    /// comments. The &str returned is the unparsed rest (sqlite3_prepare_v2's tail).
    pub fn prepare<'a>(&self, sql: &'a str) -> Result<Option<(Statement, &'a str)>> {
        let Some(parsed) = parse::parse_first(sql)? else {
            return Ok(None);
        };
        let tail = sql.get(parsed.tail..).unwrap_or("");
        let text = sql
            .get(..parsed.tail)
            .unwrap_or(sql)
            .trim()
            .trim_end_matches(';')
            .trim_end()
            .to_string();
        let columns = {
            let mut g = lock(&self.inner);
            g.with_read_txn(|c, t| {
                c.refresh_schema(t)?;
                Ok(exec::column_names(&parsed.stmt, &c.schema)?)
            })?
        };
        let nparams = parsed.params.count();
        let readonly = exec::is_readonly(&parsed.stmt);
        let stmt = Statement {
            conn: self.inner.clone(),
            sql: text,
            stmt: parsed.stmt,
            params: parsed.params,
            bindings: vec![SqlValue::Null; nparams],
            columns,
            rows: None,
            current: None,
            readonly,
        };
        Ok(Some((stmt, tail)))
    }

    /// Runs every statement in `sql` (sqlite3_exec without callback); stops at the first error.
    pub fn execute_batch(&self, sql: &str) -> Result<()> {
        let mut rest = sql;
        while let Some((mut st, tail)) = self.prepare(rest)? {
            while st.step()? {}
            rest = tail;
        }
        Ok(())
    }

    pub fn changes(&self) -> u64 {
        lock(&self.inner).state.changes.get().max(0) as u64
    }

    pub fn total_changes(&self) -> u64 {
        lock(&self.inner).state.total_changes.get().max(0) as u64
    }

    pub fn last_insert_rowid(&self) -> i64 {
        lock(&self.inner).state.last_insert_rowid.get()
    }

    pub fn is_autocommit(&self) -> bool {
        lock(&self.inner).txn.is_none()
    }
}

/// A prepared statement; holds what it needs of its Connection.
pub struct Statement {
    conn: Arc<Mutex<ConnInner>>,
    sql: String,
    stmt: Stmt,
    params: Params,
    bindings: Vec<SqlValue>,
    columns: Vec<String>,
    rows: Option<VecDeque<Vec<SqlValue>>>,
    current: Option<Vec<SqlValue>>,
    readonly: bool,
}

impl Statement {
    pub fn column_count(&self) -> usize {
        self.columns.len()
    }

    /// As sqlite3_column_name.
    pub fn column_name(&self, i: usize) -> &str {
        self.columns.get(i).map(|s| s.as_str()).unwrap_or("")
    }

    pub fn parameter_count(&self) -> usize {
        self.params.count()
    }

    /// ":a", "@a", "$a", "?3" → 1-based index.
    pub fn parameter_index(&self, name: &str) -> Option<usize> {
        self.params
            .names
            .iter()
            .position(|n| n.as_deref() == Some(name))
            .map(|i| i + 1)
    }

    /// 1-based.
    pub fn bind(&mut self, index: usize, v: Value) -> Result<()> {
        if index == 0 || index > self.bindings.len() {
            return Err(error(codes::SQLITE_RANGE, "column index out of range"));
        }
        self.bindings[index - 1] = SqlValue::from(&v);
        Ok(())
    }

    pub fn clear_bindings(&mut self) {
        for b in &mut self.bindings {
            *b = SqlValue::Null;
        }
    }

    /// Ok(true): a row is ready (read it with `column`); Ok(false): done.
    pub fn step(&mut self) -> Result<bool> {
        if self.rows.is_none() {
            let rows = {
                let mut g = lock(&self.conn);
                g.run(&self.stmt, &self.bindings)?
            };
            self.rows = Some(rows.into());
        }
        self.current = self.rows.as_mut().and_then(|r| r.pop_front());
        Ok(self.current.is_some())
    }

    /// A column of the current row.
    pub fn column(&self, i: usize) -> Value {
        self.current
            .as_ref()
            .and_then(|r| r.get(i))
            .map(Value::from)
            .unwrap_or(Value::Null)
    }

    pub fn reset(&mut self) {
        self.rows = None;
        self.current = None;
    }

    pub fn readonly(&self) -> bool {
        self.readonly
    }

    pub fn sql(&self) -> &str {
        &self.sql
    }
}
