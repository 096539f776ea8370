//! Trace lines: one per denied (or audited) call, written with one `write(2)`.
//!
//! A line is formatted into a stack buffer and written whole, so lines from
//! concurrent processes sharing a log never interleave. The log file is the
//! library's own fd; before each write it is checked to still be the file we
//! opened (a program may close it and reuse the number), and reopened if not.
//! "stderr" means the stderr the process started with: fd 2 is duplicated at
//! load (`CLOEXEC`: each child makes its own copy) and the copy is checked
//! the same way, so a program that closed fd 2 and opened a data file there
//! never gets trace lines in its data.
//!
//! A line that cannot be written whole (a full disk, a log that refuses
//! writes) is counted as lost: the process says so once on its stderr, and a
//! supervising `fsguard run` is told (`lost N` on the report pipe).

use std::ffi::CStr;
use std::fmt::Write as _;
use std::io::IoSlice;
use std::os::fd::{BorrowedFd, IntoRawFd};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};

use fsguard_policy::{Access, Hint, LogFormat, LogTarget, Rule};
use rustix::fs::{Mode, OFlags, CWD};

use crate::resolve::Spill;

/// Room for a line: two paths of PATH_MAX, escaped, and the fields.
const LINE_CAP: usize = 3 * 4096;

/// What a line holds on the stack; a longer one moves to a mapping (see
/// [`Spill`]): a denial may be traced from a signal handler on a small
/// alternate stack.
const LINE_INLINE: usize = 512;

/// Where lines go, set once at load.
pub struct Sink {
    target: LogTarget,
    /// The log file is the supervisor's: lines go over the report pipe,
    /// and the file is never opened here.
    relayed: bool,
    format: LogFormat,
    path: Option<std::ffi::CString>,
    fd: AtomicI32,
    dev: AtomicU64,
    ino: AtomicU64,
    exe: String,
    /// The library's copy of the starting stderr.
    err: Kept,
}

/// A descriptor the library owns, with the identity it had when taken: a
/// program may close the number or put another file there.
struct Kept {
    fd: AtomicI32,
    dev: AtomicU64,
    ino: AtomicU64,
}

/// Copies of fd 2 start here, out of the way of numbers programs dup2 onto.
const HIGH_FD: i32 = 200;

impl Kept {
    /// A `CLOEXEC` copy of `fd` at a high number.
    fn dup_of(fd: i32) -> Kept {
        let k = Kept {
            fd: AtomicI32::new(-1),
            dev: AtomicU64::new(0),
            ino: AtomicU64::new(0),
        };
        // SAFETY: fstat/fcntl only; a closed fd answers EBADF.
        let b = unsafe { BorrowedFd::borrow_raw(fd) };
        if let Ok(st) = rustix::fs::fstat(b) {
            k.dev.store(st.st_dev, Ordering::Relaxed);
            k.ino.store(st.st_ino, Ordering::Relaxed);
            if let Ok(d) = rustix::io::fcntl_dupfd_cloexec(b, HIGH_FD)
                .or_else(|_| rustix::io::fcntl_dupfd_cloexec(b, 3))
            {
                k.fd.store(d.into_raw_fd(), Ordering::Release);
            }
        }
        k
    }

    fn same(&self, fd: i32) -> bool {
        // SAFETY: fstat only.
        let b = unsafe { BorrowedFd::borrow_raw(fd) };
        matches!(rustix::fs::fstat(b), Ok(st)
            if st.st_dev == self.dev.load(Ordering::Relaxed)
                && st.st_ino == self.ino.load(Ordering::Relaxed))
    }

