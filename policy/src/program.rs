//! What a program file is, read from its first bytes: whether an ELF file
//! names a program interpreter (is dynamically linked, so the library can
//! follow it). The library (on an exec hook, maybe on a signal handler's
//! small stack) and the CLI (before `run` starts a program) share this.
//!
//! Also the `PATH` search's candidates, as glibc's `execvp` forms them.
//!
//! Allocation-free: the caller supplies the reads and the buffers.

/// `PT_INTERP`: the program header naming the dynamic loader.
const PT_INTERP: u32 = 3;
/// `PT_NOTE`: a segment of notes.
const PT_NOTE: u32 = 4;
/// The Go linker's build ID note (`.note.go.buildid`): owner `Go`, type 4,
/// written into every Go program, dynamic (cgo) or static, stripped or not.
const GO_NOTE_OWNER: &[u8] = b"Go\0\0";
const GO_NOTE_BUILDID: u64 = 4;

/// What an ELF program is, for the library that must follow it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElfKind {
    /// Names a program interpreter: the loader runs it, and the preload
    /// library with it, and its file calls go through libc.
    Dynamic,
    /// No program interpreter: nothing loads the library.
    Static,
    /// A Go program: its runtime makes its own system calls for all file
    /// I/O, so the library sees none of them, even when the program is
    /// dynamically linked (cgo, `dynamic`) and the library is loaded.
    Go {
        /// Names a program interpreter (the library is loaded into it).
        dynamic: bool,
    },
}

/// Whether the ELF file whose first bytes are `head` has a `PT_INTERP`
/// program header. `read(offset, buf)` reads the file at `offset` into
/// `buf` and returns how many bytes it read (`None` on error). At most
/// `limit` bytes of program headers are looked at; headers the file does
/// not hold (a short read) count as absent.
///
/// `None`: not a readable ELF header, a program header entry too small to
/// hold a type, or a failed read.
#[inline]
pub fn elf_has_interp<R>(head: &[u8], limit: usize, read: R) -> Option<bool>
where
    R: FnMut(u64, &mut [u8]) -> Option<usize>,
{
    elf_kind(head, limit, read).map(|k| k == ElfKind::Dynamic)
}

/// What the ELF file whose first bytes are `head` is ([`ElfKind`]), read as
/// [`elf_has_interp`] reads it; a Go program is told by its build ID note,
/// found in the first few `PT_NOTE` segments (each read up to 512 bytes).
pub fn elf_kind<R>(head: &[u8], limit: usize, mut read: R) -> Option<ElfKind>
where
    R: FnMut(u64, &mut [u8]) -> Option<usize>,
{
    if head.len() < 64 || head[..4] != *b"\x7fELF" {
        return None;
    }
    let le = head[5] == 1;
    let wide = head[4] == 2;
    let (phoff, phentsize, phnum) = if wide {
        (
            read_uint(head, 0x20, 8, le),
            read_uint(head, 0x36, 2, le),
            read_uint(head, 0x38, 2, le),
        )
    } else {
        (
            read_uint(head, 0x1c, 4, le),
            read_uint(head, 0x2a, 2, le),
            read_uint(head, 0x2c, 2, le),
        )
    };
    let (ent, num) = (phentsize as usize, phnum as usize);
    // A note segment's offset and size lie 4..24 (64-bit) or 4..20 bytes in.
    let note_fields = if wide { 0x28 } else { 0x14 };
    if ent < 4 {
        return None;
    }
    // A few entries at a time: the stack may be a signal handler's.
    let mut buf = [0u8; 512];
    let per = buf.len() / ent;
    if per == 0 {
        return None;
    }
    let total = num.min(limit / ent);
    let mut interp = false;
    let mut notes = [(0u64, 0u64); 4];
    let mut n_notes = 0;
    let mut i = 0;
    while i < total {
        let k = per.min(total - i);
        let off = phoff.checked_add((i * ent) as u64)?;
        let got = read(off, &mut buf[..k * ent])?.min(k * ent);
        for ph in buf[..got].chunks_exact(ent) {
            match read_uint(ph, 0, 4, le) as u32 {
                PT_INTERP => interp = true,
                PT_NOTE if n_notes < notes.len() && ent >= note_fields => {
                    notes[n_notes] = if wide {
                        (read_uint(ph, 8, 8, le), read_uint(ph, 0x20, 8, le))
                    } else {
                        (read_uint(ph, 4, 4, le), read_uint(ph, 0x10, 4, le))
                    };
                    n_notes += 1;
                }
                _ => {}
            }
        }
        if got < k * ent {
            break;
        }
        i += k;
    }
    for &(off, size) in &notes[..n_notes] {
        let want = size.min(buf.len() as u64) as usize;
        let got = read(off, &mut buf[..want]).unwrap_or(0).min(want);
        if has_go_note(&buf[..got], le) {
            return Some(ElfKind::Go { dynamic: interp });
        }
    }
    Some(if interp {
        ElfKind::Dynamic
    } else {
        ElfKind::Static
    })
}

