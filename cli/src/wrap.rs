//! `fsguard wrap` and `fsguard unwrap`: a small POSIX sh script that runs
//! one command under `fsguard run` with a fixed policy.
//!
//! `fsguard wrap NAME [OPTIONS] -- CMD [ARGS...]` parses and validates the
//! options exactly as `run` does (a bad one is refused now, exit 125), makes
//! every relative path in them absolute against the current directory (the
//! wrapper behaves as `fsguard run` started here would, from any directory),
//! and writes `DIR/NAME` (default `~/.local/bin`), mode 0755:
//!
//! ```sh
//! #!/bin/sh
//! # Made by `fsguard wrap` on 2025-01-01 12:00:00 UTC with:
//! #   fsguard wrap py --root /home/u/proj -- python3
//! # fsguard-wrapper: remove with `fsguard unwrap py`
//! exec /usr/local/bin/fsguard run --root /home/u/proj -- python3 "$@"
//! ```
//!
//! `fsguard unwrap NAME` removes it, and only a file carrying the marker line.

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use fsguard_policy::{Access, ListKind, LogFormat, Policy, UnguardedExec};

use crate::landlock::{kernel_abi, Landlock};
use crate::{settings, Cli, Flag};

/// The line `unwrap` looks for; the rest of that line names the wrapper.
const MARKER: &str = "# fsguard-wrapper:";

/// Only the start of a file is read when looking for the marker.
const HEAD_MAX: usize = 64 * 1024;

