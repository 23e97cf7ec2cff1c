//! `chart`: PNG charts of tps vs threads, one per (workload, fs, sync, journal, variant),
//! from the rows a `--csv` run appended. parlite and SQLite are drawn side by side; when a
//! point was measured several times the last row wins (the CSV is append-only).
//!
//! Self-contained on purpose (no plotting crate): a tiny RGB canvas, a 5x7 bitmap font and a
//! PNG writer with stored (uncompressed) deflate blocks. A chart is ~1.5 MB; that buys a
//! build with no native or heavy dependencies on this shared 2-core machine.

use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

const W: usize = 900;
const H: usize = 560;
const LEFT: usize = 90;
const RIGHT: usize = 170;
const TOP: usize = 50;
const BOTTOM: usize = 60;

type Rgb = [u8; 3];
const WHITE: Rgb = [255, 255, 255];
const BLACK: Rgb = [0, 0, 0];
const GRID: Rgb = [225, 225, 225];
const PARLITE: Rgb = [31, 119, 180];
const SQLITE: Rgb = [255, 127, 14];

/// Splits one CSV record (RFC 4180 quoting) into fields.
fn csv_fields(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out
}

/// `key=value` pairs of a printed line (values may be double-quoted).
fn kv_get(line: &str, key: &str) -> Option<String> {
    let pat = format!("{key}=");
    let mut rest = line;
    while let Some(i) = rest.find(&pat) {
        let at_start = i == 0 || rest.as_bytes()[i - 1] == b' ';
        let v = &rest[i + pat.len()..];
        if at_start {
            let val = if let Some(q) = v.strip_prefix('"') {
                q.split('"').next().unwrap_or("")
            } else {
                v.split(' ').next().unwrap_or("")
            };
            return Some(val.to_string());
        }
        rest = &rest[i + pat.len()..];
    }
    None
}

/// One chart: series name → (threads → tps).
type Series = BTreeMap<String, BTreeMap<u32, f64>>;

pub fn run(input: &Path, out: &Path) -> Result<()> {
    let text =
        std::fs::read_to_string(input).with_context(|| format!("reading {}", input.display()))?;
    let mut lines = text.lines();
    let header = csv_fields(lines.next().unwrap_or(""));
    let col = |name: &str| header.iter().position(|h| h == name);
    let (Some(c_engine), Some(c_threads), Some(c_metric), Some(c_value), Some(c_line)) = (
        col("engine"),
        col("threads"),
        col("metric"),
        col("value"),
        col("line"),
    ) else {
        bail!("{} is not a parlite-bench --csv file", input.display());
    };
    let c_variant = col("variant");
    let mut charts: BTreeMap<String, Series> = BTreeMap::new();
    for l in lines {
        let f = csv_fields(l);
        let get = |i: usize| f.get(i).map(String::as_str).unwrap_or("");
        let engine = get(c_engine);
        if get(c_metric) != "tps" || !(engine == "parlite" || engine == "sqlite") {
            continue;
        }
        let line = get(c_line);
        // Only points that ran cleanly: no statement errors, checks passed.
        if kv_get(line, "status").as_deref() != Some("ok")
            || kv_get(line, "errors").is_some_and(|e| e != "0")
            || kv_get(line, "check").is_some_and(|c| c != "ok")
        {
            continue;
        }
        let (Ok(threads), Ok(tps)) = (get(c_threads).parse::<u32>(), get(c_value).parse::<f64>())
        else {
            continue;
        };
        let key = format!(
            "{} fs={} sync={} journal={} {}",
            kv_get(line, "workload").unwrap_or_default(),
            kv_get(line, "fs").unwrap_or_default(),
            kv_get(line, "sync").unwrap_or_default(),
            kv_get(line, "journal").unwrap_or_default(),
            c_variant.map(get).unwrap_or("")
        );
        charts
            .entry(key)
            .or_default()
            .entry(engine.to_string())
            .or_default()
            .insert(threads, tps);
    }
    if charts.is_empty() {
        bail!("{}: no tps rows with status=ok to chart", input.display());
    }
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    for (title, series) in &charts {
        let name: String = title
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let path = out.join(format!("{name}.png"));
        let mut canvas = Canvas::new();
        draw(&mut canvas, title, series);
        canvas.write_png(&path)?;
        println!("chart: {}", path.display());
    }
    Ok(())
}

