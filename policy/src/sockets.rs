//! AF_UNIX sockets: the names a `connect`, `sendto`, `sendmsg` or `bind`
//! reaches, the `unix_sockets` allow-list's abstract patterns, and the
//! environment variables that name a socket (`SSH_AUTH_SOCK`, D-Bus's bus
//! addresses, …), which `fsguard run` strips when the socket is refused.
//!
//! A socket with a path is named by its resolved path; an abstract one
//! (`sun_path[0] == 0`) as `@` and its name, each NUL byte of the name
//! shown as `@`, the way `ss` and `netstat` show them.

/// Whether `name` is an abstract socket's (`@name`).
pub fn is_abstract(name: &[u8]) -> bool {
    name.first() == Some(&b'@')
}

/// Whether a trace line of `call` on `name` is about a socket's rules
/// ([`crate::Policy::decide_socket`]): a connect or send (to a socket
/// file or an abstract socket), or a bind of an abstract name.
pub fn decided_as_socket(call: &str, name: &[u8]) -> bool {
    matches!(call, "connect" | "sendto" | "sendmsg" | "sendmmsg")
        || call == "bind" && is_abstract(name)
}

/// The `unix_sockets` patterns that name abstract sockets (`@name`, or
/// `@prefix*`), compiled. Path patterns are a [`crate::PatternSet`].
#[derive(Clone, Debug, Default)]
pub(crate) struct AbstractSet {
    /// (pattern as written, the name it matches without `@` and `*`, prefix?)
    patterns: Vec<(String, Box<[u8]>, bool)>,
}

/// Checks an abstract pattern: `@` then a name of at least one byte; a
/// `*` at the end matches any rest of a name (`@*`: every abstract
/// socket), anywhere else it is a byte like any other.
pub(crate) fn check_abstract(p: &str) -> Result<(), String> {
    match p.strip_prefix('@') {
        Some(n) if !n.is_empty() => Ok(()),
        _ => Err(format!(
            "abstract socket pattern {p:?}: a name after the @ (@name, @prefix*, or @* for all)"
        )),
    }
}

impl AbstractSet {
    pub(crate) fn new<'a>(patterns: impl IntoIterator<Item = &'a String>) -> AbstractSet {
        let patterns = patterns
            .into_iter()
            .filter(|p| is_abstract(p.as_bytes()))
            .map(|p| {
                let name = &p.as_bytes()[1..];
                let (name, prefix) = match name.strip_suffix(b"*") {
                    Some(n) => (n, true),
                    None => (name, false),
                };
                (p.clone(), name.into(), prefix)
            })
            .collect();
        AbstractSet { patterns }
    }

    /// The pattern that names `name` (`@` and the name), if any.
    pub(crate) fn find(&self, name: &[u8]) -> Option<&str> {
        let name = name.strip_prefix(b"@")?;
        self.patterns
            .iter()
            .find(|(_, n, prefix)| {
                if *prefix {
                    name.starts_with(n)
                } else {
                    name == &n[..]
                }
            })
            .map(|(p, _, _)| p.as_str())
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }
}

/// The variables of the command's environment that name a socket, which
/// `fsguard run` removes unless the policy allows every socket they name.
pub const SOCKET_ENV: &[&str] = &[
    "SSH_AUTH_SOCK",
    "GPG_AGENT_INFO",
    "DBUS_SESSION_BUS_ADDRESS",
    "DBUS_SYSTEM_BUS_ADDRESS",
    "DOCKER_HOST",
];

/// What a [`SOCKET_ENV`] variable's value names: the sockets (a path, as
/// written, or `@name`), or `None` when it names no AF_UNIX socket
/// (`DOCKER_HOST=tcp://…`, a D-Bus address of other transports only). An
/// AF_UNIX address fsguard cannot read gives an empty name, which no
/// policy allows.
pub fn env_sockets(var: &str, value: &str) -> Option<Vec<Vec<u8>>> {
    let found = match var {
        "SSH_AUTH_SOCK" => vec![value.as_bytes().to_vec()],
        // `path:pid:protocol` (gpg-agent before 2.1).
        "GPG_AGENT_INFO" => vec![value.split(':').next().unwrap_or("").as_bytes().to_vec()],
        "DBUS_SESSION_BUS_ADDRESS" | "DBUS_SYSTEM_BUS_ADDRESS" => dbus_sockets(value),
        "DOCKER_HOST" => match value.strip_prefix("unix://") {
            Some(p) => vec![p.as_bytes().to_vec()],
            None => Vec::new(),
        },
        _ => Vec::new(),
    };
    (!found.is_empty()).then_some(found)
}

