//! Date and time functions (lang_datefunc.html): date, time, datetime, julianday,
//! unixepoch, strftime, timediff, current_date/time/timestamp.
//!
//! Like SQLite (date.c), every value is a julian day number held as integer milliseconds
//! (`jd_ms`), with the civil fields (Y-M-D h:m:s) computed on demand; the arithmetic below
//! follows date.c step by step (same float/int conversions, same rounding) so results
//! match SQLite to the millisecond, including its quirks (month arithmetic that overflows
//! the day of month, "30-day" fractional months, the 0000..9999 year range).
//!
//! Two things come from the connection through [`FunctionContext`]: the statement's
//! current time ('now'), and the local time zone offset (the `localtime`/`utc`
//! modifiers). The default context is UTC with the system clock.
//!
//! Invariant: every input (any text, any number, any modifier) yields a value or NULL;
//! nothing here panics or overflows (intermediate sums use i64 and out-of-range dates are
//! rejected before conversion to i32).

use super::{Ctx, FunctionContext};
use crate::value::num::{atof, is_space};
use crate::value::{Result, SqlError, Value};
use std::borrow::Cow;
use std::sync::Arc;

/// Julian day of the unix epoch, in milliseconds (1970-01-01 00:00:00 is JD 2440587.5).
pub const UNIX_EPOCH_JD_MS: i64 = 210_866_760_000_000;

/// The largest valid `jd_ms`: 9999-12-31 23:59:59.999.
const JD_MS_MAX: i64 = 464_269_060_799_999;

/// The current time as a julian day in milliseconds, from the system clock.
pub fn system_now_jd_ms() -> i64 {
    match std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => UNIX_EPOCH_JD_MS + d.as_millis() as i64,
        Err(_) => UNIX_EPOCH_JD_MS,
    }
}

#[derive(Clone, Copy, Default, Debug)]
struct DateTime {
    jd_ms: i64,
    y: i32,
    mo: i32,
    d: i32,
    h: i32,
    mi: i32,
    /// Time zone offset in minutes.
    tz: i32,
    s: f64,
    valid_jd: bool,
    valid_ymd: bool,
    valid_hms: bool,
    /// Days to subtract for "floor" (day-of-month overflow).
    n_floor: i32,
    /// `s` holds a raw number (julian day or unix time, not yet decided).
    raw_s: bool,
    is_error: bool,
    use_subsec: bool,
    is_utc: bool,
    is_local: bool,
}

/// Byte `i` of a C string: 0 past the end.
fn at(z: &[u8], i: usize) -> u8 {
    z.get(i).copied().unwrap_or(0)
}

/// One `getDigits` field: digit count, minimum, maximum, and the separator that must
/// follow (0 for the last field).
struct Field(usize, i32, i32, u8);

/// `getDigits`: parses fixed-width fields; returns how many converted.
fn get_digits(z: &[u8], fields: &[Field], out: &mut [i32]) -> usize {
    let mut pos = 0;
    for (k, f) in fields.iter().enumerate() {
        let mut val = 0i32;
        for _ in 0..f.0 {
            let c = at(z, pos);
            if !c.is_ascii_digit() {
                return k;
            }
            val = val * 10 + i32::from(c - b'0');
            pos += 1;
        }
        if val < f.1 || val > f.2 || (f.3 != 0 && f.3 != at(z, pos)) {
            return k;
        }
        out[k] = val;
        pos += 1;
    }
    fields.len()
}

const HH_MM: [Field; 2] = [Field(2, 0, 24, b':'), Field(2, 0, 59, 0)];

fn skip_spaces(z: &[u8], mut i: usize) -> usize {
    while is_space(at(z, i)) {
        i += 1;
    }
    i
}

/// `parseTimezone`: "(+|-)HH:MM" or "Z" at the end; false on a parse error.
fn parse_timezone(z: &[u8], p: &mut DateTime) -> bool {
    let mut i = skip_spaces(z, 0);
    p.tz = 0;
    let c = at(z, i);
    let sgn;
    if c == b'-' {
        sgn = -1;
    } else if c == b'+' {
        sgn = 1;
    } else if c == b'Z' || c == b'z' {
        i += 1;
        p.is_local = false;
        p.is_utc = true;
        i = skip_spaces(z, i);
        return at(z, i) == 0;
    } else {
        return c == 0;
    }
    i += 1;
    let mut v = [0i32; 2];
    if get_digits(
        &z[i.min(z.len())..],
        &[Field(2, 0, 14, b':'), Field(2, 0, 59, 0)],
        &mut v,
    ) != 2
    {
        return false;
    }
    i += 5;
    p.tz = sgn * (v[1] + v[0] * 60);
    i = skip_spaces(z, i);
    at(z, i) == 0
}

