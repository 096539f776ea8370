//! Programs the library cannot follow: statically linked ones. Without
//! Landlock they are reported (or refused with `unguarded_exec = deny`);
//! with `--landlock` the kernel keeps their writes inside the root.

mod children_util;

use children_util::*;
use std::process::Output;

const WRITER: &str = r#"
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
    write(fd, "static\n", 7);
    close(fd);
    return 0;
}
"#;

fn static_writer(s: &Scratch) -> std::path::PathBuf {
    let p = compile(&s.0, "writer", WRITER, &["-static"]);
    let inside = s.ws().join("writer");
    std::fs::copy(&p, &inside).unwrap();
    inside
}

#[test]
fn static_program_is_warned_about_without_landlock() {
    let s = Scratch::new("static-warn");
    let w = static_writer(&s);
    let out = s.path("out");
    // Run directly, and from a guarded shell (the library's exec hook).
    let direct = run(
        &s.0,
        &[
            "--no-landlock",
            "--root",
            "ws",
            "--",
            w.to_str().unwrap(),
            out.to_str().unwrap(),
        ],
    );
    let line = format!("[fsguard] unguarded exec static path={}", w.display());
    assert!(stderr(&direct).contains(&line), "{}", stderr(&direct));
    assert_eq!(code(&direct), 0, "without Landlock nothing stops it");
    assert!(out.exists());
    std::fs::remove_file(&out).unwrap();

    let cmd = format!("{} {}", w.display(), out.display());
    let nested = run(
        &s.0,
        &["--no-landlock", "--root", "ws", "--", "sh", "-c", &cmd],
    );
    assert!(stderr(&nested).contains(&line), "{}", stderr(&nested));
    assert!(out.exists());
}

