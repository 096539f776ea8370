//! Whether each image the kernel may run names a dynamic linker
//! (`LC_LOAD_DYLINKER`). dyld is what reads `DYLD_INSERT_LIBRARIES`, so an
//! executable without one (statically linked) would run unguarded, like a
//! static ELF program.
//!
//! Allocation-free: the caller supplies the reads.

use super::{Fat, Image};

/// `MH_EXECUTE`: the only file type the kernel runs as a program.
const MH_EXECUTE: u32 = 0x2;
/// `LC_LOAD_DYLINKER`: the load command naming dyld.
const LC_LOAD_DYLINKER: u32 = 0xe;
/// The most universal-file entries looked at: a bigger count is not one.
const MAX_SLICES: u32 = 64;

/// Whether the file whose first bytes are `head` starts with a Mach-O
/// header, thin or universal.
pub fn is_macho(head: &[u8]) -> bool {
    Image::parse(head).is_some() || Fat::parse(head).is_some()
}

/// Whether the Mach-O program whose first bytes are `head` names a dynamic
/// linker in every image the kernel may pick (a thin file's one, each
/// `MH_EXECUTE` slice of a universal file). `read(offset, buf)` reads the
/// file at `offset` into `buf` and returns how many bytes it read (`None`
/// on error). At most `limit` bytes of load commands are looked at in each
/// image; commands past them or past the file's end count as absent.
///
/// `None`: not a Mach-O file, no image the kernel would run (an object, a
/// library: the kernel refuses to exec it), or a failed read.
pub fn macho_dynamic<R>(head: &[u8], limit: usize, mut read: R) -> Option<bool>
where
    R: FnMut(u64, &mut [u8]) -> Option<usize>,
{
    let limit = u32::try_from(limit).unwrap_or(u32::MAX);
    let Some(fat) = Fat::parse(head) else {
        return image_dynamic(head, 0, limit, &mut read);
    };
    if fat.count > MAX_SLICES {
        return None;
    }
    let mut any = None;
    for i in 0..fat.count {
        let slice = fat.arch(i, &mut read)?;
        let mut hdr = [0u8; 32];
        let got = read(slice.offset, &mut hdr)?.min(hdr.len());
        match image_dynamic(&hdr[..got], slice.offset, limit, &mut read) {
            Some(false) => return Some(false),
            Some(true) => any = Some(true),
            None => {}
        }
    }
    any
}

