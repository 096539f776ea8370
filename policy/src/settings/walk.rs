//! Canonical names of many paths at once: `realpath`'s own walk (one
//! `readlink` per component), with each component's answer kept for the
//! paths that share it. The `system` locations share `/usr`, `/etc`,
//! `/proc`, `/sys` and `$HOME`; `realpath` asked the kernel about each of
//! them again for every path (about 160 calls per settings build).
//!
//! The answers are the ones `std::fs::canonicalize` gives: the walk is
//! glibc's, including its `ELOOP` limit and its directory check before a
//! trailing `/`, `/.` or `/..`. A `Walk` lives for one settings build, a
//! moment in which `realpath` itself would not notice a change either.
//!
//! Asking the kernel for each whole path (`open(O_PATH)`, then `readlink`
//! of `/proc/self/fd/N`) costs more than this: three calls per path, the
//! `/proc` one dearer than a short `realpath`. Listing a directory to
//! answer for its children costs more than looking them up one by one
//! (`/etc`, `/proc`), and a listing cannot prove a name absent (procfs
//! threads, autofs, case-folding directories).

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// Symlinks followed in one path before `ELOOP` (glibc's and Linux's).
const MAX_LINKS: usize = 40;
const EIO: i32 = 5;
const ENOENT: i32 = 2;
const ENOTDIR: i32 = 20;
const EINVAL: i32 = 22;
const ELOOP: i32 = 40;

/// What `readlink` said of one exact path: `Ok(Some(target))` for a
/// symlink, `Ok(None)` for anything else that exists, `Err(errno)`.
type Answer = Result<Option<Vec<u8>>, i32>;

/// A `realpath` that asks the kernel about each path component once.
#[derive(Debug, Default)]
pub(super) struct Walk {
    links: RefCell<HashMap<Vec<u8>, Answer>>,
}

impl Walk {
    pub(super) fn new() -> Walk {
        Walk::default()
    }

    fn readlink(&self, p: &[u8]) -> Answer {
        if let Some(a) = self.links.borrow().get(p) {
            return a.clone();
        }
        let a = match std::fs::read_link(OsStr::from_bytes(p)) {
            Ok(t) => Ok(Some(t.into_os_string().into_vec())),
            Err(e) if e.raw_os_error() == Some(EINVAL) => Ok(None),
            Err(e) => Err(e.raw_os_error().unwrap_or(EIO)),
        };
        self.links.borrow_mut().insert(p.to_vec(), a.clone());
        a
    }

    /// What `std::fs::canonicalize(p)` answers. Relative paths go to it.
    pub(super) fn canonicalize(&self, p: &Path) -> io::Result<PathBuf> {
        let name = p.as_os_str().as_bytes();
        if name.first() != Some(&b'/') {
            return std::fs::canonicalize(p);
        }
        let fail = |errno| Err(io::Error::from_raw_os_error(errno));
        let mut dest = vec![b'/'];
        let mut rest = name.to_vec();
        let mut pos = 0;
        let mut links = 0;
        loop {
            while rest.get(pos) == Some(&b'/') {
                pos += 1;
            }
            let start = pos;
            while pos < rest.len() && rest[pos] != b'/' {
                pos += 1;
            }
            match &rest[start..pos] {
                b"" => break,
                b"." => continue,
                b".." => {
                    pop(&mut dest);
                    continue;
                }
                comp => {
                    if dest.last() != Some(&b'/') {
                        dest.push(b'/');
                    }
                    dest.extend_from_slice(comp);
                }
            }
            let answer = self.readlink(&dest);
            if let Ok(Some(target)) = answer {
                links += 1;
                if links > MAX_LINKS {
                    return fail(ELOOP);
                }
                let mut next = target;
                next.extend_from_slice(&rest[pos..]);
                if next.first() == Some(&b'/') {
                    dest.truncate(1);
                } else {
                    pop(&mut dest);
                }
                rest = next;
                pos = 0;
                continue;
            }
            // As glibc: a trailing `/`, `/.` or `/..` needs a directory.
            let ok = if dir_suffix(&rest[pos..]) {
                let mut d = dest.clone();
                d.push(b'/');
                std::fs::metadata(OsStr::from_bytes(&d)).is_ok()
            } else {
                answer.is_ok()
            };
            if !ok {
                return fail(answer.err().unwrap_or(ENOTDIR));
            }
        }
        Ok(PathBuf::from(OsString::from_vec(dest)))
    }

    /// `Some(p)` when no existing component of the absolute, lexically
    /// folded `p` is a symlink (then `p` is already canonical); `None` when
    /// one is, or when a component cannot be examined.
    pub(super) fn plain_prefix(&self, p: &Path) -> Option<PathBuf> {
        let bytes = p.as_os_str().as_bytes();
        let ends = (1..=bytes.len()).filter(|&i| i == bytes.len() || bytes[i] == b'/');
        for end in ends {
            if end <= 1 {
                continue;
            }
            match self.readlink(&bytes[..end]) {
                Ok(Some(_)) => return None,
                Ok(None) => {}
                // Nothing here (or a non-directory above): the rest is
                // appended as is, as the general way would.
                Err(ENOENT | ENOTDIR) => return Some(p.to_path_buf()),
                Err(_) => return None,
            }
        }
        Some(p.to_path_buf())
    }
}

/// Drops the last component of a canonical `dest` (`/` stays `/`).
fn pop(dest: &mut Vec<u8>) {
    let at = dest.iter().rposition(|&b| b == b'/').unwrap_or(0);
    dest.truncate(at.max(1));
}

/// glibc's `suffix_requires_dir_check`: the rest of the name is slashes,
/// then nothing, `.` or `..` (as a whole component).
fn dir_suffix(mut s: &[u8]) -> bool {
    while s.first() == Some(&b'/') {
        while s.first() == Some(&b'/') {
            s = &s[1..];
        }
        match s.first() {
            None => return true,
            Some(b'.') => s = &s[1..],
            Some(_) => return false,
        }
        if s.is_empty() || (s[0] == b'.' && (s.len() == 1 || s[1] == b'/')) {
            return true;
        }
    }
    false
}
