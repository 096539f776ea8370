//! posix_spawn file actions.
//!
//! glibc runs the file actions in the child, after the spawn hook, through
//! internal calls no hook sees; a path checked when the action was added can
//! name something else by the time the child opens it (a symlink retargeted
//! in between). So the actions are done here, at spawn time: each open
//! action is opened in the parent through the checked open (the object
//! checked is the object opened) and the child gets a `dup2` of that fd; each
//! chdir action is opened (`O_PATH`), its fd checked like chdir(2), and the
//! child gets an `fchdir` to it, so later relative opens, and a relative
//! program path, are resolved against the directory the child will really be
//! in. The child's fd table is followed through close, dup2 and closefrom so
//! that an fchdir to an fd an earlier action made is checked against that fd.

use std::ffi::{c_char, c_int};
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};

use fsguard_policy::{Access, Rule};
use libc::{posix_spawn_file_actions_t, AT_FDCWD};
use rustix::fs::{OFlags, CWD};

use crate::guard::{self, set_errno, CArg, Target};
use crate::hooks::{CheckInfo, HookInfo};
use crate::real::real;
use crate::resolve::Follow;

/// glibc's `struct __spawn_action` (spawn_int.h): the tag, then a union
/// whose members start with an `int` at offset 8, except `open_action`
/// (fd, path, oflag, mode) and `chdir_action` (path).
#[repr(C)]
#[derive(Clone, Copy)]
struct RawAction {
    tag: c_int,
    u: RawActionUnion,
}

#[repr(C)]
#[derive(Clone, Copy)]
union RawActionUnion {
    /// close, fchdir, closefrom, tcsetpgrp: `[fd]`; dup2: `[fd, newfd]`.
    ints: [c_int; 2],
    open: RawOpen,
    chdir: *const c_char,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct RawOpen {
    fd: c_int,
    path: *const c_char,
    oflag: c_int,
    mode: libc::mode_t,
}

/// glibc's `posix_spawn_file_actions_t`.
#[repr(C)]
struct RawFileActions {
    allocated: c_int,
    used: c_int,
    actions: *const RawAction,
    pad: [c_int; 16],
}

const _: () = assert!(std::mem::size_of::<RawAction>() == 32);
const _: () = assert!(
    std::mem::size_of::<RawFileActions>() == std::mem::size_of::<posix_spawn_file_actions_t>()
);

const DO_CLOSE: c_int = 0;
const DO_DUP2: c_int = 1;
const DO_OPEN: c_int = 2;
const DO_CHDIR: c_int = 3;
const DO_FCHDIR: c_int = 4;
const DO_CLOSEFROM: c_int = 5;
const DO_TCSETPGRP: c_int = 6;

/// One action as the child will run it.
#[derive(Clone, Copy)]
enum Op {
    Close(c_int),
    Dup2(c_int, c_int),
    Fchdir(c_int),
    Closefrom(c_int),
    Tcsetpgrp(c_int),
}

/// What a child fd refers to, as the actions so far leave it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Slot {
    /// One of the fds opened here.
    Ours(c_int),
    /// The parent's fd of that number.
    Parent(c_int),
    Closed,
}

/// The file actions of one posix_spawn, done in the parent.
pub(crate) struct Actions {
    orig: *const posix_spawn_file_actions_t,
    new: Option<Box<posix_spawn_file_actions_t>>,
    /// The fds opened here for the child; closed when the spawn is over.
    fds: Vec<OwnedFd>,
    /// The directory the child's relative paths start from.
    cwd: c_int,
}

impl Drop for Actions {
    fn drop(&mut self) {
        type F = unsafe extern "C" fn(*mut posix_spawn_file_actions_t) -> c_int;
        if let (Some(new), Some(f)) = (
            self.new.as_mut(),
            real!("posix_spawn_file_actions_destroy", F),
        ) {
            // SAFETY: initialised by posix_spawn_file_actions_init in `build`.
            unsafe { f(&mut **new) };
        }
    }
}

/// The child's fd table as the actions change it.
struct Model {
    slots: Vec<(c_int, Slot)>,
    closed_from: c_int,
}

impl Model {
    fn get(&self, fd: c_int) -> Slot {
        match self.slots.iter().rev().find(|(f, _)| *f == fd) {
            Some((_, s)) => *s,
            None if fd >= self.closed_from => Slot::Closed,
            None => Slot::Parent(fd),
        }
    }

    fn set(&mut self, fd: c_int, s: Slot) {
        self.slots.retain(|(f, _)| *f != fd);
        self.slots.push((fd, s));
    }

