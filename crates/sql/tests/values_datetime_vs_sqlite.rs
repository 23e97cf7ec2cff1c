//! Date and time functions against SQLite (the `rusqlite` bundled library): random time
//! values and modifiers through date/time/datetime/julianday/unixepoch/strftime/timediff.
//! PARLITE_SEED and PARLITE_CASES as in values_vs_sqlite.rs.
// Test inputs spell out SQLite's boundary values digit for digit.
#![allow(clippy::excessive_precision)]

mod values_support;
use values_support::*;

// ---------------------------------------------------------------------------------------
// Date and time functions

fn random_time_value(rng: &mut StdRng) -> Value {
    let y = match rng.gen_range(0..6) {
        0 => rng.gen_range(0..10000),
        1 => [0, 1, 1582, 1900, 2000, 2024, 9999, 1970, 2038][rng.gen_range(0..9)],
        _ => rng.gen_range(1960..2040),
    };
    let mo = if rng.gen_bool(0.95) {
        rng.gen_range(1..13)
    } else {
        rng.gen_range(0..15)
    };
    let d = if rng.gen_bool(0.9) {
        rng.gen_range(1..32)
    } else {
        rng.gen_range(0..34)
    };
    let date = format!("{y:04}-{mo:02}-{d:02}");
    let time = match rng.gen_range(0..5) {
        0 => format!("{:02}:{:02}", rng.gen_range(0..25), rng.gen_range(0..60)),
        1 => format!(
            "{:02}:{:02}:{:02}",
            rng.gen_range(0..24),
            rng.gen_range(0..60),
            rng.gen_range(0..60)
        ),
        2 => format!(
            "{:02}:{:02}:{:02}.{}",
            rng.gen_range(0..24),
            rng.gen_range(0..60),
            rng.gen_range(0..60),
            rng.gen_range(0..100000)
        ),
        _ => String::new(),
    };
    let tz = match rng.gen_range(0..8) {
        0 => "Z".to_string(),
        1 => format!(
            "{}{:02}:{:02}",
            if rng.gen_bool(0.5) { '+' } else { '-' },
            rng.gen_range(0..15),
            rng.gen_range(0..60)
        ),
        2 => " +05:30".to_string(),
        _ => String::new(),
    };
    match rng.gen_range(0..12) {
        0 => Value::real(rng.gen_range(0.0..5373484.0)),
        1 => Value::Integer(rng.gen_range(-100_000_000_000i64..300_000_000_000)),
        2 => Value::real(rng.gen_range(-1e10..1e10)),
        3 => Value::text(if time.is_empty() {
            "12:30".to_string()
        } else {
            format!("{time}{tz}")
        }),
        4 => Value::text(
            [
                "2000-01-01",
                "-0044-03-15 12:00",
                "2024-02-29 23:59:59.999",
                "1970-01-01 00:00:00",
                "bogus",
                "",
                "2451545.0",
                "1700000000",
                "2023-02-31",
                " 2020-05-05",
                "2020-05-05 ",
                "2020-5-5",
                "9999-12-31 23:59:59.999",
                "0000-01-01",
            ][rng.gen_range(0..14)],
        ),
        5 => Value::text(format!("{date}T{time}{tz}")),
        _ => Value::text(if time.is_empty() {
            date
        } else {
            format!("{date} {time}{tz}")
        }),
    }
}

fn random_modifier(rng: &mut StdRng, allow_local: bool) -> Value {
    let units = [
        "day", "days", "hour", "hours", "minute", "minutes", "second", "seconds", "month",
        "months", "year", "years", "DAYS", "week",
    ];
    let m = match rng.gen_range(0..16) {
        0 | 1 => format!(
            "{}{} {}",
            ["+", "-", ""][rng.gen_range(0..3)],
            rng.gen_range(0..400),
            units[rng.gen_range(0..units.len())]
        ),
        2 => format!(
            "{:+.3} {}",
            rng.gen_range(-50.0..50.0),
            units[rng.gen_range(0..units.len())]
        ),
        3 => [
            "start of month",
            "start of year",
            "start of day",
            "start of week",
            "START OF MONTH",
        ][rng.gen_range(0..5)]
        .to_string(),
        4 => format!("weekday {}", rng.gen_range(0..8)),
        5 => ["unixepoch", "julianday", "auto"][rng.gen_range(0..3)].to_string(),
        6 => ["floor", "ceiling", "subsec", "subsecond"][rng.gen_range(0..4)].to_string(),
        7 => format!(
            "{}{:02}:{:02}",
            ["+", "-"][rng.gen_range(0..2)],
            rng.gen_range(0..30),
            rng.gen_range(0..60)
        ),
        8 => format!(
            "{}{:02}:{:02}:{:02}.{:03}",
            ["+", "-"][rng.gen_range(0..2)],
            rng.gen_range(0..24),
            rng.gen_range(0..60),
            rng.gen_range(0..60),
            rng.gen_range(0..1000)
        ),
        9 => format!(
            "{}{:04}-{:02}-{:02}",
            ["+", "-"][rng.gen_range(0..2)],
            rng.gen_range(0..20),
            rng.gen_range(0..13),
            rng.gen_range(0..32)
        ),
        10 => format!(
            "+{:04}-{:02}-{:02} {:02}:{:02}",
            rng.gen_range(0..3),
            rng.gen_range(0..12),
            rng.gen_range(0..31),
            rng.gen_range(0..24),
            rng.gen_range(0..60)
        ),
        11 => format!("{} months", rng.gen_range(-30.0..30.0f64)),
        12 if allow_local => ["localtime", "utc"][rng.gen_range(0..2)].to_string(),
        13 => ["bogus", "", "+", "1", "+1", "+1 fortnight", "weekday 1.5"][rng.gen_range(0..7)]
            .to_string(),
        _ => format!("{} days", rng.gen_range(-1000..1000)),
    };
    Value::text(m)
}

