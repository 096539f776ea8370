//! Which library `run` preloads, and which programs it cannot follow.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The library: `$FSGUARD_LIB`, else next to this executable, else `../lib/`,
/// else the copy the CLI carries (written to the user's cache).
pub(crate) fn find_library() -> Result<PathBuf, String> {
    let name = if cfg!(target_os = "macos") {
        "libfsguard.dylib"
    } else {
        "libfsguard.so"
    };
    let candidates: Vec<PathBuf> = match std::env::var_os("FSGUARD_LIB") {
        Some(p) => vec![PathBuf::from(p)],
        None => {
            let exe = std::env::current_exe().map_err(|e| format!("cannot locate fsguard: {e}"))?;
            let dir = exe.parent().unwrap_or(Path::new("/")).to_path_buf();
            vec![dir.join(name), dir.join("../lib").join(name)]
        }
    };
    for c in &candidates {
        // The magic number only: the library is megabytes.
        if let Ok(bytes) = std::fs::File::open(c).map(|f| {
            let mut b = Vec::with_capacity(4);
            let _ = std::io::Read::read_to_end(&mut std::io::Read::take(f, 4), &mut b);
            (b.len() == 4).then_some(b)
        }) {
            let elf = bytes.as_deref() == Some(b"\x7fELF");
            let macho = bytes
                .as_deref()
                .is_some_and(|b| b[..3] == [0xcf, 0xfa, 0xed]);
            if !(elf || macho) {
                return Err(format!("{} is not a shared library", c.display()));
            }
            return std::fs::canonicalize(c).map_err(|e| format!("{}: {e}", c.display()));
        }
    }
    let looked = candidates
        .iter()
        .map(|c| c.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    if std::env::var_os("FSGUARD_LIB").is_some() {
        return Err(format!("library not found (looked at {looked})"));
    }
    crate::embed::library()
        .map_err(|e| format!("library not found (looked at {looked}), and {e}; set FSGUARD_LIB"))
}

/// Whether the library cannot follow `exe`: statically linked (no
/// `PT_INTERP`), directly or as a script's interpreter. Set-id bits are
/// ignored under `no_new_privs`, which `run` always sets.
pub(crate) fn static_program(exe: &Path, depth: u32) -> Option<PathBuf> {
    let mut f = std::fs::File::open(exe).ok()?;
    let mut head = [0u8; 256];
    let n = std::io::Read::read(&mut f, &mut head).ok()?;
    let head = &head[..n];
    if head.starts_with(b"#!") && depth == 0 {
        let interp = &head[fsguard_policy::program::interpreter(head)?];
        return static_program(Path::new(OsStr::from_bytes(interp)), 1);
    }
    // Every program header is looked at, read where the file holds it.
    let interp = fsguard_policy::program::elf_has_interp(head, usize::MAX, |off, buf| {
        std::os::unix::fs::FileExt::read_at(&f, buf, off).ok()
    })?;
    (!interp).then(|| std::fs::canonicalize(exe).unwrap_or_else(|_| exe.to_path_buf()))
}

/// The program, `exe` itself or a script's interpreter, from which the
/// system strips the preload variable (macOS's System Integrity Protection:
/// [`crate::sys::dyld_stripped`]); `None` on Linux, where there is none.
pub(crate) fn stripped_program(exe: &Path) -> Option<PathBuf> {
    if !crate::sys::STRIPS_PRELOAD {
        return None; // no look, no system calls, on every Linux launch
    }
    let canon = std::fs::canonicalize(exe).ok()?;
    if crate::sys::dyld_stripped(&canon) {
        return Some(canon);
    }
    let mut head = [0u8; 256];
    let n = std::io::Read::read(&mut std::fs::File::open(&canon).ok()?, &mut head).ok()?;
    let interp = &head[fsguard_policy::program::interpreter(&head[..n])?];
    let interp = std::fs::canonicalize(OsStr::from_bytes(interp)).ok()?;
    crate::sys::dyld_stripped(&interp).then_some(interp)
}
