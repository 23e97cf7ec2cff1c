//! Whole-tree reads for VACUUM and the tree-by-tree copy: every entry of one B-tree, read
//! page by page with a plain [`TreeCursor`] while the transaction's lock is held.
//!
//! Invariant: nothing can modify the tree during the read (the lock is held for its whole
//! length), so the position saving and re-seeking that [`Cursor`] does on every step
//! (invariant T2 in `txn.rs`) is not needed; in a concurrent transaction the read is
//! recorded as a read of the whole tree (T4), as `Txn::count` records it.

use super::*;

/// Entries of one tree as `(rowid, start, end)` spans into one byte arena.
type Entries = (Vec<(i64, usize, usize)>, Vec<u8>);

impl Txn {
    /// Every entry of the tree at `root` in key order: for a table tree (`table`) the
    /// rowid and record, for an index tree 0 and the key. Reading through [`Cursor`]
    /// instead cost ~490 instructions a step, 40% of them saving the position (speedtest1
    /// test 200, VACUUM, callgrind).
    pub fn entries(
        &self,
        root: PageNo,
        table: bool,
    ) -> Result<(Vec<(i64, usize, usize)>, Vec<u8>)> {
        let mut g = self.lock();
        if let Some(c) = g.conc.as_mut() {
            c.read(root, None, None, None);
        }
        with_view!(g, v => read_entries(v, root, table))
    }

    /// Hands the entries of the tree at `root`, in key order, to `f` as `entries` reads
    /// them (for a table tree the rowid and record, for an index tree 0 and the key),
    /// without keeping them, until `f` answers false: one buffer serves the entries that
    /// spill to overflow pages, the others are read in place. `f` runs under the
    /// transaction's lock and must not use the transaction. ANALYZE walks each index so (storing every key first, or a
    /// [`Cursor`] step per key, cost more than the comparison of keys it needs).
    pub fn visit_entries(
        &self,
        root: PageNo,
        table: bool,
        f: &mut dyn FnMut(i64, &[u8]) -> Result<bool>,
    ) -> Result<()> {
        let mut g = self.lock();
        if let Some(c) = g.conc.as_mut() {
            c.read(root, None, None, None);
        }
        with_view!(g, v => visit(v, root, table, f))
    }
}

fn visit<V: PageRead + ?Sized>(
    v: &V,
    root: PageNo,
    table: bool,
    f: &mut dyn FnMut(i64, &[u8]) -> Result<bool>,
) -> Result<()> {
    let usable = v.usable_size();
    let mut tc = TreeCursor::new(root, table);
    let mut scratch = Vec::new();
    let mut more = tc.first(v)?;
    while more {
        let (frame, info) = tc.current(usable)?;
        let rowid = if table { tc.rowid(usable)? } else { 0 };
        if !f(rowid, payload_of(v, frame, &info, &mut scratch)?)? {
            break;
        }
        more = tc.next(v)?;
    }
    Ok(())
}

fn read_entries<V: PageRead + ?Sized>(v: &V, root: PageNo, table: bool) -> Result<Entries> {
    let usable = v.usable_size();
    let mut tc = TreeCursor::new(root, table);
    let mut spans = Vec::new();
    let mut arena = Vec::new();
    let mut more = tc.first(v)?;
    while more {
        let start = arena.len();
        tc.payload(v, &mut arena)?;
        let rowid = if table { tc.rowid(usable)? } else { 0 };
        spans.push((rowid, start, arena.len()));
        more = tc.next(v)?;
    }
    Ok((spans, arena))
}
