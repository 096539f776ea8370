//! What the supervisor makes of the report channel's messages
//! ([`fsguard_policy::channel`]): denials counted for the summary at exit,
//! and the trace lines it prints on its own stderr or appends to the log.
//!
//! A line goes out as the library wrote it only when the supervisor can
//! check it is one of the library's, for that record and, in JSON, for the
//! process that sent it ([`channel::line_ok`]); anything else is written
//! marked `unverified`, with the sender's pid. What is in a process cannot
//! be told apart from the library in it: the pid is what is vouched for.

use std::collections::HashSet;
use std::io::Write;

use fsguard_policy::channel::{self, Kind, Message};
use fsguard_policy::{LogFormat, Policy};

use crate::logfile::LogFile;

/// How many distinct events the summary names.
const SUMMARY_MAX: usize = 20;

/// Denials the library reported, and the trace lines it handed over.
#[derive(Default)]
pub(crate) struct Report {
    blocked: u64,
    audited: u64,
    /// Of `blocked`: calls the library allowed and the kernel's Landlock
    /// ruleset refused (`rule=landlock`).
    kernel: u64,
    first_blocked: Option<String>,
    first_audited: Option<String>,
    /// Trace lines fsguard could not write (its own stderr or the log).
    lost_lines: u64,
    /// Refusals whose messages processes could not send (`lost N`), and
    /// the processes that said so (a sender of unknown pid counts once).
    lost_records: u64,
    lost_pids: HashSet<Option<u32>>,
    /// Messages and lines not vouched for.
    unverified: u64,
    /// Distinct events, in order of first occurrence, with their counts
    /// (at most [`EVENTS_MAX`]; `index` finds one).
    events: Vec<(String, u64)>,
    index: std::collections::HashMap<String, usize>,
    /// Events past [`EVENTS_MAX`] distinct ones.
    other_events: u64,
    /// Programs the library could not follow that a guarded process
    /// started (`unguarded exec` notes): their kind and path, each once.
    unguarded: Vec<(String, String)>,
    /// Print relayed trace lines (the log is on stderr).
    echo: bool,
    format: LogFormat,
    /// The log file relayed lines are appended to instead (`--log FILE`).
    log: Option<LogFile>,
    /// Lines received, written at [`Report::flush`].
    out: Vec<u8>,
}

/// Distinct events kept for the summary: every guarded process can write
/// to the channel, and the supervisor's memory must not grow without bound.
const EVENTS_MAX: usize = 10_000;

/// Processes remembered as having lost records.
const LOST_PIDS_MAX: usize = 100_000;

/// Bytes of lines held before they are written.
const OUT_MAX: usize = 256 * 1024;

/// A path or line as received, with control characters (a terminal
/// escape) shown as `?`.
fn printable(line: &[u8]) -> String {
    String::from_utf8_lossy(line)
        .chars()
        .map(|c| if c.is_control() && c != '\t' { '?' } else { c })
        .collect()
}

impl Report {
    /// A report that prints relayed trace lines (`echo`) or appends them to
    /// `log` (`--log FILE`); unverified lines are written in `format`.
    pub(crate) fn new(echo: bool, format: LogFormat, log: Option<LogFile>) -> Report {
        Report {
            echo,
            format,
            log,
            ..Report::default()
        }
    }

    /// Accesses blocked, or that would have been (audit).
    pub(crate) fn counted(&self) -> u64 {
        self.blocked + self.audited
    }

    /// Refusals that were not reported (their messages were lost).
    pub(crate) fn unreported(&self) -> u64 {
        self.lost_records
    }

    /// Distinct events with their counts, in order of first occurrence.
    pub(crate) fn events(&self) -> &[(String, u64)] {
        &self.events
    }

    /// Takes one message from process `pid` (`cut`: longer than the
    /// supervisor reads).
    pub(crate) fn message(&mut self, msg: &[u8], cut: bool, pid: Option<u32>) {
        let parsed = if cut { None } else { channel::parse(msg) };
        let Some(m) = parsed else {
            self.unverified(msg, pid);
            return;
        };
        match &m {
            Message::Record {
                kind,
                call,
                access,
                path,
                line,
            } => {
                let ev = format!("{call} {} {}", access.as_str(), printable(path));
                match kind {
                    Kind::Blocked => {
                        self.blocked += 1;
                        self.first_blocked.get_or_insert_with(|| ev.clone());
                        self.note(ev);
                    }
                    // A check that failed inside the library: refused, in
                    // audit mode too.
                    Kind::Internal => {
                        self.blocked += 1;
                        self.first_blocked.get_or_insert_with(|| ev.clone());
                        self.note(format!("(internal) {ev}"));
                    }
                    // A program the library cannot follow, its line
                    // written by the process: `call` is its kind.
                    Kind::Unguarded => {
                        let u = (call.to_string(), printable(path));
                        if !self.unguarded.contains(&u) && self.unguarded.len() < SUMMARY_MAX {
                            self.unguarded.push(u);
                        }
                    }
                    // Allowed by the library, refused by the kernel's
                    // ruleset: blocked, in audit mode too.
                    Kind::Landlock => {
                        self.blocked += 1;
                        self.kernel += 1;
                        self.first_blocked.get_or_insert_with(|| ev.clone());
                        self.note(format!("(landlock) {ev}"));
                    }
                    Kind::Audit => {
                        self.audited += 1;
                        self.first_audited.get_or_insert_with(|| ev.clone());
                        self.note(format!("(audit) {ev}"));
                    }
                }
                if let Some(l) = line {
                    self.line(&m, l, pid);
                }
            }
            Message::Lost(n) => {
                self.lost_records = self.lost_records.saturating_add(*n);
                if *n > 0 && self.lost_pids.len() < LOST_PIDS_MAX {
                    self.lost_pids.insert(pid);
                }
            }
            Message::Note(l) => {
                self.unguarded_note(l);
                self.line(&m, l, pid)
            }
        }
        if self.out.len() > OUT_MAX {
            self.flush();
        }
    }

