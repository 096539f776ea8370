//! `fsguard run`: the supervisor.
//!
//! The CLI forks, sets `no_new_privs` (set-id programs cannot shed the
//! preload), optionally applies a Landlock ruleset derived from the policy,
//! and execs the command under the library; then it stays as the parent:
//!
//! - it confirms the library really loaded: the library's constructor writes
//!   one byte on `FSGUARD_HANDSHAKE_FD`. Until that byte, the child is traced
//!   (ptrace, syscall stops): the loader's own syscalls (read-only opens,
//!   mmap, …) go ahead, anything else — a write, the loader's "cannot be
//!   preloaded" message, a fork, an exec — means the library is not there,
//!   and the child is killed before it does it. Exit 125, with the reason.
//! - it forwards SIGINT/SIGTERM/SIGHUP, enforces `--timeout`, gives the
//!   command a private `TMPDIR`, and summarises blocked accesses at exit
//!   (the library reports them on `FSGUARD_REPORT_FD`).

use std::ffi::{CString, OsStr, OsString};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Instant;

use fsguard_policy::{LogFormat, LogTarget, Policy, Settings, UnguardedExec};

use crate::landlock::Landlock;
use crate::{landlock, settings, Cli, EXIT_FSGUARD, USAGE};

/// Grace period between SIGTERM and SIGKILL on `--timeout`.
const GRACE_SECS: f64 = 5.0;

/// Options of `run` beyond the policy flags.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    pub landlock: Landlock,
    pub timeout: Option<f64>,
    pub keep_tmp: bool,
    pub quiet: bool,
    /// `--fail-on-block[=N]`: exit N when anything was blocked.
    pub fail_on_block: Option<u8>,
    /// `--report FILE|-`.
    pub report: Option<String>,
}

/// `--fail-on-block`'s status when no N is given.
pub const EXIT_BLOCKED: u8 = 3;

/// Parses one `run` option; `Ok(false)` if `name` is not one.
pub fn parse_option(
    o: &mut RunOptions,
    name: &str,
    inline: Option<&str>,
    args: &mut Vec<OsString>,
) -> Result<bool, String> {
    match name {
        "--landlock" => {
            o.landlock = match inline {
                None => Landlock::BestEffort,
                Some("required") => Landlock::Required,
                Some(v) => return Err(format!("--landlock: bad value {v:?} (only =required)")),
            }
        }
        "--timeout" => {
            let v = match inline {
                Some(v) => v.to_string(),
                None => args
                    .pop()
                    .and_then(|v| v.into_string().ok())
                    .ok_or("--timeout needs a value")?,
            };
            o.timeout = Some(parse_duration(&v).ok_or_else(|| {
                format!("--timeout: bad value {v:?} (a duration > 0: 10, 2.5s, 3m, 1h, 1d)")
            })?);
        }
        "--report" => {
            let v = inline
                .map(str::to_string)
                .or_else(|| args.pop()?.into_string().ok());
            o.report = Some(v.ok_or("--report needs a value (a file, or - for stderr)")?);
        }
        "--no-landlock" => o.landlock = Landlock::Off,
        "--fail-on-block" => {
            o.fail_on_block = Some(match inline {
                None => EXIT_BLOCKED,
                Some(v) => v.parse().ok().filter(|&n| n > 0).ok_or_else(|| {
                    format!("--fail-on-block: bad value {v:?} (a status from 1 to 255)")
                })?,
            })
        }
        "--keep-tmp" => o.keep_tmp = true,
        "--quiet" | "-q" => o.quiet = true,
        _ => return Ok(false),
    }
    Ok(true)
}

/// A duration as coreutils `timeout` takes it: a number with an optional
/// `s`, `m`, `h` or `d` suffix. Seconds.
pub fn parse_duration(v: &str) -> Option<f64> {
    let (num, mult) = match v.char_indices().last()? {
        (i, 's') => (&v[..i], 1.0),
        (i, 'm') => (&v[..i], 60.0),
        (i, 'h') => (&v[..i], 3600.0),
        (i, 'd') => (&v[..i], 86400.0),
        _ => (v, 1.0),
    };
    let n: f64 = num.parse().ok()?;
    let secs = n * mult;
    (secs.is_finite() && secs > 0.0).then_some(secs)
}

/// `fsguard lib-path`: the absolute path of the library `run` would use.
pub(crate) fn cmd_lib_path(cli: &Cli) -> Result<ExitCode, String> {
    if !cli.rest.is_empty() || !cli.flags.is_empty() {
        return Err("lib-path takes no arguments".into());
    }
    crate::say(&format!("{}\n", find_library()?.display()));
    Ok(ExitCode::SUCCESS)
}

/// What `fsguard check` says about the command's temporary directory.
pub fn tmpdir_note(_s: &Settings) -> String {
    let base = format!("{}/fsguard-*", std::env::temp_dir().display());
    format!(
        "\n# run: TMPDIR = a private directory {base} (readable and writable; \
         removed at exit unless --keep-tmp)\n"
    )
}

