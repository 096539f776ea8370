use super::glob::wild_match;
use super::index::{common_ancestor, LINEAR_MAX};
use super::*;

#[test]
fn plain_paths_cover_subtrees_by_component() {
    let s = PatternSet::new(["/ws", "/etc/hosts"]).unwrap();
    assert_eq!(s.find(b"/ws"), Some("/ws"));
    assert_eq!(s.find(b"/ws/a/b"), Some("/ws"));
    assert_eq!(s.find(b"/ws2"), None);
    assert_eq!(s.find(b"/etc/hosts"), Some("/etc/hosts"));
    assert_eq!(s.find(b"/etc/hosts.allow"), None);
}

#[test]
fn many_plain_paths_use_the_map() {
    let pats: Vec<String> = (0..100).map(|i| format!("/data/d{i}")).collect();
    let s = PatternSet::new(&pats).unwrap();
    assert_eq!(s.find(b"/data/d42/x/y"), Some("/data/d42"));
    assert_eq!(s.find(b"/data/d42"), Some("/data/d42"));
    assert_eq!(s.find(b"/data/d420"), None);
    assert_eq!(s.find(b"/data"), None);
    let root = PatternSet::new(pats.iter().map(String::as_str).chain(["/"])).unwrap();
    assert_eq!(root.find(b"/x"), Some("/"));
}

#[test]
fn the_map_skips_ancestors_longer_than_any_key() {
    let pats: Vec<String> = (0..20)
        .map(|i| format!("/data/d{i}"))
        .chain(["/a".into(), "/data/deeper/still/a/key".into()])
        .collect();
    let s = PatternSet::new(&pats).unwrap();
    let long = b"/data/deeper/still/a/key/and/then/a/path/much/longer/than/any/key";
    assert_eq!(s.find(long), Some("/data/deeper/still/a/key"));
    assert_eq!(
        s.find(b"/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t/u"),
        Some("/a")
    );
    assert_eq!(s.find(b"/data/d7/x/y/z/w/v/u/t/s/r/q/p"), Some("/data/d7"));
    assert_eq!(s.find(b"/data/deeper/still/a/keyring/and/more/names"), None);
    assert_eq!(
        s.find(b"/data/d77777777777777777777777777777777777777"),
        None
    );
}

#[test]
fn globs_match_and_cover_subtrees() {
    let s = PatternSet::new(["/ws/**/.env*", "/home/u/*.pem", "/p/{a,b}/c"]).unwrap();
    assert!(s.matches(b"/ws/.env"));
    assert!(s.matches(b"/ws/a/b/.env.local"));
    assert!(s.matches(b"/ws/a/.envdir/inner"));
    assert!(!s.matches(b"/ws/a/env"));
    assert!(s.matches(b"/home/u/k.pem"));
    assert!(!s.matches(b"/home/u/sub/k.pem"), "* does not cross /");
    assert!(s.matches(b"/p/a/c"));
    assert!(s.matches(b"/p/b/c/d"));
    assert!(!s.matches(b"/p/x/c"));
}

#[test]
fn question_mark_and_classes() {
    let s = PatternSet::new(["/d/file?.[ch]"]).unwrap();
    assert!(s.matches(b"/d/file1.c"));
    assert!(s.matches(b"/d/fileX.h"));
    assert!(!s.matches(b"/d/file12.c"));
    assert!(!s.matches(b"/d/file/.c"));
}

#[test]
fn non_utf8_paths_are_matched_bytewise() {
    let s = PatternSet::new(["/ws/**/*.key"]).unwrap();
    assert!(s.matches(b"/ws/\xff\xfe/a.key"));
    assert!(!s.matches(b"/ws/\xff\xfe/a.txt"));
}

#[test]
fn globs_cover_and_respect_components() {
    let s = PatternSet::new(["/ws/**", "/a/*/c", "/x/**/y/**/z"]).unwrap();
    assert!(s.matches(b"/ws"));
    assert!(s.matches(b"/ws/a/b"));
    assert!(!s.matches(b"/ws2/a"));
    assert!(s.matches(b"/a/b/c"));
    assert!(s.matches(b"/a/b/c/d"));
    assert!(!s.matches(b"/a/b/b/c"));
    assert!(s.matches(b"/x/1/2/y/3/z"));
    assert!(s.matches(b"/x/y/z"));
    assert!(!s.matches(b"/x/y/q"));
}