/// `parseHhMmSs`: HH:MM[:SS[.FFF]] plus an optional zone; false on error.
fn parse_hh_mm_ss(z: &[u8], p: &mut DateTime) -> bool {
    let mut v = [0i32; 2];
    if get_digits(z, &HH_MM, &mut v) != 2 {
        return false;
    }
    let (h, m) = (v[0], v[1]);
    let mut i = 5;
    let mut s = 0i32;
    let mut ms = 0.0f64;
    if at(z, i) == b':' {
        i += 1;
        let mut sv = [0i32; 1];
        if get_digits(&z[i.min(z.len())..], &[Field(2, 0, 59, 0)], &mut sv) != 1 {
            return false;
        }
        s = sv[0];
        i += 2;
        if at(z, i) == b'.' && at(z, i + 1).is_ascii_digit() {
            let mut scale = 1.0f64;
            i += 1;
            while at(z, i).is_ascii_digit() {
                ms = ms * 10.0 + f64::from(at(z, i) - b'0');
                scale *= 10.0;
                i += 1;
            }
            ms /= scale;
            // Truncated, as SQLite does, to avoid sub-millisecond rounding surprises.
            if ms > 0.999 {
                ms = 0.999;
            }
        }
    }
    p.valid_jd = false;
    p.raw_s = false;
    p.valid_hms = true;
    p.h = h;
    p.mi = m;
    p.s = f64::from(s) + ms;
    parse_timezone(&z[i.min(z.len())..], p)
}

fn datetime_error(p: &mut DateTime) {
    *p = DateTime {
        is_error: true,
        ..DateTime::default()
    };
}

/// `computeJD`: civil fields → julian day (Meeus p.61).
fn compute_jd(p: &mut DateTime) {
    if p.valid_jd {
        return;
    }
    let (mut y, mut m, d) = if p.valid_ymd {
        (p.y, p.mo, p.d)
    } else {
        (2000, 1, 1)
    };
    if !(-4713..=9999).contains(&y) || p.raw_s {
        datetime_error(p);
        return;
    }
    if m <= 2 {
        y -= 1;
        m += 12;
    }
    let (y, m, d) = (i64::from(y), i64::from(m), i64::from(d));
    let a = (y + 4800) / 100;
    let b = 38 - a + (a / 4);
    let x1 = 36525 * (y + 4716) / 100;
    let x2 = 306001 * (m + 1) / 10000;
    p.jd_ms = (((x1 + x2 + d + b) as f64 - 1524.5) * 86400000.0) as i64;
    p.valid_jd = true;
    if p.valid_hms {
        p.jd_ms += i64::from(p.h) * 3600000 + i64::from(p.mi) * 60000 + (p.s * 1000.0 + 0.5) as i64;
        if p.tz != 0 {
            p.jd_ms -= i64::from(p.tz) * 60000;
            p.valid_ymd = false;
            p.valid_hms = false;
            p.tz = 0;
            p.is_utc = true;
            p.is_local = false;
        }
    }
}

/// `computeFloor`: days past the end of the month (for the "floor" modifier).
fn compute_floor(p: &mut DateTime) {
    // 0x15aa has a bit for each 31-day month.
    p.n_floor = if p.d <= 28 || (1i64 << p.mo.clamp(0, 40)) & 0x15aa != 0 {
        0
    } else if p.mo != 2 {
        i32::from(p.d == 31)
    } else if p.y % 4 != 0 || (p.y % 100 == 0 && p.y % 400 != 0) {
        p.d - 28
    } else {
        p.d - 29
    };
}

/// `parseYyyyMmDd`: [-]YYYY-MM-DD [[T]HH:MM[:SS[.FFF]]] [zone]; false on error.
fn parse_yyyy_mm_dd(z: &[u8], p: &mut DateTime) -> bool {
    let (neg, z) = if at(z, 0) == b'-' {
        (true, &z[1..])
    } else {
        (false, z)
    };
    let mut v = [0i32; 3];
    if get_digits(
        z,
        &[
            Field(4, 0, 14712, b'-'),
            Field(2, 1, 12, b'-'),
            Field(2, 1, 31, 0),
        ],
        &mut v,
    ) != 3
    {
        return false;
    }
    let mut i = 10;
    while is_space(at(z, i)) || at(z, i) == b'T' {
        i += 1;
    }
    let rest = &z[i.min(z.len())..];
    if parse_hh_mm_ss(rest, p) {
        // got the time
    } else if at(z, i) == 0 {
        p.valid_hms = false;
    } else {
        return false;
    }
    p.valid_jd = false;
    p.valid_ymd = true;
    p.y = if neg { -v[0] } else { v[0] };
    p.mo = v[1];
    p.d = v[2];
    compute_floor(p);
    if p.tz != 0 {
        compute_jd(p);
    }
    true
}

fn clear_ymd_hms_tz(p: &mut DateTime) {
    p.valid_ymd = false;
    p.valid_hms = false;
    p.tz = 0;
}

fn set_to_current(conn: &dyn FunctionContext, p: &mut DateTime) -> bool {
    p.jd_ms = conn.current_time_jd_ms();
    if p.jd_ms > 0 {
        p.valid_jd = true;
        p.is_utc = true;
        p.is_local = false;
        clear_ymd_hms_tz(p);
        true
    } else {
        false
    }
}

/// `setRawDateNumber`: a number that may be a julian day or a unix time.
fn set_raw_date_number(p: &mut DateTime, r: f64) {
    p.s = r;
    p.raw_s = true;
    if (0.0..5373484.5).contains(&r) {
        p.jd_ms = (r * 86400000.0 + 0.5) as i64;
        p.valid_jd = true;
    }
}

fn eq_ic(a: &[u8], b: &str) -> bool {
    a.eq_ignore_ascii_case(b.as_bytes())
}

