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

/// Where a blob's body lies in the file.
#[derive(Clone, Copy, Debug)]
struct Span {
    at: u64,
    len: u32,
}

/// What decides in a SuperBlob: the CodeDirectory's flags, and where the
/// entitlements lie.
#[derive(Clone, Copy, Debug)]
struct Index {
    flags: u32,
    xml: Option<Span>,
    der: Option<Span>,
}

/// SuperBlob index entries read at once.
const INDEX_CHUNK: usize = 32;

/// The SuperBlob of the image at `slice`, read through small buffers
/// (allocation-free: both [`signature`] and [`stripped_for`] start here).
/// The SuperBlob is `magic`, `length`, `count`, then `count` (type, offset)
/// pairs, offsets from its start; every blob starts with its own `magic`
/// and `length`, a CodeDirectory goes on with `version`, `flags`. Any blob
/// of the slots read lying past the SuperBlob: no answer.
fn index<R>(read: &mut R, slice: &Slice) -> Option<Index>
where
    R: FnMut(u64, &mut [u8]) -> Option<usize>,
{
    let base = slice.offset;
    let mut h = [0u8; 32];
    read_exact(read, base, &mut h)?;
    let image = Image::parse(&h)?;
    let sizeofcmds = image.word(&h, 20)?;
    if sizeofcmds > MAX_READ {
        return None;
    }
    let mut data = [0u8; 8];
    {
        let mut cmds = image.commands(&h, base, MAX_READ, &mut *read)?;
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
        cmds.read_at(found?.at + 8, &mut data)?;
    }
    let (dataoff, datasize) = (image.word(&data, 0)?, image.word(&data, 4)?);
    if !(12..=MAX_READ).contains(&datasize) {
        return None;
    }
    let sb = base.checked_add(u64::from(dataoff))?;
    let mut head = [0u8; 12];
    read_exact(read, sb, &mut head)?;
    if be32(&head, 0)? != CSMAGIC_EMBEDDED_SIGNATURE {
        return None;
    }
    let limit = u64::from(be32(&head, 4)?.min(datasize));
    // The SuperBlob lies in the file (a cut one gives no answer, whichever
    // blobs the caller goes on to read).
    read_exact(read, sb.checked_add(limit)?.checked_sub(1)?, &mut [0u8; 1])?;
    let count = u64::from(be32(&head, 8)?);
    if 12 + 8 * count > limit {
        return None;
    }
    let mut ix = Index {
        flags: 0,
        xml: None,
        der: None,
    };
    let mut have_cd = false;
    let mut chunk = [0u8; 8 * INDEX_CHUNK];
    let mut i = 0;
    while i < count {
        let n = (count - i).min(INDEX_CHUNK as u64) as usize;
        read_exact(read, sb + 12 + 8 * i, &mut chunk[..8 * n])?;
        i += n as u64;
        for e in chunk[..8 * n].chunks_exact(8) {
            let (ty, off) = (be32(e, 0)?, u64::from(be32(e, 4)?));
            let (magic, head_len) = match ty {
                CSSLOT_CODEDIRECTORY => (CSMAGIC_CODEDIRECTORY, 16),
                CSSLOT_ENTITLEMENTS => (CSMAGIC_EMBEDDED_ENTITLEMENTS, 8),
                CSSLOT_DER_ENTITLEMENTS => (CSMAGIC_EMBEDDED_DER_ENTITLEMENTS, 8),
                _ => continue,
            };
            let mut b = [0u8; 16];
            if off + head_len as u64 > limit {
                return None;
            }
            read_exact(read, sb + off, &mut b[..head_len])?;
            let blen = u64::from(be32(&b, 4)?);
            if blen < head_len as u64 || off + blen > limit {
                return None;
            }
            if be32(&b, 0)? != magic {
                continue;
            }
            let body = Some(Span {
                at: sb + off + 8,
                len: (blen - 8) as u32,
            });
            match ty {
                CSSLOT_CODEDIRECTORY => {
                    ix.flags = be32(&b, 12)?;
                    have_cd = true;
                }
                CSSLOT_ENTITLEMENTS => ix.xml = body,
                _ => ix.der = body,
            }
        }
    }
    have_cd.then_some(ix)
}

