//! The nested-loop join: each FROM source in plan order, its candidate rows from the chosen
//! access path (rowid/index lookups and ranges, scans, subqueries, CTEs), WHERE and ON terms
//! tested at the earliest level that binds them, RIGHT/FULL JOIN leftovers after the loop.

use super::chunk::Chunking;
use super::*;
use crate::exec::store::IndexLookup;
use crate::plan::access;

impl Exec<'_> {
    /// Nested-loop join: binds source `i` for each of its candidate rows and recurses;
    /// calls `emit` with the full combined row.
    ///
    /// Invariant E1: every row of the last source is written into all of that source's
    /// slots before it is emitted (its candidates' `next_into`/`next_match`, the NULL row
    /// of an outer join, a RIGHT or FULL JOIN's leftover), so `emit` may take the values
    /// out of those slots (`select::move_outputs`); the slots of earlier sources stay bound
    /// across the rows of the later ones and must be left in place.
    ///
    /// RIGHT and FULL JOIN follow SQLite (where.c, "RIGHT JOIN"): in the loop, a right source
    /// `r` is joined as an inner (FULL: left) join while the rows of `r` that satisfied its ON
    /// terms are recorded; after the loop, each unrecorded row of `r` is bound with every
    /// source before `r` NULL, tested against `r`'s filters and carried through the sources
    /// after `r`, in source order (so one right join's leftovers can still match a later
    /// one). The planner scans right sources whole (`Access::Scan`), in the same order every
    /// time, so a row is known by its position in the scan, and keeps WHERE terms from being
    /// tested before the last right join they follow (`bind::select_core`).
    pub fn scan_level(
        &self,
        core: &CorePlan,
        i: usize,
        row: &mut [Value],
        parent: Option<&Frame>,
        emit: &mut dyn FnMut(&mut [Value]) -> Result<()>,
    ) -> Result<()> {
        // Left empty (no allocation) when no source keeps its unmatched rows.
        let mut matched: Vec<Vec<bool>> = Vec::new();
        if core.sources.iter().any(|s| s.join.keeps_right_rows()) {
            matched = vec![Vec::new(); core.sources.len()];
        }
        self.join_level(core, i, row, parent, emit, &mut matched)?;
        for r in i..core.sources.len() {
            let src = &core.sources[r];
            if !src.join.keeps_right_rows() {
                continue;
            }
            let needed = core.needed.get(r).and_then(|n| n.as_ref());
            let candidates = self.candidates(src, needed, row, parent)?;
            for (pos, cand) in candidates.enumerate() {
                let vals = cand?;
                if matched[r].get(pos).copied().unwrap_or(false) {
                    continue;
                }
                for v in &mut row[..src.start] {
                    *v = Value::Null;
                }
                let mut vals = vals.into_iter();
                for slot in row[src.start..src.start + src.width].iter_mut() {
                    *slot = vals.next().unwrap_or(Value::Null);
                }
                let fr = Frame::new(row, parent);
                let mut ok = true;
                for t in &core.filters[r] {
                    if !self.is_true(t, &fr)? {
                        ok = false;
                        break;
                    }
                }
                if ok {
                    self.join_level(core, r + 1, row, parent, emit, &mut matched)?;
                }
            }
        }
        Ok(())
    }

    /// One level of the nested loop; `matched[r]` records (by scan position) the rows of
    /// each RIGHT/FULL source `r` that satisfied its ON terms.
    pub(super) fn join_level(
        &self,
        core: &CorePlan,
        i: usize,
        row: &mut [Value],
        parent: Option<&Frame>,
        emit: &mut dyn FnMut(&mut [Value]) -> Result<()>,
        matched: &mut Vec<Vec<bool>>,
    ) -> Result<()> {
        if core.sources.is_empty() {
            let fr = Frame::new(row, parent);
            for flt in core.filters.first().map(|v| v.as_slice()).unwrap_or(&[]) {
                if !self.is_true(flt, &fr)? {
                    return Ok(());
                }
            }
            return emit(row);
        }
        if i == core.sources.len() {
            return emit(row);
        }
        let src = &core.sources[i];
        let mut any = false;
        let needed = core.needed.get(i).and_then(|n| n.as_ref());
        // The outermost level of a SELECT run in chunks (chunk.rs).
        let chunk = match i {
            0 => self.chunk_of(core),
            _ => None,
        };
        let mut candidates = self.candidate_source(src, needed, row, parent, chunk)?;
        if let Some(early) = pushdown::early_columns(src, &core.filters[i], &candidates) {
            return self.join_level_pushed(
                core, i, row, parent, emit, matched, candidates, &early, chunk,
            );
        }
        // WHERE terms the walk's bounds imply (`Access::Index::implied`): every row of a
        // one-range index walk (`Candidates::Scan` for an index access: table lookups, a
        // covering index's keys, or a WITHOUT ROWID table's own tree) satisfies them, so
        // they go untested, as SQLite disables them (where.c `disableTerm`). hc_mixed's
        // `substr(c,1,16)>=?` cost ~1.4k instructions a row; speedtest1 fp test 130's
        // `a BETWEEN ? AND ?` on a covering index ~400.
        let implied: u64 = match (&candidates, &src.access) {
            (Candidates::Scan { .. }, Access::Index { implied, .. })
                if src.join == JoinType::Inner =>
            {
                *implied
            }
            _ => 0,
        };
        // Every term implied (hc_mixed's one `substr(c,1,16)>=?`): nothing to test, not
        // even the call that would skip each term (~19 instructions a row).
        let terms = &core.filters[i];
        let all_implied = implied != 0 && terms.len() < 64 && implied == (1u64 << terms.len()) - 1;
        // Each row of this level carried through the levels after it. A LIMIT reached
        // below stops the walk with `stop_scan`.
        let mut walk = || -> Result<()> {
            let mut pos = 0usize;
            loop {
                if !candidates.next_into(&mut row[src.start..src.start + src.width])? {
                    break;
                }
                pos += 1;
                let pos = pos - 1;
                let fr = Frame::new(row, parent);
                if src.join.is_outer() {
                    let mut ok = true;
                    for t in &src.on {
                        if !self.is_true(t, &fr)? {
                            ok = false;
                            break;
                        }
                    }
                    if !ok {
                        continue;
                    }
                    any = true;
                    if src.join.keeps_right_rows() {
                        if let Some(m) = matched.get_mut(i) {
                            if m.len() <= pos {
                                m.resize(pos + 1, false);
                            }
                            m[pos] = true;
                        }
                    }
                }
                let mut ok = true;
                if implied == 0 {
                    for t in terms {
                        if !self.is_true(t, &fr)? {
                            ok = false;
                            break;
                        }
                    }
                } else if !all_implied {
                    ok = self.all_true_but(terms, implied, &fr)?;
                }
                if ok {
                    // K2: the position is read before the later levels may move it out.
                    let rowid = chunk.and_then(|_| chunk::outer_rowid(src, row));
                    self.join_level(core, i + 1, row, parent, emit, matched)?;
                    if chunk.is_some_and(|c| c.stop_after(rowid)) {
                        return Err(stop_scan());
                    }
                }
            }
            Ok(())
        };
        let walked = walk();
        // The walk is done, or stopped by a LIMIT: kept for this level's next outer row
        // or the statement's next execution (`candidate_source`). Dropped at the LIMIT,
        // hc_mixed's `... ORDER BY substr(c,1,16) LIMIT 10` built its walk anew every
        // execution (~1.1k instructions of a ~31k scan: BENCHMARKS.md "hcscan2").
        let finished = match &walked {
            Ok(()) => true,
            Err(e) => is_stop_scan(e),
        };
        if let (
            true,
            Candidates::Scan {
                scan,
                defaults,
                reals,
                kept: Some(key),
                ..
            },
        ) = (finished, candidates)
        {
            let mut walks = self.kept_walks.borrow_mut();
            if walks.len() < KEPT_WALKS_MAX {
                walks.push(KeptWalk {
                    key,
                    scan,
                    defaults,
                    reals,
                });
            }
        }
        walked?;
        if matches!(src.join, JoinType::Left | JoinType::Full) && !any {
            for v in &mut row[src.start..src.start + src.width] {
                *v = Value::Null;
            }
            let fr = Frame::new(row, parent);
            for t in &core.filters[i] {
                if !self.is_true(t, &fr)? {
                    return Ok(());
                }
            }
            self.join_level(core, i + 1, row, parent, emit, matched)?;
        }
        Ok(())
    }

    /// Whether every term of `terms` but those whose position's bit is set in `skip` is
    /// true.
    #[inline(never)]
    fn all_true_but(&self, terms: &[CExpr], skip: u64, fr: &Frame) -> Result<bool> {
        for (k, t) in terms.iter().enumerate() {
            if (k >= 64 || skip & (1 << k) == 0) && !self.is_true(t, fr)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The candidates of one source for `join_level`: a rowid table read by a full scan or
    /// a rowid range decodes straight into the combined row (`Store::table_scan`); every
    /// other source goes through [`candidates`](Self::candidates).
    pub(super) fn candidate_source<'s>(
        &'s self,
        src: &Source,
        needed: Option<&std::sync::Arc<[bool]>>,
        row: &[Value],
        parent: Option<&Frame>,
        chunk: Option<&Chunking>,
    ) -> Result<Candidates<'s>> {
        if let SourceKind::Table(t) = &src.kind {
            let n = t.columns.len();
            let direct = !t.without_rowid && !t.has_virtual() && src.width == n + 1;
            let range = match &src.access {
                Access::Scan if direct => Some((Bound::Unbounded, Bound::Unbounded, false)),
                Access::RowidRange { lo, hi, reverse } if direct => {
                    let fr = Frame::new(row, parent);
                    let lo_b = match lo {
                        Some((e, incl)) => match rowid_bound(&self.eval(e, &fr)?, *incl, true) {
                            Some(b) => b,
                            None => return Ok(Candidates::Rows(Box::new(std::iter::empty()))),
                        },
                        None => Bound::Unbounded,
                    };
                    let hi_b = match hi {
                        Some((e, incl)) => match rowid_bound(&self.eval(e, &fr)?, *incl, false) {
                            Some(b) => b,
                            None => return Ok(Candidates::Rows(Box::new(std::iter::empty()))),
                        },
                        None => Bound::Unbounded,
                    };
                    Some((lo_b, hi_b, *reverse))
                }
                _ => None,
            };
            if let Access::Index {
                index,
                order,
                eq,
                nulls,
                lo,
                hi,
                range_aff,
                reverse,
                covering,
                ..
            } = &src.access
            {
                // One key range (no IN list) of an index over a rowid table: each key's row
                // is decoded from its page into the combined row by pooled cursors
                // (`Store::index_lookup_scan`; a covering index's key itself,
                // `Store::index_covering_scan`), with no `Row` per key or per row. A WITHOUT
                // ROWID table's own tree holds its rows: each record is decoded into its
                // columns' slots (`Store::without_rowid_scan`).
                let wr = (t.without_rowid
                    && !t.has_virtual()
                    && src.width == n + 1
                    && index.root == t.root)
                    .then(|| WrLayout::shared(t));
                if (direct || wr.is_some())
                    && eq.iter().all(|(exprs, _)| access::single_valued(exprs))
                {
                    let key = WalkKey {
                        source: src as *const Source as usize,
                        index_root: index.root,
                        table_root: t.root,
                        reverse: *reverse,
                        covering: *covering,
                        needed: needed.cloned(),
                    };
                    // The walk this level kept from its previous outer row (or the
                    // statement's previous execution, `CachedPlan::walks`), restarted over
                    // this row's bounds: no new cursors, boxes or key buffers, and the seek
                    // starts from the previous one's leaf. Measured: BENCHMARKS.md,
                    // "joincursor".
                    let mut kept = {
                        let mut walks = self.kept_walks.borrow_mut();
                        walks
                            .iter()
                            .position(|w| w.key == key)
                            .map(|i| walks.swap_remove(i))
                    };
                    // Its bounds' rows, emptied, take this row's bounds: a point lookup's
                    // two rows were two mallocs and frees (~0.25k instructions of a kv_ops
                    // select; BENCHMARKS.md "pointsel").
                    let (prefix_row, key_row) = match kept.as_mut() {
                        Some(w) => w.scan.take_bound_rows(),
                        None => Default::default(),
                    };
                    let fr = Frame::new(row, parent);
                    let Some((prefix, lo_v, hi_v)) =
                        self.index_walk_one(eq, *nulls, lo, hi, *range_aff, &fr, prefix_row)?
                    else {
                        if let Some(w) = kept {
                            self.kept_walks.borrow_mut().push(w);
                        }
                        return Ok(Candidates::Rows(Box::new(std::iter::empty())));
                    };
                    let (lo_b, hi_b) = index_bounds(index, prefix, key_row, &lo_v, &hi_v);
                    // (A UNIQUE index holds any number of NULL keys.)
                    let one_key = index.unique
                        && *nulls == 0
                        && eq.len() == index.columns.len()
                        && lo_v.is_none()
                        && hi_v.is_none();
                    // A kept walk brings the defaults and REAL columns it was built with.
                    let scan_of =
                        move |scan: Box<dyn RowScan>,
                              wr: Option<Arc<WrLayout>>,
                              kept: Option<(Vec<Value>, Vec<usize>)>| {
                            let (defaults, reals) = kept.unwrap_or_else(|| {
                                let reals = (0..n)
                                    .filter(|&i| t.columns[i].affinity == Affinity::Real)
                                    .collect();
                                (self.scan_defaults(t), reals)
                            });
                            Candidates::Scan {
                                scan,
                                defaults,
                                reals,
                                rowid_alias: t.rowid_alias,
                                wr,
                                kept: Some(key),
                            }
                        };
                    let (mut lo_b, mut hi_b) = (lo_b, hi_b);
                    if let Some(mut w) = kept {
                        if w.scan.restart(&mut lo_b, &mut hi_b, one_key)? {
                            return Ok(scan_of(w.scan, wr, Some((w.defaults, w.reals))));
                        }
                    }
                    let walk = IndexLookup {
                        index_root: index.root,
                        order,
                        lo: lo_b,
                        hi: hi_b,
                        reverse: *reverse,
                        table_root: t.root,
                        key_cols: index.columns.len(),
                        one_key,
                        needed: needed.cloned(),
                    };
                    // A store without this path (the test model) gets the generic one,
                    // which evaluates the bounds again.
                    let scan = if let Some(layout) = &wr {
                        self.store.without_rowid_scan(walk, layout.clone())?
                    } else if *covering {
                        // Each key field into its table column's slot (the planner found
                        // every column the query reads in the index).
                        let columns = index
                            .columns
                            .iter()
                            .map(|c| c.column.filter(|_| c.expr.is_none()))
                            .collect();
                        self.store.index_covering_scan(walk, columns)?
                    } else {
                        self.store.index_lookup_scan(walk)?
                    };
                    if let Some(scan) = scan {
                        return Ok(scan_of(scan, wr, None));
                    }
                }
            }
            // `rowid = ?` with one value: the row decoded from its page into the combined
            // row, as a scan of at most one row.
            if let Access::RowidEq(exprs) = &src.access {
                if direct && access::single_valued(exprs) {
                    let fr = Frame::new(row, parent);
                    let Some(id) = as_rowid(&self.eval(&exprs[0], &fr)?) else {
                        return Ok(Candidates::Rows(Box::new(std::iter::empty())));
                    };
                    let scan = self.store.table_lookup_scan(t.root, id, needed.cloned())?;
                    return Ok(Candidates::Scan {
                        scan,
                        defaults: self.scan_defaults(t),
                        reals: (0..n)
                            .filter(|&i| t.columns[i].affinity == Affinity::Real)
                            .collect(),
                        rowid_alias: t.rowid_alias,
                        wr: None,
                        kept: None,
                    });
                }
            }
            if let Some((lo, hi, reverse)) = range {
                let (lo, hi) = match chunk {
                    Some(c) => c.resumed(lo, hi, reverse),
                    None => (lo, hi),
                };
                let scan = self
                    .store
                    .table_scan(t.root, lo, hi, reverse, needed.cloned())?;
                let reals = (0..n)
                    .filter(|&i| t.columns[i].affinity == Affinity::Real)
                    .collect();
                return Ok(Candidates::Scan {
                    scan,
                    defaults: self.scan_defaults(t),
                    reals,
                    rowid_alias: t.rowid_alias,
                    wr: None,
                    kept: None,
                });
            }
        }
        Ok(Candidates::Rows(self.candidates(src, needed, row, parent)?))
    }

    /// The candidate rows of one source (in its row layout), per its access path.
    pub(super) fn candidates(
        &self,
        src: &Source,
        needed: Option<&std::sync::Arc<[bool]>>,
        row: &[Value],
        parent: Option<&Frame>,
    ) -> Result<Box<dyn Iterator<Item = Result<Row>> + '_>> {
        match &src.kind {
            SourceKind::Subquery(sp) => {
                let fr = Frame::new(row, parent);
                // FROM-subqueries see the enclosing query, not this level.
                let rows = match parent {
                    Some(p) => self.subquery_rows(sp, p)?,
                    None => {
                        let _ = fr;
                        let empty: [Value; 0] = [];
                        let top = Frame::new(&empty, None);
                        self.subquery_rows(sp, &top)?
                    }
                };
                let v: Vec<Result<Row>> = rows.iter().cloned().map(Ok).collect();
                Ok(Box::new(v.into_iter()))
            }
            SourceKind::Recursive(rp) => {
                let rows = self.recursive_rows(rp, parent)?;
                let v: Vec<Result<Row>> = rows.iter().cloned().map(Ok).collect();
                Ok(Box::new(v.into_iter()))
            }
            SourceKind::PragmaFn { pragma, args } => {
                let fr = Frame::new(row, parent);
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(self.eval(a, &fr)?);
                }
                let rows = if crate::exec::pragma::is_schema_function(pragma) {
                    crate::exec::pragma::function_rows(self.schema, pragma, &vals)?
                } else {
                    self.pragma_function_rows(pragma, &vals)?
                };
                Ok(Box::new(rows.into_iter().map(Ok)))
            }
            SourceKind::JsonFn { recursive, args } => {
                let fr = Frame::new(row, parent);
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(self.eval(a, &fr)?);
                }
                let rows = crate::func::json_table::rows(*recursive, &vals)?;
                Ok(Box::new(rows.into_iter().map(Ok)))
            }
            SourceKind::Rows(rows) => {
                let v: Vec<Result<Row>> = rows.iter().cloned().map(Ok).collect();
                Ok(Box::new(v.into_iter()))
            }
            SourceKind::Working(id) => {
                let rows = self.working.borrow().get(id).cloned().unwrap_or_default();
                let v: Vec<Result<Row>> = rows.iter().cloned().map(Ok).collect();
                Ok(Box::new(v.into_iter()))
            }
            SourceKind::TempSchema | SourceKind::Schema | SourceKind::AttachedSchema(_) => {
                let temp = matches!(src.kind, SourceKind::TempSchema);
                if temp && !self.store.has_temp() {
                    return Ok(Box::new(std::iter::empty()));
                }
                let root = match src.kind {
                    SourceKind::TempSchema => crate::exec::TEMP_SCHEMA_ROOT,
                    SourceKind::AttachedSchema(root) => root,
                    _ => 1,
                };
                let it = self
                    .store
                    .table_range(root, Bound::Unbounded, Bound::Unbounded, false)?;
                Ok(Box::new(it.map(|r| {
                    r.map(|(rowid, mut vals)| {
                        vals.resize(5, Value::Null);
                        vals.push(Value::Integer(rowid));
                        vals
                    })
                })))
            }
            SourceKind::Table(t) => {
                let t = t.clone();
                let defaults = self.column_defaults(&t);
                let gen = match t.has_virtual() {
                    true => Some(Rc::new(self.generated_exprs(&t)?)),
                    false => None,
                };
                // The mask covers table columns, which are the record's only while no column
                // is VIRTUAL; `usage::needed_columns` gives none then, and this keeps it so.
                let needed = needed.filter(|_| !t.has_virtual());
                let fr = Frame::new(row, parent);
                match &src.access {
                    Access::Scan => self.table_rows_cols(&t, defaults, needed),
                    Access::AutoIndex {
                        col,
                        probe,
                        aff,
                        coll,
                        cache,
                    } => {
                        let v = self.eval(probe, &fr)?.apply_comparison_affinity(*aff);
                        let Some(k) = hash_key(&v, *coll) else {
                            return Ok(Box::new(std::iter::empty()));
                        };
                        let fresh =
                            !matches!(&*cache.borrow(), Some((id, _)) if *id == self.exec_id);
                        if fresh {
                            let mut map: std::collections::HashMap<Vec<u8>, Vec<Row>> =
                                std::collections::HashMap::new();
                            for r in self.table_rows_cols(&t, defaults.clone(), needed)? {
                                let row = r?;
                                let cv = row
                                    .get(*col)
                                    .cloned()
                                    .unwrap_or(Value::Null)
                                    .apply_comparison_affinity(*aff);
                                if let Some(hk) = hash_key(&cv, *coll) {
                                    map.entry(hk).or_default().push(row);
                                }
                            }
                            *cache.borrow_mut() = Some((self.exec_id, map));
                        }
                        let rows: Vec<Result<Row>> = match &*cache.borrow() {
                            Some((_, map)) => map
                                .get(&k)
                                .map(|v| v.iter().cloned().map(Ok).collect())
                                .unwrap_or_default(),
                            None => Vec::new(),
                        };
                        Ok(Box::new(rows.into_iter()))
                    }
                    Access::RowidEq(exprs) => {
                        let mut vals = Vec::new();
                        for e in exprs {
                            self.probe_values(e, &fr, &mut vals)?;
                        }
                        let mut ids: Vec<i64> = vals.iter().filter_map(as_rowid).collect();
                        // SQLite walks an IN list in key order (its values go through a
                        // sorted ephemeral table), so the rows come out in rowid order.
                        ids.sort_unstable();
                        ids.dedup();
                        let mut out = Vec::new();
                        for id in ids {
                            if let Some(vals) = self.table_get(t.root, id, needed)? {
                                out.push(self.virtual_filled(
                                    &t,
                                    &gen,
                                    expand_row(&t, id, vals, &defaults),
                                ));
                            }
                        }
                        Ok(Box::new(out.into_iter()))
                    }
                    Access::RowidRange { lo, hi, reverse } => {
                        let lo_b = match lo {
                            Some((e, incl)) => {
                                match rowid_bound(&self.eval(e, &fr)?, *incl, true) {
                                    Some(b) => b,
                                    None => return Ok(Box::new(std::iter::empty())),
                                }
                            }
                            None => Bound::Unbounded,
                        };
                        let hi_b = match hi {
                            Some((e, incl)) => match rowid_bound(&self.eval(e, &fr)?, *incl, false)
                            {
                                Some(b) => b,
                                None => return Ok(Box::new(std::iter::empty())),
                            },
                            None => Bound::Unbounded,
                        };
                        let it = self.table_range(t.root, lo_b, hi_b, *reverse, needed)?;
                        Ok(Box::new(it.map(move |r| {
                            r.and_then(|(rowid, vals)| {
                                self.virtual_filled(
                                    &t,
                                    &gen,
                                    expand_row(&t, rowid, vals, &defaults),
                                )
                            })
                        })))
                    }
                    Access::Index {
                        index,
                        order,
                        eq,
                        nulls,
                        lo,
                        hi,
                        range_aff,
                        reverse,
                        covering,
                        ..
                    } => {
                        let Some((prefixes, lo_v, hi_v)) =
                            self.index_walk(order, eq, *nulls, lo, hi, *range_aff, &fr)?
                        else {
                            return Ok(Box::new(std::iter::empty()));
                        };
                        // A reverse walk takes the IN values' key ranges last to first too
                        // (`plan::access::order_by_satisfied`).
                        let mut prefixes = prefixes;
                        if *reverse {
                            prefixes.reverse();
                        }
                        let multi = prefixes.len() > 1;
                        // Every column of a UNIQUE index fixed by `=`: at most one key
                        // matches (NULL values reach a prefix only for `IS NULL`, whose
                        // keys may repeat), so the scan stops after it instead of stepping
                        // to the next key to find the range's end.
                        let one_key = index.unique
                            && *nulls == 0
                            && eq.len() == index.columns.len()
                            && lo_v.is_none()
                            && hi_v.is_none();
                        let mut seen_ids: HashSet<i64> = HashSet::new();
                        let mut seen_keys: HashSet<String> = HashSet::new();
                        let mut out = Vec::new();
                        let ncols = index.columns.len();
                        let store = self.store;
                        let root = t.root;
                        // WITHOUT ROWID: the PRIMARY KEY's own tree holds whole rows; a
                        // secondary index's entry ends with the key that finds the row.
                        let wr = t.without_rowid.then(|| {
                            let layout = WrLayout::shared(&t);
                            let pk_pos = if index.root == t.root {
                                Vec::new()
                            } else {
                                pk_positions_in_index(&t, index)
                            };
                            (layout, pk_pos, t.clone(), defaults.clone())
                        });
                        let (this, wr_gen) = (self, gen.clone());
                        let wr_row = move |key: Row| -> Result<Option<Row>> {
                            let Some((layout, pk_pos, t, defaults)) = &wr else {
                                return Ok(None);
                            };
                            let row = if pk_pos.is_empty() {
                                layout.row_of_record(key, defaults)
                            } else {
                                let pk: Row = pk_pos
                                    .iter()
                                    .map(|&p| key.get(p).cloned().unwrap_or(Value::Null))
                                    .collect();
                                match layout.lookup(store, t, &pk, defaults)? {
                                    Some(row) => row,
                                    None => return Ok(None),
                                }
                            };
                            this.virtual_filled(t, &wr_gen, row).map(Some)
                        };
                        if t.without_rowid {
                            let mut out = Vec::new();
                            for p in &prefixes {
                                let (lo_b, hi_b) =
                                    index_bounds(index, p.clone(), Vec::new(), &lo_v, &hi_v);
                                let keys = self
                                    .store
                                    .index_range(index.root, order, lo_b, hi_b, *reverse)?;
                                if !multi {
                                    return Ok(Box::new(keys.filter_map(move |key| {
                                        key.and_then(&wr_row).transpose()
                                    })));
                                }
                                for key in keys {
                                    let Some(row) = wr_row(key?)? else { continue };
                                    if seen_keys.insert(format!("{row:?}")) {
                                        out.push(Ok(row));
                                    }
                                }
                            }
                            return Ok(Box::new(out.into_iter()));
                        }
                        let needed = needed.cloned();
                        let (covering, index_c, t_ncols) =
                            (*covering, index.clone(), t.columns.len());
                        // The table row of an index key (its last value is the rowid).
                        let lookup = move |key: Row| -> Result<Option<(i64, Row)>> {
                            if covering {
                                return super::super::covering::row_of_entry(
                                    &index_c, key, t_ncols,
                                )
                                .map(Some);
                            }
                            let Some(id) = key.get(ncols).and_then(|v| match v {
                                Value::Integer(i) => Some(*i),
                                _ => None,
                            }) else {
                                return Err(SqlError::Code {
                                    code: codes::SQLITE_CORRUPT,
                                    extended_code: codes::SQLITE_CORRUPT,
                                    message: "database disk image is malformed".into(),
                                });
                            };
                            let vals = match &needed {
                                Some(n) => store.table_get_cols(root, id, n)?,
                                None => store.table_get(root, id)?,
                            };
                            Ok(vals.map(|vals| (id, vals)))
                        };
                        for p in prefixes {
                            let (lo_b, hi_b) = index_bounds(index, p, Vec::new(), &lo_v, &hi_v);
                            let keys = self
                                .store
                                .index_range(index.root, order, lo_b, hi_b, *reverse)?;
                            if !multi {
                                // One range: rows are produced as the scan advances, so a
                                // LIMIT (or EXISTS) stops it early instead of fetching every
                                // table row of the range first (hc_mixed 0:10 walks 10 keys of
                                // a 200,000-row index instead of all of them).
                                let t = t.clone();
                                let keys: Box<dyn Iterator<Item = Result<Row>>> = if one_key {
                                    Box::new(keys.take(1))
                                } else {
                                    keys
                                };
                                return Ok(Box::new(keys.filter_map(move |key| {
                                    match key.and_then(&lookup) {
                                        Ok(Some((id, vals))) => Some(self.virtual_filled(
                                            &t,
                                            &gen,
                                            expand_row(&t, id, vals, &defaults),
                                        )),
                                        Ok(None) => None,
                                        Err(e) => Some(Err(e)),
                                    }
                                })));
                            }
                            for key in keys {
                                let Some((id, vals)) = lookup(key?)? else {
                                    continue;
                                };
                                if !seen_ids.insert(id) {
                                    continue;
                                }
                                out.push(self.virtual_filled(
                                    &t,
                                    &gen,
                                    expand_row(&t, id, vals, &defaults),
                                ));
                            }
                        }
                        Ok(Box::new(out.into_iter()))
                    }
                }
            }
        }
    }

    /// One range bound of an index walk, evaluated against the outer row with the range's
    /// comparison affinity: `Some(None)` when there is no bound, `None` when it is NULL.
    #[allow(clippy::type_complexity)]
    fn walk_bound(
        &self,
        bound: &Option<(CExpr, bool)>,
        range_aff: Option<Affinity>,
        fr: &Frame,
    ) -> Result<Option<Option<(Value, bool)>>> {
        let Some((e, incl)) = bound else {
            return Ok(Some(None));
        };
        let v = self.eval(e, fr)?.apply_comparison_affinity(range_aff);
        Ok((!v.is_null()).then_some(Some((v, *incl))))
    }

    /// The key prefixes an index access walks (the equality values' cartesian product, in
    /// key order, each once) and its range bounds, from the outer row; None when a NULL
    /// bound makes the walk empty. A NULL equality value drops its prefixes, except at
    /// the `nulls` positions (`x IS NULL`).
    #[allow(clippy::type_complexity, clippy::too_many_arguments)]
    fn index_walk(
        &self,
        order: &KeyOrder,
        eq: &[(Vec<CExpr>, Option<Affinity>)],
        nulls: u64,
        lo: &Option<(CExpr, bool)>,
        hi: &Option<(CExpr, bool)>,
        range_aff: Option<Affinity>,
        fr: &Frame,
    ) -> Result<Option<(Vec<Row>, Option<(Value, bool)>, Option<(Value, bool)>)>> {
        // Candidate prefixes: the cartesian product of the equality values. With one plain
        // value per column (no IN list or subquery), the usual join step, that is one prefix,
        // built in place (the general product below cost ~5 allocations a probe; speedtest1
        // test 310).
        let mut prefixes: Vec<Row> = Vec::with_capacity(1);
        let single = eq
            .iter()
            .all(|(exprs, _)| exprs.len() == 1 && !matches!(exprs[0], CExpr::InSelect { .. }));
        if single {
            if let Some(p) = self.single_prefix(eq, nulls, fr, Vec::new())? {
                prefixes.push(p);
            }
        } else {
            prefixes.push(Vec::new());
            for (pos, (exprs, aff)) in eq.iter().enumerate() {
                let null_ok = pos < 64 && nulls & (1 << pos) != 0;
                let mut vals = Vec::new();
                for e in exprs {
                    self.probe_values(e, fr, &mut vals)?;
                }
                let vals: Vec<Value> = vals
                    .into_iter()
                    .map(|v| v.apply_comparison_affinity(*aff))
                    .filter(|v| null_ok || !v.is_null())
                    .collect();
                let mut next = Vec::new();
                for p in &prefixes {
                    for v in &vals {
                        let mut q = p.clone();
                        q.push(v.clone());
                        next.push(q);
                    }
                }
                prefixes = next;
            }
        }
        // Lower bound first, then upper: a NULL bound makes the walk empty.
        let Some(lo_v) = self.walk_bound(lo, range_aff, fr)? else {
            return Ok(None);
        };
        let Some(hi_v) = self.walk_bound(hi, range_aff, fr)? else {
            return Ok(None);
        };
        // Several prefixes (IN lists) are walked in key order, as SQLite
        // does, each once.
        prefixes.sort_by(|a, b| order.compare(a, b));
        prefixes.dedup_by(|a, b| order.compare(a, b) == Ordering::Equal);
        Ok(Some((prefixes, lo_v, hi_v)))
    }

    /// The key prefix of an index access whose equalities each have one plain value (no
    /// IN list or subquery; `access::single_valued`), from the outer row; None when one is
    /// NULL (the walk is empty) outside the `nulls` positions (`x IS NULL`). Every value is
    /// evaluated, NULL or not, so an error in a later one is raised as before. Room is left
    /// for a range bound's value (`index_bounds` pushes it without growing the vector).
    fn single_prefix(
        &self,
        eq: &[(Vec<CExpr>, Option<Affinity>)],
        nulls: u64,
        fr: &Frame,
        mut p: Row,
    ) -> Result<Option<Row>> {
        p.clear();
        p.reserve(eq.len() + 1);
        let mut any_null = false;
        for (pos, (exprs, aff)) in eq.iter().enumerate() {
            let null_ok = pos < 64 && nulls & (1 << pos) != 0;
            for e in exprs {
                let v = self.eval(e, fr)?.apply_comparison_affinity(*aff);
                any_null |= v.is_null() && !null_ok;
                p.push(v);
            }
        }
        Ok((!any_null).then_some(p))
    }

    /// `index_walk` for an access with one key prefix (`single_prefix`): the prefix and
    /// the range bounds, with no vector of prefixes to sort (a join's inner walk per
    /// outer row; speedtest1 test 310). None when a NULL makes the walk empty.
    #[allow(clippy::type_complexity)]
    fn index_walk_one(
        &self,
        eq: &[(Vec<CExpr>, Option<Affinity>)],
        nulls: u64,
        lo: &Option<(CExpr, bool)>,
        hi: &Option<(CExpr, bool)>,
        range_aff: Option<Affinity>,
        fr: &Frame,
        prefix_row: Row,
    ) -> Result<Option<(Row, Option<(Value, bool)>, Option<(Value, bool)>)>> {
        // Evaluated in `index_walk`'s order (prefix, lower bound, upper bound), so the same
        // error wins; a NULL bound makes the walk empty.
        let prefix = self.single_prefix(eq, nulls, fr, prefix_row)?;
        let Some(lo_v) = self.walk_bound(lo, range_aff, fr)? else {
            return Ok(None);
        };
        let Some(hi_v) = self.walk_bound(hi, range_aff, fr)? else {
            return Ok(None);
        };
        Ok(prefix.map(|p| (p, lo_v, hi_v)))
    }

    /// A table's rows in rowid order, decoding only the `needed` columns when given.
    pub(super) fn table_range(
        &self,
        root: u32,
        lo: Bound<i64>,
        hi: Bound<i64>,
        reverse: bool,
        needed: Option<&std::sync::Arc<[bool]>>,
    ) -> Result<super::super::store::RowIter> {
        match needed {
            Some(n) => self
                .store
                .table_range_cols(root, lo, hi, reverse, n.clone()),
            None => self.store.table_range(root, lo, hi, reverse),
        }
    }

    /// One table row by rowid, decoding only the `needed` columns when given.
    pub(super) fn table_get(
        &self,
        root: u32,
        rowid: i64,
        needed: Option<&std::sync::Arc<[bool]>>,
    ) -> Result<Option<Row>> {
        match needed {
            Some(n) => self.store.table_get_cols(root, rowid, n),
            None => self.store.table_get(root, rowid),
        }
    }
}
