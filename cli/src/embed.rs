//! The library the CLI carries (built by build.rs), for a CLI installed
//! without one (`cargo install --path cli`): written once to
//! `$XDG_CACHE_HOME/fsguard/<hash>/libfsguard.so` (default `~/.cache`) and
//! preloaded from there.
//!
//! The loader opens the library by path, so whoever can change that file,
//! or swap a directory on the way to it, decides what runs inside every
//! guarded command. Hence:
//! - every directory on the path is owned by the user or root and not
//!   writable by others (unless sticky, like /tmp); the two fsguard makes
//!   (`fsguard/` and `<hash>/`) are the user's, mode 0700, opened with
//!   `O_NOFOLLOW` and checked with `fstat` on the descriptor;
//! - the file is written under a fresh name (`O_CREAT|O_EXCL|O_NOFOLLOW`)
//!   in that directory and renamed into place, so no reader sees half a
//!   library and nothing planted under the final name is written through;
//! - before every use the file is read through a descriptor opened with
//!   `O_NOFOLLOW` and compared with the embedded copy byte for byte; a
//!   different file is replaced, and if that does not hold, refused.

// A build without the library keeps the installer (and its tests) compiled.
#![cfg_attr(fsguard_no_embed, allow(dead_code))]

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The library's bytes.
#[cfg(not(fsguard_no_embed))]
static BYTES: &[u8] = include_bytes!(env!("FSGUARD_EMBED_PATH"));
/// Its file name (`libfsguard.so`).
#[cfg(not(fsguard_no_embed))]
const NAME: &str = env!("FSGUARD_EMBED_NAME");
/// A hash of the bytes: the cache subdirectory, one per library version.
#[cfg(not(fsguard_no_embed))]
const HASH: &str = env!("FSGUARD_EMBED_HASH");

/// The path of the cached, verified copy of the embedded library.
#[cfg(not(fsguard_no_embed))]
pub fn library() -> Result<PathBuf, String> {
    let base = cache_base()?;
    install(&base, HASH, NAME, BYTES).map_err(|e| format!("the embedded library: {e}"))
}

/// A build for macOS made where nothing links (cli/build.rs) carries no
/// library: say so, and how to name one.
#[cfg(fsguard_no_embed)]
pub fn library() -> Result<PathBuf, String> {
    Err(
        "no embedded library in this build (built for macOS where no macOS SDK \
         could link one)"
            .into(),
    )
}

/// `$XDG_CACHE_HOME`, else `$HOME/.cache` (relative values are ignored, as
/// the XDG base directory specification says).
fn cache_base() -> Result<PathBuf, String> {
    let abs = |k: &str| {
        std::env::var_os(k)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    abs("XDG_CACHE_HOME")
        .or_else(|| abs("HOME").map(|h| h.join(".cache")))
        .ok_or_else(|| "no cache directory: neither XDG_CACHE_HOME nor HOME is set".into())
}

/// Writes `bytes` to `base/fsguard/hash/name` unless a verified copy is
/// there, and returns that file's path with no symlink in it.
pub fn install(base: &Path, hash: &str, name: &str, bytes: &[u8]) -> Result<PathBuf, String> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(base)
        .map_err(|e| format!("{}: {e}", base.display()))?;
    // The base directory is the user's choice and may be a symlink.
    let base_fd = open_at(
        libc::AT_FDCWD,
        base.as_os_str().as_bytes(),
        libc::O_DIRECTORY,
    )
    .map_err(|e| format!("{}: {e}", base.display()))?;
    let real_base = fd_path(&base_fd)?;
    check_ancestors(&real_base)?;
    let top = private_dir(&base_fd, &real_base, "fsguard")?;
    let dir = private_dir(&top, &real_base.join("fsguard"), hash)?;
    let dir_path = fd_path(&dir)?;
    let file = dir_path.join(name);
    if verify(&dir, name, bytes).is_ok() {
        return Ok(file);
    }
    write_fresh(&dir, name, bytes).map_err(|e| format!("{}: {e}", file.display()))?;
    verify(&dir, name, bytes).map_err(|e| {
        format!(
            "{}: {e} (written just now; something else is changing it)",
            file.display()
        )
    })?;
    Ok(file)
}

