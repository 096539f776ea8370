//! Root containment with `FSGUARD_ROOT=<T>/ws`: reads and writes outside the
//! root are refused (EACCES, one `blocked ... rule=root` line, nothing changed
//! on disk), including via `..`, relative paths, file and directory symlinks,
//! `..` after a symlink, dirfds, `/proc/self/cwd`, `/proc/self/fd/N`, a prefix
//! sibling (`ws2`), trailing slashes, and a dangling symlink under O_CREAT.
//! Reads and writes inside work, and Python imports its stdlib.
//!
//! Layout, in a fresh temp dir T (T itself is outside the root, as is /tmp):
//!   T/ws/in.txt "inside\n"        T/outside/secret.txt "secret\n"
//!   T/ws/top.txt "ws-top\n"       T/outside/dir/ (empty)
//!   T/ws/sub/deep.txt "deep\n"    T/ws2/file.txt "ws2\n"
//!   T/ws/ok/ (dir)                T/top.txt "outside-top\n"
//!   T/ws/link_out    -> ../outside/secret.txt
//!   T/ws/dirlink_out -> ../outside
//!   T/ws/dangling    -> ../outside/created.txt (does not exist)

// LD_PRELOAD, /proc and glibc symbol names: Linux only.
#![cfg(target_os = "linux")]

#[path = "../common/mod.rs"]
mod common;

use common::*;
use std::path::{Path, PathBuf};

struct Layout {
    td: TempDir,
}

impl Layout {
    fn new() -> Layout {
        let td = TempDir::new("root");
        let t = td.path();
        mkdir(&t.join("ws/sub"));
        mkdir(&t.join("ws/ok"));
        mkdir(&t.join("outside/dir"));
        mkdir(&t.join("ws2"));
        write_file(&t.join("ws/in.txt"), "inside\n", 0o644);
        write_file(&t.join("ws/top.txt"), "ws-top\n", 0o644);
        write_file(&t.join("ws/sub/deep.txt"), "deep\n", 0o644);
        write_file(&t.join("outside/secret.txt"), "secret\n", 0o644);
        write_file(&t.join("ws2/file.txt"), "ws2\n", 0o644);
        write_file(&t.join("top.txt"), "outside-top\n", 0o644);
        symlink("../outside/secret.txt", &t.join("ws/link_out"));
        symlink("../outside", &t.join("ws/dirlink_out"));
        symlink("../outside/created.txt", &t.join("ws/dangling"));
        Layout { td }
    }
    fn t(&self) -> &Path {
        self.td.path()
    }
    fn ws(&self) -> PathBuf {
        self.td.join("ws")
    }
}

fn calls_bin() -> PathBuf {
    c_program("calls", &["-O0", "-U_FORTIFY_SOURCE"])
}

fn args(case: &str, t: &Path) -> Vec<String> {
    case.replace("{T}", t.to_str().unwrap())
        .split_whitespace()
        .map(|a| {
            if a == "<empty>" {
                String::new()
            } else {
                a.to_string()
            }
        })
        .collect()
}

fn is_root_user() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self")
        .map(|m| m.uid() == 0)
        .unwrap_or(false)
}

fn result(out: &Out) -> Option<(String, String)> {
    let l = out.stdout.lines().find(|l| l.starts_with("ret="))?;
    let (r, e) = l.split_once(' ')?;
    Some((
        r[4..].to_string(),
        e.trim_start_matches("errno=").to_string(),
    ))
}

mod above;
mod allowed;
mod denied;
mod python;
