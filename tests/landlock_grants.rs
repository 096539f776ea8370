//! Issue 27 item 7, "Landlock grants more than the policy": `fsguard run`'s
//! Landlock ruleset grants directories whole for reading (`/etc`, for
//! glibc's own reads of it; a read allow-list's bases), so a static
//! program, which the library never sees, read what the policy denies
//! inside them. Now such a directory is granted entry by entry, the denied
//! path left out.

#![cfg(target_os = "linux")]

mod common;

use common::*;
use std::path::Path;

fn reader() -> std::path::PathBuf {
    c_program("static_reader", &["-static"])
}

/// `fsguard run ARGS -- static_reader FILES…` in `ws`: each file's verdict.
fn reads(ws: &Path, args: &[&str], files: &[&Path]) -> Out {
    run(bare_cmd(cli())
        .current_dir(ws)
        .arg("run")
        .args(args)
        .arg("--")
        .arg(reader())
        .args(files))
}

fn verdict<'a>(o: &'a Out, f: &Path) -> &'a str {
    let want = format!("{} ", f.display());
    o.stdout
        .lines()
        .find_map(|l| l.strip_prefix(&want))
        .unwrap_or_else(|| panic!("no line for {}:\n{}", f.display(), o.describe()))
}

/// `dir/a`, `dir/sub/secret`, `dir/sub/other`.
fn data(dir: &Path) -> [std::path::PathBuf; 3] {
    mkdir(&dir.join("sub"));
    let files = [dir.join("a"), dir.join("sub/secret"), dir.join("sub/other")];
    for f in &files {
        write_file(f, "x\n", 0o644);
    }
    files
}

#[test]
fn landlock_grants_more_than_the_policy_a_denied_file_in_a_granted_directory() {
    if landlock_abi() == 0 {
        eprintln!("skipped: this kernel has no Landlock");
        return;
    }
    let td = TempDir::new("carve");
    let ws = td.join("ws");
    mkdir(&ws);
    let s = |p: &Path| p.to_str().unwrap().to_string();
    // Inside a read-only root (granted for reading only): a read deny.
    let [a, secret, other] = data(&ws.join("data"));
    let files = [a.as_path(), secret.as_path(), other.as_path()];
    let o = reads(&ws, &["--readonly=.", "--deny-read", &s(&secret)], &files);
    assert_eq!(verdict(&o, &secret), "13", "{}", o.describe());
    assert_eq!(verdict(&o, &a), "ok", "{}", o.describe());
    assert_eq!(verdict(&o, &other), "ok", "{}", o.describe());
    // Outside the root, in a read allow-list's directory: deny_always.
    let [a, secret, other] = data(&td.join("data"));
    let files = [a.as_path(), secret.as_path(), other.as_path()];
    let allow = s(&td.join("data"));
    let args = ["--root", ".", "--allow-read", &allow];
    let o = reads(
        &ws,
        &[&args[..], &["--deny-read-always", &s(&secret)]].concat(),
        &files,
    );
    assert_eq!(verdict(&o, &secret), "13", "{}", o.describe());
    assert_eq!(verdict(&o, &a), "ok", "{}", o.describe());
    assert_eq!(verdict(&o, &other), "ok", "{}", o.describe());
    // A plain deny there is lifted by the allow (policy.md, step 2 before
    // 3): the library reads it, and so may the kernel.
    let o = reads(
        &ws,
        &[&args[..], &["--deny-read", &s(&secret)]].concat(),
        &files,
    );
    assert_eq!(verdict(&o, &secret), "ok", "{}", o.describe());
    // The library never loads in a static program: without Landlock it
    // reads everything, so the refusals above are the kernel's.
    let no_ll = ["--no-landlock", "--deny-read-always", &s(&secret)];
    let o = reads(&ws, &[&args[..], &no_ll[..]].concat(), &files);
    assert_eq!(verdict(&o, &secret), "ok", "{}", o.describe());
}

#[test]
fn landlock_grants_more_than_the_policy_etc_shadow() {
    if landlock_abi() == 0 {
        eprintln!("skipped: this kernel has no Landlock");
        return;
    }
    let shadow = Path::new("/etc/shadow");
    let passwd = Path::new("/etc/passwd");
    let bare = run(bare_cmd(reader()).arg(shadow));
    if bare.stdout.trim() != "/etc/shadow ok" {
        eprintln!("skipped: /etc/shadow is unreadable here anyway (not root)");
        return;
    }
    let td = TempDir::new("shadow");
    let ws = td.join("ws");
    mkdir(&ws);
    let o = reads(&ws, &["--root", "."], &[shadow, passwd]);
    assert_eq!(verdict(&o, shadow), "13", "{}", o.describe());
    assert_eq!(verdict(&o, passwd), "ok", "{}", o.describe());
    // glibc reads /etc/passwd itself (NSS), so /etc stays readable around
    // /etc/shadow, which the library refuses under a root. A policy that
    // lets it be read gets it read: Landlock follows the policy.
    let o = reads(
        &ws,
        &["--root", ".", "--allow-read", "/etc/shadow"],
        &[shadow, passwd],
    );
    assert_eq!(verdict(&o, shadow), "ok", "{}", o.describe());
}
