//! Every way a program starts a child keeps the child guarded: scrubbed
//! environments, forged FSGUARD_* variables and an emptied LD_PRELOAD change
//! nothing.

mod children_util;

use children_util::*;
use std::path::Path;

/// `esc MODE TARGET [POLICY]`: starts `sh -c "echo escaped > TARGET"` the
/// way MODE says, with the environment scrubbed or forged.
const ESCAPE: &str = r#"
#define _GNU_SOURCE
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
extern char **environ;
static int status(int st) { return WIFEXITED(st) ? WEXITSTATUS(st) : 90; }
int main(int argc, char **argv) {
    const char *mode = argv[1];
    char cmd[4096], policy[65536];
    snprintf(cmd, sizeof cmd, "echo escaped > %s", argv[2]);
    snprintf(policy, sizeof policy, "FSGUARD_POLICY=%s", argc > 3 ? argv[3] : "{}");
    char *sh[] = {"sh", "-c", cmd, NULL};
    char *forged[] = {"FSGUARD_ROOT=/", "LD_PRELOAD=", policy, "FSGUARD_READONLY=0",
                      "FSGUARD_MODE=audit", "PATH=/usr/bin:/bin", NULL};
    char *empty[] = {NULL};
    pid_t pid;
    int st;
    if (!strcmp(mode, "system")) {
        clearenv();
        int r = system(cmd);
        /* The caller's environment is left as it was: empty. */
        if (environ && environ[0]) return 50;
        return status(r);
    }
    if (!strcmp(mode, "popen")) {
        clearenv();
        FILE *f = popen(cmd, "r");
        if (!f) return 99;
        int r = pclose(f);
        if (environ && environ[0]) return 50;
        return status(r);
    }
    if (!strcmp(mode, "spawn")) {
        if (posix_spawn(&pid, "/bin/sh", NULL, NULL, sh, empty)) return 98;
        waitpid(pid, &st, 0);
        return status(st);
    }
    if (!strcmp(mode, "spawnp")) {
        if (posix_spawnp(&pid, "sh", NULL, NULL, sh, forged)) return 98;
        waitpid(pid, &st, 0);
        return status(st);
    }
    if (!strcmp(mode, "vfork")) {
        pid = vfork();
        if (pid == 0) {
            execve("/bin/sh", sh, forged);
            _exit(97);
        }
        waitpid(pid, &st, 0);
        return status(st);
    }
    if (!strcmp(mode, "execve")) {
        char *bare[] = {"PATH=/usr/bin:/bin", NULL};
        execve("/bin/sh", sh, bare);
        return 96;
    }
    if (!strcmp(mode, "execlp")) {
        clearenv();
        execlp("sh", "sh", "-c", cmd, (char *)NULL);
        return 95;
    }
    if (!strcmp(mode, "execle")) {
        execle("/bin/sh", "sh", "-c", cmd, (char *)NULL, forged);
        return 94;
    }
    if (!strcmp(mode, "show")) {
        /* What a child sees after a forged exec. */
        char *other[] = {"LD_PRELOAD=/nonexistent-other.so", "FSGUARD_ROOT=/", NULL};
        char *show[] = {"sh", "-c", "echo \"$LD_PRELOAD|$FSGUARD_ROOT|${FSGUARD_HANDSHAKE_FD-none}\"", NULL};
        execve("/bin/sh", show, other);
        return 93;
    }
    return 2;
}
"#;

const MODES: &[&str] = &[
    "system", "popen", "spawn", "spawnp", "vfork", "execve", "execlp", "execle",
];

/// Prints the frozen policy a child was handed (`FSGUARD_POLICY_FD`).
/// Static, so no library loads in it to take the fd.
const SHOW_POLICY: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(void) {
    const char *v = getenv("FSGUARD_POLICY_FD");
    if (!v) return 3;
    int fd = atoi(v);
    char buf[65536];
    ssize_t n, off = 0;
    while ((n = pread(fd, buf, sizeof buf, off)) > 0) {
        fwrite(buf, 1, n, stdout);
        off += n;
    }
    return 0;
}
"#;

