//! Plain EXPLAIN: a listing, in SQLite's eight columns (`addr`, `opcode`, `p1`, `p2`, `p3`,
//! `p4`, `p5`, `comment`), of the steps parlite takes to run a statement.
//!
//! parlite has no bytecode: it runs a bound plan (`plan::SelectPlan`) with operators. This
//! module walks that plan — the same one the statement would run, bound by the same binder —
//! and writes one row per step, named with SQLite's opcode where the step is the same
//! operation (OpenRead, Rewind, SeekGE, IdxGT, DeferredSeek, Column, ResultRow, Next,
//! SorterInsert, AggStep, Insert, Delete, Program for a trigger, ...), table and index root
//! pages in p2 and the database in p3 as SQLite does. Jump targets (p2 of Rewind, Seek*,
//! Idx*, Next, IfNot ...) are addresses in the listing. The listing is a description, not a
//! program anything runs: its register numbers and loop shape follow parlite's plan, and it
//! differs from SQLite's own (README, Known differences).
//!
//! Invariants:
//! - Explaining never executes: nothing here writes to the store or runs a query; the
//!   statement is only bound (so its errors are the statement's own: `no such table`,
//!   `no such column` ...).
//! - Every listing starts with `Init` (p2: the address of the `Transaction` steps at the
//!   end), ends with `Goto 0 1`, and every jump target is an address of the listing.

use crate::parse::ast::{self, ObjectKind, Stmt, TriggerEvent, TriggerTime};
use crate::plan::{
    Access, Binder, CExpr, CorePlan, JoinType, SelectPlan, Source, SourceKind, SubPlan,
};
use crate::schema::Table;
use crate::value::{Result, SqlError, Value};

use super::store::{self, Row};
use super::Engine;

/// The result column names of plain EXPLAIN, as sqlite3 reports them.
pub const COLUMNS: [&str; 8] = ["addr", "opcode", "p1", "p2", "p3", "p4", "p5", "comment"];

/// One step of the listing.
struct Op {
    opcode: &'static str,
    p1: i64,
    p2: i64,
    p3: i64,
    p4: Option<String>,
    p5: i64,
    comment: Option<String>,
}

/// Where a select's rows go.
#[derive(Clone, Copy)]
enum Sink {
    /// Returned to the caller (`ResultRow`).
    Result,
    /// Appended to an ephemeral table or index (a materialized subquery, an IN list, the
    /// rows an UPDATE/DELETE collects before it writes).
    Ephemeral(i64),
    /// Into a sorter with this many columns (ORDER BY).
    Sorter(i64),
    /// The first column into one register (a scalar subquery).
    Scalar(i64),
    /// Sets a register to 1 (EXISTS).
    Exists(i64),
}

/// One loop (or one seek) of a join, while its body is written.
struct Level {
    cursor: i64,
    start: usize,
    ncols: usize,
    /// For a covering index read in place of its table: each table column's position in
    /// the index key (the rowid is the last).
    index_map: Option<Vec<Option<usize>>>,
    /// The opcode that advances the loop (`Next`, `Prev`, `VNext`, `SorterNext`), its
    /// cursor and the address it jumps back to; None for a single seek.
    next: Option<(&'static str, i64, i64)>,
    /// Steps that jump to this level's continue (a failed filter).
    to_continue: Vec<usize>,
    /// Steps that jump past the loop (an empty table, a failed range check).
    to_end: Vec<usize>,
}

/// A source of a select's row, as `Col { level, idx }` reads it.
struct FrameSource {
    start: usize,
    cursor: i64,
    ncols: usize,
    index_map: Option<Vec<Option<usize>>>,
}

struct Program<'s> {
    ops: Vec<Op>,
    cursors: i64,
    regs: i64,
    /// Databases read (false) or written (true), for the `Transaction` steps.
    dbs: Vec<(i64, bool)>,
    /// The join levels of the enclosing selects, innermost last (for `Col { level }`).
    frames: Vec<Vec<FrameSource>>,
    schema: &'s crate::schema::Schema,
}

/// (page number, SQLite database index) of a tagged root page.
fn page_db(root: u32) -> (i64, i64) {
    if root & store::TEMP_ROOT_BIT != 0 {
        return (i64::from(root & !store::TEMP_ROOT_BIT), 1);
    }
    match store::attached_slot(root) {
        Some(slot) => (i64::from(root & !store::ATTACHED_MASK), slot as i64 + 2),
        None => (i64::from(root), 0),
    }
}

impl<'s> Program<'s> {
    fn new(schema: &'s crate::schema::Schema) -> Self {
        let mut p = Program {
            ops: Vec::new(),
            cursors: 0,
            regs: 0,
            dbs: Vec::new(),
            frames: Vec::new(),
            schema,
        };
        p.op("Init", 0, 0, 0);
        p
    }

    fn here(&self) -> i64 {
        self.ops.len() as i64
    }

    fn op(&mut self, opcode: &'static str, p1: i64, p2: i64, p3: i64) -> usize {
        self.ops.push(Op {
            opcode,
            p1,
            p2,
            p3,
            p4: None,
            p5: 0,
            comment: None,
        });
        self.ops.len() - 1
    }

    fn op4(&mut self, opcode: &'static str, p1: i64, p2: i64, p3: i64, p4: String) -> usize {
        let a = self.op(opcode, p1, p2, p3);
        self.ops[a].p4 = Some(p4);
        a
    }

    fn note(&mut self, addr: usize, comment: impl Into<String>) {
        self.ops[addr].comment = Some(comment.into());
    }

    fn p5(&mut self, addr: usize, p5: i64) {
        self.ops[addr].p5 = p5;
    }

    /// Points the jump of step `addr` (its p2) at the next step written.
    fn land(&mut self, addrs: &[usize]) {
        let here = self.here();
        for &a in addrs {
            self.ops[a].p2 = here;
        }
    }

    fn cursor(&mut self) -> i64 {
        self.cursors += 1;
        self.cursors - 1
    }

    fn regs(&mut self, n: usize) -> i64 {
        let first = self.regs + 1;
        self.regs += n.max(1) as i64;
        first
    }

    fn uses_db(&mut self, db: i64, write: bool) {
        match self.dbs.iter_mut().find(|(d, _)| *d == db) {
            Some(e) => e.1 |= write,
            None => self.dbs.push((db, write)),
        }
    }

    /// Opens a cursor on a table (or index) b-tree.
    fn open(&mut self, write: bool, root: u32, ncols: usize, name: &str) -> i64 {
        let c = self.cursor();
        let (page, db) = page_db(root);
        self.uses_db(db, write);
        let a = self.op4(
            if write { "OpenWrite" } else { "OpenRead" },
            c,
            page,
            db,
            ncols.to_string(),
        );
        self.note(a, name.to_string());
        c
    }

