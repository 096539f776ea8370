//! A check that failed inside the library (a bug: a panic its hook caught):
//! the call is refused with EACCES, in audit mode too, and traced like any
//! denial with `rule=internal_error`. All of it out of line: the checks'
//! own path does not carry it.

use std::ffi::{c_int, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

use fsguard_policy::{Access, Rule};

use crate::guard::{Guard, Target};
use crate::trace::Event;

impl Guard {
    /// A check of this library's that panicked (a bug here): the call is
    /// refused with EACCES, in audit mode too, and traced like any denial
    /// with `rule=internal_error`. Returns the errno.
    #[cold]
    #[inline(never)]
    pub(crate) fn internal_error(
        &self,
        call: &'static str,
        access: Access,
        path: &[u8],
        dest: Option<&[u8]>,
    ) -> c_int {
        // A second panic, in the trace itself, loses the line, not the denial.
        let _ = catch_unwind(AssertUnwindSafe(|| {
            self.sink.emit(&Event {
                event: "blocked",
                call,
                access,
                path,
                dest,
                rule: Rule::InternalError,
                errno: libc::EACCES,
                hint: None,
            });
        }));
        libc::EACCES
    }
}

/// A check that panicked: refused and traced as the caller passed its
/// paths (their resolution is what failed). Out of line: not on the
/// checks' own path.
#[cold]
#[inline(never)]
pub(crate) fn check_failed(g: &Guard, call: &'static str, targets: &[Target]) -> Result<(), c_int> {
    fn shown<'a>(t: &Target<'a>) -> &'a [u8] {
        t.path.get().map_or(&b"?"[..], CStr::to_bytes)
    }
    let access = targets.iter().find_map(|t| t.access);
    let dest = targets.get(1).map(shown);
    let path = targets.first().map_or(&b"?"[..], shown);
    Err(g.internal_error(call, access.unwrap_or(Access::Read), path, dest))
}
