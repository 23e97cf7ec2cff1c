//! Collations the embedding application defines: `parlite::Connection::create_collation`
//! and through it the C API's `sqlite3_create_collation(_v2)` (capi `func.rs`).
//!
//! A connection's [`UserCollations`] live in its function registry (`func::user`), which
//! is in scope on the thread while the connection prepares or runs a statement; name
//! resolution ([`super::Collation::from_name`], `for_schema`) reads it there.
//!
//! Invariants:
//! 1. `Collation` is `Copy` and is held by plans, schemas and storage comparators (a
//!    `BEGIN CONCURRENT` transaction keeps comparators until it commits), so a collation
//!    is a `&'static` [`UserCollation`] slot, leaked once per (registry, name): defining
//!    the name again swaps what the slot holds, deleting it empties it. The leak is bounded
//!    by the distinct names a connection defines or its schema names (~100 bytes each).
//! 2. When the registry drops, or a definition is replaced or deleted, the slot lets go of
//!    the application's function (and what it owns, e.g. the C API's `xDestroy`) once no
//!    comparison runs it. A plan bound before then compares with whatever the slot holds
//!    when it runs: the new definition (SQLite expires and re-prepares such statements, so
//!    binds the new one too) or none: an empty slot compares as equal and records the name
//!    ([`take_missing`]); the connection fails the statement with `no such collation
//!    sequence: X` before it commits (parlite `ConnInner::execute`), never a wrong answer.
//! 3. A name with a slot resolves to the slot, even over a built-in (SQLite: the
//!    application's NOCASE wins, and deleting it leaves no NOCASE).
//! 4. Replacing or deleting a live definition, and the first definition of a built-in's
//!    name, bump [`generation`]; connections then reload their schema and drop cached
//!    plans (parlite `note_collation_changes`), as SQLite expires its prepared statements:
//!    a plan may rely on an index's order under the old definition without comparing
//!    (an ORDER BY the index gives), or have resolved the name to the built-in.

use super::Collation;
use crate::value::{codes, Result, SqlError};
use std::cell::{Cell, RefCell};
use std::cmp::Ordering;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::{Arc, Mutex, RwLock};

/// The application's comparison over two texts' bytes (UTF-8; the C API's form). It must
/// be a total order (SQLite: "the collating function must obey the following properties").
pub type CompareFn = dyn Fn(&[u8], &[u8]) -> Ordering + Send + Sync;

/// The same over the texts as `str` (the Rust API's form).
pub type TextCompareFn = dyn Fn(&str, &str) -> Ordering + Send + Sync;

/// What a slot holds: values reach a comparison as `str` (rows) or as bytes (index keys),
/// and each form is called without converting where it can be (a text comparison's
/// UTF-8 check of both keys, with `from_utf8_lossy`, was ~10% of an ORDER BY of 100k
/// rows under an application collation).
#[derive(Clone)]
pub enum UserCompare {
    Text(Arc<TextCompareFn>),
    Bytes(Arc<CompareFn>),
}

/// The slot a `Collation::User` points at (invariant 1).
pub struct UserCollation {
    /// As first defined or named (SQLite reports the name as registered).
    name: &'static str,
    imp: RwLock<Option<UserCompare>>,
}

impl UserCollation {
    fn is_defined(&self) -> bool {
        self.imp.read().unwrap_or_else(|p| p.into_inner()).is_some()
    }

    fn set(&self, imp: Option<UserCompare>) -> Result<()> {
        if IN_COMPARE.with(|d| d.get()) > 0 {
            // The comparison running on this thread holds the slot (`compare`).
            return Err(SqlError::with_code(
                codes::SQLITE_BUSY,
                "unable to delete/modify collation sequence due to active statements",
            ));
        }
        let old = std::mem::replace(
            &mut *self.imp.write().unwrap_or_else(|p| p.into_inner()),
            imp,
        );
        // Dropped outside the lock: an application destructor may take its own locks.
        drop(old);
        Ok(())
    }

    /// Runs `f` on the definition, holding the slot for reading: no reference count
    /// taken per comparison (a definition replaced meanwhile waits for the call).
    fn with<R>(&self, f: impl FnOnce(&UserCompare) -> R) -> Option<R> {
        let g = self.imp.read().unwrap_or_else(|p| p.into_inner());
        let imp = g.as_ref()?;
        IN_COMPARE.with(|d| d.set(d.get() + 1));
        struct Leave;
        impl Drop for Leave {
            fn drop(&mut self) {
                IN_COMPARE.with(|d| d.set(d.get() - 1));
            }
        }
        let _leave = Leave;
        Some(f(imp))
    }
}

