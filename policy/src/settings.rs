//! Policy sources and their layering into [`Settings`].
//!
//! Sources, later wins: built-in defaults < config file < `FSGUARD_*`
//! variables < CLI flags. Scalars are replaced; rule lists are appended.
//! Every pattern is made absolute and canonical here, once, at load.

use std::ffi::OsString;
use std::fmt;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::pattern::has_glob_meta;
use crate::presets;
use crate::Access;

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
}

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
        }
    }
}

impl Settings {
    /// The frozen form passed to children.
    pub fn to_frozen(&self) -> String {
        serde_json::to_string(self).expect("settings serialize")
    }

    /// Reads the frozen form.
    pub fn from_frozen(s: &str) -> Result<Settings, Error> {
        serde_json::from_str(s).map_err(|e| Error::new(format!("FSGUARD_POLICY: {e}")))
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

/// Every `FSGUARD_*` variable the project reads; any other is an error.
pub const ENV_VARS: &[&str] = &[
    "FSGUARD_CONFIG",
    "FSGUARD_READONLY",
    "FSGUARD_ROOT",
    "FSGUARD_MODE",
    "FSGUARD_LOG",
    "FSGUARD_LOG_FORMAT",
    "FSGUARD_ERRNO",
    // Set by fsguard itself:
    "FSGUARD_POLICY",
    "FSGUARD_POLICY_FD",
    "FSGUARD_LIB",
    "FSGUARD_HANDSHAKE_FD",
    "FSGUARD_REPORT_FD",
];

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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    readonly: Option<bool>,
    root: Option<toml::Spanned<String>>,
    mode: Option<Mode>,
    errno: Option<ErrnoChoice>,
    system: Option<bool>,
    secrets: Option<bool>,
    hide_outside: Option<bool>,
    unguarded_exec: Option<UnguardedExec>,
    ipc: Option<bool>,
    proc: Option<bool>,
    cache: Option<bool>,
    read: Option<ListsFile>,
    write: Option<ListsFile>,
    log: Option<LogFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListsFile {
    #[serde(default)]
    allow: Vec<toml::Spanned<String>>,
    #[serde(default)]
    deny: Vec<toml::Spanned<String>>,
    #[serde(default)]
    deny_always: Vec<toml::Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LogFile {
    target: Option<String>,
    format: Option<LogFormat>,
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

/// A TOML error on one line: `FILE:LINE:COL: KEY: message`.
fn toml_error(name: &str, text: &str, e: &toml::de::Error) -> Error {
    let msg = e.message().trim().replace('\n', " ");
    let Some(span) = e.span() else {
        return Error::new(format!("config {name}: {msg}"));
    };
    let pos = span.start.min(text.len());
    let line = text[..pos].matches('\n').count() + 1;
    let line_start = text[..pos].rfind('\n').map_or(0, |i| i + 1);
    let col = text[line_start..pos].chars().count() + 1;
    match key_at(text, pos) {
        Some(key) => Error::new(format!("{name}:{line}:{col}: {key}: {msg}")),
        None => Error::new(format!("{name}:{line}:{col}: {msg}")),
    }
}

/// The dotted key whose value (or header) covers byte `pos` of a TOML text:
/// the nearest `key =` at or above it, inside the nearest `[table]`.
fn key_at(text: &str, pos: usize) -> Option<String> {
    let end = text[pos..].find('\n').map_or(text.len(), |i| pos + i);
    let mut key: Option<&str> = None;
    for l in text[..end].lines().rev() {
        let l = l.trim();
        if let Some(h) = l.strip_prefix('[') {
            let table = h.trim_start_matches('[').split(']').next()?.trim();
            return Some(key.map_or(table.to_string(), |k| format!("{table}.{k}")));
        }
        if key.is_none() {
            if let Some((k, _)) = l.split_once('=') {
                let k = k.trim();
                let ident = |c: char| c.is_ascii_alphanumeric() || "_-.".contains(c);
                if !k.is_empty() && k.chars().all(ident) {
                    key = Some(k);
                }
            }
        }
    }
    key.map(str::to_string)
}

/// Layers the policy sources into [`Settings`].
#[derive(Debug)]
pub struct Builder {
    ctx: Context,
    s: Settings,
    any: bool,
    pending: Vec<Pending>,
}

/// A rule pattern as given; made absolute in [`Builder::finish`], once the
/// root is known (a config's relative patterns are anchored at the root).
#[derive(Debug)]
struct Pending {
    access: Access,
    kind: ListKind,
    text: String,
    /// The config file's directory, or the working directory for flags.
    base: PathBuf,
    /// From a config file: relative patterns follow the root when there is one.
    from_config: bool,
    /// `FILE:LINE: KEY` or the flag, for error messages.
    origin: String,
}

impl Builder {
    /// Starts from the built-in defaults.
    pub fn new(ctx: Context) -> Builder {
        Builder {
            ctx,
            s: Settings::default(),
            any: false,
            pending: Vec::new(),
        }
    }

    /// Applies a TOML config file; relative paths in it are against its directory.
    pub fn config_file(&mut self, path: &Path) -> Result<&mut Builder, Error> {
        let path = absolute(&self.ctx.cwd, path);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| Error::new(format!("config {}: {e}", path.display())))?;
        self.config_str(&text, &path)
    }

    /// Applies TOML text as if read from `origin` (used for messages and as
    /// the base of relative paths).
    pub fn config_str(&mut self, text: &str, origin: &Path) -> Result<&mut Builder, Error> {
        let name = origin.display().to_string();
        let cfg: ConfigFile = toml::from_str(text).map_err(|e| toml_error(&name, text, &e))?;
        let base = origin.parent().unwrap_or(Path::new("/")).to_path_buf();
        // Line numbers by binary search: a config with many rules (`fsguard
        // suggest --exact`) must not cost a scan of the text per rule.
        let newlines: Vec<usize> = text
            .bytes()
            .enumerate()
            .filter(|(_, b)| *b == b'\n')
            .map(|(i, _)| i)
            .collect();
        let at = |span: std::ops::Range<usize>| {
            let line = newlines.partition_point(|&i| i < span.start) + 1;
            format!("{name}:{line}")
        };
        if let Some(v) = cfg.readonly {
            self.any = true;
            self.s.readonly = v;
        }
        if let Some(root) = cfg.root {
            let where_ = at(root.span());
            let dir = expand_home(root.get_ref(), self.ctx.home.as_deref()).ok_or_else(|| {
                Error::new(format!(
                    "{where_}: root: {}: $HOME is not set",
                    root.get_ref()
                ))
            })?;
            self.any = true;
            self.s.root = Some(
                canonical_dir(&base.join(dir))
                    .map_err(|e| Error::new(format!("{where_}: root: {e}")))?,
            );
        }
        if let Some(v) = cfg.mode {
            self.s.mode = v;
        }
        if let Some(v) = cfg.errno {
            self.s.errno = v;
        }
        if let Some(v) = cfg.system {
            self.s.system = v;
        }
        if let Some(v) = cfg.secrets {
            self.s.secrets = v;
        }
        if let Some(v) = cfg.hide_outside {
            self.s.hide_outside = v;
        }
        if let Some(v) = cfg.unguarded_exec {
            self.s.unguarded_exec = v;
        }
        if let Some(v) = cfg.ipc {
            self.s.ipc = v;
        }
        if let Some(v) = cfg.proc {
            self.s.proc = v;
        }
        if let Some(v) = cfg.cache {
            self.s.cache = v;
        }
        for (access, lists) in [(Access::Read, cfg.read), (Access::Write, cfg.write)] {
            let Some(lists) = lists else { continue };
            for (kind, pats) in [
                (ListKind::Allow, lists.allow),
                (ListKind::Deny, lists.deny),
                (ListKind::DenyAlways, lists.deny_always),
            ] {
                let key = format!("{}.{}", access.as_str(), kind.key());
                for p in pats {
                    let where_ = format!("{}: {key}", at(p.span()));
                    self.add_pattern_at(access, kind, p.get_ref(), &base, true, &where_)
                        .map_err(|e| Error::new(format!("{where_}: {e}")))?;
                }
            }
        }
        if let Some(log) = cfg.log {
            if let Some(t) = log.target {
                self.s.log.target = parse_log_target(&t, &base);
            }
            if let Some(f) = log.format {
                self.s.log.format = f;
            }
        }
        Ok(self)
    }

    /// Applies `FSGUARD_*` variables. `config` (a CLI `--config`) replaces
    /// `FSGUARD_CONFIG`. Unknown `FSGUARD_*` variables are errors.
    pub fn env<'a, I>(&mut self, vars: I, config: Option<&Path>) -> Result<&mut Builder, Error>
    where
        I: IntoIterator<Item = (&'a str, &'a str)>,
    {
        let vars: Vec<(&str, &str)> = vars
            .into_iter()
            .filter(|(k, _)| k.starts_with("FSGUARD_"))
            .collect();
        for (k, _) in &vars {
            if !ENV_VARS.contains(k) {
                return Err(Error::new(format!(
                    "unknown variable {k} (known: {})",
                    ENV_VARS.join(", ")
                )));
            }
        }
        let get = |name: &str| vars.iter().rev().find(|(k, _)| *k == name).map(|(_, v)| *v);
        match (config, get("FSGUARD_CONFIG")) {
            (Some(c), _) => {
                self.config_file(c)?;
            }
            (None, Some(c)) if !c.is_empty() => {
                self.config_file(Path::new(c))?;
            }
            _ => {}
        }
        if let Some(v) = get("FSGUARD_READONLY") {
            self.readonly(parse_bool("FSGUARD_READONLY", v)?);
        }
        if let Some(v) = get("FSGUARD_ROOT") {
            if v.is_empty() {
                return Err(Error::new("FSGUARD_ROOT is empty"));
            }
            self.root(v)
                .map_err(|e| Error::new(format!("FSGUARD_ROOT: {e}")))?;
        }
        if let Some(v) = get("FSGUARD_MODE") {
            self.mode(match v {
                "enforce" => Mode::Enforce,
                "audit" => Mode::Audit,
                _ => return Err(bad_value("FSGUARD_MODE", v, "enforce, audit")),
            });
        }
        if let Some(v) = get("FSGUARD_LOG") {
            self.log_target(v)?;
        }
        if let Some(v) = get("FSGUARD_LOG_FORMAT") {
            self.log_format(match v {
                "text" => LogFormat::Text,
                "json" => LogFormat::Json,
                _ => return Err(bad_value("FSGUARD_LOG_FORMAT", v, "text, json")),
            });
        }
        if let Some(v) = get("FSGUARD_ERRNO") {
            self.s.errno = match v {
                "EACCES" => ErrnoChoice::EACCES,
                "EPERM" => ErrnoChoice::EPERM,
                _ => return Err(bad_value("FSGUARD_ERRNO", v, "EACCES, EPERM")),
            };
        }
        Ok(self)
    }

    /// Sets read-only.
    pub fn readonly(&mut self, on: bool) -> &mut Builder {
        self.any = true;
        self.s.readonly = on;
        self
    }

    /// Sets the root; relative to the working directory. It must exist.
    pub fn root(&mut self, dir: &str) -> Result<&mut Builder, Error> {
        self.any = true;
        let p = expand_home(dir, self.ctx.home.as_deref())
            .map(|p| absolute(&self.ctx.cwd, &p))
            .ok_or_else(|| Error::new(format!("{dir}: $HOME is not set")))?;
        self.s.root = Some(canonical_dir(&p)?);
        Ok(self)
    }

    /// Turns the `secrets` preset on or off.
    pub fn secrets(&mut self, on: bool) -> &mut Builder {
        self.s.secrets = on;
        self
    }

    /// Sets enforce or audit.
    pub fn mode(&mut self, mode: Mode) -> &mut Builder {
        self.s.mode = mode;
        self
    }

    /// Sets what happens on exec of a program the library cannot follow.
    pub fn unguarded_exec(&mut self, v: UnguardedExec) -> &mut Builder {
        self.s.unguarded_exec = v;
        self
    }

    /// Sets the errno of denied calls.
    pub fn errno(&mut self, e: ErrnoChoice) -> &mut Builder {
        self.s.errno = e;
        self
    }

    /// Sets the trace target: `stderr`, `off` or a file path.
    pub fn log_target(&mut self, v: &str) -> Result<&mut Builder, Error> {
        if v.is_empty() {
            return Err(Error::new(
                "FSGUARD_LOG is empty (use stderr, off or a path)",
            ));
        }
        let cwd = self.ctx.cwd.clone();
        self.s.log.target = parse_log_target(v, &cwd);
        Ok(self)
    }

    /// Sets the trace format.
    pub fn log_format(&mut self, f: LogFormat) -> &mut Builder {
        self.s.log.format = f;
        self
    }

    /// Adds a rule pattern; relative patterns are against the working directory.
    pub fn add_pattern(
        &mut self,
        access: Access,
        kind: ListKind,
        pattern: &str,
    ) -> Result<&mut Builder, Error> {
        let cwd = self.ctx.cwd.clone();
        self.add_pattern_at(access, kind, pattern, &cwd, false, pattern)?;
        Ok(self)
    }

    fn add_pattern_at(
        &mut self,
        access: Access,
        kind: ListKind,
        pattern: &str,
        base: &Path,
        from_config: bool,
        origin: &str,
    ) -> Result<(), Error> {
        self.any = true;
        // Checked now, against its own base, so errors name the line.
        let abs = expand_pattern(pattern, base, self.ctx.home.as_deref())?;
        crate::PatternSet::new([abs.as_str()]).map_err(Error::new)?;
        self.pending.push(Pending {
            access,
            kind,
            text: pattern.to_string(),
            base: base.to_path_buf(),
            from_config,
            origin: origin.to_string(),
        });
        Ok(())
    }

    /// Expands presets and returns the effective settings.
    pub fn finish(self) -> Result<Settings, Error> {
        let Builder {
            ctx,
            mut s,
            any,
            pending,
        } = self;
        if !any {
            s.implicit = true;
            s.readonly = true;
        }
        for p in pending {
            // A config's relative patterns are anchored at the root when the
            // policy has one (from any source): one policy, many workspaces.
            let relative = !p.text.starts_with('/') && !p.text.starts_with('~');
            let base = match (&s.root, p.from_config && relative) {
                (Some(r), true) => PathBuf::from(r),
                _ => p.base,
            };
            let abs = expand_pattern(&p.text, &base, ctx.home.as_deref())
                .map_err(|e| Error::new(format!("{}: {e}", p.origin)))?;
            crate::PatternSet::new([abs.as_str()])
                .map_err(|e| Error::new(format!("{}: {e}", p.origin)))?;
            let lists = match p.access {
                Access::Write => &mut s.write,
                Access::Read | Access::Exec => &mut s.read,
            };
            match p.kind {
                ListKind::Allow => lists.allow.push(abs),
                ListKind::Deny => lists.deny.push(abs),
                ListKind::DenyAlways => lists.deny_always.push(abs),
            }
        }
        // The log is protected by its resolved name, the name the library
        // resolves a program's calls to. A log under /proc, /dev or /sys is
        // not protected and keeps its name: /proc/self means each process.
        if let LogTarget::File(f) = &s.log.target {
            let kernel = ["/proc/", "/dev/", "/sys/"]
                .iter()
                .any(|d| f.starts_with(d));
            if !kernel {
                s.log.target =
                    LogTarget::File(canonical_prefix(Path::new(f)).display().to_string());
            }
        }
        s.system_paths = system_paths(&ctx, s.root.as_deref());
        s.home = ctx
            .home
            .as_ref()
            .map(|h| canonical_prefix(h).display().to_string());
        s.ipc_tag = Some(ipc_tag());
        s.secret_paths = match &ctx.home {
            Some(home) => presets::SECRETS
                .iter()
                .filter_map(|p| expand_pattern(p, Path::new("/"), Some(home)).ok())
                .collect(),
            None => Vec::new(),
        };
        Ok(s)
    }
}

/// A name no other live process's tree uses: this process's id and the
/// clock, in hex.
fn ipc_tag() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos() ^ (d.as_secs() as u32));
    format!("{:x}{:08x}", std::process::id(), nanos)
}

fn bad_value(key: &str, v: &str, expected: &str) -> Error {
    Error::new(format!(
        "{key}: bad value {v:?} (expected one of: {expected})"
    ))
}

fn parse_bool(key: &str, v: &str) -> Result<bool, Error> {
    match v {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" | "" => Ok(false),
        _ => Err(bad_value(key, v, "1, 0, true, false")),
    }
}

fn parse_log_target(v: &str, base: &Path) -> LogTarget {
    match v {
        "stderr" => LogTarget::Stderr,
        "off" => LogTarget::Off,
        path => LogTarget::File(absolute(base, Path::new(path)).display().to_string()),
    }
}

fn absolute(base: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    }
}

