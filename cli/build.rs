//! Builds the preload library and hands its bytes to the CLI, so that a CLI
//! installed on its own (`cargo install --path cli`) still has a library to
//! preload (see src/embed.rs).
//!
//! Why a nested `cargo build` and not a dependency: cargo cannot depend on a
//! cdylib's file (artifact dependencies are unstable), and making the
//! library an rlib dependency would link its exported `open`, `execve`, …
//! into the programs that use it. So this script runs cargo on the library's
//! own package, with the same compiler and flags, for the same target, in a
//! target directory of its own below `OUT_DIR` (never the outer one: cargo
//! holds that one's lock while this script runs). Later builds are
//! incremental: the script reruns only when the library's sources change,
//! and then cargo rebuilds only what changed.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("manifest dir"));
    let ws = manifest.parent().expect("cli/ has a parent").to_path_buf();
    let target = std::env::var("TARGET").expect("TARGET");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let name = if os == "macos" {
        "libfsguard.dylib"
    } else {
        "libfsguard.so"
    };
    if !ws.join("src/lib.rs").is_file() || !ws.join("shim").is_dir() {
        panic!(
            "fsguard-cli embeds the preload library and builds it from the fsguard \
             package next to it ({}), which is not there",
            ws.display()
        );
    }
    println!("cargo:rustc-check-cfg=cfg(fsguard_no_embed)");
    for p in [
        "src",
        "shim",
        "policy/src",
        "policy/Cargo.toml",
        "Cargo.toml",
        "Cargo.lock",
        "build.rs",
    ] {
        println!("cargo:rerun-if-changed={}", ws.join(p).display());
    }

    // A Darwin target off a Mac: no macOS SDK, so nothing links and the
    // nested build cannot succeed. Only `cargo check`/`clippy` can run
    // there; the CLI is built without a library and says so when asked
    // for it (src/embed.rs). On a Mac the build goes on as anywhere.
    if os == "macos" && !cfg!(target_os = "macos") {
        println!("cargo:rustc-cfg=fsguard_no_embed");
        println!(
            "cargo:warning=no macOS SDK here: fsguard-cli for {target} carries no library \
             (it can be checked, not linked)"
        );
        return;
    }

    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let tdir = out.join("lib-target");
    let mut cmd = Command::new(cargo);
    cmd.current_dir(&ws)
        .args(["build", "--release", "--lib", "-p", "fsguard", "--target"])
        .arg(&target)
        .arg("--target-dir")
        .arg(&tdir)
        .arg("--manifest-path")
        .arg(ws.join("Cargo.toml"));
    // What cargo set for this script describes this package, not the
    // library's: the nested cargo sets its own. The compiler (RUSTC, a
    // caching RUSTC_WRAPPER), flags (CARGO_ENCODED_RUSTFLAGS), the jobserver
    // and the network settings are kept. A lint tool's wrapper is not: under
    // `cargo clippy` the library is built to be embedded, not linted, and its
    // lints must not fail the CLI's build.
    for (k, v) in std::env::vars_os() {
        let Some(k) = k.to_str() else { continue };
        let lint_wrapper = k == "RUSTC_WORKSPACE_WRAPPER"
            || k.starts_with("CLIPPY_")
            || (k == "RUSTC_WRAPPER" && v.to_string_lossy().contains("clippy"));
        if lint_wrapper
            || k.starts_with("CARGO_FEATURE_")
            || k.starts_with("CARGO_CFG_")
            || k.starts_with("CARGO_PKG_")
            || k.starts_with("CARGO_MANIFEST_")
            || k.starts_with("DEP_")
            || matches!(
                k,
                "OUT_DIR"
                    | "TARGET"
                    | "HOST"
                    | "PROFILE"
                    | "OPT_LEVEL"
                    | "DEBUG"
                    | "NUM_JOBS"
                    | "CARGO_TARGET_DIR"
                    | "CARGO_BUILD_TARGET_DIR"
                    | "CARGO_PRIMARY_PACKAGE"
                    | "CARGO_CRATE_NAME"
                    | "LD_PRELOAD"
            )
        {
            cmd.env_remove(k);
        }
    }
    // The embedded copy carries no debug info: a sixth of the size.
    cmd.env("CARGO_PROFILE_RELEASE_STRIP", "debuginfo");
    let status = cmd
        .status()
        .unwrap_or_else(|e| panic!("cannot run cargo to build the library: {e}"));
    if !status.success() {
        panic!("building the preload library failed ({status})");
    }
    let built = tdir.join(&target).join("release").join(name);
    let bytes = std::fs::read(&built).unwrap_or_else(|e| panic!("{}: {e}", built.display()));
    let dest = out.join(name);
    write_if_changed(&dest, &bytes);
    println!("cargo:rustc-env=FSGUARD_EMBED_PATH={}", dest.display());
    println!("cargo:rustc-env=FSGUARD_EMBED_NAME={name}");
    println!("cargo:rustc-env=FSGUARD_EMBED_HASH={}", hash(&bytes));
}

/// Leaves the file (and its mtime) alone when nothing changed.
fn write_if_changed(p: &Path, bytes: &[u8]) {
    if std::fs::read(p).ok().as_deref() != Some(bytes) {
        std::fs::write(p, bytes).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    }
}

/// The cache directory's name: FNV-1a (two lanes, 128 bits) of the bytes.
/// It only keeps versions apart; the CLI compares the cached file with its
/// embedded copy byte for byte before using it.
fn hash(bytes: &[u8]) -> String {
    let mut a: u64 = 0xcbf2_9ce4_8422_2325;
    let mut b: u64 = 0x6c62_272e_07bb_0142;
    for &x in bytes {
        a = (a ^ u64::from(x)).wrapping_mul(0x0000_0100_0000_01b3);
        b = (b ^ u64::from(x)).wrapping_mul(0x0000_0100_0000_01b3) ^ (b >> 29);
    }
    format!("{a:016x}{b:016x}")
}
