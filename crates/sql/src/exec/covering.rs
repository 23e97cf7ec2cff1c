//! Rows read from a covering index (`plan::covering`): the table row of an index entry
//! is rebuilt from the entry itself, with no lookup in the table B-tree.
//!
//! Invariant: only the columns the planner found in the index are filled; the others stay
//! NULL, and the planner guarantees nothing reads them (`plan::usage`'s mask is a subset
//! of the index's column terms). The rowid is the entry's last value.

use crate::schema::Index;
use crate::value::{codes, Result, SqlError, Value};

/// The rowid and record values (one per table column) of index entry `key` of `index`,
/// over a table of `ncols` columns; an entry that does not end with an integer rowid is a
/// malformed index.
pub fn row_of_entry(index: &Index, key: Vec<Value>, ncols: usize) -> Result<(i64, Vec<Value>)> {
    let rowid = match key.get(index.columns.len()) {
        Some(Value::Integer(i)) => *i,
        _ => {
            return Err(SqlError::Code {
                code: codes::SQLITE_CORRUPT,
                extended_code: codes::SQLITE_CORRUPT,
                message: "database disk image is malformed".into(),
            })
        }
    };
    // Room for the rowid `expand_row` appends: a `vec![NULL; ncols]` was reallocated for
    // it once per entry (~10% of speedtest1 fp test 130's instructions, callgrind).
    let mut vals = Vec::with_capacity(ncols + 1);
    vals.resize(ncols, Value::Null);
    for (ic, v) in index.columns.iter().zip(key) {
        if let (Some(c), None) = (ic.column, &ic.expr) {
            if let Some(slot) = vals.get_mut(c) {
                *slot = v;
            }
        }
    }
    Ok((rowid, vals))
}