/// The library: `$FSGUARD_LIB`, else next to this executable, else `../lib/`,
/// else the copy the CLI carries (written to the user's cache).
fn find_library() -> Result<PathBuf, String> {
    let name = if cfg!(target_os = "macos") {
        "libfsguard.dylib"
    } else {
        "libfsguard.so"
    };
    let candidates: Vec<PathBuf> = match std::env::var_os("FSGUARD_LIB") {
        Some(p) => vec![PathBuf::from(p)],
        None => {
            let exe = std::env::current_exe().map_err(|e| format!("cannot locate fsguard: {e}"))?;
            let dir = exe.parent().unwrap_or(Path::new("/")).to_path_buf();
            vec![dir.join(name), dir.join("../lib").join(name)]
        }
    };
    for c in &candidates {
        // The magic number only: the library is megabytes.
        if let Ok(bytes) = std::fs::File::open(c).map(|f| {
            let mut b = Vec::with_capacity(4);
            let _ = std::io::Read::read_to_end(&mut std::io::Read::take(f, 4), &mut b);
            (b.len() == 4).then_some(b)
        }) {
            let elf = bytes.as_deref() == Some(b"\x7fELF");
            let macho = bytes
                .as_deref()
                .is_some_and(|b| b[..3] == [0xcf, 0xfa, 0xed]);
            if !(elf || macho) {
                return Err(format!("{} is not a shared library", c.display()));
            }
            return std::fs::canonicalize(c).map_err(|e| format!("{}: {e}", c.display()));
        }
    }
    let looked = candidates
        .iter()
        .map(|c| c.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    if std::env::var_os("FSGUARD_LIB").is_some() {
        return Err(format!("library not found (looked at {looked})"));
    }
    crate::embed::library()
        .map_err(|e| format!("library not found (looked at {looked}), and {e}; set FSGUARD_LIB"))
}

/// The program `execvp` would run: a path as given, else the first
/// executable regular file on `PATH`. Err: exit code and message.
fn locate(program: &OsStr) -> Result<PathBuf, (u8, String)> {
    let shown = program.to_string_lossy().into_owned();
    let is_exec = |p: &Path| {
        let c = CString::new(p.as_os_str().as_bytes()).unwrap_or_default();
        // SAFETY: a C string.
        p.is_file() && unsafe { libc::access(c.as_ptr(), libc::X_OK) } == 0
    };
    if program.as_bytes().contains(&b'/') {
        let p = PathBuf::from(program);
        if !p.exists() {
            return Err((127, format!("{shown}: No such file or directory")));
        }
        return Ok(p);
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/bin:/usr/bin".into());
    let mut found_unexec = None;
    for dir in std::env::split_paths(&path) {
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        };
        let c = dir.join(program);
        if is_exec(&c) {
            return Ok(c);
        }
        if c.is_file() && found_unexec.is_none() {
            found_unexec = Some(c);
        }
    }
    match found_unexec {
        Some(p) => Ok(p),
        None => Err((127, format!("{shown}: command not found"))),
    }
}

/// Whether the library cannot follow `exe`: statically linked (no
/// `PT_INTERP`), directly or as a script's interpreter. Set-id bits are
/// ignored under `no_new_privs`, which `run` always sets.
fn static_program(exe: &Path, depth: u32) -> Option<PathBuf> {
    let mut f = std::fs::File::open(exe).ok()?;
    let mut head = [0u8; 256];
    let n = std::io::Read::read(&mut f, &mut head).ok()?;
    let head = &head[..n];
    if head.starts_with(b"#!") && depth == 0 {
        let line = head[2..].split(|&c| c == b'\n').next()?.trim_ascii();
        let interp = line.split(|c| c.is_ascii_whitespace()).next()?;
        return static_program(Path::new(OsStr::from_bytes(interp)), 1);
    }
    if head.len() < 64 || &head[..4] != b"\x7fELF" {
        return None;
    }
    // The ELF header and the program headers: the first pages, not the
    // whole (often megabytes) program.
    let mut data = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(f, 64 * 1024), &mut data).ok()?;
    data.splice(..0, head.iter().copied());
    let le = data[5] == 1;
    let rd = |data: &[u8], o: usize, n: usize| -> Option<u64> {
        let b = data.get(o..o + n)?;
        let mut v = [0u8; 8];
        if le {
            v[..n].copy_from_slice(b);
            Some(u64::from_le_bytes(v))
        } else {
            v[8 - n..].copy_from_slice(b);
            Some(u64::from_be_bytes(v))
        }
    };
    let (phoff, ent, num) = if data[4] == 2 {
        (
            rd(&data, 0x20, 8)?,
            rd(&data, 0x36, 2)?,
            rd(&data, 0x38, 2)?,
        )
    } else {
        (
            rd(&data, 0x1c, 4)?,
            rd(&data, 0x2a, 2)?,
            rd(&data, 0x2c, 2)?,
        )
    };
    if phoff.saturating_add(num * ent) > data.len() as u64 {
        // Program headers past the first pages: read it all.
        data = std::fs::read(exe).ok()?;
    }
    let interp = (0..num).any(|i| rd(&data, (phoff + i * ent) as usize, 4) == Some(3));
    (!interp).then(|| std::fs::canonicalize(exe).unwrap_or_else(|_| exe.to_path_buf()))
}

/// A trace line from the CLI itself, to the policy's log target.
fn trace_line(s: &Settings, event: &str, kind: &str, path: &Path) {
    let p = path.display().to_string();
    let line = match s.log.format {
        LogFormat::Text => {
            let shown = if p.contains([' ', '"', '\\']) || p.chars().any(char::is_control) {
                format!("{p:?}")
            } else {
                p.clone()
            };
            if event == "unguarded" {
                format!("[fsguard] unguarded exec {kind} path={shown} call=execve\n")
            } else {
                format!("[fsguard] {event} execve exec path={shown} rule=unguarded_exec:{kind}\n")
            }
        }
        LogFormat::Json => format!(
            "{}\n",
            serde_json::json!({
                "event": event, "call": "execve", "access": "exec", "path": p,
                "rule": format!("unguarded_exec:{kind}"), "pid": std::process::id(),
                "errno": if event == "blocked" { 13 } else { 0 },
            })
        ),
    };
    use std::io::Write;
    match &s.log.target {
        LogTarget::Off => {}
        LogTarget::Stderr => {
            let _ = std::io::stderr().write_all(line.as_bytes());
        }
        LogTarget::File(f) => {
            let _ = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(f)
                .and_then(|mut f| f.write_all(line.as_bytes()));
        }
    }
}

/// The command's private temporary directory.
struct TmpDir {
    path: PathBuf,
    keep: bool,
}

impl TmpDir {
    /// A fresh private directory under the system temporary directory,
    /// never inside the root (it would show up in `git status`, and making
    /// it would change the root's mtime): when `$TMPDIR` lies inside the
    /// root, the next of `/tmp`, `/var/tmp`, `/dev/shm` that does not. The
    /// policy gets it as its `tmpdir`: readable and writable.
    fn create(s: &Settings, keep: bool) -> Result<TmpDir, String> {
        let stamp = || {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0);
            format!("{}-{t:08x}", std::process::id())
        };
        let root = s
            .root
            .as_deref()
            .and_then(|r| std::fs::canonicalize(r).ok());
        let inside = |b: &Path| {
            let b = std::fs::canonicalize(b).unwrap_or_else(|_| b.to_path_buf());
            root.as_deref().is_some_and(|r| b.starts_with(r))
        };
        let candidates = [
            std::env::temp_dir(),
            PathBuf::from("/tmp"),
            PathBuf::from("/var/tmp"),
            PathBuf::from("/dev/shm"),
        ];
        // Outside the root if any base is; else (root `/`) at least not the
        // root directory itself.
        let base = candidates
            .iter()
            .find(|b| b.is_dir() && !inside(b))
            .or_else(|| {
                candidates.iter().find(|b| {
                    b.is_dir() && std::fs::canonicalize(b).ok().as_deref() != root.as_deref()
                })
            })
            .unwrap_or(&candidates[0]);
        let bases = [base.join(format!("fsguard-{}", stamp()))];
        let mut last = String::new();
        for b in bases {
            use std::os::unix::fs::DirBuilderExt;
            match std::fs::DirBuilder::new().mode(0o700).create(&b) {
                Ok(()) => {
                    let path = std::fs::canonicalize(&b).map_err(|e| e.to_string())?;
                    return Ok(TmpDir { path, keep });
                }
                Err(e) => last = format!("{}: {e}", b.display()),
            }
        }
        Err(format!("cannot create a temporary directory: {last}"))
    }
}

