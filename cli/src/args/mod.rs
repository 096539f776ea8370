//! The command line: its model for clap (help, version, errors, shell
//! completions) and what the commands read from it.
//!
//! Conventions kept from before clap: the first operand of `run` and `wrap`
//! ends the options (`fsguard run cmd --root x` passes `--root x` to `cmd`);
//! repeated rule flags add up, other repeated options take the last value;
//! `--readonly`, `--landlock` and `--fail-on-block` take their optional
//! value only after `=`; and every usage error is fsguard's own failure,
//! `fsguard: error: …`, exit 125 (not clap's 2).
//!
//! The clap model (commands, options, help texts) is in [`model`]; this
//! module turns what clap parsed into [`Invocation`] and [`Cli`].

mod model;
pub use model::Landlock;
#[cfg(test)]
mod tests;

use std::ffi::OsString;
use std::path::PathBuf;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{ArgMatches, CommandFactory, FromArgMatches};
use clap_complete::Shell;
use fsguard_policy::{Access, ListKind, LogFormat, UnguardedExec};

use crate::suggest;
use model::{Line, PolicyArgs, RunArgs, Sub, SuggestArgs};

/// `--fail-on-block`'s status when no N is given.
pub const EXIT_BLOCKED: u8 = fsguard_policy::FAIL_ON_BLOCK_STATUS;

/// A reminder of `run`'s usage, after an error that needs one.
pub const USAGE: &str = "usage: fsguard run [OPTIONS] [--] CMD [ARGS...]  (see fsguard run --help)";

/// Parsed command line of `run`, `check`, `explain`, `lib-path` and `wrap`.
#[derive(Default)]
pub struct Cli {
    pub command: String,
    /// `--profile NAME`: the built-in profile under everything else.
    pub profile: Option<String>,
    pub config: Option<PathBuf>,
    /// `--no-config`: no `.fsguard.toml` discovery.
    pub no_config: bool,
    pub flags: Vec<Flag>,
    /// The command and its arguments (`run`, `wrap`), or ACCESS PATH (`explain`).
    pub rest: Vec<OsString>,
    pub run: RunOptions,
    /// `wrap --dir`, `--force`.
    pub wrap: WrapOptions,
    /// `explain --json`.
    pub json: bool,
    /// `explain --no-follow`: the last component is judged itself.
    pub no_follow: bool,
    /// `run`: the option spelling meant when the command operand is a
    /// directory or a number after `--readonly` and the like
    /// (`--readonly=./ws`), for the error if it cannot run.
    pub meant: Option<String>,
}

/// A policy flag, applied over the config and the environment in order.
pub enum Flag {
    Readonly(Option<String>),
    Root(String),
    Rule(Access, ListKind, String),
    /// `--allow-unix-socket P`.
    UnixSocket(String),
    Audit,
    NoSecrets,
    Log(String),
    LogFormat(LogFormat),
    UnguardedExec(UnguardedExec),
}

/// Options of `run` beyond the policy flags.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    pub landlock: Landlock,
    pub timeout: Option<f64>,
    pub keep_tmp: bool,
    pub quiet: bool,
    /// `--fail-on-block[=N]`: exit N when anything was blocked.
    pub fail_on_block: Option<u8>,
    /// `--report FILE|-`.
    pub report: Option<String>,
}

/// `wrap`'s own options.
#[derive(Clone, Debug, Default)]
pub struct WrapOptions {
    pub dir: Option<PathBuf>,
    pub force: bool,
}

/// What the command line asks for.
pub enum Invocation {
    /// `run`, `check`, `explain`, `lib-path`.
    Policy(Cli),
    /// `wrap NAME …`; `argv` is the command line, for the script's header.
    Wrap {
        name: OsString,
        cli: Cli,
        argv: Vec<OsString>,
    },
    Unwrap {
        name: OsString,
        dir: Option<PathBuf>,
    },
    Suggest(suggest::Args),
    Completions(Shell),
    /// `profiles [NAME]`.
    Profiles(Option<String>),
    /// `man`: the manual page.
    Man,
    /// `--help`, `--version`: print, exit 0.
    Info(clap::Error),
}

