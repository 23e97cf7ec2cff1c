//! `.import ?--csv|--ascii? ?--skip N? FILE TABLE`, as sqlite3 3.40's shell does it: the
//! file is read field by field (shell.c `csv_read_one_field`, `ascii_read_one_field`), a
//! TABLE that does not exist is created with one TEXT column per field of the first row
//! (duplicate names made unique with the column's position), and every row is inserted as
//! text inside one transaction. A row with too few fields is filled with NULLs, one with
//! too many loses the extras; both are reported on standard error with the row's line.

use crate::dump::sql_string;
use crate::literal;
use crate::output::Mode;
use crate::shell::Shell;

/// The separators and quoting a file is read with.
struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    col_sep: u8,
    row_sep: u8,
    /// CSV quoting (`"..."` fields) and the carriage return before a newline dropped.
    csv: bool,
    /// The line the reader is on (1-based), counted at row separators.
    line: usize,
    first: bool,
    /// How the last field ended (shell.c `cTerm`).
    term: Term,
}

/// How the last field ended.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Term {
    Col,
    Row,
    Eof,
}

impl Reader<'_> {
    fn next_byte(&mut self) -> Option<u8> {
        let b = self.data.get(self.pos).copied();
        if b.is_some() {
            self.pos += 1;
        }
        b
    }

    fn term(&self, c: Option<u8>) -> Term {
        match c {
            None => Term::Eof,
            Some(c) if c == self.col_sep => Term::Col,
            Some(_) => Term::Row,
        }
    }

    /// The next field, None at the end of the input; `term` says how it ended.
    fn field(&mut self) -> Option<Vec<u8>> {
        let field = self.read_field();
        self.term = field.as_ref().map_or(Term::Eof, |f| f.1);
        field.map(|f| f.0)
    }

    fn read_field(&mut self) -> Option<(Vec<u8>, Term)> {
        let mut c = self.next_byte()?;
        let mut z = Vec::new();
        if self.csv && c == b'"' {
            // A quoted field ends at a quote followed by a separator or the end; `""` is
            // a quote. As sqlite3, a stray quote is kept.
            let (mut pc, mut ppc) = (0u8, 0u8);
            loop {
                let c = self.next_byte();
                if c == Some(self.row_sep) {
                    self.line += 1;
                }
                if c == Some(b'"') && pc == b'"' {
                    pc = 0;
                    continue;
                }
                let end = (pc == b'"' && (c == Some(self.col_sep) || c == Some(self.row_sep)))
                    || (c == Some(self.row_sep) && pc == b'\r' && ppc == b'"')
                    || (c.is_none() && pc == b'"');
                if end {
                    while z.pop().is_some_and(|b| b != b'"') {}
                    self.first = false;
                    return Some((z, self.term(c)));
                }
                let Some(c) = c else {
                    self.first = false;
                    return Some((z, Term::Eof));
                };
                z.push(c);
                ppc = pc;
                pc = c;
            }
        }
        // A UTF-8 byte order mark before the first field is skipped.
        if self.first && self.data[self.pos - 1..].starts_with(b"\xef\xbb\xbf") {
            self.pos += 2;
            self.first = false;
            return self.read_field();
        }
        self.first = false;
        loop {
            if c == self.col_sep || c == self.row_sep {
                if c == self.row_sep {
                    self.line += 1;
                    if self.csv && z.last() == Some(&b'\r') {
                        z.pop();
                    }
                }
                return Some((z, self.term(Some(c))));
            }
            z.push(c);
            match self.next_byte() {
                Some(n) => c = n,
                None => return Some((z, Term::Eof)),
            }
        }
    }
}

/// Column names for a table created from a header row: as given, an empty one as `?`,
/// names that occur more than once (ignoring case) suffixed with `_` and their position.
fn column_names(header: &[String]) -> (Vec<String>, Vec<(String, String)>) {
    let digits = header.len().to_string().len();
    let mut renamed = Vec::new();
    let names = header
        .iter()
        .enumerate()
        .map(|(i, h)| {
            if h.is_empty() {
                return "?".to_string();
            }
            let dup = header.iter().filter(|o| o.eq_ignore_ascii_case(h)).count() > 1;
            if !dup {
                return h.clone();
            }
            let n = format!("{h}_{:0digits$}", i + 1);
            renamed.push((h.clone(), n.clone()));
            n
        })
        .collect();
    (names, renamed)
}

