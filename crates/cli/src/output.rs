//! Result rendering in the shell's output modes, byte-compatible with sqlite3 3.40's shell:
//! NULL prints as the null value (empty by default), numbers as `sqlite3_column_text` gives
//! them, csv quotes as `output_csv` does; the columnar modes (column, table, markdown, box)
//! are `crate::columnar`'s; insert, quote and json write values as SQL or JSON literals
//! (`crate::literal`).

use crate::backend::Cell;
use crate::literal;
use std::io::{self, Write};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    List,
    Csv,
    Column,
    /// One `name = value` line per column, rows separated by a blank line.
    Line,
    /// List mode with a tab separator (sqlite3 reports it as `list`).
    Tabs,
    Table,
    Markdown,
    Box,
    /// `[{"name":value,...},...]`, one object a row.
    Json,
    /// Values as SQL literals, `,`-separated.
    Quote,
    /// `INSERT INTO table VALUES(...);` a row.
    Insert,
    /// `<TR><TD>` rows of an HTML table.
    Html,
    /// List mode with ASCII unit (0x1F) and record (0x1E) separators.
    Ascii,
    /// Values as Tcl/C strings, space-separated.
    Tcl,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::List | Mode::Tabs => "list",
            Mode::Csv => "csv",
            Mode::Column => "column",
            Mode::Line => "line",
            Mode::Table => "table",
            Mode::Markdown => "markdown",
            Mode::Box => "box",
            Mode::Json => "json",
            Mode::Quote => "quote",
            Mode::Insert => "insert",
            Mode::Html => "html",
            Mode::Ascii => "ascii",
            Mode::Tcl => "tcl",
        }
    }

    pub fn from_name(name: &str) -> Option<Mode> {
        match name {
            "list" => Some(Mode::List),
            "csv" => Some(Mode::Csv),
            "column" | "columns" => Some(Mode::Column),
            "line" | "lines" => Some(Mode::Line),
            "tabs" => Some(Mode::Tabs),
            "table" => Some(Mode::Table),
            "markdown" => Some(Mode::Markdown),
            "box" => Some(Mode::Box),
            "json" => Some(Mode::Json),
            "quote" => Some(Mode::Quote),
            "insert" => Some(Mode::Insert),
            "html" => Some(Mode::Html),
            "ascii" => Some(Mode::Ascii),
            "tcl" => Some(Mode::Tcl),
            _ => None,
        }
    }

    /// The modes that read the whole result before printing it (`crate::columnar`).
    pub fn is_columnar(self) -> bool {
        matches!(
            self,
            Mode::Column | Mode::Table | Mode::Markdown | Mode::Box
        )
    }
}

/// How results print: the shell's `.mode`, `.headers`, `.separator`, `.nullvalue` and
/// `.width` state.
#[derive(Clone, Debug, PartialEq)]
pub struct Format {
    pub mode: Mode,
    pub headers: bool,
    pub col_separator: String,
    pub row_separator: String,
    pub null_value: String,
    /// `.explain auto` (the default): EXPLAIN's rows print as sqlite3 prints them whatever
    /// the mode (crate::explain); `.explain off` prints them in the mode.
    pub auto_explain: bool,
    /// `.width`: per column, 0 for automatic, negative for right-aligned.
    pub widths: Vec<i32>,
    /// The columnar modes' `--wrap` (0: no wrapping), `--wordwrap` and `--quote` options.
    pub wrap: usize,
    pub word_wrap: bool,
    pub quote: bool,
    /// Insert mode's table name, already quoted as an identifier.
    pub insert_table: String,
}

impl Default for Format {
    fn default() -> Self {
        Format {
            mode: Mode::List,
            headers: false,
            col_separator: "|".to_string(),
            row_separator: "\n".to_string(),
            null_value: String::new(),
            auto_explain: true,
            widths: Vec::new(),
            wrap: 60,
            word_wrap: false,
            quote: false,
            insert_table: literal::name("table"),
        }
    }
}

