//! Names a rule should not spell out: the random part of a temporary
//! file's name (`mkstemp`, Python's `tempfile`, test fixtures), a hash or a
//! UUID, a counter of a test runner's (`pytest-N`), and the directories of
//! known cache layouts (`_cacache`, `pkg/mod`, `.m2/repository`). A hint or
//! a suggested rule that names such a file is useless on the next run; the
//! glob that covers every name of its kind is not.
//!
//! Pure and allocation-free: the library's hints use it on the deny path.

/// The random-looking part of a file name `name` (one component), as a
/// byte range: the name with it replaced by `*` names every file made the
/// same way. `None` when nothing in it looks random.
///
/// What counts, in order:
/// - a UUID (`8-4-4-4-12` hex digits);
/// - a run of 16 or more hex digits, with digits and letters both, set off
///   by the ends of the name or by a character that is not alphanumeric
///   (a hash);
/// - the last 8 characters of the name before a short extension (`.txt`),
///   when they are lowercase letters, digits and `_` (the suffix Python's
///   `tempfile`, `mkstemp`, `mkdtemp` add to a prefix) and either follow
///   `tmp` (their default prefix) or hold a digit with a letter after it
///   (`ha5_8f65`, `4rdzaxng`; not `python38`, `_xstat64`: a version or a
///   count at the end);
/// - else the last 6, letters of both cases and digits mixed at least twice
///   over (`Ab3xYz`: libc's `mkstemp`);
/// - the number of a `pytest-N` directory (pytest's base temp of a run).
pub fn random_part(name: &str) -> Option<(usize, usize)> {
    let b = name.as_bytes();
    if let Some(r) = uuid(b).or_else(|| hex_run(b)) {
        return Some(r);
    }
    if let Some(n) = name.strip_prefix("pytest-") {
        if !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()) {
            return Some((7, name.len()));
        }
    }
    let base = match name.rfind('.') {
        Some(i)
            if i > 0 && name.len() - i <= 9 && b[i + 1..].iter().all(u8::is_ascii_alphanumeric) =>
        {
            i
        }
        _ => name.len(),
    };
    // tempfile's alphabet is lowercase letters, digits and `_`; mkstemp's
    // has capitals too, and is 6 long.
    let tail = |k: usize| (base > k).then(|| &b[base - k..base]);
    if let Some(t) = tail(8).filter(|t| t.iter().all(|c| tempfile_char(*c))) {
        if b[..base - 8].ends_with(b"tmp") || digit_then_letter(t) {
            return Some((base - 8, base));
        }
    }
    tail(6).is_some_and(mixed).then(|| (base - 6, base))
}

/// A digit right before a letter: `4rdzaxng`, `ha5_8f65`; not a version
/// or a count at the end of a word (`python38`, `_xstat64`, `fts64_open`).
fn digit_then_letter(t: &[u8]) -> bool {
    t.windows(2)
        .any(|w| w[0].is_ascii_digit() && w[1].is_ascii_alphabetic())
}

/// A character of the names Python's `tempfile` makes.
fn tempfile_char(c: u8) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_'
}

/// Letters, digits and `_` only, with letters and digits both and at least
/// two changes between them (`_` ignored): `python38` has one, so it is no
/// random suffix; `ha5_8f65` has three.
fn mixed(s: &[u8]) -> bool {
    if !s.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_') {
        return false;
    }
    let mut changes = 0;
    let mut last: Option<bool> = None;
    for c in s.iter().filter(|c| c.is_ascii_alphanumeric()) {
        let digit = c.is_ascii_digit();
        if last.is_some_and(|l| l != digit) {
            changes += 1;
        }
        last = Some(digit);
    }
    changes >= 2
}

fn uuid(b: &[u8]) -> Option<(usize, usize)> {
    const DASHES: [usize; 4] = [8, 13, 18, 23];
    if b.len() < 36 {
        return None;
    }
    (0..=b.len() - 36).find_map(|i| {
        let w = &b[i..i + 36];
        let ok = w.iter().enumerate().all(|(j, c)| {
            if DASHES.contains(&j) {
                *c == b'-'
            } else {
                c.is_ascii_hexdigit()
            }
        });
        ok.then_some((i, i + 36))
    })
}

