//! Which GROUP BY, DISTINCT and ORDER BY orders a query level's outer loop already yields,
//! so SQLite needs no temp b-tree (sorter) for them: the basis of EXPLAIN QUERY PLAN's
//! `USE TEMP B-TREE FOR GROUP BY / DISTINCT / ORDER BY / LAST TERM OF ORDER BY / LAST n
//! TERMS OF ORDER BY / <agg>(DISTINCT)` rows (`exec::eqp`), and of dropping an ORDER BY
//! that the groups already come out in (`order_by_groups`).
//!
//! The outer loop's order is its `walk`: the key columns its access path visits in order
//! (a table scan: the rowid; an index: the columns after its equality prefix, IN-valued
//! equality columns first, then the rowid), with the single-valued equality columns apart
//! as constants. Only the first source counts (nested loops keep its order; an inner loop
//! only adds rows with the same outer values), and only plain columns of it.
//!
//! Invariant: `grouped` answers Some only when rows with equal terms are adjacent in the
//! loop, and Some(true) only when they also come in the terms' order and directions, so a
//! sort dropped on its word changes no result.

use super::*;
use crate::collation::Collation;

/// One step of the outer loop's order: a column of the first source (`ncols` is the rowid),
/// its collation, and whether the walk visits it descending.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WalkColumn {
    pub col: usize,
    pub coll: Collation,
    pub desc: bool,
}

/// The order of `core`'s outer loop: (constant columns, walk, whether the walk ends in a
/// unique key so that no later term can break a tie). None when the loop has no known
/// order (a subquery, an automatic index, a RIGHT or FULL JOIN's leftovers).
pub fn walk(core: &CorePlan) -> Option<(Vec<usize>, Vec<WalkColumn>, bool)> {
    let src = core.sources.first()?;
    if core.sources.iter().any(|s| s.join.keeps_right_rows()) {
        return None;
    }
    let SourceKind::Table(t) = &src.kind else {
        return None;
    };
    let ncols = t.columns.len();
    let rowid = WalkColumn {
        col: ncols,
        coll: Collation::Binary,
        desc: false,
    };
    let pk_walk = |desc: bool| -> Vec<WalkColumn> {
        let pk = crate::exec::without_rowid::primary_key_index(t);
        pk.columns
            .iter()
            .map_while(|ic| {
                ic.column.map(|col| WalkColumn {
                    col,
                    coll: ic.collation,
                    desc: ic.desc != desc,
                })
            })
            .collect()
    };
    match &src.access {
        Access::Scan if t.without_rowid => Some((Vec::new(), pk_walk(false), true)),
        Access::Scan => Some((Vec::new(), vec![rowid], true)),
        Access::RowidRange { reverse, .. } => Some((
            Vec::new(),
            vec![WalkColumn {
                desc: *reverse,
                ..rowid
            }],
            true,
        )),
        // One rowid: one row, in every order.
        Access::RowidEq(v) if super::access::single_valued(v) => {
            Some(((0..=ncols).collect(), Vec::new(), true))
        }
        Access::RowidEq(_) => Some((Vec::new(), vec![rowid], true)),
        Access::Index {
            index, eq, reverse, ..
        } => {
            let mut constant = Vec::new();
            let mut walk = Vec::new();
            let step = |ic: &crate::schema::IndexColumn| {
                ic.column.map(|col| WalkColumn {
                    col,
                    coll: ic.collation,
                    desc: ic.desc != *reverse,
                })
            };
            for (p, (vals, _)) in eq.iter().enumerate() {
                let Some(ic) = index.columns.get(p) else {
                    break;
                };
                if super::access::single_valued(vals) {
                    constant.extend(ic.column);
                } else {
                    match step(ic) {
                        Some(w) => walk.push(w),
                        None => return Some((constant, walk, false)),
                    }
                }
            }
            for ic in index.columns.iter().skip(eq.len()) {
                match step(ic) {
                    Some(w) => walk.push(w),
                    None => return Some((constant, walk, false)),
                }
            }
            let primary = t.without_rowid && index.root == t.root;
            if primary {
                return Some((constant, walk, true));
            }
            if t.without_rowid {
                return Some((constant, walk, false));
            }
            walk.push(WalkColumn {
                desc: *reverse,
                ..rowid
            });
            Some((constant, walk, true))
        }
        Access::AutoIndex { .. } => None,
    }
}