/// Parses the arguments after the program name. Err: the message for
/// `fsguard: error: …` (exit 125).
pub fn parse(argv: Vec<OsString>) -> Result<Invocation, String> {
    let full = std::iter::once(OsString::from("fsguard")).chain(argv.iter().cloned());
    let m = match Line::command().try_get_matches_from(full) {
        Ok(m) => m,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            return Ok(Invocation::Info(e))
        }
        Err(e) => return Err(message(&e)),
    };
    let line = Line::from_arg_matches(&m).map_err(|e| message(&e))?;
    let sub = m.subcommand().map(|(_, s)| s).ok_or("no command given")?;
    let cli = |command: &str, policy: PolicyArgs| Cli {
        command: command.into(),
        profile: policy.profile.clone(),
        config: policy.config.clone(),
        no_config: policy.no_config,
        flags: policy.flags(sub),
        ..Cli::default()
    };
    Ok(match line.command {
        Sub::Run { policy, run, cmd } => {
            let meant = optional_value_trap(&argv, &cmd);
            Invocation::Policy(Cli {
                meant,
                rest: cmd,
                run: run.options(),
                ..cli("run", policy)
            })
        }
        Sub::Check { policy } => Invocation::Policy(cli("check", policy)),
        Sub::Explain {
            policy,
            json,
            no_follow,
            access,
            path,
        } => Invocation::Policy(Cli {
            rest: vec![access.into(), path],
            json,
            no_follow,
            ..cli("explain", policy)
        }),
        Sub::LibPath => Invocation::Policy(Cli {
            command: "lib-path".into(),
            ..Cli::default()
        }),
        Sub::Wrap {
            name,
            wrap,
            policy,
            run,
            cmd,
        } => {
            name_first(&argv[1..])?;
            if let Some(m) = optional_value_trap(&argv, &cmd) {
                return Err(format!(
                    "wrap: the command {:?} is a directory or a number: did you mean `{m}`? \
                     (the option takes its value only after =)",
                    cmd[0]
                ));
            }
            Invocation::Wrap {
                name,
                cli: Cli {
                    rest: cmd,
                    run: run.options(),
                    wrap: WrapOptions {
                        dir: wrap.dir,
                        force: wrap.force,
                    },
                    ..cli("wrap", policy)
                },
                argv,
            }
        }
        Sub::Unwrap { name, dir } => Invocation::Unwrap { name, dir },
        Sub::Suggest(s) => Invocation::Suggest(s.into_args()?),
        Sub::Completions { shell } => Invocation::Completions(shell),
        Sub::Profiles { name } => Invocation::Profiles(name),
        Sub::Man => Invocation::Man,
    })
}

/// `fsguard completions SHELL`: the script, on stdout.
pub fn completions(shell: Shell) {
    let mut cmd = Line::command();
    clap_complete::generate(shell, &mut cmd, "fsguard", &mut std::io::stdout());
}

/// `fsguard man`: fsguard(1) as roff, on stdout, made from the same clap
/// model as `--help`, with a section per command.
pub fn man() -> Result<(), String> {
    let cmd = Line::command();
    let mut out: Vec<u8> = Vec::new();
    let page = clap_mangen::Man::new(cmd.clone());
    let io = |e: std::io::Error| format!("man: {e}");
    page.render_title(&mut out).map_err(io)?;
    page.render_name_section(&mut out).map_err(io)?;
    page.render_synopsis_section(&mut out).map_err(io)?;
    page.render_description_section(&mut out).map_err(io)?;
    page.render_subcommands_section(&mut out).map_err(io)?;
    // Each command's synopsis and options, under its own heading.
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        let title = format!("fsguard {}", sub.get_name());
        out.extend_from_slice(format!(".SH \"{}\"\n", title.to_uppercase()).as_bytes());
        let m = clap_mangen::Man::new(sub.clone().bin_name(title));
        let mut part: Vec<u8> = Vec::new();
        m.render_synopsis_section(&mut part).map_err(io)?;
        m.render_options_section(&mut part).map_err(io)?;
        let text = String::from_utf8_lossy(&part)
            .replace(".SH SYNOPSIS", ".SS Synopsis")
            .replace(".SH OPTIONS", ".SS Options");
        out.extend_from_slice(text.as_bytes());
    }
    page.render_version_section(&mut out).map_err(io)?;
    crate::say(&String::from_utf8_lossy(&out));
    Ok(())
}

