//! The library's state and the one check every hook makes.
//!
//! The policy is built once, by the first hooked call or the constructor,
//! whichever comes first ([`crate::init`]), from the environment the
//! process started with, and never changes. Hooks read it through an atomic
//! pointer: no lock a signal handler or a forked child could find held.

use std::ffi::{c_char, c_int, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicU64, AtomicU8, Ordering};

use fsguard_policy::{Access, Hint, Policy, Rule};

use crate::resolve::{self, Follow, Joined, PathBuf, RawPath, Unresolved, Via};
use crate::trace::{Event, Sink};
use rustix::io::Errno;

/// The loaded policy and where its trace lines go.
pub struct Guard {
    /// The frozen policy.
    pub policy: Policy,
    /// The trace sink.
    pub sink: Sink,
    /// Opens may be done here with one `openat2` (see [`open_fast`]): only
    /// when the next `open` is libc's own, so another interposer loaded
    /// after this library is never bypassed.
    pub fast_open: bool,
    /// `fsguard run` applied a Landlock ruleset: a call allowed here that
    /// the kernel refuses gets a trace line ([`release_call`]).
    pub landlock: bool,
}

const UNINIT: u8 = 0;
const LOADING: u8 = 1;
const READY: u8 = 2;

static STATE: AtomicU8 = AtomicU8::new(UNINIT);
/// Set once, to a leaked Box, when the guard is ready: the one atomic load
/// of every hooked call.
static GUARD: AtomicPtr<Guard> = AtomicPtr::new(std::ptr::null_mut());
/// The thread (and process) loading the guard, while `STATE` is `LOADING`.
static LOADER_TID: AtomicU64 = AtomicU64::new(0);
static LOADER_PID: AtomicI32 = AtomicI32::new(0);
/// The loading thread is inside one of the library's own steps that calls
/// hooked functions itself (reading a config file): its calls go through.
static OWN: AtomicBool = AtomicBool::new(false);

/// The guard. The first call of the process loads it ([`first_call`]):
/// no hooked call passes unchecked, however early it comes (another
/// library's constructor, a preload listed after this one). `None` only
/// for the library's own calls while it loads, which go straight through,
/// and for a call refused before the guard exists ([`get_or_refuse`] tells
/// the two apart).
#[inline]
pub fn get() -> Option<&'static Guard> {
    let p = GUARD.load(Ordering::Acquire);
    if !p.is_null() {
        // SAFETY: set once to a leaked Box that is never freed.
        return Some(unsafe { &*p });
    }
    first_call(false).ok().flatten()
}

/// [`get`], telling apart the two reasons there is no guard: `Ok(None)`, a
/// call of the library's own while it loads (goes straight through);
/// `Err(errno)`, a call no guard can decide (refused: another thread's
/// call that waited too long for the load, a forked child of a loading
/// process, program code run by the loading thread outside the library's
/// own steps).
#[inline]
pub fn get_or_refuse() -> Result<Option<&'static Guard>, c_int> {
    let p = GUARD.load(Ordering::Acquire);
    if !p.is_null() {
        // SAFETY: set once to a leaked Box that is never freed.
        return Ok(Some(unsafe { &*p }));
    }
    first_call(false)
}

/// The constructor's [`get_or_refuse`]: loads the guard even where a
/// hooked call would find it too early to.
pub(crate) fn load_in_constructor() -> Result<Option<&'static Guard>, c_int> {
    first_call(true)
}

/// How long another thread's call waits for the load before it is refused
/// (a thread in `dlopen` holds the loader's lock the load may need).
const LOAD_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// The slow path of [`get`]: loads the guard on the first call, waits for
/// another thread's load, or says what to do meanwhile. A hooked call made
/// before the C library itself is set up (an IFUNC resolver run while the
/// program is relocated: thread-local storage is not ready, and the load
/// needs it) is refused without a load; the constructor loads then.
#[cold]
#[inline(never)]
fn first_call(constructor: bool) -> Result<Option<&'static Guard>, c_int> {
    // The unit tests' harness is not guarded.
    if cfg!(test) {
        return Ok(None);
    }
    let mut waited = None;
    loop {
        match STATE.load(Ordering::Acquire) {
            READY => {
                // SAFETY: set once, before READY, to a leaked Box.
                return Ok(unsafe { GUARD.load(Ordering::Acquire).as_ref() });
            }
            UNINIT => {
                if !constructor && crate::init::too_early() {
                    return Err(libc::EACCES);
                }
                if begin_load() {
                    // Installs the guard, or ends the process (exit 125).
                    crate::init::load_now();
                }
            }
            _ => {
                if LOADER_TID.load(Ordering::Acquire) == crate::sys::thread_id() {
                    return if OWN.load(Ordering::Acquire) {
                        Ok(None)
                    } else {
                        Err(libc::EACCES)
                    };
                }
                if LOADER_PID.load(Ordering::Acquire)
                    != rustix::process::getpid().as_raw_nonzero().get()
                {
                    // Forked while another thread loaded: no one will
                    // finish the load in this process.
                    return Err(libc::EACCES);
                }
                let start = *waited.get_or_insert_with(std::time::Instant::now);
                if start.elapsed() > LOAD_WAIT {
                    return Err(libc::EACCES);
                }
                std::thread::yield_now();
            }
        }
    }
}

