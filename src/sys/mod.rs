//! The platform seam: everything the library's core needs from the system
//! that is not POSIX, behind one interface.
//!
//! The resolver, the guard, the trace, the exec checks and the hook tables
//! call `sys::…` for these and nothing else; each backend (`linux`, and
//! `darwin`, checked but not yet run) provides every item re-exported
//! below, with the same meaning.
//! The wrappers are `#[inline]`, so on Linux the hot path compiles to the
//! same system calls as before the seam. docs/macos.md says what each item
//! becomes on Darwin and what is left to write there.
//!
//! What is genuinely Linux-only (the `syscall(2)` table, glibc's symbol
//! aliases, Landlock, `O_TMPFILE`) stays in its own module, listed in
//! docs/macos.md; it has no Darwin counterpart to put behind this seam.
//!
//! The interface:
//! - errno: [`errno_slot`], the calling thread's `errno`.
//! - the real function: [`next_symbol`], the next definition of a symbol
//!   after this library; [`next_is_libc`], whether those are libc's own;
//!   on Linux [`resolve_all`], every `real!` site's function found at once
//!   when the guard loads (`next.rs`).
//! - an fd's name: [`fd_name`], the kernel's path for an open fd;
//!   on Linux [`fd_link`] and [`FD_LINK_MAX`], a path that reaches an open
//!   fd's object (Darwin has none: `resolve/via.rs` reaches an object as
//!   its parent fd and its name there).
//! - the race-free open: [`REF`] and [`open_ref`], an fd that only names an
//!   object; [`open_strict`], an open that crosses no symlink (and, relative
//!   to a dirfd, does not leave it); [`strict_open_missing`].
//! - exec: [`PRELOAD_ENTRY`], the start of the loader's environment entry
//!   that carries the library into a child.
//! - anonymous files: [`anon_file`] (the spare fds); [`frozen_file`] and
//!   [`read_frozen`], the policy handoff: an fd whose bytes no process
//!   under the guard can change, and the check a child makes of the fd it is
//!   handed (a sealed memfd on Linux, a read-only POSIX shared memory object
//!   on Darwin: `frozen_shm`); [`frozen_id`], an identity of that file
//!   another file at its number would not have (none on Darwin).
//! - the process: [`exe_path`], the running program's path;
//!   [`start_env`], the environment it started with; [`thread_id`];
//!   [`no_new_privs`], whether exec honours set-id bits.
//! - the report channel: [`connect_supervisor`], a new connection to
//!   `fsguard run`'s listening socket; [`send_message`], one message sent
//!   without blocking.
//! - types: [`dev`], a file's device number as one type everywhere.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
mod next;

#[cfg(target_os = "linux")]
pub use next::{gnu_hash, next_is_libc, own_name, resolve_all, resolved as real_resolved, Slot};

#[cfg(target_os = "linux")]
pub use linux::{
    anon_file, connect_supervisor, errno_slot, exe_path, fd_name, frozen_file, frozen_id,
    next_symbol, no_new_privs, open_ref, open_strict, read_frozen, send_message, start_env,
    strict_open_missing, thread_id, FD_LINK_MAX, PRELOAD_ENTRY, REF,
};

#[cfg(target_os = "linux")]
use linux::FD_DIR;

/// Writes the backend's fd directory and `fd`'s number at the start of `buf`
/// (which must have room for [`FD_LINK_MAX`] bytes); returns its length. The
/// byte after it is left as it was.
#[cfg(target_os = "linux")]
#[inline]
pub fn fd_link(fd: i32, buf: &mut [u8]) -> usize {
    buf[..FD_DIR.len()].copy_from_slice(FD_DIR);
    let mut digits = [0u8; 10];
    let i = crate::resolve::decimal(fd as u32, &mut digits);
    let d = &digits[i..];
    buf[FD_DIR.len()..FD_DIR.len() + d.len()].copy_from_slice(d);
    FD_DIR.len() + d.len()
}

/// The path of the loaded image (library or program) that holds the code
/// at `addr` (`dladdr`); `None` when no image does.
#[cfg_attr(all(target_os = "linux", not(test)), allow(dead_code))] // Darwin's, tested on Linux
pub(crate) fn image_path(addr: *const std::ffi::c_void) -> Option<&'static std::ffi::CStr> {
    let mut info = std::mem::MaybeUninit::<libc::Dl_info>::zeroed();
    // SAFETY: dladdr only reads `addr` as a number and fills `info`.
    let found = unsafe { libc::dladdr(addr, info.as_mut_ptr()) } != 0;
    // SAFETY: zeroed, then filled by dladdr when it found an image.
    let info = unsafe { info.assume_init() };
    if !found || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: the loader's own NUL-terminated name for a loaded image,
    // kept while the image is loaded (libc is never unloaded).
    Some(unsafe { std::ffi::CStr::from_ptr(info.dli_fname) })
}

/// A file's device number as one type on every system (`dev_t` is `u64` on
/// Linux, `i32` on Darwin), for identity compares and atomics.
#[inline]
#[allow(clippy::unnecessary_cast)] // a cast on Darwin only
pub fn dev(st: &rustix::fs::Stat) -> u64 {
    st.st_dev as u64
}

/// The Darwin backend (checked by `cargo check`, not yet run: docs/macos.md).
#[cfg(target_os = "macos")]
mod darwin;

#[cfg(target_os = "macos")]
pub use darwin::{
    anon_file, connect_supervisor, errno_slot, exe_path, fd_name, frozen_file, frozen_id,
    next_is_libc, open_ref, open_strict, read_frozen, send_message, start_env, strict_open_missing,
    thread_id, REF,
};
/// `real!` links each original directly on Darwin (the `__interpose`
/// pairs), so the backend has no `next_symbol`.
#[cfg(target_os = "macos")]
pub use darwin::{no_new_privs, PRELOAD_ENTRY};

/// The policy handoff without seals: Darwin's, in plain POSIX, so that it
/// is tested on Linux too (and the CLI includes the same file).
#[cfg(any(test, target_os = "macos"))]
mod frozen_shm;

#[cfg(test)]
mod frozen_shm_tests;
#[cfg(test)]
mod tests;
