//! Which row of a group an aggregate query's bare columns come from (lang_select.html,
//! "bare columns in an aggregate query"): `SELECT a, max(b) FROM t GROUP BY c` shows the `a`
//! of the row holding the maximum; with no min()/max(), the group's first row.
//!
//! This reproduces SQLite 3.50's code generation (updateAccumulator in select.c) step by
//! step, so that the chosen row matches for the same visiting order:
//! - a "use flag" (regAcc) is 0 on a group's first row and 1 after; it exists for every
//!   GROUP BY query and for a plain aggregate query with no unfiltered min()/max();
//! - a "magnet" register (regHit) exists when any min()/max() does: each min()/max() step
//!   clears it, then sets it when the row is not the new extreme; a min()/max() with a FILTER
//!   first copies the use flag into it, so a filtered-out first row still loads;
//! - after all aggregates stepped, the row is loaded into the bare columns unless the
//!   magnet (or, without one, the use flag) is set.
//!
//! With several min()/max() calls the last one stepped decides, as in SQLite. The magnet
//! lives per group here; SQLite's single register gives the same answers because its groups
//! arrive contiguously and every row of a GROUP BY query resets the magnet before reading it
//! (a DISTINCT duplicate, which skips the reset, cannot be a group's first row).

use crate::plan::AggCall;

/// The registers SQLite allocates for one aggregate query.
#[derive(Debug, Clone)]
pub(super) struct BareRule {
    has_use_flag: bool,
    has_magnet: bool,
    /// Per aggregate call: whether it is a min()/max() that moves the magnet. SQLite
    /// computes identical calls once (`min(d), max(d), min(d)` steps min then max), so a
    /// repeat of an earlier call does not.
    moves_magnet: Vec<bool>,
}

impl BareRule {
    pub(super) fn new(aggs: &[AggCall], grouped: bool) -> BareRule {
        let unfiltered_min_max = aggs
            .iter()
            .any(|a| a.def.is_min_max_aggregate() && a.filter.is_none());
        let mut moves_magnet: Vec<bool> =
            aggs.iter().map(|a| a.def.is_min_max_aggregate()).collect();
        if moves_magnet.iter().filter(|m| **m).count() > 1 {
            // The plan's expressions have no equality of their own; their printed form is
            // one (computed once per run, and only with several min()/max()).
            let shape = |a: &AggCall| format!("{:?}", (a.def, &a.args, a.distinct, &a.filter));
            let shapes: Vec<String> = aggs.iter().map(shape).collect();
            for i in 0..aggs.len() {
                if moves_magnet[i] && shapes[..i].contains(&shapes[i]) {
                    moves_magnet[i] = false;
                }
            }
        }
        BareRule {
            has_use_flag: grouped || !unfiltered_min_max,
            has_magnet: moves_magnet.iter().any(|m| *m),
            moves_magnet,
        }
    }

    /// Whether aggregate call `i` is a min()/max() that moves the magnet.
    pub(super) fn moves_magnet(&self, i: usize) -> bool {
        self.moves_magnet.get(i).copied().unwrap_or(false)
    }
}

/// One group's registers: the use flag and the magnet (`None` is a register never written,
/// NULL in SQLite, which reads as false).
#[derive(Debug, Clone, Default)]
pub(super) struct BareState {
    use_flag: bool,
    magnet: Option<bool>,
}

impl BareState {
    /// Before a min()/max() with a FILTER is tested: the magnet takes the use flag.
    pub(super) fn before_filter(&mut self, rule: &BareRule) {
        if rule.has_use_flag {
            self.magnet = Some(self.use_flag);
        }
    }

    /// After a min()/max() stepped; `hit` is the accumulator's
    /// [`crate::func::aggregate::Aggregate::last_step_magnet`].
    pub(super) fn after_min_max(&mut self, hit: Option<bool>) {
        if let Some(h) = hit {
            self.magnet = Some(!h);
        }
    }

    /// Ends a row: whether it becomes the group's bare-column row.
    pub(super) fn finish_row(&mut self, rule: &BareRule) -> bool {
        let load = if rule.has_magnet {
            self.magnet != Some(true)
        } else if rule.has_use_flag {
            !self.use_flag
        } else {
            true
        };
        self.use_flag = true;
        load
    }
}
