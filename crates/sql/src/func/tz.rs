//! The system's local time zone, for the `localtime` and `utc` date modifiers.
//!
//! SQLite asks the C library (`localtime_r`), which follows the `TZ` environment variable
//! or `/etc/localtime`. parlite reads the same sources itself: a TZif file (RFC 8536,
//! versions 1-4) found through `TZ` (`:path`, `Area/City`, or an absolute path) or
//! `/etc/localtime`, and the POSIX TZ rule string (`EST5EDT,M3.2.0,M11.1.0`) either in
//! `TZ` itself or in the TZif footer for instants past the file's last transition.
//! Anything missing or malformed falls back to UTC, as glibc does.
//!
//! Invariant: lookups are total (no panics on any file content) and the zone is loaded
//! once per process.

use std::sync::OnceLock;

/// A POSIX TZ rule: standard offset, and optionally a daylight-saving offset with the
/// rules for entering and leaving it. Offsets are seconds east of UTC.
#[derive(Debug, Clone, PartialEq)]
pub struct PosixTz {
    std_offset: i64,
    dst: Option<(i64, Rule, Rule)>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum DateRule {
    /// `Jn`: day 1..=365, February 29 never counted.
    Julian1(i64),
    /// `n`: day 0..=365, February 29 counted in leap years.
    Julian0(i64),
    /// `Mm.w.d`: day `d` (0 = Sunday) of week `w` (5 = last) of month `m`.
    MonthWeekDay(i64, i64, i64),
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Rule {
    date: DateRule,
    /// Seconds after local midnight (may be negative or past 24h in TZif v3+).
    time: i64,
}

/// A loaded time zone.
#[derive(Debug, Clone)]
pub struct Zone {
    /// Transition instants (unix seconds) and the offset in effect from each.
    transitions: Vec<(i64, i64)>,
    /// Offset before the first transition.
    initial_offset: i64,
    footer: Option<PosixTz>,
}

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    // Howard Hinnant's algorithm: days since 1970-01-01 of a proleptic Gregorian date.
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

fn year_of(unix_s: i64) -> i64 {
    // Inverse of days_from_civil for the year only.
    let z = unix_s.div_euclid(86400) + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    yoe + era * 400 + i64::from(m <= 2)
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

impl Rule {
    /// The rule's instant in year `y`, as unix seconds, given the offset in effect
    /// before the change.
    fn instant(&self, y: i64, offset_before: i64) -> i64 {
        let day = match self.date {
            DateRule::Julian1(n) => {
                // Days 1..=365 skipping February 29.
                let mut d = n - 1;
                if is_leap(y) && n >= 60 {
                    d += 1;
                }
                days_from_civil(y, 1, 1) + d
            }
            DateRule::Julian0(n) => days_from_civil(y, 1, 1) + n,
            DateRule::MonthWeekDay(m, w, wd) => {
                let first = days_from_civil(y, m, 1);
                let first_wd = (first + 4).rem_euclid(7); // 1970-01-01 was a Thursday.
                let mut d = 1 + (wd - first_wd).rem_euclid(7) + (w - 1) * 7;
                while d > days_in_month(y, m) {
                    d -= 7;
                }
                first + d - 1
            }
        };
        day * 86400 + self.time - offset_before
    }
}

impl PosixTz {
    /// Parses a POSIX TZ string; None when malformed.
    pub fn parse(s: &str) -> Option<PosixTz> {
        let b = s.as_bytes();
        let mut i = 0;
        let name = |i: &mut usize| -> Option<()> {
            if b.get(*i) == Some(&b'<') {
                let end = b[*i..].iter().position(|&c| c == b'>')?;
                *i += end + 1;
            } else {
                let start = *i;
                while b.get(*i).is_some_and(u8::is_ascii_alphabetic) {
                    *i += 1;
                }
                if *i - start < 3 {
                    return None;
                }
            }
            Some(())
        };
        // [+-]hh[:mm[:ss]] in seconds.
        let hms = |i: &mut usize| -> Option<i64> {
            let sign = match b.get(*i) {
                Some(b'-') => {
                    *i += 1;
                    -1
                }
                Some(b'+') => {
                    *i += 1;
                    1
                }
                _ => 1,
            };
            let mut parts = [0i64; 3];
            for (k, part) in parts.iter_mut().enumerate() {
                if k > 0 {
                    if b.get(*i) != Some(&b':') {
                        break;
                    }
                    *i += 1;
                }
                let start = *i;
                while b.get(*i).is_some_and(u8::is_ascii_digit) && *i - start < 3 {
                    *part = *part * 10 + i64::from(b[*i] - b'0');
                    *i += 1;
                }
                if *i == start {
                    return None;
                }
            }
            Some(sign * (parts[0] * 3600 + parts[1] * 60 + parts[2]))
        };
        let num = |i: &mut usize| -> Option<i64> {
            let start = *i;
            let mut v = 0i64;
            while b.get(*i).is_some_and(u8::is_ascii_digit) && *i - start < 4 {
                v = v * 10 + i64::from(b[*i] - b'0');
                *i += 1;
            }
            (*i > start).then_some(v)
        };
        let rule = |i: &mut usize| -> Option<Rule> {
            let date = match b.get(*i) {
                Some(b'J') => {
                    *i += 1;
                    DateRule::Julian1(num(i)?.clamp(1, 365))
                }
                Some(b'M') => {
                    *i += 1;
                    let m = num(i)?;
                    if b.get(*i) != Some(&b'.') {
                        return None;
                    }
                    *i += 1;
                    let w = num(i)?;
                    if b.get(*i) != Some(&b'.') {
                        return None;
                    }
                    *i += 1;
                    let d = num(i)?;
                    if !(1..=12).contains(&m) || !(1..=5).contains(&w) || d > 6 {
                        return None;
                    }
                    DateRule::MonthWeekDay(m, w, d)
                }
                _ => DateRule::Julian0(num(i)?.clamp(0, 365)),
            };
            let time = if b.get(*i) == Some(&b'/') {
                *i += 1;
                hms(i)?
            } else {
                7200
            };
            Some(Rule { date, time })
        };
        name(&mut i)?;
        // POSIX offsets count west of UTC; store east.
        let std_offset = -hms(&mut i)?;
        if i == b.len() {
            return Some(PosixTz {
                std_offset,
                dst: None,
            });
        }
        name(&mut i)?;
        let dst_offset = if matches!(b.get(i), Some(b',') | None) {
            std_offset + 3600
        } else {
            -hms(&mut i)?
        };
        let (start, end) = if b.get(i) == Some(&b',') {
            i += 1;
            let start = rule(&mut i)?;
            if b.get(i) != Some(&b',') {
                return None;
            }
            i += 1;
            (start, rule(&mut i)?)
        } else {
            // POSIX leaves the default rules to the implementation; glibc uses the US
            // rules.
            (
                Rule {
                    date: DateRule::MonthWeekDay(3, 2, 0),
                    time: 7200,
                },
                Rule {
                    date: DateRule::MonthWeekDay(11, 1, 0),
                    time: 7200,
                },
            )
        };
        if i != b.len() {
            return None;
        }
        Some(PosixTz {
            std_offset,
            dst: Some((dst_offset, start, end)),
        })
    }

    /// Offset east of UTC, in seconds, at `unix_s`.
    pub fn offset_at(&self, unix_s: i64) -> i64 {
        let Some((dst_offset, start, end)) = self.dst else {
            return self.std_offset;
        };
        // Keep the calendar arithmetic far from i64 overflow (±30 million years).
        let unix_s = unix_s.clamp(-1_000_000_000_000_000, 1_000_000_000_000_000);
        let y = year_of(unix_s);
        let begin = start.instant(y, self.std_offset);
        let finish = end.instant(y, dst_offset);
        let in_dst = if begin < finish {
            unix_s >= begin && unix_s < finish
        } else {
            // Southern hemisphere: DST spans the new year.
            unix_s < finish || unix_s >= begin
        };
        if in_dst {
            dst_offset
        } else {
            self.std_offset
        }
    }
}

fn be32(b: &[u8], at: usize) -> Option<i64> {
    let s = b.get(at..at + 4)?;
    Some(i64::from(i32::from_be_bytes([s[0], s[1], s[2], s[3]])))
}

fn be64(b: &[u8], at: usize) -> Option<i64> {
    let s = b.get(at..at + 8)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(s);
    Some(i64::from_be_bytes(a))
}

impl Zone {
    /// A zone with a fixed rule (from a TZ string).
    pub fn from_posix(tz: PosixTz) -> Zone {
        Zone {
            transitions: Vec::new(),
            initial_offset: tz.std_offset,
            footer: Some(tz),
        }
    }

    /// Parses TZif bytes; None when malformed.
    pub fn from_tzif(b: &[u8]) -> Option<Zone> {
        if b.get(0..4)? != b"TZif" {
            return None;
        }
        let version = *b.get(4)?;
        let counts = |at: usize| -> Option<[usize; 6]> {
            let mut c = [0usize; 6];
            for (k, v) in c.iter_mut().enumerate() {
                *v = usize::try_from(be32(b, at + 20 + 4 * k)?).ok()?;
            }
            Some(c)
        };
        let [isut, isstd, leap, timecnt, typecnt, charcnt] = counts(0)?;
        let v1_len = timecnt * 5 + typecnt * 6 + charcnt + leap * 8 + isstd + isut;
        let (base, time_size, [_, _, leap, timecnt, typecnt, charcnt]) = if version >= b'2' {
            let h2 = 44 + v1_len;
            (h2 + 44, 8, counts(h2)?)
        } else {
            (44, 4, [isut, isstd, leap, timecnt, typecnt, charcnt])
        };
        // Counts come from the file: check they fit in it before allocating anything.
        let data_len = timecnt
            .checked_mul(time_size + 1)?
            .checked_add(typecnt.checked_mul(6)?)?
            .checked_add(charcnt)?;
        if typecnt == 0 || base.checked_add(data_len)? > b.len() {
            return None;
        }
        let read_time = |at: usize| {
            if time_size == 8 {
                be64(b, at)
            } else {
                be32(b, at)
            }
        };
        let idx_at = base + timecnt * time_size;
        let types_at = idx_at + timecnt;
        let mut offsets = Vec::with_capacity(typecnt);
        for k in 0..typecnt {
            offsets.push(be32(b, types_at + 6 * k)?);
        }
        let mut transitions = Vec::with_capacity(timecnt);
        for k in 0..timecnt {
            let t = read_time(base + k * time_size)?;
            let ty = usize::from(*b.get(idx_at + k)?);
            transitions.push((t, *offsets.get(ty)?));
        }
        let mut footer = None;
        if version >= b'2' {
            // After the v2 data block: "\n<POSIX TZ string>\n".
            let [isut2, isstd2, ..] = counts(44 + v1_len)?;
            let foot = types_at + typecnt * 6 + charcnt + leap * (time_size + 4) + isstd2 + isut2;
            if let Some(rest) = b.get(foot..) {
                if rest.first() == Some(&b'\n') {
                    if let Some(nl) = rest[1..].iter().position(|&c| c == b'\n') {
                        footer = std::str::from_utf8(&rest[1..1 + nl])
                            .ok()
                            .and_then(PosixTz::parse);
                    }
                }
            }
        }
        Some(Zone {
            transitions,
            initial_offset: offsets[0],
            footer,
        })
    }

    /// Offset east of UTC, in seconds, at `unix_s`.
    pub fn offset_at(&self, unix_s: i64) -> i64 {
        match self.transitions.last() {
            Some(&(last, off)) if unix_s >= last => match &self.footer {
                Some(f) => f.offset_at(unix_s),
                None => off,
            },
            None => self
                .footer
                .as_ref()
                .map_or(self.initial_offset, |f| f.offset_at(unix_s)),
            Some(_) => {
                let k = self.transitions.partition_point(|&(t, _)| t <= unix_s);
                if k == 0 {
                    self.initial_offset
                } else {
                    self.transitions[k - 1].1
                }
            }
        }
    }

    /// Loads a zone by TZ-variable syntax: `:name`, `Area/City`, an absolute path, or a
    /// POSIX rule string.
    pub fn load(tz: &str) -> Option<Zone> {
        let name = tz.strip_prefix(':').unwrap_or(tz);
        let path = if name.starts_with('/') {
            std::path::PathBuf::from(name)
        } else {
            std::path::Path::new("/usr/share/zoneinfo").join(name)
        };
        if !name.contains("..") {
            if let Some(z) = std::fs::read(&path).ok().and_then(|b| Zone::from_tzif(&b)) {
                return Some(z);
            }
        }
        PosixTz::parse(tz).map(Zone::from_posix)
    }
}

/// The process's local zone: `TZ` if set, else `/etc/localtime`; None means UTC.
pub fn system_zone() -> Option<&'static Zone> {
    static ZONE: OnceLock<Option<Zone>> = OnceLock::new();
    ZONE.get_or_init(|| match std::env::var("TZ") {
        Ok(tz) if !tz.is_empty() => Zone::load(&tz),
        _ => std::fs::read("/etc/localtime")
            .ok()
            .and_then(|b| Zone::from_tzif(&b)),
    })
    .as_ref()
}

/// Local offset east of UTC, in seconds, at `unix_s`, for the process's zone.
pub fn system_local_offset_seconds(unix_s: i64) -> i64 {
    system_zone().map_or(0, |z| z.offset_at(unix_s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn posix_rules() {
        let ny = PosixTz::parse("EST5EDT,M3.2.0,M11.1.0").expect("parse");
        // 2021-07-01 12:00 UTC: EDT.
        assert_eq!(ny.offset_at(1625140800), -4 * 3600);
        // 2021-01-01 12:00 UTC: EST.
        assert_eq!(ny.offset_at(1609502400), -5 * 3600);
        let syd = PosixTz::parse("AEST-10AEDT,M10.1.0,M4.1.0/3").expect("parse");
        assert_eq!(syd.offset_at(1609502400), 11 * 3600);
        assert_eq!(syd.offset_at(1625140800), 10 * 3600);
        let fixed = PosixTz::parse("<+0330>-3:30").expect("parse");
        assert_eq!(fixed.offset_at(0), 3 * 3600 + 1800);
        assert!(PosixTz::parse("X").is_none());
        assert_eq!(year_of(0), 1970);
        assert_eq!(year_of(-1), 1969);
        assert_eq!(year_of(951782400), 2000); // 2000-02-29
        assert!(Zone::from_tzif(b"TZif2").is_none());
    }
}