/// A `Copy` handle on a slot; equal (and hashed) by identity.
#[derive(Clone, Copy)]
pub struct UserCollationRef(&'static UserCollation);

impl UserCollationRef {
    pub fn name(self) -> &'static str {
        self.0.name
    }

    /// The slot holds a definition now.
    pub fn is_live(self) -> bool {
        self.0.is_defined()
    }

    /// Orders two texts' bytes with the definition in the slot (invariant 2 when there is
    /// none).
    pub fn compare(self, a: &[u8], b: &[u8]) -> Ordering {
        let r = self.0.with(|imp| match imp {
            UserCompare::Bytes(f) => f(a, b),
            UserCompare::Text(f) => match (std::str::from_utf8(a), std::str::from_utf8(b)) {
                (Ok(a), Ok(b)) => f(a, b),
                _ => f(&String::from_utf8_lossy(a), &String::from_utf8_lossy(b)),
            },
        });
        r.unwrap_or_else(|| self.missing())
    }

    /// Orders two texts with the definition in the slot (invariant 2 when there is none).
    pub fn compare_str(self, a: &str, b: &str) -> Ordering {
        let r = self.0.with(|imp| match imp {
            UserCompare::Text(f) => f(a, b),
            UserCompare::Bytes(f) => f(a.as_bytes(), b.as_bytes()),
        });
        r.unwrap_or_else(|| self.missing())
    }

    fn missing(self) -> Ordering {
        MISSING.with(|m| {
            m.borrow_mut()
                .get_or_insert_with(|| self.0.name.to_string());
        });
        Ordering::Equal
    }
}

impl PartialEq for UserCollationRef {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}

impl Eq for UserCollationRef {}

impl Hash for UserCollationRef {
    fn hash<H: Hasher>(&self, state: &mut H) {
        std::ptr::hash(self.0, state)
    }
}

impl std::fmt::Debug for UserCollationRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "User({})", self.0.name)
    }
}

thread_local! {
    /// The first collation an empty slot was asked to compare with on this thread since
    /// the last [`take_missing`] (invariant 2).
    static MISSING: RefCell<Option<String>> = const { RefCell::new(None) };
    /// How many application comparisons are running on this thread: one of them
    /// redefining a collation would wait on the slot it holds (SQLite refuses with
    /// SQLITE_BUSY while statements run).
    static IN_COMPARE: Cell<u32> = const { Cell::new(0) };
}

/// The name of a collation a comparison needed and found undefined since the last call,
/// clearing it: the connection calls it before and after running a statement.
pub fn take_missing() -> Option<String> {
    MISSING.with(|m| m.borrow_mut().take())
}

/// Bumped by the changes that expire plans (invariant 4), on any connection.
static GENERATION: AtomicU64 = AtomicU64::new(0);

/// How many collation changes that expire plans this process has made (invariant 4).
pub fn generation() -> u64 {
    GENERATION.load(AtomicOrdering::Acquire)
}

fn expire_plans() {
    GENERATION.fetch_add(1, AtomicOrdering::AcqRel);
}

/// `SQLITE_API sqlite3_collation_needed`'s callback: given the name, it may define it.
pub type NeededFn = dyn Fn(&str) + Send + Sync;

/// One connection's collations, part of its `func::user::UserFunctions`.
#[derive(Default)]
pub struct UserCollations {
    /// Every slot made, live or empty.
    slots: Vec<&'static UserCollation>,
    /// The names ever defined, most recent first definition first.
    defined: Vec<&'static str>,
    needed: Option<Arc<NeededFn>>,
}

