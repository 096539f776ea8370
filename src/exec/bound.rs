//! The exec of the object checked (Linux). The program is opened once
//! (`O_PATH`), judged through that descriptor (the policy by its path as
//! the kernel names it, the `unguarded_exec` setting by its own bytes), and
//! executed through it: `execveat(fd, "", AT_EMPTY_PATH)`. A program renamed
//! or a symlink retargeted after the open changes nothing the exec runs.
//!
//! A `#!` script is not handed to the kernel's `binfmt_script`: through a
//! descriptor it would find the script as `/dev/fd/N` (its `$0`), or fail
//! with `ENOENT` when the descriptor is close-on-exec. The library does its
//! work instead, as `fs/binfmt_script.c` does it: the `#!` line is read from
//! the script's descriptor, the interpreter opened and judged the same way
//! (up to the kernel's five), and the last one executed through its
//! descriptor with the kernel's argv: each interpreter and its optional
//! argument, the script's path as the caller gave it, the caller's
//! arguments after the first.
//!
//! The descriptors are numbers another thread could close and reuse for
//! another object between the check and the exec: the thread's descriptor
//! table is made its own once the program is open ([`own_table`]:
//! `unshare(CLONE_FILES)`, which execve does anyway when it succeeds).

use std::ffi::{c_char, c_int, CStr};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};

use fsguard_policy::program::{shebang, SHEBANG_HEAD};
use fsguard_policy::Access;
use rustix::fs::{AtFlags, FileType, Mode, OFlags, CWD};
use rustix::io::Errno;

use super::env::{entries, with_env_named};
use super::Argv;
use crate::guard::{self, set_errno, CArg, Target};
use crate::real::real;
use crate::resolve::{Follow, Spill};

type ExecveatFn = unsafe extern "C" fn(c_int, *const c_char, Argv, Argv, c_int) -> c_int;

/// How many `#!` scripts may run one another (`exec_binprm` in
/// `fs/exec.c` gives up after five interpreters): more fail with `ELOOP`,
/// as bare.
const LEVELS: usize = 5;

/// Room for the interpreters' names and arguments, NUL-terminated.
const STRINGS: usize = LEVELS * 2 * (SHEBANG_HEAD + 1);

/// Stack room for a script's argv; a longer one moves to a mapping.
const ARGV_INLINE: usize = 32 * std::mem::size_of::<*const c_char>();

/// How the kernel names the program it runs (`bprm->filename`): what a
/// `#!` interpreter is handed as its script, and whose last component is
/// the new process's name (`comm`).
#[derive(Clone, Copy)]
pub(super) enum Name<'a> {
    /// The path as the caller gave it (execve; execveat from `AT_FDCWD` or
    /// with an absolute path).
    Path(&'a CStr),
    /// `/dev/fd/N/path` (execveat relative to a dirfd) or `/dev/fd/N`
    /// (fexecve, `AT_EMPTY_PATH`).
    DevFd(c_int, Option<&'a CStr>),
}

/// One program of the chain: what is executed, and a descriptor to read it.
struct Object {
    /// `O_PATH`, or the caller's own fd (fexecve): executed.
    exec: Exec,
    /// Read-only, opened through `exec`'s `/proc/self/fd` link (the object
    /// itself, not a path).
    read: OwnedFd,
}

enum Exec {
    Own(OwnedFd),
    Caller(c_int),
}

impl Object {
    fn exec_fd(&self) -> c_int {
        match &self.exec {
            Exec::Own(fd) => fd.as_raw_fd(),
            Exec::Caller(fd) => *fd,
        }
    }
}

/// A call that failed with `e`: -1 and errno.
fn fail(e: c_int) -> c_int {
    set_errno(e);
    -1
}

/// Opens what `dirfd` and `path` name as exec would find it (`follow`:
/// `Yes`, `NoFollow` for `AT_SYMLINK_NOFOLLOW`, `Fd` for the dirfd
/// itself). A non-regular file is `EACCES`, as exec answers.
fn open_object(dirfd: c_int, path: CArg<'_>, follow: Follow) -> Result<Object, Errno> {
    let exec = if follow == Follow::Fd {
        if dirfd < 0 {
            return Err(Errno::BADF);
        }
        own_table()?;
        Exec::Caller(dirfd)
    } else {
        let p = path.get().ok_or(Errno::FAULT)?;
        let extra = if follow == Follow::NoFollow {
            OFlags::NOFOLLOW
        } else {
            OFlags::empty()
        };
        let dir = match dirfd {
            libc::AT_FDCWD => CWD,
            d if d < 0 => return Err(Errno::BADF),
            // SAFETY: only passed to openat, which checks it.
            d => unsafe { BorrowedFd::borrow_raw(d) },
        };
        let fd = crate::sys::open_ref(dir, p, extra)?;
        own_table()?;
        Exec::Own(fd)
    };
    let raw = match &exec {
        Exec::Own(fd) => fd.as_raw_fd(),
        Exec::Caller(fd) => *fd,
    };
    // SAFETY: our own fd, or the caller's checked by fstat (EBADF).
    let st = rustix::fs::fstat(unsafe { BorrowedFd::borrow_raw(raw) })?;
    match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => {}
        // AT_SYMLINK_NOFOLLOW on a symlink: exec's answer.
        FileType::Symlink => return Err(Errno::LOOP),
        _ => return Err(Errno::ACCESS),
    }
    let mut link = [0u8; crate::sys::FD_LINK_MAX + 1];
    let n = crate::sys::fd_link(raw, &mut link);
    let s = CStr::from_bytes_with_nul(&link[..=n]).map_err(|_| Errno::INVAL)?;
    let read = rustix::fs::openat(CWD, s, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())?;
    Ok(Object { exec, read })
}

