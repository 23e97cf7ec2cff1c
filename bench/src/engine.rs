//! One small interface over the two engines under test: parlite (its `parlite` crate API) and
//! SQLite (rusqlite, bundled).
//!
//! The workloads are written once against [`Target`], [`Conn`] and [`Stmt`], so both engines
//! run the same statements with the same parameters and the same pragmas. Nothing here
//! favours one engine: both prepare once and re-bind, both step every row and touch every
//! column of it, both borrowed (SQLite through rusqlite's `ValueRef`s, parlite through
//! `Statement::column_ref`), and both bind TEXT and BLOB from borrowed slices (rusqlite
//! copies them into the statement, parlite's `bind_ref` too).
//!
//! Errors keep SQLite's result codes ([`DbError`]) so the workloads can tell a busy writer
//! (`SQLITE_BUSY`, 5), a lost optimistic transaction (`SQLITE_BUSY_SNAPSHOT`, 517) and a real
//! failure apart, exactly as the C harnesses in `shared/bench` do.

use std::fmt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// The engines this harness can drive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Parlite,
    Sqlite,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Parlite => "parlite",
            Kind::Sqlite => "sqlite",
        }
    }
}

pub const SQLITE_BUSY: i32 = 5;
pub const SQLITE_LOCKED: i32 = 6;
pub const SQLITE_BUSY_SNAPSHOT: i32 = 517;

/// An engine error with SQLite's (extended) result code.
#[derive(Debug, Clone)]
pub struct DbError {
    pub code: i32,
    pub extended: i32,
    pub message: String,
}

impl DbError {
    /// "The transaction lost a race; roll back and run it again" (common.h `is_retry`).
    pub fn is_retry(&self) -> bool {
        matches!(self.code & 0xff, SQLITE_BUSY | SQLITE_LOCKED)
    }

    /// The engine rolled the whole transaction back (common.h `is_conflict`).
    pub fn is_conflict(&self) -> bool {
        self.extended == SQLITE_BUSY_SNAPSHOT || self.code & 0xff == SQLITE_LOCKED
    }

    /// Exactly `SQLITE_BUSY`: a COMMIT that did not get the lock may be retried.
    pub fn is_plain_busy(&self) -> bool {
        self.extended == SQLITE_BUSY
    }
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (code {})", self.message, self.extended)
    }
}

impl std::error::Error for DbError {}

impl From<parlite::Error> for DbError {
    fn from(e: parlite::Error) -> Self {
        DbError {
            code: e.code,
            extended: e.extended_code,
            message: e.message,
        }
    }
}

impl From<rusqlite::Error> for DbError {
    fn from(e: rusqlite::Error) -> Self {
        match e {
            rusqlite::Error::SqliteFailure(f, msg) => DbError {
                code: f.extended_code & 0xff,
                extended: f.extended_code,
                message: msg.unwrap_or_else(|| f.to_string()),
            },
            other => DbError {
                code: 1,
                extended: 1,
                message: other.to_string(),
            },
        }
    }
}

pub type DbResult<T> = std::result::Result<T, DbError>;

/// Connection settings applied identically to both engines.
#[derive(Clone, Debug)]
pub struct Settings {
    /// `PRAGMA journal_mode` asked for (`wal` or `delete`).
    pub journal: String,
    /// `PRAGMA synchronous` (`full`, `normal`, `off`).
    pub sync: String,
    pub busy_timeout_ms: u32,
    /// Extra SQL run on every connection after the pragmas.
    pub extra_sql: Vec<String>,
}

static MEMDB_SEQ: AtomicU64 = AtomicU64::new(0);

enum TargetInner {
    Parlite(parlite::Database),
    Sqlite {
        /// A path or a `file:` URI.
        name: String,
        /// For in-memory (memdb) databases: keeps the database alive between connections.
        _keeper: Option<Mutex<rusqlite::Connection>>,
    },
}

/// One database of one engine, shared by the threads of one point.
pub struct Target {
    pub kind: Kind,
    inner: TargetInner,
}