#[test]
fn wildcards_within_a_name() {
    assert!(wild_match(b"*.pem", b"a.pem"));
    assert!(wild_match(b"*.pem", b".pem"));
    assert!(!wild_match(b"*.pem", b"a.pem.bak"));
    assert!(wild_match(b"a*b*c", b"aXXbYYc"));
    assert!(!wild_match(b"a*b*c", b"aXXbYY"));
    assert!(wild_match(b"[!a]x", b"bx"));
    assert!(!wild_match(b"[!a]x", b"ax"));
    assert!(wild_match(b"[a-c]", b"b"));
    assert!(wild_match(b"\\*", b"*"));
    assert!(!wild_match(b"\\*", b"a"));
    assert!(wild_match(b"[]]", b"]"));
}

#[test]
fn braces_expand() {
    let s = PatternSet::new(["/p/{a,b{1,2}}/c"]).unwrap();
    assert!(s.matches(b"/p/a/c"));
    assert!(s.matches(b"/p/b1/c"));
    assert!(s.matches(b"/p/b2/c"));
    assert!(!s.matches(b"/p/b/c"));
    assert!(PatternSet::new(["/p/{a"]).is_err());
}

#[test]
fn many_globs_are_filed_by_prefix() {
    let pats: Vec<String> = (0..1000).map(|i| format!("/data/d{i}/**/*.key")).collect();
    let s = PatternSet::new(&pats).unwrap();
    assert_eq!(s.find(b"/data/d742/x/y.key"), Some("/data/d742/**/*.key"));
    assert_eq!(s.find(b"/data/d742/x/y.txt"), None);
    assert_eq!(s.find(b"/data/d7420/y.key"), None);
}

#[test]
fn control_bytes_in_names_do_not_escape_globs() {
    let s = PatternSet::new(["/ws/**/.env*", "/k/*.pem"]).unwrap();
    assert!(s.matches(b"/ws/a\nb/.env"));
    assert!(s.matches(b"/ws/.env\n/x"));
    assert!(s.matches(b"/k/a\nb.pem"));
    assert!(s.matches(b"/k/a.pem/\n"));
    assert!(!s.matches(b"/k/a\n/b.pem"));
}

#[test]
fn trailing_slash_and_subtree_of_globs() {
    let s = PatternSet::new(["/ws/*/build/"]).unwrap();
    assert!(s.matches(b"/ws/a/build"));
    assert!(s.matches(b"/ws/a/build/x/y"));
    assert!(!s.matches(b"/ws/a/builds"));
    assert!(!s.matches(b"/ws/a/b/build"));
}

#[test]
fn a_matching_pattern_is_reported() {
    let s = PatternSet::new(["/a/*.txt", "/plain", "/b/**"]).unwrap();
    assert_eq!(s.find(b"/a/x.txt"), Some("/a/*.txt"));
    assert_eq!(s.find(b"/plain/x"), Some("/plain"));
    assert_eq!(s.find(b"/b/c/d"), Some("/b/**"));
    assert_eq!(s.find(b"/a/x.txt2"), None);
}

#[test]
fn patterns_below_a_directory() {
    let s = PatternSet::new(["/ws/conf/api.key", "/home/u/.config/gh", "/d/**/*.pem"]).unwrap();
    assert_eq!(s.find_below(b"/ws"), Some("/ws/conf/api.key"));
    assert_eq!(s.find_below(b"/ws/conf"), Some("/ws/conf/api.key"));
    assert_eq!(s.find_below(b"/home/u/.config"), Some("/home/u/.config/gh"));
    assert_eq!(s.find_below(b"/d"), Some("/d/**/*.pem"));
    assert_eq!(s.find_below(b"/ws2"), None);
    assert_eq!(s.find_below(b"/ws/conf/api.key/x"), None);
}

