//! shm_open and shm_unlink: POSIX shared memory names are files under
//! `/dev/shm`, opened by glibc through internal calls; the `ipc` preset
//! gives the tree its own namespace there.

use std::ffi::{c_char, c_int};

use fsguard_policy::Access;
use libc::{mode_t, AT_FDCWD};

use super::{check1, WRITE};
use crate::guard::{self, set_errno, CArg};
use crate::hooks::open_access;
use crate::resolve::Follow;

/// `/dev/shm/NAME` for a shm_open name (leading slashes dropped, as glibc
/// does); `None` for a name glibc itself rejects (empty, with a `/`, too
/// long), which the real call then fails with glibc's own errno.
/// Room for the `ipc` namespace prefix too.
struct ShmPath([u8; 10 + 256 + 64]);

impl ShmPath {
    /// `/dev/shm/NAME`, for the policy.
    fn path(&self) -> CArg<'_> {
        // The buffer is zeroed and written short of its end: always found.
        CArg::of(std::ffi::CStr::from_bytes_until_nul(&self.0).unwrap_or(c""))
    }

    /// `/NAME`, for the real shm_open.
    fn name_ptr(&self) -> *const c_char {
        self.0[b"/dev/shm".len()..].as_ptr().cast()
    }

    fn bytes(&self) -> &[u8] {
        let end = self.0.iter().position(|&b| b == 0).unwrap_or(self.0.len());
        &self.0[..end]
    }

    /// True when something exists under this name (any owner).
    fn exists(&self) -> bool {
        let Some(p) = self.path().get() else {
            return false;
        };
        rustix::fs::statat(rustix::fs::CWD, p, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).is_ok()
    }
}

fn shm_path(name: CArg<'_>) -> Option<ShmPath> {
    let n = name.get()?.to_bytes();
    let start = n.iter().position(|&b| b != b'/').unwrap_or(n.len());
    let n = &n[start..];
    if n.is_empty() || n.len() > 255 || n.contains(&b'/') {
        return None;
    }
    let mut buf = [0u8; 10 + 256 + 64];
    buf[..9].copy_from_slice(b"/dev/shm/");
    buf[9..9 + n.len()].copy_from_slice(n);
    Some(ShmPath(buf))
}

/// The `ipc` preset: a name the policy would not let the tree create is
/// used in the tree's own namespace instead (`/dev/shm/fsguard.<tag>.NAME`),
/// the same in every process of the tree, so what one creates the others
/// open. `None`: the name is used as it is.
fn shm_mapped(p: &ShmPath) -> Option<ShmPath> {
    let g = guard::get()?;
    let r = std::panic::catch_unwind(|| {
        let prefix = g.policy.ipc_prefix()?;
        let raw = p.bytes();
        if g.policy.decide(Access::Write, raw).allowed {
            return None;
        }
        let name = &raw[b"/dev/shm/".len()..];
        let mut buf = [0u8; 10 + 256 + 64];
        let n = 9 + prefix.len() + name.len();
        if n >= buf.len() {
            return None;
        }
        buf[..9].copy_from_slice(b"/dev/shm/");
        buf[9..9 + prefix.len()].copy_from_slice(prefix);
        buf[9 + prefix.len()..n].copy_from_slice(name);
        Some(ShmPath(buf))
    });
    r.ok().flatten()
}

/// shm_open opens `/dev/shm/NAME` with O_NOFOLLOW through an internal call.
/// With the `ipc` preset, a name the tree may not create is opened in its
/// own namespace; an object of that name outside it (another process's) is
/// then decided on by the policy under its real name, and refused with a
/// trace line unless a rule allows it.
///
/// # Safety
/// As for the C function: its pointer arguments valid as it requires (a
/// C string NUL-terminated, NULL only where it accepts NULL).
#[no_mangle]
pub unsafe extern "C" fn shm_open(name: *const c_char, oflag: c_int, mode: mode_t) -> c_int {
    type ShmOpen = unsafe extern "C" fn(*const c_char, c_int, mode_t) -> c_int;
    // SAFETY: shm_open's name is NULL or a C string (its contract).
    let Some(p) = shm_path(unsafe { CArg::new(name) }) else {
        return hooks!(@real "shm_open", ShmOpen, -1, (name, oflag, mode));
    };
    let access = open_access(oflag);
    if let Some(m) = shm_mapped(&p) {
        if let Err(e) = check1("shm_open", access, Follow::Entry, AT_FDCWD, m.path()) {
            set_errno(e);
            return -1;
        }
        let fd = hooks!(@real "shm_open", ShmOpen, -1, (m.name_ptr(), oflag, mode));
        if fd >= 0 || guard::errno() != libc::ENOENT || oflag & libc::O_CREAT != 0 || !p.exists() {
            return fd;
        }
    }
    if let Err(e) = check1("shm_open", access, Follow::Entry, AT_FDCWD, p.path()) {
        set_errno(e);
        return -1;
    }
    hooks!(@real "shm_open", ShmOpen, -1, (name, oflag, mode))
}

/// shm_unlink(3).
///
/// # Safety
/// As for the C function: its pointer arguments valid as it requires (a
/// C string NUL-terminated, NULL only where it accepts NULL).
#[no_mangle]
pub unsafe extern "C" fn shm_unlink(name: *const c_char) -> c_int {
    type ShmUnlink = unsafe extern "C" fn(*const c_char) -> c_int;
    // SAFETY: shm_unlink's name is NULL or a C string (its contract).
    let Some(p) = shm_path(unsafe { CArg::new(name) }) else {
        return hooks!(@real "shm_unlink", ShmUnlink, -1, (name));
    };
    if let Some(m) = shm_mapped(&p) {
        if let Err(e) = check1("shm_unlink", WRITE, Follow::Entry, AT_FDCWD, m.path()) {
            set_errno(e);
            return -1;
        }
        let r = hooks!(@real "shm_unlink", ShmUnlink, -1, (m.name_ptr()));
        if r == 0 || guard::errno() != libc::ENOENT || !p.exists() {
            return r;
        }
    }
    if let Err(e) = check1("shm_unlink", WRITE, Follow::Entry, AT_FDCWD, p.path()) {
        set_errno(e);
        return -1;
    }
    hooks!(@real "shm_unlink", ShmUnlink, -1, (name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shm_names() {
        let s = |n: &std::ffi::CStr| {
            let p = shm_path(CArg::of(n))?;
            let end = p.0.iter().position(|&b| b == 0).unwrap();
            Some(String::from_utf8(p.0[..end].to_vec()).unwrap())
        };
        assert_eq!(s(c"/x").as_deref(), Some("/dev/shm/x"));
        assert_eq!(s(c"//x").as_deref(), Some("/dev/shm/x"));
        assert_eq!(s(c"x").as_deref(), Some("/dev/shm/x"));
        assert_eq!(s(c"a/b"), None);
        assert_eq!(s(c"/"), None);
        assert_eq!(s(c""), None);
    }
}
