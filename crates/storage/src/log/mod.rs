//! The durable log `<db>-plog`: commit frames appended by the writer, scanned at recovery,
//! restarted (new generation) after each checkpoint. Byte layout in [`format`]; the whole
//! protocol (commit path, checkpoint, recovery, crash points) in docs/log-and-recovery.md.
//!
//! Invariants:
//! - G1. Frames are appended only at `end`, the byte after the last frame this process
//!   wrote or validated, by one committer at a time in sequence order (the pager's log
//!   mutex, which commits enter in that order: pager L1); the sequence numbers of one
//!   generation are consecutive from `base_seq + 1` ([`LogFile::append_unsealed`] refuses
//!   any other).
//! - G2. A new generation is started only after every frame of the old one is in the
//!   database file and the database file is synced (the checkpoint's job): it rewrites the
//!   header with a salt different from the previous generation's, truncates the file to the
//!   header and syncs, so no frame of an older generation can ever validate again (F1).
//! - G3. When the previous header could not be read (a torn header, a new file), the file
//!   is first truncated to zero, so whatever salt the new header gets, no stale frame
//!   survives behind it.
//! - G4. This module never syncs on its own initiative except when starting a generation
//!   or emptying a file; group commit (pager) decides when frames are synced.
//! - G5. The file grows ahead of the frames in zero-filled steps ([`LogFile::append_unsealed`]):
//!   every byte from `end` to `allocated_bytes` was written as zero in this generation, so
//!   most frames land inside the file's current size and their commit's fdatasync need not
//!   also commit a new file size (on this machine's ext4, ~90 µs instead of ~140–190 µs per
//!   fdatasync, and ~1 ms instead of ~0.15 ms while other I/O runs; BENCHMARKS.md, prealloc
//!   branch). A zero tail is not a frame (its length field is 0), so a scan stops at it
//!   (F1); the zeros are written only past `end`, never over a frame of this generation.
//!
//! Two files (docs/log-and-recovery.md 3b): `<db>-plog` and `<db>-plog2` take turns being
//! the active log. [`scan_chain`] joins their generations for recovery (B1: the one with
//! the smaller base first, the other only if its base is the first's last sequence number);
//! [`LogFile::next_generation`] starts a generation in the other, durably empty file (B3)
//! without a sync, so a background checkpoint's switch costs writers one 32-byte write.

pub mod format;

use crate::error::{Result, StorageError};
use crate::vfs::{read_zero_padded, VfsFile};
use format::{
    decode_frame_body, encode_unsealed_frame, frame_checksum_ok, frame_seq, parse_frame_head,
    seal_frame, Frame, LogHeader, PageDelta, FRAME_HEADER_BYTES, FRAME_MAX_BYTES, FRAME_MIN_BYTES,
    LOG_HEADER_BYTES,
};
use std::sync::Arc;

/// The log's file name for the database at `db_path`.
pub fn log_path(db_path: &str) -> String {
    format!("{db_path}-plog")
}

/// The second log file's name for the database at `db_path` (B1).
pub fn log2_path(db_path: &str) -> String {
    format!("{db_path}-plog2")
}

/// The valid prefix of a log file.
#[derive(Debug)]
pub struct Scan {
    /// `None`: no readable header, so nothing to redo.
    pub header: Option<LogHeader>,
    pub frames: Vec<Frame>,
    /// Byte offset just past the last valid frame.
    pub end: u64,
    pub last_crc: u32,
}

impl Scan {
    pub fn last_seq(&self) -> Option<u64> {
        self.frames
            .last()
            .map(|f| f.seq)
            .or(self.header.map(|h| h.base_seq))
    }
}

