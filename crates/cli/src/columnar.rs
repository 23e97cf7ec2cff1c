//! The columnar modes (column, table, markdown, box), byte-compatible with sqlite3 3.40's
//! `exec_prepared_stmt_columnar`: the whole result is read first, every value is cut into
//! display lines (at newlines and control characters, and at the column's wrap width: its
//! `.width`, else the mode's `--wrap`, 60 by default), each column is as wide as its widest
//! line or header (or its `.width`), and a result with a multi-line value gets a divider
//! between its rows.
//!
//! Widths count characters as sqlite3 does: every byte that does not continue a UTF-8
//! sequence is one (so wide East Asian characters count one, as in 3.40).

use crate::output::{Format, Mode};
use std::io::{self, Write};

const BOX_24: &str = "─";
const BOX_13: &str = "│";

/// Characters in `z` as sqlite3's `strlenChar` counts them.
fn char_count(z: &[u8]) -> usize {
    z.iter().filter(|&&b| b & 0xc0 != 0x80).count()
}

/// shell.c `translateForDisplayAndDup`: the first display line of `z` (at most `max_width`
/// characters, tabs expanded to multiples of 8, stopping at a control character) and where
/// the rest starts, if anything is left. With `word_wrap` a line cut at the width backs up
/// to a space or a word boundary in its second half.
fn display_line(z: &[u8], max_width: usize, word_wrap: bool) -> (Vec<u8>, Option<usize>) {
    let at = |i: usize| z.get(i).copied().unwrap_or(0);
    let mx = if max_width == 0 { 1_000_000 } else { max_width };
    let (mut i, mut n) = (0, 0);
    while n < mx {
        let c = at(i);
        if c >= b' ' {
            n += 1;
            i += 1;
            while at(i) & 0xc0 == 0x80 {
                i += 1;
            }
        } else if c == b'\t' {
            n += 1;
            while n % 8 != 0 && n < mx {
                n += 1;
            }
            i += 1;
        } else {
            break;
        }
    }
    let k;
    if n >= mx && word_wrap {
        let mut kk = i;
        while kk > i / 2 && !at(kk - 1).is_ascii_whitespace() && at(kk - 1) != 0x0b {
            kk -= 1;
        }
        if kk <= i / 2 {
            kk = i;
            while kk > i / 2
                && !(at(kk - 1).is_ascii_alphanumeric() != at(kk).is_ascii_alphanumeric()
                    && at(kk) & 0xc0 != 0x80)
            {
                kk -= 1;
            }
        }
        if kk <= i / 2 {
            k = i;
        } else {
            k = kk;
            i = kk;
            while at(i) == b' ' {
                i += 1;
            }
        }
    } else {
        k = i;
    }
    let tail = if n >= mx && at(i) >= b' ' {
        Some(i)
    } else if at(i) == b'\r' && at(i + 1) == b'\n' {
        (at(i + 2) != 0).then_some(i + 2)
    } else if at(i) == 0 || at(i + 1) == 0 {
        None
    } else {
        Some(i + 1)
    };
    let mut line = Vec::with_capacity(k);
    let (mut i, mut n) = (0, 0);
    while i < k {
        let c = at(i);
        if c >= b' ' {
            n += 1;
            line.push(c);
            i += 1;
            while at(i) & 0xc0 == 0x80 {
                line.push(at(i));
                i += 1;
            }
        } else if c == b'\t' {
            loop {
                n += 1;
                line.push(b' ');
                if n % 8 == 0 || n >= mx {
                    break;
                }
            }
            i += 1;
        } else {
            break;
        }
    }
    (line, tail)
}

/// `utf8_width_print`: `z` padded to `w` characters, on the left when `w` is negative.
fn write_padded(out: &mut dyn Write, w: i64, z: &[u8]) -> io::Result<()> {
    let n = char_count(z) as i64;
    let pad = " ".repeat((w.abs() - n).max(0) as usize);
    if w < 0 {
        out.write_all(pad.as_bytes())?;
        out.write_all(z)
    } else {
        out.write_all(z)?;
        out.write_all(pad.as_bytes())
    }
}

/// `z` centred in `w` characters (the header of table, markdown and box), the odd space on
/// the right.
fn write_centred(out: &mut dyn Write, w: usize, z: &[u8]) -> io::Result<()> {
    let spare = w.saturating_sub(char_count(z));
    out.write_all(" ".repeat(spare / 2).as_bytes())?;
    out.write_all(z)?;
    out.write_all(" ".repeat(spare.div_ceil(2)).as_bytes())
}

