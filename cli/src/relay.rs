//! The supervisor's end of the report pipe: denials the library reports,
//! counted for the summary at exit, and the trace lines it relays.

use std::os::fd::RawFd;

use fsguard_policy::Policy;

/// How many distinct events the summary names.
const SUMMARY_MAX: usize = 20;

/// Denials the library reported, and the trace lines it handed over to be
/// printed on fsguard's own stderr.
#[derive(Default)]
pub(crate) struct Report {
    pending: Vec<u8>,
    blocked: u64,
    audited: u64,
    first_blocked: Option<String>,
    first_audited: Option<String>,
    /// Trace or report lines the library could not deliver.
    lost: u64,
    /// Distinct events, in order of first occurrence, with their counts
    /// (at most [`EVENTS_MAX`]; `index` finds one).
    events: Vec<(String, u64)>,
    index: std::collections::HashMap<String, usize>,
    /// Events past [`EVENTS_MAX`] distinct ones.
    other_events: u64,
    /// Print relayed trace lines as they arrive.
    echo: bool,
    /// The log file relayed lines are appended to instead (`--log FILE`).
    file: Option<std::fs::File>,
}

/// Reads per drain: 4 MiB, more than the pipe holds.
const DRAIN_READS: usize = 512;

/// Distinct events kept for the summary: every guarded process can write
/// to the pipe, and the supervisor's memory must not grow without bound.
const EVENTS_MAX: usize = 10_000;

/// Bytes without a newline kept waiting for the rest of their line. The
/// library's messages are shorter (one atomic pipe write each, starting with
/// a newline), so a longer run is a program's own bytes: cut there.
const PENDING_MAX: usize = 8192;

/// A line as received, with control characters (a terminal escape written
/// to the pipe by a program) shown as `?`: the library escapes its own.
fn printable(line: &[u8]) -> String {
    String::from_utf8_lossy(line)
        .chars()
        .map(|c| if c.is_control() && c != '\t' { '?' } else { c })
        .collect()
}

impl Report {
    /// A report that prints relayed trace lines (`echo`) or appends them to
    /// `file` (`--log FILE`).
    pub(crate) fn new(echo: bool, file: Option<std::fs::File>) -> Report {
        Report {
            echo,
            file,
            ..Report::default()
        }
    }

    /// Accesses blocked, or that would have been (audit).
    pub(crate) fn counted(&self) -> u64 {
        self.blocked + self.audited
    }

    /// Distinct events with their counts, in order of first occurrence.
    pub(crate) fn events(&self) -> &[(String, u64)] {
        &self.events
    }

