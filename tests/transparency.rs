//! Transparency, short form: git, tar, sqlite3, a make + cc build and one
//! CPython test module, bare and under the library with a policy that allows
//! what they do; outcomes must be equal. The full form (seven CPython test
//! modules) is `scripts/transparency`, results in scripts/results/.

use std::path::PathBuf;
use std::process::Command;

#[test]
fn real_programs_behave_as_bare() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    for tool in ["git", "tar", "sqlite3", "make", "cc", "python3"] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .unwrap()
            .status
            .success();
        assert!(found, "{tool} is needed for the transparency test");
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let st = Command::new(cargo)
        .args(["build", "--release", "-p", "fsguard"])
        .current_dir(&root)
        .status()
        .unwrap();
    assert!(st.success());
    let out = Command::new(root.join("scripts/transparency"))
        .arg("--short")
        .env("FSGUARD_LIB", root.join("target/release/libfsguard.so"))
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "outcomes differ:\n{report}");
    // Every program was compared, and compared equal.
    for name in ["git", "tar", "sqlite", "make", "test_glob"] {
        assert!(
            report
                .lines()
                .any(|l| l.contains(name) && l.ends_with("yes")),
            "{name} missing or different:\n{report}"
        );
    }
}
