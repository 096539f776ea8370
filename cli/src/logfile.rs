//! The `--log FILE` of `fsguard run`, which the supervisor alone writes.
//!
//! Before each write the path is looked at again. A log that was removed
//! (by a static program in a writable directory, or by hand) is made again
//! at its path with every line it held: the supervisor still has the old
//! file open, and reads it back. A log replaced by another file is left
//! alone: the lines go on into the old one, and those written since are
//! counted as missing from the path. Either is said in the summary.

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The log and what happened to it.
pub(crate) struct LogFile {
    path: PathBuf,
    file: File,
    id: (u64, u64),
    /// Made again after it was removed.
    remade: u64,
    /// Every time with the lines the removed file held.
    copied: bool,
    /// Another file is at the path.
    replaced: bool,
    /// Lines written since it was replaced (not in the file at the path).
    missing: u64,
    /// Lines that could not be written at all.
    lost: u64,
}

fn id(m: &std::fs::Metadata) -> (u64, u64) {
    (m.dev(), m.ino())
}

fn lines(b: &[u8]) -> u64 {
    b.iter().filter(|&&c| c == b'\n').count() as u64
}

impl LogFile {
    /// Opens (creates) the log for appending; readable when it can be, so
    /// that it can be copied if it is removed.
    pub(crate) fn open(path: &Path) -> std::io::Result<LogFile> {
        let open = |read| {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .read(read)
                .open(path)
        };
        let file = open(true).or_else(|_| open(false))?;
        let id = id(&file.metadata()?);
        Ok(LogFile {
            path: path.to_path_buf(),
            file,
            id,
            remade: 0,
            copied: true,
            replaced: false,
            missing: 0,
            lost: 0,
        })
    }

    /// Appends whole lines, after a look at the path.
    pub(crate) fn write(&mut self, buf: &[u8]) {
        if buf.is_empty() {
            return;
        }
        self.check();
        let mut done = 0;
        while done < buf.len() {
            match self.file.write(&buf[done..]) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        // A line cut short counts as lost too.
        let start = buf[..done]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |i| i + 1);
        self.lost += lines(&buf[start..]);
        if self.replaced {
            self.missing += lines(&buf[..start]);
        }
    }

    /// Notices a log removed (made again, with its lines) or replaced. The
    /// path is followed: a log named through a symlink is the file it
    /// leads to.
    fn check(&mut self) {
        match std::fs::metadata(&self.path) {
            Ok(m) if id(&m) == self.id => self.replaced = false,
            Ok(_) => self.replaced = true,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => match self.remake() {
                Ok(copied) => {
                    self.remade += 1;
                    self.copied &= copied;
                    self.replaced = false;
                }
                Err(_) => self.replaced = true,
            },
            Err(_) => {}
        }
    }

    /// A new file at the path; true when it holds what the old one held.
    fn remake(&mut self) -> std::io::Result<bool> {
        let new = std::fs::OpenOptions::new()
            .create_new(true)
            .append(true)
            .read(true)
            .open(&self.path)?;
        let copied = self.copy_into(&new).is_ok();
        self.id = id(&new.metadata()?);
        self.file = new;
        Ok(copied)
    }

    fn copy_into(&self, mut new: &File) -> std::io::Result<()> {
        let mut old = self.file.try_clone()?;
        old.rewind()?;
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = old.read(&mut buf)?;
            if n == 0 {
                return Ok(());
            }
            new.write_all(&buf[..n])?;
        }
    }

    /// Lines that could not be written (a full disk, an I/O error).
    pub(crate) fn unwritten(&self) -> u64 {
        self.lost
    }

    /// What the summary says about the log, one line each.
    pub(crate) fn notes(&self) -> Vec<String> {
        let p = self.path.display();
        let mut v = Vec::new();
        if self.remade > 0 {
            v.push(format!(
                "fsguard: warning: the log {p} was removed during the run; \
                 fsguard made it again, {}",
                if self.copied {
                    "with every line"
                } else {
                    "without the lines it held"
                }
            ));
        }
        if self.missing > 0 || self.replaced {
            v.push(format!(
                "fsguard: warning: the log {p} was replaced by another file during the run; \
                 {} trace {} written since {} not in it",
                self.missing,
                if self.missing == 1 { "line" } else { "lines" },
                if self.missing == 1 { "is" } else { "are" }
            ));
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("fsguard-logfile-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_removed_log_is_made_again_with_its_lines() {
        let d = tmp("removed");
        let p = d.join("log");
        let mut l = LogFile::open(&p).unwrap();
        l.write(b"one\n");
        std::fs::remove_file(&p).unwrap();
        l.write(b"two\n");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "one\ntwo\n");
        assert_eq!(l.unwritten(), 0);
        assert_eq!(l.notes().len(), 1, "{:?}", l.notes());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_replaced_log_is_left_alone_and_the_lines_counted() {
        let d = tmp("replaced");
        let p = d.join("log");
        let mut l = LogFile::open(&p).unwrap();
        l.write(b"one\n");
        std::fs::write(d.join("other"), "theirs\n").unwrap();
        std::fs::rename(d.join("other"), &p).unwrap();
        l.write(b"two\nthree\n");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "theirs\n");
        assert_eq!(l.unwritten(), 0);
        assert!(
            l.notes()[0].contains("2 trace lines written since are not in it"),
            "{:?}",
            l.notes()
        );
        std::fs::remove_dir_all(&d).unwrap();
    }
}
