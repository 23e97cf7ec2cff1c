//! Functions the embedding application defines: `parlite::Connection::create_scalar_function`
//! and `create_aggregate_function`, and through them the C API's
//! `sqlite3_create_function_v2` (capi `func.rs`).
//!
//! A connection keeps its definitions in a [`UserFunctions`] registry. The binder resolves
//! names without a connection at hand ([`super::lookup`]), so the connection puts its
//! registry in scope for the current thread while it prepares or runs a statement
//! ([`with_user_functions`]); every binding, including the one a step does after a schema
//! change and a trigger body's, happens inside such a scope.
//!
//! Invariants:
//! 1. A plan holds `&'static FuncDef` (`plan::FnRef`), so a definition's `FuncDef` is leaked
//!    once, when its (name, argument count, kind) is first defined on a registry; defining
//!    it again, or deleting it, swaps what its [`UserFunction`] slot holds. The leak is
//!    bounded by the distinct definitions a registry has made (about 100 bytes each).
//! 2. When a registry drops, or a definition is replaced or deleted, its slot is emptied, so
//!    the application's function (and whatever it owns, e.g. the C API's `xDestroy`) is
//!    dropped then, once no call is running it; a plan that still names the slot gets
//!    `no such function: X` rather than a call into freed state.
//! 3. User definitions come before built-ins of the same name and argument count (SQLite:
//!    "built-in functions may be overloaded by new application-defined functions"); an
//!    exact argument count wins over a variadic definition (-1 in SQLite).

use super::aggregate::Aggregate;
use super::{FuncDef, FuncImpl};
use crate::value::{Result, SqlError, Value};
use std::cell::Cell;
use std::sync::{Arc, Mutex, RwLock};

/// A scalar function: one call per row.
pub trait UserScalar: Send + Sync {
    fn call(&self, args: &[Value]) -> Result<Value>;
}

/// An aggregate function: a fresh accumulator per group, stepped and finalized by the
/// executor (`aggregate::Aggregate`). Defined as `UserImpl::Aggregate` it is no window
/// function (SQLite's aggregates without xValue/xInverse); as `UserImpl::Window` its
/// accumulators also give the running value (`Aggregate::value`) and take rows back out
/// of a moving frame (`Aggregate::inverse`), as `sqlite3_create_window_function`'s.
pub trait UserAggregate: Send + Sync {
    fn accumulator(&self) -> Box<dyn Aggregate>;
}

/// What a definition runs.
#[derive(Clone)]
pub enum UserImpl {
    Scalar(Arc<dyn UserScalar>),
    Aggregate(Arc<dyn UserAggregate>),
    /// An aggregate usable with OVER too (windowfunctions.html#udfwinfunc).
    Window(Arc<dyn UserAggregate>),
}

/// The slot a leaked `FuncDef` points at (invariant 1).
pub struct UserFunction {
    imp: RwLock<Option<UserImpl>>,
}

