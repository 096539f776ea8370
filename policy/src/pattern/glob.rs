//! Glob syntax: brace expansion, compiling into components, and matching
//! one component (`*`, `?`, `[..]`, `\`) or a run of them (`**`).

/// Brace expansions one pattern may produce.
const MAX_EXPANSIONS: usize = 1024;

/// One component of a glob.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Comp {
    /// Matches exactly this name.
    Literal(Box<[u8]>),
    /// `*`, `?`, `[..]` within one name.
    Wild(Box<[u8]>),
    /// `**`: any number of names, none included.
    AnyDepth,
}

/// Expands `{a,b}` alternatives (nested allowed; `\{` is literal).
pub(super) fn expand_braces(p: &[u8], out: &mut Vec<Vec<u8>>) -> Result<(), String> {
    let mut i = 0;
    let mut open = None;
    while i < p.len() {
        match p[i] {
            b'\\' => i += 1,
            b'{' => {
                open = Some(i);
                break;
            }
            b'}' => return Err("unmatched '}'".into()),
            _ => {}
        }
        i += 1;
    }
    let Some(start) = open else {
        out.push(p.to_vec());
        return Ok(());
    };
    // Find the matching close and the top-level commas.
    let (mut depth, mut j, mut commas) = (0usize, start, Vec::new());
    let end = loop {
        j += 1;
        match p.get(j) {
            None => return Err("unclosed '{'".into()),
            Some(b'\\') => j += 1,
            Some(b'{') => depth += 1,
            Some(b'}') if depth == 0 => break j,
            Some(b'}') => depth -= 1,
            Some(b',') if depth == 0 => commas.push(j),
            _ => {}
        }
    };
    let mut bounds = vec![start];
    bounds.extend(commas);
    bounds.push(end);
    for w in bounds.windows(2) {
        let mut alt = p[..start].to_vec();
        alt.extend_from_slice(&p[w[0] + 1..w[1]]);
        alt.extend_from_slice(&p[end + 1..]);
        expand_braces(&alt, out)?;
        if out.len() > MAX_EXPANSIONS {
            return Err(format!("more than {MAX_EXPANSIONS} alternatives"));
        }
    }
    Ok(())
}

/// Splits an absolute, brace-free glob into components.
pub(super) fn compile(p: &[u8]) -> Result<Vec<Comp>, String> {
    let mut comps = Vec::new();
    for c in p.split(|&b| b == b'/') {
        if c.is_empty() {
            continue;
        }
        if c == b"**" {
            if comps.last() != Some(&Comp::AnyDepth) {
                comps.push(Comp::AnyDepth);
            }
        } else if c.iter().any(|b| matches!(b, b'*' | b'?' | b'[' | b'\\')) {
            check_wild(c)?;
            if c.contains(&b'\\') && !c.iter().any(|b| matches!(b, b'*' | b'?' | b'[')) {
                comps.push(Comp::Literal(unescape(c).into()));
            } else {
                comps.push(Comp::Wild(c.into()));
            }
        } else {
            comps.push(Comp::Literal(c.into()));
        }
    }
    Ok(comps)
}

fn unescape(c: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(c.len());
    let mut it = c.iter();
    while let Some(&b) = it.next() {
        if b == b'\\' {
            if let Some(&n) = it.next() {
                out.push(n);
            }
        } else {
            out.push(b);
        }
    }
    out
}

