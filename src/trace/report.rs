//! The report pipe of `fsguard run`: one short line per denial, lost
//! lines counted, trace lines relayed, and the pipe handed to children.

use std::ffi::CStr;
use std::fmt::Write as _;
use std::io::IoSlice;
use std::os::fd::BorrowedFd;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};

use fsguard_policy::Access;
use rustix::fs::OFlags;

use crate::resolve::Spill;

use super::Sink;

/// Report lines the full pipe refused, to be told once there is room.
pub(super) static REPORT_DROPPED: AtomicU64 = AtomicU64::new(0);

/// Tells the supervisor `n` lines were lost (`lost N`); false when it
/// could not be told.
pub(super) fn report_lost(n: u64) -> bool {
    let Some(b) = report_pipe() else { return false };
    let mut buf = [0u8; 32];
    let mut l = Cursor(&mut buf, 0);
    let _ = write!(l, "\nlost {n}\n");
    let len = l.1;
    rustix::io::write(b, &buf[..len]).ok() == Some(len)
}

/// A `fmt::Write` into a byte slice; what does not fit is cut.
struct Cursor<'a>(&'a mut [u8], usize);

impl std::fmt::Write for Cursor<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let n = s.len().min(self.0.len() - self.1);
        self.0[self.1..self.1 + n].copy_from_slice(&s.as_bytes()[..n]);
        self.1 += n;
        Ok(())
    }
}

/// The supervisor's report pipe (`FSGUARD_REPORT_FD`, set by `fsguard run`):
/// one short line per denial, so the CLI can summarise at exit. Like the
/// log fd, it is checked to still be the pipe we were given before each write.
///
/// Every guarded process can write to the pipe, so each message is one
/// atomic write that starts with a newline: bytes a program wrote without
/// ending its line end there, and cannot run into the library's next line
/// and hide it from the supervisor.
static REPORT_FD: AtomicI32 = AtomicI32::new(-1);
static REPORT_DEV: AtomicU64 = AtomicU64::new(0);
static REPORT_INO: AtomicU64 = AtomicU64::new(0);

/// Adopts `fd` as the report pipe if it is one.
pub fn report_init(fd: i32) -> bool {
    if fd < 0 {
        return false;
    }
    // SAFETY: fstat only; a closed fd answers EBADF.
    let Ok(st) = rustix::fs::fstat(unsafe { BorrowedFd::borrow_raw(fd) }) else {
        return false;
    };
    if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::Fifo {
        return false;
    }
    REPORT_DEV.store(crate::sys::dev(&st), Ordering::Relaxed);
    REPORT_INO.store(st.st_ino, Ordering::Relaxed);
    REPORT_FD.store(fd, Ordering::Release);
    true
}

/// The report fd, if there is one (for children's environment).
pub fn report_fd() -> Option<i32> {
    let fd = REPORT_FD.load(Ordering::Acquire);
    (fd >= 0).then_some(fd)
}

/// The report pipe, checked to still be the pipe we were given.
fn report_pipe() -> Option<BorrowedFd<'static>> {
    let fd = report_fd()?;
    // SAFETY: fstat only; the fd is used while it is still our pipe.
    let b = unsafe { BorrowedFd::borrow_raw(fd) };
    match rustix::fs::fstat(b) {
        Ok(st)
            if crate::sys::dev(&st) == REPORT_DEV.load(Ordering::Relaxed)
                && st.st_ino == REPORT_INO.load(Ordering::Relaxed) =>
        {
            Some(b)
        }
        _ => None,
    }
}

/// The report pipe as an exec hands it to the new program.
pub enum ReportForChild {
    /// No supervisor listens: no variable.
    None,
    /// The pipe is still at its number: inherited as it is.
    Intact,
    /// The program closed or replaced it (Python's `close_fds`, `closefrom`
    /// before exec) and it was opened again from the parent: this fd,
    /// inheritable, closed when dropped (after a failed exec).
    Restored(std::os::fd::OwnedFd),
    /// Gone for good: the child is told `-1`, and this process said so.
    Lost,
}

impl ReportForChild {
    /// `FSGUARD_REPORT_FD=N\0` into `buf` (`None`: no variable). `intact`
    /// is the entry made at load, for the common case.
    pub fn entry<'a>(&self, intact: &'a CStr, buf: &'a mut [u8; 40]) -> Option<&'a CStr> {
        let fd = match self {
            ReportForChild::None => return None,
            ReportForChild::Intact => return Some(intact),
            ReportForChild::Restored(fd) => std::os::fd::AsRawFd::as_raw_fd(fd),
            ReportForChild::Lost => -1,
        };
        let mut c = Cursor(&mut buf[..39], 0);
        let _ = write!(c, "FSGUARD_REPORT_FD={fd}");
        let n = c.1;
        buf[n] = 0;
        CStr::from_bytes_with_nul(&buf[..=n]).ok()
    }
}