    /// Closes the listing: `Halt`, the `Transaction` steps `Init` jumps to, `Goto 0 1`.
    fn finish(mut self) -> Vec<Row> {
        self.op("Halt", 0, 0, 0);
        self.ops[0].p2 = self.here();
        let cookie = i64::from(self.schema.cookie);
        for (db, write) in std::mem::take(&mut self.dbs) {
            let a = self.op4("Transaction", db, i64::from(write), cookie, "0".into());
            self.p5(a, 1);
        }
        self.op("Goto", 0, 1, 0);
        self.ops
            .into_iter()
            .enumerate()
            .map(|(addr, o)| {
                vec![
                    Value::Integer(addr as i64),
                    Value::text(o.opcode),
                    Value::Integer(o.p1),
                    Value::Integer(o.p2),
                    Value::Integer(o.p3),
                    o.p4.map_or(Value::Null, |s| Value::text(s.as_str())),
                    Value::Integer(o.p5),
                    o.comment.map_or(Value::Null, |s| Value::text(s.as_str())),
                ]
            })
            .collect()
    }

    // ---- expressions ------------------------------------------------------------------

    /// Writes the steps that compute `e` into register `target`.
    fn expr(&mut self, e: &CExpr, target: i64) {
        match e {
            CExpr::Lit(v) => {
                match v {
                    Value::Null => self.op("Null", 0, target, 0),
                    Value::Integer(i) if i32::try_from(*i).is_ok() => {
                        self.op("Integer", *i, target, 0)
                    }
                    Value::Integer(i) => self.op4("Int64", 0, target, 0, i.to_string()),
                    Value::Real(r) => self.op4("Real", 0, target, 0, r.to_string()),
                    Value::Text(t) => self.op4("String8", 0, target, 0, t.to_string()),
                    Value::Blob(b) => self.op4("Blob", b.len() as i64, target, 0, String::new()),
                };
            }
            CExpr::Param(i) => {
                self.op("Variable", *i as i64 + 1, target, 0);
            }
            CExpr::Col { level, idx } => self.column(*level, *idx, target),
            CExpr::Unary(op, x) => {
                self.expr(x, target);
                let name = match op {
                    ast::UnaryOp::Neg => "Subtract",
                    ast::UnaryOp::Plus => return,
                    ast::UnaryOp::BitNot => "BitNot",
                    ast::UnaryOp::Not => "Not",
                };
                self.op(name, target, target, 0);
            }
            CExpr::Binary { op, l, r, .. } => {
                let rl = self.regs(2);
                self.expr(l, rl);
                self.expr(r, rl + 1);
                use ast::BinaryOp as B;
                let (name, compare) = match op {
                    B::Or => ("Or", false),
                    B::And => ("And", false),
                    B::Eq | B::Is => ("Eq", true),
                    B::Ne | B::IsNot => ("Ne", true),
                    B::Lt => ("Lt", true),
                    B::Le => ("Le", true),
                    B::Gt => ("Gt", true),
                    B::Ge => ("Ge", true),
                    B::BitAnd => ("BitAnd", false),
                    B::BitOr => ("BitOr", false),
                    B::Shl => ("ShiftLeft", false),
                    B::Shr => ("ShiftRight", false),
                    B::Add => ("Add", false),
                    B::Sub => ("Subtract", false),
                    B::Mul => ("Multiply", false),
                    B::Div => ("Divide", false),
                    B::Rem => ("Remainder", false),
                    B::Concat => ("Concat", false),
                    B::Arrow | B::Arrow2 => {
                        let a = self.op4("Function", 0, rl, target, "->".into());
                        self.p5(a, 2);
                        return;
                    }
                };
                if compare {
                    // The comparison's result stored in p2 (SQLite's SQLITE_STOREP2).
                    let a = self.op(name, rl + 1, target, rl);
                    self.p5(a, 0x20);
                } else {
                    self.op(name, rl + 1, rl, target);
                }
            }
            CExpr::Like { op, l, r, esc, .. } => {
                let n = if esc.is_some() { 3 } else { 2 };
                let first = self.regs(n);
                self.expr(r, first);
                self.expr(l, first + 1);
                if let Some(x) = esc {
                    self.expr(x, first + 2);
                }
                let name = match op {
                    ast::LikeOp::Like => "like",
                    ast::LikeOp::Glob => "glob",
                    ast::LikeOp::Regexp => "regexp",
                    ast::LikeOp::Match => "match",
                };
                let a = self.op4("Function", 0, first, target, name.into());
                self.p5(a, n as i64);
            }
            CExpr::Between { e, lo, hi, .. } => {
                let r = self.regs(3);
                self.expr(e, r);
                self.expr(lo, r + 1);
                self.expr(hi, r + 2);
                let a = self.op("Ge", r + 1, target, r);
                self.p5(a, 0x20);
                let b = self.op("Le", r + 2, r + 1, r);
                self.p5(b, 0x20);
                self.op("And", target, r + 1, target);
            }
            CExpr::InList { e, list, .. } => {
                let r = self.regs(2);
                self.expr(e, r);
                self.op("Integer", 0, target, 0);
                for x in list {
                    self.expr(x, r + 1);
                    let a = self.op("Eq", r + 1, r + 1, r);
                    self.p5(a, 0x20);
                    self.op("Or", r + 1, target, target);
                }
            }
            CExpr::InSelect { e, sub, .. } => {
                let c = self.cursor();
                let once = self.op("Once", 0, 0, 0);
                let a = self.op("OpenEphemeral", c, sub.plan.columns.len() as i64, 0);
                self.note(a, "IN subquery");
                self.subselect(sub, Sink::Ephemeral(c));
                self.land(&[once]);
                let r = self.regs(1);
                self.expr(e, r);
                let f = self.op("Found", c, 0, r);
                self.op("Integer", 0, target, 0);
                self.land(&[f]);
                self.op("Integer", 1, target, 0);
            }
            CExpr::Exists(sub) => {
                self.op("Integer", 0, target, 0);
                self.subselect(sub, Sink::Exists(target));
            }
            CExpr::Scalar(sub) => {
                self.op("Null", 0, target, 0);
                self.subselect(sub, Sink::Scalar(target));
            }
            CExpr::Field { sub, idx } => {
                let a = self.op("Null", 0, target, 0);
                self.note(a, format!("column {idx} of a row-value subquery"));
                self.subselect(sub, Sink::Scalar(target));
            }
            CExpr::RowCmp(rc) => {
                let n = rc.l.len() as i64;
                let first = self.regs(2 * rc.l.len());
                for (i, x) in rc.l.iter().chain(&rc.r).enumerate() {
                    self.expr(x, first + i as i64);
                }
                use ast::BinaryOp as B;
                let name = match rc.op {
                    B::Eq | B::Is => "Eq",
                    B::Ne | B::IsNot => "Ne",
                    B::Lt => "Lt",
                    B::Le => "Le",
                    B::Gt => "Gt",
                    _ => "Ge",
                };
                self.op("Integer", 1, target, 0);
                for i in 0..n {
                    let a = self.op(name, first + n + i, target, first + i);
                    self.p5(a, 0x20);
                    self.note(a, format!("row value term {i}"));
                }
            }
            CExpr::IsNull { e, not } => {
                self.expr(e, target);
                let a = self.op(if *not { "NotNull" } else { "IsNull" }, target, 0, 0);
                self.land(&[a]);
            }
            CExpr::Case {
                base, whens, else_, ..
            } => {
                let r = self.regs(2);
                if let Some(b) = base {
                    self.expr(b, r);
                }
                let mut to_end = Vec::new();
                for (w, t) in whens {
                    self.expr(w, r + 1);
                    let miss = if base.is_some() {
                        self.op("Ne", r, 0, r + 1)
                    } else {
                        self.op("IfNot", r + 1, 0, 1)
                    };
                    self.note(miss, "CASE WHEN");
                    self.expr(t, target);
                    to_end.push(self.op("Goto", 0, 0, 0));
                    self.land(&[miss]);
                }
                match else_ {
                    Some(x) => self.expr(x, target),
                    None => {
                        self.op("Null", 0, target, 0);
                    }
                }
                self.land(&to_end);
            }
            CExpr::Cast { e, aff } => {
                self.expr(e, target);
                let a = self.op("Cast", target, 0, 0);
                let code = match aff {
                    crate::value::Affinity::Blob => 'A',
                    crate::value::Affinity::Text => 'B',
                    crate::value::Affinity::Numeric => 'C',
                    crate::value::Affinity::Integer => 'D',
                    crate::value::Affinity::Real => 'E',
                };
                self.ops[a].p2 = i64::from(code as u8);
            }
            CExpr::Func { def, args, .. } => {
                let first = self.regs(args.len());
                for (i, x) in args.iter().enumerate() {
                    self.expr(x, first + i as i64);
                }
                let a = self.op4("Function", 0, first, target, def.0.name.to_string());
                self.p5(a, args.len() as i64);
            }
            CExpr::Agg(i) | CExpr::Win(i) | CExpr::OuterAgg { idx: i, .. } => {
                let a = self.op("Copy", 0, target, 0);
                self.note(a, format!("result of aggregate or window call {i}"));
            }
            CExpr::Vector(xs) => {
                for (i, x) in xs.iter().enumerate() {
                    self.expr(x, target + i as i64);
                }
            }
            CExpr::Raise { msg, .. } => {
                if let Some(m) = msg {
                    self.expr(m, target);
                }
                let a = self.op("Halt", crate::value::codes::SQLITE_CONSTRAINT as i64, 2, 0);
                self.note(a, "RAISE");
            }
        }
    }