/// A clap error as fsguard words it (the words scripts and tests know):
/// `unknown option --x`, `--x needs a value`, `--x: bad value "v" (a, b)`,
/// a value parser's own message; then clap's tip and usage.
fn message(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let text = text.strip_prefix("error: ").unwrap_or(&text).trim_end();
    if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        return format!("no command given\n\n{text}");
    }
    let (first, rest) = text.split_once('\n').unwrap_or((text, ""));
    // `--log <stderr|off|FILE>` -> `--log`; `<SHELL>` -> `SHELL`.
    let arg = match e.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(a)) => a
            .split([' ', '['])
            .next()
            .unwrap_or(a)
            .trim_matches(['<', '>'])
            .to_string(),
        _ => String::new(),
    };
    let value = match e.get(ContextKind::InvalidValue) {
        Some(ContextValue::String(v)) => Some(v.as_str()),
        _ => None,
    };
    let first = match (e.kind(), value, e.get(ContextKind::ValidValue)) {
        (ErrorKind::UnknownArgument, ..) => format!("unknown option {arg}"),
        (ErrorKind::ValueValidation, ..) => match std::error::Error::source(e) {
            Some(source) => source.to_string(),
            None => first.to_string(),
        },
        (ErrorKind::InvalidValue, Some(""), _) => format!("{arg} needs a value"),
        (ErrorKind::InvalidValue, Some(v), _) if arg == "ACCESS" => {
            format!("explain: access must be read, write or exec, not {v:?}")
        }
        (ErrorKind::InvalidValue, Some(v), Some(ContextValue::Strings(valid))) => {
            format!("{arg}: bad value {v:?} ({})", valid.join(", "))
        }
        _ => first.to_string(),
    };
    let rest: Vec<&str> = rest
        .lines()
        .filter(|l| !l.trim_start().starts_with("[possible values:"))
        .collect();
    format!("{first}\n{}", rest.join("\n"))
}

/// Options whose value is optional and so is taken only after `=`.
const OPTIONAL_VALUE: &[&str] = &["--readonly", "--fail-on-block", "--landlock"];

/// `--readonly ./ws -- ls` runs the command `./ws`, `--fail-on-block 5 --
/// true` the command `5`: for a command operand that is a directory or a
/// number right after such an option, the spelling meant (`--readonly=./ws`),
/// which `run` adds to its error when the command cannot run.
fn optional_value_trap(argv: &[OsString], cmd: &[OsString]) -> Option<String> {
    let operand = cmd.first()?;
    let before = &argv[..argv.len().checked_sub(cmd.len())?];
    let before = match before.split_last() {
        Some((last, rest)) if last == "--" => rest,
        _ => before,
    };
    let opt = before.last()?.to_str()?;
    if !OPTIONAL_VALUE.contains(&opt) {
        return None;
    }
    let v = operand.to_string_lossy();
    let number = !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit());
    (number || std::path::Path::new(operand).is_dir()).then(|| format!("{opt}={v}"))
}

/// `wrap [--dir DIR] [--force] NAME OPTIONS -- CMD`: NAME comes before the
/// policy and run options (and before `--`), so it is never taken from them.
fn name_first(args: &[OsString]) -> Result<(), String> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let s = a.to_string_lossy();
        match &*s {
            "--dir" => {
                it.next();
            }
            "--force" | "-f" => {}
            _ if s.starts_with("--dir=") => {}
            _ if s.starts_with('-') => {
                return Err(format!(
                    "wrap: NAME must come before the options (got {s}); see fsguard wrap --help"
                ))
            }
            _ => return Ok(()),
        }
    }
    Ok(())
}