/// `parseDateOrTime`; false on error.
fn parse_date_or_time(conn: &dyn FunctionContext, z: &[u8], p: &mut DateTime) -> bool {
    if parse_yyyy_mm_dd(z, p) {
        return true;
    }
    if parse_hh_mm_ss(z, p) {
        return true;
    }
    if eq_ic(z, "now") {
        return set_to_current(conn, p);
    }
    let (r, class) = atof(z);
    if class.is_valid() {
        set_raw_date_number(p, r);
        return true;
    }
    if eq_ic(z, "subsec") || eq_ic(z, "subsecond") {
        p.use_subsec = true;
        return set_to_current(conn, p);
    }
    false
}

fn valid_julian_day(jd_ms: i64) -> bool {
    (0..=JD_MS_MAX).contains(&jd_ms)
}

/// `computeYMD`: julian day → year, month, day.
fn compute_ymd(p: &mut DateTime) {
    if p.valid_ymd {
        return;
    }
    if !p.valid_jd {
        p.y = 2000;
        p.mo = 1;
        p.d = 1;
    } else if !valid_julian_day(p.jd_ms) {
        datetime_error(p);
        return;
    } else {
        let z = ((p.jd_ms + 43200000) / 86400000) as i32;
        let alpha = ((f64::from(z) + 32044.75) / 36524.25) as i32 - 52;
        let a = z + 1 + alpha - ((alpha + 100) / 4) + 25;
        let b = a + 1524;
        let c = ((f64::from(b) - 122.1) / 365.25) as i32;
        let d = (36525 * (c & 32767)) / 100;
        let e = (f64::from(b - d) / 30.6001) as i32;
        let x1 = (30.6001 * f64::from(e)) as i32;
        p.d = b - d - x1;
        p.mo = if e < 14 { e - 1 } else { e - 13 };
        p.y = if p.mo > 2 { c - 4716 } else { c - 4715 };
    }
    p.valid_ymd = true;
}

/// `computeHMS`: julian day → hour, minute, seconds.
fn compute_hms(p: &mut DateTime) {
    if p.valid_hms {
        return;
    }
    compute_jd(p);
    let day_ms = ((p.jd_ms + 43200000) % 86400000) as i32;
    p.s = f64::from(day_ms % 60000) / 1000.0;
    let day_min = day_ms / 60000;
    p.mi = day_min % 60;
    p.h = day_min / 60;
    p.raw_s = false;
    p.valid_hms = true;
}

fn compute_ymd_hms(p: &mut DateTime) {
    compute_ymd(p);
    compute_hms(p);
}

/// `toLocaltime`, with the offset from the context in place of the C library. Kept
/// step for step, including SQLite's mapping of years outside 1970..2037 into an
/// equivalent year and back, because its side effects are visible: a value that failed to
/// become a julian day (zeroed by computeJD) comes out as 2000-01-01 or 0000-01-01.
fn to_localtime(conn: &dyn FunctionContext, p: &mut DateTime) {
    compute_jd(p);
    let year_diff;
    let t;
    if p.jd_ms < 210_866_760_000_000 || p.jd_ms > 213_014_145_600_000 {
        let mut x = *p;
        compute_ymd_hms(&mut x);
        year_diff = (2000 + x.y % 4) - x.y;
        x.y += year_diff;
        x.valid_jd = false;
        compute_jd(&mut x);
        t = x.jd_ms / 1000 - UNIX_EPOCH_JD_MS / 1000;
    } else {
        year_diff = 0;
        t = p.jd_ms / 1000 - UNIX_EPOCH_JD_MS / 1000;
    }
    let offset_s = conn.local_offset_seconds(t);
    let mut lt = DateTime {
        jd_ms: (t + offset_s) * 1000 + UNIX_EPOCH_JD_MS,
        valid_jd: true,
        ..DateTime::default()
    };
    compute_ymd_hms(&mut lt);
    p.y = lt.y - year_diff;
    p.mo = lt.mo;
    p.d = lt.d;
    p.h = lt.h;
    p.mi = lt.mi;
    p.s = lt.s.trunc() + (p.jd_ms % 1000) as f64 * 0.001;
    p.valid_ymd = true;
    p.valid_hms = true;
    p.valid_jd = false;
    p.raw_s = false;
    p.tz = 0;
    p.is_error = false;
}

/// The "NNN units" modifiers: (name, limit, seconds per unit). Limits and factors are
/// single-precision in SQLite and compared in double precision, hence the f32 values.
const XFORMS: [(&str, f32, f32); 6] = [
    ("second", 4.6427e+14, 1.0),
    ("minute", 7.7379e+12, 60.0),
    ("hour", 1.2897e+11, 3600.0),
    ("day", 5373485.0, 86400.0),
    ("month", 176546.0, 2592000.0),
    ("year", 14713.0, 31536000.0),
];

/// `autoAdjustDate`: decide whether a raw number is a julian day or a unix time.
fn auto_adjust_date(p: &mut DateTime) {
    if !p.raw_s || p.valid_jd {
        p.raw_s = false;
    } else if p.s >= -210866760000.0 && p.s <= 253402300799.0 {
        let r = p.s * 1000.0 + 210866760000000.0;
        clear_ymd_hms_tz(p);
        p.jd_ms = (r + 0.5) as i64;
        p.valid_jd = true;
        p.raw_s = false;
    }
}

