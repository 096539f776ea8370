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
}
