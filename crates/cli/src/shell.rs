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

use crate::backend::{AutoPlan, Backend, Cell, Event, ExecError, Phase, UserRun};
use crate::complete::is_complete;
use crate::dump::{dump, schema_line, sql_string, DumpOptions};
use crate::literal;
use crate::output::{Drawn, Format, Mode, ResultWriter};
use std::io::Write;
use std::time::Instant;

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

/// Whether SQL text holds a `;` outside its string literals, quoted names and comments:
/// text that would end the statement it is put in.
fn has_statement_end(text: &str) -> bool {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b';' => return true,
            q @ (b'\'' | b'"' | b'`' | b'[') => {
                let close = if q == b'[' { b']' } else { q };
                i += 1;
                while i < b.len() && b[i] != close {
                    i += 1;
                }
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    i += 1;
                }
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    false
}

/// `.parameter`'s help, which sqlite3 prints for a subcommand it does not know.
const PARAMETER_HELP: &str = "\
.parameter CMD ...       Manage SQL parameter bindings
   clear                   Erase all bindings
   init                    Initialize the TEMP table that holds bindings
   list                    List the current parameter bindings
   set PARAMETER VALUE     Given SQL parameter PARAMETER a value of VALUE
                           PARAMETER should start with one of: $ : @ ?
   unset PARAMETER         Remove PARAMETER from the binding table
";

const HELP: &str = "\
.backup ?DB? FILE        Backup DB (default \"main\") to FILE
     Options:
       --async              Write to FILE without journal and fsync()