/// Reads the header and every valid frame, stopping at the first invalid one (F1); a frame
/// with a valid checksum but a malformed body is `Corrupt` (F2).
pub fn scan(file: &dyn VfsFile) -> Result<Scan> {
    let size = file.size()?;
    let mut hb = [0u8; LOG_HEADER_BYTES];
    let got = read_zero_padded(file, 0, &mut hb)?;
    let header = if got == LOG_HEADER_BYTES {
        LogHeader::parse(&hb)
    } else {
        None
    };
    let Some(h) = header else {
        return Ok(Scan {
            header: None,
            frames: Vec::new(),
            end: 0,
            last_crc: 0,
        });
    };
    let mut frames = Vec::new();
    let mut end = LOG_HEADER_BYTES as u64;
    let mut crc = h.chain_seed();
    let mut next_seq = h.base_seq.wrapping_add(1);
    loop {
        if end + FRAME_MIN_BYTES as u64 > size {
            break;
        }
        let mut head = [0u8; FRAME_HEADER_BYTES];
        if read_zero_padded(file, end, &mut head)? != FRAME_HEADER_BYTES {
            break;
        }
        let fh = parse_frame_head(&head);
        let fits =
            fh.len >= FRAME_MIN_BYTES as u64 && fh.len <= FRAME_MAX_BYTES && end + fh.len <= size;
        if !fits || fh.salt != h.salt || fh.seq != next_seq {
            break;
        }
        let mut buf = vec![0u8; fh.len as usize];
        if read_zero_padded(file, end, &mut buf)? != buf.len() {
            break;
        }
        let Some(new_crc) = frame_checksum_ok(&buf, crc) else {
            break;
        };
        frames.push(decode_frame_body(&buf, h.page_size)?);
        crc = new_crc;
        end += fh.len;
        next_seq = next_seq.wrapping_add(1);
    }
    Ok(Scan {
        header: Some(h),
        frames,
        end,
        last_crc: crc,
    })
}

/// The frames recovery redoes: the chained generations of both log files (B1).
#[derive(Debug, Default)]
pub struct Chain {
    /// The header of the first generation of the chain (`None`: no readable header).
    pub header: Option<LogHeader>,
    pub frames: Vec<Frame>,
    /// The largest salt of any readable header, so a new generation's salt is new (B3).
    pub salt_max: Option<u32>,
    /// Per file given to [`scan_chain`]: its generation's place in the chain (0 first),
    /// `None` if it has no header or does not connect.
    pub positions: Vec<Option<usize>>,
}

impl Chain {
    pub fn last_seq(&self) -> Option<u64> {
        self.frames
            .last()
            .map(|f| f.seq)
            .or(self.header.map(|h| h.base_seq))
    }
}

/// Joins the valid prefixes of the log files (B1): generations ordered by base; the first
/// one's frames, then each next one's only if its base is the chain's last sequence number
/// and its page size the same. A generation that does not connect follows a lost frame:
/// its frames were never acknowledged as durable (B4) and are ignored.
pub fn scan_chain(files: &[Option<&dyn VfsFile>]) -> Result<Chain> {
    let mut scans = Vec::new();
    for (i, f) in files.iter().enumerate() {
        if let Some(f) = f {
            let s = scan(*f)?;
            if s.header.is_some() {
                scans.push((i, s));
            }
        }
    }
    let salt_max = scans
        .iter()
        .filter_map(|(_, s)| s.header.map(|h| h.salt))
        .max();
    scans.sort_by_key(|(_, s)| (s.header.map_or(0, |h| h.base_seq), s.frames.len()));
    let mut chain = Chain {
        salt_max,
        positions: vec![None; files.len()],
        ..Chain::default()
    };
    let mut next = 0;
    for (i, s) in scans {
        let Some(h) = s.header else { continue };
        let connects = match chain.header {
            None => true,
            Some(first) => first.page_size == h.page_size && chain.last_seq() == Some(h.base_seq),
        };
        if connects {
            chain.header.get_or_insert(h);
            chain.frames.extend(s.frames);
            chain.positions[i] = Some(next);
            next += 1;
        }
    }
    Ok(chain)
}

