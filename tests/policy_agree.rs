//! Property: `fsguard explain` and the library agree. Random policies from a
//! small grammar, random paths in a tree with files, directories and
//! symlinks; each path is explained by the CLI and used under the library
//! by a C program, and the verdicts must match. Every access kind and both
//! ways of treating a final symlink: `open` for reading and for writing
//! (followed), `lchown` (a write of the link itself: `explain --no-follow`)
//! and `execv` (exec).

mod common;
mod policy_support;
use policy_support::*;

use std::fmt::Write as _;
use std::path::Path;

/// For each pair of arguments: `r PATH` opens O_RDONLY, `w PATH`
/// O_WRONLY|O_CREAT, `l PATH` is `lchown(PATH, -1, -1)` (changes nothing),
/// `x PATH` execs PATH in a child; prints `allow`, `deny` (EACCES) or
/// `err N` per pair.
const OPENER: &str = r#"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
static int verdict(int r) {
    if (r >= 0) puts("allow");
    else if (errno == EACCES) puts("deny");
    else printf("err %d\n", errno);
    return fflush(stdout);
}
int main(int argc, char **argv) {
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *p = argv[i + 1];
        int fd = -1;
        switch (argv[i][0]) {
        case 'w': fd = open(p, O_WRONLY | O_CREAT, 0755); break;
        case 'r': fd = open(p, O_RDONLY); break;
        case 'l': verdict(lchown(p, (uid_t)-1, (gid_t)-1)); continue;
        case 'x': {
            pid_t pid = fork();
            if (pid == 0) { execl(p, p, (char *)0); _exit(errno); }
            int st = 0;
            waitpid(pid, &st, 0);
            int code = WIFEXITED(st) ? WEXITSTATUS(st) : 255;
            errno = code;
            verdict(code == 0 ? 0 : -1);
            continue;
        }
        }
        verdict(fd);
        if (fd >= 0) close(fd);
    }
    return 0;
}
"#;

/// xorshift64*: deterministic, no crate needed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, v: &[&'a str]) -> &'a str {
        v[self.below(v.len())]
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

const FILES: &[&str] = &[
    "a.txt",
    "d0/a.txt",
    "d0/b.pem",
    "d0/.env",
    "d0/.env.example",
    "d1/c.key",
    "d1/data",
    "d1/d2/a.txt",
    "d1/d2/.env.local",
    "d1/d2/x.pem",
    "d10/data",
    "home/.ssh/id_ed25519",
    "home/notes",
];

/// Paths probed, relative to the tree: files, dirs, symlinks, `..`, new names.
const PATHS: &[&str] = &[
    "a.txt",
    "d0/a.txt",
    "d0/b.pem",
    "d0/.env",
    "d0/.env.example",
    "d1/c.key",
    "d1/data",
    "d1/d2/a.txt",
    "d1/d2/.env.local",
    "d1/d2/x.pem",
    "d10/data",
    "home/.ssh/id_ed25519",
    "home/notes",
    "ln_d1/data",
    "ln_d1/d2/x.pem",
    "ln_pem",
    "ln_out",
    "d0/../d1/data",
    "../outside/o.txt",
    "d1/new.txt",
    "d0/new.pem",
];

/// Patterns of the grammar: plain paths (relative, absolute-in-tree, `~`),
/// slash-less globs, `**`, alternations, classes, `?`.
const PATTERNS: &[&str] = &[
    "d1",
    "d1/d2",
    "d0/a.txt",
    "*.pem",
    "*.key",
    "**/.env*",
    "**/.env.example",
    "d?/data",
    "d1*",
    "{d0,d1}/a.txt",
    "**/[ab].*",
    "~/.ssh",
    "~/notes",
    "../outside",
    "@/d10",
];

fn list(rng: &mut Rng, tree: &Path) -> String {
    let n = rng.below(3);
    let mut v = Vec::new();
    for _ in 0..n {
        let p = rng.pick(PATTERNS);
        let p = match p.strip_prefix('@') {
            Some(rest) => format!("{}{rest}", tree.display()),
            None => p.to_string(),
        };
        v.push(format!("{p:?}"));
    }
    format!("[{}]", v.join(", "))
}

fn policy(rng: &mut Rng, tree: &Path) -> String {
    let mut s = String::new();
    match rng.below(3) {
        0 => {}
        1 => s.push_str("root = \".\"\n"),
        _ => s.push_str("root = \"d1\"\n"),
    }
    let _ = writeln!(s, "readonly = {}", rng.chance(40));
    let _ = writeln!(s, "secrets = {}", rng.chance(50));
    let _ = writeln!(s, "system = {}", rng.chance(50));
    for table in ["read", "write"] {
        let _ = writeln!(s, "[{table}]");
        for key in ["allow", "deny", "deny_always"] {
            let _ = writeln!(s, "{key} = {}", list(rng, tree));
        }
    }
    s
}

