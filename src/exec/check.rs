//! The exec check: the program's `exec` access, each `#!` interpreter it
//! runs, and whether the library can follow it (static: no `PT_INTERP`, or
//! on macOS a Mach-O image without `LC_LOAD_DYLINKER`; set-id: the loader
//! drops `LD_PRELOAD`; on macOS, SIP, the hardened runtime and
//! `CS_RESTRICT`: dyld drops `DYLD_INSERT_LIBRARIES`).

use std::ffi::{c_int, CStr};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};

use fsguard_policy::{Access, Rule, UnguardedExec};
use libc::AT_FDCWD;
use rustix::fs::{Mode, OFlags, CWD};

use crate::guard::{self, set_errno, CArg, Target};
use crate::resolve::{self, Follow};

/// Why the library cannot follow a program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unguarded {
    Static,
    Setid,
    /// A Go program, dynamic (cgo) or static: its runtime makes its own
    /// system calls for all file I/O, so the library sees none of them.
    /// (On macOS Go calls libSystem, which the library does see.)
    #[cfg(not(target_os = "macos"))]
    Go,
    /// macOS: under a directory System Integrity Protection guards, or
    /// flagged `SF_RESTRICTED`.
    #[cfg(target_os = "macos")]
    Sip,
    /// macOS: signed with the hardened runtime without the entitlement
    /// that keeps `DYLD_*`, or with `CS_RESTRICT`.
    #[cfg(target_os = "macos")]
    Hardened,
}

impl Unguarded {
    fn as_str(self) -> &'static str {
        match self {
            Unguarded::Static => "static",
            Unguarded::Setid => "setid",
            #[cfg(not(target_os = "macos"))]
            Unguarded::Go => "go",
            #[cfg(target_os = "macos")]
            Unguarded::Sip => "sip",
            #[cfg(target_os = "macos")]
            Unguarded::Hardened => "hardened",
        }
    }

    /// Refused unless `unguarded_exec = allow`, even under `warn`: macOS
    /// strips the library from a SIP-protected program without a word, and
    /// `/bin/sh` and `/usr/bin/env` are among them, so a warning would come
    /// for nearly every child and leave each unguarded. The same holds for
    /// hardened-runtime programs (most of what Apple and vendors ship).
    fn always_refused(self) -> bool {
        #[cfg(target_os = "macos")]
        if matches!(self, Unguarded::Sip | Unguarded::Hardened) {
            return true;
        }
        false
    }
}

/// The exec check of a row's one target, the program: its access (`exec`),
/// each `#!` interpreter it runs, then whether the library can follow it.
/// `Err(errno)` refuses the exec. The `by` of the exec rows' `check fn`.
pub(crate) fn exec_check(call: &'static str, targets: &[Target<'_>; 1]) -> Result<(), c_int> {
    guard::check(call, targets)?;
    let [t] = targets;
    check_interpreters(call, t.dirfd, t.path, t.follow)?;
    unguarded(call, t.dirfd, t.path, t.follow)
}

/// The `unguarded_exec` setting applied to a program the library cannot
/// follow (static, set-id).
#[inline(never)]
fn unguarded(
    call: &'static str,
    dirfd: c_int,
    path: CArg<'_>,
    follow: Follow,
) -> Result<(), c_int> {
    let Some(g) = guard::get() else { return Ok(()) };
    let setting = g.policy.settings().unguarded_exec;
    if setting == UnguardedExec::Allow {
        return Ok(());
    }
    let saved = guard::errno();
    let r = std::panic::catch_unwind(|| {
        let Some((kind, fd)) = inspect(dirfd, path, follow) else {
            return Ok(());
        };
        judge(g, call, kind, fd.as_fd())
    })
    .unwrap_or_else(|_| Err(g.internal_error(call, Access::Exec, shown(path), None)));
    set_errno(saved);
    r
}

/// The `unguarded_exec` setting applied to the program open at `fd`, read
/// through that descriptor (not a `#!` script: its interpreter is looked
/// at on its own). `Err(errno)` refuses the exec.
#[cfg(target_os = "linux")]
#[inline(never)]
pub(super) fn unguarded_fd(call: &'static str, fd: BorrowedFd<'_>) -> Result<(), c_int> {
    let Some(g) = guard::get() else { return Ok(()) };
    if g.policy.settings().unguarded_exec == UnguardedExec::Allow {
        return Ok(());
    }
    let saved = guard::errno();
    let r = std::panic::catch_unwind(|| match classify(fd, false) {
        Some(kind) => judge(g, call, kind, fd),
        None => Ok(()),
    })
    .unwrap_or_else(|_| Err(g.internal_error(call, Access::Exec, b"?", None)));
    set_errno(saved);
    r
}

