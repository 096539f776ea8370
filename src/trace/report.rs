//! The report channel of `fsguard run`: one message per refusal (see
//! [`fsguard_policy::channel`]), sent before the refused call returns.
//!
//! The channel is a socket that keeps message boundaries (`SOCK_SEQPACKET`;
//! `SOCK_DGRAM` on macOS), inherited at a high number named by
//! `FSGUARD_REPORT_FD`. Programs own their descriptors: a shell's
//! `exec 7<&0`, a `close_range` or a `closefrom` may close that number or
//! put another file there. So before each send the number is checked to
//! still be the socket the library adopted (`fstat`: a socket of the same
//! inode), and when it is not, the process connects to the supervisor's
//! listening socket again (the policy's [`Supervisor`]), uses the
//! connection only if the listener is the supervisor's pid, and keeps it
//! at a high number. A number that is no longer ours is forgotten, never
//! written to, never closed.
//!
//! A send that finds the channel full waits for room, up to
//! [`WAIT_MS`]; a message that cannot be sent is counted, and the count is
//! sent (`lost N`) with the next message that can be.

use std::ffi::{CStr, CString};
use std::fmt::Write as _;
use std::io::IoSlice;
use std::os::fd::{AsRawFd, BorrowedFd, IntoRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicU64, Ordering};

use fsguard_policy::channel::Kind;
use fsguard_policy::{Access, Supervisor};
use rustix::io::Errno;

/// The channel: its fd and the low 32 bits of its inode (a socket's inode
/// number is 32 bits), in one word so a reader never pairs one
/// connection's fd with another's inode. [`NONE`]: no channel.
static CHAN: AtomicU64 = AtomicU64::new(NONE);
const NONE: u64 = u64::MAX;
/// The device of sockets (one for all of them).
static SOCK_DEV: AtomicU64 = AtomicU64::new(0);
/// The number the channel was inherited at, as children are told it
/// ([`ReportForChild::Intact`]).
static INHERITED: AtomicI32 = AtomicI32::new(-1);

/// Where to connect again: the supervisor's socket and pid.
struct Home {
    socket: CString,
    pid: u32,
}
static HOME: AtomicPtr<Home> = AtomicPtr::new(std::ptr::null_mut());
/// The supervisor refused a connection (it is gone, or its socket is):
/// no further tries.
static GONE: AtomicBool = AtomicBool::new(false);

/// Refusals whose messages could not be sent, to be told as `lost N`.
static LOST: AtomicU64 = AtomicU64::new(0);
/// A send waited its full time: the next ones do not wait until one
/// goes through (a stopped supervisor must not stall every refusal).
static STALLED: AtomicBool = AtomicBool::new(false);

/// How long a send waits for room in a full channel.
pub(super) const WAIT_MS: i64 = 2000;

fn pack(fd: i32, ino: u64) -> u64 {
    (u64::from(fd as u32) << 32) | (ino & 0xffff_ffff)
}

fn unpack(v: u64) -> (i32, u64) {
    ((v >> 32) as u32 as i32, v & 0xffff_ffff)
}

/// Takes the channel's facts at load: the inherited fd (`FSGUARD_REPORT_FD`)
/// if it is a socket, and the supervisor to connect to again. Returns the
/// fd adopted.
pub fn report_init(fd: Option<i32>, sup: Option<&Supervisor>) -> Option<i32> {
    if let Some(s) = sup.filter(|s| !s.socket.is_empty()) {
        if let Ok(socket) = CString::new(s.socket.as_bytes()) {
            let home = Box::new(Home { socket, pid: s.pid });
            HOME.store(Box::into_raw(home), Ordering::Release);
        }
    }
    let fd = fd.filter(|&fd| fd >= 0)?;
    // SAFETY: fstat only; a closed fd answers EBADF.
    let st = rustix::fs::fstat(unsafe { BorrowedFd::borrow_raw(fd) }).ok()?;
    if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::Socket {
        return None;
    }
    SOCK_DEV.store(crate::sys::dev(&st), Ordering::Relaxed);
    CHAN.store(pack(fd, st.st_ino), Ordering::Release);
    INHERITED.store(fd, Ordering::Relaxed);
    Some(fd)
}

