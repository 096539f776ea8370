//! `fsguard run`: the supervisor.
//!
//! The CLI forks, sets `no_new_privs` (set-id programs cannot shed the
//! preload), optionally applies a Landlock ruleset derived from the policy,
//! and execs the command under the library; then it stays as the parent:
//!
//! - it confirms the library really loaded: the library's constructor writes
//!   one byte on `FSGUARD_HANDSHAKE_FD`. Until that byte, the child is traced
//!   (ptrace, syscall stops): the loader's own syscalls (read-only opens,
//!   mmap, …) go ahead, anything else — a write, the loader's "cannot be
//!   preloaded" message, a fork, an exec — means the library is not there,
//!   and the child is killed before it does it. Exit 125, with the reason.
//! - it forwards SIGINT/SIGTERM/SIGHUP, enforces `--timeout`, gives the
//!   command a private `TMPDIR`, and summarises blocked accesses at exit
//!   (the library reports them on the report channel, [`crate::channel`]).

use std::ffi::{CString, OsStr};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Instant;

use fsguard_policy::{
    program, wire, Access, LogFormat, LogTarget, Policy, Rule, Settings, Supervisor, UnguardedExec,
};

use crate::channel::Channel;
use crate::gate::handshake;
use crate::landlock::Landlock;
use crate::library::{find_library, unguarded_program, unloadable};
use crate::logfile::LogFile;
use crate::relay::Report;
use crate::signals::{install_handlers, signal_tree, SigChld};
use crate::spawn::{cstr, pipe, pointers, preload_env, reap, sealed_policy, spawn, Start};
use crate::spawn::{MSG_EXEC, MSG_LANDLOCK, MSG_TRACED};
use crate::tmpdir::{Maker, TmpDir};
use crate::{landlock, settings, Cli, EXIT_FSGUARD, USAGE};

/// Grace period between SIGTERM and SIGKILL on `--timeout`.
const GRACE_SECS: f64 = 5.0;

/// `fsguard lib-path`: the absolute path of the library `run` would use.
pub(crate) fn cmd_lib_path(cli: &Cli) -> Result<ExitCode, String> {
    if !cli.rest.is_empty() || !cli.flags.is_empty() {
        return Err("lib-path takes no arguments".into());
    }
    crate::say(&format!("{}\n", find_library()?.display()));
    Ok(ExitCode::SUCCESS)
}

/// What `fsguard check` says about the command's temporary directory.
pub fn tmpdir_note(_s: &Settings) -> String {
    let base = format!("{}/fsguard-*", std::env::temp_dir().display());
    format!(
        "\n# run: TMPDIR = a private directory {base} (readable and writable; \
         removed at exit unless --keep-tmp)\n"
    )
}

/// The program `execvp` would run: a path as given, else the first
/// executable regular file on `PATH`. Err: exit code and message.
fn locate(program: &OsStr) -> Result<PathBuf, (u8, String)> {
    let shown = program.to_string_lossy().into_owned();
    let is_exec = |p: &Path| {
        let c = CString::new(p.as_os_str().as_bytes()).unwrap_or_default();
        // SAFETY: a C string.
        p.is_file() && unsafe { libc::access(c.as_ptr(), libc::X_OK) } == 0
    };
    if program.as_bytes().contains(&b'/') {
        let p = PathBuf::from(program);
        if !p.exists() {
            return Err((127, format!("{shown}: No such file or directory")));
        }
        return Ok(p);
    }
    let path = std::env::var_os("PATH");
    let path = path
        .as_ref()
        .map_or(program::DEFAULT_PATH, |p| p.as_bytes());
    let mut found_unexec = None;
    // The candidates execvp tries, in its order and spelling.
    for dir in program::path_dirs(path) {
        let c: Vec<u8> = program::candidate(dir, program.as_bytes()).collect();
        let c = PathBuf::from(OsStr::from_bytes(&c));
        if is_exec(&c) {
            return Ok(c);
        }
        if c.is_file() && found_unexec.is_none() {
            found_unexec = Some(c);
        }
    }
    match found_unexec {
        Some(p) => Ok(p),
        None => Err((127, format!("{shown}: command not found"))),
    }
}

/// `; did you mean `--readonly=./ws`?` after the error of a command that
/// cannot run, when it was an option's value ([`Cli::meant`]).
fn meant(cli: &Cli) -> String {
    cli.meant
        .as_ref()
        .map(|m| format!("; did you mean `{m}`? (the option takes its value only after =)"))
        .unwrap_or_default()
}

