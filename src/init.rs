//! The library's one initialisation: loading the guard. It runs on the
//! first hooked call of the process or in the constructor, whichever comes
//! first ([`crate::guard::get`] calls [`load_now`]): code that runs before
//! this library's constructor (the constructors of the program's own
//! libraries, a preload listed after this one) is checked like any other.
//! The load answers a supervising `fsguard run` (the handshake), reads the
//! policy from the environment the process started with, sets up each
//! module in turn (the trace sinks, the environment children get in
//! [`crate::exec`], the reserve) and only then publishes the [`Guard`].
//! Hooks depend on the guard; the guard asks this module for the load, and
//! only this module knows every other one.

use std::ffi::{c_char, c_int, CStr};
use std::panic::catch_unwind;

use fsguard_policy::{Builder, Context, Policy, Settings};

use crate::guard::{self, errno, set_errno, Guard};
use crate::trace::Sink;

/// Builds the guard from the process's starting environment.
fn load(envp: &StartEnv) -> Result<Guard, String> {
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
        // SAFETY: a C string literal; the program's own code that may run
        // meanwhile on another thread is before its `main`.
        unsafe { libc::unsetenv(c"FSGUARD_POLICY_FD".as_ptr()) };
        // The process's name a bare exec would have given it (the exec
        // hooks run the program through a descriptor: crate::exec).
        if let Some((_, comm)) = vars.iter().find(|(k, _)| k == "FSGUARD_COMM") {
            // Set by Linux's exec hooks only.
            #[cfg(target_os = "linux")]
            if let Ok(c) = std::ffi::CString::new(comm.as_bytes()) {
                let _ = rustix::thread::set_name(&c);
            }
            #[cfg(not(target_os = "linux"))]
            let _ = comm;
            // SAFETY: as above.
            unsafe { libc::unsetenv(c"FSGUARD_COMM".as_ptr()) };
        }
    }
    let settings = match &frozen {
        Some(frozen) => Settings::from_frozen(frozen).map_err(|e| e.to_string())?,
        // The one step that opens files through std (the config file, the
        // paths it names), whose calls reach this library's own hooks: they
        // go straight through. A child, handed the frozen policy, never
        // takes it.
        None => guard::own(|| {
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
            b.finish().map_err(|e| e.to_string())
        })?,
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
    if report_var.is_some() {
        // The program has no use for it: the exec hooks give each child its
        // own (crate::exec::env), so `env` shows what it would bare.
        // SAFETY: a C string literal; as for FSGUARD_POLICY_FD above.
        unsafe { libc::unsetenv(c"FSGUARD_REPORT_FD".as_ptr()) };
    }
    // A handed policy goes on to children as it came (the same bytes the
    // settings were read from): not serialized again at every start.
    match &frozen {
        Some(frozen) => crate::exec::init(frozen, report_fd)?,
        None => crate::exec::init(&settings.to_frozen(), report_fd)?,
    }
    // Children get the policy as frozen here (a relative FSGUARD_ROOT means
    // this process's cwd, not theirs) through the exec hooks, in a memfd
    // (crate::handoff), never through this process's own environment.
    let implicit = settings.implicit && frozen.is_none();
    let landlock = settings.landlock;
    let policy = Policy::new(settings).map_err(|e| e.to_string())?;
    crate::reserve::take();
    if implicit {
        sink.notice("no policy set (FSGUARD_ROOT, FSGUARD_READONLY or FSGUARD_CONFIG): read-only");
    }
    Ok(Guard {
        policy,
        sink,
        fast_open: next_open_is_libc(),
        landlock,
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
/// dropped from the environment so no descendant answers for it. Found in
/// `environ` (no system call: until the byte, the supervisor stops the
/// process at every one), or where there is none yet, the starting
/// environment.
fn handshake() {
    let from_environ = env_value(environ_entries(), b"FSGUARD_HANDSHAKE_FD=");
    let v = match from_environ {
        Some(v) => v.to_vec(),
        None if crate::exec::environ().is_null() => {
            match env_value(StartEnv::read().entries(), b"FSGUARD_HANDSHAKE_FD=") {
                Some(v) => v.to_vec(),
                None => return,
            }
        }
        None => return,
    };
    // SAFETY: a C string literal.
    unsafe { libc::unsetenv(c"FSGUARD_HANDSHAKE_FD".as_ptr()) };
    let Some(fd) = std::str::from_utf8(&v)
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

/// The value of `name` (given with its `=`) among `entries`.
fn env_value<'a>(mut entries: impl Iterator<Item = &'a [u8]>, name: &[u8]) -> Option<&'a [u8]> {
    entries.find_map(|kv| kv.strip_prefix(name))
}

/// The entries of `environ` as it is now.
fn environ_entries() -> impl Iterator<Item = &'static [u8]> {
    let mut p = crate::exec::environ();
    std::iter::from_fn(move || {
        if p.is_null() {
            return None;
        }
        // SAFETY: `environ` is NULL or a NULL-terminated array of C
        // strings; `p` is within it, at most at its terminating NULL.
        let e = unsafe { *p };
        if e.is_null() {
            return None;
        }
        // SAFETY: an entry before the NULL: not past the array's end.
        p = unsafe { p.add(1) };
        // SAFETY: each entry is a C string, alive while the load reads it.
        Some(unsafe { CStr::from_ptr(e) }.to_bytes())
    })
}

/// The environment the process started with ([`crate::sys::start_env`]:
/// what the kernel put on its stack, untouched by `setenv` and `unsetenv`
/// of code that ran earlier); `environ` where that cannot be read.
struct StartEnv(Vec<u8>);

impl StartEnv {
    fn read() -> StartEnv {
        StartEnv(crate::sys::start_env().unwrap_or_else(|| {
            let mut v = Vec::new();
            for kv in environ_entries() {
                v.extend_from_slice(kv);
                v.push(0);
            }
            v
        }))
    }

    /// Each `KEY=value` entry, in order.
    fn entries(&self) -> impl Iterator<Item = &[u8]> {
        self.0.split(|&b| b == 0).filter(|e| !e.is_empty())
    }
}

/// Loads the guard on this thread, which claimed the load
/// ([`guard::begin_load`]): the handshake, then the policy, then the guard
/// published. Signals are blocked meanwhile, so that no handler of the
/// program's runs on this thread while its calls go straight through.
/// Fails the process closed (exit 125) rather than let it run unguarded.
pub(crate) fn load_now() {
    let saved = errno();
    // SAFETY: sigset_t is plain data; filled, then used as a mask of this
    // thread, restored below.
    let old = unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut old);
        old
    };
    // The hook of this library's own std (linked into it, with its own
    // hook, not the program's). Silent: every panic here is caught and
    // reported as a trace line (`rule=internal_error`); the default hook
    // would print to the program's stderr and, under RUST_BACKTRACE, read
    // this library's file through its own hooks to symbolize. A ZST: no
    // allocation.
    std::panic::set_hook(Box::new(|_| {}));
    // Every real function, before anything the load does can need one.
    #[cfg(target_os = "linux")]
    crate::sys::resolve_all();
    handshake();
    let loaded = catch_unwind(|| {
        let env = StartEnv::read();
        loader_door(&env)?;
        load(&env)
    })
    .unwrap_or_else(|_| Err("internal error while loading the policy".into()));
    match loaded {
        Ok(g) => guard::install(g),
        Err(msg) => fatal(&msg),
    }
    // SAFETY: the mask saved above.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut()) };
    set_errno(saved);
}

