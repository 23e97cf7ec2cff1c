//! parlite-cli: the `parlite` shell, a front end over the `parlite` API that behaves like
//! SQLite's `sqlite3` shell, plus the pieces of it other tools reuse (statement completeness,
//! SQLite's number formatting).

pub mod complete;
pub mod numfmt;