/// Whether the notes in `notes` (a note segment's bytes, maybe cut short)
/// hold Go's build ID note. Each note: name size, descriptor size, type
/// (4 bytes each), then the name and the descriptor, each padded to 4.
fn has_go_note(notes: &[u8], le: bool) -> bool {
    let pad = |n: u64| n.checked_add(3).map(|n| n & !3);
    let mut at = 0usize;
    while at + 12 <= notes.len() {
        let namesz = read_uint(notes, at, 4, le);
        let descsz = read_uint(notes, at + 4, 4, le);
        let kind = read_uint(notes, at + 8, 4, le);
        let name_at = at + 12;
        // The Go linker writes the owner as `Go\0\0` (size 4); `Go\0`
        // (size 3, padded) is the same owner written as the ELF spec does.
        if kind == GO_NOTE_BUILDID
            && matches!(namesz, 3 | 4)
            && notes.get(name_at..name_at + 4) == Some(GO_NOTE_OWNER)
        {
            return true;
        }
        let next = pad(namesz)
            .zip(pad(descsz))
            .and_then(|(a, b)| a.checked_add(b))
            .and_then(|n| usize::try_from(n).ok())
            .and_then(|n| name_at.checked_add(n));
        match next {
            Some(n) if n > at => at = n,
            _ => return false,
        }
    }
    false
}

/// The `n`-byte (at most 8) unsigned integer at `off` in `b`.
#[inline]
fn read_uint(b: &[u8], off: usize, n: usize, le: bool) -> u64 {
    let mut v = [0u8; 8];
    if le {
        v[..n].copy_from_slice(&b[off..off + n]);
        u64::from_le_bytes(v)
    } else {
        v[8 - n..].copy_from_slice(&b[off..off + n]);
        u64::from_be_bytes(v)
    }
}

/// Variables of glibc's dynamic loader that make it run code beside the
/// library or write files, where no hook of the library sees it (glibc's
/// `elf/rtld.c`, `process_envvars`): an exec whose environment sets one to
/// a value that is not empty is refused (`rule=loader_env:NAME`), and a
/// process that starts with one refuses to run. Every other variable the
/// loader reads loads code the library does see (in the main namespace,
/// behind its hooks), reads system files, or only prints: docs/children.md
/// lists them all with the reason.
pub const LOADER_ENV: &[&str] = &[
    "LD_AUDIT",
    "LD_DEBUG_OUTPUT",
    "LD_PROFILE",
    "LD_PROFILE_OUTPUT",
];

/// Which of [`LOADER_ENV`] the environment entry `kv` (`KEY=value`) sets to
/// a value that is not empty (the loader ignores an empty one).
pub fn loader_env(kv: &[u8]) -> Option<&'static str> {
    LOADER_ENV.iter().copied().find(|var| {
        kv.strip_prefix(var.as_bytes())
            .and_then(|rest| rest.strip_prefix(b"="))
            .is_some_and(|value| !value.is_empty())
    })
}

/// Why a [`LOADER_ENV`] variable (or the program's own `DT_AUDIT` and
/// `DT_DEPAUDIT` entries) is refused, for messages.
pub fn loader_env_why(var: &str) -> &'static str {
    match var {
        "LD_AUDIT" | "DT_AUDIT" | "DT_DEPAUDIT" => {
            "the loader runs an audit module beside the library, \
             with a C library of its own that no hook covers"
        }
        "LD_DEBUG_OUTPUT" => "the loader writes its debug output to that file, unchecked",
        _ => "the loader writes profiling data to a file, unchecked",
    }
}

