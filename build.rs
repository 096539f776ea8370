//! Compiles the variadic entry points in shim/ and exports them from the
//! cdylib (rustc's version script exports only Rust symbols).

use std::path::PathBuf;

/// Symbols defined in C; they must appear in the library's dynamic table.
const SHIM_SYMBOLS: &[&str] = &[
    "open",
    "open64",
    "openat",
    "openat64",
    "execl",
    "execle",
    "execlp",
    "dlopen",
    "syscall",
    "__open",
    "__open64",
    "__open_nocancel",
    "__open64_nocancel",
    "dlsym",
    "dlvsym",
    "dlmopen",
];

fn main() {
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    cc::Build::new()
        .file("shim/shim.c")
        .flag_if_supported("-fvisibility=default")
        .warnings(true)
        // dlsym, dlvsym, dlopen and dlmopen end in a tail call to the real
        // function, which finds its caller by return address: always
        // optimise, so the call is a jump in debug builds too.
        .opt_level(2)
        .flag("-foptimize-sibling-calls")
        .cargo_metadata(false)
        .compile("fsguard_shim");
    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-link-lib=static:+whole-archive=fsguard_shim");
    let map = out.join("shim-exports.map");
    let globals: String = SHIM_SYMBOLS.iter().map(|s| format!("{s}; ")).collect();
    std::fs::write(&map, format!("{{ global: {globals}}};\n")).unwrap();
    println!(
        "cargo:rustc-cdylib-link-arg=-Wl,--version-script={}",
        map.display()
    );
    println!("cargo:rustc-link-lib=dl");
    println!("cargo:rerun-if-changed=shim/shim.c");
    println!("cargo:rerun-if-changed=build.rs");
}
