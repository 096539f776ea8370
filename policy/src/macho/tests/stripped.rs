//! [`stripped_for`], the exec hooks' allocation-free form, against the
//! allocating one the CLI uses (`slices`, `runs_as`, `signature`).

use super::*;

/// What the CLI's reading says of `file` on a `host` CPU.
fn allocating(file: &[u8], host: u32) -> Option<Stripped> {
    let s = slices(reader(file))?;
    let cpus: Vec<u32> = s.iter().map(|s| s.cputype).collect();
    let arch = runs_as(&cpus, host)?;
    let slice = s.iter().find(|s| s.cputype == arch)?;
    signature(reader(file), slice)?.stripped()
}

/// What the exec hooks' reading says, with a buffer of `room` bytes.
fn hooks(file: &[u8], host: u32, room: usize) -> Option<Stripped> {
    stripped_for(reader(file), host, &mut vec![0u8; room])
}

/// Both readings, which must agree, on both hosts.
fn both(file: &[u8], what: &str) -> [Option<Stripped>; 2] {
    [CPU_ARM64, CPU_X86_64].map(|host| {
        let want = allocating(file, host);
        assert_eq!(hooks(file, host, 64 * 1024), want, "{what}, host {host:#x}");
        want
    })
}

#[test]
fn the_unallocating_form_agrees_on_every_signature() {
    let a = object("arm64-apple-darwin");
    let x = object("x86_64-apple-darwin");
    for (i, (flags, xml, der, want)) in signature_cases().iter().enumerate() {
        let sig = superblob(*flags, xml.as_deref(), der.as_deref());
        let (sa, sx) = (signed(&a, &sig), signed(&x, &sig));
        // Thin arm64: runs on arm64 only.
        assert_eq!(both(&sa, &format!("case {i} arm64")), [*want, None]);
        // Thin x86_64: natively, or under Rosetta.
        assert_eq!(both(&sx, &format!("case {i} x86_64")), [*want, *want]);
        for wide in [false, true] {
            // Signed arm64 slice, unsigned x86_64 one, and the reverse.
            let f = fat(&[&x, &sa], wide);
            assert_eq!(both(&f, &format!("case {i} fat")), [*want, None]);
            let f = fat(&[&sx, &a], wide);
            assert_eq!(both(&f, &format!("case {i} fat")), [None, *want]);
        }
    }
}

#[test]
fn the_unallocating_form_agrees_on_odd_files() {
    let obj = object("arm64-apple-darwin");
    let f = signed(
        &obj,
        &superblob(CS_RUNTIME, Some(&plist(&[])), Some(&der(&[]))),
    );
    assert_eq!(both(&f, "whole"), [Some(Stripped::HardenedRuntime), None]);
    // Cut anywhere.
    for n in 0..f.len() {
        both(&f[..n], &format!("cut at {n}"));
    }
    // Commands past one window, and the signature's past `sizeofcmds`.
    let big = with_command(&with_command(&obj, &filler(600)), &filler(8));
    let g = signed(&big, &superblob(CS_RUNTIME, None, None));
    assert_eq!(
        both(&g, "long commands")[0],
        Some(Stripped::HardenedRuntime)
    );
    let mut h = g.clone();
    let size = u32::from_le_bytes(h[20..24].try_into().unwrap());
    h[20..24].copy_from_slice(&(size - 8).to_le_bytes());
    assert_eq!(both(&h, "signature past the commands"), [None, None]);
    // Bad command sizes; a blob index past the SuperBlob.
    for bad in [0u32, 0x7fff_ffff] {
        let mut g = f.clone();
        g[32 + 4..32 + 8].copy_from_slice(&bad.to_le_bytes());
        assert_eq!(both(&g, "bad cmdsize"), [None, None]);
    }
    let mut sb = superblob(CS_RUNTIME, None, None);
    sb[16..20].copy_from_slice(&0xffff_fff0u32.to_be_bytes());
    assert_eq!(both(&signed(&obj, &sb), "bad index"), [None, None]);
    // More index entries than one read takes, the CodeDirectory's last.
    let mut cd_body = 0x0002_0400u32.to_be_bytes().to_vec();
    cd_body.extend(CS_RUNTIME.to_be_bytes());
    cd_body.extend([0u8; 72]);
    let mut blobs: Vec<(u32, Vec<u8>)> = (0..39).map(|_| (2, blob(0xfade_0c01, &[0; 4]))).collect();
    blobs.push((CSSLOT_CODEDIRECTORY, blob(CSMAGIC_CODEDIRECTORY, &cd_body)));
    let g = signed(&obj, &superblob_of(&blobs));
    assert_eq!(sig_of(&g).map(|s| s.flags), Some(CS_RUNTIME));
    assert_eq!(both(&g, "long index")[0], Some(Stripped::HardenedRuntime));
    // Big endian, of a CPU neither host is.
    let f = big_endian_signed(&superblob(CS_RUNTIME, None, None));
    assert_eq!(
        stripped_for(reader(&f), 18, &mut [0u8; 64]),
        Some(Stripped::HardenedRuntime)
    );
    assert_eq!(both(&f, "ppc"), [None, None]);
}