    fn close_from(&mut self, from: c_int) {
        self.slots.retain(|(f, _)| *f < from);
        self.closed_from = self.closed_from.min(from);
    }
}

impl Actions {
    pub(super) fn as_ptr(&self) -> *const posix_spawn_file_actions_t {
        match &self.new {
            Some(b) => &**b,
            None => self.orig,
        }
    }

    /// Where the child resolves a relative program path from: its last
    /// chdir, as the actions leave it.
    #[inline]
    pub(super) fn program_dir(&self, _path: CArg<'_>) -> Result<c_int, c_int> {
        Ok(self.cwd)
    }

    fn passthrough(fa: *const posix_spawn_file_actions_t) -> Actions {
        Actions {
            orig: fa,
            new: None,
            fds: Vec::new(),
            cwd: AT_FDCWD,
        }
    }

    /// Does the actions' opens and chdirs here, checked, and builds the list
    /// the child runs instead. `Err(errno)`: posix_spawn fails with it, as it
    /// would when the child's action failed.
    ///
    /// # Safety
    /// `fa` NULL or initialised file actions, in glibc's layout.
    pub(super) unsafe fn prepare(
        call: &'static str,
        fa: *const posix_spawn_file_actions_t,
    ) -> Result<Actions, c_int> {
        if fa.is_null() || guard::get().is_none() {
            return Ok(Actions::passthrough(fa));
        }
        // SAFETY: the caller's initialised file actions, glibc's layout.
        let list: &[RawAction] = unsafe {
            let raw = &*fa.cast::<RawFileActions>();
            if raw.actions.is_null() || raw.used <= 0 {
                &[]
            } else {
                std::slice::from_raw_parts(raw.actions, raw.used as usize)
            }
        };
        if !list
            .iter()
            .any(|a| matches!(a.tag, DO_OPEN | DO_CHDIR | DO_FCHDIR))
        {
            return Ok(Actions::passthrough(fa));
        }
        let saved = guard::errno();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            // SAFETY: the actions read above.
            unsafe { Actions::run(call, fa, list) }
        }))
        .unwrap_or_else(|_| {
            // No single path: the actions name several, or none.
            let g = guard::get().ok_or(libc::EACCES)?;
            Err(g.internal_error(call, Access::Exec, b"?", None))
        });
        set_errno(saved);
        r
    }

    /// The actions of `fa` done here (see [`Actions::prepare`]).
    ///
    /// # Safety
    /// As [`Actions::prepare`]; `list` the actions of `fa`.
    unsafe fn run(
        call: &'static str,
        fa: *const posix_spawn_file_actions_t,
        list: &[RawAction],
    ) -> Result<Actions, c_int> {
        // The fds opened here go above every fd an action names, so that no
        // action of the child's closes or replaces them before their dup2.
        let mut base: c_int = 3;
        for a in list {
            // SAFETY: the member the tag selects.
            let named = unsafe {
                match a.tag {
                    DO_DUP2 => a.u.ints[0].max(a.u.ints[1]),
                    DO_OPEN => a.u.open.fd,
                    DO_CLOSE | DO_FCHDIR | DO_CLOSEFROM | DO_TCSETPGRP => a.u.ints[0],
                    DO_CHDIR => 0,
                    _ => {
                        // An action this library does not know: it cannot
                        // tell what the child would do.
                        let g = guard::get().ok_or(libc::EACCES)?;
                        g.refuse(call, Access::Exec, b"?", Rule::Unresolved)?;
                        return Ok(Actions::passthrough(fa));
                    }
                }
            };
            base = base.max(named.saturating_add(1));
        }
        let mut this = Actions::passthrough(fa);
        let mut model = Model {
            slots: Vec::new(),
            closed_from: c_int::MAX,
        };
        let mut ops = Vec::with_capacity(list.len());
        for a in list {
            // SAFETY: the member the tag selects (checked above); an open or
            // chdir action's path is a C string glibc copied, alive until
            // the actions are destroyed.
            unsafe {
                match a.tag {
                    DO_CLOSE => {
                        let fd = a.u.ints[0];
                        model.set(fd, Slot::Closed);
                        ops.push(Op::Close(fd));
                    }
                    DO_DUP2 => {
                        let [from, to] = a.u.ints;
                        let s = model.get(from);
                        let src = match s {
                            Slot::Ours(p) => p,
                            _ => from,
                        };
                        if from != to {
                            model.set(to, s);
                        }
                        ops.push(Op::Dup2(src, to));
                    }
                    DO_OPEN => {
                        let o = a.u.open;
                        let p = this.open(call, CArg::new(o.path), o.oflag, o.mode, base)?;
                        model.set(o.fd, Slot::Ours(p));
                        if o.oflag & libc::O_CLOEXEC != 0 {
                            // Closed at exec: later actions use our fd.
                            ops.push(Op::Close(o.fd));
                        } else {
                            ops.push(Op::Dup2(p, o.fd));
                        }
                    }
                    DO_CHDIR => {
                        let d = this.chdir(call, CArg::new(a.u.chdir), base)?;
                        this.cwd = d;
                        ops.push(Op::Fchdir(d));
                    }
                    DO_FCHDIR => {
                        let fd = a.u.ints[0];
                        match model.get(fd) {
                            Slot::Ours(p) => {
                                this.check_dir(call, p)?;
                                this.cwd = p;
                                ops.push(Op::Fchdir(p));
                            }
                            Slot::Parent(p) => {
                                this.check_dir(call, p)?;
                                this.cwd = p;
                                ops.push(Op::Fchdir(fd));
                            }
                            // The child fails it (EBADF), and the spawn.
                            Slot::Closed => ops.push(Op::Fchdir(fd)),
                        }
                    }
                    DO_CLOSEFROM => {
                        let from = a.u.ints[0];
                        model.close_from(from);
                        ops.push(Op::Closefrom(from));
                    }
                    _ => ops.push(Op::Tcsetpgrp(a.u.ints[0])),
                }
            }
        }
        this.build(&ops)?;
        Ok(this)
    }

    /// An open action, opened here through the checked open.
    fn open(
        &mut self,
        call: &'static str,
        path: CArg<'_>,
        oflag: c_int,
        mode: libc::mode_t,
        base: c_int,
    ) -> Result<c_int, c_int> {
        let _ = call;
        let (cwd, flags) = (self.cwd, oflag | libc::O_CLOEXEC);
        // SAFETY: the hook's contract holds: a C string glibc copied.
        let fd = unsafe { fsguard_spawn_openat(cwd, path.as_ptr(), flags, mode) };
        if fd < 0 {
            return Err(guard::errno());
        }
        // SAFETY: the fd just opened, ours.
        let fd = unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) };
        self.keep(fd, base)
    }

    /// A chdir action: the directory opened (`O_PATH`), then checked as the
    /// object it is, like chdir(2).
    fn chdir(&mut self, call: &'static str, path: CArg<'_>, base: c_int) -> Result<c_int, c_int> {
        let Some(p) = path.get() else {
            return Err(libc::EFAULT);
        };
        let fd = if self.cwd == AT_FDCWD {
            crate::sys::open_ref(CWD, p, OFlags::DIRECTORY)
        } else {
            // SAFETY: an fd this spawn holds (or the parent's, for fchdir).
            let dir = unsafe { BorrowedFd::borrow_raw(self.cwd) };
            crate::sys::open_ref(dir, p, OFlags::DIRECTORY)
        }
        .map_err(|e| e.raw_os_error())?;
        self.check_dir(call, fd.as_raw_fd())?;
        self.keep(fd, base)
    }

    fn check_dir(&self, call: &'static str, fd: c_int) -> Result<(), c_int> {
        guard::check(
            call,
            &[Target {
                access: None,
                follow: Follow::Fd,
                dirfd: fd,
                path: CArg::NULL,
                moves: false,
                handle: false,
            }],
        )
    }

    /// Moves `fd` to the lowest free number at or above `base` and holds it
    /// until the spawn is over.
    fn keep(&mut self, fd: OwnedFd, base: c_int) -> Result<c_int, c_int> {
        let high = rustix::io::fcntl_dupfd_cloexec(&fd, base).map_err(|e| e.raw_os_error())?;
        let n = high.as_raw_fd();
        self.fds.push(high);
        Ok(n)
    }

    /// The child's list: `ops`, through glibc's own functions.
    fn build(&mut self, ops: &[Op]) -> Result<(), c_int> {
        type Init = unsafe extern "C" fn(*mut posix_spawn_file_actions_t) -> c_int;
        type One = unsafe extern "C" fn(*mut posix_spawn_file_actions_t, c_int) -> c_int;
        type Two = unsafe extern "C" fn(*mut posix_spawn_file_actions_t, c_int, c_int) -> c_int;
        let init = real!("posix_spawn_file_actions_init", Init).ok_or(libc::ENOSYS)?;
        // SAFETY: zeroed memory is a valid (if meaningless) value of this C
        // struct; init makes it an empty list.
        let mut new: Box<posix_spawn_file_actions_t> = Box::new(unsafe { std::mem::zeroed() });
        // SAFETY: as above.
        let r = unsafe { init(&mut *new) };
        if r != 0 {
            return Err(r);
        }
        self.new = Some(new);
        let new: *mut posix_spawn_file_actions_t = &mut **self.new.as_mut().unwrap();
        let ours: Vec<c_int> = self.fds.iter().map(|f| f.as_raw_fd()).collect();
        let top = ours.iter().copied().max().unwrap_or(-1);
        let addclose = real!("posix_spawn_file_actions_addclose", One).ok_or(libc::ENOSYS)?;
        let adddup2 = real!("posix_spawn_file_actions_adddup2", Two).ok_or(libc::ENOSYS)?;
        let addfchdir = real!("posix_spawn_file_actions_addfchdir_np", One);
        let addtcsetpgrp = real!("posix_spawn_file_actions_addtcsetpgrp_np", One);
        let addclosefrom = real!("posix_spawn_file_actions_addclosefrom_np", One);
        let add = |f: Option<One>, fd: c_int| -> Result<(), c_int> {
            let f = f.ok_or(libc::ENOSYS)?;
            // SAFETY: glibc's function on the list initialised above.
            match unsafe { f(new, fd) } {
                0 => Ok(()),
                e => Err(e),
            }
        };
        for op in ops {
            match *op {
                Op::Close(fd) => add(Some(addclose), fd)?,
                Op::Dup2(a, b) => {
                    // SAFETY: as above.
                    let r = unsafe { adddup2(new, a, b) };
                    if r != 0 {
                        return Err(r);
                    }
                }
                Op::Fchdir(fd) => add(addfchdir, fd)?,
                Op::Tcsetpgrp(fd) => add(addtcsetpgrp, fd)?,
                Op::Closefrom(from) if from <= top => {
                    // Keep ours (close-on-exec anyway) open for the actions
                    // after this one.
                    for fd in (from..=top).filter(|fd| !ours.contains(fd)) {
                        add(Some(addclose), fd)?;
                    }
                    add(addclosefrom, top + 1)?;
                }
                Op::Closefrom(from) => add(addclosefrom, from)?,
            }
        }
        Ok(())
    }
}

