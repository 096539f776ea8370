//! `fsguard run`'s kernel-enforced layer where the system has none fsguard
//! knows (neither Linux's Landlock nor macOS's Seatbelt, `seatbelt.rs`):
//! the same interface as `landlock.rs`, always unavailable, so
//! `--landlock=required` fails with [`UNAVAILABLE`], `--landlock` warns and
//! the default goes on with the library alone.

use std::path::Path;

use fsguard_policy::Settings;

pub use crate::args::Landlock;

/// No ruleset can exist here.
pub enum Rules {}
/// Nor a status for one.
pub enum Status {}

/// The layer's name in messages.
pub const NAME: &str = "Landlock";
/// What the child applies, in messages.
pub const RULESET: &str = "Landlock ruleset";
/// The prefix of a note about it.
pub const TAG: &str = "landlock";

/// Why no ruleset can be applied.
pub const UNAVAILABLE: &str = "Landlock is a Linux feature and this system has no \
                               kernel-enforced layer fsguard knows";

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