/// Writes one result set. `names` are the column names, `rows` each row's values as text
/// (NULL already replaced by the null value, or quoted in qbox).
pub fn render(
    out: &mut dyn Write,
    format: &Format,
    names: &[String],
    rows: &[Vec<Vec<u8>>],
) -> io::Result<()> {
    let ncol = names.len();
    if ncol == 0 || rows.is_empty() {
        return Ok(());
    }
    let set_width = |i: usize| i64::from(format.widths.get(i).copied().unwrap_or(0));
    let wrap_at = |i: usize| match set_width(i) {
        0 => format.wrap,
        w => w.unsigned_abs() as usize,
    };
    // Display lines, the header first; `last_line[r]` marks the last line of a result row.
    let mut lines: Vec<Vec<Vec<u8>>> = vec![names
        .iter()
        .enumerate()
        .map(|(i, n)| display_line(n.as_bytes(), wrap_at(i), format.word_wrap).0)
        .collect()];
    let mut last_line = Vec::new();
    let mut multi_line = false;
    for row in rows {
        let mut rest: Vec<&[u8]> = row.iter().map(|v| v.as_slice()).collect();
        loop {
            let mut line = Vec::with_capacity(ncol);
            let mut more = false;
            for (i, r) in rest.iter_mut().enumerate() {
                let (text, tail) = display_line(r, wrap_at(i), format.word_wrap);
                line.push(text);
                *r = match tail {
                    Some(t) => {
                        more = true;
                        &r[t..]
                    }
                    None => &[],
                };
            }
            lines.push(line);
            last_line.push(!more);
            if !more {
                break;
            }
            multi_line = true;
        }
    }
    let widths: Vec<usize> = (0..ncol)
        .map(|i| {
            let widest = lines.iter().map(|l| char_count(&l[i])).max().unwrap_or(0);
            widest.max(set_width(i).unsigned_abs() as usize)
        })
        .collect();
    let signed = |i: usize| {
        let w = widths[i] as i64;
        if set_width(i) < 0 {
            -w
        } else {
            w
        }
    };
    let rule = |out: &mut dyn Write, left: &str, mid: &str, right: &str, fill: &str| {
        out.write_all(left.as_bytes())?;
        for (i, w) in widths.iter().enumerate() {
            if i > 0 {
                out.write_all(mid.as_bytes())?;
            }
            out.write_all(fill.repeat(w + 2).as_bytes())?;
        }
        out.write_all(right.as_bytes())?;
        out.write_all(b"\n")
    };
    let mode = format.mode;
    let (col_sep, row_sep, row_start) = match mode {
        Mode::Column => ("  ".to_string(), "\n".to_string(), ""),
        Mode::Box => (format!(" {BOX_13} "), format!(" {BOX_13}\n"), "│ "),
        _ => (" | ".to_string(), " |\n".to_string(), "| "),
    };
    let header = &lines[0];
    match mode {
        Mode::Column => {
            if format.headers {
                for (i, h) in header.iter().enumerate() {
                    write_padded(out, signed(i), h)?;
                    out.write_all(if i + 1 == ncol { b"\n" } else { b"  " })?;
                }
                for (i, w) in widths.iter().enumerate() {
                    out.write_all("-".repeat(*w).as_bytes())?;
                    out.write_all(if i + 1 == ncol { b"\n" } else { b"  " })?;
                }
            }
        }
        Mode::Box => {
            rule(out, "┌", "┬", "┐", BOX_24)?;
            out.write_all(row_start.as_bytes())?;
            for (i, h) in header.iter().enumerate() {
                write_centred(out, widths[i], h)?;
                out.write_all(if i + 1 == ncol { &row_sep } else { &col_sep }.as_bytes())?;
            }
            rule(out, "├", "┼", "┤", BOX_24)?;
        }
        _ => {
            if mode == Mode::Table {
                rule(out, "+", "+", "+", "-")?;
            }
            out.write_all(row_start.as_bytes())?;
            for (i, h) in header.iter().enumerate() {
                write_centred(out, widths[i], h)?;
                out.write_all(if i + 1 == ncol { &row_sep } else { &col_sep }.as_bytes())?;
            }
            if mode == Mode::Table {
                rule(out, "+", "+", "+", "-")?;
            } else {
                rule(out, "|", "|", "|", "-")?;
            }
        }
    }
    let data = &lines[1..];
    for (r, line) in data.iter().enumerate() {
        out.write_all(row_start.as_bytes())?;
        for (i, v) in line.iter().enumerate() {
            write_padded(out, signed(i), v)?;
            out.write_all(if i + 1 == ncol { &row_sep } else { &col_sep }.as_bytes())?;
        }
        if multi_line && last_line[r] && r + 1 < data.len() {
            match mode {
                Mode::Table => rule(out, "+", "+", "+", "-")?,
                Mode::Box => rule(out, "├", "┼", "┤", BOX_24)?,
                Mode::Column => out.write_all(b"\n")?,
                _ => {}
            }
        }
    }
    match mode {
        Mode::Table => rule(out, "+", "+", "+", "-"),
        Mode::Box => rule(out, "└", "┴", "┘", BOX_24),
        _ => Ok(()),
    }
}
