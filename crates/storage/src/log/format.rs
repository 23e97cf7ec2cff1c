//! Byte layout of the log file `<db>-plog`: a header, then commit frames.
//!
//! Log header (32 bytes, big-endian like the database file):
//!
//! | offset | size | field                                                        |
//! |-------:|-----:|--------------------------------------------------------------|
//! |      0 |    4 | magic "PLG1"                                                 |
//! |      4 |    4 | format version (1)                                           |
//! |      8 |    4 | page size of the database                                    |
//! |     12 |    4 | salt of this log generation                                  |
//! |     16 |    8 | base sequence: commit sequence number the db file held when  |
//! |        |      | this generation began (the first frame has base + 1)         |
//! |     24 |    4 | reserved, zero                                               |
//! |     28 |    4 | crc32 of bytes 0..28 (also the seed of the frame chain)      |
//!
//! Commit frame (one per committed write transaction, appended at the end):
//!
//! | offset | size | field                                                        |
//! |-------:|-----:|--------------------------------------------------------------|
//! |      0 |    4 | frame length in bytes, this field and the checksum included  |
//! |      4 |    4 | salt (must equal the header's)                               |
//! |      8 |    8 | commit sequence number (previous frame's + 1)                |
//! |     16 |    4 | database size in pages after the commit                      |
//! |     20 |    4 | number of page records that follow                           |
//! |     24 |    … | page records                                                 |
//! |  len-4 |    4 | crc32 over (previous checksum as 4 BE bytes ‖ bytes 0..len-4)|
//!
//! Page record: page number (4), number of runs (4), then per run: offset in page (4),
//! length (4), the bytes. Runs of one record are sorted, non-overlapping, inside the page.
//!
//! Invariants:
//! - F1. A frame is valid only if its length fits the file, its salt matches the header, its
//!   sequence number follows the previous frame's and its chained checksum matches. The
//!   chain makes a torn frame, a frame of an older generation and any frame after a bad
//!   one invalid: a reader stops at the first invalid frame.
//! - F2. A frame whose checksum is valid but whose body breaks the rules above (runs out of
//!   the page, page number 0 or past the page count...) cannot come from a torn write; it is
//!   reported as `Corrupt`, not skipped.
//! - F3. The runs of a page record cover every byte that differs between the page's previous
//!   committed image and its new one (a page new to the file is logged whole), so applying
//!   them in order reproduces the new image from the old one, and from any mixture of old
//!   and newer images of the same generation (docs/log-and-recovery.md, "Why redo is
//!   idempotent").

use crate::error::{PageNo, Result, StorageError};
use crate::header::{get_u32, put_u32};

pub const LOG_MAGIC: &[u8; 4] = b"PLG1";
pub const LOG_VERSION: u32 = 1;
pub const LOG_HEADER_BYTES: usize = 32;
pub const FRAME_HEADER_BYTES: usize = 24;
pub const FRAME_MIN_BYTES: usize = FRAME_HEADER_BYTES + 4;
/// A sanity bound on one frame; a length field above it is treated as a torn tail.
pub const FRAME_MAX_BYTES: u64 = 1 << 31;
/// Runs closer than this are merged: a run header costs 8 bytes, so a shorter gap is
/// cheaper to log as data than as a second run.
const RUN_MERGE_GAP_BYTES: usize = 8;

fn get_u64(buf: &[u8], offset: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&buf[offset..offset + 8]);
    u64::from_be_bytes(b)
}

fn put_u64(buf: &mut [u8], offset: usize, v: u64) {
    buf[offset..offset + 8].copy_from_slice(&v.to_be_bytes());
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogHeader {
    pub page_size: u32,
    pub salt: u32,
    pub base_seq: u64,
}

impl LogHeader {
    pub fn encode(&self) -> [u8; LOG_HEADER_BYTES] {
        let mut b = [0u8; LOG_HEADER_BYTES];
        b[0..4].copy_from_slice(LOG_MAGIC);
        put_u32(&mut b, 4, LOG_VERSION);
        put_u32(&mut b, 8, self.page_size);
        put_u32(&mut b, 12, self.salt);
        put_u64(&mut b, 16, self.base_seq);
        let crc = crc32fast::hash(&b[0..28]);
        put_u32(&mut b, 28, crc);
        b
    }

    /// `None` when the bytes are not a complete, self-consistent header (a log that was
    /// never finished or was torn while a new generation started: it holds nothing to redo).
    pub fn parse(b: &[u8]) -> Option<LogHeader> {
        if b.len() < LOG_HEADER_BYTES || &b[0..4] != LOG_MAGIC || get_u32(b, 4) != LOG_VERSION {
            return None;
        }
        if crc32fast::hash(&b[0..28]) != get_u32(b, 28) {
            return None;
        }
        let page_size = get_u32(b, 8);
        if !(512..=65536).contains(&page_size) || !page_size.is_power_of_two() {
            return None;
        }
        Some(LogHeader {
            page_size,
            salt: get_u32(b, 12),
            base_seq: get_u64(b, 16),
        })
    }

    /// The checksum that seeds the frame chain.
    pub fn chain_seed(&self) -> u32 {
        get_u32(&self.encode(), 28)
    }
}

/// One changed byte run of a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    pub offset: u32,
    pub bytes: Vec<u8>,
}

