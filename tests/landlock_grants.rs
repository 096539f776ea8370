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

#[test]
fn landlock_grants_more_than_the_policy_a_denied_file_in_a_granted_directory() {
    if landlock_abi() == 0 {
        eprintln!("skipped: this kernel has no Landlock");
        return;
    }
    let td = TempDir::new("carve");
    let ws = td.join("ws");
    let data = td.join("data");
    mkdir(&ws);
    mkdir(&data.join("sub"));
    for f in ["a", "sub/secret", "sub/other"] {
        write_file(&data.join(f), "x\n", 0o644);
    }
    let (a, secret, other) = (
        data.join("a"),
        data.join("sub/secret"),
        data.join("sub/other"),
    );
    let files = [a.as_path(), secret.as_path(), other.as_path()];
    let allow = data.to_str().unwrap();
    let deny = secret.to_str().unwrap();
    for flag in ["--deny-read", "--deny-read-always"] {
        let o = reads(
            &ws,
            &["--root", ".", "--allow-read", allow, flag, deny],
            &files,
        );
        assert_eq!(verdict(&o, &secret), "13", "{flag}: {}", o.describe());
        assert_eq!(verdict(&o, &a), "ok", "{}", o.describe());
        assert_eq!(verdict(&o, &other), "ok", "{}", o.describe());
    }
    // The library never loads in a static program: without Landlock it
    // reads everything, so the refusal above is the kernel's.
    let o = reads(
        &ws,
        &[
            "--no-landlock",
            "--root",
            ".",
            "--allow-read",
            allow,
            "--deny-read",
            deny,
        ],
        &files,
    );
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
    // the secret. The secrets preset is what leaves /etc/shadow out.
    let o = reads(&ws, &["--root", ".", "--no-secrets"], &[shadow, passwd]);
    assert_eq!(verdict(&o, shadow), "ok", "{}", o.describe());
}