/// Normalizes month overflow into the year, as date.c does after month arithmetic.
fn normalize_month(p: &mut DateTime) {
    let x = if p.mo > 0 {
        (p.mo - 1) / 12
    } else {
        (p.mo - 12) / 12
    };
    p.y = p.y.saturating_add(x);
    p.mo -= x * 12;
}

/// `parseModifier`; false on error. `idx` is the argument position (1 = first modifier).
fn parse_modifier(conn: &dyn FunctionContext, z: &[u8], p: &mut DateTime, idx: usize) -> bool {
    let first = at(z, 0).to_ascii_lowercase();
    match first {
        b'a' => {
            if eq_ic(z, "auto") {
                if idx > 1 {
                    return false;
                }
                auto_adjust_date(p);
                return true;
            }
            false
        }
        b'c' => {
            if eq_ic(z, "ceiling") {
                compute_jd(p);
                clear_ymd_hms_tz(p);
                p.n_floor = 0;
                return true;
            }
            false
        }
        b'f' => {
            if eq_ic(z, "floor") {
                compute_jd(p);
                p.jd_ms -= i64::from(p.n_floor) * 86400000;
                clear_ymd_hms_tz(p);
                return true;
            }
            false
        }
        b'j' => {
            if eq_ic(z, "julianday") {
                if idx > 1 {
                    return false;
                }
                if p.valid_jd && p.raw_s {
                    p.raw_s = false;
                    return true;
                }
            }
            false
        }
        b'l' => {
            if eq_ic(z, "localtime") {
                if !p.is_local {
                    to_localtime(conn, p);
                }
                p.is_utc = false;
                p.is_local = true;
                return true;
            }
            false
        }
        b'u' => {
            if eq_ic(z, "unixepoch") && p.raw_s {
                if idx > 1 {
                    return false;
                }
                let r = p.s * 1000.0 + 210866760000000.0;
                if (0.0..464269060800000.0).contains(&r) {
                    clear_ymd_hms_tz(p);
                    p.jd_ms = (r + 0.5) as i64;
                    p.valid_jd = true;
                    p.raw_s = false;
                    return true;
                }
                return false;
            }
            if eq_ic(z, "utc") {
                if !p.is_utc {
                    compute_jd(p);
                    let orig = p.jd_ms;
                    let mut guess = orig;
                    let mut err = 0i64;
                    let mut cnt = 0;
                    loop {
                        guess -= err;
                        let mut n = DateTime {
                            jd_ms: guess,
                            valid_jd: true,
                            ..DateTime::default()
                        };
                        to_localtime(conn, &mut n);
                        compute_jd(&mut n);
                        err = n.jd_ms - orig;
                        let again = err != 0 && cnt < 3;
                        cnt += 1;
                        if !again {
                            break;
                        }
                    }
                    *p = DateTime {
                        jd_ms: guess,
                        valid_jd: true,
                        is_utc: true,
                        ..DateTime::default()
                    };
                }
                return true;
            }
            false
        }
        b'w' => {
            if z.len() >= 8 && eq_ic(&z[..8], "weekday ") {
                let (r, class) = atof(&z[8..]);
                if class.is_valid() && (0.0..7.0).contains(&r) && (r as i32) as f64 == r {
                    let n = r as i64;
                    compute_ymd_hms(p);
                    p.tz = 0;
                    p.valid_jd = false;
                    compute_jd(p);
                    let mut zd = ((p.jd_ms + 129600000) / 86400000) % 7;
                    if zd > n {
                        zd -= 7;
                    }
                    p.jd_ms += (n - zd) * 86400000;
                    clear_ymd_hms_tz(p);
                    return true;
                }
            }
            false
        }
        b's' => {
            if !(z.len() >= 9 && eq_ic(&z[..9], "start of ")) {
                if eq_ic(z, "subsec") || eq_ic(z, "subsecond") {
                    p.use_subsec = true;
                    return true;
                }
                return false;
            }
            if !p.valid_jd && !p.valid_ymd && !p.valid_hms {
                return false;
            }
            let unit = &z[9..];
            compute_ymd(p);
            p.valid_hms = true;
            p.h = 0;
            p.mi = 0;
            p.s = 0.0;
            p.raw_s = false;
            p.tz = 0;
            p.valid_jd = false;
            if eq_ic(unit, "month") {
                p.d = 1;
                true
            } else if eq_ic(unit, "year") {
                p.mo = 1;
                p.d = 1;
                true
            } else {
                eq_ic(unit, "day")
            }
        }
        b'+' | b'-' | b'0'..=b'9' => numeric_modifier(z, p),
        _ => false,
    }
}

