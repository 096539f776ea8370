//! Whether each image the kernel may run names a dynamic linker
//! (`LC_LOAD_DYLINKER`). dyld is what reads `DYLD_INSERT_LIBRARIES`, so an
//! executable without one (statically linked) would run unguarded, like a
//! static ELF program.
//!
//! Allocation-free: the caller supplies the reads.

use super::{Fat, Image};

/// `MH_EXECUTE`: the only file type the kernel runs as a program.
pub(super) const MH_EXECUTE: u32 = 0x2;
/// `LC_LOAD_DYLINKER`: the load command naming dyld.
pub(super) const LC_LOAD_DYLINKER: u32 = 0xe;
/// The most universal-file entries looked at: a bigger count is not one.
const MAX_SLICES: u32 = 64;

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
