//! Running children: spawn with a timeout, collect the output, describe the
//! command line when a test fails.

use super::trace::{traces, Trace};
use std::fmt::Write as _;
use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How long any single child may run before the test kills it and fails.
pub const CHILD_TIMEOUT: Duration = Duration::from_secs(120);

#[derive(Debug, Clone)]
pub struct Out {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    pub cmdline: String,
}

impl Out {
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }

    /// Trace lines of blocked calls on stderr.
    pub fn blocked(&self) -> Vec<Trace> {
        traces(&self.stderr, "blocked")
    }

    pub fn describe(&self) -> String {
        format!(
            "command: {}\nstatus: {}{}\n--- stdout ---\n{}--- stderr ---\n{}--------------",
            self.cmdline,
            self.status,
            self.status
                .signal()
                .map(|s| format!(" (signal {s})"))
                .unwrap_or_default(),
            ensure_nl(&self.stdout),
            ensure_nl(&self.stderr)
        )
    }
}

fn ensure_nl(s: &str) -> String {
    if s.is_empty() || s.ends_with('\n') {
        s.to_string()
    } else {
        format!("{s}\n")
    }
}

fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-=+:,%@{}".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// A printable command line, including the environment the test set.
pub fn describe_command(cmd: &Command) -> String {
    let mut s = String::new();
    if let Some(d) = cmd.get_current_dir() {
        let _ = write!(s, "cd {} && ", shell_quote(&d.to_string_lossy()));
    }
    for (k, v) in cmd.get_envs() {
        if let Some(v) = v {
            let _ = write!(
                s,
                "{}={} ",
                k.to_string_lossy(),
                shell_quote(&v.to_string_lossy())
            );
        }
    }
    s.push_str(&shell_quote(&cmd.get_program().to_string_lossy()));
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&shell_quote(&a.to_string_lossy()));
    }
    s
}

/// Spawns `cmd`, retrying while the kernel answers ETXTBSY: a program a
/// test has just written can still be open for writing in a child another
/// test thread forked in between (until that child's exec closes it).
pub fn spawn_retrying(cmd: &mut Command) -> std::io::Result<std::process::Child> {
    let mut tries = 0;
    loop {
        match cmd.spawn() {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) && tries < 100 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(20));
            }
            r => return r,
        }
    }
}

/// Run a child (stdin = /dev/null) with a timeout; never panics on the
/// child's exit status, only on spawn failure or timeout.
pub fn run(cmd: &mut Command) -> Out {
    let cmdline = describe_command(cmd);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = spawn_retrying(cmd).unwrap_or_else(|e| panic!("cannot spawn `{cmdline}`: {e}"));
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let t1 = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = so.read_to_end(&mut v);
        v
    });
    let t2 = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = se.read_to_end(&mut v);
        v
    });
    let deadline = Instant::now() + CHILD_TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break st,
            Ok(None) => {
                if Instant::now() > deadline {
                    let _ = child.kill();
                    let st = child.wait().unwrap();
                    let out = Out {
                        status: st,
                        stdout: String::from_utf8_lossy(&t1.join().unwrap()).into_owned(),
                        stderr: String::from_utf8_lossy(&t2.join().unwrap()).into_owned(),
                        cmdline,
                    };
                    panic!(
                        "child did not finish within {:?} (hang/deadlock?)\n{}",
                        CHILD_TIMEOUT,
                        out.describe()
                    );
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(e) => panic!("wait failed for `{cmdline}`: {e}"),
        }
    };
    Out {
        status,
        stdout: String::from_utf8_lossy(&t1.join().unwrap()).into_owned(),
        stderr: String::from_utf8_lossy(&t2.join().unwrap()).into_owned(),
        cmdline,
    }
}
