//! Where the library and the CLI under test are: built once per test binary
//! (`cargo test` does not build a cdylib for integration tests), by absolute
//! path.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

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

/// The library built with the `fault-injection` feature (a check of a path
/// named `fsguard-fault-panic` panics), once per test binary, in a target
/// dir of its own so the release library is never replaced by it. Only the
/// cdylib: no CLI.
pub fn fault_lib() -> &'static Path {
    static LIB: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match LIB.get_or_init(build_fault_lib) {
        Ok(p) => p,
        Err(e) => panic!("{e}"),
    }
}

fn build_fault_lib() -> Result<PathBuf, String> {
    let dir = target_dir().join("fault-injection");
    let out = Command::new(env!("CARGO"))
        .args(["build", "--release", "--lib", "-p", "fsguard"])
        .args(["--features", "fault-injection", "--target-dir"])
        .arg(&dir)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("LD_PRELOAD")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {} build: {e}", env!("CARGO")))?;
    let lib = dir.join("release/libfsguard.so");
    if !out.status.success() || !lib.is_file() {
        return Err(format!(
            "building the fault-injection library failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(lib)
}

pub fn target_dir() -> PathBuf {
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