    /// Programs the library could not follow that ran (kind, path): what
    /// the kernel refused them is neither traced nor counted.
    pub(crate) fn unguarded(&self) -> &[(String, String)] {
        &self.unguarded
    }

    /// Notes an `unguarded exec` line (text or JSON): the program's kind
    /// (`static`, `go`, `setid`) and path.
    fn unguarded_note(&mut self, line: &[u8]) {
        let line = String::from_utf8_lossy(line);
        let line = line.trim_end();
        let found = if let Some(rest) = line.strip_prefix("[fsguard] unguarded exec ") {
            rest.split_once(" path=").map(|(kind, p)| {
                let path = p.rsplit_once(" call=").map_or(p, |(p, _)| p);
                (kind.to_string(), path.trim_matches('"').to_string())
            })
        } else if line.starts_with("{\"event\":\"unguarded\"") {
            serde_json::from_str::<serde_json::Value>(line)
                .ok()
                .and_then(|v| {
                    let path = v.get("path")?.as_str()?.to_string();
                    let rule = v.get("rule")?.as_str()?;
                    let kind = rule.strip_prefix("unguarded_exec:").unwrap_or(rule);
                    Some((kind.to_string(), path))
                })
        } else {
            None
        };
        if let Some(u) = found {
            if !self.unguarded.contains(&u) && self.unguarded.len() < SUMMARY_MAX {
                self.unguarded.push(u);
            }
        }
    }

    /// A trace line handed over: as it is when it is the library's, else
    /// marked.
    fn line(&mut self, m: &Message<'_>, line: &[u8], pid: Option<u32>) {
        if channel::line_ok(m, line, self.format, pid) {
            self.out.extend_from_slice(line);
        } else {
            self.unverified(line, pid);
        }
    }

    fn unverified(&mut self, text: &[u8], pid: Option<u32>) {
        self.unverified += 1;
        let text = text.strip_suffix(b"\n").unwrap_or(text);
        let mut l = String::new();
        channel::unverified(&mut l, self.format, pid, text);
        l.push('\n');
        self.out.extend_from_slice(l.as_bytes());
    }

    /// Writes the lines received so far: to the log, or on stderr.
    pub(crate) fn flush(&mut self) {
        if self.out.is_empty() {
            return;
        }
        if let Some(log) = &mut self.log {
            log.write(&self.out);
        } else if self.echo && std::io::stderr().write_all(&self.out).is_err() {
            self.lost_lines += self.out.iter().filter(|&&c| c == b'\n').count() as u64;
        }
        self.out.clear();
    }

