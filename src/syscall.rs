//! `syscall(2)`: the variadic entry point in shim/shim.c reads six
//! arguments and calls [`fsguard_syscall`], which checks the path system
//! calls exactly as the libc wrappers are checked and passes everything
//! else straight to the real `syscall`. A system call is declared on its
//! libc function's row (`sys SYS_x` in the `hooks!` tables); only those
//! whose arguments differ from libc's are declared here.

use std::ffi::{c_char, c_int, c_long};

use fsguard_policy::Access;

use crate::entry::Syscalls;
use crate::guard::{self, set_errno, CArg, Target};
use crate::hooks::at_follow;
use crate::hooks::{CheckInfo, HookInfo};
use crate::resolve::Follow;
use libc::{SYS_faccessat, SYS_fchmodat};

const WRITE: Option<Access> = Some(Access::Write);
const META: Option<Access> = None;

/// A system call's argument, as the caller passed it to `syscall(2)`.
#[derive(Clone, Copy)]
struct Arg(c_long);

impl Arg {
    /// # Safety
    /// Where the system call reads this argument as a path, it must be NULL
    /// or a C string valid for the call.
    unsafe fn new(a: c_long) -> Arg {
        Arg(a)
    }
}

/// The argument as a path (only where the system call reads it as one).
fn p(a: Arg) -> CArg<'static> {
    // SAFETY: `Arg::new`'s contract; the table reads as paths only the
    // arguments its system call reads as paths.
    unsafe { CArg::new(a.0 as *const c_char) }
}

fn i(a: Arg) -> c_int {
    a.0 as c_int
}