    /// The copy, if it is still the file it was. When the program closed
    /// the copy but fd 2 is still that file, a new copy is made from it;
    /// otherwise there is nowhere to write.
    fn get(&self) -> Option<i32> {
        let fd = self.fd.load(Ordering::Acquire);
        if fd >= 0 && self.same(fd) {
            return Some(fd);
        }
        if self.dev.load(Ordering::Relaxed) == 0 && self.ino.load(Ordering::Relaxed) == 0 {
            return None;
        }
        if !self.same(2) {
            return None;
        }
        // SAFETY: fd 2, just checked to be the starting stderr.
        let b = unsafe { BorrowedFd::borrow_raw(2) };
        let d = rustix::io::fcntl_dupfd_cloexec(b, HIGH_FD)
            .or_else(|_| rustix::io::fcntl_dupfd_cloexec(b, 3))
            .ok()?
            .into_raw_fd();
        // The old number may be the program's by now: forget it, never close it.
        self.fd.store(d, Ordering::Release);
        Some(d)
    }
}

/// Lines that could not be written, and whether that was said.
static LOST: AtomicU64 = AtomicU64::new(0);
static LOST_SAID: AtomicBool = AtomicBool::new(false);

/// What one line reports.
pub struct Event<'a> {
    /// `blocked`, `audit` or `unguarded`.
    pub event: &'a str,
    /// The libc call, base name (`open` for `open64`).
    pub call: &'a str,
    /// The access checked.
    pub access: Access,
    /// The resolved path.
    pub path: &'a [u8],
    /// The second path of a two-path call.
    pub dest: Option<&'a [u8]>,
    /// The deciding rule.
    pub rule: Rule<'a>,
    /// errno the call fails with (0 when it goes ahead).
    pub errno: i32,
    /// The rule that would allow the access, if one can.
    pub hint: Option<Hint<'a>>,
}

impl Sink {
    /// Opens the log (files are appended to, created 0644), unless it is
    /// `relayed` to the supervisor.
    pub fn new(
        target: LogTarget,
        format: LogFormat,
        relayed: bool,
        exe: String,
    ) -> Result<Sink, String> {
        let relayed = relayed && matches!(target, LogTarget::File(_));
        let sink = Sink {
            relayed,
            path: match &target {
                LogTarget::File(p) => Some(
                    std::ffi::CString::new(p.as_bytes())
                        .map_err(|_| "log path has a NUL byte".to_string())?,
                ),
                _ => None,
            },
            target,
            format,
            fd: AtomicI32::new(-1),
            dev: AtomicU64::new(0),
            ino: AtomicU64::new(0),
            exe,
            err: Kept::dup_of(2),
        };
        if sink.path.is_some() && !relayed {
            sink.reopen().map_err(|e| {
                format!(
                    "cannot open log {}: {e}",
                    sink.path
                        .as_ref()
                        .map(|p| p.to_string_lossy().into_owned())
                        .unwrap_or_default()
                )
            })?;
        }
        if format == LogFormat::Json {
            // The first clock read finds the vDSO, which takes stack: done
            // here, not in a signal handler on a small stack.
            let _ = rustix::time::clock_gettime(rustix::time::ClockId::Realtime);
        }
        Ok(sink)
    }

