//! Writing suggestions as TOML: a new commented policy, or merged into an
//! existing one with its comments kept.

use std::fmt::Write as _;

use super::{shown, Places, Refusal, Suggestion};
use crate::Access;

/// Quotes a string for TOML.
pub fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Text made safe for one comment line: control characters (a newline in
/// a file name would end the comment) become `?`.
fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// The comment line above a suggested rule.
pub fn rule_comment(s: &Suggestion, home: Option<&str>) -> String {
    let what = s.kind.describe();
    let ex = one_line(&shown(&s.example, home));
    if s.covers == 1 && !s.glob {
        what
    } else {
        let n = s.covers;
        let paths = if n == 1 { "path" } else { "paths" };
        format!("{what}: {n} {paths} seen, e.g. {ex}")
    }
}

/// The comment block listing refused accesses.
pub fn refusal_comments(refused: &[Refusal], home: Option<&str>) -> String {
    if refused.is_empty() {
        return String::new();
    }
    let mut o = String::new();
    let _ = writeln!(
        o,
        "\n# WARNING: the run also touched these paths, and no rule here allows them.\n\
         # Credential paths (the secrets preset, deny_always), the trace log and\n\
         # what a deny rule refuses on purpose are never suggested: the policy's\n\
         # author decides on them; find out why the command wants them. A rule\n\
         # naming a directory would allow everything beneath it."
    );
    for r in refused {
        let _ = writeln!(
            o,
            "#   {} {}: {}",
            r.access.as_str(),
            one_line(&shown(&r.path, home)),
            one_line(&r.why)
        );
    }
    o
}

/// A complete commented policy: the workspace as `root`, the system preset,
/// and the suggested allow rules.
pub fn render(
    suggestions: &[Suggestion],
    refused: &[Refusal],
    places: &Places,
    header: &str,
) -> String {
    let home = places.home.as_deref();
    let mut o = String::new();
    for l in header.lines() {
        let _ = writeln!(o, "# {l}");
    }
    let _ = writeln!(
        o,
        "# Review it before use: every allow rule widens what the command may touch.\n\
         \n\
         # The workspace: the command may read and write everything inside it.\n\
         root = {}\n\
         # Installed software (/usr, /lib, the install prefixes of the programs on\n\
         # PATH, the /etc files runtimes need) stays readable: the system preset.\n\
         system = true",
        toml_string(&places.root)
    );
    for access in [Access::Read, Access::Write] {
        let rules: Vec<&Suggestion> = suggestions.iter().filter(|s| s.access == access).collect();
        let _ = writeln!(o, "\n[{}]", access.as_str());
        if access == Access::Read && suggestions.iter().any(|s| s.access == Access::Write) {
            let _ = writeln!(o, "# (paths allowed under [write] may also be read)");
        }
        if rules.is_empty() {
            let _ = writeln!(o, "allow = []");
            continue;
        }
        let _ = writeln!(o, "allow = [");
        for s in rules {
            let _ = writeln!(o, "    # {}", rule_comment(s, home));
            let _ = writeln!(o, "    {},", toml_string(&s.pattern(home)));
        }
        let _ = writeln!(o, "]");
    }
    o.push_str(&refusal_comments(refused, home));
    o
}

/// Adds suggestions to an existing policy, keeping its text and comments:
/// new patterns go at the end of `[read]`/`[write]` `allow` (created when
/// missing), each with its comment; patterns already listed are skipped;
/// `root` is added if the policy has none. Returns the new text.
pub fn merge(
    existing: &str,
    suggestions: &[Suggestion],
    refused: &[Refusal],
    places: &Places,
) -> Result<String, String> {
    use toml_edit::{Array, DocumentMut, Item, Table, Value};
    let home = places.home.as_deref();
    let mut doc: DocumentMut = existing.parse().map_err(|e| format!("{e}"))?;
    if !doc.contains_key("root") {
        doc.insert("root", toml_edit::value(places.root.as_str()));
    }
    for access in [Access::Read, Access::Write] {
        let rules: Vec<&Suggestion> = suggestions.iter().filter(|s| s.access == access).collect();
        if rules.is_empty() {
            continue;
        }
        let name = access.as_str();
        if !doc.contains_key(name) {
            doc.insert(name, Item::Table(Table::new()));
        }
        let table = doc[name]
            .as_table_like_mut()
            .ok_or_else(|| format!("{name} is not a table"))?;
        if table.get("allow").is_none() {
            table.insert("allow", toml_edit::value(Array::new()));
        }
        let arr = table
            .get_mut("allow")
            .and_then(Item::as_array_mut)
            .ok_or_else(|| format!("{name}.allow is not an array"))?;
        for s in rules {
            let pat = s.pattern(home);
            if arr.iter().any(|v| v.as_str() == Some(&pat)) {
                continue;
            }
            let mut v = Value::from(pat);
            v.decor_mut().set_prefix(format!(
                "\n    # {} (added by fsguard suggest)\n    ",
                rule_comment(s, home)
            ));
            arr.push_formatted(v);
        }
        arr.set_trailing("\n");
        arr.set_trailing_comma(true);
    }
    let mut text = doc.to_string();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&refusal_comments(refused, home));
    Ok(text)
}

/// Adds `sockets` (AF_UNIX socket paths and abstract `@names` a run was
/// refused to connect or send to) to the top-level `unix_sockets` list of
/// a policy's TOML `text` (made if missing), each once: they are allowed
/// by `unix_sockets` (`--allow-unix-socket`), never by a `[write]` rule.
pub fn add_unix_sockets(text: &str, sockets: &[String]) -> Result<String, String> {
    use toml_edit::{Array, DocumentMut, Item};
    if sockets.is_empty() {
        return Ok(text.to_string());
    }
    let mut doc: DocumentMut = text.parse().map_err(|e| format!("{e}"))?;
    if doc.get("unix_sockets").is_none() {
        doc.insert("unix_sockets", toml_edit::value(Array::new()));
        if let Some(mut k) = doc.key_mut("unix_sockets") {
            k.leaf_decor_mut().set_prefix(
                "\n# AF_UNIX sockets the command connected or sent to \
                 (--allow-unix-socket):\n",
            );
        }
    }
    let arr = doc
        .get_mut("unix_sockets")
        .and_then(Item::as_array_mut)
        .ok_or("unix_sockets is not an array")?;
    for s in sockets {
        if !arr.iter().any(|v| v.as_str() == Some(s.as_str())) {
            arr.push(s.as_str());
        }
    }
    Ok(doc.to_string())
}