impl UserFunction {
    fn current(&self) -> Option<UserImpl> {
        self.imp.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn set(&self, imp: Option<UserImpl>) {
        let old = std::mem::replace(
            &mut *self.imp.write().unwrap_or_else(|p| p.into_inner()),
            imp,
        );
        // Dropped outside the lock: an application destructor may take its own locks.
        drop(old);
    }

    /// Calls the scalar function now in the slot.
    pub(crate) fn call(&self, def: &FuncDef, args: &[Value]) -> Result<Value> {
        match self.current() {
            Some(UserImpl::Scalar(f)) => f.call(args),
            _ => Err(SqlError::NoSuchFunction {
                name: def.name.to_string(),
            }),
        }
    }

    /// The slot holds a window function (`UserImpl::Window`) now.
    pub(crate) fn is_window(&self) -> bool {
        matches!(self.current(), Some(UserImpl::Window(_)))
    }

    /// A fresh accumulator of the aggregate now in the slot.
    pub(crate) fn accumulator(&self, def: &FuncDef) -> Result<Box<dyn Aggregate>> {
        match self.current() {
            Some(UserImpl::Aggregate(f) | UserImpl::Window(f)) => Ok(f.accumulator()),
            _ => Err(SqlError::NoSuchFunction {
                name: def.name.to_string(),
            }),
        }
    }
}

/// One connection's definitions.
#[derive(Default)]
pub struct UserFunctions {
    /// Every definition made, live or deleted (an empty slot), for reuse (invariant 1).
    defs: Vec<&'static FuncDef>,
    /// Its collations (`collation::user`), resolved through the same scope.
    pub collations: crate::collation::user::UserCollations,
}

fn slot(def: &'static FuncDef) -> Option<&'static UserFunction> {
    match def.imp {
        FuncImpl::UserScalar(s) | FuncImpl::UserAggregate(s) => Some(s),
        _ => None,
    }
}

impl UserFunctions {
    /// Defines `name` for `n_args` arguments (None: any number), replacing an earlier
    /// definition of the same name and count; `imp` None deletes it. `deterministic` as
    /// SQLITE_DETERMINISTIC: only then may a call with constant arguments be folded.
    pub fn define(
        &mut self,
        name: &str,
        n_args: Option<usize>,
        deterministic: bool,
        imp: Option<UserImpl>,
    ) {
        let aggregate = matches!(imp, Some(UserImpl::Aggregate(_) | UserImpl::Window(_)));
        // Any definition of this name and count, of either kind, is replaced.
        for &d in &self.defs {
            if d.name.eq_ignore_ascii_case(name) && d.max_args == n_args {
                if let Some(s) = slot(d) {
                    s.set(None);
                }
            }
        }
        let Some(imp) = imp else {
            return;
        };
        let reusable = self.defs.iter().copied().find(|d| {
            d.name.eq_ignore_ascii_case(name)
                && d.max_args == n_args
                && d.deterministic == deterministic
                && d.is_aggregate() == aggregate
        });
        let def = match reusable {
            Some(d) => d,
            None => {
                let s: &'static UserFunction = Box::leak(Box::new(UserFunction {
                    imp: RwLock::new(None),
                }));
                let def: &'static FuncDef = Box::leak(Box::new(FuncDef {
                    name: String::leak(name.to_ascii_lowercase()),
                    min_args: n_args.unwrap_or(0),
                    max_args: n_args,
                    deterministic,
                    needs_collation: false,
                    special: None,
                    imp: if aggregate {
                        FuncImpl::UserAggregate(s)
                    } else {
                        FuncImpl::UserScalar(s)
                    },
                }));
                self.defs.push(def);
                def
            }
        };
        if let Some(s) = slot(def) {
            s.set(Some(imp));
        }
    }

    /// The live definition for a call of `name` with `n_args` arguments (invariant 3),
    /// and whether any live definition has the name.
    fn find(&self, name: &str, n_args: usize) -> (Option<&'static FuncDef>, bool) {
        let mut named = false;
        let mut variadic = None;
        for &d in &self.defs {
            if !d.name.eq_ignore_ascii_case(name) || slot(d).map_or(true, |s| s.current().is_none())
            {
                continue;
            }
            named = true;
            match d.max_args {
                Some(n) if n == n_args => return (Some(d), true),
                None => variadic = variadic.or(Some(d)),
                Some(_) => {}
            }
        }
        (variadic, named)
    }
}

impl Drop for UserFunctions {
    fn drop(&mut self) {
        // Invariant 2: the application's functions go with the connection.
        for &d in &self.defs {
            if let Some(s) = slot(d) {
                s.set(None);
            }
        }
    }
}

thread_local! {
    /// The registry of the connection preparing or running a statement on this thread
    /// (null: none). Valid while its `with_user_functions` runs (the caller holds the
    /// `Arc`); a nested scope puts the outer one back when it ends. A pointer in a `Cell`,
    /// not a stack of `Arc` clones: every prepare and every step enter a scope, and the
    /// stack cost ~25 instructions a scope (0.3% of kv_ops, callgrind).
    static IN_SCOPE: Cell<*const Mutex<UserFunctions>> = const { Cell::new(std::ptr::null()) };
}

/// A connection's registry, shared with its statements (whose plans run its functions).
pub type SharedUserFunctions = Arc<Mutex<UserFunctions>>;

/// Runs `body` with `functions` in scope for [`super::lookup`] on this thread.
pub fn with_user_functions<R>(functions: &SharedUserFunctions, body: impl FnOnce() -> R) -> R {
    struct Restore(*const Mutex<UserFunctions>);
    impl Drop for Restore {
        fn drop(&mut self) {
            IN_SCOPE.with(|s| s.set(self.0));
        }
    }
    let _restore = Restore(IN_SCOPE.with(|s| s.replace(Arc::as_ptr(functions))));
    body()
}

/// Runs `body` on the in-scope registry's collations; None when no registry is in scope.
/// `body` must not call back into the application (the registry stays locked).
pub(crate) fn with_collations_in_scope<R>(
    body: impl FnOnce(&mut crate::collation::user::UserCollations) -> R,
) -> Option<R> {
    IN_SCOPE.with(|s| {
        // SAFETY: null, or the registry of a scope still running (IN_SCOPE).
        let functions = unsafe { s.get().as_ref() }?;
        let mut g = functions.lock().unwrap_or_else(|p| p.into_inner());
        Some(body(&mut g.collations))
    })
}

/// The in-scope definition for a call (invariant 3): Ok(None) when none has the name,
/// SQLite's `wrong number of arguments` when one has it with another count and no
/// built-in has the name.
pub(crate) fn lookup_in_scope(name: &str, n_args: usize) -> Result<Option<&'static FuncDef>> {
    IN_SCOPE.with(|s| {
        // SAFETY: null, or the registry of a scope still running (IN_SCOPE).
        let Some(functions) = (unsafe { s.get().as_ref() }) else {
            return Ok(None);
        };
        let found = functions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .find(name, n_args);
        match found {
            (Some(d), _) => Ok(Some(d)),
            (None, true) if !super::exists(name) => Err(SqlError::WrongArgCount {
                name: name.to_string(),
            }),
            _ => Ok(None),
        }
    })
}
