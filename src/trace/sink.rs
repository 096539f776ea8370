//! Where lines go: the log file or the starting stderr, each checked to
//! still be the file it was before every write; lines that cannot be
//! written are counted as lost.

use std::fmt::Write as _;
use std::os::fd::{BorrowedFd, IntoRawFd};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};

use fsguard_policy::{Access, LogFormat, LogTarget, Rule};
use rustix::fs::{Mode, OFlags, CWD};

use super::render::{json, text, Line};
use super::report::{relay, report_lost, REPORT_DROPPED};
use super::Event;

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
            k.dev.store(crate::sys::dev(&st), Ordering::Relaxed);
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
            if crate::sys::dev(&st) == self.dev.load(Ordering::Relaxed)
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
        self.dev.store(crate::sys::dev(&st), Ordering::Relaxed);
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
                if crate::sys::dev(&st) == self.dev.load(Ordering::Relaxed)
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
            Some(p) if self.target != LogTarget::Stderr => {
                fsguard_policy::wire::value(&mut line, p.as_bytes())
            }
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
                fsguard_policy::wire::unguarded_text(&mut line, call, kind, path);
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
    pub(super) fn warn_unreported(&self) {
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
