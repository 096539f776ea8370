//! The trace-line wire format: one line per refused (or audited, or
//! unguarded) call, as text (`key=value`) or JSON. The library and the
//! `fsguard run` CLI both write lines through this, so the format has one
//! definition (docs/reference.md, "Trace lines").
//!
//! Allocation-free: a line is written into the caller's [`fmt::Write`]
//! (the library's is a stack buffer); the caller adds the newline. The
//! process's facts (pid, executable, clock) are the caller's to supply.

use core::fmt::{self, Write};

use crate::{Access, Hint, Rule};

/// What one line reports.
pub struct Event<'a> {
    /// `blocked`, `audit` or `unguarded`.
    pub event: &'a str,
    /// The libc call, base name (`open` for `open64`).
    pub call: &'a str,
    /// The access checked.
    pub access: Access,
    /// The resolved path.
    pub path: &'a [u8],
    /// The second path of a two-path call.
    pub dest: Option<&'a [u8]>,
    /// The deciding rule.
    pub rule: Rule<'a>,
    /// errno the call fails with (0 when it goes ahead).
    pub errno: i32,
    /// The rule that would allow the access, if one can.
    pub hint: Option<Hint<'a>>,
}

/// Who wrote a JSON line, and when.
#[derive(Clone, Copy)]
pub struct Origin<'a> {
    /// The process id.
    pub pid: u32,
    /// The process's executable.
    pub exe: &'a str,
    /// Unix time: whole seconds.
    pub secs: i64,
    /// Unix time: milliseconds past `secs`.
    pub millis: u32,
}

fn needs_quotes(v: &[u8]) -> bool {
    v.is_empty()
        || v.iter()
            .any(|&b| b == b' ' || b == b'"' || b == b'\\' || b < 0x20 || b == 0x7f || b >= 0x80)
}

/// A text line's value: bare, or double-quoted with backslash escapes
/// (`\xNN` for a byte that is not UTF-8).
pub fn value<W: Write>(w: &mut W, v: &[u8]) {
    if !needs_quotes(v) {
        // Only ASCII is left bare.
        let _ = w.write_str(core::str::from_utf8(v).unwrap_or(""));
        return;
    }
    let _ = w.write_str("\"");
    escaped(w, v, Bytes::Text);
    let _ = w.write_str("\"");
}

/// `v` escaped as inside a quoted text value (without the quotes).
pub fn escape_text<W: Write>(w: &mut W, v: &[u8]) {
    escaped(w, v, Bytes::Text);
}

/// `v` escaped as inside a JSON string (without the quotes).
pub fn escape_json<W: Write>(w: &mut W, v: &[u8]) {
    escaped(w, v, Bytes::Json);
}

/// How a byte that is not UTF-8 is written: `\xNN` in text lines; in JSON,
/// which has no byte escape, `\udcNN`, the lone surrogate Python's
/// `surrogateescape` uses for it (so `os.fsencode(json.loads(…)["path"])`
/// gives back the exact bytes, and a real "é" is never confused with byte
/// 0xE9).
#[derive(Clone, Copy, PartialEq)]
enum Bytes {
    Text,
    Json,
}

/// Backslash escapes shared by text and JSON; see [`Bytes`] for bytes that
/// are not UTF-8.
fn escaped<W: Write>(w: &mut W, v: &[u8], bytes: Bytes) {
    let mut rest = v;
    while !rest.is_empty() {
        let (ok, bad) = match core::str::from_utf8(rest) {
            Ok(s) => (s, &[][..]),
            Err(e) => {
                let (a, b) = rest.split_at(e.valid_up_to());
                // valid_up_to marks a UTF-8 prefix, so this never fails.
                (core::str::from_utf8(a).unwrap_or(""), b)
            }
        };
        for c in ok.chars() {
            let _ = match c {
                '"' => w.write_str("\\\""),
                '\\' => w.write_str("\\\\"),
                '\n' => w.write_str("\\n"),
                '\t' => w.write_str("\\t"),
                '\r' => w.write_str("\\r"),
                c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                    write!(w, "\\u{:04x}", c as u32)
                }
                c => w.write_char(c),
            };
        }
        if let Some((&b, tail)) = bad.split_first() {
            let _ = match bytes {
                Bytes::Text => write!(w, "\\x{b:02x}"),
                Bytes::Json => write!(w, "\\udc{b:02x}"),
            };
            rest = tail;
        } else {
            rest = &[];
        }
    }
}

/// A refused or audited call as a text line (without the newline):
/// `[fsguard] blocked open write path=/tmp/x rule=readonly`.
pub fn text<W: Write>(w: &mut W, ev: &Event<'_>) {
    let _ = write!(
        w,
        "[fsguard] {} {} {} path=",
        ev.event,
        ev.call,
        ev.access.as_str()
    );
    value(w, ev.path);
    if let Some(dest) = ev.dest {
        let _ = w.write_str(" dest=");
        value(w, dest);
    }
    let _ = write!(w, " rule={}", ev.rule);
    // A hint has a space and never a quote, backslash or control
    // character (Policy::hint refuses such paths): quoted as it is.
    if let Some(h) = &ev.hint {
        let _ = write!(w, " hint=\"{h}\"");
    }
}

