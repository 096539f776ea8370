//! `/proc` paths the `system` and `proc` presets let a process read.

use crate::presets::PROC_PUBLIC;

/// `/proc` itself, `/proc/<pid>`, its `task` directory, a thread's
/// directory, and their [`PROC_PUBLIC`] entries.
pub(super) fn is_proc_public(path: &[u8]) -> bool {
    let Some(rest) = path.strip_prefix(b"/proc") else {
        return false;
    };
    if rest.is_empty() {
        return true;
    }
    let digits = |s: &[u8]| !s.is_empty() && s.iter().all(u8::is_ascii_digit);
    let Some(rest) = rest.strip_prefix(b"/") else {
        return false;
    };
    // At most four components; no allocation on the decision path.
    let mut parts: [&[u8]; 5] = [&[]; 5];
    let mut n = 0;
    for part in rest.split(|&b| b == b'/') {
        if n == parts.len() {
            return false;
        }
        parts[n] = part;
        n += 1;
    }
    let public = |s: &[u8]| PROC_PUBLIC.iter().any(|p| p.as_bytes() == s);
    match &parts[..n] {
        [pid] => digits(pid),
        [pid, e] => digits(pid) && (public(e) || *e == b"task"),
        [pid, t, tid] => digits(pid) && *t == b"task" && digits(tid),
        [pid, t, tid, e] => digits(pid) && *t == b"task" && digits(tid) && public(e),
        _ => false,
    }
}

/// `/proc/<own pid>/…`: what the process reads about itself.
pub(super) fn is_own_proc(path: &[u8]) -> bool {
    let Some(rest) = path.strip_prefix(b"/proc/") else {
        return false;
    };
    let end = rest.iter().position(|&b| b == b'/').unwrap_or(rest.len());
    let digits = &rest[..end];
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return false;
    }
    let mut buf = [0u8; 20];
    let mut n = std::process::id();
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    digits == &buf[i..]
}
