//! The policy model and the layering of its sources into [`Settings`].
//!
//! Sources, later wins: built-in defaults < config file < `FSGUARD_*`
//! variables < CLI flags. Scalars are replaced; rule lists are appended.
//! Every pattern is made absolute and canonical here, once, at load.
//!
//! Each source has its module: [`config`] (TOML), [`env`](mod@env) (`FSGUARD_*`),
//! [`flags`] (the CLI's setters), [`frozen`] (the JSON handed to
//! children); [`builder`] layers them and [`paths`] makes patterns absolute.

mod builder;
mod config;
mod env;
mod flags;
mod frozen;
mod paths;
#[cfg(test)]
mod tests;
mod walk;
#[cfg(test)]
mod walk_tests;

use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use builder::Builder;
pub use env::ENV_VARS;
pub use paths::canonical_prefix;

/// Enforce the policy or only report what it would block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Denied calls fail.
    #[default]
    Enforce,
    /// Nothing fails; every would-be denial is logged as `audit`.
    Audit,
}

/// The errno a denied call fails with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ErrnoChoice {
    /// `EACCES` (13), the default: "Permission denied".
    #[default]
    EACCES,
    /// `EPERM` (1): "Operation not permitted".
    EPERM,
}

impl ErrnoChoice {
    /// The numeric errno.
    pub fn code(self) -> i32 {
        match self {
            ErrnoChoice::EACCES => 13,
            ErrnoChoice::EPERM => 1,
        }
    }
}

/// What to do when a guarded process executes a program the library cannot
/// follow (statically linked, or set-id).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UnguardedExec {
    /// Run it and write one trace line.
    #[default]
    Warn,
    /// Refuse the exec.
    Deny,
    /// Run it silently.
    Allow,
}

/// Where trace lines go.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogTarget {
    /// The process's standard error, as it is at the time of the denial.
    #[default]
    Stderr,
    /// Nowhere.
    Off,
    /// Appended to this absolute path, one `write` per line.
    File(String),
}

/// Trace line format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// `[fsguard] blocked open write path=/x rule=root`
    #[default]
    Text,
    /// One JSON object per line.
    Json,
}

/// Trace settings.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogSettings {
    /// Where lines go.
    pub target: LogTarget,
    /// How they look.
    pub format: LogFormat,
    /// Set by `fsguard run` for a file target: the supervisor writes the
    /// file from the lines the library relays, and the guarded processes
    /// never hold a descriptor to it (they could truncate it through one).
    #[serde(default)]
    pub relayed: bool,
    /// Set by `fsguard run`: the supervisor the report channel leads to,
    /// for a process that lost its inherited end (see [`Supervisor`]).
    #[serde(default)]
    pub supervisor: Option<Supervisor>,
}

/// The supervising `fsguard run`, as the library needs to know it: a
/// process whose inherited report channel was closed or replaced (a
/// `close_range`, a shell's `exec 7<&0`) connects to `socket` again and
/// uses the connection only if the listener is `pid`; and a trace line on
/// stderr is written by the process itself only when its stderr is the
/// supervisor's own (`stderr`: device and inode), so it lands in order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Supervisor {
    /// The supervisor's process id.
    pub pid: u32,
    /// The path of its listening socket; empty where the system has none.
    pub socket: String,
    /// Device and inode of its stderr, if it has one.
    pub stderr: Option<[u64; 2]>,
}

/// The three rule lists of one access kind. Patterns are absolute.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lists {
    /// Re-allow inside a deny or outside the root.
    pub allow: Vec<String>,
    /// Deny, unless an allow matches.
    pub deny: Vec<String>,
    /// Deny, whatever else matches.
    pub deny_always: Vec<String>,
}

