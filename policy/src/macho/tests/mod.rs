//! The Mach-O reading, on clang-made objects and files built from them.

use super::sign::*;
use super::*;

mod dyld;
mod stripped;

/// A `read` over bytes in memory.
fn reader(data: &[u8]) -> impl FnMut(u64, &mut [u8]) -> Option<usize> + '_ {
    move |off, buf| {
        let off = usize::try_from(off).ok()?;
        if off >= data.len() {
            return Some(0);
        }
        let n = buf.len().min(data.len() - off);
        buf[..n].copy_from_slice(&data[off..off + n]);
        Some(n)
    }
}

/// A real Mach-O object for `target`, compiled by clang (which CI
/// installs: docs/macos.md).
fn object(target: &str) -> Vec<u8> {
    // One directory per call: tests run in parallel.
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("fsguard-macho-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("m.c");
    let out = dir.join(format!("{target}.o"));
    std::fs::write(&src, "int main(void) { return 0; }\n").unwrap();
    let st = std::process::Command::new("clang")
        .args(["-target", target, "-c"])
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .status()
        .expect("clang must be installed to make Mach-O objects (apt-get install clang)");
    assert!(st.success(), "clang -target {target}");
    let bytes = std::fs::read(&out).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    bytes
}

fn blob(magic: u32, body: &[u8]) -> Vec<u8> {
    let mut b = magic.to_be_bytes().to_vec();
    b.extend((8 + body.len() as u32).to_be_bytes());
    b.extend(body);
    b
}

/// A SuperBlob holding a CodeDirectory with `flags` and the entitlements
/// given, laid out as `<kern/cs_blobs.h>` says.
fn superblob(flags: u32, xml: Option<&[u8]>, der: Option<&[u8]>) -> Vec<u8> {
    // CodeDirectory: version, flags, then the rest of its fixed fields.
    let mut cd_body = 0x0002_0400u32.to_be_bytes().to_vec();
    cd_body.extend(flags.to_be_bytes());
    cd_body.extend([0u8; 72]);
    let mut blobs = vec![(CSSLOT_CODEDIRECTORY, blob(CSMAGIC_CODEDIRECTORY, &cd_body))];
    // A requirements blob nobody reads (slot 2), as a signer writes one.
    blobs.push((2, blob(0xfade_0c01, &[0, 0, 0, 0])));
    if let Some(x) = xml {
        blobs.push((CSSLOT_ENTITLEMENTS, blob(CSMAGIC_EMBEDDED_ENTITLEMENTS, x)));
    }
    if let Some(d) = der {
        blobs.push((
            CSSLOT_DER_ENTITLEMENTS,
            blob(CSMAGIC_EMBEDDED_DER_ENTITLEMENTS, d),
        ));
    }
    superblob_of(&blobs)
}

/// A SuperBlob of `blobs` (slot, blob), in that order.
fn superblob_of(blobs: &[(u32, Vec<u8>)]) -> Vec<u8> {
    let head = 12 + 8 * blobs.len();
    let total: usize = head + blobs.iter().map(|(_, b)| b.len()).sum::<usize>();
    let mut out = CSMAGIC_EMBEDDED_SIGNATURE.to_be_bytes().to_vec();
    out.extend((total as u32).to_be_bytes());
    out.extend((blobs.len() as u32).to_be_bytes());
    let mut off = head;
    for (ty, b) in blobs {
        out.extend(ty.to_be_bytes());
        out.extend((off as u32).to_be_bytes());
        off += b.len();
    }
    for (_, b) in blobs {
        out.extend(b);
    }
    out
}

/// `obj` (a 64-bit little-endian Mach-O) with `cmd` after its last load
/// command; what followed the commands moves down.
fn with_command(obj: &[u8], cmd: &[u8]) -> Vec<u8> {
    let le = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
    assert_eq!(le(obj, 0), MH_MAGIC_64);
    let (ncmds, size) = (le(obj, 16), le(obj, 20) as usize);
    let end = 32 + size;
    let mut f = obj[..end].to_vec();
    f.extend_from_slice(cmd);
    f[16..20].copy_from_slice(&(ncmds + 1).to_le_bytes());
    f[20..24].copy_from_slice(&((size + cmd.len()) as u32).to_le_bytes());
    f.extend_from_slice(&obj[end..]);
    f
}

/// A load command nobody reads, `size` bytes long.
fn filler(size: u32) -> Vec<u8> {
    let mut c = 0x7777u32.to_le_bytes().to_vec();
    c.extend(size.to_le_bytes());
    c.resize(size as usize, 0);
    c
}

/// `obj` (a 64-bit little-endian Mach-O) with an `LC_CODE_SIGNATURE`
/// pointing at `sig`, appended to the file.
fn signed(obj: &[u8], sig: &[u8]) -> Vec<u8> {
    let sig_at = (obj.len() + 16).next_multiple_of(16);
    let mut cmd = Vec::new();
    for v in [LC_CODE_SIGNATURE, 16, sig_at as u32, sig.len() as u32] {
        cmd.extend(v.to_le_bytes());
    }
    let mut f = with_command(obj, &cmd);
    f.resize(sig_at, 0);
    f.extend_from_slice(sig);
    f
}

/// A universal file of `images` (cputype from each image's header).
fn fat(images: &[&[u8]], wide: bool) -> Vec<u8> {
    let magic = if wide { FAT_MAGIC_64 } else { FAT_MAGIC };
    let ent = if wide { 32 } else { 20 };
    let mut out = magic.to_be_bytes().to_vec();
    out.extend((images.len() as u32).to_be_bytes());
    let mut off = (8 + ent * images.len()).next_multiple_of(4096);
    let mut placed = Vec::new();
    for img in images {
        let cpu = Image::parse(img).unwrap().cputype(img).unwrap();
        out.extend(cpu.to_be_bytes());
        out.extend(3u32.to_be_bytes()); // cpusubtype: any
        if wide {
            out.extend((off as u64).to_be_bytes());
            out.extend((img.len() as u64).to_be_bytes());
            out.extend(12u32.to_be_bytes());
            out.extend(0u32.to_be_bytes());
        } else {
            out.extend((off as u32).to_be_bytes());
            out.extend((img.len() as u32).to_be_bytes());
            out.extend(12u32.to_be_bytes());
        }
        placed.push(off);
        off = (off + img.len()).next_multiple_of(4096);
    }
    for (img, at) in images.iter().zip(placed) {
        out.resize(at, 0);
        out.extend_from_slice(img);
    }
    out
}

fn plist(entries: &[(&str, &str)]) -> Vec<u8> {
    let mut s = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \
         \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n<plist version=\"1.0\">\n<dict>\n",
    );
    for (k, v) in entries {
        s.push_str(&format!("\t<key>{k}</key>\n\t{v}\n"));
    }
    s.push_str("</dict>\n</plist>\n");
    s.into_bytes()
}