    /// Reads what is in the pipe; false once every writer has closed it.
    pub(crate) fn drain(&mut self, fd: RawFd) -> bool {
        let mut buf = [0u8; 8192];
        let mut open = true;
        // Bounded, so a process that writes to the pipe without end cannot
        // keep the supervisor from its other work (the timeout, the wait).
        for _ in 0..DRAIN_READS {
            // SAFETY: reads into our buffer from our non-blocking pipe.
            let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                open = n < 0;
                break;
            }
            self.pending.extend_from_slice(&buf[..n as usize]);
            self.lines();
        }
        self.lines();
        open
    }

    /// Handles the whole lines received so far.
    fn lines(&mut self) {
        loop {
            let line = match self.pending.iter().position(|&b| b == b'\n') {
                Some(i) => {
                    let line = printable(&self.pending[..i]);
                    self.pending.drain(..=i);
                    line
                }
                None if self.pending.len() > PENDING_MAX => {
                    let line = printable(&self.pending);
                    self.pending.clear();
                    line
                }
                None => break,
            };
            if let Some(rest) = line.strip_prefix("blocked ") {
                self.blocked += 1;
                self.first_blocked.get_or_insert_with(|| rest.to_string());
                self.note(rest.to_string());
            } else if let Some(n) = line
                .strip_prefix("lost ")
                .and_then(|n| n.parse::<u64>().ok())
            {
                self.lost = self.lost.saturating_add(n);
            } else if let Some(rest) = line.strip_prefix("internal ") {
                // A check that failed inside the library: refused, in
                // audit mode too; the rule is carried by the event.
                self.blocked += 1;
                self.first_blocked.get_or_insert_with(|| rest.to_string());
                self.note(format!("(internal) {rest}"));
            } else if let Some(rest) = line.strip_prefix("audit ") {
                self.audited += 1;
                self.first_audited.get_or_insert_with(|| rest.to_string());
                self.note(format!("(audit) {rest}"));
            } else if !line.is_empty() {
                // A whole trace line the library relayed (the log is on
                // stderr): ours to print, whatever the command did with its
                // own stderr.
                use std::io::Write;
                // One write per line, so nothing else appending to the
                // same stream lands in the middle of it.
                if let Some(f) = &mut self.file {
                    // A full disk or a file that refuses writes loses the
                    // line: counted, so the summary never reads as complete.
                    if f.write_all(format!("{line}\n").as_bytes()).is_err() {
                        self.lost += 1;
                    }
                } else if self.echo {
                    let _ = std::io::stderr().write_all(format!("{line}\n").as_bytes());
                }
            }
        }
    }

    fn note(&mut self, ev: String) {
        match self.index.get(&ev) {
            Some(&i) => self.events[i].1 += 1,
            None if self.events.len() < EVENTS_MAX => {
                self.index.insert(ev.clone(), self.events.len());
                self.events.push((ev, 1));
            }
            None => self.other_events += 1,
        }
    }

    /// One line per distinct rule that would allow what was blocked: the
    /// flag and the config line (never for `deny_always` or `secrets`).
    pub(crate) fn hints(&self, policy: &Policy) {
        let mut seen: Vec<String> = Vec::new();
        for (ev, _) in &self.events {
            let mut it = ev.splitn(3, ' ');
            let (Some(call), Some(access), Some(path)) = (it.next(), it.next(), it.next()) else {
                continue;
            };
            let Some(access) = fsguard_policy::Access::parse(access) else {
                continue;
            };
            // A namespace, a mount, another process: no rule allows them.
            if fsguard_policy::process::REFUSED_WHATEVER_THE_POLICY.contains(&call) {
                continue;
            }
            let d = policy.decide(access, path.as_bytes());
            if d.allowed {
                continue;
            }
            if let Some(h) = policy.hint(access, path.as_bytes(), d.rule) {
                let line = format!("{h}  (config: {})", h.toml());
                if !seen.contains(&line) {
                    seen.push(line);
                }
            }
        }
        for line in seen.iter().take(SUMMARY_MAX) {
            eprintln!("fsguard: to allow: {line}");
        }
    }

    /// Prints the counts, the first event of each kind and the distinct
    /// events on stderr.
    pub(crate) fn summary(&self) {
        let s = |n: u64| if n == 1 { "access" } else { "accesses" };
        if let Some(first) = &self.first_blocked {
            eprintln!(
                "fsguard: {} {} blocked; first: {first}",
                self.blocked,
                s(self.blocked)
            );
        }
        if let Some(first) = &self.first_audited {
            eprintln!(
                "fsguard: {} {} would have been blocked (audit); first: {first}",
                self.audited,
                s(self.audited)
            );
        }
        // Lost lines: a count of none must not read as "nothing blocked".
        if self.lost > 0 {
            eprintln!(
                "fsguard: {} trace {} could not be written (lost); the log is \
                 incomplete{}",
                self.lost,
                if self.lost == 1 { "line" } else { "lines" },
                if self.blocked + self.audited == 0 {
                    ": do not read its silence as nothing blocked"
                } else {
                    ""
                }
            );
        }
        // Every distinct event, so none is hidden behind the first.
        if self.events.len() > 1 {
            for (ev, n) in self.events.iter().take(SUMMARY_MAX) {
                let times = if *n > 1 {
                    format!(" (x{n})")
                } else {
                    String::new()
                };
                eprintln!("fsguard:   {ev}{times}");
            }
            if self.events.len() > SUMMARY_MAX {
                eprintln!(
                    "fsguard:   … and {} more (see the trace lines or --log)",
                    self.events.len() - SUMMARY_MAX
                );
            }
            if self.other_events > 0 {
                eprintln!(
                    "fsguard:   … and {} past the first {EVENTS_MAX} distinct ones",
                    self.other_events
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spawn::{pipe, set_nonblocking};
    use std::os::fd::AsRawFd;

    #[test]
    fn report_counts_and_keeps_the_first() {
        let mut r = Report::default();
        let (rd, wr) = pipe(libc::O_CLOEXEC).unwrap();
        set_nonblocking(rd.as_raw_fd());
        let msg = b"blocked open write /etc/x\naudit unlink write /a\nblocked open write /etc/y\n";
        // SAFETY: writes to our pipe.
        unsafe { libc::write(wr.as_raw_fd(), msg.as_ptr().cast(), msg.len()) };
        r.drain(rd.as_raw_fd());
        assert_eq!(r.blocked, 2);
        assert_eq!(r.audited, 1);
        assert_eq!(r.first_blocked.as_deref(), Some("open write /etc/x"));
    }

    /// What a guarded program writes to the pipe adds lines, never hides
    /// the library's: a line it leaves open ends at the library's leading
    /// newline; an endless one is cut; a forged count cannot overflow.
    #[test]
    fn report_survives_what_programs_write() {
        let mut r = Report::default();
        let (rd, wr) = pipe(libc::O_CLOEXEC).unwrap();
        set_nonblocking(rd.as_raw_fd());
        let put = |b: &[u8]| {
            // SAFETY: writes to our pipe.
            unsafe { libc::write(wr.as_raw_fd(), b.as_ptr().cast(), b.len()) };
        };
        put(b"no newline here");
        put(b"\nblocked open write /etc/x\n");
        put(b"lost 18446744073709551615\n\nlost 5\n");
        r.drain(rd.as_raw_fd());
        assert_eq!(r.blocked, 1);
        assert_eq!(r.first_blocked.as_deref(), Some("open write /etc/x"));
        assert_eq!(r.lost, u64::MAX);
        put(&vec![b'a'; 3 * PENDING_MAX]);
        r.drain(rd.as_raw_fd());
        assert!(r.pending.len() <= PENDING_MAX, "{}", r.pending.len());
        put(b"\nblocked unlink write /etc/y\n");
        r.drain(rd.as_raw_fd());
        assert_eq!(r.blocked, 2);
        assert_eq!(printable(b"a\x1b[2Jb\tc"), "a?[2Jb\tc");
    }
}