/// Claims the one load of the guard for this thread: false when it is
/// loaded or being loaded.
pub(crate) fn begin_load() -> bool {
    let claimed = STATE
        .compare_exchange(UNINIT, LOADING, Ordering::AcqRel, Ordering::Acquire)
        .is_ok();
    if claimed {
        let pid = rustix::process::getpid().as_raw_nonzero().get();
        LOADER_PID.store(pid, Ordering::Release);
        LOADER_TID.store(crate::sys::thread_id(), Ordering::Release);
    }
    claimed
}

/// Whether the guard is ready (the constructor has nothing left to do).
pub(crate) fn ready() -> bool {
    !GUARD.load(Ordering::Acquire).is_null()
}

/// Runs one of the library's own loading steps that call hooked functions
/// itself (std's file access: the config file, the paths it names): on the
/// loading thread, those calls go straight through; any other hooked call
/// while the guard loads is refused.
pub(crate) fn own<R>(f: impl FnOnce() -> R) -> R {
    let was = OWN.swap(true, Ordering::AcqRel);
    let r = f();
    OWN.store(was, Ordering::Release);
    r
}

/// Publishes the loaded guard, leaked: hooks confine from here on.
pub(crate) fn install(g: Guard) {
    GUARD.store(Box::into_raw(Box::new(g)), Ordering::Release);
    STATE.store(READY, Ordering::Release);
    LOADER_TID.store(0, Ordering::Release);
}

/// A C string argument of a hooked call: NULL, or a NUL-terminated string
/// that stays valid for the call. Made once, where the caller's pointer
/// enters the library (the one unsafe step); everything below reads it
/// safely. Read only where its bytes are needed, so a call the guard does
/// not confine never touches the caller's string (the real call sees it).
#[derive(Clone, Copy)]
pub struct CArg<'a> {
    ptr: *const c_char,
    _str: std::marker::PhantomData<&'a CStr>,
}

impl<'a> CArg<'a> {
    /// No string (a NULL argument).
    pub const NULL: CArg<'static> = CArg {
        ptr: std::ptr::null(),
        _str: std::marker::PhantomData,
    };

    /// The caller's pointer, as the C function's contract gives it.
    ///
    /// # Safety
    /// `ptr` must be NULL or point to a NUL-terminated string that is not
    /// freed or changed while the returned value is in use.
    #[inline]
    pub unsafe fn new(ptr: *const c_char) -> CArg<'a> {
        CArg {
            ptr,
            _str: std::marker::PhantomData,
        }
    }

    /// A string the library holds itself.
    #[inline]
    pub const fn of(s: &'a CStr) -> CArg<'a> {
        CArg {
            ptr: s.as_ptr(),
            _str: std::marker::PhantomData,
        }
    }

    /// The pointer as passed, for the real call.
    #[inline]
    pub fn as_ptr(self) -> *const c_char {
        self.ptr
    }

    /// Whether the argument is NULL.
    #[inline]
    pub fn is_null(self) -> bool {
        self.ptr.is_null()
    }

    /// The string; `None` for NULL.
    #[inline]
    pub fn get(self) -> Option<&'a CStr> {
        // SAFETY: NULL or a C string valid for 'a (the contract of `new`).
        (!self.ptr.is_null()).then(|| unsafe { CStr::from_ptr(self.ptr) })
    }

    /// Whether the string is `""` (reads only its first byte; NULL is not).
    #[inline]
    pub fn is_empty(self) -> bool {
        // SAFETY: non-NULL, so a C string: it has at least its NUL.
        !self.ptr.is_null() && unsafe { *self.ptr } == 0
    }
}

impl From<CArg<'_>> for *const c_char {
    fn from(a: CArg<'_>) -> *const c_char {
        a.ptr
    }
}

/// One path a call touches.
pub struct Target<'a> {
    /// The access checked; `None` for calls the policy does not confine
    /// (an `O_PATH` open).
    pub access: Option<Access>,
    /// How the last component is treated.
    pub follow: Follow,
    /// Directory the path is relative to (`AT_FDCWD` for the cwd).
    pub dirfd: c_int,
    /// The path as passed (may be NULL where the call allows it).
    pub path: CArg<'a>,
    /// The call moves or links the object: a protected file may not.
    pub moves: bool,
    /// A plain read-only open, by a row that acts through
    /// [`Via::oflags`]: refused only for lying outside the root, a
    /// directory above it gets a descriptor that names it
    /// ([`Policy::names_only`]) instead.
    pub handle: bool,
}

