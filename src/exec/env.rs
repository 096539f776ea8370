//! The child's environment: what `LD_PRELOAD` (`DYLD_INSERT_LIBRARIES` on
//! macOS) and `FSGUARD_*` variables every program started from here gets,
//! built without editing the caller's envp.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::atomic::{AtomicPtr, Ordering};

use super::Argv;
use crate::guard::{self, set_errno};
use crate::resolve::Spill;

#[cfg(not(target_os = "macos"))]
extern "C" {
    #[link_name = "environ"]
    static mut ENVIRON: Argv;
}

/// The process's environment array (`execv`, `execvp` and the shell pass
/// it on).
#[inline]
pub(crate) fn environ() -> Argv {
    // SAFETY: reads the pointer libc keeps (a copy, no reference).
    #[cfg(not(target_os = "macos"))]
    let e = unsafe { ENVIRON };
    // SAFETY: environ(7) on macOS: a shared library has no `environ` of its
    // own; `_NSGetEnviron()` (<crt_externs.h>) points at the program's.
    #[cfg(target_os = "macos")]
    let e = unsafe { *libc::_NSGetEnviron() }.cast_const().cast();
    e
}

/// What every child gets, fixed at load.
struct ChildEnv {
    /// Absolute path of this library.
    lib: Box<[u8]>,
    /// The frozen settings, handed over in a memfd.
    frozen: Box<[u8]>,
    /// `FSGUARD_REPORT_FD=N` when a supervisor listens.
    report: Option<CString>,
}

static CHILD: AtomicPtr<ChildEnv> = AtomicPtr::new(std::ptr::null_mut());

fn child_env() -> Option<&'static ChildEnv> {
    // SAFETY: set once in `init` to a leaked Box, never freed.
    unsafe { CHILD.load(Ordering::Acquire).as_ref() }
}

/// Called from the constructor once the policy is frozen.
pub(crate) fn init(frozen: &str, report_fd: Option<i32>) -> Result<(), String> {
    let lib = own_path().ok_or("cannot find the library's own path (dladdr)")?;
    let child = ChildEnv {
        lib: lib.into_boxed_slice(),
        frozen: frozen.as_bytes().into(),
        report: report_fd.map(|fd| CString::new(format!("FSGUARD_REPORT_FD={fd}")).unwrap()),
    };
    CHILD.store(Box::into_raw(Box::new(child)), Ordering::Release);
    Ok(())
}

/// This library's absolute path: the object that holds one of our functions.
fn own_path() -> Option<Vec<u8>> {
    // Seen when the real functions were found (no dladdr scan).
    #[cfg(target_os = "linux")]
    let found = crate::sys::own_name().map(|n| n.to_bytes().to_vec());
    #[cfg(not(target_os = "linux"))]
    let found: Option<Vec<u8>> = None;
    let name = match found {
        Some(n) if !n.is_empty() => n,
        _ => own_path_dladdr()?,
    };
    made_absolute(name)
}

/// This library's file name, as `dladdr` of one of its functions has it.
fn own_path_dladdr() -> Option<Vec<u8>> {
    // SAFETY: zeroed Dl_info is a valid out-parameter.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: any address inside a loaded object may be passed.
    let ok = unsafe { libc::dladdr(init as *const c_void, &mut info) };
    if ok == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dladdr hands back a C string owned by the loader.
    Some(
        unsafe { CStr::from_ptr(info.dli_fname) }
            .to_bytes()
            .to_vec(),
    )
}

