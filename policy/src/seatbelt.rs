//! The kernel-enforced layer on macOS: a Sandbox (Seatbelt) profile in
//! SBPL, generated from the frozen policy, that `fsguard run` applies in the
//! command's process before exec (`sandbox_init(profile, 0, &err)`).
//!
//! It mirrors what the Landlock ruleset covers on Linux (`cli/src/landlock.rs`)
//! and, like it, is a backstop: it never refuses what the library allows,
//! only less. Where a rule cannot be said exactly it is widened towards
//! allow and the library decides finer:
//!
//! - writes are confined to the root (unless read-only), the write
//!   allow-list, the private `TMPDIR` and the devices; reads, under a root,
//!   to the root, the installed software (the policy's `system_paths` and
//!   macOS's own locations, [`DARWIN_SYSTEM`]), the allow-lists, the
//!   library and the program, and the directories above them (their names
//!   only: the resolver opens a parent to reach a child);
//! - deny rules (`deny`, `deny_always`, the credential preset) are applied
//!   inside those areas where the kernel can match them exactly: plain
//!   paths as `(subpath …)`, globs made of literal names, `*` and `**` as
//!   `(regex #"…")`; any other glob is left to the library (no rule);
//! - an allow-list glob without an exact form allows its whole literal
//!   leading directory, and nothing when that is `/` (as Landlock does);
//! - reads are `file-read-data` (contents, directory listings), not
//!   metadata: the library lets `stat` through outside `hide_outside`, and
//!   the loader and `realpath` walk every parent;
//! - Seatbelt matches the real path, so `/tmp`, `/var` and `/etc` are
//!   written as `/private/tmp`, `/private/var`, `/private/etc`.
//!
//! Rule order: in SBPL the last rule that matches decides, so the profile
//! lists the policy's rule order backwards (`crate::Policy::decide`):
//! containment first, then devices, `deny`, `allow` and the private
//! `TMPDIR`, and `deny_always` and the credentials last.
//!
//! In audit mode the library blocks nothing; the profile still keeps
//! writes inside the root and the write allow-list, as Landlock does.

use crate::pattern::regex::{dirs, forms, Form};
use crate::{Mode, Settings, DEVICES};

/// Where macOS keeps what a program needs to start and run (the loader,
/// the shared cache, frameworks, system configuration, time zones),
/// readable under a root whatever `system` says, as the built-in list is
/// under Landlock.
pub const DARWIN_SYSTEM: &[&str] = &[
    "/System",
    "/usr",
    "/bin",
    "/sbin",
    "/Library",
    "/private/etc",
    "/private/var/db",
    "/private/var/run/resolv.conf",
    "/dev",
];

/// Devices on macOS beyond the built-in list: descriptors by name and the
/// pseudo-terminals (`/dev/ttys000`, …).
const DARWIN_DEVICES: &[&str] = &["/dev/fd", "/dev/stdin", "/dev/stdout", "/dev/stderr"];

/// What a profile rule filters on.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Filter {
    Subpath(String),
    Literal(String),
    Regex(String),
}

/// The paths of the command's run that are not in the settings.
#[derive(Clone, Copy, Debug)]
pub struct Run<'a> {
    /// The guard library (the loader maps it).
    pub lib: &'a str,
    /// The program (or script) being run.
    pub exe: &'a str,
    /// The private `TMPDIR` `fsguard run` made.
    pub tmp: &'a str,
}

