//! Namespaces, mounts and the calls that administer the whole system,
//! refused whatever the policy says.
//!
//! In a new user namespace any user may mount: a bind mount puts any
//! directory under a path the policy allows (`unshare(CLONE_NEWUSER |
//! CLONE_NEWNS)`, then `mount("/home/u/.ssh", "ws/x", MS_BIND)` makes the
//! keys `ws/x/…`), and `chroot` or `pivot_root` move `/` itself. Every
//! path the library judges is then judged under the wrong name. So:
//! - `rule=namespace`: `unshare`, `clone` and `clone3` with any
//!   `CLONE_NEW*` flag, and every `setns`;
//! - `rule=mount`: `mount`, `umount`, `umount2`, `pivot_root`, `chroot`,
//!   and the new mount API (`fsopen`, `fspick`, `fsconfig`, `fsmount`,
//!   `move_mount`, `open_tree`, `open_tree_attr`, `mount_setattr`);
//! - `rule=sysadmin`: `acct` (the kernel appends a record per process
//!   to the file it names), `swapon`, `swapoff`, `quotactl`,
//!   `quotactl_fd`.
//!
//! Through libc and `syscall(2)` alike (`clone` and its alias `__clone`
//! are variadic: shim/shim.c reads their arguments and asks
//! [`fsguard_clone_check`]). The trace line's `path` is what the call
//! names, as given (nothing is resolved: the call is refused whatever it
//! names): the flags asked for, the mount's source (`dest=` its target), a
//! descriptor's kernel name.

use std::ffi::{c_char, c_int, c_long, c_uint, c_ulong, c_void, CStr};
use std::os::fd::BorrowedFd;

use fsguard_policy::{Access, Rule};

use super::process::checked;
use crate::guard::{set_errno, CArg};
use crate::table::{chk, row, CheckInfo, HookInfo};

/// The namespace flags, in the order a trace line names them.
const NAMESPACES: [(u64, &str); 8] = [
    (libc::CLONE_NEWUSER as u64, "CLONE_NEWUSER"),
    (libc::CLONE_NEWNS as u64, "CLONE_NEWNS"),
    (libc::CLONE_NEWPID as u64, "CLONE_NEWPID"),
    (libc::CLONE_NEWNET as u64, "CLONE_NEWNET"),
    (libc::CLONE_NEWUTS as u64, "CLONE_NEWUTS"),
    (libc::CLONE_NEWIPC as u64, "CLONE_NEWIPC"),
    (libc::CLONE_NEWCGROUP as u64, "CLONE_NEWCGROUP"),
    (CLONE_NEWTIME, "CLONE_NEWTIME"),
];

/// `CLONE_NEWTIME`: for `unshare` and `clone3` only (in `clone`'s flags
/// the low byte is the exit signal).
const CLONE_NEWTIME: u64 = 0x80;

/// Linux 6.15's `open_tree_attr` (no libc constant yet; the numbers of
/// system calls added since 5.1 are the same on every architecture).
const SYS_OPEN_TREE_ATTR: c_long = 467;

/// The namespace flags `unshare` and `clone3` take.
fn all_namespaces() -> u64 {
    NAMESPACES.iter().fold(0, |m, (f, _)| m | f)
}

/// Those `clone` takes (its low byte is the exit signal).
fn clone_namespaces() -> u64 {
    all_namespaces() & !CLONE_NEWTIME
}

/// The namespace flags of `flags`, as `CLONE_NEWUSER|CLONE_NEWNS`.
fn ns_shown(flags: u64, buf: &mut [u8; 160]) -> &[u8] {
    let mut n = 0;
    for (bit, name) in NAMESPACES {
        if flags & bit == 0 {
            continue;
        }
        if n > 0 {
            buf[n] = b'|';
            n += 1;
        }
        buf[n..n + name.len()].copy_from_slice(name.as_bytes());
        n += name.len();
    }
    &buf[..n]
}

/// Refuses a call asking for the namespaces in `flags` (none: allowed).
fn namespaces(call: &'static str, flags: u64) -> Result<(), c_int> {
    if flags == 0 {
        return Ok(());
    }
    checked(call, Access::Write, |g| {
        let mut b = [0u8; 160];
        g.refuse(
            call,
            Access::Write,
            ns_shown(flags, &mut b),
            Rule::Namespace,
        )
    })
}

