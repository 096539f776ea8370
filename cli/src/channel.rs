//! The supervisor's end of the report channel (the library's end is
//! `src/trace/report.rs`; the messages are [`fsguard_policy::channel`]'s).
//!
//! A connected pair of message sockets (`SOCK_SEQPACKET`; datagrams on
//! macOS), whose other end the command inherits at a high number, out of
//! the way of the numbers scripts use (`exec 7<&0`), and, on Linux, a
//! listening socket in a private directory of its own (mode 0700, beside
//! the command's `TMPDIR`, never in it: the command may write there), where
//! a process that lost its inherited end connects again. The library uses
//! such a connection only if the listener is this process, so a program
//! that put a socket of its own at that path gets nothing. Every message
//! comes with the pid of the process that sent it, as the kernel gives it
//! (`SCM_CREDENTIALS`; not on macOS).

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};

use crate::sys::{self, Received};

/// The first number the command's end may take.
const HIGH_FD: RawFd = 200;

/// The largest message read whole; the library's are far shorter.
const MESSAGE_MAX: usize = 64 * 1024;

/// Messages read from one socket per round, so that no sender can keep
/// the supervisor from its other work (the timeout, the wait).
const ROUND_MAX: usize = 512;

/// Connections held at once; one more is closed as soon as it is accepted.
const CONNECTIONS_MAX: usize = 4096;

/// Where each message goes: its bytes, whether it was cut (longer than
/// [`MESSAGE_MAX`]), and its sender's pid.
pub(crate) type Take<'a> = &'a mut dyn FnMut(&[u8], bool, Option<u32>);

/// The supervisor's end.
pub(crate) struct Channel {
    ours: OwnedFd,
    /// The command's end until it is started.
    theirs: Option<OwnedFd>,
    /// Open until every holder of the command's end closed it.
    pair_open: bool,
    listener: Option<OwnedFd>,
    /// The private directory and the socket in it, removed when dropped.
    dir: Option<PathBuf>,
    socket: Option<PathBuf>,
    conns: Vec<OwnedFd>,
    /// An accept failed for want of descriptors: the listener sits out one
    /// round rather than wake every poll at once.
    pause: std::cell::Cell<bool>,
    buf: Vec<u8>,
}