/// What a row's check list puts in a target's access slot: an access
/// (`READ`, `open_access(flags)`), or an access and whether a refusal may
/// be answered with a descriptor that only names the object
/// (`open_or_handle(flags)`, see [`crate::classify::named_only`]).
pub trait Asked {
    /// The access, and [`Target::handle`].
    fn asked(self) -> (Option<Access>, bool);
}

impl Asked for Option<Access> {
    #[inline]
    fn asked(self) -> (Option<Access>, bool) {
        (self, false)
    }
}

impl Asked for crate::classify::OrHandle {
    #[inline]
    fn asked(self) -> (Option<Access>, bool) {
        (self.access, self.handle)
    }
}

pub use crate::errno::{errno, set_errno};

/// Decides a call: `Ok` to go ahead with the real function, `Err(errno)` to
/// fail it. Never unwinds; a panic inside denies. For calls that take the
/// caller's path again, [`check_act`] is the race-free form.
pub fn check(call: &'static str, targets: &[Target]) -> Result<(), c_int> {
    if confining(targets)?.is_none() {
        return Ok(());
    }
    // Checked into Vias of this frame, dropped here: no frame of
    // `check_act` (its own Vias and temporaries) under the check.
    let mut vias = Vias::new(targets);
    check_into(call, targets, &mut vias)
}

/// The guard, when it confines some target of the call (else the call goes
/// straight through, unresolved); `Err` for a call refused before there is
/// a guard.
#[inline]
fn confining(targets: &[Target]) -> Result<Option<&'static Guard>, c_int> {
    let Some(g) = get_or_refuse()? else {
        return Ok(None);
    };
    Ok(targets.iter().any(|t| g.confines(t.access)).then_some(g))
}

/// The checked objects of one call, one [`Via`] per target.
pub struct Vias([Via; 2]);

impl Vias {
    /// The caller's own arguments, before any check.
    #[inline]
    pub fn new(targets: &[Target]) -> Vias {
        // One Via built per slot, where it is kept: no spare temporaries
        // (each holds a path buffer) in the frames that make the Vias.
        let at = |i: usize| {
            let (dirfd, path) = targets
                .get(i)
                .map_or((libc::AT_FDCWD, std::ptr::null()), |t| {
                    (t.dirfd, t.path.as_ptr())
                });
            Via::caller(dirfd, path)
        };
        Vias([at(0), at(1)])
    }

    /// Whether any target was resolved to an fd (else the call goes ahead
    /// with its own arguments, unchanged).
    pub fn resolved(&self) -> bool {
        self.0.iter().any(|v| v.reach() != resolve::Reach::Caller)
    }

    /// For a call that makes a descriptor: the fds the check holds moved
    /// above the number the call gets (see [`Via::keep_high`]).
    pub fn keep_high(&mut self) -> &Vias {
        for v in &mut self.0 {
            v.keep_high();
        }
        self
    }
}

impl std::ops::Index<usize> for Vias {
    type Output = Via;
    fn index(&self, i: usize) -> &Via {
        &self.0[i]
    }
}

/// Decides a call like [`check`], and on `Ok` hands back how the call
/// reaches exactly the objects checked: the hook acts through those fds,
/// so nothing renamed or swapped after the check can redirect it.
pub fn check_act(call: &'static str, targets: &[Target]) -> Result<Vias, c_int> {
    // Built where it is returned: one copy of the Vias on the stack.
    let mut r = Ok(Vias::new(targets));
    if let Ok(vias) = &mut r {
        if let Err(e) = check_into(call, targets, vias) {
            r = Err(e);
        }
    }
    r
}

/// [`check_act`] into the caller's [`Vias`] (made with [`Vias::new`] from
/// the same targets), which spares copying them out.
///
/// Never inlined: [`check_act`]'s frame holds its [`Vias`] alone, not a
/// second copy beside the check's own temporaries, during the deep check.
#[inline(never)]
pub fn check_into(call: &'static str, targets: &[Target], vias: &mut Vias) -> Result<(), c_int> {
    let Some(g) = confining(targets)? else {
        return Ok(());
    };
    guarded(g, call, targets, || g.check(call, targets, &mut vias.0))
}

/// Runs one check of `call` on `targets`: errno kept, the spare fds taken
/// back, a panic refused, an audited denial let through.
#[inline(always)]
fn guarded(
    g: &Guard,
    call: &'static str,
    targets: &[Target],
    check: impl FnOnce() -> Result<(), c_int>,
) -> Result<(), c_int> {
    // Saved first: on Darwin the spares' system calls go through libc too.
    let saved = errno();
    crate::reserve::take();
    let r = catch_unwind(AssertUnwindSafe(check))
        .unwrap_or_else(|_| crate::internal::check_failed(g, call, targets));
    set_errno(saved);
    // Err(AUDITED): a denial was logged in audit mode; the call goes ahead.
    match r {
        Ok(()) | Err(AUDITED) => Ok(()),
        Err(e) => Err(e),
    }
}

