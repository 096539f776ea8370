//! The decision: one rule order for reads and writes.

use std::fmt;

use crate::pattern::PatternSet;
use crate::presets::{DEVICES, PROC_PUBLIC};
use crate::settings::{Error, LogTarget, Mode, Settings};
use crate::{is_within, Access};

/// The rule that decided an access; shown in trace lines as `rule=…`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule<'a> {
    /// Step 1: a `deny_always` pattern of the access's list.
    DenyAlways(Access, &'a str),
    /// Step 1: a built-in credential path (`secrets = true`).
    Secret(&'a str),
    /// A rename or link that would move a file protected by a read
    /// `deny_always` pattern (or a directory holding one) to a name its
    /// rules do not cover; shown as `read.deny_always(move):"…"`.
    DenyAlwaysMove(&'a str),
    /// The same for a `secrets` path: `secrets(move):"…"`.
    SecretMove(&'a str),
    /// Step 0: a change to the trace log file (or a move of a directory
    /// holding it). Beats every allow and holds in audit mode too: the
    /// guarded program cannot forge or erase its own record.
    Log,
    /// Step 2: an `allow` pattern.
    Allow(Access, &'a str),
    /// Step 3: a `deny` pattern.
    Deny(Access, &'a str),
    /// Step 4: a built-in device or an anonymous object (pipe, socket).
    Device,
    /// Step 5: a write under `readonly`.
    Readonly,
    /// Step 6: inside (allowed) or outside (denied) the root.
    Root,
    /// Step 6 or 7: a `system` location, readable under a root or a read
    /// allow-list.
    System(&'a str),
    /// Step 2: the private temporary directory `fsguard run` gives the command.
    Tmpdir,
    /// Step 4: the guarded tree's own shared memory (`ipc` preset).
    Ipc,
    /// Step 6 or 7: a `/proc/<pid>` fact any user may read (`proc` preset).
    Proc,
    /// Step 7: the access has `allow` rules, none of which matches: an
    /// allow-list refuses everything it does not name.
    NotAllowed,
    /// Step 8: nothing restricts the access.
    Default,
    /// The path could not be resolved; the library fails closed.
    Unresolved,
    /// An exec the library cannot follow (`static` or `setid` program),
    /// refused by `unguarded_exec = "deny"`.
    Unguarded(&'a str),
}

impl fmt::Display for Rule<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |a: &Access| match a {
            Access::Write => "write",
            Access::Read | Access::Exec => "read",
        };
        match self {
            Rule::DenyAlways(a, p) => write!(f, "{}.deny_always:{}", list(a), Quoted(p)),
            Rule::Secret(p) => write!(f, "secrets:{}", Quoted(p)),
            Rule::DenyAlwaysMove(p) => write!(f, "read.deny_always(move):{}", Quoted(p)),
            Rule::SecretMove(p) => write!(f, "secrets(move):{}", Quoted(p)),
            Rule::Log => f.write_str("log"),
            Rule::Allow(a, p) => write!(f, "{}.allow:{}", list(a), Quoted(p)),
            Rule::Deny(a, p) => write!(f, "{}.deny:{}", list(a), Quoted(p)),
            Rule::Device => f.write_str("device"),
            Rule::Readonly => f.write_str("readonly"),
            Rule::Root => f.write_str("root"),
            Rule::System(p) => write!(f, "system:{}", Quoted(p)),
            Rule::Tmpdir => f.write_str("tmpdir"),
            Rule::Ipc => f.write_str("ipc"),
            Rule::Proc => f.write_str("proc"),
            Rule::NotAllowed => f.write_str("not_allowed"),
            Rule::Default => f.write_str("default"),
            Rule::Unresolved => f.write_str("unresolved"),
            Rule::Unguarded(kind) => write!(f, "unguarded_exec:{kind}"),
        }
    }
}

/// A pattern in double quotes with `"` and `\` escaped.
struct Quoted<'a>(&'a str);

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"")?;
        for c in self.0.chars() {
            match c {
                '"' => f.write_str("\\\"")?,
                '\\' => f.write_str("\\\\")?,
                c if c.is_control() => write!(f, "\\x{:02x}", c as u32)?,
                c => write!(f, "{c}")?,
            }
        }
        f.write_str("\"")
    }
}

/// The verdict for one access and the rule behind it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision<'a> {
    /// Whether the policy lets the access happen.
    pub allowed: bool,
    /// The rule that decided.
    pub rule: Rule<'a>,
}