#[test]
fn entitlements_too_large_for_the_buffer_are_taken_as_missing() {
    let obj = object("arm64-apple-darwin");
    let names: Vec<String> = (0..200)
        .map(|i| format!("com.example.entitlement-{i}"))
        .collect();
    let mut entries: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "<true/>")).collect();
    entries.push((ALLOW_DYLD_ENV, "<true/>"));
    let xml = plist(&entries);
    let mut der_entries: Vec<(&str, Option<bool>)> =
        names.iter().map(|n| (n.as_str(), Some(true))).collect();
    der_entries.push((ALLOW_DYLD_ENV, Some(true)));
    let der = der(&der_entries);
    assert!(xml.len() > 4096 && der.len() > 4096);
    for (what, f, len) in [
        (
            "xml",
            signed(&obj, &superblob(CS_RUNTIME, Some(&xml), None)),
            xml.len(),
        ),
        (
            "der",
            signed(&obj, &superblob(CS_RUNTIME, None, Some(&der))),
            der.len(),
        ),
    ] {
        // The allocating reading sees the entitlement; so does the
        // hooks' while the buffer holds the blob.
        assert_eq!(allocating(&f, CPU_ARM64), None, "{what}");
        assert_eq!(hooks(&f, CPU_ARM64, len), None, "{what}");
        // One byte short: fail closed.
        assert_eq!(
            hooks(&f, CPU_ARM64, len - 1),
            Some(Stripped::HardenedRuntime),
            "{what}"
        );
        assert_eq!(hooks(&f, CPU_ARM64, 0), Some(Stripped::HardenedRuntime));
    }
    // Without the hardened runtime the entitlements are not read.
    let f = signed(&obj, &superblob(0x2, Some(&xml), None));
    assert_eq!(hooks(&f, CPU_ARM64, 0), None);
    let f = signed(&obj, &superblob(CS_RESTRICT, Some(&xml), None));
    assert_eq!(hooks(&f, CPU_ARM64, 0), Some(Stripped::Restricted));
}

#[test]
fn the_slice_the_host_runs_is_the_one_judged() {
    let a = object("arm64-apple-darwin");
    let x = object("x86_64-apple-darwin");
    let hard = superblob(CS_RUNTIME, None, None);
    let f = fat(&[&a, &signed(&x, &hard)], true);
    let mut r = reader(&f);
    assert_eq!(
        host_slice(&mut r, CPU_ARM64).map(|s| s.cputype),
        Some(CPU_ARM64)
    );
    assert_eq!(
        host_slice(&mut r, CPU_X86_64).map(|s| s.cputype),
        Some(CPU_X86_64)
    );
    assert_eq!(host_slice(&mut r, 18), None);
    assert_eq!(hooks(&f, CPU_ARM64, 0), None);
    assert_eq!(hooks(&f, CPU_X86_64, 0), Some(Stripped::HardenedRuntime));
    // x86_64 only: Rosetta runs it on arm64.
    let f = signed(&x, &hard);
    assert_eq!(hooks(&f, CPU_ARM64, 0), Some(Stripped::HardenedRuntime));
    // arm64 only: nothing an x86_64 machine runs.
    let f = signed(&a, &hard);
    assert_eq!(hooks(&f, CPU_X86_64, 0), None);
    assert_eq!(hooks(&f, CPU_ARM64, 0), Some(Stripped::HardenedRuntime));
}