/// The library's file `name` made absolute.
fn made_absolute(mut name: Vec<u8>) -> Option<Vec<u8>> {
    // Made absolute with the kernel's help, the way realpath would, with
    // raw system calls (this runs while the guard loads, when the
    // library's own calls of hooked functions are refused), and without
    // opening the library's file again: its directory is opened (`O_PATH`)
    // and named, and a final symlink followed by hand.
    for _ in 0..40 {
        let cut = name.iter().rposition(|&b| b == b'/');
        let (dir, base) = match cut {
            Some(0) => (&b"/"[..], &name[1..]),
            Some(i) => (&name[..i], &name[i + 1..]),
            None => (&b"."[..], &name[..]),
        };
        let dir = std::ffi::CString::new(dir).ok()?;
        let base = std::ffi::CString::new(base).ok()?;
        let fd = crate::sys::open_ref(rustix::fs::CWD, &dir, rustix::fs::OFlags::DIRECTORY).ok()?;
        let mut buf = [std::mem::MaybeUninit::<u8>::uninit(); 4096];
        let n = crate::sys::fd_name(std::os::fd::AsFd::as_fd(&fd), &mut buf).ok()?;
        let mut abs: Vec<u8> = buf[..n]
            .iter()
            .map(|b| {
                // SAFETY: fd_name wrote the first n bytes.
                unsafe { b.assume_init() }
            })
            .collect();
        match rustix::fs::readlinkat(&fd, base.as_c_str(), Vec::new()) {
            Ok(target) => {
                let target = target.into_bytes();
                if target.first() == Some(&b'/') {
                    name = target;
                } else {
                    abs.push(b'/');
                    abs.extend_from_slice(&target);
                    name = abs;
                }
            }
            Err(_) => {
                if abs.last() != Some(&b'/') {
                    abs.push(b'/');
                }
                abs.extend_from_slice(base.to_bytes());
                return Some(abs);
            }
        }
    }
    None
}

const PRELOAD: &[u8] = crate::sys::PRELOAD_ENTRY;
/// What separates the entries of the preload variable: glibc's `ld.so`
/// takes `:` and spaces; dyld splits `DYLD_INSERT_LIBRARIES` on `:` only
/// (dyld(1)), so a space there is part of a path.
#[cfg(not(target_os = "macos"))]
const SEPARATORS: &[u8] = b": ";
#[cfg(target_os = "macos")]
const SEPARATORS: &[u8] = b":";
/// Stack room for the `LD_PRELOAD` entry and the envp's pointers: most
/// environments fit; a larger one moves to a mapping ([`Spill`]), never to
/// the heap, which a `vfork` child shares and a signal handler may find
/// locked. Small, as execve may run on a signal handler's 8 KiB stack.
const PRELOAD_INLINE: usize = 256;
const VARS_INLINE: usize = 512;

/// Entries of a NULL-terminated array (NULL counts as empty, as the kernel does).
///
/// # Safety
/// `envp` NULL or a NULL-terminated array of C strings that outlive the call.
pub(super) unsafe fn entries<'a>(envp: Argv) -> impl Iterator<Item = *const c_char> + 'a {
    let mut p = envp;
    std::iter::from_fn(move || {
        // SAFETY: the caller's NULL-terminated array of C strings.
        unsafe {
            if p.is_null() || (*p).is_null() {
                return None;
            }
            let e = *p;
            p = p.add(1);
            Some(e)
        }
    })
}

fn drop_var(kv: &[u8]) -> bool {
    kv.starts_with(PRELOAD) || kv.starts_with(b"FSGUARD_")
}

/// The caller's `LD_PRELOAD` value (the last one wins, as in getenv).
///
/// # Safety
/// As [`entries`].
unsafe fn caller_preload(envp: Argv) -> &'static [u8] {
    let mut v: &[u8] = b"";
    // SAFETY: as in `entries`.
    for e in unsafe { entries(envp) } {
        // SAFETY: each entry is a C string.
        let kv = unsafe { CStr::from_ptr(e) }.to_bytes();
        if let Some(rest) = kv.strip_prefix(PRELOAD) {
            // SAFETY: the caller's strings outlive the exec call.
            v = unsafe { std::slice::from_raw_parts(rest.as_ptr(), rest.len()) };
        }
    }
    v
}

/// `LD_PRELOAD=<lib>[:<caller's others>]\0` into `out` (`prefix` the
/// variable's `NAME=`, its entries split on any byte of `seps`); returns
/// the length used, or the length needed if `out` is too small.
fn preload_entry(prefix: &[u8], seps: &[u8], lib: &[u8], old: &[u8], out: &mut [u8]) -> usize {
    let mut n = 0;
    let mut put = |b: &[u8], out: &mut [u8]| {
        if n + b.len() <= out.len() {
            out[n..n + b.len()].copy_from_slice(b);
        }
        n += b.len();
    };
    put(prefix, out);
    put(lib, out);
    for tok in old.split(|c| seps.contains(c)) {
        if tok.is_empty() || tok == lib {
            continue;
        }
        put(b":", out);
        put(tok, out);
    }
    put(b"\0", out);
    n
}

