//! AF_UNIX sockets are doors out: whatever listens on a socket acts for
//! whoever connects (docker's socket runs containers as root, an
//! `ssh-agent` signs logins, the D-Bus session bus starts programs), so a
//! `connect`, or a datagram sent with `sendto`, `sendmsg` or `sendmmsg`, to
//! an AF_UNIX address is decided as a write to the socket it names
//! ([`fsguard_policy::Policy::decide_socket`]: a socket inside the root or
//! another write area, one the `unix_sockets` allow-list names; an abstract
//! socket only by name).
//!
//! Every row here is an `answer` row: its code copies the address (the
//! kernel reads only the library's copy, see [`super::sockaddr`]), checks
//! the socket it names, and makes the call. A socket file is reached
//! through the `O_PATH` fd its check opened: the address the kernel gets
//! is `/proc/self/fd/N`, which names exactly the object checked (there is
//! no `connectat`); the peer sees no difference (`getpeername` gives the
//! listener's own address). Addresses of other families, and calls with
//! none, go straight on with the copy.
//!
//! The `check` lists below document the rows; the code that checks is
//! [`crate::guard::check_socket`].

use std::ffi::{c_int, c_uint, c_void, CStr};

use libc::{mmsghdr, msghdr, size_t, sockaddr, socklen_t, ssize_t, AT_FDCWD};

use super::sockaddr::{unix_addr, Addr, STORAGE};
use crate::guard::{self, set_errno};
use crate::resolve::{Reach, Via};

type ConnectFn = unsafe extern "C" fn(c_int, *const sockaddr, socklen_t) -> c_int;
type SendtoFn = unsafe extern "C" fn(
    c_int,
    *const c_void,
    size_t,
    c_int,
    *const sockaddr,
    socklen_t,
) -> ssize_t;
type SendmsgFn = unsafe extern "C" fn(c_int, *const msghdr, c_int) -> ssize_t;
type SendmmsgFn = unsafe extern "C" fn(c_int, *mut mmsghdr, c_uint, c_int) -> c_int;

hooks! {
    table SOCKETS;
    /// connect(2).
    "connect" as "connect"
    fn connect(fd: c_int, addr: *const sockaddr, len: socklen_t) -> c_int,
        answer {
            // SAFETY: connect's contract: `len` readable bytes at `addr`.
            unsafe { connect_to("connect", fd, addr, len) }
        },
        check [SOCKET, Follow::Yes, AT_FDCWD, sun_path_of(addr), false];
    /// glibc's public alias of connect.
    "__connect" as "connect"
    fn __connect(fd: c_int, addr: *const sockaddr, len: socklen_t) -> c_int,
        answer {
            // SAFETY: connect's contract.
            unsafe { connect_to("connect", fd, addr, len) }
        },
        check [SOCKET, Follow::Yes, AT_FDCWD, sun_path_of(addr), false];
    /// sendto(2): a datagram to `addr`.
    "sendto" as "sendto"
    fn sendto(fd: c_int, buf: *const c_void, n: size_t, flags: c_int, addr: *const sockaddr, len: socklen_t) -> ssize_t,
        answer {
            // SAFETY: sendto's contract.
            unsafe { sendto_to(fd, buf, n, flags, addr, len) }
        },
        check [SOCKET, Follow::Yes, AT_FDCWD, sun_path_of(addr), false];
    /// sendmsg(2): a datagram to `msg->msg_name`.
    "sendmsg" as "sendmsg"
    fn sendmsg(fd: c_int, msg: *const msghdr, flags: c_int) -> ssize_t,
        answer {
            // SAFETY: sendmsg's contract: `msg` NULL or a msghdr.
            unsafe { sendmsg_to(fd, msg, flags) }
        },
        check [SOCKET, Follow::Yes, AT_FDCWD, sun_path_of(msg.msg_name), false];
    /// sendmmsg(2): each message's `msg_name`.
    "sendmmsg" as "sendmmsg"
    fn sendmmsg(fd: c_int, vec: *mut mmsghdr, vlen: c_uint, flags: c_int) -> c_int,
        answer {
            // SAFETY: sendmmsg's contract: `vlen` mmsghdrs at `vec`.
            unsafe { sendmmsg_to(fd, vec, vlen, flags) }
        },
        check [SOCKET, Follow::Yes, AT_FDCWD, sun_path_of(each_msg_name), false];
    /// `GLIBC_PRIVATE`: glibc's internal sendmmsg, reachable through dlsym.
    "__sendmmsg" as "sendmmsg"
    fn __sendmmsg(fd: c_int, vec: *mut mmsghdr, vlen: c_uint, flags: c_int) -> c_int,
        answer {
            // SAFETY: sendmmsg's contract.
            unsafe { sendmmsg_to(fd, vec, vlen, flags) }
        },
        check [SOCKET, Follow::Yes, AT_FDCWD, sun_path_of(each_msg_name), false];
}

