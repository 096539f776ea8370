//! `fsguard suggest`: a policy learnt from a run.
//!
//! Reads the JSON trace lines of an audit (or enforce) run, keeps the
//! accesses the target policy (the workspace as `root`, plus `--merge`'s
//! rules) would refuse, and writes the fewest allow rules that let them
//! happen (generalised by `fsguard_policy::suggest`). With `-- CMD` it runs
//! the command itself under `fsguard run --audit` first.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use fsguard_policy::suggest::{self, Options, Places, Refusal};
use fsguard_policy::{canonical_prefix, Access, Builder, Context, Policy, Settings};

/// What `suggest` was asked (see args/model.rs for the command line).
#[derive(Default)]
pub struct Args {
    /// `--root DIR`: the workspace.
    pub root: Option<String>,
    pub opts: Options,
    /// `--merge FILE`.
    pub merge: Option<PathBuf>,
    pub logs: Vec<PathBuf>,
    /// `-- CMD [ARGS...]`.
    pub cmd: Vec<OsString>,
    /// `--no-landlock`, `--timeout D`: passed on to `fsguard run`.
    pub run_flags: Vec<OsString>,
}

/// A call on an AF_UNIX socket whose refusal `unix_sockets` lifts: a
/// connect or send to `path`, or a bind of an abstract name (a bind of a
/// socket file creates a file: a write rule's business).
fn is_socket_call(call: &str, path: &str) -> bool {
    matches!(call, "connect" | "sendto" | "sendmsg" | "sendmmsg")
        || (call == "bind" && path.starts_with('@'))
}

/// One access a trace line shows refused.
struct Seen {
    access: Access,
    path: String,
    rule: String,
    call: String,
}

