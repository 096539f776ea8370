//! The exec family's work behind its rows in [`super::EXEC_TABLE`]: the
//! real exec with the child's environment, glibc's `PATH` search done here
//! so the program run is the program checked, dlopen's check.

use std::ffi::{c_char, c_int, CStr};

use fsguard_policy::program;

#[cfg(target_os = "linux")]
use super::bound::Name;
use super::env::{entries, with_env};
use super::Argv;
use crate::guard::{self, set_errno, CArg};
use crate::real::real;
#[cfg(target_os = "linux")]
use crate::resolve::Follow;
use crate::resolve::{Spill, PATH_CAP};

type ExecveFn = unsafe extern "C" fn(*const c_char, Argv, Argv) -> c_int;

/// A row's check of one program path.
pub(super) trait PathCheck: Fn(CArg<'_>) -> Result<(), c_int> + Copy {}
impl<F: Fn(CArg<'_>) -> Result<(), c_int> + Copy> PathCheck for F {}

/// The exec of `path`: on Linux through the object checked
/// ([`super::bound`]; `check`, the row's check by path, only for a program
/// that cannot be opened), elsewhere the row's check, then the real execve
/// with the child's environment.
///
/// # Safety
/// `argv` and `envp` as execve(2) requires them (NULL-terminated arrays of
/// C strings).
pub(super) unsafe fn exec_path(
    call: &'static str,
    check: impl PathCheck,
    path: CArg<'_>,
    argv: Argv,
    envp: Argv,
) -> c_int {
    #[cfg(target_os = "linux")]
    {
        let Some(p) = path.get() else {
            return fail(libc::EFAULT);
        };
        // SAFETY: forwarded.
        return unsafe {
            super::bound::exec_bound(
                call,
                || check(path),
                libc::AT_FDCWD,
                path,
                Follow::Yes,
                Name::Path(p),
                argv,
                envp,
            )
        };
    }
    #[allow(unreachable_code)]
    if let Err(e) = check(path) {
        set_errno(e);
        return -1;
    }
    let Some(real) = real!("execve", ExecveFn) else {
        set_errno(libc::ENOSYS);
        return -1;
    };
    let shown = path.get().map_or(&b""[..], CStr::to_bytes);
    // SAFETY: the real execve with the caller's arguments and our envp.
    unsafe { with_env(call, shown, envp, |env| real(path.as_ptr(), argv, env)) }
        .unwrap_or_else(fail)
}

/// A call that failed with `e`: -1 and errno.
fn fail(e: c_int) -> c_int {
    set_errno(e);
    -1
}

/// The `PATH` glibc searches: the caller's, else the default.
pub(super) fn search_path() -> &'static [u8] {
    // SAFETY: getenv of a C string; the value lives as long as the env entry.
    let p = unsafe { libc::getenv(c"PATH".as_ptr()) };
    if p.is_null() {
        program::DEFAULT_PATH
    } else {
        // SAFETY: a C string from the environment.
        unsafe { CStr::from_ptr(p) }.to_bytes()
    }
}

/// Stack room for a `PATH` candidate; a longer one moves to a mapping.
pub(super) const CANDIDATE_INLINE: usize = 256;

/// `dir/file\0` into `buf` (`dir` a [`program::path_dirs`] entry); `None` if it is longer than a path can be (or
/// no mapping can be made for it).
pub(super) fn join<'a, const N: usize>(
    dir: &[u8],
    file: &[u8],
    buf: &'a mut Spill<N>,
) -> Option<&'a CStr> {
    let n = program::candidate_len(dir, file);
    if n + 1 > PATH_CAP {
        return None;
    }
    buf.reserve(n + 1, 0).ok()?;
    let bytes = program::candidate(dir, file).chain([0]);
    for (o, b) in buf.buf().iter_mut().zip(bytes) {
        o.write(b);
    }
    // SAFETY: the first n + 1 bytes were written just above.
    CStr::from_bytes_with_nul(unsafe { buf.bytes(n + 1) }).ok()
}

