//! `sqlite3`: a connection handle, its error state, `sqlite3_exec` and busy handling.
//!
//! Invariants:
//! 1. Connections opened on one file share one `parlite::Database` (`DATABASES`), as the
//!    threads of a program share SQLite's page cache and locks: parlite's commit
//!    pipeline, counters and "sole connection" rule (parlite invariant 7) see them all. The
//!    entry goes when the last of them closes, so a file deleted and created again between
//!    opens is opened afresh.
//! 2. The error state (`ErrState`) holds the full extended code; `sqlite3_errcode` and the
//!    codes functions return are masked to the primary code unless extended result codes
//!    are on (`sqlite3_extended_result_codes`, SQLITE_OPEN_EXRESCODE), as SQLite's errMask.
//! 3. A busy handler runs where parlite would wait `busy_timeout`: the connection's
//!    timeout is 0 while one is installed, and a statement that failed with plain
//!    SQLITE_BUSY (never SQLITE_BUSY_SNAPSHOT, which no wait can cure) is run again while the
//!    handler returns non-zero. A statement that fails leaves no trace (statement
//!    atomicity; a COMMIT that found the lock busy keeps its transaction), so running it
//!    again is what retrying SQLite's lock is.
//! 4. `sqlite3_close` refuses (SQLITE_BUSY) while statements live; `sqlite3_close_v2`
//!    defers: the handle becomes a zombie that the last `sqlite3_finalize` frees.
//! 5. An application callback run by a statement (a user function, `func.rs`) runs while
//!    parlite holds the connection for that statement: inside it (`CallbackScope`) the
//!    handle lends no `Connection` and steps nothing, so SQL on it fails with
//!    SQLITE_MISUSE where it would otherwise deadlock.
//! 6. `sqlite3_interrupt` and the progress handler stop statements where this layer runs
//!    them: at the first step of a run, and at each later step of a read-only statement
//!    (a write's changes are made by its first step, and stopping after them would report
//!    an interrupt for work that stays done). The progress handler is called once per
//!    such step, whatever its instruction count. The interrupt flag clears when a
//!    statement starts while none runs, as SQLite's `isInterrupted`.

use crate::misc::errstr;
use crate::{guard, rc};
use parlite::{Connection, Database, Statement};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::PathBuf;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

/// sqlite3_open_v2 flags (sqlite3.h).
const OPEN_READONLY: c_int = 0x1;
const OPEN_READWRITE: c_int = 0x2;
const OPEN_CREATE: c_int = 0x4;
const OPEN_URI: c_int = 0x40;
const OPEN_MEMORY: c_int = 0x80;
const OPEN_NOFOLLOW: c_int = 0x0100_0000;
const OPEN_EXRESCODE: c_int = 0x0200_0000;

/// The busy handler's type (sqlite3_busy_handler's second argument).
type BusyCallback = unsafe extern "C" fn(*mut c_void, c_int) -> c_int;
/// sqlite3_exec's callback.
type ExecCallback =
    unsafe extern "C" fn(*mut c_void, c_int, *mut *mut c_char, *mut *mut c_char) -> c_int;

/// sqlite3_progress_handler's callback.
type ProgressCallback = unsafe extern "C" fn(*mut c_void) -> c_int;
/// sqlite3_trace_v2's callback.
type TraceCallback = unsafe extern "C" fn(u32, *mut c_void, *mut c_void, *mut c_void) -> c_int;
/// sqlite3_trace's callback: (its argument, the statement's SQL with its parameters).
type LegacyTraceCallback = unsafe extern "C" fn(*mut c_void, *const c_char);
/// sqlite3_trace_v2's events.
pub(crate) const TRACE_STMT: u32 = 0x01;
pub(crate) const TRACE_PROFILE: u32 = 0x02;
pub(crate) const TRACE_ROW: u32 = 0x04;
pub(crate) const TRACE_CLOSE: u32 = 0x08;

#[derive(Clone, Copy)]
struct ProgressHandler {
    callback: ProgressCallback,
    arg: *mut c_void,
}

#[derive(Clone, Copy)]
struct Tracer {
    mask: u32,
    callback: TraceCallback,
    ctx: *mut c_void,
}

#[derive(Clone, Copy)]
struct BusyHandler {
    callback: BusyCallback,
    arg: *mut c_void,
}

/// The last result and its message (None: SQLite's text for the code, `errstr`).
struct ErrState {
    code: c_int,
    message: Option<CString>,
    busy: Option<BusyHandler>,
    progress: Option<ProgressHandler>,
    trace: Option<Tracer>,
    /// The legacy `sqlite3_trace` callback and its argument, run through `trace` (a
    /// TRACE_STMT tracer whose context is the handle).
    legacy_trace: Option<(LegacyTraceCallback, *mut c_void)>,
    /// The OS error number behind the last SQLITE_CANTOPEN or SQLITE_IOERR recorded.
    system_errno: c_int,
    /// The arguments of the commit and rollback hooks in place (what setting another
    /// returns).
    commit_arg: *mut c_void,
    rollback_arg: *mut c_void,
    update_arg: *mut c_void,
}

thread_local! {
    /// The handles whose application callbacks this thread is running (invariant 5).
    static IN_CALLBACK: RefCell<Vec<*const Db>> = const { RefCell::new(Vec::new()) };
}

/// Marks a handle as running an application callback on this thread while it lives
/// (invariant 5).
pub(crate) struct CallbackScope;

impl CallbackScope {
    pub(crate) fn enter(db: *const Db) -> CallbackScope {
        IN_CALLBACK.with(|s| s.borrow_mut().push(db));
        CallbackScope
    }

    pub(crate) fn inside(db: *const Db) -> bool {
        IN_CALLBACK.with(|s| s.borrow().contains(&db))
    }
}

impl Drop for CallbackScope {
    fn drop(&mut self) {
        IN_CALLBACK.with(|s| s.borrow_mut().pop());
    }
}