/// A trace line from the CLI itself, to the policy's log target, in the
/// library's format ([`fsguard_policy::wire`]).
fn trace_line(s: &Settings, event: &str, rule: Rule<'_>, path: &Path) {
    let mut line = String::new();
    let p = path.as_os_str().as_bytes();
    let ev = wire::Event {
        event,
        call: "execve",
        access: Access::Exec,
        path: p,
        dest: None,
        rule,
        errno: if event == "blocked" { libc::EACCES } else { 0 },
        hint: None,
    };
    match (s.log.format, rule) {
        (LogFormat::Text, Rule::Unguarded(kind)) if event == "unguarded" => {
            wire::unguarded_text(&mut line, "execve", kind, p)
        }
        (LogFormat::Text, _) => wire::text(&mut line, &ev),
        (LogFormat::Json, _) => {
            // As the library names it.
            let exe = crate::sys::exe_path()
                .map(|e| e.display().to_string())
                .unwrap_or_default();
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default();
            let origin = wire::Origin {
                pid: std::process::id(),
                exe: &exe,
                secs: i64::try_from(now.as_secs()).unwrap_or(i64::MAX),
                millis: now.subsec_millis(),
            };
            wire::json(&mut line, &ev, &origin);
        }
    }
    line.push('\n');
    use std::io::Write;
    match &s.log.target {
        LogTarget::Off => {}
        LogTarget::Stderr => {
            let _ = std::io::stderr().write_all(line.as_bytes());
        }
        LogTarget::File(f) => {
            let _ = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(f)
                .and_then(|mut f| f.write_all(line.as_bytes()));
        }
    }
}

/// Device and inode of fsguard's stderr: a guarded process whose stderr
/// is the same writes its trace lines itself, in order with its output.
fn stderr_id() -> Option<[u64; 2]> {
    // SAFETY: a zeroed stat is filled by fstat.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat of fd 2 into our struct.
    if unsafe { libc::fstat(2, &mut st) } != 0 {
        return None;
    }
    #[allow(clippy::unnecessary_cast)] // dev_t and ino_t differ by system
    Some([st.st_dev as u64, st.st_ino as u64])
}

/// The running command's pid (0: none), for the signal handlers.
pub(crate) static CHILD: AtomicI32 = AtomicI32::new(0);

