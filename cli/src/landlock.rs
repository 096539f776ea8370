//! `fsguard run`'s Landlock layer: the ruleset derived from the policy, the
//! compatibility level each `--landlock` mode asks of the kernel, and what
//! fsguard says when the kernel enforces only part of it.
//!
//! The ruleset is built in the parent; the forked child only calls
//! `restrict_self` and reports the [`RulesetStatus`] back as one byte
//! ([`status_byte`]), so the parent can name what the kernel left out.

use std::path::{Path, PathBuf};

use fsguard_policy::{canonical_prefix, Policy, Settings, DEVICES, SYSTEM_CREDENTIALS};
use landlock::{
    Access, AccessFs, BitFlags, CompatLevel, Compatible, PathBeneath, Ruleset, RulesetAttr,
    RulesetCreated, RulesetCreatedAttr, RulesetStatus, Scope, ABI,
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

    // Reads the policy denies inside a directory granted whole: that
    // directory's entries granted one by one instead, the denied left out.
    let grants = if audit {
        rules.into_iter().map(|(p, a)| Grant::path(p, a)).collect()
    } else {
        let denied = read_denies(s, &rules);
        let (grants, notes) = carve(rules, &denied, read, CARVE_MAX);
        for n in notes {
            eprintln!("fsguard: {TAG}: {n}");
        }
        grants
    };

    let level = if mode == Landlock::Required {
        CompatLevel::HardRequirement
    } else {
        CompatLevel::BestEffort
    };
    let abstract_scope = wants_abstract_scope(s, mode, kernel_abi())?;
    let mut ruleset = Ruleset::default()
        .set_compatibility(level)
        .handle_access(all)
        .and_then(|r| {
            if abstract_scope {
                r.scope(Scope::AbstractUnixSocket)
            } else {
                Ok(r)
            }
        })
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
    for g in grants {
        let Some(fd) = g.open() else { continue };
        // What the descriptor names, not the path again (a second lookup,
        // and one that could find something else).
        let access = match file_type(&fd) {
            Some(libc::S_IFDIR) => g.access,
            // An entry that is a symlink: what it points to is governed by
            // the rules of where that lies, not by this one.
            Some(libc::S_IFLNK) | None => continue,
            Some(_) => g.access & file,
        };
        if access.is_empty() {
            continue;
        }
        ruleset = ruleset
            .add_rule(PathBeneath::new(fd, access))
            .map_err(|e| format!("landlock: {}: {e}", g.path.display()))?;
    }
    Ok(ruleset)
}

/// Whether the ruleset scopes abstract UNIX sockets (`LANDLOCK_SCOPE_
/// ABSTRACT_UNIX_SOCKET`, ABI 6): when the policy refuses them and names
/// none (a socket another process made, which the scope would refuse), on
/// a kernel that has the scope. Err: `--landlock=required` on a kernel
/// without it.
fn wants_abstract_scope(s: &Settings, mode: Landlock, abi: i32) -> Result<bool, String> {
    let Ok(p) = Policy::new(s.clone()) else {
        return Ok(false);
    };
    let wanted = s.mode != fsguard_policy::Mode::Audit
        && p.refuses_abstract_sockets()
        && !p.names_abstract_sockets();
    if !wanted || abi >= 6 {
        return Ok(wanted);
    }
    if mode == Landlock::Required {
        return Err(format!(
            "--landlock=required: this kernel (Landlock ABI {abi}) has no abstract UNIX \
             socket scope (ABI 6); the library alone would refuse abstract sockets"
        ));
    }
    Ok(false)
}

/// One rule of the ruleset: a path and the rights granted beneath it.
#[derive(Debug)]
struct Grant {
    path: PathBuf,
    access: BitFlags<AccessFs>,
    /// An entry of a directory split by [`carve`]: opened without following
    /// a symlink (and left out if it is one).
    entry: bool,
}

impl Grant {
    fn path(path: PathBuf, access: BitFlags<AccessFs>) -> Grant {
        Grant {
            path,
            access,
            entry: false,
        }
    }

