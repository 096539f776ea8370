//! Compiles the variadic entry points in shim/ and exports them from the
//! cdylib (rustc's version script exports only Rust symbols). For a Darwin
//! target, shim/darwin.c instead, whose interpose pairs need no export.

use std::path::PathBuf;

const SHIM: &str = "shim/shim.c";
const DARWIN_SHIM: &str = "shim/darwin.c";
const DARWIN_VARIANTS: &str = "src/darwin_variants.txt";

/// The functions shim/shim.c defines with external linkage: each must appear
/// in the library's dynamic table. Read from the definitions themselves (one
/// line each: `type name(args) {` at the start of a line, not `static`), so
/// an entry point is declared in one place; the `hook_table` integration test
/// checks that every export has a row in the hook tables and back.
fn shim_symbols(src: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (n, line) in src.lines().enumerate() {
        let line = line.trim_end();
        let top_level = line.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_');
        if !top_level || line.starts_with("static ") || line.starts_with("typedef ") {
            continue;
        }
        let Some((head, _)) = line.split_once('(') else {
            continue;
        };
        if line.ends_with(';') {
            continue; // a declaration (the Rust side of a hook)
        }
        let name = head
            .split_whitespace()
            .last()
            .unwrap_or("")
            .trim_start_matches('*');
        let ident = !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        assert!(
            line.ends_with('{') && ident,
            "{SHIM}:{}: cannot read an entry point from `{line}`; \
             write a definition with external linkage on one line, \
             `type name(args) {{`",
            n + 1
        );
        out.push(name.to_string());
    }
    assert!(!out.is_empty(), "no entry point found in {SHIM}");
    out
}

/// shim/darwin.c, compiled when a C compiler for the Darwin target is at
/// hand: a Mac's own, `CC_<target>` or `CC` if set, else `clang` (which
/// targets Darwin from any host). The file includes only compiler headers,
/// so no macOS SDK is needed to compile it. Off a Mac, without a compiler,
/// the C is left out with a warning (a `cargo check` of the Rust code needs
/// none, and nothing links for Darwin there); on a Mac that is an error.
fn darwin() {
    println!("cargo:rerun-if-changed={DARWIN_SHIM}");
    println!("cargo:rerun-if-changed=build.rs");
    let target = std::env::var("TARGET").unwrap_or_default();
    let host = std::env::var("HOST").unwrap_or_default();
    let mut build = cc::Build::new();
    let vars = ["CC".to_string(), format!("CC_{}", target.replace('-', "_"))];
    for v in &vars {
        println!("cargo:rerun-if-env-changed={v}");
    }
    let chosen = vars.iter().any(|v| std::env::var_os(v).is_some());
    if !host.contains("apple") && !chosen {
        build.compiler("clang");
    }
    let built = build
        .file(DARWIN_SHIM)
        .flag("-ffreestanding")
        .warnings(true)
        .opt_level(2)
        .cargo_metadata(false)
        .try_compile("fsguard_darwin_shim");
    match built {
        Ok(()) => {
            let out = std::env::var("OUT_DIR").unwrap();
            println!("cargo:rustc-link-search=native={out}");
            println!("cargo:rustc-link-lib=static:+whole-archive=fsguard_darwin_shim");
        }
        // On a Mac the library links: without its open and openat it would
        // let those calls through unchecked, so no library at all.
        Err(e) if host.contains("apple") => panic!("{DARWIN_SHIM}: {e}"),
        // Elsewhere nothing links for Darwin (no SDK): a check needs no C.
        Err(e) => println!(
            "cargo:warning={DARWIN_SHIM} not compiled (no C compiler for {target}: {e}); \
             the library's variadic open and openat are not interposed"
        ),
    }
}