fn tlv(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    match content.len() {
        n if n < 0x80 => out.push(n as u8),
        n if n < 0x100 => out.extend([0x81, n as u8]),
        n => out.extend([0x82, (n >> 8) as u8, n as u8]),
    }
    out.extend_from_slice(content);
    out
}

/// DER entitlements: `[APPLICATION 16] { INTEGER 1, [16] { SET of
/// SEQUENCE { UTF8String key, value } } }`.
fn der(entries: &[(&str, Option<bool>)]) -> Vec<u8> {
    let mut set = Vec::new();
    for (k, v) in entries {
        let mut pair = tlv(0x0c, k.as_bytes());
        pair.extend(match v {
            Some(b) => tlv(0x01, &[if *b { 0xff } else { 0 }]),
            None => tlv(0x0c, b"a string"),
        });
        set.extend(tlv(0x30, &pair));
    }
    let mut body = tlv(0x02, &[1]);
    body.extend(tlv(0xb0, &tlv(0x31, &set)));
    tlv(0x70, &body)
}

fn sig_of(file: &[u8]) -> Option<Signature> {
    let s = slices(reader(file)).unwrap();
    signature(reader(file), &s[0])
}

#[test]
fn real_objects_name_their_architecture() {
    let x = object("x86_64-apple-darwin");
    let a = object("arm64-apple-darwin");
    assert_eq!(
        slices(reader(&x)),
        Some(vec![Slice {
            cputype: CPU_X86_64,
            offset: 0
        }])
    );
    assert_eq!(
        slices(reader(&a)),
        Some(vec![Slice {
            cputype: CPU_ARM64,
            offset: 0
        }])
    );
    assert_eq!(arch_name(CPU_X86_64), "x86_64");
    assert_eq!(arch_name(CPU_ARM64), "arm64");
    // Unsigned, as a compiler writes it.
    assert_eq!(sig_of(&x), None);
    assert_eq!(sig_of(&a), None);
}