#[test]
fn generated_datetime() {
    let mut rng = StdRng::seed_from_u64(seed() ^ 10);
    let mut c = Checker::new();
    // localtime/utc agree only when the oracle's time zone is UTC (parlite's default).
    let offset = query_row(
        &c.conn,
        "SELECT julianday('2020-06-01 12:00','localtime') - julianday('2020-06-01 12:00')",
        &[],
    )
    .map(|v| v[0].to_f64())
    .unwrap_or(1.0);
    let allow_local = offset == 0.0;
    let funcs = [
        "date",
        "time",
        "datetime",
        "julianday",
        "unixepoch",
        "strftime",
        "timediff",
    ];
    let convs = "defFGgHkIjJlmMpPRsSTuwUVWY%";
    for _ in 0..cases(8_000) {
        let f = funcs[rng.gen_range(0..funcs.len())];
        let mut args: Vec<E> = Vec::new();
        if f == "strftime" {
            let mut fmt = String::new();
            for _ in 0..rng.gen_range(1..5) {
                if rng.gen_bool(0.2) {
                    fmt.push_str("x ");
                }
                fmt.push('%');
                let cs: Vec<char> = convs.chars().collect();
                fmt.push(if rng.gen_bool(0.97) {
                    cs[rng.gen_range(0..cs.len())]
                } else {
                    'Q'
                });
            }
            args.push(lit(fmt));
        }
        if f == "timediff" {
            args.push(lit(random_time_value(&mut rng)));
            args.push(lit(random_time_value(&mut rng)));
        } else {
            args.push(lit(random_time_value(&mut rng)));
            for _ in 0..rng.gen_range(0..3) {
                args.push(lit(random_modifier(&mut rng, allow_local)));
            }
        }
        c.check(&E::Call(f, args));
    }
    for (f, args) in [
        ("date", vec!["2024-01-31", "+1 month"]),
        ("date", vec!["2024-01-31", "+1 month", "floor"]),
        ("date", vec!["2024-03-31", "-1 month", "ceiling"]),
        ("datetime", vec!["1700000000", "unixepoch"]),
        ("datetime", vec!["2460000.5"]),
        ("unixepoch", vec!["2024-01-01 00:00:00.123", "subsec"]),
        ("strftime", vec!["%V %G %g %U %W", "2021-01-03"]),
        ("strftime", vec!["%s", "2024-01-01 00:00:00.5", "subsec"]),
        ("timediff", vec!["2024-03-01", "2024-01-31"]),
        ("timediff", vec!["2023-01-01", "2024-06-15 12:30:45.5"]),
        ("date", vec!["2000-01-01", "weekday 0"]),
        ("date", vec!["-4713-11-24 12:00:00"]),
        ("datetime", vec!["0000-01-01 00:00", "-1 second"]),
        ("julianday", vec!["2000-01-01 12:00"]),
    ] {
        c.check(&E::Call(f, args.into_iter().map(lit).collect()));
    }
    c.finish("datetime");
}

/// 'now' comes from the context (the system clock by default): it must agree with
/// SQLite's clock to within a second, and CURRENT_* with their date/time forms.
#[test]
fn now_agrees_with_sqlite() {
    let conn = Connection::open_in_memory().expect("open");
    let theirs = query_row(&conn, "SELECT julianday('now')", &[]).expect("now")[0].to_f64();
    let ours = func::call_scalar("julianday", &[Value::text("now")], &NoConnection)
        .expect("julianday")
        .to_f64();
    assert!(
        (theirs - ours).abs() < 1.0 / 86400.0,
        "julianday('now'): sqlite {theirs}, parlite {ours}"
    );
    let d = func::call_scalar("current_date", &[], &NoConnection).expect("current_date");
    let t = func::call_scalar("date", &[Value::text("now")], &NoConnection).expect("date");
    assert_eq!(d, t);
}
