//! Directories above the root (issue 31 item 1): a plain read-only open of
//! one gets a descriptor that only names it (`O_PATH`), so `fstat`,
//! `fchdir` and identity comparisons work, while nothing through it is
//! listed or read, and every path reached through it is checked on its own.

use super::*;

/// Each case prints `NAME RESULT`: `ok`, a number (an errno) or a value.
const ABOVE: &str = r#"
import ctypes, fcntl, os, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
def t(name, fn):
    try:
        r = fn()
        print(name, "ok" if r is None else r)
    except OSError as e:
        print(name, e.errno)
def c(name, r):
    print(name, "ok" if r >= 0 else ctypes.get_errno())

fd = os.open("..", os.O_RDONLY)
print("open_dotdot ok")
st = os.fstat(fd)
print("fstat_same", (st.st_dev, st.st_ino) == (os.stat("..").st_dev, os.stat("..").st_ino))
print("o_path", bool(fcntl.fcntl(fd, fcntl.F_GETFL) & 0o10000000))
print("cloexec_kept", fcntl.fcntl(fd, fcntl.F_GETFD) & fcntl.FD_CLOEXEC)
raw = libc.open(b"..", 0)
print("raw_inheritable", raw >= 0 and fcntl.fcntl(raw, fcntl.F_GETFD) & fcntl.FD_CLOEXEC)
t("listdir_fd", lambda: os.listdir(fd))
t("read_fd", lambda: os.read(fd, 1))
t("openat_file_above", lambda: os.open("top.txt", os.O_RDONLY, dir_fd=fd))
t("openat_outside", lambda: os.open("outside/secret.txt", os.O_RDONLY, dir_fd=fd))
t("openat_dot_dir", lambda: os.open(".", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd))
t("openat_inside", lambda: os.read(os.open("ws/in.txt", os.O_RDONLY, dir_fd=fd), 6))
t("proc_fd_dir", lambda: os.open("/proc/self/fd/%d" % fd, os.O_RDONLY | os.O_DIRECTORY))
t("proc_fd_file", lambda: os.open("/proc/self/fd/%d/top.txt" % fd, os.O_RDONLY))
again = os.open("/proc/self/fd/%d" % fd, os.O_RDONLY)
t("proc_fd_plain_listdir", lambda: os.listdir(again))
t("fstatat_same", lambda: os.stat("top.txt", dir_fd=fd).st_ino == os.stat("../top.txt").st_ino)
t("linkat_above", lambda: os.link("top.txt", "ws/hl", src_dir_fd=fd, dst_dir_fd=fd))
c("linkat_empty", libc.linkat(fd, b"", -100, b"hl2", 0x1000))
t("fchmod_fd", lambda: os.chmod(fd, 0o700))
t("listdir_dotdot", lambda: os.listdir(".."))
t("open_dotdot_directory", lambda: os.open("..", os.O_RDONLY | os.O_DIRECTORY))
c("syscall_open", libc.syscall(2, b"..", 0))
pid = os.fork()
if pid == 0:
    try:
        os.execve(fd, ["x"], {})
    except OSError as e:
        print("fexecve", e.errno, flush=True)
    os._exit(0)
os.waitpid(pid, 0)
child = subprocess.run([sys.executable, "-c", """
import os, sys
n = int(sys.argv[1])
for name, fn in [("child_listdir", lambda: os.listdir(n)),
                 ("child_proc_file", lambda: os.open("/proc/self/fd/%d/top.txt" % n, os.O_RDONLY)),
                 ("child_openat", lambda: os.open("top.txt", os.O_RDONLY, dir_fd=n))]:
    try:
        fn(); print(name, "ok")
    except OSError as e:
        print(name, e.errno)
""", str(raw)], pass_fds=[raw], capture_output=True, text=True)
sys.stdout.write(child.stdout)
sys.stderr.write(child.stderr)
os.fchdir(fd)
t("cwd_listdir", lambda: os.listdir("."))
t("cwd_open_above", lambda: os.open("top.txt", os.O_RDONLY))
t("cwd_open_inside", lambda: os.read(os.open("ws/in.txt", os.O_RDONLY), 6))
t("cwd_open_dot", lambda: os.listdir(os.open(".", os.O_RDONLY)))
"#;

