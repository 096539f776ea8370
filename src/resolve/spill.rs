//! [`Spill`]: bytes on the stack while they fit, in an anonymous mapping
//! once they do not, and the pool of mappings given back for reuse.

use std::mem::MaybeUninit;

use rustix::io::Errno;

/// Bytes on the stack while they fit in `N`, in an anonymous mapping once
/// they do not. A hook may run in a signal handler on an alternate stack of
/// 8 KiB (`SIGSTKSZ`), of which the kernel's signal frame takes up to half:
/// a buffer of `PATH_MAX` there overflows. `mmap` is a system call, safe in
/// a signal handler and a forked child where `malloc` is not. Left
/// uninitialized, as zeroing would cost more than the work.
pub(crate) struct Spill<const N: usize> {
    inline: [MaybeUninit<u8>; N],
    /// The mapping (null: the bytes are `inline`).
    map: *mut MaybeUninit<u8>,
    map_len: usize,
}

impl<const N: usize> Spill<N> {
    /// An empty buffer on the stack.
    #[inline(always)]
    pub(crate) fn new() -> Spill<N> {
        Spill {
            // SAFETY: an array of MaybeUninit needs no initialization.
            inline: unsafe { MaybeUninit::uninit().assume_init() },
            map: std::ptr::null_mut(),
            map_len: 0,
        }
    }

    /// How many bytes fit now.
    #[inline]
    pub(crate) fn capacity(&self) -> usize {
        if self.map.is_null() {
            N
        } else {
            self.map_len
        }
    }

    /// The whole buffer.
    #[inline]
    pub(crate) fn buf(&mut self) -> &mut [MaybeUninit<u8>] {
        if self.map.is_null() {
            &mut self.inline
        } else {
            // SAFETY: a live mapping of `map_len` bytes, owned by self.
            unsafe { std::slice::from_raw_parts_mut(self.map, self.map_len) }
        }
    }

    /// Where the bytes start.
    #[inline]
    pub(crate) fn as_ptr(&self) -> *const u8 {
        if self.map.is_null() {
            self.inline.as_ptr().cast()
        } else {
            self.map.cast_const().cast()
        }
    }

    /// The first `len` bytes.
    ///
    /// # Safety
    /// They must have been written.
    #[inline]
    pub(crate) unsafe fn bytes(&self, len: usize) -> &[u8] {
        let p: *const MaybeUninit<u8> = if self.map.is_null() {
            self.inline.as_ptr()
        } else {
            self.map
        };
        debug_assert!(len <= self.capacity());
        // SAFETY: the caller's guarantee; len is within the buffer.
        unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) }
    }

    /// Makes room for `need` bytes, keeping the first `keep`.
    pub(crate) fn reserve(&mut self, need: usize, keep: usize) -> Result<(), Errno> {
        if need <= self.capacity() {
            return Ok(());
        }
        let len = need.next_multiple_of(SPARE_LEN);
        let spare = if len == SPARE_LEN {
            take_spare()
        } else {
            std::ptr::null_mut()
        };
        let map = if spare.is_null() {
            // SAFETY: a fresh private anonymous mapping; nothing else
            // refers to it.
            unsafe {
                rustix::mm::mmap_anonymous(
                    std::ptr::null_mut(),
                    len,
                    rustix::mm::ProtFlags::READ | rustix::mm::ProtFlags::WRITE,
                    rustix::mm::MapFlags::PRIVATE,
                )
            }?
            .cast::<MaybeUninit<u8>>()
        } else {
            spare.cast::<MaybeUninit<u8>>()
        };
        let keep = keep.min(self.capacity());
        let old: *const MaybeUninit<u8> = self.buf().as_ptr();
        // SAFETY: distinct buffers of at least `keep` bytes each.
        unsafe { std::ptr::copy_nonoverlapping(old, map, keep) };
        self.unmap();
        self.map = map;
        self.map_len = len;
        Ok(())
    }

    fn unmap(&mut self) {
        if self.map.is_null() {
            return;
        }
        if self.map_len != SPARE_LEN || !give_spare(self.map.cast()) {
            // SAFETY: our own mapping, no longer referred to.
            let _ = unsafe { rustix::mm::munmap(self.map.cast(), self.map_len) };
        }
        self.map = std::ptr::null_mut();
    }
}

/// The size of a [`Spill`]'s mapping: room for any buffer of the library's
/// (a trace line of 12 KiB is the largest).
const SPARE_LEN: usize = 16 * 1024;

/// Mappings given back, for the next [`Spill`] to take: a fresh mapping and
/// its unmapping (and the page faults in between) cost more than the work
/// they serve. Lock-free (a slot is taken or filled by one atomic
/// operation, never waited for), so a signal handler or a forked child
/// cannot find it held; when all are taken, a mapping is made.
static SPARES: [std::sync::atomic::AtomicPtr<u8>; 8] =
    [const { std::sync::atomic::AtomicPtr::new(std::ptr::null_mut()) }; 8];

fn take_spare() -> *mut u8 {
    use std::sync::atomic::Ordering;
    for slot in &SPARES {
        if !slot.load(Ordering::Relaxed).is_null() {
            let p = slot.swap(std::ptr::null_mut(), Ordering::Acquire);
            if !p.is_null() {
                return p;
            }
        }
    }
    std::ptr::null_mut()
}

/// Keeps `p` (a mapping of SPARE_LEN bytes) for later; false when every
/// slot is full.
fn give_spare(p: *mut u8) -> bool {
    use std::sync::atomic::Ordering;
    SPARES.iter().any(|slot| {
        slot.compare_exchange(
            std::ptr::null_mut(),
            p,
            Ordering::Release,
            Ordering::Relaxed,
        )
        .is_ok()
    })
}

impl<const N: usize> Drop for Spill<N> {
    fn drop(&mut self) {
        self.unmap();
    }
}

/// Copies `src` into uninitialized bytes of the same length (one memcpy).
#[inline]
pub(super) fn copy_into(dst: &mut [MaybeUninit<u8>], src: &[u8]) {
    assert_eq!(dst.len(), src.len());
    // SAFETY: same lengths, distinct buffers; u8 and MaybeUninit<u8> share
    // a layout.
    unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst.as_mut_ptr().cast::<u8>(), src.len()) }
}
