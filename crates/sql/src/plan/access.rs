//! Access paths and join order for one query level: which table is scanned in which
//! order, and how each table's rows are found (rowid lookup or range, an index's equality
//! prefix plus range, an automatic hash index, or a scan).
//!
//! An index holding every column the query reads is covering (`plan::covering`): it wins
//! ties with one that is not, a full scan walks the narrowest covering index instead of the
//! table, and the executor builds rows from its entries. `INDEXED BY` / `NOT INDEXED`
//! restrict the indexes a source may use (and turn off its automatic index), as in SQLite.
//!
//! Invariant: access paths only narrow the rows examined. Every WHERE/ON term stays a filter
//! of its level, so a path derived from a term never changes the result. The one exception
//! is exact: an index access lists the terms its bounds imply (`Access::Index::implied`,
//! see [`implied_terms`]), and the executor skips testing those only on the rows of a
//! one-range index walk (table lookups, a covering index's keys, or a WITHOUT ROWID
//! table's own tree), whose rows all satisfy them.
//!
//! When `order_by_satisfied` finds the path yields the ORDER BY order, the plan carries no
//! sort keys: the executor must then emit that core's rows in scan order (it does for a
//! single table with no grouping, DISTINCT or windows, the only case accepted).

use super::bind::{contains_agg, Binder};
use super::*;
use super::{constant, covering};
use crate::collation::Collation;
use crate::value::comparison_affinity;
use std::collections::HashMap;

