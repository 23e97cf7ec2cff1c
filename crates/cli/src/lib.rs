//! parlite-cli: the `parlite` shell, a front end over the `parlite` API that behaves like
//! SQLite's `sqlite3` shell, plus pieces other tools reuse (statement completeness, SQLite's
//! number formatting).
//!
//! Layout: `args` (command line) → `app` (what to run) → `shell` (chunks, dot-commands,
//! errors; `dump` and `import` for `.dump` and `.import`) → `output` (the output modes;
//! `columnar` for column/table/markdown/box, `literal` for values as SQL and JSON text,
//! `fp80` for sqlite3 3.40's REAL digits; `explain` and `eqp` for EXPLAIN and query plans) → `backend` (the trait the database sits
//! behind). Only `parlite_backend` calls the parlite API, and it is built with the
//! `parlite-api` feature (on by default; without it the binary only says it is not built).

pub mod app;
pub mod args;
pub mod backend;
pub mod columnar;
pub use parlite::complete;
pub mod dump;
pub mod eqp;
pub mod explain;
pub mod fp80;
pub mod import;
pub mod interactive;
pub mod literal;
pub mod numfmt;
pub mod output;
#[cfg(feature = "parlite-api")]
pub mod parlite_backend;
pub mod shell;
