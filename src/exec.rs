//! Children never slip out: every way a process starts a program.
//!
//! Each exec is an `exec` check of the program that will run (for the `p`
//! variants, found on `PATH` the way glibc finds it), and hands the child a
//! new environment: `LD_PRELOAD` with this library first and
//! `FSGUARD_POLICY_FD`, an inherited sealed memfd holding the policy as it
//! was frozen at load ([`crate::handoff`]), whatever the caller passed or
//! unset. The caller's envp is never edited in place.
//!
//! glibc's `system`, `popen` and `posix_spawn` exec through internal calls no
//! hook sees, so they are hooked themselves; `posix_spawn` runs the child in
//! a `CLONE_VM|CLONE_VFORK` clone, so its envp is built before the real call.
//! `system` and `popen` are written out here on the real `posix_spawn` with
//! that envp (glibc's read the global `environ`), and `pclose` with them.
//!
//! A program the library cannot follow (statically linked: no `PT_INTERP`;
//! set-id without `no_new_privs`: the loader drops `LD_PRELOAD`) is handled
//! by the `unguarded_exec` setting: warn (a trace line), deny, or allow.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicI32, AtomicPtr, Ordering};

use fsguard_policy::{Access, Rule, UnguardedExec};
use libc::{pid_t, posix_spawn_file_actions_t, posix_spawnattr_t, AT_FDCWD, FILE};
use rustix::fs::{Mode, OFlags, CWD};

use crate::guard::{self, set_errno, CArg, Target};
use crate::hooks::{at_follow, CheckInfo, HookInfo};
use crate::real::real;
use crate::resolve::{self, Follow};

type Argv = *const *const c_char;

type ExecveFn = unsafe extern "C" fn(*const c_char, Argv, Argv) -> c_int;
type ExecveatFn = unsafe extern "C" fn(c_int, *const c_char, Argv, Argv, c_int) -> c_int;
type FexecveFn = unsafe extern "C" fn(c_int, Argv, Argv) -> c_int;
type SpawnFn = unsafe extern "C" fn(
    *mut pid_t,
    *const c_char,
    *const posix_spawn_file_actions_t,
    *const posix_spawnattr_t,
    Argv,
    Argv,
) -> c_int;
type PcloseFn = unsafe extern "C" fn(*mut FILE) -> c_int;

extern "C" {
    static mut environ: Argv;
}

/// What every child gets, fixed at load.
struct ChildEnv {
    /// Absolute path of this library.
    lib: Box<[u8]>,
    /// The frozen settings, handed over in a memfd.
    frozen: Box<[u8]>,
    /// `FSGUARD_REPORT_FD=N` when a supervisor listens.
    report: Option<CString>,
}

static CHILD: AtomicPtr<ChildEnv> = AtomicPtr::new(std::ptr::null_mut());

fn child_env() -> Option<&'static ChildEnv> {
    // SAFETY: set once in `init` to a leaked Box, never freed.
    unsafe { CHILD.load(Ordering::Acquire).as_ref() }
}

/// Called from the constructor once the policy is frozen.
pub(crate) fn init(frozen: &str, report_fd: Option<i32>) -> Result<(), String> {
    let lib = own_path().ok_or("cannot find the library's own path (dladdr)")?;
    let child = ChildEnv {
        lib: lib.into_boxed_slice(),
        frozen: frozen.as_bytes().into(),
        report: report_fd.map(|fd| CString::new(format!("FSGUARD_REPORT_FD={fd}")).unwrap()),
    };
    CHILD.store(Box::into_raw(Box::new(child)), Ordering::Release);
    Ok(())
}

/// This library's absolute path: the object that holds one of our functions.
fn own_path() -> Option<Vec<u8>> {
    // SAFETY: zeroed Dl_info is a valid out-parameter.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: any address inside a loaded object may be passed.
    let ok = unsafe { libc::dladdr(init as *const c_void, &mut info) };
    if ok == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dladdr hands back a C string owned by the loader.
    let name = unsafe { CStr::from_ptr(info.dli_fname) }.to_bytes();
    let name = <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(name);
    let abs = std::fs::canonicalize(name).ok()?;
    Some(abs.into_os_string().into_encoded_bytes())
}

// ---------------------------------------------------------------------------
// The child's environment.

const PRELOAD: &[u8] = b"LD_PRELOAD=";
/// Stack room: most environments fit, so a `vfork` child builds its envp
/// without touching the (shared) heap.
const STACK_VARS: usize = 512;
const STACK_PRELOAD: usize = 4096;

/// Entries of a NULL-terminated array (NULL counts as empty, as the kernel does).
///
/// # Safety
/// `envp` NULL or a NULL-terminated array of C strings that outlive the call.
unsafe fn entries<'a>(envp: Argv) -> impl Iterator<Item = *const c_char> + 'a {
    let mut p = envp;
    std::iter::from_fn(move || {
        // SAFETY: the caller's NULL-terminated array of C strings.
        unsafe {
            if p.is_null() || (*p).is_null() {
                return None;
            }
            let e = *p;
            p = p.add(1);
            Some(e)
        }
    })
}

fn drop_var(kv: &[u8]) -> bool {
    kv.starts_with(PRELOAD) || kv.starts_with(b"FSGUARD_")
}

/// The caller's `LD_PRELOAD` value (the last one wins, as in getenv).
///
/// # Safety
/// As [`entries`].
unsafe fn caller_preload(envp: Argv) -> &'static [u8] {
    let mut v: &[u8] = b"";
    // SAFETY: as in `entries`.
    for e in unsafe { entries(envp) } {
        // SAFETY: each entry is a C string.
        let kv = unsafe { CStr::from_ptr(e) }.to_bytes();
        if let Some(rest) = kv.strip_prefix(PRELOAD) {
            // SAFETY: the caller's strings outlive the exec call.
            v = unsafe { std::slice::from_raw_parts(rest.as_ptr(), rest.len()) };
        }
    }
    v
}

/// `LD_PRELOAD=<lib>[:<caller's others>]\0` into `out`; returns the length
/// used, or the length needed if `out` is too small.
fn preload_entry(lib: &[u8], old: &[u8], out: &mut [u8]) -> usize {
    let mut n = 0;
    let mut put = |b: &[u8], out: &mut [u8]| {
        if n + b.len() <= out.len() {
            out[n..n + b.len()].copy_from_slice(b);
        }
        n += b.len();
    };
    put(PRELOAD, out);
    put(lib, out);
    for tok in old.split(|&c| c == b':' || c == b' ') {
        if tok.is_empty() || tok == lib {
            continue;
        }
        put(b":", out);
        put(tok, out);
    }
    put(b"\0", out);
    n
}

/// Runs `f` with the child's envp: the caller's minus `LD_PRELOAD` and every
/// `FSGUARD_*`, plus ours. Built on the stack when it fits.
///
/// # Safety
/// As [`entries`].
unsafe fn with_env<R>(envp: Argv, f: impl FnOnce(Argv) -> R) -> R {
    let Some(ce) = child_env() else {
        return f(envp);
    };
    // SAFETY: the caller's envp.
    let old = unsafe { caller_preload(envp) };
    // SAFETY: as above.
    let count = unsafe { entries(envp) }.count();
    let need_vars = count + 4;
    let mut stack_pre = [0u8; STACK_PRELOAD];
    let need_pre = preload_entry(&ce.lib, old, &mut stack_pre);
    let mut heap_pre = Vec::new();
    let pre: &[u8] = if need_pre <= STACK_PRELOAD {
        &stack_pre[..need_pre]
    } else {
        heap_pre.resize(need_pre, 0);
        preload_entry(&ce.lib, old, &mut heap_pre);
        &heap_pre
    };
    let mut stack_vars = [std::ptr::null::<c_char>(); STACK_VARS];
    let mut heap_vars = Vec::new();
    let vars: &mut [*const c_char] = if need_vars <= STACK_VARS {
        &mut stack_vars[..]
    } else {
        heap_vars.resize(need_vars, std::ptr::null());
        &mut heap_vars[..]
    };
    // No fd for the policy: `-1`, which the child refuses (fail closed).
    let handoff = crate::handoff::ForChild::new(&ce.frozen);
    let mut policy = [0u8; 40];
    let mut n = 0;
    vars[n] = pre.as_ptr().cast();
    n += 1;
    vars[n] = policy_entry(handoff.as_ref(), &mut policy);
    n += 1;
    // The report pipe, opened again if the program closed it.
    let report = crate::trace::report_for_child(guard::get().map(|g| &g.sink));
    let mut report_buf = [0u8; 40];
    if let Some(r) = ce
        .report
        .as_deref()
        .and_then(|intact| report.entry(intact, &mut report_buf))
    {
        vars[n] = r.as_ptr();
        n += 1;
    }
    // SAFETY: as above.
    for e in unsafe { entries(envp) } {
        // SAFETY: a C string.
        if !drop_var(unsafe { CStr::from_ptr(e) }.to_bytes()) {
            vars[n] = e;
            n += 1;
        }
    }
    vars[n] = std::ptr::null();
    let r = f(vars.as_ptr());
    let saved = guard::errno();
    drop(heap_vars);
    drop(heap_pre);
    drop(handoff);
    drop(report);
    set_errno(saved);
    r
}