impl Target {
    /// parlite's checkpoint and writer-lock counters (`PRAGMA parlite_stats`) as one
    /// `key=value` field list; `None` for SQLite.
    pub fn parlite_stats(&self) -> Option<String> {
        match &self.inner {
            TargetInner::Parlite(db) => {
                let s = db.stats();
                Some(format!(
                    "p_checkpoints={} p_checkpoint_ms={} p_checkpoint_max_ms={} \
                     p_checkpoint_pages={} p_stalls={} \
                     p_writer_waits={} p_writer_wait_ms={} p_writer_wait_max_ms={} \
                     p_writer_wakes={} p_writer_handoffs={} \
                     p_conc_fast={} p_conc_rebased={} p_conc_locked={} p_page_rebases={} p_lock_held_us={:.2} \
                     p_gathers={} p_gather_us={} p_sync_us={}",
                    s.checkpoints,
                    s.checkpoint_ms,
                    s.checkpoint_max_ms,
                    s.checkpoint_pages,
                    s.checkpoint_stalls,
                    s.writer_waits,
                    s.writer_wait_ms,
                    s.writer_wait_max_ms,
                    s.writer_wakes,
                    s.writer_handoffs,
                    s.concurrent_fast_commits,
                    s.concurrent_rebased_commits,
                    s.concurrent_commits
                        .saturating_sub(s.concurrent_fast_commits)
                        .saturating_sub(s.concurrent_rebased_commits),
                    s.concurrent_page_rebases,
                    s.writer_lock_held_us as f64 / s.writer_lock_holds.max(1) as f64,
                    s.gathers,
                    s.gather_us,
                    s.log_sync_us
                ))
            }
            TargetInner::Sqlite { .. } => None,
        }
    }

    /// parlite's writer-lock counters (waits, wakes, hand-offs, holds, µs held) so far, for
    /// a point's share of a database that several points use (hc_mixed); `None` for SQLite.
    pub fn parlite_lock_counters(&self) -> Option<[u64; 5]> {
        match &self.inner {
            TargetInner::Parlite(db) => {
                let s = db.stats();
                Some([
                    s.writer_waits,
                    s.writer_wakes,
                    s.writer_handoffs,
                    s.writer_lock_holds,
                    s.writer_lock_held_us,
                ])
            }
            TargetInner::Sqlite { .. } => None,
        }
    }

    /// Opens (creating) the database at `path`, or a private in-memory database shared by
    /// every connection of this target when `memory` is set (parlite `:memory:` through
    /// one `Database`; SQLite's `memdb` VFS, which has real locking between connections).
    pub fn open(kind: Kind, path: &Path, memory: bool) -> DbResult<Target> {
        let inner = match kind {
            Kind::Parlite => {
                let p = if memory {
                    ":memory:".to_string()
                } else {
                    path.to_str()
                        .ok_or_else(|| DbError {
                            code: 14,
                            extended: 14,
                            message: format!("path is not UTF-8: {}", path.display()),
                        })?
                        .to_string()
                };
                TargetInner::Parlite(parlite::Database::open(&p)?)
            }
            Kind::Sqlite => {
                if memory {
                    let seq = MEMDB_SEQ.fetch_add(1, Ordering::Relaxed);
                    let name = format!(
                        "file:/parlite-bench-{}-{}?vfs=memdb",
                        std::process::id(),
                        seq
                    );
                    let keeper = open_sqlite(&name)?;
                    TargetInner::Sqlite {
                        name,
                        _keeper: Some(Mutex::new(keeper)),
                    }
                } else {
                    let name = path
                        .to_str()
                        .ok_or_else(|| DbError {
                            code: 14,
                            extended: 14,
                            message: format!("path is not UTF-8: {}", path.display()),
                        })?
                        .to_string();
                    TargetInner::Sqlite {
                        name,
                        _keeper: None,
                    }
                }
            }
        };
        Ok(Target { kind, inner })
    }

    /// A new connection, configured with `s` (journal mode, synchronous, busy timeout).
    /// Returns the connection and the journal mode the engine reports.
    pub fn connect(&self, s: &Settings) -> DbResult<(Conn, String)> {
        let conn = match &self.inner {
            TargetInner::Parlite(db) => Conn::P(db.connect()?),
            TargetInner::Sqlite { name, .. } => Conn::S(open_sqlite(name)?),
        };
        let journal = conn.configure(s)?;
        Ok((conn, journal))
    }

