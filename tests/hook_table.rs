//! The library's dynamic symbol table and its hook tables name the same
//! symbols. An export under a libc name without a row is a hook nobody
//! described (or a stray C or Rust function that interposes a libc call
//! unchecked); a row without an export documents a check that no call
//! reaches.

// LD_PRELOAD and ELF dynamic symbols: Linux only.
#![cfg(target_os = "linux")]

mod common;

use common::*;
use std::collections::BTreeSet;

/// The library's own namespace: the entry points between shim/ and the
/// Rust hooks, never a libc name.
const OWN_PREFIX: &str = "fsguard_";

/// The section whose rows are the file actions posix_spawn carries out: they
/// are checked inside the exported call their trace line names.
const SPAWN_ACTIONS: &str = "posix_spawn file actions";

/// The exported symbol through which a row's check is reached.
fn export_of(row: &HookRow) -> &'static str {
    if row.section == SPAWN_ACTIONS {
        return row.call;
    }
    // syscall(2) rows are named `syscall(SYS_x)`: reached through `syscall`.
    row.symbol.split('(').next().unwrap()
}

#[test]
fn every_export_has_a_hook_row_and_every_row_an_export() {
    let exports = exported_functions(lib());
    assert!(exports.len() > 100, "odd nm output: {exports:?}");
    let rows = hook_rows();
    let reached: BTreeSet<&str> = rows.iter().map(export_of).collect();

    let without_row: Vec<&str> = exports
        .iter()
        .map(String::as_str)
        .filter(|s| !s.starts_with(OWN_PREFIX) && !reached.contains(s))
        .collect();
    let without_export: Vec<String> = rows
        .iter()
        .filter(|r| !exports.contains(export_of(r)))
        .map(|r| format!("{} ({})", r.symbol, r.section))
        .collect();
    assert!(
        without_row.is_empty() && without_export.is_empty(),
        "libfsguard.so and the hook tables disagree.\n\
         exported without a row in any hook table: {without_row:?}\n\
         rows whose symbol is not exported: {without_export:?}\n\
         (a hook gets a row in a table listed in src/docs.rs TABLES, then \
         `FSGUARD_BLESS=1 cargo test -p fsguard docs` regenerates \
         docs/hooks.md, which these rows are read from; a helper that is no \
         hook must not be exported: `static` in shim/, no #[no_mangle] in src/)"
    );
    // The shim's variadic entry points are among the exports checked.
    for s in [
        "open",
        "openat64",
        "execl",
        "syscall",
        "__open64_nocancel",
        "dlsym",
    ] {
        assert!(exports.contains(s) && reached.contains(s), "{s}");
    }
}
