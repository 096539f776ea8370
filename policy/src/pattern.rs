//! Compiled path patterns: plain paths match by components, globs by one DFA.
//!
//! A plain path (no glob syntax) covers itself and everything beneath it; it is
//! looked up per ancestor of the candidate, so the cost does not grow with the
//! number of rules and no plain rule costs a regex. All globs of one list are
//! compiled into a single dense DFA at load: searching it takes no lock and
//! allocates nothing, so it is safe in a forked child or a signal handler.

use std::collections::HashMap;

use regex_automata::dfa::{dense, Automaton};
use regex_automata::{Anchored, Input, MatchKind};

use crate::is_within;

/// Plain-path lists longer than this are looked up through a hash map.
const LINEAR_MAX: usize = 8;

/// A compiled list of patterns.
#[derive(Clone, Debug, Default)]
pub struct PatternSet {
    sources: Vec<String>,
    /// Plain paths, with the index of their source.
    plain: Vec<(Box<[u8]>, usize)>,
    plain_map: HashMap<Box<[u8]>, usize>,
    dfa: Option<dense::DFA<Vec<u32>>>,
    /// DFA pattern id -> source index.
    glob_source: Vec<usize>,
}

/// True when `s` uses glob syntax.
pub(crate) fn has_glob_meta(s: &str) -> bool {
    s.bytes()
        .any(|b| matches!(b, b'*' | b'?' | b'[' | b'{' | b'\\'))
}

impl PatternSet {
    /// Compiles absolute patterns. Errors name the offending pattern.
    pub fn new<I, S>(patterns: I) -> Result<PatternSet, String>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut set = PatternSet::default();
        let mut regexes = Vec::new();
        for p in patterns {
            let p = p.as_ref();
            if !p.starts_with('/') {
                return Err(format!("pattern {p:?} is not absolute"));
            }
            let idx = set.sources.len();
            set.sources.push(p.to_string());
            if has_glob_meta(p) {
                let glob = globset::GlobBuilder::new(p.trim_end_matches('/'))
                    .literal_separator(true)
                    .backslash_escape(true)
                    .empty_alternates(true)
                    .build()
                    .map_err(|e| format!("bad glob {p:?}: {}", e.kind()))?;
                // A glob covers what it names and everything beneath it: one
                // regex per glob (not two) keeps the DFA small.
                let re = glob.regex();
                let re = re.strip_suffix('$').unwrap_or(re);
                regexes.push(format!("{re}(?:/.*)?$"));
                set.glob_source.push(idx);
            } else {
                let plain = normalize_plain(p);
                set.plain_map.entry(plain.clone().into()).or_insert(idx);
                set.plain.push((plain.into(), idx));
            }
        }
        if !regexes.is_empty() {
            let dfa = dense::Builder::new()
                .configure(
                    dense::Config::new()
                        .match_kind(MatchKind::All)
                        .start_kind(regex_automata::dfa::StartKind::Anchored),
                )
                .syntax(
                    // `.` (from `**`) must match every byte: a newline in a
                    // file name must not take it out of a rule.
                    regex_automata::util::syntax::Config::new()
                        .unicode(false)
                        .utf8(false)
                        .dot_matches_new_line(true),
                )
                .build_many(&regexes)
                .map_err(|e| format!("cannot compile globs: {e}"))?;
            set.dfa = Some(dfa);
        }
        Ok(set)
    }

    /// True when the set has no patterns.
    pub fn is_empty(&self) -> bool {
        self.sources.is_empty()
    }

    /// The patterns, as compiled.
    pub fn patterns(&self) -> impl Iterator<Item = &str> {
        self.sources.iter().map(String::as_str)
    }

    /// The first pattern that covers `path`, if any.
    pub fn find(&self, path: &[u8]) -> Option<&str> {
        if let Some(i) = self.find_plain(path) {
            return Some(&self.sources[i]);
        }
        let dfa = self.dfa.as_ref()?;
        let input = Input::new(path).anchored(Anchored::Yes);
        match dfa.try_search_fwd(&input) {
            Ok(Some(m)) => Some(&self.sources[self.glob_source[m.pattern().as_usize()]]),
            Ok(None) => None,
            // A dense DFA without quit bytes or Unicode word boundaries never
            // gives up; if it did, no answer is safe, and the library turns a
            // panic into a denial.
            Err(e) => panic!("glob search failed: {e}"),
        }
    }

    /// True when some pattern covers `path`.
    pub fn matches(&self, path: &[u8]) -> bool {
        self.find(path).is_some()
    }

    fn find_plain(&self, path: &[u8]) -> Option<usize> {
        if self.plain.is_empty() {
            return None;
        }
        if self.plain.len() <= LINEAR_MAX {
            return self
                .plain
                .iter()
                .find(|(p, _)| is_within(path, p))
                .map(|(_, i)| *i);
        }
        // One lookup per ancestor: flat in the number of rules.
        if let Some(i) = self.plain_map.get(path) {
            return Some(*i);
        }
        let mut end = path.len();
        while let Some(slash) = path[..end].iter().rposition(|&b| b == b'/') {
            let ancestor: &[u8] = if slash == 0 { b"/" } else { &path[..slash] };
            if let Some(i) = self.plain_map.get(ancestor) {
                return Some(*i);
            }
            if slash == 0 {
                break;
            }
            end = slash;
        }
        None
    }
}

/// Drops trailing slashes (but keeps `/`).
fn normalize_plain(p: &str) -> Vec<u8> {
    let t = p.trim_end_matches('/');
    if t.is_empty() {
        b"/".to_vec()
    } else {
        t.as_bytes().to_vec()
    }
}

#[cfg(test)]
mod tests {
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
    fn first_matching_pattern_is_reported() {
        let s = PatternSet::new(["/a/**", "/a/*.txt", "/plain"]).unwrap();
        assert_eq!(s.find(b"/a/x.txt"), Some("/a/**"));
        assert_eq!(s.find(b"/plain/x"), Some("/plain"));
    }

    #[test]
    fn bad_globs_are_errors() {
        assert!(PatternSet::new(["/ws/[a"]).is_err());
        assert!(PatternSet::new(["relative"]).is_err());
    }
}
