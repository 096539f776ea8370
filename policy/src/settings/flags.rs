//! The setters the CLI's flags call (the environment source uses them too).

use super::builder::parse_log_target;
use super::paths::{absolute, canonical_dir, expand_home};
use super::{Builder, ErrnoChoice, Error, ListKind, LogFormat, Mode, UnguardedExec};
use crate::Access;

impl Builder {
    /// Sets read-only.
    pub fn readonly(&mut self, on: bool) -> &mut Builder {
        self.any = true;
        self.s.readonly = on;
        self
    }

    /// Sets the root; relative to the working directory. It must exist.
    pub fn root(&mut self, dir: &str) -> Result<&mut Builder, Error> {
        if dir.is_empty() {
            return Err(Error::new("empty (a root names a directory)"));
        }
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

    /// Adds a `unix_sockets` entry (`--allow-unix-socket`): a path pattern,
    /// relative to the working directory, or an abstract name (`@name`).
    pub fn add_unix_socket(&mut self, pattern: &str) -> Result<&mut Builder, Error> {
        let cwd = self.ctx.cwd.clone();
        self.add_unix_socket_at(pattern, &cwd, false, pattern)?;
        Ok(self)
    }
}