fn hex_run(b: &[u8]) -> Option<(usize, usize)> {
    let mut i = 0;
    while i < b.len() {
        if !b[i].is_ascii_alphanumeric() {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && b[i].is_ascii_alphanumeric() {
            i += 1;
        }
        let run = &b[start..i];
        if run.len() >= 16
            && run.iter().all(u8::is_ascii_hexdigit)
            && run.iter().any(u8::is_ascii_digit)
            && run.iter().any(u8::is_ascii_alphabetic)
        {
            return Some((start, i));
        }
    }
    None
}

/// A glob that covers a path and every path made the same way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reuse {
    /// `path[..at]`, then `*`, then `path[from..to]`: the first
    /// component with a random part, that part a `*`, what lies beneath
    /// it dropped (a pattern covers what is beneath what it names).
    Star {
        /// Where the `*` goes (the end of the fixed text before it).
        at: usize,
        /// The fixed text after the `*`: `path[from..to]`, to the end of
        /// the component.
        from: usize,
        /// The end of the component.
        to: usize,
    },
    /// `path[..to]`, then `/**`: a cache's directory, or the directory
    /// of a name that is random through and through.
    Tree {
        /// The end of the directory.
        to: usize,
    },
}

/// Directory layouts of package caches wherever they live: the component
/// sequence, and how many of its components the directory to allow keeps
/// (`_cacache`'s parent is npm's cache; `pkg/mod` is Go's module cache).
const LAYOUTS: &[(&[&str], usize)] = &[
    (&["_cacache"], 0),
    (&["pkg", "mod"], 2),
    (&[".m2", "repository"], 2),
    (&[".gradle", "caches"], 2),
    (&[".pnpm-store"], 1),
    (&[".yarn", "berry", "cache"], 3),
];

/// The glob that covers `path` (absolute) and every path made the same way,
/// looking only at the components from byte `start` on (after the home
/// directory, say): a known cache layout's directory, else the first
/// component with a random part ([`random_part`]). `None` when neither
/// applies, or when the glob would cover a directory at `start` or above,
/// or a top-level one (too broad to suggest).
pub fn reuse(path: &str, start: usize) -> Option<Reuse> {
    let comps = || components(path, start);
    // A cache layout: the directory that holds it.
    for (i, (s, _)) in comps().enumerate() {
        for (seq, keep) in LAYOUTS {
            let mut it = comps().skip(i).map(|(s, e)| &path[s..e]);
            if seq.iter().all(|want| it.next() == Some(*want)) {
                let dir_end = if *keep == 0 {
                    s.checked_sub(1)?
                } else {
                    comps().nth(i + keep - 1)?.1
                };
                return broad_enough(path, start, dir_end).then_some(Reuse::Tree { to: dir_end });
            }
        }
    }
    for (s, e) in comps() {
        let Some((rs, re)) = random_part(&path[s..e]) else {
            continue;
        };
        let fixed = rs + (e - s - re);
        if rs >= 3 || (fixed >= 3 && rs > 0) {
            return Some(Reuse::Star {
                at: s + rs,
                from: s + re,
                to: e,
            });
        }
        // A hash or a UUID through and through: its directory. A short
        // random part with under 3 fixed characters is no name to go by
        // (`send2trash`, `sha256sums` have such a tail): no glob.
        if re - rs < 16 {
            return None;
        }
        let dir_end = s.checked_sub(1)?;
        return broad_enough(path, start, dir_end).then_some(Reuse::Tree { to: dir_end });
    }
    None
}

/// Whether the directory `path[..end]` lies below `start` and below the
/// top level.
fn broad_enough(path: &str, start: usize, end: usize) -> bool {
    let dir = &path[..end];
    end > start && dir.bytes().filter(|&c| c == b'/').count() >= 2
}

/// The components of `path` from byte `start` on, as byte ranges.
fn components(path: &str, start: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
    let b = path.as_bytes();
    let mut i = start.min(b.len());
    std::iter::from_fn(move || {
        while i < b.len() && b[i] == b'/' {
            i += 1;
        }
        if i >= b.len() {
            return None;
        }
        let s = i;
        while i < b.len() && b[i] != b'/' {
            i += 1;
        }
        Some((s, i))
    })
}