#[derive(Debug)]
struct Lists {
    allow: PatternSet,
    deny: PatternSet,
    deny_always: PatternSet,
}

impl Lists {
    fn new(l: &crate::Lists, name: &str) -> Result<Lists, Error> {
        let c = |pats: &[String], key: &str| {
            PatternSet::new(pats).map_err(|e| Error::new(format!("{name}.{key}: {e}")))
        };
        Ok(Lists {
            allow: c(&l.allow, "allow")?,
            deny: c(&l.deny, "deny")?,
            deny_always: c(&l.deny_always, "deny_always")?,
        })
    }
}

/// A compiled policy. Build it once at load; [`Policy::decide`] allocates
/// nothing and takes no lock.
#[derive(Debug)]
pub struct Policy {
    settings: Settings,
    root: Option<Box<[u8]>>,
    tmpdir: Option<Box<[u8]>>,
    read: Lists,
    write: Lists,
    secrets: PatternSet,
    system: PatternSet,
    devices: PatternSet,
    reads_confined: bool,
    /// The trace log file, protected from the guarded program.
    log: Option<Box<[u8]>>,
    /// `/dev/shm/fsguard.<tag>.`: the tree's shared memory (`ipc`).
    ipc_shm: Option<Box<[u8]>>,
    /// `/dev/shm/sem.fsguard.<tag>.`: its named semaphores.
    ipc_sem: Option<Box<[u8]>>,
}

impl Policy {
    /// Compiles settings.
    pub fn new(settings: Settings) -> Result<Policy, Error> {
        let mut p = Policy {
            reads_confined: false,
            root: settings
                .root
                .as_ref()
                .map(|r| r.trim_end_matches('/').as_bytes().into())
                .map(|r: Box<[u8]>| if r.is_empty() { b"/"[..].into() } else { r }),
            tmpdir: settings
                .tmpdir
                .as_ref()
                .map(|t| t.trim_end_matches('/').as_bytes().into())
                .filter(|t: &Box<[u8]>| !t.is_empty()),
            read: Lists::new(&settings.read, "read")?,
            write: Lists::new(&settings.write, "write")?,
            secrets: if settings.secrets {
                PatternSet::new(&settings.secret_paths).map_err(Error::new)?
            } else {
                PatternSet::default()
            },
            system: if settings.system {
                PatternSet::new(&settings.system_paths).map_err(Error::new)?
            } else {
                PatternSet::default()
            },
            devices: PatternSet::new(DEVICES).map_err(Error::new)?,
            log: protected_log(&settings.log.target),
            ipc_shm: None,
            ipc_sem: None,
            settings,
        };
        if let (true, Some(tag)) = (p.settings.ipc, &p.settings.ipc_tag) {
            if tag.is_empty() || !tag.bytes().all(|b| b.is_ascii_alphanumeric()) {
                return Err(Error::new(format!("ipc_tag: bad value {tag:?}")));
            }
            p.ipc_shm = Some(format!("/dev/shm/fsguard.{tag}.").into_bytes().into());
            p.ipc_sem = Some(format!("/dev/shm/sem.fsguard.{tag}.").into_bytes().into());
        }
        p.reads_confined = p.root.is_some()
            || !p.read.allow.is_empty()
            || !p.read.deny.is_empty()
            || !p.read.deny_always.is_empty()
            || !p.secrets.is_empty();
        Ok(p)
    }

    /// The settings this policy was compiled from.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// True in audit mode: denials are logged, not enforced.
    pub fn audit(&self) -> bool {
        self.settings.mode == Mode::Audit
    }

    /// The errno of a denied call.
    pub fn errno(&self) -> i32 {
        self.settings.errno.code()
    }

    /// False when no read can be denied, so reads need not be resolved.
    #[inline]
    pub fn confines_reads(&self) -> bool {
        self.reads_confined
    }

