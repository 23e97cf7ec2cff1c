//! Built-in SQL functions (lang_corefunc.html, lang_aggfunc.html).
//!
//! - `registry`: lookup by name and argument count with SQLite's errors.
//! - `scalar`: the core scalar functions.
//! - `aggregate`: the accumulator API and the built-in aggregates.
//! - `printf`: SQLite's printf engine behind `printf()`/`format()`.
//! - `like`: LIKE and GLOB matching.

pub mod like;
pub mod printf;