fn results(out: &Out) -> std::collections::BTreeMap<String, String> {
    out.stdout
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn directories_above_the_root_are_named_not_read() {
    let l = Layout::new();
    let ws = l.ws();
    let before = snapshot(l.t());
    let out = run(
        guarded_cmd(python(), &[("FSGUARD_ROOT", ws.to_str().unwrap())])
            .args(["-c", ABOVE])
            .current_dir(&ws),
    );
    let r = results(&out);
    let want: &[(&str, &str)] = &[
        ("open_dotdot", "ok"),
        ("fstat_same", "True"),
        ("o_path", "True"),
        ("cloexec_kept", "1"),
        ("raw_inheritable", "0"),
        ("listdir_fd", "9"),
        ("read_fd", "9"),
        ("openat_file_above", "13"),
        ("openat_outside", "13"),
        ("openat_dot_dir", "13"),
        ("openat_inside", "b'inside'"),
        ("proc_fd_dir", "13"),
        ("proc_fd_file", "13"),
        ("proc_fd_plain_listdir", "9"),
        ("fstatat_same", "True"),
        ("linkat_above", "13"),
        ("linkat_empty", "13"),
        ("fchmod_fd", "13"),
        ("listdir_dotdot", "13"),
        ("open_dotdot_directory", "13"),
        ("syscall_open", "13"),
        ("fexecve", "13"),
        ("child_listdir", "9"),
        ("child_proc_file", "13"),
        ("child_openat", "13"),
        ("cwd_listdir", "13"),
        ("cwd_open_above", "13"),
        ("cwd_open_inside", "b'inside'"),
        ("cwd_open_dot", "9"),
    ];
    let mut bad = Vec::new();
    for (k, v) in want {
        if r.get(*k).map(String::as_str) != Some(*v) {
            bad.push(format!("{k}: want {v}, got {:?}", r.get(*k)));
        }
    }
    assert!(bad.is_empty(), "{}\n{}", bad.join("\n"), out.describe());
    // Every refusal has its line; the plain opens of `..` have none.
    let t = l.t().to_str().unwrap();
    let lines: Vec<String> = out
        .blocked()
        .iter()
        .map(|b| {
            let p = b.field("path").unwrap_or("");
            let p = p.strip_prefix(t).unwrap_or(p);
            format!("{} {} {}", b.call, b.access, p)
        })
        .collect();
    let expected = [
        "openat read /top.txt",
        "openat read /outside/secret.txt",
        "openat read ",
        "open read ",
        "open read /top.txt",
        "linkat write /top.txt",
        "linkat write ",
        "fchmod write ",
        "opendir read ",
        "open read ",
        "fexecve exec ",
    ];
    for e in expected {
        assert!(
            lines.iter().any(|l| l == e),
            "no line `{e}` in {lines:#?}\n{}",
            out.describe()
        );
    }
    assert_eq!(snapshot_diff(&before, &snapshot(l.t())), None);
}

/// The issue's reproducer, as a user runs it, and the private TMPDIR's
/// parent: no refusal, no summary.
#[test]
fn run_opens_the_roots_parent_and_tmpdirs_parent() {
    let l = Layout::new();
    let ws = l.ws();
    let out = run(bare_cmd(cli())
        .args(["run", "--root", ".", "--"])
        .arg(python())
        .args([
            "-c",
            "import os; os.open('..', os.O_RDONLY); \
             os.fstat(os.open(os.path.dirname(os.environ['TMPDIR'].rstrip('/')), os.O_RDONLY)); \
             os.fstat(os.open('/', os.O_RDONLY)); print('ok')",
        ])
        .current_dir(&ws));
    assert!(
        out.status.success() && out.stdout == "ok\n",
        "{}",
        out.describe()
    );
    assert!(!out.stderr.contains("blocked"), "{}", out.describe());
}
