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

/// A program the library cannot follow, and why.
pub(crate) struct Unguarded {
    /// The program (a script's interpreter), symlinks resolved.
    pub(crate) path: PathBuf,
    /// `"static"`, or `"go"`: its runtime makes its own system calls.
    pub(crate) kind: &'static str,
    /// Whether the library is loaded into it all the same (a cgo program).
    pub(crate) loads_library: bool,
}

/// Whether the library cannot follow `exe`: statically linked (no
/// `PT_INTERP`) or a Go program, dynamic or static, directly or as a
/// script's interpreter. Set-id bits are ignored under `no_new_privs`,
/// which `run` always sets. Go calls libSystem on macOS, so there only a
/// static program counts.
pub(crate) fn unguarded_program(exe: &Path, depth: u32) -> Option<Unguarded> {
    use fsguard_policy::program::ElfKind;
    let mut f = std::fs::File::open(exe).ok()?;
    let mut head = [0u8; 256];
    let n = std::io::Read::read(&mut f, &mut head).ok()?;
    let head = &head[..n];
    if head.starts_with(b"#!") && depth == 0 {
        let interp = &head[fsguard_policy::program::interpreter(head)?];
        return unguarded_program(Path::new(OsStr::from_bytes(interp)), 1);
    }
    // Every program header is looked at, read where the file holds it.
    let kind = fsguard_policy::program::elf_kind(head, usize::MAX, |off, buf| {
        std::os::unix::fs::FileExt::read_at(&f, buf, off).ok()
    })?;
    let (kind, loads_library) = match kind {
        ElfKind::Dynamic => return None,
        ElfKind::Go { dynamic } if cfg!(not(target_os = "macos")) => ("go", dynamic),
        ElfKind::Go { dynamic: true } => return None,
        ElfKind::Go { dynamic: false } | ElfKind::Static => ("static", false),
    };
    Some(Unguarded {
        path: std::fs::canonicalize(exe).unwrap_or_else(|_| exe.to_path_buf()),
        kind,
        loads_library,
    })
}

/// Why dyld would not load the library into `exe` (or, for a script, its
/// interpreter): the message `run` refuses to start with. `None` on Linux,
/// where nothing strips the preload variable, without a look at the file.
pub(crate) fn unloadable(exe: &Path, lib: &Path) -> Option<String> {
    if !crate::sys::STRIPS_PRELOAD {
        return None; // no look, no system calls, on every Linux launch
    }
    let canon = std::fs::canonicalize(exe).ok()?;
    if crate::sys::dyld_stripped(&canon) {
        return Some(sip_message(&canon));
    }
    let mut head = [0u8; 256];
    let n = std::io::Read::read(&mut std::fs::File::open(&canon).ok()?, &mut head).ok()?;
    let program = match fsguard_policy::program::interpreter(&head[..n]) {
        Some(r) => std::fs::canonicalize(OsStr::from_bytes(&head[r])).ok()?,
        None => canon,
    };
    if crate::sys::dyld_stripped(&program) {
        return Some(sip_message(&program));
    }
    refusal(&program, lib, host_cpu())
}

/// The CPU type this CLI runs as. A program it starts runs as the same
/// when it has that architecture: on an arm64 Mac, a CLI running under
/// Rosetta starts a universal program's `x86_64` slice, as `arch -x86_64`
/// does.
fn host_cpu() -> u32 {
    use fsguard_policy::macho::{CPU_ARM64, CPU_X86_64};
    match std::env::consts::ARCH {
        "aarch64" => CPU_ARM64,
        "x86_64" => CPU_X86_64,
        _ => 0,
    }
}

fn sip_message(p: &Path) -> String {
    format!(
        "{}: protected by System Integrity Protection: macOS strips \
         DYLD_INSERT_LIBRARIES from it, so the library would not be loaded; \
         use a program installed outside the system directories (for Python, \
         one from python.org, Homebrew or a virtual environment made from it)",
        p.display()
    )
}

