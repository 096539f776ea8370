//! The repository stands alone: every relative link in README.md and the
//! docs resolves to a file inside the repository, and every `#anchor` to a
//! heading of the file it points at.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .canonicalize()
        .unwrap()
}

/// The documents checked: README.md, docs/*.md, and the other READMEs.
fn documents() -> Vec<PathBuf> {
    let r = repo();
    let mut v = vec![
        r.join("README.md"),
        r.join("python/README.md"),
        r.join("bench/README.md"),
    ];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(r.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    v.extend(docs);
    v.retain(|p| p.is_file());
    v
}

/// Lines outside fenced code blocks, with inline code spans removed.
fn prose(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fenced = false;
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut kept = String::new();
        let mut in_code = false;
        for c in line.chars() {
            if c == '`' {
                in_code = !in_code;
            } else if !in_code {
                kept.push(c);
            }
        }
        out.push((i + 1, kept));
    }
    out
}

/// Link targets: `[text](target)` and `[label]: target`, with line numbers.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in prose(text) {
        let mut rest = line.as_str();
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            let Some(end) = after.find(')') else { break };
            let target = after[..end].split_whitespace().next().unwrap_or("");
            out.push((n, target.trim_matches(['<', '>']).to_string()));
            rest = &after[end..];
        }
        let t = line.trim_start();
        if let (true, Some(i)) = (t.starts_with('['), t.find("]:")) {
            if let Some(target) = t[i + 2..].split_whitespace().next() {
                out.push((n, target.to_string()));
            }
        }
    }
    out
}

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces
/// as hyphens; a repeated heading gets `-1`, `-2`, ….
fn anchors(text: &str) -> HashSet<String> {
    let mut seen = HashSet::new();
    for (_, line) in prose_headings(text) {
        let title = line.trim_start_matches('#').trim();
        let slug: String = title
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let mut s = slug.clone();
        let mut k = 1;
        while seen.contains(&s) {
            s = format!("{slug}-{k}");
            k += 1;
        }
        seen.insert(s);
    }
    seen
}

/// Headings outside code blocks, with their inline code kept as text.
fn prose_headings(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fenced = false;
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced && line.starts_with('#') {
            out.push((i + 1, line.replace('`', "")));
        }
    }
    out
}

/// Every broken link of `doc`, as `file:line: target: why`.
fn broken(doc: &Path, text: &str) -> Vec<String> {
    let root = repo();
    let mut bad = Vec::new();
    for (n, target) in links(text) {
        if target.is_empty()
            || target.starts_with("http://")
            || target.starts_with("https://")
            || target.starts_with("mailto:")
        {
            continue;
        }
        let (path, anchor) = match target.split_once('#') {
            Some((p, a)) => (p, Some(a)),
            None => (target.as_str(), None),
        };
        let file = if path.is_empty() {
            doc.to_path_buf()
        } else {
            doc.parent().unwrap().join(path)
        };
        let why = match file.canonicalize() {
            Err(e) => Some(format!("{e}")),
            Ok(c) if !c.starts_with(&root) => Some("outside the repository".to_string()),
            Ok(c) => match anchor {
                Some(a) if c.extension().is_some_and(|e| e == "md") => {
                    let t = std::fs::read_to_string(&c).unwrap();
                    (!anchors(&t).contains(a)).then(|| format!("no heading #{a}"))
                }
                _ => None,
            },
        };
        if let Some(why) = why {
            bad.push(format!("{}:{n}: {target}: {why}", doc.display()));
        }
    }
    bad
}

#[test]
fn every_relative_link_resolves_inside_the_repository() {
    let docs = documents();
    assert!(docs.len() >= 5, "{docs:?}");
    let mut bad = Vec::new();
    let mut checked = 0;
    for d in &docs {
        let text = std::fs::read_to_string(d).unwrap();
        checked += links(&text).len();
        bad.extend(broken(d, &text));
        // A path the reader is sent to in prose, outside the repository.
        for (n, line) in text.lines().enumerate() {
            if line.contains("../shared/") {
                bad.push(format!("{}:{}: names ../shared/", d.display(), n + 1));
            }
        }
    }
    assert!(
        checked > 20,
        "only {checked} links found: the parser is broken"
    );
    assert!(bad.is_empty(), "broken links:\n{}", bad.join("\n"));
}

#[test]
fn readme_links_the_reference() {
    let text = std::fs::read_to_string(repo().join("README.md")).unwrap();
    assert!(
        links(&text).iter().any(|(_, t)| t == "docs/reference.md"),
        "README.md must link docs/reference.md"
    );
}

#[test]
fn the_checker_finds_broken_links() {
    let doc = repo().join("docs/reference.md");
    let text = "\
[ok](policy.md) [ok](policy.md#presets) [ok](#cli) [web](https://example.com)
[gone](nope.md) [anchor](policy.md#no-such-heading) [out](../../etc/hostname)
`[code](nope2.md)`
```
[fenced](nope3.md)
```
[ref]: missing.md
";
    let mut bad = broken(&doc, text);
    bad.iter_mut()
        .for_each(|b| *b = b.rsplit_once(": ").map(|(a, _)| a).unwrap().to_string());
    let tail: Vec<&str> = bad.iter().map(|b| b.split_once(':').unwrap().1).collect();
    assert_eq!(
        tail,
        [
            "2: nope.md",
            "2: policy.md#no-such-heading",
            "2: ../../etc/hostname",
            "7: missing.md"
        ],
        "{bad:?}"
    );
    let a = anchors("# A `b.c` (d)\n## Same\n## Same\n```\n# not\n```\n");
    for want in ["a-bc-d", "same", "same-1"] {
        assert!(a.contains(want), "{want}: {a:?}");
    }
    assert!(!a.contains("not"));
}
