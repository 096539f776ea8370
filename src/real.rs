//! The real libc functions.
//!
//! On Linux the library overrides libc's symbols by being loaded first, and
//! the real function is the next definition (`dlsym(RTLD_NEXT)`, through
//! the platform seam's `next_symbol`), found once. On Darwin the loader
//! rewires calls through the library's `__DATA,__interpose` pairs instead
//! and leaves the library's own references to the original alone, so there
//! `real!` links the original directly, the symbol the pair names (see
//! docs/macos.md).

/// The next definition of `$name` after this library, as a `$ty` function
/// pointer; `None` if there is none. Looked up on first use and cached in an
/// atomic, so it works before the constructor and after fork.
#[cfg(not(target_os = "macos"))]
macro_rules! real {
    ($name:expr, $ty:ty) => {{
        use std::sync::atomic::{AtomicPtr, Ordering};
        static PTR: AtomicPtr<libc::c_void> = AtomicPtr::new(std::ptr::null_mut());
        let mut p = PTR.load(Ordering::Relaxed);
        if p.is_null() {
            const NAME: &std::ffi::CStr =
                match std::ffi::CStr::from_bytes_with_nul(concat!($name, "\0").as_bytes()) {
                    Ok(c) => c,
                    Err(_) => panic!("a symbol name holds no NUL"),
                };
            p = $crate::sys::next_symbol(NAME);
            PTR.store(p, Ordering::Relaxed);
        }
        if p.is_null() {
            None
        } else {
            // SAFETY: the symbol is the libc function of this name, whose C
            // signature `$ty` spells out.
            Some(unsafe { std::mem::transmute::<*mut libc::c_void, $ty>(p) })
        }
    }};
}

/// The original `$name`, as a `$ty` function pointer (always `Some`): on
/// Darwin the library's own reference to a libc symbol is bound to libc's
/// definition and dyld leaves it alone (an image's `__interpose` pairs do
/// not apply to calls the image itself makes), so the original is linked,
/// not looked up. The declared type is a placeholder: `$ty` is the
/// signature the call uses.
#[cfg(target_os = "macos")]
macro_rules! real {
    ($name:expr, $ty:ty) => {{
        #[allow(clashing_extern_declarations)] // one placeholder type for every symbol
        extern "C" {
            #[link_name = $name]
            fn original();
        }
        // SAFETY: the symbol is the libc function of this name, whose C
        // signature `$ty` spells out.
        Some(unsafe { std::mem::transmute::<unsafe extern "C" fn(), $ty>(original) })
    }};
}

pub(crate) use real;