/// What dyld makes of `program` (canonical, no script) and `lib` on a
/// `host` CPU: set-id bits and code signatures make it strip
/// `DYLD_INSERT_LIBRARIES`, and a library without the architecture the
/// program runs as cannot be loaded. Plain file reads: tested on Linux.
fn refusal(program: &Path, lib: &Path, host: u32) -> Option<String> {
    use fsguard_policy::macho;
    use std::os::unix::fs::{FileExt, MetadataExt};
    let strips = "macOS strips DYLD_INSERT_LIBRARIES from it, so the library would not be loaded";
    let p = program.display();
    let f = std::fs::File::open(program).ok()?;
    if fsguard_policy::program::set_id(f.metadata().ok()?.mode()) {
        return Some(format!(
            "{p}: a set-user-ID or set-group-ID program: {strips}; run a copy \
             without the set-id bit (chmod u-s,g-s on the copy)"
        ));
    }
    let read = |off: u64, buf: &mut [u8]| f.read_at(buf, off).ok();
    let slices = macho::slices(read)?;
    let cpus: Vec<u32> = slices.iter().map(|s| s.cputype).collect();
    let arch = macho::runs_as(&cpus, host)?;
    let slice = slices.iter().find(|s| s.cputype == arch)?;
    match macho::signature(read, slice).and_then(|sig| sig.stripped()) {
        Some(macho::Stripped::HardenedRuntime) => {
            return Some(format!(
                "{p}: signed with the hardened runtime and without the \
                 {} entitlement: {strips}; use a build of it without the \
                 hardened runtime (or re-sign a copy: codesign -f -s - COPY)",
                macho::ALLOW_DYLD_ENV
            ))
        }
        Some(macho::Stripped::Restricted) => {
            return Some(format!(
                "{p}: its code signature is restricted (CS_RESTRICT): {strips}"
            ))
        }
        None => {}
    }
    let l = std::fs::File::open(lib).ok()?;
    let lib_slices = macho::slices(|off: u64, buf: &mut [u8]| l.read_at(buf, off).ok())?;
    if lib_slices.iter().any(|s| s.cputype == arch) {
        return None;
    }
    let name = macho::arch_name(arch);
    let rosetta = if arch != host { " (under Rosetta)" } else { "" };
    Some(format!(
        "{p}: runs as {name}{rosetta}, and the library {} has no {name} code, so \
         dyld cannot load it; use a library built for {name} too (a universal \
         one: lipo -create)",
        lib.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use fsguard_policy::macho::{CPU_ARM64, CPU_X86_64};
    use std::os::unix::fs::PermissionsExt;

    /// A scratch directory with a Mach-O object per architecture (clang,
    /// which CI installs: docs/macos.md).
    fn objects(tag: &str) -> (PathBuf, PathBuf, PathBuf) {
        let dir = std::env::temp_dir().join(format!("fsguard-lib-{}-{tag}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let src = dir.join("m.c");
        std::fs::write(&src, "int main(void) { return 0; }\n").unwrap();
        let mut out = Vec::new();
        for t in ["x86_64-apple-darwin", "arm64-apple-darwin"] {
            let o = dir.join(format!("{t}.o"));
            let st = std::process::Command::new("clang")
                .args(["-target", t, "-c"])
                .arg(&src)
                .arg("-o")
                .arg(&o)
                .status()
                .expect("clang must be installed (apt-get install clang)");
            assert!(st.success());
            out.push(o);
        }
        (dir, out.remove(0), out.remove(0))
    }

    #[test]
    fn set_id_programs_are_refused_by_name() {
        let (dir, x86, _) = objects("setid");
        let prog = dir.join("tool");
        std::fs::copy(&x86, &prog).unwrap();
        assert_eq!(refusal(&prog, &x86, CPU_X86_64), None);
        for mode in [0o4755, 0o2755] {
            std::fs::set_permissions(&prog, std::fs::Permissions::from_mode(mode)).unwrap();
            let m = refusal(&prog, &x86, CPU_X86_64).expect("refused");
            assert!(
                m.starts_with(&format!("{}: a set-user-ID", prog.display())),
                "{m}"
            );
            assert!(m.contains("strips DYLD_INSERT_LIBRARIES"), "{m}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_library_without_the_programs_architecture_is_refused() {
        let (dir, x86, arm) = objects("arch");
        // An x86_64 program on an arm64 Mac runs under Rosetta.
        let m = refusal(&x86, &arm, CPU_ARM64).expect("refused");
        assert!(m.contains("runs as x86_64 (under Rosetta)"), "{m}");
        assert!(
            m.contains(&format!("the library {} has no x86_64 code", arm.display())),
            "{m}"
        );
        let m = refusal(&arm, &x86, CPU_ARM64).expect("refused");
        assert!(m.contains("runs as arm64, and the library"), "{m}");
        // The same architecture, or a program that cannot run here at all
        // (exec reports that itself): nothing to say.
        assert_eq!(refusal(&x86, &x86, CPU_ARM64), None);
        assert_eq!(refusal(&arm, &arm, CPU_ARM64), None);
        assert_eq!(refusal(&arm, &x86, CPU_X86_64), None);
        // Not Mach-O (a Linux library, a text file): no verdict.
        let txt = dir.join("t");
        std::fs::write(&txt, "hello").unwrap();
        assert_eq!(refusal(&txt, &arm, CPU_ARM64), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn linux_never_looks() {
        if !crate::sys::STRIPS_PRELOAD {
            assert_eq!(unloadable(Path::new("/nonexistent"), Path::new("/x")), None);
        }
    }
}
