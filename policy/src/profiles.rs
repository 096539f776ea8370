//! Built-in profiles: named policies shipped in the crate
//! (`fsguard run --profile agent`, `profile = "agent"` in a config).
//!
//! A profile is TOML text in the config file's schema, applied as the first
//! layer: the keys of the config that names it, then the environment and
//! the command line's flags, go on top (scalars replaced, rule lists
//! appended: a profile's deny rules stay). Its relative `root` is against
//! the directory it is used from (the working directory for `--profile`,
//! the config file's directory for `profile = …`).

/// One built-in profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Profile {
    /// Its name (`--profile NAME`).
    pub name: &'static str,
    /// One line: what it is for.
    pub about: &'static str,
    /// The policy, as TOML a user can copy into a config file.
    pub text: &'static str,
}

/// Every built-in profile, by name.
pub const PROFILES: &[Profile] = &[
    Profile {
        name: "agent",
        about: "an agent tool confined to its workspace (the root); secrets, .env and keys unreadable",
        text: include_str!("../profiles/agent.toml"),
    },
    Profile {
        name: "agent-dev",
        about: "agent, plus a git repository and a Python venv in the workspace (git, pip need no flag)",
        text: include_str!("../profiles/agent-dev.toml"),
    },
    Profile {
        name: "analysis",
        about: "reads the project directory, writes only results/",
        text: include_str!("../profiles/analysis.toml"),
    },
    Profile {
        name: "build",
        about: "a build that writes only target/, /tmp and cargo's caches; reads are not restricted",
        text: include_str!("../profiles/build.toml"),
    },
];

/// The profile called `name`.
pub fn profile(name: &str) -> Option<&'static Profile> {
    PROFILES.iter().find(|p| p.name == name)
}

/// The names, for an error or a completion: `agent, agent-dev, …`.
pub fn names() -> Vec<&'static str> {
    PROFILES.iter().map(|p| p.name).collect()
}

/// The error for a name no profile has: it lists those there are.
pub fn unknown(name: &str) -> String {
    format!(
        "unknown profile {name:?} (the profiles: {})",
        names().join(", ")
    )
}
