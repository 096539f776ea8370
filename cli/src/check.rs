//! `fsguard check` and `fsguard explain`: the effective policy, and the
//! verdict for one path.

use std::process::ExitCode;

use fsguard_policy::{canonical_prefix, Access, LogFormat, LogTarget, Mode, Policy, Settings};

use crate::{discover, run, say, settings, Cli};

pub(crate) fn cmd_check(cli: &Cli) -> Result<ExitCode, String> {
    if !cli.rest.is_empty() {
        return Err("check takes no operands".into());
    }
    let s = settings(cli, None)?;
    Policy::new(s.clone()).map_err(|e| e.to_string())?;
    if let Some(f) = discover::discovered(cli)? {
        say(&format!(
            "# config: {} (discovered; --no-config skips it)\n",
            f.display()
        ));
    }
    say(&describe(&s));
    say(&run::tmpdir_note(&s));
    Ok(ExitCode::SUCCESS)
}

/// `# profile: agent (built-in; fsguard profiles agent prints it)`, or
/// nothing when no profile is in force.
pub(crate) fn profile_line(s: &Settings) -> Option<String> {
    (!s.profiles.is_empty()).then(|| {
        let shown = s.profiles.join(", then ");
        format!(
            "profile: {shown} (built-in; `fsguard profiles {}` prints it)",
            s.profiles[0]
        )
    })
}