    /// Decides one access to a resolved path (absolute and canonical, or an
    /// anonymous object name such as `pipe:[12]`).
    pub fn decide(&self, access: Access, path: &[u8]) -> Decision<'_> {
        let deny = |rule| Decision {
            allowed: false,
            rule,
        };
        let allow = |rule| Decision {
            allowed: true,
            rule,
        };
        let lists = match access {
            Access::Write => &self.write,
            Access::Read | Access::Exec => &self.read,
        };
        // 0. the trace log: no change to it but the library's own appends.
        if access == Access::Write && self.log.as_deref() == Some(path) {
            return deny(Rule::Log);
        }
        // 1. deny_always and the credential preset beat everything.
        if let Some(p) = lists.deny_always.find(path) {
            return deny(Rule::DenyAlways(access, p));
        }
        if let Some(p) = self.secrets.find(path) {
            return deny(Rule::Secret(p));
        }
        // 2. allow (and the private TMPDIR), 3. deny.
        if let Some(p) = lists.allow.find(path) {
            return allow(Rule::Allow(access, p));
        }
        if self.tmpdir.as_deref().is_some_and(|t| is_within(path, t)) {
            return allow(Rule::Tmpdir);
        }
        if let Some(p) = lists.deny.find(path) {
            return deny(Rule::Deny(access, p));
        }
        // 4. devices and anonymous objects (pipes, sockets, anon inodes).
        if path.first() != Some(&b'/') || self.devices.matches(path) {
            return allow(Rule::Device);
        }
        if self.is_ipc(path) {
            return allow(Rule::Ipc);
        }
        // What a program may write, it may read back.
        if access != Access::Write {
            if let Some(p) = self.write.allow.find(path) {
                return allow(Rule::Allow(Access::Write, p));
            }
        }
        // 5. read-only.
        if access == Access::Write && self.settings.readonly {
            return deny(Rule::Readonly);
        }
        // 6. root containment.
        if let Some(root) = &self.root {
            if is_within(path, root) {
                return allow(Rule::Root);
            }
            if let Some(rule) = self.system_read(access, path) {
                return allow(rule);
            }
            return deny(Rule::Root);
        }
        // 7. an allow-list refuses what it does not name.
        if !lists.allow.is_empty() {
            if let Some(rule) = self.system_read(access, path) {
                return allow(rule);
            }
            return deny(Rule::NotAllowed);
        }
        // 8. nothing restricts this access.
        allow(Rule::Default)
    }

    /// A read of installed software (`system`), or of the process's own
    /// `/proc` entries.
    fn system_read(&self, access: Access, path: &[u8]) -> Option<Rule<'_>> {
        if access == Access::Write {
            return None;
        }
        if let Some(p) = self.system.find(path) {
            return Some(Rule::System(p));
        }
        if self.settings.system && is_own_proc(path) {
            return Some(Rule::System("/proc/self"));
        }
        // The names in /etc, not what they hold: pip's `distro` lists it to
        // find `*-release` files; each file opened is decided on its own.
        if self.settings.system && path == b"/etc" {
            return Some(Rule::System("/etc (names)"));
        }
        if self.settings.proc
            && access == Access::Read
            && (is_own_proc(path) || is_proc_public(path))
        {
            return Some(Rule::Proc);
        }
        None
    }

    /// The shared-memory name prefix of the guarded tree (`fsguard.<tag>.`)
    /// when the `ipc` preset is on: `shm_open` names the policy would refuse
    /// are opened under it.
    pub fn ipc_prefix(&self) -> Option<&[u8]> {
        self.ipc_shm.as_deref().map(|p| &p[b"/dev/shm/".len()..])
    }

    /// `/dev/shm/fsguard.<tag>.*` or `/dev/shm/sem.fsguard.<tag>.*`.
    fn is_ipc(&self, path: &[u8]) -> bool {
        [&self.ipc_shm, &self.ipc_sem]
            .into_iter()
            .flatten()
            .any(|p| path.len() > p.len() && path.starts_with(p))
    }

    /// What would allow a refused access: `--allow-write ~/.cache/tool`.
    /// `None` for what no allow rule can change (`deny_always`, `secrets`,
    /// an unresolvable path) or a path a flag cannot name exactly (glob
    /// characters, bytes that are not UTF-8).
    pub fn hint<'a>(&'a self, access: Access, path: &'a [u8], rule: Rule<'_>) -> Option<Hint<'a>> {
        if !matches!(
            rule,
            Rule::Root | Rule::NotAllowed | Rule::Readonly | Rule::Deny(..)
        ) {
            return None;
        }
        let path = std::str::from_utf8(path).ok()?;
        if !path.starts_with('/')
            || path
                .bytes()
                .any(|b| b"*?[]{}\\'\"".contains(&b) || b < 0x20 || b == 0x7f)
        {
            return None;
        }
        let home = self.settings.home.as_deref().filter(|h| *h != "/");
        let (tilde, rel) = match home.and_then(|h| path.strip_prefix(h)) {
            Some(r) if r.starts_with('/') => (true, &r[1..]),
            _ => (false, path),
        };
        // A tool's own directory under the home (`~/.cache/pip`), so one
        // rule covers the files the tool makes next.
        let mut target = rel;
        if tilde {
            for base in [".cache/", ".config/", ".local/share/", ".local/state/"] {
                if let Some(r) = rel.strip_prefix(base) {
                    let tool = r.split('/').next().unwrap_or("");
                    if !tool.is_empty() {
                        target = &rel[..base.len() + tool.len()];
                    }
                }
            }
        }
        Some(Hint {
            access,
            tilde,
            target,
        })
    }

    /// A `deny_always` read rule, credential path or the trace log covering
    /// `path`: such a file may not be renamed or linked, so it cannot escape
    /// its rules (or, for the log, its name).
    pub fn protected(&self, path: &[u8]) -> Option<Rule<'_>> {
        // The file itself, or, for a directory, protected files beneath it.
        if self.log.as_deref().is_some_and(|l| is_within(l, path)) {
            return Some(Rule::Log);
        }
        let da = &self.read.deny_always;
        if let Some(p) = da.find(path).or_else(|| da.find_below(path)) {
            return Some(Rule::DenyAlwaysMove(p));
        }
        let sec = &self.secrets;
        sec.find(path)
            .or_else(|| sec.find_below(path))
            .map(Rule::SecretMove)
    }

    /// The trace log file the policy protects, if any.
    pub fn log_file(&self) -> Option<&[u8]> {
        self.log.as_deref()
    }

    /// True when `path` is inside the root (or there is no root); used to
    /// hide what lies outside (`hide_outside`).
    pub fn inside_root(&self, path: &[u8]) -> bool {
        self.root.as_ref().is_none_or(|r| is_within(path, r))
    }
}