/// The numeric modifiers: "±NNN unit", "±HH:MM[:SS.FFF]", "±YYYY-MM-DD[ HH:MM...]".
fn numeric_modifier(z: &[u8], p: &mut DateTime) -> bool {
    let z0 = at(z, 0);
    let mut n = 1usize;
    let mut yv = [0i32; 3];
    while at(z, n) != 0 {
        let c = at(z, n);
        if c == b':' || is_space(c) {
            break;
        }
        if c == b'-' {
            if n == 5 && get_digits(&z[1..], &[Field(4, 0, 14712, 0)], &mut yv) == 1 {
                break;
            }
            if n == 6 && get_digits(&z[1..], &[Field(5, 0, 14712, 0)], &mut yv) == 1 {
                break;
            }
        }
        n += 1;
    }
    let (mut r, class) = atof(&z[..n.min(z.len())]);
    if !class.is_valid() {
        return false;
    }
    let mut z = z;
    let mut z2: &[u8] = z;
    if at(z, n) == b'-' {
        // ±YYYY-MM-DD: add or subtract years, months (0-11) and days (0-30).
        if z0 != b'+' && z0 != b'-' {
            return false;
        }
        let mut v = [0i32; 3];
        if n == 5 {
            if get_digits(
                &z[1..],
                &[
                    Field(4, 0, 14712, b'-'),
                    Field(2, 0, 12, b'-'),
                    Field(2, 0, 31, 0),
                ],
                &mut v,
            ) != 3
            {
                return false;
            }
        } else {
            if get_digits(
                &z[1..],
                &[
                    Field(5, 0, 14712, b'-'),
                    Field(2, 0, 12, b'-'),
                    Field(2, 0, 31, 0),
                ],
                &mut v,
            ) != 3
            {
                return false;
            }
            z = &z[1..];
        }
        let (yy, mm, mut dd) = (v[0], v[1], v[2]);
        if mm >= 12 || dd >= 31 {
            return false;
        }
        compute_ymd_hms(p);
        p.valid_jd = false;
        if z0 == b'-' {
            p.y -= yy;
            p.mo -= mm;
            dd = -dd;
        } else {
            p.y += yy;
            p.mo += mm;
        }
        normalize_month(p);
        compute_floor(p);
        compute_jd(p);
        p.valid_hms = false;
        p.valid_ymd = false;
        p.jd_ms += i64::from(dd) * 86400000;
        if at(z, 11) == 0 {
            return true;
        }
        let mut hm = [0i32; 2];
        if is_space(at(z, 11)) && z.len() > 12 && get_digits(&z[12..], &HH_MM, &mut hm) == 2 {
            z2 = &z[12..];
            n = 2;
        } else {
            return false;
        }
    }
    if at(z2, n) == b':' {
        // ±HH:MM[:SS.FFF]: shift by a time of day.
        let mut t = if at(z2, 0).is_ascii_digit() {
            z2
        } else {
            &z2[1..]
        };
        if t.is_empty() {
            t = b"";
        }
        let mut tx = DateTime::default();
        if !parse_hh_mm_ss(t, &mut tx) {
            return false;
        }
        compute_jd(&mut tx);
        tx.jd_ms -= 43200000;
        let day = tx.jd_ms / 86400000;
        tx.jd_ms -= day * 86400000;
        if z0 == b'-' {
            tx.jd_ms = -tx.jd_ms;
        }
        compute_jd(p);
        clear_ymd_hms_tz(p);
        p.jd_ms += tx.jd_ms;
        return true;
    }
    // "±NNN unit[s]"
    let mut i = n;
    while is_space(at(z, i)) {
        i += 1;
    }
    let unit_full = &z[i.min(z.len())..];
    let unit_full = match unit_full.iter().position(|&b| b == 0) {
        Some(k) => &unit_full[..k],
        None => unit_full,
    };
    let mut len = unit_full.len();
    if !(3..=10).contains(&len) {
        return false;
    }
    if unit_full[len - 1].eq_ignore_ascii_case(&b's') {
        len -= 1;
    }
    let unit = &unit_full[..len];
    compute_jd(p);
    let rounder = if r < 0.0 { -0.5 } else { 0.5 };
    p.n_floor = 0;
    let mut ok = false;
    for (k, &(name, limit, factor)) in XFORMS.iter().enumerate() {
        let limit = f64::from(limit);
        if name.len() == len && eq_ic(unit, name) && r > -limit && r < limit {
            match k {
                4 => {
                    compute_ymd_hms(p);
                    p.mo += r as i32;
                    normalize_month(p);
                    compute_floor(p);
                    p.valid_jd = false;
                    r -= f64::from(r as i32);
                }
                5 => {
                    compute_ymd_hms(p);
                    p.y += r as i32;
                    compute_floor(p);
                    p.valid_jd = false;
                    r -= f64::from(r as i32);
                }
                _ => {}
            }
            compute_jd(p);
            p.jd_ms = p
                .jd_ms
                .saturating_add((r * 1000.0 * f64::from(factor) + rounder) as i64);
            ok = true;
            break;
        }
    }
    clear_ymd_hms_tz(p);
    ok
}

/// The text form of an argument as a C string (up to its first NUL); None for NULL.
fn c_text(v: &Value) -> Option<Cow<'_, [u8]>> {
    let b = v.to_bytes()?;
    Some(match b.iter().position(|&c| c == 0) {
        Some(n) => match b {
            Cow::Borrowed(s) => Cow::Borrowed(&s[..n]),
            Cow::Owned(mut s) => {
                s.truncate(n);
                Cow::Owned(s)
            }
        },
        None => b,
    })
}

/// `sqlite3NotPureFunc`: the error of function `name` reading the clock or the zone
/// where the evaluation must be deterministic (`FunctionContext::pure_context`).
fn not_pure(conn: &dyn FunctionContext, name: &str) -> Result<()> {
    match conn.pure_context() {
        Some(what) => Err(SqlError::msg(format!(
            "non-deterministic use of {name}() in {what}"
        ))),
        None => Ok(()),
    }
}

