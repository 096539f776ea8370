//! Reading a Mach-O program (macOS) for what decides whether dyld will
//! load the guard library into it: the architectures it holds, whether
//! each image the kernel may run names dyld ([`dyld`]), and its code
//! signature's flags and entitlements ([`sign`]).
//!
//! Layouts and constants are Apple's: `<mach-o/loader.h>` (`mach_header`:
//! magic, cputype, cpusubtype, filetype, ncmds, sizeofcmds, flags, and
//! `mach_header_64` adds a reserved word; `load_command`: cmd, cmdsize),
//! `<mach-o/fat.h>` (`fat_header`: magic, nfat_arch; `fat_arch`: cputype,
//! cpusubtype, offset, size, align, 32-bit; `fat_arch_64`: offset and size
//! 64-bit, then align and reserved; all big endian) and `<mach/machine.h>`
//! (CPU types). Everything is read through a `read(offset, buf)` callback
//! that returns how many bytes it read (`None` on error), bounded, and a
//! malformed file gives no answer rather than a wrong one. The header,
//! load-command and signature walks allocate nothing: the exec hooks use
//! them ([`macho_dynamic`], [`stripped_for`]); only [`slices`] and
//! [`signature`], for the CLI, collect into a `Vec`.

mod dyld;
mod sign;

pub use dyld::macho_dynamic;
pub use sign::{
    signature, stripped_for, Signature, Stripped, ALLOW_DYLD_ENV, CS_RESTRICT, CS_RUNTIME,
};

/// `CPU_ARCH_ABI64`.
const ABI64: u32 = 0x0100_0000;
/// `CPU_TYPE_X86_64`.
pub const CPU_X86_64: u32 = 7 | ABI64;
/// `CPU_TYPE_ARM64` (arm64 and arm64e, which differ in subtype only).
pub const CPU_ARM64: u32 = 12 | ABI64;

/// `FAT_MAGIC`, `FAT_MAGIC_64`: a universal file, always big endian.
const FAT_MAGIC: u32 = 0xcafe_babe;
const FAT_MAGIC_64: u32 = 0xcafe_babf;
/// `MH_MAGIC`, `MH_MAGIC_64`: a thin image, read in the byte order that
/// makes the magic come out (`MH_CIGAM*` is the other order).
const MH_MAGIC: u32 = 0xfeed_face;
const MH_MAGIC_64: u32 = 0xfeed_facf;

/// More architectures than any universal file holds: a "fat" header
/// claiming more is something else (a Java class file shares the magic).
const MAX_ARCHS: u32 = 32;

/// One architecture of a Mach-O file: where its image lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slice {
    /// `cputype` (`CPU_TYPE_*`).
    pub cputype: u32,
    /// Where the image starts in the file.
    pub offset: u64,
}

/// The 4-byte integer at `at` of `b` in the given byte order.
fn word(b: &[u8], at: usize, le: bool) -> Option<u32> {
    let w: [u8; 4] = b.get(at..at.checked_add(4)?)?.try_into().ok()?;
    Some(if le {
        u32::from_le_bytes(w)
    } else {
        u32::from_be_bytes(w)
    })
}

/// Fills `buf` from `off`; `None` on an error or the file's end first.
fn read_exact<R>(read: &mut R, off: u64, buf: &mut [u8]) -> Option<()>
where
    R: FnMut(u64, &mut [u8]) -> Option<usize>,
{
    let mut got = 0;
    while got < buf.len() {
        let k = read(off.checked_add(got as u64)?, &mut buf[got..])?;
        if k == 0 {
            return None;
        }
        got += k;
    }
    Some(())
}

/// A thin image's header: its width and byte order, from its magic.
#[derive(Clone, Copy, Debug)]
struct Image {
    /// `MH_MAGIC_64`.
    wide: bool,
    /// Little endian (`MH_CIGAM*` read big endian).
    le: bool,
}

impl Image {
    /// The image whose header starts `h`; `None` when it is not one.
    fn parse(h: &[u8]) -> Option<Image> {
        let (wide, le) = match (word(h, 0, false)?, word(h, 0, true)?) {
            (MH_MAGIC, _) => (false, false),
            (MH_MAGIC_64, _) => (true, false),
            (_, MH_MAGIC) => (false, true),
            (_, MH_MAGIC_64) => (true, true),
            _ => return None,
        };
        Some(Image { wide, le })
    }

