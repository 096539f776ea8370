//! The libc side doors around the hooks (issue 18): glibc's other names
//! for open, lookups that would hand out libc's own open, a second libc in
//! a new link-map namespace, and posix_spawn file actions whose path
//! changes between the add and the spawn. Each is refused under the real
//! library, with its trace line, and nothing outside the root changes.
//! The last test sweeps libc's exports for path-taking aliases.

#![cfg(target_os = "linux")]

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use common::*;

/// A workspace `ws` (the root) and a directory `out` beside it.
fn layout(tag: &str) -> (TempDir, PathBuf, PathBuf) {
    let td = TempDir::new(tag);
    let ws = td.join("ws");
    let out = td.join("out");
    mkdir(&ws);
    mkdir(&out);
    write_file(&out.join("secret"), "S\n", 0o644);
    (td, ws, out)
}

fn side_doors() -> PathBuf {
    c_program("side_doors", &["-ldl"])
}

/// Runs `side_doors MODE out/x` guarded and checks the refusal: the
/// program's line, exactly one trace line as `want`, `out` unchanged.
fn refused(f: &mut Failures, mode: &str, call: &str, line: &str) {
    f.case();
    let (_td, ws, out) = layout("sidedoor");
    let target = out.join("x");
    let before = snapshot(&out);
    let o = run(
        guarded_cmd(side_doors(), &[("FSGUARD_ROOT", ws.to_str().unwrap())])
            .current_dir(&ws)
            .arg(mode)
            .arg(&target),
    );
    let mut why = Vec::new();
    if !o.stdout.lines().any(|l| l == format!("{mode} {line}")) {
        why.push(format!("expected the line `{mode} {line}`"));
    }
    if let Err(e) = check_traces(
        &o.blocked(),
        &[vec![Expect::new(call, "write", &target, "root")]],
    ) {
        why.push(e);
    }
    if let Some(d) = snapshot_diff(&before, &snapshot(&out)) {
        why.push(format!("outside the root changed:\n{d}"));
    }
    if !why.is_empty() {
        f.fail(mode, format!("{}\n{}", why.join("\n"), o.describe()));
    }
}

/// The door is real: bare, the same program writes the file.
fn open_bare(mode: &str) {
    let (_td, ws, out) = layout("sidedoorbare");
    let target = out.join("x");
    let o = run(bare_cmd(side_doors())
        .current_dir(&ws)
        .arg(mode)
        .arg(&target));
    assert!(
        o.stdout.lines().any(|l| l == format!("{mode} ok")) && target.exists(),
        "{}",
        o.describe()
    );
}

#[test]
fn glibc_aliases_of_open_are_checked() {
    let mut f = Failures::default();
    for (mode, call) in [
        ("__open", "open"),
        ("__open64", "open"),
        ("__open_nocancel", "open"),
        ("__open64_nocancel", "open"),
        ("_IO_fopen", "fopen"),
    ] {
        refused(&mut f, mode, call, "fail 13");
    }
    f.finish("alias");
    open_bare("__open");
}

#[test]
fn lookups_of_hooked_names_return_the_hook() {
    let mut f = Failures::default();
    for (mode, call) in [
        // dlsym on a handle of libc itself.
        ("dlsym_libc", "open"),
        ("dlsym_libc_nocancel", "open"),
        // Versioned lookups, on RTLD_NEXT and on the libc handle.
        ("dlvsym_next", "open"),
        ("dlvsym_libc", "open"),
        ("dlvsym_libc_openat", "openat"),
        // The real dlsym, looked up by name, is the hook too.
        ("dlsym_dlsym", "open"),
        ("dlsym_next", "open"),
        ("dlsym_default", "open"),
    ] {
        refused(&mut f, mode, call, "fail 13");
    }
    f.finish("lookup");
    open_bare("dlvsym_next");
}

#[test]
fn lookups_of_other_names_answer_as_libc_does() {
    let (_td, ws, _out) = layout("lookups");
    let o = run(
        guarded_cmd(side_doors(), &[("FSGUARD_ROOT", ws.to_str().unwrap())])
            .current_dir(&ws)
            .args(["lookups", "-"]),
    );
    for want in ["missing null dlerror", "strlen found", "bogus-version null"] {
        assert!(
            o.stdout.lines().any(|l| l == want),
            "{want}\n{}",
            o.describe()
        );
    }
    assert_no_blocked(&o);
}