#[test]
fn explain_and_library_agree() {
    let seed: u64 = std::env::var("FSGUARD_AGREE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x005e_edf5_9a4d);
    let rounds: usize = std::env::var("FSGUARD_AGREE_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30);
    let mut rng = Rng(seed);
    let opener = c_program("agree_open", OPENER);
    let program = std::fs::read("/bin/true").unwrap();
    let top = TempDir::new("agree");
    let mut compared = 0;
    let mut denied = 0;
    let mut skipped = 0;
    for round in 0..rounds {
        // A fresh tree each round: writes of earlier rounds create files.
        let tree = top.join(format!("t{round}"));
        std::fs::create_dir(&tree).unwrap();
        // Each file a program, so an allowed exec runs (and exits 0).
        for f in FILES {
            let p = tree.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, &program).unwrap();
            std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o755))
                .unwrap();
        }
        std::os::unix::fs::symlink("d1", tree.join("ln_d1")).unwrap();
        std::os::unix::fs::symlink("d0/b.pem", tree.join("ln_pem")).unwrap();
        std::os::unix::fs::symlink("../outside/o.txt", tree.join("ln_out")).unwrap();
        // Outside every tree, next to them: `../outside`.
        std::fs::create_dir_all(top.join("outside")).unwrap();
        std::fs::write(top.join("outside/o.txt"), "x\n").unwrap();

        let text = policy(&mut rng, &tree);
        let cfg = tree.join("policy.toml");
        std::fs::write(&cfg, &text).unwrap();
        let home = tree.join("home");
        let n = 6 + rng.below(8);
        // (the C program's op, explain's access, whether explain follows)
        let ops: Vec<(&str, &str, bool, &str)> = (0..n)
            .map(|_| {
                let path = rng.pick(PATHS);
                let op = match rng.below(6) {
                    0 | 1 => ("r", "read", true),
                    2 | 3 => ("w", "write", true),
                    4 => ("l", "write", false),
                    _ => ("x", "exec", true),
                };
                (op, path)
            })
            .map(|((c, a, follow), p)| (c, a, follow, p))
            .collect();

        // The library's verdicts.
        let mut c = guarded(
            &opener,
            &[
                ("FSGUARD_CONFIG", cfg.to_str().unwrap()),
                ("HOME", home.to_str().unwrap()),
            ],
        );
        for (op, _, _, p) in &ops {
            c.arg(op).arg(p);
        }
        let o = run(c.current_dir(&tree));
        assert_eq!(
            o.code,
            Some(0),
            "seed {seed} round {round}\n{text}\n{}",
            o.show()
        );
        let lib_verdicts: Vec<&str> = o.stdout.lines().collect();
        assert_eq!(lib_verdicts.len(), ops.len(), "{}", o.show());
        // One trace line per denial, in order: path and rule to compare.
        let mut traces = lines(&o.stderr, "blocked").into_iter();

        // explain's, in the same order (a write may create the file the
        // library then sees; explain names missing paths the same way).
        for (i, &(_, a, follow, p)) in ops.iter().enumerate() {
            let mut e = fsguard(&["explain", "--config", cfg.to_str().unwrap()]);
            if !follow {
                e.arg("--no-follow");
            }
            e.args([a, p]);
            e.env("HOME", &home).current_dir(&tree);
            let eo = run(&mut e);
            let verdict = eo.stdout.split(' ').next().unwrap_or("");
            // explain exits 0 for allow, 1 for deny.
            let want_code = if verdict == "allow" { 0 } else { 1 };
            assert_eq!(eo.code, Some(want_code), "{}", eo.show());
            let lib = lib_verdicts[i];
            if lib.starts_with("err") {
                // The kernel fails the call anyway (a read of a missing file,
                // a write to a directory): its errno is the answer, whatever
                // the policy says, and no trace line is written.
                skipped += 1;
                continue;
            }
            assert_eq!(
                verdict, lib,
                "seed {seed} round {round}: {a} {p} (follow: {follow}): library says {lib}, explain says {}policy:\n{text}",
                eo.stdout
            );
            if lib == "deny" {
                // explain: `deny ACCESS PATH rule=RULE`; trace: `… path=PATH rule=RULE`.
                let line = traces.next().expect("a trace line per denial");
                let (_, want) = eo.stdout.trim_end().split_once(&format!(" {a} ")).unwrap();
                let want = format!("path={want}");
                assert!(line.ends_with(&want), "seed {seed} round {round}: {a} {p}: trace {line:?}, explain {:?}\npolicy:\n{text}", eo.stdout);
                denied += 1;
            }
            compared += 1;
        }
        assert_eq!(
            traces.next(),
            None,
            "a trace line without a denial: {}",
            o.show()
        );
    }
    eprintln!("seed {seed}: {rounds} policies, {compared} verdicts compared, {denied} denials, {skipped} kernel errors");
    assert!(skipped * 4 < compared, "too few verdicts compared");
    // The grammar must exercise both verdicts, or the property says little.
    assert!(compared >= rounds * 5, "compared {compared}");
    assert!(
        denied * 5 >= compared && denied * 5 <= compared * 4,
        "denied {denied} of {compared}"
    );
}
