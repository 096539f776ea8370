//! Hints: the allow rule that would let a refused access happen.

use std::fmt;

use super::{Policy, Rule};
use crate::Access;

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
        }
        Some(Hint {
            access,
            tilde,
            target,
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
    target: &'a str,
    /// An AF_UNIX socket: `--allow-unix-socket`, `unix_sockets = […]`.
    socket: bool,
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
        if self.socket {
            return format!("unix_sockets = [\"{}\"]", self.pattern());
        }
        format!("[{}] allow = [\"{}\"]", self.list(), self.pattern())
    }
}

impl fmt::Display for Hint<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let quote = self.target.contains(' ');
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
        if quote {
            f.write_str("'")?;
        }
        Ok(())
    }
}
