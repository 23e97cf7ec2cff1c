//! WITHOUT ROWID tables (withoutrowid.html): tables stored as an index B-tree keyed by their
//! PRIMARY KEY, in SQLite's exact layout so that files interoperate both ways.
//!
//! Layout (fileformat2.html §2.5, as SQLite writes it):
//! - The table's record is the PRIMARY KEY columns in key order, then every other column in
//!   declaration order. The tree is ordered by the PRIMARY KEY terms (their collations and
//!   directions); the key is unique, so the rest of a record never decides an order.
//! - A secondary index's record is its terms, then the PRIMARY KEY columns it does not
//!   already hold (same column and collation), with the key's collations and directions.
//!   That suffix names the table row, as the trailing rowid does for rowid tables.
//! - The PRIMARY KEY "index" (`sqlite_autoindex_T_N`, origin `pk`) has no tree of its own
//!   and no `sqlite_schema` row; in the schema its root is the table's root, which is how
//!   code tells it apart from a real index tree (never clear, copy or maintain it).
//!
//! - Generated columns (gencol.html): a STORED column has its field among the non-key
//!   columns, in table order; a VIRTUAL column has none (SQLite's
//!   `convertToWithoutRowidTable` leaves COLFLAG_VIRTUAL columns out of the PRIMARY KEY
//!   index's column list). No PRIMARY KEY column is generated (refused at CREATE).
//!
//! Invariants:
//! - In the executor's combined-row layout (columns, then the rowid slot) such a table's
//!   rowid slot holds NULL and cannot be named: `rowid` is an ordinary unknown column.
//! - Rows are found again by their PRIMARY KEY values (a prefix probe of the table tree),
//!   never by position; DML collects rows first, then writes (as for rowid tables).

use super::eval::Exec;
use super::store::{KeyOrder, Row, Store};
use crate::schema::{Index, IndexColumn, Table};
use crate::value::{Affinity, Result, Value};
use std::sync::Arc;

/// How one WITHOUT ROWID table maps between table-order columns and its records.
#[derive(Debug, Clone)]
pub struct WrLayout {
    /// The column of each PRIMARY KEY term, in key order.
    pub pk: Vec<usize>,
    /// Every stored column in record order: the PRIMARY KEY terms, then the rest in table
    /// order (VIRTUAL generated columns have no field).
    pub record: Vec<usize>,
    /// The table tree's key order (the PRIMARY KEY terms).
    pub order: KeyOrder,
    /// The table's column count (VIRTUAL columns included).
    pub ncols: usize,
    /// The stored columns of REAL affinity: SQLite writes an integral value of such a
    /// column as an integer, in a WITHOUT ROWID record too (fileformat2.html §2.1), and
    /// it reads back as a real.
    pub reals: Vec<usize>,
}

/// A table's [`WrLayout`], made on first use and kept with the table (`Table::wr_layout`):
/// building it is four vectors, which a lookup statement paid each time (~1.1k of the
/// ~52k instructions of a speedtest1 test 510 point SELECT, and again in each REPLACE of
/// test 500; BENCHMARKS.md "stmtrun"). Every field it derives from (`columns`, `pk_key`)
/// is fixed once the table is in the schema: a change makes a new `Table` (a reload, or
/// ALTER TABLE's edited copy), and a clone starts empty so that a copy being edited never
/// carries the layout of the table it was copied from.
#[derive(Default)]
pub struct LayoutCell(std::sync::OnceLock<Arc<WrLayout>>);

impl Clone for LayoutCell {
    fn clone(&self) -> LayoutCell {
        LayoutCell::default()
    }
}

impl std::fmt::Debug for LayoutCell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LayoutCell")
    }
}

impl WrLayout {
    /// The table's layout, built once per `Table` (`LayoutCell`).
    pub fn shared(t: &Table) -> Arc<WrLayout> {
        t.wr_layout
            .0
            .get_or_init(|| Arc::new(WrLayout::of(t)))
            .clone()
    }

    pub fn of(t: &Table) -> WrLayout {
        let pk: Vec<usize> = t.pk_key.iter().filter_map(|c| c.column).collect();
        let mut record = pk.clone();
        record.extend((0..t.columns.len()).filter(|&c| !pk.contains(&c) && !t.is_virtual(c)));
        let reals = record
            .iter()
            .copied()
            .filter(|&c| t.columns[c].affinity == Affinity::Real)
            .collect();
        WrLayout {
            ncols: t.columns.len(),
            pk,
            record,
            reals,
            order: KeyOrder {
                columns: t.pk_key.iter().map(|c| (c.collation, c.desc)).collect(),
            },
        }
    }

    /// The record of a row given as table-order column values.
    pub fn record_of(&self, vals: &[Value]) -> Row {
        self.record
            .iter()
            .map(|&c| vals.get(c).cloned().unwrap_or(Value::Null))
            .collect()
    }

    /// The PRIMARY KEY values (key order) of a row given as table-order column values.
    pub fn pk_of(&self, vals: &[Value]) -> Row {
        self.pk
            .iter()
            .map(|&c| vals.get(c).cloned().unwrap_or(Value::Null))
            .collect()
    }

