//! Built-in SQL functions (lang_corefunc.html, lang_aggfunc.html) and their registry.
//!
//! - [`lookup`] resolves a name and argument count to a [`FuncDef`], with SQLite's errors
//!   (`no such function: X`, `wrong number of arguments to function X()`). Names are
//!   case-insensitive. A definition with an exact argument count wins over a variadic one,
//!   which is how `max(x)` is the aggregate and `max(x, y)` the scalar.
//! - `scalar`: the scalar functions, `fn(&Ctx, &[Value]) -> Result<Value>`.
//! - `aggregate`: the accumulator API ([`aggregate::Aggregate`]) and built-in aggregates.
//! - `printf`: SQLite's printf engine behind `printf()`/`format()`.
//! - `like`: LIKE and GLOB matching.
//! - `datetime`: the date and time functions; `tz`: the local time zone they consult.
//! - `math`: the math functions (SQLITE_ENABLE_MATH_FUNCTIONS).
//! - `window`: the built-in window functions, computed a partition at a time.
//! - `user`: functions the embedding application defines, per connection.
//! - `json`: the JSON functions; `->` and `->>` are registered under those names for the
//!   parser's operators.
//!
//! Functions take what they need from the connection through [`FunctionContext`], which the
//! executor implements; they never reach into other layers.

// `Option::is_none_or` is newer than the workspace's minimum Rust version (1.80).
#![allow(clippy::unnecessary_map_or)]

pub mod aggregate;
pub mod datetime;
pub mod function_list;
pub mod json;
pub mod json_table;
mod jsonb;
pub mod like;
pub mod math;
pub mod printf;
mod rng;
pub mod scalar;
pub mod tz;
pub mod user;
mod utf8;
pub mod window;

use crate::collation::Collation;
use crate::value::{Result, SqlError, Value};
use std::collections::HashMap;
use std::sync::OnceLock;

/// What functions need from the connection running the statement.
pub trait FunctionContext {
    /// `sqlite3_changes64()`: rows changed by the most recent INSERT/UPDATE/DELETE.
    fn changes(&self) -> i64;
    /// `sqlite3_total_changes64()`.
    fn total_changes(&self) -> i64;
    /// `sqlite3_last_insert_rowid()`.
    fn last_insert_rowid(&self) -> i64;
    /// `PRAGMA case_sensitive_like`.
    fn case_sensitive_like(&self) -> bool {
        false
    }
    /// The statement's current time as a julian day in milliseconds ('now'). SQLite
    /// fixes it once per statement (`sqlite3StmtCurrentTime`) so that every 'now' in a
    /// statement agrees; the executor should do the same. Default: the system clock.
    fn current_time_jd_ms(&self) -> i64 {
        datetime::system_now_jd_ms()
    }
    /// The local time zone's offset from UTC, in seconds east, at the given unix time
    /// (the `localtime` and `utc` modifiers). Default: the process's zone, as the C
    /// library would use it (`TZ`, else `/etc/localtime`; see `tz`).
    fn local_offset_seconds(&self, unix_time_s: i64) -> i64 {
        tz::system_local_offset_seconds(unix_time_s)
    }
    /// Where the running evaluation must be deterministic, as SQLite's `OP_PureFunc`
    /// words it ("a CHECK constraint", "an index", "a generated column"): there a date
    /// function that reads the clock or the zone fails (`sqlite3NotPureFunc`). None
    /// elsewhere. Default: never.
    fn pure_context(&self) -> Option<&'static str> {
        None
    }
    /// Sets `pure_context` (the executor, around those evaluations).
    fn set_pure_context(&self, _what: Option<&'static str>) {}
}

/// A context with no connection: changes() and friends return 0. For constant folding
/// and tests.
pub struct NoConnection;

impl FunctionContext for NoConnection {
    fn changes(&self) -> i64 {
        0
    }
    fn total_changes(&self) -> i64 {
        0
    }
    fn last_insert_rowid(&self) -> i64 {
        0
    }
}

