//! The `[fsguard] blocked ...` trace lines of a child's stderr, and the
//! expectations a test checks them against.

use super::process::Out;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

/// The errno of a refused call.
pub const EACCES: i32 = 13;

#[derive(Debug, Clone)]
pub struct Trace {
    pub event: String,
    pub call: String,
    pub access: String,
    pub fields: BTreeMap<String, String>,
    pub raw: String,
}

impl Trace {
    pub fn field(&self, k: &str) -> Option<&str> {
        self.fields.get(k).map(|s| s.as_str())
    }
}

/// Parse the `[fsguard] <event> ...` lines of `text` whose event is `event`.
/// Lines that contain ` <event> ` but do not parse are returned with
/// call/access "<unparsed>" so that they still count (and fail matches).
pub fn traces(text: &str, event: &str) -> Vec<Trace> {
    let needle = format!(" {event} ");
    text.lines()
        .filter(|l| l.contains(&needle))
        .map(|l| {
            parse_trace(l).unwrap_or_else(|| Trace {
                event: event.to_string(),
                call: "<unparsed>".into(),
                access: "<unparsed>".into(),
                fields: BTreeMap::new(),
                raw: l.to_string(),
            })
        })
        .collect()
}

pub fn parse_trace(line: &str) -> Option<Trace> {
    let start = line.find("[fsguard] ")?;
    let rest = &line[start + "[fsguard] ".len()..];
    let toks = tokenize(rest)?;
    if toks.len() < 3 {
        return None;
    }
    let mut fields = BTreeMap::new();
    for t in &toks[3..] {
        let (k, v) = t.split_once('=')?;
        fields.insert(k.to_string(), v.to_string());
    }
    Some(Trace {
        event: toks[0].clone(),
        call: toks[1].clone(),
        access: toks[2].clone(),
        fields,
        raw: line.to_string(),
    })
}

/// Split on spaces; `key="quoted \"value\""` is unescaped.
fn tokenize(s: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = s.chars().peekable();
    let mut in_q = false;
    let mut have = false;
    while let Some(c) = chars.next() {
        if in_q {
            match c {
                '"' => in_q = false,
                '\\' => match chars.next()? {
                    'n' => cur.push('\n'),
                    't' => cur.push('\t'),
                    'r' => cur.push('\r'),
                    'x' => {
                        let h: String = [chars.next()?, chars.next()?].iter().collect();
                        cur.push(u8::from_str_radix(&h, 16).ok()? as char);
                    }
                    o => cur.push(o),
                },
                o => cur.push(o),
            }
        } else if c == ' ' {
            if have {
                out.push(std::mem::take(&mut cur));
                have = false;
            }
        } else if c == '"' {
            in_q = true;
            have = true;
        } else {
            cur.push(c);
            have = true;
        }
    }
    if in_q {
        return None;
    }
    if have {
        out.push(cur);
    }
    Some(out)
}

/// One expected trace line.
#[derive(Debug, Clone)]
pub struct Expect {
    /// Acceptable call names (e.g. ["link", "linkat"]).
    pub calls: Vec<String>,
    pub access: String,
    pub path: PathBuf,
    pub dest: Option<PathBuf>,
    pub rule: String,
}

impl Expect {
    pub fn new(calls: &str, access: &str, path: impl Into<PathBuf>, rule: &str) -> Expect {
        Expect {
            calls: calls.split('|').map(str::to_string).collect(),
            access: access.to_string(),
            path: path.into(),
            dest: None,
            rule: rule.to_string(),
        }
    }

    pub fn dest(mut self, d: impl Into<PathBuf>) -> Expect {
        self.dest = Some(d.into());
        self
    }

    /// Why `t` does not match, or None.
    pub fn mismatch(&self, t: &Trace) -> Option<String> {
        let mut why = Vec::new();
        if t.event != "blocked" {
            why.push(format!("event {:?} != \"blocked\"", t.event));
        }
        if !self.calls.contains(&t.call) {
            why.push(format!("call {:?} not one of {:?}", t.call, self.calls));
        }
        if t.access != self.access {
            why.push(format!("access {:?} != {:?}", t.access, self.access));
        }
        let want_path = self.path.to_string_lossy();
        if t.field("path") != Some(&*want_path) {
            why.push(format!("path {:?} != {:?}", t.field("path"), want_path));
        }
        if let Some(d) = &self.dest {
            let want = d.to_string_lossy();
            if t.field("dest") != Some(&*want) {
                why.push(format!("dest {:?} != {:?}", t.field("dest"), want));
            }
        }
        if t.field("rule") != Some(self.rule.as_str()) {
            why.push(format!("rule {:?} != {:?}", t.field("rule"), self.rule));
        }
        if why.is_empty() {
            None
        } else {
            Some(why.join("; "))
        }
    }

    pub fn show(&self) -> String {
        let mut s = format!(
            "blocked {} {} path={}",
            self.calls.join("|"),
            self.access,
            self.path.display()
        );
        if let Some(d) = &self.dest {
            let _ = write!(s, " dest={}", d.display());
        }
        let _ = write!(s, " rule={}", self.rule);
        s
    }
}

/// Check that the blocked trace lines are exactly `want` (in order), or
/// exactly one of the alternative sequences in `alts`.
pub fn check_traces(got: &[Trace], alts: &[Vec<Expect>]) -> Result<(), String> {
    let mut reasons = Vec::new();
    for want in alts {
        if got.len() != want.len() {
            reasons.push(format!(
                "expected {} blocked line(s) [{}], got {}",
                want.len(),
                want.iter()
                    .map(|e| e.show())
                    .collect::<Vec<_>>()
                    .join(" ; "),
                got.len()
            ));
            continue;
        }
        let mism: Vec<String> = want
            .iter()
            .zip(got)
            .enumerate()
            .filter_map(|(i, (w, g))| {
                w.mismatch(g).map(|m| {
                    format!(
                        "line {}: {m}\n      got:  {}\n      want: {}",
                        i + 1,
                        g.raw,
                        w.show()
                    )
                })
            })
            .collect();
        if mism.is_empty() {
            return Ok(());
        }
        reasons.push(mism.join("\n    "));
    }
    Err(reasons.join("\n  or: "))
}

/// Convenience: assert (panicking with the child's output) that `out` has
/// exactly the expected blocked lines.
pub fn assert_traces(out: &Out, want: &[Expect]) {
    if let Err(e) = check_traces(&out.blocked(), &[want.to_vec()]) {
        panic!("trace lines do not match:\n  {e}\n{}", out.describe());
    }
}

/// Assert no blocked lines at all.
pub fn assert_no_blocked(out: &Out) {
    let b = out.blocked();
    if !b.is_empty() {
        panic!(
            "expected no blocked trace line, got {}:\n{}",
            b.len(),
            out.describe()
        );
    }
}
