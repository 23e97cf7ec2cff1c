//! `.dump ?OPTIONS? ?OBJECTS?`: the database as SQL text, byte for byte as sqlite3 3.40's
//! shell writes it (shell.c `dump_callback`, `run_table_dump_query`), so that the text read
//! by stock sqlite3 or by parlite rebuilds the same database:
//!
//! ```text
//! PRAGMA foreign_keys=OFF;             (rows may come before the rows they reference)
//! BEGIN TRANSACTION;
//! CREATE TABLE t(...);                 each table in schema order, then its rows
//! INSERT INTO t VALUES(...);           in scan order, generated columns left out
//! DELETE FROM sqlite_sequence;         AUTOINCREMENT counters, after every table
//! INSERT INTO sqlite_sequence VALUES('t',N);
//! CREATE INDEX / TRIGGER / VIEW ...;   after all the rows, in schema order
//! COMMIT;                              (ROLLBACK; -- due to errors, if a query failed)
//! ```
//!
//! The schema and the rows are read inside one savepoint, so a dump is one snapshot. The
//! values' text is `crate::literal`'s (insert mode's).

use crate::backend::{Backend, Cell, Event};
use crate::complete::is_complete;
use crate::literal;
use std::io::{self, Write};

/// `.dump`'s options (`--data-only`, `--newlines`, `--nosys`).
#[derive(Debug, Default)]
pub struct DumpOptions {
    /// Only the INSERTs: no CREATE, no transaction, no sqlite_sequence reset.
    pub data_only: bool,
    /// Newlines in text stay raw instead of going through `replace()`.
    pub newlines: bool,
    /// Leave out the system tables (sqlite_sequence, sqlite_stat1).
    pub no_sys: bool,
    /// LIKE patterns naming the tables to dump (all when empty).
    pub patterns: Vec<String>,
}

impl DumpOptions {
    /// Parses `.dump`'s arguments; Err is the message for an unknown option.
    pub fn parse(args: &[String]) -> Result<DumpOptions, String> {
        let mut o = DumpOptions::default();
        for a in args {
            if let Some(opt) = a.strip_prefix('-') {
                match opt.strip_prefix('-').unwrap_or(opt) {
                    "data-only" => o.data_only = true,
                    "newlines" => o.newlines = true,
                    "nosys" => o.no_sys = true,
                    _ => return Err(format!("Unknown option \"{a}\" on \".dump\"")),
                }
            } else {
                o.patterns.push(a.clone());
            }
        }
        Ok(o)
    }

    fn like_clause(&self) -> String {
        if self.patterns.is_empty() {
            return "true".to_string();
        }
        self.patterns
            .iter()
            .map(|p| format!("name LIKE {} ESCAPE '\\'", sql_string(p)))
            .collect::<Vec<_>>()
            .join(" OR ")
    }
}

