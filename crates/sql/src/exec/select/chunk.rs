//! A top-level SELECT's rows in chunks: a run stops once it has produced a chunk's worth
//! of rows, and the next run resumes the outermost scan after the last row it read, so a
//! statement that returns millions of rows never holds more than a chunk of them (the
//! caller — the connection's `Statement` — keeps the transaction, hence the snapshot, that
//! all runs read, and runs the next chunk when the application has read the last).
//!
//! Invariants:
//! - K1. Only a plan whose rows come out in the order the outermost source's scan meets
//!   them, each row of that source with all its joined rows before the next, takes part
//!   (`eligible`): one core, no ORDER BY, grouping, DISTINCT, windows, VALUES, LIMIT or
//!   OFFSET, no RIGHT or FULL JOIN (whose leftovers come after the loop), and an outermost
//!   source that is a rowid table read by a full scan or a rowid range decoded in place
//!   (`candidate_source`'s `direct`), whose position is its rowid.
//! - K2. A run stops only between two rows of the outermost source, after every row the
//!   earlier one joined was emitted: resuming after its rowid neither repeats nor skips a
//!   row. The rowid is read from the row before the later levels run (they may move the
//!   values out, `select::move_outputs`).
//! - K3. A resumed run reads the outermost table's rowids strictly after (before, for a
//!   reverse scan) the last one read: the earlier bound is implied, since every row read
//!   so far lay within it.
//! - K4. Chunks read on a transaction that writes between them (an INSERT's SELECT
//!   source, `feeds_insert`) read nothing those writes change: one table, not the one
//!   written, no subquery.

use super::*;
use std::cell::Cell;

/// Rows a chunk holds at most, unless one outer row joins more.
pub const CHUNK_ROWS: usize = 1024;
/// TEXT and BLOB bytes a chunk holds at most (then it stops at the next outer row).
pub const CHUNK_BYTES: usize = 4 << 20;

/// An INSERT's SELECT source comes in larger chunks: its bulk path (dml/bulk_insert.rs)
/// builds an empty table's trees from one batch, and merges later batches into them.
pub const INSERT_CHUNK_ROWS: usize = 65536;
pub const INSERT_CHUNK_BYTES: usize = 32 << 20;

/// One run's chunking: where it resumes, and where it stopped.
#[derive(Debug)]
pub struct Chunking {
    max_rows: usize,
    max_bytes: usize,
    resume_after: Option<i64>,
    rows: Cell<usize>,
    bytes: Cell<usize>,
    stopped_at: Cell<Option<i64>>,
    /// Whether the run's plan took part (K1); false leaves every row in one run.
    engaged: Cell<bool>,
}

impl Chunking {
    /// A first run (`resume_after` None) or a resumed one.
    pub fn new(resume_after: Option<i64>) -> Self {
        Self::with_limits(CHUNK_ROWS, CHUNK_BYTES, resume_after)
    }

    pub fn with_limits(max_rows: usize, max_bytes: usize, resume_after: Option<i64>) -> Self {
        Chunking {
            max_rows: max_rows.max(1),
            max_bytes,
            resume_after,
            rows: Cell::new(0),
            bytes: Cell::new(0),
            stopped_at: Cell::new(None),
            engaged: Cell::new(false),
        }
    }

    /// The outermost rowid the run stopped after, when rows are left for another run.
    pub fn stopped_at(&self) -> Option<i64> {
        self.stopped_at.get()
    }

    /// Whether the run's plan took part in chunking (K1).
    pub fn engaged(&self) -> bool {
        self.engaged.get()
    }

    pub(crate) fn engage(&self) {
        self.engaged.set(true);
    }

    /// Counts an emitted result row.
    #[inline]
    pub(super) fn count(&self, row: &[Value]) {
        self.rows.set(self.rows.get() + 1);
        let bytes: usize = row
            .iter()
            .map(|v| match v {
                Value::Text(s) => s.len(),
                Value::Blob(b) => b.len(),
                _ => 0,
            })
            .sum();
        self.bytes.set(self.bytes.get() + bytes);
    }

    /// After the outer row `rowid` and all it joined: whether the run stops here (K2).
    #[inline]
    pub(super) fn stop_after(&self, rowid: Option<i64>) -> bool {
        let full = self.rows.get() >= self.max_rows || self.bytes.get() >= self.max_bytes;
        match (full, rowid) {
            (true, Some(r)) => {
                self.stopped_at.set(Some(r));
                true
            }
            _ => false,
        }
    }

    /// The outermost scan's bounds for this run (K3).
    pub(super) fn resumed(
        &self,
        lo: Bound<i64>,
        hi: Bound<i64>,
        reverse: bool,
    ) -> (Bound<i64>, Bound<i64>) {
        match (self.resume_after, reverse) {
            (None, _) => (lo, hi),
            (Some(r), false) => (Bound::Excluded(r), hi),
            (Some(r), true) => (lo, Bound::Excluded(r)),
        }
    }
}

/// Whether `plan` runs in chunks (K1).
pub fn eligible(plan: &SelectPlan) -> bool {
    let [core] = plan.cores.as_slice() else {
        return false;
    };
    let Some(first) = core.sources.first() else {
        return false;
    };
    let SourceKind::Table(t) = &first.kind else {
        return false;
    };
    let direct = !t.without_rowid && !t.has_virtual() && first.width == t.columns.len() + 1;
    plan.order_by.is_empty()
        && plan.limit.is_none()
        && plan.offset.is_none()
        && !core.is_agg
        && !core.distinct
        && core.windows.is_empty()
        && core.values.is_none()
        && direct
        && first.join == JoinType::Inner
        && matches!(first.access, Access::Scan | Access::RowidRange { .. })
        && !core.sources.iter().any(|s| s.join.keeps_right_rows())
}

/// The rowid of the outermost source's row in the combined row (its last slot).
#[inline]
pub(super) fn outer_rowid(src: &Source, row: &[Value]) -> Option<i64> {
    match row.get(src.start + src.width - 1) {
        Some(Value::Integer(r)) => Some(*r),
        _ => None,
    }
}

/// Whether an INSERT into `target` may take the rows of `plan` in chunks, each read after
/// the previous ones were written (K4): `plan` runs in chunks (K1) and reads one table,
/// not `target`, with no subquery anywhere (a subquery could read `target`), so no write
/// of the INSERT changes what a later chunk reads. (SQLite streams such a SELECT into
/// the table too, and goes through a temporary table when the SELECT reads the target
/// or the target has triggers: insert.c, `readsTable`.)
pub fn feeds_insert(plan: &SelectPlan, target: &crate::schema::Table) -> bool {
    let [core] = plan.cores.as_slice() else {
        return false;
    };
    let [only] = core.sources.as_slice() else {
        return false;
    };
    let SourceKind::Table(t) = &only.kind else {
        return false;
    };
    eligible(plan)
        && t.root != target.root
        && !core
            .filters
            .iter()
            .flatten()
            .chain(&core.outputs)
            .chain(&only.on)
            .any(reads_tables)
}

/// Whether `e` holds a subquery (which reads tables).
fn reads_tables(e: &CExpr) -> bool {
    let mut found = matches!(
        e,
        CExpr::Exists(_) | CExpr::Scalar(_) | CExpr::Field { .. } | CExpr::InSelect { .. }
    );
    if !found {
        e.for_each_child(&mut |c| found = found || reads_tables(c));
    }
    found
}