impl Format {
    /// Switches mode with the separators `.mode` sets, as sqlite3 does (csv: `,` and CRLF;
    /// quote: `,`; ascii: 0x1F and 0x1E); the columnar options go back to their defaults.
    pub fn set_mode(&mut self, mode: Mode) {
        self.mode = mode;
        let separators = match mode {
            Mode::List => Some(("|", "\n")),
            Mode::Csv => Some((",", "\r\n")),
            Mode::Tabs => Some(("\t", "\n")),
            Mode::Quote => Some((",", "\n")),
            Mode::Ascii => Some(("\x1f", "\x1e")),
            Mode::Tcl => Some((" ", "\n")),
            _ => None,
        };
        if let Some((col, row)) = separators {
            self.col_separator = col.to_string();
            self.row_separator = row.to_string();
        }
        self.wrap = 60;
        self.word_wrap = false;
        self.quote = false;
    }

    /// The mode as `.mode` and `.show` report it: the columnar modes with their options.
    pub fn describe(&self) -> String {
        let name = self.mode.name();
        if self.mode.is_columnar() {
            format!(
                "{name} --wrap {} --wordwrap {} --{}quote",
                self.wrap,
                if self.word_wrap { "on" } else { "off" },
                if self.quote { "" } else { "no" }
            )
        } else {
            name.to_string()
        }
    }
}

/// Renders one statement's result set. The columnar modes (and EXPLAIN listings) need every
/// row to size their columns, so they buffer until `finish`; the other modes write rows as
/// they come.
pub struct ResultWriter<'f> {
    format: &'f Format,
    columns: Vec<String>,
    rows_seen: usize,
    buffered: Vec<Vec<Vec<u8>>>,
    /// How the rows are drawn: in the mode, or (EXPLAIN's, EXPLAIN QUERY PLAN's) by
    /// `crate::explain` / `crate::eqp` once all are in.
    kind: Drawn,
    /// One output row, reused.
    line: Vec<u8>,
}

/// How a result set is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Drawn {
    /// In the current mode.
    InMode,
    /// As sqlite3 draws EXPLAIN's listing (`crate::explain`).
    Listing,
    /// As sqlite3 draws a query plan (`crate::eqp`).
    Plan,
}

impl<'f> ResultWriter<'f> {
    /// A writer for a statement's results: EXPLAIN's and EXPLAIN QUERY PLAN's drawn as
    /// such while `.explain` is on or auto (recognized by their columns), others in the mode.
    pub fn new(format: &'f Format, columns: &[String]) -> Self {
        let kind = if !format.auto_explain {
            Drawn::InMode
        } else if crate::explain::is_explain(columns) {
            Drawn::Listing
        } else if crate::eqp::is_query_plan(columns) {
            Drawn::Plan
        } else {
            Drawn::InMode
        };
        ResultWriter::drawn(format, columns, kind)
    }

    /// A writer that draws its rows as `kind` says whatever the settings (`.eqp`'s).
    pub fn drawn(format: &'f Format, columns: &[String], kind: Drawn) -> Self {
        ResultWriter {
            format,
            columns: columns.to_vec(),
            rows_seen: 0,
            buffered: Vec::new(),
            kind,
            line: Vec::new(),
        }
    }

    fn cell_bytes(&self, cell: &Cell) -> Vec<u8> {
        cell.text()
            .unwrap_or_else(|| self.format.null_value.as_bytes().to_vec())
    }

