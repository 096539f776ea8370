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
//!
//! A program the library cannot follow (statically linked: no `PT_INTERP`;
//! set-id without `no_new_privs`: the loader drops `LD_PRELOAD`) is handled
//! by the `unguarded_exec` setting: warn (a trace line), deny, or allow.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicPtr, Ordering};

use fsguard_policy::{Access, Rule, UnguardedExec};
use libc::{pid_t, posix_spawn_file_actions_t, posix_spawnattr_t, AT_FDCWD, FILE};
use rustix::fs::{Mode, OFlags, CWD};

use crate::guard::{self, set_errno, Target};
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
type SystemFn = unsafe extern "C" fn(*const c_char) -> c_int;
type PopenFn = unsafe extern "C" fn(*const c_char, *const c_char) -> *mut FILE;

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
unsafe fn with_env<R>(envp: Argv, f: impl FnOnce(Argv) -> R) -> R {
    let Some(ce) = child_env() else {
        return f(envp);
    };
    // SAFETY: the caller's envp.
    let old = unsafe { caller_preload(envp) };
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

/// A child environment owned on the heap, for `system`/`popen`, which read
/// the global `environ`.
struct OwnedEnv {
    vars: Vec<*const c_char>,
    _pre: Vec<u8>,
    policy: Box<[u8; 40]>,
    handoff: Option<crate::handoff::ForChild>,
    report_entry: Box<[u8; 40]>,
    report: crate::trace::ReportForChild,
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

unsafe fn owned_env(envp: Argv) -> Option<OwnedEnv> {
    let ce = child_env()?;
    // SAFETY: the process's environ.
    let old = unsafe { caller_preload(envp) };
    let mut pre = vec![0u8; preload_entry(&ce.lib, old, &mut [])];
    preload_entry(&ce.lib, old, &mut pre);
    let handoff = crate::handoff::ForChild::new(&ce.frozen);
    let mut policy = Box::new([0u8; 40]);
    let mut vars = vec![
        pre.as_ptr().cast(),
        policy_entry(handoff.as_ref(), &mut policy),
    ];
    let report = crate::trace::report_for_child(guard::get().map(|g| &g.sink));
    let mut report_entry = Box::new([0u8; 40]);
    if let Some(r) = ce
        .report
        .as_deref()
        .and_then(|intact| report.entry(intact, &mut report_entry))
    {
        vars.push(r.as_ptr());
    }
    // SAFETY: as above.
    for e in unsafe { entries(envp) } {
        // SAFETY: a C string.
        if !drop_var(unsafe { CStr::from_ptr(e) }.to_bytes()) {
            vars.push(e);
        }
    }
    vars.push(std::ptr::null());
    Some(OwnedEnv {
        vars,
        _pre: pre,
        policy,
        handoff,
        report_entry,
        report,
    })
}

/// Calls `f` with `environ` pointing at the child environment (glibc's
/// `system` and `popen` pass `environ` to their internal spawn). Restored
/// afterwards unless the program replaced `environ` meanwhile, in which case
/// the copy is leaked: the new array may point into it.
unsafe fn with_environ<R>(f: impl FnOnce() -> R) -> R {
    // SAFETY: reading the global; the program owns it.
    let Some(env) = (unsafe { owned_env(environ) }) else {
        return f();
    };
    // SAFETY: as above; swapping the pointer, never editing the array.
    unsafe {
        let old = environ;
        environ = env.vars.as_ptr();
        let r = f();
        if environ == env.vars.as_ptr() {
            environ = old;
        }
        // The child has its copy of the policy fd by now; ours is closed.
        // The array is never freed: another thread may still be reading
        // `environ` as it was during the call. One per system()/popen().
        let OwnedEnv {
            vars,
            _pre,
            policy,
            handoff,
            report_entry,
            report,
        } = env;
        drop(handoff);
        drop(report);
        std::mem::forget((vars, _pre, policy, report_entry));
        r
    }
}

/// The check of a call that runs `/bin/sh` with `environ` (system, popen
/// and their glibc aliases), then the call under the child environment.
pub(crate) unsafe fn shell<R>(call: &'static str, f: impl FnOnce() -> R) -> Result<R, c_int> {
    exec_check(call, AT_FDCWD, c"/bin/sh".as_ptr(), Follow::Yes)?;
    // SAFETY: the caller's real call, run under the child environment.
    Ok(unsafe { with_environ(f) })
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
    path: *const c_char,
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
    path: *const c_char,
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
            guard::check(
                call,
                &[Target {
                    access: Some(Access::Exec),
                    follow: Follow::Yes,
                    dirfd: AT_FDCWD,
                    path: interp.as_ptr().cast(),
                    moves: false,
                }],
            )?;
            let c = CStr::from_bytes_until_nul(&interp).map_err(|_| libc::EACCES)?;
            match rustix::fs::openat(CWD, c, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty()) {
                Ok(next) => fd = next,
                Err(_) => return unreadable(call, AT_FDCWD, interp.as_ptr().cast(), Follow::Yes),
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
    path: *const c_char,
    follow: Follow,
) -> Result<(), c_int> {
    if path.is_null() || follow == Follow::Fd {
        return Ok(());
    }
    // SAFETY: the caller's C string.
    let p = unsafe { CStr::from_ptr(path) };
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
fn inspect(dirfd: c_int, path: *const c_char, follow: Follow) -> Option<(Unguarded, OwnedFd)> {
    let fd = open_exec(dirfd, path, follow)?;
    let kind = classify(fd.as_fd(), true)?;
    Some((kind, fd))
}

fn open_exec(dirfd: c_int, path: *const c_char, follow: Follow) -> Option<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::CLOEXEC;
    if follow == Follow::Fd {
        let mut link = [0u8; 32];
        let s = format_fd_link(dirfd, &mut link)?;
        return rustix::fs::openat(CWD, s, flags, Mode::empty()).ok();
    }
    if path.is_null() {
        return None;
    }
    // SAFETY: the caller's C string.
    let p = unsafe { CStr::from_ptr(path) };
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

unsafe fn exec_path(call: &'static str, path: *const c_char, argv: Argv, envp: Argv) -> c_int {
    if let Err(e) = exec_check(call, AT_FDCWD, path, Follow::Yes) {
        set_errno(e);
        return -1;
    }
    let Some(real) = real!("execve", ExecveFn) else {
        set_errno(libc::ENOSYS);
        return -1;
    };
    // SAFETY: the real execve with the caller's arguments and our envp.
    unsafe { with_env(envp, |env| real(path, argv, env)) }
}

/// execve(2). Also the target of the shim's `execl` and `execle`.
#[no_mangle]
pub unsafe extern "C" fn fsguard_execve(path: *const c_char, argv: Argv, envp: Argv) -> c_int {
    // SAFETY: forwarded.
    unsafe { exec_path("execve", path, argv, envp) }
}

#[no_mangle]
pub unsafe extern "C" fn execve(path: *const c_char, argv: Argv, envp: Argv) -> c_int {
    // SAFETY: forwarded.
    unsafe { exec_path("execve", path, argv, envp) }
}

#[no_mangle]
pub unsafe extern "C" fn execv(path: *const c_char, argv: Argv) -> c_int {
    // SAFETY: forwarded with the process's environment.
    unsafe { exec_path("execve", path, argv, environ) }
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
unsafe fn script(call: &'static str, path: *const c_char, argv: Argv, envp: Argv) -> c_int {
    let mut args: Vec<*const c_char> = vec![c"/bin/sh".as_ptr(), path];
    // SAFETY: the caller's argv; argv[0] is replaced by the script's path.
    args.extend(unsafe { entries(argv) }.skip(1));
    args.push(std::ptr::null());
    // SAFETY: forwarded.
    unsafe { exec_path(call, c"/bin/sh".as_ptr(), args.as_ptr(), envp) }
}

/// execvpe(3), glibc's search: each `PATH` entry in turn, every candidate
/// checked; EACCES remembered, "not there" errors skipped.
unsafe fn exec_search(file: *const c_char, argv: Argv, envp: Argv) -> c_int {
    const CALL: &str = "execvp";
    if file.is_null() {
        set_errno(libc::EFAULT);
        return -1;
    }
    // SAFETY: the caller's C string.
    let name = unsafe { CStr::from_ptr(file) }.to_bytes();
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
        unsafe { exec_path(CALL, cand.as_ptr(), argv, envp) };
        match guard::errno() {
            libc::EACCES => eacces = true,
            libc::ENOENT | libc::ESTALE | libc::ENOTDIR | libc::ENODEV | libc::ETIMEDOUT => {}
            libc::ENOEXEC => {
                // SAFETY: forwarded.
                return unsafe { script(CALL, cand.as_ptr(), argv, envp) };
            }
            _ => return -1,
        }
    }
    set_errno(if eacces { libc::EACCES } else { libc::ENOENT });
    -1
}

/// execvpe(3). Also the target of the shim's `execlp`.
#[no_mangle]
pub unsafe extern "C" fn fsguard_execvpe(file: *const c_char, argv: Argv, envp: Argv) -> c_int {
    // SAFETY: forwarded.
    unsafe { exec_search(file, argv, envp) }
}

#[no_mangle]
pub unsafe extern "C" fn execvpe(file: *const c_char, argv: Argv, envp: Argv) -> c_int {
    // SAFETY: forwarded.
    unsafe { exec_search(file, argv, envp) }
}

#[no_mangle]
pub unsafe extern "C" fn execvp(file: *const c_char, argv: Argv) -> c_int {
    // SAFETY: forwarded with the process's environment.
    unsafe { exec_search(file, argv, environ) }
}

#[no_mangle]
pub unsafe extern "C" fn execveat(
    dirfd: c_int,
    path: *const c_char,
    argv: Argv,
    envp: Argv,
    flags: c_int,
) -> c_int {
    if let Err(e) = exec_check("execveat", dirfd, path, at_follow(flags, path)) {
        set_errno(e);
        return -1;
    }
    let Some(real) = real!("execveat", ExecveatFn) else {
        set_errno(libc::ENOSYS);
        return -1;
    };
    // SAFETY: the real call with our envp.
    unsafe { with_env(envp, |env| real(dirfd, path, argv, env, flags)) }
}

#[no_mangle]
pub unsafe extern "C" fn fexecve(fd: c_int, argv: Argv, envp: Argv) -> c_int {
    if let Err(e) = exec_check("fexecve", fd, std::ptr::null(), Follow::Fd) {
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

unsafe fn spawn_path(
    call: &'static str,
    pid: *mut pid_t,
    path: *const c_char,
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
unsafe fn spawn_prepared(
    call: &'static str,
    pid: *mut pid_t,
    path: *const c_char,
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
    unsafe { with_env(envp, |env| real(pid, path, fa, attr, argv, env)) }
}

#[no_mangle]
pub unsafe extern "C" fn posix_spawn(
    pid: *mut pid_t,
    path: *const c_char,
    fa: *const posix_spawn_file_actions_t,
    attr: *const posix_spawnattr_t,
    argv: Argv,
    envp: Argv,
) -> c_int {
    // SAFETY: forwarded.
    unsafe { spawn_path("posix_spawn", pid, path, fa, attr, argv, envp) }
}

/// posix_spawnp(3): the `PATH` search done here, so the program spawned is
/// the program checked; each candidate goes through `posix_spawn`. The file
/// actions are done once, for all candidates.
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
    if file.is_null() {
        return libc::EFAULT;
    }
    // SAFETY: the caller's C string.
    let name = unsafe { CStr::from_ptr(file) }.to_bytes();
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
        match unsafe { spawn_prepared(CALL, pid, cand.as_ptr(), &actions, attr, argv, envp) } {
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

/// system(3): glibc spawns `/bin/sh -c` with `environ` through an internal
/// call, so the check is made here and `environ` is the child's while it runs.
#[no_mangle]
pub unsafe extern "C" fn system(cmd: *const c_char) -> c_int {
    let Some(real) = real!("system", SystemFn) else {
        set_errno(libc::ENOSYS);
        return -1;
    };
    if cmd.is_null() {
        // Only asks whether a shell exists.
        // SAFETY: the real call.
        return unsafe { real(cmd) };
    }
    if let Err(e) = exec_check("system", AT_FDCWD, c"/bin/sh".as_ptr(), Follow::Yes) {
        set_errno(e);
        return -1;
    }
    // SAFETY: the real call under the child environment.
    unsafe { with_environ(|| real(cmd)) }
}

/// popen(3): as `system`.
#[no_mangle]
pub unsafe extern "C" fn popen(cmd: *const c_char, mode: *const c_char) -> *mut FILE {
    let Some(real) = real!("popen", PopenFn) else {
        set_errno(libc::ENOSYS);
        return std::ptr::null_mut();
    };
    if let Err(e) = exec_check("popen", AT_FDCWD, c"/bin/sh".as_ptr(), Follow::Yes) {
        set_errno(e);
        return std::ptr::null_mut();
    }
    // SAFETY: the real call under the child environment.
    unsafe { with_environ(|| real(cmd, mode)) }
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
            // SAFETY: the member the tag selects (checked above).
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
                        let p = this.open(call, o.path, o.oflag, o.mode, base)?;
                        model.set(o.fd, Slot::Ours(p));
                        if o.oflag & libc::O_CLOEXEC != 0 {
                            // Closed at exec: later actions use our fd.
                            ops.push(Op::Close(o.fd));
                        } else {
                            ops.push(Op::Dup2(p, o.fd));
                        }
                    }
                    DO_CHDIR => {
                        let d = this.chdir(call, a.u.chdir, base)?;
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
        path: *const c_char,
        oflag: c_int,
        mode: libc::mode_t,
        base: c_int,
    ) -> Result<c_int, c_int> {
        let _ = call;
        // SAFETY: the action's path, a C string glibc copied.
        let fd = unsafe { fsguard_spawn_openat(self.cwd, path, oflag | libc::O_CLOEXEC, mode) };
        if fd < 0 {
            return Err(guard::errno());
        }
        // SAFETY: the fd just opened, ours.
        let fd = unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) };
        self.keep(fd, base)
    }

    /// A chdir action: the directory opened (`O_PATH`), then checked as the
    /// object it is, like chdir(2).
    fn chdir(
        &mut self,
        call: &'static str,
        path: *const c_char,
        base: c_int,
    ) -> Result<c_int, c_int> {
        if path.is_null() {
            return Err(libc::EFAULT);
        }
        // SAFETY: the action's path, a C string glibc copied.
        let p = unsafe { CStr::from_ptr(path) };
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
                path: std::ptr::null(),
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
#[no_mangle]
pub unsafe extern "C" fn fsguard_dlopen_check(name: *const c_char) -> c_int {
    if name.is_null() {
        return 0;
    }
    // SAFETY: the caller's C string.
    if !unsafe { CStr::from_ptr(name) }.to_bytes().contains(&b'/') {
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
