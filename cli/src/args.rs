//! The command line: its model for clap (help, version, errors, shell
//! completions) and what the commands read from it.
//!
//! Conventions kept from before clap: the first operand of `run` and `wrap`
//! ends the options (`fsguard run cmd --root x` passes `--root x` to `cmd`);
//! repeated rule flags add up, other repeated options take the last value;
//! `--readonly`, `--landlock` and `--fail-on-block` take their optional
//! value only after `=`; and every usage error is fsguard's own failure,
//! `fsguard: error: …`, exit 125 (not clap's 2).

use std::ffi::OsString;
use std::path::PathBuf;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{ArgAction, ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use clap_complete::Shell;
use fsguard_policy::{Access, ListKind, LogFormat, UnguardedExec};

use crate::landlock::Landlock;
use crate::suggest;

/// `--fail-on-block`'s status when no N is given.
pub const EXIT_BLOCKED: u8 = 3;

/// A reminder of `run`'s usage, after an error that needs one.
pub const USAGE: &str = "usage: fsguard run [OPTIONS] [--] CMD [ARGS...]  (see fsguard run --help)";

/// Every help page starts with its usage (`usage: fsguard wrap NAME …`).
const TEMPLATE: &str = "usage: {usage}\n\n{about-with-newline}\n{all-args}{after-help}";

const ROOT_USAGE: &str = "\
fsguard run [OPTIONS] [--] CMD [ARGS...]
       fsguard check [OPTIONS]
       fsguard explain [OPTIONS] [--json] read|write|exec PATH
       fsguard lib-path
       fsguard wrap NAME [--dir DIR] [--force] [OPTIONS] -- CMD [ARGS...]
       fsguard unwrap NAME [--dir DIR]
       fsguard suggest [OPTIONS] LOG.jsonl... | -- CMD [ARGS...]
       fsguard completions bash|zsh|fish";

const WRAP_ABOUT: &str = "\
Writes an executable script DIR/NAME (DIR: ~/.local/bin by default, created
if missing) that runs `fsguard run OPTIONS -- CMD ARGS... \"$@\"`: the
wrapper's own arguments are appended, and stdin, stdout, stderr and the exit
status pass through.

OPTIONS are those of `fsguard run`; they are checked now, and a bad option
or policy is refused (exit 125). Relative paths in them (--root,
--readonly=ROOT, --config, --log FILE, relative rule patterns) and a
relative CMD containing a slash are made absolute against the current
directory, so the wrapper works from any directory. A bare CMD is looked up
on PATH when the wrapper runs. Remove a wrapper with
`fsguard unwrap NAME [--dir DIR]`.";

const SUGGEST_ABOUT: &str = "\
Writes to stdout a commented TOML policy that allows what the run did
(every access its JSON trace lines show refused), generalised.
With -- CMD: runs CMD under `fsguard run --audit --root DIR` first (the
command's output goes to stderr, with a report of what was refused).";

/// The `fsguard` command line.
#[derive(Parser, Debug)]
#[command(
    name = "fsguard",
    version,
    about = "Run a command under libfsguard, check a policy, explain a verdict",
    override_usage = ROOT_USAGE,
    help_template = TEMPLATE,
    after_help = "`fsguard COMMAND --help` shows a command's options.",
    subcommand_required = true,
    args_override_self = true,
    max_term_width = 100
)]
struct Line {
    #[command(subcommand)]
    command: Sub,
}