/// `isDate`: the time value and modifiers; None when any part is invalid, an error when
/// function `name` reads the clock or the zone where it may not (`not_pure`: no value,
/// 'now' or 'subsec' as the time value, a `localtime` or `utc` modifier reached, as
/// date.c asks).
fn is_date(conn: &dyn FunctionContext, name: &str, args: &[Value]) -> Result<Option<DateTime>> {
    let mut p = DateTime::default();
    let Some(first) = args.first() else {
        not_pure(conn, name)?;
        return Ok(set_to_current(conn, &mut p).then_some(p));
    };
    match first {
        Value::Integer(_) | Value::Real(_) => set_raw_date_number(&mut p, first.to_f64()),
        v => {
            let Some(z) = c_text(v) else {
                return Ok(None);
            };
            if eq_ic(&z, "now") || eq_ic(&z, "subsec") || eq_ic(&z, "subsecond") {
                not_pure(conn, name)?;
            }
            if !parse_date_or_time(conn, &z, &mut p) {
                return Ok(None);
            }
        }
    }
    for (i, m) in args.iter().enumerate().skip(1) {
        let Some(z) = c_text(m) else {
            return Ok(None);
        };
        if eq_ic(&z, "localtime") || eq_ic(&z, "utc") {
            not_pure(conn, name)?;
        }
        if !parse_modifier(conn, &z, &mut p, i) {
            return Ok(None);
        }
    }
    compute_jd(&mut p);
    if p.is_error || !valid_julian_day(p.jd_ms) {
        return Ok(None);
    }
    if args.len() == 1 && p.valid_ymd && p.d > 28 {
        // Normalize an overflowing day of month: 2023-02-31 → 2023-03-03.
        p.valid_ymd = false;
    }
    Ok(Some(p))
}

fn text(s: String) -> Value {
    Value::Text(Arc::from(s))
}

/// Formats one value with SQLite's printf (for the float conversions, whose rounding
/// must match).
fn pf(fmt: &str, args: &[Value]) -> String {
    super::printf::format_bytes(fmt.as_bytes(), args)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default()
}

fn push_year(out: &mut String, y: i32) {
    let ya = y.unsigned_abs();
    if y < 0 {
        out.push('-');
    }
    for div in [1000, 100, 10, 1] {
        out.push(char::from(b'0' + ((ya / div) % 10) as u8));
    }
}

fn push2(out: &mut String, v: i32) {
    let v = v.unsigned_abs();
    out.push(char::from(b'0' + ((v / 10) % 10) as u8));
    out.push(char::from(b'0' + (v % 10) as u8));
}

fn push_seconds(out: &mut String, p: &DateTime) {
    if p.use_subsec {
        let s = (1000.0 * p.s + 0.5) as i32;
        push2(out, s / 1000);
        out.push('.');
        out.push(char::from(b'0' + ((s / 100) % 10) as u8));
        push2(out, s % 100);
    } else {
        push2(out, p.s as i32);
    }
}

fn format_date(p: &DateTime) -> String {
    let mut out = String::with_capacity(11);
    push_year(&mut out, p.y);
    out.push('-');
    push2(&mut out, p.mo);
    out.push('-');
    push2(&mut out, p.d);
    out
}

fn format_time(p: &DateTime) -> String {
    let mut out = String::with_capacity(12);
    push2(&mut out, p.h);
    out.push(':');
    push2(&mut out, p.mi);
    out.push(':');
    push_seconds(&mut out, p);
    out
}

/// `julianday(T, MOD...)`.
pub fn julianday(ctx: &Ctx, args: &[Value]) -> Result<Value> {
    Ok(match is_date(ctx.conn, "julianday", args)? {
        Some(p) => Value::real(p.jd_ms as f64 / 86400000.0),
        None => Value::Null,
    })
}

/// `unixepoch(T, MOD...)`: integer seconds, or real with the subsec modifier.
pub fn unixepoch(ctx: &Ctx, args: &[Value]) -> Result<Value> {
    Ok(match is_date(ctx.conn, "unixepoch", args)? {
        Some(p) if p.use_subsec => Value::real((p.jd_ms - UNIX_EPOCH_JD_MS) as f64 / 1000.0),
        Some(p) => Value::Integer(p.jd_ms / 1000 - UNIX_EPOCH_JD_MS / 1000),
        None => Value::Null,
    })
}

/// `date(T, MOD...)`: YYYY-MM-DD.
pub fn date(ctx: &Ctx, args: &[Value]) -> Result<Value> {
    Ok(as_date(is_date(ctx.conn, "date", args)?))
}

fn as_date(p: Option<DateTime>) -> Value {
    match p {
        Some(mut p) => {
            compute_ymd(&mut p);
            text(format_date(&p))
        }
        None => Value::Null,
    }
}

/// `time(T, MOD...)`: HH:MM:SS (HH:MM:SS.SSS with subsec).
pub fn time(ctx: &Ctx, args: &[Value]) -> Result<Value> {
    Ok(as_time(is_date(ctx.conn, "time", args)?))
}

fn as_time(p: Option<DateTime>) -> Value {
    match p {
        Some(mut p) => {
            compute_hms(&mut p);
            text(format_time(&p))
        }
        None => Value::Null,
    }
}

/// `datetime(T, MOD...)`: YYYY-MM-DD HH:MM:SS.
pub fn datetime(ctx: &Ctx, args: &[Value]) -> Result<Value> {
    Ok(as_datetime(is_date(ctx.conn, "datetime", args)?))
}

