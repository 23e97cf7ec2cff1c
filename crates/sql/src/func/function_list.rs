//! The function catalog behind `PRAGMA function_list` and `pragma_function_list`: one row
//! per (name, argument count) that parlite implements, as SQLite 3.50.2 lists it.
//!
//! Invariants:
//! - Every entry names a function `lookup` (or the window registry) resolves with that
//!   argument count, and every built-in has at least one entry (unit test below).
//! - The columns are SQLite's: name, builtin (always 1), type (`s` scalar, `w` aggregate
//!   or window; SQLite lists every built-in aggregate as `w`), enc (`utf8`), narg and flags.
//!   narg is SQLite's: -1 for any number of arguments, and below -1 for "at least
//!   -narg-2" (`concat` is -3, `coalesce` -4). flags is SQLite's
//!   `funcFlags & (DETERMINISTIC|DIRECTONLY|SUBTYPE|INNOCUOUS|INTERNAL) ^ INNOCUOUS`,
//!   copied from SQLite's own listing rather than derived from parlite's definitions.
//! - Rows come in SQLite's order (its hash order), then the math functions, which the
//!   oracle build lacks (SQLITE_ENABLE_MATH_FUNCTIONS) and SQLite flags as constant.
//!   Functions SQLite has and parlite lacks (sqlite_log, the FTS and
//!   R-Tree helpers) are not listed.

use crate::value::Value;

/// (name, type, narg, flags)
pub static FUNCTION_LIST: &[(&str, &str, i64, i64)] = &[
    ("group_concat", "w", 1, 2097152),
    ("group_concat", "w", 2, 2097152),
    ("json_type", "s", 1, 2099200),
    ("json_type", "s", 2, 2099200),
    ("jsonb_set", "s", -1, 3147776),
    ("julianday", "s", -1, 2099200),
    ("ntile", "w", 1, 2097152),
    ("nullif", "s", 2, 2099200),
    ("sqlite_compileoption_get", "s", 1, 2097152),
    ("json_valid", "s", 1, 2099200),
    ("json_valid", "s", 2, 2099200),
    ("json_quote", "s", 1, 3147776),
    ("json_patch", "s", 2, 2099200),
    ("->", "s", 2, 2099200),
    ("json_array", "s", -1, 3147776),
    ("current_timestamp", "s", 0, 2097152),
    ("sqlite_compileoption_used", "s", 1, 2097152),
    ("json_remove", "s", -1, 2099200),
    ("json_pretty", "s", 1, 2099200),
    ("json_pretty", "s", 2, 2099200),
    ("jsonb_patch", "s", 2, 2099200),
    ("json_object", "s", -1, 3147776),
    ("json_insert", "s", -1, 3147776),
    ("->>", "s", 2, 2099200),
    ("jsonb_array", "s", -1, 3147776),
    ("sum", "w", 1, 2097152),
    ("quote", "s", 1, 2099200),
    ("printf", "s", -1, 2099200),
    ("likelihood", "s", 2, 2099200),
    ("json_replace", "s", -1, 3147776),
    ("jsonb_remove", "s", -1, 2099200),
    ("jsonb_object", "s", -1, 3147776),
    ("jsonb_insert", "s", -1, 3147776),
    ("json_extract", "s", -1, 2099200),
    ("last_value", "w", 1, 2097152),
    ("rank", "w", 0, 2097152),
    ("sign", "s", 1, 2099200),
    ("round", "s", 1, 2099200),
    ("round", "s", 2, 2099200),
    ("rtrim", "s", 1, 2099200),
    ("rtrim", "s", 2, 2099200),
    ("jsonb_replace", "s", -1, 3147776),
    ("jsonb_extract", "s", -1, 2099200),
    ("nth_value", "w", 2, 2097152),
    ("random", "s", 0, 2097152),
    ("trim", "s", 1, 2099200),
    ("trim", "s", 2, 2099200),
    ("time", "s", -1, 2099200),
    ("total", "w", 1, 2097152),
    ("substr", "s", 2, 2099200),
    ("substr", "s", 3, 2099200),
    ("replace", "s", 3, 2099200),
    ("unhex", "s", 1, 2099200),
    ("unhex", "s", 2, 2099200),
    ("upper", "s", 1, 2099200),
    ("subtype", "s", 1, 3147776),
    ("typeof", "s", 1, 2099200),
    ("load_extension", "s", 1, 524288),
    ("load_extension", "s", 2, 524288),
    ("soundex", "s", 1, 2099200),
    ("json_group_array", "w", 1, 3147776),
    ("avg", "w", 1, 2097152),
    ("unistr", "s", 1, 2099200),
    ("abs", "s", 1, 2099200),
    ("octet_length", "s", 1, 2099200),
    ("json_group_object", "w", 2, 3147776),
    ("jsonb_group_array", "w", 1, 3147776),
    ("json_array_length", "s", 1, 2099200),
    ("json_array_length", "s", 2, 2099200),
    ("strftime", "s", -1, 2099200),
    ("substring", "s", 2, 2099200),
    ("substring", "s", 3, 2099200),
    ("randomblob", "s", 1, 2097152),
    ("unicode", "s", 1, 2099200),
    ("jsonb_group_object", "w", 2, 3147776),
    ("timediff", "s", 2, 2099200),
    ("percent_rank", "w", 0, 2097152),
    ("row_number", "w", 0, 2097152),
    ("string_agg", "w", 2, 2097152),
    ("last_insert_rowid", "s", 0, 2097152),
    ("unlikely", "s", 1, 2099200),
    ("json_error_position", "s", 1, 2099200),
    ("char", "s", -1, 2099200),
    ("unixepoch", "s", -1, 2099200),
    ("count", "w", 0, 2097152),
    ("count", "w", 1, 2097152),
    ("date", "s", -1, 2099200),
    ("concat", "s", -3, 2099200),
    ("total_changes", "s", 0, 2097152),
    ("changes", "s", 0, 2097152),
    ("unistr_quote", "s", 1, 2099200),
    ("sqlite_version", "s", 0, 2097152),
    ("if", "s", -4, 2099200),
    ("coalesce", "s", -4, 2099200),
    ("glob", "s", 2, 2099200),
    ("zeroblob", "s", 1, 2099200),
    ("hex", "s", 1, 2099200),
    ("iif", "s", -4, 2099200),
    ("sqlite_source_id", "s", 0, 2097152),
    ("concat_ws", "s", -4, 2099200),
    ("format", "s", -1, 2099200),
    ("datetime", "s", -1, 2099200),
    ("cume_dist", "w", 0, 2097152),
    ("instr", "s", 2, 2099200),
    ("json", "s", 1, 2099200),
    ("dense_rank", "w", 0, 2097152),
    ("ifnull", "s", 2, 2099200),
    ("jsonb", "s", 1, 2099200),
    ("current_date", "s", 0, 2097152),
    ("current_time", "s", 0, 2097152),
    ("lag", "w", 1, 2097152),
    ("lag", "w", 3, 2097152),
    ("lag", "w", 2, 2097152),
    ("like", "s", 2, 2099200),
    ("like", "s", 3, 2099200),
    ("max", "s", -3, 2099200),
    ("max", "w", 1, 2097152),
    ("min", "s", -3, 2099200),
    ("min", "w", 1, 2097152),
    ("lead", "w", 1, 2097152),
    ("lead", "w", 3, 2097152),
    ("lead", "w", 2, 2097152),
    ("lower", "s", 1, 2099200),
    ("ltrim", "s", 1, 2099200),
    ("ltrim", "s", 2, 2099200),
    ("first_value", "w", 1, 2097152),
    ("length", "s", 1, 2099200),
    ("likely", "s", 1, 2099200),
    ("json_set", "s", -1, 3147776),
    ("ceil", "s", 1, 2099200),
    ("ceiling", "s", 1, 2099200),
    ("floor", "s", 1, 2099200),
    ("trunc", "s", 1, 2099200),
    ("ln", "s", 1, 2099200),
    ("log", "s", 1, 2099200),
    ("log10", "s", 1, 2099200),
    ("log2", "s", 1, 2099200),
    ("log", "s", 2, 2099200),
    ("exp", "s", 1, 2099200),
    ("pow", "s", 2, 2099200),
    ("power", "s", 2, 2099200),
    ("mod", "s", 2, 2099200),
    ("acos", "s", 1, 2099200),
    ("asin", "s", 1, 2099200),
    ("atan", "s", 1, 2099200),
    ("atan2", "s", 2, 2099200),
    ("cos", "s", 1, 2099200),
    ("sin", "s", 1, 2099200),
    ("tan", "s", 1, 2099200),
    ("cosh", "s", 1, 2099200),
    ("sinh", "s", 1, 2099200),
    ("tanh", "s", 1, 2099200),
    ("acosh", "s", 1, 2099200),
    ("asinh", "s", 1, 2099200),
    ("atanh", "s", 1, 2099200),
    ("sqrt", "s", 1, 2099200),
    ("radians", "s", 1, 2099200),
    ("degrees", "s", 1, 2099200),
    ("pi", "s", 0, 2099200),
];

