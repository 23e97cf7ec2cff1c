//! Application-defined SQL functions: `sqlite3_create_function_v2` and its kin over
//! `parlite::Connection::create_function`, the `sqlite3_value_*` readers of a call's
//! arguments and the `sqlite3_result_*` writers of its result.
//!
//! Invariants:
//! 1. The application's pointer (`pApp`) and its `xDestroy` live in one [`CFunction`],
//!    shared by the registration and every accumulator made from it: `xDestroy` runs
//!    once, when the last of them goes (the definition replaced or deleted, or the
//!    connection closed, and no call running it). A registration that fails calls it at
//!    once, as SQLite's `sqlite3_create_function_v2` does.
//! 2. A call runs with its connection marked busy on this thread (`db.rs`,
//!    `CallbackScope`): the connection is locked for the statement running the call, so
//!    SQL on it from inside the callback fails with SQLITE_MISUSE instead of deadlocking.
//! 3. A `sqlite3_context` and the `sqlite3_value`s of a call live only during the call;
//!    `sqlite3_aggregate_context`'s memory lives from its first request in a group until
//!    the group's `xFinal` returns, and is zeroed when allocated. An accumulator dropped
//!    without being finalized (the statement failed or was reset) still gets its `xFinal`,
//!    as SQLite's `sqlite3VdbeMemFinalize` does, so the application can release what the
//!    memory holds.
//! 4. Once a call reports an error (`sqlite3_result_error*`) it stays one; as in SQLite,
//!    the message is the text of the call's value, which a later `sqlite3_result_*`
//!    replaces.
//! 5. Defining or deleting a function leaves the connection's error state alone when it
//!    succeeds or its arguments are misused (SQLite's sqlite3ApiExit).

use crate::db::{db_ref, CallbackScope, Db};
use crate::misc::errstr;
use crate::stmt::push_text_form;
use crate::{guard, rc};
use parlite::{Aggregate, UserAggregate, UserCompare, UserImpl, UserScalar, ValueRef};
use parlite_sql::value::{SqlError, Value};
use std::cell::{Cell, OnceCell};
use std::ffi::{c_char, c_int, c_void, CStr};
use std::ptr;
use std::sync::Arc;

type XFunc = unsafe extern "C" fn(*mut Context, c_int, *mut *mut CValue);
type XFinal = unsafe extern "C" fn(*mut Context);
type XDestroy = unsafe extern "C" fn(*mut c_void);
type XCompare =
    unsafe extern "C" fn(*mut c_void, c_int, *const c_void, c_int, *const c_void) -> c_int;

/// eTextRep's SQLITE_DETERMINISTIC flag.
const SQLITE_DETERMINISTIC: c_int = 0x800;
/// The destructor arguments of sqlite3_result_text/blob (stmt.rs has the same for bind).
const SQLITE_STATIC: isize = 0;
const SQLITE_TRANSIENT: isize = -1;

/// What C calls `sqlite3_value`: one argument of a call, with its text form built on the
/// first request (invariant 3).
pub struct CValue {
    v: Value,
    text: OnceCell<Vec<u8>>,
}

impl CValue {
    pub(crate) fn value_ref(&self) -> ValueRef<'_> {
        ValueRef::from(&self.v)
    }

    /// A value of its own, copied from `v` (sqlite3_column_value, sqlite3_value_dup).
    pub(crate) fn owned(v: ValueRef<'_>) -> CValue {
        let v = match v {
            ValueRef::Null => Value::Null,
            ValueRef::Integer(i) => Value::Integer(i),
            ValueRef::Real(r) => Value::real(r),
            ValueRef::Text(t) => Value::text(t),
            ValueRef::Blob(b) => Value::blob(b),
        };
        CValue {
            v,
            text: OnceCell::new(),
        }
    }

    /// The text form, NUL-terminated; None for NULL.
    fn text(&self) -> Option<&[u8]> {
        if self.v.is_null() {
            return None;
        }
        Some(self.text.get_or_init(|| {
            let mut b = Vec::new();
            push_text_form(self.value_ref(), &mut b);
            b.push(0);
            b
        }))
    }
}

/// One registration: the application's callbacks and pointer (invariant 1).
struct CFunction {
    name: String,
    x_func: Option<XFunc>,
    x_step: Option<XFunc>,
    x_final: Option<XFinal>,
    /// A window function's (`sqlite3_create_window_function`).
    x_value: Option<XFinal>,
    x_inverse: Option<XFunc>,
    app: *mut c_void,
    destroy: Option<XDestroy>,
    db: *mut Db,
}