/// The setting's verdict on a program of `kind` open at `fd`: a refusal or
/// a warning names it by its path.
fn judge(
    g: &guard::Guard,
    call: &'static str,
    kind: Unguarded,
    fd: BorrowedFd<'_>,
) -> Result<(), c_int> {
    let mut resolved = resolve::PathBuf::new();
    let shown: &[u8] = match resolve::fd_path(fd.as_raw_fd(), &mut resolved) {
        Ok(()) => resolved.as_bytes(),
        Err(_) => b"?",
    };
    match g.policy.settings().unguarded_exec {
        _ if kind.always_refused() => {
            g.refuse(call, Access::Exec, shown, Rule::Unguarded(kind.as_str()))
        }
        UnguardedExec::Deny => g.refuse(call, Access::Exec, shown, Rule::Unguarded(kind.as_str())),
        _ => {
            g.sink.unguarded(call, kind.as_str(), shown);
            Ok(())
        }
    }
}

/// A script runs its `#!` interpreter (which may itself be a script, up to
/// the kernel's five): each is executed too, so each is checked.
/// Never inlined, nor is [`unguarded`]: their buffers are not on the stack
/// while the program's own check runs.
#[inline(never)]
fn check_interpreters(
    call: &'static str,
    dirfd: c_int,
    path: CArg<'_>,
    follow: Follow,
) -> Result<(), c_int> {
    let Some(g) = guard::get() else {
        return Ok(());
    };
    let saved = guard::errno();
    let r = std::panic::catch_unwind(|| {
        let Some(mut fd) = open_exec(dirfd, path, follow) else {
            return unreadable(call, dirfd, path, follow);
        };
        for _ in 0..5 {
            let mut head = [0u8; HEAD + 1];
            let Ok(n) = rustix::io::pread(&fd, &mut head[..HEAD], 0) else {
                return Ok(());
            };
            let Some(c) = shebang(&mut head, n) else {
                return Ok(());
            };
            guard::check(
                call,
                &[Target {
                    access: Some(Access::Exec),
                    follow: Follow::Yes,
                    dirfd: AT_FDCWD,
                    path: CArg::of(c),
                    moves: false,
                    handle: false,
                }],
            )?;
            match rustix::fs::openat(CWD, c, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty()) {
                Ok(next) => fd = next,
                Err(_) => return unreadable(call, AT_FDCWD, CArg::of(c), Follow::Yes),
            }
        }
        Ok(())
    })
    .unwrap_or_else(|_| Err(g.internal_error(call, Access::Exec, shown(path), None)));
    if r.is_ok() {
        set_errno(saved);
    }
    r
}

/// A program's path as the caller passed it, for the trace of a check
/// that failed inside this library.
fn shown<'a>(path: CArg<'a>) -> &'a [u8] {
    path.get().map_or(&b"?"[..], CStr::to_bytes)
}

/// Bytes of a file's head read for its `#!` line, as the kernel reads it.
const HEAD: usize = 256;

/// The interpreter a `#!` line names, NUL-terminated in place in `head`
/// (one byte longer than the `n` bytes read); `None` for no `#!`.
fn shebang(head: &mut [u8; HEAD + 1], n: usize) -> Option<&CStr> {
    let r = fsguard_policy::program::interpreter(&head[..n.min(HEAD)])?;
    // At most HEAD: inside the buffer.
    head[r.end] = 0;
    CStr::from_bytes_until_nul(&head[r.start..=r.end]).ok()
}

/// A file that exists but cannot be read here (execute-only) may still be a
/// script whose interpreter the kernel runs: unknowable, so refused. A file
/// that does not exist is left to the kernel's own error.
fn unreadable(
    call: &'static str,
    dirfd: c_int,
    path: CArg<'_>,
    follow: Follow,
) -> Result<(), c_int> {
    if follow == Follow::Fd {
        return Ok(());
    }
    let Some(p) = path.get() else {
        return Ok(());
    };
    let dir = match dirfd {
        AT_FDCWD => CWD,
        d if d < 0 => return Ok(()),
        // SAFETY: only passed to openat, which checks it.
        d => unsafe { BorrowedFd::borrow_raw(d) },
    };
    match crate::sys::open_ref(dir, p, OFlags::empty()) {
        Ok(_) => match guard::get() {
            Some(g) => g.refuse(call, Access::Exec, p.to_bytes(), Rule::Unresolved),
            None => Ok(()),
        },
        Err(_) => Ok(()),
    }
}

