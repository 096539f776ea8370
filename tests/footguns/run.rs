//! Items 4-8: private tmpdir, denials reach the user, static programs, everyday tools, install.

use super::*;

#[test]
fn item4_private_tmpdir_is_outside_the_workspace() {
    let td = TempDir::new("f4");
    let ws = td.join("ws");
    mkdir(&ws);
    for flag in ["--root", "--readonly="] {
        let mut c = if flag == "--root" {
            fsguard(&["run", "--root", s(&ws), "--"])
        } else {
            fsguard(&["run", &format!("--readonly={}", ws.display()), "--"])
        };
        let o = run(c
            .args([
                "sh",
                "-c",
                "echo \"$TMPDIR\"; echo x > \"$TMPDIR/f\" && cat \"$TMPDIR/f\"; ls -A",
            ])
            .current_dir(&ws));
        assert_eq!(o.code(), Some(0), "{flag}\n{}", o.describe());
        let mut lines = o.stdout.lines();
        let tmp = PathBuf::from(lines.next().unwrap_or(""));
        assert!(tmp.is_absolute(), "{flag}\n{}", o.describe());
        assert!(
            !tmp.starts_with(&ws),
            "{flag}: TMPDIR {} is inside the workspace\n{}",
            tmp.display(),
            o.describe()
        );
        assert_eq!(lines.next(), Some("x"), "{flag}\n{}", o.describe());
        assert_eq!(
            lines.next(),
            None,
            "{flag}: the workspace is not empty\n{}",
            o.describe()
        );
        assert!(!tmp.exists(), "{flag}: TMPDIR left behind");
        assert_eq!(std::fs::read_dir(&ws).unwrap().count(), 0);
    }
}

// ---------------------------------------------------------------------------
// 6. Denials cannot be hidden from the user.

#[test]
fn item6_denials_reach_the_user_whatever_the_command_does_with_stderr() {
    let td = TempDir::new("f6");
    let ws = td.join("ws");
    mkdir(&ws);
    write_file(&td.join("outside"), "secret\n", 0o644);
    let script =
        "cat /etc/shadow 2>/dev/null; cat ../outside 2>/dev/null; exec 2>&-; cat ../outside; true";
    let o = run(fsguard(&["run", "--root", s(&ws), "--", "sh", "-c", script]).current_dir(&ws));
    assert_eq!(o.code(), Some(0), "\n{}", o.describe());
    assert_eq!(o.stdout, "", "\n{}", o.describe());
    assert_traces(
        &o,
        &[
            Expect::new("open", "read", "/etc/shadow", "root"),
            Expect::new("open", "read", td.join("outside"), "root"),
            Expect::new("open", "read", td.join("outside"), "root"),
        ],
    );
    // The summary names every distinct event, not only the first, and each
    // once (issue 29 item 9: the first used to be named twice, on the count
    // line and again in the list).
    assert!(
        o.stderr
            .contains("fsguard: 3 accesses blocked; first: open read /etc/shadow")
            && !o.stderr.contains("fsguard:   open read /etc/shadow")
            && o.stderr.contains(&format!(
                "fsguard:   open read {} (x2)",
                td.join("outside").display()
            )),
        "\n{}",
        o.describe()
    );
    // With --log FILE the trace goes to the file, and the summary stays.
    let log = td.join("trace.log");
    let o = run(fsguard(&[
        "run",
        "--root",
        s(&ws),
        "--log",
        s(&log),
        "--",
        "sh",
        "-c",
        "cat ../outside 2>/dev/null; true",
    ])
    .current_dir(&ws));
    assert!(o.blocked().is_empty(), "\n{}", o.describe());
    assert!(
        o.stderr
            .contains("fsguard: 1 access blocked; first: open read"),
        "\n{}",
        o.describe()
    );
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(traces(&text, "blocked").len(), 1, "{text}");
}

// ---------------------------------------------------------------------------
// 8. Landlock by default: static programs are confined too.

