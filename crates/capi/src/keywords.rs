//! SQLite's keywords: `sqlite3_keyword_count`, `sqlite3_keyword_name`,
//! `sqlite3_keyword_check`. Programs use them to decide which identifiers to quote and to
//! complete input (the sqlite3 shell does both).
//!
//! Invariant: [`KEYWORDS`] is SQLite's list of 147 keywords (3.40 and 3.50 have the same),
//! in the order `sqlite3_keyword_name` enumerates them there, so an index means the same
//! keyword on either library.

use std::ffi::{c_char, c_int};

const KEYWORDS: [&str; 147] = [
    "REINDEX",
    "INDEXED",
    "INDEX",
    "DESC",
    "ESCAPE",
    "EACH",
    "CHECK",
    "KEY",
    "BEFORE",
    "FOREIGN",
    "FOR",
    "IGNORE",
    "REGEXP",
    "EXPLAIN",
    "INSTEAD",
    "ADD",
    "DATABASE",
    "AS",
    "SELECT",
    "TABLE",
    "LEFT",
    "THEN",
    "END",
    "DEFERRABLE",
    "ELSE",
    "EXCLUDE",
    "DELETE",
    "TEMPORARY",
    "TEMP",
    "OR",
    "ISNULL",
    "NULLS",
    "SAVEPOINT",
    "INTERSECT",
    "TIES",
    "NOTNULL",
    "NOT",
    "NO",
    "NULL",
    "LIKE",
    "EXCEPT",
    "TRANSACTION",
    "ACTION",
    "ON",
    "NATURAL",
    "ALTER",
    "RAISE",
    "EXCLUSIVE",
    "EXISTS",
    "CONSTRAINT",
    "INTO",
    "OFFSET",
    "OF",
    "SET",
    "TRIGGER",
    "RANGE",
    "GENERATED",
    "DETACH",
    "HAVING",
    "GLOB",
    "BEGIN",
    "INNER",
    "REFERENCES",
    "UNIQUE",
    "QUERY",
    "WITHOUT",
    "WITH",
    "OUTER",
    "RELEASE",
    "ATTACH",
    "BETWEEN",
    "NOTHING",
    "GROUPS",
    "GROUP",
    "CASCADE",
    "ASC",
    "DEFAULT",
    "CASE",
    "COLLATE",
    "CREATE",
    "CURRENT_DATE",
    "IMMEDIATE",
    "JOIN",
    "INSERT",
    "MATCH",
    "PLAN",
    "ANALYZE",
    "PRAGMA",
    "MATERIALIZED",
    "DEFERRED",
    "DISTINCT",
    "IS",
    "UPDATE",
    "VALUES",
    "VIRTUAL",
    "ALWAYS",
    "WHEN",
    "WHERE",
    "RECURSIVE",
    "ABORT",
    "AFTER",
    "RENAME",
    "AND",
    "DROP",
    "PARTITION",
    "AUTOINCREMENT",
    "TO",
    "IN",
    "CAST",
    "COLUMN",
    "COMMIT",
    "CONFLICT",
    "CROSS",
    "CURRENT_TIMESTAMP",
    "CURRENT_TIME",
    "CURRENT",
    "PRECEDING",
    "FAIL",
    "LAST",
    "FILTER",
    "REPLACE",
    "FIRST",
    "FOLLOWING",
    "FROM",
    "FULL",
    "LIMIT",
    "IF",
    "ORDER",
    "RESTRICT",
    "OTHERS",
    "OVER",
    "RETURNING",
    "RIGHT",
    "ROLLBACK",
    "ROWS",
    "ROW",
    "UNBOUNDED",
    "UNION",
    "USING",
    "VACUUM",
    "VIEW",
    "WINDOW",
    "DO",
    "BY",
    "INITIALLY",
    "ALL",
    "PRIMARY",
];

#[no_mangle]
pub extern "C" fn sqlite3_keyword_count() -> c_int {
    KEYWORDS.len() as c_int
}

/// The `i`-th keyword: its bytes (not NUL-terminated) in `*name` and length in `*len`;
/// SQLITE_ERROR when `i` is out of range.
#[no_mangle]
pub unsafe extern "C" fn sqlite3_keyword_name(
    i: c_int,
    name: *mut *const c_char,
    len: *mut c_int,
) -> c_int {
    let Some(k) = usize::try_from(i).ok().and_then(|i| KEYWORDS.get(i)) else {
        return crate::rc::ERROR;
    };
    if !name.is_null() {
        *name = k.as_ptr() as *const c_char;
    }
    if !len.is_null() {
        *len = k.len() as c_int;
    }
    crate::rc::OK
}

/// 1 when the `n` bytes at `z` are a keyword, ASCII case ignored.
#[no_mangle]
pub unsafe extern "C" fn sqlite3_keyword_check(z: *const c_char, n: c_int) -> c_int {
    crate::guard(0, || {
        let Ok(n) = usize::try_from(n) else {
            return 0;
        };
        if z.is_null() {
            return 0;
        }
        let word = std::slice::from_raw_parts(z as *const u8, n);
        c_int::from(
            KEYWORDS
                .iter()
                .any(|k| k.as_bytes().eq_ignore_ascii_case(word)),
        )
    })
}
