//! How the flags of Darwin's own calls change what their rows check (the
//! rows are [`super::DARWIN`]'s). Pure: built and unit-tested on every
//! system; the values are Apple's, and on macOS each is checked against
//! the `libc` crate's when the library compiles.

// The rows that use these are built for macOS only.
#![cfg_attr(not(target_os = "macos"), allow(dead_code))]

use std::ffi::{c_int, c_uint};

use fsguard_policy::Access;

use super::{META, READ, WRITE};
use crate::guard::CArg;
use crate::resolve::Follow;

/// `sys/stdio.h`: renamex_np swaps the two names.
pub const RENAME_SWAP: c_uint = 0x0000_0002;
/// `sys/clonefile.h`: a final symlink of the source is cloned itself (not
/// in the `libc` crate).
pub const CLONE_NOFOLLOW: u32 = 0x0001;
/// `sys/attr.h`: the attribute-list calls, exchangedata and fsctl act on a
/// final symlink itself.
pub const FSOPT_NOFOLLOW: u32 = 0x1;
/// `sys/xattr.h`: the xattr calls act on a final symlink itself.
pub const XATTR_NOFOLLOW: c_int = 0x0001;
/// `copyfile.h`'s flags.
pub const COPYFILE_ACL: u32 = 1 << 0;
/// Mode, owner, times.
pub const COPYFILE_STAT: u32 = 1 << 1;
/// Extended attributes.
pub const COPYFILE_XATTR: u32 = 1 << 2;
/// A whole tree.
pub const COPYFILE_RECURSIVE: u32 = 1 << 15;
/// The destination must not exist (`O_EXCL`).
pub const COPYFILE_EXCL: u32 = 1 << 17;
/// A final symlink of the source is copied itself.
pub const COPYFILE_NOFOLLOW_SRC: u32 = 1 << 18;
/// The destination is opened `O_NOFOLLOW`.
pub const COPYFILE_NOFOLLOW_DST: u32 = 1 << 19;
/// The source is removed after the copy.
pub const COPYFILE_MOVE: u32 = 1 << 20;
/// The destination is removed before the copy.
pub const COPYFILE_UNLINK: u32 = 1 << 21;

#[cfg(target_os = "macos")]
const _: () = {
    assert!(RENAME_SWAP == libc::RENAME_SWAP);
    assert!(FSOPT_NOFOLLOW == libc::FSOPT_NOFOLLOW);
    assert!(XATTR_NOFOLLOW == libc::XATTR_NOFOLLOW);
    assert!(COPYFILE_ACL == libc::COPYFILE_ACL);
    assert!(COPYFILE_STAT == libc::COPYFILE_STAT);
    assert!(COPYFILE_XATTR == libc::COPYFILE_XATTR);
    assert!(COPYFILE_RECURSIVE == libc::COPYFILE_RECURSIVE);
    assert!(COPYFILE_EXCL == libc::COPYFILE_EXCL);
    assert!(COPYFILE_NOFOLLOW_SRC == libc::COPYFILE_NOFOLLOW_SRC);
    assert!(COPYFILE_NOFOLLOW_DST == libc::COPYFILE_NOFOLLOW_DST);
    assert!(COPYFILE_MOVE == libc::COPYFILE_MOVE);
    assert!(COPYFILE_UNLINK == libc::COPYFILE_UNLINK);
};

/// `RENAME_SWAP` exchanges the two names: the second is moved too, as with
/// Linux's `RENAME_EXCHANGE`. `RENAME_EXCL` only refuses an existing
/// destination: nothing more to check.
pub fn swaps(flags: c_uint) -> bool {
    flags & RENAME_SWAP != 0
}

/// clonefile's source: followed unless `CLONE_NOFOLLOW`.
pub fn clone_follow(flags: u32) -> Follow {
    if flags & CLONE_NOFOLLOW != 0 {
        Follow::NoFollow
    } else {
        Follow::Yes
    }
}

/// `FSOPT_NOFOLLOW` in a call's options (an `unsigned int` or an
/// `unsigned long` by call).
pub fn fsopt_follow(options: impl Into<u64>) -> Follow {
    if options.into() & u64::from(FSOPT_NOFOLLOW) != 0 {
        Follow::NoFollow
    } else {
        Follow::Yes
    }
}

/// Darwin's xattr calls take `XATTR_NOFOLLOW` in `options` instead of
/// having `l*` forms.
pub fn xattr_follow(options: c_int) -> Follow {
    if options & XATTR_NOFOLLOW != 0 {
        Follow::NoFollow
    } else {
        Follow::Yes
    }
}

/// copyfile's source: read, and with `COPYFILE_MOVE` removed afterwards
/// (a write, and a move of a protected file).
pub fn copy_src_access(flags: u32) -> Option<Access> {
    if flags & COPYFILE_MOVE != 0 {
        WRITE
    } else {
        READ
    }
}

/// copyfile's source: `COPYFILE_NOFOLLOW_SRC` copies a final symlink
/// itself. A NULL path means the fd the state carries.
pub fn copy_src_follow(from: CArg<'_>, flags: u32) -> Follow {
    if from.is_null() {
        Follow::Fd
    } else if flags & COPYFILE_NOFOLLOW_SRC != 0 {
        Follow::NoFollow
    } else {
        Follow::Yes
    }
}