    /// The library that runs, as `lib=` prints it.
    pub fn lib(&self) -> String {
        match self.kind {
            Kind::Parlite => "parlite".to_string(),
            Kind::Sqlite => rusqlite::version().to_string(),
        }
    }
}

/// Runs `f` until it does not answer a retryable error, for up to `patience`.
fn retry_setup<T>(patience: Duration, mut f: impl FnMut() -> DbResult<T>) -> DbResult<T> {
    let start = std::time::Instant::now();
    loop {
        match f() {
            Err(e) if e.is_retry() && start.elapsed() < patience => {
                std::thread::sleep(Duration::from_millis(1))
            }
            other => return other,
        }
    }
}

/// Opens as common.h `open_db` does: `SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE` and the
/// library's default threading mode (serialized: rusqlite's default adds
/// `SQLITE_OPEN_NO_MUTEX`, which the C programs do not ask for), plus `SQLITE_OPEN_URI` for
/// the `--memory` memdb name (a plain path opens the same either way).
fn open_sqlite(name: &str) -> DbResult<rusqlite::Connection> {
    use rusqlite::OpenFlags as F;
    let flags = F::SQLITE_OPEN_READ_WRITE
        | F::SQLITE_OPEN_CREATE
        | F::SQLITE_OPEN_URI
        | F::SQLITE_OPEN_FULL_MUTEX;
    Ok(rusqlite::Connection::open_with_flags(name, flags)?)
}

/// A connection of either engine.
pub enum Conn {
    P(parlite::Connection),
    S(rusqlite::Connection),
}

impl Conn {
    /// Applies `s`; returns the journal mode the engine reports.
    ///
    /// The busy timeout comes first, as common.h does (`set_busy` before `set_mode`). Each
    /// setup statement is retried on a retryable answer for up to the busy timeout: parlite
    /// (at the `parser` merge 29fd0d9) runs every PRAGMA that sets a value, `busy_timeout`
    /// included, as a write transaction, so connections configuring at once can get
    /// SQLITE_BUSY before their timeout is set. Setup is not measured.
    fn configure(&self, s: &Settings) -> DbResult<String> {
        let patience = Duration::from_millis(u64::from(s.busy_timeout_ms.max(1000)));
        match self {
            Conn::S(c) => c.busy_timeout(Duration::from_millis(u64::from(s.busy_timeout_ms)))?,
            Conn::P(_) => retry_setup(patience, || {
                self.exec(&format!("PRAGMA busy_timeout={}", s.busy_timeout_ms))
            })?,
        }
        let journal = retry_setup(patience, || {
            self.query_text(&format!("PRAGMA journal_mode={}", s.journal))
        })?
        .unwrap_or_default();
        retry_setup(patience, || {
            self.exec(&format!("PRAGMA synchronous={}", s.sync))
        })?;
        for sql in &s.extra_sql {
            retry_setup(patience, || self.exec(sql))?;
        }
        Ok(journal.to_ascii_lowercase())
    }

    /// Runs one statement to completion, ignoring its rows.
    pub fn exec(&self, sql: &str) -> DbResult<()> {
        let mut st = self.prepare(sql)?;
        st.run()
    }

