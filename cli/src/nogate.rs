//! The handshake where the system offers no gate (macOS: its ptrace has no
//! system-call stops). The command runs from its exec on; the library's
//! constructor writes one byte on `FSGUARD_HANDSHAKE_FD`, and a command that
//! closes the socket without it (EOF: the library was not loaded) is
//! stopped, as `gate.rs` does for an untraced command on Linux. What cannot
//! be had without a gate: stopping it before its first instruction.

use std::os::fd::{OwnedFd, RawFd};

/// Whether the library confirmed it loaded in the command, by the handshake
/// byte alone (`traced` is never true here). Err: why not; the command is
/// to be stopped.
pub(crate) fn handshake(
    _pid: libc::pid_t,
    _traced: bool,
    _hs_fd: RawFd,
    hs_parent: OwnedFd,
    _ready: impl FnOnce(),
) -> Result<(), String> {
    if crate::spawn::handshake_byte(hs_parent) {
        return Ok(());
    }
    Err(
        "the library did not load (macOS has no gate to stop the command \
         before it runs: it is stopped now)"
            .into(),
    )
}
