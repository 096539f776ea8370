//! The library's own heap: glibc's allocator called by its own names
//! (`__libc_malloc` and kin), never through the `malloc` the program's
//! symbol search finds.
//!
//! A program may bring its own allocator (rustc and cargo link jemalloc;
//! tcmalloc, mimalloc) and hold that allocator's lock while it makes a
//! hooked call: jemalloc's first `malloc` reads
//! `/sys/kernel/mm/transparent_hugepage/enabled` under its `init_lock`. When
//! that call is the process's first hooked call, it loads the guard
//! (docs/design.md, "The first hooked call"), and a load that allocated
//! through the program's `malloc` would wait for that lock forever. The
//! guard's memory is its own: nothing it allocates is freed by the program,
//! nor the other way round, so the two heaps never meet.

use std::alloc::{GlobalAlloc, Layout};

extern "C" {
    fn __libc_malloc(size: usize) -> *mut u8;
    fn __libc_calloc(n: usize, size: usize) -> *mut u8;
    fn __libc_realloc(p: *mut u8, size: usize) -> *mut u8;
    fn __libc_memalign(align: usize, size: usize) -> *mut u8;
    fn __libc_free(p: *mut u8);
}

/// What glibc's `malloc` aligns every block to (`MALLOC_ALIGNMENT`).
const MIN_ALIGN: usize = 2 * std::mem::size_of::<usize>();

/// glibc's heap, by glibc's own entry points.
pub struct LibcHeap;

fn plain(layout: Layout) -> bool {
    layout.align() <= MIN_ALIGN && layout.align() <= layout.size()
}

// SAFETY: each method passes the caller's request to glibc's allocator,
// which returns blocks aligned to MIN_ALIGN (or to `align`, by memalign) or
// null, and frees only blocks it gave; GlobalAlloc's contract is the
// caller's.
unsafe impl GlobalAlloc for LibcHeap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if plain(layout) {
            // SAFETY: a non-zero size, as GlobalAlloc's caller guarantees.
            unsafe { __libc_malloc(layout.size()) }
        } else {
            // SAFETY: a power-of-two alignment (Layout's invariant).
            unsafe { __libc_memalign(layout.align(), layout.size()) }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if plain(layout) {
            // SAFETY: as for alloc; calloc zeroes the block.
            unsafe { __libc_calloc(layout.size(), 1) }
        } else {
            // SAFETY: as for alloc.
            let p = unsafe { self.alloc(layout) };
            if !p.is_null() {
                // SAFETY: p is a fresh block of layout.size() bytes.
                unsafe { std::ptr::write_bytes(p, 0, layout.size()) };
            }
            p
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: ptr came from this allocator (GlobalAlloc's contract).
        unsafe { __libc_free(ptr) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if layout.align() <= MIN_ALIGN && layout.align() <= new_size {
            // SAFETY: ptr came from this allocator; new_size is non-zero.
            unsafe { __libc_realloc(ptr, new_size) }
        } else {
            // SAFETY: the layout's alignment with the new size is valid
            // (GlobalAlloc::realloc's contract).
            let new = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
            // SAFETY: as for alloc.
            let p = unsafe { self.alloc(new) };
            if !p.is_null() {
                // SAFETY: both blocks hold at least min(old, new) bytes and
                // do not overlap (p is fresh).
                unsafe { std::ptr::copy_nonoverlapping(ptr, p, layout.size().min(new_size)) };
                // SAFETY: ptr came from this allocator.
                unsafe { __libc_free(ptr) };
            }
            p
        }
    }
}