/// A file's shared `Database` and how many handles use it (invariant 1).
type DatabaseKey = (PathBuf, bool);
static DATABASES: Mutex<BTreeMap<DatabaseKey, (Database, usize)>> = Mutex::new(BTreeMap::new());

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic (caught at the boundary) cannot leave these states half-updated in a way
    // that matters more than refusing service forever would.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// What C calls `sqlite3`.
pub struct Db {
    /// None when the open failed: the handle then only reports the error (SQLite's "sick"
    /// handle) and must still be closed.
    conn: Option<Connection>,
    shared: Option<DatabaseKey>,
    state: Mutex<ErrState>,
    /// 0xff, or -1 with extended result codes on (invariant 2).
    err_mask: AtomicI32,
    live_stmts: AtomicUsize,
    zombie: AtomicBool,
    /// sqlite3_interrupt was called (invariant 6).
    interrupted: AtomicBool,
    /// Statements between their first step and their end or reset (invariant 6).
    running: AtomicUsize,
    /// The trace callback's event mask (0: none), read without the state lock.
    trace_mask: AtomicU32,
    /// Every file name `sqlite3_db_filename` returned: valid while the handle lives.
    filenames: Mutex<Vec<CString>>,
    /// sqlite3_enable_load_extension's switch (also SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION).
    pub(crate) extensions_enabled: AtomicBool,
}

impl Db {
    /// The connection, unless this thread is inside one of its callbacks (invariant 5).
    pub(crate) fn conn(&self) -> Option<&Connection> {
        if CallbackScope::inside(self) {
            return None;
        }
        self.conn.as_ref()
    }

    /// A statement's run starts (its first step); false when the interrupt flag or the
    /// progress handler stops it (invariant 6).
    pub(crate) fn run_starts(&self) -> bool {
        if self.running.load(Ordering::Acquire) == 0 {
            self.interrupted.store(false, Ordering::Release);
        }
        self.may_continue()
    }

    /// False when the progress handler asks to stop or the interrupt flag is set (by
    /// then: the handler may have called `sqlite3_interrupt`).
    pub(crate) fn may_continue(&self) -> bool {
        let progress = lock(&self.state).progress;
        if let Some(h) = progress {
            // SAFETY: the application installed this callback and its argument.
            if unsafe { (h.callback)(h.arg) } != 0 {
                return false;
            }
        }
        !self.interrupted.load(Ordering::Acquire)
    }