impl Binder<'_> {
    // ---- access paths -----------------------------------------------------------------

    /// Greedy join ordering for inner joins: next comes the source best constrained by the
    /// sources already placed (rowid equality, then an indexed equality, then any equality,
    /// then any filter), so nested loops stay narrow. Row positions do not change; only the
    /// loop order does.
    pub(crate) fn reorder_joins(&self, sources: &mut Vec<Source>, terms: &[&CExpr]) {
        let n = sources.len();
        let refs: Vec<Vec<usize>> = terms
            .iter()
            .map(|t| referenced_sources(t, sources))
            .collect();
        let mut used = vec![false; n];
        let mut order = Vec::with_capacity(n);
        for _ in 0..n {
            let mut best: Option<(usize, u8)> = None;
            for r in 0..n {
                if used[r] {
                    continue;
                }
                let mut score = 0u8;
                for (ti, t) in terms.iter().enumerate() {
                    if !refs[ti].contains(&r) || refs[ti].iter().any(|&s| s != r && !used[s]) {
                        continue;
                    }
                    let s = match eq_column(t, r, sources) {
                        Some(c) => {
                            if let SourceKind::Table(tab) = &sources[r].kind {
                                if c == tab.columns.len() || Some(c) == tab.rowid_alias {
                                    5
                                } else if tab
                                    .indexes
                                    .iter()
                                    .filter_map(|i| self.schema.index_of(tab, i))
                                    .filter(|ix| sources[r].may_use_index(ix))
                                    .any(|ix| {
                                        ix.columns.first().and_then(|ic| ic.column) == Some(c)
                                    })
                                {
                                    4
                                } else {
                                    3
                                }
                            } else {
                                3
                            }
                        }
                        None => 1,
                    };
                    score = score.max(s);
                }
                if best.map_or(true, |(_, b)| score > b) {
                    best = Some((r, score));
                }
            }
            if let Some((r, _)) = best {
                used[r] = true;
                order.push(r);
            }
        }
        let old = std::mem::take(sources);
        let mut slots: Vec<Option<Source>> = old.into_iter().map(Some).collect();
        for r in order {
            if let Some(s) = slots[r].take() {
                sources.push(s);
            }
        }
    }

    /// `order_hint`: the first ORDER BY column (in source 0) and collation of a query with a
    /// LIMIT; an index led by it with a range on it is preferred, so the scan can follow the
    /// index order and stop after LIMIT rows instead of sorting the whole range.
    ///
    /// `needed`: per source, the columns the query reads from it (`usage::needed_columns`
    /// with every source still scanned); an index holding all of them is covering, preferred
    /// over an equally good one that is not, and a full scan walks the narrowest covering
    /// index instead of the table, as SQLite does (`plan::covering`). `simple_count`: the
    /// query is `SELECT count(*) FROM t`, for which SQLite picks the narrowest index.
    pub(crate) fn choose_access(
        &self,
        sources: &mut [Source],
        filters: &mut [Vec<CExpr>],
        order_hint: Option<(usize, Collation)>,
        needed: &[Option<Arc<[bool]>>],
        simple_count: bool,
    ) {
        // Literals compared with columns take the comparison's affinity once, here, and
        // the access paths derived below start from the converted values.
        for t in filters.iter_mut().flatten() {
            constant::fold_comparison_literals(t);
        }
        for t in sources.iter_mut().flat_map(|s| s.on.iter_mut()) {
            constant::fold_comparison_literals(t);
        }
        self.choose_search(sources, filters, order_hint, needed);
        for (i, src) in sources.iter_mut().enumerate() {
            let (SourceKind::Table(tab), Access::Scan) = (&src.kind, &src.access) else {
                continue;
            };
            if src.join.keeps_right_rows() {
                continue;
            }
            let Some(mask) = covering::coverable_mask(tab, needed.get(i).and_then(|m| m.as_ref()))
            else {
                continue;
            };
            // SQLite's `count(*)` shortcut heeds NOT INDEXED but not INDEXED BY.
            let hint = match &src.indexed {
                Some(crate::parse::ast::Indexed::By(_)) if simple_count => None,
                h => h.as_ref(),
            };
            let forced = match hint {
                // INDEXED BY with no usable term: a full scan of that index (SQLite).
                Some(crate::parse::ast::Indexed::By(_)) => {
                    covering::sqlite_index_order(self.schema, tab)
                        .into_iter()
                        .find(|ix| src.may_use_index(ix) && ix.partial.is_none() && ix.root != 0)
                }
                _ => None,
            };
            let chosen = match forced {
                Some(ix) => Some(ix),
                None if hint.is_some() => None,
                None => covering::full_scan_index(self.schema, tab, &mask, simple_count),
            };
            if let Some(ix) = chosen {
                let covers = covering::index_covers(tab, &ix, &mask);
                src.access = Access::whole_index(ix, covers);
            }
        }
    }

    /// Index, rowid and automatic-index searches from the WHERE/ON terms (see
    /// [`choose_access`](Self::choose_access)).
    fn choose_search(
        &self,
        sources: &mut [Source],
        filters: &mut [Vec<CExpr>],
        order_hint: Option<(usize, Collation)>,
        needed: &[Option<Arc<[bool]>>],
    ) {
        for i in 0..sources.len() {
            let SourceKind::Table(tab) = &sources[i].kind else {
                continue;
            };
            let tab = tab.clone();
            // Borrowed, not cloned: cloning the WHERE terms cost ~2.2k instructions per
            // SELECT (speedtest1 test 410 profile); only candidate sides are cloned below.
            let terms: &[CExpr] = match sources[i].join {
                JoinType::Inner => &filters[i],
                JoinType::Left => &sources[i].on,
                // Unmatched right rows are found by scanning it whole after the join.
                JoinType::Right | JoinType::Full => continue,
            };
            let start = sources[i].start;
            let rowid_pos = start + tab.columns.len();
            // Candidate (column-in-source, op, other side, other affinity, collation).
            let mut cands: Vec<(usize, BinaryOp, Vec<CExpr>, Option<Affinity>, Collation)> =
                Vec::new();
            // The term each of the first 64 candidates came from (`NOT_IMPLIED` for IN
            // lists and probe sets, which are never implied, and terms past the 64th): an
            // array, as a vector cost ~300 instructions a statement (speedtest1 test 410).
            let mut cand_term = [NOT_IMPLIED; 64];
            let ncols = tab.columns.len();
            // Index expression terms (expridx.html §3): a comparison side that is the indexed
            // expression, tree for tree, takes a virtual column slot past the rowid
            // (`ncols + 1 + k`). Trees are compared in their bound form; only for the first
            // source, whose columns bind at the same positions as in the index definition.
            let mut expr_forms: Vec<String> = Vec::new();
            let mut expr_slot: HashMap<(String, usize), usize> = HashMap::new();
            if start == 0 {
                for ixname in &tab.indexes {
                    let Some(ix) = self.schema.index_of(&tab, ixname) else {
                        continue;
                    };
                    for (pos, icol) in ix.columns.iter().enumerate() {
                        let Some(e) = &icol.expr else { continue };
                        let Ok(bound) = Binder::new(self.schema).bind_for_table(&tab, None, e)
                        else {
                            continue;
                        };
                        let form = format!("{bound:?}");
                        let k = match expr_forms.iter().position(|f| *f == form) {
                            Some(k) => k,
                            None => {
                                expr_forms.push(form);
                                expr_forms.len() - 1
                            }
                        };
                        expr_slot.insert((ixname.clone(), pos), ncols + 1 + k);
                    }
                }
            }
            let slot_of = |col: &CExpr| -> Option<usize> {
                match col {
                    CExpr::Col { level: 0, idx } => {
                        (*idx >= start && *idx < start + sources_width(&tab)).then(|| *idx - start)
                    }
                    _ if !expr_forms.is_empty() => {
                        let form = format!("{col:?}");
                        expr_forms
                            .iter()
                            .position(|f| *f == form)
                            .map(|k| ncols + 1 + k)
                    }
                    _ => None,
                }
            };
            for (ti, t) in terms.iter().enumerate() {
                let first_cand = cands.len();
                let mut push_cmp = |col: &CExpr,
                                    op: BinaryOp,
                                    other: &CExpr,
                                    oaff: Option<Affinity>,
                                    coll: Collation| {
                    if let Some(slot) = slot_of(col) {
                        // Borrowed, not copied: a copy of the sources per term was ~5% of
                        // binding a four-way join (speedtest1 test 310, callgrind).
                        let mut corr = false;
                        let depends_on_self =
                            other.max_source(&sources[..=i], &mut corr) == Some(i);
                        if !depends_on_self && !contains_agg(other) {
                            if let Some(ct) = cand_term.get_mut(cands.len()) {
                                *ct = u8::try_from(ti).map_or(NOT_IMPLIED, |t| t.min(NOT_IMPLIED));
                            }
                            cands.push((slot, op, vec![other.clone()], oaff, coll));
                        }
                    }
                };
                match t {
                    CExpr::Binary {
                        op,
                        l,
                        r,
                        coll,
                        laff,
                        raff,
                    } if matches!(
                        op,
                        BinaryOp::Eq | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge
                    ) =>
                    {
                        push_cmp(l, *op, r, *raff, *coll);
                        let flipped = match op {
                            BinaryOp::Lt => BinaryOp::Gt,
                            BinaryOp::Le => BinaryOp::Ge,
                            BinaryOp::Gt => BinaryOp::Lt,
                            BinaryOp::Ge => BinaryOp::Le,
                            o => *o,
                        };
                        push_cmp(r, flipped, l, *laff, *coll);
                        let _ = laff;
                    }
                    // `x IS c` with a non-NULL constant is `x = c` (SQLite searches an index
                    // for both); `x IS NULL` searches for the NULL keys (op `Is`, a NULL
                    // value: `Access::Index::nulls`).
                    CExpr::Binary {
                        op: BinaryOp::Is,
                        l,
                        r,
                        coll,
                        laff,
                        raff,
                    } => {
                        let non_null = |e: &CExpr| matches!(e, CExpr::Lit(v) if !v.is_null());
                        let null = |e: &CExpr| matches!(e, CExpr::Lit(v) if v.is_null());
                        if non_null(r) {
                            push_cmp(l, BinaryOp::Eq, r, *raff, *coll);
                        } else if null(r) {
                            push_cmp(l, BinaryOp::Is, r, None, *coll);
                        }
                        if non_null(l) {
                            push_cmp(r, BinaryOp::Eq, l, *laff, *coll);
                        } else if null(l) {
                            push_cmp(r, BinaryOp::Is, l, None, *coll);
                        }
                    }
                    CExpr::IsNull { e, not: false } => {
                        push_cmp(
                            e,
                            BinaryOp::Is,
                            &CExpr::Lit(Value::Null),
                            None,
                            Collation::Binary,
                        );
                    }
                    CExpr::Between {
                        e,
                        not: false,
                        lo,
                        hi,
                        coll,
                        hicoll,
                        loaff,
                        hiaff,
                        ..
                    } => {
                        push_cmp(e, BinaryOp::Ge, lo, *loaff, *coll);
                        push_cmp(e, BinaryOp::Le, hi, *hiaff, *hicoll);
                    }
                    CExpr::InList {
                        e,
                        not: false,
                        list,
                        coll,
                        laffs,
                        ..
                    } if !list.is_empty() => {
                        if let Some(slot) = slot_of(e) {
                            if list.iter().all(|x| x.is_constant()) {
                                let aff = laffs.iter().copied().next().flatten();
                                if laffs.iter().all(|a| *a == aff) {
                                    cands.push((slot, BinaryOp::Eq, list.clone(), aff, *coll));
                                }
                            }
                        }
                    }
                    // `x IN (SELECT y ...)` drives a lookup with the subquery's rows as the
                    // probe set (SQLite: `SEARCH t USING INDEX i (x=?)` over a LIST
                    // SUBQUERY); the term itself stands for that set in the value list
                    // (see `single_valued`). Its comparison affinity is the one the probe
                    // values take, so `usable` below decides as for `x = <that affinity>`.
                    CExpr::InSelect {
                        e,
                        not: false,
                        sub,
                        terms: in_terms,
                        ..
                    } if !sub.correlated && in_terms.len() == 1 => {
                        if let Some(slot) = slot_of(e) {
                            let (coll, aff) = in_terms[0];
                            cands.push((slot, BinaryOp::Eq, vec![t.clone()], aff, coll));
                        }
                    }
                    _ => {}
                }
                // A BETWEEN is implied only when both its comparisons became candidates:
                // `b BETWEEN a AND 'z'` with `a` of this same table gives only `b <= 'z'`.
                let n = cands.len() - first_cand;
                if matches!(t, CExpr::Between { .. }) && n < 2 {
                    for ct in cand_term.iter_mut().skip(first_cand).take(n) {
                        *ct = NOT_IMPLIED;
                    }
                }
            }
            if cands.is_empty() {
                continue;
            }
            let is_rowid_col = |c: usize| c == ncols || Some(c) == tab.rowid_alias;
            // Affinity compatibility (see module docs): the column side must not be converted.
            let col_aff = |c: usize| {
                if is_rowid_col(c) {
                    Affinity::Integer
                } else {
                    // An expression slot: no affinity of its own.
                    tab.columns
                        .get(c)
                        .map_or(Affinity::Blob, |col| col.affinity)
                }
            };
            let usable = |c: usize, oaff: Option<Affinity>| -> bool {
                let ca = col_aff(c);
                match ca {
                    a if a.is_numeric() => true,
                    Affinity::Text => {
                        matches!(oaff, None | Some(Affinity::Text) | Some(Affinity::Blob))
                    }
                    _ => comparison_affinity(Some(ca), oaff).is_none(),
                }
            };
            // 1. rowid equality
            // (an IN subquery's set only when no list or single value is there)
            if let Some((_, _, vals, _, _)) = cands
                .iter()
                .filter(|(c, op, _, _, _)| is_rowid_col(*c) && *op == BinaryOp::Eq)
                .min_by_key(|(_, _, vals, _, _)| vals.iter().any(is_probe_set))
            {
                sources[i].access = Access::RowidEq(vals.clone());
                let _ = rowid_pos;
                continue;
            }
            // 2. best index: longest equality prefix, then a range; among equals a covering
            // index, then the narrower (SQLite's cost counts a table lookup per row and the
            // index row size), then the first in SQLite's index order.
            let mask = covering::coverable_mask(&tab, needed.get(i).and_then(|m| m.as_ref()));
            let tab_size = i32::from(covering::table_row_size(&tab).max(1));
            let mut best: Option<((usize, i64, bool, i32), Access)> = None;
            for ix in covering::sqlite_index_order(self.schema, &tab) {
                if !sources[i].may_use_index(&ix) {
                    continue;
                }
                // Borrowed unless the name has upper case: the key is only needed for an
                // expression column, which most indexes lack.
                let ixname = crate::schema::key_ref(&ix.name);
                let ix = &ix;
                if ix.partial.is_some() || ix.root == 0 {
                    continue;
                }
                let mut eq = Vec::new();
                let mut nulls = 0u64;
                let mut lo = None;
                let mut hi = None;
                let mut range_aff = None;
                // Candidates the bounds were built from (a bit per candidate), and the
                // range's (candidate, its affinity): bits and arrays, not vectors, as this
                // runs for every index of every source (vectors cost ~5k instructions a
                // four-way join; callgrind, speedtest1 test 310).
                let mut used: u64 = 0;
                let mut used_range: [Option<(usize, Option<Affinity>)>; 2] = [None, None];
                for (pos, icol) in ix.columns.iter().enumerate() {
                    let c = match icol.column {
                        Some(c) => c,
                        None => match expr_slot.get(&(ixname.to_string(), pos)) {
                            Some(&c) => c,
                            None => break,
                        },
                    };
                    // `x IS NULL` matches the NULL keys whatever the column's collation
                    // and affinity.
                    let found = cands.iter().position(|(cc, op, _, oaff, coll)| {
                        *cc == c
                            && (*op == BinaryOp::Is && pos < 64
                                || *op == BinaryOp::Eq
                                    && *coll == icol.collation
                                    && usable(c, *oaff))
                    });
                    if let Some(k) = found {
                        let (_, op, vals, oaff, _) = &cands[k];
                        if single_valued(vals) && k < 64 {
                            used |= 1 << k;
                        }
                        if *op == BinaryOp::Is {
                            nulls |= 1 << pos;
                        }
                        eq.push((vals.clone(), comparison_affinity(Some(col_aff(c)), *oaff)));
                        continue;
                    }
                    for (k, (cc, op, vals, oaff, coll)) in cands.iter().enumerate() {
                        if *cc != c
                            || *coll != icol.collation
                            || !usable(c, *oaff)
                            || !single_valued(vals)
                        {
                            continue;
                        }
                        let v = vals[0].clone();
                        let aff = comparison_affinity(Some(col_aff(c)), *oaff);
                        // For a DESC column, the key order is reversed, so bounds swap.
                        let (is_lo, incl) = match op {
                            BinaryOp::Gt => (true, false),
                            BinaryOp::Ge => (true, true),
                            BinaryOp::Lt => (false, false),
                            BinaryOp::Le => (false, true),
                            _ => continue,
                        };
                        let is_lo = is_lo != icol.desc;
                        if is_lo && lo.is_none() {
                            lo = Some((v, incl));
                            range_aff = aff;
                            used_range[0] = Some((k, aff));
                        } else if !is_lo && hi.is_none() {
                            hi = Some((v, incl));
                            range_aff = aff;
                            used_range[1] = Some((k, aff));
                        }
                    }
                    break;
                }
                // Both bounds take `range_aff` (the last one's): a bound whose own
                // affinity differs is not exact, and its term stays tested.
                for (k, aff) in used_range.into_iter().flatten() {
                    if aff == range_aff && k < 64 {
                        used |= 1 << k;
                    }
                }
                // Past 64 candidates a term's later candidate would go untracked: none.
                let implied = match cand_term.get(..cands.len()) {
                    Some(ct) => implied_terms(used, ct),
                    None => 0,
                };
                if eq.is_empty() && lo.is_none() && hi.is_none() {
                    continue;
                }
                // An index giving the ORDER BY ... LIMIT order (its next column after the
                // equality prefix) beats other ranges (and a rowid range) and an index with
                // the same equality prefix, but not a longer equality prefix.
                let ordered = i == 0
                    && eq.iter().all(|(vals, _)| single_valued(vals))
                    && order_hint.is_some_and(|(oc, ocoll)| {
                        ix.columns
                            .get(eq.len())
                            .is_some_and(|ic| ic.column == Some(oc) && ic.collation == ocoll)
                    });
                let score = eq.len() * 4
                    + usize::from(lo.is_some())
                    + usize::from(hi.is_some())
                    + usize::from(ix.unique && eq.len() == ix.columns.len() && nulls == 0) * 2
                    + usize::from(ordered) * 2;
                let covers = mask
                    .as_deref()
                    .is_some_and(|m| covering::index_covers(&tab, ix, m));
                let width = -(15 * i32::from(covering::index_row_size(&tab, ix)) / tab_size);
                // Among equal prefixes, the fewer lookups win: SQLite's cost multiplies by
                // each IN list's length, and by 25 for an IN subquery (where.c's nIn).
                let lookups = eq.iter().fold(1i64, |n, (vals, _)| {
                    let k = if vals.iter().any(is_probe_set) {
                        25
                    } else {
                        vals.len().max(1) as i64
                    };
                    n.saturating_mul(k)
                });
                let rank = (score, -lookups, covers, width);
                if best.as_ref().map_or(true, |(s, _)| rank > *s) {
                    let order = KeyOrder {
                        columns: ix.columns.iter().map(|c| (c.collation, c.desc)).collect(),
                    };
                    best = Some((
                        rank,
                        Access::Index {
                            index: ix.clone(),
                            order,
                            eq,
                            nulls,
                            lo,
                            hi,
                            range_aff,
                            reverse: false,
                            covering: covers,
                            implied,
                        },
                    ));
                }
            }
            // 3. rowid range
            let mut rlo = None;
            let mut rhi = None;
            for (c, op, vals, _, _) in &cands {
                if !is_rowid_col(*c) || !single_valued(vals) {
                    continue;
                }
                match op {
                    BinaryOp::Gt if rlo.is_none() => rlo = Some((vals[0].clone(), false)),
                    BinaryOp::Ge if rlo.is_none() => rlo = Some((vals[0].clone(), true)),
                    BinaryOp::Lt if rhi.is_none() => rhi = Some((vals[0].clone(), false)),
                    BinaryOp::Le if rhi.is_none() => rhi = Some((vals[0].clone(), true)),
                    _ => {}
                }
            }
            let rowid_score = usize::from(rlo.is_some()) + usize::from(rhi.is_some());
            match best {
                Some(((s, ..), acc)) if s >= 4 || s > rowid_score => sources[i].access = acc,
                _ if rowid_score > 0 => {
                    sources[i].access = Access::RowidRange {
                        lo: rlo,
                        hi: rhi,
                        reverse: false,
                    }
                }
                Some((_, acc)) => sources[i].access = acc,
                None => {
                    // No index: an inner table joined by equality gets an automatic index.
                    // A hash index needs a collation that hashes (`hash_key`): a built-in.
                    let auto = cands.iter().find(|(c, op, vals, oaff, coll)| {
                        *op == BinaryOp::Eq
                            && coll.is_builtin()
                            && single_valued(vals)
                            && !is_rowid_col(*c)
                            && usable(*c, *oaff)
                    });
                    // Not for a table named with INDEXED BY or NOT INDEXED (as SQLite).
                    let auto = auto.filter(|_| sources[i].indexed.is_none());
                    if let (true, Some((c, _, vals, oaff, coll))) = (i > 0, auto) {
                        sources[i].access = Access::AutoIndex {
                            col: *c,
                            probe: vals[0].clone(),
                            aff: comparison_affinity(Some(col_aff(*c)), *oaff),
                            coll: *coll,
                            cache: Rc::new(RefCell::new(None)),
                        };
                    }
                }
            }
        }
    }
}