/// Checks the socket `a` names for `call`. On `Ok`, `via` holds a socket
/// file checked (when the guard resolved one), and the address to use is
/// [`Reached::addr`].
fn check(call: &'static str, a: &Addr, via: &mut Via) -> Result<(), c_int> {
    match a.unix().socket() {
        Some(s) => guard::check_socket(call, s, via),
        None => Ok(()),
    }
}

/// The address a checked call gives the kernel: the socket file held by
/// `via` (`/proc/self/fd/N`), else the copy.
struct Reached {
    fd_addr: Option<(libc::sockaddr_un, socklen_t)>,
}

impl Reached {
    fn new(via: &Via) -> Result<Reached, c_int> {
        if via.reach() != Reach::Object {
            return Ok(Reached { fd_addr: None });
        }
        // SAFETY: an object's Via holds its NUL-terminated fd name.
        let name = unsafe { CStr::from_ptr(via.abs()) };
        // `/proc/self/fd/N` always fits; fail closed if it ever did not.
        Ok(Reached {
            fd_addr: Some(unix_addr(name).ok_or(libc::EACCES)?),
        })
    }

    /// The address and its length, `a` unless a socket file is held.
    fn addr<'a>(&'a self, a: &'a Addr) -> (*const sockaddr, socklen_t) {
        match &self.fd_addr {
            Some((sun, len)) => ((sun as *const libc::sockaddr_un).cast(), *len),
            None => (a.ptr(), a.len()),
        }
    }
}

/// A refused or failed check: -1 and errno.
fn fail<R: From<i8>>(e: c_int) -> R {
    set_errno(e);
    R::from(-1)
}

