//! `sqlite3_stmt`: prepare, step, reset, finalize, bind and column access.
//!
//! A statement moves through SQLite's states (vdbe's eVdbeState):
//! ```text
//!   Ready ──step──▶ Row ──step──▶ … ──step──▶ Halted (SQLITE_DONE or an error)
//!     ▲              │ reset                     │ reset, or step (automatic reset)
//!     └──────────────┴───────────────────────────┘
//! ```
//! Invariants:
//! 1. Binding is allowed only in Ready, as in SQLite (SQLITE_MISUSE otherwise): values bound
//!    mid-run would otherwise apply to a rerun the application did not ask for.
//! 2. `reset` and `finalize` return the error of the last step, if it failed, and leave it
//!    as the connection's error (SQLite's sqlite3VdbeTransferError); after a successful
//!    run they record SQLITE_OK.
//! 3. Column access with no current row or an index out of range reads NULL and records
//!    SQLITE_RANGE on the connection (SQLite's columnMem).
//! 4. The text form of a column (`texts`), NUL-terminated, is built on first use and kept
//!    until the next step or reset (lib.rs invariant 4); `sqlite3_column_blob` of a BLOB
//!    points into the row itself, which lives as long. The buffers outlive the row: the
//!    next row's text is written over them, so reading rows allocates nothing once they have
//!    grown (a fresh allocation per `sqlite3_column_text` was 15% of hc_mixed's 10-row
//!    scans, BENCHMARKS.md "The sqlite3 C API").
//! 5. A run (first step to its end, or reset) counts as running on its connection, which
//!    is what clears an interrupt (db.rs invariant 6). Trace callbacks are called with no
//!    lock held: a callback may read the statement (`sqlite3_expanded_sql`).

use crate::db::{c_string, db_ref, free, CallbackScope, Db, TRACE_PROFILE, TRACE_ROW, TRACE_STMT};
use crate::func::CValue;
use crate::{guard, rc};
use parlite::{Statement, ValueRef};
use parlite_sql::value::num;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::ptr;
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

/// sqlite3_column_type's answers.
const SQLITE_INTEGER: c_int = 1;
const SQLITE_FLOAT: c_int = 2;
const SQLITE_TEXT: c_int = 3;
const SQLITE_BLOB: c_int = 4;
const SQLITE_NULL: c_int = 5;

/// The destructor argument of sqlite3_bind_text/blob: SQLITE_STATIC (0), SQLITE_TRANSIENT
/// (-1) or a function that frees the caller's buffer.
type Destructor = isize;
const SQLITE_STATIC: Destructor = 0;
const SQLITE_TRANSIENT: Destructor = -1;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Ready,
    Row,
    Halted,
}

struct StmtInner {
    st: Statement,
    /// The SQL text through its tail, as given (sqlite3_sql).
    sql: CString,
    phase: Phase,
    /// The last step's error (invariant 2).
    error: Option<parlite::Error>,
    /// Text forms of the current row's columns (invariant 4).
    texts: Vec<TextForm>,
    names: Vec<Option<CString>>,
    param_names: Vec<Option<CString>>,
    /// Whether a run is under way (invariant 5), and when it started if the trace
    /// callback wants SQLITE_TRACE_PROFILE (reading the clock for every run was ~1% of a
    /// CPython executemany).
    running: bool,
    run_started: Option<Instant>,
    /// sqlite3_column_decltype's answers, built on first use; they live until finalize.
    decltypes: Option<Vec<Option<CString>>>,
    /// sqlite3_column_database_name / _table_name / _origin_name's answers, built on first
    /// use; they live until finalize.
    origins: Option<Vec<Option<[CString; 3]>>>,
    /// sqlite3_column_value's values of the current row (None: not asked for), and the
    /// NULL it answers past the last column; they live until the next step or reset.
    column_values: Vec<Option<Box<CValue>>>,
    null_value: Option<Box<CValue>>,
    /// What sqlite3_stmt_status last reset SQLITE_STMTSTATUS_REPREPARE and _RUN to: the
    /// statement's own counts when the application asked to reset them.
    status_base: [u32; 2],
}

/// A column's text form, NUL-terminated; `valid` is false until it is built for the
/// current row (invariant 4).
#[derive(Clone, Default)]
struct TextForm {
    valid: bool,
    bytes: Vec<u8>,
}

/// What C calls `sqlite3_stmt`.
pub struct Stmt {
    db: *mut Db,
    inner: Mutex<StmtInner>,
}

fn lock(m: &Mutex<StmtInner>) -> MutexGuard<'_, StmtInner> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Stmt {
    fn db(&self) -> &Db {
        // SAFETY: a handle outlives its statements (db.rs invariant 4).
        unsafe { &*self.db }
    }
}