/// `fsguard run`: runs the command under the library and supervises it
/// (see the module documentation); its exit status, or 125 for fsguard's own.
pub(crate) fn cmd_run(cli: &Cli) -> Result<ExitCode, String> {
    let Some((program, args)) = cli.rest.split_first() else {
        return Err(format!("run: no command given\n{USAGE}"));
    };
    let opts = &cli.run;
    let exe = locate(program);
    let mut settings = settings(cli, exe.as_ref().ok().map(PathBuf::as_path))?;
    Policy::new(settings.clone()).map_err(|e| e.to_string())?;
    let found = crate::discover::discovered(cli)?;
    if let (Some(f), false) = (&found, opts.quiet) {
        eprintln!(
            "fsguard: policy: {} (discovered; --no-config skips it)",
            f.display()
        );
    }
    if settings.implicit && !opts.quiet {
        eprintln!(
            "fsguard: no policy given (--root DIR, --readonly=DIR, --config F \
             or a .fsguard.toml): read-only; --root . allows writes in the current directory"
        );
    }
    let lib = find_library()?;
    let exe = match exe {
        Ok(p) => p,
        Err((code, msg)) => {
            eprintln!("fsguard: {msg}{}", meant(cli));
            return Ok(ExitCode::from(code));
        }
    };
    // macOS's counterpart of a static program, refused whatever
    // unguarded_exec says: dyld would drop the library without a word.
    if let Some(why) = unloadable(&exe, &lib) {
        return Err(why);
    }
    let unguarded = unguarded_program(&exe, 0);
    if let Some(u) = &unguarded {
        let (p, kind) = (&u.path, u.kind);
        match settings.unguarded_exec {
            UnguardedExec::Deny => {
                trace_line(&settings, "blocked", Rule::Unguarded(kind), p);
                let why = if kind == "go" {
                    "a Go program (its runtime makes its own system calls)"
                } else {
                    "statically linked"
                };
                eprintln!(
                    "fsguard: {}: {why}, the library cannot follow it \
                     (unguarded_exec = deny)",
                    p.display()
                );
                return Ok(ExitCode::from(126));
            }
            UnguardedExec::Warn => trace_line(&settings, "unguarded", Rule::Unguarded(kind), p),
            UnguardedExec::Allow => {}
        }
    }

    // A loader variable that runs code beside the library, or writes files
    // unchecked (issue 27 item 2): the command is not started.
    let loader_var = std::env::vars_os()
        .map(|(k, v)| [k.as_bytes(), b"=", v.as_bytes()].concat())
        .find_map(|kv| program::loader_env(&kv));
    if let Some(var) = loader_var {
        trace_line(&settings, "blocked", Rule::LoaderEnv(var), &exe);
        eprintln!(
            "fsguard: {var} is set: {}; refusing to run {}",
            program::loader_env_why(var),
            exe.display()
        );
        return Ok(ExitCode::from(126));
    }

    let tmp = TmpDir::create(&settings, opts.keep_tmp)?;
    let tmp_s = tmp.path.display().to_string();
    settings.tmpdir = Some(tmp_s.clone());
    // Registry configuration handed without its credentials; the
    // originals join the secrets before the policy is frozen.
    let handed = crate::tools::registry_copies(
        &mut settings,
        &tmp.path,
        &std::env::vars_os().collect::<Vec<_>>(),
    );
    if !opts.quiet {
        for note in &handed.notes {
            eprintln!("{note}");
        }
    }
    // A log file is written here, from the lines the library relays: no
    // guarded process holds a descriptor to it.
    let log_file = match &settings.log.target {
        LogTarget::File(f) => {
            Some(LogFile::open(Path::new(f)).map_err(|e| format!("cannot open log {f}: {e}"))?)
        }
        _ => None,
    };
    settings.log.relayed = log_file.is_some();
    // The report channel, its listening socket beside the command's TMPDIR
    // (never in it: the command may write there).
    let mut bases: Vec<PathBuf> = tmp
        .path
        .parent()
        .map(Path::to_path_buf)
        .into_iter()
        .collect();
    bases.extend(["/tmp", "/var/tmp", "/dev/shm"].map(PathBuf::from));
    let mut channel = Channel::open(&bases)?;
    settings.log.supervisor = Some(Supervisor {
        pid: std::process::id(),
        socket: channel
            .socket()
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
        stderr: stderr_id(),
    });

    let mut ruleset = None;
    if opts.landlock != Landlock::Off {
        let abi = landlock::kernel_abi();
        if abi == 0 {
            let why = landlock::UNAVAILABLE;
            if opts.landlock == Landlock::Required {
                return Err(format!("--landlock=required: {why}"));
            }
            if opts.landlock == Landlock::BestEffort {
                eprintln!("fsguard: warning: {why}; --landlock ignored, the library alone guards");
            }
        } else {
            let exe_abs = std::fs::canonicalize(&exe).unwrap_or_else(|_| exe.clone());
            ruleset = Some(landlock::ruleset(
                &settings,
                opts.landlock,
                &lib,
                &exe_abs,
                &tmp.path,
            )?);
        }
    }

    // The handshake socket; it and the report channel's end are made
    // inheritable in the child.
    let [hs_parent, hs_child] =
        crate::sys::socketpair_cloexec().map_err(|e| format!("socketpair: {e}"))?;
    let hs_fd: RawFd = hs_child.as_raw_fd();
    let (err_r, err_w) = pipe(libc::O_CLOEXEC)?;

    // argv and envp, prepared before fork.
    let path_c = cstr(exe.as_os_str().as_bytes())?;
    let mut argv_c = vec![cstr(program.as_bytes())?];
    for a in args {
        argv_c.push(cstr(a.as_bytes())?);
    }
    // The supervisor is out of the command's reach, and the root of its
    // guarded tree: every process it starts is guarded (src/hooks_more/tree.rs).
    settings.supervisor = crate::sys::shield()?;
    let mut env = preload_env(&lib);
    crate::sockets::strip_refused(&settings, &mut env, opts.quiet);
    // The policy goes in a file no one can change (a sealed memfd on Linux,
    // a read-only shared memory object on macOS), not the environment: a
    // large one would make every exec fail with E2BIG.
    // The library traces what the ruleset refuses of the calls it allowed.
    settings.landlock = ruleset.is_some();
    let policy_fd = sealed_policy(&settings.to_frozen())?;
    env.push((
        "FSGUARD_POLICY_FD".into(),
        policy_fd.as_raw_fd().to_string().into(),
    ));
    env.push((
        "FSGUARD_REPORT_FD".into(),
        channel.child_fd().to_string().into(),
    ));
    env.push(("TMPDIR".into(), tmp.path.clone().into_os_string()));
    let mut cache_dirs = None;
    if settings.cache {
        let (cache, dirs) = crate::presets::cache_env(&tmp.path, &env, &handed.cargo_skip);
        let policy = Policy::new(settings.clone()).ok();
        let cache = crate::tools::cache_vars(policy.as_ref(), &tmp.path, &env, cache);
        env.retain(|(k, _)| !cache.iter().any(|(c, _)| c == k));
        env.extend(cache);
        cache_dirs = Some(dirs);
    }
    env.retain(|(k, _)| !handed.env.iter().any(|(c, _)| c == k));
    env.extend(handed.env);
    if handed.maven_home {
        crate::tools::maven_home(&mut env, &tmp.path);
    }
    // A dynamic Go program loads the library (and answers the gate); a
    // static program never does.
    let traced = unguarded.as_ref().is_none_or(|u| u.loads_library);
    if traced {
        env.push((
            "FSGUARD_HANDSHAKE_FD".into(),
            hs_child.as_raw_fd().to_string().into(),
        ));
    }
    let mut envp_c = Vec::new();
    for (k, v) in &env {
        let mut kv = k.as_bytes().to_vec();
        kv.push(b'=');
        kv.extend_from_slice(v.as_bytes());
        envp_c.push(cstr(&kv)?);
    }
    let (argv, envp) = (pointers(&argv_c), pointers(&envp_c));

    let kernel_layer = ruleset.is_some();
    install_handlers();
    let pid = spawn(Start {
        path: &path_c,
        argv: &argv,
        envp: &envp,
        keep: [
            hs_child.as_raw_fd(),
            channel.child_fd(),
            policy_fd.as_raw_fd(),
        ],
        err: err_w.as_raw_fd(),
        ruleset,
        required: opts.landlock == Landlock::Required,
        trace: traced,
        cache: cache_dirs.as_ref(),
    })?;
    CHILD.store(pid, Ordering::Relaxed);
    // SIGCHLD stays pending until the wait loop asks for it (`ppoll`): no
    // handler runs for each of the gate's ptrace stops, and a child that
    // exits between two checks cannot be missed.
    let chld = SigChld::block();
    drop((hs_child, err_w, policy_fd));
    channel.started();
    crate::sys::raise_nofile();

    // What happened before exec.
    let mut pre = Vec::new();
    {
        let mut f = std::fs::File::from(err_r);
        let _ = std::io::Read::read_to_end(&mut f, &mut pre);
    }
    // With a ruleset, the child's first byte is its enforcement status.
    let ll_status = pre.first().and_then(|&b| landlock::status_from_byte(b));
    let ll_note = ll_status
        .as_ref()
        .and_then(|st| landlock::status_message(st, landlock::kernel_abi()));
    let pre = &pre[usize::from(ll_status.is_some())..];
    let was_traced = pre.first() == Some(&MSG_TRACED);
    if let Some(pos) = pre.iter().position(|&b| b == MSG_EXEC || b == MSG_LANDLOCK) {
        let errno = pre
            .get(pos + 1..pos + 5)
            .map(|b| i32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
            .unwrap_or(0);
        reap(pid);
        let err = std::io::Error::from_raw_os_error(errno);
        if pre[pos] == MSG_LANDLOCK {
            match ll_note {
                Some(note) => eprintln!(
                    "fsguard: error: --landlock=required: {} {note}",
                    landlock::NAME
                ),
                None => eprintln!(
                    "fsguard: error: cannot apply the {}: {err}",
                    landlock::RULESET
                ),
            }
            return Ok(ExitCode::from(EXIT_FSGUARD));
        }
        eprintln!(
            "fsguard: {}: {err}{}",
            program.to_string_lossy(),
            meant(cli)
        );
        return Ok(ExitCode::from(if errno == libc::ENOENT {
            127
        } else {
            126
        }));
    }

    // The cache directories are made while the command's loader runs under
    // the gate, and are there before the gate lets the command go on (an
    // untraced child made them itself before exec). Dropped before `tmp`.
    let mut cache_maker = Maker::start(cache_dirs.filter(|_| was_traced));

    // Reported once, and only when the kernel left something out.
    if let (Some(note), false) = (&ll_note, opts.quiet) {
        eprintln!("fsguard: {}: {note}", landlock::TAG);
    }

    let started = Instant::now();
    if traced {
        let confirmed = handshake(pid, was_traced, hs_fd, hs_parent, || cache_maker.finish());
        if let Err(why) = confirmed {
            // SAFETY: our child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            reap(pid);
            eprintln!(
                "fsguard: error: {}: the guard library {} did not load in the command: \
                 {why}; the command was stopped",
                program.to_string_lossy(),
                lib.display()
            );
            return Ok(ExitCode::from(EXIT_FSGUARD));
        }
    }

    let mut report = Report::new(
        settings.log.target == LogTarget::Stderr,
        settings.log.format,
        log_file,
    );
    let mut timed_out = false;
    let mut pfds = Vec::new();
    let status = loop {
        if let Some(secs) = opts.timeout {
            let over = started.elapsed().as_secs_f64() - secs;
            if over >= 0.0 && !timed_out {
                timed_out = true;
                signal_tree(pid, libc::SIGTERM);
            } else if over >= GRACE_SECS {
                signal_tree(pid, libc::SIGKILL);
            }
        }
        let mut st = 0;
        // SAFETY: our child.
        let r = unsafe { libc::waitpid(pid, &mut st, libc::WNOHANG) };
        if r == pid {
            break st;
        }
        if r < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return Err(format!("wait: {}", std::io::Error::last_os_error()));
        }
        channel.pollfds(&mut pfds);
        chld.wait(&mut pfds, 200);
        channel.service(&pfds, &mut |m, cut, from| report.message(m, cut, from));
        report.flush();
    };
    drop(chld);
    CHILD.store(0, Ordering::Relaxed);
    channel.finish(&mut |m, cut, from| report.message(m, cut, from));
    report.flush();
    drop(channel);

    let code = if timed_out {
        if !opts.quiet {
            eprintln!("fsguard: {}: timed out", program.to_string_lossy());
        }
        124
    } else if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status) as u8
    } else if libc::WIFSIGNALED(status) {
        (128 + libc::WTERMSIG(status)) as u8
    } else {
        EXIT_FSGUARD
    };
    // The summary comes from the supervisor's own channel (the report
    // channel), so it is printed whatever the command did with its stderr, and
    // also when the trace lines go to a file or nowhere.
    if !opts.quiet && opts.report.as_deref() != Some("-") {
        report.summary();
        if let (Some(f), true) = (&found, report.counted() > 0) {
            eprintln!("fsguard: policy was {}", f.display());
        }
        if let (Some(p), true) = (crate::check::profile_line(&settings), report.counted() > 0) {
            eprintln!("fsguard: {p}");
        }
        // The policy as the command had it, for the hints; built only
        // when there is something to hint at (it was checked above).
        if !report.events().is_empty() {
            if let Ok(policy) = Policy::new(settings.clone()) {
                report.hints(&policy);
            }
        }
    }
    if !opts.quiet {
        // No one saw their calls: the counts above are not about them. The
        // command itself, and what its processes started.
        let top = unguarded
            .iter()
            .map(|u| (u.kind.to_string(), u.path.display().to_string()));
        let started = report.unguarded().iter().cloned();
        let mut named: Vec<(String, String)> = Vec::new();
        for (kind, path) in top.chain(started) {
            if named.iter().any(|(_, p)| *p == path) {
                continue;
            }
            eprintln!(
                "fsguard: a {} program ran ({path}): the library sees none of its calls; {}",
                match kind.as_str() {
                    "go" => "Go",
                    "setid" => "set-id",
                    _ => "static",
                },
                if kernel_layer {
                    "what the kernel's ruleset refused it is neither traced nor counted"
                } else {
                    "nothing confined it (no Landlock)"
                }
            );
            named.push((kind, path));
        }
    }
    if let Some(t) = &opts.report {
        crate::report::write(t, report.events(), &settings, cli);
    }
    let code = crate::outcome::fail_on_block(
        opts.fail_on_block.or(settings.fail_on_block),
        code,
        timed_out,
        report.counted(),
        report.unreported(),
        opts.quiet,
    );
    if !opts.quiet && opts.keep_tmp {
        eprintln!("fsguard: kept TMPDIR {tmp_s}");
    }
    drop(tmp);
    if let (true, Some(tag)) = (settings.ipc, &settings.ipc_tag) {
        crate::presets::ipc_cleanup(tag);
    }
    Ok(ExitCode::from(code))
}
