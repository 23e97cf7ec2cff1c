//! [`Cursor`]: a position in one B-tree of a [`Txn`], kept valid across the
//! transaction's own modifications by re-seeking its saved key (invariant T2 in `txn.rs`)
//! and recording its positionings as reads in a concurrent transaction (T4).

use super::*;
/// A position in one B-tree, usable across modifications made through its `Txn` (T2).
pub struct Cursor {
    pub(super) txn: Txn,
    /// The transaction is concurrent: positionings are recorded as reads (T4).
    pub(super) record_reads: bool,
    pub(super) tc: TreeCursor,
    pub(super) cmp: Option<Arc<dyn KeyCompare>>,
    /// The txn's change counter when the cursor was last positioned.
    pub(super) seen: u64,
    pub(super) saved_rowid: i64,
    /// The index key the cursor is on, unless `key_in_frame`.
    pub(super) saved_key: Vec<u8>,
    /// The index key the cursor is on is its top frame's cell, all on the page, and is read
    /// there (`key`) rather than copied into `saved_key` at every positioning: a frame's
    /// page image never changes while the frame holds it (pages are copied on write, P2 in
    /// pager/mod.rs), so the key stays readable after the tree changes, and `restore`
    /// copies it out only before it re-seeks (T2). The copy was ~146 instructions a step
    /// of fp speedtest1 test 130's index walks (callgrind). Kept false while positionings
    /// are recorded as reads (T4), whose `here` reads `saved_key` outside the lock.
    pub(super) key_in_frame: bool,
    pub(super) scratch: Vec<u8>,
}

/// Where a stale cursor's re-seek landed.
enum Restored {
    /// On its own entry again.
    Same,
    /// Its entry is gone; on the successor.
    Successor,
    /// Its entry is gone and nothing follows it.
    PastEnd,
}

impl Cursor {
    /// The key the cursor is on, for read recording (T4).
    fn here(&self) -> Option<Key> {
        if !self.tc.valid {
            None
        } else if self.tc.table {
            Some(Key::Row(self.saved_rowid))
        } else {
            Some(Key::Idx(self.saved_key.clone()))
        }
    }

    /// Copies the key left in the cursor's frame into `saved_key`, before the frame is
    /// replaced (a re-seek) or while positionings are recorded (`here`, outside the lock).
    /// A cursor off its entries has no key to keep.
    fn key_out_of_frame(&mut self, usable: usize) -> Result<()> {
        if self.key_in_frame && self.tc.valid {
            let key = self
                .tc
                .current_local_index_key(usable)
                .ok_or_else(|| StorageError::misuse("cursor key left its frame"))?;
            self.saved_key.clear();
            self.saved_key.extend_from_slice(key);
        }
        self.key_in_frame = false;
        Ok(())
    }

    /// The index key the cursor is on (T2): in its top frame's page or in `saved_key`.
    fn key(&self, usable: usize) -> Result<&[u8]> {
        if !self.key_in_frame {
            return Ok(&self.saved_key);
        }
        self.tc
            .current_local_index_key(usable)
            .ok_or_else(|| StorageError::misuse("cursor key left its frame"))
    }

    /// Records that the transaction saw every key from `lo` to `hi` (T4); a failed move
    /// records the whole tree.
    fn note_read(&self, r: &Result<bool>, lo: Option<Key>, hi: Option<Key>) {
        let (lo, hi) = if r.is_ok() { (lo, hi) } else { (None, None) };
        if let Some(c) = self.txn.lock().conc.as_mut() {
            c.read(self.tc.root, lo, hi, self.cmp.as_ref());
        }
    }

    /// Records a seek from `probe`: forward ops read up to the landing entry (or the end),
    /// backward ops down to it; an `Eq` miss reads the point.
    fn note_seek(&self, r: &Result<bool>, probe: Key, op: SeekOp) {
        let here = if matches!(r, Ok(true)) {
            self.here()
        } else {
            None
        };
        match op {
            SeekOp::Eq if !matches!(r, Ok(true)) => {
                self.note_read(r, Some(probe.clone()), Some(probe))
            }
            SeekOp::Eq | SeekOp::Ge | SeekOp::Gt => self.note_read(r, Some(probe), here),
            SeekOp::Le | SeekOp::Lt => self.note_read(r, here, Some(probe)),
        }
    }