/// `FSGUARD_POLICY_FD=N` for `handoff`, or `=-1` when there is none.
fn policy_entry(handoff: Option<&crate::handoff::ForChild>, buf: &mut [u8; 40]) -> *const c_char {
    match handoff {
        Some(h) => {
            h.entry(buf);
        }
        None => {
            let s = b"FSGUARD_POLICY_FD=-1\0";
            buf[..s.len()].copy_from_slice(s);
        }
    }
    buf.as_ptr().cast()
}

// ---------------------------------------------------------------------------
// The checks.

/// Why the library cannot follow a program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unguarded {
    Static,
    Setid,
}

impl Unguarded {
    fn as_str(self) -> &'static str {
        match self {
            Unguarded::Static => "static",
            Unguarded::Setid => "setid",
        }
    }
}

/// The exec check: the program's `exec` access, then whether the library
/// can follow it. `Err(errno)` refuses the exec.
fn exec_check(
    call: &'static str,
    dirfd: c_int,
    path: CArg<'_>,
    follow: Follow,
) -> Result<(), c_int> {
    guard::check(
        call,
        &[Target {
            access: Some(Access::Exec),
            follow,
            dirfd,
            path,
            moves: false,
        }],
    )?;
    check_interpreters(call, dirfd, path, follow)?;
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
        let mut resolved = resolve::PathBuf::new();
        let shown: &[u8] = match resolve::fd_path(fd.as_raw_fd(), &mut resolved) {
            Ok(()) => resolved.as_bytes(),
            Err(_) => b"?",
        };
        match setting {
            UnguardedExec::Deny => {
                g.refuse(call, Access::Exec, shown, Rule::Unguarded(kind.as_str()))
            }
            _ => {
                g.sink.unguarded(call, kind.as_str(), shown);
                Ok(())
            }
        }
    })
    .unwrap_or(Err(libc::EACCES));
    set_errno(saved);
    r
}

/// A script runs its `#!` interpreter (which may itself be a script, up to
/// the kernel's four levels): each is executed too, so each is checked.
fn check_interpreters(
    call: &'static str,
    dirfd: c_int,
    path: CArg<'_>,
    follow: Follow,
) -> Result<(), c_int> {
    if guard::get().is_none() {
        return Ok(());
    }
    let saved = guard::errno();
    let r = std::panic::catch_unwind(|| {
        let Some(mut fd) = open_exec(dirfd, path, follow) else {
            return unreadable(call, dirfd, path, follow);
        };
        for _ in 0..4 {
            let mut head = [0u8; 256];
            let Ok(n) = rustix::io::pread(&fd, &mut head, 0) else {
                return Ok(());
            };
            let Some(interp) = shebang(&head[..n]) else {
                return Ok(());
            };
            // NUL-terminated: `shebang` leaves at least one zero byte.
            let c = CStr::from_bytes_until_nul(&interp).map_err(|_| libc::EACCES)?;
            guard::check(
                call,
                &[Target {
                    access: Some(Access::Exec),
                    follow: Follow::Yes,
                    dirfd: AT_FDCWD,
                    path: CArg::of(c),
                    moves: false,
                }],
            )?;
            match rustix::fs::openat(CWD, c, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty()) {
                Ok(next) => fd = next,
                Err(_) => return unreadable(call, AT_FDCWD, CArg::of(c), Follow::Yes),
            }
        }
        Ok(())
    })
    .unwrap_or(Err(libc::EACCES));
    if r.is_ok() {
        set_errno(saved);
    }
    r
}

/// The interpreter a `#!` line names, NUL-terminated; `None` for no `#!`.
fn shebang(head: &[u8]) -> Option<[u8; 257]> {
    let line = head.strip_prefix(b"#!")?;
    let line = &line[..line.iter().position(|&c| c == b'\n').unwrap_or(line.len())];
    let line = line.trim_ascii_start();
    let end = line
        .iter()
        .position(|c| c.is_ascii_whitespace())
        .unwrap_or(line.len());
    if end == 0 || end > 256 {
        return None;
    }
    let mut interp = [0u8; 257];
    interp[..end].copy_from_slice(&line[..end]);
    Some(interp)
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
    match rustix::fs::openat(dir, p, OFlags::PATH | OFlags::CLOEXEC, Mode::empty()) {
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
        let mut link = [0u8; 32];
        let s = format_fd_link(dirfd, &mut link)?;
        return rustix::fs::openat(CWD, s, flags, Mode::empty()).ok();
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

fn format_fd_link(fd: c_int, buf: &mut [u8; 32]) -> Option<&CStr> {
    use std::io::Write;
    let mut cur = std::io::Cursor::new(&mut buf[..]);
    write!(cur, "/proc/self/fd/{fd}\0").ok()?;
    let n = cur.position() as usize;
    CStr::from_bytes_with_nul(&buf[..n]).ok()
}

/// Static (no `PT_INTERP`), set-id (the loader would run it in secure mode),
/// or a script whose interpreter is one of those.
fn classify(fd: BorrowedFd<'_>, follow_script: bool) -> Option<Unguarded> {
    let st = rustix::fs::fstat(fd).ok()?;
    let mut head = [0u8; 256];
    let n = rustix::io::pread(fd, &mut head, 0).ok()?;
    let head = &head[..n];
    if follow_script {
        if let Some(interp) = shebang(head) {
            let interp = CStr::from_bytes_until_nul(&interp).ok()?;
            let ifd =
                rustix::fs::openat(CWD, interp, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
                    .ok()?;
            return classify(ifd.as_fd(), false);
        }
    }
    if setid_effective(&st) {
        return Some(Unguarded::Setid);
    }
    if head.len() >= 4 && &head[..4] == b"\x7fELF" && !has_interp(fd, head)? {
        return Some(Unguarded::Static);
    }
    None
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
    // SAFETY: PR_GET_NO_NEW_PRIVS takes no pointer.
    let nnp = unsafe { libc::prctl(libc::PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) };
    nnp != 1
}

/// Whether an ELF file names a program interpreter (is dynamically linked).
fn has_interp(fd: BorrowedFd<'_>, head: &[u8]) -> Option<bool> {
    if head.len() < 64 {
        return None;
    }
    let wide = head[4] == 2;
    let le = head[5] == 1;
    let u16_at = |b: &[u8], o: usize| {
        let v = [b[o], b[o + 1]];
        if le {
            u16::from_le_bytes(v)
        } else {
            u16::from_be_bytes(v)
        }
    };
    let u32_at = |b: &[u8], o: usize| {
        let v = [b[o], b[o + 1], b[o + 2], b[o + 3]];
        if le {
            u32::from_le_bytes(v)
        } else {
            u32::from_be_bytes(v)
        }
    };
    let u64_at = |b: &[u8], o: usize| {
        let mut v = [0u8; 8];
        v.copy_from_slice(&b[o..o + 8]);
        if le {
            u64::from_le_bytes(v)
        } else {
            u64::from_be_bytes(v)
        }
    };
    let (phoff, phentsize, phnum) = if wide {
        (u64_at(head, 0x20), u16_at(head, 0x36), u16_at(head, 0x38))
    } else {
        (
            u64::from(u32_at(head, 0x1c)),
            u16_at(head, 0x2a),
            u16_at(head, 0x2c),
        )
    };
    let (ent, num) = (usize::from(phentsize), usize::from(phnum));
    if ent < 4 {
        return None;
    }
    let mut buf = [0u8; 4096];
    let want = (ent * num).min(buf.len() / ent * ent);
    let got = rustix::io::pread(fd, &mut buf[..want], phoff).ok()?;
    const PT_INTERP: u32 = 3;
    Some(
        buf[..got]
            .chunks_exact(ent)
            .any(|ph| u32_at(ph, 0) == PT_INTERP),
    )
}

// ---------------------------------------------------------------------------
// The hooks.

/// The exec check, then the real execve with the child's environment.
///
/// # Safety
/// `argv` and `envp` as execve(2) requires them (NULL-terminated arrays of
/// C strings).
unsafe fn exec_path(call: &'static str, path: CArg<'_>, argv: Argv, envp: Argv) -> c_int {
    if let Err(e) = exec_check(call, AT_FDCWD, path, Follow::Yes) {
        set_errno(e);
        return -1;
    }
    let Some(real) = real!("execve", ExecveFn) else {
        set_errno(libc::ENOSYS);
        return -1;
    };
    // SAFETY: the real execve with the caller's arguments and our envp.
    unsafe { with_env(envp, |env| real(path.as_ptr(), argv, env)) }
}

/// execve(2). Also the target of the shim's `execl` and `execle`.
///
/// # Safety
/// As for the C function: its pointer arguments valid as it requires (a
/// C string NUL-terminated, NULL only where it accepts NULL).
#[no_mangle]
pub unsafe extern "C" fn fsguard_execve(path: *const c_char, argv: Argv, envp: Argv) -> c_int {
    // SAFETY: forwarded, under execve's contract.
    unsafe { exec_path("execve", CArg::new(path), argv, envp) }
}

/// execve(2).
///
/// # Safety
/// As for the C function: its pointer arguments valid as it requires (a
/// C string NUL-terminated, NULL only where it accepts NULL).
#[no_mangle]
pub unsafe extern "C" fn execve(path: *const c_char, argv: Argv, envp: Argv) -> c_int {
    // SAFETY: forwarded, under execve's contract.
    unsafe { exec_path("execve", CArg::new(path), argv, envp) }
}

/// execv(3).
///
/// # Safety
/// As for the C function: its pointer arguments valid as it requires (a
/// C string NUL-terminated, NULL only where it accepts NULL).
#[no_mangle]
pub unsafe extern "C" fn execv(path: *const c_char, argv: Argv) -> c_int {
    // SAFETY: forwarded with the process's environment, under execv's
    // contract.
    unsafe { exec_path("execve", CArg::new(path), argv, environ) }
}

/// The `PATH` glibc searches: the caller's, else the default.
fn search_path() -> &'static [u8] {
    // SAFETY: getenv of a C string; the value lives as long as the env entry.
    let p = unsafe { libc::getenv(c"PATH".as_ptr()) };
    if p.is_null() {
        b"/bin:/usr/bin"
    } else {
        // SAFETY: a C string from the environment.
        unsafe { CStr::from_ptr(p) }.to_bytes()
    }
}

/// `dir/file\0` into `buf`; `None` if it does not fit.
fn join<'a>(dir: &[u8], file: &[u8], buf: &'a mut [u8]) -> Option<&'a CStr> {
    let dir = if dir.is_empty() { b"." } else { dir };
    let n = dir.len() + 1 + file.len();
    if n + 1 > buf.len() {
        return None;
    }
    buf[..dir.len()].copy_from_slice(dir);
    buf[dir.len()] = b'/';
    buf[dir.len() + 1..n].copy_from_slice(file);
    buf[n] = 0;
    CStr::from_bytes_with_nul(&buf[..=n]).ok()
}

