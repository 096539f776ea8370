//! Keeps the gate cheap: while `fsguard run` traces the command's start
//! (run.rs, `gate`), the supervisor and the command take turns, one stop per
//! system call entry and exit. On different CPUs every turn is a cross-CPU
//! wake-up; on one CPU it is a plain switch. So for the gate both are put on
//! the CPU the supervisor runs on, and both get their own CPU sets back
//! before the command runs any code past the library's handshake.

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
