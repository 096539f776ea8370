//! The lexical route: a path joined with its base (the cwd or a dirfd's
//! path) and folded, then opened refusing to cross a symlink.

use std::ffi::CStr;
use std::os::fd::OwnedFd;

use rustix::fs::{Mode, OFlags, CWD};
use rustix::io::Errno;

use super::{dir, fd_path, PathBuf, RawPath, PATH_CAP};

/// The fast path: joins `path` to its base (nothing for an absolute path, the
/// cwd, or the dirfd's path) into `raw`, and folds `.`/`..` lexically into
/// `out`. Lexical folding equals the kernel's walk exactly when no symlink is
/// crossed, which the caller proves with `RESOLVE_NO_SYMLINKS` ([`verify`],
/// or an `openat2` that does the real work). `None`: take the slow path.
pub fn lexical(dirfd: i32, path: &CStr, out: &mut PathBuf, raw: &mut RawPath) -> Option<()> {
    out.set_len(0);
    if dirfd == libc::AT_FDCWD || path.to_bytes().first() == Some(&b'/') {
        join_cwd(dirfd, path, raw)?;
        return fold(raw, out);
    }
    let bytes = path.to_bytes();
    if bytes.is_empty() {
        return None;
    }
    raw.len = 0;
    fd_path(dirfd, out).ok()?;
    let base = out.as_bytes();
    if out.long.is_some() {
        return None;
    }
    if base.first() != Some(&b'/') || !raw.push(base) || !raw.push(b"/") || !raw.push(bytes) {
        return None;
    }
    fold(raw, out)
}

/// What [`join_cwd`] made of a path.
pub enum Joined {
    /// Nothing to fold: the first `n` bytes of the joined path are its
    /// lexical form.
    Plain(usize),
    /// [`fold`] gives its lexical form.
    Fold,
}

/// The first half of [`lexical`] for an absolute path or one relative to the
/// cwd, which needs no second buffer: joins `path` to the cwd into `raw`.
/// `None`: relative to another dirfd, or not joinable (take [`lexical`]).
pub fn join_cwd(dirfd: i32, path: &CStr, raw: &mut RawPath) -> Option<Joined> {
    let bytes = path.to_bytes();
    if bytes.is_empty() || (bytes[0] != b'/' && dirfd != libc::AT_FDCWD) {
        return None;
    }
    raw.len = 0;
    if bytes[0] != b'/' && (!raw.cwd() || raw.bytes().first() != Some(&b'/') || !raw.push(b"/")) {
        return None;
    }
    if !raw.push(bytes) {
        return None;
    }
    Some(match folded_len(raw.bytes()) {
        Some(n) => Joined::Plain(n),
        None => Joined::Fold,
    })
}

/// The second half of [`lexical`]: the joined path in `raw`, folded into
/// `out`.
pub fn fold(raw: &RawPath, out: &mut PathBuf) -> Option<()> {
    let raw_bytes = raw.bytes();
    if let Some(n) = folded_len(raw_bytes) {
        // Nothing to fold (the usual case): one copy.
        if n > PATH_CAP {
            return None;
        }
        out.put(0, &raw_bytes[..n]).ok()?;
        out.set_len(n);
        return Some(());
    }
    out.set_len(0);
    for comp in raw_bytes.split(|&b| b == b'/') {
        match comp {
            b"" | b"." => {}
            b".." => {
                let cur = out.as_bytes();
                out.len = cur.iter().rposition(|&b| b == b'/').unwrap_or(0);
            }
            name => {
                if out.len + 1 + name.len() > PATH_CAP {
                    return None;
                }
                let at = out.len;
                out.put(at, b"/").ok()?;
                out.put(at + 1, name).ok()?;
                out.len = at + 1 + name.len();
            }
        }
    }
    if out.len == 0 {
        out.put(0, b"/").ok()?;
        out.len = 1;
    }
    Some(())
}

/// The length of an absolute path once its trailing slashes are dropped,
/// when that is all folding would change: no empty, `.` or `..` component.
/// `None`: fold it.
pub(super) fn folded_len(p: &[u8]) -> Option<usize> {
    let end = p.iter().rposition(|&b| b != b'/')? + 1;
    let s = &p[..end];
    if s[0] != b'/' {
        return None;
    }
    // What the current name is so far: 0 nothing, 1 ".", 2 "..", 3 a name.
    let mut name = 0u8;
    for &b in &s[1..] {
        if b == b'/' {
            if name < 3 {
                return None;
            }
            name = 0;
        } else if b == b'.' && name < 3 {
            name += 1;
        } else {
            name = 3;
        }
    }
    (name == 3).then_some(end)
}

/// Opens the path [`lexical`] folded with the caller's flags, refusing to
/// cross a symlink, so the object opened is the one whose lexical path was
/// checked ([`crate::sys::open_strict`]): relative to the caller's dirfd,
/// beneath it (its path read from /proc only named it), else the absolute
/// form in `raw`. `None`: a symlink or `..` above the dirfd was in the way
/// (or openat2 is unavailable): take the slow path.
pub fn open_exact(
    dirfd: i32,
    path: &CStr,
    raw: &mut RawPath,
    flags: i32,
    mode: libc::mode_t,
) -> Option<Result<OwnedFd, Errno>> {
    let needs_mode = flags & libc::O_CREAT != 0 || crate::classify::tmpfile(flags);
    let mode = if needs_mode { mode & 0o7777 } else { 0 };
    let oflags = OFlags::from_bits_retain(flags as u32);
    let beneath = dirfd != libc::AT_FDCWD && path.to_bytes().first() != Some(&b'/');
    let mode = Mode::from_raw_mode(mode);
    let r = if beneath {
        crate::sys::open_strict(dir(dirfd).ok()?, path, oflags, mode, true)
    } else {
        crate::sys::open_strict(CWD, raw.as_cstr(), oflags, mode, false)
    };
    match r {
        Ok(fd) => Some(Ok(fd)),
        // ELOOP: a symlink; EXDEV/EINVAL/E2BIG/ENOSYS/EAGAIN: openat2 itself;
        // EACCES/EPERM: maybe only on the absolute way to a relative path
        // (an untraversable ancestor of the cwd): let the real call answer.
        Err(
            Errno::LOOP
            | Errno::XDEV
            | Errno::INVAL
            | Errno::TOOBIG
            | Errno::NOSYS
            | Errno::AGAIN
            | Errno::ACCESS
            | Errno::PERM,
        ) => None,
        Err(e) => Some(Err(e)),
    }
}