/// glibc's fallback for a file the kernel cannot execute: run it with /bin/sh.
///
/// # Safety
/// `argv` and `envp` as execve(2) requires them (NULL-terminated arrays of
/// C strings).
unsafe fn script(call: &'static str, path: CArg<'_>, argv: Argv, envp: Argv) -> c_int {
    let mut args: Vec<*const c_char> = vec![c"/bin/sh".as_ptr(), path.as_ptr()];
    // SAFETY: the caller's argv; argv[0] is replaced by the script's path.
    args.extend(unsafe { entries(argv) }.skip(1));
    args.push(std::ptr::null());
    // SAFETY: forwarded.
    unsafe { exec_path(call, CArg::of(c"/bin/sh"), args.as_ptr(), envp) }
}

/// execvpe(3), glibc's search: each `PATH` entry in turn, every candidate
/// checked; EACCES remembered, "not there" errors skipped.
///
/// # Safety
/// `argv` and `envp` as execve(2) requires them (NULL-terminated arrays of
/// C strings).
unsafe fn exec_search(file: CArg<'_>, argv: Argv, envp: Argv) -> c_int {
    const CALL: &str = "execvp";
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
            exec_path(CALL, file, argv, envp);
            if guard::errno() == libc::ENOEXEC {
                script(CALL, file, argv, envp);
            }
        }
        return -1;
    }
    let mut eacces = false;
    let mut buf = [0u8; 4096 + 256];
    for dir in search_path().split(|&c| c == b':') {
        let Some(cand) = join(dir, name, &mut buf) else {
            continue;
        };
        // SAFETY: forwarded.
        unsafe { exec_path(CALL, CArg::of(cand), argv, envp) };
        match guard::errno() {
            libc::EACCES => eacces = true,
            libc::ENOENT | libc::ESTALE | libc::ENOTDIR | libc::ENODEV | libc::ETIMEDOUT => {}
            libc::ENOEXEC => {
                // SAFETY: forwarded.
                return unsafe { script(CALL, CArg::of(cand), argv, envp) };
            }
            _ => return -1,
        }
    }
    set_errno(if eacces { libc::EACCES } else { libc::ENOENT });
    -1
}

/// execvpe(3). Also the target of the shim's `execlp`.
///
/// # Safety
/// As for the C function: its pointer arguments valid as it requires (a
/// C string NUL-terminated, NULL only where it accepts NULL).
#[no_mangle]
pub unsafe extern "C" fn fsguard_execvpe(file: *const c_char, argv: Argv, envp: Argv) -> c_int {
    // SAFETY: forwarded, under execvpe's contract.
    unsafe { exec_search(CArg::new(file), argv, envp) }
}

/// execvpe(3).
///
/// # Safety
/// As for the C function: its pointer arguments valid as it requires (a
/// C string NUL-terminated, NULL only where it accepts NULL).
#[no_mangle]
pub unsafe extern "C" fn execvpe(file: *const c_char, argv: Argv, envp: Argv) -> c_int {
    // SAFETY: forwarded, under execvpe's contract.
    unsafe { exec_search(CArg::new(file), argv, envp) }
}

/// execvp(3).
///
/// # Safety
/// As for the C function: its pointer arguments valid as it requires (a
/// C string NUL-terminated, NULL only where it accepts NULL).
#[no_mangle]
pub unsafe extern "C" fn execvp(file: *const c_char, argv: Argv) -> c_int {
    // SAFETY: forwarded with the process's environment, under execvp's
    // contract.
    unsafe { exec_search(CArg::new(file), argv, environ) }
}

/// execveat(2).
///
/// # Safety
/// As for the C function: its pointer arguments valid as it requires (a
/// C string NUL-terminated, NULL only where it accepts NULL).
#[no_mangle]
pub unsafe extern "C" fn execveat(
    dirfd: c_int,
    path: *const c_char,
    argv: Argv,
    envp: Argv,
    flags: c_int,
) -> c_int {
    // SAFETY: execveat's path is NULL or a C string (its contract).
    let arg = unsafe { CArg::new(path) };
    if let Err(e) = exec_check("execveat", dirfd, arg, at_follow(flags, arg)) {
        set_errno(e);
        return -1;
    }
    let Some(real) = real!("execveat", ExecveatFn) else {
        set_errno(libc::ENOSYS);
        return -1;
    };
    // SAFETY: the real call with our envp.
    unsafe { with_env(envp, |env| real(dirfd, arg.as_ptr(), argv, env, flags)) }
}

/// fexecve(3).
///
/// # Safety
/// As for the C function: its pointer arguments valid as it requires (a
/// C string NUL-terminated, NULL only where it accepts NULL).
#[no_mangle]
pub unsafe extern "C" fn fexecve(fd: c_int, argv: Argv, envp: Argv) -> c_int {
    if let Err(e) = exec_check("fexecve", fd, CArg::NULL, Follow::Fd) {
        set_errno(e);
        return -1;
    }
    let Some(real) = real!("fexecve", FexecveFn) else {
        set_errno(libc::ENOSYS);
        return -1;
    };
    // SAFETY: the real call with our envp.
    unsafe { with_env(envp, |env| real(fd, argv, env)) }
}