/// Declares the system calls checked here rather than through a libc row:
/// one match arm each, and a row of [`SYSCALLS`]. The argument names are
/// the invocation's, so the check expressions below can use them.
macro_rules! syscalls {
    (fn $name:ident($nr:ident, $($a:ident),*); $(
        $(#[$m:meta])*
        $sys:ident as $call:literal => [$($access:expr, $follow:expr, $dirfd:expr, $path:expr, $moves:expr);+];
    )*) => {
        /// `None` for a system call that names no path; else the verdict,
        /// with how the call reaches the objects checked.
        fn $name($nr: c_long, $($a: Arg),*) -> Option<Result<guard::Vias, c_int>> {
            $(let _ = $a;)*
            match $nr {
                $(
                    $(#[$m])*
                    x if x == $sys => Some(guard::check_act($call, &[$(Target {
                        access: $access,
                        follow: $follow,
                        dirfd: $dirfd,
                        path: $path,
                        moves: $moves,
                        handle: false,
                    }),+])),
                )*
                _ => None,
            }
        }

        /// The checked system calls, as declared.
        pub static SYSCALLS: &[HookInfo] = &[$(
            $(#[$m])*
            HookInfo {
                symbol: concat!("syscall(", stringify!($sys), ")"),
                call: $call,
                checks: &[$(CheckInfo {
                    access: stringify!($access),
                    follow: stringify!($follow),
                    dirfd: stringify!($dirfd),
                    path: stringify!($path),
                }),+],
            },
        )*];
    };
}

/// The hook tables whose rows carry their system call (`sys SYS_x`):
/// `syscall(2)` checks those as the libc rows.
pub const TABLES: &[&Syscalls] = &[
    &crate::hooks::TABLE_SYSCALLS,
    &crate::hooks_more::MORE_SYSCALLS,
];

// The system calls whose arguments are not their libc function's: the
// plain fchmodat and faccessat have no flags argument (they always follow;
// libc's rows take flags, as fchmodat2 and faccessat2 do).
//
// file_getattr and file_setattr (Linux 6.17) have no libc function yet:
// `(dirfd, path, attr, size, at_flags)`, the inode's flags and project id
// (`FS_IOC_FSGETXATTR` by path) read, or changed: a metadata write, as
// chmod is.
syscalls! {
    fn check_unlike_libc(nr, a, b, c, d, e, f);
    SYS_fchmodat as "fchmodat" => [WRITE, Follow::Yes, i(a), p(b), false];
    SYS_faccessat as "faccessat" => [META, Follow::Yes, i(a), p(b), false];
    SYS_FILE_GETATTR as "file_getattr" => [META, at_follow(i(e), p(b)), i(a), p(b), false];
    SYS_FILE_SETATTR as "file_setattr" => [WRITE, at_follow(i(e), p(b)), i(a), p(b), false];
}

/// file_getattr(2), newer than the libc crate knows; the number is the
/// same on every architecture (the unified table).
pub const SYS_FILE_GETATTR: c_long = 468;
/// file_setattr(2), as [`SYS_FILE_GETATTR`].
pub const SYS_FILE_SETATTR: c_long = 469;

/// The system calls of the `hooks!` tables' rows, then those above.
///
/// # Safety
/// As [`Syscalls::check`].
unsafe fn check_syscall(nr: c_long, args: [c_long; 6]) -> Option<Result<guard::Vias, c_int>> {
    for t in TABLES {
        // SAFETY: this function's contract, passed on.
        if let Some(v) = unsafe { (t.check)(nr, args) } {
            return Some(v);
        }
    }
    // SAFETY: as above: each argument the system call reads as a path is
    // NULL or a C string.
    let [a, b, c, d, e, f] = unsafe { args.map(|x| Arg::new(x)) };
    check_unlike_libc(nr, a, b, c, d, e, f)
}

/// The system calls handled outside the table.
pub static SYSCALLS_CUSTOM: &[HookInfo] = &[
    HookInfo {
        symbol: "syscall(SYS_openat2)",
        call: "openat2",
        checks: &[CheckInfo {
            access: "ENOSYS",
            follow: "-",
            dirfd: "-",
            path: "(answered ENOSYS: callers fall back to openat)",
        }],
    },
    HookInfo {
        symbol: "syscall(SYS_execve)",
        call: "execve",
        checks: &[CheckInfo {
            access: "EXEC",
            follow: "Follow::Yes",
            dirfd: "AT_FDCWD",
            path: "arg1, through the execve hook",
        }],
    },
    HookInfo {
        symbol: "syscall(SYS_execveat)",
        call: "execveat",
        checks: &[CheckInfo {
            access: "EXEC",
            follow: "at_follow(i(e), p(b))",
            dirfd: "i(a)",
            path: "arg2, through the execveat hook",
        }],
    },
    HookInfo {
        symbol: "syscall(SYS_bind)",
        call: "bind",
        checks: &[CheckInfo {
            access: "WRITE",
            follow: "Follow::Entry",
            dirfd: "AT_FDCWD",
            path: "arg2's sun_path, through the bind hook",
        }],
    },
    HookInfo {
        symbol: "syscall(SYS_connect)",
        call: "connect",
        checks: &[CheckInfo {
            access: "SOCKET",
            follow: "Follow::Yes",
            dirfd: "AT_FDCWD",
            path: "arg2's sun_path, through the connect hook",
        }],
    },
    HookInfo {
        symbol: "syscall(SYS_sendto)",
        call: "sendto",
        checks: &[CheckInfo {
            access: "SOCKET",
            follow: "Follow::Yes",
            dirfd: "AT_FDCWD",
            path: "arg5's sun_path, through the sendto hook",
        }],
    },
    HookInfo {
        symbol: "syscall(SYS_sendmsg)",
        call: "sendmsg",
        checks: &[CheckInfo {
            access: "SOCKET",
            follow: "Follow::Yes",
            dirfd: "AT_FDCWD",
            path: "arg2's msg_name, through the sendmsg hook",
        }],
    },
    HookInfo {
        symbol: "syscall(SYS_sendmmsg)",
        call: "sendmmsg",
        checks: &[CheckInfo {
            access: "SOCKET",
            follow: "Follow::Yes",
            dirfd: "AT_FDCWD",
            path: "each msg_name of arg2, through the sendmmsg hook",
        }],
    },
    HookInfo {
        symbol: "syscall(SYS_open_by_handle_at)",
        call: "open_by_handle_at",
        checks: &[CheckInfo {
            access: "open_access(flags)",
            follow: "Follow::Fd",
            dirfd: "the returned fd",
            path: "(opened, then checked by the open_by_handle_at hook)",
        }],
    },
];

type Argv = *const *const c_char;

type SyscallFn = unsafe extern "C" fn(c_long, ...) -> c_long;

/// # Safety
/// The caller's system call arguments, valid for system call `nr`.
pub(crate) unsafe fn real_syscall(nr: c_long, a: [c_long; 6]) -> c_long {
    match crate::real::real!("syscall", SyscallFn) {
        // SAFETY: the real syscall with the caller's arguments.
        Some(f) => unsafe { f(nr, a[0], a[1], a[2], a[3], a[4], a[5]) },
        None => {
            set_errno(libc::ENOSYS);
            -1
        }
    }
}

/// Called by the variadic `syscall` in shim/shim.c.
///
/// # Safety
/// The arguments must be valid for system call `nr` (a path NULL or a C
/// string, a buffer of the size given), as for `syscall(2)` itself.
#[no_mangle]
pub unsafe extern "C" fn fsguard_syscall(
    nr: c_long,
    a: c_long,
    b: c_long,
    c: c_long,
    d: c_long,
    e: c_long,
    f: c_long,
) -> c_long {
    let args = [a, b, c, d, e, f];
    let verdict = match nr {
        // openat2's RESOLVE_* flags change how the path resolves; rather
        // than guess, say it does not exist so callers use openat.
        libc::SYS_openat2 if guard::get().is_some() => Err(libc::ENOSYS),
        // The exec hooks check the file and keep the guard in the child's
        // environment; they call libc's execve, the same system call.
        libc::SYS_execve => {
            // SAFETY: the caller's execve arguments.
            return unsafe { crate::exec::execve(a as *const c_char, b as Argv, c as Argv) }.into();
        }
        libc::SYS_execveat => {
            let (dirfd, path, flags) = (a as c_int, b as *const c_char, e as c_int);
            // SAFETY: the caller's execveat arguments.
            return unsafe { crate::exec::execveat(dirfd, path, c as Argv, d as Argv, flags) }
                .into();
        }
        // bind and open_by_handle_at: their hooks, which call libc's
        // wrappers of the same system calls.
        libc::SYS_bind => {
            let (fd, addr, len) = (a as c_int, b as *const libc::sockaddr, c as libc::socklen_t);
            // SAFETY: the caller's bind arguments.
            return unsafe { crate::hooks_more::bind(fd, addr, len) }.into();
        }
        // The AF_UNIX address calls: their hooks, which copy the address,
        // check the socket it names and call libc's wrappers.
        libc::SYS_connect => {
            let (fd, addr, len) = (a as c_int, b as *const libc::sockaddr, c as libc::socklen_t);
            // SAFETY: the caller's connect arguments.
            return unsafe { crate::hooks_more::connect(fd, addr, len) }.into();
        }
        libc::SYS_sendto => {
            let (buf, n, flags) = (b as *const std::ffi::c_void, c as libc::size_t, d as c_int);
            let (addr, len) = (e as *const libc::sockaddr, f as libc::socklen_t);
            // SAFETY: the caller's sendto arguments.
            return unsafe { crate::hooks_more::sendto(a as c_int, buf, n, flags, addr, len) }
                as c_long;
        }
        libc::SYS_sendmsg => {
            let (msg, flags) = (b as *const libc::msghdr, c as c_int);
            // SAFETY: the caller's sendmsg arguments.
            return unsafe { crate::hooks_more::sendmsg(a as c_int, msg, flags) } as c_long;
        }
        libc::SYS_sendmmsg => {
            let (vec, vlen, flags) = (b as *mut libc::mmsghdr, c as std::ffi::c_uint, d as c_int);
            // SAFETY: the caller's sendmmsg arguments.
            return unsafe { crate::hooks_more::sendmmsg(a as c_int, vec, vlen, flags) }.into();
        }
        // Namespaces, mounts and other processes: their own module's
        // checks (src/hooks_more/namespace.rs, process.rs).
        n if crate::hooks_more::namespace::handles(n) => {
            // SAFETY: the caller's arguments for system call n.
            return unsafe { crate::hooks_more::namespace::syscall(n, args) };
        }
        n if crate::hooks_more::process::handles(n) => {
            // SAFETY: the caller's arguments for system call n.
            return unsafe { crate::hooks_more::process::syscall(n, args) };
        }
        libc::SYS_open_by_handle_at => {
            let (mount_fd, handle, flags) = (a as c_int, b as *mut std::ffi::c_void, c as c_int);
            // SAFETY: the caller's open_by_handle_at arguments.
            return unsafe { crate::hooks_more::open_by_handle_at(mount_fd, handle, flags) }.into();
        }
        _ => {
            // SAFETY: this function's contract: each argument the system
            // call reads as a path is NULL or a C string.
            match unsafe { check_syscall(nr, args) } {
                None => Ok(()),
                // SAFETY: the caller's arguments, paths replaced by the
                // checked objects' names.
                Some(Ok(mut vias)) => return unsafe { act(nr, args, vias.keep_high()) },
                Some(Err(e)) => Err(e),
            }
        }
    };
    match verdict {
        // SAFETY: the caller's arguments.
        Ok(()) => unsafe { real_syscall(nr, args) },
        Err(e) => {
            set_errno(e);
            -1
        }
    }
}

/// Makes a checked path system call act on the objects checked: each path
/// argument replaced by the name of the fd the check holds
/// (`/proc/self/fd/N[/name]`, absolute, so the dirfd argument is ignored),
/// kept high (the call may make a descriptor: `SYS_open`, `SYS_creat`).
///
/// # Safety
/// As [`real_syscall`].
unsafe fn act(nr: c_long, mut args: [c_long; 6], vias: &guard::Vias) -> c_long {
    if vias.resolved() {
        for k in 0..2 {
            let v = &vias[k];
            if v.reach() == crate::resolve::Reach::Caller {
                continue;
            }
            if let Some(slot) = args.iter_mut().find(|x| **x == v.caller_path() as c_long) {
                *slot = v.abs() as c_long;
            }
        }
    }
    // SAFETY: the caller's arguments; a path replaced by a C string held
    // in `vias`, alive until after the call.
    let r = unsafe { real_syscall(nr, args) };
    let e = guard::errno();
    let _ = vias;
    guard::set_errno(e);
    r
}
