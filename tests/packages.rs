//! Package managers under `fsguard run --root .` with no flag (issue 35):
//! npm, Go and pip install as they do bare, their caches in the private
//! TMPDIR (the summary names no cache file), and the registry configuration
//! a planted `~/.npmrc` or `pip.conf` holds reaches the tool without its
//! credentials: no byte of a token is readable anywhere the program can
//! read, and the original is refused with `rule=secrets`.
//!
//! Each test uses a temporary HOME: the real user's files are never read
//! or written. npm needs the registry (registry.npmjs.org), Go only a
//! local module proxy (`GOPROXY=file://`), pip a wheel made here. A test
//! whose tool is not installed, or (npm) whose registry is unreachable, is
//! skipped with a line on stderr, unless `NPM_TESTS_REQUIRED` or
//! `GO_TESTS_REQUIRED` is set, as CI (`.ci/run`) sets them.

// LD_PRELOAD and Landlock: Linux only.
#![cfg(target_os = "linux")]

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A program on PATH, or `None` (said on stderr) when it is missing and
/// `required` is not set.
fn tool(name: &str, required: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(name))
            .find(|g| g.is_file())
    });
    if found.is_none() {
        assert!(
            std::env::var_os(required).is_none(),
            "{name} is required here ({required} is set)"
        );
        eprintln!("{name} not installed: its test not run");
    }
    found
}

/// A command with a clean environment for package managers: the test
/// runner's own tool settings (and cargo's and rustup's, which point into
/// the real home) removed, HOME set.
fn tool_cmd<S: AsRef<std::ffi::OsStr>>(prog: S, home: &Path) -> Command {
    let mut c = bare_cmd(prog);
    for (k, _) in std::env::vars_os() {
        let n = k.to_string_lossy().to_ascii_lowercase();
        if n.starts_with("npm_config_")
            || n.starts_with("go")
            || n.starts_with("pip_")
            || n.starts_with("xdg_")
            || n.starts_with("virtual_env")
            || n.starts_with("rustup_")
            || n.starts_with("cargo")
        {
            c.env_remove(&k);
        }
    }
    c.env("HOME", home);
    c
}

/// `fsguard run --root WS -- PROG ARGS...` in WS, with `home` as HOME.
fn guarded(ws: &Path, home: &Path, prog: &Path, args: &[&str]) -> Command {
    let mut c = tool_cmd(cli(), home);
    c.args(["run", "--root", ws.to_str().unwrap(), "--"])
        .arg(prog)
        .args(args)
        .current_dir(ws);
    c
}

/// `write_file`, parents made.
fn put(p: &Path, text: &str) {
    mkdir(p.parent().unwrap());
    write_file(p, text, 0o600);
}

