//! The shell proper: reads input in chunks (a complete SQL statement or a dot-command line),
//! runs them on a `Backend`, prints results in the current output mode and reports errors
//! worded as sqlite3 3.40's shell words them:
//!
//! | input from              | prepare error                        | step error                            |
//! |-------------------------|--------------------------------------|---------------------------------------|
//! | a script (stdin, file)  | `Parse error near line N: MSG`       | `Runtime error near line N: MSG`      |
//! | the prompt              | `Parse error: MSG`                   | `Runtime error: MSG`                  |
//! | a command-line argument | `Error: in prepare, MSG`             | `Error: stepping, MSG`                |
//!
//! N is the line where the failing chunk starts. sqlite3 also prints the SQL with a caret
//! under the error offset; the parlite API does not report offsets, so that part is absent.

use crate::backend::{Backend, Event, ExecError, Phase};
use crate::complete::is_complete;
use crate::output::{Format, Mode, ResultWriter};
use std::io::Write;

/// One unit of input the shell acts on.
#[derive(Clone, Debug, PartialEq)]
pub enum Chunk {
    /// SQL text, complete unless it is what was left at the end of input.
    Sql { text: String, start_line: usize },
    /// A dot-command line (only recognised when no SQL is pending).
    Dot { line: String, line_no: usize },
}

/// Accumulates input lines into chunks as the sqlite3 shell does: blank lines and `#`
/// comment lines between statements are dropped, a `.` line between statements is a
/// command, other lines accumulate until `sqlite3_complete` says the statement is whole.
#[derive(Debug, Default)]
pub struct ChunkReader {
    buffer: String,
    start_line: usize,
    line_no: usize,
}

impl ChunkReader {
    pub fn new() -> Self {
        Self::default()
    }

    /// True while a statement has begun but is not complete (the prompt shows `...>`).
    pub fn is_pending(&self) -> bool {
        !self.buffer.is_empty()
    }

    /// Takes the next input line (without its newline).
    pub fn push(&mut self, line: &str) -> Option<Chunk> {
        self.line_no += 1;
        if self.buffer.is_empty() {
            let t = line.trim_start();
            if t.trim_end().is_empty() {
                return None;
            }
            if t.starts_with('.') {
                return Some(Chunk::Dot {
                    line: line.trim().to_string(),
                    line_no: self.line_no,
                });
            }
            if t.starts_with('#') {
                return None;
            }
            self.start_line = self.line_no;
        }
        self.buffer.push_str(line);
        self.buffer.push('\n');
        // sqlite3_complete needs a `;`, so a line without one cannot finish a statement.
        if line.contains(';') && is_complete(&self.buffer) {
            return self.take();
        }
        None
    }

    /// At end of input: whatever statement text is left (sqlite3 runs it anyway).
    pub fn finish(&mut self) -> Option<Chunk> {
        if self.buffer.trim().is_empty() {
            self.buffer.clear();
            return None;
        }
        self.take()
    }

    /// Drops a pending statement (Ctrl-C at the prompt).
    pub fn clear(&mut self) {
        self.buffer.clear();
    }

    /// The buffered statement; the buffer keeps its capacity for the next one (one
    /// allocation per statement instead of a buffer grown line by line from empty).
    fn take(&mut self) -> Option<Chunk> {
        let text = self.buffer.clone();
        self.buffer.clear();
        Some(Chunk::Sql {
            text,
            start_line: self.start_line,
        })
    }
}

/// Where input comes from; it decides how errors are worded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    Script,
    Prompt,
    Argument,
}

/// What the caller should do after a chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Quit,
}

const HELP: &str = "\
.bail on|off             Stop after hitting an error
.databases               List names and files of attached databases
.exit ?CODE?             Exit this program with return-code CODE
.explain ?on|off|auto?   Change the EXPLAIN formatting mode.  Default: auto
.headers on|off          Turn display of headers on or off
.help                    Show this message
.indexes ?TABLE?         Show names of indexes, of TABLE if given (a LIKE pattern)
.mode MODE               Set output mode: list, csv, column, line or tabs
.nullvalue STRING        Use STRING in place of NULL values
.quit                    Exit this program
.read FILE               Read input from FILE
.schema ?PATTERN?        Show the CREATE statements matching PATTERN
.separator COL ?ROW?     Change the column and row separators
.tables ?PATTERN?        List names of tables and views matching a LIKE pattern
";

