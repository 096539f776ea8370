//! Package managers' registry configuration without its credentials.
//!
//! A user's `~/.npmrc`, `~/.yarnrc.yml`, `pip.conf`, `~/.cargo/config.toml`,
//! Maven's `settings.xml` and `~/.gradle/gradle.properties` mix settings a
//! guarded install needs (the registry URL, scopes, mirrors) with secrets
//! (tokens, passwords). `fsguard run` hands the program a copy made by
//! [`sanitize`], which removes every credential, and keeps the original out
//! of its reach. The sanitisers are conservative: a key that may hold a
//! secret is dropped, credentials in a URL (`https://user:pass@host`) are
//! removed from it, and a file that cannot be read with certainty (not
//! UTF-8, not parseable, a construct the sanitiser does not follow) is an
//! error: no copy at all.

/// The configuration formats [`sanitize`] understands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigKind {
    /// npm's `.npmrc` (ini: `key=value`), also read by pnpm and yarn v1.
    Npmrc,
    /// yarn berry's `.yarnrc.yml` (YAML).
    YarnrcYml,
    /// pip's `pip.conf` (configparser ini).
    PipConf,
    /// cargo's `config.toml` (TOML).
    CargoToml,
    /// Maven's `settings.xml` (XML).
    MavenSettings,
    /// Gradle's `gradle.properties` (Java properties).
    GradleProperties,
}

/// A registry configuration file `fsguard run` hands as a sanitised copy.
#[derive(Clone, Copy, Debug)]
pub struct RegistryConfig {
    /// Its path below `$HOME`.
    pub home_path: &'static str,
    /// A variable naming the file itself instead (`npm_config_userconfig`,
    /// `PIP_CONFIG_FILE`): when set, that file is read, and the one below
    /// `$HOME` is guarded too.
    pub file_var: Option<&'static str>,
    /// A variable naming the directory the file is in instead of
    /// `$HOME/<its directory>` (`CARGO_HOME`, `GRADLE_USER_HOME`).
    pub dir_var: Option<&'static str>,
    /// Its format.
    pub kind: ConfigKind,
    /// Where the copy goes, below the private `TMPDIR`; `None`: the tool
    /// cannot be pointed at a copy (yarn berry reads `~/.yarnrc.yml` from
    /// the home directory only), so the original is only guarded.
    pub copy: Option<&'static str>,
    /// The variable pointing the tool at the copy (`None`: the copy lies
    /// where the tool looks through a redirected home, such as
    /// `CARGO_HOME`, `GRADLE_USER_HOME` or Maven's `user.home`).
    pub var: Option<&'static str>,
}

const fn config(home_path: &'static str, kind: ConfigKind) -> RegistryConfig {
    RegistryConfig {
        home_path,
        file_var: None,
        dir_var: None,
        kind,
        copy: None,
        var: None,
    }
}

/// The files `fsguard run` hands without their credentials (with the
/// `cache` and `secrets` presets). Each existing one joins the run's
/// `secrets`; the first existing one of an entry is copied. Two entries
/// with one `copy` (pip's two locations): the first found wins.
pub const REGISTRY_CONFIGS: &[RegistryConfig] = &[
    RegistryConfig {
        file_var: Some("npm_config_userconfig"),
        copy: Some(".npmrc"),
        var: Some("npm_config_userconfig"),
        ..config(".npmrc", ConfigKind::Npmrc)
    },
    config(".yarnrc.yml", ConfigKind::YarnrcYml),
    RegistryConfig {
        file_var: Some("PIP_CONFIG_FILE"),
        copy: Some("pip.conf"),
        var: Some("PIP_CONFIG_FILE"),
        ..config(".config/pip/pip.conf", ConfigKind::PipConf)
    },
    RegistryConfig {
        copy: Some("pip.conf"),
        var: Some("PIP_CONFIG_FILE"),
        ..config(".pip/pip.conf", ConfigKind::PipConf)
    },
    RegistryConfig {
        dir_var: Some("CARGO_HOME"),
        copy: Some(".cargo/config.toml"),
        ..config(".cargo/config.toml", ConfigKind::CargoToml)
    },
    RegistryConfig {
        dir_var: Some("CARGO_HOME"),
        copy: Some(".cargo/config"),
        ..config(".cargo/config", ConfigKind::CargoToml)
    },
    // Maven finds both below the JVM's `user.home`, which the CLI points
    // at the private TMPDIR (`-Duser.home` in `MAVEN_OPTS`): Maven 3.8
    // reads no variable for its settings file.
    RegistryConfig {
        copy: Some(".m2/settings.xml"),
        ..config(".m2/settings.xml", ConfigKind::MavenSettings)
    },
    RegistryConfig {
        copy: Some(".m2/toolchains.xml"),
        ..config(".m2/toolchains.xml", ConfigKind::MavenSettings)
    },
    RegistryConfig {
        dir_var: Some("GRADLE_USER_HOME"),
        copy: Some(".gradle/gradle.properties"),
        ..config(".gradle/gradle.properties", ConfigKind::GradleProperties)
    },
];