/// The first source's column `e` is (the rowid alias as the rowid), if it is one.
pub fn source_column(core: &CorePlan, e: &CExpr) -> Option<usize> {
    let src = core.sources.first()?;
    let SourceKind::Table(t) = &src.kind else {
        return None;
    };
    let CExpr::Col { level: 0, idx } = e else {
        return None;
    };
    let c = idx.checked_sub(src.start).filter(|c| *c < src.width)?;
    Some(if t.rowid_alias == Some(c) {
        t.columns.len()
    } else {
        c
    })
}

/// Whether the outer loop brings rows with equal `terms` (expression, collation, wanted
/// descending) together: None if not; Some(sorted), sorted when they also come in the
/// terms' order with their directions (all of them, or all reversed when `reversible`).
pub fn grouped(
    core: &CorePlan,
    terms: &[(&CExpr, Collation, bool)],
    reversible: bool,
) -> Option<bool> {
    let (constant, walk, unique) = walk(core)?;
    let ncols = match &core.sources.first()?.kind {
        SourceKind::Table(t) => t.columns.len(),
        _ => return None,
    };
    let mut need: Vec<(usize, Collation, bool)> = Vec::new();
    for (e, coll, desc) in terms {
        let col = source_column(core, e)?;
        if constant.contains(&col) {
            continue;
        }
        need.push((col, *coll, *desc));
    }
    let mut sorted = true;
    let mut flip: Option<bool> = None;
    for (i, w) in walk.iter().enumerate() {
        if need.is_empty() {
            break;
        }
        // A walk column that is not a term separates rows with equal terms.
        let p = need
            .iter()
            .position(|(c, coll, _)| *c == w.col && (*coll == w.coll || w.col == ncols))?;
        let (_, _, desc) = need.remove(p);
        let f = desc != w.desc;
        if p != 0 || flip.is_some_and(|x| x != f) || (f && !reversible) {
            sorted = false;
        }
        flip = Some(f);
        // The whole walk is a unique key: every other term is constant within its values.
        if unique && i + 1 == walk.len() {
            need.clear();
        }
    }
    need.is_empty().then_some(sorted)
}

/// The GROUP BY terms' positions in the order the outer loop brings the groups (constant
/// terms first, then as the walk meets them, then those past a unique key as written),
/// when the loop groups them; None when it does not.
pub fn walk_order(core: &CorePlan) -> Option<Vec<usize>> {
    let terms: Vec<(&CExpr, Collation, bool)> = core
        .group_by
        .iter()
        .zip(&core.group_colls)
        .map(|(g, c)| (g, *c, false))
        .collect();
    grouped(core, &terms, true)?;
    let (constant, walk, _) = walk(core)?;
    let cols: Vec<Option<usize>> = terms.iter().map(|(e, ..)| source_column(core, e)).collect();
    let mut order: Vec<usize> = (0..cols.len())
        .filter(|&i| cols[i].is_some_and(|c| constant.contains(&c)))
        .collect();
    for w in &walk {
        for (i, c) in cols.iter().enumerate() {
            if *c == Some(w.col) && !order.contains(&i) {
                order.push(i);
            }
        }
    }
    for i in 0..cols.len() {
        if !order.contains(&i) {
            order.push(i);
        }
    }
    Some(order)
}