/// The SBPL profile for `s`. Err names a path the profile cannot hold (a
/// control character): the caller fails as for any profile the kernel
/// refuses.
pub fn profile(s: &Settings, run: Run) -> Result<String, String> {
    let mut p = Profile::default();
    p.line("(version 1)");
    p.line("(allow default)");
    let audit = s.mode == Mode::Audit;
    let readonly = s.readonly && !audit;
    let devices = || {
        DEVICES
            .iter()
            .chain(DARWIN_DEVICES)
            .map(|d| Filter::Subpath(real(d)))
            .chain([Filter::Regex("^/dev/ttys[0-9]+$".into())])
            .collect::<Vec<_>>()
    };

    // The private TMPDIR: the settings' and the run's (the same, once
    // `fsguard run` has set it).
    let tmps: Vec<Filter> = s
        .tmpdir
        .iter()
        .map(String::as_str)
        .chain([run.tmp])
        .map(|t| Filter::Subpath(real(t)))
        .collect();

    // Writes (step order reversed: the last match decides).
    let confined = match (&s.root, readonly) {
        (Some(_), _) | (None, true) => true,
        (None, false) => !s.write.allow.is_empty() && !audit,
    };
    if confined {
        p.line("(deny file-write*)");
        if let (Some(r), false) = (&s.root, readonly) {
            p.rule("allow", "file-write*", vec![Filter::Subpath(real(r))])?;
        }
        p.rule("allow", "file-write*", devices())?;
    }
    if !audit {
        p.rule("deny", "file-write*", exact(&s.write.deny))?;
    }
    if confined {
        let mut allow = widened(&s.write.allow);
        allow.extend(tmps.iter().cloned());
        p.rule("allow", "file-write*", allow)?;
    }
    if !audit {
        let mut deny = exact(&s.write.deny_always);
        if s.secrets {
            deny.extend(exact(&s.secret_paths));
        }
        if let crate::LogTarget::File(f) = &s.log.target {
            if f.starts_with('/') && !f.starts_with("/dev/") {
                deny.push(Filter::Literal(real(f)));
            }
        }
        p.rule("deny", "file-write*", deny)?;
    }

    // Reads.
    if audit {
        return Ok(p.text);
    }
    // Allowed again after `deny` (the policy's `allow` and TMPDIR win).
    let mut reallow = bases(&s.read.allow);
    reallow.extend(tmps.iter().cloned());
    if let Some(r) = &s.root {
        p.line("(deny file-read-data)");
        let mut allow = vec![Filter::Subpath(real(r))];
        // Not the built-in (Linux) list: on macOS all of it that exists
        // lies under `DARWIN_SYSTEM`.
        let system = s.system_paths.iter().map(String::as_str);
        let system = system.chain(DARWIN_SYSTEM.iter().copied());
        allow.extend(system.flat_map(|p| bases(&[p])));
        allow.extend(bases(&s.write.allow)); // what it may write, it may read back
        allow.extend([run.lib, run.exe].map(|f| Filter::Subpath(real(f))));
        allow.extend(devices());
        // The directories above each readable area, themselves only: the
        // library's resolver opens a parent to reach what lies in it.
        let above = ancestors(allow.iter().chain(&reallow));
        allow.extend(above);
        p.rule("allow", "file-read-data", allow)?;
    }
    p.rule("deny", "file-read-data", exact(&s.read.deny))?;
    if s.root.is_some() || !s.read.deny.is_empty() {
        p.rule("allow", "file-read-data", reallow)?;
    }
    let mut deny = exact(&s.read.deny_always);
    if s.secrets {
        deny.extend(exact(&s.secret_paths));
    }
    p.rule("deny", "file-read-data", deny)?;
    Ok(p.text)
}

/// The profile's text, one rule per line.
#[derive(Default)]
struct Profile {
    text: String,
}

impl Profile {
    fn line(&mut self, l: &str) {
        self.text.push_str(l);
        self.text.push('\n');
    }

