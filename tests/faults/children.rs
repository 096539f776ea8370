//! Large policies, forged policy fds and closed fds on the way to children.

use super::*;

#[test]
fn three_thousand_rules_reach_children_without_e2big() {
    let s = Scratch::new("bigpolicy");
    let cfg = big_config(&s, 3000);
    let ws = s.ws();
    std::fs::create_dir_all(ws.join("deny-02999")).unwrap();
    std::fs::create_dir_all(ws.join("deny-00000")).unwrap();
    // The grandchild writes inside the root, and is refused by the last rule.
    let script = "echo ok > ok.txt && sh -c 'echo no > deny-02999/x' ; \
                  env | grep -c '^FSGUARD_POLICY' ; sh -c 'env | grep -c ^FSGUARD_POLICY'";
    let o = preloaded(
        "sh",
        &[
            ("FSGUARD_CONFIG", cfg.to_str().unwrap()),
            ("FSGUARD_ROOT", ws.to_str().unwrap()),
        ],
    )
    .args(["-c", script])
    .current_dir(&ws)
    .output()
    .unwrap();
    let err = stderr(&o);
    assert!(!err.contains("Argument list too long"), "{err}");
    assert_eq!(std::fs::read_to_string(ws.join("ok.txt")).unwrap(), "ok\n");
    assert!(
        !ws.join("deny-02999/x").exists(),
        "the child was not guarded: {err}"
    );
    let want = format!(
        "[fsguard] blocked open write path={}/deny-02999/x rule=write.deny:\"{}/deny-02999/**\"",
        ws.display(),
        ws.display()
    );
    assert!(err.contains(&want), "{err}");
    // Neither the program nor its child carries the policy in its
    // environment.
    assert_eq!(stdout(&o), "0\n0\n", "{err}");

    // The same through `fsguard run`.
    let o = run(
        &ws,
        &[
            "--config",
            cfg.to_str().unwrap(),
            "--root",
            ".",
            "--",
            "sh",
            "-c",
            "sh -c 'echo run > run.txt; echo no > deny-00000/y'",
        ],
    );
    assert!(
        !stderr(&o).contains("Argument list too long"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("run.txt")).unwrap(),
        "run\n",
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("rule=write.deny:"), "{}", stderr(&o));
}

#[test]
fn a_forged_or_unsealed_policy_fd_fails_closed() {
    let s = Scratch::new("forgedfd");
    let ws = s.ws();
    // fd 0 is not a memfd: the library refuses to run.
    let o = preloaded("sh", &[("FSGUARD_POLICY_FD", "0")])
        .args(["-c", "echo ran > ran.txt"])
        .current_dir(&ws)
        .output()
        .unwrap();
    assert_eq!(code(&o), 125, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("FSGUARD_POLICY_FD=0: not a sealed policy memfd"),
        "{}",
        stderr(&o)
    );
    assert!(!ws.join("ran.txt").exists());
    // An unsealed memfd (writable by whoever holds it) is refused too.
    let src = r#"
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int fd = memfd_create("fsguard-policy", 0);
    const char *p = "{}";
    write(fd, p, strlen(p));
    char v[32];
    snprintf(v, sizeof v, "%d", fd);
    setenv("FSGUARD_POLICY_FD", v, 1);
    setenv("LD_PRELOAD", argv[1], 1);
    execl("/bin/sh", "sh", "-c", "echo ran > ran.txt", (char *)0);
    return 1;
}
"#;
    let prog = compile(&s.0, "unsealed", src, &[]);
    let o = Command::new(&prog)
        .arg(lib())
        .env_remove("LD_PRELOAD")
        .current_dir(&ws)
        .output()
        .unwrap();
    assert_eq!(code(&o), 125, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("the policy memfd is not sealed"),
        "{}",
        stderr(&o)
    );
    assert!(!ws.join("ran.txt").exists());
}

/// A child that closed every fd before exec (Python's `close_fds`) still
/// hands its own child the policy.
#[test]
fn closing_every_fd_before_exec_keeps_children_guarded() {
    let s = Scratch::new("closefds");
    let ws = s.ws();
    let src = r#"
#define _GNU_SOURCE
#include <stdio.h>
#include <unistd.h>
#include <sys/wait.h>
#include <linux/close_range.h>
#include <sys/syscall.h>
int main(int argc, char **argv) {
    pid_t pid = fork();
    if (pid == 0) {
        syscall(SYS_close_range, 3, ~0U, 0);
        execl("/bin/sh", "sh", "-c", argv[1], (char *)0);
        _exit(97);
    }
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 90;
}
"#;
    let prog = compile(&s.0, "closeall", src, &[]);
    let outside = s.path("outside.txt");
    let o = preloaded(
        prog.to_str().unwrap(),
        &[("FSGUARD_ROOT", ws.to_str().unwrap())],
    )
    .arg(format!(
        "echo in > in.txt; echo out > {}",
        outside.display()
    ))
    .current_dir(&ws)
    .output()
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(ws.join("in.txt")).unwrap(),
        "in\n",
        "{}",
        stderr(&o)
    );
    assert!(!outside.exists(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "[fsguard] blocked open write path={} rule=root",
            outside.display()
        )),
        "{}",
        stderr(&o)
    );
}