/// The term of a candidate that is never implied (IN lists, probe sets, terms past the
/// 64th).
const NOT_IMPLIED: u8 = 64;

/// Terms the walk implies, a bit per term position (below 64): those whose every
/// candidate was used for a bound (`used`, a bit per candidate index; `cand_term`, each
/// candidate's term). A comparison gives one candidate; a BETWEEN counts only when both
/// its comparisons gave one (`choose_search` marks a half one `NOT_IMPLIED`).
///
/// Why a used term may go untested on the rows of a one-range index walk (rows read by
/// table lookups, or built from a covering index's keys, which hold the values the term
/// reads, or a WITHOUT ROWID table's own tree, the rows themselves):
/// the bound takes the term's comparison affinity and collation (`usable` keeps the
/// column side unconverted, and the index column's collation is the term's), the walk
/// compares keys exactly as the term compares values (SQLite's order), a NULL bound or
/// equality value makes the walk empty, and a walk bounded on one side only skips NULL
/// keys (`exec::select::index_bounds`), as the comparison rejects NULL. An index
/// expression is deterministic, so its key is the value the term computes. SQLite does
/// the same (where.c `disableTerm`).
fn implied_terms(used: u64, cand_term: &[u8]) -> u64 {
    let (mut out, mut unused) = (0u64, 0u64);
    for (k, &ti) in cand_term.iter().enumerate() {
        if ti >= NOT_IMPLIED {
            continue;
        }
        if used & (1 << k) != 0 {
            out |= 1 << ti;
        } else {
            unused |= 1 << ti;
        }
    }
    // A term with a candidate that was not used is not implied.
    out & !unused
}