/// The file's contents without credentials, or why it cannot be copied.
pub fn sanitize(kind: ConfigKind, text: &[u8]) -> Result<Vec<u8>, String> {
    let text = std::str::from_utf8(text).map_err(|_| "not UTF-8".to_string())?;
    if text.contains('\0') {
        return Err("a NUL byte".into());
    }
    let out = match kind {
        ConfigKind::Npmrc => npmrc(text)?,
        ConfigKind::YarnrcYml => yarnrc(text)?,
        ConfigKind::PipConf => pip_conf(text)?,
        ConfigKind::CargoToml => cargo_toml(text)?,
        ConfigKind::MavenSettings => maven_settings(text)?,
        ConfigKind::GradleProperties => gradle_properties(text)?,
    };
    Ok(out.into_bytes())
}

/// Words that make a key a credential wherever they appear in its name.
const SECRET_WORDS: &[&str] = &[
    "auth",
    "token",
    "pass",
    "secret",
    "credential",
    "apikey",
    "api_key",
    "api-key",
    "privatekey",
    "private_key",
    "private-key",
    "signing",
    "cookie",
    "session",
];

/// Names (the key's last part, after `:`, `.`, `-` or `_`) that hold a
/// credential or identify one.
const SECRET_NAMES: &[&str] = &[
    "user", "username", "login", "email", "key", "keyid", "keyfile", "otp",
];

/// Whether a configuration key may hold a credential (when unsure: yes).
pub fn is_secret_key(key: &str) -> bool {
    let k = key.trim().to_ascii_lowercase();
    if SECRET_WORDS.iter().any(|w| k.contains(w)) {
        return true;
    }
    k.split([':', '.', '-', '_', '/'])
        .any(|part| SECRET_NAMES.contains(&part))
        || SECRET_NAMES
            .iter()
            .any(|n| k.ends_with(n) && k.len() > n.len() && is_camel_tail(key.trim(), n))
}

/// Whether `key` ends in `name` as a camel-case word (`mavenUser`,
/// `nexusUsername`).
fn is_camel_tail(key: &str, name: &str) -> bool {
    let start = key.len() - name.len();
    key.as_bytes()
        .get(start)
        .is_some_and(|b| b.is_ascii_uppercase())
}