/// A SQL string literal.
pub fn sql_string(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// shell.c `printSchemaLine`: a CREATE statement and `tail`. A statement ending in a comment
/// gets the comment closed first, so the `;` is not swallowed by it; `CREATE TABLE "x"`
/// becomes `CREATE TABLE IF NOT EXISTS "x"`.
pub fn schema_line(sql: &str, tail: &str) -> String {
    let mut sql = sql.to_string();
    if tail.starts_with(';') && (sql.contains("/*") || sql.contains("--")) {
        for term in ["", "*/", "\n"] {
            let candidate = format!("{sql}{term};");
            if is_complete(&candidate) {
                sql = format!("{sql}{term}");
                break;
            }
        }
    }
    match sql.strip_prefix("CREATE TABLE ") {
        Some(rest) if rest.starts_with('"') || rest.starts_with('\'') => {
            format!("CREATE TABLE IF NOT EXISTS {rest}{tail}")
        }
        _ => format!("{sql}{tail}"),
    }
}

/// Runs `sql` and returns its rows; Err only for the query's own failure.
fn query(backend: &mut dyn Backend, sql: &str) -> Result<Vec<Vec<Cell>>, String> {
    let mut rows = Vec::new();
    backend
        .execute(sql, &mut |event| {
            if let Event::Row(cells) = event {
                rows.push(cells.to_vec());
            }
        })
        .map_err(|e| e.message)?;
    Ok(rows)
}

fn text(cell: Option<&Cell>) -> String {
    cell.and_then(Cell::text)
        .map(|t| String::from_utf8_lossy(&t).into_owned())
        .unwrap_or_default()
}

/// Writes the dump; returns the number of queries that failed (the dump then ends in
/// ROLLBACK, as sqlite3's does).
pub fn dump(
    backend: &mut dyn Backend,
    out: &mut dyn Write,
    opts: &DumpOptions,
) -> io::Result<usize> {
    let like = opts.like_clause();
    let mut errors = 0;
    if !opts.data_only {
        out.write_all(b"PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\n")?;
    }
    // A failure to open the savepoint (inside a transaction that forbids it) only loses the
    // single snapshot; sqlite3 ignores it too.
    let _ = backend.execute("SAVEPOINT dump", &mut |_| {});
    let tables = query(
        backend,
        &format!(
            "SELECT name, type, sql FROM sqlite_schema AS o WHERE ({like}) AND type=='table' \
             AND sql NOT NULL ORDER BY tbl_name='sqlite_sequence', rowid"
        ),
    );
    match tables {
        Ok(tables) => {
            for t in &tables {
                let (name, kind, sql) = (text(t.first()), text(t.get(1)), text(t.get(2)));
                if !dump_table(backend, out, opts, &name, &kind, &sql)? {
                    errors += 1;
                }
            }
        }
        Err(_) => errors += 1,
    }
    if !opts.data_only {
        let others = query(
            backend,
            &format!(
                "SELECT sql FROM sqlite_schema AS o WHERE ({like}) AND sql NOT NULL \
                 AND type IN ('index','trigger','view')"
            ),
        );
        match others {
            Ok(rows) => {
                for r in rows {
                    let sql = text(r.first());
                    // run_table_dump_query: a statement holding `--` gets its `;` on a line
                    // of its own.
                    let end = if sql.contains("--") { "\n;\n" } else { ";\n" };
                    out.write_all(sql.as_bytes())?;
                    out.write_all(end.as_bytes())?;
                }
            }
            Err(_) => errors += 1,
        }
    }
    let _ = backend.execute("RELEASE dump", &mut |_| {});
    if !opts.data_only {
        let end: &[u8] = if errors > 0 {
            b"ROLLBACK; -- due to errors\n"
        } else {
            b"COMMIT;\n"
        };
        out.write_all(end)?;
    }
    Ok(errors)
}

/// One table of `dump`: its CREATE (or the system table's reset) and its rows. Returns
/// false when reading it failed.
fn dump_table(
    backend: &mut dyn Backend,
    out: &mut dyn Write,
    opts: &DumpOptions,
    name: &str,
    kind: &str,
    sql: &str,
) -> io::Result<bool> {
    let is_stat = name.len() == 12 && name.starts_with("sqlite_stat");
    if name == "sqlite_sequence" && !opts.no_sys {
        if !opts.data_only {
            out.write_all(b"DELETE FROM sqlite_sequence;\n")?;
        }
    } else if is_stat && !opts.no_sys {
        if !opts.data_only {
            out.write_all(b"ANALYZE sqlite_schema;\n")?;
        }
    } else if name.starts_with("sqlite_") {
        return Ok(true);
    } else if !opts.data_only {
        out.write_all(schema_line(sql, ";\n").as_bytes())?;
    }
    if kind != "table" {
        return Ok(true);
    }
    // Generated columns (hidden 2 and 3) are computed again by the INSERT.
    let columns = match query(
        backend,
        &format!(
            "SELECT name FROM pragma_table_xinfo({}) WHERE hidden = 0",
            sql_string(name)
        ),
    ) {
        Ok(rows) => rows.iter().map(|r| text(r.first())).collect::<Vec<_>>(),
        Err(_) => return Ok(false),
    };
    let select = format!(
        "SELECT {} FROM {}",
        columns
            .iter()
            .map(|c| literal::name(c))
            .collect::<Vec<_>>()
            .join(","),
        literal::name(name)
    );
    let prefix = format!("INSERT INTO {} VALUES(", literal::name(name));
    let mut line = Vec::new();
    let mut io_error = None;
    let result = backend.execute(&select, &mut |event| {
        let Event::Row(cells) = event else {
            return;
        };
        line.clear();
        line.extend_from_slice(prefix.as_bytes());
        for (i, cell) in cells.iter().enumerate() {
            if i > 0 {
                line.push(b',');
            }
            match cell {
                Cell::Text(t) if opts.newlines => literal::push_quoted(&mut line, t),
                _ => literal::push_insert_value(&mut line, cell),
            }
        }
        line.extend_from_slice(b");\n");
        if let Err(e) = out.write_all(&line) {
            io_error.get_or_insert(e);
        }
    });
    if let Some(e) = io_error {
        return Err(e);
    }
    Ok(result.is_ok())
}