fn check_wild(c: &[u8]) -> Result<(), String> {
    let mut i = 0;
    while i < c.len() {
        match c[i] {
            b'\\' if i + 1 >= c.len() => return Err("dangling '\\'".into()),
            b'\\' => i += 1,
            b'[' => {
                let end = class_end(c, i).ok_or("unclosed '['")?;
                check_class(&c[i + 1..end])?;
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

/// Index of the `]` closing the class opened at `open`.
fn class_end(c: &[u8], open: usize) -> Option<usize> {
    let mut j = open + 1;
    if matches!(c.get(j), Some(b'!' | b'^')) {
        j += 1;
    }
    if c.get(j) == Some(&b']') {
        j += 1;
    }
    while j < c.len() {
        match c[j] {
            b'\\' => j += 1,
            b']' => return Some(j),
            _ => {}
        }
        j += 1;
    }
    None
}

/// Matches glob components against the rest of a path (no leading slash).
/// Running out of pattern matches: a pattern covers what lies beneath.
pub(super) fn match_comps(pat: &[Comp], rest: &[u8]) -> bool {
    let Some((first, more)) = pat.split_first() else {
        return true;
    };
    if let Comp::AnyDepth = first {
        // Try the remaining pattern here and at every deeper component.
        let mut r = rest;
        loop {
            if match_comps(more, r) {
                return true;
            }
            match r.iter().position(|&b| b == b'/') {
                Some(i) => r = &r[i + 1..],
                None => return false,
            }
        }
    }
    if rest.is_empty() {
        return false;
    }
    let (name, after) = match rest.iter().position(|&b| b == b'/') {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, &b""[..]),
    };
    let ok = match first {
        Comp::Literal(l) => **l == *name,
        Comp::Wild(w) => wild_match(w, name),
        Comp::AnyDepth => unreachable!(),
    };
    ok && match_comps(more, after)
}

/// `*`, `?`, `[..]` and `\` within one name; iterative with one backtrack
/// point, so linear in practice.
pub(super) fn wild_match(p: &[u8], s: &[u8]) -> bool {
    let (mut pi, mut si) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        if pi < p.len() {
            match p[pi] {
                b'*' => {
                    while pi < p.len() && p[pi] == b'*' {
                        pi += 1;
                    }
                    star = Some((pi, si));
                    continue;
                }
                b'?' => {
                    pi += 1;
                    si += 1;
                    continue;
                }
                b'[' => {
                    if let Some(end) = class_end(p, pi) {
                        if class_match(&p[pi + 1..end], s[si]) {
                            pi = end + 1;
                            si += 1;
                            continue;
                        }
                    }
                }
                b'\\' if pi + 1 < p.len() && p[pi + 1] == s[si] => {
                    pi += 2;
                    si += 1;
                    continue;
                }
                c if c != b'\\' && c == s[si] => {
                    pi += 1;
                    si += 1;
                    continue;
                }
                _ => {}
            }
        }
        match star {
            Some((sp, ss)) => {
                pi = sp;
                si = ss + 1;
                star = Some((sp, ss + 1));
            }
            None => return false,
        }
    }
    while pi < p.len() && p[pi] == b'*' {
        pi += 1;
    }
    pi == p.len()
}

/// Refuses a range whose low end is above its high end (`[z-a]`): it would
/// match nothing, so a deny rule with that typo would deny nothing.
fn check_class(body: &[u8]) -> Result<(), String> {
    match class_items(body).1.find(|&(lo, hi)| lo > hi) {
        Some((lo, hi)) => Err(format!(
            "invalid range '{}-{}' (its start is after its end)",
            lo.escape_ascii(),
            hi.escape_ascii()
        )),
        None => Ok(()),
    }
}

/// A class body (between `[` and `]`): ranges, `!`/`^` negation, escapes.
fn class_match(body: &[u8], c: u8) -> bool {
    let (neg, mut items) = class_items(body);
    items.any(|(lo, hi)| lo <= c && c <= hi) != neg
}

/// Reads a class body once for matching and for checking: whether it is
/// negated, and its members as inclusive ranges (`a` is `a-a`).
fn class_items(body: &[u8]) -> (bool, impl Iterator<Item = (u8, u8)> + '_) {
    let (neg, body) = match body.first() {
        Some(b'!' | b'^') => (true, &body[1..]),
        _ => (false, body),
    };
    let mut i = 0;
    let items = std::iter::from_fn(move || {
        if i >= body.len() {
            return None;
        }
        let mut lo = body[i];
        if lo == b'\\' && i + 1 < body.len() {
            i += 1;
            lo = body[i];
        }
        if i + 2 < body.len() && body[i + 1] == b'-' {
            let mut hi = body[i + 2];
            let mut step = 3;
            if hi == b'\\' && i + 3 < body.len() {
                hi = body[i + 3];
                step = 4;
            }
            i += step;
            Some((lo, hi))
        } else {
            i += 1;
            Some((lo, lo))
        }
    });
    (neg, items)
}
