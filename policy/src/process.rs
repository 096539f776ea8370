//! The guarded tree: which processes a guarded process may reach through
//! the calls that act on another process (`ptrace`, `process_vm_readv`,
//! `pidfd_getfd`, `kcmp`).
//!
//! A process is inside the tree when it descends from the caller, or, under
//! `fsguard run`, from the supervisor (every process it starts is guarded).
//! The caller's own threads are inside too; the supervisor itself is not.
//! Descent is read from each process's `/proc/<pid>/stat`: its parent's pid
//! and its start time. A parent that started after its child is a pid that
//! was reused after the real parent exited, so the walk stops there and the
//! target counts as outside: a reused pid never makes a stranger look like
//! a descendant.
//!
//! Pure: the caller reads `/proc` and hands the lines in.

use serde::{Deserialize, Serialize};

/// A process, as long as it lives: its pid and its start time (clock ticks
/// after boot, field 22 of `/proc/<pid>/stat`). A pid is reused only after
/// its process exits, so the pair names one process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProcessId {
    /// The pid.
    pub pid: u32,
    /// The start time, in clock ticks after boot.
    pub start: u64,
}

/// What the tree check reads of `/proc/<pid>/stat`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stat {
    /// The pid (a thread's own id for `/proc/<tid>/stat`).
    pub pid: u32,
    /// The parent's pid (0 for the first process and kernel threads).
    pub ppid: u32,
    /// The start time, in clock ticks after boot.
    pub start: u64,
}

impl Stat {
    /// The process this line names.
    pub fn id(&self) -> ProcessId {
        ProcessId {
            pid: self.pid,
            start: self.start,
        }
    }
}

/// The process whose memory a `/proc` file reads or writes:
/// `/proc/<pid>/mem` (its memory: a write there is code injection) and
/// `/proc/<pid>/environ` (its environment, keys and tokens among it), also
/// under `task/<tid>/`. `path` is resolved (no symlink, no `/proc/self`).
/// The pid named first: a thread's files are its process's.
pub fn memory_file(path: &[u8]) -> Option<u32> {
    let rest = path.strip_prefix(b"/proc/")?;
    let mut parts = rest.split(|&c| c == b'/');
    let pid = parts.next()?;
    let number = |p: &[u8]| -> Option<u32> {
        if p.is_empty() || p.len() > 10 || !p.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(p).ok()?.parse().ok()
    };
    let pid = number(pid)?;
    let mut entry = parts.next()?;
    if entry == b"task" {
        number(parts.next()?)?;
        entry = parts.next()?;
    }
    if parts.next().is_some() {
        return None;
    }
    matches!(entry, b"mem" | b"environ").then_some(pid)
}

/// Reads a `/proc/<pid>/stat` line: `pid (comm) state ppid …`, where comm
/// may hold spaces and parentheses (the last `)` ends it).
pub fn parse_stat(line: &[u8]) -> Option<Stat> {
    let open = line.iter().position(|&b| b == b'(')?;
    let close = line.iter().rposition(|&b| b == b')')?;
    let pid = number(trim(&line[..open]))?;
    // After comm: state (field 3), ppid (4), …, starttime (22).
    let mut fields = line
        .get(close + 1..)?
        .split(|&b| b == b' ')
        .filter(|f| !f.is_empty());
    let ppid = number(fields.nth(1)?)?;
    let start = number(fields.nth(17)?)?;
    Some(Stat {
        pid: u32::try_from(pid).ok()?,
        ppid: u32::try_from(ppid).ok()?,
        start,
    })
}

/// The command name of a `/proc/<pid>/stat` line (between the first `(`
/// and the last `)`).
pub fn stat_comm(line: &[u8]) -> Option<&[u8]> {
    let open = line.iter().position(|&b| b == b'(')?;
    let close = line.iter().rposition(|&b| b == b')')?;
    line.get(open + 1..close)
}

/// The thread group (the process) of a `/proc/<pid>/status` text: its
/// `Tgid:` line.
pub fn status_tgid(status: &[u8]) -> Option<u32> {
    status.split(|&b| b == b'\n').find_map(|l| {
        let v = l.strip_prefix(b"Tgid:")?;
        u32::try_from(number(trim(v))?).ok()
    })
}

fn trim(b: &[u8]) -> &[u8] {
    let s = b
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(b.len());
    let e = b
        .iter()
        .rposition(|c| !c.is_ascii_whitespace())
        .map_or(s, |e| e + 1);
    &b[s..e.max(s)]
}

