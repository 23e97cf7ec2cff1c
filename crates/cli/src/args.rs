//! Command-line arguments, sqlite3-style: `parlite [OPTIONS] [DATABASE] [SQL...]`.
//!
//! sqlite3 spells its options with one dash (`-header`, `-csv`) and also accepts two; clap
//! wants two for long names, so `parse_args` rewrites the one-dash spelling of each known
//! option before handing the arguments to clap.

use clap::Parser;

#[derive(Parser, Debug, Clone, PartialEq)]
#[command(
    name = "parlite",
    version,
    about = "parlite's shell: run SQL on a parlite (SQLite-format) database",
    after_help = "Options may be given with one dash, as sqlite3 spells them (-header, -csv)."
)]
pub struct Options {
    /// The database file; a private in-memory database when omitted or `:memory:`.
    pub database: Option<String>,
    /// SQL text or dot-commands to run, in order, instead of reading standard input.
    pub sql: Vec<String>,
    /// Print column names before the rows.
    #[arg(long, overrides_with = "noheader")]
    pub header: bool,
    /// Do not print column names (the default).
    #[arg(long, overrides_with = "header")]
    pub noheader: bool,
    /// Output mode csv.
    #[arg(long, overrides_with_all = ["list", "column"])]
    pub csv: bool,
    /// Output mode list (the default): values separated by `|`.
    #[arg(long, overrides_with_all = ["csv", "column"])]
    pub list: bool,
    /// Output mode column: aligned columns.
    #[arg(long, overrides_with_all = ["csv", "list"])]
    pub column: bool,
    /// The column separator (list mode default `|`).
    #[arg(long, value_name = "SEP")]
    pub separator: Option<String>,
    /// Text to print for NULL (default empty).
    #[arg(long, value_name = "TEXT")]
    pub nullvalue: Option<String>,
    /// Stop at the first error.
    #[arg(long)]
    pub bail: bool,
    /// Never prompt, even when standard input is a terminal.
    #[arg(long)]
    pub batch: bool,
    /// Prompt even when standard input is not a terminal.
    #[arg(long)]
    pub interactive: bool,
}

/// The long options sqlite3 users type with one dash.
const ONE_DASH_OPTIONS: &[&str] = &[
    "header",
    "noheader",
    "csv",
    "list",
    "column",
    "separator",
    "nullvalue",
    "bail",
    "batch",
    "interactive",
    "version",
    "help",
];

/// Parses `args` (the program name first), accepting sqlite3's one-dash spellings.
pub fn parse_args<I, S>(args: I) -> Result<Options, clap::Error>
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    let mut out = Vec::new();
    let mut options_done = false;
    for (i, arg) in args.into_iter().map(Into::into).enumerate() {
        if arg == "--" {
            options_done = true;
        }
        let one_dash = !options_done
            && i > 0
            && arg.starts_with('-')
            && !arg.starts_with("--")
            && ONE_DASH_OPTIONS.contains(&arg[1..].split('=').next().unwrap_or(""));
        out.push(if one_dash { format!("-{arg}") } else { arg });
    }
    Options::try_parse_from(out)
}

impl Options {
    /// The database path to open (`:memory:` when none was given).
    pub fn database_path(&self) -> &str {
        self.database.as_deref().unwrap_or(":memory:")
    }
}