/// Appends the bytes of a value's text form, as sqlite3_column_text renders it, to `out`;
/// false (nothing appended) for NULL.
pub(crate) fn push_text_form(v: ValueRef<'_>, out: &mut Vec<u8>) -> bool {
    match v {
        ValueRef::Null => return false,
        ValueRef::Integer(i) => {
            use std::io::Write;
            // Writing into a Vec cannot fail.
            let _ = write!(out, "{i}");
        }
        ValueRef::Real(r) => out.extend_from_slice(num::real_to_text(r).as_bytes()),
        ValueRef::Text(s) => out.extend_from_slice(s.as_bytes()),
        ValueRef::Blob(b) => out.extend_from_slice(b),
    }
    true
}

/// sqlite3_column_type's answer for a value.
pub(crate) fn type_code(v: ValueRef<'_>) -> c_int {
    match v {
        ValueRef::Null => SQLITE_NULL,
        ValueRef::Integer(_) => SQLITE_INTEGER,
        ValueRef::Real(_) => SQLITE_FLOAT,
        ValueRef::Text(_) => SQLITE_TEXT,
        ValueRef::Blob(_) => SQLITE_BLOB,
    }
}

/// sqlite3_column_int64: text and blobs by their integer prefix, reals truncated.
pub(crate) fn int64_of(v: ValueRef<'_>) -> i64 {
    match v {
        ValueRef::Null => 0,
        ValueRef::Integer(i) => i,
        ValueRef::Real(r) => num::real_to_i64(r),
        ValueRef::Text(s) => num::atoi64(s.as_bytes()).0,
        ValueRef::Blob(b) => num::atoi64(b).0,
    }
}

/// sqlite3_column_double: text and blobs by their longest numeric prefix.
pub(crate) fn double_of(v: ValueRef<'_>) -> f64 {
    match v {
        ValueRef::Null => 0.0,
        ValueRef::Integer(i) => i as f64,
        ValueRef::Real(r) => r,
        ValueRef::Text(s) => num::atof(s.as_bytes()).0,
        ValueRef::Blob(b) => num::atof(b).0,
    }
}

/// `StmtInner::value` on the fields it needs, so that `text` can fill `texts` meanwhile.
fn column<'a>(st: &'a Statement, phase: Phase, db: &Db, i: c_int) -> Option<ValueRef<'a>> {
    let found = if phase == Phase::Row && i >= 0 {
        st.column_ref(i as usize).ok()
    } else {
        None
    };
    if found.is_none() {
        db.set_code(rc::RANGE);
    }
    found
}

impl StmtInner {
    /// The current row's column `i`, or None (and SQLITE_RANGE recorded) with no row or
    /// past the last column (invariant 3).
    fn value(&self, db: &Db, i: c_int) -> Option<ValueRef<'_>> {
        column(&self.st, self.phase, db, i)
    }

    /// Column `i`'s text form, NUL-terminated, kept until the next step (invariant 4).
    fn text(&mut self, db: &Db, i: c_int) -> Option<&[u8]> {
        let v = column(&self.st, self.phase, db, i)?;
        let i = i as usize;
        if self.texts.len() <= i {
            self.texts.resize(i + 1, TextForm::default());
        }
        let t = &mut self.texts[i];
        if !t.valid {
            t.bytes.clear();
            if !push_text_form(v, &mut t.bytes) {
                return None;
            }
            t.bytes.push(0);
            t.valid = true;
        }
        Some(&t.bytes)
    }

    /// Leaves the current run (reset, or the automatic reset of a step after Halted);
    /// the run's nanoseconds if it was still running, for SQLITE_TRACE_PROFILE.
    fn rewind(&mut self, db: &Db) -> Option<i64> {
        self.st.reset();
        self.phase = Phase::Ready;
        self.error = None;
        self.forget_texts();
        self.end_run(db)
    }

    /// A run starts (invariant 5).
    fn begin_run(&mut self, db: &Db) {
        if !self.running {
            self.running = true;
            db.set_running(true);
            self.run_started = db.traces(TRACE_PROFILE).then(Instant::now);
        }
    }

    /// A run ends: its nanoseconds for SQLITE_TRACE_PROFILE, None when none was running
    /// or the trace does not ask for them.
    fn end_run(&mut self, db: &Db) -> Option<i64> {
        if !std::mem::replace(&mut self.running, false) {
            return None;
        }
        db.set_running(false);
        let started = self.run_started.take()?;
        Some(started.elapsed().as_nanos().min(i64::MAX as u128) as i64)
    }

    /// The current row's text forms are gone (a step or reset); their buffers stay.
    fn forget_texts(&mut self) {
        for t in &mut self.texts {
            t.valid = false;
        }
        self.column_values.clear();
    }

    /// sqlite3_reset's result and bookkeeping (invariant 2), and the nanoseconds of a
    /// run it ended.
    fn reset(&mut self, db: &Db) -> (c_int, Option<i64>) {
        let code = match &self.error {
            Some(e) => db.fail_with(e),
            None => {
                if self.phase != Phase::Ready {
                    db.set_code(rc::OK);
                }
                rc::OK
            }
        };
        let ended = self.rewind(db);
        (code, ended)
    }
}

/// Reports a run's end to the trace callback (called with no lock held, invariant 5).
fn trace_profile(db: &Db, p: *mut Stmt, ended: Option<i64>) {
    if let Some(mut ns) = ended {
        db.trace(
            TRACE_PROFILE,
            p as *mut c_void,
            &mut ns as *mut i64 as *mut c_void,
        );
    }
}

