//! The command line as clap models it: the commands, their options, help
//! texts and value parsers. [`super::parse`] turns it into what the
//! commands read.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{ArgAction, Args, Parser, Subcommand};
use clap_complete::Shell;

use super::parse_duration;

/// Every help page starts with its usage (`usage: fsguard wrap NAME …`).
const TEMPLATE: &str = "usage: {usage}\n\n{about-with-newline}\n{all-args}{after-help}";

const ROOT_USAGE: &str = "\
fsguard run [OPTIONS] [--] CMD [ARGS...]
       fsguard check [OPTIONS]
       fsguard explain [OPTIONS] [--json] [--no-follow] read|write|exec PATH
       fsguard lib-path
       fsguard wrap NAME [--dir DIR] [--force] [OPTIONS] -- CMD [ARGS...]
       fsguard unwrap NAME [--dir DIR]
       fsguard suggest [OPTIONS] LOG.jsonl... | -- CMD [ARGS...]
       fsguard profiles [NAME]
       fsguard completions bash|zsh|fish
       fsguard man";

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

const PROFILES_ABOUT: &str = "\
Without NAME, lists the built-in profiles. With NAME, prints that profile as
TOML: save it as .fsguard.toml (or any config file) to change it, or name it
with `profile = \"NAME\"` in a config and add keys of your own. A profile is
the first layer of the policy: a config file's keys, FSGUARD_* variables and
the command line's options go on top (rule lists add up).";

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
pub(super) struct Line {
    #[command(subcommand)]
    pub(super) command: Sub,
}

#[derive(Subcommand, Debug)]
pub(super) enum Sub {
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
        override_usage = "fsguard explain [OPTIONS] [--json] [--no-follow] read|write|exec PATH",
        help_template = TEMPLATE
    )]
    Explain {
        #[command(flatten)]
        policy: PolicyArgs,
        /// One JSON object: verdict, access, path, rule (and hint)
        #[arg(long)]
        json: bool,
        /// Judge a final symlink itself, not what it points to (as unlink,
        /// rename, lstat and O_NOFOLLOW opens do)
        #[arg(long)]
        no_follow: bool,
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
    /// List the built-in profiles, or print one as TOML (`--profile NAME`)
    #[command(
        override_usage = "fsguard profiles [NAME]",
        help_template = TEMPLATE,
        long_about = PROFILES_ABOUT
    )]
    Profiles {
        /// The profile to print
        #[arg(value_name = "NAME")]
        name: Option<String>,
    },
    /// Print a shell completion script (`fsguard completions bash > …`)
    #[command(help_template = TEMPLATE)]
    Completions {
        /// The shell
        #[arg(value_name = "SHELL")]
        shell: Shell,
    },
    /// Print the manual page, fsguard(1), as roff (`fsguard man > fsguard.1`)
    #[command(help_template = TEMPLATE)]
    Man,
}

/// The policy options of `run`, `check`, `explain` and `wrap`. An option's
/// value may start with `-` (`--deny-read -x`, `--report -`), as before clap.
#[derive(Args, Debug)]
#[command(next_help_heading = "Policy options")]
pub(super) struct PolicyArgs {
    /// A built-in policy (see `fsguard profiles`), the first layer: a
    /// config file's keys and these options go on top
    #[arg(long, value_name = "NAME", value_parser = profile_value(), allow_hyphen_values = true)]
    pub(super) profile: Option<String>,
    /// TOML policy file
    #[arg(long, value_name = "F", allow_hyphen_values = true)]
    pub(super) config: Option<PathBuf>,
    /// Do not look for .fsguard.toml (by default run/check/explain use the
    /// nearest one from the working directory up to the repository top, and
    /// the options given layer over it)
    #[arg(long)]
    pub(super) no_config: bool,
    /// Deny every write (and confine to ROOT if given)
    #[arg(
        long,
        value_name = "ROOT",
        num_args = 0..=1,
        require_equals = true,
        action = ArgAction::Append
    )]
    pub(super) readonly: Vec<String>,
    /// Confine reads and writes to DIR
    #[arg(long, value_name = "DIR", action = ArgAction::Append, allow_hyphen_values = true)]
    pub(super) root: Vec<String>,
    /// Allow reading P (repeatable)
    #[arg(long, value_name = "P", action = ArgAction::Append, allow_hyphen_values = true)]
    pub(super) allow_read: Vec<String>,
    /// Deny reading P (repeatable)
    #[arg(long, value_name = "P", action = ArgAction::Append, allow_hyphen_values = true)]
    pub(super) deny_read: Vec<String>,
    /// Deny reading P, whatever allows it (repeatable)
    #[arg(long, value_name = "P", action = ArgAction::Append, allow_hyphen_values = true)]
    pub(super) deny_read_always: Vec<String>,
    /// Allow writing P (repeatable)
    #[arg(long, value_name = "P", action = ArgAction::Append, allow_hyphen_values = true)]
    pub(super) allow_write: Vec<String>,
    /// Deny writing P (repeatable)
    #[arg(long, value_name = "P", action = ArgAction::Append, allow_hyphen_values = true)]
    pub(super) deny_write: Vec<String>,
    /// Deny writing P, whatever allows it (repeatable)
    #[arg(long, value_name = "P", action = ArgAction::Append, allow_hyphen_values = true)]
    pub(super) deny_write_always: Vec<String>,
    /// Allow connecting and sending to the AF_UNIX socket P (a path
    /// pattern, or @NAME for an abstract socket; repeatable)
    #[arg(long, value_name = "P", action = ArgAction::Append, allow_hyphen_values = true)]
    pub(super) allow_unix_socket: Vec<String>,
    /// Log what would be blocked instead of blocking it; `run` still refuses
    /// writes outside the root (Landlock)
    #[arg(long)]
    pub(super) audit: bool,
    /// Turn off the secrets preset (~/.ssh, ~/.aws, ...)
    #[arg(long)]
    pub(super) no_secrets: bool,
    /// Where trace lines go: stderr, off or a file
    #[arg(long, value_name = "stderr|off|FILE", allow_hyphen_values = true)]
    pub(super) log: Option<String>,
    /// Trace format
    #[arg(long, value_name = "FORMAT", value_parser = ["text", "json"], allow_hyphen_values = true)]
    pub(super) log_format: Option<String>,
    /// Exec of a static program the library cannot follow
    #[arg(long, value_name = "WHAT", value_parser = ["warn", "deny", "allow"], allow_hyphen_values = true)]
    pub(super) unguarded_exec: Option<String>,
}