.bail on|off             Stop after hitting an error
.cd DIRECTORY            Change the working directory to DIRECTORY
.changes on|off          Show number of rows changed by SQL
.databases               List names and files of attached databases
.dump ?OBJECTS?          Render database content as SQL
   Options:
     --data-only            Output only INSERT statements
     --newlines             Allow unescaped newline characters in output
     --nosys                Omit system tables (ex: \"sqlite_stat1\")
   OBJECTS is a LIKE pattern for tables to dump
.echo on|off             Turn command echo on or off
.eqp on|off|full|...     Enable or disable automatic EXPLAIN QUERY PLAN
.exit ?CODE?             Exit this program with return-code CODE
.fullschema              Show schema and the content of sqlite_stat tables
.explain ?on|off|auto?   Change the EXPLAIN formatting mode.  Default: auto
.headers on|off          Turn display of headers on or off
.help                    Show this message
.import FILE TABLE       Import data from FILE into TABLE
   Options:
     --ascii               Use \\037 and \\036 as column and row separators
     --csv                 Use , and \\n as column and row separators
     --skip N              Skip the first N rows of input
   Without --csv or --ascii the current .separator values are used.  A TABLE
   that does not exist is created, its columns named by the first row.
.indexes ?TABLE?         Show names of indexes, of TABLE if given (a LIKE pattern)
.mode MODE ?OPTIONS?     Set output mode
   MODE is one of:
     ascii       Columns/rows delimited by 0x1F and 0x1E
     box         Tables using unicode box-drawing characters
     csv         Comma-separated values
     column      Output in columns.  (See .width)
     html        HTML <table> code
     insert      SQL insert statements for TABLE
     json        Results in a JSON array
     line        One value per line
     list        Values delimited by \"|\"
     markdown    Markdown table format
     qbox        Shorthand for \"box --wrap 60 --quote\"
     quote       Escape answers as for SQL
     table       ASCII-art table
     tabs        Tab-separated values
     tcl         TCL list elements
   OPTIONS: (for columnar modes)
     --wrap N       Wrap output lines to no longer than N characters
     --wordwrap B   Wrap or not at word boundaries per B (on/off)
     --ww           Shorthand for \"--wordwrap 1\"
     --quote        Quote output text as SQL literals
     --noquote      Do not quote output text
.nullvalue STRING        Use STRING in place of NULL values
.once FILE               Output for the next SQL command only to FILE
.open ?OPTIONS? ?FILE?   Close existing database and reopen FILE
     Options:
        --new           Initialize FILE to an empty database
        --readonly      Open FILE readonly
.output ?FILE?           Send output to FILE or stdout if FILE is omitted
.parameter CMD ...       Manage SQL parameter bindings
.print STRING...         Print literal STRING
.prompt MAIN CONTINUE    Replace the standard prompts
.quit                    Exit this program
.read FILE               Read input from FILE
.restore ?DB? FILE       Restore content of DB (default \"main\") from FILE
.save ?OPTIONS? FILE     Write database to FILE (an alias for .backup ...)
.schema ?PATTERN?        Show the CREATE statements matching PATTERN
.separator COL ?ROW?     Change the column and row separators
.shell CMD ARGS...       Run CMD ARGS... in a system shell
.show                    Show the current values for various settings
.system CMD ARGS...      Run CMD ARGS... in a system shell
.tables ?PATTERN?        List names of tables and views matching a LIKE pattern
.timeout MS              Try opening locked tables for MS milliseconds
.timer on|off            Turn SQL timer on or off
.width NUM1 NUM2 ...     Set minimum column widths for columnar output
";

/// Where results go after `.output FILE` or `.once FILE`.
struct Redirect<'b> {
    file: Box<dyn Write + 'b>,
    name: String,
    /// `.once`: only the next command's output.
    once: bool,
}

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
    /// The database as named on the command line (`.show`'s filename).
    pub filename: String,
    /// `.headers` (or -header/-noheader) was given: `.mode column` then leaves it alone.
    pub headers_set: bool,
    redirect: Option<Redirect<'b>>,
    /// `.echo`, `.changes`, `.timer`.
    echo: bool,
    count_changes: bool,
    timer: bool,
    /// `.parameter`'s bindings, ordered by name (sqlite3 keeps them in a WITHOUT ROWID
    /// table keyed by name).
    params: Vec<(String, Cell)>,
    /// `.eqp`: what it shows before each statement, and the word `.show` reports.
    auto_plan: (AutoPlan, &'static str),
    /// `.prompt`: the main and continuation prompts.
    pub prompts: (String, String),
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
            filename: ":memory:".to_string(),
            headers_set: false,
            redirect: None,
            echo: false,
            count_changes: false,
            timer: false,
            params: Vec::new(),
            auto_plan: (AutoPlan::Off, "off"),
            prompts: ("parlite> ".to_string(), "   ...> ".to_string()),
        }
    }

    /// The backend, the format and where results go now (the `.output`/`.once` file, else
    /// standard output), borrowed apart.
    fn parts(&mut self) -> (&mut dyn Backend, &mut Format, &mut dyn Write) {
        let out: &mut dyn Write = match &mut self.redirect {
            Some(r) => r.file.as_mut(),
            None => self.out.as_mut(),
        };
        (&mut *self.backend, &mut self.format, out)
    }

    /// Where results go now.
    fn output(&mut self) -> &mut dyn Write {
        self.parts().2
    }

    /// Closes a `.output`/`.once` file; output goes to standard output again.
    fn end_redirect(&mut self) {
        if let Some(mut r) = self.redirect.take() {
            let _ = r.file.flush();
        }
    }

    fn report(&mut self, message: &str) {
        // Results written so far must appear before the error, as in sqlite3.
        self.flush();
        let _ = writeln!(self.err, "{message}");
        let _ = self.err.flush();
        self.error_count += 1;
    }

    /// Flushes standard output (before a prompt, or at exit).
    pub fn flush(&mut self) {
        if let Some(r) = &mut self.redirect {
            let _ = r.file.flush();
        }
        let _ = self.out.flush();
    }

    /// Runs one chunk; `Quit` after `.quit`/`.exit`, or after an error under `-bail`.
    pub fn run_chunk(&mut self, chunk: &Chunk, source: Source) -> Flow {
        let before = self.error_count;
        // `.once` redirects the command after it, whatever that is.
        let once_before = self.redirect.as_ref().is_some_and(|r| r.once);
        let flow = match chunk {
            Chunk::Sql { text, start_line } => {
                if self.echo {
                    let _ = writeln!(self.output(), "{}", text.trim_end_matches('\n'));
                }
                let started = self.timer.then(Timer::start);
                let result = self.run_sql(text);
                // sqlite3 prints the timer line on standard output even under `.output`.
                if let Some(t) = started {
                    let _ = writeln!(self.out, "{}", t.report());
                }
                match result {
                    Err(e) => {
                        let message = error_line(&e, source, *start_line);
                        self.report(&message);
                    }
                    Ok(()) if self.count_changes => self.print_changes(),
                    Ok(()) => {}
                }
                Flow::Continue
            }
            Chunk::Dot { line, .. } => {
                if self.echo {
                    let _ = writeln!(self.output(), "{line}");
                }
                match self.dot_command(line) {
                    Ok(flow) => flow,
                    Err(message) => {
                        self.report(&message);
                        Flow::Continue
                    }
                }
            }
        };
        if once_before && self.redirect.as_ref().is_some_and(|r| r.once) {
            self.end_redirect();
        }
        if self.bail && self.error_count > before {
            return Flow::Quit;
        }
        flow
    }

    /// `.changes on`: the counts after a statement, as sqlite3 prints them.
    fn print_changes(&mut self) {
        let counts = self.first_row("SELECT changes(), total_changes()");
        if let Ok([changes, total]) = counts.as_deref() {
            let line = format!("changes: {changes}   total_changes: {total}");
            let _ = writeln!(self.output(), "{line}");
        }
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
        let params = std::mem::take(&mut self.params);
        let run = UserRun {
            params: &params,
            plan: self.auto_plan.0,
        };
        let (backend, format, out) = match &mut self.redirect {
            Some(r) => (&mut *self.backend, &mut self.format, r.file.as_mut()),
            None => (&mut *self.backend, &mut self.format, self.out.as_mut()),
        };
        let mut columns_max = 0;
        let mut writer: Option<ResultWriter<'_>> = None;
        let mut io_error = None;
        let result = backend.execute_user(sql, &run, &mut |event| {
            let r = match event {
                Event::Columns(cols) => {
                    columns_max = columns_max.max(cols.len());
                    writer = Some(ResultWriter::new(format, cols));
                    Ok(())
                }
                Event::PlanColumns(cols) => {
                    writer = Some(ResultWriter::drawn(format, cols, Drawn::Plan));
                    Ok(())
                }
                Event::ListingColumns(cols) => {
                    writer = Some(ResultWriter::drawn(format, cols, Drawn::Listing));
                    Ok(())
                }
                Event::Row(cells) => match writer.as_mut() {
                    Some(w) => w.row(out, cells),
                    None => Ok(()),
                },
                Event::Done => match writer.take() {
                    Some(w) => w.finish(out),
                    None => Ok(()),
                },
            };
            if let Err(e) = r {
                io_error.get_or_insert(e);
            }
        });
        if let Some(w) = writer.take() {
            let _ = w.finish(out);
        }
        self.params = params;
        let format = &mut self.format;
        // sqlite3 extends `.width` to the widest columnar result (what `.show` lists).
        if format.mode.is_columnar() && format.widths.len() < columns_max {
            format.widths.resize(columns_max, 0);
        }
        if let Some(e) = io_error {
            return Err(ExecError {
                phase: Phase::Step,
                message: format!("writing output: {e}"),
                code: 1,
            });
        }
        result
    }

    /// Runs a query for a dot-command and returns its rows' first column as text.
    fn first_column(&mut self, sql: &str) -> Result<Vec<String>, String> {
        let rows = self.rows(sql)?;
        Ok(rows
            .into_iter()
            .filter_map(|r| r.into_iter().next())
            .collect())
    }

    /// Runs a query for a dot-command and returns its first row as text.
    fn first_row(&mut self, sql: &str) -> Result<Vec<String>, String> {
        Ok(self.rows(sql)?.into_iter().next().unwrap_or_default())
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
                let _ = self.output().write_all(HELP.as_bytes());
                Ok(Flow::Continue)
            }
            ("headers" | "header", 2) => {
                self.format.headers =
                    boolean_value(&args[1]).ok_or_else(|| "Usage: .headers on|off".to_string())?;
                self.headers_set = true;
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
            ("mode", _) => self.set_mode(&args[1..]).map(|()| Flow::Continue),
            ("width", _) => {
                // shell.c `integerValue`: a word that is no number counts as 0.
                self.format.widths = args[1..].iter().map(|a| a.parse().unwrap_or(0)).collect();
                Ok(Flow::Continue)
            }
            ("separator", 2 | 3) => {
                self.format.col_separator = args[1].clone();
                if let Some(row) = args.get(2) {
                    self.format.row_separator = row.clone();
                }
                Ok(Flow::Continue)
            }
            ("nullvalue", 2) => {
                self.format.null_value = args[1].clone();
                Ok(Flow::Continue)
            }
            ("echo", 2) => {
                self.echo =
                    boolean_value(&args[1]).ok_or_else(|| "Usage: .echo on|off".to_string())?;
                Ok(Flow::Continue)
            }
            ("changes", 2) => {
                self.count_changes =
                    boolean_value(&args[1]).ok_or_else(|| "Usage: .changes on|off".to_string())?;
                Ok(Flow::Continue)
            }
            ("timer", 2) => {
                self.timer =
                    boolean_value(&args[1]).ok_or_else(|| "Usage: .timer on|off".to_string())?;
                Ok(Flow::Continue)
            }
            ("print", _) => {
                let text = args[1..].join(" ");
                let _ = writeln!(self.output(), "{text}");
                Ok(Flow::Continue)
            }
            ("show", 1) => {
                let text = self.settings();
                let _ = self.output().write_all(text.as_bytes());
                Ok(Flow::Continue)
            }
            ("output", 1 | 2) => {
                self.end_redirect();
                match args.get(1).map(String::as_str) {
                    None | Some("stdout") => Ok(Flow::Continue),
                    Some(file) => self.redirect_to(file, false).map(|()| Flow::Continue),
                }
            }
            ("once", 2) => {
                self.end_redirect();
                self.redirect_to(&args[1], true).map(|()| Flow::Continue)
            }
            ("dump", _) => {
                let opts = DumpOptions::parse(&args[1..])?;
                let (backend, _, out) = self.parts();
                let errors =
                    dump(backend, out, &opts).map_err(|e| format!("Error: writing output: {e}"))?;
                if errors > 0 {
                    self.error_count += 1;
                }
                Ok(Flow::Continue)
            }
            ("import", _) => crate::import::import(self, &args[1..]).map(|()| Flow::Continue),
            ("backup" | "save", _) => self.backup(&args[1..]).map(|()| Flow::Continue),
            ("restore", 2 | 3) => {
                let (db, file) = match args.len() {
                    3 => (args[1].as_str(), args[2].as_str()),
                    _ => ("main", args[1].as_str()),
                };
                self.backend.restore(db, file).map(|()| Flow::Continue)
            }
            ("restore", _) => Err("Usage: .restore ?DB? FILE".to_string()),
            ("tables", 1 | 2) => {
                let mut sql = "SELECT name FROM sqlite_schema WHERE type IN ('table','view') \
                               AND name NOT LIKE 'sqlite_%'"
                    .to_string();
                if let Some(p) = args.get(1) {
                    sql.push_str(&format!(" AND name LIKE {}", sql_string(p)));
                }
                sql.push_str(" ORDER BY 1");
                let names = self.first_column(&sql)?;
                let _ = self
                    .output()
                    .write_all(table_list_layout(&names).as_bytes());
                Ok(Flow::Continue)
            }
            ("indexes" | "indices", 1 | 2) => {
                let mut sql = "SELECT name FROM sqlite_schema WHERE type = 'index'".to_string();
                if let Some(p) = args.get(1) {
                    sql.push_str(&format!(" AND tbl_name LIKE {}", sql_string(p)));
                }
                sql.push_str(" ORDER BY 1");
                let names = self.first_column(&sql)?;
                let _ = self
                    .output()
                    .write_all(table_list_layout(&names).as_bytes());
                Ok(Flow::Continue)
            }
            ("databases", 1) => {
                // sqlite3's layout: `name: file r/w`, `""` for a database without a file.
                let rows = self.first_column(
                    "SELECT name || ': ' || CASE file WHEN '' THEN '\"\"' ELSE file END \
                     || ' r/w' FROM pragma_database_list",
                )?;
                for r in rows {
                    let _ = writeln!(self.output(), "{r}");
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
                    sql.push_str(&format!(" AND tbl_name LIKE {}", sql_string(p)));
                }
                sql.push_str(" ORDER BY rowid");
                for s in self.first_column(&sql)? {
                    let _ = self.output().write_all(schema_line(&s, ";\n").as_bytes());
                }
                Ok(Flow::Continue)
            }
            ("open", _) => self.open(&args[1..]).map(|()| Flow::Continue),
            ("parameter" | "param", _) => self.parameter(&args[1..]).map(|()| Flow::Continue),
            ("timeout", _) => {
                // shell.c `integerValue`: a word that is no number counts as 0.
                let ms: i64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(0);
                self.exec_quiet(&format!("PRAGMA busy_timeout = {ms}"))
                    .map(|()| Flow::Continue)
            }
            ("eqp", 2) => {
                self.auto_plan = match args[1].as_str() {
                    "full" => (AutoPlan::Full, "full"),
                    // parlite's triggers have no listing of their own to add.
                    "trigger" => (AutoPlan::Full, "trigger"),
                    word => match boolean_value(word) {
                        Some(true) => (AutoPlan::On, "on"),
                        Some(false) => (AutoPlan::Off, "off"),
                        None => {
                            return Err(format!(
                                "ERROR: Not a boolean value: \"{word}\". Assuming \"no\"."
                            ))
                        }
                    },
                };
                Ok(Flow::Continue)
            }
            ("eqp", _) => Err("Usage: .eqp off|on|trace|trigger|full".to_string()),
            ("shell" | "system", n) if n >= 2 => {
                self.system(&args[1..]);
                Ok(Flow::Continue)
            }
            ("shell" | "system", _) => Err("Usage: .system COMMAND".to_string()),
            ("cd", 2) => std::env::set_current_dir(&args[1])
                .map(|()| Flow::Continue)
                .map_err(|_| format!("Cannot change to directory \"{}\"", args[1])),
            ("cd", _) => Err("Usage: .cd DIRECTORY".to_string()),
            ("prompt", n) if n >= 2 => {
                self.prompts.0 = args[1].clone();
                if let Some(c) = args.get(2) {
                    self.prompts.1 = c.clone();
                }
                Ok(Flow::Continue)
            }
            ("prompt", _) => Err("Usage: .prompt MAIN CONTINUE".to_string()),
            ("fullschema", 1) => {
                self.full_schema()?;
                Ok(Flow::Continue)
            }
            ("fullschema", _) => Err("Usage: .fullschema".to_string()),
            _ => Err(unknown_command(line)),
        }
    }

    /// `.open ?--new? ?--readonly? ?FILE?`: closes the database and opens FILE (a new
    /// in-memory database without one). `--new` empties FILE first: the file and
    /// parlite's two log files beside it are removed.
    fn open(&mut self, args: &[String]) -> Result<(), String> {
        let (mut new, mut read_only, mut file) = (false, false, None);
        for a in args {
            match a.strip_prefix("--").or_else(|| a.strip_prefix('-')) {
                Some("new") => new = true,
                Some("readonly") => read_only = true,
                Some(_) if file.is_none() => return Err(format!("unknown option: {a}")),
                _ if file.is_some() => return Err(format!("extra argument: \"{a}\"")),
                _ => file = Some(a.clone()),
            }
        }
        let path = file.unwrap_or_default();
        let in_memory = path.is_empty() || path == ":memory:";
        if new && !in_memory {
            // Closed first: this process may hold the file.
            self.backend.open(":memory:", false)?;
            for f in [
                path.clone(),
                format!("{path}-plog"),
                format!("{path}-plog2"),
            ] {
                match std::fs::remove_file(&f) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(format!("Error: cannot remove \"{f}\": {e}")),
                }
            }
        }
        self.backend
            .open(&path, read_only)
            .map_err(|e| format!("Error: unable to open database \"{path}\": {e}"))?;
        self.filename = if in_memory {
            ":memory:".to_string()
        } else {
            path
        };
        Ok(())
    }

    /// `.parameter init|list|clear|set KEY VALUE|unset KEY`, as sqlite3 keeps them. `set`
    /// evaluates VALUE as an SQL expression, or takes it as text when it does not parse as
    /// one; `list` shows each name (padded to the longest, at most 40) and its value as
    /// an SQL literal.
    fn parameter(&mut self, args: &[String]) -> Result<(), String> {
        match (args.first().map(String::as_str), args.len()) {
            (Some("init"), 1) => Ok(()),
            (Some("clear"), 1) => {
                self.params.clear();
                Ok(())
            }
            (Some("list"), 1) => {
                let width = self
                    .params
                    .iter()
                    .map(|(k, _)| k.chars().count())
                    .max()
                    .unwrap_or(0)
                    .min(40);
                // The values as SQL's quote() writes them (shell.c selects quote(value)).
                for (k, v) in self.params.clone() {
                    let mut quoted = String::new();
                    let run = UserRun {
                        params: &[("?1".to_string(), v)],
                        plan: AutoPlan::Off,
                    };
                    self.backend
                        .execute_user("SELECT quote(?1)", &run, &mut |event| {
                            if let Event::Row(cells) = event {
                                let text = cells.first().and_then(Cell::text).unwrap_or_default();
                                quoted = String::from_utf8_lossy(&text).into_owned();
                            }
                        })
                        .map_err(|e| format!("Error: {}", e.message))?;
                    let _ = writeln!(self.output(), "{k:<width$} {quoted}");
                }
                Ok(())
            }
            (Some("unset"), 2) => {
                self.params.retain(|(k, _)| *k != args[1]);
                Ok(())
            }
            (Some("set"), 3) => {
                let Some(value) = self.parameter_value(&args[2]) else {
                    return Ok(());
                };
                let key = args[1].clone();
                match self.params.binary_search_by(|(k, _)| k.as_str().cmp(&key)) {
                    Ok(i) => self.params[i].1 = value,
                    Err(i) => self.params.insert(i, (key, value)),
                }
                Ok(())
            }
            _ => {
                let _ = self.output().write_all(PARAMETER_HELP.as_bytes());
                Ok(())
            }
        }
    }

    /// `.parameter set`'s VALUE: the value of `SELECT VALUE`, or VALUE as text when that
    /// does not prepare as one statement (shell.c retries its REPLACE with the value
    /// quoted). None after a run-time error: shell.c's REPLACE then fails silently and
    /// the parameter stays as it was.
    fn parameter_value(&mut self, text: &str) -> Option<Cell> {
        if has_statement_end(text) {
            return Some(Cell::Text(text.as_bytes().to_vec()));
        }
        let mut value = None;
        let outcome = self
            .backend
            .execute(&format!("SELECT {text}"), &mut |event| {
                if let Event::Row(cells) = event {
                    if value.is_none() {
                        value = cells.first().cloned();
                    }
                }
            });
        match outcome {
            Ok(()) => value,
            Err(e) if e.phase == Phase::Prepare => Some(Cell::Text(text.as_bytes().to_vec())),
            Err(_) => None,
        }
    }

    /// `.system CMD ARGS...`: runs the words as one command line through `sh -c`, an
    /// argument holding a space put in double quotes (shell.c); its output goes straight
    /// to the terminal. A non-zero status is reported without counting as an error.
    fn system(&mut self, args: &[String]) {
        let line: Vec<String> = args
            .iter()
            .map(|a| {
                if a.contains(' ') {
                    format!("\"{a}\"")
                } else {
                    a.clone()
                }
            })
            .collect();
        self.flush();
        let status = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(line.join(" "))
            .status();
        let code = match status {
            Ok(s) => {
                use std::os::unix::process::ExitStatusExt;
                s.into_raw()
            }
            Err(_) => 127 << 8,
        };
        if code != 0 {
            let _ = writeln!(self.err, "System command returns {code}");
        }
    }

    /// `.fullschema`: the schema without the statistics tables, then what ANALYZE left in
    /// `sqlite_stat1` (and `sqlite_stat4`) as INSERT statements between two `ANALYZE
    /// sqlite_schema;` lines, or a comment saying there is none.
    fn full_schema(&mut self) -> Result<(), String> {
        let sql = "SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL \
                   AND name NOT LIKE 'sqlite_%' ORDER BY rowid";
        for s in self.first_column(sql)? {
            let _ = self.output().write_all(schema_line(&s, ";\n").as_bytes());
        }
        let stats = self.first_column(
            "SELECT name FROM sqlite_schema WHERE name IN ('sqlite_stat1', 'sqlite_stat4') \
             ORDER BY name",
        )?;
        if stats.is_empty() {
            let _ = self.output().write_all(b"/* No STAT tables available */\n");
            return Ok(());
        }
        let _ = self.output().write_all(b"ANALYZE sqlite_schema;\n");
        for table in &stats {
            for row in self
                .rows(&format!(
                    "SELECT quote(tbl), quote(idx), quote(stat) FROM {table}"
                ))
                .or_else(|_| self.rows(&format!("SELECT * FROM {table} WHERE 0")))?
            {
                let line = format!("INSERT INTO {table} VALUES({});\n", row.join(","));
                let _ = self.output().write_all(line.as_bytes());
            }
        }
        let _ = self.output().write_all(b"ANALYZE sqlite_schema;\n");
        Ok(())
    }

    /// `.mode ?MODE? ?TABLE? ?OPTIONS?`. As in sqlite3, `.mode` without a mode reports the
    /// mode and then sets it again, which puts its options and separators back to their
    /// defaults (and insert mode's table back to "table").
    fn set_mode(&mut self, args: &[String]) -> Result<(), String> {
        let (mut wrap, mut word_wrap, mut quote) = (60, false, false);
        let (mut name, mut table) = (None, None);
        let mut rest = args.iter();
        while let Some(a) = rest.next() {
            let opt = a.strip_prefix("--").or_else(|| a.strip_prefix('-'));
            match opt {
                Some("wrap") if rest.len() > 0 => {
                    wrap = rest.next().and_then(|n| n.parse().ok()).unwrap_or(0)
                }
                Some("ww") => word_wrap = true,
                Some("wordwrap") if rest.len() > 0 => {
                    word_wrap = rest.next().and_then(|b| boolean_value(b)).unwrap_or(false)
                }
                Some("quote") => quote = true,
                Some("noquote") => quote = false,
                _ if name.is_none() => {
                    if a == "qbox" {
                        (wrap, word_wrap, quote) = (60, false, true);
                    }
                    name = Some(a.as_str());
                }
                _ if table.is_none() => table = Some(a.as_str()),
                Some(_) => return Err(format!("unknown option: {a}")),
                None => return Err(format!("extra argument: \"{a}\"")),
            }
        }
        let name = match name {
            Some(n) => n,
            None => {
                let line = format!("current output mode: {}", self.format.describe());
                let _ = writeln!(self.output(), "{line}");
                self.format.mode.name()
            }
        };
        let mode = match name {
            "qbox" => Mode::Box,
            _ => Mode::from_name(name).ok_or_else(|| {
                "Error: mode should be one of: ascii box column csv html insert json line list \
                 markdown qbox quote table tabs tcl"
                    .to_string()
            })?,
        };
        self.format.set_mode(mode);
        if mode.is_columnar() {
            (self.format.wrap, self.format.word_wrap, self.format.quote) = (wrap, word_wrap, quote);
        }
        if mode == Mode::Column && !self.headers_set {
            self.format.headers = true;
        }
        if mode == Mode::Insert {
            self.format.insert_table = literal::name(table.unwrap_or("table"));
        }
        Ok(())
    }

    /// `.output FILE` / `.once FILE`: results go to FILE (created or truncated).
    fn redirect_to(&mut self, file: &str, once: bool) -> Result<(), String> {
        if file.starts_with('|') || file.starts_with('-') {
            return Err(format!(
                "Error: \"{file}\": pipes and options are not supported"
            ));
        }
        let f =
            std::fs::File::create(file).map_err(|_| format!("Error: cannot open \"{file}\""))?;
        self.redirect = Some(Redirect {
            file: Box::new(std::io::BufWriter::new(f)),
            name: file.to_string(),
            once,
        });
        Ok(())
    }

    /// `.backup ?DB? ?OPTIONS? FILE` / `.save`: DB (main by default) copied over FILE by
    /// the online backup (`Backend::backup`), with sqlite3's argument rules and messages:
    /// the last two plain words are DB and FILE, `--async` writes FILE without fsync.
    fn backup(&mut self, args: &[String]) -> Result<(), String> {
        let (mut db, mut file, mut no_sync) = (None, None, false);
        for a in args {
            if let Some(opt) = a.strip_prefix('-') {
                match opt.strip_prefix('-').unwrap_or(opt) {
                    "async" => no_sync = true,
                    _ => return Err(format!("unknown option: {a}")),
                }
            } else if file.is_none() {
                file = Some(a.as_str());
            } else if db.is_none() {
                db = file.replace(a.as_str());
            } else {
                return Err("Usage: .backup ?DB? ?OPTIONS? FILENAME".to_string());
            }
        }
        let Some(file) = file else {
            return Err("missing FILENAME argument on .backup".to_string());
        };
        self.backend.backup(db.unwrap_or("main"), file, no_sync)
    }

    /// `.show`'s report, laid out as sqlite3 lays it out.
    fn settings(&self) -> String {
        let f = &self.format;
        let on_off = |b: bool| if b { "on" } else { "off" };
        let widths: String = f.widths.iter().map(|w| format!("{w} ")).collect();
        let output = match &self.redirect {
            Some(r) => r.name.clone(),
            None => "stdout".to_string(),
        };
        let items = [
            ("echo", on_off(self.echo).to_string()),
            ("eqp", self.auto_plan.1.to_string()),
            (
                "explain",
                if f.auto_explain { "auto" } else { "off" }.to_string(),
            ),
            ("headers", on_off(f.headers).to_string()),
            ("mode", f.describe()),
            ("nullvalue", literal::c_string(&f.null_value)),
            ("output", output),
            ("colseparator", literal::c_string(&f.col_separator)),
            ("rowseparator", literal::c_string(&f.row_separator)),
            ("stats", "off".to_string()),
            ("width", widths),
            ("filename", self.filename.clone()),
        ];
        items
            .iter()
            .map(|(k, v)| format!("{k:>12}: {v}\n"))
            .collect()
    }

    /// Runs SQL for `.import`, reporting an error as sqlite3 does for a dot-command.
    pub(crate) fn exec_quiet(&mut self, sql: &str) -> Result<(), String> {
        self.backend
            .execute(sql, &mut |_| {})
            .map_err(|e| format!("Error: {}", e.message))
    }

    /// `.import` warnings go to standard error without counting as errors.
    pub(crate) fn warn(&mut self, message: &str) {
        let _ = writeln!(self.err, "{message}");
    }

    /// Runs a query for a dot-command and returns every row as text.
    pub(crate) fn rows(&mut self, sql: &str) -> Result<Vec<Vec<String>>, String> {
        let mut rows = Vec::new();
        self.backend
            .execute(sql, &mut |event| {
                if let Event::Row(cells) = event {
                    rows.push(
                        cells
                            .iter()
                            .map(|c| {
                                String::from_utf8_lossy(&c.text().unwrap_or_default()).into_owned()
                            })
                            .collect(),
                    );
                }
            })
            .map_err(|e| format!("Error: {}", e.message))?;
        Ok(rows)
    }
}