#[derive(Subcommand, Debug)]
enum Sub {
    /// Run CMD under the guard
    #[command(
        override_usage = "fsguard run [OPTIONS] [--] CMD [ARGS...]",
        help_template = TEMPLATE,
        after_help = "The first operand ends the options: `fsguard run cmd --root x` \
                      passes --root x to cmd."
    )]
    Run {
        #[command(flatten)]
        policy: PolicyArgs,
        #[command(flatten)]
        run: RunArgs,
        /// The command and its arguments
        #[arg(value_name = "CMD", trailing_var_arg = true)]
        cmd: Vec<OsString>,
    },
    /// Validate and print the effective policy
    #[command(help_template = TEMPLATE)]
    Check {
        #[command(flatten)]
        policy: PolicyArgs,
    },
    /// The verdict for PATH and the rule behind it (exit 0: allowed, 1: denied)
    #[command(
        override_usage = "fsguard explain [OPTIONS] [--json] read|write|exec PATH",
        help_template = TEMPLATE
    )]
    Explain {
        #[command(flatten)]
        policy: PolicyArgs,
        /// One JSON object: verdict, access, path, rule (and hint)
        #[arg(long)]
        json: bool,
        /// The access to decide
        #[arg(value_name = "ACCESS", value_parser = ["read", "write", "exec"])]
        access: String,
        /// The path, resolved as the library would
        #[arg(value_name = "PATH")]
        path: OsString,
    },
    /// The absolute path of the library run uses
    #[command(help_template = TEMPLATE)]
    LibPath,
    /// Write ~/.local/bin/NAME, a script that runs CMD under these options
    #[command(
        override_usage = "fsguard wrap NAME [--dir DIR] [--force] [OPTIONS] -- CMD [ARGS...]",
        help_template = TEMPLATE,
        long_about = WRAP_ABOUT
    )]
    Wrap {
        /// The wrapper's file name
        #[arg(value_name = "NAME")]
        name: OsString,
        #[command(flatten)]
        wrap: WrapArgs,
        #[command(flatten)]
        policy: PolicyArgs,
        #[command(flatten)]
        run: RunArgs,
        /// The command and its arguments
        #[arg(value_name = "CMD", trailing_var_arg = true)]
        cmd: Vec<OsString>,
    },
    /// Remove a script fsguard wrap made
    #[command(
        override_usage = "fsguard unwrap NAME [--dir DIR]",
        help_template = TEMPLATE,
        long_about = "Removes DIR/NAME (DIR: ~/.local/bin by default) if `fsguard wrap` \
                      made it; any other file is left alone (exit 125)."
    )]
    Unwrap {
        /// The wrapper's file name
        #[arg(value_name = "NAME")]
        name: OsString,
        /// Where the wrapper is (default ~/.local/bin)
        #[arg(long, value_name = "DIR", value_parser = dir_value, allow_hyphen_values = true)]
        dir: Option<PathBuf>,
    },
    /// A policy that allows what a run did
    #[command(
        override_usage = "fsguard suggest [OPTIONS] LOG.jsonl...\n       \
                          fsguard suggest [OPTIONS] -- CMD [ARGS...]",
        help_template = TEMPLATE,
        long_about = SUGGEST_ABOUT
    )]
    Suggest(SuggestArgs),
    /// Print a shell completion script (`fsguard completions bash > …`)
    #[command(help_template = TEMPLATE)]
    Completions {
        /// The shell
        #[arg(value_name = "SHELL")]
        shell: Shell,
    },
}

/// The policy options of `run`, `check`, `explain` and `wrap`. An option's
/// value may start with `-` (`--deny-read -x`, `--report -`), as before clap.
#[derive(Args, Debug)]
#[command(next_help_heading = "Policy options")]
struct PolicyArgs {
    /// TOML policy file
    #[arg(long, value_name = "F", allow_hyphen_values = true)]
    config: Option<PathBuf>,
    /// Do not look for .fsguard.toml (by default, with no policy option,
    /// run/check/explain use the nearest one from the working directory up
    /// to the repository top)
    #[arg(long)]
    no_config: bool,
    /// Deny every write (and confine to ROOT if given)
    #[arg(
        long,
        value_name = "ROOT",
        num_args = 0..=1,
        require_equals = true,
        action = ArgAction::Append
    )]
    readonly: Vec<String>,
    /// Confine reads and writes to DIR
    #[arg(long, value_name = "DIR", action = ArgAction::Append, allow_hyphen_values = true)]
    root: Vec<String>,
    /// Allow reading P (repeatable)
    #[arg(long, value_name = "P", action = ArgAction::Append, allow_hyphen_values = true)]
    allow_read: Vec<String>,
    /// Deny reading P (repeatable)
    #[arg(long, value_name = "P", action = ArgAction::Append, allow_hyphen_values = true)]
    deny_read: Vec<String>,
    /// Deny reading P, whatever allows it (repeatable)
    #[arg(long, value_name = "P", action = ArgAction::Append, allow_hyphen_values = true)]
    deny_read_always: Vec<String>,
    /// Allow writing P (repeatable)
    #[arg(long, value_name = "P", action = ArgAction::Append, allow_hyphen_values = true)]
    allow_write: Vec<String>,
    /// Deny writing P (repeatable)
    #[arg(long, value_name = "P", action = ArgAction::Append, allow_hyphen_values = true)]
    deny_write: Vec<String>,
    /// Deny writing P, whatever allows it (repeatable)
    #[arg(long, value_name = "P", action = ArgAction::Append, allow_hyphen_values = true)]
    deny_write_always: Vec<String>,
    /// Log what would be blocked instead of blocking it; `run` still refuses
    /// writes outside the root (Landlock)
    #[arg(long)]
    audit: bool,
    /// Turn off the secrets preset (~/.ssh, ~/.aws, ...)
    #[arg(long)]
    no_secrets: bool,
    /// Where trace lines go: stderr, off or a file
    #[arg(long, value_name = "stderr|off|FILE", allow_hyphen_values = true)]
    log: Option<String>,
    /// Trace format
    #[arg(long, value_name = "FORMAT", value_parser = ["text", "json"], allow_hyphen_values = true)]
    log_format: Option<String>,
    /// Exec of a static program the library cannot follow
    #[arg(long, value_name = "WHAT", value_parser = ["warn", "deny", "allow"], allow_hyphen_values = true)]
    unguarded_exec: Option<String>,
}

