//! Signals: SIGINT, SIGTERM and SIGHUP sent to `fsguard` are forwarded to
//! the command; SIGCHLD only wakes the wait loop. And the timeout's end of
//! a command: its whole process tree is signalled.

use std::sync::atomic::Ordering;

use crate::run::CHILD;

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

/// Forwards SIGINT, SIGTERM and SIGHUP to the command; SIGCHLD interrupts
/// waits.
pub(crate) fn install_handlers() {
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
pub(crate) struct SigChld {
    /// The mask to wait with: the previous one, minus SIGCHLD.
    waiting: libc::sigset_t,
    old: libc::sigset_t,
}

impl SigChld {
    pub(crate) fn block() -> SigChld {
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

    /// Sleeps until one of `fds` is readable (or closed), a signal arrives
    /// (a pending SIGCHLD at once) or `ms` pass; `revents` says which.
    pub(crate) fn wait(&self, fds: &mut [libc::pollfd], ms: i64) {
        crate::sys::poll_unmasked(fds, ms, &self.waiting);
    }
}

impl Drop for SigChld {
    fn drop(&mut self) {
        // SAFETY: restores the mask saved in `block`.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.old, std::ptr::null_mut()) };
    }
}

/// Signals `pid` and every process descending from it (a timed-out
/// command's own children must not outlive it).
pub(crate) fn signal_tree(pid: libc::pid_t, sig: libc::c_int) {
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