/// Runs `f` with the child's envp: the caller's minus `LD_PRELOAD` and every
/// `FSGUARD_*`, plus ours. Built on the stack when it fits, else in a
/// mapping; `Err(ENOMEM)` without calling `f` when no mapping can be made
/// (the child never runs without the library).
///
/// Never inlined: its buffers stay out of the frame that runs the exec
/// check.
///
/// # Safety
/// As [`entries`].
///
/// An envp that sets a loader variable of
/// [`fsguard_policy::program::LOADER_ENV`] is refused first
/// (`rule=loader_env:NAME`, a trace line naming `call` and `shown`, the
/// program), whether or not the guard is loaded yet.
#[inline(always)]
pub(super) unsafe fn with_env<R>(
    call: &'static str,
    shown: &[u8],
    envp: Argv,
    f: impl FnOnce(Argv) -> R,
) -> Result<R, c_int> {
    // SAFETY: forwarded.
    unsafe { with_env_named(call, shown, None, envp, f) }
}

/// [`with_env`], and `FSGUARD_COMM=comm` when `comm` is given: the name the
/// child's library gives its process (`PR_SET_NAME`), the one a bare exec
/// would have given it, where the exec through a descriptor names it after
/// the file instead (a symlink's target, a script's interpreter).
///
/// # Safety
/// As [`entries`].
#[inline(never)]
pub(super) unsafe fn with_env_named<R>(
    call: &'static str,
    shown: &[u8],
    comm: Option<&[u8]>,
    envp: Argv,
    f: impl FnOnce(Argv) -> R,
) -> Result<R, c_int> {
    // SAFETY: the caller's envp.
    if let Some(var) = unsafe { loader_var(envp) } {
        return Err(refuse_loader_var(call, shown, var));
    }
    let Some(ce) = child_env() else {
        return Ok(f(envp));
    };
    // SAFETY: the caller's envp.
    let old = unsafe { caller_preload(envp) };
    // SAFETY: as above.
    let count = unsafe { entries(envp) }.count();
    let need_vars = count + 5;
    let mut pre_buf = Spill::<PRELOAD_INLINE>::new();
    let need_pre = preload_entry(PRELOAD, SEPARATORS, &ce.lib, old, &mut []);
    let mut vars_buf = Spill::<VARS_INLINE>::new();
    let align = std::mem::align_of::<*const c_char>();
    let vars_bytes = need_vars * std::mem::size_of::<*const c_char>() + align;
    if pre_buf.reserve(need_pre, 0).is_err() || vars_buf.reserve(vars_bytes, 0).is_err() {
        return Err(libc::ENOMEM);
    }
    let pre = {
        let b = pre_buf.buf();
        // SAFETY: `need_pre` bytes fit (reserved above); zeroed before the
        // slice is made.
        let b = unsafe {
            let p = b.as_mut_ptr().cast::<u8>();
            p.write_bytes(0, need_pre);
            std::slice::from_raw_parts_mut(p, need_pre)
        };
        preload_entry(PRELOAD, SEPARATORS, &ce.lib, old, b);
        b.as_ptr()
    };
    let vars: &mut [*const c_char] = {
        let b = vars_buf.buf();
        let skip = b.as_mut_ptr().align_offset(align);
        // SAFETY: `skip + need_vars` pointers fit (one alignment's slack
        // reserved above), the start is aligned, and every slot is written
        // before the array is read (a NULL ends it).
        unsafe {
            let p = b.as_mut_ptr().add(skip).cast::<*const c_char>();
            for i in 0..need_vars {
                p.add(i).write(std::ptr::null());
            }
            std::slice::from_raw_parts_mut(p, need_vars)
        }
    };
    // No fd for the policy: `-1`, which the child refuses (fail closed).
    let handoff = crate::handoff::ForChild::new(&ce.frozen);
    let mut policy = [0u8; 40];
    let mut n = 0;
    vars[n] = pre.cast();
    n += 1;
    vars[n] = policy_entry(handoff.as_ref(), &mut policy);
    n += 1;
    // The report channel, connected again if the program closed it.
    let report = crate::trace::report_for_child();
    let mut report_buf = [0u8; 40];
    if let Some(r) = report.entry(ce.report.as_deref(), &mut report_buf) {
        vars[n] = r.as_ptr();
        n += 1;
    }
    let mut comm_buf = [0u8; COMM_VAR.len() + 16];
    if let Some(c) = comm {
        // Whole characters only: the child reads the variable as UTF-8.
        let c = &c[..c.len().min(15)];
        let c = match std::str::from_utf8(c) {
            Ok(_) => c,
            Err(e) => &c[..e.valid_up_to()],
        };
        comm_buf[..COMM_VAR.len()].copy_from_slice(COMM_VAR);
        comm_buf[COMM_VAR.len()..COMM_VAR.len() + c.len()].copy_from_slice(c);
        vars[n] = comm_buf.as_ptr().cast();
        n += 1;
    }
    // SAFETY: as above.
    for e in unsafe { entries(envp) } {
        // SAFETY: a C string.
        if !drop_var(unsafe { CStr::from_ptr(e) }.to_bytes()) {
            vars[n] = e;
            n += 1;
        }
    }
    vars[n] = std::ptr::null();
    let r = f(vars.as_ptr());
    let saved = guard::errno();
    drop(vars_buf);
    drop(pre_buf);
    drop(handoff);
    drop(report);
    set_errno(saved);
    Ok(r)
}