/// Every file below `dir`, relative, sorted (directories end in `/`).
fn tree(dir: &Path) -> Vec<String> {
    fn walk(base: &Path, d: &Path, out: &mut Vec<String>) {
        let mut es: Vec<_> = std::fs::read_dir(d).unwrap().flatten().collect();
        es.sort_by_key(|e| e.file_name());
        for e in es {
            let p = e.path();
            let rel = p.strip_prefix(base).unwrap().display().to_string();
            if e.file_type().unwrap().is_dir() {
                out.push(format!("{rel}/"));
                walk(base, &p, out);
            } else {
                out.push(rel);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out
}

/// A Python program that reads every file it can below its HOME, its
/// TMPDIR, the working directory and the paths given, and its environment,
/// and prints `FOUND <where>` for each place the secret `argv[1]` is in,
/// `REFUSED <path>` for each read refused, then `read N files`.
const READ_ALL: &str = r#"
import os, sys
secret = sys.argv[1].encode()
n = 0
def look(p):
    global n
    try:
        with open(p, "rb") as f:
            data = f.read()
    except PermissionError:
        print("REFUSED", p)
        return
    except OSError:
        return
    n += 1
    if secret in data:
        print("FOUND", p)
for k, v in os.environ.items():
    if secret in (k + "=" + v).encode():
        print("FOUND env", k)
places = [os.environ["HOME"], os.environ["TMPDIR"], os.getcwd()] + sys.argv[2:]
for top in places:
    if os.path.isfile(top):
        look(top)
        continue
    for d, dirs, files in os.walk(top):
        for f in files:
            look(os.path.join(d, f))
print("read", n, "files")
"#;

/// Runs [`READ_ALL`] under `fsguard run --root ws` and asserts that no
/// byte of `secret` is readable, and that each of `originals` was refused
/// with `rule=secrets`.
fn assert_secret_unreadable(ws: &Path, home: &Path, secret: &str, originals: &[&Path]) {
    let mut args = vec!["-c", READ_ALL, secret];
    let o: Vec<String> = originals.iter().map(|p| p.display().to_string()).collect();
    args.extend(o.iter().map(String::as_str));
    let out = run(&mut guarded(ws, home, python(), &args));
    assert_eq!(out.code(), Some(0), "{}", out.describe());
    assert!(!out.stdout.contains("FOUND"), "{}", out.describe());
    assert!(out.stdout.contains("read "), "{}", out.describe());
    for p in originals {
        assert!(
            out.stdout.contains(&format!("REFUSED {}", p.display())),
            "{}: {}",
            p.display(),
            out.describe()
        );
        let t = out
            .blocked()
            .into_iter()
            .find(|t| t.field("path") == p.to_str())
            .unwrap_or_else(|| panic!("{}: {}", p.display(), out.describe()));
        assert!(
            t.field("rule").unwrap_or("").starts_with("secrets:"),
            "{}",
            t.raw
        );
    }
}

/// The summary names no file inside a cache: nothing at all was blocked.
fn assert_quiet(out: &Out) {
    assert_no_blocked(out);
    for word in ["blocked", "to allow", "_cacache", "pkg/mod", ".npm/"] {
        assert!(!out.stderr.contains(word), "{word}: {}", out.describe());
    }
}

const NPM_TOKEN: &str = "npm_FSGUARDtestTOKEN0123456789";

#[test]
fn npm_install_under_root_matches_bare_and_never_reads_the_token() {
    let Some(npm) = tool("npm", "NPM_TESTS_REQUIRED") else {
        return;
    };
    let td = TempDir::new("npm");
    // The registry, reachable? (Bare, with a HOME of its own.)
    let probe_home = td.join("probe");
    mkdir(&probe_home);
    let probe = run(tool_cmd(&npm, &probe_home).args(["view", "is-number", "version"]));
    if probe.code() != Some(0) {
        assert!(
            std::env::var_os("NPM_TESTS_REQUIRED").is_none(),
            "the npm registry is required here: {}",
            probe.describe()
        );
        eprintln!("npm registry unreachable: npm test not run");
        return;
    }
    // Bare: a HOME whose .npmrc holds a setting only (save-exact shows in
    // package.json). Guarded: the same setting beside a token.
    let settings = "registry=https://registry.npmjs.org/\nsave-exact=true\n";
    let (bare_home, home) = (td.join("bare-home"), td.join("home"));
    put(&bare_home.join(".npmrc"), settings);
    let npmrc = home.join(".npmrc");
    put(
        &npmrc,
        &format!("{settings}//registry.npmjs.org/:_authToken={NPM_TOKEN}\n"),
    );
    let install = [
        "install",
        "--no-audit",
        "--no-fund",
        "is-number@7",
        "chalk@4",
    ];
    let mut trees = Vec::new();
    for (name, guard) in [("bare", false), ("guarded", true)] {
        let ws = td.join(name);
        mkdir(&ws);
        let h = if guard { &home } else { &bare_home };
        // (npm init, bare, writes its logs to its HOME: not the one
        // checked below.)
        let init = run(tool_cmd(&npm, &probe_home)
            .args(["init", "-y"])
            .current_dir(&ws));
        assert_eq!(init.code(), Some(0), "{}", init.describe());
        let out = if guard {
            run(&mut guarded(&ws, &home, &npm, &install))
        } else {
            run(tool_cmd(&npm, h).args(install).current_dir(&ws))
        };
        assert_eq!(out.code(), Some(0), "{name}: {}", out.describe());
        assert!(!out.stderr.contains("chown"), "{}", out.describe());
        if guard {
            assert_quiet(&out);
        }
        let pkg = std::fs::read_to_string(ws.join("package.json")).unwrap();
        assert!(
            pkg.contains("\"is-number\": \"7."),
            "{name}: save-exact:\n{pkg}"
        );
        trees.push(tree(&ws.join("node_modules")));
    }
    assert!(trees[0].iter().any(|f| f == "chalk/package.json"));
    assert!(trees[0].iter().any(|f| f == "has-flag/package.json"));
    assert_eq!(
        trees[0], trees[1],
        "the guarded node_modules equals the bare one"
    );
    // The real (temporary) HOME got no cache: it went to the private TMPDIR.
    assert!(!home.join(".npm").exists(), "{:?}", tree(&home));

    let ws = td.join("guarded");
    // npm sees the copy's settings, without the token.
    let cfg = run(&mut guarded(&ws, &home, &npm, &["config", "list"]));
    assert_eq!(cfg.code(), Some(0), "{}", cfg.describe());
    assert!(
        cfg.stdout.contains("save-exact = true"),
        "{}",
        cfg.describe()
    );
    assert!(!cfg.stdout.contains(NPM_TOKEN), "{}", cfg.describe());
    assert!(!cfg.stdout.contains("_authToken"), "{}", cfg.describe());
    assert_secret_unreadable(&ws, &home, NPM_TOKEN, &[&npmrc]);
}

/// A module proxy directory (`GOPROXY=file://…`) serving
/// `example.com/greet v1.0.0`.
fn go_proxy(dir: &Path) {
    let v = dir.join("example.com/greet/@v");
    mkdir(&v);
    write_file(&v.join("list"), "v1.0.0\n", 0o644);
    write_file(&v.join("v1.0.0.info"), "{\"Version\":\"v1.0.0\"}\n", 0o644);
    let gomod = "module example.com/greet\n\ngo 1.18\n";
    write_file(&v.join("v1.0.0.mod"), gomod, 0o644);
    let zip = r#"
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w") as z:
    z.writestr("example.com/greet@v1.0.0/go.mod", sys.argv[2])
    z.writestr("example.com/greet@v1.0.0/greet.go",
               'package greet\n\nfunc Hello() string { return "hello from greet" }\n')
"#;
    let out = run(bare_cmd(python())
        .args(["-c", zip])
        .arg(v.join("v1.0.0.zip"))
        .arg(gomod));
    assert_eq!(out.code(), Some(0), "{}", out.describe());
}

#[test]
fn go_build_with_a_dependency_under_root_matches_bare() {
    let Some(go) = tool("go", "GO_TESTS_REQUIRED") else {
        return;
    };
    let td = TempDir::new("go");
    let gomod = "module example.com/app\n\ngo 1.18\n\nrequire example.com/greet v1.0.0\n";
    let main = "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/greet\"\n)\n\n\
                func main() { fmt.Println(greet.Hello()) }\n";
    let mut sums = Vec::new();
    for (name, guard) in [("bare", false), ("guarded", true)] {
        let (ws, home) = (td.join(name), td.join(format!("{name}-home")));
        mkdir(&ws);
        mkdir(&home);
        // The dependency comes from a module proxy in the workspace (no
        // network; `.` hides it from `go build ./...`).
        let proxy = ws.join(".goproxy");
        go_proxy(&proxy);
        write_file(&ws.join("go.mod"), gomod, 0o644);
        write_file(&ws.join("main.go"), main, 0o644);
        let args = ["build", "-o", "app", "."];
        let mut c = if guard {
            guarded(&ws, &home, &go, &args)
        } else {
            let mut c = tool_cmd(&go, &home);
            c.args(args).current_dir(&ws);
            c
        };
        c.env("GOPROXY", format!("file://{}", proxy.display()))
            .env("GOFLAGS", "-mod=mod")
            .env("GOSUMDB", "off")
            .env("GOTOOLCHAIN", "local")
            .env("CGO_ENABLED", "0");
        let out = run(&mut c);
        assert_eq!(out.code(), Some(0), "{name}: {}", out.describe());
        if guard {
            assert_quiet(&out);
            // Go's caches went to the private TMPDIR, not the HOME.
            assert_eq!(tree(&home), Vec::<String>::new(), "{}", out.describe());
        } else {
            // Bare, Go fills the HOME: what the guarded run must not touch.
            assert!(
                home.join("go/pkg/mod/example.com").is_dir(),
                "{:?}",
                tree(&home)
            );
        }
        let ran = run(&mut bare_cmd(ws.join("app")));
        assert_eq!(ran.stdout, "hello from greet\n", "{}", ran.describe());
        sums.push(std::fs::read_to_string(ws.join("go.sum")).unwrap());
    }
    assert_eq!(sums[0], sums[1], "go.sum");
}

const PIP_TOKEN: &str = "pip_FSGUARDtestTOKEN0123456789";

/// A wheel of the package `tinypkg` 1.0 in `dir`.
fn wheel(dir: &Path) {
    mkdir(dir);
    let code = r#"
import sys, zipfile
files = {
    "tinypkg/__init__.py": "VALUE = 42\n",
    "tinypkg-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n",
    "tinypkg-1.0.dist-info/WHEEL":
        "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
record = "".join(f"{n},,\n" for n in files) + "tinypkg-1.0.dist-info/RECORD,,\n"
with zipfile.ZipFile(sys.argv[1] + "/tinypkg-1.0-py3-none-any.whl", "w") as z:
    for n, t in files.items():
        z.writestr(n, t)
    z.writestr("tinypkg-1.0.dist-info/RECORD", record)
"#;
    let out = run(bare_cmd(python()).args(["-c", code]).arg(dir));
    assert_eq!(out.code(), Some(0), "{}", out.describe());
}

#[test]
fn pip_install_into_a_venv_under_root_reads_pip_conf_without_its_password() {
    let td = TempDir::new("pip");
    let mut sites = Vec::new();
    let home = td.join("home");
    let conf = home.join(".config/pip/pip.conf");
    for (name, guard) in [("bare", false), ("guarded", true)] {
        let ws = td.join(name);
        let wheels = ws.join("wheels");
        wheel(&wheels);
        // The settings that make the install work (no index, the wheel
        // directory) sit beside an index URL with a password.
        put(
            &conf,
            &format!(
                "[global]\nindex-url = https://fsguard-user:{PIP_TOKEN}@pypi.invalid/simple\n\
                 no-index = true\nfind-links = {}\n",
                wheels.display()
            ),
        );
        let venv = ws.join("venv");
        let mk = run(bare_cmd(python()).args(["-m", "venv"]).arg(&venv));
        assert_eq!(mk.code(), Some(0), "python3 -m venv: {}", mk.describe());
        let vpy = venv.join("bin/python");
        let args = [
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "tinypkg",
        ];
        let out = if guard {
            run(&mut guarded(&ws, &home, &vpy, &args))
        } else {
            run(tool_cmd(&vpy, &home).args(args).current_dir(&ws))
        };
        assert_eq!(out.code(), Some(0), "{name}: {}", out.describe());
        if guard {
            assert_quiet(&out);
            assert!(!out.stdout.contains(PIP_TOKEN) && !out.stderr.contains(PIP_TOKEN));
        }
        let check = run(bare_cmd(&vpy).args(["-c", "import tinypkg; print(tinypkg.VALUE)"]));
        assert_eq!(check.stdout, "42\n", "{}", check.describe());
        let site = tree(&venv.join("lib"));
        sites.push(
            site.into_iter()
                .filter(|f| f.contains("tinypkg"))
                .collect::<Vec<_>>(),
        );
        if guard {
            // pip sees the index without its credentials.
            let cfg = run(&mut guarded(
                &ws,
                &home,
                &vpy,
                &["-m", "pip", "config", "list"],
            ));
            assert_eq!(cfg.code(), Some(0), "{}", cfg.describe());
            assert!(
                cfg.stdout.contains("https://pypi.invalid/simple"),
                "{}",
                cfg.describe()
            );
            assert!(!cfg.stdout.contains(PIP_TOKEN), "{}", cfg.describe());
            assert_secret_unreadable(&ws, &home, PIP_TOKEN, &[&conf]);
        }
    }
    assert!(!sites[0].is_empty());
    assert_eq!(sites[0], sites[1], "the installed files");
}

const MAVEN_PASSWORD: &str = "mvn_FSGUARDtestPASSWORD0123456789";

#[test]
fn maven_offline_under_root_reads_settings_without_servers() {
    let Some(mvn) = tool("mvn", "MAVEN_TESTS_REQUIRED") else {
        return;
    };
    let td = TempDir::new("mvn");
    let (ws, home) = (td.join("ws"), td.join("home"));
    mkdir(&ws);
    write_file(
        &ws.join("pom.xml"),
        "<project xmlns=\"http://maven.apache.org/POM/4.0.0\">\n  <modelVersion>4.0.0</modelVersion>\n  \
         <groupId>example</groupId>\n  <artifactId>app</artifactId>\n  <version>1.0</version>\n  \
         <packaging>pom</packaging>\n</project>\n",
        0o644,
    );
    let settings = home.join(".m2/settings.xml");
    put(
        &settings,
        &format!(
            "<settings>\n  <offline>true</offline>\n  <servers>\n    <server>\n      <id>corp</id>\n      \
             <username>bot</username>\n      <password>{MAVEN_PASSWORD}</password>\n    </server>\n  \
             </servers>\n</settings>\n"
        ),
    );
    // The JVM takes its home from the password database, not HOME: the
    // caller's MAVEN_OPTS names the temporary one (fsguard's own comes
    // after it and wins).
    let mut c = guarded(&ws, &home, &mvn, &["-o", "-X", "validate"]);
    c.env("MAVEN_OPTS", format!("-Duser.home={}", home.display()));
    let out = run(&mut c);
    assert_eq!(out.code(), Some(0), "{}", out.describe());
    // Maven read the copy, and put its repository in the private TMPDIR.
    let line = |what: &str| {
        out.stdout
            .lines()
            .find(|l| l.contains(what))
            .unwrap_or_else(|| panic!("{what}: {}", out.describe()))
            .to_string()
    };
    let user = line("Reading user settings from ");
    let repo = line("Using local repository at ");
    for l in [&user, &repo] {
        assert!(l.contains("/fsguard-"), "{l}");
        assert!(!l.contains(home.to_str().unwrap()), "{l}");
    }
    assert!(!out.stdout.contains(MAVEN_PASSWORD), "{}", out.describe());
    // Nothing about the settings or the repository was refused (the JVM's
    // own probes outside the root, such as /tmp/hsperfdata_USER, are not
    // this test's).
    for t in out.blocked() {
        let p = t.field("path").unwrap_or("");
        assert!(!p.contains("/.m2"), "{}", t.raw);
    }
    assert!(!home.join(".m2/repository").exists());
    assert_secret_unreadable(&ws, &home, MAVEN_PASSWORD, &[&settings]);
}
