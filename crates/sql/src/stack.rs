//! Deep recursion on any caller's stack: the recursive walks that SQL can drive deep
//! (parser nesting, expression binding, trigger programs firing triggers) run through
//! `guarded`, which continues on a heap-allocated stack segment (`stacker`, as rustc does)
//! when the current one runs low.
//!
//! Invariants:
//! - Each guarded level uses less than `RED_ZONE` of stack before it reaches the next
//!   guarded call, so no walk overflows whatever stack the caller's thread was given.
//! - The depth itself stays bounded by SQLite's limits (expression height, parser nesting,
//!   trigger depth), checked by the callers: this only makes the bounded depth safe.

/// Stack that must be left before a guarded level runs on the current segment.
const RED_ZONE: usize = 128 * 1024;

/// Size of each heap-allocated stack segment a deep walk continues on.
const SEGMENT: usize = 1024 * 1024;

/// Runs `f`, first switching to a fresh heap stack segment if less than `RED_ZONE` is
/// left on the current one.
#[inline]
pub(crate) fn guarded<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(RED_ZONE, SEGMENT, f)
}