/// glibc's fallback for a file the kernel cannot execute: run it with /bin/sh.
///
/// # Safety
/// `argv` and `envp` as execve(2) requires them (NULL-terminated arrays of
/// C strings).
///
/// Its argv, `/bin/sh`, the file, the caller's arguments after the first,
/// is built on the stack while it fits, else in a mapping: never on the
/// heap (this may run in a `vfork` child). `E2BIG` when no room can be made.
unsafe fn script(
    call: &'static str,
    check: impl PathCheck,
    path: CArg<'_>,
    argv: Argv,
    envp: Argv,
) -> c_int {
    let mut buf = Spill::<SH_ARGV_INLINE>::new();
    // SAFETY: the caller's argv.
    let Some(args) = (unsafe { sh_argv(path, argv, &mut buf) }) else {
        return fail(libc::E2BIG);
    };
    // SAFETY: forwarded.
    unsafe { exec_path(call, check, CArg::of(c"/bin/sh"), args, envp) }
}

/// Stack room for the `/bin/sh` fallback's argv (32 pointers).
const SH_ARGV_INLINE: usize = 32 * std::mem::size_of::<*const c_char>();

/// `["/bin/sh", path, argv[1..], NULL]` in `buf`; `None` when no room can
/// be made.
///
/// # Safety
/// `argv` a NULL-terminated array of C strings (or NULL).
unsafe fn sh_argv<const N: usize>(path: CArg<'_>, argv: Argv, buf: &mut Spill<N>) -> Option<Argv> {
    // SAFETY: the caller's argv.
    let count = 2 + unsafe { entries(argv) }.skip(1).count() + 1;
    let size = std::mem::size_of::<*const c_char>();
    let align = std::mem::align_of::<*const c_char>();
    buf.reserve(count.checked_mul(size)?.checked_add(align)?, 0)
        .ok()?;
    let b = buf.buf();
    let skip = b.as_mut_ptr().align_offset(align);
    // SAFETY: `skip + count` pointers fit (one alignment's slack reserved
    // above) and the start is aligned; every slot is written below.
    let slots = unsafe {
        std::slice::from_raw_parts_mut(b.as_mut_ptr().add(skip).cast::<*const c_char>(), count)
    };
    slots[0] = c"/bin/sh".as_ptr();
    slots[1] = path.as_ptr();
    let mut n = 2;
    // SAFETY: as above; argv[0] is replaced by the script's path.
    for a in unsafe { entries(argv) }.skip(1).take(count - 3) {
        slots[n] = a;
        n += 1;
    }
    slots[n] = std::ptr::null();
    Some(slots.as_ptr())
}

/// execvpe(3), glibc's search: each `PATH` entry in turn, every candidate
/// checked (by the row's `check`); EACCES remembered, "not there" errors
/// skipped.
///
/// # Safety
/// `argv` and `envp` as execve(2) requires them (NULL-terminated arrays of
/// C strings).
pub(super) unsafe fn exec_search(
    call: &'static str,
    check: impl PathCheck,
    file: CArg<'_>,
    argv: Argv,
    envp: Argv,
) -> c_int {
    // SAFETY: forwarded.
    unsafe { exec_search_in(call, check, file, search_path(), argv, envp) }
}

/// The search of [`exec_search`] along `dirs` (a `PATH` value).
///
/// # Safety
/// As [`exec_search`].
pub(super) unsafe fn exec_search_in(
    call: &'static str,
    check: impl PathCheck,
    file: CArg<'_>,
    dirs: &[u8],
    argv: Argv,
    envp: Argv,
) -> c_int {
    let Some(name) = file.get() else {
        set_errno(libc::EFAULT);
        return -1;
    };
    let name = name.to_bytes();
    if name.is_empty() {
        set_errno(libc::ENOENT);
        return -1;
    }
    if name.contains(&b'/') {
        // SAFETY: forwarded.
        unsafe {
            exec_path(call, check, file, argv, envp);
            if guard::errno() == libc::ENOEXEC {
                script(call, check, file, argv, envp);
            }
        }
        return -1;
    }
    let mut eacces = false;
    let mut buf = Spill::<CANDIDATE_INLINE>::new();
    for dir in program::path_dirs(dirs) {
        let Some(cand) = join(dir, name, &mut buf) else {
            continue;
        };
        // SAFETY: forwarded.
        unsafe { exec_path(call, check, CArg::of(cand), argv, envp) };
        match guard::errno() {
            libc::EACCES => eacces = true,
            libc::ENOENT | libc::ESTALE | libc::ENOTDIR | libc::ENODEV | libc::ETIMEDOUT => {}
            libc::ENOEXEC => {
                // SAFETY: forwarded.
                return unsafe { script(call, check, CArg::of(cand), argv, envp) };
            }
            _ => return -1,
        }
    }
    set_errno(if eacces { libc::EACCES } else { libc::ENOENT });
    -1
}