#[test]
fn item8_static_program_confined_by_default() {
    if !landlock_or_skip("item8_static_program_confined_by_default") {
        return;
    }
    let td = TempDir::new("f8");
    let ws = td.join("ws");
    mkdir(&ws);
    let w = c_program("static_writer", &["-static"]);
    let outside = td.join("outside");
    let o = run(fsguard(&["run", "--root", s(&ws), "--", s(&w), s(&outside)]).current_dir(&ws));
    assert_eq!(o.code(), Some(3), "\n{}", o.describe());
    assert!(!outside.exists(), "a static program wrote outside the root");
    let o = run(fsguard(&["run", "--root", s(&ws), "--", s(&w), "inside"]).current_dir(&ws));
    assert_eq!(o.code(), Some(0), "\n{}", o.describe());
    assert!(ws.join("inside").exists());
    // --no-landlock opts out (and says the program is unguarded).
    let o = run(fsguard(&[
        "run",
        "--no-landlock",
        "--root",
        s(&ws),
        "--",
        s(&w),
        s(&outside),
    ])
    .current_dir(&ws));
    assert_eq!(o.code(), Some(0), "\n{}", o.describe());
    assert!(outside.exists());
    // What works today keeps working under the default ruleset.
    let home = td.join("home");
    mkdir(&home);
    let o = run(fsguard(&[
        "run",
        "--root",
        s(&ws),
        "--",
        "sh",
        "-c",
        "python3 -c 'import json, ssl, sqlite3; print(1)' && \
         printf 'all:\\n\\tcc -o hello hello.c\\n' > Makefile && \
         printf 'int main(void){return 0;}\\n' > hello.c && make -s && ./hello && \
         git init -q r && git -C r status --short && id -un >/dev/null && \
         cat /dev/null && head -c1 /dev/urandom >/dev/null && echo ok",
    ])
    .env("HOME", &home)
    .current_dir(&ws));
    assert!(o.stdout.ends_with("ok\n"), "\n{}", o.describe());
}

// ---------------------------------------------------------------------------
// 9 (audit). An audit run still cannot write outside the root.

#[test]
fn item5_everyday_tools_under_a_plain_root() {
    let td = TempDir::new("f5");
    let ws = td.join("ws");
    let home = td.join("home");
    mkdir(&ws);
    mkdir(&home.join(".config/pip"));
    write_file(
        &home.join(".gitconfig"),
        "[user]\n\tname = Fs Guard\n\temail = fs@example.org\n",
        0o644,
    );
    write_file(
        &home.join(".config/pip/pip.conf"),
        "[global]\ntimeout = 30\n",
        0o644,
    );
    write_file(
        &home.join(".git-credentials"),
        "https://u:tok@example.org\n",
        0o600,
    );
    write_file(&ws.join("x"), "hi\n", 0o644);
    let script = "git init -q r && git -C r status --short && git -C r config user.name && \
        python3 -m pip config list && \
        curl -s file://$PWD/x && \
        printf 'all:\\n\\tcc -o hello hello.c\\n' > Makefile && \
        printf 'int main(void){return 0;}\\n' > hello.c && make -s && ./hello && echo ok; \
        cat ~/.git-credentials || echo secret-denied";
    let o = run(fsguard(&["run", "--root", ".", "--", "sh", "-c", script])
        .env("HOME", &home)
        .current_dir(&ws));
    assert!(o.stdout.contains("Fs Guard\n"), "git\n{}", o.describe());
    assert!(
        o.stdout.contains("global.timeout='30'"),
        "pip\n{}",
        o.describe()
    );
    assert!(
        o.stdout.contains("hi\nok\n"),
        "curl, make, cc\n{}",
        o.describe()
    );
    assert!(
        o.stdout.ends_with("secret-denied\n"),
        "secrets stay denied\n{}",
        o.describe()
    );
    assert!(!o.stdout.contains("tok@"), "\n{}", o.describe());
}

// ---------------------------------------------------------------------------
// 7. Installed, the CLI finds its library from anywhere; lib-path is absolute.