    fn cmp(&self) -> Result<Arc<dyn KeyCompare>> {
        self.cmp
            .clone()
            .ok_or_else(|| StorageError::misuse("index cursor without comparator"))
    }

    /// A failed move leaves the cursor invalid rather than half-positioned.
    fn guard(&mut self, r: Result<bool>) -> Result<bool> {
        if r.is_err() {
            self.tc.invalidate();
        }
        r
    }

    /// After a successful positioning: remember the key (T2).
    fn save<V: PageRead + ?Sized>(&mut self, v: &V, changes: u64) -> Result<()> {
        self.seen = changes;
        if !self.tc.valid {
            return Ok(());
        }
        let usable = v.usable_size();
        self.key_in_frame = false;
        if self.tc.table {
            self.saved_rowid = self.tc.rowid(usable)?;
        } else if let Some(key) = self.tc.current_local_index_key(usable) {
            // The usual index entry, read without parsing its cell (~230 -> ~100
            // instructions a step of an index walk; callgrind, hc_mixed scans).
            if self.record_reads {
                self.saved_key.clear();
                self.saved_key.extend_from_slice(key);
            } else {
                self.key_in_frame = true;
            }
        } else {
            let (frame, info) = self.tc.current(usable)?;
            let key = payload_of(v, frame, &info, &mut self.scratch)?;
            self.saved_key.clear();
            self.saved_key.extend_from_slice(key);
        }
        Ok(())
    }

    /// Re-seeks the saved key when the tree may have changed.
    fn restore<V: PageRead + ?Sized>(&mut self, v: &V, changes: u64) -> Result<Restored> {
        if changes == self.seen {
            return Ok(Restored::Same);
        }
        if !self.tc.valid {
            // Not on an entry, but frames may remain (an Eq miss keeps them for reuse):
            // they are stale now, and `seen` is about to move past them.
            self.tc.invalidate();
            return Ok(Restored::Same);
        }
        let usable = v.usable_size();
        let exact = if self.tc.table {
            self.tc.seek_table(v, self.saved_rowid, false)?
                && self.tc.rowid(usable)? == self.saved_rowid
        } else {
            let cmp = self.cmp()?;
            // The seek below replaces the frame the key is read from.
            self.key_out_of_frame(usable)?;
            let key = std::mem::take(&mut self.saved_key);
            let r = (|| -> Result<bool> {
                if !self
                    .tc
                    .seek_index(v, &key, false, &*cmp, &mut self.scratch)?
                {
                    return Ok(false);
                }
                let (frame, info) = self.tc.current(usable)?;
                let stored = payload_of(v, frame, &info, &mut self.scratch)?;
                Ok(cmp.compare(stored, &key)? == Ordering::Equal)
            })();
            self.saved_key = key;
            r?
        };
        let landed = self.tc.valid;
        self.save(v, changes)?;
        Ok(if exact {
            Restored::Same
        } else if landed {
            Restored::Successor
        } else {
            Restored::PastEnd
        })
    }

    pub fn first(&mut self) -> Result<bool> {
        let r = self.first_inner();
        let r = self.guard(r);
        if self.record_reads {
            self.note_read(&r, None, self.here());
        }
        r
    }

    fn first_inner(&mut self) -> Result<bool> {
        let txn = self.txn.clone();
        let g = txn.lock();
        with_view!(g, v => {
            let ok = self.tc.first(v)?;
            self.save(v, g.changes)?;
            Ok(ok)
        })
    }

    pub fn last(&mut self) -> Result<bool> {
        let r = self.last_inner();
        let r = self.guard(r);
        if self.record_reads {
            self.note_read(&r, self.here(), None);
        }
        r
    }

    fn last_inner(&mut self) -> Result<bool> {
        let txn = self.txn.clone();
        let g = txn.lock();
        with_view!(g, v => {
            let ok = self.tc.last(v)?;
            self.save(v, g.changes)?;
            Ok(ok)
        })
    }

