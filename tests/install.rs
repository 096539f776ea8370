//! A CLI installed on its own carries the library: `cargo install --path cli`
//! gives a working `fsguard` with no target/ anywhere, and the copy it writes
//! to `$XDG_CACHE_HOME/fsguard/<hash>/libfsguard.so` is created safely and
//! verified before every use (planted symlinks, loose permissions and a
//! tampered file are refused or replaced, never preloaded).

#![cfg(target_os = "linux")]

mod common;

use common::*;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A copy of the CLI alone in a directory: no library next to it or in
/// ../lib, so it can only use the copy it carries.
fn lone_cli(td: &TempDir) -> PathBuf {
    mkdir(&td.join("bin"));
    let p = td.join("bin/fsguard");
    std::fs::copy(cli(), &p).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

/// The lone CLI with its cache at `cache`, run from `cwd`.
fn lone(exe: &Path, cache: &Path, cwd: &Path, args: &[&str]) -> Out {
    run(bare_cmd(exe)
        .args(args)
        .env("XDG_CACHE_HOME", cache)
        .current_dir(cwd))
}

/// `sh -c "echo > MARKER"` under --readonly: refused when guarded.
fn write_attempt(exe: &Path, cache: &Path, cwd: &Path, marker: &Path) -> Out {
    let script = format!("echo > {}", marker.display());
    lone(
        exe,
        cache,
        cwd,
        &["run", "--readonly", "--", "sh", "-c", &script],
    )
}

fn assert_guarded(o: &Out, marker: &Path) {
    assert_ne!(o.code(), Some(0), "\n{}", o.describe());
    assert_ne!(o.code(), Some(125), "\n{}", o.describe());
    assert!(!marker.exists(), "the write went through\n{}", o.describe());
    assert_traces(o, &[Expect::new("open", "write", marker, "readonly")]);
}

fn assert_refused(o: &Out, marker: &Path, needle: &str) {
    assert_eq!(o.code(), Some(125), "\n{}", o.describe());
    assert!(
        !marker.exists(),
        "the command ran although the cache is unsafe\n{}",
        o.describe()
    );
    assert!(
        o.stderr.contains(needle),
        "stderr should say {needle:?}\n{}",
        o.describe()
    );
}

/// The cached library's path, as `fsguard lib-path` reports it.
fn lib_path(exe: &Path, cache: &Path, cwd: &Path) -> PathBuf {
    let o = lone(exe, cache, cwd, &["lib-path"]);
    assert_eq!(o.code(), Some(0), "\n{}", o.describe());
    PathBuf::from(o.stdout.trim())
}

/// A shared object whose constructor creates `marker`: if fsguard ever
/// preloaded it, the marker would show.
fn evil_library(td: &TempDir, marker: &Path) -> PathBuf {
    let src = td.join("evil.c");
    write_file(
        &src,
        &format!(
            "#include <fcntl.h>\n#include <unistd.h>\n\
             __attribute__((constructor)) static void evil(void) {{\n\
             int fd = open(\"{}\", O_WRONLY | O_CREAT, 0644); if (fd >= 0) close(fd); }}\n",
            marker.display()
        ),
        0o644,
    );
    let so = td.join("evil.so");
    let st = Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&so)
        .arg(&src)
        .status()
        .expect("cc");
    assert!(st.success());
    so
}

#[test]
fn lone_cli_writes_a_private_verified_cache() {
    let td = TempDir::new("embed");
    let exe = lone_cli(&td);
    let cache = td.join("cache");
    let cwd = td.join("elsewhere");
    mkdir(&cwd);
    let marker = td.join("marker");

    let lib = lib_path(&exe, &cache, &cwd);
    let dir = lib.parent().unwrap();
    assert_eq!(lib.file_name().unwrap(), "libfsguard.so");
    assert_eq!(dir.parent().unwrap(), cache.join("fsguard"));
    let hash = dir.file_name().unwrap().to_str().unwrap();
    assert!(
        hash.len() == 32 && hash.bytes().all(|b| b.is_ascii_hexdigit()),
        "{hash}"
    );
    for d in [cache.join("fsguard"), dir.to_path_buf()] {
        let md = std::fs::symlink_metadata(&d).unwrap();
        assert!(md.is_dir());
        assert_eq!(md.mode() & 0o7777, 0o700, "{}", d.display());
        // SAFETY: no arguments.
        assert_eq!(md.uid(), unsafe { libc::geteuid() });
    }
    let md = std::fs::symlink_metadata(&lib).unwrap();
    assert!(md.is_file());
    assert_eq!(md.mode() & 0o022, 0);
    let bytes = std::fs::read(&lib).unwrap();
    assert_eq!(&bytes[..4], b"\x7fELF");
    // No temporary files left behind.
    let names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["libfsguard.so"], "{names:?}");

    let o = write_attempt(&exe, &cache, &cwd, &marker);
    assert_guarded(&o, &marker);
    assert!(
        o.stderr.is_empty() || !o.stderr.contains("embedded"),
        "\n{}",
        o.describe()
    );
    // Written once: a second run leaves the file as it was.
    let ino = md.ino();
    let o = write_attempt(&exe, &cache, &cwd, &marker);
    assert_guarded(&o, &marker);
    assert_eq!(std::fs::symlink_metadata(&lib).unwrap().ino(), ino);
}