/// `path` with `r` applied: the glob as text.
pub fn glob_text(path: &str, r: Reuse) -> String {
    match r {
        Reuse::Star { at, from, to } => format!("{}*{}", &path[..at], &path[from..to]),
        Reuse::Tree { to } => format!("{}/**", &path[..to]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(name: &str) -> Option<&str> {
        random_part(name).map(|(s, e)| &name[s..e])
    }

    #[test]
    fn random_parts_of_names() {
        assert_eq!(part("send2trash_testha5_8f65"), Some("ha5_8f65"));
        assert_eq!(part("tmpk3j2x9ab"), Some("k3j2x9ab"));
        assert_eq!(part("tmpk3j2x9ab.txt"), Some("k3j2x9ab"));
        assert_eq!(part("fooAb3xYz"), Some("Ab3xYz"));
        assert_eq!(part("fooAb3xYz.log"), Some("Ab3xYz"));
        assert_eq!(part("pytest-12"), Some("12"));
        // tempfile's default prefix: any 8 of its characters.
        assert_eq!(part("tmpabcdefgh"), Some("abcdefgh"));
        assert_eq!(part("tmp_wx9yzab"), Some("_wx9yzab"));
        assert_eq!(part("build-k3jqxzab"), Some("k3jqxzab"));
        assert_eq!(part("psm_06390f2b"), Some("06390f2b"));
        assert_eq!(part("send2trash_test4rdzaxng"), Some("4rdzaxng"));
        assert_eq!(part("my-projects"), None);
        assert_eq!(
            part("x-123e4567-e89b-12d3-a456-426614174000.json"),
            Some("123e4567-e89b-12d3-a456-426614174000")
        );
        assert_eq!(
            part("c432db8f0e1a2b3c4d5e6f708192a3b4"),
            Some("c432db8f0e1a2b3c4d5e6f708192a3b4")
        );
        for plain in [
            "python38",
            "main.rs",
            "Cargo.toml",
            "libfoo.so.6",
            "README",
            "fsguard-test-root-2559-1-523dbd4-0",
            "site-packages",
            "x86_64-linux-gnu",
            "pytest-of-root",
            "deadbeefdeadbeef",
            "ab",
            "test_tmp_path0",
            // Names of this project's own test directories.
            "fsguard-hooks-29684-128-__xmknod",
            "fsguard-hooks-29684-181-__xstat64",
            "fsguard-hooks-29684-152-fts_open",
            "fsguard-hooks-29684-270-sys_bind",
            "fsguard-hooks-22487-180-fts64_open",
        ] {
            assert_eq!(part(plain), None, "{plain}");
        }
    }

    #[test]
    fn reuse_globs() {
        let g = |p: &str, start: usize| reuse(p, start).map(|r| glob_text(p, r));
        let home = "/home/u/".len();
        assert_eq!(
            g("/home/u/send2trash_testha5_8f65", home).as_deref(),
            Some("/home/u/send2trash_test*")
        );
        assert_eq!(
            g("/home/u/send2trash_testha5_8f65/inner/file.txt", home).as_deref(),
            Some("/home/u/send2trash_test*")
        );
        assert_eq!(
            g("/tmp/tmpk3j2x9ab.txt", 1).as_deref(),
            Some("/tmp/tmp*.txt")
        );
        assert_eq!(
            g("/tmp/pytest-of-root/pytest-3/test_x0/f", 1).as_deref(),
            Some("/tmp/pytest-of-root/pytest-*")
        );
        assert_eq!(
            g(
                "/srv/npmc/_cacache/index-v5/4f/4a/c432db8f0e1a2b3c4d5e6f708192a3b4",
                1
            )
            .as_deref(),
            Some("/srv/npmc/**")
        );
        assert_eq!(
            g("/srv/go/pkg/mod/cache/download/x", 1).as_deref(),
            Some("/srv/go/pkg/mod/**")
        );
        assert_eq!(
            g("/data/.m2/repository/org/x/1.0/x.jar", 1).as_deref(),
            Some("/data/.m2/repository/**")
        );
        // A hash through and through: its directory.
        assert_eq!(
            g("/var/blobs/c432db8f0e1a2b3c4d5e6f708192a3b4", 1).as_deref(),
            Some("/var/blobs/**")
        );
        // Never the start itself, nor a top-level directory.
        assert_eq!(g("/home/u/c432db8f0e1a2b3c4d5e6f708192a3b4", home), None);
        assert_eq!(g("/tmp/c432db8f0e1a2b3c4d5e6f708192a3b4", 1), None);
        assert_eq!(g("/home/u/_cacache/x", home), None);
        // Too little fixed text to name: no glob.
        assert_eq!(g("/tmp/x/Ab3xYz12", 1), None);
        assert_eq!(g("/srv/x/send2trash", 1), None);
        assert_eq!(g("/srv/x/sha256sums", 1), None);
        assert_eq!(
            g("/root/send2trash_test4rdzaxng", "/root/".len()).as_deref(),
            Some("/root/send2trash_test*")
        );
        assert_eq!(g("/home/u/notes.txt", home), None);
        assert_eq!(g("/etc/passwd", 1), None);
    }
}
