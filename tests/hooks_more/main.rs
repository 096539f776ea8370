//! Every symbol added by the "no door open" hooks, called directly from C
//! (tests/c/hooks.c) under the real library:
//! - refused: the return value, errno, exactly one trace line, and a tree
//!   that has not changed;
//! - allowed: the same result and the same tree as the bare call, error
//!   cases included;
//! - metadata reads: untouched by default, hidden (ENOENT) with
//!   `hide_outside = true`.

use std::collections::BTreeMap;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, UNIX_EPOCH};

/// The release library and the compiled C program.
fn artifacts() -> &'static (PathBuf, PathBuf) {
    static A: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    A.get_or_init(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let st = Command::new(cargo)
            .args(["build", "--release", "-p", "fsguard"])
            .current_dir(&root)
            .status()
            .unwrap();
        assert!(st.success(), "building libfsguard failed");
        let lib = root.join("target/release/libfsguard.so");
        let bin = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("hooks-c");
        let st = Command::new("cc")
            .arg("-o")
            .arg(&bin)
            .arg(root.join("tests/c/hooks.c"))
            .status()
            .unwrap();
        assert!(st.success(), "compiling tests/c/hooks.c failed");
        (lib, bin)
    })
}

const OLD: u64 = 1_000_000;

fn set_old(p: &Path) {
    let t = UNIX_EPOCH + Duration::from_secs(OLD);
    let c = CString::new(p.as_os_str().as_bytes()).unwrap();
    let ts = [
        libc::timespec {
            tv_sec: t.duration_since(UNIX_EPOCH).unwrap().as_secs() as i64,
            tv_nsec: 0,
        },
        libc::timespec {
            tv_sec: OLD as i64,
            tv_nsec: 0,
        },
    ];
    // SAFETY: a C string and two timespecs.
    let r = unsafe {
        libc::utimensat(
            libc::AT_FDCWD,
            c.as_ptr(),
            ts.as_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    assert_eq!(r, 0);
}

fn set_xattr(p: &Path) {
    let c = CString::new(p.as_os_str().as_bytes()).unwrap();
    // SAFETY: C strings and a one-byte value.
    unsafe { libc::setxattr(c.as_ptr(), c"user.x".as_ptr(), c"1".as_ptr().cast(), 1, 0) };
}

/// A fresh scratch tree: `ws/` (the root), `ro/` (outside it) with
/// `ro/readable/` re-allowed for reading, and the configs.
fn scratch(tag: &str) -> PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let d = std::env::temp_dir().join(format!("fsguard-hooks-{}-{n}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let d = d.canonicalize().unwrap();
    for top in ["ws", "ro"] {
        let t = d.join(top);
        std::fs::create_dir_all(t.join("d")).unwrap();
        std::fs::create_dir_all(t.join("e")).unwrap();
        std::fs::create_dir_all(t.join("readable")).unwrap();
        std::fs::write(t.join("f"), "data").unwrap();
        std::fs::write(t.join("d/g"), "g").unwrap();
        std::fs::write(t.join("readable/f"), "r").unwrap();
        std::fs::copy("/bin/true", t.join("true")).unwrap();
        std::os::unix::fs::symlink("f", t.join("link")).unwrap();
        for f in ["f", "readable/f"] {
            set_xattr(&t.join(f));
        }
        for p in [
            "f",
            "d/g",
            "readable/f",
            "true",
            "link",
            "d",
            "e",
            "readable",
            "",
        ] {
            set_old(&t.join(p));
        }
    }
    std::fs::write(
        d.join("deny.toml"),
        // A config's relative patterns are against the root (ws). Without
        // the ipc preset, which would give shm_open a namespace of its own
        // (tests/defaults.rs), /dev/shm is outside the root like any path.
        "root = \"ws\"\nipc = false\n[read]\nallow = [\"../ro/readable\"]\n",
    )
    .unwrap();
    std::fs::write(
        d.join("ok.toml"),
        "root = \"ws\"\n[write]\nallow = [\"/tmp\", \"/dev/shm\"]\n",
    )
    .unwrap();
    std::fs::write(d.join("hide.toml"), "root = \"ws\"\nhide_outside = true\n").unwrap();
    d
}

/// Everything about the tree that a call could change.
fn snapshot(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for top in ["ws", "ro"] {
        walk(&dir.join(top), dir, &mut out);
    }
    out
}

fn walk(p: &Path, base: &Path, out: &mut BTreeMap<String, String>) {
    let m = std::fs::symlink_metadata(p).unwrap();
    let rel = p.strip_prefix(base).unwrap().display().to_string();
    let mtime = if (m.mtime() as u64) == OLD {
        "old".to_string()
    } else if m.mtime() < 100_000 {
        m.mtime().to_string()
    } else {
        "new".to_string()
    };
    let kind = if m.is_symlink() {
        format!("link->{}", std::fs::read_link(p).unwrap().display())
    } else if m.is_dir() {
        "dir".into()
    } else if m.is_file() {
        format!("file:{:?}", std::fs::read(p).unwrap())
    } else {
        format!("special:{:o}", m.mode() & libc::S_IFMT)
    };
    let mut xattrs = [0u8; 256];
    let c = CString::new(p.as_os_str().as_bytes()).unwrap();
    // SAFETY: a C string and a buffer of the given size.
    let n = unsafe { libc::llistxattr(c.as_ptr(), xattrs.as_mut_ptr().cast(), xattrs.len()) };
    let x = String::from_utf8_lossy(&xattrs[..n.max(0) as usize]).into_owned();
    out.insert(
        rel,
        format!(
            "{kind} mode={:o} uid={} mtime={mtime} xattrs={x:?}",
            m.permissions().mode() & 0o7777,
            m.uid()
        ),
    );
    if m.is_dir() {
        for e in std::fs::read_dir(p).unwrap() {
            walk(&e.unwrap().path(), base, out);
        }
    }
}

struct Run {
    stdout: String,
    traces: Vec<String>,
}

impl Run {
    fn ret_errno(&self) -> (i64, i32) {
        let mut it = self.stdout.split_whitespace();
        let ret = it
            .next()
            .and_then(|s| s.strip_prefix("ret="))
            .unwrap_or("?");
        let err = it
            .next()
            .and_then(|s| s.strip_prefix("errno="))
            .unwrap_or("?");
        (
            ret.parse()
                .unwrap_or_else(|_| panic!("no ret in {:?}", self.stdout)),
            err.parse().unwrap(),
        )
    }
}

/// Runs the C program in `dir`, bare (`config` None) or under the library.
fn run(dir: &Path, config: Option<&str>, case: &str, args: &[&str]) -> Run {
    let (lib, bin) = artifacts();
    let mut cmd = Command::new(bin);
    cmd.arg(case).args(args).current_dir(dir);
    for (k, _) in std::env::vars() {
        if k.starts_with("FSGUARD_") {
            cmd.env_remove(k);
        }
    }
    if let Some(c) = config {
        cmd.env("LD_PRELOAD", lib)
            .env("FSGUARD_CONFIG", dir.join(c));
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "{case} {args:?} ({config:?}) failed: {:?}\n{stderr}",
        out.status
    );
    Run {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        traces: stderr
            .lines()
            .filter(|l| l.starts_with("[fsguard]"))
            .map(String::from)
            .collect(),
    }
}

/// The expected trace line: paths relative to the scratch dir unless
/// absolute. Its hint names the refused end: the one outside the root.
fn trace(dir: &Path, call: &str, access: &str, path: &str, dest: Option<&str>) -> String {
    let abs = |p: &str| {
        if p.starts_with('/') {
            p.to_string()
        } else {
            dir.join(p).display().to_string()
        }
    };
    let refused = match dest {
        Some(d) if Path::new(&abs(path)).starts_with(dir.join("ws")) => abs(d),
        _ => abs(path),
    };
    let list = if access == "write" { "write" } else { "read" };
    let dest = dest
        .map(|d| format!(" dest={}", abs(d)))
        .unwrap_or_default();
    format!(
        "[fsguard] blocked {call} {access} path={}{dest} rule=root hint=\"--allow-{list} {refused}\"",
        abs(path)
    )
}

/// Refused under deny.toml (or hide.toml): return value, errno, one trace
/// line, and nothing changed on disk.
#[allow(clippy::too_many_arguments)]
fn refused(
    config: &str,
    case: &str,
    args: &[&str],
    call: &str,
    access: &str,
    path: &str,
    dest: Option<&str>,
    want: (i64, i32),
) {
    let dir = scratch(case);
    let before = snapshot(&dir);
    let r = run(&dir, Some(config), case, args);
    assert_eq!(r.ret_errno(), want, "{case} {args:?}: {}", r.stdout);
    assert_eq!(
        r.traces,
        vec![trace(&dir, call, access, path, dest)],
        "{case} {args:?}"
    );
    assert_eq!(snapshot(&dir), before, "{case} {args:?} changed the tree");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Allowed: same output and same resulting tree as bare, no trace line.
fn same_as_bare(config: &str, case: &str, args: &[&str]) {
    let bare_dir = scratch(case);
    let bare = run(&bare_dir, None, case, args);
    let dir = scratch(case);
    let guarded = run(&dir, Some(config), case, args);
    assert_eq!(guarded.stdout, bare.stdout, "{case} {args:?} ({config})");
    assert_eq!(guarded.traces, Vec::<String>::new(), "{case} {args:?}");
    assert_eq!(
        snapshot(&dir),
        snapshot(&bare_dir),
        "{case} {args:?}: trees differ"
    );
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&bare_dir);
}

/// A bind of an abstract socket (`case`, on `name`): refused under
/// deny.toml, since it reaches outside the root though it creates no file;
/// allowed, as bare, when `unix_sockets` names it (issue 27 item 9). The
/// program binds with the whole `sockaddr_un` length, so the name is padded
/// with NULs to 107 bytes, each shown as `@`; `@NAME*` covers it.
fn abstract_bind(case: &str, name: &str) {
    let dir = scratch(case);
    let r = run(&dir, Some("deny.toml"), case, &[name]);
    assert_eq!(r.ret_errno(), EACCES, "{case}: {}", r.stdout);
    let shown = format!("@{name}{}", "@".repeat(107 - name.len()));
    assert_eq!(
        r.traces,
        vec![format!(
            "[fsguard] blocked bind write path={shown} rule=abstract_socket \
             hint=\"--allow-unix-socket {shown}\""
        )],
        "{case}"
    );
    let named = format!("root = \"ws\"\nunix_sockets = [\"@{name}*\"]\n");
    std::fs::write(dir.join("named.toml"), named).unwrap();
    let r = run(&dir, Some("named.toml"), case, &[name]);
    assert_eq!(r.ret_errno(), (0, 0), "{case}: {}", r.stdout);
    assert_eq!(r.traces, Vec::<String>::new(), "{case}");
    let _ = std::fs::remove_dir_all(&dir);
}

const EACCES: (i64, i32) = (-1, libc::EACCES);
const ENOENT: (i64, i32) = (-1, libc::ENOENT);

/// A one-path write or read call: refused outside, same as bare inside
/// (success and the given error case).
fn one_path(case: &str, call: &str, access: &str, ok: &str, err: &str, deny: &str, path: &str) {
    refused("deny.toml", case, &[deny], call, access, path, None, EACCES);
    same_as_bare("ok.toml", case, &[ok]);
    same_as_bare("ok.toml", case, &[err]);
}

mod changes;
mod files;
mod metadata;
mod syscall;