    /// The first column of the first row, as text (None: no row).
    pub fn query_text(&self, sql: &str) -> DbResult<Option<String>> {
        let mut st = self.prepare(sql)?;
        let rows = st.rows()?;
        Ok(rows
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next())
            .map(|v| v.to_text()))
    }

    /// The first column of the first row as an integer (None: no row or not an integer).
    pub fn query_i64(&self, sql: &str) -> DbResult<Option<i64>> {
        let mut st = self.prepare(sql)?;
        let rows = st.rows()?;
        Ok(rows
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next())
            .and_then(|v| match v {
                Val::Int(i) => Some(i),
                _ => None,
            }))
    }

    /// Compiles exactly one statement.
    pub fn prepare(&self, sql: &str) -> DbResult<Stmt<'_>> {
        match self {
            Conn::P(c) => match c.prepare(sql)? {
                Some((st, _tail)) => Ok(Stmt::P(Box::new(st))),
                None => Err(DbError {
                    code: 1,
                    extended: 1,
                    message: format!("empty statement: {sql:?}"),
                }),
            },
            Conn::S(c) => Ok(Stmt::S(c.prepare(sql)?)),
        }
    }

    /// Rows changed by the last INSERT/UPDATE/DELETE.
    pub fn changes(&self) -> u64 {
        match self {
            Conn::P(c) => c.changes(),
            Conn::S(c) => c.changes(),
        }
    }
}

/// An owned value, for checks and results.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

impl Val {
    pub fn to_text(&self) -> String {
        match self {
            Val::Null => String::new(),
            Val::Int(i) => i.to_string(),
            Val::Real(r) => r.to_string(),
            Val::Text(s) => s.clone(),
            Val::Blob(b) => String::from_utf8_lossy(b).into_owned(),
        }
    }
}

/// A prepared statement of either engine.
pub enum Stmt<'c> {
    P(Box<parlite::Statement>),
    S(rusqlite::Statement<'c>),
}

/// Feeds one column value into a digest (type tag, then bytes), so both engines' results can
/// be compared without either engine's text formatting of REALs.
fn digest_value(h: &mut crc32fast::Hasher, tag: u8, bytes: &[u8]) {
    h.update(&[tag]);
    h.update(&(bytes.len() as u32).to_le_bytes());
    h.update(bytes);
}

