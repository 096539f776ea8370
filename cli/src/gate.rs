//! The handshake gate of `fsguard run`: the command must not run one
//! instruction of its own before the library has confirmed it is loaded.
//!
//! The library's constructor writes one byte on `FSGUARD_HANDSHAKE_FD`.
//! Until then the child is traced (ptrace, system call stops): the loader's
//! own calls (read-only opens, mmap, …: [`harmless`]) go ahead; anything
//! else — a write, the loader's "cannot be preloaded" message, a fork, an
//! exec — means the library is not there, and the child is killed at that
//! call's entry. At the handshake write the child is let go, untraced.
//!
//! Keeping it cheap: the supervisor and the command take turns, one stop per
//! system call entry and exit. On different CPUs every turn is a cross-CPU
//! wake-up; on one CPU it is a plain switch. So for the gate both are put on
//! the CPU the supervisor runs on ([`Pin`]), and both get their own CPU sets
//! back before the command runs any code past the handshake.

use std::os::fd::{OwnedFd, RawFd};

/// Whether the library confirmed it loaded in the command `pid`: through
/// the gate when the child is `traced`, else by the handshake byte alone
/// (the command already runs). `ready` runs before a traced command is let
/// go. Err: why not; the command is to be stopped.
pub(crate) fn handshake(
    pid: libc::pid_t,
    traced: bool,
    hs_fd: RawFd,
    hs_parent: OwnedFd,
    ready: impl FnOnce(),
) -> Result<(), String> {
    if traced {
        if let Gate::Refused(msg) = gate(pid, hs_fd, ready) {
            return Err(msg);
        }
    }
    // The byte is written (traced) or will be (untraced, where EOF means
    // the child went away without loading us).
    match crate::spawn::handshake_byte(hs_parent) {
        true => Ok(()),
        false if traced => Err("the library did not confirm it loaded".into()),
        false => Err("the library did not load (and the command could not be \
                      stopped early: ptrace unavailable)"
            .into()),
    }
}

/// `ready` runs before a confirmed command is let go.
fn gate(pid: libc::pid_t, hs_fd: RawFd, ready: impl FnOnce()) -> Gate {
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
    // Both on one CPU while they take turns; undone before detach.
    let pin = Pin::new(pid);
    let mut sig = 0;
    // Inside a system call we let go at its entry stop: the next system
    // call stop is its exit stop (ptrace(2): an entry stop is followed by
    // the exit stop, a PTRACE_EVENT stop (none asked for) or death, nothing
    // else), which needs no look at the child.
    let mut in_call = false;
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
            // Not a system call stop: the next one is looked at, whatever.
            in_call = false;
            if s != libc::SIGTRAP {
                sig = s;
            }
            continue;
        }
        if std::mem::take(&mut in_call) {
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
            in_call = true;
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

/// Both processes pinned to one CPU; dropping it restores both.
pub struct Pin {
    pid: libc::pid_t,
    child: libc::cpu_set_t,
    own: libc::cpu_set_t,
}

impl Pin {
    /// Pins this process and the stopped, traced `pid` to the current CPU.
    /// None (nothing changed) where that is not possible or pointless.
    pub fn new(pid: libc::pid_t) -> Option<Pin> {
        let own = affinity(0)?;
        let child = affinity(pid)?;
        // SAFETY: no arguments.
        let cpu = unsafe { libc::sched_getcpu() };
        // SAFETY: reads a cpu set we own.
        if cpu < 0 || unsafe { libc::CPU_COUNT(&own) } < 2 {
            return None;
        }
        // SAFETY: a zeroed cpu_set_t is the empty set.
        let mut one: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: cpu is a valid CPU number (the one we run on).
        unsafe { libc::CPU_SET(cpu as usize, &mut one) };
        if !set_affinity(0, &one) {
            return None;
        }
        let pin = Pin { pid, child, own };
        if !set_affinity(pid, &one) {
            set_affinity(0, &pin.own);
            return None;
        }
        Some(pin)
    }
}

impl Drop for Pin {
    fn drop(&mut self) {
        // The command first: it must not keep a CPU set it did not ask for.
        // (If it is gone, there is nothing to restore.)
        set_affinity(self.pid, &self.child);
        set_affinity(0, &self.own);
    }
}

fn affinity(pid: libc::pid_t) -> Option<libc::cpu_set_t> {
    // SAFETY: a zeroed cpu_set_t, filled by the kernel.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: a valid buffer of the size given.
    let r = unsafe { libc::sched_getaffinity(pid, std::mem::size_of_val(&set), &mut set) };
    (r == 0).then_some(set)
}

fn set_affinity(pid: libc::pid_t, set: &libc::cpu_set_t) -> bool {
    // SAFETY: a valid cpu set of the size given.
    unsafe { libc::sched_setaffinity(pid, std::mem::size_of_val(set), set) == 0 }
}