#[test]
fn unguarded_exec_deny_refuses() {
    let s = Scratch::new("static-deny");
    let w = static_writer(&s);
    let out = s.ws().join("out");
    let o = run(
        &s.0,
        &[
            "--root",
            "ws",
            "--unguarded-exec",
            "deny",
            "--",
            w.to_str().unwrap(),
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(code(&o), 126, "{}", stderr(&o));
    assert!(!out.exists());
    let cmd = format!("{} {}", w.display(), out.display());
    let o = run(
        &s.0,
        &[
            "--root",
            "ws",
            "--unguarded-exec",
            "deny",
            "--",
            "sh",
            "-c",
            &cmd,
        ],
    );
    assert_eq!(code(&o), 126, "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "[fsguard] blocked execve exec path={} rule=unguarded_exec:static",
            w.display()
        )),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
    // allow: silent.
    let o = run(
        &s.0,
        &[
            "--root",
            "ws",
            "--unguarded-exec",
            "allow",
            "--",
            "sh",
            "-c",
            &cmd,
        ],
    );
    assert_eq!(code(&o), 0);
    assert!(!stderr(&o).contains("unguarded"), "{}", stderr(&o));
}

#[test]
fn landlock_stops_static_writes_outside_the_root() {
    let s = Scratch::new("static-landlock");
    let w = static_writer(&s);
    let out = s.path("out");
    let o = run(
        &s.0,
        &[
            "--root",
            "ws",
            "--landlock",
            "--",
            w.to_str().unwrap(),
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    assert!(stderr(&o).contains("Permission denied"), "{}", stderr(&o));
    assert!(!out.exists(), "Landlock refused the write");

    // The same program writing inside the root works.
    let inside = s.ws().join("in");
    let o = run(
        &s.0,
        &[
            "--root",
            "ws",
            "--landlock=required",
            "--",
            w.to_str().unwrap(),
            inside.to_str().unwrap(),
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&inside).unwrap(), "static\n");

    // From a guarded shell too, and ordinary dynamic tools keep working
    // (the library's own needs: /proc, the log, TMPDIR, /dev/null).
    let log = s.ws().join("trace.log");
    let cmd = format!(
        "{w} {out}; echo x > ws/ok && ls ws >/dev/null && echo t > \"$TMPDIR/t\" && cat ws/ok",
        w = w.display(),
        out = out.display()
    );
    let o = run(
        &s.0,
        &[
            "--root",
            "ws",
            "--landlock",
            "--log",
            log.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            &cmd,
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(stdout(&o), "x\n");
    assert!(!out.exists());
    let trace = std::fs::read_to_string(&log).unwrap();
    assert!(trace.contains("unguarded exec static"), "{trace}");
}

#[test]
#[cfg(target_arch = "x86_64")]
fn landlock_backs_up_dynamic_programs_too() {
    // A raw syscall instruction bypasses the library; Landlock still
    // refuses it.
    let s = Scratch::new("raw-landlock");
    let raw = compile(
        &s.0,
        "raw",
        r#"
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>
/* The instruction itself: libc's syscall() is hooked. */
static long raw_openat(long dirfd, const char *path, long flags, long mode) {
    long ret;
    register long r10 __asm__("r10") = mode;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"((long)SYS_openat), "D"(dirfd), "S"(path), "d"(flags), "r"(r10)
                     : "rcx", "r11", "memory");
    return ret;
}
int main(int argc, char **argv) {
    long fd = raw_openat(AT_FDCWD, argv[1], O_WRONLY | O_CREAT, 0644);
    return fd < 0 ? 3 : 0;
}
"#,
        &[],
    );
    std::fs::copy(&raw, s.ws().join("raw")).unwrap();
    let out = s.path("out");
    let o = run(
        &s.0,
        &[
            "--no-landlock",
            "--root",
            "ws",
            "--",
            "ws/raw",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(code(&o), 0, "the library alone cannot see a raw syscall");
    std::fs::remove_file(&out).unwrap();
    let o = run(
        &s.0,
        &[
            "--root",
            "ws",
            "--landlock",
            "--",
            "ws/raw",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    assert!(!out.exists());
}

/// A program that is not traced (no gate waits for the supervisor) still
/// finds the `cache` preset's directories made before it runs, and they go
/// with the private TMPDIR at exit.
#[test]
fn static_program_finds_the_cache_directories() {
    const CHECK: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
int main(void) {
    const char *vars[] = {"XDG_CACHE_HOME", "PIP_CACHE_DIR", "VIRTUALENV_OVERRIDE_APP_DATA", "CARGO_HOME"};
    for (int i = 0; i < 4; i++) {
        const char *d = getenv(vars[i]);
        struct stat st;
        if (!d || stat(d, &st) != 0 || !S_ISDIR(st.st_mode)) {
            printf("missing %s=%s\n", vars[i], d ? d : "(unset)");
            return 4;
        }
    }
    struct stat st;
    char link[4096];
    snprintf(link, sizeof link, "%s/registry", getenv("CARGO_HOME"));
    if (lstat(link, &st) != 0 || !S_ISLNK(st.st_mode)) {
        printf("no link %s\n", link);
        return 5;
    }
    printf("%s\n", getenv("TMPDIR"));
    return 0;
}
"#;
    let s = Scratch::new("static-cache");
    let p = compile(&s.0, "check", CHECK, &["-static"]);
    let cargo = s.path("cargo");
    std::fs::create_dir_all(cargo.join("registry")).unwrap();
    let o = fsguard(
        &s.0,
        "run",
        &["--no-landlock", "--root", "ws", "--", p.to_str().unwrap()],
        &[("CARGO_HOME", cargo.to_str().unwrap())],
    );
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    let tmpdir = stdout(&o).trim().to_string();
    assert!(tmpdir.contains("fsguard-"), "{tmpdir}");
    assert!(
        !std::path::Path::new(&tmpdir).exists(),
        "{tmpdir} is left behind"
    );
}

#[test]
fn cli_json_lines_carry_exe_and_time_like_the_library() {
    let s = Scratch::new("static-json");
    let w = static_writer(&s);
    let out = s.ws().join("out");
    let head = format!(
        "{{\"event\":\"blocked\",\"call\":\"execve\",\"access\":\"exec\",\"path\":\"{}\",\
         \"rule\":\"unguarded_exec:static\",\"pid\":",
        w.display()
    );
    let args = |cmd: &[&str]| {
        let mut a = vec![
            "--root",
            "ws",
            "--unguarded-exec",
            "deny",
            "--log-format",
            "json",
            "--",
        ];
        a.extend_from_slice(cmd);
        run(&s.0, &a)
    };
    let line_of = |o: &Output| -> String {
        // A shell may have begun its own message on the line.
        stderr(o)
            .lines()
            .find_map(|l| l.find(&head).map(|at| l[at..].to_string()))
            .unwrap_or_else(|| panic!("no line starting {head}:\n{}", stderr(o)))
    };
    // The CLI's own refusal (run directly) and the library's (from a shell).
    let direct = args(&[w.to_str().unwrap(), out.to_str().unwrap()]);
    assert_eq!(code(&direct), 126, "{}", stderr(&direct));
    let cmd = format!("{} {}", w.display(), out.display());
    let nested = args(&["sh", "-c", &cmd]);
    assert_eq!(code(&nested), 126, "{}", stderr(&nested));
    let fsguard = std::fs::canonicalize(cli()).unwrap();
    for (line, exe) in [
        (line_of(&direct), fsguard.display().to_string()),
        (line_of(&nested), String::new()),
    ] {
        let rest = &line[head.len()..];
        let (pid, rest) = rest.split_once(',').unwrap();
        assert!(pid.parse::<u32>().is_ok(), "{line}");
        let rest = rest.strip_prefix("\"errno\":13,\"exe\":\"").expect(&line);
        let (got_exe, rest) = rest.split_once('"').unwrap();
        if !exe.is_empty() {
            assert_eq!(got_exe, exe, "{line}");
        } else {
            assert!(got_exe.starts_with('/'), "{line}");
        }
        let time = rest
            .strip_prefix(",\"time\":")
            .and_then(|t| t.strip_suffix('}'))
            .expect(&line);
        let (secs, millis) = time.split_once('.').expect(&line);
        assert!(secs.parse::<u64>().unwrap() > 1_600_000_000, "{line}");
        assert_eq!(millis.len(), 3, "{line}");
    }
    assert!(!out.exists());
}
