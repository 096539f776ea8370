//! Shared helpers for fsguard's integration tests.
//!
//! * `artifacts()` builds `libfsguard.so` and the `fsguard` CLI once per test
//!   binary (`cargo test` does not build a cdylib for integration tests) and
//!   returns their absolute paths.
//! * `TempDir` is a self-removing temporary directory under
//!   `std::env::temp_dir()` (never under the build tree, so it is never part of
//!   the `system` read locations of a confined process).
//! * `snapshot()` records a directory tree (types, modes, owners, link counts,
//!   sizes, contents, symlink targets, mtimes and ctimes) so a test can assert
//!   that a denied call changed nothing on disk.
//! * `traces()` parses the `[fsguard] blocked ...` lines of a child's stderr.
//! * `run()` runs a child with a timeout and returns its output.
//! * `c_program()` compiles a C helper from `tests/c/`.
#![allow(dead_code)]

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::fmt::Write as _;
use std::io::Read;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub const EACCES: i32 = 13;

/// How long any single child may run before the test kills it and fails.
pub const CHILD_TIMEOUT: Duration = Duration::from_secs(120);

// ---------------------------------------------------------------------------
// Building the library and the CLI
// ---------------------------------------------------------------------------

pub struct Artifacts {
    /// Absolute path of target/release/libfsguard.so
    pub lib: PathBuf,
    /// Absolute path of target/release/fsguard
    pub cli: PathBuf,
}

/// Build (once per test binary) `libfsguard.so` and `fsguard` in release mode.
pub fn artifacts() -> &'static Artifacts {
    static ART: OnceLock<Result<Artifacts, String>> = OnceLock::new();
    match ART.get_or_init(build_artifacts) {
        Ok(a) => a,
        Err(e) => panic!("{e}"),
    }
}

pub fn lib() -> &'static Path {
    &artifacts().lib
}

pub fn cli() -> &'static Path {
    &artifacts().cli
}

fn target_dir() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(d) if !d.is_empty() => {
            let p = PathBuf::from(d);
            if p.is_absolute() {
                p
            } else {
                manifest.join(p)
            }
        }
        _ => manifest.join("target"),
    }
}