/// The log file to protect: a file target, not a device or a `/proc` entry
/// (`--log /dev/null` must not take `/dev/null` away from the program).
fn protected_log(target: &LogTarget) -> Option<Box<[u8]>> {
    let LogTarget::File(f) = target else {
        return None;
    };
    let f = f.as_bytes();
    let special = [&b"/dev"[..], b"/proc", b"/sys"]
        .iter()
        .any(|d| is_within(f, d));
    (!special && f.first() == Some(&b'/')).then(|| f.into())
}

/// A suggested rule that allows a refused access; see [`Policy::hint`].
/// Displays as the flag (`--allow-write ~/.cache/pip`);
/// [`Hint::toml`] gives the config line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hint<'a> {
    access: Access,
    tilde: bool,
    target: &'a str,
}

impl Hint<'_> {
    /// The list the rule goes to: `read` or `write`.
    pub fn list(&self) -> &'static str {
        match self.access {
            Access::Write => "write",
            Access::Read | Access::Exec => "read",
        }
    }

    /// The pattern, `~/` for the home.
    pub fn pattern(&self) -> String {
        if self.tilde {
            format!("~/{}", self.target)
        } else {
            self.target.to_string()
        }
    }

    /// The config line: `[write] allow = ["~/.cache/pip"]`.
    pub fn toml(&self) -> String {
        format!("[{}] allow = [\"{}\"]", self.list(), self.pattern())
    }
}

impl fmt::Display for Hint<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let quote = self.target.contains(' ');
        write!(f, "--allow-{} ", self.list())?;
        if quote {
            f.write_str("'")?;
        }
        if self.tilde {
            f.write_str("~/")?;
        }
        f.write_str(self.target)?;
        if quote {
            f.write_str("'")?;
        }
        Ok(())
    }
}

