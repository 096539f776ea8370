//! The hook table as data: one row per hooked symbol, with its checks as
//! declared, for docs/hooks.md and tests/hook_table.rs. The `hooks!` macro
//! writes its rows; the few calls outside it write theirs with [`row`] and
//! [`chk`].

/// One row of the hook table, for documentation.
pub struct HookInfo {
    /// Exported symbol.
    pub symbol: &'static str,
    /// Name used in trace lines.
    pub call: &'static str,
    /// Checks, in argument order.
    pub checks: &'static [CheckInfo],
}

/// One checked path argument, as declared.
pub struct CheckInfo {
    /// Access expression.
    pub access: &'static str,
    /// Follow expression.
    pub follow: &'static str,
    /// Dirfd expression.
    pub dirfd: &'static str,
    /// Path expression.
    pub path: &'static str,
}

/// A row of a hand-written table (calls outside the `hooks!` macro).
#[cfg(target_os = "linux")]
pub(crate) const fn row(
    symbol: &'static str,
    call: &'static str,
    checks: &'static [CheckInfo],
) -> HookInfo {
    HookInfo {
        symbol,
        call,
        checks,
    }
}

/// One check of a hand-written row.
#[cfg(target_os = "linux")]
pub(crate) const fn chk(
    access: &'static str,
    follow: &'static str,
    dirfd: &'static str,
    path: &'static str,
) -> CheckInfo {
    CheckInfo {
        access,
        follow,
        dirfd,
        path,
    }
}
