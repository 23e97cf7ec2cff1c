//! WHERE terms tested on a row's record bytes, before the row is decoded: a pushed-down
//! scan (`pushdown.rs`) first hands each record to a [`RecordFilter`], which reads the
//! fields its terms need straight from the page (`record::field`: a header walk up to the
//! field, no `Value` built) and answers for the common shapes:
//! - integer terms (`5+z2.b=z1.b`, `b BETWEEN 10 AND 20`; `int_term.rs`) on INTEGER fields;
//! - `col [NOT] LIKE 'pattern'` / `col [NOT] GLOB 'pattern'` with a constant pattern on a
//!   TEXT field, the pattern compiled once per scan (no per-thread cache lookup per row).
//!
//! A rejected row is never decoded: no UTF-8 check, no `Arc<str>` for its TEXT columns.
//!
//! Invariants:
//! - The answer, when there is one, is the one `Exec::is_true` gives for the decoded row.
//!   Terms are tried in their order and the filter answers only while each term before has
//!   answered `true`; the first term that cannot answer (not compiled, an operand that is
//!   not the expected type, a short or malformed record) makes the whole filter answer
//!   `None`, and the caller decodes the row and evaluates every term the general way (so an
//!   error a term raises, or a corrupt record, is reported exactly as before).
//! - An integer term's columns outside the scanned source (earlier sources of the join,
//!   enclosing queries) are read once, when the filter is compiled for a scan
//!   (`IntTerm::bind`): while a level scans, the levels before it and the enclosing rows
//!   do not move, and a level's terms read no later source, so each such read per row
//!   would give that same value.
//! - A record field is what the decoded slot would hold: the rowid and its alias column
//!   read the rowid; a field of REAL affinity holding an integer (which the decoded row
//!   turns into a REAL) is not an integer operand; a field past the record's end (a default
//!   after ADD COLUMN) answers `None`.
//! - LIKE on bytes: without validating UTF-8 only for patterns made of `%` and ASCII
//!   literals (`Pattern::bytewise`), where raw bytes and the lossily decoded text match
//!   alike; any other pattern needs valid UTF-8, otherwise `None`.
//!
//! Measured (callgrind, speedtest1 tests 320, 130, 140, 142, 145): see BENCHMARKS.md,
//! "Per-row cost of full scans (scanloop branch)".

use crate::exec::eval::{Frame, IntCols, IntTerm, Operand};
use crate::func::like::{Pattern, LIKE_PATTERN_MAX_BYTES};
use crate::parse::ast::LikeOp;
use crate::plan::CExpr;
use crate::value::Value;
use parlite_storage::record::{self, ValueRef};

/// A source's filter terms compiled to run on record bytes (see the module invariants).
pub(super) struct RecordFilter {
    /// One per filter term, in order; `None`: not compiled.
    terms: Vec<Option<RecordTerm>>,
}

enum RecordTerm {
    Int(IntTerm),
    Like {
        /// Record position of the tested column.
        field: usize,
        pattern: Pattern,
        not: bool,
    },
}

/// What a record filter reads: the record and its rowid. A compiled integer term reads
/// only these: its columns are bound when the filter is compiled (`RecordFilter::compile`),
/// to constants or to record positions, `ncols` standing for the rowid.
pub(super) struct RecordRow<'a> {
    pub rec: &'a [u8],
    pub rowid: i64,
    /// The source's column count.
    pub ncols: usize,
}

impl IntCols for RecordRow<'_> {
    /// Field `k` of the record (`level` is always 0 in a bound term).
    #[inline]
    fn int_col(&self, _level: usize, k: usize) -> Option<i64> {
        if k == self.ncols {
            return Some(self.rowid);
        }
        match record::field(self.rec, k)? {
            ValueRef::Integer(i) => Some(i),
            _ => None,
        }
    }
}

