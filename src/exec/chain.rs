//! Tables of slots in fixed chunks, linked and never freed: lock-free to
//! claim, free and scan, so neither a signal handler nor a forked child
//! finds a lock held. Both the `popen` streams (`shell.rs`) and the known
//! spawn file-action lists (`known.rs`, macOS) are such tables.

use std::sync::atomic::{AtomicPtr, Ordering};

/// One chunk of a table: its slots are the table's own; the link is here.
pub(super) trait Chunk: Sized + Sync + 'static {
    /// The link to the next chunk (null: none yet).
    fn next(&self) -> &AtomicPtr<Self>;
    /// A chunk with every slot free.
    fn empty() -> Self;
}

/// Every chunk of the table that starts at `first`.
pub(super) fn chunks<C: Chunk>(first: &'static C) -> impl Iterator<Item = &'static C> {
    let mut c = Some(first);
    std::iter::from_fn(move || {
        let cur = c?;
        // SAFETY: chunks are leaked Boxes, never freed.
        c = unsafe { cur.next().load(Ordering::Acquire).as_ref() };
        Some(cur)
    })
}

/// The chunk after `chunk`, a fresh one linked in when there is none yet
/// (the only allocation: when every slot before it is taken).
pub(super) fn next_or_new<C: Chunk>(chunk: &'static C) -> &'static C {
    let mut next = chunk.next().load(Ordering::Acquire);
    if next.is_null() {
        let fresh = Box::into_raw(Box::new(C::empty()));
        next = match chunk.next().compare_exchange(
            std::ptr::null_mut(),
            fresh,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => fresh,
            Err(other) => {
                // SAFETY: ours, never shared.
                drop(unsafe { Box::from_raw(fresh) });
                other
            }
        };
    }
    // SAFETY: a leaked Box, never freed.
    unsafe { &*next }
}