    fn reopen(&self) -> rustix::io::Result<i32> {
        let Some(path) = &self.path else {
            return Err(rustix::io::Errno::BADF);
        };
        let fd = rustix::fs::openat(
            CWD,
            path.as_c_str(),
            OFlags::WRONLY | OFlags::APPEND | OFlags::CREATE | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o644),
        )?;
        let st = rustix::fs::fstat(&fd)?;
        let raw = fd.into_raw_fd();
        self.dev.store(st.st_dev, Ordering::Relaxed);
        self.ino.store(st.st_ino, Ordering::Relaxed);
        // The old number may belong to the program by now: forget it, never
        // close it.
        self.fd.store(raw, Ordering::Release);
        Ok(raw)
    }

    /// The log fd, checked to still be our file.
    fn file_fd(&self) -> Option<i32> {
        let fd = self.fd.load(Ordering::Acquire);
        if fd >= 0 {
            // SAFETY: used only for fstat, which reports a closed fd as EBADF.
            let b = unsafe { BorrowedFd::borrow_raw(fd) };
            if let Ok(st) = rustix::fs::fstat(b) {
                if st.st_dev == self.dev.load(Ordering::Relaxed)
                    && st.st_ino == self.ino.load(Ordering::Relaxed)
                {
                    return Some(fd);
                }
            }
        }
        self.reopen().ok()
    }

    /// The fd lines go to (`None`: nowhere left to write); the log file,
    /// or the starting stderr when it cannot be had.
    fn out_fd(&self) -> Option<i32> {
        match self.target {
            LogTarget::Off => None,
            LogTarget::Stderr => self.err.get(),
            // A line the supervisor cannot take goes to stderr, as with
            // the log on stderr; the file is never opened.
            LogTarget::File(_) if self.relayed => self.err.get(),
            LogTarget::File(_) => self.file_fd().or_else(|| self.err.get()),
        }
    }

    /// Writes one line.
    pub fn emit(&self, ev: &Event<'_>) {
        if self.target == LogTarget::Off {
            return;
        }
        let mut line = Line::new();
        match self.format {
            LogFormat::Text => text(&mut line, ev),
            LogFormat::Json => json(&mut line, ev, &self.exe),
        }
        line.finish();
        self.write_line(line.as_bytes());
    }

    /// Writes a finished line. Under `fsguard run` with the log on stderr
    /// or in a file, the line goes to the supervisor instead, which prints
    /// it on its own stderr or appends it to the file: the command can
    /// neither hide it nor reach the file. A line not written whole is
    /// counted as lost ([`lost`]).
    fn write_line(&self, bytes: &[u8]) {
        if (self.target == LogTarget::Stderr || self.relayed) && relay(bytes) {
            return;
        }
        let r = match self.out_fd() {
            Some(fd) => write_whole(fd, bytes),
            None => Err(rustix::io::Errno::BADF),
        };
        if let Err(e) = r {
            self.lost(e);
        }
    }

    /// Counts a lost line; the first time, says so on the starting stderr
    /// (or to the supervisor); tells the supervisor each time.
    #[cold]
    #[inline(never)]
    fn lost(&self, e: rustix::io::Errno) {
        LOST.fetch_add(1, Ordering::Relaxed);
        if !report_lost(1) {
            REPORT_DROPPED.fetch_add(1, Ordering::Relaxed);
        }
        if LOST_SAID.swap(true, Ordering::Relaxed) {
            return;
        }
        let mut line = Line::new();
        let _ = write!(line, "[fsguard] warning: trace lines cannot be written to ");
        match &self.path {
            Some(p) if self.target != LogTarget::Stderr => value(&mut line, p.as_bytes()),
            _ => line.push(b"stderr"),
        }
        let _ = write!(
            line,
            " ({}); they are lost",
            std::io::Error::from_raw_os_error(e.raw_os_error())
        );
        line.finish();
        if relay(line.as_bytes()) || self.target == LogTarget::Stderr {
            return;
        }
        if let Some(fd) = self.err.get() {
            let _ = write_whole(fd, line.as_bytes());
        }
    }

    /// Reports an exec the library cannot follow (`kind`: `static` or
    /// `setid`) that goes ahead: `[fsguard] unguarded exec static path=…`.
    pub fn unguarded(&self, call: &str, kind: &str, path: &[u8]) {
        if self.target == LogTarget::Off {
            return;
        }
        let mut line = Line::new();
        match self.format {
            LogFormat::Text => {
                let _ = write!(line, "[fsguard] unguarded exec {kind} path=");
                value(&mut line, path);
                let _ = write!(line, " call={call}");
            }
            LogFormat::Json => {
                let ev = Event {
                    event: "unguarded",
                    call,
                    access: Access::Exec,
                    path,
                    dest: None,
                    rule: Rule::Unguarded(kind),
                    errno: 0,
                    hint: None,
                };
                json(&mut line, &ev, &self.exe);
            }
        }
        line.finish();
        self.write_line(line.as_bytes());
    }

    /// Says, on the starting stderr, that this process's children run
    /// without the report pipe (it was closed and could not be restored).
    fn warn_unreported(&self) {
        let msg = b"[fsguard] warning: the report pipe of fsguard run was closed before exec \
and cannot be restored; the refusals of this process's children are not counted \
and their trace lines go to their own stderr\n";
        if let Some(fd) = self.err.get() {
            let _ = write_whole(fd, msg);
        }
    }

    /// Writes a free-form notice (`[fsguard] …`) to the log.
    pub fn notice(&self, msg: &str) {
        if self.target == LogTarget::Off {
            return;
        }
        let mut line = Line::new();
        let _ = write!(line, "[fsguard] {msg}");
        line.finish();
        self.write_line(line.as_bytes());
    }
}

