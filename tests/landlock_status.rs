//! What `fsguard run` says about the Landlock ruleset it applied: nothing
//! when the kernel enforces all of it, one line naming the missing rights
//! when only part, and exit 125 under `--landlock=required` then.

mod children_util;
mod common;

use children_util::*;

/// The kernel's Landlock ABI version; 0 without Landlock.
fn kernel_abi() -> i64 {
    common::landlock_abi()
}

/// A static program: the library cannot follow it, only Landlock refuses
/// its writes outside the root.
const RAW_WRITER: &str = r#"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        fprintf(stderr, "open %s: %s\n", argv[1], strerror(errno));
        return 3;
    }
    write(fd, "raw\n", 4);
    close(fd);
    return 0;
}
"#;

#[test]
fn required_is_silent_when_fully_enforced_and_refuses_partial() {
    let abi = kernel_abi();
    if abi == 0 {
        eprintln!("skipped: this kernel has no Landlock");
        return;
    }
    let s = Scratch::new("landlock-status");
    let w = s.ws().join("raw_writer");
    std::fs::copy(compile(&s.0, "raw_writer", RAW_WRITER, &["-static"]), &w).unwrap();
    let inside = s.ws().join("in");
    let outside = s.path("out");
    let script = format!(
        "{w} {inside}; {w} {outside}; echo rc=$?",
        w = w.display(),
        inside = inside.display(),
        outside = outside.display()
    );
    let args = |mode: &'static str| {
        let mut a = vec!["--root", "ws"];
        if !mode.is_empty() {
            a.push(mode);
        }
        a.extend(["--", "sh", "-c"]);
        a
    };

    if abi >= 5 {
        // Every right fsguard handles is enforced: the command runs, the
        // kernel refuses the write outside the root, and fsguard says
        // nothing about Landlock, in either mode.
        for mode in ["--landlock=required", ""] {
            let mut a = args(mode);
            a.push(&script);
            let o = run(&s.0, &a);
            let err = stderr(&o);
            assert_eq!(code(&o), 0, "{mode}: {err}");
            assert_eq!(stdout(&o), "rc=3\n", "{mode}: {err}");
            assert!(err.contains("Permission denied"), "{mode}: {err}");
            assert!(!err.contains("fsguard: landlock"), "{mode}: {err}");
            assert!(!err.contains("enforced"), "{mode}: {err}");
            assert_eq!(std::fs::read_to_string(&inside).unwrap(), "raw\n");
            assert!(!outside.exists(), "{mode}: Landlock refused the write");
            std::fs::remove_file(&inside).unwrap();
        }
    } else {
        // An older kernel: the default run says once what is missing...
        let mut a = args("");
        a.push(&script);
        let o = run(&s.0, &a);
        let err = stderr(&o);
        assert_eq!(code(&o), 0, "{err}");
        assert_eq!(
            err.matches("fsguard: landlock: partially enforced").count(),
            1,
            "{err}"
        );
        assert!(err.contains("ioctl"), "{err}");
        assert!(!outside.exists());
        // ...and `--landlock=required` refuses to run the command at all.
        std::fs::remove_file(&inside).unwrap();
        let mut a = args("--landlock=required");
        a.push(&script);
        let o = run(&s.0, &a);
        let err = stderr(&o);
        assert_eq!(code(&o), 125, "{err}");
        assert!(err.contains("--landlock=required"), "{err}");
        assert!(err.contains("ioctl"), "{err}");
        assert!(!inside.exists(), "the command never ran");
    }
}