/// The per-call context of a scalar function.
pub struct Ctx<'a> {
    pub conn: &'a dyn FunctionContext,
    /// The collation the call uses (min/max/nullif): the first argument's explicit or
    /// column collation, else BINARY — as the planner resolves it.
    pub collation: Collation,
}

impl<'a> Ctx<'a> {
    pub fn new(conn: &'a dyn FunctionContext) -> Self {
        Ctx {
            conn,
            collation: Collation::Binary,
        }
    }
}

pub type ScalarFn = fn(&Ctx<'_>, &[Value]) -> Result<Value>;

/// The built-in aggregates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggKind {
    Count,
    Sum,
    Total,
    Avg,
    Min,
    Max,
    GroupConcat,
    JsonGroupArray,
    JsonGroupObject,
    JsonbGroupArray,
    JsonbGroupObject,
}

#[derive(Clone, Copy)]
pub enum FuncImpl {
    Scalar(ScalarFn),
    Aggregate(AggKind),
    /// The application's (`user`).
    UserScalar(&'static user::UserFunction),
    UserAggregate(&'static user::UserFunction),
}

/// Functions SQLite compiles inline with lazy argument evaluation. The executor should
/// evaluate these itself; the scalar implementations exist for constant folding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    /// coalesce / ifnull: stop at the first non-NULL argument.
    Coalesce,
    /// iif / if: CASE WHEN a0 THEN a1 [WHEN a2 THEN a3 ...] [ELSE last] END.
    Iif,
    /// likely / unlikely / likelihood: the first argument (planner hints).
    Unlikely,
    /// The JSON functions that read SQLite's JSON subtype of their arguments (a text
    /// argument straight from a JSON function is JSON, not a string: json.rs,
    /// `call_with_subtypes`).
    JsonSubtypes,
}

#[derive(Clone, Copy)]
pub struct FuncDef {
    /// Lower-case name.
    pub name: &'static str,
    pub min_args: usize,
    /// None: no upper bound.
    pub max_args: Option<usize>,
    /// Same arguments give the same result within a statement (SQLITE_DETERMINISTIC); false
    /// for random(), randomblob(), changes(), total_changes(), last_insert_rowid().
    pub deterministic: bool,
    /// min/max/nullif compare their arguments with the call's collation.
    pub needs_collation: bool,
    pub special: Option<Special>,
    pub imp: FuncImpl,
}

impl FuncDef {
    pub fn is_aggregate(&self) -> bool {
        matches!(
            self.imp,
            FuncImpl::Aggregate(_) | FuncImpl::UserAggregate(_)
        )
    }

    /// Defined by the application (`user`), not built in: no built-in's special
    /// treatment keyed on its name applies.
    pub fn is_user(&self) -> bool {
        matches!(
            self.imp,
            FuncImpl::UserScalar(_) | FuncImpl::UserAggregate(_)
        )
    }

    /// May be called with OVER: a built-in aggregate (all have xValue and xInverse or an
    /// equivalent), or the application's defined as a window function.
    pub fn is_window_aggregate(&self) -> bool {
        match self.imp {
            FuncImpl::Aggregate(_) => true,
            FuncImpl::UserAggregate(s) => s.is_window(),
            FuncImpl::Scalar(_) | FuncImpl::UserScalar(_) => false,
        }
    }

    /// The min()/max() aggregates: the ones whose row a bare column follows
    /// (lang_select.html, "bare columns"; SQLITE_FUNC_NEEDCOLL in SQLite).
    /// The aggregates that read SQLite's JSON subtype of their arguments
    /// (`Aggregate::step_subtyped`).
    pub fn reads_json_subtype(&self) -> bool {
        matches!(
            self.imp,
            FuncImpl::Aggregate(
                AggKind::JsonGroupArray
                    | AggKind::JsonGroupObject
                    | AggKind::JsonbGroupArray
                    | AggKind::JsonbGroupObject
            )
        )
    }

    pub fn is_min_max_aggregate(&self) -> bool {
        matches!(
            self.imp,
            FuncImpl::Aggregate(AggKind::Min) | FuncImpl::Aggregate(AggKind::Max)
        )
    }

