//! Whether a process a call names is inside the guarded tree, read from
//! `/proc` ([`fsguard_policy::process`] decides).
//!
//! The target is opened first, as its `/proc/<pid>` directory: what is read
//! through that descriptor is about that very process, and a lookup in it
//! fails once the process is gone and its pid may be another's. So a call
//! that must act by pid (there is no pidfd form of `ptrace` or
//! `process_vm_readv`) checks afterwards that the process it judged lived
//! through the call ([`Pinned::alive`]): then the pid was still its own.

use std::ffi::{c_int, CStr};
use std::os::fd::{AsFd, OwnedFd};

use fsguard_policy::process::{self, ProcessId, Stat};
use rustix::fs::{AtFlags, Mode, OFlags, CWD};
use rustix::io::Errno;

/// A target process held by its `/proc/<pid>` directory.
pub(super) struct Pinned {
    dir: OwnedFd,
}

/// Where a target process stands.
pub(super) enum Reach {
    /// The caller itself (its own pid: never another's while it runs).
    Own,
    /// Inside the tree: a descendant of the caller or of the supervisor,
    /// or a thread of the caller.
    Inside(Pinned),
    /// Outside the tree, or not known to be inside (unreadable `/proc`):
    /// refused. The pid, and the process if it could be opened.
    Outside(u32, Option<Pinned>),
    /// No such process: the kernel's answer is ESRCH.
    Gone,
}

/// `/proc/<pid>` and, optionally, `/<entry>`, NUL-terminated in `buf`.
fn proc_path<'a>(pid: u32, entry: &[u8], buf: &'a mut [u8; 40]) -> &'a CStr {
    let mut digits = [0u8; 10];
    let i = crate::resolve::decimal(pid, &mut digits);
    let mut n = 0;
    for part in [&b"/proc/"[..], &digits[i..], entry] {
        buf[n..n + part.len()].copy_from_slice(part);
        n += part.len();
    }
    buf[n] = 0;
    // NUL-terminated just above, with no NUL before it.
    CStr::from_bytes_with_nul(&buf[..=n]).unwrap_or(c"/proc/self")
}

/// Reads the start of `name` under `dir` into `buf`, in one read: a
/// `/proc` file is made whole at the first read, which gives as much of it
/// as fits (a stat line, the first lines of `status` or `fdinfo`, which is
/// all the callers read). The bytes read.
fn read_entry<'a>(dir: impl AsFd, name: &CStr, buf: &'a mut [u8]) -> Result<&'a [u8], Errno> {
    let fd = rustix::fs::openat(dir, name, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())?;
    loop {
        match rustix::io::read(&fd, &mut *buf) {
            Ok(n) => return Ok(&buf[..n]),
            Err(Errno::INTR) => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Reads what fits of the file at `path` into `buf`; the bytes read.
pub(super) fn read_path<'a>(path: &CStr, buf: &'a mut [u8]) -> Result<&'a [u8], Errno> {
    read_entry(CWD, path, buf)
}

/// The stat line of `pid`, by path (a parent in the walk: its start time
/// proves it is the parent the child had).
fn stat_of(pid: u32) -> Option<Stat> {
    let mut path = [0u8; 40];
    let path = proc_path(pid, b"/stat", &mut path);
    let mut buf = [0u8; 512];
    process::parse_stat(read_entry(CWD, path, &mut buf).ok()?)
}

impl Pinned {
    /// Whether the process is still alive (a zombie counts: it keeps its
    /// pid until it is reaped).
    pub(super) fn alive(&self) -> bool {
        rustix::fs::statat(&self.dir, c"stat", AtFlags::empty()).is_ok()
    }

    /// What names it in a trace line: its executable, else `[comm]` (as
    /// `ps` shows a process whose executable it cannot read), else `?`.
    /// Into `buf`; the bytes.
    pub(super) fn exe<'a>(&self, buf: &'a mut [u8; 512]) -> &'a [u8] {
        if let Ok((init, _)) = rustix::fs::readlinkat_raw(&self.dir, c"exe", &mut *as_uninit(buf)) {
            let n = init.len();
            if n > 0 && n < buf.len() {
                return &buf[..n];
            }
        }
        let mut line = [0u8; 512];
        if let Some(comm) = read_entry(&self.dir, c"stat", &mut line)
            .ok()
            .and_then(process::stat_comm)
        {
            let n = comm.len().min(buf.len() - 2);
            buf[0] = b'[';
            buf[1..=n].copy_from_slice(&comm[..n]);
            buf[n + 1] = b']';
            return &buf[..n + 2];
        }
        b"?"
    }
}

fn as_uninit(buf: &mut [u8; 512]) -> &mut [std::mem::MaybeUninit<u8>; 512] {
    // SAFETY: u8 and MaybeUninit<u8> share a layout, and every byte of an
    // initialised buffer is a valid MaybeUninit.
    unsafe { &mut *(buf as *mut [u8; 512]).cast() }
}

/// `/proc/<pid>` as a trace line shows a target process.
pub(super) fn shown(pid: u32, buf: &mut [u8; 40]) -> &[u8] {
    proc_path(pid, b"", buf).to_bytes()
}

/// Where process `pid` stands for the calling process; `supervisor`: the
/// `fsguard run` whose descendants are all guarded, if any.
pub(super) fn reach(pid: c_int, supervisor: Option<ProcessId>) -> Reach {
    let me = rustix::process::getpid().as_raw_nonzero().get() as u32;
    let Ok(pid) = u32::try_from(pid) else {
        return Reach::Gone;
    };
    if pid == 0 {
        return Reach::Gone;
    }
    if pid == me {
        return Reach::Own;
    }
    let mut path = [0u8; 40];
    let path = proc_path(pid, b"", &mut path);
    let dir = match rustix::fs::openat(
        CWD,
        path,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(d) => d,
        Err(Errno::NOENT | Errno::SRCH) => return Reach::Gone,
        // No /proc, out of fds, hidden: not known to be inside.
        Err(_) => return Reach::Outside(pid, None),
    };
    let pinned = Pinned { dir };
    let mut buf = [0u8; 512];
    let stat = match read_entry(&pinned.dir, c"stat", &mut buf) {
        Ok(line) => process::parse_stat(line),
        Err(Errno::NOENT | Errno::SRCH) => return Reach::Gone,
        Err(_) => None,
    };
    let Some(stat) = stat else {
        return Reach::Outside(pid, Some(pinned));
    };
    if process::descends(stat, me, supervisor, stat_of) {
        return Reach::Inside(pinned);
    }
    // A thread of the caller's own: its stat names the caller's parent.
    let mut status = [0u8; 512];
    if read_entry(&pinned.dir, c"status", &mut status)
        .ok()
        .and_then(process::status_tgid)
        == Some(me)
    {
        return Reach::Inside(pinned);
    }
    Reach::Outside(pid, Some(pinned))
}