    #[allow(clippy::should_implement_trait)] // fallible; not an Iterator
    pub fn next(&mut self) -> Result<bool> {
        self.step(true)
    }

    /// One step forward or backward; a concurrent transaction records the key range the
    /// step covered (from the old position to the new one, in key order).
    fn step(&mut self, forward: bool) -> Result<bool> {
        let inner = |c: &mut Self| {
            if forward {
                c.next_inner()
            } else {
                c.prev_inner()
            }
        };
        if !self.record_reads {
            let r = inner(self);
            return self.guard(r);
        }
        let from = self.here();
        let r = inner(self);
        let r = self.guard(r);
        let to = if matches!(r, Ok(true)) {
            self.here()
        } else {
            None
        };
        if forward {
            self.note_read(&r, from, to);
        } else {
            self.note_read(&r, to, from);
        }
        r
    }

    fn next_inner(&mut self) -> Result<bool> {
        let txn = self.txn.clone();
        let g = txn.lock();
        with_view!(g, v => {
            let ok = match self.restore(v, g.changes)? {
                Restored::Same => self.tc.next(v)?,
                Restored::Successor => true,
                Restored::PastEnd => false,
            };
            self.save(v, g.changes)?;
            Ok(ok)
        })
    }

    pub fn prev(&mut self) -> Result<bool> {
        self.step(false)
    }

    fn prev_inner(&mut self) -> Result<bool> {
        let txn = self.txn.clone();
        let g = txn.lock();
        with_view!(g, v => {
            let ok = match self.restore(v, g.changes)? {
                Restored::Same | Restored::Successor => self.tc.prev(v)?,
                Restored::PastEnd => self.tc.last(v)?,
            };
            self.save(v, g.changes)?;
            Ok(ok)
        })
    }

    /// Readies a cursor its owner kept between uses (a pool of cursors per statement) for
    /// the next positioning, as `Txn::cursor` would a new one: fails once the transaction
    /// has ended and re-reads whether positionings are recorded as reads (T4). Its frames
    /// stay: a seek reuses them only while no page changed since they were loaded (T2).
    /// Reusing a cursor instead of opening one per lookup saves its allocations and, for
    /// lookups close together, the descent's page loads down to the leaf.
    pub fn rebind(&mut self) -> Result<()> {
        let g = self.txn.lock();
        if matches!(g.view, View::Done) {
            return Err(StorageError::misuse("transaction has ended"));
        }
        self.record_reads = g.conc.is_some();
        if self.record_reads && self.key_in_frame {
            let usable = with_view!(g, v => Ok(v.usable_size()))?;
            drop(g);
            self.key_out_of_frame(usable)?;
        }
        Ok(())
    }

    /// Readies a cursor kept by its owner for use in `txn`: `rebind` when it is the
    /// cursor's own transaction, else the state `Txn::cursor` gives a new cursor on `txn`
    /// (no frames, no saved key), keeping only its allocations. A connection keeps its
    /// statements' idle cursors between statements this way (kv_ops: opening and freeing
    /// them cost ~1k instructions per single-row statement). `txn` must be a transaction
    /// on the cursor's database.
    pub fn rebind_to(&mut self, txn: &Txn) -> Result<()> {
        if !Arc::ptr_eq(&self.txn.inner, &txn.inner) {
            self.tc.invalidate();
            self.seen = 0;
            self.saved_rowid = 0;
            self.saved_key.clear();
            self.key_in_frame = false;
            self.txn = txn.clone();
        }
        self.rebind()
    }

    /// Drops the cursor's frames (page images of its transaction's snapshot) while its
    /// owner keeps it idle; the next use must `rebind_to` and position it.
    pub fn park(&mut self) {
        self.tc.invalidate();
    }

    /// Table trees: positions per `op` relative to `rowid`. Returns whether the cursor is
    /// on an entry satisfying `op`; for `Eq` a miss leaves the cursor invalid.
    pub fn seek_rowid(&mut self, rowid: i64, op: SeekOp) -> Result<bool> {
        let r = self.seek_rowid_inner(rowid, op);
        let r = self.guard(r);
        if self.record_reads {
            self.note_seek(&r, Key::Row(rowid), op);
        }
        r
    }