/// Opens what will be executed and says whether the library can follow it.
/// Files it cannot read are not judged (the kernel may still run them).
fn inspect(dirfd: c_int, path: CArg<'_>, follow: Follow) -> Option<(Unguarded, OwnedFd)> {
    let fd = open_exec(dirfd, path, follow)?;
    let kind = classify(fd.as_fd(), true)?;
    Some((kind, fd))
}

fn open_exec(dirfd: c_int, path: CArg<'_>, follow: Follow) -> Option<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::CLOEXEC;
    if follow == Follow::Fd {
        if dirfd < 0 {
            return None;
        }
        #[cfg(target_os = "linux")]
        {
            let mut link = [0u8; crate::sys::FD_LINK_MAX + 1];
            let n = crate::sys::fd_link(dirfd, &mut link);
            let s = CStr::from_bytes_with_nul(&link[..=n]).ok()?;
            return rustix::fs::openat(CWD, s, flags, Mode::empty()).ok();
        }
        // No exec row takes an fd on Darwin (no fexecve); read through a
        // duplicate (pread leaves the caller's offset alone).
        // SAFETY: dirfd >= 0, only duplicated here.
        #[cfg(not(target_os = "linux"))]
        return rustix::io::fcntl_dupfd_cloexec(unsafe { BorrowedFd::borrow_raw(dirfd) }, 3).ok();
    }
    let p = path.get()?;
    let flags = if matches!(follow, Follow::Entry | Follow::NoFollow) {
        flags | OFlags::NOFOLLOW
    } else {
        flags
    };
    let dir = if dirfd == AT_FDCWD {
        CWD
    } else if dirfd < 0 {
        return None;
    } else {
        // SAFETY: used only for the openat below, which checks it.
        unsafe { BorrowedFd::borrow_raw(dirfd) }
    };
    rustix::fs::openat(dir, p, flags, Mode::empty()).ok()
}

