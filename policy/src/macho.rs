//! Reading a Mach-O program (macOS) for what decides whether dyld will
//! load the guard library into it: the architectures it holds, and its
//! code signature's flags and entitlements.
//!
//! Layouts and constants are Apple's: `<mach-o/loader.h>` (headers, load
//! commands, `LC_CODE_SIGNATURE`), `<mach-o/fat.h>` (universal files, big
//! endian), `<mach/machine.h>` (CPU types) and `<kern/cs_blobs.h>` (the
//! signature: a big-endian SuperBlob indexing a CodeDirectory, whose
//! `flags` hold `CS_RUNTIME`, and the entitlements, as an XML property
//! list and, since macOS 12, as DER). Everything is read through a
//! `read(offset, buf)` callback, bounded, and a malformed file gives no
//! answer rather than a wrong one.

/// `CPU_ARCH_ABI64`.
const ABI64: u32 = 0x0100_0000;
/// `CPU_TYPE_X86_64`.
pub const CPU_X86_64: u32 = 7 | ABI64;
/// `CPU_TYPE_ARM64` (arm64 and arm64e, which differ in subtype only).
pub const CPU_ARM64: u32 = 12 | ABI64;

/// `CS_RESTRICT`: dyld treats the program as restricted.
pub const CS_RESTRICT: u32 = 0x0000_0800;
/// `CS_RUNTIME`: the hardened runtime.
pub const CS_RUNTIME: u32 = 0x0001_0000;

/// The entitlement that lets a hardened-runtime program keep `DYLD_*`
/// variables.
pub const ALLOW_DYLD_ENV: &str = "com.apple.security.cs.allow-dyld-environment-variables";

const FAT_MAGIC: u32 = 0xcafe_babe;
const FAT_MAGIC_64: u32 = 0xcafe_babf;
const MH_MAGIC: u32 = 0xfeed_face;
const MH_MAGIC_64: u32 = 0xfeed_facf;
const LC_CODE_SIGNATURE: u32 = 0x1d;
const CSMAGIC_EMBEDDED_SIGNATURE: u32 = 0xfade_0cc0;
const CSMAGIC_CODEDIRECTORY: u32 = 0xfade_0c02;
const CSMAGIC_EMBEDDED_ENTITLEMENTS: u32 = 0xfade_7171;
const CSMAGIC_EMBEDDED_DER_ENTITLEMENTS: u32 = 0xfade_7172;
const CSSLOT_CODEDIRECTORY: u32 = 0;
const CSSLOT_ENTITLEMENTS: u32 = 5;
const CSSLOT_DER_ENTITLEMENTS: u32 = 7;

/// More architectures than any universal file holds: a "fat" header
/// claiming more is something else (a Java class file shares the magic).
const MAX_ARCHS: u32 = 32;
/// The most load-command bytes, and signature bytes, read.
const MAX_READ: u32 = 16 << 20;

/// One architecture of a Mach-O file: where its image lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slice {
    /// `cputype` (`CPU_TYPE_*`).
    pub cputype: u32,
    /// Where the image starts in the file.
    pub offset: u64,
}

/// A code signature: the CodeDirectory's flags and the entitlements.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Signature {
    /// `CS_*` flags of the CodeDirectory.
    pub flags: u32,
    /// The XML property list of entitlements, if any.
    pub xml: Option<Vec<u8>>,
    /// The DER entitlements, if any.
    pub der: Option<Vec<u8>>,
}

/// Why dyld would strip `DYLD_INSERT_LIBRARIES` from a signed program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stripped {
    /// Hardened runtime without [`ALLOW_DYLD_ENV`].
    HardenedRuntime,
    /// `CS_RESTRICT`.
    Restricted,
}

