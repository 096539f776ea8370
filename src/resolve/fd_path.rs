//! An fd's path: the kernel's name ([`sys::fd_name`]: `/proc/self/fd` on
//! Linux), and the name of a directory deeper than `PATH_MAX`, where the
//! kernel has none.

use std::ffi::CStr;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd};

use rustix::fs::{Mode, OFlags, CWD};

use crate::sys;
use rustix::io::Errno;

use super::buffers::PATH_CAP;
use super::{kernel_or_failed, PathBuf, Unresolved};

pub(super) fn fd_path_cstr(
    d: BorrowedFd<'_>,
    c: &CStr,
    out: &mut PathBuf,
) -> Result<(), Unresolved> {
    let fd = sys::open_ref(d, c, OFlags::empty()).map_err(kernel_or_failed)?;
    fd_path_of(fd.as_fd(), out)
}

/// The kernel's name for an open fd of the caller's, asked of
/// `/proc/self/fd` every time. A path remembered from earlier could only be
/// proven by a lookup that follows no symlink in any directory above it,
/// which takes more system calls than this one `readlink`.
pub fn fd_path(fd: i32, out: &mut PathBuf) -> Result<(), Unresolved> {
    if fd == libc::AT_FDCWD {
        return fd_path_cstr(CWD, c".", out);
    }
    if fd < 0 {
        return Err(Unresolved::Kernel(Errno::BADF));
    }
    // SAFETY: non-negative; used only in a syscall, which checks it.
    let fd = unsafe { BorrowedFd::borrow_raw(fd) };
    match fd_path_of(fd, out) {
        Err(Unresolved::Failed(Errno::NAMETOOLONG)) => deep_file_in_cwd(fd, out),
        r => r,
    }
}

/// The name of a non-directory deeper than `PATH_MAX`, known only by its
/// fd (`futimens` after a create, as `touch` and `cp -p` do): found in the
/// cwd, when it is there and has no other name (a second link could be
/// what the policy denies).
fn deep_file_in_cwd(fd: BorrowedFd<'_>, out: &mut PathBuf) -> Result<(), Unresolved> {
    let too_long = Unresolved::Failed(Errno::NAMETOOLONG);
    let st = rustix::fs::fstat(fd).map_err(Unresolved::Failed)?;
    if st.st_nlink != 1 {
        return Err(too_long);
    }
    let cwd = sys::open_ref(CWD, c".", OFlags::DIRECTORY).map_err(Unresolved::Failed)?;
    let name = name_in(cwd.as_fd(), (crate::sys::dev(&st), st.st_ino)).map_err(|e| match e {
        Errno::NOENT => too_long,
        // EMFILE among them: the guard makes room and tries again.
        e => Unresolved::Failed(e),
    })?;
    fd_path_of(cwd.as_fd(), out)?;
    out.push_name(&name).map_err(Unresolved::Kernel)
}

/// The kernel's name for `fd`; for a directory deeper than the kernel's
/// names reach, the name built by [`long_dir_path`].
pub(super) fn fd_path_of(fd: BorrowedFd<'_>, out: &mut PathBuf) -> Result<(), Unresolved> {
    match kernel_name(fd, out) {
        Err(Unresolved::Failed(Errno::NAMETOOLONG)) => long_dir_path(fd, out),
        r => r,
    }
}

/// The kernel's name for `fd`. Failed(ENAMETOOLONG): the name is longer
/// than the kernel hands back.
fn kernel_name(fd: BorrowedFd<'_>, out: &mut PathBuf) -> Result<(), Unresolved> {
    out.set_len(0);
    let read = |buf: &mut [MaybeUninit<u8>]| {
        sys::fd_name(fd, buf).map_err(|e| match e {
            // No such entry: a closed fd, or no /proc at all. Only the
            // first is the kernel's answer; the second fails closed.
            Errno::BADF | Errno::NOENT if rustix::io::fcntl_getfd(fd).is_err() => {
                Unresolved::Kernel(Errno::BADF)
            }
            e => Unresolved::Failed(e),
        })
    };
    let max = PATH_CAP - 256;
    let first = out.buf.capacity().min(max);
    let mut n = read(&mut out.buf.buf()[..first])?;
    if n >= first && first < max {
        // Perhaps cut short: read again with room for PATH_MAX.
        out.buf.reserve(max, 0).map_err(Unresolved::Failed)?;
        n = read(&mut out.buf.buf()[..max])?;
    }
    if n >= max {
        return Err(Unresolved::Failed(Errno::NAMETOOLONG));
    }
    out.set_len(n);
    Ok(())
}

/// A directory and where it is: device and inode.
type Id = (u64, u64);

pub(super) fn id_of(fd: BorrowedFd<'_>) -> Result<(Id, bool), Errno> {
    let st = rustix::fs::fstat(fd)?;
    let dir = rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Directory;
    Ok(((crate::sys::dev(&st), st.st_ino), dir))
}