fn expand_home(p: &str, home: Option<&Path>) -> Option<PathBuf> {
    if p == "~" {
        return home.map(Path::to_path_buf);
    }
    if let Some(rest) = p.strip_prefix("~/") {
        return home.map(|h| h.join(rest));
    }
    Some(PathBuf::from(p))
}

fn canonical_dir(p: &Path) -> Result<String, Error> {
    let c = std::fs::canonicalize(p).map_err(|e| Error::new(format!("{}: {e}", p.display())))?;
    if !c.is_dir() {
        return Err(Error::new(format!("{}: not a directory", p.display())));
    }
    Ok(c.display().to_string())
}

/// Lexical `.`/`..` folding; used only on the part of a path that does not
/// exist yet (the part that exists is canonicalized by the kernel).
fn lexical(p: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// Canonicalizes the deepest existing ancestor of `p` and appends the rest
/// (folded lexically): how `fsguard explain` names a path that may not exist.
pub fn canonical_prefix(p: &Path) -> PathBuf {
    let p = lexical(p);
    let mut existing = p.clone();
    let mut rest = Vec::new();
    loop {
        if let Ok(c) = std::fs::canonicalize(&existing) {
            let mut out = c;
            for r in rest.iter().rev() {
                out.push(r);
            }
            return out;
        }
        match (
            existing.file_name().map(|n| n.to_os_string()),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return p,
        }
    }
}

/// Makes a user pattern absolute and canonical: `~/` expanded, relative
/// patterns against `base`, a slash-less glob (`*.pem`) matching at any depth
/// below `base`, and the literal leading part resolved through symlinks.
fn expand_pattern(pattern: &str, base: &Path, home: Option<&Path>) -> Result<String, Error> {
    if pattern.is_empty() {
        return Err(Error::new("empty pattern"));
    }
    let expanded = expand_home(pattern, home)
        .ok_or_else(|| Error::new(format!("{pattern}: $HOME is not set")))?;
    let text = expanded
        .to_str()
        .ok_or_else(|| Error::new("pattern is not UTF-8"))?;
    let glob = has_glob_meta(text);
    let abs = if text.starts_with('/') {
        text.to_string()
    } else if glob && !text.contains('/') {
        format!("{}/**/{text}", base.display())
    } else {
        format!("{}/{text}", base.display())
    };
    if !glob {
        return Ok(canonical_prefix(Path::new(&abs)).display().to_string());
    }
    // Split at the first component with glob syntax; canonicalize before it.
    let comps: Vec<&str> = abs.split('/').collect();
    let first_glob = comps
        .iter()
        .position(|c| has_glob_meta(c))
        .unwrap_or(comps.len());
    let literal = comps[..first_glob].join("/");
    let tail = comps[first_glob..].join("/");
    let lit = canonical_prefix(Path::new(if literal.is_empty() { "/" } else { &literal }));
    let lit = lit.display().to_string();
    Ok(if lit == "/" {
        format!("/{tail}")
    } else {
        format!("{lit}/{tail}")
    })
}

/// `system` locations: the built-in list plus the install prefixes of the
/// main executable and of each `PATH` directory. A `bin`, `sbin` or `shims`
/// directory stands for its parent (`~/.pyenv/shims` → `~/.pyenv`); any
/// other directory only for itself. Never a location that would hand out
/// more than installed software: `/`, `$HOME` or a home directory, the root
/// or anything above it, a temporary directory.
fn system_paths(ctx: &Context, root: Option<&str>) -> Vec<String> {
    let canon = |p: &Path| std::fs::canonicalize(p).ok();
    let home = ctx.home.as_deref().and_then(canon);
    let root = root.map(PathBuf::from);
    let mut temps: Vec<PathBuf> = ["/tmp", "/var/tmp", "/dev/shm"]
        .iter()
        .filter_map(|t| canon(Path::new(t)))
        .collect();
    if let Some(t) = std::env::var_os("TMPDIR").and_then(|t| canon(Path::new(&t))) {
        temps.push(t);
    }
    let too_broad = |p: &Path| {
        let depth = p.components().count();
        p == Path::new("/")
            || home.as_deref().is_some_and(|h| h.starts_with(p))
            || root.as_deref().is_some_and(|r| r.starts_with(p))
            || temps.iter().any(|t| t.starts_with(p))
            || p == Path::new("/root")
            || (p.starts_with("/home") && depth <= 3)
    };
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut prefix_of = |dir: &Path| {
        let Some(d) = canon(dir) else { return };
        let up = match d.file_name().and_then(|n| n.to_str()) {
            Some("bin" | "sbin" | "shims") => d.parent().map(Path::to_path_buf),
            _ => None,
        };
        if let Some(c) = [up, Some(d)].into_iter().flatten().find(|c| !too_broad(c)) {
            dirs.push(c);
        }
    };
    if let Some(exe) = &ctx.exe {
        if let Some(dir) = exe.parent() {
            prefix_of(dir);
        }
    }
    if let Some(path) = &ctx.path_var {
        for dir in std::env::split_paths(path) {
            if dir.is_absolute() {
                prefix_of(&dir);
            }
        }
    }
    let mut out: Vec<String> = Vec::new();
    for p in presets::SYSTEM {
        if let Some(c) = canon(Path::new(p)) {
            out.push(c.display().to_string());
        }
    }
    out.extend(dirs.into_iter().map(|d| d.display().to_string()));
    if let Some(home) = &ctx.home {
        for p in presets::TOOL_CONFIGS {
            if let Ok(abs) = expand_pattern(p, Path::new("/"), Some(home)) {
                out.push(abs);
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|p| seen.insert(p.clone()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(cwd: &Path) -> Context {
        Context {
            cwd: cwd.to_path_buf(),
            home: Some(PathBuf::from("/nonexistent-home")),
            exe: None,
            path_var: None,
        }
    }

    fn tmpdir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("fsguard-policy-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::canonicalize(&d).unwrap()
    }

    #[test]
    fn no_policy_is_read_only() {
        let s = Builder::new(ctx(Path::new("/"))).finish().unwrap();
        assert!(s.implicit && s.readonly);
        let mut b = Builder::new(ctx(Path::new("/")));
        b.env([("FSGUARD_LOG", "off")], None).unwrap();
        assert!(
            b.finish().unwrap().implicit,
            "logging alone is not a policy"
        );
    }

    #[test]
    fn env_layering_and_errors() {
        let d = tmpdir("env");
        std::fs::create_dir(d.join("ws")).unwrap();
        let mut b = Builder::new(ctx(&d));
        b.env(
            [
                ("FSGUARD_ROOT", "ws"),
                ("FSGUARD_READONLY", "1"),
                ("FSGUARD_MODE", "audit"),
                ("FSGUARD_ERRNO", "EPERM"),
                ("PATH", "/usr/bin"),
            ],
            None,
        )
        .unwrap();
        let s = b.finish().unwrap();
        assert_eq!(s.root.as_deref(), Some(d.join("ws").to_str().unwrap()));
        assert!(s.readonly && !s.implicit);
        assert_eq!(s.mode, Mode::Audit);
        assert_eq!(s.errno.code(), 1);

        let mut b = Builder::new(ctx(&d));
        let e = b.env([("FSGUARD_RO0T", "ws")], None).unwrap_err();
        assert!(e.to_string().contains("FSGUARD_RO0T"), "{e}");
        let mut b = Builder::new(ctx(&d));
        let e = b.env([("FSGUARD_ROOT", "missing")], None).unwrap_err();
        assert!(e.to_string().contains("missing"), "{e}");
        let mut b = Builder::new(ctx(&d));
        assert!(b.env([("FSGUARD_READONLY", "maybe")], None).is_err());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn config_keys_patterns_and_errors() {
        let d = tmpdir("cfg");
        std::fs::create_dir(d.join("ws")).unwrap();
        let cfg = d.join("policy.toml");
        let text = "root = \"ws\"\nreadonly = true\n[read]\ndeny = [\"*.pem\", \"~/x\", \"/abs/**\"]\n[log]\ntarget = \"trace.log\"\nformat = \"json\"\n";
        let mut b = Builder::new(ctx(Path::new("/")));
        b.config_str(text, &cfg).unwrap();
        let s = b.finish().unwrap();
        let dd = d.display();
        assert_eq!(s.root, Some(format!("{dd}/ws")));
        assert_eq!(
            s.read.deny,
            vec![
                format!("{dd}/ws/**/*.pem"),
                "/nonexistent-home/x".into(),
                "/abs/**".into()
            ]
        );
        assert_eq!(s.log.target, LogTarget::File(format!("{dd}/trace.log")));
        assert_eq!(s.log.format, LogFormat::Json);

        let bad_key = "readonly = true\nsecretz = false\n";
        let e = Builder::new(ctx(Path::new("/")))
            .config_str(bad_key, &cfg)
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("policy.toml:2:1: secretz: unknown field `secretz`"),
            "{e}"
        );
        let bad_glob = "[write]\nallow = [\n  \"/ok\",\n  \"/x/[a\",\n]\n";
        let e = Builder::new(ctx(Path::new("/")))
            .config_str(bad_glob, &cfg)
            .unwrap_err();
        assert!(e.to_string().contains("policy.toml:4"), "{e}");
        let cases = [
            (
                "readonly = true\nmode = \"loud\"\n",
                "policy.toml:2:8: mode: unknown variant `loud`",
            ),
            (
                "[read]\nallow = []\n\n[log]\nformat = \"xml\"\n",
                "policy.toml:5:10: log.format: unknown variant `xml`",
            ),
            (
                "readonly = \"yes\"\n",
                "policy.toml:1:12: readonly: invalid type",
            ),
            (
                "[read]\ndeny = [\n  \"/a\",\n  7,\n]\n",
                "policy.toml:4:3: read.deny: invalid type",
            ),
            (
                "[reed]\nallow = []\n",
                "policy.toml:1:2: reed: unknown field `reed`",
            ),
            (
                "[write]\nalow = [\"/x\"]\n",
                "policy.toml:2:1: write.alow: unknown field `alow`",
            ),
            ("root = \n", "policy.toml:1:8: root: "),
            (
                "errno = \"ENOENT\"\n",
                "policy.toml:1:9: errno: unknown variant `ENOENT`",
            ),
            (
                "[read]\ndeny = [\"/x/{a\"]\n",
                "policy.toml:2: read.deny: bad glob",
            ),
            ("root = \"missing-dir\"\n", "policy.toml:1: root: "),
        ];
        for (text, want) in cases {
            let e = Builder::new(ctx(Path::new("/")))
                .config_str(text, &cfg)
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{text:?}: got {e:?}, want {want:?}");
            assert!(!e.contains('\n'), "one line: {e:?}");
        }
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn preset_keys_default_on_and_switch_off() {
        let cfg = Path::new("/policy.toml");
        let s = Builder::new(ctx(Path::new("/"))).finish().unwrap();
        assert!(s.ipc && s.proc && s.cache);
        let tag = s.ipc_tag.clone().unwrap();
        assert!(!tag.is_empty() && tag.bytes().all(|b| b.is_ascii_hexdigit()));
        let mut b = Builder::new(ctx(Path::new("/")));
        b.config_str("ipc = false\nproc = false\ncache = false\n", cfg)
            .unwrap();
        let s = b.finish().unwrap();
        assert!(!s.ipc && !s.proc && !s.cache);
        let back = Settings::from_frozen(&s.to_frozen()).unwrap();
        assert_eq!(back, s, "children get the same presets and namespace");
        let e = Builder::new(ctx(Path::new("/")))
            .config_str("ipcs = false\n", cfg)
            .unwrap_err()
            .to_string();
        assert!(e.contains("ipcs: unknown field"), "{e}");
    }

    #[test]
    fn patterns_resolve_symlinked_prefixes() {
        let d = tmpdir("sym");
        std::fs::create_dir(d.join("real")).unwrap();
        std::os::unix::fs::symlink(d.join("real"), d.join("link")).unwrap();
        let p = expand_pattern("link/**/*.key", &d, None).unwrap();
        assert_eq!(p, format!("{}/real/**/*.key", d.display()));
        let p = expand_pattern("link/missing/../f", &d, None).unwrap();
        assert_eq!(p, format!("{}/real/f", d.display()));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn system_prefixes_never_root_or_home() {
        let d = tmpdir("sys");
        let home = d.join("home");
        std::fs::create_dir_all(home.join("bin")).unwrap();
        std::fs::create_dir_all(d.join("tool/bin")).unwrap();
        std::fs::create_dir_all(home.join(".pyenv/shims")).unwrap();
        let path = std::env::join_paths([
            home.join("bin"),
            d.join("tool/bin"),
            home.join(".pyenv/shims"),
            PathBuf::from("/bin"),
        ])
        .unwrap();
        let c = Context {
            cwd: d.clone(),
            home: Some(home.clone()),
            exe: None,
            path_var: Some(path),
        };
        let s = Builder::new(c).finish().unwrap();
        let has = |p: &Path| s.system_paths.iter().any(|x| Path::new(x) == p);
        assert!(has(&d.join("tool")));
        assert!(has(&home.join(".pyenv")));
        assert!(has(&home.join("bin")), "~/bin must not widen to $HOME");
        assert!(!has(&home));
        assert!(!s.system_paths.iter().any(|p| p == "/"));
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// From config text to verdicts: `~`, relative and slash-less patterns,
    /// presets, through the same `decide` the library uses.
    #[test]
    fn config_to_decisions() {
        let d = tmpdir("decide");
        std::fs::create_dir_all(d.join("proj/ws")).unwrap();
        std::fs::create_dir_all(d.join("home")).unwrap();
        let c = Context {
            cwd: d.join("proj/ws"),
            home: Some(d.join("home")),
            exe: None,
            path_var: None,
        };
        let text = "root = \"ws\"\n[read]\ndeny = [\"~/notes\", \"private\"]\ndeny_always = [\"*.pem\"]\nallow = [\"private/ok\"]\n[write]\nallow = [\"~/out\"]\n";
        let mut b = Builder::new(c.clone());
        b.config_str(text, &d.join("proj/policy.toml")).unwrap();
        b.add_pattern(Access::Write, ListKind::DenyAlways, "locked")
            .unwrap();
        let p = crate::Policy::new(b.finish().unwrap()).unwrap();
        let dd = d.display();
        let v = |a: Access, path: &str| {
            let d = p.decide(a, format!("{dd}/{path}").as_bytes());
            (d.allowed, d.rule.to_string().replace(&dd.to_string(), ""))
        };
        use Access::{Read as R, Write as W};
        assert_eq!(
            v(R, "home/notes/x"),
            (false, "read.deny:\"/home/notes\"".into())
        );
        assert_eq!(v(R, "home/notesx"), (false, "root".into()));
        assert_eq!(
            v(W, "home/out/f"),
            (true, "write.allow:\"/home/out\"".into())
        );
        assert_eq!(
            v(R, "proj/ws/private/a"),
            (false, "read.deny:\"/proj/ws/private\"".into())
        );
        assert_eq!(
            v(R, "proj/ws/private/ok"),
            (true, "read.allow:\"/proj/ws/private/ok\"".into())
        );
        assert_eq!(
            v(R, "proj/ws/a/b/k.pem"),
            (false, "read.deny_always:\"/proj/ws/**/*.pem\"".into())
        );
        assert_eq!(v(R, "k.pem"), (false, "root".into()), "not above the root");
        // A flag's relative pattern is against the cwd (proj/ws).
        assert_eq!(
            v(W, "proj/ws/locked/x"),
            (false, "write.deny_always:\"/proj/ws/locked\"".into())
        );
        assert_eq!(v(W, "proj/ws/lockedx"), (true, "root".into()));
        // Secrets come from $HOME; devices are allowed; system only reads.
        assert_eq!(
            v(R, "home/.ssh/id_rsa"),
            (false, "secrets:\"/home/.ssh\"".into())
        );
        assert_eq!(
            v(W, "home/.cargo/credentials.toml").1,
            "secrets:\"/home/.cargo/credentials*\""
        );
        assert!(p.decide(Access::Write, b"/dev/null").allowed);
        assert!(p.decide(Access::Read, b"/usr/bin/env").allowed);
        assert!(!p.decide(Access::Write, b"/usr/bin/env").allowed);
        let mut b = Builder::new(c);
        b.config_str(
            "secrets = false\nsystem = false\nroot = \".\"\n",
            &d.join("proj/policy.toml"),
        )
        .unwrap();
        let p = crate::Policy::new(b.finish().unwrap()).unwrap();
        let home_ssh = format!("{dd}/home/.ssh/id_rsa");
        assert_eq!(
            p.decide(Access::Read, home_ssh.as_bytes()).rule.to_string(),
            "root"
        );
        assert!(!p.decide(Access::Read, b"/usr/bin/env").allowed);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn system_prefixes_never_cover_the_root_or_temp() {
        let d = tmpdir("sysroot");
        std::fs::create_dir_all(d.join("ws/tools")).unwrap();
        std::fs::create_dir_all(d.join("opt/app")).unwrap();
        let c = Context {
            cwd: d.clone(),
            home: None,
            exe: Some(d.join("ws/run.sh")),
            path_var: Some(std::env::join_paths([d.join("ws/tools"), d.join("opt/app")]).unwrap()),
        };
        let mut b = Builder::new(c);
        b.root(d.join("ws").to_str().unwrap()).unwrap();
        let s = b.finish().unwrap();
        let has = |p: &Path| s.system_paths.iter().any(|x| Path::new(x) == p);
        assert!(
            !has(&d),
            "a program in the root must not open the root's parent"
        );
        assert!(!has(&d.join("ws")));
        assert!(
            has(&d.join("opt/app")),
            "a plain directory stands for itself"
        );
        assert!(!has(&d.join("opt")));
        assert!(!s.system_paths.iter().any(|p| p == "/tmp"));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn frozen_round_trip() {
        let mut s = Settings::default();
        s.root = Some("/ws".into());
        s.read.deny.push("/ws/**/.env*".into());
        assert_eq!(Settings::from_frozen(&s.to_frozen()).unwrap(), s);
        assert!(Settings::from_frozen("{\"readonly\":true}").is_err());
    }
}
