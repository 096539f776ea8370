//! `fsguard`: run a command under libfsguard, check a policy, explain a verdict.

#![deny(clippy::undocumented_unsafe_blocks)]

mod args;
mod channel;
mod check;
mod discover;
mod embed;
// The handshake gate is Linux's; elsewhere the same interface without it
// (docs/macos.md). The kernel-enforced layer is Landlock on Linux, a
// Seatbelt profile on macOS, behind one interface.
#[cfg_attr(not(target_os = "linux"), path = "nogate.rs")]
mod gate;
#[cfg_attr(target_os = "macos", path = "seatbelt.rs")]
mod landlock;
mod library;
mod logfile;
mod outcome;
mod presets;
mod relay;
mod report;
mod run;
mod settings;
mod signals;
mod sockets;
mod spawn;
mod suggest;
mod sys;
mod tmpdir;
mod tools;
mod wrap;

use std::process::ExitCode;

use args::Invocation;
pub(crate) use args::{Cli, Flag, USAGE};
pub(crate) use settings::settings;

/// Exit status for fsguard's own failures (bad usage or policy, library missing).
const EXIT_FSGUARD: u8 = 125;

fn main() -> ExitCode {
    let result = args::parse(std::env::args_os().skip(1).collect()).and_then(dispatch);
    match result {
        Ok(code) => code,
        Err(msg) => {
            eprintln!("fsguard: error: {msg}");
            ExitCode::from(EXIT_FSGUARD)
        }
    }
}

fn dispatch(invocation: Invocation) -> Result<ExitCode, String> {
    match invocation {
        Invocation::Policy(cli) => match cli.command.as_str() {
            "run" => run::cmd_run(&cli),
            "check" => check::cmd_check(&cli),
            "explain" => check::cmd_explain(&cli),
            "lib-path" => run::cmd_lib_path(&cli),
            other => Err(format!("unknown command {other:?}")),
        },
        Invocation::Wrap { name, cli, argv } => wrap::cmd_wrap(&name, &cli, &argv),
        Invocation::Unwrap { name, dir } => wrap::cmd_unwrap(&name, dir.as_deref()),
        Invocation::Suggest(a) => suggest::cmd_suggest(a),
        Invocation::Profiles(name) => check::cmd_profiles(name.as_deref()),
        Invocation::Man => {
            args::man()?;
            Ok(ExitCode::SUCCESS)
        }
        Invocation::Completions(shell) => {
            args::completions(shell);
            Ok(ExitCode::SUCCESS)
        }
        Invocation::Info(e) => {
            // Help and version go to stdout; a closed pipe is not an error.
            let _ = e.print();
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Writes to stdout; a reader that went away (`fsguard check | head`) is
/// not an error worth a panic.
pub(crate) fn say(text: &str) {
    use std::io::Write;
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}
