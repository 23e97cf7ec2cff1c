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
//!
//! Many writers (docs/concurrency.md, "SQL"). Invariants:
//! 1. `BEGIN CONCURRENT` holds a storage concurrent transaction (no lock); its COMMIT
//!    validates. A conflict surfaces as SQLITE_BUSY_SNAPSHOT (517) naming the table or index
//!    (`storage_error`), and the transaction is gone: the connection is back in autocommit.
//!    A COMMIT that only timed out waiting for the writer lock (SQLITE_BUSY) leaves the
//!    transaction open, as SQLite's does.
//! 2. `BEGIN IMMEDIATE`/`EXCLUSIVE` take the writer lock at BEGIN (waiting `busy_timeout`)
//!    and never fail at COMMIT; `BEGIN`/`DEFERRED` read a snapshot and upgrade on the first
//!    write (SQLITE_BUSY_SNAPSHOT if a commit happened since the snapshot).
//! 3. An autocommit INSERT/UPDATE/DELETE runs as a concurrent transaction, retried on
//!    conflict at most `AUTOCOMMIT_RETRIES_MAX` times, then once more under the writer lock,
//!    which cannot conflict: a conflict never reaches the application. Each retry first
//!    restores the connection counters and undoes the attempt's TEMP changes, so
//!    changes(), last_insert_rowid() and RETURNING rows are those of the committed attempt.
//! 4. Setting a connection pragma (busy_timeout, synchronous, isolation_level, ...) never
//!    takes the writer lock (`exec::is_readonly`).
//! 5. Snapshot isolation never breaks a constraint: a concurrent transaction at
//!    `isolation_level = snapshot` becomes serializable for its whole life as soon as it
//!    runs a statement whose correctness rests on reads — a write to a table with a UNIQUE
//!    or PRIMARY KEY index (two transactions inserting one key with different rowids write
//!    different index keys, which snapshot validation would let both commit), with triggers,
//!    or with foreign keys in force, and any DDL (`needs_serializable`).
//! 6. `PRAGMA synchronous` is per connection: every storage commit carries its connection's
//!    level at COMMIT time (`Txn::set_synchronous`, `commit_txn`), so an OFF connection never
//!    waits for an fsync and a FULL one returns only once its commit (and, the log being a
//!    chain, every earlier one) is durable, whatever the other connections asked for.
//!    Reading the pragma returns the connection's own setting.
//! 7. The sole connection of a `Database` runs an autocommit INSERT/UPDATE/DELETE under the
//!    writer lock when it can take it at once (`run_autocommit_write`): no other connection
//!    of this process can write meanwhile, so a concurrent attempt could only lose work, and
//!    recording its reads and operations for validation cost ~7k instructions per
//!    single-row statement (kv_ops, BENCHMARKS.md). A lock held elsewhere (another
//!    process, a checkpoint) sends it down the concurrent path of invariant 3 as before.

mod attach;
mod backup;
pub mod complete;
#[doc(hidden)]
pub mod fuzzing;
mod row;
mod vacuum_into;
use attach::{AttachedDb, AttachedStore};
pub use backup::{Backup, BackupStep};
pub use parlite_sql::collation::user::UserCompare;
use parlite_sql::exec::select::chunk::Chunking;
use parlite_sql::exec::store::{Store, ATTACHED_MAX};
use parlite_sql::exec::txnstore::{IdleCursors, TxnStore};
use parlite_sql::exec::{self, store::RoutedStore, ConnState, Engine};
pub use parlite_sql::exec::{RowChange, UpdateHook};
/// What `Connection::create_function` takes: the application's scalar function or
/// aggregate, over parlite's SQL values (`parlite_sql::value::Value`).
pub use parlite_sql::func::aggregate::Aggregate;
use parlite_sql::func::user::{self, SharedUserFunctions};
pub use parlite_sql::func::user::{UserAggregate, UserImpl, UserScalar};
use parlite_sql::parse::{self, ast::Stmt, ast::TxnMode, Params};
use parlite_sql::schema::key;
use parlite_sql::schema::Schema;
use parlite_sql::value::{codes, SqlError, Value as SqlValue};
/// The error number of the last operating-system call that failed on this thread (0 if
/// none): sqlite3_system_errno.
pub use parlite_storage::last_os_error;
use parlite_storage::{Isolation, OpenOptions, StorageError, Synchronous, Txn};
pub use row::ValueRef;
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// Concurrent attempts of an autocommit write statement before it takes the writer lock
/// (invariant 3). Each attempt after a conflict starts on a fresh snapshot; 8 keeps a hot
/// row's statement from livelocking while costing little when conflicts are rare.
pub const AUTOCOMMIT_RETRIES_MAX: u32 = 8;

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

/// Counters kept by the SQL layer, shared by every connection of a `Database`.
#[derive(Debug, Default)]
struct SqlCounters {
    /// Autocommit write attempts that conflicted and were run again.
    autocommit_retries: AtomicU64,
    /// Autocommit write statements that ran out of retries and took the writer lock.
    autocommit_lock_fallbacks: AtomicU64,
    /// Connections of this `Database` now open (invariant 7).
    open_connections: AtomicU64,
}

/// What `Database::stats` and `PRAGMA parlite_stats` report.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    /// Commits that wrote a log frame (every kind).
    pub commits: u64,
    /// Concurrent transactions committed (BEGIN CONCURRENT and autocommit writes).
    pub concurrent_commits: u64,
    /// Of those, committed without replay (nothing had committed since their snapshot).
    pub concurrent_fast_commits: u64,
    /// Of those, validated and replayed onto a newer snapshot before taking the writer lock
    /// (docs/concurrency.md C7); the rest were replayed under the lock.
    pub concurrent_rebased_commits: u64,
    /// Rebases that kept the transaction's pages instead of replaying its writes (no
    /// commit since its snapshot touched a page it used; storage pages.rs P6).
    pub concurrent_page_rebases: u64,
    /// Lock-holding transactions committed (BEGIN IMMEDIATE/EXCLUSIVE, upgraded DEFERRED).
    pub locked_commits: u64,
    /// Concurrent transactions that failed validation (explicit ones and autocommit attempts).
    pub conflicts: u64,
    /// Conflicts by the root page of the tree named in the error.
    pub conflicts_by_root: BTreeMap<u32, u64>,
    /// Autocommit write attempts retried after a conflict.
    pub autocommit_retries: u64,
    /// Autocommit write statements that ran out of retries and asked for the writer lock.
    pub autocommit_lock_fallbacks: u64,
    /// fsyncs of the log made for commits (one per commit group).
    pub fsyncs: u64,
    /// Checkpoints that wrote pages into the database file (background rounds and full).
    pub checkpoints: u64,
    /// Pages those checkpoints wrote.
    pub checkpoint_pages: u64,
    /// Time they took in total, in ms (background rounds run off the writer lock).
    pub checkpoint_ms: u64,
    /// The longest checkpoint, in ms.
    pub checkpoint_max_ms: u64,
    /// Commits that waited for the checkpointer (the log or the dirty pages past their
    /// backpressure bound: commits outran it).
    pub checkpoint_stalls: u64,
    /// Background checkpoints that folded only `synchronous=OFF` commits and so skipped
    /// their fsyncs, as SQLite's checkpoints at OFF (docs/log-and-recovery.md, B8).
    pub relaxed_checkpoints: u64,
    /// Bytes of log frames not yet checkpointed.
    pub log_bytes: u64,
    /// Size of the log files on disk (both files, headers included).
    pub log_file_bytes: u64,
    /// Age of the oldest live snapshot (read or write transaction) in ms; 0: none.
    pub oldest_snapshot_age_ms: u64,
    /// Write transactions that waited for the writer lock, and the total and longest wait.
    pub writer_waits: u64,
    pub writer_wait_ms: u64,
    pub writer_wait_max_ms: u64,
    /// Sleeping writer-lock waiters woken, and of those the hand-offs to a starving one
    /// (storage `PagerStats::writer_wakes`).
    pub writer_wakes: u64,
    pub writer_handoffs: u64,
    /// How many times the writer lock was taken, and for how long in total, in µs: the
    /// commit path's serial section (storage `PagerStats::writer_lock_held_ns`).
    pub writer_lock_holds: u64,
    pub writer_lock_held_us: u64,
    /// Group-commit leaders that waited for other commits before their fsync, and their
    /// total wait in µs (storage `PagerStats::gathers`).
    pub gathers: u64,
    pub gather_us: u64,
    /// Time the group-commit leaders spent in their fsyncs, µs (storage
    /// `PagerStats::log_sync_us`).
    pub log_sync_us: u64,
    /// Pages in the shared page cache, and its bound: the largest `PRAGMA cache_size` of an
    /// open connection, in pages (storage `Database::ask_cache_size`).
    pub cache_pages: u64,
    pub cache_pages_max: u64,
    /// Pages write transactions moved out of memory into their spill files (`PRAGMA
    /// cache_spill`), and pages their commits then wrote straight into the database file
    /// (storage `PagerStats::spilled_pages`).
    pub spilled_pages: u64,
    pub spilled_direct_pages: u64,
}

impl Stats {
    /// Commits made durable per fsync (group commit's yield); 0 when nothing was synced.
    pub fn commits_per_fsync(&self) -> f64 {
        if self.fsyncs == 0 {
            0.0
        } else {
            self.commits as f64 / self.fsyncs as f64
        }
    }
}

/// Shared by many threads; each thread opens its own Connection from it.
#[derive(Clone)]
pub struct Database {
    storage: parlite_storage::Database,
    counters: Arc<SqlCounters>,
    /// `PRAGMA synchronous` of a new connection: the mode the database was opened with.
    sync_default: i64,
    /// The main file's absolute path ("" in memory), for `PRAGMA database_list`.
    main_file: String,
    /// Opened read-only (`open_with`): its connections refuse every write as
    /// `PRAGMA query_only` does. The storage backend of a file is shared by every open of
    /// it in the process and keeps the options of the first, so this cannot rest on it.
    read_only: bool,
}

impl Database {
    /// ":memory:" (or "") gives a private in-memory database.
    pub fn open(path: &str) -> Result<Database> {
        Database::open_with(path, true, false)
    }

    /// `open` with sqlite3_open_v2's flags: without `create` a missing file is
    /// SQLITE_CANTOPEN; `read_only` (SQLITE_OPEN_READONLY) never creates and refuses writes.
    pub fn open_with(path: &str, create: bool, read_only: bool) -> Result<Database> {
        if path.is_empty() || path == ":memory:" {
            let storage = parlite_storage::Database::open_in_memory(OpenOptions::default())?;
            return Ok(Database::new(storage));
        }
        let opts = OpenOptions {
            create,
            read_only,
            ..OpenOptions::default()
        };
        let storage = parlite_storage::Database::open(path, opts)?;
        let mut db = Database::new(storage);
        db.main_file = attach::absolute_path(path).to_string_lossy().into_owned();
        db.read_only = read_only;
        Ok(db)
    }

    fn new(storage: parlite_storage::Database) -> Database {
        let sync_default = sync_level(storage.synchronous());
        Database {
            storage,
            counters: Arc::default(),
            sync_default,
            main_file: String::new(),
            read_only: false,
        }
    }

    /// Commit, conflict, retry, fsync and checkpoint counters since the database was opened.
    pub fn stats(&self) -> Stats {
        stats_of(&self.storage, &self.counters)
    }

