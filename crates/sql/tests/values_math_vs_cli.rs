//! The math functions against the stock `sqlite3` command-line shell, which (unlike the
//! SQLite bundled with rusqlite) is built with SQLITE_ENABLE_MATH_FUNCTIONS. Skipped with a
//! message when no `sqlite3` with math functions is on PATH.
//!
//! Arguments are written as SQL literals; parlite reads the same literal text with its
//! copy of SQLite's text→number conversion, so both sides see the same doubles. Results
//! are compared through quote(), which round-trips reals: the shell's text is read back as
//! a double (its quote() prints more digits than SQLite 3.50's, so the text differs).
//! The shell's log10/log2 may be computed from ln() (builds without HAVE_LOG10), a few
//! ulps away from the C99 functions SQLite 3.50 uses by default, so the log family is
//! allowed four ulps.

use parlite_sql::func::{self, scalar::quote_value, NoConnection};
use parlite_sql::value::{num, Value};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::io::Write;
use std::process::{Command, Stdio};

fn cli_available() -> bool {
    Command::new("sqlite3")
        .args([":memory:", "SELECT pi();"])
        .output()
        .map(|o| o.status.success() && String::from_utf8_lossy(&o.stdout).starts_with("3.14"))
        .unwrap_or(false)
}

fn literal_value(lit: &str) -> Value {
    if let Some(t) = lit.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')) {
        return Value::text(t);
    }
    if lit == "NULL" {
        return Value::Null;
    }
    let (r, class) = num::atof(lit.as_bytes());
    match class {
        num::NumClass::Integer => match num::atoi64(lit.as_bytes()) {
            (i, num::IntParse::Exact) => Value::Integer(i),
            _ => Value::real(r),
        },
        _ => Value::real(r),
    }
}

fn random_literal(rng: &mut StdRng) -> String {
    match rng.gen_range(0..9) {
        0 => rng.gen_range(-20..20).to_string(),
        1 => format!("{:.3}", rng.gen_range(-10.0..10.0)),
        2 => format!("{:.6}", rng.gen_range(-1.0..1.0)),
        3 => format!("{}e{}", rng.gen_range(1..99), rng.gen_range(-20..20)),
        4 => [
            "0",
            "1",
            "-1",
            "0.5",
            "-0.5",
            "2",
            "1e308",
            "-1e308",
            "9223372036854775807",
        ][rng.gen_range(0..9)]
        .to_string(),
        5 => ["'abc'", "'8abc'", "' 4 '", "'1e2'", "NULL", "''", "'-3.5'"][rng.gen_range(0..7)]
            .to_string(),
        6 => format!("{:.1}", rng.gen_range(-1000.0..1000.0)),
        _ => format!("{:.15}", rng.gen_range(0.0..3.2)),
    }
}

#[test]
fn math_functions_match_sqlite_cli() {
    assert!(
        cli_available(),
        "this test needs the stock sqlite3 shell (with math functions) on PATH: apt-get install sqlite3"
    );
    let mut rng = StdRng::seed_from_u64(0x3a7b);
    let funcs: &[(&str, usize)] = &[
        ("acos", 1),
        ("acosh", 1),
        ("asin", 1),
        ("asinh", 1),
        ("atan", 1),
        ("atan2", 2),
        ("atanh", 1),
        ("ceil", 1),
        ("ceiling", 1),
        ("cos", 1),
        ("cosh", 1),
        ("degrees", 1),
        ("exp", 1),
        ("floor", 1),
        ("ln", 1),
        ("log", 1),
        ("log", 2),
        ("log10", 1),
        ("log2", 1),
        ("mod", 2),
        ("pi", 0),
        ("pow", 2),
        ("power", 2),
        ("radians", 1),
        ("sin", 1),
        ("sinh", 1),
        ("sqrt", 1),
        ("tan", 1),
        ("tanh", 1),
        ("trunc", 1),
    ];
    let mut sql = String::new();
    let mut ours = Vec::new();
    for _ in 0..3000 {
        let (name, n) = funcs[rng.gen_range(0..funcs.len())];
        let lits: Vec<String> = (0..n).map(|_| random_literal(&mut rng)).collect();
        let args: Vec<Value> = lits.iter().map(|l| literal_value(l)).collect();
        let call = format!("{name}({})", lits.join(", "));
        // The shell's ieee754_mantissa/exponent give the exact double; quote() the rest.
        sql.push_str(&format!(
            "SELECT typeof(v), ieee754_mantissa(v), ieee754_exponent(v), quote(v) FROM (SELECT {call} AS v);\n"
        ));
        ours.push((call, func::call_scalar(name, &args, &NoConnection)));
    }
    let mut child = Command::new("sqlite3")
        .arg(":memory:")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn sqlite3");
    // Feed stdin from a thread: writing everything first would deadlock once the shell's
    // output fills the pipe.
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || stdin.write_all(sql.as_bytes()));
    let out = child.wait_with_output().expect("sqlite3 output");
    writer
        .join()
        .expect("writer thread")
        .expect("write to sqlite3");
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), ours.len(), "one output line per query");
    let mut bad = Vec::new();
    for ((call, got), line) in ours.iter().zip(lines) {
        let f: Vec<&str> = line.split('|').collect();
        let ok = match (got, f.as_slice()) {
            (Ok(Value::Real(g)), ["real", _, _, q]) if g.is_infinite() => {
                (q.trim_start_matches('-') == "Inf") && (q.starts_with('-') == (*g < 0.0))
            }
            (Ok(Value::Real(g)), ["real", m, e, _]) => {
                let (m, e): (i64, i32) = (m.parse().unwrap_or(0), e.parse().unwrap_or(0));
                let want = if e < -1000 {
                    (m as f64 * 2f64.powi(e + 1000)) * 2f64.powi(-1000)
                } else {
                    m as f64 * 2f64.powi(e)
                };
                let ulps = (i128::from(want.to_bits()) - i128::from(g.to_bits())).unsigned_abs();
                // The shell reports both zeros as 1*2^-3071: the sign is not comparable.
                ulps == 0 || (want == 0.0 && *g == 0.0) || (call.starts_with("log") && ulps <= 4)
            }
            (Ok(v), [t, _, _, q]) => v.type_name() == *t && quote_value(v) == *q,
            _ => false,
        };
        if !ok {
            bad.push(format!("{call}: sqlite3 {line}, parlite {got:?}"));
        }
    }
    assert!(
        bad.is_empty(),
        "{} of {} differ:\n{}",
        bad.len(),
        ours.len(),
        bad.iter().take(30).cloned().collect::<Vec<_>>().join("\n")
    );
}