/// The AF_UNIX sockets of a D-Bus address list (`unix:path=/run/user/1/bus`,
/// `unix:abstract=/tmp/dbus-x,guid=…`, `;`-separated, values %-escaped).
fn dbus_sockets(value: &str) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for addr in value.split(';').filter(|a| !a.is_empty()) {
        let Some(params) = addr.strip_prefix("unix:") else {
            // tcp:, nonce-tcp:, autolaunch:, unixexec:, systemd:: no socket
            // by name (an exec is the exec hooks' to check).
            continue;
        };
        let mut socket = Vec::new();
        for kv in params.split(',') {
            match kv.split_once('=') {
                Some(("path", v)) => socket = unescape(v),
                Some(("abstract", v)) => {
                    socket = b"@".to_vec();
                    socket.extend(unescape(v));
                }
                _ => {}
            }
        }
        // `unix:tmpdir=`, `unix:dir=`, `unix:runtime=yes` are for servers;
        // read as a name no policy allows.
        out.push(socket);
    }
    out
}

/// D-Bus's `%XX` escapes decoded; a bad escape is kept as written.
fn unescape(v: &str) -> Vec<u8> {
    let b = v.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abstract_patterns_match_whole_names_or_a_prefix() {
        let pats = vec!["@db".to_string(), "@/tmp/dbus-*".to_string(), "/x".into()];
        let set = AbstractSet::new(&pats);
        assert_eq!(set.find(b"@db"), Some("@db"));
        assert_eq!(set.find(b"@db2"), None);
        assert_eq!(set.find(b"@d"), None);
        assert_eq!(set.find(b"@/tmp/dbus-Ab12"), Some("@/tmp/dbus-*"));
        assert_eq!(set.find(b"@/tmp/dbus-"), Some("@/tmp/dbus-*"));
        assert_eq!(set.find(b"@/tmp/dbu"), None);
        // A path is never an abstract name.
        assert_eq!(set.find(b"/x"), None);
        assert!(AbstractSet::new(&["/x".to_string()]).is_empty());
    }

    #[test]
    fn socket_calls() {
        assert!(decided_as_socket("connect", b"/x"));
        assert!(decided_as_socket("sendmmsg", b"@x"));
        assert!(decided_as_socket("bind", b"@x"));
        assert!(
            !decided_as_socket("bind", b"/x"),
            "a socket file made: a write"
        );
        assert!(!decided_as_socket("open", b"/x"));
    }

    #[test]
    fn abstract_patterns_need_a_name() {
        assert!(check_abstract("@n").is_ok());
        assert!(check_abstract("@p*").is_ok());
        assert!(check_abstract("@*").is_ok());
        assert_eq!(
            AbstractSet::new(&["@*".to_string()]).find(b"@any"),
            Some("@*")
        );
        for bad in ["@", "n"] {
            assert!(check_abstract(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn variables_name_their_sockets() {
        let v = |var, val| env_sockets(var, val);
        let one = |s: &str| Some(vec![s.as_bytes().to_vec()]);
        assert_eq!(
            v("SSH_AUTH_SOCK", "/tmp/ssh-x/agent.1"),
            one("/tmp/ssh-x/agent.1")
        );
        assert_eq!(
            v("GPG_AGENT_INFO", "/h/.gnupg/S.gpg-agent:42:1"),
            one("/h/.gnupg/S.gpg-agent")
        );
        assert_eq!(
            v("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/1000/bus"),
            one("/run/user/1000/bus")
        );
        assert_eq!(
            v(
                "DBUS_SESSION_BUS_ADDRESS",
                "unix:abstract=/tmp/dbus-AbC,guid=12"
            ),
            one("@/tmp/dbus-AbC")
        );
        assert_eq!(
            v(
                "DBUS_SYSTEM_BUS_ADDRESS",
                "unix:path=/var/run/dbus/system%5fbus_socket"
            ),
            one("/var/run/dbus/system_bus_socket")
        );
        assert_eq!(
            v("DBUS_SESSION_BUS_ADDRESS", "tcp:host=h,port=1;unix:path=/b"),
            one("/b")
        );
        assert_eq!(v("DBUS_SESSION_BUS_ADDRESS", "tcp:host=h,port=1"), None);
        // A server-side address: a socket no policy names.
        assert_eq!(v("DBUS_SESSION_BUS_ADDRESS", "unix:tmpdir=/tmp"), one(""));
        assert_eq!(
            v("DOCKER_HOST", "unix:///var/run/docker.sock"),
            one("/var/run/docker.sock")
        );
        assert_eq!(v("DOCKER_HOST", "tcp://10.0.0.1:2376"), None);
        assert_eq!(v("HOME", "/h"), None);
    }

    #[test]
    fn bad_escapes_are_kept() {
        assert_eq!(unescape("a%2"), b"a%2");
        assert_eq!(unescape("a%zz"), b"a%zz");
        assert_eq!(unescape("%41%"), b"A%");
    }
}
