//! Other processes are doors too (issue 27 item 4, "ptrace"; issue 36,
//! "other processes' memory"): a guarded program reads a process of the
//! same user out of its memory (`process_vm_readv`, `ptrace` + PEEKDATA),
//! writes into it (`process_vm_writev`), takes its descriptors
//! (`pidfd_getfd`) or compares its kernel objects (`kcmp`). Each route is
//! refused, through libc and `syscall()`, for a process outside the
//! guarded tree, bare and under `fsguard run` (with and without Landlock);
//! the `fsguard run` supervisor is out of reach, and not dumpable; a
//! program's own children stay reachable.

#![cfg(target_os = "linux")]

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use common::*;

fn processes() -> PathBuf {
    c_program("processes", &[])
}

/// How the attacker runs.
#[derive(Clone, Copy, Debug, PartialEq)]
enum How {
    /// `LD_PRELOAD` with `FSGUARD_ROOT`.
    Bare,
    /// `fsguard run --root`, Landlock on where the kernel has it.
    Run,
    /// `fsguard run --no-landlock --root`: the library alone.
    RunNoLandlock,
}

const HOWS: [How; 3] = [How::Bare, How::Run, How::RunNoLandlock];

/// `prog args…` guarded the way `how` says, confined to `ws`.
fn guarded(how: How, ws: &Path, prog: &Path, args: &[&str]) -> Command {
    let ws = ws.to_str().unwrap();
    match how {
        How::Bare => {
            let mut c = guarded_cmd(prog, &[("FSGUARD_ROOT", ws)]);
            c.args(args);
            c
        }
        How::Run | How::RunNoLandlock => {
            let mut c = bare_cmd(cli());
            c.arg("run");
            if how == How::RunNoLandlock {
                c.arg("--no-landlock");
            }
            c.args(["--root", ws, "--"]).arg(prog).args(args);
            c
        }
    }
}

/// A workspace `ws` (the root) and `out` beside it holding `secret`.
fn layout(tag: &str) -> (TempDir, PathBuf, PathBuf) {
    let td = TempDir::new(tag);
    let ws = td.join("ws");
    let out = td.join("out");
    mkdir(&ws);
    mkdir(&out);
    write_file(&out.join("secret"), "SECRET-OF-THE-VICTIM\n", 0o644);
    (td, ws, out)
}

/// A process outside any guarded tree (the test's own child, bare) with a
/// marker in its memory and a secret file open; killed when dropped.
struct Victim {
    child: Child,
    pid: i32,
    addr: String,
    fd: String,
    len: usize,
    marker: String,
}

impl Victim {
    fn start(secret: &Path) -> Victim {
        let mut child = spawn_retrying(
            bare_cmd(processes())
                .arg("victim")
                .arg(secret)
                .stdin(Stdio::null())
                .stdout(Stdio::piped()),
        )
        .expect("start the victim");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(f.len(), 5, "victim said {line:?}");
        let pid: i32 = f[1].parse().unwrap();
        Victim {
            pid,
            addr: f[2].to_string(),
            fd: f[3].to_string(),
            len: f[4].parse().unwrap(),
            marker: format!("MARKER-{pid}-SECRET"),
            child,
        }
    }

    fn args(&self) -> Vec<String> {
        vec![
            "attack".into(),
            self.pid.to_string(),
            self.addr.clone(),
            self.fd.clone(),
            self.len.to_string(),
        ]
    }

    /// The marker as it is now in the victim's memory (read by the test,
    /// its parent, unguarded).
    fn memory(&self) -> String {
        let mut buf = vec![0u8; self.len];
        let local = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: buf.len(),
        };
        let addr = u64::from_str_radix(self.addr.trim_start_matches("0x"), 16).unwrap();
        let remote = libc::iovec {
            iov_base: addr as *mut libc::c_void,
            iov_len: buf.len(),
        };
        // SAFETY: reads our child's memory into our buffer.
        let n = unsafe { libc::process_vm_readv(self.pid, &local, 1, &remote, 1, 0) };
        assert_eq!(n, buf.len() as isize, "cannot read the victim's memory");
        String::from_utf8_lossy(&buf).into_owned()
    }
}

