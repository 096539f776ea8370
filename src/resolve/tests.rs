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
