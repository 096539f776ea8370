//! A trace line as text (`key=value`) or JSON, with the escaping of
//! paths that are not plain UTF-8.

use std::fmt::Write as _;

use crate::resolve::Spill;

use super::Event;

/// Room for a line: two paths of PATH_MAX, escaped, and the fields.
pub(super) const LINE_CAP: usize = 3 * 4096;

/// What a line holds on the stack; a longer one moves to a mapping (see
/// [`Spill`]): a denial may be traced from a signal handler on a small
/// alternate stack.
const LINE_INLINE: usize = 512;

/// A line being built, of at most [`LINE_CAP`] bytes; what does not fit is
/// cut with `…`. On the stack while short, then in a mapping; when no
/// mapping can be had, cut at what the stack holds. Not zeroed.
pub struct Line {
    buf: Spill<LINE_INLINE>,
    len: usize,
    full: bool,
}

impl Line {
    pub(super) fn new() -> Line {
        Line {
            buf: Spill::new(),
            len: 0,
            full: false,
        }
    }

    pub(super) fn push(&mut self, b: &[u8]) {
        if self.len + b.len() + 4 > self.buf.capacity() {
            let _ = self.buf.reserve(LINE_CAP, self.len);
        }
        let room = self.buf.capacity().min(LINE_CAP) - 4 - self.len;
        if b.len() > room {
            self.full = true;
        }
        let n = b.len().min(room);
        self.put(&b[..n]);
    }

    /// Appends bytes that fit (callers keep 4 bytes for the end).
    fn put(&mut self, b: &[u8]) {
        let dst = &mut self.buf.buf()[self.len..self.len + b.len()];
        // SAFETY: same lengths, distinct buffers; u8 and MaybeUninit<u8>
        // share a layout.
        unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), dst.as_mut_ptr().cast::<u8>(), b.len()) }
        self.len += b.len();
    }

    pub(super) fn finish(&mut self) {
        if self.full {
            self.put("…".as_bytes());
        }
        self.put(b"\n");
    }

    pub(super) fn as_bytes(&self) -> &[u8] {
        // SAFETY: the first `len` bytes were written by `put`.
        unsafe { self.buf.bytes(self.len) }
    }
}

impl std::fmt::Write for Line {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.push(s.as_bytes());
        Ok(())
    }
}

fn needs_quotes(v: &[u8]) -> bool {
    v.is_empty()
        || v.iter()
            .any(|&b| b == b' ' || b == b'"' || b == b'\\' || b < 0x20 || b == 0x7f || b >= 0x80)
}

/// A `key=value` value: bare, or double-quoted with backslash escapes.
pub(super) fn value(line: &mut Line, v: &[u8]) {
    if !needs_quotes(v) {
        line.push(v);
        return;
    }
    line.push(b"\"");
    escaped(line, v, Bytes::Text);
    line.push(b"\"");
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
fn escaped(line: &mut Line, v: &[u8], bytes: Bytes) {
    let mut rest = v;
    while !rest.is_empty() {
        let (ok, bad) = match std::str::from_utf8(rest) {
            Ok(s) => (s, &[][..]),
            Err(e) => {
                let (a, b) = rest.split_at(e.valid_up_to());
                // valid_up_to marks a UTF-8 prefix, so this never fails.
                (std::str::from_utf8(a).unwrap_or(""), b)
            }
        };
        for c in ok.chars() {
            match c {
                '"' => line.push(b"\\\""),
                '\\' => line.push(b"\\\\"),
                '\n' => line.push(b"\\n"),
                '\t' => line.push(b"\\t"),
                '\r' => line.push(b"\\r"),
                c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                    let _ = write!(line, "\\u{:04x}", c as u32);
                }
                c => {
                    let mut b = [0u8; 4];
                    line.push(c.encode_utf8(&mut b).as_bytes());
                }
            }
        }
        if let Some((&b, tail)) = bad.split_first() {
            let _ = match bytes {
                Bytes::Text => write!(line, "\\x{b:02x}"),
                Bytes::Json => write!(line, "\\udc{b:02x}"),
            };
            rest = tail;
        } else {
            rest = &[];
        }
    }
}

pub(super) fn text(line: &mut Line, ev: &Event<'_>) {
    let _ = write!(
        line,
        "[fsguard] {} {} {} path=",
        ev.event,
        ev.call,
        ev.access.as_str()
    );
    value(line, ev.path);
    if let Some(dest) = ev.dest {
        line.push(b" dest=");
        value(line, dest);
    }
    let _ = write!(line, " rule={}", ev.rule);
    // A hint has a space and never a quote, backslash or control
    // character (Policy::hint refuses such paths): quoted as it is.
    if let Some(h) = &ev.hint {
        let _ = write!(line, " hint=\"{h}\"");
    }
}

/// Writes what is formatted into it JSON-escaped: a rule is escaped as it
/// is written, without a second line buffer.
struct JsonEscaped<'a>(&'a mut Line);

impl std::fmt::Write for JsonEscaped<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        escaped(self.0, s.as_bytes(), Bytes::Json);
        Ok(())
    }
}

pub(super) fn json(line: &mut Line, ev: &Event<'_>, exe: &str) {
    let _ = write!(
        line,
        "{{\"event\":\"{}\",\"call\":\"{}\",\"access\":\"{}\",\"path\":\"",
        ev.event,
        ev.call,
        ev.access.as_str()
    );
    escaped(line, ev.path, Bytes::Json);
    line.push(b"\"");
    if let Some(dest) = ev.dest {
        line.push(b",\"dest\":\"");
        escaped(line, dest, Bytes::Json);
        line.push(b"\"");
    }
    line.push(b",\"rule\":\"");
    let _ = write!(JsonEscaped(line), "{}", ev.rule);
    if let Some(h) = &ev.hint {
        let _ = write!(line, "\",\"hint\":\"{h}");
    }
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::Realtime);
    let _ = write!(
        line,
        "\",\"pid\":{},\"errno\":{},\"exe\":\"",
        rustix::process::getpid().as_raw_nonzero(),
        ev.errno
    );
    escaped(line, exe.as_bytes(), Bytes::Json);
    let _ = write!(
        line,
        "\",\"time\":{}.{:03}}}",
        ts.tv_sec,
        ts.tv_nsec / 1_000_000
    );
}