#[test]
fn universal_files_list_every_slice() {
    let x = object("x86_64-apple-darwin");
    let a = object("arm64-apple-darwin");
    for wide in [false, true] {
        let f = fat(&[&x, &a], wide);
        let s = slices(reader(&f)).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].cputype, s[0].offset), (CPU_X86_64, 4096));
        assert_eq!(s[1].cputype, CPU_ARM64);
        assert_eq!(&f[s[1].offset as usize..][..4], &a[..4]);
    }
}

/// flags, XML entitlements, DER entitlements, the verdict.
type Case = (u32, Option<Vec<u8>>, Option<Vec<u8>>, Option<Stripped>);

/// Signatures and what dyld makes of them.
fn signature_cases() -> Vec<Case> {
    let yes = plist(&[
        (ALLOW_DYLD_ENV, "<true/>"),
        ("com.apple.security.cs.allow-jit", "<true/>"),
    ]);
    let no = plist(&[(ALLOW_DYLD_ENV, "<false/>")]);
    let other = plist(&[(
        "com.apple.security.cs.disable-library-validation",
        "<true/>",
    )]);
    vec![
        (CS_RUNTIME, None, None, Some(Stripped::HardenedRuntime)),
        (CS_RUNTIME, Some(yes.clone()), None, None),
        (CS_RUNTIME, Some(no), None, Some(Stripped::HardenedRuntime)),
        (
            CS_RUNTIME,
            Some(other),
            None,
            Some(Stripped::HardenedRuntime),
        ),
        (
            CS_RUNTIME,
            None,
            Some(der(&[(ALLOW_DYLD_ENV, Some(true))])),
            None,
        ),
        (
            CS_RUNTIME,
            None,
            Some(der(&[(ALLOW_DYLD_ENV, Some(false))])),
            Some(Stripped::HardenedRuntime),
        ),
        (
            CS_RUNTIME,
            None,
            Some(der(&[(ALLOW_DYLD_ENV, None)])),
            Some(Stripped::HardenedRuntime),
        ),
        (
            CS_RUNTIME | 0x2,
            Some(yes.clone()),
            Some(der(&[(ALLOW_DYLD_ENV, Some(true))])),
            None,
        ),
        // Ad-hoc and linker-signed, as the toolchain signs on arm64.
        (0x2 | 0x20000, None, None, None),
        (CS_RESTRICT, Some(yes), None, Some(Stripped::Restricted)),
    ]
}

#[test]
fn hardened_runtime_without_the_entitlement_is_stripped() {
    let obj = object("arm64-apple-darwin");
    for (i, (flags, xml, der, want)) in signature_cases().iter().enumerate() {
        let f = signed(&obj, &superblob(*flags, xml.as_deref(), der.as_deref()));
        let sig = sig_of(&f).unwrap_or_else(|| panic!("case {i}: no signature"));
        assert_eq!(sig.flags, *flags, "case {i}");
        assert_eq!(sig.stripped(), *want, "case {i}");
    }
}

#[test]
fn each_slice_has_its_own_signature() {
    let x = signed(
        &object("x86_64-apple-darwin"),
        &superblob(CS_RUNTIME, None, None),
    );
    let a = object("arm64-apple-darwin");
    let f = fat(&[&a, &x], true);
    let s = slices(reader(&f)).unwrap();
    assert_eq!(signature(reader(&f), &s[0]), None);
    let sig = signature(reader(&f), &s[1]).unwrap();
    assert_eq!(sig.stripped(), Some(Stripped::HardenedRuntime));
}

#[test]
fn commands_are_read_past_one_window() {
    // More load-command bytes before the signature's than the walk reads
    // at once (512).
    let obj = object("arm64-apple-darwin");
    let big = with_command(&with_command(&obj, &filler(600)), &filler(8));
    let f = signed(&big, &superblob(CS_RUNTIME, None, None));
    assert_eq!(sig_of(&f).map(|s| s.flags), Some(CS_RUNTIME));
    // The signature's command past `sizeofcmds`: not read.
    let mut g = f.clone();
    let size = u32::from_le_bytes(g[20..24].try_into().unwrap());
    g[20..24].copy_from_slice(&(size - 8).to_le_bytes());
    assert_eq!(sig_of(&g), None);
}