fn as_datetime(p: Option<DateTime>) -> Value {
    match p {
        Some(mut p) => {
            compute_ymd_hms(&mut p);
            text(format!("{} {}", format_date(&p), format_time(&p)))
        }
        None => Value::Null,
    }
}

/// The statement's time, for CURRENT_DATE / CURRENT_TIME / CURRENT_TIMESTAMP. Unlike
/// date() without arguments these are not checked as pure (`not_pure`): SQLite registers
/// them as non-deterministic, so they are refused outright in index expressions and
/// generated columns and run unchecked where they may stand (a CHECK constraint).
fn current(conn: &dyn FunctionContext) -> Option<DateTime> {
    let mut p = DateTime::default();
    set_to_current(conn, &mut p).then_some(p)
}

pub fn current_date(ctx: &Ctx, _: &[Value]) -> Result<Value> {
    Ok(as_date(current(ctx.conn)))
}
pub fn current_time(ctx: &Ctx, _: &[Value]) -> Result<Value> {
    Ok(as_time(current(ctx.conn)))
}
pub fn current_timestamp(ctx: &Ctx, _: &[Value]) -> Result<Value> {
    Ok(as_datetime(current(ctx.conn)))
}

fn days_after_jan01(p: &DateTime) -> i64 {
    let mut jan01 = *p;
    jan01.valid_jd = false;
    jan01.mo = 1;
    jan01.d = 1;
    compute_jd(&mut jan01);
    (p.jd_ms - jan01.jd_ms + 43200000) / 86400000
}

fn days_after_monday(p: &DateTime) -> i64 {
    ((p.jd_ms + 43200000) / 86400000) % 7
}

fn days_after_sunday(p: &DateTime) -> i64 {
    ((p.jd_ms + 129600000) / 86400000) % 7
}

/// The Thursday of `p`'s ISO week (for %G, %g, %V).
fn iso_thursday(p: &DateTime) -> DateTime {
    let mut y = *p;
    y.jd_ms += (3 - days_after_monday(p)) * 86400000;
    y.valid_ymd = false;
    compute_ymd(&mut y);
    y
}

/// `strftime(FORMAT, T, MOD...)`: NULL for an unknown conversion.
pub fn strftime(ctx: &Ctx, args: &[Value]) -> Result<Value> {
    let Some(fmt) = args.first().and_then(c_text) else {
        return Ok(Value::Null);
    };
    let Some(mut x) = is_date(ctx.conn, "strftime", &args[1..])? else {
        return Ok(Value::Null);
    };
    compute_jd(&mut x);
    compute_ymd_hms(&mut x);
    let i64v = |v: i64| Value::Integer(v);
    let mut out: Vec<u8> = Vec::with_capacity(fmt.len() + 16);
    let mut i = 0;
    while i < fmt.len() {
        let c = fmt[i];
        if c != b'%' {
            out.push(c);
            i += 1;
            continue;
        }
        i += 1;
        let cf = at(&fmt, i);
        i += 1;
        let piece = match cf {
            b'd' => pf("%02d", &[i64v(x.d.into())]),
            b'e' => pf("%2d", &[i64v(x.d.into())]),
            b'f' => pf("%06.3f", &[Value::real(x.s.min(59.999))]),
            b'F' => pf(
                "%04d-%02d-%02d",
                &[i64v(x.y.into()), i64v(x.mo.into()), i64v(x.d.into())],
            ),
            b'G' => pf("%04d", &[i64v(iso_thursday(&x).y.into())]),
            b'g' => pf("%02d", &[i64v((iso_thursday(&x).y % 100).into())]),
            b'H' => pf("%02d", &[i64v(x.h.into())]),
            b'k' => pf("%2d", &[i64v(x.h.into())]),
            b'I' | b'l' => {
                let mut h = x.h;
                if h > 12 {
                    h -= 12;
                }
                if h == 0 {
                    h = 12;
                }
                pf(if cf == b'I' { "%02d" } else { "%2d" }, &[i64v(h.into())])
            }
            b'j' => pf("%03d", &[i64v(days_after_jan01(&x) + 1)]),
            b'J' => pf("%.16g", &[Value::real(x.jd_ms as f64 / 86400000.0)]),
            b'm' => pf("%02d", &[i64v(x.mo.into())]),
            b'M' => pf("%02d", &[i64v(x.mi.into())]),
            b'p' => (if x.h >= 12 { "PM" } else { "AM" }).to_string(),
            b'P' => (if x.h >= 12 { "pm" } else { "am" }).to_string(),
            b'R' => pf("%02d:%02d", &[i64v(x.h.into()), i64v(x.mi.into())]),
            b's' => {
                if x.use_subsec {
                    pf(
                        "%.3f",
                        &[Value::real((x.jd_ms - UNIX_EPOCH_JD_MS) as f64 / 1000.0)],
                    )
                } else {
                    (x.jd_ms / 1000 - UNIX_EPOCH_JD_MS / 1000).to_string()
                }
            }
            b'S' => pf("%02d", &[i64v(i64::from(x.s as i32))]),
            b'T' => pf(
                "%02d:%02d:%02d",
                &[
                    i64v(x.h.into()),
                    i64v(x.mi.into()),
                    i64v(i64::from(x.s as i32)),
                ],
            ),
            b'u' | b'w' => {
                let mut c = days_after_sunday(&x);
                if c == 0 && cf == b'u' {
                    c = 7;
                }
                c.to_string()
            }
            b'U' => pf(
                "%02d",
                &[i64v((days_after_jan01(&x) - days_after_sunday(&x) + 7) / 7)],
            ),
            b'V' => pf("%02d", &[i64v(days_after_jan01(&iso_thursday(&x)) / 7 + 1)]),
            b'W' => pf(
                "%02d",
                &[i64v((days_after_jan01(&x) - days_after_monday(&x) + 7) / 7)],
            ),
            b'Y' => pf("%04d", &[i64v(x.y.into())]),
            b'%' => "%".to_string(),
            _ => return Ok(Value::Null),
        };
        out.extend_from_slice(piece.as_bytes());
    }
    Ok(Value::text_from_bytes(&out))
}

