//! The real libc functions.
//!
//! On Linux the library overrides libc's symbols by being loaded first, and
//! the real function is the next definition (what `dlsym(RTLD_NEXT)` would
//! answer), every site's found at once when the guard loads
//! ([`crate::sys::resolve_all`]). On Darwin the loader
//! rewires calls through the library's `__DATA,__interpose` pairs instead
//! and leaves the library's own references to the original alone, so there
//! `real!` links the original directly, the symbol the pair names (see
//! docs/macos.md).

/// The next definition of `$name` after this library, as a `$ty` function
/// pointer; `None` if there is none. Read from a cell the guard's load
/// fills, with every other site's, before any hook can run
/// ([`crate::sys::resolve_all`]: the site files its cell in the
/// `fsguard_real` section): no hook looks a symbol up. A process forked
/// later inherits the cells.
#[cfg(not(target_os = "macos"))]
macro_rules! real {
    ($name:expr, $ty:ty) => {{
        use std::sync::atomic::{AtomicPtr, Ordering};
        static PTR: AtomicPtr<libc::c_void> = AtomicPtr::new(std::ptr::null_mut());
        #[used]
        #[link_section = "fsguard_real"]
        static SLOT: $crate::sys::Slot = $crate::sys::Slot {
            name: concat!($name, "\0").as_ptr().cast(),
            ptr: &PTR,
            hash: $crate::sys::gnu_hash($name.as_bytes()),
        };
        let mut p = PTR.load(Ordering::Relaxed);
        if p.is_null() && !$crate::sys::real_resolved() {
            // Only before the guard's load has run (which resolves first):
            // the library's own calls while it loads find the cells filled.
            $crate::sys::resolve_all();
            p = PTR.load(Ordering::Acquire);
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
