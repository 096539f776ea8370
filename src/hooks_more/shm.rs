//! shm_open and shm_unlink: POSIX shared memory names are files under
//! `/dev/shm`, opened by glibc through internal calls; the `ipc` preset
//! gives the tree its own namespace there.

use std::ffi::{c_char, c_int};

use fsguard_policy::Access;
use libc::mode_t;

use crate::entry::Pre;
use crate::guard::{self, set_errno, CArg};

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

/// A row's check of a `/dev/shm` name (see `super::WRAPPED`).
type Check<'a> = &'a dyn Fn(CArg<'_>) -> Result<(), c_int>;

/// The `ipc` preset's step before shm_open's own check: a name the tree
/// may not create is opened in its own namespace (checked there by the
/// row's check); an object of that name outside it (another process's) is
/// then left to the row's check under its real name, refused with a trace
/// line unless a rule allows it. A name glibc rejects goes to the real call
/// for glibc's own errno.
pub(super) fn open_pre(
    name: CArg<'_>,
    oflag: c_int,
    mode: mode_t,
    check: fn(CArg<'_>, c_int) -> Result<(), c_int>,
) -> Pre<(), c_int> {
    type ShmOpen = unsafe extern "C" fn(*const c_char, c_int, mode_t) -> c_int;
    let real = |n: &ShmPath| hooks!(@real "shm_open", ShmOpen, -1, (n.name_ptr(), oflag, mode));
    let enoent_retry = |fd: c_int| fd < 0 && oflag & libc::O_CREAT == 0;
    pre(name, &|p| check(p, oflag), &real, &enoent_retry)
}

/// shm_unlink's step before its check, as [`open_pre`].
pub(super) fn unlink_pre(
    name: CArg<'_>,
    check: fn(CArg<'_>) -> Result<(), c_int>,
) -> Pre<(), c_int> {
    type ShmUnlink = unsafe extern "C" fn(*const c_char) -> c_int;
    let real = |n: &ShmPath| hooks!(@real "shm_unlink", ShmUnlink, -1, (n.name_ptr()));
    pre(name, &check, &real, &|r| r != 0)
}

/// The shared step: `Pass` for a name glibc rejects; the mapped name
/// checked and tried (answered unless `retry` says its failure may mean
/// the object is outside the namespace and one exists there); else the
/// row's check of `/dev/shm/NAME` and the real call with the caller's name.
fn pre(
    name: CArg<'_>,
    check: Check<'_>,
    real: &dyn Fn(&ShmPath) -> c_int,
    retry: &dyn Fn(c_int) -> bool,
) -> Pre<(), c_int> {
    let Some(p) = shm_path(name) else {
        return Pre::Pass;
    };
    if let Some(m) = shm_mapped(&p) {
        if let Err(e) = check(m.path()) {
            set_errno(e);
            return Pre::Answer(-1);
        }
        let r = real(&m);
        if !retry(r) || guard::errno() != libc::ENOENT || !p.exists() {
            return Pre::Answer(r);
        }
    }
    if let Err(e) = check(p.path()) {
        set_errno(e);
        return Pre::Answer(-1);
    }
    Pre::Check(())
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