    /// `Column` (or `Rowid`) of the source holding position `idx` of frame `level`.
    fn column(&mut self, level: usize, idx: usize, target: i64) {
        let frame = self
            .frames
            .len()
            .checked_sub(level + 1)
            .and_then(|f| self.frames.get(f));
        let found = frame.and_then(|f| f.iter().rev().find(|s| s.start <= idx));
        let found = found.map(|s| {
            let col = idx - s.start;
            let at = s.index_map.as_ref().map(|m| {
                m.get(col)
                    .copied()
                    .flatten()
                    .unwrap_or(m.len().saturating_sub(1))
            });
            (s.cursor, col, s.ncols, at)
        });
        match found {
            Some((cursor, _, _, Some(at))) => {
                self.op("Column", cursor, at as i64, target);
            }
            Some((cursor, col, ncols, None)) if col == ncols => {
                self.op("Rowid", cursor, target, 0);
            }
            Some((cursor, col, _, None)) => {
                self.op("Column", cursor, col as i64, target);
            }
            None => {
                // A value of the trigger row (NEW/OLD) or of an outer query's row.
                let a = self.op("Param", idx as i64, target, 0);
                self.note(a, "outer row value");
            }
        }
    }

    /// Writes `e` and jumps to the level's continue when it is false or NULL.
    fn filter(&mut self, e: &CExpr, to: &mut Vec<usize>) {
        let r = self.regs(1);
        self.expr(e, r);
        to.push(self.op("IfNot", r, 0, 1));
    }

    // ---- selects ----------------------------------------------------------------------

    fn subselect(&mut self, sub: &SubPlan, sink: Sink) {
        self.select(&sub.plan, sink);
    }

    /// The steps of a whole select (its cores, compound operators, ORDER BY and LIMIT).
    fn select(&mut self, plan: &SelectPlan, sink: Sink) {
        let limit = plan.limit.as_ref().map(|l| {
            let r = self.regs(1);
            self.expr(l, r);
            self.op("MustBeInt", r, 0, 0);
            r
        });
        let offset = plan.offset.as_ref().map(|o| {
            let r = self.regs(1);
            self.expr(o, r);
            self.op("MustBeInt", r, 0, 0);
            r
        });
        let ncols = plan.columns.len();
        let sorter = (!plan.order_by.is_empty()).then(|| {
            let c = self.cursor();
            let a = self.op4(
                "SorterOpen",
                c,
                ncols as i64,
                0,
                format!("k({})", plan.order_by.len()),
            );
            self.note(a, "ORDER BY");
            c
        });
        let all_union_all = plan
            .ops
            .iter()
            .all(|o| matches!(o, ast::CompoundOp::UnionAll));
        let compound = (!all_union_all).then(|| {
            let c = self.cursor();
            let a = self.op("OpenEphemeral", c, ncols as i64, 0);
            self.note(a, "compound SELECT");
            c
        });
        // Rows reaching `sink` straight from the cores: only without sorter or compound.
        let direct = sorter.is_none() && compound.is_none();
        let mut to_end = Vec::new();
        for (i, core) in plan.cores.iter().enumerate() {
            if i > 0 {
                let a = self.op("Noop", 0, 0, 0);
                let name = match plan.ops.get(i - 1) {
                    Some(ast::CompoundOp::Union) => "UNION",
                    Some(ast::CompoundOp::UnionAll) => "UNION ALL",
                    Some(ast::CompoundOp::Intersect) => "INTERSECT",
                    Some(ast::CompoundOp::Except) => "EXCEPT",
                    None => "",
                };
                self.note(a, name);
            }
            let core_sink = match (compound, sorter) {
                (Some(c), _) => Sink::Ephemeral(c),
                (None, Some(s)) => Sink::Sorter(s),
                (None, None) => sink,
            };
            let lim = if direct { limit } else { None };
            let off = if direct { offset } else { None };
            self.core(core, core_sink, lim, off, &mut to_end);
        }
        if let Some(c) = compound {
            let rewind = self.op("Rewind", c, 0, 0);
            let top = self.here();
            let base = self.regs(ncols);
            for i in 0..ncols {
                self.op("Column", c, i as i64, base + i as i64);
            }
            match sorter {
                Some(s) => self.emit(Sink::Sorter(s), base, ncols, None, None, &mut to_end),
                None => self.emit(sink, base, ncols, limit, offset, &mut to_end),
            }
            self.op("Next", c, top, 0);
            self.land(&[rewind]);
        }
        if let Some(s) = sorter {
            let sort = self.op("SorterSort", s, 0, 0);
            let top = self.here();
            let pseudo = self.cursor();
            let base = self.regs(ncols);
            self.op("SorterData", s, base, pseudo);
            for i in 0..ncols {
                self.op("Column", pseudo, i as i64, base + i as i64);
            }
            self.emit(sink, base, ncols, limit, offset, &mut to_end);
            self.op("SorterNext", s, top, 0);
            self.land(&[sort]);
        }
        self.land(&to_end);
    }