    fn seek_rowid_inner(&mut self, rowid: i64, op: SeekOp) -> Result<bool> {
        if !self.tc.table {
            return Err(StorageError::misuse("seek_rowid on an index cursor"));
        }
        let txn = self.txn.clone();
        let g = txn.lock();
        // The stack was built under the current change counter: its pages are current.
        let fresh = g.changes == self.seen && !self.tc.stack.is_empty();
        with_view!(g, v => {
            let shortcut = match op {
                SeekOp::Eq | SeekOp::Ge | SeekOp::Gt if fresh => self.tc.seek_in_leaf(v, rowid, op == SeekOp::Gt)?,
                _ => None,
            };
            if let Some(found) = shortcut {
                let ok = match op {
                    SeekOp::Eq if !found => {
                        self.tc.valid = false;
                        false
                    }
                    _ => true,
                };
                self.save(v, g.changes)?;
                return Ok(ok);
            }
            self.tc.frames_current = fresh;
            let ok = match op {
                SeekOp::Eq => {
                    // A miss keeps the (current) frames for the next seek's reuse.
                    let found = self.tc.descend_table(v, rowid, false)?;
                    self.tc.valid = found;
                    found
                }
                SeekOp::Ge => self.tc.seek_table(v, rowid, false)?,
                SeekOp::Gt => self.tc.seek_table(v, rowid, true)?,
                SeekOp::Le | SeekOp::Lt => {
                    if self.tc.seek_table(v, rowid, op == SeekOp::Le)? {
                        self.tc.prev(v)?
                    } else {
                        self.tc.last(v)?
                    }
                }
            };
            self.save(v, g.changes)?;
            Ok(ok)
        })
    }

    /// Table trees: the row with `rowid` handed to `f` (as `with_entry`), or None when there
    /// is none (the cursor is then invalid, as after an `Eq` miss). Outside a concurrent
    /// transaction this takes one lock and parses the found cell once, where `seek_rowid` +
    /// `with_entry` take two locks and parse it three times: a lookup by rowid's whole
    /// storage work (index walks with table lookups, joins on a rowid).
    /// `f` runs under the transaction's lock: it must not call back into the transaction.
    pub fn seek_rowid_entry<R>(
        &mut self,
        rowid: i64,
        f: impl FnOnce(i64, &[u8]) -> R,
    ) -> Result<Option<R>> {
        if self.record_reads || !self.tc.table {
            if !self.seek_rowid(rowid, SeekOp::Eq)? || !self.tc.valid {
                return Ok(None);
            }
            return self.with_entry(f).map(Some);
        }
        let r = self.seek_rowid_entry_inner(rowid, f);
        if r.is_err() {
            self.tc.invalidate();
        }
        r
    }

    fn seek_rowid_entry_inner<R>(
        &mut self,
        rowid: i64,
        f: impl FnOnce(i64, &[u8]) -> R,
    ) -> Result<Option<R>> {
        let txn = self.txn.clone();
        let g = txn.lock();
        let fresh = g.changes == self.seen && !self.tc.stack.is_empty();
        with_view!(g, v => {
            let found = match if fresh { self.tc.seek_in_leaf(v, rowid, false)? } else { None } {
                Some(found) => found,
                None => {
                    // A miss keeps the (current) frames for the next seek's reuse.
                    self.tc.frames_current = fresh;
                    self.tc.descend_table(v, rowid, false)?
                }
            };
            // What `save` records: the rowid is the one sought.
            self.seen = g.changes;
            self.tc.valid = found;
            if !found {
                return Ok(None);
            }
            self.saved_rowid = rowid;
            let (_, payload) = self.tc.current_row(v, &mut self.scratch)?;
            Ok(Some(f(rowid, payload)))
        })
    }

