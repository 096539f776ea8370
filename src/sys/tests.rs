//! The seam's contract, written against `sys::…` alone: what every backend
//! must answer the same way (the resolver relies on each of these).

use std::ffi::CString;
use std::mem::MaybeUninit;
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;

use rustix::fs::{Mode, OFlags, CWD};
use rustix::io::Errno;

use super::*;

/// A fresh directory with `d/`, `d/f` and `link -> d`.
fn scratch(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("fsguard-sys-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("d")).unwrap();
    std::fs::write(dir.join("d/f"), b"x").unwrap();
    std::os::unix::fs::symlink("d", dir.join("link")).unwrap();
    dir.canonicalize().unwrap()
}

fn c(p: &std::path::Path) -> CString {
    CString::new(p.as_os_str().as_bytes()).unwrap()
}

fn name(fd: std::os::fd::BorrowedFd<'_>) -> Vec<u8> {
    let mut buf = [MaybeUninit::<u8>::uninit(); 4096];
    let n = fd_name(fd, &mut buf).unwrap();
    // SAFETY: fd_name wrote the first n bytes.
    buf[..n]
        .iter()
        .map(|b| unsafe { b.assume_init() })
        .collect()
}

#[test]
fn an_fd_is_named_by_the_object_it_holds_not_the_path_it_was_opened_by() {
    let dir = scratch("name");
    let fd = open_ref(CWD, &c(&dir.join("link/f")), OFlags::empty()).unwrap();
    assert_eq!(name(fd.as_fd()), dir.join("d/f").as_os_str().as_bytes());
    std::fs::rename(dir.join("d"), dir.join("e")).unwrap();
    assert_eq!(name(fd.as_fd()), dir.join("e/f").as_os_str().as_bytes());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_closed_fd_has_no_name() {
    // A number at the open-files limit: never allocated, so no other test
    // running in parallel can open it (a number just closed can be reused).
    let mut lim = MaybeUninit::<libc::rlimit>::uninit();
    // SAFETY: getrlimit fills the struct it is given.
    let r = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, lim.as_mut_ptr()) };
    assert_eq!(r, 0);
    // SAFETY: filled by the successful call above.
    let cur = unsafe { lim.assume_init() }.rlim_cur;
    let raw = i32::try_from(cur).unwrap_or(i32::MAX - 1);
    // SAFETY: a number that is not open, only passed to the kernel.
    let b = unsafe { std::os::fd::BorrowedFd::borrow_raw(raw) };
    let mut buf = [MaybeUninit::<u8>::uninit(); 64];
    assert!(matches!(
        fd_name(b, &mut buf),
        Err(Errno::NOENT | Errno::BADF)
    ));
}

#[test]
fn a_ref_reaches_its_object_through_fd_link() {
    let dir = scratch("link");
    let fd = open_ref(CWD, &c(&dir.join("d/f")), OFlags::empty()).unwrap();
    let mut buf = [0u8; FD_LINK_MAX + 1];
    let n = fd_link(std::os::fd::AsRawFd::as_raw_fd(&fd), &mut buf);
    let path = std::ffi::CStr::from_bytes_with_nul(&buf[..=n]).unwrap();
    let f = rustix::fs::openat(CWD, path, OFlags::RDONLY, Mode::empty()).unwrap();
    let mut got = [0u8; 4];
    assert_eq!(rustix::io::read(&f, &mut got).unwrap(), 1);
    assert_eq!(&got[..1], b"x");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_strict_open_crosses_no_symlink_and_stays_beneath_its_dirfd() {
    if strict_open_missing() {
        return;
    }
    let dir = scratch("strict");
    let flat = open_strict(CWD, &c(&dir.join("d/f")), REF, Mode::empty(), false);
    assert!(flat.is_ok(), "{flat:?}");
    let through = open_strict(CWD, &c(&dir.join("link/f")), REF, Mode::empty(), false);
    assert_eq!(through.err(), Some(Errno::LOOP));
    let d = open_ref(CWD, &c(&dir.join("d")), OFlags::DIRECTORY).unwrap();
    let up = open_strict(d.as_fd(), c"../d/f", REF, Mode::empty(), true);
    assert_eq!(up.err(), Some(Errno::XDEV));
    let abs = open_strict(d.as_fd(), &c(&dir.join("d/f")), REF, Mode::empty(), true);
    assert_eq!(abs.err(), Some(Errno::XDEV));
    assert!(open_strict(d.as_fd(), c"f", REF, Mode::empty(), true).is_ok());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[cfg(target_os = "linux")]
#[test]
fn a_sealed_file_cannot_change_and_an_unsealed_one_is_told_apart() {
    use super::linux::{is_sealed, seal, sealable_file};
    let f = sealable_file(c"fsguard-test").unwrap();
    assert_eq!(rustix::io::write(&f, b"policy").unwrap(), 6);
    assert!(!is_sealed(f.as_fd()).unwrap());
    seal(&f).unwrap();
    assert!(is_sealed(f.as_fd()).unwrap());
    assert!(rustix::io::write(&f, b"more").is_err());
    let plain = anon_file(c"fsguard-test").unwrap();
    assert!(!is_sealed(plain.as_fd()).unwrap_or(false));
}

#[test]
fn code_is_placed_in_the_image_that_holds_it() {
    // libc's own function: in libc's image.
    let getpid = libc::getpid as *const std::ffi::c_void;
    let p = super::image_path(getpid).unwrap();
    assert!(p.to_bytes().ends_with(b"libc.so.6"), "{p:?}");
    // This test's own code: in the test program, not libc.
    let here = code_is_placed_in_the_image_that_holds_it as *const std::ffi::c_void;
    let exe = std::fs::canonicalize(std::env::current_exe().unwrap()).unwrap();
    let p = super::image_path(here).unwrap().to_str().unwrap();
    assert_eq!(std::fs::canonicalize(p).unwrap(), exe);
    // An address no image holds.
    assert!(super::image_path(std::ptr::null()).is_none());
}

#[test]
fn a_frozen_file_reads_back_cannot_be_written_and_a_plain_one_is_refused() {
    let f = frozen_file(b"policy").unwrap();
    assert_eq!(read_frozen(f.as_fd()).unwrap(), b"policy");
    assert!(rustix::io::write(&f, b"more").is_err());
    assert_eq!(read_frozen(f.as_fd()).unwrap(), b"policy");
    let plain = anon_file(c"fsguard-test").unwrap();
    assert_eq!(rustix::io::write(&plain, b"policy").unwrap(), 6);
    assert!(read_frozen(plain.as_fd()).is_err());
}