/// `fsguard profiles [NAME]`: the list, or one profile's TOML.
pub(crate) fn cmd_profiles(name: Option<&str>) -> Result<ExitCode, String> {
    use fsguard_policy::profiles::{profile, unknown, PROFILES};
    match name {
        Some(n) => {
            let p = profile(n).ok_or_else(|| unknown(n))?;
            say(p.text);
        }
        None => {
            let width = PROFILES.iter().map(|p| p.name.len()).max().unwrap_or(0);
            let mut o = String::new();
            for p in PROFILES {
                o.push_str(&format!("{:width$}  {}\n", p.name, p.about));
            }
            o.push_str(
                "\n`fsguard profiles NAME` prints one as TOML; use it with \
                 `fsguard run --profile NAME` or `profile = \"NAME\"` in a config.\n",
            );
            say(&o);
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn describe(s: &Settings) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    let q = |v: &str| format!("{v:?}");
    let list = |v: &[String]| {
        format!(
            "[{}]",
            v.iter().map(|p| q(p)).collect::<Vec<_>>().join(", ")
        )
    };
    if s.implicit {
        let _ = writeln!(o, "# no policy set: read-only by default");
    }
    if let Some(p) = profile_line(s) {
        let _ = writeln!(o, "# {p}");
    }
    let _ = writeln!(o, "readonly = {}", s.readonly);
    match &s.root {
        Some(r) => {
            let _ = writeln!(o, "root = {}", q(r));
        }
        None => {
            let _ = writeln!(o, "# root: none");
        }
    }
    let _ = writeln!(
        o,
        "mode = {}",
        q(if s.mode == Mode::Audit {
            "audit"
        } else {
            "enforce"
        })
    );
    let _ = writeln!(o, "errno = {}", q(&format!("{:?}", s.errno)));
    let _ = writeln!(o, "system = {}", s.system);
    let _ = writeln!(o, "secrets = {}", s.secrets);
    let _ = writeln!(o, "hide_outside = {}", s.hide_outside);
    let _ = writeln!(o, "ipc = {}", s.ipc);
    let _ = writeln!(o, "proc = {}", s.proc);
    let _ = writeln!(o, "cache = {}", s.cache);
    let _ = writeln!(o, "unix_sockets = {}", list(&s.unix_sockets));
    match s.fail_on_block {
        Some(n) => {
            let _ = writeln!(o, "fail_on_block = {n}");
        }
        None => {
            let _ = writeln!(o, "fail_on_block = false");
        }
    }
    for (name, l) in [("read", &s.read), ("write", &s.write)] {
        let _ = writeln!(o, "\n[{name}]");
        let _ = writeln!(o, "allow = {}", list(&l.allow));
        let _ = writeln!(o, "deny = {}", list(&l.deny));
        let _ = writeln!(o, "deny_always = {}", list(&l.deny_always));
    }
    let _ = writeln!(o, "\n[log]");
    let target = match &s.log.target {
        LogTarget::Stderr => "stderr".to_string(),
        LogTarget::Off => "off".to_string(),
        LogTarget::File(f) => f.clone(),
    };
    let _ = writeln!(o, "target = {}", q(&target));
    let _ = writeln!(
        o,
        "format = {}",
        q(if s.log.format == LogFormat::Json {
            "json"
        } else {
            "text"
        })
    );
    let _ = writeln!(o, "\n# presets, expanded");
    let _ = writeln!(
        o,
        "# system ({}): {}",
        if s.system && s.root.is_some() {
            "active: root is set"
        } else {
            "inactive"
        },
        list(&s.system_paths)
    );
    let _ = writeln!(
        o,
        "# secrets ({}): {}",
        if s.secrets { "denied always" } else { "off" },
        list(&s.secret_paths)
    );
    let _ = writeln!(
        o,
        "# ipc ({}): shm_open names the policy refuses are the tree's own, \
         /dev/shm/fsguard.{}.NAME, readable and writable",
        if s.ipc { "on" } else { "off" },
        s.ipc_tag.as_deref().unwrap_or("?")
    );
    let _ = writeln!(
        o,
        "# proc ({}): readable under a root: /proc, /proc/<pid> and its task \
         directory, and of any pid: {}; never environ, mem, maps, fd, ...",
        if s.proc { "on" } else { "off" },
        fsguard_policy::PROC_PUBLIC.join(", ")
    );
    let _ = writeln!(
        o,
        "# cache ({}): fsguard run sets {}, CARGO_HOME (links to the real one's \
         entries, fresh lock files) and MAVEN_OPTS (-Dmaven.repo.local) below its \
         private TMPDIR",
        if s.cache { "on" } else { "off" },
        fsguard_policy::CACHE_ENV
            .iter()
            .map(|(v, _)| *v)
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = writeln!(
        o,
        "# devices (always allowed): {}",
        list(
            &fsguard_policy::DEVICES
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
        )
    );
    o
}

pub(crate) fn cmd_explain(cli: &Cli) -> Result<ExitCode, String> {
    let [access, path] = cli.rest.as_slice() else {
        return Err("explain needs ACCESS PATH".into());
    };
    let access = access
        .to_str()
        .and_then(Access::parse)
        .ok_or_else(|| format!("explain: access must be read, write or exec, not {access:?}"))?;
    let s = settings(cli, None)?;
    let profiles = s.profiles.join(",");
    let policy = Policy::new(s).map_err(|e| e.to_string())?;
    let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
    let resolved = resolve(&cwd.join(path), cli.no_follow);
    let bytes = resolved.as_os_str().as_encoded_bytes();
    let d = policy.decide(access, bytes);
    let verdict = if d.allowed { "allow" } else { "deny" };
    // What would allow a denied access, as the trace line says it.
    let hint = (!d.allowed)
        .then(|| policy.hint(access, bytes, d.rule))
        .flatten();
    if cli.json {
        let mut v = serde_json::json!({
            "verdict": verdict,
            "access": access.as_str(),
            "path": resolved.display().to_string(),
            "rule": d.rule.to_string(),
        });
        if let Some(h) = hint {
            v["hint"] = h.to_string().into();
        }
        if !profiles.is_empty() {
            v["profile"] = profiles.into();
        }
        say(&format!("{v}\n"));
    } else {
        let hint = hint.map(|h| format!(" hint=\"{h}\"")).unwrap_or_default();
        let profile = if profiles.is_empty() {
            String::new()
        } else {
            format!(" profile={profiles}")
        };
        say(&format!(
            "{verdict} {} {} rule={}{hint}{profile}\n",
            access.as_str(),
            resolved.display(),
            d.rule
        ));
    }
    Ok(ExitCode::from(if d.allowed { 0 } else { 1 }))
}

/// `path` as the library resolves it: every symlink followed, or, with
/// `no_follow`, all but a final one (the parent resolved, the name
/// appended). A trailing slash, `.` or `..` as the last component is
/// followed by the kernel whatever the call asks, and so here.
fn resolve(path: &std::path::Path, no_follow: bool) -> std::path::PathBuf {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let bytes = path.as_os_str().as_bytes();
    let cut = bytes.iter().rposition(|&b| b == b'/');
    let name = &bytes[cut.map_or(0, |i| i + 1)..];
    match cut {
        Some(i) if no_follow && !matches!(name, b"" | b"." | b"..") => {
            let parent = if i == 0 { &b"/"[..] } else { &bytes[..i] };
            canonical_prefix(std::path::Path::new(OsStr::from_bytes(parent)))
                .join(OsStr::from_bytes(name))
        }
        _ => canonical_prefix(path),
    }
}