    /// Table trees: offers the row the cursor is on as the place of the transaction's next
    /// write to this table (`Txn::table_insert` rewriting it, `Txn::table_delete` removing
    /// it), which then starts from this leaf instead of descending again: an UPDATE or
    /// DELETE of a row it has just looked up (speedtest1 tests 240 and 280: the second
    /// descent was ~2.9k instructions a row, callgrind). Nothing is offered unless the
    /// cursor was positioned under the current change counter, so the leaf's path is
    /// the tree's (T2); the write still checks the rowid against the leaf's own cells.
    pub fn hint_write(&self) -> Result<()> {
        let mut g = self.txn.lock();
        let g = &mut *g;
        if !self.tc.valid || !self.tc.table || self.seen != g.changes {
            return Ok(());
        }
        let usable = with_view!(g, v => Ok(v.usable_size()))?;
        if let Some(h) = insert::LeafHint::at_cursor(&self.tc, usable) {
            g.append_hint = Some((self.tc.root, g.changes, h));
        }
        Ok(())
    }

    /// Index trees: positions per `op` relative to `probe`, which may hold a prefix of the
    /// stored keys' fields (see docs/storage-api.md). For `Eq` a miss leaves the cursor
    /// invalid.
    pub fn seek_key(&mut self, probe: &[u8], op: SeekOp) -> Result<bool> {
        let r = self.seek_key_inner(probe, op);
        let r = self.guard(r);
        if self.record_reads {
            self.note_seek(&r, Key::Idx(probe.to_vec()), op);
        }
        r
    }

    fn seek_key_inner(&mut self, probe: &[u8], op: SeekOp) -> Result<bool> {
        if self.tc.table {
            return Err(StorageError::misuse("seek_key on a table cursor"));
        }
        let cmp = self.cmp()?;
        let txn = self.txn.clone();
        let g = txn.lock();
        // Every arm below starts with a descent, which consumes this.
        self.tc.frames_current = g.changes == self.seen && !self.tc.stack.is_empty();
        with_view!(g, v => {
            let usable = v.usable_size();
            let ok = match op {
                SeekOp::Eq | SeekOp::Ge => {
                    let mut ok = self.tc.seek_index(v, probe, false, &*cmp, &mut self.scratch)?;
                    if ok && op == SeekOp::Eq {
                        let (frame, info) = self.tc.current(usable)?;
                        let stored = payload_of(v, frame, &info, &mut self.scratch)?;
                        if cmp.compare(stored, probe)? != Ordering::Equal {
                            // A miss keeps the (current) frames for the next seek's
                            // same-leaf shortcut or reuse, as `seek_rowid` does.
                            self.tc.valid = false;
                            ok = false;
                        }
                    }
                    ok
                }
                SeekOp::Gt => self.tc.seek_index(v, probe, true, &*cmp, &mut self.scratch)?,
                SeekOp::Le | SeekOp::Lt => {
                    if self.tc.seek_index(v, probe, op == SeekOp::Le, &*cmp, &mut self.scratch)? {
                        self.tc.prev(v)?
                    } else {
                        self.tc.last(v)?
                    }
                }
            };
            self.save(v, g.changes)?;
            Ok(ok)
        })
    }

    /// Whether the cursor is on an entry.
    pub fn valid(&self) -> bool {
        self.tc.valid
    }

    /// Rowid of the current row (table trees).
    pub fn rowid(&self) -> Result<i64> {
        if !self.tc.table {
            return Err(StorageError::misuse("rowid on an index cursor"));
        }
        if !self.tc.valid {
            return Err(StorageError::misuse("cursor is not on an entry"));
        }
        let g = self.txn.lock();
        if matches!(g.view, View::Done) {
            return Err(StorageError::misuse("transaction has ended"));
        }
        if g.changes != self.seen {
            // The saved rowid is the cursor's identity; check the row still exists.
            self.record_stale(&g)?;
        }
        Ok(self.saved_rowid)
    }

    /// The current entry's payload: a table row's record, or an index key.
    pub fn record(&self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.record_into(&mut out)?;
        Ok(out)
    }

