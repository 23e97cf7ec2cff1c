//! Real literals read as SQLite reads them (sqlite3AtoF), whose last bit differs from a
//! correctly rounded parse for some long or far-exponent literals (`1e-300` is
//! 9.999999999999999e-301 in SQLite). Seeded literals, negated too, compared with SQLite
//! through `printf('%.17g')` and as stored values.

mod common;

use common::Rng;

impl Rng {
    fn real_literal(&mut self) -> String {
        let digits: String = (0..1 + self.below(20))
            .map(|_| char::from(b'0' + self.below(10) as u8))
            .collect();
        let mantissa = if self.below(2) == 0 {
            let k = self.below(digits.len() as u64 + 1) as usize;
            let m = format!("{}.{}", &digits[..k], &digits[k..]);
            if m == "." {
                "0.5".to_string()
            } else {
                m
            }
        } else {
            digits
        };
        let exponent = match self.below(4) {
            0 => String::new(),
            1 => format!("e{}", self.below(650) as i64 - 330),
            2 => format!("e{}", self.below(61) as i64 - 30),
            _ => format!("E+{}", self.below(31)),
        };
        format!("{mantissa}{exponent}")
    }
}

#[test]
fn real_literals_match_sqlite() {
    common::assert_no_mismatches(common::seeded_mismatches(
        |_| vec!["CREATE TABLE t(x REAL, y)".to_string()],
        |rng| {
            let (a, b) = (rng.real_literal(), rng.real_literal());
            if rng.below(4) == 0 {
                format!("INSERT INTO t VALUES ({a}, -{b})")
            } else {
                format!("SELECT printf('%.17g', {a}), printf('%.17g', -{b}), {a} = -(-{a})")
            }
        },
        2000,
    ));
}

#[test]
fn stored_real_literals_match_sqlite() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(x REAL)",
        "INSERT INTO t VALUES (1e-300), (672e-299), (0.4e-208), (90625e242), (8.72818084379e136)",
        "SELECT printf('%.17g', x) FROM t",
        "SELECT count(*) FROM t WHERE x = 1e-300",
    ]));
}
