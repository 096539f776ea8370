use std::ffi::CStr;

use rustix::fs::{Mode, OFlags, CWD};

use super::fd_path::fd_path_cstr;
use super::lexical::folded_len;
use super::locate::split;
use super::*;

#[test]
fn lexical_folds_like_a_symlink_free_walk() {
    let mut out = PathBuf::new();
    let mut raw = RawPath::new();
    let f = |p: &CStr, out: &mut PathBuf, raw: &mut RawPath| {
        lexical(libc::AT_FDCWD, p, out, raw).map(|_| out.as_bytes().to_vec())
    };
    assert_eq!(
        f(c"/a/./b//c/../d/", &mut out, &mut raw),
        Some(b"/a/b/d".to_vec())
    );
    assert_eq!(f(c"/../..", &mut out, &mut raw), Some(b"/".to_vec()));
    assert_eq!(f(c"/", &mut out, &mut raw), Some(b"/".to_vec()));
    let cwd = std::env::current_dir().unwrap();
    let want = cwd.join("x");
    assert_eq!(
        f(c"./x", &mut out, &mut raw),
        Some(want.as_os_str().as_encoded_bytes().to_vec())
    );
    assert_eq!(f(c"", &mut out, &mut raw), None);
}

#[test]
fn folded_len_only_when_nothing_folds() {
    assert_eq!(folded_len(b"/a/b/c"), Some(6));
    assert_eq!(folded_len(b"/a/b/c//"), Some(6));
    assert_eq!(folded_len(b"/a/.b/c.."), Some(9));
    for p in [
        &b"/"[..],
        b"//",
        b"/a//b",
        b"/a/./b",
        b"/a/..",
        b"/a/.",
        b"/./a",
        b"a/b",
        b"",
    ] {
        assert_eq!(folded_len(p), None, "{:?}", String::from_utf8_lossy(p));
    }
}

