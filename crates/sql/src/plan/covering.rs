//! Covering indexes: whether an index holds every column a query reads from its table, so
//! the table row need not be fetched (queryplanner.html §1.7), and which covering index a
//! full scan walks instead of the table.
//!
//! The choice follows SQLite's `whereLoopAddBtree` and `isSimpleCount` with its row-size
//! estimates (`estimateTableWidth`, `estimateIndexWidth`, the `szEst` of a column from its
//! declared type in `sqlite3AffinityType`), in the order SQLite keeps a table's indexes,
//! so EXPLAIN QUERY PLAN names the same index as SQLite does.
//!
//! Invariants:
//! - An index covers a source only when the source's needed-column mask (`plan::usage`,
//!   computed with every access path still a scan, which reads the same columns) is a subset
//!   of the index's plain column terms plus the rowid. Expression terms never cover a column.
//! - Only rowid tables without VIRTUAL generated columns are covered: a WITHOUT ROWID
//!   table's secondary index rows are found through its PRIMARY KEY, and a VIRTUAL column
//!   would have to be computed from columns the index lacks.
//! - Partial indexes are never walked as a full scan (a scan must see every row).

use crate::schema::{Index, Schema, Table};
use crate::value::Affinity;
use std::sync::{Arc, OnceLock};

/// SQLite's `sqlite3LogEst`: about 10*log2(x), the unit of its cost estimates.
pub fn log_est(mut x: u64) -> i16 {
    const A: [i16; 8] = [0, 2, 3, 5, 6, 7, 8, 9];
    let mut y: i16 = 40;
    if x < 8 {
        if x < 2 {
            return 0;
        }
        while x < 8 {
            y -= 10;
            x <<= 1;
        }
    } else {
        while x > 255 {
            y += 40;
            x >>= 4;
        }
        while x > 15 {
            y += 10;
            x >>= 1;
        }
    }
    A[(x & 7) as usize] + y - 10
}

/// A column's size estimate in SQLite's units (an integer is 1): `szEst` as
/// `sqlite3AffinityType` derives it from the declared type. A TEXT or BLOB-affinity type
/// counts 5, or k/4+1 when it reads `CHAR(k)`/`BLOB(k)`; everything else 1.
pub fn column_size_est(decl_type: &str) -> u32 {
    if decl_type.is_empty() {
        return 1;
    }
    let b = decl_type.as_bytes();
    let word = |s: &[u8; 4]| u32::from_be_bytes(*s);
    let mut aff = Affinity::Numeric;
    let mut size_at: Option<usize> = None;
    let mut h: u32 = 0;
    let mut i = 0;
    while i < b.len() {
        h = (h << 8).wrapping_add(u32::from(b[i].to_ascii_lowercase()));
        i += 1;
        if h == word(b"char") {
            aff = Affinity::Text;
            size_at = Some(i);
        } else if h == word(b"clob") || h == word(b"text") {
            aff = Affinity::Text;
        } else if h == word(b"blob") && matches!(aff, Affinity::Numeric | Affinity::Real) {
            aff = Affinity::Blob;
            if b.get(i) == Some(&b'(') {
                size_at = Some(i);
            }
        } else if (h == word(b"real") || h == word(b"floa") || h == word(b"doub"))
            && aff == Affinity::Numeric
        {
            aff = Affinity::Real;
        } else if h & 0x00FF_FFFF == u32::from_be_bytes([0, b'i', b'n', b't']) {
            aff = Affinity::Integer;
            break;
        }
    }
    let mut v: u32 = 0;
    if matches!(aff, Affinity::Blob | Affinity::Text) {
        match size_at {
            Some(at) => {
                if let Some(d) = b[at..].iter().position(|c| c.is_ascii_digit()) {
                    let digits: String = b[at + d..]
                        .iter()
                        .take_while(|c| c.is_ascii_digit())
                        .map(|&c| c as char)
                        .collect();
                    v = digits.parse::<u32>().unwrap_or(u32::MAX / 8);
                }
            }
            None => v = 16,
        }
    }
    (v / 4 + 1).min(255)
}

/// The `column_size_est` of each column of a table, made on first use and kept with the
/// table (`Table::size_ests`): reading the declared types again was ~340 instructions of
/// every one-shot SELECT that chooses among indexes (three calls for a two-column table,
/// speedtest1 test 510 under callgrind). Declared types are fixed once the table is in the
/// schema: a change makes a new `Table` (a reload, or ALTER TABLE's edited copy), and a
/// clone starts empty so that a copy being edited never carries its original's sizes.
#[derive(Default)]
pub struct SizeEstCell(OnceLock<Box<[u8]>>);

impl Clone for SizeEstCell {
    fn clone(&self) -> SizeEstCell {
        SizeEstCell::default()
    }
}

impl std::fmt::Debug for SizeEstCell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SizeEstCell")
    }
}

fn column_sizes(t: &Table) -> &[u8] {
    t.size_ests.0.get_or_init(|| {
        t.columns
            .iter()
            .map(|c| u8::try_from(column_size_est(&c.decl_type)).unwrap_or(u8::MAX))
            .collect()
    })
}

/// `szTabRow`: the estimated size of a table row (LogEst).
pub fn table_row_size(t: &Table) -> i16 {
    let mut w: u64 = column_sizes(t).iter().map(|&s| u64::from(s)).sum();
    if t.rowid_alias.is_none() {
        w += 1;
    }
    log_est(w * 4)
}

/// `szIdxRow`: the estimated size of an index entry (LogEst): its terms plus the rowid.
pub fn index_row_size(t: &Table, ix: &Index) -> i16 {
    let mut w: u64 = 1;
    for ic in &ix.columns {
        w += match ic.column {
            Some(c) if Some(c) != t.rowid_alias => {
                column_sizes(t).get(c).map_or(1, |&s| u64::from(s))
            }
            _ => 1,
        };
    }
    log_est(w * 4)
}

