//! The real functions, every one found at once while the guard loads: the
//! next definition of each name after this library, as `dlsym(RTLD_NEXT)`
//! would find it, read from the loaded objects' own ELF hash tables.
//!
//! Each `real!` site (src/real.rs) files a [`Slot`] (the symbol's name and
//! the cell its address goes to) in the `fsguard_real` link section, and so
//! does each of shim/shim.c's; [`resolve_all`] fills every slot in one pass
//! before the guard is published, so no hook looks a symbol up: a lookup
//! inside a hook would run the loader's code (its lock, dlerror's
//! allocation) in a signal handler or a `vfork` child. One `dlsym` per name
//! would cost ~1,400 instructions each, 190 of them at every process start;
//! a probe of a GNU hash table costs a tenth of that.
//!
//! The lookup follows glibc's for `dlsym(RTLD_NEXT, name)`: the objects
//! after this library in the link map (the loader's search order for the
//! objects loaded at start; the vDSO is not searched), the first that
//! defines `name` (a function or object, not undefined, not an absolute
//! zero), an unversioned definition at once, else its one non-hidden
//! versioned one (the default version). An IFUNC is handed to `dlsym`,
//! which runs its resolver, and so is everything when the link map cannot
//! be read (more objects than [`MAX_OBJS`], no GNU hash table).

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::atomic::{AtomicPtr, AtomicU8, Ordering};

/// One cell a real function's address goes to, and the symbol's name.
/// `#[repr(C)]`: shim/shim.c files slots of its own (`struct real_slot`).
#[repr(C)]
pub struct Slot {
    /// The symbol's name, a C string.
    pub name: *const c_char,
    /// Where its address goes (null: no definition after this library).
    pub ptr: *const AtomicPtr<c_void>,
    /// The name's [`gnu_hash`], computed when the library is built (0:
    /// to be computed, as shim.c's slots leave it).
    pub hash: u32,
}

// SAFETY: both pointers are to statics: a string literal and an atomic.
unsafe impl Sync for Slot {}

extern "C" {
    // Defined by the linker around the `fsguard_real` section.
    static __start_fsguard_real: Slot;
    static __stop_fsguard_real: Slot;
}

/// Every slot of the library (Rust's and the shim's).
pub fn slots() -> &'static [Slot] {
    // SAFETY: the linker's bounds of one section that holds only `Slot`s
    // (each filed as a `#[used]` static of that type, or shim.c's struct of
    // the same layout), aligned alike.
    unsafe {
        let start = std::ptr::addr_of!(__start_fsguard_real);
        let stop = std::ptr::addr_of!(__stop_fsguard_real);
        let n = (stop as usize - start as usize) / std::mem::size_of::<Slot>();
        std::slice::from_raw_parts(start, n)
    }
}

const UNRESOLVED: u8 = 0;
const RESOLVING: u8 = 1;
const RESOLVED: u8 = 2;
static STATE: AtomicU8 = AtomicU8::new(UNRESOLVED);

/// Whether [`resolve_all`] has filled the slots.
#[inline]
pub fn resolved() -> bool {
    STATE.load(Ordering::Acquire) == RESOLVED
}

/// Fills every slot, once per process (a forked child inherits them).
/// Another thread arriving meanwhile waits for the first one's pass.
pub fn resolve_all() {
    match STATE.compare_exchange(UNRESOLVED, RESOLVING, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => {}
        Err(_) => {
            while STATE.load(Ordering::Acquire) != RESOLVED {
                std::hint::spin_loop();
            }
            return;
        }
    }
    let mut objs = Objs::default();
    let ok = objs.read();
    let slots = slots();
    // Sites of one name (179 names, 241 sites) share its lookup: a table of
    // slot indices + 1 by hash, on the stack.
    let mut seen = [0u16; SEEN];
    for (i, slot) in slots.iter().enumerate() {
        // SAFETY: a slot's name is a C string literal.
        let name = unsafe { CStr::from_ptr(slot.name) };
        let h = if slot.hash != 0 {
            slot.hash
        } else {
            gnu_hash(name.to_bytes())
        };
        if let Some(p) = earlier(&mut seen, slots, i, h, name) {
            // SAFETY: a slot's cell is a static atomic.
            unsafe { &*slot.ptr }.store(p, Ordering::Release);
            continue;
        }
        let p = if ok {
            match objs.next_hashed(name.to_bytes(), h).0 {
                Found::Addr(p) => p,
                Found::None => std::ptr::null_mut(),
                Found::Ask => super::next_symbol(name),
            }
        } else {
            super::next_symbol(name)
        };
        // SAFETY: a slot's cell is a static atomic.
        unsafe { &*slot.ptr }.store(p, Ordering::Release);
    }
    STATE.store(RESOLVED, Ordering::Release);
}