impl Drop for TmpDir {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

// ---------------------------------------------------------------------------
// Signals: forwarded to the child; SIGCHLD only wakes the wait loop.

static CHILD: AtomicI32 = AtomicI32::new(0);

extern "C" fn forward(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    let pid = CHILD.load(Ordering::Relaxed);
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
    let code = unsafe { (*info).si_code };
    // A terminal's ^C already reached the child (same process group); only
    // signals sent to fsguard itself (kill, si_code <= 0) are passed on.
    if pid > 0 && code <= 0 {
        // SAFETY: kill is async-signal-safe.
        unsafe { libc::kill(pid, sig) };
    }
}

extern "C" fn wake(_: libc::c_int) {}

fn install_handlers() {
    // SAFETY: plain sigaction setup with handlers that only call
    // async-signal-safe functions; no SA_RESTART so waits wake up.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        libc::sigemptyset(&mut sa.sa_mask);
        sa.sa_sigaction = forward as *const () as usize;
        sa.sa_flags = libc::SA_SIGINFO;
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
        sa.sa_sigaction = wake as *const () as usize;
        sa.sa_flags = 0;
        libc::sigaction(libc::SIGCHLD, &sa, std::ptr::null_mut());
    }
}

/// SIGCHLD blocked in the supervisor; dropping it unblocks it. The child
/// is forked before, so it keeps the mask it was given.
struct SigChld {
    /// The mask to wait with: the previous one, minus SIGCHLD.
    waiting: libc::sigset_t,
    old: libc::sigset_t,
}

impl SigChld {
    fn block() -> SigChld {
        // SAFETY: sigset_t values filled by sigemptyset/pthread_sigmask.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGCHLD);
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
            let mut waiting = old;
            libc::sigdelset(&mut waiting, libc::SIGCHLD);
            SigChld { waiting, old }
        }
    }

    /// Sleeps until `fd` is readable (or closed), a signal arrives (a
    /// pending SIGCHLD at once) or `ms` pass.
    fn wait(&self, fd: Option<RawFd>, ms: i64) {
        let mut pfd = libc::pollfd {
            fd: fd.unwrap_or(-1),
            events: libc::POLLIN,
            revents: 0,
        };
        let ts = libc::timespec {
            tv_sec: ms / 1000,
            tv_nsec: (ms % 1000) * 1_000_000,
        };
        // SAFETY: one pollfd (a negative fd is ignored), a valid timespec
        // and signal mask.
        unsafe { libc::ppoll(&mut pfd, 1, &ts, &self.waiting) };
    }
}

impl Drop for SigChld {
    fn drop(&mut self) {
        // SAFETY: restores the mask saved in `block`.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.old, std::ptr::null_mut()) };
    }
}

/// The thread making the `cache` preset's directories; joined by
/// `finish`, or when dropped.
struct Maker(Option<std::thread::JoinHandle<()>>);

impl Maker {
    fn start(dirs: Option<crate::presets::CacheDirs>) -> Maker {
        let Some(dirs) = dirs else {
            return Maker(None);
        };
        let dirs = std::sync::Arc::new(dirs);
        let theirs = dirs.clone();
        match std::thread::Builder::new().spawn(move || theirs.make()) {
            Ok(h) => Maker(Some(h)),
            // No thread: made here and now.
            Err(_) => {
                dirs.make();
                Maker(None)
            }
        }
    }