fn nice_step(max: f64) -> f64 {
    let raw = (max / 5.0).max(1e-9);
    let mag = 10f64.powf(raw.log10().floor());
    for m in [1.0, 2.0, 2.5, 5.0, 10.0] {
        if raw <= m * mag {
            return m * mag;
        }
    }
    10.0 * mag
}

fn fmt_num(v: f64) -> String {
    if v >= 10_000.0 {
        format!("{:.0}k", v / 1000.0)
    } else if v >= 1000.0 {
        format!("{:.1}k", v / 1000.0)
    } else {
        format!("{v:.0}")
    }
}

fn draw(c: &mut Canvas, title: &str, series: &Series) {
    let threads: Vec<u32> = {
        let mut t: Vec<u32> = series.values().flat_map(|s| s.keys().copied()).collect();
        t.sort_unstable();
        t.dedup();
        t
    };
    let ymax_data = series
        .values()
        .flat_map(|s| s.values().copied())
        .fold(0.0f64, f64::max);
    let step = nice_step(ymax_data * 1.05);
    let ymax = (ymax_data * 1.05 / step).ceil().max(1.0) * step;
    let (x0, x1) = (LEFT as f64, (W - RIGHT) as f64);
    let (y0, y1) = ((H - BOTTOM) as f64, TOP as f64);
    let tmin = f64::from(*threads.first().unwrap_or(&1)).max(1.0);
    let tmax = f64::from(*threads.last().unwrap_or(&1)).max(tmin + 1.0);
    let xpos = |t: u32| {
        let f = (f64::from(t).max(1.0).ln() - tmin.ln()) / (tmax.ln() - tmin.ln());
        x0 + f * (x1 - x0)
    };
    let ypos = |v: f64| y0 - v / ymax * (y0 - y1);

    // Grid, axes and labels.
    let mut v = 0.0;
    while v <= ymax + step * 0.01 {
        let y = ypos(v) as i64;
        c.line(x0 as i64, y, x1 as i64, y, GRID, 1);
        let label = fmt_num(v);
        c.text(
            LEFT as i64 - 8 - 12 * label.len() as i64,
            y - 7,
            &label,
            BLACK,
        );
        v += step;
    }
    for &t in &threads {
        let x = xpos(t) as i64;
        c.line(x, y0 as i64, x, y1 as i64, GRID, 1);
        let label = t.to_string();
        c.text(x - 6 * label.len() as i64, y0 as i64 + 10, &label, BLACK);
    }
    c.line(x0 as i64, y0 as i64, x1 as i64, y0 as i64, BLACK, 2);
    c.line(x0 as i64, y0 as i64, x0 as i64, y1 as i64, BLACK, 2);
    c.text(
        ((x0 + x1) / 2.0) as i64 - 42,
        H as i64 - 28,
        "threads",
        BLACK,
    );
    c.text(10, TOP as i64 - 30, "tps", BLACK);
    c.text(LEFT as i64, 12, title, BLACK);

    // Series and legend.
    for (i, (engine, pts)) in series.iter().enumerate() {
        let color = if engine == "parlite" { PARLITE } else { SQLITE };
        let mut prev: Option<(i64, i64)> = None;
        for (&t, &tps) in pts {
            let (x, y) = (xpos(t) as i64, ypos(tps) as i64);
            if let Some((px, py)) = prev {
                c.line(px, py, x, y, color, 3);
            }
            c.rect(x - 4, y - 4, 9, 9, color);
            prev = Some((x, y));
        }
        let ly = TOP as i64 + 20 + 30 * i as i64;
        let lx = (W - RIGHT) as i64 + 20;
        c.rect(lx, ly, 14, 14, color);
        c.text(lx + 22, ly, engine, BLACK);
    }
}

/// An RGB image with just the drawing operations the charts need.
struct Canvas {
    px: Vec<u8>,
}

impl Canvas {
    fn new() -> Canvas {
        Canvas {
            px: WHITE.repeat(W * H),
        }
    }

