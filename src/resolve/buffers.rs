//! The path buffers: [`PathBuf`] (a resolved path) and [`RawPath`] (a path
//! as the kernel will walk it), both on the stack while short.

use std::ffi::CStr;

use rustix::io::Errno;

use super::spill::{copy_into, Spill};

/// Longest resolved path the kernel hands back (`PATH_MAX`), plus one name.
pub const PATH_CAP: usize = 4096 + 256;

/// What a path buffer holds on the stack; a longer path moves to a mapping
/// (see [`Spill`]). Most paths are far shorter.
const PATH_INLINE: usize = 512;

/// A resolved path in a buffer: absolute and canonical, or an
/// anonymous object name (`pipe:[12]`).
///
/// On the stack up to [`PATH_INLINE`] bytes, then in a mapping (see
/// [`Spill`]); left uninitialized. A path longer than the kernel's names
/// (deeper than `PATH_MAX`, see [`long_dir_path`]) lives on the heap.
pub struct PathBuf {
    pub(super) buf: Spill<PATH_INLINE>,
    pub(super) len: usize,
    pub(super) long: Option<Vec<u8>>,
}

impl PathBuf {
    /// An empty buffer. Not a `const fn`: a constant would be copied in,
    /// zeroing it per call.
    #[inline(always)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> PathBuf {
        PathBuf {
            buf: Spill::new(),
            len: 0,
            long: None,
        }
    }

    /// The path bytes.
    pub fn as_bytes(&self) -> &[u8] {
        if let Some(long) = &self.long {
            return long;
        }
        // SAFETY: the first `len` bytes were written by readlink or put.
        unsafe { self.buf.bytes(self.len) }
    }

    /// Writes `bytes` at `at`, after the `at` bytes kept.
    pub(super) fn put(&mut self, at: usize, bytes: &[u8]) -> Result<(), Errno> {
        self.buf
            .reserve(at + bytes.len(), at)
            .map_err(|_| Errno::NOMEM)?;
        copy_into(&mut self.buf.buf()[at..at + bytes.len()], bytes);
        Ok(())
    }

    /// Starts a path of the kernel's length: the buffer again.
    pub(super) fn set_len(&mut self, len: usize) {
        self.long = None;
        self.len = len;
    }

    pub(super) fn push_name(&mut self, name: &[u8]) -> Result<(), Errno> {
        let need = usize::from(self.len > 1) + name.len();
        if self.long.is_none() && self.len + need > PATH_CAP {
            // Deeper than PATH_MAX: rare, so the heap.
            self.long = Some(self.as_bytes().to_vec());
        }
        if let Some(long) = &mut self.long {
            if long.as_slice() != b"/" {
                long.push(b'/');
            }
            long.extend_from_slice(name);
            return Ok(());
        }
        if self.as_bytes() != b"/" {
            self.put(self.len, b"/")?;
            self.len += 1;
        }
        self.put(self.len, name)?;
        self.len += name.len();
        Ok(())
    }
}

/// An absolute path as the kernel will walk it: the base (cwd or dirfd path)
/// joined with the caller's path, unnormalized, NUL-terminated. At most
/// `PATH_MAX` bytes with the NUL; on the stack while short (see [`Spill`]).
pub struct RawPath {
    pub(super) buf: Spill<RAW_INLINE>,
    pub(super) len: usize,
}

/// What a [`RawPath`] holds on the stack.
const RAW_INLINE: usize = 512;

/// A [`RawPath`]'s limit, with the NUL.
pub(super) const RAW_CAP: usize = 4097;

impl RawPath {
    /// An empty buffer (not zeroed, as [`PathBuf::new`]).
    #[inline(always)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> RawPath {
        RawPath {
            buf: Spill::new(),
            len: 0,
        }
    }

    pub(super) fn bytes(&self) -> &[u8] {
        // SAFETY: the first `len` bytes are written.
        unsafe { self.buf.bytes(self.len) }
    }

    /// The first `n` bytes of the path.
    pub fn prefix(&self, n: usize) -> &[u8] {
        &self.bytes()[..n]
    }

    /// Appends `b`, keeping room for the NUL; false when the path would be
    /// too long (or no room can be had).
    pub(crate) fn push(&mut self, b: &[u8]) -> bool {
        let end = self.len + b.len();
        if end >= RAW_CAP || self.buf.reserve(end + 1, self.len).is_err() {
            return false;
        }
        copy_into(&mut self.buf.buf()[self.len..end], b);
        self.len = end;
        true
    }

    /// The working directory, as `getcwd` gives it; false if it cannot.
    pub(super) fn cwd(&mut self) -> bool {
        self.len = 0;
        for cap in [RAW_INLINE, RAW_CAP] {
            if self.buf.reserve(cap, 0).is_err() {
                return false;
            }
            let buf = &mut self.buf.buf()[..cap];
            // SAFETY: getcwd writes at most `cap - 1` bytes and a NUL into
            // our buffer; it makes one syscall and is not hooked.
            let p = unsafe { libc::getcwd(buf.as_mut_ptr().cast(), cap - 1) };
            if !p.is_null() {
                // SAFETY: getcwd NUL-terminated what it wrote.
                self.len = unsafe { CStr::from_ptr(p) }.to_bytes().len();
                return true;
            }
            if crate::errno::errno() != libc::ERANGE {
                return false;
            }
        }
        false
    }

    /// The first `n` bytes as a C string (a NUL is written after them).
    pub(super) fn c_prefix(&mut self, n: usize) -> &CStr {
        // `push` kept room for it.
        self.buf.buf()[n].write(0);
        // SAFETY: bytes 0..n are written and contain no NUL (they come from
        // C strings and getcwd/readlink output); byte n is the NUL.
        unsafe { CStr::from_bytes_with_nul_unchecked(self.buf.bytes(n + 1)) }
    }

    /// The first `n` bytes as a C string, and the `len` bytes at `at`,
    /// which lie after them.
    pub(super) fn c_prefix_and(&mut self, n: usize, at: usize, len: usize) -> (&CStr, &[u8]) {
        assert!(n < at && at + len <= self.len);
        self.buf.buf()[n].write(0);
        // SAFETY: bytes 0..self.len are written, byte n now being the NUL
        // (see c_prefix).
        let all = unsafe { self.buf.bytes(self.len) };
        // SAFETY: as in c_prefix: no NUL before byte n.
        let c = unsafe { CStr::from_bytes_with_nul_unchecked(&all[..=n]) };
        (c, &all[at..at + len])
    }

    /// The `len` bytes at `at` (a name) as a C string, a NUL written after
    /// them (over a slash, or past the end), and as bytes.
    pub(super) fn c_name(&mut self, at: usize, len: usize) -> (&CStr, &[u8]) {
        assert!(at + len <= self.len);
        // `push` kept room for a NUL at `self.len`.
        self.buf.buf()[at + len].write(0);
        // SAFETY: bytes 0..self.len are written, and byte self.len now
        // if that is where the NUL went.
        let all = unsafe { self.buf.bytes(self.len.max(at + len + 1)) };
        // SAFETY: a name has no NUL; byte at + len is the NUL.
        let c = unsafe { CStr::from_bytes_with_nul_unchecked(&all[at..=at + len]) };
        (c, &all[at..at + len])
    }

    /// The whole path as a C string.
    pub fn as_cstr(&mut self) -> &CStr {
        self.c_prefix(self.len)
    }
}