/// Every directory from `/` down to `p` must be owned by the user or root
/// and not writable by anyone else, unless sticky (others cannot rename or
/// remove what is ours there).
fn check_ancestors(p: &Path) -> Result<(), String> {
    // SAFETY: no arguments, cannot fail.
    let uid = unsafe { libc::geteuid() };
    for a in p.ancestors() {
        let st = lstat(a).map_err(|e| format!("{}: {e}", a.display()))?;
        let mode = st.st_mode;
        let bad = if mode & libc::S_IFMT != libc::S_IFDIR {
            Some("is not a directory".to_string())
        } else if st.st_uid != uid && st.st_uid != 0 {
            Some(format!("belongs to uid {}", st.st_uid))
        } else if mode & 0o022 != 0 && mode & libc::S_ISVTX == 0 {
            Some(format!(
                "is writable by others (mode {:04o})",
                mode & 0o7777
            ))
        } else {
            None
        };
        if let Some(why) = bad {
            return Err(format!(
                "{} {why}: a cache below it could be swapped; set XDG_CACHE_HOME \
                 to a private directory or FSGUARD_LIB to a library",
                a.display()
            ));
        }
    }
    Ok(())
}

/// `parent/name`, created 0700 if missing; refused unless it is a real
/// directory (not a symlink) owned by the user with no access for others.
fn private_dir(parent: &OwnedFd, parent_path: &Path, name: &str) -> Result<OwnedFd, String> {
    let shown = parent_path.join(name);
    let c = CString::new(name).map_err(|_| "bad name".to_string())?;
    // SAFETY: a directory fd we own and a C string.
    if unsafe { libc::mkdirat(parent.as_raw_fd(), c.as_ptr(), 0o700) } != 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EEXIST) {
            return Err(format!("{}: {e}", shown.display()));
        }
    }
    let fd = open_at(
        parent.as_raw_fd(),
        name.as_bytes(),
        libc::O_DIRECTORY | libc::O_NOFOLLOW,
    )
    .map_err(|e| match e.raw_os_error() {
        Some(libc::ELOOP) | Some(libc::ENOTDIR) => format!(
            "{}: not a directory (a symlink or a file is in the way); remove it",
            shown.display()
        ),
        _ => format!("{}: {e}", shown.display()),
    })?;
    let st = fstat(&fd).map_err(|e| format!("{}: {e}", shown.display()))?;
    // SAFETY: no arguments, cannot fail.
    let uid = unsafe { libc::geteuid() };
    if st.st_uid != uid {
        return Err(format!(
            "{}: belongs to uid {}, not to you; remove it",
            shown.display(),
            st.st_uid
        ));
    }
    if st.st_mode & 0o077 != 0 {
        return Err(format!(
            "{}: mode {:04o}, but fsguard keeps its cache private (0700); \
             remove it or chmod 700 it",
            shown.display(),
            st.st_mode & 0o7777
        ));
    }
    Ok(fd)
}