    /// Like [`record`](Self::record), into a caller's buffer (cleared first).
    pub fn record_into(&self, out: &mut Vec<u8>) -> Result<()> {
        out.clear();
        if !self.tc.valid {
            return Err(StorageError::misuse("cursor is not on an entry"));
        }
        let g = self.txn.lock();
        if g.changes != self.seen {
            out.extend_from_slice(&self.record_stale(&g)?);
            return Ok(());
        }
        if !self.tc.table {
            return with_view!(g, v => {
                out.extend_from_slice(self.key(v.usable_size())?);
                Ok(())
            });
        }
        with_view!(g, v => self.tc.payload(v, out))
    }

    /// Hands the current entry to `f` without copying it out: the rowid (table trees; 0 for
    /// index trees) and the payload, borrowed from the page when it is all local (assembled
    /// in a scratch buffer when it overflows). One lock for both, where `rowid` followed by
    /// `record_into` takes two and copies the record; a scan decodes straight from the page.
    /// `f` runs under the transaction's lock: it must not call back into the transaction.
    pub fn with_entry<R>(&mut self, f: impl FnOnce(i64, &[u8]) -> R) -> Result<R> {
        if !self.tc.valid {
            return Err(StorageError::misuse("cursor is not on an entry"));
        }
        let g = self.txn.lock();
        if g.changes != self.seen {
            let rec = self.record_stale(&g)?;
            return Ok(f(if self.tc.table { self.saved_rowid } else { 0 }, &rec));
        }
        if !self.tc.table {
            return with_view!(g, v => Ok(f(0, self.key(v.usable_size())?)));
        }
        with_view!(g, v => {
            let (_, payload) = self.tc.current_row(v, &mut self.scratch)?;
            Ok(f(self.saved_rowid, payload))
        })
    }

    /// One step (as `next`, or `prev` when `!forward`), then the new entry handed to `f` (as
    /// `with_entry`); None past the end. Outside a concurrent transaction this takes one
    /// lock and, on a table cursor, parses the cell once (its rowid is the saved position),
    /// where `next` + `with_entry` take two locks and parse it twice: a scan's whole
    /// per-row storage work.
    pub fn step_entry<R>(
        &mut self,
        forward: bool,
        f: impl FnOnce(i64, &[u8]) -> R,
    ) -> Result<Option<R>> {
        if self.record_reads {
            if !self.step(forward)? || !self.tc.valid {
                return Ok(None);
            }
            return self.with_entry(f).map(Some);
        }
        if !self.tc.table {
            // The usual step of an index walk: within the leaf, the tree unchanged since
            // the cursor was positioned (so `restore` has nothing to do, T2), the key read
            // where it lies and left there as `step_entry_inner` leaves it. Under the
            // one lock, without cloning the transaction's handle for it.
            let g = self.txn.lock();
            // An ended transaction takes the checked path, which reports it.
            let usable: Result<usize> = with_view!(g, v => Ok(v.usable_size()));
            if let (true, Ok(usable)) = (g.changes == self.seen, usable) {
                if let Some(key) = self.tc.step_in_leaf(forward, usable) {
                    self.key_in_frame = true;
                    return Ok(Some(f(0, key)));
                }
            }
        }
        let r = self.step_entry_inner(forward, f);
        if r.is_err() {
            self.tc.invalidate();
        }
        r
    }

    fn step_entry_inner<R>(
        &mut self,
        forward: bool,
        f: impl FnOnce(i64, &[u8]) -> R,
    ) -> Result<Option<R>> {
        let txn = self.txn.clone();
        let g = txn.lock();
        with_view!(g, v => {
            let ok = match (self.restore(v, g.changes)?, forward) {
                (Restored::Same, true) => self.tc.next(v)?,
                (Restored::Successor, true) => true,
                (Restored::PastEnd, true) => false,
                (Restored::Same | Restored::Successor, false) => self.tc.prev(v)?,
                (Restored::PastEnd, false) => self.tc.last(v)?,
            };
            if !self.tc.table {
                if !ok || !self.tc.valid {
                    self.seen = g.changes;
                    return Ok(None);
                }
                // What `save` records, the key read once: left in its frame (not recording
                // reads here) when it is all on the page.
                let usable = v.usable_size();
                if let Some(key) = self.tc.current_local_index_key(usable) {
                    self.seen = g.changes;
                    self.key_in_frame = true;
                    return Ok(Some(f(0, key)));
                }
                self.save(v, g.changes)?;
                return Ok(Some(f(0, self.key(usable)?)));
            }
            // What `save` records, from the one cell parse below.
            self.seen = g.changes;
            if !ok || !self.tc.valid {
                return Ok(None);
            }
            let (rowid, payload) = self.tc.current_row(v, &mut self.scratch)?;
            self.saved_rowid = rowid;
            Ok(Some(f(rowid, payload)))
        })
    }

