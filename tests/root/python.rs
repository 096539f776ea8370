//! Python under a root: the stdlib imports.

use super::*;

fn py_stdlib(python: &Path, l: &Layout) -> Out {
    let ws = l.ws();
    run(
        guarded_cmd(python, &[("FSGUARD_ROOT", ws.to_str().unwrap())])
            .args(["-c", "import json, email, sqlite3; print('ok')"])
            .current_dir(&ws),
    )
}

#[test]
fn python_imports_stdlib_under_root_via_path() {
    let l = Layout::new();
    let before = snapshot(l.t());
    // `python3` as found on PATH (possibly a pyenv shim script)
    let out = py_stdlib(Path::new("python3"), &l);
    assert!(
        out.status.success() && out.stdout == "ok\n",
        "python3 -c 'import json, email, sqlite3' failed under the root\n{}",
        out.describe()
    );
    assert_no_blocked(&out);
    assert_eq!(snapshot_diff(&before, &snapshot(l.t())), None);
}

#[test]
fn python_imports_stdlib_under_root_real_interpreter() {
    let l = Layout::new();
    let out = py_stdlib(python(), &l);
    assert!(
        out.status.success() && out.stdout == "ok\n",
        "python -c 'import json, email, sqlite3' failed under the root\n{}",
        out.describe()
    );
    assert_no_blocked(&out);
}

/// Python code under the root: reads/writes inside work, outside refused.
#[test]
fn python_under_root() {
    let l = Layout::new();
    let ws = l.ws();
    let outside = l.t().join("outside");
    let code = r#"
import os, sys
out = sys.argv[1]
def t(name, fn):
    try:
        fn()
        print(name, "ok")
    except OSError as e:
        print(name, e.errno)
t("read_in", lambda: open("in.txt").read())
t("listdir_in", lambda: os.listdir("."))
t("write_in", lambda: open("new.txt", "w").write("x"))
t("read_out", lambda: open(os.path.join(out, "secret.txt")).read())
t("read_dotdot", lambda: open("../outside/secret.txt").read())
t("read_link", lambda: open("link_out").read())
t("write_out", lambda: open(os.path.join(out, "new.txt"), "w"))
t("listdir_out", lambda: os.listdir(out))
"#;
    let before_out = snapshot(&outside);
    let o = run(
        guarded_cmd(python(), &[("FSGUARD_ROOT", ws.to_str().unwrap())])
            .args(["-c", code])
            .arg(&outside)
            .current_dir(&ws),
    );
    let want = "read_in ok\nlistdir_in ok\nwrite_in ok\nread_out 13\nread_dotdot 13\nread_link 13\nwrite_out 13\nlistdir_out 13\n";
    assert_eq!(o.stdout, want, "\n{}", o.describe());
    let sec = outside.join("secret.txt");
    assert_traces(
        &o,
        &[
            Expect::new("open", "read", &sec, "root"),
            Expect::new("open", "read", &sec, "root"),
            Expect::new("open", "read", &sec, "root"),
            Expect::new("open", "write", outside.join("new.txt"), "root"),
            Expect::new("open|opendir|openat", "read", &outside, "root"),
        ],
    );
    assert_eq!(std::fs::read_to_string(ws.join("new.txt")).unwrap(), "x");
    assert_eq!(snapshot_diff(&before_out, &snapshot(&outside)), None);
}