fn home() -> Option<&'static Home> {
    // SAFETY: set once at load to a leaked Box, never freed.
    unsafe { HOME.load(Ordering::Acquire).as_ref() }
}

/// True when `fd` is still the socket of inode `ino` (low 32 bits).
fn same(fd: i32, ino: u64) -> bool {
    // SAFETY: fstat only; a closed fd answers EBADF.
    matches!(rustix::fs::fstat(unsafe { BorrowedFd::borrow_raw(fd) }), Ok(st)
        if rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Socket
            && crate::sys::dev(&st) == SOCK_DEV.load(Ordering::Relaxed)
            && st.st_ino & 0xffff_ffff == ino)
}

/// The channel as it is now, checked; `None` when it is gone.
fn current() -> Option<(u64, BorrowedFd<'static>)> {
    let v = CHAN.load(Ordering::Acquire);
    if v == NONE {
        return None;
    }
    let (fd, ino) = unpack(v);
    // SAFETY: the library's own socket, just checked to still be it.
    same(fd, ino).then(|| (v, unsafe { BorrowedFd::borrow_raw(fd) }))
}

/// A new connection to the supervisor (see [`crate::sys::connect_supervisor`]).
/// An fd table that is full gives up the reserve's spares for it (`spares`:
/// not in a `vfork` child, whose table is not the one the reserve's
/// numbers, in shared memory, are of).
fn connect_home(spares: bool) -> Option<OwnedFd> {
    if GONE.load(Ordering::Relaxed) {
        return None;
    }
    let home = home()?;
    let mut r = crate::sys::connect_supervisor(&home.socket, home.pid);
    if matches!(r, Err(Errno::MFILE | Errno::NFILE)) && spares && crate::reserve::release() {
        r = crate::sys::connect_supervisor(&home.socket, home.pid);
    }
    match r {
        Ok(fd) => Some(fd),
        // No listener, no socket, or not the supervisor's: it will not
        // come back.
        Err(Errno::CONNREFUSED | Errno::NOENT | Errno::NOTDIR | Errno::PERM) => {
            GONE.store(true, Ordering::Relaxed);
            None
        }
        Err(_) => None,
    }
}

/// The channel, connected again if the program closed or replaced it.
fn channel() -> Option<(u64, BorrowedFd<'static>)> {
    current().or_else(|| reconnect(CHAN.load(Ordering::Acquire)))
}

/// Replaces the channel `old` by a new connection. A thread that lost the
/// race keeps the winner's.
fn reconnect(old: u64) -> Option<(u64, BorrowedFd<'static>)> {
    let fd = connect_home(true)?;
    let st = rustix::fs::fstat(&fd).ok()?;
    SOCK_DEV.store(crate::sys::dev(&st), Ordering::Relaxed);
    let new = pack(fd.as_raw_fd(), st.st_ino);
    match CHAN.compare_exchange(old, new, Ordering::AcqRel, Ordering::Acquire) {
        // SAFETY: ours from now on, for the process's life.
        Ok(_) => Some((new, unsafe { BorrowedFd::borrow_raw(fd.into_raw_fd()) })),
        Err(_) => current(),
    }
}

/// Whether a supervisor receives this process's messages (or did).
pub(super) fn supervised() -> bool {
    CHAN.load(Ordering::Relaxed) != NONE || !HOME.load(Ordering::Relaxed).is_null()
}

/// Sends one message, waiting for room up to [`WAIT_MS`] (not after a
/// send that timed out, until one goes through).
fn send_wait(fd: BorrowedFd<'_>, parts: &[IoSlice<'_>]) -> Result<(), Errno> {
    let total: usize = parts.iter().map(|p| p.len()).sum();
    let stalled = STALLED.load(Ordering::Relaxed);
    let start = now_ms();
    loop {
        match crate::sys::send_message(fd, parts) {
            Ok(n) if n == total => {
                if stalled {
                    STALLED.store(false, Ordering::Relaxed);
                }
                return Ok(());
            }
            // A message is sent whole or not at all.
            Ok(_) => return Err(Errno::IO),
            Err(Errno::INTR) => {}
            Err(Errno::AGAIN) => {
                let left = if stalled {
                    0
                } else {
                    WAIT_MS - (now_ms() - start)
                };
                if left <= 0 {
                    STALLED.store(true, Ordering::Relaxed);
                    return Err(Errno::AGAIN);
                }
                let mut p = [rustix::event::PollFd::new(
                    &fd,
                    rustix::event::PollFlags::OUT,
                )];
                let ts = rustix::time::Timespec {
                    tv_sec: left / 1000,
                    tv_nsec: (left % 1000) * 1_000_000,
                };
                let _ = rustix::event::poll(&mut p, Some(&ts));
            }
            Err(e) => return Err(e),
        }
    }
}

