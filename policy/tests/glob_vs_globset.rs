//! The policy's glob matcher against `globset`, the reference the project
//! was specified with.
//!
//! `PatternSet` is hand-written (it allocates nothing and takes no lock on
//! the hot path), and a wrong verdict there is a hole in the guard, so it is
//! checked against globset on generated patterns and paths. globset is
//! configured to the closest semantics (`literal_separator`, backslash
//! escapes, empty alternates) and each pattern is translated for it where
//! the policy means something globset cannot say directly; every such
//! difference is listed in docs/policy.md ("How patterns differ from
//! globset") and pinned by its own test below.
//!
//! The generator is seeded and deterministic; the run is bounded and prints
//! the number of cases it checked.

use std::time::{Duration, Instant};

use fsguard_policy::{Access, Builder, Context, ListKind, PatternSet};
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// Enough to cover the syntax many times over, well inside the time box.
const SETS: usize = 5_000;
const PATHS_PER_SET: usize = 40;
/// A hard stop, in case a slow machine would otherwise run for minutes.
const TIME_BOX: Duration = Duration::from_secs(20);

/// xorshift64*: small, deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

/// Names paths are made of: few, so patterns and paths meet often; with
/// dots, dashes and bytes that are class syntax elsewhere.
const NAMES: &[&str] = &[
    "a",
    "b",
    "ab",
    "ba",
    "abc",
    "x",
    ".env",
    ".env.local",
    "a.pem",
    "b.key",
    "k.pem.bak",
    "-",
    "]",
    "!",
    "^",
    "a-b",
    "z9",
    "ws",
    "ws2",
    ".",
    "..a",
    "A",
];

/// Characters for literal runs inside a wild component.
const CHARS: &[u8] = b"abx.-z9A]!^";

/// One name of a path.
fn gen_name(r: &mut Rng) -> String {
    if r.chance(80) {
        r.pick(NAMES).to_string()
    } else {
        (0..1 + r.below(4))
            .map(|_| *r.pick(CHARS) as char)
            .collect()
    }
}

fn gen_path(r: &mut Rng, from: &[String]) -> Vec<u8> {
    // Half the paths start from a pattern's literal names, so deep matches
    // are common; the rest are free.
    let mut comps: Vec<String> = if !from.is_empty() && r.chance(50) {
        let p = r.pick(from);
        p.split('/')
            .filter(|c| !c.is_empty())
            .take_while(|c| !c.contains(['*', '?', '[', '{', '\\']))
            .map(str::to_string)
            .collect()
    } else {
        Vec::new()
    };
    for _ in 0..r.below(6) {
        comps.push(gen_name(r));
    }
    if comps.is_empty() {
        comps.push(gen_name(r));
    }
    format!("/{}", comps.join("/")).into_bytes()
}

/// A class body: members, ranges, optional negation (`!` or `^`).
fn gen_class(r: &mut Rng) -> String {
    let mut s = String::from("[");
    match r.below(4) {
        0 => s.push('!'),
        1 => s.push('^'),
        _ => {}
    }
    if r.chance(15) {
        s.push(']'); // a leading `]` is a member
    }
    for k in 0..1 + r.below(3) {
        if r.chance(40) {
            let lo = *r.pick(b"a0A.") as char;
            let hi = match lo {
                'a' => *r.pick(b"abcz") as char,
                '0' => *r.pick(b"059") as char,
                'A' => *r.pick(b"AZ") as char,
                _ => '.',
            };
            s.push(lo);
            s.push('-');
            s.push(hi);
        } else if k == 0 && s.len() == 1 {
            // `!` or `^` first would be negation.
            s.push(*r.pick(b"abx.z9") as char);
        } else {
            s.push(*r.pick(b"abx.z9!^") as char);
        }
    }
    // A `-` is a member only where it cannot form a range: last.
    if r.chance(15) {
        s.push('-');
    }
    s.push(']');
    s
}