    /// Counts a statement as running (`true`) or no longer running.
    pub(crate) fn set_running(&self, running: bool) {
        if running {
            self.running.fetch_add(1, Ordering::AcqRel);
        } else {
            self.running.fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// Whether the trace callback wants `event`.
    pub(crate) fn traces(&self, event: u32) -> bool {
        self.trace_mask.load(Ordering::Relaxed) & event != 0
    }

    /// Reports `event` to the trace callback if its mask asks for it.
    pub(crate) fn trace(&self, event: u32, p: *mut c_void, x: *mut c_void) {
        if !self.traces(event) {
            return;
        }
        let Some(t) = lock(&self.state).trace else {
            return;
        };
        if t.mask & event != 0 {
            // SAFETY: the application installed this callback and its context.
            unsafe { (t.callback)(event, t.ctx, p, x) };
        }
    }

    /// `code` with the connection's mask (invariant 2).
    pub(crate) fn masked(&self, code: c_int) -> c_int {
        code & self.err_mask.load(Ordering::Relaxed)
    }

    /// Records a result without a message of its own (errmsg gives SQLite's text).
    pub(crate) fn set_code(&self, code: c_int) {
        let mut s = lock(&self.state);
        s.code = code;
        s.message = None;
    }

    /// Records an error and returns it masked, as the failing function returns it.
    pub(crate) fn fail(&self, code: c_int, message: &str) -> c_int {
        let mut s = lock(&self.state);
        s.code = code;
        if matches!(code & 0xff, rc::CANTOPEN | rc::IOERR) {
            s.system_errno = parlite::last_os_error();
        }
        let message = c_string(message);
        s.message = Some(message.clone());
        drop(s);
        crate::config::log_error(code, &message);
        self.masked(code)
    }

    /// Records a parlite error. SQLITE_BUSY's message is SQLite's own, "database is
    /// locked": parlite adds why in parentheses, and applications match the text whole
    /// (CPython's `OperationalError`, retry loops).
    pub(crate) fn fail_with(&self, e: &parlite::Error) -> c_int {
        if e.code == rc::BUSY {
            self.set_code(e.extended_code);
            return self.masked(e.extended_code);
        }
        self.fail(e.extended_code, &e.message)
    }

    /// Pages in the page cache of the file this handle has open, shared by the handles of
    /// this process on it (invariant 1), and how many handles share it; None for an
    /// in-memory database or a handle whose open failed.
    pub(crate) fn shared_cache_pages(&self) -> Option<(u64, usize)> {
        let key = self.shared.as_ref()?;
        let map = lock(&DATABASES);
        let (database, handles) = map.get(key)?;
        Some((database.stats().cache_pages, *handles))
    }

    /// A statement was prepared on, or finalized from, this handle.
    pub(crate) fn stmt_opened(&self) {
        self.live_stmts.fetch_add(1, Ordering::AcqRel);
    }

    /// Returns true when the handle was a zombie waiting for this statement: the caller
    /// frees it (invariant 4).
    pub(crate) fn stmt_closed(&self) -> bool {
        // Whoever turns `zombie` off frees the handle: this or a racing `close`.
        self.live_stmts.fetch_sub(1, Ordering::AcqRel) == 1
            && self.zombie.swap(false, Ordering::AcqRel)
    }

    /// `Statement::step`, run again while the busy handler asks (invariant 3).
    pub(crate) fn step(&self, st: &mut Statement) -> parlite::Result<bool> {
        self.while_busy(|| st.step())
    }

    /// `f`, run again while it answers SQLITE_BUSY and the busy handler asks for a retry
    /// (invariant 3).
    pub(crate) fn while_busy<T>(
        &self,
        mut f: impl FnMut() -> parlite::Result<T>,
    ) -> parlite::Result<T> {
        let mut count: c_int = 0;
        loop {
            match f() {
                Err(e) if e.extended_code == rc::BUSY => {
                    let Some(h) = lock(&self.state).busy else {
                        return Err(e);
                    };
                    // SAFETY: the application installed this callback and its argument.
                    if unsafe { (h.callback)(h.arg, count) } == 0 {
                        return Err(e);
                    }
                    count = count.saturating_add(1);
                }
                r => return r,
            }
        }
    }

    fn set_busy_timeout(&self, ms: c_int) -> parlite::Result<()> {
        if let Some(c) = &self.conn {
            c.execute_batch(&format!("PRAGMA busy_timeout = {}", ms.max(0)))?;
        }
        Ok(())
    }
}

/// A C string with any interior NUL cut off (messages come from SQL text).
pub(crate) fn c_string(s: &str) -> CString {
    let end = s.find('\0').unwrap_or(s.len());
    CString::new(&s[..end]).unwrap_or_default()
}

/// Frees a handle whose statements are all finalized.
///
/// # Safety
/// `db` came from `Box::into_raw` in `open` and nothing uses it afterwards.
pub(crate) unsafe fn free(db: *mut Db) {
    let db = Box::from_raw(db);
    let shared = db.shared.clone();
    drop(db);
    if let Some(key) = shared {
        let mut map = lock(&DATABASES);
        if let Some(entry) = map.get_mut(&key) {
            entry.1 -= 1;
            if entry.1 == 0 {
                map.remove(&key);
            }
        }
    }
}

/// The shared `Database` of a file (invariant 1), opened when no handle has it.
fn shared_database(
    path: &str,
    create: bool,
    read_only: bool,
) -> parlite::Result<(Database, DatabaseKey)> {
    let mut map = lock(&DATABASES);
    if let Ok(canonical) = std::fs::canonicalize(path) {
        if let Some(entry) = map.get_mut(&(canonical.clone(), read_only)) {
            entry.1 += 1;
            return Ok((entry.0.clone(), (canonical, read_only)));
        }
    }
    let database = Database::open_with(path, create, read_only)?;
    let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| PathBuf::from(path));
    let key = (canonical, read_only);
    map.insert(key.clone(), (database.clone(), 1));
    Ok((database, key))
}

/// Opens `filename` as sqlite3_open_v2 does: a handle, which holds the error if it failed.
fn open(filename: &str, flags: c_int, vfs: Option<&str>) -> Box<Db> {
    // Opening initializes the library, as SQLite's sqlite3_open_v2 calls
    // sqlite3_initialize (config.rs invariant 2).
    crate::config::mark_initialized();
    let mut db = Box::new(Db {
        conn: None,
        shared: None,
        state: Mutex::new(ErrState {
            code: rc::OK,
            message: None,
            busy: None,
            progress: None,
            trace: None,
            legacy_trace: None,
            system_errno: 0,
            commit_arg: ptr::null_mut(),
            rollback_arg: ptr::null_mut(),
            update_arg: ptr::null_mut(),
        }),
        err_mask: AtomicI32::new(if flags & OPEN_EXRESCODE != 0 {
            -1
        } else {
            0xff
        }),
        live_stmts: AtomicUsize::new(0),
        zombie: AtomicBool::new(false),
        interrupted: AtomicBool::new(false),
        running: AtomicUsize::new(0),
        trace_mask: AtomicU32::new(0),
        filenames: Mutex::new(Vec::new()),
        extensions_enabled: AtomicBool::new(false),
    });
    // SQLite accepts exactly READONLY, READWRITE and READWRITE|CREATE.
    if !matches!(
        flags & (OPEN_READONLY | OPEN_READWRITE | OPEN_CREATE),
        OPEN_READONLY | OPEN_READWRITE | 0x6
    ) {
        db.set_code(rc::MISUSE);
        return db;
    }
    if let Some(name) = vfs.filter(|v| *v != "unix") {
        db.fail(rc::ERROR, &format!("no such vfs: {name}"));
        return db;
    }
    if flags & OPEN_URI != 0 && filename.starts_with("file:") {
        db.fail(rc::ERROR, "URI filenames are not supported by parlite");
        return db;
    }
    let read_only = flags & OPEN_READONLY != 0;
    let memory = flags & OPEN_MEMORY != 0 || filename.is_empty() || filename == ":memory:";
    let opened = if memory {
        Database::open(":memory:").map(|d| (d, None))
    } else if flags & OPEN_NOFOLLOW != 0
        && std::fs::symlink_metadata(filename).is_ok_and(|m| m.file_type().is_symlink())
    {
        Err(parlite::Error {
            code: rc::CANTOPEN,
            extended_code: rc::CANTOPEN,
            message: errstr(rc::CANTOPEN).to_string_lossy().into_owned(),
        })
    } else {
        shared_database(filename, flags & OPEN_CREATE != 0, read_only).map(|(d, k)| (d, Some(k)))
    };
    let connected = opened.and_then(|(database, key)| {
        db.shared = key;
        database.connect()
    });
    match connected {
        Ok(conn) => db.conn = Some(conn),
        Err(e) if e.code == rc::CANTOPEN => {
            // SQLite's wording, whatever the cause (the path is in no message of SQLite's).
            db.fail(e.extended_code, &errstr(rc::CANTOPEN).to_string_lossy());
        }
        Err(e) => {
            db.fail_with(&e);
        }
    }
    db
}

/// A handle from C, or None for NULL.
///
/// # Safety
/// `db` is NULL or a live handle of this library.
pub(crate) unsafe fn db_ref<'a>(db: *mut Db) -> Option<&'a Db> {
    db.as_ref()
}

unsafe fn open_into(
    filename: *const c_char,
    pp_db: *mut *mut Db,
    flags: c_int,
    vfs: *const c_char,
) -> c_int {
    if pp_db.is_null() {
        return rc::MISUSE;
    }
    *pp_db = ptr::null_mut();
    if filename.is_null() {
        return rc::MISUSE;
    }
    let name = CStr::from_ptr(filename).to_string_lossy();
    let vfs = (!vfs.is_null()).then(|| CStr::from_ptr(vfs).to_string_lossy());
    let db = open(&name, flags, vfs.as_deref());
    let code = db.masked(lock(&db.state).code);
    *pp_db = Box::into_raw(db);
    code
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_open_v2(
    filename: *const c_char,
    pp_db: *mut *mut Db,
    flags: c_int,
    vfs: *const c_char,
) -> c_int {
    guard(rc::INTERNAL, || open_into(filename, pp_db, flags, vfs))
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_open(filename: *const c_char, pp_db: *mut *mut Db) -> c_int {
    guard(rc::INTERNAL, || {
        open_into(filename, pp_db, OPEN_READWRITE | OPEN_CREATE, ptr::null())
    })
}

unsafe fn close(db: *mut Db, defer: bool) -> c_int {
    let Some(d) = db_ref(db) else {
        return rc::OK;
    };
    // Before the busy check, as sqlite3Close.
    d.trace(TRACE_CLOSE, db as *mut c_void, ptr::null_mut());
    if d.live_stmts.load(Ordering::Acquire) > 0 {
        if !defer {
            return d.fail(
                rc::BUSY,
                "unable to close due to unfinalized statements or unfinished backups",
            );
        }
        d.zombie.store(true, Ordering::Release);
        // The last statement may have been finalized between the two checks.
        if d.live_stmts.load(Ordering::Acquire) > 0 || !d.zombie.swap(false, Ordering::AcqRel) {
            return rc::OK;
        }
    }
    free(db);
    rc::OK
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_close(db: *mut Db) -> c_int {
    guard(rc::INTERNAL, || close(db, false))
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_close_v2(db: *mut Db) -> c_int {
    guard(rc::INTERNAL, || close(db, true))
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_errmsg(db: *mut Db) -> *const c_char {
    guard(ptr::null(), || match db_ref(db) {
        None => errstr(rc::NOMEM).as_ptr(),
        Some(d) => {
            let s = lock(&d.state);
            match &s.message {
                // Lives until the next call that records a result (lib.rs invariant 4).
                Some(m) => m.as_ptr(),
                None => errstr(s.code).as_ptr(),
            }
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_errcode(db: *mut Db) -> c_int {
    guard(rc::INTERNAL, || match db_ref(db) {
        None => rc::NOMEM,
        Some(d) => d.masked(lock(&d.state).code),
    })
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_extended_errcode(db: *mut Db) -> c_int {
    guard(rc::INTERNAL, || match db_ref(db) {
        None => rc::NOMEM,
        Some(d) => lock(&d.state).code,
    })
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_extended_result_codes(db: *mut Db, onoff: c_int) -> c_int {
    guard(rc::INTERNAL, || match db_ref(db) {
        None => rc::MISUSE,
        Some(d) => {
            d.err_mask
                .store(if onoff != 0 { -1 } else { 0xff }, Ordering::Relaxed);
            rc::OK
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_busy_timeout(db: *mut Db, ms: c_int) -> c_int {
    guard(rc::INTERNAL, || {
        let Some(d) = db_ref(db) else {
            return rc::MISUSE;
        };
        lock(&d.state).busy = None;
        match d.set_busy_timeout(ms) {
            Ok(()) => rc::OK,
            Err(e) => d.fail_with(&e),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_busy_handler(
    db: *mut Db,
    callback: Option<BusyCallback>,
    arg: *mut c_void,
) -> c_int {
    guard(rc::INTERNAL, || {
        let Some(d) = db_ref(db) else {
            return rc::MISUSE;
        };
        // The handler replaces the timeout, as in SQLite (invariant 3).
        if let Err(e) = d.set_busy_timeout(0) {
            return d.fail_with(&e);
        }
        lock(&d.state).busy = callback.map(|callback| BusyHandler { callback, arg });
        rc::OK
    })
}

fn counter(db: *mut Db, read: impl FnOnce(&Connection) -> i64) -> i64 {
    // SAFETY: the caller passes NULL or a live handle (SQLite's contract).
    match unsafe { db_ref(db) }.and_then(Db::conn) {
        Some(c) => read(c),
        None => 0,
    }
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_changes(db: *mut Db) -> c_int {
    // The low 32 bits, as SQLite's.
    sqlite3_changes64(db) as c_int
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_changes64(db: *mut Db) -> i64 {
    guard(0, || counter(db, |c| c.changes() as i64))
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_total_changes(db: *mut Db) -> c_int {
    sqlite3_total_changes64(db) as c_int
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_total_changes64(db: *mut Db) -> i64 {
    guard(0, || counter(db, |c| c.total_changes() as i64))
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_last_insert_rowid(db: *mut Db) -> i64 {
    guard(0, || counter(db, Connection::last_insert_rowid))
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_get_autocommit(db: *mut Db) -> c_int {
    guard(0, || counter(db, |c| c.is_autocommit() as i64) as c_int)
}

/// The text form of every column of the current row, for the exec callback.
fn row_texts(st: &Statement) -> Vec<Option<CString>> {
    (0..st.column_count())
        .map(|i| {
            let mut b = Vec::new();
            if !crate::stmt::push_text_form(st.column_ref(i).ok()?, &mut b) {
                return None;
            }
            // Text with a NUL inside: C sees it up to the NUL, as SQLite's callers do.
            b.truncate(b.iter().position(|&c| c == 0).unwrap_or(b.len()));
            Some(CString::new(b).unwrap_or_default())
        })
        .collect()
}

fn as_ptrs(v: &[Option<CString>]) -> Vec<*mut c_char> {
    v.iter()
        .map(|s| {
            s.as_ref()
                .map_or(ptr::null_mut(), |s| s.as_ptr() as *mut c_char)
        })
        .collect()
}

/// sqlite3_exec's loop; Err(code) once the error is recorded on `d`.
unsafe fn exec(
    d: &Db,
    sql: &str,
    callback: Option<ExecCallback>,
    arg: *mut c_void,
) -> Result<(), c_int> {
    let Some(conn) = d.conn() else {
        return Err(rc::MISUSE);
    };
    let mut rest = sql;
    loop {
        let (mut st, tail) = match conn.prepare(rest) {
            Ok(Some(p)) => p,
            Ok(None) => return Ok(()),
            Err(e) => return Err(d.fail_with(&e)),
        };
        if !d.run_starts() {
            return Err(d.fail(rc::INTERRUPT, "interrupted"));
        }
        let names: Vec<CString> = (0..st.column_count())
            .map(|i| c_string(st.column_name(i)))
            .collect();
        let mut name_ptrs: Vec<*mut c_char> =
            names.iter().map(|n| n.as_ptr() as *mut c_char).collect();
        loop {
            match d.step(&mut st) {
                Ok(true) => {
                    let Some(cb) = callback else { continue };
                    let values = row_texts(&st);
                    let mut value_ptrs = as_ptrs(&values);
                    let n = value_ptrs.len() as c_int;
                    if cb(arg, n, value_ptrs.as_mut_ptr(), name_ptrs.as_mut_ptr()) != 0 {
                        d.set_code(rc::ABORT);
                        return Err(d.masked(rc::ABORT));
                    }
                }
                Ok(false) => break,
                Err(e) => return Err(d.fail_with(&e)),
            }
        }
        rest = tail;
    }
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_exec(
    db: *mut Db,
    sql: *const c_char,
    callback: Option<ExecCallback>,
    arg: *mut c_void,
    errmsg: *mut *mut c_char,
) -> c_int {
    guard(rc::INTERNAL, || {
        let Some(d) = db_ref(db) else {
            return rc::MISUSE;
        };
        if !errmsg.is_null() {
            *errmsg = ptr::null_mut();
        }
        if sql.is_null() {
            d.set_code(rc::OK);
            return rc::OK;
        }
        let Ok(text) = CStr::from_ptr(sql).to_str() else {
            return d.fail(rc::ERROR, "SQL text is not valid UTF-8");
        };
        match exec(d, text, callback, arg) {
            Ok(()) => {
                d.set_code(rc::OK);
                rc::OK
            }
            Err(code) => {
                if !errmsg.is_null() {
                    *errmsg = crate::misc::malloc_c_string(CStr::from_ptr(sqlite3_errmsg(db)));
                }
                code
            }
        }
    })
}

// ---- hooks: interrupt, progress, trace, authorizer, limits ------------------------------

#[no_mangle]
pub unsafe extern "C" fn sqlite3_interrupt(db: *mut Db) {
    guard((), || {
        if let Some(d) = db_ref(db) {
            d.interrupted.store(true, Ordering::Release);
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_is_interrupted(db: *mut Db) -> c_int {
    guard(0, || {
        db_ref(db).map_or(0, |d| d.interrupted.load(Ordering::Acquire) as c_int)
    })
}

/// Installs the progress handler, called once per step that may be stopped (invariant
/// 6); `n_ops` < 1 or no callback removes it.
#[no_mangle]
pub unsafe extern "C" fn sqlite3_progress_handler(
    db: *mut Db,
    n_ops: c_int,
    callback: Option<ProgressCallback>,
    arg: *mut c_void,
) {
    guard((), || {
        if let Some(d) = db_ref(db) {
            lock(&d.state).progress = callback
                .filter(|_| n_ops > 0)
                .map(|callback| ProgressHandler { callback, arg });
        }
    })
}

/// SQLITE_TRACE_STMT (a run's first step, with the statement's SQL), SQLITE_TRACE_ROW,
/// SQLITE_TRACE_PROFILE (a run's end, with its nanoseconds) and SQLITE_TRACE_CLOSE, for
/// statements of `sqlite3_prepare*`; `sqlite3_exec` reports none of them.
#[no_mangle]
pub unsafe extern "C" fn sqlite3_trace_v2(
    db: *mut Db,
    mask: u32,
    callback: Option<TraceCallback>,
    ctx: *mut c_void,
) -> c_int {
    guard(rc::INTERNAL, || {
        let Some(d) = db_ref(db) else {
            return rc::MISUSE;
        };
        let tracer = callback.filter(|_| mask != 0).map(|callback| Tracer {
            mask,
            callback,
            ctx,
        });
        d.trace_mask
            .store(tracer.map_or(0, |t| t.mask), Ordering::Relaxed);
        let mut s = lock(&d.state);
        s.trace = tracer;
        s.legacy_trace = None;
        rc::OK
    })
}

/// The TRACE_STMT tracer behind `sqlite3_trace`: the legacy callback gets the statement's
/// SQL with its bound parameters (`sqlite3_expanded_sql`), as SQLite gives it.
unsafe extern "C" fn legacy_trace(
    _event: u32,
    ctx: *mut c_void,
    p: *mut c_void,
    _x: *mut c_void,
) -> c_int {
    // SAFETY: `ctx` is the handle that installed this tracer, live while it traces.
    let d = &*(ctx as *const Db);
    let Some((callback, arg)) = lock(&d.state).legacy_trace else {
        return 0;
    };
    let sql = crate::stmt::sqlite3_expanded_sql(p as *mut crate::stmt::Stmt);
    if !sql.is_null() {
        callback(arg, sql);
        libc::free(sql as *mut c_void);
    }
    0
}

/// sqlite3_trace (deprecated): `callback` hears each statement's SQL as its run starts;
/// it replaces a `sqlite3_trace_v2` tracer, as both share SQLite's one slot. Returns the
/// previous tracer's argument.
#[no_mangle]
pub unsafe extern "C" fn sqlite3_trace(
    db: *mut Db,
    callback: Option<LegacyTraceCallback>,
    arg: *mut c_void,
) -> *mut c_void {
    guard(ptr::null_mut(), || {
        let Some(d) = db_ref(db) else {
            return ptr::null_mut();
        };
        let mut s = lock(&d.state);
        let previous = match (s.legacy_trace, s.trace) {
            (Some((_, old)), _) => old,
            (None, Some(t)) => t.ctx,
            (None, None) => ptr::null_mut(),
        };
        s.legacy_trace = callback.map(|c| (c, arg));
        s.trace = callback.map(|_| Tracer {
            mask: TRACE_STMT,
            callback: legacy_trace,
            ctx: db as *mut c_void,
        });
        d.trace_mask.store(
            if callback.is_some() { TRACE_STMT } else { 0 },
            Ordering::Relaxed,
        );
        previous
    })
}

/// sqlite3_error_offset: -1, "no offset", for every error: parlite's errors do not carry
/// the position of the token they are about (README's "C API": the sqlite3 shell then
/// prints no `^--- error here` line under a statement).
#[no_mangle]
pub unsafe extern "C" fn sqlite3_error_offset(_db: *mut Db) -> c_int {
    -1
}

/// An authorizer would be asked about every table, column and operation a statement
/// touches while it is prepared, which parlite's binder does not report: installing one
/// fails (SQLITE_ERROR) rather than authorize everything unseen; removing it succeeds.
#[no_mangle]
pub unsafe extern "C" fn sqlite3_set_authorizer(
    db: *mut Db,
    callback: Option<
        unsafe extern "C" fn(
            *mut c_void,
            c_int,
            *const c_char,
            *const c_char,
            *const c_char,
            *const c_char,
        ) -> c_int,
    >,
    _arg: *mut c_void,
) -> c_int {
    guard(rc::INTERNAL, || {
        let Some(d) = db_ref(db) else {
            return rc::MISUSE;
        };
        if callback.is_none() {
            d.set_code(rc::OK);
            return rc::OK;
        }
        d.fail(rc::ERROR, "parlite does not support authorizer callbacks")
    })
}

/// sqlite3_limit's categories (SQLITE_LIMIT_*), with the limits parlite enforces: SQLite's
/// defaults. Only SQLITE_LIMIT_ATTACHED can be changed (lowered); setting another returns
/// its value and leaves it, as SQLite leaves a limit asked above its hard maximum.
const LIMIT_ATTACHED: c_int = 7;
const LIMITS: [c_int; 12] = [
    parlite_sql::value::MAX_LENGTH_BYTES as c_int, // LENGTH
    1_000_000_000,                                 // SQL_LENGTH
    2000,                                          // COLUMN
    1000,                                          // EXPR_DEPTH
    500,                                           // COMPOUND_SELECT
    250_000_000,                                   // VDBE_OP
    1000,                                          // FUNCTION_ARG (3.48+)
    10,                                            // ATTACHED
    50_000,                                        // LIKE_PATTERN_LENGTH
    32766,                                         // VARIABLE_NUMBER
    1000,                                          // TRIGGER_DEPTH
    0,                                             // WORKER_THREADS
];

#[no_mangle]
pub unsafe extern "C" fn sqlite3_limit(db: *mut Db, id: c_int, new_value: c_int) -> c_int {
    guard(-1, || {
        let Some(conn) = db_ref(db).and_then(Db::conn) else {
            return -1;
        };
        let Some(&fixed) = usize::try_from(id).ok().and_then(|i| LIMITS.get(i)) else {
            return -1;
        };
        if id != LIMIT_ATTACHED {
            return fixed;
        }
        let current = conn.limit_attached() as c_int;
        if new_value >= 0 {
            conn.set_limit_attached(new_value as usize);
        }
        current
    })
}

/// The file of database `name` of the connection as `PRAGMA database_list` gives it ("" for
/// TEMP and in-memory databases); None when the connection has no database of that name.
fn database_file(c: &Connection, name: &str) -> parlite::Result<Option<String>> {
    let Some((mut st, _)) = c.prepare("PRAGMA database_list")? else {
        return Ok(None);
    };
    while st.step()? {
        if st
            .column_ref(1)?
            .as_str()
            .is_some_and(|n| n.eq_ignore_ascii_case(name))
        {
            return Ok(Some(st.column_ref(2)?.as_str().unwrap_or("").to_string()));
        }
    }
    Ok(None)
}

/// The absolute path of database `name` (NULL: "main") of the handle, "" for TEMP and
/// in-memory databases, NULL for a name the handle has no database of. The text lives as
/// long as the handle.
#[no_mangle]
pub unsafe extern "C" fn sqlite3_db_filename(db: *mut Db, name: *const c_char) -> *const c_char {
    guard(ptr::null(), || {
        let Some(d) = db_ref(db) else {
            return ptr::null();
        };
        let Some(c) = d.conn() else {
            return ptr::null();
        };
        let name = db_name(name);
        let Ok(Some(file)) = database_file(c, &name) else {
            return ptr::null();
        };
        let Ok(file) = CString::new(file) else {
            return ptr::null();
        };
        let mut kept = lock(&d.filenames);
        if let Some(k) = kept.iter().find(|k| **k == file) {
            return k.as_ptr();
        }
        kept.push(file);
        kept.last().map_or(ptr::null(), |k| k.as_ptr())
    })
}

/// The error number of the operating-system call behind the handle's last SQLITE_CANTOPEN
/// or SQLITE_IOERR (0 when none was recorded): what failed on the thread that got it.
#[no_mangle]
pub unsafe extern "C" fn sqlite3_system_errno(db: *mut Db) -> c_int {
    guard(0, || db_ref(db).map_or(0, |d| lock(&d.state).system_errno))
}

type CommitCallback = unsafe extern "C" fn(*mut c_void) -> c_int;
type RollbackCallback = unsafe extern "C" fn(*mut c_void);

/// An application callback with its argument and handle, called from the connection's
/// commit path on the thread running the statement (the handle's thread).
struct HookCall<F> {
    callback: F,
    arg: *mut c_void,
    db: *const Db,
}

// SAFETY: the callback runs on the thread that steps the handle's statement; SQLite's
// hooks carry the same contract (the application serializes use of a handle).
unsafe impl<F> Send for HookCall<F> {}

impl HookCall<CommitCallback> {
    /// Whether the application asks for a rollback.
    fn commit(&self) -> bool {
        let _scope = CallbackScope::enter(self.db);
        // SAFETY: the application installed this callback and its argument.
        unsafe { (self.callback)(self.arg) != 0 }
    }
}

impl HookCall<RollbackCallback> {
    fn rollback(&self) {
        let _scope = CallbackScope::enter(self.db);
        // SAFETY: the application installed this callback and its argument.
        unsafe { (self.callback)(self.arg) }
    }
}

/// Installs a hook on the handle's connection through `install` (None removes it) and
/// records its argument in `slot`: the previous hook's argument, which is returned.
unsafe fn set_hook<F>(
    db: *mut Db,
    callback: Option<F>,
    arg: *mut c_void,
    install: impl FnOnce(&Connection, Option<HookCall<F>>),
    slot: fn(&mut ErrState) -> &mut *mut c_void,
) -> *mut c_void {
    guard(ptr::null_mut(), || {
        let Some(d) = db_ref(db) else {
            return ptr::null_mut();
        };
        let Some(c) = d.conn() else {
            return ptr::null_mut();
        };
        let new_arg = if callback.is_some() {
            arg
        } else {
            ptr::null_mut()
        };
        install(c, callback.map(|callback| HookCall { callback, arg, db }));
        std::mem::replace(slot(&mut lock(&d.state)), new_arg)
    })
}

/// sqlite3_commit_hook: `callback` (NULL: none) runs before a writing transaction
/// commits; non-zero turns the commit into a rollback (SQLITE_CONSTRAINT_COMMITHOOK).
/// Returns the previous hook's argument.
#[no_mangle]
pub unsafe extern "C" fn sqlite3_commit_hook(
    db: *mut Db,
    callback: Option<CommitCallback>,
    arg: *mut c_void,
) -> *mut c_void {
    let install = |c: &Connection, call: Option<HookCall<CommitCallback>>| {
        c.commit_hook(call.map(|call| Box::new(move || call.commit()) as parlite::CommitHook));
    };
    set_hook(db, callback, arg, install, |s| &mut s.commit_arg)
}

/// sqlite3_rollback_hook: `callback` (NULL: none) runs when a transaction ends in a
/// rollback. Returns the previous hook's argument.
#[no_mangle]
pub unsafe extern "C" fn sqlite3_rollback_hook(
    db: *mut Db,
    callback: Option<RollbackCallback>,
    arg: *mut c_void,
) -> *mut c_void {
    let install = |c: &Connection, call: Option<HookCall<RollbackCallback>>| {
        c.rollback_hook(
            call.map(|call| Box::new(move || call.rollback()) as parlite::RollbackHook),
        );
    };
    set_hook(db, callback, arg, install, |s| &mut s.rollback_arg)
}

/// sqlite3_file_control: parlite's storage has no file object for an application to reach
/// (no xFileControl), so every opcode is SQLITE_NOTFOUND, as the unix VFS answers an opcode
/// it does not know; a name the handle has no database of is SQLITE_ERROR.
#[no_mangle]
pub unsafe extern "C" fn sqlite3_file_control(
    db: *mut Db,
    name: *const c_char,
    _op: c_int,
    _arg: *mut c_void,
) -> c_int {
    const NOTFOUND: c_int = 12;
    guard(rc::INTERNAL, || {
        let Some(c) = db_ref(db).and_then(Db::conn) else {
            return rc::MISUSE;
        };
        let name = db_name(name);
        match database_file(c, &name) {
            Ok(Some(_)) => NOTFOUND,
            _ => rc::ERROR,
        }
    })
}

/// sqlite3_enable_load_extension: records the switch sqlite3_load_extension checks.
#[no_mangle]
pub unsafe extern "C" fn sqlite3_enable_load_extension(db: *mut Db, onoff: c_int) -> c_int {
    guard(rc::INTERNAL, || match db_ref(db) {
        Some(d) => {
            d.extensions_enabled.store(onoff != 0, Ordering::Release);
            rc::OK
        }
        None => rc::MISUSE,
    })
}

/// sqlite3_load_extension: "not authorized" while loading is off, as SQLite; when on, an
/// error all the same: a SQLite extension is C code written against SQLite's own
/// internals (its `sqlite3_api_routines` table and virtual-table modules), which parlite
/// does not provide. `*errmsg` (when asked for) is freed with sqlite3_free.
#[no_mangle]
pub unsafe extern "C" fn sqlite3_load_extension(
    db: *mut Db,
    file: *const c_char,
    _proc: *const c_char,
    errmsg: *mut *mut c_char,
) -> c_int {
    guard(rc::INTERNAL, || {
        let Some(d) = db_ref(db) else {
            return rc::MISUSE;
        };
        let message = match d.extensions_enabled.load(Ordering::Acquire) {
            false => "not authorized".to_string(),
            true => format!(
                "parlite cannot load SQLite extensions: {}",
                match file.is_null() {
                    true => "".into(),
                    false => CStr::from_ptr(file).to_string_lossy(),
                }
            ),
        };
        if !errmsg.is_null() {
            *errmsg = crate::misc::malloc_c_string(&c_string(&message));
        }
        d.fail(rc::ERROR, &message)
    })
}

type UpdateCallback = unsafe extern "C" fn(*mut c_void, c_int, *const c_char, *const c_char, i64);

impl HookCall<UpdateCallback> {
    fn update(&self, change: parlite::RowChange, db: &str, table: &str, rowid: i64) {
        let (db, table) = (c_string(db), c_string(table));
        let _scope = CallbackScope::enter(self.db);
        // SAFETY: the application installed this callback and its argument; the names live
        // through the call.
        unsafe {
            (self.callback)(
                self.arg,
                change as c_int,
                db.as_ptr(),
                table.as_ptr(),
                rowid,
            )
        }
    }
}

/// sqlite3_update_hook: `callback` (NULL: none) is told of each row a statement inserts,
/// updates or deletes in a rowid table (`parlite::Connection::update_hook`). Returns the
/// previous hook's argument.
#[no_mangle]
pub unsafe extern "C" fn sqlite3_update_hook(
    db: *mut Db,
    callback: Option<UpdateCallback>,
    arg: *mut c_void,
) -> *mut c_void {
    let install = |c: &Connection, call: Option<HookCall<UpdateCallback>>| {
        c.update_hook(call.map(|call| {
            Box::new(move |change, db: &str, table: &str, rowid| {
                call.update(change, db, table, rowid)
            }) as parlite::UpdateHook
        }));
    };
    set_hook(db, callback, arg, install, |s| &mut s.update_arg)
}

/// sqlite3_db_readonly: 1 when database `name` (NULL: main) of the handle refuses writes,
/// 0 when it takes them, -1 when the handle has no database of that name.
#[no_mangle]
pub unsafe extern "C" fn sqlite3_db_readonly(db: *mut Db, name: *const c_char) -> c_int {
    guard(-1, || {
        let Some(d) = db_ref(db) else {
            return -1;
        };
        let Some(c) = d.conn() else {
            return -1;
        };
        let name = db_name(name);
        match database_file(c, &name) {
            Ok(Some(_)) => c_int::from(d.shared.as_ref().is_some_and(|k| k.1)),
            _ => -1,
        }
    })
}

/// sqlite3_txn_state: for the main database (a NULL or "main" name; TEMP and attached
/// databases share its transaction), 0 none, 1 read, 2 write; -1 for a name the handle
/// has no database of.
#[no_mangle]
pub unsafe extern "C" fn sqlite3_txn_state(db: *mut Db, name: *const c_char) -> c_int {
    guard(-1, || {
        let Some(c) = db_ref(db).and_then(Db::conn) else {
            return -1;
        };
        if !name.is_null() {
            // main and temp always exist; an attached name is looked up (without reading
            // in the transaction: a deferred one's snapshot starts at its first read).
            if !c.has_database(&CStr::from_ptr(name).to_string_lossy()) {
                return -1;
            }
        }
        c_int::from(c.txn_state())
    })
}

/// A text kept while the handle lives (`Db::filenames`), for answers SQLite points into
/// its schema for.
fn kept_text(d: &Db, text: &str) -> *const c_char {
    let text = c_string(text);
    let mut kept = lock(&d.filenames);
    if let Some(k) = kept.iter().find(|k| **k == text) {
        return k.as_ptr();
    }
    kept.push(text);
    kept.last().map_or(ptr::null(), |k| k.as_ptr())
}

/// sqlite3_table_column_metadata: the declared type (NULL when none), collation, NOT NULL,
/// PRIMARY KEY and AUTOINCREMENT of a table's column (`parlite::Connection::
/// table_column_metadata`); every output zeroed and SQLITE_ERROR "no such table column"
/// when there is none. The texts live as long as the handle.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn sqlite3_table_column_metadata(
    db: *mut Db,
    db_name: *const c_char,
    table: *const c_char,
    column: *const c_char,
    data_type: *mut *const c_char,
    coll_seq: *mut *const c_char,
    not_null: *mut c_int,
    primary_key: *mut c_int,
    autoinc: *mut c_int,
) -> c_int {
    guard(rc::INTERNAL, || {
        let Some(d) = db_ref(db) else {
            return rc::MISUSE;
        };
        let Some(c) = d.conn() else {
            return rc::MISUSE;
        };
        if table.is_null() {
            return rc::MISUSE;
        }
        let text = |p: *const c_char| (!p.is_null()).then(|| CStr::from_ptr(p).to_string_lossy());
        let (db_name, table, column) = (text(db_name), text(table), text(column));
        let found = c.table_column_metadata(
            db_name.as_deref(),
            table.as_deref().unwrap_or(""),
            column.as_deref(),
        );
        let meta = match found {
            Ok(m) => m,
            Err(e) => return d.fail_with(&e),
        };
        let out = |p: *mut c_int, v: bool| {
            if !p.is_null() {
                *p = c_int::from(v);
            }
        };
        let set = |p: *mut *const c_char, v: *const c_char| {
            if !p.is_null() {
                *p = v;
            }
        };
        match meta {
            Some(m) => {
                let ty = m
                    .declared_type
                    .as_deref()
                    .map_or(ptr::null(), |t| kept_text(d, t));
                set(data_type, ty);
                set(coll_seq, kept_text(d, &m.collation));
                out(not_null, m.not_null);
                out(primary_key, m.primary_key);
                out(autoinc, m.autoincrement);
                d.set_code(rc::OK);
                rc::OK
            }
            None => {
                set(data_type, ptr::null());
                set(coll_seq, ptr::null());
                out(not_null, false);
                out(primary_key, false);
                out(autoinc, false);
                let message = format!(
                    "no such table column: {}.{}",
                    table.as_deref().unwrap_or(""),
                    column.as_deref().unwrap_or("(null)")
                );
                d.fail(rc::ERROR, &message)
            }
        }
    })
}

/// A database name from C: NULL is "main".
unsafe fn db_name<'a>(name: *const c_char) -> std::borrow::Cow<'a, str> {
    match name.is_null() {
        true => "main".into(),
        false => CStr::from_ptr(name).to_string_lossy(),
    }
}