/// Empties a log file durably (B3): truncate to 0, then sync.
pub fn empty_file(file: &dyn VfsFile) -> Result<()> {
    file.truncate(0)?;
    file.sync()
}

/// The open log of a writable database.
pub struct LogFile {
    file: Arc<dyn VfsFile>,
    header: LogHeader,
    end: u64,
    /// G5: bytes `end..allocated_bytes` of the file were written as zeros.
    allocated_bytes: u64,
    last_crc: u32,
    last_seq: u64,
}

/// The smallest zero-filled step of G5: one write of 64 KiB costs less than the size
/// change it saves on the ~15 frames of 4 KiB pages it makes room for.
const LOG_GROW_MIN_BYTES: u64 = 64 << 10;
/// The largest step: a generation grows by its own size up to this, so a small log (tests,
/// tiny checkpoints) writes little, and a big one changes its size once per MiB.
const LOG_GROW_MAX_BYTES: u64 = 1 << 20;

impl LogFile {
    /// Starts a fresh generation on `file` (G2, G3). `prev_salt`: the salt of the header
    /// currently in the file, when it could be read.
    pub fn start(
        file: Arc<dyn VfsFile>,
        page_size: u32,
        prev_salt: Option<u32>,
        base_seq: u64,
    ) -> Result<LogFile> {
        let salt = match prev_salt {
            Some(s) => s.wrapping_add(1),
            None => {
                // G3: the old header is unreadable; clear the file before writing anew.
                file.truncate(0)?;
                0x5A17_0001 ^ (base_seq as u32)
            }
        };
        let mut log = LogFile {
            file,
            header: LogHeader {
                page_size,
                salt,
                base_seq,
            },
            end: 0,
            allocated_bytes: 0,
            last_crc: 0,
            last_seq: 0,
        };
        log.write_header()?;
        Ok(log)
    }

    /// Takes over a generation found by [`scan`]: appends would go at `end`. Open only uses
    /// this to checkpoint the frames found and then [`LogFile::restart`] (a resumed tail
    /// could sit before stale bytes of unacknowledged frames).
    pub fn resume(
        file: Arc<dyn VfsFile>,
        header: LogHeader,
        end: u64,
        last_crc: u32,
        last_seq: u64,
    ) -> LogFile {
        LogFile {
            file,
            header,
            end,
            // Bytes past `end` may be a torn frame, not zeros: G5 holds for none of them.
            allocated_bytes: end,
            last_crc,
            last_seq,
        }
    }

    fn write_header(&mut self) -> Result<()> {
        // Order matters (G2): the new header first, so a crash before the truncate leaves
        // old frames behind a header whose salt rejects them; then truncate; then sync.
        self.file.write_at(0, &self.header.encode())?;
        self.file.truncate(LOG_HEADER_BYTES as u64)?;
        self.file.sync()?;
        self.end = LOG_HEADER_BYTES as u64;
        self.allocated_bytes = self.end;
        self.last_crc = self.header.chain_seed();
        self.last_seq = self.header.base_seq;
        Ok(())
    }

    /// Starts the next generation after a checkpoint folded everything up to `base_seq`
    /// into the database file (G2).
    pub fn restart(&mut self, base_seq: u64) -> Result<()> {
        self.header.salt = self.header.salt.wrapping_add(1);
        self.header.base_seq = base_seq;
        self.write_header()
    }

    /// Appends the frame of commit `seq` (G1) with `write` only: durability is the caller's
    /// decision (G4). Returns the frame's size in bytes.
    pub fn append(&mut self, seq: u64, page_count: u32, pages: &[PageDelta]) -> Result<u64> {
        let mut frame = encode_unsealed_frame(seq, page_count, pages);
        self.append_unsealed(&mut frame)
    }

