//! Integer filter terms: a WHERE term comparing integer arithmetic over columns,
//! constants and parameters (`5+z2.b=z1.b`, `(b&1)==(a&1)`, `b BETWEEN 10 AND 20`),
//! compiled once per scan into a tree that computes on unboxed `i64`s, where
//! `Exec::eval` builds a `Result<Value>` per node per row.
//!
//! Invariants:
//! - A compiled term answers only when every operand it reads is an INTEGER and no
//!   arithmetic overflows; its answer is then the one `Exec::eval` gives. Two integers are
//!   compared as integers by every affinity except TEXT (such comparisons are not
//!   compiled), and no collation applies to numbers. Anything else (NULL, REAL, TEXT,
//!   BLOB, an overflow, which SQLite turns into a REAL) answers `None`, and the caller
//!   evaluates the term in full.
//! - Only `+ - * & |` are compiled: their integer results are exact two's-complement
//!   arithmetic in SQLite too. Division, remainder and shifts have special cases (by zero,
//!   by negative or large counts) and stay with the general evaluator.
//!
//! Measured (callgrind, speedtest1 test 320, `5+z2.b=z1.b` per inner row): see
//! BENCHMARKS.md, "Per-row cost of scans and expressions (eval branch)".

use super::Frame;
use crate::parse::ast::BinaryOp;
use crate::plan::CExpr;
use crate::value::{Affinity, Value};

#[derive(Debug, Clone, Copy)]
enum IntOp {
    Add,
    Sub,
    Mul,
    BitAnd,
    BitOr,
}

impl IntOp {
    /// Whether `a op b == b op a`.
    fn commutes(self) -> bool {
        !matches!(self, IntOp::Sub)
    }

    /// `a op b`; `None` on overflow.
    #[inline]
    fn apply(self, a: i64, b: i64) -> Option<i64> {
        match self {
            IntOp::Add => a.checked_add(b),
            IntOp::Sub => a.checked_sub(b),
            IntOp::Mul => a.checked_mul(b),
            IntOp::BitAnd => Some(a & b),
            IntOp::BitOr => Some(a | b),
        }
    }
}

#[derive(Debug)]
enum IntExpr {
    Col {
        level: usize,
        idx: usize,
    },
    Const(i64),
    /// An operand bound to something other than an INTEGER (`IntTerm::bind`: a NULL,
    /// REAL, TEXT or BLOB value, or a constant that overflowed): the term never answers.
    Never,
    Op(IntOp, Box<IntExpr>, Box<IntExpr>),
    /// `e op c`: an operation on a constant, which `bind` makes of one (a constant left
    /// operand of a commuting operator moves right), evaluated with one recursive step
    /// less per row.
    OpConst(IntOp, Box<IntExpr>, i64),
}

/// What [`IntTerm::bind`] makes of a column.
pub enum Operand {
    /// A value fixed for every row the bound term sees.
    Int(i64),
    /// A value fixed for every row that is not an INTEGER.
    NotInt,
    /// Still read per row, at level 0, position `idx` of what the bound term is tested on.
    Col(usize),
}

impl IntExpr {
    fn compile(e: &CExpr, params: &[Value]) -> Option<IntExpr> {
        Some(match e {
            CExpr::Col { level, idx } => IntExpr::Col {
                level: *level,
                idx: *idx,
            },
            CExpr::Lit(Value::Integer(i)) => IntExpr::Const(*i),
            // Parameters are fixed for the whole execution.
            CExpr::Param(i) => match params.get(i.checked_sub(1)?) {
                Some(Value::Integer(v)) => IntExpr::Const(*v),
                _ => return None,
            },
            CExpr::Binary { op, l, r, .. } => {
                let op = match op {
                    BinaryOp::Add => IntOp::Add,
                    BinaryOp::Sub => IntOp::Sub,
                    BinaryOp::Mul => IntOp::Mul,
                    BinaryOp::BitAnd => IntOp::BitAnd,
                    BinaryOp::BitOr => IntOp::BitOr,
                    _ => return None,
                };
                let (l, r) = (Self::compile(l, params)?, Self::compile(r, params)?);
                IntExpr::Op(op, Box::new(l), Box::new(r))
            }
            _ => return None,
        })
    }