impl Stmt<'_> {
    pub fn bind_int(&mut self, i: usize, v: i64) -> DbResult<()> {
        match self {
            Stmt::P(s) => Ok(s.bind(i, parlite::Value::Integer(v))?),
            Stmt::S(s) => Ok(s.raw_bind_parameter(i, v)?),
        }
    }

    pub fn bind_real(&mut self, i: usize, v: f64) -> DbResult<()> {
        match self {
            Stmt::P(s) => Ok(s.bind(i, parlite::Value::Real(v))?),
            Stmt::S(s) => Ok(s.raw_bind_parameter(i, v)?),
        }
    }

    pub fn bind_text(&mut self, i: usize, v: &str) -> DbResult<()> {
        match self {
            Stmt::P(s) => Ok(s.bind_ref(i, parlite::ValueRef::Text(v))?),
            Stmt::S(s) => Ok(s.raw_bind_parameter(i, v)?),
        }
    }

    pub fn bind_blob(&mut self, i: usize, v: &[u8]) -> DbResult<()> {
        match self {
            Stmt::P(s) => Ok(s.bind_ref(i, parlite::ValueRef::Blob(v))?),
            Stmt::S(s) => Ok(s.raw_bind_parameter(i, v)?),
        }
    }

    /// Steps to completion (ignoring rows) and resets.
    pub fn run(&mut self) -> DbResult<()> {
        match self {
            Stmt::P(s) => {
                let r: DbResult<()> = (|| {
                    while s.step()? {}
                    Ok(())
                })();
                s.reset();
                r
            }
            Stmt::S(s) => {
                let mut rows = s.raw_query();
                while rows.next()?.is_some() {}
                Ok(())
            }
        }
    }

    /// Steps every row, reading every column into `h`; returns the row count. Resets.
    pub fn digest_rows(&mut self, h: &mut crc32fast::Hasher) -> DbResult<u64> {
        let mut n = 0u64;
        match self {
            Stmt::P(s) => {
                let ncol = s.column_count();
                let r: DbResult<()> = (|| {
                    while s.step()? {
                        n += 1;
                        for i in 0..ncol {
                            use parlite::ValueRef as V;
                            match s.column_ref(i)? {
                                V::Null => digest_value(h, 0, &[]),
                                V::Integer(v) => digest_value(h, 1, &v.to_le_bytes()),
                                V::Real(v) => digest_value(h, 2, &v.to_le_bytes()),
                                V::Text(t) => digest_value(h, 3, t.as_bytes()),
                                V::Blob(b) => digest_value(h, 4, b),
                            }
                        }
                    }
                    Ok(())
                })();
                s.reset();
                r?;
            }
            Stmt::S(s) => {
                use rusqlite::types::ValueRef as V;
                let ncol = s.column_count();
                let mut rows = s.raw_query();
                while let Some(row) = rows.next()? {
                    n += 1;
                    for i in 0..ncol {
                        match row.get_ref(i)? {
                            V::Null => digest_value(h, 0, &[]),
                            V::Integer(v) => digest_value(h, 1, &v.to_le_bytes()),
                            V::Real(v) => digest_value(h, 2, &v.to_le_bytes()),
                            V::Text(t) => digest_value(h, 3, t),
                            V::Blob(b) => digest_value(h, 4, b),
                        }
                    }
                }
            }
        }
        Ok(n)
    }

    /// Steps once and tells whether the first column of the first row is the text `want`,
    /// read borrowed (kv_ops.c's `strcmp` on `sqlite3_column_text`). Resets.
    pub fn first_text_is(&mut self, want: &str) -> DbResult<bool> {
        match self {
            Stmt::P(s) => {
                let r = match s.step() {
                    Ok(true) => s
                        .column_ref(0)
                        .map(|v| v.as_str() == Some(want))
                        .map_err(DbError::from),
                    Ok(false) => Ok(false),
                    Err(e) => Err(e.into()),
                };
                s.reset();
                r
            }
            Stmt::S(s) => {
                let mut rows = s.raw_query();
                match rows.next()? {
                    Some(row) => Ok(matches!(
                        row.get_ref(0)?,
                        rusqlite::types::ValueRef::Text(t) if t == want.as_bytes()
                    )),
                    None => Ok(false),
                }
            }
        }
    }

    /// All rows as owned values (checks only). Resets.
    pub fn rows(&mut self) -> DbResult<Vec<Vec<Val>>> {
        let mut out = Vec::new();
        match self {
            Stmt::P(s) => {
                let ncol = s.column_count();
                let r: DbResult<()> = (|| {
                    while s.step()? {
                        let mut row = Vec::with_capacity(ncol);
                        for i in 0..ncol {
                            use parlite::ValueRef as V;
                            row.push(match s.column_ref(i)? {
                                V::Null => Val::Null,
                                V::Integer(v) => Val::Int(v),
                                V::Real(v) => Val::Real(v),
                                V::Text(t) => Val::Text(t.to_string()),
                                V::Blob(b) => Val::Blob(b.to_vec()),
                            });
                        }
                        out.push(row);
                    }
                    Ok(())
                })();
                s.reset();
                r?;
            }
            Stmt::S(s) => {
                use rusqlite::types::ValueRef as V;
                let ncol = s.column_count();
                let mut rows = s.raw_query();
                while let Some(row) = rows.next()? {
                    let mut vals = Vec::with_capacity(ncol);
                    for i in 0..ncol {
                        vals.push(match row.get_ref(i)? {
                            V::Null => Val::Null,
                            V::Integer(v) => Val::Int(v),
                            V::Real(v) => Val::Real(v),
                            V::Text(t) => Val::Text(String::from_utf8_lossy(t).into_owned()),
                            V::Blob(b) => Val::Blob(b.to_vec()),
                        });
                    }
                    out.push(vals);
                }
            }
        }
        Ok(out)
    }
}

/// Removes `path` and every sibling named `PATH-*` (SQLite's `-wal`/`-shm`/`-journal`,
/// parlite's side files), as common.h `rm_db` does.
pub fn rm_db(path: &Path) {
    let _ = std::fs::remove_file(path);
    let (Some(dir), Some(base)) = (path.parent(), path.file_name()) else {
        return;
    };
    let prefix = format!("{}-", base.to_string_lossy());
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            if e.file_name().to_string_lossy().starts_with(&prefix) {
                let p = e.path();
                if p.is_dir() {
                    let _ = std::fs::remove_dir_all(&p);
                } else {
                    let _ = std::fs::remove_file(&p);
                }
            }
        }
    }
}