/// Writes all of `bytes`: a short write is finished (a signal, a nearly
/// full disk); an error or no progress is an error.
fn write_whole(fd: i32, bytes: &[u8]) -> Result<(), rustix::io::Errno> {
    // SAFETY: the library's own checked fd; write reports EBADF if closed.
    let b = unsafe { BorrowedFd::borrow_raw(fd) };
    let mut done = 0;
    while done < bytes.len() {
        match rustix::io::write(b, &bytes[done..]) {
            Ok(0) => return Err(rustix::io::Errno::NOSPC),
            Ok(n) => done += n,
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Report lines the full pipe refused, to be told once there is room.
static REPORT_DROPPED: AtomicU64 = AtomicU64::new(0);

/// Tells the supervisor `n` lines were lost (`lost N`); false when it
/// could not be told.
fn report_lost(n: u64) -> bool {
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
    REPORT_DEV.store(st.st_dev, Ordering::Relaxed);
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
            if st.st_dev == REPORT_DEV.load(Ordering::Relaxed)
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
/// number (`/proc/<ppid>/fd/N`: a parent such as Python's waits for the
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
    let mut buf = [0u8; 64];
    let mut c = Cursor(&mut buf[..63], 0);
    let _ = write!(
        c,
        "/proc/{}/fd/{fd}",
        rustix::process::getppid().map_or(0, |p| p.as_raw_nonzero().get())
    );
    let n = c.1;
    let path = CStr::from_bytes_with_nul(&buf[..=n]).ok()?;
    // Non-blocking: the supervisor set its end so (a full pipe drops a line
    // rather than stall the program), and an open with no reader left
    // fails instead of waiting.
    let opened = rustix::fs::openat(
        CWD,
        path,
        OFlags::WRONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY,
        Mode::empty(),
    )
    .ok()?;
    let st = rustix::fs::fstat(&opened).ok()?;
    if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::Fifo
        || st.st_dev != REPORT_DEV.load(Ordering::Relaxed)
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
fn relay(line: &[u8]) -> bool {
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

/// A line being built, of at most [`LINE_CAP`] bytes; what does not fit is
/// cut with `…`. On the stack while short, then in a mapping; when no
/// mapping can be had, cut at what the stack holds. Not zeroed.
pub struct Line {
    buf: Spill<LINE_INLINE>,
    len: usize,
    full: bool,
}

impl Line {
    fn new() -> Line {
        Line {
            buf: Spill::new(),
            len: 0,
            full: false,
        }
    }

    fn push(&mut self, b: &[u8]) {
        if self.len + b.len() + 4 > self.buf.capacity() {
            let _ = self.buf.reserve(LINE_CAP, self.len);
        }
        let room = self.buf.capacity().min(LINE_CAP) - 4 - self.len;
        if b.len() > room {
            self.full = true;
        }
        let n = b.len().min(room);
        self.put(&b[..n]);
    }

    /// Appends bytes that fit (callers keep 4 bytes for the end).
    fn put(&mut self, b: &[u8]) {
        let dst = &mut self.buf.buf()[self.len..self.len + b.len()];
        // SAFETY: same lengths, distinct buffers; u8 and MaybeUninit<u8>
        // share a layout.
        unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), dst.as_mut_ptr().cast::<u8>(), b.len()) }
        self.len += b.len();
    }

    fn finish(&mut self) {
        if self.full {
            self.put("…".as_bytes());
        }
        self.put(b"\n");
    }

    fn as_bytes(&self) -> &[u8] {
        // SAFETY: the first `len` bytes were written by `put`.
        unsafe { self.buf.bytes(self.len) }
    }
}

impl std::fmt::Write for Line {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.push(s.as_bytes());
        Ok(())
    }
}

fn needs_quotes(v: &[u8]) -> bool {
    v.is_empty()
        || v.iter()
            .any(|&b| b == b' ' || b == b'"' || b == b'\\' || b < 0x20 || b == 0x7f || b >= 0x80)
}

/// A `key=value` value: bare, or double-quoted with backslash escapes.
fn value(line: &mut Line, v: &[u8]) {
    if !needs_quotes(v) {
        line.push(v);
        return;
    }
    line.push(b"\"");
    escaped(line, v, Bytes::Text);
    line.push(b"\"");
}

/// How a byte that is not UTF-8 is written: `\xNN` in text lines; in JSON,
/// which has no byte escape, `\udcNN`, the lone surrogate Python's
/// `surrogateescape` uses for it (so `os.fsencode(json.loads(…)["path"])`
/// gives back the exact bytes, and a real "é" is never confused with byte
/// 0xE9).
#[derive(Clone, Copy, PartialEq)]
enum Bytes {
    Text,
    Json,
}

/// Backslash escapes shared by text and JSON; see [`Bytes`] for bytes that
/// are not UTF-8.
fn escaped(line: &mut Line, v: &[u8], bytes: Bytes) {
    let mut rest = v;
    while !rest.is_empty() {
        let (ok, bad) = match std::str::from_utf8(rest) {
            Ok(s) => (s, &[][..]),
            Err(e) => {
                let (a, b) = rest.split_at(e.valid_up_to());
                // valid_up_to marks a UTF-8 prefix, so this never fails.
                (std::str::from_utf8(a).unwrap_or(""), b)
            }
        };
        for c in ok.chars() {
            match c {
                '"' => line.push(b"\\\""),
                '\\' => line.push(b"\\\\"),
                '\n' => line.push(b"\\n"),
                '\t' => line.push(b"\\t"),
                '\r' => line.push(b"\\r"),
                c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                    let _ = write!(line, "\\u{:04x}", c as u32);
                }
                c => {
                    let mut b = [0u8; 4];
                    line.push(c.encode_utf8(&mut b).as_bytes());
                }
            }
        }
        if let Some((&b, tail)) = bad.split_first() {
            let _ = match bytes {
                Bytes::Text => write!(line, "\\x{b:02x}"),
                Bytes::Json => write!(line, "\\udc{b:02x}"),
            };
            rest = tail;
        } else {
            rest = &[];
        }
    }
}