/// posix_spawn: its file actions done here, then [`spawn_prepared`].
///
/// # Safety
/// The pointers as posix_spawn(3) requires them (`fa` NULL or initialised;
/// `argv`, `envp` NULL-terminated arrays of C strings).
unsafe fn spawn_path(
    call: &'static str,
    pid: *mut pid_t,
    path: CArg<'_>,
    fa: *const posix_spawn_file_actions_t,
    attr: *const posix_spawnattr_t,
    argv: Argv,
    envp: Argv,
) -> c_int {
    // SAFETY: the caller's file actions.
    let actions = match unsafe { Actions::prepare(call, fa) } {
        Ok(a) => a,
        Err(e) => return e,
    };
    // SAFETY: forwarded.
    unsafe { spawn_prepared(call, pid, path, &actions, attr, argv, envp) }
}

/// posix_spawn with its file actions already done here (see [`Actions`]);
/// a relative program path is checked against the child's last chdir.
///
/// # Safety
/// The pointers as posix_spawn(3) requires them (`fa` NULL or initialised;
/// `argv`, `envp` NULL-terminated arrays of C strings).
unsafe fn spawn_prepared(
    call: &'static str,
    pid: *mut pid_t,
    path: CArg<'_>,
    actions: &Actions,
    attr: *const posix_spawnattr_t,
    argv: Argv,
    envp: Argv,
) -> c_int {
    if let Err(e) = exec_check(call, actions.cwd, path, Follow::Yes) {
        return e;
    }
    let Some(real) = real!("posix_spawn", SpawnFn) else {
        return libc::ENOSYS;
    };
    let fa = actions.as_ptr();
    // SAFETY: the real call; the envp is complete before the vfork-style clone.
    unsafe { with_env(envp, |env| real(pid, path.as_ptr(), fa, attr, argv, env)) }
}

/// posix_spawn(3).
///
/// # Safety
/// As for the C function: its pointer arguments valid as it requires (a
/// C string NUL-terminated, NULL only where it accepts NULL).
#[no_mangle]
pub unsafe extern "C" fn posix_spawn(
    pid: *mut pid_t,
    path: *const c_char,
    fa: *const posix_spawn_file_actions_t,
    attr: *const posix_spawnattr_t,
    argv: Argv,
    envp: Argv,
) -> c_int {
    // SAFETY: forwarded, under posix_spawn's contract.
    unsafe { spawn_path("posix_spawn", pid, CArg::new(path), fa, attr, argv, envp) }
}

/// posix_spawnp(3): the `PATH` search done here, so the program spawned is
/// the program checked; each candidate goes through `posix_spawn`. The file
/// actions are done once, for all candidates.
///
/// # Safety
/// As for the C function: its pointer arguments valid as it requires (a
/// C string NUL-terminated, NULL only where it accepts NULL).
#[no_mangle]
pub unsafe extern "C" fn posix_spawnp(
    pid: *mut pid_t,
    file: *const c_char,
    fa: *const posix_spawn_file_actions_t,
    attr: *const posix_spawnattr_t,
    argv: Argv,
    envp: Argv,
) -> c_int {
    const CALL: &str = "posix_spawnp";
    // SAFETY: posix_spawnp's file is NULL or a C string (its contract).
    let file = unsafe { CArg::new(file) };
    let Some(name) = file.get() else {
        return libc::EFAULT;
    };
    let name = name.to_bytes();
    if name.is_empty() {
        return libc::ENOENT;
    }
    // SAFETY: the caller's file actions.
    let actions = match unsafe { Actions::prepare(CALL, fa) } {
        Ok(a) => a,
        Err(e) => return e,
    };
    if name.contains(&b'/') {
        // SAFETY: forwarded.
        return unsafe { spawn_prepared(CALL, pid, file, &actions, attr, argv, envp) };
    }
    let mut eacces = false;
    let mut buf = [0u8; 4096 + 256];
    for dir in search_path().split(|&c| c == b':') {
        let Some(cand) = join(dir, name, &mut buf) else {
            continue;
        };
        // Skip what is not there without spawning a child for it.
        match rustix::fs::access(cand, rustix::fs::Access::EXEC_OK) {
            Ok(()) => {}
            Err(rustix::io::Errno::ACCESS) => {
                eacces = true;
                continue;
            }
            Err(_) => continue,
        }
        // SAFETY: forwarded.
        match unsafe { spawn_prepared(CALL, pid, CArg::of(cand), &actions, attr, argv, envp) } {
            libc::EACCES => eacces = true,
            libc::ENOENT | libc::ESTALE | libc::ENOTDIR | libc::ENODEV | libc::ETIMEDOUT => {}
            r => return r,
        }
    }
    if eacces {
        libc::EACCES
    } else {
        libc::ENOENT
    }
}

// ---------------------------------------------------------------------------
// system, popen, pclose.
//
// glibc's `system` and `popen` spawn `/bin/sh` with the global `environ`
// through an internal call no hook sees. Pointing `environ` at the child's
// environment for the call would race with `getenv` in other threads, so
// both are done here as glibc does them, on the real `posix_spawn` with the
// envp [`with_env`] builds. A stream made here is an `fdopen`ed pipe, which
// glibc's `pclose` cannot wait for: `pclose` is hooked too, and finds the
// child in [`STREAMS`].

const SHELL_PATH: &CStr = c"/bin/sh";

/// Spawns `/bin/sh -c cmd` with the child's environment: the real
/// `posix_spawn`'s result (0 or an errno).
///
/// # Safety
/// `cmd` a C string; `fa` and `attr` NULL or initialised.
unsafe fn spawn_shell(
    pid: &mut pid_t,
    cmd: *const c_char,
    fa: *const posix_spawn_file_actions_t,
    attr: *const posix_spawnattr_t,
) -> c_int {
    let Some(real) = real!("posix_spawn", SpawnFn) else {
        return libc::ENOSYS;
    };
    let argv = [c"sh".as_ptr(), c"-c".as_ptr(), cmd, std::ptr::null()];
    // SAFETY: reading the program's environ, as glibc's system does; the
    // child's envp is complete before the vfork-style clone.
    unsafe {
        with_env(environ, |env| {
            real(pid, SHELL_PATH.as_ptr(), fa, attr, argv.as_ptr(), env)
        })
    }
}

extern "C" {
    fn pthread_setcancelstate(state: c_int, old: *mut c_int) -> c_int;
}
/// glibc's value (pthread.h).
const PTHREAD_CANCEL_DISABLE: c_int = 1;

/// waitpid, again while a signal interrupts it: the status, or `None`. Not a
/// cancellation point: a cancelled thread would leave the child unreaped
/// and, in `system`, SIGINT ignored.
fn wait_child(pid: pid_t) -> Option<c_int> {
    let mut status = 0;
    let mut old = 0;
    // SAFETY: plain libc calls; the state is restored below.
    unsafe { pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &mut old) };
    let r = wait_loop(pid, &mut status);
    let e = guard::errno();
    // SAFETY: as above.
    unsafe { pthread_setcancelstate(old, std::ptr::null_mut()) };
    set_errno(e);
    r.then_some(status)
}

fn wait_loop(pid: pid_t, status: &mut c_int) -> bool {
    loop {
        // SAFETY: a plain system call on our own child.
        let r = unsafe { libc::waitpid(pid, status, 0) };
        if r == pid {
            return true;
        }
        if r == -1 && guard::errno() == libc::EINTR {
            continue;
        }
        return false;
    }
}

/// SIGINT and SIGQUIT are ignored while any thread is in `system`; the first
/// in saves the dispositions, the last out restores them (glibc's counter).
struct SigSave {
    users: usize,
    intr: libc::sigaction,
    quit: libc::sigaction,
}

struct SigState {
    busy: std::sync::atomic::AtomicBool,
    save: std::cell::UnsafeCell<SigSave>,
}

// SAFETY: `save` is only touched with `busy` held.
unsafe impl Sync for SigState {}

