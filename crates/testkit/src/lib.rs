//! parlite-testkit: the sqllogictest runner, the speedtest1 checker and the SQLite oracle
//! used by tests (dev-only; nothing in the product depends on it).
//!
//! Layout: `engine` is the contract every engine meets, `sqlite` and `parlite_engine` meet it,
//! `oracle` compares an engine with SQLite statement by statement,
//! `value` holds SQLite's type-conversion rules the runner renders with, `slt` parses and runs
//! .test files, `speedtest` replays speedtest1 scripts like the sqlite3 shell.
//!
//! Running (from the workspace root; the corpus comes from $PARLITE_CORPUS or
//! ../shared/corpus):
//!
//! ```text
//! cargo run --release -p parlite-testkit --bin parlite-slt -- --engine sqlite
//! cargo run --release -p parlite-testkit --bin parlite-slt -- --engine sqlite -v \
//!     ../shared/corpus/sqllogictest/select1.test ../shared/corpus/sqllogictest/evidence
//! cargo run --release -p parlite-testkit --bin parlite-slt -- speedtest --engine sqlite \
//!     ../shared/corpus/speedtest1/speedtest1-main-size100.sql.xz \
//!     ../shared/corpus/speedtest1/speedtest1-main-size100.expected.xz
//! ```
//!
//! `--engine parlite` (the default) comes from the `parlite-engine` feature, on by default;
//! `--no-default-features` builds the tools with SQLite alone. The runner prints `path: N passed, N failed, N skipped` per file
//! and the total on the last line; it exits 1 when anything failed, 2 when it could not run.

pub mod engine;
pub mod oracle;
#[cfg(feature = "parlite-engine")]
pub mod parlite_engine;
pub mod slt;
pub mod speedtest;
pub mod sqlite;
pub mod value;

pub use engine::{Engine, EngineError, QueryRows};
pub use value::Value;

/// The engines `--engine` accepts.
pub const ENGINE_NAMES: [&str; 2] = ["parlite", "sqlite"];

/// Opens engine `name` on the database at `path` (`:memory:` for a private one).
pub fn open_engine(name: &str, path: &str) -> Result<Box<dyn Engine>, EngineError> {
    match name {
        "sqlite" => Ok(Box::new(sqlite::SqliteEngine::open(path)?)),
        "parlite" => open_parlite(path),
        other => Err(EngineError {
            code: 1,
            message: format!(
                "unknown engine {other:?} (known: {})",
                ENGINE_NAMES.join(", ")
            ),
        }),
    }
}

#[cfg(feature = "parlite-engine")]
fn open_parlite(path: &str) -> Result<Box<dyn Engine>, EngineError> {
    Ok(Box::new(parlite_engine::ParliteEngine::open(path)?))
}

#[cfg(not(feature = "parlite-engine"))]
fn open_parlite(_path: &str) -> Result<Box<dyn Engine>, EngineError> {
    Err(EngineError {
        code: 1,
        message: "the parlite engine is not built in (the `parlite-engine` feature is off); \
                  rebuild with it, or use `--engine sqlite`"
            .to_string(),
    })
}