/// A wild component: `*`, `?`, classes, escapes and literal runs.
fn gen_wild(r: &mut Rng) -> String {
    let mut s = String::new();
    for _ in 0..1 + r.below(4) {
        match r.below(7) {
            0 | 1 => s.push('*'),
            2 => s.push('?'),
            3 => s.push_str(&gen_class(r)),
            4 => {
                s.push('\\');
                s.push(*r.pick(b"*?[a.") as char);
            }
            _ => {
                for _ in 0..1 + r.below(3) {
                    s.push(*r.pick(CHARS) as char);
                }
            }
        }
    }
    // A lone escaped name is a literal; keep some glob syntax in it.
    if !s.contains(['*', '?', '[']) {
        s.push('*');
    }
    s
}

/// One alternative inside braces: a name, a wild name, empty, nested
/// braces, or two components (braces expand textually, so a `/` inside is a separator).
fn gen_alt(r: &mut Rng) -> String {
    match r.below(7) {
        0 => String::new(),
        6 => format!("{}{{{},{}}}", r.pick(NAMES), r.pick(NAMES), gen_wild(r)),
        1 => gen_wild(r),
        2 => format!("{}/{}", r.pick(NAMES), r.pick(NAMES)),
        _ => r.pick(NAMES).to_string(),
    }
}

/// A pattern over the syntax the policy accepts; some have no glob syntax
/// at all (then `PatternSet` takes the plain-path route).
fn gen_pattern(r: &mut Rng) -> String {
    let mut comps: Vec<String> = Vec::new();
    // A literal prefix, usually.
    for _ in 0..r.below(3) {
        comps.push(r.pick(NAMES).to_string());
    }
    for _ in 0..r.below(4) {
        let c = match r.below(10) {
            0 | 1 => "**".to_string(),
            2..=4 => gen_wild(r),
            5 => {
                let n = 2 + r.below(2);
                let mut alts: Vec<String> = (0..n).map(|_| gen_alt(r)).collect();
                // Braces inside a name, with text around them sometimes.
                let pre = if r.chance(30) { "x" } else { "" };
                let post = if r.chance(30) { ".pem" } else { "" };
                if pre.is_empty() && post.is_empty() {
                    // An empty alternative would leave an empty component,
                    // which the policy drops (pinned separately).
                    for a in &mut alts {
                        if a.is_empty() {
                            *a = "b".into();
                        }
                    }
                }
                format!("{pre}{{{}}}{post}", alts.join(","))
            }
            _ => r.pick(NAMES).to_string(),
        };
        comps.push(c);
    }
    if comps.is_empty() {
        comps.push(gen_wild(r));
    }
    // `.` and `..` in a pattern are literal names for both matchers;
    // the policy only ever sees canonical paths, so keep them out.
    comps.retain(|c| c != "." && c != "..");
    if comps.is_empty() {
        comps.push("**".into());
    }
    let mut p = format!("/{}", comps.join("/"));
    if r.chance(10) {
        p.push('/'); // a trailing slash is ignored
    }
    p
}

/// A slash-less relative glob as a config line (`*.pem`), which the policy
/// anchors at `base/**/`.
fn gen_slashless(r: &mut Rng) -> String {
    gen_wild(r)
}

/// The pattern as globset must see it to mean what the policy means.
///
/// - A trailing `/` is dropped (the policy ignores empty components).
/// - A pattern covers what it names and everything beneath: `P` becomes
///   `{P, P/**}`, and a trailing `/**` (which may match no component) is
///   first dropped, so `/a/**` also covers `/a` itself.
/// - Names never contain `/`: a negated class gets `/` as an excluded
///   member, since with `literal_separator` globset still lets a class
///   match the separator.
fn translate(p: &str) -> Vec<String> {
    let mut p = p.trim_end_matches('/').to_string();
    while let Some(s) = p.strip_suffix("/**") {
        p = s.to_string();
    }
    let p = exclude_slash_in_negated_classes(&p);
    if p.is_empty() {
        // `/**`: everything.
        return vec!["/".into(), "/**".into()];
    }
    vec![p.clone(), format!("{p}/**")]
}