    /// Appends a frame built by `format::encode_unsealed_frame` (G1): seals it with this
    /// generation's salt and the chain's checksum, then writes it. The frame's sequence
    /// number must follow the last one. Returns the frame's size in bytes.
    pub fn append_unsealed(&mut self, frame: &mut [u8]) -> Result<u64> {
        let seq = frame_seq(frame);
        if seq != self.last_seq.wrapping_add(1) {
            return Err(StorageError::misuse(format!(
                "log append of seq {seq} after {}",
                self.last_seq
            )));
        }
        let crc = seal_frame(frame, self.header.salt, self.last_crc);
        self.file.write_at(self.end, frame)?;
        self.end += frame.len() as u64;
        self.last_crc = crc;
        self.last_seq = seq;
        if self.end >= self.allocated_bytes {
            // G5's zeros only make later fsyncs cheaper: a failed zero write (a full disk
            // that still held this frame) must not fail a commit whose frame is written.
            // The next frame then extends the file itself, as without G5, and meets the
            // error there if the disk is still failing.
            if self.grow().is_err() {
                self.allocated_bytes = self.end;
            }
        }
        Ok(frame.len() as u64)
    }

    /// Writes zeros past the frame just appended (G5), so that the next frames of this
    /// generation overwrite bytes inside the file instead of extending it. The zeros need no
    /// sync of their own: a lost or torn zero write leaves bytes past `end` that no frame of
    /// this generation was written to, which a scan never reads as frames (F1).
    fn grow(&mut self) -> Result<()> {
        let used = self.end - LOG_HEADER_BYTES as u64;
        let step = used.clamp(LOG_GROW_MIN_BYTES, LOG_GROW_MAX_BYTES);
        let zeros = vec![0u8; step as usize];
        self.file.write_at(self.end, &zeros)?;
        self.allocated_bytes = self.end + step;
        Ok(())
    }

    /// Starts the generation that follows this one in `file`, which must be durably empty
    /// (B3): a header with the next salt and base = this generation's last sequence number,
    /// written without a sync (the group commit's fsync of `file` makes it durable with the
    /// first frames behind it, B4).
    pub fn next_generation(&self, file: Arc<dyn VfsFile>) -> Result<LogFile> {
        let header = LogHeader {
            page_size: self.header.page_size,
            salt: self.header.salt.wrapping_add(1),
            base_seq: self.last_seq,
        };
        file.write_at(0, &header.encode())?;
        Ok(LogFile {
            file,
            header,
            end: LOG_HEADER_BYTES as u64,
            allocated_bytes: LOG_HEADER_BYTES as u64,
            last_crc: header.chain_seed(),
            last_seq: header.base_seq,
        })
    }

    pub fn file(&self) -> &Arc<dyn VfsFile> {
        &self.file
    }

    /// Bytes of frames in this generation.
    pub fn frames_bytes(&self) -> u64 {
        self.end.saturating_sub(LOG_HEADER_BYTES as u64)
    }

    pub fn base_seq(&self) -> u64 {
        self.header.base_seq
    }

