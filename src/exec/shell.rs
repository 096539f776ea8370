//! system, popen, pclose: the work behind their rows in
//! [`super::EXEC_TABLE`] (and glibc's other names for them, in
//! [`crate::aliases::ALIASES`]).
//!
//! glibc's `system` and `popen` spawn `/bin/sh` with the global `environ`
//! through an internal call no hook sees. Pointing `environ` at the child's
//! environment for the call would race with `getenv` in other threads, so
//! both are done here as glibc does them, on the real `posix_spawn` with the
//! envp [`with_env`] builds. A stream made here is an `fdopen`ed pipe, which
//! glibc's `pclose` cannot wait for: `pclose` is hooked too, and finds the
//! child in [`STREAMS`].

use std::ffi::{c_char, c_int, CStr};
use std::sync::atomic::{AtomicI32, AtomicPtr, Ordering};

use libc::{pid_t, posix_spawn_file_actions_t, posix_spawnattr_t, FILE};

use super::chain::{chunks, next_or_new, Chunk};
use super::env::{environ, with_env};
use super::spawn::SpawnFn;
use crate::guard::{self, set_errno};
use crate::real::real;

type PcloseFn = unsafe extern "C" fn(*mut FILE) -> c_int;

const SHELL_PATH: &CStr = c"/bin/sh";

/// Spawns `/bin/sh -c cmd` with the child's environment: the real
/// `posix_spawn`'s result (0 or an errno).
///
/// # Safety
/// `cmd` a C string; `fa` and `attr` NULL or initialised.
unsafe fn spawn_shell(
    call: &'static str,
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
        with_env(call, SHELL_PATH.to_bytes(), environ(), |env| {
            real(pid, SHELL_PATH.as_ptr(), fa, attr, argv.as_ptr(), env)
        })
    }
    .unwrap_or_else(|e| e)
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

/// A row's check of the shell (`/bin/sh`) it runs.
pub(crate) type ShellCheck = fn() -> Result<(), c_int>;

/// system(3) as glibc 2.36 does it, with the child's environment; the
/// shell checked by the row's `check`.
///
/// # Safety
/// `cmd` NULL or a C string.
pub(crate) unsafe fn run_system(check: ShellCheck, cmd: *const c_char) -> c_int {
    if cmd.is_null() {
        // Only asks whether a shell exists.
        return c_int::from(rustix::fs::access(SHELL_PATH, rustix::fs::Access::EXEC_OK).is_ok());
    }
    if let Err(e) = check() {
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
        let ret = spawn_shell("system", &mut pid, cmd, std::ptr::null(), &attr);
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

/// A stream `popen` made and the child `pclose` waits for. A slot is free
/// while `fd` is -1; it is claimed by swapping in the stream's fd.
struct Stream {
    fd: AtomicI32,
    pid: AtomicI32,
    fp: AtomicPtr<FILE>,
}

const STREAM_SLOTS: usize = 64;

/// A chunk of the table ([`super::chain`]).
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

impl Chunk for Streams {
    fn next(&self) -> &AtomicPtr<Streams> {
        &self.next
    }

    fn empty() -> Streams {
        Streams {
            slots: [FREE; STREAM_SLOTS],
            next: AtomicPtr::new(std::ptr::null_mut()),
        }
    }
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
        chunk = next_or_new(chunk);
    }
}

/// Forgets `fp`: its child, if `popen` here made it.
fn forget(fp: *mut FILE) -> Option<pid_t> {
    for chunk in chunks(&STREAMS) {
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
/// with the child's environment; the shell checked by the row's `check`.
///
/// # Safety
/// `cmd` a C string; `mode` NULL or a C string.
pub(crate) unsafe fn run_popen(
    check: ShellCheck,
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
    if let Err(e) = check() {
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
        for chunk in chunks(&STREAMS) {
            for s in &chunk.slots {
                let fd = s.fd.load(Ordering::Acquire);
                if ok && fd >= 0 && fd != child_std {
                    ok = libc::posix_spawn_file_actions_addclose(&mut fa, fd) == 0;
                }
            }
        }
        let mut pid: pid_t = 0;
        let ret = if ok {
            spawn_shell("popen", &mut pid, cmd, &fa, std::ptr::null())
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

/// pclose(3): closes a stream `popen` made here and waits for its child
/// (the child's status, or -1); any other stream goes to glibc's pclose.
///
/// # Safety
/// `fp` must be a stream from `popen` (or one glibc's pclose accepts).
pub(super) unsafe fn close_stream(fp: *mut FILE) -> c_int {
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