/// An exec the library cannot follow (`kind`: `static` or `setid`) that
/// goes ahead, as a text line (without the newline):
/// `[fsguard] unguarded exec static path=/ws/tool call=execve`.
pub fn unguarded_text<W: Write>(w: &mut W, call: &str, kind: &str, path: &[u8]) {
    let _ = write!(w, "[fsguard] unguarded exec {kind} path=");
    value(w, path);
    let _ = write!(w, " call={call}");
}

/// Writes what is formatted into it JSON-escaped: a rule is escaped as it
/// is written, without a second buffer.
struct JsonEscaped<'a, W>(&'a mut W);

impl<W: Write> Write for JsonEscaped<'_, W> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        escaped(self.0, s.as_bytes(), Bytes::Json);
        Ok(())
    }
}

/// A line as one JSON object (without the newline), fields in the order
/// docs/reference.md gives.
pub fn json<W: Write>(w: &mut W, ev: &Event<'_>, origin: &Origin<'_>) {
    let _ = write!(
        w,
        "{{\"event\":\"{}\",\"call\":\"{}\",\"access\":\"{}\",\"path\":\"",
        ev.event,
        ev.call,
        ev.access.as_str()
    );
    escaped(w, ev.path, Bytes::Json);
    let _ = w.write_str("\"");
    if let Some(dest) = ev.dest {
        let _ = w.write_str(",\"dest\":\"");
        escaped(w, dest, Bytes::Json);
        let _ = w.write_str("\"");
    }
    let _ = w.write_str(",\"rule\":\"");
    let _ = write!(JsonEscaped(w), "{}", ev.rule);
    if let Some(h) = &ev.hint {
        let _ = write!(w, "\",\"hint\":\"{h}");
    }
    let _ = write!(
        w,
        "\",\"pid\":{},\"errno\":{},\"exe\":\"",
        origin.pid, ev.errno
    );
    escaped(w, origin.exe.as_bytes(), Bytes::Json);
    let _ = write!(w, "\",\"time\":{}.{:03}}}", origin.secs, origin.millis);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev<'a>(path: &'a [u8], dest: Option<&'a [u8]>, rule: Rule<'a>) -> Event<'a> {
        Event {
            event: "blocked",
            call: "rename",
            access: Access::Write,
            path,
            dest,
            rule,
            errno: 13,
            hint: None,
        }
    }

    const AT: Origin<'static> = Origin {
        pid: 42,
        exe: "/usr/bin/x",
        secs: 1_700_000_000,
        millis: 7,
    };

    fn t(e: &Event<'_>) -> String {
        let mut s = String::new();
        text(&mut s, e);
        s
    }

    fn j(e: &Event<'_>) -> String {
        let mut s = String::new();
        json(&mut s, e, &AT);
        s
    }

    #[test]
    fn text_lines() {
        assert_eq!(
            t(&ev(b"/ws/a", Some(b"/etc/a"), Rule::Root)),
            "[fsguard] blocked rename write path=/ws/a dest=/etc/a rule=root"
        );
        assert_eq!(
            t(&ev(b"/ws/a b\"\n\x01", None, Rule::Readonly)),
            "[fsguard] blocked rename write path=\"/ws/a b\\\"\\n\\u0001\" rule=readonly"
        );
        assert_eq!(
            t(&ev(b"/ws/\xc3\xa9\xff", None, Rule::Readonly)),
            "[fsguard] blocked rename write path=\"/ws/\u{e9}\\xff\" rule=readonly"
        );
        assert_eq!(
            t(&ev(b"", None, Rule::Unguarded("static"))),
            "[fsguard] blocked rename write path=\"\" rule=unguarded_exec:static"
        );
        assert_eq!(
            t(&ev(b"/ws/a", None, Rule::InternalError)),
            "[fsguard] blocked rename write path=/ws/a rule=internal_error"
        );
    }

    #[test]
    fn unguarded_text_line() {
        let mut s = String::new();
        unguarded_text(&mut s, "execve", "static", b"/ws/my tool");
        assert_eq!(
            s,
            "[fsguard] unguarded exec static path=\"/ws/my tool\" call=execve"
        );
    }

    #[test]
    fn json_lines() {
        assert_eq!(
            j(&ev(b"/ws/a", Some(b"/etc/\"b\""), Rule::Root)),
            "{\"event\":\"blocked\",\"call\":\"rename\",\"access\":\"write\",\
             \"path\":\"/ws/a\",\"dest\":\"/etc/\\\"b\\\"\",\"rule\":\"root\",\
             \"pid\":42,\"errno\":13,\"exe\":\"/usr/bin/x\",\"time\":1700000000.007}"
        );
        let line = j(&ev(b"/ws/\xe9\t", None, Rule::Unguarded("setid")));
        assert!(
            line.contains("\"path\":\"/ws/\\udce9\\t\",\"rule\":\"unguarded_exec:setid\""),
            "{line}"
        );
        let line = j(&ev(b"/ws/a", None, Rule::InternalError));
        assert!(
            line.contains("\"path\":\"/ws/a\",\"rule\":\"internal_error\""),
            "{line}"
        );
        // What serde_json reads back is the same object.
        let v: serde_json::Value =
            serde_json::from_str(&j(&ev(b"/a\x7f\\", None, Rule::Readonly))).unwrap();
        assert_eq!(v["path"], "/a\u{7f}\\");
        assert_eq!(v["time"].as_f64(), Some(1_700_000_000.007));
    }
}