/// `s` with the user information of every URL removed
/// (`https://user:pass@host/x` → `https://host/x`).
pub fn strip_url_credentials(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("://") {
        let (head, tail) = rest.split_at(i + 3);
        out.push_str(head);
        let end = tail
            .find(|c: char| {
                matches!(c, '/' | '?' | '#' | '"' | '\'' | '<' | '>' | '`') || c.is_whitespace()
            })
            .unwrap_or(tail.len());
        let authority = &tail[..end];
        match authority.rfind('@') {
            Some(at) => out.push_str(&authority[at + 1..]),
            None => out.push_str(authority),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// `user:pass@host:port` (libcurl's proxy form, no scheme) → `host:port`.
fn strip_bare_userinfo(s: &str) -> String {
    match s.rfind('@') {
        Some(at) if !s.contains("://") && s[..at].contains(':') && !s[..at].contains('/') => {
            s[at + 1..].to_string()
        }
        _ => s.to_string(),
    }
}

/// Whether a kept line still names a credential (a key the line-based
/// sanitisers did not recognise as one): the file is then not copied.
fn holds_secret_marker(line: &str) -> bool {
    let l = line.to_ascii_lowercase();
    ["_auth", "authtoken", "authident", "password", "passphrase"]
        .iter()
        .any(|m| l.contains(m))
}

/// npm's ini: `key=value` lines, `;` and `#` comments, `[sections]`. A key
/// scoped to a registry (`//host/:…`) is always an auth setting.
fn npmrc(text: &str) -> Result<String, String> {
    let mut out = String::new();
    for (n, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with(';') || t.starts_with('#') {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        if t.starts_with('[') {
            if !t.ends_with(']') {
                return Err(format!("line {}: a section without `]`", n + 1));
            }
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let key = t.split('=').next().unwrap_or(t);
        if key.trim_start().starts_with("//") || is_secret_key(key) {
            continue;
        }
        let kept = strip_url_credentials(line);
        if holds_secret_marker(&kept) {
            return Err(format!(
                "line {}: a credential the sanitiser cannot remove",
                n + 1
            ));
        }
        out.push_str(&kept);
        out.push('\n');
    }
    Ok(out)
}

/// configparser's ini: `[section]`, `key = value` or `key: value`, indented
/// continuation lines belonging to the key above.
fn pip_conf(text: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut in_section = false;
    let mut dropping = false;
    for (n, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with(';') || t.starts_with('#') {
            out.push('\n');
            continue;
        }
        let indented = line.starts_with([' ', '\t']);
        if indented && in_section {
            // A continuation of the key above.
            if !dropping {
                out.push_str(&strip_url_credentials(line));
                out.push('\n');
            }
            continue;
        }
        if t.starts_with('[') {
            if !t.ends_with(']') {
                return Err(format!("line {}: a section without `]`", n + 1));
            }
            in_section = true;
            dropping = false;
            out.push_str(line);
            out.push('\n');
            continue;
        }
        if !in_section {
            return Err(format!("line {}: a key before any [section]", n + 1));
        }
        let key = t.split(['=', ':']).next().unwrap_or(t);
        dropping = is_secret_key(key);
        if !dropping {
            out.push_str(&strip_url_credentials(line));
            out.push('\n');
        }
    }
    if out.lines().any(holds_secret_marker) {
        return Err("a credential the sanitiser cannot remove".into());
    }
    Ok(out)
}

/// cargo's TOML: parsed, every secret key dropped at any depth, URLs'
/// credentials removed, written back.
fn cargo_toml(text: &str) -> Result<String, String> {
    let mut v: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        e.message().lines().next().unwrap_or("not TOML").to_string()
    })?;
    fn clean(v: &mut toml::Value) {
        match v {
            toml::Value::String(s) => *s = strip_bare_userinfo(&strip_url_credentials(s)),
            toml::Value::Array(a) => a.iter_mut().for_each(clean),
            toml::Value::Table(t) => clean_table(t),
            _ => {}
        }
    }
    fn clean_table(t: &mut toml::Table) {
        t.retain(|k, _| !is_secret_key(k));
        t.iter_mut().for_each(|(_, v)| clean(v));
    }
    clean_table(&mut v);
    toml::to_string(&v).map_err(|e| e.to_string())
}

/// YARN's YAML, line by line: a secret key's line is dropped with the
/// lines indented below it (its value); flow collections, tabs and
/// multi-line constructs the sanitiser cannot follow on a kept line make
/// the file an error.
fn yarnrc(text: &str) -> Result<String, String> {
    let mut out = String::new();
    // The indentation of the key being dropped, while its value lasts.
    let mut dropping: Option<usize> = None;
    for (n, line) in text.lines().enumerate() {
        let t = line.trim_start_matches(' ');
        let indent = line.len() - t.len();
        if t.starts_with('\t') {
            return Err(format!("line {}: a tab in the indentation", n + 1));
        }
        if let Some(d) = dropping {
            if t.trim().is_empty() || indent > d {
                continue;
            }
            dropping = None;
        }
        let body = t.trim();
        if body.is_empty() || body.starts_with('#') {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let item = body.strip_prefix("- ").unwrap_or(body);
        // The key: up to the first `: ` or a final `:` (quoted or not).
        let key = item
            .find(": ")
            .map(|i| &item[..i])
            .or_else(|| item.strip_suffix(':'));
        if let Some(k) = key {
            let k = k.trim_matches(['"', '\'']);
            if is_secret_key(k) {
                dropping = Some(indent);
                continue;
            }
        }
        if item.replace("${", "").contains('{') {
            return Err(format!("line {}: a flow mapping", n + 1));
        }
        let kept = strip_url_credentials(line);
        if holds_secret_marker(&kept) {
            return Err(format!(
                "line {}: a credential the sanitiser cannot remove",
                n + 1
            ));
        }
        out.push_str(&kept);
        out.push('\n');
    }
    Ok(out)
}

/// Java properties: `key=value`, `key: value` or `key value`, `#` and `!`
/// comments, a line ending in an odd number of `\` continued on the next.
fn gradle_properties(text: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut continued = false;
    let mut dropping = false;
    for line in text.lines() {
        let t = line.trim_start();
        let cont = line.bytes().rev().take_while(|&b| b == b'\\').count() % 2 == 1;
        if continued {
            continued = cont;
            if !dropping {
                out.push_str(&strip_url_credentials(line));
                out.push('\n');
            }
            continue;
        }
        continued = cont;
        if t.is_empty() || t.starts_with('#') || t.starts_with('!') {
            dropping = false;
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let end = t
            .find(|c: char| c == '=' || c == ':' || c.is_whitespace())
            .unwrap_or(t.len());
        dropping = is_secret_key(&t[..end]);
        if !dropping {
            out.push_str(&strip_url_credentials(line));
            out.push('\n');
        }
    }
    if out.lines().any(holds_secret_marker) {
        return Err("a credential the sanitiser cannot remove".into());
    }
    Ok(out)
}

/// Maven's XML: comments removed, `<servers>` and every element whose name
/// may hold a credential (`password`, `passphrase`, `privateKey`,
/// `username`, a profile property `*.token`, …) removed with its content,
/// URLs' credentials removed.
fn maven_settings(text: &str) -> Result<String, String> {
    if text.contains("<![CDATA[") || text.contains("<!DOCTYPE") || text.contains("<!ENTITY") {
        return Err("CDATA or a DOCTYPE".into());
    }
    // Comments out.
    let mut s = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("<!--") {
        s.push_str(&rest[..i]);
        let end = rest[i..]
            .find("-->")
            .ok_or_else(|| "a comment without its end".to_string())?;
        rest = &rest[i + end + 3..];
    }
    s.push_str(rest);
    // Elements out, by name.
    let mut out = String::with_capacity(s.len());
    let mut rest = s.as_str();
    while let Some(i) = rest.find('<') {
        out.push_str(&rest[..i]);
        let tag = &rest[i + 1..];
        let name_len = tag
            .find(|c: char| c.is_whitespace() || c == '>' || c == '/')
            .ok_or_else(|| "a tag without its end".to_string())?;
        let name = &tag[..name_len];
        let close = tag
            .find('>')
            .ok_or_else(|| "a tag without its end".to_string())?;
        let self_closing = tag[..close].ends_with('/');
        let is_start = !name.is_empty()
            && !name.starts_with(['/', '?', '!'])
            && (name == "servers" || is_secret_key(name));
        if is_start {
            if self_closing {
                rest = &tag[close + 1..];
                continue;
            }
            let end_tag = format!("</{name}>");
            let body = &tag[close + 1..];
            let end = body
                .find(&end_tag)
                .ok_or_else(|| format!("<{name}> without its end"))?;
            if body[..end].contains(&format!("<{name}>"))
                || body[..end].contains(&format!("<{name} "))
            {
                return Err(format!("<{name}> nested in itself"));
            }
            rest = &body[end + end_tag.len()..];
            continue;
        }
        out.push('<');
        out.push_str(&tag[..close + 1]);
        rest = &tag[close + 1..];
    }
    out.push_str(rest);
    let out = strip_url_credentials(&out);
    if holds_secret_marker(&out) || out.contains("<server") {
        return Err("a credential the sanitiser cannot remove".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