// SAFETY: the library is serialized (sqlite3_threadsafe() == 1): SQLite calls an
// application's function on whichever thread steps the statement, and so does this.
unsafe impl Send for CFunction {}
unsafe impl Sync for CFunction {}

impl Drop for CFunction {
    fn drop(&mut self) {
        if let Some(destroy) = self.destroy {
            // SAFETY: the application's destructor for its own pointer (invariant 1).
            unsafe { destroy(self.app) }
        }
    }
}

/// What C calls `sqlite3_context`: one call's result and, for an aggregate, its group's
/// memory (invariant 3).
pub struct Context {
    function: *const CFunction,
    /// The result, or with `error` the message (SQLite keeps both in one Mem).
    value: Value,
    /// The error code, once the call failed (invariant 4).
    error: Option<c_int>,
    /// The group's `sqlite3_aggregate_context` slot; NULL in a scalar call.
    agg: *mut *mut c_void,
}

impl Context {
    /// The call's value, or its error: the code, with the value's text as the message
    /// (a value set after the error replaces the message, as in SQLite).
    fn result(self) -> Result<Value, SqlError> {
        match self.error {
            Some(code) => {
                let mut message = Vec::new();
                push_text_form(ValueRef::from(&self.value), &mut message);
                Err(SqlError::with_code(
                    code,
                    String::from_utf8_lossy(&message).into_owned(),
                ))
            }
            None => Ok(self.value),
        }
    }
}

impl CFunction {
    /// Runs `x` (xFunc or xStep) on `args`; `agg` is the group's memory slot.
    fn call(&self, x: XFunc, args: &[Value], agg: *mut *mut c_void) -> Result<Value, SqlError> {
        let mut values: Vec<CValue> = args
            .iter()
            .map(|v| CValue {
                v: v.clone(),
                text: OnceCell::new(),
            })
            .collect();
        let mut argv: Vec<*mut CValue> = values.iter_mut().map(|v| v as *mut CValue).collect();
        let mut ctx = self.context(agg);
        let _scope = CallbackScope::enter(self.db);
        // SAFETY: the application's callback, with a context and arguments that live for
        // the call (invariant 3).
        unsafe { x(&mut ctx, argv.len() as c_int, argv.as_mut_ptr()) };
        ctx.result()
    }

    /// Runs xValue on the group's memory, which stays the group's.
    fn value(&self, x: XFinal, agg: *mut *mut c_void) -> Result<Value, SqlError> {
        let mut ctx = self.context(agg);
        let _scope = CallbackScope::enter(self.db);
        // SAFETY: as in `call`.
        unsafe { x(&mut ctx) };
        ctx.result()
    }

    /// Runs xFinal on the group's memory, then frees it.
    fn finish(&self, agg: &mut *mut c_void) -> Result<Value, SqlError> {
        let mut ctx = self.context(agg);
        if let Some(x_final) = self.x_final {
            let _scope = CallbackScope::enter(self.db);
            // SAFETY: as in `call`.
            unsafe { x_final(&mut ctx) };
        }
        // SAFETY: NULL or what `sqlite3_aggregate_context` allocated with calloc.
        unsafe { libc::free(*agg) };
        *agg = ptr::null_mut();
        ctx.result()
    }

    fn context(&self, agg: *mut *mut c_void) -> Context {
        Context {
            function: self,
            value: Value::Null,
            error: None,
            agg,
        }
    }
}

struct CScalar(Arc<CFunction>);

impl UserScalar for CScalar {
    fn call(&self, args: &[Value]) -> parlite_sql::value::Result<Value> {
        match self.0.x_func {
            Some(x) => self.0.call(x, args, ptr::null_mut()),
            None => Ok(Value::Null),
        }
    }
}

struct CAggregate(Arc<CFunction>);

impl UserAggregate for CAggregate {
    fn accumulator(&self) -> Box<dyn Aggregate> {
        Box::new(CAccumulator {
            function: self.0.clone(),
            mem: Cell::new(ptr::null_mut()),
            finished: false,
        })
    }
}

/// One group of an application's aggregate (or one window frame's accumulator). `mem` is
/// the group's `sqlite3_aggregate_context`, which xValue may allocate too (a frame read
/// before any row entered it), hence a `Cell`.
struct CAccumulator {
    function: Arc<CFunction>,
    mem: Cell<*mut c_void>,
    finished: bool,
}

// SAFETY: as CFunction's; `mem` belongs to this group alone.
unsafe impl Send for CAccumulator {}

impl Aggregate for CAccumulator {
    fn step(&mut self, args: &[Value]) -> parlite_sql::value::Result<()> {
        match self.function.x_step {
            Some(x) => self.function.call(x, args, self.mem.as_ptr()).map(drop),
            None => Ok(()),
        }
    }