#[test]
fn common_ancestors_are_by_component() {
    assert_eq!(
        common_ancestor(b"/home/u/.ssh", b"/home/u/.aws"),
        b"/home/u"
    );
    assert_eq!(common_ancestor(b"/home/u", b"/home/u/.aws"), b"/home/u");
    assert_eq!(common_ancestor(b"/ws", b"/ws2"), b"/");
    assert_eq!(common_ancestor(b"/usr", b"/lib"), b"/");
    let s = PatternSet::new(["/home/u/.ssh", "/home/u/.aws"]).unwrap();
    assert_eq!(s.find(b"/home/u2/.ssh"), None);
    assert_eq!(s.find(b"/home/u/.ssh/id"), Some("/home/u/.ssh"));
}

#[test]
fn a_large_bucket_finds_what_a_linear_scan_finds() {
    let mut pats: Vec<String> = (0..200).map(|i| format!("/d/**/*.k{i}")).collect();
    pats.extend((0..50).map(|i| format!("/d/**/name{i}")));
    pats.extend([
        "/d/**/x?y".to_string(),
        "/d/*/**".to_string(),
        "/d/**/*.k7".to_string(),
    ]);
    let indexed = PatternSet::new(&pats).unwrap();
    let cases: &[&[u8]] = &[
        b"/d/a/f.k7",
        b"/d/a/b.c.k199",
        b"/d/a/name42/inner",
        b"/d/x1y",
        b"/d/q",
        b"/d/q/r.k3",
        b"/d/.k5",
        b"/d/k5",
        b"/e/a.k7",
    ];
    for c in cases {
        // Linear reference: each pattern alone, first in source order.
        let linear = pats
            .iter()
            .find(|p| PatternSet::new([p.as_str()]).unwrap().matches(c));
        assert_eq!(
            indexed.find(c),
            linear.map(String::as_str),
            "{}",
            String::from_utf8_lossy(c)
        );
    }
}

/// Overlapping rules, padded with rules that match none of the paths
/// below, so that each list is scanned (no padding) or looked up in the
/// maps and the indexed bucket (padding).
fn overlapping(pad: usize) -> Vec<String> {
    // One rule per depth of literal directory, so that no two tie.
    let mut pats: Vec<String> = [
        "/w/**/secret.key",
        "/w/a",
        "/w/a/b/**/*.key",
        "/w/a/b/c",
        "/w/a/b/c/d/*.key",
        "/w/a/b/c/d/e/**/x",
    ]
    .map(String::from)
    .to_vec();
    for i in 0..pad {
        pats.push(format!("/pad{i}"));
        pats.push(format!("/w/a/pad{i}"));
        pats.push(format!("/w/a/b/c/d/*.pad{i}"));
        pats.push(format!("/w/**/pad{i}/*.key"));
        pats.push(format!("/w/a/q{i}/*.key"));
    }
    pats
}

/// The rule the label must name, whatever the list's size or order.
const MOST_SPECIFIC: &[(&[u8], Option<&str>)] = &[
    (b"/w/a/b/c/d/secret.key", Some("/w/a/b/c/d/*.key")),
    (b"/w/a/b/c/d/e/secret.key", Some("/w/a/b/c")),
    (b"/w/a/b/c/d/e/f/x", Some("/w/a/b/c/d/e/**/x")),
    (b"/w/a/b/z.key", Some("/w/a/b/**/*.key")),
    (b"/w/a/b/z", Some("/w/a")),
    (b"/w/a", Some("/w/a")),
    (b"/w/z/secret.key", Some("/w/**/secret.key")),
    (b"/w/z/other.key", None),
];