    fn finish(&mut self) {
        if let Some(h) = self.0.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Maker {
    fn drop(&mut self) {
        self.finish();
    }
}

// ---------------------------------------------------------------------------
// The supervised child.

/// Makes a C string; fails on an interior NUL.
fn cstr(b: &[u8]) -> Result<CString, String> {
    CString::new(b).map_err(|_| format!("{}: contains a NUL byte", String::from_utf8_lossy(b)))
}

fn pipe(flags: libc::c_int) -> Result<(OwnedFd, OwnedFd), String> {
    let mut fds = [0; 2];
    // SAFETY: fds has room for two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), flags) } != 0 {
        return Err(format!("pipe: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: fresh descriptors we own.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// A memfd holding `frozen`, sealed against any change (the library refuses
/// an unsealed one), `CLOEXEC` until the child makes it inheritable.
fn sealed_policy(frozen: &str) -> Result<OwnedFd, String> {
    let err = |what: &str| format!("{what}: {}", std::io::Error::last_os_error());
    // SAFETY: a C string literal; the fd is ours.
    let fd = unsafe {
        libc::memfd_create(
            c"fsguard-policy".as_ptr(),
            libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING,
        )
    };
    if fd < 0 {
        return Err(err("memfd_create"));
    }
    // SAFETY: fresh and ours.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut f = std::fs::File::from(fd);
    std::io::Write::write_all(&mut f, frozen.as_bytes()).map_err(|e| e.to_string())?;
    let seals = libc::F_SEAL_WRITE | libc::F_SEAL_GROW | libc::F_SEAL_SHRINK | libc::F_SEAL_SEAL;
    // SAFETY: fcntl on our memfd.
    if unsafe { libc::fcntl(f.as_raw_fd(), libc::F_ADD_SEALS, seals) } != 0 {
        return Err(err("sealing the policy memfd"));
    }
    Ok(f.into())
}

fn set_nonblocking(fd: RawFd) {
    // SAFETY: fcntl on our own fd.
    unsafe {
        let fl = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK);
    }
}

/// What the child reports on the error pipe before exec.
const MSG_TRACED: u8 = b'T';
const MSG_UNTRACED: u8 = b'U';
const MSG_EXEC: u8 = b'E';
const MSG_LANDLOCK: u8 = b'L';

pub(crate) fn cmd_run(cli: &Cli) -> Result<ExitCode, String> {
    let Some((program, args)) = cli.rest.split_first() else {
        return Err(format!("run: no command given\n{USAGE}"));
    };
    let opts = &cli.run;
    let exe = locate(program);
    let mut settings = settings(cli, exe.as_ref().ok().map(PathBuf::as_path))?;
    Policy::new(settings.clone()).map_err(|e| e.to_string())?;
    let found = crate::discover::discovered(cli)?;
    if let (Some(f), false) = (&found, opts.quiet) {
        eprintln!(
            "fsguard: policy: {} (discovered; --no-config skips it)",
            f.display()
        );
    }
    let lib = find_library()?;
    let exe = match exe {
        Ok(p) => p,
        Err((code, msg)) => {
            eprintln!("fsguard: {msg}");
            return Ok(ExitCode::from(code));
        }
    };
    let unguarded = static_program(&exe, 0);
    if let Some(p) = &unguarded {
        match settings.unguarded_exec {
            UnguardedExec::Deny => {
                trace_line(&settings, "blocked", "static", p);
                eprintln!(
                    "fsguard: {}: statically linked, the library cannot follow it \
                     (unguarded_exec = deny)",
                    p.display()
                );
                return Ok(ExitCode::from(126));
            }
            UnguardedExec::Warn => trace_line(&settings, "unguarded", "static", p),
            UnguardedExec::Allow => {}
        }
    }

    let tmp = TmpDir::create(&settings, opts.keep_tmp)?;
    let tmp_s = tmp.path.display().to_string();
    settings.tmpdir = Some(tmp_s.clone());
    // A log file is written here, from the lines the library relays: no
    // guarded process holds a descriptor to it.
    let log_file = match &settings.log.target {
        LogTarget::File(f) => Some(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(f)
                .map_err(|e| format!("cannot open log {f}: {e}"))?,
        ),
        _ => None,
    };
    settings.log.relayed = log_file.is_some();
    let policy = Policy::new(settings.clone()).map_err(|e| e.to_string())?;

    let mut ruleset = None;
    if opts.landlock != Landlock::Off {
        let abi = landlock::kernel_abi();
        if abi == 0 {
            let why = "this kernel has no Landlock (not built in, or not enabled at boot: \
                       add landlock to the lsm= boot parameter)";
            if opts.landlock == Landlock::Required {
                return Err(format!("--landlock=required: {why}"));
            }
            if opts.landlock == Landlock::BestEffort {
                eprintln!("fsguard: warning: {why}; --landlock ignored, the library alone guards");
            }
        } else {
            let exe_abs = std::fs::canonicalize(&exe).unwrap_or_else(|_| exe.clone());
            ruleset = Some(landlock::ruleset(
                &settings,
                opts.landlock,
                &lib,
                &exe_abs,
                &tmp.path,
            )?);
        }
    }

    // The handshake socket and the report pipe; the child's ends are made
    // inheritable after fork.
    let mut sp = [0; 2];
    // SAFETY: sp has room for two descriptors.
    if unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            0,
            sp.as_mut_ptr(),
        )
    } != 0
    {
        return Err(format!("socketpair: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: fresh descriptors we own.
    let (hs_parent, hs_child) =
        unsafe { (OwnedFd::from_raw_fd(sp[0]), OwnedFd::from_raw_fd(sp[1])) };
    let (rep_r, rep_w) = pipe(libc::O_CLOEXEC)?;
    set_nonblocking(rep_r.as_raw_fd());
    // The library must never block on a full pipe.
    set_nonblocking(rep_w.as_raw_fd());
    // SAFETY: fcntl on our pipe; failure only leaves the default size.
    unsafe { libc::fcntl(rep_w.as_raw_fd(), libc::F_SETPIPE_SZ, 1 << 20) };
    let (err_r, err_w) = pipe(libc::O_CLOEXEC)?;

    // argv and envp, prepared before fork.
    let path_c = cstr(exe.as_os_str().as_bytes())?;
    let mut argv_c = vec![cstr(program.as_bytes())?];
    for a in args {
        argv_c.push(cstr(a.as_bytes())?);
    }
    let preload_var = if cfg!(target_os = "macos") {
        "DYLD_INSERT_LIBRARIES"
    } else {
        "LD_PRELOAD"
    };
    let mut preload = OsString::from(lib.as_os_str());
    if let Some(old) = std::env::var_os(preload_var).filter(|v| !v.is_empty()) {
        preload.push(":");
        preload.push(old);
    }
    let mut env: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(k, _)| {
            let k = k.as_bytes();
            !k.starts_with(b"FSGUARD_") && k != preload_var.as_bytes() && k != b"TMPDIR"
        })
        .collect();
    env.push((preload_var.into(), preload));
    // The policy goes in a sealed memfd, not the environment: a large one
    // would make every exec fail with E2BIG.
    let policy_fd = sealed_policy(&settings.to_frozen())?;
    env.push((
        "FSGUARD_POLICY_FD".into(),
        policy_fd.as_raw_fd().to_string().into(),
    ));
    env.push((
        "FSGUARD_REPORT_FD".into(),
        rep_w.as_raw_fd().to_string().into(),
    ));
    env.push(("TMPDIR".into(), tmp.path.clone().into_os_string()));
    let mut cache_dirs = None;
    if settings.cache {
        let (cache, dirs) = crate::presets::cache_env(&tmp.path, &env);
        env.retain(|(k, _)| !cache.iter().any(|(c, _)| c == k));
        env.extend(cache);
        cache_dirs = Some(dirs);
    }
    let traced = unguarded.is_none();
    if traced {
        env.push((
            "FSGUARD_HANDSHAKE_FD".into(),
            hs_child.as_raw_fd().to_string().into(),
        ));
    }
    let mut envp_c = Vec::new();
    for (k, v) in &env {
        let mut kv = k.as_bytes().to_vec();
        kv.push(b'=');
        kv.extend_from_slice(v.as_bytes());
        envp_c.push(cstr(&kv)?);
    }
    let argv: Vec<*const libc::c_char> = argv_c
        .iter()
        .map(|c| c.as_ptr())
        .chain([std::ptr::null()])
        .collect();
    let envp: Vec<*const libc::c_char> = envp_c
        .iter()
        .map(|c| c.as_ptr())
        .chain([std::ptr::null()])
        .collect();

    install_handlers();
    // SAFETY: fork in a single-threaded process; the child only makes
    // syscalls (and Landlock's restrict_self) before exec or _exit.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("fork: {}", std::io::Error::last_os_error()));
    }
    if pid == 0 {
        // SAFETY: the child; see `child`.
        unsafe {
            child(
                &path_c,
                &argv,
                &envp,
                [
                    hs_child.as_raw_fd(),
                    rep_w.as_raw_fd(),
                    policy_fd.as_raw_fd(),
                ],
                err_w.as_raw_fd(),
                ruleset,
                opts.landlock == Landlock::Required,
                traced,
                cache_dirs.as_ref(),
            )
        }
    }
    CHILD.store(pid, Ordering::Relaxed);
    // SIGCHLD stays pending until the wait loop asks for it (`ppoll`): no
    // handler runs for each of the gate's ptrace stops, and a child that
    // exits between two checks cannot be missed.
    let chld = SigChld::block();
    // The cache directories are made while the command's loader runs under
    // the gate, and are there before the gate lets the command go on (an
    // untraced child made them itself before exec). Dropped before `tmp`.
    let mut cache_maker = Maker::start(cache_dirs);
    drop((hs_child, rep_w, err_w, policy_fd));

    // What happened before exec.
    let mut pre = Vec::new();
    {
        let mut f = std::fs::File::from(err_r);
        let _ = std::io::Read::read_to_end(&mut f, &mut pre);
    }
    // With a ruleset, the child's first byte is its enforcement status.
    let ll_status = pre.first().and_then(|&b| landlock::status_from_byte(b));
    let ll_note = ll_status
        .as_ref()
        .and_then(|st| landlock::status_message(st, landlock::kernel_abi()));
    let pre = &pre[usize::from(ll_status.is_some())..];
    let was_traced = pre.first() == Some(&MSG_TRACED);
    if let Some(pos) = pre.iter().position(|&b| b == MSG_EXEC || b == MSG_LANDLOCK) {
        let errno = pre
            .get(pos + 1..pos + 5)
            .map(|b| i32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
            .unwrap_or(0);
        reap(pid);
        let err = std::io::Error::from_raw_os_error(errno);
        if pre[pos] == MSG_LANDLOCK {
            match ll_note {
                Some(note) => eprintln!("fsguard: error: --landlock=required: Landlock {note}"),
                None => eprintln!("fsguard: error: cannot apply the Landlock ruleset: {err}"),
            }
            return Ok(ExitCode::from(EXIT_FSGUARD));
        }
        eprintln!("fsguard: {}: {err}", program.to_string_lossy());
        return Ok(ExitCode::from(if errno == libc::ENOENT {
            127
        } else {
            126
        }));
    }

    // Reported once, and only when the kernel left something out.
    if let (Some(note), false) = (&ll_note, opts.quiet) {
        eprintln!("fsguard: landlock: {note}");
    }

    let started = Instant::now();
    if traced {
        let gate = if was_traced {
            gate(pid, hs_child_number(&env), || cache_maker.finish())
        } else {
            Gate::Confirmed
        };
        let refused = match gate {
            Gate::Confirmed => {
                // The byte is written (traced) or will be (untraced, where
                // EOF means the child went away without loading us).
                let mut b = [0u8; 1];
                let mut f = std::fs::File::from(hs_parent);
                // SIGCHLD interrupts the read (no SA_RESTART): retry.
                let got = loop {
                    match std::io::Read::read(&mut f, &mut b) {
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                        r => break r,
                    }
                };
                match got {
                    Ok(1) => None,
                    _ => Some(if was_traced {
                        "the library did not confirm it loaded".to_string()
                    } else {
                        "the library did not load (and the command could not be \
                         stopped early: ptrace unavailable)"
                            .to_string()
                    }),
                }
            }
            Gate::Refused(msg) => Some(msg),
        };
        if let Some(why) = refused {
            // SAFETY: our child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            reap(pid);
            eprintln!(
                "fsguard: error: {}: the guard library {} did not load in the command: \
                 {why}; the command was stopped",
                program.to_string_lossy(),
                lib.display()
            );
            return Ok(ExitCode::from(EXIT_FSGUARD));
        }
    }

    let mut report = Report {
        echo: true,
        file: log_file,
        ..Report::default()
    };
    let mut timed_out = false;
    // Until every writer is gone; then only SIGCHLD and the timeout wake
    // the loop (a pipe at EOF would make every poll return at once).
    let mut rep_open = true;
    let status = loop {
        if let Some(secs) = opts.timeout {
            let over = started.elapsed().as_secs_f64() - secs;
            if over >= 0.0 && !timed_out {
                timed_out = true;
                signal_tree(pid, libc::SIGTERM);
            } else if over >= GRACE_SECS {
                signal_tree(pid, libc::SIGKILL);
            }
        }
        let mut st = 0;
        // SAFETY: our child.
        let r = unsafe { libc::waitpid(pid, &mut st, libc::WNOHANG) };
        if r == pid {
            break st;
        }
        if r < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return Err(format!("wait: {}", std::io::Error::last_os_error()));
        }
        chld.wait(rep_open.then(|| rep_r.as_raw_fd()), 200);
        if rep_open {
            rep_open = report.drain(rep_r.as_raw_fd());
        }
    };
    drop(chld);
    CHILD.store(0, Ordering::Relaxed);
    report.drain(rep_r.as_raw_fd());

    let code = if timed_out {
        if !opts.quiet {
            eprintln!("fsguard: {}: timed out", program.to_string_lossy());
        }
        124
    } else if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status) as u8
    } else if libc::WIFSIGNALED(status) {
        (128 + libc::WTERMSIG(status)) as u8
    } else {
        EXIT_FSGUARD
    };
    // The summary comes from the supervisor's own channel (the report
    // pipe), so it is printed whatever the command did with its stderr, and
    // also when the trace lines go to a file or nowhere.
    if !opts.quiet && opts.report.as_deref() != Some("-") {
        report.summary();
        if let (Some(f), true) = (&found, report.blocked + report.audited > 0) {
            eprintln!("fsguard: policy was {}", f.display());
        }
        report.hints(&policy);
    }
    if let Some(t) = &opts.report {
        crate::report::write(t, &report.events, &settings, cli);
    }
    let code = crate::outcome::fail_on_block(
        opts.fail_on_block,
        code,
        timed_out,
        report.blocked + report.audited,
        opts.quiet,
    );
    if !opts.quiet && opts.keep_tmp {
        eprintln!("fsguard: kept TMPDIR {tmp_s}");
    }
    drop(tmp);
    if let (true, Some(tag)) = (settings.ipc, &settings.ipc_tag) {
        crate::presets::ipc_cleanup(tag);
    }
    Ok(ExitCode::from(code))
}

/// Signals `pid` and every process descending from it (a timed-out
/// command's own children must not outlive it).
fn signal_tree(pid: libc::pid_t, sig: libc::c_int) {
    let mut parents: Vec<(libc::pid_t, libc::pid_t)> = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for e in dir.flatten() {
            let Some(p) = e.file_name().to_str().and_then(|n| n.parse().ok()) else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
                continue;
            };
            // pid (comm) state ppid …; comm may hold spaces and parentheses.
            let ppid = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse().ok());
            if let Some(pp) = ppid {
                parents.push((p, pp));
            }
        }
    }
    let mut tree = vec![pid];
    let mut i = 0;
    while i < tree.len() {
        let cur = tree[i];
        tree.extend(parents.iter().filter(|(_, pp)| *pp == cur).map(|(p, _)| *p));
        i += 1;
    }
    for p in tree {
        // SAFETY: signals processes of the command's tree.
        unsafe { libc::kill(p, sig) };
    }
}

