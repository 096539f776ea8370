//! The buffer a trace line is built in; its format is
//! [`fsguard_policy::wire`]'s.

use fsguard_policy::wire;

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

/// A refused or audited call as a text line (see [`wire::text`]).
pub(super) fn text(line: &mut Line, ev: &Event<'_>) {
    wire::text(line, ev);
}

/// A line as JSON (see [`wire::json`]), stamped with this process's pid
/// and the time.
pub(super) fn json(line: &mut Line, ev: &Event<'_>, exe: &str) {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::Realtime);
    let origin = wire::Origin {
        pid: rustix::process::getpid().as_raw_nonzero().get() as u32,
        exe,
        secs: ts.tv_sec,
        millis: (ts.tv_nsec / 1_000_000) as u32,
    };
    wire::json(line, ev, &origin);
}