impl RecordFilter {
    /// `filters` (of the source whose slots start at `start`, `ncols` columns then the
    /// rowid; `reals`: its columns of REAL affinity) compiled for one scan, during which
    /// every other column `frame` reaches (earlier sources, enclosing queries) keeps its
    /// value: integer terms read those once, here, not per row (a correlated subquery's
    /// `5+z2.b=z1.b` read `z1.b` through the parent frame per row of `z2`); `None` when
    /// no term compiles (nothing to gain).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn compile(
        filters: &[CExpr],
        start: usize,
        ncols: usize,
        rowid_alias: Option<usize>,
        reals: &[usize],
        frame: &Frame,
        params: &[Value],
        case_sensitive_like: bool,
    ) -> Option<RecordFilter> {
        let mut resolve = |level: usize, idx: usize| match idx.checked_sub(start) {
            Some(k) if level == 0 && k <= ncols => {
                if k == ncols || Some(k) == rowid_alias {
                    Operand::Col(ncols)
                } else if reals.contains(&k) {
                    // The decoded row turns an integer stored there into a REAL.
                    Operand::NotInt
                } else {
                    Operand::Col(k)
                }
            }
            _ => frame
                .int_col(level, idx)
                .map_or(Operand::NotInt, Operand::Int),
        };
        let terms: Vec<Option<RecordTerm>> = filters
            .iter()
            .map(|t| {
                if let Some(i) = IntTerm::compile(t, params) {
                    return Some(RecordTerm::Int(i.bind(&mut resolve)));
                }
                compile_like(t, start, ncols, rowid_alias, params, case_sensitive_like)
            })
            .collect();
        // Only a leading compiled term can ever answer.
        matches!(terms.first(), Some(Some(_))).then_some(RecordFilter { terms })
    }

    /// `Some(false)`: a term rejects the row; `Some(true)`: every term holds; `None`: decode
    /// the row and evaluate the terms in full.
    #[inline]
    pub(super) fn test(&self, r: &RecordRow<'_>) -> Option<bool> {
        for t in &self.terms {
            let holds = match t.as_ref()? {
                RecordTerm::Int(i) => i.test_on(r)?,
                RecordTerm::Like {
                    field,
                    pattern,
                    not,
                } => match record::field(r.rec, *field)? {
                    // NULL LIKE x and NULL NOT LIKE x are both NULL: the row fails.
                    ValueRef::Null => false,
                    ValueRef::Text(b) => {
                        if !pattern.bytewise() && std::str::from_utf8(b).is_err() {
                            return None;
                        }
                        pattern.matches(b) != *not
                    }
                    _ => return None,
                },
            };
            if !holds {
                return Some(false);
            }
        }
        Some(true)
    }
}

/// `col [NOT] LIKE 'text'` (no ESCAPE) or `col [NOT] GLOB 'text'` on one of the source's
/// stored columns.
fn compile_like(
    t: &CExpr,
    start: usize,
    ncols: usize,
    rowid_alias: Option<usize>,
    params: &[Value],
    case_sensitive_like: bool,
) -> Option<RecordTerm> {
    let CExpr::Like {
        op,
        not,
        l,
        r,
        esc: None,
    } = t
    else {
        return None;
    };
    let CExpr::Col { level: 0, idx } = **l else {
        return None;
    };
    let field = idx.checked_sub(start).filter(|k| *k < ncols)?;
    if Some(field) == rowid_alias {
        return None;
    }
    let pat = match &**r {
        CExpr::Lit(v) => v,
        CExpr::Param(i) => params.get(i.checked_sub(1)?)?,
        _ => return None,
    };
    let Value::Text(p) = pat else {
        return None;
    };
    if p.len() > LIKE_PATTERN_MAX_BYTES {
        return None;
    }
    let pattern = match op {
        LikeOp::Like => Pattern::like(p.as_bytes(), None, case_sensitive_like),
        LikeOp::Glob => Pattern::glob(p.as_bytes()),
        LikeOp::Regexp | LikeOp::Match => return None,
    };
    Some(RecordTerm::Like {
        field,
        pattern,
        not: *not,
    })
}