/// The options of `run` (and `wrap`) beyond the policy.
#[derive(Args, Debug)]
#[command(next_help_heading = "Run options")]
struct RunArgs {
    /// Landlock (on by default where the kernel has it); =required: fail
    /// (125) unless fully enforced
    #[arg(
        long,
        value_name = "required",
        require_equals = true,
        value_parser = landlock_value,
        overrides_with = "no_landlock"
    )]
    landlock: Option<Option<Landlock>>,
    /// The library alone guards (static programs run unconfined)
    #[arg(long, overrides_with = "landlock")]
    no_landlock: bool,
    /// SIGTERM after DURATION (10, 2.5s, 3m, 1h, 1d), SIGKILL after a grace
    /// period; exit 124
    #[arg(long, value_name = "DURATION", value_parser = timeout_value, allow_hyphen_values = true)]
    timeout: Option<f64>,
    /// Keep the command's private TMPDIR
    #[arg(long)]
    keep_tmp: bool,
    /// No summary of blocked accesses at exit
    #[arg(short, long)]
    quiet: bool,
    /// Exit N (1-255, default 3) when anything was blocked (with --audit:
    /// would have been)
    #[arg(
        long,
        value_name = "N",
        require_equals = true,
        value_parser = status_value
    )]
    fail_on_block: Option<Option<u8>>,
    /// At exit, a table of refused accesses by rule and directory (-:
    /// standard error, instead of the summary)
    #[arg(long, value_name = "FILE|-", allow_hyphen_values = true)]
    report: Option<String>,
}

/// `wrap`'s own options.
#[derive(Args, Debug)]
#[command(next_help_heading = "Wrap options")]
struct WrapArgs {
    /// Where to write the wrapper (default ~/.local/bin)
    #[arg(long, value_name = "DIR", value_parser = dir_value, allow_hyphen_values = true)]
    dir: Option<PathBuf>,
    /// Replace an existing file
    #[arg(short, long)]
    force: bool,
}

/// The options of `suggest` (no policy options).
#[derive(Args, Debug)]
struct SuggestArgs {
    /// The workspace (default: the current directory); the audit run must
    /// have used the same --root
    #[arg(long, value_name = "DIR", allow_hyphen_values = true)]
    root: Option<String>,
    /// No rule deeper than N components below its anchor (home, a temp dir,
    /// a cache, /)
    #[arg(long, value_name = "N", value_parser = depth_value, conflicts_with = "exact", allow_hyphen_values = true)]
    max_depth: Option<usize>,
    /// No generalisation: one rule per path
    #[arg(long)]
    exact: bool,
    /// Add to the policy in FILE (its comments are kept); its rules count as
    /// allowed already
    #[arg(long, value_name = "FILE", allow_hyphen_values = true)]
    merge: Option<PathBuf>,
    /// With -- CMD, passed on to `fsguard run`: the library alone guards, so
    /// writes outside the workspace go ahead and are learnt in one run
    #[arg(long)]
    no_landlock: bool,
    /// With -- CMD, passed on to `fsguard run`
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true)]
    timeout: Option<String>,
    /// JSON trace lines of a run (`--log-format json`)
    #[arg(value_name = "LOG.jsonl")]
    logs: Vec<PathBuf>,
    /// The command to run under `fsguard run --audit` first
    #[arg(value_name = "CMD", last = true)]
    cmd: Vec<OsString>,
}