/// Slots [`earlier`] remembers (more sites than this are looked up each).
const SEEN: usize = 1024;

/// The address an earlier slot of the same name got, or `None` after
/// filing slot `i` in `seen` (an open-addressed table of slot index + 1).
fn earlier(
    seen: &mut [u16; SEEN],
    slots: &[Slot],
    i: usize,
    h: u32,
    name: &CStr,
) -> Option<*mut c_void> {
    if i >= usize::from(u16::MAX) || i >= SEEN / 2 {
        return None;
    }
    let mut s = h as usize % SEEN;
    loop {
        let j = usize::from(seen[s]);
        if j == 0 {
            seen[s] = i as u16 + 1;
            return None;
        }
        let other = &slots[j - 1];
        // SAFETY: a slot's name is a C string literal.
        if unsafe { CStr::from_ptr(other.name) } == name {
            // SAFETY: a slot's cell is a static atomic.
            return Some(unsafe { &*other.ptr }.load(Ordering::Relaxed));
        }
        s = (s + 1) % SEEN;
    }
}

/// True when the next definition of each of `names` is libc's own (no other
/// preloaded library sits between this one and libc for them).
pub fn next_is_libc(names: &[&CStr]) -> bool {
    let mut objs = Objs::default();
    objs.read()
        && names
            .iter()
            .all(|n| matches!(objs.next_in(n), (Found::Addr(_), true)))
}

/// This library's file name as the loader has it (the `LD_PRELOAD` entry),
/// seen by [`resolve_all`]'s pass over the link map.
static SELF_NAME: AtomicPtr<c_char> = AtomicPtr::new(std::ptr::null_mut());

/// This library's file name as the loader has it, once [`resolve_all`]
/// has run (what `dladdr` of one of its functions would answer, without
/// `dladdr`'s scan of every object).
pub fn own_name() -> Option<&'static CStr> {
    let p = SELF_NAME.load(Ordering::Acquire);
    // SAFETY: the loader's name of a loaded object, a C string that lives
    // as long as the object (this library is never unloaded).
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) })
}

/// [`resolve_all`] for shim/shim.c, whose entry points find a cell empty
/// only before the guard's load (or when there is no definition).
#[no_mangle]
pub extern "C" fn fsguard_resolve_real() {
    if !resolved() {
        resolve_all();
    }
}

/// Objects after this library that the lookup reads (a process has a few;
/// with more, every name is handed to `dlsym`).
pub const MAX_OBJS: usize = 32;

/// One loaded object's dynamic symbol table.
#[derive(Clone, Copy)]
struct Obj {
    /// The C library (`libc.so.6`).
    libc: bool,
    base: usize,
    symtab: *const libc::Elf64_Sym,
    strtab: *const u8,
    gnu_hash: *const u32,
    versym: *const u16,
}

#[derive(Default)]
struct Objs {
    list: [Option<Obj>; MAX_OBJS],
    n: usize,
    seen_self: bool,
    overflow: bool,
    broken: bool,
}

enum Found {
    Addr(*mut c_void),
    None,
    /// An IFUNC: `dlsym` runs its resolver.
    Ask,
}

#[repr(C)]
struct Dyn {
    tag: i64,
    val: u64,
}

const DT_NULL: i64 = 0;
const DT_STRTAB: i64 = 5;
const DT_SYMTAB: i64 = 6;
const DT_GNU_HASH: i64 = 0x6fff_fef5;
const DT_VERSYM: i64 = 0x6fff_fff0;
const STT_TLS: u8 = 6;
const STT_GNU_IFUNC: u8 = 10;
/// NOTYPE, OBJECT, FUNC, COMMON, TLS, IFUNC: the types glibc's lookup takes.
const ALLOWED_STT: u32 = 1 | 1 << 1 | 1 << 2 | 1 << 5 | 1 << 6 | 1 << 10;

/// An address inside this library.
fn marker() {}

impl Objs {
    /// Reads the link map: false when it cannot be used.
    fn read(&mut self) -> bool {
        unsafe extern "C" fn each(
            info: *mut libc::dl_phdr_info,
            _size: usize,
            data: *mut c_void,
        ) -> c_int {
            // SAFETY: `data` is the `Objs` passed below; `info` is the
            // loader's, valid during the callback.
            let (objs, info) = unsafe { (&mut *data.cast::<Objs>(), &*info) };
            objs.add(info);
            0
        }
        // SAFETY: a callback that only reads the loader's records.
        unsafe { libc::dl_iterate_phdr(Some(each), (self as *mut Objs).cast()) };
        self.seen_self && !self.overflow && !self.broken
    }