/// A caller's C string as shown (NULL as empty).
fn text<'a>(s: CArg<'a>) -> &'a [u8] {
    s.get().map_or(&b""[..], CStr::to_bytes)
}

/// The kernel's name for `fd` (`user:[4026531837]`, `anon_inode:[fscontext]`,
/// a path), into `buf`; `?` for a closed fd.
fn fd_shown(fd: c_int, buf: &mut [u8; 256]) -> &[u8] {
    if fd < 0 {
        return b"?";
    }
    // SAFETY: only its /proc/self/fd entry is read; a closed fd fails.
    let b = unsafe { BorrowedFd::borrow_raw(fd) };
    // SAFETY: u8 and MaybeUninit<u8> share a layout; an initialised byte
    // is a valid MaybeUninit.
    let raw = unsafe { &mut *(buf as *mut [u8; 256]).cast::<[std::mem::MaybeUninit<u8>; 256]>() };
    match crate::sys::fd_name(b, raw) {
        Ok(n) if n > 0 => &buf[..n],
        _ => b"?",
    }
}

/// A dirfd and a path, as `*at` calls take them: the path, or with an
/// empty one, what the dirfd names.
fn at_shown<'a>(dirfd: c_int, path: CArg<'a>, buf: &'a mut [u8; 256]) -> &'a [u8] {
    match path.get() {
        Some(p) if !p.is_empty() => p.to_bytes(),
        _ if dirfd == libc::AT_FDCWD => b".",
        _ => fd_shown(dirfd, buf),
    }
}

/// Refuses a call for `rule`, showing what `shown` gives.
fn refuse(
    call: &'static str,
    rule: Rule<'static>,
    shown: impl FnOnce(&mut [u8; 256]) -> (&[u8], Option<&[u8]>),
) -> Result<(), c_int> {
    checked(call, Access::Write, |g| {
        let mut buf = [0u8; 256];
        let (path, dest) = shown(&mut buf);
        g.refuse_dest(call, Access::Write, path, dest, rule)
    })
}

/// The real function, after `$check` (an errno on refusal).
macro_rules! refused_or_real {
    ($check:expr, $symbol:literal, $ty:ty, ($($arg:expr),*)) => {{
        if let Err(e) = $check {
            set_errno(e);
            return -1;
        }
        hooks!(@real $symbol, $ty, -1, ($($arg),*))
    }};
}

/// unshare: refused with any namespace flag.
///
/// # Safety
/// As for `unshare(2)`.
#[no_mangle]
pub unsafe extern "C" fn unshare(flags: c_int) -> c_int {
    let ns = u64::from(flags as u32) & all_namespaces();
    refused_or_real!(
        namespaces("unshare", ns),
        "unshare",
        unsafe extern "C" fn(c_int) -> c_int,
        (flags)
    )
}

/// The check of shim/shim.c's variadic `clone` and `__clone`: 0 to go
/// ahead, else the errno (a namespace flag, refused and traced).
#[no_mangle]
pub extern "C" fn fsguard_clone_check(flags: c_int) -> c_int {
    match namespaces("clone", u64::from(flags as u32) & clone_namespaces()) {
        Ok(()) => 0,
        Err(e) => e,
    }
}

/// setns: refused, whatever it joins.
///
/// # Safety
/// As for `setns(2)`.
#[no_mangle]
pub unsafe extern "C" fn setns(fd: c_int, nstype: c_int) -> c_int {
    let check = refuse("setns", Rule::Namespace, |b| (fd_shown(fd, b), None));
    refused_or_real!(
        check,
        "setns",
        unsafe extern "C" fn(c_int, c_int) -> c_int,
        (fd, nstype)
    )
}

