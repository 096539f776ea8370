//! The builder that layers the sources, and the expansion of presets and
//! patterns once every source is in.

use std::path::{Path, PathBuf};

use super::paths::{
    absolute, canonical_prefix_in, expand_pattern, expand_pattern_in, jvm_config_dirs, system_paths,
};
use super::walk::Walk;
use super::{Context, Error, ListKind, LogTarget, Settings};
use crate::{presets, Access};

/// Layers the policy sources into [`Settings`].
#[derive(Debug)]
pub struct Builder {
    pub(super) ctx: Context,
    pub(super) s: Settings,
    /// Some source set a policy (not only how to log it).
    pub(super) any: bool,
    pending: Vec<Pending>,
    /// `unix_sockets` entries as given, made absolute in [`Builder::finish`].
    sockets: Vec<Pending>,
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
            sockets: Vec::new(),
        }
    }

    /// Records a rule pattern from `origin`, relative to `base`.
    pub(super) fn add_pattern_at(
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

    /// Records a `unix_sockets` entry from `origin`: an abstract name
    /// (`@name`) as it is, a path pattern relative to `base` (or, from a
    /// config, to the root) like any rule's. Allows nothing by itself: a
    /// policy of only this is still no policy (read-only).
    pub(super) fn add_unix_socket_at(
        &mut self,
        pattern: &str,
        base: &Path,
        from_config: bool,
        origin: &str,
    ) -> Result<(), Error> {
        if crate::sockets::is_abstract(pattern.as_bytes()) {
            crate::sockets::check_abstract(pattern).map_err(Error::new)?;
        } else {
            let abs = expand_pattern(pattern, base, self.ctx.home.as_deref())?;
            crate::PatternSet::new([abs.as_str()]).map_err(Error::new)?;
        }
        self.sockets.push(Pending {
            access: Access::Write,
            kind: ListKind::Allow,
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
            sockets,
        } = self;
        if !any {
            s.implicit = true;
            s.readonly = true;
        }
        let walk = Walk::new();
        for p in pending {
            // A config's relative patterns are anchored at the root when the
            // policy has one (from any source): one policy, many workspaces.
            let relative = !p.text.starts_with('/') && !p.text.starts_with('~');
            let base = match (&s.root, p.from_config && relative) {
                (Some(r), true) => PathBuf::from(r),
                _ => p.base,
            };
            let abs = expand_pattern_in(&walk, &p.text, &base, ctx.home.as_deref())
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
        for p in sockets {
            if crate::sockets::is_abstract(p.text.as_bytes()) {
                s.unix_sockets.push(p.text);
                continue;
            }
            let relative = !p.text.starts_with('/') && !p.text.starts_with('~');
            let base = match (&s.root, p.from_config && relative) {
                (Some(r), true) => PathBuf::from(r),
                _ => p.base,
            };
            let abs = expand_pattern_in(&walk, &p.text, &base, ctx.home.as_deref())
                .map_err(|e| Error::new(format!("{}: {e}", p.origin)))?;
            s.unix_sockets.push(abs);
        }
        // The log is protected by its resolved name, the name the library
        // resolves a program's calls to. A log under /proc, /dev or /sys is
        // not protected and keeps its name: /proc/self means each process.
        if let LogTarget::File(f) = &s.log.target {
            let kernel = ["/proc/", "/dev/", "/sys/"]
                .iter()
                .any(|d| f.starts_with(d));
            if !kernel {
                s.log.target = LogTarget::File(
                    canonical_prefix_in(&walk, Path::new(f))
                        .display()
                        .to_string(),
                );
            }
        }
        s.system_paths = system_paths(&walk, &ctx, s.root.as_deref());
        s.system_paths.extend(jvm_config_dirs(&walk));
        s.home = ctx
            .home
            .as_ref()
            .map(|h| canonical_prefix_in(&walk, h).display().to_string());
        s.ipc_tag = Some(ipc_tag());
        s.secret_paths = match &ctx.home {
            Some(home) => presets::SECRETS
                .iter()
                .filter_map(|p| expand_pattern_in(&walk, p, Path::new("/"), Some(home)).ok())
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

/// `stderr`, `off` or a path, relative to `base`.
pub(super) fn parse_log_target(v: &str, base: &Path) -> LogTarget {
    match v {
        "stderr" => LogTarget::Stderr,
        "off" => LogTarget::Off,
        path => LogTarget::File(absolute(base, Path::new(path)).display().to_string()),
    }
}