#[test]
fn dlmopen_into_a_new_namespace_is_refused() {
    let (_td, ws, out) = layout("dlmopen");
    let target = out.join("x");
    let before = snapshot(&out);
    let o = run(
        guarded_cmd(side_doors(), &[("FSGUARD_ROOT", ws.to_str().unwrap())])
            .current_dir(&ws)
            .arg("dlmopen")
            .arg(&target),
    );
    // NULL, with a dlerror() message, as a failed load.
    assert!(
        o.stdout
            .lines()
            .any(|l| l.starts_with("dlmopen refused ") && l.contains("refused: cannot open")),
        "{}",
        o.describe()
    );
    assert_traces(
        &o,
        &[Expect::new(
            "dlmopen",
            "exec",
            "libc.so.6",
            "unguarded_exec:namespace",
        )],
    );
    assert!(snapshot_diff(&before, &snapshot(&out)).is_none());
    open_bare("dlmopen");
}

#[test]
fn profiling_output_is_checked() {
    // _mcleanup writes $GMON_OUT_PREFIX.<pid> through glibc's internal open.
    let (_td, ws, out) = layout("gmon");
    let before = snapshot(&out);
    let prefix = out.join("g");
    let o = run(
        guarded_cmd(side_doors(), &[("FSGUARD_ROOT", ws.to_str().unwrap())])
            .env("GMON_OUT_PREFIX", &prefix)
            .current_dir(&ws)
            .args(["mcleanup", "-"]),
    );
    assert!(o.stdout.contains("mcleanup done"), "{}", o.describe());
    let b = o.blocked();
    assert!(
        b.len() == 1
            && b[0].call == "_mcleanup"
            && b[0]
                .field("path")
                .is_some_and(|p| p.starts_with(&format!("{}.", prefix.display()))),
        "{}",
        o.describe()
    );
    assert!(
        snapshot_diff(&before, &snapshot(&out)).is_none(),
        "{}",
        o.describe()
    );
    // Bare, glibc writes it.
    let o = run(bare_cmd(side_doors())
        .env("GMON_OUT_PREFIX", &prefix)
        .current_dir(&ws)
        .args(["mcleanup", "-"]));
    assert!(
        std::fs::read_dir(&out).unwrap().count() == 2,
        "{}",
        o.describe()
    );
}

/// `ws/sub`, and `ws/lnk -> sub`.
fn spawn_layout() -> (TempDir, PathBuf, PathBuf) {
    let (td, ws, out) = layout("spawnretarget");
    mkdir(&ws.join("sub"));
    symlink("sub", &ws.join("lnk"));
    (td, ws, out)
}

fn spawn_retarget(mode: &str, ws: &Path, out: &Path) -> Out {
    run(guarded_cmd(
        c_program("spawn_retarget", &[]),
        &[("FSGUARD_ROOT", ws.to_str().unwrap())],
    )
    .current_dir(ws)
    .arg(mode)
    .arg(out))
}

#[test]
fn spawn_open_action_through_a_retargeted_link_is_refused() {
    let (_td, ws, out) = spawn_layout();
    let before = snapshot(&out);
    let o = spawn_retarget("retarget", &ws, &out);
    assert!(o.stdout.lines().any(|l| l == "add 0"), "{}", o.describe());
    assert!(
        o.stdout.lines().any(|l| l == "spawn 13"),
        "{}",
        o.describe()
    );
    assert_traces(
        &o,
        &[Expect::new("posix_spawn", "write", out.join("x"), "root")],
    );
    assert!(
        snapshot_diff(&before, &snapshot(&out)).is_none(),
        "{}",
        o.describe()
    );
}

#[test]
fn spawn_chdir_action_through_a_retargeted_link_is_followed() {
    let (_td, ws, out) = spawn_layout();
    let before = snapshot(&out);
    let o = spawn_retarget("chdir_retarget", &ws, &out);
    assert!(o.stdout.lines().any(|l| l == "add 0"), "{}", o.describe());
    assert!(
        o.stdout.lines().any(|l| l == "spawn 13"),
        "{}",
        o.describe()
    );
    assert_traces(
        &o,
        &[Expect::new("posix_spawn", "write", out.join("y"), "root")],
    );
    assert!(
        snapshot_diff(&before, &snapshot(&out)).is_none(),
        "{}",
        o.describe()
    );
}

