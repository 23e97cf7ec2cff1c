//! parlite-sql: SQLite's SQL dialect over parlite-storage.
//!
//! The layout reads as the pipeline: `parse` (lexer, AST, parser) → `plan` → `exec`,
//! with `value` (SQLite's dynamic typing) and `func` (built-in functions) beside them.

pub mod collation;
pub mod exec;
pub mod func;
pub mod parse;
pub mod plan;
pub mod schema;
pub mod value;