/// Static (no `PT_INTERP`), set-id (the loader would run it in secure mode),
/// Go (its own system calls), or a script whose interpreter is one of those.
fn classify(fd: BorrowedFd<'_>, follow_script: bool) -> Option<Unguarded> {
    let st = rustix::fs::fstat(fd).ok()?;
    let mut head = [0u8; HEAD + 1];
    let n = rustix::io::pread(fd, &mut head[..HEAD], 0).ok()?;
    if follow_script {
        if let Some(interp) = shebang(&mut head, n) {
            let ifd =
                rustix::fs::openat(CWD, interp, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
                    .ok()?;
            return classify(ifd.as_fd(), false);
        }
    }
    let head = &head[..n];
    if setid_effective(&st) {
        return Some(Unguarded::Setid);
    }
    #[cfg(not(target_os = "macos"))]
    if head.len() >= 4 && &head[..4] == b"\x7fELF" {
        use fsguard_policy::program::ElfKind;
        match elf_kind(fd, head)? {
            ElfKind::Static => return Some(Unguarded::Static),
            ElfKind::Go { .. } => return Some(Unguarded::Go),
            ElfKind::Dynamic => {}
        }
    }
    #[cfg(target_os = "macos")]
    if let Some(kind) = darwin_kind(fd, &st, head) {
        return Some(kind);
    }
    None
}

/// macOS: a Mach-O program without dyld (static: nothing reads
/// `DYLD_INSERT_LIBRARIES`), or one dyld strips `DYLD_*` from (SIP: by its
/// path with symlinks resolved, `F_GETPATH`, or its `SF_RESTRICTED` flag;
/// `fsguard_policy::program::sip_protected`, which the CLI uses too), or
/// by its code signature ([`dyld_strips`]).
#[cfg(target_os = "macos")]
fn darwin_kind(fd: BorrowedFd<'_>, st: &rustix::fs::Stat, head: &[u8]) -> Option<Unguarded> {
    let read = |off, buf: &mut [u8]| rustix::io::pread(fd, buf, off).ok();
    if fsguard_policy::macho::macho_dynamic(head, 4096, read) == Some(false) {
        return Some(Unguarded::Static);
    }
    if sip(fd, st) {
        return Some(Unguarded::Sip);
    }
    // Only a Mach-O file has a code signature dyld reads.
    (fsguard_policy::macho::is_macho(head) && dyld_strips(fd)).then_some(Unguarded::Hardened)
}

/// macOS: whether the program lies under a directory SIP guards (by its
/// path with symlinks resolved, `F_GETPATH`) or carries `SF_RESTRICTED`.
/// Never inlined: its path buffer is off the stack before [`dyld_strips`].
#[cfg(target_os = "macos")]
#[inline(never)]
fn sip(fd: BorrowedFd<'_>, st: &rustix::fs::Stat) -> bool {
    let mut path = resolve::PathBuf::new();
    if resolve::fd_path(fd.as_raw_fd(), &mut path).is_err() {
        // No name for the file: it cannot be shown to lie outside the
        // protected directories (fail closed).
        return true;
    }
    fsguard_policy::program::sip_protected(path.as_bytes(), st.st_flags)
}

/// The CPU type dyld runs a program as from this process: the library's
/// own architecture (under Rosetta an x86_64 process starts a universal
/// program's x86_64 slice; `fsguard_policy::macho::host_slice` picks it).
#[cfg(all(target_os = "macos", target_arch = "aarch64"))]
const HOST_CPU: u32 = fsguard_policy::macho::CPU_ARM64;
#[cfg(all(target_os = "macos", target_arch = "x86_64"))]
const HOST_CPU: u32 = fsguard_policy::macho::CPU_X86_64;

/// The most entitlement bytes read; a program with more is taken as
/// lacking the entitlement (fail closed). The largest real lists are a few
/// KiB.
#[cfg(target_os = "macos")]
const ENTITLEMENTS_MAX: usize = 16 * 1024;

/// macOS: whether the code signature of the slice dyld would run makes it
/// strip `DYLD_INSERT_LIBRARIES` (the hardened runtime without
/// `com.apple.security.cs.allow-dyld-environment-variables`, or
/// `CS_RESTRICT`: `<kern/cs_blobs.h>`; `fsguard_policy::macho::stripped_for`,
/// the reading the CLI's `signature` shares). The entitlements are read
/// into an anonymous mapping, not the stack (a hook may run on an 8 KiB
/// signal stack) nor the heap (it may run in a vfork child). Never inlined:
/// its buffers are not on the stack while the rest of the check runs.
#[cfg(target_os = "macos")]
#[inline(never)]
fn dyld_strips(fd: BorrowedFd<'_>) -> bool {
    let mut ents = resolve::Spill::<0>::new();
    if ents.reserve(ENTITLEMENTS_MAX, 0).is_err() {
        // Nowhere to read the entitlements into: fail closed.
        return true;
    }
    let buf = ents.buf();
    buf.fill(std::mem::MaybeUninit::new(0));
    // SAFETY: every byte was written just above; u8 and MaybeUninit<u8>
    // share a layout.
    let buf = unsafe { &mut *(std::ptr::from_mut(buf) as *mut [u8]) };
    let read = |off, b: &mut [u8]| rustix::io::pread(fd, b, off).ok();
    fsguard_policy::macho::stripped_for(read, HOST_CPU, buf).is_some()
}

/// Set-id bits the kernel will honour: not under `no_new_privs`, and only if
/// they change the credentials.
fn setid_effective(st: &rustix::fs::Stat) -> bool {
    let mode = st.st_mode;
    let suid = mode & libc::S_ISUID != 0 && st.st_uid != rustix::process::geteuid().as_raw();
    let sgid = mode & libc::S_ISGID != 0
        && mode & libc::S_IXGRP != 0
        && st.st_gid != rustix::process::getegid().as_raw();
    if !(suid || sgid) {
        return false;
    }
    !crate::sys::no_new_privs()
}

/// Whether an ELF program is dynamic, static or Go's. As many program
/// headers as 4 KiB hold are looked at.
#[cfg(not(target_os = "macos"))]
#[inline(never)]
fn elf_kind(fd: BorrowedFd<'_>, head: &[u8]) -> Option<fsguard_policy::program::ElfKind> {
    fsguard_policy::program::elf_kind(head, 4096, |off, buf| rustix::io::pread(fd, buf, off).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interp(text: &[u8]) -> Option<Vec<u8>> {
        let mut head = [0u8; HEAD + 1];
        let n = text.len().min(HEAD);
        head[..n].copy_from_slice(&text[..n]);
        shebang(&mut head, n).map(|c| c.to_bytes().to_vec())
    }

    #[test]
    fn reads_the_shebang_interpreter() {
        assert_eq!(interp(b"#!/bin/sh\necho"), Some(b"/bin/sh".to_vec()));
        assert_eq!(
            interp(b"#!  /usr/bin/env python3 -u\n"),
            Some(b"/usr/bin/env".to_vec())
        );
        assert_eq!(interp(b"#!\n/bin/sh"), None);
        assert_eq!(interp(b"\x7fELF"), None);
        // Cut at the head's end, as the kernel reads it.
        let mut long = b"#!/".to_vec();
        long.extend([b'x'; 400]);
        assert_eq!(interp(&long).map(|v| v.len()), Some(HEAD - 2));
    }
}