    fn add(&mut self, info: &libc::dl_phdr_info) {
        let (mut lo, mut hi) = (usize::MAX, 0usize);
        let mut dynamic = std::ptr::null::<Dyn>();
        let base = info.dlpi_addr as usize;
        for i in 0..usize::from(info.dlpi_phnum) {
            // SAFETY: dlpi_phdr holds dlpi_phnum headers.
            let ph = unsafe { &*info.dlpi_phdr.add(i) };
            if ph.p_type == libc::PT_LOAD {
                let s = base.wrapping_add(ph.p_vaddr as usize);
                lo = lo.min(s);
                hi = hi.max(s.wrapping_add(ph.p_memsz as usize));
            } else if ph.p_type == libc::PT_DYNAMIC {
                dynamic = base.wrapping_add(ph.p_vaddr as usize) as *const Dyn;
            }
        }
        let within = |a: usize| a >= lo && a < hi;
        if !self.seen_self {
            self.seen_self = within(marker as *const () as usize);
            if self.seen_self {
                SELF_NAME.store(info.dlpi_name.cast_mut(), Ordering::Release);
            }
            return;
        }
        // SAFETY: getauxval has no preconditions.
        let vdso = unsafe { libc::getauxval(libc::AT_SYSINFO_EHDR) } as usize;
        if vdso != 0 && within(vdso) {
            return;
        }
        if dynamic.is_null() {
            return;
        }
        // SAFETY: the loader's name of the object, a C string.
        let path = unsafe { CStr::from_ptr(info.dlpi_name) }.to_bytes();
        let file = path.rsplit(|&b| b == b'/').next().unwrap_or(path);
        let mut o = Obj {
            libc: file == b"libc.so.6",
            base,
            symtab: std::ptr::null(),
            strtab: std::ptr::null(),
            gnu_hash: std::ptr::null(),
            versym: std::ptr::null(),
        };
        // glibc relocates these entries in place on x86-64 and aarch64; an
        // offset below the base is one it did not.
        let at = |v: u64| {
            let v = v as usize;
            if v < base {
                base + v
            } else {
                v
            }
        };
        let mut d = dynamic;
        loop {
            // SAFETY: the object's dynamic section, ended by DT_NULL.
            let e = unsafe { &*d };
            match e.tag {
                DT_NULL => break,
                DT_SYMTAB => o.symtab = at(e.val) as *const _,
                DT_STRTAB => o.strtab = at(e.val) as *const u8,
                DT_GNU_HASH => o.gnu_hash = at(e.val) as *const u32,
                DT_VERSYM => o.versym = at(e.val) as *const u16,
                _ => {}
            }
            // SAFETY: not past DT_NULL.
            d = unsafe { d.add(1) };
        }
        if o.symtab.is_null() || o.strtab.is_null() || o.gnu_hash.is_null() {
            // No GNU hash table (an old object): dlsym reads it.
            self.broken = true;
            return;
        }
        if self.n == MAX_OBJS {
            self.overflow = true;
            return;
        }
        self.list[self.n] = Some(o);
        self.n += 1;
    }

    /// The next definition of `name` after this library.
    #[cfg(test)]
    fn next(&self, name: &CStr) -> Found {
        self.next_in(name).0
    }

    /// [`Objs::next`], and whether the object that defines it is libc.
    fn next_in(&self, name: &CStr) -> (Found, bool) {
        self.next_hashed(name.to_bytes(), gnu_hash(name.to_bytes()))
    }

    /// [`Objs::next_in`] of a name whose hash is `h`.
    fn next_hashed(&self, name: &[u8], h: u32) -> (Found, bool) {
        for o in self.list[..self.n].iter().flatten() {
            // SAFETY: an object's tables, as the loader mapped them.
            match unsafe { lookup(o, name, h) } {
                Found::None => continue,
                f => return (f, o.libc),
            }
        }
        (Found::None, false)
    }
}

/// The GNU hash of a symbol name (`dl_new_hash`); a `const fn`, so that
/// each `real!` site's is computed when the library is built.
pub const fn gnu_hash(name: &[u8]) -> u32 {
    let mut h = 5381u32;
    let mut i = 0;
    while i < name.len() {
        h = h.wrapping_mul(33).wrapping_add(name[i] as u32);
        i += 1;
    }
    h
}