type OpenatFn = unsafe extern "C" fn(c_int, *const c_char, c_int, ...) -> c_int;

hooks! {
    table SPAWN_OPEN;
    /// An open action of posix_spawn, opened in the parent at spawn time
    /// (not exported under a libc name; not listed in docs/hooks.md).
    "openat" as "posix_spawn"
    fn fsguard_spawn_openat(dirfd: c_int, path: *const c_char, flags: c_int, mode: libc::mode_t) -> c_int,
        real OpenatFn = (dirfd, path, flags, mode as libc::c_uint),
        fast crate::guard::open_fast(dirfd, path, flags, mode),
        act |t| crate::hooks::open_via(&t[0], flags, mode),
        fail -1,
        check [crate::hooks::open_access(flags), crate::hooks::open_follow(flags), dirfd, path, false];
}

/// posix_spawn's file actions, as checked at spawn time. Kept by hand: no
/// row is a hooked call (glibc's `posix_spawn_file_actions_add*` are left
/// alone) but a check made inside `posix_spawn` or `posix_spawnp`. The
/// chdir checks use the spawning call's trace name, which a `check fn`
/// (one fixed name) cannot give; the open action's check is the
/// [`SPAWN_OPEN`] row's, which the reference does not list under `openat`.
pub static SPAWN_TABLE: &[HookInfo] = &[
    HookInfo {
        symbol: "posix_spawn_file_actions_addopen",
        call: "posix_spawn",
        checks: &[CheckInfo {
            access: "open_access(oflag)",
            follow: "open_follow(oflag)",
            dirfd: "the child's cwd at that action",
            path: "path (opened here at spawn; the child gets a dup2)",
        }],
    },
    HookInfo {
        symbol: "posix_spawn_file_actions_addchdir_np",
        call: "posix_spawn",
        checks: &[CheckInfo {
            access: "META",
            follow: "Follow::Yes",
            dirfd: "the child's cwd at that action",
            path: "path (opened here at spawn; the child gets an fchdir)",
        }],
    },
    HookInfo {
        symbol: "posix_spawn_file_actions_addfchdir_np",
        call: "posix_spawn",
        checks: &[CheckInfo {
            access: "META",
            follow: "Follow::Fd",
            dirfd: "fd (as the earlier actions leave it)",
            path: "NULL",
        }],
    },
];
