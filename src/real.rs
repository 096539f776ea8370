//! The real libc functions, found once with `dlsym(RTLD_NEXT, …)`.

/// The next definition of `$name` after this library, as a `$ty` function
/// pointer; `None` if there is none. Looked up on first use and cached in an
/// atomic, so it works before the constructor and after fork.
macro_rules! real {
    ($name:expr, $ty:ty) => {{
        use std::sync::atomic::{AtomicPtr, Ordering};
        static PTR: AtomicPtr<libc::c_void> = AtomicPtr::new(std::ptr::null_mut());
        let mut p = PTR.load(Ordering::Relaxed);
        if p.is_null() {
            // SAFETY: a NUL-terminated symbol name; dlsym is thread-safe.
            p = unsafe { libc::dlsym(libc::RTLD_NEXT, concat!($name, "\0").as_ptr().cast()) };
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

pub(crate) use real;