/// The loosest policy there is (root `/`, audit), frozen: what a forger
/// would hand its child.
fn loose_policy(dir: &Path) -> String {
    let show = compile(dir, "show-policy", SHOW_POLICY, &["-static"]);
    let o = run(
        dir,
        &[
            "--root",
            "/",
            "--audit",
            "--no-landlock",
            "--unguarded-exec",
            "allow",
            "--",
            "sh",
            "-c",
            show.to_str().unwrap(),
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let p = stdout(&o);
    assert!(p.contains("\"mode\":\"audit\""), "{p}");
    p
}

#[test]
fn unguarded_the_program_escapes() {
    // Control: without fsguard every mode writes its file, so the guarded
    // runs below fail only because of the guard.
    let s = Scratch::new("control");
    let esc = compile(&s.0, "esc", ESCAPE, &[]);
    for m in MODES {
        let out = s.path(&format!("out-{m}"));
        let st = std::process::Command::new(&esc)
            .args([m, out.to_str().unwrap()])
            .env_remove("LD_PRELOAD")
            .status()
            .unwrap();
        assert_eq!(st.code(), Some(0), "{m}");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "escaped\n", "{m}");
    }
}

#[test]
fn every_escape_stays_inside_the_root() {
    let s = Scratch::new("escape");
    let esc = compile(&s.0, "esc", ESCAPE, &[]);
    std::fs::copy(&esc, s.ws().join("esc")).unwrap();
    let policy = loose_policy(&s.0);
    for m in MODES {
        let out = s.path(&format!("out-{m}"));
        let o = run(
            &s.0,
            &[
                "--root",
                "ws",
                "--",
                "ws/esc",
                m,
                out.to_str().unwrap(),
                &policy,
            ],
        );
        let err = stderr(&o);
        assert!(
            !out.exists(),
            "{m}: the child wrote outside the root\n{err}"
        );
        assert_eq!(code(&o), 2, "{m}: sh fails its redirection\n{err}");
        assert!(
            err.contains(&format!(
                "[fsguard] blocked open write path={} rule=root",
                out.display()
            )),
            "{m}: {err}"
        );
        assert!(
            err.contains(&format!(
                "fsguard: 1 access blocked; first: open write {}",
                out.display()
            )),
            "{m}: {err}"
        );
        assert!(
            !err.contains("error"),
            "{m}: the forged policy must not be read\n{err}"
        );
    }
}

#[test]
fn env_dash_i_child_is_guarded() {
    let s = Scratch::new("envi");
    let out = s.path("out");
    let cmd = format!("echo escaped > {}", out.display());
    let o = run(&s.0, &["--root", "ws", "--", "env", "-i", "sh", "-c", &cmd]);
    assert!(!out.exists(), "{}", stderr(&o));
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("rule=root"), "{}", stderr(&o));
}

#[test]
fn children_get_our_preload_first_and_no_forged_variables() {
    let s = Scratch::new("show");
    let esc = compile(&s.0, "esc", ESCAPE, &[]);
    let o = run(
        &s.0,
        &["--root", ".", "--", esc.to_str().unwrap(), "show", "x"],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let lib = std::fs::canonicalize(lib()).unwrap();
    assert_eq!(
        stdout(&o).trim(),
        format!("{}:/nonexistent-other.so||none", lib.display()),
        "our library first, the caller's kept, FSGUARD_ROOT dropped, no handshake fd"
    );
}

#[test]
fn plain_ld_preload_children_are_guarded_too() {
    // No CLI: the library alone re-injects itself and the frozen policy.
    let s = Scratch::new("preload");
    let esc = compile(&s.0, "esc", ESCAPE, &[]);
    std::fs::copy(&esc, s.ws().join("esc")).unwrap();
    for m in ["system", "vfork", "spawn", "execlp"] {
        let out = s.path(&format!("out-{m}"));
        let o = std::process::Command::new(s.ws().join("esc"))
            .args([m, out.to_str().unwrap()])
            .current_dir(&s.0)
            .env("LD_PRELOAD", lib())
            .env("FSGUARD_ROOT", "ws")
            .output()
            .unwrap();
        assert!(!out.exists(), "{m}: {}", stderr(&o));
        assert!(stderr(&o).contains("rule=root"), "{m}: {}", stderr(&o));
    }
}

#[test]
fn exec_outside_the_root_is_an_exec_denial() {
    let s = Scratch::new("execdeny");
    let esc = compile(&s.0, "esc", ESCAPE, &[]);
    // The program lies outside the root: a guarded shell may not run it.
    let o = run(
        &s.0,
        &[
            "--root",
            "ws",
            "--",
            "sh",
            "-c",
            &format!("{} execve /dev/null", esc.display()),
        ],
    );
    assert_eq!(code(&o), 126, "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "[fsguard] blocked execve exec path={} rule=root",
            esc.display()
        )),
        "{}",
        stderr(&o)
    );
}