/// The `darwin_variants!` macro from src/darwin_variants.txt: one arm per
/// symbol with variants, which re-declares the row (`hooks!(@variant ...)`)
/// under each variant's name on the architectures that export it; any other
/// symbol expands to nothing.
fn darwin_variants() {
    println!("cargo:rerun-if-changed={DARWIN_VARIANTS}");
    let list = std::fs::read_to_string(DARWIN_VARIANTS)
        .unwrap_or_else(|e| panic!("{DARWIN_VARIANTS}: {e}"));
    let mut arms: Vec<(String, String)> = Vec::new();
    for (n, line) in list.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let parsed = line.split_once(' ').and_then(|(archs, variant)| {
            let (base, _) = variant.split_once('$')?;
            let archs: Vec<&str> = archs.split(',').collect();
            let known = archs.iter().all(|a| matches!(*a, "x86_64" | "aarch64"));
            let plain = |s: &str| {
                s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
            };
            (known && plain(variant) && !base.is_empty()).then_some((archs, base, variant))
        });
        let Some((archs, base, variant)) = parsed else {
            panic!(
                "{DARWIN_VARIANTS}:{}: expected `ARCH[,ARCH] symbol$SUFFIX`, got `{line}`",
                n + 1
            );
        };
        let cfg: Vec<String> = archs
            .iter()
            .map(|a| format!("target_arch = \"{a}\""))
            .collect();
        let item = format!(
            "        #[cfg(any({}))]\n        hooks!(@variant \"{variant}\", $($row)*);\n",
            cfg.join(", ")
        );
        match arms.iter_mut().find(|(b, _)| b == base) {
            Some((_, body)) => body.push_str(&item),
            None => arms.push((base.to_string(), item)),
        }
    }
    let mut out = String::from(
        "/// The variants of a hooked symbol (generated by build.rs from src/darwin_variants.txt).\n\
         macro_rules! darwin_variants {\n",
    );
    // Keyed by the row's function name (a forwarded `literal` matches no
    // literal token, an `ident` does): `stat`, or `fsguard_open` for a row
    // whose name is taken by a shim entry point. The row's symbol must be
    // the base (checked at compile time); a row named otherwise gets no
    // variants, which tests/hook_table.rs reports as missing pairs.
    for (base, body) in &arms {
        for name in [base.to_string(), format!("fsguard_{base}")] {
            out.push_str(&format!(
                "    ({name}, $symbol:literal, $($row:tt)*) => {{\n        \
                 const _: () = assert!(crate::entry::same_symbol($symbol, \"{base}\"), \
                 \"the row named {name} is not {base}'s\");\n{body}    }};\n"
            ));
        }
    }
    out.push_str("    ($other:ident, $($row:tt)*) => {};\n}\n");
    let path = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("darwin_variants.rs");
    std::fs::write(path, out).unwrap();
}

fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("macos") {
        darwin_variants();
        darwin();
        return;
    }
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let src = std::fs::read_to_string(SHIM).unwrap_or_else(|e| panic!("{SHIM}: {e}"));
    let symbols = shim_symbols(&src);
    cc::Build::new()
        .file(SHIM)
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
    let globals: String = symbols.iter().map(|s| format!("{s}; ")).collect();
    std::fs::write(&map, format!("{{ global: {globals}}};\n")).unwrap();
    println!(
        "cargo:rustc-cdylib-link-arg=-Wl,--version-script={}",
        map.display()
    );
    // The `fsguard_real` section (src/sys/next.rs) is reached only through
    // its __start_/__stop_ symbols: keep it whatever the linker's default.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,nostart-stop-gc");
    // The library's own references to its own functions (the shim's calls
    // of the Rust checks, the hooks' addresses) bound when it is linked,
    // not looked up by the loader at every process start.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-Bsymbolic-functions");
    println!("cargo:rustc-link-lib=dl");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        // glibc targets only: std's unwinder on musl is already static.
        if std::env::var("CARGO_CFG_TARGET_ENV").as_deref() == Ok("gnu") {
            link_unwinder_statically();
        }
    }
    println!("cargo:rerun-if-changed={SHIM}");
    println!("cargo:rerun-if-changed=build.rs");
}

/// Links GCC's unwinder (libgcc_eh.a) into the library instead of loading
/// libgcc_s.so.1: that library cost every guarded process start eight or
/// nine loader system calls, each two stops under `fsguard run`'s trace.
/// Whole archive, ahead of std's `-lgcc_s`, so that `--as-needed` drops
/// libgcc_s; rustc's version script keeps the unwinder's symbols local, so
/// a program's own C++ exceptions still use its own unwinder.
fn link_unwinder_statically() {
    println!("cargo:rustc-link-lib=static:+whole-archive=gcc_eh");
}