/// The `PATH` searched when the variable is unset (glibc's default).
pub const DEFAULT_PATH: &[u8] = b"/bin:/usr/bin";

/// The entries of a `PATH` value, in search order (an empty one, the
/// current directory, stays empty: see [`candidate`]).
pub fn path_dirs(path: &[u8]) -> impl Iterator<Item = &[u8]> {
    path.split(|&c| c == b':')
}

/// An empty `PATH` entry is the current directory.
fn dir_or_dot(dir: &[u8]) -> &[u8] {
    if dir.is_empty() {
        b"."
    } else {
        dir
    }
}

/// The candidate `dir/file` for a [`path_dirs`] entry, byte by byte (as
/// glibc joins them: `./file` for an empty entry, `//` after a `dir` ending
/// in `/`), to be written into the caller's buffer; [`candidate_len`] bytes.
pub fn candidate<'a>(dir: &'a [u8], file: &'a [u8]) -> impl Iterator<Item = u8> + 'a {
    dir_or_dot(dir).iter().chain(b"/").chain(file).copied()
}

/// How long [`candidate`]`(dir, file)` is.
pub fn candidate_len(dir: &[u8], file: &[u8]) -> usize {
    dir_or_dot(dir).len() + 1 + file.len()
}

/// Where a `#!` line names its interpreter in `head` (the file's first
/// bytes): the first word after `#!`, up to white space or the line's end.
/// `None` when `head` is no script or names nothing.
pub fn interpreter(head: &[u8]) -> Option<std::ops::Range<usize>> {
    let line = head.strip_prefix(b"#!")?;
    let line = &line[..line.iter().position(|&c| c == b'\n').unwrap_or(line.len())];
    let trimmed = line.trim_ascii_start();
    let start = 2 + line.len() - trimmed.len();
    let len = trimmed
        .iter()
        .position(|c| c.is_ascii_whitespace())
        .unwrap_or(trimmed.len());
    (len > 0).then(|| start..start + len)
}

/// The bytes of a file's head Linux reads for its `#!` line
/// (`BINPRM_BUF_SIZE`).
pub const SHEBANG_HEAD: usize = 256;

/// A `#!` line as Linux reads it (`fs/binfmt_script.c`): where the
/// interpreter's name and its one optional argument lie in the head.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shebang {
    /// The interpreter, up to the first space, tab or NUL.
    pub name: std::ops::Range<usize>,
    /// The rest of the line, spaces and tabs trimmed at both ends, up to a
    /// NUL: one argument, however many words it holds; `None` when empty.
    pub arg: Option<std::ops::Range<usize>>,
}

/// The `#!` line of `head` (the file's first bytes, at most
/// [`SHEBANG_HEAD`]; a shorter file reads as if padded with NULs) as the
/// kernel parses it: `None` for no `#!`, `Some(Err(()))` for a line the
/// kernel refuses with `ENOEXEC` (no interpreter, or one cut by the end of
/// the head), else the interpreter and its argument.
pub fn shebang(head: &[u8]) -> Option<Result<Shebang, ()>> {
    let head = &head[..head.len().min(SHEBANG_HEAD)];
    if !head.starts_with(b"#!") {
        return None;
    }
    // The kernel's buffer: the head, NUL-padded to its full size.
    let at = |i: usize| head.get(i).copied().unwrap_or(0);
    let spacetab = |c: u8| c == b' ' || c == b'\t';
    let last = SHEBANG_HEAD - 1;
    let next_non_spacetab = |from: usize, to: usize| (from..=to).find(|&i| !spacetab(at(i)));
    let next_terminator =
        |from: usize, to: usize| (from..=to).find(|&i| spacetab(at(i)) || at(i) == 0);
    let mut end = match (0..SHEBANG_HEAD).find(|&i| at(i) == b'\n') {
        Some(i) => i,
        None => {
            let Some(i) = next_non_spacetab(2, last) else {
                return Some(Err(()));
            };
            // No later space, tab or NUL: the name is cut.
            if next_terminator(i, last).is_none() {
                return Some(Err(()));
            }
            last
        }
    };
    while end > 2 && spacetab(at(end - 1)) {
        end -= 1;
    }
    let name = match next_non_spacetab(2, end) {
        Some(i) if i < end => i,
        _ => return Some(Err(())),
    };
    let sep = next_terminator(name, end);
    let name_end = sep.unwrap_or(end).min(end);
    let arg = match sep {
        Some(s) if s < end && at(s) != 0 => next_non_spacetab(s, end)
            .filter(|&a| a < end)
            .map(|a| a..(a..end).find(|&i| at(i) == 0).unwrap_or(end)),
        _ => None,
    };
    // A name with a NUL in it ends there.
    let name_end = (name..name_end).find(|&i| at(i) == 0).unwrap_or(name_end);
    Some(Ok(Shebang {
        name: name..name_end,
        arg,
    }))
}

