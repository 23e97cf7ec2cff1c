//! `chart`: PNG charts of tps vs threads from a `--csv` file.

use anyhow::Result;
use std::path::Path;

pub fn run(_input: &Path, _out: &Path) -> Result<()> {
    anyhow::bail!("chart: not built yet")
}
