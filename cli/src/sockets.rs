//! The command's environment under `fsguard run`: a variable that names an
//! AF_UNIX socket the policy refuses (`SSH_AUTH_SOCK`, D-Bus's bus
//! addresses, `GPG_AGENT_INFO`, `DOCKER_HOST=unix://…`) is removed, and
//! fsguard says once which. The library refuses the connection anyway; a
//! program that finds no agent or bus does not try, nor fail half-way.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use fsguard_policy::sockets::{env_sockets, is_abstract, SOCKET_ENV};
use fsguard_policy::{canonical_prefix, Mode, Policy, Settings};

/// Removes from `env` each [`SOCKET_ENV`] variable that names a socket the
/// policy refuses (or that fsguard cannot read), and says so on stderr
/// unless `quiet`. Nothing is removed in audit mode, which refuses nothing.
pub fn strip_refused(s: &Settings, env: &mut Vec<(OsString, OsString)>, quiet: bool) {
    if s.mode == Mode::Audit {
        return;
    }
    let Ok(policy) = Policy::new(s.clone()) else {
        return;
    };
    let cwd = std::env::current_dir().unwrap_or_else(|_| "/".into());
    let gone = refused(&policy, &cwd, env);
    if gone.is_empty() || quiet {
        return;
    }
    eprintln!(
        "fsguard: unix sockets: {} removed from the command's environment: the socket they \
         name is refused (--allow-unix-socket PATH allows one)",
        gone.join(", ")
    );
}

/// The variables removed from `env`, in its order.
fn refused(policy: &Policy, cwd: &Path, env: &mut Vec<(OsString, OsString)>) -> Vec<String> {
    let mut gone = Vec::new();
    env.retain(|(k, v)| {
        let Some(var) = k.to_str().filter(|k| SOCKET_ENV.contains(k)) else {
            return true;
        };
        let keep = match v.to_str().map(|v| env_sockets(var, v)) {
            // Names no AF_UNIX socket (a TCP address).
            Some(None) => true,
            Some(Some(names)) => names.iter().all(|n| allowed(policy, cwd, n)),
            None => false,
        };
        if !keep {
            gone.push(var.to_string());
        }
        keep
    });
    gone
}

/// Whether the policy lets the command reach socket `name` (a path, from
/// `cwd` if relative, or `@name`).
fn allowed(policy: &Policy, cwd: &Path, name: &[u8]) -> bool {
    if name.is_empty() {
        return false;
    }
    if is_abstract(name) {
        return policy.decide_socket(name).allowed;
    }
    let p = cwd.join(Path::new(OsStr::from_bytes(name)));
    policy
        .decide_socket(canonical_prefix(&p).as_os_str().as_bytes())
        .allowed
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 27 item 9: the agent, bus and docker variables go unless the
    /// socket they name is allowed; other variables stay.
    #[test]
    fn unix_sockets_are_doors_out_their_variables_go() {
        let ws = std::env::temp_dir().join(format!("fsguard-sockenv-{}", std::process::id()));
        std::fs::create_dir_all(&ws).unwrap();
        let ws = std::fs::canonicalize(&ws).unwrap();
        let s = Settings {
            root: Some(ws.display().to_string()),
            unix_sockets: vec!["/run/allowed.sock".into(), "@ok".into()],
            ..Settings::default()
        };
        let policy = Policy::new(s).unwrap();
        let inside = format!("{}/agent.sock", ws.display());
        let mut env: Vec<(OsString, OsString)> = [
            ("HOME", "/h"),
            ("SSH_AUTH_SOCK", "/tmp/ssh-x/agent.1"),
            ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/1000/bus"),
            ("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/run/allowed.sock"),
            ("GPG_AGENT_INFO", &format!("{inside}:1:1")),
            ("DOCKER_HOST", "tcp://h:2376"),
        ]
        .iter()
        .map(|(k, v)| (OsString::from(k), OsString::from(v)))
        .collect();
        let gone = refused(&policy, &ws, &mut env);
        assert_eq!(gone, ["SSH_AUTH_SOCK", "DBUS_SESSION_BUS_ADDRESS"]);
        let kept: Vec<&OsStr> = env.iter().map(|(k, _)| k.as_os_str()).collect();
        assert_eq!(
            kept,
            [
                "HOME",
                "DBUS_SYSTEM_BUS_ADDRESS",
                "GPG_AGENT_INFO",
                "DOCKER_HOST"
            ]
        );
        let mut env = vec![
            (
                OsString::from("DOCKER_HOST"),
                OsString::from("unix:///var/run/docker.sock"),
            ),
            (
                OsString::from("DBUS_SESSION_BUS_ADDRESS"),
                OsString::from("unix:abstract=ok,guid=1"),
            ),
        ];
        assert_eq!(refused(&policy, &ws, &mut env), ["DOCKER_HOST"]);
        let _ = std::fs::remove_dir_all(&ws);
    }
}