pub struct Shell<'b> {
    backend: &'b mut dyn Backend,
    pub format: Format,
    out: Box<dyn Write + 'b>,
    err: Box<dyn Write + 'b>,
    /// Errors reported so far; non-interactive runs exit non-zero when it is not 0.
    pub error_count: usize,
    /// `-bail`: stop at the first error.
    pub bail: bool,
    /// Exit code asked for by `.exit N`.
    pub exit_code: i32,
}

impl<'b> Shell<'b> {
    pub fn new(
        backend: &'b mut dyn Backend,
        out: Box<dyn Write + 'b>,
        err: Box<dyn Write + 'b>,
    ) -> Self {
        Shell {
            backend,
            format: Format::default(),
            out,
            err,
            error_count: 0,
            bail: false,
            exit_code: 0,
        }
    }

    fn report(&mut self, message: &str) {
        // Results written so far must appear before the error, as in sqlite3.
        let _ = self.out.flush();
        let _ = writeln!(self.err, "{message}");
        let _ = self.err.flush();
        self.error_count += 1;
    }

    /// Flushes standard output (before a prompt, or at exit).
    pub fn flush(&mut self) {
        let _ = self.out.flush();
    }

    /// Runs one chunk; `Quit` after `.quit`/`.exit`, or after an error under `-bail`.
    pub fn run_chunk(&mut self, chunk: &Chunk, source: Source) -> Flow {
        let before = self.error_count;
        let flow = match chunk {
            Chunk::Sql { text, start_line } => {
                if let Err(e) = self.run_sql(text) {
                    let message = error_line(&e, source, *start_line);
                    self.report(&message);
                }
                Flow::Continue
            }
            Chunk::Dot { line, .. } => match self.dot_command(line) {
                Ok(flow) => flow,
                Err(message) => {
                    self.report(&message);
                    Flow::Continue
                }
            },
        };
        if self.bail && self.error_count > before {
            return Flow::Quit;
        }
        flow
    }

    /// Runs a whole script, line by line as sqlite3 reads standard input.
    pub fn run_script(&mut self, script: &str) -> Flow {
        let mut reader = ChunkReader::new();
        for line in script.lines() {
            if let Some(chunk) = reader.push(line) {
                if self.run_chunk(&chunk, Source::Script) == Flow::Quit {
                    return Flow::Quit;
                }
            }
        }
        match reader.finish() {
            Some(chunk) => self.run_chunk(&chunk, Source::Script),
            None => Flow::Continue,
        }
    }

    /// Runs a command-line argument: a dot-command or SQL text (not necessarily ending
    /// in `;`). sqlite3 stops at the first error of an argument.
    pub fn run_argument(&mut self, arg: &str) -> Flow {
        let chunk = if arg.trim_start().starts_with('.') {
            Chunk::Dot {
                line: arg.trim().to_string(),
                line_no: 1,
            }
        } else {
            Chunk::Sql {
                text: arg.to_string(),
                start_line: 1,
            }
        };
        self.run_chunk(&chunk, Source::Argument)
    }

    /// Runs SQL text, printing each statement's rows.
    fn run_sql(&mut self, sql: &str) -> Result<(), ExecError> {
        let Shell {
            backend,
            format,
            out,
            ..
        } = self;
        let mut writer: Option<ResultWriter<'_>> = None;
        let mut io_error = None;
        let result = backend.execute(sql, &mut |event| {
            let r = match event {
                Event::Columns(cols) => {
                    writer = Some(ResultWriter::new(format, cols));
                    Ok(())
                }
                Event::Row(cells) => match writer.as_mut() {
                    Some(w) => w.row(out.as_mut(), cells),
                    None => Ok(()),
                },
                Event::Done => match writer.take() {
                    Some(w) => w.finish(out.as_mut()),
                    None => Ok(()),
                },
            };
            if let Err(e) = r {
                io_error.get_or_insert(e);
            }
        });
        if let Some(w) = writer.take() {
            let _ = w.finish(out.as_mut());
        }
        if let Some(e) = io_error {
            return Err(ExecError {
                phase: Phase::Step,
                message: format!("writing output: {e}"),
            });
        }
        result
    }

