//! Messages on the report channel between the library and `fsguard run`.
//!
//! The channel is a socket that keeps message boundaries (one `send` is one
//! message, never split, never run into another process's). A message is
//! a header, then, when the supervisor is to print or log the trace line
//! itself, a NUL and that line:
//!
//! ```text
//! blocked|audit|internal <call> <access> <path>[\0<line>]   a refusal, counted
//! lost <n>                                                  n refusals whose messages could not be sent
//! note\0<line>                                              a line to print or log, not counted
//! ```
//!
//! The path is the resolved path's bytes as they are (it holds no NUL; a
//! newline in it is shown as `?` in the summary). A header may end with a
//! newline (the pipe the channel replaced sent one).
//!
//! Every guarded process can send on the channel, so the supervisor checks
//! what it can ([`line_ok`]): that a line is one line of the library's
//! format, that it names the header's event, and, for a JSON line, that its
//! `pid` is the sender's as the kernel gives it. What fails is written
//! marked ([`unverified`]), never as the library's.

use core::fmt::Write;

use crate::{Access, LogFormat};

/// What a refusal's message counts as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A call refused.
    Blocked,
    /// A call that would have been refused (audit mode).
    Audit,
    /// A call refused because a check failed inside the library.
    Internal,
    /// A call the library allowed that the kernel's Landlock ruleset
    /// refused (`rule=landlock`), in audit mode too.
    Landlock,
    /// A program the library cannot follow was started (its trace line,
    /// `unguarded exec`, written by the process itself): the record's
    /// `call` is the program's kind (`static`, `go`, `setid`). Counts as
    /// no refusal.
    Unguarded,
}

impl Kind {
    /// The header's first word.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Blocked => "blocked",
            Kind::Audit => "audit",
            Kind::Internal => "internal",
            Kind::Landlock => "landlock",
            Kind::Unguarded => "unguarded",
        }
    }

    /// The event its trace line names (`blocked` for an internal error).
    pub fn event(self) -> &'static str {
        match self {
            Kind::Audit => "audit",
            Kind::Blocked | Kind::Internal | Kind::Landlock => "blocked",
            Kind::Unguarded => "unguarded",
        }
    }
}

/// A message as the supervisor reads it.
#[derive(Debug, PartialEq, Eq)]
pub enum Message<'a> {
    /// A refusal (or an audited call).
    Record {
        /// What it counts as.
        kind: Kind,
        /// The libc call.
        call: &'a str,
        /// The access refused.
        access: Access,
        /// The resolved path.
        path: &'a [u8],
        /// The trace line to print or log, when the process did not write it.
        line: Option<&'a [u8]>,
    },
    /// Refusals whose messages were lost (the channel was gone or full).
    Lost(u64),
    /// A line to print or log that counts as nothing.
    Note(&'a [u8]),
}

/// The separator between a header and its line.
pub const SEP: u8 = 0;

/// Reads a message; `None` when it is not one the library sends.
pub fn parse(msg: &[u8]) -> Option<Message<'_>> {
    let (header, line) = match msg.iter().position(|&b| b == SEP) {
        Some(i) => (&msg[..i], Some(&msg[i + 1..])),
        None => (msg, None),
    };
    let header = header.strip_suffix(b"\n").unwrap_or(header);
    if header == b"note" {
        return line.map(Message::Note);
    }
    let mut parts = header.splitn(4, |&b| b == b' ');
    let kind = match parts.next()? {
        b"blocked" => Kind::Blocked,
        b"audit" => Kind::Audit,
        b"internal" => Kind::Internal,
        b"landlock" => Kind::Landlock,
        b"unguarded" => Kind::Unguarded,
        b"lost" => {
            let n = core::str::from_utf8(parts.next()?).ok()?.parse().ok()?;
            return (parts.next().is_none() && line.is_none()).then_some(Message::Lost(n));
        }
        _ => return None,
    };
    let call = core::str::from_utf8(parts.next()?).ok()?;
    if call.is_empty()
        || !call
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    {
        return None;
    }
    let access = Access::parse(core::str::from_utf8(parts.next()?).ok()?)?;
    let path = parts.next().filter(|p| !p.is_empty())?;
    Some(Message::Record {
        kind,
        call,
        access,
        path,
        line,
    })
}

