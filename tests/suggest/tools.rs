//! make + cc and git round trips.

use super::*;

#[test]
fn make_and_cc_round_trip() {
    let td = TempDir::new("suggest-make");
    let (home, ws, sdk, prefix) = (
        td.join("home"),
        td.join("ws"),
        td.join("sdk"),
        td.join("prefix"),
    );
    mkdir(&home);
    mkdir(&ws);
    mkdir(&sdk.join("include/sdk"));
    write_file(
        &sdk.join("include/sdk.h"),
        "#include <sdk/a.h>\n#include <sdk/b.h>\n#include <sdk/c.h>\n",
        0o644,
    );
    for (n, v) in [("a", 1), ("b", 2), ("c", 3)] {
        write_file(
            &sdk.join(format!("include/sdk/{n}.h")),
            &format!("#define SDK_{} {v}\n", n.to_uppercase()),
            0o644,
        );
    }
    write_file(
        &ws.join("main.c"),
        "#include <stdio.h>\n#include <sdk.h>\nint main(void) { printf(\"%d\\n\", SDK_A + SDK_B + SDK_C); return 0; }\n",
        0o644,
    );
    write_file(
        &ws.join("Makefile"),
        &format!(
            "SDK = {}\nPREFIX = {}\nhello: main.c\n\tcc -I$(SDK)/include -o hello main.c\ninstall: hello\n\tmkdir -p $(PREFIX)/bin\n\tcp hello $(PREFIX)/bin/hello\nclean:\n\trm -f hello\n",
            s(&sdk),
            s(&prefix)
        ),
        0o644,
    );
    let reset = || {
        let _ = std::fs::remove_dir_all(&prefix);
        let _ = std::fs::remove_file(ws.join("hello"));
    };
    let log = td.join("audit.jsonl");
    let cmd = ["make", "install"];
    let o = audit(&home, &ws, &log, &["--no-landlock"], &cmd);
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    reset();
    let policy = td.join("proj.toml");
    let text = suggest(&home, &ws, &["--root", ".", &s(&log)], &policy);
    assert!(
        text.contains(&format!("\"{}/**\"", s(&sdk.join("include/sdk")))),
        "the three SDK headers are one rule:\n{text}"
    );
    assert!(!text.contains("a.h\""), "{text}");
    assert!(text.contains(&format!("\"{}\"", s(&prefix))), "{text}");
    enforce(&home, &ws, &policy, &cmd);
    let o = run(&mut bare_cmd(prefix.join("bin/hello")));
    assert_eq!(o.stdout, "6\n", "{}", o.describe());
}

#[test]
fn git_push_round_trip() {
    let td = TempDir::new("suggest-git");
    let home = td.join("home");
    mkdir(&home);
    let upstream = td.join("upstream.git");
    let ws = td.join("ws");
    let git = |dir: &Path, args: &[&str]| {
        let mut c = bare_cmd("git");
        c.args(args)
            .current_dir(dir)
            .env("HOME", &home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .env("GIT_AUTHOR_DATE", "2020-01-01T00:00:00Z")
            .env("GIT_COMMITTER_DATE", "2020-01-01T00:00:00Z");
        c
    };
    // The same two repositories, byte for byte, before each run.
    let tdp = td.path().to_path_buf();
    let setup = || {
        let _ = std::fs::remove_dir_all(&upstream);
        let _ = std::fs::remove_dir_all(&ws);
        mkdir(&upstream);
        let (up, wss) = (s(&upstream), s(&ws));
        for (dir, args) in [
            (&upstream, vec!["init", "-q", "--bare", "-b", "main"]),
            (&tdp, vec!["clone", "-q", &up, &wss]),
        ] {
            let o = run(&mut git(dir, &args));
            assert!(o.status.success(), "{}", o.describe());
        }
        write_file(&ws.join("a.txt"), "one\n", 0o644);
        for args in [
            vec!["add", "a.txt"],
            vec!["commit", "-q", "-m", "one"],
            vec!["push", "-q", "origin", "HEAD:main"],
        ] {
            let o = run(&mut git(&ws, &args));
            assert!(o.status.success(), "{}", o.describe());
        }
        write_file(&ws.join("a.txt"), "two\n", 0o644);
        write_file(&ws.join("b.txt"), "new\n", 0o644);
    };
    let script = "git add -A && git commit -q -m two && git push -q origin HEAD:main";
    let cmd = ["sh", "-c", script];
    let with_env = |c: &mut Command| {
        c.env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .env("GIT_AUTHOR_DATE", "2020-01-01T00:00:00Z")
            .env("GIT_COMMITTER_DATE", "2020-01-01T00:00:00Z");
    };
    setup();
    let log = td.join("audit.jsonl");
    let mut a = fsguard(
        &home,
        &[
            "run",
            "--audit",
            "--no-landlock",
            "--root",
            ".",
            "--log-format",
            "json",
            "--log",
            &s(&log),
            "--",
        ],
    );
    a.args(cmd).current_dir(&ws);
    with_env(&mut a);
    let o = run(&mut a);
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    let policy = td.join("proj.toml");
    let text = suggest(&home, &ws, &["--root", ".", &s(&log)], &policy);
    assert!(text.contains(&s(&upstream)), "{text}");
    setup();
    let mut e = fsguard(&home, &["run", "--config", &s(&policy), "--"]);
    e.args(cmd).current_dir(&ws);
    with_env(&mut e);
    let o = run(&mut e);
    assert_no_blocked(&o);
    assert!(!o.stderr.contains("blocked"), "{text}\n{}", o.describe());
    assert_eq!(o.code(), Some(0), "{text}\n{}", o.describe());
    let log = run(&mut git(&upstream, &["log", "--format=%s", "main"]));
    assert_eq!(log.stdout, "two\none\n", "{}", log.describe());
}
