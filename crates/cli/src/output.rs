//! Result rendering in the shell's output modes (list, csv, column), byte-compatible with
//! sqlite3 3.40's shell for the cases it shares: NULL prints as the null value (empty by
//! default), numbers as `sqlite3_column_text` gives them, csv quotes as `output_csv` does,
//! column mode pads every cell (the last too) to the widest value or header.

use crate::backend::Cell;
use std::io::{self, Write};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    List,
    Csv,
    Column,
    /// One `name = value` line per column, rows separated by a blank line.
    Line,
    /// List mode with a tab separator.
    Tabs,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::List => "list",
            Mode::Csv => "csv",
            Mode::Column => "column",
            Mode::Line => "line",
            Mode::Tabs => "tabs",
        }
    }

    pub fn from_name(name: &str) -> Option<Mode> {
        match name {
            "list" => Some(Mode::List),
            "csv" => Some(Mode::Csv),
            "column" | "columns" => Some(Mode::Column),
            "line" | "lines" => Some(Mode::Line),
            "tabs" => Some(Mode::Tabs),
            _ => None,
        }
    }
}

/// How results print; the shell's `.mode`, `.headers`, `.separator`, `.nullvalue` state.
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
        }
    }
}

impl Format {
    /// Switches mode with the separators `.mode` sets (csv: `,` and CRLF, as sqlite3 does).
    pub fn set_mode(&mut self, mode: Mode) {
        self.mode = mode;
        match mode {
            Mode::List => {
                self.col_separator = "|".to_string();
                self.row_separator = "\n".to_string();
            }
            Mode::Csv => {
                self.col_separator = ",".to_string();
                self.row_separator = "\r\n".to_string();
            }
            Mode::Tabs => {
                self.col_separator = "\t".to_string();
                self.row_separator = "\n".to_string();
            }
            Mode::Column | Mode::Line => {}
        }
    }
}

/// Renders one statement's result set. Column mode needs every row to size its columns, so
/// it buffers until `finish`; the other modes write rows as they come.
pub struct ResultWriter<'f> {
    format: &'f Format,
    columns: Vec<String>,
    rows_seen: usize,
    buffered: Vec<Vec<Vec<u8>>>,
    /// The rows are EXPLAIN's, printed by `crate::explain` once all are in.
    explain: bool,
}

impl<'f> ResultWriter<'f> {
    pub fn new(format: &'f Format, columns: &[String]) -> Self {
        ResultWriter {
            format,
            columns: columns.to_vec(),
            rows_seen: 0,
            buffered: Vec::new(),
            explain: format.auto_explain && crate::explain::is_explain(columns),
        }
    }

    fn cell_bytes(&self, cell: &Cell) -> Vec<u8> {
        cell.text()
            .unwrap_or_else(|| self.format.null_value.as_bytes().to_vec())
    }

    pub fn row(&mut self, out: &mut dyn Write, cells: &[Cell]) -> io::Result<()> {
        let first = self.rows_seen == 0;
        self.rows_seen += 1;
        if self.explain {
            let row = cells.iter().map(|c| self.cell_bytes(c)).collect();
            self.buffered.push(row);
            return Ok(());
        }
        match self.format.mode {
            Mode::Column => {
                let row = cells.iter().map(|c| self.cell_bytes(c)).collect();
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
                    out.write_all(self.format.row_separator.as_bytes())?;
                }
                for (name, cell) in self.columns.iter().zip(cells) {
                    write!(out, "{name:>w$} = ")?;
                    out.write_all(&self.cell_bytes(cell))?;
                    out.write_all(self.format.row_separator.as_bytes())?;
                }
                Ok(())
            }
            Mode::List | Mode::Csv | Mode::Tabs => {
                // Headers print with the first row, so an empty result prints nothing.
                if first && self.format.headers {
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

    /// Ends the result set, writing whatever column mode buffered.
    pub fn finish(self, out: &mut dyn Write) -> io::Result<()> {
        if self.explain {
            if self.buffered.is_empty() {
                return Ok(());
            }
            return crate::explain::render(out, &self.columns, &self.buffered);
        }
        if self.format.mode != Mode::Column || self.buffered.is_empty() {
            return Ok(());
        }
        let width = |b: &[u8]| String::from_utf8_lossy(b).chars().count();
        let mut widths: Vec<usize> = self.columns.iter().map(|c| c.chars().count()).collect();
        if !self.format.headers {
            widths.iter_mut().for_each(|w| *w = 0);
        }
        for row in &self.buffered {
            for (i, v) in row.iter().enumerate() {
                if i < widths.len() {
                    widths[i] = widths[i].max(width(v));
                }
            }
        }
        let line = |out: &mut dyn Write, cells: &[Vec<u8>]| -> io::Result<()> {
            for (i, v) in cells.iter().enumerate() {
                if i > 0 {
                    out.write_all(b"  ")?;
                }
                out.write_all(v)?;
                let pad = widths.get(i).copied().unwrap_or(0).saturating_sub(width(v));
                out.write_all(" ".repeat(pad).as_bytes())?;
            }
            out.write_all(b"\n")
        };
        if self.format.headers {
            let names: Vec<Vec<u8>> = self.columns.iter().map(|c| c.as_bytes().to_vec()).collect();
            line(out, &names)?;
            let dashes: Vec<Vec<u8>> = widths.iter().map(|&w| vec![b'-'; w]).collect();
            line(out, &dashes)?;
        }
        for row in &self.buffered {
            line(out, row)?;
        }
        Ok(())
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