/// Whether `line` is a trace line the library writes for `msg` in
/// `format`, sent by process `sender` (`None`: the system does not say).
/// One line, ending in a newline, no control character (the library
/// escapes them), UTF-8; for a refusal, naming its event, call and access;
/// in JSON, carrying the sender's pid.
pub fn line_ok(msg: &Message<'_>, line: &[u8], format: LogFormat, sender: Option<u32>) -> bool {
    let Some(body) = line.strip_suffix(b"\n") else {
        return false;
    };
    let Ok(body) = core::str::from_utf8(body) else {
        return false;
    };
    if body.chars().any(|c| c.is_control()) {
        return false;
    }
    let mut want = String::new();
    match (msg, format) {
        (
            Message::Record {
                kind, call, access, ..
            },
            LogFormat::Text,
        ) => {
            let _ = write!(
                want,
                "[fsguard] {} {call} {} ",
                kind.event(),
                access.as_str()
            );
        }
        (
            Message::Record {
                kind, call, access, ..
            },
            LogFormat::Json,
        ) => {
            let _ = write!(
                want,
                "{{\"event\":\"{}\",\"call\":\"{call}\",\"access\":\"{}\",",
                kind.event(),
                access.as_str()
            );
        }
        // A notice is text in either format; an unguarded exec follows it.
        (Message::Note(_), _) if body.starts_with("[fsguard] ") => return true,
        (Message::Note(_), LogFormat::Json) => want.push_str("{\"event\":\"unguarded\","),
        _ => return false,
    }
    if !body.starts_with(&want) {
        return false;
    }
    if format == LogFormat::Text {
        return true;
    }
    // Inside a JSON string a quote is escaped, so `,"pid":` is the key.
    let Some(at) = body.find(",\"pid\":") else {
        return false;
    };
    let digits: &str = &body[at + 7..];
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    let Ok(pid) = digits[..end].parse::<u32>() else {
        return false;
    };
    sender.is_none_or(|s| s == pid)
}

