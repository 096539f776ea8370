//! The policy language under the real library: deny-inside-allow, relative
//! and slash-less patterns, rename/link protection, audit mode, log files,
//! JSON traces, the errno choice, every CLI flag and its layering, and a
//! policy frozen at load.

#[path = "../common/mod.rs"]
mod common;
#[path = "../policy_support/mod.rs"]
mod policy_support;
use policy_support::*;

use std::path::Path;
use std::process::Command;

/// A Python probe: each argument is `r:PATH` (open for reading), `w:PATH`
/// (open for writing, creating), `mv:A:B` (rename) or `ln:A:B` (hard link);
/// prints one `OK` or errno name per argument.
const PROBE: &str = r#"
import errno, os, sys
for op in sys.argv[1:]:
    kind, _, rest = op.partition(":")
    try:
        if kind == "r":
            open(rest).close()
        elif kind == "w":
            open(rest, "a").close()
        elif kind == "mv":
            os.rename(*rest.split(":"))
        elif kind == "ln":
            os.link(*rest.split(":"))
        print("OK")
    except OSError as e:
        print(errno.errorcode[e.errno])
"#;

fn probe(mut c: Command, dir: &Path, ops: &[&str]) -> (Vec<String>, Out) {
    c.current_dir(dir).arg("-c").arg(PROBE).args(ops);
    let o = run(&mut c);
    let got: Vec<String> = o.stdout.lines().map(str::to_string).collect();
    assert_eq!(got.len(), ops.len(), "probe output: {}", o.show());
    (got, o)
}

/// Asserts each op's result; `want` pairs an op with `OK` or an errno name.
fn expect(c: Command, dir: &Path, want: &[(&str, &str)]) -> Out {
    let ops: Vec<&str> = want.iter().map(|(op, _)| *op).collect();
    let (got, o) = probe(c, dir, &ops);
    let mut bad = Vec::new();
    for ((op, w), g) in want.iter().zip(&got) {
        if w != g {
            bad.push(format!("{op}: want {w}, got {g}"));
        }
    }
    assert!(bad.is_empty(), "{}\n{}", bad.join("\n"), o.show());
    o
}

/// The workspace used by most tests:
/// ws/{a.txt, .env, .env.local, .env.example, k.pem, sub/.env, sub/deep/x.pem, sub/notes}
fn workspace(d: &TempDir) {
    for f in [
        "ws/a.txt",
        "ws/.env",
        "ws/.env.local",
        "ws/.env.example",
        "ws/k.pem",
        "ws/sub/.env",
        "ws/sub/.env.example",
        "ws/sub/deep/x.pem",
        "ws/sub/notes",
        "outside.txt",
        "outside.pem",
    ] {
        d.file(f, "content\n");
    }
}

// With a root, a config's relative patterns are anchored at the root.
const AGENT: &str = r#"
root = "ws"
[read]
deny = ["**/.env*"]
allow = ["**/.env.example", "sub"]
deny_always = ["*.pem"]
"#;

/// Parses JSON lines with Python's json module; returns them re-dumped with
/// sorted keys, one per line, for the test to inspect.
fn parse_json_lines(text: &str) -> Vec<serde_like::Obj> {
    let mut c = cmd("python3");
    c.args([
        "-c",
        "import json,sys\nfor l in sys.stdin.read().splitlines():\n  o=json.loads(l)\n  print('\\t'.join(f'{k}={o[k]}' for k in sorted(o)))",
    ]);
    c.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "json.loads failed on:\n{text}");
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(serde_like::Obj::parse)
        .collect()
}

mod serde_like {
    use std::collections::BTreeMap;
    /// One parsed JSON object, values as Python printed them.
    #[derive(Debug)]
    pub struct Obj(pub BTreeMap<String, String>);
    impl Obj {
        pub fn parse(l: &str) -> Obj {
            Obj(l
                .split('\t')
                .map(|kv| {
                    let (k, v) = kv.split_once('=').unwrap();
                    (k.to_string(), v.to_string())
                })
                .collect())
        }
        pub fn get(&self, k: &str) -> &str {
            self.0.get(k).map(String::as_str).unwrap_or("<missing>")
        }
    }
}

mod flags;
mod logging;
mod rules;