/// A table's usable indexes in the order SQLite keeps them (`Table.pIndex`): each CREATE INDEX
/// goes in front of the earlier ones, except that indexes whose conflict action is REPLACE
/// come last. Ties in cost go to the earlier index of this order, as in SQLite.
pub fn sqlite_index_order(schema: &Schema, t: &Table) -> Vec<Arc<Index>> {
    let mut out: Vec<Arc<Index>> = t
        .indexes
        .iter()
        .rev()
        .filter_map(|n| schema.index_of(t, n).cloned())
        // An index ordered by a collation this connection lacks orders nothing the plan
        // may rely on (`SourcePlan::may_use_index`).
        .filter(|ix| ix.columns.iter().all(|c| c.collation.is_live()))
        .collect();
    // A stable sort keeps CREATE order within each group and, for the few indexes a table
    // has, sorts in place: one vector per call (two were ~250 instructions of a one-shot
    // point SELECT, speedtest1 test 510 under callgrind).
    out.sort_by_key(|ix| {
        matches!(
            ix.on_conflict,
            Some(crate::parse::ast::ConflictAction::Replace)
        )
    });
    out
}

/// The mask of table columns a source reads, when its rows could come from an index
/// alone: a rowid table without VIRTUAL columns. `needed` is `usage::needed_columns`' entry
/// (`None`: every column).
pub fn coverable_mask(t: &Table, needed: Option<&Arc<[bool]>>) -> Option<Vec<bool>> {
    if t.without_rowid || t.has_virtual() {
        return None;
    }
    let n = t.columns.len();
    Some(match needed {
        Some(m) => (0..n).map(|i| m.get(i).copied().unwrap_or(true)).collect(),
        None => vec![true; n],
    })
}

/// Whether `ix` holds every column flagged in `mask` (the rowid, and a column aliasing it,
/// is in every index entry).
pub fn index_covers(t: &Table, ix: &Index, mask: &[bool]) -> bool {
    if ix.root == 0 || ix.root == t.root {
        return false;
    }
    mask.iter().enumerate().all(|(c, needed)| {
        !*needed
            || Some(c) == t.rowid_alias
            || ix
                .columns
                .iter()
                .any(|ic| ic.expr.is_none() && ic.column == Some(c))
    })
}

/// The covering index a full scan of `t` walks instead of the table, if any: one narrower
/// than the table row, the cheapest by SQLite's full-scan cost `15*szIdxRow/szTabRow`
/// (integer division), or for a simple `count(*)` the narrowest (`isSimpleCount`); the
/// first in SQLite's index order wins a tie.
pub fn full_scan_index(
    schema: &Schema,
    t: &Table,
    mask: &[bool],
    simple_count: bool,
) -> Option<Arc<Index>> {
    let tab_size = table_row_size(t);
    let mut best: Option<(i32, Arc<Index>)> = None;
    for ix in sqlite_index_order(schema, t) {
        if ix.partial.is_some() || !index_covers(t, &ix, mask) {
            continue;
        }
        let size = index_row_size(t, &ix);
        if size >= tab_size {
            continue;
        }
        let cost = if simple_count {
            i32::from(size)
        } else {
            15 * i32::from(size) / i32::from(tab_size.max(1))
        };
        if best.as_ref().map_or(true, |(c, _)| cost < *c) {
            best = Some((cost, ix));
        }
    }
    best.map(|(_, ix)| ix)
}

/// `SELECT count(*) FROM t` and nothing more (SQLite's `isSimpleCount`): no WHERE, no
/// grouping, one table, one output that is the one aggregate, `count(*)` unfiltered.
pub fn is_simple_count(core: &super::CorePlan) -> bool {
    core.sources.len() == 1
        && matches!(core.sources[0].kind, super::SourceKind::Table(_))
        && core.filters.iter().all(|f| f.is_empty())
        && core.group_by.is_empty()
        && core.having.is_none()
        && core.windows.is_empty()
        && !core.distinct
        && core.n_visible == 1
        && matches!(core.outputs.first(), Some(super::CExpr::Agg(0)))
        && matches!(core.aggs.as_slice(), [a] if a.def.name.eq_ignore_ascii_case("count")
            && a.args.is_empty() && !a.distinct && a.filter.is_none())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_est_matches_sqlite() {
        // Values from sqlite3LogEst's comment: 10 -> 33, 100 -> 66, 1000 -> 99,
        // 1000000 -> 199; and the small ones.
        assert_eq!(log_est(0), 0);
        assert_eq!(log_est(1), 0);
        assert_eq!(log_est(2), 10);
        assert_eq!(log_est(8), 30);
        assert_eq!(log_est(12), 36);
        assert_eq!(log_est(10), 33);
        assert_eq!(log_est(100), 66);
        assert_eq!(log_est(1000), 99);
        assert_eq!(log_est(1_000_000), 199);
    }

    #[test]
    fn column_size_follows_the_declared_type() {
        assert_eq!(column_size_est(""), 1);
        assert_eq!(column_size_est("INTEGER"), 1);
        assert_eq!(column_size_est("REAL"), 1);
        assert_eq!(column_size_est("TEXT"), 5);
        assert_eq!(column_size_est("BLOB"), 5);
        assert_eq!(column_size_est("VARCHAR(100)"), 26);
        assert_eq!(column_size_est("CHAR"), 1);
        assert_eq!(column_size_est("BLOB(40)"), 11);
        assert_eq!(column_size_est("NUMERIC"), 1);
    }
}