/// The directories System Integrity Protection guards on macOS: dyld
/// removes every `DYLD_*` variable (`DYLD_INSERT_LIBRARIES` with them) for
/// a program under one of them, so the library is never loaded there.
pub const SIP_DIRS: &[&[u8]] = &[
    b"/usr/bin",
    b"/bin",
    b"/sbin",
    b"/usr/sbin",
    b"/usr/libexec",
    b"/System",
];

/// `SF_RESTRICTED` in `st_flags` (Darwin's `sys/stat.h`): the file itself
/// is SIP-protected, wherever it is.
pub const SF_RESTRICTED: u32 = 0x0008_0000;

/// Whether macOS strips `DYLD_INSERT_LIBRARIES` from the program at `path`
/// (canonical: no symlink, no `..`) whose `st_flags` are `flags`: it is
/// under one of [`SIP_DIRS`] or carries [`SF_RESTRICTED`]. The macOS
/// counterpart of a static program: it would run unguarded.
pub fn sip_protected(path: &[u8], flags: u32) -> bool {
    flags & SF_RESTRICTED != 0
        || SIP_DIRS.iter().any(|d| {
            path.strip_prefix(*d)
                .is_some_and(|rest| rest.is_empty() || rest[0] == b'/')
        })
}

/// `S_ISUID | S_ISGID` (POSIX `sys/stat.h`, the same bits on Linux and
/// macOS).
const SET_ID: u32 = 0o6000;

