//! The `FSGUARD_*` environment variables.

use std::path::Path;

use super::{Builder, ErrnoChoice, Error, LogFormat, Mode};

/// The variables a user sets: named in the error for an unknown one.
const USER_VARS: usize = 7;

/// Every `FSGUARD_*` variable the project reads; any other is an error.
/// The first [`USER_VARS`] are the user's; the rest are set by fsguard.
pub const ENV_VARS: &[&str] = &[
    "FSGUARD_CONFIG",
    "FSGUARD_READONLY",
    "FSGUARD_ROOT",
    "FSGUARD_MODE",
    "FSGUARD_LOG",
    "FSGUARD_LOG_FORMAT",
    "FSGUARD_ERRNO",
    // Set by fsguard itself:
    "FSGUARD_POLICY",
    "FSGUARD_POLICY_FD",
    "FSGUARD_LIB",
    "FSGUARD_HANDSHAKE_FD",
    "FSGUARD_REPORT_FD",
    "FSGUARD_COMM",
];

impl Builder {
    /// Applies `FSGUARD_*` variables. `config` (a CLI `--config`) replaces
    /// `FSGUARD_CONFIG`. Unknown `FSGUARD_*` variables are errors.
    pub fn env<'a, I>(&mut self, vars: I, config: Option<&Path>) -> Result<&mut Builder, Error>
    where
        I: IntoIterator<Item = (&'a str, &'a str)>,
    {
        let vars: Vec<(&str, &str)> = vars
            .into_iter()
            .filter(|(k, _)| k.starts_with("FSGUARD_"))
            .collect();
        for (k, _) in &vars {
            if !ENV_VARS.contains(k) {
                return Err(unknown(k));
            }
        }
        let get = |name: &str| vars.iter().rev().find(|(k, _)| *k == name).map(|(_, v)| *v);
        match (config, get("FSGUARD_CONFIG")) {
            (Some(c), _) => {
                self.config_file(c)?;
            }
            (None, Some("")) => {
                // Unset by mistake (`FSGUARD_CONFIG=$CFG`), not "no config".
                return Err(Error::new("FSGUARD_CONFIG is empty"));
            }
            (None, Some(c)) => {
                self.config_file(Path::new(c))?;
            }
            _ => {}
        }
        if let Some(v) = get("FSGUARD_READONLY") {
            self.readonly(parse_bool("FSGUARD_READONLY", v)?);
        }
        if let Some(v) = get("FSGUARD_ROOT") {
            if v.is_empty() {
                return Err(Error::new("FSGUARD_ROOT is empty"));
            }
            self.root(v)
                .map_err(|e| Error::new(format!("FSGUARD_ROOT: {e}")))?;
        }
        if let Some(v) = get("FSGUARD_MODE") {
            self.mode(match v {
                "enforce" => Mode::Enforce,
                "audit" => Mode::Audit,
                _ => return Err(bad_value("FSGUARD_MODE", v, "enforce, audit")),
            });
        }
        if let Some(v) = get("FSGUARD_LOG") {
            self.log_target(v)?;
        }
        if let Some(v) = get("FSGUARD_LOG_FORMAT") {
            self.log_format(match v {
                "text" => LogFormat::Text,
                "json" => LogFormat::Json,
                _ => return Err(bad_value("FSGUARD_LOG_FORMAT", v, "text, json")),
            });
        }
        if let Some(v) = get("FSGUARD_ERRNO") {
            self.s.errno = match v {
                "EACCES" => ErrnoChoice::EACCES,
                "EPERM" => ErrnoChoice::EPERM,
                _ => return Err(bad_value("FSGUARD_ERRNO", v, "EACCES, EPERM")),
            };
        }
        Ok(self)
    }
}

/// `unknown variable FSGUARD_ROTO; did you mean FSGUARD_ROOT? (the
/// variables: …)`: the user's variables only, never those fsguard sets
/// for itself, and the nearest one when a slip explains the name.
fn unknown(k: &str) -> Error {
    let users = &ENV_VARS[..USER_VARS];
    let near = users
        .iter()
        .map(|v| (edit_distance(k.as_bytes(), v.as_bytes()), *v))
        .min()
        .filter(|(d, _)| *d <= 3)
        .map(|(_, v)| format!("; did you mean {v}?"))
        .unwrap_or_default();
    Error::new(format!(
        "unknown variable {k}{near} (the variables: {}, and FSGUARD_LIB for the CLI)",
        users.join(", ")
    ))
}

/// Levenshtein distance, for [`unknown`]'s suggestion.
fn edit_distance(a: &[u8], b: &[u8]) -> usize {
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, &ca) in a.iter().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

fn bad_value(key: &str, v: &str, expected: &str) -> Error {
    Error::new(format!(
        "{key}: bad value {v:?} (expected one of: {expected})"
    ))
}

fn parse_bool(key: &str, v: &str) -> Result<bool, Error> {
    match v {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" | "" => Ok(false),
        _ => Err(bad_value(key, v, "1, 0, true, false")),
    }
}
