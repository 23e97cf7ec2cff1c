//! The sqllogictest runner: `parse` reads a .test file into records, `run` executes them on
//! an engine and scores them, `supervise` runs a file in a child process so a hanging or
//! crashing engine costs one file.

pub mod parse;
pub mod run;
pub mod supervise;

use crate::engine::{Engine, EngineError};
use std::path::{Path, PathBuf};

pub use run::{FileOutcome, Tally};

/// Every `.test` file at or under `path`, in sorted order so runs are reproducible.
pub fn collect_test_files(path: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    if path.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)?
            .map(|e| e.map(|e| e.path()))
            .collect::<Result<_, _>>()?;
        entries.sort();
        for entry in entries {
            if entry.is_dir() {
                out.extend(collect_test_files(&entry)?);
            } else if entry.extension().is_some_and(|e| e == "test") {
                out.push(entry);
            }
        }
    } else if path.exists() {
        out.push(path.to_path_buf());
    } else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("{}: no such file or folder", path.display()),
        ));
    }
    Ok(out)
}

/// Runs one .test file's text on `engine`.
pub fn run_text(engine: &mut dyn Engine, text: &str) -> FileOutcome {
    run::run_records(engine, &parse::parse(text))
}

/// Reads and runs one .test file on a fresh engine from `new_engine`.
pub fn run_file(
    path: &Path,
    new_engine: &dyn Fn() -> Result<Box<dyn Engine>, EngineError>,
) -> Result<FileOutcome, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let text = String::from_utf8_lossy(&bytes);
    let mut engine = new_engine().map_err(|e| format!("opening the engine: {e}"))?;
    Ok(run_text(engine.as_mut(), &text))
}
