//! sqlite3's display of plain EXPLAIN (shell.c `MODE_Explain`): whatever `.mode` is set, a
//! statement whose result columns are EXPLAIN's eight prints as a table with fixed minimum
//! widths, a header and a dashed rule, the opcodes inside each loop indented two spaces
//! (shell.c `explain_data_prepare`). `.explain off` turns this off (rows then print in the
//! current mode), `.explain on|auto` back on.
//!
//! The shell recognizes EXPLAIN by its column names (sqlite3 asks `sqlite3_stmt_isexplain`):
//! a SELECT naming its results `addr, opcode, p1, p2, p3, p4, p5, comment` prints the same way.

use std::io::{self, Write};

/// EXPLAIN's result column names.
pub const COLUMNS: [&str; 8] = ["addr", "opcode", "p1", "p2", "p3", "p4", "p5", "comment"];

/// shell.c's column widths for `MODE_Explain`.
const WIDTHS: [usize; 8] = [4, 13, 4, 4, 4, 13, 2, 13];

/// Whether a result set has EXPLAIN's columns.
pub fn is_explain(columns: &[String]) -> bool {
    columns.len() == COLUMNS.len() && columns.iter().zip(COLUMNS).all(|(c, e)| c == e)
}

/// The indentation of each row: two spaces per loop around it. A `Next`-like opcode jumping
/// back indents the rows from its target to itself; so does a `Goto` back to a `Yield`,
/// `SeekLT`, `SeekGT`, `RowSetRead` or `Rewind` (or one with p1 set).
fn indents(rows: &[Vec<Vec<u8>>]) -> Vec<usize> {
    const NEXT: [&str; 7] = [
        "Next",
        "Prev",
        "VPrev",
        "VNext",
        "SorterNext",
        "NextIfOpen",
        "PrevIfOpen",
    ];
    const YIELD: [&str; 5] = ["Yield", "SeekLT", "SeekGT", "RowSetRead", "Rewind"];
    let int = |row: &Vec<Vec<u8>>, i: usize| -> i64 {
        row.get(i)
            .and_then(|v| std::str::from_utf8(v).ok())
            .and_then(|s| s.parse().ok())
            .unwrap_or(0)
    };
    let op = |row: &Vec<Vec<u8>>| -> String {
        String::from_utf8_lossy(row.get(1).map_or(&[][..], |v| v)).into_owned()
    };
    let mut indent = vec![0usize; rows.len()];
    let mut is_yield = vec![false; rows.len()];
    for (i, row) in rows.iter().enumerate() {
        let name = op(row);
        is_yield[i] = YIELD.contains(&name.as_str());
        let target = int(row, 3) + (i as i64 - int(row, 0));
        let Ok(target) = usize::try_from(target) else {
            continue;
        };
        let back_loop = NEXT.contains(&name.as_str()) && target > 0;
        let back_goto = name == "Goto"
            && target < i
            && (is_yield.get(target).copied().unwrap_or(false) || int(row, 2) != 0);
        if back_loop || back_goto {
            for x in indent.iter_mut().take(i).skip(target) {
                *x += 2;
            }
        }
    }
    indent
}

/// Writes buffered EXPLAIN rows (cells as printed: NULL already the null value).
pub fn render(out: &mut dyn Write, columns: &[String], rows: &[Vec<Vec<u8>>]) -> io::Result<()> {
    let line = |out: &mut dyn Write, cells: &[Vec<u8>], indent: usize| -> io::Result<()> {
        for (i, v) in cells.iter().enumerate() {
            if i == 1 {
                out.write_all(" ".repeat(indent).as_bytes())?;
            }
            out.write_all(v)?;
            let w = WIDTHS.get(i).copied().unwrap_or(0);
            let n = String::from_utf8_lossy(v).chars().count();
            out.write_all(" ".repeat(w.saturating_sub(n)).as_bytes())?;
            out.write_all(if i + 1 < cells.len() { b"  " } else { b"\n" })?;
        }
        Ok(())
    };
    let names: Vec<Vec<u8>> = columns.iter().map(|c| c.as_bytes().to_vec()).collect();
    line(out, &names, 0)?;
    let dashes: Vec<Vec<u8>> = WIDTHS.iter().map(|&w| vec![b'-'; w]).collect();
    line(out, &dashes, 0)?;
    for (row, indent) in rows.iter().zip(indents(rows)) {
        line(out, row, indent)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(addr: i64, op: &str, p2: i64) -> Vec<Vec<u8>> {
        [
            addr.to_string(),
            op.to_string(),
            "0".into(),
            p2.to_string(),
            "0".into(),
            String::new(),
            "0".into(),
            String::new(),
        ]
        .into_iter()
        .map(String::into_bytes)
        .collect()
    }

    #[test]
    fn loop_bodies_indent_as_sqlite3() {
        // sqlite3 3.40: EXPLAIN SELECT * FROM t (a table of three columns).
        let rows = vec![
            row(0, "Init", 9),
            row(1, "OpenRead", 2),
            row(2, "Rewind", 8),
            row(3, "Rowid", 1),
            row(4, "Column", 1),
            row(5, "Column", 2),
            row(6, "ResultRow", 3),
            row(7, "Next", 3),
            row(8, "Halt", 0),
            row(9, "Transaction", 0),
            row(10, "Goto", 1),
        ];
        assert_eq!(indents(&rows), vec![0, 0, 0, 2, 2, 2, 2, 0, 0, 0, 0]);
        let mut out = Vec::new();
        let cols: Vec<String> = COLUMNS.iter().map(|c| c.to_string()).collect();
        render(&mut out, &cols, &rows[2..4]).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "addr  opcode         p1    p2    p3    p4             p5  comment      \n\
             ----  -------------  ----  ----  ----  -------------  --  -------------\n\
             2     Rewind         0     8     0                    0                \n\
             3     Rowid          0     1     0                    0                \n"
        );
    }
}