/// connect, with the checked address.
///
/// # Safety
/// `addr` NULL or `len` readable bytes.
unsafe fn connect_to(
    call: &'static str,
    fd: c_int,
    addr: *const sockaddr,
    len: socklen_t,
) -> c_int {
    // SAFETY: the caller's guarantee.
    let Some(a) = (unsafe { Addr::copy(addr, len) }) else {
        // The kernel reads nothing another thread could change.
        return hooks!(@real "connect", ConnectFn, -1, (fd, addr, len));
    };
    let mut via = Via::caller(AT_FDCWD, std::ptr::null());
    let reached = match check(call, &a, &mut via).and_then(|()| Reached::new(&via)) {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    let (p, l) = reached.addr(&a);
    let r = hooks!(@real "connect", ConnectFn, -1, (fd, p, l));
    guard::release(r, via)
}

/// sendto, with the checked address.
///
/// # Safety
/// As sendto(2): `buf` `n` bytes, `addr` NULL or `len` readable bytes.
unsafe fn sendto_to(
    fd: c_int,
    buf: *const c_void,
    n: size_t,
    flags: c_int,
    addr: *const sockaddr,
    len: socklen_t,
) -> ssize_t {
    // SAFETY: the caller's guarantee.
    let Some(a) = (unsafe { Addr::copy(addr, len) }) else {
        return hooks!(@real "sendto", SendtoFn, -1, (fd, buf, n, flags, addr, len));
    };
    let mut via = Via::caller(AT_FDCWD, std::ptr::null());
    let reached = match check("sendto", &a, &mut via).and_then(|()| Reached::new(&via)) {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    let (p, l) = reached.addr(&a);
    let r = hooks!(@real "sendto", SendtoFn, -1, (fd, buf, n, flags, p, l));
    guard::release(r, via)
}

/// A message header copied, its name copied as the kernel reads it (the
/// length cut to [`STORAGE`]); `None` for a name the kernel does not read
/// (NULL, empty, or a negative length it refuses).
///
/// # Safety
/// `m.msg_name` NULL or `m.msg_namelen` readable bytes.
unsafe fn name_of(m: &msghdr) -> Option<Addr> {
    if (m.msg_namelen as c_int) < 0 {
        return None;
    }
    let len = (m.msg_namelen as usize).min(STORAGE) as socklen_t;
    // SAFETY: the caller's guarantee; at most the length it gave.
    unsafe { Addr::copy(m.msg_name.cast_const().cast(), len) }
}

/// sendmsg, with the checked address in a copy of the header.
///
/// # Safety
/// `msg` NULL or a msghdr valid for sendmsg(2).
unsafe fn sendmsg_to(fd: c_int, msg: *const msghdr, flags: c_int) -> ssize_t {
    if msg.is_null() {
        return hooks!(@real "sendmsg", SendmsgFn, -1, (fd, msg, flags));
    }
    // SAFETY: a msghdr, read once: the kernel gets this copy.
    let mut m = unsafe { std::ptr::read_unaligned(msg) };
    // SAFETY: the msghdr's own name and length.
    let Some(a) = (unsafe { name_of(&m) }) else {
        return hooks!(@real "sendmsg", SendmsgFn, -1, (fd, &m, flags));
    };
    let mut via = Via::caller(AT_FDCWD, std::ptr::null());
    let reached = match check("sendmsg", &a, &mut via).and_then(|()| Reached::new(&via)) {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    let (p, l) = reached.addr(&a);
    m.msg_name = p.cast_mut().cast();
    m.msg_namelen = l;
    let r = hooks!(@real "sendmsg", SendmsgFn, -1, (fd, &m, flags));
    guard::release(r, via)
}

/// The kernel's limit on the messages of one sendmmsg (`UIO_MAXIOV`).
const MAX_MESSAGES: c_uint = 1024;
/// Messages copied and sent per real sendmmsg.
const BATCH: usize = 16;

/// sendmmsg, in batches of copied headers: up to [`BATCH`] messages whose
/// names reach no AF_UNIX socket, or one that does, checked (and sent
/// through the socket file held). As the kernel's, the count of messages
/// sent, or -1 if none was (a refused message ends the call there).
///
/// # Safety
/// `vec` NULL or `vlen` mmsghdrs valid for sendmmsg(2).
unsafe fn sendmmsg_to(fd: c_int, vec: *mut mmsghdr, vlen: c_uint, flags: c_int) -> c_int {
    if vec.is_null() || vlen == 0 {
        return hooks!(@real "sendmmsg", SendmmsgFn, -1, (fd, vec, vlen, flags));
    }
    let vlen = vlen.min(MAX_MESSAGES) as usize;
    let mut sent = 0usize;
    while sent < vlen {
        // SAFETY: `vec` holds `vlen` headers; `sent` < `vlen`.
        match unsafe { send_batch(fd, vec.add(sent), vlen - sent, flags) } {
            Ok(b) => {
                sent += b.sent;
                if b.short {
                    break;
                }
            }
            Err(e) if sent == 0 => return fail(e),
            // As the kernel: an error after some messages went is not
            // reported; the count is.
            Err(_) => break,
        }
    }
    sent as c_int
}

/// What one batch did: messages sent, and whether fewer than given (an
/// error or a partial send ends the call, as in the kernel's loop).
struct Batch {
    sent: usize,
    short: bool,
}

/// One batch of at most `left` messages from `vec`; each one's `msg_len`
/// written back. Err: the errno of a failed or refused first message.
///
/// # Safety
/// `vec` holds `left` mmsghdrs valid for sendmmsg(2).
unsafe fn send_batch(
    fd: c_int,
    vec: *mut mmsghdr,
    left: usize,
    flags: c_int,
) -> Result<Batch, c_int> {
    // SAFETY: an all-zero mmsghdr is a valid value.
    let mut hdrs: [mmsghdr; BATCH] = unsafe { std::mem::zeroed() };
    let mut names: [Option<Addr>; BATCH] = Default::default();
    let mut via = Via::caller(AT_FDCWD, std::ptr::null());
    let mut reached = Reached { fd_addr: None };
    let mut k = 0;
    while k < BATCH.min(left) {
        // SAFETY: header `k` of the caller's, read once.
        let mut h = unsafe { std::ptr::read_unaligned(vec.add(k)) };
        // SAFETY: its own name and length.
        let name = unsafe { name_of(&h.msg_hdr) };
        let unix = name.as_ref().is_some_and(|a| a.unix().socket().is_some());
        if unix && k > 0 {
            // Checked in a batch of its own, with the socket file held.
            break;
        }
        if unix {
            let a = name.as_ref().unwrap_or_else(|| unreachable!());
            check("sendmmsg", a, &mut via)?;
            reached = Reached::new(&via)?;
        }
        h.msg_len = 0;
        hdrs[k] = h;
        names[k] = name;
        k += 1;
        if unix {
            break;
        }
    }
    for (h, name) in hdrs.iter_mut().zip(&names).take(k) {
        match name {
            Some(a) => {
                let (p, l) = reached.addr(a);
                h.msg_hdr.msg_name = p.cast_mut().cast();
                h.msg_hdr.msg_namelen = l;
            }
            // A name the kernel does not read: left as copied (NULL, or a
            // length it refuses), no memory of the caller's behind it.
            None if h.msg_hdr.msg_namelen == 0 || h.msg_hdr.msg_name.is_null() => {
                h.msg_hdr.msg_name = std::ptr::null_mut();
                h.msg_hdr.msg_namelen = 0;
            }
            None => {}
        }
    }
    let r = hooks!(@real "sendmmsg", SendmmsgFn, -1, (fd, hdrs.as_mut_ptr(), k as c_uint, flags));
    let e = guard::errno();
    drop(via);
    if r < 0 {
        return Err(e);
    }
    let n = r as usize;
    for (i, h) in hdrs.iter().enumerate().take(n) {
        // SAFETY: header `i` < `k` of the caller's, written as the kernel
        // writes it.
        unsafe { std::ptr::addr_of_mut!((*vec.add(i)).msg_len).write_unaligned(h.msg_len) };
    }
    guard::set_errno(e);
    Ok(Batch {
        sent: n,
        short: n < k || n == 0,
    })
}
