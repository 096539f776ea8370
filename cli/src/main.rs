//! `fsguard`: run a command under libfsguard, check a policy, explain a verdict.

mod discover;
mod embed;
mod gate;
mod landlock;
mod library;
mod outcome;
mod presets;
mod relay;
mod report;
mod run;
mod signals;
mod spawn;
mod suggest;
mod tmpdir;
mod wrap;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use fsguard_policy::{
    canonical_prefix, Access, Builder, Context, ListKind, LogFormat, LogTarget, Mode, Policy, Rule,
    Settings, UnguardedExec,
};

/// Exit status for fsguard's own failures (bad policy, library missing).
const EXIT_FSGUARD: u8 = 125;

const USAGE: &str = "\
usage:
  fsguard run [OPTIONS] -- CMD [ARGS...]   run CMD under the guard
  fsguard check [OPTIONS]                  validate and print the effective policy
  fsguard explain [OPTIONS] [--json] read|write|exec PATH
                                           the verdict for PATH and the rule behind it
                                           (exit 0: allowed, 1: denied)
  fsguard lib-path                         the absolute path of the library run uses
  fsguard wrap NAME [OPTIONS] -- CMD [ARGS...]
                                           write ~/.local/bin/NAME, a script that runs
                                           CMD under these options (wrap --help)
  fsguard unwrap NAME                      remove a script fsguard wrap made
  fsguard suggest [OPTIONS] LOG.jsonl... | -- CMD [ARGS...]
                                           a policy that allows what a run did
                                           (suggest --help)
options:
  --readonly[=ROOT]        deny every write (and confine to ROOT if given)
  --root DIR               confine reads and writes to DIR
  --config F               TOML policy file
  --no-config              do not look for .fsguard.toml (by default, with no
                           policy option, run/check/explain use the nearest one
                           from the working directory up to the repository top)
  --allow-read P   --deny-read P   --deny-read-always P
  --allow-write P  --deny-write P  --deny-write-always P
  --audit                  log what would be blocked instead of blocking it;
                           `run` still refuses writes outside the root (Landlock)
  --no-secrets             turn off the secrets preset (~/.ssh, ~/.aws, ...)
  --log stderr|off|FILE    where trace lines go
  --log-format text|json   trace format
  --unguarded-exec warn|deny|allow
                           exec of a static program the library cannot follow
run options:
  --landlock[=required]    Landlock (on by default where the kernel has it);
                           =required: fail (125) unless fully enforced
  --no-landlock            the library alone guards (static programs run unconfined)
  --timeout DURATION       SIGTERM after DURATION (10, 2.5s, 3m, 1h, 1d), SIGKILL
                           after a grace period; exit 124
  --keep-tmp               keep the command's private TMPDIR
  --quiet                  no summary of blocked accesses at exit
  --fail-on-block[=N]      exit N (default 3) when anything was blocked
                           (with --audit: would have been)
  --report FILE|-          at exit, a table of refused accesses by rule and
                           directory (-: standard error, instead of the summary)
";

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    match run(args) {
        Ok(code) => code,
        Err(msg) => {
            eprintln!("fsguard: error: {msg}");
            ExitCode::from(EXIT_FSGUARD)
        }
    }
}

/// Parsed command line.
struct Cli {
    command: String,
    config: Option<PathBuf>,
    /// `--no-config`: no `.fsguard.toml` discovery.
    no_config: bool,
    flags: Vec<Flag>,
    rest: Vec<OsString>,
    run: run::RunOptions,
    /// `wrap --dir`, `--force`.
    wrap: wrap::WrapOptions,
    /// `explain --json`.
    json: bool,
}

/// A policy flag, applied over the config and the environment in order.
enum Flag {
    Readonly(Option<String>),
    Root(String),
    Rule(Access, ListKind, String),
    Audit,
    NoSecrets,
    Log(String),
    LogFormat(LogFormat),
    UnguardedExec(UnguardedExec),
}