/// Runs `.import` with the arguments after the command name.
pub fn import(shell: &mut Shell<'_>, args: &[String]) -> Result<(), String> {
    const USAGE: &str = "Usage: .import FILE TABLE";
    let (mut csv_opt, mut ascii_opt, mut skip) = (false, false, 0usize);
    let mut names = Vec::new();
    let mut rest = args.iter();
    while let Some(a) = rest.next() {
        match a.as_str() {
            "--csv" | "-csv" => csv_opt = true,
            "--ascii" | "-ascii" => ascii_opt = true,
            "--skip" | "-skip" => {
                skip = rest
                    .next()
                    .and_then(|n| n.parse().ok())
                    .ok_or_else(|| USAGE.to_string())?
            }
            o if o.starts_with('-') => {
                return Err(format!("ERROR: unknown option: \"{o}\".  {USAGE}"))
            }
            _ => names.push(a.clone()),
        }
    }
    let [file, table] = names.as_slice() else {
        return Err(USAGE.to_string());
    };
    let (col_sep, row_sep, csv) = if ascii_opt {
        (0x1f, 0x1e, false)
    } else if csv_opt {
        (b',', b'\n', true)
    } else {
        let f = &shell.format;
        let (col, mut row) = (f.col_separator.as_bytes(), f.row_separator.as_bytes());
        // The csv mode's output row separator (CRLF) reads as a newline.
        if f.mode == Mode::Csv && row == b"\r\n" {
            row = b"\n";
        }
        match (col, row) {
            ([c], [r]) => (*c, *r, f.mode != Mode::Ascii),
            _ => {
                return Err(
                    "Error: multi-character or empty separators not allowed for import".to_string(),
                )
            }
        }
    };
    let data = std::fs::read(file).map_err(|_| format!("Error: cannot open \"{file}\""))?;
    let mut r = Reader {
        data: &data,
        pos: 0,
        col_sep,
        row_sep,
        csv,
        line: 1,
        first: true,
        term: Term::Eof,
    };
    for _ in 0..skip {
        while r.field().is_some() && r.term == Term::Col {}
    }
    let quoted_table = literal_ident(table);
    let existing = shell.rows(&format!(
        "SELECT name FROM pragma_table_info({})",
        sql_string(table)
    ))?;
    let ncol = if existing.is_empty() {
        let mut header = Vec::new();
        while let Some(z) = r.field() {
            header.push(String::from_utf8_lossy(&z).into_owned());
            if r.term != Term::Col {
                break;
            }
        }
        if header.is_empty() {
            return Err(format!("{file}: empty file"));
        }
        let (cols, renamed) = column_names(&header);
        if !renamed.is_empty() {
            let list: Vec<String> = renamed
                .iter()
                .map(|(from, to)| format!("{} to {}", literal_ident(from), literal_ident(to)))
                .collect();
            shell.warn(&format!(
                "Columns renamed during .import {file} due to duplicates:\n{}",
                list.join(",\n")
            ));
        }
        let defs: Vec<String> = cols
            .iter()
            .map(|c| format!("{} TEXT", literal_ident(c)))
            .collect();
        shell.exec_quiet(&format!(
            "CREATE TABLE {quoted_table}(\n{})",
            defs.join(", ")
        ))?;
        cols.len()
    } else {
        existing.len()
    };
    let ascii_mode = shell.format.mode == Mode::Ascii;
    // One transaction for all the rows, unless the user has one open already.
    let began = shell.exec_quiet("BEGIN").is_ok();
    loop {
        let start_line = r.line;
        let mut values: Vec<Option<Vec<u8>>> = Vec::with_capacity(ncol);
        while values.len() < ncol {
            let z = r.field();
            // End of input before a row, or an empty line in ascii mode (the shell's mode,
            // not --ascii, as in sqlite3): no row.
            if z.is_none() && values.is_empty() {
                break;
            }
            if ascii_mode && values.is_empty() && z.as_ref().is_none_or(|z| z.is_empty()) {
                break;
            }
            values.push(z);
            if values.len() < ncol && r.term != Term::Col {
                shell.warn(&format!(
                    "{file}:{start_line}: expected {ncol} columns but found {} - filling the rest with NULL",
                    values.len()
                ));
                values.resize(ncol, None);
            }
        }
        if r.term == Term::Col {
            let mut found = ncol;
            while r.term == Term::Col {
                r.field();
                found += 1;
            }
            shell.warn(&format!(
                "{file}:{start_line}: expected {ncol} columns but found {found} - extras ignored"
            ));
        }
        if values.len() == ncol {
            let mut sql = format!("INSERT INTO {quoted_table} VALUES(");
            for (k, v) in values.iter().enumerate() {
                if k > 0 {
                    sql.push(',');
                }
                match v {
                    Some(v) => {
                        let mut lit = Vec::new();
                        literal::push_quoted(&mut lit, v);
                        sql.push_str(&String::from_utf8_lossy(&lit));
                    }
                    None => sql.push_str("NULL"),
                }
            }
            sql.push(')');
            if let Err(e) = shell.exec_quiet(&sql) {
                shell.warn(&format!(
                    "{file}:{start_line}: INSERT failed: {}",
                    e.trim_start_matches("Error: ")
                ));
            }
        }
        if r.term == Term::Eof {
            break;
        }
    }
    if began {
        shell.exec_quiet("COMMIT")?;
    }
    Ok(())
}

/// A column or table name in double quotes, as `%w` in `"%w"` writes it.
fn literal_ident(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}