    /// An `O_PATH` descriptor of the path (as the landlock crate's
    /// `PathFd`), not following a final symlink for an entry.
    fn open(&self) -> Option<std::os::fd::OwnedFd> {
        use std::os::unix::fs::OpenOptionsExt;
        let nofollow = if self.entry { libc::O_NOFOLLOW } else { 0 };
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_PATH | libc::O_CLOEXEC | nofollow)
            .open(&self.path)
            .ok()
            .map(Into::into)
    }
}

/// The file type (`S_IFDIR`, `S_IFLNK`, …) of what `fd` holds.
fn file_type(fd: &impl std::os::fd::AsRawFd) -> Option<libc::mode_t> {
    // SAFETY: a zeroed stat, filled by the kernel for a descriptor we own.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let r = unsafe { libc::fstat(fd.as_raw_fd(), &mut st) };
    (r == 0).then_some(st.st_mode & libc::S_IFMT)
}

/// The most rules [`carve`] adds for one directory granted whole (its
/// entries, and theirs down to each denied path): a directory with more
/// stays granted whole, and the library alone refuses the reads denied in
/// it. /etc has a few hundred entries; a home directory as many.
const CARVE_MAX: usize = 4096;

/// The read denies Landlock can honour, for the rules granted: the literal
/// paths of `read.deny`, `read.deny_always` and `secrets` (a glob names no
/// object Landlock could leave out), and the system's credential files
/// ([`SYSTEM_CREDENTIALS`]: `/etc/shadow`, …), each one the policy refuses
/// to read (an allow may lift a `deny`; without a root, nothing keeps
/// `/etc/shadow` from a reader). Not one inside a write area: its rule
/// grants the path anyway, and files made there later must stay readable.
fn read_denies(s: &Settings, rules: &[(PathBuf, BitFlags<AccessFs>)]) -> Vec<PathBuf> {
    let Ok(policy) = Policy::new(s.clone()) else {
        return Vec::new();
    };
    let write = AccessFs::from_write(NEWEST);
    let literal = |p: &&String| !p.contains(['*', '?', '[', '{', '\\']);
    let secrets = s.secret_paths.iter().filter(|_| s.secrets).filter(literal);
    let credentials = SYSTEM_CREDENTIALS
        .iter()
        .map(|p| canonical_prefix(Path::new(p)));
    let mut out: Vec<PathBuf> = s
        .read
        .deny
        .iter()
        .chain(&s.read.deny_always)
        .filter(literal)
        .chain(secrets)
        .map(PathBuf::from)
        .chain(credentials)
        .filter(|d| {
            !policy
                .decide(
                    fsguard_policy::Access::Read,
                    d.as_os_str().as_encoded_bytes(),
                )
                .allowed
        })
        .filter(|d| {
            !rules
                .iter()
                .any(|(r, a)| a.intersects(write) && d.starts_with(r))
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Leaves the `denied` paths out of the read rights of `rules`: a rule on a
/// directory holding a denied path keeps its other rights (and listing,
/// `readdir`), and its entries are granted the read rights one by one, down
/// to each denied path, which is left out; a rule on a denied path, or
/// below one, loses its read rights. At most `max` entries per directory
/// granted whole, else it stays whole (said in the notes).
///
/// What Landlock cannot express stays the library's: names below a split
/// directory remain listable, and an entry made there later is granted no
/// read right.
fn carve(
    rules: Vec<(PathBuf, BitFlags<AccessFs>)>,
    denied: &[PathBuf],
    read: BitFlags<AccessFs>,
    max: usize,
) -> (Vec<Grant>, Vec<String>) {
    let moved = read & !AccessFs::ReadDir;
    let mut out = Vec::new();
    let mut notes = Vec::new();
    // By the objects they name: `/bin` is `/usr/bin` on a merged /usr, and
    // a rule on it must be split as `/usr/bin`'s is.
    let mut named: Vec<(PathBuf, BitFlags<AccessFs>)> = Vec::new();
    for (r, a) in rules {
        let r = std::fs::canonicalize(&r).unwrap_or(r);
        match named.iter_mut().find(|(q, _)| *q == r) {
            Some((_, have)) => *have |= a,
            None => named.push((r, a)),
        }
    }
    for (r, a) in named {
        let inside = |d: &&PathBuf| d.starts_with(&r) && **d != r;
        if a & moved == BitFlags::EMPTY || !denied.iter().any(|d| inside(&d) || r.starts_with(d)) {
            out.push(Grant::path(r, a));
            continue;
        }
        let kept = a & !moved;
        if denied.iter().any(|d| r.starts_with(d)) {
            // The rule's path is itself denied, or lies below a denied one.
            if !kept.is_empty() {
                out.push(Grant::path(r, kept));
            }
            continue;
        }
        let below: Vec<&PathBuf> = denied.iter().filter(inside).collect();
        let mut entries = Vec::new();
        match split(&r, &below, a & moved, max, &mut entries) {
            Ok(()) => {
                if !kept.is_empty() {
                    out.push(Grant::path(r, kept));
                }
                out.extend(entries);
            }
            Err(why) => {
                notes.push(format!(
                    "{} granted whole for reading ({why}): the library alone refuses {}",
                    r.display(),
                    below
                        .iter()
                        .map(|d| d.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
                out.push(Grant::path(r, a));
            }
        }
    }
    // A directory split for two rules (`/usr` and `/usr/bin`) lists its
    // entries twice: one rule each.
    let mut seen: std::collections::HashMap<(PathBuf, bool), usize> = Default::default();
    let mut merged: Vec<Grant> = Vec::with_capacity(out.len());
    for g in out {
        match seen.entry((g.path.clone(), g.entry)) {
            std::collections::hash_map::Entry::Occupied(i) => merged[*i.get()].access |= g.access,
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(merged.len());
                merged.push(g);
            }
        }
    }
    (merged, notes)
}

/// The entries of directory `dir`, each granted `access`, but those in
/// `denied` (left out) and those above one (split in turn). Err: why it
/// was given up (over `max` entries, an unreadable directory).
fn split(
    dir: &Path,
    denied: &[&PathBuf],
    access: BitFlags<AccessFs>,
    max: usize,
    out: &mut Vec<Grant>,
) -> Result<(), String> {
    let list = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for e in list {
        let e = e.map_err(|e| format!("{}: {e}", dir.display()))?;
        let p = e.path();
        if denied.iter().any(|d| **d == p) {
            continue;
        }
        let below: Vec<&PathBuf> = denied
            .iter()
            .copied()
            .filter(|d| d.starts_with(&p))
            .collect();
        // A denied path's ancestors are real directories (denied paths are
        // resolved); one that is not is granted whole.
        if !below.is_empty() && e.file_type().is_ok_and(|t| t.is_dir()) {
            split(&p, &below, access, max, out)?;
            continue;
        }
        if out.len() >= max {
            return Err(format!("over {max} entries"));
        }
        out.push(Grant {
            path: p,
            access,
            entry: true,
        });
    }
    Ok(())
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

    fn tree(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("fsguard-carve-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("b/deep")).unwrap();
        for f in ["a", "b/secret", "b/ok", "b/deep/x"] {
            std::fs::write(d.join(f), "x").unwrap();
        }
        std::os::unix::fs::symlink("b/secret", d.join("link")).unwrap();
        std::fs::canonicalize(d).unwrap()
    }

    fn shown(grants: &[Grant], base: &Path) -> Vec<String> {
        let mut v: Vec<String> = grants
            .iter()
            .map(|g| {
                let p = g
                    .path
                    .strip_prefix(base)
                    .unwrap_or(&g.path)
                    .display()
                    .to_string();
                let reads = g.access.contains(AccessFs::ReadFile);
                format!(
                    "{p}{}{}",
                    if g.entry { " entry" } else { "" },
                    if reads { " read" } else { " list" }
                )
            })
            .collect();
        v.sort();
        v
    }

    /// Issue 27 item 7: a directory granted for reading that holds a denied
    /// path is granted entry by entry, down to the denied path, left out.
    #[test]
    fn landlock_grants_more_than_the_policy_carved() {
        let d = tree("split");
        let read = AccessFs::from_read(NEWEST);
        let denied = vec![d.join("b/secret")];
        let (g, notes) = carve(vec![(d.clone(), read)], &denied, read, 100);
        assert!(notes.is_empty(), "{notes:?}");
        // The directory itself keeps listing (beneath it too: `b` needs no
        // rule of its own); each entry is granted, `b/secret` is not.
        assert_eq!(
            shown(&g, &d),
            [
                " list",
                "a entry read",
                "b/deep entry read",
                "b/ok entry read",
                "link entry read"
            ]
        );
        // The symlink entry is opened without following: left out.
        let link = g.iter().find(|g| g.path.ends_with("link")).unwrap();
        assert_eq!(
            link.open().and_then(|fd| file_type(&fd)),
            Some(libc::S_IFLNK)
        );
        // A rule on a denied path, or beneath one, keeps no read right.
        let (g, _) = carve(vec![(d.join("b/secret"), read)], &denied, read, 100);
        assert!(
            g.iter().all(|g| !g.access.contains(AccessFs::ReadFile)),
            "{g:?}"
        );
        // Too many entries: granted whole, and said.
        let (g, notes) = carve(vec![(d.clone(), read)], &denied, read, 2);
        assert_eq!(shown(&g, &d), [" read"]);
        assert!(
            notes[0].contains("granted whole") && notes[0].contains("b/secret"),
            "{notes:?}"
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn landlock_grants_more_than_the_policy_denies_it_can_honour() {
        let read = AccessFs::from_read(NEWEST);
        let write = AccessFs::from_write(NEWEST);
        let s = Settings {
            root: Some("/ws".into()),
            read: fsguard_policy::Lists {
                allow: vec!["/etc/y".into()],
                deny: vec!["/ws/k".into(), "/etc/**/*.key".into(), "/etc/y".into()],
                deny_always: vec!["/etc/x".into()],
            },
            secret_paths: vec!["/h/.ssh".into(), "/h/.cargo/credentials*".into()],
            ..Settings::default()
        };
        let rules = vec![
            (PathBuf::from("/ws"), read | write),
            (PathBuf::from("/etc"), read),
        ];
        let d = read_denies(&s, &rules);
        let has = |p: &str| d.contains(&PathBuf::from(p));
        // Literal, refused, outside the write areas; the system's
        // credentials, refused under a root.
        assert!(has("/etc/x") && has("/h/.ssh"), "{d:?}");
        assert!(has(&canonical_prefix(Path::new("/etc/shadow"))
            .display()
            .to_string()));
        // Not a glob, not one inside the root (a write area), not one an
        // allow lifts.
        assert!(
            !d.iter().any(|p| p.to_string_lossy().contains('*')),
            "{d:?}"
        );
        assert!(!has("/ws/k") && !has("/etc/y"), "{d:?}");
        // Without a root (nor a read allow-list) nothing refuses
        // /etc/shadow: it stays granted.
        let open = Settings {
            root: None,
            readonly: true,
            secrets: false,
            read: fsguard_policy::Lists {
                deny_always: vec!["/etc/x".into()],
                ..Default::default()
            },
            ..s
        };
        assert_eq!(read_denies(&open, &rules), [PathBuf::from("/etc/x")]);
    }

    /// Issue 27 item 9: the abstract-socket scope where the policy refuses
    /// abstract sockets and names none, and the kernel has it.
    #[test]
    fn unix_sockets_are_doors_out_abstract_scope() {
        let confined = Settings {
            readonly: true,
            ..Settings::default()
        };
        assert_eq!(wants_abstract_scope(&confined, Landlock::Auto, 6), Ok(true));
        assert_eq!(
            wants_abstract_scope(&confined, Landlock::Auto, 5),
            Ok(false)
        );
        let e = wants_abstract_scope(&confined, Landlock::Required, 5).unwrap_err();
        assert!(e.contains("abstract"), "{e}");
        let named = Settings {
            unix_sockets: vec!["@x".into()],
            ..confined.clone()
        };
        assert_eq!(
            wants_abstract_scope(&named, Landlock::Required, 5),
            Ok(false)
        );
        let audit = Settings {
            mode: fsguard_policy::Mode::Audit,
            ..confined
        };
        assert_eq!(wants_abstract_scope(&audit, Landlock::Auto, 7), Ok(false));
        // Writes anywhere: abstract sockets too.
        assert_eq!(
            wants_abstract_scope(&Settings::default(), Landlock::Auto, 7),
            Ok(false)
        );
    }
}
