//! The exit status of `fsguard run` beyond the command's own:
//! `--fail-on-block[=N]`.

/// The status `run` exits with: the command's `code`, or `fail` when the
/// library blocked anything (in audit mode: would have blocked), so a
/// harness can gate on it even when the command caught the error and exited
/// 0; also when refusals went unreported (`unreported`: their records were
/// lost), since then something may have been blocked. A timeout (124)
/// keeps its status: it says more.
pub fn fail_on_block(
    fail: Option<u8>,
    code: u8,
    timed_out: bool,
    blocked: u64,
    unreported: u64,
    quiet: bool,
) -> u8 {
    match fail {
        Some(n) if (blocked > 0 || unreported > 0) && !timed_out => {
            if !quiet {
                let s = if blocked == 1 { "access" } else { "accesses" };
                let also = if unreported > 0 {
                    format!(" (and {unreported} unreported)")
                } else {
                    String::new()
                };
                eprintln!(
                    "fsguard: exit {n} (--fail-on-block): {blocked} {s} blocked{also}; \
                     the command's own status was {code}"
                );
            }
            n
        }
        _ => code,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_status_only_when_something_was_blocked() {
        assert_eq!(fail_on_block(Some(3), 0, false, 1, 0, true), 3);
        assert_eq!(fail_on_block(Some(3), 1, false, 2, 0, true), 3);
        assert_eq!(fail_on_block(Some(9), 0, false, 0, 0, true), 0);
        assert_eq!(fail_on_block(None, 0, false, 5, 0, true), 0);
        assert_eq!(fail_on_block(Some(3), 124, true, 5, 0, true), 124);
        // Refusals whose records were lost never let the gate pass.
        assert_eq!(fail_on_block(Some(3), 0, false, 0, 2, true), 3);
    }
}