/// The change a commit made to one page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageDelta {
    pub pgno: PageNo,
    pub runs: Vec<Run>,
}

/// A decoded, validated frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub seq: u64,
    pub page_count: u32,
    pub pages: Vec<PageDelta>,
}

/// Up to 8 bytes of `b` from `i` as a little-endian word, zero-padded past the end (both
/// sides of a comparison are padded alike, so the padding never differs).
#[inline(always)]
fn load_word(b: &[u8], i: usize) -> u64 {
    match b.get(i..i + 8) {
        Some(w) => {
            let mut a = [0u8; 8];
            a.copy_from_slice(w);
            u64::from_le_bytes(a)
        }
        None => {
            let mut a = [0u8; 8];
            let tail = b.get(i..).unwrap_or(&[]);
            a[..tail.len()].copy_from_slice(tail);
            u64::from_le_bytes(a)
        }
    }
}

/// The top bit of every byte of `x` that is not zero, exactly (Hacker's Delight 6-1,
/// without the borrow that makes the short form inexact above a zero byte).
#[inline(always)]
fn nonzero_bytes(x: u64) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    ((x & LOW7).wrapping_add(LOW7) | x) & !LOW7
}

/// The first index `>= i` where `a` and `b` (equal lengths `n`) differ, or `n`.
#[inline(always)]
fn next_difference(a: &[u8], b: &[u8], mut i: usize) -> usize {
    let n = a.len();
    // Equal 256-byte blocks by `memcmp` (vectorized in libc: ~1k instructions for an
    // unchanged 4 KiB page against ~3k for the word loop below), then 32 bytes per step
    // inside the block that differs: four XORed words, one test.
    while i + 256 <= n && a[i..i + 256] == b[i..i + 256] {
        i += 256;
    }
    while i + 32 <= n {
        let x = [
            load_word(a, i) ^ load_word(b, i),
            load_word(a, i + 8) ^ load_word(b, i + 8),
            load_word(a, i + 16) ^ load_word(b, i + 16),
            load_word(a, i + 24) ^ load_word(b, i + 24),
        ];
        if (x[0] | x[1] | x[2] | x[3]) != 0 {
            for (k, w) in x.iter().enumerate() {
                if *w != 0 {
                    return i + 8 * k + (w.trailing_zeros() / 8) as usize;
                }
            }
        }
        i += 32;
    }
    while i < n {
        let x = load_word(a, i) ^ load_word(b, i);
        if x != 0 {
            return (i + (x.trailing_zeros() / 8) as usize).min(n);
        }
        i += 8;
    }
    n
}

/// Calls `f(start, end)` for each byte run where `new` differs from `old` (F3), in order.
/// Equal lengths required. A run ends after its last differing byte when the next
/// `RUN_MERGE_GAP_BYTES` bytes are equal (or the page ends).
///
/// Block- and word-at-a-time: the equal stretches by `next_difference`, a run 8 bytes per step (the
/// highest differing byte of the 8 after the run's last one is its new last one, since all
/// of them lie within the merge gap). A commit diffs every page it changed; the previous
/// 16-byte/bytewise loop with a `Vec` per run cost ~12k instructions per kv_ops disk
/// UPDATE commit (2.5 pages), this one ~2k (BENCHMARKS.md, kv branch, 2026-11-23).
/// `tests::diff_runs_matches_the_bytewise_rule` checks it against the byte-at-a-time rule.
fn for_each_run(old: &[u8], new: &[u8], mut f: impl FnMut(usize, usize)) {
    // The 8-byte window below is the merge gap.
    const _: () = assert!(RUN_MERGE_GAP_BYTES == 8);
    debug_assert_eq!(old.len(), new.len());
    let n = old.len().min(new.len());
    let (old, new) = (&old[..n], &new[..n]);
    let mut i = 0;
    loop {
        let start = next_difference(old, new, i);
        if start >= n {
            return;
        }
        let mut last = start;
        loop {
            let w = last + 1;
            if w >= n {
                break;
            }
            let m = nonzero_bytes(load_word(old, w) ^ load_word(new, w));
            if m == 0 {
                break;
            }
            last = w + ((63 - m.leading_zeros()) / 8) as usize;
        }
        f(start, last + 1);
        // The 8 bytes after the run are equal (or past the end).
        i = last + 1 + RUN_MERGE_GAP_BYTES;
    }
}