fn exclude_slash_in_negated_classes(p: &str) -> String {
    let b = p.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' if i + 1 < b.len() => {
                out.push_str(&p[i..i + 2]);
                i += 2;
            }
            b'[' => {
                let mut j = i + 1;
                let neg = matches!(b.get(j), Some(b'!' | b'^'));
                if neg {
                    j += 1;
                }
                if b.get(j) == Some(&b']') {
                    j += 1;
                }
                // `/` goes first among the members, where it cannot end up
                // as one end of a range.
                out.push_str(&p[i..j]);
                if neg {
                    out.push('/');
                }
                i = j;
            }
            _ => {
                out.push(b[i] as char);
                i += 1;
            }
        }
    }
    out
}

fn glob(p: &str) -> globset::Glob {
    GlobBuilder::new(p)
        .literal_separator(true)
        .backslash_escape(true)
        .empty_alternates(true)
        .build()
        .unwrap_or_else(|e| panic!("globset rejects {p:?}: {e}"))
}

/// globset over the translated patterns, each translation tagged with the
/// index of its source pattern.
fn reference(patterns: &[String]) -> (GlobSet, Vec<usize>) {
    let mut b = GlobSetBuilder::new();
    let mut owner = Vec::new();
    for (i, p) in patterns.iter().enumerate() {
        for t in translate(p) {
            b.add(glob(&t));
            owner.push(i);
        }
    }
    (b.build().unwrap(), owner)
}

