//! A pattern as an extended regular expression over whole paths, for
//! kernels that take one (macOS's Seatbelt, `crate::seatbelt`), where the
//! translation is exact; where it is not, the pattern's literal leading
//! directory, so the caller can widen towards it.

use super::glob::{compile, expand_braces, Comp};
use super::{has_glob_meta, normalize_plain};

/// One alternative of a pattern, as a kernel rule can say it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Form {
    /// A plain path: it and everything beneath it.
    Subpath(String),
    /// A regular expression matching exactly the paths the alternative
    /// covers (anchored at both ends).
    Regex(String),
    /// No exact form: the literal leading directory the alternative lies
    /// beneath (`/` when it starts with a wildcard).
    Beneath(String),
}

/// The forms of `p` (absolute), one per brace alternative; `None` for a
/// pattern that does not compile (the policy refuses those at load).
///
/// Exact: literal names, `*` (any run of bytes within one name) and `**`
/// (any number of names). Not exact: `?` and `[..]` match one byte, where
/// the kernel's matcher may take a whole multibyte character; a name
/// holding `"` (the regex literal cannot hold one); a first component that
/// is a wildcard (the kernel matches the real path, where `/tmp` is
/// `/private/tmp`).
pub(crate) fn forms(p: &str) -> Option<Vec<Form>> {
    if !has_glob_meta(p) {
        let plain = normalize_plain(p);
        return Some(vec![Form::Subpath(String::from_utf8(plain.to_vec()).ok()?)]);
    }
    let mut expanded = Vec::new();
    expand_braces(p.as_bytes(), &mut expanded).ok()?;
    let mut out = Vec::with_capacity(expanded.len());
    for e in expanded {
        let text = String::from_utf8(e).ok()?;
        if !has_glob_meta(&text) {
            out.push(Form::Subpath(
                String::from_utf8(normalize_plain(&text).to_vec()).ok()?,
            ));
            continue;
        }
        let comps = compile(text.as_bytes()).ok()?;
        out.push(form(&comps)?);
    }
    Some(out)
}

/// The literal leading directory of each alternative of `p` (all of a
/// plain path): where what it covers lies.
pub(crate) fn dirs(p: &str) -> Vec<String> {
    let mut expanded = Vec::new();
    if expand_braces(p.as_bytes(), &mut expanded).is_err() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for e in expanded {
        let Ok(comps) = compile(&e) else { continue };
        let mut dir = String::new();
        for c in &comps {
            let Comp::Literal(name) = c else { break };
            let Ok(name) = std::str::from_utf8(name) else {
                break;
            };
            dir.push('/');
            dir.push_str(name);
        }
        out.push(if dir.is_empty() { "/".into() } else { dir });
    }
    out
}

/// The form of one brace-free alternative.
fn form(comps: &[Comp]) -> Option<Form> {
    let mut prefix = String::new();
    for c in comps {
        let Comp::Literal(name) = c else { break };
        prefix.push('/');
        prefix.push_str(std::str::from_utf8(name).ok()?);
    }
    if prefix.is_empty() {
        prefix.push('/');
    }
    if matches!(comps.first(), Some(Comp::Wild(_))) {
        return Some(Form::Beneath(prefix));
    }
    let mut re = String::from("^");
    for c in comps {
        match c {
            Comp::Literal(name) => {
                re.push('/');
                if !literal(name, &mut re) {
                    return Some(Form::Beneath(prefix));
                }
            }
            Comp::Wild(w) => {
                re.push('/');
                if !wild(w, &mut re) {
                    return Some(Form::Beneath(prefix));
                }
            }
            Comp::AnyDepth => re.push_str("(/[^/]+)*"),
        }
    }
    if re == "^" {
        re.push('/'); // `/**` or `/`: every path
    }
    // A pattern covers what lies beneath what it names.
    re.push_str("($|/)");
    Some(Form::Regex(re))
}

/// Appends `name` with every regex metacharacter escaped; false if it
/// cannot be said exactly.
fn literal(name: &[u8], re: &mut String) -> bool {
    let Ok(s) = std::str::from_utf8(name) else {
        return false;
    };
    for ch in s.chars() {
        if ch == '"' || ch.is_control() {
            return false;
        }
        if "\\.^$|()[]{}*+?".contains(ch) {
            re.push('\\');
        }
        re.push(ch);
    }
    true
}