/// The byte runs where `new` differs from `old` (F3), as `for_each_run` finds them.
pub fn diff_runs(old: &[u8], new: &[u8]) -> Vec<Run> {
    let mut runs = Vec::new();
    for_each_run(old, new, |start, end| {
        runs.push(Run {
            offset: start as u32,
            bytes: new[start..end].to_vec(),
        })
    });
    runs
}

/// An unsealed frame (as [`encode_unsealed_frame`] makes) built page by page: each changed
/// page's record is diffed straight into the frame's buffer, with no run list between (the
/// commit path's diff, pager step 2). `finish` fills in the length and the record count.
pub struct FrameBuilder {
    buf: Vec<u8>,
    records: u32,
}

impl FrameBuilder {
    /// Builds into `buf` (emptied first: a caller recycles the previous frame's buffer);
    /// `page_size` sizes its room (a small commit's frame fits it).
    pub fn new(mut buf: Vec<u8>, seq: u64, page_count: u32, page_size: usize) -> FrameBuilder {
        buf.clear();
        buf.reserve(FRAME_HEADER_BYTES + 4 + page_size / 4);
        buf.extend_from_slice(&0u32.to_be_bytes()); // length, set by `finish`
        buf.extend_from_slice(&0u32.to_be_bytes()); // salt, set when sealed
        buf.extend_from_slice(&seq.to_be_bytes());
        buf.extend_from_slice(&page_count.to_be_bytes());
        buf.extend_from_slice(&0u32.to_be_bytes()); // records, set by `finish`
        FrameBuilder { buf, records: 0 }
    }

    /// Appends the record of `pgno`'s runs where `new` differs from `old` (F3). Returns
    /// false, appending nothing, when the two are equal.
    pub fn push_diff(&mut self, pgno: PageNo, old: &[u8], new: &[u8]) -> bool {
        let head = self.buf.len();
        self.buf.extend_from_slice(&pgno.0.to_be_bytes());
        self.buf.extend_from_slice(&0u32.to_be_bytes());
        let mut runs = 0u32;
        let buf = &mut self.buf;
        for_each_run(old, new, |start, end| {
            runs += 1;
            buf.extend_from_slice(&(start as u32).to_be_bytes());
            buf.extend_from_slice(&((end - start) as u32).to_be_bytes());
            buf.extend_from_slice(&new[start..end]);
        });
        if runs == 0 {
            self.buf.truncate(head);
            return false;
        }
        put_u32(&mut self.buf, head + 4, runs);
        self.records += 1;
        true
    }

    /// Appends `pgno`'s record as one run of the whole page (a page new to the file, F3).
    pub fn push_full(&mut self, pgno: PageNo, page: &[u8]) {
        self.buf.extend_from_slice(&pgno.0.to_be_bytes());
        self.buf.extend_from_slice(&1u32.to_be_bytes());
        self.buf.extend_from_slice(&0u32.to_be_bytes());
        self.buf
            .extend_from_slice(&(page.len() as u32).to_be_bytes());
        self.buf.extend_from_slice(page);
        self.records += 1;
    }

    /// The frame, salt and checksum still zero ([`seal_frame`] writes them).
    pub fn finish(mut self) -> Vec<u8> {
        self.buf.extend_from_slice(&0u32.to_be_bytes());
        let len = self.buf.len() as u32;
        put_u32(&mut self.buf, 0, len);
        put_u32(&mut self.buf, 20, self.records);
        self.buf
    }
}

/// The whole page as one run (pages new to the file, F3).
pub fn full_run(page: &[u8]) -> Vec<Run> {
    vec![Run {
        offset: 0,
        bytes: page.to_vec(),
    }]
}