/// `fsguard wrap NAME …`; `argv` is the command line (from `wrap`).
pub fn cmd_wrap(name: &OsStr, cli: &Cli, argv: &[OsString]) -> Result<ExitCode, String> {
    check_name(name)?;
    if cli.rest.is_empty() {
        return Err("wrap: no command given (… -- CMD [ARGS...]); see fsguard wrap --help".into());
    }
    let cwd = std::env::current_dir().map_err(|e| format!("current directory: {e}"))?;
    // The command: a relative path with a slash is made absolute; a bare
    // name stays a PATH lookup.
    let mut command = cli.rest.clone();
    if command[0].as_bytes().contains(&b'/') && !Path::new(&command[0]).is_absolute() {
        command[0] = absolute(&cwd, Path::new(&command[0])).into_os_string();
    }
    let exe = which(&command[0]);
    if exe.is_none() {
        eprintln!(
            "fsguard: warning: {}: not found now (the wrapper looks for it when it runs)",
            command[0].to_string_lossy()
        );
    }
    // The policy, checked exactly as `run` would check it.
    let s = settings(cli, exe.as_deref())?;
    Policy::new(s).map_err(|e| e.to_string())?;
    if cli.run.landlock == Landlock::Required && kernel_abi() == 0 {
        eprintln!(
            "fsguard: warning: --landlock=required: {}; the wrapper will fail (125) here",
            crate::landlock::UNAVAILABLE
        );
    }

    let options = absolute_options(cli, &cwd)?;
    let fsguard = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .map_err(|e| format!("cannot locate fsguard itself: {e}"))?;
    let dir = target_dir(cli.wrap.dir.as_deref(), &cwd)?;
    let path = dir.join(name);
    let script = render(name, &fsguard, &options, &command, argv);
    write_script(&dir, &path, &script, cli.wrap.force)?;
    eprintln!("fsguard: wrote {}", path.display());
    if !on_path(&dir) {
        eprintln!(
            "fsguard: note: {} is not on PATH; run it as {}",
            dir.display(),
            path.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `fsguard unwrap NAME [--dir DIR]`.
pub fn cmd_unwrap(name: &OsStr, dir: Option<&Path>) -> Result<ExitCode, String> {
    check_name(name)?;
    let cwd = std::env::current_dir().map_err(|e| format!("current directory: {e}"))?;
    let dir = target_dir(dir, &cwd)?;
    let path = dir.join(name);
    let meta = std::fs::symlink_metadata(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    if !meta.file_type().is_file() {
        return Err(format!(
            "{}: not a regular file, so not a wrapper fsguard wrap made; left alone",
            path.display()
        ));
    }
    if !is_wrapper(&path) {
        return Err(format!(
            "{}: not an fsguard wrapper (no `{MARKER}` line); left alone",
            path.display()
        ));
    }
    std::fs::remove_file(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    eprintln!("fsguard: removed {}", path.display());
    Ok(ExitCode::SUCCESS)
}

/// NAME is a file name, not a path.
fn check_name(name: &OsStr) -> Result<(), String> {
    let b = name.as_bytes();
    if b.is_empty()
        || b == b"."
        || b == b".."
        || b.contains(&b'/')
        || b.iter().any(|&c| c < 0x20 || c == 0x7f)
    {
        return Err(format!(
            "bad NAME {:?}: a file name without '/' or control characters \
             (use --dir DIR for the directory)",
            name.to_string_lossy()
        ));
    }
    Ok(())
}

/// `--dir` made absolute, or `~/.local/bin`.
fn target_dir(dir: Option<&Path>, cwd: &Path) -> Result<PathBuf, String> {
    match dir {
        Some(d) => Ok(absolute_clean(cwd, &expand_tilde(d)?)),
        None => {
            let home = std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .ok_or("$HOME is not set: give --dir DIR")?;
            Ok(absolute(cwd, Path::new(&home)).join(".local/bin"))
        }
    }
}

fn expand_tilde(p: &Path) -> Result<PathBuf, String> {
    let b = p.as_os_str().as_bytes();
    if b == b"~" || b.starts_with(b"~/") {
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .ok_or_else(|| format!("{}: $HOME is not set", p.display()))?;
        let mut out = PathBuf::from(home);
        if b.len() > 2 {
            out.push(OsStr::from_bytes(&b[2..]));
        }
        return Ok(out);
    }
    Ok(p.to_path_buf())
}

/// `p` against `base` unless absolute; `.` components dropped, `..` kept
/// (the kernel resolves them when the wrapper runs, as it would now).
fn absolute(base: &Path, p: &Path) -> PathBuf {
    let joined = if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    };
    std::path::absolute(&joined).unwrap_or(joined)
}

/// A relative path made absolute: canonical when it exists (no `..` left
/// in the script), else against `cwd`. An absolute path is kept as given.
fn absolute_clean(cwd: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        return p.to_path_buf();
    }
    std::fs::canonicalize(cwd.join(p)).unwrap_or_else(|_| absolute(cwd, p))
}

/// What the policy library's rule patterns count as glob syntax.
fn has_glob_meta(s: &str) -> bool {
    s.bytes()
        .any(|b| matches!(b, b'*' | b'?' | b'[' | b'{' | b'\\'))
}

/// A rule pattern from a flag, anchored where `run` would anchor it: `~`
/// and absolute patterns as given, a slash-less glob (`*.pem`) at any depth
/// below `cwd`, anything else below `cwd`.
fn absolute_pattern(p: &str, cwd: &Path) -> String {
    if p.starts_with('/') || p == "~" || p.starts_with("~/") {
        return p.to_string();
    }
    let base = cwd.display().to_string();
    let base = base.trim_end_matches('/');
    if has_glob_meta(p) && !p.contains('/') {
        format!("{base}/**/{p}")
    } else {
        format!("{base}/{p}")
    }
}

/// A directory option (`--root`, `--readonly=`) made absolute (`~` kept: it
/// is the user's home wherever the wrapper runs).
fn absolute_dir(d: &str, cwd: &Path) -> String {
    if d == "~" || d.starts_with("~/") || d.starts_with('/') {
        d.to_string()
    } else {
        absolute_clean(cwd, Path::new(d)).display().to_string()
    }
}

/// The parsed options as `run` arguments, every relative path made absolute.
fn absolute_options(cli: &Cli, cwd: &Path) -> Result<Vec<OsString>, String> {
    let mut o: Vec<OsString> = Vec::new();
    let mut push = |v: String| o.push(OsString::from(v));
    // A profile's relative paths are against the directory the wrapper
    // runs in, as with `run --profile`: it names no path of the caller's.
    if let Some(p) = &cli.profile {
        push("--profile".into());
        push(p.clone());
    }
    let mut push = |v: String| o.push(OsString::from(v));
    if let Some(c) = &cli.config {
        push("--config".into());
        let c = absolute_clean(cwd, &expand_tilde(c)?);
        o.push(c.into_os_string());
    }
    let mut push = |v: String| o.push(OsString::from(v));
    if cli.no_config {
        push("--no-config".into());
    }
    for f in &cli.flags {
        match f {
            Flag::Readonly(None) => push("--readonly".into()),
            Flag::Readonly(Some(r)) => push(format!("--readonly={}", absolute_dir(r, cwd))),
            Flag::Root(r) => {
                push("--root".into());
                push(absolute_dir(r, cwd));
            }
            Flag::Rule(a, k, p) => {
                let flag = match (a, k) {
                    (Access::Write, ListKind::Allow) => "--allow-write",
                    (Access::Write, ListKind::Deny) => "--deny-write",
                    (Access::Write, ListKind::DenyAlways) => "--deny-write-always",
                    (_, ListKind::Allow) => "--allow-read",
                    (_, ListKind::Deny) => "--deny-read",
                    (_, ListKind::DenyAlways) => "--deny-read-always",
                };
                push(flag.into());
                push(absolute_pattern(p, cwd));
            }
            Flag::UnixSocket(p) => {
                push("--allow-unix-socket".into());
                push(if p.starts_with('@') {
                    p.clone()
                } else {
                    absolute_pattern(p, cwd)
                });
            }
            Flag::Audit => push("--audit".into()),
            Flag::NoSecrets => push("--no-secrets".into()),
            Flag::Log(t) => {
                push("--log".into());
                push(match t.as_str() {
                    "stderr" | "off" => t.clone(),
                    f => absolute_dir(f, cwd),
                });
            }
            Flag::LogFormat(f) => {
                push("--log-format".into());
                push(
                    if *f == LogFormat::Json {
                        "json"
                    } else {
                        "text"
                    }
                    .into(),
                );
            }
            Flag::UnguardedExec(u) => {
                push("--unguarded-exec".into());
                push(
                    match u {
                        UnguardedExec::Warn => "warn",
                        UnguardedExec::Deny => "deny",
                        UnguardedExec::Allow => "allow",
                    }
                    .into(),
                );
            }
        }
    }
    let r = &cli.run;
    match r.landlock {
        Landlock::Auto => {}
        Landlock::Off => push("--no-landlock".into()),
        Landlock::BestEffort => push("--landlock".into()),
        Landlock::Required => push("--landlock=required".into()),
    }
    if let Some(t) = r.timeout {
        push("--timeout".into());
        push(format!("{t}"));
    }
    if r.keep_tmp {
        push("--keep-tmp".into());
    }
    if r.quiet {
        push("--quiet".into());
    }
    if let Some(n) = r.fail_on_block {
        push(format!("--fail-on-block={n}"));
    }
    Ok(o)
}

/// One word for sh: as is when it holds only characters sh never
/// interprets, else in single quotes (`'` as `'\''`).
fn sh_quote(w: &OsStr) -> Vec<u8> {
    let b = w.as_bytes();
    let plain = !b.is_empty()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || b"/._-+=:,@%".contains(c));
    if plain {
        return b.to_vec();
    }
    let mut out = vec![b'\''];
    for &c in b {
        if c == b'\'' {
            out.extend_from_slice(b"'\\''");
        } else {
            out.push(c);
        }
    }
    out.push(b'\'');
    out
}

fn sh_words<'a>(words: impl IntoIterator<Item = &'a OsStr>) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, w) in words.into_iter().enumerate() {
        if i > 0 {
            out.push(b' ');
        }
        out.extend(sh_quote(w));
    }
    out
}