static SIGS: SigState = SigState {
    busy: std::sync::atomic::AtomicBool::new(false),
    save: std::cell::UnsafeCell::new(SigSave {
        users: 0,
        // SAFETY: an all-zero sigaction is a valid value (SIG_DFL, empty mask).
        intr: unsafe { std::mem::zeroed() },
        // SAFETY: as above.
        quit: unsafe { std::mem::zeroed() },
    }),
};

/// Runs `f` on the saved dispositions, with the counter's spin lock held:
/// two `sigaction` calls long, never across the child's run.
fn with_sigs<R>(f: impl FnOnce(&mut SigSave) -> R) -> R {
    while SIGS
        .busy
        .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        std::hint::spin_loop();
    }
    // SAFETY: the lock is held.
    let r = f(unsafe { &mut *SIGS.save.get() });
    SIGS.busy.store(false, Ordering::Release);
    r
}

/// The `exec` check of the shell that `call` runs.
pub(crate) fn shell_check(call: &'static str) -> Result<(), c_int> {
    exec_check(call, AT_FDCWD, CArg::of(SHELL_PATH), Follow::Yes)
}

/// system(3) as glibc 2.36 does it, with the child's environment.
///
/// # Safety
/// `cmd` NULL or a C string.
pub(crate) unsafe fn run_system(call: &'static str, cmd: *const c_char) -> c_int {
    if cmd.is_null() {
        // Only asks whether a shell exists.
        return c_int::from(rustix::fs::access(SHELL_PATH, rustix::fs::Access::EXEC_OK).is_ok());
    }
    if let Err(e) = exec_check(call, AT_FDCWD, CArg::of(SHELL_PATH), Follow::Yes) {
        set_errno(e);
        return -1;
    }
    // SAFETY: zeroed sigaction/sigset_t are valid out-parameters and values;
    // every call below is a plain libc call on our own structures.
    unsafe {
        let mut ign: libc::sigaction = std::mem::zeroed();
        ign.sa_sigaction = libc::SIG_IGN;
        libc::sigemptyset(&mut ign.sa_mask);
        let (intr, quit) = with_sigs(|s| {
            if s.users == 0 {
                libc::sigaction(libc::SIGINT, &ign, &mut s.intr);
                libc::sigaction(libc::SIGQUIT, &ign, &mut s.quit);
            }
            s.users += 1;
            (s.intr.sa_sigaction, s.quit.sa_sigaction)
        });
        let mut block: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut block);
        libc::sigaddset(&mut block, libc::SIGCHLD);
        let mut omask: libc::sigset_t = std::mem::zeroed();
        libc::pthread_sigmask(libc::SIG_BLOCK, &block, &mut omask);

        // The child: the caller's mask, and SIGINT/SIGQUIT back to default
        // unless the caller ignored them.
        let mut reset: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut reset);
        if intr != libc::SIG_IGN {
            libc::sigaddset(&mut reset, libc::SIGINT);
        }
        if quit != libc::SIG_IGN {
            libc::sigaddset(&mut reset, libc::SIGQUIT);
        }
        let mut attr: posix_spawnattr_t = std::mem::zeroed();
        libc::posix_spawnattr_init(&mut attr);
        libc::posix_spawnattr_setsigmask(&mut attr, &omask);
        libc::posix_spawnattr_setsigdefault(&mut attr, &reset);
        libc::posix_spawnattr_setflags(
            &mut attr,
            (libc::POSIX_SPAWN_SETSIGDEF | libc::POSIX_SPAWN_SETSIGMASK) as _,
        );
        let mut pid: pid_t = 0;
        let ret = spawn_shell(&mut pid, cmd, std::ptr::null(), &attr);
        libc::posix_spawnattr_destroy(&mut attr);
        let status = if ret == 0 {
            wait_child(pid).unwrap_or(-1)
        } else {
            // POSIX: as if the shell had run `_exit(127)`.
            127 << 8
        };
        let saved = guard::errno();
        with_sigs(|s| {
            s.users -= 1;
            if s.users == 0 {
                libc::sigaction(libc::SIGINT, &s.intr, std::ptr::null_mut());
                libc::sigaction(libc::SIGQUIT, &s.quit, std::ptr::null_mut());
            }
        });
        libc::pthread_sigmask(libc::SIG_SETMASK, &omask, std::ptr::null_mut());
        set_errno(if ret != 0 { ret } else { saved });
        status
    }
}

/// system(3).
///
/// # Safety
/// As for the C function: its pointer arguments valid as it requires (a
/// C string NUL-terminated, NULL only where it accepts NULL).
#[no_mangle]
pub unsafe extern "C" fn system(cmd: *const c_char) -> c_int {
    // SAFETY: the caller's argument.
    unsafe { run_system("system", cmd) }
}

/// A stream `popen` made and the child `pclose` waits for. A slot is free
/// while `fd` is -1; it is claimed by swapping in the stream's fd.
struct Stream {
    fd: AtomicI32,
    pid: AtomicI32,
    fp: AtomicPtr<FILE>,
}

const STREAM_SLOTS: usize = 64;

/// Slots in fixed chunks, linked and never freed: lock-free to claim, free
/// and scan, so neither a signal handler nor a forked child finds a lock.
struct Streams {
    slots: [Stream; STREAM_SLOTS],
    next: AtomicPtr<Streams>,
}

#[allow(clippy::declare_interior_mutable_const)]
const FREE: Stream = Stream {
    fd: AtomicI32::new(-1),
    pid: AtomicI32::new(0),
    fp: AtomicPtr::new(std::ptr::null_mut()),
};

static STREAMS: Streams = Streams {
    slots: [FREE; STREAM_SLOTS],
    next: AtomicPtr::new(std::ptr::null_mut()),
};

/// Every chunk of slots.
fn chunks() -> impl Iterator<Item = &'static Streams> {
    let mut c = Some(&STREAMS);
    std::iter::from_fn(move || {
        let cur = c?;
        // SAFETY: chunks are leaked Boxes, never freed.
        c = unsafe { cur.next.load(Ordering::Acquire).as_ref() };
        Some(cur)
    })
}

/// Records a stream; a new chunk is linked in when all slots are taken.
fn remember(fd: c_int, pid: pid_t, fp: *mut FILE) {
    let mut chunk = &STREAMS;
    loop {
        for s in &chunk.slots {
            if s.fd
                .compare_exchange(-1, fd, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                s.pid.store(pid, Ordering::Relaxed);
                s.fp.store(fp, Ordering::Release);
                return;
            }
        }
        let mut next = chunk.next.load(Ordering::Acquire);
        if next.is_null() {
            let fresh = Box::into_raw(Box::new(Streams {
                slots: [FREE; STREAM_SLOTS],
                next: AtomicPtr::new(std::ptr::null_mut()),
            }));
            next = match chunk.next.compare_exchange(
                std::ptr::null_mut(),
                fresh,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => fresh,
                Err(other) => {
                    // SAFETY: ours, never shared.
                    drop(unsafe { Box::from_raw(fresh) });
                    other
                }
            };
        }
        // SAFETY: a leaked Box, never freed.
        chunk = unsafe { &*next };
    }
}

/// Forgets `fp`: its child, if `popen` here made it.
fn forget(fp: *mut FILE) -> Option<pid_t> {
    for chunk in chunks() {
        for s in &chunk.slots {
            if !fp.is_null()
                && s.fp
                    .compare_exchange(
                        fp,
                        std::ptr::null_mut(),
                        Ordering::AcqRel,
                        Ordering::Relaxed,
                    )
                    .is_ok()
            {
                let pid = s.pid.load(Ordering::Relaxed);
                s.fd.store(-1, Ordering::Release);
                return Some(pid);
            }
        }
    }
    None
}