fn text(line: &mut Line, ev: &Event<'_>) {
    let _ = write!(
        line,
        "[fsguard] {} {} {} path=",
        ev.event,
        ev.call,
        ev.access.as_str()
    );
    value(line, ev.path);
    if let Some(dest) = ev.dest {
        line.push(b" dest=");
        value(line, dest);
    }
    let _ = write!(line, " rule={}", ev.rule);
    // A hint has a space and never a quote, backslash or control
    // character (Policy::hint refuses such paths): quoted as it is.
    if let Some(h) = &ev.hint {
        let _ = write!(line, " hint=\"{h}\"");
    }
}

/// Writes what is formatted into it JSON-escaped: a rule is escaped as it
/// is written, without a second line buffer.
struct JsonEscaped<'a>(&'a mut Line);

impl std::fmt::Write for JsonEscaped<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        escaped(self.0, s.as_bytes(), Bytes::Json);
        Ok(())
    }
}

fn json(line: &mut Line, ev: &Event<'_>, exe: &str) {
    let _ = write!(
        line,
        "{{\"event\":\"{}\",\"call\":\"{}\",\"access\":\"{}\",\"path\":\"",
        ev.event,
        ev.call,
        ev.access.as_str()
    );
    escaped(line, ev.path, Bytes::Json);
    line.push(b"\"");
    if let Some(dest) = ev.dest {
        line.push(b",\"dest\":\"");
        escaped(line, dest, Bytes::Json);
        line.push(b"\"");
    }
    line.push(b",\"rule\":\"");
    let _ = write!(JsonEscaped(line), "{}", ev.rule);
    if let Some(h) = &ev.hint {
        let _ = write!(line, "\",\"hint\":\"{h}");
    }
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::Realtime);
    let _ = write!(
        line,
        "\",\"pid\":{},\"errno\":{},\"exe\":\"",
        rustix::process::getpid().as_raw_nonzero(),
        ev.errno
    );
    escaped(line, exe.as_bytes(), Bytes::Json);
    let _ = write!(
        line,
        "\",\"time\":{}.{:03}}}",
        ts.tv_sec,
        ts.tv_nsec / 1_000_000
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev<'a>(path: &'a [u8], dest: Option<&'a [u8]>, rule: Rule<'a>) -> Event<'a> {
        Event {
            event: "blocked",
            call: "rename",
            access: Access::Write,
            path,
            dest,
            rule,
            errno: 13,
            hint: None,
        }
    }

    fn render(e: &Event<'_>, format: LogFormat) -> String {
        let mut l = Line::new();
        match format {
            LogFormat::Text => text(&mut l, e),
            LogFormat::Json => json(&mut l, e, "/usr/bin/x"),
        }
        l.finish();
        String::from_utf8(l.as_bytes().to_vec()).unwrap()
    }

    #[test]
    fn text_lines() {
        assert_eq!(
            render(&ev(b"/ws/a", Some(b"/etc/a"), Rule::Root), LogFormat::Text),
            "[fsguard] blocked rename write path=/ws/a dest=/etc/a rule=root\n"
        );
        assert_eq!(
            render(&ev(b"/ws/a b\"\n", None, Rule::Readonly), LogFormat::Text),
            "[fsguard] blocked rename write path=\"/ws/a b\\\"\\n\" rule=readonly\n"
        );
        assert_eq!(
            render(&ev(b"/ws/\xff", None, Rule::Readonly), LogFormat::Text),
            "[fsguard] blocked rename write path=\"/ws/\\xff\" rule=readonly\n"
        );
    }

    #[test]
    fn json_lines_parse() {
        let s = render(
            &ev(
                b"/ws/\"q\"",
                Some(b"/d"),
                Rule::Deny(Access::Write, "/ws/**"),
            ),
            LogFormat::Json,
        );
        assert!(s.starts_with("{\"event\":\"blocked\",\"call\":\"rename\",\"access\":\"write\",\"path\":\"/ws/\\\"q\\\"\",\"dest\":\"/d\",\"rule\":\"write.deny:\\\"/ws/**\\\"\",\"pid\":"), "{s}");
        assert!(s.ends_with("}\n"));
    }

    #[test]
    fn bytes_that_are_not_utf8_are_kept_apart_from_characters() {
        let raw = render(&ev(b"/ws/\xe9", None, Rule::Root), LogFormat::Json);
        let utf8 = render(&ev("/ws/é".as_bytes(), None, Rule::Root), LogFormat::Json);
        assert!(raw.contains("\"path\":\"/ws/\\udce9\""), "{raw}");
        assert!(utf8.contains("\"path\":\"/ws/é\""), "{utf8}");
        let text = render(&ev(b"/ws/\xe9", None, Rule::Root), LogFormat::Text);
        assert!(text.contains("path=\"/ws/\\xe9\""), "{text}");
    }

    #[test]
    fn long_lines_are_cut_not_overflowed() {
        let long = vec![b'a'; 20000];
        let s = render(&ev(&long, Some(&long), Rule::Root), LogFormat::Text);
        assert!(s.len() <= LINE_CAP + 1 && s.ends_with("…\n"));
    }
}