    pub fn connect(&self) -> Result<Connection> {
        // The connection's private temp database (TEMP tables, indexes, triggers): in memory,
        // held in one write transaction for the connection's life; savepoints on it mirror
        // the main transaction's so that ROLLBACK undoes TEMP changes too.
        let temp_db = parlite_storage::Database::open_in_memory(OpenOptions::default())?;
        let temp_txn = temp_db.begin_write(Duration::from_secs(0))?;
        let (cache, temp_cache) = (
            CacheSetting::new(&self.storage)?,
            CacheSetting::new(&temp_db)?,
        );
        let state = ConnState::default();
        let sync_level = self.sync_default;
        state.synchronous.set(sync_level);
        self.counters
            .open_connections
            .fetch_add(1, Ordering::Relaxed);
        Ok(Connection {
            functions: SharedUserFunctions::default(),
            inner: Arc::new(Mutex::new(ConnInner {
                temp_txn,
                temp_tx_sp: None,
                _temp_db: temp_db,
                db: self.storage.clone(),
                counters: self.counters.clone(),
                schema: Schema {
                    main_file: self.main_file.clone(),
                    ..Schema::default()
                },
                schema_loaded: false,
                schema_gen: 0,
                hooks: RefCell::new(Hooks::default()),
                plan: None,
                idle_cursors: IdleCursors::default(),
                spare_read: None,
                spare_explicit: None,
                state,
                txn: None,
                savepoints: Vec::new(),
                txn_from_savepoint: false,
                txn_unread: false,
                attached: Vec::new(),
                attached_max: ATTACHED_MAX,
                cache,
                temp_cache,
                data_version: DataVersion::default(),
                cache_spill: (true, 0),
                read_only: self.read_only,
                collations_seen: parlite_sql::collation::user::generation(),
                chunk: None,
                chunk_txn: None,
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
    counters: Arc<SqlCounters>,
    schema: Schema,
    schema_loaded: bool,
    /// Bumped whenever `schema` is reloaded or may have changed (a statement other than
    /// SELECT/INSERT/UPDATE/DELETE ran): a cached plan bound at another value is stale.
    schema_gen: u64,
    /// The application's commit and rollback hooks.
    hooks: RefCell<Hooks>,
    /// The running statement's cached plan, lent by `Statement::step` for one run.
    plan: Option<(u64, exec::CachedPlan)>,
    state: ConnState,
    /// The explicit transaction, when not in autocommit mode.
    txn: Option<Txn>,
    /// Named savepoints of the explicit transaction, innermost last: (name, main, temp).
    savepoints: Vec<(String, u32, u32)>,
    /// The transaction was opened by SAVEPOINT (RELEASE of the outermost commits it).
    txn_from_savepoint: bool,
    /// A deferred transaction nothing has read in yet (`first_read`).
    txn_unread: bool,
    /// Attached databases in attach order (slot i of `Schema::attached`), `attach.rs`.
    attached: Vec<AttachedDb>,
    /// SQLITE_LIMIT_ATTACHED: at most `ATTACHED_MAX` (10), lowered by `set_limit_attached`.
    attached_max: usize,
    /// The last statement's idle cursors on the main database, parked for the next one
    /// (`TxnStore::with_idle`): a single-row statement reuses them instead of opening and
    /// freeing its cursors (~1k instructions per kv_ops statement).
    idle_cursors: IdleCursors,
    /// The last autocommit read statement's transaction, finished (storage T3), for the
    /// next one to renew (`begin_autocommit_read`). Holds no snapshot.
    spare_read: Option<Txn>,
    /// The last explicit transaction, finished (storage T3), for the next BEGIN or
    /// SAVEPOINT outside a transaction to renew (`begin_explicit`). Holds no snapshot.
    spare_explicit: Option<Txn>,
    /// `PRAGMA cache_size` on the main and TEMP databases (`cache_size_rows`).
    cache: CacheSetting,
    temp_cache: CacheSetting,
    /// `PRAGMA data_version` (`data_version_rows`).
    data_version: DataVersion,
    /// `PRAGMA cache_spill`: (on, threshold in pages), SQLite's defaults (on, 0).
    cache_spill: (bool, i64),
    /// The `Database` was opened read-only: writes fail as under `PRAGMA query_only`.
    read_only: bool,
    /// `collation::user::generation` when the schema and cached plans were last known to
    /// agree with the collations defined (`note_collation_changes`).
    collations_seen: u64,
    /// The running statement's chunking, lent by `Statement::step` for one run: a first
    /// run in autocommit mode, or a later chunk on the statement's own snapshot
    /// (`run_chunk`; parlite_sql's select/chunk.rs).
    chunk: Option<Chunking>,
    /// The autocommit read transaction of a first run that stopped with rows left, left
    /// open for its statement to take (`Statement::step`): the snapshot its next chunks read.
    chunk_txn: Option<Txn>,
}

/// A connection's `PRAGMA data_version`: as SQLite's, it changes when, and only when,
/// another connection committed to the main database since this one last read it.
#[derive(Default)]
struct DataVersion {
    /// The snapshot the pragma last read at (None: never read).
    seen_seq: Cell<Option<u64>>,
    /// Commits this connection published since then (`commit_txn`). Commit sequence
    /// numbers grow by one per published commit (storage `Txn::committed_seq`), so the
    /// rest of the gap to a newer snapshot is other connections' commits.
    own_commits: Cell<u64>,
    /// How many times the pragma found such commits.
    changes: Cell<i64>,
}

impl DataVersion {
    /// The value at snapshot `seq` (SQLite's values start at 1).
    fn read_at(&self, seq: u64) -> i64 {
        if let Some(seen) = self.seen_seq.get() {
            if seq.saturating_sub(seen) > self.own_commits.get() {
                self.changes.set(self.changes.get() + 1);
            }
        }
        self.seen_seq.set(Some(seq));
        self.own_commits.set(0);
        1 + self.changes.get()
    }
}

/// What a connection's `PRAGMA cache_size` is until it sets one: 64 MiB (negative: KiB, as
/// SQLite counts), the 16,384 pages of 4 KiB that storage opens a database's cache with.
const DEFAULT_CACHE_SIZE: i64 = -65536;

/// A connection's `PRAGMA cache_size` on one of its databases: the value as set (what the
/// pragma reads back) and the ask that holds the database's shared page cache to it.
pub(crate) struct CacheSetting {
    size: Cell<i64>,
    ask: parlite_storage::CacheAsk,
}

impl CacheSetting {
    pub(crate) fn new(db: &parlite_storage::Database) -> Result<CacheSetting> {
        Ok(CacheSetting {
            size: Cell::new(DEFAULT_CACHE_SIZE),
            ask: db.ask_cache_size(DEFAULT_CACHE_SIZE)?,
        })
    }

    fn set(&self, cache_size: i64) -> Result<()> {
        self.ask.set(cache_size)?;
        self.size.set(cache_size);
        Ok(())
    }
}

impl Drop for ConnInner {
    fn drop(&mut self) {
        self.counters
            .open_connections
            .fetch_sub(1, Ordering::Relaxed);
    }
}

impl ConnInner {
    fn busy_timeout(&self) -> Duration {
        Duration::from_millis(self.state.busy_timeout_ms.get().max(0) as u64)
    }

    /// Brings the cached schema up to date with `txn`'s snapshot.
    /// Attached databases are checked too: each one's cookie against its cached schema.
    fn refresh_schema(&mut self, txn: &Txn) -> Result<()> {
        let cookie = txn.schema_cookie()?;
        let main_stale = !self.schema_loaded || cookie != self.schema.cookie;
        if !main_stale && self.attached.is_empty() {
            return Ok(());
        }
        let main = TxnStore::new(txn.clone());
        let temp = TxnStore::new(self.temp_txn.clone());
        if main_stale {
            let store = RoutedStore {
                main: &main,
                temp: Some(&temp),
                attached: Vec::new(),
            };
            let mut fresh = exec::load_schema(&store)?;
            fresh.carry_connection_from(&mut self.schema);
            self.schema = fresh;
            self.schema_loaded = true;
            self.schema_gen += 1;
        }
        for (slot, a) in self.attached.iter().enumerate() {
            // The cookie is read on the database's transaction when it has one, else on
            // a snapshot taken just for this check: checking must not begin a
            // transaction (DETACH refuses a database in a transaction).
            let (t, transient) = match a.txn.borrow().clone() {
                Some(t) => (t, false),
                None => (a.file.db.begin_read()?, true),
            };
            let r = (|| -> Result<bool> {
                let cookie = t.schema_cookie()?;
                let Some(cached) = self.schema.attached.get_mut(slot) else {
                    return Ok(false);
                };
                if !main_stale && cookie == cached.schema.cookie {
                    return Ok(false);
                }
                let ts = TxnStore::new(t.clone());
                let store = RoutedStore {
                    main: &main,
                    temp: None,
                    attached: vec![&ts as &dyn Store; slot + 1],
                };
                cached.schema = exec::load_attached_schema(&store, slot)?;
                Ok(true)
            })();
            if transient {
                t.rollback();
            }
            if r? {
                self.schema_gen += 1;
            }
        }
        Ok(())
    }

    /// (lock wait, explicit transaction, named savepoints) for `attached_stores`.
    fn attached_store_opts(&self) -> (Duration, bool, usize) {
        (
            self.busy_timeout().max(self.db.concurrent_busy_timeout()),
            self.txn.is_some(),
            self.savepoints.len(),
        )
    }

    /// Ends every attached database's transaction with the main one's (attach.rs,
    /// invariant 3). Commit errors are reported after every database had its turn.
    fn end_attached(&self, commit: bool) -> Result<()> {
        let mut first_err = None;
        for a in &self.attached {
            if let Err(e) = a.end_transaction(commit) {
                first_err.get_or_insert(e);
            }
        }
        match first_err {
            Some(e) => Err(e.into()),
            None => Ok(()),
        }
    }

    /// A deferred transaction's snapshot starts at its first read, as SQLite's: BEGIN took
    /// one (the transaction needs a view), which the first statement that reads in it
    /// replaces with the latest, so commits made between BEGIN and then are seen (and a
    /// first write does not fail as stale). On a backend error the transaction is gone.
    fn first_read(&mut self) -> Result<()> {
        if !std::mem::take(&mut self.txn_unread) {
            return Ok(());
        }
        let Some(t) = self.txn.clone() else {
            return Ok(());
        };
        if t.is_write() {
            return Ok(());
        }
        t.rollback();
        if let Err(e) = t.renew_read() {
            self.txn = None;
            self.savepoints.clear();
            self.end_temp_tx(false);
            let _ = self.end_attached(false);
            return Err(e.into());
        }
        Ok(())
    }

    /// Runs `f` with a transaction valid for reading the schema.
    fn with_read_txn<T>(&mut self, f: impl FnOnce(&mut ConnInner, &Txn) -> Result<T>) -> Result<T> {
        self.first_read()?;
        if let Some(t) = self.txn.clone() {
            return f(self, &t);
        }
        let t = self.db.begin_read()?;
        let r = f(self, &t);
        t.rollback();
        // Snapshots taken on attached databases end with the main one.
        let _ = self.end_attached(false);
        r
    }

    fn run(&mut self, stmt: &Stmt, params: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>> {
        if let Stmt::Pragma { name, value } = stmt {
            let pragma = key(&name.name);
            if pragma == "parlite_stats" && value.is_none() {
                return self.stats_rows();
            }
            if pragma == "wal_checkpoint" {
                return self.wal_checkpoint_rows(name.schema.as_deref(), value.as_ref());
            }
            if pragma == "cache_size" {
                return self.cache_size_rows(name.schema.as_deref(), value.as_ref());
            }
            let main = name
                .schema
                .as_deref()
                .is_none_or(|s| s.eq_ignore_ascii_case("main"));
            if pragma == "synchronous" {
                if value.is_some() && self.txn.is_some() {
                    return Err(error(
                        codes::SQLITE_ERROR,
                        "Safety level may not be changed inside a transaction",
                    ));
                }
                if let (false, Some(schema)) = (main, &name.schema) {
                    return self.synchronous_rows(schema, value.as_ref());
                }
            }
            if pragma == "page_size" && main {
                if let Some(page_size) = exec::pragma::int_arg(value.as_ref()) {
                    self.set_page_size(page_size)?;
                    return Ok(Vec::new());
                }
            }
            if pragma == "data_version" && main {
                return self.data_version_rows();
            }
            if pragma == "cache_spill" {
                return self.cache_spill_rows(value.as_ref());
            }
        }
        // PRAGMA query_only (and a read-only open, which TEMP writes cannot pass either,
        // unlike SQLite's): nothing that would write a database (TEMP included) runs,
        // nor BEGIN IMMEDIATE/EXCLUSIVE, which starts writing; attaching or detaching one
        // writes nothing, as in SQLite.
        let begins_writing = matches!(
            stmt,
            Stmt::Begin {
                mode: Some(TxnMode::Immediate | TxnMode::Exclusive)
            }
        );
        if (self.state.settings.query_only.get() || self.read_only)
            && (begins_writing || !exec::is_readonly(stmt))
            && !matches!(stmt, Stmt::Attach { .. } | Stmt::Detach(_))
        {
            return Err(error(
                codes::SQLITE_READONLY,
                "attempt to write a readonly database",
            ));
        }
        self.run_stmt(stmt, params)
    }

    /// `PRAGMA page_size = N` on the main database: a blank database (no table, no header
    /// setting yet) is re-created with pages of N bytes, as SQLite applies the pragma until
    /// the first table is created; otherwise, or for a size that is not a power of two in
    /// 512..=65536, nothing changes. Re-creating closes the database, so it happens only
    /// when this connection holds it alone (no other connection, no `Database` handle
    /// kept by the application) and outside a transaction: else the pragma is ignored.
    fn set_page_size(&mut self, page_size: i64) -> Result<()> {
        let valid = (512..=65536).contains(&page_size) && page_size.count_ones() == 1;
        if !valid || self.txn.is_some() {
            return Ok(());
        }
        let h = self.with_read_txn(|_, t| Ok(t.header()?))?;
        let blank = h.page_count == 1
            && h.schema_cookie == 0
            && h.user_version == 0
            && h.application_id == 0
            && h.freelist_count == 0;
        if !blank || i64::from(h.page_size) == page_size {
            return Ok(());
        }
        // Every handle but this connection's own two (`db` and its cache ask) must go.
        self.spare_read = None;
        self.spare_explicit = None;
        self.idle_cursors = IdleCursors::default();
        self.plan = None;
        if !self.db.held_only_by(2) {
            return Ok(());
        }
        let opts = OpenOptions {
            page_size: page_size as u32,
            page_size_for_blank: true,
            synchronous: self.db.synchronous(),
            ..OpenOptions::default()
        };
        let cache_size = self.cache.size.get();
        let placeholder = parlite_storage::Database::open_in_memory(OpenOptions::default())?;
        self.cache = CacheSetting::new(&placeholder)?;
        // Dropping the last handle closes the file (its final checkpoint folds the log).
        drop(std::mem::replace(&mut self.db, placeholder));
        let path = self.schema.main_file.clone();
        let reopened = if path.is_empty() {
            parlite_storage::Database::open_in_memory(opts)
        } else {
            // The storage re-checks, under the process lock, that the file is blank.
            parlite_storage::Database::open(&path, opts.clone()).or_else(|_| {
                parlite_storage::Database::open(
                    &path,
                    OpenOptions {
                        page_size_for_blank: false,
                        ..opts
                    },
                )
            })
        };
        self.db = reopened?;
        self.cache = CacheSetting::new(&self.db)?;
        self.cache.set(cache_size)?;
        self.schema_loaded = false;
        self.schema_gen += 1;
        Ok(())
    }

    /// `PRAGMA data_version`: this connection's count of the times it found that another
    /// connection had committed (`DataVersion`), read at the transaction's snapshot.
    fn data_version_rows(&mut self) -> Result<Vec<Vec<SqlValue>>> {
        self.first_read()?;
        let seq = match &self.txn {
            Some(t) => t.snapshot_seq(),
            None => {
                let t = self.begin_autocommit_read()?;
                let seq = t.snapshot_seq();
                t.commit()?;
                self.spare_read = Some(t);
                seq
            }
        };
        let seq = seq.ok_or_else(|| error(codes::SQLITE_MISUSE, "transaction has ended"))?;
        Ok(vec![vec![SqlValue::Integer(
            self.data_version.read_at(seq),
        )]])
    }

    /// `PRAGMA cache_spill[ = N|boolean]`: whether and when a write transaction moves its
    /// changed pages out of memory, into a spill file of its own (storage pager/spill.rs;
    /// `apply_cache_spill`). It reads back as SQLite computes it (0 when off, else the
    /// larger of N and the cache size in pages), with parlite's cache size in pages (KiB /
    /// page size, no per-page overhead).
    fn cache_spill_rows(
        &mut self,
        value: Option<&parlite_sql::parse::ast::PragmaValue>,
    ) -> Result<Vec<Vec<SqlValue>>> {
        let page_size = self.with_read_txn(|_, t| Ok(t.header()?.page_size))?;
        let pages = |n: i64| {
            if n >= 0 {
                n
            } else {
                n.saturating_mul(-1024) / i64::from(page_size)
            }
        };
        match exec::pragma::cache_spill_arg(value) {
            Some((size, on)) => {
                if let Some(n) = size {
                    self.cache_spill.1 = pages(n);
                }
                self.cache_spill.0 = on;
                Ok(Vec::new())
            }
            None => {
                let v = match self.cache_spill.0 {
                    false => 0,
                    true => self.cache_spill.1.max(pages(self.cache.size.get())),
                };
                Ok(vec![vec![SqlValue::Integer(v)]])
            }
        }
    }

    /// Passes `PRAGMA cache_spill` to a write transaction before a statement writes: off,
    /// its pages stay in memory; on, it keeps up to the larger of N and this connection's
    /// `cache_size` in pages before it spills, as SQLite's. With both settings at their
    /// defaults the storage's own bound (the shared cache's) applies, and nothing is asked.
    fn apply_cache_spill(&self, t: &Txn) {
        let size = self.cache.size.get();
        if self.cache_spill == (true, 0) && size == DEFAULT_CACHE_SIZE {
            return;
        }
        let pages = self.cache_spill.0.then(|| {
            let page_size = t.header().map_or(4096, |h| i64::from(h.page_size.max(512)));
            let cache_pages = match size {
                n if n >= 0 => n,
                n => n.saturating_mul(-1024) / page_size,
            };
            usize::try_from(self.cache_spill.1.max(cache_pages)).unwrap_or(0)
        });
        t.set_spill_pages(pages);
    }

    /// Commits `t` as durably as this connection's `PRAGMA synchronous` says (invariant 6),
    /// unless the commit hook turns a write transaction's commit into a rollback (the
    /// caller rolls back, as after any failed commit).
    fn commit_txn(&self, t: &Txn) -> std::result::Result<(), CommitError> {
        // The hook slot first: `is_write` takes the transaction's lock, on every commit.
        if self.hooks.borrow().commit.is_some() && t.is_write() {
            let hook = self.hooks.borrow_mut().commit.take();
            if let Some(mut h) = hook {
                let veto = h();
                self.hooks.borrow_mut().commit.get_or_insert(h);
                if veto {
                    return Err(CommitError::Vetoed);
                }
            }
        }
        t.set_synchronous(sync_mode(self.state.synchronous.get()));
        t.commit().map_err(CommitError::Storage)?;
        // Own commits matter to `PRAGMA data_version` only once it has been read (its first
        // read starts the count afresh); asking the transaction is a mutex round trip, ~33
        // instructions per commit (callgrind, kv_ops; BENCHMARKS.md, pragmas branch).
        if self.data_version.seen_seq.get().is_some() && t.committed_seq().is_some() {
            self.data_version
                .own_commits
                .set(self.data_version.own_commits.get() + 1);
        }
        Ok(())
    }

    /// `PRAGMA parlite_stats`: (name, value) rows of `Database::stats`, conflicts also per
    /// table or index (`conflicts:<name>`).
    fn stats_rows(&mut self) -> Result<Vec<Vec<SqlValue>>> {
        let st = stats_of(&self.db, &self.counters);
        self.with_read_txn(|c, t| c.refresh_schema(t))?;
        let int = |n: &str, v: u64| {
            vec![
                SqlValue::text(n),
                SqlValue::Integer(i64::try_from(v).unwrap_or(i64::MAX)),
            ]
        };
        let mut rows = vec![
            int("commits", st.commits),
            int("concurrent_commits", st.concurrent_commits),
            int("concurrent_fast_commits", st.concurrent_fast_commits),
            int("concurrent_rebased_commits", st.concurrent_rebased_commits),
            int("concurrent_page_rebases", st.concurrent_page_rebases),
            int("locked_commits", st.locked_commits),
            int("conflicts", st.conflicts),
        ];
        for (root, n) in &st.conflicts_by_root {
            rows.push(int(&format!("conflicts:{}", self.tree_name(*root)), *n));
        }
        rows.extend([
            int("autocommit_retries", st.autocommit_retries),
            int("autocommit_lock_fallbacks", st.autocommit_lock_fallbacks),
            int("fsyncs", st.fsyncs),
            vec![
                SqlValue::text("commits_per_fsync"),
                SqlValue::real(st.commits_per_fsync()),
            ],
            int("checkpoints", st.checkpoints),
            int("checkpoint_pages", st.checkpoint_pages),
            int("checkpoint_ms", st.checkpoint_ms),
            int("checkpoint_max_ms", st.checkpoint_max_ms),
            int("checkpoint_stalls", st.checkpoint_stalls),
            int("relaxed_checkpoints", st.relaxed_checkpoints),
            int("log_bytes", st.log_bytes),
            int("log_file_bytes", st.log_file_bytes),
            int("oldest_snapshot_age_ms", st.oldest_snapshot_age_ms),
            int("writer_waits", st.writer_waits),
            int("writer_wait_ms", st.writer_wait_ms),
            int("writer_wait_max_ms", st.writer_wait_max_ms),
            int("writer_wakes", st.writer_wakes),
            int("writer_handoffs", st.writer_handoffs),
            int("writer_lock_holds", st.writer_lock_holds),
            int("writer_lock_held_us", st.writer_lock_held_us),
            int("gathers", st.gathers),
            int("gather_us", st.gather_us),
            int("log_sync_us", st.log_sync_us),
            int("cache_pages", st.cache_pages),
            int("cache_pages_max", st.cache_pages_max),
            int("spilled_pages", st.spilled_pages),
            int("spilled_direct_pages", st.spilled_direct_pages),
        ]);
        Ok(rows)
    }

    /// `PRAGMA [schema.]wal_checkpoint[(MODE)]`: one row `busy|log|checkpointed`, SQLite's
    /// shape (storage pager/checkpoint.rs, docs/log-and-recovery.md 3c). No schema checkpoints
    /// main and every attached database (the row sums them, `busy` if any was). Inside an
    /// open transaction the writer lock is not waited for (this connection may hold it).
    /// `PRAGMA [schema.]cache_size[ = N]` (main when unqualified): this connection's setting
    /// on that database, in SQLite's units (pages; KiB when negative). The database's page
    /// cache, shared by its connections, keeps the largest setting of an open connection
    /// (storage `Database::ask_cache_size`); TEMP is in memory and keeps every page.
    fn cache_size_rows(
        &mut self,
        schema: Option<&str>,
        value: Option<&parlite_sql::parse::ast::PragmaValue>,
    ) -> Result<Vec<Vec<SqlValue>>> {
        let setting = match schema {
            None => &self.cache,
            Some(s) if s.eq_ignore_ascii_case("main") => &self.cache,
            Some(s) if s.eq_ignore_ascii_case("temp") => &self.temp_cache,
            Some(s) => match self
                .attached
                .iter()
                .find(|a| a.name.eq_ignore_ascii_case(s))
            {
                Some(a) => &a.cache,
                None => return Err(error(codes::SQLITE_ERROR, format!("unknown database {s}"))),
            },
        };
        match exec::pragma::int_arg(value) {
            Some(n) => {
                setting.set(n)?;
                Ok(Vec::new())
            }
            None => Ok(vec![vec![SqlValue::Integer(setting.size.get())]]),
        }
    }

    /// `PRAGMA temp.synchronous` and `PRAGMA aux.synchronous`: each database has its own
    /// level, as in SQLite (the main one's is `ConnState::synchronous`). TEMP's is OFF and
    /// stays so (SQLite's temp database never syncs and ignores the assignment); an
    /// attached database's starts at the level it was opened with and decides how durable
    /// this connection's commits on it are (`AttachedDb::end_transaction`).
    fn synchronous_rows(
        &mut self,
        schema: &str,
        value: Option<&parlite_sql::parse::ast::PragmaValue>,
    ) -> Result<Vec<Vec<SqlValue>>> {
        let setting = if schema.eq_ignore_ascii_case("temp") {
            return Ok(match value {
                Some(_) => Vec::new(),
                None => vec![vec![SqlValue::Integer(0)]],
            });
        } else {
            match self
                .attached
                .iter()
                .find(|a| a.name.eq_ignore_ascii_case(schema))
            {
                Some(a) => &a.synchronous,
                None => {
                    return Err(error(
                        codes::SQLITE_ERROR,
                        format!("unknown database {schema}"),
                    ))
                }
            }
        };
        match exec::pragma::synchronous_arg(value) {
            Some(level) => {
                setting.set(level);
                Ok(Vec::new())
            }
            None => Ok(vec![vec![SqlValue::Integer(setting.get())]]),
        }
    }

    fn wal_checkpoint_rows(
        &mut self,
        schema: Option<&str>,
        value: Option<&parlite_sql::parse::ast::PragmaValue>,
    ) -> Result<Vec<Vec<SqlValue>>> {
        use parlite_storage::{CheckpointMode, CheckpointOutcome};
        let mode = match parlite_sql::exec::pragma::wal_checkpoint_mode(value) {
            "full" => CheckpointMode::Full,
            "restart" => CheckpointMode::Restart,
            "truncate" => CheckpointMode::Truncate,
            _ => CheckpointMode::Passive,
        };
        let wait = if self.txn.is_some() {
            Duration::ZERO
        } else {
            self.busy_timeout()
        };
        let mut dbs: Vec<parlite_storage::Database> = Vec::new();
        match schema {
            None => {
                dbs.push(self.db.clone());
                dbs.extend(self.attached.iter().map(|a| a.file.db.clone()));
            }
            Some(s) if s.eq_ignore_ascii_case("main") => dbs.push(self.db.clone()),
            // The TEMP database has no log.
            Some(s) if s.eq_ignore_ascii_case("temp") => {}
            Some(s) => match self
                .attached
                .iter()
                .find(|a| a.name.eq_ignore_ascii_case(s))
            {
                Some(a) => dbs.push(a.file.db.clone()),
                None => return Err(error(codes::SQLITE_ERROR, format!("unknown database {s}"))),
            },
        }
        let mut total: Option<CheckpointOutcome> = None;
        for db in dbs {
            let o = db.checkpoint_mode(mode, wait)?;
            total = Some(match total {
                None => o,
                Some(t) => {
                    let add = |a: i64, b: i64| {
                        if a < 0 {
                            b
                        } else if b < 0 {
                            a
                        } else {
                            a + b
                        }
                    };
                    CheckpointOutcome {
                        busy: t.busy || o.busy,
                        log_frames: add(t.log_frames, o.log_frames),
                        checkpointed_frames: add(t.checkpointed_frames, o.checkpointed_frames),
                    }
                }
            });
        }
        let o = total.unwrap_or(CheckpointOutcome::NO_LOG);
        Ok(vec![vec![
            SqlValue::Integer(i64::from(o.busy)),
            SqlValue::Integer(o.log_frames),
            SqlValue::Integer(o.checkpointed_frames),
        ]])
    }

    /// The schema object stored in the tree rooted at `root`, for messages.
    fn tree_name(&self, root: u32) -> String {
        if root == 1 {
            return "sqlite_schema".to_string();
        }
        if let Some(t) = self.schema.tables.values().find(|t| t.root == root) {
            return t.name.clone();
        }
        if let Some(i) = self.schema.indexes.values().find(|i| i.root == root) {
            return i.name.clone();
        }
        format!("page {root}")
    }

    /// Maps a storage error; a validation conflict names the table or index (invariant 1):
    /// `database is locked (conflict on table accounts: ...)`, SQLITE_BUSY_SNAPSHOT.
    /// Calls the rollback hook: a transaction ended in a rollback the application sees
    /// (ROLLBACK, a failed COMMIT, a statement error that ends the transaction).
    fn rolled_back(&self) {
        let hook = self.hooks.borrow_mut().rollback.take();
        if let Some(mut h) = hook {
            h();
            self.hooks.borrow_mut().rollback.get_or_insert(h);
        }
    }

    /// Ends the explicit transaction `t` whose COMMIT (or outermost RELEASE) failed: rolled
    /// back with its savepoints, TEMP and attached changes, the rollback hook called; the
    /// error to report.
    fn fail_commit(&mut self, t: &Txn, e: CommitError) -> Error {
        t.rollback();
        self.savepoints.clear();
        self.end_temp_tx(false);
        let _ = self.end_attached(false);
        let err = self.commit_error(e);
        self.schema_loaded = false;
        self.rolled_back();
        err
    }

    /// The error a failed commit reports: the commit hook's veto as SQLite's
    /// SQLITE_CONSTRAINT_COMMITHOOK, a storage error as `storage_error`.
    fn commit_error(&self, e: CommitError) -> Error {
        match e {
            CommitError::Vetoed => Error {
                code: codes::SQLITE_CONSTRAINT,
                extended_code: codes::SQLITE_CONSTRAINT_COMMITHOOK,
                message: "constraint failed".to_string(),
            },
            CommitError::Storage(e) => self.storage_error(e),
        }
    }

    fn storage_error(&self, e: StorageError) -> Error {
        let StorageError::Conflict { root, reason } = &e else {
            return e.into();
        };
        let what = if root.0 == 1 {
            "the schema".to_string()
        } else if let Some(t) = self.schema.tables.values().find(|t| t.root == root.0) {
            format!("table {}", t.name)
        } else if let Some(i) = self.schema.indexes.values().find(|i| i.root == root.0) {
            format!("index {}", i.name)
        } else {
            format!("the tree at page {}", root.0)
        };
        Error {
            code: codes::SQLITE_BUSY,
            extended_code: codes::SQLITE_BUSY_SNAPSHOT,
            message: format!("database is locked (conflict on {what}: {reason})"),
        }
    }

    fn run_stmt(&mut self, stmt: &Stmt, params: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>> {
        match stmt {
            Stmt::Begin { mode } => {
                if self.txn.is_some() {
                    return Err(error(
                        codes::SQLITE_ERROR,
                        "cannot start a transaction within a transaction",
                    ));
                }
                let t = self.begin_explicit(*mode)?;
                if matches!(mode, Some(TxnMode::Immediate) | Some(TxnMode::Exclusive)) {
                    // As SQLite, IMMEDIATE takes every attached database's writer lock too.
                    let wait = self.busy_timeout().max(self.db.concurrent_busy_timeout());
                    if let Err(e) = self.attached.iter().try_for_each(|a| a.begin_write(wait)) {
                        t.rollback();
                        let _ = self.end_attached(false);
                        return Err(e.into());
                    }
                }
                self.txn = Some(t);
                self.txn_from_savepoint = false;
                self.txn_unread = matches!(mode, None | Some(TxnMode::Deferred));
                self.temp_tx_sp = Some(self.temp_txn.savepoint()?);
                Ok(Vec::new())
            }
            Stmt::Commit => {
                if let Some(t) = self.txn.clone() {
                    // Deferred foreign keys: a violation left fails COMMIT, still open.
                    self.check_deferred_fkeys(&t)?;
                    self.end_deferred_fkeys();
                }
                let Some(t) = self.txn.take() else {
                    return Err(error(
                        codes::SQLITE_ERROR,
                        "cannot commit - no transaction is active",
                    ));
                };
                if let Err(e) = self.commit_txn(&t) {
                    if let CommitError::Storage(e @ StorageError::Busy { .. }) = e {
                        if t.is_concurrent() {
                            // Only the lock wait timed out: still open (invariant 1).
                            self.txn = Some(t);
                            return Err(e.into());
                        }
                        return Err(self.fail_commit(&t, CommitError::Storage(e)));
                    }
                    return Err(self.fail_commit(&t, e));
                }
                self.savepoints.clear();
                self.spare_explicit = Some(t);
                self.end_temp_tx(true);
                self.end_attached(true)?;
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
                self.end_deferred_fkeys();
                t.rollback();
                self.spare_explicit = Some(t);
                self.end_temp_tx(false);
                let _ = self.end_attached(false);
                self.rolled_back();
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
                for a in &self.attached {
                    a.rollback_to(pos)?;
                }
                self.savepoints.truncate(pos + 1);
                self.schema_loaded = false;
                Ok(Vec::new())
            }
            Stmt::Savepoint(name) => {
                self.first_read()?;
                if self.txn.is_none() {
                    self.txn = Some(self.begin_explicit(None)?);
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
                for a in &self.attached {
                    a.savepoint()?;
                }
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
                    // As COMMIT: deferred foreign keys are checked first.
                    self.check_deferred_fkeys(&t)?;
                    self.end_deferred_fkeys();
                    self.savepoints.clear();
                    self.txn = None;
                    if let Err(e) = self.commit_txn(&t) {
                        return Err(self.fail_commit(&t, e));
                    }
                    self.spare_explicit = Some(t);
                    self.end_temp_tx(true);
                    self.end_attached(true)?;
                    return Ok(Vec::new());
                }
                t.release(self.savepoints[pos].1)?;
                self.temp_txn.release(self.savepoints[pos].2)?;
                for a in &self.attached {
                    a.release(pos)?;
                }
                self.savepoints.truncate(pos);
                Ok(Vec::new())
            }
            Stmt::Attach { file, schema, .. } => self.attach(file, schema, params),
            Stmt::Detach(name) => self.detach(name, params),
            Stmt::Vacuum { .. } if self.txn.is_some() => Err(error(
                codes::SQLITE_ERROR,
                "cannot VACUUM from within a transaction",
            )),
            Stmt::Vacuum {
                schema,
                into: Some(into),
            } => self.vacuum_into(schema.as_deref(), into, params),
            _ => self.run_in_txn(stmt, params),
        }
    }

    fn run_in_txn(&mut self, stmt: &Stmt, params: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>> {
        self.first_read()?;
        let readonly = exec::is_readonly(stmt);
        self.state.explicit_txn.set(self.txn.is_some());
        if let Some(t) = self.txn.clone() {
            if !readonly && !t.is_write() {
                t.upgrade(self.busy_timeout())?;
            }
            if !readonly {
                self.apply_cache_spill(&t);
            }
            self.refresh_schema(&t)?;
            if t.is_concurrent() && self.needs_serializable(stmt) {
                t.set_isolation(Isolation::Serializable)?;
            }
            if !t.is_write() {
                // A read snapshot has nothing to undo; no statement savepoint needed.
                return self.execute(&t, stmt, params);
            }
            // A one-row INSERT that fails only before writing runs without the savepoint
            // (`exec::needs_statement_savepoint`): opening, saving into and releasing it
            // cost ~2.9k of the ~17.3k instructions of such an INSERT's step, mostly the
            // copy of each page it wrote (callgrind, speedtest1 tests 100-120; BENCHMARKS.md,
            // inserts branch).
            let sp = match exec::needs_statement_savepoint(&self.schema, &self.state, stmt) {
                true => Some(t.savepoint()?),
                false => None,
            };
            let changes_before = t.change_count();
            let r = self.execute(&t, stmt, params);
            match r {
                Ok(rows) => {
                    if let Some(sp) = sp {
                        t.release(sp)?;
                    }
                    Ok(rows)
                }
                Err(e)
                    if exec::rolls_back_transaction_on_error(
                        &self.state,
                        stmt,
                        e.code,
                        e.extended_code,
                    ) || (sp.is_none() && t.change_count() != changes_before) =>
                {
                    // OR ROLLBACK: the whole transaction ends (lang_conflict.html). So does
                    // a statement without a savepoint that failed after writing (an I/O
                    // error, a full disk), as in SQLite without a statement journal.
                    if let Some(sp) = sp {
                        let _ = t.rollback_to(sp);
                        let _ = t.release(sp);
                    }
                    self.txn = None;
                    self.savepoints.clear();
                    self.end_deferred_fkeys();
                    t.rollback();
                    self.end_temp_tx(false);
                    let _ = self.end_attached(false);
                    self.schema_loaded = false;
                    self.rolled_back();
                    Err(e)
                }
                Err(e) if keeps_changes_on_error(&self.state, stmt, &e) => {
                    // OR FAIL: the statement stops at the failing row, keeping the rows it
                    // changed before it (lang_conflict.html).
                    if let Some(sp) = sp {
                        t.release(sp)?;
                    }
                    Err(e)
                }
                Err(e) => {
                    // Statement atomicity: undo this statement only (nothing to undo
                    // without a savepoint: it failed before writing).
                    if let Some(sp) = sp {
                        let _ = t.rollback_to(sp);
                        let _ = t.release(sp);
                    }
                    if self.schema_loaded {
                        let _ = self.refresh_schema(&t);
                    }
                    Err(e)
                }
            }
        } else if matches!(stmt, Stmt::Insert(_) | Stmt::Update(_) | Stmt::Delete(_)) {
            self.run_autocommit_write(stmt, params)
        } else {
            let t = if readonly {
                self.begin_autocommit_read()?
            } else {
                // The engine chose to retry, so the statement is still in progress for the
                // application: wait for the lock as long as a concurrent attempt's commit would
                // (the lock is mostly held for other commits' short validation), and longer if
                // the connection's busy_timeout says so. With busy_timeout 0 an immediate BUSY
                // here surfaced under contention although no user transaction held the lock.
                let wait = self.busy_timeout().max(self.db.concurrent_busy_timeout());
                self.db.begin_write(wait)?
            };
            let r = self.run_autocommit(&t, stmt, params);
            if readonly {
                match r.is_ok() && self.chunk_stopped() {
                    true => self.chunk_txn = Some(t),
                    false => self.spare_read = Some(t),
                }
            }
            r
        }
    }

    /// Runs `stmt` in its own transaction `t` and ends `t` (committed on success).
    fn run_autocommit(
        &mut self,
        t: &Txn,
        stmt: &Stmt,
        params: &[SqlValue],
    ) -> Result<Vec<Vec<SqlValue>>> {
        if let Err(e) = self.refresh_schema(t) {
            t.rollback();
            let _ = self.end_attached(false);
            return Err(e);
        }
        match self.execute(t, stmt, params) {
            // Rows are left: the statement keeps reading this snapshot (`chunk_txn`).
            Ok(rows) if self.chunk_stopped() => Ok(rows),
            Ok(rows) => {
                if let Err(e) = self.commit_txn(t) {
                    t.rollback();
                    let _ = self.end_attached(false);
                    self.schema_loaded = false;
                    self.rolled_back();
                    return Err(match e {
                        CommitError::Storage(e) => e.into(),
                        vetoed => self.commit_error(vetoed),
                    });
                }
                if let Err(e) = self.end_attached(true) {
                    self.schema_loaded = false;
                    return Err(e);
                }
                Ok(rows)
            }
            Err(e) => {
                let wrote = t.is_write();
                t.rollback();
                let _ = self.end_attached(false);
                // The schema cache may hold changes that were just rolled back.
                self.schema_loaded = false;
                if wrote {
                    self.rolled_back();
                }
                Err(e)
            }
        }
    }

    /// Whether the run just made stopped with rows left for another chunk.
    fn chunk_stopped(&self) -> bool {
        self.chunk
            .as_ref()
            .is_some_and(|c| c.stopped_at().is_some())
    }

    /// A later chunk of a SELECT whose first run stopped with rows left (`self.chunk`
    /// says where it resumes), read on the statement's own snapshot `t`. The schema is
    /// the snapshot's: reloaded when the connection has since loaded a newer one.
    fn run_chunk(
        &mut self,
        t: &Txn,
        stmt: &Stmt,
        params: &[SqlValue],
    ) -> Result<Vec<Vec<SqlValue>>> {
        self.refresh_schema(t)?;
        self.execute(t, stmt, params)
    }

    /// The read transaction of an autocommit statement: the previous one's renewed on a
    /// fresh snapshot (storage T6) when there is one. Its only other holders are the
    /// parked cursors of `idle_cursors`, which `Cursor::rebind_to` then keeps without
    /// swapping their transaction.
    fn begin_autocommit_read(&mut self) -> Result<Txn> {
        match self.spare_read.take() {
            Some(t) => {
                t.renew_read()?;
                Ok(t)
            }
            None => Ok(self.db.begin_read()?),
        }
    }

    /// A storage concurrent transaction with this connection's isolation level.
    fn begin_concurrent(&self) -> Result<Txn> {
        let t = self.db.begin_concurrent()?;
        self.set_isolation(&t)?;
        Ok(t)
    }

    /// Gives concurrent transaction `t` this connection's isolation level; on failure `t`
    /// is rolled back.
    fn set_isolation(&self, t: &Txn) -> Result<()> {
        let isolation = if self.state.isolation_snapshot.get() {
            Isolation::Snapshot
        } else {
            Isolation::Serializable
        };
        if let Err(e) = t.set_isolation(isolation) {
            t.rollback();
            return Err(e.into());
        }
        Ok(())
    }

    /// The storage transaction of BEGIN (`mode`; `None`: DEFERRED) or of a SAVEPOINT
    /// outside a transaction: the previous explicit transaction's renewed (storage T6)
    /// when there is one, else a new one. Its only other holders are the parked cursors of
    /// `idle_cursors`, which `Cursor::rebind_to` then keeps without swapping their
    /// transaction. A renewal that fails leaves it finished, kept for the next BEGIN.
    fn begin_explicit(&mut self, mode: Option<TxnMode>) -> Result<Txn> {
        // The engine chose to retry, so the statement is still in progress for the
        // application: wait for the lock as long as a concurrent attempt's commit would
        // (the lock is mostly held for other commits' short validation), and longer if
        // the connection's busy_timeout says so. With busy_timeout 0 an immediate BUSY
        // here surfaced under contention although no user transaction held the lock.
        let wait = self.busy_timeout().max(self.db.concurrent_busy_timeout());
        let immediate = matches!(mode, Some(TxnMode::Immediate | TxnMode::Exclusive));
        let concurrent = mode == Some(TxnMode::Concurrent);
        let Some(t) = self.spare_explicit.take() else {
            return match (immediate, concurrent) {
                (true, _) => Ok(self.db.begin_write(wait)?),
                (_, true) => self.begin_concurrent(),
                _ => Ok(self.db.begin_read()?),
            };
        };
        let renewed = match (immediate, concurrent) {
            (true, _) => t.renew_write(wait),
            (_, true) => t.renew_concurrent(),
            _ => t.renew_read(),
        };
        if let Err(e) = renewed {
            self.spare_explicit = Some(t);
            return Err(e.into());
        }
        if concurrent {
            self.set_isolation(&t)?;
        }
        Ok(t)
    }

    /// An autocommit INSERT/UPDATE/DELETE (invariant 3): concurrent attempts, retried on
    /// conflict, then one under the writer lock.
    fn run_autocommit_write(
        &mut self,
        stmt: &Stmt,
        params: &[SqlValue],
    ) -> Result<Vec<Vec<SqlValue>>> {
        let saved = (
            self.state.last_insert_rowid.get(),
            self.state.changes.get(),
            self.state.total_changes.get(),
        );
        let mut attempt = 0;
        // Invariant 7.
        let mut sole = self.counters.open_connections.load(Ordering::Relaxed) == 1;
        // A connection with a commit or update hook runs its autocommit writes under the
        // writer lock, as SQLite does every write: an attempt retried after a conflict would
        // show the application the hooks' calls of an attempt that never committed.
        let hooked = self.state.update_hook.is_set() || self.hooks.borrow().commit.is_some();
        loop {
            let locked = sole || hooked || attempt >= AUTOCOMMIT_RETRIES_MAX;
            let t = if sole {
                match self.db.begin_write(Duration::ZERO) {
                    Ok(t) => t,
                    Err(StorageError::Busy { .. }) => {
                        sole = false;
                        continue;
                    }
                    Err(e) => return Err(e.into()),
                }
            } else if locked {
                if !hooked {
                    self.counters
                        .autocommit_lock_fallbacks
                        .fetch_add(1, Ordering::Relaxed);
                }
                // The engine chose to retry, so the statement is still in progress for the
                // application: wait for the lock as long as a concurrent attempt's commit would
                // (the lock is mostly held for other commits' short validation), and longer if
                // the connection's busy_timeout says so. With busy_timeout 0 an immediate BUSY
                // here surfaced under contention although no user transaction held the lock.
                let wait = self.busy_timeout().max(self.db.concurrent_busy_timeout());
                self.db.begin_write(wait)?
            } else {
                self.begin_concurrent()?
            };
            if let Err(e) = self.refresh_schema(&t) {
                t.rollback();
                let _ = self.end_attached(false);
                return Err(e);
            }
            if !locked && self.needs_serializable(stmt) {
                if let Err(e) = t.set_isolation(Isolation::Serializable) {
                    t.rollback();
                    let _ = self.end_attached(false);
                    return Err(e.into());
                }
            }
            // Undoes the attempt's TEMP changes (triggers may write TEMP tables) on retry.
            let tsp = match self.temp_savepoint(stmt) {
                Ok(sp) => sp,
                Err(e) => {
                    t.rollback();
                    let _ = self.end_attached(false);
                    return Err(e.into());
                }
            };
            self.apply_cache_spill(&t);
            let outcome = self.execute(&t, stmt, params);
            // OR FAIL: the rows changed before the failing one are committed, then the
            // error is reported (a conflict at commit retries the statement as usual).
            let mut failed = None;
            let rows = match outcome {
                Ok(rows) => rows,
                Err(e) if keeps_changes_on_error(&self.state, stmt, &e) => {
                    failed = Some(e);
                    Vec::new()
                }
                Err(e) => {
                    t.rollback();
                    self.undo_temp(tsp);
                    let _ = self.end_attached(false);
                    self.schema_loaded = false;
                    self.rolled_back();
                    return Err(e);
                }
            };
            match self.commit_txn(&t) {
                Ok(()) => {
                    if let Some(sp) = tsp {
                        self.temp_txn.release(sp)?;
                    }
                    self.end_attached(true)?;
                    return match failed {
                        Some(e) => Err(e),
                        None => Ok(rows),
                    };
                }
                Err(CommitError::Storage(StorageError::Conflict { .. })) if !locked => {
                    t.rollback();
                    self.undo_temp(tsp);
                    let _ = self.end_attached(false);
                    self.state.last_insert_rowid.set(saved.0);
                    self.state.changes.set(saved.1);
                    self.state.total_changes.set(saved.2);
                    self.counters
                        .autocommit_retries
                        .fetch_add(1, Ordering::Relaxed);
                    attempt += 1;
                    // Let the writer we conflicted with finish before taking a new snapshot.
                    std::thread::yield_now();
                }
                Err(e) => {
                    t.rollback();
                    self.undo_temp(tsp);
                    let _ = self.end_attached(false);
                    let err = self.commit_error(e);
                    self.schema_loaded = false;
                    self.rolled_back();
                    return Err(err);
                }
            }
        }
    }

    /// Invariant 5: whether `stmt`, run in a snapshot-isolation concurrent transaction,
    /// could commit a constraint violation unless its reads are validated.
    fn needs_serializable(&self, stmt: &Stmt) -> bool {
        if !self.state.isolation_snapshot.get() || exec::is_readonly(stmt) {
            return false;
        }
        let name = match stmt {
            Stmt::Insert(i) => &i.table.name,
            Stmt::Update(u) => &u.table.name,
            Stmt::Delete(d) => &d.table.name,
            _ => return true,
        };
        let Some(t) = self.schema.table(name) else {
            return true;
        };
        if t.without_rowid
            || self.schema.table_indexes(t).iter().any(|i| i.unique)
            || !self.schema.triggers_for(&t.name).is_empty()
        {
            return true;
        }
        self.state.foreign_keys.get()
            && (!t.fkeys.is_empty()
                || self.schema.tables.values().any(|c| {
                    c.fkeys
                        .iter()
                        .any(|fk| fk.parent.eq_ignore_ascii_case(&t.name))
                }))
    }

    fn undo_temp(&self, sp: Option<u32>) {
        if let Some(sp) = sp {
            let _ = self.temp_txn.rollback_to(sp);
            let _ = self.temp_txn.release(sp);
        }
    }

    /// A collation was redefined or deleted, or a built-in's name taken over, since the
    /// schema was loaded: reload it and drop cached plans (`collation::user` invariant 4;
    /// SQLite expires its statements then).
    fn note_collation_changes(&mut self) {
        let gen = parlite_sql::collation::user::generation();
        if gen != self.collations_seen {
            self.collations_seen = gen;
            self.schema_loaded = false;
            self.schema_gen += 1;
            self.plan = None;
        }
    }

    fn execute(&mut self, t: &Txn, stmt: &Stmt, params: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>> {
        let main = TxnStore::with_idle(t.clone(), std::mem::take(&mut self.idle_cursors));
        let temp = TxnStore::new(self.temp_txn.clone());
        // Without attached databases there is no lock wait to compute (~50 instructions).
        let stores = match self.attached.is_empty() {
            true => Vec::new(),
            false => attached_stores(&self.attached, self.attached_store_opts()),
        };
        let store = RoutedStore {
            main: &main,
            temp: Some(&temp),
            attached: stores.iter().map(|s| s as &dyn Store).collect(),
        };
        // The temp database follows the statement: undone with it on error.
        let tsp = self.temp_savepoint(stmt)?;
        // Plans depend on the schema only (parameters are late-bound), so a SELECT, UPDATE or
        // DELETE reuses its plan, and an INSERT its resolved table (`exec::BoundDml`), while
        // `schema_gen` is unchanged.
        let is_insert = matches!(stmt, Stmt::Insert(_));
        let cacheable =
            is_insert || matches!(stmt, Stmt::Select(_) | Stmt::Update(_) | Stmt::Delete(_));
        let cached = match self.plan.take() {
            Some((gen, p)) if cacheable && gen == self.schema_gen => Some(p),
            _ => None,
        };
        let mut engine = Engine::new(&store, &mut self.schema, params, &self.state);
        engine.set_chunking(self.chunk.as_ref());
        if is_insert {
            engine.set_dml_cache(cached);
        } else if cacheable {
            engine.set_plan_cache(cached);
        }
        // A comparison under a collation the connection lacks (an index's, named by the
        // schema) fails the statement before it commits (`collation::user` invariant 2).
        parlite_sql::collation::user::take_missing();
        let r = engine.execute(stmt);
        let r = match parlite_sql::collation::user::take_missing() {
            Some(name) => Err(SqlError::NoSuchCollation { name }),
            None => r,
        };
        let plan = engine.take_cached_plan();
        for a in &self.attached {
            a.end_statement(r.is_ok());
        }
        drop(store);
        self.idle_cursors = main.into_idle();
        if cacheable {
            self.plan = plan.map(|p| (self.schema_gen, p));
        } else {
            // DDL, PRAGMA, ANALYZE...: the schema, or what planning reads, may have changed.
            self.schema_gen += 1;
        }
        match r {
            Ok(rows) => {
                if let Err(e) = self.check_max_page_count(t) {
                    self.undo_temp(tsp);
                    return Err(e);
                }
                if let Some(sp) = tsp {
                    self.temp_txn.release(sp)?;
                }
                Ok(rows)
            }
            Err(e) => {
                self.undo_temp(tsp);
                Err(e.into())
            }
        }
    }

    /// `PRAGMA max_page_count`: a statement that left the main database larger fails with
    /// SQLITE_FULL (and is undone as any failed statement), where SQLite fails the write
    /// that would pass the bound. Checked only when a bound below SQLite's ceiling is set.
    fn check_max_page_count(&self, t: &Txn) -> Result<()> {
        let max = self.state.settings.max_page_count.get();
        if max >= exec::pragma::MAX_PAGE_COUNT || !t.is_write() {
            return Ok(());
        }
        if i64::from(t.page_count()?) > max {
            return Err(StorageError::Full.into());
        }
        Ok(())
    }

    /// Fails with `FOREIGN KEY constraint failed` (SQLITE_CONSTRAINT_FOREIGNKEY) while a
    /// deferred foreign-key check recorded in this transaction still fails (COMMIT and the
    /// outermost RELEASE; the transaction stays open).
    fn check_deferred_fkeys(&mut self, t: &Txn) -> Result<()> {
        if self.state.fk_deferred.borrow().is_empty() {
            return Ok(());
        }
        self.refresh_schema(t)?;
        let main = TxnStore::new(t.clone());
        let temp = TxnStore::new(self.temp_txn.clone());
        let opts = self.attached_store_opts();
        let stores = attached_stores(&self.attached, opts);
        let store = RoutedStore {
            main: &main,
            temp: Some(&temp),
            attached: stores.iter().map(|s| s as &dyn Store).collect(),
        };
        let engine = Engine::new(&store, &mut self.schema, &[], &self.state);
        let r = engine.fk_check_deferred();
        drop(engine);
        for a in &self.attached {
            a.end_statement(true);
        }
        r.map_err(Into::into)
    }

    /// The transaction ended: its deferred foreign-key checks and `PRAGMA
    /// defer_foreign_keys` go with it.
    fn end_deferred_fkeys(&self) {
        self.state.fk_deferred.borrow_mut().clear();
        self.state.defer_foreign_keys.set(false);
    }

    /// A savepoint on the temp database for `stmt`, or None when `stmt` cannot write it:
    /// a SELECT/INSERT/UPDATE/DELETE before any TEMP object was created (`temp_shown`,
    /// set by every CREATE TEMP), when the temp database holds no table to write. Two
    /// savepoints and their releases cost ~0.4k instructions per kv_ops statement.
    fn temp_savepoint(&self, stmt: &Stmt) -> Result<Option<u32>> {
        let dml_or_query = matches!(
            stmt,
            Stmt::Select(_) | Stmt::Insert(_) | Stmt::Update(_) | Stmt::Delete(_)
        );
        if dml_or_query && !self.schema.temp_shown.get() {
            return Ok(None);
        }
        Ok(Some(self.temp_txn.savepoint()?))
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

/// Stores over the attached databases for one statement (attach.rs, invariant 1).
fn attached_stores(
    attached: &[AttachedDb],
    (lock_wait, explicit, named): (Duration, bool, usize),
) -> Vec<AttachedStore<'_>> {
    attached
        .iter()
        .map(|db| AttachedStore {
            db,
            lock_wait,
            explicit,
            named,
        })
        .collect()
}

fn stats_of(storage: &parlite_storage::Database, counters: &SqlCounters) -> Stats {
    let c = storage.concurrency_stats();
    let p = storage.stats();
    Stats {
        commits: p.commits,
        concurrent_commits: c.concurrent_commits,
        concurrent_fast_commits: c.concurrent_fast_commits,
        concurrent_rebased_commits: c.concurrent_rebased_commits,
        concurrent_page_rebases: c.page_rebases,
        locked_commits: c.locked_commits,
        conflicts: c.conflicts,
        conflicts_by_root: c
            .conflicts_by_root
            .iter()
            .map(|(root, n)| (root.0, *n))
            .collect(),
        autocommit_retries: counters.autocommit_retries.load(Ordering::Relaxed),
        autocommit_lock_fallbacks: counters.autocommit_lock_fallbacks.load(Ordering::Relaxed),
        fsyncs: p.commit_syncs,
        checkpoints: p.checkpoints,
        checkpoint_pages: p.checkpoint_pages,
        checkpoint_ms: p.checkpoint_us / 1000,
        checkpoint_max_ms: p.checkpoint_max_us / 1000,
        checkpoint_stalls: p.checkpoint_stalls,
        relaxed_checkpoints: p.relaxed_checkpoints,
        log_bytes: p.log_frames_bytes,
        log_file_bytes: p.log_file_bytes,
        oldest_snapshot_age_ms: p.oldest_snapshot_age_ms,
        writer_waits: p.writer_waits,
        writer_wait_ms: p.writer_wait_us / 1000,
        writer_wait_max_ms: p.writer_wait_max_us / 1000,
        writer_wakes: p.writer_wakes,
        writer_handoffs: p.writer_handoffs,
        writer_lock_holds: p.writer_lock_holds,
        writer_lock_held_us: p.writer_lock_held_ns / 1000,
        gathers: p.gathers,
        gather_us: p.gather_us,
        log_sync_us: p.log_sync_us,
        cache_pages: p.cache_pages as u64,
        cache_pages_max: p.cache_pages_max as u64,
        spilled_pages: p.spilled_pages,
        spilled_direct_pages: p.spilled_direct_pages,
    }
}

/// `PRAGMA synchronous` levels: 0 OFF, 1 NORMAL, 2 FULL, 3 EXTRA (stored as FULL).
fn sync_mode(level: i64) -> Synchronous {
    match level {
        0 => Synchronous::Off,
        1 => Synchronous::Normal,
        _ => Synchronous::Full,
    }
}

fn sync_level(mode: Synchronous) -> i64 {
    match mode {
        Synchronous::Off => 0,
        Synchronous::Normal => 1,
        Synchronous::Full => 2,
    }
}

pub struct Connection {
    inner: Arc<Mutex<ConnInner>>,
    /// The application's functions (`create_function`), in scope while this connection
    /// and its statements bind and run (`parlite_sql::func::user`).
    functions: SharedUserFunctions,
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
        user::with_user_functions(&self.functions, || self.prepare_in_scope(sql))
    }

    fn prepare_in_scope<'a>(&self, sql: &'a str) -> Result<Option<(Statement, &'a str)>> {
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
        let (columns, plan, columns_gen) = {
            let mut g = lock(&self.inner);
            g.note_collation_changes();
            // As SQLite's prepare, bind against the cached schema without a transaction when
            // there is one, and check it against the file only when that fails (sqlite3Prepare's
            // schemaIsValid). A schema changed since by another connection is caught by the
            // first step, which refreshes it, re-binds, and renames the columns. Beginning and
            // ending a read transaction here was ~5% of a one-shot point SELECT.
            let cached = if g.txn.is_none() && g.schema_loaded && g.attached.is_empty() {
                match exec::prepare_info(&parsed.stmt, &g.schema) {
                    Ok(info) => Some(info),
                    // The collation_needed hook was asked already: binding again would
                    // ask it twice (SQLite asks once per prepare).
                    Err(e @ SqlError::NoSuchCollation { .. }) => return Err(e.into()),
                    Err(_) => None,
                }
            } else {
                None
            };
            let (names, plan) = match cached {
                Some(info) => info,
                None => g.with_read_txn(|c, t| {
                    c.refresh_schema(t)?;
                    Ok(exec::prepare_info(&parsed.stmt, &c.schema)?)
                })?,
            };
            let gen = g.schema_gen;
            (names, plan.map(|p| (gen, p)), gen)
        };
        let nparams = parsed.params.count();
        let readonly = exec::is_readonly(&parsed.stmt);
        let stmt = Statement {
            conn: self.inner.clone(),
            functions: self.functions.clone(),
            sql: text,
            stmt: parsed.stmt,
            params: parsed.params,
            bindings: vec![SqlValue::Null; nparams],
            columns,
            rows: None,
            current: None,
            readonly,
            plan,
            columns_gen,
            runs: 0,
            reprepares: 0,
            pending: None,
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

    /// sqlite3_table_column_metadata: what the schema declares for `column` of table
    /// `table` in database `db` (None: the first database holding it; views are not
    /// tables); `column` None only asks whether the table exists. Ok(None) when there is no
    /// such table or column. "rowid", "oid" and "_rowid_" name the rowid where no column
    /// is called so.
    pub fn table_column_metadata(
        &self,
        db: Option<&str>,
        table: &str,
        column: Option<&str>,
    ) -> Result<Option<ColumnMetadata>> {
        let mut g = lock(&self.inner);
        g.with_read_txn(|c, t| {
            c.refresh_schema(t)?;
            let Some(tab) = c.schema.table_in(db, table) else {
                return Ok(None);
            };
            let rowid = ColumnMetadata {
                declared_type: Some("INTEGER".to_string()),
                collation: "BINARY".to_string(),
                not_null: false,
                primary_key: true,
                autoincrement: false,
            };
            let Some(name) = column else {
                return Ok(Some(rowid));
            };
            let found = tab
                .columns
                .iter()
                .position(|c| c.name.eq_ignore_ascii_case(name));
            let i = match found {
                Some(i) => i,
                None if !tab.without_rowid
                    && ["rowid", "oid", "_rowid_"]
                        .iter()
                        .any(|r| r.eq_ignore_ascii_case(name)) =>
                {
                    match tab.rowid_alias {
                        Some(a) => a,
                        None => return Ok(Some(rowid)),
                    }
                }
                None => return Ok(None),
            };
            let col = &tab.columns[i];
            Ok(Some(ColumnMetadata {
                declared_type: (!col.decl_type.is_empty()).then(|| col.decl_type.clone()),
                // As declared (sqlite3ColumnColl), BINARY without a COLLATE.
                collation: col
                    .collation_name
                    .clone()
                    .unwrap_or_else(|| "BINARY".to_string()),
                not_null: col.not_null.is_some(),
                primary_key: col.pk > 0,
                autoincrement: tab.autoincrement && tab.rowid_alias == Some(i),
            }))
        })
    }

    /// Whether the connection has a database called `name` (case-insensitive): main,
    /// temp or an attached one's schema name. Reads nothing.
    pub fn has_database(&self, name: &str) -> bool {
        ["main", "temp"]
            .iter()
            .any(|n| n.eq_ignore_ascii_case(name))
            || lock(&self.inner)
                .attached
                .iter()
                .any(|a| a.name.eq_ignore_ascii_case(name))
    }

    /// sqlite3_txn_state for the main database: 0 outside a transaction, 1 in one that
    /// has only read, 2 in one that may write (BEGIN IMMEDIATE, EXCLUSIVE, CONCURRENT, or
    /// a deferred one after its first write).
    pub fn txn_state(&self) -> u8 {
        let g = lock(&self.inner);
        match &g.txn {
            None => 0,
            Some(_) if g.txn_unread => 0,
            Some(t) if t.is_write() => 2,
            Some(_) => 1,
        }
    }

    /// The SQLITE_LIMIT_ATTACHED in force (`set_limit_attached`).
    pub fn limit_attached(&self) -> usize {
        lock(&self.inner).attached_max
    }

    /// `sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, n)`: how many databases ATTACH may add (at
    /// most 10); returns the previous limit. 0 forbids ATTACH (`too many attached databases
    /// - max 0`), which keeps untrusted SQL from creating files.
    pub fn set_limit_attached(&self, n: usize) -> usize {
        let mut g = lock(&self.inner);
        std::mem::replace(&mut g.attached_max, n.min(ATTACHED_MAX))
    }

    /// Sets the commit hook (sqlite3_commit_hook), returning the previous one: called
    /// before each transaction that holds a write transaction commits (COMMIT, a writing
    /// autocommit statement); when it returns true the commit becomes a rollback and the
    /// COMMIT fails with SQLITE_CONSTRAINT_COMMITHOOK. It must not use this connection.
    pub fn commit_hook(&self, hook: Option<CommitHook>) -> Option<CommitHook> {
        let g = lock(&self.inner);
        let mut hooks = g.hooks.borrow_mut();
        std::mem::replace(&mut hooks.commit, hook)
    }

    /// Sets the update hook (sqlite3_update_hook), returning the previous one: called for
    /// each row inserted, updated or deleted in a table with rowids (not WITHOUT ROWID, not
    /// SQLite's own sqlite_ tables) as it is written, by the statement or by its triggers
    /// and foreign-key actions; not for rows a REPLACE deletes, nor for a DELETE without
    /// WHERE that empties a table whole. It must not use this connection.
    pub fn update_hook(&self, hook: Option<UpdateHook>) -> Option<UpdateHook> {
        let g = lock(&self.inner);
        let mut slot = g.state.update_hook.0.borrow_mut();
        std::mem::replace(&mut *slot, hook)
    }

    /// Sets the rollback hook (sqlite3_rollback_hook), returning the previous one: called
    /// when a transaction ends in a rollback — ROLLBACK, a COMMIT that failed or that the
    /// commit hook refused, a statement error that ends the transaction — not when a
    /// connection closes with one open. It must not use this connection.
    pub fn rollback_hook(&self, hook: Option<RollbackHook>) -> Option<RollbackHook> {
        let g = lock(&self.inner);
        let mut hooks = g.hooks.borrow_mut();
        std::mem::replace(&mut hooks.rollback, hook)
    }

    /// Defines an SQL function for this connection (SQLite's `sqlite3_create_function_v2`):
    /// `name` called with `n_args` arguments (None: any number) runs `imp`, a scalar or
    /// an aggregate, before any built-in of that name and count; `imp` None deletes the
    /// definition. `deterministic` (SQLITE_DETERMINISTIC) lets the planner treat a call
    /// with constant arguments as a constant, and allows the function in indexes, CHECK
    /// constraints and generated columns. Statements prepared earlier keep what they
    /// bound; the replaced function is dropped once no call runs it.
    pub fn create_function(
        &self,
        name: &str,
        n_args: Option<usize>,
        deterministic: bool,
        imp: Option<UserImpl>,
    ) -> Result<()> {
        // SQLite's limits (sqlite3CreateFunc): SQLITE_MAX_FUNCTION_ARG (1000 since 3.48), a
        // 255-byte name.
        if n_args.is_some_and(|n| n > 1000) {
            return Err(api_misuse());
        }
        check_definition_name(name)?;
        self.functions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .define(name, n_args, deterministic, imp);
        Ok(())
    }
}

/// What sqlite3_table_column_metadata reports of a column (`table_column_metadata`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnMetadata {
    /// The declared type, None when the column was declared without one.
    pub declared_type: Option<String>,
    /// The COLLATE name as the column declares it (`nocase` stays `nocase`), else BINARY.
    pub collation: String,
    pub not_null: bool,
    /// Part of the PRIMARY KEY.
    pub primary_key: bool,
    /// The INTEGER PRIMARY KEY of an AUTOINCREMENT table.
    pub autoincrement: bool,
}

/// SQLITE_MISUSE as SQLite's API reports it.
fn api_misuse() -> Error {
    error(codes::SQLITE_MISUSE, "bad parameter or other API misuse")
}

/// A function's or collation's name as SQLite admits it: 1 to 255 bytes.
fn check_definition_name(name: &str) -> Result<()> {
    match name.is_empty() || name.len() > 255 {
        true => Err(api_misuse()),
        false => Ok(()),
    }
}

/// Why `ConnInner::commit_txn` did not commit.
enum CommitError {
    /// The commit hook asked for a rollback.
    Vetoed,
    Storage(StorageError),
}

/// The commit hook: true turns the commit into a rollback.
pub type CommitHook = Box<dyn FnMut() -> bool + Send>;
/// The rollback hook.
pub type RollbackHook = Box<dyn FnMut() + Send>;

/// A connection's sqlite3_commit_hook / sqlite3_rollback_hook callbacks. Each is taken out
/// while it runs, so a hook never runs inside itself.
#[derive(Default)]
struct Hooks {
    commit: Option<CommitHook>,
    rollback: Option<RollbackHook>,
}

impl Connection {
    /// Defines an aggregate window function for this connection (SQLite's
    /// `sqlite3_create_window_function`): usable as an aggregate and with OVER (...) over
    /// any frame. Its accumulators implement `Aggregate::value` (xValue: the value for the
    /// current frame) and `Aggregate::inverse` (xInverse: take the oldest row still
    /// accumulated back out, given the arguments it was stepped with), which the window
    /// executor calls in SQLite's order. `imp` None deletes the definition. An aggregate
    /// defined with `create_function` is not a window function, as in SQLite.
    pub fn create_window_function(
        &self,
        name: &str,
        n_args: Option<usize>,
        deterministic: bool,
        imp: Option<Arc<dyn UserAggregate>>,
    ) -> Result<()> {
        self.create_function(name, n_args, deterministic, imp.map(UserImpl::Window))
    }
}

impl Connection {
    /// Defines a collating sequence for this connection (SQLite's
    /// `sqlite3_create_collation_v2`): `COLLATE name` and columns and indexes declared
    /// with it order and compare texts with `compare`, which must be a total order. Names
    /// are case-insensitive; defining NOCASE or RTRIM takes over the built-in (BINARY
    /// only where a statement names it). Statements prepared earlier use the new
    /// definition from their next step, as SQLite re-prepares them.
    pub fn create_collation<F>(&self, name: &str, compare: F) -> Result<()>
    where
        F: Fn(&str, &str) -> std::cmp::Ordering + Send + Sync + 'static,
    {
        self.define_collation(name, Some(UserCompare::Text(Arc::new(compare))))
    }

    /// Deletes a collation `create_collation` defined: statements that need it fail with
    /// `no such collation sequence: X` (even a built-in's name stays taken, as in SQLite).
    pub fn remove_collation(&self, name: &str) -> Result<()> {
        self.define_collation(name, None)
    }

    /// `create_collation` with the comparison over texts or their bytes (the C API's
    /// form); `None` deletes. The replaced definition is dropped once no comparison runs
    /// it. SQLITE_BUSY when called from inside one of this thread's comparisons.
    pub fn define_collation(&self, name: &str, compare: Option<UserCompare>) -> Result<()> {
        check_definition_name(name)?;
        self.functions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .collations
            .define(name, compare)?;
        Ok(())
    }

    /// Sets the hook asked to define a collation a statement names and this connection
    /// lacks (SQLite's `sqlite3_collation_needed`), before `no such collation sequence`;
    /// `None` removes it. The hook gets the name and may call `define_collation`.
    pub fn set_collation_needed(&self, hook: Option<Arc<parlite_sql::collation::user::NeededFn>>) {
        self.functions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .collations
            .set_needed(hook);
    }
}

/// A prepared statement; holds what it needs of its Connection.
pub struct Statement {
    conn: Arc<Mutex<ConnInner>>,
    functions: SharedUserFunctions,
    sql: String,
    stmt: Stmt,
    params: Params,
    bindings: Vec<SqlValue>,
    columns: Vec<String>,
    rows: Option<VecDeque<Vec<SqlValue>>>,
    current: Option<Vec<SqlValue>>,
    readonly: bool,
    /// The bound plan kept across step/reset/bind (ConnInner::plan while running).
    plan: Option<(u64, exec::CachedPlan)>,
    /// `schema_gen` that `columns` were computed at; a run at another one recomputes them.
    columns_gen: u64,
    /// Runs started (sqlite3_stmt_status's SQLITE_STMTSTATUS_RUN).
    runs: u32,
    /// Runs that found the plan bound to an older schema and bound it again
    /// (SQLITE_STMTSTATUS_REPREPARE).
    reprepares: u32,
    /// The rest of a result read in chunks (parlite_sql's select/chunk.rs), after the rows
    /// in `rows`.
    pending: Option<PendingRows>,
}

/// Where a SELECT read in chunks goes on: the snapshot all its chunks read (taken by its
/// first run, as SQLite's statement reads one snapshot from its first step to its reset)
/// and the outermost rowid the last chunk stopped after. Dropping it releases the
/// snapshot (reset, finalize, an error, the last chunk).
struct PendingRows {
    txn: Txn,
    after: i64,
}

impl Drop for PendingRows {
    fn drop(&mut self) {
        self.txn.rollback();
    }
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

    /// As sqlite3_column_decltype: the declared type of the table column that result
    /// column `i` of a SELECT reads unchanged, None for an expression, a column declared
    /// without a type, another statement, or while the statement runs.
    pub fn column_decltype(&self, i: usize) -> Option<String> {
        let (_, plan) = self.plan.as_ref()?;
        let g = lock(&self.conn);
        exec::column_decltypes(plan, &g.schema).into_iter().nth(i)?
    }

    /// ":a", "@a", "$a", "?3" → 1-based index.
    pub fn parameter_index(&self, name: &str) -> Option<usize> {
        self.params
            .names
            .iter()
            .position(|n| n.as_deref() == Some(name))
            .map(|i| i + 1)
    }

    /// The name of parameter `index` (1-based) as written (":a", "@a", "$a", "?3"); None
    /// for an anonymous "?" and out of range, as sqlite3_bind_parameter_name.
    pub fn parameter_name(&self, index: usize) -> Option<&str> {
        let slot = self.params.names.get(index.checked_sub(1)?)?;
        slot.as_deref()
    }

    /// The value bound to parameter `index` (1-based; NULL until bound), as
    /// sqlite3_expanded_sql writes it into the SQL text; None out of range.
    pub fn parameter_value(&self, index: usize) -> Option<ValueRef<'_>> {
        self.bindings.get(index.checked_sub(1)?).map(ValueRef::from)
    }

    /// 1-based.
    pub fn bind(&mut self, index: usize, v: Value) -> Result<()> {
        if index == 0 || index > self.bindings.len() {
            return Err(error(codes::SQLITE_RANGE, "column index out of range"));
        }
        self.bindings[index - 1] = SqlValue::from(&v);
        Ok(())
    }

    /// Binds a borrowed value (1-based): TEXT and BLOB are copied once, into the
    /// statement, where `bind` takes an owned `Value` that the caller built by copying
    /// first (as sqlite3_bind_text with SQLITE_TRANSIENT).
    pub fn bind_ref(&mut self, index: usize, v: ValueRef<'_>) -> Result<()> {
        let slot = index
            .checked_sub(1)
            .and_then(|i| self.bindings.get_mut(i))
            .ok_or_else(|| error(codes::SQLITE_RANGE, "column index out of range"))?;
        *slot = row::to_sql(v);
        Ok(())
    }

    pub fn clear_bindings(&mut self) {
        for b in &mut self.bindings {
            *b = SqlValue::Null;
        }
    }

    /// Ok(true): a row is ready (read it with `column`); Ok(false): done. A step after
    /// done (or after an error) runs the statement again with the same bindings, as
    /// sqlite3_step's automatic reset.
    pub fn step(&mut self) -> Result<bool> {
        if self.rows.is_none() {
            self.pending = None;
            let rows = self.first_run()?;
            self.rows = Some(rows.into());
        }
        self.recycle_current();
        self.current = self.rows.as_mut().and_then(|r| r.pop_front());
        if self.current.is_none() && self.pending.is_some() {
            let rows = match self.next_chunk() {
                Ok(rows) => rows,
                Err(e) => {
                    self.rows = None;
                    return Err(e);
                }
            };
            self.rows = Some(rows.into());
            self.current = self.rows.as_mut().and_then(|r| r.pop_front());
        }
        if self.current.is_none() {
            // Done: the next step runs the statement again, as sqlite3_step resets a
            // statement automatically after SQLITE_DONE (since SQLite 3.6.23.1).
            self.rows = None;
        }
        Ok(self.current.is_some())
    }

    /// The rows of a run from the start; a SELECT in autocommit mode returns its first
    /// chunk and leaves the rest in `pending`.
    fn first_run(&mut self) -> Result<Vec<Vec<SqlValue>>> {
        self.runs = self.runs.saturating_add(1);
        let bound_at = self.plan.as_ref().map(|(gen, _)| *gen);
        let mut g = lock(&self.conn);
        g.note_collation_changes();
        // Chunks read one snapshot the statement keeps; inside a transaction, or with
        // attached databases (whose snapshots end with each run), all rows at once.
        let chunked =
            matches!(self.stmt, Stmt::Select(_)) && g.txn.is_none() && g.attached.is_empty();
        g.chunk = chunked.then(|| Chunking::new(None));
        g.plan = self.plan.take();
        let r = user::with_user_functions(&self.functions, || g.run(&self.stmt, &self.bindings));
        self.plan = g.plan.take();
        let after = g.chunk.take().and_then(|c| c.stopped_at());
        if let (Some(txn), Some(after)) = (g.chunk_txn.take(), after) {
            self.pending = Some(PendingRows { txn, after });
        }
        if let (Some(before), Some((after, _))) = (bound_at, &self.plan) {
            if before != *after {
                // SQLite counts the run that found its program expired and the run of
                // the program prepared again.
                self.reprepares = self.reprepares.saturating_add(1);
                self.runs = self.runs.saturating_add(1);
            }
        }
        if r.is_ok() && g.schema_gen != self.columns_gen && !self.columns.is_empty() {
            // The schema changed since prepare (another connection's DDL, or this
            // one's): name the columns as the statement now binds.
            if let Ok(names) = exec::column_names(&self.stmt, &g.schema) {
                self.columns = names;
            }
            self.columns_gen = g.schema_gen;
        }
        r
    }

    /// The next chunk of a SELECT read in chunks, on its own snapshot.
    fn next_chunk(&mut self) -> Result<Vec<Vec<SqlValue>>> {
        let Some(mut p) = self.pending.take() else {
            return Ok(Vec::new());
        };
        let mut g = lock(&self.conn);
        g.note_collation_changes();
        g.chunk = Some(Chunking::new(Some(p.after)));
        g.plan = self.plan.take();
        let r = user::with_user_functions(&self.functions, || {
            g.run_chunk(&p.txn, &self.stmt, &self.bindings)
        });
        self.plan = g.plan.take();
        let chunk = g.chunk.take();
        let rows = r?;
        match chunk {
            Some(c) if c.engaged() => {
                if let Some(after) = c.stopped_at() {
                    p.after = after;
                    self.pending = Some(p);
                }
                Ok(rows)
            }
            // Not reached: the plan is bound again only from the same schema, which
            // chunked the first run. Rows from the start again would repeat rows.
            _ => Err(error(
                codes::SQLITE_INTERNAL,
                "internal error: a SELECT read in chunks lost its chunking",
            )),
        }
    }

    /// A column of the current row, borrowed (no copy of TEXT or BLOB): as
    /// sqlite3_column_* and rusqlite's `Row::get_ref` (row.rs). Err(SQLITE_RANGE) for an
    /// index at or past the column count; NULL while no row is current.
    #[inline]
    pub fn column_ref(&self, i: usize) -> Result<ValueRef<'_>> {
        row::column_ref(self.current.as_deref(), self.columns.len(), i)
    }

    /// A column of the current row, copied (NULL for an index out of range or no row).
    pub fn column(&self, i: usize) -> Value {
        self.current
            .as_ref()
            .and_then(|r| r.get(i))
            .map(Value::from)
            .unwrap_or(Value::Null)
    }

    pub fn reset(&mut self) {
        self.rows = None;
        self.pending = None;
        self.recycle_current();
    }

    /// Gives the row the caller has read back to the statement's plan, whose next
    /// execution writes its result rows into such rows (`exec::CachedPlan::recycle_row`).
    #[inline]
    fn recycle_current(&mut self) {
        if let (Some(row), Some((_, plan))) = (self.current.take(), self.plan.as_mut()) {
            plan.recycle_row(row);
        }
    }

    pub fn readonly(&self) -> bool {
        self.readonly
    }

    /// The (database, table, column) result column `i` reads unchanged, as
    /// sqlite3_column_database_name / _table_name / _origin_name; None for an expression,
    /// another statement, or while the statement runs.
    pub fn column_origin(&self, i: usize) -> Option<[String; 3]> {
        let (_, plan) = self.plan.as_ref()?;
        let g = lock(&self.conn);
        exec::column_origins(plan, &g.schema).into_iter().nth(i)?
    }

    /// sqlite3_stmt_isexplain: 1 for EXPLAIN, 2 for EXPLAIN QUERY PLAN, 0 otherwise.
    pub fn explain_kind(&self) -> u8 {
        match &self.stmt {
            Stmt::Explain {
                query_plan: true, ..
            } => 2,
            Stmt::Explain { .. } => 1,
            _ => 0,
        }
    }

    /// How many times the statement started running (its first step after prepare, reset
    /// or completion): sqlite3_stmt_status's SQLITE_STMTSTATUS_RUN.
    pub fn runs(&self) -> u32 {
        self.runs
    }

    /// How many runs found the schema changed since the plan was bound (by this connection
    /// or another) and bound it again: SQLITE_STMTSTATUS_REPREPARE.
    pub fn reprepares(&self) -> u32 {
        self.reprepares
    }

    pub fn sql(&self) -> &str {
        &self.sql
    }
}

/// `exec::keeps_changes_on_error` for a connection-level error (OR FAIL keeps the rows
/// changed before the failing one).
fn keeps_changes_on_error(state: &ConnState, stmt: &Stmt, e: &Error) -> bool {
    exec::keeps_changes_on_error(state, stmt, e.code, e.extended_code)
}