#[test]
fn a_directory_deeper_than_path_max_is_named_in_full() {
    let top = std::env::temp_dir().join(format!("fsguard-deep-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&top);
    std::fs::create_dir(&top).unwrap();
    let top = std::fs::canonicalize(&top).unwrap();
    let name = "d".repeat(250);
    let cname = std::ffi::CString::new(name.as_str()).unwrap();
    let o_path = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let mut fd = rustix::fs::openat(CWD, top.as_os_str(), o_path, Mode::empty()).unwrap();
    let mut want = top.as_os_str().as_encoded_bytes().to_vec();
    for _ in 0..24 {
        rustix::fs::mkdirat(&fd, cname.as_c_str(), Mode::from_raw_mode(0o700)).unwrap();
        fd = rustix::fs::openat(&fd, cname.as_c_str(), o_path, Mode::empty()).unwrap();
        want.push(b'/');
        want.extend_from_slice(name.as_bytes());
    }
    assert!(want.len() > 6000);
    use std::os::fd::AsRawFd;
    let mut out = PathBuf::new();
    fd_path(fd.as_raw_fd(), &mut out).unwrap();
    assert_eq!(out.as_bytes(), want.as_slice());
    // A name pushed on a long path stays long; the next short one
    // goes back to the stack buffer.
    out.push_name(b"x").unwrap();
    assert_eq!(out.as_bytes().len(), want.len() + 2);
    fd_path_cstr(CWD, c"/", &mut out).unwrap();
    assert_eq!(out.as_bytes(), b"/");
    drop(fd);
    std::fs::remove_dir_all(&top).unwrap();
}

#[test]
fn an_entry_right_below_the_root_keeps_its_name() {
    let mut out = PathBuf::new();
    for (p, want) in [
        (c"/tmp", &b"/tmp"[..]),
        (c"//tmp", b"/tmp"),
        (c"/fsguard-no-such-name", b"/fsguard-no-such-name"),
    ] {
        for follow in [Follow::Entry, Follow::NoFollow, Follow::Create] {
            resolve(libc::AT_FDCWD, Some(p), follow, &mut out).unwrap();
            assert_eq!(out.as_bytes(), want, "{p:?} {follow:?}");
        }
    }
}

#[test]
fn split_names() {
    assert_eq!(split(b"a/b/c"), Some((&b"a/b"[..], &b"c"[..])));
    assert_eq!(split(b"a/b/c//"), Some((&b"a/b"[..], &b"c"[..])));
    assert_eq!(split(b"a//c"), Some((&b"a"[..], &b"c"[..])));
    assert_eq!(split(b"c"), Some((&b""[..], &b"c"[..])));
    assert_eq!(split(b"/c"), Some((&b"/"[..], &b"c"[..])));
    assert_eq!(split(b"//c/"), Some((&b"/"[..], &b"c"[..])));
    assert_eq!(split(b"/"), None);
    assert_eq!(split(b"///"), None);
}

/// A fresh directory of its own for one test, canonical (no symlink in it).
fn scratch(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("fsguard-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir(&d).unwrap();
    std::fs::canonicalize(&d).unwrap()
}

fn cstr(p: &std::path::Path) -> std::ffi::CString {
    std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap()
}

fn id(st: &rustix::fs::Stat) -> (u64, u64) {
    (crate::sys::dev(st), st.st_ino)
}

#[test]
fn an_object_is_reached_as_its_own_entry() {
    use super::via::object_entry;
    let d = scratch("entry");
    std::fs::create_dir(d.join("real")).unwrap();
    std::fs::write(d.join("real/f"), b"x").unwrap();
    std::os::unix::fs::symlink("real", d.join("link")).unwrap();
    // Opened through a symlinked directory: the entry is the real one.
    let fd = crate::sys::open_ref(CWD, &cstr(&d.join("link/f")), OFlags::empty()).unwrap();
    let want = id(&rustix::fs::fstat(&fd).unwrap());
    let mut name = [0u8; 256];
    let (dir, n) = object_entry(fd, &mut name).unwrap();
    assert_eq!(&name[..n], b"f");
    let c = CStr::from_bytes_with_nul(&name[..=n]).unwrap();
    let at = rustix::fs::statat(&dir, c, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).unwrap();
    assert_eq!(id(&at), want);
    let real = id(&rustix::fs::stat(d.join("real").as_os_str()).unwrap());
    assert_eq!(id(&rustix::fs::fstat(&dir).unwrap()), real);
    // A directory is its own fd and ".".
    let fd = crate::sys::open_ref(CWD, &cstr(&d.join("link")), OFlags::DIRECTORY).unwrap();
    let (dir, n) = object_entry(fd, &mut name).unwrap();
    assert_eq!(&name[..n], b".");
    assert_eq!(id(&rustix::fs::fstat(&dir).unwrap()), real);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn an_object_no_longer_at_its_name_is_not_reached() {
    use super::via::object_entry;
    let d = scratch("stale");
    let mut name = [0u8; 256];
    // Removed since it was opened: nothing at its name is it.
    std::fs::write(d.join("gone"), b"x").unwrap();
    let fd = crate::sys::open_ref(CWD, &cstr(&d.join("gone")), OFlags::empty()).unwrap();
    std::fs::remove_file(d.join("gone")).unwrap();
    assert_eq!(object_entry(fd, &mut name).err(), Some(Errno::STALE));
    // Renamed, and another file put at its old name: reached by the name
    // the kernel gives it now, not the old one.
    std::fs::write(d.join("a"), b"a").unwrap();
    let fd = crate::sys::open_ref(CWD, &cstr(&d.join("a")), OFlags::empty()).unwrap();
    std::fs::rename(d.join("a"), d.join("b")).unwrap();
    std::fs::write(d.join("a"), b"other").unwrap();
    let (_, n) = object_entry(fd, &mut name).unwrap();
    assert_eq!(&name[..n], b"b");
    // An object the kernel names by no path: a pipe.
    let (r, _w) = std::io::pipe().unwrap();
    assert_eq!(object_entry(r.into(), &mut name).err(), Some(Errno::STALE));
    std::fs::remove_dir_all(&d).unwrap();
}