fn number(b: &[u8]) -> Option<u64> {
    if b.is_empty() || b.len() > 20 {
        return None;
    }
    b.iter().try_fold(0u64, |n, &c| {
        c.is_ascii_digit()
            .then(|| n.checked_mul(10)?.checked_add(u64::from(c - b'0')))
            .flatten()
    })
}

/// The calls the library refuses whatever the policy says (trace rules
/// `namespace`, `mount`, `sysadmin`, `process`), by the name trace lines
/// and the report pipe give them: no allow rule lifts their refusal, so
/// no hint names one.
pub const REFUSED_WHATEVER_THE_POLICY: &[&str] = &[
    "unshare",
    "clone",
    "clone3",
    "setns",
    "mount",
    "umount",
    "umount2",
    "pivot_root",
    "chroot",
    "fsopen",
    "fspick",
    "fsconfig",
    "fsmount",
    "move_mount",
    "open_tree",
    "open_tree_attr",
    "mount_setattr",
    "acct",
    "swapon",
    "swapoff",
    "quotactl",
    "quotactl_fd",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "pidfd_getfd",
    "kcmp",
];

/// How many parents the walk reads at most before it gives up (and counts
/// the target as outside).
pub const MAX_DEPTH: usize = 4096;

/// Whether the process `target` (its stat line, read while it was known to
/// be alive) descends from the process `me` (the caller, alive, so its pid
/// is its own) or from `root` (the supervisor of `fsguard run`). `stat_of`
/// reads the stat line of a pid (`None`: gone or unreadable). A parent
/// that started after its child, an unreadable parent and a chain longer
/// than [`MAX_DEPTH`] all end the walk outside the tree: fail closed.
pub fn descends(
    target: Stat,
    me: u32,
    root: Option<ProcessId>,
    mut stat_of: impl FnMut(u32) -> Option<Stat>,
) -> bool {
    let mut cur = target;
    for _ in 0..MAX_DEPTH {
        let pp = cur.ppid;
        // Read from a line of a process alive at the time, naming a parent
        // alive at the time: the caller, whose pid no one else has.
        if pp == me {
            return true;
        }
        if pp == 0 {
            return false;
        }
        let Some(parent) = stat_of(pp) else {
            return false;
        };
        // Started after its child: not the parent the child had, but a
        // process that got its pid later.
        if parent.pid != pp || parent.start > cur.start {
            return false;
        }
        if root == Some(parent.id()) {
            return true;
        }
        // The first process: every process descends from it.
        if pp == 1 {
            return false;
        }
        cur = parent;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_files_name_their_process() {
        assert_eq!(memory_file(b"/proc/123/mem"), Some(123));
        assert_eq!(memory_file(b"/proc/123/environ"), Some(123));
        assert_eq!(memory_file(b"/proc/123/task/124/mem"), Some(123));
        assert_eq!(memory_file(b"/proc/123/maps"), None);
        assert_eq!(memory_file(b"/proc/123/mem/x"), None);
        assert_eq!(memory_file(b"/proc/self/mem"), None);
        assert_eq!(memory_file(b"/proc/12a/mem"), None);
        assert_eq!(memory_file(b"/home/proc/1/mem"), None);
        assert_eq!(memory_file(b"/proc/123/task/x/mem"), None);
    }

    fn line(pid: u32, comm: &str, ppid: u32, start: u64) -> Vec<u8> {
        let mut fields: Vec<String> = vec!["S".into(), ppid.to_string()];
        // Fields 5..=21, then starttime (22) and a few more.
        fields.extend((5..=21).map(|n| n.to_string()));
        fields.push(start.to_string());
        fields.extend(["4096".into(), "12".into()]);
        format!("{pid} ({comm}) {}\n", fields.join(" ")).into_bytes()
    }

    #[test]
    fn stat_lines() {
        let l = line(4242, "sleep", 17, 987654);
        assert_eq!(
            parse_stat(&l),
            Some(Stat {
                pid: 4242,
                ppid: 17,
                start: 987654
            })
        );
        assert_eq!(stat_comm(&l), Some(&b"sleep"[..]));
        // comm with spaces and parentheses: the last `)` ends it.
        let l = line(7, "a) (b c) 99 (", 3, 55);
        assert_eq!(parse_stat(&l).map(|s| (s.ppid, s.start)), Some((3, 55)));
        assert_eq!(stat_comm(&l), Some(&b"a) (b c) 99 ("[..]));
        // A real kernel line.
        let real = b"1 (init) S 0 1 1 0 -1 4194560 2519 163098 16 95 4 9 124 104 20 0 1 0 12 23199744 3050 18446744073709551615 1 1 0 0 0 0 671173123 4096 1260 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n";
        assert_eq!(
            parse_stat(real),
            Some(Stat {
                pid: 1,
                ppid: 0,
                start: 12
            })
        );
        for bad in [&b""[..], b"12 (x S 1", b"x (y) S 1 2", b"12 (x) S -1 3"] {
            assert_eq!(parse_stat(bad), None, "{}", String::from_utf8_lossy(bad));
        }
        // Cut before the start time.
        assert_eq!(parse_stat(b"12 (x) S 1 2 3"), None);
    }

    #[test]
    fn status_lines() {
        let s = b"Name:\tsleep\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t4242\nNgid:\t0\nPid:\t4243\nPPid:\t17\n";
        assert_eq!(status_tgid(s), Some(4242));
        assert_eq!(status_tgid(b"Name:\tx\n"), None);
    }

    /// A process table: pid -> (ppid, start).
    fn table(rows: &[(u32, u32, u64)]) -> impl FnMut(u32) -> Option<Stat> + '_ {
        move |pid| {
            rows.iter()
                .find(|r| r.0 == pid)
                .map(|&(pid, ppid, start)| Stat { pid, ppid, start })
        }
    }

    #[test]
    fn descent() {
        // 1 -> 10 (the supervisor) -> 20 (me) -> 30 -> 40; 1 -> 50 -> 60.
        let rows = [
            (1, 0, 1),
            (10, 1, 100),
            (20, 10, 200),
            (30, 20, 300),
            (40, 30, 400),
            (50, 1, 150),
            (60, 50, 160),
            (25, 10, 250),
            (26, 25, 260),
        ];
        let st = |pid: u32| table(&rows)(pid).unwrap();
        let sup = Some(ProcessId {
            pid: 10,
            start: 100,
        });
        // Children and grandchildren of the caller.
        assert!(descends(st(30), 20, None, table(&rows)));
        assert!(descends(st(40), 20, None, table(&rows)));
        // A stranger, and the caller's own parent.
        assert!(!descends(st(60), 20, None, table(&rows)));
        assert!(!descends(st(10), 20, None, table(&rows)));
        assert!(!descends(st(10), 20, sup, table(&rows)));
        // A sibling: outside alone, inside the supervisor's tree.
        assert!(!descends(st(26), 20, None, table(&rows)));
        assert!(descends(st(26), 20, sup, table(&rows)));
        assert!(descends(st(25), 20, sup, table(&rows)));
        // The supervisor itself is not inside its own tree.
        assert!(!descends(st(10), 20, sup, table(&rows)));
        // A supervisor of the same pid but another start time: a process
        // that got the pid later.
        let other = Some(ProcessId {
            pid: 10,
            start: 101,
        });
        assert!(!descends(st(26), 20, other, table(&rows)));
    }

    #[test]
    fn a_reused_parent_pid_ends_the_walk() {
        // 60's parent 50 exited; pid 50 went to a child of the caller that
        // started later (start 500 > 160): 60 must stay outside.
        let rows = [(1, 0, 1), (20, 1, 200), (50, 20, 500), (60, 50, 160)];
        let st = |pid: u32| table(&rows)(pid).unwrap();
        assert!(!descends(st(60), 20, None, table(&rows)));
        // The same chain with the parent started first is a descent.
        let rows = [(1, 0, 1), (20, 1, 200), (50, 20, 150), (60, 50, 160)];
        assert!(descends(st(60), 20, None, table(&rows)));
        // An unreadable parent: outside.
        let rows = [(1, 0, 1), (20, 1, 200), (60, 50, 160)];
        assert!(!descends(st(60), 20, None, table(&rows)));
    }

    #[test]
    fn a_loop_ends_outside() {
        // A table no kernel makes (7 <-> 8), walked to the bound.
        let rows = [(7, 8, 5), (8, 7, 5)];
        assert!(!descends(
            Stat {
                pid: 9,
                ppid: 7,
                start: 5
            },
            20,
            None,
            table(&rows)
        ));
        const { assert!(MAX_DEPTH >= 1024) };
    }

    #[test]
    fn process_ids_round_trip() {
        let p = ProcessId {
            pid: 42,
            start: 1234,
        };
        let s = serde_json::to_string(&p).unwrap();
        assert_eq!(serde_json::from_str::<ProcessId>(&s).unwrap(), p);
    }
}