impl Drop for Victim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The routes `processes attack` tries, with the call and access each is
/// traced as.
const ROUTES: [(&str, &str, &str); 10] = [
    ("readv", "process_vm_readv", "read"),
    ("sys_readv", "process_vm_readv", "read"),
    ("writev", "process_vm_writev", "write"),
    ("sys_writev", "process_vm_writev", "write"),
    ("attach", "ptrace", "write"),
    ("sys_attach", "ptrace", "write"),
    ("seize", "ptrace", "write"),
    ("getfd", "pidfd_getfd", "read"),
    ("sys_getfd", "pidfd_getfd", "read"),
    ("kcmp", "kcmp", "read"),
];

/// The line of `route` in the attacker's output.
fn route_line<'a>(o: &'a Out, route: &str) -> Option<&'a str> {
    o.stdout
        .lines()
        .find(|l| l.split_whitespace().next() == Some(route))
}

/// Why `o` is not every route refused against process `pid` whose
/// executable is shown as one of `exes`, if it is not.
fn all_refused(o: &Out, pid: i32, exes: &[String], leak: &[&str]) -> Vec<String> {
    let mut why = Vec::new();
    for (route, _, _) in ROUTES {
        if route_line(o, route) != Some(&format!("{route} -1 13")) {
            why.push(format!("{route}: expected `{route} -1 13`"));
        }
    }
    for l in leak {
        if o.stdout.contains(l) {
            why.push(format!("{l:?} leaked"));
        }
    }
    let b = o.blocked();
    if b.len() != ROUTES.len() {
        why.push(format!(
            "{} blocked lines, expected {}",
            b.len(),
            ROUTES.len()
        ));
    }
    for (t, (route, call, access)) in b.iter().zip(ROUTES) {
        let ok = t.call == call
            && t.access == access
            && t.field("path") == Some(&format!("/proc/{pid}"))
            && t.field("dest").is_some_and(|d| exes.iter().any(|e| e == d))
            && t.field("rule") == Some("process");
        if !ok {
            why.push(format!("{route}: unexpected trace line {}", t.raw));
        }
    }
    why
}

#[test]
fn item4_issue36_a_process_outside_the_tree_is_refused_by_every_route() {
    let (_td, ws, out) = layout("procvictim");
    let secret = out.join("secret");
    // The door is real: bare, every route reaches the victim.
    {
        let v = Victim::start(&secret);
        let args = v.args();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = run(bare_cmd(processes()).args(&args));
        for want in [
            format!("readv {} 0 {}", v.len, v.marker),
            format!("sys_readv {} 0 {}", v.len, v.marker),
            "attach 0 0".into(),
            "getfd".into(),
        ] {
            assert!(
                o.stdout.lines().any(|l| l.starts_with(&want)),
                "bare: {want}\n{}",
                o.describe()
            );
        }
        assert!(
            o.stdout.contains("SECRET-OF-THE-VICTIM"),
            "{}",
            o.describe()
        );
        assert!(v.memory().starts_with("XXXX"), "{}", o.describe());
    }
    let mut f = Failures::default();
    for how in HOWS {
        f.case();
        let v = Victim::start(&secret);
        let args = v.args();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = run(&mut guarded(how, &ws, &processes(), &args));
        // Under Landlock the executable of a process outside the domain
        // cannot be read: its name is shown instead.
        let exes = [processes().display().to_string(), "[processes]".into()];
        let mut why = all_refused(&o, v.pid, &exes, &[&v.marker, "SECRET-OF-THE-VICTIM"]);
        if v.memory() != v.marker {
            why.push(format!("the victim's memory changed: {:?}", v.memory()));
        }
        if o.stderr.contains("to allow:") {
            why.push("a hint to allow what no rule allows".into());
        }
        if !why.is_empty() {
            f.fail(
                &format!("{how:?}"),
                format!("{}\n{}", why.join("\n"), o.describe()),
            );
        }
    }
    f.finish("outside process");
}

