//! Trace lines: never into the program's own fd 2, lost lines said once.

use super::*;

/// Closes stderr, opens a data file (it lands on fd 2), writes to it, then
/// makes a refused call.
const REUSE_FD2: &str = r#"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
int main(int argc, char **argv) {
    close(2);
    int fd = open("data.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd != 2) return 10;
    write(fd, "data\n", 5);
    int r = open(argv[1], O_WRONLY | O_CREAT, 0644);
    if (r >= 0 || errno != EACCES) return 11;
    r = mkdir(argv[2], 0755);
    if (r == 0 || errno != EACCES) return 12;
    return 0;
}
"#;

#[test]
fn trace_lines_never_land_in_a_file_the_program_put_on_fd_2() {
    let s = Scratch::new("fd2");
    let ws = s.ws();
    let prog = compile(&s.0, "reuse", REUSE_FD2, &[]);
    let (a, b) = (s.path("a.txt"), s.path("b"));
    let o = preloaded(
        prog.to_str().unwrap(),
        &[("FSGUARD_ROOT", ws.to_str().unwrap())],
    )
    .args([&a, &b])
    .current_dir(&ws)
    .output()
    .unwrap();
    let err = stderr(&o);
    assert_eq!(code(&o), 0, "{err}");
    assert_eq!(
        std::fs::read_to_string(ws.join("data.txt")).unwrap(),
        "data\n"
    );
    assert!(!a.exists() && !b.exists());
    // The lines reach the stderr the program started with.
    assert!(
        err.contains(&format!(
            "[fsguard] blocked open write path={} rule=root",
            a.display()
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "[fsguard] blocked mkdir write path={} rule=root",
            b.display()
        )),
        "{err}"
    );
}

#[test]
fn lost_trace_lines_are_said_once_and_summarised() {
    let s = Scratch::new("lost");
    let ws = s.ws();
    let (a, b) = (s.path("a.txt"), s.path("b.txt"));
    let script = format!("echo > {}; echo > {}; true", a.display(), b.display());
    // The library alone: one warning on stderr, however many lines are lost.
    let o = preloaded(
        "sh",
        &[
            ("FSGUARD_ROOT", ws.to_str().unwrap()),
            ("FSGUARD_LOG", "/dev/full"),
        ],
    )
    .args(["-c", &script])
    .current_dir(&ws)
    .output()
    .unwrap();
    let err = stderr(&o);
    assert_eq!(
        err.matches("[fsguard] warning: trace lines cannot be written to /dev/full")
            .count(),
        1,
        "{err}"
    );
    assert!(!a.exists() && !b.exists());
    // A /proc file that opens for writing but refuses what is written.
    let o = preloaded(
        "sh",
        &[
            ("FSGUARD_ROOT", ws.to_str().unwrap()),
            ("FSGUARD_LOG", "/proc/self/clear_refs"),
        ],
    )
    .args(["-c", &script])
    .current_dir(&ws)
    .output()
    .unwrap();
    let err = stderr(&o);
    assert_eq!(
        err.matches("[fsguard] warning: trace lines cannot be written to /proc/self/clear_refs")
            .count(),
        1,
        "{err}"
    );
    // fsguard run says so in its summary.
    let o = run(
        &ws,
        &[
            "--root",
            ".",
            "--log",
            "/dev/full",
            "--",
            "sh",
            "-c",
            &script,
        ],
    );
    let err = stderr(&o);
    assert!(
        err.contains("fsguard: 2 accesses blocked; first: open write"),
        "{err}"
    );
    assert!(
        err.contains("fsguard: 2 trace lines could not be written (lost)"),
        "{err}"
    );
    // An audit run: the writes go ahead (outside the root, in the scratch
    // directory), the summary counts them and says lines were lost.
    let o = run(
        &ws,
        &[
            "--root",
            ".",
            "--audit",
            "--no-landlock",
            "--log",
            "/dev/full",
            "--",
            "sh",
            "-c",
            &script,
        ],
    );
    let err = stderr(&o);
    assert!(
        err.contains("fsguard: 2 accesses would have been blocked (audit)"),
        "{err}"
    );
    assert!(
        err.contains("fsguard: 2 trace lines could not be written (lost)"),
        "{err}"
    );
}