/// One thin image at `base` (its header's first bytes in `hdr`): whether
/// it names a dynamic linker; `None` if it is not an executable image.
fn image_dynamic<R>(hdr: &[u8], base: u64, limit: u32, read: &mut R) -> Option<bool>
where
    R: FnMut(u64, &mut [u8]) -> Option<usize>,
{
    let image = Image::parse(hdr)?;
    if image.word(hdr, 12)? != MH_EXECUTE {
        return None;
    }
    for c in image.commands(hdr, base, limit, read)? {
        if c.ok()?.cmd == LC_LOAD_DYLINKER {
            return Some(true);
        }
    }
    Some(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::macho::{word, FAT_MAGIC, FAT_MAGIC_64};

    /// The header and load commands of real Mach-O objects, written by
    /// `clang -target x86_64-apple-darwin -c` and `-target
    /// arm64-apple-darwin -c` from `int f(int x){return x+1;}`.
    const X86_64_OBJECT: &[&str] = &[
        "cffaedfe0700000103000000010000000400000060010000002000000000000019000000e80000000000000000000000",
        "000000000000000000000000000000005000000000000000800100000000000050000000000000000700000007000000",
        "02000000000000005f5f74657874000000000000000000005f5f54455854000000000000000000000000000000000000",
        "0f0000000000000080010000040000000000000000000000000400800000000000000000000000005f5f65685f667261",
        "6d650000000000005f5f5445585400000000000000000000100000000000000040000000000000009001000003000000",
        "00000000000000000b000068000000000000000000000000240000001000000000040a00000000000200000018000000",
        "d001000001000000e0010000080000000b00000050000000000000000000000000000000010000000100000000000000",
        "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
    ];
    const ARM64_OBJECT: &[&str] = &[
        "cffaedfe0c00000100000000010000000400000060010000002000000000000019000000e80000000000000000000000",
        "000000000000000000000000000000003800000000000000800100000000000038000000000000000700000007000000",
        "02000000000000005f5f74657874000000000000000000005f5f54455854000000000000000000000000000000000000",
        "180000000000000080010000020000000000000000000000000400800000000000000000000000005f5f636f6d706163",
        "745f756e77696e645f5f4c44000000000000000000000000180000000000000020000000000000009801000003000000",
        "b80100000100000000000002000000000000000000000000250000001000000000000500000000000200000018000000",
        "c001000003000000f0010000100000000b00000050000000000000000200000002000000010000000300000000000000",
        "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
    ];

    fn bytes(hex: &[&str]) -> Vec<u8> {
        let s: String = hex.concat();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    fn put(f: &mut [u8], off: usize, v: u32) {
        f[off..off + 4].copy_from_slice(&v.to_le_bytes());
    }

    /// The object turned into an executable image (`MH_EXECUTE`), with an
    /// `LC_LOAD_DYLINKER` naming `/usr/lib/dyld` appended if `dylinker`.
    fn executable(obj: &[&str], dylinker: bool) -> Vec<u8> {
        let mut f = bytes(obj);
        put(&mut f, 12, MH_EXECUTE);
        if dylinker {
            let mut cmd = vec![0u8; 32];
            put(&mut cmd, 0, LC_LOAD_DYLINKER);
            put(&mut cmd, 4, 32);
            put(&mut cmd, 8, 12); // lc_str offset of the name
            cmd[12..25].copy_from_slice(b"/usr/lib/dyld");
            let (n, size) = (word(&f, 16, true).unwrap(), word(&f, 20, true).unwrap());
            put(&mut f, 16, n + 1);
            put(&mut f, 20, size + 32);
            f.extend(cmd);
        }
        f
    }

    fn reader(file: &[u8]) -> impl FnMut(u64, &mut [u8]) -> Option<usize> + '_ {
        move |off, buf| {
            let off = usize::try_from(off).ok()?;
            let src = file.get(off..).unwrap_or(&[]);
            let n = src.len().min(buf.len());
            buf[..n].copy_from_slice(&src[..n]);
            Some(n)
        }
    }

    fn dynamic(file: &[u8]) -> Option<bool> {
        macho_dynamic(&file[..file.len().min(256)], 4096, reader(file))
    }

    #[test]
    fn reads_real_thin_headers() {
        for obj in [X86_64_OBJECT, ARM64_OBJECT] {
            let o = bytes(obj);
            assert!(is_macho(&o));
            // An object: not a program the kernel runs.
            assert_eq!(dynamic(&o), None);
            assert_eq!(dynamic(&executable(obj, false)), Some(false));
            assert_eq!(dynamic(&executable(obj, true)), Some(true));
        }
    }

    #[test]
    fn not_macho() {
        assert!(!is_macho(b"\x7fELF\x02\x01\x01"));
        assert!(!is_macho(b"#!/bin/sh\n"));
        assert!(!is_macho(b"\xcf\xfa"));
        assert_eq!(dynamic(b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00"), None);
        assert_eq!(dynamic(b"#!/bin/sh\n"), None);
    }

    #[test]
    fn big_endian_image() {
        // A byte-swapped (MH_CIGAM) header: every word big-endian.
        let le = executable(X86_64_OBJECT, true);
        let mut be = le.clone();
        for w in be.chunks_exact_mut(4) {
            w.reverse();
        }
        assert!(is_macho(&be));
        assert_eq!(dynamic(&be), Some(true));
    }

    /// A universal file of `slices`, each at a 4 KiB boundary, with 32- or
    /// 64-bit `fat_arch` entries.
    fn universal(slices: &[Vec<u8>], wide: bool) -> Vec<u8> {
        let mut f = vec![0u8; 4096];
        let magic = if wide { FAT_MAGIC_64 } else { FAT_MAGIC };
        f[..4].copy_from_slice(&magic.to_be_bytes());
        f[4..8].copy_from_slice(&(slices.len() as u32).to_be_bytes());
        let ent = if wide { 32 } else { 20 };
        for (i, s) in slices.iter().enumerate() {
            let off = f.len();
            let e = 8 + i * ent;
            f[e..e + 4].copy_from_slice(&word(s, 4, true).unwrap().to_be_bytes());
            if wide {
                f[e + 8..e + 16].copy_from_slice(&(off as u64).to_be_bytes());
                f[e + 16..e + 24].copy_from_slice(&(s.len() as u64).to_be_bytes());
                f[e + 24..e + 28].copy_from_slice(&12u32.to_be_bytes());
            } else {
                f[e + 8..e + 12].copy_from_slice(&(off as u32).to_be_bytes());
                f[e + 12..e + 16].copy_from_slice(&(s.len() as u32).to_be_bytes());
                f[e + 16..e + 20].copy_from_slice(&12u32.to_be_bytes());
            }
            f.extend_from_slice(s);
            f.resize(f.len().next_multiple_of(4096), 0);
        }
        f
    }

    #[test]
    fn reads_universal_files() {
        let x = |d| executable(X86_64_OBJECT, d);
        let a = |d| executable(ARM64_OBJECT, d);
        for wide in [false, true] {
            let both = universal(&[x(true), a(true)], wide);
            assert!(is_macho(&both));
            assert_eq!(dynamic(&both), Some(true));
            // One slice the kernel may pick runs without dyld.
            assert_eq!(dynamic(&universal(&[x(true), a(false)], wide)), Some(false));
            assert_eq!(dynamic(&universal(&[x(false), a(true)], wide)), Some(false));
            // Objects only: nothing to run.
            let objs = universal(&[bytes(X86_64_OBJECT), bytes(ARM64_OBJECT)], wide);
            assert_eq!(dynamic(&objs), None);
        }
        // A slice past the file's end, or an absurd count: not readable.
        let mut cut = universal(&[x(true)], false);
        cut.truncate(4096 + 16);
        assert_eq!(dynamic(&cut), None);
        let mut many = universal(&[x(true)], false);
        many[4..8].copy_from_slice(&1000u32.to_be_bytes());
        assert_eq!(dynamic(&many), None);
    }

    #[test]
    fn commands_past_the_limit_count_as_absent() {
        let f = executable(X86_64_OBJECT, true);
        assert_eq!(macho_dynamic(&f, 352, reader(&f)), Some(false));
        assert_eq!(macho_dynamic(&f, 384, reader(&f)), Some(true));
        // A failed read is not an answer.
        assert_eq!(macho_dynamic(&f, 4096, |_, _| None), None);
    }
}
