//! Shared helpers for fsguard's integration tests, one module per kind:
//!
//! * `artifacts`: builds `libfsguard.so` and the `fsguard` CLI once per test
//!   binary and gives their absolute paths (`lib()`, `cli()`).
//! * `env`: bare and guarded commands (`bare_cmd`, `guarded_cmd`), the
//!   kernel's Landlock ABI.
//! * `process`: `run()` runs a child with a timeout and returns its output.
//! * `c`: `c_program()` compiles a C helper from `tests/c/`.
//! * `python`: the real Python interpreter.
//! * `files`: `TempDir`, a self-removing temporary directory, and small
//!   file-making helpers.
//! * `snapshot`: `snapshot()` records a directory tree so a test can assert
//!   that a denied call changed nothing on disk.
//! * `trace`: parses the `[fsguard] blocked ...` lines of a child's stderr
//!   and checks them against expectations.
//! * `failures`: collects the failures of many cases in one test.
//! * `hooks`: the hook table's rows and the library's exports.
//!
//! Everything is re-exported here: tests `use common::*`.
// Each test binary uses a part of the harness: the rest is neither dead code
// nor an unused re-export there.
#![allow(dead_code, unused_imports)]

mod artifacts;
mod c;
mod env;
mod failures;
mod files;
mod hooks;
mod process;
mod python;
mod snapshot;
mod trace;

pub use artifacts::*;
pub use c::*;
pub use env::*;
pub use failures::*;
pub use files::*;
pub use hooks::*;
pub use process::*;
pub use python::*;
pub use snapshot::*;
pub use trace::*;
