//! Where a hooked call enters the library: the `hooks!` macro, which turns
//! each row of a hook table into an exported function (classify → resolve
//! → decide → real call or deny) and a [`crate::hooks::HookInfo`] row, and
//! the typing of its arguments ([`HookArg`]: a C string becomes a
//! [`CArg`]).

use std::ffi::{c_char, c_int, c_long};

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
    u16,
    u32,
    i64,
    u64,
    usize,
    *const libc::c_void,
    *const libc::timespec
);
as_is!(*const libc::timeval, *const libc::utimbuf);
as_is!(*const libc::sockaddr, *const *mut c_char);
as_is!(*const *const c_char);
// Distinct types on glibc; both `*mut c_void` on Darwin, where the exec
// family is not built yet (docs/macos.md).
#[cfg(target_os = "linux")]
as_is!(
    *const libc::posix_spawn_file_actions_t,
    *const libc::posix_spawnattr_t
);

/// A `syscall(2)` argument as the type of the libc function's parameter in
/// the same place.
pub trait SysArg {
    /// The argument, cast as C would.
    fn from_sys(a: c_long) -> Self;
}

macro_rules! sys_int {
    ($($t:ty),*) => {$(
        impl SysArg for $t {
            #[inline]
            fn from_sys(a: c_long) -> Self {
                a as $t
            }
        }
    )*};
}

sys_int!(i32, u16, u32, i64, u64, usize);

impl<T> SysArg for *const T {
    #[inline]
    fn from_sys(a: c_long) -> Self {
        a as *const T
    }
}

impl<T> SysArg for *mut T {
    #[inline]
    fn from_sys(a: c_long) -> Self {
        a as *mut T
    }
}

/// The system calls a hook table's rows declare (`sys SYS_x`): checked by
/// `syscall(2)` exactly as the libc row is.
pub struct Syscalls {
    /// `None` for a system call no row declares; else the verdict, with
    /// how the call reaches the objects checked. The arguments are the
    /// caller's, raw.
    ///
    /// # Safety
    /// As for `syscall(2)`: each argument the system call reads as a path
    /// NULL or a C string valid for the call.
    pub check: unsafe fn(c_long, [c_long; 6]) -> Option<Result<crate::guard::Vias, c_int>>,
    /// One per row declared, in order: its system call's reference row
    /// (`syscall(SYS_x)`, the libc row's checks), if it has one.
    pub rows: &'static [Option<crate::hooks::HookInfo>],
}

/// What a row's `pre` clause makes of a call before anything is checked.
pub enum Pre<T, R> {
    /// Check the row's targets (which may name the value), then call.
    Check(T),
    /// Nothing to check: the real function with the caller's arguments as
    /// declared (not a `real` list), and no `post`.
    Pass,
    /// The call is answered with this result; nothing else runs.
    Answer(R),
}

impl<T> HookArg for *mut T {
    type Typed<'a> = *mut T;
    #[inline]
    unsafe fn typed<'a>(self) -> Self::Typed<'a> {
        self
    }
}

/// One entry of Darwin's `__DATA,__interpose` section: dyld makes every
/// other image's calls to `original` call `replacement` instead.
#[cfg(target_os = "macos")]
#[repr(C)]
pub struct Interpose {
    /// The hook.
    pub replacement: *const (),
    /// The libc function it stands in for.
    pub original: *const (),
}

// SAFETY: two code addresses, never written after load.
#[cfg(target_os = "macos")]
unsafe impl Sync for Interpose {}

