//! parlite-sql: SQLite's SQL dialect over parlite-storage.
//!
//! The layout reads as the pipeline: `parse` (lexer, AST, parser) → `plan` → `exec`,
//! with `value` (SQLite's dynamic typing) and `func` (built-in functions) beside them.
//!
//! Life of a query:
//! 1. `parse::parse_first` tokenizes lazily and parses one statement into an `ast::Stmt`
//!    (with its parameters and where the next statement starts).
//! 2. `plan::Binder` resolves names against the `schema::Schema` (a cache of
//!    `sqlite_schema`), picks collations/affinities for comparisons, orders inner joins and
//!    chooses an access path per table (rowid lookup/range, index equality prefix + range,
//!    or scan), producing a `SelectPlan` of `CExpr`s.
//! 3. `exec::Engine` runs the statement over an `exec::store::Store`: `exec::eval` walks the
//!    plan (nested loops, grouping, windows, compound operators, sort, limit), `exec::dml`
//!    checks constraints and writes rows and index entries, `exec::ddl` maintains
//!    `sqlite_schema`. `exec::txnstore` adapts a storage transaction to `Store`;
//!    `exec::memstore` is the model store tests compare it with.
//!
//! Transactions and statement atomicity belong to the caller (crate `parlite`).

pub mod collation;
pub mod exec;
pub mod func;
#[doc(hidden)]
pub mod fuzzing;
pub mod parse;
pub mod plan;
pub mod schema;
pub(crate) mod stack;
pub mod value;