/// What the supervisor writes for a message (or a line) it cannot vouch
/// for, without the newline: `[fsguard] unverified pid=N text="…"`, or in
/// JSON `{"event":"unverified","pid":N,"text":"…"}`; `pid` is the sender's
/// as the kernel gives it (absent when the system does not say).
pub fn unverified<W: Write>(w: &mut W, format: LogFormat, pid: Option<u32>, text: &[u8]) {
    match format {
        LogFormat::Text => {
            let _ = w.write_str("[fsguard] unverified");
            if let Some(p) = pid {
                let _ = write!(w, " pid={p}");
            }
            let _ = w.write_str(" text=\"");
            crate::wire::escape_text(w, text);
            let _ = w.write_str("\"");
        }
        LogFormat::Json => {
            let _ = w.write_str("{\"event\":\"unverified\"");
            if let Some(p) = pid {
                let _ = write!(w, ",\"pid\":{p}");
            }
            let _ = w.write_str(",\"text\":\"");
            crate::wire::escape_json(w, text);
            let _ = w.write_str("\"}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_the_library_sends() {
        assert_eq!(
            parse(b"blocked open read /etc/a b"),
            Some(Message::Record {
                kind: Kind::Blocked,
                call: "open",
                access: Access::Read,
                path: b"/etc/a b",
                line: None
            })
        );
        assert_eq!(
            parse(b"internal mkdir write /x\0[fsguard] l\n"),
            Some(Message::Record {
                kind: Kind::Internal,
                call: "mkdir",
                access: Access::Write,
                path: b"/x",
                line: Some(b"[fsguard] l\n")
            })
        );
        // The pipe's form, with its newline.
        assert!(matches!(
            parse(b"audit unlink write /a\n"),
            Some(Message::Record {
                kind: Kind::Audit,
                path: b"/a",
                ..
            })
        ));
        assert_eq!(parse(b"lost 7"), Some(Message::Lost(7)));
        assert_eq!(
            parse(b"note\0[fsguard] x\n"),
            Some(Message::Note(b"[fsguard] x\n"))
        );
    }

    #[test]
    fn refuses_what_it_does_not_send() {
        for m in [
            &b""[..],
            b"half a line, no newline",
            b"[fsguard] blocked open read path=/x rule=root\n",
            b"blocked open read",
            b"blocked open read ",
            b"blocked Open read /x",
            b"blocked open sideways /x",
            b"lost x",
            b"lost 1 2",
            b"lost 1\0line",
            b"note",
        ] {
            assert_eq!(parse(m), None, "{:?}", String::from_utf8_lossy(m));
        }
    }

    fn rec(kind: Kind) -> Message<'static> {
        Message::Record {
            kind,
            call: "open",
            access: Access::Read,
            path: b"/x",
            line: None,
        }
    }

    #[test]
    fn a_line_must_match_its_record_and_its_sender() {
        let r = rec(Kind::Blocked);
        let t = b"[fsguard] blocked open read path=/x rule=root\n";
        assert!(line_ok(&r, t, LogFormat::Text, Some(5)));
        assert!(line_ok(
            &rec(Kind::Internal),
            b"[fsguard] blocked open read path=/x rule=internal_error\n",
            LogFormat::Text,
            Some(5)
        ));
        // Another event, two lines, no newline, a control character.
        assert!(!line_ok(&rec(Kind::Audit), t, LogFormat::Text, Some(5)));
        assert!(!line_ok(
            &r,
            b"[fsguard] blocked open read path=/x rule=root\n[fsguard] blocked open read path=/y rule=root\n",
            LogFormat::Text,
            None
        ));
        assert!(!line_ok(&r, &t[..t.len() - 1], LogFormat::Text, None));
        assert!(!line_ok(
            &r,
            b"[fsguard] blocked open read path=/x\x1b[2J rule=root\n",
            LogFormat::Text,
            None
        ));
        let j = br#"{"event":"blocked","call":"open","access":"read","path":"/x\",\"pid\":5","rule":"root","pid":42,"errno":13,"exe":"/bin/cat","time":1.000}
"#;
        assert!(line_ok(&r, j, LogFormat::Json, Some(42)));
        assert!(line_ok(&r, j, LogFormat::Json, None));
        // The pid in the path is not the key.
        assert!(!line_ok(&r, j, LogFormat::Json, Some(5)));
        assert!(!line_ok(&r, j, LogFormat::Text, Some(42)));
        let note = Message::Note(b"");
        assert!(line_ok(
            &note,
            b"[fsguard] unguarded exec static path=/a call=execve\n",
            LogFormat::Text,
            None
        ));
        assert!(line_ok(
            &note,
            br#"{"event":"unguarded","call":"execve","access":"exec","path":"/a","rule":"unguarded_exec:static","pid":3,"errno":0,"exe":"","time":1.000}
"#,
            LogFormat::Json,
            Some(3)
        ));
        assert!(!line_ok(
            &note,
            b"{\"event\":\"blocked\",\"pid\":3}\n",
            LogFormat::Json,
            Some(3)
        ));
    }

    #[test]
    fn unverified_text_is_marked_and_escaped() {
        let mut s = String::new();
        unverified(&mut s, LogFormat::Text, Some(9), b"[fsguard] \"x\"\n\0\xff");
        assert_eq!(
            s,
            r#"[fsguard] unverified pid=9 text="[fsguard] \"x\"\n\u0000\xff""#
        );
        let mut j = String::new();
        unverified(&mut j, LogFormat::Json, None, b"a\"\n\xff");
        assert_eq!(j, r#"{"event":"unverified","text":"a\"\n\udcff"}"#);
    }
}