#[test]
fn spawn_chdir_action_inside_the_root_works() {
    let (_td, ws, out) = spawn_layout();
    let o = spawn_retarget("chdir_ok", &ws, &out);
    assert!(o.stdout.lines().any(|l| l == "add 0"), "{}", o.describe());
    assert!(o.stdout.lines().any(|l| l == "spawn 0"), "{}", o.describe());
    assert_no_blocked(&o);
    assert_eq!(
        std::fs::read_to_string(ws.join("sub/y")).unwrap_or_default(),
        "spawned\n",
        "{}",
        o.describe()
    );
}

// ---------------------------------------------------------------------------
// The export sweep.

/// libc exports whose names look path-taking but that no hook needs, each
/// with the reason. A name may end in `*` to cover a family.
const UNREACHABLE: &[(&str, &str)] = &[
    // FILE internals: they act on a FILE that is already open.
    ("_IO_fdopen", "an fd, no path (fdopen)"),
    ("_IO_file_attach", "attaches an open fd to a FILE"),
    ("_IO_file_close", "an open FILE"),
    ("_IO_file_close_it", "an open FILE"),
    ("_IO_file_doallocate", "an open FILE's buffer"),
    ("_IO_file_finish", "an open FILE"),
    ("_IO_file_init", "initialises a FILE struct, opens nothing"),
    ("_IO_file_overflow", "an open FILE"),
    ("_IO_file_read", "an open FILE"),
    ("_IO_file_seek", "an open FILE"),
    ("_IO_file_seekoff", "an open FILE"),
    ("_IO_file_setbuf", "an open FILE"),
    ("_IO_file_stat", "fstat of an open FILE"),
    ("_IO_file_sync", "an open FILE"),
    ("_IO_file_underflow", "an open FILE"),
    ("_IO_file_write", "an open FILE"),
    ("_IO_file_xsputn", "an open FILE"),
    ("_IO_wfile_*", "an open wide FILE"),
    ("_IO_flockfile", "locks an open FILE"),
    ("_IO_ftrylockfile", "locks an open FILE"),
    ("_IO_funlockfile", "locks an open FILE"),
    ("_IO_iter_file", "iterates the list of open FILEs"),
    ("_IO_link_in", "the list of open FILEs"),
    ("_IO_un_link", "the list of open FILEs"),
    ("_IO_remove_marker", "a stream marker"),
    ("_IO_str_init_static", "a string stream"),
    // fds and FILEs, not paths.
    ("__fstat64", "an fd"),
    ("__fxstat", "an fd"),
    ("__fxstat64", "an fd"),
    ("__file_change_detection_for_fp", "fstat of an open FILE"),
    ("__file_change_detection_for_stat", "compares a struct stat"),
    ("__file_is_unchanged", "compares two records"),
    ("__endmntent", "closes a mount table FILE"),
    ("__getmntent_r", "reads an open mount table FILE"),
    ("__socket", "creates an unnamed socket"),
    (
        "__send",
        "send(2): no address, the connected peer (checked at connect)",
    ),
    (
        "__res_send",
        "the DNS resolver: queries the configured name servers, no AF_UNIX address",
    ),
    (
        "__res_nsend",
        "the DNS resolver: queries the configured name servers, no AF_UNIX address",
    ),
    (
        "__res_context_send",
        "the DNS resolver: queries the configured name servers, no AF_UNIX address",
    ),
    // Names and databases, not caller paths.
    (
        "__mktemp",
        "only makes up a name (like mktemp): creates nothing",
    ),
    (
        "__mq_open_2",
        "a message queue name; mq_open is not hooked (docs/limits.md)",
    ),
    (
        "__nss_files_data_open",
        "opens only NSS's fixed /etc databases, for reading",
    ),
    ("__nss_files_data_endent", "NSS's fixed /etc databases"),
    ("__nss_files_data_put", "NSS's fixed /etc databases"),
    ("__nss_files_data_setent", "NSS's fixed /etc databases"),
    (
        "_nss_files_*",
        "NSS files backend: reads only the fixed /etc databases",
    ),
    (
        "__open_catalog",
        "catopen's worker: reads a message catalog (catopen is not hooked either: docs/limits.md)",
    ),
    (
        "__gconv_*",
        "charset conversion: module names come from gconv-modules, not the caller",
    ),
    (
        "__monstartup",
        "allocates profiling buffers; _mcleanup writes them and is hooked",
    ),
    ("__profile_frequency", "a number"),
    ("__cyg_profile_func_enter", "instrumentation hook, no path"),
    ("__cyg_profile_func_exit", "instrumentation hook, no path"),
    // The loader's error plumbing.
    ("_dl_catch_error", "runs a callback, catching loader errors"),
    (
        "_dl_catch_exception",
        "runs a callback, catching loader errors",
    ),
    ("_dl_signal_error", "raises a loader error"),
    ("_dl_signal_exception", "raises a loader error"),
    ("_dl_find_object", "maps an address to its object"),
    ("_dl_mcount_wrapper", "profiling"),
    ("_dl_mcount_wrapper_check", "profiling"),
    // Names the keyword match catches that have nothing to do with files.
    ("__libc_alloc_buffer_create_failure", "memory"),
    ("__libc_clntudp_bufcreate", "an RPC client"),
    ("__libc_unwind_link_get", "the unwinder's handle"),
    ("__netlink_assert_response", "netlink"),
    ("__nptl_create_event", "a debugger event"),
    ("__pthread_key_create", "thread keys"),
    ("__pthread_mutexattr_*", "mutex attributes"),
    ("__res_state", "the resolver state"),
    ("__rpc_thread_createerr", "RPC state"),
];

