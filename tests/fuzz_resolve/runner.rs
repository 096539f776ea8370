//! The long-lived C runners that take the cases one by one.

use super::*;

// ---------------------------------------------------------------------------
// Runners
// ---------------------------------------------------------------------------

pub(crate) struct Runner {
    pub(crate) child: Child,
    pub(crate) stdin: ChildStdin,
    pub(crate) stdout: BufReader<ChildStdout>,
    pub(crate) stderr: Receiver<String>,
}

impl Runner {
    pub(crate) fn start(prog: &Path, guarded: bool, s: &Path) -> Runner {
        let root = s.join(ROOT);
        let mut cmd = if guarded {
            guarded_cmd(prog, &[("FSGUARD_ROOT", root.to_str().unwrap())])
        } else {
            bare_cmd(prog)
        };
        cmd.arg(if guarded { "guarded" } else { "bare" })
            .env("PATH", "/usr/bin:/bin")
            .current_dir(s)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn fuzz runner");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let se = child.stderr.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for l in BufReader::new(se).lines() {
                let Ok(l) = l else { break };
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        let mut r = Runner {
            child,
            stdin,
            stdout,
            stderr: rx,
        };
        // Wait until it runs (the library loads the policy, which needs the
        // root, before main): the tree is rebuilt right after.
        let (reply, _) = r.run(u64::MAX, &format!("{} {} - - nop", u64::MAX, s.display()));
        assert!(reply.contains("errno=38"), "runner not ready: {reply}");
        r
    }

    /// Sends one case line; its answer and the stderr lines of the call
    /// (after the dirfd opens).
    pub(crate) fn run(&mut self, id: u64, line: &str) -> (String, Vec<String>) {
        let mut reply = String::new();
        let sent = writeln!(self.stdin, "{line}").and_then(|_| self.stdin.flush());
        if sent.is_ok() {
            let _ = self.stdout.read_line(&mut reply);
        }
        if reply.is_empty() {
            let status = self.child.wait();
            std::thread::sleep(Duration::from_millis(100));
            panic!(
                "fuzz runner died on case {id} ({status:?}): {line}\nstderr:\n{}",
                self.stderr.try_iter().collect::<Vec<_>>().join("\n")
            );
        }
        let end = format!("@@end {id}");
        let mut err = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.stderr.recv_timeout(left) {
                Ok(l) if l == end => break,
                Ok(l) if l.starts_with("@@case ") => {}
                Ok(l) if l.starts_with("@@call ") => err.clear(),
                Ok(l) => err.push(l),
                Err(_) => break,
            }
        }
        (reply.trim_end().to_string(), err)
    }
}

impl Drop for Runner {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