    fn set(&mut self, x: i64, y: i64, c: Rgb) {
        if x >= 0 && y >= 0 && (x as usize) < W && (y as usize) < H {
            let i = (y as usize * W + x as usize) * 3;
            self.px[i..i + 3].copy_from_slice(&c);
        }
    }

    fn rect(&mut self, x: i64, y: i64, w: i64, h: i64, c: Rgb) {
        for yy in y..y + h {
            for xx in x..x + w {
                self.set(xx, yy, c);
            }
        }
    }

    /// Bresenham with a square pen of `width` pixels.
    fn line(&mut self, x0: i64, y0: i64, x1: i64, y1: i64, c: Rgb, width: i64) {
        let (dx, dy) = ((x1 - x0).abs(), -(y1 - y0).abs());
        let (sx, sy) = (if x0 < x1 { 1 } else { -1 }, if y0 < y1 { 1 } else { -1 });
        let (mut x, mut y, mut err) = (x0, y0, dx + dy);
        let off = width / 2;
        loop {
            self.rect(x - off, y - off, width, width, c);
            if x == x1 && y == y1 {
                break;
            }
            let e2 = 2 * err;
            if e2 >= dy {
                err += dy;
                x += sx;
            }
            if e2 <= dx {
                err += dx;
                y += sy;
            }
        }
    }

    /// 5x7 glyphs at scale 2 (12 px advance).
    fn text(&mut self, x: i64, y: i64, s: &str, c: Rgb) {
        for (i, ch) in s.chars().enumerate() {
            let g = glyph(ch.to_ascii_lowercase());
            for (row, bits) in g.iter().enumerate() {
                for col in 0..5 {
                    if bits & (0x10 >> col) != 0 {
                        self.rect(x + 12 * i as i64 + 2 * col, y + 2 * row as i64, 2, 2, c);
                    }
                }
            }
        }
    }

    /// PNG: 8-bit RGB, filter 0, zlib with stored deflate blocks (RFC 1950/1951/2083).
    fn write_png(&self, path: &Path) -> Result<()> {
        let mut raw = Vec::with_capacity(H * (W * 3 + 1));
        for row in self.px.chunks(W * 3) {
            raw.push(0);
            raw.extend_from_slice(row);
        }
        let mut z = vec![0x78, 0x01];
        let chunks: Vec<&[u8]> = raw.chunks(65_535).collect();
        for (i, ch) in chunks.iter().enumerate() {
            z.push(u8::from(i + 1 == chunks.len()));
            let n = ch.len() as u16;
            z.extend_from_slice(&n.to_le_bytes());
            z.extend_from_slice(&(!n).to_le_bytes());
            z.extend_from_slice(ch);
        }
        let (mut a, mut b) = (1u32, 0u32);
        for &byte in &raw {
            a = (a + u32::from(byte)) % 65_521;
            b = (b + a) % 65_521;
        }
        z.extend_from_slice(&((b << 16) | a).to_be_bytes());

        let mut ihdr = Vec::new();
        ihdr.extend_from_slice(&(W as u32).to_be_bytes());
        ihdr.extend_from_slice(&(H as u32).to_be_bytes());
        ihdr.extend_from_slice(&[8, 2, 0, 0, 0]);
        let mut f =
            std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
        f.write_all(b"\x89PNG\r\n\x1a\n")?;
        for (kind, data) in [(b"IHDR", &ihdr), (b"IDAT", &z), (b"IEND", &Vec::new())] {
            f.write_all(&(data.len() as u32).to_be_bytes())?;
            let mut h = crc32fast::Hasher::new();
            h.update(kind);
            h.update(data);
            f.write_all(kind)?;
            f.write_all(data)?;
            f.write_all(&h.finalize().to_be_bytes())?;
        }
        Ok(())
    }
}