/// popen(3) as glibc 2.36 does it (`r` or `w`, and `e` for close-on-exec),
/// with the child's environment.
///
/// # Safety
/// `cmd` a C string; `mode` NULL or a C string.
pub(crate) unsafe fn run_popen(
    call: &'static str,
    cmd: *const c_char,
    mode: *const c_char,
) -> *mut FILE {
    let (mut read, mut write, mut cloexec) = (false, false, false);
    if !mode.is_null() {
        // SAFETY: the caller's C string.
        for &c in unsafe { CStr::from_ptr(mode) }.to_bytes() {
            match c {
                b'r' => read = true,
                b'w' => write = true,
                b'e' => cloexec = true,
                _ => {
                    set_errno(libc::EINVAL);
                    return std::ptr::null_mut();
                }
            }
        }
    }
    if read == write {
        set_errno(libc::EINVAL);
        return std::ptr::null_mut();
    }
    if let Err(e) = exec_check(call, AT_FDCWD, CArg::of(SHELL_PATH), Follow::Yes) {
        set_errno(e);
        return std::ptr::null_mut();
    }
    // SAFETY: plain libc calls on our own fds and structures.
    unsafe {
        let mut fds = [-1; 2];
        if libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
            return std::ptr::null_mut();
        }
        let (parent, mut child, child_std) = if read {
            (fds[0], fds[1], 1)
        } else {
            (fds[1], fds[0], 0)
        };
        // Already the fd the child wants: moved, since the dup2 that clears
        // close-on-exec needs two different fds.
        if child == child_std {
            let moved = libc::fcntl(child, libc::F_DUPFD_CLOEXEC, 0);
            let e = guard::errno();
            libc::close(child);
            if moved < 0 {
                libc::close(parent);
                set_errno(e);
                return std::ptr::null_mut();
            }
            child = moved;
        }
        let mut fa: posix_spawn_file_actions_t = std::mem::zeroed();
        libc::posix_spawn_file_actions_init(&mut fa);
        let mut ok = libc::posix_spawn_file_actions_adddup2(&mut fa, child, child_std) == 0;
        // POSIX: streams of earlier popen calls are closed in the child.
        for chunk in chunks() {
            for s in &chunk.slots {
                let fd = s.fd.load(Ordering::Acquire);
                if ok && fd >= 0 && fd != child_std {
                    ok = libc::posix_spawn_file_actions_addclose(&mut fa, fd) == 0;
                }
            }
        }
        let mut pid: pid_t = 0;
        let ret = if ok {
            spawn_shell(&mut pid, cmd, &fa, std::ptr::null())
        } else {
            libc::ENOMEM
        };
        libc::posix_spawn_file_actions_destroy(&mut fa);
        libc::close(child);
        if ret != 0 {
            libc::close(parent);
            set_errno(ret);
            return std::ptr::null_mut();
        }
        let fp = libc::fdopen(parent, if read { c"r" } else { c"w" }.as_ptr());
        if fp.is_null() {
            let e = guard::errno();
            libc::close(parent);
            wait_child(pid);
            set_errno(e);
            return std::ptr::null_mut();
        }
        // Known to later popen calls before it can be inherited.
        remember(parent, pid, fp);
        if !cloexec {
            libc::fcntl(parent, libc::F_SETFD, 0);
        }
        fp
    }
}

/// popen(3).
///
/// # Safety
/// As for the C function: its pointer arguments valid as it requires (a
/// C string NUL-terminated, NULL only where it accepts NULL).
#[no_mangle]
pub unsafe extern "C" fn popen(cmd: *const c_char, mode: *const c_char) -> *mut FILE {
    // SAFETY: the caller's arguments.
    unsafe { run_popen("popen", cmd, mode) }
}

/// pclose(3): closes a stream `popen` made here and waits for its child
/// (the child's status, or -1); any other stream goes to glibc's pclose.
///
/// # Safety
/// `stream` must be a stream from `popen` (or one glibc's pclose accepts).
#[no_mangle]
pub unsafe extern "C" fn pclose(fp: *mut FILE) -> c_int {
    let Some(pid) = forget(fp) else {
        let Some(real) = real!("pclose", PcloseFn) else {
            set_errno(libc::ENOSYS);
            return -1;
        };
        // SAFETY: the caller's stream, not ours.
        return unsafe { real(fp) };
    };
    // SAFETY: the caller's stream, which popen here made.
    unsafe { libc::fclose(fp) };
    wait_child(pid).unwrap_or(-1)
}

// ---------------------------------------------------------------------------
// posix_spawn file actions.
//
// glibc runs the file actions in the child, after the spawn hook, through
// internal calls no hook sees; a path checked when the action was added can
// name something else by the time the child opens it (a symlink retargeted
// in between). So the actions are done here, at spawn time: each open
// action is opened in the parent through the checked open (the object
// checked is the object opened) and the child gets a `dup2` of that fd; each
// chdir action is opened (`O_PATH`), its fd checked like chdir(2), and the
// child gets an `fchdir` to it, so later relative opens, and a relative
// program path, are resolved against the directory the child will really be
// in. The child's fd table is followed through close, dup2 and closefrom so
// that an fchdir to an fd an earlier action made is checked against that fd.

/// glibc's `struct __spawn_action` (spawn_int.h): the tag, then a union
/// whose members start with an `int` at offset 8, except `open_action`
/// (fd, path, oflag, mode) and `chdir_action` (path).
#[repr(C)]
#[derive(Clone, Copy)]
struct RawAction {
    tag: c_int,
    u: RawActionUnion,
}

#[repr(C)]
#[derive(Clone, Copy)]
union RawActionUnion {
    /// close, fchdir, closefrom, tcsetpgrp: `[fd]`; dup2: `[fd, newfd]`.
    ints: [c_int; 2],
    open: RawOpen,
    chdir: *const c_char,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct RawOpen {
    fd: c_int,
    path: *const c_char,
    oflag: c_int,
    mode: libc::mode_t,
}

/// glibc's `posix_spawn_file_actions_t`.
#[repr(C)]
struct RawFileActions {
    allocated: c_int,
    used: c_int,
    actions: *const RawAction,
    pad: [c_int; 16],
}

const _: () = assert!(std::mem::size_of::<RawAction>() == 32);
const _: () = assert!(
    std::mem::size_of::<RawFileActions>() == std::mem::size_of::<posix_spawn_file_actions_t>()
);

const DO_CLOSE: c_int = 0;
const DO_DUP2: c_int = 1;
const DO_OPEN: c_int = 2;
const DO_CHDIR: c_int = 3;
const DO_FCHDIR: c_int = 4;
const DO_CLOSEFROM: c_int = 5;
const DO_TCSETPGRP: c_int = 6;

/// One action as the child will run it.
#[derive(Clone, Copy)]
enum Op {
    Close(c_int),
    Dup2(c_int, c_int),
    Fchdir(c_int),
    Closefrom(c_int),
    Tcsetpgrp(c_int),
}

/// What a child fd refers to, as the actions so far leave it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Slot {
    /// One of the fds opened here.
    Ours(c_int),
    /// The parent's fd of that number.
    Parent(c_int),
    Closed,
}

/// The file actions of one posix_spawn, done in the parent.
pub(crate) struct Actions {
    orig: *const posix_spawn_file_actions_t,
    new: Option<Box<posix_spawn_file_actions_t>>,
    /// The fds opened here for the child; closed when the spawn is over.
    fds: Vec<OwnedFd>,
    /// The directory the child's relative paths start from.
    cwd: c_int,
}

impl Drop for Actions {
    fn drop(&mut self) {
        type F = unsafe extern "C" fn(*mut posix_spawn_file_actions_t) -> c_int;
        if let (Some(new), Some(f)) = (
            self.new.as_mut(),
            real!("posix_spawn_file_actions_destroy", F),
        ) {
            // SAFETY: initialised by posix_spawn_file_actions_init in `build`.
            unsafe { f(&mut **new) };
        }
    }
}

/// The child's fd table as the actions change it.
struct Model {
    slots: Vec<(c_int, Slot)>,
    closed_from: c_int,
}

impl Model {
    fn get(&self, fd: c_int) -> Slot {
        match self.slots.iter().rev().find(|(f, _)| *f == fd) {
            Some((_, s)) => *s,
            None if fd >= self.closed_from => Slot::Closed,
            None => Slot::Parent(fd),
        }
    }

    fn set(&mut self, fd: c_int, s: Slot) {
        self.slots.retain(|(f, _)| *f != fd);
        self.slots.push((fd, s));
    }

    fn close_from(&mut self, from: c_int) {
        self.slots.retain(|(f, _)| *f < from);
        self.closed_from = self.closed_from.min(from);
    }
}

impl Actions {
    fn as_ptr(&self) -> *const posix_spawn_file_actions_t {
        match &self.new {
            Some(b) => &**b,
            None => self.orig,
        }
    }

    fn passthrough(fa: *const posix_spawn_file_actions_t) -> Actions {
        Actions {
            orig: fa,
            new: None,
            fds: Vec::new(),
            cwd: AT_FDCWD,
        }
    }

