//! Every way out of the root is refused.

use super::*;

/// (cwd relative to T, call args, expected `CALL ACCESS PATH [-> DEST]` with
/// paths relative to T). `{T}` in args is the temp dir.
const DENIED: &[(&str, &str, &str)] = &[
    // --- reads ---
    (
        "ws",
        "open {T}/outside/secret.txt O_RDONLY",
        "open read outside/secret.txt",
    ),
    (
        "ws",
        "open ../outside/secret.txt O_RDONLY",
        "open read outside/secret.txt",
    ),
    (
        "ws",
        "open sub/../../outside/secret.txt O_RDONLY",
        "open read outside/secret.txt",
    ),
    (
        "ws/sub",
        "open ../../outside/secret.txt O_RDONLY",
        "open read outside/secret.txt",
    ),
    (
        "ws",
        "open link_out O_RDONLY",
        "open read outside/secret.txt",
    ),
    (
        "ws",
        "open dirlink_out/secret.txt O_RDONLY",
        "open read outside/secret.txt",
    ),
    // `..` applies after the symlink: dirlink_out/.. is T, not ws
    (
        "ws",
        "open dirlink_out/../top.txt O_RDONLY",
        "open read top.txt",
    ),
    (
        "ws",
        "-d . openat FD ../outside/secret.txt O_RDONLY",
        "openat read outside/secret.txt",
    ),
    (
        "ws",
        "-d . openat64 FD ../outside/secret.txt O_RDONLY",
        "openat read outside/secret.txt",
    ),
    // a dirfd on a directory outside (obtained with a raw syscall)
    (
        "ws",
        "-D {T}/outside openat FD secret.txt O_RDONLY",
        "openat read outside/secret.txt",
    ),
    (
        "ws",
        "open /proc/self/cwd/../outside/secret.txt O_RDONLY",
        "open read outside/secret.txt",
    ),
    (
        "ws",
        "-d . open /proc/self/fd/{fd}/../outside/secret.txt O_RDONLY",
        "open read outside/secret.txt",
    ),
    (
        "ws",
        "open {T}/ws2/file.txt O_RDONLY",
        "open read ws2/file.txt",
    ),
    (
        "ws",
        "open ../ws2/file.txt O_RDONLY",
        "open read ws2/file.txt",
    ),
    ("ws", "open {T} O_RDONLY|O_DIRECTORY", "open read ."),
    ("ws", "opendir ../outside", "opendir read outside"),
    ("ws", "opendir dirlink_out", "opendir read outside"),
    ("ws", "opendir ..", "opendir read ."),
    (
        "ws",
        "fopen ../outside/secret.txt r",
        "fopen read outside/secret.txt",
    ),
    ("ws", "fopen64 link_out r", "fopen read outside/secret.txt"),
    (
        "ws",
        "freopen ../outside/secret.txt r",
        "freopen read outside/secret.txt",
    ),
    (
        "ws",
        "__open_2 ../outside/secret.txt O_RDONLY",
        "open read outside/secret.txt",
    ),
    (
        "ws",
        "__openat_2 CWD link_out O_RDONLY",
        "openat read outside/secret.txt",
    ),
    (
        "ws",
        "open64 dirlink_out/secret.txt O_RDONLY",
        "open read outside/secret.txt",
    ),
    // --- writes ---
    (
        "ws",
        "open ../outside/new.txt O_WRONLY|O_CREAT 0644",
        "open write outside/new.txt",
    ),
    (
        "ws",
        "open link_out O_WRONLY",
        "open write outside/secret.txt",
    ),
    (
        "ws",
        "open link_out O_RDONLY|O_TRUNC",
        "open write outside/secret.txt",
    ),
    // dangling symlink inside pointing out, with O_CREAT: must not create the target
    (
        "ws",
        "open dangling O_WRONLY|O_CREAT 0644",
        "open write outside/created.txt",
    ),
    (
        "ws",
        "creat dangling 0644",
        "creat write outside/created.txt",
    ),
    ("ws", "fopen dangling w", "fopen write outside/created.txt"),
    // trailing slashes
    ("ws", "mkdir ../outside/d/ 0755", "mkdir write outside/d"),
    ("ws", "mkdir {T}/outside/d/ 0755", "mkdir write outside/d"),
    ("ws", "mkdir dirlink_out/d/ 0755", "mkdir write outside/d"),
    (
        "ws",
        "rename ok ../outside/moved/",
        "rename write ws/ok -> outside/moved",
    ),
    (
        "ws",
        "rename ok/ ../outside/moved/",
        "rename write ws/ok -> outside/moved",
    ),
    (
        "ws",
        "rename ok {T}/ws2/moved",
        "rename write ws/ok -> ws2/moved",
    ),
    (
        "ws",
        "rename in.txt ../outside/in.txt",
        "rename write ws/in.txt -> outside/in.txt",
    ),
    (
        "ws",
        "rename ../outside/secret.txt stolen.txt",
        "rename write outside/secret.txt -> ws/stolen.txt",
    ),
    (
        "ws",
        "-d . renameat FD in.txt FD ../outside/x",
        "renameat write ws/in.txt -> outside/x",
    ),
    (
        "ws",
        "-d . renameat2 FD in.txt FD ../outside/x 0",
        "renameat2 write ws/in.txt -> outside/x",
    ),
    (
        "ws",
        "link ../outside/secret.txt hl",
        "link write outside/secret.txt -> ws/hl",
    ),
    (
        "ws",
        "link in.txt ../outside/hl",
        "link write ws/in.txt -> outside/hl",
    ),
    (
        "ws",
        "linkat CWD link_out CWD hl AT_SYMLINK_FOLLOW",
        "linkat write outside/secret.txt -> ws/hl",
    ),
    ("ws", "symlink x ../outside/sl", "symlink write outside/sl"),
    (
        "ws",
        "-d . symlinkat x FD ../outside/sl",
        "symlinkat write outside/sl",
    ),
    (
        "ws",
        "chmod link_out 0600",
        "chmod write outside/secret.txt",
    ),
    (
        "ws",
        "chmod /proc/self/cwd/../outside/secret.txt 0600",
        "chmod write outside/secret.txt",
    ),
    (
        "ws",
        "fchmodat CWD dirlink_out/secret.txt 0600 0",
        "fchmodat write outside/secret.txt",
    ),
    (
        "ws",
        "chown dirlink_out/secret.txt self self",
        "chown write outside/secret.txt",
    ),
    (
        "ws",
        "truncate dirlink_out/secret.txt 0",
        "truncate write outside/secret.txt",
    ),
    (
        "ws",
        "utimensat CWD link_out 0",
        "utimensat write outside/secret.txt",
    ),
    (
        "ws",
        "utime ../outside/secret.txt",
        "utime write outside/secret.txt",
    ),
    (
        "ws",
        "-d . mkdir /proc/self/fd/{fd}/../outside/newdir 0755",
        "mkdir write outside/newdir",
    ),
    (
        "ws",
        "-D {T}/outside mkdirat FD newdir 0755",
        "mkdirat write outside/newdir",
    ),
    ("ws", "creat {T}/ws2/new 0644", "creat write ws2/new"),
    (
        "ws",
        "unlink ../outside/secret.txt",
        "unlink write outside/secret.txt",
    ),
    (
        "ws",
        "-d . unlinkat FD ../outside/secret.txt 0",
        "unlinkat write outside/secret.txt",
    ),
    ("ws", "rmdir ../outside/dir", "rmdir write outside/dir"),
    ("ws", "remove ../outside/dir", "remove write outside/dir"),
    (
        "ws",
        "fopen ../outside/secret.txt a",
        "fopen write outside/secret.txt",
    ),
    // more magic links
    (
        "ws",
        "open /proc/self/root{T}/outside/secret.txt O_RDONLY",
        "open read outside/secret.txt",
    ),
    (
        "ws",
        "open /proc/thread-self/cwd/../outside/secret.txt O_RDONLY",
        "open read outside/secret.txt",
    ),
    (
        "ws",
        "-d . open /dev/fd/{fd}/../outside/secret.txt O_RDONLY",
        "open read outside/secret.txt",
    ),
    // an fd on a file outside (say, inherited): linking it in or changing it
    // through /proc/self/fd/N or AT_EMPTY_PATH is a write outside
    (
        "ws",
        "-f {T}/outside/secret.txt linkat CWD /proc/self/fd/{fd} CWD stolen AT_SYMLINK_FOLLOW",
        "linkat write outside/secret.txt -> ws/stolen",
    ),
    (
        "ws",
        "-f {T}/outside/secret.txt linkat FD <empty> CWD stolen AT_EMPTY_PATH",
        "linkat write outside/secret.txt -> ws/stolen",
    ),
    (
        "ws",
        "-f {T}/outside/secret.txt chmod /proc/self/fd/{fd} 0600",
        "chmod write outside/secret.txt",
    ),
    (
        "ws",
        "-f {T}/outside/secret.txt fchownat FD <empty> self self AT_EMPTY_PATH",
        "fchownat write outside/secret.txt",
    ),
    (
        "ws",
        "-f {T}/outside/secret.txt open /proc/self/fd/{fd} O_RDONLY",
        "open read outside/secret.txt",
    ),
    // O_TMPFILE creates (an unnamed file) in the directory
    (
        "ws",
        "open ../outside O_TMPFILE|O_WRONLY 0600",
        "open write outside",
    ),
];