/// Words that make an exported name look path-taking.
const PATHLIKE: &[&str] = &[
    "open",
    "creat",
    "stat",
    "link",
    "rename",
    "mkdir",
    "rmdir",
    "chmod",
    "chown",
    "utime",
    "trunc",
    "access",
    "path",
    "dir",
    "spawn",
    "exec",
    "system",
    "file",
    "xattr",
    "mknod",
    "fifo",
    "tmp",
    "temp",
    "chdir",
    "mnt",
    "mount",
    "glob",
    "ftw",
    "fts",
    "realpath",
    "canonical",
    "remove",
    "catalog",
    "gmon",
    "mcleanup",
    "monstartup",
    "dlopen",
    "dlsym",
    "dlvsym",
    "dlmopen",
    "_dl_",
    "bind",
    "socket",
    "connect",
    "send",
    "load",
    "module",
    "gconv",
];

/// The C library the test programs use (the one this process mapped).
fn system_libc() -> PathBuf {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| p.ends_with("/libc.so.6"))
        .map(PathBuf::from)
        .expect("libc.so.6 in /proc/self/maps")
}

fn unreachable_reason(name: &str) -> Option<&'static str> {
    UNREACHABLE.iter().find_map(|(n, why)| {
        let hit = match n.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => *n == name,
        };
        hit.then_some(*why)
    })
}

#[test]
fn libc_exports_that_take_paths_are_classified() {
    let libc = system_libc();
    let exports = exported_functions(&libc);
    assert!(exports.len() > 1000, "odd nm output for {}", libc.display());
    let ours = exported_functions(lib());
    let tables: BTreeSet<&str> = hook_rows().iter().map(|r| r.symbol).collect();
    let mut unclassified = Vec::new();
    let mut hooked = 0;
    for name in &exports {
        let candidate = name.starts_with('_') || name.ends_with("_nocancel");
        if !candidate || !PATHLIKE.iter().any(|w| name.contains(w)) {
            continue;
        }
        if ours.contains(name) && tables.contains(name.as_str()) {
            hooked += 1;
        } else if unreachable_reason(name).is_none() {
            unclassified.push(name.clone());
        }
    }
    assert!(
        unclassified.is_empty(),
        "{} exports {} path-like name(s) that are neither hooked (in a hook \
         table and exported by libfsguard.so) nor listed in UNREACHABLE with \
         a reason: {:?}",
        libc.display(),
        unclassified.len(),
        unclassified
    );
    // The red team's aliases are among the hooked ones.
    for name in [
        "__open",
        "__open64",
        "__open_nocancel",
        "__open64_nocancel",
        "_IO_fopen",
    ] {
        assert!(
            exports.contains(name) && ours.contains(name) && tables.contains(name),
            "{name}"
        );
    }
    assert!(hooked >= 20, "only {hooked} hooked aliases found");
    // Every dl lookup entry point libc exports is interposed.
    for name in ["dlopen", "dlmopen", "dlsym", "dlvsym"] {
        assert!(ours.contains(name) && tables.contains(name), "{name}");
    }
}
