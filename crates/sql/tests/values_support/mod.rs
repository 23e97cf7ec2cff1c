//! Shared machinery of the differential tests (`values_*_vs_sqlite.rs`): a small
//! expression tree rendered to SQL for SQLite (leaf values bound as parameters) and
//! evaluated through parlite's `value` and `func` APIs, the oracle plumbing, and seeded
//! generators of interesting inputs. Each test binary uses a subset.

#![allow(dead_code, unused_imports)]
// Test inputs spell out SQLite's boundary values digit for digit.
#![allow(clippy::excessive_precision)]

pub use parlite_sql::collation::Collation;
pub use parlite_sql::func::{self, aggregate::Aggregate, Ctx, NoConnection, Special};
pub use parlite_sql::value::{
    self, affinity_of_type_name, and3, arith, bit_not, bit_op, bool_value, compare_op, concat,
    is_op, negate, not3, or3, truth, Affinity, ArithOp, BitOp, Value,
};
pub use rand::rngs::StdRng;
pub use rand::{Rng, SeedableRng};
pub use rusqlite::types::ValueRef;
pub use rusqlite::Connection;
pub use std::cmp::Ordering;

#[derive(Clone, Debug)]
pub enum E {
    Lit(Value),
    /// A literal written into the SQL text (for arguments SQLite requires to be
    /// constants), with the value parlite should see.
    Sql(&'static str, Value),
    Call(&'static str, Vec<E>),
    Arith(ArithOp, Box<E>, Box<E>),
    Bit(BitOp, Box<E>, Box<E>),
    Concat(Box<E>, Box<E>),
    Cmp(&'static str, Box<E>, Box<E>),
    Is(bool, Box<E>, Box<E>),
    And(Box<E>, Box<E>),
    Or(Box<E>, Box<E>),
    Not(Box<E>),
    Neg(Box<E>),
    BitNot(Box<E>),
    Cast(Box<E>, &'static str),
    /// `CASE WHEN e THEN 1 ELSE 0 END`: truthiness.
    Truth(Box<E>),
    /// `e COLLATE name`.
    Collate(Box<E>, &'static str),
}

pub fn lit(v: impl Into<Value>) -> E {
    E::Lit(v.into())
}
pub fn null() -> E {
    E::Lit(Value::Null)
}
pub fn blob(b: &[u8]) -> E {
    E::Lit(Value::blob(b.to_vec()))
}
pub fn call(name: &'static str, args: Vec<E>) -> E {
    E::Call(name, args)
}
pub fn cast(e: E, t: &'static str) -> E {
    E::Cast(Box::new(e), t)
}
pub fn ar(op: ArithOp, a: E, b: E) -> E {
    E::Arith(op, Box::new(a), Box::new(b))
}
pub fn cmp(op: &'static str, a: E, b: E) -> E {
    E::Cmp(op, Box::new(a), Box::new(b))
}

pub fn render(e: &E, params: &mut Vec<Value>) -> String {
    match e {
        E::Lit(v) => {
            params.push(v.clone());
            format!("?{}", params.len())
        }
        E::Sql(text, _) => (*text).to_string(),
        E::Call(name, args) if name.starts_with("->") && args.len() == 2 => {
            format!(
                "({} {name} {})",
                render(&args[0], params),
                render(&args[1], params)
            )
        }
        E::Call(name, args) => {
            let a: Vec<String> = args.iter().map(|x| render(x, params)).collect();
            format!("{name}({})", a.join(", "))
        }
        E::Arith(op, a, b) => {
            let o = match op {
                ArithOp::Add => "+",
                ArithOp::Sub => "-",
                ArithOp::Mul => "*",
                ArithOp::Div => "/",
                ArithOp::Rem => "%",
            };
            format!("({} {o} {})", render(a, params), render(b, params))
        }
        E::Bit(op, a, b) => {
            let o = match op {
                BitOp::And => "&",
                BitOp::Or => "|",
                BitOp::ShiftLeft => "<<",
                BitOp::ShiftRight => ">>",
            };
            format!("({} {o} {})", render(a, params), render(b, params))
        }
        E::Concat(a, b) => format!("({} || {})", render(a, params), render(b, params)),
        E::Cmp(op, a, b) => format!("({} {op} {})", render(a, params), render(b, params)),
        E::Is(neg, a, b) => {
            format!(
                "({} IS {}{})",
                render(a, params),
                if *neg { "NOT " } else { "" },
                render(b, params)
            )
        }
        E::And(a, b) => format!("({} AND {})", render(a, params), render(b, params)),
        E::Or(a, b) => format!("({} OR {})", render(a, params), render(b, params)),
        E::Not(a) => format!("(NOT {})", render(a, params)),
        E::Neg(a) => format!("(- {})", render(a, params)),
        E::BitNot(a) => format!("(~ {})", render(a, params)),
        E::Cast(a, t) => format!("CAST({} AS {t})", render(a, params)),
        E::Truth(a) => format!("(CASE WHEN {} THEN 1 ELSE 0 END)", render(a, params)),
        E::Collate(a, c) => format!("({} COLLATE {c})", render(a, params)),
    }
}

pub fn eval(e: &E) -> Result<Value, String> {
    let ctx = Ctx::new(&NoConnection);
    Ok(match e {
        E::Lit(v) | E::Sql(_, v) => v.clone(),
        E::Call(name, args) => {
            let def = func::lookup(name, args.len()).map_err(|e| e.to_string())?;
            match def.special {
                Some(Special::Coalesce) => {
                    for a in args {
                        let v = eval(a)?;
                        if !v.is_null() {
                            return Ok(v);
                        }
                    }
                    Value::Null
                }
                Some(Special::Iif) => {
                    let mut i = 0;
                    while i + 1 < args.len() {
                        if truth(&eval(&args[i])?) == Some(true) {
                            return eval(&args[i + 1]);
                        }
                        i += 2;
                    }
                    if i < args.len() {
                        eval(&args[i])?
                    } else {
                        Value::Null
                    }
                }
                _ => {
                    let vals = args.iter().map(eval).collect::<Result<Vec<_>, _>>()?;
                    let mut ctx = ctx;
                    if def.needs_collation {
                        ctx.collation = args.iter().find_map(expr_collation).unwrap_or_default();
                    }
                    def.call(&ctx, &vals).map_err(|e| e.to_string())?
                }
            }
        }
        E::Arith(op, a, b) => arith(*op, &eval(a)?, &eval(b)?),
        E::Bit(op, a, b) => bit_op(*op, &eval(a)?, &eval(b)?),
        E::Concat(a, b) => concat(&eval(a)?, &eval(b)?).map_err(|e| e.to_string())?,
        E::Cmp(op, a, b) => {
            let (x, y) = (eval(a)?, eval(b)?);
            let aff_a = expr_affinity(a);
            let aff_b = expr_affinity(b);
            let o = compare_op(&x, aff_a, &y, aff_b, binary_collation(a, b));
            bool_value(o.map(|o| match *op {
                "=" => o == Ordering::Equal,
                "<>" => o != Ordering::Equal,
                "<" => o == Ordering::Less,
                "<=" => o != Ordering::Greater,
                ">" => o == Ordering::Greater,
                ">=" => o != Ordering::Less,
                _ => unreachable!(),
            }))
        }
        E::Is(neg, a, b) => {
            let r = is_op(
                &eval(a)?,
                expr_affinity(a),
                &eval(b)?,
                expr_affinity(b),
                binary_collation(a, b),
            );
            Value::Integer(i64::from(r != *neg))
        }
        E::And(a, b) => bool_value(and3(truth(&eval(a)?), truth(&eval(b)?))),
        E::Or(a, b) => bool_value(or3(truth(&eval(a)?), truth(&eval(b)?))),
        E::Not(a) => bool_value(not3(truth(&eval(a)?))),
        E::Neg(a) => negate(&eval(a)?),
        E::BitNot(a) => bit_not(&eval(a)?),
        E::Cast(a, t) => eval(a)?.cast(affinity_of_type_name(t)),
        E::Truth(a) => Value::Integer(i64::from(truth(&eval(a)?) == Some(true))),
        E::Collate(a, c) => {
            Collation::from_name(c).map_err(|e| e.to_string())?;
            eval(a)?
        }
    })
}

/// The explicit collation of an expression (`x COLLATE name`), if any.
pub fn expr_collation(e: &E) -> Option<Collation> {
    match e {
        E::Collate(_, c) => Collation::from_name(c).ok(),
        _ => None,
    }
}

/// A binary operator's collation: the left operand's explicit one, else the right's.
pub fn binary_collation(a: &E, b: &E) -> Collation {
    expr_collation(a)
        .or_else(|| expr_collation(b))
        .unwrap_or_default()
}

/// The affinity SQLite gives an expression: CAST has its target's; everything else in
/// these tests (bound parameters, functions, operators) has none.
pub fn expr_affinity(e: &E) -> Option<Affinity> {
    match e {
        E::Cast(_, t) => Some(affinity_of_type_name(t)),
        _ => None,
    }
}

pub fn to_rusqlite(v: &Value) -> rusqlite::types::Value {
    use rusqlite::types::Value as S;
    match v {
        Value::Null => S::Null,
        Value::Integer(i) => S::Integer(*i),
        Value::Real(r) => S::Real(*r),
        Value::Text(t) => S::Text(t.to_string()),
        Value::Blob(b) => S::Blob(b.to_vec()),
    }
}

pub fn from_ref(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Integer(i),
        ValueRef::Real(r) => Value::Real(r),
        ValueRef::Text(t) => Value::text_from_bytes(t),
        ValueRef::Blob(b) => Value::blob(b.to_vec()),
    }
}

pub fn query_row(conn: &Connection, sql: &str, params: &[Value]) -> Result<Vec<Value>, String> {
    let mut stmt = conn.prepare_cached(sql).map_err(err_msg)?;
    let n = stmt.column_count();
    let p: Vec<rusqlite::types::Value> = params.iter().map(to_rusqlite).collect();
    let mut rows = stmt
        .query(rusqlite::params_from_iter(p.iter()))
        .map_err(err_msg)?;
    let row = rows.next().map_err(err_msg)?.ok_or("no row")?;
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        out.push(from_ref(row.get_ref(i).map_err(err_msg)?));
    }
    Ok(out)
}

pub fn err_msg(e: rusqlite::Error) -> String {
    match e {
        rusqlite::Error::SqliteFailure(_, Some(m)) => m,
        other => other.to_string(),
    }
}

pub fn oracle(conn: &Connection, e: &E) -> (String, Vec<Value>, Result<Value, String>) {
    let mut params = Vec::new();
    let sql = format!("SELECT {}", render(e, &mut params));
    let r = query_row(conn, &sql, &params).map(|mut v| v.remove(0));
    (sql, params, r)
}

pub fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Real(x), Value::Real(y)) => x.to_bits() == y.to_bits() || (x == y && *x == 0.0),
        _ => a == b,
    }
}

