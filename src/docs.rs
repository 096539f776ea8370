//! docs/hooks.md, rendered from the hook tables themselves; the test fails
//! when the committed file differs (`FSGUARD_BLESS=1` rewrites it).

use crate::hooks::{CheckInfo, HookInfo};

/// Every hook table, in the order the reference lists them. A module that
/// declares a new table adds it here.
pub const TABLES: &[(&str, &[HookInfo])] = &[
    ("Open family and core mutators", crate::hooks::TABLE),
    (
        "Temp files, walkers, nodes, xattrs, fd mutators, metadata",
        crate::hooks_more::MORE,
    ),
    ("With pre and post steps", crate::hooks_more::WRAPPED),
    (
        "AF_UNIX socket addresses (connect and sends)",
        crate::hooks_more::SOCKETS,
    ),
    ("exec and dlopen", crate::exec::EXEC_TABLE),
    ("posix_spawn file actions", crate::exec::SPAWN_TABLE),
    ("glibc aliases", crate::aliases::ALIASES),
    (
        "glibc aliases, written out; symbol lookups",
        crate::aliases::ALIASES_CUSTOM,
    ),
    (
        "syscall(2), arguments unlike libc's",
        crate::syscall::SYSCALLS,
    ),
    ("syscall(2), special cases", crate::syscall::SYSCALLS_CUSTOM),
    (
        "Namespaces and mounts, refused",
        crate::hooks_more::NAMESPACE_TABLE,
    ),
    (
        "Other processes, refused outside the guarded tree",
        crate::hooks_more::PROCESS_TABLE,
    ),
    ("macOS only: Darwin's own calls", crate::hooks_more::DARWIN),
    ("macOS only: exec", crate::exec::EXEC_DARWIN),
    (
        "macOS only: posix_spawn file actions, checked as added",
        crate::exec::SPAWN_DARWIN,
    ),
];

/// How the titles of the sections of rows built for macOS only start
/// (tables `listed everywhere`, each row `#[cfg(target_os = "macos")]`):
/// the Linux library exports none of them, and tests/common/hooks.rs reads
/// the Linux rows as those before them. A symbol may have a row there and
/// a Linux-only row elsewhere (Darwin's `getxattr` takes other arguments).
pub const MACOS_ONLY: &str = "macOS only";

/// The `syscall(2)` rows the libc rows carry (`sys SYS_x`).
fn syscall_rows() -> Vec<HookInfo> {
    let rows = crate::syscall::TABLES
        .iter()
        .flat_map(|t| t.rows.iter().flatten());
    // syscall(2) passes the caller's flags on: no O_PATH descriptor for
    // a refused open there (the `@sys` arm of `hooks!`).
    let plain = |c: &CheckInfo| CheckInfo {
        access: match c.access {
            "open_or_handle(flags)" => "open_access(flags)",
            a => a,
        },
        ..*c
    };
    rows.map(|h| HookInfo {
        symbol: h.symbol,
        call: h.call,
        checks: Box::leak(h.checks.iter().map(plain).collect()),
    })
    .collect()
}

/// Every section of the reference: the tables, with the `syscall(2)` rows
/// of the libc rows before the other system calls.
fn sections(sys: &[HookInfo]) -> Vec<(&'static str, &[HookInfo])> {
    let mut all = TABLES.to_vec();
    let at = all
        .iter()
        .position(|(title, _)| title.starts_with("syscall(2)"))
        .unwrap_or(all.len());
    all.insert(at, ("syscall(2), declared on the libc rows", sys));
    all
}

fn access(e: &str) -> String {
    match e {
        "READ" => "read".into(),
        "WRITE" => "write".into(),
        "READ_EXEC" | "EXEC" => "exec (a read)".into(),
        "META" => "metadata".into(),
        "SOCKET" => "write (a socket: `unix_sockets`)".into(),
        "ENOSYS" => "— (ENOSYS)".into(),
        e if e.starts_with("REFUSE ") => format!("refused (`rule={}`)", &e[7..]),
        other => code(other),
    }
}

fn follow(e: &str) -> String {
    match e {
        "Follow::Yes" => "followed".into(),
        "Follow::Create" => "followed; dangling link → its target".into(),
        "Follow::Entry" => "entry (not followed)".into(),
        "Follow::NoFollow" => "not followed (a trailing `/` follows)".into(),
        "Follow::Fd" => "the fd".into(),
        "-" => "—".into(),
        other => code(other),
    }
}

fn dirfd(e: &str) -> String {
    match e {
        "AT_FDCWD" => "cwd".into(),
        "-" => "—".into(),
        other => code(other),
    }
}

fn path(e: &str) -> String {
    // A fixed path, `CArg::of(c"/bin/sh")`: the path itself.
    if let Some(lit) = e
        .strip_prefix("CArg::of(c")
        .and_then(|l| l.strip_suffix(')'))
    {
        return code(lit);
    }
    match e {
        "CArg::NULL" => "—".into(),
        other => code(other),
    }
}

fn code(e: &str) -> String {
    // syscall(2) rows name raw arguments: p(b) is the second, as a pointer.
    let mut e = e.to_string();
    for (n, a) in ["a", "b", "c", "d", "e", "f"].iter().enumerate() {
        for conv in ["p", "i"] {
            e = e.replace(&format!("{conv}({a})"), &format!("arg{}", n + 1));
        }
    }
    let e = e.as_str();
    if e.contains(' ') && !e.contains('(') || e.starts_with('(') {
        e.replace('|', "\\|")
    } else {
        format!("`{}`", e.replace('|', "\\|"))
    }
}