/// The options of `run` (and `wrap`) beyond the policy.
#[derive(Args, Debug)]
#[command(next_help_heading = "Run options")]
pub(super) struct RunArgs {
    #[cfg_attr(
        not(target_os = "macos"),
        doc = "Landlock (on by default where the kernel has it); =required: fail \
               (125) unless fully enforced"
    )]
    #[cfg_attr(
        target_os = "macos",
        doc = "The Seatbelt profile made from the policy (on by default); \
               =required: fail (125) unless the kernel takes it"
    )]
    #[arg(
        long,
        value_name = "required",
        require_equals = true,
        value_parser = landlock_value,
        overrides_with = "no_landlock"
    )]
    pub(super) landlock: Option<Option<Landlock>>,
    /// The library alone guards (static programs run unconfined)
    #[arg(long, overrides_with = "landlock")]
    pub(super) no_landlock: bool,
    /// SIGTERM after DURATION (10, 2.5s, 3m, 1h, 1d), SIGKILL after a grace
    /// period; exit 124
    #[arg(long, value_name = "DURATION", value_parser = timeout_value, allow_hyphen_values = true)]
    pub(super) timeout: Option<f64>,
    /// Keep the command's private TMPDIR
    #[arg(long)]
    pub(super) keep_tmp: bool,
    /// No summary of blocked accesses at exit
    #[arg(short, long)]
    pub(super) quiet: bool,
    /// Exit N (1-255, default 3) when anything was blocked (with --audit:
    /// would have been)
    #[arg(
        long,
        value_name = "N",
        require_equals = true,
        value_parser = status_value
    )]
    pub(super) fail_on_block: Option<Option<u8>>,
    /// At exit, a table of refused accesses by rule and directory (-:
    /// standard error, instead of the summary)
    #[arg(long, value_name = "FILE|-", allow_hyphen_values = true)]
    pub(super) report: Option<String>,
}

/// `wrap`'s own options.
#[derive(Args, Debug)]
#[command(next_help_heading = "Wrap options")]
pub(super) struct WrapArgs {
    /// Where to write the wrapper (default ~/.local/bin)
    #[arg(long, value_name = "DIR", value_parser = dir_value, allow_hyphen_values = true)]
    pub(super) dir: Option<PathBuf>,
    /// Replace an existing file
    #[arg(short, long)]
    pub(super) force: bool,
}

/// The options of `suggest` (no policy options).
#[derive(Args, Debug)]
pub(super) struct SuggestArgs {
    /// The workspace (default: the current directory); the audit run must
    /// have used the same --root
    #[arg(long, value_name = "DIR", allow_hyphen_values = true)]
    pub(super) root: Option<String>,
    /// No rule deeper than N components below its anchor (home, a temp dir,
    /// a cache, /)
    #[arg(long, value_name = "N", value_parser = depth_value, conflicts_with = "exact", allow_hyphen_values = true)]
    pub(super) max_depth: Option<usize>,
    /// No generalisation: one rule per path
    #[arg(long)]
    pub(super) exact: bool,
    /// Add to the policy in FILE (its comments are kept); its rules count as
    /// allowed already
    #[arg(long, value_name = "FILE", allow_hyphen_values = true)]
    pub(super) merge: Option<PathBuf>,
    /// With -- CMD, passed on to `fsguard run`: the library alone guards, so
    /// writes outside the workspace go ahead and are learnt in one run
    #[arg(long)]
    pub(super) no_landlock: bool,
    /// With -- CMD, passed on to `fsguard run`
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true)]
    pub(super) timeout: Option<String>,
    /// JSON trace lines of a run (`--log-format json`)
    #[arg(value_name = "LOG.jsonl")]
    pub(super) logs: Vec<PathBuf>,
    /// The command to run under `fsguard run --audit` first
    #[arg(value_name = "CMD", last = true)]
    pub(super) cmd: Vec<OsString>,
}

/// A profile's name, or the error that lists them; the names are clap's
/// possible values too (help, completions).
fn profile_value() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(fsguard_policy::profiles::names())
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

/// `--landlock`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Landlock {
    /// The default: applied where the kernel has Landlock, silently skipped
    /// where it has none; partial enforcement is reported.
    #[default]
    Auto,
    /// `--no-landlock`.
    Off,
    /// `--landlock`: applied if the kernel has it, else a warning.
    BestEffort,
    /// Fully enforced, or fsguard fails (125).
    Required,
}
