//! The library's one initialisation entry: the constructor. It answers a
//! supervising `fsguard run` (the handshake), loads the policy, sets up each
//! module in turn (the trace sinks, the environment children get in
//! [`crate::exec`], the reserve) and only then publishes the [`Guard`].
//! Hooks depend on the guard, never the reverse; only this module knows
//! them all.

use std::ffi::{c_char, c_int, CStr};
use std::panic::catch_unwind;

use fsguard_policy::{Builder, Context, Policy, Settings};

use crate::guard::{self, errno, set_errno, Guard};
use crate::trace::Sink;

/// Builds the guard from the process's starting environment.
fn load(envp: Envp) -> Result<Guard, String> {
    let mut vars: Vec<(String, String)> = Vec::new();
    let mut home = None;
    let mut path_var = None;
    for kv in envp.entries() {
        let Some(eq) = kv.iter().position(|&b| b == b'=') else {
            continue;
        };
        let (k, v) = (&kv[..eq], &kv[eq + 1..]);
        if k == b"HOME" {
            home =
                Some(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(v).to_owned());
        } else if k == b"PATH" {
            path_var =
                Some(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(v).to_owned());
        } else if k.starts_with(b"FSGUARD_") {
            let k = String::from_utf8_lossy(k).into_owned();
            let v = String::from_utf8(v.to_vec()).map_err(|_| format!("{k} is not valid UTF-8"))?;
            vars.push((k, v));
        }
    }
    let exe = crate::sys::exe_path();
    let handed = vars.iter().find(|(k, _)| k == crate::handoff::VAR);
    let frozen = match handed {
        Some((_, fd)) => Some(crate::handoff::read(fd)?),
        None => vars
            .iter()
            .find(|(k, _)| k == "FSGUARD_POLICY")
            .map(|(_, v)| v.clone()),
    };
    if handed.is_some() {
        // The exec hooks hand each child its own copy (crate::handoff).
        // SAFETY: constructors run single-threaded; a C string literal.
        unsafe { libc::unsetenv(c"FSGUARD_POLICY_FD".as_ptr()) };
    }
    let settings = match &frozen {
        Some(frozen) => Settings::from_frozen(frozen).map_err(|e| e.to_string())?,
        None => {
            let ctx = Context {
                cwd: std::env::current_dir()
                    .map_err(|e| format!("cannot read the working directory: {e}"))?,
                home: home.map(Into::into),
                exe: exe.clone(),
                path_var,
            };
            let mut b = Builder::new(ctx);
            b.env(vars.iter().map(|(k, v)| (k.as_str(), v.as_str())), None)
                .map_err(|e| e.to_string())?;
            b.finish().map_err(|e| e.to_string())?
        }
    };
    let sink = Sink::new(
        &settings.log,
        exe.map(|e| e.display().to_string()).unwrap_or_default(),
    )?;
    // The report channel: inherited, or (closed before exec) connected
    // again at the first refusal.
    let report_var = vars
        .iter()
        .find(|(k, _)| k == "FSGUARD_REPORT_FD")
        .map(|(_, v)| v.parse::<i32>().unwrap_or(-1));
    let report_fd = crate::trace::report_init(report_var, settings.log.supervisor.as_ref());
    crate::exec::init(&settings.to_frozen(), report_fd)?;
    // Children get the policy as frozen here (a relative FSGUARD_ROOT means
    // this process's cwd, not theirs) through the exec hooks, in a memfd
    // (crate::handoff), never through this process's own environment.
    let implicit = settings.implicit && frozen.is_none();
    let policy = Policy::new(settings).map_err(|e| e.to_string())?;
    crate::reserve::take();
    if implicit {
        sink.notice("no policy set (FSGUARD_ROOT, FSGUARD_READONLY or FSGUARD_CONFIG): read-only");
    }
    Ok(Guard {
        policy,
        sink,
        fast_open: next_open_is_libc(),
    })
}

/// True when the `open` and `openat` after this library are libc's.
fn next_open_is_libc() -> bool {
    #[cfg(target_os = "linux")]
    let names = [c"open", c"openat", c"open64", c"openat64"];
    // Darwin has no `*64` forms.
    #[cfg(not(target_os = "linux"))]
    let names = [c"open", c"openat"];
    crate::sys::next_is_libc(&names)
}