/// The variable that names the child's process ([`with_env_named`]).
const COMM_VAR: &[u8] = b"FSGUARD_COMM=";

/// The first variable of `envp` the loader would run code or write a file
/// for, beside the library ([`fsguard_policy::program::loader_env`]).
///
/// # Safety
/// As [`entries`].
///
/// Never inlined, nor is its refusal: their temporaries stay out of
/// [`with_env`]'s frame, live during the exec.
#[inline(never)]
unsafe fn loader_var(envp: Argv) -> Option<&'static str> {
    // SAFETY: as in `entries`; each entry a C string.
    unsafe { entries(envp) }.find_map(|e| {
        // SAFETY: a C string of the caller's envp.
        fsguard_policy::program::loader_env(unsafe { CStr::from_ptr(e) }.to_bytes())
    })
}

/// The refusal of an exec whose environment sets `var`: the errno, after
/// the trace line when the guard is there to write it.
#[cold]
#[inline(never)]
fn refuse_loader_var(call: &'static str, shown: &[u8], var: &'static str) -> c_int {
    let Ok(Some(g)) = guard::get_or_refuse() else {
        return libc::EACCES;
    };
    let saved = guard::errno();
    let r = std::panic::catch_unwind(|| {
        g.refuse(
            call,
            fsguard_policy::Access::Exec,
            shown,
            fsguard_policy::Rule::LoaderEnv(var),
        )
    });
    set_errno(saved);
    match r {
        Ok(Err(e)) => e,
        _ => libc::EACCES,
    }
}

/// `FSGUARD_POLICY_FD=N` for `handoff`, or `=-1` when there is none.
fn policy_entry(handoff: Option<&crate::handoff::ForChild>, buf: &mut [u8; 40]) -> *const c_char {
    match handoff {
        Some(h) => {
            h.entry(buf);
        }
        None => {
            let s = b"FSGUARD_POLICY_FD=-1\0";
            buf[..s.len()].copy_from_slice(s);
        }
    }
    buf.as_ptr().cast()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preload_puts_ours_first_once() {
        let mut buf = [0u8; 256];
        let ld = |lib: &[u8], old: &[u8], out: &mut [u8]| {
            preload_entry(b"LD_PRELOAD=", b": ", lib, old, out)
        };
        let n = ld(
            b"/l/libfsguard.so",
            b"/x.so /l/libfsguard.so::/y.so",
            &mut buf,
        );
        assert_eq!(&buf[..n], b"LD_PRELOAD=/l/libfsguard.so:/x.so:/y.so\0");
        let n = ld(b"/l/a.so", b"", &mut buf);
        assert_eq!(&buf[..n], b"LD_PRELOAD=/l/a.so\0");
        assert_eq!(ld(b"/l/a.so", b"/b", &mut []), n + 3);
    }

    #[test]
    fn dyld_insert_libraries_splits_on_colons_only() {
        let mut buf = [0u8; 256];
        let n = preload_entry(
            b"DYLD_INSERT_LIBRARIES=",
            b":",
            b"/l/libfsguard.dylib",
            b"/Users/me/My Libs/x.dylib:/l/libfsguard.dylib::/y.dylib",
            &mut buf,
        );
        assert_eq!(
            &buf[..n],
            &b"DYLD_INSERT_LIBRARIES=/l/libfsguard.dylib:/Users/me/My Libs/x.dylib:/y.dylib\0"[..]
        );
    }
}