/// Applies runs (validated by `decode_frame_body`) to a page image.
pub fn apply_runs(page: &mut [u8], runs: &[Run]) {
    for r in runs {
        let start = r.offset as usize;
        page[start..start + r.bytes.len()].copy_from_slice(&r.bytes);
    }
}

/// Encodes a frame; returns its bytes and its checksum (the next frame's chain input).
pub fn encode_frame(
    salt: u32,
    seq: u64,
    page_count: u32,
    pages: &[PageDelta],
    prev_crc: u32,
) -> (Vec<u8>, u32) {
    let mut b = encode_unsealed_frame(seq, page_count, pages);
    let crc = seal_frame(&mut b, salt, prev_crc);
    (b, crc)
}

/// A frame's bytes with its salt and checksum left zero: everything that does not depend
/// on the log's generation and chain, so a committer builds it before it takes the writer
/// lock (pager, commit step 2) and [`seal_frame`] finishes it under the log mutex.
pub fn encode_unsealed_frame(seq: u64, page_count: u32, pages: &[PageDelta]) -> Vec<u8> {
    let body: usize = pages
        .iter()
        .map(|p| 8 + p.runs.iter().map(|r| 8 + r.bytes.len()).sum::<usize>())
        .sum();
    let len = FRAME_HEADER_BYTES + body + 4;
    let mut b = Vec::with_capacity(len);
    b.extend_from_slice(&(len as u32).to_be_bytes());
    b.extend_from_slice(&0u32.to_be_bytes());
    b.extend_from_slice(&seq.to_be_bytes());
    b.extend_from_slice(&page_count.to_be_bytes());
    b.extend_from_slice(&(pages.len() as u32).to_be_bytes());
    for p in pages {
        b.extend_from_slice(&p.pgno.0.to_be_bytes());
        b.extend_from_slice(&(p.runs.len() as u32).to_be_bytes());
        for r in &p.runs {
            b.extend_from_slice(&r.offset.to_be_bytes());
            b.extend_from_slice(&(r.bytes.len() as u32).to_be_bytes());
            b.extend_from_slice(&r.bytes);
        }
    }
    b.extend_from_slice(&0u32.to_be_bytes());
    debug_assert_eq!(b.len(), len);
    b
}

/// The sequence number an unsealed frame was built for.
pub fn frame_seq(frame: &[u8]) -> u64 {
    get_u64(frame, 8)
}

/// Writes the generation's salt and the chained checksum into a frame from
/// [`encode_unsealed_frame`] (re-sealing overwrites both); returns the checksum.
pub fn seal_frame(frame: &mut [u8], salt: u32, prev_crc: u32) -> u32 {
    let n = frame.len();
    debug_assert!(n >= FRAME_MIN_BYTES);
    put_u32(frame, 4, salt);
    let crc = frame_crc(prev_crc, &frame[..n - 4]);
    put_u32(frame, n - 4, crc);
    crc
}

fn frame_crc(prev_crc: u32, body: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&prev_crc.to_be_bytes());
    h.update(body);
    h.finalize()
}

/// What a frame's fixed header says, before the rest is read.
#[derive(Debug, Clone, Copy)]
pub struct FrameHead {
    pub len: u64,
    pub salt: u32,
    pub seq: u64,
    pub page_count: u32,
    pub n_pages: u32,
}

pub fn parse_frame_head(b: &[u8]) -> FrameHead {
    FrameHead {
        len: get_u32(b, 0) as u64,
        salt: get_u32(b, 4),
        seq: get_u64(b, 8),
        page_count: get_u32(b, 16),
        n_pages: get_u32(b, 20),
    }
}

/// Checks a complete frame's checksum (F1). `false`: torn or stale, stop reading here.
pub fn frame_checksum_ok(frame: &[u8], prev_crc: u32) -> Option<u32> {
    if frame.len() < FRAME_MIN_BYTES {
        return None;
    }
    let end = frame.len() - 4;
    let crc = frame_crc(prev_crc, &frame[..end]);
    (crc == get_u32(frame, end)).then_some(crc)
}

