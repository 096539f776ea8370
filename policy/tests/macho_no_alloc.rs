//! `macho::stripped_for` and `macho::host_slice` allocate nothing (the exec
//! hooks call them in vfork children and signal handlers, where `malloc`
//! may find its lock held): counted by a global allocator, per thread.
//! The files are laid out by hand from `<mach-o/loader.h>`, `<mach-o/fat.h>`
//! and `<kern/cs_blobs.h>`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use fsguard_policy::macho::{self, Stripped, ALLOW_DYLD_ENV, CPU_ARM64, CPU_X86_64, CS_RUNTIME};

struct Counting;

thread_local! {
    static ALLOCS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// What `f` returns, and how many allocations this thread made in it.
fn counted<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = ALLOCS.with(Cell::get);
    let r = f();
    (r, ALLOCS.with(Cell::get) - before)
}

fn reader(data: &[u8]) -> impl FnMut(u64, &mut [u8]) -> Option<usize> + '_ {
    move |off, buf| {
        let off = usize::try_from(off).ok()?;
        let rest = data.get(off..).unwrap_or(&[]);
        let n = buf.len().min(rest.len());
        buf[..n].copy_from_slice(&rest[..n]);
        Some(n)
    }
}

fn blob(magic: u32, body: &[u8]) -> Vec<u8> {
    let mut b = magic.to_be_bytes().to_vec();
    b.extend((8 + body.len() as u32).to_be_bytes());
    b.extend(body);
    b
}

/// A SuperBlob (`CSMAGIC_EMBEDDED_SIGNATURE`) of a CodeDirectory with
/// `flags` and the entitlements (XML, slot 5; DER, slot 7) given.
fn superblob(flags: u32, xml: Option<&[u8]>, der: Option<&[u8]>) -> Vec<u8> {
    let mut cd = 0x0002_0400u32.to_be_bytes().to_vec();
    cd.extend(flags.to_be_bytes());
    cd.extend([0u8; 72]);
    let mut blobs = vec![(0u32, blob(0xfade_0c02, &cd))];
    if let Some(x) = xml {
        blobs.push((5, blob(0xfade_7171, x)));
    }
    if let Some(d) = der {
        blobs.push((7, blob(0xfade_7172, d)));
    }
    let head = 12 + 8 * blobs.len();
    let total = head + blobs.iter().map(|(_, b)| b.len()).sum::<usize>();
    let mut out = 0xfade_0cc0u32.to_be_bytes().to_vec();
    out.extend((total as u32).to_be_bytes());
    out.extend((blobs.len() as u32).to_be_bytes());
    let mut off = head;
    for (ty, b) in &blobs {
        out.extend(ty.to_be_bytes());
        out.extend((off as u32).to_be_bytes());
        off += b.len();
    }
    for (_, b) in blobs {
        out.extend(b);
    }
    out
}

/// A thin 64-bit little-endian executable of `cputype`: a load command
/// nobody reads, then `LC_CODE_SIGNATURE` pointing at `sig`.
fn image(cputype: u32, sig: &[u8]) -> Vec<u8> {
    let mut f = Vec::new();
    // mach_header_64: magic, cputype, cpusubtype, MH_EXECUTE, ncmds,
    // sizeofcmds, flags, reserved.
    for v in [0xfeed_facf, cputype, 0, 2, 2, 32, 0, 0] {
        f.extend(u32::to_le_bytes(v));
    }
    for v in [0x7777, 16, 0, 0] {
        f.extend(u32::to_le_bytes(v));
    }
    for v in [0x1d, 16, 128, sig.len() as u32] {
        f.extend(u32::to_le_bytes(v));
    }
    f.resize(128, 0);
    f.extend(sig);
    f
}

/// A universal file (`FAT_MAGIC`, 32-bit `fat_arch` entries).
fn fat(images: &[(u32, &[u8])]) -> Vec<u8> {
    let mut f = 0xcafe_babeu32.to_be_bytes().to_vec();
    f.extend((images.len() as u32).to_be_bytes());
    let mut at = 4096;
    let mut placed = Vec::new();
    for (cpu, img) in images {
        for v in [*cpu, 0, at as u32, img.len() as u32, 12] {
            f.extend(v.to_be_bytes());
        }
        placed.push(at);
        at = (at + img.len()).next_multiple_of(4096);
    }
    for ((_, img), at) in images.iter().zip(placed) {
        f.resize(at, 0);
        f.extend(*img);
    }
    f
}

/// DER entitlements holding one `key` set to `value`.
fn der(key: &str, value: bool) -> Vec<u8> {
    let tlv = |tag: u8, c: &[u8]| {
        let mut v = vec![tag, c.len() as u8];
        v.extend(c);
        v
    };
    let mut pair = tlv(0x0c, key.as_bytes());
    pair.extend(tlv(0x01, &[if value { 0xff } else { 0 }]));
    let mut body = tlv(0x02, &[1]);
    body.extend(tlv(0xb0, &tlv(0x31, &tlv(0x30, &pair))));
    tlv(0x70, &body)
}

#[test]
fn the_hooks_reading_allocates_nothing() {
    let yes = format!("<plist><dict><key>{ALLOW_DYLD_ENV}</key><true/></dict></plist>");
    let no = format!("<plist><dict><key>{ALLOW_DYLD_ENV}</key><false/></dict></plist>");
    let sigs = [
        (
            superblob(CS_RUNTIME, None, None),
            Some(Stripped::HardenedRuntime),
        ),
        (superblob(CS_RUNTIME, Some(yes.as_bytes()), None), None),
        (
            superblob(CS_RUNTIME, Some(no.as_bytes()), None),
            Some(Stripped::HardenedRuntime),
        ),
        (
            superblob(CS_RUNTIME, None, Some(&der(ALLOW_DYLD_ENV, true))),
            None,
        ),
        (
            superblob(CS_RUNTIME, None, Some(&der(ALLOW_DYLD_ENV, false))),
            Some(Stripped::HardenedRuntime),
        ),
        (superblob(0x800, None, None), Some(Stripped::Restricted)),
        (superblob(0x2, None, None), None),
    ];
    let mut buf = [0u8; 1024];
    for (i, (sig, want)) in sigs.iter().enumerate() {
        let arm = image(CPU_ARM64, sig);
        let x86 = image(CPU_X86_64, &superblob(0, None, None));
        let both = fat(&[(CPU_X86_64, &x86), (CPU_ARM64, &arm)]);
        for (what, file) in [("thin", &arm), ("fat", &both)] {
            // The allocating reading, outside the count, for comparison.
            let slice = macho::slices(reader(file)).unwrap();
            let slice = slice.iter().find(|s| s.cputype == CPU_ARM64).unwrap();
            let cli = macho::signature(reader(file), slice).unwrap().stripped();
            assert_eq!(cli, *want, "case {i} {what}");
            let (got, allocs) = counted(|| macho::stripped_for(reader(file), CPU_ARM64, &mut buf));
            assert_eq!(got, *want, "case {i} {what}");
            assert_eq!(allocs, 0, "case {i} {what}: allocated");
            let (s, allocs) = counted(|| macho::host_slice(&mut reader(file), CPU_ARM64));
            assert_eq!(s.map(|s| s.offset), Some(slice.offset), "case {i} {what}");
            assert_eq!(allocs, 0, "case {i} {what}: host_slice allocated");
        }
    }
    // The counter counts: the allocating reading is seen.
    let f = image(CPU_ARM64, &sigs[1].0);
    let (_, allocs) = counted(|| macho::slices(reader(&f)));
    assert!(allocs > 0);
}