    /// This expression with each column resolved by `resolve` and the constant
    /// subtrees folded (an overflow folds to `Never`, as `eval` would answer `None`).
    fn bind(&self, resolve: &mut dyn FnMut(usize, usize) -> Operand) -> IntExpr {
        match self {
            IntExpr::Col { level, idx } => match resolve(*level, *idx) {
                Operand::Int(i) => IntExpr::Const(i),
                Operand::NotInt => IntExpr::Never,
                Operand::Col(idx) => IntExpr::Col { level: 0, idx },
            },
            IntExpr::Const(c) => IntExpr::Const(*c),
            IntExpr::Never => IntExpr::Never,
            IntExpr::Op(op, a, b) => match (a.bind(resolve), b.bind(resolve)) {
                (IntExpr::Const(a), IntExpr::Const(b)) => {
                    op.apply(a, b).map_or(IntExpr::Never, IntExpr::Const)
                }
                (IntExpr::Never, _) | (_, IntExpr::Never) => IntExpr::Never,
                (a, IntExpr::Const(c)) => IntExpr::OpConst(*op, Box::new(a), c),
                (IntExpr::Const(c), b) if op.commutes() => IntExpr::OpConst(*op, Box::new(b), c),
                (a, b) => IntExpr::Op(*op, Box::new(a), Box::new(b)),
            },
            IntExpr::OpConst(op, e, c) => match e.bind(resolve) {
                IntExpr::Const(a) => op.apply(a, *c).map_or(IntExpr::Never, IntExpr::Const),
                IntExpr::Never => IntExpr::Never,
                e => IntExpr::OpConst(*op, Box::new(e), *c),
            },
        }
    }

    #[inline]
    fn eval<C: IntCols + ?Sized>(&self, f: &C) -> Option<i64> {
        match self {
            IntExpr::Col { level, idx } => f.int_col(*level, *idx),
            IntExpr::Const(c) => Some(*c),
            IntExpr::Never => None,
            IntExpr::Op(op, a, b) => op.apply(a.eval(f)?, b.eval(f)?),
            IntExpr::OpConst(op, e, c) => op.apply(e.eval(f)?, *c),
        }
    }
}

/// Where a compiled term reads its operands: a column (`level` frames up, position `idx`
/// in that frame's row) as an INTEGER, `None` when it holds anything else.
pub trait IntCols {
    fn int_col(&self, level: usize, idx: usize) -> Option<i64>;
}

impl IntCols for Frame<'_> {
    #[inline]
    fn int_col(&self, level: usize, idx: usize) -> Option<i64> {
        let mut fr = self;
        for _ in 0..level {
            fr = fr.parent?;
        }
        match fr.row.get(idx)? {
            Value::Integer(i) => Some(*i),
            _ => None,
        }
    }
}

/// One compiled WHERE term (see the module invariants).
#[derive(Debug)]
pub struct IntTerm(Shape);

#[derive(Debug)]
enum Shape {
    Cmp {
        op: BinaryOp,
        l: IntExpr,
        r: IntExpr,
    },
    /// `e op c`, as `bind` makes a comparison with a constant side (a constant left side
    /// moves right, the operator mirrored).
    CmpConst { op: BinaryOp, e: IntExpr, c: i64 },
    Between {
        not: bool,
        e: IntExpr,
        lo: IntExpr,
        hi: IntExpr,
    },
}

impl IntTerm {
    /// The term compiled, or `None` when its shape is not one of the compiled ones.
    pub fn compile(e: &CExpr, params: &[Value]) -> Option<IntTerm> {
        let text = Some(Affinity::Text);
        match e {
            CExpr::Binary {
                op:
                    op @ (BinaryOp::Eq
                    | BinaryOp::Ne
                    | BinaryOp::Lt
                    | BinaryOp::Le
                    | BinaryOp::Gt
                    | BinaryOp::Ge),
                l,
                r,
                laff,
                raff,
                ..
            } if *laff != text && *raff != text => Some(IntTerm(Shape::Cmp {
                op: *op,
                l: IntExpr::compile(l, params)?,
                r: IntExpr::compile(r, params)?,
            })),
            CExpr::Between {
                e,
                not,
                lo,
                hi,
                eaff,
                loaff,
                hiaff,
                ..
            } if *eaff != text && *loaff != text && *hiaff != text => {
                Some(IntTerm(Shape::Between {
                    not: *not,
                    e: IntExpr::compile(e, params)?,
                    lo: IntExpr::compile(lo, params)?,
                    hi: IntExpr::compile(hi, params)?,
                }))
            }
            _ => None,
        }
    }