#[test]
fn item7_install_and_lib_path() {
    let td = TempDir::new("f7");
    let prefix = td.join("prefix");
    let target = cli().parent().unwrap().parent().unwrap();
    let o = run(bare_cmd(repo().join("scripts/install.sh"))
        .arg(&prefix)
        .env("FSGUARD_NO_BUILD", "1")
        .env("CARGO_TARGET_DIR", target));
    assert_eq!(o.code(), Some(0), "\n{}", o.describe());
    let other = td.join("elsewhere");
    mkdir(&other);
    let inst = prefix.join("bin/fsguard");
    let o = run(bare_cmd(&inst).arg("lib-path").current_dir(&other));
    assert_eq!(o.code(), Some(0), "\n{}", o.describe());
    assert_eq!(
        o.stdout.trim(),
        s(&prefix.join("lib/libfsguard.so")),
        "\n{}",
        o.describe()
    );
    assert!(Path::new(o.stdout.trim()).is_absolute());
    let marker = other.join("m");
    let o = run(bare_cmd(&inst)
        .args(["run", "--readonly", "--", "sh", "-c", "echo > m"])
        .current_dir(&other));
    assert_ne!(o.code(), Some(0), "\n{}", o.describe());
    assert!(!marker.exists());
    assert_traces(&o, &[Expect::new("open", "write", &marker, "readonly")]);
}

/// `install.sh` installs copies without debug information (the release
/// build keeps line tables), and they work; and the manual page.
#[test]
fn install_strips_debug_information() {
    let td = TempDir::new("f7-strip");
    let prefix = td.join("prefix");
    let target = cli().parent().unwrap().parent().unwrap();
    let o = run(bare_cmd(repo().join("scripts/install.sh"))
        .arg(&prefix)
        .env("FSGUARD_NO_BUILD", "1")
        .env("CARGO_TARGET_DIR", target));
    assert_eq!(o.code(), Some(0), "\n{}", o.describe());
    // The ELF section headers, as binutils (which install.sh's strip is
    // part of) lists them.
    let debug = |p: &Path| {
        let o = run(bare_cmd("readelf").args(["-S", "-W"]).arg(p));
        assert_eq!(o.code(), Some(0), "{}", o.describe());
        // (`.debug_gdb_scripts` is loaded with the program: strip keeps it.)
        let n = o
            .stdout
            .lines()
            .filter(|l| l.contains(" .debug_") && !l.contains(".debug_gdb_scripts"))
            .count();
        (n, std::fs::metadata(p).unwrap().len())
    };
    for (built, installed) in [
        (cli().to_path_buf(), prefix.join("bin/fsguard")),
        (lib().to_path_buf(), prefix.join("lib/libfsguard.so")),
    ] {
        let (n, size) = debug(&installed);
        assert_eq!(n, 0, "{} keeps debug sections", installed.display());
        let (m, built_size) = debug(&built);
        assert!(
            m > 0 && size < built_size,
            "{}: {m} {size} {built_size}",
            built.display()
        );
    }
    // The manual page, made from the CLI's own model, renders.
    let page = prefix.join("share/man/man1/fsguard.1");
    let o = run(bare_cmd("man")
        .arg("-l")
        .arg(&page)
        .env("MANPAGER", "cat")
        .env("MANWIDTH", "100"));
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    for want in [
        "FSGUARD RUN",
        "--allow-write <P>",
        "--fail-on-block",
        "FSGUARD SUGGEST",
    ] {
        assert!(
            o.stdout.contains(want),
            "{want:?} missing\n{}",
            o.describe()
        );
    }
    assert!(!o.stderr.contains("warning"), "{}", o.describe());
    let other = td.join("elsewhere");
    mkdir(&other);
    let marker = other.join("m");
    let o = run(bare_cmd(prefix.join("bin/fsguard"))
        .args(["run", "--readonly", "--", "sh", "-c", "echo > m"])
        .current_dir(&other));
    assert!(!marker.exists(), "{}", o.describe());
    assert_traces(&o, &[Expect::new("open", "write", &marker, "readonly")]);
}
