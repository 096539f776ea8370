//! `fsguard run`'s Landlock layer where the kernel has no Landlock (macOS):
//! the same interface as `landlock.rs`, with Landlock always unavailable, so
//! `--landlock=required` fails with [`UNAVAILABLE`], `--landlock` warns and
//! the default goes on with the library alone. The kernel-enforced backstop
//! macOS has (a Seatbelt profile) is work left (docs/macos.md).

use std::path::Path;

use fsguard_policy::Settings;

pub use crate::args::Landlock;

/// No ruleset can exist here.
pub enum Rules {}
/// Nor a status for one.
pub enum Status {}

/// Why no ruleset can be applied.
pub const UNAVAILABLE: &str = "Landlock is a Linux feature and macOS has none (its \
                               kernel-enforced layer, a Seatbelt profile, is not written yet: \
                               docs/macos.md)";

/// No Landlock ABI: 0.
pub fn kernel_abi() -> i32 {
    0
}

/// Never called ([`kernel_abi`] is 0); an error if it were.
pub fn ruleset(
    _settings: &Settings,
    _mode: Landlock,
    _lib: &Path,
    _exe: &Path,
    _tmp: &Path,
) -> Result<Rules, String> {
    Err(UNAVAILABLE.into())
}

/// No ruleset reaches the child.
pub fn restrict(rs: Rules, _err: std::os::fd::RawFd, _required: bool) -> Result<(), i32> {
    match rs {}
}

/// No status byte is ever sent.
pub fn status_from_byte(_b: u8) -> Option<Status> {
    None
}

/// Nothing to say about a status that cannot exist.
pub fn status_message(status: &Status, _kernel_abi: i32) -> Option<String> {
    match *status {}
}