/// A statement from C, or None for NULL.
unsafe fn stmt_ref<'a>(p: *mut Stmt) -> Option<&'a Stmt> {
    p.as_ref()
}

/// Where a prepared statement's text ends (`sqlite3_sql`, `*pzTail`), given the tail
/// parlite left: just after its semicolon, or, without one, at the end of the input
/// (SQLite's tokenizer runs on through trailing spaces and comments to the end; CPython's
/// implicit "BEGIN " keeps its space in the trace).
fn statement_end(text: &str, tail: &str) -> usize {
    let used = text.len() - tail.len();
    if text[..used].trim_end().ends_with(';') {
        used
    } else {
        text.len()
    }
}

unsafe fn prepare(
    db: *mut Db,
    sql: *const c_char,
    n_byte: c_int,
    pp_stmt: *mut *mut Stmt,
    pz_tail: *mut *const c_char,
) -> c_int {
    if !pp_stmt.is_null() {
        *pp_stmt = ptr::null_mut();
    }
    let Some(d) = db_ref(db) else {
        return rc::MISUSE;
    };
    if pp_stmt.is_null() || sql.is_null() {
        return rc::MISUSE;
    }
    let Some(conn) = d.conn() else {
        if CallbackScope::inside(d) {
            // db.rs invariant 5, said in the message a program shows (the sqlite3 shell's
            // sha3_query() and .sha3sum prepare from inside a function call).
            return d.fail(
                rc::MISUSE,
                "parlite cannot run SQL on a connection from inside one of its callbacks",
            );
        }
        return rc::MISUSE;
    };
    // nByte < 0: up to the NUL; otherwise at most nByte bytes, and never past a NUL.
    let bytes = if n_byte < 0 {
        CStr::from_ptr(sql).to_bytes()
    } else {
        let all = std::slice::from_raw_parts(sql as *const u8, n_byte as usize);
        &all[..all.iter().position(|&b| b == 0).unwrap_or(all.len())]
    };
    let set_tail = |offset: usize| {
        if !pz_tail.is_null() {
            *pz_tail = sql.add(offset);
        }
    };
    let Ok(text) = std::str::from_utf8(bytes) else {
        set_tail(bytes.len());
        return d.fail(rc::ERROR, "SQL text is not valid UTF-8");
    };
    match conn.prepare(text) {
        Ok(None) => {
            set_tail(bytes.len());
            d.set_code(rc::OK);
            rc::OK
        }
        Ok(Some((st, tail))) => {
            let used = statement_end(text, tail);
            set_tail(used);
            let param_names = (1..=st.parameter_count())
                .map(|i| st.parameter_name(i).map(c_string))
                .collect();
            let inner = StmtInner {
                sql: c_string(&text[..used]),
                st,
                phase: Phase::Ready,
                error: None,
                texts: Vec::new(),
                names: Vec::new(),
                param_names,
                running: false,
                run_started: None,
                decltypes: None,
                status_base: [0; 2],
                column_values: Vec::new(),
                origins: None,
                null_value: None,
            };
            d.stmt_opened();
            *pp_stmt = Box::into_raw(Box::new(Stmt {
                db,
                inner: Mutex::new(inner),
            }));
            d.set_code(rc::OK);
            rc::OK
        }
        Err(e) => {
            set_tail(bytes.len());
            d.fail_with(&e)
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_prepare_v2(
    db: *mut Db,
    sql: *const c_char,
    n_byte: c_int,
    pp_stmt: *mut *mut Stmt,
    pz_tail: *mut *const c_char,
) -> c_int {
    guard(rc::INTERNAL, || prepare(db, sql, n_byte, pp_stmt, pz_tail))
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_step(p: *mut Stmt) -> c_int {
    guard(rc::INTERNAL, || {
        let Some(s) = stmt_ref(p) else {
            return rc::MISUSE;
        };
        let db = s.db();
        if CallbackScope::inside(s.db) {
            // db.rs invariant 5.
            return db.fail(
                rc::MISUSE,
                "parlite cannot run SQL on a connection inside its own callback",
            );
        }
        let (starting, readonly, sql) = {
            let mut inner = lock(&s.inner);
            if inner.phase == Phase::Halted {
                // SQLite resets a halted statement automatically (since 3.7.0); the run
                // was reported ended when it halted.
                inner.rewind(db);
            }
            (
                inner.phase == Phase::Ready,
                inner.st.readonly(),
                inner.sql.as_ptr(),
            )
        };
        if starting {
            // The text lives as long as the statement.
            db.trace(TRACE_STMT, p as *mut c_void, sql as *mut c_void);
        }
        // db.rs invariant 6.
        let go = if starting {
            db.run_starts()
        } else {
            !readonly || db.may_continue()
        };
        let mut inner = lock(&s.inner);
        inner.begin_run(db);
        inner.forget_texts();
        let result = if go {
            db.step(&mut inner.st)
        } else {
            Err(parlite::Error {
                code: rc::INTERRUPT,
                extended_code: rc::INTERRUPT,
                message: "interrupted".to_string(),
            })
        };
        let (code, ended) = match result {
            Ok(true) => {
                inner.phase = Phase::Row;
                db.set_code(rc::ROW);
                (rc::ROW, None)
            }
            Ok(false) => {
                inner.phase = Phase::Halted;
                db.set_code(rc::DONE);
                (rc::DONE, inner.end_run(db))
            }
            Err(e) => {
                inner.phase = Phase::Halted;
                let code = db.fail_with(&e);
                inner.error = Some(e);
                (code, inner.end_run(db))
            }
        };
        drop(inner);
        if code == rc::ROW {
            db.trace(TRACE_ROW, p as *mut c_void, ptr::null_mut());
        }
        trace_profile(db, p, ended);
        code
    })
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_reset(p: *mut Stmt) -> c_int {
    guard(rc::INTERNAL, || match stmt_ref(p) {
        None => rc::OK,
        Some(s) => {
            let (code, ended) = lock(&s.inner).reset(s.db());
            trace_profile(s.db(), p, ended);
            code
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_finalize(p: *mut Stmt) -> c_int {
    guard(rc::INTERNAL, || {
        if p.is_null() {
            return rc::OK;
        }
        let (code, ended) = lock(&(*p).inner).reset((*p).db());
        trace_profile((*p).db(), p, ended);
        let s = Box::from_raw(p);
        let db = s.db;
        drop(s);
        // SAFETY: the handle lives until its last statement is gone (db.rs invariant 4).
        if (*db).stmt_closed() {
            free(db);
        }
        code
    })
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_db_handle(p: *mut Stmt) -> *mut Db {
    guard(ptr::null_mut(), || {
        stmt_ref(p).map_or(ptr::null_mut(), |s| s.db)
    })
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_sql(p: *mut Stmt) -> *const c_char {
    guard(ptr::null(), || match stmt_ref(p) {
        None => ptr::null(),
        // Lives as long as the statement.
        Some(s) => lock(&s.inner).sql.as_ptr(),
    })
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_stmt_status(p: *mut Stmt, op: c_int, reset: c_int) -> c_int {
    // parlite counts runs and re-bindings after a schema change; the counters of SQLite's
    // bytecode engine (full-scan steps, sorts, automatic indexes, VM steps, Bloom filter
    // hits and misses, memory) have no counterpart and read 0 (README, C API).
    const REPREPARE: c_int = 5;
    const RUN: c_int = 6;
    guard(0, || {
        let Some(s) = stmt_ref(p) else {
            return 0;
        };
        let mut g = lock(&s.inner);
        let (slot, count) = match op {
            REPREPARE => (0, g.st.reprepares()),
            RUN => (1, g.st.runs()),
            _ => return 0,
        };
        let value = count.wrapping_sub(g.status_base[slot]);
        if reset != 0 {
            g.status_base[slot] = count;
        }
        value as c_int
    })
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_stmt_readonly(p: *mut Stmt) -> c_int {
    guard(0, || {
        stmt_ref(p).map_or(0, |s| lock(&s.inner).st.readonly() as c_int)
    })
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_stmt_busy(p: *mut Stmt) -> c_int {
    guard(0, || {
        stmt_ref(p).map_or(0, |s| (lock(&s.inner).phase == Phase::Row) as c_int)
    })
}

// ---- bind -------------------------------------------------------------------------------

/// Binds `value` to parameter `i` (1-based) when the statement is Ready (invariant 1).
unsafe fn bind(p: *mut Stmt, i: c_int, value: ValueRef<'_>) -> c_int {
    let Some(s) = stmt_ref(p) else {
        return rc::MISUSE;
    };
    let mut inner = lock(&s.inner);
    if inner.phase != Phase::Ready {
        s.db().set_code(rc::MISUSE);
        return rc::MISUSE;
    }
    if i < 1 || inner.st.bind_ref(i as usize, value).is_err() {
        s.db().set_code(rc::RANGE);
        return rc::RANGE;
    }
    rc::OK
}

/// Binds TEXT or BLOB bytes (copied: parlite keeps its own), then hands the caller's
/// buffer to its destructor, which SQLite calls even when the bind fails.
unsafe fn bind_bytes(
    p: *mut Stmt,
    i: c_int,
    data: *const c_void,
    n: Option<usize>,
    text: bool,
    destructor: Destructor,
) -> c_int {
    let code = if data.is_null() {
        bind(p, i, ValueRef::Null)
    } else {
        let bytes = match n {
            Some(n) => std::slice::from_raw_parts(data as *const u8, n),
            None => CStr::from_ptr(data as *const c_char).to_bytes(),
        };
        if text {
            // parlite's TEXT is UTF-8: invalid bytes become U+FFFD (README, C API).
            let s = String::from_utf8_lossy(bytes);
            bind(p, i, ValueRef::Text(&s))
        } else {
            bind(p, i, ValueRef::Blob(bytes))
        }
    };
    if destructor != SQLITE_STATIC
        && destructor != SQLITE_TRANSIENT
        && (code != rc::OK || !data.is_null())
    {
        // SAFETY: any other value is the application's `void (*)(void*)`.
        let f: unsafe extern "C" fn(*mut c_void) = std::mem::transmute(destructor);
        f(data as *mut c_void);
    }
    code
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_bind_text(
    p: *mut Stmt,
    i: c_int,
    data: *const c_char,
    n: c_int,
    destructor: Destructor,
) -> c_int {
    guard(rc::INTERNAL, || {
        bind_bytes(
            p,
            i,
            data as *const c_void,
            usize::try_from(n).ok(),
            true,
            destructor,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_bind_blob(
    p: *mut Stmt,
    i: c_int,
    data: *const c_void,
    n: c_int,
    destructor: Destructor,
) -> c_int {
    guard(rc::INTERNAL, || {
        // A negative length is undefined in SQLite (a blob has no terminator to stop at);
        // here it binds an empty blob.
        bind_bytes(
            p,
            i,
            data,
            Some(usize::try_from(n).unwrap_or(0)),
            false,
            destructor,
        )
    })
}

/// sqlite3_bind_*64's lengths past SQLite's default SQLITE_MAX_LENGTH: SQLITE_TOOBIG.
const MAX_LENGTH: u64 = 1_000_000_000;

/// A text encoding argument of the *64 text functions (sqlite3_bind_text64,
/// sqlite3_result_text64): SQLITE_UTF8 (1), SQLITE_UTF16LE (2), SQLITE_UTF16BE (3),
/// SQLITE_UTF16 (4, the machine's byte order).
pub(crate) enum TextEncoding {
    Utf8,
    Utf16 { big_endian: bool },
}

impl TextEncoding {
    /// None for any other value.
    pub(crate) fn of(code: u8) -> Option<TextEncoding> {
        match code {
            1 => Some(TextEncoding::Utf8),
            2 => Some(TextEncoding::Utf16 { big_endian: false }),
            3 => Some(TextEncoding::Utf16 { big_endian: true }),
            4 => Some(TextEncoding::Utf16 {
                big_endian: cfg!(target_endian = "big"),
            }),
            _ => None,
        }
    }
}

/// sqlite3_bind_text64: `n` bytes of text in `encoding` (a length that is negative as a
/// signed 64-bit number: up to the terminator, a zero byte or, for UTF-16, a zero pair).
/// UTF-16 is converted to UTF-8, parlite's only text encoding (invalid units become
/// U+FFFD, as invalid UTF-8 does).
#[no_mangle]
pub unsafe extern "C" fn sqlite3_bind_text64(
    p: *mut Stmt,
    i: c_int,
    data: *const c_char,
    n: u64,
    destructor: Destructor,
    encoding: u8,
) -> c_int {
    guard(rc::INTERNAL, || {
        let len = usize::try_from(n as i64).ok();
        if n as i64 >= 0 && n > MAX_LENGTH {
            return too_big(p, i, data as *const c_void, destructor);
        }
        match TextEncoding::of(encoding) {
            Some(TextEncoding::Utf8) => {
                bind_bytes(p, i, data as *const c_void, len, true, destructor)
            }
            Some(TextEncoding::Utf16 { big_endian }) => {
                bind_utf16(p, i, data as *const u8, len, big_endian, destructor)
            }
            None => release(data as *const c_void, destructor, rc::MISUSE),
        }
    })
}

/// sqlite3_bind_blob64: `n` bytes.
#[no_mangle]
pub unsafe extern "C" fn sqlite3_bind_blob64(
    p: *mut Stmt,
    i: c_int,
    data: *const c_void,
    n: u64,
    destructor: Destructor,
) -> c_int {
    guard(rc::INTERNAL, || {
        if n > MAX_LENGTH {
            return too_big(p, i, data, destructor);
        }
        bind_bytes(p, i, data, Some(n as usize), false, destructor)
    })
}

/// UTF-16 text (`n` bytes, an odd last byte ignored, or up to a zero pair) bound as UTF-8.
unsafe fn bind_utf16(
    p: *mut Stmt,
    i: c_int,
    data: *const u8,
    n: Option<usize>,
    big_endian: bool,
    destructor: Destructor,
) -> c_int {
    if data.is_null() {
        return bind_bytes(p, i, ptr::null(), None, true, destructor);
    }
    let text = utf16_to_string(data, n, big_endian);
    let code = bind(p, i, ValueRef::Text(&text));
    release(data as *const c_void, destructor, code)
}

/// UTF-16 text as UTF-8: `n` bytes (an odd last byte ignored), or up to the first zero
/// pair for None; invalid units become U+FFFD.
///
/// # Safety
/// `data` is readable for `n` bytes, or up to a zero pair.
pub(crate) unsafe fn utf16_to_string(
    data: *const u8,
    n: Option<usize>,
    big_endian: bool,
) -> String {
    let n = n.unwrap_or_else(|| {
        let mut k = 0;
        while *data.add(k) != 0 || *data.add(k + 1) != 0 {
            k += 2;
        }
        k
    });
    let bytes = std::slice::from_raw_parts(data, n & !1);
    let units: Vec<u16> = bytes
        .chunks_exact(2)
        .map(|u| match big_endian {
            true => u16::from_be_bytes([u[0], u[1]]),
            false => u16::from_le_bytes([u[0], u[1]]),
        })
        .collect();
    String::from_utf16_lossy(&units)
}

/// A value past SQLITE_MAX_LENGTH: as SQLite, the parameter is first unbound (NULL; a busy
/// statement or a bad index fails as any bind), then SQLITE_TOOBIG.
unsafe fn too_big(p: *mut Stmt, i: c_int, data: *const c_void, destructor: Destructor) -> c_int {
    let code = bind(p, i, ValueRef::Null);
    if code == rc::OK {
        if let Some(s) = stmt_ref(p) {
            s.db().set_code(rc::TOOBIG);
        }
        return release(data, destructor, rc::TOOBIG);
    }
    release(data, destructor, code)
}

/// Gives `data` to the application's destructor (not for SQLITE_STATIC/TRANSIENT) and
/// answers `code`: SQLite calls it whether or not the bind succeeded.
unsafe fn release(data: *const c_void, destructor: Destructor, code: c_int) -> c_int {
    if destructor != SQLITE_STATIC && destructor != SQLITE_TRANSIENT && !data.is_null() {
        // SAFETY: any other value is the application's `void (*)(void*)`.
        let f: unsafe extern "C" fn(*mut c_void) = std::mem::transmute(destructor);
        f(data as *mut c_void);
    }
    code
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_bind_int(p: *mut Stmt, i: c_int, v: c_int) -> c_int {
    guard(rc::INTERNAL, || bind(p, i, ValueRef::Integer(v as i64)))
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_bind_int64(p: *mut Stmt, i: c_int, v: i64) -> c_int {
    guard(rc::INTERNAL, || bind(p, i, ValueRef::Integer(v)))
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_bind_double(p: *mut Stmt, i: c_int, v: f64) -> c_int {
    guard(rc::INTERNAL, || {
        // NaN binds as NULL, as in SQLite.
        bind(
            p,
            i,
            if v.is_nan() {
                ValueRef::Null
            } else {
                ValueRef::Real(v)
            },
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_bind_null(p: *mut Stmt, i: c_int) -> c_int {
    guard(rc::INTERNAL, || bind(p, i, ValueRef::Null))
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_clear_bindings(p: *mut Stmt) -> c_int {
    guard(rc::INTERNAL, || {
        let Some(s) = stmt_ref(p) else {
            return rc::MISUSE;
        };
        lock(&s.inner).st.clear_bindings();
        rc::OK
    })
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_bind_parameter_count(p: *mut Stmt) -> c_int {
    guard(0, || {
        stmt_ref(p).map_or(0, |s| lock(&s.inner).st.parameter_count() as c_int)
    })
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_bind_parameter_name(p: *mut Stmt, i: c_int) -> *const c_char {
    guard(ptr::null(), || {
        let Some(s) = stmt_ref(p) else {
            return ptr::null();
        };
        let inner = lock(&s.inner);
        let slot = usize::try_from(i)
            .ok()
            .and_then(|i| inner.param_names.get(i.checked_sub(1)?));
        // Lives as long as the statement.
        slot.and_then(Option::as_ref)
            .map_or(ptr::null(), |n| n.as_ptr())
    })
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_bind_parameter_index(p: *mut Stmt, name: *const c_char) -> c_int {
    guard(0, || {
        let Some(s) = stmt_ref(p) else {
            return 0;
        };
        if name.is_null() {
            return 0;
        }
        let Ok(name) = CStr::from_ptr(name).to_str() else {
            return 0;
        };
        lock(&s.inner)
            .st
            .parameter_index(name)
            .map_or(0, |i| i as c_int)
    })
}

// ---- columns ----------------------------------------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn sqlite3_column_count(p: *mut Stmt) -> c_int {
    guard(0, || {
        stmt_ref(p).map_or(0, |s| lock(&s.inner).st.column_count() as c_int)
    })
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_data_count(p: *mut Stmt) -> c_int {
    guard(0, || {
        stmt_ref(p).map_or(0, |s| {
            let inner = lock(&s.inner);
            if inner.phase == Phase::Row {
                inner.st.column_count() as c_int
            } else {
                0
            }
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_column_name(p: *mut Stmt, i: c_int) -> *const c_char {
    guard(ptr::null(), || {
        let Some(s) = stmt_ref(p) else {
            return ptr::null();
        };
        let mut inner = lock(&s.inner);
        let count = inner.st.column_count();
        let Some(i) = usize::try_from(i).ok().filter(|&i| i < count) else {
            return ptr::null();
        };
        if inner.names.len() < count {
            inner.names.resize(count, None);
        }
        // The first step re-names the columns when the schema changed since prepare; a
        // name is rebuilt only then, so earlier pointers stay valid otherwise (SQLite keeps
        // them until finalize or such a re-prepare).
        let current = inner.st.column_name(i);
        if inner.names[i]
            .as_ref()
            .is_none_or(|n| n.as_bytes() != current.as_bytes())
        {
            inner.names[i] = Some(c_string(current));
        }
        inner.names[i].as_ref().map_or(ptr::null(), |n| n.as_ptr())
    })
}

/// Reads column `i` of statement `p`'s current row through `read` (`on_none` for a NULL
/// handle or a panic): the accessors that only look at the value.
unsafe fn read_column<R: Copy>(
    p: *mut Stmt,
    i: c_int,
    on_none: R,
    read: impl FnOnce(Option<ValueRef<'_>>) -> R,
) -> R {
    guard(on_none, || {
        let Some(s) = stmt_ref(p) else {
            return on_none;
        };
        let inner = lock(&s.inner);
        read(inner.value(s.db(), i))
    })
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_column_type(p: *mut Stmt, i: c_int) -> c_int {
    read_column(p, i, SQLITE_NULL, |v| v.map_or(SQLITE_NULL, type_code))
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_column_int64(p: *mut Stmt, i: c_int) -> i64 {
    read_column(p, i, 0, |v| v.map_or(0, int64_of))
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_column_int(p: *mut Stmt, i: c_int) -> c_int {
    // The low 32 bits, as SQLite's C cast.
    sqlite3_column_int64(p, i) as c_int
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_column_double(p: *mut Stmt, i: c_int) -> f64 {
    read_column(p, i, 0.0, |v| v.map_or(0.0, double_of))
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_column_text(p: *mut Stmt, i: c_int) -> *const u8 {
    guard(ptr::null(), || {
        let Some(s) = stmt_ref(p) else {
            return ptr::null();
        };
        let mut inner = lock(&s.inner);
        // Lives until the next step or reset (invariant 4).
        inner.text(s.db(), i).map_or(ptr::null(), |t| t.as_ptr())
    })
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_column_blob(p: *mut Stmt, i: c_int) -> *const c_void {
    guard(ptr::null(), || {
        let Some(s) = stmt_ref(p) else {
            return ptr::null();
        };
        let mut inner = lock(&s.inner);
        let db = s.db();
        // Zero bytes read as NULL, as in SQLite.
        match inner.value(db, i) {
            None | Some(ValueRef::Null) => ptr::null(),
            Some(ValueRef::Blob([])) => ptr::null(),
            // After sqlite3_column_text SQLite hands out the same (converted) bytes.
            Some(ValueRef::Blob(b)) => match inner.texts.get(i as usize) {
                Some(t) if t.valid => t.bytes.as_ptr() as *const c_void,
                _ => b.as_ptr() as *const c_void,
            },
            Some(_) => match inner.text(db, i) {
                Some(t) if t.len() > 1 => t.as_ptr() as *const c_void,
                _ => ptr::null(),
            },
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_column_bytes(p: *mut Stmt, i: c_int) -> c_int {
    guard(0, || {
        let Some(s) = stmt_ref(p) else {
            return 0;
        };
        let mut inner = lock(&s.inner);
        let db = s.db();
        match inner.value(db, i) {
            None | Some(ValueRef::Null) => 0,
            Some(ValueRef::Text(t)) => t.len() as c_int,
            Some(ValueRef::Blob(b)) => b.len() as c_int,
            // A number's length is that of its text form, which SQLite builds and keeps.
            Some(_) => inner.text(db, i).map_or(0, |t| t.len() as c_int - 1),
        }
    })
}

// ---- expanded SQL, declared types ---------------------------------------------------------

/// Appends a bound value as an SQL literal, as sqlite3VdbeExpandSql writes it.
fn push_literal(out: &mut String, v: Option<ValueRef<'_>>) {
    use std::fmt::Write;
    match v.unwrap_or(ValueRef::Null) {
        ValueRef::Null => out.push_str("NULL"),
        // Writing into a String cannot fail.
        ValueRef::Integer(i) => {
            let _ = write!(out, "{i}");
        }
        ValueRef::Real(r) => out.push_str(&num::real_to_text(r)),
        ValueRef::Text(t) => {
            out.push('\'');
            out.push_str(&t.replace('\'', "''"));
            out.push('\'');
        }
        ValueRef::Blob(b) => {
            out.push_str("x'");
            for byte in b {
                let _ = write!(out, "{byte:02x}");
            }
            out.push('\'');
        }
    }
}

/// The statement's SQL with each parameter replaced by the literal of its bound value
/// (sqlite3VdbeExpandSql): `?` takes the number after the highest one so far, `?NNN` its
/// number, a named parameter its index.
fn expand_sql(sql: &str, st: &Statement) -> String {
    use parlite_sql::parse::lexer::{tokenize, Tok};
    let mut out = String::with_capacity(sql.len());
    let mut copied = 0;
    let mut next_index = 1;
    for t in tokenize(sql) {
        let Tok::Variable(name) = t.tok else {
            continue;
        };
        out.push_str(&sql[copied..t.start]);
        copied = t.end;
        let index = match name.strip_prefix('?') {
            Some("") => next_index,
            Some(n) => n.parse().unwrap_or(0),
            None => st.parameter_index(name).unwrap_or(0),
        };
        next_index = next_index.max(index + 1);
        push_literal(&mut out, st.parameter_value(index));
    }
    out.push_str(&sql[copied..]);
    out
}

/// The SQL with bound values written in, in memory from sqlite3_malloc for the caller
/// to sqlite3_free.
#[no_mangle]
pub unsafe extern "C" fn sqlite3_expanded_sql(p: *mut Stmt) -> *mut c_char {
    guard(ptr::null_mut(), || {
        let Some(s) = stmt_ref(p) else {
            return ptr::null_mut();
        };
        let inner = lock(&s.inner);
        let sql = inner.sql.to_string_lossy();
        let expanded = c_string(&expand_sql(&sql, &inner.st));
        crate::misc::malloc_c_string(&expanded)
    })
}

/// The declared type of a result column read straight from a table column, NULL for any
/// other (an expression) and out of range.
#[no_mangle]
pub unsafe extern "C" fn sqlite3_column_decltype(p: *mut Stmt, i: c_int) -> *const c_char {
    guard(ptr::null(), || {
        let Some(s) = stmt_ref(p) else {
            return ptr::null();
        };
        let mut inner = lock(&s.inner);
        let Some(i) = usize::try_from(i).ok() else {
            return ptr::null();
        };
        if inner.decltypes.is_none() {
            let types = (0..inner.st.column_count())
                .map(|c| inner.st.column_decltype(c).map(|t| c_string(&t)))
                .collect();
            inner.decltypes = Some(types);
        }
        // Lives as long as the statement.
        inner
            .decltypes
            .as_ref()
            .and_then(|t| t.get(i))
            .and_then(Option::as_ref)
            .map_or(ptr::null(), |t| t.as_ptr())
    })
}

/// sqlite3_bind_value: binds a copy of `v` (NULL pointer: NULL).
#[no_mangle]
pub unsafe extern "C" fn sqlite3_bind_value(p: *mut Stmt, i: c_int, v: *const CValue) -> c_int {
    guard(rc::INTERNAL, || match v.as_ref() {
        Some(v) => bind(p, i, v.value_ref()),
        None => bind(p, i, ValueRef::Null),
    })
}

/// sqlite3_column_value: column `i` of the current row as a value, valid until the next
/// step, reset or finalize; past the last column or without a row, a NULL value (and
/// SQLITE_RANGE recorded), as SQLite.
#[no_mangle]
pub unsafe extern "C" fn sqlite3_column_value(p: *mut Stmt, i: c_int) -> *mut CValue {
    guard(ptr::null_mut(), || {
        let Some(s) = stmt_ref(p) else {
            return ptr::null_mut();
        };
        let mut inner = lock(&s.inner);
        let Some(v) = inner.value(s.db(), i).map(CValue::owned) else {
            let null = inner
                .null_value
                .get_or_insert_with(|| Box::new(CValue::owned(ValueRef::Null)));
            return &mut **null as *mut CValue;
        };
        let i = i as usize;
        if inner.column_values.len() <= i {
            inner.column_values.resize_with(i + 1, || None);
        }
        let slot = inner.column_values[i].insert(Box::new(v));
        &mut **slot as *mut CValue
    })
}

/// sqlite3_stmt_isexplain: 1 for EXPLAIN, 2 for EXPLAIN QUERY PLAN, 0 otherwise.
#[no_mangle]
pub unsafe extern "C" fn sqlite3_stmt_isexplain(p: *mut Stmt) -> c_int {
    guard(0, || {
        stmt_ref(p).map_or(0, |s| c_int::from(lock(&s.inner).st.explain_kind()))
    })
}

/// Part `part` (0 database, 1 table, 2 column) of the table column result column `i` reads
/// unchanged; NULL for an expression (SQLITE_ENABLE_COLUMN_METADATA's functions). The text
/// lives as long as the statement.
unsafe fn column_origin_part(p: *mut Stmt, i: c_int, part: usize) -> *const c_char {
    guard(ptr::null(), || {
        let Some(s) = stmt_ref(p) else {
            return ptr::null();
        };
        let Ok(i) = usize::try_from(i) else {
            return ptr::null();
        };
        let mut inner = lock(&s.inner);
        if inner.origins.is_none() {
            let origins = (0..inner.st.column_count())
                .map(|c| inner.st.column_origin(c).map(|o| o.map(|n| c_string(&n))))
                .collect();
            inner.origins = Some(origins);
        }
        inner
            .origins
            .as_ref()
            .and_then(|o| o.get(i))
            .and_then(Option::as_ref)
            .map_or(ptr::null(), |o| o[part].as_ptr())
    })
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_column_database_name(p: *mut Stmt, i: c_int) -> *const c_char {
    column_origin_part(p, i, 0)
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_column_table_name(p: *mut Stmt, i: c_int) -> *const c_char {
    column_origin_part(p, i, 1)
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_column_origin_name(p: *mut Stmt, i: c_int) -> *const c_char {
    column_origin_part(p, i, 2)
}
