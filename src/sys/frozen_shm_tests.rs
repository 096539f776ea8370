//! `frozen_shm` on Linux: the objects it makes read back, and the reader
//! refuses every fd that lacks a property it checks. (The file type test is
//! Darwin's and cannot run here: on Linux a shared memory object is a
//! regular file in `/dev/shm`.)

use std::ffi::CString;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU32, Ordering};

use super::frozen_shm::{create, read, same_object, Map, HEADER, NOT_ONE};

static SEQ: AtomicU32 = AtomicU32::new(0);

/// An object made by hand: `bytes` written at its start, its size `size`,
/// created with `mode`, reopened with `flags`, unlinked when `unlink`.
fn object(bytes: &[u8], size: usize, mode: u32, flags: i32, unlink: bool) -> (OwnedFd, CString) {
    let name = CString::new(format!(
        "/fsguard-test.{}.{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ))
    .unwrap();
    // SAFETY: a C string; the fds are ours.
    unsafe {
        let rw = libc::shm_open(
            name.as_ptr(),
            libc::O_RDWR | libc::O_CREAT | libc::O_EXCL,
            mode,
        );
        assert!(rw >= 0, "{}", std::io::Error::last_os_error());
        let rw = OwnedFd::from_raw_fd(rw);
        assert_eq!(libc::ftruncate(rw.as_raw_fd(), size as libc::off_t), 0);
        assert_eq!(rustix::io::write(&rw, bytes).unwrap(), bytes.len());
        let fd = libc::shm_open(name.as_ptr(), flags, 0);
        assert!(fd >= 0, "{}", std::io::Error::last_os_error());
        if unlink {
            assert_eq!(libc::shm_unlink(name.as_ptr()), 0);
        }
        (OwnedFd::from_raw_fd(fd), name)
    }
}

/// The header `create` writes, for `len` bytes of payload.
fn header(len: u64) -> Vec<u8> {
    let mut h = b"fsguard-policy\0\x01".to_vec();
    h.extend_from_slice(&len.to_le_bytes());
    h.extend_from_slice(&[7u8; 8]);
    assert_eq!(h.len(), HEADER);
    h
}

#[test]
fn a_frozen_object_reads_back_and_cannot_be_written() {
    for payload in [
        &b"{}"[..],
        &b""[..],
        &b"x".repeat(300_000)[..],
        &(0..=255u8).collect::<Vec<_>>()[..],
    ] {
        let fd = create(payload).unwrap();
        assert_eq!(read(fd.as_fd()).unwrap(), payload);
        let fl = rustix::io::fcntl_getfd(&fd).unwrap();
        assert!(fl.contains(rustix::io::FdFlags::CLOEXEC));
        // Read-only, unlinked, owner-read-only: no way to write it.
        assert!(rustix::io::write(&fd, b"x").is_err());
        // SAFETY: a mapping request the kernel must refuse.
        let at = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                HEADER,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        assert_eq!(at, libc::MAP_FAILED);
        let st = rustix::fs::fstat(&fd).unwrap();
        assert_eq!(st.st_nlink, 0);
        assert_eq!(st.st_mode & 0o7777, 0o400);
        // Read twice: reading does not consume it (nested children).
        assert_eq!(read(fd.as_fd()).unwrap(), payload);
    }
}

#[test]
fn a_hand_made_object_like_create_s_is_accepted() {
    // The control for the refusals below: only the property under test
    // differs in each.
    let mut b = header(6);
    b.extend_from_slice(b"policy");
    let (fd, _) = object(&b, 4096, 0o400, libc::O_RDONLY, true);
    assert_eq!(read(fd.as_fd()).unwrap(), b"policy");
}

#[test]
fn a_writable_fd_is_refused() {
    let mut b = header(6);
    b.extend_from_slice(b"policy");
    let (fd, _) = object(&b, 4096, 0o400, libc::O_RDWR, true);
    assert_eq!(
        read(fd.as_fd()),
        Err("the policy object is open for writing")
    );
}

#[test]
fn a_linked_object_is_refused() {
    let mut b = header(6);
    b.extend_from_slice(b"policy");
    let (fd, name) = object(&b, 4096, 0o400, libc::O_RDONLY, false);
    assert_eq!(read(fd.as_fd()), Err("the policy object still has a name"));
    // SAFETY: our own name.
    unsafe { libc::shm_unlink(name.as_ptr()) };
    // A file on disk is linked too.
    let path = std::env::temp_dir().join(format!("fsguard-frozen-{}", std::process::id()));
    std::fs::write(&path, &b).unwrap();
    let f = std::fs::File::open(&path).unwrap();
    assert_eq!(read(f.as_fd()), Err("the policy object still has a name"));
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn a_mode_that_allows_writing_is_refused() {
    let mut b = header(6);
    b.extend_from_slice(b"policy");
    let (fd, _) = object(&b, 4096, 0o600, libc::O_RDONLY, true);
    assert_eq!(
        read(fd.as_fd()),
        Err("the policy object may be opened for writing")
    );
}

#[test]
fn a_too_short_object_is_refused() {
    // The header promises more than the object holds.
    let (fd, _) = object(&header(5000), 4096, 0o400, libc::O_RDONLY, true);
    assert_eq!(read(fd.as_fd()), Err("the policy object is too short"));
    // Not even a header.
    let (fd, _) = object(b"fsguard", 7, 0o400, libc::O_RDONLY, true);
    assert_eq!(read(fd.as_fd()), Err("the policy object is too short"));
    // A length that overflows.
    let (fd, _) = object(&header(u64::MAX), 4096, 0o400, libc::O_RDONLY, true);
    assert_eq!(read(fd.as_fd()), Err("the policy object is too short"));
}

#[test]
fn garbage_is_refused() {
    let (fd, _) = object(&[0x5a; 64], 4096, 0o400, libc::O_RDONLY, true);
    assert_eq!(
        read(fd.as_fd()),
        Err("the policy object has no policy header")
    );
    // A pipe, and a closed number, are no such object at all.
    let mut fds = [0; 2];
    // SAFETY: room for two fds, which become ours.
    let (r, _w) = unsafe {
        assert_eq!(libc::pipe(fds.as_mut_ptr()), 0);
        (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1]))
    };
    assert_eq!(read(r.as_fd()), Err(NOT_ONE));
    let closed = r.as_raw_fd();
    drop(r);
    // SAFETY: only inspected; the number is closed.
    let b = unsafe { std::os::fd::BorrowedFd::borrow_raw(closed) };
    assert_eq!(read(b), Err(NOT_ONE));
}

#[test]
fn an_object_put_under_the_name_in_its_place_is_refused() {
    // What `create` checks after its reopen: the read-only fd must reach
    // the object it wrote. Another object with the very same bytes (what a
    // racer that unlinked the name and made its own would hand back) fails.
    let mut b = header(6);
    b.extend_from_slice(b"policy");
    let (ours, name) = object(&b, b.len(), 0o400, libc::O_RDWR, false);
    // SAFETY: our own name; the fd becomes ours.
    let ours_ro = unsafe {
        let fd = libc::shm_open(name.as_ptr(), libc::O_RDONLY, 0);
        assert!(fd >= 0);
        OwnedFd::from_raw_fd(fd)
    };
    // SAFETY: our own name.
    unsafe { libc::shm_unlink(name.as_ptr()) };
    let (theirs, _) = object(&b, b.len(), 0o400, libc::O_RDONLY, true);
    let w = Map::new(
        ours.as_raw_fd(),
        b.len(),
        libc::PROT_READ | libc::PROT_WRITE,
    )
    .unwrap();
    assert_eq!(same_object(&w, ours_ro.as_raw_fd(), b"policy"), Ok(()));
    assert_eq!(
        same_object(&w, theirs.as_raw_fd(), b"policy"),
        Err(libc::EIO)
    );
    // Nor does the right object with other bytes than expected.
    assert_eq!(
        same_object(&w, ours_ro.as_raw_fd(), b"polic!"),
        Err(libc::EIO)
    );
}

/// Counts this thread's allocations, to show what runs after `vfork`
/// allocates nothing.
struct Counting;

thread_local! {
    static ALLOCS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

// SAFETY: every call is passed on to the system allocator unchanged.
unsafe impl std::alloc::GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: the caller's layout, as GlobalAlloc requires.
        unsafe { std::alloc::System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: a pointer this allocator gave, with its layout.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

#[test]
fn making_a_copy_allocates_nothing() {
    // `handoff::ForChild::new` makes one in a `vfork` child when the kept
    // copy is gone: this object (Darwin's) and the seam's (here Linux's
    // sealed memfd).
    let payload = vec![b'p'; 100_000];
    let before = ALLOCS.with(|c| c.get());
    let shm = create(&payload).unwrap();
    let sealed = super::frozen_file(&payload).unwrap();
    assert_eq!(ALLOCS.with(|c| c.get()), before);
    assert_eq!(read(shm.as_fd()).unwrap(), payload);
    assert_eq!(super::read_frozen(sealed.as_fd()).unwrap(), payload);
    // The counter counts: reading back allocates the copy.
    assert!(ALLOCS.with(|c| c.get()) > before);
}