/// How many leading `keys` (over `core`'s outputs) the outer loop yields in order, one
/// direction for all (SQLite's nOBSat, counted before a sort that finishes the rest).
pub fn ordered_prefix(core: &CorePlan, keys: &[SortKey]) -> usize {
    let Some((constant, walk, unique)) = walk(core) else {
        return 0;
    };
    let ncols = match core.sources.first().map(|s| &s.kind) {
        Some(SourceKind::Table(t)) => t.columns.len(),
        _ => return 0,
    };
    let mut n = 0;
    let mut w = 0;
    let mut flip: Option<bool> = None;
    for k in keys {
        if k.nulls_first == k.desc {
            break;
        }
        let Some(col) = core.outputs.get(k.idx).and_then(|e| source_column(core, e)) else {
            break;
        };
        if constant.contains(&col) {
            n += 1;
            continue;
        }
        let Some(step) = walk.get(w) else {
            // Past a unique key the order is total.
            if unique {
                n += 1;
                continue;
            }
            break;
        };
        if step.col != col || (step.coll != k.coll && col != ncols) {
            break;
        }
        let f = k.desc != step.desc;
        if flip.is_some_and(|x| x != f) {
            break;
        }
        flip = Some(f);
        w += 1;
        n += 1;
    }
    n
}

/// Whether `keys` (an ORDER BY over `core`'s outputs) is the GROUP BY itself, term for
/// term with the same collation and the default NULLs placement (SQLite's orderByGrp),
/// and ascending throughout when `ascending`.
pub fn order_by_is_group_by(core: &CorePlan, keys: &[SortKey], ascending: bool) -> bool {
    if core.group_by.is_empty() || keys.len() != core.group_by.len() {
        return false;
    }
    keys.iter()
        .zip(&core.group_by)
        .enumerate()
        .all(|(i, (k, g))| {
            k.nulls_first != k.desc
                && !(ascending && k.desc)
                && core.group_colls.get(i) == Some(&k.coll)
                && core
                    .outputs
                    .get(k.idx)
                    .is_some_and(|o| format!("{o:?}") == format!("{g:?}"))
        })
}

/// Whether a DISTINCT query's ORDER BY is its result columns as they are, in order (SQLite
/// then runs the DISTINCT as a GROUP BY whose order the ORDER BY needs no sort for).
pub fn order_by_is_distinct(core: &CorePlan, keys: &[SortKey]) -> bool {
    core.distinct
        && !core.is_agg
        && keys.len() == core.n_visible
        && keys.iter().enumerate().all(|(i, k)| {
            // The key may read a hidden copy of the result column.
            let same = k.idx == i
                || matches!((core.outputs.get(k.idx), core.outputs.get(i)),
                    (Some(a), Some(b)) if format!("{a:?}") == format!("{b:?}"));
            same && !k.desc && k.nulls_first && core.distinct_colls.get(i) == Some(&k.coll)
        })
}

/// Whether the GROUP BY needs SQLite's sorter (`USE TEMP B-TREE FOR GROUP BY`): the outer
/// loop does not bring its groups together.
pub fn group_by_sorts(core: &CorePlan) -> bool {
    let terms: Vec<(&CExpr, Collation, bool)> = core
        .group_by
        .iter()
        .zip(&core.group_colls)
        .map(|(g, c)| (g, *c, false))
        .collect();
    grouped(core, &terms, true).is_none()
}

/// Whether an ORDER BY equal to the GROUP BY is already met by the groups' order: the
/// sorter's, or the loop's own when it yields the GROUP BY order exactly.
pub fn order_by_groups(core: &CorePlan, keys: &[SortKey]) -> bool {
    if !order_by_is_group_by(core, keys, false) || core.distinct || !core.windows.is_empty() {
        return false;
    }
    if group_by_sorts(core) {
        return true;
    }
    let terms: Vec<(&CExpr, Collation, bool)> = core
        .group_by
        .iter()
        .zip(keys)
        .map(|(g, k)| (g, k.coll, k.desc))
        .collect();
    grouped(core, &terms, true) == Some(true)
}