    /// Does the actions' opens and chdirs here, checked, and builds the list
    /// the child runs instead. `Err(errno)`: posix_spawn fails with it, as it
    /// would when the child's action failed.
    ///
    /// # Safety
    /// `fa` NULL or initialised file actions, in glibc's layout.
    unsafe fn prepare(
        call: &'static str,
        fa: *const posix_spawn_file_actions_t,
    ) -> Result<Actions, c_int> {
        if fa.is_null() || guard::get().is_none() {
            return Ok(Actions::passthrough(fa));
        }
        // SAFETY: the caller's initialised file actions, glibc's layout.
        let list: &[RawAction] = unsafe {
            let raw = &*fa.cast::<RawFileActions>();
            if raw.actions.is_null() || raw.used <= 0 {
                &[]
            } else {
                std::slice::from_raw_parts(raw.actions, raw.used as usize)
            }
        };
        if !list
            .iter()
            .any(|a| matches!(a.tag, DO_OPEN | DO_CHDIR | DO_FCHDIR))
        {
            return Ok(Actions::passthrough(fa));
        }
        let saved = guard::errno();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            // SAFETY: the actions read above.
            unsafe { Actions::run(call, fa, list) }
        }))
        .unwrap_or(Err(libc::EACCES));
        set_errno(saved);
        r
    }

    /// The actions of `fa` done here (see [`Actions::prepare`]).
    ///
    /// # Safety
    /// As [`Actions::prepare`]; `list` the actions of `fa`.
    unsafe fn run(
        call: &'static str,
        fa: *const posix_spawn_file_actions_t,
        list: &[RawAction],
    ) -> Result<Actions, c_int> {
        // The fds opened here go above every fd an action names, so that no
        // action of the child's closes or replaces them before their dup2.
        let mut base: c_int = 3;
        for a in list {
            // SAFETY: the member the tag selects.
            let named = unsafe {
                match a.tag {
                    DO_DUP2 => a.u.ints[0].max(a.u.ints[1]),
                    DO_OPEN => a.u.open.fd,
                    DO_CLOSE | DO_FCHDIR | DO_CLOSEFROM | DO_TCSETPGRP => a.u.ints[0],
                    DO_CHDIR => 0,
                    _ => {
                        // An action this library does not know: it cannot
                        // tell what the child would do.
                        let g = guard::get().ok_or(libc::EACCES)?;
                        g.refuse(call, Access::Exec, b"?", Rule::Unresolved)?;
                        return Ok(Actions::passthrough(fa));
                    }
                }
            };
            base = base.max(named.saturating_add(1));
        }
        let mut this = Actions::passthrough(fa);
        let mut model = Model {
            slots: Vec::new(),
            closed_from: c_int::MAX,
        };
        let mut ops = Vec::with_capacity(list.len());
        for a in list {
            // SAFETY: the member the tag selects (checked above); an open or
            // chdir action's path is a C string glibc copied, alive until
            // the actions are destroyed.
            unsafe {
                match a.tag {
                    DO_CLOSE => {
                        let fd = a.u.ints[0];
                        model.set(fd, Slot::Closed);
                        ops.push(Op::Close(fd));
                    }
                    DO_DUP2 => {
                        let [from, to] = a.u.ints;
                        let s = model.get(from);
                        let src = match s {
                            Slot::Ours(p) => p,
                            _ => from,
                        };
                        if from != to {
                            model.set(to, s);
                        }
                        ops.push(Op::Dup2(src, to));
                    }
                    DO_OPEN => {
                        let o = a.u.open;
                        let p = this.open(call, CArg::new(o.path), o.oflag, o.mode, base)?;
                        model.set(o.fd, Slot::Ours(p));
                        if o.oflag & libc::O_CLOEXEC != 0 {
                            // Closed at exec: later actions use our fd.
                            ops.push(Op::Close(o.fd));
                        } else {
                            ops.push(Op::Dup2(p, o.fd));
                        }
                    }
                    DO_CHDIR => {
                        let d = this.chdir(call, CArg::new(a.u.chdir), base)?;
                        this.cwd = d;
                        ops.push(Op::Fchdir(d));
                    }
                    DO_FCHDIR => {
                        let fd = a.u.ints[0];
                        match model.get(fd) {
                            Slot::Ours(p) => {
                                this.check_dir(call, p)?;
                                this.cwd = p;
                                ops.push(Op::Fchdir(p));
                            }
                            Slot::Parent(p) => {
                                this.check_dir(call, p)?;
                                this.cwd = p;
                                ops.push(Op::Fchdir(fd));
                            }
                            // The child fails it (EBADF), and the spawn.
                            Slot::Closed => ops.push(Op::Fchdir(fd)),
                        }
                    }
                    DO_CLOSEFROM => {
                        let from = a.u.ints[0];
                        model.close_from(from);
                        ops.push(Op::Closefrom(from));
                    }
                    _ => ops.push(Op::Tcsetpgrp(a.u.ints[0])),
                }
            }
        }
        this.build(&ops)?;
        Ok(this)
    }

    /// An open action, opened here through the checked open.
    fn open(
        &mut self,
        call: &'static str,
        path: CArg<'_>,
        oflag: c_int,
        mode: libc::mode_t,
        base: c_int,
    ) -> Result<c_int, c_int> {
        let _ = call;
        let (cwd, flags) = (self.cwd, oflag | libc::O_CLOEXEC);
        // SAFETY: the hook's contract holds: a C string glibc copied.
        let fd = unsafe { fsguard_spawn_openat(cwd, path.as_ptr(), flags, mode) };
        if fd < 0 {
            return Err(guard::errno());
        }
        // SAFETY: the fd just opened, ours.
        let fd = unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) };
        self.keep(fd, base)
    }

    /// A chdir action: the directory opened (`O_PATH`), then checked as the
    /// object it is, like chdir(2).
    fn chdir(&mut self, call: &'static str, path: CArg<'_>, base: c_int) -> Result<c_int, c_int> {
        let Some(p) = path.get() else {
            return Err(libc::EFAULT);
        };
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let fd = if self.cwd == AT_FDCWD {
            rustix::fs::openat(CWD, p, flags, Mode::empty())
        } else {
            // SAFETY: an fd this spawn holds (or the parent's, for fchdir).
            let dir = unsafe { BorrowedFd::borrow_raw(self.cwd) };
            rustix::fs::openat(dir, p, flags, Mode::empty())
        }
        .map_err(|e| e.raw_os_error())?;
        self.check_dir(call, fd.as_raw_fd())?;
        self.keep(fd, base)
    }

    fn check_dir(&self, call: &'static str, fd: c_int) -> Result<(), c_int> {
        guard::check(
            call,
            &[Target {
                access: None,
                follow: Follow::Fd,
                dirfd: fd,
                path: CArg::NULL,
                moves: false,
            }],
        )
    }

    /// Moves `fd` to the lowest free number at or above `base` and holds it
    /// until the spawn is over.
    fn keep(&mut self, fd: OwnedFd, base: c_int) -> Result<c_int, c_int> {
        let high = rustix::io::fcntl_dupfd_cloexec(&fd, base).map_err(|e| e.raw_os_error())?;
        let n = high.as_raw_fd();
        self.fds.push(high);
        Ok(n)
    }

    /// The child's list: `ops`, through glibc's own functions.
    fn build(&mut self, ops: &[Op]) -> Result<(), c_int> {
        type Init = unsafe extern "C" fn(*mut posix_spawn_file_actions_t) -> c_int;
        type One = unsafe extern "C" fn(*mut posix_spawn_file_actions_t, c_int) -> c_int;
        type Two = unsafe extern "C" fn(*mut posix_spawn_file_actions_t, c_int, c_int) -> c_int;
        let init = real!("posix_spawn_file_actions_init", Init).ok_or(libc::ENOSYS)?;
        // SAFETY: zeroed memory is a valid (if meaningless) value of this C
        // struct; init makes it an empty list.
        let mut new: Box<posix_spawn_file_actions_t> = Box::new(unsafe { std::mem::zeroed() });
        // SAFETY: as above.
        let r = unsafe { init(&mut *new) };
        if r != 0 {
            return Err(r);
        }
        self.new = Some(new);
        let new: *mut posix_spawn_file_actions_t = &mut **self.new.as_mut().unwrap();
        let ours: Vec<c_int> = self.fds.iter().map(|f| f.as_raw_fd()).collect();
        let top = ours.iter().copied().max().unwrap_or(-1);
        let addclose = real!("posix_spawn_file_actions_addclose", One).ok_or(libc::ENOSYS)?;
        let adddup2 = real!("posix_spawn_file_actions_adddup2", Two).ok_or(libc::ENOSYS)?;
        let addfchdir = real!("posix_spawn_file_actions_addfchdir_np", One);
        let addtcsetpgrp = real!("posix_spawn_file_actions_addtcsetpgrp_np", One);
        let addclosefrom = real!("posix_spawn_file_actions_addclosefrom_np", One);
        let add = |f: Option<One>, fd: c_int| -> Result<(), c_int> {
            let f = f.ok_or(libc::ENOSYS)?;
            // SAFETY: glibc's function on the list initialised above.
            match unsafe { f(new, fd) } {
                0 => Ok(()),
                e => Err(e),
            }
        };
        for op in ops {
            match *op {
                Op::Close(fd) => add(Some(addclose), fd)?,
                Op::Dup2(a, b) => {
                    // SAFETY: as above.
                    let r = unsafe { adddup2(new, a, b) };
                    if r != 0 {
                        return Err(r);
                    }
                }
                Op::Fchdir(fd) => add(addfchdir, fd)?,
                Op::Tcsetpgrp(fd) => add(addtcsetpgrp, fd)?,
                Op::Closefrom(from) if from <= top => {
                    // Keep ours (close-on-exec anyway) open for the actions
                    // after this one.
                    for fd in (from..=top).filter(|fd| !ours.contains(fd)) {
                        add(Some(addclose), fd)?;
                    }
                    add(addclosefrom, top + 1)?;
                }
                Op::Closefrom(from) => add(addclosefrom, from)?,
            }
        }
        Ok(())
    }
}