    /// A window frame's accumulator (`aggregate::new_window_aggregate`; an error for a
    /// scalar definition).
    pub fn new_window_aggregate(
        &self,
        collation: Collation,
        start_moves: bool,
    ) -> Result<Box<dyn aggregate::Aggregate>> {
        match self.imp {
            FuncImpl::Aggregate(kind) => Ok(aggregate::new_window_aggregate(
                kind,
                collation,
                start_moves,
            )),
            FuncImpl::UserAggregate(s) => s.accumulator(self),
            FuncImpl::Scalar(_) | FuncImpl::UserScalar(_) => {
                self.new_aggregate(false, collation, &[])
            }
        }
    }

    /// Calls a scalar function (an error for an aggregate definition).
    pub fn call(&self, ctx: &Ctx<'_>, args: &[Value]) -> Result<Value> {
        match self.imp {
            FuncImpl::Scalar(f) => f(ctx, args),
            FuncImpl::UserScalar(s) => s.call(self, args),
            FuncImpl::Aggregate(_) | FuncImpl::UserAggregate(_) => Err(SqlError::msg(format!(
                "misuse of aggregate function {}()",
                self.name
            ))),
        }
    }

    /// A new accumulator (an error for a scalar definition).
    pub fn new_aggregate(
        &self,
        distinct: bool,
        collation: Collation,
        order: &[crate::plan::SortKey],
    ) -> Result<Box<dyn aggregate::Aggregate>> {
        match self.imp {
            FuncImpl::Aggregate(kind) => {
                Ok(aggregate::new_aggregate(kind, distinct, collation, order))
            }
            FuncImpl::UserAggregate(s) => Ok(aggregate::wrap_aggregate(
                s.accumulator(self)?,
                false,
                distinct,
                collation,
                order,
            )),
            FuncImpl::Scalar(_) | FuncImpl::UserScalar(_) => Err(SqlError::msg(format!(
                "{}() is not an aggregate function",
                self.name
            ))),
        }
    }

    fn accepts(&self, n: usize) -> bool {
        n >= self.min_args && self.max_args.map_or(true, |m| n <= m)
    }