/// Whether an equality's lookup values are one value. An `x IN (SELECT ...)` term among
/// them stands for every value its subquery returns (the executor expands it when the lookup
/// runs), so it is never one value, even alone.
pub(crate) fn single_valued(vals: &[CExpr]) -> bool {
    matches!(vals, [v] if !is_probe_set(v))
}

/// Whether `e`, found in an access path's value list, is a probe set: the `x IN (SELECT
/// ...)` term whose subquery's first column gives the values to look up.
pub(crate) fn is_probe_set(e: &CExpr) -> bool {
    matches!(e, CExpr::InSelect { .. })
}

/// Positions (in `sources`) of the sources an expression reads at level 0; a correlated
/// subquery counts as reading all of them.
fn referenced_sources(e: &CExpr, sources: &[Source]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut stack = vec![e];
    while let Some(x) = stack.pop() {
        match x {
            CExpr::Col { level: 0, idx } => {
                if let Some(p) = sources
                    .iter()
                    .position(|s| *idx >= s.start && *idx < s.start + s.width)
                {
                    if !out.contains(&p) {
                        out.push(p);
                    }
                }
            }
            CExpr::Exists(sp)
            | CExpr::Scalar(sp)
            | CExpr::Field { sub: sp, .. }
            | CExpr::InSelect { sub: sp, .. }
                if sp.correlated =>
            {
                return (0..sources.len()).collect();
            }
            CExpr::Agg(_) | CExpr::Win(_) => return (0..sources.len()).collect(),
            _ => {}
        }
        x.for_each_child(&mut |c| stack.push(c));
    }
    out
}

