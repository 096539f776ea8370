//! The decision: one rule order for reads and writes.

mod hint;
mod proc;
mod rule;
#[cfg(test)]
mod tests;

use crate::pattern::PatternSet;
use crate::presets::DEVICES;
use crate::settings::{Error, LogTarget, Mode, Settings};
use crate::sockets::AbstractSet;
use crate::{is_within, Access};

pub use hint::Hint;
pub use rule::Rule;

use self::proc::{is_own_proc, is_proc_public};

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
    /// `unix_sockets`: the path patterns, and the abstract names.
    sockets: PatternSet,
    abstract_sockets: AbstractSet,
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
                .as_deref()
                .map(|t| t.trim_end_matches('/'))
                .filter(|t| !t.is_empty())
                .map(|t| t.as_bytes().into()),
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
            sockets: PatternSet::new(
                settings
                    .unix_sockets
                    .iter()
                    .filter(|p| !crate::sockets::is_abstract(p.as_bytes())),
            )
            .map_err(|e| Error::new(format!("unix_sockets: {e}")))?,
            abstract_sockets: AbstractSet::new(&settings.unix_sockets),
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

    /// Decides a connect or send to an AF_UNIX socket (or an abstract
    /// socket's bind): `name` is the socket file's resolved path, or `@`
    /// and an abstract socket's name.
    ///
    /// A socket file is a write to it (whatever listens there acts for the
    /// caller), except that the `unix_sockets` allow-list admits the ones
    /// it names after `deny_always`, `secrets` and the log have spoken. An
    /// abstract socket is outside every root and rule: only `unix_sockets`
    /// admits it, unless the policy lets writes go anywhere.
    pub fn decide_socket(&self, name: &[u8]) -> Decision<'_> {
        if crate::sockets::is_abstract(name) {
            return match self.abstract_sockets.find(name) {
                Some(p) => Decision {
                    allowed: true,
                    rule: Rule::UnixSocket(p),
                },
                None if self.writes_anywhere() => Decision {
                    allowed: true,
                    rule: Rule::Default,
                },
                None => Decision {
                    allowed: false,
                    rule: Rule::AbstractSocket,
                },
            };
        }
        let d = self.decide(Access::Write, name);
        if d.allowed || matches!(d.rule, Rule::Log | Rule::DenyAlways(..) | Rule::Secret(_)) {
            return d;
        }
        match self.sockets.find(name) {
            Some(p) => Decision {
                allowed: true,
                rule: Rule::UnixSocket(p),
            },
            None => d,
        }
    }

    /// Whether abstract AF_UNIX sockets are refused unless `unix_sockets`
    /// names them: whenever the policy confines writes at all.
    pub fn refuses_abstract_sockets(&self) -> bool {
        !self.writes_anywhere()
    }

    /// Whether `unix_sockets` names an abstract socket: one created outside
    /// the guarded tree, which Landlock's abstract-socket scope would refuse.
    pub fn names_abstract_sockets(&self) -> bool {
        !self.abstract_sockets.is_empty()
    }

    /// No root, no `readonly`, no write allow-list: a write to a path no
    /// rule names is allowed (step 8).
    fn writes_anywhere(&self) -> bool {
        self.root.is_none() && !self.settings.readonly && self.write.allow.is_empty()
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

    /// Whether a plain read-only open of `path` may be answered with a
    /// descriptor that only names it (Linux `O_PATH`: `fstat`, `fchdir`, a
    /// dirfd for `*at` calls, each checked on its own; no `read`, no
    /// `getdents`) instead of being refused: `path` is a directory above
    /// the root or above the private `TMPDIR` (a strict ancestor, so a
    /// directory), and the read is refused only for lying outside them
    /// (`root` or `not_allowed`, never a rule someone wrote: `deny`,
    /// `deny_always`, `secrets`). Never with `hide_outside`, which hides
    /// what lies outside, ancestors too. Programs open the directories
    /// above their start only to compare identities (walkdir's
    /// `follow_links`, same-file handles).
    pub fn names_only(&self, path: &[u8]) -> bool {
        if self.settings.hide_outside || path.first() != Some(&b'/') {
            return false;
        }
        let above = |dir: &Option<Box<[u8]>>| {
            dir.as_deref()
                .is_some_and(|d| d != path && is_within(d, path))
        };
        if !above(&self.root) && !above(&self.tmpdir) {
            return false;
        }
        let d = self.decide(Access::Read, path);
        !d.allowed && matches!(d.rule, Rule::Root | Rule::NotAllowed)
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