/// Makes this thread's descriptor table its own: from here no other
/// thread can close a number the exec holds and put another file there.
/// Done once the program is open (an exec that fails to find its program,
/// as `execvp` does along `PATH`, leaves the table shared); whatever the
/// number held then, every check and the exec see that same object.
fn own_table() -> Result<(), Errno> {
    // SAFETY: no descriptor the library hands another thread is opened
    // after this (the library's own are reopened where they are missing),
    // and a successful exec unshares the table anyway.
    unsafe { rustix::thread::unshare_unsafe(rustix::thread::UnshareFlags::FILES) }
}

/// The policy's check of the object open at `fd` (an `exec` access, by
/// the path the kernel gives the descriptor).
fn check_fd(call: &'static str, fd: c_int) -> Result<(), c_int> {
    guard::check(
        call,
        &[Target {
            access: Some(Access::Exec),
            follow: Follow::Fd,
            dirfd: fd,
            path: CArg::NULL,
            moves: false,
            handle: false,
        }],
    )
}

/// What the kernel checks of a script before it reads its `#!` line: that
/// this process may execute it (`X_OK`, effective ids) on a mount that
/// allows it.
fn may_exec_script(o: &Object) -> Result<(), c_int> {
    // Through the descriptor's `/proc/self/fd` link (the object itself;
    // the table is this thread's own): faccessat2 takes `AT_EMPTY_PATH`,
    // rustix's accessat does not.
    let mut link = [0u8; crate::sys::FD_LINK_MAX + 1];
    let n = crate::sys::fd_link(o.exec_fd(), &mut link);
    let s = CStr::from_bytes_with_nul(&link[..=n]).map_err(|_| libc::EINVAL)?;
    rustix::fs::accessat(CWD, s, rustix::fs::Access::EXEC_OK, AtFlags::EACCESS)
        .map_err(|e| e.raw_os_error())?;
    let vfs = rustix::fs::fstatvfs(o.read.as_fd()).map_err(|e| e.raw_os_error())?;
    if vfs.f_flag.contains(rustix::fs::StatVfsMountFlags::NOEXEC) {
        return Err(libc::EACCES);
    }
    Ok(())
}

/// The interpreters of a script chain: their names and arguments as
/// C strings in one buffer, by offset, deepest last.
struct Chain {
    strings: Spill<0>,
    used: usize,
    /// Offsets of each level's name and argument.
    levels: [(usize, Option<usize>); LEVELS],
    depth: usize,
}

impl Chain {
    fn push_str(&mut self, s: &[u8]) -> Result<usize, c_int> {
        if self.strings.capacity() == 0 {
            self.strings.reserve(STRINGS, 0).map_err(|_| libc::ENOMEM)?;
        }
        let at = self.used;
        let buf = self.strings.buf();
        if at + s.len() + 1 > buf.len() {
            return Err(libc::E2BIG);
        }
        for (o, b) in buf[at..].iter_mut().zip(s.iter().copied().chain([0])) {
            o.write(b);
        }
        self.used += s.len() + 1;
        Ok(at)
    }

    fn ptr(&self, at: usize) -> *const c_char {
        // SAFETY: `at` is an offset push_str returned, inside the buffer.
        unsafe { self.strings.as_ptr().add(at) }.cast()
    }
}

/// Whether `fd` is closed on exec (else the kernel could hand a script to
/// its interpreter as `/dev/fd/N`).
fn cloexec(fd: c_int) -> bool {
    // SAFETY: only queried; EBADF reads as closed on exec.
    rustix::io::fcntl_getfd(unsafe { BorrowedFd::borrow_raw(fd) })
        .map_or(true, |f| f.contains(rustix::io::FdFlags::CLOEXEC))
}