/// The source indexes of every pattern globset says covers `path`.
fn all_matches(set: &GlobSet, owner: &[usize], path: &[u8]) -> Vec<usize> {
    let path = std::str::from_utf8(path).expect("generated paths are ASCII");
    let mut v: Vec<usize> = set.matches(path).into_iter().map(|g| owner[g]).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The policy's answer: the source index of the first pattern covering it.
fn ours(set: &PatternSet, patterns: &[String], path: &[u8]) -> Option<usize> {
    set.find(path)
        .map(|hit| patterns.iter().position(|p| p == hit).unwrap())
}

#[test]
fn the_policy_matcher_agrees_with_globset() {
    let start = Instant::now();
    let mut r = Rng(0x5e_edf5_9a4d_2024);
    let (mut cases, mut hits, mut sets_run) = (0usize, 0usize, 0usize);
    let base = "/ws";
    for n in 0..SETS {
        if start.elapsed() > TIME_BOX {
            break;
        }
        // Mostly one pattern (every verdict is that pattern's); sometimes
        // many, so the prefix index and the per-bucket name/extension index
        // (more than 8 globs under one directory) are exercised too.
        let count = if n % 10 == 0 {
            9 + r.below(12)
        } else {
            1 + r.below(3)
        };
        let mut patterns: Vec<String> = Vec::new();
        for _ in 0..count {
            let p = if r.chance(15) {
                // What the config's `*.pem` becomes (settings.rs pins this
                // expansion; `slashless_globs_match_at_any_depth_below_their_base`
                // below checks it through the public API).
                format!("{base}/**/{}", gen_slashless(&mut r))
            } else {
                gen_pattern(&mut r)
            };
            // Duplicates would make "which pattern" ambiguous.
            if !patterns.contains(&p) {
                patterns.push(p);
            }
        }
        let set = PatternSet::new(&patterns)
            .unwrap_or_else(|e| panic!("policy rejects {patterns:?}: {e}"));
        let (gs, owner) = reference(&patterns);
        sets_run += 1;
        for _ in 0..PATHS_PER_SET {
            let path = gen_path(&mut r, &patterns);
            let want = all_matches(&gs, &owner, &path);
            let got = ours(&set, &patterns, &path);
            // The verdict must agree, and the pattern the policy names (the
            // rule label) must be one that really covers the path. Which one
            // is the policy's choice: plain paths are looked up first.
            let agree = match got {
                None => want.is_empty(),
                Some(i) => want.contains(&i),
            };
            assert!(
                agree,
                "path {:?} patterns {:?} (translated for globset: {:?}): policy says {:?}, globset {:?}",
                String::from_utf8_lossy(&path),
                patterns,
                patterns.iter().map(|p| translate(p)).collect::<Vec<_>>(),
                got.map(|i| &patterns[i]),
                want.iter().map(|&i| &patterns[i]).collect::<Vec<_>>(),
            );
            cases += 1;
            hits += usize::from(got.is_some());
        }
    }
    println!(
        "glob_vs_globset: {cases} path checks over {sets_run} pattern sets, {hits} matches, in {:.1?}",
        start.elapsed()
    );
    assert!(sets_run >= 1000, "too few cases ran in the time box");
    // A generator that never matches would prove nothing.
    assert!(hits * 20 > cases, "only {hits} of {cases} checks matched");
}

// ---- The intended differences, one test each (docs/policy.md lists them).

fn gs_one(p: &str, path: &str) -> bool {
    glob(p).compile_matcher().is_match(path)
}

/// globset: a glob names exactly what it matches. Policy: a pattern also
/// covers everything beneath what it names.
#[test]
fn a_pattern_covers_everything_beneath_what_it_names() {
    let s = PatternSet::new(["/ws/*.d", "/etc/hosts"]).unwrap();
    assert!(s.matches(b"/ws/conf.d/inner/file"));
    assert!(!gs_one("/ws/*.d", "/ws/conf.d/inner/file"));
    assert!(s.matches(b"/etc/hosts/x"));
    assert!(!gs_one("/etc/hosts", "/etc/hosts/x"));
    // ... on component boundaries only.
    assert!(!s.matches(b"/ws/conf.dd"));
    assert!(!s.matches(b"/etc/hosts.allow"));
}

/// globset: `/a/**` needs at least a `/` after `/a`. Policy: `**` may match
/// no component at the end too, so `/a/**` covers `/a` itself.
#[test]
fn a_trailing_double_star_covers_the_directory_itself() {
    let s = PatternSet::new(["/a/**"]).unwrap();
    assert!(s.matches(b"/a"));
    assert!(!gs_one("/a/**", "/a"));
    assert!(!s.matches(b"/ab"));
}

/// globset with `literal_separator`: `*` and `?` stop at `/`, but a class
/// such as `[!a]` still matches `/`. Policy: nothing inside a name matches
/// `/`, classes included.
#[test]
fn a_negated_class_never_matches_a_separator() {
    let s = PatternSet::new(["/d/x[!a]y"]).unwrap();
    assert!(!s.matches(b"/d/x/y"));
    assert!(gs_one("/d/x[!a]y", "/d/x/y"));
    assert!(s.matches(b"/d/xby"));
}

/// globset: `/ws/build/` requires the trailing slash in the path. Policy:
/// empty components are ignored, so it is `/ws/build`.
#[test]
fn a_trailing_slash_in_a_pattern_is_ignored() {
    let s = PatternSet::new(["/ws/*/build/"]).unwrap();
    assert!(s.matches(b"/ws/a/build"));
    assert!(!gs_one("/ws/*/build/", "/ws/a/build"));
}

/// An empty alternative that leaves an empty component (`/a/{b,}/c`)
/// drops it, as any empty component is: the policy reads `/a/c`, globset
/// wants `/a//c`.
#[test]
fn an_empty_alternative_drops_its_component() {
    let s = PatternSet::new(["/a/{b,}/c"]).unwrap();
    assert!(s.matches(b"/a/c"));
    assert!(s.matches(b"/a/b/c"));
    assert!(!gs_one("/a/{b,}/c", "/a/c"));
    assert!(!s.matches(b"/a/x/c"));
}

/// A relative glob without a slash in a config or flag means
/// `base/**/glob`: any depth below its base, never above it. globset has no
/// base; the test hands it the expanded form.
#[test]
fn slashless_globs_match_at_any_depth_below_their_base() {
    let base = "/fsguard-glob-test-base";
    let ctx = Context {
        cwd: base.into(),
        home: None,
        exe: None,
        path_var: None,
    };
    let mut b = Builder::new(ctx);
    b.add_pattern(Access::Read, ListKind::Deny, "*.pem")
        .unwrap();
    let s = b.finish().unwrap();
    let expanded: Vec<&String> = s
        .read
        .deny
        .iter()
        .filter(|p| p.ends_with("*.pem"))
        .collect();
    assert_eq!(expanded, [&format!("{base}/**/*.pem")]);
    let set = PatternSet::new(&expanded).unwrap();
    assert!(set.matches(format!("{base}/k.pem").as_bytes()));
    assert!(set.matches(format!("{base}/a/b/c/k.pem").as_bytes()));
    assert!(!set.matches(b"/elsewhere/k.pem"));
    assert!(!set.matches(b"/k.pem"));
    assert!(gs_one(
        &format!("{base}/**/*.pem"),
        &format!("{base}/a/b/c/k.pem")
    ));
}

/// `?` and classes match one byte, and names need not be UTF-8 (Linux
/// paths are bytes). globset matches one `char` of a UTF-8 path; the
/// differential test generates ASCII only.
#[test]
fn question_mark_matches_one_byte_of_a_non_utf8_name() {
    let s = PatternSet::new(["/d/?.key"]).unwrap();
    assert!(s.matches(b"/d/\xff.key"));
    assert!(!s.matches(b"/d/\xc3\xa9.key"), "two bytes, two `?`s");
    assert!(PatternSet::new(["/d/??.key"])
        .unwrap()
        .matches(b"/d/\xc3\xa9.key"));
}

/// Inside a class a backslash escapes the next byte, as in `fnmatch`:
/// `[\]]` is the class of `]`. globset takes the backslash as a member
/// and the class as `[\]`; the generator puts no backslash in classes.
#[test]
fn a_backslash_escapes_inside_a_class() {
    let s = PatternSet::new(["/d/[\\]]x"]).unwrap();
    assert!(s.matches(b"/d/]x"));
    assert!(!s.matches(b"/d/\\x"));
    assert!(!gs_one("/d/[\\]]x", "/d/]x"));
    assert!(gs_one("/d/[\\]]x", "/d/\\]x"));
}

/// `}` and `,` alone are not glob syntax: a pattern with no `*?[{\` is a
/// plain path, matched literally. globset refuses an unopened `}`.
#[test]
fn a_lone_closing_brace_is_a_literal_name() {
    let s = PatternSet::new(["/d/a}"]).unwrap();
    assert!(s.matches(b"/d/a}"));
    assert!(s.matches(b"/d/a}/x"));
    assert!(!s.matches(b"/d/a"));
    assert!(GlobBuilder::new("/d/a}").build().is_err());
}

/// Malformed globs are errors in both, so a typo never becomes a rule.
#[test]
fn malformed_globs_are_refused_by_both() {
    for p in ["/d/[a", "/d/[]", "/d/[!]", "/d/{a", "/d/{a,{b}", "/d/a\\"] {
        assert!(PatternSet::new([p]).is_err(), "policy accepts {p:?}");
        assert!(
            GlobBuilder::new(p).backslash_escape(true).build().is_err(),
            "globset accepts {p:?}"
        );
    }
}

/// A reversed range (`[z-a]`) is refused by both: it would match nothing,
/// so a deny rule with such a typo would deny nothing instead of failing
/// closed (found by the differential test above).
#[test]
fn a_reversed_range_is_refused() {
    assert!(GlobBuilder::new("/d/[z-a]").build().is_err());
    assert!(PatternSet::new(["/d/[z-a]"]).is_err());
}