#[test]
fn entitlements_are_read_exactly() {
    let sig = |xml: Vec<u8>| Signature {
        flags: CS_RUNTIME,
        xml: Some(xml),
        der: None,
    };
    // A longer key that starts with the one asked for is another key.
    let longer = format!("{ALLOW_DYLD_ENV}-not");
    assert!(!sig(plist(&[(&longer, "<true/>")])).entitled(ALLOW_DYLD_ENV));
    // The value must follow the key.
    let text =
        format!("<dict><key>{ALLOW_DYLD_ENV}</key><string>x</string><key>b</key><true/></dict>");
    assert!(!sig(text.into_bytes()).entitled(ALLOW_DYLD_ENV));
    let text = format!("<dict><key>a</key><false/><key>{ALLOW_DYLD_ENV}</key>\r\n  <true/></dict>");
    assert!(sig(text.into_bytes()).entitled(ALLOW_DYLD_ENV));
    // DER with long-form lengths (many entitlements).
    let names: Vec<String> = (0..40)
        .map(|i| format!("com.example.entitlement-{i}"))
        .collect();
    let mut many: Vec<(&str, Option<bool>)> =
        names.iter().map(|n| (n.as_str(), Some(true))).collect();
    many.push((ALLOW_DYLD_ENV, Some(true)));
    let d = der(&many);
    assert_eq!(d[1], 0x82, "the test must reach two-byte lengths");
    assert!(Signature {
        der: Some(d),
        ..Signature::default()
    }
    .entitled(ALLOW_DYLD_ENV));
    let d = der(&many[..40]);
    assert!(!Signature {
        der: Some(d),
        ..Signature::default()
    }
    .entitled(ALLOW_DYLD_ENV));
}

#[test]
fn malformed_files_give_no_answer() {
    let obj = object("x86_64-apple-darwin");
    let f = signed(
        &obj,
        &superblob(CS_RUNTIME, Some(&plist(&[])), Some(&der(&[]))),
    );
    assert!(sig_of(&f).is_some());
    // Cut anywhere: no panic, and never a signature that is not there.
    for n in 0..f.len() {
        let cut = &f[..n];
        if let Some(s) = slices(reader(cut)) {
            if let Some(sig) = signature(reader(cut), &s[0]) {
                assert_eq!(sig.flags, CS_RUNTIME, "cut at {n}");
            }
        }
    }
    // A command size of 0, or past the commands.
    for bad in [0u32, 0x7fff_ffff] {
        let mut g = f.clone();
        g[32 + 4..32 + 8].copy_from_slice(&bad.to_le_bytes());
        assert_eq!(sig_of(&g), None);
    }
    // A signature without a CodeDirectory, or with a blob index past its end.
    let mut sb = superblob(CS_RUNTIME, None, None);
    sb[16..20].copy_from_slice(&0xffff_fff0u32.to_be_bytes());
    assert_eq!(sig_of(&signed(&obj, &sb)), None);
    // Not Mach-O: ELF, a Java class file (same magic as a universal file),
    // an empty universal file, one whose slice is not Mach-O.
    assert_eq!(slices(reader(b"\x7fELF\x02\x01\x01\0")), None);
    assert_eq!(slices(reader(&[0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 52])), None);
    assert_eq!(slices(reader(&[0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 0])), None);
    let mut g = fat(&[&obj], false);
    g[4096] ^= 0xff;
    assert_eq!(slices(reader(&g)), None);
    assert_eq!(slices(reader(&[])), None);
}

/// A 32-bit big-endian image (PowerPC layout, CPU 18) signed with `sig`.
fn big_endian_signed(sig: &[u8]) -> Vec<u8> {
    let mut f = Vec::new();
    for v in [MH_MAGIC, 18, 0, 2, 1, 16, 0] {
        f.extend(u32::to_be_bytes(v));
    }
    for v in [LC_CODE_SIGNATURE, 16, 64, sig.len() as u32] {
        f.extend(u32::to_be_bytes(v));
    }
    f.resize(64, 0);
    f.extend(sig);
    f
}

#[test]
fn big_endian_images_are_read_too() {
    let f = big_endian_signed(&superblob(CS_RUNTIME, None, None));
    let s = slices(reader(&f)).unwrap();
    assert_eq!(
        s,
        vec![Slice {
            cputype: 18,
            offset: 0
        }]
    );
    assert_eq!(signature(reader(&f), &s[0]).unwrap().flags, CS_RUNTIME);
}

#[test]
fn a_program_runs_as_the_host_or_under_rosetta() {
    let (x, a) = (CPU_X86_64, CPU_ARM64);
    assert_eq!(runs_as(&[a, x], a), Some(a));
    assert_eq!(runs_as(&[x], a), Some(x)); // Rosetta
    assert_eq!(runs_as(&[a, x], x), Some(x));
    assert_eq!(runs_as(&[a], x), None); // no Rosetta the other way
    assert_eq!(runs_as(&[7], a), None); // i386: gone since macOS 10.15
}