/// Text as comment lines: every line (a quoted argument may hold a
/// newline) starts with `prefix`.
fn comment(prefix: &str, text: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for line in text.split(|&c| c == b'\n') {
        out.extend_from_slice(prefix.as_bytes());
        out.extend(line.iter().map(|&c| if c == b'\r' { b' ' } else { c }));
        out.push(b'\n');
    }
    out
}

fn render(
    name: &OsStr,
    fsguard: &Path,
    options: &[OsString],
    command: &[OsString],
    cmdline: &[OsString],
) -> Vec<u8> {
    let mut s = Vec::new();
    s.extend_from_slice(b"#!/bin/sh\n");
    s.extend_from_slice(format!("# Made by `fsguard wrap` on {} with:\n", utc_now()).as_bytes());
    let mut made = vec![OsString::from("fsguard")];
    made.extend(cmdline.iter().cloned());
    s.extend(comment(
        "#   ",
        &sh_words(made.iter().map(OsString::as_os_str)),
    ));
    s.extend_from_slice(
        b"# It runs the command below under `fsguard run` with this script's\n\
          # arguments appended; stdin, output and exit status pass through.\n",
    );
    let name_q = String::from_utf8_lossy(&sh_quote(name)).into_owned();
    s.extend(comment(
        "",
        format!("{MARKER} remove with `fsguard unwrap {name_q}`").as_bytes(),
    ));
    s.extend_from_slice(b"exec ");
    let mut words: Vec<&OsStr> = vec![fsguard.as_os_str(), OsStr::new("run")];
    words.extend(options.iter().map(OsString::as_os_str));
    words.push(OsStr::new("--"));
    words.extend(command.iter().map(OsString::as_os_str));
    s.extend(sh_words(words));
    s.extend_from_slice(b" \"$@\"\n");
    s
}

