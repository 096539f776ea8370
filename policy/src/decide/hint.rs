//! Hints: the allow rule that would let a refused access happen.

use std::fmt;

use super::{Policy, Rule};
use crate::names::Reuse;
use crate::suggest::CACHES;
use crate::{is_within, Access};

impl Policy {
    /// What would allow a refused access: `--allow-write ~/.cache/tool`.
    /// Only for the policy's boundary (`root`, `not_allowed`, `readonly`):
    /// `None` for a refusal by a rule the policy's author wrote or fixed
    /// (`deny`, `deny_always`, `secrets`, `log`: see [`Rule::authors`]), an
    /// unresolvable path, or a path a flag cannot name exactly (glob
    /// characters, bytes that are not UTF-8). A hint never invites anyone
    /// (a model reading stderr) to lift a refusal made on purpose.
    pub fn hint<'a>(&'a self, access: Access, path: &'a [u8], rule: Rule<'_>) -> Option<Hint<'a>> {
        if !matches!(rule, Rule::Root | Rule::NotAllowed | Rule::Readonly) {
            return None;
        }
        let path = flag_safe(path).filter(|p| p.starts_with('/'))?;
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
            // A package manager's cache (`~/.npm/**`): its entries are
            // named by hashes that change every run.
            if let Some(dir) = CACHES
                .iter()
                .map(|(dir, _)| *dir)
                .find(|d| is_within(rel.as_bytes(), d.as_bytes()))
            {
                return Some(Hint {
                    access,
                    tilde,
                    target: &rel[..dir.len()],
                    glob: Glob::Tree,
                    socket: false,
                });
            }
        }
        // A random name (a temporary file's, a hash), or a cache layout
        // elsewhere: the glob that names the next run's too, once.
        let glob = if target.len() == rel.len() {
            let skip = path.len() - rel.len();
            let start = if tilde { skip } else { 1 };
            match crate::names::reuse(path, start) {
                Some(Reuse::Star { at, from, to }) => {
                    target = &rel[..at - skip];
                    Glob::Star(&rel[from - skip..to - skip])
                }
                Some(Reuse::Tree { to }) => {
                    target = &rel[..to - skip];
                    Glob::Tree
                }
                None => Glob::Exact,
            }
        } else {
            Glob::Exact
        };
        Some(Hint {
            access,
            tilde,
            target,
            glob,
            socket: false,
        })
    }

    /// What would allow a refused connect or send to an AF_UNIX socket
    /// (`name`: its path, or `@name`): `--allow-unix-socket NAME`. As
    /// [`Policy::hint`], none where no allow rule helps.
    pub fn socket_hint<'a>(&'a self, name: &'a [u8], rule: Rule<'_>) -> Option<Hint<'a>> {
        if !matches!(
            rule,
            Rule::Root | Rule::NotAllowed | Rule::Readonly | Rule::Deny(..) | Rule::AbstractSocket
        ) {
            return None;
        }
        let name = flag_safe(name).filter(|n| n.starts_with(['/', '@']))?;
        let home = self.settings.home.as_deref().filter(|h| *h != "/");
        let (tilde, target) = match home.and_then(|h| name.strip_prefix(h)) {
            Some(r) if r.starts_with('/') => (true, &r[1..]),
            _ => (false, name),
        };
        Some(Hint {
            access: Access::Write,
            tilde,
            target,
            glob: Glob::Exact,
            socket: true,
        })
    }
}

/// `path` as a flag can name it: UTF-8, no glob or quote characters, no
/// control characters.
fn flag_safe(path: &[u8]) -> Option<&str> {
    let path = std::str::from_utf8(path).ok()?;
    (!path
        .bytes()
        .any(|b| b"*?[]{}\\'\"".contains(&b) || b < 0x20 || b == 0x7f))
    .then_some(path)
}

/// A suggested rule that allows a refused access; see [`Policy::hint`].
/// Displays as the flag (`--allow-write ~/.cache/pip`);
/// [`Hint::toml`] gives the config line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hint<'a> {
    access: Access,
    tilde: bool,
    /// The path, or the fixed text a glob starts with.
    target: &'a str,
    /// What follows `target` (see [`crate::names`]).
    glob: Glob<'a>,
    /// An AF_UNIX socket: `--allow-unix-socket`, `unix_sockets = […]`.
    socket: bool,
}

/// How a hint's pattern ends after its fixed text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Glob<'a> {
    /// Nothing: the path itself, or a tool's directory.
    Exact,
    /// `*` and the rest of the component: a random part.
    Star(&'a str),
    /// `/**`: a cache's directory.
    Tree,
}

impl Glob<'_> {
    fn write(&self, f: &mut impl fmt::Write) -> fmt::Result {
        match self {
            Glob::Exact => Ok(()),
            Glob::Star(rest) => write!(f, "*{rest}"),
            Glob::Tree => f.write_str("/**"),
        }
    }
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
        let mut p = if self.tilde {
            format!("~/{}", self.target)
        } else {
            self.target.to_string()
        };
        let _ = self.glob.write(&mut p);
        p
    }

    /// Whether the pattern is a glob (names more than the refused path).
    pub fn is_glob(&self) -> bool {
        self.glob != Glob::Exact
    }

    /// The config line: `[write] allow = ["~/.cache/pip"]`.
    pub fn toml(&self) -> String {
        if self.socket {
            return format!("unix_sockets = [\"{}\"]", self.pattern());
        }
        format!("[{}] allow = [\"{}\"]", self.list(), self.pattern())
    }
}

impl fmt::Display for Hint<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A glob is quoted, so no shell expands it (fsguard expands `~/`).
        let quote = self.target.contains(' ') || self.is_glob();
        if self.socket {
            f.write_str("--allow-unix-socket ")?;
        } else {
            write!(f, "--allow-{} ", self.list())?;
        }
        if quote {
            f.write_str("'")?;
        }
        if self.tilde {
            f.write_str("~/")?;
        }
        f.write_str(self.target)?;
        self.glob.write(f)?;
        if quote {
            f.write_str("'")?;
        }
        Ok(())
    }
}