/// `name`'s definition in `o`, as glibc's `do_lookup_x` takes it for a
/// `dlsym` (`DL_LOOKUP_RETURN_NEWEST`, no version asked).
///
/// # Safety
/// `o` describes a loaded object's tables.
unsafe fn lookup(o: &Obj, name: &[u8], h: u32) -> Found {
    // SAFETY: offsets within the object's GNU hash table, symbol table
    // and string table, as the hash table's header gives them.
    unsafe {
        let ht = o.gnu_hash;
        let nbuckets = *ht;
        let symoffset = *ht.add(1);
        let bloom_size = *ht.add(2);
        let bloom_shift = *ht.add(3);
        if nbuckets == 0 || bloom_size == 0 {
            return Found::None;
        }
        let bloom = ht.add(4).cast::<u64>();
        let word = *bloom.add(((h / 64) % bloom_size) as usize);
        let mask = (1u64 << (h % 64)) | (1u64 << ((h >> bloom_shift) % 64));
        if word & mask != mask {
            return Found::None;
        }
        let buckets = bloom.add(bloom_size as usize).cast::<u32>();
        let chain = buckets.add(nbuckets as usize);
        let mut ix = *buckets.add((h % nbuckets) as usize);
        if ix < symoffset {
            return Found::None;
        }
        let mut versioned: Option<&libc::Elf64_Sym> = None;
        let mut num_versions = 0;
        loop {
            let ch = *chain.add((ix - symoffset) as usize);
            if (ch | 1) == (h | 1) {
                let s = &*o.symtab.add(ix as usize);
                let stt = s.st_info & 0xf;
                let candidate = (s.st_value != 0 || stt == STT_TLS)
                    && s.st_shndx != 0
                    && ALLOWED_STT & (1 << stt) != 0
                    && same_name(o.strtab.add(s.st_name as usize), name);
                if candidate {
                    let ver = if o.versym.is_null() {
                        0
                    } else {
                        *o.versym.add(ix as usize)
                    };
                    if ver & 0x7fff < 2 {
                        return found(o, s);
                    }
                    if ver & 0x8000 == 0 {
                        num_versions += 1;
                        if num_versions == 1 {
                            versioned = Some(s);
                        }
                    }
                }
            }
            if ch & 1 != 0 {
                break;
            }
            ix += 1;
        }
        match versioned {
            Some(s) if num_versions == 1 => found(o, s),
            _ => Found::None,
        }
    }
}

/// Whether the C string at `p` is `name`.
///
/// # Safety
/// `p` is a C string.
#[inline]
unsafe fn same_name(p: *const u8, name: &[u8]) -> bool {
    // SAFETY: `p` is read no further than its NUL: a byte that differs
    // (the NUL among them) ends the comparison.
    unsafe {
        for (i, &b) in name.iter().enumerate() {
            if *p.add(i) != b {
                return false;
            }
        }
        *p.add(name.len()) == 0
    }
}

fn found(o: &Obj, s: &libc::Elf64_Sym) -> Found {
    match s.st_info & 0xf {
        STT_GNU_IFUNC => Found::Ask,
        // A TLS symbol's value is no address (no real function is one).
        STT_TLS => Found::None,
        _ => Found::Addr(o.base.wrapping_add(s.st_value as usize) as *mut c_void),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lookup over every object (this test program's own included)
    /// agrees with `dlsym(RTLD_DEFAULT)` on names that are plain, versioned
    /// with an old version beside the default one, and IFUNCs.
    #[test]
    fn the_lookup_agrees_with_dlsym() {
        let mut objs = Objs {
            seen_self: true,
            ..Objs::default()
        };
        // SAFETY: as in Objs::read, from the first object on.
        unsafe extern "C" fn each(
            info: *mut libc::dl_phdr_info,
            _: usize,
            data: *mut c_void,
        ) -> c_int {
            // SAFETY: as in Objs::read.
            let (objs, info) = unsafe { (&mut *data.cast::<Objs>(), &*info) };
            objs.add(info);
            0
        }
        // SAFETY: as in Objs::read.
        unsafe { libc::dl_iterate_phdr(Some(each), (&mut objs as *mut Objs).cast()) };
        assert!(!objs.overflow && !objs.broken && objs.n >= 2);
        let mut asked = 0;
        for name in [
            c"open",
            c"openat",
            c"open64",
            c"execve",
            c"realpath",
            c"posix_spawn",
            c"stat",
            c"fopen",
            c"pthread_create",
            c"memcpy",
            c"strlen",
            c"dlsym",
            c"syscall",
            c"fsguard_no_such_symbol",
            c"environ",
            c"regexec",
            c"clock_gettime",
        ] {
            // SAFETY: a C string.
            let want = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
            match objs.next(name) {
                Found::Addr(p) => assert_eq!(p, want, "{name:?}"),
                Found::None => assert!(want.is_null(), "{name:?}"),
                Found::Ask => asked += 1,
            }
        }
        assert!(asked < 17);
    }
}