    /// Steps (as `step_entry`) until `f` takes an entry: `f` sees each entry in turn and
    /// returns `Some` to stop there; None past the end. On a table cursor outside a
    /// concurrent transaction the whole run of entries `f` passes over costs one lock and
    /// one restore check, where `step_entry` per entry takes a lock each time: a filtered
    /// scan's rejected rows. `f` runs under the transaction's lock (as `with_entry`): it
    /// must not call back into the transaction.
    pub fn step_until<R>(
        &mut self,
        forward: bool,
        mut f: impl FnMut(i64, &[u8]) -> Option<R>,
    ) -> Result<Option<R>> {
        if self.record_reads || !self.tc.table {
            loop {
                if !self.step(forward)? || !self.tc.valid {
                    return Ok(None);
                }
                if let Some(r) = self.with_entry(&mut f)? {
                    return Ok(Some(r));
                }
            }
        }
        let r = self.step_until_inner(forward, f);
        if r.is_err() {
            self.tc.invalidate();
        }
        r
    }

    fn step_until_inner<R>(
        &mut self,
        forward: bool,
        mut f: impl FnMut(i64, &[u8]) -> Option<R>,
    ) -> Result<Option<R>> {
        let txn = self.txn.clone();
        let g = txn.lock();
        with_view!(g, v => {
            let mut ok = match (self.restore(v, g.changes)?, forward) {
                (Restored::Same, true) => self.tc.next(v)?,
                (Restored::Successor, true) => true,
                (Restored::PastEnd, true) => false,
                (Restored::Same | Restored::Successor, false) => self.tc.prev(v)?,
                (Restored::PastEnd, false) => self.tc.last(v)?,
            };
            // Nothing changes the tree while the lock is held: `seen` stays valid for
            // every entry of the run.
            self.seen = g.changes;
            loop {
                if !ok || !self.tc.valid {
                    return Ok(None);
                }
                let (rowid, payload) = self.tc.current_row(v, &mut self.scratch)?;
                self.saved_rowid = rowid;
                if let Some(r) = f(rowid, payload) {
                    return Ok(Some(r));
                }
                ok = if forward { self.tc.next(v)? } else { self.tc.prev(v)? };
            }
        })
    }

    /// Reads the cursor's entry through a fresh seek (the tree changed since positioning).
    fn record_stale(&self, g: &TxnInner) -> Result<Vec<u8>> {
        let gone = || StorageError::misuse("the cursor's entry was deleted");
        with_view!(g, v => {
            let usable = v.usable_size();
            let mut tc = TreeCursor::new(self.tc.root, self.tc.table);
            let mut out = Vec::new();
            if self.tc.table {
                if !tc.seek_table(v, self.saved_rowid, false)? || tc.rowid(usable)? != self.saved_rowid {
                    return Err(gone());
                }
                tc.payload(v, &mut out)?;
            } else {
                let cmp = self.cmp()?;
                let key = self.key(usable)?;
                let mut scratch = Vec::new();
                if !tc.seek_index(v, key, false, &*cmp, &mut scratch)? {
                    return Err(gone());
                }
                tc.payload(v, &mut out)?;
                if cmp.compare(&out, key)? != Ordering::Equal {
                    return Err(gone());
                }
            }
            Ok(out)
        })
    }

    /// Number of entries in the cursor's tree.
    pub fn count(&self) -> Result<u64> {
        self.txn.count(self.tc.root)
    }
}