/// `.timer`: wall-clock and CPU time around one SQL chunk.
struct Timer {
    wall: Instant,
    cpu: (f64, f64),
}

impl Timer {
    fn start() -> Timer {
        Timer {
            wall: Instant::now(),
            cpu: cpu_times(),
        }
    }

    /// sqlite3's `Run Time: real R user U sys S` line.
    fn report(&self) -> String {
        let (user, sys) = cpu_times();
        format!(
            "Run Time: real {:.3} user {:.6} sys {:.6}",
            self.wall.elapsed().as_secs_f64(),
            user - self.cpu.0,
            sys - self.cpu.1
        )
    }
}

/// The process's user and system CPU seconds (getrusage, as sqlite3's timer uses).
fn cpu_times() -> (f64, f64) {
    // SAFETY: getrusage only writes the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return (0.0, 0.0);
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    (secs(usage.ru_utime), secs(usage.ru_stime))
}

/// The error line for a failed SQL chunk (see the module table).
pub fn error_line(e: &ExecError, source: Source, start_line: usize) -> String {
    // shell.c `save_err_msg`: a code other than SQLITE_ERROR follows the message.
    let m = match e.code {
        code if code > 1 => format!("{} ({code})", e.message),
        _ => e.message.clone(),
    };
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

/// Splits a dot-command into words as sqlite3 does: `'...'` groups words and is taken as
/// it is; `"..."` groups words (`\"` inside does not end it) and, like a bare word, has its
/// backslash escapes resolved.
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
            while let Some(d) = chars.next() {
                if d == c {
                    break;
                }
                word.push(d);
                if d == '\\' && c == '"' {
                    if let Some(e) = chars.next() {
                        word.push(e);
                    }
                }
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
        out.push(if c == '\'' {
            word
        } else {
            resolve_backslashes(&word)
        });
    }
}

/// shell.c `resolve_backslashes`: `\a \b \t \n \v \f \r \" \' \\` and octal `\NNN`;
/// a backslash before anything else stays.
fn resolve_backslashes(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        match e {
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            't' => out.push('\t'),
            'n' => out.push('\n'),
            'v' => out.push('\x0b'),
            'f' => out.push('\x0c'),
            'r' => out.push('\r'),
            '"' | '\'' | '\\' => out.push(e),
            '0'..='7' => {
                let mut v = e as u32 - '0' as u32;
                for _ in 0..2 {
                    match chars.peek() {
                        Some(&d @ '0'..='7') => {
                            v = v * 8 + (d as u32 - '0' as u32);
                            chars.next();
                        }
                        _ => break,
                    }
                }
                out.push(char::from_u32(v).unwrap_or('\u{fffd}'));
            }
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    out
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