impl PolicyArgs {
    /// The policy flags in command-line order: `--root` and
    /// `--readonly=ROOT` both set the root, and the later one wins.
    fn flags(&self, m: &ArgMatches) -> Vec<Flag> {
        let at =
            |id: &str| -> Vec<usize> { m.indices_of(id).map(|i| i.collect()).unwrap_or_default() };
        let last = |i: &[usize]| i.last().copied().unwrap_or(0);
        let mut v: Vec<(usize, Flag)> = Vec::new();
        // A bare `--readonly` has no value and so no index; it only sets
        // `readonly`, whose place does not matter.
        let bare = m
            .get_occurrences::<String>("readonly")
            .map(|o| o.filter(|vals| vals.len() == 0).count())
            .unwrap_or(0);
        v.extend((0..bare).map(|_| (0, Flag::Readonly(None))));
        v.extend(
            at("readonly")
                .into_iter()
                .zip(&self.readonly)
                .map(|(i, r)| (i, Flag::Readonly(Some(r.clone())))),
        );
        v.extend(
            at("root")
                .into_iter()
                .zip(&self.root)
                .map(|(i, r)| (i, Flag::Root(r.clone()))),
        );
        for (id, pats, access, kind) in [
            (
                "allow_read",
                &self.allow_read,
                Access::Read,
                ListKind::Allow,
            ),
            ("deny_read", &self.deny_read, Access::Read, ListKind::Deny),
            (
                "deny_read_always",
                &self.deny_read_always,
                Access::Read,
                ListKind::DenyAlways,
            ),
            (
                "allow_write",
                &self.allow_write,
                Access::Write,
                ListKind::Allow,
            ),
            (
                "deny_write",
                &self.deny_write,
                Access::Write,
                ListKind::Deny,
            ),
            (
                "deny_write_always",
                &self.deny_write_always,
                Access::Write,
                ListKind::DenyAlways,
            ),
        ] {
            v.extend(
                at(id)
                    .into_iter()
                    .zip(pats)
                    .map(|(i, p)| (i, Flag::Rule(access, kind, p.clone()))),
            );
        }
        v.extend(
            at("allow_unix_socket")
                .into_iter()
                .zip(&self.allow_unix_socket)
                .map(|(i, p)| (i, Flag::UnixSocket(p.clone()))),
        );
        if let Some(t) = &self.log {
            v.push((last(&at("log")), Flag::Log(t.clone())));
        }
        if let Some(f) = &self.log_format {
            let f = if f == "json" {
                LogFormat::Json
            } else {
                LogFormat::Text
            };
            v.push((last(&at("log_format")), Flag::LogFormat(f)));
        }
        if let Some(u) = self
            .unguarded_exec
            .as_deref()
            .and_then(UnguardedExec::parse)
        {
            v.push((last(&at("unguarded_exec")), Flag::UnguardedExec(u)));
        }
        v.sort_by_key(|(i, _)| *i);
        let mut flags: Vec<Flag> = v.into_iter().map(|(_, f)| f).collect();
        if self.audit {
            flags.push(Flag::Audit);
        }
        if self.no_secrets {
            flags.push(Flag::NoSecrets);
        }
        flags
    }
}

impl RunArgs {
    fn options(self) -> RunOptions {
        RunOptions {
            landlock: match self.landlock {
                _ if self.no_landlock => Landlock::Off,
                Some(v) => v.unwrap_or(Landlock::BestEffort),
                None => Landlock::Auto,
            },
            timeout: self.timeout,
            keep_tmp: self.keep_tmp,
            quiet: self.quiet,
            fail_on_block: self.fail_on_block.map(|n| n.unwrap_or(EXIT_BLOCKED)),
            report: self.report,
        }
    }
}

impl SuggestArgs {
    fn into_args(self) -> Result<suggest::Args, String> {
        let mut run_flags: Vec<OsString> = Vec::new();
        if self.no_landlock {
            run_flags.push("--no-landlock".into());
        }
        if let Some(t) = self.timeout {
            run_flags.push("--timeout".into());
            run_flags.push(t.into());
        }
        match (self.logs.is_empty(), self.cmd.is_empty()) {
            (true, true) => {
                return Err(
                    "suggest: no log and no command given; see fsguard suggest --help".into(),
                )
            }
            (false, false) => return Err("suggest: give logs or -- CMD, not both".into()),
            (false, true) if !run_flags.is_empty() => {
                return Err("suggest: --no-landlock and --timeout go with -- CMD".into())
            }
            _ => {}
        }
        Ok(suggest::Args {
            root: self.root,
            opts: fsguard_policy::suggest::Options {
                exact: self.exact,
                max_depth: self.max_depth,
                ..Default::default()
            },
            merge: self.merge,
            logs: self.logs,
            cmd: self.cmd,
            run_flags,
        })
    }
}

/// A duration as coreutils `timeout` takes it: a number with an optional
/// `s`, `m`, `h` or `d` suffix. Seconds.
pub fn parse_duration(v: &str) -> Option<f64> {
    let (num, mult) = match v.char_indices().last()? {
        (i, 's') => (&v[..i], 1.0),
        (i, 'm') => (&v[..i], 60.0),
        (i, 'h') => (&v[..i], 3600.0),
        (i, 'd') => (&v[..i], 86400.0),
        _ => (v, 1.0),
    };
    let n: f64 = num.parse().ok()?;
    let secs = n * mult;
    (secs.is_finite() && secs > 0.0).then_some(secs)
}