/// The AF_UNIX socket a `connect` or send reaches, or an abstract socket a
/// `bind` takes.
#[derive(Clone, Copy)]
pub enum Socket<'a> {
    /// A socket file, by the path the caller gave (resolved from the cwd,
    /// symlinks followed, as the kernel does).
    Path(CArg<'a>),
    /// An abstract socket: `@` and its name, each NUL shown as `@`.
    Abstract(&'a [u8]),
}

/// Decides a call that reaches an AF_UNIX socket, by the socket rules
/// ([`Policy::decide_socket`]): a socket file is resolved like any target,
/// and on `Ok` `via` holds it (the call connects through its
/// `/proc/self/fd` name, so the object checked is the one reached).
pub fn check_socket(call: &'static str, socket: Socket<'_>, via: &mut Via) -> Result<(), c_int> {
    let Some(g) = get() else {
        return Ok(());
    };
    let (path, name) = match socket {
        Socket::Path(p) => (p, None),
        Socket::Abstract(n) => (CArg::NULL, Some(n)),
    };
    let t = Target {
        access: Some(Access::Write),
        follow: Follow::Yes,
        dirfd: libc::AT_FDCWD,
        path,
        moves: false,
        handle: false,
    };
    let targets = std::slice::from_ref(&t);
    guarded(g, call, targets, || g.check_socket(call, &t, name, via))
}

/// Hands back a call's result `r` after dropping its `state` (closing the
/// fds a check held), keeping the errno the call left. Takes the result,
/// not a closure: the state must stay where it is until the call is done,
/// since the path a call is given may point into it.
#[inline(always)]
pub fn release<R>(r: R, state: impl Sized) -> R {
    let e = errno();
    drop(state);
    set_errno(e);
    r
}

/// [`release`] for a call the library allowed, `failed` when `r` is its
/// failure value: under a Landlock ruleset, a refusal by the kernel gets a
/// trace line and is counted ([`kernel_refused`]). Costs a comparison when
/// the call succeeded.
#[inline(always)]
pub fn release_call<R, H: Held>(
    call: &'static str,
    targets: &[Target],
    r: R,
    failed: bool,
    held: H,
) -> R {
    if failed {
        if let Some(vias) = held.vias() {
            kernel_refused(call, targets, vias);
        }
    }
    release(r, held)
}

/// Whether a hook's result says the call failed: a negative number for the
/// calls that return one (-1), NULL for those that return a pointer.
pub trait Failure {
    /// The call failed (errno says why).
    fn failed(&self) -> bool;
}

macro_rules! failure_below_zero {
    ($($t:ty),*) => {$(
        impl Failure for $t {
            fn failed(&self) -> bool {
                *self < 0
            }
        }
    )*};
}
failure_below_zero!(i32, i64, isize);

/// glibc's `__file_change_detection_for_path`: false when it failed.
impl Failure for bool {
    fn failed(&self) -> bool {
        !*self
    }
}

impl<T> Failure for *mut T {
    fn failed(&self) -> bool {
        self.is_null()
    }
}

impl<T> Failure for *const T {
    fn failed(&self) -> bool {
        self.is_null()
    }
}

/// What a call holds from its check: its [`Vias`], or nothing (`()`) for a
/// call that went ahead with the caller's own arguments.
pub trait Held {
    /// The checked objects, if any are held.
    fn vias(&self) -> Option<&Vias>;
}

impl Held for Vias {
    fn vias(&self) -> Option<&Vias> {
        Some(self)
    }
}

impl Held for () {
    fn vias(&self) -> Option<&Vias> {
        None
    }
}

/// Calls whose refusal Landlock can cause: opens, creating, removing,
/// renaming and linking names, truncating. (It never refuses a change of
/// mode, owner or times: a failure of those is the file permissions'.)
const LANDLOCK_CALLS: &[&str] = &[
    "open", "creat", "fopen", "freopen", "mkdir", "mknod", "mkfifo", "unlink", "remove", "rmdir",
    "rename", "link", "symlink", "truncate",
];

/// Calls on a directory entry: the file permissions that matter are the
/// directory's.
#[cfg(target_os = "linux")]
const ENTRY_CALLS: &[&str] = &[
    "mkdir", "mknod", "mkfifo", "unlink", "remove", "rmdir", "rename", "link", "symlink",
];

/// After an allowed call failed: with `EACCES` or `EPERM`, under a Landlock
/// ruleset, on a call Landlock restricts, where the file permissions
/// allow it (so the kernel's ruleset refused it), one trace line
/// `rule=landlock` with the errno, counted by `fsguard run` like any
/// refusal (in audit mode too: the call failed). Only on this failure
/// path; no allocation; errno kept.
#[cold]
#[inline(never)]
fn kernel_refused(call: &'static str, targets: &[Target], vias: &Vias) {
    let e = errno();
    if e != libc::EACCES && e != libc::EPERM {
        return;
    }
    let Some(g) = get() else {
        return;
    };
    if !g.landlock || !LANDLOCK_CALLS.iter().any(|c| call.starts_with(c)) {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        let entry = ENTRY_CALLS.iter().any(|c| call.starts_with(c));
        let _ = catch_unwind(AssertUnwindSafe(|| {
            kernel_refused_line(g, call, targets, vias, entry, e)
        }));
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (targets, vias);
    set_errno(e);
}

/// The trace line of [`kernel_refused`], when the file permissions allow
/// what failed: the first target (and a second as `dest=`).
#[cfg(target_os = "linux")]
fn kernel_refused_line(
    g: &Guard,
    call: &'static str,
    targets: &[Target],
    vias: &Vias,
    entry: bool,
    e: c_int,
) {
    use std::mem::MaybeUninit;
    let Some(access) = targets.first().and_then(|t| t.access) else {
        return;
    };
    let mode = match access {
        Access::Read => rustix::fs::Access::READ_OK,
        Access::Write => rustix::fs::Access::WRITE_OK,
        Access::Exec => rustix::fs::Access::EXEC_OK,
    };
    // Any target the file permissions allow: the refusal was not theirs.
    let allowed_by_mode = (0..targets.len().min(2))
        .filter(|&i| targets[i].access.is_some())
        .all(|i| vias[i].permits(mode, entry).unwrap_or(false));
    if !allowed_by_mode {
        return;
    }
    let mut first = [MaybeUninit::<u8>::uninit(); 512];
    let mut second = [MaybeUninit::<u8>::uninit(); 512];
    let name = |v: &Via, buf: &mut [MaybeUninit<u8>]| -> Option<usize> { v.name_into(buf) };
    let Some(n) = name(&vias[0], &mut first) else {
        return;
    };
    let dest_n = (targets.len() > 1)
        .then(|| name(&vias[1], &mut second))
        .flatten();
    // SAFETY: `name_into` wrote the first n bytes of each buffer.
    let path = unsafe { std::slice::from_raw_parts(first.as_ptr().cast::<u8>(), n) };
    // SAFETY: as above.
    let dest =
        dest_n.map(|m| unsafe { std::slice::from_raw_parts(second.as_ptr().cast::<u8>(), m) });
    g.sink.emit(&Event {
        event: "blocked",
        call,
        access,
        path,
        dest,
        rule: Rule::Landlock,
        errno: e,
        hint: None,
    });
}

/// Internal "denied but audited" result: the call goes ahead (unless
/// another of its paths is denied for good, [`strongest`]).
const AUDITED: c_int = 0;

/// The verdict on one path of a call, for the verdict on all of them:
/// `Err(errno)` for an enforced denial (or a failure), which refuses the
/// call; `Ok(true)` for an audited one, which does not.
#[inline]
fn strongest(r: Result<(), c_int>) -> Result<bool, c_int> {
    match r {
        Ok(()) => Ok(false),
        Err(AUDITED) => Ok(true),
        Err(e) => Err(e),
    }
}

impl Guard {
    /// Whether an access of this kind can be denied at all; when not, the
    /// call goes straight through (metadata reads, by default).
    #[inline]
    fn confines(&self, access: Option<Access>) -> bool {
        match access {
            None => self.policy.settings().hide_outside,
            Some(Access::Write) => true,
            Some(Access::Read | Access::Exec) => self.policy.confines_reads(),
        }
    }

    fn check(
        &self,
        call: &'static str,
        targets: &[Target],
        vias: &mut [Via; 2],
    ) -> Result<(), c_int> {
        #[cfg(feature = "fault-injection")]
        crate::fault::inject(targets);
        let [v0, v1] = vias;
        if targets.len() == 1 {
            return self.check_one(call, &targets[0], v0);
        }
        self.check_two(call, targets, v0, v1)
    }

    /// A call of two paths: both are named in the trace line, so both
    /// buffers are held. Every path is decided before the call goes ahead:
    /// in audit mode the first path's audited denial does not stop the
    /// check of the second, whose enforced denial (`rule=log`) wins. One
    /// audited call writes one `audit` line, as in enforce mode.
    #[inline(never)]
    fn check_two(
        &self,
        call: &'static str,
        targets: &[Target],
        v0: &mut Via,
        v1: &mut Via,
    ) -> Result<(), c_int> {
        let mut audited = false;
        let mut first = PathBuf::new();
        let r0 = self.resolve(call, &targets[0], &mut first, v0, audited);
        audited |= strongest(r0)?;
        let mut second = PathBuf::new();
        let r1 = self.resolve(call, &targets[1], &mut second, v1, audited);
        audited |= strongest(r1)?;
        // An unresolved path (audited) is named as the caller passed it.
        let raw = |i: usize| targets[i].path.get().map_or(&b""[..], CStr::to_bytes);
        let a = if r0.is_ok() { first.as_bytes() } else { raw(0) };
        let b = if r1.is_ok() {
            second.as_bytes()
        } else {
            raw(1)
        };
        if r0.is_ok() {
            audited |= strongest(self.decide(call, &targets[0], a, a, Some(b), audited))?;
        }
        if r1.is_ok() {
            audited |= strongest(self.decide(call, &targets[1], b, a, Some(b), audited))?;
        }
        if audited {
            Err(AUDITED)
        } else {
            Ok(())
        }
    }

    /// A call of one path: one path buffer on the stack, not two.
    #[inline(never)]
    fn check_one(&self, call: &'static str, t: &Target, via: &mut Via) -> Result<(), c_int> {
        let mut path = PathBuf::new();
        self.resolve(call, t, &mut path, via, false)?;
        let p = path.as_bytes();
        if t.handle && self.named_only(p, via) {
            return Ok(());
        }
        self.decide(call, t, p, p, None, false)
    }

    /// A plain read-only open the policy refuses only because `path` lies
    /// above the root or the private TMPDIR ([`Policy::names_only`]): the
    /// row opens it `O_PATH` ([`Via::set_named_only`]), no trace line (no
    /// access was refused; a read or a listing through the descriptor
    /// fails in the kernel, `EBADF`). Only for the object itself, held by
    /// the check. In audit mode the open goes ahead as asked, unrecorded:
    /// enforcing would not refuse it either.
    #[inline]
    fn named_only(&self, path: &[u8], via: &mut Via) -> bool {
        if !cfg!(target_os = "linux")
            || via.reach() != resolve::Reach::Object
            || !self.policy.names_only(path)
        {
            return false;
        }
        if !self.policy.audit() {
            via.set_named_only();
        }
        true
    }

    /// `audited`: an `audit` line was written for this call already; a
    /// second audited denial is not written again (an enforced one is).
    fn resolve(
        &self,
        call: &'static str,
        t: &Target,
        out: &mut PathBuf,
        via: &mut Via,
        audited: bool,
    ) -> Result<(), c_int> {
        // Out of fds: room is made for the guard's own O_PATH fd (the call
        // itself may need none), by the spares, else by the soft limit
        // raised for the resolution alone. Without room the call fails as
        // one that needs an fd would: refused, but not a policy decision.
        let mut tries = 0;
        let mut _raised = None;
        loop {
            let r = resolve::locate(t.dirfd, t.path.get(), t.follow, out, via);
            if let Err(Unresolved::Failed(e @ (Errno::MFILE | Errno::NFILE))) = r {
                via.reset();
                tries += 1;
                if tries == 1 && crate::reserve::release() {
                    continue;
                }
                if tries <= 2 && _raised.is_none() {
                    _raised = crate::reserve::Raised::new();
                    if _raised.is_some() {
                        continue;
                    }
                }
                return Err(e.raw_os_error());
            }
            return self.resolved(call, t, r, via, audited);
        }
    }

    fn resolved(
        &self,
        call: &'static str,
        t: &Target,
        r: Result<(), Unresolved>,
        via: &mut Via,
        audited: bool,
    ) -> Result<(), c_int> {
        match r {
            Ok(()) => Ok(()),
            Err(Unresolved::Kernel(e)) => Err(e.raw_os_error()),
            Err(Unresolved::Failed(_)) => {
                via.reset();
                // Shown only to name what failed.
                let raw = t.path.get().map_or(&b""[..], CStr::to_bytes);
                self.deny_once(
                    audited,
                    call,
                    t.access.unwrap_or(Access::Read),
                    raw,
                    raw,
                    None,
                    Rule::Unresolved,
                )
            }
        }
    }

    /// Applies the policy to the resolved target `mine`. `path`/`dest` are
    /// the call's first and second resolved paths, for the trace line;
    /// `audited` as for [`Guard::resolve`].
    fn decide(
        &self,
        call: &'static str,
        t: &Target,
        mine: &[u8],
        path: &[u8],
        dest: Option<&[u8]>,
        audited: bool,
    ) -> Result<(), c_int> {
        let Some(access) = t.access else {
            // Metadata: confined only to hide what lies outside.
            let d = self.policy.decide(Access::Read, mine);
            return if d.allowed {
                Ok(())
            } else {
                self.deny_once(audited, call, Access::Read, mine, path, dest, d.rule)
            };
        };
        if t.moves {
            if let Some(rule) = self.policy.protected(mine) {
                return self.deny_once(audited, call, access, mine, path, dest, rule);
            }
        }
        let d = self.policy.decide(access, mine);
        if d.allowed {
            // Another process's memory or environment, by its /proc file:
            // refused even where the policy lets /proc be read (a refusal
            // by the policy itself keeps its own rule).
            #[cfg(target_os = "linux")]
            if mine.starts_with(b"/proc/") {
                crate::hooks_more::process::memory_file(self, call, access, mine)?;
            }
            Ok(())
        } else if matches!(call, "mkdir" | "mkdirat")
            && !self.policy.settings().hide_outside
            && exists_nofollow(mine)
        {
            // The kernel fails it anyway, whatever the permissions (it looks
            // the name up first): its errno, no trace line. `mkdir -p
            // /abs/dir` tries every existing ancestor of an allowed dir.
            Err(libc::EEXIST)
        } else {
            self.deny_once(audited, call, access, mine, path, dest, d.rule)
        }
    }

    /// [`Guard::deny`], unless the denial is audited and the call already
    /// wrote its `audit` line (`audited`): then only the verdict.
    #[allow(clippy::too_many_arguments)]
    fn deny_once(
        &self,
        audited: bool,
        call: &'static str,
        access: Access,
        mine: &[u8],
        path: &[u8],
        dest: Option<&[u8]>,
        rule: Rule<'_>,
    ) -> Result<(), c_int> {
        if audited && self.policy.audit() && !matches!(rule, Rule::Log | Rule::LoaderEnv(_)) {
            return Err(AUDITED);
        }
        self.deny(call, access, mine, path, dest, rule)
    }

    /// Refuses a call for `rule` (trace line and record; audit lets it pass).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))] // used by Linux-only hooks
    pub(crate) fn refuse(
        &self,
        call: &'static str,
        access: Access,
        path: &[u8],
        rule: Rule<'_>,
    ) -> Result<(), c_int> {
        match self.deny(call, access, path, path, None, rule) {
            Err(AUDITED) => Ok(()),
            r => r,
        }
    }

    /// A socket `t` names (or the abstract socket `name`), decided by the
    /// socket rules.
    #[inline(never)]
    fn check_socket(
        &self,
        call: &'static str,
        t: &Target,
        name: Option<&[u8]>,
        via: &mut Via,
    ) -> Result<(), c_int> {
        let mut path = PathBuf::new();
        let name = match name {
            Some(n) => n,
            None => {
                self.resolve(call, t, &mut path, via, false)?;
                path.as_bytes()
            }
        };
        let d = self.policy.decide_socket(name);
        if d.allowed {
            return Ok(());
        }
        let hint = self.policy.socket_hint(name, d.rule);
        self.deny_hinted(call, Access::Write, name, None, d.rule, hint)
    }

    /// [`Guard::refuse`] for a call whose trace line names a second object
    /// (`dest=`).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))] // used by Linux-only hooks
    pub(crate) fn refuse_dest(
        &self,
        call: &'static str,
        access: Access,
        path: &[u8],
        dest: Option<&[u8]>,
        rule: Rule<'_>,
    ) -> Result<(), c_int> {
        match self.deny(call, access, path, path, dest, rule) {
            Err(AUDITED) => Ok(()),
            r => r,
        }
    }

    /// `mine` is the path this decision was about (the hint names it).
    fn deny(
        &self,
        call: &'static str,
        access: Access,
        mine: &[u8],
        path: &[u8],
        dest: Option<&[u8]>,
        rule: Rule<'_>,
    ) -> Result<(), c_int> {
        let hint = self.policy.hint(access, mine, rule);
        self.deny_hinted(call, access, path, dest, rule, hint)
    }

    /// Refuses a call: trace line (with `hint`), report; audit lets it pass.
    fn deny_hinted(
        &self,
        call: &'static str,
        access: Access,
        path: &[u8],
        dest: Option<&[u8]>,
        rule: Rule<'_>,
        hint: Option<Hint<'_>>,
    ) -> Result<(), c_int> {
        // The trace log stays protected in audit mode: the record of what
        // would have been blocked is the point of an audit.
        let audit = self.policy.audit() && !matches!(rule, Rule::Log | Rule::LoaderEnv(_));
        let hidden = self.policy.settings().hide_outside
            && access != Access::Write
            && matches!(rule, Rule::Root | Rule::NotAllowed);
        let errno = match (audit, hidden) {
            (true, _) => 0,
            (false, true) => libc::ENOENT,
            (false, false) => self.policy.errno(),
        };
        self.sink.emit(&Event {
            event: if audit { "audit" } else { "blocked" },
            call,
            access,
            path,
            dest,
            rule,
            errno,
            hint,
        });
        Err(if audit { AUDITED } else { errno })
    }
}

/// Whether a resolved path names an existing object (not following a final
/// symlink). A [`RawPath`]: no allocation, little stack, and that only
/// when called.
#[inline(never)]
fn exists_nofollow(path: &[u8]) -> bool {
    let mut buf = RawPath::new();
    if path.contains(&0) || !buf.push(path) {
        return false;
    }
    rustix::fs::statat(
        rustix::fs::CWD,
        buf.as_cstr(),
        rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
    )
    .is_ok()
}

/// The open fast path: when the path's lexical form is allowed, open it with
/// `RESOLVE_NO_SYMLINKS` in one syscall, so the object opened is the object
/// checked. `None`: not handled here (not ready, denied, a symlink on the
/// way): the hook takes the general path, which resolves through the kernel
/// and traces denials.
pub fn open_fast(dirfd: c_int, path: CArg<'_>, flags: c_int, mode: libc::mode_t) -> Option<c_int> {
    let g = get()?;
    if creat_directory_refused(flags) {
        set_errno(libc::EINVAL);
        return Some(-1);
    }
    if !g.fast_open || crate::sys::strict_open_missing() {
        return None;
    }
    let access = crate::classify::open_access(flags)?;
    if path.is_null() || (access != Access::Write && !g.policy.confines_reads()) {
        return None;
    }
    let saved = errno();
    // The spares back first, if a check gave them up: the open must not
    // get a slot of theirs, which it would not get bare (a full table).
    crate::reserve::take();
    let r = catch_unwind(AssertUnwindSafe(|| {
        let path = path.get()?;
        // Another process's memory or environment by its /proc file: the
        // full check ([`Guard::decide`]), whose resolved path names it.
        #[cfg(target_os = "linux")]
        if path.to_bytes().ends_with(b"mem") || path.to_bytes().ends_with(b"environ") {
            return None;
        }
        // The usual path needs no folding: decided on the joined path
        // itself, with one buffer on the stack.
        let mut raw = RawPath::new();
        match resolve::join_cwd(dirfd, path, &mut raw) {
            Some(Joined::Plain(n)) => {
                if !g.policy.decide(access, raw.prefix(n)).allowed {
                    return None;
                }
            }
            joined => lexical_allowed(g, access, dirfd, path, &mut raw, joined.is_some())?,
        }
        resolve::open_exact(dirfd, path, &mut raw, flags, mode)
    }))
    .ok()
    .flatten();
    match r {
        None => {
            set_errno(saved);
            None
        }
        Some(Ok(fd)) => {
            set_errno(saved);
            Some(std::os::fd::IntoRawFd::into_raw_fd(fd))
        }
        // A refusal the kernel's ruleset may have made: the general path
        // opens again, and traces it (`release_call`).
        Some(Err(e))
            if g.landlock && matches!(e, rustix::io::Errno::ACCESS | rustix::io::Errno::PERM) =>
        {
            set_errno(saved);
            None
        }
        Some(Err(e)) => {
            set_errno(e.raw_os_error());
            Some(-1)
        }
    }
}

/// Whether `access` to `path`'s lexical form is allowed, for [`open_fast`]:
/// `joined`, its join to the cwd is in `raw` already. Out of line, so the
/// second buffer is on the stack only here.
#[inline(never)]
fn lexical_allowed(
    g: &Guard,
    access: Access,
    dirfd: c_int,
    path: &CStr,
    raw: &mut RawPath,
    joined: bool,
) -> Option<()> {
    let mut out = PathBuf::new();
    if joined {
        resolve::fold(raw, &mut out)?;
    } else {
        resolve::lexical(dirfd, path, &mut out, raw)?;
    }
    g.policy
        .decide(access, out.as_bytes())
        .allowed
        .then_some(())
}

/// `O_CREAT | O_DIRECTORY` is EINVAL since Linux 6.4, before the path is
/// looked at; older kernels make a file. Asked of the kernel once, with an
/// fd that cannot be valid, so nothing is created.
fn creat_directory_refused(flags: c_int) -> bool {
    use std::sync::atomic::AtomicI8;
    static REFUSED: AtomicI8 = AtomicI8::new(-1);
    if flags & libc::O_CREAT == 0
        || crate::classify::tmpfile(flags)
        || flags & libc::O_DIRECTORY == 0
    {
        return false;
    }
    let mut known = REFUSED.load(Ordering::Relaxed);
    if known < 0 {
        let _kept = crate::errno::Kept::new();
        // SAFETY: a closed fd number and a static empty path; rustix's raw
        // openat, not the hooked one.
        let bad = unsafe { std::os::fd::BorrowedFd::borrow_raw(i32::MAX) };
        let r = rustix::fs::openat(
            bad,
            c"",
            rustix::fs::OFlags::CREATE | rustix::fs::OFlags::DIRECTORY,
            rustix::fs::Mode::empty(),
        );
        known = i8::from(r.err() == Some(rustix::io::Errno::INVAL));
        REFUSED.store(known, Ordering::Relaxed);
    }
    known == 1
}

/// `__open_2` and friends abort on a mode-needing open; leave that to them.
pub fn open_fast_fortified(dirfd: c_int, path: CArg<'_>, flags: c_int) -> Option<c_int> {
    if flags & libc::O_CREAT != 0 || crate::classify::tmpfile(flags) {
        return None;
    }
    open_fast(dirfd, path, flags, 0)
}
