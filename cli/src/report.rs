//! `fsguard run --report FILE|-`: at exit, a table of the accesses the
//! policy refused (in audit mode: would have refused), grouped by rule and
//! directory, with counts and the first example, largest groups first, and
//! the `fsguard explain` command that shows the reasoning for the top ones.

use std::collections::HashMap;
use std::io::{IsTerminal, Write};

use fsguard_policy::suggest::Places;
use fsguard_policy::{Access, ListKind, Mode, Policy, Rule, Settings};

use crate::{Cli, Flag};

/// Rows shown; the rest are counted.
const MAX_ROWS: usize = 30;
/// Rows that get an `fsguard explain` line.
const HINTS: usize = 3;
/// Directories are cut to this many components below their anchor (home,
/// a temp dir, `/`); a cache is one group.
const GROUP_DEPTH: usize = 3;

/// One group of refused accesses.
#[derive(Debug, PartialEq, Eq)]
pub struct Row {
    pub count: u64,
    pub access: String,
    pub rule: String,
    pub dir: String,
    pub first: String,
}

/// Groups the supervisor's events (`[(audit) ]call access path`, counted)
/// by the rule that refused them and their directory, largest first.
pub fn rows(events: &[(String, u64)], settings: &Settings, places: &Places) -> Vec<Row> {
    let policy = Policy::new(settings.clone()).ok();
    let mut out: Vec<Row> = Vec::new();
    let mut index: HashMap<(String, String, String), usize> = HashMap::new();
    for (ev, n) in events {
        let internal = ev.strip_prefix("(internal) ");
        let kernel = ev.strip_prefix("(landlock) ");
        let ev = internal
            .or(kernel)
            .unwrap_or_else(|| ev.strip_prefix("(audit) ").unwrap_or(ev));
        let mut parts = ev.splitn(3, ' ');
        let (Some(call), Some(access), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        // Decided again, except a check that failed inside the library,
        // which no policy decides.
        let rule = match (internal, kernel) {
            (Some(_), _) => Rule::InternalError.to_string(),
            (_, Some(_)) => Rule::Landlock.to_string(),
            _ => rule_of(policy.as_ref(), call, access, path),
        };
        let dir = group(path, places);
        let key = (rule.clone(), access.to_string(), dir.clone());
        match index.get(&key) {
            Some(&i) => out[i].count += n,
            None => {
                index.insert(key, out.len());
                out.push(Row {
                    count: *n,
                    access: access.to_string(),
                    rule,
                    dir,
                    first: path.to_string(),
                });
            }
        }
    }
    // Stable: equal counts keep the order they were first seen in.
    out.sort_by_key(|r| std::cmp::Reverse(r.count));
    out
}

/// The rule that refused an access, decided again from the same policy (the
/// report channel carries no rule).
fn rule_of(policy: Option<&Policy>, call: &str, access: &str, path: &str) -> String {
    let (Some(p), Some(a)) = (policy, Access::parse(access)) else {
        return "?".into();
    };
    if !path.starts_with('/') {
        return "unresolved".into();
    }
    let d = p.decide(a, path.as_bytes());
    if !d.allowed {
        return d.rule.to_string();
    }
    if call.starts_with("rename") || call.starts_with("link") {
        if let Some(r) = p.protected(path.as_bytes()) {
            return r.to_string();
        }
    }
    if a == Access::Exec {
        return "unguarded_exec".into();
    }
    "unresolved".into()
}

/// The summary's last lines, about what was refused: for a refusal at the
/// policy's boundary (`root`, `not_allowed`, `readonly`), the option that
/// would allow it and its config line, `to allow: --allow-write P  (config:
/// …)`, framed so that the command it makes keeps the policy (the option
/// adds to it); for a refusal by a rule the policy's author wrote (`deny`,
/// `deny_always`, `secrets`, the log), the rule, fixed by its author, and
/// never an option that would lift it. One line per distinct hint or rule,
/// at most `max` of each.
pub fn advice(policy: &Policy, events: &[(String, u64)], max: usize) -> Vec<String> {
    let mut allow: Vec<String> = Vec::new();
    let mut fixed: Vec<(String, String)> = Vec::new();
    for (ev, _) in events {
        // No rule of the policy refused these: none lifts them.
        if ev.starts_with("(internal) ") || ev.starts_with("(landlock) ") {
            continue;
        }
        let ev = ev.strip_prefix("(audit) ").unwrap_or(ev);
        let mut it = ev.splitn(3, ' ');
        let (Some(call), Some(access), Some(path)) = (it.next(), it.next(), it.next()) else {
            continue;
        };
        let Some(a) = Access::parse(access) else {
            continue;
        };
        // A namespace, a mount, another process: no rule allows them.
        if fsguard_policy::process::REFUSED_WHATEVER_THE_POLICY.contains(&call) {
            continue;
        }
        let p = path.as_bytes();
        // A connect or send to a socket is decided, and lifted, as one.
        let socket = fsguard_policy::sockets::decided_as_socket(call, p);
        let d = if socket {
            policy.decide_socket(p)
        } else {
            policy.decide(a, p)
        };
        let rule = if !d.allowed {
            d.rule
        } else if call.starts_with("rename") || call.starts_with("link") {
            match policy.protected(path.as_bytes()) {
                Some(r) => r,
                None => continue,
            }
        } else {
            continue;
        };
        if rule.authors() {
            let r = rule.to_string();
            if !fixed.iter().any(|(x, _)| *x == r) {
                fixed.push((r, format!("{access} {path}")));
            }
        } else if let Some(h) = if socket {
            policy.socket_hint(p, rule)
        } else {
            policy.hint(a, p, rule)
        } {
            let line = format!("{h}  (config: {})", h.toml());
            if !allow.contains(&line) {
                allow.push(line);
            }
        }
    }
    let mut out: Vec<String> = Vec::new();
    if !allow.is_empty() {
        out.push(
            "fsguard: an option below adds to this run's policy: give it with the same \
             options (its config line goes in the policy file)"
                .into(),
        );
    }
    out.extend(
        allow
            .iter()
            .take(max)
            .map(|l| format!("fsguard: to allow: {l}")),
    );
    out.extend(fixed.iter().take(max).map(|(r, first)| {
        format!("fsguard: refused on purpose by {r} (fixed by the policy's author); first: {first}")
    }));
    out
}

/// The directory an access is grouped under.
fn group(path: &str, places: &Places) -> String {
    if let Some((dir, _)) = places.cache_of(path) {
        return dir;
    }
    let parent = match path.rfind('/') {
        Some(0) => "/",
        Some(i) => &path[..i],
        None => return path.to_string(),
    };
    let anchor = places.anchor(parent);
    let base = anchor.split('/').filter(|c| !c.is_empty()).count();
    let comps: Vec<&str> = parent.split('/').filter(|c| !c.is_empty()).collect();
    if comps.len() <= base + GROUP_DEPTH {
        return parent.to_string();
    }
    format!("/{}", comps[..base + GROUP_DEPTH].join("/"))
}

fn tilde(p: &str, home: Option<&str>) -> String {
    match home {
        Some(h) if h != "/" => match p.strip_prefix(h) {
            Some("") => "~".into(),
            Some(r) if r.starts_with('/') => format!("~{r}"),
            _ => p.to_string(),
        },
        _ => p.to_string(),
    }
}

/// A word as the shell reads it back.
pub(crate) fn shell_word(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-=+:,%@".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// The policy options of this run, as `fsguard explain` takes them.
pub fn policy_args(cli: &Cli) -> Vec<String> {
    let mut v = Vec::new();
    if let Some(c) = &cli.config {
        v.push(format!("--config {}", shell_word(&c.display().to_string())));
    }
    for f in &cli.flags {
        match f {
            Flag::Readonly(None) => v.push("--readonly".into()),
            Flag::Readonly(Some(r)) => v.push(format!("--readonly={}", shell_word(r))),
            Flag::Root(r) => v.push(format!("--root {}", shell_word(r))),
            Flag::Rule(a, k, p) => {
                let list = if *a == Access::Write { "write" } else { "read" };
                let name = match k {
                    ListKind::Allow => format!("--allow-{list}"),
                    ListKind::Deny => format!("--deny-{list}"),
                    ListKind::DenyAlways => format!("--deny-{list}-always"),
                };
                v.push(format!("{name} {}", shell_word(p)));
            }
            Flag::NoSecrets => v.push("--no-secrets".into()),
            // explain decides reads and writes of files; a socket allowance
            // changes none.
            Flag::Audit
            | Flag::Log(_)
            | Flag::LogFormat(_)
            | Flag::UnguardedExec(_)
            | Flag::UnixSocket(_) => {}
        }
    }
    v
}

/// The report as text; `colour` adds ANSI styles.
pub fn render(
    rows: &[Row],
    audit: bool,
    home: Option<&str>,
    explain_args: &[String],
    colour: bool,
) -> String {
    let style = |code: &str, s: &str| {
        if colour {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    };
    let total: u64 = rows.iter().map(|r| r.count).sum();
    let verb = if audit {
        "would have been blocked (audit)"
    } else {
        "blocked"
    };
    let mut o = String::new();
    if rows.is_empty() {
        o.push_str(&format!("fsguard report: no access {verb}\n"));
        return o;
    }
    o.push_str(&style(
        "1",
        &format!(
            "fsguard report: {total} access{} {verb}, in {} group{}",
            if total == 1 { "" } else { "es" },
            rows.len(),
            if rows.len() == 1 { "" } else { "s" }
        ),
    ));
    o.push('\n');
    let shown: Vec<[String; 5]> = rows
        .iter()
        .take(MAX_ROWS)
        .map(|r| {
            [
                r.count.to_string(),
                r.access.clone(),
                r.rule.clone(),
                tilde(&r.dir, home),
                tilde(&r.first, home),
            ]
        })
        .collect();
    let head = ["COUNT", "ACCESS", "RULE", "DIRECTORY", "FIRST"];
    let mut w = head.map(|h| h.chars().count());
    for r in &shown {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let line = |cells: [&str; 5]| {
        format!(
            "  {:>w0$}  {:<w1$}  {:<w2$}  {:<w3$}  {}",
            cells[0],
            cells[1],
            cells[2],
            cells[3],
            cells[4],
            w0 = w[0],
            w1 = w[1],
            w2 = w[2],
            w3 = w[3]
        )
    };
    o.push_str(&style("1", line(head).trim_end()));
    o.push('\n');
    let rule_colour = if audit { "33" } else { "31" };
    for r in &shown {
        let text = line([&r[0], &r[1], &r[2], &r[3], &r[4]]);
        // Colour the rule cell only; padding stays outside the escapes.
        let start = 2 + w[0] + 2 + w[1] + 2;
        let (a, rest) = text.split_at(start);
        let (cell, b) = rest.split_at(r[2].len());
        o.push_str(&format!("{a}{}{b}\n", style(rule_colour, cell)));
    }
    if rows.len() > MAX_ROWS {
        o.push_str(&format!(
            "  … and {} more group{}\n",
            rows.len() - MAX_ROWS,
            if rows.len() - MAX_ROWS == 1 { "" } else { "s" }
        ));
    }
    let args = explain_args.join(" ");
    for r in rows.iter().take(HINTS) {
        let access = if r.access == "exec" {
            "exec"
        } else {
            &r.access
        };
        let cmd = format!(
            "fsguard explain {args}{}{access} {}",
            if args.is_empty() { "" } else { " " },
            shell_word(&r.first)
        );
        o.push_str(&style("2", &format!("  why: {cmd}")));
        o.push('\n');
    }
    o
}

/// Writes the report for `events` to `target` (`-`: standard error).
pub(crate) fn write(target: &str, events: &[(String, u64)], settings: &Settings, cli: &Cli) {
    let home = std::env::var("HOME")
        .ok()
        .filter(|h| !h.is_empty())
        .map(|h| fsguard_policy::canonical_prefix(std::path::Path::new(&h)))
        .map(|h| h.display().to_string());
    let places = Places {
        home: home.clone(),
        root: settings.root.clone().unwrap_or_default(),
        temp_dirs: ["/tmp", "/var/tmp", "/dev/shm"]
            .iter()
            .map(|t| fsguard_policy::canonical_prefix(std::path::Path::new(t)))
            .map(|t| t.display().to_string())
            .collect(),
        protected: Vec::new(),
    };
    let rows = rows(events, settings, &places);
    let audit = settings.mode == Mode::Audit;
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let args = policy_args(cli);
    let result = if target == "-" {
        let mut err = std::io::stderr().lock();
        let colour = !no_color && err.is_terminal();
        err.write_all(render(&rows, audit, home.as_deref(), &args, colour).as_bytes())
    } else {
        std::fs::File::create(target).and_then(|mut f| {
            let colour = !no_color && f.is_terminal();
            f.write_all(render(&rows, audit, home.as_deref(), &args, colour).as_bytes())
        })
    };
    if let Err(e) = result {
        eprintln!("fsguard: error: --report {target}: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> Settings {
        Settings {
            root: Some("/ws".into()),
            secret_paths: vec!["/home/u/.ssh".into()],
            ..Settings::default()
        }
    }

    fn places() -> Places {
        Places {
            home: Some("/home/u".into()),
            root: "/ws".into(),
            temp_dirs: vec!["/tmp".into()],
            protected: Vec::new(),
        }
    }

    fn ev(v: &[(&str, u64)]) -> Vec<(String, u64)> {
        v.iter().map(|(e, n)| (e.to_string(), *n)).collect()
    }

    #[test]
    fn groups_by_rule_and_directory_largest_first() {
        let events = ev(&[
            ("(audit) open read /etc/passwd", 1),
            ("(audit) open write /home/u/.cache/pip/http/a/b/c", 2),
            ("(audit) open write /home/u/.cache/pip/wheels/x", 3),
            ("(audit) open read /home/u/.ssh/id_rsa", 1),
            ("(audit) mkdir write /tmp/a/b/c/d/e", 1),
            ("(audit) open read /etc/group", 1),
        ]);
        let r = rows(&events, &settings(), &places());
        let got: Vec<(u64, &str, &str, &str, &str)> = r
            .iter()
            .map(|r| {
                (
                    r.count,
                    r.access.as_str(),
                    r.rule.as_str(),
                    r.dir.as_str(),
                    r.first.as_str(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (
                    5,
                    "write",
                    "root",
                    "/home/u/.cache/pip",
                    "/home/u/.cache/pip/http/a/b/c"
                ),
                (2, "read", "root", "/etc", "/etc/passwd"),
                (
                    1,
                    "read",
                    "secrets:\"/home/u/.ssh\"",
                    "/home/u/.ssh",
                    "/home/u/.ssh/id_rsa"
                ),
                (1, "write", "root", "/tmp/a/b/c", "/tmp/a/b/c/d/e"),
            ]
        );
    }

    #[test]
    fn a_check_that_failed_in_the_library_is_its_own_rule() {
        // Inside the root, so deciding again would allow it.
        let events = ev(&[("(internal) mkdir write /ws/d", 1)]);
        let r = rows(&events, &settings(), &places());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].rule.as_str(), r[0].first.as_str()),
            ("internal_error", "/ws/d")
        );
    }

    #[test]
    fn renders_a_table_with_hints_and_colour_only_when_asked() {
        let events = ev(&[
            ("open write /home/u/.cache/pip/x", 4),
            ("open read /etc/passwd", 1),
        ]);
        let r = rows(&events, &settings(), &places());
        let args = vec!["--root /ws".to_string()];
        let text = render(&r, false, Some("/home/u"), &args, false);
        assert!(!text.contains('\x1b'), "{text}");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "fsguard report: 5 accesses blocked, in 2 groups");
        assert!(
            lines[1].starts_with("  COUNT  ACCESS  RULE  DIRECTORY"),
            "{text}"
        );
        assert!(
            lines[2].starts_with("      4  write   root  ~/.cache/pip  ~/.cache/pip/x"),
            "{text}"
        );
        assert!(
            text.contains("  why: fsguard explain --root /ws write /home/u/.cache/pip/x\n"),
            "{text}"
        );
        assert!(text.contains("  why: fsguard explain --root /ws read /etc/passwd\n"));
        let coloured = render(&r, true, Some("/home/u"), &args, true);
        assert!(coloured.contains("\x1b[33mroot\x1b[0m"), "{coloured}");
        assert!(coloured.contains("would have been blocked (audit)"));
        assert_eq!(
            render(&[], true, None, &[], false),
            "fsguard report: no access would have been blocked (audit)\n"
        );
    }
}
