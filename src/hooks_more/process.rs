//! Calls that reach into another process: `ptrace`, `process_vm_readv`,
//! `process_vm_writev`, `pidfd_getfd` and `kcmp` (the last through
//! `syscall(2)` only: glibc has no wrapper). A process outside the guarded
//! tree is refused (`rule=process`): its memory, its registers and its
//! descriptors are as good as its files, and reading an agent's key out of
//! its memory needs no path. Processes inside the tree stay reachable:
//! debuggers and test runners attach to their own children. See [`tree`]
//! for what the tree is and how the target is held while it is judged.
//!
//! The trace line names the target as `path=/proc/<pid>` and its
//! executable as `dest=`.
//!
//! `ptrace` is checked at an attach and at each request on the tracee's
//! memory or registers (see [`ptrace_checked`]); `pidfd_open` is not (a
//! pidfd signals and waits, as `kill` and `waitid` do; `pidfd_getfd` on it
//! is checked).

use std::ffi::{c_int, c_long, c_uint, c_ulong, c_void};
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::panic::{catch_unwind, AssertUnwindSafe};

use fsguard_policy::{Access, Rule};
use libc::{iovec, pid_t, ssize_t};

use super::tree::{self, Pinned, Reach};
use crate::guard::{self, errno, set_errno, Guard};
use crate::table::{chk, row, CheckInfo, HookInfo};

const PTRACE_ATTACH: c_int = 16;
const PTRACE_DETACH: c_int = 17;
const PTRACE_SEIZE: c_int = 0x4206;
const PTRACE_INTERRUPT: c_int = 0x4207;
const WALL: u32 = 0x4000_0000;