fn cell(checks: &[CheckInfo], f: impl Fn(&CheckInfo) -> String) -> String {
    checks.iter().map(f).collect::<Vec<_>>().join("<br>")
}

/// The markdown reference of the given tables.
pub fn render(tables: &[(&str, &[HookInfo])]) -> String {
    let mut s = String::from(
        "<!-- Generated from the hook tables in src/ by `cargo test -p fsguard docs`; \
         do not edit. Regenerate with FSGUARD_BLESS=1. -->\n\
         # Hooked symbols\n\n\
         Every libc symbol libfsguard interposes, the name its trace lines use, the \
         access it is checked for, and how its path argument is resolved.\n\n\
         - **access**: `read`, `write`, `exec` (decided as a read), or `metadata`: a \
         metadata read is only checked with `hide_outside = true`, and then a refused \
         one answers `ENOENT`; otherwise it goes straight to libc. An expression \
         (`open_access(flags)`) means the access is derived from that argument at \
         each call; `open_or_handle(flags)` is `open_access(flags)`, and a plain \
         read-only open (no `O_DIRECTORY`) of a directory above the root or the \
         private `TMPDIR`, refused only for lying outside them, gets an `O_PATH` \
         descriptor instead: `fstat`, `fchdir`, a dirfd, no read or listing \
         (docs/policy.md, \"Directories above the root\").\n\
         - **last component**: `followed` (symlinks followed to the object), `entry` \
         (the call acts on the directory entry itself), `not followed` (the object \
         named, not what a final symlink points to; a trailing `/` makes the kernel \
         follow it), `the fd` (the object an fd \
         or the dirfd refers to, read back from `/proc/self/fd`). An expression \
         means it depends on the call's flags (`AT_SYMLINK_NOFOLLOW`, \
         `AT_EMPTY_PATH`, a NULL path, `O_NOFOLLOW`, `O_CREAT|O_EXCL`).\n\
         - **relative to**: the directory a relative path starts from.\n\
         - **refused** (`rule=namespace`, `mount`, `sysadmin`, `process`): the call \
         is refused whatever the policy, when the condition in the last column holds \
         (docs/reference.md, \"Rule labels\").\n\
         - Two lines in a row are the two paths of a rename or link; both are \
         checked, and the first may not be a protected (`deny_always`) file.\n\n\
         The last sections, *macOS only*, list the rows only the macOS library \
         builds; every other section lists what the Linux library exports \
         (some of those rows are Linux-only: docs/macos.md).\n\n",
    );
    let total: usize = tables.iter().map(|(_, t)| t.len()).sum();
    s += &format!("{total} entries.\n");
    for (title, table) in tables {
        s += &format!("\n## {title}\n\n");
        s += "| symbol | trace name | access | last component | relative to | path argument |\n";
        s += "|---|---|---|---|---|---|\n";
        for h in table.iter() {
            if h.checks.is_empty() {
                s += &format!(
                    "| `{}` | `{}` | — | — | — | (no check) |\n",
                    h.symbol, h.call
                );
                continue;
            }
            s += &format!(
                "| `{}` | `{}` | {} | {} | {} | {} |\n",
                h.symbol,
                h.call,
                cell(h.checks, |c| access(c.access)),
                cell(h.checks, |c| follow(c.follow)),
                cell(h.checks, |c| dirfd(c.dirfd)),
                cell(h.checks, |c| path(c.path)),
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docs_hooks_md_is_current() {
        let file = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/hooks.md");
        let sys = syscall_rows();
        let want = render(&sections(&sys));
        if std::env::var_os("FSGUARD_BLESS").is_some() {
            std::fs::write(file, &want).unwrap();
            return;
        }
        let have = std::fs::read_to_string(file).unwrap_or_default();
        assert!(
            have == want,
            "docs/hooks.md is out of date with the hook tables; \
             rerun with FSGUARD_BLESS=1 cargo test -p fsguard docs"
        );
    }

    #[test]
    fn every_symbol_is_hooked_once() {
        // Once among the Linux rows, and once among the macOS-only rows.
        let mut linux = std::collections::HashSet::new();
        let mut macos = std::collections::HashSet::new();
        let sys = syscall_rows();
        for (title, table) in sections(&sys) {
            let seen = if title.starts_with(MACOS_ONLY) {
                &mut macos
            } else {
                &mut linux
            };
            for h in table.iter() {
                assert!(seen.insert(h.symbol), "{} declared twice", h.symbol);
            }
        }
        assert!(!macos.is_empty(), "no macOS-only rows rendered");
    }

    #[test]
    fn macos_only_rows_come_last() {
        let sys = syscall_rows();
        let all = sections(&sys);
        let first = all.iter().position(|(t, _)| t.starts_with(MACOS_ONLY));
        assert!(first.is_some(), "no macOS-only section");
        for (title, table) in &all[first.unwrap()..] {
            assert!(
                title.starts_with(MACOS_ONLY),
                "{title} after a macOS-only section"
            );
            assert!(!table.is_empty(), "{title}: no rows");
        }
    }
}