fn build_artifacts() -> Result<Artifacts, String> {
    let manifest = env!("CARGO_MANIFEST_DIR");
    let out = Command::new(env!("CARGO"))
        .args([
            "build",
            "--release",
            "-p",
            "fsguard",
            "-p",
            "fsguard-cli",
            "--message-format=json-render-diagnostics",
        ])
        .current_dir(manifest)
        .env_remove("LD_PRELOAD")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {} build: {e}", env!("CARGO")))?;
    if !out.status.success() {
        return Err(format!(
            "`cargo build --release -p fsguard -p fsguard-cli` failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    // Take the artifact paths from cargo's own messages (respects any target
    // dir configuration); fall back to $CARGO_TARGET_DIR/target.
    let mut lib = None;
    let mut cli = None;
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        if !line.contains("\"compiler-artifact\"") {
            continue;
        }
        for s in json_strings(line) {
            if s.ends_with("/libfsguard.so") || s.ends_with("/libfsguard.dylib") {
                lib = Some(PathBuf::from(&s));
            }
            if s.ends_with("/fsguard") && line.contains("\"executable\"") {
                cli = Some(PathBuf::from(&s));
            }
        }
    }
    let release = target_dir().join("release");
    let lib = lib.unwrap_or_else(|| release.join("libfsguard.so"));
    let cli = cli.unwrap_or_else(|| release.join("fsguard"));
    for p in [&lib, &cli] {
        if !p.is_file() {
            return Err(format!(
                "build succeeded but {} does not exist\ncargo stderr:\n{}",
                p.display(),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    Ok(Artifacts {
        lib: lib.canonicalize().unwrap(),
        cli: cli.canonicalize().unwrap(),
    })
}

/// All JSON string literals of one line (enough for cargo's messages).
fn json_strings(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c != '"' {
            continue;
        }
        let mut s = String::new();
        while let Some(c) = chars.next() {
            match c {
                '"' => break,
                '\\' => match chars.next() {
                    Some('n') => s.push('\n'),
                    Some('t') => s.push('\t'),
                    Some(o) => s.push(o),
                    None => break,
                },
                o => s.push(o),
            }
        }
        out.push(s);
    }
    out
}

// ---------------------------------------------------------------------------
// Compiling C helpers
// ---------------------------------------------------------------------------

/// Compile `tests/c/<src>.c` with the given extra flags into the cargo target
/// tmp dir (once per test binary per (src, flags)) and return the binary path.
pub fn c_program(src: &str, flags: &[&str]) -> PathBuf {
    static CACHE: OnceLock<Mutex<HashMap<String, Result<PathBuf, String>>>> = OnceLock::new();
    let key = format!("{src} {}", flags.join(" "));
    let cache = CACHE.get_or_init(Default::default);
    let mut guard = cache.lock().unwrap_or_else(|e| e.into_inner());
    let res = guard
        .entry(key.clone())
        .or_insert_with(|| compile_c(src, flags))
        .clone();
    drop(guard);
    match res {
        Ok(p) => p,
        Err(e) => panic!("{e}"),
    }
}

fn compile_c(src: &str, flags: &[&str]) -> Result<PathBuf, String> {
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/c")
        .join(format!("{src}.c"));
    let outdir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fsguard-c");
    std::fs::create_dir_all(&outdir).map_err(|e| format!("mkdir {}: {e}", outdir.display()))?;
    let tag: String = flags
        .iter()
        .flat_map(|f| f.chars())
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let name = if tag.is_empty() {
        src.to_string()
    } else {
        format!("{src}-{tag}")
    };
    let out = outdir.join(&name);
    // Compile to a unique name, then rename: atomic even if two test binaries
    // ever compile the same program at once.
    let tmp = outdir.join(format!(".{name}.{}.{}", std::process::id(), unique()));
    let cc = std::env::var_os("CC").unwrap_or_else(|| OsString::from("cc"));
    let o = Command::new(&cc)
        .args(["-std=gnu11", "-Wall", "-Wno-unused-result"])
        .args(flags)
        .arg("-o")
        .arg(&tmp)
        .arg(&source)
        .env_remove("LD_PRELOAD")
        .output()
        .map_err(|e| format!("cannot run {cc:?}: {e}"))?;
    if !o.status.success() {
        let _ = std::fs::remove_file(&tmp);
        return Err(format!(
            "compiling {} with {:?} failed:\n{}{}",
            source.display(),
            flags,
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    std::fs::rename(&tmp, &out).map_err(|e| format!("rename: {e}"))?;
    Ok(out)
}

// ---------------------------------------------------------------------------
// Temporary directories
// ---------------------------------------------------------------------------

fn unique() -> usize {
    static N: AtomicUsize = AtomicUsize::new(0);
    N.fetch_add(1, Ordering::SeqCst)
}

/// A fresh directory under `std::env::temp_dir()`, removed (recursively) on
/// drop. `path()` is canonical (no symlinks), so it can be compared with the
/// resolved paths in trace lines.
pub struct TempDir {
    path: PathBuf,
}

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let base = std::env::temp_dir();
        for attempt in 0..100 {
            let p = base.join(format!(
                "fsguard-test-{tag}-{}-{}-{nanos:x}-{attempt}",
                std::process::id(),
                unique()
            ));
            match std::fs::create_dir(&p) {
                Ok(()) => {
                    return TempDir {
                        path: p.canonicalize().expect("canonicalize temp dir"),
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => panic!("cannot create temp dir {}: {e}", p.display()),
            }
        }
        panic!("cannot create a unique temp dir under {}", base.display());
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn join<P: AsRef<Path>>(&self, p: P) -> PathBuf {
        self.path.join(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        make_writable(&self.path);
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

fn make_writable(p: &Path) {
    if let Ok(md) = std::fs::symlink_metadata(p) {
        if md.is_dir() {
            let _ = std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o700));
            if let Ok(rd) = std::fs::read_dir(p) {
                for e in rd.flatten() {
                    make_writable(&e.path());
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Tree snapshots
// ---------------------------------------------------------------------------

pub type Snapshot = BTreeMap<String, String>;

/// Everything observable about a tree, including mtimes and ctimes (so a
/// chmod/chown/utime/truncate that slipped through is noticed even when it
/// changes nothing else). Atimes are left out: reads are allowed.
pub fn snapshot(root: &Path) -> Snapshot {
    let mut m = BTreeMap::new();
    walk(root, root, true, &mut m);
    m
}

/// Like `snapshot` but without times and directory sizes, to compare two
/// trees built in different directories at different times.
pub fn snapshot_portable(root: &Path) -> Snapshot {
    let mut m = BTreeMap::new();
    walk(root, root, false, &mut m);
    m
}

fn walk(root: &Path, p: &Path, times: bool, m: &mut Snapshot) {
    let rel = p
        .strip_prefix(root)
        .map(|r| r.to_string_lossy().into_owned())
        .unwrap_or_default();
    let rel = if rel.is_empty() { ".".to_string() } else { rel };
    let md = match std::fs::symlink_metadata(p) {
        Ok(md) => md,
        Err(e) => {
            m.insert(rel, format!("<lstat error: {e}>"));
            return;
        }
    };
    let ft = md.file_type();
    let kind = if ft.is_dir() {
        "dir"
    } else if ft.is_symlink() {
        "symlink"
    } else if ft.is_file() {
        "file"
    } else {
        "other"
    };
    let mut d = format!(
        "{kind} mode={:o} uid={} gid={} nlink={}",
        md.mode(),
        md.uid(),
        md.gid(),
        md.nlink()
    );
    if !ft.is_dir() || times {
        let _ = write!(d, " size={}", md.len());
    }
    if times {
        let _ = write!(
            d,
            " mtime={}.{:09} ctime={}.{:09}",
            md.mtime(),
            md.mtime_nsec(),
            md.ctime(),
            md.ctime_nsec()
        );
    }
    if ft.is_symlink() {
        match std::fs::read_link(p) {
            Ok(t) => {
                let _ = write!(d, " -> {}", t.display());
            }
            Err(e) => {
                let _ = write!(d, " -> <readlink error: {e}>");
            }
        }
    } else if ft.is_file() {
        match std::fs::read(p) {
            Ok(bytes) => {
                let _ = write!(
                    d,
                    " content={:?}",
                    String::from_utf8_lossy(&bytes[..bytes.len().min(200)])
                );
                let _ = write!(d, " fnv={:016x}", fnv(&bytes));
            }
            Err(e) => {
                let _ = write!(d, " <read error: {e}>");
            }
        }
    }
    m.insert(rel, d);
    if ft.is_dir() {
        let mut entries: Vec<PathBuf> = match std::fs::read_dir(p) {
            Ok(rd) => rd.flatten().map(|e| e.path()).collect(),
            Err(e) => {
                m.insert(format!("{}/<readdir>", p.display()), format!("error: {e}"));
                return;
            }
        };
        entries.sort();
        for e in entries {
            walk(root, &e, times, m);
        }
    }
}

fn fnv(b: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for x in b {
        h ^= *x as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

/// Human-readable difference of two snapshots, or None when equal.
pub fn snapshot_diff(before: &Snapshot, after: &Snapshot) -> Option<String> {
    if before == after {
        return None;
    }
    let mut s = String::new();
    for (k, v) in before {
        match after.get(k) {
            None => {
                let _ = writeln!(s, "  removed  {k}: {v}");
            }
            Some(w) if w != v => {
                let _ = writeln!(s, "  changed  {k}:\n     before {v}\n     after  {w}");
            }
            _ => {}
        }
    }
    for (k, v) in after {
        if !before.contains_key(k) {
            let _ = writeln!(s, "  added    {k}: {v}");
        }
    }
    Some(s)
}

// ---------------------------------------------------------------------------
// Running children
// ---------------------------------------------------------------------------

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

/// The kernel's Landlock ABI version; 0 without Landlock.
pub fn landlock_abi() -> i64 {
    // SAFETY: landlock_create_ruleset(NULL, 0, VERSION) only returns a number.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            1u32,
        )
    };
    v.max(0)
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

/// Remove every FSGUARD_* variable and LD_PRELOAD the test runner may have
/// inherited, so a run is "bare" unless the test sets them.
pub fn clean_env(cmd: &mut Command) -> &mut Command {
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("FSGUARD_") {
            cmd.env_remove(&k);
        }
    }
    cmd.env_remove("LD_PRELOAD");
    cmd.env_remove("DYLD_INSERT_LIBRARIES");
    // Keep Python from writing bytecode caches (would be extra, unrelated
    // denied writes under a read-only policy).
    cmd.env("PYTHONDONTWRITEBYTECODE", "1");
    cmd
}

/// A command with no guard at all.
pub fn bare_cmd<S: AsRef<std::ffi::OsStr>>(prog: S) -> Command {
    let mut c = Command::new(prog);
    clean_env(&mut c);
    c
}

/// A command with libfsguard.so preloaded and the given FSGUARD_* variables.
pub fn guarded_cmd<S: AsRef<std::ffi::OsStr>>(prog: S, vars: &[(&str, &str)]) -> Command {
    let mut c = bare_cmd(prog);
    c.env("LD_PRELOAD", lib());
    for (k, v) in vars {
        c.env(k, v);
    }
    c
}

// ---------------------------------------------------------------------------
// Trace lines
// ---------------------------------------------------------------------------

#[derive(Debug, Clone)]
pub struct Trace {
    pub event: String,
    pub call: String,
    pub access: String,
    pub fields: BTreeMap<String, String>,
    pub raw: String,
}

impl Trace {
    pub fn field(&self, k: &str) -> Option<&str> {
        self.fields.get(k).map(|s| s.as_str())
    }
}

/// Parse the `[fsguard] <event> ...` lines of `text` whose event is `event`.
/// Lines that contain ` <event> ` but do not parse are returned with
/// call/access "<unparsed>" so that they still count (and fail matches).
pub fn traces(text: &str, event: &str) -> Vec<Trace> {
    let needle = format!(" {event} ");
    text.lines()
        .filter(|l| l.contains(&needle))
        .map(|l| {
            parse_trace(l).unwrap_or_else(|| Trace {
                event: event.to_string(),
                call: "<unparsed>".into(),
                access: "<unparsed>".into(),
                fields: BTreeMap::new(),
                raw: l.to_string(),
            })
        })
        .collect()
}

pub fn parse_trace(line: &str) -> Option<Trace> {
    let start = line.find("[fsguard] ")?;
    let rest = &line[start + "[fsguard] ".len()..];
    let toks = tokenize(rest)?;
    if toks.len() < 3 {
        return None;
    }
    let mut fields = BTreeMap::new();
    for t in &toks[3..] {
        let (k, v) = t.split_once('=')?;
        fields.insert(k.to_string(), v.to_string());
    }
    Some(Trace {
        event: toks[0].clone(),
        call: toks[1].clone(),
        access: toks[2].clone(),
        fields,
        raw: line.to_string(),
    })
}

/// Split on spaces; `key="quoted \"value\""` is unescaped.
fn tokenize(s: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = s.chars().peekable();
    let mut in_q = false;
    let mut have = false;
    while let Some(c) = chars.next() {
        if in_q {
            match c {
                '"' => in_q = false,
                '\\' => match chars.next()? {
                    'n' => cur.push('\n'),
                    't' => cur.push('\t'),
                    'r' => cur.push('\r'),
                    'x' => {
                        let h: String = [chars.next()?, chars.next()?].iter().collect();
                        cur.push(u8::from_str_radix(&h, 16).ok()? as char);
                    }
                    o => cur.push(o),
                },
                o => cur.push(o),
            }
        } else if c == ' ' {
            if have {
                out.push(std::mem::take(&mut cur));
                have = false;
            }
        } else if c == '"' {
            in_q = true;
            have = true;
        } else {
            cur.push(c);
            have = true;
        }
    }
    if in_q {
        return None;
    }
    if have {
        out.push(cur);
    }
    Some(out)
}

/// One expected trace line.
#[derive(Debug, Clone)]
pub struct Expect {
    /// Acceptable call names (e.g. ["link", "linkat"]).
    pub calls: Vec<String>,
    pub access: String,
    pub path: PathBuf,
    pub dest: Option<PathBuf>,
    pub rule: String,
}

impl Expect {
    pub fn new(calls: &str, access: &str, path: impl Into<PathBuf>, rule: &str) -> Expect {
        Expect {
            calls: calls.split('|').map(str::to_string).collect(),
            access: access.to_string(),
            path: path.into(),
            dest: None,
            rule: rule.to_string(),
        }
    }

    pub fn dest(mut self, d: impl Into<PathBuf>) -> Expect {
        self.dest = Some(d.into());
        self
    }

    /// Why `t` does not match, or None.
    pub fn mismatch(&self, t: &Trace) -> Option<String> {
        let mut why = Vec::new();
        if t.event != "blocked" {
            why.push(format!("event {:?} != \"blocked\"", t.event));
        }
        if !self.calls.iter().any(|c| *c == t.call) {
            why.push(format!("call {:?} not one of {:?}", t.call, self.calls));
        }
        if t.access != self.access {
            why.push(format!("access {:?} != {:?}", t.access, self.access));
        }
        let want_path = self.path.to_string_lossy();
        if t.field("path") != Some(&*want_path) {
            why.push(format!("path {:?} != {:?}", t.field("path"), want_path));
        }
        if let Some(d) = &self.dest {
            let want = d.to_string_lossy();
            if t.field("dest") != Some(&*want) {
                why.push(format!("dest {:?} != {:?}", t.field("dest"), want));
            }
        }
        if t.field("rule") != Some(self.rule.as_str()) {
            why.push(format!("rule {:?} != {:?}", t.field("rule"), self.rule));
        }
        if why.is_empty() {
            None
        } else {
            Some(why.join("; "))
        }
    }

    pub fn show(&self) -> String {
        let mut s = format!(
            "blocked {} {} path={}",
            self.calls.join("|"),
            self.access,
            self.path.display()
        );
        if let Some(d) = &self.dest {
            let _ = write!(s, " dest={}", d.display());
        }
        let _ = write!(s, " rule={}", self.rule);
        s
    }
}

/// Check that the blocked trace lines are exactly `want` (in order), or
/// exactly one of the alternative sequences in `alts`.
pub fn check_traces(got: &[Trace], alts: &[Vec<Expect>]) -> Result<(), String> {
    let mut reasons = Vec::new();
    for want in alts {
        if got.len() != want.len() {
            reasons.push(format!(
                "expected {} blocked line(s) [{}], got {}",
                want.len(),
                want.iter()
                    .map(|e| e.show())
                    .collect::<Vec<_>>()
                    .join(" ; "),
                got.len()
            ));
            continue;
        }
        let mism: Vec<String> = want
            .iter()
            .zip(got)
            .enumerate()
            .filter_map(|(i, (w, g))| {
                w.mismatch(g).map(|m| {
                    format!(
                        "line {}: {m}\n      got:  {}\n      want: {}",
                        i + 1,
                        g.raw,
                        w.show()
                    )
                })
            })
            .collect();
        if mism.is_empty() {
            return Ok(());
        }
        reasons.push(mism.join("\n    "));
    }
    Err(reasons.join("\n  or: "))
}

/// Convenience: assert (panicking with the child's output) that `out` has
/// exactly the expected blocked lines.
pub fn assert_traces(out: &Out, want: &[Expect]) {
    if let Err(e) = check_traces(&out.blocked(), &[want.to_vec()]) {
        panic!("trace lines do not match:\n  {e}\n{}", out.describe());
    }
}

/// Assert no blocked lines at all.
pub fn assert_no_blocked(out: &Out) {
    let b = out.blocked();
    if !b.is_empty() {
        panic!(
            "expected no blocked trace line, got {}:\n{}",
            b.len(),
            out.describe()
        );
    }
}

/// Create a file with contents and mode.
pub fn write_file(p: &Path, contents: &str, mode: u32) {
    std::fs::write(p, contents).unwrap_or_else(|e| panic!("write {}: {e}", p.display()));
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

pub fn mkdir(p: &Path) {
    std::fs::create_dir_all(p).unwrap_or_else(|e| panic!("mkdir {}: {e}", p.display()));
}

pub fn symlink(target: &str, link: &Path) {
    std::os::unix::fs::symlink(target, link)
        .unwrap_or_else(|e| panic!("symlink {} -> {target}: {e}", link.display()));
}

/// Real path of the Python interpreter (`python3` on PATH may be a pyenv
/// shell shim; the surface tests want the interpreter itself).
pub fn python() -> &'static Path {
    static PY: OnceLock<PathBuf> = OnceLock::new();
    PY.get_or_init(|| {
        let o = run(bare_cmd("python3").args(["-c", "import sys; print(sys.executable)"]));
        assert!(o.status.success(), "python3 not usable:\n{}", o.describe());
        let p = PathBuf::from(o.stdout.trim());
        assert!(p.is_absolute(), "odd sys.executable: {:?}", o.stdout);
        p
    })
}

/// Collects failures of many cases in one test and panics with all of them.
#[derive(Default)]
pub struct Failures {
    list: Vec<String>,
    total: usize,
}

impl Failures {
    pub fn case(&mut self) {
        self.total += 1;
    }
    pub fn fail(&mut self, name: &str, msg: String) {
        self.list.push(format!("### {name}\n{msg}"));
    }
    pub fn finish(self, what: &str) {
        if !self.list.is_empty() {
            panic!(
                "{} of {} {what} case(s) failed:\n\n{}",
                self.list.len(),
                self.total,
                self.list.join("\n\n")
            );
        }
        assert!(self.total > 0, "no {what} cases ran");
    }
}

/// The symbols the foundation interposes (open family and core mutators).
#[allow(dead_code)]
pub const SYMBOLS: &[&str] = &[
    "open",
    "open64",
    "openat",
    "openat64",
    "creat",
    "creat64",
    "__open_2",
    "__open64_2",
    "__openat_2",
    "__openat64_2",
    "fopen",
    "fopen64",
    "freopen",
    "freopen64",
    "opendir",
    "unlink",
    "unlinkat",
    "remove",
    "rename",
    "renameat",
    "renameat2",
    "mkdir",
    "mkdirat",
    "rmdir",
    "chmod",
    "fchmodat",
    "chown",
    "lchown",
    "fchownat",
    "link",
    "linkat",
    "symlink",
    "symlinkat",
    "truncate",
    "truncate64",
    "utime",
    "utimes",
    "utimensat",
];