/// Whether a hooked call comes before the C library has run its own
/// constructor, which sets `environ`: while the program is relocated (an
/// IFUNC resolver), when thread-local storage is not ready for the load.
/// (`clearenv` in code that runs before the library's constructor empties
/// it too: its calls are refused until the constructor loads the guard.)
pub(crate) fn too_early() -> bool {
    crate::exec::environ().is_null()
}

/// Ends the process before any more of the program runs unguarded.
fn fatal(msg: &str) -> ! {
    let line = format!("fsguard: error: {msg}; refusing to run unguarded\n");
    // SAFETY: fd 2, then _exit: nothing of the program runs.
    unsafe {
        libc::write(2, line.as_ptr().cast(), line.len());
        libc::_exit(125);
    }
}

/// A loader variable in the starting environment that already made the
/// loader run code beside this library, or write a file no hook checked
/// ([`fsguard_policy::program::LOADER_ENV`]): too late to refuse it, so
/// the process does not run.
fn loader_door(env: &StartEnv) -> Result<(), String> {
    match env.entries().find_map(fsguard_policy::program::loader_env) {
        Some(var) => Err(format!(
            "{var} is set: {}",
            fsguard_policy::program::loader_env_why(var)
        )),
        None => Ok(()),
    }
}

/// The constructor: runs before `main`, and finds the guard loaded already
/// when an earlier hooked call did it; fails the process closed when it
/// cannot be loaded.
///
/// # Safety
/// Called by the loader (`.init_array`).
pub unsafe extern "C" fn init(
    _argc: c_int,
    _argv: *const *const c_char,
    _envp: *const *const c_char,
) {
    if guard::ready() {
        return;
    }
    if guard::load_in_constructor().is_err() {
        fatal("the guard could not be loaded: another thread's load did not finish");
    }
}