/// Whether `path` starts like a script `render` writes and has the marker.
fn is_wrapper(path: &Path) -> bool {
    let Ok(f) = std::fs::File::open(path) else {
        return false;
    };
    let mut head = Vec::new();
    if std::io::Read::read_to_end(&mut std::io::Read::take(f, HEAD_MAX as u64), &mut head).is_err()
    {
        return false;
    }
    head.starts_with(b"#!/bin/sh\n")
        && head
            .split(|&c| c == b'\n')
            .any(|l| l.starts_with(MARKER.as_bytes()))
}

/// Writes the script: without `force` it never replaces anything (the file
/// is created exclusively); with `force` a complete new file is renamed
/// over the old one.
fn write_script(dir: &Path, path: &Path, script: &[u8], force: bool) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if let Ok(m) = std::fs::symlink_metadata(path) {
        if !force {
            return Err(format!(
                "{} already exists; use --force to replace it",
                path.display()
            ));
        }
        if m.is_dir() {
            return Err(format!("{} is a directory", path.display()));
        }
    }
    let write = |p: &Path, create_new: bool| -> std::io::Result<()> {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(create_new)
            .create(true)
            .truncate(true)
            .mode(0o755)
            .open(p)?;
        f.write_all(script)?;
        f.set_permissions(std::fs::Permissions::from_mode(0o755))?;
        f.sync_all()
    };
    if !force {
        return write(path, true).map_err(|e| {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                format!(
                    "{} already exists; use --force to replace it",
                    path.display()
                )
            } else {
                let _ = std::fs::remove_file(path);
                format!("{}: {e}", path.display())
            }
        });
    }
    let mut tmp_name = OsString::from(".");
    tmp_name.push(path.file_name().unwrap_or_default());
    tmp_name.push(format!(".fsguard-wrap-{}", std::process::id()));
    let tmp = dir.join(tmp_name);
    let _ = std::fs::remove_file(&tmp);
    let done = write(&tmp, true).and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = done {
        let _ = std::fs::remove_file(&tmp);
        return Err(format!("{}: {e}", path.display()));
    }
    Ok(())
}

/// The program a PATH lookup finds now (for the policy's `system` paths and
/// a warning), or the path as given when it has a slash.
fn which(program: &OsStr) -> Option<PathBuf> {
    if program.as_bytes().contains(&b'/') {
        let p = PathBuf::from(program);
        return p.exists().then_some(p);
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/bin:/usr/bin".into());
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|c| {
            c.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

fn on_path(dir: &Path) -> bool {
    let canon = |p: &Path| std::fs::canonicalize(p).ok();
    let want = canon(dir);
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|d| d == dir || (want.is_some() && canon(&d) == want))
    })
}

/// The current time as `YYYY-MM-DD HH:MM:SS UTC`.
fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let (days, rem) = (secs.div_euclid(86400), secs.rem_euclid(86400));
    // Civil from days (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        let q = |s: &str| String::from_utf8(sh_quote(OsStr::new(s))).unwrap();
        assert_eq!(q("python3"), "python3");
        assert_eq!(q("/a/b-c.d"), "/a/b-c.d");
        assert_eq!(q(""), "''");
        assert_eq!(q("a b"), "'a b'");
        assert_eq!(q("it's"), "'it'\\''s'");
        assert_eq!(q("$HOME"), "'$HOME'");
        assert_eq!(q("~"), "'~'");
    }

    #[test]
    fn patterns_are_anchored_like_run() {
        let cwd = Path::new("/w");
        assert_eq!(absolute_pattern("*.pem", cwd), "/w/**/*.pem");
        assert_eq!(absolute_pattern("proj", cwd), "/w/proj");
        assert_eq!(absolute_pattern("a/*.pem", cwd), "/w/a/*.pem");
        assert_eq!(absolute_pattern("/x/*.pem", cwd), "/x/*.pem");
        assert_eq!(absolute_pattern("~/.env", cwd), "~/.env");
        assert_eq!(absolute_dir("./ws", cwd), "/w/ws");
        assert_eq!(absolute_dir("~/p", cwd), "~/p");
    }

    #[test]
    fn comment_lines_stay_comments() {
        assert_eq!(comment("# ", b"a\nb"), b"# a\n# b\n");
    }

    #[test]
    fn date() {
        let d = utc_now();
        assert!(d.ends_with(" UTC") && d.len() == 23, "{d}");
    }
}