/// The code signature of the image at `slice`: `None` when it has none
/// (or it cannot be read).
pub fn signature<R>(mut read: R, slice: &Slice) -> Option<Signature>
where
    R: FnMut(u64, &mut [u8]) -> Option<usize>,
{
    let ix = index(&mut read, slice)?;
    let mut body = |s: Option<Span>| -> Option<Option<Vec<u8>>> {
        let Some(s) = s else { return Some(None) };
        let mut v = vec![0u8; s.len as usize];
        read_exact(&mut read, s.at, &mut v)?;
        Some(Some(v))
    };
    Some(Signature {
        flags: ix.flags,
        xml: body(ix.xml)?,
        der: body(ix.der)?,
    })
}

/// Why dyld strips `DYLD_INSERT_LIBRARIES` from the program `read` reads,
/// in the slice a `host` CPU runs ([`super::host_slice`]): what
/// [`signature`]`(..).stripped()` says, without allocating (the exec hooks
/// use it). The entitlements are read into `buf`; ones longer than it are
/// taken as lacking [`ALLOW_DYLD_ENV`] (fail closed). `None`: dyld keeps
/// the variable, or no signature, or nothing the host runs.
pub fn stripped_for<R>(mut read: R, host: u32, buf: &mut [u8]) -> Option<Stripped>
where
    R: FnMut(u64, &mut [u8]) -> Option<usize>,
{
    let slice = super::host_slice(&mut read, host)?;
    let ix = index(&mut read, &slice)?;
    if ix.flags & (CS_RESTRICT | CS_RUNTIME) != CS_RUNTIME {
        return verdict(ix.flags, None);
    }
    // The XML list when there is one, else the DER one (as `entitled`).
    let (span, xml) = match (ix.xml, ix.der) {
        (Some(s), _) => (s, true),
        (None, Some(s)) => (s, false),
        (None, None) => return verdict(ix.flags, None),
    };
    let Some(b) = buf.get_mut(..span.len as usize) else {
        return Some(Stripped::HardenedRuntime);
    };
    read_exact(&mut read, span.at, b)?;
    verdict(
        ix.flags,
        Some(if xml { Ents::Xml(b) } else { Ents::Der(b) }),
    )
}

/// Entitlements, in one of their two encodings.
#[derive(Clone, Copy, Debug)]
enum Ents<'a> {
    Xml(&'a [u8]),
    Der(&'a [u8]),
}

impl Ents<'_> {
    fn entitled(self, key: &str) -> bool {
        match self {
            Ents::Xml(x) => xml_true(x, key),
            Ents::Der(d) => der_true(d, key),
        }
    }
}

/// What dyld does with `DYLD_*` for a program signed with `flags` and
/// `ents`.
fn verdict(flags: u32, ents: Option<Ents<'_>>) -> Option<Stripped> {
    if flags & CS_RESTRICT != 0 {
        return Some(Stripped::Restricted);
    }
    if flags & CS_RUNTIME != 0 && !ents.is_some_and(|e| e.entitled(ALLOW_DYLD_ENV)) {
        return Some(Stripped::HardenedRuntime);
    }
    None
}

impl Signature {
    /// The entitlements that count: the XML list when there is one, else
    /// the DER one.
    fn ents(&self) -> Option<Ents<'_>> {
        (self.xml.as_deref().map(Ents::Xml)).or_else(|| self.der.as_deref().map(Ents::Der))
    }

    /// Whether the entitlement `key` is present and true (the XML list
    /// when there is one, else the DER one).
    pub fn entitled(&self, key: &str) -> bool {
        self.ents().is_some_and(|e| e.entitled(key))
    }

    /// Why dyld strips `DYLD_INSERT_LIBRARIES` from a program signed so;
    /// `None` when it keeps it.
    pub fn stripped(&self) -> Option<Stripped> {
        verdict(self.flags, self.ents())
    }
}

/// `<key>KEY</key>` followed by `<true/>` in a property list.
fn xml_true(x: &[u8], key: &str) -> bool {
    const OPEN: &[u8] = b"<key>";
    let mut rest = x;
    while let Some(i) = find(rest, OPEN) {
        rest = &rest[i + OPEN.len()..];
        let Some(after) = rest
            .strip_prefix(key.as_bytes())
            .and_then(|r| r.strip_prefix(b"</key>"))
        else {
            continue;
        };
        rest = after;
        let v = after.iter().position(|b| !b.is_ascii_whitespace());
        if v.is_some_and(|a| after[a..].starts_with(b"<true/>")) {
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
