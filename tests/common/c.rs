//! C helper programs from `tests/c/`, compiled once per test binary.

use super::files::unique;
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

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