/// The exec of what `dirfd`, `path` and `follow` name, through the object
/// checked. `fallback` is the row's check by path, run when the program
/// cannot be opened (for its trace line: a program the policy refuses, or
/// one it cannot read); else the open's errno is the answer, as bare.
///
/// # Safety
/// `argv` and `envp` as execve(2) requires them (NULL-terminated arrays of
/// C strings).
#[allow(clippy::too_many_arguments)] // execveat's five, the call, its name and fallback
pub(super) unsafe fn exec_bound(
    call: &'static str,
    fallback: impl FnOnce() -> Result<(), c_int>,
    dirfd: c_int,
    path: CArg<'_>,
    follow: Follow,
    name: Name<'_>,
    argv: Argv,
    envp: Argv,
) -> c_int {
    let first = match open_object(dirfd, path, follow) {
        Ok(o) => o,
        // A symlink under AT_SYMLINK_NOFOLLOW: nothing to judge.
        Err(Errno::LOOP) if follow == Follow::NoFollow => return fail(libc::ELOOP),
        Err(e) => return fail(fallback().err().unwrap_or(e.raw_os_error())),
    };
    let mut chain = Chain {
        strings: Spill::new(),
        used: 0,
        levels: [(0, None); LEVELS],
        depth: 0,
    };
    let last = match walk(call, first, name, &mut chain) {
        Ok(o) => o,
        Err(e) => return fail(e),
    };
    let shown = path.get().map_or(&b""[..], CStr::to_bytes);
    // SAFETY: forwarded.
    unsafe { exec_object(call, shown, &last, &chain, name, argv, envp) }
}

/// Judges `first` and, while it is a script, each interpreter: the object
/// to execute, with `chain` holding the interpreters' names and arguments.
fn walk(
    call: &'static str,
    first: Object,
    name: Name<'_>,
    chain: &mut Chain,
) -> Result<Object, c_int> {
    let mut cur = first;
    loop {
        check_fd(call, cur.exec_fd())?;
        let mut head = [0u8; SHEBANG_HEAD];
        let n = rustix::io::pread(&cur.read, &mut head, 0).unwrap_or(0);
        let Some(line) = shebang(&head[..n]) else {
            super::check::unguarded_fd(call, cur.read.as_fd())?;
            return Ok(cur);
        };
        may_exec_script(&cur)?;
        let line = line.map_err(|()| libc::ENOEXEC)?;
        if chain.depth == LEVELS {
            return Err(libc::ELOOP);
        }
        if chain.depth == 0 {
            if let Name::DevFd(fd, _) = name {
                // BINPRM_FLAGS_PATH_INACCESSIBLE: the interpreter could not
                // open the script by the name it would be given.
                if cloexec(fd) {
                    return Err(libc::ENOENT);
                }
            }
        }
        let interp = &head[line.name.clone()];
        let at_name = chain.push_str(interp)?;
        let at_arg = match line.arg {
            Some(r) => Some(chain.push_str(&head[r])?),
            None => None,
        };
        chain.levels[chain.depth] = (at_name, at_arg);
        chain.depth += 1;
        // SAFETY: a C string push_str wrote.
        let c = unsafe { CStr::from_ptr(chain.ptr(at_name)) };
        cur = match open_object(libc::AT_FDCWD, CArg::of(c), Follow::Yes) {
            Ok(o) => o,
            Err(e) => {
                // Refused by the policy (its trace line), else as bare.
                guard::check(
                    call,
                    &[Target {
                        access: Some(Access::Exec),
                        follow: Follow::Yes,
                        dirfd: libc::AT_FDCWD,
                        path: CArg::of(c),
                        moves: false,
                        handle: false,
                    }],
                )?;
                return Err(e.raw_os_error());
            }
        };
    }
}

/// `/dev/fd/N[/path]\0` into `buf`: the name the kernel gives a script
/// run relative to a descriptor.
fn dev_fd_name<'a>(fd: c_int, rel: Option<&CStr>, buf: &'a mut Spill<64>) -> Option<&'a CStr> {
    let mut digits = [0u8; 10];
    let i = crate::resolve::decimal(fd as u32, &mut digits);
    let rel = rel.map_or(&b""[..], CStr::to_bytes);
    let n = b"/dev/fd/".len() + (10 - i) + if rel.is_empty() { 0 } else { 1 + rel.len() };
    buf.reserve(n + 1, 0).ok()?;
    let parts: [&[u8]; 4] = [
        b"/dev/fd/",
        &digits[i..],
        if rel.is_empty() { b"" } else { b"/" },
        rel,
    ];
    let bytes = parts.into_iter().flatten().copied().chain([0]);
    for (o, b) in buf.buf().iter_mut().zip(bytes) {
        o.write(b);
    }
    // SAFETY: the first n + 1 bytes were written just above.
    CStr::from_bytes_with_nul(unsafe { buf.bytes(n + 1) }).ok()
}

