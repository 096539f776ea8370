//! What globset would cost at run time, against the policy's own matcher.
//!
//! `cargo run --release -p fsguard-policy --example glob_cost`
//!
//! Every guarded process compiles the policy's patterns once at start-up
//! (in the library's constructor, before `main`) and then matches one path
//! per checked call. For the default policy's patterns (devices, system
//! paths, credentials, tool configs, under `/home/u`, plus a typical
//! config's globs) and for a 1,000-rule config (what `fsguard suggest
//! --exact` can produce), this prints the median build time of
//! `PatternSet` and of a `globset::GlobSet` over the same patterns (each
//! pattern given to globset as `P` and `P/**`, as a covered subtree needs),
//! and the mean cost of one match over a fixed mix of paths.
//!
//! Used for docs/design.md; globset is only a dev-dependency.

use std::hint::black_box;
use std::time::{Duration, Instant};

use fsguard_policy::{PatternSet, DEVICES, SECRETS, SYSTEM, TOOL_CONFIGS};
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

fn default_patterns() -> Vec<String> {
    let home = |p: &&str| p.replacen('~', "/home/u", 1);
    let mut v: Vec<String> = DEVICES.iter().map(|p| p.to_string()).collect();
    v.extend(SYSTEM.iter().map(home));
    v.extend(SECRETS.iter().map(home));
    v.extend(TOOL_CONFIGS.iter().map(home));
    // A typical agent config: root /ws, secrets inside it.
    v.extend(
        [
            "/ws",
            "/ws/**/.env*",
            "/ws/**/*.pem",
            "/ws/**/*.key",
            "/ws/**/id_rsa*",
            "/ws/{secrets,private}",
            "/ws/.git/hooks",
        ]
        .map(String::from),
    );
    v
}

fn many_patterns() -> Vec<String> {
    let mut v = default_patterns();
    for i in 0..900 {
        v.push(format!("/ws/src/module{i}/data.bin"));
    }
    for i in 0..100 {
        v.push(format!("/ws/pkg{i}/**/*.key{i}"));
    }
    v
}

fn globset(patterns: &[String]) -> GlobSet {
    let mut b = GlobSetBuilder::new();
    for p in patterns {
        for t in [p.clone(), format!("{p}/**")] {
            b.add(
                GlobBuilder::new(&t)
                    .literal_separator(true)
                    .empty_alternates(true)
                    .build()
                    .unwrap(),
            );
        }
    }
    b.build().unwrap()
}

fn paths() -> Vec<Vec<u8>> {
    [
        "/usr/lib/x86_64-linux-gnu/libc.so.6",
        "/usr/bin/python3",
        "/etc/ld.so.cache",
        "/home/u/.ssh/id_ed25519",
        "/home/u/.cache/pip/http/a/b/c",
        "/ws/src/main.rs",
        "/ws/src/deep/a/b/c/d/e/f/g/h/mod.rs",
        "/ws/config/.env.local",
        "/ws/target/release/build/x-1234/out/a.o",
        "/ws/certs/server.pem",
        "/ws/src/module512/data.bin",
        "/tmp/fsguard-1/x",
        "/proc/self/status",
        "/dev/null",
    ]
    .iter()
    .map(|p| p.as_bytes().to_vec())
    .collect()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn build_times(patterns: &[String]) -> (Duration, Duration) {
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for _ in 0..21 {
        let t = Instant::now();
        black_box(PatternSet::new(patterns).unwrap());
        ours.push(t.elapsed());
        let t = Instant::now();
        black_box(globset(patterns));
        theirs.push(t.elapsed());
    }
    (median(ours), median(theirs))
}

fn match_ns(patterns: &[String]) -> (f64, f64) {
    let ours = PatternSet::new(patterns).unwrap();
    let theirs = globset(patterns);
    let paths = paths();
    let strs: Vec<&str> = paths
        .iter()
        .map(|p| std::str::from_utf8(p).unwrap())
        .collect();
    // Same verdicts, or the comparison would be meaningless.
    for (p, s) in paths.iter().zip(&strs) {
        assert_eq!(ours.matches(p), theirs.is_match(s), "{s}");
    }
    let rounds = 20_000;
    let t = Instant::now();
    for _ in 0..rounds {
        for p in &paths {
            black_box(ours.matches(black_box(p)));
        }
    }
    let a = t.elapsed().as_nanos() as f64 / (rounds * paths.len()) as f64;
    let t = Instant::now();
    for _ in 0..rounds {
        for s in &strs {
            black_box(theirs.is_match(black_box(*s)));
        }
    }
    let b = t.elapsed().as_nanos() as f64 / (rounds * paths.len()) as f64;
    (a, b)
}

fn main() {
    println!("| patterns | PatternSet build | GlobSet build | PatternSet match | GlobSet match |");
    println!("|---:|---:|---:|---:|---:|");
    for (name, pats) in [
        ("default", default_patterns()),
        ("1,000 rules", many_patterns()),
    ] {
        let (bo, bt) = build_times(&pats);
        let (mo, mt) = match_ns(&pats);
        println!(
            "| {name} ({}) | {:.1} µs | {:.1} µs | {mo:.0} ns | {mt:.0} ns |",
            pats.len(),
            bo.as_secs_f64() * 1e6,
            bt.as_secs_f64() * 1e6,
        );
    }
}