/// A 5x7 bitmap font (rows top to bottom, bit 4 = leftmost column).
fn glyph(c: char) -> [u8; 7] {
    match c {
        '0' => [0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E],
        '1' => [0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E],
        '2' => [0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F],
        '3' => [0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E],
        '4' => [0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02],
        '5' => [0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E],
        '6' => [0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E],
        '7' => [0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08],
        '8' => [0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E],
        '9' => [0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C],
        'a' => [0x00, 0x00, 0x0E, 0x01, 0x0F, 0x11, 0x0F],
        'b' => [0x10, 0x10, 0x16, 0x19, 0x11, 0x11, 0x1E],
        'c' => [0x00, 0x00, 0x0E, 0x10, 0x10, 0x11, 0x0E],
        'd' => [0x01, 0x01, 0x0D, 0x13, 0x11, 0x11, 0x0F],
        'e' => [0x00, 0x00, 0x0E, 0x11, 0x1F, 0x10, 0x0E],
        'f' => [0x06, 0x09, 0x08, 0x1C, 0x08, 0x08, 0x08],
        'g' => [0x00, 0x0F, 0x11, 0x11, 0x0F, 0x01, 0x0E],
        'h' => [0x10, 0x10, 0x16, 0x19, 0x11, 0x11, 0x11],
        'i' => [0x04, 0x00, 0x0C, 0x04, 0x04, 0x04, 0x0E],
        'j' => [0x02, 0x00, 0x06, 0x02, 0x02, 0x12, 0x0C],
        'k' => [0x10, 0x10, 0x12, 0x14, 0x18, 0x14, 0x12],
        'l' => [0x0C, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E],
        'm' => [0x00, 0x00, 0x1A, 0x15, 0x15, 0x11, 0x11],
        'n' => [0x00, 0x00, 0x16, 0x19, 0x11, 0x11, 0x11],
        'o' => [0x00, 0x00, 0x0E, 0x11, 0x11, 0x11, 0x0E],
        'p' => [0x00, 0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10],
        'q' => [0x00, 0x0F, 0x11, 0x11, 0x0F, 0x01, 0x01],
        'r' => [0x00, 0x00, 0x16, 0x19, 0x10, 0x10, 0x10],
        's' => [0x00, 0x00, 0x0E, 0x10, 0x0E, 0x01, 0x1E],
        't' => [0x08, 0x08, 0x1C, 0x08, 0x08, 0x09, 0x06],
        'u' => [0x00, 0x00, 0x11, 0x11, 0x11, 0x13, 0x0D],
        'v' => [0x00, 0x00, 0x11, 0x11, 0x11, 0x0A, 0x04],
        'w' => [0x00, 0x00, 0x11, 0x11, 0x15, 0x15, 0x0A],
        'x' => [0x00, 0x00, 0x11, 0x0A, 0x04, 0x0A, 0x11],
        'y' => [0x00, 0x11, 0x11, 0x11, 0x0F, 0x01, 0x0E],
        'z' => [0x00, 0x00, 0x1F, 0x02, 0x04, 0x08, 0x1F],
        '.' => [0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x0C],
        '-' => [0x00, 0x00, 0x00, 0x1F, 0x00, 0x00, 0x00],
        '=' => [0x00, 0x00, 0x1F, 0x00, 0x1F, 0x00, 0x00],
        '_' => [0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1F],
        ':' => [0x00, 0x0C, 0x0C, 0x00, 0x0C, 0x0C, 0x00],
        '/' => [0x00, 0x01, 0x02, 0x04, 0x08, 0x10, 0x00],
        ',' => [0x00, 0x00, 0x00, 0x00, 0x0C, 0x04, 0x08],
        '(' => [0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02],
        ')' => [0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08],
        '%' => [0x18, 0x19, 0x02, 0x04, 0x08, 0x13, 0x03],
        '>' => [0x08, 0x04, 0x02, 0x01, 0x02, 0x04, 0x08],
        ' ' => [0; 7],
        _ => [0x1F, 0x11, 0x11, 0x11, 0x11, 0x11, 0x1F],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quoting_round_trips() {
        let f = csv_fields(r#"1,"a,b","say ""hi""",x"#);
        assert_eq!(f, ["1", "a,b", "say \"hi\"", "x"]);
    }

    #[test]
    fn kv_get_reads_plain_and_quoted_values() {
        let l = r#"workload=bdb_update threads=2 note="a b" tps=10.5"#;
        assert_eq!(kv_get(l, "tps").as_deref(), Some("10.5"));
        assert_eq!(kv_get(l, "note").as_deref(), Some("a b"));
        assert_eq!(kv_get(l, "threads").as_deref(), Some("2"));
        assert_eq!(kv_get(l, "ps"), None);
    }
}
