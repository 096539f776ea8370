//! The hook table as the library declares it, and the symbols the built
//! library exports.
//!
//! The rows are read from docs/hooks.md, which src/docs.rs renders from the
//! hook tables themselves; its unit test (`cargo test -p fsguard docs`) fails
//! when the file differs from the tables, so this is the tables' own word,
//! not a copy kept by hand.

use super::process::run;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

/// The section of docs/hooks.md that lists the open family and the core
/// mutators (`hooks::TABLE`).
pub const CORE_SECTION: &str = "Open family and core mutators";

/// How the titles of docs/hooks.md's macOS-only sections start: rows the
/// Linux library does not build (src/docs.rs `MACOS_ONLY`), left out of
/// [`hook_rows`].
pub const MACOS_ONLY_PREFIX: &str = "macOS only";

/// One row of a hook table.
#[derive(Debug, Clone)]
pub struct HookRow {
    /// The table's title (a `##` heading of docs/hooks.md).
    pub section: &'static str,
    /// The symbol (or `syscall(SYS_x)` for a syscall number).
    pub symbol: &'static str,
    /// The name its trace lines use.
    pub call: &'static str,
}

/// Every row of every hook table the Linux library builds, in the order of
/// docs/hooks.md (the macOS-only sections left out).
pub fn hook_rows() -> &'static [HookRow] {
    static ROWS: OnceLock<Vec<HookRow>> = OnceLock::new();
    ROWS.get_or_init(|| {
        let rows: Vec<HookRow> = all_hook_rows()
            .iter()
            .filter(|r| !r.section.starts_with(MACOS_ONLY_PREFIX))
            .cloned()
            .collect();
        assert!(
            rows.len() > 100,
            "only {} Linux rows in docs/hooks.md",
            rows.len()
        );
        rows
    })
}

/// Every row of docs/hooks.md, the macOS-only sections included.
pub fn all_hook_rows() -> &'static [HookRow] {
    static ROWS: OnceLock<Vec<HookRow>> = OnceLock::new();
    ROWS.get_or_init(|| {
        let file = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/hooks.md");
        let md = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{file}: {e}"));
        parse_rows(String::leak(md))
    })
}

fn parse_rows(md: &'static str) -> Vec<HookRow> {
    let mut section = "";
    let mut rows = Vec::new();
    for line in md.lines() {
        if let Some(title) = line.strip_prefix("## ") {
            section = title.trim();
            continue;
        }
        let Some(rest) = line.strip_prefix("| `") else {
            continue;
        };
        let mut cells = rest.split('`');
        let symbol = cells.next().unwrap();
        let call = cells.nth(1).unwrap_or_else(|| panic!("odd row: {line}"));
        assert!(!section.is_empty(), "row before any section: {line}");
        rows.push(HookRow {
            section,
            symbol,
            call,
        });
    }
    rows
}

/// The symbols of one section, in table order; panics if there is none.
pub fn section_symbols(section: &str) -> Vec<&'static str> {
    let v: Vec<&'static str> = hook_rows()
        .iter()
        .filter(|r| r.section == section)
        .map(|r| r.symbol)
        .collect();
    assert!(!v.is_empty(), "no section {section:?} in docs/hooks.md");
    v
}

/// The symbols the foundation interposes (open family and core mutators).
pub fn core_symbols() -> &'static [&'static str] {
    static CORE: OnceLock<Vec<&'static str>> = OnceLock::new();
    CORE.get_or_init(|| section_symbols(CORE_SECTION))
}

/// Defined function names of `lib`'s dynamic symbol table, versions dropped.
pub fn exported_functions(lib: &Path) -> BTreeSet<String> {
    let o = run(Command::new("nm").args(["-D", "--defined-only"]).arg(lib));
    assert!(o.status.success(), "{}", o.describe());
    o.stdout
        .lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let (_, kind, name) = (it.next()?, it.next()?, it.next()?);
            matches!(kind, "T" | "t" | "W" | "w" | "i")
                .then(|| name.split('@').next().unwrap().to_string())
        })
        .collect()
}