    pub fn row(&mut self, out: &mut dyn Write, cells: &[Cell]) -> io::Result<()> {
        let first = self.rows_seen == 0;
        self.rows_seen += 1;
        match self.kind {
            Drawn::Listing => {
                let row = cells.iter().map(|c| self.cell_bytes(c)).collect();
                self.buffered.push(row);
                return Ok(());
            }
            Drawn::Plan => {
                // The plan's ids are read as text (shell.c's azArg), NULL as empty.
                let row = cells.iter().map(|c| c.text().unwrap_or_default()).collect();
                self.buffered.push(row);
                return Ok(());
            }
            Drawn::InMode => {}
        }
        let f = self.format;
        match f.mode {
            Mode::Column | Mode::Table | Mode::Markdown | Mode::Box => {
                let row = cells
                    .iter()
                    .map(|c| {
                        if f.quote {
                            literal::quoted_column(c)
                        } else {
                            self.cell_bytes(c)
                        }
                    })
                    .collect();
                self.buffered.push(row);
                Ok(())
            }
            Mode::Line => {
                // shell.c: names right-aligned to the longest, at least 5 wide.
                let w = self
                    .columns
                    .iter()
                    .map(|c| c.chars().count())
                    .max()
                    .unwrap_or(0)
                    .max(5);
                if !first {
                    out.write_all(f.row_separator.as_bytes())?;
                }
                for (name, cell) in self.columns.iter().zip(cells) {
                    write!(out, "{name:>w$} = ")?;
                    out.write_all(&self.cell_bytes(cell))?;
                    out.write_all(f.row_separator.as_bytes())?;
                }
                Ok(())
            }
            Mode::List | Mode::Csv | Mode::Tabs | Mode::Ascii => {
                // Headers print with the first row, so an empty result prints nothing.
                if first && f.headers {
                    let names: Vec<Option<Vec<u8>>> = self
                        .columns
                        .iter()
                        .map(|c| Some(c.as_bytes().to_vec()))
                        .collect();
                    self.write_line(out, &names)?;
                }
                let values: Vec<Option<Vec<u8>>> = cells.iter().map(Cell::text).collect();
                self.write_line(out, &values)
            }
            Mode::Html => self.html_row(out, cells, first),
            Mode::Tcl => self.tcl_row(out, cells, first),
            Mode::Quote => self.quote_row(out, cells, first),
            Mode::Insert => self.insert_row(out, cells),
            Mode::Json => self.json_row(out, cells, first),
        }
    }

    /// One row of list or csv output; `None` is NULL, printed as the null value unquoted.
    fn write_line(&self, out: &mut dyn Write, values: &[Option<Vec<u8>>]) -> io::Result<()> {
        let csv = self.format.mode == Mode::Csv;
        for (i, v) in values.iter().enumerate() {
            if i > 0 {
                out.write_all(self.format.col_separator.as_bytes())?;
            }
            match v {
                None => out.write_all(self.format.null_value.as_bytes())?,
                Some(v) if csv => write_csv_field(out, v, self.format.col_separator.as_bytes())?,
                Some(v) => out.write_all(v)?,
            }
        }
        out.write_all(self.format.row_separator.as_bytes())
    }

    fn html_row(&mut self, out: &mut dyn Write, cells: &[Cell], first: bool) -> io::Result<()> {
        let line = &mut self.line;
        line.clear();
        if first && self.format.headers {
            line.extend_from_slice(b"<TR>");
            for name in &self.columns {
                line.extend_from_slice(b"<TH>");
                literal::push_html(line, name.as_bytes());
                line.extend_from_slice(b"</TH>\n");
            }
            line.extend_from_slice(b"</TR>\n");
        }
        line.extend_from_slice(b"<TR>");
        for cell in cells {
            line.extend_from_slice(b"<TD>");
            let text = cell
                .text()
                .unwrap_or_else(|| self.format.null_value.as_bytes().to_vec());
            literal::push_html(line, &text);
            line.extend_from_slice(b"</TD>\n");
        }
        line.extend_from_slice(b"</TR>\n");
        out.write_all(line)
    }

    fn tcl_row(&mut self, out: &mut dyn Write, cells: &[Cell], first: bool) -> io::Result<()> {
        self.separated_row(
            out,
            cells,
            first,
            literal::push_c_string,
            |line, cell, null| {
                literal::push_c_string(line, &cell.text().unwrap_or_else(|| null.to_vec()))
            },
        )
    }

    fn quote_row(&mut self, out: &mut dyn Write, cells: &[Cell], first: bool) -> io::Result<()> {
        self.separated_row(out, cells, first, literal::push_quoted, |line, cell, _| {
            literal::push_quote_mode_value(line, cell)
        })
    }