#[test]
fn item4_the_supervisor_is_out_of_reach() {
    let (_td, ws, _out) = layout("procsup");
    let mut f = Failures::default();
    for how in [How::Run, How::RunNoLandlock] {
        f.case();
        let o = run(&mut guarded(how, &ws, &processes(), &["parent"]));
        let b = o.blocked();
        // The supervisor's pid, as the first line names it.
        let pid = b
            .first()
            .and_then(|t| t.field("path"))
            .and_then(|p| p.strip_prefix("/proc/"))
            .and_then(|p| p.parse::<i32>().ok())
            .unwrap_or(0);
        // The supervisor is not dumpable: its executable cannot be read.
        let exes = [cli().display().to_string(), "[fsguard]".into()];
        let mut why = all_refused(&o, pid, &exes, &[]);
        if pid <= 1 {
            why.push("no supervisor pid in the trace lines".into());
        }
        if o.stderr.contains("to allow:") {
            why.push("a hint to allow what no rule allows".into());
        }
        if !why.is_empty() {
            f.fail(
                &format!("{how:?}"),
                format!("{}\n{}", why.join("\n"), o.describe()),
            );
        }
    }
    f.finish("supervisor");
}

/// `setpriv`, to run `fsguard run` as uid 65534.
fn setpriv() -> Option<&'static str> {
    let ok = Command::new("setpriv")
        .arg("--help")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    ok.then_some("setpriv")
}

#[test]
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn item4_the_supervisor_is_not_dumpable() {
    // Raw system call instructions, which no hook sees, from a command of
    // the same user: only the kernel stands in the way (EPERM, -1), as long
    // as the supervisor is not dumpable. A dumpable one answers EFAULT
    // (-14) for the bogus address, 0 for the attach and an fd.
    let Some(setpriv) = setpriv() else {
        eprintln!("skipped: no setpriv");
        return;
    };
    // SAFETY: no arguments.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: needs root to become uid 65534");
        return;
    }
    let (td, ws, _out) = layout("procdump");
    for d in [td.path(), &ws] {
        std::fs::set_permissions(d, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    }
    let mut f = Failures::default();
    for landlock in [false, true] {
        f.case();
        let mut c = bare_cmd(setpriv);
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(cli())
            .arg("run");
        if !landlock {
            c.arg("--no-landlock");
        }
        c.args(["--root", ws.to_str().unwrap(), "--"])
            .arg(processes())
            .arg("parent_raw");
        let o = run(&mut c);
        let want = ["raw_readv -1", "raw_attach -1", "raw_getfd -1"];
        let missing: Vec<&str> = want
            .iter()
            .filter(|w| !o.stdout.lines().any(|l| l == **w))
            .copied()
            .collect();
        if !missing.is_empty() || o.code() != Some(0) {
            f.fail(
                &format!("landlock={landlock}"),
                format!("expected {missing:?}\n{}", o.describe()),
            );
        }
    }
    f.finish("non-dumpable supervisor");
}

#[test]
fn item4_own_children_stay_reachable() {
    let (_td, ws, _out) = layout("procchild");
    let mut f = Failures::default();
    for how in HOWS {
        f.case();
        let o = run(&mut guarded(how, &ws, &processes(), &["own_child"]));
        let mut why = Vec::new();
        for (route, _, _) in ROUTES {
            let ok = route_line(&o, route).is_some_and(|l| {
                let mut w = l.split_whitespace().skip(1);
                w.next()
                    .and_then(|r| r.parse::<i64>().ok())
                    .is_some_and(|r| r >= 0)
                    && w.next() == Some("0")
            });
            if !ok {
                why.push(format!("{route}: expected success"));
            }
        }
        for peek in ["attach-peek XXXX", "readv ", "sys_readv "] {
            if !o.stdout.lines().any(|l| l.starts_with(peek)) {
                why.push(format!("no line starting {peek:?}"));
            }
        }
        if !o.stdout.contains("CHILD-MARKER-") {
            why.push("the child's marker was not read".into());
        }
        if !o.blocked().is_empty() {
            why.push("blocked lines".into());
        }
        if !why.is_empty() {
            f.fail(
                &format!("{how:?}"),
                format!("{}\n{}", why.join("\n"), o.describe()),
            );
        }
    }
    f.finish("own child");
}