    /// ` (xN)` when the event happened N > 1 times.
    fn times(&self, ev: &str) -> String {
        match self.index.get(ev).map(|&i| self.events[i].1) {
            Some(n) if n > 1 => format!(" (x{n})"),
            _ => String::new(),
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

    /// The closing lines about what was refused: the option that allows a
    /// refusal at the policy's boundary, the rule behind one its author
    /// made on purpose ([`crate::report::advice`]).
    pub(crate) fn hints(&self, policy: &Policy) {
        for line in crate::report::advice(policy, &self.events, SUMMARY_MAX) {
            eprintln!("{line}");
        }
    }

    /// Prints the counts, the first event of each kind and the other
    /// distinct events on stderr (each named once).
    pub(crate) fn summary(&self) {
        let s = |n: u64| if n == 1 { "access" } else { "accesses" };
        if let Some(first) = &self.first_blocked {
            eprintln!(
                "fsguard: {} {} blocked; first: {first}{}",
                self.blocked,
                s(self.blocked),
                self.times(first)
            );
        }
        if self.kernel > 0 {
            eprintln!(
                "fsguard: {} of {} refused by the kernel's Landlock ruleset after the library \
                 let {} through (rule=landlock){}",
                self.kernel,
                if self.blocked == 1 { "it" } else { "them" },
                if self.kernel == 1 { "it" } else { "them" },
                if self.audited > 0 {
                    ": blocked, not only would have been (audit)"
                } else {
                    ""
                }
            );
        }
        if let Some(first) = &self.first_audited {
            eprintln!(
                "fsguard: {} {} would have been blocked (audit); first: {first}{}",
                self.audited,
                s(self.audited),
                self.times(&format!("(audit) {first}"))
            );
        }
        // Lost records and lines: a count of none must not read as
        // "nothing blocked". Said once, here, never by each process.
        let silence = if self.blocked + self.audited == 0 {
            ": do not read its silence as nothing blocked"
        } else {
            ""
        };
        if self.lost_records > 0 {
            let n = self.lost_pids.len();
            eprintln!(
                "fsguard: warning: {n} {} could not report {} {} to fsguard (the channel \
                 was lost); they are not counted above{silence}",
                if n == 1 { "process" } else { "processes" },
                self.lost_records,
                if self.lost_records == 1 {
                    "refusal"
                } else {
                    "refusals"
                },
            );
        }
        let lost = self.lost_lines + self.log.as_ref().map_or(0, LogFile::unwritten);
        if lost > 0 {
            eprintln!(
                "fsguard: {lost} trace {} could not be written (lost); the log is \
                 incomplete{silence}",
                if lost == 1 { "line" } else { "lines" },
            );
        }
        for note in self.log.iter().flat_map(LogFile::notes) {
            eprintln!("{note}");
        }
        if self.unverified > 0 {
            eprintln!(
                "fsguard: warning: {} {} on the report channel did not come from the \
                 library as sent; {} marked \"unverified\" with the sending pid",
                self.unverified,
                if self.unverified == 1 {
                    "message"
                } else {
                    "messages"
                },
                if self.unverified == 1 {
                    "it is"
                } else {
                    "they are"
                },
            );
        }
        // Every distinct event, so none is hidden behind the first; each
        // named once (the first lines above named theirs).
        if self.events.len() > 1 {
            let named = |ev: &str| match ev.strip_prefix("(audit) ") {
                Some(e) => self.first_audited.as_deref() == Some(e),
                None => {
                    let ev = ev.strip_prefix("(internal) ").unwrap_or(ev);
                    self.first_blocked.as_deref()
                        == Some(ev.strip_prefix("(landlock) ").unwrap_or(ev))
                }
            };
            for (ev, n) in self
                .events
                .iter()
                .take(SUMMARY_MAX)
                .filter(|(ev, _)| !named(ev))
            {
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

    #[test]
    fn report_counts_and_keeps_the_first() {
        let mut r = Report::new(false, LogFormat::Text, None);
        r.message(b"blocked open write /etc/x", false, Some(1));
        r.message(b"audit unlink write /a", false, Some(1));
        r.message(b"blocked open write /etc/y\n", false, Some(1));
        assert_eq!(r.blocked, 2);
        assert_eq!(r.audited, 1);
        assert_eq!(r.first_blocked.as_deref(), Some("open write /etc/x"));
        assert_eq!(r.unverified, 0);
    }

    /// What a guarded program sends adds marked lines, never lines that
    /// pass for the library's; a forged count cannot overflow; processes
    /// that lost records are counted once each.
    #[test]
    fn report_marks_what_it_cannot_vouch_for() {
        let mut r = Report::new(false, LogFormat::Text, None);
        r.message(b"half a line, no newline", false, Some(7));
        r.message(
            b"blocked open read /x\0[fsguard] blocked open read path=/x rule=root\n",
            false,
            Some(7),
        );
        r.message(
            b"blocked open read /y\0[fsguard] audit open read path=/y rule=root\n",
            false,
            Some(7),
        );
        r.message(b"blocked open read /z\0", true, Some(7));
        r.message(b"lost 18446744073709551615", false, Some(8));
        r.message(b"lost 5", false, Some(8));
        r.message(b"lost 1", false, Some(9));
        assert_eq!(r.blocked, 2);
        assert_eq!(r.unverified, 3);
        assert_eq!(r.lost_records, u64::MAX);
        assert_eq!(r.lost_pids.len(), 2);
        let out = String::from_utf8(r.out.clone()).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines,
            [
                "[fsguard] unverified pid=7 text=\"half a line, no newline\"",
                "[fsguard] blocked open read path=/x rule=root",
                "[fsguard] unverified pid=7 text=\"[fsguard] audit open read path=/y rule=root\"",
                "[fsguard] unverified pid=7 text=\"blocked open read /z\\u0000\"",
            ]
        );
        assert_eq!(printable(b"a\x1b[2Jb\tc"), "a?[2Jb\tc");
    }

    #[test]
    fn a_json_line_must_carry_its_senders_pid() {
        let mut r = Report::new(false, LogFormat::Json, None);
        let line = br#"{"event":"blocked","call":"open","access":"read","path":"/x","rule":"root","pid":42,"errno":13,"exe":"","time":1.000}"#;
        let mut m = b"blocked open read /x\0".to_vec();
        m.extend_from_slice(line);
        m.push(b'\n');
        r.message(&m, false, Some(42));
        r.message(&m, false, Some(43));
        let out = String::from_utf8(r.out.clone()).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0].as_bytes(), line);
        assert!(
            lines[1].starts_with("{\"event\":\"unverified\",\"pid\":43,\"text\":"),
            "{}",
            lines[1]
        );
        assert_eq!(r.blocked, 2);
    }
}