/// The effective policy, every source applied and every path absolute.
///
/// This is also the frozen form handed to child processes
/// (`FSGUARD_POLICY`, JSON), so a child's policy is its parent's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// Deny every write not allowed by a rule.
    pub readonly: bool,
    /// Confine reads and writes to this directory (absolute, canonical).
    pub root: Option<String>,
    /// Enforce or audit.
    pub mode: Mode,
    /// errno of a denied call.
    pub errno: ErrnoChoice,
    /// Read access to installed software when a root is set.
    pub system: bool,
    /// Deny credential files always.
    pub secrets: bool,
    /// Denied reads outside the root answer ENOENT; metadata reads are confined.
    pub hide_outside: bool,
    /// Exec of a program the library cannot follow.
    pub unguarded_exec: UnguardedExec,
    /// Read (and exec) rules.
    pub read: Lists,
    /// Write rules.
    pub write: Lists,
    /// Trace settings.
    pub log: LogSettings,
    /// The `system` locations, expanded (absolute, canonical).
    pub system_paths: Vec<String>,
    /// The `secrets` patterns, expanded.
    pub secret_paths: Vec<String>,
    /// No source set any policy: read-only by default.
    pub implicit: bool,
    /// The private temporary directory `fsguard run` gives the command:
    /// readable and writable, whatever the rest of the policy says (but
    /// `deny_always` and `secrets` still apply).
    #[serde(default)]
    pub tmpdir: Option<String>,
    /// The `ipc` preset: POSIX shared memory the guarded tree creates is
    /// allowed, in a namespace of its own (see [`Settings::ipc_tag`]).
    #[serde(default = "yes")]
    pub ipc: bool,
    /// The `proc` preset: `/proc/<pid>` facts every user may read anyway
    /// (`stat`, `status`, `cmdline`, …) are readable under a root.
    #[serde(default = "yes")]
    pub proc: bool,
    /// The `cache` preset: `fsguard run` points tools' caches
    /// (`XDG_CACHE_HOME`, `PIP_CACHE_DIR`, …) into its private `TMPDIR`.
    #[serde(default = "yes")]
    pub cache: bool,
    /// The tree's shared-memory namespace: objects the tree creates are
    /// named `/dev/shm/fsguard.<tag>.<name>`. Made once, by the process that
    /// builds the policy, and inherited with it.
    #[serde(default)]
    pub ipc_tag: Option<String>,
    /// `$HOME` at load, to write hints as `~/…`.
    #[serde(default)]
    pub home: Option<String>,
    /// AF_UNIX sockets a guarded process may connect or send to beyond
    /// what its write rules allow: path patterns (absolute, canonical) and
    /// abstract names (`@name`, `@prefix*`).
    #[serde(default)]
    pub unix_sockets: Vec<String>,
    /// `fail_on_block`: the status `fsguard run` exits with when anything
    /// was blocked (`--fail-on-block[=N]` wins over it). It only tightens,
    /// so a discovered `.fsguard.toml` may set it.
    #[serde(default)]
    pub fail_on_block: Option<u8>,
    /// Set by `fsguard run` to its own process: every process it starts
    /// descends from it and is guarded, so the guarded tree is its
    /// descendants (see [`crate::process`]). `None` under `LD_PRELOAD`
    /// alone, where the tree is the caller's own descendants.
    #[serde(default)]
    pub supervisor: Option<crate::process::ProcessId>,
    /// The built-in profiles applied, in order (`--profile`, a config's
    /// `profile = …`): named by `check`, `explain` and `run`'s summary.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profiles: Vec<String>,
    /// Set by `fsguard run` when it applies a Landlock ruleset: a call the
    /// library allowed that fails with `EACCES` or `EPERM` where the file
    /// permissions allow it was refused by the kernel, and gets a trace
    /// line (`rule=landlock`). It adds lines; it allows nothing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub landlock: bool,
}

/// `fail_on_block = true`'s status, as `--fail-on-block` alone.
pub const FAIL_ON_BLOCK_STATUS: u8 = 3;

fn yes() -> bool {
    true
}

impl UnguardedExec {
    /// Parses `warn`, `deny` or `allow`.
    pub fn parse(s: &str) -> Option<UnguardedExec> {
        match s {
            "warn" => Some(UnguardedExec::Warn),
            "deny" => Some(UnguardedExec::Deny),
            "allow" => Some(UnguardedExec::Allow),
            _ => None,
        }
    }
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            readonly: false,
            root: None,
            mode: Mode::Enforce,
            errno: ErrnoChoice::EACCES,
            system: true,
            secrets: true,
            hide_outside: false,
            unguarded_exec: UnguardedExec::Warn,
            read: Lists::default(),
            write: Lists::default(),
            log: LogSettings::default(),
            system_paths: Vec::new(),
            secret_paths: Vec::new(),
            implicit: false,
            tmpdir: None,
            ipc: true,
            proc: true,
            cache: true,
            ipc_tag: None,
            home: None,
            unix_sockets: Vec::new(),
            fail_on_block: None,
            supervisor: None,
            profiles: Vec::new(),
            landlock: false,
        }
    }
}

/// A policy error: names the source, the key and, for files, the line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error(String);

impl Error {
    pub(crate) fn new(msg: impl Into<String>) -> Error {
        Error(msg.into())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

/// What the process looks like at load: used to expand relative paths, `~`
/// and the `system` preset.
#[derive(Clone, Debug, Default)]
pub struct Context {
    /// Working directory at load.
    pub cwd: PathBuf,
    /// `$HOME`.
    pub home: Option<PathBuf>,
    /// The main executable.
    pub exe: Option<PathBuf>,
    /// `$PATH`.
    pub path_var: Option<OsString>,
}

impl Context {
    /// The current process's context, from `std::env`.
    pub fn from_process() -> Context {
        Context {
            cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
            home: std::env::var_os("HOME").map(PathBuf::from),
            exe: std::env::current_exe().ok(),
            path_var: std::env::var_os("PATH"),
        }
    }
}

/// Which of the three lists a rule goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListKind {
    /// `allow`
    Allow,
    /// `deny`
    Deny,
    /// `deny_always`
    DenyAlways,
}

impl ListKind {
    /// The config key of the list.
    pub fn key(self) -> &'static str {
        match self {
            ListKind::Allow => "allow",
            ListKind::Deny => "deny",
            ListKind::DenyAlways => "deny_always",
        }
    }
}