#[test]
fn item4_strace_follows_its_own_children_under_the_guard() {
    let has_strace = Command::new("strace")
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !has_strace {
        eprintln!("skipped: no strace");
        return;
    }
    let (_td, ws, _out) = layout("procstrace");
    let log = ws.join("strace.log");
    let mut f = Failures::default();
    for how in HOWS {
        f.case();
        let _ = std::fs::remove_file(&log);
        let sh = Path::new("/bin/sh");
        let strace = Path::new("strace");
        let mut c = guarded(
            how,
            &ws,
            strace,
            &[
                "-f",
                "-o",
                log.to_str().unwrap(),
                sh.to_str().unwrap(),
                "-c",
                "echo hi; /bin/true",
            ],
        );
        let o = run(&mut c);
        let traced = std::fs::read_to_string(&log).unwrap_or_default();
        let ok = o.code() == Some(0)
            && o.stdout.contains("hi")
            // The exec family runs the program through the descriptor it
            // checked (docs/limits.md, "Exec runs the object checked").
            && traced.contains(", \"\", [\"/bin/true\"]")
            && !o
                .blocked()
                .iter()
                .any(|t| t.field("rule") == Some("process"));
        if !ok {
            f.fail(
                &format!("{how:?}"),
                format!("strace log:\n{traced}\n{}", o.describe()),
            );
        }
    }
    f.finish("strace");
}

#[test]
fn item4_siblings_are_inside_under_run_only() {
    // A victim started by the same shell as the attacker: a sibling. Under
    // `fsguard run` both descend from the supervisor (the guarded tree);
    // under LD_PRELOAD alone the tree is the attacker's own descendants.
    let (_td, ws, _out) = layout("procsibling");
    write_file(&ws.join("secret"), "SIBLING-SECRET\n", 0o644);
    // Inside the root, where the guarded shell may run it.
    let p = ws.join("processes");
    std::fs::copy(processes(), &p).unwrap();
    let script = format!(
        "{p} victim {ws}/secret > {ws}/v 2>/dev/null & \
         n=0; while ! [ -s {ws}/v ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n+1)); done; \
         read _ pid addr fd len < {ws}/v; \
         {p} attack $pid $addr $fd $len; kill $pid",
        p = p.display(),
        ws = ws.display()
    );
    let mut f = Failures::default();
    for how in HOWS {
        f.case();
        let _ = std::fs::remove_file(ws.join("v"));
        let o = run(&mut guarded(
            how,
            &ws,
            Path::new("/bin/sh"),
            &["-c", &script],
        ));
        let readv = route_line(&o, "readv").unwrap_or("");
        let ok = if how == How::Bare {
            readv == "readv -1 13"
                && o.blocked()
                    .iter()
                    .any(|t| t.field("rule") == Some("process"))
        } else {
            readv.contains("-SECRET")
                && o.stdout.contains("SIBLING-SECRET")
                && o.blocked().is_empty()
        };
        if !ok {
            f.fail(&format!("{how:?}"), o.describe());
        }
    }
    f.finish("sibling");
}