    /// A stored record as a combined row: table-order columns (defaults for columns added
    /// after the record was written; NULL for VIRTUAL columns, which `full_row` computes),
    /// then the NULL rowid slot.
    pub fn row_of_record(&self, rec: Row, defaults: &[Value]) -> Row {
        let n = self.record.len();
        let mut row: Row = vec![Value::Null; self.ncols + 1];
        let mut filled = 0;
        for (v, &c) in rec.into_iter().zip(&self.record) {
            row[c] = v;
            filled += 1;
        }
        for &c in &self.record[filled.min(n)..] {
            row[c] = defaults.get(c).cloned().unwrap_or(Value::Null);
        }
        for &c in &self.reals {
            if let Value::Integer(v) = row[c] {
                row[c] = Value::Real(v as f64);
            }
        }
        row
    }

    /// The stored row whose PRIMARY KEY equals `pk` (under the key's collations), as a
    /// combined row.
    pub fn lookup(
        &self,
        store: &dyn Store,
        t: &Table,
        pk: &[Value],
        defaults: &[Value],
    ) -> Result<Option<Row>> {
        match store.index_first_with_prefix(t.root, &self.order, pk)? {
            Some(rec) => Ok(Some(self.row_of_record(rec, defaults))),
            None => Ok(None),
        }
    }

    /// `row_of_record` with the VIRTUAL columns computed by `gen` (the table's generated
    /// columns, bound once by the caller with `Exec::generated_exprs`; None when the table
    /// has no VIRTUAL column).
    pub fn full_row(
        &self,
        exec: &Exec,
        t: &Table,
        rec: Row,
        defaults: &[Value],
        gen: Option<&[(usize, crate::plan::CExpr)]>,
    ) -> Result<Row> {
        let mut row = self.row_of_record(rec, defaults);
        if let Some(g) = gen {
            exec.compute_generated(t, g, &mut row, true)?;
        }
        Ok(row)
    }

    /// `lookup` with the VIRTUAL columns computed: the whole row, as writers need it to
    /// find a row's index entries (an index may hold a VIRTUAL column).
    pub fn lookup_full(
        &self,
        exec: &Exec,
        t: &Table,
        pk: &[Value],
        defaults: &[Value],
    ) -> Result<Option<Row>> {
        let Some(mut row) = self.lookup(exec.store, t, pk, defaults)? else {
            return Ok(None);
        };
        if t.has_virtual() {
            let gen = exec.generated_exprs(t)?;
            exec.compute_generated(t, &gen, &mut row, true)?;
        }
        Ok(Some(row))
    }
}

/// The PRIMARY KEY terms a secondary index on WITHOUT ROWID table `t` appends to its own
/// terms: those not already among them with the same collation (SQLite's `isDupColumn`).
///
/// A CREATE INDEX suffix keeps the key's directions; the suffix of a UNIQUE constraint's
/// automatic index is always ascending, because SQLite builds those indexes before it
/// knows the table is WITHOUT ROWID and then only swaps the rowid for the key columns
/// (`convertToWithoutRowidTable`, its "bAscKeyBug").
pub fn index_suffix(t: &Table, ix: &Index) -> Vec<IndexColumn> {
    t.pk_key
        .iter()
        .filter(|p| {
            !ix.columns
                .iter()
                .any(|c| c.expr.is_none() && c.column == p.column && c.collation == p.collation)
        })
        .map(|p| IndexColumn {
            desc: p.desc && ix.sql.is_some(),
            ..p.clone()
        })
        .collect()
}

/// The key order of index `ix` on table `t`: its terms, then (WITHOUT ROWID) the PRIMARY
/// KEY suffix; for a rowid table the trailing rowid compares BINARY ascending by default.
pub fn key_order_for(t: &Table, ix: &Index) -> KeyOrder {
    let mut order = Exec::key_order(ix);
    if t.without_rowid && ix.root != t.root {
        order
            .columns
            .extend(index_suffix(t, ix).iter().map(|c| (c.collation, c.desc)));
    }
    order
}

/// For a secondary index entry of a WITHOUT ROWID table: where, in the entry, each PRIMARY
/// KEY term (key order) is found.
pub fn pk_positions_in_index(t: &Table, ix: &Index) -> Vec<usize> {
    let nterms = ix.columns.len();
    let suffix = index_suffix(t, ix);
    t.pk_key
        .iter()
        .map(|p| {
            match ix.columns.iter().position(|c| {
                c.expr.is_none() && c.column == p.column && c.collation == p.collation
            }) {
                Some(i) => i,
                None => {
                    nterms
                        + suffix
                            .iter()
                            .position(|s| s.column == p.column && s.collation == p.collation)
                            .unwrap_or(0)
                }
            }
        })
        .collect()
}

/// The entry of a row in secondary index `ix` of WITHOUT ROWID table `t`: the index terms,
/// then the PRIMARY KEY suffix. `vals` are the row's columns in table order.
pub fn index_key_wr(
    exec: &Exec,
    t: &Table,
    ix: &Index,
    exprs: &super::dml::IndexExprs,
    vals: &[Value],
) -> Result<Row> {
    let mut k = super::dml::index_key(exec, ix, exprs, vals, 0)?;
    k.pop();
    for s in index_suffix(t, ix) {
        k.push(
            s.column
                .and_then(|c| vals.get(c).cloned())
                .unwrap_or(Value::Null),
        );
    }
    Ok(k)
}

/// The PRIMARY KEY of WITHOUT ROWID table `t` as an index over the table's own tree.
pub fn primary_key_index(t: &Table) -> Index {
    Index {
        name: format!("sqlite_autoindex_{}_1", t.name),
        table: t.name.clone(),
        root: t.root,
        columns: t.pk_key.clone(),
        unique: true,
        on_conflict: None,
        partial: None,
        sql: None,
        origin: "pk",
    }
}