/// The last component of `p`, as the kernel names a process (`comm`,
/// 15 bytes).
fn basename(p: &[u8]) -> &[u8] {
    let b = p.rsplit(|&c| c == b'/').next().unwrap_or(p);
    &b[..b.len().min(15)]
}

/// The exec through `o`, with the interpreters of `chain` before the
/// script's name and the caller's arguments.
///
/// # Safety
/// As [`exec_bound`].
#[inline(never)]
unsafe fn exec_object(
    call: &'static str,
    shown: &[u8],
    o: &Object,
    chain: &Chain,
    name: Name<'_>,
    argv: Argv,
    envp: Argv,
) -> c_int {
    let Some(real) = real!("execveat", ExecveatFn) else {
        return fail(libc::ENOSYS);
    };
    let mut dev = Spill::<64>::new();
    let filename: &CStr = match name {
        Name::Path(p) => p,
        Name::DevFd(fd, rel) => match dev_fd_name(fd, rel, &mut dev) {
            Some(c) => c,
            None => return fail(libc::ENOMEM),
        },
    };
    // The process's name as bare: the last component of the name the
    // kernel was given (fexecve's is the file's own, as here).
    let comm = match name {
        Name::DevFd(_, None) => None,
        _ => Some(basename(filename.to_bytes())),
    };
    let mut args = Spill::<ARGV_INLINE>::new();
    let argv = if chain.depth == 0 {
        argv
    } else {
        match script_argv(chain, filename, argv, &mut args) {
            Some(a) => a,
            None => return fail(libc::E2BIG),
        }
    };
    let fd = o.exec_fd();
    // SAFETY: the real call on the object checked, with our envp.
    unsafe {
        with_env_named(call, shown, comm, envp, |env| {
            real(fd, c"".as_ptr(), argv, env, libc::AT_EMPTY_PATH)
        })
    }
    .unwrap_or_else(fail)
}

/// The argv the kernel gives a script's interpreter: the deepest
/// interpreter and its argument first, each shallower one's after it, the
/// script's name, then the caller's arguments after the first. Built in
/// `buf` (on the stack while it fits, else in a mapping); `None` when no
/// room can be made.
fn script_argv(
    chain: &Chain,
    filename: &CStr,
    argv: Argv,
    buf: &mut Spill<ARGV_INLINE>,
) -> Option<Argv> {
    // SAFETY: the caller's NULL-terminated argv.
    let rest = unsafe { entries(argv) }.skip(1);
    let count = 2 * chain.depth + 1 + rest.count() + 1;
    let align = std::mem::align_of::<*const c_char>();
    buf.reserve(count * std::mem::size_of::<*const c_char>() + align, 0)
        .ok()?;
    let b: &mut [MaybeUninit<u8>] = buf.buf();
    let skip = b.as_mut_ptr().align_offset(align);
    // SAFETY: `skip + count` pointers fit (one alignment's slack reserved
    // above), the start is aligned; each slot is written below before the
    // array is read, the last a NULL.
    let slots = unsafe {
        std::slice::from_raw_parts_mut(b.as_mut_ptr().add(skip).cast::<*const c_char>(), count)
    };
    let mut n = 0;
    for &(at_name, at_arg) in chain.levels[..chain.depth].iter().rev() {
        slots[n] = chain.ptr(at_name);
        n += 1;
        if let Some(a) = at_arg {
            slots[n] = chain.ptr(a);
            n += 1;
        }
    }
    slots[n] = filename.as_ptr();
    n += 1;
    // SAFETY: as above.
    for a in unsafe { entries(argv) }.skip(1) {
        if n + 1 >= count {
            break;
        }
        slots[n] = a;
        n += 1;
    }
    slots[n] = std::ptr::null();
    Some(slots.as_ptr())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_a_process_as_the_kernel() {
        assert_eq!(basename(b"/usr/bin/python3"), b"python3");
        assert_eq!(basename(b"tool"), b"tool");
        assert_eq!(basename(b"./a-very-long-program-name"), b"a-very-long-pro");
    }

    #[test]
    fn names_a_script_under_a_descriptor() {
        let mut buf = Spill::<64>::new();
        assert_eq!(dev_fd_name(7, None, &mut buf).unwrap(), c"/dev/fd/7");
        assert_eq!(
            dev_fd_name(12, Some(c"s/run.sh"), &mut buf).unwrap(),
            c"/dev/fd/12/s/run.sh"
        );
    }
}
