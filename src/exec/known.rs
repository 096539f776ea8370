//! The posix_spawn file-action lists this process built (macOS, where the
//! list is opaque: the hooks of `darwin_actions.rs` record what they saw,
//! each list's address and a summary of its actions so far. Plain Rust, so
//! it is tested everywhere.

use std::ffi::c_int;
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};

use super::chain::{chunks, next_or_new, Chunk};

/// A chdir or fchdir action was added.
pub(super) const MOVED: u64 = 1 << 63;
/// An action writes an fd at or above [`FD_BITS`].
pub(super) const HIGH: u64 = 1 << 62;
/// Fds below this are tracked one bit each.
const FD_BITS: c_int = 62;

/// One known file-actions object: its list's address, and what its actions
/// do so far.
pub(super) struct Slot {
    key: AtomicUsize,
    pub(super) state: AtomicU64,
}

const SLOTS: usize = 64;

/// A chunk of the table ([`super::chain`]).
struct Known {
    slots: [Slot; SLOTS],
    next: AtomicPtr<Known>,
}

#[allow(clippy::declare_interior_mutable_const)]
const FREE: Slot = Slot {
    key: AtomicUsize::new(0),
    state: AtomicU64::new(0),
};

static KNOWN: Known = Known {
    slots: [FREE; SLOTS],
    next: AtomicPtr::new(std::ptr::null_mut()),
};

impl Chunk for Known {
    fn next(&self) -> &AtomicPtr<Known> {
        &self.next
    }

    fn empty() -> Known {
        Known {
            slots: [FREE; SLOTS],
            next: AtomicPtr::new(std::ptr::null_mut()),
        }
    }
}

pub(super) fn find(key: usize) -> Option<&'static Slot> {
    if key == 0 {
        return None;
    }
    chunks(&KNOWN)
        .flat_map(|c| c.slots.iter())
        .find(|s| s.key.load(Ordering::Acquire) == key)
}

/// Records a new list (no actions yet); a chunk is linked in when all slots
/// are taken.
pub(super) fn remember(key: usize) {
    if key == 0 {
        return;
    }
    let mut chunk = &KNOWN;
    loop {
        for s in &chunk.slots {
            if s.key
                .compare_exchange(0, key, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                s.state.store(0, Ordering::Release);
                return;
            }
        }
        chunk = next_or_new(chunk);
    }
}

pub(super) fn forget(key: usize) {
    if let Some(s) = find(key) {
        s.state.store(0, Ordering::Relaxed);
        let _ = s
            .key
            .compare_exchange(key, 0, Ordering::AcqRel, Ordering::Relaxed);
    }
}

/// The bit that marks `fd` as written by an action.
pub(super) fn fd_bit(fd: c_int) -> u64 {
    if (0..FD_BITS).contains(&fd) {
        1 << fd
    } else {
        HIGH
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_lists_are_found_until_forgotten() {
        let keys: Vec<usize> = (1..=(SLOTS * 2 + 3)).map(|k| k * 16).collect();
        for &k in &keys {
            remember(k);
        }
        for &k in &keys {
            assert!(find(k).is_some(), "{k}");
        }
        forget(keys[5]);
        assert!(find(keys[5]).is_none());
        assert!(find(7).is_none() && find(0).is_none());
        find(keys[6])
            .unwrap()
            .state
            .fetch_or(fd_bit(3) | MOVED, Ordering::Relaxed);
        remember(keys[5]);
        let s = find(keys[5]).unwrap().state.load(Ordering::Relaxed);
        assert_eq!(s, 0, "a list made again starts empty");
        for &k in &keys {
            forget(k);
        }
        assert!(keys.iter().all(|&k| find(k).is_none()));
    }

    #[test]
    fn fd_bits() {
        assert_eq!(fd_bit(0), 1);
        assert_eq!(fd_bit(61), 1 << 61);
        assert_eq!(fd_bit(62), HIGH);
        assert_eq!(fd_bit(-1), HIGH);
        assert_eq!(fd_bit(1000) & MOVED, 0);
    }
}