#[test]
fn outside_root_is_denied() {
    let mut f = Failures::default();
    for (cwd, case, spec) in DENIED {
        let name = format!("(cwd {cwd}) {case}");
        f.case();
        // control: bare, the call succeeds
        let lb = Layout::new();
        let bare = run(bare_cmd(calls_bin())
            .args(args(case, lb.t()))
            .current_dir(lb.t().join(cwd)));
        match result(&bare) {
            Some((r, _)) if r != "-1" && r != "NULL" => {}
            // linkat(AT_EMPTY_PATH) needs CAP_DAC_READ_SEARCH
            _ if case.contains("AT_EMPTY_PATH") && case.contains("linkat") && !is_root_user() => {
                continue
            }
            _ => {
                f.fail(
                    &name,
                    format!(
                        "control: fails even without the library\n{}",
                        bare.describe()
                    ),
                );
                continue;
            }
        }
        let l = Layout::new();
        let before = snapshot(l.t());
        let ws = l.ws();
        let out = run(
            guarded_cmd(calls_bin(), &[("FSGUARD_ROOT", ws.to_str().unwrap())])
                .args(args(case, l.t()))
                .current_dir(l.t().join(cwd)),
        );
        let mut errs = Vec::new();
        match result(&out) {
            Some((r, e)) if (r == "-1" || r == "NULL") && e.starts_with("13(") => {}
            Some((r, e)) => errs.push(format!(
                "expected ret=-1/NULL errno=13, got ret={r} errno={e}"
            )),
            None => errs.push("no result line".into()),
        }
        let (m, dest) = match spec.split_once(" -> ") {
            Some((m, d)) => (m, Some(d)),
            None => (*spec, None),
        };
        let w: Vec<&str> = m.split_whitespace().collect();
        let path = if w[2] == "." {
            l.t().to_path_buf()
        } else {
            l.t().join(w[2])
        };
        let mut e = Expect::new(w[0], w[1], path, "root");
        if let Some(d) = dest {
            e = e.dest(l.t().join(d));
        }
        if let Err(x) = check_traces(&out.blocked(), &[vec![e]]) {
            errs.push(format!("trace: {x}"));
        }
        if let Some(d) = snapshot_diff(&before, &snapshot(l.t())) {
            errs.push(format!("tree changed:\n{d}"));
        }
        if !errs.is_empty() {
            f.fail(&name, format!("{}\n{}", errs.join("\n"), out.describe()));
        }
    }
    f.finish("outside-root denial");
}
