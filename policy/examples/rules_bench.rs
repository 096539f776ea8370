//! How the cost of one `Policy::decide` grows with the number of rules.
//!
//! `cargo run --release -p fsguard-policy --example rules_bench [-- OUT.md]`
//!
//! For 10, 100 and 1000 rules of each kind (plain prefixes, globs, both) it
//! compiles the policy once, then times `decide` over a fixed mix of paths
//! (hits, near misses on component boundaries, misses) and prints a Markdown
//! table; with an argument the table is also written to that file.

use std::hint::black_box;
use std::time::{Duration, Instant};

use fsguard_policy::{Access, Policy, Settings};

const SIZES: [usize; 3] = [10, 100, 1000];

/// Rule sets: each is `n` deny rules under `/data`, plus a root so that the
/// decision runs through every step.
fn settings(kind: &str, n: usize) -> Settings {
    let mut s = Settings {
        root: Some("/data".into()),
        system_paths: vec!["/usr".into(), "/lib".into(), "/etc/hosts".into()],
        secret_paths: fsguard_policy::SECRETS
            .iter()
            .map(|p| p.replacen('~', "/home/u", 1))
            .collect(),
        ..Settings::default()
    };
    for i in 0..n {
        match kind {
            "prefix" => s.read.deny.push(format!("/data/project{i}/private")),
            "glob" => s.read.deny.push(format!("/data/project{i}/**/*.key{i}")),
            _ => {
                if i % 2 == 0 {
                    s.read.deny.push(format!("/data/project{i}/private"));
                } else {
                    s.read.deny.push(format!("/data/project{i}/**/*.key{i}"));
                }
            }
        }
    }
    s
}

/// Paths checked: a hit on the last rule, component-boundary near misses,
/// a deep miss inside the root, a system read and a read outside everything.
fn paths(kind: &str, n: usize) -> Vec<Vec<u8>> {
    // The last rule of each kind present (in "mixed", even = prefix, odd = glob).
    let (lp, lg) = match kind {
        "prefix" => (n - 1, n - 1),
        "glob" => (n - 1, n - 1),
        _ => (n - 2, n - 1),
    };
    let last = n - 1;
    [
        format!("/data/project{lp}/private/notes.txt"),
        format!("/data/project{lg}/src/deep/a/b/c/x.key{lg}"),
        format!("/data/project{last}/privateX/notes.txt"),
        format!("/data/project{last}0/private/notes.txt"),
        "/data/other/src/main/java/org/example/app/Main.java".to_string(),
        "/usr/lib/python3/dist-packages/foo/__init__.py".to_string(),
        "/home/u/.ssh/id_ed25519".to_string(),
        "/var/tmp/outside".to_string(),
    ]
    .into_iter()
    .map(String::into_bytes)
    .collect()
}

fn measure(policy: &Policy, paths: &[Vec<u8>]) -> f64 {
    // Calibrate to ~200 ms, then take the best of five runs.
    let mut iters = 1_000u64;
    loop {
        let t = Instant::now();
        run(policy, paths, iters);
        if t.elapsed() > Duration::from_millis(40) {
            break;
        }
        iters *= 4;
    }
    let mut best = f64::MAX;
    for _ in 0..5 {
        let t = Instant::now();
        run(policy, paths, iters);
        let ns = t.elapsed().as_nanos() as f64 / (iters as f64 * paths.len() as f64);
        best = best.min(ns);
    }
    best
}

fn run(policy: &Policy, paths: &[Vec<u8>], iters: u64) {
    for _ in 0..iters {
        for p in paths {
            black_box(policy.decide(Access::Read, black_box(p)).allowed);
        }
    }
}

fn main() {
    let out = std::env::args().nth(1);
    let mut table =
        String::from("| rules | kind | compile (ms) | ns per decide() |\n|---:|---|---:|---:|\n");
    for kind in ["prefix", "glob", "mixed"] {
        for n in SIZES {
            let s = settings(kind, n);
            let t = Instant::now();
            let policy = Policy::new(s).expect("policy compiles");
            let compile = t.elapsed().as_secs_f64() * 1e3;
            let paths = paths(kind, n);
            // Sanity: the rules are live, so the timing is of real matching.
            assert!(!policy.decide(Access::Read, &paths[0]).allowed || kind == "glob");
            assert!(!policy.decide(Access::Read, &paths[1]).allowed || kind == "prefix");
            assert!(policy.decide(Access::Read, &paths[4]).allowed);
            let ns = measure(&policy, &paths);
            let line = format!("| {n} | {kind} | {compile:.1} | {ns:.0} |\n");
            print!("{line}");
            table.push_str(&line);
        }
    }
    if let Some(path) = out {
        std::fs::write(&path, &table).expect("write results");
        eprintln!("wrote {path}");
    }
}
