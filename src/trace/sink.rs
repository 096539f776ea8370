//! Where lines go: the log file or the starting stderr, each checked to
//! still be the file it was before every write; lines that cannot be
//! written are counted as lost. Under `fsguard run`, with each refusal's
//! record on the report channel ([`super::report`]).

use std::fmt::Write as _;
use std::os::fd::{BorrowedFd, IntoRawFd};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};

use fsguard_policy::channel::Kind;
use fsguard_policy::{Access, LogFormat, LogSettings, LogTarget, Rule};
use rustix::fs::{Mode, OFlags, CWD};

use super::render::{json, text, Line};
use super::report;
use super::Event;

/// Where lines go, set once at load.
pub struct Sink {
    target: LogTarget,
    /// The log file is the supervisor's: lines go over the report channel,
    /// and the file is never opened here.
    relayed: bool,
    /// Under `fsguard run`: every refusal's record goes to the supervisor.
    supervised: bool,
    /// Under `fsguard run` with the log on stderr, and the starting stderr
    /// is the supervisor's own: lines are written here, before the refused
    /// call returns, in order with the program's own output.
    direct: bool,
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
    /// relayed to the supervisor.
    pub fn new(log: &LogSettings, exe: String) -> Result<Sink, String> {
        let target = log.target.clone();
        let relayed = log.relayed && matches!(target, LogTarget::File(_));
        let err = Kept::dup_of(2);
        let supervised = log.supervisor.is_some();
        let direct = target == LogTarget::Stderr
            && log.supervisor.as_ref().and_then(|s| s.stderr)
                == Some([
                    err.dev.load(Ordering::Relaxed),
                    err.ino.load(Ordering::Relaxed),
                ])
            && err.fd.load(Ordering::Relaxed) >= 0;
        let sink = Sink {
            relayed,
            supervised,
            direct,
            path: match &target {
                LogTarget::File(p) => Some(
                    std::ffi::CString::new(p.as_bytes())
                        .map_err(|_| "log path has a NUL byte".to_string())?,
                ),
                _ => None,
            },
            target,
            format: log.format,
            fd: AtomicI32::new(-1),
            dev: AtomicU64::new(0),
            ino: AtomicU64::new(0),
            exe,
            err,
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
        if log.format == LogFormat::Json {
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
            LogTarget::File(_) => self.file_fd().or_else(|| self.err.get()),
        }
    }

    /// Traces a refused (or audited) call: its line, and under `fsguard
    /// run` its record.
    pub fn emit(&self, ev: &Event<'_>) {
        let kind = if ev.rule == Rule::InternalError {
            Kind::Internal
        } else if ev.rule == Rule::Landlock {
            Kind::Landlock
        } else if ev.event == "audit" {
            Kind::Audit
        } else {
            Kind::Blocked
        };
        if self.target == LogTarget::Off {
            if self.supervised {
                report::record(kind, ev.call, ev.access, ev.path, None);
            }
            return;
        }
        let mut line = Line::new();
        match self.format {
            LogFormat::Text => text(&mut line, ev),
            LogFormat::Json => json(&mut line, ev, &self.exe),
        }
        line.finish();
        let bytes = line.as_bytes();
        if !self.supervised {
            self.write_line(bytes);
            return;
        }
        // The supervisor prints or logs the line, unless it was written
        // here; it never goes to another stream.
        let relay = match self.target {
            LogTarget::File(_) if !self.relayed => {
                self.write_line(bytes);
                None
            }
            LogTarget::Stderr if self.write_direct(bytes) => None,
            _ => Some(bytes),
        };
        report::record(kind, ev.call, ev.access, ev.path, relay);
    }

    /// Writes a line on the starting stderr when it is the supervisor's
    /// (the log is on stderr: see [`Sink::direct`]).
    fn write_direct(&self, bytes: &[u8]) -> bool {
        self.direct
            && self
                .err
                .get()
                .is_some_and(|fd| write_whole(fd, bytes).is_ok())
    }

    /// Writes a finished line that counts as nothing (a notice, an
    /// unguarded exec). Under `fsguard run` the supervisor prints or logs
    /// it, unless it was written here.
    fn write_note(&self, bytes: &[u8]) {
        if !self.supervised || matches!(self.target, LogTarget::File(_)) && !self.relayed {
            self.write_line(bytes);
        } else if !self.write_direct(bytes) {
            report::note(bytes);
        }
    }

    /// Writes a finished line to the log file or the starting stderr; a
    /// line not written whole is counted as lost ([`lost`]).
    fn write_line(&self, bytes: &[u8]) {
        let r = match self.out_fd() {
            Some(fd) => write_whole(fd, bytes),
            None => Err(rustix::io::Errno::BADF),
        };
        if let Err(e) = r {
            self.lost(e);
        }
    }

    /// Counts a lost line; the first time, says so on the starting stderr.
    #[cold]
    #[inline(never)]
    fn lost(&self, e: rustix::io::Errno) {
        LOST.fetch_add(1, Ordering::Relaxed);
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
        if self.target == LogTarget::Stderr {
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
            // The supervisor still names the program in its summary.
            if self.supervised {
                report::record(Kind::Unguarded, kind, Access::Exec, path, None);
            }
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
        let bytes = line.as_bytes();
        if self.supervised && self.target == LogTarget::Stderr && self.write_direct(bytes) {
            // Written here: the supervisor gets the record alone, to name
            // the program in its summary.
            report::record(Kind::Unguarded, kind, Access::Exec, path, None);
            return;
        }
        self.write_note(bytes);
    }

    /// Writes a free-form notice (`[fsguard] …`) to the log.
    pub fn notice(&self, msg: &str) {
        if self.target == LogTarget::Off {
            return;
        }
        let mut line = Line::new();
        let _ = write!(line, "[fsguard] {msg}");
        line.finish();
        self.write_note(line.as_bytes());
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