    fn finalize(&mut self) -> parlite_sql::value::Result<Value> {
        self.finished = true;
        self.function.finish(self.mem.get_mut())
    }

    fn value(&self) -> parlite_sql::value::Result<Value> {
        match self.function.x_value {
            Some(x) => self.function.value(x, self.mem.as_ptr()),
            // The binder refuses aggregates without xValue as window functions; this is
            // the same answer should one get here.
            None => Err(SqlError::msg(format!(
                "{}() may not be used as a window function",
                self.function.name
            ))),
        }
    }

    fn inverse(&mut self, args: &[Value]) -> parlite_sql::value::Result<()> {
        match self.function.x_inverse {
            Some(x) => self.function.call(x, args, self.mem.as_ptr()).map(drop),
            None => Err(SqlError::msg(format!(
                "{}() may not be used as a window function",
                self.function.name
            ))),
        }
    }
}

impl Drop for CAccumulator {
    fn drop(&mut self) {
        if !self.finished {
            // Invariant 3: the application releases what the group holds.
            let _ = self.function.finish(self.mem.get_mut());
        }
    }
}

/// sqlite3CreateFunc's argument checks.
fn valid_definition(name: &[u8], n_arg: c_int, x_func: bool, x_step: bool, x_final: bool) -> bool {
    let shape_ok = if x_func {
        !x_step && !x_final
    } else {
        x_step == x_final
    };
    shape_ok && (-1..=1000).contains(&n_arg) && !name.is_empty() && name.len() <= 255
}

