//! What an open's flags ask for: the access checked and how the last
//! component is followed. Shared by the guard's open fast path and the hook
//! tables, so the guard needs nothing from the hooks.

use std::ffi::c_int;

use fsguard_policy::Access;

use crate::resolve::Follow;

/// Whether an open's flags ask for an unnamed temporary file (`O_TMPFILE`,
/// Linux only).
#[inline]
pub fn tmpfile(flags: c_int) -> bool {
    #[cfg(target_os = "linux")]
    return flags & libc::O_TMPFILE == libc::O_TMPFILE;
    #[cfg(not(target_os = "linux"))]
    {
        let _ = flags; // no such flag
        false
    }
}

/// Whether `*at` flags carry `AT_EMPTY_PATH` (Linux only).
#[inline]
pub fn empty_path(flags: c_int) -> bool {
    #[cfg(target_os = "linux")]
    return flags & libc::AT_EMPTY_PATH != 0;
    #[cfg(not(target_os = "linux"))]
    {
        let _ = flags; // no such flag
        false
    }
}

/// Whether an open's flags ask only for a name (`O_PATH`, Linux only).
#[inline]
fn path_only(flags: c_int) -> bool {
    #[cfg(target_os = "linux")]
    return flags & libc::O_PATH != 0;
    #[cfg(not(target_os = "linux"))]
    {
        let _ = flags; // no such flag
        false
    }
}

/// An open's access from its flags: any of O_WRONLY, O_RDWR, O_APPEND,
/// O_CREAT, O_TRUNC (even with O_RDONLY) or O_TMPFILE writes; O_PATH only
/// names the object (a metadata access).
pub fn open_access(flags: c_int) -> Option<Access> {
    let writes = libc::O_WRONLY | libc::O_RDWR | libc::O_APPEND | libc::O_CREAT | libc::O_TRUNC;
    if flags & writes != 0 || tmpfile(flags) {
        Some(Access::Write)
    } else if path_only(flags) {
        None
    } else {
        Some(Access::Read)
    }
}

/// What an open's check asks: its access ([`open_access`]) and whether a
/// refusal may be answered with a descriptor that only names the object
/// ([`named_only`]). The access column of docs/hooks.md shows it as
/// `open_or_handle(flags)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OrHandle {
    /// The access checked.
    pub access: Option<Access>,
    /// The flags ask for a plain read-only open ([`named_only`]).
    pub handle: bool,
}

/// [`open_access`], and whether a refusal may be answered with an `O_PATH`
/// descriptor ([`named_only`]): for the rows of the open family that act
/// through [`crate::resolve::Via::oflags`].
pub fn open_or_handle(flags: c_int) -> OrHandle {
    OrHandle {
        access: open_access(flags),
        handle: named_only(flags),
    }
}

/// Whether an open is plain enough that a descriptor naming the object
/// serves what it asks, when the policy refuses the read but would name
/// the directory (`Policy::names_only`): read-only, and nothing else but
/// `O_CLOEXEC`, `O_LARGEFILE`, `O_NOCTTY` and `O_NONBLOCK`. Not
/// `O_DIRECTORY` (opendir's open, and `fts`'s: a program that says it
/// opens a directory means to list it, and is refused at the open, with a
/// trace line, rather than at `getdents`), not `O_NOFOLLOW`, not `O_PATH`
/// (never refused), nothing that writes. Linux only: Darwin has no
/// `O_PATH`.
#[inline]
pub fn named_only(flags: c_int) -> bool {
    #[cfg(target_os = "linux")]
    {
        let plain = libc::O_CLOEXEC | libc::O_LARGEFILE | libc::O_NOCTTY | libc::O_NONBLOCK;
        flags & !plain == libc::O_RDONLY
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = flags; // no O_PATH
        false
    }
}

/// How an open treats its last component.
pub fn open_follow(flags: c_int) -> Follow {
    let creat = flags & libc::O_CREAT != 0;
    if creat && flags & libc::O_EXCL != 0 {
        Follow::Entry
    } else if flags & libc::O_NOFOLLOW != 0 {
        Follow::NoFollow
    } else if creat {
        Follow::Create
    } else {
        Follow::Yes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const READ: Option<Access> = Some(Access::Read);
    const WRITE: Option<Access> = Some(Access::Write);

    #[test]
    fn open_flags_classify() {
        assert_eq!(open_access(libc::O_RDONLY), READ);
        assert_eq!(open_access(libc::O_RDONLY | libc::O_TRUNC), WRITE);
        assert_eq!(open_access(libc::O_WRONLY), WRITE);
        assert_eq!(open_access(libc::O_RDWR), WRITE);
        assert_eq!(open_access(libc::O_APPEND), WRITE);
        assert_eq!(open_access(libc::O_CREAT), WRITE);
        assert_eq!(open_access(libc::O_TMPFILE | libc::O_RDWR), WRITE);
        assert_eq!(open_access(libc::O_DIRECTORY), READ);
        assert_eq!(open_access(libc::O_PATH), None);
        assert_eq!(open_follow(libc::O_CREAT), Follow::Create);
        assert_eq!(open_follow(libc::O_CREAT | libc::O_EXCL), Follow::Entry);
        assert_eq!(open_follow(libc::O_NOFOLLOW), Follow::NoFollow);
        assert_eq!(
            open_follow(libc::O_NOFOLLOW | libc::O_CREAT | libc::O_EXCL),
            Follow::Entry
        );
        assert_eq!(open_follow(0), Follow::Yes);
    }

    #[test]
    fn named_only_is_a_plain_read() {
        for f in [
            libc::O_RDONLY,
            libc::O_RDONLY | libc::O_CLOEXEC,
            libc::O_RDONLY | libc::O_CLOEXEC | libc::O_LARGEFILE,
            libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOCTTY,
        ] {
            assert!(named_only(f), "{f:#o}");
            assert_eq!(open_or_handle(f).access, READ);
        }
        for f in [
            libc::O_WRONLY,
            libc::O_RDWR,
            libc::O_RDONLY | libc::O_TRUNC,
            libc::O_RDONLY | libc::O_CREAT,
            libc::O_RDONLY | libc::O_APPEND,
            libc::O_TMPFILE | libc::O_RDWR,
            libc::O_RDONLY | libc::O_DIRECTORY,
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
            libc::O_RDONLY | libc::O_NOFOLLOW,
            libc::O_PATH,
            libc::O_RDONLY | libc::O_NOATIME,
            libc::O_RDONLY | libc::O_ASYNC,
            libc::O_RDONLY | libc::O_DIRECT,
            libc::O_RDONLY | libc::O_SYNC,
        ] {
            assert!(!named_only(f), "{f:#o}");
        }
    }
}