    /// The term with each column resolved by `resolve` (see [`Operand`]): a scan binds
    /// the columns of other sources and enclosing queries, fixed while it runs, once
    /// instead of reading them per row, and maps its own columns to record positions.
    pub fn bind(&self, resolve: &mut dyn FnMut(usize, usize) -> Operand) -> IntTerm {
        IntTerm(match &self.0 {
            Shape::Cmp { op, l, r } => match (l.bind(resolve), r.bind(resolve)) {
                (e, IntExpr::Const(c)) => Shape::CmpConst { op: *op, e, c },
                (IntExpr::Const(c), e) => Shape::CmpConst {
                    op: mirrored(*op),
                    e,
                    c,
                },
                (l, r) => Shape::Cmp { op: *op, l, r },
            },
            Shape::CmpConst { op, e, c } => Shape::CmpConst {
                op: *op,
                e: e.bind(resolve),
                c: *c,
            },
            Shape::Between { not, e, lo, hi } => Shape::Between {
                not: *not,
                e: e.bind(resolve),
                lo: lo.bind(resolve),
                hi: hi.bind(resolve),
            },
        })
    }

    /// Whether the term holds for the row of `f`; `None` when an operand is not an
    /// integer or the arithmetic overflows (evaluate the term in full then).
    #[inline]
    pub fn test(&self, f: &Frame) -> Option<bool> {
        self.test_on(f)
    }

    /// `test` with the operands read from `f` (a frame, or a record not yet decoded).
    #[inline]
    pub fn test_on<C: IntCols + ?Sized>(&self, f: &C) -> Option<bool> {
        match &self.0 {
            Shape::Cmp { op, l, r } => compare(*op, l.eval(f)?, r.eval(f)?),
            Shape::CmpConst { op, e, c } => compare(*op, e.eval(f)?, *c),
            Shape::Between { not, e, lo, hi } => {
                let (x, l, h) = (e.eval(f)?, lo.eval(f)?, hi.eval(f)?);
                Some((l <= x && x <= h) != *not)
            }
        }
    }
}

/// `a op b` for a comparison operator.
#[inline]
fn compare(op: BinaryOp, a: i64, b: i64) -> Option<bool> {
    Some(match op {
        BinaryOp::Eq => a == b,
        BinaryOp::Ne => a != b,
        BinaryOp::Lt => a < b,
        BinaryOp::Le => a <= b,
        BinaryOp::Gt => a > b,
        BinaryOp::Ge => a >= b,
        _ => return None,
    })
}

/// The operator `op'` with `a op b == b op' a`.
fn mirrored(op: BinaryOp) -> BinaryOp {
    match op {
        BinaryOp::Lt => BinaryOp::Gt,
        BinaryOp::Le => BinaryOp::Ge,
        BinaryOp::Gt => BinaryOp::Lt,
        BinaryOp::Ge => BinaryOp::Le,
        op => op,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(idx: usize) -> Box<CExpr> {
        Box::new(CExpr::Col { level: 0, idx })
    }

    fn bin(op: BinaryOp, l: Box<CExpr>, r: Box<CExpr>) -> CExpr {
        CExpr::Binary {
            op,
            l,
            r,
            coll: crate::collation::Collation::Binary,
            laff: None,
            raff: Some(Affinity::Integer),
        }
    }

    #[test]
    fn integers_compare_and_anything_else_falls_back() {
        // 5 + c0 = c1
        let sum = bin(
            BinaryOp::Add,
            Box::new(CExpr::Lit(Value::Integer(5))),
            col(0),
        );
        let t = IntTerm::compile(&bin(BinaryOp::Eq, Box::new(sum), col(1)), &[]).unwrap();
        let row = [Value::Integer(2), Value::Integer(7)];
        assert_eq!(t.test(&Frame::new(&row, None)), Some(true));
        let row = [Value::Integer(3), Value::Integer(7)];
        assert_eq!(t.test(&Frame::new(&row, None)), Some(false));
        // NULL, REAL and TEXT operands and overflow are the general evaluator's.
        for v in [
            Value::Null,
            Value::Real(2.0),
            Value::text("2"),
            Value::Integer(i64::MAX),
        ] {
            let row = [v, Value::Integer(7)];
            assert_eq!(t.test(&Frame::new(&row, None)), None);
        }
    }

    #[test]
    fn text_affinity_and_other_operators_are_not_compiled() {
        let mut e = bin(BinaryOp::Eq, col(0), col(1));
        if let CExpr::Binary { laff, .. } = &mut e {
            *laff = Some(Affinity::Text);
        }
        assert!(IntTerm::compile(&e, &[]).is_none());
        let div = bin(BinaryOp::Div, col(0), col(1));
        assert!(IntTerm::compile(&bin(BinaryOp::Eq, Box::new(div), col(1)), &[]).is_none());
        let shl = bin(BinaryOp::Shl, col(0), col(1));
        assert!(IntTerm::compile(&bin(BinaryOp::Lt, Box::new(shl), col(1)), &[]).is_none());
    }
}
