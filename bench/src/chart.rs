//! `chart`: PNG charts of tps vs threads, one per (workload, fs, sync, journal, variant),
//! from the rows a `--csv` run appended. parlite and SQLite are drawn side by side; when a
//! point was measured several times the last row wins (the CSV is append-only).
//!
//! A `bdb_update --begin` variant becomes a series rather than a chart of its own, so runs
//! with `--begin immediate` and `--begin concurrent` appended to one CSV draw parlite
//! IMMEDIATE, parlite CONCURRENT and SQLite on the same axes.
//!
//! Self-contained on purpose (no plotting or compression crate): a tiny RGB canvas, a 5x7
//! bitmap font and a PNG writer (palette colour, fixed-Huffman deflate with run and
//! previous-row matches). A chart is a few tens of KB at most.
//!
//! Invariant: the PNG is valid for any canvas of at most 256 colours (more is an error, not a
//! corrupt file); `deflate_fixed` only emits matches whose source lies inside the data.

use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

const W: usize = 1000;
const H: usize = 560;
const LEFT: usize = 90;
const RIGHT: usize = 270;
const TOP: usize = 50;
const BOTTOM: usize = 60;

type Rgb = [u8; 3];
const WHITE: Rgb = [255, 255, 255];
const BLACK: Rgb = [0, 0, 0];
const GRID: Rgb = [225, 225, 225];
const PARLITE: Rgb = [31, 119, 180];
const SQLITE: Rgb = [255, 127, 14];
const PARLITE_CONCURRENT: Rgb = [44, 160, 44];

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
        // A `begin=` variant (bdb_update --begin) is a series of the chart, not a chart of
        // its own: parlite IMMEDIATE, parlite CONCURRENT and SQLite share the axes. The
        // series is named by the begin mode the engine ran (the line's `begin=`: SQLite
        // runs IMMEDIATE when parlite runs CONCURRENT).
        let variant = c_variant.map(get).unwrap_or("");
        let has_begin = variant.split(' ').any(|t| t.starts_with("begin="));
        let variant: Vec<&str> = variant
            .split(' ')
            .filter(|t| !t.is_empty() && !t.starts_with("begin="))
            .collect();
        let key = format!(
            "{} fs={} sync={} journal={} {}",
            kv_get(line, "workload").unwrap_or_default(),
            kv_get(line, "fs").unwrap_or_default(),
            kv_get(line, "sync").unwrap_or_default(),
            kv_get(line, "journal").unwrap_or_default(),
            variant.join(" ")
        );
        let name = match kv_get(line, "begin") {
            Some(b) if has_begin => format!("{engine} {b}"),
            _ => engine.to_string(),
        };
        charts
            .entry(key.trim_end().to_string())
            .or_default()
            .entry(name)
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
        let color = match engine.split(' ').collect::<Vec<_>>()[..] {
            ["parlite", "concurrent"] => PARLITE_CONCURRENT,
            ["parlite", ..] => PARLITE,
            _ => SQLITE,
        };
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

    /// PNG: 8-bit palette (the few colours the chart uses), filter 0, one zlib stream of
    /// fixed-Huffman deflate (RFC 1950/1951/2083, see [`deflate_fixed`]). A chart is a few KB.
    fn write_png(&self, path: &Path) -> Result<()> {
        let mut palette: Vec<Rgb> = Vec::new();
        let mut raw = Vec::with_capacity(H * (W + 1));
        for row in self.px.chunks(W * 3) {
            raw.push(0);
            for p in row.chunks(3) {
                let c = [p[0], p[1], p[2]];
                let i = match palette.iter().position(|&q| q == c) {
                    Some(i) => i,
                    None if palette.len() < 256 => {
                        palette.push(c);
                        palette.len() - 1
                    }
                    None => bail!("chart uses more than 256 colours"),
                };
                raw.push(i as u8);
            }
        }
        let mut z = vec![0x78, 0x01];
        z.extend_from_slice(&deflate_fixed(&raw, W + 1));
        let (mut a, mut b) = (1u32, 0u32);
        for &byte in &raw {
            a = (a + u32::from(byte)) % 65_521;
            b = (b + a) % 65_521;
        }
        z.extend_from_slice(&((b << 16) | a).to_be_bytes());

        let mut ihdr = Vec::new();
        ihdr.extend_from_slice(&(W as u32).to_be_bytes());
        ihdr.extend_from_slice(&(H as u32).to_be_bytes());
        ihdr.extend_from_slice(&[8, 3, 0, 0, 0]);
        let plte: Vec<u8> = palette.concat();
        let mut f =
            std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
        f.write_all(b"\x89PNG\r\n\x1a\n")?;
        for (kind, data) in [
            (b"IHDR", &ihdr),
            (b"PLTE", &plte),
            (b"IDAT", &z),
            (b"IEND", &Vec::new()),
        ] {
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

/// Deflate base lengths of length codes 257..=285 and their extra bits (RFC 1951 3.2.5).
const LEN_BASE: [u16; 29] = [
    3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131,
    163, 195, 227, 258,
];
const LEN_EXTRA: [u8; 29] = [
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
];
/// Deflate base distances of distance codes 0..=29 and their extra bits.
const DIST_BASE: [u16; 30] = [
    1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
    2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
];
const DIST_EXTRA: [u8; 30] = [
    0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13,
    13,
];

/// LSB-first bit writer of a deflate stream.
struct Bits {
    out: Vec<u8>,
    acc: u32,
    n: u32,
}

impl Bits {
    /// `n` (<= 16) low bits of `v`, least significant first (extra bits, block header).
    fn put(&mut self, v: u32, n: u32) {
        self.acc |= (v & ((1 << n) - 1)) << self.n;
        self.n += n;
        while self.n >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.n -= 8;
        }
    }

    /// A Huffman code of `n` bits: most significant bit first.
    fn code(&mut self, code: u32, n: u32) {
        let rev = code.reverse_bits() >> (32 - n);
        self.put(rev, n);
    }

    /// Literal/length symbol `sym` (0..=287) in the fixed code.
    fn sym(&mut self, sym: u32) {
        match sym {
            0..=143 => self.code(0x30 + sym, 8),
            144..=255 => self.code(0x190 + sym - 144, 9),
            256..=279 => self.code(sym - 256, 7),
            _ => self.code(0xC0 + sym - 280, 8),
        }
    }

    fn finish(mut self) -> Vec<u8> {
        if self.n > 0 {
            self.out.push(self.acc as u8);
        }
        self.out
    }
}

/// One final fixed-Huffman deflate block of `data`. Matches are looked for at only two
/// distances, 1 (runs of one colour) and `stride` (the same pixel of the previous scanline),
/// which is what a chart on a flat background repeats; anything else is a literal.
fn deflate_fixed(data: &[u8], stride: usize) -> Vec<u8> {
    let mut b = Bits {
        out: Vec::with_capacity(data.len() / 16),
        acc: 0,
        n: 0,
    };
    b.put(1, 1); // BFINAL
    b.put(1, 2); // BTYPE=01: fixed Huffman codes
    let match_len = |i: usize, dist: usize| {
        if dist == 0 || i < dist {
            return 0;
        }
        let max = (data.len() - i).min(258);
        (0..max)
            .take_while(|&k| data[i + k] == data[i + k - dist])
            .count()
    };
    let mut i = 0;
    while i < data.len() {
        let (l1, ls) = (match_len(i, 1), match_len(i, stride));
        let (len, dist) = if ls >= l1 { (ls, stride) } else { (l1, 1) };
        if len < 3 {
            b.sym(u32::from(data[i]));
            i += 1;
            continue;
        }
        let lc = LEN_BASE
            .iter()
            .rposition(|&base| usize::from(base) <= len)
            .unwrap_or(0);
        b.sym(257 + lc as u32);
        b.put(
            (len - usize::from(LEN_BASE[lc])) as u32,
            u32::from(LEN_EXTRA[lc]),
        );
        let dc = DIST_BASE
            .iter()
            .rposition(|&base| usize::from(base) <= dist)
            .unwrap_or(0);
        b.code(dc as u32, 5);
        b.put(
            (dist - usize::from(DIST_BASE[dc])) as u32,
            u32::from(DIST_EXTRA[dc]),
        );
        i += len;
    }
    b.sym(256); // end of block
    b.finish()
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

    /// A decoder for exactly what `deflate_fixed` writes (one final fixed-Huffman block).
    fn inflate_fixed(z: &[u8]) -> Vec<u8> {
        let mut pos = 0usize; // bit position
        let mut bit = || {
            let b = (z[pos / 8] >> (pos % 8)) & 1;
            pos += 1;
            u32::from(b)
        };
        let bits = |n: u32, bit: &mut dyn FnMut() -> u32| (0..n).fold(0, |v, k| v | (bit() << k));
        assert_eq!(bits(3, &mut bit), 0b011, "BFINAL=1, BTYPE=01");
        let mut out: Vec<u8> = Vec::new();
        loop {
            let mut code = 0u32;
            for _ in 0..7 {
                code = (code << 1) | bit();
            }
            let sym = if code <= 0b001_0111 {
                256 + code
            } else {
                code = (code << 1) | bit();
                match code {
                    0x30..=0xBF => code - 0x30,
                    0xC0..=0xC7 => 280 + code - 0xC0,
                    _ => {
                        code = (code << 1) | bit();
                        144 + code - 0x190
                    }
                }
            };
            match sym {
                0..=255 => out.push(sym as u8),
                256 => return out,
                _ => {
                    let lc = (sym - 257) as usize;
                    let len = usize::from(LEN_BASE[lc])
                        + bits(u32::from(LEN_EXTRA[lc]), &mut bit) as usize;
                    let mut dc = 0usize;
                    for _ in 0..5 {
                        dc = (dc << 1) | bit() as usize;
                    }
                    let dist = usize::from(DIST_BASE[dc])
                        + bits(u32::from(DIST_EXTRA[dc]), &mut bit) as usize;
                    assert!(dist <= out.len(), "match before the start");
                    for _ in 0..len {
                        out.push(out[out.len() - dist]);
                    }
                }
            }
        }
    }

    #[test]
    fn deflate_fixed_round_trips() {
        let mut data = Vec::new();
        for row in 0..300u32 {
            data.push(0);
            for x in 0..700u32 {
                // runs, repeated rows, and bytes >= 144 (9-bit literals)
                data.push(if x % 97 == row % 5 {
                    (x * 7 + row) as u8
                } else {
                    200
                });
            }
        }
        data.extend((0..=255u8).collect::<Vec<_>>());
        let z = deflate_fixed(&data, 701);
        assert!(
            z.len() < data.len() / 10,
            "compressed {} of {}",
            z.len(),
            data.len()
        );
        assert_eq!(inflate_fixed(&z), data);
        assert_eq!(inflate_fixed(&deflate_fixed(&[], 5)), Vec::<u8>::new());
        assert_eq!(inflate_fixed(&deflate_fixed(&[9; 1000], 1)), vec![9; 1000]);
    }

    #[test]
    fn chart_png_is_small_and_has_one_chart_per_mode() {
        let dir = std::env::temp_dir().join(format!("parlite-chart-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("tmp dir");
        let csv = dir.join("runs.csv");
        let mut text =
            String::from("time,workload,engine,threads,sync,variant,metric,value,line\n");
        for (engine, begin, variant) in [
            ("parlite", "immediate", "begin=immediate"),
            ("sqlite", "immediate", "begin=immediate"),
            ("parlite", "concurrent", "begin=concurrent"),
        ] {
            for (t, tps) in [(1, 100.0), (10, 900.5), (100, 4000.0)] {
                let line = format!(
                    "workload=bdb_update threads={t} journal=wal sync=full fs=ext4 engine={engine} \
                     status=ok begin={begin} tps={tps} errors=0 check=ok"
                );
                text += &format!("0,bdb_update,{engine},{t},full,{variant},tps,{tps},\"{line}\"\n");
            }
        }
        std::fs::write(&csv, text).expect("write csv");
        run(&csv, &dir).expect("chart");
        let pngs: Vec<_> = std::fs::read_dir(&dir)
            .expect("read dir")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "png"))
            .collect();
        assert_eq!(pngs.len(), 1, "{pngs:?}");
        let png = std::fs::read(&pngs[0]).expect("read png");
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
        assert!(png.len() < 100_000, "{} bytes", png.len());
        let _ = std::fs::remove_dir_all(&dir);
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
