//! SQLite's number-to-text rules, for front ends that receive typed values and must print
//! them byte-for-byte as SQLite does.
//!
//! A REAL becomes text through SQLite's own printf (printf.c), not C's: `%!.15g` for
//! `CAST(r AS TEXT)` and `sqlite3_column_text` (what the shell prints), and `%.3f` in the
//! sqllogictest harness. The digits come from the SQL layer's port of `sqlite3FpDecode`
//! (`parlite_sql::value::num`), the same code the engine uses for CAST and printf, so the
//! shell and the engine can never disagree; `tests/numfmt_vs_sqlite.rs` in parlite-testkit
//! checks both functions against SQLite itself.

use parlite_sql::value::num::{format_float, real_to_text, FloatFormat, FloatStyle};

/// SQLite's `printf("%.Nf", r)`.
pub fn format_fixed(r: f64, precision: u32) -> String {
    let mut out = String::new();
    format_float(
        &mut out,
        r,
        &FloatFormat {
            style: FloatStyle::Fixed,
            precision: precision.min(i32::MAX as u32) as i32,
            alternate: false,
            alt2: false,
            sign_char: None,
            zero_pad: false,
            thousands: false,
            upper: false,
        },
    );
    out
}

/// SQLite's `printf("%!.15g", r)`: the text of a REAL in `CAST(r AS TEXT)`,
/// `sqlite3_column_text` and the shell. Integral values keep a `.0` (`1.0`, `1.0e+20`).
pub fn format_real(r: f64) -> String {
    real_to_text(r)
}