/// Reads exactly `n` bytes at `off`.
fn read_n<R>(read: &mut R, off: u64, n: usize) -> Option<Vec<u8>>
where
    R: FnMut(u64, &mut [u8]) -> Option<usize>,
{
    let mut buf = vec![0u8; n];
    let mut got = 0;
    while got < n {
        let k = read(off.checked_add(got as u64)?, &mut buf[got..])?;
        if k == 0 {
            return None;
        }
        got += k;
    }
    Some(buf)
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn be64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_be_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// A thin image's magic, cputype and byte order (true: little endian).
fn thin_header(h: &[u8]) -> Option<(bool, bool, u32)> {
    let m = be32(h, 0)?;
    let (wide, le) = match m {
        MH_MAGIC => (false, false),
        MH_MAGIC_64 => (true, false),
        _ if m.swap_bytes() == MH_MAGIC => (false, true),
        _ if m.swap_bytes() == MH_MAGIC_64 => (true, true),
        _ => return None,
    };
    let cpu = be32(h, 4)?;
    Some((wide, le, if le { cpu.swap_bytes() } else { cpu }))
}

/// The architectures of a Mach-O file, thin or universal; `None` when it
/// is not one.
pub fn slices<R>(mut read: R) -> Option<Vec<Slice>>
where
    R: FnMut(u64, &mut [u8]) -> Option<usize>,
{
    let head = read_n(&mut read, 0, 8)?;
    let magic = be32(&head, 0)?;
    if magic == FAT_MAGIC || magic == FAT_MAGIC_64 {
        let n = be32(&head, 4)?;
        if n == 0 || n > MAX_ARCHS {
            return None;
        }
        let wide = magic == FAT_MAGIC_64;
        let ent = if wide { 32 } else { 20 };
        let table = read_n(&mut read, 8, ent * n as usize)?;
        let mut out = Vec::with_capacity(n as usize);
        for e in table.chunks(ent) {
            let offset = if wide {
                be64(e, 8)?
            } else {
                u64::from(be32(e, 8)?)
            };
            // Each entry must point at a thin image.
            let h = read_n(&mut read, offset, 8)?;
            thin_header(&h)?;
            out.push(Slice {
                cputype: be32(e, 0)?,
                offset,
            });
        }
        return Some(out);
    }
    let (_, _, cputype) = thin_header(&head)?;
    Some(vec![Slice { cputype, offset: 0 }])
}

/// The code signature of the image at `slice`: `None` when it has none
/// (or it cannot be read).
pub fn signature<R>(mut read: R, slice: &Slice) -> Option<Signature>
where
    R: FnMut(u64, &mut [u8]) -> Option<usize>,
{
    let base = slice.offset;
    let h = read_n(&mut read, base, 32)?;
    let (wide, le, _) = thin_header(&h)?;
    let u32_at = |b: &[u8], at: usize| -> Option<u32> {
        let v: [u8; 4] = b.get(at..at + 4)?.try_into().ok()?;
        Some(if le {
            u32::from_le_bytes(v)
        } else {
            u32::from_be_bytes(v)
        })
    };
    let ncmds = u32_at(&h, 16)?;
    let sizeofcmds = u32_at(&h, 20)?;
    if sizeofcmds > MAX_READ {
        return None;
    }
    let hsize: u64 = if wide { 32 } else { 28 };
    let cmds = read_n(&mut read, base + hsize, sizeofcmds as usize)?;
    let mut at = 0usize;
    let mut found = None;
    for _ in 0..ncmds {
        let cmd = u32_at(&cmds, at)?;
        let size = u32_at(&cmds, at + 4)? as usize;
        if size < 8 || at + size > cmds.len() {
            return None;
        }
        if cmd == LC_CODE_SIGNATURE {
            found = Some((u32_at(&cmds, at + 8)?, u32_at(&cmds, at + 12)?));
            break;
        }
        at += size;
    }
    let (dataoff, datasize) = found?;
    if !(12..=MAX_READ).contains(&datasize) {
        return None;
    }
    let blob = read_n(&mut read, base + u64::from(dataoff), datasize as usize)?;
    parse_superblob(&blob)
}

/// The SuperBlob: `magic`, `length`, `count`, then `count` (type, offset)
/// pairs, offsets from the SuperBlob's start; every blob starts with its
/// own `magic` and `length`.
fn parse_superblob(b: &[u8]) -> Option<Signature> {
    if be32(b, 0)? != CSMAGIC_EMBEDDED_SIGNATURE {
        return None;
    }
    let len = (be32(b, 4)? as usize).min(b.len());
    let b = &b[..len];
    let count = be32(b, 8)? as usize;
    let mut sig = Signature::default();
    let mut have_cd = false;
    for i in 0..count {
        let ty = be32(b, 12 + 8 * i)?;
        let off = be32(b, 16 + 8 * i)? as usize;
        let magic = be32(b, off)?;
        let blen = be32(b, off + 4)? as usize;
        let body = b.get(off + 8..off.checked_add(blen)?)?;
        match (ty, magic) {
            (CSSLOT_CODEDIRECTORY, CSMAGIC_CODEDIRECTORY) => {
                // CS_CodeDirectory: magic, length, version, flags, …
                sig.flags = be32(b, off + 12)?;
                have_cd = true;
            }
            (CSSLOT_ENTITLEMENTS, CSMAGIC_EMBEDDED_ENTITLEMENTS) => sig.xml = Some(body.to_vec()),
            (CSSLOT_DER_ENTITLEMENTS, CSMAGIC_EMBEDDED_DER_ENTITLEMENTS) => {
                sig.der = Some(body.to_vec())
            }
            _ => {}
        }
    }
    have_cd.then_some(sig)
}

impl Signature {
    /// Whether the entitlement `key` is present and true (the XML list
    /// when there is one, else the DER one).
    pub fn entitled(&self, key: &str) -> bool {
        if let Some(x) = &self.xml {
            return xml_true(x, key);
        }
        self.der.as_deref().is_some_and(|d| der_true(d, key))
    }

    /// Why dyld strips `DYLD_INSERT_LIBRARIES` from a program signed so;
    /// `None` when it keeps it.
    pub fn stripped(&self) -> Option<Stripped> {
        if self.flags & CS_RESTRICT != 0 {
            return Some(Stripped::Restricted);
        }
        if self.flags & CS_RUNTIME != 0 && !self.entitled(ALLOW_DYLD_ENV) {
            return Some(Stripped::HardenedRuntime);
        }
        None
    }
}

/// `<key>KEY</key>` followed by `<true/>` in a property list.
fn xml_true(x: &[u8], key: &str) -> bool {
    let want = format!("<key>{key}</key>");
    let mut rest = x;
    while let Some(i) = find(rest, want.as_bytes()) {
        rest = &rest[i + want.len()..];
        let after = rest.iter().position(|b| !b.is_ascii_whitespace());
        if after.is_some_and(|a| rest[a..].starts_with(b"<true/>")) {
            return true;
        }
    }
    false
}

fn find(h: &[u8], n: &[u8]) -> Option<usize> {
    h.windows(n.len()).position(|w| w == n)
}

/// One DER element: tag, content, and what follows it.
fn der_next(b: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let tag = *b.first()?;
    if tag & 0x1f == 0x1f {
        return None; // multi-byte tags: not in entitlements
    }
    let l0 = *b.get(1)?;
    let (len, head) = if l0 < 0x80 {
        (l0 as usize, 2)
    } else {
        let n = (l0 & 0x7f) as usize;
        if n == 0 || n > 4 {
            return None;
        }
        let mut len = 0usize;
        for &x in b.get(2..2 + n)? {
            len = (len << 8) | x as usize;
        }
        (len, 2 + n)
    };
    let content = b.get(head..head.checked_add(len)?)?;
    Some((tag, content, &b[head + len..]))
}

/// A `SEQUENCE { UTF8String key, BOOLEAN TRUE }` anywhere in the DER
/// entitlements (a dictionary is a SET of such pairs).
fn der_true(b: &[u8], key: &str) -> bool {
    der_walk(b, key, 0)
}

fn der_walk(mut b: &[u8], key: &str, depth: u32) -> bool {
    if depth > 16 {
        return false;
    }
    while let Some((tag, content, rest)) = der_next(b) {
        if tag == 0x30 {
            if let Some((0x0c, k, v)) = der_next(content) {
                if k == key.as_bytes() {
                    return matches!(der_next(v), Some((0x01, [x], _)) if *x != 0);
                }
            }
        }
        // Constructed: look inside.
        if tag & 0x20 != 0 && der_walk(content, key, depth + 1) {
            return true;
        }
        b = rest;
    }
    false
}

/// The architecture `program` (its cputypes) runs as on a `host` machine:
/// the host's own when it has it, else `x86_64` under Rosetta on arm64;
/// `None` when it cannot run there. Subtypes (arm64e) are not compared.
pub fn runs_as(program: &[u32], host: u32) -> Option<u32> {
    if program.contains(&host) {
        return Some(host);
    }
    (host == CPU_ARM64 && program.contains(&CPU_X86_64)).then_some(CPU_X86_64)
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
#[path = "macho_tests.rs"]
mod tests;