fn hs_child_number(env: &[(OsString, OsString)]) -> i32 {
    env.iter()
        .find(|(k, _)| k == "FSGUARD_HANDSHAKE_FD")
        .and_then(|(_, v)| v.to_str()?.parse().ok())
        .unwrap_or(-1)
}

fn reap(pid: libc::pid_t) {
    let mut st = 0;
    // SAFETY: our child; retried on EINTR.
    while unsafe { libc::waitpid(pid, &mut st, libc::__WALL) } < 0
        && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
    {}
}

/// The forked child: runs only syscalls until exec. Reports failures on
/// `err` as a tag byte and an errno.
#[allow(clippy::too_many_arguments)]
unsafe fn child(
    path: &CString,
    argv: &[*const libc::c_char],
    envp: &[*const libc::c_char],
    keep: [RawFd; 3],
    err: RawFd,
    ruleset: Option<::landlock::RulesetCreated>,
    required: bool,
    trace: bool,
    cache: Option<&crate::presets::CacheDirs>,
) -> ! {
    let fail = |tag: u8, errno: i32| -> ! {
        let mut msg = [0u8; 5];
        msg[0] = tag;
        msg[1..].copy_from_slice(&errno.to_ne_bytes());
        // SAFETY: writes to our pipe, then leaves without running anything.
        unsafe {
            libc::write(err, msg.as_ptr().cast(), msg.len());
            libc::_exit(127)
        }
    };
    // SAFETY: syscalls on fds and process state of this child.
    unsafe {
        for fd in keep {
            libc::fcntl(fd, libc::F_SETFD, 0);
        }
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            fail(MSG_LANDLOCK, *libc::__errno_location());
        }
    }
    if let Some(rs) = ruleset {
        match rs.restrict_self() {
            Ok(st) => {
                // SAFETY: writes one byte to our pipe.
                unsafe {
                    libc::write(err, [landlock::status_byte(&st.ruleset)].as_ptr().cast(), 1)
                };
                if required && st.ruleset != ::landlock::RulesetStatus::FullyEnforced {
                    fail(MSG_LANDLOCK, libc::ENOSYS)
                }
            }
            Err(_) => fail(MSG_LANDLOCK, libc::EPERM),
        }
    }
    // SAFETY: as above.
    unsafe {
        let tag = if trace && libc::ptrace(libc::PTRACE_TRACEME, 0, 0, 0) == 0 {
            MSG_TRACED
        } else {
            MSG_UNTRACED
        };
        // No gate will wait for the supervisor's copy: made here, now.
        if let (MSG_UNTRACED, Some(c)) = (tag, cache) {
            c.make();
        }
        libc::write(err, [tag].as_ptr().cast(), 1);
        libc::execve(path.as_ptr(), argv.as_ptr(), envp.as_ptr());
        fail(MSG_EXEC, *libc::__errno_location());
    }
}