/// execveat(2) through the object checked ([`super::bound`]); `checked`,
/// the row's check by path, only for a program that cannot be opened.
///
/// # Safety
/// `argv` and `envp` as execve(2) requires them (NULL-terminated arrays of
/// C strings).
#[cfg(target_os = "linux")]
pub(super) unsafe fn execveat_checked(
    checked: impl FnOnce() -> Result<(), c_int>,
    dirfd: c_int,
    path: CArg<'_>,
    argv: Argv,
    envp: Argv,
    flags: c_int,
) -> c_int {
    let follow = crate::hooks::at_follow(flags, path);
    // Flags execveat does not take fail as bare, before anything is opened.
    if flags & !(libc::AT_EMPTY_PATH | libc::AT_SYMLINK_NOFOLLOW) != 0 {
        return fail(libc::EINVAL);
    }
    let name = match path.get() {
        _ if follow == Follow::Fd => Name::DevFd(dirfd, None),
        Some(p) if dirfd == libc::AT_FDCWD || p.to_bytes().first() == Some(&b'/') => Name::Path(p),
        Some(p) => Name::DevFd(dirfd, Some(p)),
        None => return fail(libc::EFAULT),
    };
    // SAFETY: forwarded.
    unsafe { super::bound::exec_bound("execveat", checked, dirfd, path, follow, name, argv, envp) }
}

/// fexecve(3) through the caller's descriptor, judged by its own bytes
/// ([`super::bound`]); `checked`, the row's check, only for a descriptor
/// that cannot be reopened for reading.
///
/// # Safety
/// `argv` and `envp` as execve(2) requires them (NULL-terminated arrays of
/// C strings).
#[cfg(target_os = "linux")]
pub(super) unsafe fn fexecve_checked(
    checked: impl FnOnce() -> Result<(), c_int>,
    fd: c_int,
    argv: Argv,
    envp: Argv,
) -> c_int {
    // SAFETY: forwarded.
    unsafe {
        super::bound::exec_bound(
            "fexecve",
            checked,
            fd,
            CArg::NULL,
            Follow::Fd,
            Name::DevFd(fd, None),
            argv,
            envp,
        )
    }
}

/// dlopen(3) of a file named by path (with a `/`) loads code from it: the
/// row's check, else 0 (the shim's `dlopen` then tail-calls the real one,
/// so that the caller's RUNPATH and `$ORIGIN` still apply).
#[cfg(target_os = "linux")]
pub(super) fn dlopen_checked(check: impl PathCheck, name: CArg<'_>) -> c_int {
    if !name.get().is_some_and(|n| n.to_bytes().contains(&b'/')) {
        return 0;
    }
    match check(name) {
        Ok(()) => 0,
        Err(e) => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_path_entries() {
        let mut buf = Spill::<16>::new();
        assert_eq!(join(b"/bin", b"ls", &mut buf).unwrap(), c"/bin/ls");
        assert_eq!(join(b"", b"ls", &mut buf).unwrap(), c"./ls");
        // Longer than the stack room: in a mapping.
        let long = [b'd'; 300];
        let mut want = long.to_vec();
        want.extend_from_slice(b"/ls");
        assert_eq!(join(&long, b"ls", &mut buf).unwrap().to_bytes(), want);
        // Longer than any path.
        assert!(join(&[b'd'; PATH_CAP], b"ls", &mut buf).is_none());
    }
}