fn parse(args: Vec<OsString>) -> Result<Cli, String> {
    let mut it = args.into_iter();
    let command = it
        .next()
        .ok_or_else(|| format!("no command given\n{USAGE}"))?
        .into_string()
        .map_err(|_| "bad command".to_string())?;
    if command == "-h" || command == "--help" || command == "help" {
        say(USAGE);
        std::process::exit(0);
    }
    let mut cli = Cli {
        command,
        config: None,
        no_config: false,
        flags: Vec::new(),
        rest: Vec::new(),
        run: run::RunOptions::default(),
        wrap: wrap::WrapOptions::default(),
        json: false,
    };
    let mut args: Vec<OsString> = it.collect();
    args.reverse();
    while let Some(arg) = args.pop() {
        let Some(s) = arg.to_str() else {
            cli.rest.push(arg);
            continue;
        };
        if s == "--" {
            cli.rest.extend(args.drain(..).rev());
            break;
        }
        if s == "--help" || s == "-h" {
            say(USAGE);
            std::process::exit(0);
        }
        let (name, inline) = match s.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_string(), Some(v.to_string())),
            _ => (s.to_string(), None),
        };
        let value = |args: &mut Vec<OsString>| -> Result<String, String> {
            if let Some(v) = inline.clone() {
                return Ok(v);
            }
            args.pop()
                .and_then(|v| v.into_string().ok())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        let rule = |a, k| -> Option<(Access, ListKind)> { Some((a, k)) };
        let as_rule = match name.as_str() {
            "--allow-read" => rule(Access::Read, ListKind::Allow),
            "--deny-read" => rule(Access::Read, ListKind::Deny),
            "--deny-read-always" => rule(Access::Read, ListKind::DenyAlways),
            "--allow-write" => rule(Access::Write, ListKind::Allow),
            "--deny-write" => rule(Access::Write, ListKind::Deny),
            "--deny-write-always" => rule(Access::Write, ListKind::DenyAlways),
            _ => None,
        };
        if let Some((a, k)) = as_rule {
            cli.flags.push(Flag::Rule(a, k, value(&mut args)?));
            continue;
        }
        match name.as_str() {
            "--readonly" => cli.flags.push(Flag::Readonly(inline.clone())),
            "--root" => cli.flags.push(Flag::Root(value(&mut args)?)),
            "--config" => cli.config = Some(PathBuf::from(value(&mut args)?)),
            "--no-config" => cli.no_config = true,
            "--audit" => cli.flags.push(Flag::Audit),
            "--no-secrets" => cli.flags.push(Flag::NoSecrets),
            "--json" if cli.command == "explain" => cli.json = true,
            "--log" => cli.flags.push(Flag::Log(value(&mut args)?)),
            "--log-format" => cli
                .flags
                .push(Flag::LogFormat(match value(&mut args)?.as_str() {
                    "text" => LogFormat::Text,
                    "json" => LogFormat::Json,
                    v => return Err(format!("--log-format: bad value {v:?} (text, json)")),
                })),
            "--unguarded-exec" => {
                let v = value(&mut args)?;
                let u = UnguardedExec::parse(&v).ok_or_else(|| {
                    format!("--unguarded-exec: bad value {v:?} (warn, deny, allow)")
                })?;
                cli.flags.push(Flag::UnguardedExec(u));
            }
            _ if run::parse_option(&mut cli.run, &name, inline.as_deref(), &mut args)? => {}
            _ if cli.command == "wrap"
                && wrap::parse_option(&mut cli.wrap, &name, inline.as_deref(), &mut args)? => {}
            _ if s.starts_with('-') && s.len() > 1 => {
                return Err(format!("unknown option {s}\n{USAGE}"))
            }
            _ => {
                // The first operand ends the options (`fsguard run cmd` works without --).
                cli.rest.push(arg);
                cli.rest.extend(args.drain(..).rev());
                break;
            }
        }
    }
    Ok(cli)
}

/// Layers defaults < config < FSGUARD_* variables < flags. `exe` is the
/// program the policy is for: its install prefix is a `system` location, as
/// when the library loads in it (not this CLI's).
fn settings(cli: &Cli, exe: Option<&Path>) -> Result<Settings, String> {
    let ctx = Context {
        exe: exe.map(Path::to_path_buf),
        ..Context::from_process()
    };
    let mut b = Builder::new(ctx);
    let vars: Vec<(String, String)> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .filter(|(k, _)| {
            k.starts_with("FSGUARD_")
                && !["FSGUARD_LIB", "FSGUARD_POLICY", "FSGUARD_POLICY_FD"].contains(&k.as_str())
        })
        .collect();
    let found = discover::discovered(cli)?;
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

fn run(args: Vec<OsString>) -> Result<ExitCode, String> {
    match args.first().and_then(|a| a.to_str()) {
        Some("wrap") => return wrap::cmd_wrap(args),
        Some("unwrap") => return wrap::cmd_unwrap(args),
        Some("suggest") => return suggest::cmd_suggest(args),
        _ => {}
    }
    let cli = parse(args)?;
    match cli.command.as_str() {
        "run" => run::cmd_run(&cli),
        "check" => cmd_check(&cli),
        "explain" => cmd_explain(&cli),
        "lib-path" => run::cmd_lib_path(&cli),
        other => Err(format!("unknown command {other:?}\n{USAGE}")),
    }
}

fn cmd_check(cli: &Cli) -> Result<ExitCode, String> {
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
        "# cache ({}): fsguard run sets {} and CARGO_HOME (links to the real one's \
         entries, fresh lock files) below its private TMPDIR",
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

fn cmd_explain(cli: &Cli) -> Result<ExitCode, String> {
    let [access, path] = cli.rest.as_slice() else {
        return Err(format!("explain needs ACCESS PATH\n{USAGE}"));
    };
    let access = access
        .to_str()
        .and_then(Access::parse)
        .ok_or_else(|| format!("explain: access must be read, write or exec, not {access:?}"))?;
    let policy = Policy::new(settings(cli, None)?).map_err(|e| e.to_string())?;
    let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
    let resolved = canonical_prefix(&cwd.join(path));
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
        say(&format!("{v}\n"));
    } else {
        let hint = hint.map(|h| format!(" hint=\"{h}\"")).unwrap_or_default();
        say(&format!(
            "{verdict} {} {} rule={}{hint}\n",
            access.as_str(),
            resolved.display(),
            d.rule
        ));
    }
    Ok(ExitCode::from(if d.allowed { 0 } else { 1 }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn parses_flags_and_command() {
        let c = parse(os(&[
            "run",
            "--readonly=ws",
            "--deny-read",
            "*.pem",
            "--",
            "ls",
            "-l",
        ]))
        .unwrap();
        assert_eq!(c.command, "run");
        assert_eq!(c.rest, os(&["ls", "-l"]));
        assert!(matches!(&c.flags[0], Flag::Readonly(Some(r)) if r == "ws"));
        assert!(matches!(&c.flags[1], Flag::Rule(Access::Read, ListKind::Deny, p) if p == "*.pem"));
        let c = parse(os(&["run", "--readonly", "ls", "--root", "x"])).unwrap();
        assert_eq!(
            c.rest,
            os(&["ls", "--root", "x"]),
            "options after the command are its own"
        );
        assert!(parse(os(&["run", "--bogus"])).is_err());
        assert!(parse(os(&["run", "--root"])).is_err());
    }
}

/// Writes to stdout; a reader that went away (`fsguard check | head`) is
/// not an error worth a panic.
pub(crate) fn say(text: &str) {
    use std::io::Write;
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}
