//! libfsguard: an `LD_PRELOAD` library that confines what a process may do
//! to the filesystem.
//!
//! Every libc entry point that takes a path is interposed ([`hooks`]). Each
//! hook classifies the call, resolves its paths the way the kernel will
//! ([`resolve`]), asks the frozen policy ([`fsguard_policy::Policy`]) and
//! either calls the real function or fails with `EACCES` and one trace line
//! ([`trace`]). The policy is read once, in the constructor ([`init`]), into the
//! [`guard`].

#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]

mod errno;
#[cfg(feature = "fault-injection")]
mod fault;
#[cfg(all(target_os = "linux", target_env = "gnu", not(test)))]
mod heap;
mod real;
mod reserve;
mod sys;

pub mod guard;
#[macro_use]
pub mod entry;
#[cfg(target_os = "linux")]
pub mod aliases;
pub mod classify;
pub mod exec;
pub mod handoff;
pub mod hooks;
pub mod hooks_more;
pub mod init;
mod internal;
pub mod resolve;
#[cfg(target_os = "linux")]
pub mod syscall;
mod table;

pub mod trace;

/// The guard never allocates through the program's `malloc` (heap.rs).
#[cfg(all(target_os = "linux", target_env = "gnu", not(test)))]
#[global_allocator]
static HEAP: heap::LibcHeap = heap::LibcHeap;

#[cfg(test)]
mod docs;

/// Runs the constructor before `main`. Left out of unit-test builds, whose
/// harness must not guard itself.
#[cfg(not(test))]
#[used]
#[cfg_attr(not(target_os = "macos"), link_section = ".init_array")]
#[cfg_attr(target_os = "macos", link_section = "__DATA,__mod_init_func")]
static INIT: unsafe extern "C" fn(
    std::ffi::c_int,
    *const *const std::ffi::c_char,
    *const *const std::ffi::c_char,
) = init::init;