/// What `proc_files` tries on process `pid`'s `/proc` files, by path.
const PROC_FILES: &str = r#"
import sys
pid = sys.argv[1]
for name, mode in [("mem", "r+b"), ("mem", "rb"), ("environ", "rb"), ("task/" + pid + "/mem", "r+b")]:
    try:
        with open("/proc/" + pid + "/" + name, mode) as f:
            print(name, mode, "opened", f.read(64) if name == "environ" else "")
    except OSError as e:
        print(name, mode, "errno", e.errno)
with open("/proc/self/mem", "rb") as f:
    print("self opened")
"#;

/// Another process's memory and environment reached as files (issue 27,
/// "other processes' memory as paths"): `/proc/<pid>/mem` opened for
/// writing is code injection into it, for reading as process_vm_readv;
/// `/proc/<pid>/environ` holds its keys. Refused for a process outside the
/// guarded tree (`rule=process`), even where the policy lets `/proc` be
/// read (`read.allow = ["/proc"]`) or names no root at all (deny rules
/// only, or write rules only: the secrets preset's read rules make every
/// read checked); the program's own stay open to it.
#[test]
fn proc_memory_files_of_processes_outside_are_refused() {
    for how in HOWS {
        for policy in ["root", "deny_only", "writes_only"] {
            let (td, ws, out) = layout("proc-files");
            let victim = Victim::start(&out.join("secret"));
            let cfg = td.join("fsguard.toml");
            let text = match policy {
                "root" => format!(
                    "root = {:?}\n[read]\nallow = [\"/proc\"]\n",
                    ws.to_str().unwrap()
                ),
                "deny_only" => format!(
                    "[read]\ndeny = [{o:?}]\n[write]\ndeny = [{o:?}]\n",
                    o = out.to_str().unwrap()
                ),
                _ => format!("[write]\ndeny = [{:?}]\n", out.to_str().unwrap()),
            };
            std::fs::write(&cfg, text).unwrap();
            let pid = victim.pid.to_string();
            let mut c = match how {
                How::Bare => guarded_cmd(python(), &[("FSGUARD_CONFIG", cfg.to_str().unwrap())]),
                How::Run | How::RunNoLandlock => {
                    let mut c = bare_cmd(cli());
                    c.arg("run");
                    if how == How::RunNoLandlock {
                        c.arg("--no-landlock");
                    }
                    c.arg("--config").arg(&cfg).arg("--").arg(python());
                    c
                }
            };
            c.args(["-c", PROC_FILES, &pid]);
            let o = run(&mut c);
            let what = format!("{how:?} {policy}");
            let task = format!("task/{pid}/mem r+b errno 13");
            for want in [
                "mem r+b errno 13",
                "mem rb errno 13",
                "environ rb errno 13",
                &task,
                "self opened",
            ] {
                assert!(
                    o.stdout.contains(want),
                    "{what}: no {want:?}: {}",
                    o.describe()
                );
            }
            let refused: Vec<_> = o
                .blocked()
                .into_iter()
                .filter(|t| t.field("rule") == Some("process"))
                .collect();
            // Under a root, the writes lie outside it: the policy's own
            // refusal (rule=root) names them; the reads it lets through
            // (/proc is allowed) are refused as another process's.
            let by_process = if policy == "root" { 2 } else { 4 };
            assert_eq!(refused.len(), by_process, "{what}: {}", o.describe());
            if policy == "root" {
                for name in ["mem", &format!("task/{pid}/mem")] {
                    let path = format!("/proc/{pid}/{name}");
                    assert!(
                        o.blocked()
                            .iter()
                            .any(|t| t.field("path") == Some(path.as_str())
                                && t.access == "write"
                                && t.field("rule") == Some("root")),
                        "{what}: no rule=root refusal of {path}: {}",
                        o.describe()
                    );
                }
            }
            for t in &refused {
                assert_eq!(
                    t.field("path"),
                    Some(format!("/proc/{pid}").as_str()),
                    "{what}: {}",
                    t.raw
                );
                assert_eq!(t.call, "open", "{what}: {}", t.raw);
            }
            assert!(victim.memory().starts_with("MARKER-"), "{what}");
        }
    }
}