/// Declares the libc functions refused whatever their arguments: the
/// exported function (refuse, then the real one, which audit mode and a
/// process before the library's constructor reach), one per row.
macro_rules! always_refused {
    ($(
        $(#[doc = $doc:literal])*
        $symbol:literal, $rule:expr,
        fn $name:ident($($arg:ident: $ty:ty),*) -> c_int,
        shows |$b:ident| $shown:expr;
    )*) => {$(
        $(#[doc = $doc])*
        ///
        /// # Safety
        /// As for the C function.
        #[no_mangle]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> c_int {
            let check = refuse($symbol, $rule, |$b| {
                $(#[allow(unused_variables)]
                // SAFETY: the C function's contract: a string argument is
                // NULL or a C string valid for the call.
                let $arg = unsafe { crate::entry::HookArg::typed($arg) };)*
                $shown
            });
            refused_or_real!(check, $symbol, unsafe extern "C" fn($($ty),*) -> c_int, ($($arg),*))
        }
    )*};
}

type MountAttr = *mut c_void;

always_refused! {
    /// mount: refused (`path=` source, `dest=` target).
    "mount", Rule::Mount,
    fn mount(source: *const c_char, target: *const c_char, fstype: *const c_char, flags: c_ulong, data: *const c_void) -> c_int,
        shows |_b| (text(source), Some(text(target)));
    "umount", Rule::Mount,
    fn umount(target: *const c_char) -> c_int,
        shows |_b| (text(target), None);
    "umount2", Rule::Mount,
    fn umount2(target: *const c_char, flags: c_int) -> c_int,
        shows |_b| (text(target), None);
    /// pivot_root: refused (`path=` the new root, `dest=` where the old goes).
    "pivot_root", Rule::Mount,
    fn pivot_root(new_root: *const c_char, put_old: *const c_char) -> c_int,
        shows |_b| (text(new_root), Some(text(put_old)));
    "chroot", Rule::Mount,
    fn chroot(path: *const c_char) -> c_int,
        shows |_b| (text(path), None);
    /// fsopen: refused (`path=` the filesystem type).
    "fsopen", Rule::Mount,
    fn fsopen(fsname: *const c_char, flags: c_uint) -> c_int,
        shows |_b| (text(fsname), None);
    "fspick", Rule::Mount,
    fn fspick(dirfd: c_int, path: *const c_char, flags: c_uint) -> c_int,
        shows |b| (at_shown(dirfd, path, b), None);
    "fsconfig", Rule::Mount,
    fn fsconfig(fd: c_int, cmd: c_uint, key: *const c_char, value: *const c_void, aux: c_int) -> c_int,
        shows |b| (fd_shown(fd, b), None);
    "fsmount", Rule::Mount,
    fn fsmount(fd: c_int, flags: c_uint, attr_flags: c_uint) -> c_int,
        shows |b| (fd_shown(fd, b), None);
    /// move_mount: refused (`path=` what moves, `dest=` where to).
    "move_mount", Rule::Mount,
    fn move_mount(from_dirfd: c_int, from_path: *const c_char, to_dirfd: c_int, to_path: *const c_char, flags: c_uint) -> c_int,
        shows |b| (at_shown(from_dirfd, from_path, b), Some(text(to_path)));
    "open_tree", Rule::Mount,
    fn open_tree(dirfd: c_int, path: *const c_char, flags: c_uint) -> c_int,
        shows |b| (at_shown(dirfd, path, b), None);
    "mount_setattr", Rule::Mount,
    fn mount_setattr(dirfd: c_int, path: *const c_char, flags: c_uint, attr: MountAttr, size: usize) -> c_int,
        shows |b| (at_shown(dirfd, path, b), None);
    /// acct: refused (`path=` the accounting file; empty to stop).
    "acct", Rule::Sysadmin,
    fn acct(path: *const c_char) -> c_int,
        shows |_b| (text(path), None);
    "swapon", Rule::Sysadmin,
    fn swapon(path: *const c_char, flags: c_int) -> c_int,
        shows |_b| (text(path), None);
    "swapoff", Rule::Sysadmin,
    fn swapoff(path: *const c_char) -> c_int,
        shows |_b| (text(path), None);
    /// quotactl: refused (`path=` the block device).
    "quotactl", Rule::Sysadmin,
    fn quotactl(cmd: c_int, special: *const c_char, id: c_int, addr: *mut c_char) -> c_int,
        shows |_b| (text(special), None);
}

/// The system calls of this module through `syscall(2)`.
#[allow(non_upper_case_globals)] // libc's SYS_x
pub(crate) fn handles(nr: c_long) -> bool {
    use libc::*;
    matches!(
        nr,
        SYS_unshare
            | SYS_clone
            | SYS_clone3
            | SYS_setns
            | SYS_mount
            | SYS_umount2
            | SYS_pivot_root
            | SYS_chroot
            | SYS_fsopen
            | SYS_fspick
            | SYS_fsconfig
            | SYS_fsmount
            | SYS_move_mount
            | SYS_open_tree
            | SYS_OPEN_TREE_ATTR
            | SYS_mount_setattr
            | SYS_acct
            | SYS_swapon
            | SYS_swapoff
            | SYS_quotactl
            | SYS_quotactl_fd
    )
}

/// The largest `struct clone_args` copied (the kernel's is 88 bytes).
const CLONE_ARGS_MAX: usize = 256;

/// `syscall(nr, …)` for a system call [`handles`] names: refused as its
/// libc function is, else the real `syscall` with the caller's arguments
/// (for `clone3`, with the library's copy of the arguments it checked).
///
/// # Safety
/// As for `syscall(2)`: the arguments valid for system call `nr`.
#[allow(non_upper_case_globals)] // libc's SYS_x
pub(crate) unsafe fn syscall(nr: c_long, mut a: [c_long; 6]) -> c_long {
    use libc::*;
    // SAFETY: `syscall(2)`'s contract: an argument the system call reads as
    // a string is NULL or a C string valid for it.
    let p = |x: c_long| unsafe { CArg::new(x as *const c_char) };
    let i = |x: c_long| x as c_int;
    let mut args = [0u64; CLONE_ARGS_MAX / 8];
    let check = match nr {
        SYS_unshare => namespaces("unshare", a[0] as u64 & all_namespaces()),
        SYS_clone => namespaces("clone", a[0] as u64 & clone_namespaces()),
        SYS_clone3 => {
            // The flags are read from a copy, and the copy is what the
            // kernel gets: another thread cannot change them in between.
            let (ptr, size) = (a[0] as *const u8, a[1] as usize);
            if ptr.is_null() || size < 8 {
                Ok(())
            } else if size > CLONE_ARGS_MAX {
                Err(libc::E2BIG)
            } else {
                // SAFETY: clone3's contract: `size` readable bytes at `ptr`.
                unsafe { std::ptr::copy_nonoverlapping(ptr, args.as_mut_ptr().cast::<u8>(), size) };
                a[0] = args.as_ptr() as c_long;
                namespaces("clone3", args[0] & all_namespaces())
            }
        }
        SYS_setns => refuse("setns", Rule::Namespace, |b| (fd_shown(i(a[0]), b), None)),
        SYS_mount => refuse("mount", Rule::Mount, |_| {
            (text(p(a[0])), Some(text(p(a[1]))))
        }),
        SYS_umount2 => refuse("umount2", Rule::Mount, |_| (text(p(a[0])), None)),
        SYS_pivot_root => refuse("pivot_root", Rule::Mount, |_| {
            (text(p(a[0])), Some(text(p(a[1]))))
        }),
        SYS_chroot => refuse("chroot", Rule::Mount, |_| (text(p(a[0])), None)),
        SYS_fsopen => refuse("fsopen", Rule::Mount, |_| (text(p(a[0])), None)),
        SYS_fspick => refuse("fspick", Rule::Mount, |b| {
            (at_shown(i(a[0]), p(a[1]), b), None)
        }),
        SYS_fsconfig => refuse("fsconfig", Rule::Mount, |b| (fd_shown(i(a[0]), b), None)),
        SYS_fsmount => refuse("fsmount", Rule::Mount, |b| (fd_shown(i(a[0]), b), None)),
        SYS_move_mount => refuse("move_mount", Rule::Mount, |b| {
            (at_shown(i(a[0]), p(a[1]), b), Some(text(p(a[3]))))
        }),
        SYS_open_tree => refuse("open_tree", Rule::Mount, |b| {
            (at_shown(i(a[0]), p(a[1]), b), None)
        }),
        SYS_OPEN_TREE_ATTR => refuse("open_tree_attr", Rule::Mount, |b| {
            (at_shown(i(a[0]), p(a[1]), b), None)
        }),
        SYS_mount_setattr => refuse("mount_setattr", Rule::Mount, |b| {
            (at_shown(i(a[0]), p(a[1]), b), None)
        }),
        SYS_acct => refuse("acct", Rule::Sysadmin, |_| (text(p(a[0])), None)),
        SYS_swapon => refuse("swapon", Rule::Sysadmin, |_| (text(p(a[0])), None)),
        SYS_swapoff => refuse("swapoff", Rule::Sysadmin, |_| (text(p(a[0])), None)),
        SYS_quotactl => refuse("quotactl", Rule::Sysadmin, |_| (text(p(a[1])), None)),
        SYS_quotactl_fd => refuse("quotactl_fd", Rule::Sysadmin, |b| {
            (fd_shown(i(a[0]), b), None)
        }),
        _ => Ok(()),
    };
    if let Err(e) = check {
        set_errno(e);
        return -1;
    }
    // SAFETY: the caller's arguments (clone3's struct replaced by a copy of
    // it, alive until the call returns).
    let r = unsafe { crate::syscall::real_syscall(nr, a) };
    let _ = &args;
    r
}

const NAMESPACE_FLAGS: &[CheckInfo] = &[chk(
    "REFUSE namespace",
    "-",
    "-",
    "(with a `CLONE_NEW*` flag in `flags`)",
)];
const ALWAYS_NAMESPACE: &[CheckInfo] = &[chk("REFUSE namespace", "-", "-", "(always)")];
const ALWAYS_MOUNT: &[CheckInfo] = &[chk("REFUSE mount", "-", "-", "(always)")];
const ALWAYS_SYSADMIN: &[CheckInfo] = &[chk("REFUSE sysadmin", "-", "-", "(always)")];

/// The hooks above and shim/shim.c's `clone` and `__clone`, as rows; then
/// the same calls through `syscall(2)`.
pub static NAMESPACE_TABLE: &[HookInfo] = &[
    row("unshare", "unshare", NAMESPACE_FLAGS),
    row("clone", "clone", NAMESPACE_FLAGS),
    row("__clone", "clone", NAMESPACE_FLAGS),
    row("setns", "setns", ALWAYS_NAMESPACE),
    row("mount", "mount", ALWAYS_MOUNT),
    row("umount", "umount", ALWAYS_MOUNT),
    row("umount2", "umount2", ALWAYS_MOUNT),
    row("pivot_root", "pivot_root", ALWAYS_MOUNT),
    row("chroot", "chroot", ALWAYS_MOUNT),
    row("fsopen", "fsopen", ALWAYS_MOUNT),
    row("fspick", "fspick", ALWAYS_MOUNT),
    row("fsconfig", "fsconfig", ALWAYS_MOUNT),
    row("fsmount", "fsmount", ALWAYS_MOUNT),
    row("move_mount", "move_mount", ALWAYS_MOUNT),
    row("open_tree", "open_tree", ALWAYS_MOUNT),
    row("mount_setattr", "mount_setattr", ALWAYS_MOUNT),
    row("acct", "acct", ALWAYS_SYSADMIN),
    row("swapon", "swapon", ALWAYS_SYSADMIN),
    row("swapoff", "swapoff", ALWAYS_SYSADMIN),
    row("quotactl", "quotactl", ALWAYS_SYSADMIN),
    row("syscall(SYS_unshare)", "unshare", NAMESPACE_FLAGS),
    row("syscall(SYS_clone)", "clone", NAMESPACE_FLAGS),
    row("syscall(SYS_clone3)", "clone3", NAMESPACE_FLAGS),
    row("syscall(SYS_setns)", "setns", ALWAYS_NAMESPACE),
    row("syscall(SYS_mount)", "mount", ALWAYS_MOUNT),
    row("syscall(SYS_umount2)", "umount2", ALWAYS_MOUNT),
    row("syscall(SYS_pivot_root)", "pivot_root", ALWAYS_MOUNT),
    row("syscall(SYS_chroot)", "chroot", ALWAYS_MOUNT),
    row("syscall(SYS_fsopen)", "fsopen", ALWAYS_MOUNT),
    row("syscall(SYS_fspick)", "fspick", ALWAYS_MOUNT),
    row("syscall(SYS_fsconfig)", "fsconfig", ALWAYS_MOUNT),
    row("syscall(SYS_fsmount)", "fsmount", ALWAYS_MOUNT),
    row("syscall(SYS_move_mount)", "move_mount", ALWAYS_MOUNT),
    row("syscall(SYS_open_tree)", "open_tree", ALWAYS_MOUNT),
    row(
        "syscall(SYS_open_tree_attr)",
        "open_tree_attr",
        ALWAYS_MOUNT,
    ),
    row("syscall(SYS_mount_setattr)", "mount_setattr", ALWAYS_MOUNT),
    row("syscall(SYS_acct)", "acct", ALWAYS_SYSADMIN),
    row("syscall(SYS_swapon)", "swapon", ALWAYS_SYSADMIN),
    row("syscall(SYS_swapoff)", "swapoff", ALWAYS_SYSADMIN),
    row("syscall(SYS_quotactl)", "quotactl", ALWAYS_SYSADMIN),
    row("syscall(SYS_quotactl_fd)", "quotactl_fd", ALWAYS_SYSADMIN),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespace_flags_shown() {
        let mut b = [0u8; 160];
        let f = (libc::CLONE_NEWUSER | libc::CLONE_NEWNS) as u64;
        assert_eq!(ns_shown(f, &mut b), b"CLONE_NEWUSER|CLONE_NEWNS");
        let every = ns_shown(all_namespaces(), &mut b).to_vec();
        assert_eq!(
            every,
            b"CLONE_NEWUSER|CLONE_NEWNS|CLONE_NEWPID|CLONE_NEWNET|CLONE_NEWUTS|\
              CLONE_NEWIPC|CLONE_NEWCGROUP|CLONE_NEWTIME"
        );
    }

    #[test]
    fn namespace_masks() {
        // clone's low byte is the exit signal: SIGCHLD is no namespace.
        assert_eq!(clone_namespaces() & 0xff, 0);
        assert_eq!(u64::from(libc::SIGCHLD as u32) & clone_namespaces(), 0);
        assert_eq!(all_namespaces() & CLONE_NEWTIME, CLONE_NEWTIME);
        // Flags that share what a thread or a process has are none.
        let sharing = (libc::CLONE_VM | libc::CLONE_FS | libc::CLONE_FILES | libc::CLONE_SIGHAND)
            as u64
            | libc::CLONE_THREAD as u64
            | libc::CLONE_SYSVSEM as u64
            | libc::CLONE_VFORK as u64;
        assert_eq!(sharing & all_namespaces(), 0);
        for (bit, _) in NAMESPACES {
            assert_eq!(bit.count_ones(), 1);
        }
    }

    #[test]
    fn every_refused_call_is_named_to_the_cli() {
        // The CLI gives no hint for these (by the name the report pipe
        // carries), and suggests no rule for them.
        use fsguard_policy::process::REFUSED_WHATEVER_THE_POLICY as NAMED;
        let calls: std::collections::BTreeSet<&str> = NAMESPACE_TABLE
            .iter()
            .chain(super::super::PROCESS_TABLE)
            .map(|r| r.call)
            .collect();
        let named: std::collections::BTreeSet<&str> = NAMED.iter().copied().collect();
        assert_eq!(calls, named);
    }

    #[test]
    fn every_syscall_row_is_handled() {
        // The rows name the numbers `handles` takes, one to one.
        let named: Vec<&str> = NAMESPACE_TABLE
            .iter()
            .filter_map(|r| r.symbol.strip_prefix("syscall("))
            .collect();
        assert_eq!(named.len(), 21);
        assert!(handles(SYS_OPEN_TREE_ATTR) && handles(libc::SYS_quotactl_fd));
        assert!(!handles(libc::SYS_openat));
    }
}
