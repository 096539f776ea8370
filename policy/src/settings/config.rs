//! The TOML config file: its schema and its errors, which name the file,
//! line, column and key.

use std::path::Path;

use serde::Deserialize;

use super::builder::parse_log_target;
use super::paths::{absolute, canonical_dir, expand_home};
use super::{
    Builder, ErrnoChoice, Error, ListKind, LogFormat, Mode, UnguardedExec, FAIL_ON_BLOCK_STATUS,
};
use crate::Access;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    profile: Option<toml::Spanned<String>>,
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
    #[serde(default)]
    unix_sockets: Vec<toml::Spanned<String>>,
    fail_on_block: Option<toml::Spanned<toml::Value>>,
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
    target: Option<toml::Spanned<String>>,
    format: Option<LogFormat>,
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

impl Builder {
    /// Applies a TOML config file; relative paths in it are against its directory.
    pub fn config_file(&mut self, path: &Path) -> Result<&mut Builder, Error> {
        if path.as_os_str().is_empty() {
            return Err(Error::new("the config path is empty"));
        }
        let path = absolute(&self.ctx.cwd, path);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            let shown = super::paths::canonical_prefix(&path);
            Error::new(format!("config {}: {e}", shown.display()))
        })?;
        self.config_str(&text, &path)
    }

    /// Applies TOML text as if read from `origin` (used for messages and as
    /// the base of relative paths).
    pub fn config_str(&mut self, text: &str, origin: &Path) -> Result<&mut Builder, Error> {
        let name = origin.display().to_string();
        let base = origin.parent().unwrap_or(Path::new("/")).to_path_buf();
        self.apply_toml(text, &name, &base, false)
    }

    /// Applies the built-in profile `name` as a config whose relative
    /// paths are against `base` (`--profile`: the working directory). An
    /// unknown name is an error that lists the profiles.
    pub fn profile(&mut self, name: &str, base: &Path) -> Result<&mut Builder, Error> {
        let p = crate::profiles::profile(name)
            .ok_or_else(|| Error::new(crate::profiles::unknown(name)))?;
        self.apply_toml(p.text, &format!("profile {name}"), base, true)?;
        self.s.profiles.push(name.to_string());
        Ok(self)
    }

    /// Applies TOML text named `name` (for messages), relative paths
    /// against `base`. A `profile` key applies that profile first, so the
    /// text's own keys go on top; a profile names no other.
    fn apply_toml(
        &mut self,
        text: &str,
        name: &str,
        base: &Path,
        is_profile: bool,
    ) -> Result<&mut Builder, Error> {
        let cfg: ConfigFile = toml::from_str(text).map_err(|e| toml_error(name, text, &e))?;
        let base = base.to_path_buf();
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
        if let Some(p) = cfg.profile {
            let where_ = at(p.span());
            if is_profile {
                return Err(Error::new(format!(
                    "{where_}: profile: a profile names no other profile"
                )));
            }
            self.profile(p.get_ref(), &base)
                .map_err(|e| Error::new(format!("{where_}: profile: {e}")))?;
        }
        if let Some(v) = cfg.readonly {
            self.any = true;
            self.s.readonly = v;
        }
        if let Some(root) = cfg.root {
            let where_ = at(root.span());
            if root.get_ref().is_empty() {
                // Not the config's own directory by accident: that is ".".
                return Err(Error::new(format!(
                    "{where_}: root: empty (a root names a directory; \".\" is the config's own)"
                )));
            }
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
        if let Some(v) = cfg.fail_on_block {
            self.s.fail_on_block = match v.get_ref() {
                toml::Value::Boolean(true) => Some(FAIL_ON_BLOCK_STATUS),
                toml::Value::Boolean(false) => None,
                toml::Value::Integer(n) if (1..=255).contains(n) => u8::try_from(*n).ok(),
                other => {
                    return Err(Error::new(format!(
                        "{}: fail_on_block: bad value {other} (true, false or a status \
                         from 1 to 255)",
                        at(v.span())
                    )))
                }
            };
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
        for p in cfg.unix_sockets {
            let where_ = format!("{}: unix_sockets", at(p.span()));
            self.add_unix_socket_at(p.get_ref(), &base, true, &where_)
                .map_err(|e| Error::new(format!("{where_}: {e}")))?;
        }
        if let Some(log) = cfg.log {
            if let Some(t) = log.target {
                if t.get_ref().is_empty() {
                    return Err(Error::new(format!(
                        "{}: log.target: empty (use stderr, off or a path)",
                        at(t.span())
                    )));
                }
                self.s.log.target = parse_log_target(t.get_ref(), &base);
            }
            if let Some(f) = log.format {
                self.s.log.format = f;
            }
        }
        Ok(self)
    }
}
