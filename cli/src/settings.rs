//! The effective policy of a command line: defaults < profile < config <
//! `FSGUARD_*` variables < flags.

use std::path::Path;

use fsguard_policy::{Access, Builder, Context, Mode, Policy, Rule, Settings};

use crate::{discover, Cli, Flag};

/// Layers defaults < `--profile` < config < FSGUARD_* variables < flags. `exe` is the
/// program the policy is for: its install prefix is a `system` location, as
/// when the library loads in it (not this CLI's).
pub(crate) fn settings(cli: &Cli, exe: Option<&Path>) -> Result<Settings, String> {
    let ctx = Context {
        exe: exe.map(Path::to_path_buf),
        ..Context::from_process()
    };
    let cwd = ctx.cwd.clone();
    let mut b = Builder::new(ctx);
    if let Some(p) = &cli.profile {
        b.profile(p, &cwd)
            .map_err(|e| format!("--profile {p}: {e}"))?;
    }
    let vars: Vec<(String, String)> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .filter(|(k, _)| {
            k.starts_with("FSGUARD_")
                && !["FSGUARD_LIB", "FSGUARD_POLICY", "FSGUARD_POLICY_FD"].contains(&k.as_str())
        })
        .collect();
    let found = discover::discovered(cli)?;
    if let (Some(note), false) = (discover::unused_note(cli), cli.run.quiet) {
        eprintln!("{note}");
    }
    b.env(
        vars.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        cli.config.as_deref().or(found.as_deref()),
    )
    .map_err(|e| e.to_string())?;
    for f in &cli.flags {
        match f {
            Flag::Readonly(root) => {
                b.readonly(true);
                if let Some(r) = root {
                    b.root(r).map_err(|e| format!("--readonly={r}: {e}"))?;
                }
            }
            Flag::Root(r) => {
                b.root(r).map_err(|e| format!("--root {r}: {e}"))?;
            }
            Flag::Rule(a, k, p) => {
                b.add_pattern(*a, *k, p).map_err(|e| format!("{p}: {e}"))?;
            }
            Flag::UnixSocket(p) => {
                b.add_unix_socket(p).map_err(|e| format!("{p}: {e}"))?;
            }
            Flag::Audit => {
                b.mode(Mode::Audit);
            }
            Flag::NoSecrets => {
                b.secrets(false);
            }
            Flag::Log(t) => {
                b.log_target(t).map_err(|e| e.to_string())?;
            }
            Flag::LogFormat(f) => {
                b.log_format(*f);
            }
            Flag::UnguardedExec(u) => {
                b.unguarded_exec(*u);
            }
        }
    }
    let s = b.finish().map_err(|e| e.to_string())?;
    warn_shadowed_allows(&s);
    Ok(s)
}

/// Warns about `allow` rules that can never take effect: the path they name
/// is covered by a `deny_always` rule or by the `secrets` preset, which beat
/// every allow.
fn warn_shadowed_allows(s: &Settings) {
    let Ok(policy) = Policy::new(s.clone()) else {
        return;
    };
    for (access, pats) in [
        (Access::Read, &s.read.allow),
        (Access::Write, &s.write.allow),
    ] {
        for p in pats {
            let literal: Vec<&str> = p
                .split('/')
                .take_while(|c| !c.contains(['*', '?', '[', '{']))
                .collect();
            let literal = literal.join("/");
            if literal.is_empty() {
                continue;
            }
            let d = policy.decide(access, literal.as_bytes());
            let flag = format!("--allow-{}", access.as_str());
            match d.rule {
                Rule::Secret(by) => eprintln!(
                    "fsguard: warning: {flag} {p}: no effect: it is covered by the secrets \
                     preset ({by}), which beats every allow; turn the preset off with \
                     --no-secrets (or secrets = false in the config)"
                ),
                Rule::DenyAlways(_, by) => eprintln!(
                    "fsguard: warning: {flag} {p}: no effect: deny_always {by:?} beats every allow"
                ),
                _ => {}
            }
        }
    }
}