// ---------------------------------------------------------------------------
// The gate: syscalls of a traced child until the library's handshake.

enum Gate {
    /// The handshake write is under way; the child is detached.
    Confirmed,
    /// The child was killed (or ended) before the library loaded.
    Refused(String),
}

/// `struct ptrace_syscall_info` (linux/ptrace.h).
#[repr(C)]
#[derive(Default)]
struct SyscallInfo {
    op: u8,
    _pad: [u8; 3],
    arch: u32,
    ip: u64,
    sp: u64,
    data: [u64; 7],
}

const PTRACE_GET_SYSCALL_INFO: libc::c_uint = 0x420e;
const OP_ENTRY: u8 = 1;

/// What the loader (and C runtimes' constructors) do before ours runs:
/// reading and mapping files, memory, signals, ids. None of it changes
/// anything outside the process.
#[allow(non_upper_case_globals)]
fn harmless(nr: i64, a: &[u64]) -> bool {
    use libc::*;
    let read_only_open = |flags: u64| {
        let f = flags as c_int;
        f & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND) == 0 && f & O_TMPFILE != O_TMPFILE
    };
    #[cfg(target_arch = "x86_64")]
    match nr {
        SYS_open => return read_only_open(a[1]),
        SYS_access | SYS_readlink | SYS_stat | SYS_lstat | SYS_arch_prctl | SYS_getdents => {
            return true
        }
        _ => {}
    }
    match nr {
        SYS_openat => read_only_open(a[2]),
        SYS_ioctl => matches!(a[1] as c_ulong, TCGETS | TIOCGWINSZ | FIONREAD),
        SYS_prlimit64 => a[2] == 0,
        SYS_fcntl => matches!(a[1] as c_int, F_GETFD | F_GETFL | F_DUPFD_CLOEXEC | F_DUPFD),
        SYS_read
        | SYS_pread64
        | SYS_readv
        | SYS_preadv
        | SYS_mmap
        | SYS_mprotect
        | SYS_munmap
        | SYS_mremap
        | SYS_madvise
        | SYS_brk
        | SYS_close
        | SYS_fstat
        | SYS_newfstatat
        | SYS_statx
        | SYS_statfs
        | SYS_fstatfs
        | SYS_lseek
        | SYS_faccessat
        | SYS_faccessat2
        | SYS_readlinkat
        | SYS_getdents64
        | SYS_getcwd
        | SYS_set_tid_address
        | SYS_set_robust_list
        | SYS_rseq
        | SYS_getrandom
        | SYS_futex
        | SYS_getpid
        | SYS_gettid
        | SYS_getppid
        | SYS_getuid
        | SYS_geteuid
        | SYS_getgid
        | SYS_getegid
        | SYS_getresuid
        | SYS_getresgid
        | SYS_getgroups
        | SYS_rt_sigaction
        | SYS_rt_sigprocmask
        | SYS_sigaltstack
        | SYS_uname
        | SYS_sched_getaffinity
        | SYS_sched_yield
        | SYS_sysinfo
        | SYS_clock_gettime
        | SYS_clock_getres
        | SYS_gettimeofday
        | SYS_getrlimit
        | SYS_capget
        | SYS_membarrier
        | SYS_mincore
        | SYS_dup
        | SYS_exit
        | SYS_exit_group => true,
        _ => false,
    }
}

/// Reads up to `len` bytes of the child's memory (for the loader's message).
fn peek(pid: libc::pid_t, addr: u64, len: usize) -> Vec<u8> {
    let mut buf = vec![0u8; len.min(2048)];
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let remote = libc::iovec {
        iov_base: addr as *mut libc::c_void,
        iov_len: buf.len(),
    };
    // SAFETY: reads our tracee's memory into our buffer.
    let n = unsafe { libc::process_vm_readv(pid, &local, 1, &remote, 1, 0) };
    buf.truncate(n.max(0) as usize);
    buf
}

/// What a refused write/writev to stderr would have said (the loader's
/// "cannot be preloaded" line).
fn stderr_text(pid: libc::pid_t, nr: i64, a: &[u64]) -> Option<String> {
    if a[0] != 2 {
        return None;
    }
    let bytes = if nr == libc::SYS_write {
        peek(pid, a[1], a[2] as usize)
    } else if nr == libc::SYS_writev {
        let n = (a[2] as usize).min(16);
        let raw = peek(pid, a[1], n * 16);
        let mut out = Vec::new();
        for iov in raw.chunks_exact(16) {
            let base = u64::from_ne_bytes(iov[..8].try_into().ok()?);
            let len = u64::from_ne_bytes(iov[8..].try_into().ok()?);
            out.extend(peek(pid, base, len as usize));
        }
        out
    } else {
        return None;
    };
    let s = String::from_utf8_lossy(&bytes).trim().to_string();
    (!s.is_empty()).then_some(s)
}

