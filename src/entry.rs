//! Where a hooked call enters the library: the `hooks!` macro, which turns
//! each row of a hook table into an exported function (classify → resolve
//! → decide → real call or deny) and a [`crate::hooks::HookInfo`] row, and
//! the typing of its arguments ([`HookArg`]: a C string becomes a
//! [`CArg`]).

use std::ffi::c_char;

use crate::guard::CArg;

/// A hook's argument as the code below the hook's entry sees it: a C string
/// (`*const c_char`) as a [`CArg`], anything else as it came.
pub trait HookArg: Copy {
    /// The typed form.
    type Typed<'a>: Copy;
    /// # Safety
    /// A C string argument must be NULL or a C string valid for the call.
    unsafe fn typed<'a>(self) -> Self::Typed<'a>;
}

impl HookArg for *const c_char {
    type Typed<'a> = CArg<'a>;
    #[inline]
    unsafe fn typed<'a>(self) -> Self::Typed<'a> {
        // SAFETY: the caller's guarantee, passed on.
        unsafe { CArg::new(self) }
    }
}

macro_rules! as_is {
    ($($t:ty),*) => {$(
        impl HookArg for $t {
            type Typed<'a> = $t;
            #[inline]
            unsafe fn typed<'a>(self) -> Self::Typed<'a> {
                self
            }
        }
    )*};
}

as_is!(
    i32,
    u32,
    i64,
    u64,
    usize,
    *const libc::c_void,
    *const libc::timespec
);
as_is!(*const libc::timeval, *const libc::utimbuf);

impl<T> HookArg for *mut T {
    type Typed<'a> = *mut T;
    #[inline]
    unsafe fn typed<'a>(self) -> Self::Typed<'a> {
        self
    }
}

/// Declares hooks; used by every module that defines some (see the table
/// in [`crate::hooks`] for the syntax).
macro_rules! hooks {
    (@real $symbol:literal, $realty:ty, $fail:expr, ($($rarg:expr),*)) => {
        match crate::real::real!($symbol, $realty) {
            // SAFETY: the real function, called with the caller's arguments.
            Some(f) => unsafe { f($($rarg),*) },
            None => {
                crate::guard::set_errno(libc::ENOSYS);
                $fail
            }
        }
    };
    (@call $symbol:literal, $fail:expr, ($($arg:ident: $argty:ty),*) -> $ret:ty, ($realty:ty) ($($rarg:expr),*)) => {
        hooks!(@real $symbol, $realty, $fail, ($($rarg),*))
    };
    (@call $symbol:literal, $fail:expr, ($($arg:ident: $argty:ty),*) -> $ret:ty) => {
        hooks!(@real $symbol, unsafe extern "C" fn($($argty),*) -> $ret, $fail, ($($arg),*))
    };
    (@act $vias:ident, $call:expr, $t:ident, $act:expr) => {
        if $vias.resolved() {
            let r = {
                let $t = &$vias;
                $act
            };
            return crate::guard::release(r, $vias);
        }
    };
    (table $table:ident; $(
        $(#[doc = $doc:literal])*
        $symbol:literal as $call:literal
        fn $export:ident($($arg:ident: $argty:ty),* $(,)?) -> $ret:ty
        $(, real $realty:ty = ($($rarg:expr),* $(,)?))?
        $(, fast $fast:expr)?
        $(, via $vpath:ident)?
        $(, act |$t:ident| $act:expr)?
        , fail $fail:expr
        , check [$($access:expr, $follow:expr, $dirfd:expr, $path:expr, $moves:expr);* $(;)?];
    )*) => {
        $(
            $(#[doc = $doc])*
            ///
            /// # Safety
            /// As for the C function: its pointer arguments valid as it
            /// requires (a C string NUL-terminated, NULL only where it
            /// accepts NULL).
            #[no_mangle]
            pub unsafe extern "C" fn $export($($arg: $argty),*) -> $ret {
                let raw_args = ($($arg,)*);
                $(#[allow(unused_variables)] // not every hook reads every one
                let $arg =
                    // SAFETY: the caller's argument under the C function's
                    // contract: a C string is NULL or valid for the call.
                    unsafe { crate::entry::HookArg::typed($arg) };)*
                $(if let Some(r) = $fast {
                    return r;
                })?
                let targets = [$(crate::guard::Target {
                    access: $access,
                    follow: $follow,
                    dirfd: $dirfd,
                    path: $path,
                    moves: $moves,
                }),*];
                let mut vias = crate::guard::Vias::new(&targets);
                if let Err(e) = crate::guard::check_into($call, &targets, &mut vias) {
                    crate::guard::set_errno(e);
                    return $fail;
                }
                // Act on the object checked: through the fds the check
                // holds, never the caller's string again.
                $(hooks!(@act vias, $call, $t, $act);)?
                $(let via_path = if vias.resolved() { vias[0].abs() } else { $vpath.as_ptr() };)?
                // `vias` moves into `release` only after the call: `via_path`
                // may point into it.
                crate::guard::release(
                    {
                        // The real call gets the caller's own arguments.
                        #[allow(unused_variables)] // a `real` list may leave some out
                        let ($($arg,)*) = raw_args;
                        $(let $vpath = via_path;)?
                        hooks!(@call $symbol, $fail, ($($arg: $argty),*) -> $ret $(, ($realty) ($($rarg),*))?)
                    },
                    vias,
                )
            }
        )*

        /// The hooked symbols of this table, as declared.
        pub static $table: &[crate::hooks::HookInfo] = &[$(crate::hooks::HookInfo {
            symbol: $symbol,
            call: $call,
            checks: &[$(crate::hooks::CheckInfo {
                access: stringify!($access),
                follow: stringify!($follow),
                dirfd: stringify!($dirfd),
                path: stringify!($path),
            }),*],
        }),*];
    };
}