/// `/proc` itself, `/proc/<pid>`, its `task` directory, a thread's
/// directory, and their [`PROC_PUBLIC`] entries.
fn is_proc_public(path: &[u8]) -> bool {
    let Some(rest) = path.strip_prefix(b"/proc") else {
        return false;
    };
    if rest.is_empty() {
        return true;
    }
    let digits = |s: &[u8]| !s.is_empty() && s.iter().all(u8::is_ascii_digit);
    let Some(rest) = rest.strip_prefix(b"/") else {
        return false;
    };
    // At most four components; no allocation on the decision path.
    let mut parts: [&[u8]; 5] = [&[]; 5];
    let mut n = 0;
    for part in rest.split(|&b| b == b'/') {
        if n == parts.len() {
            return false;
        }
        parts[n] = part;
        n += 1;
    }
    let public = |s: &[u8]| PROC_PUBLIC.iter().any(|p| p.as_bytes() == s);
    match &parts[..n] {
        [pid] => digits(pid),
        [pid, e] => digits(pid) && (public(e) || *e == b"task"),
        [pid, t, tid] => digits(pid) && *t == b"task" && digits(tid),
        [pid, t, tid, e] => digits(pid) && *t == b"task" && digits(tid) && public(e),
        _ => false,
    }
}

/// `/proc/<own pid>/…`: what the process reads about itself.
fn is_own_proc(path: &[u8]) -> bool {
    let Some(rest) = path.strip_prefix(b"/proc/") else {
        return false;
    };
    let end = rest.iter().position(|&b| b == b'/').unwrap_or(rest.len());
    let digits = &rest[..end];
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return false;
    }
    let mut buf = [0u8; 20];
    let mut n = std::process::id();
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    digits == &buf[i..]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Lists as L;

    fn base() -> Settings {
        Settings {
            secret_paths: vec!["/home/u/.ssh".into(), "/home/u/.cargo/credentials*".into()],
            system_paths: vec!["/usr".into(), "/etc/hosts".into()],
            ..Settings::default()
        }
    }

    fn rule(p: &Policy, a: Access, path: &str) -> (bool, String) {
        let d = p.decide(a, path.as_bytes());
        (d.allowed, d.rule.to_string())
    }

    #[test]
    fn step1_deny_always_and_secrets_beat_allow() {
        let mut s = base();
        s.read = L {
            allow: vec!["/home/u".into()],
            deny: vec![],
            deny_always: vec!["/**/*.pem".into()],
        };
        let p = Policy::new(s).unwrap();
        assert_eq!(
            rule(&p, Access::Read, "/home/u/k.pem"),
            (false, "read.deny_always:\"/**/*.pem\"".into())
        );
        assert_eq!(
            rule(&p, Access::Read, "/home/u/.ssh/id_rsa"),
            (false, "secrets:\"/home/u/.ssh\"".into())
        );
        assert_eq!(
            rule(&p, Access::Write, "/home/u/.cargo/credentials.toml"),
            (false, "secrets:\"/home/u/.cargo/credentials*\"".into())
        );
        assert_eq!(
            rule(&p, Access::Exec, "/home/u/a.pem"),
            (false, "read.deny_always:\"/**/*.pem\"".into()),
            "exec uses the read lists"
        );
        assert_eq!(rule(&p, Access::Read, "/home/u/x").0, true);
        assert_eq!(p.protected(b"/home/u/k.pem").is_some(), true);
        assert_eq!(p.protected(b"/home/u/k.txt"), None);
        assert!(
            p.protected(b"/home/u").is_some(),
            "a directory holding secrets moves them"
        );
        assert_eq!(p.protected(b"/home/u/src"), None);
    }

    #[test]
    fn steps2_3_allow_inside_deny_inside_allow() {
        let mut s = base();
        s.root = Some("/ws".into());
        s.read = L {
            allow: vec!["/ws/**/.env.example".into()],
            deny: vec!["/ws/**/.env*".into()],
            deny_always: vec![],
        };
        let p = Policy::new(s).unwrap();
        assert_eq!(rule(&p, Access::Read, "/ws/a/.env").0, false);
        assert_eq!(
            rule(&p, Access::Read, "/ws/a/.env").1,
            "read.deny:\"/ws/**/.env*\""
        );
        assert_eq!(rule(&p, Access::Read, "/ws/a/.env.example").0, true);
        assert_eq!(
            rule(&p, Access::Read, "/ws/a/main.py"),
            (true, "root".into())
        );
        assert_eq!(
            rule(&p, Access::Write, "/ws/a/.env"),
            (true, "root".into()),
            "read rules do not restrict writes"
        );
    }

    #[test]
    fn step4_devices_and_anonymous_objects() {
        let mut s = base();
        s.readonly = true;
        s.root = Some("/ws".into());
        let p = Policy::new(s).unwrap();
        for path in [
            "/dev/null",
            "/dev/pts/3",
            "/dev/tty",
            "pipe:[1234]",
            "socket:[9]",
            "anon_inode:[eventfd]",
        ] {
            assert_eq!(
                rule(&p, Access::Write, path),
                (true, "device".into()),
                "{path}"
            );
        }
        assert_eq!(rule(&p, Access::Write, "/dev/sda").0, false);
        assert_eq!(rule(&p, Access::Write, "/dev/nullx").0, false);
    }

    #[test]
    fn step5_readonly() {
        let mut s = base();
        s.readonly = true;
        let p = Policy::new(s).unwrap();
        assert_eq!(
            rule(&p, Access::Write, "/tmp/x"),
            (false, "readonly".into())
        );
        assert_eq!(rule(&p, Access::Read, "/tmp/x"), (true, "default".into()));
    }

    #[test]
    fn step6_root_and_system() {
        let mut s = base();
        s.root = Some("/ws".into());
        let p = Policy::new(s.clone()).unwrap();
        assert_eq!(rule(&p, Access::Write, "/ws/a"), (true, "root".into()));
        assert_eq!(rule(&p, Access::Write, "/ws"), (true, "root".into()));
        assert_eq!(rule(&p, Access::Write, "/ws2/a"), (false, "root".into()));
        assert_eq!(
            rule(&p, Access::Read, "/etc/passwd"),
            (false, "root".into())
        );
        assert_eq!(
            rule(&p, Access::Read, "/usr/lib/x"),
            (true, "system:\"/usr\"".into())
        );
        assert_eq!(rule(&p, Access::Exec, "/usr/bin/sh").0, true);
        assert_eq!(
            rule(&p, Access::Write, "/usr/lib/x"),
            (false, "root".into())
        );
        let own = format!("/proc/{}/maps", std::process::id());
        assert_eq!(rule(&p, Access::Read, &own).0, true);
        assert_eq!(
            rule(&p, Access::Read, "/proc/1/environ").0,
            std::process::id() == 1
        );
        assert_eq!(
            rule(&p, Access::Read, "/etc"),
            (true, "system:\"/etc (names)\"".into()),
            "a listing of /etc, never its files"
        );
        assert_eq!(rule(&p, Access::Write, "/etc").0, false);
        s.system = false;
        let p = Policy::new(s).unwrap();
        assert_eq!(rule(&p, Access::Read, "/usr/lib/x"), (false, "root".into()));
        assert_eq!(rule(&p, Access::Read, "/etc").0, false);
    }

    #[test]
    fn step7_default_allows() {
        let p = Policy::new(base()).unwrap();
        assert_eq!(rule(&p, Access::Write, "/tmp/x"), (true, "default".into()));
    }

    #[test]
    fn step7_an_allow_list_refuses_the_rest() {
        let mut s = base();
        s.write.allow = vec!["/proj".into()];
        let p = Policy::new(s.clone()).unwrap();
        assert_eq!(
            rule(&p, Access::Write, "/proj/a"),
            (true, "write.allow:\"/proj\"".into())
        );
        assert_eq!(
            rule(&p, Access::Write, "/home/u/.bashrc"),
            (false, "not_allowed".into())
        );
        assert_eq!(
            rule(&p, Access::Read, "/home/u/.bashrc"),
            (true, "default".into()),
            "a write allow-list does not confine reads"
        );
        s.read.allow = vec!["/data".into()];
        let p = Policy::new(s).unwrap();
        assert!(p.confines_reads());
        assert_eq!(
            rule(&p, Access::Read, "/etc/x"),
            (false, "not_allowed".into())
        );
        assert_eq!(
            rule(&p, Access::Read, "/usr/lib/x"),
            (true, "system:\"/usr\"".into())
        );
        assert_eq!(rule(&p, Access::Write, "/dev/null").0, true);
    }

    #[test]
    fn writable_is_readable_and_tmpdir() {
        let mut s = base();
        s.root = Some("/ws".into());
        s.readonly = true;
        s.write.allow = vec!["/tmp".into()];
        s.read.deny = vec!["/tmp/hidden".into()];
        s.tmpdir = Some("/var/tmp/fsguard-1".into());
        let p = Policy::new(s).unwrap();
        assert_eq!(
            rule(&p, Access::Read, "/tmp/f"),
            (true, "write.allow:\"/tmp\"".into())
        );
        assert_eq!(rule(&p, Access::Read, "/tmp/hidden/f").0, false);
        for a in [Access::Read, Access::Write] {
            assert_eq!(rule(&p, a, "/var/tmp/fsguard-1/x"), (true, "tmpdir".into()));
        }
        assert_eq!(
            rule(&p, Access::Write, "/var/tmp/x"),
            (false, "readonly".into())
        );
        assert_eq!(rule(&p, Access::Read, "/home/u/.ssh/x").0, false);
    }

    #[test]
    fn moves_name_the_protection_that_fired() {
        let mut s = base();
        s.read.deny_always = vec!["/ws/**/*.pem".into()];
        let p = Policy::new(s).unwrap();
        assert_eq!(
            p.protected(b"/ws/k.pem").map(|r| r.to_string()),
            Some("read.deny_always(move):\"/ws/**/*.pem\"".into())
        );
        assert_eq!(
            p.protected(b"/home/u/.ssh/id").map(|r| r.to_string()),
            Some("secrets(move):\"/home/u/.ssh\"".into())
        );
        assert_eq!(p.protected(b"/ws/k.txt"), None);
    }

    #[test]
    fn the_log_file_beats_every_allow() {
        let mut s = base();
        s.root = Some("/ws".into());
        s.write.allow = vec!["/ws/**".into()];
        s.mode = Mode::Audit;
        s.log.target = LogTarget::File("/ws/logs/trace.json".into());
        let p = Policy::new(s).unwrap();
        assert_eq!(
            rule(&p, Access::Write, "/ws/logs/trace.json"),
            (false, "log".into())
        );
        assert_eq!(
            rule(&p, Access::Read, "/ws/logs/trace.json"),
            (true, "write.allow:\"/ws/**\"".into()),
            "the program may read its log"
        );
        assert_eq!(rule(&p, Access::Write, "/ws/logs/trace.json2").0, true);
        // Moving the log, or a directory holding it, is a change to it.
        for dir in ["/ws/logs/trace.json", "/ws/logs", "/ws", "/"] {
            assert_eq!(p.protected(dir.as_bytes()), Some(Rule::Log), "{dir}");
        }
        assert_eq!(p.protected(b"/ws/other"), None);
        for special in ["/dev/null", "/dev/stderr", "/proc/self/fd/2"] {
            let mut s = base();
            s.log.target = LogTarget::File(special.into());
            let p = Policy::new(s).unwrap();
            assert_eq!(p.log_file(), None, "{special}");
            assert_eq!(rule(&p, Access::Write, special).0, true, "{special}");
        }
    }

    #[test]
    fn quoting_in_rules() {
        let mut s = base();
        s.write.deny = vec!["/a \"b\"".into()];
        let p = Policy::new(s).unwrap();
        assert_eq!(
            rule(&p, Access::Write, "/a \"b\"/x").1,
            "write.deny:\"/a \\\"b\\\"\""
        );
    }

    #[test]
    fn proc_preset_public_facts_of_any_pid_never_secrets() {
        let mut s = base();
        s.root = Some("/ws".into());
        let p = Policy::new(s.clone()).unwrap();
        for ok in [
            "/proc",
            "/proc/1",
            "/proc/1/stat",
            "/proc/1/status",
            "/proc/1/cmdline",
            "/proc/1/task",
            "/proc/1/task/7/stat",
        ] {
            assert_eq!(rule(&p, Access::Read, ok), (true, "proc".into()), "{ok}");
        }
        for no in [
            "/proc/1/environ",
            "/proc/1/mem",
            "/proc/1/maps",
            "/proc/1/fd/3",
            "/proc/1/cwd",
            "/proc/1/task/7/environ",
            "/proc/1/stat/x",
            "/proc/self1/stat",
            "/proc/sys/kernel/hostname",
        ] {
            assert_eq!(rule(&p, Access::Read, no), (false, "root".into()), "{no}");
        }
        assert_eq!(rule(&p, Access::Write, "/proc/1/stat").0, false);
        assert_eq!(rule(&p, Access::Exec, "/proc/1/stat").0, false);
        s.proc = false;
        let p = Policy::new(s).unwrap();
        assert_eq!(rule(&p, Access::Read, "/proc/1/stat").0, false);
    }

    #[test]
    fn ipc_preset_allows_the_trees_namespace_only() {
        let mut s = base();
        s.root = Some("/ws".into());
        s.readonly = true;
        s.ipc_tag = Some("1a2b".into());
        let p = Policy::new(s.clone()).unwrap();
        assert_eq!(p.ipc_prefix(), Some(&b"fsguard.1a2b."[..]));
        for a in [Access::Read, Access::Write] {
            for ok in [
                "/dev/shm/fsguard.1a2b.psm_1",
                "/dev/shm/sem.fsguard.1a2b.mp-x",
            ] {
                assert_eq!(rule(&p, a, ok), (true, "ipc".into()), "{ok}");
            }
            for no in [
                "/dev/shm/psm_1",
                "/dev/shm/fsguard.1a2c.psm_1",
                "/dev/shm/fsguard.1a2b.",
                "/dev/shm/sem.mp-x",
            ] {
                assert_eq!(rule(&p, a, no).0, false, "{no}");
            }
        }
        s.ipc = false;
        let p = Policy::new(s.clone()).unwrap();
        assert_eq!(p.ipc_prefix(), None);
        assert_eq!(rule(&p, Access::Write, "/dev/shm/fsguard.1a2b.x").0, false);
        s.ipc = true;
        s.ipc_tag = Some("../x".into());
        assert!(Policy::new(s).is_err(), "a tag is a name, never a path");
    }

    #[test]
    fn hints_name_the_allow_rule_never_for_deny_always_or_secrets() {
        let mut s = base();
        s.root = Some("/ws".into());
        s.home = Some("/home/u".into());
        s.write.deny_always = vec!["/ws/.git/hooks".into()];
        let p = Policy::new(s).unwrap();
        let hint = |a: Access, path: &str| {
            let d = p.decide(a, path.as_bytes());
            assert!(!d.allowed, "{path}");
            p.hint(a, path.as_bytes(), d.rule)
                .map(|h| (h.to_string(), h.toml()))
        };
        assert_eq!(
            hint(Access::Write, "/home/u/.cache/virtualenv/wheel/x.whl"),
            Some((
                "--allow-write ~/.cache/virtualenv".into(),
                "[write] allow = [\"~/.cache/virtualenv\"]".into()
            ))
        );
        assert_eq!(
            hint(Access::Read, "/etc/passwd").map(|h| h.0),
            Some("--allow-read /etc/passwd".into())
        );
        assert_eq!(
            hint(Access::Exec, "/opt/t/run").map(|h| h.0),
            Some("--allow-read /opt/t/run".into())
        );
        assert_eq!(
            hint(Access::Write, "/home/u/my file").map(|h| h.0),
            Some("--allow-write '~/my file'".into())
        );
        assert_eq!(hint(Access::Write, "/home/u/.ssh/id_rsa"), None);
        assert_eq!(hint(Access::Write, "/ws/.git/hooks/pre-commit"), None);
        assert_eq!(hint(Access::Write, "/tmp/a*b"), None, "a glob is not exact");
        assert_eq!(hint(Access::Write, "/tmp/a\"b"), None);
        // The hint, applied, allows the access.
        let mut s = base();
        s.root = Some("/ws".into());
        s.write.allow = vec!["/home/u/.cache/virtualenv".into()];
        let p = Policy::new(s).unwrap();
        assert!(
            p.decide(Access::Write, b"/home/u/.cache/virtualenv/wheel/x.whl")
                .allowed
        );
    }

    #[test]
    fn confines_reads() {
        let mut s = base();
        s.secrets = false;
        assert!(!Policy::new(s.clone()).unwrap().confines_reads());
        s.root = Some("/ws".into());
        assert!(Policy::new(s).unwrap().confines_reads());
    }
}