/// Declares hooks; used by every module that defines some (see the table
/// in [`crate::hooks`] for the syntax).
///
/// Besides the clauses of a common row (`real`, `fast`, `via`, `act`), two
/// hook points, as in Gentoo sandbox's wrapper template, serve the calls
/// that need more than "check, then call":
/// - `pre |v| expr` runs first; `expr` is a [`Pre`]: check (with `v` in
///   scope for the check list, the real call and `post`), pass straight
///   through, or answer the call itself.
/// - `post |r| expr` gets the real call's result `r` and gives the result
///   returned (`pre`'s `v` also in scope).
/// - `check fn name(params) [...]` instead of `check [...]`: the check list
///   becomes `fn name(params) -> Result<(), errno>`, run where the call
///   itself needs it (by `pre`, `post` or a callback: on the fd a call
///   returned, on each path of a list) instead of before the call.
///
/// A row with `pre`, `post` or `check fn` takes no `fast`, `via` or `act`:
/// it checks with [`crate::guard::check`] and calls with the caller's
/// arguments (or its `real` list).
///
/// A row may start with one `#[cfg(...)]`, applied to all it declares.
///
/// `sys SYS_x` (after the signature; `sys #[cfg(...)] SYS_x` for a number
/// some targets lack) attaches a system call whose arguments are the libc
/// function's, in its order: `syscall(SYS_x, ...)` is checked by the row's
/// check list, with the raw arguments cast to the row's parameter types.
/// A table that has such rows names their [`Syscalls`] after its own name
/// (`table T, syscalls T_SYS;`).
///
/// `table T, listed everywhere;` keeps every row in `T` (the reference of
/// docs/hooks.md) on every system, whatever the row's `cfg`: the hooks of a
/// system's own table are built there only, and documented everywhere.
///
/// `answer expr`, for a call whose work is more than one real call (the
/// exec family: a `PATH` search, the child's environment): the exported
/// function is `expr` (of the call's return type) over the typed
/// arguments, and nothing else. The row takes no `fail` (its code answers
/// every case), nor `real`, `fast`, `pre`, `via`, `act` or `post`; its
/// checks are its `check fn`, which `expr` calls, or none (`check []`: the
/// row only documents the hook). `check fn name(params) by checker [...]`
/// checks with `checker(call, &targets)` instead of
/// [`crate::guard::check`] (the exec check also checks `#!` interpreters
/// and programs the library cannot follow).
///
/// A common row (neither `pre`, `post` nor `check fn`) expands to the same
/// code as before these existed: the hot path pays nothing for them.
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
    (@targets [$($access:expr, $follow:expr, $dirfd:expr, $path:expr, $moves:expr);*]) => {
        [$(crate::guard::Target {
            access: $access,
            follow: $follow,
            dirfd: $dirfd,
            path: $path,
            moves: $moves,
        }),*]
    };
    // The typed arguments, as every hook's code below its entry sees them.
    (@typed $($arg:ident),*) => {
        $(#[allow(unused_variables)] // not every hook reads every one
        let $arg =
            // SAFETY: the caller's argument under the C function's
            // contract: a C string is NULL or valid for the call.
            unsafe { crate::entry::HookArg::typed($arg) };)*
    };
    // The real function with the caller's arguments as declared, for
    // `Pre::Pass`.
    (@unchecked $symbol:literal, $fail:expr, $raw:ident, ($($arg:ident: $argty:ty),*) -> $ret:ty) => {
        || -> $ret {
            let ($($arg,)*) = $raw;
            hooks!(@call $symbol, $fail, ($($arg: $argty),*) -> $ret)
        }
    };
    (@pre $unchecked:ident, $p:ident, $pre:expr) => {
        let $p = match $pre {
            crate::entry::Pre::Check(v) => v,
            crate::entry::Pre::Pass => return $unchecked(),
            crate::entry::Pre::Answer(r) => return r,
        };
    };
    // Darwin: the row's (replacement, original) pair in `__DATA,__interpose`,
    // through which dyld rewires every other image's calls to the symbol.
    // The pairs of the variadic entry points, and of the calls imported
    // weakly, are shim/darwin.c's.
    (@interpose [$($cfg:meta)?] fsguard_open, $symbol:literal) => {};
    (@interpose [$($cfg:meta)?] fsguard_openat, $symbol:literal) => {};
    (@interpose [$($cfg:meta)?] fsguard_open_dprotected_np, $symbol:literal) => {};
    (@interpose [$($cfg:meta)?] fsguard_mknodat, $symbol:literal) => {};
    (@interpose [$($cfg:meta)?] fsguard_mkfifoat, $symbol:literal) => {};
    (@interpose [$($cfg:meta)?] $export:ident, $symbol:literal) => {
        $(#[cfg($cfg)])?
        #[cfg(target_os = "macos")]
        const _: () = {
            #[allow(clashing_extern_declarations)] // one placeholder type for every symbol
            extern "C" {
                #[link_name = $symbol]
                fn original();
            }
            #[used]
            #[link_section = "__DATA,__interpose"]
            static PAIR: crate::entry::Interpose = crate::entry::Interpose {
                replacement: $export as *const (),
                original: original as *const (),
            };
        };
    };
    // The exported function of a row, with its body: one signature and
    // one set of attributes for every kind of row (on macOS a distinct name
    // and its `__interpose` pair).
    (@export [$($cfg:meta)?] [$($doc:tt)*] $symbol:literal, $export:ident,
        ($($arg:ident: $argty:ty),*) -> $ret:ty, $body:block) => {
        $(#[cfg($cfg)])?
        $($doc)*
        ///
        /// # Safety
        /// As for the C function: its pointer arguments valid as it
        /// requires (a C string NUL-terminated, NULL only where it
        /// accepts NULL).
        #[cfg_attr(not(target_os = "macos"), no_mangle)]
        #[cfg_attr(target_os = "macos", export_name = concat!("fsguard_hook_", $symbol))]
        pub unsafe extern "C" fn $export($($arg: $argty),*) -> $ret $body
        hooks!(@interpose [$($cfg)?] $export, $symbol);
    };
    // A common row: check, then act on the object checked or call.
    (@hook [$($cfg:meta)?] [$($doc:tt)*] $symbol:literal, $call:literal, $export:ident, ($($arg:ident: $argty:ty),*) -> $ret:ty,
        real [$($realty:ty = ($($rarg:expr),*))?], fast [$($fast:expr)?], pre [], via [$($vpath:ident)?],
        act [$(|$t:ident| $act:expr)?], post [], fail $fail:expr, checkfn [],
        check [$($access:expr, $follow:expr, $dirfd:expr, $path:expr, $moves:expr);*]) => {
        hooks!(@export [$($cfg)?] [$($doc)*] $symbol, $export, ($($arg: $argty),*) -> $ret, {
            let raw_args = ($($arg,)*);
            hooks!(@typed $($arg),*);
            $(if let Some(r) = $fast {
                return r;
            })?
            let targets = hooks!(@targets [$($access, $follow, $dirfd, $path, $moves);*]);
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
        });
    };
    // A row with a `pre` and/or a `post`: pre, check (inline, or left to a
    // `check fn` the row's steps run), call, post.
    (@hook [$($cfg:meta)?] [$($doc:tt)*] $symbol:literal, $call:literal, $export:ident, ($($arg:ident: $argty:ty),*) -> $ret:ty,
        real [$($realty:ty = ($($rarg:expr),*))?], fast [], pre [$(|$p:ident| $pre:expr)?], via [],
        act [], post [$(|$r:ident| $post:expr)?], fail $fail:expr, checkfn $checkfn:tt, check $checks:tt) => {
        hooks!(@checkfn [$($cfg)?] $symbol, $call, $checkfn, $checks);

        hooks!(@export [$($cfg)?] [$($doc)*] $symbol, $export, ($($arg: $argty),*) -> $ret, {
            let raw_args = ($($arg,)*);
            #[allow(unused_variables)] // used by a `pre` that may pass
            let unchecked = hooks!(@unchecked $symbol, $fail, raw_args, ($($arg: $argty),*) -> $ret);
            hooks!(@typed $($arg),*);
            $(hooks!(@pre unchecked, $p, $pre);)?
            hooks!(@inlinecheck $checkfn, $call, $fail, $checks);
            let r = {
                #[allow(unused_variables)] // a `real` list may leave some out
                let ($($arg,)*) = raw_args;
                hooks!(@call $symbol, $fail, ($($arg: $argty),*) -> $ret $(, ($realty) ($($rarg),*))?)
            };
            $(let $r = r;
            let r = $post;)?
            r
        });
    };
    // The check of a row without a `check fn`, before its call.
    (@inlinecheck [], $call:literal, $fail:expr, $checks:tt) => {
        if let Err(e) = crate::guard::check($call, &hooks!(@targets $checks)) {
            crate::guard::set_errno(e);
            return $fail;
        }
    };
    (@inlinecheck [$($checkfn:tt)+], $($rest:tt)*) => {};
    // A row whose `answer` does the call: its check function, if any, and
    // the exported function.
    (@hook [$($cfg:meta)?] [$($doc:tt)*] $symbol:literal, $call:literal, $export:ident, ($($arg:ident: $argty:ty),*) -> $ret:ty,
        real [], fast [], pre [answer $answer:expr], via [],
        act [], post [], fail, checkfn $checkfn:tt, check $checks:tt) => {
        hooks!(@checkfn [$($cfg)?] $symbol, $call, $checkfn, $checks);

        hooks!(@export [$($cfg)?] [$($doc)*] $symbol, $export, ($($arg: $argty),*) -> $ret, {
            hooks!(@typed $($arg),*);
            $answer
        });
    };
    // A row's `check fn`, if it declares one.
    (@checkfn [$($cfg:meta)?] $symbol:literal, $call:literal, [], $checks:tt) => {};
    (@checkfn [$($cfg:meta)?] $symbol:literal, $call:literal, [$cf:ident ($($cx:ident: $cxt:ty),*) $(by $by:path)?],
        [$($access:expr, $follow:expr, $dirfd:expr, $path:expr, $moves:expr);*]) => {
        #[doc = concat!("The check of `", $symbol, "`, as its row declares it; `Err(errno)` to refuse.")]
        $(#[cfg($cfg)])?
        fn $cf($($cx: $cxt),*) -> Result<(), std::ffi::c_int> {
            hooks!(@checker [$($by)?])($call, &hooks!(@targets [$($access, $follow, $dirfd, $path, $moves);*]))
        }
    };
    (@checker []) => {
        crate::guard::check
    };
    (@checker [$by:path]) => {
        $by
    };
    // A row's system call, one `if` of its table's `syscall(2)` check.
    (@sys $nr:ident, $args:ident, [], $($rest:tt)*) => {};
    (@sys $nr:ident, $args:ident, [$(#[cfg($scfg:meta)])? $sys:ident], $call:literal,
        ($($arg:ident: $argty:ty),*), [$($check:tt)*]) => {
        $(#[cfg($scfg)])?
        if $nr == $sys {
            let mut sysargs = $args.into_iter();
            $(#[allow(unused_variables)] // not every check reads every one
            let $arg = <$argty as crate::entry::SysArg>::from_sys(sysargs.next().unwrap_or(0));
            #[allow(unused_variables)]
            let $arg =
                // SAFETY: `syscall(2)`'s contract: an argument the system
                // call reads as a path is NULL or a C string valid for it.
                unsafe { crate::entry::HookArg::typed($arg) };)*
            return Some(crate::guard::check_act($call, &hooks!(@targets [$($check)*])));
        }
    };
    (@sysrow [], $($rest:tt)*) => {
        None
    };
    (@sysrow [$sys:ident], $call:literal,
        [$($access:expr, $follow:expr, $dirfd:expr, $path:expr, $moves:expr);*]) => {
        Some(crate::hooks::HookInfo {
            symbol: concat!("syscall(", stringify!($sys), ")"),
            call: $call,
            checks: &[$(crate::hooks::CheckInfo {
                access: stringify!($access),
                follow: stringify!($follow),
                dirfd: stringify!($dirfd),
                path: stringify!($path),
            }),*],
        })
    };
    (@sysrow [#[cfg($scfg:meta)] $sys:ident], $($rest:tt)*) => {
        if cfg!($scfg) {
            hooks!(@sysrow [$sys], $($rest)*)
        } else {
            None
        }
    };
    (@syscalls [] $($rows:tt)*) => {};
    (@syscalls [$systable:ident] $(
        [$($sysspec:tt)*] $symbol:literal, $call:literal, ($($arg:ident: $argty:ty),*), [$($check:tt)*];
    )*) => {
        /// The system calls this table's rows declare, for `syscall(2)`.
        #[cfg(target_os = "linux")]
        pub static $systable: crate::entry::Syscalls = {
            /// # Safety
            /// As [`crate::entry::Syscalls::check`].
            unsafe fn check(
                nr: std::ffi::c_long,
                args: [std::ffi::c_long; 6],
            ) -> Option<Result<crate::guard::Vias, std::ffi::c_int>> {
                $(hooks!(@sys nr, args, [$($sysspec)*], $call, ($($arg: $argty),*), [$($check)*]);)*
                None
            }
            crate::entry::Syscalls {
                check,
                rows: &[$(hooks!(@sysrow [$($sysspec)*], $call, [$($check)*])),*],
            }
        };
    };
    (table $table:ident $(, syscalls $systable:ident)? $(, listed $everywhere:ident)?; $(
        $(#[cfg($cfg:meta)])?
        $(#[doc = $doc:literal])*
        $symbol:literal as $call:literal
        fn $export:ident($($arg:ident: $argty:ty),* $(,)?) -> $ret:ty
        $(, sys $(#[cfg($scfg:meta)])? $sys:ident)?
        $(, real $realty:ty = ($($rarg:expr),* $(,)?))?
        $(, fast $fast:expr)?
        $(, pre |$p:ident| $pre:expr)?
        $(, answer $answer:expr)?
        $(, via $vpath:ident)?
        $(, act |$t:ident| $act:expr)?
        $(, post |$r:ident| $post:expr)?
        $(, fail $fail:expr)?
        , check $(fn $cf:ident($($cx:ident: $cxt:ty),* $(,)?) $(by $by:path)?)?
          [$($access:expr, $follow:expr, $dirfd:expr, $path:expr, $moves:expr);* $(;)?];
    )*) => {
        $(
            hooks!(@hook [$($cfg)?] [$(#[doc = $doc])*] $symbol, $call, $export, ($($arg: $argty),*) -> $ret,
                real [$($realty = ($($rarg),*))?], fast [$($fast)?], pre [$(|$p| $pre)? $(answer $answer)?], via [$($vpath)?],
                act [$(|$t| $act)?], post [$(|$r| $post)?], fail $($fail)?, checkfn [$($cf ($($cx: $cxt),*) $(by $by)?)?],
                check [$($access, $follow, $dirfd, $path, $moves);*]);
        )*

        hooks!(@syscalls [$($systable)?] $(
            [$($(#[cfg($scfg)])? $sys)?] $symbol, $call, ($($arg: $argty),*),
            [$($access, $follow, $dirfd, $path, $moves);*];
        )*);

        hooks!(@infos [$($everywhere)?] $table $(
            [$($cfg)?] $symbol, $call, [$($access, $follow, $dirfd, $path);*];
        )*);
    };
    // The table of rows, for docs/hooks.md: as built (each row under its
    // `cfg`), or, for a table `listed everywhere`, every row on every
    // system (a macOS-only table is rendered by the Linux build too).
    (@infos [] $table:ident $(
        [$($cfg:meta)?] $symbol:literal, $call:literal, [$($access:expr, $follow:expr, $dirfd:expr, $path:expr);*];
    )*) => {
        /// The hooked symbols of this table, as declared.
        pub static $table: &[crate::hooks::HookInfo] = &[$($(#[cfg($cfg)])? crate::hooks::HookInfo {
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
    (@infos [everywhere] $table:ident $(
        [$($cfg:meta)?] $symbol:literal, $call:literal, [$($access:expr, $follow:expr, $dirfd:expr, $path:expr);*];
    )*) => {
        /// The hooked symbols of this table, as declared, whichever system
        /// builds them.
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