type OpenatFn = unsafe extern "C" fn(c_int, *const c_char, c_int, ...) -> c_int;

hooks! {
    table SPAWN_OPEN;
    /// An open action of posix_spawn, opened in the parent at spawn time
    /// (not exported under a libc name; not listed in docs/hooks.md).
    "openat" as "posix_spawn"
    fn fsguard_spawn_openat(dirfd: c_int, path: *const c_char, flags: c_int, mode: libc::mode_t) -> c_int,
        real OpenatFn = (dirfd, path, flags, mode as libc::c_uint),
        fast crate::guard::open_fast(dirfd, path, flags, mode),
        act |t| crate::hooks::open_via(&t[0], flags, mode),
        fail -1,
        check [crate::hooks::open_access(flags), crate::hooks::open_follow(flags), dirfd, path, false];
}

/// posix_spawn's file actions, as checked at spawn time.
pub static SPAWN_TABLE: &[HookInfo] = &[
    HookInfo {
        symbol: "posix_spawn_file_actions_addopen",
        call: "posix_spawn",
        checks: &[CheckInfo {
            access: "open_access(oflag)",
            follow: "open_follow(oflag)",
            dirfd: "the child's cwd at that action",
            path: "path (opened here at spawn; the child gets a dup2)",
        }],
    },
    HookInfo {
        symbol: "posix_spawn_file_actions_addchdir_np",
        call: "posix_spawn",
        checks: &[CheckInfo {
            access: "META",
            follow: "Follow::Yes",
            dirfd: "the child's cwd at that action",
            path: "path (opened here at spawn; the child gets an fchdir)",
        }],
    },
    HookInfo {
        symbol: "posix_spawn_file_actions_addfchdir_np",
        call: "posix_spawn",
        checks: &[CheckInfo {
            access: "META",
            follow: "Follow::Fd",
            dirfd: "fd (as the earlier actions leave it)",
            path: "NULL",
        }],
    },
];

/// dlopen(3) of a file named by path (with a `/`) loads code from it: an
/// `exec` check. The shim's `dlopen` calls this, then tail-calls the real
/// dlopen so that the caller's RUNPATH and `$ORIGIN` still apply.
///
/// # Safety
/// `name` must be NULL or a C string (dlopen's own contract).
#[no_mangle]
pub unsafe extern "C" fn fsguard_dlopen_check(name: *const c_char) -> c_int {
    // SAFETY: dlopen's name is NULL or a C string (its contract).
    let name = unsafe { CArg::new(name) };
    if !name.get().is_some_and(|n| n.to_bytes().contains(&b'/')) {
        return 0;
    }
    let t = Target {
        access: Some(Access::Exec),
        follow: Follow::Yes,
        dirfd: AT_FDCWD,
        path: name,
        moves: false,
    };
    match guard::check("dlopen", &[t]) {
        Ok(()) => 0,
        Err(e) => e,
    }
}

const fn exec_info(symbol: &'static str, call: &'static str, path: &'static str) -> HookInfo {
    HookInfo {
        symbol,
        call,
        checks: match path.as_bytes() {
            b"fd" => &[CheckInfo {
                access: "EXEC",
                follow: "Follow::Fd",
                dirfd: "fd",
                path: "NULL",
            }],
            b"dirfd" => &[CheckInfo {
                access: "EXEC",
                follow: "at_follow(flags, path)",
                dirfd: "dirfd",
                path: "path",
            }],
            b"/bin/sh" => &[CheckInfo {
                access: "EXEC",
                follow: "Follow::Yes",
                dirfd: "AT_FDCWD",
                path: "\"/bin/sh\"",
            }],
            b"PATH" => &[CheckInfo {
                access: "EXEC",
                follow: "Follow::Yes",
                dirfd: "AT_FDCWD",
                path: "each PATH candidate",
            }],
            b"slash" => &[CheckInfo {
                access: "EXEC",
                follow: "Follow::Yes",
                dirfd: "AT_FDCWD",
                path: "name, if it contains a '/'",
            }],
            _ => &[CheckInfo {
                access: "EXEC",
                follow: "Follow::Yes",
                dirfd: "AT_FDCWD",
                path: "path",
            }],
        },
    }
}

/// The exec hooks, described like [`crate::hooks::TABLE`]. Every one but
/// `dlopen` also replaces the child's environment and applies
/// `unguarded_exec`.
pub static EXEC_TABLE: &[HookInfo] = &[
    exec_info("execve", "execve", "path"),
    exec_info("execv", "execve", "path"),
    exec_info("execl", "execve", "path"),
    exec_info("execle", "execve", "path"),
    exec_info("execvp", "execvp", "PATH"),
    exec_info("execvpe", "execvp", "PATH"),
    exec_info("execlp", "execvp", "PATH"),
    exec_info("execveat", "execveat", "dirfd"),
    exec_info("fexecve", "fexecve", "fd"),
    exec_info("posix_spawn", "posix_spawn", "path"),
    exec_info("posix_spawnp", "posix_spawnp", "PATH"),
    exec_info("system", "system", "/bin/sh"),
    exec_info("popen", "popen", "/bin/sh"),
    HookInfo {
        symbol: "pclose",
        call: "pclose",
        checks: &[CheckInfo {
            access: "—",
            follow: "-",
            dirfd: "-",
            path: "(no check: closes a stream popen made here and waits for its child)",
        }],
    },
    exec_info("dlopen", "dlopen", "slash"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preload_puts_ours_first_once() {
        let mut buf = [0u8; 256];
        let n = preload_entry(
            b"/l/libfsguard.so",
            b"/x.so /l/libfsguard.so::/y.so",
            &mut buf,
        );
        assert_eq!(&buf[..n], b"LD_PRELOAD=/l/libfsguard.so:/x.so:/y.so\0");
        let n = preload_entry(b"/l/a.so", b"", &mut buf);
        assert_eq!(&buf[..n], b"LD_PRELOAD=/l/a.so\0");
        assert_eq!(preload_entry(b"/l/a.so", b"/b", &mut []), n + 3);
    }

    #[test]
    fn joins_path_entries() {
        let mut buf = [0u8; 16];
        assert_eq!(join(b"/bin", b"ls", &mut buf).unwrap(), c"/bin/ls");
        assert_eq!(join(b"", b"ls", &mut buf).unwrap(), c"./ls");
        assert!(join(b"/a/very/long/dir", b"ls", &mut buf).is_none());
    }

    #[test]
    fn table_names_each_symbol_once() {
        let mut seen = std::collections::HashSet::new();
        for h in EXEC_TABLE {
            assert!(seen.insert(h.symbol), "{} twice", h.symbol);
        }
    }
}
