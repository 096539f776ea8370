//! shm_open and shm_unlink, sem_open and sem_unlink: POSIX shared memory
//! and named semaphores are files under `/dev/shm` (`NAME`, `sem.NAME`),
//! opened by glibc through internal calls; the `ipc` preset gives the tree
//! its own namespace there.

use std::ffi::{c_char, c_int, c_uint, c_void};

use fsguard_policy::Access;
use libc::mode_t;

use crate::entry::Pre;
use crate::guard::{self, set_errno, CArg};

/// `/dev/shm/NAME` for a shm_open name, `/dev/shm/sem.NAME` for a sem_open
/// name (leading slashes dropped, as glibc does); `None` for a name glibc
/// itself rejects (empty, with a `/`, too long), which the real call then
/// fails with glibc's own errno. Room for the `ipc` namespace prefix too;
/// `base` is where the name starts (after `sem.` for a semaphore).
struct ShmPath {
    buf: [u8; 14 + 256 + 64],
    base: usize,
}

/// What a name names: its directory prefix under `/dev/shm`.
#[derive(Clone, Copy)]
pub(super) enum Kind {
    /// shm_open's `/dev/shm/NAME`.
    Shm,
    /// sem_open's `/dev/shm/sem.NAME`.
    Sem,
}

impl Kind {
    fn dir(self) -> &'static [u8] {
        match self {
            Kind::Shm => b"/dev/shm/",
            Kind::Sem => b"/dev/shm/sem.",
        }
    }
}

impl ShmPath {
    /// `/dev/shm/NAME`, for the policy.
    fn path(&self) -> CArg<'_> {
        // The buffer is zeroed and written short of its end: always found.
        CArg::of(std::ffi::CStr::from_bytes_until_nul(&self.buf).unwrap_or(c""))
    }

    /// `NAME`, for the real call (glibc takes it with or without a `/`).
    fn name_ptr(&self) -> *const c_char {
        self.buf[self.base..].as_ptr().cast()
    }

    fn bytes(&self) -> &[u8] {
        let end = self
            .buf
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(self.buf.len());
        &self.buf[..end]
    }

    /// True when something exists under this name (any owner).
    fn exists(&self) -> bool {
        let Some(p) = self.path().get() else {
            return false;
        };
        rustix::fs::statat(rustix::fs::CWD, p, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).is_ok()
    }
}

fn shm_path(name: CArg<'_>, kind: Kind) -> Option<ShmPath> {
    let n = name.get()?.to_bytes();
    let start = n.iter().position(|&b| b != b'/').unwrap_or(n.len());
    let n = &n[start..];
    if n.is_empty() || n.len() > 255 || n.contains(&b'/') {
        return None;
    }
    let dir = kind.dir();
    let mut buf = [0u8; 14 + 256 + 64];
    buf[..dir.len()].copy_from_slice(dir);
    buf[dir.len()..dir.len() + n.len()].copy_from_slice(n);
    Some(ShmPath {
        buf,
        base: dir.len(),
    })
}