    /// Runs a query for a dot-command and returns its rows' first column as text.
    fn first_column(&mut self, sql: &str) -> Result<Vec<String>, String> {
        let mut names = Vec::new();
        self.backend
            .execute(sql, &mut |event| {
                if let Event::Row(cells) = event {
                    if let Some(t) = cells.first().and_then(|c| c.text()) {
                        names.push(String::from_utf8_lossy(&t).into_owned());
                    }
                }
            })
            .map_err(|e| format!("Error: {}", e.message))?;
        Ok(names)
    }

    /// Executes one dot-command line; Err is the message for standard error.
    pub fn dot_command(&mut self, line: &str) -> Result<Flow, String> {
        let args = split_dot_args(line.trim_start_matches('.'));
        let Some(cmd) = args.first().map(String::as_str) else {
            return Err(unknown_command(line));
        };
        match (cmd, args.len()) {
            ("quit" | "q", 1) => Ok(Flow::Quit),
            ("exit", 1 | 2) => {
                self.exit_code = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(0);
                Ok(Flow::Quit)
            }
            ("help", _) => {
                let _ = self.out.write_all(HELP.as_bytes());
                Ok(Flow::Continue)
            }
            ("headers" | "header", 2) => {
                self.format.headers =
                    boolean_value(&args[1]).ok_or_else(|| "Usage: .headers on|off".to_string())?;
                Ok(Flow::Continue)
            }
            ("headers" | "header", _) => Err("Usage: .headers on|off".to_string()),
            ("explain", 1) => {
                self.format.auto_explain = true;
                Ok(Flow::Continue)
            }
            ("explain", 2) => {
                self.format.auto_explain = args[1] == "auto"
                    || boolean_value(&args[1])
                        .ok_or_else(|| "Usage: .explain ?on|off|auto?".to_string())?;
                Ok(Flow::Continue)
            }
            ("mode", 1) => {
                let _ = writeln!(self.out, "current output mode: {}", self.format.mode.name());
                Ok(Flow::Continue)
            }
            ("mode", _) => match Mode::from_name(&args[1]) {
                Some(m) => {
                    self.format.set_mode(m);
                    Ok(Flow::Continue)
                }
                None => Err("Error: mode should be one of: column csv line list tabs".to_string()),
            },
            ("separator", 2 | 3) => {
                self.format.col_separator = unescape(&args[1]);
                if let Some(row) = args.get(2) {
                    self.format.row_separator = unescape(row);
                }
                Ok(Flow::Continue)
            }
            ("nullvalue", 2) => {
                self.format.null_value = args[1].clone();
                Ok(Flow::Continue)
            }
            ("tables", 1 | 2) => {
                let mut sql = "SELECT name FROM sqlite_schema WHERE type IN ('table','view') \
                               AND name NOT LIKE 'sqlite_%'"
                    .to_string();
                if let Some(p) = args.get(1) {
                    sql.push_str(&format!(" AND name LIKE {}", sql_quote(p)));
                }
                sql.push_str(" ORDER BY 1");
                let names = self.first_column(&sql)?;
                let _ = self.out.write_all(table_list_layout(&names).as_bytes());
                Ok(Flow::Continue)
            }
            ("indexes" | "indices", 1 | 2) => {
                let mut sql = "SELECT name FROM sqlite_schema WHERE type = 'index'".to_string();
                if let Some(p) = args.get(1) {
                    sql.push_str(&format!(" AND tbl_name LIKE {}", sql_quote(p)));
                }
                sql.push_str(" ORDER BY 1");
                let names = self.first_column(&sql)?;
                let _ = self.out.write_all(table_list_layout(&names).as_bytes());
                Ok(Flow::Continue)
            }
            ("databases", 1) => {
                // sqlite3's layout: `name: file r/w`, `""` for a database without a file.
                let rows = self.first_column(
                    "SELECT name || ': ' || CASE file WHEN '' THEN '\"\"' ELSE file END \
                     || ' r/w' FROM pragma_database_list",
                )?;
                for r in rows {
                    let _ = writeln!(self.out, "{r}");
                }
                Ok(Flow::Continue)
            }
            ("bail", 2) => {
                self.bail =
                    boolean_value(&args[1]).ok_or_else(|| "Usage: .bail on|off".to_string())?;
                Ok(Flow::Continue)
            }
            ("read", 2) => {
                let script = std::fs::read(&args[1])
                    .map_err(|e| format!("Error: cannot open \"{}\": {e}", args[1]))?;
                Ok(self.run_script(&String::from_utf8_lossy(&script)))
            }
            ("schema", 1 | 2) => {
                let mut sql = "SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL".to_string();
                if let Some(p) = args.get(1) {
                    sql.push_str(&format!(" AND tbl_name LIKE {}", sql_quote(p)));
                }
                sql.push_str(" ORDER BY rowid");
                for s in self.first_column(&sql)? {
                    let _ = writeln!(self.out, "{};", schema_line(&s));
                }
                Ok(Flow::Continue)
            }
            _ => Err(unknown_command(line)),
        }
    }
}