/// Parsed command line of `run`, `check`, `explain`, `lib-path` and `wrap`.
#[derive(Default)]
pub struct Cli {
    pub command: String,
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
}

/// A policy flag, applied over the config and the environment in order.
pub enum Flag {
    Readonly(Option<String>),
    Root(String),
    Rule(Access, ListKind, String),
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
        config: policy.config.clone(),
        no_config: policy.no_config,
        flags: policy.flags(sub),
        ..Cli::default()
    };
    Ok(match line.command {
        Sub::Run { policy, run, cmd } => Invocation::Policy(Cli {
            rest: cmd,
            run: run.options(),
            ..cli("run", policy)
        }),
        Sub::Check { policy } => Invocation::Policy(cli("check", policy)),
        Sub::Explain {
            policy,
            json,
            access,
            path,
        } => Invocation::Policy(Cli {
            rest: vec![access.into(), path],
            json,
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
    })
}

/// `fsguard completions SHELL`: the script, on stdout.
pub fn completions(shell: Shell) {
    let mut cmd = Line::command();
    clap_complete::generate(shell, &mut cmd, "fsguard", &mut std::io::stdout());
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

fn landlock_value(v: &str) -> Result<Landlock, String> {
    match v {
        "required" => Ok(Landlock::Required),
        _ => Err(format!("--landlock: bad value {v:?} (only =required)")),
    }
}

fn timeout_value(v: &str) -> Result<f64, String> {
    parse_duration(v)
        .ok_or_else(|| format!("--timeout: bad value {v:?} (a duration > 0: 10, 2.5s, 3m, 1h, 1d)"))
}

fn status_value(v: &str) -> Result<u8, String> {
    v.parse()
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| format!("--fail-on-block: bad value {v:?} (a status from 1 to 255)"))
}

fn dir_value(v: &str) -> Result<PathBuf, String> {
    if v.is_empty() {
        return Err("--dir: empty value".into());
    }
    Ok(PathBuf::from(v))
}

fn depth_value(v: &str) -> Result<usize, String> {
    v.parse()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("--max-depth: bad value {v:?} (a number > 0)"))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    fn cli(v: &[&str]) -> Result<Cli, String> {
        match parse(os(v))? {
            Invocation::Policy(c) => Ok(c),
            Invocation::Wrap { cli, .. } => Ok(cli),
            _ => Err("not a policy command".into()),
        }
    }

    #[test]
    fn parses_flags_and_command() {
        let c = cli(&[
            "run",
            "--readonly=ws",
            "--deny-read",
            "*.pem",
            "--",
            "ls",
            "-l",
        ])
        .unwrap();
        assert_eq!(c.command, "run");
        assert_eq!(c.rest, os(&["ls", "-l"]));
        assert!(matches!(&c.flags[0], Flag::Readonly(Some(r)) if r == "ws"));
        assert!(matches!(&c.flags[1], Flag::Rule(Access::Read, ListKind::Deny, p) if p == "*.pem"));
        let c = cli(&["run", "--readonly", "ls", "--root", "x"]).unwrap();
        assert_eq!(
            c.rest,
            os(&["ls", "--root", "x"]),
            "options after the command are its own"
        );
        assert!(matches!(&c.flags[..], [Flag::Readonly(None)]));
        let e = cli(&["run", "--bogus"]).err().unwrap();
        assert!(e.starts_with("unknown option --bogus\n"), "{e}");
        assert!(cli(&["run", "--root"]).is_err());
        // A value may start with `-`.
        let c = cli(&["run", "--deny-read", "-x", "--report", "-", "true"]).unwrap();
        assert!(matches!(&c.flags[..], [Flag::Rule(_, _, p)] if p == "-x"));
        assert_eq!(c.run.report.as_deref(), Some("-"));
    }

    #[test]
    fn flags_keep_their_order_and_repeat() {
        let c = cli(&[
            "check",
            "--root",
            "a",
            "--allow-read",
            "x",
            "--readonly=b",
            "--allow-read",
            "y",
            "--root",
            "c",
            "--audit",
            "--audit",
        ])
        .unwrap();
        let shown: Vec<String> = c
            .flags
            .iter()
            .map(|f| match f {
                Flag::Root(r) => format!("root {r}"),
                Flag::Readonly(r) => format!("readonly {r:?}"),
                Flag::Rule(_, _, p) => format!("rule {p}"),
                Flag::Audit => "audit".into(),
                _ => "other".into(),
            })
            .collect();
        assert_eq!(
            shown,
            [
                "root a",
                "rule x",
                "readonly Some(\"b\")",
                "rule y",
                "root c",
                "audit"
            ]
        );
        // Other options: the last one wins.
        let c = cli(&["check", "--config", "a", "--config", "b", "--log", "off"]).unwrap();
        assert_eq!(c.config, Some(PathBuf::from("b")));
    }

    #[test]
    fn run_options() {
        let r = |v: &[&str]| {
            let mut a = vec!["run"];
            a.extend_from_slice(v);
            a.push("true");
            cli(&a).map(|c| c.run)
        };
        let o = r(&["--timeout", "2.5", "--landlock=required", "-q"]).unwrap();
        assert_eq!(o.timeout, Some(2.5));
        assert_eq!(o.landlock, Landlock::Required);
        assert!(o.quiet);
        assert_eq!(r(&["--landlock"]).unwrap().landlock, Landlock::BestEffort);
        assert_eq!(r(&[]).unwrap().landlock, Landlock::Auto);
        assert_eq!(
            r(&["--landlock", "--no-landlock"]).unwrap().landlock,
            Landlock::Off
        );
        assert_eq!(
            r(&["--no-landlock", "--landlock"]).unwrap().landlock,
            Landlock::BestEffort
        );
        assert!(r(&["--landlock=maybe"])
            .err()
            .unwrap()
            .starts_with("--landlock: bad value \"maybe\""));
        assert!(r(&["--timeout=-1"]).is_err());
        assert_eq!(r(&["--timeout", "1s"]).unwrap().timeout, Some(1.0));
        assert_eq!(r(&["--fail-on-block"]).unwrap().fail_on_block, Some(3));
        assert_eq!(r(&["--fail-on-block=9"]).unwrap().fail_on_block, Some(9));
        for bad in ["--fail-on-block=0", "--fail-on-block=256"] {
            let e = r(&[bad]).err().unwrap();
            assert!(e.starts_with("--fail-on-block: bad value"), "{e}");
        }
        // `--fail-on-block 5`: 5 is the command, not the status.
        let c = cli(&["run", "--fail-on-block", "5"]).unwrap();
        assert_eq!((c.run.fail_on_block, c.rest), (Some(3), os(&["5"])));
        assert_eq!(parse_duration("2m"), Some(120.0));
        assert_eq!(parse_duration("0.5h"), Some(1800.0));
        assert_eq!(parse_duration("1d"), Some(86400.0));
        assert_eq!(parse_duration("5x"), None);
        assert_eq!(parse_duration("0s"), None);
        assert_eq!(parse_duration("s"), None);
    }

    #[test]
    fn wrap_takes_name_first() {
        let c = cli(&[
            "wrap", "--dir", "b", "-f", "py", "--root", "x", "--", "python3",
        ])
        .unwrap();
        assert_eq!(c.rest, os(&["python3"]));
        assert_eq!(c.wrap.dir, Some(PathBuf::from("b")));
        assert!(c.wrap.force);
        let e = cli(&["wrap", "--root", "x", "py", "--", "python3"])
            .err()
            .unwrap();
        assert!(e.contains("NAME must come before the options"), "{e}");
    }

    #[test]
    fn suggest_logs_or_command() {
        let s = |v: &[&str]| {
            let mut a = vec!["suggest"];
            a.extend_from_slice(v);
            match parse(os(&a))? {
                Invocation::Suggest(s) => Ok(s),
                _ => Err("not suggest".to_string()),
            }
        };
        let a = s(&["--max-depth", "2", "a.jsonl", "b.jsonl"]).unwrap();
        assert_eq!(a.logs.len(), 2);
        assert_eq!(a.opts.max_depth, Some(2));
        let a = s(&["--no-landlock", "--", "make", "-j"]).unwrap();
        assert_eq!(a.cmd, os(&["make", "-j"]));
        assert_eq!(a.run_flags, os(&["--no-landlock"]));
        assert!(s(&[]).is_err());
        assert!(s(&["--exact", "--max-depth", "2", "a"]).is_err());
        assert!(s(&["a", "--", "b"]).is_err());
        assert!(s(&["--timeout", "3", "a"]).is_err());
    }

    #[test]
    fn the_model_is_consistent() {
        Line::command().debug_assert();
    }
}