/// Appends a wildcard name: `*` runs become `[^/]*` (`[^/]+` for a name
/// that is only stars: a name is never empty), `\x` is `x`; false for `?`,
/// `[..]` or anything [`literal`] refuses.
fn wild(w: &[u8], re: &mut String) -> bool {
    if w.iter().all(|&b| b == b'*') {
        re.push_str("[^/]+");
        return true;
    }
    let mut i = 0;
    while i < w.len() {
        match w[i] {
            b'*' => {
                while i < w.len() && w[i] == b'*' {
                    i += 1;
                }
                re.push_str("[^/]*");
                continue;
            }
            b'?' | b'[' => return false,
            b'\\' => {
                i += 1;
                let Some(&n) = w.get(i) else { return false };
                if !literal(&[n], re) {
                    return false;
                }
            }
            _ => {
                // The bytes up to the next special one, as one literal run
                // (a multibyte character stays whole).
                let end = w[i..]
                    .iter()
                    .position(|b| matches!(b, b'*' | b'?' | b'[' | b'\\'))
                    .map_or(w.len(), |n| i + n);
                if !literal(&w[i..end], re) {
                    return false;
                }
                i = end;
                continue;
            }
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(p: &str) -> Form {
        let mut f = forms(p).unwrap();
        assert_eq!(f.len(), 1, "{p}");
        f.pop().unwrap()
    }

    fn re(s: &str) -> Form {
        Form::Regex(s.into())
    }

    #[test]
    fn plain_paths_are_subpaths() {
        assert_eq!(one("/a/b/"), Form::Subpath("/a/b".into()));
        assert_eq!(one("/"), Form::Subpath("/".into()));
    }

    #[test]
    fn stars_and_any_depth_are_exact() {
        assert_eq!(one("/ws/*.pem"), re(r"^/ws/[^/]*\.pem($|/)"));
        assert_eq!(one("/ws/**/.env"), re(r"^/ws(/[^/]+)*/\.env($|/)"));
        assert_eq!(one("/ws/*"), re(r"^/ws/[^/]+($|/)"));
        assert_eq!(one("/**"), re(r"^(/[^/]+)*($|/)"));
        assert_eq!(one("/**/id_*"), re(r"^(/[^/]+)*/id_[^/]*($|/)"));
    }

    #[test]
    fn metacharacters_are_escaped() {
        assert_eq!(
            one("/a+b/(c)|d/x$^.{y}*"),
            // `{y}` is a one-alternative brace: expanded to `y`.
            re(r"^/a\+b/\(c\)\|d/x\$\^\.y[^/]*($|/)")
        );
        // `\*` is a literal star; `\` itself is escaped in the regex.
        assert_eq!(one(r"/a/\**"), re(r"^/a/\*[^/]*($|/)"));
        assert_eq!(one(r"/a/b\\c*"), re(r"^/a/b\\c[^/]*($|/)"));
        assert_eq!(one("/é/*"), re(r"^/é/[^/]+($|/)"));
    }

    #[test]
    fn braces_give_one_form_each() {
        assert_eq!(
            forms("/ws/{a,b*}/x").unwrap(),
            vec![Form::Subpath("/ws/a/x".into()), re(r"^/ws/b[^/]*/x($|/)")]
        );
    }

    #[test]
    fn inexact_globs_name_their_literal_directory() {
        assert_eq!(one("/ws/a?c"), Form::Beneath("/ws".into()));
        assert_eq!(one("/ws/x/[ab]/y"), Form::Beneath("/ws/x".into()));
        assert_eq!(one("/ws/q\"*"), Form::Beneath("/ws".into()));
        assert_eq!(one("/*/x"), Form::Beneath("/".into()));
        assert_eq!(one("/ws/**/a?"), Form::Beneath("/ws".into()));
    }

    #[test]
    fn literal_directories() {
        assert_eq!(dirs("/ws/a/b"), ["/ws/a/b"]);
        assert_eq!(dirs("/ws/**/*.csv"), ["/ws"]);
        assert_eq!(dirs("/{a,b/c}/*"), ["/a", "/b/c"]);
        assert_eq!(dirs("/*/x"), ["/"]);
        assert!(dirs("/ws/{a").is_empty());
    }

    #[test]
    fn bad_globs_have_no_form() {
        assert_eq!(forms("/ws/{a"), None);
        assert_eq!(forms("/ws/[b-a]"), None);
    }

    /// The regex agrees with the library's own matcher on sample paths
    /// (by a tiny backtracking interpreter of the few constructs emitted).
    #[test]
    fn regexes_match_what_the_patterns_match() {
        let cases: &[(&str, &[&str], &[&str])] = &[
            (
                "/ws/*.pem",
                &["/ws/a.pem", "/ws/.pem", "/ws/a.pem/x"],
                &["/ws/apem", "/ws/d/a.pem", "/ws2/a.pem"],
            ),
            (
                "/ws/**/.env",
                &["/ws/.env", "/ws/a/b/.env", "/ws/.env/x"],
                &["/ws/a.env", "/wsx/.env"],
            ),
            ("/ws/*", &["/ws/a", "/ws/a/b"], &["/ws", "/wsa"]),
        ];
        for (p, yes, no) in cases {
            let set = crate::PatternSet::new([p]).unwrap();
            let Form::Regex(r) = one(p) else {
                panic!("{p}")
            };
            for path in *yes {
                assert!(set.matches(path.as_bytes()), "{p} {path}");
                assert!(super::tiny::matches(&r, path), "{r} {path}");
            }
            for path in *no {
                assert!(!set.matches(path.as_bytes()), "{p} {path}");
                assert!(!super::tiny::matches(&r, path), "{r} {path}");
            }
        }
    }
}

/// A minimal matcher for exactly the constructs the profile holds: `^`,
/// escaped literals, `[^/]*`, `[^/]+`, `[0-9]+`, `(/[^/]+)*`, `($|/)` and a
/// closing `$`.
#[cfg(test)]
pub(crate) mod tiny {
    #[derive(Debug)]
    enum Tok {
        Ch(char),
        NotSlashStar,
        NotSlashPlus,
        AnyDepth,
        EndOrSlash,
        Digits,
        End,
    }

    fn lex(re: &str) -> Vec<Tok> {
        let mut out = Vec::new();
        let mut s = re.strip_prefix('^').unwrap();
        'next: while !s.is_empty() {
            for (lit, t) in [
                ("[^/]*", 0),
                ("[^/]+", 1),
                ("(/[^/]+)*", 2),
                ("($|/)", 3),
                ("[0-9]+", 4),
            ] {
                if let Some(rest) = s.strip_prefix(lit) {
                    out.push(match t {
                        0 => Tok::NotSlashStar,
                        1 => Tok::NotSlashPlus,
                        2 => Tok::AnyDepth,
                        3 => Tok::EndOrSlash,
                        _ => Tok::Digits,
                    });
                    s = rest;
                    continue 'next;
                }
            }
            if s == "$" {
                out.push(Tok::End);
                break;
            }
            let mut cs = s.chars();
            let c = cs.next().unwrap();
            let c = if c == '\\' { cs.next().unwrap() } else { c };
            assert!(!"[]()|$^".contains(c) || s.starts_with('\\'), "{re}");
            out.push(Tok::Ch(c));
            s = cs.as_str();
        }
        out
    }

    fn go(t: &[Tok], s: &[char]) -> bool {
        let Some((first, rest)) = t.split_first() else {
            return s.is_empty();
        };
        let run = s.iter().take_while(|&&c| c != '/').count();
        match first {
            Tok::Ch(c) => s.first() == Some(c) && go(rest, &s[1..]),
            Tok::NotSlashStar => (0..=run).any(|n| go(rest, &s[n..])),
            Tok::NotSlashPlus => (1..=run).any(|n| go(rest, &s[n..])),
            Tok::AnyDepth => {
                if go(rest, s) {
                    return true;
                }
                s.first() == Some(&'/') && {
                    let r = s[1..].iter().take_while(|&&c| c != '/').count();
                    (1..=r).any(|n| go(t, &s[1 + n..]))
                }
            }
            Tok::EndOrSlash => s.is_empty() || s[0] == '/',
            Tok::End => s.is_empty(),
            Tok::Digits => {
                let d = s.iter().take_while(|c| c.is_ascii_digit()).count();
                (1..=d).any(|n| go(rest, &s[n..]))
            }
        }
    }

    pub(crate) fn matches(re: &str, path: &str) -> bool {
        let chars: Vec<char> = path.chars().collect();
        go(&lex(re), &chars)
    }
}