    /// Writes `n` values in registers from `base` to `sink`, counting LIMIT and OFFSET.
    fn emit(
        &mut self,
        sink: Sink,
        base: i64,
        n: usize,
        limit: Option<i64>,
        offset: Option<i64>,
        to_end: &mut Vec<usize>,
    ) {
        let skip = offset.map(|r| self.op("IfPos", r, 0, 1));
        match sink {
            Sink::Result => {
                self.op("ResultRow", base, n as i64, 0);
            }
            Sink::Ephemeral(c) => {
                let rec = self.regs(1);
                self.op("MakeRecord", base, n as i64, rec);
                self.op("IdxInsert", c, rec, base);
            }
            Sink::Sorter(c) => {
                let rec = self.regs(1);
                self.op("MakeRecord", base, n as i64, rec);
                self.op("SorterInsert", c, rec, 0);
            }
            Sink::Scalar(r) => {
                self.op("Copy", base, r, 0);
                to_end.push(self.op("Goto", 0, 0, 0));
            }
            Sink::Exists(r) => {
                self.op("Integer", 1, r, 0);
                to_end.push(self.op("Goto", 0, 0, 0));
            }
        }
        if let Some(r) = limit {
            to_end.push(self.op("DecrJumpZero", r, 0, 0));
        }
        if let Some(a) = skip {
            self.land(&[a]);
        }
    }

    /// One SELECT core: its join loops, filters, grouping and output.
    fn core(
        &mut self,
        core: &CorePlan,
        sink: Sink,
        limit: Option<i64>,
        offset: Option<i64>,
        to_end: &mut Vec<usize>,
    ) {
        let nout = match sink {
            Sink::Sorter(_) => core.outputs.len(),
            _ => core.n_visible,
        };
        if let Some(rows) = &core.values {
            for row in rows {
                let base = self.regs(row.len());
                for (i, e) in row.iter().enumerate() {
                    self.expr(e, base + i as i64);
                }
                self.emit(sink, base, row.len(), limit, offset, to_end);
            }
            return;
        }
        let distinct = core.distinct.then(|| {
            let c = self.cursor();
            let a = self.op("OpenEphemeral", c, core.n_visible as i64, 0);
            self.note(a, "DISTINCT");
            c
        });
        let group = (!core.group_by.is_empty()).then(|| {
            let c = self.cursor();
            let a = self.op4(
                "SorterOpen",
                c,
                core.group_by.len() as i64,
                0,
                format!("k({})", core.group_by.len()),
            );
            self.note(a, "GROUP BY");
            c
        });
        let accs = self.regs(core.aggs.len());
        for (i, _) in core.aggs.iter().enumerate() {
            self.op("Null", 0, accs + i as i64, 0);
        }
        self.frames.push(Vec::new());
        let mut levels: Vec<Level> = Vec::new();
        for (i, src) in core.sources.iter().enumerate() {
            let level = self.open_level(src);
            if let Some(f) = self.frames.last_mut() {
                f.push(FrameSource {
                    start: level.start,
                    cursor: level.cursor,
                    ncols: level.ncols,
                    index_map: level.index_map.clone(),
                });
            }
            levels.push(level);
            let l = levels.len() - 1;
            let mut jumps = Vec::new();
            for e in &src.on {
                self.filter(e, &mut jumps);
            }
            if let Some(fs) = core.filters.get(i) {
                for e in fs {
                    self.filter(e, &mut jumps);
                }
            }
            levels[l].to_continue.extend(jumps);
            if src.join == JoinType::Left || src.join.keeps_right_rows() {
                let a = self.op("Noop", 0, 0, 0);
                self.note(
                    a,
                    "outer join: a row with no match joins a NULL row (NullRow)",
                );
            }
        }
        let mut skip_row = Vec::new();
        if core.sources.is_empty() {
            if let Some(fs) = core.filters.first() {
                for e in fs {
                    self.filter(e, &mut skip_row);
                }
            }
        }
        if core.is_agg {
            if let Some(g) = group {
                let n = core.group_by.len();
                let base = self.regs(n);
                for (i, e) in core.group_by.iter().enumerate() {
                    self.expr(e, base + i as i64);
                }
                let rec = self.regs(1);
                self.op("MakeRecord", base, n as i64, rec);
                self.op("SorterInsert", g, rec, 0);
            } else {
                self.agg_steps(core, accs);
            }
        } else {
            self.output(core, sink, nout, distinct, limit, offset, to_end);
        }
        self.close_levels(levels);
        self.land(&skip_row);
        if core.is_agg {
            let mut next = None;
            if let Some(g) = group {
                let sort = self.op("SorterSort", g, 0, 0);
                let top = self.here();
                let pseudo = self.cursor();
                let rec = self.regs(1);
                self.op("SorterData", g, rec, pseudo);
                let k = self.regs(core.group_by.len());
                let a = self.op("Compare", k, rec, core.group_by.len() as i64);
                self.note(a, "new group?");
                self.op("Jump", self.here() + 1, self.here() + 1, self.here() + 1);
                self.agg_steps(core, accs);
                next = Some((sort, top, g));
            }
            for (i, a) in core.aggs.iter().enumerate() {
                let f = self.op4("AggFinal", accs + i as i64, a.args.len() as i64, 0, {
                    a.def.0.name.to_string()
                });
                self.note(f, "end of group");
            }
            let mut skip = Vec::new();
            if let Some(h) = &core.having {
                self.filter(h, &mut skip);
            }
            self.output(core, sink, nout, distinct, limit, offset, to_end);
            self.land(&skip);
            if let Some((sort, top, g)) = next {
                self.op("SorterNext", g, top, 0);
                self.land(&[sort]);
            }
        }
        self.frames.pop();
    }