pub struct Checker {
    pub conn: Connection,
    pub failures: Vec<String>,
    pub checked: usize,
}

impl Checker {
    pub fn new() -> Self {
        let conn = Connection::open_in_memory().expect("open oracle");
        conn.set_prepared_statement_cache_capacity(256);
        Checker {
            conn,
            failures: Vec::new(),
            checked: 0,
        }
    }

    pub fn check(&mut self, e: &E) {
        let (sql, params, want) = oracle(&self.conn, e);
        if diverges_by_design(&sql, &params) {
            return;
        }
        self.checked += 1;
        let got = eval(e);
        let ok = match (&want, &got) {
            (Ok(w), Ok(g)) => same(w, g) || both_replaced(w, g),
            (Err(w), Err(g)) => w == g,
            _ => false,
        };
        if !ok && self.failures.len() < 60 {
            self.failures.push(format!(
                "{sql}  params={params:?}\n    sqlite:  {want:?}\n    parlite: {got:?}"
            ));
        } else if !ok {
            self.failures.push(String::new());
        }
    }

    pub fn finish(self, what: &str) {
        if !self.failures.is_empty() {
            let shown: Vec<&String> = self.failures.iter().filter(|s| !s.is_empty()).collect();
            panic!(
                "{what}: {} of {} cases differ from SQLite:\n{}",
                self.failures.len(),
                self.checked,
                shown
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join("\n")
            );
        }
        eprintln!("{what}: {} cases agree with SQLite", self.checked);
    }
}