fn now_ms() -> i64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec * 1000 + t.tv_nsec / 1_000_000
}

/// Sends a message on the channel, connecting again once when the
/// connection is dead; tells the lost count first.
fn send(parts: &[IoSlice<'_>]) -> Result<(), Errno> {
    let (mut v, mut fd) = channel().ok_or(Errno::NOTCONN)?;
    let mut again = true;
    loop {
        let pending = LOST.swap(0, Ordering::Relaxed);
        if pending > 0 {
            let mut buf = [0u8; 32];
            let mut c = Cursor(&mut buf, 0);
            let _ = write!(c, "lost {pending}");
            let n = c.1;
            if send_wait(fd, &[IoSlice::new(&buf[..n])]).is_err() {
                LOST.fetch_add(pending, Ordering::Relaxed);
            }
        }
        match send_wait(fd, parts) {
            Err(Errno::PIPE | Errno::CONNRESET | Errno::NOTCONN | Errno::CONNREFUSED) if again => {
                again = false;
                (v, fd) = reconnect(v).ok_or(Errno::NOTCONN)?;
            }
            r => return r,
        }
    }
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

/// What a message is cut to when the channel takes no larger one (a tiny
/// socket buffer): the path, and the line, which ends with `…`.
const CUT_PATH: usize = 1024;
const CUT_LINE: usize = 3072;

/// Sends a refusal's record, with its trace line when the supervisor is
/// to print or log it. False when it could not be sent: counted, and told
/// as `lost` with a later message.
pub(super) fn record(
    kind: Kind,
    call: &str,
    access: Access,
    path: &[u8],
    line: Option<&[u8]>,
) -> bool {
    let path = if path.is_empty() { &b"?"[..] } else { path };
    let sep = [fsguard_policy::channel::SEP];
    let header = |path| header(kind.as_str(), call, access.as_str(), path);
    let r = match line {
        None => send(&header(path)),
        Some(l) => {
            let [a, b, c, d, e, f, g] = header(path);
            send(&[a, b, c, d, e, f, g, IoSlice::new(&sep), IoSlice::new(l)])
        }
    };
    let r = match r {
        Err(Errno::MSGSIZE) => {
            let path = &path[..path.len().min(CUT_PATH)];
            let mut cut = [0u8; CUT_LINE + 4];
            let [a, b, c, d, e, f, g] = header(path);
            match line {
                None => send(&[a, b, c, d, e, f, g]),
                Some(l) => {
                    let n = cut_line(l, &mut cut);
                    send(&[
                        a,
                        b,
                        c,
                        d,
                        e,
                        f,
                        g,
                        IoSlice::new(&sep),
                        IoSlice::new(&cut[..n]),
                    ])
                }
            }
        }
        r => r,
    };
    if r.is_err() {
        LOST.fetch_add(1, Ordering::Relaxed);
        return false;
    }
    true
}

/// Sends a line that counts as nothing (a notice, an unguarded exec) for
/// the supervisor to print or log; false when it could not be sent.
pub(super) fn note(line: &[u8]) -> bool {
    let sep = [fsguard_policy::channel::SEP];
    let parts = [
        IoSlice::new(b"note"),
        IoSlice::new(&sep),
        IoSlice::new(line),
    ];
    match send(&parts) {
        Err(Errno::MSGSIZE) => {
            let mut cut = [0u8; CUT_LINE + 4];
            let n = cut_line(line, &mut cut);
            let parts = [
                IoSlice::new(b"note"),
                IoSlice::new(&sep),
                IoSlice::new(&cut[..n]),
            ];
            send(&parts).is_ok()
        }
        r => r.is_ok(),
    }
}

/// A record's header, `<kind> <call> <access> <path>`, as slices.
fn header<'a>(kind: &'a str, call: &'a str, access: &'a str, path: &'a [u8]) -> [IoSlice<'a>; 7] {
    [
        IoSlice::new(kind.as_bytes()),
        IoSlice::new(b" "),
        IoSlice::new(call.as_bytes()),
        IoSlice::new(b" "),
        IoSlice::new(access.as_bytes()),
        IoSlice::new(b" "),
        IoSlice::new(path),
    ]
}

/// `line` cut to [`CUT_LINE`] bytes at a character's start, with `…` and
/// the newline; the length written.
fn cut_line(line: &[u8], out: &mut [u8; CUT_LINE + 4]) -> usize {
    let mut n = line.len().min(CUT_LINE);
    while n > 0 && n < line.len() && (line[n] & 0xc0) == 0x80 {
        n -= 1;
    }
    out[..n].copy_from_slice(&line[..n]);
    if n < line.len() {
        let body = &line[..n];
        let n = body.strip_suffix(b"\n").map_or(n, <[u8]>::len);
        out[n..n + 3].copy_from_slice("…".as_bytes());
        out[n + 3] = b'\n';
        return n + 4;
    }
    n
}

/// The report channel as an exec hands it to the new program.
pub enum ReportForChild {
    /// No supervisor: no variable.
    None,
    /// The channel is still at the number it was inherited at.
    Intact,
    /// The channel, at another number (this process connected again).
    At(i32),
    /// A connection made for this exec (the channel was gone and this may
    /// be a `vfork` child, which must not change the parent's): inheritable,
    /// closed when dropped (after a failed exec).
    Fresh(OwnedFd),
    /// None to be had: the child is told `-1`, and connects itself at its
    /// first refusal if it can.
    Lost,
}

impl ReportForChild {
    /// `FSGUARD_REPORT_FD=N\0` into `buf` (`None`: no variable). `intact`
    /// is the entry made at load, for the common case.
    pub fn entry<'a>(&self, intact: Option<&'a CStr>, buf: &'a mut [u8; 40]) -> Option<&'a CStr> {
        let fd = match self {
            ReportForChild::None => return None,
            ReportForChild::Intact if intact.is_some() => return intact,
            ReportForChild::Intact => INHERITED.load(Ordering::Relaxed),
            ReportForChild::At(fd) => *fd,
            ReportForChild::Fresh(fd) => fd.as_raw_fd(),
            ReportForChild::Lost => -1,
        };
        let mut c = Cursor(&mut buf[..39], 0);
        let _ = write!(c, "FSGUARD_REPORT_FD={fd}");
        let n = c.1;
        buf[n] = 0;
        CStr::from_bytes_with_nul(&buf[..=n]).ok()
    }
}

/// The channel for a child about to be exec'd: the process's own, checked,
/// or a connection made for the child. This may run in a `vfork` child:
/// system calls only, no allocation, no shared state changed.
///
/// Never inlined: the connection's temporaries stay out of the frame that
/// is live during the exec ([`crate::exec`]'s `with_env`).
#[inline(never)]
pub fn report_for_child() -> ReportForChild {
    if !supervised() {
        return ReportForChild::None;
    }
    if let Some((v, _)) = current() {
        let (fd, _) = unpack(v);
        return if fd == INHERITED.load(Ordering::Relaxed) {
            ReportForChild::Intact
        } else {
            ReportForChild::At(fd)
        };
    }
    match connect_home(false) {
        Some(fd) => ReportForChild::Fresh(fd),
        None => ReportForChild::Lost,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_line_ends_whole() {
        let mut out = [0u8; CUT_LINE + 4];
        let short = b"[fsguard] x\n";
        let n = cut_line(short, &mut out);
        assert_eq!(&out[..n], short);
        let mut long = b"[fsguard] ".to_vec();
        long.extend("é".repeat(CUT_LINE).as_bytes());
        long.push(b'\n');
        let n = cut_line(&long, &mut out);
        let s = std::str::from_utf8(&out[..n]).unwrap();
        assert!(
            s.ends_with("…\n") && n <= CUT_LINE + 4,
            "{}",
            &s[s.len() - 10..]
        );
    }

    #[test]
    fn packed_channel_round_trips() {
        assert_eq!(unpack(pack(201, 0x1_2345_6789)), (201, 0x2345_6789));
        assert_ne!(pack(0, 0), NONE);
    }
}