    fn agg_steps(&mut self, core: &CorePlan, accs: i64) {
        for (i, a) in core.aggs.iter().enumerate() {
            let first = self.regs(a.args.len());
            for (j, x) in a.args.iter().enumerate() {
                self.expr(x, first + j as i64);
            }
            let mut skip = Vec::new();
            if let Some(f) = &a.filter {
                self.filter(f, &mut skip);
            }
            let s = self.op4(
                "AggStep",
                0,
                first,
                accs + i as i64,
                a.def.0.name.to_string(),
            );
            self.p5(s, a.args.len() as i64);
            if a.distinct {
                self.note(s, "DISTINCT");
            }
            self.land(&skip);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn output(
        &mut self,
        core: &CorePlan,
        sink: Sink,
        nout: usize,
        distinct: Option<i64>,
        limit: Option<i64>,
        offset: Option<i64>,
        to_end: &mut Vec<usize>,
    ) {
        if !core.windows.is_empty() {
            let a = self.op("Noop", 0, 0, 0);
            self.note(
                a,
                format!(
                    "{} window function call(s) over the rows",
                    core.windows.len()
                ),
            );
        }
        let base = self.regs(nout);
        for (i, e) in core.outputs.iter().take(nout).enumerate() {
            self.expr(e, base + i as i64);
        }
        let mut dup = Vec::new();
        if let Some(d) = distinct {
            dup.push(self.op("Found", d, 0, base));
            let rec = self.regs(1);
            self.op("MakeRecord", base, core.n_visible as i64, rec);
            self.op("IdxInsert", d, rec, base);
        }
        self.emit(sink, base, nout, limit, offset, to_end);
        self.land(&dup);
    }

    /// Opens a source's cursors and starts its loop (or seek).
    fn open_level(&mut self, src: &Source) -> Level {
        let mut ncols = src.width;
        let cursor = match &src.kind {
            SourceKind::Table(t) => {
                ncols = t.columns.len();
                self.open(false, t.root, t.columns.len(), &t.name)
            }
            SourceKind::Schema => self.open(false, 1, 5, "sqlite_schema"),
            SourceKind::TempSchema => {
                self.open(false, 1 | store::TEMP_ROOT_BIT, 5, "sqlite_temp_schema")
            }
            SourceKind::AttachedSchema(bits) => self.open(false, 1 | bits, 5, "sqlite_schema"),
            SourceKind::Subquery(sub) => {
                let c = self.cursor();
                let a = self.op("OpenEphemeral", c, src.width as i64, 0);
                self.note(a, "subquery, view or CTE materialized");
                self.subselect(sub, Sink::Ephemeral(c));
                c
            }
            SourceKind::Recursive(r) => {
                let c = self.cursor();
                let a = self.op("OpenEphemeral", c, src.width as i64, 0);
                self.note(a, "recursive CTE");
                self.subselect(&r.init, Sink::Ephemeral(c));
                let b = self.op("Noop", 0, 0, 0);
                self.note(b, "recursive step, repeated to a fixpoint");
                self.subselect(&r.step, Sink::Ephemeral(c));
                c
            }
            SourceKind::Working(_) => {
                let c = self.cursor();
                let a = self.op("OpenPseudo", c, 0, src.width as i64);
                self.note(a, "recursive CTE's rows of the last round");
                c
            }
            SourceKind::Rows(rows) => {
                let c = self.cursor();
                let a = self.op("OpenEphemeral", c, src.width as i64, 0);
                self.note(a, format!("{} rows computed while planning", rows.len()));
                c
            }
            SourceKind::PragmaFn { pragma, .. } => {
                let c = self.cursor();
                self.op4("VOpen", c, 0, 0, format!("pragma_{pragma}"));
                c
            }
            SourceKind::JsonFn { recursive, .. } => {
                let c = self.cursor();
                let name = if *recursive { "json_tree" } else { "json_each" };
                self.op4("VOpen", c, 0, 0, name.into());
                c
            }
        };
        let is_table = matches!(
            src.kind,
            SourceKind::Table(_)
                | SourceKind::Schema
                | SourceKind::TempSchema
                | SourceKind::AttachedSchema(_)
        );
        let mut level = Level {
            cursor,
            index_map: None,
            start: src.start,
            ncols: if is_table { ncols } else { src.width },
            next: None,
            to_continue: Vec::new(),
            to_end: Vec::new(),
        };
        if let SourceKind::PragmaFn { args, .. } | SourceKind::JsonFn { args, .. } = &src.kind {
            let base = self.regs(args.len());
            for (i, a) in args.iter().enumerate() {
                self.expr(a, base + i as i64);
            }
            level.to_end.push(self.op("VFilter", cursor, 0, base));
            level.next = Some(("VNext", cursor, self.here()));
            return level;
        }
        if !is_table {
            level.to_end.push(self.op("Rewind", cursor, 0, 0));
            level.next = Some(("Next", cursor, self.here()));
            return level;
        }
        match &src.access {
            Access::Scan => {
                level.to_end.push(self.op("Rewind", cursor, 0, 0));
                level.next = Some(("Next", cursor, self.here()));
            }
            Access::RowidEq(vals)
                if vals.len() == 1 && !matches!(vals[0], CExpr::InSelect { .. }) =>
            {
                let r = self.regs(1);
                self.expr(&vals[0], r);
                level.to_end.push(self.op("SeekRowid", cursor, 0, r));
            }
            Access::RowidEq(vals) => {
                let list = self.cursor();
                let a = self.op("OpenEphemeral", list, 1, 0);
                self.note(a, "IN list of rowids, in key order");
                let r = self.regs(1);
                for v in vals {
                    match v {
                        CExpr::InSelect { sub, .. } => self.subselect(sub, Sink::Ephemeral(list)),
                        _ => {
                            self.expr(v, r);
                            self.op("IdxInsert", list, r, r);
                        }
                    }
                }
                level.to_end.push(self.op("Rewind", list, 0, 0));
                let top = self.here();
                self.op("Column", list, 0, r);
                level.to_continue.push(self.op("SeekRowid", cursor, 0, r));
                level.next = Some(("Next", list, top));
            }
            Access::RowidRange { lo, hi, reverse } => {
                let (start, stop) = if *reverse { (hi, lo) } else { (lo, hi) };
                match start {
                    Some((e, incl)) => {
                        let r = self.regs(1);
                        self.expr(e, r);
                        let name = match (*reverse, *incl) {
                            (false, true) => "SeekGE",
                            (false, false) => "SeekGT",
                            (true, true) => "SeekLE",
                            (true, false) => "SeekLT",
                        };
                        level.to_end.push(self.op(name, cursor, 0, r));
                    }
                    None => {
                        let name = if *reverse { "Last" } else { "Rewind" };
                        level.to_end.push(self.op(name, cursor, 0, 0));
                    }
                }
                let top = self.here();
                if let Some((e, incl)) = stop {
                    let r = self.regs(2);
                    self.expr(e, r);
                    self.op("Rowid", cursor, r + 1, 0);
                    let name = match (*reverse, *incl) {
                        (false, true) => "Gt",
                        (false, false) => "Ge",
                        (true, true) => "Lt",
                        (true, false) => "Le",
                    };
                    level.to_end.push(self.op(name, r, 0, r + 1));
                }
                level.next = Some((if *reverse { "Prev" } else { "Next" }, cursor, top));
            }
            Access::Index {
                index,
                eq,
                lo,
                hi,
                reverse,
                covering,
                ..
            } => {
                let ic = self.open(false, index.root, index.columns.len() + 1, &index.name);
                if let Some(a) = self.ops.last_mut() {
                    a.p4 = Some(format!("k({},)", index.columns.len() + 1));
                }
                let neq = eq.len();
                let key = self.regs(neq + 1);
                for (i, (vals, _)) in eq.iter().enumerate() {
                    if let Some(v) = vals.first() {
                        self.expr(v, key + i as i64);
                    }
                    if vals.len() > 1 {
                        let a = self.op("Noop", 0, 0, 0);
                        self.note(a, format!("repeated for each of {} IN values", vals.len()));
                    }
                }
                let (start, stop) = if *reverse { (hi, lo) } else { (lo, hi) };
                let seek_keys = neq + usize::from(start.is_some());
                if let Some((e, _)) = start {
                    self.expr(e, key + neq as i64);
                }
                let seek = match (start, *reverse) {
                    (Some((_, true)), false) => "SeekGE",
                    (Some((_, false)), false) => "SeekGT",
                    (Some((_, true)), true) => "SeekLE",
                    (Some((_, false)), true) => "SeekLT",
                    (None, false) if neq > 0 => "SeekGE",
                    (None, true) if neq > 0 => "SeekLE",
                    (None, false) => "Rewind",
                    (None, true) => "Last",
                };
                let a = if seek_keys > 0 {
                    self.op4(seek, ic, 0, key, seek_keys.to_string())
                } else {
                    self.op(seek, ic, 0, 0)
                };
                level.to_end.push(a);
                let top = self.here();
                let stop_keys = neq + usize::from(stop.is_some());
                if stop_keys > 0 {
                    let k2 = self.regs(stop_keys);
                    if let Some((e, _)) = stop {
                        self.expr(e, k2 + neq as i64);
                    }
                    let check = match (stop, *reverse) {
                        (Some((_, true)), false) | (None, false) => "IdxGT",
                        (Some((_, false)), false) => "IdxGE",
                        (Some((_, true)), true) | (None, true) => "IdxLT",
                        (Some((_, false)), true) => "IdxLE",
                    };
                    level
                        .to_end
                        .push(self.op4(check, ic, 0, k2, stop_keys.to_string()));
                }
                if *covering {
                    let a = self.op("Noop", 0, 0, 0);
                    self.note(a, "covering index: columns read from the index");
                    level.cursor = ic;
                    let mut map: Vec<Option<usize>> = (0..level.ncols)
                        .map(|c| index.columns.iter().position(|x| x.column == Some(c)))
                        .collect();
                    // The rowid: last in the key.
                    map.push(Some(index.columns.len()));
                    level.index_map = Some(map);
                } else {
                    self.op("DeferredSeek", ic, 0, cursor);
                }
                level.next = Some((if *reverse { "Prev" } else { "Next" }, ic, top));
            }
            Access::AutoIndex { col, probe, .. } => {
                let auto = self.cursor();
                let once = self.op("Once", 0, 0, 0);
                let a = self.op("OpenAutoindex", auto, 2, 0);
                self.note(a, "automatic index");
                let rw = self.op("Rewind", cursor, 0, 0);
                let t = self.here();
                let r = self.regs(2);
                self.op("Column", cursor, *col as i64, r);
                self.op("Rowid", cursor, r + 1, 0);
                self.op("IdxInsert", auto, r, r);
                self.op("Next", cursor, t, 0);
                self.land(&[rw, once]);
                let k = self.regs(1);
                self.expr(probe, k);
                level
                    .to_end
                    .push(self.op4("SeekGE", auto, 0, k, "1".into()));
                let top = self.here();
                level.to_end.push(self.op4("IdxGT", auto, 0, k, "1".into()));
                self.op("DeferredSeek", auto, 0, cursor);
                level.next = Some(("Next", auto, top));
            }
        }
        level
    }

    /// Ends the loops of a core, innermost first.
    fn close_levels(&mut self, levels: Vec<Level>) {
        for level in levels.into_iter().rev() {
            self.land(&level.to_continue);
            if let Some((name, c, top)) = level.next {
                self.op(name, c, top, 0);
            }
            self.land(&level.to_end);
        }
    }
}

impl Engine<'_> {
    /// The rows of `EXPLAIN stmt` (see the module comment). Binds the statement, never
    /// runs it.
    pub(super) fn explain(&self, stmt: &Stmt) -> Result<Vec<Row>> {
        let mut p = Program::new(self.schema);
        match stmt {
            Stmt::Select(s) => {
                let plan = Binder::new(self.schema).bind_select(s)?;
                p.select(&plan, Sink::Result);
            }
            Stmt::Insert(i) => self.explain_insert(&mut p, i)?,
            Stmt::Update(_) | Stmt::Delete(_) => self.explain_update_delete(&mut p, stmt)?,
            Stmt::CreateTable(c) => {
                if !c.if_not_exists
                    && self
                        .schema
                        .table_in(c.name.schema.as_deref(), &c.name.name)
                        .is_some()
                {
                    return Err(SqlError::msg(format!(
                        "table {} already exists",
                        c.name.name
                    )));
                }
                let r = p.regs(1);
                p.uses_db(0, true);
                let a = p.op("CreateBtree", 0, r, 1);
                p.note(a, format!("table {}", c.name.name));
                schema_row(&mut p, "table", &c.name.name);
            }
            Stmt::CreateIndex(c) => {
                let Some(t) = self.schema.table(&c.table) else {
                    return Err(SqlError::msg(format!(
                        "no such table: {}.{}",
                        c.name.schema.as_deref().unwrap_or("main"),
                        c.table
                    )));
                };
                let r = p.regs(1);
                p.uses_db(page_db(t.root).1, true);
                let a = p.op("CreateBtree", page_db(t.root).1, r, 2);
                p.note(a, format!("index {}", c.name.name));
                schema_row(&mut p, "index", &c.name.name);
                let s = p.cursor();
                p.op("SorterOpen", s, c.columns.len() as i64 + 1, 0);
                let tc = p.open(false, t.root, t.columns.len(), &t.name);
                let rw = p.op("Rewind", tc, 0, 0);
                let top = p.here();
                let rec = p.regs(1);
                p.op("MakeRecord", rec, c.columns.len() as i64 + 1, rec);
                p.op("SorterInsert", s, rec, 0);
                p.op("Next", tc, top, 0);
                p.land(&[rw]);
                let ic = p.cursor();
                p.op("OpenWrite", ic, r, 0);
                let sort = p.op("SorterSort", s, 0, 0);
                let top = p.here();
                p.op("SorterData", s, rec, ic);
                p.op("IdxInsert", ic, rec, 0);
                p.op("SorterNext", s, top, 0);
                p.land(&[sort]);
            }
            Stmt::CreateView(c) => schema_row(&mut p, "view", &c.name.name),
            Stmt::CreateTrigger(c) => schema_row(&mut p, "trigger", &c.name.name),
            Stmt::Drop {
                kind,
                if_exists,
                name,
            } => self.explain_drop(&mut p, *kind, *if_exists, name)?,
            Stmt::AlterTable { table, .. } => {
                self.table_for_write(table)?;
                let c = p.open(true, 1, 5, "sqlite_schema");
                let rw = p.op("Rewind", c, 0, 0);
                let top = p.here();
                let a = p.op("Insert", c, 0, 0);
                p.note(a, "rewrite the schema rows that name the table");
                p.op("Next", c, top, 0);
                p.land(&[rw]);
                p.op("SetCookie", 0, 1, 0);
                p.op4("ParseSchema", 0, 0, 0, format!("tbl_name='{}'", table.name));
            }
            Stmt::Begin { .. } => {
                p.op("AutoCommit", 0, 0, 0);
            }
            Stmt::Commit => {
                p.op("AutoCommit", 1, 0, 0);
            }
            Stmt::Rollback { savepoint: None } => {
                p.op("AutoCommit", 1, 1, 0);
            }
            Stmt::Rollback { savepoint: Some(s) } => {
                p.op4("Savepoint", 2, 0, 0, s.clone());
            }
            Stmt::Savepoint(s) => {
                p.op4("Savepoint", 0, 0, 0, s.clone());
            }
            Stmt::Release(s) => {
                p.op4("Savepoint", 1, 0, 0, s.clone());
            }
            Stmt::Vacuum { .. } => {
                p.op("Vacuum", 0, 0, 0);
            }
            Stmt::Attach { .. } => {
                let a = p.op4("Function", 0, 0, 0, "sqlite_attach".into());
                p.p5(a, 3);
            }
            Stmt::Detach(_) => {
                let a = p.op4("Function", 0, 0, 0, "sqlite_detach".into());
                p.p5(a, 1);
            }
            Stmt::Pragma { name, .. } => {
                let a = p.op("Noop", 0, 0, 0);
                p.note(a, format!("PRAGMA {}: run by exec/pragma.rs", name.name));
            }
            Stmt::Analyze(_) => {
                let a = p.op("Noop", 0, 0, 0);
                p.note(a, "ANALYZE: writes sqlite_stat1");
            }
            Stmt::Reindex(_) => {
                let a = p.op("Noop", 0, 0, 0);
                p.note(a, "REINDEX: clears and refills the indexes");
            }
            Stmt::CreateVirtualTable(v) => {
                return Err(SqlError::msg(format!("no such module: {}", v.module)));
            }
            Stmt::Explain { .. } => {
                return Err(SqlError::msg("near \"EXPLAIN\": syntax error"));
            }
        }
        Ok(p.finish())
    }

    fn explain_insert(&self, p: &mut Program, i: &ast::Insert) -> Result<()> {
        if let Some(v) = self.schema.views.get(&crate::schema::key(&i.table.name)) {
            return self.explain_instead_of(p, &v.name, TriggerEvent::Insert);
        }
        let t = self.table_for_write(&i.table)?;
        for c in &i.columns {
            if t.column_index(c).is_none() && !is_rowid_name(&t, c) {
                return Err(SqlError::msg(format!(
                    "table {} has no column named {c}",
                    t.name
                )));
            }
        }
        let (w, indexes) = open_for_write(p, self, &t);
        let rows = p.cursor();
        let a = p.op("OpenEphemeral", rows, t.columns.len() as i64, 0);
        p.note(a, "rows to insert");
        if let ast::InsertSource::Select(s) = &i.source {
            let mut sel = (**s).clone();
            if let Some(wi) = &i.with {
                let mut with = wi.clone();
                if let Some(own) = sel.with.take() {
                    with.ctes.extend(own.ctes);
                }
                sel.with = Some(with);
            }
            let plan = Binder::new(self.schema).bind_select(&sel)?;
            p.select(&plan, Sink::Ephemeral(rows));
        }
        let rw = p.op("Rewind", rows, 0, 0);
        let top = p.here();
        let base = p.regs(t.columns.len() + 1);
        for c in 0..t.columns.len() {
            p.op("Column", rows, c as i64, base + 1 + c as i64);
        }
        self.explain_write(
            p,
            &t,
            w,
            &indexes,
            base,
            TriggerEvent::Insert,
            i.or_conflict,
        )?;
        p.op("Next", rows, top, 0);
        p.land(&[rw]);
        Ok(())
    }

    fn explain_update_delete(&self, p: &mut Program, stmt: &Stmt) -> Result<()> {
        let (name, event, or) = match stmt {
            Stmt::Update(u) => {
                let cols: Vec<String> = u
                    .sets
                    .iter()
                    .flat_map(|a| a.columns.iter().cloned())
                    .collect();
                (&u.table, TriggerEvent::Update(cols), u.or_conflict)
            }
            Stmt::Delete(d) => (&d.table, TriggerEvent::Delete, None),
            _ => return Ok(()),
        };
        if let Some(v) = self.schema.views.get(&crate::schema::key(&name.name)) {
            return self.explain_instead_of(p, &v.name, event);
        }
        let t = self.table_for_write(name)?;
        if let Stmt::Update(u) = stmt {
            for c in u.sets.iter().flat_map(|a| a.columns.iter()) {
                if t.column_index(c).is_none() && !is_rowid_name(&t, c) {
                    return Err(SqlError::msg(format!("no such column: {c}")));
                }
            }
        }
        let sel = match self.dml_select(stmt)? {
            Some(Some(sel)) => sel,
            _ => {
                // DELETE without WHERE: every b-tree of the table cleared.
                for ix in self.schema.table_indexes(&t) {
                    if ix.root != 0 && ix.root != t.root {
                        let (page, db) = page_db(ix.root);
                        p.uses_db(db, true);
                        let a = p.op("Clear", page, db, 0);
                        p.note(a, ix.name.clone());
                    }
                }
                let (page, db) = page_db(t.root);
                p.uses_db(db, true);
                let a = p.op4("Clear", page, db, 0, t.name.clone());
                p.note(a, "DELETE without WHERE: the table truncated");
                return Ok(());
            }
        };
        let plan = self.binder_with_trigger_frame().bind_select(&sel)?;
        let (w, indexes) = open_for_write(p, self, &t);
        let rows = p.cursor();
        let a = p.op("OpenEphemeral", rows, plan.columns.len() as i64, 0);
        p.note(
            a,
            "rows found by the WHERE clause, written after the search",
        );
        p.select(&plan, Sink::Ephemeral(rows));
        let rw = p.op("Rewind", rows, 0, 0);
        let top = p.here();
        let base = p.regs(t.columns.len() + 1);
        let ncols = t.columns.len();
        p.op("Column", rows, ncols as i64, base);
        for c in 0..ncols {
            p.op("Column", rows, c as i64, base + 1 + c as i64);
        }
        let miss = p.op("NotExists", w, 0, base);
        if matches!(stmt, Stmt::Delete(_)) {
            self.explain_trigger_steps(p, &t, TriggerTime::Before, &TriggerEvent::Delete);
            for (ic, ix) in &indexes {
                let a = p.op("IdxDelete", *ic, base + 1, ix.columns.len() as i64 + 1);
                p.note(a, ix.name.clone());
            }
            let d = p.op4("Delete", w, 1, 0, t.name.clone());
            p.p5(d, 4);
            self.explain_fk_steps(p, &t);
            self.explain_trigger_steps(p, &t, TriggerTime::After, &TriggerEvent::Delete);
        } else {
            let Stmt::Update(u) = stmt else {
                return Ok(());
            };
            let mut at = ncols + 1;
            for a in &u.sets {
                for c in &a.columns {
                    let reg = match t.column_index(c) {
                        Some(i) => base + 1 + i as i64,
                        None => base,
                    };
                    let op = p.op("Column", rows, at as i64, reg);
                    p.note(op, format!("SET {c}"));
                    at += 1;
                }
            }
            self.explain_write(p, &t, w, &indexes, base, event, or)?;
        }
        p.land(&[miss]);
        p.op("Next", rows, top, 0);
        p.land(&[rw]);
        Ok(())
    }

    /// The steps that write one row (INSERT, or UPDATE's new row) held in registers
    /// `base` (rowid) and `base + 1 ..` (the columns).
    #[allow(clippy::too_many_arguments)]
    fn explain_write(
        &self,
        p: &mut Program,
        t: &Table,
        w: i64,
        indexes: &[(i64, std::sync::Arc<crate::schema::Index>)],
        base: i64,
        event: TriggerEvent,
        or: Option<ast::ConflictAction>,
    ) -> Result<()> {
        let ncols = t.columns.len() as i64;
        self.explain_trigger_steps(p, t, TriggerTime::Before, &event);
        if matches!(event, TriggerEvent::Insert) && !t.without_rowid {
            p.op("NewRowid", w, base, 0);
        }
        for (i, c) in t.columns.iter().enumerate() {
            if c.not_null.is_some() {
                let a = p.op4(
                    "HaltIfNull",
                    crate::value::codes::SQLITE_CONSTRAINT as i64,
                    0,
                    base + 1 + i as i64,
                    format!("{}.{}", t.name, c.name),
                );
                p.p5(a, 1);
            }
        }
        for (i, _) in t.checks.iter().enumerate() {
            let a = p.op("IfNot", 0, 0, 0);
            p.note(a, format!("CHECK constraint {}", i + 1));
        }
        let rec = p.regs(1);
        for (ic, ix) in indexes {
            let k = p.regs(1);
            p.op("MakeRecord", base + 1, ix.columns.len() as i64 + 1, k);
            if ix.unique {
                let a = p.op("NoConflict", *ic, 0, k);
                p.note(a, format!("UNIQUE {}", ix.name));
                p.land(&[a]);
            }
            let a = p.op("IdxInsert", *ic, k, base + 1);
            p.note(a, ix.name.clone());
        }
        p.op("MakeRecord", base + 1, ncols, rec);
        if t.without_rowid {
            let a = p.op("IdxInsert", w, rec, base + 1);
            p.note(a, t.name.clone());
        } else {
            let a = p.op4("Insert", w, rec, base, t.name.clone());
            p.p5(
                a,
                if matches!(event, TriggerEvent::Insert) {
                    1
                } else {
                    5
                },
            );
        }
        if let Some(c) = or {
            let a = p.op("Noop", 0, 0, 0);
            p.note(a, format!("conflict resolution {c:?}"));
        }
        self.explain_fk_steps(p, t);
        self.explain_trigger_steps(p, t, TriggerTime::After, &event);
        Ok(())
    }

    /// `FkCheck` for a table with foreign keys (or one referenced) while they are enforced.
    fn explain_fk_steps(&self, p: &mut Program, t: &Table) {
        if self.state.foreign_keys.get() && (!t.fkeys.is_empty() || self.fk_required_for_delete(t))
        {
            let a = p.op("FkCheck", 0, 0, 0);
            p.note(a, "foreign keys checked at the end of the statement");
        }
    }

    /// `Program` steps for the row triggers of `t` at `time`.
    fn explain_trigger_steps(
        &self,
        p: &mut Program,
        t: &Table,
        time: TriggerTime,
        event: &TriggerEvent,
    ) {
        for trig in self.table_triggers(t, time, event) {
            let a = p.op4("Program", 0, 0, 0, trig.name.clone());
            p.note(a, format!("trigger {}", trig.name));
        }
    }

    fn explain_instead_of(&self, p: &mut Program, view: &str, event: TriggerEvent) -> Result<()> {
        let trigs = self.triggers(view, TriggerTime::InsteadOf, &event);
        if trigs.is_empty() {
            return Err(SqlError::msg(format!(
                "cannot modify {view} because it is a view"
            )));
        }
        for trig in trigs {
            let a = p.op4("Program", 0, 0, 0, trig.name.clone());
            p.note(a, format!("INSTEAD OF trigger {}", trig.name));
        }
        Ok(())
    }

    fn explain_drop(
        &self,
        p: &mut Program,
        kind: ObjectKind,
        if_exists: bool,
        name: &ast::QualifiedName,
    ) -> Result<()> {
        let k = crate::schema::key(&name.name);
        let (exists, word) = match kind {
            ObjectKind::Table => (
                self.schema
                    .table_in(name.schema.as_deref(), &name.name)
                    .is_some(),
                "table",
            ),
            ObjectKind::Index => (self.schema.indexes.contains_key(&k), "index"),
            ObjectKind::View => (self.schema.views.contains_key(&k), "view"),
            ObjectKind::Trigger => (self.schema.triggers.contains_key(&k), "trigger"),
        };
        if !exists {
            if if_exists {
                return Ok(());
            }
            return Err(SqlError::msg(format!("no such {word}: {}", name.name)));
        }
        if let ObjectKind::Table = kind {
            if let Some(t) = self.schema.table_in(name.schema.as_deref(), &name.name) {
                for ix in self.schema.table_indexes(t) {
                    if ix.root != 0 && ix.root != t.root {
                        let (page, db) = page_db(ix.root);
                        p.uses_db(db, true);
                        let a = p.op("Destroy", page, 0, db);
                        p.note(a, ix.name.clone());
                    }
                }
                let (page, db) = page_db(t.root);
                p.uses_db(db, true);
                let a = p.op("Destroy", page, 0, db);
                p.note(a, t.name.clone());
            }
        }
        if let ObjectKind::Index = kind {
            if let Some(ix) = self.schema.indexes.get(&k) {
                let (page, db) = page_db(ix.root);
                p.uses_db(db, true);
                let a = p.op("Destroy", page, 0, db);
                p.note(a, ix.name.clone());
            }
        }
        let c = p.open(true, 1, 5, "sqlite_schema");
        let rw = p.op("Rewind", c, 0, 0);
        let top = p.here();
        let a = p.op("Delete", c, 0, 0);
        p.note(a, format!("the schema rows of {word} {}", name.name));
        p.op("Next", c, top, 0);
        p.land(&[rw]);
        p.op("SetCookie", 0, 1, 0);
        let drop = match kind {
            ObjectKind::Table | ObjectKind::View => "DropTable",
            ObjectKind::Index => "DropIndex",
            ObjectKind::Trigger => "DropTrigger",
        };
        p.op4(drop, 0, 0, 0, name.name.clone());
        Ok(())
    }
}

fn is_rowid_name(t: &Table, c: &str) -> bool {
    !t.without_rowid
        && ["rowid", "oid", "_rowid_"]
            .iter()
            .any(|n| n.eq_ignore_ascii_case(c))
}

/// Opens the table and its indexes for writing.
fn open_for_write(
    p: &mut Program,
    e: &Engine,
    t: &Table,
) -> (i64, Vec<(i64, std::sync::Arc<crate::schema::Index>)>) {
    let w = p.open(true, t.root, t.columns.len(), &t.name);
    let mut indexes = Vec::new();
    for ix in e.schema.table_indexes(t) {
        if ix.root == 0 || ix.root == t.root {
            continue;
        }
        let c = p.open(true, ix.root, ix.columns.len() + 1, &ix.name);
        indexes.push((c, ix));
    }
    (w, indexes)
}

/// The steps that add a row to `sqlite_schema` and reload the schema.
fn schema_row(p: &mut Program, kind: &str, name: &str) {
    let c = p.open(true, 1, 5, "sqlite_schema");
    let r = p.regs(6);
    p.op("NewRowid", c, r, 0);
    p.op4("String8", 0, r + 1, 0, kind.to_string());
    p.op4("String8", 0, r + 2, 0, name.to_string());
    p.op("MakeRecord", r + 1, 5, r + 5);
    p.op("Insert", c, r + 5, r);
    p.op("SetCookie", 0, 1, 0);
    p.op4("ParseSchema", 0, 0, 0, format!("name='{name}'"));
}
