//! `fsguard run`'s Landlock layer: the ruleset derived from the policy, the
//! compatibility level each `--landlock` mode asks of the kernel, and what
//! fsguard says when the kernel enforces only part of it.
//!
//! The ruleset is built in the parent; the forked child only calls
//! `restrict_self` and reports the [`RulesetStatus`] back as one byte
//! ([`status_byte`]), so the parent can name what the kernel left out.

use std::path::{Path, PathBuf};

use fsguard_policy::{canonical_prefix, Settings, DEVICES};
use landlock::{
    Access, AccessFs, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreated, RulesetCreatedAttr, RulesetStatus, ABI,
};

pub use crate::args::Landlock;

/// The ruleset the child applies.
pub type Rules = RulesetCreated;
/// What the kernel made of it.
pub type Status = RulesetStatus;

/// The layer's name in messages.
pub const NAME: &str = "Landlock";
/// What the child applies, in messages.
pub const RULESET: &str = "Landlock ruleset";
/// The prefix of a note about it.
pub const TAG: &str = "landlock";

/// Why no ruleset can be applied on a kernel without Landlock.
pub const UNAVAILABLE: &str = "this kernel has no Landlock (not built in, or not enabled at boot: \
                               add landlock to the lsm= boot parameter)";

/// The newest ABI the landlock crate knows. Pinned rather than derived, so
/// that a crate upgrade cannot start handling a new access right unseen: the
/// `newest_abi_is_pinned` test fails until this is reviewed and bumped.
const NEWEST: ABI = ABI::V10;

/// The filesystem rights the ruleset handles: every right of [`NEWEST`]
/// except `ResolveUnix` (connecting to a pathname UNIX socket), which the
/// policy does not govern (docs/limits.md) and which would otherwise refuse
/// connections to sockets outside the write areas (nscd, D-Bus, …).
fn handled() -> BitFlags<AccessFs> {
    AccessFs::from_all(NEWEST) & !AccessFs::ResolveUnix
}

/// The kernel's Landlock ABI version; 0 if it has none.
pub fn kernel_abi() -> i32 {
    // SAFETY: landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)
    // only returns a number.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            1u32,
        )
    };
    i32::try_from(v.max(0)).unwrap_or(i32::MAX)
}

/// The short name of a right, as the partial-enforcement message gives it.
fn right_name(a: AccessFs) -> &'static str {
    match a {
        AccessFs::Execute => "execute",
        AccessFs::WriteFile => "write",
        AccessFs::ReadFile => "read",
        AccessFs::ReadDir => "readdir",
        AccessFs::RemoveDir => "rmdir",
        AccessFs::RemoveFile => "unlink",
        AccessFs::MakeChar => "mkchar",
        AccessFs::MakeDir => "mkdir",
        AccessFs::MakeReg => "mkreg",
        AccessFs::MakeSock => "mksock",
        AccessFs::MakeFifo => "mkfifo",
        AccessFs::MakeBlock => "mkblock",
        AccessFs::MakeSym => "symlink",
        AccessFs::Refer => "refer",
        AccessFs::Truncate => "truncate",
        AccessFs::IoctlDev => "ioctl",
        AccessFs::ResolveUnix => "resolve-unix",
        _ => "newer",
    }
}

/// The handled rights a kernel of ABI `abi` cannot enforce, in the order
/// Landlock introduced them ("refer/truncate/ioctl").
pub fn missing_rights(abi: ABI) -> Vec<&'static str> {
    // `ABI::from` only names the running kernel here; the ruleset is always
    // built from `NEWEST`.
    let missing = handled() & !AccessFs::from_all(abi);
    missing.iter().map(right_name).collect()
}

/// What fsguard says about a ruleset the kernel `kernel_abi` applied with
/// `status`; `None` when it is fully enforced.
pub fn status_message(status: &Status, kernel_abi: i32) -> Option<String> {
    let what = match status {
        RulesetStatus::FullyEnforced => return None,
        RulesetStatus::PartiallyEnforced => "partially enforced",
        RulesetStatus::NotEnforced => "not enforced",
    };
    let missing = missing_rights(ABI::from(kernel_abi));
    Some(if missing.is_empty() || kernel_abi <= 0 {
        format!("{what} (kernel Landlock ABI {kernel_abi})")
    } else {
        format!(
            "{what} (kernel ABI {kernel_abi}: no {} rights)",
            missing.join("/")
        )
    })
}

/// The status as the child sends it to the parent.
pub fn status_byte(status: &RulesetStatus) -> u8 {
    match status {
        RulesetStatus::FullyEnforced => b'F',
        RulesetStatus::PartiallyEnforced => b'P',
        RulesetStatus::NotEnforced => b'N',
    }
}