/// The rows of `PRAGMA function_list`.
pub fn function_list_rows() -> Vec<Vec<Value>> {
    FUNCTION_LIST
        .iter()
        .map(|&(name, ty, narg, flags)| {
            vec![
                Value::text(name),
                Value::Integer(1),
                Value::text(ty),
                Value::text("utf8"),
                Value::Integer(narg),
                Value::Integer(flags),
            ]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The argument counts an entry stands for (a bounded sample for variadic ones).
    fn arities(narg: i64) -> Vec<usize> {
        match narg {
            n if n >= 0 => vec![n as usize],
            -1 => vec![1, 3],
            n => {
                let min = (-n - 2) as usize;
                vec![min, min + 1, min + 3]
            }
        }
    }

    #[test]
    fn every_entry_resolves_and_every_builtin_is_listed() {
        for &(name, ty, narg, _) in FUNCTION_LIST {
            for n in arities(narg) {
                let window = matches!(
                    crate::func::window::WindowKind::lookup(name, n),
                    Some(Ok(_))
                );
                let found = super::super::lookup(name, n);
                // `max`/`min` with one argument are the aggregates, listed separately.
                let ok = match ty {
                    "w" => window || found.map(|d| d.is_aggregate()).unwrap_or(false),
                    _ => found.is_ok(),
                };
                assert!(ok, "{name}({n}) listed as {ty} but not resolved");
            }
        }
        for d in super::super::BUILTINS {
            assert!(
                FUNCTION_LIST.iter().any(|e| e.0 == d.name),
                "{} is not in FUNCTION_LIST",
                d.name
            );
        }
    }
}