/// Said once per process: its children's refusals are off the record.
static REPORT_LOSS_SAID: AtomicBool = AtomicBool::new(false);

/// The report pipe for a child about to be exec'd. If the program closed
/// it, it is opened again through the parent's descriptor of the same
/// number ([`crate::sys::open_parent_fd`]: a parent such as Python's waits for the
/// exec) and used only if it is the very pipe the library was given. This
/// may run in a `vfork` child: system calls only, no allocation, and no
/// shared state changed but the once-only warning flag.
pub fn report_for_child(sink: Option<&Sink>) -> ReportForChild {
    let fd = REPORT_FD.load(Ordering::Acquire);
    if fd < 0 {
        return ReportForChild::None;
    }
    if report_pipe().is_some() {
        return ReportForChild::Intact;
    }
    if let Some(r) = reopen_report(fd) {
        return ReportForChild::Restored(r);
    }
    if let Some(sink) = sink {
        if !REPORT_LOSS_SAID.swap(true, Ordering::Relaxed) {
            sink.warn_unreported();
        }
    }
    ReportForChild::Lost
}

/// The report pipe opened again from the parent, checked to be the same
/// pipe, as an inheritable fd at a high number.
fn reopen_report(fd: i32) -> Option<std::os::fd::OwnedFd> {
    // Non-blocking: the supervisor set its end so (a full pipe drops a line
    // rather than stall the program), and an open with no reader left
    // fails instead of waiting.
    let opened = crate::sys::open_parent_fd(
        fd,
        OFlags::WRONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY,
    )?;
    let st = rustix::fs::fstat(&opened).ok()?;
    if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::Fifo
        || crate::sys::dev(&st) != REPORT_DEV.load(Ordering::Relaxed)
        || st.st_ino != REPORT_INO.load(Ordering::Relaxed)
    {
        return None;
    }
    let high = rustix::io::fcntl_dupfd_cloexec(&opened, crate::handoff::HIGH_FD)
        .or_else(|_| rustix::io::fcntl_dupfd_cloexec(&opened, 3))
        .ok()?;
    // Inherited by the new program, unlike the library's own fds.
    rustix::io::fcntl_setfd(&high, rustix::io::FdFlags::empty()).ok()?;
    Some(high)
}

/// Hands a whole trace line to the supervisor to print; false when there is
/// none, or the line cannot go in one atomic write (the caller writes it to
/// stderr itself).
pub(super) fn relay(line: &[u8]) -> bool {
    if line.len() > PIPE_BUF - 1 || !line.ends_with(b"\n") {
        return false;
    }
    let Some(b) = report_pipe() else {
        return false;
    };
    let parts = [IoSlice::new(b"\n"), IoSlice::new(line)];
    matches!(rustix::io::writev(b, &parts), Ok(n) if n == line.len() + 1)
}

/// Writes to a pipe of at most this many bytes are atomic: never split,
/// never interleaved with another writer's.
const PIPE_BUF: usize = 4096;

/// Sends `<event> <call> <access> <path>` to the supervisor, in one write of
/// at most PIPE_BUF bytes (atomic, never interleaved).
pub fn report(event: &str, call: &str, access: Access, path: &[u8]) {
    let Some(b) = report_pipe() else { return };
    let parts = [
        event.as_bytes(),
        b" ",
        call.as_bytes(),
        b" ",
        access.as_str().as_bytes(),
        b" ",
        path,
    ];
    // Short messages on the stack (see [`Spill`]); a long path in a
    // mapping, or cut shorter when none can be had.
    let mut spill = Spill::<256>::new();
    let want = parts.iter().map(|p| p.len()).sum::<usize>() + 2;
    let _ = spill.reserve(want.min(PIPE_BUF), 0);
    let cap = spill.capacity().min(PIPE_BUF);
    let buf = &mut spill.buf()[..cap];
    // Each message starts with a newline (see [`report_init`]).
    buf[0].write(b'\n');
    let mut n = 1;
    for part in parts {
        let take = part.len().min(cap - 1 - n);
        for (d, &c) in buf[n..n + take].iter_mut().zip(&part[..take]) {
            d.write(if c == b'\n' { b'?' } else { c });
        }
        n += take;
    }
    buf[n].write(b'\n');
    // SAFETY: bytes 0..=n were written just above.
    let msg = unsafe { spill.bytes(n + 1) };
    // The supervisor made the pipe non-blocking: a full pipe drops the line
    // rather than stall the program; the count of dropped lines follows as
    // soon as there is room.
    let pending = REPORT_DROPPED.swap(0, Ordering::Relaxed);
    if pending > 0 && !report_lost(pending) {
        REPORT_DROPPED.fetch_add(pending, Ordering::Relaxed);
    }
    if rustix::io::write(b, msg).ok() != Some(n + 1) {
        REPORT_DROPPED.fetch_add(1, Ordering::Relaxed);
    }
}