    /// A word of the image in its byte order.
    fn word(self, b: &[u8], at: usize) -> Option<u32> {
        word(b, at, self.le)
    }

    /// `cputype` from the header `h`.
    fn cputype(self, h: &[u8]) -> Option<u32> {
        self.word(h, 4)
    }

    /// The load commands of the image at `base` whose header is `h` (at
    /// least its first 24 bytes), at most `limit` bytes of them.
    fn commands<R>(self, h: &[u8], base: u64, limit: u32, read: R) -> Option<Commands<R>>
    where
        R: FnMut(u64, &mut [u8]) -> Option<usize>,
    {
        Some(Commands {
            read,
            le: self.le,
            start: base.checked_add(if self.wide { 32 } else { 28 })?,
            left: self.word(h, 16)?,
            size: self.word(h, 20)?.min(limit),
            at: 0,
            buf: [0; 512],
            win_at: 0,
            win_len: 0,
        })
    }
}

/// A universal file's header: how many `fat_arch` entries follow, and how
/// wide they are.
#[derive(Clone, Copy, Debug)]
struct Fat {
    wide: bool,
    count: u32,
}

impl Fat {
    /// The universal header starting `head`; `None` when it is not one.
    fn parse(head: &[u8]) -> Option<Fat> {
        let wide = match word(head, 0, false)? {
            FAT_MAGIC => false,
            FAT_MAGIC_64 => true,
            _ => return None,
        };
        Some(Fat {
            wide,
            count: word(head, 4, false)?,
        })
    }

    /// The `i`th entry: its cputype and where its image starts.
    fn arch<R>(self, i: u32, read: &mut R) -> Option<Slice>
    where
        R: FnMut(u64, &mut [u8]) -> Option<usize>,
    {
        let ent: usize = if self.wide { 32 } else { 20 };
        let mut e = [0u8; 32];
        read_exact(read, 8 + u64::from(i) * ent as u64, &mut e[..ent])?;
        let offset = if self.wide {
            u64::from(word(&e, 8, false)?) << 32 | u64::from(word(&e, 12, false)?)
        } else {
            u64::from(word(&e, 8, false)?)
        };
        Some(Slice {
            cputype: word(&e, 0, false)?,
            offset,
        })
    }
}

/// One load command: `cmd`, `cmdsize`, and where it starts relative to
/// the first command.
#[derive(Clone, Copy, Debug)]
struct Command {
    cmd: u32,
    size: u32,
    at: u64,
}

/// The load commands of one image, read a window at a time into a stack
/// buffer (the stack may be a signal handler's). It ends after `ncmds`
/// commands, at a command whose header lies past the bytes allowed, at a
/// `cmdsize` below 8, or at the file's end; a failed read yields `Err`.
struct Commands<R> {
    read: R,
    le: bool,
    /// Where the first command starts in the file.
    start: u64,
    /// Commands not yet yielded.
    left: u32,
    /// The bytes of commands looked at: `sizeofcmds`, bounded.
    size: u32,
    at: u64,
    buf: [u8; 512],
    win_at: u64,
    win_len: usize,
}

/// A read of the file failed.
#[derive(Clone, Copy, Debug)]
struct ReadFailed;

impl<R> Commands<R>
where
    R: FnMut(u64, &mut [u8]) -> Option<usize>,
{
    /// Fills `buf` from the file at `at`, relative to the first command.
    fn read_at(&mut self, at: u64, buf: &mut [u8]) -> Option<()> {
        read_exact(&mut self.read, self.start.checked_add(at)?, buf)
    }
}