/// Decodes the page records of a frame whose checksum is valid (F2: any rule broken here is
/// corruption, since a valid checksum rules out a torn write).
pub fn decode_frame_body(frame: &[u8], page_size: u32) -> Result<Frame> {
    let head = parse_frame_head(frame);
    let bad =
        |reason: String| StorageError::corrupt(None, format!("log frame {}: {reason}", head.seq));
    if head.page_count == 0 {
        return Err(bad("page count 0".into()));
    }
    let end = frame.len() - 4;
    let mut at = FRAME_HEADER_BYTES;
    let take_u32 = |at: &mut usize| -> Result<u32> {
        if *at + 4 > end {
            return Err(StorageError::corrupt(
                None,
                format!("log frame {}: record runs past the frame", head.seq),
            ));
        }
        let v = get_u32(frame, *at);
        *at += 4;
        Ok(v)
    };
    // Each page record needs at least 8 bytes, which bounds the loop by the frame size.
    if head.n_pages as usize > (end - FRAME_HEADER_BYTES) / 8 {
        return Err(bad("more page records than the frame can hold".into()));
    }
    let mut pages = Vec::with_capacity(head.n_pages as usize);
    let mut last_pgno = 0u32;
    for _ in 0..head.n_pages {
        let pgno = take_u32(&mut at)?;
        let n_runs = take_u32(&mut at)?;
        if pgno == 0 || pgno > head.page_count {
            return Err(bad(format!("page {pgno} outside 1..={}", head.page_count)));
        }
        if pgno <= last_pgno {
            return Err(bad("page records not in ascending order".into()));
        }
        last_pgno = pgno;
        if n_runs as usize > (end - at) / 8 {
            return Err(bad("more runs than the frame can hold".into()));
        }
        let mut runs = Vec::with_capacity(n_runs as usize);
        let mut page_end = 0u64;
        for _ in 0..n_runs {
            let offset = take_u32(&mut at)?;
            let len = take_u32(&mut at)?;
            if (offset as u64) < page_end
                || offset as u64 + len as u64 > page_size as u64
                || len == 0
            {
                return Err(bad(format!(
                    "run {offset}+{len} of page {pgno} is out of order or out of the page"
                )));
            }
            if at + len as usize > end {
                return Err(bad("run bytes past the frame".into()));
            }
            page_end = offset as u64 + len as u64;
            runs.push(Run {
                offset,
                bytes: frame[at..at + len as usize].to_vec(),
            });
            at += len as usize;
        }
        pages.push(PageDelta {
            pgno: PageNo(pgno),
            runs,
        });
    }
    if at != end {
        return Err(bad("trailing bytes after the page records".into()));
    }
    Ok(Frame {
        seq: head.seq,
        page_count: head.page_count,
        pages,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_then_apply_reproduces_new_image() {
        let old: Vec<u8> = (0..512u32).map(|i| (i * 7) as u8).collect();
        let mut new = old.clone();
        new[3] ^= 1;
        new[5] ^= 1; // merged with the run at 3 (gap < 8)
        new[100..140].fill(9);
        new[511] ^= 0xff;
        let runs = diff_runs(&old, &new);
        assert_eq!(runs.len(), 3);
        let mut img = old.clone();
        apply_runs(&mut img, &runs);
        assert_eq!(img, new);
        assert!(diff_runs(&old, &old).is_empty());
    }

    /// The rule `diff_runs` implements, one byte at a time.
    fn diff_runs_bytewise(old: &[u8], new: &[u8]) -> Vec<Run> {
        let mut runs: Vec<Run> = Vec::new();
        let n = old.len();
        let mut i = 0;
        while i < n {
            if old[i] == new[i] {
                i += 1;
                continue;
            }
            let start = i;
            let mut end = i + 1;
            loop {
                while end < n && old[end] != new[end] {
                    end += 1;
                }
                let gap_end = (end + RUN_MERGE_GAP_BYTES).min(n);
                match (end..gap_end).find(|&j| old[j] != new[j]) {
                    Some(j) => end = j,
                    None => break,
                }
            }
            runs.push(Run {
                offset: start as u32,
                bytes: new[start..end].to_vec(),
            });
            i = end;
        }
        runs
    }

    #[test]
    fn diff_runs_matches_the_bytewise_rule() {
        // A small deterministic generator: changes of every length and gap, at every
        // alignment, on pages of odd and even sizes.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for round in 0..4000 {
            let len = [512usize, 4096, 37, 8, 9, 1, 0][round % 7];
            // Few byte values: equal bytes inside changes; many: whole differing words.
            let values = if round % 2 == 0 { 4 } else { 256 };
            let old: Vec<u8> = (0..len).map(|_| (next() % values) as u8).collect();
            let mut new = old.clone();
            for _ in 0..(next() % 12) {
                if len == 0 {
                    break;
                }
                let at = (next() as usize) % len;
                let span = ((next() % 40) as usize).min(len - at);
                for b in &mut new[at..at + span] {
                    // Sometimes equal to the old byte: runs with equal bytes inside.
                    *b = (next() % values) as u8;
                }
            }
            assert_eq!(
                diff_runs(&old, &new),
                diff_runs_bytewise(&old, &new),
                "round {round}"
            );
        }
    }

    /// `FrameBuilder` writes the bytes `encode_unsealed_frame` writes for the same pages
    /// (equal pages leave no record), and the frame decodes back to those page records;
    /// each round builds into the previous round's frame, as the commit path recycles it.
    #[test]
    fn frame_builder_matches_encode_unsealed_frame() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut recycled = vec![0xEE; 7];
        for round in 0..200 {
            let page_size = 512;
            let mut b = FrameBuilder::new(std::mem::take(&mut recycled), 40 + round, 9, page_size);
            let mut deltas = Vec::new();
            for pgno in 1..=4u32 {
                let old: Vec<u8> = (0..page_size).map(|_| (next() % 4) as u8).collect();
                let mut new = old.clone();
                for _ in 0..(next() % 5) {
                    let at = (next() as usize) % page_size;
                    let span = ((next() % 70) as usize).min(page_size - at);
                    for x in &mut new[at..at + span] {
                        *x = (next() % 4) as u8;
                    }
                }
                if pgno == 4 && round % 3 == 0 {
                    b.push_full(PageNo(pgno), &new);
                    deltas.push(PageDelta {
                        pgno: PageNo(pgno),
                        runs: full_run(&new),
                    });
                    continue;
                }
                let runs = diff_runs(&old, &new);
                assert_eq!(b.push_diff(PageNo(pgno), &old, &new), !runs.is_empty());
                if !runs.is_empty() {
                    deltas.push(PageDelta {
                        pgno: PageNo(pgno),
                        runs,
                    });
                }
            }
            let built = b.finish();
            assert_eq!(
                built,
                encode_unsealed_frame(40 + round, 9, &deltas),
                "round {round}"
            );
            let mut sealed = built.clone();
            seal_frame(&mut sealed, 5, 0);
            assert_eq!(
                decode_frame_body(&sealed, page_size as u32).unwrap().pages,
                deltas
            );
            recycled = built;
        }
    }

    #[test]
    fn frame_round_trip_and_chain() {
        let h = LogHeader {
            page_size: 512,
            salt: 77,
            base_seq: 5,
        };
        assert_eq!(LogHeader::parse(&h.encode()), Some(h));
        let pages = vec![
            PageDelta {
                pgno: PageNo(1),
                runs: vec![Run {
                    offset: 24,
                    bytes: vec![1, 2, 3, 4],
                }],
            },
            PageDelta {
                pgno: PageNo(3),
                runs: full_run(&[7u8; 512]),
            },
        ];
        let (bytes, crc) = encode_frame(77, 6, 3, &pages, h.chain_seed());
        assert_eq!(frame_checksum_ok(&bytes, h.chain_seed()), Some(crc));
        assert_eq!(frame_checksum_ok(&bytes, h.chain_seed() ^ 1), None);
        let f = decode_frame_body(&bytes, 512).unwrap();
        assert_eq!(
            f,
            Frame {
                seq: 6,
                page_count: 3,
                pages
            }
        );
        let mut torn = bytes.clone();
        torn[30] ^= 1;
        assert_eq!(frame_checksum_ok(&torn, h.chain_seed()), None);
    }

    #[test]
    fn malformed_body_with_valid_checksum_is_corrupt() {
        let pages = vec![PageDelta {
            pgno: PageNo(9),
            runs: vec![Run {
                offset: 0,
                bytes: vec![1],
            }],
        }];
        let (bytes, _) = encode_frame(1, 1, 3, &pages, 0);
        assert!(matches!(
            decode_frame_body(&bytes, 512),
            Err(StorageError::Corrupt { .. })
        ));
        let pages = vec![PageDelta {
            pgno: PageNo(1),
            runs: vec![Run {
                offset: 510,
                bytes: vec![1; 4],
            }],
        }];
        let (bytes, _) = encode_frame(1, 1, 3, &pages, 0);
        assert!(matches!(
            decode_frame_body(&bytes, 512),
            Err(StorageError::Corrupt { .. })
        ));
    }
}
