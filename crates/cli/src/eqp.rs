//! sqlite3's display of a query plan (shell.c `eqp_render`): `QUERY PLAN` and then the
//! plan's rows as a tree, each under its parent, `|--` before a row that has a later
//! sibling and `` `-- `` before the last one. Used for the results of an `EXPLAIN QUERY
//! PLAN` statement (while `.explain` is on or auto, whatever `.mode` is) and for the plan
//! `.eqp on` prints before each statement.
//!
//! The shell recognizes EXPLAIN QUERY PLAN by its column names (sqlite3 asks
//! `sqlite3_stmt_isexplain`): a SELECT naming its results `id, parent, notused, detail`
//! prints the same way.

use std::io::{self, Write};

/// EXPLAIN QUERY PLAN's result column names.
pub const COLUMNS: [&str; 4] = ["id", "parent", "notused", "detail"];

/// Whether a result set has EXPLAIN QUERY PLAN's columns.
pub fn is_query_plan(columns: &[String]) -> bool {
    columns.len() == COLUMNS.len() && columns.iter().zip(COLUMNS).all(|(c, e)| c == e)
}

/// One row of a plan: its id, its parent's id and its text.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanRow {
    pub id: i64,
    pub parent: i64,
    pub detail: String,
}

/// Writes `rows` as sqlite3 draws them; nothing for a plan without rows. shell.c stops
/// descending when the prefix would pass its 100-byte buffer (the levels below are not
/// shown), and so does this.
pub fn render(out: &mut dyn Write, rows: &[PlanRow]) -> io::Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    writeln!(out, "QUERY PLAN")?;
    let mut prefix = String::new();
    render_level(out, rows, 0, &mut prefix)
}

fn render_level(
    out: &mut dyn Write,
    rows: &[PlanRow],
    parent: i64,
    prefix: &mut String,
) -> io::Result<()> {
    const PREFIX_MAX: usize = 100 - 7;
    let children: Vec<&PlanRow> = rows.iter().filter(|r| r.parent == parent).collect();
    let n = prefix.len();
    for (i, row) in children.iter().enumerate() {
        let last = i + 1 == children.len();
        writeln!(
            out,
            "{prefix}{}{}",
            if last { "`--" } else { "|--" },
            row.detail
        )?;
        // A row that is its own parent would recurse forever (shell.c has the same
        // hazard; EXPLAIN QUERY PLAN never makes one): its level is drawn once.
        if n < PREFIX_MAX && row.id != parent {
            prefix.push_str(if last { "   " } else { "|  " });
            render_level(out, rows, row.id, prefix)?;
            prefix.truncate(n);
        }
    }
    Ok(())
}

/// A plan row from a result row's text cells (`atoi` of the ids, as shell.c reads them).
pub fn plan_row(cells: &[Vec<u8>]) -> PlanRow {
    let text = |i: usize| {
        cells
            .get(i)
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default()
    };
    let int = |i: usize| atoi(&text(i));
    PlanRow {
        id: int(0),
        parent: int(1),
        detail: text(3),
    }
}

/// C's `atoi`: leading blanks, an optional sign, then digits; 0 when there are none.
fn atoi(s: &str) -> i64 {
    let t = s.trim_start();
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let mut n: i64 = 0;
    for b in digits.bytes().take_while(u8::is_ascii_digit) {
        n = n.wrapping_mul(10).wrapping_add(i64::from(b - b'0'));
    }
    if neg {
        -n
    } else {
        n
    }
}