#[allow(clippy::too_many_arguments)]
unsafe fn create_function(
    db: *mut Db,
    name: *const c_char,
    n_arg: c_int,
    text_rep: c_int,
    app: *mut c_void,
    x_func: Option<XFunc>,
    x_step: Option<XFunc>,
    x_final: Option<XFinal>,
    destroy: Option<XDestroy>,
) -> c_int {
    let Some(d) = db_ref(db) else {
        return rc::MISUSE;
    };
    // Dropped on every failure below, and after a deletion: xDestroy runs then, as in
    // SQLite (invariant 1).
    let mut function = CFunction {
        name: String::new(),
        x_func,
        x_step,
        x_final,
        x_value: None,
        x_inverse: None,
        app,
        destroy,
        db,
    };
    if name.is_null() {
        return rc::MISUSE;
    }
    let name_bytes = CStr::from_ptr(name).to_bytes();
    if !valid_definition(
        name_bytes,
        n_arg,
        x_func.is_some(),
        x_step.is_some(),
        x_final.is_some(),
    ) {
        return rc::MISUSE;
    }
    let Some(conn) = d.conn() else {
        return rc::MISUSE;
    };
    function.name = String::from_utf8_lossy(name_bytes).into_owned();
    let n_args = usize::try_from(n_arg).ok();
    let deterministic = text_rep & SQLITE_DETERMINISTIC != 0;
    let name = function.name.clone();
    let imp = if x_func.is_some() {
        Some(UserImpl::Scalar(Arc::new(CScalar(Arc::new(function)))))
    } else if x_step.is_some() {
        Some(UserImpl::Aggregate(Arc::new(CAggregate(Arc::new(
            function,
        )))))
    } else {
        None
    };
    match conn.create_function(&name, n_args, deterministic, imp) {
        Ok(()) => rc::OK,
        Err(e) => d.fail_with(&e),
    }
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_create_function_v2(
    db: *mut Db,
    name: *const c_char,
    n_arg: c_int,
    text_rep: c_int,
    app: *mut c_void,
    x_func: Option<XFunc>,
    x_step: Option<XFunc>,
    x_final: Option<XFinal>,
    destroy: Option<XDestroy>,
) -> c_int {
    guard(rc::INTERNAL, || {
        create_function(
            db, name, n_arg, text_rep, app, x_func, x_step, x_final, destroy,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_create_function(
    db: *mut Db,
    name: *const c_char,
    n_arg: c_int,
    text_rep: c_int,
    app: *mut c_void,
    x_func: Option<XFunc>,
    x_step: Option<XFunc>,
    x_final: Option<XFinal>,
) -> c_int {
    guard(rc::INTERNAL, || {
        create_function(
            db, name, n_arg, text_rep, app, x_func, x_step, x_final, None,
        )
    })
}

/// `sqlite3_create_window_function`: an aggregate (xStep, xFinal) that also gives the
/// current frame's value (xValue) and takes the oldest row back out (xInverse). As in
/// SQLite (sqlite3CreateFunc), xValue and xInverse come both or neither: with neither it
/// is a plain aggregate, refused with OVER; all four NULL deletes the definition.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn sqlite3_create_window_function(
    db: *mut Db,
    name: *const c_char,
    n_arg: c_int,
    text_rep: c_int,
    app: *mut c_void,
    x_step: Option<XFunc>,
    x_final: Option<XFinal>,
    x_value: Option<XFinal>,
    x_inverse: Option<XFunc>,
    destroy: Option<XDestroy>,
) -> c_int {
    guard(rc::INTERNAL, || {
        if x_value.is_some() != x_inverse.is_some() {
            return rc::MISUSE;
        }
        if x_value.is_none() {
            return create_function(
                db, name, n_arg, text_rep, app, None, x_step, x_final, destroy,
            );
        }
        let Some(d) = db_ref(db) else {
            return rc::MISUSE;
        };
        if name.is_null() {
            return rc::MISUSE;
        }
        let name_bytes = CStr::from_ptr(name).to_bytes();
        // Dropped on failure: xDestroy is not called then, as SQLite's failing
        // sqlite3_create_window_function (the argument checks come before it takes
        // ownership).
        if !valid_definition(
            name_bytes,
            n_arg,
            false,
            x_step.is_some(),
            x_final.is_some(),
        ) || x_step.is_none()
        {
            return rc::MISUSE;
        }
        let Some(conn) = d.conn() else {
            return rc::MISUSE;
        };
        let function = CFunction {
            name: String::from_utf8_lossy(name_bytes).into_owned(),
            x_func: None,
            x_step,
            x_final,
            x_value,
            x_inverse,
            app,
            destroy,
            db,
        };
        let name = function.name.clone();
        let imp = Arc::new(CAggregate(Arc::new(function)));
        let deterministic = text_rep & SQLITE_DETERMINISTIC != 0;
        match conn.create_window_function(
            &name,
            usize::try_from(n_arg).ok(),
            deterministic,
            Some(imp),
        ) {
            Ok(()) => rc::OK,
            Err(e) => d.fail_with(&e),
        }
    })
}

/// sqlite3_create_collation's eTextRep: the encodings a comparison's arguments come in.
const SQLITE_UTF8: c_int = 1;
const SQLITE_UTF16LE: c_int = 2;
const SQLITE_UTF16BE: c_int = 3;
const SQLITE_UTF16: c_int = 4;
const SQLITE_UTF16_ALIGNED: c_int = 8;

/// One collation registration: the application's comparison, its pointer and `xDestroy`,
/// which runs once, when the definition is replaced or deleted or the connection closes
/// (and no comparison runs it), as SQLite's `sqlite3_create_collation_v2`.
struct CCollation {
    compare: XCompare,
    arg: *mut c_void,
    destroy: Option<XDestroy>,
    /// The encoding the application asked for: UTF-8, or UTF-16 in a byte order.
    utf16: Option<bool>,
    db: *mut Db,
}

// SAFETY: as CFunction's: SQLite calls a collation on whichever thread runs the statement.
unsafe impl Send for CCollation {}
unsafe impl Sync for CCollation {}

impl Drop for CCollation {
    fn drop(&mut self) {
        if let Some(destroy) = self.destroy {
            // SAFETY: the application's destructor for its own pointer.
            unsafe { destroy(self.arg) }
        }
    }
}

impl CCollation {
    fn compare(&self, a: &[u8], b: &[u8]) -> std::cmp::Ordering {
        let _scope = CallbackScope::enter(self.db);
        let r = match self.utf16 {
            None => {
                // SAFETY: the application's comparison on two texts that outlive the call.
                unsafe {
                    (self.compare)(
                        self.arg,
                        a.len() as c_int,
                        a.as_ptr().cast(),
                        b.len() as c_int,
                        b.as_ptr().cast(),
                    )
                }
            }
            Some(big_endian) => {
                let (a, b) = (utf16(a, big_endian), utf16(b, big_endian));
                // SAFETY: as above.
                unsafe {
                    (self.compare)(
                        self.arg,
                        a.len() as c_int,
                        a.as_ptr().cast(),
                        b.len() as c_int,
                        b.as_ptr().cast(),
                    )
                }
            }
        };
        r.cmp(&0)
    }
}

/// A text's bytes in UTF-16 of the given byte order.
fn utf16(text: &[u8], big_endian: bool) -> Vec<u8> {
    String::from_utf8_lossy(text)
        .encode_utf16()
        .flat_map(|u| match big_endian {
            true => u.to_be_bytes(),
            false => u.to_le_bytes(),
        })
        .collect()
}

/// sqlite3_create_collation_v2: defines (or, xCompare NULL, deletes) `name` over
/// `parlite::Connection::define_collation`. A failed call does not run xDestroy; a
/// deletion runs the new registration's at once (there is nothing to keep it for).
unsafe fn create_collation(
    db: *mut Db,
    name: *const c_char,
    text_rep: c_int,
    arg: *mut c_void,
    compare: Option<XCompare>,
    destroy: Option<XDestroy>,
) -> c_int {
    let Some(d) = db_ref(db) else {
        return rc::MISUSE;
    };
    if name.is_null() {
        return rc::MISUSE;
    }
    let utf16 = match text_rep & !SQLITE_UTF16_ALIGNED {
        SQLITE_UTF8 => None,
        SQLITE_UTF16LE => Some(false),
        SQLITE_UTF16BE => Some(true),
        SQLITE_UTF16 => Some(cfg!(target_endian = "big")),
        _ => return rc::MISUSE,
    };
    let Some(conn) = d.conn() else {
        return rc::MISUSE;
    };
    let name = String::from_utf8_lossy(CStr::from_ptr(name).to_bytes()).into_owned();
    let imp = compare.map(|compare| {
        let c = CCollation {
            compare,
            arg,
            destroy,
            utf16,
            db,
        };
        UserCompare::Bytes(Arc::new(move |a: &[u8], b: &[u8]| c.compare(a, b)))
    });
    let deleting = imp.is_none();
    match conn.define_collation(&name, imp) {
        Ok(()) => {
            if let (true, Some(destroy)) = (deleting, destroy) {
                destroy(arg);
            }
            // SQLite's createCollation ends with sqlite3Error(db, SQLITE_OK).
            d.set_code(rc::OK);
            rc::OK
        }
        Err(e) => d.fail_with(&e),
    }
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_create_collation_v2(
    db: *mut Db,
    name: *const c_char,
    text_rep: c_int,
    arg: *mut c_void,
    compare: Option<XCompare>,
    destroy: Option<XDestroy>,
) -> c_int {
    guard(rc::INTERNAL, || {
        create_collation(db, name, text_rep, arg, compare, destroy)
    })
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_create_collation(
    db: *mut Db,
    name: *const c_char,
    text_rep: c_int,
    arg: *mut c_void,
    compare: Option<XCompare>,
) -> c_int {
    guard(rc::INTERNAL, || {
        create_collation(db, name, text_rep, arg, compare, None)
    })
}

type XNeeded = unsafe extern "C" fn(*mut c_void, *mut Db, c_int, *const c_char);

/// What `sqlite3_collation_needed` registers: called with the name when a statement
/// names a collation the connection lacks, before `no such collation sequence` (SQLite's
/// callCollNeeded); it may define the collation with `sqlite3_create_collation`.
struct CNeeded {
    callback: XNeeded,
    arg: *mut c_void,
    db: *mut Db,
}

// SAFETY: as CFunction's.
unsafe impl Send for CNeeded {}
unsafe impl Sync for CNeeded {}

impl CNeeded {
    fn call(&self, name: &str) {
        let Ok(name) = std::ffi::CString::new(name) else {
            return;
        };
        // SAFETY: the application's callback and argument; the name lives for the call.
        // No CallbackScope: the callback is meant to define the collation on this
        // connection (the statement being prepared holds no lock that needs).
        unsafe { (self.callback)(self.arg, self.db, SQLITE_UTF8, name.as_ptr()) }
    }
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_collation_needed(
    db: *mut Db,
    arg: *mut c_void,
    callback: Option<XNeeded>,
) -> c_int {
    guard(rc::INTERNAL, || {
        let Some(d) = db_ref(db) else {
            return rc::MISUSE;
        };
        let Some(conn) = d.conn() else {
            return rc::MISUSE;
        };
        let hook = callback.map(|callback| {
            let n = CNeeded { callback, arg, db };
            Arc::new(move |name: &str| n.call(name)) as Arc<parlite_sql::collation::user::NeededFn>
        });
        conn.set_collation_needed(hook);
        rc::OK
    })
}

// ---- the call's context ------------------------------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn sqlite3_user_data(ctx: *mut Context) -> *mut c_void {
    guard(ptr::null_mut(), || match ctx.as_ref() {
        Some(c) => (*c.function).app,
        None => ptr::null_mut(),
    })
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_context_db_handle(ctx: *mut Context) -> *mut Db {
    guard(ptr::null_mut(), || match ctx.as_ref() {
        Some(c) => (*c.function).db,
        None => ptr::null_mut(),
    })
}

/// The group's memory: `n` zeroed bytes on the first request with `n` > 0, the same
/// memory afterwards; NULL before that (or `n` <= 0 then) and in a scalar call.
#[no_mangle]
pub unsafe extern "C" fn sqlite3_aggregate_context(ctx: *mut Context, n: c_int) -> *mut c_void {
    guard(ptr::null_mut(), || {
        let Some(c) = ctx.as_ref() else {
            return ptr::null_mut();
        };
        if c.agg.is_null() {
            return ptr::null_mut();
        }
        if (*c.agg).is_null() && n > 0 {
            *c.agg = libc::calloc(1, n as usize);
        }
        *c.agg
    })
}

// ---- sqlite3_value -----------------------------------------------------------------------

/// Reads argument `v` through `read` (`none` for NULL).
unsafe fn read_value<R: Copy>(v: *mut CValue, none: R, read: impl FnOnce(&CValue) -> R) -> R {
    guard(none, || match v.as_ref() {
        Some(v) => read(v),
        None => none,
    })
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_value_type(v: *mut CValue) -> c_int {
    read_value(v, 5, |v| crate::stmt::type_code(v.value_ref()))
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_value_int64(v: *mut CValue) -> i64 {
    read_value(v, 0, |v| crate::stmt::int64_of(v.value_ref()))
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_value_int(v: *mut CValue) -> c_int {
    sqlite3_value_int64(v) as c_int
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_value_double(v: *mut CValue) -> f64 {
    read_value(v, 0.0, |v| crate::stmt::double_of(v.value_ref()))
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_value_text(v: *mut CValue) -> *const u8 {
    read_value(v, ptr::null(), |v| {
        v.text().map_or(ptr::null(), |t| t.as_ptr())
    })
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_value_blob(v: *mut CValue) -> *const c_void {
    read_value(v, ptr::null(), |v| match &v.v {
        // Zero bytes read as NULL, as in SQLite.
        Value::Blob(b) if b.is_empty() => ptr::null(),
        Value::Blob(b) => b.as_ptr() as *const c_void,
        _ => match v.text() {
            Some(t) if t.len() > 1 => t.as_ptr() as *const c_void,
            _ => ptr::null(),
        },
    })
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_value_bytes(v: *mut CValue) -> c_int {
    read_value(v, 0, |v| match &v.v {
        Value::Null => 0,
        Value::Blob(b) => b.len() as c_int,
        Value::Text(t) => t.len() as c_int,
        _ => v.text().map_or(0, |t| t.len() as c_int - 1),
    })
}

// ---- sqlite3_result ----------------------------------------------------------------------

/// Sets the call's value unless it already failed (invariant 4).
unsafe fn set_result(ctx: *mut Context, value: Value) {
    guard((), || {
        if let Some(c) = ctx.as_mut() {
            c.value = value;
        }
    })
}

/// The bytes a result function was given: `n` < 0 reads up to the NUL.
unsafe fn result_bytes<'a>(data: *const c_void, n: Option<usize>) -> &'a [u8] {
    match n {
        Some(n) => std::slice::from_raw_parts(data as *const u8, n),
        None => CStr::from_ptr(data as *const c_char).to_bytes(),
    }
}

/// Hands the application's buffer to its destructor once copied.
unsafe fn release(data: *const c_void, destructor: isize) {
    if !data.is_null() && destructor != SQLITE_STATIC && destructor != SQLITE_TRANSIENT {
        // SAFETY: any other value is the application's `void (*)(void*)`.
        let f: unsafe extern "C" fn(*mut c_void) = std::mem::transmute(destructor);
        f(data as *mut c_void);
    }
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_result_null(ctx: *mut Context) {
    set_result(ctx, Value::Null)
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_result_int64(ctx: *mut Context, v: i64) {
    set_result(ctx, Value::Integer(v))
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_result_int(ctx: *mut Context, v: c_int) {
    set_result(ctx, Value::Integer(v as i64))
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_result_double(ctx: *mut Context, v: f64) {
    // NaN is NULL, as in SQLite.
    set_result(ctx, Value::real(v))
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_result_text(
    ctx: *mut Context,
    data: *const c_char,
    n: c_int,
    destructor: isize,
) {
    guard((), || {
        let value = if data.is_null() {
            Value::Null
        } else {
            // parlite's TEXT is UTF-8: invalid bytes become U+FFFD (README, C API).
            let bytes = result_bytes(data as *const c_void, usize::try_from(n).ok());
            Value::text(&*String::from_utf8_lossy(bytes))
        };
        set_result(ctx, value);
        release(data as *const c_void, destructor);
    })
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_result_blob(
    ctx: *mut Context,
    data: *const c_void,
    n: c_int,
    destructor: isize,
) {
    guard((), || {
        let value = if data.is_null() {
            Value::Null
        } else {
            Value::blob(result_bytes(data, Some(usize::try_from(n).unwrap_or(0))))
        };
        set_result(ctx, value);
        release(data, destructor);
    })
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_result_zeroblob(ctx: *mut Context, n: c_int) {
    set_result(ctx, Value::blob(vec![0u8; usize::try_from(n).unwrap_or(0)]))
}

/// Makes the call fail with `code`, and `message` unless None (invariant 4).
unsafe fn set_error(ctx: *mut Context, code: c_int, message: Option<String>) {
    guard((), || {
        if let Some(c) = ctx.as_mut() {
            c.error = Some(code);
            if let Some(m) = message {
                c.value = Value::text(m.as_str());
            }
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_result_error(ctx: *mut Context, message: *const c_char, n: c_int) {
    let text = if message.is_null() {
        String::new()
    } else {
        String::from_utf8_lossy(result_bytes(
            message as *const c_void,
            usize::try_from(n).ok(),
        ))
        .into_owned()
    };
    set_error(ctx, rc::ERROR, Some(text))
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_result_error_code(ctx: *mut Context, code: c_int) {
    let code = if code == rc::OK { rc::ERROR } else { code };
    // A message set earlier stays; without one, SQLite's text for the code.
    let unset = ctx.as_ref().is_some_and(|c| c.value.is_null());
    set_error(
        ctx,
        code,
        unset.then(|| errstr(code).to_string_lossy().into_owned()),
    )
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_result_error_nomem(ctx: *mut Context) {
    set_error(
        ctx,
        rc::NOMEM,
        Some(errstr(rc::NOMEM).to_string_lossy().into_owned()),
    )
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_result_error_toobig(ctx: *mut Context) {
    set_error(
        ctx,
        rc::TOOBIG,
        Some(errstr(rc::TOOBIG).to_string_lossy().into_owned()),
    )
}

/// sqlite3_value_dup: a copy the application owns until sqlite3_value_free; NULL for NULL.
#[no_mangle]
pub unsafe extern "C" fn sqlite3_value_dup(v: *const CValue) -> *mut CValue {
    guard(ptr::null_mut(), || match v.as_ref() {
        Some(v) => Box::into_raw(Box::new(CValue::owned(v.value_ref()))),
        None => ptr::null_mut(),
    })
}

/// sqlite3_value_free: frees what sqlite3_value_dup returned (NULL: nothing).
#[no_mangle]
pub unsafe extern "C" fn sqlite3_value_free(v: *mut CValue) {
    guard((), || {
        if !v.is_null() {
            // SAFETY: `v` came from sqlite3_value_dup (its contract), which boxed it.
            drop(Box::from_raw(v));
        }
    })
}

/// sqlite3_result_value: the call's result is a copy of `v` (NULL pointer: NULL).
#[no_mangle]
pub unsafe extern "C" fn sqlite3_result_value(ctx: *mut Context, v: *const CValue) {
    let value = guard(Value::Null, || {
        v.as_ref().map_or(Value::Null, |v| v.v.clone())
    });
    set_result(ctx, value)
}

// ---- the 64-bit and UTF-16 result setters -------------------------------------------------

/// The longest text or blob a result may be (SQLite's 0x7fffffff for the *64 setters).
const MAX_RESULT_BYTES: u64 = 0x7fff_ffff;

#[no_mangle]
pub unsafe extern "C" fn sqlite3_result_blob64(
    ctx: *mut Context,
    data: *const c_void,
    n: u64,
    destructor: isize,
) {
    guard((), || {
        if n > MAX_RESULT_BYTES {
            release(data, destructor);
            sqlite3_result_error_toobig(ctx);
            return;
        }
        sqlite3_result_blob(ctx, data, n as c_int, destructor);
    })
}

/// sqlite3_result_text64: `n` bytes in `encoding`; UTF-16 becomes UTF-8, parlite's only
/// text encoding.
#[no_mangle]
pub unsafe extern "C" fn sqlite3_result_text64(
    ctx: *mut Context,
    data: *const c_char,
    n: u64,
    destructor: isize,
    encoding: u8,
) {
    guard((), || {
        if n > MAX_RESULT_BYTES {
            release(data as *const c_void, destructor);
            sqlite3_result_error_toobig(ctx);
            return;
        }
        match crate::stmt::TextEncoding::of(encoding) {
            Some(crate::stmt::TextEncoding::Utf8) => {
                sqlite3_result_text(ctx, data, n as c_int, destructor)
            }
            Some(crate::stmt::TextEncoding::Utf16 { big_endian }) => result_utf16(
                ctx,
                data as *const c_void,
                Some(n as usize),
                big_endian,
                destructor,
            ),
            None => {
                release(data as *const c_void, destructor);
                sqlite3_result_error_code(ctx, rc::MISUSE);
            }
        }
    })
}

/// A UTF-16 result (`n` None: up to the first zero pair), converted to UTF-8.
unsafe fn result_utf16(
    ctx: *mut Context,
    data: *const c_void,
    n: Option<usize>,
    big_endian: bool,
    destructor: isize,
) {
    let value = if data.is_null() {
        Value::Null
    } else {
        Value::text(crate::stmt::utf16_to_string(data as *const u8, n, big_endian).as_str())
    };
    set_result(ctx, value);
    release(data, destructor);
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_result_text16le(
    ctx: *mut Context,
    data: *const c_void,
    n: c_int,
    destructor: isize,
) {
    guard((), || {
        result_utf16(ctx, data, usize::try_from(n).ok(), false, destructor)
    })
}

#[no_mangle]
pub unsafe extern "C" fn sqlite3_result_text16be(
    ctx: *mut Context,
    data: *const c_void,
    n: c_int,
    destructor: isize,
) {
    guard((), || {
        result_utf16(ctx, data, usize::try_from(n).ok(), true, destructor)
    })
}

// ---- auxiliary data ---------------------------------------------------------------------

/// sqlite3_get_auxdata: NULL, since `sqlite3_set_auxdata` keeps nothing (below).
#[no_mangle]
pub extern "C" fn sqlite3_get_auxdata(_ctx: *mut Context, _arg: c_int) -> *mut c_void {
    ptr::null_mut()
}

/// sqlite3_set_auxdata: the data is released at once. SQLite documents that it may do so
/// ("the destructor ... might be called immediately, before sqlite3_set_auxdata()
/// returns"), and a function must then compute what it would have kept again on its next
/// call (the shell's regexp() compiles its pattern per row); parlite keeps no per-call-site
/// slots to hold it across rows.
#[no_mangle]
pub unsafe extern "C" fn sqlite3_set_auxdata(
    _ctx: *mut Context,
    _arg: c_int,
    data: *mut c_void,
    destructor: Option<XDestroy>,
) {
    guard((), || {
        if let Some(d) = destructor {
            d(data);
        }
    })
}

// ---- sqlite3_overload_function ------------------------------------------------------------

/// The function sqlite3_overload_function defines: an error whenever it is called.
struct Unusable(String);

impl UserScalar for Unusable {
    fn call(&self, _args: &[Value]) -> parlite_sql::value::Result<Value> {
        Err(SqlError::with_code(
            rc::ERROR,
            format!("unable to use function {} in the requested context", self.0),
        ))
    }
}

/// Whether the connection has a function `name` taking `n_arg` arguments (or any number).
fn function_exists(conn: &parlite::Connection, name: &str, n_arg: c_int) -> parlite::Result<bool> {
    let sql = "SELECT 1 FROM pragma_function_list WHERE name = lower(?1) AND narg IN (?2, -1)";
    let Some((mut st, _)) = conn.prepare(sql)? else {
        return Ok(false);
    };
    st.bind(1, parlite::Value::Text(name.to_owned()))?;
    st.bind(2, parlite::Value::Integer(i64::from(n_arg)))?;
    let found = st.step()?;
    st.reset();
    Ok(found)
}

/// sqlite3_overload_function: makes sure a function `name` of `n_arg` arguments exists, so
/// that statements using it prepare (a virtual table would overload it); when none does,
/// one that fails every call with SQLite's message is defined.
#[no_mangle]
pub unsafe extern "C" fn sqlite3_overload_function(
    db: *mut Db,
    name: *const c_char,
    n_arg: c_int,
) -> c_int {
    guard(rc::INTERNAL, || {
        let Some(d) = db_ref(db) else {
            return rc::MISUSE;
        };
        if name.is_null() || n_arg < -2 {
            return rc::MISUSE;
        }
        let Some(conn) = d.conn() else {
            return rc::MISUSE;
        };
        let name = CStr::from_ptr(name).to_string_lossy().into_owned();
        match function_exists(conn, &name, n_arg) {
            Ok(true) => rc::OK,
            Ok(false) => {
                let imp = UserImpl::Scalar(Arc::new(Unusable(name.clone())));
                let n_args = usize::try_from(n_arg).ok();
                match conn.create_function(&name, n_args, false, Some(imp)) {
                    Ok(()) => rc::OK,
                    Err(e) => d.fail_with(&e),
                }
            }
            Err(e) => d.fail_with(&e),
        }
    })
}