/// `timediff(A, B)`: "+YYYY-MM-DD HH:MM:SS.SSS" such that datetime(B, result) = A.
pub fn timediff(ctx: &Ctx, args: &[Value]) -> Result<Value> {
    let (Some(a), Some(b)) = (args.first(), args.get(1)) else {
        return Ok(Value::Null);
    };
    let Some(mut d1) = is_date(ctx.conn, "timediff", std::slice::from_ref(a))? else {
        return Ok(Value::Null);
    };
    let Some(mut d2) = is_date(ctx.conn, "timediff", std::slice::from_ref(b))? else {
        return Ok(Value::Null);
    };
    compute_ymd_hms(&mut d1);
    compute_ymd_hms(&mut d2);
    let sign;
    let (mut y, mut m);
    // Bounded: month stepping below runs at most a few times per call, but guard anyway.
    let mut guard = 0;
    if d1.jd_ms >= d2.jd_ms {
        sign = '+';
        y = d1.y - d2.y;
        if y != 0 {
            d2.y = d1.y;
            d2.valid_jd = false;
            compute_jd(&mut d2);
        }
        m = d1.mo - d2.mo;
        if m < 0 {
            y -= 1;
            m += 12;
        }
        if m != 0 {
            d2.mo = d1.mo;
            d2.valid_jd = false;
            compute_jd(&mut d2);
        }
        while d1.jd_ms < d2.jd_ms && guard < 24 {
            guard += 1;
            m -= 1;
            if m < 0 {
                m = 11;
                y -= 1;
            }
            d2.mo -= 1;
            if d2.mo < 1 {
                d2.mo = 12;
                d2.y -= 1;
            }
            d2.valid_jd = false;
            compute_jd(&mut d2);
        }
        d1.jd_ms -= d2.jd_ms;
        d1.jd_ms += 148699540800000;
    } else {
        sign = '-';
        y = d2.y - d1.y;
        if y != 0 {
            d2.y = d1.y;
            d2.valid_jd = false;
            compute_jd(&mut d2);
        }
        m = d2.mo - d1.mo;
        if m < 0 {
            y -= 1;
            m += 12;
        }
        if m != 0 {
            d2.mo = d1.mo;
            d2.valid_jd = false;
            compute_jd(&mut d2);
        }
        while d1.jd_ms > d2.jd_ms && guard < 24 {
            guard += 1;
            m -= 1;
            if m < 0 {
                m = 11;
                y -= 1;
            }
            d2.mo += 1;
            if d2.mo > 12 {
                d2.mo = 1;
                d2.y += 1;
            }
            d2.valid_jd = false;
            compute_jd(&mut d2);
        }
        d1.jd_ms = d2.jd_ms - d1.jd_ms;
        d1.jd_ms += 148699540800000;
    }
    clear_ymd_hms_tz(&mut d1);
    compute_ymd_hms(&mut d1);
    Ok(text(pf(
        "%c%04d-%02d-%02d %02d:%02d:%06.3f",
        &[
            Value::text(sign.to_string()),
            Value::Integer(y.into()),
            Value::Integer(m.into()),
            Value::Integer((d1.d - 1).into()),
            Value::Integer(d1.h.into()),
            Value::Integer(d1.mi.into()),
            Value::real(d1.s),
        ],
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::func::NoConnection;

    fn call(f: fn(&Ctx, &[Value]) -> Result<Value>, args: &[&str]) -> Value {
        let ctx = Ctx::new(&NoConnection);
        let vals: Vec<Value> = args.iter().map(|s| Value::from(*s)).collect();
        f(&ctx, &vals).unwrap_or(Value::Null)
    }

    #[test]
    fn basics() {
        assert_eq!(
            call(date, &["2024-02-29", "+1 year"]),
            Value::from("2025-03-01")
        );
        assert_eq!(
            call(datetime, &["2000-01-01 12:34:56.789"]),
            Value::from("2000-01-01 12:34:56")
        );
        assert_eq!(
            call(strftime, &["%Y-%j %H:%M:%f", "2023-12-31 23:59:59.5"]),
            Value::from("2023-365 23:59:59.500")
        );
        assert_eq!(call(date, &["2023-02-31"]), Value::from("2023-03-03"));
        assert_eq!(call(date, &["bogus"]), Value::Null);
        assert_eq!(
            call(time, &["12:00", "+90 minutes"]),
            Value::from("13:30:00")
        );
    }
}