    fn exact(&self, n: usize) -> bool {
        self.min_args == n && self.max_args == Some(n)
    }
}

const fn scalar(name: &'static str, min: usize, max: Option<usize>, f: ScalarFn) -> FuncDef {
    FuncDef {
        name,
        min_args: min,
        max_args: max,
        deterministic: true,
        needs_collation: false,
        special: None,
        imp: FuncImpl::Scalar(f),
    }
}

const fn volatile(mut d: FuncDef) -> FuncDef {
    d.deterministic = false;
    d
}

const fn with_coll(mut d: FuncDef) -> FuncDef {
    d.needs_collation = true;
    d
}

const fn special(mut d: FuncDef, s: Special) -> FuncDef {
    d.special = Some(s);
    d
}

const fn agg(name: &'static str, min: usize, max: usize, kind: AggKind) -> FuncDef {
    FuncDef {
        name,
        min_args: min,
        max_args: Some(max),
        deterministic: true,
        needs_collation: matches!(kind, AggKind::Min | AggKind::Max),
        special: None,
        imp: FuncImpl::Aggregate(kind),
    }
}

use scalar as s;

/// Every built-in function. Order matters only among same-name entries: exact arities
/// are preferred by `lookup` regardless of order.
pub static BUILTINS: &[FuncDef] = &[
    scalar("abs", 1, Some(1), s::abs),
    volatile(scalar("changes", 0, Some(0), s::changes)),
    scalar("char", 0, None, s::char_fn),
    special(scalar("coalesce", 2, None, s::coalesce), Special::Coalesce),
    scalar("concat", 1, None, s::concat),
    scalar("concat_ws", 2, None, s::concat_ws),
    scalar("format", 0, None, s::printf),
    scalar("glob", 2, Some(2), s::glob),
    scalar("hex", 1, Some(1), s::hex),
    special(scalar("ifnull", 2, Some(2), s::ifnull), Special::Coalesce),
    special(scalar("iif", 2, None, s::iif), Special::Iif),
    special(scalar("if", 2, None, s::iif), Special::Iif),
    scalar("instr", 2, Some(2), s::instr),
    volatile(scalar(
        "last_insert_rowid",
        0,
        Some(0),
        s::last_insert_rowid,
    )),
    scalar("length", 1, Some(1), s::length),
    scalar("like", 2, Some(3), s::like),
    special(
        scalar("likelihood", 2, Some(2), s::first_arg),
        Special::Unlikely,
    ),
    special(
        scalar("likely", 1, Some(1), s::first_arg),
        Special::Unlikely,
    ),
    scalar("lower", 1, Some(1), s::lower),
    scalar("ltrim", 1, Some(2), s::ltrim),
    with_coll(scalar("max", 1, None, s::max_scalar)),
    with_coll(scalar("min", 1, None, s::min_scalar)),
    with_coll(scalar("nullif", 2, Some(2), s::nullif)),
    scalar("octet_length", 1, Some(1), s::octet_length),
    scalar("printf", 0, None, s::printf),
    scalar("quote", 1, Some(1), s::quote),
    volatile(scalar("random", 0, Some(0), s::random)),
    volatile(scalar("randomblob", 1, Some(1), s::randomblob)),
    scalar("replace", 3, Some(3), s::replace),
    scalar("round", 1, Some(2), s::round),
    scalar("rtrim", 1, Some(2), s::rtrim),
    scalar("sign", 1, Some(1), s::sign),
    scalar("soundex", 1, Some(1), s::soundex),
    scalar("sqlite_source_id", 0, Some(0), s::sqlite_source_id),
    scalar("sqlite_version", 0, Some(0), s::sqlite_version),
    scalar("substr", 2, Some(3), s::substr),
    scalar("substring", 2, Some(3), s::substr),
    scalar("subtype", 1, Some(1), s::subtype),
    scalar("trim", 1, Some(2), s::trim),
    scalar("typeof", 1, Some(1), s::typeof_fn),
    scalar("unhex", 1, Some(2), s::unhex),
    scalar("unicode", 1, Some(1), s::unicode),
    scalar("unistr", 1, Some(1), s::unistr),
    scalar("unistr_quote", 1, Some(1), s::unistr_quote),
    scalar(
        "sqlite_compileoption_used",
        1,
        Some(1),
        s::sqlite_compileoption_used,
    ),
    scalar(
        "sqlite_compileoption_get",
        1,
        Some(1),
        s::sqlite_compileoption_get,
    ),
    volatile(scalar("load_extension", 1, Some(2), s::load_extension)),
    special(
        scalar("unlikely", 1, Some(1), s::first_arg),
        Special::Unlikely,
    ),
    scalar("upper", 1, Some(1), s::upper),
    volatile(scalar("total_changes", 0, Some(0), s::total_changes)),
    scalar("zeroblob", 1, Some(1), s::zeroblob),
    scalar("date", 0, None, datetime::date),
    scalar("time", 0, None, datetime::time),
    scalar("datetime", 0, None, datetime::datetime),
    scalar("julianday", 0, None, datetime::julianday),
    scalar("unixepoch", 0, None, datetime::unixepoch),
    scalar("strftime", 0, None, datetime::strftime),
    scalar("timediff", 2, Some(2), datetime::timediff),
    // Not deterministic, as SQLite registers them: refused in index expressions and
    // generated columns, and never folded into a constant of a kept plan.
    volatile(scalar("current_date", 0, Some(0), datetime::current_date)),
    volatile(scalar("current_time", 0, Some(0), datetime::current_time)),
    volatile(scalar(
        "current_timestamp",
        0,
        Some(0),
        datetime::current_timestamp,
    )),
    scalar("acos", 1, Some(1), math::acos),
    scalar("acosh", 1, Some(1), math::acosh),
    scalar("asin", 1, Some(1), math::asin),
    scalar("asinh", 1, Some(1), math::asinh),
    scalar("atan", 1, Some(1), math::atan),
    scalar("atan2", 2, Some(2), math::atan2),
    scalar("atanh", 1, Some(1), math::atanh),
    scalar("ceil", 1, Some(1), math::ceil),
    scalar("ceiling", 1, Some(1), math::ceil),
    scalar("cos", 1, Some(1), math::cos),
    scalar("cosh", 1, Some(1), math::cosh),
    scalar("degrees", 1, Some(1), math::degrees),
    scalar("exp", 1, Some(1), math::exp),
    scalar("floor", 1, Some(1), math::floor),
    scalar("ln", 1, Some(1), math::ln),
    scalar("log", 1, Some(2), math::log),
    scalar("log10", 1, Some(1), math::log),
    scalar("log2", 1, Some(1), math::log2),
    scalar("mod", 2, Some(2), math::fmod),
    scalar("pi", 0, Some(0), math::pi),
    scalar("pow", 2, Some(2), math::pow),
    scalar("power", 2, Some(2), math::pow),
    scalar("radians", 1, Some(1), math::radians),
    scalar("sin", 1, Some(1), math::sin),
    scalar("sinh", 1, Some(1), math::sinh),
    scalar("sqrt", 1, Some(1), math::sqrt),
    scalar("tan", 1, Some(1), math::tan),
    scalar("tanh", 1, Some(1), math::tanh),
    scalar("trunc", 1, Some(1), math::trunc),
    scalar("json", 1, Some(1), json::json),
    scalar("json_valid", 1, Some(2), json::json_valid),
    scalar("json_error_position", 1, Some(1), json::json_error_position),
    special(
        scalar("json_quote", 1, Some(1), json::json_quote),
        Special::JsonSubtypes,
    ),
    scalar("json_type", 1, Some(2), json::json_type),
    scalar("json_array_length", 1, Some(2), json::json_array_length),
    scalar("json_extract", 0, None, json::json_extract),
    special(
        scalar("json_array", 0, None, json::json_array),
        Special::JsonSubtypes,
    ),
    special(
        scalar("json_object", 0, None, json::json_object),
        Special::JsonSubtypes,
    ),
    special(
        scalar("json_insert", 1, None, json::json_insert),
        Special::JsonSubtypes,
    ),
    special(
        scalar("json_replace", 1, None, json::json_replace),
        Special::JsonSubtypes,
    ),
    special(
        scalar("json_set", 1, None, json::json_set),
        Special::JsonSubtypes,
    ),
    scalar("json_remove", 1, None, json::json_remove),
    scalar("json_patch", 2, Some(2), json::json_patch),
    scalar("->", 2, Some(2), json::arrow_json),
    scalar("->>", 2, Some(2), json::arrow_sql),
    scalar("jsonb", 1, Some(1), json::jsonb),
    scalar("jsonb_extract", 0, None, json::jsonb_extract),
    special(
        scalar("jsonb_array", 0, None, json::jsonb_array),
        Special::JsonSubtypes,
    ),
    special(
        scalar("jsonb_object", 0, None, json::jsonb_object),
        Special::JsonSubtypes,
    ),
    special(
        scalar("jsonb_insert", 1, None, json::jsonb_insert),
        Special::JsonSubtypes,
    ),
    special(
        scalar("jsonb_replace", 1, None, json::jsonb_replace),
        Special::JsonSubtypes,
    ),
    special(
        scalar("jsonb_set", 1, None, json::jsonb_set),
        Special::JsonSubtypes,
    ),
    scalar("jsonb_remove", 1, None, json::jsonb_remove),
    scalar("jsonb_patch", 2, Some(2), json::jsonb_patch),
    scalar("json_pretty", 1, Some(2), json::json_pretty),
    agg("json_group_array", 1, 1, AggKind::JsonGroupArray),
    agg("json_group_object", 2, 2, AggKind::JsonGroupObject),
    agg("jsonb_group_array", 1, 1, AggKind::JsonbGroupArray),
    agg("jsonb_group_object", 2, 2, AggKind::JsonbGroupObject),
    agg("avg", 1, 1, AggKind::Avg),
    agg("count", 0, 1, AggKind::Count),
    agg("group_concat", 1, 2, AggKind::GroupConcat),
    agg("max", 1, 1, AggKind::Max),
    agg("min", 1, 1, AggKind::Min),
    agg("string_agg", 2, 2, AggKind::GroupConcat),
    agg("sum", 1, 1, AggKind::Sum),
    agg("total", 1, 1, AggKind::Total),
];

/// Resolves a function call. `name` is matched case-insensitively; errors quote it as
/// written, as SQLite does. The application's functions in scope come first (`user`).
pub fn lookup(name: &str, n_args: usize) -> Result<&'static FuncDef> {
    if let Some(d) = user::lookup_in_scope(name, n_args)? {
        return Ok(d);
    }
    let mut named = false;
    let mut fallback: Option<&'static FuncDef> = None;
    for d in named_builtins(name) {
        named = true;
        if d.accepts(n_args) {
            if d.exact(n_args) || d.is_aggregate() {
                return Ok(d);
            }
            fallback.get_or_insert(d);
        }
    }
    match fallback {
        Some(d) => Ok(d),
        None if named => Err(SqlError::WrongArgCount {
            name: name.to_string(),
        }),
        None => Err(SqlError::NoSuchFunction {
            name: name.to_string(),
        }),
    }
}