/// The error line for a failed SQL chunk (see the module table).
pub fn error_line(e: &ExecError, source: Source, start_line: usize) -> String {
    let m = &e.message;
    match (source, e.phase) {
        (Source::Script, Phase::Prepare) => format!("Parse error near line {start_line}: {m}"),
        (Source::Script, Phase::Step) => format!("Runtime error near line {start_line}: {m}"),
        (Source::Prompt, Phase::Prepare) => format!("Parse error: {m}"),
        (Source::Prompt, Phase::Step) => format!("Runtime error: {m}"),
        (Source::Argument, Phase::Prepare) => format!("Error: in prepare, {m}"),
        (Source::Argument, Phase::Step) => format!("Error: stepping, {m}"),
    }
}

fn unknown_command(line: &str) -> String {
    let name = line.trim().trim_start_matches('.');
    let name = name.split_whitespace().next().unwrap_or("");
    format!("Error: unknown command or invalid arguments:  \"{name}\". Enter \".help\" for help")
}

/// shell.c `booleanValue` for the words it accepts.
fn boolean_value(s: &str) -> Option<bool> {
    match s.to_ascii_lowercase().as_str() {
        "on" | "yes" | "true" | "1" => Some(true),
        "off" | "no" | "false" | "0" => Some(false),
        _ => None,
    }
}

/// Splits a dot-command into words; `'...'` and `"..."` group words with spaces.
pub fn split_dot_args(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = s.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let Some(&c) = chars.peek() else {
            return out;
        };
        let mut word = String::new();
        if c == '\'' || c == '"' {
            chars.next();
            for d in chars.by_ref() {
                if d == c {
                    break;
                }
                word.push(d);
            }
        } else {
            while let Some(&d) = chars.peek() {
                if d.is_whitespace() {
                    break;
                }
                word.push(d);
                chars.next();
            }
        }
        out.push(word);
    }
}

/// Backslash escapes in `.separator` arguments (`\t`, `\n`, `\r`, `\\`).
fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

/// A SQL string literal.
fn sql_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// `.tables` output: names in columns down then across, each padded to the longest name,
/// two spaces apart, as many columns as fit 80 characters.
pub fn table_list_layout(names: &[String]) -> String {
    if names.is_empty() {
        return String::new();
    }
    let max_len = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
    let cols = (80 / (max_len + 2)).max(1);
    let rows = names.len().div_ceil(cols);
    let mut out = String::new();
    for i in 0..rows {
        let mut j = i;
        while j < names.len() {
            if j >= rows {
                out.push_str("  ");
            }
            out.push_str(&format!("{:<width$}", names[j], width = max_len));
            j += rows;
        }
        out.push('\n');
    }
    out
}

/// `.schema` prints `CREATE TABLE "x"(...)` as `CREATE TABLE IF NOT EXISTS "x"(...)`, as
/// sqlite3's printSchemaLine does for a quoted table name.
fn schema_line(sql: &str) -> String {
    match sql.strip_prefix("CREATE TABLE ") {
        Some(rest) if rest.starts_with('"') || rest.starts_with('\'') => {
            format!("CREATE TABLE IF NOT EXISTS {rest}")
        }
        _ => sql.to_string(),
    }
}