/// In the child before exec: applies `rs` and reports its status on
/// `err` ([`status_byte`]). Err: the errno to fail with (`ENOSYS`: not
/// fully enforced while `required`).
pub fn restrict(rs: Rules, err: std::os::fd::RawFd, required: bool) -> Result<(), i32> {
    match rs.restrict_self() {
        Ok(st) => {
            // SAFETY: writes one byte to our pipe.
            unsafe { libc::write(err, [status_byte(&st.ruleset)].as_ptr().cast(), 1) };
            if required && st.ruleset != RulesetStatus::FullyEnforced {
                return Err(libc::ENOSYS);
            }
            Ok(())
        }
        Err(_) => Err(libc::EPERM),
    }
}

/// The status back from [`status_byte`]; `None` for any other byte.
pub fn status_from_byte(b: u8) -> Option<Status> {
    match b {
        b'F' => Some(RulesetStatus::FullyEnforced),
        b'P' => Some(RulesetStatus::PartiallyEnforced),
        b'N' => Some(RulesetStatus::NotEnforced),
        _ => None,
    }
}

/// The directory a pattern starts from: the part before its first glob
/// component, walked up to what exists (never widened to `/`).
fn pattern_base(p: &str) -> Option<PathBuf> {
    let literal: Vec<&str> = p
        .split('/')
        .take_while(|c| !c.contains(['*', '?', '[', '{']))
        .collect();
    let lit = literal.join("/");
    let lit = if lit.is_empty() { "/".to_string() } else { lit };
    let mut cur = canonical_prefix(Path::new(&lit));
    while !cur.exists() {
        cur = cur.parent()?.to_path_buf();
    }
    if cur == Path::new("/") && lit != "/" {
        return None;
    }
    Some(cur)
}

/// Builds the ruleset in the parent; the child only restricts itself.
///
/// `Required` asks for every handled right as a hard requirement: a kernel
/// that lacks one fails here, with the rights it lacks named. The other
/// modes take what the kernel has (best effort) and report the rest.
pub fn ruleset(
    s: &Settings,
    mode: Landlock,
    lib: &Path,
    exe: &Path,
    tmp: &Path,
) -> Result<RulesetCreated, String> {
    let all = handled();
    let read = AccessFs::from_read(NEWEST) & all;
    let write = AccessFs::from_write(NEWEST) & all;
    let file = AccessFs::from_file(NEWEST) & all;
    let mut rules: Vec<(PathBuf, BitFlags<AccessFs>)> = Vec::new();
    // One rule per path (the built-in system list and the policy's overlap
    // much): the kernel would take the union of the rights anyway.
    let mut add = |p: &Path, a| match rules
        .iter_mut()
        .find(|(q, _)| q.as_os_str() == p.as_os_str())
    {
        Some((_, have)) => *have |= a,
        None => rules.push((p.to_path_buf(), a)),
    };

    // Reads: everything without a root; with one, the root, the read-allow
    // bases, installed software (the loader needs it, whatever `system`
    // says), /proc (the library reads /proc/self/fd) and /dev.
    let audit = s.mode == fsguard_policy::Mode::Audit;
    match &s.root {
        _ if audit => add(Path::new("/"), read),
        None => add(Path::new("/"), read),
        Some(r) => {
            add(Path::new(r), read);
            for p in s
                .system_paths
                .iter()
                .map(String::as_str)
                .chain(fsguard_policy::SYSTEM.iter().copied())
            {
                add(Path::new(p), read);
            }
            for p in &s.read.allow {
                if let Some(b) = pattern_base(p) {
                    add(&b, read);
                }
            }
            add(Path::new("/proc"), read);
            add(Path::new("/dev"), read);
            // System configuration glibc reads internally (NSS: passwd,
            // group, hosts), which the library cannot see either.
            add(Path::new("/etc"), read);
            add(lib, read);
            add(exe, read);
        }
    }
    // Writes: the root unless read-only (everything without a root), the
    // write-allow bases, the private TMPDIR, the devices and the log file.
    // In audit mode the library blocks nothing; the kernel still keeps
    // writes inside the root (and the write allow-list).
    match (&s.root, s.readonly && !audit) {
        (Some(r), false) => add(Path::new(r), write),
        (None, false) if s.write.allow.is_empty() || audit => add(Path::new("/"), write),
        _ => {}
    }
    for p in &s.write.allow {
        if let Some(b) = pattern_base(p) {
            add(&b, read | write);
        }
    }
    add(tmp, all);
    // The `ipc` preset's shared memory; Landlock cannot name a prefix, so
    // the library alone keeps other processes' objects refused.
    if s.ipc {
        add(Path::new("/dev/shm"), read | write);
    }
    for d in DEVICES {
        add(Path::new(d), all);
    }
    // Not the log file: the supervisor writes it, the command never does.

    let level = if mode == Landlock::Required {
        CompatLevel::HardRequirement
    } else {
        CompatLevel::BestEffort
    };
    let mut ruleset = Ruleset::default()
        .set_compatibility(level)
        .handle_access(all)
        .and_then(|r| r.create())
        .map_err(|e| {
            let abi = kernel_abi();
            match status_message(&RulesetStatus::PartiallyEnforced, abi) {
                Some(m)
                    if mode == Landlock::Required && !missing_rights(ABI::from(abi)).is_empty() =>
                {
                    format!("--landlock=required: Landlock would be only {m}")
                }
                _ => format!("landlock: {e}"),
            }
        })?;
    for (path, access) in rules {
        let Ok(fd) = PathFd::new(&path) else { continue };
        // What the descriptor names, not the path again (a second lookup,
        // and one that could find something else).
        let access = if is_dir(&fd) { access } else { access & file };
        ruleset = ruleset
            .add_rule(PathBeneath::new(fd, access))
            .map_err(|e| format!("landlock: {}: {e}", path.display()))?;
    }
    Ok(ruleset)
}