/// The built-ins named `name` (ASCII case-insensitively), in table order. Through a map
/// built once: binding scanned the whole table per call (~900 instructions; the five calls
/// of a speedtest1 test 160 query were 2% of it, callgrind).
fn named_builtins(name: &str) -> impl Iterator<Item = &'static FuncDef> {
    static BY_NAME: OnceLock<HashMap<String, Vec<usize>>> = OnceLock::new();
    let map = BY_NAME.get_or_init(|| {
        let mut m: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, d) in BUILTINS.iter().enumerate() {
            m.entry(d.name.to_ascii_lowercase()).or_default().push(i);
        }
        m
    });
    // Lower-cased on the stack: every built-in name is short.
    let mut buf = [0u8; 32];
    let found = match buf.get_mut(..name.len()) {
        Some(b) => {
            b.copy_from_slice(name.as_bytes());
            b.make_ascii_lowercase();
            std::str::from_utf8(b).ok().and_then(|k| map.get(k))
        }
        None => map.get(&name.to_ascii_lowercase()),
    };
    found
        .map(|v| v.as_slice())
        .unwrap_or(&[])
        .iter()
        .filter_map(|&i| BUILTINS.get(i))
}

/// True when some built-in has this name (any arity).
pub fn exists(name: &str) -> bool {
    BUILTINS.iter().any(|d| d.name.eq_ignore_ascii_case(name))
}

/// Convenience for tests and constant folding: resolve and call a scalar function.
pub fn call_scalar(name: &str, args: &[Value], conn: &dyn FunctionContext) -> Result<Value> {
    let def = lookup(name, args.len())?;
    def.call(&Ctx::new(conn), args)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_errors_and_overloads() {
        assert!(lookup("MAX", 1).map(|d| d.is_aggregate()).unwrap_or(false));
        assert!(lookup("max", 2).map(|d| !d.is_aggregate()).unwrap_or(false));
        assert_eq!(
            lookup("max", 0).err().map(|e| e.to_string()),
            Some("wrong number of arguments to function max()".into())
        );
        assert_eq!(
            lookup("nosuch", 1).err().map(|e| e.to_string()),
            Some("no such function: nosuch".into())
        );
        assert_eq!(
            lookup("Coalesce", 1).err().map(|e| e.to_string()),
            Some("wrong number of arguments to function Coalesce()".into())
        );
        assert!(lookup("count", 0).is_ok());
        assert!(lookup("substr", 4).is_err());
    }
}
