//! `fsguard run`'s kernel-enforced layer on macOS: the Sandbox (Seatbelt)
//! profile generated from the policy (`fsguard_policy::seatbelt`), applied in
//! the command's process before exec. The same interface as `landlock.rs`,
//! so `run` and `spawn` do not know which system they are on:
//!
//! - the default and `--landlock` apply it; if the kernel refuses it, the
//!   command goes on under the library alone, with a warning;
//! - `--landlock=required` fails (125) unless it is applied;
//! - `--no-landlock` applies none.
//!
//! Checked by `cargo check`/`clippy` for both Darwin targets, not run here
//! (docs/macos.md).

use std::ffi::CString;
use std::path::Path;

use fsguard_policy::Settings;

pub use crate::args::Landlock;

/// The layer's name in messages.
pub const NAME: &str = "Seatbelt";
/// What the child applies, in messages.
pub const RULESET: &str = "Seatbelt profile";
/// The prefix of a note about it.
pub const TAG: &str = "seatbelt";

/// The profile text the child hands to `sandbox_init`.
pub struct Rules(CString);

/// What became of it in the child.
pub enum Status {
    /// `sandbox_init` took it.
    Applied,
    /// `sandbox_init` refused it.
    Refused,
}

/// Never shown: Seatbelt is part of every macOS ([`kernel_abi`] is not 0).
pub const UNAVAILABLE: &str = "this system has no Seatbelt";

/// Not a Landlock ABI: 1, since every macOS has `sandbox_init` (libSystem),
/// so `run` always builds the profile unless `--no-landlock`.
pub fn kernel_abi() -> i32 {
    1
}

/// The profile for `settings`, made in the parent.
pub fn ruleset(
    settings: &Settings,
    _mode: Landlock,
    lib: &Path,
    exe: &Path,
    tmp: &Path,
) -> Result<Rules, String> {
    let s = |p: &Path| {
        p.to_str()
            .map(str::to_owned)
            .ok_or_else(|| format!("seatbelt: {}: not UTF-8", p.display()))
    };
    let (lib, exe, tmp) = (s(lib)?, s(exe)?, s(tmp)?);
    let run = fsguard_policy::seatbelt::Run {
        lib: &lib,
        exe: &exe,
        tmp: &tmp,
    };
    let text =
        fsguard_policy::seatbelt::profile(settings, run).map_err(|e| format!("seatbelt: {e}"))?;
    CString::new(text)
        .map(Rules)
        .map_err(|_| "seatbelt: a NUL byte in the profile".into())
}

// <sandbox.h> (deprecated, still what sandbox-exec uses): `flags` 0 means
// `profile` is SBPL text; on failure it returns -1 and sets `*errorbuf` to
// a message freed with `sandbox_free_error`. Both are exported by
// libsystem_sandbox, part of libSystem (the SDK's libsystem_sandbox.tbd).
extern "C" {
    fn sandbox_init(
        profile: *const libc::c_char,
        flags: u64,
        errorbuf: *mut *mut libc::c_char,
    ) -> libc::c_int;
    fn sandbox_free_error(errorbuf: *mut libc::c_char);
}

/// In the child before exec: applies the profile and reports it on `err`
/// (`S` applied, `R` refused). Err: the errno to fail with (`EPERM`:
/// refused while `required`).
///
/// `sandbox_init` compiles the profile, which allocates: the child is a
/// `fork` of the CLI, single-threaded at that point, so no lock is held.
pub fn restrict(rs: Rules, err: std::os::fd::RawFd, required: bool) -> Result<(), i32> {
    let mut msg: *mut libc::c_char = std::ptr::null_mut();
    // SAFETY: a NUL-terminated profile and a pointer slot of ours.
    let r = unsafe { sandbox_init(rs.0.as_ptr(), 0, &mut msg) };
    if !msg.is_null() {
        // SAFETY: the message sandbox_init gave us, freed once.
        unsafe { sandbox_free_error(msg) };
    }
    let byte = if r == 0 { b'S' } else { b'R' };
    // SAFETY: writes one byte to our pipe.
    unsafe { libc::write(err, [byte].as_ptr().cast(), 1) };
    if r != 0 && required {
        return Err(libc::EPERM);
    }
    Ok(())
}

/// The status back from the child's byte; `None` for any other byte.
pub fn status_from_byte(b: u8) -> Option<Status> {
    match b {
        b'S' => Some(Status::Applied),
        b'R' => Some(Status::Refused),
        _ => None,
    }
}

/// What fsguard says about it; `None` when it was applied.
pub fn status_message(status: &Status, _kernel_abi: i32) -> Option<String> {
    match status {
        Status::Applied => None,
        Status::Refused => Some("not applied (sandbox_init refused the profile)".into()),
    }
}