    /// A row of a mode that quotes each header and value its own way between the column
    /// separators (tcl, quote), after the header line on the first row when headers are
    /// on. `value` gets the null value's text too.
    fn separated_row(
        &mut self,
        out: &mut dyn Write,
        cells: &[Cell],
        first: bool,
        header: fn(&mut Vec<u8>, &[u8]),
        value: impl Fn(&mut Vec<u8>, &Cell, &[u8]),
    ) -> io::Result<()> {
        let (col_sep, row_sep) = (
            self.format.col_separator.as_bytes(),
            self.format.row_separator.as_bytes(),
        );
        let null = self.format.null_value.as_bytes();
        let line = &mut self.line;
        line.clear();
        if first && self.format.headers {
            for (i, name) in self.columns.iter().enumerate() {
                if i > 0 {
                    line.extend_from_slice(col_sep);
                }
                header(line, name.as_bytes());
            }
            line.extend_from_slice(row_sep);
        }
        for (i, cell) in cells.iter().enumerate() {
            if i > 0 {
                line.extend_from_slice(col_sep);
            }
            value(line, cell, null);
        }
        line.extend_from_slice(row_sep);
        out.write_all(line)
    }

    fn insert_row(&mut self, out: &mut dyn Write, cells: &[Cell]) -> io::Result<()> {
        let line = &mut self.line;
        line.clear();
        line.extend_from_slice(b"INSERT INTO ");
        line.extend_from_slice(self.format.insert_table.as_bytes());
        if self.format.headers {
            line.push(b'(');
            for (i, name) in self.columns.iter().enumerate() {
                if i > 0 {
                    line.push(b',');
                }
                line.extend_from_slice(literal::name(name).as_bytes());
            }
            line.push(b')');
        }
        for (i, cell) in cells.iter().enumerate() {
            line.extend_from_slice(if i == 0 { b" VALUES(" } else { b"," });
            literal::push_insert_value(line, cell);
        }
        line.extend_from_slice(b");\n");
        out.write_all(line)
    }

    fn json_row(&mut self, out: &mut dyn Write, cells: &[Cell], first: bool) -> io::Result<()> {
        let line = &mut self.line;
        line.clear();
        line.extend_from_slice(if first { b"[{" } else { b",\n{" });
        for (i, (name, cell)) in self.columns.iter().zip(cells).enumerate() {
            if i > 0 {
                line.push(b',');
            }
            literal::push_json_string(line, name.as_bytes());
            line.push(b':');
            literal::push_json_value(line, cell);
        }
        line.push(b'}');
        out.write_all(line)
    }

    /// Ends the result set, writing whatever the mode buffered.
    pub fn finish(self, out: &mut dyn Write) -> io::Result<()> {
        match self.kind {
            Drawn::Listing if self.buffered.is_empty() => return Ok(()),
            Drawn::Listing => return crate::explain::render(out, &self.columns, &self.buffered),
            Drawn::Plan => {
                let rows: Vec<_> = self
                    .buffered
                    .iter()
                    .map(|r| crate::eqp::plan_row(r))
                    .collect();
                return crate::eqp::render(out, &rows);
            }
            Drawn::InMode => {}
        }
        match self.format.mode {
            Mode::Json if self.rows_seen > 0 => out.write_all(b"]\n"),
            m if m.is_columnar() => {
                crate::columnar::render(out, self.format, &self.columns, &self.buffered)
            }
            _ => Ok(()),
        }
    }
}

/// shell.c `output_csv`: quote a field that is empty or holds a control byte, space, `"`,
/// `'`, DEL, a non-ASCII byte or the separator; double the quotes inside.
pub fn write_csv_field(out: &mut dyn Write, v: &[u8], separator: &[u8]) -> io::Result<()> {
    let needs_quote = v.is_empty()
        || v.iter()
            .any(|&b| b <= b' ' || b == b'"' || b == b'\'' || b >= 0x7f)
        || (!separator.is_empty() && v.windows(separator.len()).any(|w| w == separator));
    if !needs_quote {
        return out.write_all(v);
    }
    out.write_all(b"\"")?;
    for &b in v {
        if b == b'"' {
            out.write_all(b"\"\"")?;
        } else {
            out.write_all(&[b])?;
        }
    }
    out.write_all(b"\"")
}
