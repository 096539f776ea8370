//! A Mach-O image's code signature: the CodeDirectory's flags and the
//! entitlements, which decide whether dyld strips `DYLD_INSERT_LIBRARIES`.
//!
//! Layouts and constants from `<kern/cs_blobs.h>`: `LC_CODE_SIGNATURE`
//! (`<mach-o/loader.h>`: a `linkedit_data_command`, cmd, cmdsize, dataoff,
//! datasize) points at a big-endian SuperBlob indexing a CodeDirectory,
//! whose `flags` hold `CS_RUNTIME`, and the entitlements, as an XML
//! property list and, since macOS 12, as DER.

use super::{read_exact, Image, Slice};

/// `CS_RESTRICT`: dyld treats the program as restricted.
pub const CS_RESTRICT: u32 = 0x0000_0800;
/// `CS_RUNTIME`: the hardened runtime.
pub const CS_RUNTIME: u32 = 0x0001_0000;

/// The entitlement that lets a hardened-runtime program keep `DYLD_*`
/// variables.
pub const ALLOW_DYLD_ENV: &str = "com.apple.security.cs.allow-dyld-environment-variables";

pub(super) const LC_CODE_SIGNATURE: u32 = 0x1d;
pub(super) const CSMAGIC_EMBEDDED_SIGNATURE: u32 = 0xfade_0cc0;
pub(super) const CSMAGIC_CODEDIRECTORY: u32 = 0xfade_0c02;
pub(super) const CSMAGIC_EMBEDDED_ENTITLEMENTS: u32 = 0xfade_7171;
pub(super) const CSMAGIC_EMBEDDED_DER_ENTITLEMENTS: u32 = 0xfade_7172;
pub(super) const CSSLOT_CODEDIRECTORY: u32 = 0;
pub(super) const CSSLOT_ENTITLEMENTS: u32 = 5;
pub(super) const CSSLOT_DER_ENTITLEMENTS: u32 = 7;

/// The most load-command bytes, and signature bytes, read.
const MAX_READ: u32 = 16 << 20;

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

fn be32(b: &[u8], at: usize) -> Option<u32> {
    super::word(b, at, false)
}

/// The code signature of the image at `slice`: `None` when it has none
/// (or it cannot be read).
pub fn signature<R>(mut read: R, slice: &Slice) -> Option<Signature>
where
    R: FnMut(u64, &mut [u8]) -> Option<usize>,
{
    let base = slice.offset;
    let mut h = [0u8; 32];
    read_exact(&mut read, base, &mut h)?;
    let image = Image::parse(&h)?;
    let sizeofcmds = image.word(&h, 20)?;
    if sizeofcmds > MAX_READ {
        return None;
    }
    let mut cmds = image.commands(&h, base, MAX_READ, &mut read)?;
    let mut found = None;
    for c in cmds.by_ref() {
        let c = c.ok()?;
        // Every command up to the signature's lies within the commands.
        if c.size < 8 || c.at + u64::from(c.size) > u64::from(sizeofcmds) {
            return None;
        }
        if c.cmd == LC_CODE_SIGNATURE {
            found = Some(c);
            break;
        }
    }
    let mut data = [0u8; 8];
    cmds.read_at(found?.at + 8, &mut data)?;
    let (dataoff, datasize) = (image.word(&data, 0)?, image.word(&data, 4)?);
    if !(12..=MAX_READ).contains(&datasize) {
        return None;
    }
    let mut blob = vec![0u8; datasize as usize];
    read_exact(&mut read, base.checked_add(u64::from(dataoff))?, &mut blob)?;
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
