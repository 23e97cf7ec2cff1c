//! The `localtime` and `utc` modifiers under real time zones, against the stock `sqlite3`
//! shell run with `TZ` set (SQLite asks the C library, which reads the same zoneinfo
//! files). Skipped when the shell or /usr/share/zoneinfo is missing.

use parlite_sql::func::tz::Zone;
use parlite_sql::func::{self, FunctionContext};
use parlite_sql::value::Value;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::io::Write;
use std::process::{Command, Stdio};

struct InZone(Zone);

impl FunctionContext for InZone {
    fn changes(&self) -> i64 {
        0
    }
    fn total_changes(&self) -> i64 {
        0
    }
    fn last_insert_rowid(&self) -> i64 {
        0
    }
    fn local_offset_seconds(&self, unix_time_s: i64) -> i64 {
        self.0.offset_at(unix_time_s)
    }
}

fn shell(tz: &str, sql: String) -> Option<Vec<String>> {
    let mut child = Command::new("sqlite3")
        .arg(":memory:")
        .env("TZ", tz)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .ok()?;
    let mut stdin = child.stdin.take()?;
    let writer = std::thread::spawn(move || stdin.write_all(sql.as_bytes()));
    let out = child.wait_with_output().ok()?;
    writer.join().ok()?.ok()?;
    Some(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect(),
    )
}

#[test]
fn localtime_matches_sqlite_shell() {
    assert!(
        Command::new("sqlite3").arg("--version").output().is_ok()
            && std::path::Path::new("/usr/share/zoneinfo/America/New_York").exists(),
        "this test needs the stock sqlite3 shell and /usr/share/zoneinfo: apt-get install sqlite3 tzdata"
    );
    // The zone really shifts times (the comparison below would also pass if both sides
    // silently fell back to UTC).
    let ny = InZone(Zone::load("America/New_York").expect("zone"));
    let summer = func::call_scalar(
        "datetime",
        &[
            Value::Integer(1625140800),
            Value::text("unixepoch"),
            Value::text("localtime"),
        ],
        &ny,
    );
    assert_eq!(summer, Ok(Value::text("2021-07-01 08:00:00")));
    let mut rng = StdRng::seed_from_u64(0x7a);
    for tz in [
        "America/New_York",
        "Europe/Berlin",
        "Australia/Sydney",
        "Asia/Kolkata",
        "America/Sao_Paulo",
        "UTC",
        "EST5EDT,M3.2.0,M11.1.0",
        "<+0330>-3:30",
    ] {
        let Some(zone) = Zone::load(tz) else {
            panic!("cannot load zone {tz}");
        };
        let ctx = InZone(zone);
        let mut sql = String::new();
        let mut ours = Vec::new();
        for _ in 0..400 {
            let t: i64 = match rng.gen_range(0..3) {
                0 => rng.gen_range(0..2_147_000_000),
                1 => rng.gen_range(-2_208_988_800..4_102_444_800), // 1900..2100
                _ => rng.gen_range(1_600_000_000..1_700_000_000),
            };
            let (f, args): (&str, Vec<Value>) = if rng.gen_bool(0.5) {
                (
                    "datetime",
                    vec![
                        Value::Integer(t),
                        Value::text("unixepoch"),
                        Value::text("localtime"),
                    ],
                )
            } else {
                // A local time read back to UTC.
                let local = func::call_scalar(
                    "datetime",
                    &[Value::Integer(t), Value::text("unixepoch")],
                    &ctx,
                )
                .expect("datetime");
                ("datetime", vec![local, Value::text("utc")])
            };
            let lits: Vec<String> = args
                .iter()
                .map(|v| match v {
                    Value::Integer(i) => i.to_string(),
                    other => format!("'{}'", other.to_text_or_empty()),
                })
                .collect();
            sql.push_str(&format!("SELECT {f}({});\n", lits.join(", ")));
            ours.push((
                format!("{f}({})", lits.join(", ")),
                func::call_scalar(f, &args, &ctx).expect("call"),
            ));
        }
        let lines = shell(tz, sql).expect("run sqlite3");
        assert_eq!(lines.len(), ours.len());
        let bad: Vec<String> = ours
            .iter()
            .zip(&lines)
            .filter(|((_, got), want)| got.to_text_or_empty() != want.as_str())
            .map(|((call, got), want)| format!("TZ={tz} {call}: sqlite3 {want}, parlite {got:?}"))
            .collect();
        assert!(
            bad.is_empty(),
            "{} differ:\n{}",
            bad.len(),
            bad.iter().take(10).cloned().collect::<Vec<_>>().join("\n")
        );
    }
}