/// Whether `fd` is a directory.
fn is_dir(fd: &PathFd) -> bool {
    use std::os::fd::{AsFd, AsRawFd};
    // SAFETY: a zeroed stat, filled by the kernel for a descriptor we own.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let r = unsafe { libc::fstat(fd.as_fd().as_raw_fd(), &mut st) };
    r == 0 && st.st_mode & libc::S_IFMT == libc::S_IFDIR
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_bases_round_up() {
        assert_eq!(pattern_base("/usr/**/*.so"), Some(PathBuf::from("/usr")));
        assert_eq!(pattern_base("/usr/lib"), Some(PathBuf::from("/usr/lib")));
        assert_eq!(pattern_base("/nonexistent-xyz/a/**"), None);
        assert_eq!(pattern_base("/**"), Some(PathBuf::from("/")));
    }

    #[test]
    fn newest_abi_is_pinned() {
        // `ABI::from` saturates at the newest ABI the crate knows: a crate
        // upgrade that adds one fails here until `NEWEST` is reviewed.
        assert_eq!(ABI::from(i32::MAX), NEWEST);
    }

    #[test]
    fn fully_enforced_says_nothing() {
        for abi in 1..=10 {
            assert_eq!(status_message(&RulesetStatus::FullyEnforced, abi), None);
        }
    }

    #[test]
    fn partial_names_the_missing_rights_per_abi() {
        let p = RulesetStatus::PartiallyEnforced;
        assert_eq!(
            status_message(&p, 1).unwrap(),
            "partially enforced (kernel ABI 1: no refer/truncate/ioctl rights)"
        );
        assert_eq!(
            status_message(&p, 2).unwrap(),
            "partially enforced (kernel ABI 2: no truncate/ioctl rights)"
        );
        for abi in [3, 4] {
            assert_eq!(
                status_message(&p, abi).unwrap(),
                format!("partially enforced (kernel ABI {abi}: no ioctl rights)")
            );
        }
        // From ABI 5 on the kernel has every right fsguard handles.
        for abi in 5..=10 {
            assert!(missing_rights(ABI::from(abi)).is_empty(), "ABI {abi}");
        }
        assert_eq!(
            status_message(&RulesetStatus::NotEnforced, 0).unwrap(),
            "not enforced (kernel Landlock ABI 0)"
        );
        assert_eq!(
            status_message(&RulesetStatus::NotEnforced, 3).unwrap(),
            "not enforced (kernel ABI 3: no ioctl rights)"
        );
    }

    #[test]
    fn resolve_unix_is_not_handled() {
        assert!(!handled().contains(AccessFs::ResolveUnix));
        assert!(handled().contains(AccessFs::IoctlDev | AccessFs::Truncate | AccessFs::Refer));
    }

    #[test]
    fn status_bytes_round_trip() {
        for s in [
            RulesetStatus::FullyEnforced,
            RulesetStatus::PartiallyEnforced,
            RulesetStatus::NotEnforced,
        ] {
            assert_eq!(status_from_byte(status_byte(&s)), Some(s));
        }
        // The child's other tags are not statuses.
        for b in [b'T', b'U', b'E', b'L'] {
            assert_eq!(status_from_byte(b), None);
        }
    }

    /// `--landlock=required` builds its ruleset exactly when the kernel has
    /// every handled right, and otherwise names the rights it lacks.
    #[test]
    fn required_ruleset_is_a_hard_requirement() {
        let abi = kernel_abi();
        let s = Settings::default();
        let tmp = std::env::temp_dir();
        let exe = std::env::current_exe().unwrap();
        let r = ruleset(&s, Landlock::Required, &exe, &exe, &tmp);
        if abi >= 5 {
            assert!(r.is_ok(), "{:?}", r.err());
        } else if abi > 0 {
            let e = r.expect_err("a partial kernel must refuse the hard requirement");
            assert!(e.contains("only partially enforced"), "{e}");
            assert!(e.contains("ioctl"), "{e}");
        }
    }
}