/// parlite keeps text valid UTF-8 (value invariant 2): where SQLite would build text from
/// the raw bytes of an invalid-UTF-8 blob, parlite converts the blob lossily first, so
/// results differ by design. Such cases are skipped. Surrogate code points in char() are
/// the same story (SQLite emits invalid UTF-8 for them).
pub fn diverges_by_design(sql: &str, params: &[Value]) -> bool {
    const TEXT_BUILDERS: &[&str] = &[
        "trim(",
        "concat",
        "char(",
        "upper(",
        "lower(",
        "replace(",
        "printf(",
        "||",
        "group_concat",
        "string_agg",
        "unhex(",
        "AS TEXT",
    ];
    let invalid_blob = params
        .iter()
        .any(|v| matches!(v, Value::Blob(b) if std::str::from_utf8(b).is_err()));
    let surrogate = sql.starts_with("SELECT char(")
        && params
            .iter()
            .any(|v| (0xd800..0xe000).contains(&v.to_i64()));
    (invalid_blob && TEXT_BUILDERS.iter().any(|f| sql.contains(f))) || surrogate
}

/// SQLite produced invalid UTF-8 (seen here through lossy decoding as U+FFFD) and parlite,
/// which keeps text valid, substituted U+FFFD too: equal by design, if not byte for byte.
pub fn both_replaced(want: &Value, got: &Value) -> bool {
    matches!((want, got), (Value::Text(w), Value::Text(g)) if w.contains('\u{fffd}') && g.contains('\u{fffd}'))
}

