//! Names a rule should not spell out (issue 31 item 2, issue 35 item 3):
//! the files Python's `tempfile` makes (`NamedTemporaryFile`, `mkstemp`,
//! `mkdtemp`: random names, different every run) and the hashed entries of
//! an npm cache. The run's summary hints one glob per kind, once; `fsguard
//! suggest` writes the same globs, and the policy it writes lets the next
//! run, with new random names, go ahead with nothing blocked.

use super::*;

/// Makes three temporary files or directories of each kind in `$HOME`
/// (outside the root) and reads five entries of an npm cache there.
const TEMPS: &str = r#"
import os, pathlib, tempfile
home = os.environ["HOME"]
CACHED = [
    "index-v5/4f/4a/c432db8f0e1a2b3c4d5e6f708192a3b4",
    "index-v5/4f/9c/0e1a2b3c4d5e6f708192a3b4c432db8f",
    "index-v5/a0/11/8192a3b4c432db8f0e1a2b3c4d5e6f70",
    "content-v2/sha512/ab/cd/0123456789abcdef0123",
    "content-v2/sha512/ef/01/fedcba98765432100123",
]
made = []
def t(fn):
    try:
        made.append(fn())
    except OSError as e:
        made.append(e.errno)
for _ in range(3):
    t(lambda: tempfile.NamedTemporaryFile(dir=home, delete=False).name)
    t(lambda: tempfile.mkstemp(dir=home)[1])
    t(lambda: tempfile.mkdtemp(dir=home))
cache = pathlib.Path(home, ".npm/_cacache")
for p in CACHED:
    t(lambda: (cache / p).read_text())
print(" ".join(str(m) for m in made))
"#;

fn layout(tag: &str) -> (TempDir, PathBuf, PathBuf) {
    let td = TempDir::new(tag);
    let (home, ws) = (td.join("home"), td.join("ws"));
    mkdir(&ws);
    for (i, h) in [
        "4f/4a/c432db8f0e1a2b3c4d5e6f708192a3b4",
        "4f/9c/0e1a2b3c4d5e6f708192a3b4c432db8f",
        "a0/11/8192a3b4c432db8f0e1a2b3c4d5e6f70",
    ]
    .iter()
    .enumerate()
    {
        let f = home.join(".npm/_cacache/index-v5").join(h);
        mkdir(f.parent().unwrap());
        write_file(&f, &format!("{i}\n"), 0o644);
    }
    for h in ["ab/cd/0123456789abcdef0123", "ef/01/fedcba98765432100123"] {
        let f = home.join(".npm/_cacache/content-v2/sha512").join(h);
        mkdir(f.parent().unwrap());
        write_file(&f, "x\n", 0o644);
    }
    write_file(&ws.join("temps.py"), TEMPS, 0o644);
    (td, home, ws)
}

#[test]
fn random_names_and_a_cache_get_one_hint_each() {
    let (_td, home, ws) = layout("hint-random");
    let prog = s(&ws.join("temps.py"));
    let o =
        run(fsguard(&home, &["run", "--root", ".", "--", &s(python()), &prog]).current_dir(&ws));
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    // Every one refused: 9 makes, 5 reads.
    assert_eq!(o.stdout.trim(), ["13"; 14].join(" "), "{}", o.describe());
    let hints: Vec<&str> = o
        .stderr
        .lines()
        .filter(|l| l.starts_with("fsguard: to allow: "))
        .collect();
    assert_eq!(
        hints,
        [
            "fsguard: to allow: --allow-write '~/tmp*'  (config: [write] allow = [\"~/tmp*\"])",
            "fsguard: to allow: --allow-read '~/.npm/**'  (config: [read] allow = [\"~/.npm/**\"])",
        ],
        "{}",
        o.describe()
    );
    // The trace lines carry the same hints.
    for b in o.blocked() {
        let want = if b.access == "read" {
            "--allow-read '~/.npm/**'"
        } else {
            "--allow-write '~/tmp*'"
        };
        assert_eq!(b.field("hint"), Some(want), "{}", b.raw);
    }
    // Nothing was made.
    let names: Vec<_> = std::fs::read_dir(&home)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(names, [".npm"], "{}", o.describe());
}

#[test]
fn suggest_names_the_globs_and_the_next_run_goes_ahead() {
    let (td, home, ws) = layout("suggest-random");
    let prog = s(&ws.join("temps.py"));
    let log = td.join("audit.jsonl");
    let policy = td.join("proj.toml");
    let cmd = [s(python()), prog];
    let cmd: Vec<&str> = cmd.iter().map(String::as_str).collect();
    let o = audit(&home, &ws, &log, &["--no-landlock"], &cmd);
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    let text = suggest(&home, &ws, &["--root", ".", &s(&log)], &policy);
    for want in ["\"~/tmp*\"", "\"~/.npm/**\""] {
        assert!(text.contains(want), "no {want} in:\n{text}");
    }
    let rules: Vec<&str> = text
        .lines()
        .filter(|l| l.trim_start().starts_with("\"~/"))
        .collect();
    assert_eq!(rules.len(), 2, "one rule each:\n{text}");
    // The next run makes new random names: all allowed.
    let o = enforce(&home, &ws, &policy, &cmd);
    let made = o.stdout.split_whitespace();
    assert!(
        made.clone().count() == 14 && made.clone().all(|w| w != "13"),
        "{text}\n{}",
        o.describe()
    );
}
