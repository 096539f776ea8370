//! The fsguard policy: what a guarded process may read and write.
//!
//! This crate is pure. It turns the policy sources (built-in defaults, a TOML
//! config, `FSGUARD_*` variables, CLI flags) into [`Settings`], compiles those
//! into a [`Policy`], and answers one question on the hot path:
//! [`Policy::decide`] — may this access to this resolved path happen, and which
//! rule says so. Path resolution (symlinks, `..`, dirfds) is the caller's job;
//! every path handed to `decide` is absolute and canonical, or an anonymous
//! object name such as `pipe:[1234]`.
//!
//! The library (`libfsguard.so`) and the `fsguard` CLI share this crate, so
//! `fsguard explain` answers from the same code the library enforces with.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod channel;
mod decide;
pub mod macho;
pub mod names;
mod pattern;
mod presets;
pub mod process;
pub mod profiles;
#[cfg(test)]
mod profiles_tests;
pub mod program;
pub mod registry;
pub mod seatbelt;
mod settings;
pub mod sockets;
pub mod suggest;
pub mod wire;

pub use decide::{Decision, Hint, Policy, Rule};
pub use pattern::PatternSet;
pub use presets::{
    CACHE_ENV, DEVICES, PROC_PUBLIC, SECRETS, SYSTEM, SYSTEM_CREDENTIALS, TOOL_CONFIGS,
};
pub use settings::{
    canonical_prefix, Builder, Context, ErrnoChoice, Error, ListKind, Lists, LogFormat,
    LogSettings, LogTarget, Mode, Settings, Supervisor, UnguardedExec, ENV_VARS,
    FAIL_ON_BLOCK_STATUS,
};

/// What a call does to the object a path names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// Open for reading, list a directory.
    Read,
    /// Create, modify, delete, rename, link, change metadata.
    Write,
    /// Execute or load as code; checked against the read rules.
    Exec,
}

impl Access {
    /// The word used in trace lines and by `fsguard explain`.
    pub fn as_str(self) -> &'static str {
        match self {
            Access::Read => "read",
            Access::Write => "write",
            Access::Exec => "exec",
        }
    }

    /// Parses `read`, `write` or `exec`.
    pub fn parse(s: &str) -> Option<Access> {
        match s {
            "read" => Some(Access::Read),
            "write" => Some(Access::Write),
            "exec" => Some(Access::Exec),
            _ => None,
        }
    }
}

/// True when `path` is `dir` or lies beneath it, on component boundaries
/// (`/ws` contains `/ws/a` but never `/ws2`).
pub fn is_within(path: &[u8], dir: &[u8]) -> bool {
    if dir == b"/" {
        return path.first() == Some(&b'/');
    }
    // The boundary byte first: it rejects most candidates without a
    // comparison of the whole prefix.
    path.len() >= dir.len()
        && (path.len() == dir.len() || path[dir.len()] == b'/')
        && &path[..dir.len()] == dir
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn within_is_by_components() {
        assert!(is_within(b"/ws", b"/ws"));
        assert!(is_within(b"/ws/a/b", b"/ws"));
        assert!(!is_within(b"/ws2", b"/ws"));
        assert!(!is_within(b"/ws2/a", b"/ws"));
        assert!(!is_within(b"/w", b"/ws"));
        assert!(is_within(b"/anything", b"/"));
        assert!(!is_within(b"pipe:[1]", b"/"));
    }
}
