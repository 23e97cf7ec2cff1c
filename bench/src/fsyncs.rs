//! Counting the fsyncs an engine issues, the same way for both engines: a Linux perf counter
//! on the `syscalls:sys_enter_fsync` and `syscalls:sys_enter_fdatasync` tracepoints for this
//! process, opened with `inherit` so threads created later (every worker thread) count too.
//!
//! Limits, stated in the output rather than hidden:
//! - The kernel adds an inherited thread's count to the parent's counter when that thread
//!   exits. The workloads join their threads before reading, so their counts are complete; a
//!   background thread an engine keeps alive across points is counted only once it exits.
//! - It needs tracefs (`/sys/kernel/tracing`) and the right to open tracepoint counters
//!   (root, or `perf_event_paranoid` <= -1). Without them every figure is `fsyncs=n/a`.
//!   A fresh machine image may boot without tracefs mounted: run as root, the bench mounts
//!   it at `/sys/kernel/tracing` itself (`mount -t tracefs`) before giving up.
//! - The counters must be opened before any other thread starts ([`FsyncCounter::open`] is
//!   called first thing in `main`).

use std::fs::File;
use std::io::Read;
use std::os::fd::FromRawFd;

/// `struct perf_event_attr` up to `PERF_ATTR_SIZE_VER0` (64 bytes).
/// Offsets: 0 type u32, 4 size u32, 8 config u64, 16 sample_period u64, 24 sample_type u64,
/// 32 read_format u64, 40 flag bits u64, 48 wakeup_events u32, 52 bp_type u32, 56 config1 u64.
#[repr(C)]
#[derive(Default)]
struct PerfEventAttr {
    type_: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
}

const PERF_TYPE_TRACEPOINT: u32 = 2;
const PERF_FLAG_INHERIT: u64 = 1 << 1;
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;

/// Tracepoint counters for this process and the threads it starts afterwards.
pub struct FsyncCounter {
    files: Vec<File>,
    /// Why counting is off, when it is.
    pub unavailable: Option<String>,
}

fn tracepoint_id(name: &str) -> Option<u64> {
    for base in ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"] {
        let p = format!("{base}/events/syscalls/{name}/id");
        if let Ok(s) = std::fs::read_to_string(&p) {
            if let Ok(id) = s.trim().parse() {
                return Some(id);
            }
        }
    }
    None
}

/// Mounts tracefs at its usual place when it is not there (a machine image that boots
/// without it); fails quietly without the right to (the counters then report `n/a`).
fn mount_tracefs() {
    if std::path::Path::new("/sys/kernel/tracing/events").exists() {
        return;
    }
    let (Ok(src), Ok(target), Ok(fstype)) = (
        std::ffi::CString::new("nodev"),
        std::ffi::CString::new("/sys/kernel/tracing"),
        std::ffi::CString::new("tracefs"),
    ) else {
        return;
    };
    // SAFETY: mount(2) reads three NUL-terminated strings that outlive the call; no data.
    unsafe {
        libc::mount(
            src.as_ptr(),
            target.as_ptr(),
            fstype.as_ptr(),
            0,
            std::ptr::null(),
        );
    }
}

fn open_tracepoint(id: u64) -> Result<File, String> {
    let attr = PerfEventAttr {
        type_: PERF_TYPE_TRACEPOINT,
        size: std::mem::size_of::<PerfEventAttr>() as u32,
        config: id,
        flags: PERF_FLAG_INHERIT,
        ..Default::default()
    };
    // SAFETY: perf_event_open reads `attr` (a valid, fully initialised VER0 struct whose
    // `size` says so); pid 0 = this process, cpu -1 = any cpu, no group.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &attr as *const PerfEventAttr,
            0 as libc::pid_t,
            -1 as libc::c_int,
            -1 as libc::c_int,
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(format!(
            "perf_event_open: {}",
            std::io::Error::last_os_error()
        ));
    }
    // SAFETY: `fd` is a fresh descriptor owned by nobody else.
    Ok(unsafe { File::from_raw_fd(fd as i32) })
}

impl FsyncCounter {
    /// Opens the counters; never fails (an unavailable counter reports `n/a`).
    pub fn open() -> FsyncCounter {
        let mut files = Vec::new();
        if tracepoint_id("sys_enter_fsync").is_none() {
            mount_tracefs();
        }
        for name in ["sys_enter_fsync", "sys_enter_fdatasync"] {
            let Some(id) = tracepoint_id(name) else {
                return FsyncCounter {
                    files: Vec::new(),
                    unavailable: Some(format!(
                        "tracepoint syscalls/{name} not found (is tracefs mounted?)"
                    )),
                };
            };
            match open_tracepoint(id) {
                Ok(f) => files.push(f),
                Err(e) => {
                    return FsyncCounter {
                        files: Vec::new(),
                        unavailable: Some(e),
                    }
                }
            }
        }
        FsyncCounter {
            files,
            unavailable: None,
        }
    }

    /// fsync + fdatasync calls so far by this process and its exited threads.
    pub fn read(&self) -> Option<u64> {
        if self.unavailable.is_some() {
            return None;
        }
        let mut total = 0u64;
        for f in &self.files {
            let mut buf = [0u8; 8];
            let mut r = f;
            if r.read_exact(&mut buf).is_err() {
                return None;
            }
            total += u64::from_ne_bytes(buf);
        }
        Some(total)
    }
}