/// Tells a supervising `fsguard run` that the library really loaded: one
/// byte on the inherited `FSGUARD_HANDSHAKE_FD`, which is then closed and
/// dropped from the environment so no descendant answers for it.
fn handshake(envp: Envp) {
    let Some(v) = env_value(envp, b"FSGUARD_HANDSHAKE_FD=") else {
        return;
    };
    // SAFETY: constructors run single-threaded; a C string literal.
    unsafe { libc::unsetenv(c"FSGUARD_HANDSHAKE_FD".as_ptr()) };
    let Some(fd) = std::str::from_utf8(v)
        .ok()
        .and_then(|v| v.parse::<i32>().ok())
    else {
        return;
    };
    if fd < 3 {
        return;
    }
    // SAFETY: checked to be a socket or pipe before it is written and closed.
    let b = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
    let Ok(st) = rustix::fs::fstat(b) else { return };
    use rustix::fs::FileType;
    if !matches!(
        FileType::from_raw_mode(st.st_mode),
        FileType::Socket | FileType::Fifo
    ) {
        return;
    }
    let _ = rustix::io::write(b, b"1");
    // SAFETY: ours now; nothing else in the process knows the number.
    drop(unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) });
}

/// The value of `name` (given with its `=`) in the starting environment.
fn env_value(envp: Envp, name: &[u8]) -> Option<&'static [u8]> {
    envp.entries().find_map(|kv| kv.strip_prefix(name))
}

/// The environment the loader passes to constructors.
#[derive(Clone, Copy)]
struct Envp(*const *const c_char);

impl Envp {
    /// # Safety
    /// `envp` must be NULL or a NULL-terminated array of C strings, all
    /// alive and unchanged for the process's life.
    unsafe fn new(envp: *const *const c_char) -> Envp {
        Envp(envp)
    }

    /// Each `KEY=value` entry, in order.
    fn entries(self) -> impl Iterator<Item = &'static [u8]> {
        let mut p = self.0;
        std::iter::from_fn(move || {
            if p.is_null() {
                return None;
            }
            // SAFETY: `new`'s contract: `p` is within the array, at most at
            // its terminating NULL.
            let e = unsafe { *p };
            if e.is_null() {
                return None;
            }
            // SAFETY: an entry before the NULL: not past the array's end.
            p = unsafe { p.add(1) };
            // SAFETY: each entry is a C string alive for the process's life.
            Some(unsafe { CStr::from_ptr(e) }.to_bytes())
        })
    }
}

/// The constructor: runs before `main`, fails the process closed on a bad
/// policy rather than let it run unguarded.
///
/// # Safety
/// Called by the loader (`.init_array`), with `envp` NULL or the process's
/// NULL-terminated environment.
pub unsafe extern "C" fn init(
    _argc: c_int,
    _argv: *const *const c_char,
    envp: *const *const c_char,
) {
    // SAFETY: the loader's envp, as this function's contract says.
    let envp = unsafe { Envp::new(envp) };
    if !guard::begin_load() {
        return;
    }
    // The hook of this library's own std (linked into it, with its own
    // hook, not the program's). Silent: every panic here is caught and
    // reported as a trace line (`rule=internal_error`); the default hook
    // would print to the program's stderr and, under RUST_BACKTRACE, read
    // this library's file through its own hooks to symbolize. A ZST: no
    // allocation.
    std::panic::set_hook(Box::new(|_| {}));
    let saved = errno();
    handshake(envp);
    let loaded = catch_unwind(|| load(envp))
        .unwrap_or_else(|_| Err("internal error while loading the policy".into()));
    match loaded {
        Ok(g) => guard::install(g),
        Err(msg) => {
            let line = format!("fsguard: error: {msg}; refusing to run unguarded\n");
            // SAFETY: fd 2, then _exit: nothing of the program runs.
            unsafe {
                libc::write(2, line.as_ptr().cast(), line.len());
                libc::_exit(125);
            }
        }
    }
    set_errno(saved);
}