/// Runs `refuse` (which decides, and traces a refusal) once the guard is
/// loaded; a panic in it is an internal error, refused. The caller's errno
/// is kept.
pub(super) fn checked(
    call: &'static str,
    access: Access,
    refuse: impl FnOnce(&'static Guard) -> Result<(), c_int>,
) -> Result<(), c_int> {
    let Some(g) = guard::get() else {
        return Ok(());
    };
    let saved = errno();
    let r = catch_unwind(AssertUnwindSafe(|| refuse(g)))
        .unwrap_or_else(|_| Err(g.internal_error(call, access, b"?", None)));
    set_errno(saved);
    r
}

/// Whether `call` may reach process `pid`: `Ok` with the process held when
/// it is inside the tree (check [`Pinned::alive`] after acting by pid),
/// `Ok(None)` for the caller itself (or a refusal audit mode lets pass),
/// else the errno: ESRCH for no such process, as the kernel answers.
fn target(call: &'static str, access: Access, pid: c_int) -> Result<Option<Pinned>, c_int> {
    let mut pinned = None;
    checked(call, access, |g| {
        match tree::reach(pid, g.policy.settings().supervisor) {
            Reach::Own => Ok(()),
            Reach::Inside(p) => {
                pinned = Some(p);
                Ok(())
            }
            Reach::Gone => Err(libc::ESRCH),
            Reach::Outside(pid, p) => refuse_process(g, call, access, pid, p.as_ref()),
        }
    })?;
    Ok(pinned)
}

/// The refusal of a process outside the tree: `path=/proc/<pid>`,
/// `dest=` its executable.
fn refuse_process(
    g: &Guard,
    call: &'static str,
    access: Access,
    pid: u32,
    p: Option<&Pinned>,
) -> Result<(), c_int> {
    let mut path = [0u8; 40];
    let mut exe = [0u8; 512];
    let exe = p.map_or(&b"?"[..], |p| p.exe(&mut exe));
    g.refuse_dest(
        call,
        access,
        tree::shown(pid, &mut path),
        Some(exe),
        Rule::Process,
    )
}

/// A `/proc/<pid>/mem` or `/proc/<pid>/environ` file reached by path
/// ([`fsguard_policy::process::memory_file`], `path` resolved): another
/// process's memory or environment, as `process_vm_readv` and
/// `process_vm_writev` reach them, so refused for a process outside the
/// tree (`rule=process`), whatever the access and the policy.
pub(crate) fn memory_file(
    g: &Guard,
    call: &'static str,
    access: Access,
    path: &[u8],
) -> Result<(), c_int> {
    let Some(pid) = fsguard_policy::process::memory_file(path) else {
        return Ok(());
    };
    match tree::reach(pid as c_int, g.policy.settings().supervisor) {
        Reach::Own | Reach::Inside(_) => Ok(()),
        // Gone since it was resolved: its file answers as much.
        Reach::Gone => Err(libc::ESRCH),
        Reach::Outside(pid, p) => refuse_process(g, call, access, pid, p.as_ref()),
    }
}

type PtraceFn = unsafe extern "C" fn(c_int, ...) -> c_long;

/// libc's ptrace with four arguments (it reads them whatever the request).
///
/// # Safety
/// As for `ptrace(2)`.
unsafe fn real_ptrace(request: c_int, pid: pid_t, addr: *mut c_void, data: *mut c_void) -> c_long {
    hooks!(@real "ptrace", PtraceFn, -1, (request, pid, addr, data))
}

/// Whether a ptrace request is checked: an attach, and every request
/// that reads or writes the tracee's memory or registers (`PEEK*`,
/// `POKE*`, `GETREGS`, `SETREGS`, `GETFPREGS`, `SETFPREGS`, `GETREGSET`,
/// `SETREGSET`), judged again whatever made the caller the tracer. The
/// rest (resuming, options, signals, `PTRACE_GET_SYSCALL_INFO`,
/// `PTRACE_DETACH`) only a tracer may make, which a checked attach made
/// it; `PTRACE_TRACEME` offers the caller to its own parent. A debugger
/// makes those by the thousand: a check each made `strace -f` three times
/// slower.
fn ptrace_checked(request: c_int) -> bool {
    matches!(
        request,
        PTRACE_ATTACH | PTRACE_SEIZE | 1..=6 | 12..=15 | 0x4204 | 0x4205
    )
}

fn attaches(request: c_int) -> bool {
    matches!(request, PTRACE_ATTACH | PTRACE_SEIZE)
}

/// Called by the variadic `ptrace` in shim/shim.c with its three optional
/// arguments.
///
/// # Safety
/// As for `ptrace(2)`.
#[no_mangle]
pub unsafe extern "C" fn fsguard_ptrace(
    request: c_int,
    pid: pid_t,
    addr: *mut c_void,
    data: *mut c_void,
) -> c_long {
    let pinned = if ptrace_checked(request) {
        match target("ptrace", Access::Write, pid) {
            Ok(p) => p,
            Err(e) => {
                set_errno(e);
                return -1;
            }
        }
    } else {
        None
    };
    // SAFETY: the caller's arguments.
    let r = unsafe { real_ptrace(request, pid, addr, data) };
    if attaches(request) && r == 0 && pinned.as_ref().is_some_and(|p| !p.alive()) {
        // The process judged is gone: the pid may be another's, attached
        // just now. Let it go again.
        undo_attach(request, pid);
        set_errno(libc::ESRCH);
        return -1;
    }
    r
}

/// Detaches from `pid`, attached by `request` a moment ago: waits for the
/// stop the attach brings (an interrupt for `PTRACE_SEIZE`), then lets it
/// go without a signal.
fn undo_attach(request: c_int, pid: pid_t) {
    let null = std::ptr::null_mut();
    if request == PTRACE_SEIZE {
        // SAFETY: a tracee of this thread, interrupted.
        unsafe { real_ptrace(PTRACE_INTERRUPT, pid, null, null) };
    }
    let Some(p) = rustix::process::Pid::from_raw(pid) else {
        return;
    };
    let opts = rustix::process::WaitOptions::from_bits_retain(WALL);
    loop {
        match rustix::process::waitpid(Some(p), opts) {
            Ok(Some((_, st))) if st.stopped() => break,
            Err(rustix::io::Errno::INTR) => continue,
            _ => return,
        }
    }
    // SAFETY: a stopped tracee of this thread.
    unsafe { real_ptrace(PTRACE_DETACH, pid, null, null) };
}

type VmFn =
    unsafe extern "C" fn(pid_t, *const iovec, c_ulong, *const iovec, c_ulong, c_ulong) -> ssize_t;

/// After a read from a process whose pid may have gone to another: the
/// bytes read are cleared, and the call fails as it would have a moment
/// later.
///
/// # Safety
/// `local` must be the caller's `count` iovecs, `n` bytes written to them.
unsafe fn forget_read(local: *const iovec, count: c_ulong, n: usize) {
    let mut left = n;
    for i in 0..count as usize {
        if left == 0 || local.is_null() {
            break;
        }
        // SAFETY: one of the caller's iovecs.
        let v = unsafe { *local.add(i) };
        let k = v.iov_len.min(left);
        // SAFETY: the kernel just wrote these k bytes there.
        unsafe { std::ptr::write_bytes(v.iov_base.cast::<u8>(), 0, k) };
        left -= k;
    }
}

/// process_vm_readv: refused for a process outside the tree.
///
/// # Safety
/// As for `process_vm_readv(2)`.
#[no_mangle]
pub unsafe extern "C" fn process_vm_readv(
    pid: pid_t,
    local: *const iovec,
    liovcnt: c_ulong,
    remote: *const iovec,
    riovcnt: c_ulong,
    flags: c_ulong,
) -> ssize_t {
    let pinned = match target("process_vm_readv", Access::Read, pid) {
        Ok(p) => p,
        Err(e) => {
            set_errno(e);
            return -1;
        }
    };
    let r =
        hooks!(@real "process_vm_readv", VmFn, -1, (pid, local, liovcnt, remote, riovcnt, flags));
    if pinned.as_ref().is_some_and(|p| !p.alive()) {
        // SAFETY: the caller's iovecs, `r` bytes read into them.
        unsafe { forget_read(local, liovcnt, r.max(0) as usize) };
        set_errno(libc::ESRCH);
        return -1;
    }
    r
}

/// process_vm_writev: refused for a process outside the tree.
///
/// # Safety
/// As for `process_vm_writev(2)`.
#[no_mangle]
pub unsafe extern "C" fn process_vm_writev(
    pid: pid_t,
    local: *const iovec,
    liovcnt: c_ulong,
    remote: *const iovec,
    riovcnt: c_ulong,
    flags: c_ulong,
) -> ssize_t {
    let pinned = match target("process_vm_writev", Access::Write, pid) {
        Ok(p) => p,
        Err(e) => {
            set_errno(e);
            return -1;
        }
    };
    let r =
        hooks!(@real "process_vm_writev", VmFn, -1, (pid, local, liovcnt, remote, riovcnt, flags));
    if pinned.as_ref().is_some_and(|p| !p.alive()) {
        set_errno(libc::ESRCH);
        return -1;
    }
    r
}

/// The pid a pidfd stands for, from its `/proc/self/fdinfo` entry: `None`
/// when the fd is no pidfd (the kernel answers EBADF), `Some(-1)` when its
/// process is gone (ESRCH), `Some(0)` when it is in a pid namespace this
/// one cannot see. `Err` when `/proc` cannot say.
fn pidfd_pid(pidfd: c_int) -> Result<Option<i64>, ()> {
    let Ok(fd) = u32::try_from(pidfd) else {
        return Ok(None);
    };
    let mut path = [0u8; 48];
    let mut digits = [0u8; 10];
    let i = crate::resolve::decimal(fd, &mut digits);
    let mut n = 0;
    for part in [&b"/proc/self/fdinfo/"[..], &digits[i..]] {
        path[n..n + part.len()].copy_from_slice(part);
        n += part.len();
    }
    let path = std::ffi::CStr::from_bytes_with_nul(&path[..=n]).map_err(drop)?;
    let mut buf = [0u8; 512];
    let text = match tree::read_path(path, &mut buf) {
        Ok(t) => t,
        Err(rustix::io::Errno::NOENT | rustix::io::Errno::BADF) => return Ok(None),
        Err(_) => return Err(()),
    };
    Ok(text.split(|&b| b == b'\n').find_map(|l| {
        let v = l.strip_prefix(b"Pid:")?;
        std::str::from_utf8(v).ok()?.trim().parse::<i64>().ok()
    }))
}

/// pidfd_getfd: refused when the pidfd's process is outside the tree. The
/// pidfd is judged and used as the library's own duplicate: another
/// thread cannot put another pidfd at its number in between, and the
/// process judged is the one the fd is taken from (or, gone by then, none).
///
/// # Safety
/// As for `pidfd_getfd(2)`.
#[no_mangle]
pub unsafe extern "C" fn pidfd_getfd(pidfd: c_int, targetfd: c_int, flags: c_uint) -> c_int {
    let held = match check_pidfd(pidfd) {
        Ok(h) => h,
        Err(e) => {
            set_errno(e);
            return -1;
        }
    };
    let fd = held.as_ref().map_or(pidfd, AsRawFd::as_raw_fd);
    let r = hooks!(@real "pidfd_getfd", unsafe extern "C" fn(c_int, c_int, c_uint) -> c_int, -1, (fd, targetfd, flags));
    guard::release(r, held)
}

/// The caller's pidfd, duplicated and judged: `Some(dup)` to act through,
/// `None` to pass the caller's own (no guard loaded); else the errno.
fn check_pidfd(pidfd: c_int) -> Result<Option<OwnedFd>, c_int> {
    const CALL: &str = "pidfd_getfd";
    let mut held = None;
    checked(CALL, Access::Read, |g| {
        if pidfd < 0 {
            return Err(libc::EBADF);
        }
        // SAFETY: only duplicated; a closed fd answers EBADF.
        let b = unsafe { BorrowedFd::borrow_raw(pidfd) };
        let dup = rustix::io::fcntl_dupfd_cloexec(b, crate::handoff::HIGH_FD)
            .or_else(|_| rustix::io::fcntl_dupfd_cloexec(b, 0))
            .map_err(|e| e.raw_os_error())?;
        let fd = dup.as_raw_fd();
        held = Some(dup);
        let pid = match pidfd_pid(fd) {
            // No pidfd, or its process gone: the kernel says so.
            Ok(None | Some(-1)) => return Ok(()),
            Ok(Some(pid)) if pid > 0 && pid <= i64::from(i32::MAX) => pid,
            // In a pid namespace this one cannot see, or /proc is mute.
            _ => return refuse_process(g, CALL, Access::Read, 0, None),
        };
        match tree::reach(pid as c_int, g.policy.settings().supervisor) {
            Reach::Own | Reach::Gone => Ok(()),
            // The pidfd's process still has the pid: it is the one judged
            // (or it is gone, and the kernel says so).
            Reach::Inside(_) if matches!(pidfd_pid(fd), Ok(Some(p)) if p == pid || p == -1) => {
                Ok(())
            }
            Reach::Inside(p) => refuse_process(g, CALL, Access::Read, pid as u32, Some(&p)),
            Reach::Outside(pid, p) => refuse_process(g, CALL, Access::Read, pid, p.as_ref()),
        }
    })?;
    Ok(held)
}

/// The system calls of this module through `syscall(2)`.
pub(crate) fn handles(nr: c_long) -> bool {
    matches!(
        nr,
        libc::SYS_ptrace
            | libc::SYS_process_vm_readv
            | libc::SYS_process_vm_writev
            | libc::SYS_pidfd_getfd
            | libc::SYS_kcmp
    )
}

/// `syscall(nr, …)` for a system call [`handles`] names: checked as its
/// libc function, then the real `syscall` with the caller's arguments.
///
/// # Safety
/// As for `syscall(2)`: the arguments valid for system call `nr`.
pub(crate) unsafe fn syscall(nr: c_long, a: [c_long; 6]) -> c_long {
    let fail = |e| {
        set_errno(e);
        -1
    };
    let real = |a: [c_long; 6]| {
        // SAFETY: this function's contract: the caller's arguments (a
        // pidfd replaced by the library's duplicate of it).
        unsafe { crate::syscall::real_syscall(nr, a) }
    };
    match nr {
        libc::SYS_ptrace => {
            let (request, pid) = (a[0] as c_int, a[1] as pid_t);
            let pinned = if ptrace_checked(request) {
                match target("ptrace", Access::Write, pid) {
                    Ok(p) => p,
                    Err(e) => return fail(e),
                }
            } else {
                None
            };
            let r = real(a);
            if attaches(request) && r == 0 && pinned.as_ref().is_some_and(|p| !p.alive()) {
                undo_attach(request, pid);
                return fail(libc::ESRCH);
            }
            r
        }
        libc::SYS_process_vm_readv | libc::SYS_process_vm_writev => {
            let read = nr == libc::SYS_process_vm_readv;
            let (call, access) = if read {
                ("process_vm_readv", Access::Read)
            } else {
                ("process_vm_writev", Access::Write)
            };
            let pinned = match target(call, access, a[0] as pid_t) {
                Ok(p) => p,
                Err(e) => return fail(e),
            };
            let r = real(a);
            if pinned.as_ref().is_some_and(|p| !p.alive()) {
                if read {
                    // SAFETY: the caller's iovecs, `r` bytes read into them.
                    unsafe {
                        forget_read(a[1] as *const iovec, a[2] as c_ulong, r.max(0) as usize)
                    };
                }
                return fail(libc::ESRCH);
            }
            r
        }
        libc::SYS_pidfd_getfd => match check_pidfd(a[0] as c_int) {
            Ok(held) => {
                let mut a = a;
                if let Some(fd) = &held {
                    a[0] = c_long::from(fd.as_raw_fd());
                }
                let r = real(a);
                guard::release(r, held)
            }
            Err(e) => fail(e),
        },
        libc::SYS_kcmp => {
            // Two processes compared: each must be reachable; the answer
            // is kept only if both lived through the call.
            let first = match target("kcmp", Access::Read, a[0] as pid_t) {
                Ok(p) => p,
                Err(e) => return fail(e),
            };
            let second = match target("kcmp", Access::Read, a[1] as pid_t) {
                Ok(p) => p,
                Err(e) => return fail(e),
            };
            let r = real(a);
            if [first, second].iter().flatten().any(|p| !p.alive()) {
                return fail(libc::ESRCH);
            }
            r
        }
        _ => real(a),
    }
}

const OUTSIDE: &str = "(`pid` outside the guarded tree)";

const PROCESS: &[CheckInfo] = &[chk("REFUSE process", "-", "-", OUTSIDE)];

const PTRACE: &[CheckInfo] = &[chk(
    "REFUSE process",
    "-",
    "-",
    "(`pid` outside the guarded tree: an attach or seize, a `PEEK*`, `POKE*`, `GET*REGS*` or `SET*REGS*` request)",
)];

const PIDFD: &[CheckInfo] = &[chk(
    "REFUSE process",
    "-",
    "-",
    "(the pidfd's process outside the guarded tree)",
)];

/// The hooks above, as rows (the shim's variadic `ptrace` calls
/// [`fsguard_ptrace`]).
pub static PROCESS_TABLE: &[HookInfo] = &[
    row("ptrace", "ptrace", PTRACE),
    row("process_vm_readv", "process_vm_readv", PROCESS),
    row("process_vm_writev", "process_vm_writev", PROCESS),
    row("pidfd_getfd", "pidfd_getfd", PIDFD),
    row("syscall(SYS_ptrace)", "ptrace", PTRACE),
    row("syscall(SYS_process_vm_readv)", "process_vm_readv", PROCESS),
    row(
        "syscall(SYS_process_vm_writev)",
        "process_vm_writev",
        PROCESS,
    ),
    row("syscall(SYS_pidfd_getfd)", "pidfd_getfd", PIDFD),
    row(
        "syscall(SYS_kcmp)",
        "kcmp",
        &[chk(
            "REFUSE process",
            "-",
            "-",
            "(`pid1` or `pid2` outside the guarded tree)",
        )],
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptrace_requests_checked() {
        let unchecked = [
            libc::PTRACE_TRACEME,
            libc::PTRACE_DETACH,
            libc::PTRACE_CONT,
            libc::PTRACE_SYSCALL,
            libc::PTRACE_KILL,
            libc::PTRACE_INTERRUPT,
            0x420e, // PTRACE_GET_SYSCALL_INFO
        ];
        for r in unchecked {
            assert!(!ptrace_checked(r as c_int), "{r}");
        }
        let checked = [
            libc::PTRACE_ATTACH,
            libc::PTRACE_SEIZE,
            libc::PTRACE_PEEKTEXT,
            libc::PTRACE_PEEKDATA,
            libc::PTRACE_PEEKUSER,
            libc::PTRACE_POKETEXT,
            libc::PTRACE_POKEDATA,
            libc::PTRACE_POKEUSER,
            libc::PTRACE_GETREGS,
            libc::PTRACE_SETREGS,
            libc::PTRACE_GETFPREGS,
            libc::PTRACE_SETFPREGS,
            libc::PTRACE_GETREGSET,
            libc::PTRACE_SETREGSET,
        ];
        for r in checked {
            assert!(ptrace_checked(r as c_int), "{r}");
        }
        assert_eq!(PTRACE_ATTACH, libc::PTRACE_ATTACH as c_int);
        assert_eq!(PTRACE_SEIZE, libc::PTRACE_SEIZE as c_int);
        assert_eq!(PTRACE_DETACH, libc::PTRACE_DETACH as c_int);
        assert_eq!(PTRACE_INTERRUPT, libc::PTRACE_INTERRUPT as c_int);
        assert_eq!(WALL, libc::__WALL as u32);
    }

    #[test]
    fn a_read_from_a_reused_pid_is_cleared() {
        let mut a = [7u8; 4];
        let mut b = [7u8; 6];
        let v = [
            iovec {
                iov_base: a.as_mut_ptr().cast(),
                iov_len: a.len(),
            },
            iovec {
                iov_base: b.as_mut_ptr().cast(),
                iov_len: b.len(),
            },
        ];
        // SAFETY: two live iovecs, 7 bytes "read".
        unsafe { forget_read(v.as_ptr(), 2, 7) };
        assert_eq!(a, [0; 4]);
        assert_eq!(b, [0, 0, 0, 7, 7, 7]);
    }
}