/// Whether `dir/name` is a regular file of the user's, not writable by
/// others, holding exactly `bytes`.
fn verify(dir: &OwnedFd, name: &str, bytes: &[u8]) -> Result<(), String> {
    // O_NONBLOCK: a FIFO in the way must not hang the open.
    let fd = open_at(
        dir.as_raw_fd(),
        name.as_bytes(),
        libc::O_NOFOLLOW | libc::O_NONBLOCK,
    )
    .map_err(|e| e.to_string())?;
    let st = fstat(&fd).map_err(|e| e.to_string())?;
    // SAFETY: no arguments, cannot fail.
    let uid = unsafe { libc::geteuid() };
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Err("not a regular file".into());
    }
    if st.st_uid != uid || st.st_mode & 0o022 != 0 {
        return Err("not the user's own read-only file".into());
    }
    if st.st_size as u64 != bytes.len() as u64 {
        return Err("not the embedded library (size differs)".into());
    }
    // Compared a block at a time, not read whole: no copy of the
    // megabytes to allocate and fault in on every launch.
    let differs = || Err("not the embedded library (content differs)".to_string());
    let mut f = std::fs::File::from(fd);
    let mut buf = vec![0u8; 1 << 16];
    let mut off = 0;
    loop {
        let n = match std::io::Read::read(&mut f, &mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.to_string()),
        };
        if bytes.get(off..off + n) != Some(&buf[..n]) {
            return differs();
        }
        off += n;
    }
    if off != bytes.len() {
        return differs();
    }
    Ok(())
}

/// Writes `bytes` under a fresh name in `dir` and renames it to `name`,
/// replacing whatever was there (a symlink is replaced, not followed).
fn write_fresh(dir: &OwnedFd, name: &str, bytes: &[u8]) -> Result<(), String> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let tmp = format!(".{name}.{}.{nanos:08x}.tmp", std::process::id());
    let fd = open_at(
        dir.as_raw_fd(),
        tmp.as_bytes(),
        libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW,
    )
    .map_err(|e| format!("{tmp}: {e}"))?;
    let mut f = std::fs::File::from(fd);
    let wrote = std::io::Write::write_all(&mut f, bytes).and_then(|()| f.sync_all());
    drop(f);
    let tmp_c = CString::new(tmp.as_str()).map_err(|_| "bad name".to_string())?;
    let name_c = CString::new(name).map_err(|_| "bad name".to_string())?;
    if let Err(e) = wrote {
        // SAFETY: our directory fd and C strings.
        unsafe { libc::unlinkat(dir.as_raw_fd(), tmp_c.as_ptr(), 0) };
        return Err(format!("{tmp}: {e}"));
    }
    // SAFETY: our directory fd and C strings.
    if unsafe {
        libc::renameat(
            dir.as_raw_fd(),
            tmp_c.as_ptr(),
            dir.as_raw_fd(),
            name_c.as_ptr(),
        )
    } != 0
    {
        let e = std::io::Error::last_os_error();
        // SAFETY: as above.
        unsafe { libc::unlinkat(dir.as_raw_fd(), tmp_c.as_ptr(), 0) };
        return Err(e.to_string());
    }
    Ok(())
}

/// `openat(dirfd, name, flags | O_CLOEXEC)`, files created 0500.
fn open_at(dirfd: i32, name: &[u8], flags: i32) -> std::io::Result<OwnedFd> {
    let c = CString::new(name).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: a C string; the mode is read only with O_CREAT.
    let fd = unsafe { libc::openat(dirfd, c.as_ptr(), flags | libc::O_CLOEXEC, 0o500) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn fstat(fd: &OwnedFd) -> std::io::Result<libc::stat> {
    // SAFETY: zeroed plain data, filled by the kernel.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: our fd and a valid buffer.
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(st)
}

fn lstat(p: &Path) -> std::io::Result<libc::stat> {
    let c = CString::new(p.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: zeroed plain data, filled by the kernel.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a C string and a valid buffer.
    if unsafe { libc::lstat(c.as_ptr(), &mut st) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(st)
}

/// The path the kernel has for a directory we hold open: no symlinks.
fn fd_path(fd: &OwnedFd) -> Result<PathBuf, String> {
    crate::sys::fd_path(fd.as_raw_fd()).map_err(|e| format!("cannot name an open directory: {e}"))
}

#[cfg(all(test, not(fsguard_no_embed)))]
mod tests {
    use super::*;

    #[test]
    fn embedded_library_is_an_elf_shared_object() {
        assert_eq!(&BYTES[..4], b"\x7fELF");
        assert_eq!(HASH.len(), 32);
    }
}
