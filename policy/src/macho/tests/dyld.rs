//! The dyld reading: `is_macho`, `macho_dynamic`.

use super::{fat, filler, reader, with_command};
use crate::macho::dyld::{LC_LOAD_DYLINKER, MH_EXECUTE};
use crate::macho::{is_macho, macho_dynamic, word};

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

/// An `LC_LOAD_DYLINKER` naming `/usr/lib/dyld`.
fn dylinker_command() -> Vec<u8> {
    let mut cmd = vec![0u8; 32];
    put(&mut cmd, 0, LC_LOAD_DYLINKER);
    put(&mut cmd, 4, 32);
    put(&mut cmd, 8, 12); // lc_str offset of the name
    cmd[12..25].copy_from_slice(b"/usr/lib/dyld");
    cmd
}

/// The object turned into an executable image (`MH_EXECUTE`), with an
/// `LC_LOAD_DYLINKER` naming `/usr/lib/dyld` appended if `dylinker`.
fn executable(obj: &[&str], dylinker: bool) -> Vec<u8> {
    let mut f = bytes(obj);
    put(&mut f, 12, MH_EXECUTE);
    if dylinker {
        let cmd = dylinker_command();
        let (n, size) = (word(&f, 16, true).unwrap(), word(&f, 20, true).unwrap());
        put(&mut f, 16, n + 1);
        put(&mut f, 20, size + 32);
        f.extend(cmd);
    }
    f
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

#[test]
fn reads_universal_files() {
    let x = |d| executable(X86_64_OBJECT, d);
    let a = |d| executable(ARM64_OBJECT, d);
    for wide in [false, true] {
        let both = fat(&[&x(true), &a(true)], wide);
        assert!(is_macho(&both));
        assert_eq!(dynamic(&both), Some(true));
        // One slice the kernel may pick runs without dyld.
        assert_eq!(dynamic(&fat(&[&x(true), &a(false)], wide)), Some(false));
        assert_eq!(dynamic(&fat(&[&x(false), &a(true)], wide)), Some(false));
        // Objects only: nothing to run.
        let objs = fat(&[&bytes(X86_64_OBJECT), &bytes(ARM64_OBJECT)], wide);
        assert_eq!(dynamic(&objs), None);
    }
    // A slice past the file's end, or an absurd count: not readable.
    let mut cut = fat(&[&x(true)], false);
    cut.truncate(4096 + 16);
    assert_eq!(dynamic(&cut), None);
    let mut many = fat(&[&x(true)], false);
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

#[test]
fn dyld_named_past_one_window() {
    // More load-command bytes before LC_LOAD_DYLINKER than the walk reads
    // at once (512).
    let padded = with_command(&executable(X86_64_OBJECT, false), &filler(600));
    assert_eq!(dynamic(&padded), Some(false));
    let f = with_command(&padded, &dylinker_command());
    assert_eq!(dynamic(&f), Some(true));
    assert_eq!(macho_dynamic(&f, 352 + 600, reader(&f)), Some(false));
    assert_eq!(macho_dynamic(&f, 352 + 600 + 8, reader(&f)), Some(true));
}
