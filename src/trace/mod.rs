//! Trace lines: one per denied (or audited) call, written with one `write(2)`.
//!
//! A line is formatted into a stack buffer and written whole, so lines from
//! concurrent processes sharing a log never interleave. The log file is the
//! library's own fd; before each write it is checked to still be the file we
//! opened (a program may close it and reuse the number), and reopened if not.
//! "stderr" means the stderr the process started with: fd 2 is duplicated at
//! load (`CLOEXEC`: each child makes its own copy) and the copy is checked
//! the same way, so a program that closed fd 2 and opened a data file there
//! never gets trace lines in its data.
//!
//! A line that cannot be written whole (a full disk, a log that refuses
//! writes) is counted as lost, and the process says so once on its stderr.
//!
//! Under `fsguard run` each refusal is also a record on the report channel
//! ([`report`]), which the supervisor counts. The line goes with the record
//! when the supervisor writes it (the log file, and stderr when the
//! process's stderr is not the supervisor's); with the log on the
//! supervisor's own stderr the process writes the line itself, before the
//! refused call returns, so it lands in order with the program's output. A
//! line is never written to another stream than the one chosen: what cannot
//! be sent is counted as lost and the supervisor says so in its summary.
//!
//! The parts: [`render`] (a line as text or JSON, and its escaping),
//! [`sink`] (the log file and the starting stderr) and [`report`] (the
//! report channel of `fsguard run`).

mod render;
mod report;
mod sink;

#[cfg(test)]
mod tests;

pub use render::Line;
pub use report::{report_for_child, report_init, ReportForChild};
pub use sink::Sink;

pub use fsguard_policy::wire::Event;