/// `ready` runs before a confirmed command is let go.
fn gate(pid: libc::pid_t, hs_fd: i32, ready: impl FnOnce()) -> Gate {
    let mut st = 0;
    // The stop after exec.
    // SAFETY: waitpid/ptrace on our traced child throughout.
    unsafe {
        if libc::waitpid(pid, &mut st, libc::__WALL) != pid || !libc::WIFSTOPPED(st) {
            return Gate::Refused("the command ended before it started".into());
        }
        let opts = libc::PTRACE_O_EXITKILL | libc::PTRACE_O_TRACESYSGOOD;
        libc::ptrace(libc::PTRACE_SETOPTIONS, pid, 0, opts as libc::c_long);
    }
    // Both on one CPU while they take turns (gate.rs); undone before detach.
    let pin = crate::gate::Pin::new(pid);
    let mut sig = 0;
    loop {
        // SAFETY: as above.
        unsafe {
            if libc::ptrace(libc::PTRACE_SYSCALL, pid, 0, sig as libc::c_long) != 0 {
                return Gate::Refused(format!("ptrace: {}", std::io::Error::last_os_error()));
            }
        }
        sig = 0;
        loop {
            // SAFETY: as above.
            let r = unsafe { libc::waitpid(pid, &mut st, libc::__WALL) };
            if r == pid {
                break;
            }
            if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                return Gate::Refused("lost the command".into());
            }
        }
        if libc::WIFEXITED(st) || libc::WIFSIGNALED(st) {
            return Gate::Refused(
                "the command ended before the library confirmed it loaded".into(),
            );
        }
        let s = libc::WSTOPSIG(st);
        if s != (libc::SIGTRAP | 0x80) {
            if s != libc::SIGTRAP {
                sig = s;
            }
            continue;
        }
        let mut info = SyscallInfo::default();
        // SAFETY: the kernel fills at most size_of::<SyscallInfo>() bytes.
        let n = unsafe {
            libc::ptrace(
                PTRACE_GET_SYSCALL_INFO as _,
                pid,
                std::mem::size_of::<SyscallInfo>(),
                &mut info as *mut SyscallInfo,
            )
        };
        if n <= 0 || info.op != OP_ENTRY {
            continue;
        }
        let nr = info.data[0] as i64;
        let a = &info.data[1..7];
        if nr == libc::SYS_write && a[0] as i64 == i64::from(hs_fd) {
            // The library's constructor: let it go on, untraced, with its
            // own CPU set back.
            ready();
            drop(pin);
            // SAFETY: detaching from our tracee.
            unsafe { libc::ptrace(libc::PTRACE_DETACH, pid, 0, 0) };
            return Gate::Confirmed;
        }
        if harmless(nr, a) {
            continue;
        }
        let said = stderr_text(pid, nr, a);
        // SAFETY: our tracee; it dies at this syscall-entry stop.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        return Gate::Refused(match said {
            Some(s) => format!("the loader said: {s}"),
            None => format!("it made system call {nr} before the library confirmed it loaded"),
        });
    }
}

/// How many distinct events the summary names.
const SUMMARY_MAX: usize = 20;

/// Denials the library reported, and the trace lines it handed over to be
/// printed on fsguard's own stderr.
#[derive(Default)]
struct Report {
    pending: Vec<u8>,
    blocked: u64,
    audited: u64,
    first_blocked: Option<String>,
    first_audited: Option<String>,
    /// Trace or report lines the library could not deliver.
    lost: u64,
    /// Distinct events, in order of first occurrence, with their counts
    /// (at most [`EVENTS_MAX`]; `index` finds one).
    events: Vec<(String, u64)>,
    index: std::collections::HashMap<String, usize>,
    /// Events past [`EVENTS_MAX`] distinct ones.
    other_events: u64,
    /// Print relayed trace lines as they arrive.
    echo: bool,
    /// The log file relayed lines are appended to instead (`--log FILE`).
    file: Option<std::fs::File>,
}

/// Reads per drain: 4 MiB, more than the pipe holds.
const DRAIN_READS: usize = 512;

/// Distinct events kept for the summary: every guarded process can write
/// to the pipe, and the supervisor's memory must not grow without bound.
const EVENTS_MAX: usize = 10_000;

/// Bytes without a newline kept waiting for the rest of their line. The
/// library's messages are shorter (one atomic pipe write each, starting with
/// a newline), so a longer run is a program's own bytes: cut there.
const PENDING_MAX: usize = 8192;

/// A line as received, with control characters (a terminal escape written
/// to the pipe by a program) shown as `?`: the library escapes its own.
fn printable(line: &[u8]) -> String {
    String::from_utf8_lossy(line)
        .chars()
        .map(|c| if c.is_control() && c != '\t' { '?' } else { c })
        .collect()
}

