//! Faults for tests only (the `fault-injection` feature, off in every
//! build but the test's own): a check of a path whose last component is
//! [`NAME`] panics, as a bug in a check would.

use crate::guard::Target;

/// The last path component that makes a check panic.
const NAME: &[u8] = b"fsguard-fault-panic";

/// Panics when a target names [`NAME`].
pub(crate) fn inject(targets: &[Target]) {
    for t in targets {
        if t.path.get().is_some_and(|p| p.to_bytes().ends_with(NAME)) {
            panic!("injected fault");
        }
    }
}
