//! What every point prints: `key=value` lines (the C harnesses' keys where they exist), the
//! machine-noise markers next to each figure (load1, cpu of this process vs the others, as
//! common.h `cpu_report`), latency quantiles, and CSV rows for later charts.
//!
//! Invariant: every number this module prints was measured in this run; a figure that could
//! not be measured is printed as `n/a`, never estimated.

use anyhow::{Context, Result};
use std::fmt::Display;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// One output line: ordered `key=value` pairs.
#[derive(Clone, Debug, Default)]
pub struct Line {
    pub fields: Vec<(String, String)>,
}

impl Line {
    pub fn new() -> Line {
        Line::default()
    }

    pub fn kv(&mut self, key: &str, value: impl Display) -> &mut Line {
        // One line per record: control characters (newlines in SQL text) become spaces.
        let mut v: String = value
            .to_string()
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        if v.is_empty() || v.contains(char::is_whitespace) {
            v = format!("\"{}\"", v.replace('"', "'"));
        }
        self.fields.push((key.to_string(), v));
        self
    }

    /// Appends every `key=value` of a space-separated list (`Target::parlite_stats`).
    pub fn kvs(&mut self, list: &str) -> &mut Line {
        for kv in list.split(' ') {
            if let Some((k, v)) = kv.split_once('=') {
                self.kv(k, v);
            }
        }
        self
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    pub fn render(&self) -> String {
        self.fields
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// 1-minute load average (noise marker); -1 when unreadable.
pub fn load1() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|t| t.parse().ok()))
        .unwrap_or(-1.0)
}

/// The file system type of `dir`, as common.h `fs_type` names it.
pub fn fs_type(dir: &Path) -> &'static str {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return "unknown";
    };
    // SAFETY: `c` is a valid NUL-terminated path and `sf` a zeroed out-parameter.
    let mut sf: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statfs(c.as_ptr(), &mut sf) } != 0 {
        return "unknown";
    }
    match sf.f_type as u64 {
        0xEF53 => "ext4",
        0x0102_1994 => "tmpfs",
        0x5846_5342 => "xfs",
        0x9123_683E => "btrfs",
        0x794c_7630 => "overlayfs",
        _ => "other",
    }
}

/// CPU accounting around a measured window (common.h `cpu_snap`).
#[derive(Clone, Debug)]
pub struct CpuSnap {
    t: Instant,
    self_s: f64,
    busy: u64,
    iowait: u64,
    steal: u64,
}

impl CpuSnap {
    pub fn take() -> CpuSnap {
        let mut v = [0u64; 8];
        if let Ok(s) = std::fs::read_to_string("/proc/stat") {
            if let Some(line) = s.lines().next() {
                for (i, t) in line.split_whitespace().skip(1).take(8).enumerate() {
                    v[i] = t.parse().unwrap_or(0);
                }
            }
        }
        // SAFETY: `ru` is a zeroed out-parameter of the documented type.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
        let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
        CpuSnap {
            t: Instant::now(),
            self_s: tv(ru.ru_utime) + tv(ru.ru_stime),
            // user nice system idle iowait irq softirq steal
            busy: v[0] + v[1] + v[2] + v[5] + v[6],
            iowait: v[4],
            steal: v[7],
        }
    }

    /// This process's CPU time (user + system, all threads) over `self..b`, in seconds.
    /// Unlike wall-clock throughput it hardly moves with the neighbours' load, so
    /// `cpu_us_per_commit` compares changes on a shared machine.
    pub fn self_cpu_s(&self, b: &CpuSnap) -> f64 {
        (b.self_s - self.self_s).max(0.0)
    }

    /// cpu_self, cpu_other, iowait, steal in percent of one core over `self..b`.
    pub fn report(&self, b: &CpuSnap, line: &mut Line) {
        // SAFETY: sysconf has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
        let dt = b.t.duration_since(self.t).as_secs_f64().max(1e-9);
        let busy = b.busy.saturating_sub(self.busy) as f64 / hz / dt * 100.0;
        let me = (b.self_s - self.self_s) / dt * 100.0;
        let other = (busy - me).max(0.0);
        line.kv("cpu_self", format!("{me:.0}%"))
            .kv("cpu_other", format!("{other:.0}%"))
            .kv(
                "iowait",
                format!(
                    "{:.0}%",
                    b.iowait.saturating_sub(self.iowait) as f64 / hz / dt * 100.0
                ),
            )
            .kv(
                "steal",
                format!(
                    "{:.0}%",
                    b.steal.saturating_sub(self.steal) as f64 / hz / dt * 100.0
                ),
            );
    }
}

/// `q` in [0,1] of sorted `v` (common.h `quantile`).
pub fn quantile(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let i = (q * (v.len() - 1) as f64 + 0.5) as usize;
    v[i.min(v.len() - 1)]
}

/// Appends rows to a CSV file: one row per printed line, in a fixed long format
/// (`time,workload,engine,threads,sync,variant,metric,value,line`), so lines of every
/// workload fit one file; `line` keeps the whole `key=value` line.
pub struct Csv {
    file: Option<std::fs::File>,
}

impl Csv {
    pub fn open(path: Option<&Path>) -> Result<Csv> {
        let Some(p) = path else {
            return Ok(Csv { file: None });
        };
        let new = !p.exists() || std::fs::metadata(p).map(|m| m.len() == 0).unwrap_or(true);
        let mut f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(p)
            .with_context(|| format!("opening --csv {}", p.display()))?;
        if new {
            writeln!(
                f,
                "time,workload,engine,threads,sync,variant,metric,value,line"
            )?;
        }
        Ok(Csv { file: Some(f) })
    }

    /// `metric` names the line's headline figure (e.g. `tps`), read from the line itself.
    pub fn row(&mut self, line: &Line, variant: &str, metric: &str) -> Result<()> {
        let Some(f) = self.file.as_mut() else {
            return Ok(());
        };
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let g = |k: &str| line.get(k).unwrap_or("").trim_matches('"').to_string();
        let esc = |s: String| format!("\"{}\"", s.replace('"', "\"\""));
        writeln!(
            f,
            "{},{},{},{},{},{},{},{},{}",
            now,
            g("workload"),
            g("engine"),
            g("threads"),
            g("sync"),
            esc(variant.to_string()),
            metric,
            g(metric),
            esc(line.render())
        )?;
        Ok(())
    }
}

/// A ratio with 3 decimals, or 3 significant digits in exponent form below 0.01 (so a
/// parlite 1,000x slower than SQLite does not print as 0.000).
pub fn fmt_ratio(r: f64) -> String {
    if r >= 0.01 || r == 0.0 {
        format!("{r:.3}")
    } else {
        format!("{r:.2e}")
    }
}