    /// `(ACTION OP FILTER…)`; nothing for no filters (a rule without one
    /// would match every path).
    fn rule(&mut self, action: &str, op: &str, filters: Vec<Filter>) -> Result<(), String> {
        let mut seen: Vec<&Filter> = Vec::new();
        let mut l = format!("({action} {op}");
        // A path a subpath of the same rule already covers adds nothing.
        let covered = |f: &Filter| {
            filters.iter().any(|g| match (f, g) {
                (Filter::Subpath(p), Filter::Subpath(q)) => {
                    p != q && crate::is_within(p.as_bytes(), q.as_bytes())
                }
                (Filter::Literal(p), Filter::Subpath(q)) => {
                    crate::is_within(p.as_bytes(), q.as_bytes())
                }
                _ => false,
            })
        };
        for f in &filters {
            if seen.contains(&f) || covered(f) {
                continue;
            }
            seen.push(f);
            l.push(' ');
            match f {
                Filter::Subpath(p) => l.push_str(&format!("(subpath {})", quote(p)?)),
                Filter::Literal(p) => l.push_str(&format!("(literal {})", quote(p)?)),
                // `#"…"` hands the text to the regex compiler as is; the
                // translation never puts a `"` or a control character in it.
                Filter::Regex(r) => l.push_str(&format!("(regex #\"{r}\")")),
            }
        }
        if !seen.is_empty() {
            l.push(')');
            self.line(&l);
        }
        Ok(())
    }
}

/// An SBPL string literal: `\` and `"` escaped; a control character is
/// refused (no escape for it is documented).
pub fn quote(s: &str) -> Result<String, String> {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for ch in s.chars() {
        match ch {
            '\\' | '"' => {
                out.push('\\');
                out.push(ch);
            }
            c if c.is_control() => {
                return Err(format!("{s:?}: a control character in a path"));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    Ok(out)
}

/// The real path Seatbelt sees: `/tmp`, `/var` and `/etc` are symlinks
/// into `/private` on macOS.
fn real(p: &str) -> String {
    for top in ["/tmp", "/var", "/etc"] {
        if p == top || p.strip_prefix(top).is_some_and(|r| r.starts_with('/')) {
            return format!("/private{p}");
        }
    }
    p.to_string()
}

/// Deny filters: the exact forms of `pats`; an alternative without one is
/// left to the library (widened towards allow).
fn exact<S: AsRef<str>>(pats: &[S]) -> Vec<Filter> {
    let mut out = Vec::new();
    for p in pats {
        for f in forms(&real(p.as_ref())).unwrap_or_default() {
            match f {
                Form::Subpath(s) => out.push(Filter::Subpath(s)),
                Form::Regex(r) => out.push(Filter::Regex(r)),
                Form::Beneath(_) => {}
            }
        }
    }
    out
}

/// Allow filters: the exact forms of `pats`, or the literal leading
/// directory of an alternative without one (never `/`).
fn widened<S: AsRef<str>>(pats: &[S]) -> Vec<Filter> {
    let mut out = Vec::new();
    for p in pats {
        for f in forms(&real(p.as_ref())).unwrap_or_default() {
            match f {
                Form::Subpath(s) => out.push(Filter::Subpath(s)),
                Form::Regex(r) => out.push(Filter::Regex(r)),
                Form::Beneath(b) if b != "/" => out.push(Filter::Subpath(b)),
                Form::Beneath(_) => {}
            }
        }
    }
    out
}

/// Read filters: the literal leading directory of every alternative of
/// `pats` (never `/`), as Landlock's ruleset takes them: a parent the
/// resolver opens must be readable even where only some names beneath it
/// are.
fn bases<S: AsRef<str>>(pats: &[S]) -> Vec<Filter> {
    let mut out = Vec::new();
    for p in pats {
        for d in dirs(&real(p.as_ref())) {
            if d != "/" {
                out.push(Filter::Subpath(d));
            }
        }
    }
    out
}

/// `(literal …)` for every directory strictly above a subpath in `fs`.
fn ancestors<'a>(fs: impl Iterator<Item = &'a Filter>) -> Vec<Filter> {
    let mut out = Vec::new();
    for f in fs {
        let Filter::Subpath(p) = f else { continue };
        let mut cur = p.as_str();
        while cur != "/" {
            cur = match cur.rfind('/') {
                Some(0) | None => "/",
                Some(i) => &cur[..i],
            };
            let lit = Filter::Literal(cur.to_string());
            if !out.contains(&lit) {
                out.push(lit);
            }
        }
    }
    out
}

#[cfg(test)]
#[path = "seatbelt_tests.rs"]
mod tests;