pub fn seed() -> u64 {
    std::env::var("PARLITE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_1234)
}

pub fn cases(default: usize) -> usize {
    let scale: f64 = std::env::var("PARLITE_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    ((default as f64) * scale) as usize
}

// ---------------------------------------------------------------------------------------
// Random inputs

/// Text that is, or nearly is, a number: the interesting cases of SQLite's text→number.
pub fn numeric_text(rng: &mut StdRng) -> String {
    let mut s = String::new();
    let spaces = [" ", "  ", "\t", "\n", ""];
    if rng.gen_bool(0.2) {
        s.push_str(spaces[rng.gen_range(0..spaces.len())]);
    }
    match rng.gen_range(0..4) {
        0 => s.push('-'),
        1 => s.push('+'),
        _ => {}
    }
    let ndig = match rng.gen_range(0..10) {
        0 => 0,
        1 => rng.gen_range(18..22),
        _ => rng.gen_range(1..6),
    };
    for i in 0..ndig {
        let d = if i == 0 && rng.gen_bool(0.3) {
            9
        } else {
            rng.gen_range(0..10)
        };
        s.push(char::from(b'0' + d as u8));
    }
    if rng.gen_bool(0.3) {
        s.push('.');
        for _ in 0..rng.gen_range(0..5) {
            s.push(char::from(b'0' + rng.gen_range(0..10u8)));
        }
    }
    if rng.gen_bool(0.2) {
        s.push(if rng.gen_bool(0.5) { 'e' } else { 'E' });
        match rng.gen_range(0..3) {
            0 => s.push('-'),
            1 => s.push('+'),
            _ => {}
        }
        for _ in 0..rng.gen_range(0..4) {
            s.push(char::from(b'0' + rng.gen_range(0..10u8)));
        }
    }
    if rng.gen_bool(0.1) {
        // Far exponents, where SQLite's scaling differs from correctly rounded parsing.
        s.push_str(&format!("e{}", rng.gen_range(-330..330)));
    }
    if rng.gen_bool(0.2) {
        s.push_str(spaces[rng.gen_range(0..spaces.len())]);
    }
    if rng.gen_bool(0.15) {
        let junk = ["abc", "x", "0x1F", ".", "e", " 1", "\u{e9}"];
        s.push_str(junk[rng.gen_range(0..junk.len())]);
    }
    if rng.gen_bool(0.05) {
        s = [
            "9223372036854775807",
            "9223372036854775808",
            "-9223372036854775808",
            "-9223372036854775809",
            "0x10",
            "1e308",
            "1e309",
            "-0",
            "0.0",
            ".5",
            "5.",
            "1e-400",
        ][rng.gen_range(0..12)]
        .to_string();
    }
    s
}

pub fn random_real(rng: &mut StdRng) -> f64 {
    match rng.gen_range(0..8) {
        0 => f64::from_bits(rng.gen::<u64>()),
        1 => {
            rng.gen_range(-1000..1000) as f64 / [1.0, 10.0, 100.0, 1000.0, 8.0][rng.gen_range(0..5)]
        }
        2 => rng.gen_range(-1e20..1e20),
        3 => rng.gen_range(-1.0..1.0) * 10f64.powi(rng.gen_range(-30..30)),
        4 => [
            0.0,
            -0.0,
            0.5,
            1.5,
            2.5,
            -2.5,
            0.1,
            0.3,
            1e15,
            1e16,
            9.223372036854775807e18,
            4503599627370496.5,
            1.0 / 3.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MAX,
            f64::MIN_POSITIVE,
            5e-324,
        ][rng.gen_range(0..18)],
        5 => (rng.gen_range(-100000..100000) as f64) + 0.5,
        6 => rng.gen_range(-1e6..1e6),
        _ => rng.gen::<f64>(),
    }
}

pub fn random_int(rng: &mut StdRng) -> i64 {
    match rng.gen_range(0..6) {
        0 => rng.gen(),
        1 => rng.gen_range(-10..10),
        2 => [
            i64::MIN,
            i64::MAX,
            i64::MIN + 1,
            i64::MAX - 1,
            1 << 53,
            (1 << 53) + 1,
            -(1 << 53) - 1,
            1 << 62,
            0,
        ][rng.gen_range(0..9)],
        3 => rng.gen_range(-100000..100000),
        _ => rng.gen_range(-1000..1000),
    }
}

pub fn random_text(rng: &mut StdRng) -> String {
    match rng.gen_range(0..6) {
        0 | 1 => numeric_text(rng),
        2 => {
            let words = [
                "",
                "a",
                "abc",
                "Hello",
                "hello world",
                "  padded  ",
                "x'y",
                "é",
                "ünïcödé",
                "a_b%c",
                "[x]",
                "tab\there",
                "A",
                "ZZ",
            ];
            words[rng.gen_range(0..words.len())].to_string()
        }
        _ => {
            let alphabet = ['a', 'b', 'A', 'B', ' ', '%', '_', '1', 'é', '\''];
            (0..rng.gen_range(0..6))
                .map(|_| alphabet[rng.gen_range(0..alphabet.len())])
                .collect()
        }
    }
}

pub fn random_value(rng: &mut StdRng) -> Value {
    match rng.gen_range(0..10) {
        0 => Value::Null,
        1..=3 => Value::Integer(random_int(rng)),
        // Value::real: a NaN bit pattern is NULL, as SQLite binds it.
        4 | 5 => Value::real(random_real(rng)),
        6..=8 => Value::text(random_text(rng)),
        _ => {
            if rng.gen_bool(0.5) {
                Value::blob(random_text(rng).into_bytes())
            } else {
                Value::blob(
                    (0..rng.gen_range(0..5))
                        .map(|_| rng.gen::<u8>())
                        .collect::<Vec<u8>>(),
                )
            }
        }
    }
}