impl<R> Iterator for Commands<R>
where
    R: FnMut(u64, &mut [u8]) -> Option<usize>,
{
    type Item = Result<Command, ReadFailed>;

    fn next(&mut self) -> Option<Self::Item> {
        let size = u64::from(self.size);
        if self.left == 0 || self.at + 8 > size {
            return None;
        }
        let at = self.at;
        if at < self.win_at || at + 8 > self.win_at + self.win_len as u64 {
            self.win_at = at;
            let want = self.buf.len().min((size - at) as usize);
            let got = self
                .start
                .checked_add(at)
                .and_then(|pos| (self.read)(pos, &mut self.buf[..want]));
            let Some(got) = got else {
                self.left = 0;
                return Some(Err(ReadFailed));
            };
            self.win_len = got.min(want);
            if self.win_len < 8 {
                self.left = 0;
                return None;
            }
        }
        let i = (at - self.win_at) as usize;
        let (cmd, cmdsize) = (
            word(&self.buf, i, self.le)?,
            word(&self.buf, i + 4, self.le)?,
        );
        self.left -= 1;
        if cmdsize < 8 {
            self.left = 0;
        }
        self.at += u64::from(cmdsize);
        Some(Ok(Command {
            cmd,
            size: cmdsize,
            at,
        }))
    }
}

/// Whether the file whose first bytes are `head` starts with a Mach-O
/// header, thin or universal.
pub fn is_macho(head: &[u8]) -> bool {
    Image::parse(head).is_some() || Fat::parse(head).is_some()
}

/// Calls `each` with every architecture of a Mach-O file, thin or
/// universal, in the file's order; `None` when it is not one (then `each`
/// may have seen some). Allocation-free.
fn each_slice<R>(read: &mut R, mut each: impl FnMut(Slice)) -> Option<()>
where
    R: FnMut(u64, &mut [u8]) -> Option<usize>,
{
    let mut head = [0u8; 8];
    read_exact(read, 0, &mut head)?;
    if let Some(fat) = Fat::parse(&head) {
        if fat.count == 0 || fat.count > MAX_ARCHS {
            return None;
        }
        for i in 0..fat.count {
            let s = fat.arch(i, read)?;
            // Each entry must point at a thin image.
            let mut h = [0u8; 8];
            read_exact(read, s.offset, &mut h)?;
            Image::parse(&h)?;
            each(s);
        }
        return Some(());
    }
    let cputype = Image::parse(&head)?.cputype(&head)?;
    each(Slice { cputype, offset: 0 });
    Some(())
}

/// The architectures of a Mach-O file, thin or universal; `None` when it
/// is not one.
pub fn slices<R>(mut read: R) -> Option<Vec<Slice>>
where
    R: FnMut(u64, &mut [u8]) -> Option<usize>,
{
    let mut all = Vec::new();
    each_slice(&mut read, |s| all.push(s))?;
    Some(all)
}

/// The slice a `host` machine runs of a Mach-O file ([`runs_as`]; the
/// first of that cputype, as [`slices`] lists them); `None` when it is not
/// a Mach-O file or has nothing the host runs. Allocation-free: the exec
/// hooks use it.
pub fn host_slice<R>(read: &mut R, host: u32) -> Option<Slice>
where
    R: FnMut(u64, &mut [u8]) -> Option<usize>,
{
    let (mut native, mut x86) = (None, None);
    each_slice(read, |s| {
        if s.cputype == host {
            native = native.or(Some(s));
        }
        if s.cputype == CPU_X86_64 {
            x86 = x86.or(Some(s));
        }
    })?;
    match choose(
        |c| c == host && native.is_some() || c == CPU_X86_64 && x86.is_some(),
        host,
    )? {
        c if c == host => native,
        _ => x86,
    }
}

/// The architecture `program` (its cputypes) runs as on a `host` machine:
/// the host's own when it has it, else `x86_64` under Rosetta on arm64;
/// `None` when it cannot run there. Subtypes (arm64e) are not compared.
pub fn runs_as(program: &[u32], host: u32) -> Option<u32> {
    choose(|c| program.contains(&c), host)
}

/// [`runs_as`] over a program that `has` the cputypes it holds.
fn choose(has: impl Fn(u32) -> bool, host: u32) -> Option<u32> {
    if has(host) {
        return Some(host);
    }
    (host == CPU_ARM64 && has(CPU_X86_64)).then_some(CPU_X86_64)
}

/// The name of a CPU type, as `lipo` and `file` print it.
pub fn arch_name(cputype: u32) -> String {
    match cputype {
        CPU_X86_64 => "x86_64".into(),
        CPU_ARM64 => "arm64".into(),
        7 => "i386".into(),
        12 => "arm".into(),
        c => format!("cputype {c:#x}"),
    }
}

#[cfg(test)]
mod tests;