/// The name of directory `fd` when it lies deeper than `PATH_MAX`, where
/// `/proc/self/fd` answers ENAMETOOLONG although every call made in it
/// works: walked up through `..` to the nearest ancestor the kernel can
/// name, each step's name found in its parent by device and inode. Then
/// every link is checked again from that ancestor down (and its name read
/// again), so a directory moved during the walk fails closed instead of
/// yielding a path it never had. Off the hot path: it allocates.
#[cold]
#[inline(never)]
fn long_dir_path(fd: BorrowedFd<'_>, out: &mut PathBuf) -> Result<(), Unresolved> {
    let failed = Unresolved::Failed;
    let (me, dir) = id_of(fd).map_err(failed)?;
    if !dir {
        return Err(failed(Errno::NAMETOOLONG));
    }
    // names[i] is the name of ids[i] in ids[i + 1].
    let (mut names, mut ids) = (Vec::<Vec<u8>>::new(), vec![me]);
    let mut cur = sys::open_ref(fd, c".", OFlags::DIRECTORY).map_err(failed)?;
    loop {
        match kernel_name(cur.as_fd(), out) {
            Ok(()) => break,
            Err(Unresolved::Failed(Errno::NAMETOOLONG)) => {}
            Err(e) => return Err(e),
        }
        let parent = sys::open_ref(cur.as_fd(), c"..", OFlags::DIRECTORY).map_err(failed)?;
        let (pid, _) = id_of(parent.as_fd()).map_err(failed)?;
        let child = *ids.last().expect("ids starts with fd's");
        if pid == child || names.len() > 4096 {
            return Err(failed(Errno::LOOP));
        }
        names.push(name_in(parent.as_fd(), child).map_err(failed)?);
        ids.push(pid);
        cur = parent;
    }
    let base = out.as_bytes().to_vec();
    // Down again: each name still leads to the directory it was found for.
    let mut down = sys::open_ref(cur.as_fd(), c".", OFlags::DIRECTORY).map_err(failed)?;
    for (i, name) in names.iter().enumerate().rev() {
        let c = std::ffi::CString::new(name.as_slice()).map_err(|_| failed(Errno::INVAL))?;
        let next = sys::open_ref(
            down.as_fd(),
            c.as_c_str(),
            OFlags::DIRECTORY | OFlags::NOFOLLOW,
        )
        .map_err(failed)?;
        if id_of(next.as_fd()).map_err(failed)?.0 != ids[i] {
            return Err(failed(Errno::AGAIN));
        }
        down = next;
    }
    kernel_name(cur.as_fd(), out)?;
    if out.as_bytes() != base.as_slice() {
        return Err(failed(Errno::AGAIN));
    }
    let mut long = base;
    for name in names.iter().rev() {
        if long.as_slice() != b"/" {
            long.push(b'/');
        }
        long.extend_from_slice(name);
    }
    out.long = Some(long);
    Ok(())
}

/// The name under which directory `want` is listed in `parent`: by inode
/// first, then (a mount point lists the inode it covers) by stat of each
/// subdirectory.
fn name_in(parent: BorrowedFd<'_>, want: Id) -> Result<Vec<u8>, Errno> {
    let nofollow = rustix::fs::AtFlags::SYMLINK_NOFOLLOW;
    let is = |name: &CStr| {
        rustix::fs::statat(parent, name, nofollow)
            .is_ok_and(|st| (crate::sys::dev(&st), st.st_ino) == want)
    };
    let wanted = |by_inode: bool, name: &CStr, ino: u64, kind: rustix::fs::FileType| {
        if matches!(name.to_bytes(), b"." | b"..") {
            return false;
        }
        let candidate = if by_inode {
            ino == want.1
        } else {
            matches!(
                kind,
                rustix::fs::FileType::Directory | rustix::fs::FileType::Unknown
            )
        };
        candidate && is(name)
    };
    #[cfg(target_os = "linux")]
    let mut buf = vec![MaybeUninit::<u8>::uninit(); 32 * 1024];
    for by_inode in [true, false] {
        let list = rustix::fs::openat(
            parent,
            c".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        #[cfg(target_os = "linux")]
        {
            let mut dir = rustix::fs::RawDir::new(&list, &mut buf);
            while let Some(e) = dir.next() {
                let e = e?;
                if wanted(by_inode, e.file_name(), e.ino(), e.file_type()) {
                    return Ok(e.file_name().to_bytes().to_vec());
                }
            }
        }
        // No RawDir elsewhere: readdir on a duplicate of the fd.
        #[cfg(not(target_os = "linux"))]
        {
            let mut dir = rustix::fs::Dir::read_from(&list)?;
            while let Some(e) = dir.read() {
                let e = e?;
                if wanted(by_inode, e.file_name(), e.ino(), e.file_type()) {
                    return Ok(e.file_name().to_bytes().to_vec());
                }
            }
        }
    }
    Err(Errno::NOENT)
}

/// The decimal digits of `n`, at the end of `buf`; returns where they start.
pub(crate) fn decimal(n: u32, buf: &mut [u8; 10]) -> usize {
    let (mut n, mut i) = (n, buf.len());
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return i;
        }
    }
}
