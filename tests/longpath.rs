//! Trees deeper than PATH_MAX (issue 19 item 5): each call's own path is
//! short, relative to the cwd or a dirfd, but the object's absolute path is
//! longer than the kernel's /proc/self/fd names can be. The guard decides on
//! the full path and gives the results a bare run gives.

mod children_util;

use children_util::*;
use std::process::Command;

/// Builds a tree 30 names of 200 bytes deep (about 6 KiB absolute), works
/// in it through the cwd (create, mkdir, rename, a symlink followed,
/// `futimens` on a new file's fd), passes one path over PATH_MAX (the
/// kernel's ENAMETOOLONG), writes a deep `secret` and a file outside the
/// root, and removes the tree with `shutil.rmtree`; `$1` is a directory
/// outside the root.
const SCRIPT: &str = r#"
W=$PWD
D=$(python3 -c "print('/'.join(['d'*200]*30))")
mkdir -p "$D"; echo "mkdir-p $?"
N=${D%%/*}
for i in $(seq 30); do cd "$N" || exit 3; done; echo "cd 0"
echo in > here.txt; echo "create $?"
cat here.txt
mkdir sub; echo "mkdir $?"
mv here.txt sub/moved.txt; echo "mv $?"
ls sub
ln -s sub/moved.txt link; cat link
touch t && cp -p t t2; echo "touch-cp-p $?"
echo "long-arg $(mkdir "$W/$D/x" 2>&1 | grep -o 'File name too long')"
echo s 2>/dev/null > secret; echo "secret $?"
echo "secret-there $([ -e secret ] && echo yes || echo no)"
UP=$(printf '../%.0s' $(seq 31))
echo o 2>/dev/null > "${UP}out/out"; echo "outside $?"
echo o 2>/dev/null > "$1/out2"; echo "outside-abs $?"
cd "$W"
python3 -c "import shutil; shutil.rmtree('$N')"; echo "rmtree $?"
ls
"#;

fn bash(ws: &std::path::Path, outside: &std::path::Path) -> Command {
    let mut c = Command::new("bash");
    c.args(["-c", SCRIPT, "bash", outside.to_str().unwrap()])
        .current_dir(ws);
    for (k, _) in std::env::vars() {
        if k.starts_with("FSGUARD_") || k == "LD_PRELOAD" {
            c.env_remove(k);
        }
    }
    c.env("PYTHONDONTWRITEBYTECODE", "1");
    c
}

fn want(secret: u8, outside: u8) -> String {
    let there = if secret == 0 { "yes" } else { "no" };
    format!(
        "mkdir-p 0\ncd 0\ncreate 0\nin\nmkdir 0\nmv 0\nmoved.txt\nin\ntouch-cp-p 0\nlong-arg File name too long\nsecret {secret}\nsecret-there {there}\noutside {outside}\noutside-abs {outside}\nrmtree 0\n"
    )
}

/// The deep directory the script works in, as the kernel names it.
fn deep(ws: &std::path::Path) -> String {
    format!("{}/{}", ws.display(), vec!["d".repeat(200); 30].join("/"))
}

#[test]
fn a_tree_deeper_than_path_max_works_as_bare() {
    let s = Scratch::new("longpath");
    let (ws, out) = (s.ws(), s.path("out"));
    std::fs::create_dir(&out).unwrap();
    assert!(deep(&ws).len() > 4096 + 1024);

    let bare = bash(&ws, &out).output().unwrap();
    assert_eq!(stdout(&bare), want(0, 0), "{}", stderr(&bare));
    std::fs::remove_file(out.join("out")).unwrap();
    std::fs::remove_file(out.join("out2")).unwrap();

    // Under FSGUARD_ROOT: as bare, but for the write outside the root.
    let mut c = bash(&ws, &out);
    c.env("LD_PRELOAD", lib())
        .env("FSGUARD_ROOT", ws.to_str().unwrap());
    let o = c.output().unwrap();
    let err = stderr(&o);
    assert_eq!(stdout(&o), want(0, 1), "{err}");
    assert!(!err.contains("unresolved"), "{err}");
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);
    let refused: Vec<&str> = err.lines().filter(|l| l.contains(" blocked ")).collect();
    assert_eq!(refused.len(), 2, "{err}");
    for (line, name) in refused.iter().zip(["out", "out2"]) {
        let want = format!("blocked open write path={}/{name} rule=root", out.display());
        assert!(line.contains(&want), "{err}");
    }
    assert_eq!(std::fs::read_dir(&ws).unwrap().count(), 0);
}

#[test]
fn fsguard_run_applies_a_deny_rule_deep_in_the_tree_with_the_full_path() {
    let s = Scratch::new("longpath-run");
    let (ws, out) = (s.ws(), s.path("out"));
    std::fs::create_dir(&out).unwrap();
    let mut c = Command::new(cli());
    for (k, _) in std::env::vars() {
        if k.starts_with("FSGUARD_") || k == "LD_PRELOAD" {
            c.env_remove(k);
        }
    }
    let o = c
        .args(["run", "--root", ".", "--deny-write", "**/secret", "--"])
        .arg("bash")
        .args(bash(&ws, &out).get_args())
        .current_dir(&ws)
        .env("FSGUARD_LIB", lib())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(stdout(&o), want(1, 1), "{err}");
    assert!(!err.contains("unresolved"), "{err}");
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);
    assert_eq!(std::fs::read_dir(&ws).unwrap().count(), 0);
    // The decision was about the whole path; the trace line names it.
    let secret = format!("{}/secret", deep(&ws));
    let line = err
        .lines()
        .find(|l| l.contains(" blocked ") && l.contains("/secret"))
        .unwrap_or_else(|| panic!("no refusal of secret: {err}"));
    assert!(
        line.contains(&format!("path={secret} rule=write.deny:")),
        "{line}"
    );
}