impl UserCollations {
    fn slot(&self, name: &str) -> Option<&'static UserCollation> {
        self.slots
            .iter()
            .copied()
            .find(|s| s.name.eq_ignore_ascii_case(name))
    }

    fn slot_or_new(&mut self, name: &str) -> &'static UserCollation {
        if let Some(s) = self.slot(name) {
            return s;
        }
        if Collation::builtin(name).is_ok() {
            expire_plans();
        }
        let s: &'static UserCollation = Box::leak(Box::new(UserCollation {
            name: String::leak(name.to_string()),
            imp: RwLock::new(None),
        }));
        self.slots.insert(0, s);
        s
    }

    /// Defines `name` (`imp` Some) or deletes it (None). Deleting a name never defined
    /// changes nothing. SQLITE_BUSY from inside a comparison (`UserCollation::set`).
    pub fn define(&mut self, name: &str, imp: Option<UserCompare>) -> Result<()> {
        let live = self.slot(name).is_some_and(|s| s.is_defined());
        match imp {
            Some(f) => {
                let s = self.slot_or_new(name);
                s.set(Some(f))?;
                if !self.defined.contains(&s.name) {
                    self.defined.insert(0, s.name);
                }
            }
            None => {
                if let Some(s) = self.slot(name) {
                    s.set(None)?;
                }
            }
        }
        if live {
            expire_plans();
        }
        Ok(())
    }

    /// Sets (or clears) the hook asked for a name no definition has (SQLite's
    /// `sqlite3_collation_needed`).
    pub fn set_needed(&mut self, hook: Option<Arc<NeededFn>>) {
        self.needed = hook;
    }

    /// The names ever defined (deleted ones too, as SQLite keeps them), most recently
    /// first defined first: `PRAGMA collation_list` shows them before the built-ins,
    /// leaving out a built-in's name it lists anyway.
    pub fn names(&self) -> Vec<&'static str> {
        self.defined.clone()
    }
}

impl Drop for UserCollations {
    fn drop(&mut self) {
        // Invariant 2: the application's collations go with the connection (a drop
        // inside a comparison cannot happen: the comparison's statement holds it).
        for s in &self.slots {
            let _ = s.set(None);
        }
    }
}

/// The in-scope registry's resolution of `name` (invariant 3): its slot when it has one,
/// else None (a built-in or nothing). `bind`: a statement needs it now, so a name without
/// a live definition asks the `collation_needed` hook first (outside the registry's lock:
/// the hook defines collations); otherwise (the schema names it) a name neither the
/// registry nor the built-ins know gets an empty slot.
pub(crate) fn resolve_in_scope(name: &str, bind: bool) -> Option<Collation> {
    let user = |s: &'static UserCollation| Collation::User(UserCollationRef(s));
    if bind {
        let (found, hook) = crate::func::user::with_collations_in_scope(|c| {
            let found = c.slot(name);
            let live = found.is_some_and(|s| s.is_defined());
            (found, if live { None } else { c.needed.clone() })
        })?;
        if Collation::builtin(name).is_ok() && found.is_none() {
            return None;
        }
        let Some(hook) = hook else {
            return found.map(user);
        };
        hook(name);
        return crate::func::user::with_collations_in_scope(|c| c.slot(name))
            .flatten()
            .map(user);
    }
    crate::func::user::with_collations_in_scope(|c| match c.slot(name) {
        Some(s) => Some(user(s)),
        None if Collation::builtin(name).is_ok() => None,
        None => Some(user(c.slot_or_new(name))),
    })
    .flatten()
}

/// An empty slot for a name the schema gives outside any connection's scope (process-wide,
/// one per name, never defined): comparing with it fails the statement (invariant 2).
pub(crate) fn detached(name: &str) -> Collation {
    static DETACHED: Mutex<Vec<&'static UserCollation>> = Mutex::new(Vec::new());
    let mut all = DETACHED.lock().unwrap_or_else(|p| p.into_inner());
    let s = match all
        .iter()
        .copied()
        .find(|s| s.name.eq_ignore_ascii_case(name))
    {
        Some(s) => s,
        None => {
            let s: &'static UserCollation = Box::leak(Box::new(UserCollation {
                name: String::leak(name.to_string()),
                imp: RwLock::new(None),
            }));
            all.push(s);
            s
        }
    };
    Collation::User(UserCollationRef(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_swaps_and_empties() {
        let mut reg = UserCollations::default();
        let rev = UserCompare::Bytes(Arc::new(|a: &[u8], b: &[u8]| b.cmp(a)));
        reg.define("Rev", Some(rev)).expect("define");
        let s = UserCollationRef(reg.slot("rev").expect("slot"));
        assert_eq!(s.compare(b"a", b"b"), Ordering::Greater);
        assert_eq!(s.compare_str("a", "b"), Ordering::Greater);
        assert_eq!(s.name(), "Rev");
        let fwd = UserCompare::Text(Arc::new(|a: &str, b: &str| a.cmp(b)));
        reg.define("REV", Some(fwd)).expect("redefine");
        assert_eq!(s.compare(b"a", b"b"), Ordering::Less);
        assert_eq!(s.compare(b"\xff", b"a"), Ordering::Greater);
        reg.define("rev", None).expect("delete");
        assert!(!s.is_live());
        assert_eq!(take_missing(), None);
        assert_eq!(s.compare(b"a", b"b"), Ordering::Equal);
        assert_eq!(take_missing().as_deref(), Some("Rev"));
        assert_eq!(take_missing(), None);
    }
}