#[test]
fn tampered_cache_file_is_replaced_never_preloaded() {
    let td = TempDir::new("embedtamper");
    let exe = lone_cli(&td);
    let cache = td.join("cache");
    let marker = td.join("marker");
    let ran = td.join("evil-ran");
    let evil = evil_library(&td, &ran);
    let lib = lib_path(&exe, &cache, td.path());
    let good = std::fs::read(&lib).unwrap();

    // A different (working) library in its place: replaced before use.
    std::fs::set_permissions(&lib, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::write(&lib, std::fs::read(&evil).unwrap()).unwrap();
    std::fs::set_permissions(&lib, std::fs::Permissions::from_mode(0o500)).unwrap();
    let o = write_attempt(&exe, &cache, td.path(), &marker);
    assert_guarded(&o, &marker);
    assert!(!ran.exists(), "the tampered library was preloaded");
    assert_eq!(std::fs::read(&lib).unwrap(), good);

    // Same size, one byte changed.
    let mut bad = good.clone();
    let i = bad.len() / 2;
    bad[i] ^= 0xff;
    std::fs::set_permissions(&lib, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::write(&lib, &bad).unwrap();
    std::fs::set_permissions(&lib, std::fs::Permissions::from_mode(0o500)).unwrap();
    assert_eq!(lib_path(&exe, &cache, td.path()), lib);
    assert_eq!(std::fs::read(&lib).unwrap(), good);

    // Right bytes, but writable by others: replaced by the user's own file.
    std::fs::set_permissions(&lib, std::fs::Permissions::from_mode(0o666)).unwrap();
    let o = write_attempt(&exe, &cache, td.path(), &marker);
    assert_guarded(&o, &marker);
    assert_eq!(
        std::fs::symlink_metadata(&lib).unwrap().mode() & 0o022,
        0,
        "a file others may write was used as it was"
    );

    // A symlink planted in its place: replaced, its target left alone.
    std::fs::remove_file(&lib).unwrap();
    std::os::unix::fs::symlink(&evil, &lib).unwrap();
    let evil_before = std::fs::read(&evil).unwrap();
    let o = write_attempt(&exe, &cache, td.path(), &marker);
    assert_guarded(&o, &marker);
    assert!(!ran.exists(), "the symlinked library was preloaded");
    assert!(std::fs::symlink_metadata(&lib).unwrap().is_file());
    assert_eq!(std::fs::read(&lib).unwrap(), good);
    assert_eq!(std::fs::read(&evil).unwrap(), evil_before);

    // Something that cannot be replaced (a directory): refused, 125.
    std::fs::remove_file(&lib).unwrap();
    mkdir(&lib);
    write_file(&lib.join("x"), "x", 0o644);
    let o = write_attempt(&exe, &cache, td.path(), &marker);
    assert_refused(&o, &marker, "embedded library");
}

#[test]
fn unsafe_cache_directories_are_refused() {
    let td = TempDir::new("embeddirs");
    let exe = lone_cli(&td);
    let marker = td.join("marker");
    let ran = td.join("evil-ran");
    let evil = evil_library(&td, &ran);
    let hash = {
        let c = td.join("probe");
        let lib = lib_path(&exe, &c, td.path());
        lib.parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_owned()
            .into_string()
            .unwrap()
    };

    // cache/fsguard is a symlink to a directory someone prepared, holding a
    // library under the right name.
    let planted = td.join("planted");
    mkdir(&planted.join(&hash));
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::set_permissions(planted.join(&hash), std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::copy(&evil, planted.join(&hash).join("libfsguard.so")).unwrap();
    let c1 = td.join("c1");
    mkdir(&c1);
    std::os::unix::fs::symlink(&planted, c1.join("fsguard")).unwrap();
    let o = write_attempt(&exe, &c1, td.path(), &marker);
    assert_refused(&o, &marker, "not a directory");
    assert!(!ran.exists(), "the planted library was preloaded");

    // The <hash> directory a symlink.
    let c2 = td.join("c2");
    mkdir(&c2.join("fsguard"));
    std::fs::set_permissions(c2.join("fsguard"), std::fs::Permissions::from_mode(0o700)).unwrap();
    std::os::unix::fs::symlink(planted.join(&hash), c2.join("fsguard").join(&hash)).unwrap();
    let o = write_attempt(&exe, &c2, td.path(), &marker);
    assert_refused(&o, &marker, "not a directory");
    assert!(!ran.exists(), "the planted library was preloaded");

    // cache/fsguard open to others.
    for (sub, mode) in [("fsguard", 0o755), ("fsguard", 0o777)] {
        let c = td.join(format!("c-{mode:o}"));
        mkdir(&c.join(sub));
        std::fs::set_permissions(c.join(sub), std::fs::Permissions::from_mode(mode)).unwrap();
        let o = write_attempt(&exe, &c, td.path(), &marker);
        assert_refused(&o, &marker, "0700");
    }
    // <hash> open to others.
    let c3 = td.join("c3");
    mkdir(&c3.join("fsguard").join(&hash));
    std::fs::set_permissions(c3.join("fsguard"), std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::set_permissions(
        c3.join("fsguard").join(&hash),
        std::fs::Permissions::from_mode(0o770),
    )
    .unwrap();
    let o = write_attempt(&exe, &c3, td.path(), &marker);
    assert_refused(&o, &marker, "0700");

    // The cache base itself writable by others (and not sticky): whoever
    // can write there could swap fsguard/ after the check.
    let c4 = td.join("c4");
    mkdir(&c4);
    std::fs::set_permissions(&c4, std::fs::Permissions::from_mode(0o777)).unwrap();
    let o = write_attempt(&exe, &c4, td.path(), &marker);
    assert_refused(&o, &marker, "writable by others");
    assert!(!c4.join("fsguard").exists());
    // Sticky (like /tmp): fine, fsguard/ is ours and private.
    std::fs::set_permissions(&c4, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let o = write_attempt(&exe, &c4, td.path(), &marker);
    assert_guarded(&o, &marker);

    // Owned by someone else (needs root to set up).
    // SAFETY: no arguments.
    if unsafe { libc::geteuid() } == 0 {
        let c5 = td.join("c5");
        mkdir(&c5.join("fsguard"));
        std::fs::set_permissions(c5.join("fsguard"), std::fs::Permissions::from_mode(0o700))
            .unwrap();
        std::os::unix::fs::chown(c5.join("fsguard"), Some(65534), Some(65534)).unwrap();
        let o = write_attempt(&exe, &c5, td.path(), &marker);
        assert_refused(&o, &marker, "belongs to uid 65534");
    }
}

/// `cargo install --path cli --root TMP`: the installed CLI runs guarded
/// commands from another directory. The build goes to a target directory of
/// its own (kept between runs, so only the first run builds from scratch);
/// the installed CLI has no way to it: it looks next to itself, in
/// TMP/lib (absent) and in its cache.
#[test]
fn cargo_install_cli_works_alone() {
    let td = TempDir::new("cargoinstall");
    let root = td.join("root");
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tdir = cli()
        .parent()
        .and_then(Path::parent)
        .unwrap()
        .join("cargo-install");
    // No time limit: a first build takes minutes on a busy machine.
    let out = Command::new(env!("CARGO"))
        .args([
            "install",
            "--offline",
            "--locked",
            "--path",
            "cli",
            "--root",
        ])
        .arg(&root)
        .env("CARGO_TARGET_DIR", &tdir)
        .env_remove("LD_PRELOAD")
        .env_remove("CARGO_BUILD_TARGET_DIR")
        .current_dir(repo)
        .output()
        .expect("cargo install");
    assert!(
        out.status.success(),
        "cargo install failed\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let exe = root.join("bin/fsguard");
    assert!(exe.is_file());
    assert!(!root.join("lib").exists());
    let names: Vec<_> = std::fs::read_dir(root.join("bin"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["fsguard"]);

    let ws = td.join("ws");
    let other = td.join("elsewhere");
    mkdir(&ws);
    mkdir(&other);
    let cache = td.join("cache");
    let lib = lib_path(&exe, &cache, &other);
    assert!(lib.starts_with(cache.join("fsguard")), "{}", lib.display());
    let outside = td.join("outside.txt");
    let script = format!(
        "open({:?}, 'w').write('in')\ntry:\n    open({:?}, 'w')\nexcept PermissionError as e:\n    print('denied', e.errno)\n",
        ws.join("in.txt").display().to_string(),
        outside.display().to_string()
    );
    let o = lone(
        &exe,
        &cache,
        &other,
        &[
            "run",
            "--root",
            ws.to_str().unwrap(),
            "--",
            python().to_str().unwrap(),
            "-c",
            &script,
        ],
    );
    assert_eq!(o.code(), Some(0), "\n{}", o.describe());
    assert_eq!(o.stdout.trim(), "denied 13", "\n{}", o.describe());
    assert_eq!(std::fs::read_to_string(ws.join("in.txt")).unwrap(), "in");
    assert!(!outside.exists());
    assert_traces(&o, &[Expect::new("open", "write", &outside, "root")]);
}