/// Whether a program with `st_mode` `mode` is set-user-ID or set-group-ID:
/// dyld strips every `DYLD_*` variable from it, so the library would not
/// be loaded (on Linux `no_new_privs` makes exec ignore the bits instead).
pub fn set_id(mode: u32) -> bool {
    mode & SET_ID != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The interpreter and argument of a `#!` line, as strings.
    fn sb(head: &[u8]) -> Option<Result<(String, Option<String>), ()>> {
        let t = |r: std::ops::Range<usize>| String::from_utf8_lossy(&head[r]).into_owned();
        shebang(head).map(|r| r.map(|s| (t(s.name), s.arg.map(t))))
    }

    #[test]
    fn shebang_lines_read_as_the_kernel_reads_them() {
        let ok = |n: &str, a: Option<&str>| Some(Ok((n.to_string(), a.map(str::to_string))));
        assert_eq!(sb(b"\x7fELF"), None);
        assert_eq!(sb(b"#!/bin/sh\necho"), ok("/bin/sh", None));
        assert_eq!(sb(b"#!/bin/sh"), ok("/bin/sh", None));
        assert_eq!(
            sb(b"#! \t/usr/bin/env  python3 -u \t\nx"),
            ok("/usr/bin/env", Some("python3 -u"))
        );
        assert_eq!(sb(b"#!/bin/sh \n"), ok("/bin/sh", None));
        assert_eq!(sb(b"#!\n/bin/sh"), Some(Err(())));
        assert_eq!(sb(b"#!   \n"), Some(Err(())));
        // An argument cut at a NUL; an empty one is still an argument.
        assert_eq!(sb(b"#!/bin/sh -e\0x\n"), ok("/bin/sh", Some("-e")));
        assert_eq!(sb(b"#!/bin/sh \0x\n"), ok("/bin/sh", Some("")));
        // No newline in the head: a name cut by its end is refused, a
        // complete one keeps its argument up to the last byte but one.
        let mut long = b"#!/".to_vec();
        long.extend([b'x'; 300]);
        assert_eq!(sb(&long), Some(Err(())));
        let mut cut = b"#!/bin/sh ".to_vec();
        cut.extend([b'a'; 300]);
        let arg = "a".repeat(SHEBANG_HEAD - 1 - 10);
        assert_eq!(sb(&cut), ok("/bin/sh", Some(&arg)));
    }

    /// A 64-bit (or 32-bit) ELF image with program headers of the given types.
    fn elf(wide: bool, le: bool, types: &[u32], phoff: u64) -> Vec<u8> {
        let ent: usize = if wide { 56 } else { 32 };
        let mut f = vec![0u8; phoff as usize + types.len() * ent];
        f[..4].copy_from_slice(b"\x7fELF");
        f[4] = if wide { 2 } else { 1 };
        f[5] = if le { 1 } else { 2 };
        let put = |f: &mut Vec<u8>, off: usize, n: usize, v: u64| {
            let b = if le { v.to_le_bytes() } else { v.to_be_bytes() };
            let s = if le { &b[..n] } else { &b[8 - n..] };
            f[off..off + n].copy_from_slice(s);
        };
        if wide {
            put(&mut f, 0x20, 8, phoff);
            put(&mut f, 0x36, 2, ent as u64);
            put(&mut f, 0x38, 2, types.len() as u64);
        } else {
            put(&mut f, 0x1c, 4, phoff);
            put(&mut f, 0x2a, 2, ent as u64);
            put(&mut f, 0x2c, 2, types.len() as u64);
        }
        for (i, &t) in types.iter().enumerate() {
            put(&mut f, phoff as usize + i * ent, 4, u64::from(t));
        }
        f
    }

    fn check(f: &[u8], limit: usize) -> Option<bool> {
        elf_has_interp(&f[..f.len().min(256)], limit, |off, buf| {
            let off = usize::try_from(off).ok()?;
            let src = f.get(off..).unwrap_or(&[]);
            let n = src.len().min(buf.len());
            buf[..n].copy_from_slice(&src[..n]);
            Some(n)
        })
    }

    #[test]
    fn dynamic_and_static_in_every_layout() {
        for wide in [true, false] {
            for le in [true, false] {
                assert_eq!(check(&elf(wide, le, &[6, 3, 1], 64), 4096), Some(true));
                assert_eq!(check(&elf(wide, le, &[6, 1, 1], 64), 4096), Some(false));
            }
        }
    }

    #[test]
    fn interp_past_one_chunk_is_found() {
        // 20 entries of 56 bytes span three 512-byte reads.
        let mut types = [1u32; 20];
        types[19] = 3;
        assert_eq!(check(&elf(true, true, &types, 64), 4096), Some(true));
    }

    #[test]
    fn limit_bounds_the_headers_looked_at() {
        let mut types = [1u32; 100];
        types[99] = 3;
        let f = elf(true, true, &types, 64);
        assert_eq!(check(&f, 4096), Some(false));
        assert_eq!(check(&f, usize::MAX), Some(true));
    }

    #[test]
    fn headers_past_the_end_count_as_absent() {
        let mut f = elf(true, true, &[1, 3], 64);
        f.truncate(64 + 56 + 2);
        assert_eq!(check(&f, 4096), Some(false));
    }

    #[test]
    fn malformed_headers_are_not_judged() {
        assert_eq!(check(b"#!/bin/sh\n", 4096), None);
        assert_eq!(check(&[0x7f, b'E', b'L', b'F', 2, 1], 4096), None);
        let mut f = elf(true, true, &[3], 64);
        f[0x36] = 2; // entry size 2: no room for a type
        assert_eq!(check(&f, 4096), None);
        f[0x36] = 0x10;
        f[0x37] = 0x02; // entry size 528: larger than a chunk
        assert_eq!(check(&f, 4096), None);
        let read_fails = elf_has_interp(&elf(true, true, &[3], 64), 4096, |_, _| None);
        assert_eq!(read_fails, None);
    }

    /// One note: owner `name` (NUL added), type `kind`, `desc` bytes.
    fn note(name: &[u8], kind: u32, desc: &[u8], le: bool) -> Vec<u8> {
        let word = |v: u32| if le { v.to_le_bytes() } else { v.to_be_bytes() };
        let mut n = Vec::new();
        n.extend(word(name.len() as u32 + 1));
        n.extend(word(desc.len() as u32));
        n.extend(word(kind));
        n.extend(name);
        n.push(0);
        while n.len() % 4 != 0 {
            n.push(0);
        }
        n.extend(desc);
        while n.len() % 4 != 0 {
            n.push(0);
        }
        n
    }

    /// An image with headers `types` whose `PT_NOTE` headers all point at
    /// `notes`, appended after the headers.
    fn elf_notes(wide: bool, le: bool, types: &[u32], notes: &[u8]) -> Vec<u8> {
        let mut f = elf(wide, le, types, 64);
        let at = f.len() as u64;
        f.extend(notes);
        let ent: usize = if wide { 56 } else { 32 };
        for (i, &t) in types.iter().enumerate() {
            if t != PT_NOTE {
                continue;
            }
            let h = 64 + i * ent;
            let mut put = |off: usize, n: usize, v: u64| {
                let b = if le { v.to_le_bytes() } else { v.to_be_bytes() };
                let s = if le { &b[..n] } else { &b[8 - n..] };
                f[h + off..h + off + n].copy_from_slice(s);
            };
            if wide {
                put(8, 8, at);
                put(0x20, 8, notes.len() as u64);
            } else {
                put(4, 4, at);
                put(0x10, 4, notes.len() as u64);
            }
        }
        f
    }

    fn kind(f: &[u8]) -> Option<ElfKind> {
        elf_kind(&f[..f.len().min(256)], 4096, |off, buf| {
            let off = usize::try_from(off).ok()?;
            let src = f.get(off..).unwrap_or(&[]);
            let n = src.len().min(buf.len());
            buf[..n].copy_from_slice(&src[..n]);
            Some(n)
        })
    }

    #[test]
    fn go_programs_are_told_by_their_build_id_note_in_every_layout() {
        for wide in [true, false] {
            for le in [true, false] {
                let gnu = note(b"GNU", 3, &[7; 20], le);
                let go = note(b"Go\0", 4, b"abc/def/ghi", le);
                let both: Vec<u8> = [gnu.clone(), go.clone()].concat();
                // Dynamic (cgo) or static, the note after others or alone.
                let dyn_go = elf_notes(wide, le, &[6, 3, 4, 1], &both);
                assert_eq!(
                    kind(&dyn_go),
                    Some(ElfKind::Go { dynamic: true }),
                    "{wide} {le}"
                );
                let static_go = elf_notes(wide, le, &[1, 4], &go);
                assert_eq!(
                    kind(&static_go),
                    Some(ElfKind::Go { dynamic: false }),
                    "{wide} {le}"
                );
                // Notes of other owners, or Go's owner with another type.
                let c = elf_notes(wide, le, &[6, 3, 4, 1], &gnu);
                assert_eq!(kind(&c), Some(ElfKind::Dynamic));
                let other = elf_notes(wide, le, &[1, 4], &note(b"Go\0", 1, b"x", le));
                assert_eq!(kind(&other), Some(ElfKind::Static));
                // The boolean form keeps its answer: a cgo Go program has
                // an interpreter.
                assert_eq!(check(&dyn_go, 4096), Some(false));
            }
        }
    }

    #[test]
    fn broken_notes_end_the_walk() {
        let le = true;
        // A name size that runs past the segment, a huge one, a cut note.
        let mut huge = note(b"GNU", 3, b"", le);
        huge[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        let go = note(b"Go\0", 4, b"id", le);
        for notes in [huge.clone(), [huge, go.clone()].concat(), go[..10].to_vec()] {
            assert_eq!(
                kind(&elf_notes(true, le, &[3, 4], &notes)),
                Some(ElfKind::Dynamic)
            );
        }
        // A note segment that points past the file's end.
        let mut f = elf_notes(true, le, &[4], &go);
        f.truncate(64 + 56);
        assert_eq!(kind(&f), Some(ElfKind::Static));
    }

    #[test]
    fn path_candidates_in_search_order() {
        let dirs: Vec<&[u8]> = path_dirs(b"/usr/bin::/opt/x/:").collect();
        assert_eq!(dirs, [&b"/usr/bin"[..], b"", b"/opt/x/", b""]);
        let all: Vec<Vec<u8>> = path_dirs(b"/usr/bin::/opt/x/")
            .map(|d| candidate(d, b"ls").collect())
            .collect();
        assert_eq!(all, [&b"/usr/bin/ls"[..], b"./ls", b"/opt/x//ls"]);
        assert_eq!(candidate_len(b"/usr/bin", b"ls"), b"/usr/bin/ls".len());
        assert_eq!(candidate_len(b"", b"ls"), b"./ls".len());
        let dirs: Vec<&[u8]> = path_dirs(DEFAULT_PATH).collect();
        assert_eq!(dirs, [&b"/bin"[..], b"/usr/bin"]);
    }

    #[test]
    fn interpreter_is_the_first_word_after_hash_bang() {
        let at = |h: &[u8]| interpreter(h).map(|r| h[r].to_vec());
        assert_eq!(at(b"#!/bin/sh\necho"), Some(b"/bin/sh".to_vec()));
        assert_eq!(
            at(b"#! \t/usr/bin/env python3 -u\n"),
            Some(b"/usr/bin/env".to_vec())
        );
        assert_eq!(at(b"#!/bin/sh"), Some(b"/bin/sh".to_vec()));
        assert_eq!(at(b"#!   \n/bin/sh"), None);
        assert_eq!(at(b"\x7fELF"), None);
    }

    #[test]
    fn sip_protected_by_directory_or_flag() {
        for p in [
            &b"/usr/bin/python3"[..],
            b"/bin/sh",
            b"/sbin/ping",
            b"/usr/sbin/chown",
            b"/usr/libexec/path_helper",
            b"/System/Library/Frameworks/Python.framework/python",
            b"/usr/bin",
        ] {
            assert!(sip_protected(p, 0), "{}", String::from_utf8_lossy(p));
        }
        for p in [
            &b"/usr/local/bin/python3"[..],
            b"/opt/homebrew/bin/python3",
            b"/usr/binx/tool",
            b"/bin2/sh",
            b"/Systemic/x",
            b"/Users/me/bin/sh",
            b"usr/bin/python3",
        ] {
            assert!(!sip_protected(p, 0), "{}", String::from_utf8_lossy(p));
        }
        assert!(sip_protected(b"/Applications/Tool.app/tool", SF_RESTRICTED));
        assert!(!sip_protected(
            b"/Applications/Tool.app/tool",
            !SF_RESTRICTED
        ));
    }

    #[test]
    fn set_id_bits() {
        assert!(set_id(0o104755)); // -rwsr-xr-x
        assert!(set_id(0o102755)); // -rwxr-sr-x
        assert!(!set_id(0o100755));
        assert!(!set_id(0o041777)); // a sticky directory is not set-id
    }

    #[test]
    fn loader_env_names_the_variables_that_take_effect() {
        assert_eq!(loader_env(b"LD_AUDIT=/x/a.so"), Some("LD_AUDIT"));
        assert_eq!(
            loader_env(b"LD_DEBUG_OUTPUT=/tmp/d"),
            Some("LD_DEBUG_OUTPUT")
        );
        assert_eq!(loader_env(b"LD_PROFILE=libc.so.6"), Some("LD_PROFILE"));
        assert_eq!(
            loader_env(b"LD_PROFILE_OUTPUT=/o"),
            Some("LD_PROFILE_OUTPUT")
        );
        // Empty: the loader ignores it.
        assert_eq!(loader_env(b"LD_AUDIT="), None);
        // Other names, and prefixes of these.
        assert_eq!(loader_env(b"LD_AUDITX=/x"), None);
        assert_eq!(loader_env(b"LD_DEBUG=files"), None);
        assert_eq!(loader_env(b"LD_LIBRARY_PATH=/x"), None);
        assert_eq!(loader_env(b"XLD_AUDIT=/x"), None);
    }
}