    pub fn last_seq(&self) -> u64 {
        self.last_seq
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::PageNo;
    use crate::vfs::{SimVfs, Vfs};
    use format::Run;

    fn delta(pgno: u32, byte: u8) -> Vec<PageDelta> {
        vec![PageDelta {
            pgno: PageNo(pgno),
            runs: vec![Run {
                offset: 100,
                bytes: vec![byte; 10],
            }],
        }]
    }

    #[test]
    fn append_scan_and_restart_rejects_old_frames() {
        let vfs = SimVfs::new(3);
        let f = vfs.open("db-plog", true).unwrap();
        let mut log = LogFile::start(Arc::clone(&f), 512, None, 10).unwrap();
        log.append(11, 2, &delta(1, 1)).unwrap();
        log.append(12, 2, &delta(2, 2)).unwrap();
        let s = scan(&*f).unwrap();
        assert_eq!(
            s.frames.iter().map(|f| f.seq).collect::<Vec<_>>(),
            vec![11, 12]
        );
        assert_eq!(s.last_seq(), Some(12));
        assert!(log.append(14, 2, &delta(2, 2)).is_err());
        // A torn second frame ends the valid prefix (its last bytes lie before the zero
        // tail of G5).
        let end = s.end;
        assert!(f.size().unwrap() > end);
        f.write_at(end - 3, &[0xAA]).unwrap();
        assert_eq!(scan(&*f).unwrap().frames.len(), 1);
        log.restart(12).unwrap();
        assert!(scan(&*f).unwrap().frames.is_empty());
        // Old frame bytes written back behind the new header do not validate (salt).
        let s = scan(&*f).unwrap();
        assert_eq!(s.header.unwrap().base_seq, 12);
    }

    /// G5: frames land inside the file's size after the first step, the tail past the last
    /// frame reads as zeros and stops the scan, and a restart takes the size back.
    #[test]
    fn file_grows_ahead_of_frames_in_zero_steps() {
        let vfs = SimVfs::new(5);
        let f = vfs.open("db-plog", true).unwrap();
        let mut log = LogFile::start(Arc::clone(&f), 4096, None, 0).unwrap();
        let page = |pgno: u32, byte: u8| {
            vec![PageDelta {
                pgno: PageNo(pgno),
                runs: vec![Run {
                    offset: 0,
                    bytes: vec![byte; 4096],
                }],
            }]
        };
        let mut sizes = Vec::new();
        for seq in 1..=600u64 {
            let before = f.size().unwrap();
            log.append(seq, 700, &page(1 + (seq % 600) as u32, seq as u8))
                .unwrap();
            let after = f.size().unwrap();
            assert!(after > log.end, "a zero tail follows every frame");
            if after != before {
                sizes.push(after);
            }
            let mut tail = vec![0xFFu8; (after - log.end).min(64) as usize];
            assert_eq!(f.read_at(log.end, &mut tail).unwrap(), tail.len());
            assert!(tail.iter().all(|b| *b == 0));
        }
        // 600 frames of ~4.1 KiB (~2.5 MiB) grew the file in a few steps, each at most
        // LOG_GROW_MAX_BYTES past the frames.
        assert!(sizes.len() <= 12, "size changed {} times", sizes.len());
        assert!(f.size().unwrap() - log.end <= LOG_GROW_MAX_BYTES);
        let s = scan(&*f).unwrap();
        assert_eq!(s.frames.len(), 600);
        assert_eq!(s.end, log.end);
        log.restart(600).unwrap();
        assert_eq!(f.size().unwrap(), LOG_HEADER_BYTES as u64);
        assert!(scan(&*f).unwrap().frames.is_empty());
    }

    /// A failed zero write (G5) does not fail the append whose frame was written: the
    /// frame is in the log, and the next frame extends the file itself.
    #[test]
    fn failed_zero_write_leaves_the_frame_appended() {
        let vfs = SimVfs::new(9);
        let f = vfs.open("db-plog", true).unwrap();
        let mut log = LogFile::start(Arc::clone(&f), 512, None, 0).unwrap();
        // The frame's write is the next call, the zero write the one after it.
        vfs.fail_at(vfs.io_calls() + 1);
        log.append(1, 2, &delta(1, 1)).unwrap();
        // The sim fails a write after writing part of it: the step is not complete.
        assert!(
            f.size().unwrap() < log.end + LOG_GROW_MIN_BYTES,
            "the zero write failed"
        );
        log.append(2, 2, &delta(2, 2)).unwrap();
        let s = scan(&*f).unwrap();
        assert_eq!(
            s.frames.iter().map(|f| f.seq).collect::<Vec<_>>(),
            vec![1, 2]
        );
        assert!(
            f.size().unwrap() > log.end,
            "the second frame grew the file"
        );
    }
}