/// The `ipc` preset: a name the policy would not let the tree create is
/// used in the tree's own namespace instead (`/dev/shm/fsguard.<tag>.NAME`,
/// `/dev/shm/sem.fsguard.<tag>.NAME`), the same in every process of the
/// tree, so what one creates the others open. `None`: the name is used as it is.
fn shm_mapped(p: &ShmPath) -> Option<ShmPath> {
    let g = guard::get()?;
    let r = std::panic::catch_unwind(|| {
        let prefix = g.policy.ipc_prefix()?;
        let raw = p.bytes();
        if g.policy.decide(Access::Write, raw).allowed {
            return None;
        }
        let (dir, name) = raw.split_at(p.base);
        let mut buf = [0u8; 14 + 256 + 64];
        let n = dir.len() + prefix.len() + name.len();
        if n >= buf.len() {
            return None;
        }
        buf[..dir.len()].copy_from_slice(dir);
        buf[dir.len()..dir.len() + prefix.len()].copy_from_slice(prefix);
        buf[dir.len() + prefix.len()..n].copy_from_slice(name);
        Some(ShmPath { buf, base: p.base })
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
    pre(
        name,
        Kind::Shm,
        &|p| check(p, oflag),
        &real,
        &enoent_retry,
        -1,
    )
}

/// sem_open's step before its check, as [`open_pre`] for `/dev/shm/sem.NAME`.
pub(super) fn sem_open_pre(
    name: CArg<'_>,
    oflag: c_int,
    mode: mode_t,
    value: c_uint,
    check: fn(CArg<'_>, c_int) -> Result<(), c_int>,
) -> Pre<(), *mut c_void> {
    type SemOpen = unsafe extern "C" fn(*const c_char, c_int, ...) -> *mut c_void;
    let failed = std::ptr::null_mut(); // glibc's SEM_FAILED
    let real =
        |n: &ShmPath| hooks!(@real "sem_open", SemOpen, failed, (n.name_ptr(), oflag, mode, value));
    let enoent_retry = |s: *mut c_void| s.is_null() && oflag & libc::O_CREAT == 0;
    if shm_path(name, Kind::Sem).is_none() {
        // Not `Pass`, whose real call is not variadic: glibc's own errno.
        let n = name.as_ptr();
        return Pre::Answer(hooks!(@real "sem_open", SemOpen, failed, (n, oflag, mode, value)));
    }
    pre(
        name,
        Kind::Sem,
        &|p| check(p, oflag),
        &real,
        &enoent_retry,
        failed,
    )
}

/// shm_unlink's (`Kind::Shm`) or sem_unlink's (`Kind::Sem`) step before its
/// check, as [`open_pre`].
pub(super) fn unlink_pre(
    name: CArg<'_>,
    kind: Kind,
    check: fn(CArg<'_>) -> Result<(), c_int>,
) -> Pre<(), c_int> {
    type Unlink = unsafe extern "C" fn(*const c_char) -> c_int;
    let real = |n: &ShmPath| match kind {
        Kind::Shm => hooks!(@real "shm_unlink", Unlink, -1, (n.name_ptr())),
        Kind::Sem => hooks!(@real "sem_unlink", Unlink, -1, (n.name_ptr())),
    };
    pre(name, kind, &check, &real, &|r| r != 0, -1)
}

/// The shared step: `Pass` for a name glibc rejects; the mapped name
/// checked and tried (answered unless `retry` says its failure may mean
/// the object is outside the namespace and one exists there); else the
/// row's check of the name's `/dev/shm` path and the real call with the
/// caller's name. `fail` is the call's failure value.
fn pre<R: Copy>(
    name: CArg<'_>,
    kind: Kind,
    check: Check<'_>,
    real: &dyn Fn(&ShmPath) -> R,
    retry: &dyn Fn(R) -> bool,
    fail: R,
) -> Pre<(), R> {
    let Some(p) = shm_path(name, kind) else {
        return Pre::Pass;
    };
    if let Some(m) = shm_mapped(&p) {
        if let Err(e) = check(m.path()) {
            set_errno(e);
            return Pre::Answer(fail);
        }
        let r = real(&m);
        if !retry(r) || guard::errno() != libc::ENOENT || !p.exists() {
            return Pre::Answer(r);
        }
    }
    if let Err(e) = check(p.path()) {
        set_errno(e);
        return Pre::Answer(fail);
    }
    Pre::Check(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shm_names() {
        let s = |n: &std::ffi::CStr| {
            let p = shm_path(CArg::of(n), Kind::Shm)?;
            Some(String::from_utf8(p.bytes().to_vec()).unwrap())
        };
        assert_eq!(s(c"/x").as_deref(), Some("/dev/shm/x"));
        assert_eq!(s(c"//x").as_deref(), Some("/dev/shm/x"));
        assert_eq!(s(c"x").as_deref(), Some("/dev/shm/x"));
        assert_eq!(s(c"a/b"), None);
        assert_eq!(s(c"/"), None);
        assert_eq!(s(c""), None);
    }

    #[test]
    fn sem_names() {
        let s = |n: &std::ffi::CStr| {
            let p = shm_path(CArg::of(n), Kind::Sem)?;
            // SAFETY: into p's buffer, zeroed past the name.
            let name = unsafe { std::ffi::CStr::from_ptr(p.name_ptr()) };
            assert_eq!(name.to_bytes(), &p.bytes()[b"/dev/shm/sem.".len()..]);
            Some(String::from_utf8(p.bytes().to_vec()).unwrap())
        };
        assert_eq!(s(c"/mp-x").as_deref(), Some("/dev/shm/sem.mp-x"));
        assert_eq!(s(c"//x").as_deref(), Some("/dev/shm/sem.x"));
        assert_eq!(s(c"x").as_deref(), Some("/dev/shm/sem.x"));
        assert_eq!(s(c"a/b"), None);
        assert_eq!(s(c"/"), None);
        assert_eq!(s(c""), None);
    }
}