/// copyfile's destination is opened `O_CREAT`: `O_EXCL` with
/// `COPYFILE_EXCL`, removed first with `COPYFILE_UNLINK` (both act on the
/// name), `O_NOFOLLOW` with `COPYFILE_NOFOLLOW_DST`; else a dangling
/// symlink is followed to the file it creates. A NULL path means the fd the
/// state carries.
pub fn copy_dst_follow(to: CArg<'_>, flags: u32) -> Follow {
    if to.is_null() {
        Follow::Fd
    } else if flags & (COPYFILE_EXCL | COPYFILE_UNLINK) != 0 {
        Follow::Entry
    } else if flags & COPYFILE_NOFOLLOW_DST != 0 {
        Follow::NoFollow
    } else {
        Follow::Create
    }
}

/// A `COPYFILE_RECURSIVE` copy walks the tree below its two paths with
/// libcopyfile's own calls: refused (docs/macos.md).
pub fn copies_tree(flags: u32) -> bool {
    flags & COPYFILE_RECURSIVE != 0
}

/// fcopyfile copies through fds the caller opened (each checked then):
/// copying the mode, owner, ACL or xattrs onto the destination is a
/// metadata write, checked as `fchmod` is; data alone, through an fd
/// opened for writing, is a metadata access (as `write(2)` is unchecked).
pub fn fcopy_access(flags: u32) -> Option<Access> {
    if flags & (COPYFILE_ACL | COPYFILE_STAT | COPYFILE_XATTR) != 0 {
        WRITE
    } else {
        META
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATH: CArg<'static> = CArg::of(c"a/b");

    #[test]
    fn renames_swap_only_with_rename_swap() {
        assert!(swaps(RENAME_SWAP));
        assert!(swaps(RENAME_SWAP | 0x4));
        assert!(!swaps(0x4)); // RENAME_EXCL
        assert!(!swaps(0));
    }

    #[test]
    fn nofollow_bits_of_each_call() {
        assert_eq!(clone_follow(0), Follow::Yes);
        assert_eq!(clone_follow(CLONE_NOFOLLOW), Follow::NoFollow);
        assert_eq!(clone_follow(0x2), Follow::Yes); // CLONE_NOOWNERCOPY
        assert_eq!(fsopt_follow(0u32), Follow::Yes);
        assert_eq!(fsopt_follow(FSOPT_NOFOLLOW), Follow::NoFollow);
        assert_eq!(fsopt_follow(u64::from(FSOPT_NOFOLLOW)), Follow::NoFollow);
        assert_eq!(fsopt_follow(0x800u32), Follow::Yes); // FSOPT_NOFOLLOW_ANY: stricter, kernel's
        assert_eq!(xattr_follow(0), Follow::Yes);
        assert_eq!(xattr_follow(XATTR_NOFOLLOW | 0x2), Follow::NoFollow);
        assert_eq!(xattr_follow(0x2), Follow::Yes); // XATTR_CREATE
    }

    #[test]
    fn copyfile_source() {
        assert_eq!(copy_src_access(0), READ);
        assert_eq!(copy_src_access(COPYFILE_MOVE), WRITE);
        assert_eq!(copy_src_follow(PATH, 0), Follow::Yes);
        assert_eq!(
            copy_src_follow(PATH, COPYFILE_NOFOLLOW_SRC),
            Follow::NoFollow
        );
        assert_eq!(copy_src_follow(PATH, COPYFILE_NOFOLLOW_DST), Follow::Yes);
        assert_eq!(copy_src_follow(CArg::NULL, 0), Follow::Fd);
    }

    #[test]
    fn copyfile_destination() {
        assert_eq!(copy_dst_follow(PATH, 0), Follow::Create);
        assert_eq!(
            copy_dst_follow(PATH, COPYFILE_NOFOLLOW_DST),
            Follow::NoFollow
        );
        assert_eq!(copy_dst_follow(PATH, COPYFILE_NOFOLLOW_SRC), Follow::Create);
        assert_eq!(
            copy_dst_follow(PATH, COPYFILE_EXCL | COPYFILE_NOFOLLOW_DST),
            Follow::Entry
        );
        assert_eq!(copy_dst_follow(PATH, COPYFILE_UNLINK), Follow::Entry);
        assert_eq!(copy_dst_follow(CArg::NULL, COPYFILE_EXCL), Follow::Fd);
    }

    #[test]
    fn copyfile_tree_and_fd_copies() {
        assert!(copies_tree(COPYFILE_RECURSIVE | COPYFILE_STAT));
        assert!(!copies_tree(COPYFILE_STAT | COPYFILE_XATTR | (1 << 3)));
        assert_eq!(fcopy_access(1 << 3), META); // COPYFILE_DATA
        assert_eq!(fcopy_access(COPYFILE_STAT), WRITE);
        assert_eq!(fcopy_access(COPYFILE_ACL | (1 << 3)), WRITE);
        assert_eq!(fcopy_access(COPYFILE_XATTR), WRITE);
    }
}