/// `fsguard suggest`.
pub(crate) fn cmd_suggest(a: Args) -> Result<ExitCode, String> {
    let cwd = std::env::current_dir().map_err(|e| format!("cwd: {e}"))?;

    // The target policy: the workspace as root, and the policy merged into.
    let ctx = Context::from_process();
    let mut b = Builder::new(ctx.clone());
    let existing = match &a.merge {
        Some(f) => {
            b.config_file(f).map_err(|e| e.to_string())?;
            Some(std::fs::read_to_string(f).map_err(|e| format!("{}: {e}", f.display()))?)
        }
        None => None,
    };
    let merged_root = match &a.merge {
        Some(f) => {
            let mut m = Builder::new(ctx.clone());
            m.config_file(f).map_err(|e| e.to_string())?;
            m.finish().map_err(|e| e.to_string())?.root
        }
        None => None,
    };
    let root_given = a.root.is_some();
    let root = a.root.clone().unwrap_or_else(|| ".".into());
    if merged_root.is_none() || root_given {
        b.root(&root).map_err(|e| format!("--root {root}: {e}"))?;
    }
    let target = b.finish().map_err(|e| e.to_string())?;
    let root = target.root.clone().unwrap_or_default();
    if let (Some(m), true) = (&merged_root, root_given) {
        if *m != root {
            return Err(format!(
                "--root {root} differs from the root of {} ({m}); drop --root or edit the file",
                a.merge.as_deref().unwrap_or(Path::new("")).display()
            ));
        }
    }
    if !root_given && merged_root.is_none() {
        eprintln!("fsguard suggest: the workspace (root) is {root}, the current directory (--root DIR to choose)");
    }

    // The run, or the logs.
    let mut header = String::from("Suggested by `fsguard suggest`");
    let mut status_note = None;
    let tmp;
    let logs: Vec<PathBuf> = if a.cmd.is_empty() {
        header.push_str(&format!(
            " from {}.",
            a.logs
                .iter()
                .map(|l| l.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
        a.logs.clone()
    } else {
        tmp = PrivateDir::new()?;
        let log = tmp.0.join("audit.jsonl");
        let code = audit_run(&a, &root, &log)?;
        let shown: Vec<String> = a
            .cmd
            .iter()
            .map(|c| crate::report::shell_word(&c.to_string_lossy()))
            .collect();
        header.push_str(&format!(" from an audit run of: {}", shown.join(" ")));
        if code != 0 {
            status_note = Some(format!(
                "the command exited with status {code}: it may not have done all it does when it succeeds"
            ));
        }
        vec![log]
    };

    let mut seen = Vec::new();
    let mut lines = 0usize;
    let mut unguarded = Vec::new();
    for l in &logs {
        let text = std::fs::read(l).map_err(|e| format!("{}: {e}", l.display()))?;
        for (i, line) in text.split(|&b| b == b'\n').enumerate() {
            let line = String::from_utf8_lossy(line);
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let at = format!("{}:{}", l.display(), i + 1);
            if line.starts_with("[fsguard]") {
                return Err(format!(
                    "{at}: a text trace line; audit with --log-format json"
                ));
            }
            let v: serde_json::Value = match serde_json::from_str(line) {
                Ok(v) => v,
                Err(_) if line.contains("\\udc") => {
                    eprintln!(
                        "fsguard suggest: {at}: a path that is not UTF-8; no rule can name it"
                    );
                    continue;
                }
                Err(e) => return Err(format!("{at}: not a JSON trace line: {e}")),
            };
            lines += 1;
            let field = |k: &str| v.get(k).and_then(|x| x.as_str()).unwrap_or("").to_string();
            let event = field("event");
            if event == "unguarded" {
                unguarded.push(field("path"));
                continue;
            }
            if event != "audit" && event != "blocked" {
                continue;
            }
            let Some(access) = Access::parse(&field("access")) else {
                return Err(format!("{at}: no access field"));
            };
            let (rule, call) = (field("rule"), field("call"));
            seen.push(Seen {
                access,
                path: field("path"),
                rule: rule.clone(),
                call: call.clone(),
            });
            let dest = field("dest");
            if !dest.is_empty() {
                seen.push(Seen {
                    access: Access::Write,
                    path: dest,
                    rule,
                    call,
                });
            }
        }
    }

    // Keep what the target policy refuses; credentials are never needs.
    let mut filter = target.clone();
    // The run's own `system` locations were allowed in it (and are in the
    // next run): what it logged is outside them, whatever this process's
    // PATH says.
    filter.system = false;
    let policy = Policy::new(filter).map_err(|e| e.to_string())?;
    let mut needs: Vec<(Access, String)> = Vec::new();
    let mut sockets: Vec<String> = Vec::new();
    let mut refused: Vec<Refusal> = Vec::new();
    let mut other_root = 0usize;
    for s in &seen {
        // A connect or send to an AF_UNIX socket (or a bind of an abstract
        // one) is allowed by `unix_sockets`, not by a write rule.
        if is_socket_call(&s.call, &s.path) {
            let d = policy.decide_socket(s.path.as_bytes());
            if !d.allowed && !d.rule.authors() && !sockets.contains(&s.path) {
                sockets.push(s.path.clone());
            }
            continue;
        }
        // No rule names an unresolved path, nor allows a namespace, a
        // mount or another process.
        if s.rule == "unresolved"
            || !s.path.starts_with('/')
            || fsguard_policy::process::REFUSED_WHATEVER_THE_POLICY.contains(&s.call.as_str())
        {
            continue;
        }
        if s.rule == "root" && fsguard_policy::is_within(s.path.as_bytes(), root.as_bytes()) {
            other_root += 1;
        }
        let moves = s.call.starts_with("rename") || s.call.starts_with("link");
        let d = policy.decide(s.access, s.path.as_bytes());
        // What a rule of the policy refuses on purpose (a deny rule of a
        // merged file, deny_always, secrets, the log) is never suggested.
        let credential = match d.rule {
            r if !d.allowed && r.authors() => Some(r.to_string()),
            _ if moves => policy.protected(s.path.as_bytes()).map(|r| r.to_string()),
            _ => None,
        }
        .or_else(|| {
            (s.rule.starts_with("secrets:") || s.rule.contains(".deny_always:") || s.rule == "log")
                .then(|| s.rule.clone())
        });
        if let Some(why) = credential {
            let access = if s.access == Access::Exec {
                Access::Read
            } else {
                s.access
            };
            if !refused
                .iter()
                .any(|r| r.path == s.path && r.access == access)
            {
                refused.push(Refusal {
                    access,
                    path: s.path.clone(),
                    why,
                });
            }
            continue;
        }
        if !d.allowed {
            needs.push((s.access, s.path.clone()));
        }
    }

    let places = places(&target, &cwd);
    let (suggestions, more) = suggest::generalise(&needs, &places, &a.opts);
    refused.extend(more);
    let text = match &existing {
        Some(t) => suggest::merge(t, &suggestions, &refused, &places)?,
        None => suggest::render(&suggestions, &refused, &places, &header),
    };
    let text = suggest::add_unix_sockets(&text, &sockets)?;

    // The output must load, and allow every need.
    let origin = match &a.merge {
        Some(f) => cwd.join(f),
        None => cwd.join("suggested.toml"),
    };
    let mut check = Builder::new(ctx);
    check
        .config_str(&text, &origin)
        .map_err(|e| format!("internal error: the suggested policy does not load: {e}"))?;
    let mut check = check.finish().map_err(|e| e.to_string())?;
    check.system = false;
    let check = Policy::new(check).map_err(|e| e.to_string())?;
    let uncovered = needs
        .iter()
        .filter(|(a, p)| !check.decide(*a, p.as_bytes()).allowed)
        .filter(|(_, p)| !refused.iter().any(|r| r.path == *p))
        .count()
        + sockets
            .iter()
            .filter(|p| !check.decide_socket(p.as_bytes()).allowed)
            .count();

    crate::say(&text);
    let rules = suggestions.len() + sockets.len();
    eprintln!(
        "fsguard suggest: {rules} allow rule{} for {} refused access{} ({lines} trace lines read)",
        if rules == 1 { "" } else { "s" },
        needs.len() + sockets.len(),
        if needs.len() + sockets.len() == 1 {
            ""
        } else {
            "es"
        },
    );
    if !refused.is_empty() {
        eprintln!(
            "fsguard suggest: warning: {} access{} not allowed (credentials, or too broad): see the WARNING comments",
            refused.len(),
            if refused.len() == 1 { "" } else { "es" }
        );
    }
    if other_root > 0 {
        eprintln!(
            "fsguard suggest: warning: {other_root} logged {} inside {root} refused as \
             outside the root: the audit run had another --root; give suggest the same one",
            if other_root == 1 {
                "access was"
            } else {
                "accesses were"
            }
        );
    }
    for p in &unguarded {
        eprintln!(
            "fsguard suggest: note: {p} ran unguarded (a static program the library cannot follow)"
        );
    }
    if let Some(n) = status_note {
        eprintln!("fsguard suggest: note: {n}");
    }
    if needs.iter().any(|(a, _)| *a == Access::Write)
        && !a.run_flags.iter().any(|f| f == "--no-landlock")
    {
        eprintln!(
            "fsguard suggest: note: in an audit run Landlock still refuses writes outside the \
             workspace, so the command may have stopped early; audit again with \
             --config on this policy and `fsguard suggest --merge` until nothing new appears"
        );
    }
    if uncovered > 0 {
        return Err(format!(
            "internal error: {uncovered} accesses are not allowed by the suggested policy"
        ));
    }
    Ok(ExitCode::SUCCESS)
}

/// Home, temp dirs and protected patterns, as the generaliser needs them.
fn places(target: &Settings, cwd: &Path) -> Places {
    let canon = |p: &Path| canonical_prefix(&cwd.join(p)).display().to_string();
    let mut temp_dirs: Vec<String> = ["/tmp", "/var/tmp", "/dev/shm"]
        .iter()
        .map(|t| canon(Path::new(t)))
        .collect();
    if let Some(t) = std::env::var_os("TMPDIR").filter(|t| !t.is_empty()) {
        temp_dirs.push(canon(Path::new(&t)));
    }
    let mut protected: Vec<String> = Vec::new();
    if target.secrets {
        protected.extend(target.secret_paths.iter().cloned());
    }
    protected.extend(target.read.deny_always.iter().cloned());
    protected.extend(target.write.deny_always.iter().cloned());
    Places {
        home: std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(|h| canon(Path::new(&h))),
        root: target.root.clone().unwrap_or_default(),
        temp_dirs,
        protected,
    }
}

/// Runs the command under `fsguard run --audit`, its stdout sent to
/// stderr (stdout carries the policy). The command's exit status.
fn audit_run(a: &Args, root: &str, log: &Path) -> Result<i32, String> {
    let me = std::env::current_exe().map_err(|e| format!("cannot locate fsguard: {e}"))?;
    let mut c = std::process::Command::new(me);
    c.arg("run")
        .arg("--audit")
        .arg("--root")
        .arg(root)
        .args(["--log-format", "json", "--log"])
        .arg(log)
        .args(["--report", "-"]);
    // The audit run's policy is the root (and the merged file), never a
    // `.fsguard.toml` found on the way.
    match &a.merge {
        Some(m) => c.arg("--config").arg(m),
        None => c.arg("--no-config"),
    };
    c.args(&a.run_flags).arg("--").args(&a.cmd);
    // The command's standard output goes to our standard error.
    let err = std::io::stderr().lock();
    let fd = std::os::fd::AsFd::as_fd(&err)
        .try_clone_to_owned()
        .map_err(|e| format!("dup: {e}"))?;
    drop(err);
    c.stdout(std::process::Stdio::from(fd));
    let st = c
        .status()
        .map_err(|e| format!("cannot run fsguard run: {e}"))?;
    let code = st.code().unwrap_or(128);
    if code == 125 {
        return Err("the audit run failed (see above)".into());
    }
    Ok(code)
}

/// A private directory for the audit log, removed on drop.
struct PrivateDir(PathBuf);

impl PrivateDir {
    fn new() -> Result<PrivateDir, String> {
        use std::os::unix::fs::DirBuilderExt;
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let p = std::env::temp_dir().join(format!(
            "fsguard-suggest-{}-{nanos:08x}",
            std::process::id()
        ));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&p)
            .map_err(|e| format!("{}: {e}", p.display()))?;
        Ok(PrivateDir(p))
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
