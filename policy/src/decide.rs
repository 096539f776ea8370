//! The decision: one rule order for reads and writes.

use std::fmt;

use crate::pattern::PatternSet;
use crate::presets::DEVICES;
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
            settings,
        };
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
        None
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
        s.system = false;
        let p = Policy::new(s).unwrap();
        assert_eq!(rule(&p, Access::Read, "/usr/lib/x"), (false, "root".into()));
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
    fn confines_reads() {
        let mut s = base();
        s.secrets = false;
        assert!(!Policy::new(s.clone()).unwrap().confines_reads());
        s.root = Some("/ws".into());
        assert!(Policy::new(s).unwrap().confines_reads());
    }
}
