//! The rules that decide, as trace lines name them.

use std::fmt;

use crate::Access;

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
    /// A connect or send to an AF_UNIX socket the `unix_sockets`
    /// allow-list names; shown as `unix_sockets:"…"`.
    UnixSocket(&'a str),
    /// A connect, send or bind to an abstract AF_UNIX socket (`@name`)
    /// that `unix_sockets` does not name, under a policy that confines
    /// writes.
    AbstractSocket,
    /// The path could not be resolved; the library fails closed.
    Unresolved,
    /// An exec the library cannot follow (`static` or `setid` program),
    /// refused by `unguarded_exec = "deny"`.
    Unguarded(&'a str),
    /// An exec whose environment sets a variable that makes the dynamic
    /// loader run code beside the library or write files unchecked
    /// ([`crate::program::LOADER_ENV`]); refused in audit mode too: what
    /// such code does would not even be recorded.
    LoaderEnv(&'a str),
    /// The library failed inside its own check (a bug: a panic it caught);
    /// the call is refused, in audit mode too.
    InternalError,
    /// A new namespace, or another process's (`unshare`, `clone`, `clone3`
    /// with a `CLONE_NEW*` flag, `setns`): inside one, a mount can put any
    /// directory under any path the policy allows. No policy allows it.
    Namespace,
    /// A change to the mount table or the root directory (`mount`,
    /// `umount`, `pivot_root`, `chroot`, the new mount API). No policy
    /// allows it.
    Mount,
    /// A call that administers the whole system (`acct`, `swapon`,
    /// `swapoff`, `quotactl`). No policy allows it.
    Sysadmin,
    /// A call on another process (`ptrace`, `process_vm_readv`,
    /// `process_vm_writev`, `pidfd_getfd`, `kcmp`) whose target is outside
    /// the guarded tree. No policy allows it.
    Process,
    /// Not the policy's: a call the library allowed that the kernel's
    /// Landlock ruleset (`fsguard run`'s, coarser than the policy)
    /// refused, seen after the call failed. Traced and counted, in audit
    /// mode too: the call really failed.
    Landlock,
}

impl Rule<'_> {
    /// A refusal by a rule the policy's author wrote on purpose, or that
    /// the policy fixes: a `deny` or `deny_always` pattern, a `secrets`
    /// path (moved or not), the trace log. No hint offers to lift it; the
    /// author decides on it ([`crate::Policy::hint`]).
    pub fn authors(&self) -> bool {
        matches!(
            self,
            Rule::Deny(..)
                | Rule::DenyAlways(..)
                | Rule::Secret(_)
                | Rule::DenyAlwaysMove(_)
                | Rule::SecretMove(_)
                | Rule::Log
        )
    }
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
            Rule::UnixSocket(p) => write!(f, "unix_sockets:{}", Quoted(p)),
            Rule::AbstractSocket => f.write_str("abstract_socket"),
            Rule::Unresolved => f.write_str("unresolved"),
            Rule::Unguarded(kind) => write!(f, "unguarded_exec:{kind}"),
            Rule::LoaderEnv(var) => write!(f, "loader_env:{var}"),
            Rule::InternalError => f.write_str("internal_error"),
            Rule::Namespace => f.write_str("namespace"),
            Rule::Mount => f.write_str("mount"),
            Rule::Sysadmin => f.write_str("sysadmin"),
            Rule::Process => f.write_str("process"),
            Rule::Landlock => f.write_str("landlock"),
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