fn socket_pair() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut sp = [0; 2];
    // SAFETY: sp has room for two descriptors.
    if unsafe { libc::socketpair(libc::AF_UNIX, sys::CHANNEL_TYPE, 0, sp.as_mut_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fresh descriptors we own.
    let pair = unsafe { (OwnedFd::from_raw_fd(sp[0]), OwnedFd::from_raw_fd(sp[1])) };
    for fd in [sp[0], sp[1]] {
        set_flags(fd)?;
    }
    Ok(pair)
}

/// `CLOEXEC` and non-blocking.
fn set_flags(fd: RawFd) -> std::io::Result<()> {
    // SAFETY: fcntl on a descriptor of ours.
    unsafe {
        if libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let fl = libc::fcntl(fd, libc::F_GETFL);
        if fl < 0 || libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// A listening socket at `dir/s`, in a fresh directory (mode 0700) under
/// one of `bases`; `None` when none can be made (the path must fit a
/// socket address).
fn listen_in(bases: &[PathBuf]) -> Option<(OwnedFd, PathBuf, PathBuf)> {
    use std::os::unix::ffi::OsStrExt;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    for base in bases {
        let dir = base.join(format!("fsguard-report-{}-{stamp:08x}", std::process::id()));
        let socket = dir.join("s");
        // SAFETY: a zeroed sockaddr_un is valid; its path is set below.
        let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
        let bytes = socket.as_os_str().as_bytes();
        if bytes.len() >= addr.sun_path.len() {
            continue;
        }
        use std::os::unix::fs::DirBuilderExt;
        if std::fs::DirBuilder::new().mode(0o700).create(&dir).is_err() {
            continue;
        }
        addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
        for (d, &b) in addr.sun_path.iter_mut().zip(bytes) {
            *d = b as libc::c_char;
        }
        // SAFETY: socket(2); the fd is ours.
        let fd = unsafe { libc::socket(libc::AF_UNIX, sys::CHANNEL_TYPE, 0) };
        if fd < 0 {
            let _ = std::fs::remove_dir(&dir);
            continue;
        }
        // SAFETY: fresh and ours.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let len = std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t;
        // SAFETY: bind and listen on our socket with a filled address.
        let ok = set_flags(fd.as_raw_fd()).is_ok()
            && sys::pass_credentials(fd.as_raw_fd()).is_ok()
            && unsafe {
                libc::bind(
                    fd.as_raw_fd(),
                    (&addr as *const libc::sockaddr_un).cast(),
                    len,
                ) == 0
                    && libc::listen(fd.as_raw_fd(), 1024) == 0
            };
        if ok {
            return Some((fd, dir, socket));
        }
        drop(fd);
        let _ = std::fs::remove_file(&socket);
        let _ = std::fs::remove_dir(&dir);
    }
    None
}

impl Channel {
    /// The channel, its listening socket in a directory under the first
    /// of `bases` that takes one.
    pub(crate) fn open(bases: &[PathBuf]) -> Result<Channel, String> {
        let err = |e: std::io::Error| format!("cannot make the report channel: {e}");
        let (ours, theirs) = socket_pair().map_err(err)?;
        sys::pass_credentials(ours.as_raw_fd()).map_err(err)?;
        // SAFETY: fcntl on our descriptor; the copy is ours.
        let high = unsafe { libc::fcntl(theirs.as_raw_fd(), libc::F_DUPFD_CLOEXEC, HIGH_FD) };
        let theirs = if high >= 0 {
            // SAFETY: fresh and ours.
            unsafe { OwnedFd::from_raw_fd(high) }
        } else {
            theirs
        };
        sys::no_sigpipe(theirs.as_raw_fd());
        // Every guarded process sends on this one socket: as much room as
        // the system gives (the rest waits in the senders).
        let size: libc::c_int = 4 << 20;
        // SAFETY: setsockopt with an int of the right size on our socket.
        unsafe {
            libc::setsockopt(
                theirs.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_SNDBUF,
                (&size as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        let (listener, dir, socket) = match sys::CHANNEL_LISTENS.then(|| listen_in(bases)).flatten()
        {
            Some((l, d, s)) => (Some(l), Some(d), Some(s)),
            None => (None, None, None),
        };
        Ok(Channel {
            ours,
            theirs: Some(theirs),
            pair_open: true,
            listener,
            dir,
            socket,
            conns: Vec::new(),
            pause: std::cell::Cell::new(false),
            buf: vec![0; MESSAGE_MAX],
        })
    }

    /// The command's end (`-1` once it is started).
    pub(crate) fn child_fd(&self) -> RawFd {
        self.theirs.as_ref().map_or(-1, AsRawFd::as_raw_fd)
    }

    /// The listening socket's path, if there is one.
    pub(crate) fn socket(&self) -> Option<&Path> {
        self.socket.as_deref()
    }

    /// Closes the command's end here, once the command has its own.
    pub(crate) fn started(&mut self) {
        self.theirs = None;
    }

    /// The sockets to wait on, in the order [`Channel::service`] reads
    /// their `revents`.
    pub(crate) fn pollfds(&self, out: &mut Vec<libc::pollfd>) {
        out.clear();
        let pfd = |fd: RawFd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        out.push(pfd(if self.pair_open {
            self.ours.as_raw_fd()
        } else {
            -1
        }));
        let listener = self.listener.as_ref().map_or(-1, AsRawFd::as_raw_fd);
        out.push(pfd(if self.pause.replace(false) {
            -1
        } else {
            listener
        }));
        out.extend(self.conns.iter().map(|c| pfd(c.as_raw_fd())));
    }

    /// Reads what the sockets `pfds` found ready hold (all of them when
    /// `pfds` is empty), and accepts waiting connections; each message
    /// goes to `f` with whether it was cut and its sender's pid. True when
    /// anything was read or accepted.
    pub(crate) fn service(&mut self, pfds: &[libc::pollfd], f: Take<'_>) -> bool {
        let ready = |i: usize| pfds.is_empty() || pfds.get(i).is_some_and(|p| p.revents != 0);
        // Hung up: once its queue is read, nothing more will come.
        let hup = |i: usize| {
            pfds.get(i)
                .is_some_and(|p| p.revents & (libc::POLLHUP | libc::POLLERR) != 0)
        };
        let mut busy = false;
        if self.pair_open && ready(0) {
            let (got, open) = read_round(self.ours.as_raw_fd(), hup(0), &mut self.buf, f);
            busy |= got;
            self.pair_open = open;
        }
        let mut closed = Vec::new();
        for (i, c) in self.conns.iter().enumerate() {
            if ready(i + 2) {
                let (got, open) = read_round(c.as_raw_fd(), hup(i + 2), &mut self.buf, f);
                busy |= got;
                if !open {
                    closed.push(i);
                }
            }
        }
        for i in closed.into_iter().rev() {
            self.conns.swap_remove(i);
        }
        if ready(1) {
            busy |= self.accept();
        }
        busy
    }

    /// Accepts the connections waiting; true if there were any.
    fn accept(&mut self) -> bool {
        let Some(l) = &self.listener else {
            return false;
        };
        let mut any = false;
        loop {
            // SAFETY: accept on our listening socket; the fd is ours.
            let fd =
                unsafe { libc::accept(l.as_raw_fd(), std::ptr::null_mut(), std::ptr::null_mut()) };
            if fd < 0 {
                match crate::sys::errno() {
                    libc::EINTR | libc::ECONNABORTED => continue,
                    libc::EAGAIN => {}
                    _ => self.pause.set(true),
                }
                return any;
            }
            any = true;
            // SAFETY: fresh and ours.
            let fd = unsafe { OwnedFd::from_raw_fd(fd) };
            if self.conns.len() < CONNECTIONS_MAX
                && set_flags(fd.as_raw_fd()).is_ok()
                && sys::pass_credentials(fd.as_raw_fd()).is_ok()
            {
                self.conns.push(fd);
            }
        }
    }

    /// Reads everything there is, at the end of the run, until nothing more
    /// comes (within a bound: a process that outlives the command may go
    /// on sending).
    pub(crate) fn finish(&mut self, f: Take<'_>) {
        for _ in 0..1000 {
            if !self.service(&[], f) {
                return;
            }
        }
    }
}

/// Reads up to [`ROUND_MAX`] messages from `fd` (`hup`: poll found it hung
/// up): whether any came, and whether the socket is still open.
fn read_round(fd: RawFd, hup: bool, buf: &mut [u8], f: Take<'_>) -> (bool, bool) {
    let mut got = false;
    for _ in 0..ROUND_MAX {
        match sys::recv_message(fd, buf) {
            Ok(Received::Message { len, cut, pid }) => {
                got = true;
                f(&buf[..len], cut, pid);
            }
            Ok(Received::Empty) => return (got, !hup),
            Ok(Received::Closed) => return (got, false),
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
            Err(_) => return (got, false),
        }
    }
    (got, true)
}

impl Drop for Channel {
    fn drop(&mut self) {
        if let Some(s) = &self.socket {
            let _ = std::fs::remove_file(s);
        }
        if let Some(d) = &self.dir {
            let _ = std::fs::remove_dir(d);
        }
    }
}