#[test]
fn the_most_specific_rule_is_named_at_any_size_and_order() {
    for pad in [0, 1, 3, 20] {
        let mut pats = overlapping(pad);
        // Deterministic shuffles: rotations and a stride permutation.
        for round in 0..8usize {
            let by = round % pats.len();
            pats.rotate_left(by);
            if round % 2 == 1 {
                let n = pats.len();
                let step = (1..n).rev().find(|s| gcd(*s, n) == 1).unwrap_or(1);
                pats = (0..n).map(|i| pats[(i * step) % n].clone()).collect();
            }
            let s = PatternSet::new(&pats).unwrap();
            let small = s.plain.list.len() <= LINEAR_MAX && s.globs.list.len() <= LINEAR_MAX;
            assert_eq!(small, pad < 20, "both paths are exercised");
            for (path, want) in MOST_SPECIFIC {
                assert_eq!(
                    s.find(path),
                    *want,
                    "{} with {} rules (scanned: {small}) in order {pats:?}",
                    String::from_utf8_lossy(path),
                    pats.len()
                );
            }
        }
    }
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

#[test]
fn equally_specific_rules_are_named_in_config_order() {
    // Same literal directory: a plain path and a glob, and two globs of
    // one bucket. The one listed first is named, scanned or indexed.
    for pad in [0, 20] {
        let padding: Vec<String> = (0..pad)
            .flat_map(|i| [format!("/t/pad{i}"), format!("/t/a/*.pad{i}")])
            .collect();
        for (first, second) in [
            ("/t/a", "/t/a/*.key"),
            ("/t/a/*.key", "/t/a"),
            ("/t/a/*.key", "/t/a/s*"),
            ("/t/a/s*", "/t/a/*.key"),
        ] {
            let pats: Vec<&str> = [first, second]
                .into_iter()
                .chain(padding.iter().map(String::as_str))
                .collect();
            let s = PatternSet::new(&pats).unwrap();
            assert_eq!(s.find(b"/t/a/s.key"), Some(first), "{pats:?}");
        }
    }
}

#[test]
fn the_example_of_the_docs() {
    let s = PatternSet::new(["/ws/a", "/ws/**/*.key", "/ws/a/b", "/ws/a/*.key"]).unwrap();
    assert_eq!(s.find(b"/ws/a/b/f.key"), Some("/ws/a/b"));
    assert_eq!(s.find(b"/ws/a/g.key"), Some("/ws/a"));
    assert_eq!(s.find(b"/ws/c/g.key"), Some("/ws/**/*.key"));
}

#[test]
fn two_and_nine_plain_rules_name_the_same_one() {
    // The case of the issue: the deeper rule, at 2 rules and at 9.
    let two = PatternSet::new(["/ws/a", "/ws/a/b"]).unwrap();
    let nine: Vec<String> = ["/ws/a".to_string(), "/ws/a/b".to_string()]
        .into_iter()
        .chain((0..7).map(|i| format!("/ws/c{i}")))
        .collect();
    let nine = PatternSet::new(&nine).unwrap();
    assert!(nine.plain.list.len() > LINEAR_MAX);
    assert_eq!(two.find(b"/ws/a/b/f"), Some("/ws/a/b"));
    assert_eq!(nine.find(b"/ws/a/b/f"), Some("/ws/a/b"));
    assert_eq!(two.find(b"/ws/a/f"), Some("/ws/a"));
    assert_eq!(nine.find(b"/ws/a/f"), Some("/ws/a"));
}

#[test]
fn bad_globs_are_errors() {
    assert!(PatternSet::new(["/ws/[a"]).is_err());
    assert!(PatternSet::new(["relative"]).is_err());
}

#[test]
fn a_key_listed_twice_is_one_entry_named_by_its_first_listing() {
    let s = PatternSet::new(["/a/", "/b", "/a", "/b/*.x", "/c", "/b/*.y"]).unwrap();
    assert_eq!(s.plain.list.len(), 3);
    assert_eq!(s.find(b"/a/f"), Some("/a/"));
    assert_eq!(s.globs.list.len(), 1, "the globs of /b share one bucket");
    assert_eq!(s.globs.list[0].1.globs.len(), 2);
    // Long lists too: the map holds each key once, the first listing wins.
    let pats: Vec<String> = (0..40)
        .map(|i| format!("/d/k{}", i % 20))
        .chain((0..20).map(|i| format!("/d/k{i}/*.e{}", i % 3)))
        .collect();
    let s = PatternSet::new(&pats).unwrap();
    assert_eq!(s.plain.list.len(), 20);
    assert!(s.plain.list.len() > LINEAR_MAX);
    for (i, first) in pats.iter().take(20).enumerate() {
        let path = format!("/d/k{i}/f.e{}", i % 3);
        assert_eq!(s.find(path.as_bytes()), Some(first.as_str()));
        assert_eq!(s.find(format!("/d/k{i}x").as_bytes()), None);
    }
}