impl Report {
    /// Reads what is in the pipe; false once every writer has closed it.
    fn drain(&mut self, fd: RawFd) -> bool {
        let mut buf = [0u8; 8192];
        let mut open = true;
        // Bounded, so a process that writes to the pipe without end cannot
        // keep the supervisor from its other work (the timeout, the wait).
        for _ in 0..DRAIN_READS {
            // SAFETY: reads into our buffer from our non-blocking pipe.
            let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                open = n < 0;
                break;
            }
            self.pending.extend_from_slice(&buf[..n as usize]);
            self.lines();
        }
        self.lines();
        open
    }

    /// Handles the whole lines received so far.
    fn lines(&mut self) {
        loop {
            let line = match self.pending.iter().position(|&b| b == b'\n') {
                Some(i) => {
                    let line = printable(&self.pending[..i]);
                    self.pending.drain(..=i);
                    line
                }
                None if self.pending.len() > PENDING_MAX => {
                    let line = printable(&self.pending);
                    self.pending.clear();
                    line
                }
                None => break,
            };
            if let Some(rest) = line.strip_prefix("blocked ") {
                self.blocked += 1;
                self.first_blocked.get_or_insert_with(|| rest.to_string());
                self.note(rest.to_string());
            } else if let Some(n) = line
                .strip_prefix("lost ")
                .and_then(|n| n.parse::<u64>().ok())
            {
                self.lost = self.lost.saturating_add(n);
            } else if let Some(rest) = line.strip_prefix("audit ") {
                self.audited += 1;
                self.first_audited.get_or_insert_with(|| rest.to_string());
                self.note(format!("(audit) {rest}"));
            } else if !line.is_empty() {
                // A whole trace line the library relayed (the log is on
                // stderr): ours to print, whatever the command did with its
                // own stderr.
                use std::io::Write;
                // One write per line, so nothing else appending to the
                // same stream lands in the middle of it.
                if let Some(f) = &mut self.file {
                    // A full disk or a file that refuses writes loses the
                    // line: counted, so the summary never reads as complete.
                    if f.write_all(format!("{line}\n").as_bytes()).is_err() {
                        self.lost += 1;
                    }
                } else if self.echo {
                    let _ = std::io::stderr().write_all(format!("{line}\n").as_bytes());
                }
            }
        }
    }

    fn note(&mut self, ev: String) {
        match self.index.get(&ev) {
            Some(&i) => self.events[i].1 += 1,
            None if self.events.len() < EVENTS_MAX => {
                self.index.insert(ev.clone(), self.events.len());
                self.events.push((ev, 1));
            }
            None => self.other_events += 1,
        }
    }

    /// One line per distinct rule that would allow what was blocked: the
    /// flag and the config line (never for `deny_always` or `secrets`).
    fn hints(&self, policy: &Policy) {
        let mut seen: Vec<String> = Vec::new();
        for (ev, _) in &self.events {
            let mut it = ev.splitn(3, ' ');
            let (Some(_call), Some(access), Some(path)) = (it.next(), it.next(), it.next()) else {
                continue;
            };
            let Some(access) = fsguard_policy::Access::parse(access) else {
                continue;
            };
            let d = policy.decide(access, path.as_bytes());
            if d.allowed {
                continue;
            }
            if let Some(h) = policy.hint(access, path.as_bytes(), d.rule) {
                let line = format!("{h}  (config: {})", h.toml());
                if !seen.contains(&line) {
                    seen.push(line);
                }
            }
        }
        for line in seen.iter().take(SUMMARY_MAX) {
            eprintln!("fsguard: to allow: {line}");
        }
    }

    fn summary(&self) {
        let s = |n: u64| if n == 1 { "access" } else { "accesses" };
        if let Some(first) = &self.first_blocked {
            eprintln!(
                "fsguard: {} {} blocked; first: {first}",
                self.blocked,
                s(self.blocked)
            );
        }
        if let Some(first) = &self.first_audited {
            eprintln!(
                "fsguard: {} {} would have been blocked (audit); first: {first}",
                self.audited,
                s(self.audited)
            );
        }
        // Lost lines: a count of none must not read as "nothing blocked".
        if self.lost > 0 {
            eprintln!(
                "fsguard: {} trace {} could not be written (lost); the log is \
                 incomplete{}",
                self.lost,
                if self.lost == 1 { "line" } else { "lines" },
                if self.blocked + self.audited == 0 {
                    ": do not read its silence as nothing blocked"
                } else {
                    ""
                }
            );
        }
        // Every distinct event, so none is hidden behind the first.
        if self.events.len() > 1 {
            for (ev, n) in self.events.iter().take(SUMMARY_MAX) {
                let times = if *n > 1 {
                    format!(" (x{n})")
                } else {
                    String::new()
                };
                eprintln!("fsguard:   {ev}{times}");
            }
            if self.events.len() > SUMMARY_MAX {
                eprintln!(
                    "fsguard:   … and {} more (see the trace lines or --log)",
                    self.events.len() - SUMMARY_MAX
                );
            }
            if self.other_events > 0 {
                eprintln!(
                    "fsguard:   … and {} past the first {EVENTS_MAX} distinct ones",
                    self.other_events
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_options() {
        let mut o = RunOptions::default();
        let mut rest = vec![OsString::from("2.5")];
        assert!(parse_option(&mut o, "--timeout", None, &mut rest).unwrap());
        assert_eq!(o.timeout, Some(2.5));
        assert!(parse_option(&mut o, "--landlock", Some("required"), &mut rest).unwrap());
        assert_eq!(o.landlock, Landlock::Required);
        assert!(parse_option(&mut o, "--landlock", Some("maybe"), &mut rest).is_err());
        assert!(parse_option(&mut o, "--timeout", Some("-1"), &mut rest).is_err());
        assert!(parse_option(&mut o, "--timeout", Some("1s"), &mut rest).unwrap());
        assert_eq!(o.timeout, Some(1.0));
        assert_eq!(parse_duration("2m"), Some(120.0));
        assert_eq!(parse_duration("0.5h"), Some(1800.0));
        assert_eq!(parse_duration("1d"), Some(86400.0));
        assert_eq!(parse_duration("5x"), None);
        assert_eq!(parse_duration("0s"), None);
        assert_eq!(parse_duration("s"), None);
        assert!(!parse_option(&mut o, "--root", None, &mut rest).unwrap());
    }

    #[test]
    fn report_counts_and_keeps_the_first() {
        let mut r = Report::default();
        let (rd, wr) = pipe(libc::O_CLOEXEC).unwrap();
        set_nonblocking(rd.as_raw_fd());
        let msg = b"blocked open write /etc/x\naudit unlink write /a\nblocked open write /etc/y\n";
        // SAFETY: writes to our pipe.
        unsafe { libc::write(wr.as_raw_fd(), msg.as_ptr().cast(), msg.len()) };
        r.drain(rd.as_raw_fd());
        assert_eq!(r.blocked, 2);
        assert_eq!(r.audited, 1);
        assert_eq!(r.first_blocked.as_deref(), Some("open write /etc/x"));
    }

    /// What a guarded program writes to the pipe adds lines, never hides
    /// the library's: a line it leaves open ends at the library's leading
    /// newline; an endless one is cut; a forged count cannot overflow.
    #[test]
    fn report_survives_what_programs_write() {
        let mut r = Report::default();
        let (rd, wr) = pipe(libc::O_CLOEXEC).unwrap();
        set_nonblocking(rd.as_raw_fd());
        let put = |b: &[u8]| {
            // SAFETY: writes to our pipe.
            unsafe { libc::write(wr.as_raw_fd(), b.as_ptr().cast(), b.len()) };
        };
        put(b"no newline here");
        put(b"\nblocked open write /etc/x\n");
        put(b"lost 18446744073709551615\n\nlost 5\n");
        r.drain(rd.as_raw_fd());
        assert_eq!(r.blocked, 1);
        assert_eq!(r.first_blocked.as_deref(), Some("open write /etc/x"));
        assert_eq!(r.lost, u64::MAX);
        put(&vec![b'a'; 3 * PENDING_MAX]);
        r.drain(rd.as_raw_fd());
        assert!(r.pending.len() <= PENDING_MAX, "{}", r.pending.len());
        put(b"\nblocked unlink write /etc/y\n");
        r.drain(rd.as_raw_fd());
        assert_eq!(r.blocked, 2);
        assert_eq!(printable(b"a\x1b[2Jb\tc"), "a?[2Jb\tc");
    }
}