/// If `t` is `col = expr` with `col` in source `r` and `expr` not reading `r`, the column's
/// index within the source.
fn eq_column(t: &CExpr, r: usize, sources: &[Source]) -> Option<usize> {
    let CExpr::Binary {
        op: BinaryOp::Eq,
        l,
        r: rhs,
        ..
    } = t
    else {
        return None;
    };
    let s = &sources[r];
    for (a, b) in [(l, rhs), (rhs, l)] {
        if let CExpr::Col { level: 0, idx } = **a {
            if idx >= s.start
                && idx < s.start + s.width
                && !referenced_sources(b, sources).contains(&r)
            {
                return Some(idx - s.start);
            }
        }
    }
    None
}

fn sources_width(t: &Table) -> usize {
    t.columns.len() + 1
}

/// One ORDER BY term as the access path sees it: a column of the only table (by position
/// in the source), or another expression, kept in its bound form (`{:?}` of the tree) to be
/// matched against an index's expression terms, tree for tree, as WHERE terms are.
enum OrderTerm {
    Col(usize),
    Expr(String),
}

impl Binder<'_> {
    /// Whether `core` produces its rows in `keys` order by its access path alone, so the sort
    /// can be dropped (and a LIMIT can stop the scan early). When it does, the access path is
    /// set to walk in the needed direction.
    ///
    /// Only a single table with no grouping, DISTINCT or windows qualifies, walked either in
    /// rowid order (`ORDER BY rowid`) or along an index: after the equality prefix (each with
    /// one value, so the prefix is one contiguous key range), the ORDER BY terms name the next
    /// index columns with the same collation, all in the index direction or all against it,
    /// optionally followed by the rowid once every index column is used. An index term on an
    /// expression (expridx.html) matches an ORDER BY term that is the same expression tree
    /// (`ORDER BY substr(c,1,16)` walks `ON t(substr(c,1,16))`). Terms on equality columns
    /// are constant and skipped. NULLs must sort where the key order puts them: first
    /// ascending, last descending (the default).
    pub(crate) fn order_by_satisfied(&self, core: &mut CorePlan, keys: &[SortKey]) -> bool {
        self.group_by_walk(core);
        // Without an ORDER BY the groups come out as the loop meets them, as in SQLite
        // (which walks them rather than sorting): the group map is keyed in that order.
        if keys.is_empty() && core.is_agg {
            if let Some(order) = super::grouping::walk_order(core) {
                let (g, c) = (core.group_by.clone(), core.group_colls.clone());
                core.group_by = order.iter().filter_map(|&i| g.get(i).cloned()).collect();
                core.group_colls = order.iter().filter_map(|&i| c.get(i).copied()).collect();
            }
        }
        // Groups come out in ascending GROUP BY order (the executor's group map), so an
        // ORDER BY that is the GROUP BY, ascending, needs no sort where SQLite's plan has
        // none either (`grouping::order_by_groups`); a descending one is still sorted here.
        if core.is_agg
            && keys.iter().all(|k| !k.desc)
            && super::grouping::order_by_groups(core, keys)
        {
            return true;
        }
        // A full scan of a covering index was chosen for its width alone: when the ORDER BY
        // is the rowid order instead, the table scan needs no sort and wins (SQLite's cost
        // counts the sort).
        let full_index_scan = matches!(
            core.sources.first().map(|s| &s.access),
            Some(Access::Index { eq, lo: None, hi: None, covering: true, .. }) if eq.is_empty()
        );
        if full_index_scan && !keys.is_empty() {
            if self.order_by_walk(core, keys) {
                return true;
            }
            let saved = std::mem::replace(&mut core.sources[0].access, Access::Scan);
            if self.order_by_walk(core, keys) {
                return true;
            }
            core.sources[0].access = saved;
            return false;
        }
        self.order_by_walk(core, keys) || self.order_by_index_walk(core, keys)
    }

    /// A GROUP BY whose groups an unconstrained outer loop does not bring together walks,
    /// as SQLite does without statistics, the table in rowid order or an index that does
    /// (`SCAN t USING INDEX i`, no `USE TEMP B-TREE FOR GROUP BY`): a covering index first,
    /// else the first in SQLite's index order. Partial indexes are left alone.
    fn group_by_walk(&self, core: &mut CorePlan) {
        if !core.is_agg || core.group_by.is_empty() || !core.windows.is_empty() {
            return;
        }
        let Some(src) = core.sources.first() else {
            return;
        };
        let SourceKind::Table(tab) = &src.kind else {
            return;
        };
        let unconstrained = match &src.access {
            Access::Scan => true,
            Access::Index { eq, lo, hi, .. } => eq.is_empty() && lo.is_none() && hi.is_none(),
            _ => false,
        };
        if !unconstrained
            || src.join != JoinType::Inner
            || src.indexed.is_some()
            || !super::grouping::group_by_sorts(core)
        {
            return;
        }
        let tab = tab.clone();
        let saved = std::mem::replace(&mut core.sources[0].access, Access::Scan);
        if !tab.without_rowid && !super::grouping::group_by_sorts(core) {
            return;
        }
        let mask = covering::coverable_mask(&tab, core.needed.first().and_then(|m| m.as_ref()));
        let mut found: Option<Access> = None;
        for ix in covering::sqlite_index_order(self.schema, &tab) {
            if ix.partial.is_some() || ix.root == 0 {
                continue;
            }
            let covers = mask
                .as_ref()
                .is_some_and(|m| covering::index_covers(&tab, &ix, m));
            core.sources[0].access = Access::whole_index(ix, covers);
            if !super::grouping::group_by_sorts(core) {
                if covers {
                    return;
                }
                if found.is_none() {
                    found = Some(core.sources[0].access.clone());
                }
            }
        }
        core.sources[0].access = found.unwrap_or(saved);
    }

    /// `INDEXED BY` checks after the access paths are chosen (lang_indexedby.html): a name
    /// that is not an index of the table is "no such index: X"; a partial index is usable
    /// only when a WHERE term is its WHERE expression (SQLite's implication test at its
    /// simplest), and is then walked whole (every term stays a filter); otherwise there is
    /// no plan: SQLite's "no query solution". Any other named index is walked whole by
    /// `choose_access`, and `count(*)`'s shortcut ignores INDEXED BY.
    pub(crate) fn apply_indexed_by(
        &self,
        core: &mut CorePlan,
        simple_count: bool,
    ) -> crate::value::Result<()> {
        for i in 0..core.sources.len() {
            let src = &core.sources[i];
            let (Some(crate::parse::ast::Indexed::By(name)), SourceKind::Table(tab)) =
                (&src.indexed, &src.kind)
            else {
                continue;
            };
            let tab = tab.clone();
            let Some(ix) = self
                .schema
                .table_indexes(&tab)
                .into_iter()
                .find(|ix| ix.name.eq_ignore_ascii_case(name))
            else {
                return Err(crate::value::SqlError::msg(format!(
                    "no such index: {name}"
                )));
            };
            let Some(partial) = &ix.partial else {
                continue;
            };
            if simple_count {
                continue;
            }
            let used = match &src.access {
                Access::Index { index, .. } => index.name.eq_ignore_ascii_case(name),
                Access::RowidEq(_) => true,
                Access::RowidRange { lo, hi, .. } => lo.is_some() || hi.is_some(),
                _ => false,
            };
            if used {
                continue;
            }
            // Index expressions bind at the table's own positions: only a source that
            // starts at 0 can match a WHERE term tree for tree (as in `choose_access`).
            let implied = src.start == 0
                && src.join == JoinType::Inner
                && Binder::new(self.schema)
                    .bind_for_table(&tab, None, partial)
                    .is_ok_and(|mut b| {
                        constant::fold_comparison_literals(&mut b);
                        let form = format!("{b:?}");
                        core.filters
                            .get(i)
                            .is_some_and(|f| f.iter().any(|t| format!("{t:?}") == form))
                    });
            if !implied || ix.root == 0 {
                return Err(crate::value::SqlError::msg("no query solution"));
            }
            let mask = covering::coverable_mask(&tab, core.needed.get(i).and_then(|m| m.as_ref()));
            let covers = mask
                .as_ref()
                .is_some_and(|m| covering::index_covers(&tab, &ix, m));
            core.sources[i].access = Access::whole_index(ix, covers);
        }
        Ok(())
    }

    /// A full table scan that does not yield the ORDER BY order walks an index that does
    /// instead of sorting, as SQLite does without statistics (`SCAN t USING INDEX i`): a
    /// table lookup per row unless the index covers the query, and a LIMIT stops the walk
    /// early. A covering index wins over one that is not; otherwise SQLite's index order
    /// decides. Partial indexes are left alone (their rows are a subset).
    fn order_by_index_walk(&self, core: &mut CorePlan, keys: &[SortKey]) -> bool {
        if keys.is_empty()
            || core.sources.len() != 1
            || !matches!(core.sources[0].access, Access::Scan)
        {
            return false;
        }
        let SourceKind::Table(tab) = &core.sources[0].kind else {
            return false;
        };
        if tab.without_rowid {
            return false;
        }
        let tab = tab.clone();
        let mask = covering::coverable_mask(&tab, core.needed.first().and_then(|m| m.as_ref()));
        let mut found: Option<Access> = None;
        for ix in covering::sqlite_index_order(self.schema, &tab) {
            if !core.sources[0].may_use_index(&ix) || ix.partial.is_some() || ix.root == 0 {
                continue;
            }
            let covers = mask
                .as_ref()
                .is_some_and(|m| covering::index_covers(&tab, &ix, m));
            core.sources[0].access = Access::whole_index(ix, covers);
            if self.order_by_walk(core, keys) {
                if covers {
                    return true;
                }
                if found.is_none() {
                    found = Some(core.sources[0].access.clone());
                }
            }
            core.sources[0].access = Access::Scan;
        }
        match found {
            Some(a) => {
                core.sources[0].access = a;
                true
            }
            None => false,
        }
    }

    fn order_by_walk(&self, core: &mut CorePlan, keys: &[SortKey]) -> bool {
        if keys.is_empty()
            || core.sources.len() != 1
            || core.is_agg
            || core.distinct
            || !core.windows.is_empty()
            || core.values.is_some()
        {
            return false;
        }
        let src = &core.sources[0];
        let SourceKind::Table(tab) = &src.kind else {
            return false;
        };
        if src.join != JoinType::Inner {
            return false;
        }
        let tab = tab.clone();
        let mut terms = Vec::with_capacity(keys.len());
        for k in keys {
            if k.nulls_first == k.desc {
                return false;
            }
            match core.outputs.get(k.idx) {
                Some(CExpr::Col { level: 0, idx })
                    if *idx >= src.start && *idx < src.start + src.width =>
                {
                    terms.push(OrderTerm::Col(*idx - src.start))
                }
                // Index expressions bind at the table's own positions: only a source that
                // starts at 0 can match them tree for tree (as in `choose_access`).
                Some(e) if src.start == 0 && !e.is_constant() => {
                    terms.push(OrderTerm::Expr(format!("{e:?}")))
                }
                _ => return false,
            }
        }
        let (ncols, rowid_alias) = (tab.columns.len(), tab.rowid_alias);
        let is_rowid = |t: &OrderTerm| match t {
            OrderTerm::Col(c) => *c == ncols || Some(*c) == rowid_alias,
            OrderTerm::Expr(_) => false,
        };
        let same = |ic: &crate::schema::IndexColumn, t: &OrderTerm| match (t, &ic.expr) {
            (OrderTerm::Col(c), None) => ic.column == Some(*c),
            (OrderTerm::Expr(form), Some(e)) => Binder::new(self.schema)
                .bind_for_table(&tab, None, e)
                .is_ok_and(|b| format!("{b:?}") == *form),
            _ => false,
        };
        // A WITHOUT ROWID table's scan is a walk of its PRIMARY KEY: try it as that index.
        let wr_root = tab.without_rowid.then_some(tab.root);
        if tab.without_rowid && matches!(core.sources[0].access, Access::Scan) {
            let pk = crate::exec::without_rowid::primary_key_index(&tab);
            let order = crate::exec::eval::Exec::key_order(&pk);
            let saved = std::mem::replace(
                &mut core.sources[0].access,
                Access::Index {
                    index: Arc::new(pk),
                    order,
                    eq: Vec::new(),
                    nulls: 0,
                    lo: None,
                    hi: None,
                    range_aff: None,
                    reverse: false,
                    covering: false,
                    implied: 0,
                },
            );
            if self.order_by_walk(core, keys) {
                return true;
            }
            core.sources[0].access = saved;
            return false;
        }
        let access = &mut core.sources[0].access;
        match access {
            Access::Scan | Access::RowidRange { .. } => {
                // The rowid is unique, so terms after it never break a tie.
                if !is_rowid(&terms[0]) {
                    return false;
                }
                let rev = keys[0].desc;
                match access {
                    Access::RowidRange { reverse, .. } => *reverse = rev,
                    _ => {
                        *access = Access::RowidRange {
                            lo: None,
                            hi: None,
                            reverse: rev,
                        }
                    }
                }
                true
            }
            // The rowids of an IN list or subquery are looked up in ascending order.
            Access::RowidEq(_) => is_rowid(&terms[0]) && !keys[0].desc,
            Access::Index {
                index, eq, reverse, ..
            } => {
                // Equalities with several values (IN lists or subqueries) walk one key
                // range per combination of values, in key order (backward for a reverse
                // walk): their columns order the rows, ahead of the columns after the
                // equality prefix; the single-valued ones are constant.
                let multi: Vec<usize> = (0..eq.len())
                    .filter(|&p| !single_valued(&eq[p].0))
                    .collect();
                let walk: Vec<usize> = multi
                    .iter()
                    .copied()
                    .chain(eq.len()..index.columns.len())
                    .collect();
                let mut pos = 0;
                let mut dir: Option<bool> = None;
                for (k, t) in keys.iter().zip(&terms) {
                    let on_eq = index.columns[..eq.len()].iter().enumerate().any(|(p, ic)| {
                        !multi.contains(&p) && ic.collation == k.coll && same(ic, t)
                    });
                    if on_eq {
                        continue;
                    }
                    let d = match walk.get(pos).and_then(|&p| index.columns.get(p)) {
                        Some(ic) if ic.collation == k.coll && same(ic, t) => {
                            pos += 1;
                            k.desc != ic.desc
                        }
                        Some(_) => return false,
                        // The PRIMARY KEY of a WITHOUT ROWID table is unique: once all of its
                        // terms are in order, later terms never break a tie.
                        None if wr_root == Some(index.root) => break,
                        None if is_rowid(t) => {
                            // Index keys end with the rowid, ascending; it is unique, so the
                            // remaining terms never break a tie.
                            if dir.is_some_and(|d| d != k.desc) {
                                return false;
                            }
                            dir = Some(k.desc);
                            break;
                        }
                        None => return false,
                    };
                    if dir.is_some_and(|x| x != d) {
                        return false;
                    }
                    dir = Some(d);
                }
                *reverse = dir.unwrap_or(false);
                true
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{implied_terms, NOT_IMPLIED};

    #[test]
    fn a_term_is_implied_only_when_all_its_candidates_were_used() {
        // Candidates: term 0 (an equality), term 2 twice (a BETWEEN), an IN list, term 5.
        let ct = [0, 2, 2, NOT_IMPLIED, 5];
        assert_eq!(implied_terms(0b00001, &ct), 0b1);
        // Half a BETWEEN (its other bound came from elsewhere or took another affinity).
        assert_eq!(implied_terms(0b00011, &ct), 0b1);
        assert_eq!(implied_terms(0b00111, &ct), 0b101);
        // A used IN list implies nothing.
        assert_eq!(implied_terms(0b01000, &ct), 0);
        assert_eq!(implied_terms(0b11110, &ct), 0b100100);
        assert_eq!(implied_terms(0, &ct), 0);
        assert_eq!(implied_terms(u64::MAX, &[]), 0);
    }
}
